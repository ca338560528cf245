"""Types the translator reasons with, and NumPy 2 promotion rules.

Besides the strong NumPy scalar types of :mod:`numbacuda_ufunc.types` (``int8`` ...), a
value may be *weak*: a Python ``bool``/``int``/``float``/``complex`` (a literal, a loop
index from ``range``, the result of ``int()`` or ``math.floor``...). NEP 50 lets a weak
value adopt the type of the strong operand it meets (``x * 2.0`` stays ``float32``).

Result types are not tabulated by hand: :func:`binary_result` asks NumPy itself, by
applying the operator to sample values of the operand types, so the translator agrees
with the Python function run on NumPy scalars (the oracle) by construction.
"""

from __future__ import annotations

import functools
import operator
import warnings
from typing import ClassVar

import numpy as np

from .._vector_types import VectorType
from ..types import (
    SCALARS,
    Array,
    CharSeq,
    CPointer,
    NPDatetime,
    Record,
    Scalar,
    bool_,
    complex128,
    float32,
    float64,
    from_dtype,
    int64,
)
from ._records import struct_name
from ._scalar_ctypes import CTYPES, scalar_ctype

__all__ = [
    "BOTTOM",
    "WEAK_BOOL",
    "WEAK_COMPLEX",
    "WEAK_FLOAT",
    "WEAK_INT",
    "Bottom",
    "FixedArray",
    "PromotionError",
    "TupleType",
    "Weak",
    "binary_result",
    "call_result",
    "complex_of",
    "ctype",
    "element_ctype",
    "float_of",
    "is_array",
    "is_complex",
    "is_float",
    "is_int_like",
    "is_numeric",
    "kind_of",
    "OptionalType",
    "sample_value",
    "strong",
    "typecode",
    "unary_result",
    "unify",
]


class Weak:
    """A Python scalar type: kind 'b' (bool), 'i' (int), 'f' (float) or 'c' (complex)."""

    _names: ClassVar[dict] = {"b": "bool", "i": "int", "f": "float", "c": "complex"}

    def __init__(self, kind: str):
        self.kind = kind
        self.name = f"python {self._names[kind]}"

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Weak) and other.kind == self.kind

    def __hash__(self):
        return hash(("weak", self.kind))


class TupleType:
    """A tuple of types (results of divmod/frexp, tuple-valued locals and returns).
    ``names``: the field names of a namedtuple (``t.x`` reads item ``x``), else None."""

    _nu_tuple = True  # types.Tuple / types.UniTuple recognise it (types.py)

    def __init__(self, items, names=None):
        self.items = tuple(items)
        self.names = tuple(names) if names is not None else None
        if self.names is None:
            self.name = "tuple(" + ", ".join(str(t) for t in self.items) + ")"
        else:
            self.name = "namedtuple(" + ", ".join(
                f"{n}: {t}" for n, t in zip(self.names, self.items)) + ")"

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return (isinstance(other, TupleType) and other.items == self.items
                and other.names == self.names)

    def __hash__(self):
        return hash(("tuple", self.items, self.names))

    # Numba's BaseTuple / UniTuple interface, read by @overload typing functions
    types = property(lambda self: self.items)
    count = property(lambda self: len(self.items))

    @property
    def dtype(self):
        """The item type of a tuple whose items share one (Numba's ``UniTuple.dtype``)."""
        if not self.items or any(t != self.items[0] for t in self.items):
            raise AttributeError(f"{self.name} has items of differing types: no dtype")
        return self.items[0]

    def __len__(self):
        return len(self.items)

    def __bool__(self):  # a type is never false, even the empty tuple's
        return True

    def __iter__(self):
        return iter(self.items)

    def __getitem__(self, i):
        return self.items[i]


class OptionalType:
    """A value or None (Numba's ``OptionalType``): what a device function returns when some
    of its paths return a value and others None (or fall off the end). Held as
    ``nu::optional<T>`` {value, present}; ``x is None`` reads ``present``, and any other
    use of ``x`` reads the value (a default-constructed zero when it is None)."""

    def __init__(self, type_):
        self.type = type_
        self.name = f"OptionalType({type_})"

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, OptionalType) and other.type == self.type

    def __hash__(self):
        return hash(("optional", self.type))


class FixedArray(Array):
    """A C-contiguous array whose shape is known at compile time: a ``cuda.local.array``,
    a static ``cuda.shared.array``, a frozen global NumPy array, or a copy of one.
    ``a.copy()`` needs the shape to give the copy storage of its own (per-thread local
    memory: kernels cannot allocate). The shape is part of the type's identity (a device
    function taking one is specialised per shape) but not of its name, so messages and
    ``inspect_types`` read as for any C-contiguous array."""

    def __init__(self, dtype, shape):
        super().__init__(dtype, len(shape), "C")
        self.shape = tuple(int(s) for s in shape)

    def _key(self):
        return (*super()._key(), self.shape)

    def token(self) -> str:  # in a specialisation's symbol hash (translate.py)
        return f"{self.name}{self.shape}"


