"""numba.cuda.libdevice (issue 16): every libdevice function in one generated kernel, compiled
by NVRTC for sm_90 and run on the host backend. Oracles: exact rational arithmetic
(fractions) for directed rounding and conversions, Python's integers for the integer
intrinsics, NumPy/math for the math functions (a few ulps, as CUDA's own error bounds), and
inverse or defining relations where Python has no reference (erfinv, Bessel functions)."""

import importlib.util
import math
import sys
from fractions import Fraction

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda
from numbacuda_ufunc.compiler._libdevice import FUNCTIONS
from numbacuda_ufunc.cuda import libdevice
from numbacuda_ufunc.errors import CompileError

INF, NAN = math.inf, math.nan
XD = [0.5, -0.75, 1.5, 3.25, -2.5, 10.0, 1e-3, 0.0, -0.0, INF, -INF, NAN, 1e300, 0.3, 0.9,
      4.7, -1e-310, 2.5, 1.0 / 3.0, -123.456]
YD = [1.25, 2.0, -0.5, 0.1, 3.0, -7.0, 0.75, 0.0, 1.0, 2.0, INF, 1.0, 1e-300, -0.3, 5.0,
      0.6, 3.0, -1.5, 7.0, 1e10]
ZD = [0.25, -1.0, 2.0, 1e-20, -3.0, 0.5, 1e300, -0.0, 1.0, 0.0, 1.0, 2.0, -1e300, 0.7, -5.0,
      1e-5, 0.0, 9.0, -1.0 / 3.0, 0.125]
XI = [0, 1, -1, 2**31 - 1, -2**31, 12345, -777, 0x00FF00FF, 7, -8, 1 << 20, 3, 100, -100000,
      0x7F7F7F7F, 42, 0x12345678, -2, 0x00800001, -0x00800001]
YI = XI[7:] + XI[:7]
ZI = [(v * 2654435761) % 2**32 - 2**31 for v in range(20)]
NI = [i % 6 for i in range(20)]  # Bessel orders
XL = [0, 1, -1, 2**63 - 1, -2**63, 123456789012, -987654321, 2**53 + 1, -(2**53) - 3,
      0x0123456789ABCDEF, 7, -8, 2**62 + 2**40 + 1, 3, 10**18, -(10**17) - 7, 2**32, -2, 99,
      0x7FF0000000000001]
YL = XL[5:] + XL[:5]
XH = [0x3C00, 0x0001, -0x0400, 0x7BFF, 0x7C00, -0x0400 - 1, 0x3555, 0, -32768, 0x0400,
      0x7E00, 0x4248, 0x1234, -0x4000, 0x2E66, 0x5640, 0x03FF, 0x7FFF, -1, 0x3800]
N = len(XD)
_CODES = {"d": ("xd", "yd", "zd"), "f": ("xf", "yf", "zf"), "i": ("xi", "yi", "zi"),
          "l": ("xl", "yl"), "h": ("xh",)}
_OUT = {"d": "outd", "f": "outf", "i": "outi", "l": "outl", "h": "outi"}


