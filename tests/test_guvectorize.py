"""guvectorize: layouts, core dimensions, loop broadcasting, outputs and errors.

References are NumPy implementations (matmul, sums, normalisation) and the Python
function itself run on NumPy arrays.
"""

import sys

import numpy as np
import pytest

from numbacuda_ufunc import cuda, errors, float32, guvectorize, void
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.ufuncs.gufunc import parse_layout


@guvectorize(["void(float64[:,:], float64[:,:], float64[:,:])",
              "void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)")
def matmul(a, b, out):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0.0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            out[i, j] = acc


@guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def row_sum(x, res):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i]
    res[0] = acc


@guvectorize([void(float32, float32[:], float32[:], float32[:])], "(),(n),(n)->(n)")
def saxpy(a, x, y, out):
    for i in range(len(x)):
        out[i] = a * x[i] + y[i]


@guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def normalize(x, out):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i]
    norm = total ** 0.5
    for i in range(x.shape[0]):
        out[i] = x[i] / norm


@guvectorize(["void(float64[:], float64[:], float64[:])"], "(n)->(),()")
def min_max(x, lo, hi):
    lo[0] = x[0]
    hi[0] = x[0]
    for i in range(1, x.shape[0]):
        lo[0] = min(lo[0], x[i])
        hi[0] = max(hi[0], x[i])


def test_seed_doubled_gufunc_into_device_out():
    @guvectorize(
        [(float32[:, :], float32[:, :])],
        "(m,n)->(m,n)",
        target="cuda"
    )
    def doubled_gufunc(arr, out):
        for i in range(arr.shape[0]):
            for j in range(arr.shape[1]):
                out[i, j] = arr[i, j] * 2

    arr = np.random.randn(3, 3).astype(np.float32)
    out = cuda.device_array_like(arr)
    doubled_gufunc(arr, out)
    out = out.copy_to_host()
    np.testing.assert_array_equal(out, arr * 2)


@pytest.mark.parametrize("batch", [(), (7,), (3, 4)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_over_0_1_2_loop_dimensions(batch, dtype):
    rng = np.random.default_rng(len(batch))
    a = rng.standard_normal(batch + (4, 3)).astype(dtype)
    b = rng.standard_normal(batch + (3, 5)).astype(dtype)
    got = matmul(a, b)
    assert got.shape == batch + (4, 5) and got.dtype == dtype
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_loop_dimensions_broadcast_like_numpy():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 1, 4, 3))
    b = rng.standard_normal((6, 3, 5))
    np.testing.assert_allclose(matmul(a, b), np.matmul(a, b), rtol=1e-12)
    np.testing.assert_allclose(matmul(a[0, 0], b), np.matmul(a[0, 0], b), rtol=1e-12)


def test_any_strides_are_read_in_place():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((6, 8, 6))[::2, ::-2, 1:4]
    b = np.asfortranarray(rng.standard_normal((3, 5)))
    np.testing.assert_allclose(matmul(a, b), np.matmul(a, b), rtol=1e-12)
    d_a = cuda.to_device(np.ascontiguousarray(a))
    got = matmul(d_a[:, ::-1], b)
    assert isinstance(got, cuda.DeviceNDArray)
    np.testing.assert_allclose(got.copy_to_host(), np.matmul(a[:, ::-1], b), rtol=1e-12)


def test_scalar_core_argument_and_saxpy():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.ones(4, np.float32)
    np.testing.assert_allclose(saxpy(np.float32(2), x, y), 2 * x + y)
    scale = np.array([1, 2, 3], np.float32)  # one `()` element per loop index
    np.testing.assert_allclose(saxpy(scale, x, y), scale[:, None] * x + y)
    np.testing.assert_allclose(saxpy(0.5, x, y), 0.5 * x + y)


def test_reduction_to_scalar_cores_and_several_outputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 9))
    np.testing.assert_allclose(row_sum(x), x.sum(axis=1), rtol=1e-12)
    one = row_sum(x[0])
    assert isinstance(one, np.float64)
    np.testing.assert_allclose(one, x[0].sum(), rtol=1e-12)
    lo, hi = min_max(x)
    np.testing.assert_array_equal(lo, x.min(axis=1))
    np.testing.assert_array_equal(hi, x.max(axis=1))
    np.testing.assert_allclose(normalize(x), x / np.linalg.norm(x, axis=1, keepdims=True))


def test_fixed_size_core_dimension():
    @guvectorize(["void(float64[:,:], float64[:])"], "(n,3)->(n)")
    def lengths(v, out):
        for i in range(v.shape[0]):
            out[i] = (v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2) ** 0.5

    v = np.random.default_rng(8).standard_normal((4, 6, 3))
    np.testing.assert_allclose(lengths(v), np.linalg.norm(v, axis=-1), rtol=1e-12)
    with pytest.raises(ValueError, match="fixes it to 3"):
        lengths(np.ones((4, 2)))


