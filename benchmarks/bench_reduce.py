"""reduce: sum and max of 2^20 to 2^28 float32 (to a host scalar), and axis sums of a
(2^14, 2^14) float32 matrix over each axis (to a device array), against cupy.sum/cupy.max
and numba-cuda's cuda.reduce.

Full reductions return a host scalar in every library (ours: Reduce(arr) -> NumPy
scalar; numba-cuda: cuda.reduce -> scalar; CuPy: .item()), so each timed call includes the
4-byte copy back and the wait. Axis reductions end with a synchronize. GB/s counts the
input read once.
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
FULL = [(lg, op, impl) for lg in (20, 24, 28) for op in ("sum", "max") for impl in IMPLS]
AXIS = [(axis, impl) for axis in (0, 1) for impl in (OURS, CUPY, NUMBA)]
OPS = {"sum": kernels.sum_op, "max": kernels.max_op}


@functools.cache
def _ours(op):
    import numbacuda_ufunc as nu
    return nu.reduce(OPS[op])


@functools.cache
def _numba(op):
    return numba_cuda().reduce(OPS[op])


_LAST: dict = {}


def _data(n):
    from numbacuda_ufunc import cuda
    if _LAST.get("n") != n:
        _LAST.clear()
        release_memory()
        h = host_random(n, np.float32, 0)
        _LAST.update(n=n, data=(h, cuda.to_device(h), float(np.abs(h, dtype=np.float64).sum()),
                                float(h.sum(dtype=np.float64)), float(h.max())))
    return _LAST["data"]


@pytest.mark.parametrize("case", FULL, ids=[f"{op}-float32-2^{lg}-{i}" for lg, op, i in FULL])
def test_full_reduce(benchmark, case):
    log2, op, impl = case
    benchmark.group = "reduce"
    n = 1 << log2
    need_log2(log2, 2 * n * 4)
    if impl == OURS:
        r = _ours(op)
        h, d, l1, s, m = _data(n)
        def run(): return r(d)  # noqa: E704
    elif impl == NUMBA:
        ncuda = numba_cuda()
        r = _numba(op)
        h, d, l1, s, m = _data(n)
        nd = ncuda.as_cuda_array(d)
        # numba's init=0 would be wrong for max of negative data: start from the first value
        init = 0 if op == "sum" else float(h[0])
        def run(): return r(nd, init=init)  # noqa: E704
    else:
        cp = cupy()
        h, d, l1, s, m = _data(n)
        x = cp.asarray(d)
        f = cp.sum if op == "sum" else cp.max
        def run(): return f(x).item()  # noqa: E704

    def check(got):
        if op == "sum":
            assert abs(float(got) - s) <= 1e-5 * l1, (float(got), s)
        else:
            assert float(got) == m

    measure(benchmark, run, impl=impl, nbytes=n * 4, check=check, log2=log2, op=op,
            case=f"{op} of 2^{log2} float32 -> host scalar")


@pytest.mark.parametrize("case", AXIS, ids=[f"sum-axis{a}-16384x16384-{i}" for a, i in AXIS])
def test_axis_sum(benchmark, case):
    axis, impl = case
    benchmark.group = "reduce"
    need_log2(28, 2 * (1 << 28) * 4)
    if impl == NUMBA:
        numba_cuda()
        pytest.skip("numba-cuda's cuda.reduce reduces a whole 1-d array (no axis argument)")
    h, d, _, _, _ = _data(1 << 28)
    h2, d2 = h.reshape(16384, 16384), d.reshape(16384, 16384)
    if impl == OURS:
        r = _ours("sum")

        def run():
            res = r(d2, axis=axis)
            sync()
            return res
        to_host = lambda res: res.copy_to_host()  # noqa: E731
    else:
        cp = cupy()
        x = cp.asarray(d2)

        def run():
            res = cp.sum(x, axis=axis)
            sync()
            return res
        to_host = cp.asnumpy

    def check(res):
        got = to_host(res)
        idx = np.r_[0:64, 16384 - 64:16384]
        part = h2[:, idx] if axis == 0 else h2[idx, :]
        want = part.sum(axis=axis, dtype=np.float64)
        l1 = np.abs(part).sum(axis=axis, dtype=np.float64)
        assert np.all(np.abs(got[idx] - want) <= 1e-5 * l1 + 1e-6)

    measure(benchmark, run, impl=impl, nbytes=(1 << 28) * 4, check=check, axis=axis,
            case=f"sum over axis {axis} of (16384, 16384) float32 -> device array")
