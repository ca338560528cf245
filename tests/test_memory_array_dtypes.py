"""cuda.shared.array / cuda.local.array with the dtype given every way Numba accepts (one
of our types, a NumPy type, a np.dtype, a string, a record dtype), the element type the
kernel records for them, and Numba's typing-error text for shapes that are not
compile-time integers (float, array, non-literal, list)."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, int32, void
from numbacuda_ufunc.errors import CompileError

_PAIR = np.dtype([("a", np.int32), ("b", np.float64)], align=True)
GLOBAL_N = 5
GLOBAL_SHAPE = (2, 3)
GLOBAL_LIST = [2, 3]


def _round_trip(space, dtype):
    """A kernel that moves x through a 10-element shared/local array of ``dtype``."""
    if space == "shared":
        def k(x):
            s = cuda.shared.array(10, dtype=dtype)
            i = cuda.threadIdx.x
            s[i] = x[i] * 2
            cuda.syncthreads()
            x[i] = s[9 - i]
    else:
        def k(x):
            s = cuda.local.array(10, dtype=dtype)
            for i in range(10):
                s[i] = x[i] * 2
            for i in range(10):
                x[i] = s[9 - i]
    return k


@pytest.mark.parametrize("space", ["shared", "local"])
@pytest.mark.parametrize("dtype", [int32, np.int32, np.dtype(np.int32), "int32", "i4"])
def test_dtype_forms(space, dtype):
    k = cuda.jit(void(int32[::1]))(_round_trip(space, dtype))
    x = np.arange(-5, 5, dtype=np.int32)
    threads = 10 if space == "shared" else 1
    k[1, threads](x)
    np.testing.assert_array_equal(x, (np.arange(-5, 5) * 2)[::-1])
    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert typemap["s"].dtype == int32 and typemap["s"].ndim == 1
    ptx = next(iter(k.inspect_ptx(cc=(9, 0)).values()))
    assert ".target sm_90" in ptx


@pytest.mark.parametrize("dtype", [np.float16, "float16", np.complex64, "float64"])
def test_other_element_types(dtype):
    def k(x):
        s = cuda.local.array(4, dtype=dtype)
        for i in range(4):
            s[i] = x[i]
        for i in range(4):
            x[i] = s[3 - i] + s[i]

    x = np.array([1.5, -0.0, np.inf, -2.25], dtype=np.dtype(dtype))
    want = x.copy()
    want[:] = x[::-1] + x
    cuda.jit(k)[1, 1](x)
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("space", ["shared", "local"])
def test_record_dtype(space):
    if space == "shared":
        def k(a, out):
            s = cuda.shared.array(4, dtype=_PAIR)
            i = cuda.threadIdx.x
            s[i] = a[i]
            s[i].b += 0.5
            cuda.syncthreads()
            out[i] = s[3 - i]
    else:
        def k(a, out):
            s = cuda.local.array(4, dtype=_PAIR)
            for i in range(4):
                s[i] = a[i]
                s[i].b += 0.5
            for i in range(4):
                out[i] = s[3 - i]

    a = np.zeros(4, _PAIR)
    a["a"] = [1, -2, 3, 2**31 - 1]
    a["b"] = [0.25, -1.0, np.nan, 1e300]
    out = np.zeros(4, _PAIR)
    cuda.jit(k)[1, 4 if space == "shared" else 1](a, out)
    np.testing.assert_array_equal(out["a"], a["a"][::-1])
    np.testing.assert_array_equal(out["b"], (a["b"] + 0.5)[::-1])


def test_global_shapes():
    def k(out):
        s = cuda.shared.array(GLOBAL_N, dtype=float32)
        t = cuda.local.array(GLOBAL_SHAPE, dtype="float64")
        u = cuda.local.array((GLOBAL_N, 2), dtype=np.int8)
        out[0] = s.size
        out[1] = t.shape[0] * 10 + t.shape[1]
        out[2] = u.shape[0] * 10 + u.shape[1]

    out = np.zeros(3)
    cuda.jit(k)[1, 1](out)
    assert out.tolist() == [5, 23, 52]


def _numba_error(fn, sig, shape_text, space="shared"):
    expected = (f"No implementation of function Function(<function {space}.array>) found "
                f"for signature:\n \n >>> array(shape={shape_text}, dtype=class(float32))")
    with pytest.raises(CompileError) as info:
        cuda.jit(sig)(fn)
    assert expected in str(info.value)
    assert "shape must be an integer or a tuple of integers known at compile time" in \
        str(info.value)


def test_invalid_shapes_give_numbas_typing_error():
    def float_shape(a):
        s = cuda.shared.array(shape=a[0], dtype=float32)
        a[0] = s[0]

    def row_in_tuple(a):
        s = cuda.shared.array(shape=(1, a[0]), dtype=float32)
        a[0, 0] = s[0, 0]

    def int_in_tuple(a):
        s = cuda.shared.array(shape=(1, a[0]), dtype=float32)
        a[0] = s[0, 0]

    def list_shape(a):
        s = cuda.shared.array(shape=[GLOBAL_N, 6], dtype=float32)
        a[0, 0] = s[0, 0]

    def local_list(a):
        s = cuda.local.array(GLOBAL_LIST[0], dtype=float32)
        a[0] = s[0]

    _numba_error(float_shape, (float32[:],), "float32")
    _numba_error(float_shape, (int32[:],), "int32")
    _numba_error(row_in_tuple, (float32[:, :],), "Tuple(Literal[int](1), array(float32, 1d, A))")
    _numba_error(int_in_tuple, (int32[:],), "Tuple(Literal[int](1), int32)")
    _numba_error(list_shape, (float32[:, :],), "list(int64)<iv=[5, 6]>")
    with pytest.raises(CompileError):
        cuda.jit((float32[:],))(local_list)


def test_invalid_dtypes():
    def bad_string(x):
        s = cuda.local.array(10, dtype="int33")
        x[0] = s[0]

    with pytest.raises(CompileError, match="Invalid NumPy dtype specified: 'int33'"):
        cuda.jit(void(int32[::1]))(bad_string)

    def not_a_type(x):
        s = cuda.shared.array(10, dtype=3)
        x[0] = s[0]

    with pytest.raises(CompileError, match="dtype must be a scalar type"):
        cuda.jit(void(int32[::1]))(not_a_type)

    def zero_dim(x):
        s = cuda.local.array((2, 0), dtype=np.int32)
        x[0] = s[0, 0]

    with pytest.raises(CompileError, match="every dimension of the shape must be positive"):
        cuda.jit(void(int32[::1]))(zero_dim)


OBJECT = np.dtype("O")


@pytest.mark.parametrize("space", ["shared", "local"])
def test_dtype_made_by_np_dtype_in_the_kernel(space):
    if space == "shared":
        def k(x):
            s = cuda.shared.array(10, dtype=np.dtype("int32"))
            t = cuda.shared.array(10, dtype=np.dtype(np.int32))
            i = cuda.threadIdx.x
            s[i] = x[i] * 2
            t[i] = s[i] + 1
            cuda.syncthreads()
            x[i] = t[9 - i]
        threads = 10
    else:
        def k(x):
            s = cuda.local.array(10, dtype=np.dtype("i4"))
            for i in range(10):
                s[i] = x[i] * 2 + 1
            for i in range(10):
                x[i] = s[9 - i]
        threads = 1
    kernel = cuda.jit(void(int32[::1]))(k)
    x = np.arange(-5, 5, dtype=np.int32)
    kernel[1, threads](x)
    np.testing.assert_array_equal(x, (np.arange(-5, 5) * 2 + 1)[::-1])


def test_unsupported_dtype_names_the_variable():
    # numba-cuda's test_invalid_array_type matches "Cannot infer the type of variable 'arr'"
    def object_dtype():
        arr = cuda.shared.array(10, dtype=np.dtype("O"))  # noqa: F841

    def object_global():
        arr = cuda.local.array(10, dtype=OBJECT)  # noqa: F841

    def void_unassigned():
        cuda.local.array(10, dtype=np.dtype("V4"))

    def invalid_name():
        arr = cuda.shared.array(10, dtype=np.dtype("int33"))  # noqa: F841

    with pytest.raises(CompileError, match=r"Cannot infer the type of variable 'arr': "
                                           r"cuda\.shared\.array\(\): dtype dtype\('O'\)"):
        cuda.jit(void())(object_dtype)
    with pytest.raises(CompileError, match=r"Cannot infer the type of variable 'arr'"):
        cuda.jit(void())(object_global)
    with pytest.raises(CompileError, match=r"^(?!.*Cannot infer).*dtype dtype\('V4'\) is "
                                           r"not one translated code holds"):
        cuda.jit(void())(void_unassigned)
    with pytest.raises(CompileError, match="Invalid NumPy dtype specified: 'int33'"):
        cuda.jit(void())(invalid_name)
