"""Record (structured) dtypes in kernels: field access, records by reference, shared and
local arrays of records, device arrays, layouts (packed, aligned, explicit offsets, nested,
sub-arrays), NVRTC compiles of every kernel here, and errors.

The oracle is the Python function itself, run on a NumPy recarray (whose elements allow
``r.x`` as Numba's records do), or NumPy's own field views."""

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError

RNG = np.random.default_rng(20261122)

PACKED = np.dtype([("x", np.float64), ("y", np.int32), ("z", np.int8)])  # itemsize 13
ALIGNED = np.dtype([("x", np.float64), ("y", np.int32), ("z", np.int8)], align=True)  # 16
# Fields at chosen offsets with gaps and tail padding, out of declaration order.
OFFSETS = np.dtype({"names": ["y", "x", "z"], "formats": [np.int32, np.float64, np.int8],
                    "offsets": [20, 8, 3], "itemsize": 32})
LAYOUTS = {"packed": PACKED, "aligned": ALIGNED, "offsets": OFFSETS}

SCALAR_FIELDS = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                 np.int64, np.uint64, np.float16, np.float32, np.float64, np.complex64,
                 np.complex128]
ALL_FIELDS = np.dtype([(f"f{k}", t) for k, t in enumerate(SCALAR_FIELDS)], align=True)
ALL_FIELDS_PACKED = np.dtype([(f"f{k}", t) for k, t in enumerate(SCALAR_FIELDS)])


