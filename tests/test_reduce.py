"""cuda.reduce / Reduce: Numba's semantics (init, size, res), every dtype, N-d and axis
reductions, any layout, device/CAI inputs, element order, errors, NVRTC builds."""

import functools
import zlib

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import _core, cuda

SIZES = [1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4097, 65537, 2**20 + 3]
DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64, np.complex64, np.complex128]


class CAIObject:
    """A foreign device array: only the interface dict."""

    def __init__(self, dev):
        self.__cuda_array_interface__ = dict(dev.__cuda_array_interface__)
        self.owner = dev


# Reducers are module-level so every parametrised case reuses the compiled kernels.
@cuda.reduce
def sum_reduce(a, b):
    return a + b


max_reduce = nu.reduce(lambda a, b: max(a, b))
# Associative, not commutative: any reordering of elements changes the result.
last_reduce = nu.Reduce(lambda a, b: b)


def random_array(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, dtype=dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def expected_sum(x, init, dtype):
    # NumPy's add in the array's dtype wraps integers and ORs booleans, like the operator.
    return np.add.reduce(x.ravel(), dtype=dtype, initial=np.asarray(init).astype(dtype))


def assert_close(got, want, dtype, n=1):
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        assert got == want
    else:
        rtol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-11
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.sqrt(n))


@pytest.mark.parametrize("n", SIZES)
def test_sum_sizes_int64_exact(n):
    x = np.random.default_rng(n).integers(-2**40, 2**40, size=n)
    got = sum_reduce(x)
    assert type(got) is np.int64 and got == int(x.sum())
    assert sum_reduce(x, init=12345) == int(x.sum()) + 12345


