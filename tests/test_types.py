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
        t.from_dtype(np.dtype("U3"))
    with pytest.raises(TypeError, match="not a dtype"):
        t.from_dtype("nonsense")
