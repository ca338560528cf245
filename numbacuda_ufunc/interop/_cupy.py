"""CuPy results of calls that had a CuPy input (the engine calls ``as_cupy`` after it has
queued the call's work)."""

from __future__ import annotations

__all__ = ["as_cupy", "stream_handle"]


def as_cupy(arr, stream_handle: int):
    """A ``cupy.ndarray`` over the memory of our ``DeviceNDArray`` ``arr``, made from the
    raw pointer. ``cupy.asarray(arr)`` would read ``__cuda_array_interface__``, whose
    stream field makes CuPy synchronize that stream from the host on every call. The
    ``UnownedMemory`` keeps ``arr`` (so our allocation) alive as its owner. CuPy's current
    stream is ordered after ``stream_handle``, where the call wrote ``arr``, with an event:
    no host synchronization."""
    import cupy

    cai = arr.__cuda_array_interface__
    ptr = cai["data"][0]
    span = arr.nbytes
    if arr.ndim and arr.size:  # the bytes the strides reach (results are contiguous, but be exact)
        lo = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides) if s > 0) + arr.dtype.itemsize
        ptr, span = ptr + lo, hi - lo
        offset = -lo
    else:
        offset = 0
    memory = cupy.cuda.UnownedMemory(ptr, span, arr)
    out = cupy.ndarray(arr.shape, dtype=arr.dtype, memptr=cupy.cuda.MemoryPointer(memory, offset),
                       strides=arr.strides)
    current = cupy.cuda.get_current_stream()
    if current.ptr != stream_handle:
        done = cupy.cuda.Event(block=False, disable_timing=True)
        done.record(cupy.cuda.ExternalStream(stream_handle))
        current.wait_event(done)
    return out


def stream_handle(stream):
    """The raw handle of a ``stream=`` argument (0, an int, our Stream, a CuPy or Numba
    stream); None when it is none of those."""
    if stream is None or stream == 0:
        return 0
    for attr in ("ptr", "handle"):  # CuPy streams: .ptr; ours: .handle (int); Numba: c_void_p
        h = getattr(stream, attr, None)
        if h is not None:
            h = getattr(h, "value", h)
            return int(h or 0)
    try:
        return int(stream)
    except (TypeError, ValueError):
        return None
