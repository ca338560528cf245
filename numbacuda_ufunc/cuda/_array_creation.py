"""Device arrays made from host data (``to_device``), from scratch (``device_array``,
``device_array_like``) and from other libraries' ``__cuda_array_interface__`` objects."""

from __future__ import annotations

import numpy as np

from .. import _core
from ..types import from_dtype
from ._host_memory import like_source, like_strides

__all__ = ["DeviceNDArray", "as_cuda_array", "device_array", "device_array_like",
           "is_cuda_array", "to_device"]

DeviceNDArray = _core.DeviceNDArray


def to_device(obj, stream=0, copy=True, to=None):
    """Copy a host array (anything ``np.asarray`` accepts) to the device.

    Parameters
    ----------
    obj : array_like
        The data: any layout and ufunc dtype. A device array or
        ``__cuda_array_interface__`` object is copied device to device (or wrapped as it is
        with ``copy=False``).
    stream : Stream or int, optional
        The stream of the copy (default 0: it is complete when the call returns).
    copy : bool, optional
        False: a device object is wrapped instead of copied.
    to : DeviceNDArray, optional
        Copy into this device array, of ``obj``'s shape and dtype, and return it.

    Returns
    -------
    DeviceNDArray
        The device copy (or ``to``).

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import cuda
    >>> d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    >>> d.shape, d[:, 1].copy_to_host()
    ((2, 3), array([1., 4.]))
    """
    if to is not None:
        if not isinstance(to, DeviceNDArray):
            to = as_cuda_array(to)
        _core.copy_into(to, obj, stream)
        return to
    if isinstance(obj, DeviceNDArray) or is_cuda_array(obj):
        src = as_cuda_array(obj)
        if not copy:
            return src
        out = device_array_like(src, stream)
        _core.copy_into(out, src, stream)
        return out
    arr = np.asarray(obj)
    if not arr.dtype.isnative:  # records too: newbyteorder converts every field
        arr = arr.astype(arr.dtype.newbyteorder("="))
    try:
        from_dtype(arr.dtype)  # TypeError for object, string, datetime... dtypes
    except TypeError as exc:
        raise TypeError(f"to_device(): {exc}") from None
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    return _core.to_device(arr, stream)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0) -> DeviceNDArray:
    """An uninitialised device array.

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    dtype : data-type, optional
        Any ufunc dtype or record dtype (default float64).
    strides : tuple of int, optional
        Byte strides; default from ``order``.
    order : {'C', 'F'}, optional
        Memory layout without ``strides`` (default 'C').
    stream : Stream or int, optional
        The stream the allocation is ordered on (default 0).

    Returns
    -------
    DeviceNDArray
        The array, its memory from the stream-ordered pool (or the EMM plugin's).
    """
    return _core.device_array(shape, dtype, strides, order, stream)


def device_array_like(ary, stream=0) -> DeviceNDArray:
    """An uninitialised device array shaped like ``ary``.

    Parameters
    ----------
    ary : array_like
        Anything ``np.asarray`` takes, or a device array: its shape, dtype and memory
        layout are used as ``np.empty_like`` uses them (a Fortran-ordered view stays
        Fortran-ordered; a byte-swapped dtype gives the native one).
    stream : Stream or int, optional
        The stream the allocation is ordered on (default 0).

    Returns
    -------
    DeviceNDArray
    """
    ary, dtype = like_source(ary, "device_array_like")
    return _core.device_array(ary.shape, dtype, like_strides(ary), "C", stream)


def as_cuda_array(obj, sync=True) -> DeviceNDArray:
    """A DeviceNDArray view of any ``__cuda_array_interface__`` object (CuPy, PyTorch...).
    With ``sync`` the producer's stream is synchronized first (interface version 3)."""
    return _core.as_cuda_array(obj, bool(sync))


def is_cuda_array(obj) -> bool:
    """True for objects that export ``__cuda_array_interface__``."""
    return hasattr(obj, "__cuda_array_interface__")
