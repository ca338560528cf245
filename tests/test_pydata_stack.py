"""The PyData stack through NumPy's ufunc protocol: xarray (eager and Dask-backed
DataArray, Dataset), pandas (Series, DataFrame), pint and astropy quantities, with
vectorize ufuncs (targets cuda, emulated here, and cpu) and guvectorize gufuncs.

NumPy is the oracle: the same call with NumPy's own ufunc (``np.add``; the gufunc
``np.vecdot``; ``np.frompyfunc`` for a ufunc a library does not know by name) gives the
type, metadata and values or the error to expect. Our functions are named ``nu_*`` on
purpose: pandas and pint choose behaviour by the ufunc's ``__name__``
(test_pandas_chooses_by_name shows what a ufunc named ``add`` gets).
"""

import numpy as np
import pytest
from _protocol_cases import TARGETS, make_add, make_vdot, nu_add

from numbacuda_ufunc import vectorize

rng = np.random.default_rng(29)


def add(a, b):  # named as NumPy's: pandas dispatches it to Series.__add__
    return a - b


@pytest.fixture(scope="module", params=TARGETS)
def f(request):
    return make_add(request.param)


@pytest.fixture(scope="module", params=TARGETS)
def vdot(request):
    return make_vdot(request.param)


def _raised(call):
    """(exception type, message) of a call that must raise."""
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def _same_error(ours, theirs, our_ufunc, their_ufunc):
    t1, m1 = _raised(ours)
    t2, m2 = _raised(theirs)
    assert t1 is t2
    assert m1 == m2.replace(repr(their_ufunc), repr(our_ufunc))


# ---------------------------------------------------------------- xarray

@pytest.fixture(scope="module")
def xr():
    return pytest.importorskip("xarray")


def _data_array(xr, chunks=None):
    a = xr.DataArray(rng.standard_normal((4, 6)), dims=("x", "y"),
                     coords={"x": [10, 20, 30, 40], "y": np.arange(6) * 0.5},
                     attrs={"units": "m", "note": "kept"}, name="v")
    return a.chunk(chunks) if chunks else a


def test_xarray_dataarray_keeps_dims_coords_attrs(f, xr):
    a = _data_array(xr)
    b = a.isel(x=slice(1, 3)) * 2  # aligned by coordinates (inner join), as np.add does
    for call in (lambda u: u(a, 1.5), lambda u: u(2.0, a), lambda u: u(a, b),
                 lambda u: u(a, a.values), lambda u: u(a, 1.0, dtype=np.float64)):
        ours, theirs = call(f), call(np.add)
        assert isinstance(ours, xr.DataArray)
        xr.testing.assert_identical(ours, theirs)


def test_xarray_dask_backed_stays_lazy(f, xr):
    pytest.importorskip("dask.array")
    import dask.array as da

    a = _data_array(xr, chunks={"x": 2, "y": 3})
    ours, theirs = f(a, 1.5), np.add(a, 1.5)
    assert isinstance(ours.data, da.Array)  # not computed
    xr.testing.assert_identical(ours.compute(), theirs.compute())
    both = f(a, a.isel(y=slice(0, 1)))
    assert isinstance(both.data, da.Array)
    xr.testing.assert_identical(both.compute(), np.add(a, a.isel(y=slice(0, 1))).compute())


def test_xarray_dataset(f, xr):
    ds = xr.Dataset({"t": _data_array(xr), "p": ("x", np.arange(4.0))},
                    attrs={"title": "kept"})
    ours, theirs = f(ds, 1.0), np.add(ds, 1.0)
    assert isinstance(ours, xr.Dataset)
    xr.testing.assert_identical(ours, theirs)


def test_xarray_methods_out_and_gufunc_raise_as_numpy(f, vdot, xr):
    a = _data_array(xr)
    _same_error(lambda: f.reduce(a), lambda: np.add.reduce(a), f, np.add)
    _same_error(lambda: f.accumulate(a), lambda: np.add.accumulate(a), f, np.add)
    _same_error(lambda: f(a.values, 1.0, out=a), lambda: np.add(a.values, 1.0, out=a), f, np.add)
    # A gufunc on xarray objects: xarray asks for xarray.apply_ufunc, as for NumPy's.
    _same_error(lambda: vdot(a, a), lambda: np.vecdot(a, a), vdot, np.vecdot)
    t, m = _raised(lambda: vdot(a, a))
    assert t is NotImplementedError and "apply_ufunc" in m


def test_xarray_apply_ufunc_with_gufunc(vdot, xr):
    """What xarray's message asks for works: apply_ufunc with core dimensions."""
    a = _data_array(xr)
    ours = xr.apply_ufunc(vdot, a, a, input_core_dims=[["y"], ["y"]])
    theirs = xr.apply_ufunc(np.vecdot, a, a, input_core_dims=[["y"], ["y"]])
    xr.testing.assert_allclose(ours, theirs, rtol=1e-14)
    assert ours.dims == ("x",)


