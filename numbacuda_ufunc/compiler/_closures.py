"""Functions defined inside translated functions (a nested ``def`` or a ``lambda``).

A nested function is a compile-time value (a ClosureRef) bound to its name in the
enclosing function. It becomes a device function of its own, made from a real Python
function object built from the nested code object (found in the enclosing code's
constants), so calls, keyword arguments and defaults go through the same path as any
other Python function's.

What the nested function reads from the enclosing function (its free variables):

* names bound to a compile-time constant there (``y = 10`` once at the top of the body) are
  baked in, as closure cells holding the constant;
* any other local (an argument, a loop variable, an array) is passed as a hidden trailing
  parameter, with its value at the time of the call, as Python reads a closure variable
  when the function runs;
* names the enclosing function takes from its own closure or from the globals are
  resolved as there.

A nested function with hidden parameters can still go anywhere a function can: called in
another nested function, or passed to a device function (``apply(inner, x)``). Whoever
receives it also receives the values of its hidden parameters, as hidden parameters of
its own (``__nu_fwd_<param>_<k>``, listed in its FunctionSource's ``forward``), read where
the function value was made. Only returning one is refused, as Numba refuses it.

Default values must be compile-time constants (Numba's rule for closures as well).
"""

from __future__ import annotations

import ast
import copy
import types as pytypes

from ._source import FunctionSource
from ._types import BOTTOM, Bottom
from ._values import Ref, Val

__all__ = ["ClosureRef", "define", "forwarding", "hidden_values", "lambda_value"]


class ClosureRef(Ref):
    """A function defined in the translated code. Equal closures are the same Python
    function object (one per definition and captured constants, made once per
    translation) reading the same run-time locals."""

    def __init__(self, fn, node, src, dynamic, forward, home):
        self.fn = fn  # a real function: signature, defaults, globals, constant cells
        self.node = node  # its ast.FunctionDef / ast.Lambda in the enclosing source
        self.src = src  # its FunctionSource, with the hidden parameters' names
        self.dynamic = dynamic  # locals of the definer it reads at each call
        self.forward = forward  # ((captured name, ClosureRef), ...) it calls in turn
        self.home = home  # (fn, node) of the defining function
        self.name = f"function {fn.__name__}"

    def _key(self):
        return (self.fn, self.dynamic, self.forward)

    @property
    def n_hidden(self) -> int:
        return len(self.dynamic) + sum(r.n_hidden for _, r in self.forward)

    def token(self) -> str:
        code = self.fn.__code__
        cells = tuple(_cell(c) for c in self.fn.__closure__ or ())
        inner = tuple(r.token() for _, r in self.forward)
        return (f"{self.fn.__module__}.{self.fn.__qualname__}:{code.co_firstlineno}:"
                f"{self.node.col_offset}:{cells!r}:{self.fn.__defaults__!r}:{inner}")


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return "<hidden>"


def with_hidden(src, hidden, forward=()):
    """A copy of ``src`` whose function takes the extra trailing parameters ``hidden``."""
    out = copy.copy(src)
    out.hidden = tuple(getattr(src, "hidden", ())) + tuple(hidden)
    out.forward = tuple(getattr(src, "forward", ())) + tuple(forward)
    return out


def _fwd_names(pname, ref):
    return [f"__nu_fwd_{pname}_{k}" for k in range(ref.n_hidden)]


def _code_of(tr, node):
    """The nested code object of ``node`` among the constants of the enclosing code."""
    name = node.name if isinstance(node, ast.FunctionDef) else "<lambda>"
    found = [c for c in tr.fn.__code__.co_consts
             if isinstance(c, pytypes.CodeType) and c.co_name == name
             and c.co_firstlineno == node.lineno + tr.src.line_offset]
    if len(found) > 1 and isinstance(node, ast.Lambda):
        # Several lambdas on one line: the body's column tells them apart (3.11+).
        found = [c for c in found
                 if any(p[0] == c.co_firstlineno and p[2] == node.body.col_offset
                        for p in getattr(c, "co_positions", lambda: ())())] or found
    if len(found) != 1:
        what = f"'{name}'" if name != "<lambda>" else "the lambda"
        raise tr.error(node, f"cannot find the code of the nested function {what} (define "
                             f"nested functions on their own lines)")
    return found[0]


def _defaults(tr, node):
    """The default values (evaluated in the enclosing function, where Python evaluates
    them), which must be known at compile time."""
    out = []
    for d in node.args.defaults:
        v = tr.expr(d)
        if isinstance(v.type, Bottom):
            out.append(0)  # typed on a later pass
            continue
        if v.const is None:
            raise tr.error(d, "the default value of a nested function's parameter must be a "
                              "compile-time constant (a number or a tuple of numbers)")
        out.append(v.const)
    return tuple(out)


