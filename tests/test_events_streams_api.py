"""Events, the named default streams, stream callbacks and async_done, closing rules,
cuda.In/Out/InOut, the cuda aliases and the one rule for byte-swapped arrays."""

import asyncio
import sys
import time

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda, vectorize


@cuda.jit
def _copy_plus_one_and_clobber(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i] + 1
        a[i] = -7


@vectorize(["float64(float64)", "float32(float32)", "int32(int32)"])
def _triple(x):
    return x * 3


@vectorize(["float64(float64, float64)"])
def _add(x, y):
    return x + y


# ---------------------------------------------------------------- events

def test_event_record_query_synchronize_and_elapsed_time():
    start, end = cuda.event(), cuda.event()
    s = cuda.stream()
    start.record(s)
    d = cuda.to_device(np.ones(100_000), stream=s)
    _triple(d, stream=s)
    time.sleep(0.002)
    end.record(s)
    end.synchronize()
    assert start.query() and end.query()
    ms = start.elapsed_time(end)
    assert ms >= 0 and cuda.event_elapsed_time(start, end) == pytest.approx(ms)
    if cuda.is_emulated():  # the host backend's events carry the time of recording
        assert ms >= 2.0
    end.wait(cuda.stream())  # later work on another stream waits for it
    end.wait()


def test_event_errors():
    a, b = cuda.event(timing=False), cuda.event(timing=False)
    a.record()
    b.record()
    with pytest.raises(ValueError, match="timing=True"):
        a.elapsed_time(b)
    unrecorded = cuda.event()
    rec = cuda.event()
    rec.record()
    with pytest.raises(ValueError, match="recorded"):
        rec.elapsed_time(unrecorded)
    with pytest.raises(TypeError, match="must be an Event"):
        rec.elapsed_time(3)
    with pytest.raises(TypeError, match="evtstart must be an Event"):
        cuda.event_elapsed_time(None, rec)
    with pytest.raises(TypeError, match="timing must be True or False"):
        cuda.event(timing="yes")
    closed = cuda.stream()
    closed.close()
    with pytest.raises(ValueError, match="stream was closed"):
        rec.record(closed)
    with pytest.raises(ValueError, match="stream was closed"):
        rec.wait(closed)
    assert "timing=False" in repr(a)


# ---------------------------------------------------------------- streams

def test_named_default_streams():
    legacy, per_thread = cuda.legacy_default_stream(), cuda.per_thread_default_stream()
    assert legacy.handle == 1 and per_thread.handle == 2
    assert cuda.default_stream().handle == 0
    for s in (legacy, per_thread):
        assert not s.external
        d = cuda.to_device(np.arange(5.0), stream=s)
        np.testing.assert_array_equal(_triple(d, stream=s).copy_to_host(stream=s), np.arange(5.0) * 3)
        s.synchronize()


def test_external_stream():
    s = cuda.stream()
    ext = cuda.external_stream(s.handle)
    assert ext.external and not s.external and ext.handle == s.handle
    d = cuda.to_device(np.arange(4.0), stream=ext)
    np.testing.assert_array_equal(d.copy_to_host(stream=ext), np.arange(4.0))
    for bad in (-1, "x", 1.5):  # 0 is the default stream, as in Numba (test_numba_names.py)
        with pytest.raises((ValueError, TypeError), match="ptr must be a stream handle"):
            cuda.external_stream(bad)


def test_closing_the_default_streams_is_harmless():
    for make in (cuda.default_stream, cuda.legacy_default_stream, cuda.per_thread_default_stream):
        s = make()
        s.close()
        assert not s.closed and not make().closed
        with s.auto_synchronize():
            d = cuda.to_device(np.arange(3.0), stream=s)
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(3.0))
    np.testing.assert_array_equal(_triple(np.arange(3.0)), np.arange(3.0) * 3)  # stream=0 works


def test_auto_synchronize_on_a_closed_stream_raises():
    s = cuda.stream()
    s.close()
    with pytest.raises(ValueError, match="stream was closed"):
        with s.auto_synchronize():
            pass
    s2 = cuda.stream()
    with pytest.raises(ValueError, match="stream was closed"):
        with s2.auto_synchronize():
            s2.close()
    s3 = cuda.stream()
    with pytest.raises(KeyError):  # the block's own error is not hidden
        with s3.auto_synchronize():
            s3.close()
            raise KeyError("mine")


def test_add_callback_runs_after_the_queued_work():
    s = cuda.stream()
    d = cuda.to_device(np.arange(1000.0), stream=s)
    _triple(d, out=d, stream=s)
    calls = []
    s.add_callback(lambda stream, status, arg: calls.append((stream, status, arg)), "payload")
    s.synchronize()
    for _ in range(200):  # the driver thread may still be in the callback
        if calls:
            break
        time.sleep(0.01)
    assert len(calls) == 1
    stream, status, arg = calls[0]
    assert stream == s and status == 0 and arg == "payload"
    assert s.query()


