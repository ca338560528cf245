// src/kernels/nu_complex.cuh: complex64/complex128 arithmetic and cmath for translated code
//
// Arithmetic follows NumPy's loops (naive multiplication, Smith's division, integer powers
// by repeated multiplication); the cmath functions and Python's ** follow CPython exactly,
// special values and branch cuts included (see the cmath section).
#pragma once

namespace nu {

template <class T> NU_DEVICE complex<T> operator+(complex<T> a, complex<T> b) { return {a.re + b.re, a.im + b.im}; }
template <class T> NU_DEVICE complex<T> operator-(complex<T> a, complex<T> b) { return {a.re - b.re, a.im - b.im}; }
template <class T> NU_DEVICE complex<T> operator-(complex<T> a) { return {flip_sign(a.re), flip_sign(a.im)}; }
template <class T> NU_DEVICE complex<T> operator*(complex<T> a, complex<T> b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// NumPy's complex division (Smith's algorithm, with its handling of a zero divisor).
template <class T> NU_DEVICE complex<T> operator/(complex<T> a, complex<T> b) {
    T br = T(::fabs(b.re));
    T bi = T(::fabs(b.im));
    if (br >= bi) {
        if (br == 0 && bi == 0) return {a.re / br, a.im / br};
        T rat = b.im / b.re;
        T scl = T(1) / (b.re + b.im * rat);
        return {(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
    }
    T rat = b.re / b.im;
    T scl = T(1) / (b.im + b.re * rat);
    return {(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
}
template <class T> NU_DEVICE bool operator==(complex<T> a, complex<T> b) { return a.re == b.re && a.im == b.im; }
template <class T> NU_DEVICE bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
// NumPy orders complex numbers lexicographically (Python refuses to). These are the
// rules of NumPy's scalar comparisons, which the translated function's Python original
// runs with: (3+nanj) > (2+0j) is True there (the array ufunc would say False).
template <class T> NU_DEVICE bool operator<(complex<T> a, complex<T> b) {
    return a.re < b.re || (a.re == b.re && a.im < b.im);
}
template <class T> NU_DEVICE bool operator<=(complex<T> a, complex<T> b) {
    return a.re < b.re || (a.re == b.re && a.im <= b.im);
}
template <class T> NU_DEVICE bool operator>(complex<T> a, complex<T> b) { return b < a; }
template <class T> NU_DEVICE bool operator>=(complex<T> a, complex<T> b) { return b <= a; }

template <class T> NU_DEVICE T abs(complex<T> z) { return hypot(z.re, z.im); }
template <class T> NU_DEVICE T real(complex<T> z) { return z.re; }
template <class T> NU_DEVICE T imag(complex<T> z) { return z.im; }
template <class T> NU_DEVICE complex<T> conj(complex<T> z) { return {z.re, -z.im}; }
template <class T> NU_DEVICE T real(T x) { return x; }
template <class T> NU_DEVICE T imag(T) { return T(0); }
template <class T> NU_DEVICE T conj(T x) { return x; }
template <class T> NU_DEVICE bool isnan(complex<T> z) { return isnan(z.re) || isnan(z.im); }
template <class T> NU_DEVICE bool isinf(complex<T> z) { return isinf(z.re) || isinf(z.im); }
template <class T> NU_DEVICE bool isfinite(complex<T> z) { return isfinite(z.re) && isfinite(z.im); }
template <class T> NU_DEVICE T phase(complex<T> z) { return atan2(z.im, z.re); }
template <class T> NU_DEVICE tuple2<T, T> polar(complex<T> z) { return {abs(z), phase(z)}; }

// ---- cmath, as CPython computes it ---------------------------------------------------------
//
// Each function below gives CPython's cmath result (CPython 3.10 to 3.13 agree on all of
// them) bit for bit in its signs of zero, infinities and NaNs, with the same formulas
// (Kahan's, "Branch cuts for complex elementary functions", as CPython uses them) for
// finite values, so both sides of every branch cut follow the sign of a zero component.
// Non-finite arguments follow C99 Annex G as CPython's special-value tables do, written
// here as rules. Where CPython raises (ValueError, OverflowError) a kernel returns the
// value CPython's C code computed before raising: log(0j) is -inf+0j, atanh(1+0j) is
// inf+0j, exp(1000+0j) is inf+nanj.
//
// They compute in double; the complex64 overloads widen, compute and round once, so a
// float32 kernel gets CPython's special values and a result within an ULP or two of
// CPython's on the same (float32) input; single-precision formulas would have no room
// for the overflow guards (DBL_MAX / 4).
namespace detail {

constexpr double cm_pi = 3.141592653589793;
constexpr double cm_pi_2 = 1.5707963267948966;
constexpr double cm_e = 2.718281828459045;
constexpr double cm_ln2 = 0.6931471805599453;
constexpr double cm_ln10 = 2.302585092994046;
constexpr double cm_dbl_min = 2.2250738585072014e-308;
constexpr double cm_large = 4.4942328371557893e+307;       // DBL_MAX / 4: no overflow below it
constexpr double cm_sqrt_large = 6.703903964971298e+153;   // sqrt(DBL_MAX / 4)
constexpr double cm_log_large = 708.3964185322641;         // log(DBL_MAX / 4)
constexpr double cm_sqrt_dbl_min = 1.4916681462400413e-154;

NU_DEVICE double cm_inf() { return inf64(); }
NU_DEVICE double cm_nan() { return nan64(); }
NU_DEVICE bool cm_finite(c128 z) { return isfinite(z.re) && isfinite(z.im); }
NU_DEVICE c128 cm_nan2() { return {cm_nan(), cm_nan()}; }

// log(hypot(x, y)) + 2 ln 2 for |x| or |y| near DBL_MAX, where x/2 and y/2 cannot overflow
NU_DEVICE double cm_log_large_abs(double x, double y) {
    return ::log(hypot_of(x / 2., y / 2.)) + 2. * cm_ln2;
}

NU_DEVICE c128 cm_sqrt(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isinf(y)) return {cm_inf(), y};
        if (isnan(x)) return cm_nan2();
        if (isinf(x)) {
            if (isnan(y)) return x > 0 ? c128{x, y} : c128{y, cm_inf()};
            return x > 0 ? c128{x, ::copysign(0., y)} : c128{0., ::copysign(cm_inf(), y)};
        }
        return cm_nan2();  // finite x, y nan
    }
    if (x == 0. && y == 0.) return {0., y};
    double ax = ::fabs(x), ay = ::fabs(y), s;
    if (ax < cm_dbl_min && ay < cm_dbl_min) {
        // hypot(ax, ay) would be subnormal and imprecise: scale by 2**53, back by 2**-27
        ax = ::ldexp(ax, 53);
        s = ::ldexp(::sqrt(ax + hypot_of(ax, ::ldexp(ay, 53))), -27);
    } else {
        ax /= 8.;  // keeps x + hypot(x, y) finite up to DBL_MAX
        s = 2. * ::sqrt(ax + hypot_of(ax, ay / 8.));
    }
    double d = ay / (2. * s);
    return x >= 0. ? c128{s, ::copysign(d, y)} : c128{d, ::copysign(s, y)};
}

NU_DEVICE c128 cm_exp(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isnan(x)) return {x, y == 0. ? y : cm_nan()};
        if (isinf(x)) {
            if (y == 0.) return {x > 0 ? x : 0., y};
            if (!isfinite(y)) return x > 0 ? c128{x, cm_nan()} : c128{0., 0.};
            double m = x > 0 ? x : 0.;
            return {::copysign(m, ::cos(y)), ::copysign(m, ::sin(y))};
        }
        return cm_nan2();  // finite x, y inf or nan
    }
    if (x > cm_log_large) {  // exp(x) overflows while exp(x) * cos(y) may not
        double l = ::exp(x - 1.);
        return {l * ::cos(y) * cm_e, l * ::sin(y) * cm_e};
    }
    double l = ::exp(x);
    return {l * ::cos(y), l * ::sin(y)};
}

NU_DEVICE c128 cm_log(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isnan(x) || isnan(y)) return {(isinf(x) || isinf(y)) ? cm_inf() : cm_nan(), cm_nan()};
        return {cm_inf(), ::atan2(y, x)};  // atan2 gives Annex G's angles at infinity
    }
    double ax = ::fabs(x), ay = ::fabs(y), re;
    if (ax > cm_large || ay > cm_large) {
        re = ::log(hypot_of(ax / 2., ay / 2.)) + cm_ln2;
    } else if (ax < cm_dbl_min && ay < cm_dbl_min) {
        if (ax == 0. && ay == 0.) return {-cm_inf(), ::atan2(y, x)};  // CPython: ValueError
        re = ::log(hypot_of(::ldexp(ax, 53), ::ldexp(ay, 53))) - 53. * cm_ln2;
    } else {
        double h = hypot_of(ax, ay);
        if (0.71 <= h && h <= 1.73) {  // |z| near 1: log1p keeps the small result accurate
            double am = ax > ay ? ax : ay, an = ax > ay ? ay : ax;
            re = ::log1p((am - 1.) * (am + 1.) + an * an) / 2.;
        } else {
            re = ::log(h);
        }
    }
    return {re, ::atan2(y, x)};
}

NU_DEVICE c128 cm_log10(c128 z) {
    c128 l = cm_log(z);
    return {l.re / cm_ln10, l.im / cm_ln10};
}

// np.log2 of a complex number: NumPy scales the natural log by log2(e).
NU_DEVICE c128 cm_log2(c128 z) {
    constexpr double log2e = 1.4426950408889634;
    c128 l = cm_log(z);
    return {l.re * log2e, l.im * log2e};
}

// CPython's complex division (Smith's method; a zero divisor gives 0j where Python raises)
NU_DEVICE c128 cm_quot(c128 a, c128 b) {
    double abr = ::fabs(b.re), abi = ::fabs(b.im);
    if (abr >= abi) {
        if (abr == 0.) return {0., 0.};
        double ratio = b.im / b.re, denom = b.re + b.im * ratio;
        return {(a.re + a.im * ratio) / denom, (a.im - a.re * ratio) / denom};
    }
    if (abi >= abr) {
        double ratio = b.re / b.im, denom = b.re * ratio + b.im;
        return {(a.re * ratio + a.im) / denom, (a.im * ratio - a.re) / denom};
    }
    return cm_nan2();  // a NaN in the divisor
}
NU_DEVICE c128 cm_prod(c128 a, c128 b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// The hyperbolic functions at x = +-inf with finite nonzero y: infinities (or zeros) whose
// signs are those of cos(y) and sin(y).
NU_DEVICE c128 cm_sinh(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isinf(x) && isfinite(y) && y != 0.)
            return {::copysign(cm_inf(), x) * ::copysign(1., ::cos(y)), ::copysign(cm_inf(), ::sin(y))};
        if (isnan(x)) return {x, y == 0. ? y : cm_nan()};
        if (isinf(x)) return y == 0. ? c128{x, y} : c128{cm_inf(), cm_nan()};
        return {x == 0. ? 0. : cm_nan(), cm_nan()};  // finite x, y inf or nan
    }
    if (::fabs(x) > cm_log_large) {  // sinh(x) overflows while sinh(x) * cos(y) may not
        double xm1 = x - ::copysign(1., x);
        return {::cos(y) * ::sinh(xm1) * cm_e, ::sin(y) * ::cosh(xm1) * cm_e};
    }
    return {::cos(y) * ::sinh(x), ::sin(y) * ::cosh(x)};
}

