"""ufunc.accumulate, reduceat, at and outer on NumPy and device arrays; NumPy's own ufunc
with the same arguments is the oracle."""

import re

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda, vectorize
from numbacuda_ufunc._methods import _engine

RNG = np.random.default_rng(11)
TYPES = ["int8(int8, int8)", "int32(int32, int32)", "int64(int64, int64)",
         "uint8(uint8, uint8)", "float32(float32, float32)", "float64(float64, float64)",
         "complex128(complex128, complex128)"]


def add_fn(a, b):
    return a + b


def mul_fn(a, b):
    return a * b


def max_fn(a, b):
    return a if a >= b else b


def sub_fn(a, b):   # not associative: the in-order plans still fold left to right
    return a - b


add = vectorize(TYPES, identity=0)(add_fn)
multiply = vectorize(TYPES, identity=1)(mul_fn)
subtract = vectorize(TYPES)(sub_fn)
maximum = vectorize(["int64(int64, int64)", "float64(float64, float64)"])(max_fn)
PAIRS = [(add, np.add), (multiply, np.multiply), (subtract, np.subtract)]


def host(x):
    return x.copy_to_host() if isinstance(x, cuda.DeviceNDArray) else np.asarray(x)


def data(shape, dtype):
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        x = RNG.integers(max(info.min, -50), min(info.max, 50), size=shape, endpoint=True)
        x.flat[:2] = [info.min, info.max][: x.size]  # wrap-around at the limits
        return x.astype(dtype)
    x = RNG.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x


def close(got, expected):
    assert host(got).dtype == expected.dtype
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(host(got), expected, rtol=1e-5 if expected.dtype.itemsize <= 8
                                   else 1e-12, atol=1e-5)
    else:
        np.testing.assert_array_equal(host(got), expected)


# ---------------------------------------------------------------- accumulate

@pytest.mark.parametrize("ours,theirs", PAIRS)
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.float64, np.complex128])
@pytest.mark.parametrize("device", [False, True])
def test_accumulate_1d_like_numpy(ours, theirs, dtype, device):
    # > 256: the block-scan plan on a GPU, which regroups the operations, so it is valid
    # for associative functions only (README); subtract keeps to the in-order plan there.
    real_gpu = not _core.emulation_enabled()
    x = data(200 if real_gpu and ours is subtract else 300, dtype)
    got = ours.accumulate(cuda.to_device(x) if device else x)
    assert isinstance(got, cuda.DeviceNDArray) == device
    close(got, theirs.accumulate(x, dtype=dtype))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("device", [False, True])
def test_accumulate_axes_and_layouts(axis, layout, device):
    x = data((4, 5, 6), np.float64)
    if layout == "F":
        x = np.asfortranarray(x)
    elif layout == "strided":
        x = data((8, 5, 12), np.float64)[::2, ::-1, ::2]
    got = subtract.accumulate(cuda.to_device(x) if device else x, axis=axis)
    close(got, np.subtract.accumulate(x, axis=axis))


@pytest.mark.parametrize("device", [False, True])
def test_accumulate_dtype_and_out(device):
    x = data((3, 7), np.int8)
    expected = np.add.accumulate(x, axis=1, dtype=np.int64)
    close(add.accumulate(x, axis=1, dtype=np.int64), expected)
    out = np.full((3, 7), -99, np.int64)
    dout = cuda.to_device(out) if device else out
    assert add.accumulate(x, axis=1, dtype=np.int64, out=dout) is dout
    close(dout, expected)
    fout = np.full((3, 7), np.nan)                  # same_kind cast of the int64 result
    add.accumulate(x, axis=1, dtype=np.int64, out=(fout,))
    np.testing.assert_array_equal(fout, expected.astype(np.float64))


def test_accumulate_edge_values_and_empty():
    x = np.array([1.0, np.inf, -np.inf, np.nan, -0.0, 1e308, 1e308])
    with np.errstate(invalid="ignore", over="ignore"):
        close(add.accumulate(x), np.add.accumulate(x))
    close(maximum.accumulate(x), _left_fold_scan(max_fn, x))  # the Python function
    assert add.accumulate(np.zeros((0, 3))).shape == (0, 3)
    assert add.accumulate(np.zeros((2, 0)), axis=0).shape == (2, 0)


