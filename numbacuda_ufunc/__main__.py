"""``python -m numbacuda_ufunc``: the environment report and a short demo.

Works on any machine: without a GPU it says so and runs the demo on the host backend.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

from . import __version__, _core, cuda, float32, guvectorize, reduce, vectorize
from .errors import NumbaPerformanceWarning
from .toolchain._cuda_wheels import origin, wheel_dirs


def _line(label: str, value) -> None:
    print(f"  {label:<22} {value}")


def report(core) -> None:
    print(f"numbacuda_ufunc {__version__}  (Python {platform.python_version()}, "
          f"NumPy {np.__version__})")
    emulated = core.emulation_enabled()
    _line("emulation", "on (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1)" if emulated else "off")
    if core.is_available():
        if emulated:
            _line("driver", "not used (host backend)")
        else:
            v = core.driver_version()
            _line("driver", f"CUDA {v // 1000}.{v % 1000 // 10}")
        for i in range(core.device_count()):
            info = core.device_info(i)
            cc = ".".join(map(str, info["compute_capability"]))
            _line(f"device {i}", f"{info['name']}  cc {cc}  "
                  f"{info['total_memory'] / 2**30:.1f} GiB  {info['multiprocessors']} SMs")
    else:
        _line("GPU", f"none: {core.unavailable_reason()}")
    cuda_libraries(core)
    disabled = os.environ.get("NUMBACUDA_UFUNC_DISABLE_CACHE") == "1"
    _line("cache directory", core.cache_dir() + ("  (disabled)" if disabled else ""))


def cuda_libraries(core) -> None:
    """NVRTC, nvJitLink and the headers the engine uses, and where each comes from (a
    toolkit, a pip wheel of the cu12/cu13 extras, the loader's path)."""
    wheels = wheel_dirs()[2]
    _line("CUDA wheels", ", ".join(f"{n} {v}" for n, v, _ in wheels) or "none")
    found = ", ".join(f"{os.path.basename(p)} ({origin(p, wheels)})" for p, _ in core.nvrtc_candidates())
    _line("NVRTCs found", found or "none")
    driver = core.nvrtc_driver_version()
    rule = (f"newest the driver (CUDA {driver // 1000}.{driver % 1000 // 10}) supports" if driver
            else "newest (no driver)")
    try:
        major, minor = core.nvrtc_version()
        path = core.nvrtc_library_path()
        _line("NVRTC", f"{major}.{minor}  {path}  [{origin(path, wheels)}; {rule}]")
    except Exception as exc:  # reported, not fatal: host builds still work
        _line("NVRTC", f"not usable: {exc}")
    try:
        major, minor = core.nvjitlink_version()
        path = core.nvjitlink_library_path()
        _line("nvJitLink", f"{major}.{minor}  {path}  [{origin(path, wheels)}]")
    except Exception as exc:  # only link= kernels need it
        _line("nvJitLink", f"not usable: {exc}")
    for label, folder in (("CUDA headers", core.cuda_include_dir()), ("CCCL headers", core.cub_include_dir())):
        _line(label, f"{folder}  [{origin(folder, wheels)}]" if folder else "not found")


def roundtrip_demo(cuda) -> None:
    """Host -> device -> host of 64 MiB, timed, checked."""
    n = 16 * 2**20
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    back = np.empty_like(host)
    dev = cuda.to_device(host)  # warm up the pool and staging buffers
    best_up = best_down = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        dev = cuda.to_device(host)
        cuda.synchronize()
        t1 = time.perf_counter()
        dev.copy_to_host(back)
        t2 = time.perf_counter()
        best_up, best_down = min(best_up, t1 - t0), min(best_down, t2 - t1)
    ok = np.array_equal(host, back)
    gb = host.nbytes / 1e9
    print(f"\nround trip of {host.nbytes / 2**20:.0f} MiB float32: "
          f"{'correct' if ok else 'WRONG'}")
    _line("host -> device", f"{gb / best_up:.2f} GB/s")
    _line("device -> host", f"{gb / best_down:.2f} GB/s")
    if not ok:
        raise SystemExit("round trip returned different data")


def _time_calls(call, cuda, repeats=5):
    """The first call (it may translate and compile) and the best of `repeats` later ones,
    each synchronized before the clock is read."""
    t0 = time.perf_counter()
    call()
    cuda.synchronize()
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return first, best


def _verdict(title, ok, rows) -> None:
    print(f"\n{title}: {'correct' if ok else 'WRONG'}")
    for label, value in rows:
        _line(label, value)
    if not ok:
        raise SystemExit(f"{title}: wrong result")


def vectorize_demo(cuda) -> None:
    """A float32 polynomial over 2^24 elements on device arrays."""
    @vectorize(["float32(float32, float32)"], target="cuda")
    def poly(a, b):
        return a * a - 3.0 * b + 0.5

    n = 2**24
    rng = np.random.default_rng(1)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    out = cuda.device_array(n, np.float32)
    first, best = _time_calls(lambda: poly(d_a, d_b, out=out), cuda)
    expected = a * a - np.float32(3.0) * b + np.float32(0.5)
    moved = 3 * 4 * n / 1e9  # two reads and one write of float32
    _verdict(f"vectorize: a*a - 3*b + 0.5 over {n} float32 on device arrays",
             np.allclose(out.copy_to_host(), expected, rtol=1e-6),
             [("first call", f"{first * 1e3:.1f} ms (includes any compile)"),
              ("steady state", f"{best * 1e3:.2f} ms, {moved / best:.1f} GB/s")])


def guvectorize_demo(cuda) -> None:
    """Batched 4x4 matrix products with a layout signature."""
    @guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)",
                 target="cuda")
    def matmul(a, b, out):
        for i in range(a.shape[0]):
            for j in range(b.shape[1]):
                acc = 0.0
                for k in range(a.shape[1]):
                    acc += a[i, k] * b[k, j]
                out[i, j] = acc

    batch = 2**16
    rng = np.random.default_rng(2)
    a = rng.random((batch, 4, 4), dtype=np.float32)
    b = rng.random((batch, 4, 4), dtype=np.float32)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    out = cuda.device_array((batch, 4, 4), np.float32)
    first, best = _time_calls(lambda: matmul(d_a, d_b, out), cuda)
    _verdict(f"guvectorize: (m,n),(n,p)->(m,p) over {batch} 4x4 float32 matrices",
             np.allclose(out.copy_to_host(), a @ b, rtol=1e-5),
             [("first call", f"{first * 1e3:.1f} ms (includes any compile)"),
              ("steady state", f"{best * 1e3:.2f} ms")])


