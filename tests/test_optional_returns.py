"""Device functions that return a value on some paths and None on others (Numba's
OptionalType): the caller tests the result with ``is None``/``is not None``, and any other
use reads the value. The Python functions are the oracle; the kernels also build for sm_90
with NVRTC."""

import io
import math

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda, types
from numbacuda_ufunc.errors import CompileError


def positive_plus_one(x):
    if x > 0:
        return x + 1
    else:
        return


def root_or_nothing(x):  # falls off the end on the None path
    if x >= 0.0:
        return math.sqrt(x)


def first_root(a, b):  # passes an optional result on, and adds its own None path
    if a != a:
        return None
    r = root_or_nothing(a)
    if r is not None:
        return r
    return root_or_nothing(b)


positive_plus_one_d = cuda.jit(device=True)(positive_plus_one)
first_root_d = cuda.jit(device=True)(first_root)

SENTINEL = -99


@cuda.jit
def tag_ints(out, xs):
    i = cuda.grid(1)
    if i < xs.size:
        r = positive_plus_one_d(xs[i])
        if r is None:
            out[i] = SENTINEL
        else:
            out[i] = r * 2


@cuda.jit
def roots(out, present, a, b):
    i = cuda.grid(1)
    if i < a.size:
        r = first_root_d(a[i], b[i])
        present[i] = r is not None
        out[i] = -1.0 if r is None else r


def test_integer_results_or_none_match_python():
    rng = np.random.default_rng(5)
    info = np.iinfo(np.int64)
    xs = np.concatenate([rng.integers(-1000, 1000, 200), [0, 1, -1, info.min, info.max // 2 - 1]])
    out = np.zeros_like(xs)
    tag_ints[4, 64](out, xs)
    expect = [SENTINEL if (r := positive_plus_one(int(x))) is None else r * 2 for x in xs]
    np.testing.assert_array_equal(out, expect)


def test_float_results_or_none_match_python_on_edge_values():
    rng = np.random.default_rng(6)
    edge = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-300, -1e-300, 4.0]
    a = np.concatenate([rng.normal(size=100), edge, edge])
    b = np.concatenate([rng.normal(size=100), edge, edge[::-1]])
    out, present = np.zeros_like(a), np.zeros(a.size, np.bool_)
    roots[2, 128](out, present, a, b)
    for k in range(a.size):
        r = first_root(float(a[k]), float(b[k]))
        assert present[k] == (r is not None), (a[k], b[k])
        np.testing.assert_equal(out[k], -1.0 if r is None else r)


def test_the_result_type_is_optional_and_kernels_build_for_sm_90():
    tag_ints[1, 1](np.zeros(1, np.int64), np.ones(1, np.int64))
    roots[1, 1](np.zeros(1), np.zeros(1, np.bool_), np.ones(1), np.ones(1))
    text = io.StringIO()
    roots.inspect_types(file=text)
    assert "r = OptionalType(float64)" in text.getvalue()
    for kernel in (tag_ints, roots):
        ptxs = list(kernel.inspect_asm().values())
        assert ptxs and all(".visible .entry" in ptx for ptx in ptxs)


def test_a_c_abi_wrapper_returns_the_value_of_an_optional_result():
    def wrapper(x):
        return positive_plus_one_d(x)

    ptx, resty = cuda.compile(wrapper, types.int32(types.int32), output="ptx", abi="c")
    assert resty == types.int32 and ".visible .func" in ptx


def test_a_ufunc_or_kernel_body_still_must_return_a_value_on_every_path():
    with pytest.raises(CompileError, match="can reach its end without returning a value"):
        @nu.vectorize(["float64(float64)"], target="cuda")
        def half_defined(x):
            if x > 0:
                return x

        half_defined(np.ones(2))


def test_a_ufunc_reads_an_optional_result_after_testing_it():
    @nu.vectorize(["float64(float64)"], target="cuda")
    def root_or_minus_one(x):
        r = root_or_nothing(x)
        return -1.0 if r is None else r

    x = np.array([4.0, -4.0, 0.0, np.nan, np.inf])
    expect = [-1.0 if (r := root_or_nothing(float(v))) is None else r for v in x]
    np.testing.assert_array_equal(root_or_minus_one(x), expect)
