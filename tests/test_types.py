"""Type objects and signature strings (Numba's spelling)."""

import numpy as np
import pytest

from numbacuda_ufunc import float32, float64, int32, void
from numbacuda_ufunc import types as t


@pytest.mark.parametrize("text,expected", [
    ("float32(float32, float32)", float32(float32, float32)),
    ("f8(f8)", float64(float64)),
    ("void(float32[:,:], float32[:,:])", void(float32[:, :], float32[:, :])),
    ("(f8[:], f8[:])", t.Signature(None, (float64[:], float64[:]))),
    ("int32(int32, i4)", int32(int32, int32)),
    ("c16(c8, b1, u8, intp)", t.complex128(t.complex64, t.bool_, t.uint64, t.intp)),
    ("void(double[::1], single[:, ::1])", void(float64[::1], float32[:, ::1])),
])
def test_parse_signature_forms(text, expected):
    assert t.parse_signature(text) == expected


def test_signature_objects_and_layouts():
    sig = float32(float32, int32)
    assert t.parse_signature(sig) is sig
    assert str(sig) == "float32(float32, int32)"
    assert float32[:, ::1].layout == "C" and float32[::1, :].layout == "F"
    assert float32[:, :].layout == "A" and float32[:, :].ndim == 2
    assert t.from_dtype(np.dtype("<u2")) is t.uint16
    assert t.boolean is t.bool_ and t.double is t.float64


@pytest.mark.parametrize("bad,match", [
    ("float32(float33)", "unknown type name 'float33'"),
    ("float32(", "cannot parse"),
    ("__import__('os')", "unknown type name"),
    ("float32[1:2]", "unexpected constant 2"),
    ("float32[::2]", "unexpected constant 2"),
    ("float32(2)", "unexpected constant"),
    ("f4 + f4", "unexpected BinOp"),
])
def test_bad_signatures(bad, match):
    with pytest.raises(TypeError, match=match):
        t.parse_signature(bad)


def test_array_type_slices_are_checked():
    with pytest.raises(TypeError, match="only ':' and '::1'"):
        float32[1:2]
    with pytest.raises(TypeError, match="take slices"):
        float32[3]


def test_unsupported_dtypes():
    with pytest.raises(TypeError, match="unsupported dtype"):
        t.from_dtype(np.dtype("U"))  # no width
    with pytest.raises(TypeError, match="not a dtype"):
        t.from_dtype("nonsense")


def test_typing_signature_function():
    """Numba's typing.signature(return_type, *args), as its tests and extensions spell it."""
    assert t.signature(float32, int32, int32) == float32(int32, int32)
    assert t.signature(t.void, float32[::1]) == t.Signature(None, (float32[::1],))
    assert t.signature(None, float64) == t.Signature(None, (float64,))
    with pytest.raises(TypeError, match="argument 2 must be a type"):
        t.signature(float32, int32, "int32")
    with pytest.raises(TypeError, match="return type must be a type"):
        t.signature(np.float32, int32)


def test_kernel_and_device_function_take_a_typing_signature():
    from numbacuda_ufunc import cuda

    @cuda.jit(t.signature(t.void, int32[::1]))
    def twice(a):
        a[0] *= 2

    a = np.array([21], np.int32)
    twice[1, 1](a)
    assert a[0] == 42


def test_underlying_float_of_complex_types():
    assert t.complex64.underlying_float == t.float32
    assert t.complex128.underlying_float == t.float64
    sig = t.complex64.underlying_float(t.complex64)  # Numba's form: float32(complex64)
    assert sig.return_type == t.float32 and sig.args == (t.complex64,)
    with pytest.raises(AttributeError, match="float64.*not a complex type"):
        t.float64.underlying_float  # noqa: B018
