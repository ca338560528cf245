"""Operands are evaluated in Python's order, left to right, even where C++ leaves the order
of a call's arguments unspecified (g++ evaluated ``f(x) - g(x)`` right to left): device
functions with effects, atomics and random draws inside one expression happen in the
order Python would run them."""

import numpy as np

from numbacuda_ufunc import cuda
from numbacuda_ufunc.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


@cuda.jit(device=True)
def record(log, count, v):
    """Appends v to the log and returns it: the log shows the order of the calls."""
    i = cuda.atomic.add(count, 0, 1)
    log[i] = v
    return v


@cuda.jit(device=True)
def minus(a, b):
    return a - b


@cuda.jit(device=True)
def bump(a):
    a[0] = 100.0
    return 1.0


@cuda.jit
def ordered(log, count, a, c, out):
    out[0] = record(log, count, 1.0) - record(log, count, 2.0) * record(log, count, 3.0)
    out[1] = minus(record(log, count, 4.0), record(log, count, 5.0))
    out[2] = record(log, count, 6.0) < record(log, count, 7.0)
    out[3] = cuda.atomic.add(c, 0, 1) - cuda.atomic.add(c, 0, 10)
    out[4] = a[0] + bump(a)  # a[0] is read before bump writes it
    out[5] = max(record(log, count, 8.0), record(log, count, 9.0) - 20.0)


def test_operands_and_arguments_run_left_to_right():
    log = np.full(16, np.nan)
    count = np.zeros(1, np.int32)
    a = np.array([5.0])
    c = np.zeros(1, np.int32)
    out = np.full(6, np.nan)
    ordered[1, 1](log, count, a, c, out)
    np.testing.assert_array_equal(log[:count[0]], [1, 2, 3, 4, 5, 6, 7, 8, 9])
    # the same expressions in Python, on plain numbers
    np.testing.assert_array_equal(out, [1 - 2 * 3, 4 - 5, 6 < 7, 0 - 1, 5 + 1, max(8, 9 - 20)])
    assert a[0] == 100.0 and c[0] == 11


@cuda.jit
def draws(states, out):
    out[0] = xoroshiro128p_uniform_float32(states, 0) - xoroshiro128p_uniform_float32(states, 0)


@cuda.jit
def draws_in_statements(states, out):
    x = xoroshiro128p_uniform_float32(states, 0)
    y = xoroshiro128p_uniform_float32(states, 0)
    out[0] = x - y


def test_random_draws_in_one_expression_match_statements():
    got, want = np.zeros(1, np.float32), np.zeros(1, np.float32)
    draws[1, 1](create_xoroshiro128p_states(1, seed=7), got)
    draws_in_statements[1, 1](create_xoroshiro128p_states(1, seed=7), want)
    assert got[0] != 0.0
    np.testing.assert_array_equal(got, want)


def test_pure_expressions_keep_their_form():
    @cuda.jit
    def pure(a, out):
        out[0] = a[0] * a[1] + a[2] - minus(a[0], a[1])

    out = np.zeros(1)
    pure[1, 1](np.array([3.0, 4.0, 5.0]), out)
    assert out[0] == 3 * 4 + 5 - (3 - 4)
    # a device function without effects among plain reads: still bound (it may have
    # effects), but the arithmetic of array reads alone is one expression
    source = next(iter(pure.inspect_cuda().values()))
    assert "nu_o" in source and "nu::mul<nu::f64>(v_a(0LL), v_a(1LL))" in source


def test_ordered_code_compiles_for_sm_90():
    """The bound operands (lambdas called in place) compile with NVRTC (PTX for sm_90)."""
    test_operands_and_arguments_run_left_to_right()
    test_random_draws_in_one_expression_match_statements()
    for kernel in (ordered, draws):
        for ptx in kernel.inspect_asm().values():
            assert ".visible .entry" in ptx