@pytest.mark.parametrize("n", SIZES)
def test_sum_sizes_float64(n):
    x = np.random.default_rng(n).random(n)
    assert_close(sum_reduce(x), x.sum(), np.float64, n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_on_host_and_device(dtype):
    rng = np.random.default_rng(7)
    x = random_array(5000, dtype, rng)
    got = sum_reduce(x, init=3 if np.dtype(dtype).kind != "b" else 1)
    assert type(got) is np.dtype(dtype).type
    want = expected_sum(x, 3 if np.dtype(dtype).kind != "b" else 1, dtype)
    assert_close(got, want, dtype, x.size)
    assert_close(sum_reduce(cuda.to_device(x), init=3 if np.dtype(dtype).kind != "b" else 1),
                 want, dtype, x.size)


def test_init_is_folded_exactly_once_first():
    x = np.arange(1, 10_001, dtype=np.int64)
    # Many blocks and a final pass: init must not be added per block.
    assert sum_reduce(x, init=1_000_000) == x.sum() + 1_000_000
    assert max_reduce(np.array([-5.0, -3.0]), init=-10.0) == -3.0
    assert max_reduce(np.array([-5.0, -3.0])) == 0.0  # Numba's default init=0 takes part
    assert last_reduce(np.array([4, 5, 6]), init=9) == 6
    assert nu.reduce(lambda a, b: a)(np.array([4, 5, 6]), init=9) == 9


def test_empty_returns_init_and_size():
    x = np.arange(100, dtype=np.float32)
    assert sum_reduce(x[:0]) == 0 and sum_reduce(x[:0], init=4.5) == 4.5
    assert sum_reduce(x, size=0, init=-1) == -1
    assert sum_reduce(x, size=10) == 45
    assert sum_reduce(x.reshape(10, 10), size=25) == x[:25].sum()
    assert sum_reduce(cuda.to_device(x), size=100) == x.sum()


def test_res_receives_result_on_device():
    x = np.arange(1000, dtype=np.int32)
    res = cuda.to_device(np.full(3, -7, dtype=np.int32))  # poisoned
    assert sum_reduce(cuda.to_device(x), res=res, init=5) is None
    np.testing.assert_array_equal(res.copy_to_host(), [x.sum() + 5, -7, -7])
    assert sum_reduce(x, res=res, size=0, init=11) is None  # empty: res gets init
    assert res.copy_to_host()[0] == 11
    sum_reduce(CAIObject(cuda.to_device(x[::-1])), res=CAIObject(res))
    assert res.copy_to_host()[0] == x.sum()


def test_nd_input_flatten_and_whole():
    arr = np.arange(48, dtype=np.float64).reshape(6, 8)
    assert sum_reduce(arr.flatten()) == arr.sum()
    assert sum_reduce(arr) == arr.sum()
    assert sum_reduce(cuda.to_device(arr)) == arr.sum()


RNG = np.random.default_rng(2024)
SHAPE_CASES = []
for _ in range(24):
    ndim = int(RNG.integers(1, 5))
    shape = tuple(int(s) for s in RNG.integers(1, 40, size=ndim))
    k = int(RNG.integers(0, ndim + 1))
    axes = tuple(sorted(int(a) for a in RNG.choice(ndim, size=k, replace=False)))
    SHAPE_CASES.append((shape, axes if len(axes) != 1 else axes[0]))
SHAPE_CASES += [((3, 2049), 0), ((2049, 3), 0), ((2, 3000), 1), ((1100, 5), 1), ((4, 0, 3), 1),
                ((5, 70000), 1), ((70000, 2), 0), ((0,), 0), ((2, 3, 4), ())]


@pytest.mark.parametrize("shape,axis", SHAPE_CASES)
def test_axes_match_numpy(shape, axis):
    rng = np.random.default_rng(zlib.crc32(repr((shape, axis)).encode()))
    x = rng.integers(-1000, 1000, size=shape).astype(np.int64)
    np.testing.assert_array_equal(sum_reduce(x, axis=axis), np.add.reduce(x, axis=axis))
    f = rng.standard_normal(shape)
    if 0 not in shape:
        got = max_reduce(f, axis=axis, init=-np.inf)
        np.testing.assert_array_equal(got, np.maximum.reduce(f, axis=axis))
    # Order: the last element along the folded axes (in C order) survives.
    if 0 not in shape and axis != ():
        ax = axis if isinstance(axis, tuple) else (axis,)
        moved = np.moveaxis(x, ax, tuple(range(x.ndim - len(ax), x.ndim)))
        want = moved.reshape(moved.shape[:x.ndim - len(ax)] + (-1,))[..., -1]
        np.testing.assert_array_equal(last_reduce(x, axis=axis), want)


def test_none_axis_full_reduction_of_nd_is_scalar():
    x = np.arange(60, dtype=np.int16).reshape(3, 4, 5)
    got = sum_reduce(x, axis=None)
    assert np.ndim(got) == 0 and got == x.sum(dtype=np.int16)


@pytest.mark.parametrize("view", [
    lambda a: a[::-1], lambda a: a[::3], lambda a: a.reshape(40, 50).T,
    lambda a: a.reshape(40, 50)[::2, 7:41:3], lambda a: a.reshape(10, 20, 10)[:, ::-2, 1::2],
])
def test_noncontiguous_inputs_read_in_place(view):
    x = view(np.random.default_rng(3).integers(-50, 50, size=2000))
    assert sum_reduce(x) == x.sum()
    assert sum_reduce(cuda.to_device(np.ascontiguousarray(x))) == x.sum()
    np.testing.assert_array_equal(last_reduce(x, axis=0), x[-1])
    dev = cuda.to_device(np.random.default_rng(4).integers(-50, 50, size=2000))
    dview = view(dev)
    assert sum_reduce(dview) == view(dev.copy_to_host()).sum()


def mulmod(a, b):
    return (a * b) % 1000003  # associative (multiplication modulo a prime), no overflow


def test_user_operator_matches_functools_reduce():
    r = nu.reduce(mulmod)
    rng = np.random.default_rng(9)
    for shape, axis in [((257,), None), ((6, 7), 1), ((6, 7, 5), (0, 2)), ((4, 3, 5), (2, 0))]:
        x = rng.integers(1, 1000, size=shape).astype(np.int64)
        axes = tuple(range(x.ndim)) if axis is None else tuple(sorted(np.atleast_1d(axis)))
        kept = [d for d in range(x.ndim) if d not in axes]
        rows = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [-1])
        want = np.apply_along_axis(lambda v: functools.reduce(mulmod, v.tolist(), 1), -1, rows)
        np.testing.assert_array_equal(r(x, axis=axis, init=1), want)


