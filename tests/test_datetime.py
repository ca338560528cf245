"""datetime64[unit] and timedelta64[unit]: types, kernel arguments (arrays and scalars),
vectorize/guvectorize loops (cuda target on the host backend, and the host targets),
device arrays, and NumPy's arithmetic with NaT, compared with NumPy itself."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda, from_dtype, guvectorize, typeof, vectorize
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.types import Array, NPDatetime, NPTimedelta

NAT = np.iinfo(np.int64).min
RNG = np.random.default_rng(2024)


def _values(n, dtype, lo=-(10**9), hi=10**9, extremes=()):
    """Random counts of ``dtype`` with NaT and the given extreme counts mixed in."""
    raw = RNG.integers(lo, hi, n, dtype=np.int64)
    raw[: len(extremes)] = extremes
    raw[RNG.integers(0, n, n // 8)] = NAT
    return raw.view(dtype)


def _same(got, want):
    """Equal as NumPy values, NaT where NumPy has NaT (bit patterns compared)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind in "Mm":
        np.testing.assert_array_equal(got.view(np.int64), want.view(np.int64))
    else:
        np.testing.assert_array_equal(got, want)


# ---- types ------------------------------------------------------------------------------

def test_datetime_types_from_dtype_and_typeof():
    d, m = from_dtype(np.dtype("datetime64[D]")), from_dtype(np.dtype("m8[us]"))
    assert d == NPDatetime("D") and d.name == "datetime64[D]" and d.bitwidth == 64
    assert m == NPTimedelta("us") and m.name == "timedelta64[us]"
    assert d != NPTimedelta("D")
    assert typeof(np.datetime64("2005-02-01")) == NPDatetime("D")
    assert typeof(np.timedelta64(3, "h")) == NPTimedelta("h")
    assert typeof(np.zeros(3, "M8[s]")) == Array(NPDatetime("s"), 1, "C")
    assert NPDatetime("D")(5) == np.datetime64(5, "D")


@pytest.mark.parametrize("dtype", ["M8", "m8", "M8[2D]", ">M8[D]"])
def test_datetime_types_refused(dtype):
    with pytest.raises(TypeError, match="from_dtype"):
        from_dtype(np.dtype(dtype))


def test_datetime_type_bad_unit():
    with pytest.raises(TypeError, match="unit must be one of"):
        NPDatetime("days")


# ---- kernels -----------------------------------------------------------------------------

@cuda.jit
def date_diff(start, end, delta):
    for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
        delta[i] = end[i] - start[i]


def test_datetime_kernel_difference_with_nat_and_wraparound():
    big = 2**62 + 12345
    a = _values(200, "M8[D]", extremes=(big, -big, 5, NAT, 0))
    b = _values(200, "M8[D]", extremes=(-big, big, -(2**63 - 1), 4, NAT))
    out = np.full(200, 77, "m8[D]")
    date_diff[2, 32](a, b, out)
    # NumPy before 2.5 wrapped around as the kernel does; 2.5 raises OverflowError on the
    # wrap (a kernel cannot), so the oracle wraps int64 itself, NaT where either is NaT.
    want = (b.view(np.int64) - a.view(np.int64)).view("m8[D]")
    want[np.isnat(a) | np.isnat(b)] = np.timedelta64("NaT")
    _same(out, want)
    ptx = date_diff.inspect_asm(signature=(typeof(a), typeof(b), typeof(out)))
    assert ".entry" in ptx


def test_datetime_kernel_scalar_arguments():
    @cuda.jit
    def match(dates, target, delta, matches, shifted):
        for i in range(cuda.grid(1), matches.size, cuda.gridsize(1)):
            matches[i] = dates[i] == target
            shifted[i] = dates[i] - delta

    dates = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    dates[7] = np.datetime64("NaT")
    matches = np.zeros(dates.size, np.bool_)
    shifted = np.zeros(dates.size, "M8[D]")
    match[1, 32](dates, dates[5], dates[6] - dates[5], matches, shifted)
    assert list(np.nonzero(matches)[0]) == [5]
    _same(shifted, dates - (dates[6] - dates[5]))
    match[1, 32](dates, np.datetime64("NaT", "D"), np.timedelta64("NaT", "D"), matches, shifted)
    assert not matches.any()  # NaT equals nothing, NaT included
    assert np.isnat(shifted).all()