def edge_values(dtype, n):
    """Random values of ``dtype`` with its edge values mixed in."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return RNG.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        edges = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=dt)
    elif dt.kind == "f":
        v = (RNG.standard_normal(n) * 100).astype(dt)
        edges = np.array([np.nan, np.inf, -np.inf, -0.0, np.finfo(dt).max, np.finfo(dt).tiny],
                         dtype=dt)
    else:
        part = np.float32 if dt == np.complex64 else np.float64
        v = (RNG.standard_normal(n) + 1j * RNG.standard_normal(n)).astype(dt)
        edges = np.array([complex(np.nan, 1), complex(-0.0, np.inf), 0j,
                          complex(np.finfo(part).max, -1)], dtype=dt)
    k = min(len(edges), n)
    v[:k] = edges[:k]
    return v


def random_records(dtype, n):
    a = np.zeros(n, dtype)
    for name in dtype.names:
        fdt = dtype.fields[name][0]
        if fdt.subdtype is not None:
            base, shape = fdt.subdtype
            if base.fields is None:
                a[name] = edge_values(base, n * int(np.prod(shape))).reshape((n,) + shape)
        elif fdt.fields is not None:
            a[name] = random_records(fdt, n)
        else:
            a[name] = edge_values(fdt, n)
    return a


def assert_records_equal(got, want):
    """Field by field, NaN equal to NaN, -0.0 told apart from 0.0."""
    assert got.dtype == want.dtype and got.shape == want.shape
    for name in want.dtype.names:
        g, w = got[name], want[name]
        if w.dtype.fields is not None:
            assert_records_equal(g, w)
            continue
        np.testing.assert_array_equal(g, w, err_msg=f"field {name!r}")
        if w.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w), err_msg=name)


def run_python(pyfunc, n, *arrays):
    """Run a device-function body in Python on recarray views (the oracle)."""
    views = [a.view(np.recarray) if a.dtype.fields is not None else a for a in arrays]
    for i in range(n):
        pyfunc(*views, i)


# ---- field access ----------------------------------------------------------------------------


@cuda.jit(device=True)
def shuffle_fields(a, out, i):
    r = a[i]
    out[i] = r.x + a[i]["y"]
    a[i].y = i * 3 - 7
    a[i]["z"] = -i
    r.x += 1.5


@cuda.jit
def shuffle_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        shuffle_fields(a, out, i)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_field_read_write_forms(layout):
    dtype = LAYOUTS[layout]
    a = random_records(dtype, 37)
    a["x"][:4] = [np.nan, -0.0, np.inf, 1e300]
    want, want_out = a.copy(), np.full(37, -1.0)
    run_python(shuffle_fields.py_func, 37, want, want_out)
    out = np.full(37, -1.0)
    shuffle_kernel[2, 32](a, out)
    assert_records_equal(a, want)
    np.testing.assert_array_equal(out, want_out)


@cuda.jit
def field_views(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a.x[i] * 2 + a["y"][i]
        a.y[i] = a.z[i] + 1
        a["x"][i] -= 0.25


@pytest.mark.parametrize("layout", ["aligned", "offsets"])
def test_field_views_of_record_arrays(layout):
    dtype = LAYOUTS[layout]
    a = random_records(dtype, 50)
    a["z"] = np.clip(a["z"], -100, 100)
    want = a.copy()
    with np.errstate(over="ignore"):
        want_out = want["x"] * 2 + want["y"]
    want["y"] = want["z"] + 1
    want["x"] -= 0.25
    out = np.full(50, np.nan)
    field_views[1, 64](a, out)
    assert_records_equal(a, want)
    np.testing.assert_array_equal(out, want_out)


@cuda.jit(device=True)
def cast_every_field(a, b, i):
    # Every field type read, run through arithmetic, and written back with NumPy's casts.
    r = a[i]
    s = b[i]
    s.f0 = not r.f0
    s.f1 = r.f1 + 1
    s.f2 = r.f2 ^ 255
    s.f3 = -r.f3
    s.f4 = r.f4 // 3
    s.f5 = r.f5 * 3
    s.f6 = r.f6 >> 1
    s.f7 = r.f7 - 1
    s.f8 = r.f8 | 1
    s.f9 = r.f9 * 2
    s.f10 = r.f10 / 4
    s.f11 = r.f11 - 0.5
    s.f12 = r.f12 * 1j
    s.f13 = r.f13.conjugate()


@cuda.jit
def cast_every_field_kernel(a, b):
    i = cuda.grid(1)
    if i < a.shape[0]:
        cast_every_field(a, b, i)


@pytest.mark.parametrize("dtype", [ALL_FIELDS, ALL_FIELDS_PACKED], ids=["aligned", "packed"])
def test_every_scalar_field_type(dtype):
    n = 40
    a = random_records(dtype, n)
    b = random_records(dtype, n)
    want = b.copy()
    with np.errstate(all="ignore"):
        run_python(cast_every_field.py_func, n, a.copy(), want)
    cast_every_field_kernel[1, 64](a, b)
    assert_records_equal(b, want)


@cuda.jit
def copy_records(a, idx):
    i = cuda.grid(1)
    if i < idx.shape[0]:
        a[i] = a[idx[i]]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_whole_record_assignment(layout):
    a = random_records(LAYOUTS[layout], 10)
    want = a.copy()
    idx = np.array([9, 8, 7, 6, 5])  # the kernel's threads read rows 5..9, write rows 0..4
    want[:5] = want[idx]
    copy_records[1, 8](a, idx)
    assert_records_equal(a, want)


@cuda.jit
def strided_views(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = a[i].y
        a[i].x = i


def test_strided_and_reversed_views():
    base = random_records(ALIGNED, 21)
    want = base.copy()
    view = base[::-3]
    out = np.zeros(view.shape[0], np.int64)
    strided_views[1, 8](view, out)
    np.testing.assert_array_equal(out, want["y"][::-3])
    want["x"][::-3] = np.arange(view.shape[0])
    assert_records_equal(base, want)


@cuda.jit
def grid_of_records(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j].x - a[i, j]["y"]
        a[i, j].z = i * 10 + j


def test_two_dimensional_record_arrays():
    a = random_records(ALIGNED, 12).reshape(3, 4)
    a["z"] = 0
    want = a.copy()
    want["z"] = np.arange(3)[:, None] * 10 + np.arange(4)
    out = np.full((3, 4), np.nan)
    grid_of_records[(1, 1), (4, 4)](a, out)
    np.testing.assert_array_equal(out, a["x"] - a["y"])
    assert_records_equal(a, want)


# ---- records as values: locals, device functions, kernel arguments ----------------------------


@cuda.jit(device=True)
def norm2(r):
    return r.x * r.x + r["y"]


@cuda.jit(device=True)
def scale(r, k):
    r.x = r.x * k
    r.y = r.y - 1


@cuda.jit
def through_device_functions(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        r = a[i]
        out[i] = norm2(r)
        scale(r, 2)  # a reference: writes reach the array


def test_records_passed_to_device_functions_by_reference():
    a = random_records(PACKED, 16)
    a["x"] = RNG.standard_normal(16)
    a["y"] = RNG.integers(-1000, 1000, 16)
    want = a.copy()
    out = np.zeros(16)
    through_device_functions[1, 16](a, out)
    np.testing.assert_array_equal(out, want["x"] ** 2 + want["y"])
    want["x"] *= 2
    want["y"] -= 1
    assert_records_equal(a, want)


@cuda.jit
def record_argument(rec, out):
    out[0] = rec.x + rec["y"]
    rec.z = 42
    rec.x = -rec.x


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_record_scalar_kernel_argument(layout):
    arr = random_records(LAYOUTS[layout], 3)
    arr["x"][1] = 2.5
    arr["y"][1] = -7
    want = arr.copy()
    want["z"][1] = 42
    want["x"][1] = -2.5
    out = np.zeros(1)
    record_argument[1, 1](arr[1], out)  # an np.void viewing arr's memory, as in Numba
    assert out[0] == 2.5 - 7
    assert_records_equal(arr, want)


def test_record_argument_zero_d_array_and_read_only():
    arr = np.zeros((), ALIGNED)
    arr["x"] = 4.0
    out = np.zeros(1)
    record_argument[1, 1](arr, out)
    assert out[0] == 4.0 and arr["z"] == 42 and arr["x"] == -4.0
    frozen = np.zeros(2, ALIGNED)
    frozen["x"] = 3.0
    frozen.flags.writeable = False
    record_argument[1, 1](frozen[0], out)  # runs on a copy: read-only memory is never written
    assert out[0] == 3.0 and frozen["x"][0] == 3.0 and frozen["z"][0] == 0


def test_declared_record_signatures():
    rec = nu.from_dtype(ALIGNED)
    assert isinstance(rec, nu.Record) and rec.dtype == ALIGNED

    @cuda.jit((rec[:], nu.int64))
    def bump(a, k):
        i = cuda.grid(1)
        if i < a.shape[0]:
            a[i].y += k

    a = random_records(ALIGNED, 9)
    a["y"] = np.arange(9)
    bump[1, 16](a, 5)
    np.testing.assert_array_equal(a["y"], np.arange(9) + 5)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        bump[1, 16](random_records(PACKED, 3), 5)
    assert len(bump.overloads) == 1


def test_one_specialization_per_record_dtype():
    @cuda.jit
    def get_y(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[i] = a[i].y

    for dtype in (PACKED, ALIGNED, OFFSETS, PACKED):
        a = random_records(dtype, 5)
        out = np.zeros(5, np.int64)
        get_y[1, 8](a, out)
        np.testing.assert_array_equal(out, a["y"])
    assert len(get_y.overloads) == 3


GLOBAL_RECORDS = random_records(ALIGNED, 5)


@cuda.jit
def read_global_records(out):
    i = cuda.grid(1)
    if i < GLOBAL_RECORDS.shape[0]:
        out[i] = GLOBAL_RECORDS[i].x + GLOBAL_RECORDS[i]["z"]  # frozen in at compile time


@cuda.jit
def iterate_records(a, out):
    total = 0
    for r in a:  # each element, by reference
        total += r.y
        r.z = 1
    out[0] = total


def test_global_record_arrays_and_iteration():
    out = np.zeros(5)
    read_global_records[1, 8](out)
    np.testing.assert_array_equal(out, GLOBAL_RECORDS["x"] + GLOBAL_RECORDS["z"])
    a = random_records(PACKED, 9)
    a["y"] = RNG.integers(-1000, 1000, 9)
    total = np.zeros(1, np.int64)
    iterate_records[1, 1](a, total)
    assert total[0] == a["y"].sum() and (a["z"] == 1).all()


def test_out_of_bounds_record_access_is_reported():
    @cuda.jit(debug=True)  # checked on a GPU too (the host backend always checks)
    def past_the_end(a):
        a[10].x = 1.0

    a = np.zeros(3, ALIGNED)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 3"):
        past_the_end[1, 1](a)
    assert (a["x"] == 0).all()
    assert ".target sm_90" in next(iter(past_the_end.inspect_ptx(cc=(9, 0)).values()))


# ---- nested records and sub-array fields -------------------------------------------------------

INNER = np.dtype([("p", np.int16), ("q", np.float32)], align=True)
NESTED = np.dtype([("a", np.float64), ("n", INNER), ("h", np.float32, (3, 2)),
                   ("v", np.int32, 4), ("m", INNER, 2)], align=True)


@cuda.jit(device=True)
def nested_body(a, out, i):
    r = a[i]
    out[i] = r.n.p + r["n"]["q"] + r.h[2, 1] + r.v[3] + r.m[1].q
    r.n.p = i
    r.n["q"] += 0.5
    for j in range(3):
        for k in range(2):
            r.h[j, k] = j * 10 + k + i
    r.v[0] = -r.v[0]
    r.m[0].p = 7
    inner = r.m[1]
    inner.q = r.a


@cuda.jit
def nested_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        nested_body(a, out, i)


def test_nested_records_and_sub_array_fields():
    n = 11
    a = random_records(NESTED, n)
    for name in ("n", "m"):
        a[name]["p"] = RNG.integers(-100, 100, a[name]["p"].shape)
        a[name]["q"] = RNG.standard_normal(a[name]["q"].shape)
    a["v"] = RNG.integers(-1000, 1000, (n, 4))
    a["h"] = RNG.standard_normal((n, 3, 2))
    a["a"] = RNG.standard_normal(n)
    want, want_out = a.copy(), np.zeros(n)
    run_python(nested_body.py_func, n, want, want_out)
    out = np.zeros(n)
    nested_kernel[1, 16](a, out)
    np.testing.assert_allclose(out, want_out, rtol=1e-6)  # float32 sums, in C's order
    assert_records_equal(a, want)


@cuda.jit
def assign_sub_arrays(src, dest, v, row):
    dest["h"] = src["h"]  # np.copyto: elements cast, shapes broadcast
    dest.v = v
    dest["m"][0]["p"] = 3
    if row.shape[0] == 2:
        dest.h = row  # a (2,) row repeated over the (3, 2) field


def test_assign_whole_sub_array_fields():
    src = random_records(NESTED, 1)
    src["h"] = RNG.standard_normal((1, 3, 2))
    dest = np.zeros(2, NESTED)
    want = dest.copy()
    py_src, py_want = src.view(np.recarray), want.view(np.recarray)  # r.x works on these
    assign_sub_arrays.py_func(py_src[0], py_want[0], 11, np.zeros(3))
    assign_sub_arrays[1, 1](src[0], dest[0], 11, np.zeros(3))
    assert_records_equal(dest, want)
    row = np.array([1.5, -2.5])
    assign_sub_arrays.py_func(py_src[0], py_want[1], np.int64(-4), row)
    assign_sub_arrays[1, 1](src[0], dest[1], np.int64(-4), row)
    assert_records_equal(dest, want)


@cuda.jit(device=True)
def first_of(ary):
    return ary[0]  # a record from an array; the first field from a record


@cuda.jit
def returns_first(arg, res):
    res[0] = first_of(arg)


@cuda.jit
def by_position(r, out):
    r[-1] = r[0] * 2  # fields by position, as NumPy's r[k]
    out[0] = r[1]


def test_records_returned_and_indexed_by_position():
    a = random_records(PACKED, 3)
    res = np.zeros(1, PACKED)
    returns_first[1, 1](a, res)
    assert_records_equal(res, a[:1])
    res2 = np.zeros(1)
    returns_first[1, 1](a[2], res2)
    np.testing.assert_array_equal(res2, a["x"][2:3])
    b = np.zeros(2, PACKED)
    b[1] = (3.0, 17, 0)
    out = np.zeros(1)
    by_position[1, 1](b[1], out)
    assert b["z"][1] == 6 and out[0] == 17


_EXEC_SOURCE = """
def body(a, out, i):
    r = a[i]
    out[i] = r.x + a[i]["y"] + a[i][2]
    r.y = i
    a[i]["x"] *= 2
    a[i].x += 1
    r.z -= 3