def compose_affine(a, b):
    # x -> hi * x + lo (mod 2**32), packed as hi << 32 | lo; the result is `b` after `a`.
    # Associative (composition of maps), not commutative: any reordering of the fold, or
    # of chunk partials, changes the result.
    ah = a >> 32
    al = a & 0xFFFFFFFF
    bh = b >> 32
    bl = b & 0xFFFFFFFF
    return (((ah * bh) & 0xFFFFFFFF) << 32) | ((al * bh + bl) & 0xFFFFFFFF)


compose_reduce = nu.reduce(compose_affine)


def _left_fold_columns(x, nred, init):
    """functools.reduce of compose_affine over the first `nred` axes (C order), per output,
    starting from `init` (cuda.reduce folds its init, 0 by default, in first)."""
    rows = np.ascontiguousarray(x).reshape((-1,) + x.shape[nred:])
    cols = rows.reshape(rows.shape[0], -1).T.tolist()
    want = [functools.reduce(compose_affine, c, init) for c in cols]
    return np.array(want, dtype=np.uint64).reshape(x.shape[nred:])


# Outer-axis reductions (outputs adjacent in memory) run the tiled columns kernel; the
# host backend runs its plan (chunks of the folded range, partials folded in order).
OUTER_CASES = [
    ((2000, 64), 0, lambda a: a),              # two tiles, several chunks
    ((3000, 100), 0, lambda a: a),             # a partial tile of outputs
    ((500, 7, 40), 0, lambda a: a),            # output dimensions coalesced
    ((40, 5000), 0, lambda a: a),              # many tiles, one chunk
    ((33, 32), 0, lambda a: a),                # the smallest tiled case
    ((128, 60, 50), (0, 1), lambda a: a[::2, :30, :]),   # two folded dimensions: the cursor
    ((3, 4, 200, 40), (0, 1, 2), lambda a: a[:, ::-1, ::3, :]),  # three, one reversed
]


@pytest.mark.parametrize("shape,axis,view", OUTER_CASES)
def test_outer_axis_reductions_keep_order(shape, axis, view):
    rng = np.random.default_rng(sum(shape))
    x = view(rng.integers(0, 2**64, size=shape, dtype=np.uint64))
    nred = len(axis) if isinstance(axis, tuple) else 1
    np.testing.assert_array_equal(compose_reduce(x, axis=axis), _left_fold_columns(x, nred, 0))
    init = (3 << 32) | 5  # a map that keeps the high half of the product alive
    np.testing.assert_array_equal(compose_reduce(x, axis=axis, init=init),
                                  _left_fold_columns(x, nred, init))


@pytest.mark.parametrize("shape,axis,view", OUTER_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_outer_axis_sums_match_numpy(shape, axis, view, dtype):
    x = view(random_array(shape, dtype, np.random.default_rng(len(shape))))
    got = sum_reduce(x, axis=axis)
    want = np.add.reduce(x.astype(np.float64) if dtype != np.int32 else x, axis=axis)
    n = x.size // want.size
    rtol = 1e-4 if dtype == np.float32 else 1e-11 if dtype == np.float64 else 0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.sqrt(n))
    dev = cuda.to_device(np.ascontiguousarray(x))
    np.testing.assert_allclose(sum_reduce(dev, axis=axis).copy_to_host(), want, rtol=rtol,
                               atol=rtol * np.sqrt(n))


