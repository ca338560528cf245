"""float16 in kernels with the GPU's native half instructions (sm_53+), and float64 atomics.

The PTX checks compile for sm_90 with NVRTC (no GPU needed); the SASS checks also need
nvdisasm or cuobjdump (the ``test`` extra). The result checks run the same kernels on the
host backend here and on the GPU where there is one; the oracle is NumPy's float16, bit
for bit, on edge values: NaN, inf, -0.0, subnormals, the largest finite value, overflow.
"""

import re
import warnings

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda, float64, int64, void
from numbacuda_ufunc.cuda import fp16
from numbacuda_ufunc.toolchain import _sass

rng = np.random.default_rng(1653)

INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def half_edges():
    bits = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400,  # subnormals
                     0x3c00, 0xbc00, 0x3c01, 0x3555, 0x7bff, 0xfbff, 0x7bfe,          # 1, max finite
                     0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x7d55,                  # inf, NaNs
                     0x5bff, 0x6000, 0x1400, 0x0200, 0x3800, 0xb800], np.uint16)
    return bits.view(np.float16)


def pairs():
    """Every pair of edge values, plus random halves of every magnitude."""
    e = half_edges()
    a, b = np.meshgrid(e, e)
    r = rng.integers(0, 1 << 16, size=(2, 4096), dtype=np.uint16).view(np.float16)
    return np.concatenate([a.ravel(), r[0]]), np.concatenate([b.ravel(), r[1]])


