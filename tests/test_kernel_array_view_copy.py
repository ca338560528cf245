"""``a.view(dtype)``, ``a.copy()`` and ``a.ctypes.data`` in @cuda.jit kernels (issue 16,
Numba parity: cudapy/test_array_methods.py). The oracle is NumPy's ``ndarray.view`` and
``ndarray.copy`` on the same data; every kernel is also compiled to PTX by NVRTC."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError

RNG = np.random.default_rng(16)


def _ptx_ok(kernel):
    ptx = kernel.inspect_ptx()
    assert ptx and all(".entry" in p for p in ptx.values())


def _random_bytes(n):
    # Random bit patterns (NaN, inf, denormal floats among them) plus special values.
    raw = RNG.integers(0, 256, n, dtype=np.uint8)
    special = np.array([np.nan, np.inf, -np.inf, -0.0], np.float64).view(np.uint8)
    raw[: min(n, special.size)] = special[: min(n, special.size)]
    return raw


def _view_kernel_1d(dst):
    @cuda.jit
    def k(a, out, n):
        v = a.view(dst)
        n[0] = v.shape[0]
        for i in range(v.shape[0]):
            out[i] = v[i]

    return k


@pytest.mark.parametrize("src,dst", [
    (np.uint8, np.int32), (np.int32, np.uint8), (np.float64, np.int64),
    (np.float32, np.uint16), (np.complex128, np.float64), (np.int64, np.complex128),
    (np.float64, np.uint32), (np.int16, np.int16), (np.uint8, np.float64),
])
def test_view_1d_matches_numpy(src, dst):
    itemsize = max(np.dtype(src).itemsize, np.dtype(dst).itemsize)
    a = _random_bytes(itemsize * 12).view(src)
    want = a.view(dst)
    k = _view_kernel_1d(dst)
    out = np.full(want.size + 3, 7, dtype=dst)  # poisoned past the end
    n = np.zeros(1, np.int64)
    k[1, 1](a, out, n)
    assert n[0] == want.size
    np.testing.assert_array_equal(out[: want.size].view(np.uint8), want.view(np.uint8))
    assert (out[want.size:] == 7).all()
    _ptx_ok(k)


def test_view_of_a_byte_slice_numba_reinterpret():
    # Numba's test: four bytes of a uint8 array read as one int32.
    @cuda.jit
    def k(byte_arr, start, stop, output):
        output[0] = byte_arr[start:stop].view(np.int32)[0]

    byte_arr = np.arange(256, dtype=np.uint8)
    for start in range(0, 256, 4):
        out = np.zeros(1, np.int32)
        k[1, 1](byte_arr, start, start + 4, out)
        assert out[0] == byte_arr[start:start + 4].view(np.int32)[0]
    _ptx_ok(k)


def test_view_2d_rescales_last_axis_and_keeps_other_strides():
    @cuda.jit
    def k(a, out, shape):
        v = a.view(np.uint16)
        shape[0] = v.shape[0]
        shape[1] = v.shape[1]
        shape[2] = v.strides[0]
        shape[3] = v.strides[1]
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                out[i, j] = v[i, j]

    # Device arrays keep their strides on both backends; a strided NumPy argument would be
    # copied compact to a GPU (as it failed on the H100, 2026-11-27: strides 64, not 128).
    base = _random_bytes(5 * 8 * 8).view(np.float64).reshape(5, 8)
    dbase = cuda.to_device(base)
    for a, d in ((base, dbase), (base[::2], dbase[::2]), (base[::-1], dbase[::-1]),
                 (base[:, 2:5], dbase[:, 2:5])):
        want = a.view(np.uint16)
        out = np.zeros(want.shape, np.uint16)
        shape = np.zeros(4, np.int64)
        k[1, 1](d, out, shape)
        assert tuple(shape) == want.shape + want.strides
        np.testing.assert_array_equal(out, want)
    _ptx_ok(k)


def test_view_same_itemsize_any_layout():
    @cuda.jit
    def k(a, out):
        v = a.view(np.int64)
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                out[i, j] = v[i, j]

    a = RNG.standard_normal((6, 7))
    for view in (a[::2, ::3], a.T, a[::-1, ::-2]):
        out = np.zeros(view.shape, np.int64)
        k[1, 1](view, out)
        np.testing.assert_array_equal(out, view.view(np.int64))


def test_view_writes_reach_the_original():
    @cuda.jit
    def k(a):
        v = a.view(np.uint32)
        v[1] = 0xFFFFFFFF
        v[0] = v[0] ^ 0x80000000  # flips the sign bit of a[0]

    a = np.array([1.5, -2.25, 3.0], np.float32)
    want = a.copy()
    want.view(np.uint32)[1] = 0xFFFFFFFF
    want.view(np.uint32)[0] ^= 0x80000000
    k[1, 1](a)
    np.testing.assert_array_equal(a.view(np.uint32), want.view(np.uint32))


def test_view_of_local_and_global_arrays():
    table = np.array([1.0, -0.0, np.inf, np.nan])

    @cuda.jit
    def k(out):
        loc = cuda.local.array(4, np.float32)
        for i in range(4):
            loc[i] = i - 1.5
        bits = loc.view(np.int32)
        g = table.view(np.uint64)
        for i in range(4):
            out[i] = bits[i]
            out[4 + i] = g[i] >> 32

    out = np.zeros(8, np.int64)
    k[1, 1](out)
    np.testing.assert_array_equal(out[:4], (np.arange(4, dtype=np.float32) - 1.5).view(np.int32))
    np.testing.assert_array_equal(out[4:], table.view(np.uint64) >> 32)
    _ptx_ok(k)


@pytest.mark.parametrize("case", ["strided", "indivisible", "misaligned"])
def test_view_run_time_errors_raise_valueerror(case):
    def body(a, out):
        v = a.view(np.int32)
        out[0] = v.shape[0]

    k = cuda.jit(debug=True, opt=False)(body)
    plain = cuda.jit(body)
    out = np.full(1, -7, np.int64)
    if case == "strided":
        a, match = np.zeros(16, np.uint8)[::2], "last axis must be contiguous"
    elif case == "indivisible":
        a, match = np.zeros(6, np.uint8), "size must be a divisor of the total size in bytes"
    else:
        a, match = np.zeros(17, np.uint8)[1:], "not aligned for its new dtype"
    if case != "misaligned":  # NumPy refuses it with the same message
        with pytest.raises(ValueError, match=match):
            a.view(np.int32)
    # A device view of the same layout: a NumPy argument goes to a GPU as a compact,
    # aligned copy, whose view is valid (the H100 run of 2026-11-27 raised nothing).
    d = {"strided": lambda: cuda.to_device(np.zeros(16, np.uint8))[::2],
         "indivisible": lambda: cuda.to_device(np.zeros(6, np.uint8)),
         "misaligned": lambda: cuda.to_device(np.zeros(17, np.uint8))[1:]}[case]()
    assert d.shape == a.shape and d.strides == a.strides
    with pytest.raises(ValueError, match=match):
        k[1, 1](d, out)
    plain[1, 1](d, out)  # without debug the thread ends there: nothing written
    assert out[0] == -7


def test_view_compile_time_errors():
    def zero_d(a, out):
        out[0] = a.view(np.int32)[()]

    def fortran(a, out):
        out[0] = a.view(np.int32)[0, 0]

    def two_args(a, out):
        out[0] = a.view(np.int32, np.ndarray)[0]

    with pytest.raises(CompileError, match="0d array is only supported if the itemsize"):
        cuda.jit(zero_d)[1, 1](np.array(1.5), np.zeros(1, np.int32))
    with pytest.raises(CompileError, match="last axis must be contiguous"):
        cuda.jit("void(float64[::1, :], int32[:])")(fortran)
    with pytest.raises(CompileError, match=r"a.view\(\) takes one argument"):
        cuda.jit(two_args)[1, 1](np.zeros(4), np.zeros(1, np.int32))


def test_view_same_itemsize_0d_is_allowed():
    @cuda.jit
    def k(a, out):
        out[0] = a.view(np.int64)[()]

    a = np.array(-0.0)
    out = np.zeros(1, np.int64)
    k[1, 1](a, out)
    assert out[0] == a.view(np.int64)[()]


# ---- a.copy() ---------------------------------------------------------------------------

GLOBAL = np.array([1, 2, 3])[::-1]


def test_copy_of_a_global_array_numba_case():
    @cuda.jit
    def k(out):
        q = GLOBAL.copy()
        q[0] = 99  # the copy is the thread's own
        for i in range(len(out)):
            out[i] = q[i] + GLOBAL[i] * 1000

    out = cuda.to_device(np.zeros(3))
    k[1, 1](out)
    want = GLOBAL.copy()
    want[0] = 99
    np.testing.assert_array_equal(out.copy_to_host(), want + GLOBAL * 1000)
    _ptx_ok(k)


def test_copy_of_local_and_shared_arrays_is_independent():
    @cuda.jit
    def k(out):
        t = cuda.threadIdx.x
        loc = cuda.local.array((2, 3), np.float32)
        sh = cuda.shared.array(4, np.int16)
        for i in range(2):
            for j in range(3):
                loc[i, j] = t * 10 + i * 3 + j + 0.5
        if t == 0:
            for i in range(4):
                sh[i] = -i
        cuda.syncthreads()
        c = loc.copy()
        s = sh.copy()
        cc = c.copy()  # a copy of a copy
        cuda.syncthreads()
        loc[0, 0] = -1.0
        if t == 0:
            sh[0] = 100
        cuda.syncthreads()
        for i in range(2):
            for j in range(3):
                out[t, i * 3 + j] = c[i, j] + cc[i, j]
        for i in range(4):
            out[t, 6 + i] = s[i]

    out = np.full((4, 10), np.nan)
    k[1, 4](out)
    for t in range(4):
        vals = t * 10 + np.arange(6) + 0.5
        np.testing.assert_array_equal(out[t, :6], 2 * vals.astype(np.float32))
        np.testing.assert_array_equal(out[t, 6:], -np.arange(4))
    _ptx_ok(k)


def _copy_sum(a):  # a device function: specialised per shape of its argument
    c = a.copy()
    a[0] = 0
    s = 0.0
    for i in range(c.shape[0]):
        s += c[i]
    return s


def test_copy_in_a_branch_and_in_device_functions():
    helper = cuda.jit(device=True)(_copy_sum)

    @cuda.jit
    def k(out, flag):
        small = cuda.local.array(2, np.float64)
        big = cuda.local.array(5, np.float64)
        for i in range(5):
            big[i] = i + 1.0
        small[0] = 10.0
        small[1] = 20.0
        if flag:
            kept = big.copy()  # read after the branch
        else:
            kept = small.copy()
        big[1] = -100.0
        out[0] = helper(small)
        out[1] = helper(big)
        out[2] = kept[0] + kept[1]

    out = np.zeros(3)
    k[1, 1](out, True)
    np.testing.assert_array_equal(out, [30.0, 1 - 100 + 3 + 4 + 5, 3.0])
    k[1, 1](out, False)
    np.testing.assert_array_equal(out, [30.0, 1 - 100 + 3 + 4 + 5, 30.0])


def test_copy_refusals_name_the_array_and_why():
    def of_argument(a, out):
        c = a.copy()
        out[0] = c[0]

    def in_loop(out):
        loc = cuda.local.array(3, np.float64)
        for i in range(3):
            c = loc.copy()
            out[i] = c[i]

    def with_order(out):
        loc = cuda.local.array(3, np.float64)
        out[0] = loc.copy("F")[0]

    with pytest.raises(CompileError, match=r"a.copy\(\) of 'a' \(float64\[:\]\) is not "
                                           r"supported: its shape is known only at run time"):
        cuda.jit(of_argument)[1, 1](np.zeros(3), np.zeros(1))
    with pytest.raises(CompileError, match=r"a.copy\(\) of 'loc' inside a loop"):
        cuda.jit(in_loop)[1, 1](np.zeros(3))
    with pytest.raises(CompileError, match=r"a.copy\(\) takes no arguments"):
        cuda.jit(with_order)[1, 1](np.zeros(1))


# ---- a.ctypes.data ------------------------------------------------------------------------

def test_ctypes_data_is_the_address():
    @cuda.jit
    def k(a, out):
        out[0] = a.ctypes.data
        out[1] = a[2:].ctypes.data - a.ctypes.data

    a = np.zeros(5)
    d = cuda.to_device(a)
    out = np.zeros(2, np.uint64)
    k[1, 1](d, out)
    assert out[0] == d.device_ctypes_pointer.value  # the device address, on either backend
    assert out[1] == 2 * a.itemsize
    k[1, 1](a, out)  # a NumPy argument: the address of the memory the kernel sees
    assert out[1] == 2 * a.itemsize and out[0] != 0

    def bare(a, out):
        out[0] = a.ctypes

    with pytest.raises(CompileError, match=r"only a.ctypes.data"):
        cuda.jit(bare)[1, 1](a, out)