def _left_fold_scan(fn, x):
    out, acc = [], None
    for v in x:
        acc = v if acc is None else fn(acc, v)
        out.append(acc)
    return np.array(out)


def test_accumulate_errors():
    with pytest.raises(TypeError, match="0-d"):
        add.accumulate(np.float64(3))
    with pytest.raises(np.exceptions.AxisError):
        add.accumulate(np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="out has shape"):
        add.accumulate(np.ones((2, 3)), out=np.ones(6))
    # NumPy's methods cast into out= unsafely: float sums truncated into an int64 out
    a = np.arange(5) * 1.5
    np.testing.assert_array_equal(add.accumulate(a, out=np.zeros(5, np.int64)),
                                  np.add.accumulate(a, out=np.zeros(5, np.int64)))
    unary = vectorize(["float64(float64)"])(lambda_free_neg)
    with pytest.raises(ValueError, match="binary"):
        unary.accumulate(np.ones(3))


def lambda_free_neg(x):
    return -x


def test_accumulate_lazy_ufunc_compiles_its_loop():
    lazy = vectorize(add_fn)
    x = np.arange(10, dtype=np.int32)
    close(lazy.accumulate(x), np.add.accumulate(x, dtype=np.int32))


# ---------------------------------------------------------------- reduceat

@pytest.mark.parametrize("ours,theirs", PAIRS)
@pytest.mark.parametrize("indices", [[0, 3, 1, 5], [0], [7], [2, 2, 2], [0, 1, 2, 3, 4, 5, 6, 7],
                                     []])
@pytest.mark.parametrize("device", [False, True])
def test_reduceat_1d_like_numpy(ours, theirs, indices, device):
    x = data(8, np.float64)
    got = ours.reduceat(cuda.to_device(x) if device else x, indices)
    close(got, theirs.reduceat(x, np.array(indices, dtype=np.intp)))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.complex128])
def test_reduceat_axes_dtypes_and_out(axis, dtype):
    x = data((6, 9), dtype)
    idx = [0, 4, 2, 5]
    expected = np.add.reduceat(x, idx, axis=axis)
    close(add.reduceat(x, idx, axis=axis), expected)
    out = cuda.to_device(np.zeros(expected.shape, dtype))
    add.reduceat(cuda.to_device(x), np.array(idx), axis=axis, out=out)
    close(out, expected)


def test_reduceat_errors():
    with pytest.raises(IndexError, match="out of bounds"):
        add.reduceat(np.arange(5.0), [0, 7])
    with pytest.raises(IndexError, match="out of bounds"):
        add.reduceat(np.arange(5.0), [-1])
    with pytest.raises(TypeError, match="indices must be a 1-d array of integers"):
        add.reduceat(np.arange(5.0), [[0, 1]])


# ---------------------------------------------------------------- at

@pytest.mark.parametrize("ours,theirs", PAIRS + [(maximum, np.maximum)])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8])
@pytest.mark.parametrize("device", [False, True])
def test_at_repeated_indices_apply_once_each(ours, theirs, dtype, device):
    a = data(12, dtype)
    idx = np.array([0, 0, 3, 11, 3, 3, -1, 5])
    b = data(8, dtype)
    expected = a.copy()
    theirs.at(expected, idx, b)
    target = cuda.to_device(a) if device else a.copy()
    assert ours.at(target, idx, b) is None
    close(target, expected)


@pytest.mark.parametrize("device", [False, True])
def test_at_index_forms_like_numpy(device):
    a = data((4, 5), np.float64)
    for index, b in [((np.array([0, 0, 3]), np.array([1, 1, 4])), 2.0),
                     (slice(1, 3), np.arange(5.0)),
                     (np.array([True, False, True, False]), 1.5),
                     ((1, 2), 10.0),
                     ([0, 0], np.ones((2, 5)))]:
        expected = a.copy()
        np.add.at(expected, index, b)
        target = cuda.to_device(a) if device else a.copy()
        add.at(target, index, b)
        close(target, expected)


