"""Where the time of a NumPy-in, NumPy-out ufunc call goes, on a GPU.

    python scripts/roundtrip_breakdown.py [LOG2]   (default 26: 2^26 float32, 256 MiB)

Prints medians (of 7) for each piece of the round trip of `a + b`: the host->device copies
of pageable inputs, the kernel, the device->host copy into a fresh NumPy array and into an
existing one, the same copies through pinned memory, and a plain host memcpy of the same
size (fresh destination and existing one), so the gap to the pinned bound can be assigned
to staging copies, page faults or the DMA itself.

The staging of pageable arrays can be varied without a rebuild, to compare on a GPU:
NUMBACUDA_UFUNC_STAGING_PIECE_MIB=2|4|8 (piece size) and NUMBACUDA_UFUNC_STAGING_STORES=cached
(cached instead of streaming stores into the pinned ring).
"""

import statistics
import sys
import time

import numpy as np

from numbacuda_ufunc import cuda, vectorize


def median_ms(fn, reps=7):
    times = []
    for _ in range(reps):
        cuda.synchronize()
        t = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    n = 1 << int(sys.argv[1] if len(sys.argv) > 1 else 26)
    add = vectorize(["float32(float32, float32)"], target="cuda")(lambda a, b: a + b)
    a = np.random.default_rng(0).random(n, np.float32)
    b = a.copy()
    da, db = cuda.to_device(a), cuda.to_device(b)
    dout = cuda.device_array(n, np.float32)
    existing = np.empty(n, np.float32)
    existing[:] = 1
    pinned = cuda.pinned_array(n, np.float32)
    pinned[:] = a
    mib = n * 4 / 2**20
    rows = [
        ("whole call add(a, b), NumPy in and out", lambda: add(a, b)),
        ("to_device(pageable)", lambda: cuda.to_device(a, to=da)),
        ("to_device(pinned)", lambda: cuda.to_device(pinned, to=da)),
        ("kernel, device arrays", lambda: add(da, db, out=dout)),
        ("copy_to_host -> fresh NumPy array", lambda: dout.copy_to_host()),
        ("copy_to_host -> existing NumPy array", lambda: dout.copy_to_host(existing)),
        ("copy_to_host -> pinned array", lambda: dout.copy_to_host(pinned)),
        ("host memcpy -> fresh array (np.copy)", lambda: a.copy()),
        ("host memcpy -> existing array", lambda: np.copyto(existing, a)),
    ]
    print(f"{n} float32 ({mib:.0f} MiB per array)")
    for name, fn in rows:
        ms = median_ms(fn)
        print(f"  {name:42s} {ms:9.3f} ms  {mib / 1024 / (ms / 1e3):7.1f} GiB/s per array")


if __name__ == "__main__":
    main()
