"""Numba's ``numba.cuda.cudadrv.devicearray``: device array classes and helpers by
Numba's names."""

import numpy as np

from .._array_creation import (
    DeviceNDArray,
    device_array,
    device_array_like,
    is_cuda_array,
    to_device,
)

__all__ = ["DeviceNDArray", "array_core", "auto_device", "from_array_like", "is_contiguous",
           "is_cuda_ndarray"]


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


def array_core(ary):
    """The repeated core of a broadcast array (Numba's helper): index 0 on every axis of
    stride 0, the whole of the others. Host and device arrays alike."""
    if not ary.strides or not ary.size:
        return ary
    return ary[tuple(0 if stride == 0 else slice(None) for stride in ary.strides)]


def is_contiguous(ary) -> bool:
    """Whether ``ary`` is C-contiguous once broadcast (stride 0) and size-1 axes are
    ignored, as Numba's helper of that name (host and device arrays)."""
    size = np.dtype(ary.dtype).itemsize
    for n, stride in zip(reversed(ary.shape), reversed(ary.strides)):
        if n > 1 and stride != 0:
            if stride != size:
                return False
            size *= n
    return True
