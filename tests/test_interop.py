"""__cuda_array_interface__ (export and import), DLPack and CuPy interop."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda


class CAIObject:
    """A foreign producer: anything that exposes the interface dict."""

    def __init__(self, iface, owner=None):
        self.__cuda_array_interface__ = iface
        self.owner = owner


def test_export_is_version_3():
    dev = cuda.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    iface = dev.__cuda_array_interface__
    assert iface["version"] == 3 and iface["typestr"] == "<f4" and iface["shape"] == (3, 4)
    assert iface["strides"] is None and iface["data"] == (dev.device_pointer, False)
    assert "stream" in iface
    assert dev[:, ::2].__cuda_array_interface__["strides"] == (16, 8)


def test_import_round_trip_views_foreign_memory():
    dev = cuda.to_device(np.arange(20, dtype=np.int64).reshape(4, 5))
    foreign = CAIObject(dict(dev[::-1, 1:4].__cuda_array_interface__), owner=dev)
    assert cuda.is_cuda_array(foreign) and not cuda.is_cuda_array(np.zeros(2))
    view = cuda.as_cuda_array(foreign)
    np.testing.assert_array_equal(view.copy_to_host(), np.arange(20).reshape(4, 5)[::-1, 1:4])
    view[0] = 0  # writes land in the producer's memory
    assert (dev.copy_to_host()[3, 1:4] == 0).all()
    copied = cuda.to_device(foreign)
    np.testing.assert_array_equal(copied.copy_to_host(), view.copy_to_host())


def test_import_keeps_the_producer_alive():
    start = cuda.memory_stats()["in_use_bytes"]
    dev = cuda.to_device(np.arange(8.0))
    view = cuda.as_cuda_array(CAIObject(dict(dev.__cuda_array_interface__), owner=dev))
    del dev
    np.testing.assert_array_equal(view.copy_to_host(), np.arange(8.0))
    del view
    assert cuda.memory_stats()["in_use_bytes"] == start


def test_as_cuda_array_of_a_device_array_owns_its_memory():
    # numba-cuda's test_ownership, by our memory accounting: the view keeps the memory of
    # the array it was made from alive, and the last reference frees it at once (Numba
    # queues the free in its deallocation list; ours are stream-ordered and never wait).
    start = cuda.memory_stats()["in_use_bytes"]
    d_arr = cuda.to_device(np.arange(100))
    held = cuda.memory_stats()["in_use_bytes"]
    assert held >= start + 800
    cvted = cuda.as_cuda_array(d_arr)
    del d_arr
    assert cuda.memory_stats()["in_use_bytes"] == held
    np.testing.assert_equal(cvted.copy_to_host(), np.arange(100))
    np.testing.assert_equal(cvted[::-1].copy_to_host(), np.arange(100)[::-1])
    del cvted
    assert cuda.memory_stats()["in_use_bytes"] == start


@pytest.mark.parametrize("drop", ["shape", "typestr", "data", "version"])
def test_import_missing_key(drop):
    dev = cuda.device_array(4)
    iface = dict(dev.__cuda_array_interface__)
    del iface[drop]
    with pytest.raises(ValueError, match=f"lacks the required key '{drop}'"):
        cuda.as_cuda_array(CAIObject(iface, dev))


def test_import_rejects_host_pointers_and_bad_fields():
    host = np.zeros(4)
    iface = {"shape": (4,), "typestr": "<f8", "data": (host.ctypes.data, False), "version": 3}
    with pytest.raises(ValueError, match="is not device memory"):
        cuda.as_cuda_array(CAIObject(iface, host))
    dev = cuda.device_array(4)
    good = dict(dev.__cuda_array_interface__)
    with pytest.raises(TypeError, match="unsupported dtype"):
        cuda.as_cuda_array(CAIObject(dict(good, typestr="|O8"), dev))
    with pytest.raises(ValueError, match="data must be a"):
        cuda.as_cuda_array(CAIObject(dict(good, data=5), dev))
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.as_cuda_array(CAIObject(dict(good, mask=object()), dev))
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.from_cuda_array_interface(dict(good, mask=cuda.to_device(np.ones(4, bool))))
    cuda.as_cuda_array(CAIObject(dict(good, mask=None), dev))  # None: no mask
    with pytest.raises(ValueError, match="do not match shape"):
        cuda.as_cuda_array(CAIObject(dict(good, strides=(8, 8)), dev))
    with pytest.raises(TypeError, match="must be a dict"):
        cuda.as_cuda_array(CAIObject([1, 2], dev))


def test_dlpack_device_and_export():
    dev = cuda.to_device(np.arange(6, dtype=np.complex64).reshape(2, 3))
    kind, ordinal = dev.__dlpack_device__()
    if cuda.is_emulated():
        assert kind == 1  # kDLCPU: NumPy can consume it directly
        np.testing.assert_array_equal(np.from_dlpack(dev[:, ::2]),
                                      np.arange(6, dtype=np.complex64).reshape(2, 3)[:, ::2])
    else:
        assert kind == 2 and ordinal == cuda.get_current_device().id
    capsule = dev.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"


@pytest.mark.gpu
def test_cupy_arrays_round_trip():
    cp = pytest.importorskip("cupy")
    x = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    view = cuda.as_cuda_array(x[:, ::2])
    np.testing.assert_array_equal(view.copy_to_host(), cp.asnumpy(x[:, ::2]))
    ours = cuda.to_device(np.arange(5, dtype=np.int32))
    theirs = cp.asarray(ours)
    assert int(theirs.sum()) == 10
    from_dlpack = cp.from_dlpack(ours)
    assert int(from_dlpack[4]) == 4


# ---- CuPy results: built from the raw pointer, ordered with an event -------------------
# cupy.asarray(our_array) reads __cuda_array_interface__, whose stream makes CuPy
# synchronize from the host on every call. A stand-in `cupy` module records what the
# engine asks of CuPy, so this runs without CuPy or a GPU.

class _FakeCupy:
    def __init__(self, current_stream):
        import types

        self.log = []
        log = self.log
        fake = self

        class UnownedMemory:
            def __init__(self, ptr, size, owner, device_id=-1):
                self.ptr, self.size, self.owner = ptr, size, owner

        class MemoryPointer:
            def __init__(self, mem, offset):
                self.mem, self.offset = mem, offset

        class ndarray:  # noqa: N801 (CuPy's name)
            __module__ = "cupy._core.core"

            def __init__(self, shape, dtype=None, memptr=None, strides=None):
                self.shape, self.dtype, self.data, self.strides = shape, np.dtype(dtype), memptr, strides

        class Stream:
            def __init__(self, ptr):
                self.ptr = ptr

            def wait_event(self, ev):
                log.append(("wait", self.ptr, ev.recorded_on))

        class ExternalStream(Stream):
            pass

        class Event:
            def __init__(self, block=False, disable_timing=False):
                self.recorded_on = None

            def record(self, stream):
                self.recorded_on = stream.ptr

        def asarray(obj):
            log.append(("asarray",))
            raise AssertionError("the engine must not go through cupy.asarray")

        self.module = types.ModuleType("cupy")
        self.module.ndarray = ndarray
        self.module.asarray = asarray
        self.module.cuda = types.SimpleNamespace(
            UnownedMemory=UnownedMemory, MemoryPointer=MemoryPointer, Event=Event,
            ExternalStream=ExternalStream, get_current_stream=lambda: Stream(fake.current))
        self.current = current_stream


class _CupyInput:
    """A CuPy-typed input (the engine recognizes CuPy by the type's module)."""

    __module__ = "cupy._core.core"

    def __init__(self, dev):
        self.__cuda_array_interface__ = dict(dev.__cuda_array_interface__)
        self.owner = dev


def test_cupy_results_come_from_the_raw_pointer_with_an_event(monkeypatch):
    from numbacuda_ufunc import reduce, vectorize

    fake = _FakeCupy(current_stream=0)
    monkeypatch.setitem(__import__("sys").modules, "cupy", fake.module)

    @vectorize(["float64(float64, float64)"], target="cuda")
    def add(a, b):
        return a + b

    x = np.arange(12.0).reshape(3, 4)
    dev = cuda.to_device(x)
    out = add(_CupyInput(dev), 1.0)
    assert isinstance(out, fake.module.ndarray) and out.shape == (3, 4) and out.dtype == np.float64
    owner = out.data.mem.owner  # our result keeps the allocation alive
    np.testing.assert_array_equal(owner.copy_to_host(), x + 1)
    assert out.data.mem.ptr == owner.__cuda_array_interface__["data"][0] and out.data.offset == 0
    assert out.data.mem.size == owner.nbytes and out.strides == owner.strides
    assert fake.log == []  # same stream (the legacy default): nothing to order

    s = cuda.stream()
    fake.current = 0  # CuPy works on its null stream, we on `s`: an event orders them
    out2 = add(_CupyInput(dev), 2.0, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out2.data.mem.owner.copy_to_host(), x + 2)
    assert fake.log == [("wait", 0, int(s))]

    fake.log.clear()
    acc = add.accumulate(_CupyInput(dev), axis=1, stream=s)  # the Python-side methods too
    s.synchronize()
    assert isinstance(acc, fake.module.ndarray)
    np.testing.assert_array_equal(acc.data.mem.owner.copy_to_host(), np.cumsum(x, axis=1))
    assert fake.log == [("wait", 0, int(s))]

    r = reduce(lambda a, b: a + b)
    fake.log.clear()
    col = r(_CupyInput(dev), axis=0)
    assert isinstance(col, fake.module.ndarray)
    np.testing.assert_array_equal(col.data.mem.owner.copy_to_host(), x.sum(axis=0))


def test_default_stream_arrays_report_stream_zero():
    # Numba's arrays on the default stream say 0; code passes arr.stream on as stream=.
    dev = cuda.device_array(4)
    assert dev.stream == 0 and not dev.stream
    assert cuda.as_cuda_array(CAIObject(dict(dev.__cuda_array_interface__), dev)).stream == 0
    s = cuda.stream()
    on_s = cuda.device_array(4, stream=s)
    assert on_s.stream == s
    assert on_s.bind(0).stream == 0 and dev.bind(s).stream == s
    np.testing.assert_array_equal(cuda.to_device(np.arange(3.0), stream=dev.stream)
                                  .copy_to_host(stream=dev.stream), np.arange(3.0))


class _RaisingInterface:
    @property
    def __cuda_array_interface__(self):
        raise RuntimeError("the producer's driver call failed")


def test_an_error_inside_cuda_array_interface_propagates():
    # hasattr() swallowed it: the object became an object array and a misleading "unsupported
    # dtype" TypeError, without a cause (issue 35).
    import numbacuda_ufunc as nu

    f = nu.vectorize(["float64(float64, float64)"])(lambda a, b: a + b)
    with pytest.raises(RuntimeError, match="the producer's driver call failed"):
        f(_RaisingInterface(), 1.0)
    with pytest.raises(RuntimeError, match="the producer's driver call failed"):
        cuda.as_cuda_array(_RaisingInterface())
