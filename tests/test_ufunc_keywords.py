"""NumPy's call keywords on vectorize ufuncs (where dtype casting order signature sig subok)
and on gufuncs (axes axis keepdims); NumPy's own ufunc with the same keywords is the
oracle."""

import warnings

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda, guvectorize, vectorize


def add_fn(a, b):
    return a + b


TYPES = ["int8(int8, int8)", "int32(int32, int32)", "int64(int64, int64)",
         "float32(float32, float32)", "float64(float64, float64)",
         "complex128(complex128, complex128)"]
add = vectorize(TYPES)(add_fn)   # NumPy's np.add has these loops in this order


def host(x):
    return x.copy_to_host() if isinstance(x, cuda.DeviceNDArray) else np.asarray(x)


def both(x):
    """The same array on the host and on the device."""
    return [x, cuda.to_device(x)]


RNG = np.random.default_rng(7)
EDGE = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e300, -1e-300, 7.0])


# ---------------------------------------------------------------- where=

@pytest.mark.parametrize("device", [False, True])
@pytest.mark.parametrize("mask_shape", [(10,), (3, 1), (3, 10), ()])
def test_where_broadcasts_and_leaves_other_elements(device, mask_shape):
    a = np.broadcast_to(EDGE, (3, 10)).copy()
    b = RNG.standard_normal((3, 10))
    mask = RNG.random(mask_shape) > 0.5 if mask_shape else np.True_
    poison = np.full((3, 10), -777.0)
    expected = np.add(a, b, where=mask, out=poison.copy())
    out = cuda.to_device(poison) if device else poison.copy()
    args = (cuda.to_device(a), b) if device else (a, b)
    m = cuda.to_device(mask) if device and mask_shape else mask
    got = add(*args, where=m, out=out)
    assert got is out
    np.testing.assert_array_equal(host(got), expected)


def test_where_false_scalar_and_python_bool():
    a = np.arange(5.0)
    out = np.full(5, 3.5)
    add(a, 1.0, where=False, out=out)
    np.testing.assert_array_equal(out, np.full(5, 3.5))
    np.testing.assert_array_equal(add(a, 1.0, where=True), a + 1.0)


def test_where_broadcasts_the_result_shape_like_numpy():
    a = np.arange(3.0)
    mask = np.array([[True, False, True], [False, True, True]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected_shape = np.add(a, 1.0, where=mask).shape
    out = np.full(expected_shape, -1.0)
    add(a, 1.0, where=mask, out=out)
    np.testing.assert_array_equal(out, np.add(a, 1.0, where=mask, out=np.full(expected_shape, -1.0)))
    with pytest.warns(UserWarning, match="'where' used without 'out'"):
        assert add(a, 1.0, where=mask).shape == expected_shape


def test_where_with_a_cast_output_keeps_out_dtype():
    a = np.arange(6, dtype=np.int32)
    out = np.full(6, -1.0)                 # float64 out, int32 loop
    mask = a % 2 == 0
    add(a, a, where=mask, out=out)
    np.testing.assert_array_equal(out, np.add(a, a, where=mask, out=np.full(6, -1.0)))


def test_where_must_be_boolean():
    with pytest.raises(TypeError, match="where must be a boolean"):
        add(np.ones(3), 1.0, where=np.array([1, 0, 1]), out=np.zeros(3))


def test_where_kernels_compile_with_nvrtc():
    f = vectorize(["float32(float32, float32)"])(add_fn)
    x = np.arange(8, dtype=np.float32)
    f(x, x, where=x > 3, out=np.zeros(8, np.float32))
    f(x, 2.0, where=x > 3, out=np.zeros(8))
    sources = [s for s in f._kernel_sources() if "_where" in s[0]]
    assert len(sources) >= 2
    for entry, source in sources:
        assert f".entry {entry}(" in _core.compile_ptx(source, (9, 0))


# ---------------------------------------------------------------- dtype= and signature=

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int8, np.complex128])
@pytest.mark.parametrize("inputs", ["f4f8", "i8i8", "f8scalar"])
def test_dtype_selects_the_loop_like_numpy(dtype, inputs):
    a = {"f4f8": np.linspace(-3, 3, 7).astype(np.float32), "i8i8": np.arange(-3, 4),
         "f8scalar": np.linspace(-3, 3, 7)}[inputs]
    b = {"f4f8": np.linspace(1, 2, 7), "i8i8": np.arange(7) * 3, "f8scalar": 2.0}[inputs]
    try:
        expected = np.add(a, b, dtype=dtype)
    except TypeError:
        with pytest.raises(TypeError):
            add(a, b, dtype=dtype)
        return
    for x in both(a):
        got = add(x, b, dtype=dtype)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(host(got), expected)


