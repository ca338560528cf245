"""DeviceNDArray's Numba attributes, device_array_like layouts, the array-interface import
(extent checks, v3 stream rules, from_cuda_array_interface) and IPC."""

import ctypes
import gc
import os
import pickle
import subprocess
import sys
import weakref

import numpy as np
import pytest
from conftest import HAVE_GPU

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CudaSupportError


def _dev(shape=(4, 6), dtype=np.float64, order="C"):
    host = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape, order=order)
    return host, cuda.to_device(host)


# ---------------------------------------------------------------- attributes

@pytest.mark.parametrize("index", [(), (slice(None), slice(None, None, 2)), (slice(1, 3),),
                                   (slice(None), 0)])
@pytest.mark.parametrize("order", ["C", "F"])
def test_flags_and_contiguity_match_numpy(index, order):
    host, d = _dev(order=order)
    h, v = host[index], d[index]
    assert v.flags == {"C_CONTIGUOUS": h.flags.c_contiguous, "F_CONTIGUOUS": h.flags.f_contiguous}
    assert v.is_contiguous() == (h.flags.c_contiguous or h.flags.f_contiguous)


def test_alloc_size_pointers_and_gpu_data():
    host, d = _dev()
    view = d[1:, ::2]
    assert d.alloc_size == view.alloc_size == host.nbytes
    assert isinstance(d.device_ctypes_pointer, ctypes.c_void_p)
    assert d.device_ctypes_pointer.value == d.device_pointer
    assert view.device_pointer == d.device_pointer + host.strides[0]
    gpu = view.gpu_data
    assert gpu.size == host.nbytes and gpu.device_pointer_value == d.device_pointer
    assert cuda.device_array(0).device_ctypes_pointer.value is None


def test_bind_changes_only_the_stream():
    host, d = _dev()
    s = cuda.stream()
    b = d.bind(s)
    assert b.stream == s and d.stream != s
    assert b.device_pointer == d.device_pointer and b.shape == d.shape
    np.testing.assert_array_equal(b.copy_to_host(), host)
    s.close()
    with pytest.raises(ValueError, match="stream was closed"):
        d.bind(s)


@pytest.mark.parametrize("src, dtype", [
    (np.arange(12, dtype=np.float64).reshape(3, 4), np.int64),
    (np.arange(12, dtype=np.float64).reshape(3, 4), np.float32),
    (np.arange(12, dtype=np.int32).reshape(3, 4), np.int64),
    (np.arange(12, dtype=np.int32).reshape(3, 4), np.uint8),
    (np.arange(12, dtype=np.complex128), np.float64),
    (np.arange(6, dtype=np.int16), np.uint16),
])
@pytest.mark.parametrize("reverse", [False, True])
def test_view_dtype_matches_numpy(src, dtype, reverse):
    d = cuda.to_device(src)
    if reverse:  # negative strides: same-size views only
        if np.dtype(dtype).itemsize != src.itemsize:
            return
        d, src = d[::-1], src[::-1]
    v = d.view(dtype)
    expected = src.view(dtype)
    assert (v.shape, v.strides, v.dtype) == (expected.shape, expected.strides, expected.dtype)
    np.testing.assert_array_equal(v.copy_to_host(), expected)


def test_view_dtype_errors():
    d = cuda.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    # NumPy's messages word for word (as numba-cuda's test_cuda_ndarray checks them).
    for bad in (np.zeros((3, 4), np.float32)[:, ::2], d[:, ::2]):
        with pytest.raises(ValueError, match="^To change to a dtype of a different size, the "
                                             "last axis must be contiguous$"):
            bad.view(np.float64)
    for bad in (np.zeros((3, 3), np.float32), d[:, :3]):
        with pytest.raises(ValueError, match=r"^When changing to a larger dtype, its size must "
                                             r"be a divisor of the total size in bytes of the "
                                             r"last axis of the array\.$"):
            bad.view(np.float64)
    with pytest.raises(ValueError, match="0-d"):
        d[0, 0:1].reshape(()).view(np.float64)
    with pytest.raises(TypeError):
        d.view("not a dtype")


