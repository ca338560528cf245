"""DeviceNDArray: transfers, views, shape operations and their errors."""

import zlib

import numpy as np
import pytest

from numbacuda_ufunc import cuda

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 0, 3), (2, 3, 4), (2, 1, 3, 2), (2, 2, 1, 3, 2),
          (1, 2, 2, 1, 3, 2)]


def random_array(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
def test_roundtrip_every_dtype_and_rank(dtype, shape, order):
    rng = np.random.default_rng(zlib.crc32(repr((str(dtype), shape, order)).encode()))
    host = np.asarray(random_array(shape, dtype, rng), order=order)
    dev = cuda.to_device(host)
    assert dev.shape == host.shape and dev.dtype == host.dtype
    if host.size:  # strides of empty arrays carry no meaning
        assert dev.strides == host.strides
    assert dev.size == host.size and dev.ndim == host.ndim and dev.nbytes == host.nbytes
    back = dev.copy_to_host()
    assert back.dtype == host.dtype
    np.testing.assert_array_equal(back, host)
    assert back.flags.f_contiguous == host.flags.f_contiguous


@pytest.mark.parametrize("dtype", [np.int16, np.float64, np.complex64], ids=str)
def test_roundtrip_of_sliced_host_views(dtype):
    rng = np.random.default_rng(1)
    base = random_array((6, 7, 5), dtype, rng)
    for view in (base[::2], base[:, ::-1], base[1:5, 2:, ::3], base.T, base[..., 1],
                 np.asfortranarray(base)[:, 1:3]):
        dev = cuda.to_device(view)
        np.testing.assert_array_equal(dev.copy_to_host(), view)


def test_copy_to_host_into_existing_array_of_any_layout():
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    dev = cuda.to_device(host)
    out = np.full((6, 4), np.nan, dtype=np.float32).T  # Fortran-ordered destination
    assert dev.copy_to_host(out) is out
    np.testing.assert_array_equal(out, host)
    target = np.full((8, 12), np.nan, dtype=np.float32)
    dev.copy_to_host(target[::2, ::2])
    np.testing.assert_array_equal(target[::2, ::2], host)
    assert np.isnan(target[1::2]).all()


@pytest.mark.parametrize("key", [
    (slice(None, None, -1),), (slice(1, None, 2), slice(None, None, -2)), (2,), (-1, 3),
    (Ellipsis, 1), (None, slice(1, 3)), (slice(None), None, 0), (slice(-100, 100),),
    (slice(5, 1),), (slice(None, None, -3), Ellipsis, slice(2, -1)), (1, Ellipsis),
])
def test_getitem_views_match_numpy(key):
    host = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6)
    dev = cuda.to_device(host)
    view = dev[key]
    expected = host[key]
    assert isinstance(view, cuda.DeviceNDArray)
    assert view.shape == expected.shape
    assert view.strides == expected.strides
    np.testing.assert_array_equal(view.copy_to_host(), expected)


def test_getitem_views_share_memory():
    dev = cuda.to_device(np.zeros((4, 4), np.float64))
    row = dev[1]
    row.copy_to_device(np.arange(4.0))
    col = dev[:, 2]
    col[:] = -1.0
    expected = np.zeros((4, 4))
    expected[1] = np.arange(4.0)
    expected[:, 2] = -1.0
    np.testing.assert_array_equal(dev.copy_to_host(), expected)


def test_full_integer_index_returns_numpy_scalar():
    host = np.arange(12, dtype=np.int16).reshape(3, 4)
    dev = cuda.to_device(host)
    value = dev[2, -1]
    assert value == 11 and isinstance(value, np.int16)


def test_setitem_broadcasts_scalars_and_rows():
    dev = cuda.to_device(np.zeros((3, 4), np.float32))
    dev[0] = 5
    dev[1:, ::2] = np.array([1.5, 2.5], np.float32)
    expected = np.zeros((3, 4), np.float32)
    expected[0] = 5
    expected[1:, ::2] = [1.5, 2.5]
    np.testing.assert_array_equal(dev.copy_to_host(), expected)


