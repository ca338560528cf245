"""numba.cuda.bf16 in @cuda.jit kernels: the bfloat16 type and CUDA's bfloat16 intrinsics.

The oracle rounds the exact result (fractions.Fraction) to bfloat16 in the mode CUDA
documents, and applies CUDA's rules for NaN (the canonical NaN 0x7fff), saturation, relu,
max/min and integer conversions; bit patterns are compared exactly."""

import math
from fractions import Fraction

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

from numbacuda_ufunc import _core, cuda, vectorize  # noqa: E402
from numbacuda_ufunc.cuda import bf16  # noqa: E402
from numbacuda_ufunc.cuda.bf16 import (  # noqa: E402
    bfloat16,
    bfloat16_as_int16,
    bfloat16_as_uint16,
    hadd,
    hisinf,
    hisnan,
    uint16_as_bfloat16,
)

rng = np.random.default_rng(1616)
NAN = 0x7FFF
MAX_BITS = 0x7F7F


def compiles(kernel):
    for src in kernel.inspect_cuda().values():
        _core.compile_ptx(src, (9, 0))


def value(bits):
    """The float (exact) of a bfloat16 bit pattern."""
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])


def is_nan_bits(bits):
    return (bits & 0x7FFF) > 0x7F80


def _magnitude(bits):
    return Fraction(value(bits)) if bits < 0x7F80 else Fraction(2) ** 128


def round_bf16(q, mode="rn", zero_sign=0):
    """The bfloat16 bits of the exact rational q, rounded (rn, rz, rd, ru) as IEEE says."""
    if q == 0:
        return 0x8000 if zero_sign else 0
    sign = 0x8000 if q < 0 else 0
    m = abs(q)
    if mode == "rd":
        mode = "ru" if sign else "rz"
    elif mode == "ru":
        mode = "rz" if sign else "ru"
    lo, hi = 0, 0x7F80          # _magnitude(lo) <= m; 0x7f80 stands for 2^128 (overflow)
    if m >= _magnitude(hi):
        return sign | (0x7F80 if mode in ("rn", "ru") else MAX_BITS)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _magnitude(mid) <= m:
            lo = mid
        else:
            hi = mid
    if _magnitude(lo) == m or mode == "rz":
        r = lo
    elif mode == "ru":
        r = hi
    else:
        d_lo, d_hi = m - _magnitude(lo), _magnitude(hi) - m
        r = lo if d_lo < d_hi or (d_lo == d_hi and lo % 2 == 0) else hi
    return sign | r


def float_result(x):
    """bfloat16 bits of an IEEE special or exactly representable result held in a float."""
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0xFF80 if x < 0 else 0x7F80
    return round_bf16(Fraction(x), zero_sign=math.copysign(1, x) < 0)


def _exact_or_special(fa, fb, exact, special):
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return float_result(special())
    q = exact()
    if q == 0:
        return float_result(special())   # an exact zero: IEEE's sign of zero
    return round_bf16(q)


def o_add(a, b):
    fa, fb = value(a), value(b)
    return _exact_or_special(fa, fb, lambda: Fraction(fa) + Fraction(fb), lambda: fa + fb)


def o_sub(a, b):
    return o_add(a, b ^ 0x8000)


def o_mul(a, b):
    fa, fb = value(a), value(b)
    return _exact_or_special(fa, fb, lambda: Fraction(fa) * Fraction(fb), lambda: fa * fb)


def o_div(a, b):
    fa, fb = value(a), value(b)
    if fb == 0 or not (math.isfinite(fa) and math.isfinite(fb)) or fa == 0:
        with np.errstate(all="ignore"):
            return float_result(float(np.float64(fa) / np.float64(fb)))
    return round_bf16(Fraction(fa) / Fraction(fb))


def o_fma(a, b, c):
    fa, fb, fc = value(a), value(b), value(c)
    if not all(map(math.isfinite, (fa, fb, fc))):
        return float_result(fa * fb + fc)
    q = Fraction(fa) * Fraction(fb) + Fraction(fc)
    return float_result(fa * fb + fc) if q == 0 else round_bf16(q)   # fa*fb exact in double


def o_lt(a, b):
    return value(a) < value(b)


