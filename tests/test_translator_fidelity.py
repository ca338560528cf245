"""Translator fidelity (issue 16, items 1 and 13-17): tuple signatures, mutual recursion,
functions without a return value, long code, range() near the int64 limits, weak math
results and out-of-range casts, each against the Python function (or NumPy) as the
oracle, on the host backend and compiled by NVRTC for sm_90."""

import importlib.util
import math

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import (
    cuda,
    float32,
    float64,
    int32,
    int64,
    uint64,
    vectorize,
)
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

# ---- item 1: a tuple is one signature -----------------------------------------------------


def _double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2


def _scale(a, k):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * k


def test_tuple_of_types_is_one_signature():
    k = cuda.jit((float32[::1],))(_double)
    assert len(k._declared) == 1 and len(k.signatures) == 1
    a = np.arange(5, dtype=np.float32)
    k[1, 8](a)
    np.testing.assert_array_equal(a, np.arange(5, dtype=np.float32) * 2)
    k2 = cuda.jit((int32[:], int32))(_scale)
    assert len(k2._declared) == 1
    b = np.arange(6, dtype=np.int32)
    k2[1, 8](b, 3)
    np.testing.assert_array_equal(b, np.arange(6) * 3)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        k2[1, 8](np.zeros(3), 3)
    # The kernel compiles with NVRTC.
    assert ".entry" in next(iter(k2.inspect_ptx().values()))


def test_list_and_tuple_of_signature_strings_are_several():
    k = cuda.jit([(float32[:],), (float64[:],)])(_double)
    assert len(k._declared) == 2
    k = cuda.jit(("void(float32[:])", "void(float64[:])"))(_double)
    assert len(k._declared) == 2
    a = np.ones(3)
    k[1, 4](a)
    np.testing.assert_array_equal(a, 2.0)


def test_tuple_signature_of_a_device_function():
    dev = cuda.jit((float64, float64), device=True)(lambda x, y: x * y + 1)
    assert len(dev.signatures) == 1 and dev.signatures[0].args == (float64, float64)


# ---- item 13: recursion and missing returns -----------------------------------------------


def is_even(n):
    if n == 0:
        return 1
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return 0
    return is_even(n - 1)


def ping(n, acc):
    if n <= 0:
        return acc
    return pong(n - 1, acc + 1.5)


def pong(n, acc):
    if n <= 0:
        return acc * 2
    return ping(n - 1, acc - 1)


def uses_parity(n):
    return is_odd(n) * 10 + is_even(n)


def no_return_value(x):
    y = x + 1  # noqa: F841  (the function never returns a value)


def test_mutual_recursion_keeps_every_return():
    cases = [hr.Case(is_even, (int64,)), hr.Case(uses_parity, (int32,)),
             hr.Case(ping, (int64, float64))]
    hr.build(cases)
    n = np.arange(0, 40, dtype=np.int64)
    hr.check(cases[0], n)
    hr.check(cases[1], n.astype(np.int32))
    hr.check(cases[2], n, np.linspace(-3, 3, n.size))


def test_mutual_recursion_with_declared_signatures():
    # The entry has a declared return type; the recursive call back into it is the same
    # specialisation (it used to be refused as "changing argument types").
    f = vectorize(["int64(int64)"], target="cpu")(is_even)
    n = np.arange(30, dtype=np.int64)
    np.testing.assert_array_equal(f(n), [is_even(int(v)) for v in n])
    even = cuda.jit("int64(int64)", device=True)(is_even)

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = even(i) * 10 + is_odd(i)

    out = np.full(20, -7, dtype=np.int64)
    k[1, 32](out)
    np.testing.assert_array_equal(out, [is_even(i) * 10 + is_odd(i) for i in range(20)])


def test_recursive_function_in_a_cuda_ufunc_compiles_for_the_gpu():
    # The recursion guard macro was defined in nu_array.cuh only, which an elementwise unit
    # does not include: NVRTC failed on 'NU_RECURSION_GUARD is undefined' (the host build,
    # whose prelude has it, passed). Each variant's own source goes through NVRTC here.
    from numbacuda_ufunc import _core

    f = vectorize(["int64(int64)"], target="cuda")(is_even)
    for variant in (0, 1):
        _core.compile_ptx(f._variant_source(0, variant)[1], (9, 0))
    n = np.arange(30, dtype=np.int64)
    np.testing.assert_array_equal(f(n), [is_even(int(v)) for v in n])


