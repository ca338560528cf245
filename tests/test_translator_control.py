"""Control flow, locals, tuples, builtins and calls between functions, run on the host
backend (and compiled by NVRTC) against the Python function on NumPy scalars."""

import math

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import (
    bool_,
    cuda,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint32,
    uint64,
)
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.compiler._types import TupleType
from numbacuda_ufunc.errors import CompileError

SCALE = 3


def collatz_steps(n):
    steps = 0
    while n > 1 and steps < 1000:
        if n % 2 == 0:
            n //= 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def sum_range_step(a, b):
    s = 0
    for i in range(a, b, 3):
        s += i
    for j in range(b, a, -2):
        s -= j
    return s


def break_continue(n):
    total = 0
    for i in range(100):
        if i >= n:
            break
        if i % 3 == 0:
            continue
        total += i * i
    return total


def widen_in_loop(x):
    acc = 0
    for k in range(4):
        acc = acc + x / (k + 1)
    return acc


def branchy(x, y):
    if x > y:
        r = x - y
    elif x == y:
        r = 0
    else:
        r = y * 2.5
    return r


def several_returns(x):
    if x < 0:
        return -1
    if x == 0:
        return 0.5
    return x


def chained(a, b, c):
    return a < b <= c != a


def and_or_values(a, b):
    return (a and b) or (b - a)


def conditional_expr(x):
    return x * 2 if x > 10 else (x if x > 0 else -x)


def tuple_swap(a, b):
    a, b = b, a + b
    a, b = b, a + b
    return a * 100 + b


def aug_on_argument(x):
    x *= 2
    x += 1
    x //= 3
    return x


def builtins_mix(x, y):
    return abs(x - y) + min(x, y, 3) - max(x, y) + int(float(x) / 2) + round(y / 3)


def use_divmod(a, b):
    q, r = divmod(a, b)
    return q * 10 + r


def use_pow(a, b):
    return pow(a, 2) + pow(b, 3)


def use_bool(x):
    return bool(x) + (not x) + int(x > 2)


def helper_scale(v, k=SCALE):
    return v * k


def helper_poly(v):
    return helper_scale(v) + helper_scale(v, 2) * v


def calls_helpers(x):
    return helper_poly(x) - helper_scale(x)


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def uses_fib(n):
    return fib(n % 15)


def python_minmax_nan(x, y):
    return min(x, y) + max(y, x) * 0.5


def pass_and_docstring(x):
    """Docstrings are ignored."""
    if x > 0:
        pass
    else:
        x = -x
    return x


def nested_loops(n):
    c = 0
    i = 0
    while i < n:
        for j in range(i):
            if (i + j) % 5 == 0:
                c += 1
        i += 1
    return c


def closure_factory(k):
    def scaled(x):
        return x * k + math.pi
    return scaled


closure_fn = closure_factory(0.5)


def lam(x):
    return x


lambda_fn = lambda x, y: x * y - 1  # noqa: E731  (a lambda is the case under test)


INT_IN = np.array([0, 1, -1, 2, 5, 7, 27, 97, -5, 100, 13, 6], "i8")
FLOAT_IN = np.array([0.0, -0.0, 1.5, -2.5, 3.0, 10.0, 11.0, 1e10, np.nan, np.inf, -np.inf,
                     0.1, 2.0], "f8")

SPECS = [
    (collatz_steps, (int64,), [INT_IN]),
    (collatz_steps, (uint32,), [np.abs(INT_IN)]),
    (sum_range_step, (int32, int32), hr.pairs(int8, int8)),
    (break_continue, (int16,), [INT_IN]),
    (widen_in_loop, (int32,), [INT_IN]),
    (widen_in_loop, (float32,), [FLOAT_IN]),
    (branchy, (float32, float32), [FLOAT_IN, FLOAT_IN[::-1]]),
    (branchy, (int32, int8), [INT_IN, INT_IN[::-1]]),
    (several_returns, (int64,), [INT_IN]),
    (several_returns, (float32,), [FLOAT_IN]),
    (chained, (int32, int64, float64), [INT_IN, INT_IN[::-1], FLOAT_IN[:12]]),
    (and_or_values, (int32, int32), [INT_IN % 3, INT_IN[::-1] % 2]),
    (and_or_values, (float64, float64), [FLOAT_IN, FLOAT_IN[::-1]]),
    (conditional_expr, (int8,), [INT_IN]),
    (conditional_expr, (float64,), [FLOAT_IN]),
    (tuple_swap, (int64, int64), [INT_IN, INT_IN[::-1]]),
    (aug_on_argument, (int8,), [INT_IN]),
    (aug_on_argument, (float32,), [FLOAT_IN]),
    (builtins_mix, (int32, int32), [INT_IN, INT_IN[::-1]]),
    (builtins_mix, (float64, float64), [FLOAT_IN[:8], FLOAT_IN[1:9]]),
    (use_divmod, (int32, int32), hr.pairs(int8, int8)),
    (use_divmod, (float64, float64), hr.pairs(float64, float64)),
    (use_pow, (int64, int16), [INT_IN, INT_IN]),
    (use_bool, (float64,), [FLOAT_IN]),
    (use_bool, (int8,), [INT_IN]),
    (calls_helpers, (int32,), [INT_IN]),
    (calls_helpers, (float32,), [FLOAT_IN]),
    (uses_fib, (int64,), [np.abs(INT_IN)]),
    (python_minmax_nan, (float64, float64), hr.pairs(float64, float64)),
    (python_minmax_nan, (uint8, int8), hr.pairs(uint8, int8)),
    (pass_and_docstring, (float64,), [FLOAT_IN]),
    (nested_loops, (int32,), [np.abs(INT_IN) % 40]),
    (closure_fn, (float64,), [FLOAT_IN]),
    (lambda_fn, (float32, int64), [FLOAT_IN[:12], INT_IN]),
    (lambda_fn, (uint64, uint64), [np.abs(INT_IN), np.abs(INT_IN)]),
]
CASES = [(hr.Case(fn, types), arrays) for fn, types, arrays in SPECS]