def assert_half_equal(got, want):
    """Bit for bit, except that any NaN matches any NaN (the GPU's arithmetic does not keep
    NaN payloads; NumPy's does)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype == np.float16
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, (bad[:5], got[bad[:5]], want[bad[:5]])


def entry_body(ptx):
    return ptx[ptx.index(".entry"):]


def kernel_ptx(kernel, sig=None):
    asm = kernel.inspect_asm(sig) if sig is not None else next(iter(kernel.inspect_asm().values()))
    return entry_body(asm)


# ---------------------------------------------------------------- arithmetic and comparisons

@cuda.jit("void(f2[:], f2[:], f2[:], f2[:, :])")
def arith(a, b, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = a[i] + b[i]
        out[1, i] = a[i] - b[i]
        out[2, i] = a[i] * b[i]
        out[3, i] = a[i] / b[i]
        out[4, i] = a[i] * b[i] + c[i]    # two roundings, as NumPy: never fused
        out[5, i] = -a[i]
        out[6, i] = abs(a[i])
        x = a[i]
        x += b[i]
        x *= c[i]
        x -= a[i]
        out[7, i] = x


@cuda.jit("void(f2[:], f2[:], b1[:, :])")
def compare(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = a[i] > b[i]
        out[1, i] = a[i] >= b[i]
        out[2, i] = a[i] < b[i]
        out[3, i] = a[i] <= b[i]
        out[4, i] = a[i] == b[i]
        out[5, i] = a[i] != b[i]


def test_float16_arithmetic_matches_numpy_bit_for_bit():
    a, b = pairs()
    c = np.roll(a, 7)
    out = np.full((8, a.size), 7, np.float16)
    arith[(a.size + 127) // 128, 128](a, b, c, out)
    with np.errstate(all="ignore"):
        assert_half_equal(out[0], a + b)
        assert_half_equal(out[1], a - b)
        assert_half_equal(out[2], a * b)
        assert_half_equal(out[3], a / b)
        assert_half_equal(out[4], a * b + c)
        assert_half_equal(out[7], (a + b) * c - a)
    # -x and abs(x) are NumPy's sign-bit operations: NaN payloads and signs kept exactly
    np.testing.assert_array_equal(out[5].view(np.uint16), np.negative(a).view(np.uint16))
    np.testing.assert_array_equal(out[6].view(np.uint16), np.abs(a).view(np.uint16))
    # the edge cases that matter, spelled out: overflow to inf, subnormal results, -0.0
    big = np.float16(65504)
    with np.errstate(all="ignore"):
        assert (big + big) == np.inf and (big * np.float16(2)) == np.inf
    tiny = np.uint16(1).view(np.float16)
    assert (tiny * np.float16(0.5)) == 0  # the tie rounds to even zero


def test_float16_comparisons_match_numpy():
    a, b = pairs()
    out = np.zeros((6, a.size), np.bool_)
    compare[(a.size + 127) // 128, 128](a, b, out)
    for row, op in enumerate((np.greater, np.greater_equal, np.less, np.less_equal,
                              np.equal, np.not_equal)):
        np.testing.assert_array_equal(out[row], op(a, b), err_msg=op.__name__)


def test_float16_arithmetic_ptx_uses_native_instructions():
    body = kernel_ptx(arith)
    for instr in ("add.f16", "sub.f16", "mul.f16"):
        assert re.search(rf"\b{re.escape(instr)}\b", body), instr
    assert "fma" not in body  # a*b + c stays two instructions in the PTX
    # -x and abs(x): NumPy's bit operations, not neg.f16/abs.f16 (whose NaN is unspecified)
    assert "neg.f16" not in body and "abs.f16" not in body
    assert "xor.b16" in body and "and.b16" in body
    # division computes in float32, correctly rounded back to half
    assert "div.rn.f32" in body
    cmp = kernel_ptx(compare)
    for instr in ("setp.gt.f16", "setp.ge.f16", "setp.lt.f16", "setp.le.f16", "setp.eq.f16",
                  "setp.neu.f16"):
        assert instr in cmp, instr
    assert "cvt.f32.f16" not in cmp  # compared as halves, never widened


def test_float16_explicit_rounding_for_ptx_the_driver_compiles():
    # PTX the driver JIT-compiles for a GPU newer than NVRTC gets no --fmad=false; the engine
    # then builds with NU_F16_EXPLICIT_RN, and every half operation carries .rn.
    (src,) = arith.inspect_cuda().values()
    ptx = entry_body(_core.compile_ptx(src, (9, 0), options=["-DNU_F16_EXPLICIT_RN"]))
    for instr in ("add.rn.f16", "sub.rn.f16", "mul.rn.f16"):
        assert instr in ptx, instr
    assert not re.search(r"\b(add|sub|mul)\.f16\b", ptx)


# ---------------------------------------------------------------- contraction in the SASS

needs_disassembler = pytest.mark.skipif(
    _sass.find_tool("cuobjdump") is None and _sass.find_tool("nvdisasm") is None,
    reason="needs cuobjdump or nvdisasm (pip install nvidia-cuda-nvdisasm)")


@cuda.jit("void(f2[:], f2[:], f2[:], f2[:])")
def axpy(a, b, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * b[i] + c[i]


def _half_ops(sass):
    # HFMA2.MMA R, -RZ, RZ, 0, 0 is ptxas's way to zero a register, not arithmetic
    return re.findall(r"\b(HFMA2|HMUL2|HADD2) ", sass)


@needs_disassembler
def test_float16_multiply_add_is_not_fused_in_the_cubin():
    (src,) = axpy.inspect_cuda().values()
    exact = _half_ops(_sass.sass_of(_sass.cubin_of(src, False, (), (9, 0))))
    assert "HMUL2" in exact and "HADD2" in exact and "HFMA2" not in exact, exact
    # fastmath allows the contraction, as it does for float32
    fast = _half_ops(_sass.sass_of(_sass.cubin_of(src, True, (), (9, 0))))
    assert "HFMA2" in fast, fast


@needs_disassembler
def test_float16_multiply_add_is_not_fused_through_nvjitlink(tmp_path):
    # A kernel with link files goes through LTO IR and nvJitLink: -fma=0 alone let ptxas
    # fuse the unrounded mul.f16/add.f16 into HFMA2; -Xptxas=-fmad=false keeps them apart.
    (src,) = axpy.inspect_cuda().values()
    cu = tmp_path / "helper.cu"
    cu.write_text("__device__ int nu_test_helper(int x) { return x + 1; }\n")
    links = [(str(cu), "cu", cu.read_bytes(), [])]
    exact = _half_ops(_sass.sass_of(_core.link_kernel_cubin(src, links, (9, 0), False)))
    assert "HMUL2" in exact and "HADD2" in exact and "HFMA2" not in exact, exact


# ---------------------------------------------------------------- cuda.fp16 intrinsics

@cuda.jit("void(f2[:], f2[:], f2[:], f2[:, :])")
def fp16_ops(a, b, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = fp16.hadd(a[i], b[i])
        out[1, i] = fp16.hsub(a[i], b[i])
        out[2, i] = fp16.hmul(a[i], b[i])
        out[3, i] = fp16.hneg(a[i])
        out[4, i] = fp16.habs(a[i])
        out[5, i] = fp16.hfma(a[i], b[i], c[i])


def test_fp16_intrinsics_native_and_exact():
    a, b = pairs()
    c = np.roll(b, 3)
    out = np.full((6, a.size), 7, np.float16)
    fp16_ops[(a.size + 127) // 128, 128](a, b, c, out)
    with np.errstate(all="ignore"):
        assert_half_equal(out[0], a + b)
        assert_half_equal(out[1], a - b)
        assert_half_equal(out[2], a * b)
        fused = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
        assert_half_equal(out[5], fused.astype(np.float16))  # one rounding
    # CUDA's __hneg/__habs: the value exactly; a NaN stays NaN (payload unspecified on the GPU)
    assert_half_equal(out[3], np.negative(a))
    assert_half_equal(out[4], np.abs(a))
    num = ~np.isnan(a)
    np.testing.assert_array_equal(out[3][num].view(np.uint16), np.negative(a[num]).view(np.uint16))
    np.testing.assert_array_equal(out[4][num].view(np.uint16), np.abs(a[num]).view(np.uint16))
    body = kernel_ptx(fp16_ops)
    for instr in ("add.f16", "sub.f16", "mul.f16", "neg.f16", "abs.f16", "fma.rn.f16"):
        assert re.search(rf"\b{re.escape(instr)}\b", body), instr


# ---------------------------------------------------------------- int <-> float16 casts

def _int_edges(t):
    info = np.iinfo(t)
    vals = [0, 1, -1, 2, 3, 100, -100, 2047, 2049, 2051, 4097, 32767, -32768, 65504, 65505,
            65519, 65520, 65535, 100000, -100000, 2 ** 24 + 1, 2 ** 31 - 1, -2 ** 31,
            2 ** 53 + 1, 2 ** 63 - 1, -2 ** 63, 2 ** 64 - 1, info.min, info.max]
    vals = [v for v in vals if info.min <= v <= info.max]
    rand = rng.integers(info.min, info.max, size=200, dtype=t, endpoint=True)
    return np.concatenate([np.array(vals, dtype=t), rand])


@cuda.jit
def to_half(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = np.float16(x[i])


def _from_half_kernel(t):
    """A kernel calling np.<t>(x[i]), as Numba code spells the cast."""
    name = np.dtype(t).name
    scope = {"cuda": cuda, "np": np}
    exec(f"def to_{name}(x, out):\n"
         f"    i = cuda.grid(1)\n"
         f"    if i < x.size:\n"
         f"        out[i] = np.{name}(x[i])\n", scope)
    return cuda.jit(scope[f"to_{name}"])


@pytest.mark.parametrize("t", INTS, ids=lambda t: np.dtype(t).name)
def test_int_to_float16_matches_numpy_and_is_one_cvt(t):
    x = _int_edges(t)
    out = np.full(x.size, 7, np.float16)
    to_half[(x.size + 63) // 64, 64](x, out)
    with np.errstate(all="ignore"):
        assert_half_equal(out, x.astype(np.float16))
    name = np.dtype(t).name
    bits = np.dtype(t).itemsize * 8
    sig = next(s for s in to_half.inspect_asm() if str(s).startswith(f"({name}["))
    body = kernel_ptx(to_half, sig)
    assert f"cvt.rn.f16.{'s' if name.startswith('int') else 'u'}{bits}" in body, body
    assert "cvt.rn.f16.f32" not in body  # no detour through float32


@pytest.mark.parametrize("t", INTS, ids=lambda t: np.dtype(t).name)
def test_float16_to_int_matches_numpy(t):
    # NumPy truncates toward zero (Numba's cvt.rni rounds to nearest: 2.5 -> 2, 3.5 -> 4);
    # inf and NaN give NumPy's x86 values, and narrow types keep the low bits.
    x = np.concatenate([half_edges(), np.array([2.5, 3.5, -2.5, -0.7, 0.7, 300.7, -300.7,
                                                65504, -65504, 1000.5], np.float16),
                        rng.integers(0, 1 << 16, 500, dtype=np.uint16).view(np.float16)])
    out = np.zeros(x.size, t)
    k = _from_half_kernel(t)
    k[(x.size + 63) // 64, 64](x, out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = x.astype(t)
    np.testing.assert_array_equal(out, want)
    body = kernel_ptx(k)
    wide = np.dtype(t).itemsize == 8 or t is np.uint32
    assert ("cvt.rzi.s64.f16" if wide else "cvt.rzi.s32.f16") in body, body
    assert "cvt.rni" not in body


# ---------------------------------------------------------------- float64 atomics

@cuda.jit(void(int64[:], float64[:], float64[:]))
def atomic_f64(idx, vals, out):
    i = cuda.grid(1)
    sm = cuda.shared.array(8, float64)
    if cuda.threadIdx.x < 8:
        sm[cuda.threadIdx.x] = 0.0
    cuda.syncthreads()
    if i < idx.size:
        cuda.atomic.add(out, idx[i], vals[i])
        cuda.atomic.sub(out, idx[i] + 8, vals[i])
        cuda.atomic.add(sm, idx[i], vals[i])
    cuda.syncthreads()
    if cuda.threadIdx.x < 8:
        cuda.atomic.add(out, cuda.threadIdx.x + 16, sm[cuda.threadIdx.x])


def test_float64_atomic_add_is_native_and_exact():
    # sm_60+ adds float64 atomically in one instruction (atom/red .add.f64, IEEE, no
    # flushing of subnormals); sub is the add of the negation, exact in IEEE.
    n = 256
    idx = rng.integers(0, 8, n)
    # values whose sums are exact in any order (multiples of 2^-30, far from 2^53 ulps), and
    # in slot 7 subnormals, which the instruction keeps (float32 atomics flush them)
    vals = rng.integers(-2 ** 20, 2 ** 20, n) * 2.0 ** -30
    idx[:8] = 7
    sub = idx == 7
    vals[sub] = rng.integers(1, 50, sub.sum()) * 5e-324
    out = np.full(24, 0.0)
    atomic_f64[2, 128](idx, vals, out)
    want = np.zeros(8)
    np.add.at(want, idx, vals)
    np.testing.assert_array_equal(out[:8], want)
    np.testing.assert_array_equal(out[8:16], -want)
    block = [np.zeros(8), np.zeros(8)]
    for b in range(2):
        np.add.at(block[b], idx[b * 128:(b + 1) * 128], vals[b * 128:(b + 1) * 128])
    np.testing.assert_array_equal(out[16:24], block[0] + block[1])
    body = kernel_ptx(atomic_f64)
    assert re.search(r"\b(atom|red)\.global\.add\.f64\b", body), body
    assert re.search(r"\b(atom|red)\.shared\.add\.f64\b", body), body
    assert "cas.b64" not in body  # no compare-and-swap loop
