"""Numba's type classes (``types.Integer``, ``types.Float``, ``types.UniTuple``...) for the
``isinstance`` checks of ``@overload`` typing functions (:mod:`numbacuda_ufunc.cuda.extending`).

Our types stay what they are (``types.int32`` is one :class:`~numbacuda_ufunc.types.Scalar`);
these classes answer ``isinstance(types.int32, types.Integer)`` by looking at the object's
kind, as Numba's class hierarchy would. Literal types (``IntegerLiteral(3)``) are real
instances: the translator gives them to typing functions for integer constants.
"""

from __future__ import annotations

from .types import Record, Scalar, Type, int64

__all__ = ["Boolean", "BooleanLiteral", "Complex", "Float", "Integer", "IntegerLiteral",
           "Literal", "Number", "Omitted", "Tuple", "UniTuple", "BaseTuple"]


class _KindClass(type):
    """``isinstance(obj, cls)``: a real instance, or a scalar type of one of ``cls._kinds``."""

    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        kinds = cls.__dict__.get("_kinds")
        if kinds is None:
            return False
        return isinstance(obj, Scalar) and not isinstance(obj, Record) and obj.kind in kinds


class Number(Type, metaclass=_KindClass):
    """Numba's ``types.Number``: every integer, float and complex type."""

    _kinds = "iufc"


class Integer(Number):
    """Numba's ``types.Integer``: ``int8`` ... ``uint64``."""

    _kinds = "iu"


class Float(Number):
    """Numba's ``types.Float``: ``float16``, ``float32``, ``float64`` (and ``bfloat16``)."""

    _kinds = "f"


class Complex(Number):
    """Numba's ``types.Complex``: ``complex64``, ``complex128``."""

    _kinds = "c"


class Boolean(Type, metaclass=_KindClass):
    """Numba's ``types.Boolean``: ``boolean``."""

    _kinds = "b"


class Literal(Type, metaclass=_KindClass):
    """A compile-time constant's type (Numba's ``types.Literal``); ``literal_value`` is the
    constant, ``literal_type`` the type it has when not taken literally."""

    _kinds = None

    def __init__(self, value):
        self.literal_value = value
        self.name = f"Literal[{type(value).__name__}]({value!r})"

    def _key(self):
        return (type(self.literal_value), self.literal_value)


class IntegerLiteral(Literal, Integer):
    """The type of an integer constant, ``Literal[int](3)``: an :class:`Integer` too."""

    _kinds = None

    def __init__(self, value):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"IntegerLiteral(): value must be an int (got {value!r})")
        super().__init__(value)

    @property
    def literal_type(self):
        return int64

    # as the integer type it stands for (typing functions read these of any Integer)
    kind = property(lambda self: "i")
    bitwidth = property(lambda self: 64)
    signed = property(lambda self: True)
    dtype = property(lambda self: int64.dtype)


class BooleanLiteral(Literal, Boolean):
    """The type of ``True`` or ``False`` as a constant, ``Literal[bool](True)``."""

    _kinds = None

    def __init__(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"BooleanLiteral(): value must be a bool (got {value!r})")
        super().__init__(value)

    @property
    def literal_type(self):
        from .types import boolean
        return boolean


class _TupleClass(_KindClass):
    """Tuples of the translator: any object whose class sets ``_nu_tuple``."""

    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        if not getattr(type(obj), "_nu_tuple", False):
            return False
        items = tuple(obj.items)
        uniform = bool(items) and all(t == items[0] for t in items)
        return cls._uniform is None or cls._uniform == uniform


class BaseTuple(Type, metaclass=_TupleClass):
    """Any tuple type (Numba's ``types.BaseTuple``)."""

    _uniform = None


class Tuple(BaseTuple):
    """A tuple of differing item types (Numba's ``types.Tuple``; one of equal items is a
    :class:`UniTuple`, as in Numba)."""

    _uniform = False


class UniTuple(BaseTuple):
    """A tuple of ``count`` items of type ``dtype`` (Numba's ``types.UniTuple``)."""

    _uniform = True


class Omitted(Type):
    """An argument left to its default value (Numba's ``types.Omitted``); ``value`` is the
    default."""

    def __init__(self, value):
        self.value = value
        self.name = f"omitted(default={value!r})"

    def _key(self):
        return repr(self.value)
