"""Tuples (issue 16, item 6): iteration over global, closure, argument-built and local
tuples, numbacuda_ufunc.literal_unroll, starred calls, constant indexing and tuples
returned by helpers, against the Python function on the host backend and NVRTC."""

import cmath

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int32, int64, literal_unroll
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

WEIGHTS = (1, 2.5, -3)


def make_closure(offsets):
    def shifted(x):
        s = 0.0
        for o in offsets:
            if o > 2:
                break
            s += x + o
        return s
    return shifted


shifted = make_closure((1, 2, 3, 4))


def weighted(x):
    s = 0.0
    for w in WEIGHTS:
        s += w * x
    return s


def local_tuple(a, b):
    t = (a, b, a - b)
    acc = 0
    for v in literal_unroll(t):
        if v == 0:
            continue
        acc = acc * 3 + v
    return acc


def pairs(a, b):
    acc = 0
    for p, q in ((a, b), (b, a), (1, 2)):
        acc += p * 10 + q
    return acc


def minmax(a, b):
    return (a, b) if a < b else (b, a)


def starred(a, b):
    t = minmax(a, b)
    lo, hi = t
    return complex(*t).imag * 100 + max(*t) - lo + hi + t[-1]


def starred_const(x):
    return max(*WEIGHTS) + x


def long_tuple(x):
    t = (x, x + 1, x * 2, 3, 4, 5, 6, 7, 8, 9, x - 1, x * x)  # longer than nu::tuple8
    s = t[11] - t[0] + len(tuple())
    for v in tuple(t):
        s += v
    return s


def ordered3(a, b):
    return (min(a, b), max(a, b), a - b)


def loop_over_call(a, b):
    s = 0
    for v in ordered3(a, b):
        s = s * 3 + v
    return s


@pytest.mark.parametrize("fn,types,arrays", [
    (long_tuple, (int64,), [np.arange(-5, 6)]),
    (long_tuple, (float64,), [hr.edge_values(float64)]),
    (loop_over_call, (int32, int32), hr.pairs(int32, int32)),
    (loop_over_call, (float32, float32), hr.pairs(float32, float32)),
    (weighted, (float32,), [hr.edge_values(float32)]),
    (shifted, (float64,), [hr.edge_values(float64)]),
    (local_tuple, (int32, int32), hr.pairs(int32, int32)),
    (local_tuple, (float64, int64), [np.linspace(-3, 3, 7), np.arange(-3, 4)]),
    (pairs, (int64, int64), hr.pairs(int32, int32)),
    (starred, (float64, float64), hr.pairs(float64, float64)),
    (starred, (int32, int32), [np.arange(-4, 4, dtype=np.int32), np.arange(3, -5, -1,
                                                                          dtype=np.int32)]),
    (starred_const, (float32,), [hr.edge_values(float32)]),
])
def test_tuples_match_python(fn, types, arrays):
    case = hr.Case(fn, types)
    hr.build([case])
    hr.check(case, *arrays)


def test_literal_unroll_is_identity_in_python():
    t = (1, 2.0)
    assert literal_unroll(t) is t


def test_tuple_loop_in_a_kernel():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            acc = 0.0
            for w in literal_unroll(WEIGHTS):
                acc += w * i
            out[i] = acc

    out = np.full(8, np.nan)
    k[1, 8](out)
    np.testing.assert_array_equal(out, [sum(w * i for w in WEIGHTS) for i in range(8)])


def starred_call_result(a, b):
    # f(*g(...)): the tuple g returns is computed once and spread into the call.
    return max(*minmax(a, b)) - complex(*cmath.polar(complex(a, b))).imag


def test_starred_expression_and_its_errors():
    cases = [hr.Case(starred_call_result, (float64, float64)),
             hr.Case(starred_call_result, (float32, float32))]
    hr.build(cases)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(size=12), [0.0, -0.0, np.inf, np.nan]])
    hr.check(cases[0], x, x[::-1].copy(), ulps=2)
    hr.check(cases[1], np.arange(-8, 8, dtype=np.float32),
             rng.normal(size=16).astype(np.float32), ulps=2)

    def not_tuple(a):
        return max(*a)

    with pytest.raises(CompileError, match="starred argument must be a tuple"):
        translate(not_tuple, (float64,))


def test_tuple_builtin_only_on_tuples():
    def of_number(x):
        return tuple(x)

    with pytest.raises(CompileError, match=r"tuple\(\) is supported only on tuples"):
        translate(of_number, (float64,))

    def mixed_call(a):
        s = 0.0
        for v in mixed(a):
            s += v
        return s

    with pytest.raises(CompileError, match="needs items of one type"):
        translate(mixed_call, (float64,))


def mixed(a):
    return (a, (a, a))