def test_copy_to_device_into_noncontiguous_view_keeps_neighbours():
    host = np.arange(20, dtype=np.int64).reshape(4, 5)
    dev = cuda.to_device(host)
    dev[::-2, 1::3].copy_to_device(np.full((2, 2), -7, np.int64))
    expected = host.copy()
    expected[::-2, 1::3] = -7
    np.testing.assert_array_equal(dev.copy_to_host(), expected)


def test_device_to_device_copies_any_layout():
    src = cuda.to_device(np.arange(12.0).reshape(3, 4))
    dst = cuda.device_array((4, 3))
    dst.copy_to_device(src.T)
    np.testing.assert_array_equal(dst.copy_to_host(), np.arange(12.0).reshape(3, 4).T)
    clone = cuda.to_device(src)
    assert clone is not src
    np.testing.assert_array_equal(clone.copy_to_host(), src.copy_to_host())


def test_reshape_ravel_transpose():
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    dev = cuda.to_device(host)
    np.testing.assert_array_equal(dev.reshape(6, 4).copy_to_host(), host.reshape(6, 4))
    np.testing.assert_array_equal(dev.reshape((4, -1)).copy_to_host(), host.reshape(4, -1))
    np.testing.assert_array_equal(dev.reshape(24, order="F").copy_to_host(),
                                  host.reshape(24, order="F"))
    np.testing.assert_array_equal(dev.ravel().copy_to_host(), host.ravel())
    np.testing.assert_array_equal(dev.T.copy_to_host(), host.T)
    np.testing.assert_array_equal(dev.transpose(1, 0, 2).copy_to_host(), host.transpose(1, 0, 2))
    # A non-contiguous view reshapes through a copy, as in NumPy.
    view = dev[:, ::-1, 1:3]
    np.testing.assert_array_equal(view.reshape(-1).copy_to_host(), host[:, ::-1, 1:3].reshape(-1))
    np.testing.assert_array_equal(view.ravel().copy_to_host(), host[:, ::-1, 1:3].ravel())


def test_contiguity_len_array_repr():
    host = np.zeros((3, 5), np.uint8)
    dev = cuda.to_device(host)
    assert dev.is_c_contiguous() and not dev.is_f_contiguous()
    assert dev.T.is_f_contiguous() and not dev.T.is_c_contiguous()
    assert not dev[:, ::2].is_c_contiguous()
    assert len(dev) == 3
    with pytest.raises(TypeError, match="unsized"):
        len(cuda.to_device(np.float32(1)))
    np.testing.assert_array_equal(np.asarray(dev), host)
    assert np.asarray(dev, dtype=np.float64).dtype == np.float64
    assert "shape=(3, 5)" in repr(dev) and "uint8" in repr(dev)
    assert [row.shape for row in dev] == [(5,)] * 3


def test_device_array_and_like_and_pinned():
    d = cuda.device_array((3, 2), dtype=np.int32, order="F")
    assert d.shape == (3, 2) and d.dtype == np.int32 and d.is_f_contiguous()
    assert cuda.device_array(5).dtype == np.float64
    like = cuda.device_array_like(np.zeros((2, 3), np.complex64, order="F"))
    assert like.shape == (2, 3) and like.dtype == np.complex64 and like.is_f_contiguous()
    like_dev = cuda.device_array_like(d)
    assert like_dev.shape == d.shape and like_dev.is_f_contiguous()
    pinned = cuda.pinned_array((4, 4), dtype=np.float32)
    pinned[:] = 3
    np.testing.assert_array_equal(cuda.to_device(pinned).copy_to_host(), pinned)
    explicit = cuda.device_array((2, 3), np.float64, strides=(8, 16))
    assert explicit.strides == (8, 16) and explicit.is_f_contiguous()