def _generate(path):
    """A module with one kernel that calls every libdevice function; returns it and the
    output row of each result."""
    lines = ["from numbacuda_ufunc import cuda", "from numbacuda_ufunc.cuda import libdevice", "",
             "@cuda.jit", "def every_function(xd, yd, zd, xf, yf, zf, xi, yi, zi, ni, xl, yl, xh, outd,",
             "                   outf, outi, outl):", "    i = cuda.grid(1)",
             "    if i < xd.size:"]
    rows, count = {}, {"d": 0, "f": 0, "i": 0, "l": 0}
    for name, (params, result) in sorted(FUNCTIONS.items()):
        args = []
        for p, c in enumerate(params):
            array = _CODES[c][p]
            if name in ("jn", "jnf", "yn", "ynf"):  # (order, x): x as for j0, y0...
                array = ("ni", _CODES[c][0])[p]
            args.append(f"{array}[i]")
        targets = []
        for c in result:
            kind = "i" if c == "h" else c
            targets.append((_OUT[c], count[kind]))
            count[kind] += 1
        rows[name] = [("i" if c == "h" else c, r) for c, (_, r) in zip(result, targets)]
        names = [f"{name}_{k}" for k in range(len(result))]  # one local per type
        lines.append(f"        {', '.join(names)} = libdevice.{name}({', '.join(args)})")
        for n, (out, r) in zip(names, targets):
            lines.append(f"        {out}[{r}, i] = {n}")
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("nu_libdevice_every_function", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.every_function, rows, count


def _inputs():
    return dict(xd=np.array(XD), yd=np.array(YD), zd=np.array(ZD),
                xf=np.array(XD, np.float32), yf=np.array(YD, np.float32),
                zf=np.array(ZD, np.float32), xi=np.array(XI, np.int32),
                yi=np.array(YI, np.int32), zi=np.array(ZI, np.int32), ni=np.array(NI, np.int32),
                xl=np.array(XL, np.int64), yl=np.array(YL, np.int64),
                xh=np.array(XH, np.int16))


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    kernel, rows, count = _generate(tmp_path_factory.mktemp("libdevice") / "every.py")
    with np.errstate(over="ignore"):
        ins = _inputs()
    outs = dict(outd=np.full((count["d"], N), -12345.0),
                outf=np.full((count["f"], N), -12345.0, np.float32),
                outi=np.full((count["i"], N), -12345, np.int32),
                outl=np.full((count["l"], N), -12345, np.int64))
    with np.errstate(all="ignore"):
        kernel[1, N](*ins.values(), *outs.values())
    by_kind = {"d": outs["outd"], "f": outs["outf"], "i": outs["outi"], "l": outs["outl"]}
    got = {name: [by_kind[k][r] for k, r in rs] for name, rs in rows.items()}
    return kernel, ins, got


def test_every_function_compiles_with_nvrtc(results):
    kernel = results[0]
    sources = list(kernel.inspect_cuda().values())
    assert sources and all("nu_libdevice.cuh" in s for s in sources)
    for src in sources:
        ptx = _core.compile_ptx(src, (9, 0))
        text = ptx if isinstance(ptx, str) else ptx[0]
        assert "st.global" in text


def test_table_has_every_libdevice_function():
    assert len(FUNCTIONS) == 317
    for name in ("sin", "sincosf", "fast_sinf", "popc", "dadd_rd", "float2half_rn", "byte_perm"):
        assert name in FUNCTIONS and hasattr(libdevice, name)
    with pytest.raises(RuntimeError, match="only inside"):
        libdevice.sin(1.0)


# ---- oracles ---------------------------------------------------------------------------------

_MODES = ("rd", "rn", "ru", "rz")


def _value(v, big):
    """A float as a Fraction; infinities as +-big (IEEE's overflow threshold)."""
    v = float(v)
    if math.isinf(v):
        return big if v > 0 else -big
    return Fraction(v)


def round_fraction(q, dt, mode):
    """The exact rational q rounded to dtype dt (float32/float64) in mode."""
    big = Fraction(2) ** (128 if dt == np.float32 else 1024)
    if abs(q) >= big:  # beyond the overflow threshold: inf, or the largest finite value
        toward_zero = mode == "rz" or (mode == "rd" and q > 0) or (mode == "ru" and q < 0)
        return dt((1 if q > 0 else -1) * (float(np.finfo(dt).max) if toward_zero else INF))
    try:
        c = dt(float(q))
    except OverflowError:
        c = dt(INF if q > 0 else -INF)
    with np.errstate(all="ignore"):
        while _value(c, big) > q:
            c = np.nextafter(c, dt(-INF))
        while not np.isposinf(c) and _value(np.nextafter(c, dt(INF)), big) <= q:
            c = np.nextafter(c, dt(INF))
    lo = c
    hi = lo if _value(lo, big) == q else np.nextafter(lo, dt(INF))
    if mode == "rd":
        return lo
    if mode == "ru":
        return hi
    if mode == "rz":
        return lo if q > 0 else hi
    dl, dh = q - _value(lo, big), _value(hi, big) - q
    if dl != dh:
        return lo if dl < dh else hi
    bits = np.array(lo).view(np.uint32 if dt == np.float32 else np.uint64)
    return lo if int(bits) % 2 == 0 else hi


def directed(op, mode, dt, *xs):
    xs = [dt(x) for x in xs]
    with np.errstate(all="ignore"):
        if op == "sqrt":
            rn = np.sqrt(xs[0])
        elif op == "fma":
            rn = dt(np.float64(xs[0]) * 0)  # placeholder, replaced below when finite
        else:
            rn = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                  "div": np.divide}[op](*xs)
    if not all(np.isfinite(xs)):
        if op == "fma":
            with np.errstate(all="ignore"):
                return dt(np.float64(xs[0]) * np.float64(xs[1]) + np.float64(xs[2]))
        return rn
    f = [Fraction(float(x)) for x in xs]
    if op == "sqrt":
        if f[0] < 0:
            return dt(NAN)
        if f[0] == 0:
            return xs[0]
        c = np.sqrt(xs[0])
        fc = Fraction(float(c))
        if mode in ("rd", "rz") and fc * fc > f[0]:
            return np.nextafter(c, dt(0))
        if mode == "ru" and fc * fc < f[0]:
            return np.nextafter(c, dt(INF))
        return c
    if op == "div" and f[1] == 0:
        return rn
    q = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1],
         "mul": lambda: f[0] * f[1], "div": lambda: f[0] / f[1],
         "fma": lambda: f[0] * f[1] + f[2]}[op]()
    if q == 0:
        neg = [math.copysign(1, float(x)) < 0 for x in xs]
        if op in ("mul", "div"):
            return dt(-0.0 if neg[0] != neg[1] else 0.0)
        addends = [neg[0], neg[1]] if op == "add" else [neg[0], not neg[1]] if op == "sub" \
            else [neg[0] != neg[1], neg[2]]
        exact_zeros = op != "fma" and f[0] == 0 and f[1] == 0 or \
            op == "fma" and (f[0] == 0 or f[1] == 0) and f[2] == 0
        if exact_zeros and addends[0] == addends[1]:
            return dt(-0.0 if addends[0] else 0.0)
        return dt(-0.0 if mode == "rd" else 0.0)
    return round_fraction(q, dt, mode)