def _o_pick(a, b, nan_wins, wanted):
    """max (``wanted`` = 1) or min (-1) of two bfloat16 bit patterns, as CUDA's __hmax/__hmin:
    a NaN loses unless ``nan_wins`` or both are NaN; -0 and +0 are ordered -0 < +0."""
    na, nb = is_nan_bits(a), is_nan_bits(b)
    if na or nb:
        if nan_wins or (na and nb):
            return NAN
        return b if na else a
    fa, fb = value(a), value(b)
    if fa == fb:
        negative_a = bool(a & 0x8000)
        return b if negative_a == (wanted > 0) else a
    return a if (fa - fb) * wanted > 0 else b


def o_max(a, b, nan_wins=False):
    return _o_pick(a, b, nan_wins, 1)


def o_min(a, b, nan_wins=False):
    return _o_pick(a, b, nan_wins, -1)


def o_sat(r):
    return o_min(o_max(r, 0), 0x3F80)


def o_relu(r):
    if is_nan_bits(r):
        return NAN
    return 0 if r & 0x8000 else r


def edge_bf16(n=160):
    """bfloat16 bit patterns: zeros, ones, infinities, NaNs, max, subnormals, random."""
    special = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F7F, 0xFF7F,
               0x0001, 0x8001, 0x007F, 0x0080, 0x3FC0, 0x4040, 0xC0A0, 0x3F00, 0x3F01, 0x0100]
    rand = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    near_one = (0x3F80 + rng.integers(-8, 8, 40)).astype(np.uint16)   # values that cancel
    return np.concatenate([np.array(special, np.uint16), rand, near_one, near_one ^ 0x8000])


@cuda.jit
def arithmetic_all(a, b, c, out, flags):
    i = cuda.grid(1)
    if i < a.size:
        x = uint16_as_bfloat16(a[i])
        y = uint16_as_bfloat16(b[i])
        z = bf16.ushort_as_bfloat16(c[i])
        out[0, i] = bfloat16_as_uint16(hadd(x, y))
        out[1, i] = bfloat16_as_uint16(bf16.hsub(x, y))
        out[2, i] = bfloat16_as_uint16(bf16.hmul(x, y))
        out[3, i] = bfloat16_as_uint16(bf16.hdiv(x, y))
        out[4, i] = bfloat16_as_uint16(bf16.hfma(x, y, z))
        out[5, i] = bfloat16_as_uint16(bf16.hadd_rn(x, y))
        out[6, i] = bfloat16_as_uint16(bf16.hsub_rn(x, y))
        out[7, i] = bfloat16_as_uint16(bf16.hmul_rn(x, y))
        out[8, i] = bfloat16_as_uint16(bf16.hadd_sat(x, y))
        out[9, i] = bfloat16_as_uint16(bf16.hsub_sat(x, y))
        out[10, i] = bfloat16_as_uint16(bf16.hmul_sat(x, y))
        out[11, i] = bfloat16_as_uint16(bf16.hfma_sat(x, y, z))
        out[12, i] = bfloat16_as_uint16(bf16.hfma_relu(x, y, z))
        out[13, i] = bfloat16_as_uint16(bf16.hneg(x))
        out[14, i] = bfloat16_as_uint16(bf16.habs(x))
        out[15, i] = bfloat16_as_uint16(bf16.hmax(x, y))
        out[16, i] = bfloat16_as_uint16(bf16.hmin(x, y))
        out[17, i] = bfloat16_as_uint16(bf16.hmax_nan(x, y))
        out[18, i] = bfloat16_as_uint16(bf16.hmin_nan(x, y))
        flags[0, i] = bf16.heq(x, y)
        flags[1, i] = bf16.hne(x, y)
        flags[2, i] = bf16.hlt(x, y)
        flags[3, i] = bf16.hle(x, y)
        flags[4, i] = bf16.hgt(x, y)
        flags[5, i] = bf16.hge(x, y)
        flags[6, i] = bf16.hequ(x, y)
        flags[7, i] = bf16.hneu(x, y)
        flags[8, i] = bf16.hltu(x, y)
        flags[9, i] = bf16.hleu(x, y)
        flags[10, i] = bf16.hgtu(x, y)
        flags[11, i] = bf16.hgeu(x, y)
        flags[12, i] = hisnan(x)
        flags[13, i] = hisinf(x)


