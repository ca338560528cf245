"""Whole-array NumPy reductions in kernels and device functions (np.sum, a.mean(),
np.argmax(a)...; issue 16): any ndim and layout, NumPy's result types, NaN, inf, -0.0,
integer wrap-around and empty arrays. The oracle is the kernel's Python function run by
NumPy on the host; bit-exact wherever NumPy's summation order is fixed by the layout."""

import warnings

import numpy as np
import pytest

from numbacuda_ufunc import (
    cuda,
    float32,
    float64,
    int8,
    int64,
    literal_unroll,
    uint8,
    uint16,
    uint64,
)
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

RNG = np.random.default_rng(2026_11_22)


def float_reductions(f, i, a):
    f[0] = np.sum(a)
    f[1] = a.sum()
    f[2] = np.prod(a)
    f[3] = a.prod()
    f[4] = np.mean(a)
    f[5] = a.mean()
    f[6] = np.var(a)
    f[7] = a.var()
    f[8] = np.std(a)
    f[9] = a.std()
    f[10] = np.min(a)
    f[11] = a.min()
    f[12] = np.max(a)
    f[13] = a.max()
    f[14] = np.amin(a)
    f[15] = np.amax(a)
    f[16] = np.nansum(a)
    f[17] = np.nanprod(a)
    f[18] = np.nanmean(a)
    f[19] = np.nanmin(a)
    f[20] = np.nanmax(a)
    f[21] = np.var(a, ddof=1)
    f[22] = np.std(a, ddof=1)
    i[0] = np.argmin(a)
    i[1] = a.argmin()
    i[2] = np.argmax(a)
    i[3] = a.argmax()
    i[4] = np.all(a)
    i[5] = a.all()
    i[6] = np.any(a)
    i[7] = a.any()


def int_reductions(f, i, a):
    i[0] = np.sum(a)
    i[1] = a.sum()
    i[2] = np.prod(a)
    i[3] = a.prod()
    i[4] = np.min(a)
    i[5] = np.max(a)
    i[6] = a.min()
    i[7] = a.max()
    i[8] = np.argmin(a)
    i[9] = np.argmax(a)
    i[10] = np.all(a)
    i[11] = np.any(a)
    i[12] = np.nansum(a)
    i[13] = np.nanprod(a)
    i[14] = np.nanmin(a)
    i[15] = np.nanmax(a)
    i[16] = a.argmin() + a.argmax() * 1000
    i[17] = a.all() + a.any() * 10
    f[0] = np.mean(a)
    f[1] = np.var(a)
    f[2] = np.std(a)
    f[3] = np.nanmean(a)
    f[4] = a.mean()
    f[5] = a.var()
    f[6] = a.std()


def complex_reductions(c, f, i, a):
    c[0] = np.sum(a)
    c[1] = a.prod()
    c[2] = np.mean(a)
    c[3] = np.nansum(a)
    f[0] = np.var(a)
    f[1] = a.std()
    i[0] = np.all(a)
    i[1] = a.any()


def _run(fn, a, *outs):
    """The kernel and its Python function on poisoned outputs; returns both."""
    got = [o.copy() for o in outs]
    want = [o.copy() for o in outs]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fn(*want, a)
    k = cuda.jit(fn)
    k[1, 1](*got, a)
    return k, got, want


# f[...] slots of min/max/nanmin/nanmax in float_reductions: which zero wins a tie of
# +0.0 and -0.0 is unspecified (NumPy's SIMD loops differ by dtype and length).
_EXTREMA = [10, 11, 12, 13, 14, 15, 19, 20]


def _assert_same(got, want, zero_ties=()):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        if g.dtype.kind in "fc":
            sign_g, sign_w = np.signbit(g.real), np.signbit(w.real)
            # the sign of a NaN an operation makes is unspecified (x86 sets it, the GPU
            # does not): only zeros and infinities have a sign to compare
            nan = np.isnan(w.real)
            sign_g[nan] = sign_w[nan]
            for k in zero_ties:
                if w[k] == 0:
                    sign_g[k] = sign_w[k]
            np.testing.assert_array_equal(sign_g, sign_w)
            zero_ties = ()


def _layouts(base):
    """The same values as C, Fortran, strided, reversed and sliced views."""
    views = [base, np.asfortranarray(base), base[::-1]]
    if base.ndim >= 1 and base.shape[-1] > 2:
        views.append(base[..., ::2])
    if base.ndim >= 2:
        views += [base.T, base[::2, ::-1]]
    return views


