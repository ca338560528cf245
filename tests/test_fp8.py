"""FP8 in @cuda.jit kernels: numba.cuda._internal.cuda_fp8's types and cvt functions.

Oracles, independent of the implementation: ml_dtypes' float8_e4m3fn, float8_e5m2 and
float8_e8m0fnu for decoding and for round-to-nearest-even encoding, with cuda_fp8.h's
documented rules on top (SATFINITE clamps what overflows to the largest finite value,
NOSAT gives e4m3's NaN or e5m2's infinity, a float NaN becomes 0x7F); e8m0's directed
roundings from math.frexp (exact). Decoding is checked for all 256 bytes of each format,
encoding on dense sweeps plus every halfway point and its float neighbours. Every kernel
also compiles to PTX for sm_90 with NVRTC (CUDA's own cuda_fp8.h)."""

import math

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

from numbacuda_ufunc import _core, cuda  # noqa: E402
from numbacuda_ufunc.cuda.fp8 import (  # noqa: E402
    cudaRoundMode,
    cvt_bfloat16raw_to_e8m0,
    cvt_bfloat16raw_to_fp8,
    cvt_double2_to_e8m0x2,
    cvt_double2_to_fp8x2,
    cvt_double_to_e8m0,
    cvt_double_to_fp8,
    cvt_e8m0_to_bf16raw,
    cvt_float2_to_e8m0x2,
    cvt_float2_to_fp8x2,
    cvt_float_to_e8m0,
    cvt_float_to_fp8,
    fp8_e4m3,
    fp8_e4m3_from_bits,
    fp8_e5m2,
    fp8_e5m2_from_bits,
    fp8_e8m0,
    fp8_e8m0_from_bits,
    fp8_interpretation_t,
    fp8_to_bits,
    fp8x2_e4m3,
    fp8x2_e8m0,
    fp8x4_e4m3,
    fp8x4_e5m2,
    fp8x4_e8m0,
    saturation_t,
)
from numbacuda_ufunc.errors import CompileError  # noqa: E402
from numbacuda_ufunc.types import (  # noqa: E402
    bfloat16,
    bool_,
    complex64,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

rng = np.random.default_rng(8)
NOSAT, SAT = saturation_t.NOSAT, saturation_t.SATFINITE
E4M3, E5M2 = fp8_interpretation_t.E4M3, fp8_interpretation_t.E5M2
RZ, RP = cudaRoundMode.cudaRoundZero, cudaRoundMode.cudaRoundPosInf
ML = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2,
      "e8m0": ml_dtypes.float8_e8m0fnu}
MAXNORM = {"e4m3": 0x7E, "e5m2": 0x7B}
BYTES = np.arange(256, dtype=np.uint8)


def compiles(kernel, minimal=True):
    """Each specialisation's unit compiles to PTX for sm_90 (with -minimal, as the engine
    first tries); returns the PTX texts."""
    opts = ["-minimal"] if minimal else []
    return [_core.compile_ptx(src, (9, 0), options=opts) for src in kernel.inspect_cuda().values()]


