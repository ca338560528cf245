"""Numba's ``numba.cuda.cudadrv.devicearray``: device array classes and helpers by
Numba's names."""

import numpy as np

from .. import DeviceNDArray, device_array, device_array_like, is_cuda_array, to_device

__all__ = ["DeviceNDArray", "auto_device", "from_array_like", "is_cuda_ndarray"]


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


def from_array_like(ary, stream=0, gpu_data=None):
    """An uninitialised device array with ``ary``'s shape, dtype and strides (Numba's
    helper); strides with gaps or overlaps get ``np.empty_like``'s instead."""
    if gpu_data is not None:
        raise NotImplementedError("from_array_like(): gpu_data= (wrapping existing device "
                                  "memory) is not supported; use cuda.as_cuda_array")
    if not hasattr(ary, "strides"):
        ary = np.asarray(ary)
    itemsize = np.dtype(ary.dtype).itemsize
    compact = sorted((abs(s), n) for s, n in zip(ary.strides, ary.shape) if n > 1)
    step = itemsize
    for stride, n in compact:
        if stride != step:
            return device_array_like(ary, stream=stream)
        step *= n
    if any(s < 0 for s in ary.strides):
        return device_array_like(ary, stream=stream)
    return device_array(ary.shape, dtype=ary.dtype, strides=ary.strides, stream=stream)
