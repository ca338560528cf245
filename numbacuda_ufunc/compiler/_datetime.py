"""datetime64[unit] and timedelta64[unit] values in translated code.

A value is held as the int64 count of its unit (NaT: the smallest int64); the arithmetic
is src/kernels/nu_datetime.cuh, which follows NumPy's loops. Supported, as Numba supports
them: ``datetime - datetime -> timedelta``, ``datetime +- timedelta -> datetime``,
``timedelta +- timedelta``, ``timedelta * int/float``, ``timedelta / int``,
``timedelta / timedelta -> float64``, unary ``-`` on a timedelta, and the six comparisons
between values of the same kind (a timedelta also against an integer). NaT propagates
and compares unequal to everything, as in NumPy.

Units: operands of different units are converted to the finer one, as NumPy does, when
both are linear (W, D, h, m, s, ms, us, ns, ps, fs, as) or both are calendar units (Y, M).
Mixing the two groups (``datetime64[Y] - datetime64[D]``) needs NumPy's calendar
arithmetic, which kernels do not do: a ``CompileError`` names both units.
"""

from __future__ import annotations

from ..types import NPDatetime, NPTimedelta, Scalar, float64, int64
from ._refs import Val
from ._types import PromotionError, Weak, kind_of

__all__ = ["binop", "cast", "compare", "involved", "negate"]

# Size of each linear unit in attoseconds; the calendar units in months.
_LINEAR = {"W": 7 * 86400 * 10**18, "D": 86400 * 10**18, "h": 3600 * 10**18,
           "m": 60 * 10**18, "s": 10**18, "ms": 10**15, "us": 10**12, "ns": 10**9,
           "ps": 10**6, "fs": 10**3, "as": 1}
_CALENDAR = {"Y": 12, "M": 1}
_COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def involved(*types) -> bool:
    return any(isinstance(t, NPDatetime) for t in types)


def _group(unit):
    return _LINEAR if unit in _LINEAR else _CALENDAR


def common_unit(a: str, b: str) -> str:
    """The finer of two units (NumPy's common unit); PromotionError across the linear and
    calendar groups."""
    if _group(a) is not _group(b):
        raise PromotionError(f"cannot combine units [{a}] and [{b}]: converting between "
                             f"years/months and days or finer units needs calendar "
                             f"arithmetic, which kernels do not do (convert the operands to "
                             f"one unit before the kernel)")
    sizes = _group(a)
    return a if sizes[a] <= sizes[b] else b


def _scaled(code: str, unit: str, to: str) -> str:
    factor = _group(unit)[unit] // _group(to)[to]
    return code if factor == 1 else f"nu::dt::scale({code}, {factor}LL)"


def _is_int(t) -> bool:
    return (isinstance(t, (Scalar, Weak)) and not isinstance(t, NPDatetime)
            and kind_of(t) in ("i", "b"))


def _is_float(t) -> bool:
    return isinstance(t, (Scalar, Weak)) and not isinstance(t, NPDatetime) and kind_of(t) == "f"


def _operand(tr, node, v: Val, unit: str) -> str:
    """``v`` as an int64 count of ``unit``: a datetime/timedelta is scaled, an integer
    is a count of ``unit`` already (NumPy reads it so)."""
    if isinstance(v.type, NPDatetime):
        return _scaled(f"(long long)({v.code})", v.type.unit, unit)
    return f"(long long)({tr.cast(node, v, int64)})"


def _refuse(tr, node, op, a, b):
    return tr.error(node, f"operator {op} is not supported between {a.type} and {b.type} "
                          f"(datetime64/timedelta64 support: datetime - datetime, datetime +- "
                          f"timedelta, timedelta +- timedelta, timedelta * number, "
                          f"timedelta / int, timedelta / timedelta, comparisons)")


def _unit(tr, node, *types) -> str:
    units = [t.unit for t in types if isinstance(t, NPDatetime)]
    unit = units[0]
    for u in units[1:]:
        try:
            unit = common_unit(unit, u)
        except PromotionError as exc:
            raise tr.error(node, str(exc)) from None
    return unit


