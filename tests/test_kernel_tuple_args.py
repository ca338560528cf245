"""Tuples as @cuda.jit kernel arguments (Numba's UniTuple/Tuple arguments):
``kernel[g, b](arr, (1, 2.0))``, nested and heterogeneous, read by constant index,
unpacking, ``len`` and iteration; checked against the Python function run on the host."""

from collections import namedtuple

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError

RNG = np.random.default_rng(20261122)


def _run_python(fn, n, out, *args):
    """The oracle: the kernel's Python function run thread by thread (1-d launch of n)."""
    for i in range(n):
        fn_globals = fn.__globals__
        saved = fn_globals.get("cuda")
        fn_globals["cuda"] = _FakeCuda(i)
        try:
            fn(out, *args)
        finally:
            fn_globals["cuda"] = saved


class _FakeCuda:
    def __init__(self, i):
        self.i = i

    def grid(self, ndim):
        return self.i


def _check(fn, n, out_dtype, *args):
    k = cuda.jit(fn)
    out = np.full(n, -7, out_dtype)
    k[(n + 31) // 32, 32](out, *args)
    expected = np.full(n, -7, out_dtype)
    with np.errstate(all="ignore"):
        _run_python(fn, n, expected, *args)
    np.testing.assert_array_equal(out, expected)
    return k


def indexed(out, t):
    i = cuda.grid(1)
    if i < len(out):
        out[i] = t[0] * i + t[1] - t[-1]


def unpacked(out, x, t):
    i = cuda.grid(1)
    a, b, c = t
    if i < len(out):
        out[i] = x[i] * a + b * c


def nested(out, t):
    i = cuda.grid(1)
    (p, q), r = t
    if i < len(out):
        out[i] = p * i + q + r[0] * r[1] + len(t) + len(r)


def iterated(out, t):
    i = cuda.grid(1)
    if i < len(out):
        s = 0.0
        for v in t:
            s += v * i
        out[i] = s


def single(out, t):
    i = cuda.grid(1)
    if i < len(out):
        out[i] = t[0] + len(t)


def test_tuple_arg_homogeneous_ints():
    _check(indexed, 50, np.int64, (3, -5))
    _check(indexed, 50, np.int64, (np.int32(2**31 - 1), np.int32(7), np.int32(-2**31)))


def test_tuple_arg_heterogeneous_and_with_arrays():
    x = RNG.standard_normal(40)
    _check(unpacked, 40, np.float64, x, (2, 0.5, np.float32(1.5)))
    _check(unpacked, 40, np.float64, x, (True, np.nan, -np.inf))
    _check(unpacked, 40, np.complex128, x.astype(np.complex128), (1j, 2.0, 3))


def test_tuple_arg_nested():
    _check(nested, 33, np.float64, ((2, 0.25), (np.float32(3.0), -4)))
    _check(nested, 33, np.int64, ((2, 5), (3, (-4))))


def test_tuple_arg_iteration_and_one_item():
    _check(iterated, 20, np.float64, (1, 2.5, np.float32(-0.5), 7))
    _check(single, 10, np.float64, (4.5,))
    _check(iterated, 10, np.float64, tuple(range(8)))


def test_tuple_arg_specializations_are_kept_apart():
    k = cuda.jit(single)
    out = np.zeros(4)
    k[1, 4](out, (2.0,))
    np.testing.assert_array_equal(out, 3.0)
    k[1, 4](out, (5,))  # int64 item: a new specialization
    np.testing.assert_array_equal(out, 6.0)
    k[1, 4](out, (2.0,))  # the first again, from the engine's key
    np.testing.assert_array_equal(out, 3.0)
    assert len(k.overloads) == 2
    assert [str(s[1]) for s in k.signatures] == ["tuple(float64)", "tuple(int64)"]


def test_tuple_arg_device_array_and_compiles_with_nvrtc():
    k = cuda.jit(unpacked)
    x = cuda.to_device(RNG.standard_normal(16))
    out = cuda.device_array(16)
    k[1, 16](out, x, (1, 2, 3))
    np.testing.assert_allclose(out.copy_to_host(), x.copy_to_host() + 6)
    ptx = k.inspect_ptx()
    assert len(ptx) == 1 and ".entry" in next(iter(ptx.values()))


def test_tuple_arg_errors():
    k = cuda.jit(indexed)
    out = np.zeros(4)
    with pytest.raises(CompileError, match="out of range"):
        k[1, 4](out, ())  # t[0] of the empty tuple
    with pytest.raises(TypeError, match="at most 8 items"):
        k[1, 4](out, tuple(range(9)))
    with pytest.raises(CompileError, match="out of range"):
        k[1, 4](out, (1,))  # t[1] of a 1-tuple
    def plain(out, v):
        out[0] = v

    declared = cuda.jit("void(float64[:], float64)")(plain)
    with pytest.raises(TypeError, match="tuple arguments need a lazily compiled kernel"):
        declared[1, 4](out, (1.0,))


# ---- empty tuples, tuples holding arrays, namedtuples (Numba's test_array_args cases) ----

def tuple_lengths(out, t):
    out[0] = len(t)
    out[1] = len(t[0]) if len(t) > 0 else -1
    out[2] = len(t[-1]) if len(t) > 0 else -1


def test_tuple_arg_empty_and_tuples_of_empty_tuples():
    k = cuda.jit(tuple_lengths)
    for t in [(), ((),), ((), (), ()), ((), (5, 6), (8, 9, 10))]:
        out = np.full(3, -7, np.int64)
        k[1, 1](out, t)
        expected = np.full(3, -7, np.int64)
        tuple_lengths(expected, t)
        np.testing.assert_array_equal(out, expected)
    assert len(k.overloads) == 4


def arrays_in_tuple(t, s):
    i = cuda.grid(1)
    dst, a, (b, scale) = t
    if i < len(dst):
        dst[i] = a[i] + b[i] * scale + s[1][i % len(s[1])] + s[0]


@pytest.mark.parametrize("on_device", [False, True])
def test_tuple_arg_holding_arrays_reads_and_writes_them(on_device):
    n = 37
    a = RNG.standard_normal(n)
    a[:4] = [np.nan, np.inf, -0.0, -np.inf]
    b = RNG.standard_normal(n).astype(np.float32)
    c = RNG.integers(-100, 100, 5)
    dst = np.full(n, np.nan)
    expected = a + b * np.float64(np.float32(0.5)) + c[np.arange(n) % 5] + 2.0
    k = cuda.jit(arrays_in_tuple)
    if on_device:
        d_dst = cuda.to_device(dst)
        k[2, 32]((d_dst, cuda.to_device(a), (cuda.to_device(b), np.float32(0.5))),
                 (2.0, cuda.to_device(c)))
        dst = d_dst.copy_to_host()
    else:
        k[2, 32]((dst, a, (b, np.float32(0.5))), (2.0, c))  # host dst: copied back
    np.testing.assert_array_equal(dst, expected)


Point = namedtuple("Point", ("x", "y", "r"))
Pair = namedtuple("Pair", ("x", "y"))


def named_fields(out, p):
    out[0] = p.x
    out[1] = p.y
    out[2] = p.r
    out[3] = p[0] + p[-1]
    q = Pair(p.y, y=p.x)  # a namedtuple made in the kernel
    out[4] = q.x - q.y
    out[5] = len(q)


def test_tuple_arg_namedtuple_fields():
    k = cuda.jit(named_fields)
    for p in [Point(1, 2, 2.236), Point(-3, np.int32(7), np.float32(0.5)),
              Point(np.nan, 1.5, -np.inf)]:
        out = np.full(6, -7.0)
        k[1, 1](out, p)
        expected = np.full(6, -7.0)
        with np.errstate(all="ignore"):
            named_fields(expected, p)
        np.testing.assert_array_equal(out, expected)


def test_tuple_arg_namedtuple_is_not_a_plain_tuple():
    def first(out, p):
        out[0] = p.x

    k = cuda.jit(first)
    out = np.zeros(1)
    k[1, 1](out, Pair(4.0, 5.0))
    assert out[0] == 4.0
    with pytest.raises(CompileError, match="attribute '.x' is not supported"):
        k[1, 1](out, (4.0, 5.0))  # same items, no field names: a new specialization
    k[1, 1](out, namedtuple("Other", ("y", "x"))(1.0, 9.0))  # other names: read by name
    assert out[0] == 9.0
    assert len(k.overloads) == 2  # Pair and Other: field names differ
    assert all(".entry" in p for p in k.inspect_ptx().values())