def from_exec(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        body(a, out, i)
"""


def test_records_in_functions_without_source():
    # exec()-built: the bytecode front end lifts r.x = v and r.x += v too.
    ns = {"cuda": cuda}
    exec(compile(_EXEC_SOURCE, "<records>", "exec"), ns)
    kernel = cuda.jit(ns["from_exec"])
    a = random_records(ALIGNED, 6)
    a["x"] = RNG.standard_normal(6)
    a["y"] = RNG.integers(-100, 100, 6)
    a["z"] = RNG.integers(-100, 100, 6)
    want, want_out = a.copy(), np.zeros(6)
    run_python(ns["body"], 6, want, want_out)
    out = np.zeros(6)
    kernel[1, 8](a, out)
    assert_records_equal(a, want)
    np.testing.assert_array_equal(out, want_out)
    assert ".target sm_90" in next(iter(kernel.inspect_ptx(cc=(9, 0)).values()))


# ---- shared and local memory -----------------------------------------------------------------

PAIR = np.dtype([("key", np.int32), ("val", np.float64)])
PAIR_TYPE = nu.from_dtype(PAIR)


@cuda.jit
def reverse_through_shared(a, out):
    s = cuda.shared.array(32, dtype=PAIR)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[31 - t]


@cuda.jit
def swap_in_local(a):
    tmp = cuda.local.array(2, PAIR_TYPE)
    i = cuda.grid(1)
    if i < a.shape[0]:
        tmp[0] = a[i]
        tmp[1].key = tmp[0].key * 2
        tmp[1].val = -tmp[0].val
        a[i] = tmp[1]


def make_closure_kernel(rec):
    @cuda.jit
    def sums(a, out):
        s = cuda.shared.array(16, rec)
        t = cuda.threadIdx.x
        s[t].key = a[t].key
        s[t]["val"] = a[t].val
        cuda.syncthreads()
        out[t] = s[(t + 1) % 16].key + s[(t + 1) % 16].val
    return sums


def test_records_in_shared_memory():
    a = random_records(PAIR, 32)
    out = np.zeros(32, PAIR)
    reverse_through_shared[1, 32](a, out)
    assert_records_equal(out, a[::-1])
    assert reverse_through_shared.definition.static_shared_bytes == 32 * PAIR.itemsize


def test_records_in_local_memory():
    a = random_records(PAIR, 20)
    a["key"] = RNG.integers(-1000, 1000, 20)
    want = a.copy()
    want["key"] *= 2
    want["val"] = -want["val"]
    swap_in_local[1, 32](a)
    assert_records_equal(a, want)


@pytest.mark.parametrize("rec", [PAIR, PAIR_TYPE], ids=["dtype", "from_dtype"])
def test_shared_record_dtype_from_closure(rec):
    k = make_closure_kernel(rec)
    a = random_records(PAIR, 16)
    a["key"] = np.arange(16)
    a["val"] = RNG.standard_normal(16)
    out = np.zeros(16)
    k[1, 16](a, out)
    np.testing.assert_array_equal(out, np.roll(a["key"] + a["val"], -1))


# ---- device arrays -------------------------------------------------------------------------------


class _CaiOnly:
    """Exposes only the CUDA array interface of an array, as CuPy or Numba arrays do."""

    def __init__(self, arr):
        self._arr = arr

    @property
    def __cuda_array_interface__(self):
        return self._arr.__cuda_array_interface__


@pytest.mark.parametrize("dtype", [PACKED, ALIGNED, OFFSETS, NESTED],
                         ids=["packed", "aligned", "offsets", "nested"])
def test_device_arrays_keep_numpy_layout(dtype):
    a = random_records(dtype, 7)
    d = cuda.to_device(a)
    assert d.dtype == dtype and d.dtype.itemsize == dtype.itemsize
    assert d.shape == (7,) and d.strides == (dtype.itemsize,)
    assert_records_equal(d.copy_to_host(), a)
    e = cuda.device_array(7, dtype=dtype)
    assert e.dtype == dtype and e.nbytes == 7 * dtype.itemsize
    e.copy_to_device(a)
    into = np.zeros(7, dtype)
    assert e.copy_to_host(into) is into
    assert_records_equal(into, a)
    assert_records_equal(d[2:5].copy_to_host(), a[2:5])
    assert_records_equal(cuda.device_array_like(a).copy_to_host()[:0], a[:0])
    first = d[1]  # one element: a NumPy record, as NumPy indexing gives
    assert isinstance(first, np.void) and first.dtype == dtype
    iface = d.__cuda_array_interface__
    assert iface["typestr"] == f"|V{dtype.itemsize}"
    if dtype is OFFSETS:  # fields out of offset order: NumPy has no descr for them
        assert "descr" not in iface
        with pytest.raises(TypeError, match="unsupported dtype '|V32'"):
            cuda.as_cuda_array(_CaiOnly(d))
        return
    back = cuda.as_cuda_array(_CaiOnly(d))  # another library's view of the same memory
    assert back.dtype == dtype and back.device_pointer == d.device_pointer
    assert_records_equal(back.copy_to_host(), a)
    assert iface["descr"] == dtype.descr
    described = np.dtype(iface["descr"])  # padding comes back as unnamed void fields
    assert described.itemsize == dtype.itemsize
    for n in dtype.names:  # same offsets and sizes (nested records regain their padding)
        assert described.fields[n][1] == dtype.fields[n][1]
        assert described.fields[n][0].itemsize == dtype.fields[n][0].itemsize


def test_kernels_on_device_arrays_of_records():
    a = random_records(ALIGNED, 33)
    d = cuda.to_device(a)
    out = cuda.device_array(33)
    shuffle_kernel[2, 32](d, out)
    want, want_out = a.copy(), np.full(33, -1.0)
    run_python(shuffle_fields.py_func, 33, want, want_out)
    assert_records_equal(d.copy_to_host(), want)
    np.testing.assert_array_equal(out.copy_to_host(), want_out)


def test_byte_swapped_records_are_converted_by_to_device():
    a = np.zeros(3, dtype=[("x", ">f8"), ("y", "<i2")])
    a["x"] = [1.5, -2.0, np.inf]
    d = cuda.to_device(a)
    assert d.dtype == np.dtype([("x", "<f8"), ("y", "<i2")])
    np.testing.assert_array_equal(d.copy_to_host()["x"], a["x"])


# ---- generated C++: one struct per dtype, NumPy's offsets, NVRTC ---------------------------------


def test_struct_matches_numpy_layout():
    src = next(iter(shuffle_kernel.inspect_cuda().values()))
    assert src.count("struct alignas(") >= 1
    for dtype in LAYOUTS.values():
        a = random_records(dtype, 3)
        shuffle_kernel[1, 4](a, np.zeros(3))
    text = "\n".join(shuffle_kernel.inspect_cuda().values())
    for dtype in LAYOUTS.values():
        assert f"== {dtype.itemsize}, " in text  # static_assert(sizeof(...) == itemsize)
        for name in dtype.names:
            assert f"f_{name}, {dtype.fields[name][1]});" in text  # the offset checks
    packed = next(src for sig, src in shuffle_kernel.inspect_cuda().items()
                  if "13 bytes" in sig)
    assert "nu::unaligned<nu::f64> f_x;" in packed  # 13-byte elements: x is not aligned


KERNELS = [shuffle_kernel, field_views, cast_every_field_kernel, copy_records, strided_views,
           grid_of_records, through_device_functions, record_argument, nested_kernel,
           reverse_through_shared, swap_in_local, assign_sub_arrays, returns_first, by_position,
           read_global_records, iterate_records]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.__name__)
def test_every_kernel_compiles_with_nvrtc_for_sm_90(kernel):
    if not kernel.inspect_cuda():
        pytest.skip(f"{kernel.__name__} was not launched in this run")
    for ptx in kernel.inspect_ptx(cc=(9, 0)).values():
        assert ".target sm_90" in ptx and ".entry nu_" in ptx


# ---- errors ----------------------------------------------------------------------------------------


def _launch(kernel, *args):
    kernel[1, 1](*args)


def test_missing_field_names_field_and_dtype():
    @cuda.jit
    def bad(a):
        a[0].nope = 1

    with pytest.raises(CompileError, match=r"has no field 'nope' \(its fields: x, y, z\)"):
        _launch(bad, np.zeros(2, PACKED))

    @cuda.jit
    def bad_read(a, out):
        out[0] = a[0]["w"]

    with pytest.raises(CompileError, match=r"record dtype .*'<f8'.* has no field 'w'"):
        _launch(bad_read, np.zeros(2, ALIGNED), np.zeros(1))


def test_unsupported_field_types():
    dtype = np.dtype([("name", "S8"), ("when", "M8[s]"), ("v", np.float32)])

    @cuda.jit
    def use_v(a, out):
        out[0] = a[0].v  # the other fields are kept as bytes: this record still works

    a = np.zeros(2, dtype)
    a["v"] = [2.5, 1.0]
    out = np.zeros(1)
    use_v[1, 1](a, out)
    assert out[0] == 2.5

    @cuda.jit
    def use_name(a, out):
        out[0] = a[0].name

    with pytest.raises(CompileError, match=r"field 'name' of record dtype .* has dtype \|S8: "
                                           r"kernels can store str and bytes constants into "
                                           r"it, not read it"):
        _launch(use_name, a, out)

    with pytest.raises(TypeError, match="Python object fields"):
        _launch(use_v, np.zeros(2, [("o", object), ("v", np.float32)]), out)
    with pytest.raises(TypeError, match="Python object fields"):
        nu.from_dtype(np.dtype([("o", object)]))


def test_records_that_cannot_be_laid_out():
    overlapping = np.dtype({"names": ["a", "b"], "formats": [np.float64, np.int32],
                            "offsets": [0, 4], "itemsize": 8})

    @cuda.jit
    def touch(a):
        a[0].a = 1

    with pytest.raises(CompileError, match="field 'b' overlaps"):
        _launch(touch, np.zeros(1, overlapping))
    with pytest.raises(CompileError, match="has no fields"):
        _launch(touch, np.zeros(1, np.dtype({"names": [], "formats": [], "itemsize": 8})))
    with pytest.raises(CompileError, match="is 5000 bytes; kernels take records of at most "
                                           "4096 bytes"):
        _launch(touch, np.zeros(1, [("a", np.uint8), ("pad", np.uint8, 4999)]))


def test_misuse_of_records_in_kernels():
    @cuda.jit
    def arith(a, out):
        out[0] = a[0] + 1

    with pytest.raises(CompileError, match="a record is not a number"):
        _launch(arith, np.zeros(1, PACKED), np.zeros(1))

    @cuda.jit
    def store_number(a):
        a[0] = 1.5

    with pytest.raises(CompileError, match="assign its fields"):
        _launch(store_number, np.zeros(1, PACKED))

    @cuda.jit
    def mixed_copy(a, b):
        a[0] = b[0]

    with pytest.raises(CompileError, match="records of the same dtype only"):
        _launch(mixed_copy, np.zeros(1, PACKED), np.zeros(1, ALIGNED))

    @cuda.jit
    def complex_into_float(a):
        a[0].x = 1j

    with pytest.raises(CompileError, match="cannot store a complex value"):
        _launch(complex_into_float, np.zeros(1, PACKED))

    @cuda.jit
    def index_by_variable(a, k, out):
        out[0] = a[0][k]

    with pytest.raises(CompileError, match=r"indexed by a field name or position constant"):
        _launch(index_by_variable, np.zeros(1, PACKED), 1, np.zeros(1))

    @cuda.jit
    def packed_view(a):
        a.x[0] = 1

    with pytest.raises(CompileError, match="not aligned in every element, so it cannot be "
                                           "viewed as an array"):
        _launch(packed_view, np.zeros(1, PACKED))

    @cuda.jit
    def call_dtype(out):
        out[0] = PAIR_TYPE(1).key

    with pytest.raises(CompileError, match="record dtype cannot be called"):
        _launch(call_dtype, np.zeros(1))

    @cuda.jit
    def whole_record_field(a):
        a[0].n = 1

    with pytest.raises(CompileError, match="cannot assign to field 'n'.* it is a record"):
        _launch(whole_record_field, np.zeros(1, NESTED))

    @cuda.jit
    def position_out_of_range(a, out):
        out[0] = a[0][3]

    with pytest.raises(CompileError, match=r"record index 3 is out of range .* \(3 fields\)"):
        _launch(position_out_of_range, np.zeros(1, PACKED), np.zeros(1))

    @cuda.jit
    def sub_array_too_deep(a, src):
        a[0].v = src

    with pytest.raises(CompileError, match="does not broadcast to the 1-d output"):
        _launch(sub_array_too_deep, np.zeros(1, NESTED), np.zeros((2, 4), np.int32))


def test_records_outside_kernels_are_refused_clearly():
    @nu.vectorize(["f8(f8)"], target="cuda")
    def twice(x):
        return 2 * x

    a = np.zeros(3, PACKED)
    with pytest.raises(TypeError, match=r"no loop matches the input types \(\[\('x', '<f8'\)"):
        twice(a)
    with pytest.raises(TypeError, match=r"no loop matches"):
        twice(cuda.to_device(a))
    with pytest.raises(TypeError, match="DLPack has no record dtypes"):
        cuda.to_device(a).__dlpack__()
    with pytest.raises(TypeError, match="non-native byte order"):
        _launch(record_argument, np.zeros(1, [("x", ">f8"), ("y", "<i4"), ("z", "i1")])[0],
                np.zeros(1))


@pytest.mark.parametrize("dtype", [ALIGNED, np.dtype("M8[s]"), np.dtype("S3")])
def test_strided_device_copies_of_record_like_dtypes(dtype):
    # Strided copies of dtypes the engine's copy kernel has no loop for (records,
    # datetimes, S/U) go through the bytes they span; they used to crash.
    host = np.zeros(5, dtype)
    if dtype.names:  # fields only: NumPy's own strided copies leave the padding undefined
        for k, name in enumerate(dtype.names):
            host[name] = np.arange(5) * 3 + k
    else:
        host.view(np.uint8)[:] = np.arange(host.nbytes) % 251
    dev = cuda.to_device(host)
    np.testing.assert_array_equal(dev[::-2].copy_to_host(), host[::-2])
    other = cuda.device_array(3, dtype)
    other.copy_to_device(dev[::2])
    np.testing.assert_array_equal(other.copy_to_host(), host[::2])
    dev[1::2].copy_to_device(host[:2][::-1])
    expected = host.copy()
    expected[1::2] = host[:2][::-1]
    np.testing.assert_array_equal(dev.copy_to_host(), expected)