class Bottom:
    """Not yet known (a local read before any assignment was typed, during inference)."""

    name = "unknown"

    def __repr__(self):
        return self.name


WEAK_BOOL, WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = Weak("b"), Weak("i"), Weak("f"), Weak("c")
BOTTOM = Bottom()

_CODES = {
    "bool": "b1", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
    "uint16": "u2", "uint32": "u4", "uint64": "u8", "float32": "f4", "float64": "f8",
    "complex64": "c8", "complex128": "c16", "float16": "f2", "bfloat16": "bf2",
}
MAX_TUPLE = 1024  # items of a tuple value in translated code
_WEAK_STRONG = {"b": bool_, "i": int64, "f": float64, "c": complex128}


class PromotionError(TypeError):
    """NumPy rejects this combination of operand types."""


def strong(t):
    """The NumPy type a weak type is stored as (Python int -> int64, ...)."""
    if isinstance(t, Weak):
        return _WEAK_STRONG[t.kind]
    if isinstance(t, TupleType):
        return TupleType((strong(x) for x in t.items), t.names)
    if isinstance(t, OptionalType):
        return OptionalType(strong(t.type))
    return t


def is_array(t) -> bool:
    return isinstance(t, Array)


def ctype(t) -> str:
    """The C++ type that holds values of ``t``."""
    if isinstance(t, Array):
        # The layout is a fact the translator may use, not part of the C++ type: every
        # view carries its byte strides (src/kernels/nu_array.cuh).
        return f"nu::array<{element_ctype(t.dtype)}, {t.ndim}>"
    if isinstance(t, Record):  # a record value is a reference to its bytes (_records.py)
        return element_ctype(t) + "*"
    if isinstance(t, CPointer):  # _pointers.py
        return (element_ctype(t.dtype) if t.dtype is not None else "void") + "*"
    if isinstance(t, TupleType):
        n = len(t.items)
        if n > MAX_TUPLE:
            raise PromotionError(f"tuples of {n} values are not supported (0 to {MAX_TUPLE})")
        if n == 0:
            return "nu::tuple0"
        # nu::tuple1..8 live in nu_scalar.cuh; longer ones are defined in the translation
        # unit that uses them (_tuples.long_tuple_definitions).
        prefix = "nu::tuple" if n <= 8 else "nu_tuple"
        return f"{prefix}{n}<" + ", ".join(ctype(x) for x in t.items) + ">"
    if t is None:
        return "void"
    if isinstance(t, OptionalType):
        return f"nu::optional<{ctype(t.type)}>"
    if isinstance(t, VectorType):  # CUDA's float4...: src/kernels/nu_vector.cuh
        return f"nu::{t.name}"
    s = strong(t)
    return scalar_ctype(getattr(s, "value_type", s))  # an Enum type: its values'


def element_ctype(t) -> str:
    """The C++ type of an array element of type ``t``: a record's struct, else ctype(t)."""
    if isinstance(t, Record):
        return struct_name(t)
    return ctype(t)


def typecode(t) -> str:
    """Short code used in generated symbol names (f8, i4, wi for a Python int...)."""
    if isinstance(t, Weak):
        return "w" + t.kind
    if isinstance(t, TupleType):
        return "t" + "".join(typecode(x) for x in t.items) + "e"
    if isinstance(t, Record):
        return "R" + element_ctype(t)[-8:]
    if isinstance(t, Array):
        return f"{typecode(t.dtype)}a{t.ndim}"
    if isinstance(t, VectorType):
        return f"v{_CODES[t.base_type.name]}x{t.num_elements}"
    if not isinstance(t, Scalar):  # a compile-time argument (dtype, function...)
        return "r" + "".join(c for c in t.name if c.isalnum())[:16]
    if isinstance(t, NPDatetime):
        return t.dtype.kind + t.unit
    if isinstance(t, CharSeq):
        return f"{t.kind}{t.count}"
    if hasattr(t, "value_type"):  # an Enum member (_enums.py): its class in the code
        return "E" + "".join(c for c in t.cls.__name__ if c.isalnum())[:12] + \
            _CODES[t.value_type.name]
    return _CODES[t.name]


def kind_of(t) -> str:
    """'b', 'i' (signed or unsigned), 'f' or 'c'; '' for tuples."""
    if isinstance(t, Weak):
        return t.kind
    if isinstance(t, Scalar):
        return "i" if t.kind in "iu" else t.kind
    return ""


def is_int_like(t) -> bool:
    return kind_of(t) in ("b", "i")


def is_float(t) -> bool:
    return kind_of(t) == "f"


def is_complex(t) -> bool:
    return kind_of(t) == "c"


def is_numeric(t) -> bool:
    return kind_of(t) in ("b", "i", "f", "c")


