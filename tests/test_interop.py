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
    with pytest.raises(ValueError, match="masked"):
        cuda.as_cuda_array(CAIObject(dict(good, mask=object()), dev))
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
