"""Operators on every scalar dtype and mixed pairs, against the Python function on NumPy
scalars: NumPy 2 promotion, weak literals, wrap-around, Python floor division/modulo,
integer division by zero -> 0, IEEE floats. Exact comparison (signed zeros included)."""

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import (
    bool_,
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from numbacuda_ufunc.compiler import translate


def op_add(a, b):
    return a + b


def op_sub(a, b):
    return a - b


def op_mul(a, b):
    return a * b


def op_truediv(a, b):
    return a / b


def op_floordiv(a, b):
    return a // b


def op_mod(a, b):
    return a % b


def op_pow(a, b):
    return a ** b


def op_and(a, b):
    return a & b


def op_or(a, b):
    return a | b


def op_xor(a, b):
    return a ^ b


def op_lshift(a, b):
    return a << b


def op_rshift(a, b):
    return a >> b


def cmp_lt(a, b):
    return a < b


def cmp_le(a, b):
    return a <= b


def cmp_eq(a, b):
    return a == b


def cmp_ne(a, b):
    return a != b


def cmp_gt(a, b):
    return a > b


def cmp_ge(a, b):
    return a >= b


def neg(a):
    return -a


def pos(a):
    return +a


def inv(a):
    return ~a


def not_(a):
    return not a


def lit_int_right(a):
    return a * 3 - 1


def lit_float_right(a):
    return a * 2.5 + 0.5


def lit_int_left(a):
    return 7 // a + 100 % a


def lit_pow(a):
    return a ** 2


def lit_complex(a):
    return a + 1j


ARITH = [op_add, op_sub, op_mul, op_truediv, op_floordiv, op_mod, op_pow]
BITS = [op_and, op_or, op_xor, op_lshift, op_rshift]
CMPS = [cmp_lt, cmp_le, cmp_eq, cmp_ne, cmp_gt, cmp_ge]
INTS = [int8, int16, int32, int64, uint8, uint16, uint32, uint64]
FLOATS = [float32, float64]
SAME = [(t, t) for t in INTS + FLOATS + [bool_]]
MIXED = [(int8, uint8), (int32, int64), (uint64, int64), (int16, uint32), (int32, float32),
         (int64, float64), (float32, float64), (bool_, int8), (uint8, float32),
         (int8, float64), (bool_, float32)]
COMPLEX = [(complex64, complex64), (complex128, complex128), (complex64, float64),
           (float32, complex128)]


def _rejects(fn, types):
    try:
        translate(fn, types)
    except TypeError:
        return True
    return False


def _cases():
    cases = []
    for fn in ARITH + BITS + CMPS:
        for ta, tb in SAME + MIXED + (COMPLEX if fn in ARITH[:4] + CMPS[2:4] else []):
            if fn in BITS and (ta.kind in "fc" or tb.kind in "fc"):
                continue
            if _rejects(fn, (ta, tb)):  # NumPy refuses too (checked in test_rejects_*)
                continue
            cases.append(hr.Case(fn, (ta, tb)))
    for fn in (neg, pos, inv, not_, lit_int_right, lit_float_right, lit_int_left, lit_pow,
               lit_complex):
        for t in INTS + FLOATS + [bool_, complex64, complex128]:
            if _rejects(fn, (t,)):
                continue
            cases.append(hr.Case(fn, (t,)))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def built():
    hr.build(CASES)
    return True


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.fn.__name__}-" + "-".join(
    t.name for t in c.arg_types))
def test_operator_matches_numpy(built, case):
    # Float ** is C pow on both sides, but NumPy's SIMD loops and CUDA's pow are within
    # 2 ULP, not correctly rounded; every other operator is exact.
    ulps = 2 if case.fn in (op_pow, lit_pow) and case.out_type.kind in "fc" else 0
    if len(case.arg_types) == 2:
        a, b = hr.pairs(*case.arg_types)
        hr.check(case, a, b, ulps=ulps)
    else:
        hr.check(case, hr.edge_values(case.arg_types[0]), ulps=ulps)


def test_operator_coverage_is_broad():
    # The filter above must not silently drop whole families of operators.
    names = {c.fn.__name__ for c in CASES}
    assert {f.__name__ for f in ARITH + BITS + CMPS} <= names
    assert len(CASES) > 250


@pytest.mark.parametrize("fn,types", [
    (op_floordiv, (complex128, complex128)), (op_mod, (complex64, float32)),
    (op_and, (float32, float32)), (op_lshift, (float64, int32)), (op_sub, (bool_, bool_)),
    (neg, (bool_,)), (inv, (float64,)),
])
def test_rejects_what_numpy_rejects(fn, types):
    with pytest.raises(TypeError, match=r"test_translator_arith.py:\d+: .* in function"):
        translate(fn, types)


def test_promotion_follows_numpy2():
    assert translate(op_add, (int32, float32)).return_type == float64
    assert translate(op_add, (uint64, int64)).return_type == float64
    assert translate(lit_float_right, (float32,)).return_type == float32
    assert translate(lit_int_right, (int8,)).return_type == int8
    assert translate(op_truediv, (int8, int8)).return_type == float64
    assert translate(cmp_lt, (float32, int64)).return_type == bool_


def test_weak_literal_out_of_range_is_an_error():
    def f(x):
        return x + 1000

    with pytest.raises(TypeError, match="1000 out of bounds for int8"):
        translate(f, (int8,))


def test_integer_wraparound_and_division_by_zero():
    case = hr.Case(op_floordiv, (int32, int32))
    case2 = hr.Case(op_mod, (int64, int64))
    case3 = hr.Case(op_mul, (int8, int8))
    hr.build([case, case2, case3], nvrtc=False)
    got = hr.run_compiled(case, np.array([7, -7, 5, -2**31], "i4"), np.array([0, 2, -2, -1], "i4"))
    assert got.tolist() == [0, -4, -3, -2**31]
    got = hr.run_compiled(case2, np.array([7, -7, 7], "i8"), np.array([0, 3, -3], "i8"))
    assert got.tolist() == [0, 2, -2]
    got = hr.run_compiled(case3, np.array([100], "i1"), np.array([3], "i1"))
    assert got.tolist() == [44]
