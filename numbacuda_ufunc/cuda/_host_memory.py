"""Host memory kernels can use: mapped and managed arrays, pinning context managers,
``from_cuda_array_interface``. Numba's names and signatures."""

from __future__ import annotations

import contextlib

import numpy as np

from .. import _core
from ..interop._cupy import stream_handle
from ..types import from_dtype

__all__ = [
    "MappedNDArray", "ManagedNDArray", "mapped_array", "mapped_array_like", "managed_array",
    "pinned_array_like", "pinned", "mapped", "from_cuda_array_interface", "like_strides",
]


def _extent(arr: np.ndarray) -> tuple[int, int]:
    """(first byte, byte count) that ``arr``'s elements span."""
    start = arr.__array_interface__["data"][0]
    if arr.size == 0:
        return start, 0
    lo = hi = 0
    for n, s in zip(arr.shape, arr.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return start + lo, hi - lo + arr.itemsize


def _interface(arr: np.ndarray, pointer: int, stream_handle: int = 0) -> dict:
    return {
        "shape": arr.shape,
        "strides": None if arr.flags.c_contiguous else arr.strides,
        "typestr": arr.dtype.str,
        "data": (pointer if arr.size else 0, False),
        "version": 3,
        # Numba's entry: the handle of the array's stream, None for the default stream.
        "stream": stream_handle or None,
    }


def _stream_of(stream, api: str):
    """``stream=`` of mapped_array/managed_array: 0 or a stream (ours, CuPy's, Numba's)."""
    if stream is None or stream == 0:
        return 0
    if stream_handle(stream) is None:
        raise TypeError(f"{api}(): stream must be 0 or a CUDA stream (got {stream!r})")
    return stream


class _DeviceVisibleNDArray(np.ndarray):
    """A NumPy array in memory the device can address: ufuncs and kernels take it as a
    device array (``__cuda_array_interface__``) and use it in place, with no copy."""

    _nu_stream = 0  # the stream= it was made with; views inherit it (__array_finalize__)

    def __array_finalize__(self, obj):
        self._nu_stream = getattr(obj, "_nu_stream", 0)

    @property
    def stream(self):
        """The array's stream (Numba's attribute): 0 for the default stream."""
        return self._nu_stream

    def _device_address(self, host: int) -> int:
        raise NotImplementedError

    @property
    def __cuda_array_interface__(self) -> dict:
        host = self.__array_interface__["data"][0]
        if self.size and _core.address_range(_extent(self)[0]) is None:
            # A view that left the mapped allocation (np.asarray of a copy, say).
            raise AttributeError("this array is no longer in device-visible memory")
        return _interface(self, self._device_address(host) if self.size else 0,
                          stream_handle(self._nu_stream))

    @property
    def device_ctypes_pointer(self):
        import ctypes
        return ctypes.c_void_p(self.__cuda_array_interface__["data"][0] or None)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        # NumPy's own results are new, ordinary memory: plain arrays.
        arr = arr.view(np.ndarray)
        return arr[()] if return_scalar else arr


class MappedNDArray(_DeviceVisibleNDArray):
    """A host array in page-locked memory mapped into the device (``cuda.mapped_array``)."""

    def _device_address(self, host: int) -> int:
        return _core.mapped_device_pointer(host)


class ManagedNDArray(_DeviceVisibleNDArray):
    """A host array in managed (unified) memory (``cuda.managed_array``)."""

    def _device_address(self, host: int) -> int:
        return host


def _check_dtype(dtype, api):
    dt = np.dtype(dtype)
    try:
        from_dtype(dt)
    except TypeError as e:
        raise TypeError(f"{api}(): unsupported dtype {dt} ({e})") from None
    return dt


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False,
                 wc=False) -> MappedNDArray:
    """A host array in page-locked memory mapped into the device: kernels and ufuncs use
    it in place through its device pointer. ``portable``: usable from every context;
    ``wc``: write-combined (fast host writes, slow host reads)."""
    dt = _check_dtype(dtype, "mapped_array")
    stream = _stream_of(stream, "mapped_array")
    arr = _core.mapped_array(shape, dt, strides, order, bool(portable), bool(wc)).view(MappedNDArray)
    arr._nu_stream = stream
    return arr


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0,
                  attach_global=True) -> ManagedNDArray:
    """A host array in managed memory (``cuMemAllocManaged``), migrated on demand between
    host and device. Refused with ``MemoryError`` when the device has less memory free
    than asked for. Memory is always attached globally (``attach_global`` is accepted for
    Numba's signature; host-attached memory would only narrow who may touch it)."""
    dt = _check_dtype(dtype, "managed_array")
    stream = _stream_of(stream, "managed_array")
    arr = _core.managed_array(shape, dt, strides, order).view(ManagedNDArray)
    arr._nu_stream = stream
    return arr