def _make(tr, node):
    code = _code_of(tr, node)
    outer = tr.fn
    if isinstance(node, ast.FunctionDef) and node.name in code.co_freevars:
        raise tr.error(node, f"the nested function '{node.name}' calls itself; recursive "
                             f"functions must be defined at module level")
    consts, dynamic, forward, cells = [], [], [], []
    for name in code.co_freevars:
        if name in tr.locals:
            const = tr.constant_locals.get(name)
            if const is not None:
                consts.append((name, const))
                cells.append(pytypes.CellType(const))
                continue
            dynamic.append(name)
            current = tr.vars.get(name)
            if isinstance(current, ClosureRef) and current.n_hidden:
                forward.append((name, current))  # a sibling that reads run-time locals
            cells.append(pytypes.CellType())  # never read: a hidden parameter instead
        elif name in outer.__code__.co_freevars:
            cells.append(outer.__closure__[outer.__code__.co_freevars.index(name)])
        else:
            cells.append(pytypes.CellType())
    defaults = _defaults(tr, node)
    key = (outer.__code__, node.lineno, node.col_offset, tuple(consts), defaults)
    memo = tr.ctx.__dict__.setdefault("closures", {})
    fn = memo.get(key)
    if fn is None:
        fn = memo[key] = pytypes.FunctionType(code, outer.__globals__, code.co_name,
                                              defaults or None, tuple(cells) or None)
        fn.__module__ = outer.__module__
        fn.__qualname__ = getattr(code, "co_qualname",
                                  f"{outer.__qualname__}.<locals>.{code.co_name}")
    name = node.name if isinstance(node, ast.FunctionDef) else "lambda"
    src = FunctionSource(node, tr.src.filename, tr.src.lines, name, tr.src.line_offset)
    hidden = list(dynamic) + [n for pname, r in forward for n in _fwd_names(pname, r)]
    src = with_hidden(src, hidden, forward)
    return ClosureRef(fn, node, src, tuple(dynamic), tuple(forward), (tr.fn, tr.node))


def define(tr, s):
    """``def f(...)`` inside a translated function: bind ``f`` to the nested function."""
    if s.decorator_list:
        raise tr.error(s, f"decorators on a nested function are not supported ('{s.name}'); "
                          f"define a decorated device function at module level")
    if s.args.kwarg is not None or s.args.kwonlyargs:
        raise tr.error(s, f"**kwargs and keyword-only parameters are not supported "
                          f"('{s.name}')")
    ref = _make(tr, s)
    old = tr.vars.get(s.name)
    if isinstance(old, ClosureRef) and old.node is not s:
        twice = [n for n in ref.dynamic
                 if sum(isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store) and x.id == n
                        for x in ast.walk(tr.node)) > 1]
        numba = (f" (Cannot capture a constant value for variable '{twice[0]}' as there are "
                 f"multiple definitions present)" if twice else "")
        raise tr.error(s, f"the nested function '{s.name}' is defined more than once; a "
                          f"nested function needs one definition per name{numba}")
    if old is not None and not isinstance(old, (ClosureRef, Bottom)):
        raise tr.error(s, f"'{s.name}' names both a nested function and a value ({old})")
    tr.vars[s.name] = ref


def lambda_value(tr, e):
    """A lambda expression: a nested function without a name."""
    return Val("", _make(tr, e))


def hidden_values(tr, node, ref):
    """The values of ``ref``'s hidden parameters, read in the translator ``tr`` where it
    is called: its definer's locals there, or what ``tr`` was forwarded for it."""
    if not ref.n_hidden:
        return []
    if ref.home[0] is tr.fn and ref.home[1] is tr.node:
        out = [tr.expr(ast.copy_location(ast.Name(n, ast.Load()), node)) for n in ref.dynamic]
        for name, _ in ref.forward:
            current = tr.vars.get(name)
            if not isinstance(current, ClosureRef):
                return out + [Val("0", BOTTOM)]  # still being typed
            out += hidden_values(tr, node, current)
        return out
    for pname, r in getattr(tr.src, "forward", ()):
        if r == ref:
            return [tr.expr(ast.copy_location(ast.Name(n, ast.Load()), node))
                    for n in _fwd_names(pname, r)]
    raise tr.error(node, f"the nested function '{ref.fn.__name__}' reads run-time locals of "
                         f"the function that defines it; it cannot be used here")


def forwarding(tr, node, params_and_vals):
    """For a call: the hidden parameters (names, ClosureRefs, values) that carry the
    run-time captures of the nested functions passed as arguments."""
    forward, names, vals = [], [], []
    for pname, v in params_and_vals:
        if isinstance(v, Val) and isinstance(v.type, ClosureRef) and v.type.n_hidden:
            forward.append((pname, v.type))
            names += _fwd_names(pname, v.type)
            vals += hidden_values(tr, node, v.type)
    return forward, names, vals
