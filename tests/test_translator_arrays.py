"""Array arguments in translated functions (gufunc-style bodies), run on the host backend
(and compiled by NVRTC to PTX) against the Python function run on NumPy views of every
layout; and the CompileErrors for array uses outside the subset."""

import linecache
import math
import re

import _hostrun_arrays as ha
import numpy as np
import pytest

from numbacuda_ufunc import (
    bool_,
    complex64,
    complex128,
    cuda,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint32,
    uint64,
)
from numbacuda_ufunc.compiler import translate
from numbacuda_ufunc.errors import CompileError

A1 = {t: t[:] for t in (bool_, int16, int32, int64, float32, float64, complex64, complex128)}
A2 = {t: t[:, :] for t in (int32, float32, float64, complex128)}
A3 = {t: t[:, :, :] for t in (float32, float64)}


# ---- functions under test ------------------------------------------------------------------

def doubled_gufunc(arr, out):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            out[i, j] = arr[i, j] * 2


def matmul(a, b, out):
    m, n = a.shape
    p = b.shape[1]
    for i in range(m):
        for j in range(p):
            s = 0
            for k in range(n):
                s += a[i, k] * b[k, j]
            out[i, j] = s


def _weighted(v, out, k):
    out[k] = len(v)
    out[k + 1] = 0
    for i in range(len(v)):
        out[k + 1] += v[i] * (i + 1)


def slices(a, out):
    # Python slice semantics on views: clamped and negative bounds, negative steps, empty.
    _weighted(a[1:], out, 0)
    _weighted(a[:-2], out, 2)
    _weighted(a[::2], out, 4)
    _weighted(a[::-1], out, 6)
    _weighted(a[-3:7], out, 8)
    _weighted(a[5:1:-2], out, 10)
    _weighted(a[100:], out, 12)
    _weighted(a[-100:2], out, 14)
    _weighted(a[3:3], out, 16)
    _weighted(a[1:-1:3], out, 18)


def slice_rows_columns(a, out):
    # a[i, :], a[:, j], a[1:, ::-1]: views of a 2-d array, their sums and shapes.
    for i in range(a.shape[0]):
        r = a[i, :]
        out[0, i] = 0
        for j in range(r.size):
            out[0, i] += r[j]
    for j in range(a.shape[1]):
        c = a[:, j]
        out[1, j] = 0
        for i in range(len(c)):
            out[1, j] += c[i] * (i + 1)
    t = a[1:, ::-1]
    out[2, 0] = t.shape[0]
    out[2, 1] = t.shape[1]
    out[2, 2] = t[0, 0]
    out[2, 3] = t[-1, -1]


def matmul_inplace_acc(a, b, out):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = 0
            for k in range(len(b)):
                out[i, j] += a[i][k] * b[k][j]


def row_sums(a, out):
    for i in range(a.shape[0]):
        s = 0.0
        for x in a[i]:
            s += x
        out[i] = s


def normalise(a, out):
    total = 0.0
    for x in a:
        total += x * x
    norm = math.sqrt(total)
    for i in range(len(a)):
        out[i] = a[i] / norm if norm > 0 else 0.0


def saxpy(alpha, x, y, out):
    for i in range(x.size):
        out[i] = alpha * x[i] + y[i]


def ends(a, out):
    out[0] = a[-1]
    out[-1] = a[0]
    out[1] = a[-2] - a[1]


def corners(a, out):
    out[0] = a[0, 0] + a[-1, -1]
    out[1] = a[-1][0]
    out[2] = a[0, -1] * 2


def rows_3d(a, out):
    for i in range(a.shape[0]):
        plane = a[i]
        for j in range(plane.shape[0]):
            row = plane[j]
            acc = row[0]
            for k in range(1, len(row)):
                acc = max(acc, a[i, j][k])
            out[i, j] = acc + a[i][j, 0] - a[i][j][0]


def scale_rows(a, f):
    for row in a:
        for j in range(len(row)):
            row[j] *= f


def pick(a, i, j, out):
    out[0] = a[i, j]
    out[1] = a[j, i]
    idx = (i, j)
    out[2] = a[idx]


def shape_facts(a):
    m, n = a.shape
    return m * 1000 + n * 100 + a.size * 10 + a.ndim + len(a) + len(a.shape) + a.shape[-1]


def shape_facts_1d(a):
    (n,) = a.shape
    return n * 100 + a.shape[0] * 10 + a.shape[-1] + a.size + a.ndim + len(a.shape)


