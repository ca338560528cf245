"""Assignment to array views in kernels (NumPy's setitem with slices): ``a[:] = 0``,
``a[1:n] = x``, ``a[i] = row``, ``b[1, :] = a[:4]``. The kernels run on one thread and use
no cuda intrinsics, so each Python function, run on NumPy copies, is the oracle."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError


def fills(a, m, v):
    a[:] = 0
    a[1:3] = v
    a[::3] = -1
    a[5:1:-2] = v * 2
    a[7:7] = 99  # empty: nothing
    m[1, :] = v
    m[:, 2] = 3.5
    m[0] = -v  # a row
    m[2:, ::2] = 8


def copies(a, m, c, col):
    m[1, :] = a[:4]
    m[2:4] = a[2:6]          # one row broadcast over two
    m[0, 1:3] = c[::-1][:2]  # int64 into float32, through views
    c[1:] = c[:-1]           # overlap, shifted right: memmove order
    c[:-2] = c[2:]           # overlap, shifted left
    a[:] = a                 # the same view
    m[4:, :] = col           # a (k, 1) column broadcast over columns


@pytest.mark.parametrize("v", [2.75, -1.5, np.inf])
def test_scalar_fills_match_numpy(v):
    a = np.arange(8.0)
    m = np.arange(20, dtype=np.int32).reshape(4, 5)
    ea, em = a.copy(), m.copy()
    fills(ea, em, v if np.isfinite(v) else 1e3)
    cuda.jit(fills)[1, 1](a, m, v if np.isfinite(v) else 1e3)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(m, em)


def test_array_copies_match_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(8)
    m = np.zeros((6, 4), np.float32)
    c = np.arange(10, dtype=np.int64) * 3 - 7
    col = np.array([[1.5], [-2.5]])
    ea, em, ec = a.copy(), m.copy(), c.copy()
    copies(ea, em, ec, col)
    cuda.jit(copies)[1, 1](a, m, c, col)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(m, em)
    np.testing.assert_array_equal(c, ec)


def test_local_and_shared_views_are_filled():
    @cuda.jit
    def k(out):
        s = cuda.shared.array((4, 8), np.float32)
        loc = cuda.local.array((1, 1), np.float64)
        loc[:] = 2
        if cuda.threadIdx.x == 0:
            s[:] = 0
        cuda.syncthreads()
        s[cuda.threadIdx.x, :] = cuda.threadIdx.x + loc[0, 0]
        cuda.syncthreads()
        out[cuda.threadIdx.x, :] = s[cuda.threadIdx.x]

    out = np.zeros((4, 8), np.float32)
    k[1, 4](out)
    np.testing.assert_array_equal(out, np.repeat(np.arange(2.0, 6.0), 8).reshape(4, 8))


def test_run_time_errors_raise_value_error_in_debug_kernels():
    @cuda.jit(debug=True, opt=False)
    def mismatch(a, b):
        a[0:3] = b[0:2]

    @cuda.jit(debug=True, opt=False)
    def reversed_overlap(a):
        a[:] = a[::-1]

    a, b = np.arange(5.0), np.ones(4)
    with pytest.raises(ValueError, match="could not broadcast the input array"):
        mismatch[1, 1](a, b)
    with pytest.raises(ValueError, match="overlaps the view with another layout"):
        reversed_overlap[1, 1](a)
    np.testing.assert_array_equal(a, np.arange(5.0))  # nothing was written


def test_compile_errors():
    def too_many_dims(m, t):
        m[0, :] = t[0]

    def complex_into_real(a, z):
        a[:] = z

    with pytest.raises(CompileError, match=r"could not broadcast a 2-d array"):
        cuda.jit(too_many_dims)[1, 1](np.zeros((2, 3)), np.zeros((2, 2, 3)))
    with pytest.raises(CompileError, match="cannot store a complex value"):
        cuda.jit(complex_into_real)[1, 1](np.zeros(3), np.zeros(3, np.complex128))


def test_view_assignments_compile_with_nvrtc():
    k = cuda.jit("void(float64[:], int32[:, :], float64)")(fills)
    assert ".entry" in k.inspect_ptx("void(float64[:], int32[:, :], float64)")
    k2 = cuda.jit("void(float64[:], float32[:, :], int64[:], float64[:, :])")(copies)
    assert ".entry" in k2.inspect_ptx("void(float64[:], float32[:, :], int64[:], float64[:, :])")
