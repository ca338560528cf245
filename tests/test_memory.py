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
