"""The operator module in translated code (operator.add, or a function passed around as a
value, as Numba's tests do with `op(a[i], b[i])`): the same typing and results as the
operator it names, against the Python function on NumPy scalars, edge values included."""

import operator
from operator import mul as imported_mul

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int8, int64, uint32

BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lt", "le", "gt", "ge",
          "eq", "ne", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod"]
BITWISE = ["and_", "or_", "xor", "lshift", "rshift", "iand", "ior", "ixor"]
UNARY = ["neg", "pos", "abs", "not_", "truth"]


def _binary(name):
    op = getattr(operator, name)

    def f(a, b):
        return op(a, b)

    f.__name__ = f"op_{name.rstrip('_')}"
    return f


def _unary(name):
    op = getattr(operator, name)

    def f(a):
        return op(a)

    f.__name__ = f"op_{name.rstrip('_')}"
    return f


def _invert(a):
    return operator.invert(a) + operator.inv(a)


def _attribute_and_imported(a, b):
    return operator.sub(imported_mul(a, b), a)


@pytest.mark.parametrize("t", [int8, uint32, int64, float32, float64])
def test_operator_functions_match_python(t):
    names = BINARY + (BITWISE if t.dtype.kind in "iu" else [])
    cases = [hr.Case(_binary(n), (t, t)) for n in names]
    cases += [hr.Case(_attribute_and_imported, (t, t))]
    unary = [hr.Case(_unary(n), (t,)) for n in UNARY]
    if t.dtype.kind in "iu":
        unary.append(hr.Case(_invert, (t,)))
    hr.build(cases + unary)
    a, b = hr.pairs(t, t)
    for case in cases:
        hr.check(case, a, b)
    for case in unary:
        hr.check(case, hr.edge_values(t))


def test_operator_passed_as_a_value_to_kernels():
    def make(op):
        @cuda.jit
        def k(r, a, b):
            i = cuda.grid(1)
            if i < r.size:
                r[i] = op(a[i], b[i])
        return k

    a = np.array([1.5, -2.0, 3.0, 0.0])
    b = np.array([0.5, 4.0, -3.0, -0.0])
    for op in (operator.add, operator.truediv, operator.ge):
        r = np.full(4, np.nan)
        make(op)[1, 4](r, a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            np.testing.assert_array_equal(r, op(a, b).astype(np.float64))


def test_operator_errors_name_the_function():
    from numbacuda_ufunc.errors import CompileError

    def two_args_to_neg(a, b):
        return operator.neg(a, b)

    with pytest.raises(CompileError, match=r"operator.neg\(\) takes 1 arguments \(got 2\)"):
        hr.Case(two_args_to_neg, (float64, float64))

    def unknown(a):
        return operator.matmul(a, a)

    with pytest.raises(CompileError, match="operator.matmul is not supported"):
        hr.Case(unknown, (float64,))


def test_closures_of_one_source_with_different_values_stay_apart():
    """Two device functions made by one factory have the same source and argument types;
    a kernel calling both must run each with its own captured value and operator (their
    C++ names used to be equal, so the unit kept only the first definition)."""
    def make(op, k):
        @cuda.jit(device=True)
        def combine(x):
            return op(x, k)
        return combine

    plus_two, times_ten = make(operator.add, 2.0), make(operator.mul, 10.0)

    @cuda.jit
    def both(out, x):
        out[0] = plus_two(x[0])
        out[1] = times_ten(x[0])

    out = np.zeros(2)
    both[1, 1](out, np.array([1.5]))
    np.testing.assert_array_equal(out, [3.5, 15.0])
