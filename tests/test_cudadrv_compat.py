"""Numba's numba.cuda.cudadrv namespace (driver, devicearray, error) by Numba's names."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda, errors
from numbacuda_ufunc.cuda.cudadrv import devicearray, driver, error
from numbacuda_ufunc.cuda.cudadrv.driver import CudaAPIError


def test_names_are_ours():
    assert CudaAPIError is errors.CudaError and driver.Stream is cuda.Stream
    assert error.NvrtcError is errors.CompileError and error.CudaSupportError is errors.CudaSupportError
    assert devicearray.DeviceNDArray is cuda.DeviceNDArray
    assert cuda.cudadrv.driver is driver and cuda.devicearray is devicearray
    assert driver.driver.get_device_count() == len(cuda.gpus) >= 1
    assert isinstance(driver._have_nvjitlink(), bool)


def test_auto_device_and_is_cuda_ndarray():
    host = np.arange(4.0)
    dev, converted = devicearray.auto_device(host)
    assert converted and devicearray.is_cuda_ndarray(dev) and not devicearray.is_cuda_ndarray(host)
    np.testing.assert_array_equal(dev.copy_to_host(), host)
    same, converted = devicearray.auto_device(dev)
    assert same is dev and not converted
    with pytest.raises(errors.CudaError):
        raise CudaAPIError("catchable as Numba's CudaAPIError")


def test_cuda_api_error_takes_numba_s_code_and_message():
    e = CudaAPIError(999, "Transfer not allowed")
    assert str(e) == "[999] Transfer not allowed" and e.code == 999
    assert e.msg == "Transfer not allowed"
    assert str(CudaAPIError("plain message", "CUDA_ERROR_X")) == "plain message"


@pytest.fixture
def watched_transfers():
    """driver.cuMemcpyHtoD / cuMemcpyDtoH set to recorders (removed afterwards)."""
    seen = []
    d = driver.driver
    d.cuMemcpyHtoD = lambda dst, src, n: seen.append(("HtoD", n))
    d.cuMemcpyDtoH = lambda dst, src, n: seen.append(("DtoH", n))
    yield seen
    del d.cuMemcpyHtoD
    del d.cuMemcpyDtoH


def test_transfer_observers_see_each_host_device_copy(watched_transfers):
    host = np.arange(10.0)
    dev = cuda.to_device(host)
    assert watched_transfers == [("HtoD", 80)]
    out = np.full(10, np.nan)
    dev.copy_to_host(out)
    np.testing.assert_array_equal(out, host)
    dev[::-1].copy_to_host()  # strided: still one copy of the bytes the view spans
    dev.copy_to_device(host[::-1])
    assert watched_transfers == [("HtoD", 80), ("DtoH", 80), ("DtoH", 80), ("HtoD", 80)]
    watched_transfers.clear()
    dev2 = cuda.device_array_like(dev)
    dev2.copy_to_device(dev)  # device to device: not a host transfer
    assert watched_transfers == []


def test_ufuncs_on_device_data_make_no_transfers(watched_transfers):
    # numba-cuda's test_no_transfer_for_device_data: an observer that raises makes any
    # transfer fail, so a ufunc call on device data must make none.
    noise = cuda.to_device(np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32))
    watched_transfers.clear()
    d = driver.driver

    def refuse(*args):
        raise CudaAPIError(999, "Transfer not allowed")

    d.cuMemcpyHtoD = d.cuMemcpyDtoH = refuse
    with pytest.raises(CudaAPIError, match=r"\[999\] Transfer not allowed"):
        noise.copy_to_host()
    with pytest.raises(CudaAPIError, match="Transfer not allowed"):
        cuda.to_device([1])

    @cuda.vectorize(["float32(float32)"])
    def plus_one(x):
        return x + 1.0

    result = plus_one(noise)
    if not cuda.is_emulated():  # on a GPU host data goes to the device and back
        with pytest.raises(CudaAPIError, match="Transfer not allowed"):
            plus_one(np.ones(3, np.float32))
    del d.cuMemcpyHtoD, d.cuMemcpyDtoH
    np.testing.assert_allclose(result.copy_to_host(), noise.copy_to_host() + 1.0)
    d.cuMemcpyHtoD = d.cuMemcpyDtoH = lambda *args: None  # for the fixture to remove


def test_transfer_observers_must_be_callable():
    with pytest.raises(TypeError, match="driver.cuMemcpyHtoD must be callable"):
        driver.driver.cuMemcpyHtoD = 3
    assert "cuMemcpyHtoD" not in vars(driver.driver)


@pytest.mark.parametrize("make", [
    lambda: np.zeros((10, 12)), lambda: np.zeros((10, 12)).T, lambda: np.zeros(10)[::2],
    lambda: np.zeros((10, 12), order="F")[::2, ::2], lambda: np.zeros((1, 5, 1))[:, ::-1],
    lambda: np.broadcast_to(np.zeros(3), (4, 3)), lambda: np.zeros((4, 0)),
], ids=["c", "t", "step", "f-step", "unit-axes", "broadcast", "empty"])
@pytest.mark.parametrize("where", ["host", "device"])
def test_devicearray_is_contiguous_and_array_core(make, where):
    # Numba's helpers (numba-cuda's TestCoreContiguous): is_contiguous ignores size-1 and
    # broadcast axes, and agrees with the C flag of array_core (the broadcast core).
    host = make()
    ary = host if where == "host" else cuda.to_device(np.ascontiguousarray(host))
    if where == "device" and host.strides != ary.strides:
        ary = ary[...]  # to_device packs: compare the packed layout
        host = np.ascontiguousarray(host)
    core = devicearray.array_core(ary)
    flag = core.flags["C_CONTIGUOUS"]
    assert devicearray.is_contiguous(ary) == bool(flag)
    np.testing.assert_array_equal(np.asarray(core), devicearray.array_core(host))