def _float_values(dtype, shape, kind):
    x = RNG.standard_normal(shape).astype(dtype) * 3
    flat = x.reshape(-1)
    if kind == "edges":  # -0.0, inf, -inf, and ties between +0.0 and -0.0
        idx = RNG.permutation(flat.size)
        flat[idx[:3]] = -0.0
        flat[idx[3:5]] = 0.0
        flat[idx[5:6]] = np.inf
    elif kind == "nan":
        flat[RNG.integers(0, flat.size, 2)] = np.nan
    elif kind == "allnan":
        flat[:] = np.nan
    elif kind == "zeros":
        flat[:] = RNG.choice([0.0, -0.0], flat.size)
    return x


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(7,), (130,), (1000,), (6, 9), (5, 4, 7)])
@pytest.mark.parametrize("kind", ["random", "edges", "nan", "allnan", "zeros"])
def test_float_reductions_match_numpy(dtype, shape, kind):
    base = _float_values(dtype, shape, kind)
    for a in _layouts(base):
        f, i = np.full(23, -7.0), np.full(8, -7, np.int64)
        _, got, want = _run(float_reductions, a, f, i)
        _assert_same(got, want, _EXTREMA)


INT_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
              np.int64, np.uint64]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("shape", [(9,), (4, 33), (3, 5, 6)])
def test_int_reductions_match_numpy(dtype, shape):
    info = np.iinfo(dtype) if dtype is not np.bool_ else None
    out = np.uint64 if dtype is np.uint64 else np.int64  # holds every result
    if info is None:
        base = RNG.integers(0, 2, shape).astype(np.bool_)
    else:  # the extremes too: sums and products wrap around as in NumPy
        base = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        base.reshape(-1)[:2] = [info.min, info.max]
    for a in _layouts(base):
        f, i = np.full(7, -7.0), np.full(18, 7, out)
        _, got, want = _run(int_reductions, a, f, i)
        _assert_same(got, want)
    small = (base % 3 if info is not None else base)  # products that do not overflow
    f, i = np.full(7, -7.0), np.full(18, 7, out)
    _, got, want = _run(int_reductions, small.astype(dtype), f, i)
    _assert_same(got, want)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_reductions_match_numpy(dtype):
    for shape in [(5,), (70,), (400,), (6, 7)]:
        base = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)
        for a in _layouts(base):
            c, f, i = np.full(4, -7 + 0j), np.full(2, -7.0), np.full(2, -7, np.int64)
            _, got, want = _run(complex_reductions, a, c, f, i)
            _assert_same(got, want)


# The kernels follow NumPy 2.4's var/std and buffered sums bit for bit; NumPy 2.2 (the last
# for Python 3.10) computes var/std of large arrays with other roundings.
NUMPY_2_4 = tuple(int(x) for x in np.__version__.split(".")[:2]) >= (2, 4)


def test_large_and_buffered_sums_match_numpy_within_rounding():
    # Above 8192 elements NumPy sums non-contiguous or cast arrays through buffers whose
    # split follows its iterator: bit-exact for contiguous arrays, within rounding else.
    base = RNG.standard_normal((150, 130))
    ints = RNG.integers(-2**60, 2**60, (150, 130))
    for a in (base, base[::-1], base.T, base[:, ::2]):
        f, i = np.full(23, -7.0), np.full(8, -7, np.int64)
        _, got, want = _run(float_reductions, a, f, i)
        if (a.flags.c_contiguous or a.flags.f_contiguous) and NUMPY_2_4:
            _assert_same(got, want)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
        np.testing.assert_array_equal(got[1], want[1])
    f, i = np.full(7, -7.0), np.full(18, -7, np.int64)
    _, got, want = _run(int_reductions, ints, f, i)
    _assert_same(got, want)  # an int64 -> float64 mean sums in 8192-element buffers


def test_empty_arrays():
    # NumPy: sum 0, prod 1, mean/var nan; min/max/argmin/argmax raise, which a kernel
    # cannot: they return nan (0 for integers) and -1.
    def k(f, i, a, b):
        f[0] = np.sum(a)
        f[1] = np.prod(a)
        f[2] = np.mean(a)
        f[3] = np.var(a)
        f[4] = np.min(a)
        f[5] = np.nanmax(a)
        i[0] = np.argmin(a)
        i[1] = np.argmax(b)
        i[2] = np.max(b)
        i[3] = np.all(a)
        i[4] = np.any(a)
        i[5] = np.sum(b)

    f, i = np.full(6, -7.0), np.full(6, -7, np.int64)
    kern = cuda.jit(k)
    kern[1, 1](f, i, np.zeros(0), np.zeros((3, 0), np.int32))
    np.testing.assert_array_equal(f, [0.0, 1.0, np.nan, np.nan, np.nan, np.nan])
    np.testing.assert_array_equal(i, [-1, -1, 0, 1, 0, 0])


@pytest.mark.parametrize("dtype", [int8, uint8, uint16, float32, int64, uint64, float64])
def test_result_types_follow_numpy(dtype):
    from numbacuda_ufunc import types

    def s(a):
        return np.sum(a)

    def m(a):
        return a.mean()

    def am(a):
        return np.argmax(a)

    def mn(a):
        return a.min()

    arg = (types.Array(dtype, 1, "A"),)
    npt = np.dtype(dtype.dtype)
    assert translate(s, arg).return_type.dtype == np.sum(np.zeros(1, npt)).dtype
    assert translate(m, arg).return_type.dtype == np.mean(np.zeros(1, npt)).dtype
    assert translate(am, arg).return_type.dtype == np.int64
    assert translate(mn, arg).return_type.dtype == npt


