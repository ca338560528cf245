"""Fixed-width bytes (``S<n>``) and str (``U<n>``) arrays and record fields in kernels
(Numba's CharSeq and UnicodeCharSeq): passed as arguments, and str/bytes constants stored
into their elements. NumPy's item assignment is the oracle: truncated to the width, padded
with NULs, str into ``S`` ASCII only."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.types import CharSeq, UnicodeCharSeq, from_dtype, typeof

VALUES = ["XYZ", "", "exactly12chr", "longer than twelve characters", "é€😀 mixed", "a\x00b"]
BYTES = [b"XYZ", b"", b"exactly12chr", b"longer than twelve bytes", b"\xff\x00\x01"]


def _expected(arr, value, n):
    expected = arr.copy()
    expected[:n] = value
    return expected


def _poisoned(dtype, size):
    fill = "?" * 12 if np.dtype(dtype).kind == "U" else b"?" * 12
    return np.full(size, fill, dtype=dtype)


@pytest.mark.parametrize("value", VALUES)
def test_str_constants_into_unicode_elements(value):
    @cuda.jit
    def store(arr):
        i = cuda.grid(1)
        if i < len(arr) - 1:
            arr[i] = value

    arr = _poisoned("<U12", 9)
    expected = _expected(arr, value, 8)
    store[1, 16](arr)
    np.testing.assert_array_equal(arr, expected)
    assert arr.tobytes() == expected.tobytes()  # the NUL padding too


@pytest.mark.parametrize("value", BYTES + ["ascii str"])
def test_bytes_and_ascii_str_constants_into_bytes_elements(value):
    @cuda.jit
    def store(arr):
        i = cuda.grid(1)
        if i < len(arr) - 1:
            arr[i] = value

    arr = _poisoned("S12", 9)
    expected = _expected(arr, value, 8)
    store[1, 16](arr)
    assert arr.tobytes() == expected.tobytes()


def test_bytes_into_unicode_and_odd_widths_and_2d_device_arrays():
    @cuda.jit
    def store(u, s):
        i, j = cuda.grid(2)
        if i < u.shape[0] and j < u.shape[1]:
            u[i, j] = b"bytes"
            s[i, j] = "str"

    u = cuda.to_device(_poisoned("<U3", 6).reshape(2, 3))
    s = cuda.to_device(np.full((2, 3), b"?????", dtype="S5")[:, ::-1])  # a strided view
    store[(1, 1), (4, 4)](u, s)
    np.testing.assert_array_equal(u.copy_to_host(), np.full((2, 3), "byt", "<U3"))
    np.testing.assert_array_equal(s.copy_to_host(), np.full((2, 3), b"str", "S5"))


@pytest.mark.parametrize("align", [False, True])
def test_constants_into_record_fields(align):
    dt = np.dtype([("x", np.int8), ("u", "<U5"), ("s", "S3"), ("y", np.float64)], align=align)

    @cuda.jit
    def fill(a):
        a[0]["x"] = 1
        a[0]["u"] = "ABCDEFG"
        a[0]["s"] = b"AB"
        a[1].u = "é"
        a[1].s = "xyzw"
        a[1]["y"] = 2.5

    a = np.zeros(2, dt)
    a["u"], a["s"], a["y"] = "?????", b"???", -1.0
    expected = a.copy()
    expected[0]["x"], expected[0]["u"], expected[0]["s"] = 1, "ABCDEFG", b"AB"
    expected[1]["u"], expected[1]["s"], expected[1]["y"] = "é", "xyzw", 2.5
    fill[1, 1](a)
    assert a.tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", ["S4", "<U4"])
def test_device_arrays_of_strings_round_trip(dtype):
    host = np.array(["ab", "", "abcd", "é"[: 1 if dtype == "<U4" else 0]], dtype=dtype)
    dev = cuda.to_device(host)
    assert dev.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(dev.copy_to_host(), host)
    np.testing.assert_array_equal(dev[::-1].copy_to_host(), host[::-1])
    empty = cuda.device_array(3, dtype=dtype)
    assert empty.shape == (3,) and empty.dtype == np.dtype(dtype)


def test_types_are_numba_s():
    assert from_dtype("S12") == CharSeq(12) and from_dtype("<U12") == UnicodeCharSeq(12)
    assert str(CharSeq(12)) == "[char x 12]" and str(UnicodeCharSeq(3)) == "[unichr x 3]"
    assert typeof(np.zeros(2, "U4")).dtype == UnicodeCharSeq(4)
    with pytest.raises(TypeError, match="count must be a positive integer"):
        CharSeq(0)


def test_unsupported_uses_are_compile_errors():
    @cuda.jit
    def read(out, arr):
        out[0] = arr[0]

    with pytest.raises(CompileError, match="reading an element of a <U4 array is not supported"):
        read[1, 1](np.zeros(1, "<U4"), np.zeros(1, "<U4"))

    @cuda.jit
    def number(arr):
        arr[0] = 5

    with pytest.raises(CompileError, match="only str and bytes constants can be stored"):
        number[1, 1](np.zeros(1, "S4"))

    @cuda.jit
    def not_ascii(arr):
        arr[0] = "é"

    with pytest.raises(CompileError, match="cannot store 'é' in an element of type \\|S4"):
        not_ascii[1, 1](np.zeros(1, "S4"))

    @cuda.jit
    def read_field(out, a):
        out[0] = a[0]["s"]

    with pytest.raises(CompileError, match="field 's' .* kernels can store str and bytes"):
        read_field[1, 1](np.zeros(1), np.zeros(1, [("s", "S2")]))


def test_ufuncs_refuse_string_arrays():
    @cuda.vectorize
    def lazy(a):
        return 1

    with pytest.raises(TypeError, match="add_loop: unsupported dtype '<U1'"):
        lazy(np.array(["a", "b"]))

    @cuda.vectorize(["float64(float64)"])
    def eager(a):
        return a

    with pytest.raises(TypeError, match=r"no loop matches the input types \(\|S1\)"):
        eager(np.array([b"a"]))


def test_kernels_with_string_arrays_compile_for_the_gpu():
    @cuda.jit
    def store(u, s):
        u[0] = "GPU"
        s[0] = b"GPU"

    store[1, 1](np.zeros(1, "<U4"), np.zeros(1, "S4"))
    (ptx,) = store.inspect_ptx().values()
    assert ".entry" in ptx and ".const" in ptx
