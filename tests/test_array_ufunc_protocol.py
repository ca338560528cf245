"""NumPy's ufunc protocol (NEP 13) and NumPy's result wrapping for vectorize ufuncs, their
methods and guvectorize gufuncs: overriding objects, the ``__array_ufunc__ = None``
opt-out, ndarray subclasses, masked arrays, array-likes with ``__array_wrap__``, Dask
methods, and what the engine takes itself (never deferred).

NumPy is the oracle: each case runs NumPy's own ufunc (``np.add``, the gufunc
``np.vecdot``) on the same arguments and compares types, values and errors. The xarray,
pandas and units-library cases are in tests/test_pydata_stack.py.
"""

import re
import warnings

import numpy as np
import pytest
from _protocol_cases import TARGETS, make_add, make_vdot, nu_add

from numbacuda_ufunc import cuda, vectorize

rng = np.random.default_rng(20261127)


def nu_neg(a):
    return -a


@pytest.fixture(scope="module", params=TARGETS)
def add(request):
    return make_add(request.param)


@pytest.fixture(scope="module", params=TARGETS)
def vdot(request):
    return make_vdot(request.param)


def _calls(target, ufunc):
    """Each call form of NumPy's protocol tests, made on `ufunc` with `target` (an
    object whose __array_ufunc__ records) among the arguments."""
    o = np.zeros(3)
    ufunc(target, 1.5)
    ufunc(2, target)
    ufunc(target, 1.5, o)
    ufunc(np.ones(3), 1.5, out=target)
    ufunc(np.ones(3), 1.5, out=(target,))
    ufunc(np.ones(3), 1.5, out=o, where=target)
    ufunc(target, 1.5, dtype=np.float64)
    ufunc.reduce(target, axis=1)
    ufunc.reduce(target, axis=1, keepdims=True, out=o)
    ufunc.accumulate(target, axis=1)
    ufunc.reduceat(target, [0, 2], axis=1)
    ufunc.outer(target, np.ones(2))
    ufunc.at(target, [0, 1], 2.0)
    ufunc.reduce(np.ones((2, 3)), axis=1, out=target)
    ufunc.accumulate(np.ones(3), out=(target,))
    ufunc.at(np.zeros(3), [0, 1], target)
    ufunc.outer(np.ones(2), target)


class Recorder:
    """Records each __array_ufunc__ call as (method, inputs, kwargs) and answers with a
    marker."""

    def __init__(self):
        self.log = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        self.log.append((ufunc, method, inputs, kwargs))
        return "handled"


def _comparable(log, ufunc, me):
    """The log with our ufunc and the recorder itself replaced by markers, arrays by their
    values (so two logs compare with ==)."""
    def norm(x):
        if x is me:
            return "<recorder>"
        if isinstance(x, np.ndarray):
            return ("array", x.tolist())
        if isinstance(x, tuple):
            return tuple(norm(v) for v in x)
        return x
    return [(u is ufunc, method, norm(inputs), {k: norm(v) for k, v in kw.items()})
            for u, method, inputs, kw in log]


@pytest.mark.parametrize("target", TARGETS)
def test_override_arguments_as_numpy_passes_them(target):
    ours = vectorize(["float64(float64, float64)"], identity=0, target=target)(nu_add)
    mine, theirs = Recorder(), Recorder()
    _calls(mine, ours)
    _calls(theirs, np.add)
    assert len(mine.log) == len(theirs.log) == 17
    assert all(u is ours for u, *_ in mine.log)
    assert _comparable(mine.log, ours, mine) == _comparable(theirs.log, np.add, theirs)


def test_override_result_is_returned(add, vdot):
    r = Recorder()
    assert add(r, 1) == "handled"
    assert vdot(np.ones(3), r) == "handled"
    assert add.reduce(r) == "handled"
    assert r.log[1][1] == "__call__" and r.log[1][0] is vdot


def test_override_gufunc_arguments_as_numpy_passes_them(vdot):
    mine, theirs = Recorder(), Recorder()
    o = np.zeros(())
    for rec, g in ((mine, vdot), (theirs, np.vecdot)):
        g(rec, np.ones(3))
        g(np.ones(3), np.ones(3), out=rec)
        g(np.ones(3), rec, o)
    assert _comparable(mine.log, vdot, mine) == _comparable(theirs.log, np.vecdot, theirs)


class Declines:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        type(self).asked.append(type(self).__name__)
        return NotImplemented

    asked = []


class DeclinesToo(Declines):
    pass


class Other:
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        Declines.asked.append("Other")
        return NotImplemented


