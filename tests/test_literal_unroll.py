"""literal_unroll and loops over heterogeneous tuples (issue 16, item 6): the body typed
and emitted once per item, as Numba does, over global, closure, argument and local tuples
of numbers, NumPy arrays and device arrays; break, continue and the loop's else keep
Python's meaning. The oracle is the Python function itself; every kernel is also compiled
to PTX by NVRTC."""

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import cuda, float64, int32, int64, literal_unroll
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

RNG = np.random.default_rng(16_6)

MIXED = (1, 2.5, True, -7)
ARRAYS = (np.float64([1.0, -0.0]), np.float64([[1.0, 1.5], [2.0, 3.0]]),
          np.arange(24, dtype=np.int16).reshape(2, 3, 4))
LONG = tuple(range(1, 12))  # more items than a C++ tuple value holds


def _check_kernel(fn, out, *args, launch=(1, 1)):
    """Run ``fn`` as a kernel and as Python on poisoned copies of ``out``; also NVRTC."""
    expected = out.copy()
    fn(expected, *[a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in args])
    k = cuda.jit(fn)
    k[launch](out, *args)
    np.testing.assert_array_equal(out, expected)
    ptx = k.inspect_ptx()
    assert ptx and all(".entry" in p for p in ptx.values())
    return expected


def mixed_numbers(out):
    i = 0
    for c in literal_unroll(MIXED):
        out[i] = c * 2
        i += 1


def arrays_of_any_ndim(out):
    i = 0
    for c in literal_unroll(ARRAYS):
        out[i] = c[0] if c.ndim == 1 else c[0, 1] if c.ndim == 2 else c[1, 2, 3]
        out[i + 3] = c.size + c.ndim * 100
        i += 1


def plain_for_over_arrays(out):
    i = 0
    for c in ARRAYS:  # items that do not unify: unrolled as literal_unroll
        if c.ndim == 1:
            out[i] = c[1]
        else:
            out[i] = c.shape[0] * 10 + c.shape[1]
        i += 1


def break_continue_else(out):
    i = 0
    for c in literal_unroll(LONG):
        if c % 3 == 0:
            continue
        if c > 9:
            break
        out[i] = c
        i += 1
    else:
        out[15] = 99.0  # not reached: the loop breaks
    for c in literal_unroll(MIXED):
        if c > 100:
            break
    else:
        out[14] = 42.0  # reached: no break
    out[13] = i


def nested_unroll(out):
    i = 0
    for a in literal_unroll(MIXED):
        for b in literal_unroll(ARRAYS):
            if b.ndim == 2:
                continue
            for j in range(2):
                if j == 1:
                    break
                out[i] = a * b.size + j
            i += 1


def loop_var_used_after(out):
    c = 0.0
    for c in literal_unroll(MIXED):
        if c > 2:
            break
    out[0] = c
    for d in literal_unroll((1, 2.5)):
        out[1] = d
    out[2] = d


def rebinds_loop_var(out):
    i = 0
    for c in literal_unroll(MIXED):
        c = c * 3 + 1
        out[i] = c
        i += 1


def make_closure_kernel(items):
    def closure(out):
        i = 0
        for c in literal_unroll(items):
            out[i] = c.sum() if False else c[c.size - 1] if c.ndim == 1 else c[0, 0]
            i += 1
    return closure


def local_tuple_of_arrays(out, a, b, x):
    i = 0
    t = (a, b)
    for v in literal_unroll(t):
        for j in range(v.size):
            out[i, j] = v[j] * x
        i += 1
    for v in (b, a):  # plain for: arrays of different dtypes do not unify
        out[i, 0] = v[1] + x
        i += 1
    out[i, 0] = t[1][2] - t[0][3]  # a local tuple of arrays, indexed


def arrays_and_scalars(out, a, b, x):
    i = 0
    for v in literal_unroll((a, b)):  # a NumPy 1-d and a device 2-d array
        if v.ndim == 1:
            out[i, 0] = v[v.shape[0] - 1] * x
        else:
            out[i, 0] = v[1, 0]
            out[i, 1] = v[0, 1]
        i += 1
    for v in literal_unroll((x, i, 2 < 3)):  # numbers of three types
        out[i, 0] = v
        out[i, 1] = v / 2
        i += 1


def argument_tuple(out, t):
    i = 0
    for v in literal_unroll(t):
        out[i] = v + 0.5
        i += 1


def pairs_unpacked(out):
    i = 0
    for p, q in literal_unroll(((1, 2.5), (3, True), (-1, -2))):
        out[i] = p * 10 + q
        i += 1


def test_unroll_global_tuple_of_mixed_numbers():
    _check_kernel(mixed_numbers, np.full(4, np.nan))


def test_unroll_global_tuple_of_numpy_arrays_any_ndim():
    _check_kernel(arrays_of_any_ndim, np.full(6, np.nan))


