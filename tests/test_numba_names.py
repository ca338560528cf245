"""Names real Numba CUDA programs use beside the kernels (issue 34): ``prange``,
``numba.config``, the ``Device`` attributes and ``cuda.devices``, ``Kernel.configure``,
``range()`` over floats in device code, and ``cuda.external_stream(0)``. Numba's behaviour
is the reference; the Python function is the oracle for the translated code."""

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError

# ---- prange -------------------------------------------------------------------------------

def test_prange_is_importable_and_runs_as_range_everywhere():
    from numbacuda_ufunc import njit, prange

    @njit(parallel=True)
    def cpu_sum(n):
        s = 0
        for i in prange(n):
            s += i
        return s

    assert cpu_sum(10) == 45  # the CPU side runs the Python function

    @cuda.jit
    def k(r, n):
        s = 0
        for i in prange(n):
            s += i * i
        r[0] = s

    r = np.zeros(1, np.int64)
    k[1, 1](r, 7)
    assert r[0] == sum(i * i for i in range(7))

    @nu.vectorize(["int64(int64)"])
    def tri(n):
        s = 0
        for i in prange(1, n + 1, 2):
            s += i
        return s

    x = np.array([0, 1, 5, 10, -3])
    np.testing.assert_array_equal(tri(x), [sum(range(1, v + 1, 2)) for v in x])


# ---- numba.config ------------------------------------------------------------------------

def test_top_level_config_is_cuda_config():
    assert nu.config is cuda.config
    saved = nu.config.CUDA_LOW_OCCUPANCY_WARNINGS
    try:
        nu.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
        assert cuda.config.CUDA_LOW_OCCUPANCY_WARNINGS == 0
    finally:
        nu.config.CUDA_LOW_OCCUPANCY_WARNINGS = saved


# ---- Device attributes and cuda.devices -----------------------------------------------------

def test_device_attributes_by_numba_names():
    dev = cuda.get_current_device()
    assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE == 32
    assert (dev.MAX_BLOCK_DIM_X, dev.MAX_BLOCK_DIM_Y, dev.MAX_BLOCK_DIM_Z) == (1024, 1024, 64)
    assert dev.MAX_GRID_DIM_X == 2**31 - 1
    assert (dev.COMPUTE_CAPABILITY_MAJOR, dev.COMPUTE_CAPABILITY_MINOR) == \
        tuple(dev.compute_capability)
    assert dev.MULTIPROCESSOR_COUNT >= 1
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK >= 48 * 1024
    assert dev.L2_CACHE_SIZE > 0 and dev.MAX_REGISTERS_PER_BLOCK >= 32768
    with pytest.raises(AttributeError, match="no attribute 'NOT_AN_ATTRIBUTE'"):
        dev.NOT_AN_ATTRIBUTE  # noqa: B018


@pytest.mark.emulation
def test_emulated_device_reports_an_h100():
    dev = cuda.get_current_device()
    assert dev.L2_CACHE_SIZE == 50 * 2**20
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN == 227 * 1024
    assert dev.MAX_THREADS_PER_MULTIPROCESSOR == 2048
    with pytest.raises(AttributeError, match="has no value for "
                                             "CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH"):
        dev.MAXIMUM_TEXTURE1D_WIDTH  # noqa: B018  (textures: no emulated value)


@pytest.mark.gpu
def test_device_attributes_come_from_the_driver():
    dev = cuda.get_current_device()
    # the engine's own reading of the same attribute, through another path
    assert dev.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN > dev.MAX_SHARED_MEMORY_PER_BLOCK
    assert dev.CLOCK_RATE > 0 and dev.GLOBAL_MEMORY_BUS_WIDTH > 0


def test_cuda_devices_module():
    from numbacuda_ufunc.cuda.cudadrv import devices as same

    assert cuda.devices is same
    assert len(cuda.devices.gpus) >= 1
    ctx = cuda.devices.get_context()
    assert ctx is not None and cuda.devices.get_context(0) is not None

    @cuda.devices.require_context
    def total():
        return cuda.current_context().get_memory_info()[1]

    assert total() > 0
    d = cuda.to_device(np.arange(3.0))
    cuda.devices.reset()  # Numba's reset; arrays stay valid here
    np.testing.assert_array_equal(d.copy_to_host(), [0.0, 1.0, 2.0])


# ---- Kernel.configure -------------------------------------------------------------------------