def _not_implemented_message(call):
    with pytest.raises(TypeError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize("args", [
    (Declines(), DeclinesToo()), (DeclinesToo(), Declines()), (Other(), DeclinesToo()),
    (Declines(), Other()), (1.0, Declines()), (Declines(), Declines()),
])
def test_all_not_implemented_raises_as_numpy(add, args):
    """Subclasses are asked before their superclasses, then left to right; a type is asked
    once; all NotImplemented -> NumPy's TypeError naming the types."""
    Declines.asked.clear()
    theirs = _not_implemented_message(lambda: np.add(*args))
    order = list(Declines.asked)
    Declines.asked.clear()
    mine = _not_implemented_message(lambda: add(*args))
    assert Declines.asked == order
    assert mine == theirs.replace(repr(np.add), repr(add))
    assert "operand type(s) all returned NotImplemented from __array_ufunc__(" in mine


def test_all_not_implemented_methods_and_gufunc(add, vdot):
    d = Declines()
    for ours, theirs in [
        (lambda: add.reduce(d), lambda: np.add.reduce(d)),
        (lambda: add.accumulate(d, axis=1), lambda: np.add.accumulate(d, axis=1)),
        (lambda: add.outer(d, 1.0), lambda: np.add.outer(d, 1.0)),
        (lambda: add.at(d, [0], 1.0), lambda: np.add.at(d, [0], 1.0)),
        (lambda: add(np.ones(2), 1.0, out=d), lambda: np.add(np.ones(2), 1.0, out=d)),
    ]:
        assert _not_implemented_message(ours) == \
            _not_implemented_message(theirs).replace(repr(np.add), repr(add))
    msg = _not_implemented_message(lambda: vdot(d, np.ones(3)))
    want = _not_implemented_message(lambda: np.vecdot(d, np.ones(3)))
    assert msg == want.replace(repr(np.vecdot), repr(vdot))


class OptsOut:
    __array_ufunc__ = None


def test_opt_out_raises_as_numpy(add, vdot):
    n = OptsOut()
    want = _not_implemented_message(lambda: np.add(np.ones(3), n))
    assert want == "operand 'OptsOut' does not support ufuncs (__array_ufunc__=None)"
    for call in (lambda: add(np.ones(3), n), lambda: add(n, 1), lambda: add.reduce(n),
                 lambda: add.accumulate(n), lambda: add.outer(1.0, n),
                 lambda: add(np.ones(3), 1.0, out=n), lambda: add(Recorder(), n),
                 lambda: vdot(np.ones(3), n), lambda: add(np.ones(3), 1.0, dtype=float, out=n)):
        with pytest.raises(TypeError, match=re.escape(want)):
            call()


# ---------------------------------------------------------------- ndarray subclasses

class Sub(np.ndarray):
    pass


class Prior(np.ndarray):
    __array_priority__ = 5.0


class Contexts(np.ndarray):
    """Records the __array_wrap__ calls NumPy makes."""

    seen = []

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        type(self).seen.append((type(arr), None if context is None else (context[0], context[2]),
                                return_scalar))
        return super().__array_wrap__(arr, context, return_scalar)


def _same(ours, theirs):
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_subclass_results_as_numpy(add):
    x = rng.standard_normal(6).reshape(2, 3)
    s, p = x.view(Sub), (x * 2).view(Prior)
    for call in (lambda f: f(s, 1.5), lambda f: f(x, s), lambda f: f(2, s), lambda f: f(s, p),
                 lambda f: f(p, s), lambda f: f(s, s), lambda f: f([1.0, 2.0, 3.0], s),
                 lambda f: f(s[0, 0:1].reshape(()), 1.0), lambda f: f(s, 1.0, dtype=np.float64),
                 lambda f: f.reduce(s), lambda f: f.reduce(s, axis=1),
                 lambda f: f.reduce(s, axis=None), lambda f: f.reduce(s, keepdims=True),
                 lambda f: f.accumulate(s, axis=1), lambda f: f.outer(s[0], s[1]),
                 lambda f: f.outer(x[0], s[1]), lambda f: f.reduceat(s, [0, 2], axis=1)):
        _same(call(add), call(np.add))


def test_call_attribute_takes_the_same_paths(add, vdot):
    """getattr(ufunc, "__call__") (pandas calls it so) hands off as a plain call does."""
    s = np.arange(3.0).view(Sub)
    _same(add.__call__(s, 1.0), np.add(s, 1.0))
    assert add.__call__(Recorder(), 1.0) == "handled"
    assert vdot.__call__(np.ones(3), Recorder()) == "handled"
    _same(vdot.__call__(s, s), np.vecdot(s, s))


def test_subclass_out_is_returned(add):
    x = np.arange(3.0)
    for out_kind in (np.ndarray, Sub):
        o1, o2 = np.full(3, np.nan).view(out_kind), np.full(3, np.nan).view(out_kind)
        r1, r2 = add(x.view(Sub), 1.0, out=o1), np.add(x.view(Sub), 1.0, out=o2)
        assert r1 is o1 and r2 is o2
        _same(o1, o2)
    o = np.full(3, np.nan).view(Sub)
    assert add(x, 1.0, out=o) is o
    np.testing.assert_array_equal(o, x + 1)


def test_method_out_subclass_is_returned(add):
    x = np.arange(6.0).reshape(2, 3)
    for call in (lambda f, o: f.reduce(x, axis=1, out=o),
                 lambda f, o: f.accumulate(x[0, :2], out=o),
                 lambda f, o: f.reduce(x.view(Sub), axis=1, out=o)):
        o1, o2 = np.full(2, np.nan).view(Sub), np.full(2, np.nan).view(Sub)
        assert call(add, o1) is o1 and call(np.add, o2) is o2
        _same(o1, o2)


def test_masked_out_as_numpy(add):
    x = np.ma.masked_array(np.ones(3), mask=[1, 0, 0])
    for out_mask in ([0, 1, 0], [0, 0, 0]):
        m1 = np.ma.masked_array(np.zeros(3), mask=out_mask)
        m2 = np.ma.masked_array(np.zeros(3), mask=out_mask)
        r1, r2 = add(x, 1.0, out=m1), np.add(x, 1.0, out=m2)
        assert r1 is m1 and r2 is m2
        _same_masked(m1, m2)
        m1 = np.ma.masked_array(np.zeros(2), mask=out_mask[:2])
        m2 = np.ma.masked_array(np.zeros(2), mask=out_mask[:2])
        assert add.reduce(np.ones((2, 3)), axis=1, out=m1) is m1
        np.add.reduce(np.ones((2, 3)), axis=1, out=m2)
        _same_masked(m1, m2)


def test_subclass_at_updates_in_place(add):
    a, b = np.arange(4.0).view(Sub), np.arange(4.0).view(Sub)
    assert add.at(a, [0, 0, 3], 1.0) is None
    np.add.at(b, [0, 0, 3], 1.0)
    _same(a, b)


def test_subclass_wrap_context_as_numpy(add, vdot):
    x = np.arange(3.0).view(Contexts)
    seen = {}
    for name, f, g in (("ours", add, vdot), ("numpy", np.add, np.vecdot)):
        Contexts.seen.clear()
        f(x, 1.0)
        f.reduce(x)
        f.accumulate(x)
        g(x, x)
        seen[name] = [(t, c if c is None else (c[0] in (f, g), c[1]), rs)
                      for t, c, rs in Contexts.seen]
    assert seen["ours"] == seen["numpy"]


def test_gufunc_subclass_results_as_numpy(vdot):
    x = rng.standard_normal(6).reshape(2, 3)
    s = x.view(Sub)
    for call in (lambda g: g(s, x), lambda g: g(x, s), lambda g: g(s[0], s[1]),
                 lambda g: g(s, x, axes=[(1,), (1,), ()])):
        ours, theirs = call(vdot), call(np.vecdot)
        assert type(ours) is type(theirs)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-14)