@pytest.mark.parametrize("sig", ["ff->f", "dd->d", ("f4", "f4", "f4"),
                                 (None, None, "f4"), ("i4", "i4", "i4"), np.float64])
@pytest.mark.parametrize("casting", ["same_kind", "unsafe"])
def test_signature_and_sig_like_numpy(sig, casting):
    a = np.linspace(-5, 5, 11)
    b = 2.5
    try:
        expected = np.add(a, b, signature=sig, casting=casting)
    except TypeError:
        with pytest.raises(TypeError):
            add(a, b, signature=sig, casting=casting)
        return
    got = add(a, b, signature=sig, casting=casting)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(add(a, b, sig=sig, casting=casting), expected)


def test_signature_with_dtype_names():
    a = np.linspace(-5, 5, 11)
    np.testing.assert_array_equal(add(a, 1.5, signature="f4,f4->f4"),
                                  np.add(a, 1.5, signature="ff->f"))


def test_signature_errors():
    with pytest.raises(TypeError, match="cannot specify both 'signature' and 'dtype'"):
        add(1.0, 2.0, signature="dd->d", dtype=np.float64)
    with pytest.raises(TypeError, match="cannot specify both 'sig' and 'signature'"):
        add(1.0, 2.0, signature="dd->d", sig="dd->d")
    with pytest.raises(TypeError, match=r"no loop matching the specified signature"):
        add(np.ones(2), np.ones(2), signature="hh->h")
    with pytest.raises(ValueError, match="has 2 types"):
        add(np.ones(2), np.ones(2), signature=("f8", "f8"))


# ---------------------------------------------------------------- casting=

