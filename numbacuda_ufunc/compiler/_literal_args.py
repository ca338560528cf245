"""Which parameters of a called function take integer constants as compile-time values.

Numba types an integer constant argument as a literal when the callee needs one, so
``helper(ary, 32, uint32)`` may size ``cuda.shared.array(n, dtype)`` with its parameter
``n``. A parameter qualifies when the function never assigns it and uses it in a shape:
the first argument (or ``shape=``) of ``cuda.shared.array``, ``cuda.local.array`` or
``cuda.const.array_like``-style ``*.array`` calls, alone or inside a tuple; or passes it on
to another function (which decides the same way for its own parameter). The caller then
specialises the callee on the value (see ``LiteralRef``).
"""

from __future__ import annotations

import ast
import builtins
import functools

__all__ = ["literal_params"]


def _names(node) -> set[str]:
    """Names a shape expression is made of: ``n`` or ``(n, m)``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts)) if node.elts else set()
    return set()


def _is_array_ctor(func) -> bool:
    # cuda.shared.array / cuda.local.array / shared.array (imported namespace)
    return (isinstance(func, ast.Attribute) and func.attr == "array"
            and isinstance(func.value, (ast.Attribute, ast.Name)))


@functools.lru_cache(maxsize=512)
def _scan(node) -> frozenset:
    params = [a.arg for a in node.args.posonlyargs + node.args.args]
    assigned, wanted = set(), set()
    body = node.body if isinstance(node.body, list) else [node.body]
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
                assigned.add(n.id)
            elif isinstance(n, ast.Call):
                if _is_array_ctor(n.func):
                    if n.args:
                        wanted |= _names(n.args[0])
                    wanted |= set().union(*(_names(k.value) for k in n.keywords
                                            if k.arg == "shape")) if n.keywords else set()
                elif isinstance(n.func, ast.Name) and not hasattr(builtins, n.func.id):
                    # passed on to another (user) function
                    wanted |= {a.id for a in n.args if isinstance(a, ast.Name)}
    return frozenset(p for p in params if p in wanted and p not in assigned)


def literal_params(src) -> frozenset:
    """Parameter names of the function ``src`` (a FunctionSource) that take an integer
    constant argument as a compile-time value."""
    node = src.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return frozenset()
    return _scan(node)