@cuda.jit
def every_operation(a, b, t, u, k, f, tds, dts, floats, flags):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        tds[0, i] = b[i] - a[i]          # datetime - datetime
        dts[0, i] = a[i] + t[i]          # datetime + timedelta
        dts[1, i] = t[i] + a[i]
        dts[2, i] = a[i] - t[i]
        dts[3, i] = a[i] + k[i]          # an integer counts the datetime's unit
        tds[1, i] = t[i] + u[i]          # timedelta +- timedelta, mixed units (h)
        tds[2, i] = t[i] - u[i]
        tds[3, i] = t[i] * k[i]
        tds[4, i] = k[i] * t[i]
        tds[5, i] = t[i] * f[i]
        tds[6, i] = t[i] / k[i]
        tds[7, i] = -t[i]
        tds[8, i] = t[i] * 3 + u[i]
        floats[i] = t[i] / u[i]
        flags[0, i] = a[i] == b[i]
        flags[1, i] = a[i] != b[i]
        flags[2, i] = a[i] < b[i]
        flags[3, i] = a[i] <= b[i]
        flags[4, i] = a[i] > b[i]
        flags[5, i] = a[i] >= b[i]
        flags[6, i] = t[i] < u[i]
        flags[7, i] = t[i] > 0
        flags[8, i] = t[i] != u[i]


def test_datetime_every_operation_against_numpy():
    n = 300
    a = _values(n, "M8[D]", -(10**6), 10**6)
    b = _values(n, "M8[D]", -(10**6), 10**6)
    b[10:20] = a[10:20]  # equal pairs for the comparisons
    t = _values(n, "m8[D]", -(10**6), 10**6)
    u = _values(n, "m8[h]", -(10**7), 10**7)
    u[30:40] = t[30:40].astype("m8[h]")  # equal across units: 24 h == 1 D
    k = RNG.integers(-50, 50, n, dtype=np.int64)
    k[::17] = 0
    f = RNG.standard_normal(n) * 100
    f[::23] = np.nan
    f[5] = 1e300  # out of range: NumPy's conversion gives NaT here
    tds = np.full((9, n), 5, "m8[h]")
    dts = np.full((4, n), 5, "M8[D]")
    floats = np.full(n, -1.0)
    flags = np.zeros((9, n), np.bool_)
    every_operation[2, 64](a, b, t, u, k, f, tds, dts, floats, flags)

    with np.errstate(all="ignore"):
        want_tds = [b - a, t + u, t - u, t * k, k * t, t * f, t / k, -t, t * 3 + u]
        want_dts = [a + t, t + a, a - t, a + k]
        want_floats = t / u
        want_flags = [a == b, a != b, a < b, a <= b, a > b, a >= b, t < u, t > 0, t != u]
    for row, want in enumerate(want_tds):  # stored into timedelta64[h]: a finer unit
        _same(tds[row], want.astype("m8[h]"))
    for row, want in enumerate(want_dts):
        _same(dts[row], want)
    np.testing.assert_array_equal(floats, want_floats)
    for row, want in enumerate(want_flags):
        _same(flags[row], want)
    # the planted equal pairs (NaT compares unequal, even to NaT)
    np.testing.assert_array_equal(flags[0, 10:20], ~np.isnat(a[10:20]))
    np.testing.assert_array_equal(flags[8, 30:40], np.isnat(t[30:40]))


def test_datetime_operations_compile_with_nvrtc():
    sig = (Array(NPDatetime("D"), 1), Array(NPDatetime("D"), 1), Array(NPTimedelta("D"), 1),
           Array(NPTimedelta("h"), 1), Array(from_dtype(np.int64), 1),
           Array(from_dtype(np.float64), 1), Array(NPTimedelta("h"), 2),
           Array(NPDatetime("D"), 2), Array(from_dtype(np.float64), 1),
           Array(from_dtype(np.bool_), 2))
    ptx, _ = cuda.compile_ptx(every_operation.py_func, sig)
    assert ".entry" in ptx


def test_datetime_mixed_units_follow_numpy():
    @cuda.jit
    def mixed(a, b, out, flags):
        for i in range(a.size):
            out[i] = a[i] - b[i]        # datetime64[D] - datetime64[s] -> timedelta64[s]
            flags[i] = a[i] == b[i]

    a = _values(50, "M8[D]", -(10**5), 10**5)
    b = (a.astype("M8[s]") + RNG.integers(-2, 2, 50).astype("m8[s]"))
    b[3] = np.datetime64("NaT")
    out = np.zeros(50, "m8[s]")
    flags = np.zeros(50, np.bool_)
    mixed[1, 1](a, b, out, flags)
    _same(out, a - b)
    _same(flags, a == b)