def test_at_casts_back_like_numpy():
    a = np.zeros(3, np.int64)
    expected = a.copy()
    np.add.at(expected, [0, 0], 1.5)   # (0 + 1.5 -> 1) + 1.5 -> 2: unsafe, per update
    add.at(a, [0, 0], 1.5)
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("device", [False, True])
def test_at_on_strided_and_reversed_targets(device):
    # byte offsets through the division path (neither 1-d nor C-contiguous) and through
    # one multiply by a negative stride (1-d, reversed)
    base = data((4, 10), np.float64)
    rows, cols = np.array([0, 3, 3, 1]), np.array([4, 0, 0, 2])
    for view, index in ((lambda x: x[:, ::2], (rows, cols)), (lambda x: x.T, (cols, rows)),
                        (lambda x: x[1, ::-1], cols)):
        expected = base.copy()
        np.add.at(view(expected), index, 2.5)
        target = cuda.to_device(base) if device else base.copy()
        add.at(view(target), index, 2.5)
        close(target, expected)


def test_at_errors():
    with pytest.raises(IndexError):
        add.at(np.zeros(3), [5], 1.0)
    with pytest.raises(IndexError, match=r"index -4 is out of bounds for axis 0 with size 3"):
        add.at(np.zeros(3), np.array([0, -4]), 1.0)
    untouched = np.ones(3)
    add.at(untouched, np.array([], np.int64), 1.0)  # no indices: nothing happens
    np.testing.assert_array_equal(untouched, 1.0)
    with pytest.raises(TypeError, match="second operand"):
        add.at(np.zeros(3), [0])
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        add.at(ro, [0], 1.0)
    with pytest.raises(ValueError, match="does not broadcast"):
        add.at(np.zeros(5), [0, 1], np.ones(3))


# ufunc.at with device indices (cupyx.scatter_add's case) runs on the device: a bounds
# check, then the updates, with no round trip through the host.

@pytest.fixture
def device_at_calls(monkeypatch):
    from numbacuda_ufunc import _methods

    calls = []
    real = _methods._at_on_device

    def spy(*args):
        done = real(*args)
        calls.append(done)
        return done

    monkeypatch.setattr(_methods, "_at_on_device", spy)
    return calls


@pytest.mark.parametrize("ours,theirs", PAIRS + [(maximum, np.maximum)])
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8, np.uint8, np.float32,
                                   np.complex128])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_at_with_device_indices_runs_on_the_device(ours, theirs, dtype, index_dtype, device_at_calls):
    if ours is maximum and dtype not in (np.int64, np.float64):
        pytest.skip("maximum has int64 and float64 loops only")
    a = data(40, dtype)
    idx = RNG.integers(-40, 40, 500).astype(index_dtype)  # repeats and negatives
    b = data(500, dtype)
    expected = a.copy()
    theirs.at(expected, idx, b)
    target = cuda.to_device(a)
    assert ours.at(target, cuda.to_device(idx), cuda.to_device(b)) is None
    assert device_at_calls == [True]
    close(target, expected)


@pytest.mark.parametrize("b", [2.5, 3, np.float32(0.25), True])
def test_at_with_device_indices_and_a_scalar(b, device_at_calls):
    a = data(16, np.float32)
    idx = np.array([0, 15, 15, -16, 7, 0], np.int64)
    expected = a.copy()
    np.add.at(expected, idx, b)
    target = cuda.to_device(a)
    add.at(target, cuda.to_device(idx), b)
    assert device_at_calls == [True]
    close(target, expected)


def test_at_with_device_indices_casts_back_like_numpy(device_at_calls):
    a = np.zeros(3, np.int64)
    expected = a.copy()
    np.add.at(expected, [0, 0, 2], 1.5)   # float64 loop, each update cast back to int64
    target = cuda.to_device(a)
    add.at(target, cuda.to_device(np.array([0, 0, 2])), 1.5)
    assert device_at_calls == [True]
    np.testing.assert_array_equal(target.copy_to_host(), expected)


def test_at_with_device_indices_on_a_strided_target(device_at_calls):
    base = data(30, np.float64)
    idx = np.array([0, 4, 4, -1, 9])
    expected = base.copy()
    np.add.at(expected[::-3], idx, 1.25)
    target = cuda.to_device(base)
    add.at(target[::-3], cuda.to_device(idx), 1.25)
    assert device_at_calls == [True]
    close(target, expected)


