"""Edge cases of the NumPy ufunc surface found by an adversarial pass over vectorize,
guvectorize and their methods: each test is a defect that was fixed; NumPy's own ufunc
with the same arguments is the oracle."""

import warnings

import numpy as np
import pytest

from numbacuda_ufunc import cuda, guvectorize, vectorize

TARGETS = ["cuda", "cpu", "parallel"]


def add_fn(a, b):
    return a + b


ADD_TYPES = ["int64(int64, int64)", "uint64(uint64, uint64)", "float32(float32, float32)",
             "float64(float64, float64)", "complex128(complex128, complex128)"]
ADD = {t: vectorize(ADD_TYPES, target=t, identity=0)(add_fn) for t in TARGETS}


def host(x):
    return x.copy_to_host() if isinstance(x, cuda.DeviceNDArray) else x


# ---- accumulate and reduceat with an out= that overlaps the input


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("view", ["reversed", "shifted", "same"])
def test_accumulate_out_overlapping_input(target, view):
    def run(f, x):
        out = {"reversed": x[::-1], "shifted": x[1:], "same": x}[view]
        src = x[:-1] if view == "shifted" else x
        f.accumulate(src, out=out)
        return x
    got = run(ADD[target], np.arange(1.0, 9.0))
    np.testing.assert_array_equal(got, run(np.add, np.arange(1.0, 9.0)))


@pytest.mark.parametrize("target", TARGETS)
def test_accumulate_out_overlapping_input_2d(target):
    def run(f):
        y = np.arange(12.0).reshape(3, 4)
        f.accumulate(y, axis=1, out=y[:, ::-1])
        return y
    np.testing.assert_array_equal(run(ADD[target]), run(np.add))


def test_accumulate_device_out_overlapping_input():
    d = cuda.to_device(np.arange(1.0, 9.0))
    ADD["cuda"].accumulate(d, out=d[::-1])
    x = np.arange(1.0, 9.0)
    np.add.accumulate(x, out=x[::-1])
    np.testing.assert_array_equal(d.copy_to_host(), x)


@pytest.mark.parametrize("target", TARGETS)
def test_reduceat_out_overlapping_input(target):
    def run(f):
        x = np.arange(1.0, 9.0)
        f.reduceat(x, [0, 4, 6, 7, 1, 2, 3, 5], out=x)
        return x
    np.testing.assert_array_equal(run(ADD[target]), run(np.add))


# ---- Python ints beyond int64 (NEP 50: weak, NumPy's default int64 when alone)

LAZY = vectorize(target="cpu")(add_fn)


@pytest.mark.parametrize("f", [ADD["cuda"], ADD["cpu"], LAZY], ids=["cuda", "cpu", "lazy"])
@pytest.mark.parametrize("args", [(2**63, 2**63), (2**63, 1), (1, 2**64), (-2**63 - 1, 1),
                                  (np.arange(3), 2**64), (np.array([True]), 2**63)])
def test_python_int_beyond_int64_overflows_as_numpy(f, args):
    with pytest.raises(OverflowError):
        np.add(*args)
    # (add(2**63, 2**63) was uint64 0: the sum wrapped silently)
    with pytest.raises(OverflowError, match="out of bounds for int64"):
        f(*args)


@pytest.mark.parametrize("f", [ADD["cuda"], ADD["parallel"], LAZY],
                         ids=["cuda", "parallel", "lazy"])
@pytest.mark.parametrize("args", [
    (np.arange(3.0), 2**64), (np.arange(3.0, dtype=np.float32), -10**30),
    (np.arange(3.0), 2**63), (np.arange(2) * 1j, 10**30), (2**63, 1.0), (2**100, 1.0),
    (2**100, 1j), (np.arange(3, dtype=np.uint64), 2**63)])
def test_python_int_beyond_int64_in_inexact_call(f, args):
    # (an int beyond uint64 raised OverflowError "out of bounds for every integer type"
    # even where NumPy converts it to the float loop's type)
    expected = np.add(*args)
    got = f(*args)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_python_int_beyond_float64_overflows():
    with pytest.raises(OverflowError, match="argument 2: Python integer 1000.* too large"):
        ADD["cpu"](np.arange(3.0), 10**400)


# ---- where= objects that are not arrays convert to bool, as in NumPy


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("where", [None, 0, 1, [1, 0, 1, 0], [1.5, 0, 0, 0], np.int64(1), ""],
                         ids=["None", "0", "1", "int-list", "float-list", "np.int64", "str"])
def test_where_non_array_converts_as_numpy(target, where):
    # (where=None was taken as "no mask", so every element was written; NumPy's None is
    # False; Python ints and int lists were refused)
    a = np.arange(4.0)
    expected = np.add(a, a, out=np.full(4, -1.0), where=where)
    got = ADD[target](a, a, out=np.full(4, -1.0), where=where)
    np.testing.assert_array_equal(got, expected)


