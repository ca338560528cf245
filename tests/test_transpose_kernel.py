"""numba.cuda.kernels.transpose: the tiled shared-memory transpose of 2-d device arrays,
against NumPy's ``.T`` (bit for bit), for every element kind, shape edge and layout, and
its argument checks."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.cuda import kernels
from numbacuda_ufunc.cuda.cudadrv.devicearray import from_array_like
from numbacuda_ufunc.cuda.kernels import transpose as transpose_module
from numbacuda_ufunc.cuda.kernels.transpose import transpose

_RECORD = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])


class _CAI:
    def __init__(self, dev):
        self._dev = dev
        self.__cuda_array_interface__ = dict(dev.__cuda_array_interface__)


def _random(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == _RECORD:
        out = np.zeros(shape, dtype)
        out["i"] = rng.integers(-2**31, 2**31 - 1, shape, dtype=np.int32)
        out["j"] = rng.standard_normal(shape + (3, 2)).astype(np.float32)
        return out
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    values = rng.standard_normal(shape) * 1e3
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    values = values.astype(dtype)
    flat = values.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0]).astype(dtype)
    flat[:min(flat.size, specials.size)] = specials[:flat.size]
    return values


def _same_bits(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.complex128,
                                   np.complex64, np.int8, np.uint16, np.int64, np.bool_,
                                   _RECORD])
@pytest.mark.parametrize("shape", [(5, 6), (32, 32), (33, 31), (1, 70), (70, 1), (1, 1)])
def test_transpose_matches_numpy(dtype, shape):
    x = _random(shape, dtype)
    dy = cuda.device_array(shape[::-1], dtype=x.dtype)
    dy.copy_to_device(np.zeros(shape[::-1], x.dtype) if x.dtype == _RECORD
                      else np.full(shape[::-1], 1, x.dtype))  # poisoned
    assert transpose(cuda.to_device(x), dy) is dy
    _same_bits(dy.copy_to_host(), x.T)


def test_transpose_allocates_c_contiguous_result():
    x = _random((65, 130), np.float64, seed=3)
    d = transpose(cuda.to_device(x))
    assert d.shape == (130, 65) and d.is_c_contiguous() and d.dtype == x.dtype
    _same_bits(d.copy_to_host(), x.T)


def test_transpose_large_non_multiple_of_tile():
    x = _random((1025, 512), np.float64, seed=4)
    _same_bits(transpose(cuda.to_device(x)).copy_to_host(), x.T)


def test_transpose_strided_views_in_and_out():
    x = _random((40, 50), np.int32, seed=5)
    d = cuda.to_device(x)
    src = d[::3, ::-2]  # steps and a negative stride
    want = x[::3, ::-2].T
    out_f = cuda.device_array(want.shape, dtype=np.int32, order="F")
    _same_bits(transpose(src, out_f).copy_to_host(), want)
    big = cuda.to_device(np.zeros((want.shape[0], want.shape[1] * 2), np.int32))
    out_view = big[:, ::2]
    transpose(src, out_view)
    host = big.copy_to_host()
    _same_bits(host[:, ::2], want)
    assert not host[:, 1::2].any()  # untouched between the written columns


def test_transpose_of_cai_objects_and_from_array_like():
    x = _random((7, 9), np.float32, seed=6)
    y = np.zeros((9, 7), np.float32)
    dy = from_array_like(y)
    assert dy.shape == y.shape and dy.strides == y.strides
    transpose(_CAI(cuda.to_device(x)), _CAI(dy))
    dy.copy_to_host(y)
    _same_bits(y, x.T)


def test_transpose_empty():
    for shape in [(0, 5), (5, 0), (0, 0)]:
        d = transpose(cuda.to_device(np.zeros(shape)))
        assert d.shape == shape[::-1]


def test_transpose_argument_errors():
    d = cuda.to_device(np.zeros((3, 4)))
    with pytest.raises(TypeError, match=r"transpose\(\): a must be a device array"):
        transpose(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"a must be a 2-d array \(got 1 dimensions"):
        transpose(cuda.to_device(np.zeros(4)))
    with pytest.raises(ValueError, match=r"b must have shape \(4, 3\).*got \(3, 4\)"):
        transpose(d, cuda.device_array((3, 4)))
    with pytest.raises(ValueError, match=r"b must have shape"):
        transpose(d, cuda.device_array(12))
    with pytest.raises(TypeError, match="b must have a's dtype float64 .got float32"):
        transpose(d, cuda.device_array((4, 3), dtype=np.float32))
    with pytest.raises(TypeError, match="b must be a device array"):
        transpose(d, np.zeros((4, 3)))
    square = cuda.to_device(np.zeros((4, 4)))
    with pytest.raises(ValueError, match="b must not overlap a"):
        transpose(square, square)
    with pytest.raises(ValueError, match="b must not overlap a"):
        transpose(square[:2, :2], square[1:3, 1:3])
    transpose(square[:2, :2], square[2:, 2:])  # disjoint parts of one buffer: allowed


@pytest.mark.parametrize("dtype", [np.float64, np.bool_, _RECORD])
def test_transpose_kernel_compiles_with_nvrtc(dtype):
    transpose(cuda.to_device(np.zeros((2, 3), dtype)))
    kernel = transpose_module._kernels[np.dtype(dtype)]
    ptx = next(iter(kernel.inspect_ptx(cc=(9, 0)).values()))
    assert ".target sm_90" in ptx and ".shared" in ptx and "bar.sync" in ptx


def test_module_layout():
    assert kernels.transpose is transpose_module
    assert kernels.transpose.transpose is transpose