@pytest.mark.parametrize("shape, axis", [((1, 3, 1, 2), None), ((1, 3, 1, 2), 0),
                                         ((1, 3, 1, 2), (0, 2)), ((1, 3, 1, 2), -2),
                                         ((1, 1), None), ((3,), None)])
def test_squeeze_matches_numpy(shape, axis):
    host = np.random.default_rng(0).random(shape)
    d = cuda.to_device(host)
    got = d.squeeze(axis)
    expected = host.squeeze(axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.copy_to_host(), expected)


def test_squeeze_errors_and_stream():
    d = cuda.device_array((1, 3))
    with pytest.raises(ValueError, match="size not equal to one"):
        d.squeeze(1)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        d.squeeze(2)
    with pytest.raises(TypeError, match="axis must be an int"):
        d.squeeze("0")
    s = cuda.stream()
    assert d.squeeze(stream=s).stream == s


def test_split_gives_views_of_sections():
    host = np.arange(10.0)
    d = cuda.to_device(host)
    parts = d.split(4)
    assert [p.shape for p in parts] == [(4,), (4,), (2,)]
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p.copy_to_host(), host[4 * i:4 * i + 4])
    parts[1][0] = -1.0  # views: writes reach the parent
    assert d.copy_to_host()[4] == -1.0
    strided = cuda.to_device(np.arange(12.0))[::3]
    np.testing.assert_array_equal(strided.split(3)[1].copy_to_host(), [9.0])
    with pytest.raises(ValueError, match="only 1-d arrays"):
        cuda.device_array((2, 2)).split(1)
    with pytest.raises(ValueError, match="section must be a positive integer"):
        d.split(0)
    assert d.split(20)[0].shape == (10,)


# ---------------------------------------------------------------- device_array_like

@pytest.mark.parametrize("make", [
    lambda: np.zeros((6, 8), order="F")[::2],          # a Fortran-ordered view (the bug)
    lambda: np.zeros((6, 8), order="F")[:, 1:5],
    lambda: np.zeros((4, 5, 6)).transpose(2, 0, 1),
    lambda: np.zeros((4, 5, 6))[:, ::2, 1:],
    lambda: np.zeros((3, 4), np.int16, order="F"),
    lambda: np.zeros((3, 1, 4)),
])
def test_device_array_like_follows_empty_like(make):
    src = make()
    like = cuda.device_array_like(src)
    expected = np.empty_like(src)
    assert (like.shape, like.dtype, like.strides) == (expected.shape, expected.dtype, expected.strides)
    from_device = cuda.device_array_like(cuda.to_device(np.ascontiguousarray(src)).T)
    assert from_device.strides == np.empty_like(np.ascontiguousarray(src).T).strides


# ---------------------------------------------------------------- audit defects

def test_huge_and_deep_shapes_get_typed_errors():
    with pytest.raises(ValueError, match=r"device_array\(\): shape entry 100000000000000000000 "
                                         r"exceeds the maximum allowed dimension"):
        cuda.device_array(10**20)
    with pytest.raises(ValueError, match="exceeds the maximum allowed dimension"):
        cuda.device_array((2, 10**20))
    with pytest.raises(ValueError, match="maximum supported dimension for an ndarray is 64"):
        cuda.device_array((1,) * 65)
    deep = cuda.device_array((1,) * 64)  # NumPy's limit itself is fine
    assert deep.copy_to_host().shape == (1,) * 64
    with pytest.raises(ValueError, match="maximum supported dimension"):
        deep.reshape((1,) * 65)
    with pytest.raises(ValueError, match="maximum supported dimension"):
        cuda.from_cuda_array_interface({"shape": (1,) * 65, "typestr": "<f8",
                                        "data": (deep.device_pointer, False), "version": 3})


