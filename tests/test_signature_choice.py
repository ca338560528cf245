"""Choosing among declared signatures as Numba's dispatcher does: the signature the
arguments convert to with the fewest unsafe, then safe conversions, then promotions; a tie
is an error for a kernel launch and resolves to the first for a device-function call."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.types import EXACT, PROMOTE, SAFE, UNSAFE, best_signatures, conversion_kind


@pytest.mark.parametrize("src,dst,kind", [
    ("int32", "int32", EXACT),
    ("int8", "int16", PROMOTE), ("uint8", "uint64", PROMOTE),
    ("float32", "float64", PROMOTE), ("complex64", "complex128", PROMOTE),
    ("bool", "int8", SAFE), ("uint8", "int16", SAFE), ("int16", "float32", SAFE),
    ("int32", "float64", SAFE), ("int64", "float64", SAFE), ("uint64", "float64", SAFE),
    ("float64", "complex128", SAFE), ("int64", "complex128", SAFE),
    ("int32", "float32", UNSAFE), ("int64", "float32", UNSAFE), ("float64", "float32", UNSAFE),
    ("float64", "int64", UNSAFE), ("int64", "int32", UNSAFE), ("int8", "uint16", UNSAFE),
    ("complex128", "float64", None), ("complex64", "int64", None),
])
def test_conversion_kinds_follow_numbas_rules(src, dst, kind):
    assert conversion_kind(np.dtype(src), np.dtype(dst)) == kind


def test_the_best_rating_wins_and_ties_are_all_returned():
    assert best_signatures([("a", [UNSAFE, EXACT]), ("b", [SAFE, SAFE, SAFE])]) == ["b"]
    assert best_signatures([("a", [SAFE, PROMOTE]), ("b", [SAFE, EXACT])]) == ["b"]
    assert best_signatures([("a", [UNSAFE, EXACT]), ("b", [EXACT, UNSAFE])]) == ["a", "b"]
    assert best_signatures([]) == []


def add_kernel(r, x, y):
    r[0] = x + y


def add(x, y):
    return x + y


def test_a_kernel_takes_the_signature_its_arguments_convert_to_best():
    f = cuda.jit(["(float64[::1], float32, float32)", "(float64[::1], float64, float64)"])(
        add_kernel)
    r = np.zeros(1)
    f[1, 1](r, np.float32(1), np.float32(2 ** -25))
    assert r[0] == 1.0  # exact float32 match: the sum rounds in float32
    f[1, 1](r, 1, 2 ** -25)  # int64 -> float64 is safe, -> float32 unsafe
    assert r[0] == 1 + 2 ** -25
    assert len(f.overloads) == 2


def test_a_kernel_prefers_safe_over_unsafe_conversions():
    f = cuda.jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])(add_kernel)
    r = np.zeros(1)
    f[1, 1](r, np.int32(1), 2.5)  # int32 -> float64 safe; the int64 array does not match r
    assert r[0] == 3.5
    ri = np.zeros(1, np.int64)
    f[1, 1](ri, 1.5, 2.5)  # only the int64 signature takes ri: floats convert unsafely
    assert ri[0] == 3


def test_a_kernel_refuses_a_tie_between_the_best_signatures():
    f = cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)",
                  "(float64[::1], int64, int64)"])(add_kernel)
    # Numba's wording: the function, the arguments' types as Numba names them, then each
    # of the tied signatures on its own line.
    c_array = r"Array\(float64, 1, 'C', False, aligned=True\)"
    with pytest.raises(TypeError, match=r"Ambiguous overloading for <function add_kernel [^>]*> "
                                        rf"\({c_array}, float64, float64\):\n"
                                        rf"\({c_array}, float32, float64\) -> none\n"
                                        rf"\({c_array}, float64, float32\) -> none\n"
                                        r"\(kernel 'add_kernel'") as err:
        f[1, 1](np.zeros(1), 1.0, 2.0)
    assert "int64" not in str(err.value)  # only the best two are named
    # A strided array argument is 'A' in the message, as Numba's typeof names it.
    with pytest.raises(TypeError, match=r"\(Array\(float64, 1, 'A', False, aligned=True\), "
                                        r"float64, float64\):"):
        f[1, 1](np.zeros(4)[::2], 1.0, 2.0)


def test_a_kernel_refuses_arguments_no_signature_takes():
    f = cuda.jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])(add_kernel)
    with pytest.raises(TypeError, match=r"No matching definition for argument type\(s\) "
                                        r"complex128\[:\], complex128, complex128"):
        f[1, 1](np.zeros(1, np.complex128), 1j, 1j)
    assert len(f.overloads) == 2  # nothing new compiled


def calls(sigs):
    device_add = cuda.jit(sigs, device=True)(add)

    @cuda.jit
    def f(r, x, y):
        r[0] = device_add(x, y)

    return f


def test_a_device_function_takes_the_signature_its_arguments_convert_to_best():
    f = calls(["(float32, float32)", "(float64, float64)"])
    r = np.zeros(1)
    f[1, 1](r, np.float32(1), np.float32(2 ** -25))
    assert r[0] == 1.0
    f[1, 1](r, 1, 2 ** -25)
    assert r[0] == 1 + 2 ** -25
    f = calls(["(int64, int64)", "(float64, float64)"])
    f[1, 1](r, np.int32(1), 2.5)
    assert r[0] == 3.5


def test_a_device_function_resolves_a_tie_and_converts_unsafely():
    r = np.zeros(1)
    calls(["(float32, float64)", "(float64, float32)", "(int64, int64)"])[1, 1](r, 1.5, 2.5)
    assert r[0] == 4.0  # either best signature holds 1.5 and 2.5 exactly
    ri = np.zeros(1, np.int64)
    calls(["(int64, int64)"])[1, 1](ri, 1.5, 2.5)
    assert ri[0] == 3  # each float truncates to int64, as in Numba


def test_a_device_function_refuses_arguments_no_signature_takes():
    with pytest.raises(CompileError, match=r"Invalid use of type\(device function 'add'\) "
                                           r"with parameters \(complex128, complex128\)"):
        calls(["(int64, int64)", "(float64, float64)"])[1, 1](np.zeros(1, np.complex128),
                                                               1j, 1j)
