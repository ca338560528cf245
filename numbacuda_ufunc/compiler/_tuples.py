"""Tuples in translated code: ``for x in t`` and ``literal_unroll``, and ``f(*t)``.

Two ways to run a loop over a tuple:

* Items that unify (numbers, or tuples of numbers, as for any local assigned several
  types) run through one variable of the unified type: the items are picked by a
  ``switch`` inside an ordinary C++ loop that NVRTC and g++ unroll.
* ``for x in literal_unroll(t)``, and a plain ``for x in t`` whose items do not unify
  (arrays of different ndim, arrays beside numbers), unroll as Numba's ``literal_unroll``
  does: the body is typed and emitted once per item, with the loop variable of that
  item's own type. ``break`` and ``continue`` become ``goto``s to labels after the copy
  of the body and after the whole loop, so they and the loop's ``else`` keep Python's
  meaning.
"""

from __future__ import annotations

import ast
import re

from ._exceptions import out_of_range
from ._types import (
    BOTTOM,
    Bottom,
    PromotionError,
    TupleType,
    ctype,
    is_array,
    is_int_like,
    unify,
)
from ._values import PyFuncRef, Ref, Val, const_val

__all__ = ["NamedTupleRef", "dynamic_index", "for_each_item", "is_namedtuple_class",
           "literal_unroll", "long_tuple_definitions", "loop_over_value", "make_namedtuple", "starred_items",
           "tuple_loop"]

_LONG_TUPLE = re.compile(r"\bnu_tuple(\d+)<")


def long_tuple_definitions(text: str) -> str:
    """The struct templates of the tuples of more than 8 items ``text`` uses
    (``nu_tuple34<...>``), with members v0, v1... as nu::tuple1..8 have; guarded so that
    units batching several functions define each once."""
    out = []
    for n in sorted({int(m) for m in _LONG_TUPLE.findall(text)}):
        params = ", ".join(f"class T{i}" for i in range(n))
        members = " ".join(f"T{i} v{i};" for i in range(n))
        out.append(f"#ifndef NU_DEFINED_nu_tuple{n}\n#define NU_DEFINED_nu_tuple{n}\n"
                   f"template <{params}> struct nu_tuple{n} {{ {members} }};\n#endif")
    return "\n".join(out) + ("\n\n" if out else "")


def literal_unroll(container):
    """Numba's ``literal_unroll``: in Python, the container itself; in translated code the
    loop body is typed and emitted once per item (see the module docstring)."""
    return container


class Unrolled:
    """The loop context of an unrolled loop: where ``break`` and ``continue`` jump."""

    def __init__(self, brk, cont):
        self.brk, self.cont = brk, cont
        self.used_brk = self.used_cont = False

    def jump(self, is_break) -> str:
        if is_break:
            self.used_brk = True
            return f"goto {self.brk};"
        self.used_cont = True
        return f"goto {self.cont};"


def _is_literal_unroll(fn) -> bool:
    if fn is literal_unroll:
        return True
    # numba.literal_unroll, when Numba code runs here unchanged
    return (getattr(fn, "__name__", None) == "literal_unroll"
            and str(getattr(fn, "__module__", "")).partition(".")[0] == "numba")


def _literal_unroll_arg(tr, it):
    """The argument node of ``literal_unroll(x)``, or None when ``it`` is another call."""
    if not isinstance(it, ast.Call) or it.keywords or len(it.args) != 1:
        return None
    if isinstance(it.args[0], ast.Starred):
        return None
    f = tr.expr(it.func)
    if isinstance(f, Val) and isinstance(f.type, PyFuncRef) and _is_literal_unroll(f.type.fn):
        return it.args[0]
    return None


def _global_tuple(tr, node):
    """The Python tuple a global or closure name holds, or None."""
    if not isinstance(node, ast.Name) or node.id in tr.locals:
        return None
    fn = tr.fn
    code = fn.__code__
    if node.id in code.co_freevars:
        try:
            value = fn.__closure__[code.co_freevars.index(node.id)].cell_contents
        except ValueError:
            return None
    else:
        value = fn.__globals__.get(node.id)
    return value if isinstance(value, tuple) else None


