"""``for ... in enumerate(...)`` and ``for ... in zip(...)``, for both front ends.

Neither iterator exists as a value in translated code. A loop over one is rewritten, as
plain AST, into an index loop the translator already handles::

    for i, (a, b) in enumerate(zip(x, y)):      __nu_z1_s0 = x
        body                                    __nu_z1_s1 = y
                                                for __nu_z1_k in range(min(len(__nu_z1_s0),
                                                                           len(__nu_z1_s1))):
                                                    i = __nu_z1_k
                                                    a = __nu_z1_s0[__nu_z1_k]
                                                    b = __nu_z1_s1[__nu_z1_k]
                                                    body

Each iterable is evaluated once, before the loop, into a hidden local (as Python evaluates
it once); ``range(...)`` arguments are kept as its start and step, so an item is
``start + k * step`` and the count is Python's ``len(range(...))``. ``zip`` stops at its
shortest iterable. Items are arrays' elements (or rows of an N-d array), tuples' items
(those that unify, as any tuple indexed at run time) or the counter. The source front end
(_translator.py) rewrites the ``for`` statement; the bytecode front end (_bytecode.py) uses
the same parts for the iterator its ``GET_ITER`` makes.
"""

from __future__ import annotations

import ast
import builtins

from ..errors import CompileError

__all__ = ["Plan", "iterator_kind", "plan"]

_KINDS = {builtins.enumerate: "enumerate", builtins.zip: "zip", builtins.range: "range"}


def iterator_kind(node, resolve):
    """'enumerate', 'zip' or 'range' when ``node`` calls that builtin, else None.
    ``resolve(name)`` gives the object a non-local name refers to (None for a local)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    try:
        value = resolve(node.func.id)
        return _KINDS.get(value) if value is not None else None
    except TypeError:  # an unhashable global
        return None


class Plan:
    """The parts of a rewritten loop: statements run once before it, the number of items,
    and the item at a counter value (an AST expression built from the counter's node)."""

    def __init__(self, setup, length, item):
        self.setup = setup
        self.length = length
        self.item = item


def _call(name, *args):
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def plan(node, resolve, prefix, error) -> Plan:
    """The plan of iterating over ``node`` (an enumerate/zip call, possibly nested, or any
    iterable expression). Hidden names start with ``prefix``; ``error(node, message)``
    builds the CompileError of a misuse."""
    setup = []
    counter = [0]

    def fresh(part):
        counter[0] += 1
        return f"{prefix}{part}{counter[0]}"

    def hold(part, value):
        name = fresh(part)
        setup.append(ast.Assign([ast.Name(name, ast.Store())], value))
        return ast.Name(name, ast.Load())

    def source(n):
        kind = iterator_kind(n, resolve)
        if kind is not None and any(isinstance(a, ast.Starred) for a in n.args):
            raise error(n, f"{kind}(*...): starred arguments are not supported here")
        if kind == "enumerate":
            start = None
            for k in n.keywords:
                if k.arg != "start":
                    raise error(n, f"enumerate() got an unexpected keyword argument '{k.arg}'")
                start = k.value
            if not 1 <= len(n.args) <= 2 or (start is not None and len(n.args) == 2):
                raise error(n, "enumerate() takes an iterable and an optional start")
            if len(n.args) == 2:
                start = n.args[1]
            inner = source(n.args[0])
            first = hold("start", _call("__nu_range_arg", start)) if start is not None else None

            def item(k, inner=inner, first=first):
                index = k if first is None else ast.BinOp(first, ast.Add(), k)
                return ast.Tuple([index, inner.item(k)], ast.Load())
            return Plan(None, inner.length, item)
        if kind == "zip":
            if n.keywords:
                raise error(n, f"zip() got an unexpected keyword argument "
                               f"'{n.keywords[0].arg}' (strict= is not supported)")
            if not n.args:
                raise error(n, "zip() needs at least one iterable")
            parts = [source(a) for a in n.args]
            length = parts[0].length if len(parts) == 1 else \
                _call("min", *[p.length for p in parts])

            def item(k, parts=parts):
                return ast.Tuple([p.item(k) for p in parts], ast.Load())
            return Plan(None, length, item)
        if kind == "range":
            if n.keywords or not 1 <= len(n.args) <= 3:
                raise error(n, f"range() takes 1 to 3 positional arguments (got "
                               f"{len(n.args)})")
            a = list(n.args)
            args = ([ast.Constant(0), a[0], ast.Constant(1)] if len(a) == 1 else
                    [a[0], a[1], ast.Constant(1)] if len(a) == 2 else a)
            if isinstance(args[2], ast.Constant) and args[2].value == 0:
                raise error(n, "range() arg 3 must not be zero")
            start, stop, step = (hold(p, _call("__nu_range_arg", x))
                                 for p, x in zip(("start", "stop", "step"), args))
            length = _call("__nu_int64", _call("__nu_range_len", start, stop, step))

            def item(k, start=start, step=step):
                return ast.BinOp(start, ast.Add(), ast.BinOp(k, ast.Mult(), step))
            return Plan(None, length, item)
        seq = hold("s", n)

        def item(k, seq=seq):
            return ast.Subscript(seq, k, ast.Load())
        return Plan(None, _call("len", seq), item)

    top = source(node)
    return Plan(setup, top.length, top.item)


def bind(target, value):
    """Assignments of ``value`` (an item's AST) to a loop target, split where both are
    tuples of the same length, so that no tuple of arrays is ever built."""
    if (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)):
        out = []
        for t, v in zip(target.elts, value.elts):
            out.extend(bind(t, v))
        return out
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Tuple):
        raise CompileError(f"cannot unpack {len(value.elts)} values into "
                           f"{len(target.elts)} names")
    return [ast.Assign([target], value)]


def rewrite_for(s, resolve, prefix, error):
    """The statements that replace ``for <target> in enumerate/zip(...)``."""
    p = plan(s.iter, resolve, prefix, error)
    k = prefix + "k"
    try:
        assigns = bind(s.target, p.item(ast.Name(k, ast.Load())))
    except CompileError as exc:
        raise error(s.target, str(exc)) from None
    loop = ast.For(ast.Name(k, ast.Store()), _call("range", p.length), assigns + s.body,
                   s.orelse)
    out = p.setup + [loop]
    for stmt in out:  # new nodes get the for statement's line; the user's body keeps its own
        for n in ast.walk(stmt):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                ast.copy_location(n, s)
    return out
