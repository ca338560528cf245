"""Values as arguments (issue 16, item 5): dtypes, device functions, math functions and
cuda.atomic.* passed to device functions are compile-time arguments; the callee is
specialised on each, as Numba's atomics tests rely on. Checked against NumPy/Python on the
host backend and compiled by NVRTC for sm_90."""

import math

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int32, uint32
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError


@cuda.jit(device=True)
def shared_atomic(ary, dtype, op):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(32, dtype)
    sm[tid] = ary[tid]
    cuda.syncthreads()
    op(sm, tid % 4, dtype(1))
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit
def atomic_add_u32(ary):
    shared_atomic(ary, uint32, cuda.atomic.add)


@cuda.jit
def atomic_max_f64(ary):
    shared_atomic(ary, float64, cuda.atomic.max)


def test_dtype_and_atomic_as_arguments():
    a = np.arange(32, dtype=np.uint32)
    atomic_add_u32[1, 32](a)
    want = np.arange(32, dtype=np.uint32)
    want[:4] += 8
    np.testing.assert_array_equal(a, want)
    b = np.linspace(-1, 1, 32)
    atomic_max_f64[1, 32](b)
    want = np.linspace(-1, 1, 32)
    want[:4] = np.maximum(want[:4], 1.0)
    np.testing.assert_array_equal(b, want)
    assert ".entry" in next(iter(atomic_add_u32.inspect_ptx().values()))


def twice(f, x):
    return f(f(x))


def inc(x):
    return x + 1


def dec(x):
    return x - 1


def apply_all(x):
    return twice(inc, x) * 100 + twice(dec, x) + twice(math.floor, x / 3) + twice(abs, -x)


def cast_with(t, x):
    return t(x) * 2


def casts(x):
    return cast_with(np.float32, x) + cast_with(np.int32, x)


def test_functions_and_types_as_arguments():
    cases = [hr.Case(apply_all, (float64,)), hr.Case(apply_all, (int32,)),
             hr.Case(casts, (float64,))]
    hr.build(cases)
    hr.check(cases[0], np.linspace(-7, 7, 29))
    hr.check(cases[1], np.arange(-9, 9, dtype=np.int32))
    hr.check(cases[2], np.array([0.5, -3.75, 1e3, 2.5e9, -0.0]), ulps=1)
    tf = translate(apply_all, (float64,))
    # One specialisation of twice() per function passed.
    assert sum("nu_twice_" in h for h in tf.helpers) == 4


def test_module_is_not_a_runtime_value():
    def bad(x):
        m = math
        return m.sin(x)

    with pytest.raises(CompileError, match="cannot assign module math"):
        translate(bad, (float32,))


# ---- integer constants as compile-time values (Numba's literal arguments)

@cuda.jit(device=True)
def shared_reverse(ary, nelem, shape, dtype):
    # nelem sizes a 1-d shared array, shape (a tuple of two) a 2-d one: both come from the
    # caller's constants, as in numba-cuda's atomics tests.
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(nelem, dtype)
    grid = cuda.shared.array(shape, dtype)
    sm[tid] = ary[tid]
    grid[tid // shape[1], tid % shape[1]] = ary[tid]
    cuda.syncthreads()
    ary[tid] = sm[nelem - 1 - tid] + grid[0, 0]


@cuda.jit(device=True)
def forward(ary, nelem, dtype):
    shared_reverse(ary, nelem, (4, nelem // 4), dtype)   # passed on, one level deeper


@cuda.jit
def reverse16(ary):
    forward(ary, 16, int32)


@cuda.jit
def reverse32(ary):
    shared_reverse(ary, 32, (8, 4), float64)


def test_integer_constants_size_shared_arrays_in_callees():
    a = np.arange(16, dtype=np.int32) * 3
    reverse16[1, 16](a)
    np.testing.assert_array_equal(a, (np.arange(16, dtype=np.int32) * 3)[::-1] + 0)
    b = np.linspace(1, 2, 32)
    reverse32[1, 32](b)
    np.testing.assert_array_equal(b, np.linspace(1, 2, 32)[::-1] + 1.0)
    # One specialisation per value; the literal is not a run-time parameter.
    ptx = next(iter(reverse16.inspect_ptx().values()))
    assert ".entry" in ptx and ".shared" in ptx


def scaled(x, n):
    for _ in range(1):
        pass
    return x * n       # not a shape: n stays an ordinary (weak int) parameter


def use_scaled(x):
    return scaled(x, 3) + scaled(x, 5)


def test_integer_constants_elsewhere_stay_parameters():
    tf = translate(use_scaled, (float64,))
    assert sum("nu_scaled_" in h for h in tf.helpers) == 1
    case = hr.Case(use_scaled, (float64,))
    hr.build([case])
    hr.check(case, np.array([0.5, -2.0, np.inf, np.nan, -0.0]))


def reassigns(ary, n):
    n = n + 1
    sm = cuda.local.array(4, int32)
    sm[0] = n
    ary[0] = sm[0]


def test_reassigned_parameter_is_not_a_literal():
    # n is assigned in the body, so it is an ordinary parameter (a local array sized by it
    # would be refused as in Numba).
    @cuda.jit
    def k(ary):
        reassigns(ary, 6)

    a = np.zeros(1, np.int32)
    k[1, 1](a)
    assert a[0] == 7


@cuda.jit(device=True)
def by_mode(x, mode):
    if mode == "double":
        return x * 2
    if mode != "keep":
        return -x
    return x


@cuda.jit
def modes(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = by_mode(x[i], "double")
        out[1, i] = by_mode(x[i], "keep")
        out[2, i] = by_mode(x[i], "other")
        out[3, i] = ("a" < "b") + ("b" == "b") * 2 + (x[i] == "b") * 4 + (x[i] != "b") * 8


def test_string_constants_are_compile_time_values():
    x = np.array([1.5, -0.0, np.inf, np.nan, 3.0])
    out = np.zeros((4, x.size))
    modes[1, 8](out, x)
    expect = np.zeros_like(out)
    for i, v in enumerate(x):
        expect[:, i] = [by_mode(v, "double"), by_mode(v, "keep"), by_mode(v, "other"),
                        ("a" < "b") + ("b" == "b") * 2 + (v == "b") * 4 + (v != "b") * 8]
    np.testing.assert_array_equal(out, expect)
    assert ".entry" in modes.inspect_ptx("void(float64[:, :], float64[:])")


def test_string_ordering_against_a_number_is_refused():
    def bad(x):
        return x < "a"

    with pytest.raises(CompileError, match="'<' between a string and float64 is not supported"):
        translate(bad, (float64,))


MODE = "double"


def test_global_and_closure_strings_are_compile_time_values():
    def make(mode):
        @cuda.jit
        def k(out, x):
            out[0] = by_mode(x[0], mode) + by_mode(x[0], MODE) * 10
            loc = cuda.local.array(2, dtype=kind)
            loc[0] = x[0]
            out[1] = loc[0]
        return k

    kind = "float32"
    x = np.array([1.5])
    for mode in ("keep", "other"):
        out = np.zeros(2)
        make(mode)[1, 1](out, x)  # two closures of one source: two translations
        np.testing.assert_array_equal(out, [by_mode(1.5, mode) + by_mode(1.5, MODE) * 10, 1.5])