def _items(tr, node, what):
    """The items of the tuple ``node`` evaluates to, each a Val read without side effects
    (Python evaluates the iterable once, before the first iteration); None while a later
    inference pass has yet to type it."""
    if isinstance(node, ast.Tuple):  # (a, b, 1.5): each item, arrays included
        out = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                raise tr.error(e, "unsupported construct 'starred expression'")
            v = tr.expr(e)
            if isinstance(v.type, Bottom):
                return None
            if v.type is None or not (is_array(v.type) or isinstance(v.type, TupleType)
                                      or tr._numeric(e, v, f"{what} item")):
                raise tr.error(e, f"{what}: items must be numbers, arrays or tuples")
            if v.const is None:
                tmp = tr.temp("nu_item")
                tr.emit(f"const {ctype(v.type)} {tmp} = {v.code};")
                v = Val(tmp, v.type)
            out.append(v)
        return out
    value = _global_tuple(tr, node)
    if value is not None:  # global/closure: each item a constant or a frozen array
        return [tr.classify(node, f"{node.id}[{i}]", x) for i, x in enumerate(value)]
    seq = tr.expr(node)
    if isinstance(seq.type, Bottom):
        return None
    if not isinstance(seq.type, TupleType):
        return seq  # not a tuple: the caller decides
    if isinstance(seq.const, tuple):
        return [const_val(c) for c in seq.const]
    tmp = tr.temp("nu_tup")
    tr.emit(f"const {ctype(seq.type)} {tmp} = {seq.code};")
    return [Val(f"{tmp}.v{i}", t) for i, t in enumerate(seq.type.items)]


def tuple_loop(tr, s):
    """Translate ``s`` when it loops over a tuple (literal_unroll included) and return
    True; otherwise return the iterable's Val (an array...) for the caller, or None when
    it is a call other than literal_unroll (range...)."""
    arg = _literal_unroll_arg(tr, s.iter)
    forced = arg is not None
    if arg is None and isinstance(s.iter, ast.Call):
        return None
    items = _items(tr, arg if forced else s.iter,
                   "literal_unroll()" if forced else "for loop over a tuple")
    if isinstance(items, Val):
        if forced:
            raise tr.error(s.iter, f"literal_unroll() needs a tuple (got "
                                   f"{getattr(items.type, 'name', items.type)})")
        return items
    if items is None:  # typed on a later inference pass
        return True
    if forced or not _unifies(items):
        _unroll(tr, s, items)
        return True
    if s.orelse:
        raise tr.error(s, "unsupported construct 'for ... else' (literal_unroll() loops "
                          "may have an else clause)")
    tt = TupleType(v.type for v in items)
    code = f"{ctype(tt)}{{{', '.join(v.code for v in items)}}}"
    tr.loops.append(None)
    try:
        tr.emit("{")
        tr.depth += 1
        for_each_item(tr, s, Val(code, tt))
        tr.depth -= 1
        tr.emit("}")
    finally:
        tr.loops.pop()
    return True


def loop_over_value(tr, s, seq: Val):
    """``for x in f(...)`` where the call gives a tuple value: its items, through one
    variable (they must unify; a tuple of mixed items needs literal_unroll of a tuple
    written out or held in a variable)."""
    items = [Val(f"({seq.code}).v{i}", t) for i, t in enumerate(seq.type.items)]
    if not _unifies(items):
        raise tr.error(s, f"a for loop over a call's result needs items of one type (got "
                          f"{seq.type}); assign the tuple to a variable and use "
                          f"literal_unroll()")
    tr.emit("{")
    tr.depth += 1
    for_each_item(tr, s, seq)
    tr.depth -= 1
    tr.emit("}")


def _unifies(items) -> bool:
    if any(is_array(v.type) for v in items):
        return False
    t = items[0].type if items else BOTTOM
    try:
        for v in items[1:]:
            t = unify(t, v.type)
        ctype(TupleType(v.type for v in items))
    except PromotionError:
        return False
    return True


