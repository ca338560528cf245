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


# ---- the stream of the last write, and frees that wait for foreign streams --------------

def test_interface_names_the_stream_of_the_last_write():
    from numbacuda_ufunc import vectorize

    @vectorize(["float32(float32)"], target="cuda")
    def twice(x):
        return x * 2

    s1, s2 = cuda.stream(), cuda.stream()
    a = cuda.device_array(1000, np.float32, stream=s1)
    x = cuda.to_device(np.arange(1000, dtype=np.float32))
    assert a._interface_stream == int(s1)
    twice(x, out=a, stream=s2)
    assert a._interface_stream == int(s2)
    assert a[10:]._interface_stream == int(s2)  # views share the memory, and its writer
    assert x._interface_stream == 0             # read on s2, written on the default stream
    twice(x, out=a, stream=s1)
    assert a._interface_stream == int(s1)
    s1.synchronize()
    np.testing.assert_array_equal(a.copy_to_host(), np.arange(1000, dtype=np.float32) * 2)


def test_kernel_arguments_record_their_writer():
    @cuda.jit
    def fill(a, v):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = v

    s = cuda.stream()
    a = cuda.device_array(64, np.int32)
    fill[1, 64, s](a, 7)
    assert a._interface_stream == int(s)
    s.synchronize()
    assert (a.copy_to_host() == 7).all()


@pytest.mark.gpu
def test_interface_stream_field_is_the_last_writer_on_gpu():
    from numbacuda_ufunc import vectorize

    @vectorize(["float32(float32)"], target="cuda")
    def neg(x):
        return -x

    s2 = cuda.stream()
    a = cuda.device_array(256, np.float32)
    neg(cuda.to_device(np.ones(256, np.float32)), out=a, stream=s2)
    assert a.__cuda_array_interface__["stream"] == int(s2)


@pytest.mark.gpu
def test_free_waits_for_a_foreign_stream_still_reading():
    from numbacuda_ufunc import vectorize

    @vectorize(["float32(float32)"], target="cuda")
    def slow(x):
        s = x
        for _ in range(2000):
            s = s * np.float32(0.999) + np.float32(0.001)
        return s

    n = 1 << 22
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    # Two explicit streams: unlike the legacy default stream, s1 does not wait for s2.
    s1, s2 = cuda.stream(), cuda.stream()
    a = cuda.to_device(host, stream=s1)  # allocated (and freed) in s1's order
    s1.synchronize()
    out = slow(a, stream=s2)             # still reading `a` on s2 when we drop it
    del a
    junk = cuda.to_device(np.full(n, np.nan, np.float32), stream=s1)  # may reuse a's memory
    s1.synchronize()
    s2.synchronize()
    np.testing.assert_allclose(out.copy_to_host(), slow(host), rtol=1e-5)
    del junk
