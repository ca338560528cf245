"""The "stream" entry of __cuda_array_interface__ (export, import, synchronization) and what
calls given foreign arrays return, as Numba documents them ("CUDA Array Interface")."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda, guvectorize, vectorize
from numbacuda_ufunc.cuda import config


class Foreign:
    """A producer that exports only the interface (as numba-cuda's tests' ForeignArray)."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


class CupyLike(Foreign):
    """An interface producer whose type lives in a ``cupy`` module: the engine treats it
    as CuPy's array when it decides what to return."""


CupyLike.__module__ = "cupy._fake"


@pytest.fixture
def sync_calls(monkeypatch):
    """Counts Stream.synchronize calls (the engine synchronizes producers through it)."""
    calls = []
    original = cuda.Stream.synchronize

    def counting(self):
        calls.append(int(self.handle))
        return original(self)

    monkeypatch.setattr(cuda.Stream, "synchronize", counting)
    return calls


@pytest.fixture
def interface_sync():
    saved = config.CUDA_ARRAY_INTERFACE_SYNC
    yield
    config.CUDA_ARRAY_INTERFACE_SYNC = saved


# ---------------------------------------------------------------- export


def test_export_stream_is_none_on_the_default_stream():
    assert cuda.device_array(10).__cuda_array_interface__["stream"] is None
    assert cuda.to_device(np.arange(3)).__cuda_array_interface__["stream"] is None
    assert cuda.mapped_array(10).__cuda_array_interface__["stream"] is None
    assert cuda.managed_array(10).__cuda_array_interface__["stream"] is None


def test_export_stream_is_the_arrays_stream_handle():
    s = cuda.stream()
    assert int(s.handle) != 0
    for arr in (cuda.device_array(10, stream=s), cuda.to_device(np.arange(4), stream=s),
                cuda.device_array(10).bind(s), cuda.mapped_array(10, stream=s),
                cuda.managed_array(10, stream=s)):
        assert arr.__cuda_array_interface__["stream"] == int(s.handle), type(arr)


def test_mapped_and_managed_arrays_keep_their_stream_in_views():
    s = cuda.stream()
    for make in (cuda.mapped_array, cuda.managed_array):
        arr = make((4, 6), np.float32, stream=s)
        assert arr.stream is s
        view = arr[1:, ::2]
        assert view.stream is s
        assert view.__cuda_array_interface__["stream"] == int(s.handle)
        assert make(3).stream == 0


@pytest.mark.parametrize("make", [cuda.mapped_array, cuda.managed_array])
def test_mapped_and_managed_arrays_refuse_a_bad_stream(make):
    with pytest.raises(TypeError, match=r"_array\(\): stream must be 0 or a CUDA stream"):
        make(4, stream="s")


# ---------------------------------------------------------------- import


def test_import_adopts_the_producers_stream():
    s = cuda.stream()
    foreign = Foreign(cuda.device_array(10, stream=s))
    view = cuda.as_cuda_array(foreign)
    assert view.stream.external
    assert int(view.stream.handle) == int(s.handle)
    # Re-exported, it names the same stream; copies on it still work.
    assert view.__cuda_array_interface__["stream"] == int(s.handle)
    view.copy_to_device(np.arange(10.0))
    np.testing.assert_array_equal(view.copy_to_host(), np.arange(10.0))
    desc = dict(foreign.__cuda_array_interface__)
    again = cuda.from_cuda_array_interface(desc, owner=foreign)
    assert again.stream.external and int(again.stream.handle) == int(s.handle)


def test_import_without_a_stream_uses_the_default_stream():
    view = cuda.as_cuda_array(Foreign(cuda.device_array(10)))
    assert view.stream == 0


def test_import_synchronizes_the_producers_stream_once(sync_calls):
    s = cuda.stream()
    foreign = Foreign(cuda.device_array(10, stream=s))
    cuda.as_cuda_array(foreign)
    assert sync_calls == [int(s.handle)]
    cuda.from_cuda_array_interface(dict(foreign.__cuda_array_interface__), owner=foreign)
    assert sync_calls == [int(s.handle)] * 2


def test_import_does_not_synchronize_without_reason(sync_calls, interface_sync):
    s = cuda.stream()
    cuda.as_cuda_array(Foreign(cuda.device_array(10)))            # no stream named
    cuda.as_cuda_array(Foreign(cuda.device_array(10, stream=s)), sync=False)
    holder = Foreign(cuda.device_array(10))   # keeps its array alive, so the pointer stays valid
    holder.__cuda_array_interface__ = dict(holder.__cuda_array_interface__, stream=1)
    assert cuda.as_cuda_array(holder).stream == 0  # the legacy stream is the default one
    config.CUDA_ARRAY_INTERFACE_SYNC = False
    cuda.as_cuda_array(Foreign(cuda.device_array(10, stream=s)))
    assert sync_calls == []


def test_kernel_launch_synchronizes_each_foreign_stream(sync_calls, interface_sync):
    @cuda.jit
    def add(x, y):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += y[i]

    s1, s2 = cuda.stream(), cuda.stream()
    x = cuda.to_device(np.arange(8.0), stream=s1)
    y = cuda.to_device(np.full(8, 0.5), stream=s2)
    add[1, 8](Foreign(x), Foreign(y))
    assert sorted(sync_calls) == sorted([int(s1.handle), int(s2.handle)])
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(8.0) + 0.5)
    sync_calls.clear()
    add[1, 8](Foreign(cuda.to_device(np.zeros(8))), Foreign(cuda.to_device(np.zeros(8))))
    assert sync_calls == []
    config.CUDA_ARRAY_INTERFACE_SYNC = False
    add[1, 8](Foreign(x), Foreign(y))
    assert sync_calls == []
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(8.0) + 1.0)


