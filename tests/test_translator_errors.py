"""Anything outside the subset raises CompileError (a TypeError) at translation, pointing
at file:line with the source line; never a C++ compiler error."""

import math
import os

import numpy as np
import pytest

from numbacuda_ufunc import complex128, float64, int8, int32
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

UNDEFINED_LATER = 1


def uses_try(x):
    try:
        return x
    except ValueError:
        return 0


def uses_with(x):
    with open("f"):
        return x


def uses_listcomp(x):
    t = [i for i in range(3)]  # noqa: F841
    return x


def uses_genexp(x):
    return max(i for i in range(3))


def uses_yield(x):
    yield x


def uses_string(x):
    s = "abc"  # noqa: F841
    return x


def uses_list(x):
    a = [x, x]  # noqa: F841
    return x


def uses_dict(x):
    d = {1: x}  # noqa: F841
    return x


def uses_keyword(x):
    return np.sqrt(x, out=None)


def uses_builtin_keyword(x):
    return max(x, 1, key=abs)


def uses_undefined(x):
    return x + not_defined_anywhere  # noqa: F821


def helper2(a, b):
    return a + b


def wrong_arity_call(x):
    return helper2(x)


def changing_recursion(n):
    if n <= 0:
        return n
    return changing_recursion(n * 0.5)


def cannot_unify(x):
    # Both values reach the return: one variable of two types. (Were t never read, each
    # assignment would be a variable of its own, as in Numba: see _webs.py.)
    if x > 0:
        t = (x, x)
    else:
        t = x
    return t


def none_sometimes(x):
    if x > 0:
        return x


def is_compare(x):
    return x is x + 1  # identity of two numbers: not supported (x is None is)


def uses_os(x):
    return os.getpid() + x




def uses_raise(x):
    raise ValueError("no")


def uses_math_bad(x):
    return math.factorial(x)


def uses_print(x):
    print(x)
    return x


@pytest.mark.parametrize("fn,pattern", [
    (uses_try, r"unsupported construct 'try'"),
    (uses_with, r"unsupported construct 'with'"),
    (uses_listcomp, r"unsupported construct 'list comprehension'"),
    (uses_genexp, r"unsupported construct 'generator expression'"),
    (uses_yield, r"unsupported construct 'yield'"),
    (uses_string, r"cannot assign string 'abc' to a variable"),
    (uses_list, r"unsupported construct 'list'"),
    (uses_dict, r"unsupported construct 'dict'"),
    (uses_keyword, r"keyword argument 'out' of np.sqrt\(\) is not supported"),
    (uses_builtin_keyword, r"keyword argument 'key' of max\(\) is not supported"),
    (uses_undefined, r"name 'not_defined_anywhere' is not defined"),
    (wrong_arity_call, r"wrong arguments for 'helper2': missing a required argument: 'b'"),
    (changing_recursion, r"recursive call of 'changing_recursion' with changing argument"),
    (cannot_unify, r"variable 't' is assigned incompatible types"),
    (none_sometimes, r"can reach its end without returning a value"),
    (is_compare, r"'is' and 'is not' are supported between enum members only"),
    (uses_os, r"module 'os' cannot be used"),
    (uses_raise, r"unsupported construct 'raise'"),
    (uses_math_bad, r"math.factorial is not supported"),
    (uses_print, r"print\(\) can be used only inside @cuda.jit kernels"),
])
def test_unsupported_construct_raises_compile_error(fn, pattern):
    with pytest.raises(CompileError, match=pattern) as info:
        translate(fn, (int32,))
    message = str(info.value)
    # file:line: ... in function 'name', then the offending source line
    assert "test_translator_errors.py:" in message
    assert f"in function '{fn.__name__}'" in message
    assert message.count("\n") >= 1
    assert isinstance(info.value, TypeError)


def test_error_points_at_the_right_line():
    with pytest.raises(CompileError) as info:
        translate(uses_dict, (int32,))
    line = uses_dict.__code__.co_firstlineno + 1
    assert f"test_translator_errors.py:{line}:" in str(info.value)
    assert "d = {1: x}" in str(info.value)


def test_wrong_number_of_argument_types():
    with pytest.raises(CompileError, match=r"takes 2 arguments \(got 1 argument types\)"):
        translate(helper2, (int32,))


def test_exec_without_source_translates_from_bytecode():
    # It used to be refused ("source unavailable"); tests/test_bytecode_frontend.py has more.
    ns = {}
    exec("def f(x):\n    return x + 1\n", ns)  # noqa: S102 - the point of the test
    assert translate(ns["f"], (int32,)).return_type == int32


def test_not_a_function():
    with pytest.raises(CompileError, match=r"translate\(\): expected a Python function"):
        translate(42, (int32,))


def test_complex_range_rejected():
    # floats are accepted and truncated to int64, as Numba does (issue 34; test_numba_names.py)
    def f(x):
        s = 0
        for i in range(x):
            s += i
        return s

    translate(f, (float64,))
    with pytest.raises(CompileError, match=r"range\(\) arguments must be integers or floats "
                                           r"\(got complex128\)"):
        translate(f, (complex128,))


def test_out_of_range_literal_for_small_ints():
    def f(x):
        return x * 300

    with pytest.raises(CompileError, match=r"300 out of bounds for int8"):
        translate(f, (int8,))


def helper_with_undefined_name(x):
    return floor_not_imported(x)  # noqa: F821


def calls_broken_helper(x):
    return helper_with_undefined_name(x) + 1


def test_error_in_a_callee_names_the_call_chain():
    # Numba's wording: the NameError, then where the failing function was called from.
    with pytest.raises(CompileError) as info:
        translate(calls_broken_helper, (float64,))
    text = str(info.value)
    assert "NameError: name 'floor_not_imported' is not defined in function " \
           "'helper_with_undefined_name'" in text
    assert ("During: resolving callee type: type(CUDADispatcher(<function "
            "helper_with_undefined_name>)), called at " in text)
    assert "in function 'calls_broken_helper'" in text.splitlines()[-1]
