"""host: the cpu and parallel targets against Numba's CPU vectorize/guvectorize (issue 15).

Group ``host``: ``a*b+c`` and a math-heavy function on float32, n = 10 to 10^7, for
``vectorize(target="cpu"|"parallel")``, and a batched 4x4 float32 matmul gufunc (10^5
matrices). Group ``host-pandas``: pandas ``Series.apply``/``map`` over 10^5 float64
elements with the vectorize ufunc itself (pandas calls it once per element) and with its
``f.ufunc`` (a real ``np.ufunc``: pandas calls it once on the whole array). Numba is an
optional peer: its cases skip when it is not installed. Outputs
are preallocated (``out=``) so both sides time the loop, not the allocator; inputs are
random; every callable is called once (compiled) before timing.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import pytest

import numbacuda_ufunc as nu

try:
    import numba
except ImportError:  # optional peer
    numba = None

import kernels

SIG3 = ["float32(float32, float32, float32)"]
SIG1 = ["float32(float32)"]
SIZES = [10, 1_000, 100_000, 10_000_000]
TARGETS = ["cpu", "parallel"]
IMPLS = ["ours", "numba"]


def fma3(a, b, c):
    return a * b + c


def mathy(x):
    return math.sin(x) * math.exp(-x * x) + math.sqrt(abs(x) + 1.0)


def _make(impl, kind, target):
    if impl == "numba":
        if numba is None:
            pytest.skip("numba is not installed (optional peer)")
        if kind == "matmul":
            return numba.guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"],
                                     "(m,n),(n,p)->(m,p)", target=target)(kernels.matmul_f32)
        return numba.vectorize(SIG3 if kind == "fma" else SIG1, target=target)(
            fma3 if kind == "fma" else mathy)
    if kind == "matmul":
        return nu.guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"],
                              "(m,n),(n,p)->(m,p)", target=target)(kernels.matmul_f32)
    return nu.vectorize(SIG3 if kind == "fma" else SIG1, target=target)(
        fma3 if kind == "fma" else mathy)


@pytest.mark.benchmark(group="host")
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", ["fma", "math"])
def test_host_vectorize(benchmark, kind, target, n, impl):
    f = _make(impl, kind, target)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(n).astype(np.float32) for _ in range(3 if kind == "fma" else 1)]
    out = np.full(n, np.nan, np.float32)
    f(*args, out=out)
    benchmark.extra_info.update(kind=kind, target=target, n=n, impl=impl,
                                gb=out.nbytes * (len(args) + 1) / 1e9)
    benchmark(f, *args, out=out)
    ref = fma3(*args) if kind == "fma" else np.vectorize(mathy, otypes=[np.float32])(*args)
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-6)


@pytest.mark.benchmark(group="host")
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("target", TARGETS)
def test_host_gufunc_matmul4(benchmark, target, impl):
    g = _make(impl, "matmul", target)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((100_000, 4, 4)).astype(np.float32) for _ in range(2))
    out = np.full((100_000, 4, 4), np.nan, np.float32)
    g(a, b, out)
    benchmark.extra_info.update(kind="matmul4x4", target=target, n=100_000, impl=impl)
    benchmark(g, a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


LAYOUTS = {
    "broadcast-row": lambda a: (a, a[:1], np.float32(1.0)),
    "mixed-C-F": lambda a: (a, a.T, np.float32(1.0)),
    "strided": lambda a: (a[:, ::2], a[:, 1::2], np.float32(1.0)),
}


@pytest.mark.benchmark(group="host")
@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_host_vectorize_strided(benchmark, layout, impl):
    # Non-contiguous operands of a 2000 x 2000 float32 problem on the cpu target: the
    # strided loop (innermost runs, a unit-stride run taking the vectorised loop).
    f = _make(impl, "fma", "cpu")
    a = np.random.default_rng(2).standard_normal((2000, 2000)).astype(np.float32)
    args = LAYOUTS[layout](a)
    out = np.full(np.broadcast_shapes(*(np.shape(x) for x in args)), np.nan, np.float32)
    f(*args, out=out)
    benchmark.extra_info.update(kind="fma", target="cpu", layout=layout, impl=impl)
    benchmark(f, *args, out=out)
    np.testing.assert_allclose(out, fma3(*args), rtol=2e-6, atol=1e-6)


def shifted_square(v):
    return v * v - 0.5


@pytest.mark.benchmark(group="host-pandas")
@pytest.mark.parametrize("method", ["apply", "map"])
@pytest.mark.parametrize("impl", ["ufunc-object", "np.ufunc"])
def test_host_pandas_series(benchmark, impl, method):
    # What pandas does with f: no isinstance(f, np.ufunc) for our object (no Python class
    # can derive from np.ufunc), so Series.apply(f) calls f per element; f.ufunc is one
    # np.ufunc call on the Series' array, the index kept.
    pd = pytest.importorskip("pandas")
    f = nu.vectorize(["float64(float64)"], target="cpu")(shifted_square)
    fn = f if impl == "ufunc-object" else f.ufunc
    n = 100_000
    s = pd.Series(np.random.default_rng(4).standard_normal(n), index=np.arange(n) * 2)
    run = getattr(s, method)
    got = run(fn)
    assert got.index.equals(s.index)
    np.testing.assert_array_equal(got.to_numpy(), f(s.to_numpy()))
    benchmark.extra_info.update(kind=f"pandas-{method}", impl=impl, n=n)
    if impl == "ufunc-object":  # about 0.1 s a call: a few rounds say enough
        benchmark.pedantic(run, args=(fn,), rounds=5, iterations=1, warmup_rounds=1)
    else:
        benchmark(run, fn)


_BUILD_COUNTER = [0]


@pytest.mark.benchmark(group="host")
@pytest.mark.parametrize("kind", ["elementwise", "kernel"])
def test_host_build_new_kernel(benchmark, kind):
    # A kernel never built before, end to end (g++ with the precompiled header, load):
    # an elementwise loop (what vectorize cpu builds) and a checked @cuda.jit-style unit.
    from numbacuda_ufunc import _core

    token = f"{os.getpid()}_{time.time_ns()}"
    # the checked precompiled header serves sources that begin with NU_BOUNDSCHECK
    head = '#include "elementwise.cuh"\n' if kind == "elementwise" else \
        '#define NU_BOUNDSCHECK 1\n#include "kernel.cuh"\n'

    def build():
        _BUILD_COUNTER[0] += 1
        name = f"nu_bench_{token}_{_BUILD_COUNTER[0]}"
        body = f'extern "C" __attribute__((visibility("default"))) double {name}(double x) {{ return x * {_BUILD_COUNTER[0]}.5 + 1.0; }}\n'
        return _core.build_host(head + body, ["-fvisibility=hidden"], [name])

    build()  # the precompiled header, once
    benchmark.extra_info.update(kind=f"build-{kind}")
    benchmark.pedantic(build, rounds=10, iterations=1)


@pytest.mark.benchmark(group="host")
@pytest.mark.parametrize("direction", ["to_device", "copy_to_host"])
def test_host_copies_64mib(benchmark, direction):
    # 64 MiB of float32 into a new buffer each time (first-touch page faults included): the
    # emulated device's copies (no GPU), split over the thread pool into 2 MiB-paged buffers.
    from numbacuda_ufunc import cuda

    host = np.random.default_rng(0).random(1 << 24, dtype=np.float32)
    dev = cuda.to_device(host)
    run = (lambda: cuda.to_device(host)) if direction == "to_device" else dev.copy_to_host
    got = run()
    np.testing.assert_array_equal(got if isinstance(got, np.ndarray) else got.copy_to_host(), host)
    benchmark.extra_info.update(kind=f"copy-{direction}", bytes=host.nbytes)
    benchmark.pedantic(run, rounds=15, iterations=1, warmup_rounds=1)


TPB = 16


def _block_max_kernel():
    # The relaxation step of numba-cuda's Laplace test: every thread writes shared memory,
    # then a max-reduction over the 16x16 block with a barrier after each of 8 halvings.
    from numbacuda_ufunc import cuda, float64

    @cuda.jit("void(float64[:, :], float64[:, :], float64[:, :])")
    def relax(a, anew, error):
        err = cuda.shared.array((TPB, TPB), dtype=float64)
        ty, tx = cuda.threadIdx.x, cuda.threadIdx.y
        i, j = cuda.grid(2)
        err[ty, tx] = 0.0
        if 1 <= j < a.shape[0] - 1 and 1 <= i < a.shape[1] - 1:
            anew[j, i] = 0.25 * (a[j, i + 1] + a[j, i - 1] + a[j - 1, i] + a[j + 1, i])
            err[ty, tx] = abs(anew[j, i] - a[j, i])
        cuda.syncthreads()
        t = TPB // 2
        while t > 0:
            if ty < t:
                err[ty, tx] = max(err[ty, tx], err[ty + t, tx])
            t //= 2
            cuda.syncthreads()
        t = TPB // 2
        while t > 0:
            if tx < t and ty == 0:
                err[ty, tx] = max(err[ty, tx], err[ty, tx + t])
            t //= 2
            cuda.syncthreads()
        if tx == 0 and ty == 0:
            error[cuda.blockIdx.y, cuda.blockIdx.x] = err[0, 0]

    return relax


@pytest.mark.benchmark(group="host")
def test_host_emulated_barrier_kernel(benchmark):
    # A cuda.jit kernel with barriers on the host backend (no GPU): 256 blocks of 16x16
    # threads, each thread a fiber switched at 9 barriers (65,536 threads, ~600k switches).
    from numbacuda_ufunc import cuda

    relax = _block_max_kernel()
    n = 256
    a = np.zeros((n, n))
    a[:, 0] = 1.0
    da, danew, derr = cuda.to_device(a), cuda.to_device(a), cuda.device_array((16, 16))
    grid = (n // TPB, n // TPB)

    def run():
        relax[grid, (TPB, TPB)](da, danew, derr)
        cuda.synchronize()

    run()
    inner = np.abs(0.25 * (a[1:-1, 2:] + a[1:-1, :-2] + a[:-2, 1:-1] + a[2:, 1:-1]) - a[1:-1, 1:-1])
    assert derr.copy_to_host().max() == inner.max()
    benchmark.extra_info.update(kind="emulated-barriers", threads=n * n)
    benchmark.pedantic(run, rounds=10, iterations=1)