def _unroll(tr, s, items):
    """The body once per item (see the module docstring)."""
    names = {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
    stored_in_body = {n.id for st in s.body for n in ast.walk(st)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    # A loop variable also used outside the loop holds the last item afterwards, as in
    # Python: that needs one type for all items.
    outside = names & _names_outside(tr.node, s)
    ctx = Unrolled(tr.temp("nu_break"), None)
    saved = {n: tr.aliases.get(n) for n in names}
    tr.loops.append(ctx)
    path = tr.unroll_path
    try:
        for i, item in enumerate(items):
            ctx.cont, ctx.used_cont = tr.temp("nu_next"), False
            tr.unroll_path = path + ((id(s), i),)
            slot = tr.unroll_slots.setdefault(tr.unroll_path, len(tr.unroll_slots))
            tr.emit("{")
            tr.depth += 1
            _bind(tr, s.target, item, stored_in_body, outside, slot)
            tr.block(s.body)
            tr.depth -= 1
            tr.emit("}")
            if ctx.used_cont:
                tr.emit(f"{ctx.cont}:;")
    finally:
        tr.unroll_path = path
        tr.loops.pop()
        for n, a in saved.items():
            if a is None:
                tr.aliases.pop(n, None)
            else:
                tr.aliases[n] = a
    if s.orelse:
        tr.block(s.orelse)
    if ctx.used_brk:
        tr.emit(f"{ctx.brk}:;")


def _names_outside(fn_node, loop):
    """Names read outside ``loop`` where no other loop over them rebinds them first."""
    shielded = {}  # id(Name node) -> names that a loop around it binds
    for f in ast.walk(fn_node):
        if isinstance(f, ast.For):
            bound = {n.id for n in ast.walk(f.target) if isinstance(n, ast.Name)}
            for st in f.body:
                for n in ast.walk(st):
                    shielded.setdefault(id(n), set()).update(bound)
    inside = {id(n) for st in loop.body + [loop.target] for n in ast.walk(st)}
    return {n.id for n in ast.walk(fn_node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and id(n) not in inside and n.id not in shielded.get(id(n), ())}


def _bind(tr, target, item, stored_in_body, outside, slot):
    if isinstance(target, (ast.Tuple, ast.List)):
        t = item.type
        if not isinstance(t, TupleType) or len(t.items) != len(target.elts):
            raise tr.error(target, f"cannot unpack {getattr(t, 'name', t)} into "
                                   f"{len(target.elts)} names")
        consts = item.const if isinstance(item.const, tuple) else None
        for i, (e, it) in enumerate(zip(target.elts, t.items)):
            sub = const_val(consts[i]) if consts is not None else \
                Val(f"({item.code}).v{i}", it)
            _bind(tr, e, sub, stored_in_body, outside, slot)
        return
    if not isinstance(target, ast.Name):
        raise tr.error(target, "the target of a loop over a tuple must be a name or a tuple "
                               "of names")
    name = target.id
    if name in outside:
        tr.aliases.pop(name, None)
        tr.assign_name(target, name, item)
        return
    # One hidden local per item and nesting: typed like any local (it widens when the
    # body rebinds it), so each item keeps its own type.
    hidden = f"__nu_u{slot}_{name}"
    tr.aliases.pop(name, None)
    tr.assign_name(target, hidden, item)
    tr.aliases[name] = (hidden, item.const if name not in stored_in_body else None)


def for_each_item(tr, s, seq):
    """``for <target> in <tuple>`` with ``seq`` the tuple's Val, its items unifying."""
    items = seq.type.items
    if not items:
        return
    t = items[0]
    for it in items[1:]:
        t = tr.promote(s, lambda t=t, it=it: unify(t, it))
    tup, k, elem = tr.temp(), tr.temp("nu_k"), tr.temp("nu_e")
    tr.emit(f"const {ctype(seq.type)} {tup} = {seq.code};")
    tr.emit(f"for (int {k} = 0; {k} < {len(items)}; ++{k}) {{")
    tr.depth += 1
    tr.emit(f"{ctype(t)} {elem}{{}};")
    cases = " ".join(f"case {i}: {elem} = {tr.cast(s, Val(f'{tup}.v{i}', it), t)}; break;"
                     for i, it in enumerate(items))
    tr.emit(f"switch ({k}) {{ {cases} }}")
    tr.assign_target(s.target, Val(elem, t))
    tr.block(s.body)
    tr.depth -= 1
    tr.emit("}")


def dynamic_index(tr, node, base, idx):
    """``t[i]`` with ``i`` known only at run time (Numba's UniTuple indexing; the lifted
    ``for`` loops of functions without source): items that unify, picked by a switch.
    Python's negative indices count from the end; an index out of range raises Python's
    IndexError in a kernel (_exceptions.py) and reads the zero of the item type in a ufunc,
    which cannot raise."""
    if not tr._numeric(node.slice, idx, "tuple index") or not is_int_like(idx.type):
        raise tr.error(node, f"tuple indices must be integers (got {idx.type})")
    items = base.type.items
    try:
        t = items[0]
        for it in items[1:]:
            t = unify(t, it)
        ct = ctype(t)
    except PromotionError:
        raise tr.error(node, f"tuples whose items do not share one type ({base.type}) can "
                             f"be indexed only with integer constants; loop over them with "
                             f"literal_unroll() in a function with source") from None
    tup, k = tr.temp("nu_tup"), tr.temp("nu_k")
    n = len(items)
    cases = " ".join(f"case {i}: return {tr.cast(node, Val(f'{tup}.v{i}', it), t)};"
                     for i, it in enumerate(items))
    code = (f"([&]() -> {ct} {{ const {ctype(base.type)} {tup} = {base.code}; "
            f"nu::i64 {k} = nu::i64({idx.code}); if ({k} < 0) {k} += {n}; "
            f"switch ({k}) {{ {cases} }} {out_of_range(tr, node)} return {ct}{{}}; }}())")
    return Val(code, t)


def starred_items(tr, node, v):
    """The items of ``*v`` in a call, as Vals; ``v`` must be a tuple constant or a tuple
    held in a variable (its code is then read once per item without side effects)."""
    if isinstance(v.type, Bottom):
        return [Val("0", BOTTOM)]
    if not isinstance(v.type, TupleType):
        raise tr.error(node, f"a starred argument must be a tuple (got "
                             f"{getattr(v.type, 'name', v.type)})")
    if isinstance(v.const, tuple):
        return [const_val(c) for c in v.const]
    if not re.fullmatch(r"[A-Za-z_]\w*", v.code):
        raise tr.error(node, "a starred argument must be a tuple variable or constant; "
                             "assign the expression to a name first")
    return [Val(f"{v.code}.v{i}", it) for i, it in enumerate(v.type.items)]


class NamedTupleRef(Ref):
    """A namedtuple class (``collections.namedtuple`` or ``typing.NamedTuple``): calling
    it in translated code makes a tuple whose fields ``.name`` reads."""

    def __init__(self, cls):
        self.cls = cls
        self.fields = tuple(cls._fields)
        self.name = f"namedtuple class {cls.__name__}"

    def _key(self):
        return (self.cls.__module__, self.cls.__qualname__, self.fields)


def is_namedtuple_class(value) -> bool:
    return (isinstance(value, type) and issubclass(value, tuple)
            and isinstance(getattr(value, "_fields", None), tuple))


def make_namedtuple(tr, node, ref: NamedTupleRef, args, kwargs) -> Val:
    """``Point(1, y=2.0)``: the items in field order (defaults as the class has them)."""
    fields = ref.fields
    if len(args) > len(fields):
        raise tr.error(node, f"{ref.cls.__name__}() takes {len(fields)} arguments (got "
                             f"{len(args)})")
    items = dict(zip(fields, args))
    for k, v in kwargs.items():
        if k not in fields or k in items:
            raise tr.error(node, f"{ref.cls.__name__}() got an unexpected or repeated "
                                 f"argument '{k}'")
        items[k] = v
    defaults = getattr(ref.cls, "_field_defaults", {})
    for f in fields:
        if f not in items:
            c = const_val(defaults[f]) if f in defaults else None
            if c is None:
                raise tr.error(node, f"{ref.cls.__name__}() is missing argument '{f}'")
            items[f] = c
    vals = [items[f] for f in fields]
    for v in vals:
        if not isinstance(v.type, TupleType) and not is_array(v.type):
            tr._numeric(node, v, f"field of {ref.cls.__name__}")
    tt = TupleType((v.type for v in vals), fields)
    const = tuple(v.const for v in vals) if all(v.const is not None for v in vals) else None
    ct = tr.promote(node, lambda: ctype(tt))
    return Val(f"{ct}{{{', '.join(v.code for v in vals)}}}", tt, const)
