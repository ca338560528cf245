"""``numba.cuda.bf16``: CUDA's bfloat16 intrinsics in kernels and device functions.

Each name maps to its parameter types, its result type and the C++ function in
src/kernels/nu_bf16.cuh (namespace ``nu::bf16_ops``, named as CUDA names it without the
leading ``__``). Arguments convert to the parameter types as Numba's bindings do
(``hadd(1.5, x)`` makes a bfloat16 of 1.5); the results are CUDA's, bit for bit.
"""

from __future__ import annotations

from .. import types
from ..types import Scalar, bool_
from ._types import BOTTOM, Bottom, kind_of
from ._values import Val

__all__ = ["BF16_FUNCTIONS", "BF16_ALIASES", "call"]

_BF = "bfloat16"
_ARITH2 = ("hadd", "hsub", "hmul", "hadd_rn", "hsub_rn", "hmul_rn", "hdiv", "hadd_sat",
           "hsub_sat", "hmul_sat", "hmax", "hmin", "hmax_nan", "hmin_nan")
_ARITH3 = ("hfma", "hfma_sat", "hfma_relu")
_UNARY = ("habs", "hneg", "htrunc", "hceil", "hfloor", "hrint", "hsqrt", "hrsqrt", "hrcp",
          "hlog", "hlog2", "hlog10", "hcos", "hsin", "hexp", "hexp2", "hexp10", "htanh",
          "htanh_approx")
_COMPARE = ("heq", "hne", "hge", "hgt", "hle", "hlt", "hequ", "hneu", "hgeu", "hgtu", "hleu",
            "hltu")
# CUDA's short names of the integer types, with ours.
_INTS = (("short", "int16"), ("ushort", "uint16"), ("int", "int32"), ("uint", "uint32"),
         ("ll", "int64"), ("ull", "uint64"))
_MODES = ("rn", "rz", "rd", "ru")


def _table():
    """name -> (parameter type names, result type name, C++ function)."""
    t = {}
    for n in _ARITH2:
        t[n] = ((_BF, _BF), _BF, n)
    for n in _ARITH3:
        t[n] = ((_BF, _BF, _BF), _BF, n)
    for n in _UNARY:
        t[n] = ((_BF,), _BF, n)
    for n in _COMPARE:
        t[n] = ((_BF, _BF), "bool", n)
    t["hisnan"] = ((_BF,), "bool", "hisnan")
    t["hisinf"] = ((_BF,), "int32", "hisinf")
    t["bfloat162float"] = ((_BF,), "float32", "bfloat162float")
    t["float2bfloat16"] = (("float32",), _BF, "float2bfloat16")
    t["double2bfloat16"] = (("float64",), _BF, "double2bfloat16")
    for m in _MODES:
        t[f"float2bfloat16_{m}"] = (("float32",), _BF, f"float2bfloat16_{m}")
    t["bfloat162char_rz"] = ((_BF,), "int8", "bfloat162char_rz")
    t["bfloat162uchar_rz"] = ((_BF,), "uint8", "bfloat162uchar_rz")
    for c, ours in _INTS:
        for m in _MODES:
            t[f"{c}2bfloat16_{m}"] = ((ours,), _BF, f"{c}2bfloat16_{m}")
            t[f"bfloat162{c}_{m}"] = ((_BF,), ours, f"bfloat162{c}_{m}")
    t["bfloat16_as_short"] = ((_BF,), "int16", "bfloat16_as_short")
    t["bfloat16_as_ushort"] = ((_BF,), "uint16", "bfloat16_as_ushort")
    t["short_as_bfloat16"] = (("int16",), _BF, "short_as_bfloat16")
    t["ushort_as_bfloat16"] = (("uint16",), _BF, "ushort_as_bfloat16")
    return t


BF16_FUNCTIONS = _table()


def _aliases():
    """Numba's NumPy-style names (float32_to_bfloat16_rz...) -> CUDA's."""
    a = {"float32_to_bfloat16": "float2bfloat16", "float64_to_bfloat16": "double2bfloat16",
         "bfloat16_to_float32": "bfloat162float", "bfloat16_to_int8_rz": "bfloat162char_rz",
         "bfloat16_to_uint8_rz": "bfloat162uchar_rz", "bfloat16_as_int16": "bfloat16_as_short",
         "bfloat16_as_uint16": "bfloat16_as_ushort", "int16_as_bfloat16": "short_as_bfloat16",
         "uint16_as_bfloat16": "ushort_as_bfloat16"}
    for m in _MODES:
        a[f"float32_to_bfloat16_{m}"] = f"float2bfloat16_{m}"
        for c, ours in _INTS:
            a[f"{ours}_to_bfloat16_{m}"] = f"{c}2bfloat16_{m}"
            a[f"bfloat16_to_{ours}_{m}"] = f"bfloat162{c}_{m}"
    return a


BF16_ALIASES = _aliases()
_PARAMS = ("a", "b", "c")


def call(tr, node, name, args, kwargs, bind) -> Val:
    """``bf16.hadd(a, b)``...: arguments convert to the parameter types."""
    if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
        return Val("0", BOTTOM)
    params, result, cname = BF16_FUNCTIONS[BF16_ALIASES.get(name, name)]
    api = f"cuda.bf16.{name}()"
    vals = bind(tr, node, api, args, kwargs, _PARAMS[:len(params)])
    codes = []
    for v, p in zip(vals, params):
        tr._numeric(node, v, api)
        if kind_of(v.type) == "c":
            raise tr.error(node, f"{api} takes real numbers (got {v.type})")
        codes.append(tr.cast(node, v, _scalar(p)))
    return Val(f"nu::bf16_ops::{cname}({', '.join(codes)})", _scalar(result))


def _scalar(name: str):
    if name == "bool":
        return bool_
    t = getattr(types, name)
    return t if isinstance(t, Scalar) else Scalar(name, name)