def test_bf16_arithmetic_and_comparison_intrinsics_bit_exact():
    a = edge_bf16()
    b = np.roll(a, 7)
    b[-40:] = a[-80:-40] ^ 0x8000          # x + (-x'), x - x' for values next to each other
    c = np.roll(a, 31)
    n = a.size
    out = np.full((19, n), 0xDEAD, np.uint16)
    flags = np.full((14, n), 99, np.int32)
    arithmetic_all[(n + 63) // 64, 64](a, b, c, out, flags)
    A, B, C = (list(map(int, v)) for v in (a, b, c))
    want = [
        [o_add(x, y) for x, y in zip(A, B)],
        [o_sub(x, y) for x, y in zip(A, B)],
        [o_mul(x, y) for x, y in zip(A, B)],
        [o_div(x, y) for x, y in zip(A, B)],
        [o_fma(x, y, z) for x, y, z in zip(A, B, C)],
    ]
    want += want[:2] + [want[2]]
    want += [[o_sat(r) for r in want[k]] for k in (0, 1, 2, 4)]
    want += [[o_relu(r) for r in want[4]]]
    want += [[x ^ 0x8000 for x in A], [x & 0x7FFF for x in A]]
    want += [[o_max(x, y) for x, y in zip(A, B)], [o_min(x, y) for x, y in zip(A, B)],
             [o_max(x, y, True) for x, y in zip(A, B)], [o_min(x, y, True) for x, y in zip(A, B)]]
    for k, w in enumerate(want):
        got = out[k].astype(int).tolist()
        bad = [(hex(A[i]), hex(B[i]), hex(C[i]), hex(got[i]), hex(w[i]))
               for i in range(n) if got[i] != w[i]]
        assert not bad, (k, bad[:5])
    fa, fb = (np.array([value(x) for x in v]) for v in (A, B))
    unordered = np.isnan(fa) | np.isnan(fb)
    with np.errstate(invalid="ignore"):
        ordered = [fa == fb, (fa < fb) | (fa > fb), fa < fb, fa <= fb, fa > fb, fa >= fb]
    for k, w in enumerate(ordered):
        np.testing.assert_array_equal(flags[k], w, err_msg=f"ordered comparison {k}")
        # unordered: the same comparison, or either operand NaN ((a < b) | (a > b) for hne)
        np.testing.assert_array_equal(flags[6 + k], w | unordered, err_msg=f"unordered {k}")
    np.testing.assert_array_equal(flags[12], np.isnan(fa))
    np.testing.assert_array_equal(flags[13], np.where(np.isinf(fa), np.sign(fa), 0))
    compiles(arithmetic_all)


I64 = (-(1 << 63), (1 << 63) - 1)
U64 = (0, (1 << 64) - 1)
INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-(1 << 15), (1 << 15) - 1),
              "uint16": (0, (1 << 16) - 1), "int32": (-(1 << 31), (1 << 31) - 1),
              "uint32": (0, (1 << 32) - 1), "int64": I64, "uint64": U64}


def o_to_int(bits, mode, ty):
    lo, hi = INT_RANGES[ty]
    if is_nan_bits(bits):
        return 1 << 63 if ty in ("int64", "uint64") else 0
    f = value(bits)
    if math.isinf(f):
        return hi if f > 0 else lo
    r = {"rn": round, "rz": math.trunc, "rd": math.floor, "ru": math.ceil}[mode](f)
    return min(max(int(r), lo), hi)