# ---------------------------------------------------------------- pandas

@pytest.fixture(scope="module")
def pd():
    return pytest.importorskip("pandas")


def test_pandas_series_keeps_index_and_name(f, pd):
    s = pd.Series(rng.standard_normal(5), index=list("abcde"), name="s")
    t = pd.Series(rng.standard_normal(3), index=list("dcz"), name="s")
    for call in (lambda u: u(s, 1.0), lambda u: u(1.0, s), lambda u: u(s, s), lambda u: u(s, t),
                 lambda u: u(s, s.values), lambda u: u.accumulate(s)):
        ours, theirs = call(f), call(np.add)
        assert isinstance(ours, pd.Series)
        pd.testing.assert_series_equal(ours, theirs)
    assert f.reduce(s) == pytest.approx(np.add.reduce(s), rel=1e-14)
    ints = pd.Series(np.arange(4), index=[3, 1, 2, 0])
    pd.testing.assert_series_equal(f(ints, 2), np.add(ints, 2))


def test_pandas_out_where_dtype_round_trip(f, pd):
    """pandas calls the ufunc back with the keywords it was given (out= and where= through
    getattr(ufunc, "__call__")): results and outputs as with np.add."""
    s = pd.Series([1.0, 2.0, 3.0], index=list("abc"), name="s")
    for kw in ({}, {"where": np.array([True, False, True])}):
        o1, o2 = np.full(3, -7.0), np.full(3, -7.0)
        r1, r2 = f(s, 1.0, out=o1, **kw), np.add(s, 1.0, out=o2, **kw)
        assert type(r1) is type(r2)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(np.asarray(r1), np.asarray(r2))
    pd.testing.assert_series_equal(f(s, 1, dtype=np.float64), np.add(s, 1, dtype=np.float64))


def test_pandas_dataframe_keeps_index_and_columns(f, pd):
    df = pd.DataFrame(rng.standard_normal((3, 2)), index=["r", "s", "t"], columns=["a", "b"])
    for call in (lambda u: u(df, 1.0), lambda u: u(df, df), lambda u: u.accumulate(df)):
        ours, theirs = call(f), call(np.add)
        assert isinstance(ours, pd.DataFrame)
        pd.testing.assert_frame_equal(ours, theirs)


def test_pandas_gufunc(vdot, pd):
    s = pd.Series(np.arange(3.0))
    assert vdot(s, s) == np.vecdot(s, s) == 5.0


def test_pandas_chooses_by_name(pd):
    """pandas sends a ufunc named like one of NumPy's arithmetic ufuncs to its own operator:
    our ``add`` (which subtracts) is never called, as for a Numba DUFunc of that name."""
    sub_named_add = vectorize(["float64(float64, float64)"])(add)
    s = pd.Series([5.0, 7.0], index=["a", "b"])
    np.testing.assert_array_equal(sub_named_add(s.values, 1.0), [4.0, 6.0])
    pd.testing.assert_series_equal(sub_named_add(s, 1.0), s + 1.0)


# ---------------------------------------------------------------- units: pint, astropy

def test_pint_chooses_by_name():
    """pint applies NumPy's ufunc of the same name to the magnitudes: our ``add`` (which
    subtracts) is not called. The README's caveat."""
    pint = pytest.importorskip("pint")
    q = pint.UnitRegistry().Quantity(np.array([5.0, 7.0]), "m")
    sub_named_add = vectorize(["float64(float64, float64)"])(add)
    r = sub_named_add(q, q)
    assert str(r.units) == "meter"
    np.testing.assert_array_equal(r.magnitude, [10.0, 14.0])


def test_pint_never_returns_unitless(f, vdot):
    pint = pytest.importorskip("pint")
    ureg = pint.UnitRegistry()
    q = ureg.Quantity(np.arange(3.0), "m")
    unknown = np.frompyfunc(nu_add, 2, 1)  # a NumPy ufunc pint does not know by name
    _same_error(lambda: f(q, 1.0), lambda: unknown(q, 1.0), f, unknown)
    _same_error(lambda: f(q, q), lambda: unknown(q, q), f, unknown)
    _same_error(lambda: f.reduce(q), lambda: unknown.reduce(q), f, unknown)
    t, m = _raised(lambda: vdot(q, q))
    assert t is TypeError and "all returned NotImplemented" in m


def test_astropy_never_returns_unitless(f):
    u = pytest.importorskip("astropy.units")
    q = np.arange(3.0) * u.m
    unknown = np.frompyfunc(nu_add, 2, 1)
    t1, m1 = _raised(lambda: f(q, 1.0))
    t2, m2 = _raised(lambda: unknown(q, 1.0))
    assert t1 is t2 is TypeError
    assert m1.startswith("unknown ufunc nu_add") and m2.startswith("unknown ufunc")
    t1, _ = _raised(lambda: f.reduce(q))
    assert t1 is TypeError
