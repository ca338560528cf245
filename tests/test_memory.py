"""Device memory: the pool, out-of-memory recovery and pinned host memory."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda


def test_dropping_arrays_returns_memory_to_where_it_started():
    start = cuda.memory_stats()
    for i in range(100_000):
        cuda.device_array(16 + i % 64, dtype=np.float32)
    views = [cuda.device_array((8, 8))[::2] for _ in range(100)]
    assert cuda.memory_stats()["allocations"] == start["allocations"] + 100
    del views
    end = cuda.memory_stats()
    assert end["in_use_bytes"] == start["in_use_bytes"]
    assert end["allocations"] == start["allocations"]


def test_views_keep_their_buffer_alive():
    start = cuda.memory_stats()["in_use_bytes"]
    view = cuda.to_device(np.arange(100.0))[10:20]
    assert cuda.memory_stats()["in_use_bytes"] == start + 800
    np.testing.assert_array_equal(view.copy_to_host(), np.arange(10.0, 20.0))
    del view
    assert cuda.memory_stats()["in_use_bytes"] == start


def test_allocation_larger_than_the_device_raises_memory_error_and_recovers():
    total = cuda.memory_stats()["total_bytes"]
    with pytest.raises(MemoryError, match="out of device memory"):
        cuda.device_array(total // 8 * 2, dtype=np.float64)
    ok = cuda.to_device(np.arange(1000, dtype=np.int32))
    np.testing.assert_array_equal(ok.copy_to_host(), np.arange(1000))


def test_memory_info_and_trim():
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    cuda.current_context().trim_pool()


def test_pinned_array_is_numpy_and_survives_its_creator():
    pinned = cuda.pinned_array((3, 4), dtype=np.int16, order="F")
    assert isinstance(pinned, np.ndarray) and pinned.flags.f_contiguous
    pinned[...] = np.arange(12).reshape(3, 4)
    view = pinned[1:]
    del pinned
    np.testing.assert_array_equal(view, np.arange(12).reshape(3, 4)[1:])


def test_zero_size_arrays_allocate_nothing():
    start = cuda.memory_stats()["in_use_bytes"]
    empty = cuda.device_array((0, 5), np.float32)
    assert empty.size == 0 and empty.__cuda_array_interface__["data"][0] == 0
    assert cuda.memory_stats()["in_use_bytes"] == start
    assert empty.copy_to_host().shape == (0, 5)


# ---- pinned host memory on the legacy default stream -----------------------------------
# Numba is synchronous for stream=0: when a call returns, host results are in place and
# host sources may be overwritten. A copy into or out of pinned memory is a DMA the driver
# does not wait for, so each path must synchronize itself. The host backend is synchronous,
# so there these tests check the paths' results; on a GPU (sized up) a slow kernel before
# the copy makes a missing synchronization show as NaN in the poisoned output.

from numbacuda_ufunc import _core, vectorize  # noqa: E402

ON_GPU = not _core.emulation_enabled()
N = 2**23 if ON_GPU else 3000  # on a GPU, above the ufunc's pipelining threshold (16 MiB)


@vectorize(["float32(float32, float32)"], target="cuda")
def slow_blend(a, b):
    s = a
    for _ in range(64):  # long enough that the kernel is still running when copies queue
        s = s * np.float32(0.5) + b
    return s


def _blend_reference(a, b):
    s = a.copy()
    for _ in range(64):
        s = s * np.float32(0.5) + b
    return s


def _poisoned_pinned(n):
    p = cuda.pinned_array(n, np.float32)
    p[:] = np.nan
    return p


def test_pinned_copy_to_host_is_complete_on_return():
    a = np.random.default_rng(1).random(N, dtype=np.float32)
    d = slow_blend(cuda.to_device(a), np.float32(1))
    out = _poisoned_pinned(N)
    d.copy_to_host(ary=out)
    np.testing.assert_allclose(out, _blend_reference(a, np.float32(1)), rtol=1e-6)


def test_pinned_ufunc_output_is_complete_on_return():
    a = np.random.default_rng(2).random(N, dtype=np.float32)
    out = _poisoned_pinned(N)
    got = slow_blend(a, np.float32(2), out=out)  # host input and output: the pipelined path
    assert got is out
    np.testing.assert_allclose(out, _blend_reference(a, np.float32(2)), rtol=1e-6)


def test_pinned_ufunc_reduce_output_is_complete_on_return():
    @vectorize(["float32(float32, float32)"], target="cuda", identity=0)
    def add(a, b):
        return a + b

    x = np.random.default_rng(3).random((N // 64, 64), dtype=np.float32)
    out = _poisoned_pinned(64)
    add.reduce(x, axis=0, out=out)
    np.testing.assert_allclose(out, x.sum(axis=0, dtype=np.float64), rtol=1e-4)


def test_pinned_source_may_be_overwritten_after_to_device():
    src = cuda.pinned_array(N, np.float32)
    src[:] = np.arange(N, dtype=np.float32)
    d = cuda.to_device(src)
    src[:] = -1  # the DMA must have finished reading
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(N, dtype=np.float32))
    d2 = cuda.device_array(N, np.float32)
    src[:] = 7
    d2.copy_to_device(src)
    src[:] = -1
    np.testing.assert_array_equal(d2.copy_to_host(), np.full(N, 7, np.float32))


def test_pinned_result_on_an_explicit_stream_after_synchronize():
    a = np.random.default_rng(4).random(N, dtype=np.float32)
    s = cuda.stream()
    out = _poisoned_pinned(N)
    slow_blend(a, np.float32(3), out=out, stream=s)
    s.synchronize()  # an explicit stream keeps the copy asynchronous until here
    np.testing.assert_allclose(out, _blend_reference(a, np.float32(3)), rtol=1e-6)


def test_pinned_memory_freed_on_another_thread_warns_nothing():
    import gc
    import threading
    import warnings

    arrays = [cuda.pinned_array(1024, np.float64) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed free would warn (RuntimeWarning)
        t = threading.Thread(target=lambda: (arrays.clear(), gc.collect()))
        t.start()
        t.join()
        assert not arrays


def test_memory_info_from_a_new_thread():
    import threading

    seen = []
    t = threading.Thread(target=lambda: seen.append(cuda.current_context().get_memory_info()))
    t.start()
    t.join()
    (free, total), = seen
    assert 0 < free <= total


# Large host copies are split over the thread pool (host_copy) from 2 MiB on, and the CUDA
# backend stages them through two 8 MiB pinned buffers: sizes around both boundaries, odd
# lengths and unaligned views must arrive byte for byte.
MiB = 1 << 20
COPY_SIZES = [2 * MiB - 1, 2 * MiB, 2 * MiB + 3, 8 * MiB + 1, 17 * MiB + 5]


@pytest.mark.parametrize("nbytes", COPY_SIZES)
def test_large_copies_arrive_byte_for_byte(nbytes):
    host = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    d = cuda.to_device(host)
    np.testing.assert_array_equal(d.copy_to_host(), host)  # into a new array
    back = np.zeros_like(host)
    d.copy_to_host(ary=back)  # into an existing one
    np.testing.assert_array_equal(back, host)
    pinned = cuda.pinned_array(nbytes, np.uint8)
    d.copy_to_host(ary=pinned)
    np.testing.assert_array_equal(pinned, host)
    # An unaligned view on both sides: device offset 3, host offset 5.
    d2 = cuda.device_array(nbytes, np.uint8)
    d2[3:3 + nbytes - 5].copy_to_device(host[5:])
    np.testing.assert_array_equal(d2[3:3 + nbytes - 5].copy_to_host(), host[5:])
    np.testing.assert_array_equal(d[7:].copy_to_host(), host[7:])


def test_large_copies_from_several_threads_at_once():
    import threading

    # The pool takes one job at a time; a second caller copies on its own thread.
    sources = [np.random.default_rng(i).integers(0, 2**31, 3 * MiB + i, dtype=np.int32)
               for i in range(4)]
    results = [None] * len(sources)
    errors = []

    def round_trip(i):
        try:
            for _ in range(3):
                results[i] = cuda.to_device(sources[i]).copy_to_host()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=round_trip, args=(i,)) for i in range(len(sources))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for got, want in zip(results, sources):
        np.testing.assert_array_equal(got, want)


def _child_round_trip(q):
    x = np.arange(4 * MiB, dtype=np.int32)
    q.put(bool(np.array_equal(cuda.to_device(x).copy_to_host(), x)))


@pytest.mark.emulation  # a CUDA context does not survive fork()
def test_large_copy_in_a_forked_child_after_the_parent_used_the_pool():
    import multiprocessing

    x = np.arange(4 * MiB, dtype=np.int32)
    np.testing.assert_array_equal(cuda.to_device(x).copy_to_host(), x)  # the parent's pool
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_round_trip, args=(q,))
    p.start()
    p.join(60)
    assert p.exitcode == 0
    assert q.get(timeout=5) is True