def sample_value(t):
    """A value of type ``t`` to probe NumPy's promotion with."""
    if isinstance(t, Weak):
        return {"b": True, "i": 1, "f": 1.0, "c": 1.0 + 0j}[t.kind]
    if isinstance(t, NPDatetime):
        return t.dtype.type(1, t.unit)
    return t.dtype.type(1)


def _type_of_value(v):
    # bool before int: bool is an int subclass.
    for py, weak in ((bool, WEAK_BOOL), (int, WEAK_INT), (float, WEAK_FLOAT),
                     (complex, WEAK_COMPLEX)):
        if type(v) is py:
            return weak
    if isinstance(v, np.generic):
        return from_dtype(v.dtype)
    if isinstance(v, tuple):
        return TupleType(_type_of_value(x) for x in v)
    raise PromotionError(f"unexpected result {type(v).__name__}")


def _probe(fn, *types):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return _type_of_value(fn(*(sample_value(t) for t in types)))
        except (TypeError, ValueError, OverflowError, ZeroDivisionError) as exc:
            raise PromotionError(str(exc)) from None


_BINARY_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "==": operator.eq, "!=": operator.ne,
}
_UNARY_OPS = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "not": operator.not_}


@functools.cache
def binary_result(op: str, a, b):
    """Type of ``a <op> b`` for operand types a, b; PromotionError when NumPy refuses."""
    for t in (a, b):
        if not is_numeric(t):
            raise PromotionError(f"unsupported operand type {t}")
    return _probe(_BINARY_OPS[op], a, b)


@functools.cache
def unary_result(op: str, a):
    if not is_numeric(a):
        raise PromotionError(f"unsupported operand type {a}")
    return _probe(_UNARY_OPS[op], a)


def call_result(fn, *types):
    """Type of ``fn(*samples)``: used for NumPy functions (np.sqrt, np.arctan2...)."""
    for t in types:
        if not is_numeric(t):
            raise PromotionError(f"unsupported argument type {t}")
    return _probe(fn, *types)


def float_of(*types):
    """Float type a math function computes in (Numba's rule): float32 stays float32, ints
    and bools go to float64, all-weak arguments stay a weak float. float16 and bfloat16
    stay themselves (computed in float32 and rounded back, as NumPy does); mixed with each
    other or with float32 they give float32."""
    if all(isinstance(t, Weak) for t in types):
        return WEAK_FLOAT
    if any(is_complex(t) for t in types):
        raise PromotionError("complex argument (use cmath for complex numbers)")
    strong_ts = [t for t in types if isinstance(t, Scalar)]
    names = {t.name for t in strong_ts}
    if len(names) == 1 and names <= {"float16", "bfloat16", "float32"}:
        return strong_ts[0]
    if names and names <= {"float16", "bfloat16", "float32"}:
        return float32
    return float64


def complex_of(*types):
    """Complex type a cmath function computes in: complex64 stays, else complex128."""
    if all(isinstance(t, Weak) for t in types):
        return WEAK_COMPLEX
    strong_ts = [t for t in types if isinstance(t, Scalar)]
    if strong_ts and all(t.name in ("complex64", "float32") for t in strong_ts):
        return from_dtype(np.complex64)
    return complex128


def unify(a, b):
    """The type that holds values of both a and b (a variable assigned both, two branches
    of a conditional, several returns). NumPy promotion, weak types adopting strong ones."""
    if a == b:
        return a
    if isinstance(a, Bottom):
        return b
    if isinstance(b, Bottom):
        return a
    if isinstance(a, OptionalType) or isinstance(b, OptionalType):
        inner = [t.type if isinstance(t, OptionalType) else t for t in (a, b) if t is not None]
        return OptionalType(unify(*inner) if len(inner) == 2 else inner[0])
    if isinstance(a, Array) or isinstance(b, Array):
        # A name bound to views of different layouts holds the general (strided) one.
        if (isinstance(a, Array) and isinstance(b, Array) and a.dtype == b.dtype
                and a.ndim == b.ndim):
            return Array(a.dtype, a.ndim, a.layout if a.layout == b.layout else "A")
        raise PromotionError(f"cannot unify {a} and {b}")
    if isinstance(a, TupleType) or isinstance(b, TupleType):
        if (isinstance(a, TupleType) and isinstance(b, TupleType)
                and len(a.items) == len(b.items)):
            names = a.names if a.names == b.names else None
            return TupleType((unify(x, y) for x, y in zip(a.items, b.items)), names)
        raise PromotionError(f"cannot unify {a} and {b}")
    if a is None or b is None:
        raise PromotionError(f"cannot unify {a or 'None'} and {b or 'None'}")
    if isinstance(a, Weak) and isinstance(b, Weak):
        order = "bifc"
        return a if order.index(a.kind) > order.index(b.kind) else b
    return binary_result("+", a, b) if not (a == bool_ and b == bool_) else bool_


assert all(t.name in CTYPES for t in SCALARS)
