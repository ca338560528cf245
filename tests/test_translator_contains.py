"""``x in c`` / ``x not in c`` in translated code: tuples of every origin (written out,
global, closure, argument, local, a call's result; one item type or several), arrays,
range() and strings, against the Python function on the host backend and NVRTC. Random
tuples of ints, floats, NaN and infinities check Python's item-by-item ``==`` (NaN equals
nothing; an int equals the float of its value)."""

import enum
import math

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import bool_, cuda, float32, float64, int8, int32, int64, uint8, uint64
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

LONG = (1, 2.5, -3, 7, 9, 11, math.inf, math.nan, -0.0)  # longer than a constant tuple value
ONE = (4,)
MIXED = (1, "one", None, 2.5, (1, 2))


def make_closure(items):
    def inside(x):
        return x in items
    return inside


closure_in = make_closure((0, -1, 2**31 - 1, 0.5))


def literal_in(x):
    return x in (2, 3)


def literal_not_in(x):
    return x not in (2, 3, -7.25)


def global_long(x):
    return x in LONG


def global_one(x):
    return x not in ONE


def global_mixed(x):
    return x in MIXED


def argument_items(x, y):
    return x in (y, 2 * y, y - 1)


def local_tuple(x, y):
    t = (y, y + 0.5, -y)
    return x in t


def heterogeneous_local(x, y):
    t = (y, 1.5, True)
    u = (x, y)
    # x * 1, not x: Python's identity shortcut would find a NaN x itself
    return (x in t) + 2 * (u in ((1, 2), t, (x, y + 1), (x * 1, y))) + 4 * (y not in u)


def nested_pair(x, y):
    return (x, y) in ((1, 2), (2, 1), (x + 0, x - 0))


def swap(a, b):
    return b, a


def call_result(x, y):
    return 10 * (x in swap(y, 3)) + (y in swap(x, x))


def nested_constants(x):
    t = ((1,), 2, (3, 4, 5, 6, 7))
    # (x in t: a NumPy scalar x compares with a tuple item elementwise in the oracle)
    return 1 * ((x,) in t) + 2 * (2 in t) + 4 * ((3, 4, 5, 6, x) in t) + 8 * ((1,) in t)


def in_branch(x):
    if x in (1, 5, 9):
        return x * 2
    elif x not in (0, 2):
        return -x
    return x


def first_item_side_effect(x):
    n = 0
    for k in range(4):
        if k in (x, x + 1):
            n += 1
    return n


def chained(x):
    return 10 * (-3 < x <= 2 in (2, 3)) + (0 <= x not in (1, 2.5))


def range_stop(x):
    return x in range(10)


def range_step(x):
    return x in range(-5, 20, 3)


def range_negative(x, y):
    return x in range(y, -10, -2)


def range_bool(x):
    return x in range(1, 2)


CASES = [
    (literal_in, (int32,)), (literal_in, (float64,)), (literal_in, (uint8,)),
    (literal_in, (bool_,)), (literal_not_in, (float32,)), (literal_not_in, (int64,)),
    (global_long, (float64,)), (global_long, (int8,)), (global_long, (float32,)),
    (global_one, (float64,)), (global_one, (uint64,)), (global_mixed, (float64,)),
    (global_mixed, (int32,)), (closure_in, (int32,)), (closure_in, (float32,)),
    (in_branch, (int64,)), (nested_constants, (int64,)), (nested_constants, (float32,)), (chained, (int32,)), (chained, (float64,)), (first_item_side_effect, (int32,)),
    (range_stop, (int64,)), (range_stop, (float64,)), (range_stop, (uint64,)),
    (range_step, (int32,)), (range_step, (float32,)), (range_step, (uint64,)),
    (range_bool, (bool_,)),
]
PAIR_CASES = [
    (argument_items, (int32, int32)), (argument_items, (float64, int64)),
    (argument_items, (float32, float64)), (local_tuple, (float64, float64)),
    (local_tuple, (int64, float32)), (heterogeneous_local, (int64, int64)),
    (heterogeneous_local, (float64, int32)), (nested_pair, (int32, float64)),
    (call_result, (int64, int64)), (call_result, (float64, int32)),
]


