"""staging-copy: the CPU side of a NumPy in/out call on the CUDA backend (issue 30, item 6).

Inputs on their way to the device are copied on the CPU into a ring of pinned buffers,
one piece at a time (src/runtime/cuda_staging.cpp), and results on their way back are
copied out of one. This times that copy alone, on the CPU, so it runs without a GPU: the
bytes of a 2^24 or 2^26 float32 array copied

* ``ring``: piece by piece into a ring of 4 buffers of 4 MiB (what staging does; the
  buffers stay in memory, as page-locked ones do), and
* ``array``: into an existing array of the same size (a result copied out of staging),

by ``streaming`` (the staging copy: every core, non-temporal stores), ``pool`` (the
previous staging copy: memcpy over the thread pool), ``memcpy`` (one thread) and
``np.copyto``. GB/s count the bytes copied once (not read + written). The GPU target
this serves: NumPy in/out ``a + b`` at 2^26 at >= 80% of the pinned bound
(bench_host_roundtrip.py); the staging copy has to outrun the DMA for that.
"""

from __future__ import annotations

import numpy as np
import pytest
from _harness import OURS, REF, host_random, measure, need_log2

from numbacuda_ufunc import _core

PIECE = 4 << 20
DEPTH = 4
HOWS = ["streaming", "pool", "memcpy", "np.copyto"]
CASES = [(lg, pattern, how) for lg in (24, 26) for pattern in ("ring", "array") for how in HOWS]


def _copier(how):
    if how == "np.copyto":
        return np.copyto
    return lambda dst, src: _core._host_copy(dst, src, how)


@pytest.mark.parametrize("case", CASES, ids=[f"{p}-2^{lg}-{h}" for lg, p, h in CASES])
def test_staging_copy(benchmark, case):
    log2, pattern, how = case
    benchmark.group = "staging-copy"
    n = 1 << log2
    need_log2(log2)
    src = host_random(n, np.float32, 0).view(np.uint8)
    nbytes = src.nbytes
    copy = _copier(how)
    if pattern == "ring":
        ring = np.ones((DEPTH, PIECE), np.uint8)  # touched: resident, as pinned memory is
        pieces = [(k % DEPTH, src[off:off + PIECE]) for k, off in enumerate(range(0, nbytes, PIECE))]

        def run():
            for slot, piece in pieces:
                copy(ring[slot, :piece.size], piece)
            return ring

        def check(_):
            last_slot, last = pieces[-1]
            np.testing.assert_array_equal(ring[last_slot, :last.size], last)
    else:
        dst = np.ones(nbytes, np.uint8)

        def run():
            copy(dst, src)
            return dst

        def check(_):
            np.testing.assert_array_equal(dst[-4096:], src[-4096:])
            np.testing.assert_array_equal(dst[:4096], src[:4096])

    measure(benchmark, run, impl=OURS if how == "streaming" else REF, nbytes=nbytes, check=check,
            log2=log2, how=how, pattern=pattern, case=f"staging copy {pattern} 2^{log2} float32: {how}")


def _interleaved_runs(src, ring, dst):
    runs = {}
    for how in HOWS:
        copy = _copier(how)

        def to_ring(copy=copy):
            for k, off in enumerate(range(0, src.nbytes, PIECE)):
                copy(ring[k % DEPTH, :min(PIECE, src.nbytes - off)], src[off:off + PIECE])

        runs[("ring", how)] = to_ring
        runs[("array", how)] = lambda copy=copy: copy(dst, src)
    return runs


def main(argv=None):
    """``python benchmarks/bench_staging.py [LOG2 ...] [--rounds N]``: the same copies
    interleaved round by round (on a loaded machine, sequential groups of rounds see
    different loads), printing the median and best GB/s of each."""
    import argparse
    import statistics
    import time

    p = argparse.ArgumentParser(description=main.__doc__)
    p.add_argument("log2", nargs="*", type=int, default=[24, 26])
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    for log2 in args.log2:
        src = rng.random(1 << log2, np.float32).view(np.uint8)
        runs = _interleaved_runs(src, np.ones((DEPTH, PIECE), np.uint8), np.ones(src.nbytes, np.uint8))
        times = {key: [] for key in runs}
        for fn in runs.values():
            fn()  # warm: pages of dst, the pool's threads
        for _ in range(args.rounds):
            for key, fn in runs.items():
                t = time.perf_counter()
                fn()
                times[key].append(time.perf_counter() - t)
        print(f"2^{log2} float32 ({src.nbytes >> 20} MiB), {args.rounds} interleaved rounds, GB/s median (best)")
        for (pattern, how), ts in times.items():
            gbs = [src.nbytes / t / 1e9 for t in ts]
            print(f"  {pattern:6s} {how:12s} {statistics.median(gbs):6.2f} ({max(gbs):6.2f})")


if __name__ == "__main__":
    main()