def shape_facts_3d(a):
    p, q, r = a.shape
    return p * 10000 + q * 100 + r + a.size + a.ndim * 7 + len(a.shape)


def updates(a, out):
    out[0] += a[0]
    out[1] -= a[1] * 3
    out[2] *= 2
    out[3] = 7
    out[3] //= 2
    out[4] = a[2] % 5
    out[4] **= 2


def stores_cast(a, out):
    for i in range(len(a)):
        out[i] = a[i] * 2.5  # a float32 result, truncated toward zero into int16
    out[0] = 3
    out[1] = 2.75


def positive_mask(a, mask):
    for i in range(len(a)):
        mask[i] = a[i] > 0


def count_true(mask, out):
    out[0] = 0
    for m in mask:
        if m:
            out[0] += 1


def complex_parts(z, out):
    for i in range(len(z)):
        out[i] = z[i] * z[i].conjugate() + z[i].imag


def alias_local(a, out):
    b = out
    b[0] = 1
    c = a
    if a[0] > 0:
        c = out
    b[1] = c[0] + a[1]


def swap_names(a, b, out):
    x, y = a, b
    x, y = y, x
    out[0] = x[0] - y[0]


def shift_inplace(a, out):
    for i in range(1, len(a)):
        out[i] = a[i - 1] + 1


def _twice(x):
    return x * 2


def _fill(out, value):
    for i in range(len(out)):
        out[i] = value


def _dot(x, y):
    s = 0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


@cuda.jit(device=True)
def _row_max(row):
    m = row[0]
    for x in row:
        if x > m:  # noqa: PLR1730 (an if inside a device function, on purpose)
            m = x
    return m


def calls(a, b, out):
    _fill(out, 0.5)
    for i in range(a.shape[0]):
        out[i] = _dot(a[i], b) + _row_max(a[i]) + _twice(a[i, 0])


def sum_of_rows(a):
    s = 0.0
    for row in a:
        for x in row:
            s += x
    return s


# (function, argument types, how to make each argument: (kind, shape) of an input view,
#  ("out", shape) of an output view, or a scalar value)
SHAPES2 = (3, 4)


def _specs():
    f32, f64 = A2[float32], A2[float64]
    yield doubled_gufunc, (f32, f32), [SHAPES2, "out"]
    yield doubled_gufunc, (A2[int32], A2[int32]), [SHAPES2, "out"]
    yield doubled_gufunc, (A2[complex128], A2[complex128]), [SHAPES2, "out"]
    yield doubled_gufunc, (float32[:, ::1], float64[::1, :]), [(4, 5), "out"]
    yield matmul, (f32, f32, f32), [(3, 4), (4, 2), ("out", (3, 2))]
    yield matmul, (A2[int32], f64, f64), [(3, 4), (4, 2), ("out", (3, 2))]
    yield matmul_inplace_acc, (f64, f64, f64), [(2, 5), (5, 3), ("out", (2, 3))]
    yield row_sums, (f32, A1[float32]), [(4, 6), ("out", (4,))]
    yield row_sums, (A2[complex128], A1[complex128]), [(3, 2), ("out", (3,))]
    yield normalise, (A1[float32], A1[float32]), [(7,), "out"]
    yield normalise, (A1[float64], A1[float64]), [(5,), "out"]
    yield saxpy, (float32, A1[float32], A1[float32], A1[float32]), \
        [np.float32(1.75), (9,), (9,), "out"]
    yield saxpy, (float64, A1[float32], A1[float64], A1[float64]), \
        [-0.25, (6,), (6,), "out"]
    yield ends, (A1[int16], A1[int16]), [(5,), "out"]
    yield corners, (A2[float64], A1[float64]), [(3, 4), ("out", (3,))]
    yield rows_3d, (A3[float32], A2[float32]), [(2, 3, 4), ("out", (2, 3))]
    yield rows_3d, (A3[float64], A2[float64]), [(3, 2, 5), ("out", (3, 2))]
    yield scale_rows, (A2[float64], float64), [(3, 4), 1.5]
    yield pick, (A2[float32], int8, uint32, A1[float32]), [(4, 5), np.int8(-2), np.uint32(3),
                                                          ("out", (3,))]
    yield pick, (A2[int32], int64, uint64, A1[float64]), [(3, 3), -1, np.uint64(2),
                                                         ("out", (3,))]
    yield shape_facts, (A2[float32],), [(3, 7)]
    yield shape_facts_1d, (A1[bool_],), [(6,)]
    yield shape_facts_3d, (A3[float64],), [(2, 3, 4)]
    yield updates, (A1[int32], A1[int32]), [(5,), (5,)]
    yield updates, (A1[float32], A1[float32]), [(5,), (5,)]
    yield stores_cast, (A1[float32], A1[int16]), [(6,), "out"]
    yield positive_mask, (A1[float64], A1[bool_]), [(8,), "out"]
    yield count_true, (A1[bool_], A1[int64]), [(9,), ("out", (1,))]
    yield complex_parts, (A1[complex64], A1[complex64]), [(6,), "out"]
    yield alias_local, (float64[::1], A1[float64]), [(3,), ("out", (3,))]  # C and A unify
    yield swap_names, (A1[int32], A1[int32], A1[int32]), [(3,), (3,), ("out", (1,))]
    yield calls, (f64, A1[float64], A1[float64]), [(3, 4), (4,), ("out", (3,))]
    yield calls, (f32, A1[float32], A1[float64]), [(2, 5), (5,), ("out", (2,))]
    yield sum_of_rows, (f32,), [(3, 5)]
    yield shift_inplace, (A1[float64], A1[float64]), [(6,), "out"]
    yield slices, (A1[float64], A1[float64]), [(9,), ("out", (21,))]
    yield slices, (A1[int32], A1[int64]), [(4,), ("out", (21,))]
    yield slice_rows_columns, (A2[float64], A2[float64]), [(4, 5), ("out", (3, 5))]


