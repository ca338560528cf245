"""float16 (NumPy's half) and bfloat16 (ml_dtypes): loop types, conversions, arithmetic,
math, reductions, device arrays and interop.

Oracles: NumPy's own float16 arithmetic, and ml_dtypes' bfloat16 (which computes in float32
and rounds back). Conversions are compared bit for bit, NaN payloads included.
"""

import ctypes
import math
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import _core, cuda, guvectorize, vectorize

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
HALVES = [F16, BF16]
rng = np.random.default_rng(1616)


def bits(a):
    return np.asarray(a).view(np.uint16)


def assert_same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(bits(got), bits(want))


def assert_same_values(got, want):
    """Equal values, any NaN equal to any NaN (arithmetic NaNs carry no defined payload)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g, w = got.astype(np.float32), want.astype(np.float32)
    same = (bits(got) == bits(want)) | (np.isnan(g) & np.isnan(w))
    assert same.all(), f"first differences at {np.flatnonzero(~same)[:5]}: {g[~same][:5]} vs {w[~same][:5]}"


def edge_values(dt):
    finfo = ml_dtypes.finfo(dt) if dt == BF16 else np.finfo(dt)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, float(finfo.max),
                        -float(finfo.max), float(finfo.tiny), float(finfo.smallest_subnormal),
                        0.5, 3.0, -2.5, 7.0], np.float32)
    return np.concatenate([special, rng.standard_normal(200).astype(np.float32) * 8]).astype(dt)


def random_bits(n, width):
    return rng.integers(0, 2**width, n, dtype=np.uint64 if width == 64 else np.uint32)


# ---------------------------------------------------------------- types and exports

def test_half_types_are_exported_and_parse():
    assert nu.float16 is nu.f2 is nu.half and nu.float16.dtype == F16
    assert nu.bfloat16.dtype == BF16 and nu.types.from_dtype(BF16) is nu.bfloat16
    assert nu.types.from_dtype(np.float16) is nu.float16
    for name in ("float16", "f2", "half", "bfloat16"):
        assert name in nu.__all__
    sig = nu.types.parse_signature("f2(half, bfloat16)")
    assert sig.return_type is nu.float16 and sig.args == (nu.float16, nu.bfloat16)
    assert str(nu.bfloat16[:, ::1]) == "bfloat16[:, ::1]"


def test_bfloat16_without_ml_dtypes_is_a_clear_error(tmp_path):
    script = tmp_path / "no_ml_dtypes.py"
    script.write_text(
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np\n"
        "import numbacuda_ufunc as nu\n"
        "def f(x):\n"
        "    return x\n"
        "g = nu.vectorize(['float16(float16)'])(f)\n"
        "assert g(np.ones(2, np.float16)).dtype == np.float16\n"
        "try:\n"
        "    nu.vectorize(['bfloat16(bfloat16)'])(f)\n"
        "except TypeError as e:\n"
        "    print('ERR', e)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert "ERR bfloat16 needs the ml_dtypes package" in out.stdout, out.stdout + out.stderr


# ---------------------------------------------------------------- conversions, bit for bit

def ident(x):
    return x


to_f16 = vectorize(["float16(float32)", "float16(float64)", "float16(int64)",
                    "float16(uint64)", "float16(bfloat16)"])(ident)
to_bf16 = vectorize(["bfloat16(float32)", "bfloat16(float64)", "bfloat16(int64)",
                     "bfloat16(uint64)", "bfloat16(float16)"])(ident)
from_half = vectorize(["float32(float16)", "float32(bfloat16)"])(ident)
from_half64 = vectorize(["float64(float16)", "float64(bfloat16)"])(ident)


@pytest.mark.parametrize("conv,dt", [(to_f16, F16), (to_bf16, BF16)])
def test_float_to_half_is_bit_exact(conv, dt):
    f32 = random_bits(100_000, 32).view(np.float32)       # every class of value, NaN payloads
    f64 = random_bits(100_000, 64).view(np.float64)
    # values near the half ranges, where rounding decides
    near = (rng.standard_normal(50_000) * np.exp2(rng.integers(-30, 20, 50_000)))
    ties = np.exp2(np.arange(-30, 17.0))[:, None] * (1 + np.arange(1, 64)[None, :] / 2048.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in (f32, f64, near, near.astype(np.float32), ties.ravel(), -ties.ravel()):
            assert_same_bits(conv(x), x.astype(dt))


@pytest.mark.parametrize("conv,dt", [(to_f16, F16), (to_bf16, BF16)])
def test_integer_to_half_is_bit_exact(conv, dt):
    big = np.array([2**30 + 2**22 + 1, 2**24 + 1, 65504, 65519, 65520, -65520, 2**63 - 1,
                    -2**63, 0, 1, -1, 2049, 2051], np.int64)
    i64 = np.concatenate([big, rng.integers(-2**40, 2**40, 10_000)])
    u64 = np.concatenate([np.array([2**64 - 1, 2**63 + 2**40 + 1], np.uint64),
                          rng.integers(0, 2**64 - 1, 1000, dtype=np.uint64)])
    assert_same_bits(conv(i64), i64.astype(dt))
    assert_same_bits(conv(u64), u64.astype(dt))


def test_half_to_float_and_between_halves_is_bit_exact():
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    h, b = every.view(np.float16), every.view(BF16)
    for x in (h, b):
        np.testing.assert_array_equal(from_half(x).view(np.uint32), x.astype(np.float32).view(np.uint32))
        np.testing.assert_array_equal(from_half64(x).view(np.uint64),
                                      x.astype(np.float64).view(np.uint64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_bits(to_bf16(h), h.astype(BF16))
        assert_same_bits(to_f16(b), b.astype(np.float16))


SOURCES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
           np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128, BF16]


def _cast_matrix_gufunc(src):
    """A gufunc storing one source array into an array of every dtype (the translator's
    conversion on store: nu::cast)."""
    # the translator refuses complex -> real stores (take .real), as Numba does
    dests = [d for d in SOURCES if np.dtype(src).kind != "c" or np.dtype(d).kind == "c"]
    names = [nu.types.from_dtype(d).name for d in dests]
    sig = f"void({nu.types.from_dtype(src).name}[:], " + ", ".join(f"{n}[:]" for n in names) + ")"
    params = ", ".join(f"o{k}" for k in range(len(names)))
    body = "\n".join(f"        o{k}[i] = x[i]" for k in range(len(names)))
    code = f"def cast_all(x, {params}):\n    for i in range(x.shape[0]):\n{body}\n"
    import linecache
    filename = f"<cast_matrix_{np.dtype(src).name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace = {}
    exec(compile(code, filename, "exec"), namespace)
    layout = "(n)->" + ",".join("(n)" for _ in names)
    return guvectorize([sig], layout)(namespace["cast_all"]), dests


@pytest.mark.parametrize("src", [np.bool_, np.int8, np.int64, np.uint64, np.float16,
                                 np.float32, np.float64, np.complex64, np.complex128, BF16],
                         ids=lambda d: np.dtype(d).name)
def test_cast_to_and_from_every_dtype(src):
    src = np.dtype(src)
    if src.kind == "b":
        x = np.array([True, False, True])
    elif src.kind in "iu":
        info = np.iinfo(src)
        x = np.array([0, 1, 7, 100, info.max, info.min, 65504 if info.max > 65504 else 5,
                      2**30 + 2**22 + 1 if info.max > 2**31 else 3], src)
    else:
        # exactly representable in every float type, inside every integer type's range
        x = np.array([0.0, -0.0, 1.5, -2.0, 100.25, 3.0, 0.5, 120.0]).astype(src)
        if src.kind == "c":
            x = (x + 1j * np.array([1.0, 0, 2, 0, 0, 3, 0, -1])).astype(src)
    g, dests = _cast_matrix_gufunc(src)
    outs = [np.full(x.shape, 77, d) for d in dests]
    g(x, *outs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for d, o in zip(dests, outs):
            want = x.astype(d)
            if np.dtype(d).kind == "b" or np.dtype(d).kind in "iu" or src.kind in "biu":
                np.testing.assert_array_equal(o, want, err_msg=f"{src} -> {np.dtype(d)}")
            else:
                assert_same_values(o, want) if np.dtype(d).itemsize == 2 else \
                    np.testing.assert_array_equal(o, want, err_msg=f"{src} -> {np.dtype(d)}")
    for entry, source in g._kernel_sources():
        assert f".entry {entry}(" in _core.compile_ptx(source, (9, 0))


def test_host_scalar_conversion_into_half_loops():
    """Scalars are converted on the host (convert_scalar): Python floats are weak, NumPy
    scalars strong, and both must round as the kernels do."""
    add = vectorize(["float16(float16, float16)", "bfloat16(bfloat16, bfloat16)"])(
        lambda a, b: a + b)
    h = np.array([1.0, 2.0, -3.0], np.float16)
    for s in (0.1, 1e-8, 70000.0, 1 + 2**-11 + 2**-40):
        assert_same_bits(add(h, s), h + np.float16(s))
        b = h.astype(BF16)
        assert_same_bits(add(b, np.array(s).astype(BF16)), b + np.array(s).astype(BF16))
    assert_same_bits(add(np.float16(2.5), h), np.float16(2.5) + h)


# ---------------------------------------------------------------- arithmetic and math

def arith(a, b):
    return (a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a, abs(b))


OPS = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b,
       lambda a, b: a // b, lambda a, b: a % b, lambda a, b: a ** b, lambda a, b: -a,
       lambda a, b: abs(b), lambda a, b: max(a, b), lambda a, b: a < b, lambda a, b: a == b]
ORACLES = {9: lambda a, b: np.where(b > a, b, a)}  # Python's max(a, b) on arrays


def _oracle(op, a, b, dt):
    with np.errstate(all="ignore"):
        if dt == F16:
            return np.asarray(op(a, b))
        # bfloat16: in float32, rounded back (what ml_dtypes' own loops do)
        r = np.asarray(op(a.astype(np.float32), b.astype(np.float32)))
        return r if r.dtype == np.bool_ else r.astype(BF16)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("k", range(len(OPS)))
def test_arithmetic_matches_numpy(dt, k):
    op = OPS[k]
    name = nu.types.from_dtype(dt).name
    ret = "bool" if k >= 10 else name
    f = vectorize([f"{ret}({name}, {name})"])(op)
    a = edge_values(dt)
    b = np.roll(edge_values(dt), 7)
    a, b = np.meshgrid(a[:60], b[:60])
    want = _oracle(ORACLES.get(k, op), a, b, dt)
    assert_same_values(f(a, b), want) if ret != "bool" else np.testing.assert_array_equal(f(a, b), want)


@vectorize(["float16(float16)", "bfloat16(bfloat16)"])
def transcend(x):
    return math.sin(x) * math.exp(x / 16) + math.sqrt(abs(x)) - math.log1p(abs(x)) + np.floor(x)


@vectorize(["float16(float16)", "bfloat16(bfloat16)"])
def np_funcs(x):
    return np.tanh(x) + np.rint(x) + np.deg2rad(x) + np.arctan2(x, 3.0)


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_math_computes_in_float32_and_rounds_back(dt):
    x = edge_values(dt)
    with np.errstate(all="ignore"):
        xf = x.astype(np.float32)
        h = lambda v: np.asarray(v, np.float32).astype(dt)  # noqa: E731  (round to the type)
        want_t = h(h(h(h(np.sin(xf)) * h(np.exp(h(xf / 16)))) + h(np.sqrt(np.abs(xf)))) -
                   h(np.log1p(np.abs(xf)))) + h(np.floor(xf))
        want_t = h(want_t)
        want_n = h(h(h(h(np.tanh(xf)) + h(np.rint(xf))) + h(np.deg2rad(xf))) + h(np.arctan2(xf, 3)))
    # float32 libm results may differ by an ulp between implementations; one half ulp apart
    # after rounding is the most that can show.
    for got, want in ((transcend(x), want_t), (np_funcs(x), want_n)):
        assert got.dtype == dt
        g, w = got.astype(np.float64), want.astype(np.float64)
        finite = np.isfinite(w)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g[finite], w[finite], rtol=2 ** -7 if dt == BF16 else 2 ** -10)
    for entry, source in transcend._kernel_sources() + np_funcs._kernel_sources():
        assert f".entry {entry}(" in _core.compile_ptx(source, (9, 0))


def test_promotion_follows_numpy_and_ml_dtypes():
    @vectorize
    def add(a, b):
        return a + b

    h = np.ones(3, np.float16)
    b = np.ones(3, BF16)
    assert add(h, h).dtype == np.float16
    assert add(h, 2.5).dtype == np.float16                  # weak Python float
    assert add(h, np.ones(3, np.int8)).dtype == np.float16  # int8 fits in half
    assert add(h, np.ones(3, np.int16)).dtype == np.float32
    assert add(h, np.ones(3, np.float32)).dtype == np.float32
    assert add(b, b).dtype == BF16
    assert add(b, np.ones(3, np.uint8)).dtype == BF16
    assert add(b, np.ones(3, np.float32)).dtype == np.float32
    # ml_dtypes' scalars (the Python function's own semantics) compute bfloat16 with
    # float16 or int16 in float32 (NumPy's arrays have no common type for them)
    assert add(b, h).dtype == np.float32
    assert add(b, np.ones(3, np.int16)).dtype == np.float32

    @vectorize
    def sq(x):
        return np.sqrt(x)

    # NumPy computes np.sqrt of int8 in float16
    assert sq(np.array([4, 9], np.int8)).dtype == np.float16


def test_loop_selection_and_types_strings():
    @vectorize(["float16(float16)", "float32(float32)", "bfloat16(bfloat16)"])
    def twice(x):
        return x * 2

    assert twice.types == ["e->e", "f->f", "E->E"]
    assert twice(np.ones(2, np.float16)).dtype == np.float16
    assert twice(np.ones(2, np.int8)).dtype == np.float16      # int8 -> float16 is safe
    assert twice(np.ones(2, np.int16)).dtype == np.float32     # int16 -> float16 is not
    assert twice(np.ones(2, BF16)).dtype == BF16
    out = np.full(2, np.nan, np.float32)
    twice(np.ones(2, np.float16), out=out)                      # out casts same_kind
    np.testing.assert_array_equal(out, [2, 2])
    with pytest.raises(TypeError, match="float16"):
        twice(np.ones(2, np.float16), out=np.empty(2, np.int32))


# ---------------------------------------------------------------- gufuncs and reductions

@guvectorize(["void(float16[:], float16[:])", "void(bfloat16[:], bfloat16[:])"], "(n)->()")
def running_max(x, out):
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    out[0] = m


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_gufunc_on_half_arrays(dt):
    x = rng.standard_normal((7, 13)).astype(dt)
    got = running_max(x[:, ::-1])
    assert got.dtype == dt
    assert_same_bits(got, x.max(axis=1))
    for entry, source in running_max._kernel_sources():
        assert f".entry {entry}(" in _core.compile_ptx(source, (9, 0))


add16 = vectorize(["float16(float16, float16)", "bfloat16(bfloat16, bfloat16)"],
                  identity=0)(lambda a, b: a + b)
max_reduce = nu.reduce(lambda a, b: max(a, b))


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_reductions_of_half_arrays(dt):
    # small integers: every partial sum is exact, so any association order gives NumPy's
    x = rng.integers(-8, 9, (6, 40)).astype(dt)
    assert_same_bits(add16.reduce(x, axis=None), np.array(x.astype(np.float32).sum()).astype(dt))
    assert_same_bits(add16.reduce(x, axis=1), x.astype(np.float32).sum(axis=1).astype(dt))
    assert_same_bits(add16.reduce(x, axis=0, keepdims=True),
                     x.astype(np.float32).sum(axis=0, keepdims=True).astype(dt))
    y = rng.standard_normal(1000).astype(dt)
    got = max_reduce(y)
    assert np.asarray(got).dtype == dt and got == y.max()
    assert_same_bits(max_reduce(y.reshape(10, 100), axis=1), y.reshape(10, 100).max(axis=1))
    lazy_max = vectorize(lambda a, b: max(a, b))
    assert_same_bits(lazy_max.reduce(y.reshape(10, 100), axis=1), y.reshape(10, 100).max(axis=1))
    d = cuda.to_device(y)
    res = cuda.device_array(1, dtype=dt)
    max_reduce(d, res=res)
    assert res.copy_to_host()[0] == y.max()


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_reduce_kernels_compile_with_nvrtc(dt):
    src = max_reduce.inspect_cuda(dt)
    ptx = _core.compile_ptx(src, (9, 0), options=_core.Reducer._nvrtc_extra())
    name = src.split("NU_REDUCE_ENTRY(")[1].split(",")[0]
    for suffix in ("_units_contig", "_units_strided", "_final", "_columns"):
        assert f".entry {name}{suffix}(" in ptx


def test_gpu_conversions_use_the_hardware_instructions():
    # float32 <-> float16 and float32 -> bfloat16 are one cvt instruction each on the GPU
    # (NaNs, whose payload NumPy and ml_dtypes define, take a few bit operations); the
    # host backend runs the bit-exact software path the tests above check.
    def div_add(a, b):
        return a / b + a  # float16 division computes in float32

    uf = vectorize(["float16(float16, float16)", "bfloat16(bfloat16, bfloat16)"])(div_add)
    ptx = {str(k): v for k, v in uf.inspect_ptx().items()}
    f16, bf16 = ptx["float16(float16, float16)"], ptx["bfloat16(bfloat16, bfloat16)"]
    assert "cvt.f32.f16" in f16 and "cvt.rn.f16.f32" in f16
    assert "cvt.rn.bf16.f32" in bf16
    sm80 = _core.compile_ptx(uf._variant_source(1)[1], (7, 5))  # before sm_80: no bf16 cvt
    assert "cvt.rn.bf16.f32" not in sm80


def test_gpu_float16_arithmetic_uses_native_instructions():
    # + - * of float16 round to the same value as NumPy's float32-and-round-back (float32
    # has 24 >= 2 * 11 + 2 bits), so the GPU uses add/sub/mul.f16 and setp.*.f16; division
    # stays in float32. Without fastmath they are never fused into an fma: the build's
    # --fmad=false reaches ptxas (the SASS is checked in tests/test_float16_native.py), and
    # PTX for the driver's JIT spells .rn (NU_F16_EXPLICIT_RN).
    def arith(a, b):
        return (a + b) * (a - b) if a < b else (a / b if a != b else a)

    uf = vectorize(["float16(float16, float16)"])(arith)
    (ptx,) = uf.inspect_ptx().values()
    for instr in ("add.f16", "sub.f16", "mul.f16", "setp.lt.f16", "setp.neu.f16",
                  "div.rn.f32"):
        assert re.search(rf"\b{re.escape(instr)}\b", ptx), instr
    assert "fma" not in ptx
    jit_ptx = _core.compile_ptx(uf._variant_source(0)[1], (9, 0), options=["-DNU_F16_EXPLICIT_RN"])
    for instr in ("add.rn.f16", "sub.rn.f16", "mul.rn.f16"):
        assert instr in jit_ptx, instr


# ---------------------------------------------------------------- device arrays and interop

@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_device_arrays_of_half_types(dt):
    x = rng.standard_normal((4, 5)).astype(dt)
    d = cuda.to_device(x)
    assert d.dtype == dt and d.nbytes == 40
    assert_same_bits(d.copy_to_host(), x)
    assert_same_bits(d[:, ::2].copy_to_host(), x[:, ::2])
    e = cuda.device_array((3,), dtype=dt)
    e[:] = 1.5
    assert_same_bits(e.copy_to_host(), np.full(3, 1.5, dt))
    assert cuda.device_array_like(x).dtype == dt
    cai = d.__cuda_array_interface__
    assert cai["typestr"] == ("<f2" if dt == F16 else "<V2")
    view = cuda.as_cuda_array(type("CAI", (), {"__cuda_array_interface__": cai, "_keep": d})())
    assert view.dtype == dt
    assert_same_bits(view.copy_to_host(), x)
    result = add16(d, d)          # device in, device out
    assert_same_bits(result.copy_to_host(), x + x if dt == F16 else
                     (x.astype(np.float32) * 2).astype(dt))


def _dlpack_dtype(capsule):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ptr = get(capsule, b"dltensor")
    # DLTensor: data (8), device (8), ndim (4), dtype {code u8, bits u8, lanes u16}
    raw = ctypes.string_at(ptr + 20, 4)
    return raw[0], raw[1], int.from_bytes(raw[2:], "little")


def test_dlpack_exports_float16_and_bfloat16():
    h = cuda.to_device(np.arange(4, dtype=np.float16))
    assert _dlpack_dtype(h.__dlpack__()) == (2, 16, 1)      # kDLFloat
    b = cuda.to_device(np.arange(4).astype(BF16))
    assert _dlpack_dtype(b.__dlpack__()) == (4, 16, 1)      # kDLBfloat
    if cuda.get_current_device() is not None and h.__dlpack_device__()[0] == 1:  # kDLCPU
        np.testing.assert_array_equal(np.from_dlpack(h), np.arange(4, dtype=np.float16))


def test_a_plain_two_byte_void_is_not_bfloat16():
    with pytest.raises(TypeError, match="unsupported dtype"):
        add16(np.zeros(2, "V2"), np.zeros(2, "V2"))
    with pytest.raises(TypeError, match="unsupported dtype"):
        cuda.device_array(3, dtype="V2")


@pytest.mark.parametrize("dt", HALVES, ids=["float16", "bfloat16"])
def test_methods_and_keywords_on_half_arrays(dt):
    x = rng.integers(-8, 9, 20).astype(dt)          # exact partial sums
    f32 = x.astype(np.float32)
    assert_same_bits(add16.accumulate(x), np.add.accumulate(f32).astype(dt))
    y = x.copy()
    add16.at(y, [0, 0, 3], np.array(1, dt))
    want = f32.copy()
    np.add.at(want, [0, 0, 3], 1)
    assert_same_bits(y, want.astype(dt))
    assert_same_bits(add16.outer(x[:4], x[:3]), np.add.outer(f32[:4], f32[:3]).astype(dt))
    out = np.zeros(20, dt)
    add16(x, x, where=f32 > 0, out=out)
    assert_same_bits(out, np.where(f32 > 0, 2 * f32, 0).astype(dt))
    assert add16(x, x, dtype=dt).dtype == dt
