"""``f.ufunc``: a real ``numpy.ufunc`` over the host loops of a cpu/parallel vectorize ufunc
(Numba's DUFunc keeps one too), so pandas' fast path and ``isinstance(x, np.ufunc)`` checks
take it. The oracle is our own ufunc's call and the Python function run element by
element; outputs are poisoned before each run so unwritten elements show.
"""

import gc
import math
import warnings

import numpy as np
import pytest

from numbacuda_ufunc import vectorize

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]


def mix(a, b):
    return a * b + a


def _edge_values(dt):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [info.min, info.max, 0, 1, info.max // 3, info.min // 2 + 1]
        return np.array(vals + [3, 7, 11, 2], dtype=dt)
    finfo = np.finfo(dt.char.lower() if dt.kind == "c" else dt)
    real = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, finfo.max, finfo.tiny, 3.0],
                    dtype=finfo.dtype)
    if dt.kind == "c":
        with np.errstate(invalid="ignore"):  # 1j * inf
            return (real + 1j * real[::-1]).astype(dt)
    return real


def _oracle(pyfunc, out_dtype, *arrays):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = np.broadcast_arrays(*arrays)
        return np.array([pyfunc(*(a.flat[i] for a in b)) for i in range(b[0].size)],
                        dtype=out_dtype).reshape(b[0].shape)


def _poisoned(shape, dt):
    dt = np.dtype(dt)
    if dt.kind in "fc":
        return np.full(shape, np.nan, dt)
    return np.full(shape, np.iinfo(dt).max // 2 + 5, dt)


def _assert_same(got, want):
    assert got.dtype == want.dtype
    # Bit-exact: the same loop code on the same values (NaN == NaN, -0.0 != 0.0 by sign).
    np.testing.assert_array_equal(got, want)
    if want.dtype.kind == "f":  # the sign of zeros (a NaN's sign bit carries no meaning)
        keep = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[keep]), np.signbit(want[keep]))


@pytest.fixture(scope="module", params=["cpu", "parallel"])
def target(request):
    return request.param


@pytest.mark.parametrize("dt", INTS + FLOATS + COMPLEX)
def test_numpy_ufunc_matches_ours_and_python_per_dtype(dt, target):
    f = vectorize([f"{dt}({dt}, {dt})"], target=target)(mix)
    u = f.ufunc
    assert isinstance(u, np.ufunc) and u.nin == 2 and u.nout == 1 and u.ntypes == 1
    assert u.__name__ == "mix"
    x = _edge_values(dt)
    y = x[::-1].copy()
    out = _poisoned(x.shape, dt)
    with np.errstate(all="ignore"):
        got = u(x, y, out=out)
        ours = f(x, y)
    assert got is out
    _assert_same(got, ours)
    _assert_same(got, _oracle(mix, dt, x, y))


def test_numpy_ufunc_bool_and_mixed_types(target):
    f = vectorize(["bool(bool, bool)", "float64(int32, float32)"], target=target)(
        lambda a, b: a * b)
    # Two loops, NumPy's type strings
    assert f.ufunc.types == ["??->?", "if->d"]
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    np.testing.assert_array_equal(f.ufunc(a, b), a & b)
    i = np.array([1, -2, 2**31 - 1], np.int32)
    g = np.array([0.5, np.inf, -0.0], np.float32)
    _assert_same(f.ufunc(i, g), f(i, g))


def test_numpy_ufunc_broadcasting_strides_and_scalars(target):
    f = vectorize(["float64(float64, float64)"], target=target)(mix)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 1, 8))
    y = rng.standard_normal((3, 1))
    _assert_same(f.ufunc(x, y), f(x, y))
    _assert_same(f.ufunc(x, y), _oracle(mix, np.float64, x, y))
    z = rng.standard_normal((6, 40))
    view = z[::-2, 3::3]                      # negative and non-unit strides
    _assert_same(f.ufunc(view, 2.5), f(view, 2.5))
    out = np.full((40, 6), np.nan).T          # Fortran-ordered output
    f.ufunc(z, z[0], out=out)
    _assert_same(out, f(z, z[0]))
    assert np.isscalar(f.ufunc(2.0, 3.0)) and f.ufunc(2.0, 3.0) == 8.0


