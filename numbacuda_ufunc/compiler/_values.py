"""Typed C++ expressions and compile-time values (modules, functions, types, constants):
literals, constants and casts (the Ref kinds and Val themselves are defined in _refs.py)."""

from __future__ import annotations

import math

import numpy as np

from .._vector_types import VectorType
from ..types import NPDatetime, from_dtype
from ._datetime import cast as datetime_cast
from ._fp8 import cast as fp8_cast
from ._refs import (
    BuiltinRef,
    DtypeCallRef,
    LibFuncRef,
    LiteralRef,
    ModuleRef,
    PyFuncRef,
    Ref,
    StringRef,
    TypeRef,
    UnsupportedDtypeRef,
    UserModuleRef,
    Val,
)
from ._types import (
    WEAK_BOOL,
    WEAK_COMPLEX,
    WEAK_FLOAT,
    WEAK_INT,
    OptionalType,
    PromotionError,
    TupleType,
    Weak,
    ctype,
    kind_of,
    strong,
)

__all__ = [  # the Ref kinds and Val live in _refs.py; the translator takes them from here
    "BuiltinRef",
    "DtypeCallRef",
    "LibFuncRef",
    "LiteralRef",
    "ModuleRef",
    "PyFuncRef",
    "Ref",
    "StringRef",
    "TypeRef",
    "UnsupportedDtypeRef",
    "UserModuleRef",
    "Val",
    "bind_arguments",
    "cast_code",
    "const_val",
    "literal",
]


_INT_RANGES = {
    "int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
    "int64": (-2**63, 2**63 - 1), "uint8": (0, 2**8 - 1), "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1),
}


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "nu::nan64()"
    if math.isinf(x):
        return "nu::inf64()" if x > 0 else "(-nu::inf64())"
    text = repr(x)
    if "e" not in text and "." not in text:
        text += ".0"
    return f"({text})" if text.startswith("-") else text


def literal(value, t) -> str:
    """C++ text of the constant ``value`` converted to type ``t`` (NumPy's conversion)."""
    st = strong(t)
    k = kind_of(t)
    if k == "b":
        return "true" if bool(value) else "false"
    if k == "i":
        v = int(value)
        lo, hi = _INT_RANGES[st.name]
        if not lo <= v <= hi:
            raise PromotionError(f"Python integer {v} out of bounds for {st.name}")
        if st.name == "int64":
            return "(-9223372036854775807LL - 1)" if v == lo else f"{v}LL"
        if st.name == "uint64":
            return f"{v}ULL"
        return f"{ctype(st)}({v})"
    if k == "f":
        text = _float_text(float(value))
        return text if st.name == "float64" else f"{ctype(st)}({text})"
    if k == "c":
        z = complex(value)
        inner = "nu::f32" if st.name == "complex64" else ""
        re, im = _float_text(z.real), _float_text(z.imag)
        if inner:
            re, im = f"{inner}({re})", f"{inner}({im})"
        return f"{ctype(st)}{{{re}, {im}}}"
    raise PromotionError(f"cannot make a constant of type {t}")


def const_val(value):
    """A Val for a Python or NumPy constant; None when ``value`` is not a number/tuple."""
    if isinstance(value, (bool, np.bool_)) and not isinstance(value, np.generic):
        return Val(literal(value, WEAK_BOOL), WEAK_BOOL, value)
    if type(value) is int:
        if not -2**63 <= value < 2**64:
            raise PromotionError(f"integer constant {value} does not fit in 64 bits")
        if value >= 2**63:  # only usable with unsigned operands; stored with wrap-around
            return Val(f"nu::i64({value}ULL)", WEAK_INT, value)
        return Val(literal(value, WEAK_INT), WEAK_INT, value)
    if type(value) is float:
        return Val(literal(value, WEAK_FLOAT), WEAK_FLOAT, value)
    if type(value) is complex:
        return Val(literal(value, WEAK_COMPLEX), WEAK_COMPLEX, value)
    if isinstance(value, np.generic):
        try:
            t = from_dtype(value.dtype)
        except TypeError:
            return None
        return Val(literal(value.item(), t), t, value.item())
    if isinstance(value, tuple) and not value:  # (): an empty tuple value
        return Val("nu::tuple0{}", TupleType(()), ())
    if isinstance(value, tuple) and 2 <= len(value) <= 4:
        items = [const_val(v) for v in value]
        if any(i is None or isinstance(i.type, TupleType) for i in items):
            return None
        names = getattr(type(value), "_fields", None)  # a namedtuple: t.x reads a field
        tt = TupleType((i.type for i in items), names if isinstance(names, tuple) else None)
        return Val(f"{ctype(tt)}{{{', '.join(i.code for i in items)}}}", tt, tuple(value))
    return None