NU_DEVICE c128 cm_cosh(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isinf(x) && isfinite(y) && y != 0.)
            return {::copysign(cm_inf(), ::cos(y)), ::copysign(cm_inf(), x) * ::copysign(1., ::sin(y))};
        if (isnan(x)) return {x, y == 0. ? 0. : cm_nan()};
        if (isinf(x)) return y == 0. ? c128{cm_inf(), x > 0 ? y : -y} : c128{cm_inf(), cm_nan()};
        return {cm_nan(), x == 0. ? 0. : cm_nan()};  // finite x, y inf or nan
    }
    if (::fabs(x) > cm_log_large) {
        double xm1 = x - ::copysign(1., x);
        return {::cos(y) * ::cosh(xm1) * cm_e, ::sin(y) * ::sinh(xm1) * cm_e};
    }
    return {::cos(y) * ::cosh(x), ::sin(y) * ::sinh(x)};
}

NU_DEVICE c128 cm_tanh(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isinf(x)) {
            double im = y == 0. ? y : isfinite(y) ? ::copysign(0., 2. * ::sin(y) * ::cos(y)) : 0.;
            return {::copysign(1., x), im};
        }
        if (isnan(x)) return {x, y == 0. ? y : cm_nan()};
        return cm_nan2();  // finite x, y inf or nan (CPython <= 3.13; C11 keeps x == +-0)
    }
    if (::fabs(x) > cm_log_large) {  // 1 - tanh(x)^2 ~ 4 exp(-2|x|); cosh(x) would overflow
        return {::copysign(1., x), 4. * ::sin(y) * ::cos(y) * ::exp(-2. * ::fabs(x))};
    }
    // (tanh x (1 + tan^2 y) + i tan y sech^2 x) / (1 + tanh^2 x tan^2 y)
    double tx = ::tanh(x), ty = ::tan(y), cx = 1. / ::cosh(x), txty = tx * ty;
    double denom = 1. + txty * txty;
    return {tx * (1. + ty * ty) / denom, ((ty / denom) * cx) * cx};
}

