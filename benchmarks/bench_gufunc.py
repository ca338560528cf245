"""gufunc: batched small matmul (m,n),(n,p)->(m,p) at 4x4 and 16x16 with 2^16 to 2^20
batch items, and row normalization (n)->(n) (n = 128), float32, against numba-cuda's
guvectorize; CuPy's matmul (cuBLAS batched) and a CuPy normalization expression are
timed as references (impl "cupy").

Inputs uploaded once per case and shared (zero-copy) with the peers; outputs
preallocated and poisoned with NaN; each timed call ends with a synchronize. At 2^20 our
gufunc is timed a second time allocating its output ("-fresh" ids): a staged launch then
writes the output back without copying it in (issue 30), which out= (read-write, as
DESIGN.md says) cannot skip.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _harness import (
    CUPY,
    NUMBA,
    OURS,
    cupy,
    host_random,
    measure,
    need_log2,
    numba_cuda,
    release_memory,
    sync,
)

import kernels

pytestmark = pytest.mark.gpu

IMPLS = [OURS, NUMBA, CUPY]
ROW = 128
FRESH = OURS + "-fresh"  # ours, output allocated by the call
CASES = [("matmul", k, lg, impl) for k in (4, 16) for lg in (16, 18, 20) for impl in IMPLS] + \
        [("normalize", ROW, lg, impl) for lg in (16, 18, 20) for impl in IMPLS] + \
        [("matmul", k, 20, FRESH) for k in (4, 16)] + [("normalize", ROW, 20, FRESH)]
SIGS = {"matmul": (["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)"),
        "normalize": (["void(float32[:], float32[:])"], "(n)->(n)")}
FUNCS = {"matmul": kernels.matmul_f32, "normalize": kernels.normalize_f32}


@functools.cache
def _ours(name):
    import numbacuda_ufunc as nu
    sigs, layout = SIGS[name]
    return nu.guvectorize(sigs, layout, target="cuda")(FUNCS[name])


@functools.cache
def _numba(name):
    import numba
    sigs, layout = SIGS[name]
    return numba.guvectorize(sigs, layout, target="cuda")(FUNCS[name])


def _id(c):
    return f"{c[0]}-{c[1]}x{c[1]}-batch2^{c[2]}-{c[3]}" if c[0] == "matmul" else \
        f"normalize-n{c[1]}-rows2^{c[2]}-{c[3]}"


_LAST: dict = {}


def _data(name, k, log2):
    from numbacuda_ufunc import cuda
    key = (name, k, log2)
    if _LAST.get("key") != key:
        _LAST.clear()
        release_memory()
        batch = 1 << log2
        if name == "matmul":
            ha = host_random(batch * k * k, np.float32, 0).reshape(batch, k, k)
            hb = host_random(batch * k * k, np.float32, 1).reshape(batch, k, k)
            hosts = (ha, hb)
        else:
            hosts = (host_random(batch * k, np.float32, 0).reshape(batch, k),)
        _LAST.update(key=key, data=(hosts, tuple(cuda.to_device(h) for h in hosts)))
    return _LAST["data"]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_gufunc(benchmark, case):
    from numbacuda_ufunc import cuda

    name, k, log2, impl = case
    benchmark.group = "gufunc"
    batch = 1 << log2
    nbytes = (3 if name == "matmul" else 2) * batch * (k * k if name == "matmul" else k) * 4
    need_log2(log2, 2 * nbytes)
    if impl == NUMBA:
        ncuda = numba_cuda()
    elif impl == CUPY:
        cp = cupy()
    hosts, devs = _data(name, k, log2)
    out = cuda.device_array(hosts[0].shape, np.float32)
    fresh = []
    if impl == OURS:
        g = _ours(name)
        def call(): g(*devs, out=out)  # noqa: E704
    elif impl == FRESH:
        g = _ours(name)

        def call():
            fresh[:] = [g(*devs)]
    elif impl == NUMBA:
        g = _numba(name)
        args = [ncuda.as_cuda_array(d) for d in devs] + [ncuda.as_cuda_array(out)]
        def call(): g(*args)  # noqa: E704
    else:
        args = [cp.asarray(d) for d in devs]
        o = cp.asarray(out)
        if name == "matmul":
            def call(): cp.matmul(args[0], args[1], out=o)  # noqa: E704
        else:
            x = args[0]

            def call():
                cp.multiply(x, 1 / cp.sqrt((x * x).sum(axis=1, keepdims=True)), out=o)

    def run():
        call()
        sync()

    def check(_):
        got = (fresh[0] if impl == FRESH else out)[-256:].copy_to_host()
        hs = [h[-256:].astype(np.float64) for h in hosts]
        want = hs[0] @ hs[1] if name == "matmul" else \
            hs[0] / np.sqrt((hs[0] ** 2).sum(axis=1, keepdims=True))
        # float32 accumulation over k (or 128) terms; TF32 is off in CuPy by default
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * k)
        assert not np.isnan(got).any()

    out[...] = np.nan
    try:
        run()
    except Exception as exc:  # noqa: BLE001
        if impl == OURS:
            raise
        pytest.skip(f"{impl} cannot run this case: {type(exc).__name__}: {exc}")
    what = (f"matmul {k}x{k} @ {k}x{k}, batch 2^{log2}" if name == "matmul"
            else f"normalize rows of {k}, 2^{log2} rows")
    measure(benchmark, run, impl=OURS if impl == FRESH else impl, nbytes=nbytes, check=check, log2=log2, op=name,
            reference_only=(impl == CUPY), case=f"{what} float32" + (", output allocated" if impl == FRESH else ""))
