"""CUDA vector types (cuda.float32x4, cuda.short2...): construction from numbers and
vectors, component reads, device-function arguments and results, tuples of them, the C
aliases, the host stand-ins (the oracle: each kernel's Python function runs as Python),
errors, and NVRTC builds of every type."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.cuda import vector_types as vt_module
from numbacuda_ufunc.errors import CompileError

_ALL = list(vt_module.vector_types.values())
_FAMILIES = sorted({vt.base_type.name for vt in _ALL})


def _family(base):
    return [getattr(cuda, f"{base}x{n}") for n in (1, 2, 3, 4)]


def _edge_values(base_type, n):
    dt = base_type.dtype
    if dt.kind == "f":
        return [np.nan, -0.0, np.inf, 1.5][:n] if n > 1 else [-np.inf]
    info = np.iinfo(dt)
    return [int(info.min), int(info.max), 0, 7][:n] if n > 1 else [int(info.max)]


def test_module_and_names():
    assert len(vt_module.vector_types) == 40
    for vt in _ALL:
        stub = vt.user_facing_object
        assert getattr(cuda, vt.name) is stub
        assert vt.num_elements == len(vt.attr_names) == int(vt.name[-1])
        assert vt.attr_names == ("x", "y", "z", "w")[:vt.num_elements]
        assert vt.name.startswith(vt.base_type.name)
        for alias in stub.aliases:
            assert getattr(cuda, alias) is stub
    assert cuda.float4 is cuda.float32x4 and cuda.double2 is cuda.float64x2
    assert cuda.short2 is cuda.int16x2 and cuda.uchar3 is cuda.uint8x3
    assert cuda.int1 is cuda.int32x1 and cuda.uint4 is cuda.uint32x4
    assert cuda.longlong4 is cuda.int64x4 and cuda.ulonglong1 is cuda.uint64x1
    long_bits = np.dtype(np.int_).itemsize * 8
    assert cuda.long3 is getattr(cuda, f"int{long_bits}x3")


def _readout_kernel(stub, n):
    # One kernel per arity; the stub is a closure variable, as in Numba's own tests.
    if n == 1:
        def k(vals, out):
            v = stub(vals[0])
            out[0] = v.x
    elif n == 2:
        def k(vals, out):
            v = stub(vals[0], vals[1])
            out[0] = v.x
            out[1] = v.y
    elif n == 3:
        def k(vals, out):
            v = stub(vals[0], vals[1], vals[2])
            out[0] = v.x
            out[1] = v.y
            out[2] = v.z
    else:
        def k(vals, out):
            v = stub(vals[0], vals[1], vals[2], vals[3])
            out[0] = v.x
            out[1] = v.y
            out[2] = v.z
            out[3] = v.w
    return k


@pytest.mark.parametrize("base", _FAMILIES)
def test_construction_and_readout_match_python(base):
    for stub in _family(base):
        vt = stub._nu_vector_type
        n = vt.num_elements
        vals = np.array(_edge_values(vt.base_type, n), dtype=vt.base_type.dtype)
        fn = _readout_kernel(stub, n)
        want = np.full(n, 99, dtype=vt.base_type.dtype)
        fn(vals, want)  # the oracle: the same function run as Python
        got = np.full(n, 99, dtype=vt.base_type.dtype)
        cuda.jit(fn)[1, 1](vals, got)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, vals)
        assert np.signbit(got).tolist() == np.signbit(vals).tolist()  # -0.0 kept


def _fancy(v1, v2, v3, v4, base, out):
    one = base(1)
    two = base(2)
    three = base(3)
    a1 = v1(one)
    b1 = v1(a1)
    p2 = v2(two, three)
    q2 = v2(a1, three)
    r2 = v2(p2)
    p3 = v3(p2, one)
    q3 = v3(a1, p2)
    r3 = v3(one, a1, three)
    s3 = v3(p3)
    p4 = v4(p2, p2)
    q4 = v4(p3, a1)
    r4 = v4(three, p3)
    s4 = v4(a1, p2, two)
    t4 = v4(one, two, three, b1)
    u4 = v4(r4)
    j = 0
    for v in (p2, q2, r2):
        out[j] = v.x
        out[j + 1] = v.y
        j += 2
    for w in (p3, q3, r3, s3):
        out[j] = w.x
        out[j + 1] = w.y
        out[j + 2] = w.z
        j += 3
    for u in tuple((p4, q4, r4, s4, t4, u4)):
        out[j] = u.x
        out[j + 1] = u.y
        out[j + 2] = u.z
        out[j + 3] = u.w
        j += 4
    out[j] = a1.x + b1.x


@pytest.mark.parametrize("base", _FAMILIES)
def test_construction_from_vectors_and_numbers(base):
    v1, v2, v3, v4 = _family(base)
    scalar = v1._nu_vector_type.base_type

    def kernel(out):
        _fancy(v1, v2, v3, v4, scalar, out)

    want = np.full(43, -1.0)
    kernel(want)
    assert want[:6].tolist() == [2, 3, 1, 3, 2, 3]
    assert want[6:18].tolist() == [2, 3, 1, 1, 2, 3, 1, 1, 3, 2, 3, 1]
    got = np.full(43, -1.0)
    cuda.jit(kernel)[1, 1](got)
    np.testing.assert_array_equal(got, want)


@cuda.jit(device=True)
def _cross(a, b):
    return cuda.float32x3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)


@cuda.jit(device=True)
def _as_pair(v):
    return cuda.double2(v.x, v.w), v.y + v.z


def _cross_kernel(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        c = _cross(cuda.float3(a[i, 0], a[i, 1], a[i, 2]), cuda.float3(b[i, 0], b[i, 1], b[i, 2]))
        out[i, 0] = c.x
        out[i, 1] = c.y
        out[i, 2] = c.z
        pair, middle = _as_pair(cuda.double4(a[i, 0], a[i, 1], a[i, 2], b[i, 0]))
        out[i, 3] = pair.x + pair.y + middle


def test_vectors_through_device_functions():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((50, 3)).astype(np.float32)
    b = rng.standard_normal((50, 3)).astype(np.float32)
    out = np.full((50, 4), np.nan, dtype=np.float32)
    cuda.jit(_cross_kernel)[2, 32](a, b, out)
    np.testing.assert_allclose(out[:, :3], np.cross(a, b), rtol=1e-5, atol=1e-5)
    want = a[:, 0].astype(np.float64) + b[:, 0] + a[:, 1] + a[:, 2]
    np.testing.assert_allclose(out[:, 3], want.astype(np.float32), rtol=1e-6)


def test_numbers_are_cast_to_the_base_type():
    def kernel(out):
        v = cuda.int32x3(2.75, -2.75, True)
        out[0] = v.x
        out[1] = v.y
        out[2] = v.z
        f = cuda.float32x2(16777217, 0.1)  # rounded to float32, as float32(x) does
        out[3] = f.x
        out[4] = f.y

    want = np.zeros(5)
    kernel(want)
    got = np.zeros(5)
    cuda.jit(kernel)[1, 1](got)
    np.testing.assert_array_equal(got, want)
    assert want[:3].tolist() == [2, -2, 1] and want[4] == np.float32(0.1)


def _compile_error(fn, match):
    with pytest.raises(CompileError, match=match):
        cuda.jit(fn)[1, 1](np.zeros(4))


def test_construction_errors():
    def too_few(out):
        v = cuda.float32x3(1.0, 2.0)
        out[0] = v.x

    def too_many(out):
        v = cuda.float32x2(cuda.float32x2(1.0, 2.0), 3.0)
        out[0] = v.x

    def other_base(out):
        v = cuda.float32x2(cuda.int32x1(1), 2.0)
        out[0] = v.x

    def complex_arg(out):
        v = cuda.float32x1(1j)
        out[0] = v.x

    def keyword(out):
        v = cuda.float32x1(x=1.0)
        out[0] = v.x

    _compile_error(too_few, r"float32x3\(\) needs 3 components \(its arguments give 2\)")
    _compile_error(too_many, r"float32x2\(\) needs 2 components \(its arguments give 3\)")
    _compile_error(other_base, r"argument 1 is a int32x1; vector arguments must have base "
                               r"type float32")
    _compile_error(complex_arg, r"argument 1 must be a real number")
    _compile_error(keyword, "positional arguments only")


def test_attribute_errors():
    def missing(out):
        v = cuda.float32x2(1.0, 2.0)
        out[0] = v.z

    def store(out):
        v = cuda.float32x2(1.0, 2.0)
        v.x = 3.0
        out[0] = v.x

    def arithmetic(out):
        v = cuda.float32x2(1.0, 2.0)
        w = v + v
        out[0] = w.x

    def mixed(out):
        v = cuda.float32x2(1.0, 2.0)
        if out[0] > 0:
            v = cuda.float32x3(1.0, 2.0, 3.0)
        out[0] = v.x

    _compile_error(missing, r"float32x2 has no attribute '\.z' \(it has \.x, \.y\)")
    _compile_error(store, r"cannot assign to attribute '\.x' of float32x2")
    _compile_error(arithmetic, "float32x2")
    _compile_error(mixed, "incompatible types float32x2 and float32x3")


def test_host_stand_ins():
    v = cuda.float32x3(1, cuda.float32x2(2.5, -0.0))
    assert (v.x, v.y) == (1.0, 2.5) and np.signbit(v.z)
    assert isinstance(v.x, np.float32)
    assert v == cuda.float3(1, 2.5, 0.0) and hash(v) == hash(cuda.float3(1, 2.5, 0.0))
    assert repr(cuda.short2(1, 2)) == "int16x2(np.int16(1), np.int16(2))"
    with pytest.raises(AttributeError, match="immutable"):
        v.x = 2
    with pytest.raises(AttributeError, match="has no attribute 'w'"):
        v.w  # noqa: B018
    with pytest.raises(TypeError, match="give 2 components, float32x3 has 3"):
        cuda.float32x3(1, 2)
    with pytest.raises(TypeError, match="base type float32"):
        cuda.float32x2(cuda.int32x1(1), 2)
    with pytest.raises(TypeError, match="must be numbers"):
        cuda.float32x1("1")


@pytest.mark.parametrize("base", _FAMILIES)
def test_every_vector_type_compiles_with_nvrtc(base):
    v1, v2, v3, v4 = _family(base)

    def kernel(out):
        a = v1(out[0])
        b = v2(a, out[1])
        c = v3(b, out[2])
        d = v4(c, a)
        out[0] = d.x + d.y + d.z + d.w

    k = cuda.jit(kernel)
    dtype = v1._nu_vector_type.base_type.dtype
    buf = np.array([1, 2, 3, 4], dtype=dtype)
    k[1, 1](buf)
    assert buf[0] == dtype.type(1 + 2 + 3 + 1)
    src = next(iter(k.inspect_cuda().values()))
    assert f"nu::make_vector<nu::{base}x4>" in src
    ptx = next(iter(k.inspect_ptx(cc=(9, 0)).values()))
    assert ".target sm_90" in ptx
