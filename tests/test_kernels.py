"""@cuda.jit kernels: the CUDA programming model of Numba's documentation, checked against
NumPy on the host backend (and on the GPU when there is one); launch errors; NVRTC
compiles of every kernel made here."""

import math

import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int32
from numbacuda_ufunc.errors import CompileError, CudaError

TPB = 16
RNG = np.random.default_rng(20261122)


# ---- kernels from Numba's documentation and examples -------------------------------------

@cuda.jit
def fast_matmul(A, B, C):
    # Numba docs, "Matrix multiplication": shared-memory tiles and barriers.
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def test_shared_memory_tiled_matmul():
    n = 48  # not a multiple of TPB: the edge tiles are padded with zeros
    A = RNG.random((n, n), dtype=np.float32)
    B = RNG.random((n, n), dtype=np.float32)
    C = np.full((n, n), np.nan, dtype=np.float32)
    blocks = (n + TPB - 1) // TPB
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.to_device(C)
    fast_matmul[(blocks, blocks), (TPB, TPB)](dA, dB, dC)
    np.testing.assert_allclose(dC.copy_to_host(), A @ B, rtol=1e-5)


@cuda.jit
def block_sum(a, partial):
    # Numba docs, "Shared memory reduction": a tree reduction per block.
    buf = cuda.shared.array(128, dtype=float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[tid] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:
            buf[tid] += buf[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = buf[0]


def test_block_tree_reduction():
    a = RNG.random(1000)
    blocks = (a.size + 127) // 128
    partial = np.zeros(blocks)
    block_sum[blocks, 128](a, partial)
    np.testing.assert_allclose(partial, [a[k * 128:(k + 1) * 128].sum() for k in range(blocks)])


@cuda.jit
def warp_sum(a, out):
    # A warp reduction with shuffles, then one atomic per warp.
    i = cuda.grid(1)
    v = a[i] if i < a.size else 0
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


def test_warp_shuffle_reduction():
    a = RNG.integers(-1000, 1000, 300).astype(np.int64)
    out = np.zeros(1, dtype=np.int64)
    warp_sum[3, 128](a, out)
    assert out[0] == a.sum()


@cuda.jit
def votes(a, out):
    i = cuda.threadIdx.x
    positive = a[i] > 0
    out[i, 0] = cuda.ballot_sync(0xffffffff, positive)
    out[i, 1] = cuda.all_sync(0xffffffff, positive)
    out[i, 2] = cuda.any_sync(0xffffffff, positive)
    out[i, 3] = cuda.shfl_sync(0xffffffff, a[i], 3)
    out[i, 4] = cuda.shfl_xor_sync(0xffffffff, a[i], 1)
    out[i, 5] = cuda.shfl_up_sync(0xffffffff, a[i], 2)
    out[i, 6] = cuda.laneid
    out[i, 7] = cuda.warpsize
    out[i, 8] = cuda.match_any_sync(0xffffffff, a[i] % 3)
    mask, same = cuda.match_all_sync(0xffffffff, (a[i] + 5) // 100)
    out[i, 9] = mask
    out[i, 10] = same
    out[i, 11] = cuda.eq_sync(0xffffffff, a[i])


def test_warp_votes_and_shuffles():
    a = np.arange(32, dtype=np.int64) - 5  # lanes 0-5 are not positive
    out = np.zeros((32, 12), dtype=np.int64)
    votes[1, 32](a, out)
    ballot = sum(1 << k for k in range(32) if a[k] > 0)
    np.testing.assert_array_equal(out[:, 0], ballot)
    np.testing.assert_array_equal(out[:, 1], 0)
    np.testing.assert_array_equal(out[:, 2], 1)
    np.testing.assert_array_equal(out[:, 3], a[3])
    np.testing.assert_array_equal(out[:, 4], a[np.arange(32) ^ 1])
    np.testing.assert_array_equal(out[:, 5], np.where(np.arange(32) >= 2, a[np.arange(32) - 2], a))
    np.testing.assert_array_equal(out[:, 6], np.arange(32))
    np.testing.assert_array_equal(out[:, 7], 32)
    groups = [sum(1 << k for k in range(32) if a[k] % 3 == a[j] % 3) for j in range(32)]
    np.testing.assert_array_equal(out[:, 8], groups)
    np.testing.assert_array_equal(out[:, 9], 0xffffffff)  # every lane holds 0
    np.testing.assert_array_equal(out[:, 10], 1)
    np.testing.assert_array_equal(out[:, 11], 0)  # the a[i] differ


@cuda.jit
def histogram(x, bins, lo, hi):
    # Numba docs, "atomic operations": a histogram with atomic.add on int32 bins.
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    width = (hi - lo) / bins.size
    for i in range(start, x.shape[0], stride):
        b = int((x[i] - lo) / width)
        if 0 <= b < bins.size:
            cuda.atomic.add(bins, b, 1)


def test_atomic_histogram():
    x = RNG.normal(size=5000)
    bins = np.zeros(16, dtype=np.int32)
    histogram[4, 64](x, bins, -3.0, 3.0)
    b = np.trunc((x - -3.0) / (6.0 / 16)).astype(np.int64)  # int() truncates toward 0
    np.testing.assert_array_equal(bins, np.bincount(b[(b >= 0) & (b < 16)], minlength=16))


@cuda.jit
def atomics(f, i, u, old):
    k = cuda.grid(1)
    old[k, 0] = cuda.atomic.max(f, 0, f[1 + k % 5])
    cuda.atomic.min(f, 6, f[1 + k % 5])
    cuda.atomic.sub(i, 0, 2)
    cuda.atomic.and_(i, 1, ~(1 << (k % 8)))
    cuda.atomic.or_(i, 2, 1 << (k % 8))
    cuda.atomic.xor(i, 3, 1)
    cuda.atomic.inc(u, 0, 9)
    cuda.atomic.dec(u, 1, 100)
    old[k, 1] = cuda.atomic.cas(i, 4, 0, 7)
    cuda.atomic.exch(i, 5, 42)


def test_atomic_operations():
    f = np.array([-np.inf, 3.5, -1.0, 7.25, 0.0, 2.0, np.inf])
    i = np.array([1000, 0xff, 0, 0, 0, 0], dtype=np.int64)
    u = np.array([0, 5], dtype=np.uint32)
    old = np.zeros((64, 2))
    atomics[2, 32](f, i, u, old)
    assert f[0] == 7.25 and f[6] == -1.0
    assert i[0] == 1000 - 2 * 64
    assert i[1] == 0 and i[2] == 0xff and i[3] == 0
    assert i[4] == 7 and sorted(old[:, 1]) == [0] + [7] * 63  # one thread saw the 0
    assert i[5] == 42
    assert u[0] == 64 % 10  # wraps to 0 after 9
    assert u[1] == (5 - 64) % 101


@cuda.jit
def atomic_nan(f, g, old):
    old[0] = cuda.atomic.max(f, 0, math.nan)
    old[1] = cuda.atomic.min(f, 1, math.nan)
    old[2] = cuda.atomic.max(f, 2, 5.0)
    old[3] = cuda.atomic.min(f, 3, -5.0)
    cuda.atomic.nanmax(g, 0, math.nan)
    cuda.atomic.nanmin(g, 1, -1.0)
    cuda.atomic.nanmax(g, 2, 3.0)


def test_atomic_max_nan_semantics():
    # numba-cuda: atomic.max/min are Python's max(ary[idx], val), so a NaN on either side
    # keeps the stored value; nanmax/nanmin treat NaN as missing, like np.fmax.
    for dtype in (np.float64, np.float32):
        f = np.array([1.0, 2.0, np.nan, np.nan], dtype)
        g = np.array([1.0, 2.0, np.nan], dtype)
        old = np.zeros(4, dtype)
        atomic_nan[1, 1](f, g, old)
        np.testing.assert_array_equal(f, np.array([1.0, 2.0, np.nan, np.nan], dtype))
        np.testing.assert_array_equal(old, np.array([1.0, 2.0, np.nan, np.nan], dtype))
        np.testing.assert_array_equal(g, np.array([1.0, -1.0, 3.0], dtype))


@cuda.jit
def reverse_dynamic(a):
    # Dynamic shared memory: the size comes from the launch, kernel[grid, block, stream, bytes].
    s = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    a[t] = s[s.size - 1 - t]


def test_dynamic_shared_memory():
    a = np.arange(64, dtype=np.float32)
    reverse_dynamic[1, 64, 0, 64 * 4](a)
    np.testing.assert_array_equal(a, np.arange(64, dtype=np.float32)[::-1])


@cuda.jit
def static_and_dynamic_shared(a, out):
    # 32 KiB of static and (at launch) 20 KiB of dynamic shared memory: 52 KiB together,
    # above the 48 KiB a block gets without opting in, though the dynamic part alone is
    # below it. The opt-in must count the static part (cuLaunchKernel fails otherwise).
    fixed = cuda.shared.array(8192, dtype=float32)
    extra = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    for j in range(t, 8192, cuda.blockDim.x):
        fixed[j] = a[j]
    for j in range(t, extra.size, cuda.blockDim.x):
        extra[j] = a[j % 8192] * 2
    cuda.syncthreads()
    for j in range(t, 8192, cuda.blockDim.x):
        out[j] = fixed[8191 - j] + extra[j % extra.size]


def test_static_plus_dynamic_shared_memory_above_48k():
    a = np.random.default_rng(7).random(8192).astype(np.float32)
    out = np.full(8192, np.nan, np.float32)
    dynamic = 20 * 1024
    static_and_dynamic_shared[1, 256, 0, dynamic](a, out)
    n_extra = dynamic // 4
    idx = np.arange(8192)
    np.testing.assert_array_equal(out, a[::-1] + 2 * a[(idx % n_extra) % 8192])


def test_static_plus_dynamic_shared_memory_beyond_the_opt_in_limit():
    a = np.zeros(8192, np.float32)
    with pytest.raises(ValueError, match=r"32768 static \+ 1048576 dynamic"):
        static_and_dynamic_shared[1, 256, 0, 1 << 20](a, a.copy())


@cuda.jit(device=True)
def polar(x, y):
    return math.hypot(x, y), math.atan2(y, x)


@cuda.jit
def to_polar(x, y, r, theta):
    # Device functions returning tuples, and a local array.
    i = cuda.grid(1)
    if i < x.size:
        scratch = cuda.local.array(2, dtype=float64)
        scratch[0], scratch[1] = polar(x[i], y[i])
        r[i] = scratch[0]
        theta[i] = scratch[1]


def test_device_function_and_local_array():
    x, y = RNG.normal(size=100), RNG.normal(size=100)
    r, theta = np.empty(100), np.empty(100)
    to_polar.forall(x.size)(x, y, r, theta)
    np.testing.assert_allclose(r, np.hypot(x, y))
    np.testing.assert_allclose(theta, np.arctan2(y, x))


def test_local_and_shared_array_dtype_given_by_name():
    @cuda.jit
    def k(x, out):
        loc = cuda.local.array(4, dtype="int16")  # a string dtype, as Numba allows
        sh = cuda.shared.array((2, 2), "float32")
        for j in range(4):
            loc[j] = x[j]  # int64 -> int16 wraps
            sh[j // 2, j % 2] = x[j]
        for j in range(4):
            out[j] = loc[j] + sh[j // 2, j % 2]

    x = np.array([1, 2**15 + 3, -(2**16) - 5, 2**40], np.int64)
    out = np.full(4, np.nan)
    k[1, 1](x, out)
    np.testing.assert_array_equal(out, x.astype(np.int16) + x.astype(np.float32).astype(np.float64))

    @cuda.jit
    def bad(x):
        loc = cuda.local.array(4, dtype="int33")
        x[0] = loc[0]

    with pytest.raises(CompileError, match="Invalid NumPy dtype specified: 'int33'"):
        bad[1, 1](np.zeros(1))


WEIGHTS = np.array([0.25, 0.5, 0.25])


@cuda.jit
def smooth(a, out):
    w = cuda.const.array_like(WEIGHTS)
    i = cuda.grid(1)
    if 1 <= i < a.size - 1:
        out[i] = w[0] * a[i - 1] + w[1] * a[i] + w[2] * a[i + 1]


def test_constant_array():
    a = RNG.random(50)
    out = np.zeros(50)
    smooth[2, 32](a, out)
    np.testing.assert_allclose(out[1:-1], 0.25 * a[:-2] + 0.5 * a[1:-1] + 0.25 * a[2:])


@cuda.jit
def geometry(out):
    x, y, z = cuda.grid(3)
    nx, ny, nz = cuda.gridsize(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z] = (x * ny + y) * nz + z + 1000 * cuda.blockIdx.z + 100000 * cuda.gridDim.y


def test_three_dimensional_grid():
    out = np.zeros((4, 6, 8), dtype=np.int64)
    geometry[(2, 3, 2), (2, 2, 4)](out)
    x, y, z = np.indices(out.shape)
    np.testing.assert_array_equal(out, (x * 6 + y) * 8 + z + 1000 * (z // 4) + 100000 * 3)


@cuda.jit
def early_exit(a, out):
    # Threads that return before a barrier do not hold the others back (CUDA semantics).
    t = cuda.threadIdx.x
    if t >= a.size:
        return
    buf = cuda.shared.array(64, dtype=int32)
    buf[t] = a[t]
    cuda.syncthreads()
    out[t] = buf[a.size - 1 - t]


def test_early_return_before_barrier():
    a = np.arange(40, dtype=np.int32)
    out = np.zeros(40, dtype=np.int32)
    early_exit[1, 64](a, out)
    np.testing.assert_array_equal(out, a[::-1])


@cuda.jit
def counts(a, out):
    t = cuda.threadIdx.x
    out[0] = cuda.syncthreads_count(a[t] > 0)
    out[1] = cuda.syncthreads_and(a[t] > -100)
    out[2] = cuda.syncthreads_or(a[t] > 100)


def test_block_votes():
    a = np.arange(-10, 54, dtype=np.int64)
    out = np.zeros(3, dtype=np.int64)
    counts[1, 64](a, out)
    np.testing.assert_array_equal(out, [53, 1, 0])


@cuda.jit
def bits(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cuda.popc(x[i])
        out[i, 1] = cuda.clz(x[i])
        out[i, 2] = cuda.ffs(x[i])
        out[i, 3] = cuda.brev(x[i])


def test_bit_intrinsics():
    x = np.array([0, 1, 2, 0xF0, 0x80000000, 0xFFFFFFFF], dtype=np.uint32)
    out = np.zeros((x.size, 4), dtype=np.uint64)
    bits[1, 32](x, out)
    for k, v in enumerate(int(t) for t in x):
        assert out[k, 0] == bin(v).count("1")
        assert out[k, 1] == 32 - v.bit_length()
        assert out[k, 2] == ((v & -v).bit_length() if v else 0)
        assert out[k, 3] == int(f"{v:032b}"[::-1], 2)


@cuda.jit
def float_intrinsics(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cuda.selp(x[i] > 0, x[i], -x[i])
        out[i, 1] = cuda.cbrt(x[i])
        out[i, 2] = cuda.fma(x[i], 2.0, 1.0)


def test_selp_cbrt_fma():
    x = np.array([-8.0, -0.5, 0.0, 1.0, 27.0, np.inf], dtype=np.float32)
    out = np.zeros((x.size, 3), dtype=np.float32)
    float_intrinsics[1, 8](x, out)
    np.testing.assert_array_equal(out[:, 0], np.abs(x))
    np.testing.assert_allclose(out[:, 1], np.cbrt(x), rtol=1e-6)
    np.testing.assert_array_equal(out[:, 2], x * np.float32(2) + np.float32(1))


@cuda.jit("void(float32[:], float32[:], float32)")
def saxpy(x, y, a):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def test_eager_signature_converts_scalars():
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, dtype=np.float32)
    saxpy[1, 32](x, y, 2)  # a Python int for the float32 parameter
    np.testing.assert_array_equal(y, 2 * x + 1)
    with pytest.raises(TypeError, match="No matching definition for argument type.*float64"):
        saxpy[1, 32](x.astype(np.float64), y, 2.0)


@cuda.jit
def fill(a, value):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = value


@pytest.mark.parametrize("value, dtype", [(3, np.int64), (2.5, np.float64), (True, np.bool_),
                                          (np.float32(1.5), np.float32), (1 + 2j, np.complex128),
                                          (np.uint8(200), np.uint8)])
def test_scalar_arguments_and_lazy_specializations(value, dtype):
    a = np.zeros(5, dtype=dtype)
    fill[1, 8](a, value)
    np.testing.assert_array_equal(a, np.full(5, value, dtype=dtype))


@cuda.jit
def swap_first(a):
    cuda.atomic.compare_and_swap(a, 5, 9)


def test_compare_and_swap_on_the_first_element():
    a = np.array([5, 1], dtype=np.int32)
    swap_first[1, 4](a)  # the first thread swaps; the others see 9 and leave it
    np.testing.assert_array_equal(a, [9, 1])


def test_device_array_views_are_written_in_place():
    base = cuda.to_device(np.zeros((6, 8)))
    fill[1, 32](base[1], 4.0)  # a contiguous row
    fill[1, 32](base[::2, 3], 5.0)  # a strided column
    expected = np.zeros((6, 8))
    expected[1] = 4.0
    expected[::2, 3] = 5.0
    np.testing.assert_array_equal(base.copy_to_host(), expected)


@cuda.jit
def transpose_into(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[j, i] = a[i, j]


@pytest.mark.parametrize("layout", ["C", "F", "sliced", "negative"])
def test_host_arrays_of_any_layout(layout):
    base = RNG.random((9, 14))
    a = {"C": base, "F": np.asfortranarray(base), "sliced": base[::2, 1::2],
         "negative": base[::-1, ::-2]}[layout]
    out = np.full(a.shape[::-1], np.nan)
    out_view = np.asfortranarray(out) if layout == "F" else out
    transpose_into[(2, 2), (8, 8)](a, out_view)
    np.testing.assert_array_equal(out_view, a.T)


def test_kernel_with_no_arguments_and_a_stream():
    @cuda.jit
    def nothing():
        pass

    s = cuda.stream()
    nothing[1, 1, s]()
    nothing[1, 1]()
    s.synchronize()


# ---- the Python function is the oracle --------------------------------------------------

def _mixed(x, y):
    if x > y:
        return x // (y + 1) - (x % 7)
    return (x * 3 + y) ^ (y >> 2)


@cuda.jit
def apply_mixed(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = _mixed(x[i], y[i])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint64])
def test_kernel_matches_python_function(dtype):
    info = np.iinfo(dtype)
    edges = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    x = np.concatenate([edges, RNG.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)])
    y = np.concatenate([edges[::-1], RNG.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)])
    out = np.zeros_like(x)
    apply_mixed[(x.size + 63) // 64, 64](x, y, out)
    with np.errstate(all="ignore"):
        expected = np.array([_mixed(a, b) for a, b in zip(x, y)], dtype=dtype)
    np.testing.assert_array_equal(out, expected)


def _float_fn(x, y):
    return math.sqrt(abs(x)) * y - x / y if y != 0 else math.copysign(x, y) + 0.5


@cuda.jit
def apply_float(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = _float_fn(x[i], y[i])


def test_float_kernel_matches_python_on_edge_values():
    specials = [0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 1e-308, 1e308]
    x = np.array([a for a in specials for _ in specials] + list(RNG.normal(size=100)))
    y = np.array([b for _ in specials for b in specials] + list(RNG.normal(size=100)))
    out = np.empty_like(x)
    apply_float[(x.size + 31) // 32, 32](x, y, out)
    with np.errstate(all="ignore"):
        expected = np.array([_float_fn(np.float64(a), np.float64(b)) for a, b in zip(x, y)])
    np.testing.assert_array_equal(out, expected)


# ---- launch errors ----------------------------------------------------------------------

def test_too_many_threads_per_block():
    with pytest.raises(ValueError, match=r"kernel 'fill': 2048 threads per block \(1024, 2, 1\) "
                                         r"is more than the 1024"):
        fill[1, (1024, 2)](np.zeros(4), 1.0)
    with pytest.raises(ValueError, match="block dimension x is 2048, above the device's limit"):
        fill[1, 2048](np.zeros(4), 1.0)
    with pytest.raises(ValueError, match="block dimension z is 65"):
        fill[1, (1, 1, 65)](np.zeros(4), 1.0)


def test_shared_memory_beyond_the_device_limit():
    with pytest.raises(ValueError, match="kernel 'reverse_dynamic': .*bytes of shared memory") as err:
        reverse_dynamic[1, 64, 0, 1 << 20](np.zeros(64, dtype=np.float32))
    assert isinstance(err.value, CudaError) and err.value.name == "CUDA_ERROR_INVALID_VALUE"
    with pytest.raises(CudaError, match=r"block dimension z is 65, .*\(CUDA_ERROR_INVALID_VALUE\)$"):
        reverse_dynamic[1, (1, 1, 65), 0, 256](np.zeros(64, dtype=np.float32))


def test_wrong_argument_count_and_types():
    with pytest.raises(TypeError, match="kernel 'fill' takes 2 arguments \\(got 1\\)"):
        fill[1, 1](np.zeros(3))
    with pytest.raises(TypeError, match="kernel 'fill': argument 1 has unsupported type list"):
        fill[1, 1]([1.0, 2.0], 1.0)
    with pytest.raises(CompileError, match="too many indices for array"):
        fill[1, 1](np.zeros(()), 1.0)  # a 0-d array is taken (Numba's a[()]); a[i] is not
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        fill[1, 1](np.zeros(3), value=1.0)


def test_bad_launch_configurations():
    with pytest.raises(ValueError, match="kernel 'fill': launch configuration was not specified"):
        fill(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match=r"kernel\[blocks_per_grid, threads_per_block\]"):
        fill[1](np.zeros(3), 1.0)
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got \[2\.5\] "
                                        r"\(threads per block"):
        fill[1, 2.5](np.zeros(3), 1.0)
    with pytest.raises(TypeError, match=r"griddim must be a sequence of integers, got \[1, 'a'\] "
                                        r"\(blocks per grid"):
        fill[(1, "a"), 1](np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="threads per block must be positive"):
        fill[1, 0](np.zeros(3), 1.0)
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, "
                                         r"got \[1, 1, 1, 1\]"):
        fill[(1, 1, 1, 1), 1](np.zeros(3), 1.0)
    with pytest.raises(ValueError, match=r"blockdim must be a sequence of 1, 2 or 3 integers, "
                                         r"got \[\]"):
        fill[1, ()](np.zeros(3), 1.0)


def test_zero_blocks_launch_nothing():
    a = np.zeros(3)
    fill[0, 32](a, 1.0)
    np.testing.assert_array_equal(a, 0.0)


@cuda.jit
def overrun(a):
    i = cuda.grid(1)
    a[i] = 1.0


# the emulation checks every access; a GPU kernel checks with debug=True (test_debug_kernel_bounds_check)
@pytest.mark.emulation
def test_out_of_bounds_access_raises_naming_the_kernel():
    a = np.zeros(10)
    guard = np.zeros(64)  # a neighbour in memory that must stay untouched
    with pytest.raises(IndexError, match=r"kernel 'overrun': index 10 is out of bounds for axis "
                                         r"0 with size 10 \(thread \(10, 0, 0\) of block"):
        overrun[1, 32](a)
    np.testing.assert_array_equal(guard, 0.0)
    np.testing.assert_array_equal(a, 1.0)


def test_debug_kernel_bounds_check():
    @cuda.jit(debug=True)
    def overrun_debug(a):
        a[cuda.grid(1) + 5] = 1.0

    with pytest.raises(IndexError, match="kernel 'overrun_debug': index 8 is out of bounds"):
        overrun_debug[1, 4](np.zeros(8))


def test_kernel_returning_a_value_is_a_compile_error():
    @cuda.jit
    def returns(a):
        return a[0]

    with pytest.raises(CompileError, match="kernels return nothing"):
        returns[1, 1](np.zeros(2))


def test_out_of_subset_code_names_the_line():
    @cuda.jit
    def uses_try(a):
        try:
            a[0] = 1
        except Exception:
            pass

    with pytest.raises(CompileError, match=r"test_kernels.py:\d+: unsupported construct 'try'"):
        uses_try[1, 1](np.zeros(2))


def test_intrinsics_outside_kernels():
    from numbacuda_ufunc import vectorize

    with pytest.raises(RuntimeError, match=r"cuda.grid\(\) can be called only inside"):
        cuda.grid(1)

    def uses_thread_index(x):
        return x + cuda.threadIdx.x

    with pytest.raises(CompileError, match="only inside @cuda.jit kernels"):
        vectorize(["float64(float64)"], target="cuda")(uses_thread_index)


def test_bad_intrinsic_arguments():
    @cuda.jit
    def bad_shared(a):
        s = cuda.shared.array(a.size, dtype=float32)
        s[0] = 1

    with pytest.raises(CompileError, match="shape must be an integer or a tuple of integers known"):
        bad_shared[1, 1](np.zeros(2))

    @cuda.jit
    def bad_atomic(a):
        cuda.atomic.and_(a, 0, 1)

    with pytest.raises(CompileError, match=r"cuda.atomic.and_\(\) is not supported on float64"):
        bad_atomic[1, 1](np.zeros(2))


def test_eager_signature_must_be_void():
    with pytest.raises(TypeError, match="kernels return nothing"):
        cuda.jit("float32(float32[:])")(lambda a: None)


def test_signatures_and_specialize():
    k = fill.specialize(np.zeros(3, dtype=np.int32), 1)
    assert [[t.name for t in sig] for sig in k.signatures] == [["int32[:]", "int64"]]
    a = np.zeros(3, dtype=np.int32)
    k[1, 4](a, 7)
    np.testing.assert_array_equal(a, 7)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        k[1, 4](np.zeros(3), 7)


@cuda.jit
def printer(a):
    i = cuda.grid(1)
    if i < a.size:
        print("thread", i, "has", a[i], a[i] > 1, "100% é")


def test_print_in_kernel(capfd):
    printer[1, 4](np.array([0.5, 1.5, 2.0]))
    cuda.synchronize()
    out = capfd.readouterr().out.splitlines()
    assert out == [f"thread {i} has {v:f} {v > 1} 100% é" for i, v in enumerate([0.5, 1.5, 2.0])]


@cuda.jit
def print_structures(t, n):
    print(cuda.threadIdx)
    if cuda.threadIdx.x == 1 and cuda.threadIdx.y == 1:
        print(t, (1,), (n, (2.5, n > 3)), "%d", cuda.blockDim)


def test_print_tuples_and_dim3_as_numba(capfd):
    # Numba's format: tuples as Python writes them, floats with %f, dim3 as a 3-tuple.
    print_structures[1, (2, 2, 1)]((1, ((2, 4), 3.0), (4,), 5), 7)
    cuda.synchronize()
    out = capfd.readouterr().out.splitlines()
    assert sorted(out) == sorted([str(i) for i in [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]]
                                 + ["(1, ((2, 4), 3.000000), (4,), 5) (1,) (7, (2.500000, True)) "
                                    "%d (2, 2, 1)"])
    assert ".entry" in next(iter(print_structures.inspect_ptx().values()))


def test_print_of_more_than_32_values_prints_the_format(capfd):
    @cuda.jit
    def too_many(r):
        print(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12],
              r[13], r[14], r[15], r[16], r[17], r[18], r[19], r[20], r[21], r[22], r[23],
              r[24], r[25], r[26], r[27], r[28], r[29], r[30], r[31], r[32])

    with pytest.warns(RuntimeWarning, match="cannot print more than 32 items"):
        too_many[1, 1](np.arange(33))
    cuda.synchronize()
    assert capfd.readouterr().out.strip() == " ".join(["%lld"] * 33)


@cuda.jit
def round_to_digits(out, x, nd):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = round(x[i], nd[i])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_ndigits_as_python(dtype):
    # Halfway values (0.3425 is above its half as a double and as a float32: Python rounds
    # it up), values whose scaling overflows (returned as they are), inf, nan, -0.0, ndigits
    # beyond the double range both ways, and random values.
    info = np.finfo(dtype)
    pairs = [(0.3425, 3), (0.5425, 3), (2.675, 2), (1.5, 0), (2.5, 0), (-0.5, 0), (-2.5, 0),
             (125.0, -1), (135.0, -1), (-0.0, 2), (np.inf, 3), (-np.inf, -3), (np.nan, 1),
             (info.max, 12), (info.max, 300), (-info.max, 40), (1.5, 400), (-1.5, -400),
             (0.12345678987654321e-14, 23), (12345.678, -3), (info.tiny, 310)]
    pairs += [(v, int(d)) for v, d in zip(RNG.standard_normal(24) * 10.0 ** RNG.integers(-3, 4, 24),
                                          RNG.integers(-5, 6, 24))]
    x = np.array([p[0] for p in pairs], dtype=dtype)
    nd = np.array([p[1] for p in pairs], dtype=np.int32)
    out = np.full(x.size, -7.0, dtype=dtype)
    round_to_digits[1, 64](out, x, nd)
    want = np.array([round(float(v), int(d)) for v, d in zip(x, nd)], dtype=dtype)
    # Correctly rounded for |ndigits| <= 22; beyond, CPython's (and Numba's) scaling
    # algorithm, within 1 ulp.
    near = np.abs(nd) <= 22
    np.testing.assert_array_equal(out[near], want[near])
    np.testing.assert_array_max_ulp(out[~near], want[~near], maxulp=1)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))
    assert all(".entry" in p for p in round_to_digits.inspect_ptx().values())


# ---- NumPy ufuncs on whole arrays inside kernels (Numba docs, "Calling a NumPy UFunc") ----

@cuda.jit
def ufunc_in_kernel(r, x):
    # Compute sin(x) with result written to r
    np.sin(x, r)


@cuda.jit
def ufuncs_broadcast(a, b, out, out2):
    np.add(a, b, out)  # a (3, 4) + b (4,): b repeats over the rows
    np.multiply(a, 2.0, out=out2)


def test_numpy_ufunc_on_whole_arrays():
    x = np.arange(10, dtype=np.float32) - 5
    r = np.zeros_like(x)
    ufunc_in_kernel[1, 1](r, x)
    np.testing.assert_allclose(r, np.sin(x), rtol=1e-6)
    a, b = RNG.random((3, 4)), RNG.random(4)
    out, out2 = np.full((3, 4), np.nan), np.full((3, 4), np.nan)
    ufuncs_broadcast[1, 1](a, b, out, out2)
    np.testing.assert_array_equal(out, a + b)
    np.testing.assert_array_equal(out2, a * 2.0)


def test_numpy_ufunc_on_arrays_needs_an_output():
    @cuda.jit
    def no_out(x):
        np.sin(x)

    with pytest.raises(CompileError, match=r"np.sin\(\) on whole arrays needs its output array"):
        no_out[1, 1](np.zeros(3))


@cuda.jit
def grid_rotate(a, out):
    # Every thread reads a value written by another block before the grid barrier.
    i = cuda.grid(1)
    g = cuda.cg.this_grid()
    if i < a.size:
        out[i] = a[i] * 2
    g.sync()
    if i < a.size:
        a[i] = out[(i + 37) % a.size]


def test_grid_sync_across_blocks():
    a = np.arange(200, dtype=np.int64)
    out = np.zeros(200, dtype=np.int64)
    grid_rotate[7, 32](a, out)
    np.testing.assert_array_equal(a, 2 * np.roll(np.arange(200), -37))


@pytest.mark.emulation
def test_grid_sync_launch_too_large_for_the_emulation():
    a = np.zeros(4, dtype=np.int64)
    with pytest.raises(RuntimeError, match="grid-synchronized launch of 2000 blocks"):
        grid_rotate[2000, 1](a, a.copy())


# ---- review findings (each was a bug or a gap; the test says what went wrong) -------------

@cuda.jit
def array_sum(data):
    # Numba docs, "Shared Memory Reduction", verbatim but for the shared size: with
    # forall(len(data)) Numba runs one block of 1024 threads. We used 256-thread blocks,
    # which summed each block separately and gave 229248 instead of 523776.
    tid = cuda.threadIdx.x
    size = len(data)
    if tid < size:
        i = cuda.grid(1)
        shr = cuda.shared.array(1024, int32)
        shr[tid] = data[i]
        cuda.syncthreads()
        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()
        if tid == 0:
            data[tid] = shr[tid]


def test_forall_uses_the_largest_block_the_kernel_allows():
    a = cuda.to_device(np.arange(1024))
    array_sum.forall(len(a))(a)
    assert a.copy_to_host()[0] == 523776


@cuda.jit
def big_local(out):
    # 320 KB of local memory per thread (CUDA allows 512 KB), with a barrier: the fiber
    # stacks were 256 KiB and the process died with SIGSEGV.
    loc = cuda.local.array(40000, float64)
    t = cuda.threadIdx.x
    for i in range(40000):
        loc[i] = i + t
    cuda.syncthreads()
    s = 0.0
    for i in range(40000):
        s += loc[i]
    out[t] = s


# 320 KB of local memory per thread: on an H100 the launch's local memory for every resident thread does not fit (CUDA_ERROR_OUT_OF_MEMORY)
@pytest.mark.emulation
def test_large_local_arrays_fit_the_fiber_stacks():
    out = np.zeros(4)
    big_local[1, 4](out)
    np.testing.assert_array_equal(out, [sum(range(40000)) + 40000 * t for t in range(4)])


def test_local_arrays_beyond_cuda_limit_are_refused():
    @cuda.jit
    def too_big(out):
        loc = cuda.local.array(70000, float64)
        loc[0] = 1.0
        out[0] = loc[0]

    with pytest.raises(CompileError, match="560000 bytes of cuda.local.array per thread"):
        too_big[1, 1](np.zeros(1))


def test_static_shared_memory_beyond_48k_is_refused():
    # CUDA caps static __shared__ at 48 KiB (ptxas refuses more); we checked it against the
    # opt-in limit meant for dynamic shared memory and ran it on the host.
    @cuda.jit
    def big_shared(out):
        sm = cuda.shared.array(20000, float64)
        sm[cuda.threadIdx.x] = 1
        out[0] = sm[0]

    with pytest.raises(ValueError, match="160000 bytes of static shared memory .* 49152"):
        big_shared[1, 1](np.zeros(1))


@cuda.jit
def one_tuple_shapes(a, out):
    # (n,) shapes and a.dtype, as Numba's test_localmem and generic kernels write them.
    loc = cuda.local.array((4,), dtype=a.dtype)
    sh = cuda.shared.array(shape=(8,), dtype=a.dtype)
    t = cuda.threadIdx.x
    loc[0] = a[t]
    sh[t] = loc[0] * 2
    cuda.syncthreads()
    out[t] = sh[7 - t]


def test_one_tuple_shapes_and_array_dtype():
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, dtype=np.float32)
    one_tuple_shapes[1, 8](a, out)
    np.testing.assert_array_equal(out, 2 * a[::-1])


def test_read_only_host_arrays_are_inputs_only():
    @cuda.jit
    def copy_first(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[i]
            src[i] = -1  # a write the read-only array must not receive

    src = np.broadcast_to(np.arange(3.0), (3,))
    assert not src.flags.writeable
    dst = np.zeros(3)
    copy_first[1, 4](src, dst)
    np.testing.assert_array_equal(dst, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(src, [0.0, 1.0, 2.0])


def test_concurrent_first_launches_share_one_specialization():
    import threading

    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    arrays = [np.zeros(16, dtype=np.float32) for _ in range(6)]
    threads = [threading.Thread(target=lambda a=a: add_one[1, 16](a)) for a in arrays]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(add_one.signatures) == 1
    for a in arrays:
        np.testing.assert_array_equal(a, 1.0)


def test_nanosleep():
    @cuda.jit
    def sleepy(a):
        cuda.nanosleep(100)
        a[0] = 1

    a = np.zeros(1)
    sleepy[1, 1](a)
    assert a[0] == 1


def test_assert_in_kernels_compiles_to_nothing():
    # As in Numba without debug=True: the condition is not evaluated.
    @cuda.jit
    def asserts(a):
        i = cuda.grid(1)
        assert i < 0, "never checked"
        a[i] = 1

    a = np.zeros(2)
    asserts[1, 2](a)
    np.testing.assert_array_equal(a, 1.0)


# ---- inspection: NVRTC compiles every kernel above -------------------------------------

KERNELS = [fast_matmul, block_sum, warp_sum, votes, histogram, atomics, atomic_nan,
           reverse_dynamic, to_polar, smooth, geometry, early_exit, counts, bits, float_intrinsics,
           saxpy, fill,
           transpose_into, apply_mixed, apply_float, overrun, swap_first, ufunc_in_kernel,
           ufuncs_broadcast, printer, grid_rotate, array_sum, big_local, one_tuple_shapes]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_every_kernel_compiles_to_ptx(kernel):
    sources = kernel.inspect_cuda()
    if not sources:  # only when the tests that launch it were deselected (-k)
        pytest.skip(f"{kernel.__name__} was not launched in this run")
    ptx = kernel.inspect_ptx()
    for text in ptx.values():
        assert ".entry nu_" in text and f"{kernel.__name__}" in text
    for src in sources.values():
        assert "NU_KERNEL_ENTRY" in src


@pytest.mark.gpu
def test_host_arrays_reach_the_gpu_in_their_own_layout():
    # A host array is staged as NumPy's order='K' copy (np.empty_like's layout): on an H100
    # F-order arrays arrived as C copies, and np.sum(a) in a kernel then summed in another
    # order than NumPy (test_kernel_reductions' bit-exact sums failed from 2-d F arrays on).
    @cuda.jit
    def strides_of(a, out):
        out[0] = a.strides[0]
        out[1] = a.strides[1]
        a[1, 0] = -1.0

    grid = np.arange(1.0, 13.0).reshape(3, 4)
    for a in (grid, np.asfortranarray(grid), np.arange(1.0, 49.0).reshape(6, 8)[::2, ::-2]):
        want = a.copy()
        want[1, 0] = -1.0
        out = np.full(2, -7, np.int64)
        strides_of[1, 1](a, out)
        assert tuple(out) == np.empty_like(a).strides
        np.testing.assert_array_equal(a, want)  # written back where it belongs
