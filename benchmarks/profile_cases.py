"""The cases the H100 run of 2026-11-23 left furthest from their targets, each run a few
times so that Nsight Compute can profile one warm launch (scripts/gpu_check.sh profile).

    python benchmarks/profile_cases.py CASE [IMPL]

CASE: gufunc16 (batched 16x16 float32 matmul, 2^18 matrices), gufunc4 (4x4, 2^20),
sum28 (sum of 2^28 float32), strided24 (a[::2] + b[::2] float32, 2^24 results);
IMPL: ours (default) or numba-cuda / cupy, the peer to compare the kernel with.
Each case checks its result once, so a profile is never of a wrong kernel.
"""

import os
import sys

import numpy as np
from _harness import numpy_compat_for_numba

import kernels

RUNS = 3  # ncu profiles one of them (--launch-skip in gpu_check.sh)
SHRINK = 12 if os.environ.get("PROFILE_CASES_SMALL") else 0  # a quick check without a GPU


def _gufunc(size, log2, impl):
    rng = np.random.default_rng(0)
    log2 = max(log2 - SHRINK, 1)
    a = rng.standard_normal((1 << log2, size, size), dtype=np.float32)
    b = rng.standard_normal((1 << log2, size, size), dtype=np.float32)
    sig = ["void(float32[:,:], float32[:,:], float32[:,:])"]
    if impl == "numba-cuda":
        numpy_compat_for_numba()
        import numba
        from numba import cuda
        f = numba.guvectorize(sig, "(m,n),(n,p)->(m,p)", target="cuda")(kernels.matmul_f32)
    else:
        import numbacuda_ufunc as nu
        from numbacuda_ufunc import cuda
        f = nu.guvectorize(sig, "(m,n),(n,p)->(m,p)", target="cuda")(kernels.matmul_f32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    out = cuda.device_array(a.shape, np.float32)
    for _ in range(RUNS):
        f(da, db, out)
    cuda.synchronize()
    np.testing.assert_allclose(out.copy_to_host()[:8], a[:8] @ b[:8], rtol=1e-4, atol=1e-4)


def _sum28(impl):
    x = np.random.default_rng(0).random(1 << (28 - SHRINK), dtype=np.float32)
    if impl == "cupy":
        import cupy as cp
        d = cp.asarray(x)
        for _ in range(RUNS):
            got = float(d.sum())
    else:
        from numbacuda_ufunc import cuda, vectorize
        add = vectorize(["float32(float32, float32)"], target="cuda", identity=0)(kernels.sum_op)
        d = cuda.to_device(x)
        for _ in range(RUNS):
            r = add.reduce(d)  # a 0-d device array for device input
        got = float(r.copy_to_host())
    assert abs(got - x.sum(dtype=np.float64)) <= 1e-3 * x.size


def _strided24(impl):
    rng = np.random.default_rng(0)
    a, b = (rng.random(1 << (25 - SHRINK), dtype=np.float32) for _ in range(2))
    if impl == "cupy":
        import cupy as cp
        da, db = cp.asarray(a)[::2], cp.asarray(b)[::2]
        for _ in range(RUNS):
            out = da + db
        got = cp.asnumpy(out)
    else:
        from numbacuda_ufunc import cuda, vectorize
        add = vectorize(["float32(float32, float32)"], target="cuda")(kernels.add2)
        da, db = cuda.to_device(a)[::2], cuda.to_device(b)[::2]
        for _ in range(RUNS):
            out = add(da, db)
        got = out.copy_to_host()
    np.testing.assert_array_equal(got, a[::2] + b[::2])


CASES = {"gufunc16": lambda impl: _gufunc(16, 18, impl), "gufunc4": lambda impl: _gufunc(4, 20, impl),
         "sum28": _sum28, "strided24": _strided24}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CASES:
        sys.exit(f"usage: profile_cases.py {{{','.join(CASES)}}} [ours|numba-cuda|cupy]")
    CASES[sys.argv[1]](sys.argv[2] if len(sys.argv) > 2 else "ours")
    print("ok", *sys.argv[1:])