def test_outputs_positional_keyword_and_tuple():
    x = np.random.default_rng(9).standard_normal((4, 6))
    lo, hi = np.full(4, np.nan), np.full(4, np.nan)
    result = min_max(x, lo, hi)
    assert result[0] is lo and result[1] is hi
    np.testing.assert_array_equal(lo, x.min(axis=1))
    lo2, hi2 = np.full(4, np.nan), np.full(4, np.nan)
    result = min_max(x, out=(lo2, hi2))
    assert result[0] is lo2 and result[1] is hi2
    np.testing.assert_array_equal(hi2, x.max(axis=1))
    out = np.full((4, 6), np.nan)
    assert normalize(x, out=out) is out
    # NumPy raises TypeError, Numba's gufuncs ValueError with these words: it is both.
    for kwargs in ({}, {"keepdims": False}):  # the engine's path and the keywords' one
        with pytest.raises(TypeError, match="^cannot specify argument 'out' as both "
                                            "positional and keyword$") as err:
            normalize(x, out, out=out, **kwargs)
        assert isinstance(err.value, ValueError)
        assert isinstance(err.value, errors.DuplicateOutputError)
    with pytest.raises(TypeError, match="out must be a tuple of 2"):
        min_max(x, out=(lo,))


def test_outputs_passed_in_are_read_write():
    @guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
    def accumulate(x, acc):
        for i in range(x.shape[0]):
            acc[i] += x[i]

    x = np.arange(5.0)
    host_acc = np.full(5, 10.0)
    accumulate(x, host_acc)
    np.testing.assert_array_equal(host_acc, 10.0 + x)
    dev_acc = cuda.to_device(np.full(5, 1.0))
    accumulate(x, dev_acc)
    np.testing.assert_array_equal(dev_acc.copy_to_host(), 1.0 + x)


def test_writable_args_control_host_write_back():
    def body(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i]
            x[i] = -1.0

    plain = guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")(body)
    listed = guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", writable_args=("x",))(body)
    x = np.arange(4.0)
    np.testing.assert_array_equal(plain(x), np.arange(4.0))
    np.testing.assert_array_equal(x, np.arange(4.0))      # not copied back (Numba's rule)
    listed(x)
    np.testing.assert_array_equal(x, np.full(4, -1.0))    # copied back
    assert listed.writable_args == (0,)


def test_output_only_dimension_needs_out():
    @guvectorize(["void(float64[:], float64[:])"], "()->(k)")
    def fill(v, out):
        for i in range(out.shape[0]):
            out[i] = v[0] * i

    with pytest.raises(ValueError, match="cannot infer the size of dimension 'k'"):
        fill(np.arange(3.0))
    out = np.full((3, 4), np.nan)
    fill(np.arange(3.0), out)
    np.testing.assert_array_equal(out, np.arange(3.0)[:, None] * np.arange(4))


def test_casting_inputs_and_outputs():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.ones((3, 2), np.float32)
    got = matmul(a, b)  # int32 -> float64 loop (first safe one)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, a @ b)
    out32 = np.zeros((2, 2), np.float32)
    matmul(a.astype(np.float64), b.astype(np.float64), out32)
    np.testing.assert_allclose(out32, a @ b)
    d_out = cuda.device_array((2, 2), np.float32)
    matmul(cuda.to_device(a.astype(np.float64)), b.astype(np.float64), d_out)
    np.testing.assert_allclose(d_out.copy_to_host(), a @ b)
    with pytest.raises(TypeError, match="cannot cast"):
        matmul(a.astype(np.float64), b.astype(np.float64), np.zeros((2, 2), np.int32))


@pytest.mark.parametrize("target", ["cpu", "parallel"])
def test_host_targets(target):
    g = guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", target=target)(normalize.py_func)
    x = np.random.default_rng(10).standard_normal((300, 8))
    np.testing.assert_allclose(g(x), x / np.linalg.norm(x, axis=1, keepdims=True))


def test_attributes_and_generated_kernels_compile_with_nvrtc():
    from numbacuda_ufunc import _core

    assert matmul.signature == "(m,n),(n,p)->(m,p)"
    assert (matmul.nin, matmul.nout, matmul.nargs, matmul.ntypes) == (2, 1, 3, 2)
    assert matmul.types == ["dd->d", "ff->f"] and matmul.__name__ == "matmul"
    assert all("nu::array" in src for src in matmul.inspect_cuda().values())
    matmul(np.ones((2, 2)), np.ones((2, 2)))
    matmul(np.ones((3, 2, 2)), np.ones((2, 2)))
    for entry, source in matmul._kernel_sources() + saxpy._kernel_sources():
        assert f".entry {entry}(" in _core.compile_ptx(source, (9, 0))