def test_axis_results_live_with_the_input():
    x = np.arange(24.0).reshape(4, 6)
    d = sum_reduce(cuda.to_device(x), axis=0)
    assert isinstance(d, cuda.DeviceNDArray) and d.shape == (6,)
    np.testing.assert_array_equal(d.copy_to_host(), x.sum(axis=0))
    h = sum_reduce(x, axis=(1,))
    assert isinstance(h, np.ndarray) and h.dtype == x.dtype
    res = cuda.to_device(np.full(4, np.nan))
    assert sum_reduce(x, axis=1, res=res) is None
    np.testing.assert_array_equal(res.copy_to_host(), x.sum(axis=1))


def test_errors():
    with pytest.raises(TypeError, match=r"reduce\('three'\): the operator must take exactly two"):
        @nu.reduce
        def three(a, b, c):
            return a
    with pytest.raises(TypeError, match=r"exactly two positional arguments"):
        nu.reduce(lambda a: a)
    with pytest.raises(TypeError, match=r"expected a Python function"):
        nu.reduce(3)
    with pytest.raises(TypeError, match=r"numeric dtype \(got <U1\)"):
        sum_reduce(np.array(["a", "b"]))
    with pytest.raises(TypeError, match=r"numeric dtype \(got object\)"):
        sum_reduce(np.array([1, None], dtype=object))
    x = np.arange(12.0).reshape(3, 4)
    with pytest.raises(np.exceptions.AxisError, match=r"axis 2 is out of bounds"):
        sum_reduce(x, axis=2)
    with pytest.raises(ValueError, match=r"duplicate value in axis"):
        sum_reduce(x, axis=(0, -2))
    with pytest.raises(TypeError, match=r"axis must be None, an int or a tuple"):
        sum_reduce(x, axis=1.5)
    with pytest.raises(TypeError, match=r"sum_reduce\(\): res must be a device array \(got <class 'numpy.ndarray'>\)"):
        sum_reduce(x, res=np.zeros(1))
    with pytest.raises(TypeError, match=r"res must have the array's dtype float64 \(got float32\)"):
        sum_reduce(x, res=cuda.device_array(1, np.float32))
    with pytest.raises(ValueError, match=r"size must be between 0 and the array's 12 elements"):
        sum_reduce(x, size=13)
    with pytest.raises(TypeError, match=r"initial value must be a number"):
        sum_reduce(x, init="zero")


def test_repr_and_source():
    assert "sum_reduce" in repr(sum_reduce) and sum_reduce.__name__ == "sum_reduce"
    src = sum_reduce.inspect_cuda(np.float32)
    assert src.startswith('#include "reduce.cuh"') and src.count("NU_REDUCE_ENTRY(") == 1


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.bool_])
def test_kernels_compile_with_nvrtc(dtype):
    try:
        _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    src = max_reduce.inspect_cuda(dtype)
    ptx = _core.compile_ptx(src, (9, 0))  # no CUB: no include directory needed
    name = src.split("NU_REDUCE_ENTRY(")[1].split(",")[0]
    for suffix in ("_units_contig", "_units_strided", "_final", "_columns"):
        assert f".entry {name}{suffix}(" in ptx
    assert "shfl.sync" in ptx  # our warp reduction


@pytest.mark.gpu
def test_large_float32_sum_on_gpu():
    x = np.random.default_rng(0).random(2**26, dtype=np.float32)
    d = cuda.to_device(x)
    np.testing.assert_allclose(sum_reduce(d), x.sum(dtype=np.float64), rtol=1e-5)


@pytest.mark.gpu
def test_cupy_input_reduces_on_the_device():
    cp = pytest.importorskip("cupy")
    x = cp.arange(1, 1001, dtype=cp.int64)
    assert sum_reduce(x) == 500500
    rows = sum_reduce(x.reshape(10, 100), axis=1)
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(rows)), cp.asnumpy(x.reshape(10, 100).sum(axis=1)))