# ---------------------------------------------------------------- masked arrays

def _same_masked(ours, theirs):
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    np.testing.assert_array_equal(np.ma.getmaskarray(ours), np.ma.getmaskarray(theirs))
    np.testing.assert_array_equal(np.ma.getdata(ours), np.ma.getdata(theirs))


def test_masked_array_mask_as_numpy(add):
    data = np.array([[1.0, -2.0, np.inf], [4.0, 0.0, -0.0]])
    m = np.ma.masked_array(data, mask=[[0, 1, 0], [1, 0, 0]])
    m2 = np.ma.masked_array(data * 3, mask=[[0, 0, 1], [0, 0, 0]])
    for call in (lambda f: f(m, 1.0), lambda f: f(m, m2), lambda f: f(data, m2),
                 lambda f: f(m, np.ma.masked_array([1.0, 2.0, 3.0], mask=[1, 0, 0])),
                 lambda f: f.reduce(m, axis=1), lambda f: f.accumulate(m, axis=0),
                 lambda f: f.outer(m[0], m2[1])):
        _same_masked(call(add), call(np.add))


def test_masked_array_gufunc_as_numpy(vdot):
    data = rng.standard_normal(6).reshape(2, 3)
    m = np.ma.masked_array(data, mask=[[0, 1, 0], [0, 0, 0]])
    ours, theirs = vdot(m, data), np.vecdot(m, data)
    assert type(ours) is type(theirs)
    np.testing.assert_array_equal(np.ma.getmaskarray(ours), np.ma.getmaskarray(theirs))
    np.testing.assert_allclose(np.ma.getdata(ours), np.ma.getdata(theirs), rtol=1e-14)


