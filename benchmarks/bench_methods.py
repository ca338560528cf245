"""methods: ufunc.accumulate and ufunc.at of float32 on the device, against CuPy's
cupy.cumsum and cupyx.scatter_add (numba-cuda's ufuncs have no device methods).

accumulate: a 2^24-element vector (one line, scanned device-wide: tiles chained by
decoupled look-back) and a (2^14, 2^10) matrix along its last axis (contiguous lines: the
same tiled scan, a tile per line). at: 2^22 additions into 2^16
elements with random, repeated indices and values, both already on the device for both
libraries (ours: a bounds-check kernel, then compare-and-swap loops). Each call ends with a
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
    return nu.vectorize(["float32(float32, float32)"], target="cuda")(kernels.add2)


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


@pytest.mark.parametrize("impl", [OURS, CUPY])
def test_at(benchmark, impl):
    from numbacuda_ufunc import cuda

    benchmark.group = "methods"
    m, n = 1 << 16, 1 << 22
    rng = np.random.default_rng(0)
    idx = rng.integers(0, m, n)
    vals = host_random(n, np.float32, 1)
    want = np.zeros(m, np.float64)
    np.add.at(want, idx, vals)
    if impl == OURS:
        f = _add()
        target = cuda.device_array(m, np.float32)
        d_idx, d_vals = cuda.to_device(idx), cuda.to_device(vals)  # on the device, as CuPy's

        def run():
            target[:] = 0
            f.at(target, d_idx, d_vals)
            sync()
        to_host = target.copy_to_host
    else:
        cp = cupy()
        import cupyx

        target, d_idx, d_vals = cp.zeros(m, cp.float32), cp.asarray(idx), cp.asarray(vals)

        def run():
            target[:] = 0
            cupyx.scatter_add(target, d_idx, d_vals)
            sync()
        to_host = lambda: cp.asnumpy(target)  # noqa: E731

    def check(_):
        np.testing.assert_allclose(to_host(), want, rtol=1e-4, atol=1e-3)

    measure(benchmark, run, impl=impl, nbytes=n * (8 + 4),
            case="add.at: 2^22 float32 additions into 2^16 elements, repeated indices, "
                 "indices and values on the device")
