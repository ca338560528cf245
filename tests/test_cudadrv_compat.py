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
