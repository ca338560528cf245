"""numba.cuda.random: Numba's documentation examples, bit-exact agreement with a pure-Python
xoroshiro128+ written from Numba's source, statistics, NVRTC compiles and errors."""

import math
import time

import numpy as np
import pytest

import numbacuda_ufunc.cuda.random
from numbacuda_ufunc import cuda
from numbacuda_ufunc import float64 as nu_float64
from numbacuda_ufunc.cuda.random import (
    create_xoroshiro128p_states,
    init_xoroshiro128p_states,
    xoroshiro128p_dtype,
    xoroshiro128p_jump,
    xoroshiro128p_next,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_type,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)
from numbacuda_ufunc.errors import CompileError


def words(states):
    """Host states as an (n, 2) uint64 array, from either form: Numba's records
    (xoroshiro128p_dtype) or the (n, 2) uint64 array of earlier versions."""
    a = states.copy_to_host() if hasattr(states, "copy_to_host") else np.asarray(states)
    if a.dtype.fields is not None:
        return a.view(np.uint64).reshape(a.shape[0], 2)
    return a


def legacy(states):
    """The same generators in the (n, 2) uint64 form of earlier versions."""
    return cuda.to_device(words(states))

# ---- the reference: Numba's numba/cuda/random.py, on Python ints ----------------------------

M64 = (1 << 64) - 1


def ref_seed(seed):
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    z ^= z >> 31
    return [z, z]


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


def ref_next(s):
    s0, s1 = s
    result = (s0 + s1) & M64
    s1 ^= s0
    s[0] = rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M64)
    s[1] = rotl(s1, 36)
    return result


def ref_jump(s):
    j0 = j1 = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for b in range(64):
            if word >> b & 1:
                j0 ^= s[0]
                j1 ^= s[1]
            ref_next(s)
    s[:] = [j0, j1]


def ref_states(n, seed, start=0):
    s = ref_seed(seed & M64)
    for _ in range(start):
        ref_jump(s)
    out = []
    for _ in range(n):
        out.append(list(s))
        ref_jump(s)
    return np.array(out, dtype=np.uint64).reshape(n, 2)


def ref_uniform64(x):
    return (x >> 11) * (1.0 / (1 << 53))


def ref_uniform32(x):
    return np.float32(ref_uniform64(x))


def ref_normal32(s):
    u1, u2 = ref_uniform32(ref_next(s)), ref_uniform32(ref_next(s))
    return np.sqrt(np.float32(-2.0) * np.log(u1)) * np.cos(np.float32(2 * math.pi) * u2)


def ref_normal64(s):
    u1, u2 = ref_uniform32(ref_next(s)), ref_uniform32(ref_next(s))
    return math.sqrt(-2.0 * float(np.log(u1))) * math.cos(2 * math.pi * float(u2))


# ---- Numba's documentation examples -----------------------------------------------------------

@cuda.jit
def compute_pi(rng_states, iterations, out):
    # Numba docs, "Random Number Generation", example: Monte Carlo estimate of pi.
    thread_id = cuda.grid(1)
    inside = 0
    for i in range(iterations):  # noqa: B007  (verbatim from the docs)
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x**2 + y**2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


def test_docs_compute_pi():
    threads_per_block = 64
    blocks = 24
    rng_states = create_xoroshiro128p_states(threads_per_block * blocks, seed=1)
    out = np.full(threads_per_block * blocks, np.nan, dtype=np.float32)
    compute_pi[blocks, threads_per_block](rng_states, 10000, out)
    assert not np.isnan(out).any()
    assert abs(out.mean() - math.pi) < 0.01
    assert len(np.unique(out)) > 100  # the threads draw different numbers


@cuda.jit
def random_3d(arr, rng_states):
    # Numba docs, "An example of a 3D grid": strided loops, one generator per thread.
    startx, starty, startz = cuda.grid(3)
    stridex, stridey, stridez = cuda.gridsize(3)
    tid = (startz * stridey * stridex) + (starty * stridex) + startx
    for i in range(startz, arr.shape[0], stridez):
        for j in range(starty, arr.shape[1], stridey):
            for k in range(startx, arr.shape[2], stridex):
                arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)


