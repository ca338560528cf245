"""methods: ufunc.accumulate (float32) and ufunc.at (float32, float64, int32, uint64) on the device, against CuPy's
cupy.cumsum and cupyx.scatter_add (numba-cuda's ufuncs have no device methods).

accumulate: a 2^24-element vector (one line, scanned device-wide: tiles chained by
decoupled look-back) and a (2^14, 2^10) matrix along its last axis (contiguous lines: the
same tiled scan, a tile per line). at: 2^22 additions into 2^16
elements with random, repeated indices and values, both already on the device for both
libraries (ours: a bounds-check kernel, then native atomics for int32, uint64 and float64,
exact compare-and-swap loops for float32). Each call ends with a
synchronize; GB/s counts the input read once and the output written once.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _harness import CUPY, OURS, cupy, host_random, measure, need_log2, sync

import kernels

pytestmark = pytest.mark.gpu

ACC = [(shape, impl) for shape in ((1 << 24,), (1 << 14, 1 << 10)) for impl in (OURS, CUPY)]


@functools.cache
def _add():
    import numbacuda_ufunc as nu
    return nu.vectorize(["float32(float32, float32)", "float64(float64, float64)", "int32(int32, int32)",
                         "uint64(uint64, uint64)"], target="cuda")(kernels.add2)


@pytest.mark.parametrize("case", ACC, ids=[f"accumulate-{'x'.join(map(str, s))}-{i}" for s, i in ACC])
def test_accumulate(benchmark, case):
    from numbacuda_ufunc import cuda

    shape, impl = case
    benchmark.group = "methods"
    n = int(np.prod(shape))
    need_log2(24, 3 * n * 4)
    h = host_random(n, np.float32, 0).reshape(shape)
    want = np.cumsum(h, axis=-1, dtype=np.float64)
    if impl == OURS:
        f, x = _add(), cuda.to_device(h)
        out = cuda.device_array(shape, np.float32)

        def run():
            f.accumulate(x, axis=-1, out=out)
            sync()
        to_host = out.copy_to_host
    else:
        cp = cupy()
        x = cp.asarray(h)
        out = cp.empty(shape, cp.float32)

        def run():
            cp.cumsum(x, axis=-1, out=out)
            sync()
        to_host = lambda: cp.asnumpy(out)  # noqa: E731

    def check(_):
        got = to_host()
        scale = np.abs(h).sum(axis=-1, keepdims=True, dtype=np.float64)
        assert np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6)

    measure(benchmark, run, impl=impl, nbytes=2 * n * 4, check=check,
            case=f"add.accumulate of {shape} float32 along the last axis -> device array")


# float32: our exact compare-and-swap (the default) against CuPy's native atomicAdd, which
# flushes subnormals; int32/uint64/float64: native atomics on both sides (issue 30's target:
# ours >= cupyx.scatter_add). uint64, not int64: scatter_add takes the types CUDA's
# atomicAdd has (float32, int32, uint32, uint64; float64 in current CuPy).
AT = [(dtype, impl) for dtype in ("float32", "float64", "int32", "uint64") for impl in (OURS, CUPY)]


@pytest.mark.parametrize("case", AT, ids=[f"at-{d}-{i}" for d, i in AT])
def test_at(benchmark, case):
    from numbacuda_ufunc import cuda

    dtype, impl = case
    benchmark.group = "methods"
    m, n = 1 << 16, 1 << 22
    rng = np.random.default_rng(0)
    idx = rng.integers(0, m, n)
    if dtype[0] in "iu":
        vals = rng.integers(0 if dtype[0] == "u" else -100, 100, n).astype(dtype)
        want = np.zeros(m, dtype)
    else:
        vals = host_random(n, np.dtype(dtype), 1)
        want = np.zeros(m, np.float64)
    np.add.at(want, idx, vals)
    if impl == OURS:
        f = _add()
        target = cuda.device_array(m, dtype)
        d_idx, d_vals = cuda.to_device(idx), cuda.to_device(vals)  # on the device, as CuPy's

        def run():
            target[:] = 0
            f.at(target, d_idx, d_vals)
            sync()
        to_host = target.copy_to_host
    else:
        cp = cupy()
        import cupyx

        target, d_idx, d_vals = cp.zeros(m, dtype), cp.asarray(idx), cp.asarray(vals)

        def run():
            target[:] = 0
            cupyx.scatter_add(target, d_idx, d_vals)
            sync()
        try:
            run()
        except TypeError as e:  # a CuPy whose scatter_add lacks this dtype
            pytest.skip(f"cupyx.scatter_add: {e}")
        to_host = lambda: cp.asnumpy(target)  # noqa: E731

    def check(_):
        if dtype[0] in "iu":
            np.testing.assert_array_equal(to_host(), want)  # exact in any order
        else:
            np.testing.assert_allclose(to_host(), want, rtol=1e-4, atol=1e-3)

    measure(benchmark, run, impl=impl, nbytes=n * (8 + np.dtype(dtype).itemsize),
            case=f"add.at: 2^22 {dtype} additions into 2^16 elements, repeated indices, "
                 "indices and values on the device")
