"""src/kernels/kernel.cuh: @cuda.jit kernel scaffolding, host emulation and device entry.

Each tests/kernel_runtime/*.cu unit is written by hand in the shape the kernel translator
generates. It is built for the host with g++ (the host backend's compiler) into a shared
library that ctypes calls with hand-packed parameter words, and the results are checked
against NumPy; the same unit is compiled for the device with nvcc -ptx (and NVRTC, the
engine's compiler, when libnvrtc is present), checked and unchecked. No GPU is needed.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "src" / "kernels"
UNITS = ROOT / "tests" / "kernel_runtime"
NVCC = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
CXX = os.environ.get("CXX", "g++").split()
NAMES = sorted(p.stem for p in UNITS.glob("*.cu"))
FULL = 0xFFFFFFFF


class LaunchInfo(ctypes.Structure):
    # nu::kernel_launch_info
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("dynamic_shared_bytes", ctypes.c_ulonglong),
                ("poll", ctypes.c_void_p)]  # null: nothing polls for Ctrl-C


ENTRY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(LaunchInfo),
                         ctypes.c_char_p, ctypes.c_int)


def _run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))}\n{proc.stdout}{proc.stderr}")


def _host_build(name, out_dir):
    lib = out_dir / f"{name}.so"
    _run([*CXX, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
          "-include", str(KERNELS / "host_prelude.h"), "-I", str(KERNELS), "-x", "c++",
          str(UNITS / f"{name}.cu"), "-o", str(lib)])
    return ctypes.CDLL(str(lib))


def _unchecked_copy(name, out_dir):
    """The unit as a non-debug device build sees it: without NU_BOUNDSCHECK."""
    text = (UNITS / f"{name}.cu").read_text()
    assert "#define NU_BOUNDSCHECK 1\n" in text
    path = out_dir / f"{name}_unchecked.cu"
    path.write_text(text.replace("#define NU_BOUNDSCHECK 1\n", ""))
    return path


def _nvcc_ptx(source, out_dir):
    ptx = out_dir / (source.stem + ".ptx")
    _run([NVCC, "-std=c++17", "-arch=sm_90", "-ptx", "-I", str(KERNELS), str(source),
          "-o", str(ptx)])
    return ptx.read_text()


def _nvrtc_library():
    for path in ("/usr/local/cuda/lib64/libnvrtc.so", "libnvrtc.so", "libnvrtc.so.13",
                 "libnvrtc.so.12"):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def _nvrtc_ptx(lib, source):
    """PTX for sm_80 (the oldest target) from NVRTC: no standard library, as the engine runs it."""
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source.read_text().encode(),
                                  source.name.encode(), 0, None, None) == 0
    try:
        opts = [b"-std=c++17", b"-arch=compute_80", b"-I" + str(KERNELS).encode()]
        rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        assert rc == 0, f"NVRTC failed on {source.name}:\n{log.value.decode()}"
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        return ptx.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """Every unit compiled at once (each compiler call is ~0.3 s; two cores go far)."""
    out = tmp_path_factory.mktemp("kernel_runtime")
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))
    futures = {("host", n): pool.submit(_host_build, n, out) for n in NAMES}
    have_nvcc = shutil.which(NVCC) is not None
    nvrtc = _nvrtc_library()
    unchecked = {n: _unchecked_copy(n, out) for n in NAMES}
    for n in NAMES:
        if have_nvcc:
            futures[("nvcc", n)] = pool.submit(_nvcc_ptx, UNITS / f"{n}.cu", out)
            futures[("nvcc-unchecked", n)] = pool.submit(_nvcc_ptx, unchecked[n], out)
    # In-process NVRTC starts only when every compiler process has started and ended: a
    # spawn (vfork on Linux) beside a thread inside NVRTC failed once in CI with EFAULT.
    for f in list(futures.values()):
        f.exception()
    if nvrtc is not None:
        for n in NAMES:
            futures[("nvrtc", n)] = pool.submit(_nvrtc_ptx, nvrtc, UNITS / f"{n}.cu")
            futures[("nvrtc-unchecked", n)] = pool.submit(_nvrtc_ptx, nvrtc, unchecked[n])
    yield {k: f.result for k, f in futures.items()}
    pool.shutdown()


class Module:
    def __init__(self, lib):
        self.lib = lib

    def launch(self, entry, grid, block, *args, shared=0):
        """Packs the words as the engine does and runs the host entry: (status, message)."""
        words = []
        for a in args:
            if isinstance(a, np.ndarray):
                words += [a.ctypes.data, *a.shape, *a.strides]
            else:  # a NumPy scalar: its bytes from the start of a word (complex128: two)
                raw = np.asarray(a).tobytes()
                raw += bytes(-len(raw) % 8)
                words += [int(w) for w in np.frombuffer(raw, np.int64)]
        packed = (ctypes.c_longlong * max(1, len(words)))(*words)
        grid = tuple(grid) + (1,) * (3 - len(tuple(grid)))
        block = tuple(block) + (1,) * (3 - len(tuple(block)))
        info = LaunchInfo((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block), shared)
        message = ctypes.create_string_buffer(512)
        fn = ENTRY((entry, self.lib))
        status = fn(packed, ctypes.byref(info), message, len(message))
        return status, message.value.decode()

    def ok(self, entry, grid, block, *args, shared=0):
        status, message = self.launch(entry, grid, block, *args, shared=shared)
        assert (status, message) == (0, "")


@pytest.fixture(scope="module")
def modules(builds):
    return {n: Module(builds[("host", n)]()) for n in NAMES}


rng = np.random.default_rng(20240601)


# ---- geometry.cu ------------------------------------------------------------------------------
def test_kernel_runtime_words_1d_strided(modules):
    a = rng.standard_normal(301).astype(np.float32)
    b_base = rng.standard_normal(602).astype(np.float32)
    b = b_base[::-2]  # negative stride: the words carry strides in bytes
    out = np.full(301, np.nan, np.float32)
    modules["geometry"].ok("nu_kernel_add_vectors_1a2b3c4d", (3,), (128,), a, b, out,
                           np.float64(0.5))
    np.testing.assert_allclose(out, (a.astype(np.float64) + 0.5 * b).astype(np.float32),
                               rtol=1e-6)


@pytest.mark.parametrize("negate", [False, True])
def test_kernel_runtime_words_2d_complex_scalar(modules, negate):
    x = rng.standard_normal((13, 21))
    out = np.full((13, 21), np.nan, np.complex128)
    z = np.complex128(1.5 - 2.25j)
    modules["geometry"].ok("nu_kernel_scale_2d_00000001", (3, 2), (8, 8), x, z, out,
                           np.int32(3), np.bool_(negate))
    expect = x * 3 * z
    np.testing.assert_allclose(out, -expect if negate else expect)


def test_kernel_runtime_geometry_3d(modules):
    grid, block = (2, 3, 2), (4, 3, 5)
    nb, nt = 12, 60
    out = np.full((nb, nt, 14), -1, np.int64)
    modules["geometry"].ok("nu_kernel_geometry_00000002", grid, block, out)
    t = np.arange(nt)
    b = np.arange(nb)
    np.testing.assert_array_equal(out[:, :, 0], np.broadcast_to(t % 4, (nb, nt)))
    np.testing.assert_array_equal(out[:, :, 1], np.broadcast_to(t // 4 % 3, (nb, nt)))
    np.testing.assert_array_equal(out[:, :, 2], np.broadcast_to(t // 12, (nb, nt)))
    np.testing.assert_array_equal(out[:, :, 3], np.broadcast_to((b % 2)[:, None], (nb, nt)))
    np.testing.assert_array_equal(out[:, :, 4], np.broadcast_to((b // 2 % 3)[:, None], (nb, nt)))
    np.testing.assert_array_equal(out[:, :, 5], np.broadcast_to((b // 6)[:, None], (nb, nt)))
    np.testing.assert_array_equal(out[:, :, 6:9], np.broadcast_to(block, (nb, nt, 3)))
    np.testing.assert_array_equal(out[:, :, 9:12], np.broadcast_to(grid, (nb, nt, 3)))
    np.testing.assert_array_equal(out[:, :, 12], np.broadcast_to(t % 32, (nb, nt)))
    assert (out[:, :, 13] == 32).all()


def test_kernel_runtime_block_of_1024_threads(modules):
    out = np.full((2, 1024), -1, np.int32)
    counts = np.full((2, 1024), -1, np.int32)
    modules["geometry"].ok("nu_kernel_big_block_00000003", (2,), (1024,), out, counts)
    np.testing.assert_array_equal(out, np.broadcast_to((1023 - np.arange(1024)) * 3, (2, 1024)))
    # syncthreads_count(t % 3 == 0) = 342, syncthreads_and(all) = 1, syncthreads_or(one) = 1
    assert (counts == 342 + 10000 + 100000).all()


def test_kernel_runtime_dynamic_shared_reverse(modules):
    n, blocks = 96, 5
    a = rng.standard_normal(n * blocks).astype(np.float32)
    out = np.full_like(a, np.nan)
    modules["geometry"].ok("nu_kernel_reverse_00000004", (blocks,), (n,), a, out, shared=4 * n)
    np.testing.assert_array_equal(out, a.reshape(blocks, n)[:, ::-1].ravel())


def _brev(x, bits):
    return int(format(int(x), f"0{bits}b")[::-1], 2)


def test_kernel_runtime_bit_intrinsics(modules):
    n = 70
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    q = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
    u[:3] = [0, 1, 0x80000000]
    q[:3] = [0, -1, 1 << 40]
    x = rng.standard_normal(n)
    out_u = np.zeros(n, np.uint32)
    out_q = np.zeros(n, np.int64)
    out_i = np.full((n, 6), -99, np.int32)
    out_f = np.full(n, np.nan)
    modules["geometry"].ok("nu_kernel_bits_00000005", (3,), (32,), u, q, x, out_u, out_q, out_i,
                           out_f)

    def clz(v, bits):
        return bits - int(v).bit_length()

    def ffs(v):
        v = int(v)
        return (v & -v).bit_length()

    qu = q.view(np.uint64)
    expect = np.array([[bin(int(a)).count("1"), clz(a, 32), ffs(a), bin(int(b)).count("1"),
                        clz(b, 64), ffs(b)] for a, b in zip(u, qu)])
    np.testing.assert_array_equal(out_i, expect)
    np.testing.assert_array_equal(out_u, [_brev(v, 32) for v in u])
    np.testing.assert_array_equal(out_q.view(np.uint64), np.array([_brev(v, 64) for v in qu],
                                                                  np.uint64))
    np.testing.assert_allclose(out_f, x * x + 1.0, rtol=1e-15)


def test_kernel_runtime_constant_and_local_views(modules):
    out = np.full(40, np.nan)
    modules["geometry"].ok("nu_kernel_tables_00000007", (5,), (8,), out)
    i = np.arange(40)
    np.testing.assert_array_equal(out, np.array([1.5, 2.5, 3.5, 4.5])[i % 4] * (i % 2 + 1) + i)


def test_kernel_runtime_no_parameters(modules):
    modules["geometry"].ok("nu_kernel_nothing_00000006", (2, 2), (33,))


@pytest.mark.parametrize("grid,block,fragment", [
    ((1,), (1025,), "block (1025, 1, 1) exceeds CUDA's limits"),
    ((1,), (32, 32, 2), "block (32, 32, 2) exceeds CUDA's limits"),
    ((1,), (1, 1, 65), "block (1, 1, 65) exceeds"),
    ((1,), (2**31, 2**31, 4), "block (2147483648, 2147483648, 4) exceeds"),
    ((1, 65536), (32,), "grid (1, 65536, 1) exceeds CUDA's limits"),
    ((0,), (32,), "empty launch"),
])
def test_kernel_runtime_bad_launch(modules, grid, block, fragment):
    status, message = modules["geometry"].launch("nu_kernel_nothing_00000006", grid, block)
    assert status == 3 and fragment in message


def test_kernel_runtime_unsupported_type_stops_the_build(tmp_path):
    src = tmp_path / "bad.cu"
    src.write_text('#include "kernel.cuh"\n'
                   "__device__ void f(nu::array<float, 1> a) { nu::kern::atomic_and(a(0), 1.0f); }\n"
                   "NU_KERNEL_ENTRY(k, f, 3, 0, nu::karg<float, 1>)\n")
    proc = subprocess.run([*CXX, "-std=c++17", "-fsyntax-only", "-include",
                           str(KERNELS / "host_prelude.h"), "-I", str(KERNELS), "-x", "c++",
                           str(src)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "nu::kern::atomic_and: supported on int32, int64, uint32 and uint64" in proc.stderr


def test_kernel_runtime_word_count_checked(tmp_path):
    src = tmp_path / "bad.cu"
    src.write_text('#include "kernel.cuh"\n'
                   "__device__ void f(nu::array<float, 2> a, double x) {}\n"
                   "NU_KERNEL_ENTRY(k, f, 4, 0, nu::karg<float, 2>, nu::karg<double, -1>)\n")
    proc = subprocess.run([*CXX, "-std=c++17", "-fsyntax-only", "-include",
                           str(KERNELS / "host_prelude.h"), "-I", str(KERNELS), "-x", "c++",
                           str(src)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "NU_KERNEL_ENTRY(k): WORDS does not match the karg list" in proc.stderr


# ---- matmul.cu --------------------------------------------------------------------------------
@pytest.mark.parametrize("m,k,n", [(37, 45, 29), (16, 16, 16)])
def test_kernel_runtime_tiled_matmul(modules, m, k, n):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    grid = ((n + 15) // 16, (m + 15) // 16)
    modules["matmul"].ok("nu_kernel_matmul_0000000a", grid, (16, 16), a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4,
                               atol=1e-4)


# ---- atomics.cu -------------------------------------------------------------------------------
ATOMIC_TYPES = {"i4_00000030": np.int32, "u4_00000031": np.uint32, "i8_00000032": np.int64,
                "u8_00000033": np.uint64, "f4_00000034": np.float32, "f8_00000035": np.float64}


@pytest.mark.parametrize("suffix", list(ATOMIC_TYPES))
def test_kernel_runtime_atomics(modules, suffix):
    dt = np.dtype(ATOMIC_TYPES[suffix])
    n = 200
    if dt.kind == "f":
        vals = rng.standard_normal(n).astype(dt) * 10
    elif dt.kind == "i":
        vals = rng.integers(-50, 50, n).astype(dt)
    else:
        vals = rng.integers(1, 1000, n).astype(dt)
    acc = np.zeros(13, dt)
    acc[2] = acc[3] = acc[4] = acc[5] = vals[7]
    acc[6] = 42
    if dt.kind == "f":
        acc[8] = acc[9] = np.nan  # nanmax replaces a stored NaN, max keeps it
    else:
        acc[8] = ~dt.type(0)  # and: all ones; or, xor: zero
    olds = np.full((n, 4), 99, dt)
    modules["atomics"].ok(f"nu_kernel_atomics_{suffix}", (4,), (64,), acc, olds, vals)

    with np.errstate(over="ignore"):
        cums = np.concatenate([[0], np.cumsum(vals, dtype=dt)[:-1]]).astype(dt)
        # threads run in linear order on the host: add's old values are the running sums
        np.testing.assert_allclose(olds[:, 0], cums, rtol=1e-5 if dt.kind == "f" else 0)
        np.testing.assert_allclose(acc[0], np.sum(vals, dtype=dt), rtol=1e-5 if dt.kind == "f" else 0)
        np.testing.assert_allclose(acc[1], dt.type(0) - np.sum(vals, dtype=dt),
                                   rtol=1e-5 if dt.kind == "f" else 0)
    assert acc[2] == vals.max() and acc[3] == vals.min()
    assert acc[4] == vals.max() and acc[5] == vals.min()
    assert acc[6] == vals[-1]
    np.testing.assert_array_equal(olds[:, 1], np.concatenate([[42], vals[:-1]]).astype(dt))
    assert acc[7] == n
    if dt.kind == "f":
        assert acc[8] == vals.max()
        assert np.isnan(acc[9])
    else:
        assert acc[8] == np.bitwise_and.reduce(vals)
        assert acc[9] == np.bitwise_or.reduce(vals)
        assert acc[10] == np.bitwise_xor.reduce(vals)
    if dt.kind == "u":
        i = np.arange(n)
        np.testing.assert_array_equal(olds[:, 2], i % 6)  # inc(.., 5): 0 1 2 3 4 5 0 ...
        assert acc[11] == n % 6
        np.testing.assert_array_equal(olds[:, 3], (-i) % 6)  # dec(.., 5): 0 5 4 3 2 1 0 ...
        assert acc[12] == (-n) % 6


@pytest.mark.parametrize("suffix", ["f4_00000034", "f8_00000035"])
@pytest.mark.parametrize("nan_at", [0, 77, 199])
def test_kernel_runtime_atomic_float_max_min_nan(modules, suffix, nan_at):
    dt = np.dtype(ATOMIC_TYPES[suffix])
    n = 200
    vals = rng.standard_normal(n).astype(dt)
    vals[nan_at] = np.nan
    acc = np.zeros(13, dt)
    acc[2:6] = vals[nan_at - 1]
    acc[8] = acc[9] = np.nan
    olds = np.zeros((n, 4), dt)
    modules["atomics"].ok(f"nu_kernel_atomics_{suffix}", (4,), (64,), acc, olds, vals)
    # max/min are Python's max(acc, v), as in numba-cuda: a NaN value changes nothing
    # (acc[2:4] start at a value of vals, so they end at its NaN-free extremes) ...
    assert acc[2] == np.nanmax(vals) and acc[3] == np.nanmin(vals)
    assert acc[4] == np.nanmax(vals) and acc[5] == np.nanmin(vals)  # nanmax/nanmin: ignored
    assert acc[8] == np.nanmax(vals) and np.isnan(acc[9])  # ... and a stored NaN stays


# ---- warp.cu ----------------------------------------------------------------------------------
def test_kernel_runtime_warp_reductions(modules):
    blocks, threads = 3, 128
    n = blocks * threads
    a = rng.standard_normal(n)
    out = np.full(n // 32, np.nan)
    outi = np.full(n, -1, np.int32)
    halves = np.full(n, -1, np.int32)
    modules["warp"].ok("nu_kernel_warp_sums_00000040", (blocks,), (threads,), a, out, outi, halves)
    np.testing.assert_allclose(out, a.reshape(-1, 32).sum(axis=1), rtol=1e-12)
    k = np.trunc(a * 8).astype(np.int32).reshape(-1, 32)
    totals = np.repeat(k.sum(axis=1), 32)
    np.testing.assert_array_equal(outi, totals)
    lane = np.arange(n) % 32
    half_sum = np.where(lane < 16, 16 * totals + 120, 16 * totals + 376)  # + sum of the lanes
    np.testing.assert_array_equal(halves, half_sum)


def test_kernel_runtime_votes_partial_warp(modules):
    threads = 48  # the second warp has 16 lanes: the full mask names 16 that do not exist
    a = rng.integers(-300, 300, threads).astype(np.int32)
    a[32:] = np.abs(a[32:]) % 99 + 1  # second warp: all positive, all equal // 100
    out = np.full((threads, 10), -7, np.int64)
    modules["warp"].ok("nu_kernel_votes_00000041", (1,), (threads,), a, out)
    for w, lanes in ((0, 32), (1, 16)):
        x = a[32 * w:32 * w + lanes]
        o = out[32 * w:32 * w + lanes]
        ballot = sum(1 << i for i in range(lanes) if x[i] > 0)
        assert (o[:, 0] == ballot).all()
        assert (o[:, 1] == int((x > 0).all())).all()
        assert (o[:, 2] == int((x > 0).any())).all()
        assert (o[:, 3] == int(len(set(x // 100)) == 1)).all()
        assert (o[:, 4] == x[3]).all()
        np.testing.assert_array_equal(o[:, 5], np.cumsum(x))
        assert (o[:, 6] == (1 << lanes) - 1).all()
        np.testing.assert_array_equal(o[:, 7], (1 << np.arange(lanes)) - 1)
        np.testing.assert_array_equal(o[:, 8], np.arange(lanes))
        # source lane + 1: lane 31 reads lane 0 (modulo 32); past the block, the own value
        src = np.arange(1, lanes + 1) % 32
        own = src >= lanes
        expect = np.where(own, x > 0, (x[np.minimum(src, lanes - 1)] > 0))
        np.testing.assert_array_equal(o[:, 9], expect.astype(np.int64))
    assert out[32:, 3].all() and out[32:, 1].all()


@pytest.mark.parametrize("live", [40, 64, 1, 33])
def test_kernel_runtime_early_return_does_not_hang_barriers(modules, live):
    out = np.full(64, -1, np.int32)
    modules["warp"].ok("nu_kernel_early_return_00000042", (2,), (64,), out, np.int32(live))
    t = np.arange(live)
    np.testing.assert_array_equal(out[:live], (t + 1) % live + 1 + 1000 * live)
    assert (out[live:] == -1).all()


def test_kernel_runtime_deadlock_detected(modules):
    status, message = modules["warp"].launch("nu_kernel_deadlock_00000043", (2,), (64,))
    assert status == 2
    assert message.startswith("deadlock in block (0, 0, 0): 62 of 64 threads wait at "
                              "syncthreads and 2 at a warp barrier")


def test_kernel_runtime_barrier_loop(modules):
    out = np.full((3, 256), -1, np.int32)
    modules["warp"].ok("nu_kernel_barrier_loop_00000044", (3,), (256,), out, np.int64(50))
    assert (out == 50).all()


# ---- bounds.cu --------------------------------------------------------------------------------
def test_kernel_runtime_out_of_bounds_reported(modules):
    buf = np.full(16, -5, np.int64)
    out = buf[:10]
    status, message = modules["bounds"].launch("nu_kernel_fill_00000020", (1,), (16,), out)
    assert status == 1
    assert message == ("index 10 is out of bounds for axis 0 with size 10 "
                       "(thread (10, 0, 0) of block (0, 0, 0))")
    np.testing.assert_array_equal(buf, [*range(10), *[-5] * 6])  # nothing written past the view


def test_kernel_runtime_out_of_bounds_second_block(modules):
    out = np.full(40, -5, np.int64)
    status, message = modules["bounds"].launch("nu_kernel_fill_00000020", (3,), (16,), out)
    assert status == 1
    assert message.endswith("(thread (8, 0, 0) of block (2, 0, 0))")
    assert message.startswith("index 40 is out of bounds for axis 0 with size 40")
    np.testing.assert_array_equal(out, np.arange(40))


@pytest.mark.parametrize("i,j,expect", [
    (2, 3, None),
    (-1, -1, None),
    (-6, 0, "index -6 is out of bounds for axis 0 with size 5"),
    (5, 0, "index 5 is out of bounds for axis 0 with size 5"),
    (1, 7, "index 7 is out of bounds for axis 1 with size 7"),
    (1, -8, "index -8 is out of bounds for axis 1 with size 7"),
])
def test_kernel_runtime_out_of_bounds_2d(modules, i, j, expect):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    m = base[:5, :7]  # a view: out-of-bounds writes would land in base's margins
    before = base.copy()
    out = np.full(1, np.nan)
    status, message = modules["bounds"].launch("nu_kernel_probe_00000021", (1,), (1,), m,
                                               np.int64(i), np.int64(j), out)
    if expect is None:
        assert (status, message) == (0, "")
        assert out[0] == before[:5, :7][i, j] and m[i, j] == 8.0
    else:
        assert status == 1
        assert message == expect + " (thread (0, 0, 0) of block (0, 0, 0))"
        assert out[0] == 0.0  # the sink reads as zero
        np.testing.assert_array_equal(base, before)


def test_kernel_runtime_barrier_without_cooperative_fails(modules):
    status, message = modules["bounds"].launch("nu_kernel_misuse_00000022", (1,), (4,))
    assert status == 3 and "COOPERATIVE = 0" in message


def test_kernel_runtime_message_truncated(modules):
    fn = ENTRY(("nu_kernel_fill_00000020", modules["bounds"].lib))
    out = np.zeros(2, np.int64)
    words = (ctypes.c_longlong * 3)(out.ctypes.data, 2, 8)
    info = LaunchInfo((ctypes.c_uint * 3)(1, 1, 1), (ctypes.c_uint * 3)(4, 1, 1), 0)
    message = ctypes.create_string_buffer(b"\xff" * 16)
    assert fn(words, ctypes.byref(info), message, 10) == 1
    assert message.raw[:10] == b"index 2 i\0"


# ---- device compiles --------------------------------------------------------------------------
def _entries(name):
    return re.findall(r"NU_KERNEL_ENTRY\((\w+),", (UNITS / f"{name}.cu").read_text())


@pytest.mark.parametrize("compiler", ["nvcc", "nvrtc"])
@pytest.mark.parametrize("name", NAMES)
def test_kernel_runtime_device_ptx(builds, compiler, name):
    if (compiler, name) not in builds:
        pytest.skip(f"{compiler} is not available ({NVCC} / libnvrtc.so)")
    for variant in (compiler, compiler + "-unchecked"):
        ptx = builds[(variant, name)]()
        entries = set(re.findall(r"\.visible \.entry (\w+)\(", ptx))
        assert set(_entries(name)) <= entries, f"{variant}: entries missing from the PTX"
        # the words are read from the parameter space, never copied to local memory (only
        # a kernel with a local array has any)
        for body in re.split(r"\.visible \.entry ", ptx)[1:]:
            entry = body[:body.index("(")]
            assert ".local" not in body or entry == "nu_kernel_tables_00000007", (variant, entry)
        # only a checked (debug) build records an out-of-bounds access
        checked = not variant.endswith("-unchecked")
        assert ("st.global.u64 \t[nu_kernel_error+8]" in ptx) == checked, variant
