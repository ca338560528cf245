"""float16 in @cuda.jit kernels: arrays, shared arrays, scalars, NumPy promotion, atomics
and Numba's cuda.fp16 intrinsics. Oracles: NumPy float16 arithmetic, the float32 result
rounded to half for the math intrinsics."""

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda, float16, vectorize
from numbacuda_ufunc.cuda import fp16

rng = np.random.default_rng(216)


def half_edges(n=64):
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 65504.0, -65504.0,
                        6.1e-5, 6e-8, 0.5, 2.5, -3.5], np.float32)
    return np.concatenate([special, rng.standard_normal(n).astype(np.float32) * 6]).astype(np.float16)


def assert_half_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype == np.float16
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (np.flatnonzero(~same)[:5], got[~same][:5], want[~same][:5])


def compiles(kernel):
    for src in kernel.inspect_cuda().values():
        _core.compile_ptx(src, (9, 0))


@cuda.jit
def axpy_half(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]          # float16 * float16 + float16: float16, as in NumPy


@cuda.jit
def promote(x, i8, i16, f, out16, out32, out_w):
    i = cuda.grid(1)
    if i < x.size:
        out16[i] = x[i] + i8[i]           # float16 + int8 -> float16
        out32[i] = x[i] + i16[i]          # float16 + int16 -> float32
        out_w[i] = x[i] * 2.1             # weak Python float: float16
        f[i] = x[i] + f[i]                # float16 + float32 -> float32


def test_float16_arrays_and_promotion_in_kernels():
    x, y = half_edges(), np.roll(half_edges(), 3)
    out = np.full(x.shape, np.nan, np.float16)
    axpy_half[4, 32](np.float16(1.5), x, y, out)
    with np.errstate(all="ignore"):
        assert_half_equal(out, np.float16(1.5) * x + y)
    i8 = rng.integers(-100, 100, x.size).astype(np.int8)
    i16 = rng.integers(-3000, 3000, x.size).astype(np.int16)
    f = rng.standard_normal(x.size).astype(np.float32)
    o16 = np.empty(x.size, np.float16)
    o32 = np.empty(x.size, np.float32)
    ow = np.empty(x.size, np.float16)
    f0 = f.copy()
    promote[4, 32](x, i8, i16, f, o16, o32, ow)
    with np.errstate(all="ignore"):
        assert_half_equal(o16, x + i8)
        np.testing.assert_array_equal(o32, x + i16)
        assert_half_equal(ow, x * 2.1)
        np.testing.assert_array_equal(f, x + f0)
    compiles(axpy_half)
    compiles(promote)


@cuda.jit
def block_sum_shared(x, out):
    tile = cuda.shared.array(64, dtype=float16)
    t = cuda.threadIdx.x
    tile[t] = x[cuda.blockIdx.x * 64 + t]
    cuda.syncthreads()
    if t == 0:
        acc = np.float16(0)
        for k in range(64):
            acc += tile[k]
        out[cuda.blockIdx.x] = acc


