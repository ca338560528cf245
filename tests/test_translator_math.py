"""math, cmath and numpy scalar functions on float32/float64/complex, and casts, against
the Python function (a few ULP for transcendental functions, exact for the rest)."""

import cmath
import math

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import complex64, complex128, float32, float64, int16, int32, int64
from numbacuda_ufunc.compiler import translate

MATH1 = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
         "acosh", "atanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
         "fabs", "floor", "ceil", "trunc", "erf", "erfc", "gamma", "lgamma", "isnan",
         "isinf", "isfinite", "radians", "degrees", "cbrt"]
MATH1 = [n for n in MATH1 if hasattr(math, n)]  # exp2 and cbrt are Python 3.11+
MATH2 = ["atan2", "pow", "hypot", "fmod", "copysign"]
EXACT = {"fabs", "floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "copysign", "sqrt",
         "fmod", "radians", "degrees"}


# One small function per math routine, written the way users write them.
def m_sin(x): return math.sin(x)  # noqa: E704
def m_cos(x): return math.cos(x)  # noqa: E704
def m_tan(x): return math.tan(x)  # noqa: E704
def m_asin(x): return math.asin(x)  # noqa: E704
def m_acos(x): return math.acos(x)  # noqa: E704
def m_atan(x): return math.atan(x)  # noqa: E704
def m_sinh(x): return math.sinh(x)  # noqa: E704
def m_cosh(x): return math.cosh(x)  # noqa: E704
def m_tanh(x): return math.tanh(x)  # noqa: E704
def m_asinh(x): return math.asinh(x)  # noqa: E704
def m_acosh(x): return math.acosh(x)  # noqa: E704
def m_atanh(x): return math.atanh(x)  # noqa: E704
def m_exp(x): return math.exp(x)  # noqa: E704
def m_exp2(x): return math.exp2(x)  # noqa: E704
def m_expm1(x): return math.expm1(x)  # noqa: E704
def m_log(x): return math.log(x)  # noqa: E704
def m_log2(x): return math.log2(x)  # noqa: E704
def m_log10(x): return math.log10(x)  # noqa: E704
def m_log1p(x): return math.log1p(x)  # noqa: E704
def m_sqrt(x): return math.sqrt(x)  # noqa: E704
def m_fabs(x): return math.fabs(x)  # noqa: E704
def m_floor(x): return math.floor(x)  # noqa: E704
def m_ceil(x): return math.ceil(x)  # noqa: E704
def m_trunc(x): return math.trunc(x)  # noqa: E704
def m_erf(x): return math.erf(x)  # noqa: E704
def m_erfc(x): return math.erfc(x)  # noqa: E704
def m_gamma(x): return math.gamma(x)  # noqa: E704
def m_lgamma(x): return math.lgamma(x)  # noqa: E704
def m_isnan(x): return math.isnan(x)  # noqa: E704
def m_isinf(x): return math.isinf(x)  # noqa: E704
def m_isfinite(x): return math.isfinite(x)  # noqa: E704
def m_radians(x): return math.radians(x)  # noqa: E704
def m_degrees(x): return math.degrees(x)  # noqa: E704
def m_cbrt(x): return math.cbrt(x)  # noqa: E704
def m_atan2(x, y): return math.atan2(x, y)  # noqa: E704
def m_pow(x, y): return math.pow(x, y)  # noqa: E704
def m_hypot(x, y): return math.hypot(x, y)  # noqa: E704
def m_fmod(x, y): return math.fmod(x, y)  # noqa: E704
def m_copysign(x, y): return math.copysign(x, y)  # noqa: E704


def m_log_base(x):
    return math.log(x, 3.0) + math.ldexp(x, 3)


def m_frexp_modf(x):
    m, e = math.frexp(x)
    f, i = math.modf(x)
    return m * 1000 + e + f * 10 + i


def m_consts(x):
    return x * math.pi + math.e - math.tau + (math.inf if x > 1e300 else 0.0)


def np_funcs(x):
    return np.sqrt(np.abs(x)) + np.exp(x * 0.01) - np.arctan2(x, 2.0) + np.floor(x) + np.sign(x)


def np_casts(x):
    return np.float32(x) * 2 + np.int16(7) + np.float64(x) / 3


def np_minmax(x, y):
    return np.maximum(x, y) + np.minimum(x, y) * 2 + np.fmax(x, y)


def np_preds(x):
    return np.isnan(x) + 2 * np.isinf(x) + 4 * np.isfinite(x) + 8 * np.signbit(x)


def c_arith(z, w):
    return z * w + z / (w + 1) - z.conjugate() * w.real + w.imag


