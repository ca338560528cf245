"""Typed C++ expressions and compile-time values (modules, functions, types, constants)."""

from __future__ import annotations

import math

import numpy as np

from .._vector_types import VectorType
from ..types import NPDatetime, from_dtype
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

__all__ = [
    "BuiltinRef",
    "LibFuncRef",
    "LiteralRef",
    "ModuleRef",
    "PyFuncRef",
    "Ref",
    "StringRef",
    "TypeRef",
    "Val",
    "bind_arguments",
    "cast_code",
    "const_val",
    "literal",
]


class Ref:
    """A compile-time value that is not a number: it can be called or have attributes.
    Refs are equal when they denote the same thing, so a device function that takes one
    as an argument (a dtype, a function, ``cuda.atomic.add``) is specialised once per
    distinct value."""

    name = "?"

    def __repr__(self):
        return self.name

    def _key(self):
        return self.name

    def token(self) -> str:
        """Identifies the value in a generated symbol's hash (stable across processes
        where the value is)."""
        return self.name

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))


class ModuleRef(Ref):
    def __init__(self, module):
        self.module = module
        self.name = f"module {module.__name__}"


class UserModuleRef(Ref):
    """Any other module (the user's own): its attributes are read at compile time and
    classified like globals (``mymod.helper(x)``, ``mymod.SCALE``)."""

    def __init__(self, module):
        self.module = module
        self.name = f"module {module.__name__}"

    def _key(self):
        return self.module.__name__


class PyFuncRef(Ref):
    """A Python function (or cuda.jit device function) called from translated code."""

    def __init__(self, fn, signatures=(), owner=None):
        self.fn = fn
        self.signatures = tuple(signatures)  # a device function's declared signatures
        # The dispatcher (a @cuda.jit kernel...) the function came from: told of each
        # specialization a call makes (``_nu_device_call``), as Numba records it there.
        self.owner = owner
        self.name = f"function {fn.__name__}"

    def _key(self):
        return self.fn

    def token(self) -> str:
        fn = self.fn
        if fn.__closure__:  # its behaviour depends on the cells: this object only
            return f"{fn.__module__}.{fn.__qualname__}@{id(fn):x}"
        code = fn.__code__
        return f"{fn.__module__}.{fn.__qualname__}:{hash((code.co_code, code.co_consts))}"


class BuiltinRef(Ref):
    def __init__(self, fname):
        self.fname = fname
        self.name = f"builtin {fname}"


class LibFuncRef(Ref):
    """A function of math, cmath or numpy (``lib`` is the module name)."""

    def __init__(self, lib, fname):
        self.lib = lib
        self.fname = fname
        self.name = f"{lib}.{fname}"


class TypeRef(Ref):
    """A scalar type used as a cast: np.float32(x), float32(x)."""

    def __init__(self, scalar):
        self.scalar = scalar
        self.name = f"type {scalar.name}"


class DtypeCallRef(Ref):
    """``np.dtype``, called in translated code: ``np.dtype("int32")`` is that type."""

    name = "numpy.dtype"


class UnsupportedDtypeRef(Ref):
    """A NumPy dtype translated code has no type for (``np.dtype("O")``, strings): an
    array of it cannot be made (its variable cannot be typed, in Numba's words)."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.name = f"dtype {dtype!r}"


class LiteralRef(Ref):
    """An integer constant (or a tuple of them) passed where the callee needs a
    compile-time value (Numba's literal argument): ``helper(ary, 32)`` whose parameter
    sizes ``cuda.shared.array``. The callee is specialised per value and reads the
    parameter as that constant."""

    def __init__(self, value):
        self.value = value
        self.name = f"literal {value}"

    def _key(self):
        return ("literal", self.value)


class StringRef(Ref):
    """A string constant: a compile-time value, as Numba's string literals are in kernels.
    It can be compared (``mode == "fast"``, folded at compile time) and passed to device
    functions, which are specialised per value."""

    def __init__(self, value):
        self.value = value
        self.name = f"string {value!r}"

    def _key(self):
        return ("string", self.value)


class Val:
    """A C++ expression ``code`` of type ``type``; ``const`` is its Python value when known
    at compile time (literals, global constants)."""

    __slots__ = ("code", "const", "type")

    def __init__(self, code, type, const=None):
        self.code = code
        self.type = type
        self.const = const

    def __repr__(self):
        return f"Val({self.code!r}, {self.type})"


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
        from ._fp8 import cast

        try:
            return cast(v, t)
        except TypeError as exc:
            raise PromotionError(str(exc)) from None
    if isinstance(v.type, VectorType) or isinstance(t, VectorType):
        raise PromotionError(f"cannot convert {v.type} to {t}")
    if isinstance(t, NPDatetime) or isinstance(v.type, NPDatetime):
        from ._datetime import cast

        return cast(v, t, ctype)
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