def to_int(x, mode, bits, signed, src="float"):
    if math.isnan(x):  # an H100: __double2int_* and __double2uint_* give 0x80000000
        if bits == 32 and src == "double":
            return wrap(2**31, 32) if not signed else -(2**31)
        return -(2**63) if bits == 64 else 0
    v = {"rd": math.floor, "ru": math.ceil, "rz": math.trunc,
         "rn": lambda t: round(t)}[mode](x) if math.isfinite(x) else x
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    v = lo if v <= lo else hi if v >= hi else int(v)
    return wrap(v, bits)


def wrap(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def assert_same(name, got, want, rtol=0.0, atol=0.0):
    got = np.asarray(got, dtype=np.float64 if np.asarray(got).dtype.kind == "f" else None)
    want = np.asarray(want, dtype=got.dtype)
    if got.dtype.kind == "f" and not np.any(rtol) and not np.any(atol):
        same = (got == want) & (np.signbit(got) == np.signbit(want)) | \
            (np.isnan(got) & np.isnan(want))
    elif got.dtype.kind == "f":
        with np.errstate(all="ignore"):
            close = np.abs(got - want) <= atol + rtol * np.abs(want)
        same = close | (got == want) | (np.isnan(got) & np.isnan(want))
    else:
        same = got == want
    bad = np.flatnonzero(~same)
    assert not bad.size, (name, bad[:4], got[bad[:4]], want[bad[:4]])


# ---- exact: directed rounding, conversions, bits, integers -----------------------------------

@pytest.mark.parametrize("mode", _MODES)
def test_directed_rounding_arithmetic_is_exact(results, mode):
    _, ins, got = results
    f64, f32 = np.float64, np.float32
    cases = [
        (f"dadd_{mode}", "add", f64, ("xd", "yd")), (f"dmul_{mode}", "mul", f64, ("xd", "yd")),
        (f"ddiv_{mode}", "div", f64, ("xd", "yd")), (f"fadd_{mode}", "add", f32, ("xf", "yf")),
        (f"fsub_{mode}", "sub", f32, ("xf", "yf")), (f"fmul_{mode}", "mul", f32, ("xf", "yf")),
        (f"fdiv_{mode}", "div", f32, ("xf", "yf")), (f"dsqrt_{mode}", "sqrt", f64, ("xd",)),
        (f"fsqrt_{mode}", "sqrt", f32, ("xf",)), (f"fma_{mode}", "fma", f64, ("xd", "yd", "zd")),
        (f"fmaf_{mode}", "fma", f32, ("xf", "yf", "zf"))]
    for name, op, dt, arrays in cases:
        want = [directed(op, mode, dt, *(ins[a][i] for a in arrays)) for i in range(N)]
        assert_same(name, got[name][0], want)
    for name, dt, a in ((f"drcp_{mode}", f64, "xd"), (f"frcp_{mode}", f32, "xf")):
        want = [directed("div", mode, dt, 1.0, ins[a][i]) for i in range(N)]
        assert_same(name, got[name][0], want)


@pytest.mark.parametrize("mode", _MODES)
def test_conversions_are_exact(results, mode):
    _, ins, got = results
    for src in ("double", "float"):
        x = ins["xd" if src == "double" else "xf"]
        for dst, bits, signed in (("int", 32, True), ("uint", 32, False), ("ll", 64, True),
                                  ("ull", 64, False)):
            want = [to_int(float(v), mode, bits, signed, src) for v in x]
            assert_same(f"{src}2{dst}_{mode}", got[f"{src}2{dst}_{mode}"][0], want)
    want = [round_fraction(Fraction(v), np.float32, mode) if math.isfinite(v) and v != 0
            else np.float32(v) for v in XD]
    assert_same(f"double2float_{mode}", got[f"double2float_{mode}"][0], want)
    for src, values, bits in (("int", XI, 32), ("uint", XI, 32), ("ll", XL, 64), ("ull", XL, 64)):
        ints = [v % 2**bits if src.startswith("u") else v for v in values]
        want = [round_fraction(Fraction(v), np.float32, mode) for v in ints]
        assert_same(f"{src}2float_{mode}", got[f"{src}2float_{mode}"][0], want)
        if bits == 64:
            want = [round_fraction(Fraction(v), np.float64, mode) for v in ints]
            assert_same(f"{src}2double_{mode}", got[f"{src}2double_{mode}"][0], want)


def test_bit_reinterpretations_and_half(results):
    _, ins, got = results
    xd, xf = ins["xd"], ins["xf"]
    assert_same("int2double_rn", got["int2double_rn"][0], [float(v) for v in XI])
    assert_same("uint2double_rn", got["uint2double_rn"][0], [float(v % 2**32) for v in XI])
    assert_same("double_as_longlong", got["double_as_longlong"][0], xd.view(np.int64))
    assert_same("longlong_as_double", got["longlong_as_double"][0], ins["xl"].view(np.float64))
    assert_same("float_as_int", got["float_as_int"][0], xf.view(np.int32))
    assert_same("int_as_float", got["int_as_float"][0], ins["xi"].view(np.float32))
    bits = xd.view(np.uint64)
    assert_same("double2hiint", got["double2hiint"][0], (bits >> 32).astype(np.uint32).view(np.int32))
    assert_same("double2loint", got["double2loint"][0], bits.astype(np.uint32).view(np.int32))
    hilo = ((ins["xi"].astype(np.int64) << 32) | (ins["yi"].astype(np.int64) & 0xFFFFFFFF))
    assert_same("hiloint2double", got["hiloint2double"][0], hilo.view(np.float64))
    finite = ~np.isnan(xf)  # a NaN's payload: CUDA's canonical NaN, NumPy's kept bits
    assert_same("float2half_rn", got["float2half_rn"][0][finite],
                xf.astype(np.float16).view(np.int16)[finite])
    nan_bits = got["float2half_rn"][0][~finite].astype(np.int16).view(np.float16)
    assert np.isnan(nan_bits).all()
    assert_same("half2float", got["half2float"][0],
                ins["xh"].view(np.float16).astype(np.float32))


def test_integer_intrinsics(results):
    _, _, got = results
    u32 = [v % 2**32 for v in XI]
    want = {
        "abs": [wrap(abs(v), 32) for v in XI], "llabs": [wrap(abs(v), 64) for v in XL],
        "brev": [wrap(int(f"{u:032b}"[::-1], 2), 32) for u in u32],
        "brevll": [wrap(int(f"{v % 2**64:064b}"[::-1], 2), 64) for v in XL],
        "clz": [32 - u.bit_length() for u in u32],
        "clzll": [64 - (v % 2**64).bit_length() for v in XL],
        "ffs": [(u & -u).bit_length() for u in u32],
        "ffsll": [((v % 2**64) & -(v % 2**64)).bit_length() for v in XL],
        "popc": [u.bit_count() for u in u32], "popcll": [(v % 2**64).bit_count() for v in XL],
        "hadd": [(x + y) >> 1 for x, y in zip(XI, YI)],
        "rhadd": [(x + y + 1) >> 1 for x, y in zip(XI, YI)],
        "uhadd": [wrap((x % 2**32 + y % 2**32) >> 1, 32) for x, y in zip(XI, YI)],
        "urhadd": [wrap((x % 2**32 + y % 2**32 + 1) >> 1, 32) for x, y in zip(XI, YI)],
        "mul24": [wrap(wrap(x, 24) * wrap(y, 24), 32) for x, y in zip(XI, YI)],
        "umul24": [wrap((x % 2**24) * (y % 2**24), 32) for x, y in zip(XI, YI)],
        "mulhi": [wrap((x * y) >> 32, 32) for x, y in zip(XI, YI)],
        "umulhi": [wrap((x % 2**32) * (y % 2**32) >> 32, 32) for x, y in zip(XI, YI)],
        "mul64hi": [wrap((x * y) >> 64, 64) for x, y in zip(XL, YL)],
        "umul64hi": [wrap((x % 2**64) * (y % 2**64) >> 64, 64) for x, y in zip(XL, YL)],
        "sad": [wrap(abs(x - y) + z, 32) for x, y, z in zip(XI, YI, ZI)],
        "usad": [wrap(abs(x % 2**32 - y % 2**32) + z, 32) for x, y, z in zip(XI, YI, ZI)],
        "max": [max(x, y) for x, y in zip(XI, YI)], "min": [min(x, y) for x, y in zip(XI, YI)],
        "umax": [x if x % 2**32 > y % 2**32 else y for x, y in zip(XI, YI)],
        "umin": [x if x % 2**32 < y % 2**32 else y for x, y in zip(XI, YI)],
        "llmax": [max(x, y) for x, y in zip(XL, YL)], "llmin": [min(x, y) for x, y in zip(XL, YL)],
        "ullmax": [x if x % 2**64 > y % 2**64 else y for x, y in zip(XL, YL)],
        "ullmin": [x if x % 2**64 < y % 2**64 else y for x, y in zip(XL, YL)],
    }
    both = [(y % 2**32) << 32 | (x % 2**32) for x, y in zip(XI, YI)]
    want["byte_perm"] = [wrap(sum(((v >> (8 * ((s % 2**32 >> (4 * k)) & 7))) & 0xFF) << (8 * k)
                                  for k in range(4)), 32) for v, s in zip(both, ZI)]
    for name, w in want.items():
        assert_same(name, got[name][0], w)


def test_classification(results):
    _, ins, got = results
    for name, fn, a in (("isfinited", np.isfinite, "xd"), ("finitef", np.isfinite, "xf"),
                        ("isinfd", np.isinf, "xd"), ("isinff", np.isinf, "xf"),
                        ("isnand", np.isnan, "xd"), ("isnanf", np.isnan, "xf"),
                        ("signbitd", np.signbit, "xd"), ("signbitf", np.signbit, "xf")):
        assert_same(name, got[name][0], fn(ins[a]).astype(np.int32))


# ---- math: NumPy / math references within a few ulps -------------------------------------------

def _safe(fn):
    def call(*args):
        try:
            return fn(*args)
        except (ValueError, ZeroDivisionError):
            return NAN
        except OverflowError:
            return INF
    return call


def _round_half_away(x):
    if not math.isfinite(x):
        return x
    r = math.floor(abs(x))
    if abs(x) - r >= 0.5:
        r += 1
    return math.copysign(r, x)


def _logb(x):
    if x == 0:
        return -INF
    if not math.isfinite(x):
        return abs(x)
    return float(math.frexp(x)[1] - 1)


def _tgamma(x):
    if x == 0:
        return math.copysign(INF, x)
    if x == -INF:
        return NAN
    return _safe(math.gamma)(x)


_UNARY_REF = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil, "cos": np.cos,
    "cosh": np.cosh, "erf": _safe(math.erf), "erfc": _safe(math.erfc), "exp": np.exp,
    "exp10": lambda x: np.power(10.0, x), "exp2": np.exp2, "expm1": np.expm1,
    "fabs": np.fabs, "floor": np.floor, "lgamma": lambda x: INF if x in (0, -INF) or (
        x < 0 and x == math.floor(x)) else _safe(math.lgamma)(x), "log": np.log,
    "log10": np.log10, "log1p": np.log1p, "log2": np.log2, "logb": _logb,
    "nearbyint": np.rint, "rint": np.rint, "round": _round_half_away, "sin": np.sin,
    "sinh": np.sinh, "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh, "tgamma": _tgamma,
    "trunc": np.trunc, "rsqrt": lambda x: 1 / np.sqrt(x), "rcbrt": lambda x: 1 / np.cbrt(x),
    "cospi": lambda x: NAN if not math.isfinite(x) else math.cos(math.pi * math.remainder(x, 2)),
    "sinpi": lambda x: NAN if not math.isfinite(x) else math.sin(math.pi * math.remainder(x, 2)),
    "normcdf": lambda x: 0.5 * math.erfc(-x / math.sqrt(2)),
}
_BINARY_REF = {
    "atan2": np.arctan2, "copysign": np.copysign, "fdim": lambda x, y: NAN if (
        math.isnan(x) or math.isnan(y)) else max(x - y, 0.0), "fmax": np.fmax, "fmin": np.fmin,
    "fmod": np.fmod, "hypot": np.hypot, "nextafter": np.nextafter, "pow": np.power,
    "remainder": _safe(math.remainder),
}


