"""Numba's memory API beyond device arrays: mapped, managed and pinned host memory,
deferred cleanup, External Memory Management plugins, contexts, gpus, the profiler."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from numbacuda_ufunc import cuda, vectorize


@vectorize(["float32(float32)", "float64(float64)"])
def _twice_plus_one(x):
    return x * 2 + 1


@cuda.jit
def _add_index(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += i


# ---------------------------------------------------------------- mapped and managed memory

@pytest.mark.parametrize("make", [cuda.mapped_array, cuda.managed_array])
@pytest.mark.parametrize("order", ["C", "F"])
def test_device_visible_arrays_have_numpy_layout(make, order):
    a = make((3, 5), dtype=np.float32, order=order)
    ref = np.empty((3, 5), np.float32, order=order)
    assert isinstance(a, np.ndarray)
    assert (a.shape, a.dtype, a.strides) == (ref.shape, ref.dtype, ref.strides)
    iface = a.__cuda_array_interface__
    assert iface["shape"] == (3, 5) and iface["typestr"] == "<f4" and iface["version"] == 3
    if cuda.is_emulated():
        assert iface["data"][0] == a.ctypes.data


@pytest.mark.parametrize("make", [cuda.mapped_array, cuda.managed_array])
def test_kernels_and_ufuncs_use_device_visible_memory_in_place(make):
    a = make(1000, dtype=np.float64)
    a[:] = np.linspace(-3, 3, 1000)
    expected = a * 2 + 1
    result = _twice_plus_one(a)  # a device array: the input was used where it is
    assert isinstance(result, cuda.DeviceNDArray)
    np.testing.assert_array_equal(result.copy_to_host(), expected)
    assert _twice_plus_one(a, out=a) is a  # written in place, no copy back needed
    cuda.synchronize()  # the launch is asynchronous, as in Numba: the host reads after it
    np.testing.assert_array_equal(np.asarray(a), expected)
    before = np.array(a)
    _add_index[4, 256](a)
    cuda.synchronize()
    np.testing.assert_array_equal(np.asarray(a), before + np.arange(1000))


def test_mapped_array_strides_and_like_follow_numpy():
    a = cuda.mapped_array((4, 6), dtype=np.int16, strides=(2, 8))
    assert a.strides == (2, 8) and a.shape == (4, 6)
    src = np.zeros((6, 8), order="F")[::2]
    like = cuda.mapped_array_like(src)
    assert isinstance(like, cuda.MappedNDArray)
    assert like.strides == np.empty_like(src).strides and like.dtype == src.dtype


def test_pinned_array_like_follows_numpy_layout():
    for src in (np.zeros((3, 4), np.int32), np.zeros((3, 4), np.complex64, order="F"),
                np.zeros((5, 6, 7))[:, ::2].transpose(2, 0, 1)):
        p = cuda.pinned_array_like(src)
        assert (p.shape, p.dtype, p.strides) == (src.shape, src.dtype, np.empty_like(src).strides)
        p[...] = 7
        assert (p == 7).all()


def test_numpy_results_of_device_visible_arrays_are_plain_arrays():
    a = cuda.mapped_array(8, dtype=np.float32)
    a[:] = 1
    b = a + 1  # new NumPy memory: not device visible, so a plain ndarray
    assert type(b) is np.ndarray
    assert type(a[2:]) is cuda.MappedNDArray  # a view stays in mapped memory
    np.testing.assert_array_equal(_twice_plus_one(a[2:]).copy_to_host(), np.full(6, 3, np.float32))


@pytest.mark.parametrize("make", [cuda.mapped_array, cuda.managed_array])
def test_device_visible_arrays_bad_input(make):
    with pytest.raises(ValueError, match="negative dimensions"):
        make((2, -1))
    with pytest.raises(TypeError, match="unsupported dtype"):
        make(3, dtype=object)
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        make(3, order="K")
    with pytest.raises(ValueError, match="strides must have one entry per dimension"):
        make((2, 2), strides=(8,))
    with pytest.raises(ValueError, match="maximum allowed dimension"):
        make(10**20)


def test_managed_array_larger_than_free_memory_is_refused():
    free, total = cuda.current_context().get_memory_info()
    with pytest.raises(MemoryError, match="managed_array"):
        cuda.managed_array(total // 8 + 1024, dtype=np.float64)
    ok = cuda.managed_array(10)  # and the next one works
    ok[:] = 1
    assert ok.sum() == 10


# ---------------------------------------------------------------- pinned() and mapped()

def test_pinned_context_manager_pins_for_the_block():
    host = np.arange(100.0)
    other = np.ones((4, 4), np.int32)
    with cuda.pinned(host, other, host):  # the same array twice is fine
        d = cuda.to_device(host)
        d2 = cuda.to_device(other)
        back = np.empty_like(host)
        d.copy_to_host(back)
    np.testing.assert_array_equal(back, host)
    np.testing.assert_array_equal(d2.copy_to_host(), other)
    with cuda.pinned(host):  # pinning again after the block works
        pass
    with pytest.raises(TypeError, match="argument 1 must be a NumPy array"):
        with cuda.pinned([1, 2, 3]):
            pass


def test_mapped_context_manager_yields_device_views_of_host_memory():
    a = np.zeros(64)
    b = np.arange(10, dtype=np.int64)
    with cuda.mapped(a) as da:
        assert isinstance(da, cuda.DeviceNDArray) and da.shape == a.shape
        _add_index[1, 64](da)
        cuda.synchronize()
    np.testing.assert_array_equal(a, np.arange(64.0))  # written in place by the kernel
    with cuda.mapped(a, b, stream=0, portable=True) as views:
        assert isinstance(views, list) and len(views) == 2
        np.testing.assert_array_equal(views[1].copy_to_host(), b)
    with pytest.raises(TypeError, match="must be a NumPy array"):
        with cuda.mapped(cuda.device_array(3)):
            pass


# ---------------------------------------------------------------- deferred cleanup

def test_defer_cleanup_holds_frees_until_the_block_ends():
    ctx = cuda.current_context()
    start = cuda.memory_stats()
    assert len(ctx.deallocations) == 0 and not ctx.deallocations.is_disabled
    with cuda.defer_cleanup():
        assert ctx.deallocations.is_disabled
        for _ in range(5):
            cuda.device_array(1000)
        with cuda.defer_cleanup():  # nested: only the outer block's end frees
            cuda.device_array(10)
        assert len(ctx.deallocations) == 6
        ctx.deallocations.clear()  # no effect while disabled, as in Numba
        assert len(ctx.deallocations) == 6
        assert cuda.memory_stats()["allocations"] == start["allocations"] + 6
    assert len(ctx.deallocations) == 0
    assert cuda.memory_stats()["in_use_bytes"] == start["in_use_bytes"]


def test_defer_cleanup_ends_on_error():
    with pytest.raises(KeyError):
        with cuda.defer_cleanup():
            cuda.device_array(3)
            raise KeyError("x")
    assert len(cuda.current_context().deallocations) == 0
    assert not cuda.current_context().deallocations.is_disabled


# ---------------------------------------------------------------- EMM plugins

class CountingManager(cuda.GetIpcHandleMixin, cuda.HostOnlyCUDAMemoryManager):
    """A plugin of our own: memory from the built-in pool, counted."""

    allocations = 0
    bytes_requested = 0
    live = 0
    fail_next = False

    def initialize(self):
        self._inner = cuda.NumbaCudaUfuncMemoryManager(context=self.context)

    def memalloc(self, size):
        cls = type(self)
        if cls.fail_next:
            cls.fail_next = False
            raise MemoryError("plugin pool exhausted")
        inner = self._inner.memalloc(size)
        cls.allocations += 1
        cls.bytes_requested += size
        cls.live += 1

        def finalizer():
            cls.live -= 1
            inner.free()
        return cuda.MemoryPointer(self.context, inner.device_pointer, size, owner=inner,
                                  finalizer=finalizer)

    def get_memory_info(self):
        return cuda.MemoryInfo(free=123, total=456)

    @property
    def interface_version(self):
        return 1


@pytest.fixture
def counting_manager():
    CountingManager.allocations = CountingManager.bytes_requested = CountingManager.live = 0
    cuda.set_memory_manager(CountingManager)
    try:
        yield CountingManager
    finally:
        cuda.set_memory_manager(None)


def test_emm_plugin_backs_every_device_allocation(counting_manager):
    d = cuda.device_array((10, 10), dtype=np.float32)
    assert counting_manager.allocations == 1 and counting_manager.bytes_requested == 400
    assert cuda.current_context().get_memory_info() == (123, 456)
    assert d.gpu_data.size == 400
    host = np.linspace(0, 1, 200_000)
    dev = cuda.to_device(host)
    n = counting_manager.allocations
    out = _twice_plus_one(dev)  # ufunc output
    assert counting_manager.allocations == n + 1
    np.testing.assert_array_equal(out.copy_to_host(), host * 2 + 1)

    @cuda.reduce
    def total(a, b):
        return a + b

    n = counting_manager.allocations
    result = total(dev)  # long enough for a multi-pass reduction: its scratch is the plugin's
    assert counting_manager.allocations > n
    np.testing.assert_allclose(result, host.sum(), rtol=1e-12)
    del d, dev, out
    assert counting_manager.live == 0  # every allocation went back to the plugin


def test_emm_plugin_errors_are_typed(counting_manager):
    counting_manager.fail_next = True
    with pytest.raises(MemoryError, match="plugin pool exhausted"):
        cuda.device_array(10)
    assert cuda.device_array(10).shape == (10,)  # the next one works


def test_emm_plugin_returning_garbage_is_refused():
    class Broken(CountingManager):
        def memalloc(self, size):
            return object()

    class Short(CountingManager):
        def memalloc(self, size):
            raw = self._inner.memalloc(size)
            return cuda.MemoryPointer(self.context, raw.device_pointer, size // 2, owner=raw)

    for cls, message in ((Broken, "device_pointer"), (Short, "returned only")):
        cuda.set_memory_manager(cls)
        try:
            with pytest.raises((TypeError, ValueError), match=message):
                cuda.device_array(16)
        finally:
            cuda.set_memory_manager(None)


def test_set_memory_manager_bad_input():
    with pytest.raises(TypeError, match="mm_plugin must be a memory manager class"):
        cuda.set_memory_manager(CountingManager(context=cuda.current_context()))

    class Future(CountingManager):
        @property
        def interface_version(self):
            return 2

    with pytest.raises(RuntimeError, match="interface version 2"):
        cuda.set_memory_manager(Future)
    with pytest.raises(RuntimeError, match="requires a context"):
        CountingManager()
    with pytest.raises(TypeError, match="abstract"):
        cuda.BaseCUDAMemoryManager(context=cuda.current_context())


def test_memory_pointer_classes():
    freed = []
    mp = cuda.MemoryPointer(None, 0x1000, 64, owner="o", finalizer=lambda: freed.append(1))
    assert mp.device_pointer_value == 0x1000 and mp.size == 64 and mp.owner == "o"
    mp.free()
    mp.free()
    assert freed == [1]
    with pytest.raises(ValueError, match="size must be a non-negative integer"):
        cuda.MemoryPointer(None, 0, -1)
    with pytest.raises(TypeError, match="pointer must be an integer"):
        cuda.MemoryPointer(None, "x", 1)
    mgr = cuda.NumbaCudaUfuncMemoryManager(context=cuda.current_context())
    mapped = mgr.memhostalloc(256, mapped=True)
    assert isinstance(mapped, cuda.MappedMemory) and mapped.size == 256
    pinned = mgr.memhostalloc(128)
    assert isinstance(pinned, cuda.PinnedMemory) and pinned.host_pointer.value
    host = np.zeros(32)
    pin = mgr.mempin(host, host.ctypes.data, host.nbytes, mapped=True)
    assert isinstance(pin, cuda.MappedMemory)
    pin.free()
    info = mgr.get_memory_info()
    assert isinstance(info, cuda.MemoryInfo) and 0 < info.free <= info.total


def test_memory_manager_from_environment(tmp_path):
    (tmp_path / "counting_plugin.py").write_text(textwrap.dedent("""
        from numbacuda_ufunc import cuda

        class Counting(cuda.NumbaCudaUfuncMemoryManager):
            count = 0

            def memalloc(self, size):
                type(self).count += 1
                return super().memalloc(size)

        _numba_memory_manager = Counting
    """))
    script = ("from numbacuda_ufunc import cuda\nimport counting_plugin\n"
              "cuda.device_array(5); cuda.to_device([1.0, 2.0])\n"
              "print(counting_plugin.Counting.count)\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               NUMBACUDA_UFUNC_MEMORY_MANAGER="counting_plugin")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "2"
    env["NUMBACUDA_UFUNC_MEMORY_MANAGER"] = "no_such_plugin_module"
    out = subprocess.run([sys.executable, "-c", "from numbacuda_ufunc import cuda"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "cannot import module 'no_such_plugin_module'" in out.stderr


# ---------------------------------------------------------------- contexts, gpus, profiler

def test_context_memory_info_reset_and_close():
    ctx = cuda.current_context()
    assert ctx is cuda.current_context()
    info = ctx.get_memory_info()
    assert isinstance(info, cuda.MemoryInfo) and 0 < info.free <= info.total
    keep = cuda.to_device(np.arange(10.0))
    ctx.reset()
    cuda.close()
    np.testing.assert_array_equal(keep.copy_to_host(), np.arange(10.0))  # still valid
    assert cuda.to_device(np.ones(3)).copy_to_host().sum() == 3  # and work goes on


def test_gpus_list_and_device_context():
    assert len(cuda.gpus) == len(cuda.list_devices()) >= 1
    first = cuda.gpus[0]
    assert first.id == 0 and first.name == cuda.get_current_device().name
    assert [g.id for g in cuda.gpus] == list(range(len(cuda.gpus)))
    with cuda.gpus[0] as dev:
        assert dev.id == 0 and cuda.gpus.current.id == 0
    with pytest.raises(IndexError, match="no such device"):
        cuda.gpus[len(cuda.gpus)]
    with pytest.raises(TypeError, match="index must be an integer"):
        cuda.gpus["0"]


def test_profiler_calls():
    cuda.profile_start()
    cuda.profile_stop()
    with cuda.profiling():
        cuda.to_device(np.ones(4))
