"""Events, the named default streams and stream callbacks, with Numba's names."""

from __future__ import annotations

from .. import _core

__all__ = ["Event", "event", "event_elapsed_time", "external_stream", "per_thread_default_stream",
           "legacy_default_stream"]

Event = _core.Event
Stream = _core.Stream


def event(timing=True) -> Event:
    """A new event. ``record(stream=0)`` it, then ``synchronize()``, ``wait(stream)``,
    ``query()``; with ``timing=True``, ``elapsed_time(other)`` in milliseconds."""
    return _core.event(timing)


def event_elapsed_time(evtstart, evtend) -> float:
    """Milliseconds between two recorded timing events."""
    return _core.event_elapsed_time(evtstart, evtend)


def per_thread_default_stream() -> Stream:
    """CUDA's per-thread default stream (handle 2; CU_STREAM_PER_THREAD)."""
    return _core.per_thread_default_stream()


def legacy_default_stream() -> Stream:
    """CUDA's legacy default stream (handle 1; CU_STREAM_LEGACY), which orders with every
    blocking stream."""
    return _core.legacy_default_stream()


def _add_callback(self, callback, arg=None):
    """Call ``callback(stream, status, arg)`` once the work queued so far on this stream is
    done (status 0). It runs on a worker thread (not the driver's, so it never blocks the
    stream) and may use the API."""
    if not callable(callback):
        raise TypeError(f"Stream.add_callback(): callback must be callable (got {callback!r})")
    _core.stream_add_callback(self, callback, arg)


def _async_done(self):
    """An asyncio future, done once the work queued so far on this stream is done:
    ``await stream.async_done()``. Call it from a running event loop."""
    import asyncio  # only here: importing it costs ~20-50 ms, a tenth of our import

    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def resolve(status):
        if future.done():
            return
        if status == 0:
            future.set_result(self)
        else:
            future.set_exception(RuntimeError(f"stream work failed with CUDA status {status}"))

    def callback(stream, status, arg):
        loop.call_soon_threadsafe(resolve, status)

    self.add_callback(callback)
    return future


def _query(self) -> bool:
    """True when all work queued on the stream is done."""
    return _core.stream_query(self)


Stream.add_callback = _add_callback
Stream.async_done = _async_done
Stream.query = _query


def external_stream(ptr):
    """Wrap a stream handle created by another library (``.external`` is True); we never
    destroy it. The handle 0 is CUDA's default (NULL) stream, as Numba takes it: what
    ``torch.cuda.current_stream().cuda_stream`` gives on PyTorch's default stream."""
    if isinstance(ptr, bool) or not hasattr(ptr, "__index__") or ptr < 0:
        raise ValueError(f"external_stream(): ptr must be a stream handle, 0 or positive "
                         f"(got {ptr!r})")
    return _core.external_stream(ptr)
