"""Test scaffolding: run translated device functions element by element on the host, and
evaluate the Python function itself (the oracle) on NumPy scalars of the same dtypes.

Many functions share one translation unit (g++ and NVRTC cost ~0.3-1 s per unit); every
unit is also compiled by NVRTC to PTX for sm_90, so each generated function is checked by
both compilers. The loop wrappers here are test code: real elementwise kernels come from
src/kernels/ with the vectorize work.
"""

from __future__ import annotations

import ctypes
import re
import warnings

import numpy as np

from numbacuda_ufunc import _core
from numbacuda_ufunc.compiler import HEADER, translate
from numbacuda_ufunc.compiler._types import ctype

UNDEFINED = object()  # the oracle raised or NumPy called the value undefined


class Case:
    """One function, its argument types and the output dtype the result is cast to."""

    def __init__(self, fn, arg_types, out_type=None):
        self.fn = fn
        self.arg_types = tuple(arg_types)
        self.tf = translate(fn, self.arg_types)
        self.out_type = out_type or self.tf.return_type
        self.runner = None


def _host_wrapper(i, case):
    params = ", ".join(f"const {ctype(t)}* a{k}" for k, t in enumerate(case.arg_types))
    args = ", ".join(f"a{k}[i]" for k in range(len(case.arg_types)))
    out = ctype(case.out_type)
    return (f'extern "C" void nu_run_{i}({params}{", " if params else ""}{out}* out, '
            f"long long n) {{\n    for (long long i = 0; i < n; ++i) "
            f"out[i] = nu::cast<{out}>({case.tf.name}({args}));\n}}\n")


def _device_wrapper(i, case):
    params = ", ".join(f"const {ctype(t)}* a{k}" for k, t in enumerate(case.arg_types))
    args = ", ".join(f"a{k}[i]" for k in range(len(case.arg_types)))
    out = ctype(case.out_type)
    return (f'extern "C" __global__ void nu_run_{i}({params}{", " if params else ""}'
            f"{out}* out, long long n) {{\n    long long i = blockIdx.x * (long long)blockDim.x"
            f" + threadIdx.x;\n    if (i < n) out[i] = nu::cast<{out}>({case.tf.name}({args}));"
            f"\n}}\n")


def build(cases, nvrtc=True, host_options=()):
    """Compile all cases in one unit for the host (and NVRTC); attach ``case.runner``."""
    sources = "".join(c.tf.source for c in cases)
    host = HEADER + sources + "".join(_host_wrapper(i, c) for i, c in enumerate(cases))
    lib = _core.build_host(host, list(host_options))
    if nvrtc:
        dev = HEADER + sources + "".join(_device_wrapper(i, c) for i, c in enumerate(cases))
        ptx = _core.compile_ptx(dev, (9, 0))
        entries = set(re.findall(r"\.entry\s+(nu_run_\d+)", ptx))
        missing = [i for i in range(len(cases)) if f"nu_run_{i}" not in entries]
        assert not missing, f"kernels missing from the PTX: {missing}"
    for i, c in enumerate(cases):
        n = len(c.arg_types)
        proto = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * (n + 1)), ctypes.c_longlong)
        c.runner = (lib, proto(lib.symbol(f"nu_run_{i}")))
    return lib


def run_compiled(case, *arrays):
    arrays = [np.ascontiguousarray(a, dtype=t.dtype) for a, t in zip(arrays, case.arg_types)]
    n = len(arrays[0]) if arrays else 1
    out = np.empty(n, dtype=case.out_type.dtype)
    if out.dtype.kind in "fc":
        out[...] = np.nan  # poison: unwritten elements show
    else:
        out[...] = 123
    case.runner[1](*[a.ctypes.data for a in arrays], out.ctypes.data, n)
    return out


