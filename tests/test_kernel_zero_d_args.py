"""0-d arrays as @cuda.jit kernel arguments, as Numba takes them: ``a[()]`` reads and
writes the one element, in place (host arrays are written back, device arrays stay on the
device). NumPy scalars stay values passed by copy. The Python function is the oracle."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError

Z = 1


def add_0d(r, x, y):
    r[()] = x[()] + y[()] + Z


def describe_0d(out, a):
    out[0] = a.size
    out[1] = a.ndim
    out[2] = len(a.shape)
    a[()] = a[()] * 2


_add = cuda.jit(add_0d)

EDGES = {
    np.float32: [(1.5, -2.25), (np.nan, 1.0), (np.inf, -np.inf), (-0.0, -0.0),
                 (np.finfo(np.float32).max, np.finfo(np.float32).max)],
    np.int64: [(3, 4), (np.iinfo(np.int64).max, 0), (np.iinfo(np.int64).min, -1)],
    np.complex128: [(1 + 2j, -3j), (complex(np.nan, 1), 0j)],
}


@pytest.mark.parametrize("dtype", list(EDGES), ids=lambda d: np.dtype(d).name)
def test_zero_d_arrays_read_and_write_in_place(dtype):
    for xv, yv in EDGES[dtype]:
        x, y = np.array(xv, dtype), np.array(yv, dtype)
        r = np.full((), -7, dtype)
        _add[1, 1](r, x, y)
        expected = np.full((), -7, dtype)
        with np.errstate(all="ignore"):
            add_0d(expected, x, y)
        np.testing.assert_array_equal(r, expected)


def test_zero_d_device_arrays_and_shape():
    k = cuda.jit(describe_0d)
    a = cuda.to_device(np.array(2.5))
    out = np.full(3, -7, np.int64)
    k[1, 1](out, a)
    np.testing.assert_array_equal(out, [1, 0, 0])
    assert a.copy_to_host()[()] == 5.0
    r = cuda.device_array((), np.float64)
    _add[1, 1](r, np.array(1.0), a)  # a host and a device 0-d array together
    assert r.copy_to_host()[()] == 7.0


def test_zero_d_array_and_numpy_scalar_are_different_arguments():
    def put(r, v):
        r[0] = v + 1

    k = cuda.jit(put)
    r = np.zeros(1)
    k[1, 1](r, np.float64(2.0))  # a scalar: by value
    assert r[0] == 3.0
    with pytest.raises(CompileError):
        k[1, 1](r, np.array(2.0))  # a 0-d array is an array: v + 1 is not a number
    assert len(k.overloads) == 1


def test_zero_d_array_errors_and_ptx():
    def bad_index(r, a):
        r[0] = a[0]

    with pytest.raises(CompileError):
        cuda.jit(bad_index)[1, 1](np.zeros(1), np.array(1.0))
    k = cuda.jit(add_0d)  # its own kernel: the tests above may run in another process
    k[1, 1](np.zeros(()), np.array(1.0), np.array(2.0))
    ptx = k.inspect_ptx()
    assert len(ptx) == 1 and all(".entry" in p for p in ptx.values())


def test_zero_d_integer_array_as_index_and_zero_d_records():
    # numba-cuda's cache use cases: r[()] = ary[i] with i (and r) 0-d arrays.
    @cuda.jit
    def pick(r, ary, i):
        r[()] = ary[i] * 2

    ary = np.array([1.5, -0.0, np.inf, np.nan, 7.0])
    for i in range(-5, 5):
        r = np.full((), -7.0)
        pick[1, 1](r, ary, np.asarray(i, dtype=np.int32 if i % 2 else np.int64))
        np.testing.assert_array_equal(r, ary[i] * 2)

    packed = np.dtype([("a", np.int16), ("b", np.float64)])
    recs = np.array([(1, 42.5), (-2, 43.5)], dtype=packed)

    @cuda.jit
    def record_return(r, ary, i):
        r[()] = ary[i]  # a whole record into a 0-d structured array

    @cuda.jit
    def record_read(out, r):
        out[0] = r[()].b + r[()]["a"]

    r = np.zeros((), dtype=packed)
    record_return[1, 1](r, recs, np.asarray(1))
    assert r[()] == recs[1]
    out = np.zeros(1)
    record_read[1, 1](out, r)
    assert out[0] == 43.5 - 2


def test_zero_d_global_device_array_is_captured_by_reference():
    g = cuda.to_device(np.array(42.0, dtype=np.float32))

    @cuda.jit
    def read_write(output):
        output[()] = g[()] * 2.0
        g[()] = -0.5

    output = cuda.device_array((), dtype=np.float32)
    read_write[1, 1](output)
    assert output.copy_to_host()[()] == 84.0
    assert g.copy_to_host()[()] == -0.5  # the kernel wrote the captured array
    read_write[1, 1](output)
    assert output.copy_to_host()[()] == -1.0
    assert ".entry" in next(iter(read_write.inspect_ptx().values()))