def test_plain_for_over_arrays_that_do_not_unify_unrolls():
    _check_kernel(plain_for_over_arrays, np.full(3, np.nan))


def test_unroll_break_continue_else():
    got = _check_kernel(break_continue_else, np.full(16, np.nan))
    assert got[15] != 99.0 and got[14] == 42.0  # the oracle took both paths


def test_unroll_nested_with_inner_range_break():
    _check_kernel(nested_unroll, np.full(8, np.nan))


def test_unroll_loop_variable_read_after_the_loop():
    _check_kernel(loop_var_used_after, np.full(3, np.nan))


def test_unroll_loop_variable_rebound_in_body():
    _check_kernel(rebinds_loop_var, np.full(4, np.nan))


def test_unroll_closure_tuple_of_arrays():
    items = (RNG.standard_normal(5), RNG.standard_normal((2, 2)).astype(np.float32),
             np.arange(3, dtype=np.uint8))
    _check_kernel(make_closure_kernel(items), np.full(3, np.nan))


def test_unroll_local_tuple_of_arrays_and_device_arrays():
    a = RNG.standard_normal(4)
    b = cuda.to_device(np.arange(4, dtype=np.int32))
    out = np.full((5, 4), np.nan)
    expected = out.copy()
    local_tuple_of_arrays(expected, a, b.copy_to_host(), 1.5)
    k = cuda.jit(local_tuple_of_arrays)
    k[1, 1](out, a, b, 1.5)
    np.testing.assert_array_equal(out, expected)
    assert ".entry" in next(iter(k.inspect_ptx().values()))


def test_unroll_inline_tuple_mixing_arrays_and_scalars():
    a = RNG.standard_normal(3)
    b = cuda.to_device(np.array([[1, 2], [3, 4]], dtype=np.int64))
    _check_kernel(arrays_and_scalars, np.full((5, 2), np.nan), a, b, -2.25)


@pytest.mark.parametrize("t", [(1, 2.5, True), (np.int8(-3), 4, np.float32(0.25)),
                               (7,)])
def test_unroll_argument_tuple(t):
    _check_kernel(argument_tuple, np.full(3, np.nan), t)


def test_unroll_tuple_items_unpacked():
    _check_kernel(pairs_unpacked, np.full(3, np.nan))


def typed_per_item(x):
    acc = 0
    for v in literal_unroll((x, 2, 0.5, True)):
        acc = acc * 2 + v
    return acc


def dynamic_index(x, i):
    t = (x, 2, -0.5)
    return t[i] + (1, 2, 3, 4, 5, 6)[i % 6]


def long_sum(x):
    s = x
    for v in LONG:
        if v == 4:
            continue
        s += v
    return s


@pytest.mark.parametrize("fn,types,arrays", [
    (typed_per_item, (int32,), [np.arange(-5, 6, dtype=np.int32)]),
    (typed_per_item, (float64,), [hr.edge_values(float64)]),
    (long_sum, (int64,), [np.arange(-3, 4)]),
    (dynamic_index, (float64, int64), [hr.edge_values(float64)[:6], np.arange(-3, 3)]),
])
def test_unroll_in_device_functions_matches_python(fn, types, arrays):
    case = hr.Case(fn, types)
    hr.build([case])
    hr.check(case, *arrays)


def test_tuple_loops_without_source_bytecode_front_end():
    # The lifted loop reads t[i] with i known at run time: items that share a type.
    ns = {"literal_unroll": literal_unroll, "MIXED": MIXED, "ARRAYS": ARRAYS, "LONG": LONG}
    exec(compile("def k(out, t):\n"
                 "    i = 0\n"
                 "    for c in literal_unroll(MIXED):\n"
                 "        if c > 2:\n"
                 "            continue\n"
                 "        out[i] = c * 2\n"
                 "        i += 1\n"
                 "    for c in t:\n"
                 "        if c < 0:\n"
                 "            break\n"
                 "        out[i] = c\n"
                 "        i += 1\n", "<exec>", "exec"), ns)
    _check_kernel(ns["k"], np.full(6, np.nan), (4, 0.5, -1.0, 3))
    exec(compile("def bad(out):\n"
                 "    for c in literal_unroll(ARRAYS):\n"
                 "        out[0] = c.size\n", "<exec>", "exec"), ns)
    with pytest.raises(CompileError, match="unsupported type tuple|do not share one type"):
        cuda.jit(ns["bad"])[1, 1](np.zeros(1))


def test_unroll_errors():
    def not_a_tuple(a):
        s = 0.0
        for v in literal_unroll(a):
            s += v
        return s

    with pytest.raises(CompileError, match=r"literal_unroll\(\) needs a tuple"):
        translate(not_a_tuple, (float64[:],))

    def after_loop_mixed(out):
        for c in literal_unroll(ARRAYS):
            out[0] = c.size
        out[1] = c.size

    with pytest.raises(CompileError, match="incompatible types"):
        cuda.jit(after_loop_mixed)[1, 1](np.zeros(2))
