"""The rest of Numba's DeviceNDArray (flags, alloc_size, gpu_data, view, squeeze, split,
IPC) and cuda.open_ipc_array. These are not on the hot path, so they are written here
over the engine's view primitive (``_with_layout``), which refuses views that would leave
the allocation."""

from __future__ import annotations

import contextlib
import ctypes

import numpy as np

from .. import _core
from ._driver import IpcHandle, MemoryPointer, current_context
from ._host_memory import _Interface

__all__ = ["IpcArrayHandle", "open_ipc_array"]

DeviceNDArray = _core.DeviceNDArray


def _flags(self) -> dict:
    """NumPy-style flags: ``C_CONTIGUOUS`` and ``F_CONTIGUOUS``."""
    return {"C_CONTIGUOUS": self.is_c_contiguous(), "F_CONTIGUOUS": self.is_f_contiguous()}


def _device_ctypes_pointer(self):
    """The data pointer as ``ctypes.c_void_p`` (``None`` value for an empty array)."""
    return ctypes.c_void_p(self.device_pointer if self.size else None)


def _gpu_data(self) -> MemoryPointer:
    """The allocation behind the array, as a MemoryPointer (kept alive by the array)."""
    return MemoryPointer(current_context(), self._alloc_pointer, self.alloc_size, owner=self)


def _iter(self):
    """The subarrays (or elements) along the first axis, as NumPy iterates."""
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d device array")
    for i in range(self.shape[0]):
        yield self[i]


def _is_contiguous(self) -> bool:
    return self.is_c_contiguous() or self.is_f_contiguous()


