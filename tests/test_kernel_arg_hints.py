"""Kernel argument hints (numba.cuda.args): cuda.In / cuda.Out / cuda.InOut on arrays and
record arrays, wrap_arg, custom ArgHint subclasses, their to_device() protocol, and
extensions appended to a kernel after it was made."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.cuda import args as cuda_args

_RECORD = np.dtype([("a", np.float64), ("b", np.int32)], align=True)


@cuda.jit
def _scale_and_mark(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i] * 2
        src[i] = -1


@cuda.jit
def _set_b(rec):
    i = cuda.grid(1)
    if i < rec.size:
        rec[i]["b"] = i + 3


def test_module_names_are_numbas():
    assert cuda.args is cuda_args
    assert cuda.In is cuda_args.In and cuda.Out is cuda_args.Out
    assert cuda.InOut is cuda_args.InOut
    assert set(cuda_args.__all__) == {"ArgHint", "In", "Out", "InOut", "wrap_arg"}
    for hint in (cuda.In, cuda.Out, cuda.InOut):
        assert issubclass(hint, cuda_args.ArgHint)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int16])
def test_in_out_inout_on_arrays(dtype):
    rng = np.random.default_rng(7)
    src = rng.integers(-50, 50, 33).astype(dtype)
    original = src.copy()
    dst = np.full(33, 99, dtype=dtype)  # poisoned: every element must be written
    _scale_and_mark[1, 64](cuda.In(src), cuda.Out(dst))
    np.testing.assert_array_equal(dst, (original * 2).astype(dtype))
    np.testing.assert_array_equal(src, original)  # In: the kernel's writes stay on the device
    dst2 = np.zeros(33, dtype=dtype)
    _scale_and_mark[1, 64](cuda.InOut(src), cuda.InOut(dst2))
    np.testing.assert_array_equal(src, np.full(33, -1, dtype=dtype))
    np.testing.assert_array_equal(dst2, (original * 2).astype(dtype))


def test_plain_host_array_is_inout():
    src = np.arange(5.0)
    dst = np.full(5, np.nan)
    _scale_and_mark[1, 8](src, dst)
    np.testing.assert_array_equal(dst, np.arange(5.0) * 2)
    np.testing.assert_array_equal(src, np.full(5, -1.0))


def test_hints_on_record_arrays():
    rec = np.zeros(4, dtype=_RECORD)
    rec["a"] = [1.5, -0.0, np.inf, np.nan]
    _set_b[1, 4](cuda.In(rec))
    np.testing.assert_array_equal(rec["b"], np.zeros(4))
    _set_b[1, 4](cuda.InOut(rec))
    np.testing.assert_array_equal(rec["b"], np.arange(4) + 3)
    np.testing.assert_array_equal(rec["a"], [1.5, -0.0, np.inf, np.nan])  # untouched
    rec2 = np.zeros(4, dtype=_RECORD)
    _set_b[1, 4](rec2)  # the default: copied back
    np.testing.assert_array_equal(rec2["b"], np.arange(4) + 3)


def test_hints_around_device_arrays_make_no_copies():
    d_src = cuda.to_device(np.arange(6.0))
    d_dst = cuda.device_array(6)
    _scale_and_mark[1, 8](cuda.In(d_src), cuda.Out(d_dst))
    np.testing.assert_array_equal(d_dst.copy_to_host(), np.arange(6.0) * 2)
    np.testing.assert_array_equal(d_src.copy_to_host(), np.full(6, -1.0))  # the same memory


def test_wrap_arg():
    a = np.arange(3)
    wrapped = cuda_args.wrap_arg(a)
    assert isinstance(wrapped, cuda.InOut) and wrapped.value is a
    assert isinstance(cuda_args.wrap_arg(a, default=cuda.In), cuda.In)
    hint = cuda.Out(a)
    assert cuda_args.wrap_arg(hint, default=cuda.In) is hint
    assert repr(cuda.In(a)) == f"cuda.In({a!r})"
    assert cuda.In(a)._numba_type_.ndim == 1


def test_to_device_protocol():
    host = np.arange(4.0)
    retr = []
    d = cuda.In(host).to_device(retr)
    np.testing.assert_array_equal(d.copy_to_host(), host)
    assert len(retr) == 1  # keeps the device copy alive; copies nothing back
    d[0:1] = np.array([50.0])
    for f in retr:
        f()
    assert host[0] == 0.0

    retr = []
    d = cuda.InOut(host).to_device(retr, stream=0)
    d[1:2] = np.array([60.0])
    for f in retr:
        f()
    assert host[1] == 60.0

    retr = []
    d = cuda.Out(host).to_device(retr)
    assert d.shape == host.shape and d.dtype == host.dtype
    d.copy_to_device(np.full(4, 7.0))
    for f in retr:
        f()
    np.testing.assert_array_equal(host, np.full(4, 7.0))

    retr = []
    dev = cuda.to_device(np.arange(3.0))
    assert cuda.InOut(dev).to_device(retr) is dev and retr == []  # already on the device


class _Negated(cuda_args.ArgHint):
    """A custom hint: the kernel gets the negated array; the caller's array receives the
    kernel's result negated back."""

    def to_device(self, retr, stream=0):
        d = cuda.to_device(-self.value, stream=stream)
        retr.append(lambda: np.copyto(self.value, -d.copy_to_host()))
        return d


def test_custom_arg_hint_subclass():
    src = np.arange(5.0)
    dst = np.full(5, np.nan)
    _scale_and_mark[1, 8](_Negated(src), cuda.Out(dst))
    np.testing.assert_array_equal(dst, -np.arange(5.0) * 2)
    np.testing.assert_array_equal(src, np.full(5, 1.0))  # -(-1): the write-back ran


def test_arg_hint_without_to_device_is_refused():
    class Bare(cuda_args.ArgHint):
        pass

    with pytest.raises(NotImplementedError, match="to_device"):
        _scale_and_mark[1, 8](Bare(np.zeros(3)), np.zeros(3))


class _DefaultIn:
    """Numba's extension idiom: host arrays are wrapped in cuda.In unless already hinted."""

    def prepare_args(self, ty, val, stream=0, retr=None):
        return ty, cuda_args.wrap_arg(val, default=cuda.In)


def test_extension_appended_after_creation():
    @cuda.jit
    def kernel(src, dst):
        i = cuda.grid(1)
        if i < src.size:
            dst[i] = src[i] * 2
            src[i] = -1

    src = np.arange(4.0)
    kernel[1, 4](src, np.zeros(4))
    np.testing.assert_array_equal(src, np.full(4, -1.0))  # no extension: copied back

    kernel.extensions.append(_DefaultIn())
    src = np.arange(4.0)
    dst = np.zeros(4)
    kernel[1, 4](src, cuda.InOut(dst))
    np.testing.assert_array_equal(src, np.arange(4.0))  # now In: not copied back
    np.testing.assert_array_equal(dst, np.arange(4.0) * 2)  # an explicit hint wins
    launch = kernel[1, 4]
    assert launch.griddim == (1, 1, 1) and launch.blockdim == (4, 1, 1)
    kernel.forall(4)(src, cuda.InOut(dst))
    np.testing.assert_array_equal(src, np.arange(4.0))

    kernel.extensions.clear()
    kernel[1, 4](src, dst)
    np.testing.assert_array_equal(src, np.full(4, -1.0))