def binop(tr, node, op, a: Val, b: Val) -> Val:
    ta, tb = a.type, b.type
    dt_a, dt_b = isinstance(ta, NPDatetime), isinstance(tb, NPDatetime)
    kind_a = ta.dtype.kind if dt_a else ""
    kind_b = tb.dtype.kind if dt_b else ""
    if op in ("+", "-"):
        if op == "-" and kind_a == "M" and kind_b == "M":
            unit = _unit(tr, node, ta, tb)
            return Val(f"nu::dt::sub({_operand(tr, node, a, unit)}, "
                       f"{_operand(tr, node, b, unit)})", NPTimedelta(unit))
        kinds = {kind_a or ("i" if _is_int(ta) else "?"), kind_b or ("i" if _is_int(tb) else "?")}
        if "?" in kinds or kinds == {"M"} or (op == "-" and kind_a != "M" and kind_b == "M"):
            raise _refuse(tr, node, op, a, b)
        unit = _unit(tr, node, ta, tb)
        result = NPDatetime(unit) if "M" in kinds else NPTimedelta(unit)
        fn = "add" if op == "+" else "sub"
        return Val(f"nu::dt::{fn}({_operand(tr, node, a, unit)}, "
                   f"{_operand(tr, node, b, unit)})", result)
    if op == "*" and (kind_a == "m") != (kind_b == "m") and not (kind_a == "M" or kind_b == "M"):
        td, k = (a, b) if kind_a == "m" else (b, a)
        if _is_int(k.type):
            return Val(f"nu::dt::mul_int((long long)({td.code}), "
                       f"{_operand(tr, node, k, td.type.unit)})", td.type)
        if _is_float(k.type):
            return Val(f"nu::dt::mul_float((long long)({td.code}), "
                       f"{tr.cast(node, k, float64)})", td.type)
    if op == "/" and kind_a == "m":
        if kind_b == "m":
            unit = _unit(tr, node, ta, tb)
            return Val(f"nu::dt::div({_operand(tr, node, a, unit)}, "
                       f"{_operand(tr, node, b, unit)})", float64)
        if _is_int(tb):
            return Val(f"nu::dt::div_int((long long)({a.code}), "
                       f"{_operand(tr, node, b, ta.unit)})", ta)
    raise _refuse(tr, node, op, a, b)


def compare(tr, node, sym, a: Val, b: Val) -> str:
    """C++ of ``a <sym> b`` (a bool) where one operand is a datetime or timedelta."""
    ta, tb = a.type, b.type
    kinds = {t.dtype.kind if isinstance(t, NPDatetime) else ("i" if _is_int(t) else "?")
             for t in (ta, tb)}
    if kinds not in ({"M"}, {"m"}, {"m", "i"}):
        raise tr.error(node, f"cannot compare {ta} with {tb} (datetimes compare with "
                             f"datetimes, timedeltas with timedeltas and integers)")
    unit = _unit(tr, node, ta, tb)
    return (f"nu::dt::{_COMPARE[sym]}({_operand(tr, node, a, unit)}, "
            f"{_operand(tr, node, b, unit)})")


def negate(tr, node, op, v: Val) -> Val:
    if op == "-" and v.type.dtype.kind == "m":
        return Val(f"nu::dt::neg((long long)({v.code}))", v.type)
    if op == "+" and v.type.dtype.kind == "m":
        return v
    raise tr.error(node, f"unary {op} is not supported on {v.type}")


def cast(v: Val, t, ctype_of) -> str:
    """``v`` converted to ``t`` where either is a datetime/timedelta type (an assignment,
    a return, an argument): the same kind to an equal or finer unit, integers to and from
    the raw count. Anything else is a PromotionError."""
    src = v.type
    if isinstance(t, NPDatetime) and isinstance(src, NPDatetime):
        if src.dtype.kind != t.dtype.kind:
            raise PromotionError(f"cannot convert {src} to {t}")
        to = common_unit(src.unit, t.unit)
        if to != t.unit:
            raise PromotionError(f"cannot convert {src} to {t} (a coarser unit; NumPy would "
                                 f"round, convert before the kernel)")
        return _scaled(f"(long long)({v.code})", src.unit, t.unit)
    if isinstance(t, NPDatetime) and _is_int(src):
        return f"(long long)({v.code})"
    if isinstance(src, NPDatetime) and _is_int(t):
        return f"nu::cast<{ctype_of(t)}>((long long)({v.code}))"
    raise PromotionError(f"cannot convert {getattr(src, 'name', src)} to "
                         f"{getattr(t, 'name', t)}")