@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
def test_at_with_device_indices_out_of_bounds_changes_nothing(index_dtype, device_at_calls):
    a = data(10, np.float64)
    target = cuda.to_device(a)
    idx = cuda.to_device(np.array([1, 2, 10, -11, 3], index_dtype))
    with pytest.raises(IndexError, match=r"add_fn\.at\(\): index 10 is out of bounds for axis 0 with size 10"):
        add.at(target, idx, cuda.to_device(np.ones(5)))
    np.testing.assert_array_equal(target.copy_to_host(), a)  # checked before any update
    with pytest.raises(IndexError, match="index -11 is out of bounds"):
        add.at(target, cuda.to_device(np.array([-11, 10], index_dtype)), 1.0)
    add.at(target, cuda.to_device(np.array([], index_dtype)), 1.0)  # no indices: nothing
    np.testing.assert_array_equal(target.copy_to_host(), a)


def test_at_device_path_leaves_other_forms_to_the_general_path(device_at_calls):
    # host indices, 2-d targets, device values of another dtype or shape, strided indices
    a = data((3, 4), np.float64)
    for target, index, b in [(cuda.to_device(a[0]), np.array([0, 1]), 1.0),
                             (cuda.to_device(a), cuda.to_device(np.array([0, 2])), 1.0),
                             (cuda.to_device(a[0]), cuda.to_device(np.array([0, 1])),
                              cuda.to_device(np.ones(2, np.float32))),
                             (cuda.to_device(a[0]), cuda.to_device(np.array([0, 1, 2, 3]))[::2], 1.0),
                             (cuda.to_device(a[0]), cuda.to_device(np.array([0, 1], np.int16)), 1.0)]:
        expected = target.copy_to_host()
        np.add.at(expected, index.copy_to_host() if hasattr(index, "copy_to_host") else index,
                  b.copy_to_host() if hasattr(b, "copy_to_host") else b)
        add.at(target, index, b)
        close(target, expected)
    assert device_at_calls == [False] * 5


# ---------------------------------------------------------------- outer

@pytest.mark.parametrize("ours,theirs", PAIRS)
@pytest.mark.parametrize("device", [False, True])
def test_outer_like_numpy(ours, theirs, device):
    a = data((2, 3), np.float64)
    b = data(4, np.float64)
    got = ours.outer(cuda.to_device(a) if device else a, b)
    close(got, theirs.outer(a, b))
    close(ours.outer(3.0, b), theirs.outer(3.0, b))


def test_outer_takes_call_keywords():
    a, b = np.arange(3.0), np.arange(4.0)
    out = np.full((3, 4), -1.0)
    mask = np.add.outer(a, b) > 2
    add.outer(a, b, out=out, where=mask)
    np.testing.assert_array_equal(out, np.add.outer(a, b, out=np.full((3, 4), -1.0), where=mask))
    close(add.outer(a, b, dtype=np.float32), np.add.outer(a, b, dtype=np.float32))


# ---------------------------------------------------------------- kernels compile with NVRTC

@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.int8, np.uint16,
                                   np.bool_, np.complex64])
def test_method_kernels_compile_with_nvrtc(dtype):
    try:
        _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    engine = _engine(add)
    loop = add._reduce_loop(engine, np.dtype(dtype), "add.accumulate")
    src = engine._source(loop, np.dtype(dtype), np.dtype(dtype))
    ptx = _core.compile_ptx(src, (9, 0), options=_core.Reducer._nvrtc_extra())
    name = src.split("NU_METHODS_ENTRY(")[1].split(",")[0]
    for suffix in ("_acc_rows", "_acc_tiles_init", "_acc_tiles", "_reduceat", "_at_check", "_at_seq",
                   "_at_cas"):
        assert f".entry {name}{suffix}(" in ptx
    check = ptx.split(f".entry {name}_at_check(")[1].split(".entry")[0]
    # Some out-of-bounds update's number, stored plainly into mapped host memory.
    assert re.search(r"st\.volatile(\.global)?\.u64", check)
    at_cas = ptx.split(f".entry {name}_at_cas(")[1].split(".entry")[0]
    loop_type = np.dtype(engine._loop_type(loop))
    if loop_type.kind in "iu" and loop_type.itemsize >= 4:  # `a + b`: one native atomic
        assert re.search(r"(red|atom)(\.global)?\.add\.[us](32|64)", at_cas) and ".cas." not in at_cas
    elif loop_type.itemsize <= 8:  # bool and complex64 use i1 and c16
        assert re.search(r"atom(\.global)?\.cas\.b(32|64)", at_cas)  # at's CAS loop, sub-word too
        assert re.search(r"ld\.global\.cg\.", at_cas)  # its first guess from L2
    tiles = ptx.split(f".entry {name}_acc_tiles(")[1].split(".entry")[0]
    assert "bar.sync" in tiles           # cub::BlockScan's and BlockExchange's barriers
    # The decoupled look-back: tile states published with release stores or fences and
    # polled with relaxed/acquire (or volatile) loads, backing off with nanosleep.
    assert re.search(r"st\.(release|relaxed)\.gpu|membar\.gl|fence\.(acq_rel|sc)\.gpu", tiles)
    assert re.search(r"ld\.(acquire|relaxed|volatile)(\.gpu)?", tiles)


