// src/kernels/nu_complex.cuh: complex64/complex128 arithmetic and cmath for translated code
//
// Arithmetic follows NumPy's loops (naive multiplication, Smith's division, integer powers
// by repeated multiplication); the cmath functions use the textbook formulas with the
// special cases that keep signed zeros and infinities right.
#pragma once

namespace nu {

template <class T> NU_DEVICE complex<T> operator+(complex<T> a, complex<T> b) { return {a.re + b.re, a.im + b.im}; }
template <class T> NU_DEVICE complex<T> operator-(complex<T> a, complex<T> b) { return {a.re - b.re, a.im - b.im}; }
template <class T> NU_DEVICE complex<T> operator-(complex<T> a) { return {-a.re, -a.im}; }
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
template <class T> NU_DEVICE T phase(complex<T> z) { return atan2(z.im, z.re); }
template <class T> NU_DEVICE bool isnan(complex<T> z) { return isnan(z.re) || isnan(z.im); }
template <class T> NU_DEVICE bool isinf(complex<T> z) { return isinf(z.re) || isinf(z.im); }
template <class T> NU_DEVICE bool isfinite(complex<T> z) { return isfinite(z.re) && isfinite(z.im); }
template <class T> NU_DEVICE tuple2<T, T> polar(complex<T> z) { return {abs(z), phase(z)}; }
template <class T> NU_DEVICE complex<T> rect(T r, T phi) {
    if (phi == 0) return {r, phi};  // keeps rect(inf, 0) == (inf, 0) as Python does
    return {r * cos(phi), r * sin(phi)};
}

template <class T> NU_DEVICE complex<T> exp(complex<T> z) {
    if (z.im == 0) return {exp(z.re), z.im};
    T m = exp(z.re);
    return {m * cos(z.im), m * sin(z.im)};
}
template <class T> NU_DEVICE complex<T> log(complex<T> z) { return {log(abs(z)), atan2(z.im, z.re)}; }
template <class T> NU_DEVICE complex<T> log10(complex<T> z) {
    complex<T> l = log(z);
    T s = T(0.43429448190325176);  // 1 / ln(10)
    return {l.re * s, l.im * s};
}
template <class T> NU_DEVICE complex<T> sqrt(complex<T> z) {
    if (z.re == 0 && z.im == 0) return {T(0), z.im};
    if (isinf(z.im)) return {T(inf64()), z.im};
    T t = sqrt((fabs(z.re) + abs(z)) * T(0.5));
    if (z.re >= 0) return {t, z.im / (T(2) * t)};
    return {fabs(z.im) / (T(2) * t), copysign(t, z.im)};
}
template <class T> NU_DEVICE complex<T> sinh(complex<T> z) {
    if (z.im == 0) return {sinh(z.re), z.im};
    return {sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im)};
}
template <class T> NU_DEVICE complex<T> cosh(complex<T> z) {
    if (z.im == 0) return {cosh(z.re), copysign(T(0), z.re) * z.im};
    return {cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im)};
}
template <class T> NU_DEVICE complex<T> tanh(complex<T> z) {
    // tanh(x+iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y), with the large-|x| limit taken
    // explicitly because cosh 2x overflows long before tanh reaches +-1.
    if (fabs(z.re) > T(20)) return {copysign(T(1), z.re), T(4) * sin(z.im) * cos(z.im) * exp(T(-2) * fabs(z.re))};
    T d = cosh(T(2) * z.re) + cos(T(2) * z.im);
    return {sinh(T(2) * z.re) / d, sin(T(2) * z.im) / d};
}
// The trigonometric functions via their hyperbolic twins: sin z = -i sinh(iz), etc.
template <class T> NU_DEVICE complex<T> sin(complex<T> z) {
    complex<T> s = sinh(complex<T>{-z.im, z.re});
    return {s.im, -s.re};
}
template <class T> NU_DEVICE complex<T> cos(complex<T> z) { return cosh(complex<T>{-z.im, z.re}); }
template <class T> NU_DEVICE complex<T> tan(complex<T> z) {
    complex<T> t = tanh(complex<T>{-z.im, z.re});
    return {t.im, -t.re};
}
template <class T> NU_DEVICE complex<T> asinh(complex<T> z) {
    // asinh z = log(z + sqrt(z^2 + 1)); use the odd symmetry so the log argument never
    // cancels for negative real parts.
    bool flip = z.re < 0;
    complex<T> w = flip ? -z : z;
    complex<T> r = log(w + sqrt(w * w + complex<T>{T(1), T(0)}));
    return flip ? -r : r;
}
template <class T> NU_DEVICE complex<T> asin(complex<T> z) {
    complex<T> s = asinh(complex<T>{-z.im, z.re});
    return {s.im, -s.re};
}
template <class T> NU_DEVICE complex<T> acos(complex<T> z) {
    complex<T> a = asin(z);
    return {T(1.5707963267948966) - a.re, -a.im};
}
template <class T> NU_DEVICE complex<T> acosh(complex<T> z) {
    // acosh z = 2 log(sqrt((z+1)/2) + sqrt((z-1)/2)) (Kahan), valid on the principal branch.
    complex<T> one{T(1), T(0)}, half{T(0.5), T(0)};
    complex<T> r = log(sqrt((z + one) * half) + sqrt((z - one) * half));
    return {T(2) * r.re, T(2) * r.im};
}
template <class T> NU_DEVICE complex<T> atanh(complex<T> z) {
    // atanh z = (log(1+z) - log(1-z)) / 2
    complex<T> one{T(1), T(0)};
    complex<T> r = log(one + z) - log(one - z);
    return {T(0.5) * r.re, T(0.5) * r.im};
}
template <class T> NU_DEVICE complex<T> atan(complex<T> z) {
    complex<T> a = atanh(complex<T>{-z.im, z.re});
    return {a.im, -a.re};
}

// NumPy's complex power: exact repeated multiplication for small integral exponents,
// exp(b log a) otherwise.
template <class T> NU_DEVICE complex<T> pow(complex<T> a, complex<T> b) {
    if (b.re == 0 && b.im == 0) return {T(1), T(0)};
    if (a.re == 0 && a.im == 0) {
        if (b.re > 0 && b.im == 0) return {T(0), T(0)};
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