def test_function_without_a_return_value_is_a_compile_error():
    with pytest.raises(CompileError, match="never returns a value.*float64"):
        vectorize(["float64(float64)"])(no_return_value)
    with pytest.raises(CompileError, match="never returns a value"):
        translate(no_return_value, (float64,), return_type=float64)
    assert translate(no_return_value, (float64,)).return_type is None


def test_self_recursion_declared_while_its_name_is_unbound():
    # With a signature, the function is translated while `def` runs, before its name (a
    # module global or a closure cell) is bound: the call to itself is the recursion.
    @cuda.jit("i8(i8)", device=True)
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    def make():
        @cuda.jit("i8(i8)", device=True)
        def fib_inner(n):
            return n if n < 2 else fib_inner(n - 1) + fib_inner(n - 2)
        return fib_inner

    fib_inner = make()

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = fib(i) * 1000 + fib_inner(i)

    out = np.zeros(12, np.int64)
    k[1, 16](out)
    fibs = [0, 1]
    while len(fibs) < 12:
        fibs.append(fibs[-1] + fibs[-2])
    np.testing.assert_array_equal(out, [f * 1000 + f for f in fibs])


def runaway(x):
    return runaway(x)


def growing(n):
    if n <= 0:
        return None
    return (n, growing(n - 1))


def test_unresolvable_recursions_are_named_as_numba_does():
    with pytest.raises(CompileError, match="cannot type infer runaway recursion"):
        translate(runaway, (int64,))
    with pytest.raises(CompileError, match="Return type of recursive function does not converge"):
        translate(growing, (int64,))


# ---- item 14: long code --------------------------------------------------------------------


def _module(tmp_path, name, text):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_long_sums_and_elif_chains_translate(tmp_path):
    terms = " + ".join(f"x * {k % 7 + 1} - {k % 3}" for k in range(700))
    branches = ["    if x < 0:\n        return -1"]
    branches += [f"    elif x == {k}:\n        return {k * k % 1000}" for k in range(600)]
    text = (f"def long_sum(x):\n    return {terms}\n\n\n"
            "def long_elif(x):\n" + "\n".join(branches) + "\n    else:\n        return 7\n")
    mod = _module(tmp_path, "longcode", text)
    cases = [hr.Case(mod.long_sum, (int64,)), hr.Case(mod.long_sum, (float64,)),
             hr.Case(mod.long_elif, (int32,))]
    hr.build(cases)
    ints = np.array([-5, 0, 1, 2, 3, 599, 600, 601, 2**40], dtype=np.int64)
    hr.check(cases[0], ints)
    hr.check(cases[1], np.array([0.5, -1.25, 1e300, np.nan, -0.0]), ulps=4)
    hr.check(cases[2], np.arange(-3, 700, dtype=np.int32))


# ---- item 15: range() near the int64 limits ------------------------------------------------


def range_count(start, stop, step):
    c = 0
    last = 0
    for i in range(start, stop, step):
        c += 1
        last = i
    return c * 1000003 + last % 1000003


def range_count_const_step(n):
    c = 0
    for i in range(0, n, 2**62):  # noqa: B007
        c += 1
    for j in range(n, -n - 1, -(2**62)):  # noqa: B007
        c += 100
    return c


