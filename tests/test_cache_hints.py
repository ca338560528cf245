"""Cache-hint loads and stores (cuda.ldca/ldcg/ldcs/ldlu/ldcv, cuda.stcg/stcs/stwb/stwt),
``numbacuda_ufunc.typeof`` and ``Scalar.bitwidth``.

Values run on the host backend (a plain load/store there); the PTX of every dtype and
operator is compiled by NVRTC and must hold the ``ld.global.<op>.b<bits>`` /
``st.global.<op>.b<bits>`` instruction.
"""

import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, int32, typeof
from numbacuda_ufunc import types as nt
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.types import Array, CPointer

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]
LOADS = ["ca", "cg", "cs", "lu", "cv"]
STORES = ["cg", "cs", "wb", "wt"]


@cuda.jit
def every_hint_1d(r, x):
    # Row k of r receives x through load k; rows 5..8 through store k-5; negative
    # indices wrap as a[i] does.
    for i in range(x.shape[0]):
        r[0, i] = cuda.ldca(x, i)
        r[1, i] = cuda.ldcg(x, i - x.shape[0])
        r[2, i] = cuda.ldcs(x, (i,))
        r[3, i] = cuda.ldlu(x, i)
        r[4, i] = cuda.ldcv(x, i)
        cuda.stcg(r, (5, i), x[i])
        cuda.stcs(r, (6, i), cuda.ldca(x, i))
        cuda.stwb(r, (7, i - x.shape[0]), x[i])
        cuda.stwt(r, (-1, i), x[i])


@cuda.jit
def every_hint_2d(r, x):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            r[0, i, j] = cuda.ldca(x, (i, j))
            r[1, i, j] = cuda.ldcg(x, (i, j))
            r[2, i, j] = cuda.ldcs(x, (i, -x.shape[1] + j))
            r[3, i, j] = cuda.ldlu(x, (i, j))
            r[4, i, j] = cuda.ldcv(x, (i, j))
            cuda.stcg(r, (5, i, j), x[i, j])
            cuda.stcs(r, (6, i, j), x[i, j])
            cuda.stwb(r, (7, i, j), x[i, j])
            cuda.stwt(r, (8, i, j), x[i, j])


def every_hint_pointer(p, out, n):
    for i in range(n):
        out[0, i] = cuda.ldca(p, i)
        out[1, i] = cuda.ldcg(p, i)
        out[2, i] = cuda.ldcs(p, i)
        out[3, i] = cuda.ldlu(p, i)
        out[4, i] = cuda.ldcv(p, i)
        cuda.stcg(p, i, out[0, i])
        cuda.stcs(p, i, out[1, i])
        cuda.stwb(p, i, out[2, i])
        cuda.stwt(p, i, out[3, i])


def _sample(dtype, shape):
    rng = np.random.default_rng(7)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        x.flat[:3] = [np.inf, -0.0, np.nan][: x.size]
        return x
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    x.flat[:2] = [info.min, info.max][: x.size]
    return x


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