def cast_code(v: Val, t) -> str:
    """C++ text of ``v`` converted to type ``t`` (NumPy casting; a weak constant that does
    not fit an integer type is an error, as NumPy 2 raises OverflowError)."""
    if v.type == t:
        return v.code
    if isinstance(v.type, OptionalType) and isinstance(t, OptionalType):
        value = cast_code(Val("nu_o.value", v.type.type), t.type)
        return f"([&]() {{ auto nu_o = {v.code}; return {ctype(t)}{{{value}, nu_o.present}}; }}())"
    if isinstance(v.type, OptionalType):  # its value (zero when it is None)
        return cast_code(Val(f"({v.code}).value", v.type.type), t)
    if isinstance(t, OptionalType):
        if v.type is None:
            return f"{ctype(t)}{{}}"
        return f"{ctype(t)}{{{cast_code(v, t.type)}, true}}"
    if isinstance(t, TupleType):
        if not isinstance(v.type, TupleType) or len(v.type.items) != len(t.items):
            raise PromotionError(f"cannot convert {v.type} to {t}")
        parts = ", ".join(cast_code(Val(f"nu_t.v{i}", s), d)
                          for i, (s, d) in enumerate(zip(v.type.items, t.items)))
        return f"([&]() {{ auto nu_t = {v.code}; return {ctype(t)}{{{parts}}}; }}())"
    if isinstance(v.type, TupleType):
        raise PromotionError(f"cannot convert {v.type} to {t}")
    if hasattr(v.type, "nu_ctype") or hasattr(t, "nu_ctype"):  # FP8, bfloat16_raw
        try:
            return fp8_cast(v, t)
        except TypeError as exc:
            raise PromotionError(str(exc)) from None
    if isinstance(v.type, VectorType) or isinstance(t, VectorType):
        raise PromotionError(f"cannot convert {v.type} to {t}")
    if isinstance(t, NPDatetime) or isinstance(v.type, NPDatetime):
        return datetime_cast(v, t, ctype)
    if v.const is not None and isinstance(v.type, Weak) and not isinstance(v.const, tuple):
        if kind_of(t) == "i" and kind_of(v.type) == "i":
            return literal(v.const, t)  # raises when it does not fit, like NumPy
        if kind_of(t) == "c" or (kind_of(t) == "f" and kind_of(v.type) != "c"):
            return literal(v.const, t)
    if ctype(v.type) == ctype(t):
        return v.code
    return f"nu::cast<{ctype(t)}>({v.code})"


def bind_arguments(tr, node, api, args, kwargs, names, required=None):
    """Positional and keyword arguments of an intrinsic, in the order of ``names``."""
    required = len(names) if required is None else required
    if len(args) > len(names):
        raise tr.error(node, f"{api} takes {len(names)} arguments (got {len(args)})")
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names or k in bound:
            raise tr.error(node, f"{api} got an unexpected keyword argument '{k}'")
        bound[k] = v
    missing = [n for n in names[:required] if n not in bound]
    if missing:
        raise tr.error(node, f"{api} is missing the argument '{missing[0]}'")
    return [bound.get(n) for n in names]