def test_where_int_array_still_refused():
    with pytest.raises(TypeError, match="where must be a boolean"):
        ADD["cpu"](np.arange(4.0), 1.0, out=np.zeros(4), where=np.array(1))


def test_where_ragged_list_names_where():
    with pytest.raises(TypeError, match=r"where must be a boolean array or bool \(got list"):
        ADD["cpu"](np.arange(4.0), 1.0, out=np.zeros(4), where=[[1, 0], [1]])


# ---- guvectorize axis= and axes= entries that are not integers


def _vecdot(a, b, out):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    out[0] = acc


VECDOT = guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()",
                     target="cpu")(_vecdot)


@pytest.mark.parametrize("axis", [(0,), "a", 1.0])
def test_gufunc_axis_not_an_integer(axis):
    # (the comparison in the bounds check raised "'<=' not supported between instances
    # of 'int' and 'tuple'", naming neither the keyword nor the value)
    x = np.ones((3, 4))
    with pytest.raises(TypeError):
        np.vecdot(x, x, axis=axis)
    with pytest.raises(TypeError, match=r"axis must be an integer \(got"):
        VECDOT(x, x, axis=axis)


def test_gufunc_axes_entry_not_an_integer():
    x = np.ones((3, 4))
    with pytest.raises(TypeError, match=r"axes item 1 must hold integers \(got str 'a'\)"):
        VECDOT(x, x, axes=[(0,), ("a",)])
    np.testing.assert_array_equal(VECDOT(x, x, axes=[(np.int64(0),), (np.int8(0),)]),
                                  np.vecdot(x, x, axes=[(0,), (0,)]))


# ---- the ufunc methods take NumPy's 1-tuples for out= and a single axis


@pytest.mark.parametrize("target", TARGETS)
def test_reduce_out_one_tuple(target):
    # (out=(array,) was refused: "out must be a NumPy or device array (got <class 'tuple'>)")
    a = np.arange(24.0).reshape(2, 3, 4)
    out = np.full((2, 4), -1.0)
    assert ADD[target].reduce(a, axis=1, out=(out,)) is out
    np.testing.assert_array_equal(out, np.add.reduce(a, axis=1))
    with pytest.raises(TypeError, match="1-tuple"):
        ADD[target].reduce(a, axis=1, out=(out, out))


@pytest.mark.parametrize("target", TARGETS)
def test_accumulate_and_reduceat_axis_one_tuple(target):
    a = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(ADD[target].accumulate(a, axis=(1,)),
                                  np.add.accumulate(a, axis=(1,)))
    np.testing.assert_array_equal(ADD[target].reduceat(a, [0, 2], axis=(-1,)),
                                  np.add.reduceat(a, [0, 2], axis=(-1,)))


@pytest.mark.parametrize("axis", [None, (0, 1), ()])
def test_accumulate_and_reduceat_several_axes(axis):
    a = np.arange(24.0).reshape(2, 3, 4)
    with pytest.raises(ValueError, match="multiple axes"):
        np.add.accumulate(a, axis=axis)
    with pytest.raises(ValueError, match=r"accumulate\(\): the method takes a single axis"):
        ADD["cpu"].accumulate(a, axis=axis)
    with pytest.raises(ValueError, match=r"reduceat\(\): the method takes a single axis"):
        ADD["cpu"].reduceat(a, [0], axis=axis)


# ---- reduce(where=) objects that are not arrays convert to bool, as in NumPy


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("where", [None, 0, 1, [1, 0, 1, 0]], ids=["None", "0", "1", "list"])
def test_reduce_where_non_array_converts_as_numpy(target, where):
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ADD[target].reduce(a, axis=1, where=where),
                                  np.add.reduce(a, axis=1, where=where))


# ---- reduce, accumulate and reduceat with out= of another dtype choose NumPy's loop


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("method", ["reduce", "accumulate", "reduceat"])
@pytest.mark.parametrize("in_dtype,out_dtype", [
    (np.bool_, np.int64),       # the input casts safely to out: out's loop (counts)
    (np.float64, np.int64),     # it does not: the input's loop, the result cast unsafely
    (np.complex128, np.float64),
    (np.float64, np.bool_),
    (np.int64, np.float32),
    (np.int64, np.dtype(">f8"))])  # a byte-swapped out: its loop is the native float64's