def test_add_callback_errors(monkeypatch):
    s = cuda.stream()
    with pytest.raises(TypeError, match="callback must be callable"):
        s.add_callback(3)
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))

    def boom(stream, status, arg):
        raise RuntimeError("callback failed")

    s.add_callback(boom)
    ok = []
    s.add_callback(lambda *args: ok.append(args[2]), 5)  # the stream goes on after a failure
    s.synchronize()
    for _ in range(200):
        if ok:
            break
        time.sleep(0.01)
    assert ok == [5]
    assert len(seen) == 1 and "callback failed" in str(seen[0])
    s.close()
    with pytest.raises(ValueError, match="stream was closed"):
        s.add_callback(lambda *a: None)


def test_async_done_is_an_asyncio_future():
    s = cuda.stream()
    d = cuda.to_device(np.arange(10.0), stream=s)

    async def run():
        _triple(d, out=d, stream=s)
        fut = s.async_done()
        assert isinstance(fut, asyncio.Future)
        return await asyncio.wait_for(fut, timeout=30)

    assert asyncio.run(run()) == s
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(10.0) * 3)
    with pytest.raises(RuntimeError, match="no running event loop"):
        s.async_done()


# ---------------------------------------------------------------- In / Out / InOut

def test_in_out_inout_hints():
    a = np.arange(8.0)
    b = np.full(8, np.nan)
    _copy_plus_one_and_clobber[1, 8](cuda.In(a), cuda.Out(b))
    np.testing.assert_array_equal(b, np.arange(8.0) + 1)
    np.testing.assert_array_equal(a, np.arange(8.0))  # In: the kernel's writes are not copied back
    c = np.zeros(8)
    _copy_plus_one_and_clobber[1, 8](cuda.InOut(a), cuda.InOut(c))
    np.testing.assert_array_equal(a, np.full(8, -7.0))
    np.testing.assert_array_equal(c, np.arange(8.0) + 1)
    d_in, d_out = cuda.to_device(np.arange(8.0)), cuda.device_array(8)
    _copy_plus_one_and_clobber[1, 8](cuda.In(d_in), cuda.Out(d_out))  # device arrays: no copies
    np.testing.assert_array_equal(d_out.copy_to_host(), np.arange(8.0) + 1)
    assert repr(cuda.In(1)) == "cuda.In(1)"


def test_hints_reject_what_kernels_reject():
    with pytest.raises(TypeError, match="argument 1 has unsupported type"):
        _copy_plus_one_and_clobber[1, 8](cuda.In("text"), cuda.Out(np.zeros(8)))


# ---------------------------------------------------------------- aliases

def test_cuda_aliases():
    assert cuda.vectorize is nu.vectorize and cuda.guvectorize is nu.guvectorize
    assert cuda.reduce is nu.reduce and cuda.Reduce is nu.Reduce
    assert cuda.jit is not None and callable(cuda.jit)


# ---------------------------------------------------------------- byte-swapped arrays

_SWAPPED = np.dtype(">f8") if np.little_endian else np.dtype("<f8")


def test_byte_swapped_arrays_follow_one_rule_everywhere():
    values = np.array([1.5, -0.0, np.inf, np.nan, -3.25, 1e300])
    src = values.astype(_SWAPPED)
    # ufunc input and out=
    out = np.full(6, 99.0, dtype=_SWAPPED)
    assert _triple(src, out=out) is out
    np.testing.assert_array_equal(out, values * 3)
    assert out.dtype == _SWAPPED
    # copies
    d = cuda.to_device(src)
    np.testing.assert_array_equal(d.copy_to_host(), values)
    d.copy_to_device(src[::-1].copy())
    back = np.zeros(6, dtype=_SWAPPED)
    d.copy_to_host(back)
    np.testing.assert_array_equal(back, values[::-1])
    # kernel arguments: read, and written back into the caller's array
    a = values.astype(_SWAPPED)
    b = np.zeros(6, dtype=_SWAPPED)
    _copy_plus_one_and_clobber[1, 8](a, b)
    np.testing.assert_array_equal(b, values + 1)
    np.testing.assert_array_equal(a, np.full(6, -7.0))
    # reductions: input and out=
    grid = np.arange(12.0).reshape(3, 4)
    r_out = np.zeros(4, dtype=_SWAPPED)

    @cuda.reduce
    def add(x, y):
        return x + y

    assert add(grid.astype(_SWAPPED)) == grid.sum()
    _add.reduce(grid.astype(_SWAPPED), axis=0, out=r_out)
    np.testing.assert_array_equal(r_out, grid.sum(axis=0))


def test_byte_swapped_arrays_in_ufunc_methods():
    values = np.array([1.5, -2.0, 0.25, np.inf, 7.0])
    src = values.astype(_SWAPPED)
    np.testing.assert_array_equal(_add.accumulate(src), np.add.accumulate(values))
    out = np.zeros(5, dtype=_SWAPPED)
    _add.accumulate(src, out=out)
    np.testing.assert_array_equal(out, np.add.accumulate(values))
    np.testing.assert_array_equal(_add.reduceat(src, [0, 2]), np.add.reduceat(values, [0, 2]))
    np.testing.assert_array_equal(_add.outer(src, src), np.add.outer(values, values))
    target = src.copy()
    expected = values.copy()
    _add.at(target, [0, 1, 1], np.array([1.0, 2.0, 3.0], dtype=_SWAPPED))
    np.add.at(expected, [0, 1, 1], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(target, expected)
    assert target.dtype == _SWAPPED
