"""compile: first-call time of a vectorize ufunc, a gufunc and a reduce in a fresh
process: cold (empty NUMBACUDA_UFUNC_CACHE_DIR) and warm (the cache a previous process
filled), against numba-cuda's first call.

Each round runs a new Python process. The child imports the library and touches the device
(context creation) first, untimed; then it times decoration + the first call + a
synchronize (``first_call_s``, in extra_info, what the report uses). pytest-benchmark's own
numbers time the whole child (interpreter start included).

What is built depends on the machine: on a GPU, NVRTC (ours) and NVVM (numba-cuda); on the
host backend (no GPU) our first call runs the host C++ compiler instead ("host build" in
the case name), and numba-cuda cannot run. The ptx group compares PTX generation alone
(our cuda.compile_ptx through NVRTC vs numba-cuda's compile_ptx through NVVM), which needs no
GPU and runs everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys

import _harness
import pytest
from _harness import NUMBA, OURS

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = r'''
import json, os, sys, time
sys.path.insert(0, {here!r})
t0 = time.perf_counter()
import numpy as np
lib, kind = sys.argv[1], sys.argv[2]
if lib == "ours":
    import numbacuda_ufunc as nu
    from numbacuda_ufunc import cuda
    vectorize, guvectorize, reduce = nu.vectorize, nu.guvectorize, nu.reduce
else:
    if not hasattr(np, "row_stack"):  # numba-cuda 0.30.4 on NumPy 2.5 (_harness.numpy_compat_for_numba)
        np.row_stack = np.vstack
    import numba
    from numba import cuda
    vectorize, guvectorize, reduce = numba.vectorize, numba.guvectorize, cuda.reduce
import kernels
if kind != "ptx":
    x = cuda.to_device(np.linspace(-1, 1, 4096, dtype=np.float32))  # context, untimed
    m = cuda.to_device(np.ones((256, 4, 4), np.float32))
    cuda.synchronize()
t1 = time.perf_counter()
if kind == "vectorize":
    f = vectorize(["float32(float32, float32)"], target="cuda")(kernels.transc)
    r = f(x, x)
    cuda.synchronize()
elif kind == "gufunc":
    g = guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)",
                    target="cuda")(kernels.matmul_f32)
    r = g(m, m)
    cuda.synchronize()
elif kind == "reduce":
    r = reduce(kernels.sum_op)(x)
    cuda.synchronize()
else:
    ptx = cuda.compile_ptx(kernels.transc, "float32(float32, float32)", device=True, cc=(9, 0))
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "first_call_s": t2 - t1}}))
'''


def _child(lib, kind, env):
    code = _CHILD.format(here=HERE)
    out = subprocess.run([sys.executable, "-c", code, lib, kind], env=env, capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{lib} {kind} child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


KINDS = ["vectorize", "gufunc", "reduce"]
CASES = [(kind, state, impl) for kind in KINDS for state in ("cold", "warm")
         for impl in (OURS, NUMBA)] + [("ptx", "cold", OURS), ("ptx", "cold", NUMBA)]


@pytest.mark.parametrize("case", CASES, ids=[f"{k}-{s}-{i}" for k, s, i in CASES])
def test_compile(benchmark, case, tmp_path):
    kind, state, impl = case
    benchmark.group = "compile"
    if impl == NUMBA:
        if kind != "ptx":
            _harness.numba_cuda()  # skip without a GPU or without numba-cuda
        else:
            _harness.numpy_compat_for_numba()
            try:
                import numba.cuda  # noqa: F401
            except Exception as exc:  # noqa: BLE001
                pytest.skip(f"numba-cuda not importable: {type(exc).__name__}: {exc}")
    env = dict(os.environ)
    if not _harness.HAVE_GPU:
        env["NUMBACUDA_UFUNC_ENABLE_CUDASIM"] = "1"
    cache_root = tmp_path / "cache"

    def fresh_cache():
        shutil.rmtree(cache_root, ignore_errors=True)
        cache_root.mkdir()
        env["NUMBACUDA_UFUNC_CACHE_DIR"] = str(cache_root)
        env["NUMBA_CACHE_DIR"] = str(cache_root)

    fresh_cache()
    if state == "warm":
        _child(impl, kind, env)  # fill the cache once; every timed round then reads it
    samples = []

    def setup():
        if state == "cold":
            fresh_cache()

    def run():
        samples.append(_child(impl, kind, env))

    rounds = _harness.OPTIONS["compile_rounds"]
    benchmark.pedantic(run, setup=setup, rounds=rounds, iterations=1, warmup_rounds=0)
    first = statistics.median(s["first_call_s"] for s in samples)
    built = ("NVRTC" if impl == OURS else "NVVM") if (_harness.HAVE_GPU or kind == "ptx") \
        else "host build"
    if kind == "ptx":
        built = "NVRTC, PTX only" if impl == OURS else "NVVM, PTX only"
    benchmark.extra_info.update(
        impl=impl, calls=1, state=state, kind=kind, built_by=built,
        backend="cuda" if _harness.HAVE_GPU else "host-emulation",
        first_call_s=round(first, 4), first_call_ms=round(first * 1e3, 2),
        import_s=round(statistics.median(s["import_s"] for s in samples), 4),
        rounds_s=[round(s["first_call_s"], 4) for s in samples],
        case=("PTX generation only (ours: NVRTC, numba-cuda: NVVM), cold" if kind == "ptx" else
              f"{kind} first call, {state} cache"
              + ("" if _harness.HAVE_GPU else " (ours: host build, no GPU)")),
        **{k: v for k, v in _harness.environment().items()
           if k in ("gpu", "driver_version", "nvrtc_version")})


# ---- NVRTC build of a new small function: where the time goes, on any machine ----------
# Targets (issue 13): <= 25 ms with NVRTC already loaded, <= 100 ms for a cold process.
# These time the CUBIN build (sm_90) of a new ufunc's contiguous kernel, which needs no GPU:
# translation + NVRTC (front end with our headers, NVVM, ptxas), with the cache bypassed.

_NVRTC_CHILD = r'''
import json, sys, time
t0 = time.perf_counter()
import numbacuda_ufunc as nu
from numbacuda_ufunc import _core
t1 = time.perf_counter()
def f(a, b):
    return a * b + 1.5
f = nu.vectorize(["float32(float32, float32)"], target="cuda")(f)
t2 = time.perf_counter()
_core.compile_cubin(f._variant_source(0, 0)[1] + "// {tag}\n", (9, 0))
t3 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "translate_s": t2 - t1, "nvrtc_s": t3 - t2,
                  "total_s": t3 - t0}}))
'''


def _new_source(tag):
    """A new float32 ufunc source each call (a comment makes the cache key new)."""
    import numbacuda_ufunc as nu

    def f(a, b):
        return a * b + 1.5

    uf = nu.vectorize(["float32(float32, float32)"], target="cuda")(f)
    return uf._variant_source(0, 0)[1] + f"// {tag}\n"


def _nvrtc_loaded() -> tuple:
    """NVRTC's version, after two builds: the first loads NVRTC, the second makes the
    precompiled header. Skips where there is no NVRTC."""
    from numbacuda_ufunc import _core

    try:
        version = _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    for warm in ("warm-up-1", "warm-up-2"):
        _core.compile_cubin(_new_source(f"{warm}-{os.getpid()}"), (9, 0))
    return version


def test_compile_new_function_nvrtc_loaded(benchmark):
    """A new small function's CUBIN with NVRTC loaded (the second and later builds of a
    process, which use NVRTC's precompiled headers where it has -pch): decoration +
    translation + NVRTC, no cache."""
    from numbacuda_ufunc import _core

    benchmark.group = "compile"
    version = _nvrtc_loaded()
    counter = iter(range(10**9))

    def run():
        _core.compile_cubin(_new_source(f"{next(counter)}-{os.getpid()}"), (9, 0))

    benchmark.pedantic(run, rounds=max(5, _harness.OPTIONS["compile_rounds"] * 3), iterations=1,
                       warmup_rounds=1)
    benchmark.extra_info.update(impl=OURS, calls=1, case="new small ufunc, CUBIN sm_90, NVRTC loaded",
                                target_ms=25, nvrtc_version=list(version))


def test_compile_new_function_cold_process(benchmark, tmp_path):
    """A fresh process: import, decorate, translate and build one CUBIN with an empty cache
    (NVRTC loaded on first use)."""
    from numbacuda_ufunc import _core

    benchmark.group = "compile"
    try:
        _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    env = dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1")
    samples = []

    def run():
        cache = tmp_path / f"cache{len(samples)}"
        env["NUMBACUDA_UFUNC_CACHE_DIR"] = str(cache)
        script = tmp_path / f"child{len(samples)}.py"  # a file: the translator reads source
        script.write_text(_NVRTC_CHILD.format(tag=len(samples)))
        out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                             timeout=300)
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-3000:])
        samples.append(json.loads(out.stdout.strip().splitlines()[-1]))

    benchmark.pedantic(run, rounds=_harness.OPTIONS["compile_rounds"], iterations=1, warmup_rounds=0)
    med = {k: round(statistics.median(s[k] for s in samples) * 1e3, 1) for k in samples[0]}
    benchmark.extra_info.update(impl=OURS, calls=1, case="cold process: import + new ufunc CUBIN",
                                target_ms=100, **{f"{k[:-2]}_ms": v for k, v in med.items()})


# ---- A new reduction's first-call build vs a new ufunc's variants (issue 30) ----------
# A full reduction's first call builds one kernel (full_contig, no CUB headers); the
# target is at most what a new elementwise ufunc's two variants (contiguous and strided)
# cost NVRTC on the same machine. Both are CUBIN builds for sm_90 with NVRTC loaded, cache
# bypassed (a fresh comment each round), so no GPU is needed.

def _new_reduce_source(tag):
    import numpy as np

    import numbacuda_ufunc as nu

    r = nu.Reduce(lambda a, b: a + b)
    dt = np.dtype(np.float32)
    loop = r._resolve(dt)
    return r._engine._source(loop, dt, dt, 1 << 6) + f"// {tag}\n"  # full_contig alone


def _new_ufunc_sources(tag):
    import numbacuda_ufunc as nu

    def f(a, b):
        return a * b + 1.5

    uf = nu.vectorize(["float32(float32, float32)"], target="cuda")(f)
    return [uf._variant_source(0, v)[1] + f"// {tag}\n" for v in (0, 1)]


@pytest.mark.parametrize("kind", ["reduce-first-kernel", "ufunc-both-variants"])
def test_compile_new_reduction_vs_ufunc(benchmark, kind):
    from numbacuda_ufunc import _core

    benchmark.group = "compile"
    version = _nvrtc_loaded()
    counter = iter(range(10**9))

    def run():
        tag = f"{kind}-{next(counter)}-{os.getpid()}"
        sources = [_new_reduce_source(tag)] if kind.startswith("reduce") else _new_ufunc_sources(tag)
        for s in sources:
            _core.compile_cubin(s, (9, 0))

    benchmark.pedantic(run, rounds=max(5, _harness.OPTIONS["compile_rounds"] * 3), iterations=1,
                       warmup_rounds=1)
    benchmark.extra_info.update(impl=OURS, calls=1, nvrtc_version=list(version),
                                case=f"new {kind.replace('-', ' ')}, CUBIN sm_90, NVRTC loaded")
