"""``numba.cuda.libdevice``: CUDA's libdevice functions by their names without ``__nv_``.

One table, built below from the families libdevice has, gives each function its parameter
and result types (Numba's: unsigned values travel as int32/int64 bits, as in libdevice's
own signatures). Functions that write through pointers in libdevice (``sincos``,
``frexp``, ``modf``, ``remquo``...) return a tuple instead, the function's result first.
Each is implemented in src/kernels/nu_libdevice.cuh (``nu::libdevice::<name>``): the CUDA
math API function or intrinsic on the GPU, an equivalent on the host backend.
"""

from __future__ import annotations

from ..types import float32, float64, int16, int32, int64
from ._types import BOTTOM, Bottom, TupleType, is_numeric, kind_of
from ._values import Val

__all__ = ["FUNCTIONS", "call"]

_T = {"d": float64, "f": float32, "i": int32, "l": int64, "h": int16}

_UNARY = ("acos acosh asin asinh atan atanh cbrt ceil cos cosh cospi erf erfc erfcinv erfcx "
          "erfinv exp exp10 exp2 expm1 fabs floor j0 j1 lgamma log log10 log1p log2 logb "
          "nearbyint normcdf normcdfinv rcbrt rint round rsqrt sin sinh sinpi sqrt tan tanh "
          "tgamma trunc y0 y1").split()
_BINARY = "atan2 copysign fdim fmax fmin fmod hypot nextafter pow remainder".split()
_MODES = ("rd", "rn", "ru", "rz")


def _table():
    """name -> (parameter type codes, result type code(s)); codes index _T, a result of
    several codes is a tuple."""
    t = {}

    def pair(name, params, result, fparams=None, fresult=None):
        t[name] = (params, result)
        t[name + "f"] = (fparams or params.replace("d", "f"), fresult or result.replace("d", "f"))

    for n in _UNARY:
        pair(n, "d", "d")
    for n in _BINARY:
        pair(n, "dd", "d")
    pair("fma", "ddd", "d")
    pair("ilogb", "d", "i")
    pair("llrint", "d", "l")
    pair("llround", "d", "l")
    for n in ("ldexp", "scalbn", "powi"):
        pair(n, "di", "d")
    for n in ("jn", "yn"):
        pair(n, "id", "d")
    pair("frexp", "d", "di")
    pair("modf", "d", "dd")
    pair("remquo", "dd", "di")
    pair("sincos", "d", "dd")
    pair("sincospi", "d", "dd")
    for n in ("isfinited", "isinfd", "isnand", "signbitd"):
        t[n] = ("d", "i")
    for n in ("finitef", "isinff", "isnanf", "signbitf"):
        t[n] = ("f", "i")
    for n in ("cosf", "exp10f", "expf", "log10f", "log2f", "logf", "sinf", "tanf"):
        t["fast_" + n] = ("f", "f")
    t["fast_fdividef"] = ("ff", "f")
    t["fast_powf"] = ("ff", "f")
    t["fast_sincosf"] = ("f", "ff")
    t["saturatef"] = ("f", "f")
    t["frsqrt_rn"] = ("f", "f")
    for m in _MODES:
        for n in ("dadd", "ddiv", "dmul"):
            t[f"{n}_{m}"] = ("dd", "d")
        for n in ("fadd", "fdiv", "fmul", "fsub"):
            t[f"{n}_{m}"] = ("ff", "f")
        for n, c in (("drcp", "d"), ("dsqrt", "d"), ("frcp", "f"), ("fsqrt", "f")):
            t[f"{n}_{m}"] = (c, c)
        t[f"fma_{m}"] = ("ddd", "d")
        t[f"fmaf_{m}"] = ("fff", "f")
        t[f"double2float_{m}"] = ("d", "f")
        for src, s in (("double", "d"), ("float", "f")):
            for dst, r in (("int", "i"), ("uint", "i"), ("ll", "l"), ("ull", "l")):
                t[f"{src}2{dst}_{m}"] = (s, r)
        for src, s in (("int", "i"), ("uint", "i"), ("ll", "l"), ("ull", "l")):
            t[f"{src}2float_{m}"] = (s, "f")
        for src in ("ll", "ull"):
            t[f"{src}2double_{m}"] = ("l", "d")
    t["int2double_rn"] = ("i", "d")
    t["uint2double_rn"] = ("i", "d")
    t["double2hiint"] = ("d", "i")
    t["double2loint"] = ("d", "i")
    t["hiloint2double"] = ("ii", "d")
    t["double_as_longlong"] = ("d", "l")
    t["longlong_as_double"] = ("l", "d")
    t["float_as_int"] = ("f", "i")
    t["int_as_float"] = ("i", "f")
    t["float2half_rn"] = ("f", "h")
    t["half2float"] = ("h", "f")
    for n, c in (("abs", "i"), ("llabs", "l"), ("brev", "i"), ("brevll", "l")):
        t[n] = (c, c)
    for n, c in (("clz", "i"), ("clzll", "l"), ("ffs", "i"), ("ffsll", "l"), ("popc", "i"),
                 ("popcll", "l")):
        t[n] = (c, "i")
    for n in ("hadd", "rhadd", "uhadd", "urhadd", "mul24", "umul24", "mulhi", "umulhi",
              "max", "min", "umax", "umin"):
        t[n] = ("ii", "i")
    for n in ("mul64hi", "umul64hi", "llmax", "llmin", "ullmax", "ullmin"):
        t[n] = ("ll", "l")
    for n in ("byte_perm", "sad", "usad"):
        t[n] = ("iii", "i")
    return t


FUNCTIONS = _table()
_PARAMS = ("x", "y", "z")


def result_type(name):
    codes = FUNCTIONS[name][1]
    if len(codes) == 1:
        return _T[codes]
    return TupleType(_T[c] for c in codes)


def call(tr, node, name, args, kwargs, bind) -> Val:
    """``libdevice.name(...)``: the arguments convert to the parameter types (complex
    numbers and arrays are refused), as Numba's typed stubs do."""
    if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
        return Val("0", BOTTOM)
    params, _ = FUNCTIONS[name]
    api = f"libdevice.{name}()"
    names = ("n", "x") if name in ("jn", "jnf", "yn", "ynf") else _PARAMS[:len(params)]
    vals = bind(tr, node, api, args, kwargs, names)
    codes = []
    for v, p in zip(vals, params):
        if not is_numeric(v.type) or kind_of(v.type) == "c":
            raise tr.error(node, f"{api} takes real numbers (got {v.type})")
        codes.append(tr.cast(node, v, _T[p]))
    tr.ctx.libdevice = True  # the unit includes nu_libdevice.cuh (translate.py)
    return Val(f"nu::libdevice::{name}({', '.join(codes)})", result_type(name))
