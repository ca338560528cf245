"""ufunc.reduce on vectorize ufuncs: NumPy's semantics (axis, dtype, out, keepdims,
initial, identity) on the CUB reduce engine, host and device arrays."""

import zlib

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda


@nu.vectorize(["int32(int32, int32)", "int64(int64, int64)", "float32(float32, float32)",
               "float64(float64, float64)"], identity=0)
def add(a, b):
    return a + b


@nu.vectorize(["float64(float64, float64)", "int64(int64, int64)"])
def maximum(a, b):
    return max(a, b)


@nu.vectorize
def first(a, b):  # lazy, no identity; associative and not commutative
    return a


RNG = np.random.default_rng(11)
CASES = []
for _ in range(16):
    ndim = int(RNG.integers(1, 5))
    shape = tuple(int(s) for s in RNG.integers(1, 12, size=ndim))
    pick = int(RNG.integers(0, 4))
    if pick == 0:
        axis = None
    elif pick == 1:
        axis = int(RNG.integers(-ndim, ndim))
    else:
        k = int(RNG.integers(1, ndim + 1))
        axis = tuple(int(a) for a in RNG.choice(ndim, size=k, replace=False))
    CASES.append((shape, axis, bool(RNG.integers(0, 2))))


def _sum_tolerance(f, initial=0.0):
    """An absolute bound for two float64 sums of ``f`` in different orders: each is within
    n * eps * (sum of magnitudes) of the exact sum. A sum that cancels to near zero needs it
    (rtol alone failed at random on a sum of 1e-4)."""
    return 2 * max(f.size, 1) * np.finfo(np.float64).eps * (np.nansum(np.abs(f)) + abs(initial))


@pytest.mark.parametrize("shape,axis,keepdims", CASES)
def test_add_and_maximum_match_numpy(shape, axis, keepdims):
    rng = np.random.default_rng(zlib.crc32(repr((shape, axis)).encode()))
    x = rng.integers(-10**6, 10**6, size=shape)
    np.testing.assert_array_equal(add.reduce(x, axis=axis, keepdims=keepdims),
                                  np.add.reduce(x, axis=axis, keepdims=keepdims))
    f = rng.standard_normal(shape)
    np.testing.assert_allclose(add.reduce(f, axis=axis, keepdims=keepdims),
                               np.add.reduce(f, axis=axis, keepdims=keepdims), rtol=1e-12,
                               atol=_sum_tolerance(f))
    got = maximum.reduce(f, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(got, np.maximum.reduce(f, axis=axis, keepdims=keepdims))
    d = add.reduce(cuda.to_device(x), axis=axis, keepdims=keepdims)
    assert isinstance(d, cuda.DeviceNDArray)
    np.testing.assert_array_equal(d.copy_to_host(), np.add.reduce(x, axis=axis, keepdims=keepdims))


def test_default_axis_is_zero_and_scalars():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    np.testing.assert_array_equal(add.reduce(x), x.sum(axis=0))
    got = add.reduce(np.arange(5.0))
    assert isinstance(got, np.float64) and got == 10.0
    # NumPy accepts the default axis=0 on a 0-d array: the one element (with initial).
    assert add.reduce(np.array(5)) == np.add.reduce(np.array(5)) == 5
    assert add.reduce(np.array(5), initial=10) == 15


def test_loop_selection_dtype_and_casting():
    x = np.arange(100, dtype=np.int8)
    got = add.reduce(x)  # int8 casts safely to the first loop, int32
    assert got.dtype == np.int32 and got == 4950
    assert add.reduce(x, dtype=np.float64).dtype == np.float64
    assert add.reduce(np.arange(10, dtype=np.float32)).dtype == np.float32
    with pytest.raises(TypeError, match=r"add.reduce\(\): no loop of the form T\(T, T\) accepts "
                                        r"complex128"):
        add.reduce(np.ones(3, dtype=np.complex128))


def test_out_any_layout_poisoned():
    x = np.random.default_rng(1).standard_normal((5, 6, 7))
    out = np.full((7, 5), np.nan).T  # Fortran-ordered view of the (5, 7) result
    assert add.reduce(x, axis=1, out=out) is out
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-12)
    dout = cuda.to_device(np.full((5, 1, 7), np.nan))
    assert add.reduce(cuda.to_device(x), axis=1, out=dout, keepdims=True) is dout
    np.testing.assert_allclose(dout.copy_to_host(), x.sum(axis=1, keepdims=True), rtol=1e-12)
    out32 = np.full(7, -1, dtype=np.float32)  # the result is cast to out's dtype
    add.reduce(x, axis=(0, 1), out=out32)
    np.testing.assert_allclose(out32, x.sum(axis=(0, 1)), rtol=1e-5)
    with pytest.raises(ValueError, match=r"out has shape \(5, 6\), the reduction's result has "
                                         r"shape \(5, 7\)"):
        add.reduce(x, axis=1, out=np.zeros((5, 6)))