SPECS = list(_specs())


@pytest.fixture(scope="module")
def built():
    cases = [ha.Case(fn, types) for fn, types, _ in SPECS]
    ha.build(cases)
    return cases


def _args(kind, types, makers, rng):
    args, first = [], None
    for t, m in zip(types, makers):
        if not hasattr(t, "ndim"):
            args.append(m)
            continue
        dtype = t.dtype.dtype
        if m == "out":
            args.append(ha.make_view(kind, first, dtype))
        elif m[0] == "out":
            args.append(ha.make_view(kind, m[1], dtype))
        else:
            args.append(ha.make_view(kind, m, dtype, rng))
            first = first or m
    return args


@pytest.mark.parametrize("kind", ha.KINDS)
@pytest.mark.parametrize("index", range(len(SPECS)),
                         ids=[f"{fn.__name__}-{'-'.join(map(str, t))}" for fn, t, _ in SPECS])
def test_arrays_against_python(built, index, kind):
    _, types, makers = SPECS[index]
    rng = np.random.default_rng(index)
    case = built[index]
    ha.check(case, *_args(kind, types, makers, rng))


def test_arrays_inplace_aliasing(built):
    """An output that is the input itself: writes are visible to later reads in order."""
    case = built[[fn for fn, _, _ in SPECS].index(shift_inplace)]
    a = ha.make_view("strided", (6,), np.float64, np.random.default_rng(1))
    ha.check(case, a, a)


def test_arrays_broadcast_output_written_in_order(built):
    case = built[[fn for fn, _, _ in SPECS].index(doubled_gufunc)]
    rng = np.random.default_rng(5)
    src = ha.make_view("C", SHAPES2, np.float32, rng)
    ha.check(case, src, ha.make_view("broadcast", SHAPES2, np.float32))


# ---- the emitted C++ that the gufunc kernel relies on ------------------------------------------

def test_arrays_emitted_contract():
    src = translate(doubled_gufunc, (float32[:, :], float32[:, ::1])).source
    assert "(nu::array<nu::f32, 2> v_arr, nu::array<nu::f32, 2> v_out)" in src
    assert "v_out(v_i, v_j) = nu::mul<nu::f32>(v_arr(v_i, v_j), nu::f32(2.0));" in src
    assert "v_arr.shape[0]" in src and "v_arr.shape[1]" in src
    src = translate(row_sums, (float64[:, :], float64[:])).source
    assert "v_a.row(v_i)" in src
    src = translate(normalise, (float64[:], float64[:])).source
    assert "v_a.shape[0]" in src  # len(a)
    tf = translate(shape_facts, (float64[:, :],))
    assert "v_a.size()" in tf.source and tf.return_type == int64
    assert translate(header_probe, (float64,)).cuda_source.startswith('#include "nu_array.cuh"')


def header_probe(x):
    return x


