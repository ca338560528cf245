"""NumPy ufuncs in kernels: comparisons, logical and bitwise-not ufuncs (np.equal,
np.less..., np.logical_and/or/xor/not, np.invert/np.bitwise_not), complex maximum/minimum/
fmax/fmin and log2, on scalars and on whole arrays with an output array; NumPy itself is
the oracle."""

import itertools

import numpy as np
import pytest

from numbacuda_ufunc import cuda, typeof
from numbacuda_ufunc.errors import CompileError

VALUES = {
    np.int64: [-3, 0, 5, np.iinfo(np.int64).min],
    np.uint64: [0, 1, 2**64 - 1],
    np.int8: [-1, 0, 7],
    np.float32: [-0.5, 0.0, np.nan, np.inf],
    np.float64: [np.nan, -0.0, 2.5],
    np.complex128: [0j, 1 + 1j, complex(np.nan, 0)],
    np.bool_: [True, False],
}


@cuda.jit
def every_comparison(a, b, o):
    for i in range(a.size):
        o[0, i] = np.equal(a[i], b[i])
        o[1, i] = np.not_equal(a[i], b[i])
        o[2, i] = np.less(a[i], b[i])
        o[3, i] = np.less_equal(a[i], b[i])
        o[4, i] = np.greater(a[i], b[i])
        o[5, i] = np.greater_equal(a[i], b[i])
        o[6, i] = np.logical_and(a[i], b[i])
        o[7, i] = np.logical_or(a[i], b[i])
        o[8, i] = np.logical_xor(a[i], b[i])
        o[9, i] = np.logical_not(a[i])


PAIRS = [(np.int64, np.uint64), (np.uint64, np.int64), (np.int8, np.float32),
         (np.float64, np.float32), (np.complex128, np.float64), (np.bool_, np.int64),
         (np.float32, np.float32)]


@pytest.mark.parametrize("ta, tb", PAIRS, ids=lambda t: np.dtype(t).name)
def test_numpy_comparison_and_logical_ufuncs(ta, tb):
    pa, pb = zip(*itertools.product(VALUES[ta], VALUES[tb]))
    a, b = np.array(pa, ta), np.array(pb, tb)
    o = np.zeros((10, a.size), np.bool_)
    o[::2] = True  # poisoned
    every_comparison[1, 1](a, b, o)
    with np.errstate(all="ignore"):
        want = [np.equal(a, b), np.not_equal(a, b), np.less(a, b), np.less_equal(a, b),
                np.greater(a, b), np.greater_equal(a, b), np.logical_and(a, b),
                np.logical_or(a, b), np.logical_xor(a, b), np.logical_not(a)]
    for row, w in enumerate(want):
        np.testing.assert_array_equal(o[row], w, err_msg=f"row {row}")
    assert ".entry" in every_comparison.inspect_asm(signature=(typeof(a), typeof(b), typeof(o)))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64, np.bool_])
def test_numpy_invert(dtype):
    @cuda.jit
    def inv(a, o):
        for i in range(a.size):
            o[0, i] = np.invert(a[i])
            o[1, i] = np.bitwise_not(a[i])

    a = np.array(VALUES.get(dtype, [0, 1, 5, 200]), dtype) if dtype is np.bool_ else \
        np.array([0, 1, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
    o = np.full((2, a.size), 3 if dtype is not np.bool_ else True, dtype)
    inv[1, 1](a, o)
    np.testing.assert_array_equal(o[0], np.invert(a))
    np.testing.assert_array_equal(o[1], np.invert(a))


def test_numpy_comparison_whole_arrays():
    @cuda.jit
    def whole(a, b, lt, both, neg):
        np.less(a, b, lt)
        np.logical_and(a, b, both)
        np.logical_not(a, neg)

    a = np.array([[0.0, 1.5], [np.nan, -2.0]])
    b = np.array([1.0, 1.5])  # broadcast against the output
    lt, both, neg = (np.ones((2, 2), np.bool_) for _ in range(3))
    whole[1, 1](a, b, lt, both, neg)
    np.testing.assert_array_equal(lt, np.less(a, b))
    np.testing.assert_array_equal(both, np.logical_and(a, b))
    np.testing.assert_array_equal(neg, np.logical_not(a))


def test_numpy_invert_of_floats_refused():
    def bad(a):
        a[0] = np.invert(a[0])

    with pytest.raises(CompileError):
        cuda.compile_ptx(bad, (typeof(np.zeros(2)),))


COMPLEX = [0j, 1 + 1j, 1 - 1j, -2 + 0j, complex(np.nan, 0), complex(0, np.nan),
           complex(np.inf, 1), complex(1, -np.inf), complex(-0.0, 0.0)]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_numpy_complex_maximum_minimum(dtype):
    @cuda.jit
    def extremes(a, b, o):
        for i in range(a.size):
            o[0, i] = np.maximum(a[i], b[i])
            o[1, i] = np.minimum(a[i], b[i])
            o[2, i] = np.fmax(a[i], b[i])
            o[3, i] = np.fmin(a[i], b[i])

    pa, pb = zip(*itertools.product(COMPLEX, COMPLEX))
    a, b = np.array(pa, dtype), np.array(pb, dtype)
    o = np.full((4, a.size), 7 + 7j, dtype)
    extremes[1, 1](a, b, o)
    with np.errstate(all="ignore"):
        want = [np.maximum(a, b), np.minimum(a, b), np.fmax(a, b), np.fmin(a, b)]
    for row, w in enumerate(want):
        np.testing.assert_array_equal(o[row], w, err_msg=f"row {row}")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_numpy_complex_log2(dtype):
    @cuda.jit
    def log2(a, o):
        for i in range(a.size):
            o[i] = np.log2(a[i])

    a = np.array([1 + 1j, -4 + 0j, 0.5j, 1e30 - 3j, 8 + 0j], dtype)
    o = np.zeros_like(a)
    log2[1, 1](a, o)
    tol = 1e-6 if dtype is np.complex64 else 1e-14
    np.testing.assert_allclose(o, np.log2(a), rtol=tol)