NU_DEVICE c128 cm_asinh(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isnan(x)) return {isinf(y) ? cm_inf() : cm_nan(), y == 0. ? y : cm_nan()};
        if (isnan(y)) return {isinf(x) ? x : cm_nan(), cm_nan()};
        return {::copysign(cm_inf(), x), ::atan2(y, ::fabs(x))};
    }
    if (::fabs(x) > cm_large || ::fabs(y) > cm_large)
        return {::copysign(cm_log_large_abs(x, y), x), ::atan2(y, ::fabs(x))};
    c128 s1 = cm_sqrt({1. + y, -x});
    c128 s2 = cm_sqrt({1. - y, x});
    return {::asinh(s1.re * s2.im - s2.re * s1.im), ::atan2(y, s1.re * s2.re - s1.im * s2.im)};
}

NU_DEVICE c128 cm_acos(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isnan(x)) return {cm_nan(), isinf(y) ? -y : cm_nan()};
        if (isnan(y)) {
            if (isinf(x)) return {cm_nan(), cm_inf()};
            return {x == 0. ? cm_pi_2 : cm_nan(), cm_nan()};
        }
        return {::atan2(::fabs(y), x), -::copysign(cm_inf(), y)};
    }
    if (::fabs(x) > cm_large || ::fabs(y) > cm_large)
        return {::atan2(::fabs(y), x), -::copysign(cm_log_large_abs(x, y), y)};
    c128 s1 = cm_sqrt({1. - x, -y});
    c128 s2 = cm_sqrt({1. + x, y});
    return {2. * ::atan2(s1.re, s2.re), ::asinh(s2.re * s1.im - s2.im * s1.re)};
}