def c_funcs(z):
    return cmath.sqrt(z) + cmath.exp(z * 0.1) + cmath.log(z + 2) + abs(z)


def c_trig(z):
    return cmath.sin(z) + cmath.cos(z) * cmath.tanh(z * 0.5)


def c_polar(z):
    r, phi = cmath.polar(z)
    return cmath.rect(r, phi) + cmath.phase(z) + cmath.isnan(z) * 1j


def c_build(x, y):
    return complex(x, y) * 2 + 1j


MATH_INPUT = {
    float64: np.array([0.0, -0.0, 0.5, -0.5, 1.0, 2.0, -3.7, 10.25, 1e-8, 100.0, 0.99, 1.5,
                       np.inf, -np.inf, np.nan, 2.5, -2.5, 3.5], "f8"),
}
MATH_INPUT[float32] = MATH_INPUT[float64].astype("f4")
MATH_INPUT[int32] = np.array([0, 1, -1, 2, 3, 10, -7, 100], "i4")
CPLX = np.array([complex(a, b) for a in (0.0, 0.5, -1.5, 2.0, -0.25, 3.0)
                 for b in (0.0, 1.0, -0.75, 2.5)], "c16")


def _cases():
    cases = []
    g = globals()
    for name in MATH1:
        for t in (float32, float64, int32):
            if name == "trunc" and t != float64:
                continue  # math.trunc() needs __trunc__, which NumPy's float32/int32 lack
            ulps = 0 if name in EXACT else 4
            if name in ("radians", "degrees") and t == float32:
                ulps = 1  # float32 in, float32 arithmetic (Python multiplies in double)
            if name in ("lgamma", "gamma"):
                ulps = 256  # CPython's own Lanczos lgamma is not correctly rounded near zeros
            cases.append((hr.Case(g["m_" + name], (t,)), [MATH_INPUT[t]], ulps))
    for name in MATH2:
        for t in (float32, float64):
            a, b = np.meshgrid(MATH_INPUT[t], MATH_INPUT[t], indexing="ij")
            ulps = 0 if name in EXACT else 4
            cases.append((hr.Case(g["m_" + name], (t, t)), [a.ravel(), b.ravel()], ulps))
    for fn, types, arrays, ulps in [
        (m_log_base, (float64,), [MATH_INPUT[float64]], 4),
        (m_frexp_modf, (float64,), [MATH_INPUT[float64]], 0),
        (m_frexp_modf, (float32,), [MATH_INPUT[float32]], 0),
        (m_consts, (float64,), [MATH_INPUT[float64]], 0),
        (np_funcs, (float64,), [MATH_INPUT[float64]], 4),
        (np_funcs, (float32,), [MATH_INPUT[float32]], 4),
        (np_casts, (float64,), [MATH_INPUT[float64]], 0),
        (np_casts, (int64,), [MATH_INPUT[int32]], 0),
        (np_minmax, (float32, float32), [MATH_INPUT[float32], MATH_INPUT[float32][::-1]], 0),
        (np_minmax, (int16, int32), [MATH_INPUT[int32], MATH_INPUT[int32][::-1]], 0),
        (np_preds, (float64,), [MATH_INPUT[float64]], 0),
        (c_arith, (complex128, complex128), [CPLX, CPLX[::-1]], 2),
        (c_arith, (complex64, complex64), [CPLX, CPLX[::-1]], 4),
        (c_funcs, (complex128,), [CPLX], 8),
        (c_trig, (complex128,), [CPLX], 8),
        (c_polar, (complex128,), [CPLX], 8),
        (c_build, (float64, int32), [MATH_INPUT[float64][:8], MATH_INPUT[int32]], 0),
    ]:
        cases.append((hr.Case(fn, types), arrays, ulps))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def built():
    hr.build([c for c, _, _ in CASES])


@pytest.mark.parametrize("case,arrays,ulps", CASES, ids=[
    f"{c.fn.__name__}-{'-'.join(t.name for t in c.arg_types)}" for c, _, _ in CASES])
def test_math_matches_python(built, case, arrays, ulps):
    hr.check(case, *arrays, ulps=ulps)


def test_math_typing_keeps_float32():
    assert translate(m_sin, (float32,)).return_type == float32
    assert translate(m_sin, (int32,)).return_type == float64
    assert translate(m_floor, (float32,)).return_type == int64  # Python int
    assert translate(c_funcs, (complex64,)).return_type == complex64


def test_math_rejects_complex_with_a_hint():
    with pytest.raises(TypeError, match=r"math.sin\(\) does not accept complex .* cmath.sin"):
        translate(m_sin, (complex128,))