def reduce_demo(cuda) -> None:
    """A CUB-backed sum of 2^24 float32 on the device."""
    @reduce
    def sum_reduce(a, b):
        return a + b

    n = 2**24
    host = np.random.default_rng(3).integers(0, 8, n).astype(np.float32)  # exact sums
    d = cuda.to_device(host)
    result = []
    first, best = _time_calls(lambda: result.append(sum_reduce(d)), cuda)
    _verdict(f"reduce: sum of {n} float32 on the device",
             all(r == host.sum(dtype=np.float64) for r in result),
             [("first call", f"{first * 1e3:.1f} ms (includes any compile)"),
              ("steady state", f"{best * 1e3:.2f} ms, {host.nbytes / best / 1e9:.1f} GB/s read")])


TILE = 16


def kernel_demo(cuda) -> None:
    """A @cuda.jit matrix product in shared-memory tiles, with barriers."""

    @cuda.jit
    def tiled_matmul(a, b, c):
        sa = cuda.shared.array((TILE, TILE), dtype=float32)
        sb = cuda.shared.array((TILE, TILE), dtype=float32)
        x, y = cuda.grid(2)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        acc = float32(0.0)
        for t in range(cuda.gridDim.x):
            sa[ty, tx] = a[y, tx + t * TILE] if y < a.shape[0] and tx + t * TILE < a.shape[1] else 0
            sb[ty, tx] = b[ty + t * TILE, x] if x < b.shape[1] and ty + t * TILE < b.shape[0] else 0
            cuda.syncthreads()
            for k in range(TILE):
                acc += sa[ty, k] * sb[k, tx]
            cuda.syncthreads()
        if y < c.shape[0] and x < c.shape[1]:
            c[y, x] = acc

    n = 1024 if not cuda.is_emulated() else 128  # the emulation runs every thread on the CPU
    rng = np.random.default_rng(4)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    d_a, d_b, d_c = cuda.to_device(a), cuda.to_device(b), cuda.device_array((n, n), np.float32)
    blocks = (n + TILE - 1) // TILE
    with warnings.catch_warnings():
        # The emulation's 8x8 grid would get Numba's low-occupancy warning, which is about
        # filling a GPU's multiprocessors: not what this demo measures.
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        first, best = _time_calls(
            lambda: tiled_matmul[(blocks, blocks), (TILE, TILE)](d_a, d_b, d_c), cuda)
    _verdict(f"@cuda.jit: {n}x{n} float32 matrix product in {TILE}x{TILE} shared-memory tiles",
             np.allclose(d_c.copy_to_host(), a @ b, rtol=1e-4),
             [("first launch", f"{first * 1e3:.1f} ms (includes any compile)"),
              ("steady state", f"{best * 1e3:.2f} ms, {2 * n**3 / best / 1e9:.1f} GFLOP/s")])


def demos() -> int:
    for demo in (roundtrip_demo, vectorize_demo, guvectorize_demo, reduce_demo, kernel_demo):
        demo(cuda)
    return 0


def main() -> int:
    report(_core)
    if _core.is_available():
        return demos()
    print("\nNo GPU: running the demo on the host backend (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1).")
    # The backend is chosen once per process, so the demo runs in a fresh one.
    env = dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1")
    return subprocess.call([sys.executable, "-m", "numbacuda_ufunc", "--demo-only"], env=env)


if __name__ == "__main__":
    sys.exit(demos() if "--demo-only" in sys.argv else main())