def test_range_runs_python_iteration_count_near_int64_limits():
    big, small = 2**63 - 1, -2**63
    starts = np.array([0, 0, big, small, small, 5, 5, -7, big - 3, small + 3, 0], np.int64)
    stops = np.array([big, big, small, big, big, 100, -100, 7, big, small, 0], np.int64)
    steps = np.array([2**62, 3, -2**62, 2**62 + 5, big, 7, -9, 0, 1, -1, 5], np.int64)
    keep = steps != 0  # a zero step raises in Python (the kernel runs no iteration)
    cases = [hr.Case(range_count, (int64, int64, int64)),
             hr.Case(range_count_const_step, (int64,))]
    hr.build(cases)
    ok = np.array([s != 3 and abs(s) != 1 for s in steps])  # skip the 2**61-long loops
    sel = keep & ok
    hr.check(cases[0], starts[sel], stops[sel], steps[sel])
    got = hr.run_compiled(cases[0], starts[~keep], stops[~keep], steps[~keep])
    assert got[0] == 0
    hr.check(cases[1], np.array([big, 2**62, 5, 0, -1], np.int64))


# ---- item 16: math results are weak Python floats ------------------------------------------


def weak_exp(a, b):
    return (-1 * a) / math.exp(-abs(b))


def weak_mix(a, b):
    return a * math.sqrt(b) + math.atan2(b, 2.0) - cmath_abs(b)


def cmath_abs(b):
    return abs(math.cos(b))


def test_math_results_are_weak_beside_float32():
    assert translate(weak_exp, (float32, float64)).return_type == float32
    assert translate(weak_mix, (float32, int64)).return_type == float32
    # float32 arguments keep Numba's single-precision functions and type.
    assert translate(lambda x: math.sin(x), (float32,)).return_type == float32
    assert translate(lambda x: math.sin(x), (float64,)).return_type == float64
    cases = [hr.Case(weak_exp, (float32, float64)), hr.Case(weak_mix, (float32, int64))]
    hr.build(cases)
    a = np.array([1.5, -2.0, 0.0, -0.0, np.inf, np.nan, 3e38, 1e-3], np.float32)
    b = np.array([0.5, 80.0, -1.0, 1e300, 2.0, 0.0, -0.5, 700.0])
    hr.check(cases[0], a, b, ulps=1)
    hr.check(cases[1], a, np.array([0, 1, 4, 9, 100, 3, 2**40, 7], np.int64), ulps=2)


# ---- item 17: out-of-range casts and integer powers ----------------------------------------

def to_int64(x):
    return np.int64(x)


def to_int32(x):
    return np.int32(x)


def to_uint64(x):
    return np.uint64(x)


def to_int8(x):
    return np.int8(x)


def u64_to_i64(x):
    return np.int64(x)


@pytest.mark.parametrize("fn", [to_int64, to_int32, to_uint64, to_int8])
@pytest.mark.parametrize("src", [float32, float64])
def test_float_to_int_casts_match_numpy(fn, src):
    case = hr.Case(fn, (src,))
    hr.build([case])
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 2.0**63, -2.0**63,
                  2.0**64, 1.9e19, 255.7, -1.5, -129.0, 300.0, 0.0, -0.0], dtype=src.dtype)
    got = hr.run_compiled(case, x)
    with np.errstate(all="ignore"):
        want = x.astype(case.out_type.dtype)
    np.testing.assert_array_equal(got, want, err_msg=f"{fn.__name__}({src})")


def test_uint64_to_int64_wraps_like_numpy():
    case = hr.Case(u64_to_i64, (uint64,))
    hr.build([case])
    x = np.array([0, 1, 2**63 - 1, 2**63, 2**64 - 1], np.uint64)
    np.testing.assert_array_equal(hr.run_compiled(case, x), x.astype(np.int64))


# ---- item 9 (partly): int.bit_count, math.remainder -----------------------------------------

def bits(x):
    return int(x).bit_count() + x.bit_count()


def ubits(x):
    return x.bit_count()  # int(x) would leave int64's range for large uint64


def ieee_remainder(x, y):
    return math.remainder(x, y)


def test_bit_count_and_remainder_match_python():
    cases = [hr.Case(bits, (int32,)), hr.Case(ubits, (uint64,)), hr.Case(bits, (int64,)),
             hr.Case(ieee_remainder, (float64, float64)),
             hr.Case(ieee_remainder, (float32, float32))]
    hr.build(cases)
    hr.check(cases[0], hr.edge_values(int32))
    hr.check(cases[1], np.array([0, 1, 2**63, 2**64 - 1, 12345], np.uint64))
    hr.check(cases[2], hr.edge_values(int64))
    hr.check(cases[3], *hr.pairs(float64, float64))
    # float32 arguments compute in single precision (Numba's rule): equal to Python's
    # double result rounded, up to float32's own rounding.
    x, y = hr.pairs(float32, float32)
    hr.check(cases[4], x, y, ulps=1)


