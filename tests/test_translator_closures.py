"""Nested functions in translated code (issue 16): a ``def`` or ``lambda`` inside a kernel
or device function, closing over the enclosing function's constants and locals, called
there with positional, keyword and default arguments, and passed to device functions as a
function-valued argument. The Python function is the oracle; every unit is compiled by
g++ and by NVRTC for sm_90 (_hostrun.build, inspect_ptx)."""

import math

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int32, int64
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

SCALE = 3


@cuda.jit(device=True)
def apply(func, *args):
    return func(*args)


@cuda.jit(device=True)
def apply_twice(func, x):
    return func(func(x))


def with_defaults(x):
    t = 12

    def inner(a, b, c=5, d=7):
        z = 4
        return a * 1000 + b * 100 + c * 10 + d + z + t

    return (inner(x, 1) + inner(x, 2, 3) + inner(x, 1, d=2) + inner(b=3, a=x, c=0)
            + apply(inner, x, 1) + apply(inner, x, 1, 2, 3))


def over_locals(x, y):
    s = x * 2

    def mix(k):
        return s * k + y - SCALE  # a run-time local, an argument and a global

    acc = 0.0
    for i in range(4):
        acc += mix(i)
        s = s + 1  # read at each call: Python's late binding
    return acc


def nested_twice(x):
    def outer(v):
        def sq(w):
            return w * w

        return sq(v) + 1

    return outer(x) + apply_twice(outer, x)


def lambdas(x):
    half = lambda v: v / 2  # noqa: E731
    c = 7
    add_c = lambda v, w=1: v + c + w  # noqa: E731
    return half(x) + add_c(x) + add_c(x, w=3) + apply(add_c, x, 2)


def recursion_free_helper(x):
    def clamp(v, lo=-1.0, hi=1.0):
        return min(max(v, lo), hi)

    return clamp(x) + clamp(x, hi=0.5) + clamp(x * 10, -2.0) + math.floor(clamp(x, 0.0, 3.0))


def test_nested_def_defaults_keywords_and_escape():
    cases = [hr.Case(with_defaults, (int64,)), hr.Case(with_defaults, (float32,))]
    hr.build(cases)
    hr.check(cases[0], np.array([0, 1, -7, 123456, -2**40], np.int64))
    hr.check(cases[1], np.array([0.5, -3.25, 1e6, np.inf, np.nan], np.float32), ulps=1)


def test_nested_def_reads_locals_and_arguments_at_call_time():
    cases = [hr.Case(over_locals, (float64, float64)), hr.Case(over_locals, (int32, int64))]
    hr.build(cases)
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=20), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    hr.check(cases[0], x, x[::-1].copy())
    xi = np.array([0, 1, -1, 2**31 - 1, -2**31, 77], np.int32)
    hr.check(cases[1], xi, np.array([5, -5, 2**62, 0, 3, -9], np.int64))


def test_nested_def_inside_nested_def_and_lambdas():
    cases = [hr.Case(nested_twice, (int64,)), hr.Case(nested_twice, (float64,)),
             hr.Case(lambdas, (float64,)), hr.Case(lambdas, (int32,)),
             hr.Case(recursion_free_helper, (float64,))]
    hr.build(cases)
    hr.check(cases[0], np.array([0, 3, -3, 1000, 2**15], np.int64))
    hr.check(cases[1], np.array([0.0, -0.0, 1.5, -2.5, np.inf, np.nan]))
    hr.check(cases[2], np.array([0.0, -0.0, 1.5, -2.5, np.inf, np.nan]))
    hr.check(cases[3], np.array([0, 1, -1, 2**31 - 1, -2**31], np.int32))
    hr.check(cases[4], np.array([0.0, -0.0, 0.3, -0.7, 2.5, -40.0, np.inf, -np.inf]))


def kernel_body(out, a, b):
    i = cuda.grid(1)
    w = 2.0

    def term(j, k=1):
        return a[j] * w + b[j] * k + i  # arrays and the thread index captured

    def row(j):
        return term(j) + term(j, k=3)

    if i < out.size:
        out[i] = row(i) - apply(term, i, 2)


def test_kernel_with_nested_defs_capturing_arrays():
    k = cuda.jit(kernel_body)
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=37), rng.normal(size=37)
    out = np.full(37, np.nan)
    k[2, 32](out, a, b)
    i = np.arange(37)
    want = (a * 2 + b + i) + (a * 2 + b * 3 + i) - (a * 2 + b * 2 + i)
    np.testing.assert_allclose(out, want, rtol=1e-15)
    ptx = next(iter(k.inspect_ptx().values()))
    assert ".entry" in ptx


def escapes_with_runtime_locals(x):
    y = x + 1

    def inner(v, w=2):
        return v * w + y  # y is a run-time local: carried along with inner

    def twice_inner(v):
        return inner(inner(v))  # a sibling that reads run-time locals

    return apply(inner, x) + apply(twice_inner, x) + apply_twice(inner, x) + twice_inner(3)


def test_nested_def_passed_on_with_its_runtime_locals():
    cases = [hr.Case(escapes_with_runtime_locals, (int64,)),
             hr.Case(escapes_with_runtime_locals, (float64,))]
    hr.build(cases)
    hr.check(cases[0], np.array([0, 1, -1, 17, -2**20], np.int64))
    hr.check(cases[1], np.array([0.0, -0.0, 0.25, -3.5, np.inf, np.nan]))


# ---- what is refused, and why ----------------------------------------------------------

def two_definitions(c):
    if c:
        x = 3

        def inner(y):
            return y + x
        r = apply(inner, 1)
    else:
        x = 6

        def inner(y):
            return y + x
        r = apply(inner, 2)
    return r


def default_not_constant(x):
    def inner(v, w=x):
        return v + w

    return inner(1)


def returns_closure(x):
    def inner(v):
        return v

    return inner


def recursive_nested(x):
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)

    return fact(x)


def test_nested_def_errors():
    with pytest.raises(CompileError, match="'inner' is defined more than once.*Cannot capture "
                                           "a constant value for variable 'x'"):
        translate(two_definitions, (int64,))
    with pytest.raises(CompileError, match="default value of a nested function's parameter "
                                           "must be a compile-time constant"):
        translate(default_not_constant, (int64,))
    with pytest.raises(CompileError, match="cannot return function inner"):
        translate(returns_closure, (int64,))
    with pytest.raises(CompileError, match="'fact' calls itself"):
        translate(recursive_nested, (int64,))


def test_nested_def_in_kernel_does_not_make_kernel_return():
    def k(out):
        def f():
            return 5
        out[0] = f()

    kern = cuda.jit(k)
    out = np.zeros(1, np.int64)
    kern[1, 1](out)
    assert out[0] == 5
