"""dispatch: what one ufunc call costs on device arrays, above the bare kernel-launch floor.

Each round makes CALLS back-to-back calls into preallocated outputs (or, in the
"new output" case, letting each library allocate) and one synchronize; per-call time is
round time / CALLS. Same inputs for every impl (ours uploaded once and shared with numba-cuda
and CuPy through __cuda_array_interface__, zero-copy).

The floor is the bare driver launch of an empty kernel, ``cuLaunchKernel`` called through
ctypes (so it includes one ctypes foreign call, as ours includes one pybind11 entry);
CuPy's RawKernel and numba-cuda's empty ``@cuda.jit`` kernel are timed beside it.

Without a GPU only our call runs, on the host backend (emulation: a C++ loop on the CPU,
not a GPU number); the floor and the peers skip.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np
import pytest
from _harness import CUPY, HAVE_GPU, NUMBA, OURS, REF, cupy, host_random, measure, numba_cuda, sync

import kernels

CALLS = 100
IMPLS = [OURS, NUMBA, CUPY]

# (case id, function, number of array inputs, elements, scalar second argument, out=?)
CASES = [
    ("add2-n1", "add2", 2, 1, False, True),
    ("add2-n1000", "add2", 2, 1000, False, True),
    ("add2-n100000", "add2", 2, 100_000, False, True),
    ("add4-n1000", "add4", 4, 1000, False, True),
    ("add2-scalar-n1000", "add2", 1, 1000, True, True),
    ("add2-n1000-new-output", "add2", 2, 1000, False, False),
]
SCALAR = np.float32(2.5)


def _describe(fname, nin, n, scalar, out):
    args = f"{nin} float32 array{'s' if nin > 1 else ''} of {n}" + (" + a float32 scalar" if scalar else "")
    return f"{fname}: {args}, {'out= given' if out else 'new output each call'}"


@functools.cache
def _ours(fname):
    import numbacuda_ufunc as nu
    nargs = 4 if fname == "add4" else 2
    sig = f"float32({', '.join(['float32'] * nargs)})"
    return nu.vectorize([sig], target="cuda")(getattr(kernels, fname))


@functools.cache
def _numba(fname):
    import numba
    nargs = 4 if fname == "add4" else 2
    sig = f"float32({', '.join(['float32'] * nargs)})"
    return numba.vectorize([sig], target="cuda")(getattr(kernels, fname))


@functools.cache
def _cupy_kernel(fname):
    cp = cupy()
    if fname == "add2":
        return cp.add  # CuPy's own ufunc: the call the issue compares with
    inp, outp, body = kernels.CUPY_BODIES[fname]
    k = cp.ElementwiseKernel(inp, outp, body, f"bench_{fname}")
    # an ElementwiseKernel takes its output positionally (out= raised TypeError on the H100)
    return lambda *a, out=None: k(*a) if out is None else k(*a, out)


def _call_loop(f, args, out):
    if out is None:
        def run():
            for _ in range(CALLS):
                f(*args)
            sync()
    else:
        def run():
            for _ in range(CALLS):
                f(*args, out=out)
            sync()
    return run


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_dispatch(benchmark, case, impl):
    from numbacuda_ufunc import cuda

    cid, fname, nin, n, scalar, with_out = case
    benchmark.group = "dispatch"
    host = [host_random(n, np.float32, k) for k in range(nin)]
    d_in = [cuda.to_device(h) for h in host]
    want = getattr(kernels, fname)(*host, *([SCALAR] if scalar else []))
    if impl == OURS:
        f, args = _ours(fname), list(d_in)
        out = cuda.device_array(n, np.float32) if with_out else None
        to_host = lambda r: (r if r is not None else out).copy_to_host()  # noqa: E731
    elif impl == NUMBA:
        if not HAVE_GPU:
            pytest.skip("numba-cuda needs a real GPU (host backend here)")
        ncuda = numba_cuda()
        f, args = _numba(fname), [ncuda.as_cuda_array(d) for d in d_in]
        out = ncuda.device_array(n, np.float32) if with_out else None
        to_host = lambda r: (r if r is not None else out).copy_to_host()  # noqa: E731
    else:
        if not HAVE_GPU:
            pytest.skip("CuPy needs a real GPU (host backend here)")
        cp = cupy()
        f, args = _cupy_kernel(fname), [cp.asarray(d) for d in d_in]
        out = cp.empty(n, np.float32) if with_out else None
        to_host = lambda r: cp.asnumpy(r if r is not None else out)  # noqa: E731
    if scalar:
        args.append(SCALAR)

    def check(_):
        r = f(*args) if out is None else f(*args, out=out)
        sync()
        np.testing.assert_allclose(to_host(r), want, rtol=1e-6)

    measure(benchmark, _call_loop(f, args, out), impl=impl, calls=CALLS,
            case=_describe(fname, nin, n, scalar, with_out), check=check)


# ------------------------------------------------------------------ the launch floor

_EMPTY = 'extern "C" __global__ void empty_kernel() {}\n'


@functools.cache
def _driver_empty_kernel():
    """(launch, function handle) for an empty kernel loaded with the driver API through
    ctypes, in the primary context our engine made current."""
    from numbacuda_ufunc import _core, cuda

    dev = cuda.get_current_device()
    ptx = _core.compile_ptx(_EMPTY, tuple(dev.compute_capability), False, [])
    lib = ctypes.CDLL("libcuda.so.1")
    vp = ctypes.c_void_p

    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUresult {rc}")

    ctx, mod, fn = vp(), vp(), vp()
    check(lib.cuInit(0), "cuInit")
    cu_dev = ctypes.c_int()
    check(lib.cuDeviceGet(ctypes.byref(cu_dev), dev.id), "cuDeviceGet")
    check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), cu_dev), "cuDevicePrimaryCtxRetain")
    check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    check(lib.cuModuleLoadData(ctypes.byref(mod), ptx.encode()), "cuModuleLoadData")
    check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"empty_kernel"),
          "cuModuleGetFunction")
    launch = lib.cuLaunchKernel
    u = ctypes.c_uint
    launch.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
    launch.restype = ctypes.c_int
    return launch, fn.value


FLOORS = ["cuLaunchKernel-ctypes", "cupy-RawKernel", "numba-cuda-jit"]


@pytest.mark.gpu
@pytest.mark.parametrize("how", FLOORS)
def test_empty_kernel_launch_floor(benchmark, how):
    benchmark.group = "dispatch"
    if how == "cuLaunchKernel-ctypes":
        launch, fn = _driver_empty_kernel()
        impl = REF

        def once():
            rc = launch(fn, 1, 1, 1, 1, 1, 1, 0, None, None, None)
            if rc:
                raise RuntimeError(f"cuLaunchKernel failed with CUresult {rc}")
    elif how == "cupy-RawKernel":
        cp = cupy()
        kern = cp.RawKernel(_EMPTY, "empty_kernel")
        impl = CUPY

        def once():
            kern((1,), (1,), ())
    else:
        ncuda = numba_cuda()

        @ncuda.jit("void()")
        def empty_kernel():
            pass

        impl = NUMBA

        def once():
            empty_kernel[1, 1]()

    def run():
        for _ in range(CALLS):
            once()
        sync()

    measure(benchmark, run, impl=impl, calls=CALLS, floor=how,
            case=f"empty kernel launch ({how})")
