"""throughput-<op>: elementwise bandwidth of a + b, a polynomial and a transcendental, on
float32/float64 at 2^20, 2^24, 2^28 elements (a + b also at 2^12 and 2^16, for the plot);
contiguous, strided (every other element of both inputs, contiguous output) and broadcast
(a column (R,1) + a row (1,C) -> (R,C)).

GB/s counts the bytes the operation must move, each once: every logical input element
read and every output element written (a strided input counts n elements, not the 2n its
cache lines span; a broadcast input counts R or C elements). Each timed call ends with a
device synchronize. Output preallocated (allocated once with our allocator, poisoned with
NaN, shared with the peers through __cuda_array_interface__), so the clock sees launch +
kernel only. Inputs are uploaded once per case and shared the same way.

copy-bandwidth: the device-to-device copy of the same sizes in the same run (our
copy_to_device = cuMemcpyDtoDAsync, and CuPy's copyto), counting bytes read + written:
the physical reference the report divides by.
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
    release_memory,
    sync,
)

import kernels

pytestmark = pytest.mark.gpu

OPS = ["add2", "poly", "transc"]
DTYPES = ["float32", "float64"]
IMPLS = [OURS, NUMBA, CUPY]
# (dtype, log2, layout): contiguous at every size; strided and broadcast at 2^24 and 2^28
SHAPES = [(dt, lg, "contiguous") for dt in DTYPES for lg in (20, 24, 28)] + \
         [(dt, lg, lay) for dt in DTYPES for lg in (24, 28) for lay in ("strided", "broadcast")]
CASES = [(dt, lg, lay, op, impl) for dt, lg, lay in SHAPES for op in OPS for impl in IMPLS]
# small sizes of a + b, for the throughput-against-size plot (benchmarks/plot_throughput.py)
CASES = [(dt, lg, "contiguous", "add2", impl) for dt in DTYPES for lg in (12, 16)
         for impl in IMPLS] + CASES


def _id(c):
    return f"{c[3]}-{c[0]}-2^{c[1]}-{c[2]}-{c[4]}"


@functools.cache
def _ours(op):
    import numbacuda_ufunc as nu
    return nu.vectorize(["float32(float32, float32)", "float64(float64, float64)"],
                        target="cuda")(getattr(kernels, op))


@functools.cache
def _numba(op):
    import numba
    return numba.vectorize(["float32(float32, float32)", "float64(float64, float64)"],
                           target="cuda")(getattr(kernels, op))


@functools.cache
def _cupy_op(op):
    cp = cupy()
    if op == "add2":
        return cp.add
    inp, outp, body = kernels.CUPY_BODIES[op]
    return cp.ElementwiseKernel(inp, outp, body, f"bench_{op}")


_LAST: dict = {}


def _case_data(dtype, log2, layout):
    """Device inputs (ours), host inputs (same values, same shapes) and the output shape,
    kept while consecutive tests share them."""
    from numbacuda_ufunc import cuda

    key = (dtype, log2, layout)
    if _LAST.get("key") == key:
        return _LAST["data"]
    _LAST.clear()
    release_memory()
    n = 1 << log2
    if layout == "contiguous":
        hx, hy = host_random(n, dtype, 0), host_random(n, dtype, 1)
        dx, dy = cuda.to_device(hx), cuda.to_device(hy)
        shape = (n,)
    elif layout == "strided":
        bx, by = host_random(2 * n, dtype, 0), host_random(2 * n, dtype, 1)
        dx, dy = cuda.to_device(bx)[::2], cuda.to_device(by)[::2]
        hx, hy = bx[::2], by[::2]
        shape = (n,)
    else:
        rows, cols = 1 << (log2 // 2), 1 << (log2 - log2 // 2)
        hx = host_random(rows, dtype, 0).reshape(rows, 1)
        hy = host_random(cols, dtype, 1).reshape(1, cols)
        dx, dy = cuda.to_device(hx), cuda.to_device(hy)
        shape = (rows, cols)
    nbytes = (hx.size + hy.size + int(np.prod(shape))) * np.dtype(dtype).itemsize
    data = (dx, dy, hx, hy, shape, nbytes)
    _LAST.update(key=key, data=data)
    return data


def _sample_check(out, hx, hy, shape, op, dtype):
    """Compare the first and last 512 elements of ``out`` (ours, shared) with NumPy float64."""
    total = int(np.prod(shape))  # at least 2^12 here
    idx = np.concatenate([np.arange(512), np.arange(total - 512, total)])
    where = np.unravel_index(idx, shape)
    x = np.broadcast_to(hx, shape)[where].astype(np.float64)
    y = np.broadcast_to(hy, shape)[where].astype(np.float64)
    want = getattr(kernels, op)(x, y) if op != "transc" else np.exp(-x * x) * np.sin(y)
    flat = out.reshape(total)
    got = np.concatenate([flat[:512].copy_to_host(), flat[total - 512:].copy_to_host()])
    assert_close(got, want.astype(dtype), dtype)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_throughput(benchmark, case):
    from numbacuda_ufunc import cuda

    dtype, log2, layout, op, impl = case
    benchmark.group = f"throughput-{op}"
    itemsize = np.dtype(dtype).itemsize
    need_log2(log2, (6 if layout == "strided" else 3) * (1 << log2) * itemsize)
    if impl == NUMBA:
        ncuda = numba_cuda()
    elif impl == CUPY:
        cp = cupy()
    dx, dy, hx, hy, shape, nbytes = _case_data(dtype, log2, layout)
    out = cuda.device_array(shape, dtype)
    if impl == OURS:
        f, args = _ours(op), (dx, dy)
        def call(): f(*args, out=out)  # noqa: E704
    elif impl == NUMBA:
        f, o = _numba(op), ncuda.as_cuda_array(out)
        args = (ncuda.as_cuda_array(dx), ncuda.as_cuda_array(dy))
        def call(): f(*args, out=o)  # noqa: E704
    else:
        f, o = _cupy_op(op), cp.asarray(out)
        args = (cp.asarray(dx), cp.asarray(dy))
        if op == "add2":
            def call(): f(*args, out=o)  # noqa: E704
        else:
            def call(): f(*args, o)  # noqa: E704

    def run():
        call()
        sync()

    def check(_):
        _sample_check(out, hx, hy, shape, op, dtype)

    out[...] = np.nan  # poison: the check fails on any element the call leaves unwritten
    try:
        run()
    except Exception as exc:  # noqa: BLE001
        if impl == OURS:
            raise
        pytest.skip(f"{impl} cannot run this case: {type(exc).__name__}: {exc}")
    measure(benchmark, run, impl=impl, nbytes=nbytes, check=check, dtype=dtype, log2=log2,
            layout=layout, op=op,
            case=f"{op} {dtype} 2^{log2} {layout}")


COPY_CASES = [(dt, lg, impl) for dt in DTYPES for lg in (20, 24, 28) for impl in (REF, CUPY)]


@pytest.mark.parametrize("case", COPY_CASES,
                         ids=[f"{dt}-2^{lg}-{'cuMemcpyDtoD' if i == REF else 'cupy'}"
                              for dt, lg, i in COPY_CASES])
def test_copy_bandwidth(benchmark, case):
    from numbacuda_ufunc import cuda

    dtype, log2, impl = case
    benchmark.group = "copy-bandwidth"
    need_log2(log2, 2 * (1 << log2) * np.dtype(dtype).itemsize)
    if impl == CUPY:
        cp = cupy()
    host = host_random(1 << log2, dtype, 0)
    src = cuda.to_device(host)
    dst = cuda.device_array(host.shape, dtype)
    if impl == REF:
        def run():
            dst.copy_to_device(src)  # Numba's semantics: copy src into dst
            sync()
        how = "cuMemcpyDtoDAsync (our copy_to_device)"
    else:
        s, d = cp.asarray(src), cp.asarray(dst)

        def run():
            cp.copyto(d, s)
            sync()
        how = "cupy.copyto"

    def check(_):
        np.testing.assert_array_equal(dst[-1024:].copy_to_host(), host[-1024:])

    dst[...] = np.nan
    measure(benchmark, run, impl=impl, nbytes=2 * host.nbytes, check=check, dtype=dtype,
            log2=log2, copy=how, case=f"copy {dtype} 2^{log2}")