NU_DEVICE c128 cm_acosh(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isnan(x)) return {isinf(y) ? cm_inf() : cm_nan(), cm_nan()};
        if (isnan(y)) return {isinf(x) ? cm_inf() : cm_nan(), cm_nan()};
        return {cm_inf(), ::atan2(y, x)};
    }
    if (::fabs(x) > cm_large || ::fabs(y) > cm_large) return {cm_log_large_abs(x, y), ::atan2(y, x)};
    c128 s1 = cm_sqrt({x - 1., y});
    c128 s2 = cm_sqrt({x + 1., y});
    return {::asinh(s1.re * s2.re + s1.im * s2.im), 2. * ::atan2(s1.im, s2.re)};
}

NU_DEVICE c128 cm_atanh(c128 z) {
    double x = z.re, y = z.im;
    if (!cm_finite(z)) {
        if (isnan(x)) return isinf(y) ? c128{0., ::copysign(cm_pi_2, y)} : cm_nan2();
        if (isnan(y)) return (isinf(x) || x == 0.) ? c128{::copysign(0., x), y} : cm_nan2();
        return {::copysign(0., x), ::copysign(cm_pi_2, y)};
    }
    // atanh(z) = -atanh(-z): the formulas below assume x >= 0
    double sgn = x < 0. ? -1. : 1.;
    x *= sgn;
    y *= sgn;
    double ay = ::fabs(y);
    c128 r;
    if (x > cm_sqrt_large || ay > cm_sqrt_large) {  // atanh(z) ~ 1/z +- i pi/2
        double h = hypot_of(x / 2., y / 2.);
        r = {x / 4. / h / h, ::copysign(cm_pi_2, y)};
    } else if (x == 1. && ay < cm_sqrt_dbl_min) {
        if (ay == 0.) r = {cm_inf(), y};  // CPython: ValueError
        else r = {-::log(::sqrt(ay) / ::sqrt(hypot_of(ay, 2.))), ::copysign(::atan2(2., -ay) / 2., y)};
    } else {
        r = {::log1p(4. * x / ((1. - x) * (1. - x) + ay * ay)) / 4.,
             -::atan2(-2. * y, (1. - x) * (1. + x) - ay * ay) / 2.};
    }
    return {sgn * r.re, sgn * r.im};
}

