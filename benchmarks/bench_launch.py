"""launch: what one ``kernel[blocks, threads](*args)`` launch of a @cuda.jit kernel costs.

The kernels do nothing (benchmarks/kernels.py: launch0, launch1, launch4, launch16), so
the time is the launch path alone: configuration, argument conversion, specialization
lookup, parameter packing and cuLaunchKernel. Arguments are device arrays (ours shared
with numba-cuda through __cuda_array_interface__, zero-copy). Each round makes CALLS
back-to-back launches and one synchronize. The aim (issue 8): at least 5x faster than
numba-cuda for 0, 1, 4 and 16 array arguments.

Without a GPU only ours runs, on the host backend: a measure of the C++ launch path and
the emulation's entry, not a GPU number.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from _harness import HAVE_GPU, NUMBA, OURS, measure, numba_cuda, sync

import kernels

CALLS = 200
ARGS = [0, 1, 4, 16]


@functools.cache
def _ours(nargs):
    from numbacuda_ufunc import cuda
    return cuda.jit(getattr(kernels, f"launch{nargs}"))


@functools.cache
def _numba(nargs):
    return numba_cuda().jit(getattr(kernels, f"launch{nargs}"))


@pytest.mark.parametrize("impl", [OURS, NUMBA])
@pytest.mark.parametrize("nargs", ARGS)
def test_launch(benchmark, nargs, impl):
    from numbacuda_ufunc import cuda

    benchmark.group = "launch"
    arrays = [cuda.to_device(np.zeros(256, np.float32)) for _ in range(nargs)]
    if impl == OURS:
        kernel, args = _ours(nargs), arrays
    else:
        if not HAVE_GPU:
            pytest.skip("numba-cuda needs a real GPU (host backend here)")
        ncuda = numba_cuda()
        kernel, args = _numba(nargs), [ncuda.as_cuda_array(a) for a in arrays]

    def run():
        for _ in range(CALLS):
            kernel[1, 32](*args)
        sync()

    measure(benchmark, run, impl=impl, calls=CALLS,
            case=f"empty @cuda.jit kernel, {nargs} device array argument{'s' if nargs != 1 else ''}")