def test_dask_apply_gufunc():
    da = pytest.importorskip("dask.array")
    x = np.random.default_rng(11).standard_normal((40, 6))
    dx = da.from_array(x, chunks=(10, 6))
    got = da.apply_gufunc(normalize, normalize.signature, dx, output_dtypes=np.float64).compute()
    np.testing.assert_allclose(got, x / np.linalg.norm(x, axis=1, keepdims=True))


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("layout,token", [
    ("(m,n)->", "got the end"), ("(m,n)(n)->()", "expected '->'"), ("(m,,n)->()", "got ','"),
    ("(m-n)->()", "unexpected '-'"), ("(m)->(m)x", "got 'x'"),
])
def test_malformed_layouts(layout, token):
    with pytest.raises(ValueError, match=token):
        parse_layout(layout)
    with pytest.raises(ValueError, match="malformed layout"):
        guvectorize(["void(float64[:], float64[:])"], layout)(lambda a, b: None)


def test_decoration_errors():
    with pytest.raises(TypeError, match="guvectorized functions cannot return values"):
        guvectorize(["float64(float64[:], float64[:])"], "(n)->(n)")(lambda a, b: None)
    with pytest.raises(TypeError, match="has 1 dimension"):
        guvectorize(["void(float64[:], float64[:])"], "(m,n)->(n)")(lambda a, b: None)
    with pytest.raises(TypeError, match="layout .* has 2 operand"):
        guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")(lambda a, b, c: None)
    with pytest.raises(TypeError, match="must be an array"):
        guvectorize(["void(float64[:], float64)"], "(n)->()")(lambda a, b: None)
    with pytest.raises(TypeError, match="The following target options are not supported: "
                                        "'bogus', 'nopythn'"):
        guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", nopythn=True, bogus=1)
    with pytest.raises(TypeError, match="nopython=False is not supported"):
        guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", nopython=False)
    with pytest.warns(RuntimeWarning, match="nopython kwarg for cuda target is redundant"):
        guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", nopython=True)
    with pytest.raises(TypeError, match=r"guvectorized functions cannot return values: "
                                        r"signature int32\(int32\[:\], int32\[:\]\) "
                                        r"specifies int32 return type"):
        guvectorize(["int32(int32[:], int32[:])"], "(n)->(n)")(lambda a, b: None)
    with pytest.raises(ValueError, match="writable_args names 'out'"):
        guvectorize(["void(float64[:], float64[:])"], "(n)->(n)",
                    writable_args=("out",))(lambda x, out: None)


def test_call_errors_name_argument_dimension_and_sizes():
    with pytest.raises(ValueError, match="dimension 'n' of argument 2 has size 4, but an earlier "
                                         "argument gave it size 3"):
        matmul(np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"argument 1 has 1 dimension\(s\), but its core "
                                         r"signature \(m,n\) needs at least 2"):
        matmul(np.ones(3), np.ones((3, 2)))
    with pytest.raises(TypeError, match=r"gufunc accepts 2 positional arguments \(the inputs\) "
                                        r"or 3 positional arguments \(inputs and outputs\)\. "
                                        r"Got 1 positional argument\."):
        matmul(np.ones((2, 2)))
    with pytest.raises(ValueError, match="dimension 'm' of output 1 has size 3, but an earlier "
                                         "argument gave it size 2"):
        matmul(np.ones((2, 2)), np.ones((2, 2)), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"output 1 has shape \(1, 2, 2\), but the call needs "
                                         r"\(3, 2, 2\) \(outputs are not broadcast\)"):
        matmul(np.ones((3, 2, 2)), np.ones((2, 2)), np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="could not be broadcast"):
        matmul(np.ones((3, 2, 2)), np.ones((4, 2, 2)))
    with pytest.raises(TypeError, match="no loop matches the input types"):
        matmul(np.ones((2, 2), np.complex128), np.ones((2, 2)))


def test_compile_ptx_takes_array_signatures():
    ptx, ret = cuda.compile_ptx(matmul.py_func, "void(f8[:,:], f8[:,:], f8[:,:])", device=False,
                                cc=(9, 0))
    assert ret is void and ".entry" in ptx and ".target sm_90" in ptx  # Numba: types.void


@pytest.mark.gpu
def test_cupy_operands_give_cupy_results():
    cp = pytest.importorskip("cupy")
    a = cp.random.random((5, 4, 3))
    b = cp.random.random((3, 2))
    got = matmul(a, b)
    assert isinstance(got, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(got), np.matmul(cp.asnumpy(a), cp.asnumpy(b)), rtol=1e-12)


