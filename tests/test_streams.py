"""Streams: creation, synchronization, stream= arguments and closed streams."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda


def test_stream_orders_copies_and_synchronizes():
    s = cuda.stream()
    host = np.arange(1 << 20, dtype=np.float32)
    dev = cuda.to_device(host, stream=s)
    out = cuda.pinned_array(host.shape, np.float32)
    dev.copy_to_host(out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, host)
    assert dev.stream == s


def test_default_stream_and_auto_synchronize():
    d = cuda.default_stream()
    assert d.handle == 0 and cuda.legacy_default_stream().handle == 1  # CU_STREAM_LEGACY, as Numba
    s = cuda.stream()
    assert s.handle != 0 and s != d
    with s.auto_synchronize():
        arr = cuda.device_array(10, stream=s)
        arr.copy_to_device(np.ones(10), stream=s)
    np.testing.assert_array_equal(arr.copy_to_host(), np.ones(10))


def test_stream_argument_forms():
    # Numba-style objects: `.handle` with a ctypes-like `.value`; CuPy-style: `.ptr`.
    class NumbaLike:
        class handle:
            value = None

    class CupyLike:
        ptr = 0

    for stream in (0, None, cuda.default_stream(), NumbaLike(), CupyLike(), cuda.stream()):
        dev = cuda.to_device(np.arange(3), stream=stream)
        np.testing.assert_array_equal(dev.copy_to_host(stream=stream), np.arange(3))


def test_bad_stream_argument():
    with pytest.raises(TypeError, match=r"to_device\(\): stream must be"):
        cuda.to_device(np.arange(3), stream="fast")


def test_closed_stream_is_refused_everywhere():
    s = cuda.stream()
    arr = cuda.to_device(np.arange(4.0), stream=s)
    s.close()
    assert s.closed
    for call in (lambda: s.synchronize(),
                 lambda: cuda.to_device(np.arange(3), stream=s),
                 lambda: cuda.device_array(3, stream=s),
                 lambda: arr.copy_to_host(stream=s)):
        with pytest.raises(ValueError, match="stream was closed"):
            call()
    # The array itself outlives its stream and still works on the default stream.
    np.testing.assert_array_equal(arr.copy_to_host(), np.arange(4.0))