@cuda.jit
def reverse_local(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        tmp = cuda.local.array(4, dtype=np.float16)
        for k in range(4):
            tmp[k] = x[i, k]
        for k in range(4):
            out[i, k] = tmp[3 - k] * np.float16(0.5)


def test_float16_local_arrays():
    x = half_edges(46).reshape(15, 4)
    out = np.empty_like(x)
    reverse_local[1, 32](x, out)
    with np.errstate(all="ignore"):
        assert_half_equal(out, x[:, ::-1] * np.float16(0.5))
    compiles(reverse_local)


def test_float16_shared_arrays():
    x = rng.integers(-4, 5, 256).astype(np.float16)   # exact partial sums
    out = np.empty(4, np.float16)
    block_sum_shared[4, 64](x, out)
    assert_half_equal(out, x.reshape(4, 64).sum(axis=1, dtype=np.float16))
    compiles(block_sum_shared)


@cuda.jit
def half_atomics(vals, acc):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.add(acc, 0, vals[i])
        cuda.atomic.max(acc, 1, vals[i])
        cuda.atomic.min(acc, 2, vals[i])
        cuda.atomic.sub(acc, 3, vals[i])


def test_float16_atomics():
    vals = rng.integers(-8, 9, 300).astype(np.float16)    # exact sums in any order
    acc = np.array([0, -np.inf, np.inf, 0], np.float16)
    d = cuda.to_device(acc)
    half_atomics[10, 32](cuda.to_device(vals), d)
    got = d.copy_to_host()
    np.testing.assert_array_equal(got, [vals.sum(dtype=np.float32), vals.max(), vals.min(),
                                        -vals.sum(dtype=np.float32)])
    compiles(half_atomics)


UNARY = ["hneg", "habs", "hsqrt", "hrsqrt", "hexp", "hexp2", "hexp10", "hlog", "hlog2",
         "hlog10", "hcos", "hsin", "hceil", "hfloor", "htrunc", "hrint", "hrcp"]
BINARY = ["hadd", "hsub", "hmul", "hdiv", "hmax", "hmin"]
COMPARE = ["heq", "hne", "hlt", "hle", "hgt", "hge"]


def _unary_oracle(name, x):
    xf = x.astype(np.float32)
    with np.errstate(all="ignore"):
        r = {"hneg": lambda: -xf, "habs": lambda: np.abs(xf), "hsqrt": lambda: np.sqrt(xf),
             "hrsqrt": lambda: 1 / np.sqrt(x.astype(np.float64)),
             "hexp": lambda: np.exp(xf), "hexp2": lambda: np.exp2(xf),
             "hexp10": lambda: np.power(np.float32(10), xf), "hlog": lambda: np.log(xf),
             "hlog2": lambda: np.log2(xf), "hlog10": lambda: np.log10(xf),
             "hcos": lambda: np.cos(xf), "hsin": lambda: np.sin(xf),
             "hceil": lambda: np.ceil(xf), "hfloor": lambda: np.floor(xf),
             "htrunc": lambda: np.trunc(xf), "hrint": lambda: np.rint(xf),
             "hrcp": lambda: np.float32(1) / xf}[name]()
        return r.astype(np.float16)


def _make_unary(name):
    fn = getattr(fp16, name)

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = fn(x[i])
    return k


@pytest.mark.parametrize("name", UNARY)
def test_fp16_unary_intrinsics(name):
    x = half_edges()
    out = np.full(x.shape, 7, np.float16)
    k = _make_unary(name)
    k[3, 32](x, out)
    want = _unary_oracle(name, x)
    if name in ("hneg", "habs", "hceil", "hfloor", "htrunc", "hrint", "hrcp", "hsqrt", "hrsqrt"):
        assert_half_equal(out, want)          # correctly rounded: exact
    else:
        # float32 libm results may differ by an ulp between implementations
        g, w = out.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        np.testing.assert_allclose(g[ok], w[ok], rtol=2 ** -10, atol=6e-8)
    compiles(k)


@cuda.jit
def binary_all(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = fp16.hadd(a[i], b[i])
        out[1, i] = fp16.hsub(a[i], b[i])
        out[2, i] = fp16.hmul(a[i], b[i])
        out[3, i] = fp16.hdiv(a[i], b[i])
        out[4, i] = fp16.hmax(a[i], b[i])
        out[5, i] = fp16.hmin(a[i], b[i])
        out[6, i] = cuda.fp16.hfma(a[i], b[i], a[i])


@cuda.jit
def compare_all(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = fp16.heq(a[i], b[i])
        out[1, i] = fp16.hne(a[i], b[i])
        out[2, i] = fp16.hlt(a[i], b[i])
        out[3, i] = fp16.hle(a[i], b[i])
        out[4, i] = fp16.hgt(a[i], b[i])
        out[5, i] = fp16.hge(a[i], b[i])


def test_fp16_binary_and_comparison_intrinsics():
    a = half_edges()
    b = np.roll(half_edges(), 5)
    out = np.full((7, a.size), 7, np.float16)
    binary_all[3, 32](a, b, out)
    with np.errstate(all="ignore"):
        assert_half_equal(out[0], a + b)
        assert_half_equal(out[1], a - b)
        assert_half_equal(out[2], a * b)
        assert_half_equal(out[3], a / b)
        assert_half_equal(out[4], np.fmax(a, b))
        assert_half_equal(out[5], np.fmin(a, b))
        fused = (a.astype(np.float64) * b.astype(np.float64) + a.astype(np.float64))
        assert_half_equal(out[6], fused.astype(np.float16))
    cmp = np.zeros((6, a.size), np.bool_)
    compare_all[3, 32](a, b, cmp)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(cmp[0], a == b)
        np.testing.assert_array_equal(cmp[1], (a < b) | (a > b))   # ordered: NaN is False
        np.testing.assert_array_equal(cmp[2], a < b)
        np.testing.assert_array_equal(cmp[3], a <= b)
        np.testing.assert_array_equal(cmp[4], a > b)
        np.testing.assert_array_equal(cmp[5], a >= b)
    compiles(binary_all)
    compiles(compare_all)


def test_fp16_in_a_ufunc_and_argument_conversion():
    @vectorize(["float16(float32, float32)"])
    def h(x, y):
        return cuda.fp16.hmul(x, y)           # float32 arguments convert to float16

    x = rng.standard_normal(50).astype(np.float32)
    assert_half_equal(h(x, x), x.astype(np.float16) * x.astype(np.float16))


def test_fp16_errors():
    from numbacuda_ufunc.errors import CompileError

    @cuda.jit
    def bad(out):
        out[0] = fp16.hadd(1.0)

    with pytest.raises(CompileError, match="hadd"):
        bad[1, 1](np.zeros(1, np.float16))
    with pytest.raises(RuntimeError, match="only inside a @cuda.jit kernel"):
        fp16.hadd(1, 2)


@cuda.jit
def half_abs_widen(a, out16, out64):
    i = cuda.grid(1)
    if i < a.size:
        out16[i] = abs(a[i])          # NumPy's: clears the sign bit (NaNs too)
        out64[i] = a[i]               # float16 -> float64, exact


def test_float16_abs_and_widening_match_numpy_and_use_native_ptx():
    a = np.concatenate([half_edges(), -half_edges(),
                        np.array([0x7e01, 0xfe01, 0x7c01, 0x8001], np.uint16).view(np.float16)])
    out16 = np.full(a.size, 7, np.float16)
    out64 = np.full(a.size, 7.0)
    half_abs_widen[(a.size + 31) // 32, 32](a, out16, out64)
    np.testing.assert_array_equal(out16.view(np.uint16), np.abs(a).view(np.uint16))
    np.testing.assert_array_equal(out64, a.astype(np.float64))
    # NaN payloads reach float64 as NumPy's cast keeps them
    nan = np.isnan(a)
    np.testing.assert_array_equal(out64[nan].view(np.uint64), a[nan].astype(np.float64).view(np.uint64))
    compiles(half_abs_widen)
    ptx = next(iter(half_abs_widen.inspect_asm().values()))
    body = ptx[ptx.index(".entry"):]
    assert "cvt.f64.f16" in body  # one instruction, not through float32
    assert "abs.f32" not in body and "and.b16" in body  # abs: the sign bit only


def test_fp16_hfma_is_one_native_instruction():
    ptx = next(iter(binary_all.inspect_asm().values()))
    assert "fma.rn.f16" in ptx
    assert "fma.rn.f64" not in ptx