def test_datetime_calendar_and_linear_units_refused():
    def years_minus_days(a, b, out):
        out[0] = a[0] - b[0]

    sig = (Array(NPDatetime("Y"), 1), Array(NPDatetime("D"), 1), Array(NPTimedelta("D"), 1))
    with pytest.raises(CompileError, match=r"units \[Y\] and \[D\]"):
        cuda.compile_ptx(years_minus_days, sig)


@pytest.mark.parametrize("body, sig, match", [
    ("out[0] = a[0] + a[0]", ("M8[D]", "M8[D]"), "operator \\+ is not supported"),
    ("out[0] = a[0] * a[0]", ("m8[D]", "m8[D]"), "operator \\* is not supported"),
    ("out[0] = a[0]", ("m8[s]", "m8[D]"), "coarser unit"),
    ("out[0] = a[0]", ("M8[D]", "m8[D]"), "cannot convert datetime64\\[D\\] to timedelta64"),
    ("out[0] = a[0] < 1", ("M8[D]", "b1"), "cannot compare datetime64\\[D\\]"),
    ("out[0] = a[0]", ("M8[D]", "f8"), "cannot convert datetime64\\[D\\] to float64"),
])
def test_datetime_unsupported_operations(body, sig, match):
    ns = {}
    exec(f"def bad(a, out):\n    {body}\n", ns)
    types = tuple(Array(from_dtype(np.dtype(s)), 1) for s in sig)
    with pytest.raises(CompileError, match=match):
        cuda.compile_ptx(ns["bad"], types)


# ---- ufuncs and gufuncs --------------------------------------------------------------------

@pytest.mark.parametrize("target", ["cuda", "cpu", "parallel"])
def test_datetime_vectorize(target):
    datetime_t = from_dtype(np.dtype("datetime64[D]"))

    @vectorize([(datetime_t, datetime_t)], target=target)
    def timediff(start, end):
        return end - start

    a = _values(500, "M8[D]")
    b = _values(500, "M8[D]")
    got = timediff(a, b)
    _same(got, b - a)
    assert timediff.types == ["MM->m"]


def test_datetime_vectorize_on_device_arrays_and_scalars():
    day, days = NPDatetime("D"), NPTimedelta("D")
    add_days = vectorize([day(day, days)], target="cuda")(lambda d, t: d + t)
    a = _values(64, "M8[D]")
    t = _values(64, "m8[D]")
    got = add_days(cuda.to_device(a), cuda.to_device(t))
    _same(got.copy_to_host(), a + t)
    _same(add_days(a, np.timedelta64(3, "D")), a + np.timedelta64(3, "D"))


@pytest.mark.parametrize("target", ["cuda", "cpu"])
def test_datetime_guvectorize(target):
    datetime_t = from_dtype(np.dtype("datetime64[D]"))
    timedelta_t = from_dtype(np.dtype("timedelta64[D]"))

    @guvectorize([(datetime_t, datetime_t, timedelta_t[:])], "(),()->()", target=target)
    def timediff(start, end, out):
        out[0] = end - start

    @guvectorize([(datetime_t[:], timedelta_t[:], datetime_t[:])], "(n),(n)->(n)",
                 target=target)
    def shift(d, t, out):
        for i in range(d.shape[0]):
            out[i] = d[i] + t[i] if t[i] > 0 else d[i]

    a = _values(300, "M8[D]")
    b = _values(300, "M8[D]")
    _same(timediff(a, b), b - a)
    t = _values(300, "m8[D]").reshape(3, 100)
    d = a.reshape(3, 100)
    want = np.where(t > np.timedelta64(0, "D"), d + t, d)
    _same(shift(d, t), want)


# ---- device arrays ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["M8[D]", "m8[ns]"])
def test_datetime_device_arrays(dtype):
    arr = _values(40, dtype)
    d = cuda.to_device(arr)
    assert d.dtype == np.dtype(dtype)
    _same(d.copy_to_host(), arr)
    viewed = d.view(np.int64)
    np.testing.assert_array_equal(viewed.copy_to_host(), arr.view(np.int64))
    assert viewed.gpu_data == d.gpu_data
    assert d.__cuda_array_interface__["typestr"] == np.dtype(dtype).str
    empty = cuda.device_array(5, dtype=dtype)
    assert empty.dtype == np.dtype(dtype)
    assert typeof(d) == Array(from_dtype(np.dtype(dtype)), 1, "C")
