"""Numba's ``numba.cuda.cudadrv.devicearray``: device array classes and helpers by
Numba's names."""

from .. import DeviceNDArray, is_cuda_array, to_device

__all__ = ["DeviceNDArray", "auto_device", "is_cuda_ndarray"]


def is_cuda_ndarray(obj) -> bool:
    """Whether ``obj`` is a device array (``DeviceNDArray`` or any
    ``__cuda_array_interface__`` object), as Numba's helper of that name."""
    return isinstance(obj, DeviceNDArray) or is_cuda_array(obj)


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """``(device_array, converted)``: ``obj`` itself when it is already on the device,
    else a device copy of it (``converted`` True), as Numba's ``auto_device``."""
    if is_cuda_ndarray(obj):
        return obj, False
    return to_device(obj, stream=stream, copy=copy), True