@pytest.fixture(scope="module")
def built():
    hr.build([c for c, _ in CASES])


@pytest.mark.parametrize("case,arrays", CASES, ids=[
    f"{c.fn.__name__}-{'-'.join(t.name for t in c.arg_types)}" for c, _ in CASES])
def test_function_matches_python(built, case, arrays):
    hr.check(case, *arrays)


def test_loop_widening_types_are_unified():
    assert translate(widen_in_loop, (int32,)).return_type == float64
    assert translate(widen_in_loop, (float32,)).return_type == float32
    assert translate(several_returns, (int64,)).return_type == float64
    assert translate(branchy, (int32, int8)).return_type == float64


def test_helpers_are_translated_once_per_type():
    tf = translate(calls_helpers, (int32,))
    assert tf.name.startswith("nu_calls_helpers_i4_")
    # helper_scale(v) and helper_scale(v, 2) share one specialisation (int32, Python int).
    assert [h.split("_")[1:3] for h in tf.helpers] == [["helper", "scale"], ["helper", "poly"]]
    assert tf.source.count("#define NU_DEFINED_") == 3


def test_recursion_with_constant_types():
    tf = translate(fib, (int64,))
    assert tf.return_type == int64


def test_bool_arguments():
    case = hr.Case(use_bool, (bool_,))
    hr.build([case], nvrtc=False)
    hr.check(case, np.array([True, False]))


FLAG = True


def identities(flag, x):
    # `is` against None/True/False: a bool by its value (Numba's typing, so a NumPy bool
    # counts as Python's bool here), a number never; pruned at compile time where known.
    r = 0
    if flag is True:
        r += 1
    if flag is not False:
        r += 2
    if x is None:
        r += 4
    if x is not None:
        r += 8
    if x is True or x is False:  # a number is never True or False
        r += 16
    if FLAG is True and None is None:
        r += 32
    return r


def test_identity_with_none_true_false():
    cases = [hr.Case(identities, (bool_, int64)), hr.Case(identities, (bool_, float64))]
    hr.build(cases)
    for case, x in zip(cases, (np.array([0, 1, 1, 7], np.int64),
                               np.array([0.0, 1.0, np.nan, -0.0]))):
        flags = np.array([True, False, True, False])
        got = hr.run_compiled(case, flags, x)
        want = [identities(bool(f), v.item()) for f, v in zip(flags, x)]  # Python bools
        np.testing.assert_array_equal(got, want)


# ---- one name, several variables (_webs.py): a name reused for values of other types ----

def reuse_name(a, b):
    t = (a, b)
    s = t[0] + t[1]
    t = s * 2.5           # a float now: another variable, as Numba's SSA form makes it
    for i in range(3):
        t += i
    k = 0
    for k in range(2):
        s += k
    k = (s, s)            # the loop variable reused for a tuple
    return t + k[0] - k[1]


def still_one_variable(a, c):
    x = (a, a)
    if c > 0:
        x = a             # both reach the return: one variable, two types
    return x


def test_name_reused_for_other_types_is_split():
    cases = [hr.Case(reuse_name, (float64, int32)), hr.Case(reuse_name, (int64, int64))]
    hr.build(cases)
    rng = np.random.default_rng(11)
    hr.check(cases[0], np.concatenate([rng.normal(size=10), [np.inf, np.nan, -0.0]]),
             rng.integers(-50, 50, 13).astype(np.int32))
    hr.check(cases[1], np.array([0, 5, -7, 2**40], np.int64), np.array([1, -1, 3, 9], np.int64))
    with pytest.raises(CompileError, match="variable 'x' is assigned incompatible types"):
        translate(still_one_variable, (float64, int64))


IS_TUPLE = True


