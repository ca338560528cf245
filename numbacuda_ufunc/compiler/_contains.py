"""``x in c`` and ``x not in c`` in translated code.

Python's meaning, item by item: ``x in c`` is true when some item of ``c`` equals ``x``
(``==``, with the translator's comparison rules: NumPy's promotion, so an int equals a
float of the same value, and NaN equals nothing). Kernels have no objects, so Python's
identity shortcut (``nan in (nan,)`` is true for one float object) does not exist: a NaN is
never found, as in Numba.

The containers:

* tuples of any kind: a tuple written out, a global or closure tuple (of any length), an
  argument, a local or a call's result; their items may differ in type (Numba takes only
  tuples of one item type). A string item never equals a number; a tuple item equals a
  tuple ``x`` of the same length whose items are equal, as in Python; None equals only
  None.
* arrays, of any ndim and layout (NumPy's ``x in a``: ``(a == x).any()``).
* ``range(...)``: arithmetic, without iterating (an int, bool, float or complex ``x``, as
  Python and Numba compare them).
* a string, with a string ``x``: known at compile time.

Enum members compare as ``==`` compares them (members of one class by value; a plain
Enum's member never equals a number).

Python evaluates ``x`` first, then the container (every item of a tuple written out),
then compares; so does the code emitted here.
"""

from __future__ import annotations

import ast

from ..types import Record, Scalar, bool_
from . import _enums as enums
from ._enums import EnumMember
from ._iteration import iterator_kind
from ._tuples import _global_tuple
from ._types import BOTTOM, Bottom, TupleType, Weak, ctype, is_array, is_complex, kind_of
from ._values import StringRef, Val, const_val

__all__ = ["chain", "compare"]


class _Items:
    """A container whose items are known one by one: ``setup`` (C++ declarations run in
    order), ``items`` (Vals that read them without side effects)."""

    def __init__(self, setup, items):
        self.setup = setup
        self.items = items


def compare(tr, e) -> Val:
    """``a in b`` / ``a not in b`` (``e`` an ast.Compare with one operator)."""
    negate = isinstance(e.ops[0], ast.NotIn)
    x = tr.expr(e.left)
    if isinstance(x.type, Bottom):
        return Val("0", BOTTOM)
    r = _contains(tr, e, x, e.comparators[0])
    if isinstance(r.type, Bottom) or not negate:
        return r
    if r.const is not None:
        return const_val(not r.const)
    return Val(f"(!{r.code})", r.type)


def chain(tr, e, cmpops) -> Val:
    """A chained comparison with ``in`` last (``lo < x in t``): Python's meaning, each
    operand evaluated once and the later ones only when the earlier comparisons hold.
    ``cmpops`` maps the ast classes of the other operators to (symbol, name)."""
    if any(isinstance(op, (ast.In, ast.NotIn)) for op in e.ops[:-1]):
        raise tr.error(e, "'in' or 'not in' inside a chained comparison is supported only "
                          "as its last comparison; join the comparisons with 'and'")
    if any(type(op) not in cmpops for op in e.ops[:-1]):
        raise tr.error(e, "'is' in a chained comparison with 'in' is not supported")
    operands = [e.left] + e.comparators[:-1]
    vals = [tr.expr(n) for n in operands]
    if any(isinstance(v.type, Bottom) for v in vals):
        return Val("0", BOTTOM)
    for n, v in zip(operands, vals):
        if not tr._numeric(n, v, "comparison"):
            return Val("0", BOTTOM)
    names = [tr.temp("nu_c") for _ in vals]
    parts = [f"const {ctype(vals[0].type)} {names[0]} = {vals[0].code};"]
    for k, op in enumerate(e.ops[:-1]):
        parts.append(f"const {ctype(vals[k + 1].type)} {names[k + 1]} = {vals[k + 1].code};")
        code, _ = tr._compare2(e, cmpops[type(op)], Val(names[k], vals[k].type),
                               Val(names[k + 1], vals[k + 1].type))
        parts.append(f"if (!{code}) return false;")
    last = Val(names[-1], vals[-1].type)
    r = _contains(tr, e, last, e.comparators[-1])
    if isinstance(r.type, Bottom):
        return r
    found = "true" if r.const is True else "false" if r.const is False else r.code
    neg = "!" if isinstance(e.ops[-1], ast.NotIn) else ""
    parts.append(f"return {neg}({found});")
    return Val(f"([&]() -> bool {{ {' '.join(parts)} }}())", bool_)


