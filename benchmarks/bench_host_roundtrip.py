"""host-roundtrip: the same ufuncs on NumPy inputs and outputs (host -> device -> host in
one call), 2^20 to 2^27 float32 elements, against the pinned host<->device bandwidth
measured in the same run.

The reference is the time the same bytes take through pinned memory at the measured rates:
inputs at the pinned host-to-device rate plus the output at the device-to-host rate (our
to_device/copy_to_host into a page-locked array on a stream, then a synchronize). The
inputs are ordinary (pageable) NumPy arrays, as a user would pass them; each library does
its own staging.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _harness import (
    CUPY,
    NUMBA,
    OURS,
    REF,
    assert_close,
    cupy,
    host_random,
    measure,
    need_log2,
    numba_cuda,
    sync,
)

import kernels

pytestmark = pytest.mark.gpu

OPS = ["add2", "transc"]
SIZES = [20, 23, 26, 27]
IMPLS = [OURS, NUMBA, CUPY]
CASES = [(lg, op, impl) for lg in SIZES for op in OPS for impl in IMPLS]


@functools.cache
def _ours(op):
    import numbacuda_ufunc as nu
    return nu.vectorize(["float32(float32, float32)"], target="cuda")(getattr(kernels, op))


@functools.cache
def _numba(op):
    import numba
    return numba.vectorize(["float32(float32, float32)"], target="cuda")(getattr(kernels, op))


@pytest.mark.parametrize("case", CASES, ids=[f"{op}-float32-2^{lg}-{i}" for lg, op, i in CASES])
def test_host_roundtrip(benchmark, case):
    log2, op, impl = case
    benchmark.group = "host-roundtrip"
    n = 1 << log2
    need_log2(log2, 4 * n * 4)
    hx, hy = host_random(n, np.float32, 0), host_random(n, np.float32, 1)
    if impl == OURS:
        f = _ours(op)

        def run():
            r = f(hx, hy)
            sync()
            return r
    elif impl == NUMBA:
        numba_cuda()
        f = _numba(op)

        def run():
            r = f(hx, hy)
            sync()
            return r
    else:
        cp = cupy()
        if op == "add2":
            f = cp.add
        else:
            inp, outp, body = kernels.CUPY_BODIES[op]
            f = cp.ElementwiseKernel(inp, outp, body, f"bench_{op}")

        def run():
            return cp.asnumpy(f(cp.asarray(hx), cp.asarray(hy)))  # asnumpy synchronizes

    def check(r):
        assert isinstance(r, np.ndarray), type(r)
        x, y = hx[-4096:].astype(np.float64), hy[-4096:].astype(np.float64)
        want = x + y if op == "add2" else np.exp(-x * x) * np.sin(y)
        assert_close(r[-4096:], want.astype(np.float32), np.float32)

    measure(benchmark, run, impl=impl, nbytes=3 * n * 4, check=check, log2=log2, op=op,
            h2d_bytes=2 * n * 4, d2h_bytes=n * 4, case=f"{op} float32 2^{log2} NumPy in/out")


@pytest.mark.parametrize("log2", SIZES, ids=[f"2^{lg}" for lg in SIZES])
@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_pinned_bandwidth(benchmark, direction, log2):
    from numbacuda_ufunc import cuda

    benchmark.group = "host-roundtrip"
    n = 1 << log2
    need_log2(log2, n * 4)
    pinned = cuda.pinned_array(n, np.float32)
    pinned[:] = host_random(n, np.float32, 0)
    dev = cuda.device_array(n, np.float32)
    stream = cuda.stream()
    if direction == "h2d":
        def run():
            cuda.to_device(pinned, stream=stream, to=dev)
            stream.synchronize()
    else:
        cuda.to_device(pinned, stream=stream, to=dev)
        stream.synchronize()

        def run():
            dev.copy_to_host(pinned, stream=stream)
            stream.synchronize()

    def check(_):
        np.testing.assert_array_equal(dev[-1024:].copy_to_host(), pinned[-1024:])

    measure(benchmark, run, impl=REF, nbytes=n * 4, check=check, log2=log2,
            direction=direction, case=f"pinned {direction} float32 2^{log2}")