@cuda.jit
def to_integers(a, i8, u8, i16, u16, i32, u32, i64, u64):
    i = cuda.grid(1)
    if i < a.size:
        x = uint16_as_bfloat16(a[i])
        i8[i] = bf16.bfloat16_to_int8_rz(x)
        u8[i] = bf16.bfloat16_to_uint8_rz(x)
        i16[0, i] = bf16.bfloat16_to_int16_rn(x)
        i16[1, i] = bf16.bfloat16_to_int16_rz(x)
        i16[2, i] = bf16.bfloat16_to_int16_rd(x)
        i16[3, i] = bf16.bfloat16_to_int16_ru(x)
        u16[0, i] = bf16.bfloat16_to_uint16_rn(x)
        u16[1, i] = bf16.bfloat16_to_uint16_rz(x)
        u16[2, i] = bf16.bfloat16_to_uint16_rd(x)
        u16[3, i] = bf16.bfloat16_to_uint16_ru(x)
        i32[0, i] = bf16.bfloat16_to_int32_rn(x)
        i32[1, i] = bf16.bfloat16_to_int32_rz(x)
        i32[2, i] = bf16.bfloat16_to_int32_rd(x)
        i32[3, i] = bf16.bfloat16_to_int32_ru(x)
        u32[0, i] = bf16.bfloat16_to_uint32_rn(x)
        u32[1, i] = bf16.bfloat162uint_rz(x)
        u32[2, i] = bf16.bfloat16_to_uint32_rd(x)
        u32[3, i] = bf16.bfloat16_to_uint32_ru(x)
        i64[0, i] = bf16.bfloat16_to_int64_rn(x)
        i64[1, i] = bf16.bfloat16_to_int64_rz(x)
        i64[2, i] = bf16.bfloat16_to_int64_rd(x)
        i64[3, i] = bf16.bfloat162ll_ru(x)
        u64[0, i] = bf16.bfloat16_to_uint64_rn(x)
        u64[1, i] = bf16.bfloat16_to_uint64_rz(x)
        u64[2, i] = bf16.bfloat16_to_uint64_rd(x)
        u64[3, i] = bf16.bfloat16_to_uint64_ru(x)