def pruned_rebind(a, b):
    t = (a, b)
    if IS_TUPLE is True:  # known at compile time: only this branch is typed
        t = t[0] * 2
    return t + 1


def make_unwrapper(b_is_tuple):
    # numba#5219 (numba-cuda test_issue5219): a parameter rebound to its first item in
    # a branch pruned by a closure constant
    def unwrap(b):
        if b_is_tuple:
            b = b[0]
        return b
    return unwrap


def not_pruned(a, c):
    t = (a, a)
    if c > 0:  # known only at run time: both definitions reach the return
        t = a
    return t


def test_name_reused_in_a_pruned_branch_is_split():
    cases = [hr.Case(pruned_rebind, (int64, float64)), hr.Case(pruned_rebind, (float32, int32))]
    hr.build(cases)
    hr.check(cases[0], *hr.pairs(int64, float64))
    hr.check(cases[1], *hr.pairs(float32, int32))
    unwrap = make_unwrapper(True)
    tf = translate(unwrap, (TupleType((int64, float64)),))
    assert tf.return_type == int64
    assert translate(make_unwrapper(False), (int64,)).return_type == int64
    with pytest.raises(CompileError, match="variable 't' is assigned incompatible types"):
        translate(not_pruned, (float64, int64))


UNWRAP = make_unwrapper(True)


def test_parameter_rebound_in_pruned_branch_in_a_kernel():
    @cuda.jit
    def k(out, b):
        out[0] = UNWRAP(b)

    out = np.zeros(1, np.int64)
    k[1, 1](out, (7, 2.5))
    assert out[0] == 7


def reshape_twice(result, arr):
    for _ in range(1):
        arr = arr.reshape(3 * 2)
        arr = arr.reshape(3, 2)
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            result[i, j] = arr[i, j]


def loop_variable_becomes_array(res, m, n, b):
    for t in range(1, m):
        for idx in range(n):
            t = b
            if idx == 0:
                res[0] = t[0]
            else:
                res[0] += t[idx % t.shape[0]]


def test_kernels_reusing_a_name_for_arrays_of_other_shapes():
    k = cuda.jit(reshape_twice)
    arr = np.arange(6.0).reshape(3, 2) * 1.5
    out = np.full((3, 2), np.nan)
    k[1, 1](out, arr)
    np.testing.assert_array_equal(out, arr)
    k2 = cuda.jit(loop_variable_becomes_array)
    b = np.array([2.0, 3.0, 5.0])
    res, want = np.full(1, np.nan), np.full(1, np.nan)
    k2[1, 1](res, 4, 5, b)
    loop_variable_becomes_array(want, 4, 5, b)
    np.testing.assert_array_equal(res, want)
    for kern in (k, k2):
        assert ".entry" in next(iter(kern.inspect_ptx().values()))


# ---- Numba's ALWAYS_WARN_UNINIT_VAR: reads that some path reaches unassigned ----

def maybe_unassigned(n):
    if n:
        if n > 0:
            c = 0
        r = c
    else:
        c += 1  # never assigned on this path: Python raises UnboundLocalError
        r = c
    return r


def always_assigned(n):
    if n > 0:
        c = 1
    else:
        c = 2
    while True:
        d = c + 1
        if d > 0:
            break
    for k in range(n):
        c += k
    e = 0
    for e in range(n):  # noqa: B007  (e assigned before the loop: defined after it)
        pass
    return c + d + e


def loop_variable_after_loop(n):
    for k in range(n):  # noqa: B007
        pass
    return k


def _uninit_warnings(fn, types):
    import warnings

    from numbacuda_ufunc.errors import NumbaWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        translate(fn, types)
    return [str(w.message) for w in caught if issubclass(w.category, NumbaWarning)]


def test_uninitialized_variable_warning_follows_the_setting():
    saved = cuda.config.ALWAYS_WARN_UNINIT_VAR
    try:
        cuda.config.ALWAYS_WARN_UNINIT_VAR = 1
        msgs = _uninit_warnings(maybe_unassigned, (int64,))
        assert len(msgs) == 1 and "Detected uninitialized variable c" in msgs[0]
        assert _uninit_warnings(always_assigned, (int64,)) == []
        msgs = _uninit_warnings(loop_variable_after_loop, (int32,))
        assert len(msgs) == 1 and "uninitialized variable k" in msgs[0]
        cuda.config.ALWAYS_WARN_UNINIT_VAR = 0
        assert _uninit_warnings(lambda n: maybe_unassigned(n), (int64,)) == []

        def fresh(n):
            if n:
                c = 1
            return c
        assert _uninit_warnings(fresh, (int64,)) == []
    finally:
        cuda.config.ALWAYS_WARN_UNINIT_VAR = saved
    # the value read where Python raises: the type's zero
    case = hr.Case(maybe_unassigned, (int64,))
    hr.build([case])
    np.testing.assert_array_equal(hr.run_compiled(case, np.array([0, 1, 5, -3])), [1, 0, 0, 0])