# ---------------------------------------------------------------- array-likes with __array_wrap__

class Wrapped:
    """A torch-like array-like: __array__ in, __array_wrap__ out (no __array_ufunc__)."""

    __array_priority__ = 1.0

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)

    def __array_wrap__(self, arr, context=None, return_scalar=False):
        return Wrapped(arr)


class OldWrap(Wrapped):
    """__array_wrap__ with the pre-NumPy-2 signature (torch's): NumPy still calls it, with
    a DeprecationWarning."""

    def __array_wrap__(self, arr):
        return OldWrap(arr)


@pytest.mark.parametrize("cls", [Wrapped, OldWrap])
def test_array_wrap_objects_as_numpy(add, cls):
    w = cls([1.0, 2.0, 3.0])
    for call in (lambda f: f(w, 1.0), lambda f: f(np.ones(3), w), lambda f: f.reduce(w),
                 lambda f: f.accumulate(w)):
        with warnings.catch_warnings(record=True) as ours_w:
            warnings.simplefilter("always")
            ours = call(add)
        with warnings.catch_warnings(record=True) as theirs_w:
            warnings.simplefilter("always")
            theirs = call(np.add)
        assert type(ours) is type(theirs) is cls
        np.testing.assert_array_equal(ours.a, theirs.a)
        assert [type(m.message) for m in ours_w] == [type(m.message) for m in theirs_w]


def test_torch_cpu_tensors_in_and_out(add):
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.float64)
    ours, theirs = add(t, 1.0), np.add(t, 1.0)
    assert type(ours) is type(theirs)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


# ---------------------------------------------------------------- what the engine takes itself

class MustNotBeAsked:
    """A __cuda_array_interface__ array (as CuPy's) with an __array_ufunc__ that fails the
    test if the engine defers to it: the engine takes such arrays itself."""

    def __init__(self, d):
        self.d = d

    @property
    def __cuda_array_interface__(self):
        return self.d.__cuda_array_interface__

    def __array_ufunc__(self, *args, **kwargs):
        raise AssertionError("the engine deferred to an array it takes itself")


def test_engine_arrays_are_never_deferred(monkeypatch):
    f = vectorize(["float64(float64, float64)"], identity=0)(nu_add)
    x = np.arange(3.0)

    def refuse(*args, **kwargs):
        raise AssertionError("a plain call went through the protocol path")

    from numbacuda_ufunc.interop import _protocol
    monkeypatch.setattr(_protocol, "call", refuse)
    monkeypatch.setattr(_protocol, "method", refuse)
    d = cuda.to_device(x)
    cai = MustNotBeAsked(cuda.to_device(x))
    np.testing.assert_array_equal(f(x, 1.0), x + 1)
    np.testing.assert_array_equal(f(x, np.float64(2)), x + 2)
    np.testing.assert_array_equal(f([0.0, 1.0, 2.0], x), x * 2)
    assert f(1.0, 2.0) == 3.0
    np.testing.assert_array_equal(f(d, 1.0).copy_to_host(), x + 1)
    np.testing.assert_array_equal(f(cai, d).copy_to_host(), x * 2)
    out = cuda.device_array(3)
    f(x, x, out=MustNotBeAsked(out))
    np.testing.assert_array_equal(out.copy_to_host(), x * 2)
    assert f.reduce(x) == 3.0 and f.reduce(d).copy_to_host() == 3.0
    np.testing.assert_array_equal(f.accumulate(x), np.add.accumulate(x))
    np.testing.assert_array_equal(f.outer(x, x), np.add.outer(x, x))
    np.testing.assert_array_equal(f(x, 1.0, dtype=np.float64), x + 1)


