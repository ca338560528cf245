"""Enum and IntEnum members in translated code, as Numba types them.

A member (``Color.red``, ``Color["red"]``, a global bound to one) is a value of type
:class:`EnumMember`: its class and the type of the class's values (their NumPy type,
unified over the members). At run time it is its value.

* An ``IntEnum`` member is an int64 in arithmetic and comparisons (``x > Err.not_found``,
  ``int16(Shape.circle)``, stored in arrays), as Python and Numba convert it.
* A plain ``Enum`` member only compares: ``==``/``!=`` with members of its own class
  compare the values (members of one class never share a value); with anything else they
  are False/True, as in Python. Arithmetic, ordering or storing one is an error; ``.value``
  gives the value.
* ``is``/``is not`` between members: same class and value, as Python's identity.

A plain Enum whose values are tuples of numbers (``EARTH = (5.976e24, 6.37814e6)``) is
held as the member's index in its class instead (``_member_names_``: aliases share their
canonical member's), as the values need not be distinct numbers; ``.value`` gives the tuple.
Members whose values are anything else (strings...) are not supported.
"""

from __future__ import annotations

import ast
import enum

from ..types import Scalar
from ._types import PromotionError, strong, unify
from ._values import Ref, Val, const_val

__all__ = ["EnumClassRef", "EnumMember", "compare", "is_enum_class", "member",
           "member_type_of", "subscript"]


class EnumMember(Scalar):
    """The type of the members of one Enum class: numeric like its values' type (so the
    C++ value is the member's value), compared and hashed with the class."""

    def __init__(self, cls, value_type: Scalar, values_type=None):
        super().__init__(value_type.name, value_type.dtype)
        self.cls = cls
        self.value_type = value_type
        # The values' (tuple) type when members are held by index (value_type is int64).
        self.values_type = values_type
        self.by_index = values_type is not None
        self.int_enum = issubclass(cls, int)
        self.name = f"{'IntEnum' if self.int_enum else 'Enum'}Member({cls.__name__})"

    def _key(self):
        return (self.cls, self.value_type.name, self.by_index)


class EnumClassRef(Ref):
    """An Enum class used in translated code: its members are attributes or items."""

    def __init__(self, cls):
        self.cls = cls
        self.name = f"enum {cls.__name__}"

    def _key(self):
        return self.cls


def is_enum_class(value) -> bool:
    return isinstance(value, type) and issubclass(value, enum.Enum)


def member_type_of(cls) -> EnumMember:
    """The type of ``cls``'s members; TypeError when they cannot be typed (a kernel
    argument's message)."""
    t = None
    tuples = [isinstance(m.value, tuple) for m in cls]
    by_index = any(tuples) and not issubclass(cls, int)
    if by_index and not all(tuples):
        raise TypeError(f"the values of {cls.__name__} do not share a type (tuples and "
                        f"others): a heterogeneous Enum cannot be typed, as in Numba")
    for m in cls:
        v = None if isinstance(m.value, tuple) != by_index else const_val(m.value)
        if v is None:
            raise TypeError(f"members of {cls.__name__} have values that are not numbers "
                            f"({m.name} = {m.value!r}); only Enums of numbers (or of tuples "
                            f"of 2 to 4 numbers) can be used")
        try:
            t = strong(v.type) if t is None else unify(t, strong(v.type))
        except PromotionError:
            raise TypeError(f"the values of {cls.__name__} do not share a type") from None
    if t is None:
        raise TypeError(f"{cls.__name__} has no members")
    if by_index:
        return EnumMember(cls, strong(const_val(0).type), t)
    if issubclass(cls, int):
        t = strong(const_val(0).type)  # IntEnum: int64, as Numba types it
    return EnumMember(cls, t)


def index_of(m) -> int:
    """A member's index in its class (an alias gives its canonical member's)."""
    return type(m)._member_names_.index(m._name_)


def _member_type(tr, node, cls) -> EnumMember:
    try:
        return member_type_of(cls)
    except TypeError as exc:
        raise tr.error(node, str(exc)) from None


def member(tr, node, m) -> Val:
    """The Val of Enum member ``m``."""
    t = _member_type(tr, node, type(m))
    value = index_of(m) if t.by_index else int(m) if t.int_enum else m.value
    v = const_val(value)
    code = tr.cast(node, v, t.value_type)
    return Val(code, t, value)


def attribute(tr, node, base, attr):
    """``Color.red`` on a class; ``m.value`` / ``m.name`` on a member."""
    if isinstance(base.type, EnumClassRef):
        cls = base.type.cls
        m = cls.__members__.get(attr)
        if m is None:
            raise tr.error(node, f"{cls.__name__} has no member '{attr}'")
        return member(tr, node, m)
    if attr == "value" and base.type.by_index:  # the tuple of the member at that index
        members = [base.type.cls[n] for n in base.type.cls._member_names_]
        if base.const is not None:
            return const_val(members[base.const].value)
        tt = base.type.values_type
        idx = tr.temp("nu_member")
        code = tr.cast(node, const_val(members[-1].value), tt)
        for k in range(len(members) - 2, -1, -1):
            code = f"({idx} == {k} ? {tr.cast(node, const_val(members[k].value), tt)} : {code})"
        return Val(f"([&]() {{ const nu::i64 {idx} = {base.code}; return {code}; }}())", tt)
    if attr == "value":
        if base.const is not None:  # a known member: its own value, as Python gives it
            return const_val(base.const)
        return Val(base.code, base.type.value_type)
    if attr == "name":
        raise tr.error(node, "an enum member's .name is a string: strings are not supported")
    raise tr.error(node, f"attribute '.{attr}' is not supported on {base.type}")


def subscript(tr, node, base):
    """``Color["red"]``: a member by a constant name."""
    key = node.slice
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        raise tr.error(node, f"{base.type.cls.__name__}[...] needs a constant member name")
    m = base.type.cls.__members__.get(key.value)
    if m is None:
        raise tr.error(node, f"{base.type.cls.__name__} has no member '{key.value}'")
    return member(tr, node, m)


def plain(t) -> bool:
    """A plain Enum's member type (not numeric)."""
    return isinstance(t, EnumMember) and not t.int_enum


def compare(tr, node, op, a, b):
    """``a <op> b`` where an operand is an enum member and the comparison is not the numeric
    one (op is ``is``, ``is not``, or a plain Enum is involved): a Val, or None to compare
    numerically (IntEnum members and numbers)."""
    identity = op in ("is", "isnot")
    ea, eb = isinstance(a.type, EnumMember), isinstance(b.type, EnumMember)
    if not identity and not (plain(a.type) or plain(b.type)):
        return None
    if not identity and op not in ("eq", "ne"):
        cls = (a.type if plain(a.type) else b.type).cls
        raise tr.error(node, f"members of {cls.__name__} have no order (only == and != "
                             f"compare them)")
    if identity and not (ea or eb):
        return None  # None, True, False (the translator's _compare_identity)
    negate = op in ("ne", "isnot")
    if not (ea and eb) or a.type.cls is not b.type.cls:
        return const_val(negate)  # a member of another class, or a number: never equal
    if a.const is not None and b.const is not None:
        return const_val((a.const == b.const) != negate)
    t = a.type.value_type
    code = f"nu::eq({tr.cast(node, Val(a.code, t), t)}, {tr.cast(node, Val(b.code, t), t)})"
    return Val(f"(!{code})" if negate else code, const_val(True).type)