def test_numpy_ufunc_large_parallel_call_is_complete():
    # Above 4 * 4096 elements the parallel target splits the loop over the thread pool.
    f = vectorize(["float32(float32, float32)"], target="parallel")(mix)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(200_003).astype(np.float32)
    out = np.full_like(x, np.nan)
    f.ufunc(x, x[::-1], out=out)
    _assert_same(out, f(x, x[::-1]))


def test_numpy_ufunc_loop_choice_is_numpys():
    # NumPy's choice among the loops: an exact match of the arrays' dtypes, else the first
    # loop they cast to safely, as ours. A Python scalar differs: NumPy's search for legacy
    # loops counts a Python float as float64, where ours (NEP 50) lets it take the array's
    # float32 loop.
    f = vectorize(["float64(float64, float64)", "float32(float32, float32)",
                   "int64(int64, int64)"], target="cpu")(mix)
    x = np.array([1.5, 2.0], np.float32)
    assert f(x, x).dtype == f.ufunc(x, x).dtype == np.float32
    i = np.array([3, -4], np.int16)
    assert f(i, i).dtype == f.ufunc(i, i).dtype == np.float64    # first safe loop: dd->d
    assert f(x, 2.0).dtype == np.float32
    assert f.ufunc(x, 2.0).dtype == np.float64
    np.testing.assert_array_equal(f.ufunc(x, 2.0), mix(x.astype(np.float64), 2.0))
    with pytest.raises(TypeError, match="mix"):
        f.ufunc(np.array(["a"]), np.array(["b"]))  # NumPy's UFuncTypeError: no loop


def test_numpy_ufunc_identity_and_methods():
    add = vectorize(["int64(int64, int64)", "float64(float64, float64)"], identity=0,
                    target="cpu")(lambda a, b: a + b)
    assert add.ufunc.identity == 0
    x = np.arange(10, dtype=np.int64)
    assert add.ufunc.reduce(x) == 45
    np.testing.assert_array_equal(add.ufunc.accumulate(x), np.cumsum(x))
    np.testing.assert_array_equal(add.ufunc.outer(x[:3], x[:2]), np.add.outer(x[:3], x[:2]))
    assert add.ufunc.reduce(np.array([], np.float64)) == 0.0
    # reduce and accumulate feed the output back as an input (shifted, or with stride 0):
    # each element must see the one written before it, on both targets and any layout.
    padd = vectorize(["float64(float64, float64)"], identity=0, target="parallel")(lambda a, b: a + b)
    m = np.random.default_rng(5).integers(-9, 9, (7, 30000)).astype(np.float64)
    for u in (add.ufunc, padd.ufunc):
        np.testing.assert_array_equal(u.accumulate(m, axis=1), np.cumsum(m, axis=1))
        np.testing.assert_array_equal(u.accumulate(m, axis=0), np.cumsum(m, axis=0))
        np.testing.assert_array_equal(u.reduce(m, axis=1), m.sum(axis=1))
        np.testing.assert_array_equal(u.reduce(m[:, ::-3], axis=None), m[:, ::-3].sum())
        np.testing.assert_array_equal(u.reduceat(m[0], [0, 5, 100]), np.add.reduceat(m[0], [0, 5, 100]))
    plain = vectorize(["float64(float64, float64)"], target="cpu")(mix)
    assert plain.ufunc.identity is None
    reorder = vectorize(["float64(float64, float64)"], identity="reorderable",
                        target="cpu")(lambda a, b: max(a, b))
    assert reorder.ufunc.identity is None
    assert reorder.ufunc.reduce(np.array([3.0, 9.0, 1.0])) == 9.0