def _view(self, dtype):
    """The same memory seen as ``dtype`` (NumPy's ``ndarray.view(dtype)`` rules)."""
    new = np.dtype(dtype)
    old = self.dtype
    if new.itemsize == old.itemsize:
        return self._with_layout(self.shape, self.strides, 0, new, "view")
    if self.ndim == 0:
        raise ValueError(f"view(): changing the dtype of a 0-d array from {old} to {new} "
                         f"needs equal itemsizes")
    # NumPy's own messages, word for word (numba-cuda's tests compare them).
    if self.shape[-1] != 1 and self.strides[-1] != old.itemsize:
        raise ValueError("To change to a dtype of a different size, the last axis must be "
                         "contiguous")
    last = self.shape[-1] * old.itemsize
    if last % new.itemsize:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    shape = self.shape[:-1] + (last // new.itemsize,)
    strides = self.strides[:-1] + (new.itemsize,)
    return self._with_layout(shape, strides, 0, new, "view")


def _squeeze(self, axis=None, stream=0):
    """The array without its length-1 axes (or only ``axis``, which must have length 1)."""
    if axis is None:
        keep = [i for i, n in enumerate(self.shape) if n != 1]
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        chosen = set()
        for a in axes:
            if isinstance(a, bool) or not hasattr(a, "__index__"):
                raise TypeError(f"squeeze(): axis must be an int or a tuple of ints (got {axis!r})")
            a = a.__index__()
            if not -self.ndim <= a < self.ndim:
                raise np.exceptions.AxisError(f"squeeze(): axis {a} is out of bounds for an "
                                              f"array of dimension {self.ndim}")
            a %= self.ndim
            if self.shape[a] != 1:
                raise ValueError("squeeze(): cannot select an axis to squeeze out which has "
                                 f"size not equal to one (axis {a} has {self.shape[a]})")
            chosen.add(a)
        keep = [i for i in range(self.ndim) if i not in chosen]
    out = self._with_layout(tuple(self.shape[i] for i in keep),
                            tuple(self.strides[i] for i in keep), 0, self.dtype, "squeeze")
    return out.bind(stream) if stream else out


def _split(self, section, stream=0):
    """Views of consecutive ``section``-element pieces of a 1-d array (the last may be
    shorter)."""
    if self.ndim != 1:
        raise ValueError(f"split(): only 1-d arrays can be split (got {self.ndim} dimensions)")
    if isinstance(section, bool) or not hasattr(section, "__index__") or section < 1:
        raise ValueError(f"split(): section must be a positive integer (got {section!r})")
    section = section.__index__()
    parts = []
    for begin in range(0, self.shape[0], section):
        n = min(section, self.shape[0] - begin)
        part = self._with_layout((n,), self.strides, begin * self.strides[0], self.dtype, "split")
        parts.append(part.bind(stream) if stream else part)
    return parts


def _get_ipc_handle(self):
    """A picklable handle another process opens (``with handle as array:``) to use this
    array's memory. Keep this array alive while the other process uses it."""
    if self.size == 0:
        raise ValueError("get_ipc_handle(): an empty array has no memory to share")
    ptr = self.device_pointer
    base, size = _core.address_range(ptr) or (self._alloc_pointer, self.alloc_size)
    handle = IpcHandle(self, _core.ipc_handle(base), size, offset=ptr - base)
    desc = {"shape": self.shape, "strides": self.strides, "dtype": self.dtype}
    return IpcArrayHandle(handle, desc)


class _OpenedIpcMemory:
    """Owns an opened IPC mapping; closing it invalidates arrays over it."""

    def __init__(self, handle: bytes):
        self.base = _core.open_ipc_handle(handle)
        self.closed = False

    def close(self):
        if not self.closed:
            self.closed = True
            _core.close_ipc_handle(self.base)


class IpcArrayHandle:
    """An array shared by IPC: ``open()`` (or ``with handle as array:``) gives a
    DeviceNDArray over the other process's memory; ``close()`` unmaps it."""

    def __init__(self, ipc_handle, array_desc):
        self._ipc_handle = ipc_handle
        self._array_desc = dict(array_desc)
        self._opened = None

    def open(self):
        if self._opened is not None:
            raise ValueError("IpcArrayHandle.open(): the handle is already open")
        desc = self._array_desc
        self._opened = _OpenedIpcMemory(self._ipc_handle.handle)
        return _array_over(self._opened, self._ipc_handle.offset, desc["shape"], desc["dtype"],
                           desc.get("strides"))

    def close(self):
        if self._opened is None:
            raise ValueError("IpcArrayHandle.close(): the handle is not open")
        self._opened.close()
        self._opened = None

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        return (IpcArrayHandle, (self._ipc_handle, self._array_desc))


def _array_over(opened, offset, shape, dtype, strides, api="IpcArrayHandle.open"):
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{api}(): dtype: {exc}") from None
    # The engine checks shape and strides (integers, extent inside the mapping) and names
    # `api` in its errors.
    desc = {"shape": shape, "strides": strides, "typestr": dt.str,
            "data": (opened.base + offset, False), "version": 3, "stream": None}
    return _core.as_cuda_array(_Interface(desc, opened), True, api)


def _handle_bytes(handle) -> bytes:
    if isinstance(handle, IpcHandle):
        return handle.handle
    try:
        data = bytes(handle)
    except (TypeError, ValueError):
        raise TypeError(f"open_ipc_array(): handle must be bytes or a sequence of 64 ints "
                        f"(got {type(handle).__name__})") from None
    if len(data) != 64:
        raise ValueError(f"open_ipc_array(): an IPC handle has 64 bytes (got {len(data)})")
    return data


@contextlib.contextmanager
def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """Open an IPC memory handle (64 bytes, e.g. ``bytes`` or a tuple of ints) as a device
    array of ``shape``, ``dtype`` and ``strides`` starting ``offset`` bytes in; unmapped
    when the block ends."""
    if isinstance(offset, bool) or not hasattr(offset, "__index__") or offset < 0:
        raise ValueError(f"open_ipc_array(): offset must be a non-negative integer "
                         f"(got {offset!r})")
    opened = _OpenedIpcMemory(_handle_bytes(handle))
    try:
        yield _array_over(opened, offset.__index__(), shape, dtype, strides, "open_ipc_array")
    finally:
        opened.close()


def _install():
    DeviceNDArray.flags = property(_flags)
    DeviceNDArray.device_ctypes_pointer = property(_device_ctypes_pointer)
    DeviceNDArray.gpu_data = property(_gpu_data)
    DeviceNDArray.is_contiguous = _is_contiguous
    DeviceNDArray.__iter__ = _iter  # else iteration probes d[0], d[1]... and a 0-d one is []
    DeviceNDArray.view = _view
    DeviceNDArray.squeeze = _squeeze
    DeviceNDArray.split = _split
    DeviceNDArray.get_ipc_handle = _get_ipc_handle


_install()