def test_reductions_in_device_function_and_literal_unroll_compile_with_nvrtc():
    cases = (np.float64([1.0, 0.0, np.inf, np.nan]), np.float64([[1.0, 1.5], [2.0, 3.0]]),
             np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::-1])

    @cuda.jit(device=True)
    def spread(a):
        return a.max() - np.min(a)

    @cuda.jit
    def k(out):
        i = 0
        for arr in literal_unroll(cases):
            out[i, 0] = np.all(arr)
            out[i, 1] = np.sum(arr)
            out[i, 2] = spread(arr)
            out[i, 3] = np.argmax(arr)
            i += 1

    out = np.full((3, 4), -7.0)
    k[1, 1](out)
    want = [[np.all(c), np.sum(c), c.max() - np.min(c), np.argmax(c)] for c in cases]
    np.testing.assert_array_equal(out, want)
    ptx = k.inspect_ptx()
    assert ptx and all(".entry" in p for p in ptx.values())
    for fn, a in ((float_reductions, np.zeros((2, 3))), (int_reductions, np.zeros(3, np.uint8)),
                  (complex_reductions, np.zeros(3, np.complex64))):
        kern = cuda.jit(fn)
        outs = ([np.zeros(4, np.complex128)] if fn is complex_reductions else []) + \
            [np.zeros(23), np.zeros(18, np.int64)]
        kern[1, 1](*outs, a)
        assert all(".entry" in p for p in kern.inspect_ptx().values())


def nan_and_selection_reductions(f, i, a):
    f[0] = np.nanvar(a)
    f[1] = np.nanstd(a)
    f[2] = np.nanvar(a, ddof=1)
    f[3] = np.nanstd(a, ddof=1)
    f[4] = np.median(a)
    f[5] = np.nanmedian(a)
    i[0] = np.count_nonzero(a)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
@pytest.mark.parametrize("kind", ["random", "edges", "nan", "allnan", "zeros", "ties"])
def test_nanvar_median_count_nonzero_match_numpy(dtype, kind):
    for shape in [(7,), (8,), (6, 9), (0,), (1,)]:
        if np.dtype(dtype).kind == "i":
            base = RNG.integers(-5, 6, shape).astype(dtype)
            if kind == "zeros":
                base[...] = 0
        elif kind == "ties":  # many equal values: the rank search must not skip them
            base = RNG.choice([-1.5, 0.0, 2.0, 2.0], shape).astype(dtype)
        else:
            base = _float_values(dtype, shape, kind) if base_ok(shape) else np.zeros(shape, dtype)
        for a in _layouts(base):
            f, i = np.full(6, -7.0), np.full(1, -7, np.int64)
            _, (gf, gi), (wf, wi) = _run(nan_and_selection_reductions, a, f, i)
            np.testing.assert_array_equal(gi, wi)
            np.testing.assert_array_equal(gf, wf)
            # The sign of zeros too; not of NaN (the hardware's: x86 and CUDA differ), nor of
            # a zero median where -0.0 and 0.0 tie (NumPy's partition picks either).
            free = np.isnan(wf) | ((wf == 0) & (np.arange(6) >= 4))
            np.testing.assert_array_equal(np.signbit(gf) | free, np.signbit(wf) | free)


def base_ok(shape):
    return int(np.prod(shape)) >= 6  # _float_values places up to 6 edge values


def test_count_nonzero_of_bool_and_complex_arrays():
    def k(i, b, c):
        i[0] = np.count_nonzero(b)
        i[1] = np.count_nonzero(c)
        i[2] = np.count_nonzero(c[2]) + 10 * np.count_nonzero(b[0, 1])  # 0-d values

    b = np.array([[True, False], [True, True]])
    c = np.array([0j, -0.0 + 0j, 1j, complex(np.nan, 0), 0j])
    i, want = np.full(3, -7, np.int64), np.full(3, -7, np.int64)
    kern = cuda.jit(k)
    kern[1, 1](i, b.T, c[::-1])
    k(want, b.T, c[::-1])
    np.testing.assert_array_equal(i, want)
    assert ".entry" in next(iter(kern.inspect_ptx().values()))


def test_reduction_errors():
    def axis(a):
        return np.sum(a, axis=0)

    def median(a):
        return np.percentile(a, 50)

    def cmin(a):
        return np.min(a)

    def ddof(a, d):
        return np.var(a, ddof=d)

    with pytest.raises(CompileError, match=r"np.sum\(\): axis= is not supported"):
        translate(axis, (float64[:],))
    with pytest.raises(CompileError, match=r"np.percentile\(\) is not supported"):
        translate(median, (float64[:],))
    from numbacuda_ufunc import complex128
    with pytest.raises(CompileError, match=r"np.min\(\) of a complex array"):
        translate(cmin, (complex128[:],))
    with pytest.raises(CompileError, match="ddof must be a non-negative integer constant"):
        translate(ddof, (float64[:], int64))