def test_numpy_ufunc_of_lazy_ufunc_grows_with_its_loops():
    f = vectorize(target="cpu")(mix)
    with pytest.raises(AttributeError, match=r"mix\.ufunc: the lazy ufunc 'mix' has no loop yet"):
        f.ufunc  # noqa: B018
    assert getattr(f, "ufunc", None) is None
    x = np.array([1.0, -0.0, np.nan])
    f(x, x)
    first = f.ufunc
    assert first is f.ufunc and first.types == ["dd->d"]
    f(np.array([2, 3], np.int32), np.array([4, 5], np.int32))
    second = f.ufunc
    assert second is not first and second.types == ["dd->d", "ii->i"]
    _assert_same(second(x, x), f(x, x))
    np.testing.assert_array_equal(first(x, x), second(x, x))  # the old one still works


def test_numpy_ufunc_outlives_its_vectorize_ufunc():
    u = vectorize(["float64(float64, float64)"], target="cpu")(mix).ufunc
    gc.collect()
    x = np.linspace(-3, 3, 50)
    np.testing.assert_array_equal(u(x, x), x * x + x)


def test_numpy_ufunc_is_unavailable_for_the_cuda_target():
    f = vectorize(["float64(float64, float64)"], target="cuda")(mix)
    with pytest.raises(AttributeError, match=r"mix\.ufunc: .* targets 'cpu' and 'parallel' only "
                                             r"\(got target 'cuda'\)"):
        f.ufunc  # noqa: B018
    assert getattr(f, "ufunc", None) is None


def test_numpy_ufunc_math_function_edge_values():
    def damp(v):
        return math.exp(-v * v) * math.copysign(1.0, v) + math.sqrt(abs(v))

    f = vectorize(["float64(float64)", "float32(float32)"], target="cpu")(damp)
    for dt in (np.float64, np.float32):
        x = _edge_values(dt)
        with np.errstate(all="ignore"):
            got = f.ufunc(x)
            _assert_same(got, f(x))
        assert got.dtype == dt
        # Python's math runs in float64; the float32 loop rounds each step (1 ulp apart)
        want = _oracle(damp, dt, x)
        np.testing.assert_allclose(got, want, rtol=2 * np.finfo(dt).eps, atol=0)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))


def test_pandas_series_apply_and_map_take_the_numpy_ufunc():
    pd = pytest.importorskip("pandas")
    f = vectorize(["float64(float64, float64)"], target="cpu")(mix)
    sq = vectorize(["float64(float64)", "int64(int64)"], target="cpu")(lambda v: v * v - 1)
    rng = np.random.default_rng(11)
    s = pd.Series(rng.standard_normal(1000), index=pd.RangeIndex(5, 1005) * 3, name="v")
    fast = s.apply(sq.ufunc)
    slow = s.apply(sq)                    # our ufunc object: pandas calls it per element
    assert isinstance(fast, pd.Series) and fast.index.equals(s.index) and fast.name == "v"
    np.testing.assert_array_equal(fast.to_numpy(), sq(s.to_numpy()))
    np.testing.assert_array_equal(slow.to_numpy(), fast.to_numpy())
    mapped = s.map(sq.ufunc)
    assert mapped.index.equals(s.index)
    np.testing.assert_array_equal(mapped.to_numpy(), fast.to_numpy())
    # Binary: NumPy's __array_ufunc__ protocol hands pandas the np.ufunc; index aligned.
    both = f.ufunc(s, 2.0)
    assert isinstance(both, pd.Series) and both.index.equals(s.index)
    np.testing.assert_array_equal(both.to_numpy(), f(s.to_numpy(), 2.0))
    ints = pd.Series(np.arange(-3, 4), index=list("abcdefg"))
    got = ints.apply(sq.ufunc)
    assert got.dtype == np.int64 and list(got.index) == list("abcdefg")
    np.testing.assert_array_equal(got.to_numpy(), np.arange(-3, 4) ** 2 - 1)