def _native(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    return dt if dt.isnative else dt.newbyteorder("=")  # records: every field


def like_strides(ary) -> tuple:
    """The strides ``np.empty_like(ary)`` gives: ``ary``'s axis order (C or F when it is
    contiguous, else axes sorted by decreasing stride), packed. The rule is the engine's,
    which stages NumPy arguments of kernels the same way (array_view.cpp)."""
    return _core.like_strides(tuple(ary.shape), tuple(ary.strides), _native(ary.dtype))


def like_source(ary, api):
    """What the ``*_like`` functions copy the shape and layout of, and its dtype: arrays
    (NumPy, ours, CuPy: anything with ``flags``) as they are, anything else through
    ``np.asarray`` (a list, a scalar). A byte-swapped dtype becomes native, as
    ``to_device`` makes it; an unsupported one is a TypeError naming ``api``."""
    if not isinstance(ary, (np.ndarray, _core.DeviceNDArray)) and not hasattr(ary, "flags"):
        ary = np.asarray(ary)
    return ary, _check_dtype(_native(ary.dtype), api)


def mapped_array_like(ary, stream=0, portable=False, wc=False) -> MappedNDArray:
    """``mapped_array`` with ``ary``'s shape, dtype and memory layout."""
    ary, dt = like_source(ary, "mapped_array_like")
    return mapped_array(ary.shape, dt, like_strides(ary), stream=stream,
                        portable=portable, wc=wc)


def pinned_array_like(ary) -> np.ndarray:
    """``pinned_array`` with ``ary``'s shape, dtype and memory layout."""
    ary, dt = like_source(ary, "pinned_array_like")
    shape = tuple(ary.shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    buf = _core.pinned_array(nbytes, "u1", "C")
    return np.ndarray(shape, dt, buffer=buf, strides=like_strides(ary))


def _host_arrays(arrays, api):
    out = []
    for i, a in enumerate(arrays):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{api}(): argument {i + 1} must be a NumPy array "
                            f"(got {type(a).__name__})")
        out.append(a)
    return out


@contextlib.contextmanager
def pinned(*arylist):
    """Page-lock existing host arrays for the block: copies of them are then as fast and
    as asynchronous as those of ``pinned_array``."""
    arrays = _host_arrays(arylist, "pinned")
    registered = []
    try:
        for a in arrays:
            start, nbytes = _extent(a)
            if nbytes and _core.register_host(start, nbytes, False, False):
                registered.append(start)
        yield
    finally:
        for start in registered:
            _core.unregister_host(start)


@contextlib.contextmanager
def mapped(*arylist, stream=0, portable=False, wc=False):
    """Page-lock and map existing host arrays for the block and yield device arrays over
    them (one array, or a list for several): kernels read and write the host memory in
    place. The device arrays must not be used after the block."""
    arrays = _host_arrays(arylist, "mapped")
    registered = []
    try:
        views = []
        for a in arrays:
            start, nbytes = _extent(a)
            if nbytes and _core.register_host(start, nbytes, True, bool(portable)):
                registered.append(start)
            host = a.__array_interface__["data"][0]
            device = _core.mapped_device_pointer(host) if nbytes else 0
            views.append(from_cuda_array_interface(_interface(a, device), owner=a))
        yield views[0] if len(views) == 1 else views
    finally:
        for start in registered:
            _core.unregister_host(start)


class _Interface:
    """Holds a ``__cuda_array_interface__`` dict and the object that owns the memory."""

    __slots__ = ("__cuda_array_interface__", "owner")

    def __init__(self, desc, owner):
        self.__cuda_array_interface__ = desc
        self.owner = owner


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceNDArray over the memory a ``__cuda_array_interface__`` dict describes;
    ``owner`` is kept alive as long as the array. With ``sync`` (and unless
    ``NUMBACUDA_UFUNC_CUDA_ARRAY_INTERFACE_SYNC=0``) the producer's ``stream`` is
    synchronized first, as the interface's version 3 asks of consumers."""
    if not isinstance(desc, dict):
        raise TypeError(f"from_cuda_array_interface(): desc must be a dict (got "
                        f"{type(desc).__name__})")
    return _core.as_cuda_array(_Interface(desc, owner), bool(sync), "from_cuda_array_interface")