def test_arrays_layouts_share_code_but_not_symbols():
    c = translate(doubled_gufunc, (float32[:, ::1], float32[:, ::1]))
    a = translate(doubled_gufunc, (float32[:, :], float32[:, :]))
    assert c.name != a.name and c.name.startswith("nu_doubled_gufunc_f4a2f4a2_")
    assert c.source.replace(c.name, "F") == a.source.replace(a.name, "F")


@cuda.jit("f8(f8[:, :], i8)", device=True)
def _trace_from(a, k):
    s = 0.0
    for i in range(k, min(a.shape[0], a.shape[1])):
        s += a[i, i]
    return s


def test_arrays_device_function_eager_signature():
    """Array types in a cuda.jit signature are translated at decoration."""
    (src,) = _trace_from.inspect_cuda().values()
    assert "(nu::array<nu::f64, 2> v_a, nu::i64 v_k)" in src
    case = ha.Case(_trace_from, (float64[:, :], int64))
    ha.build([case], nvrtc=False)
    ha.check(case, ha.make_view("negative", (4, 3), np.float64, np.random.default_rng(3)), 1)


def test_arrays_signature_strings():
    tf = translate(saxpy, "void(f4, f4[:], f4[:], f4[::1])")
    assert tf.return_type is None
    assert "nu::array<nu::f32, 1> v_out" in tf.source


# ---- errors ---------------------------------------------------------------------------------

def index_scalar(x, out):
    out[0] = x[0]


def too_many(a):
    return a[0, 1, 2]


def float_index(a, x):
    return a[x]


def bool_index(a):
    return a[True]


def store_array(a, out):
    out[0] = a


def update_row(a):
    a[0] += 1.0


def return_array(a):
    return a


def return_row(a):
    return a[0]


def add_array(a, out):
    out[0] = (a + 1)[0]


def augment_array(a):
    a += 1


def negate_array(a):
    b = -a
    return b[0]


def compare_array(a):
    return a == 1


def slice_update(a, out):
    a[1:3] += 1  # assignment to a view is supported (test_kernel_slice_assignment.py)


def slice_zero_step(a, out):
    out[0] = a[::0][0]


def array_method(a):
    return a.cumsum()


def array_attribute(a):
    return a.T[0, 0]


def array_real(a):
    return a.imag[0]  # .real/.imag are views of complex arrays only (NumPy makes a copy)


def sqrt_array(a):
    return np.sqrt(a)[0]


def abs_array(a):
    return abs(a)


def cast_array(a):
    return np.float32(a)


def complex_into_float(z, out):
    out[0] = z[0]


def big_into_int8(out):
    out[0] = 300


def shape_1d_whole(a):
    s = a.shape
    return s[0]


def shape_unpack_wrong(a):
    m, _ = a.shape
    return m


def shape_variable_index(a, k):
    return a.shape[k]


def test_shape_index_known_at_run_time():
    # Python's negative indices; out of range a ufunc, which cannot raise, reads 0 (a
    # kernel raises IndexError: tests/test_kernel_exceptions.py).
    from numbacuda_ufunc import guvectorize

    @guvectorize(["void(float64[:, :], int64, int64[:])"], "(m,n),()->()", target="cuda")
    def shape_at(a, k, out):
        out[0] = shape_variable_index(a, k)

    got = shape_at(np.zeros((3, 4)), np.arange(-3, 3))
    np.testing.assert_array_equal(got, [0, 3, 4, 3, 4, 0])


@cuda.jit
def layout_attributes(a, out):
    # Numba's array attributes beside shape: strides (bytes), itemsize, nbytes
    out[0] = a.strides[0]
    out[1] = a.strides[-1]
    s0, s1 = a.strides
    out[2] = s0 - s1
    t = a.strides
    out[3] = t[1]
    out[4] = a.itemsize
    out[5] = a.nbytes
    out[6] = len(a.strides)
    k = out.size - 7
    out[7] = a.strides[k]  # an index known at run time


def test_strides_itemsize_nbytes_match_numpy():
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    # on the host backend every layout is read in place; on a GPU a host array arrives in
    # its order='K' copy (test_kernels: test_host_arrays_reach_the_gpu_in_their_own_layout)
    layouts = [base, np.asfortranarray(base), base[::2, ::-3], base.T, base.astype(np.int16)]
    for a in layouts:
        out = np.zeros(8, np.int64)
        layout_attributes[1, 1](a, out)
        strides = a.strides if cuda.is_emulated() else np.empty_like(a).strides
        assert list(out) == [strides[0], strides[-1], strides[0] - strides[1], strides[1],
                             a.itemsize, a.nbytes, 2, strides[1]], (a.strides, out)
    for sig, ptx in layout_attributes.inspect_asm().items():  # NVRTC, sm_90
        assert ".entry" in ptx, sig
    with pytest.raises(CompileError, match=r"strides index 2 out of range for a 2-d array"):
        cuda.jit(stride_past_the_end)[1, 1](base, np.zeros(1, np.int64))