@pytest.mark.parametrize("fn,types", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_in_matches_python(fn, types):
    case = hr.Case(fn, types)
    hr.build([case])
    hr.check(case, hr.edge_values(types[0]))


@pytest.mark.parametrize("fn,types", PAIR_CASES,
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_in_two_arguments_matches_python(fn, types):
    case = hr.Case(fn, types)
    hr.build([case])
    hr.check(case, *hr.pairs(*types))


def test_in_range_with_run_time_bounds():
    case = hr.Case(range_negative, (int32, int32))
    hr.build([case])
    # small bounds: Python scans the range for NumPy integers, one item at a time
    x, y = np.meshgrid(np.arange(-14, 14), np.arange(-12, 12), indexing="ij")
    assert hr.check(case, x.ravel(), y.ravel()) == x.size
    got = hr.run_compiled(case, x.ravel(), y.ravel())
    assert got.any() and not got.all()


def test_in_range_limits():
    def far(x):
        return x in range(-2**63, 2**63 - 1, 3)

    case = hr.Case(far, (int64,))
    hr.build([case])
    x = np.array([-2**63, -2**63 + 1, -2**63 + 3, 2**63 - 1, 2**63 - 2, 0, 1, 2, -1, -2],
                 dtype=np.int64)
    want = [int(v) in range(-2**63, 2**63 - 1, 3) for v in x]  # Python ints: no scan
    np.testing.assert_array_equal(hr.run_compiled(case, x), want)


def test_in_nan_is_never_found():
    def f(x):
        return (x in (x,)) + 2 * (x in (math.nan, 1.0)) + 4 * (x not in LONG)

    case = hr.Case(f, (float64,))
    hr.build([case])
    got = hr.run_compiled(case, np.array([np.nan, 1.0, 2.5, -np.inf]))
    np.testing.assert_array_equal(got, [4, 3, 1, 5])


def _random_function(rng, k):
    """A function testing its argument against a random tuple of ints, floats, NaN and
    infinities (written out, as a global, and in a local)."""
    pool = [0, 1, -1, 2, 3, -7, 2**31 - 1, 0.5, -0.0, 2.0, 1e300, math.inf, -math.inf,
            math.nan, 7.0, True, False]
    items = tuple(pool[i] for i in rng.integers(0, len(pool), rng.integers(1, 9)))
    text = (f"def rand_{k}(x):\n"
            f"    t = (x + 1, -x, {items[0]!r})\n"
            f"    return 1 * (x in {items!r}) + 2 * (x in G) + 4 * (x + 1 not in G)"
            f" + 8 * (x in t)\n")
    ns = {"G": items, "inf": math.inf, "nan": math.nan}
    # No source file: the bytecode front end lifts these (test_in_without_source too).
    exec(compile(text, f"<rand {k}>", "exec"), ns)
    return ns[f"rand_{k}"], items


@pytest.mark.parametrize("seed", range(4))
def test_in_random_tuples_match_python(seed):
    rng = np.random.default_rng(seed)
    cases, inputs = [], []
    for k in range(6):
        fn, items = _random_function(rng, k)
        for t in (int64, float64, float32, int8):
            cases.append(hr.Case(fn, (t,)))
            values = [v for v in items if isinstance(v, (int, float))] + \
                list(rng.integers(-8, 8, 8)) + [np.nan, np.inf, 0.5, 2**31 - 1]
            arr = np.array(values, dtype=np.float64)
            with np.errstate(invalid="ignore", over="ignore"):
                cast = arr.astype(t.dtype) if t.dtype.kind == "f" else \
                    arr[np.isfinite(arr) & (np.abs(arr) < np.iinfo(t.dtype).max)].astype(t.dtype)
            inputs.append(cast)
    hr.build(cases)
    for case, x in zip(cases, inputs):
        hr.check(case, x)


def test_in_array():
    @cuda.jit
    def k(a, xs, out):
        i = cuda.grid(1)
        if i < xs.size:
            out[i] = (xs[i] in a) + 2 * (xs[i] not in a[::2, 1:])

    a = np.arange(12, dtype=np.float32).reshape(3, 4) * 1.5
    a[1, 2] = np.nan
    xs = np.array([0, 1.5, 3, 4.5, 16.5, np.nan, 2, -1, 15], dtype=np.float64)
    out = np.full(xs.size, -1, dtype=np.int64)
    k[1, 16](a, xs, out)
    want = [int(any(v == e for e in a.ravel())) + 2 * int(not any(v == e for e in
                                                                  a[::2, 1:].ravel()))
            for v in xs]
    np.testing.assert_array_equal(out, want)


def test_in_kernel_debug_like_numba():
    # numba-cuda's test_debug_function_calls_internal_impl, run and checked
    @cuda.jit(("int32[:]", "int32[:]"), debug=True, opt=False)
    def f(inp, outp):
        outp[0] = 1 if inp[0] in (2, 3) else 3

    for v, want in ((2, 1), (3, 1), (4, 3), (-2, 3)):
        out = np.zeros(1, np.int32)
        f[1, 1](np.array([v], np.int32), out)
        assert out[0] == want


def test_in_strings_are_known_at_compile_time():
    def f(x):
        return ("b" in "abc") + 2 * ("z" in "abc") + 4 * ("one" in MIXED) + 8 * ("two" in (x,))

    case = hr.Case(f, (int32,))
    hr.build([case])
    np.testing.assert_array_equal(hr.run_compiled(case, np.array([0, 1], np.int32)), [5, 5])


class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3


class Size(enum.IntEnum):
    small = 1
    large = 5


WARM = (Color.red, Color.green)


def test_in_enum_members():
    @cuda.jit
    def k(sizes, out):
        for i in range(sizes.size):
            c = Color.blue if sizes[i] > 2 else Color.red
            out[i] = (c in WARM) + 2 * (Size.large in (sizes[i], 7)) + 4 * (c not in (1, 3))

    sizes = np.array([0, 1, 5, 7], np.int64)
    out = np.full(4, -1, np.int64)
    k[1, 1](sizes, out)
    want = []
    for v in sizes:
        c = Color.blue if v > 2 else Color.red
        want.append((c in WARM) + 2 * (Size.large in (v, 7)) + 4 * (c not in (1, 3)))
    np.testing.assert_array_equal(out, want)


def test_in_without_source():
    ns = {}
    exec("def g(x):\n    return 2 * (x in (1, 2.5)) + (x not in (3,))\n", ns)
    case = hr.Case(ns["g"], (float64,))
    hr.build([case])
    hr.check(case, hr.edge_values(float64))


def in_number(x):
    return x in 3


def number_in_string(x):
    return x in "abc"


def container_in_the_middle(x):
    return x in (1, 2) < 3


def zero_step(x):
    return x in range(1, 5, 0)


def float_range(x):
    return x in range(1.5)


@pytest.mark.parametrize("fn,match", [
    (in_number, r"'in' needs a tuple, an array, a range\(\) or a string"),
    (number_in_string, r"'in <string>' requires a string as left operand"),
    (container_in_the_middle, r"supported only as its last comparison"),
    (zero_step, r"range\(\) arg 3 must not be zero"),
    (float_range, r"range\(\) arguments must be integers"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_in_errors(fn, match):
    with pytest.raises(CompileError, match=match):
        translate(fn, (int32,))


def test_in_tuple_holding_an_array_is_refused():
    @cuda.jit
    def k(a, out):
        out[0] = 1 in (a, 2)

    with pytest.raises(CompileError, match="holding an array"):
        k[1, 1](np.zeros(2), np.zeros(1))


def test_in_number_never_equals_a_tuple_item():
    # Python ints (not NumPy scalars, which compare with a tuple elementwise)
    def f(x):
        return (x in ((x,), 3)) + 2 * ((x,) in (x, (x + 0,)))

    case = hr.Case(f, (int64,))
    hr.build([case])
    got = hr.run_compiled(case, np.array([3, 1, -2]))
    np.testing.assert_array_equal(got, [f(3), f(1), f(-2)])
    assert list(got) == [3, 2, 2]