def test_to_device_with_to_and_non_native_and_lists():
    target = cuda.device_array((3,), np.float64)
    assert cuda.to_device(np.array([1.0, 2.0, 3.0]), to=target) is target
    np.testing.assert_array_equal(target.copy_to_host(), [1.0, 2.0, 3.0])
    swapped = np.arange(5, dtype=">i4")
    np.testing.assert_array_equal(cuda.to_device(swapped).copy_to_host(), np.arange(5))
    np.testing.assert_array_equal(cuda.to_device([[1, 2], [3, 4]]).copy_to_host(),
                                  [[1, 2], [3, 4]])


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("dtype,exc,match", [
    ("not-a-dtype", TypeError, "cannot interpret"),
    (object, TypeError, "unsupported dtype"),
    ("U", TypeError, "unsupported dtype"),  # no width (U4 and S4 arrays are fine)
    ("datetime64", TypeError, "unsupported dtype"),  # no unit
    (">M8[s]", TypeError, "unsupported dtype"),
])
def test_device_array_rejects_bad_dtypes(dtype, exc, match):
    with pytest.raises(exc, match=match):
        cuda.device_array(3, dtype=dtype)


def test_to_device_rejects_object_arrays():
    with pytest.raises(TypeError, match="unsupported dtype"):
        cuda.to_device(np.array([1, "a"], dtype=object))


@pytest.mark.parametrize("shape,exc,match", [
    ((-1, 3), ValueError, "negative dimensions"),
    (2.5, TypeError, "must be an int"),
    ((2, 1.5), TypeError, "must be integers"),
    ("3", TypeError, "must be an int"),
])
def test_device_array_rejects_bad_shapes(shape, exc, match):
    with pytest.raises(exc, match=match):
        cuda.device_array(shape)


def test_bad_order_and_strides():
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        cuda.device_array(3, order="K")
    with pytest.raises(ValueError, match="one entry per dimension"):
        cuda.device_array((2, 2), strides=(8,))


def test_copy_errors_name_shapes_and_dtypes():
    dev = cuda.device_array((3, 4), np.float32)
    with pytest.raises(ValueError, match=r"shape \(4, 3\).*\(3, 4\)"):
        dev.copy_to_host(np.empty((4, 3), np.float32))
    with pytest.raises(TypeError, match="float64.*float32"):
        dev.copy_to_host(np.empty((3, 4), np.float64))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty((3, 4), np.float32)
        ro.flags.writeable = False
        dev.copy_to_host(ro)
    with pytest.raises(TypeError, match="must be a NumPy array"):
        dev.copy_to_host([1, 2])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        dev.copy_to_device(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="dtype int64"):
        dev.copy_to_device(np.zeros((3, 4), np.int64))
    with pytest.raises(ValueError, match=r"source has shape \(3, 5\), the device array has \(3, 4\)"):
        dev.copy_to_device(cuda.device_array((3, 5), np.float32))


@pytest.mark.parametrize("key,exc,match", [
    ((0, 0, 0), IndexError, "too many indices"),
    (5, IndexError, "index 5 is out of bounds for axis 0 with size 3"),
    ((0, -5), IndexError, "index -5 is out of bounds for axis 1 with size 4"),
    ("a", IndexError, "valid indices"),
    (slice(None, None, 0), ValueError, "step cannot be zero"),
    (slice(1.5, None), TypeError, "slice indices must be integers"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
])
def test_getitem_errors(key, exc, match):
    dev = cuda.device_array((3, 4))
    with pytest.raises(exc, match=match):
        dev[key]


def test_reshape_errors():
    dev = cuda.device_array((3, 4))
    with pytest.raises(ValueError, match=r"cannot reshape array of size 12 into shape \(5, -1\)"):
        dev.reshape(5, -1)
    with pytest.raises(ValueError, match="one unknown dimension"):
        dev.reshape(-1, -1)
    with pytest.raises(ValueError, match="permutation"):
        dev.transpose(0, 0)


def test_array_copy_false_is_refused():
    dev = cuda.device_array(3)
    with pytest.raises(ValueError, match="without a copy"):
        dev.__array__(copy=False)