def test_gufunc_cannot_be_called_from_a_kernel():
    @guvectorize(["void(int32[:], int32[:])"], "(n)->(n)", target="cuda")
    def gufunc_copy(a, b):
        for i in range(a.shape[0]):
            b[i] = a[i]

    def k(a, b):
        gufunc_copy(a, b)

    with pytest.raises(CompileError, match="Untyped global name 'gufunc_copy': a guvectorize "
                                           "gufunc cannot be called"):
        cuda.jit(k)[1, 1](np.zeros(3, np.int32), np.zeros(3, np.int32))


def numbas_part(exc):
    """The message without our explanation: a note on Python 3.11+, appended in
    parentheses before (no add_note)."""
    text = str(exc)
    if sys.version_info < (3, 11) and text.endswith(")"):
        text = text.rsplit(" (", 1)[0]
    return text


def test_option_errors_carry_numbas_exact_messages():
    with pytest.raises(TypeError) as info:
        guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", nopython=False)(
            lambda a, b: None)
    assert numbas_part(info.value) == "nopython flag must be True"
    with pytest.raises(TypeError) as info:
        guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", what1=True, ever2=False)(
            lambda a, b: None)
    head, _, names = numbas_part(info.value).partition(": ")
    assert head == "The following target options are not supported"
    assert {n.strip("' ") for n in names.split(",")} == {"what1", "ever2"}


# ---- dtype=, signature= and casting= choose the loop as NumPy's type resolution does


def _matmul_loops(target):
    return guvectorize(["void(float64[:,:], float64[:,:], float64[:,:])",
                        "void(float32[:,:], float32[:,:], float32[:,:])",
                        "void(int64[:,:], int64[:,:], int64[:,:])"],
                       "(m,n),(n,p)->(m,p)", target=target)(matmul.py_func)


@pytest.mark.parametrize("target", ["cuda", "cpu"])
@pytest.mark.parametrize("keywords", [
    {"dtype": np.float32}, {"signature": "ff->f"},
    {"sig": (None, None, np.float32)}, {"casting": "no"}, {"casting": "safe"},
    {"dtype": np.int64, "casting": "unsafe"}, {"signature": ("f8", "f8", None)},
    {"axes": [(1, 2), (1, 2), (2, 1)], "dtype": np.float32}],
    ids=lambda k: ",".join(f"{a}={v}" for a, v in k.items()))
def test_type_keywords_choose_numpys_loop(target, keywords):
    g = _matmul_loops(target)
    a = np.arange(12.0).reshape(3, 2, 2) - 5.5
    b = a[::-1] * 0.5
    with np.errstate(all="ignore"):
        want = np.matmul(a, b, **keywords)
    got = g(a, b, **keywords)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("keywords,match", [
    ({"dtype": np.int64}, "no loop matching the specified signature"),  # float64 -> int64
    ({"signature": ("f4", None, None)}, "no loop matching"),  # a free float64 input
    ({"casting": "no", "dtype": np.float32}, "no loop matching"),
    ({"dtype": np.float32, "signature": "ff->f"}, "cannot specify both"),
    ({"signature": "ff->ff"}, "has 4 types, the gufunc has 2 input"),
    ({"signature": 5}, "must be a string such as 'ff->f'"),
    ({"casting": "sometimes"}, "casting must be one of"),
])
def test_type_keyword_errors(keywords, match):
    g = _matmul_loops("cpu")
    a = np.ones((2, 2, 2))
    with pytest.raises((TypeError, ValueError), match=match):
        g(a, a, **keywords)
    with pytest.raises((TypeError, ValueError)):  # NumPy refuses each of them too
        np.matmul(a, a, **keywords)


def test_type_keywords_on_device_arrays_and_out():
    g = _matmul_loops("cuda")
    a = np.arange(8.0).reshape(2, 2, 2)
    d = cuda.to_device(a)
    r = g(d, d, dtype=np.float32)
    assert isinstance(r, cuda.DeviceNDArray) and r.dtype == np.float32
    np.testing.assert_array_equal(r.copy_to_host(), np.matmul(a, a, dtype=np.float32))
    out = np.zeros((2, 2, 2), np.float32)
    g(a, a, out=out, casting="same_kind")  # the float64 loop's result cast same_kind
    np.testing.assert_array_equal(out, np.matmul(a, a).astype(np.float32))
    with pytest.raises(TypeError, match="cannot cast output 0 from the loop's float64 to "
                                        "float32 with casting rule 'safe'"):
        g(a, a, out=out, casting="safe")