def stride_past_the_end(a, out):
    out[0] = a.strides[2]


def rebind_ndim(a):
    b = a
    if a[0, 0] > 0:
        b = a[0]  # both reach the read below: one variable of two types (a dead first
    return b[0]   # value would make two variables, _webs.py)


def assign_tuple_item(x):
    t = (x, x)
    t[0] = 1.0
    return t[1]


def iterate_scalar(x):
    s = 0
    for v in x:
        s += v
    return s


def if_array(a):
    if a:
        return 1
    return 0


ERRORS = [
    (index_scalar, (float32, float32[:]), (r"indexing is supported only on arrays and "
                                           r"tuples \(got float32\)")),
    (too_many, (float64[:, :],), (r"too many indices for array: float64\[:, :\] is "
                                  r"2-dimensional, but 3 were indexed")),
    (float_index, (float64[:], float64), r"array index must be an integer \(got float64\)"),
    (bool_index, (float64[:],), r"boolean array indices"),
    (store_array, (float64[:], float64[:]), (r"cannot store an array \(float64\[:\]\) in an "
                                             r"element of type float64")),
    (update_row, (float64[:, :],), r"cannot update a whole row"),
    (return_array, (float64[:],), r"cannot return an array \(float64\[:\]\)"),
    (return_row, (float64[:, :],), r"cannot return an array"),
    (add_array, (float64[:], float64[:]), (r"operator \+: arithmetic on whole arrays is not "
                                           r"supported")),
    (augment_array, (float64[:],), r"arithmetic on whole arrays is not supported"),
    (negate_array, (float64[:],), r"operand: whole arrays are not supported here"),
    (compare_array, (float64[:],), r"comparison: whole arrays are not supported here"),
    (slice_update, (float64[:], float64[:]), r"updating a slice of float64\[:\] in place"),
    (slice_zero_step, (float64[:], float64[:]), r"slice step cannot be zero"),
    (array_method, (float64[:],), r"array method '\.cumsum\(\)' is not supported"),
    (array_attribute, (float64[:, :],), r"array attribute '\.T' is not supported"),
    (array_real, (float64[:],), r"array attribute '\.imag' is not supported"),
    (sqrt_array, (float64[:],), r"np\.sqrt\(\) on whole arrays needs its output array"),
    (abs_array, (float64[:],), r"abs\(\) on a whole array is not supported"),
    (cast_array, (float64[:],), r"float32\(\) on a whole array is not supported"),
    (complex_into_float, (complex128[:], float64[:]), (r"cannot store a complex value "
                                                       r"\(complex128\) in an element of "
                                                      r"type float64")),
    (big_into_int8, (int8[:],), r"300 out of bounds for int8"),
    (shape_1d_whole, (float64[:],), r"the shape of a 1-d array can be used only as"),
    (shape_unpack_wrong, (float64[:, :, :],), (r"cannot unpack the shape of a 3-d array "
                                               r"into 2 names")),
    (rebind_ndim, (float64[:, :],), r"variable 'b' is assigned incompatible types"),
    (assign_tuple_item, (float64,), r"tuples are immutable"),
    (iterate_scalar, (float64,), (r"for loops are supported only over range\(\.\.\.\), "
                                  r"arrays and tuples")),
    (if_array, (float64[:],), r"if condition: whole arrays are not supported here"),
]


@pytest.mark.parametrize("fn,types,match", ERRORS, ids=[e[0].__name__ for e in ERRORS])
def test_arrays_error(fn, types, match):
    with pytest.raises(CompileError, match=match) as info:
        translate(fn, types)
    # Errors point at the user's code: file:line and that source line.
    msg = str(info.value)
    where = re.search(r"test_translator_arrays\.py:(\d+)", msg)
    assert where, msg
    line = linecache.getline(__file__, int(where.group(1))).strip()
    assert line and line in msg


def test_arrays_translate_rejects_0d():
    from numbacuda_ufunc.types import Array
    with pytest.raises(CompileError, match=r"at least one dimension"):
        translate(return_array, (Array(float64, 0),))