def test_methods_out_dtype_selects_numpy_loop(target, method, in_dtype, out_dtype):
    # (add.reduce(bool_array, out=int64_array) ran the bool loop, so it gave 1 where NumPy
    # counts 5; accumulate and reduceat refused an out= NumPy casts to)
    if in_dtype == np.bool_:
        a = np.array([True, True, False, True, True, True])
    else:
        a = (np.arange(6) * 1.5 + 0.7).astype(in_dtype) if in_dtype != np.int64 else np.arange(6)
    a = a + 1j if in_dtype == np.complex128 else a

    def run(f):
        if method == "reduce":
            out = np.zeros((), out_dtype)
            return f.reduce(a, out=out)
        if method == "accumulate":
            return f.accumulate(a, out=np.zeros(6, out_dtype))
        return f.reduceat(a, [0, 2, 5], out=np.zeros(3, out_dtype))

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # NumPy's, for complex
        expected = run(np.add)
        got = run(ADD[target])  # unsafe casts into out=, as NumPy's methods
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_reduce_keepdims_of_0d_is_a_scalar(target):
    # (a 0-d ndarray where NumPy returns its scalar)
    got = ADD[target].reduce(np.array(2.5), keepdims=True)
    expected = np.add.reduce(np.array(2.5), keepdims=True)
    assert type(got) is type(expected) and got == expected


# ---- casting= and order= that are not strings: NumPy's TypeError


@pytest.mark.parametrize("kw", [{"casting": None}, {"casting": 3}, {"order": 1}])
def test_casting_and_order_not_str(kw):
    a = np.arange(3.0)
    with pytest.raises(TypeError):
        np.add(a, a, **kw)
    key = next(iter(kw))
    with pytest.raises(TypeError, match=f"{key} must be a str"):
        ADD["cpu"](a, a, **kw)


def test_order_bytes_as_numpy():
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert ADD["cpu"](a, a, order=b"C").flags.c_contiguous


# ---- a malformed __cuda_array_interface__ passed as out=


class _CAI:
    def __init__(self, **interface):
        self.__cuda_array_interface__ = interface


def test_out_interface_without_data():
    # (KeyError: 'data' from the read-only check, before the interface was validated)
    bad = _CAI(shape=(4,), typestr="<f8", version=3)
    with pytest.raises(ValueError, match=r"argument 3\(\): __cuda_array_interface__ lacks the "
                                         r"required key 'data'"):
        ADD["cuda"](np.arange(4.0), 1.0, out=bad)


# ---- reductions and methods over strides that do not merge into the kernels' 8 dimensions

PERM10 = [1, 0, 3, 2, 5, 4, 7, 6, 9, 8]


def _t10():
    return np.arange(2.0 ** 10).reshape((2,) * 10).transpose(PERM10)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("call", [
    lambda f, a: f.reduce(a, axis=0), lambda f, a: f.reduce(a, axis=None),
    lambda f, a: f.reduce(a, axis=(0, 3, 5)), lambda f, a: f.accumulate(a, axis=2),
    lambda f, a: f.reduceat(a, [0, 1], axis=4)],
    ids=["reduce-0", "reduce-all", "reduce-tuple", "accumulate", "reduceat"])
def test_methods_many_unmergeable_dims(target, call):
    # (ValueError "the array's layout needs more than 8 dimensions after merging": the
    # input is now read from a C-ordered copy)
    np.testing.assert_array_equal(call(ADD[target], _t10()), call(np.add, _t10()))


def test_cuda_reduce_many_unmergeable_dims():
    r = cuda.reduce(add_fn)
    assert r(_t10()) == _t10().sum()
    np.testing.assert_array_equal(r(_t10(), axis=1), _t10().sum(axis=1))


def test_device_reduce_many_unmergeable_dims():
    d = cuda.to_device(np.arange(2.0 ** 10).reshape((2,) * 10)).transpose(PERM10)
    np.testing.assert_array_equal(host(ADD["cuda"].reduce(d, axis=0)), np.add.reduce(_t10(), axis=0))
    np.testing.assert_array_equal(host(ADD["cuda"].accumulate(d, axis=2)),
                                  np.add.accumulate(_t10(), axis=2))


# ---- ufunc.at for unary ufuncs (NumPy has it: np.negative.at(a, indices))


def sq1_fn(x):
    return x * x + 1


SQ1 = {t: vectorize(["int8(int8)", "int64(int64)", "float64(float64)"], target=t)(sq1_fn)
       for t in TARGETS}


def _sequential_at(target, indices):
    """The oracle: the Python function applied once per occurrence of each index."""
    t = target.copy()
    for e in np.asarray(np.arange(t.size).reshape(t.shape)[indices]).ravel():
        i = np.unravel_index(e, t.shape) if t.ndim else ()
        t[i] = sq1_fn(t[i])
    return t


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("array,indices", [
    (np.arange(6.0), [0, 0, 1, 5, 5, 5]), (np.arange(6), [-1, 0, -1]),
    (np.arange(12.0).reshape(3, 4)[:, ::-1], (np.array([0, 0, 2]), np.array([1, 1, 3]))),
    (np.arange(6.0), slice(None)), (np.arange(6, dtype=np.int8) * 30, [1, 1, 1]),
    (np.array(2.0), ()), (np.arange(6.0), np.array([True, False] * 3)), (np.arange(6.0), [])],
    ids=["repeats", "negative", "2d-strided", "slice", "int8-wraps", "0d", "mask", "empty"])