CASES = [
    (np.ones(3, np.float32), np.ones(3)),
    (np.ones(3, np.float32), np.float32(2)),
    (np.ones(3, np.float32), 1.5),
    (np.ones(3, np.float32), 1),
    (np.ones(3), 1.5),
    (np.arange(3, dtype=np.int64), 1),
    (np.arange(3, dtype=np.int8), np.arange(3, dtype=np.int32)),
]


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", [None, np.float32])
def test_casting_inputs_like_numpy(casting, case, dtype):
    a, b = CASES[case]
    try:
        expected = np.add(a, b, casting=casting, dtype=dtype)
    except TypeError:
        with pytest.raises(TypeError, match="cast"):
            add(a, b, casting=casting, dtype=dtype)
        return
    got = add(a, b, casting=casting, dtype=dtype)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("out_dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("device", [False, True])
def test_casting_output_like_numpy(casting, out_dtype, device):
    a = np.linspace(-2, 2, 5)
    try:
        expected = np.add(a, a, out=np.zeros(5, out_dtype), casting=casting)
    except TypeError:
        with pytest.raises(TypeError, match="cast"):
            add(a, a, out=np.zeros(5, out_dtype), casting=casting)
        return
    out = cuda.to_device(np.zeros(5, out_dtype)) if device else np.zeros(5, out_dtype)
    add(cuda.to_device(a) if device else a, a, out=out, casting=casting)
    np.testing.assert_array_equal(host(out), expected)


def test_casting_and_order_values_are_checked():
    with pytest.raises(ValueError, match="casting must be one of"):
        add(1.0, 2.0, casting="bogus")
    with pytest.raises(ValueError, match="order must be one of"):
        add(1.0, 2.0, order="Q")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        add(1.0, 2.0, bogus=1)


def test_unsafe_casting_wraps_like_numpy():
    a = np.array([100, 120, -128], np.int64)
    expected = np.add(a, a, signature="bb->b", casting="unsafe")
    np.testing.assert_array_equal(add(a, a, signature="bb->b", casting="unsafe"), expected)


def test_weak_int_overflow_still_raises_with_keywords():
    with pytest.raises(OverflowError, match="1000"):
        add(np.arange(3, dtype=np.int8), 1000, casting="unsafe")


# ---------------------------------------------------------------- order= and subok=

@pytest.mark.parametrize("order", ["C", "F", "A", "K", None])
@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("device", [False, True])
def test_order_of_new_results(order, layout, device):
    a = np.asarray(RNG.standard_normal((4, 5)), order=layout)
    expected = np.add(a, a, order=order)
    got = add(cuda.to_device(a) if device else a, a, order=order)
    np.testing.assert_array_equal(host(got), expected)
    if order in ("C", "F") or (order in ("A", "K") and layout == "F"):
        flags = got.flags if isinstance(got, np.ndarray) else None
        if flags is not None:
            assert flags.c_contiguous == expected.flags.c_contiguous
            assert flags.f_contiguous == expected.flags.f_contiguous
        else:
            assert got.is_f_contiguous() == expected.flags.f_contiguous


def test_subok_is_accepted():
    a = np.arange(4.0)
    np.testing.assert_array_equal(add(a, a, subok=True), a + a)
    np.testing.assert_array_equal(add(a, a, subok=False), a + a)


def test_keywords_on_lazy_ufuncs():
    lazy = vectorize(add_fn)
    a = np.arange(5, dtype=np.int16)
    got = lazy(a, a, dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.add(a, a, dtype=np.float32))
    got = lazy(a, 2, signature=("i8", "i8", None))
    np.testing.assert_array_equal(got, np.add(a, 2, signature=("i8", "i8", None)))
    out = np.full(5, -1, np.int16)
    lazy(a, a, where=a > 2, out=out)
    np.testing.assert_array_equal(out, np.add(a, a, where=a > 2, out=np.full(5, -1, np.int16)))


# ---------------------------------------------------------------- gufuncs: axes, axis, keepdims

@guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def gsum(x, res):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
    res[0] = acc


@guvectorize(["void(float64[:,:], float64[:,:], float64[:,:])"], "(m,n),(n,p)->(m,p)")
def gmatmul(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0.0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            out[i, j] = acc


@guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def gcumsum(x, out):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
        out[i] = acc


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
@pytest.mark.parametrize("device", [False, True])
def test_gufunc_axis_like_numpy(axis, device):
    x = RNG.standard_normal((3, 4, 5))
    xin = cuda.to_device(x) if device else x
    np.testing.assert_allclose(host(gsum(xin, axis=axis)), np.sum(x, axis=axis))
    np.testing.assert_allclose(host(gcumsum(xin, axis=axis)), np.cumsum(x, axis=axis))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gufunc_keepdims_like_numpy(axis):
    x = RNG.standard_normal((3, 4, 5))
    got = gsum(x, axis=axis, keepdims=True)
    np.testing.assert_allclose(got, np.sum(x, axis=axis, keepdims=True))
    out = np.full(np.sum(x, axis=axis, keepdims=True).shape, np.nan)
    assert gsum(x, axis=axis, keepdims=True, out=out) is out
    np.testing.assert_allclose(out, np.sum(x, axis=axis, keepdims=True))


def test_gufunc_axes_like_numpy_matmul():
    a = RNG.standard_normal((3, 2, 4))   # core (m, n) on axes (0, 2)
    b = RNG.standard_normal((5, 4))      # core (n, p) on axes (1, 0)
    axes = [(0, 2), (1, 0), (-1, -2)]
    expected = np.matmul(a, b, axes=axes)
    np.testing.assert_allclose(gmatmul(a, b, axes=axes), expected)
    out = np.full(expected.shape, np.nan)
    gmatmul(a, b, axes=axes, out=out)
    np.testing.assert_allclose(out, expected)
    d = gmatmul(cuda.to_device(a), cuda.to_device(b), axes=axes)
    np.testing.assert_allclose(d.copy_to_host(), expected)


def test_gufunc_axes_outputs_without_core_dims_may_be_omitted():
    x = RNG.standard_normal((4, 6))
    np.testing.assert_allclose(gsum(x, axes=[(0,)]), x.sum(axis=0))
    np.testing.assert_allclose(gsum(x, axes=[0, ()]), x.sum(axis=0))


def test_gufunc_keyword_errors():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="cannot specify both 'axis' and 'axes'"):
        gsum(x, axis=0, axes=[(0,)])
    with pytest.raises(np.exceptions.AxisError):
        gsum(x, axis=2)
    with pytest.raises(TypeError, match="single shared core dimension"):
        gmatmul(x, x.T, axis=0)
    with pytest.raises(TypeError, match="keepdims"):
        gcumsum(x, keepdims=True)
    with pytest.raises(ValueError, match="axes item 0"):
        gmatmul(x, x.T, axes=[(0,), (0, 1), (0, 1)])
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        gsum(x, where=True)


# ---------------------------------------------------------------- Numba's old-style () argument

def test_old_style_scalar_argument_numba_2579():
    @guvectorize(["void(int32[:], int32[:], int32[:])"], "(n),()->(n)")
    def shift(x, y, res):
        for i in range(x.shape[0]):
            res[i] = x[i] + y[0]

    x = np.arange(10, dtype=np.int32)
    y = np.array([2], dtype=np.int32)
    out = np.full(10, -1, dtype=np.int32)
    shift(x, y, out)                      # out lacks the size-1 loop dimension of y
    np.testing.assert_array_equal(out, x + 2)
    dout = cuda.to_device(np.full(10, -1, dtype=np.int32))
    shift(cuda.to_device(x), y, out=dout)
    np.testing.assert_array_equal(dout.copy_to_host(), x + 2)
    np.testing.assert_array_equal(shift(x, y), (x + 2)[None, :])   # NumPy's shape without out
    with pytest.raises(ValueError, match="output 1 has shape"):
        shift(x, np.array([2, 3], np.int32), out)                  # a real loop dimension