// The trigonometric functions through their hyperbolic twins, as CPython does:
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz), asin z = -i asinh(iz),
// atan z = -i atanh(iz).
NU_DEVICE c128 cm_rot(c128 z) { return {-z.im, z.re}; }       // i z
NU_DEVICE c128 cm_unrot(c128 s) { return {s.im, -s.re}; }     // -i s
NU_DEVICE c128 cm_sin(c128 z) { return cm_unrot(cm_sinh(cm_rot(z))); }
NU_DEVICE c128 cm_cos(c128 z) { return cm_cosh(cm_rot(z)); }
NU_DEVICE c128 cm_tan(c128 z) { return cm_unrot(cm_tanh(cm_rot(z))); }
NU_DEVICE c128 cm_asin(c128 z) { return cm_unrot(cm_asinh(cm_rot(z))); }
NU_DEVICE c128 cm_atan(c128 z) { return cm_unrot(cm_atanh(cm_rot(z))); }

// rect(r, phi) behaves as exp(log(r) + i phi) for r >= +0 and -exp(log(-r) + i phi) for
// r <= -0 at the special values (CPython's rule).
NU_DEVICE c128 cm_rect(double r, double phi) {
    if (!isfinite(r) || !isfinite(phi)) {
        if (isinf(r) && isfinite(phi) && phi != 0.) {
            double s = r > 0 ? 1. : -1.;
            return {s * ::copysign(cm_inf(), ::cos(phi)), s * ::copysign(cm_inf(), ::sin(phi))};
        }
        if (isnan(r)) return {r, phi == 0. ? 0. : cm_nan()};
        if (isinf(r)) return phi == 0. ? c128{r, ::copysign(0., r) * phi} : c128{cm_inf(), cm_nan()};
        return r == 0. ? c128{0., 0.} : cm_nan2();  // finite r, phi inf or nan
    }
    if (phi == 0.) return {r, r * phi};
    return {r * ::cos(phi), r * ::sin(phi)};
}

// Python's complex ** (complex_pow): integral exponents up to 100 in magnitude by binary
// powering (c_powi), others through polar form. 0j to a negative or complex power is 0j
// where Python raises ZeroDivisionError.
NU_DEVICE c128 cm_powu(c128 x, long long n) {
    c128 r{1., 0.}, p = x;
    for (long long mask = 1; mask > 0 && n >= mask; mask <<= 1) {
        if (n & mask) r = cm_prod(r, p);
        p = cm_prod(p, p);
    }
    return r;
}
NU_DEVICE c128 cm_pow(c128 a, c128 b) {
    if (b.im == 0. && b.re == ::floor(b.re) && ::fabs(b.re) <= 100.) {
        long long n = (long long)b.re;
        return n > 0 ? cm_powu(a, n) : cm_quot({1., 0.}, cm_powu(a, -n));
    }
    if (b.re == 0. && b.im == 0.) return {1., 0.};
    if (a.re == 0. && a.im == 0.) return {0., 0.};
    double vabs = hypot_of(a.re, a.im), len = ::pow(vabs, b.re);
    double at = ::atan2(a.im, a.re), ph = at * b.re;
    if (b.im != 0.) {
        len /= ::exp(at * b.im);
        ph += b.im * ::log(vabs);
    }
    return {len * ::cos(ph), len * ::sin(ph)};
}

NU_DEVICE c128 cm_widen(c128 z) { return z; }
NU_DEVICE c128 cm_widen(c64 z) { return {double(z.re), double(z.im)}; }
template <class T> NU_DEVICE complex<T> cm_narrow(c128 z) { return {T(z.re), T(z.im)}; }

}  // namespace detail