def test_unary_at(target, array, indices):
    # (it raised "only binary ufuncs support this method")
    got = array.copy()
    with np.errstate(all="ignore"):
        SQ1[target].at(got, indices)
        expected = _sequential_at(array, indices)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_unary_at_device_array():
    d = cuda.to_device(np.arange(6.0))
    SQ1["cuda"].at(d, [0, 0, 3])
    np.testing.assert_array_equal(d.copy_to_host(), _sequential_at(np.arange(6.0), [0, 0, 3]))


def test_unary_at_errors():
    with pytest.raises(ValueError, match="second operand"):
        np.negative.at(np.arange(3.0), [0], 1.0)
    with pytest.raises(ValueError, match=r"at\(\): a unary ufunc takes no second operand"):
        SQ1["cpu"].at(np.arange(3.0), [0], 1.0)
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        SQ1["cpu"].at(np.arange(3.0), [9])
    with pytest.raises(ValueError, match="read-only"):
        SQ1["cpu"].at(np.broadcast_to(np.arange(3.0), (3,)), [0])


def test_gufunc_layout_fixed_size_beyond_int64():
    # (pybind11's "incompatible constructor arguments" TypeError from the engine)
    with pytest.raises(ValueError, match="fixed size 99999999999999999999 does not fit int64"):
        guvectorize(["void(float64[:], float64[:])"], "(99999999999999999999)->(n)",
                    target="cpu")(_copy)


def _copy(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i]


# ---- signature= with some inputs fixed and others free: the free ones cast safely


ARRAYS = {"f8": np.arange(3.0), "f4": np.arange(3.0, dtype=np.float32), "i8": np.arange(3),
          "i1": np.arange(3, dtype=np.int8)}


@pytest.mark.parametrize("x", list(ARRAYS))
@pytest.mark.parametrize("y", list(ARRAYS))
@pytest.mark.parametrize("sig", [("f4", None, None), (None, "f4", None), ("f8", None, None),
                                 ("f4", None, "f8"), (None, None, "f4"), ("f4", "f4", None)])
@pytest.mark.parametrize("casting", ["same_kind", "unsafe", "safe"])
def test_partial_signature_as_numpy(x, y, sig, casting):
    # (add(f8, f8, signature=("f4", None, None)) ran the float32 loop; NumPy has no loop)
    f = ADD_SIG
    a, b = ARRAYS[x], ARRAYS[y]
    try:
        expected = np.add(a, b, signature=sig, casting=casting)
    except TypeError:
        with pytest.raises(TypeError):
            f(a, b, signature=sig, casting=casting)
        return
    got = f(a, b, signature=sig, casting=casting)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


ADD_SIG = vectorize(["int8(int8, int8)", "int64(int64, int64)", "float32(float32, float32)",
                     "float64(float64, float64)"], target="cpu")(add_fn)


# ---- ufunc.at with a Python int its dtype cannot hold wraps, as NumPy's at casts it

AT_SMALL = {t: vectorize(["int8(int8, int8)", "uint8(uint8, uint8)", "int64(int64, int64)"],
                         target=t)(add_fn) for t in TARGETS}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype,b", [(np.uint8, -1), (np.int8, 300), (np.uint8, 1000)])
def test_at_python_int_wraps_as_numpy(target, dtype, b):
    # (OverflowError "Python integer -1 out of bounds for uint8": decrementing a uint8
    # counter with add.at(counts, i, -1) failed)
    got, expected = np.arange(4, dtype=dtype), np.arange(4, dtype=dtype)
    AT_SMALL[target].at(got, [0, 0, 3], b)
    np.add.at(expected, [0, 0, 3], b)
    np.testing.assert_array_equal(got, expected)


def test_at_python_int_wraps_device_indices():
    d = cuda.to_device(np.arange(4, dtype=np.uint8))
    AT_SMALL["cuda"].at(d, cuda.to_device(np.array([0, 0, 3])), -1)
    expected = np.arange(4, dtype=np.uint8)
    np.add.at(expected, [0, 0, 3], -1)
    np.testing.assert_array_equal(d.copy_to_host(), expected)


def test_at_python_int_beyond_int64_still_overflows():
    with pytest.raises(OverflowError):
        AT_SMALL["cpu"].at(np.arange(4), [0], 2**70)