def _fast_tolerance(name, x, y=None):
    """(rtol, atol) per element for the fast_ intrinsics, from CUDA's documented maximum
    errors (Programming Guide, intrinsic functions): __sinf/__cosf 2**-21.41 absolute on
    [-pi, pi] and larger outside (range reduction: grown here with |x| / pi), __expf and
    __exp10f 2 + floor(|1.173 x|) and 2 + floor(|2.97 x|) ulps, the logarithms 2**-21.41
    absolute on [0.5, 2] and 3 ulps elsewhere, __powf as exp2(y log2 x), __fdividef 2 ulps.
    The emulation computes them exactly; an H100's hardware approximations differ within
    these bounds (__sinf(-123.456) by 3.1e-6)."""
    ulp, trig = 2.0**-23, 2.0**-21.41
    x = np.abs(np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        if name in ("fast_sinf", "fast_cosf", "fast_sincosf"):
            return 8 * ulp, trig * (1 + x / np.pi)
        if name == "fast_tanf":  # sin / cos: relative error of both, grown near the poles
            return trig * (1 + x / np.pi) * 8, trig * (1 + x / np.pi)
        if name == "fast_expf":
            return (2 + np.floor(1.173 * x)) * ulp, 0.0
        if name == "fast_exp10f":
            return (2 + np.floor(2.97 * x)) * ulp, 0.0
        if name in ("fast_logf", "fast_log2f", "fast_log10f"):
            return 3 * ulp, trig
        if name == "fast_powf":
            return 2 * ulp + np.abs(np.asarray(y, np.float64)) * trig, 0.0
    return 2 * ulp, 0.0


def _compare_math(name, got, want, dt, atol_ulps=0.16):
    """Within 8 ulps, or atol_ulps ulps of 1 (functions near a zero: cospi, lgamma)."""
    ulp = 2.0**-52 if dt == np.float64 else 2.0**-23
    assert_same(name, got, np.asarray(want, np.float64).astype(dt), rtol=8 * ulp,
                atol=atol_ulps * ulp)


@pytest.mark.parametrize("name", sorted(_UNARY_REF))
def test_unary_math(results, name):
    _, ins, got = results
    with np.errstate(all="ignore"):
        for n, a, dt in ((name, "xd", np.float64), (name + "f", "xf", np.float32)):
            x = ins[a]
            want = [_UNARY_REF[name](float(v) if dt == np.float64 else np.float32(v))
                    for v in x]
            _compare_math(n, got[n][0], [float(w) for w in want], dt,
                          atol_ulps=4 if name in ("cospi", "sinpi", "lgamma") else 0.16)


@pytest.mark.parametrize("name", sorted(_BINARY_REF))
def test_binary_math(results, name):
    _, ins, got = results
    with np.errstate(all="ignore"):
        for n, (a, b), dt in ((name, ("xd", "yd"), np.float64),
                              (name + "f", ("xf", "yf"), np.float32)):
            want = [float(_BINARY_REF[name](dt(x), dt(y)) if name not in ("fdim", "remainder")
                          else _BINARY_REF[name](float(x), float(y)))
                    for x, y in zip(ins[a], ins[b])]
            _compare_math(n, got[n][0], want, dt)


def test_several_results_and_integer_arguments(results):
    _, ins, got = results
    with np.errstate(all="ignore"):
        for sfx, dt, a, b in (("", np.float64, "xd", "yd"), ("f", np.float32, "xf", "yf")):
            x, y = ins[a], ins[b]
            frac, exp = np.frexp(x)
            finite = np.isfinite(x)
            assert_same("frexp" + sfx, got["frexp" + sfx][0], frac)
            assert_same("frexp" + sfx, got["frexp" + sfx][1][finite], exp[finite])
            frac, whole = np.modf(x)
            assert_same("modf" + sfx, got["modf" + sfx][0], frac)
            assert_same("modf" + sfx, got["modf" + sfx][1], whole)
            rem = [dt(_safe(math.remainder)(float(p), float(q))) for p, q in zip(x, y)]
            assert_same("remquo" + sfx, got["remquo" + sfx][0], rem)
            ok = np.isfinite(x) & np.isfinite(y) & (y != 0)
            quo = got["remquo" + sfx][1][ok]
            want = [round((Fraction(float(p)) - Fraction(float(r))) / Fraction(float(q)))
                    for p, q, r in zip(x[ok], y[ok], np.asarray(rem)[ok])]
            # C: the sign and at least the 3 low bits of the quotient
            bad = [(p, q, g, w) for p, q, g, w in zip(x[ok], y[ok], quo, want)
                   if not (np.sign(g) == np.sign(w) or g == 0 == w % 8)]
            assert not bad, (sfx, bad)
            assert all(abs(int(g)) % 8 == abs(w) % 8 for g, w in zip(quo, want))
            ulp = 2.0**-52 if dt == np.float64 else 2.0**-23
            for name in ("sincos" + sfx, "sincospi" + sfx) + (("fast_sincosf",) if sfx else ()):
                ref = [float(v) if "pi" not in name else NAN if not np.isfinite(v)
                       else math.remainder(float(v), 2) * math.pi for v in x]
                s = [math.sin(r) if math.isfinite(r) else NAN for r in ref]
                c = [math.cos(r) if math.isfinite(r) else NAN for r in ref]
                rtol, atol = (8 * ulp, ulp) if not name.startswith("fast_") else \
                    _fast_tolerance(name, x)
                assert_same(name, got[name][0], np.asarray(s, np.float64).astype(dt),
                            rtol=rtol, atol=atol)
                assert_same(name, got[name][1], np.asarray(c, np.float64).astype(dt),
                            rtol=rtol, atol=atol)
            for name, fn in (("ldexp", np.ldexp), ("scalbn", np.ldexp)):
                assert_same(name + sfx, got[name + sfx][0],
                            fn(x, np.clip(ins["yi"], -10000, 10000)).astype(dt))
            want = [float(np.power(np.float64(v), float(n))) for v, n in zip(x, ins["yi"])]
            _compare_math("powi" + sfx, got["powi" + sfx][0], want, dt)
            assert_same("fma" + sfx, got["fma" + sfx][0],
                        [directed("fma", "rn", dt, p, q, r)
                         for p, q, r in zip(x, y, ins["zd" if not sfx else "zf"])])
            assert_same("ilogb" + sfx, got["ilogb" + sfx][0][np.isfinite(x) & (x != 0)],
                        [math.frexp(float(v))[1] - 1 for v in x[np.isfinite(x) & (x != 0)]])
            fin = np.isfinite(x) & (np.abs(x) < 2.0**62)
            assert_same("llrint" + sfx, got["llrint" + sfx][0][fin], np.rint(x[fin]).astype(np.int64))
            assert_same("llround" + sfx, got["llround" + sfx][0][fin],
                        [int(_round_half_away(float(v))) for v in x[fin]])


def test_approximate_functions(results):
    """CUDA-only functions (erfinv, erfcinv, erfcx, normcdfinv) and the fast_ intrinsics:
    inverse relations and defining formulas. Bessel functions: Python's integrals for J,
    the Wronskian J1 Y0 - J0 Y1 = 2 / (pi x) and the recurrence for Y."""
    _, ins, got = results
    for sfx, tol in (("", 1e-13), ("f", 2e-6)):
        x = ins["xd"] if not sfx else ins["xf"]
        inside = (np.abs(x) < 1) & ~np.isnan(x)
        for i in np.flatnonzero(inside):
            v = float(x[i])
            assert math.erf(float(got["erfinv" + sfx][0][i])) == pytest.approx(v, rel=tol, abs=1e-300)
        for i in np.flatnonzero((x > 0) & (x < 2)):
            v = float(x[i])
            assert math.erfc(float(got["erfcinv" + sfx][0][i])) == pytest.approx(v, rel=tol)
        for i in np.flatnonzero((x > 0) & (x < 1)):
            p = float(x[i])
            z = float(got["normcdfinv" + sfx][0][i])
            assert 0.5 * math.erfc(-z / math.sqrt(2)) == pytest.approx(p, rel=tol * 10)
        for i in np.flatnonzero(np.isfinite(x) & (x > -5) & (x < 5)):
            v = float(x[i])
            assert float(got["erfcx" + sfx][0][i]) == pytest.approx(
                math.exp(v * v) * math.erfc(v), rel=tol * 10)
    assert got["erfinv"][0][XD.index(0.5)] == pytest.approx(0.47693627620446987, rel=1e-15)
    assert got["erfcx"][0][XD.index(1e300)] == pytest.approx(0.5641895835477563 / 1e300, rel=1e-14)
    assert np.isnan(got["erfinv"][0][XD.index(1.5)])
    xf = ins["xf"].astype(np.float64)
    for name, ref in (("fast_sinf", np.sin), ("fast_cosf", np.cos), ("fast_expf", np.exp),
                      ("fast_logf", np.log), ("fast_log2f", np.log2), ("fast_log10f", np.log10),
                      ("fast_exp10f", lambda v: np.power(10.0, v)), ("fast_tanf", np.tan)):
        with np.errstate(all="ignore"):
            rtol, atol = _fast_tolerance(name, xf)
            assert_same(name, got[name][0], ref(xf).astype(np.float32), rtol=rtol, atol=atol)
    with np.errstate(all="ignore"):
        yf = ins["yf"].astype(np.float64)
        rtol, atol = _fast_tolerance("fast_powf", xf, yf)
        # exp2(y log2 x), CUDA's definition: NaN for x < 0 and 0**0 (an H100's answers)
        assert_same("fast_powf", got["fast_powf"][0],
                    np.exp2(yf * np.log2(xf)).astype(np.float32), rtol=rtol, atol=atol)
        rtol, atol = _fast_tolerance("fast_fdividef", xf)
        assert_same("fast_fdividef", got["fast_fdividef"][0], (xf / yf).astype(np.float32),
                    rtol=rtol, atol=atol)
        assert_same("saturatef", got["saturatef"][0],  # the sign of a zero is not checked
                    np.nan_to_num(np.clip(ins["xf"], 0, 1), nan=0.0), rtol=1e-30)
        _compare_math("frsqrt_rn", got["frsqrt_rn"][0], 1 / np.sqrt(xf), np.float32)
    x = ins["xd"]
    pos = np.flatnonzero(np.isfinite(x) & (x > 0) & (x < 100))
    for i in pos:
        v = float(x[i])
        j0 = math.fsum(math.cos(v * math.sin(math.pi * (k + 0.5) / 400)) for k in range(400)) / 400
        assert got["j0"][0][i] == pytest.approx(j0, abs=1e-13)
        j0v, j1v = float(got["j0"][0][i]), float(got["j1"][0][i])
        y0v, y1v = float(got["y0"][0][i]), float(got["y1"][0][i])
        assert j1v * y0v - j0v * y1v == pytest.approx(2 / (math.pi * v), rel=1e-11)
        n = int(ins["ni"][i])
        jn = math.fsum(math.cos(n * t - v * math.sin(t)) for t in
                       (math.pi * (k + 0.5) / 400 for k in range(400))) / 400
        assert got["jn"][0][i] == pytest.approx(jn, abs=1e-13)
        if n <= 2:
            want = (y0v, y1v, 2 / v * y1v - y0v)[n]  # Y2 by the recurrence
            assert got["yn"][0][i] == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_errors():
    @cuda.jit
    def bad(x):
        x[0] = libdevice.sin(x[0], x[0])

    with pytest.raises(CompileError, match=r"libdevice.sin\(\) takes 1 arguments"):
        bad[1, 1](np.ones(1))

    @cuda.jit
    def bad2(x):
        x[0] = libdevice.sinf(x[0])

    with pytest.raises(CompileError, match="takes real numbers"):
        bad2[1, 1](np.ones(1, np.complex64))


def test_in_ufuncs_and_device_functions():
    from numbacuda_ufunc import vectorize

    @vectorize(["float64(float64, float64)"])
    def up_sum(x, y):
        return libdevice.dadd_ru(x, y) - libdevice.dadd_rd(x, y)

    x = np.array([1.0, 0.1, 1e16, -3.0])
    y = np.array([1e-30, 0.2, 1.0, 3.0])
    want = [float(directed("add", "ru", np.float64, a, b) - directed("add", "rd", np.float64, a, b))
            for a, b in zip(x, y)]
    assert_same("dadd_ru - dadd_rd", up_sum(x, y), want)
    assert (up_sum(x, y)[:3] > 0).all()  # inexact sums: the two roundings differ

    @cuda.jit(device=True)
    def sincos_sum(v):
        s, c = libdevice.sincosf(v)
        return s * s + c * c

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = sincos_sum(x[i])

    xf = np.linspace(-10, 10, 33, dtype=np.float32)
    out = np.zeros_like(xf)
    k[1, 33](xf, out)
    np.testing.assert_allclose(out, 1.0, rtol=4e-7)
    for src in k.inspect_cuda().values():
        _core.compile_ptx(src, (9, 0))