def test_kernel_configure_is_the_launch_configuration():
    @cuda.jit
    def fill(a, v):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = v + i

    a = np.full(100, -1.0)
    fill.configure(4, 32)(a, 2.0)
    np.testing.assert_array_equal(a, 2.0 + np.arange(100))
    s = cuda.stream()
    d = cuda.to_device(np.full(64, -1.0))
    fill.configure((2,), (32,), stream=s, sharedmem=0)(d, 1.0)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(), 1.0 + np.arange(64))
    with pytest.raises(TypeError, match="griddim must be a sequence of integers"):
        fill.configure("x", 32)


# ---- range() over floats -------------------------------------------------------------------------

def _float_ranges(r, x):
    # Numba converts float range() arguments to int64 (truncating toward zero)
    s = 0
    for i in range(x[0]):
        s += i
    r[0] = s
    t = 0
    for i in range(x[1], x[2], x[3]):
        t += i
    r[1] = t
    c = 0
    for _ in range(2.9):
        c += 1
    r[2] = c


@pytest.mark.parametrize("values", [(4.7, 1.5, 7.9, 2.2), (-2.5, 9.9, 0.1, -3.7),
                                    (0.0, -0.0, 3.0, 1.0), (1e3, 5.0, 5.99, 1.0)])
def test_range_over_floats_truncates_as_numba(values):
    k = cuda.jit(_float_ranges)
    x = np.array(values)
    r = np.full(3, -99, np.int64)
    k[1, 1](r, x)
    n = x.astype(np.int64)  # the oracle: Python's loops over the truncated values
    want = [sum(range(n[0])), sum(range(n[1], n[2], n[3])), len(range(2))]
    np.testing.assert_array_equal(r, want)


def test_range_over_complex_is_still_refused():
    @cuda.jit
    def k(r, z):
        for i in range(z[0]):
            r[0] = i

    with pytest.raises(CompileError, match="range\\(\\) arguments must be integers or floats"):
        k[1, 1](np.zeros(1, np.int64), np.ones(1, np.complex128))


# ---- external_stream(0) ---------------------------------------------------------------------------

def test_external_stream_zero_is_the_default_stream():
    s = cuda.external_stream(0)
    assert s.handle == 0 or int(s.handle or 0) == 0
    d = cuda.to_device(np.arange(4.0), stream=s)
    np.testing.assert_array_equal(d.copy_to_host(stream=s), np.arange(4.0))
    s.synchronize()
    for bad in (-1, 1.5, True, "0"):
        with pytest.raises(ValueError, match="external_stream\\(\\): ptr must be a stream handle"):
            cuda.external_stream(bad)


# ---- the rest of numba.cuda's public names a program reaches --------------------------------

def test_cuda_namespace_reexports_numba_types_and_modules():
    assert cuda.float32 is nu.float32 and cuda.int64 is nu.int64 and cuda.void is nu.void
    assert cuda.types is nu.types and cuda.errors is nu.errors
    assert cuda.CudaSupportError is nu.errors.CudaSupportError
    assert cuda.literal_unroll is nu.literal_unroll
    assert cuda.is_float16_supported() is True
    for module in ("driver", "extending", "kernels", "libdevice"):
        assert hasattr(cuda, module)
    assert cuda.require_context is cuda.devices.require_context

    @cuda.jit
    def k(r):
        a = cuda.local.array(2, dtype=cuda.float32)
        a[0] = 1.5
        a[1] = 2.0
        r[0] = a[0] * a[1]

    r = np.zeros(1, np.float32)
    k[1, 1](r)
    assert r[0] == 3.0


def test_device_feature_queries_and_context_factories():
    dev = cuda.get_current_device()
    cc = tuple(dev.compute_capability)
    assert dev.supports_float16 == (cc >= (5, 3))
    assert dev.supports_bfloat16 == (cc >= (8, 0)) and dev.supports_fp8 == (cc >= (8, 9))
    ctx = cuda.current_context()
    s = ctx.create_stream()
    e = ctx.create_event()
    d = cuda.to_device(np.arange(5.0), stream=s)
    e.record(s)
    e.synchronize()
    np.testing.assert_array_equal(d.copy_to_host(stream=s), np.arange(5.0))
    for make in (ctx.get_default_stream, ctx.get_legacy_default_stream,
                 ctx.get_per_thread_default_stream):
        make().synchronize()
    assert ctx.create_external_stream(0).handle in (0, None)
    dev.reset()
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(5.0))