@pytest.mark.gpu
@pytest.mark.parametrize("shape, axis", [((1 << 22,), 0), ((3, 100_003), 1), ((100_003, 3), 0),
                                         ((70_000, 300), 1), ((5, 257), 1)])
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.complex128])
def test_device_wide_accumulate_on_gpu(shape, axis, dtype):
    # Integer sums are exact, so the tiled look-back scan must match NumPy bit for bit
    # whatever the grouping; uint8 wraps the same way in any order.
    x = RNG.integers(-50, 50, shape).astype(dtype)
    expected = np.add.accumulate(x, axis=axis, dtype=dtype)
    got = add.accumulate(cuda.to_device(x), axis=axis).copy_to_host()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.gpu
def test_device_wide_accumulate_keeps_left_to_right_order_on_gpu():
    # An associative, non-commutative operator: composing affine maps x -> a*x + b modulo
    # 2**16, each packed in a uint32 as (a << 16) | b; compose(f, g) is f then g. A scan
    # that swapped operands or tiles would give other maps.
    @vectorize(["uint32(uint32, uint32)"], target="cuda")
    def compose(f, g):
        a1 = f >> 16
        b1 = f & 0xFFFF
        a2 = g >> 16
        b2 = g & 0xFFFF
        return (((a2 * a1) & 0xFFFF) << 16) | ((a2 * b1 + b2) & 0xFFFF)

    x = RNG.integers(0, 1 << 32, 300_000, dtype=np.uint64).astype(np.uint32)
    expected = np.empty_like(x)
    acc = int(x[0])
    expected[0] = acc
    for i in range(1, x.size):
        g = int(x[i])
        a1, b1, a2, b2 = acc >> 16, acc & 0xFFFF, g >> 16, g & 0xFFFF
        acc = (((a2 * a1) & 0xFFFF) << 16) | ((a2 * b1 + b2) & 0xFFFF)
        expected[i] = acc
    np.testing.assert_array_equal(compose.accumulate(cuda.to_device(x)).copy_to_host(), expected)


@pytest.mark.gpu
def test_large_accumulate_and_at_on_gpu():
    x = RNG.random(1 << 20)
    close(add.accumulate(cuda.to_device(x)), np.add.accumulate(x))
    a = np.zeros(1000)
    idx = RNG.integers(0, 1000, 1 << 16)
    expected = a.copy()
    np.add.at(expected, idx, 1.0)
    d = cuda.to_device(a)
    add.at(d, idx, 1.0)
    close(d, expected)


@pytest.mark.gpu
def test_large_at_with_device_indices_on_gpu():
    # 2^20 float32 updates into 2^10 elements (about 1,000 per element: the CAS loops contend)
    a = np.zeros(1024, np.float32)
    idx = RNG.integers(-1024, 1024, 1 << 20)
    vals = RNG.random(1 << 20).astype(np.float32)
    expected = np.zeros(1024, np.float64)
    np.add.at(expected, idx, vals.astype(np.float64))
    d = cuda.to_device(a)
    add.at(d, cuda.to_device(idx), cuda.to_device(vals))
    np.testing.assert_allclose(d.copy_to_host(), expected, rtol=1e-4)
    with pytest.raises(IndexError, match="index 1024 is out of bounds"):
        add.at(d, cuda.to_device(np.array([0, 1024])), 1.0)