def _assert_hints(ptx, bits, loads=LOADS, stores=STORES):
    for op in loads:
        assert f"ld.global.{op}.b{bits}" in ptx, (op, bits)
    for op in stores:
        assert f"st.global.{op}.b{bits}" in ptx, (op, bits)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cache_hints_1d_values_and_ptx(dtype):
    x = _sample(dtype, 7)
    r = np.full((9, 7), 3, dtype)
    every_hint_1d[1, 1](r, x)
    for row in r:
        np.testing.assert_array_equal(row, x)
    ptx = every_hint_1d.inspect_asm(signature=(typeof(r), typeof(x)))
    _assert_hints(ptx, _bits(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cache_hints_2d_values_and_ptx(dtype):
    x = _sample(dtype, (3, 4))
    xf = np.asfortranarray(x)  # any layout: the element is found through its strides
    r = np.full((9, 3, 4), 3, dtype)
    every_hint_2d[1, 1](r, xf)
    for plane in r:
        np.testing.assert_array_equal(plane, x)
    ptx = every_hint_2d.inspect_asm(signature=(typeof(r), typeof(xf)))
    _assert_hints(ptx, _bits(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cache_hints_pointer_ptx(dtype):
    t = typeof(np.zeros(1, dtype)).dtype
    ptx, resty = cuda.compile_ptx(every_hint_pointer, (CPointer(t), t[:, :], nt.intp))
    assert resty is None or resty == nt.void
    _assert_hints(ptx, _bits(dtype))


def test_cache_hints_pointer_values():
    x = _sample(np.float32, 6)
    d = cuda.to_device(x)
    out = cuda.to_device(np.full((5, 6), np.nan, np.float32))
    kernel = cuda.jit((CPointer(float32), float32[:, :], nt.intp))(every_hint_pointer)
    kernel[1, 1](d.__cuda_array_interface__["data"][0], out, 6)
    for row in out.copy_to_host():
        np.testing.assert_array_equal(row, x)
    np.testing.assert_array_equal(d.copy_to_host(), x)


def test_cache_hints_store_converts_value():
    @cuda.jit
    def k(r):
        cuda.stcs(r, 0, 2.75)  # a float into an int32 array: truncated, as r[0] = 2.75
        cuda.stwt(r, 1, True)

    r = np.zeros(2, np.int32)
    k[1, 1](r)
    np.testing.assert_array_equal(r, [2, 1])


@pytest.mark.emulation  # a GPU kernel checks bounds with debug=True only
def test_cache_hints_out_of_bounds_like_indexing():
    @cuda.jit
    def load_past_end(r, x):
        r[0] = cuda.ldcg(x, 5)

    @cuda.jit
    def index_past_end(r, x):
        r[0] = x[5]

    x = np.arange(5, dtype=np.int64)
    with pytest.raises(IndexError) as plain:
        index_past_end[1, 1](np.zeros(1, np.int64), x)
    with pytest.raises(IndexError) as hinted:
        load_past_end[1, 1](np.zeros(1, np.int64), x)
    assert str(hinted.value).partition(":")[2] == str(plain.value).partition(":")[2]
    assert "index 5 is out of bounds for axis 0 with size 5" in str(hinted.value)


def _compile_error(fn, sig, match):
    with pytest.raises(CompileError, match=match):
        cuda.compile_ptx(fn, sig)


def test_cache_hints_bad_indices():
    def float_index(x):
        cuda.ldcs(x, 1.0)

    def two_indices(x):
        cuda.ldcs(x, (1, 2))

    def scalar_index(x):
        cuda.ldcs(x, 1)

    def one_index(x):
        cuda.stcg(x, (1,), 0)

    _compile_error(float_index, (float32[::1],), "float64 is not a valid index")
    _compile_error(two_indices, (float32[::1],), "Expected 1 indices, got 2")
    _compile_error(scalar_index, (float32[:, ::1],), "Expected 2 indices, got a scalar")
    _compile_error(one_index, (float32[:, ::1],), "Expected 2 indices, got 1")


@pytest.mark.parametrize("dtype", [np.complex64, np.bool_])
def test_cache_hints_unsupported_dtypes(dtype):
    def load(r, x):
        r[0] = cuda.ldcs(x, 0)

    def store(r, x):
        cuda.stwb(r, 0, x[0])

    t = typeof(np.zeros(1, dtype))
    _compile_error(load, (t, t), "ldcs requires array of integer or float type")
    _compile_error(store, (t, t), "stwb requires array of integer or float type")


def test_cache_hints_need_an_array():
    def scalar(x):
        cuda.ldca(x, 0)

    _compile_error(scalar, (int32,), r"cuda.ldca\(\): the first argument must be an array")


def test_cache_hints_outside_kernel():
    with pytest.raises(RuntimeError, match="only inside a @cuda.jit kernel"):
        cuda.ldca(np.zeros(3), 0)


# ---- typeof and bitwidth ----------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    (True, nt.bool_), (3, nt.int64), (2.5, nt.float64), (1j, nt.complex128),
    (np.float32(1), nt.float32), (np.uint16(4), nt.uint16), (np.float16(1), nt.float16),
    (np.bool_(False), nt.bool_), (np.complex64(1), nt.complex64),
])
def test_typeof_scalars(value, expected):
    assert typeof(value) == expected


def test_typeof_arrays_layouts():
    a = np.zeros((3, 4), np.float32)
    assert typeof(a) == Array(nt.float32, 2, "C")
    assert typeof(np.asfortranarray(a)) == Array(nt.float32, 2, "F")
    assert typeof(a[:, ::2]) == Array(nt.float32, 2, "A")
    assert typeof(a[:, 1]) == Array(nt.float32, 1, "A")
    assert typeof(np.zeros(5, np.int8)) == Array(nt.int8, 1, "C")
    assert typeof(np.zeros((), np.float64)) == Array(nt.float64, 0, "C")
    assert typeof(np.zeros((2, 3), np.int64)).name == "int64[:, ::1]"


def test_typeof_device_and_interface_arrays():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = cuda.to_device(a)
    assert typeof(d) == Array(nt.float64, 2, "C")
    assert typeof(d[:, 1:3]) == Array(nt.float64, 2, "A")
    assert typeof(cuda.to_device(np.asfortranarray(a))) == Array(nt.float64, 2, "F")

    class Interface:
        __cuda_array_interface__ = {"shape": (4, 3), "strides": (8, 32), "typestr": "<f8",
                                    "data": (d.__cuda_array_interface__["data"][0], False),
                                    "version": 3}

    assert typeof(Interface()) == Array(nt.float64, 2, "F")


def test_typeof_records():
    rec = np.dtype([("x", np.float64), ("y", np.int32)])
    a = np.zeros(3, rec)
    assert typeof(a).dtype == nt.from_dtype(rec)
    assert typeof(a[0]) == nt.from_dtype(rec)


@pytest.mark.parametrize("value", ["text", [1, 2], object(), None, np.array([object()])])
def test_typeof_refuses_other_values(value):
    with pytest.raises(TypeError, match=r"typeof\(\)"):
        typeof(value)


@pytest.mark.parametrize("t", [nt.int8, nt.uint16, nt.float16, nt.int32, nt.float64,
                               nt.complex128, nt.bool_])
def test_bitwidth(t):
    assert t.bitwidth == np.dtype(t.dtype).itemsize * 8