def test_forall_with_huge_counts_is_a_typed_error():
    @cuda.jit
    def nothing(a):
        pass

    with pytest.raises(ValueError, match=r"forall\(\): ntasks must fit in int64"):
        nothing.forall(2**70)
    with pytest.raises(ValueError, match="tpb must be a non-negative integer"):
        nothing.forall(10, tpb=2**40)
    with pytest.raises(ValueError, match="ntasks must be a non-negative integer"):
        nothing.forall(-1)
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count"):
        nothing.forall(-1)  # Numba's words too


# ---------------------------------------------------------------- array interface import

def _iface(d, **changes):
    desc = dict(d.__cuda_array_interface__)
    desc.update(changes)
    return desc


def test_forged_interface_extent_is_checked_against_the_allocation():
    _, d = _dev((10,))
    ptr = d.device_pointer
    ok = cuda.from_cuda_array_interface(_iface(d, shape=(5,), data=(ptr + 40, False)))
    np.testing.assert_array_equal(ok.copy_to_host(), np.arange(5.0, 10.0))
    with pytest.raises(ValueError, match="past the end of its allocation"):
        cuda.from_cuda_array_interface(_iface(d, shape=(11,)))
    with pytest.raises(ValueError, match="past the end of its allocation"):
        cuda.from_cuda_array_interface(_iface(d, shape=(5,), data=(ptr + 48, False)))
    with pytest.raises(ValueError, match="past the end of its allocation"):
        cuda.from_cuda_array_interface(_iface(d, shape=(4, 4), strides=(24, 8)))
    # Negative strides: the extent reaches back from the pointer.
    back = cuda.from_cuda_array_interface(_iface(d, shape=(10,), strides=(-8,),
                                                 data=(ptr + 72, False)))
    np.testing.assert_array_equal(back.copy_to_host(), np.arange(9.0, -1.0, -1.0))
    with pytest.raises(ValueError, match="before the start of its allocation"):
        cuda.from_cuda_array_interface(_iface(d, shape=(10,), strides=(-8,),
                                              data=(ptr + 64, False)))
    with pytest.raises(ValueError, match="not device memory"):
        cuda.from_cuda_array_interface(_iface(d, data=(np.zeros(10).ctypes.data, False)))
    with pytest.raises(ValueError, match="data pointer must be a non-negative integer"):
        cuda.from_cuda_array_interface(_iface(d, data=(-5, False)))


def test_interface_stream_rules():
    _, d = _dev((4,))
    with pytest.raises(ValueError, match="stream 0 is disallowed"):
        cuda.from_cuda_array_interface(_iface(d, stream=0))
    with pytest.raises(ValueError, match="stream must be None or a stream handle"):
        cuda.from_cuda_array_interface(_iface(d, stream="s"))
    s = cuda.stream()
    for stream in (None, 1, 2, s.handle):
        a = cuda.from_cuda_array_interface(_iface(d, stream=stream))
        assert a.shape == (4,)
    assert cuda.from_cuda_array_interface(_iface(d, stream=s.handle), sync=False).shape == (4,)
    assert cuda.as_cuda_array(d, sync=False) is not None
    with pytest.raises(TypeError, match="desc must be a dict"):
        cuda.from_cuda_array_interface([1, 2])


def test_from_cuda_array_interface_keeps_the_owner_alive():
    class Owner:
        pass

    owner = Owner()
    ref = weakref.ref(owner)
    _, d = _dev((6,))
    a = cuda.from_cuda_array_interface(_iface(d), owner=owner)
    del owner
    gc.collect()
    assert ref() is not None
    del a
    gc.collect()
    assert ref() is None


