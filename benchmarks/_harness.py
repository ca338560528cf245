"""Shared benchmark machinery: peers, random data, synchronized timing, extra_info.

Every timed callable ends with a device synchronize (or, for per-call dispatch times, N
back-to-back calls end with one), is warmed up before the clock starts (compile, caches,
pool), and records in ``benchmark.extra_info``: ``impl`` (ours / numba-cuda / cupy /
reference), ``case`` (what was computed, the same string for every impl of one case),
``calls`` per round, ``per_call_us``, ``bytes`` and ``GBps`` where bytes are counted, and
the backend. benchmarks/report.py turns those into the ratio table.
"""

from __future__ import annotations

import functools
import gc
import importlib.metadata
import os
import platform

import numpy as np
import pytest

HAVE_GPU = False  # set by conftest.py after the probe
OPTIONS = {"time": 0.25, "max_log2": 28, "compile_rounds": 3}

OURS, NUMBA, CUPY, REF = "ours", "numba-cuda", "cupy", "reference"


# ------------------------------------------------------------------ environment and peers

def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def environment() -> dict:
    """GPU name, driver and CUDA versions, peer versions: machine_info and extra_info."""
    import numbacuda_ufunc as nu
    from numbacuda_ufunc import _core, cuda

    info = {"backend": "cuda" if HAVE_GPU else "host (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1)",
            "numbacuda_ufunc": nu.__version__, "numpy": np.__version__,
            "python": platform.python_version(),
            "numba-cuda": _version("numba-cuda"),
            "cupy": _version("cupy") or _version("cupy-cuda12x") or _version("cupy-cuda13x")}
    try:
        dev = cuda.get_current_device()
        info["gpu"] = dev.name
        info["compute_capability"] = ".".join(map(str, dev.compute_capability))
        info["gpu_memory_gib"] = round(dev.total_memory / 2**30, 1)
        info["multiprocessors"] = dev.MULTIPROCESSOR_COUNT
    except Exception as exc:  # noqa: BLE001 - recorded, not fatal
        info["gpu"] = f"unavailable: {exc}"
    if HAVE_GPU:
        v = _core.driver_version()
        info["driver_cuda_version"] = f"{v // 1000}.{v % 1000 // 10}"
        info["driver_version"] = _nvidia_smi("driver_version")
    try:
        info["nvrtc_version"] = ".".join(map(str, _core.nvrtc_version()))
    except Exception as exc:  # noqa: BLE001
        info["nvrtc_version"] = f"unavailable: {exc}"
    return info


def _nvidia_smi(field):
    import subprocess
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None


def numpy_compat_for_numba():
    """numba-cuda 0.30.4 (on the H100 machine) still calls np.row_stack, which NumPy 2.5
    removed; np.vstack is what it was an alias of. Set before numba is imported."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


@functools.cache
def _numba_cuda():
    if not HAVE_GPU:
        return None, "numba-cuda needs a real GPU (host backend here)"
    numpy_compat_for_numba()
    try:
        from numba import cuda as ncuda
    except Exception as exc:  # noqa: BLE001
        return None, f"numba-cuda not importable: {type(exc).__name__}: {exc}"
    if not ncuda.is_available():
        return None, "numba-cuda: cuda.is_available() is False"
    return ncuda, ""


def numba_cuda():
    mod, why = _numba_cuda()
    if mod is None:
        pytest.skip(why)
    return mod


@functools.cache
def _cupy():
    if not HAVE_GPU:
        return None, "CuPy needs a real GPU (host backend here)"
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001
        return None, f"CuPy not usable: {type(exc).__name__}: {exc}"
    return cupy, ""


def cupy():
    mod, why = _cupy()
    if mod is None:
        pytest.skip(why)
    return mod


def sync():
    """Synchronize the device. Every library here shares the primary context and the
    legacy default stream, so one cuCtxSynchronize waits for all of them."""
    from numbacuda_ufunc import cuda
    cuda.synchronize()


def release_memory():
    """Between benchmarks: drop our pool's free blocks and CuPy's, so large cases fit."""
    gc.collect()
    if not (HAVE_GPU or os.environ.get("NUMBACUDA_UFUNC_ENABLE_CUDASIM") == "1"):
        return
    from numbacuda_ufunc import cuda
    try:
        sync()
        cuda.current_context().trim_pool()
    except Exception:  # noqa: BLE001
        pass
    mod, _ = _cupy() if HAVE_GPU else (None, "")
    if mod is not None:
        mod.get_default_memory_pool().free_all_blocks()
        mod.get_default_pinned_memory_pool().free_all_blocks()


def need_log2(log2: int, nbytes: int = 0):
    """Skip a case above --bench-max-log2 or one that does not fit the free device memory."""
    if log2 > OPTIONS["max_log2"]:
        pytest.skip(f"2^{log2} elements is above --bench-max-log2={OPTIONS['max_log2']}")
    if nbytes and HAVE_GPU:
        from numbacuda_ufunc import cuda
        free = cuda.memory_stats()["free_bytes"]
        if nbytes > 0.8 * free:
            pytest.skip(f"needs {nbytes / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free")


# ------------------------------------------------------------------ random data

_POOLS: dict = {}


def host_random(n: int, dtype, which: int = 0) -> np.ndarray:
    """Random values in [-1, 1) (integers in [-1000, 1000) for integer dtypes): a view
    into a per-(dtype, which) pool that grows to the largest request, so every impl and
    size of a run reads the same inputs without regenerating them."""
    dt = np.dtype(dtype)
    key = (dt.str, which)
    pool = _POOLS.get(key)
    if pool is None or pool.size < n:
        size = 1 << max(20, (n - 1).bit_length())
        rng = np.random.default_rng(1000 + which)
        if dt.kind == "f":
            pool = rng.random(size, dtype=dt)
            pool *= 2
            pool -= 1
        else:
            pool = rng.integers(-1000, 1000, size, dtype=dt)
        _POOLS[key] = pool
    return pool[:n]


# ------------------------------------------------------------------ timing

def measure(benchmark, fn, *, impl: str, case: str, calls: int = 1, nbytes: int | None = None,
            check=None, **extra):
    """Time ``fn`` (which must synchronize before returning) with pytest-benchmark.

    ``fn`` is called once untimed first (compile, caches, pool), then ``check`` (if given)
    verifies that warm-up's result, then rounds are timed until --bench-time is spent
    (at least 3). ``calls`` is how many operations one call of ``fn`` performs (the
    dispatch group times N back-to-back calls and one synchronize); per-call time is the
    median over rounds divided by ``calls``.
    """
    import time

    result = fn()
    if check is not None:
        check(result)
    del result
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    rounds = int(min(1000, max(3, OPTIONS["time"] / once)))
    benchmark.extra_info.update(impl=impl, case=case, calls=calls,
                                backend="cuda" if HAVE_GPU else "host-emulation", **extra)
    benchmark.extra_info.update({k: v for k, v in environment().items()
                                 if k in ("gpu", "driver_version", "driver_cuda_version",
                                          "nvrtc_version")})
    benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)
    if benchmark.stats is None:  # --benchmark-disable: run once as a test, nothing timed
        return
    median = benchmark.stats.stats.median
    benchmark.extra_info["per_call_us"] = round(median / calls * 1e6, 3)
    if nbytes is not None:
        benchmark.extra_info["bytes"] = int(nbytes)
        benchmark.extra_info["GBps"] = round(nbytes * calls / median / 1e9, 2)


def assert_close(got, want, dtype):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert not np.isnan(got).any(), "output has NaN: elements left unwritten"
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