def test_bf16_to_integer_conversions_saturate_and_round():
    halves = [0x3F00, 0xBF00, 0x3FC0, 0xBFC0, 0x4020, 0xC020, 0x4060, 0x3F40, 0xBF40]
    limits = [0x4700, 0xC700, 0x4780, 0x4F00, 0xCF00, 0x4F80, 0x5F00, 0xDF00, 0x5F80, 0x42FE,
              0x4300, 0xC300, 0x4380, 0x46FF, 0xC6FF, 0x477F, 0x4EFF, 0x5EFF, 0x5F7F]
    a = np.concatenate([edge_bf16(100), np.array(halves + limits, np.uint16)])
    n = a.size
    outs = {"int8": np.full(n, 7, np.int8), "uint8": np.full(n, 7, np.uint8)}
    for ty in ("int16", "uint16", "int32", "uint32", "int64", "uint64"):
        outs[ty] = np.full((4, n), 7, ty)
    to_integers[(n + 63) // 64, 64](a, *outs.values())
    A = list(map(int, a))
    for ty, got in outs.items():
        modes = ["rz"] if got.ndim == 1 else ["rn", "rz", "rd", "ru"]
        for k, mode in enumerate(modes):
            row = got if got.ndim == 1 else got[k]
            want = [o_to_int(x, mode, ty) for x in A]
            if ty == "int64":
                want = [w - (1 << 64) if w >= 1 << 63 else w for w in want]
            bad = [(hex(A[i]), int(row[i]), want[i]) for i in range(n) if int(row[i]) != want[i]]
            assert not bad, (ty, mode, bad[:5])
    compiles(to_integers)


@cuda.jit
def from_numbers(f32, f64, i64, u64, i32, u32, out):
    i = cuda.grid(1)
    if i < f32.size:
        out[0, i] = bfloat16_as_uint16(bf16.float32_to_bfloat16(f32[i]))
        out[1, i] = bfloat16_as_uint16(bf16.float32_to_bfloat16_rn(f32[i]))
        out[2, i] = bfloat16_as_uint16(bf16.float32_to_bfloat16_rz(f32[i]))
        out[3, i] = bfloat16_as_uint16(bf16.float32_to_bfloat16_rd(f32[i]))
        out[4, i] = bfloat16_as_uint16(bf16.float2bfloat16_ru(f32[i]))
        out[5, i] = bfloat16_as_uint16(bf16.float64_to_bfloat16(f64[i]))
        out[6, i] = bfloat16_as_uint16(bf16.int64_to_bfloat16_rn(i64[i]))
        out[7, i] = bfloat16_as_uint16(bf16.int64_to_bfloat16_rz(i64[i]))
        out[8, i] = bfloat16_as_uint16(bf16.int64_to_bfloat16_rd(i64[i]))
        out[9, i] = bfloat16_as_uint16(bf16.ll2bfloat16_ru(i64[i]))
        out[10, i] = bfloat16_as_uint16(bf16.uint64_to_bfloat16_rn(u64[i]))
        out[11, i] = bfloat16_as_uint16(bf16.uint64_to_bfloat16_rz(u64[i]))
        out[12, i] = bfloat16_as_uint16(bf16.uint64_to_bfloat16_rd(u64[i]))
        out[13, i] = bfloat16_as_uint16(bf16.uint64_to_bfloat16_ru(u64[i]))
        out[14, i] = bfloat16_as_uint16(bf16.int32_to_bfloat16_rn(i32[i]))
        out[15, i] = bfloat16_as_uint16(bf16.int32_to_bfloat16_rd(i32[i]))
        out[16, i] = bfloat16_as_uint16(bf16.uint32_to_bfloat16_ru(u32[i]))
        out[17, i] = bfloat16_as_uint16(bf16.int16_to_bfloat16_rn(bf16.bfloat16_as_int16(
            bf16.uint16_as_bfloat16(u32[i] & 0xFFFF))))
        out[18, i] = bfloat16_as_uint16(bf16.uint16_to_bfloat16_rz(u32[i] & 0xFFFF))
        out[19, i] = bf16.bfloat16_as_int16(bf16.int16_as_bfloat16(i32[i] & 0x7FFF))


def test_bf16_from_float_and_integer_conversions_round_once():
    n = 200
    bits32 = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    # values halfway between bfloat16 neighbours, just above and below, subnormals, limits
    halfway = (rng.integers(0, 1 << 16, 40, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
    bits32[:40] = halfway
    bits32[40:80] = halfway + rng.choice(np.array([1, 0xFFFFFFFF], np.uint32), 40)
    bits32[80:90] = [0x7F800000, 0xFF800000, 0x7FC00000, 0xFFBFFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
                     0x00000001, 0x80008000, 0x00018000, 0x7F7F8000]
    f32 = bits32.view(np.float32)
    f64 = rng.standard_normal(n) * 10.0 ** rng.integers(-40, 40, n)
    f64[:40] = f32[:40].astype(np.float64) + f32[:40].astype(np.float64) * 2.0 ** -30
    f64[40:45] = [np.nan, -np.inf, 3.4e38 * 1.01, 1e-45, -0.0]
    i64 = rng.integers(-(1 << 63), (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
    i64[:8] = [-(1 << 63), (1 << 63) - 1, 0, -1, 257, 259, -(1 << 40) - 1, (1 << 24) + 1]
    i64[8:40] >>= rng.integers(20, 62, 32)
    u64 = rng.integers(0, (1 << 64) - 1, n, dtype=np.uint64, endpoint=True)
    u64[:4] = [0, (1 << 64) - 1, 1 << 63, (1 << 8) + 1]
    i32 = rng.integers(-(1 << 31), (1 << 31) - 1, n, dtype=np.int32, endpoint=True)
    i32[:3] = [-(1 << 31), (1 << 31) - 1, 0]
    u32 = rng.integers(0, (1 << 32) - 1, n, dtype=np.uint32, endpoint=True)
    u32[:2] = [(1 << 32) - 1, 0x8181]
    out = np.full((20, n), 0xDEAD, np.uint16)
    from_numbers[(n + 63) // 64, 64](f32, f64, i64, u64, i32, u32, out.view(np.int16))

    def from_float(x, mode="rn"):
        x = float(x)
        return NAN if math.isnan(x) else (
            float_result(x) if math.isinf(x) or x == 0 else round_bf16(Fraction(x), mode))

    want = [[from_float(x) for x in f32]]
    want += [[from_float(x, m) for x in f32] for m in ("rn", "rz", "rd", "ru")]
    want += [[from_float(x) for x in f64]]
    for ints in (i64, u64):
        want += [[round_bf16(Fraction(int(x)), m) for x in ints] for m in ("rn", "rz", "rd", "ru")]
    want += [[round_bf16(Fraction(int(x)), "rn") for x in i32],
             [round_bf16(Fraction(int(x)), "rd") for x in i32],
             [round_bf16(Fraction(int(x)), "ru") for x in u32]]
    low16 = [int(x) & 0xFFFF for x in u32]
    want += [[round_bf16(Fraction(x - (1 << 16) if x >= 1 << 15 else x)) for x in low16],
             [round_bf16(Fraction(x), "rz") for x in low16],
             [int(x) & 0x7FFF for x in i32]]
    for k, w in enumerate(want):
        got = out[k].astype(int).tolist()
        bad = [(i, hex(got[i]), hex(w[i])) for i in range(n) if got[i] != w[i]]
        assert not bad, (k, bad[:5])
    compiles(from_numbers)


@cuda.jit
def math_all(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = uint16_as_bfloat16(a[i])
        out[0, i] = bfloat16_as_uint16(bf16.hsqrt(x))
        out[1, i] = bfloat16_as_uint16(bf16.hexp(x))
        out[2, i] = bfloat16_as_uint16(bf16.hlog(x))
        out[3, i] = bfloat16_as_uint16(bf16.hsin(x))
        out[4, i] = bfloat16_as_uint16(bf16.hcos(x))
        out[5, i] = bfloat16_as_uint16(bf16.htanh(x))
        out[6, i] = bfloat16_as_uint16(bf16.hexp2(x))
        out[7, i] = bfloat16_as_uint16(bf16.hlog2(x))
        out[8, i] = bfloat16_as_uint16(bf16.hlog10(x))
        out[9, i] = bfloat16_as_uint16(bf16.hexp10(x))
        out[10, i] = bfloat16_as_uint16(bf16.hrcp(x))
        out[11, i] = bfloat16_as_uint16(bf16.hrsqrt(x))
        out[12, i] = bfloat16_as_uint16(bf16.htrunc(x))
        out[13, i] = bfloat16_as_uint16(bf16.hceil(x))
        out[14, i] = bfloat16_as_uint16(bf16.hfloor(x))
        out[15, i] = bfloat16_as_uint16(bf16.hrint(x))


def test_bf16_math_intrinsics():
    a = edge_bf16(100)
    out = np.full((16, a.size), 0xDEAD, np.uint16)
    math_all[(a.size + 63) // 64, 64](a, out)
    x = (a.astype(np.uint32) << 16).view(np.float32)
    with np.errstate(all="ignore"):
        approx = [np.sqrt(x), np.exp(x), np.log(x), np.sin(x), np.cos(x), np.tanh(x), np.exp2(x),
                  np.log2(x), np.log10(x), np.float32(10.0) ** x, 1 / x.astype(np.float64),
                  1 / np.sqrt(x.astype(np.float64))]
        exact = [np.trunc(x), np.ceil(x), np.floor(x), np.rint(x)]

    def rank(bits):  # position on the number line, in bfloat16 ulps
        bits = bits.astype(np.int64)
        return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)

    for k, w in enumerate(approx):   # NumPy's float32 (float64) results, rounded: within 1 ulp
        want = np.array([float_result(float(v)) for v in w])
        nan = is_nan_bits(want)
        assert (out[k][nan] == NAN).all(), (k, a[nan][out[k][nan] != NAN][:5])
        dist = np.abs(rank(out[k][~nan]) - rank(want[~nan]))
        assert (dist <= 1).all(), (k, a[~nan][dist > 1][:5], out[k][~nan][dist > 1][:5])
    for k, w in enumerate(exact, start=12):
        want = [float_result(float(v)) for v in w]
        assert out[k].astype(int).tolist() == want, k
    compiles(math_all)


def test_bf16_type_in_kernels_and_numba_examples():
    @cuda.jit
    def kernel(out, bits, flags, a, b):
        x = bfloat16(1.25)
        y = bfloat16(-2.5)
        out[0] = float(hadd(x, y))
        out[1] = bf16.bfloat16_to_float32(bf16.hfma_relu(y, bfloat16(2.0), x))
        out[2] = float(bf16.hfma_sat(bfloat16(1.5), bfloat16(0.75), bfloat16(1.5)))
        out[3] = math.sqrt(x)                      # math functions take bfloat16 values
        out[4] = bf16.hdiv(y, x)
        bits[0] = bfloat16_as_int16(bf16.int16_as_bfloat16(bits[1]))
        flags[0] = bf16.hgt(a, b)                  # float64 arguments convert to bfloat16
        flags[1] = hisinf(bfloat16(-math.inf))
        flags[2] = hisnan(bfloat16(float("nan")))   # float("...") folds at compile time

    out = np.full(5, np.nan, np.float32)
    bits = np.array([0, 0x3FC0], np.int16)
    flags = np.full(3, 9, np.int32)
    kernel[1, 1](out, bits, flags, 3.0, 3.001)
    np.testing.assert_array_equal(out, [-1.25, 0.0, 1.0, np.float32(ml_dtypes.bfloat16(math.sqrt(1.25))), -2.0])
    assert bits[0] == 0x3FC0
    np.testing.assert_array_equal(flags, [0, -1, 1])   # 3.001 rounds to 3.0 in bfloat16
    compiles(kernel)


def test_bf16_in_a_ufunc_argument_conversion_and_arrays():
    @vectorize(["bfloat16(float32, float32)"])
    def h(x, y):
        return bf16.hmul(x, y)                     # float32 arguments convert to bfloat16

    x = rng.standard_normal(50).astype(np.float32)
    want = (x.astype(ml_dtypes.bfloat16).astype(np.float64) ** 2)
    want = [round_bf16(Fraction(float(v))) for v in want]
    assert h(x, x).view(np.uint16).astype(int).tolist() == want

    @cuda.jit
    def axpy(a, x, y, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = bf16.hfma(a, x[i], y[i])      # bfloat16 arrays in and out

    xs = rng.standard_normal(40).astype(ml_dtypes.bfloat16)
    ys = rng.standard_normal(40).astype(ml_dtypes.bfloat16)
    out = np.zeros(40, ml_dtypes.bfloat16)
    axpy[1, 64](0.5, xs, ys, out)
    want = [o_fma(0x3F00, int(p), int(q)) for p, q in zip(xs.view(np.uint16), ys.view(np.uint16))]
    assert out.view(np.uint16).astype(int).tolist() == want


def test_bf16_math_floor_ceil_trunc_stay_bfloat16():
    @cuda.jit
    def rounding(a, out):
        i = cuda.grid(1)
        if i < a.size:
            x = uint16_as_bfloat16(a[i])
            out[0, i] = bfloat16_as_uint16(math.floor(x))   # bfloat16, as Numba's overloads
            out[1, i] = bfloat16_as_uint16(math.ceil(x))
            out[2, i] = bfloat16_as_uint16(math.trunc(x))

    a = edge_bf16(60)
    out = np.full((3, a.size), 0xDEAD, np.uint16)
    rounding[1, a.size](a, out)
    x = (a.astype(np.uint32) << 16).view(np.float32)
    for k, f in enumerate((np.floor, np.ceil, np.trunc)):
        assert out[k].astype(int).tolist() == [float_result(float(v)) for v in f(x)], k


def test_float_of_a_string_literal_in_kernels():
    from numbacuda_ufunc.errors import CompileError

    @cuda.jit
    def specials(out):
        out[0] = float("nan")
        out[1] = float("-inf")
        out[2] = float(" 1.5e3 ")
        out[3] = float("Infinity")

    out = np.zeros(4)
    specials[1, 1](out)
    np.testing.assert_array_equal(out, [np.nan, -np.inf, 1500.0, np.inf])

    ns = {"cuda": cuda}                             # no source: the code-object front end
    exec('def made(out):\n    out[0] = float("-inf")\n    out[1] = float("nan")\n', ns)
    made = cuda.jit(ns["made"])
    made[1, 1](out)
    np.testing.assert_array_equal(out[:2], [-np.inf, np.nan])

    @cuda.jit
    def bad(out):
        out[0] = float("one")

    with pytest.raises(CompileError, match="could not convert the string to a float"):
        bad[1, 1](out)


def test_bf16_errors_and_support():
    from numbacuda_ufunc.errors import CompileError

    assert cuda.is_bfloat16_supported()
    assert cuda.bf16 is bf16 and bf16.bfloat16 is bfloat16

    @cuda.jit
    def bad(out):
        out[0] = bf16.hadd(1.0)

    with pytest.raises(CompileError, match="hadd"):
        bad[1, 1](np.zeros(1, np.float32))

    @cuda.jit
    def bad_complex(out):
        out[0] = bf16.hneg(1j)

    with pytest.raises(CompileError, match="real numbers"):
        bad_complex[1, 1](np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match="only inside a @cuda.jit kernel"):
        bf16.hadd(1, 2)