def _contains(tr, e, x, node) -> Val:
    if isinstance(x.type, StringRef):
        return _string_in(tr, e, x, node)
    if x.type is not None and not isinstance(x.type, (TupleType, EnumMember)):
        if not tr._numeric(e.left, x, "the left operand of 'in'"):
            return Val("0", BOTTOM)
    if iterator_kind(node, tr._resolve_global) == "range":
        return _range_in(tr, e, x, node)
    c = _container(tr, node)
    if isinstance(c, Val) and isinstance(c.type, Bottom):
        return Val("0", BOTTOM)
    if isinstance(c, Val) and is_array(c.type):
        return _array_in(tr, e, x, c)
    if isinstance(c, Val) and isinstance(c.type, StringRef):
        raise tr.error(e, f"'in <string>' requires a string as left operand (got "
                          f"{getattr(x.type, 'name', x.type)}), as Python raises TypeError")
    if not isinstance(c, _Items):
        raise tr.error(e, f"'in' needs a tuple, an array, a range() or a string on its right "
                          f"(got {getattr(c.type, 'name', c.type)})")
    return _items_in(tr, e, x, c)


def _container(tr, node):
    """The right operand of ``in``: an _Items for a tuple, else its Val."""
    if isinstance(node, ast.Tuple):  # (a, b, 1.5): every item evaluated, in order
        setup, items = [], []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                raise tr.error(elt, "unsupported construct 'starred expression'")
            v = tr.expr(elt)
            if isinstance(v.type, Bottom):
                return Val("0", BOTTOM)
            if v.const is None and v.code and not isinstance(v.type, StringRef):
                tmp = tr.temp("nu_in")
                setup.append(f"const {tr.promote(elt, lambda v=v: ctype(v.type))} {tmp} = "
                             f"{v.code};")
                v = Val(tmp, v.type)
            items.append(v)
        return _Items(setup, items)
    value = _global_tuple(tr, node)
    if value is not None:  # a global or closure tuple: its items are constants
        return _Items([], [tr.classify(node, f"{node.id}[{i}]", v) for i, v in enumerate(value)])
    v = tr.expr(node)
    if not isinstance(v.type, TupleType):
        return v
    if isinstance(v.const, tuple):
        return _Items([], [_part(v, i) for i in range(len(v.const))])
    tmp = tr.temp("nu_in")
    setup = [f"const {ctype(v.type)} {tmp} = {v.code};"]
    return _Items(setup, [Val(f"{tmp}.v{i}", t) for i, t in enumerate(v.type.items)])


def _equal(tr, e, x, item) -> Val:
    """``x == item`` as Python compares them (a Val, constant when known)."""
    if item.type is None or x.type is None:  # None equals only None
        return const_val(item.type is None and x.type is None)
    if isinstance(item.type, StringRef):  # a number or a tuple never equals a string
        return const_val(False)
    if is_array(item.type):
        raise tr.error(e, f"'in' over a tuple holding an array is not supported (Python "
                          f"compares the whole array: got {item.type})")
    if isinstance(x.type, TupleType) or isinstance(item.type, TupleType):
        if not (isinstance(x.type, TupleType) and isinstance(item.type, TupleType)) \
                or len(x.type.items) != len(item.type.items):
            return const_val(False)
        return _all([_equal(tr, e, _part(x, i), _part(item, i))
                     for i in range(len(x.type.items))])
    if isinstance(x.type, EnumMember) or isinstance(item.type, EnumMember):
        r = enums.compare(tr, e, "eq", x, item)  # members of one class by value
        if r is not None:
            return r
    if not tr._numeric(e, item, "an item compared by 'in'"):
        return Val("0", BOTTOM)
    if (isinstance(x.type, Weak) and isinstance(item.type, Weak)
            and x.const is not None and item.const is not None):
        return const_val(bool(x.const == item.const))
    code, _ = tr._compare2(e, ("==", "eq"), x, item)
    return Val(code, bool_)