def test_ufunc_attributes_overriders_read(add, vdot):
    assert add.signature is None
    assert vdot.signature == "(n),(n)->()"
    assert (add.nin, add.nout, add.nargs, add.identity) == (2, 1, 3, 0)
    assert (vdot.nin, vdot.nout, vdot.nargs) == (2, 1, 3)
    assert add.ntypes == len(add.types) == 2 and add.types == ["dd->d", "ll->l"]
    assert add.__name__ == "nu_add" and vdot.__name__ == "nu_vdot"
    for m in ("reduce", "accumulate", "outer", "at", "reduceat"):
        assert callable(getattr(add, m))
    lazy = vectorize(nu_neg)
    assert lazy.signature is None and lazy.nin == 1 and lazy.nout == 1


def test_unary_ufunc_protocol(add):
    neg = vectorize(["float64(float64)"])(nu_neg)
    s = np.arange(3.0).view(Sub)
    _same(neg(s), np.negative(s))
    r = Recorder()
    assert neg(r) == "handled" and r.log[0][1] == "__call__"
    assert neg.reduce(r) == "handled" and r.log[1][1] == "reduce"
    assert neg.accumulate(r) == "handled" and r.log[2][1] == "accumulate"


# ---------------------------------------------------------------- Dask: methods stay lazy

@pytest.fixture(scope="module")
def dask_array():
    return pytest.importorskip("dask.array")


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_dask_accumulate_is_lazy(add, dask_array, axis):
    x = rng.integers(-50, 50, (7, 9)).astype(np.float64)
    dx = dask_array.from_array(x, chunks=(3, 4))
    r = add.accumulate(dx, axis=axis)
    assert isinstance(r, dask_array.Array)
    np.testing.assert_array_equal(r.compute(), np.add.accumulate(x, axis=axis))


def test_dask_accumulate_edge_chunks(add, dask_array):
    x = np.arange(10, dtype=np.int64)
    for chunks in ((10,), (1,) * 10, (0, 4, 0, 6), (3, 3, 4)):
        dx = dask_array.from_array(x, chunks=(chunks,))
        r = add.accumulate(dx)
        assert isinstance(r, dask_array.Array)
        np.testing.assert_array_equal(r.compute(), np.add.accumulate(x))
    np.testing.assert_array_equal(add.accumulate(dask_array.from_array(x, chunks=3),
                                                 dtype=np.float64).compute(),
                                  np.add.accumulate(x, dtype=np.float64))
    with pytest.raises(TypeError, match="out= is not supported with Dask arrays"):
        add.accumulate(dask_array.from_array(x, chunks=3), out=np.empty(10, np.int64))
    with pytest.raises(TypeError, match="0-d"):
        add.accumulate(dask_array.from_array(np.float64(1.0)))


def test_dask_call_attribute_is_lazy(add, vdot, dask_array):
    x = np.arange(6.0).reshape(2, 3)
    dx = dask_array.from_array(x, chunks=(1, 3))
    r = add.__call__(dx, 1.0)
    assert isinstance(r, dask_array.Array)
    np.testing.assert_array_equal(r.compute(), x + 1)
    r = vdot.__call__(dx, dx)
    assert isinstance(r, dask_array.Array)
    np.testing.assert_allclose(r.compute(), np.vecdot(x, x), rtol=1e-14)


def test_dask_outer_is_lazy(add, dask_array):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(5)
    da_a, da_b = dask_array.from_array(a, chunks=(1, 2)), dask_array.from_array(b, chunks=2)
    for x, y in ((da_a, da_b), (da_a, b), (a, da_b)):
        r = add.outer(x, y)
        assert isinstance(r, dask_array.Array)
        np.testing.assert_array_equal(r.compute(), np.add.outer(a, b))


def test_dask_at_and_reduceat_raise_as_numpy(add, dask_array):
    x = dask_array.from_array(np.arange(6.0), chunks=2)
    for ours, theirs in [
        (lambda: add.at(x, [0, 1], 1.0), lambda: np.add.at(x, [0, 1], 1.0)),
        (lambda: add.reduceat(x, [0, 2]), lambda: np.add.reduceat(x, [0, 2])),
    ]:
        want = _not_implemented_message(theirs)
        assert "all returned NotImplemented" in want
        assert _not_implemented_message(ours) == want.replace(repr(np.add), repr(add))


def test_cuda_reduce_is_not_a_ufunc():
    """cuda.reduce (Numba's Reduce) is no ufunc: it takes subclasses as arrays, as before,
    where ufunc.reduce goes through NumPy's protocol."""
    from numbacuda_ufunc import reduce as nu_reduce

    r = nu_reduce(nu_add)
    s = np.arange(4.0).view(Sub)
    assert type(r(s)) is np.float64 and r(s) == 6.0
    f = vectorize(["float64(float64, float64)"], identity=0)(nu_add)
    _same(f.reduce(s), np.add.reduce(s))
