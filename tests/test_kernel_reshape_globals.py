"""arr.reshape(...) in kernels, and global/closure arrays read by kernels: NumPy arrays are
frozen as constants when the kernel compiles (Numba's documented behaviour), device
arrays are captured by reference (numba-cuda's). Host backend, and NVRTC PTX for sm_90."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError


@cuda.jit
def reshapes(a, out):
    b = a.reshape((3, 4))
    c = a.reshape(2, -1)
    d = a.reshape((-1,))
    e = b.reshape(2, 2, 3)
    i = cuda.grid(1)
    if i < 12:
        out[i, 0] = b[i // 4, i % 4]
        out[i, 1] = c[i // 6, i % 6]
        out[i, 2] = d[i]
        out[i, 3] = e[i // 6, (i // 3) % 2, i % 3]
    cuda.syncthreads()  # every read above sees the argument as it came in
    if i == 0:
        out[0, 4] = c.shape[1]
        out[1, 4] = e.ndim
        c[1, 5] = -1.0  # a view: writes reach the argument


def test_reshape_views_match_numpy():
    a = np.arange(12.0) * 1.5
    want = a.copy()
    out = np.full((12, 5), np.nan)
    reshapes[1, 16](a, out)
    np.testing.assert_array_equal(out[:, 0], want.reshape(3, 4).ravel())
    np.testing.assert_array_equal(out[:, 1], want.reshape(2, -1).ravel())
    np.testing.assert_array_equal(out[:, 2], want)
    np.testing.assert_array_equal(out[:, 3], want.reshape(3, 4).reshape(2, 2, 3).ravel())
    assert out[0, 4] == 6 and out[1, 4] == 3
    assert a[11] == -1.0


def test_reshape_of_a_2d_argument_and_a_device_array():
    @cuda.jit
    def flat(m, out):
        f = m.reshape(m.size)
        i = cuda.grid(1)
        if i < f.size:
            out[i] = f[i] * 2

    m = np.arange(20, dtype=np.int32).reshape(4, 5)
    out = cuda.device_array(20, np.int32)
    flat[1, 32](cuda.to_device(m), out)
    np.testing.assert_array_equal(out.copy_to_host(), m.ravel() * 2)


def test_reshape_of_the_wrong_size_or_a_strided_array_fails_the_launch():
    # The host launch raises; on a GPU the failing thread ends and a debug=True launch
    # raises (a kernel exception's rule), with the context intact for the next launch.
    @cuda.jit(debug=True)
    def bad(a, out):
        b = a.reshape((5, 5))
        out[0] = b[0, 0]

    with pytest.raises(RuntimeError, match="reshape.*not C-contiguous or the new shape"):
        bad[1, 1](np.arange(12.0), np.zeros(1))
    with pytest.raises(RuntimeError, match="reshape.*not C-contiguous or the new shape"):
        # a strided device view (a strided NumPy array reaches a GPU as a contiguous copy)
        strided = cuda.to_device(np.arange(24.0))[::2]
        cuda.jit(debug=True)(reshapes.py_func)[1, 16](strided, np.zeros((12, 5)))
    out = np.zeros(1)
    bad[1, 1](np.arange(25.0), out)  # the next launch runs
    assert out[0] == 0.0


def test_reshape_errors_at_compile_time():
    def two_minus_ones(a, out):
        out[0] = a.reshape(-1, -1)[0, 0]

    with pytest.raises(CompileError, match="only one dimension can be -1"):
        cuda.jit(two_minus_ones)[1, 1](np.zeros(4), np.zeros(1))

    def float_shape(a, out):
        out[0] = a.reshape(2.0, 2)[0, 0]

    with pytest.raises(CompileError, match="shape must be integers"):
        cuda.jit(float_shape)[1, 1](np.zeros(4), np.zeros(1))

    def keyword(a, out):
        out[0] = a.reshape((2, 2), order="F")[0, 0]

    with pytest.raises(CompileError, match="no keywords"):
        cuda.jit(keyword)[1, 1](np.zeros(4), np.zeros(1))


# ---- globals and closures ---------------------------------------------------------------

TABLE = np.array([10.0, 25.0, 5.0, 15.0, 30.0])


@cuda.jit
def priced(q, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = q[i] * TABLE[i]


def test_global_numpy_array_is_frozen_at_compile_time():
    q = np.arange(1.0, 6.0)
    out = np.zeros(5)
    priced[1, 8](q, out)
    np.testing.assert_array_equal(out, q * TABLE)
    saved = TABLE.copy()
    TABLE[:] = 0  # Numba: the kernel keeps the values it was compiled with
    try:
        priced[1, 8](q, out)
        np.testing.assert_array_equal(out, q * saved)
    finally:
        TABLE[:] = saved


def test_closure_numpy_array_is_read():
    lut = np.array([[1, 2], [3, 4]], np.int64)

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < 4:
            out[i] = lut[i // 2, i % 2] * 10

    out = np.zeros(4, np.int64)
    k[1, 4](out)
    np.testing.assert_array_equal(out, lut.ravel() * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_closure_device_array_is_captured_by_reference(dtype):
    src = cuda.to_device(np.arange(6, dtype=dtype).reshape(2, 3))
    acc = cuda.to_device(np.zeros(6, dtype=dtype))

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < 6:
            out[i] = src[i // 3, i % 3]
            acc[i] += src[i // 3, i % 3]  # writes reach the captured array

    out = np.zeros(6, dtype)
    k[1, 8](out)
    np.testing.assert_array_equal(out, np.arange(6, dtype=dtype))
    src.copy_to_device(np.full((2, 3), 7, dtype))  # later launches see new contents
    k[1, 8](out)
    np.testing.assert_array_equal(out, np.full(6, 7, dtype))
    np.testing.assert_array_equal(acc.copy_to_host(), np.arange(6, dtype=dtype) + 7)


class _InstanceInterface:
    """A wrapper that sets ``__cuda_array_interface__`` on the instance, not on its class."""

    def __init__(self, arr):
        self.owner = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def test_global_with_an_instance_interface_is_captured():
    dev = cuda.to_device(np.array([3.0, -0.0, np.inf, np.nan]))
    wrapped = _InstanceInterface(dev)

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < 4:
            out[i] = wrapped[i] * 2

    out = np.zeros(4)
    k[1, 4](out)
    np.testing.assert_array_equal(out, np.array([3.0, -0.0, np.inf, np.nan]) * 2)


def test_strided_global_device_array_view():
    base = cuda.to_device(np.arange(20.0).reshape(4, 5))
    view = base[::2, 1::2]  # strided: (2, 2)

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < 4:
            out[i] = view[i // 2, i % 2]

    out = np.zeros(4)
    k[1, 4](out)
    np.testing.assert_array_equal(out, np.arange(20.0).reshape(4, 5)[::2, 1::2].ravel())


def test_device_arrays_in_vectorize_are_refused():
    from numbacuda_ufunc import vectorize

    d = cuda.to_device(np.arange(3.0))

    with pytest.raises(CompileError, match="only inside @cuda.jit kernels"):
        @vectorize(["float64(float64)"])
        def f(x):
            return x + d[0]


def test_globals_and_reshape_compile_with_nvrtc():
    d = cuda.to_device(np.arange(8.0))

    def k(a, out):
        i = cuda.grid(1)
        out[i] = a.reshape(2, -1)[i % 2, 0] + d[i % 8] + TABLE[i % 5]

    ptx, _ = cuda.compile_ptx(k, "void(float64[::1], float64[::1])", cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