def _part(v, i) -> Val:
    """Item ``i`` of the tuple ``v``: a constant where one can be made (a number; not a
    tuple of 1 or more than 4 items), else read from its code (free of side effects)."""
    if isinstance(v.const, tuple):
        if v.const[i] is None and v.type.items[i] is None:
            return Val("", None)
        c = const_val(v.const[i]) if v.const[i] is not None else None
        if c is not None:
            return c
    return Val(f"({v.code}).v{i}", v.type.items[i])


def _fold(parts, is_any: bool) -> Val:
    """``any(parts)`` or ``all(parts)`` of bool Vals, folded where items are known."""
    if any(p.const is is_any for p in parts):
        return const_val(is_any)
    live = [p for p in parts if p.const is None]
    if not live:
        return const_val(not is_any)
    return Val("(" + (" || " if is_any else " && ").join(p.code for p in live) + ")", bool_)


def _all(parts) -> Val:
    return _fold(parts, False)


def _any(parts) -> Val:
    return _fold(parts, True)


def _bind_left(tr, e, x):
    """``x`` read once: (setup lines, the Val that reads it)."""
    if x.const is not None or not x.code:
        return [], x
    tmp = tr.temp("nu_in")
    return [f"const {tr.promote(e, lambda: ctype(x.type))} {tmp} = {x.code};"], Val(tmp, x.type)


def _result(setup, found: Val) -> Val:
    if isinstance(found.type, Bottom):
        return found
    if not setup and found.const is not None:
        return const_val(bool(found.const))
    body = " ".join(setup)
    value = "true" if found.const is True else "false" if found.const is False else found.code
    return Val(f"([&]() -> bool {{ {body} return {value}; }}())", bool_)


def _items_in(tr, e, x, c: _Items) -> Val:
    # The container's own setup runs after x is read (x may have side effects too).
    setup, xv = _bind_left(tr, e, x)
    found = _any([_equal(tr, e, xv, item) for item in c.items])
    return _result(setup + c.setup, found)


def _array_in(tr, e, x, a: Val) -> Val:
    """NumPy's ``x in a``: some element equals ``x`` (every element, C order)."""
    if isinstance(a.type.dtype, Record) or isinstance(x.type, TupleType):
        raise tr.error(e, f"'in' over an array needs a number on its left and an array of "
                          f"numbers (got {getattr(x.type, 'name', x.type)} in {a.type})")
    setup, xv = _bind_left(tr, e, x)
    arr, k = tr.temp("nu_in"), tr.temp("nu_k")
    setup.append(f"const {ctype(a.type)} {arr} = {a.code};")
    eq = _equal(tr, e, xv, Val(f"nu::element_at({arr}, {k})", a.type.dtype))
    if isinstance(eq.type, Bottom):
        return eq
    if eq.const is not None:  # a constant x that no element type can equal
        cond = "true" if eq.const else "false"
    else:
        cond = eq.code
    setup.append(f"for (long long {k} = 0; {k} < {arr}.size(); ++{k}) "
                 f"{{ if ({cond}) return true; }}")
    return Val(f"([&]() -> bool {{ {' '.join(setup)} return false; }}())", bool_)