def run_oracle(case, *arrays):
    """The Python function on NumPy scalars, element by element; UNDEFINED where Python
    raises or NumPy warns that a cast is undefined."""
    arrays = [np.asarray(a, dtype=t.dtype) for a, t in zip(arrays, case.arg_types)]
    n = len(arrays[0]) if arrays else 1
    out_dtype = case.out_type.dtype
    result = []
    with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
        warnings.simplefilter("always")
        for i in range(n):
            start = len(w)
            try:
                r = case.fn(*(a[i] for a in arrays))
                if isinstance(r, complex | np.complexfloating) and out_dtype.kind != "c":
                    value = UNDEFINED  # the Python value's type depends on the data
                else:
                    value = np.asarray(r).astype(out_dtype)[()]
            except (ArithmeticError, ValueError, TypeError):
                value = UNDEFINED
            if any("invalid value encountered in cast" in str(x.message) for x in w[start:]):
                value = UNDEFINED
            result.append(value)
    return result


def _close(got, want, ulps):
    """Exact (signed zeros included) when ulps == 0, else within ``ulps`` units in the last
    place of the wanted value; NaN matches NaN, infinities match only themselves."""
    if np.isnan(want):
        return bool(np.isnan(got))
    if np.isnan(got):
        return False
    if ulps == 0:
        return bool(got == want and np.signbit(got) == np.signbit(want))
    if np.isinf(want) or np.isinf(got):
        return bool(got == want)
    t = type(want)
    scale = t(max(abs(want), np.finfo(t).tiny))
    ulp = float(scale - np.nextafter(scale, t(0)))  # np.spacing overflows at the maximum
    return abs(float(got) - float(want)) <= ulps * ulp


def compare(case, got, want, ulps=0, inputs=None):
    """Element by element; ``ulps`` is the tolerance for floats (0: exact, signed zeros
    included). Returns the number of defined elements compared."""
    bad = []
    compared = 0
    for i, (g, w) in enumerate(zip(got, want)):
        if w is UNDEFINED:
            continue
        compared += 1
        if case.out_type.dtype.kind == "c":
            ok = _close(g.real, w.real, ulps) and _close(g.imag, w.imag, ulps)
        elif case.out_type.dtype.kind == "f":
            ok = _close(g, w, ulps)
        else:
            ok = g == w
        if not ok:
            args = tuple(a[i] for a in inputs) if inputs is not None else i
            bad.append(f"  args={args!r}: got {g!r}, want {w!r}")
    if bad:
        raise AssertionError(
            f"{case.fn.__name__}{case.arg_types} -> {case.out_type}: {len(bad)} mismatches\n"
            + "\n".join(bad[:12]) + "\n" + case.tf.source)
    return compared


def check(case, *arrays, ulps=0, min_defined=1):
    got = run_compiled(case, *arrays)
    want = run_oracle(case, *arrays)
    n = compare(case, got, want, ulps, arrays)
    assert n >= min_defined, f"only {n} defined elements for {case.fn.__name__}"
    return n


_EDGE_INT = [0, 1, -1, 2, -2, 3, -3, 5, 7, -7, 8, 13, 63, 64, 100, -100]


def edge_values(t):
    """Edge values of a scalar type: limits, zeros, NaN, infinities, small and large."""
    dt = t.dtype
    if dt.kind == "b":
        return np.array([False, True])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        vals = [v for v in _EDGE_INT if info.min <= v <= info.max]
        vals += [info.min, info.max, info.min + 1, info.max - 1, info.max // 2]
        return np.array(sorted(set(vals)), dtype=dt)
    f = np.finfo(dt if dt.kind == "f" else np.dtype(dt.char.lower()))
    reals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.25, -7.25, 1e10, -1e-3, float(f.max),
             -float(f.max), float(f.tiny), float(f.smallest_subnormal), np.inf, -np.inf,
             np.nan, 100.5, 0.1]
    if dt.kind == "f":
        return np.array(reals, dtype=dt)
    parts = [0.0, -0.0, 1.0, -2.5, 0.5, 1e10, np.inf, -np.inf, np.nan]
    return np.array([complex(a, b) for a in parts for b in parts[:6]], dtype=dt)


def pairs(ta, tb):
    a, b = edge_values(ta), edge_values(tb)
    aa, bb = np.meshgrid(a, b, indexing="ij")
    return aa.ravel(), bb.ravel()