def test_ufunc_synchronizes_a_foreign_inputs_stream(sync_calls):
    @vectorize(["f8(f8, f8)"], target="cuda")
    def add(a, b):
        return a + b

    s = cuda.stream()
    h = np.linspace(-1, 1, 9)
    got = add(Foreign(cuda.to_device(h, stream=s)), 2.0)
    assert sync_calls == [int(s.handle)]
    np.testing.assert_array_equal(got.copy_to_host(), h + 2.0)


# ---------------------------------------------------------------- what calls return


@vectorize(["f8(f8, f8)", "f4(f4, f4)"], target="cuda")
def _vadd(a, b):
    return a + b


@guvectorize(["(f8, f8, f8[:])"], "(),()->()", target="cuda")
def _gadd(a, b, out):
    out[0] = a + b


def test_ufunc_foreign_input_gives_a_device_array():
    h = np.array([0.0, -0.0, np.inf, np.nan, 1e308, -5.5])
    got = _vadd(Foreign(cuda.to_device(h)), 6)
    assert isinstance(got, cuda.DeviceNDArray)
    np.testing.assert_array_equal(got.copy_to_host(), h + 6)


@pytest.mark.parametrize("call", ["ufunc", "ufunc_keywords", "gufunc"])
def test_foreign_out_returns_its_device_view(call):
    h = np.random.default_rng(1).random(10)
    target = cuda.to_device(np.full(10, np.nan))  # poisoned
    out = Foreign(target)
    if call == "ufunc":
        returned = _vadd(h, 7.0, out=out)
    elif call == "ufunc_keywords":
        returned = _vadd(h, 7.0, out=out, where=np.ones(10, bool))
    else:
        returned = _gadd(h, np.float64(7), out=out)
    assert isinstance(returned, cuda.DeviceNDArray)
    assert returned.device_ctypes_pointer.value == target.device_ctypes_pointer.value
    np.testing.assert_array_equal(returned.copy_to_host(), h + 7.0)
    np.testing.assert_array_equal(target.copy_to_host(), h + 7.0)


def test_gufunc_foreign_outputs_positional():
    h = np.arange(5.0)
    target = cuda.to_device(np.full(5, np.nan))
    returned = _gadd(h, np.float64(-1), Foreign(target))
    assert isinstance(returned, cuda.DeviceNDArray)
    np.testing.assert_array_equal(target.copy_to_host(), h - 1)


def test_out_that_has_an_api_is_returned_itself():
    h = np.arange(6, dtype=np.float32)
    mapped = cuda.mapped_array(6, np.float32)
    mapped[:] = np.nan
    assert _vadd(h, np.float32(1), out=mapped) is mapped
    np.testing.assert_array_equal(mapped, h + 1)
    dev = cuda.device_array(6, np.float32)
    assert _vadd(h, np.float32(1), out=dev) is dev
    cupy_like = CupyLike(cuda.device_array(6, np.float32))
    assert _vadd(h, np.float32(2), out=cupy_like) is cupy_like
    np.testing.assert_array_equal(cupy_like._arr.copy_to_host(), h + 2)


# ---------------------------------------------------------------- record dtypes


def test_aligned_and_packed_records_are_different_types():
    packed = np.dtype([("x", np.float16), ("y", np.float16)])
    aligned = np.dtype([("x", np.float16), ("y", np.float16)], align=True)
    assert packed == aligned  # NumPy's view; Numba's record types differ

    @cuda.jit
    def first(rec, out):
        out[0] = rec[0].x + rec[0].y

    @cuda.jit
    def second(rec, out):
        out[0] = rec[0].x + rec[0].y

    out = cuda.to_device(np.full(1, np.nan, np.float32))
    a = np.zeros(1, packed)
    a[0] = (1.5, 2.25)
    b = np.zeros(1, aligned)
    b[0] = (-3.0, 0.5)
    first[1, 1](cuda.to_device(a), out)
    assert out.copy_to_host()[0] == 3.75
    second[1, 1](cuda.to_device(b), out)
    assert out.copy_to_host()[0] == -2.5
    assert first.signatures[0] != second.signatures[0]
    assert cuda.to_device(b).dtype.isalignedstruct and not cuda.to_device(a).dtype.isalignedstruct
    # One kernel given both: two specializations, each right.
    first[1, 1](cuda.to_device(b), out)
    assert out.copy_to_host()[0] == -2.5 and len(first.signatures) == 2


# ---------------------------------------------------------------- a real device


@pytest.mark.gpu
def test_import_waits_for_the_producers_work_on_gpu():
    @cuda.jit
    def churn(a, v):
        i = cuda.grid(1)
        if i < a.size:
            for _ in range(20000):
                a[i] = a[i] * 0.5 + v

    s = cuda.stream()
    n = 1 << 20
    dev = cuda.to_device(np.zeros(n), stream=s)
    churn[n // 256, 256, s](dev, 1.0)
    view = cuda.as_cuda_array(Foreign(dev))
    assert s.query()  # the import returned only once the producer's stream was idle
    np.testing.assert_allclose(view.copy_to_host(), 2.0)