def launch(kernel, n, *args):
    kernel[max(1, (n + 127) // 128), 128](*args)


def bits_of(a, dt):
    return np.asarray(a).view(dt)


# ---- oracles ------------------------------------------------------------------------------
def round_to_odd_f32(x):
    """float64 -> float32 rounded to odd (toward zero, last bit set when inexact): ml_dtypes
    casts a float64 through float32 (two roundings), while CUDA rounds a double once; from
    the round-to-odd float32 (24 >= 3 + 2 bits) one rounding is the correct one."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
        away = np.abs(f.astype(np.float64)) > np.abs(x)
        f[away] = np.nextafter(f[away], np.float32(0))
        inexact = (f.astype(np.float64) != x) & ~np.isnan(x)
        u = f.view(np.uint32).copy()
        u[inexact] |= 1
    return u.view(np.float32)


def fp8_oracle(x, kind, sat, source="double"):
    """cuda_fp8.h's e4m3/e5m2 byte of each float64 value: ml_dtypes' round to nearest
    even, then the documented overflow, saturation and NaN rules."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = round_to_odd_f32(x).astype(ML[kind]).view(np.uint8).copy()
    sign = (np.signbit(x).astype(np.uint8) << 7).astype(np.uint8)
    nan = np.isnan(x)
    special = (out & 0x7F) == 0x7F if kind == "e4m3" else (out & 0x7F) >= 0x7C
    over = special & ~nan
    if sat:
        out[over] = MAXNORM[kind] | sign[over]
    else:
        out[over] = (0x7F if kind == "e4m3" else 0x7C) | sign[over]
    if source == "float":
        out[nan] = 0x7F
    elif kind == "e4m3":
        out[nan] = 0x7F | sign[nan]
    else:
        top = ((x.view(np.uint64) >> np.uint64(50)) & np.uint64(3)).astype(np.uint8)
        out[nan] = 0x7E | top[nan] | sign[nan]
    return out


F32_MAX = float(np.finfo(np.float32).max)


def e8m0_oracle(values, rounding, sat, source="float"):
    """The e8m0 byte of each value: |x| rounded to a power of two toward zero (RZ) or up
    (RP), clipped below at 2^-127; above 2^127 NaN 0xFF (NOSAT) or 0xFE (SATFINITE)."""
    out = []
    for v in np.asarray(values, np.float64):
        if math.isnan(v):
            out.append(0xFF)
            continue
        a = abs(float(v))
        if math.isinf(a):
            code = 255
        elif a == 0:
            code = 0
        elif source == "double" and a > F32_MAX and rounding == RZ:
            code = 254  # CUDA: a double first becomes a float toward zero (F32_MAX)
        else:
            m, e = math.frexp(a)
            code = max((e - 1 if rounding == RZ or m == 0.5 else e) + 127, 0)
        out.append((0xFE if sat else 0xFF) if code >= 255 else code)
    return np.array(out, np.uint8)


def decoded(kind):
    """float64 values of all 256 bytes (ml_dtypes)."""
    return BYTES.view(ML[kind]).astype(np.float64)


def int_oracle(values, dt, eight_bit=False):
    """Toward zero, saturating; NaN gives 0 (8 to 32 bits) or 2^63's bits (64 bits)."""
    info = np.iinfo(dt)
    out = []
    for v in values:
        if math.isnan(v):
            out.append(0 if info.bits < 64 else (info.min if info.min < 0 else 1 << 63))
        elif math.isinf(v):
            out.append(info.max if v > 0 else info.min)
        else:
            out.append(min(max(math.trunc(v), info.min), info.max))
    return np.array(out, dt)


def halfway_points(kind):
    """Every midpoint between neighbouring finite values (both signs), with the float32
    and float64 neighbours on each side, plus the edges: zeros, NaN, infinities, the
    largest finite value and just above it, subnormals, float32's extremes."""
    v = np.unique(np.abs(decoded(kind)[np.isfinite(decoded(kind))]))
    mids = (v[:-1] + v[1:]) / 2
    top = v[-1] + (v[-1] - v[-2]) / 2  # the midpoint above the largest finite value
    base = np.concatenate([v, mids, [top, top * 2, 1e30, F32_MAX, 2.0 ** -30, 1e-45]])
    pts = [base]
    for dt in (np.float32, np.float64):
        b = base[base < np.finfo(dt).max].astype(dt)
        pts += [np.nextafter(b, dt(np.inf)).astype(np.float64),
                np.nextafter(b, dt(0)).astype(np.float64)]
    x = np.concatenate(pts)
    x = np.concatenate([x, -x, [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan]])
    return x


def dense_f32():
    """A stride through every float32 bit pattern, plus random values near FP8's range."""
    u = np.arange(0, 2 ** 32, 2 ** 32 // 200003, dtype=np.uint64).astype(np.uint32)
    near = rng.uniform(-70000, 70000, 20000).astype(np.float32)
    small = (rng.standard_normal(20000) * 2.0 ** rng.integers(-30, 10, 20000)).astype(np.float32)
    return np.concatenate([u.view(np.float32), near, small])


# ---- kernels --------------------------------------------------------------------------------
@cuda.jit
def cvt_f32_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cvt_float_to_fp8(x[i], NOSAT, E4M3)
        out[i, 1] = cvt_float_to_fp8(x[i], SAT, E4M3)
        out[i, 2] = cvt_float_to_fp8(x[i], NOSAT, E5M2)
        out[i, 3] = cvt_float_to_fp8(x[i], SAT, E5M2)
        out[i, 4] = fp8_to_bits(fp8_e4m3(x[i]))
        out[i, 5] = fp8_to_bits(fp8_e5m2(x[i]))
        out[i, 6] = cvt_float_to_e8m0(x[i], NOSAT, RZ)
        out[i, 7] = cvt_float_to_e8m0(x[i], SAT, RZ)
        out[i, 8] = cvt_float_to_e8m0(x[i], NOSAT, RP)
        out[i, 9] = cvt_float_to_e8m0(x[i], SAT, RP)
        out[i, 10] = fp8_to_bits(fp8_e8m0(x[i]))


@cuda.jit
def cvt_f64_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = cvt_double_to_fp8(x[i], NOSAT, E4M3)
        out[i, 1] = cvt_double_to_fp8(x[i], SAT, E4M3)
        out[i, 2] = cvt_double_to_fp8(x[i], NOSAT, E5M2)
        out[i, 3] = cvt_double_to_fp8(x[i], SAT, E5M2)
        out[i, 4] = fp8_to_bits(fp8_e4m3(x[i]))
        out[i, 5] = fp8_to_bits(fp8_e5m2(x[i]))
        out[i, 6] = cvt_double_to_e8m0(x[i], NOSAT, RZ)
        out[i, 7] = cvt_double_to_e8m0(x[i], SAT, RZ)
        out[i, 8] = cvt_double_to_e8m0(x[i], NOSAT, RP)
        out[i, 9] = cvt_double_to_e8m0(x[i], SAT, RP)
        out[i, 10] = fp8_to_bits(fp8_e8m0(x[i]))


def _check_encodings(x, out, source):
    with np.errstate(invalid="ignore"):  # NaNs of the sweep
        x64 = x.astype(np.float64)
    for col, kind, sat in ((0, "e4m3", False), (1, "e4m3", True), (2, "e5m2", False),
                           (3, "e5m2", True), (4, "e4m3", True), (5, "e5m2", True)):
        want = fp8_oracle(x64, kind, sat, source)
        bad = np.flatnonzero(out[:, col] != want)
        assert bad.size == 0, (col, kind, sat, x64[bad[:5]], out[bad[:5], col], want[bad[:5]])
    for col, rnd, sat in ((6, RZ, False), (7, RZ, True), (8, RP, False), (9, RP, True),
                          (10, RP, True)):
        want = e8m0_oracle(x64, rnd, sat, source)
        bad = np.flatnonzero(out[:, col] != want)
        assert bad.size == 0, (col, rnd, sat, x64[bad[:5]], out[bad[:5], col], want[bad[:5]])


@pytest.mark.parametrize("kind", ["e4m3", "e5m2", "e8m0"])
def test_fp8_encode_float32_halfway_and_edges(kind):
    x = halfway_points(kind if kind != "e8m0" else "e5m2").astype(np.float32)
    if kind == "e8m0":  # powers of two and their neighbours over float32's whole range
        p = np.ldexp(1.0, np.arange(-149, 128)).astype(np.float32)
        x = np.concatenate([p, np.nextafter(p, np.float32(np.inf)), np.nextafter(p, np.float32(0)),
                            p * np.float32(1.5), -p, x])
    out = np.full((x.size, 11), 0xAA, np.uint8)
    launch(cvt_f32_kernel, x.size, x, out)
    _check_encodings(x, out, "float")


def test_fp8_encode_float32_dense_sweep():
    x = dense_f32()
    out = np.full((x.size, 11), 0xAA, np.uint8)
    launch(cvt_f32_kernel, x.size, x, out)
    _check_encodings(x, out, "float")


@pytest.mark.parametrize("kind", ["e4m3", "e5m2"])
def test_fp8_encode_float64_halfway_and_edges(kind):
    x = halfway_points(kind)
    p = np.ldexp(1.0, np.arange(-1074, 1024))
    x = np.concatenate([x, p, np.nextafter(p, np.inf), np.nextafter(p, 0), -p * 1.5,
                        [1e300, -1e300, 2.0 ** 128, F32_MAX, np.nextafter(F32_MAX, np.inf)],
                        # double NaNs: every combination of sign and top significand bits
                        np.array([0x7FF0000000000001, 0x7FF4000000000000, 0x7FF8000000000000,
                                  0x7FFC000000000000, 0xFFF0000000000001, 0xFFFC000000000000],
                                 np.uint64).view(np.float64)])
    out = np.full((x.size, 11), 0xAA, np.uint8)
    launch(cvt_f64_kernel, x.size, x, out)
    _check_encodings(x, out, "double")


def test_fp8_encode_float64_dense_sweep():
    u = np.arange(0, 2 ** 64, 2 ** 64 // 200003, dtype=np.uint64)
    x = np.concatenate([u.view(np.float64), rng.uniform(-70000, 70000, 20000),
                        rng.standard_normal(20000) * 2.0 ** rng.integers(-150, 130, 20000)])
    out = np.full((x.size, 11), 0xAA, np.uint8)
    launch(cvt_f64_kernel, x.size, x, out)
    _check_encodings(x, out, "double")


def test_fp8_nan_encodings_follow_cuda():
    """A float NaN becomes 0x7F in both formats whatever its sign; a double NaN keeps its
    sign (and, in e5m2, its top two significand bits); e8m0 NaN is 0xFF."""
    x = np.array([np.nan, -np.nan], np.float32)
    out = np.zeros((2, 11), np.uint8)
    launch(cvt_f32_kernel, 2, x, out)
    assert out[:, :6].tolist() == [[0x7F] * 6, [0x7F] * 6]
    assert (out[:, 6:] == 0xFF).all()
    x = np.array([0x7FF0000000000001, 0xFFF8000000000000], np.uint64).view(np.float64)
    out = np.zeros((2, 11), np.uint8)
    launch(cvt_f64_kernel, 2, x, out)
    assert out[:, :4].tolist() == [[0x7F, 0x7F, 0x7E, 0x7E], [0xFF, 0xFF, 0xFE, 0xFE]]


def test_fp8_overflow_saturation_cases():
    """The documented cases: 1e20 is e5m2 inf 0x7C (NOSAT) / 0x7B, e4m3 NaN 0x7F / 0x7E;
    e4m3's 464 (448 + half an ulp) rounds to even 448, just above it overflows."""
    x = np.array([1e20, 464.0, np.nextafter(np.float32(464), np.float32(1e9)), 61440.0,
                  np.nextafter(np.float32(61440), np.float32(0)), -np.inf], np.float32)
    out = np.zeros((x.size, 11), np.uint8)
    launch(cvt_f32_kernel, x.size, x, out)
    assert out[0, :4].tolist() == [0x7F, 0x7E, 0x7C, 0x7B]
    assert out[1, :2].tolist() == [0x7E, 0x7E]
    assert out[2, :2].tolist() == [0x7F, 0x7E]
    assert out[3, 2:4].tolist() == [0x7C, 0x7B]
    assert out[4, 2:4].tolist() == [0x7B, 0x7B]
    assert out[5, :4].tolist() == [0xFF, 0xFE, 0xFC, 0xFB]
    assert out[0, 6:11].tolist() == [0xC1, 0xC1, 0xC2, 0xC2, 0xC2]  # 2^66 or 2^67


# ---- decoding: all 256 bytes ----------------------------------------------------------------
def _decode_kernel(from_bits):
    @cuda.jit
    def decode(b, f32, f64, f16, bf, i8, u8, i16, u16, i32, u32, i64, u64, tf):
        i = cuda.grid(1)
        if i < b.size:
            v = from_bits(b[i])
            f32[i] = float32(v)
            f64[i] = float64(v)
            f16[i] = float16(v)
            bf[i] = bfloat16(v)
            i8[i] = int8(v)
            u8[i] = uint8(v)
            i16[i] = int16(v)
            u16[i] = uint16(v)
            i32[i] = int32(v)
            u32[i] = uint32(v)
            i64[i] = int64(v)
            u64[i] = uint64(v)
            tf[i] = bool_(v)
    return decode


DECODERS = {"e4m3": _decode_kernel(fp8_e4m3_from_bits), "e5m2": _decode_kernel(fp8_e5m2_from_bits),
            "e8m0": _decode_kernel(fp8_e8m0_from_bits)}
INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)


@pytest.mark.parametrize("kind", ["e4m3", "e5m2", "e8m0"])
def test_fp8_decode_all_bytes(kind):
    outs = [np.full(256, np.nan, np.float32), np.full(256, np.nan, np.float64),
            np.full(256, 7, np.float16), np.full(256, 7, ml_dtypes.bfloat16)]
    outs += [np.full(256, 99, dt) for dt in INTS] + [np.zeros(256, np.bool_)]
    launch(DECODERS[kind], 256, BYTES, *outs)
    want = decoded(kind)
    nan = np.isnan(want)
    np.testing.assert_array_equal(outs[0][~nan], want[~nan].astype(np.float32))
    np.testing.assert_array_equal(bits_of(outs[0][~nan], np.uint32),
                                  bits_of(want[~nan].astype(np.float32), np.uint32))  # -0
    np.testing.assert_array_equal(outs[1][~nan], want[~nan])
    assert np.isnan(outs[0][nan]).all() and np.isnan(outs[1][nan]).all()
    # float16 and bfloat16: exact, e8m0 -> float16 rounded to nearest even (NumPy's cast);
    # a NaN becomes the canonical 0x7FFF.
    with np.errstate(over="ignore"):
        f16 = want.astype(np.float32).astype(np.float16)
    np.testing.assert_array_equal(bits_of(outs[2], np.uint16)[~nan], bits_of(f16, np.uint16)[~nan])
    np.testing.assert_array_equal(bits_of(outs[3], np.uint16)[~nan],
                                  bits_of(want.astype(np.float32).astype(ml_dtypes.bfloat16),
                                          np.uint16)[~nan])
    assert (bits_of(outs[2], np.uint16)[nan] == 0x7FFF).all()
    assert (bits_of(outs[3], np.uint16)[nan] == 0x7FFF).all()
    for out, dt in zip(outs[4:12], INTS):
        np.testing.assert_array_equal(out, int_oracle(want, dt), err_msg=np.dtype(dt).name)
    np.testing.assert_array_equal(outs[12], np.ones(256, bool) if kind == "e8m0" else want != 0)


@pytest.mark.parametrize("kind", ["e4m3", "e5m2", "e8m0"])
def test_fp8_roundtrip_every_finite_value(kind):
    """Building a value from each decoded finite float32 gives back its byte (NaNs give
    the canonical one)."""
    x = decoded(kind).astype(np.float32)
    out = np.zeros((256, 11), np.uint8)
    launch(cvt_f32_kernel, 256, x, out)
    col = {"e4m3": 4, "e5m2": 5, "e8m0": 10}[kind]
    fin = np.isfinite(x)
    np.testing.assert_array_equal(out[fin, col], BYTES[fin])


# ---- constructors from other types ----------------------------------------------------------
@cuda.jit
def from_ints_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = fp8_to_bits(fp8_e4m3(x[i]))
        out[i, 1] = fp8_to_bits(fp8_e5m2(x[i]))
        out[i, 2] = fp8_to_bits(fp8_e8m0(x[i]))
        out[i, 3] = fp8_to_bits(fp8_e4m3(int32(x[i])))
        out[i, 4] = fp8_to_bits(fp8_e8m0(int32(x[i])))
        out[i, 5] = fp8_to_bits(fp8_e8m0(uint64(x[i])))
        out[i, 6] = fp8_to_bits(fp8_e8m0(int16(x[i])))


def ceil_pow2_code(m):
    return 0 if m == 0 else 127 + (m - 1).bit_length()


def test_fp8_from_integers():
    """Integers reach e4m3/e5m2 through float32 (rounded to nearest even, as CUDA does);
    e8m0 gets |v| rounded up to a power of two (0 gives 2^-127)."""
    edge = [0, 1, -1, 2, 3, 5, 7, 448, 464, 465, 480, 57344, 61439, 61440, 2 ** 24 + 1,
            2 ** 31 - 1, -2 ** 31, 2 ** 62 + 1, 2 ** 63 - 1, -2 ** 63, 2 ** 40 + 2 ** 20]
    x = np.concatenate([np.array(edge, np.int64), rng.integers(-2 ** 63, 2 ** 63 - 1, 3000),
                        rng.integers(-1000, 1000, 3000)])
    out = np.zeros((x.size, 7), np.uint8)
    launch(from_ints_kernel, x.size, x, out)
    f = x.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(out[:, 0], fp8_oracle(f, "e4m3", True, "float"))
    np.testing.assert_array_equal(out[:, 1], fp8_oracle(f, "e5m2", True, "float"))
    np.testing.assert_array_equal(out[:, 2], [ceil_pow2_code(abs(int(v))) for v in x])
    x32 = x.astype(np.int32)
    np.testing.assert_array_equal(out[:, 3], fp8_oracle(x32.astype(np.float32).astype(np.float64),
                                                        "e4m3", True, "float"))
    np.testing.assert_array_equal(out[:, 4], [ceil_pow2_code(abs(int(v))) for v in x32])
    np.testing.assert_array_equal(out[:, 5], [ceil_pow2_code(int(v)) for v in x.astype(np.uint64)])
    np.testing.assert_array_equal(out[:, 6], [ceil_pow2_code(abs(int(v))) for v in x.astype(np.int16)])


@cuda.jit
def from_halves_kernel(h, b, out):
    i = cuda.grid(1)
    if i < h.size:
        out[i, 0] = fp8_to_bits(fp8_e4m3(h[i]))
        out[i, 1] = fp8_to_bits(fp8_e5m2(h[i]))
        out[i, 2] = fp8_to_bits(fp8_e8m0(h[i]))
        out[i, 3] = fp8_to_bits(fp8_e4m3(b[i]))
        out[i, 4] = fp8_to_bits(fp8_e5m2(b[i]))
        out[i, 5] = fp8_to_bits(fp8_e8m0(b[i]))
        out[i, 6] = cvt_bfloat16raw_to_fp8(b[i], NOSAT, E4M3)  # a bfloat16 converts to raw
        out[i, 7] = cvt_bfloat16raw_to_fp8(b[i], NOSAT, E5M2)
        out[i, 8] = cvt_bfloat16raw_to_e8m0(b[i], NOSAT, RZ)
        out[i, 9] = cvt_bfloat16raw_to_e8m0(b[i], SAT, RP)


def test_fp8_from_every_float16_and_bfloat16():
    """All 65536 float16 and bfloat16 bit patterns (exact in float32, then as a float)."""
    u = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    h, b = u.view(np.float16), u.view(ml_dtypes.bfloat16)
    out = np.zeros((65536, 10), np.uint8)
    launch(from_halves_kernel, 65536, h, b, out)
    with np.errstate(invalid="ignore"):  # NaN payloads
        hf, bf = h.astype(np.float64), b.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(out[:, 0], fp8_oracle(hf, "e4m3", True, "float"))
    np.testing.assert_array_equal(out[:, 1], fp8_oracle(hf, "e5m2", True, "float"))
    np.testing.assert_array_equal(out[:, 2], e8m0_oracle(hf, RP, True))
    np.testing.assert_array_equal(out[:, 3], fp8_oracle(bf, "e4m3", True, "float"))
    np.testing.assert_array_equal(out[:, 4], fp8_oracle(bf, "e5m2", True, "float"))
    np.testing.assert_array_equal(out[:, 5], e8m0_oracle(bf, RP, True))
    np.testing.assert_array_equal(out[:, 6], fp8_oracle(bf, "e4m3", False, "float"))
    np.testing.assert_array_equal(out[:, 7], fp8_oracle(bf, "e5m2", False, "float"))
    np.testing.assert_array_equal(out[:, 8], e8m0_oracle(bf, RZ, False))
    np.testing.assert_array_equal(out[:, 9], e8m0_oracle(bf, RP, True))


@cuda.jit
def e8m0_raw_kernel(b, out, raw_bits):
    i = cuda.grid(1)
    if i < b.size:
        raw = cvt_e8m0_to_bf16raw(b[i])
        raw_bits[i] = raw.x
        out[i, 0] = cvt_bfloat16raw_to_e8m0(raw, NOSAT, RZ)
        out[i, 1] = cvt_bfloat16raw_to_e8m0(raw, NOSAT, RP)
        out[i, 2] = cvt_bfloat16raw_to_fp8(raw, SAT, E4M3)
        out[i, 3] = fp8_to_bits(fp8_e5m2(bfloat16(raw)))


def test_fp8_e8m0_to_bf16raw_all_bytes():
    out = np.zeros((256, 4), np.uint8)
    raw = np.zeros(256, np.uint16)
    launch(e8m0_raw_kernel, 256, BYTES, out, raw)
    want = decoded("e8m0").astype(ml_dtypes.bfloat16).view(np.uint16).copy()
    want[255] = 0x7FFF  # CUDA's canonical NaN
    np.testing.assert_array_equal(raw, want)
    np.testing.assert_array_equal(out[:, 0], BYTES)  # exact powers of two round-trip
    np.testing.assert_array_equal(out[:, 1], BYTES)
    v = decoded("e8m0")
    np.testing.assert_array_equal(out[:, 2], fp8_oracle(v, "e4m3", True, "float"))
    np.testing.assert_array_equal(out[:, 3], fp8_oracle(v, "e5m2", True, "float"))


# ---- device functions, NVRTC, errors --------------------------------------------------------
@cuda.jit(device=True)
def halve(v):
    return fp8_e4m3(float32(v) / 2)


@cuda.jit
def device_fn_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = float32(halve(fp8_e4m3(x[i])))


def test_fp8_values_pass_through_device_functions():
    x = np.array([3.0, 448.0, -0.0, 1e-3, np.nan], np.float32)
    out = np.full(5, 7, np.float32)
    launch(device_fn_kernel, 5, x, out)
    want = fp8_oracle(fp8_oracle(x, "e4m3", True, "float").view(ml_dtypes.float8_e4m3fn)
                      .astype(np.float64) / 2, "e4m3", True, "float")
    w = want.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    np.testing.assert_array_equal(out, w)


def test_fp8_kernels_compile_with_cuda_fp8_for_sm90():
    """NVRTC compiles each kernel with CUDA's cuda_fp8.h (-minimal included); the
    saturating float conversion is sm_89's cvt instruction."""
    ptx = compiles(cvt_f32_kernel)[0]
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx and "cvt.rn.satfinite.e5m2x2.f32" in ptx
    for k in (cvt_f64_kernel, from_ints_kernel, from_halves_kernel, e8m0_raw_kernel,
              device_fn_kernel, *DECODERS.values()):
        assert compiles(k), k
    assert "cvt.rn.f16x2.e4m3x2" in compiles(DECODERS["e4m3"])[0]


def test_fp8_header_only_in_units_that_use_it():
    @cuda.jit
    def plain(a):
        a[0] = 1.0

    plain[1, 1](np.zeros(1, np.float32))
    assert all("nu_fp8.cuh" not in s for s in plain.inspect_cuda().values())
    assert all("nu_fp8.cuh" in s for s in cvt_f32_kernel.inspect_cuda().values())


def test_fp8_is_supported_and_namespace():
    assert cuda.is_fp8_supported() is True
    assert cuda.fp8.fp8_e4m3 is fp8_e4m3 and fp8_e4m3.__name__ == "fp8_e4m3"
    assert int(cudaRoundMode.cudaRoundPosInf) == 2 and int(saturation_t.SATFINITE) == 1
    assert int(fp8_interpretation_t.E5M2) == 1


def _run(fn, *args):
    k = cuda.jit(fn)
    k[1, 1](*args)


def test_fp8_errors():
    out = np.zeros(2, np.float32)
    b = np.zeros(2, np.uint8)

    def arith(o):
        o[0] = fp8_e4m3(1.0) + 1.0
    with pytest.raises(CompileError, match="fp8_e4m3 value is not a number here"):
        _run(arith, out)

    def bad_enum(o):
        o[0] = cvt_float_to_fp8(float32(1.0), fp8_interpretation_t.E4M3, fp8_interpretation_t.E4M3)
    with pytest.raises(CompileError, match="argument 'saturate' must be a member of saturation_t"):
        _run(bad_enum, b)

    def bad_round(o):
        o[0] = cvt_float_to_e8m0(float32(1.0), NOSAT, cudaRoundMode.cudaRoundNearest)
    with pytest.raises(CompileError, match="rounding must be cudaRoundMode.cudaRoundZero or"):
        _run(bad_round, b)

    def bad_ctor(o):
        o[0] = float32(fp8_e5m2(1j))
    with pytest.raises(CompileError, match=r"fp8_e5m2\(\) takes a real number"):
        _run(bad_ctor, out)

    def bad_raw(o):
        o[0] = cvt_e8m0_to_bf16raw(uint8(1)).y
    with pytest.raises(CompileError, match="bfloat16_raw has no attribute '.y'"):
        _run(bad_raw, out)

    def bad_cast(o):
        o[0] = complex(fp8_e4m3(1.0))
    with pytest.raises(CompileError, match="complex.. got an argument of unsupported type fp8_e4m3"):
        _run(bad_cast, out)

    def bad_type(o):
        o[0] = complex64(fp8_e5m2(1.0)).real
    with pytest.raises(CompileError, match="cannot convert fp8_e5m2 to complex64"):
        _run(bad_type, out)

    def implicit_store(o):
        o[0] = fp8_e4m3(1.0)  # Numba converts FP8 values only when asked, as here
    with pytest.raises(CompileError, match=r"convert it first, as in float32\(v\)"):
        _run(implicit_store, out)

    with pytest.raises(TypeError, match="only inside a @cuda.jit kernel"):
        fp8_e4m3(1.0)


def test_fp8_in_vectorize_functions():
    """FP8 conversions in a ufunc's scalar function (cuda target: CUDA's cuda_fp8.h)."""
    from numbacuda_ufunc import vectorize

    @vectorize(["float32(float32)"], target="cuda")
    def through_e5m2(x):
        return float32(fp8_e5m2(x)) + float32(fp8_e8m0(2)) * 0 + float32(fp8_e4m3(True)) * 0

    x = np.concatenate([halfway_points("e5m2").astype(np.float32), dense_f32()[:5000]])
    want = fp8_oracle(x.astype(np.float64), "e5m2", True, "float").view(ml_dtypes.float8_e5m2)
    with np.errstate(invalid="ignore"):
        want = want.astype(np.float32)
    got = through_e5m2(x)
    np.testing.assert_array_equal(got, want)  # NaNs compare equal here
    ptx = "".join(through_e5m2.inspect_ptx(cc=(9, 0)).values())
    assert "cvt.rn.satfinite.e5m2x2.f32" in ptx
    # the loop kernels themselves (an elementwise unit: nu_fp8.cuh must bring the vector
    # types it uses, which only kernel units included before)
    from numbacuda_ufunc import _core

    for variant in (0, 1):
        _core.compile_ptx(through_e5m2._variant_source(0, variant)[1], (9, 0))


# ---- pairs and quadruples -------------------------------------------------------------------
@cuda.jit
def vec_kernel(x, out, back):
    i = cuda.grid(1)
    if i < x.shape[0]:
        f4 = cuda.float32x4(x[i, 0], x[i, 1], x[i, 2], x[i, 3])
        d4 = cuda.float64x4(float64(x[i, 0]), float64(x[i, 1]), float64(x[i, 2]),
                            float64(x[i, 3]))
        f2 = cuda.float32x2(x[i, 0], x[i, 1])
        d2 = cuda.float64x2(float64(x[i, 0]), float64(x[i, 1]))
        p = fp8x4_e4m3(f4)
        out[i, 0] = p.__x
        out[i, 1] = fp8x4_e5m2(d4).__x
        out[i, 2] = fp8x4_e8m0(f4).__x
        out[i, 3] = fp8x2_e4m3(d2).__x
        out[i, 4] = cvt_float2_to_fp8x2(f2, NOSAT, E5M2)
        out[i, 5] = cvt_double2_to_e8m0x2(d2, NOSAT, RZ)
        out[i, 6] = cvt_float2_to_e8m0x2(f2, SAT, RP)
        out[i, 7] = cvt_double2_to_fp8x2(d2, SAT, E4M3)
        b = cuda.float32x4(p)
        back[i, 0] = b.x
        back[i, 1] = b.y
        back[i, 2] = b.z
        back[i, 3] = b.w
        b2 = cuda.float32x2(fp8x2_e8m0(f2))
        back[i, 4] = b2.x
        back[i, 5] = b2.y


def packed(*cols):
    """Bytes packed with the first in the low byte, as cuda_fp8.h packs x, y, z, w."""
    return sum(c.astype(np.uint64) << np.uint64(8 * k) for k, c in enumerate(cols))


def test_fp8_pairs_and_quadruples():
    v = np.concatenate([halfway_points("e4m3"), halfway_points("e5m2")]).astype(np.float32)
    v = np.concatenate([v, rng.permutation(v), dense_f32()[:40000]])
    v = v[: v.size // 4 * 4]
    x = v.reshape(-1, 4)
    out = np.zeros((x.shape[0], 8), np.uint32)
    back = np.full((x.shape[0], 6), 7, np.float32)
    launch(vec_kernel, x.shape[0], x, out, back)
    with np.errstate(invalid="ignore"):
        c = [x[:, k].astype(np.float64) for k in range(4)]
    e4 = [fp8_oracle(ck, "e4m3", True, "float") for ck in c]
    np.testing.assert_array_equal(out[:, 0], packed(*e4))
    np.testing.assert_array_equal(out[:, 1], packed(*[fp8_oracle(ck, "e5m2", True) for ck in c]))
    np.testing.assert_array_equal(out[:, 2], packed(*[e8m0_oracle(ck, RP, True) for ck in c]))
    np.testing.assert_array_equal(out[:, 3], packed(*[fp8_oracle(ck, "e4m3", True) for ck in c[:2]]))
    np.testing.assert_array_equal(out[:, 4], packed(*[fp8_oracle(ck, "e5m2", False, "float")
                                                      for ck in c[:2]]))
    np.testing.assert_array_equal(out[:, 5], packed(*[e8m0_oracle(ck, RZ, False, "double")
                                                      for ck in c[:2]]))
    np.testing.assert_array_equal(out[:, 6], packed(*[e8m0_oracle(ck, RP, True) for ck in c[:2]]))
    np.testing.assert_array_equal(out[:, 7], packed(*[fp8_oracle(ck, "e4m3", True) for ck in c[:2]]))
    with np.errstate(invalid="ignore"):
        want = np.stack([b.view(ml_dtypes.float8_e4m3fn).astype(np.float32) for b in e4], 1)
        e8 = np.stack([e8m0_oracle(ck, RP, True).view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
                       for ck in c[:2]], 1)
    np.testing.assert_array_equal(back[:, :4], want)
    np.testing.assert_array_equal(back[:, 4:], e8)
    ptx = compiles(vec_kernel)[0]
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx


def test_fp8_pair_errors():
    def wrong_width(o):
        o[0] = fp8x2_e4m3(cuda.float32x4(1, 2, 3, 4)).__x
    with pytest.raises(CompileError, match=r"fp8x2_e4m3\(\) takes a float32x2 or float64x2"):
        _run(wrong_width, np.zeros(1, np.uint32))

    def wrong_vec(o):
        o[0] = cvt_float2_to_fp8x2(cuda.float64x2(1, 2), NOSAT, E4M3)
    with pytest.raises(CompileError, match="argument 'x' must be a float32x2"):
        _run(wrong_vec, np.zeros(1, np.uint32))

    def wrong_back(o):
        o[0] = cuda.float32x4(fp8x2_e4m3(cuda.float32x2(1, 2))).x
    with pytest.raises(CompileError, match="cannot convert fp8x2_e4m3 to float32x4"):
        _run(wrong_back, np.zeros(1, np.float32))


_OLD_HEADER_CHILD = """
import numpy as np
from numbacuda_ufunc import cuda, float32
from numbacuda_ufunc.cuda.fp8 import fp8_e4m3


@cuda.jit
def k(out):
    out[0] = float32(fp8_e4m3(float32(1.5)))


out = np.zeros(1, np.float32)
k[1, 1](out)
from numbacuda_ufunc import _core
for src in k.inspect_cuda().values():
    _core.compile_ptx(src, (9, 0), options=["-minimal"])
print(out[0])
"""


def test_an_older_cuda_fp8_header_first_on_the_path_is_passed_over(tmp_path):
    """A toolkit whose cuda_fp8.h predates E8M0 (CUDA < 12.8) named first: the engine takes
    the newer header further down the search path."""
    import os
    import subprocess
    import sys

    old = tmp_path / "oldcuda" / "include"
    old.mkdir(parents=True)
    (old / "cuda_fp8.h").write_text("#pragma once\n#error an old header without E8M0\n")
    (old / "cuda_fp8.hpp").write_text("#pragma once\n")
    script = tmp_path / "child.py"
    script.write_text(_OLD_HEADER_CHILD)
    env = dict(os.environ, CUDA_HOME=str(tmp_path / "oldcuda"),
               NUMBACUDA_UFUNC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("NUMBACUDA_UFUNC_CUDA_HOME", None)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-1] == "1.5"