def test_identity_and_initial():
    empty = np.zeros((0, 4))
    np.testing.assert_array_equal(add.reduce(empty), np.zeros(4))  # identity 0
    np.testing.assert_array_equal(add.reduce(empty, initial=2.5), np.full(4, 2.5))
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(add.reduce(x, axis=1, initial=10.0),
                                  np.add.reduce(x, axis=1, initial=10.0))
    np.testing.assert_array_equal(maximum.reduce(x, axis=0, initial=4.0),
                                  np.maximum.reduce(x, axis=0, initial=4.0))
    with pytest.raises(TypeError, match=r"maximum.reduce\(\): zero-size reduction with no "
                                        r"identity and no initial value"):
        maximum.reduce(empty)
    # Nothing to reduce into: an empty result needs no identity.
    assert maximum.reduce(np.zeros((4, 0)), axis=0).shape == (0,)


def test_lazy_ufunc_compiles_for_reduce_and_keeps_order():
    x = np.random.default_rng(5).permutation(3000).reshape(30, 100)
    np.testing.assert_array_equal(first.reduce(x, axis=1), x[:, 0])
    np.testing.assert_array_equal(first.reduce(x, axis=0), x[0])
    assert first.reduce(x, axis=None) == x[0, 0]
    assert "ll->l" in first.types


def test_errors():
    @nu.vectorize(["float64(float64)"])
    def neg(a):
        return -a

    with pytest.raises(ValueError, match=r"neg.reduce\(\): reduce is only supported for binary "
                                         r"functions \(got a ufunc with 1 input\(s\)\)"):
        neg.reduce(np.ones(3))
    with pytest.raises(np.exceptions.AxisError, match=r"axis -3 is out of bounds"):
        add.reduce(np.ones((2, 2)), axis=-3)
    with pytest.raises(TypeError, match=r"numeric dtype"):
        add.reduce(np.array(["x"]))


@nu.vectorize(["float64(float64, float64)", "int64(int64, int64)"], identity=1)
def mul(a, b):
    return a * b


@pytest.mark.parametrize("shape,axis,keepdims", CASES[:8])
@pytest.mark.parametrize("kind", ["numpy", "device"])
def test_where_mask_matches_numpy(shape, axis, keepdims, kind):
    # seeded from the case's text: hash() of a str differs in every process (a flaky
    # CI run at random, issue 35)
    rng = np.random.default_rng(zlib.crc32(repr((shape, axis, kind)).encode()))
    x = rng.integers(-5, 6, size=shape)
    f = rng.standard_normal(shape)
    f.flat[0] = np.nan  # a masked-out NaN must not reach the result
    # masks of the array's shape, broadcast from the inner dimensions, and scalars
    masks = [rng.random(shape) > 0.4, rng.random(shape[1:]) > 0.5, np.bool_(False)]
    masks[0].flat[0] = False
    masks[1].flat[0] = False

    def on(a):
        return cuda.to_device(a) if kind == "device" else a

    def host(r):
        return r.copy_to_host() if isinstance(r, cuda.DeviceNDArray) else r

    for m in masks:
        for uf, ref in ((add, np.add), (mul, np.multiply)):
            np.testing.assert_array_equal(
                host(uf.reduce(on(x), axis=axis, keepdims=keepdims, where=m)),
                ref.reduce(x, axis=axis, keepdims=keepdims, where=m))
            np.testing.assert_allclose(
                host(uf.reduce(on(f), axis=axis, keepdims=keepdims, where=m, initial=2.0)),
                ref.reduce(f, axis=axis, keepdims=keepdims, where=m, initial=2.0), rtol=1e-12,
                atol=_sum_tolerance(f, initial=2.0) if uf is add else 0)


def test_where_mask_on_the_device_with_out_and_dtype():
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    m = (x % 3) != 0
    out = cuda.to_device(np.full(6, -99, np.int64))
    got = add.reduce(cuda.to_device(x), axis=0, where=cuda.to_device(m), dtype=np.int64, out=out)
    assert got is out
    np.testing.assert_array_equal(out.copy_to_host(), np.add.reduce(x, axis=0, where=m, dtype=np.int64))
    x0 = x.copy()
    add.reduce(x, axis=1, where=m)
    np.testing.assert_array_equal(x, x0)  # the input is never written


def test_where_mask_errors():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"add.reduce\(\): where of shape \(2, 4\) does not "
                                         r"broadcast to the array's shape \(3, 4\)"):
        add.reduce(x, where=np.ones((2, 4), bool))
    with pytest.raises(TypeError, match=r"where must be a boolean mask \(got dtype int64\)"):
        add.reduce(x, where=np.ones((3, 4), np.int64))
    with pytest.raises(ValueError, match=r"reduction operation 'maximum' does not have an "
                                         r"identity, so to use a where mask one has to specify "
                                         r"'initial'"):
        maximum.reduce(x, where=x > 0)
    with pytest.raises(NotImplementedError, match=r"where= needs a ufunc with an identity"):
        maximum.reduce(x, where=x > 0, initial=0.0)


def test_where_mask_on_a_stream():
    s = cuda.stream()
    x = np.arange(10.0)
    got = add.reduce(cuda.to_device(x, stream=s), where=x > 3.5, stream=s)
    s.synchronize()
    assert got == np.add.reduce(x, where=x > 3.5)