# ---- item 12 (partly): match_all_sync in a partial warp --------------------------------------

def test_match_all_sync_in_a_partial_warp_returns_the_live_lanes():
    @cuda.jit
    def k(out):
        i = cuda.threadIdx.x
        mask, pred = cuda.match_all_sync(0xFFFFFFFF, 7)  # Numba: (mask, predicate)
        out[i] = mask if pred else 1

    out = np.zeros(40, np.uint32)
    k[1, 40](out)  # the second warp has 8 lanes
    np.testing.assert_array_equal(out[:32], 0xFFFFFFFF)
    np.testing.assert_array_equal(out[32:], 0xFF)


def test_shared_array_shape_from_a_local_constant():
    @cuda.jit
    def k(out):
        n = 32
        shape = (4, 8)
        sm = cuda.shared.array(n, dtype=float32)
        loc = cuda.local.array(shape, int32)
        t = cuda.threadIdx.x
        sm[t] = t * 2
        loc[t % 4, t % 8] = t
        cuda.syncthreads()
        out[t] = sm[n - 1 - t] + loc[t % 4, t % 8] + n

    out = np.zeros(32)
    k[1, 32](out)
    np.testing.assert_array_equal(out, [(31 - t) * 2 + t + 32 for t in range(32)])


def test_real_and_imag_array_views_in_kernels():
    @cuda.jit
    def k(z, out):
        i = cuda.grid(1)
        if i < z.size:
            re = z.real
            im = z.imag
            out[i] = re[i] * 10 + im[i]
            im[i] = -re[i]

    z = (np.arange(6) + 1j * np.arange(6, 12)).astype(np.complex64)
    want_out = z.real * 10 + z.imag
    want_z = z.copy()
    want_z.imag = -z.real
    out = np.full(6, np.nan, np.float32)
    k[1, 8](z, out)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(z, want_z)
    assert ".entry" in next(iter(k.inspect_ptx().values()))


# ---- isinstance, decided at compile time as Python decides it -------------------------------


def describe(x):
    if isinstance(x, bool):
        return 5
    if isinstance(x, (int, np.integer)):
        return 1
    elif isinstance(x, float):  # np.float64 is a float subclass; np.float32 is not
        return 2
    elif isinstance(x, np.floating):
        return 3
    elif isinstance(x, complex):
        return 6
    return 4


@pytest.mark.parametrize("dtype", [np.int8, np.uint64, np.float32, np.float64, np.complex64,
                                   np.complex128, np.bool_])
def test_isinstance_matches_python_on_numpy_values(dtype):
    @cuda.jit
    def k(out, a):
        out[0] = describe(a[0])
        out[1] = describe(7) * 10 + describe(2.5) + describe(True) * 100 + describe(1j) * 1000
        out[2] = isinstance(a, np.ndarray) + isinstance((1, 2), tuple) * 2 + isinstance(a[0], int) * 4

    a = np.ones(1, dtype)
    out = np.zeros(3, np.int64)
    k[1, 1](out, a)
    expect = [describe(a[0]), describe(7) * 10 + describe(2.5) + describe(True) * 100 + 6000,
              1 + 2 + isinstance(a[0], int) * 4]
    np.testing.assert_array_equal(out, expect)


def test_isinstance_prunes_branches_and_accepts_our_types():
    def f(x):
        if isinstance(x, float32):
            r = x * 2
        else:
            r = x.bit_count()  # only valid for integers: never typed for float32
        return r

    t = translate(f, (float32,))
    assert t.return_type == float32
    assert translate(f, (int32,)).return_type is not None

    def bad(x):
        return isinstance(x, 3)

    with pytest.raises(CompileError, match="isinstance\\(\\) needs a class or a tuple of classes"):
        translate(bad, (float64,))