def test_docs_random_3d_grid():
    # The docs' array is 1000**3 and the grid 16**3 blocks of 8**3 threads; smaller here
    # (the host backend runs every thread), still more elements than threads per axis.
    X, Y, Z = 37, 29, 23
    bx, by, bz = 4, 4, 4
    gx, gy, gz = 2, 3, 2
    nthreads = bx * by * bz * gx * gy * gz
    rng_states = create_xoroshiro128p_states(nthreads, seed=1)
    arr = cuda.to_device(np.full((X, Y, Z), np.nan, dtype=np.float32))
    random_3d[(gx, gy, gz), (bx, by, bz)](arr, rng_states)
    got = arr.copy_to_host()
    assert ((got >= 0) & (got <= 1)).all()
    # Element (i, j, k) is draw number d of thread tid: check it against the reference.
    sx, sy, sz = bx * gx, by * gy, bz * gz
    states = ref_states(nthreads, 1)
    for i, j, k in [(0, 0, 0), (36, 28, 22), (5, 17, 9), (20, 3, 11)]:
        tid = (i % sz) * sy * sx + (j % sy) * sx + (k % sx)
        loops_before = ((i // sz) * len(range(j % sy, Y, sy)) + j // sy) * \
            len(range(k % sx, Z, sx)) + k // sx
        s = [int(v) for v in states[tid]]
        for _ in range(loops_before):
            ref_next(s)
        assert got[i, j, k] == ref_uniform32(ref_next(s))


def test_import_numba_style():
    # `import numba.cuda.random` style: the module is an attribute of the cuda package.
    assert cuda.random is numbacuda_ufunc.cuda.random
    assert cuda.random.create_xoroshiro128p_states is create_xoroshiro128p_states


# ---- bit-exact agreement with the reference ---------------------------------------------------

@pytest.mark.parametrize("seed,start", [(0, 0), (1, 0), (12345, 3), (2**64 - 1, 1),
                                        (-1, 0), (2**40 + 7, 17)])
def test_states_match_reference(seed, start):
    n = 21
    got = create_xoroshiro128p_states(n, seed=seed, subsequence_start=start).copy_to_host()
    # Numba's layout: one record (s0, s1) per generator.
    assert got.dtype == xoroshiro128p_dtype and got.shape == (n,)
    assert xoroshiro128p_dtype.itemsize == 16 and xoroshiro128p_dtype.isalignedstruct
    np.testing.assert_array_equal(words(got), ref_states(n, seed, start))
    np.testing.assert_array_equal(got["s0"], ref_states(n, seed, start)[:, 0])


def test_states_large_subsequence_start():
    # subsequence_start jumps by powers, not one by one: J^(2^40 + 3) = J^3 after J^(2^40).
    start = 2**40 + 3
    got = create_xoroshiro128p_states(4, seed=9, subsequence_start=start).copy_to_host()
    again = create_xoroshiro128p_states(7, seed=9, subsequence_start=2**40).copy_to_host()
    np.testing.assert_array_equal(got, again[3:7])


def test_init_states_in_place():
    states = cuda.to_device(np.zeros((10, 2), dtype=np.uint64))  # the (n, 2) form
    init_xoroshiro128p_states(states, 77, subsequence_start=2)
    np.testing.assert_array_equal(states.copy_to_host(), ref_states(10, 77, 2))


@pytest.mark.parametrize("align", [True, False])
def test_init_record_states_in_place(align):
    dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=align)
    states = cuda.device_array(10, dtype=dtype)
    init_xoroshiro128p_states(states, 77, subsequence_start=2)
    assert states.dtype == dtype
    np.testing.assert_array_equal(words(states), ref_states(10, 77, 2))


def test_init_states_on_the_host():
    from numbacuda_ufunc.cuda.random import init_xoroshiro128p_states_cpu

    recs = np.zeros(6, xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(recs, 5, 3)
    np.testing.assert_array_equal(words(recs), ref_states(6, 5, 3))
    pairs = np.zeros((6, 2), np.uint64)
    init_xoroshiro128p_states_cpu(pairs, 5, 3)
    np.testing.assert_array_equal(pairs, ref_states(6, 5, 3))
    with pytest.raises(TypeError, match=r"init_xoroshiro128p_states_cpu\(\): states must be"):
        init_xoroshiro128p_states_cpu(np.zeros(6, np.uint64), 5, 0)


def test_declared_signature_with_xoroshiro128p_type():
    @cuda.jit((xoroshiro128p_type[:], nu_float64[:]))
    def uniform(states, out):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = xoroshiro128p_uniform_float64(states, i)

    states = create_xoroshiro128p_states(4, seed=8)
    out = np.full(4, np.nan)
    uniform[1, 4](states, out)
    np.testing.assert_array_equal(out, [ref_uniform64(ref_next([int(v) for v in r]))
                                        for r in ref_states(4, 8)])
    assert ".target sm_90" in next(iter(uniform.inspect_ptx(cc=(9, 0)).values()))


def test_zero_states():
    assert create_xoroshiro128p_states(0, seed=1).shape == (0,)


@cuda.jit
def draw(states, kind, out):
    i = cuda.grid(1)
    if i < states.shape[0]:
        for k in range(out.shape[1]):
            if kind == 0:
                out[i, k] = xoroshiro128p_next(states, i)
            elif kind == 1:
                out[i, k] = xoroshiro128p_uniform_float32(states, i)
            elif kind == 2:
                out[i, k] = xoroshiro128p_uniform_float64(states, i)
            elif kind == 3:
                out[i, k] = xoroshiro128p_normal_float32(states, i)
            else:
                out[i, k] = xoroshiro128p_normal_float64(states, i)


def _draw(kind, dtype, n=8, count=50, seed=3, form="records"):
    states = create_xoroshiro128p_states(n, seed=seed)
    if form == "legacy":
        states = legacy(states)
    out = np.full((n, count), 7, dtype=dtype)
    draw[1, 32](states, kind, out)
    return out, words(states)


@pytest.mark.parametrize("form", ["records", "legacy"])
def test_next_matches_reference(form):
    got, after = _draw(0, np.uint64, form=form)
    ref = ref_states(8, 3)
    for i in range(8):
        s = [int(v) for v in ref[i]]
        assert [int(v) for v in got[i]] == [ref_next(s) for _ in range(50)]
        assert [int(v) for v in after[i]] == s  # the state advanced in place


@pytest.mark.parametrize("form", ["records", "legacy"])
@pytest.mark.parametrize("kind,dtype,conv", [(1, np.float32, ref_uniform32),
                                             (2, np.float64, ref_uniform64)])
def test_uniform_matches_reference(kind, dtype, conv, form):
    got, _ = _draw(kind, dtype, form=form)
    ref = ref_states(8, 3)
    for i in range(8):
        s = [int(v) for v in ref[i]]
        np.testing.assert_array_equal(got[i], np.array([conv(ref_next(s)) for _ in range(50)],
                                                       dtype=dtype))


@pytest.mark.parametrize("kind,dtype,ref_normal", [(3, np.float32, ref_normal32),
                                                   (4, np.float64, ref_normal64)])
def test_normal_matches_reference(kind, dtype, ref_normal):
    got, after = _draw(kind, dtype)
    legacy_got, legacy_after = _draw(kind, dtype, form="legacy")
    np.testing.assert_array_equal(legacy_got, got)  # both forms: the same bits
    np.testing.assert_array_equal(legacy_after, after)
    ref = ref_states(8, 3)
    for i in range(8):
        s = [int(v) for v in ref[i]]
        want = np.array([ref_normal(s) for _ in range(50)], dtype=dtype)
        # logf/cosf may differ from NumPy's by an ulp; the draws (states) are exact.
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-6)
        assert [int(v) for v in after[i]] == s


@cuda.jit
def jump_each(states):
    i = cuda.grid(1)
    if i < states.shape[0]:
        xoroshiro128p_jump(states, i)


@pytest.mark.parametrize("form", ["records", "legacy"])
def test_jump_matches_reference(form):
    states = create_xoroshiro128p_states(5, seed=11)
    if form == "legacy":
        states = legacy(states)
    jump_each[1, 8](states)
    # Generator i after one jump is where generator i + 1 started.
    np.testing.assert_array_equal(words(states), ref_states(6, 11)[1:])


@cuda.jit
def via_module(states, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = numbacuda_ufunc.cuda.random.xoroshiro128p_uniform_float64(states, i)


def test_call_through_module_attribute():
    states = create_xoroshiro128p_states(4, seed=5)
    out = np.full(4, np.nan)
    via_module[1, 4](states, out)
    ref = ref_states(4, 5)
    np.testing.assert_array_equal(out, [ref_uniform64(ref_next([int(v) for v in r]))
                                        for r in ref])


# ---- statistics ---------------------------------------------------------------------------------

@cuda.jit
def fill_many(states, kind, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    for k in range(i, out.shape[0], stride):
        if kind == 0:
            out[k] = xoroshiro128p_uniform_float64(states, i)
        else:
            out[k] = xoroshiro128p_normal_float64(states, i)


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_statistics(kind):
    n = 100_000
    states = create_xoroshiro128p_states(256, seed=2024)
    out = np.full(n, np.nan)
    fill_many[4, 64](states, 0 if kind == "uniform" else 1, out)
    assert np.isfinite(out).all()
    tol = 5 / math.sqrt(n)  # five standard errors
    if kind == "uniform":
        assert ((out >= 0) & (out < 1)).all()
        assert abs(out.mean() - 0.5) < tol and abs(out.std() - math.sqrt(1 / 12)) < tol
    else:
        assert abs(out.mean()) < tol and abs(out.std() - 1) < tol


# ---- NVRTC compiles every kernel above ------------------------------------------------------

KERNELS = [compute_pi, random_3d, draw, jump_each, via_module, fill_many]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_every_kernel_compiles_to_ptx(kernel):
    if not kernel.inspect_cuda():
        pytest.skip(f"{kernel.__name__} was not launched in this run")
    for text in kernel.inspect_ptx().values():
        assert ".entry nu_" in text


# ---- errors and seeding speed ---------------------------------------------------------------

@pytest.mark.parametrize("states", [np.zeros((4, 2), dtype=np.int64),
                                    np.zeros(8, dtype=np.uint64),
                                    np.zeros((4, 2), dtype=np.float64),
                                    np.zeros(4, dtype=[("s0", np.uint64), ("s2", np.uint64)]),
                                    np.zeros(4, dtype=[("s0", np.uint32), ("s1", np.uint64)]),
                                    np.zeros((4, 2), dtype=xoroshiro128p_dtype)])
def test_wrong_states_type(states):
    @cuda.jit
    def bad(states):
        xoroshiro128p_uniform_float32(states, 0)

    with pytest.raises(CompileError, match=r"xoroshiro128p_uniform_float32\(\): states must "
                                           r"be the array create_xoroshiro128p_states\(\) "
                                           r"returns: records of xoroshiro128p_dtype"):
        bad[1, 1](states)


def test_float_index_rejected():
    @cuda.jit
    def bad(states):
        xoroshiro128p_next(states, 0.5)

    with pytest.raises(CompileError, match=r"xoroshiro128p_next\(\): expected an integer"):
        bad[1, 1](np.zeros((1, 2), dtype=np.uint64))


def test_device_functions_outside_kernels():
    with pytest.raises(RuntimeError, match="only inside a @cuda.jit kernel"):
        xoroshiro128p_uniform_float32(np.zeros((1, 2), dtype=np.uint64), 0)


def test_host_api_errors():
    with pytest.raises(TypeError, match=r"create_xoroshiro128p_states\(\): n must be an "
                                        r"integer \(got 2.5\)"):
        create_xoroshiro128p_states(2.5, seed=1)
    with pytest.raises(ValueError, match=r"subsequence_start must be in \[0, 2\*\*64\)"):
        create_xoroshiro128p_states(2, seed=1, subsequence_start=-1)
    with pytest.raises(TypeError, match=r"init_xoroshiro128p_states\(\): states must be a "
                                        r"1-d array of xoroshiro128p_dtype records or a "
                                        r"uint64 array of shape \(n, 2\)"):
        init_xoroshiro128p_states(cuda.to_device(np.zeros(4, dtype=np.uint64)), seed=1)
    with pytest.raises(TypeError, match=r"states must be a 1-d array of xoroshiro128p_dtype"):
        init_xoroshiro128p_states(cuda.device_array(4, dtype=[("s0", "u8"), ("t", "u8")]),
                                  seed=1)
    with pytest.raises(TypeError, match=r"states must be a device array"):
        init_xoroshiro128p_states(np.zeros((4, 2), dtype=np.uint64), seed=1)


def test_seeding_is_fast():
    t0 = time.perf_counter()
    states = create_xoroshiro128p_states(100_000, seed=42)
    assert time.perf_counter() - t0 < 2.0  # walking 1e5 jumps in Python takes minutes
    host = states.copy_to_host()
    np.testing.assert_array_equal(words(host[:3]), ref_states(3, 42))
    # The last state is the first one advanced by 99_999 jumps.
    s = create_xoroshiro128p_states(1, seed=42, subsequence_start=99_999).copy_to_host()
    np.testing.assert_array_equal(host[-1], s[0])