def test_interface_sync_switch_from_environment():
    code = "from numbacuda_ufunc import cuda, _core; print(_core.cai_sync())"
    for value, expected in (("0", "False"), ("1", "True")):
        env = dict(os.environ, NUMBACUDA_UFUNC_CUDA_ARRAY_INTERFACE_SYNC=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.stdout.strip() == expected, out.stderr


# ---------------------------------------------------------------- IPC

# ipc_capable_memory (tests/conftest.py): on a GPU the default pool memory refuses IPC
# (test_pool_memory_refuses_ipc_with_advice)

def test_ipc_handle_round_trip_in_process(ipc_capable_memory):
    host, d = _dev((3, 4), np.float32)
    view = d[1:]
    handle = pickle.loads(pickle.dumps(view.get_ipc_handle()))
    with handle as shared:
        assert shared.shape == (2, 4) and shared.dtype == np.float32
        np.testing.assert_array_equal(shared.copy_to_host(), host[1:])
        shared[0, 0] = 100.0  # the same memory
    assert d.copy_to_host()[1, 0] == 100.0
    with pytest.raises(ValueError, match="not open"):
        handle.close()
    raw = d.get_ipc_handle()._ipc_handle
    with cuda.open_ipc_array(raw.handle, (4,), np.float32, offset=raw.offset + 16) as arr:
        np.testing.assert_array_equal(arr.copy_to_host(), d.copy_to_host().ravel()[4:8])
    with cuda.open_ipc_array(tuple(raw.handle), 12, np.float32) as arr:
        assert arr.shape == (12,)


def test_ipc_bad_input(ipc_capable_memory):
    _, d = _dev((4,))
    raw = d.get_ipc_handle()._ipc_handle
    with pytest.raises(ValueError, match="64 bytes"):
        with cuda.open_ipc_array(b"short", (4,), np.float64):
            pass
    with pytest.raises(TypeError, match="handle must be bytes"):
        with cuda.open_ipc_array(3.5, (4,), np.float64):
            pass
    with pytest.raises(ValueError, match="offset must be a non-negative integer"):
        with cuda.open_ipc_array(raw.handle, (4,), np.float64, offset=-8):
            pass
    with pytest.raises(ValueError, match="past the end of its allocation"):
        with cuda.open_ipc_array(raw.handle, (5,), np.float64):
            pass
    with pytest.raises(ValueError, match="empty array"):
        cuda.device_array(0).get_ipc_handle()


_CHILD = """
import pickle, sys
import numpy as np
from numbacuda_ufunc import cuda
handle = pickle.loads(sys.stdin.buffer.read())
with handle as arr:
    host = arr.copy_to_host()
    arr[0] = -1.0
    cuda.synchronize()  # the write lands before the mapping closes
print(host.sum())
"""


@pytest.mark.skipif(HAVE_GPU, reason="the host backend's refusal; the GPU test is below")
def test_ipc_between_processes_needs_a_gpu_on_the_host_backend():
    _, d = _dev((8,))
    out = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps(d.get_ipc_handle()),
                         capture_output=True, timeout=120)
    assert out.returncode != 0
    assert b"needs a real GPU" in out.stderr
    assert CudaSupportError.__name__.encode() in out.stderr


@pytest.mark.gpu
def test_pool_memory_refuses_ipc_with_advice():
    with pytest.raises(ValueError, match="IpcCapableMemoryManager"):
        cuda.to_device(np.arange(8.0)).get_ipc_handle()


@pytest.mark.gpu
def test_ipc_between_two_processes(ipc_capable_memory):
    host = np.arange(8.0)
    d = cuda.to_device(host)
    out = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps(d.get_ipc_handle()),
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == host.sum()
    assert d.copy_to_host()[0] == -1.0


def test_ipc_capable_manager_backs_arrays(ipc_capable_memory):
    host = np.arange(6.0)
    d = cuda.to_device(host)
    assert isinstance(cuda.current_context().memory_manager, cuda.IpcCapableMemoryManager)
    with d.get_ipc_handle() as shared:
        np.testing.assert_array_equal(shared.copy_to_host(), host)