def _range_in(tr, e, x, call) -> Val:
    """``x in range(...)``: start <= x < stop (or the reverse for a negative step) and
    x - start a multiple of step; a float or complex x only when it is an integer value."""
    if call.keywords or not 1 <= len(call.args) <= 3:
        raise tr.error(call, f"range() takes 1 to 3 positional arguments (got "
                             f"{len(call.args)})")
    setup, xv = _bind_left(tr, e, x)
    if isinstance(x.type, TupleType) or x.type is None:
        args = [tr.expr(a) for a in call.args]  # evaluated all the same, as Python does
        return _result(setup + [f"(void)({a.code});" for a in args if a.code and
                                a.const is None], const_val(False))
    bounds = []
    for k, a in enumerate(call.args):
        v = tr.expr(a)
        if isinstance(v.type, Bottom):
            return Val("0", BOTTOM)
        if not tr._numeric(a, v, "range() argument") or kind_of(v.type) not in "biu":
            raise tr.error(a, f"range() arguments must be integers (got "
                              f"{getattr(v.type, 'name', v.type)})")
        if k == 2 and v.const == 0:
            raise tr.error(call, "range() arg 3 must not be zero")
        if v.const is not None:
            bounds.append(f"nu::i64({v.code})")
            continue
        tmp = tr.temp("nu_in")
        setup.append(f"const nu::i64 {tmp} = nu::i64({v.code});")
        bounds.append(tmp)
    if len(bounds) == 1:
        start, stop, step = "nu::i64(0)", bounds[0], "nu::i64(1)"
    else:
        start, stop = bounds[0], bounds[1]
        step = bounds[2] if len(bounds) == 3 else "nu::i64(1)"
    kind = kind_of(x.type)
    if kind not in ("b", "i", "f", "c"):
        raise tr.error(e, f"'in range()' needs a number on its left (got {x.type})")
    v = tr.temp("nu_in")
    if kind in "fc":  # an integer value in int64's range, then as an int64
        real = f"({xv.code}).re" if is_complex(x.type) else xv.code
        imag_ok = f"({xv.code}).im == 0 && " if is_complex(x.type) else ""
        setup.append(f"const double {v}_f = double({real});")
        setup.append(f"if (!({imag_ok}{v}_f == ::floor({v}_f) && {v}_f >= -9223372036854775808.0 "
                     f"&& {v}_f < 9223372036854775808.0)) return false;")
        setup.append(f"const nu::i64 {v} = nu::i64({v}_f);")
        signed = True
    else:
        setup.append(f"const auto {v} = {xv.code};")
        signed = not (isinstance(x.type, Scalar) and x.type.kind == "u")
    # An unsigned x above int64's range is in no range; otherwise compare as int64.
    if not signed:
        setup.append(f"if ({v} > nu::u64(9223372036854775807ULL)) return false;")
    s = tr.temp("nu_in")
    setup.append(f"const nu::i64 {s} = nu::i64({v});")
    setup.append(f"const nu::i64 nu_start = {start}, nu_stop = {stop}, nu_step = {step};")
    setup.append("if (nu_step == 0) return false;")  # Python raises ValueError
    setup.append(f"if (nu_step > 0 ? ({s} < nu_start || {s} >= nu_stop) : "
                 f"({s} > nu_start || {s} <= nu_stop)) return false;")
    # |x - start| and |step| as unsigned: exact even where the int64 difference overflows.
    setup.append(f"const nu::u64 nu_diff = nu_step > 0 ? nu::u64({s}) - nu::u64(nu_start) : "
                 f"nu::u64(nu_start) - nu::u64({s});")
    setup.append("const nu::u64 nu_mag = nu_step > 0 ? nu::u64(nu_step) : "
                 "nu::u64(0) - nu::u64(nu_step);")
    return Val(f"([&]() -> bool {{ {' '.join(setup)} return nu_diff % nu_mag == 0; }}())",
               bool_)


def _string_in(tr, e, x, node) -> Val:
    """``"ab" in "xabc"`` (both strings, known at compile time) or a string in a tuple."""
    c = _container(tr, node)
    if isinstance(c, Val) and isinstance(c.type, StringRef):
        return const_val(x.type.value in c.type.value)
    if isinstance(c, _Items):  # a string equals only an equal string
        found = any(isinstance(i.type, StringRef) and i.type.value == x.type.value
                    for i in c.items)
        return _result(c.setup, const_val(found))
    if isinstance(c, Val) and isinstance(c.type, Bottom):
        return c
    raise tr.error(e, f"'in' with a string on its left needs a string or a tuple on its "
                      f"right (got {getattr(c.type, 'name', c.type)})")