#define NU_CMATH1(name)                                                              \
    template <class T> NU_DEVICE complex<T> name(complex<T> z) {                     \
        return detail::cm_narrow<T>(detail::cm_##name(detail::cm_widen(z)));         \
    }
NU_CMATH1(sqrt)
NU_CMATH1(exp)
NU_CMATH1(log)
NU_CMATH1(log10)
NU_CMATH1(log2)
NU_CMATH1(sin)
NU_CMATH1(cos)
NU_CMATH1(tan)
NU_CMATH1(sinh)
NU_CMATH1(cosh)
NU_CMATH1(tanh)
NU_CMATH1(asin)
NU_CMATH1(acos)
NU_CMATH1(atan)
NU_CMATH1(asinh)
NU_CMATH1(acosh)
NU_CMATH1(atanh)
#undef NU_CMATH1

// NumPy's maximum/minimum/fmax/fmin of complex numbers: lexicographic order (real part,
// then imaginary), a NaN in either part propagating (maximum/minimum) or skipped (fmax/fmin),
// as NumPy's loops compare them.
template <class T> NU_DEVICE bool np_complex_ge(complex<T> a, complex<T> b) {
    return (a.re > b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im >= b.im);
}
template <class T> NU_DEVICE bool np_complex_le(complex<T> a, complex<T> b) {
    return (a.re < b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im <= b.im);
}
template <class T> NU_DEVICE complex<T> np_maximum(complex<T> a, complex<T> b) {
    return isnan(a) || np_complex_ge(a, b) ? a : b;
}
template <class T> NU_DEVICE complex<T> np_minimum(complex<T> a, complex<T> b) {
    return isnan(a) || np_complex_le(a, b) ? a : b;
}
template <class T> NU_DEVICE complex<T> np_fmax(complex<T> a, complex<T> b) {
    return isnan(b) || np_complex_ge(a, b) ? a : b;
}
template <class T> NU_DEVICE complex<T> np_fmin(complex<T> a, complex<T> b) {
    return isnan(b) || np_complex_le(a, b) ? a : b;
}

// cmath.log(z, base): log(z) / log(base) with Python's complex division
template <class T> NU_DEVICE complex<T> log(complex<T> z, complex<T> base) {
    using namespace detail;
    return cm_narrow<T>(cm_quot(cm_log(cm_widen(z)), cm_log(cm_widen(base))));
}
template <class T> NU_DEVICE complex<T> rect(T r, T phi) {
    return detail::cm_narrow<T>(detail::cm_rect(double(r), double(phi)));
}
// Python's z ** w for Python complex numbers (NumPy's power, for NumPy complex values and
// np.power, is pow/fpow below)
// (the translator names the complex type: nu::cpow<nu::c64>(a, b))
template <class C> NU_DEVICE C cpow(C a, C b) {
    using namespace detail;
    return cm_narrow<typename C::value_type>(cm_pow(cm_widen(a), cm_widen(b)));
}

// NumPy's complex power: exact repeated multiplication for small integral exponents,
// exp(b log a) otherwise.
template <class T> NU_DEVICE complex<T> pow(complex<T> a, complex<T> b) {
    if (b.re == 0 && b.im == 0) return {T(1), T(0)};
    if (a.re == 0 && a.im == 0) {  // NumPy 2: 0 ** b is 0 when Re(b) > 0, else undefined
        if (b.re > 0) return {T(0), T(0)};
        return {T(nan64()), T(nan64())};
    }
    if (b.im == 0 && b.re == T(i64(b.re)) && fabs(b.re) < T(100)) {
        i64 n = i64(b.re);
        if (n == 1) return a;
        if (n == 2) return a * a;
        if (n == 3) return a * (a * a);
        if (n < 0) n = -n;
        complex<T> r{T(1), T(0)}, p = a;
        for (i64 mask = 1;; mask <<= 1) {  // NumPy's loop, multiplication order included
            if (n & mask) r = r * p;
            if (n < (mask << 1)) break;
            p = p * p;
        }
        return b.re < 0 ? complex<T>{T(1), T(0)} / r : r;
    }
    complex<T> l = log(a);
    return exp(l * b);
}
template <class T> NU_DEVICE complex<T> fpow(complex<T> a, complex<T> b) { return pow(a, b); }

}  // namespace nu
