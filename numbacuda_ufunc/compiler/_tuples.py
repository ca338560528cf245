"""Tuples in translated code: ``for x in t`` and ``literal_unroll``, and ``f(*t)``.

A loop over a tuple runs its items through one variable whose type unifies them (NumPy
promotion, as for any local assigned several types), so ``break``/``continue`` keep
their meaning: the items are picked by a ``switch`` inside an ordinary C++ loop that
NVRTC and g++ unroll. Numba's ``literal_unroll`` types the body once per item instead;
for tuples of numbers the two agree up to that promotion.
"""

from __future__ import annotations

import re

from ._types import BOTTOM, Bottom, TupleType, ctype, unify
from ._values import Val, const_val

__all__ = ["for_each_item", "literal_unroll", "starred_items"]


def literal_unroll(container):
    """Numba's ``literal_unroll``: in Python, the container itself; in translated code a
    loop over the tuple's items (see the module docstring)."""
    return container


def for_each_item(tr, s, seq):
    """``for <target> in <tuple>:`` with ``seq`` the tuple's Val."""
    items = seq.type.items
    if not items:
        return
    t = items[0]
    for it in items[1:]:
        t = tr.promote(s, lambda t=t, it=it: unify(t, it))
    tup, k, elem = tr.temp(), tr.temp("nu_k"), tr.temp("nu_e")
    tr.emit("{")
    tr.depth += 1
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
    tr.depth -= 1
    tr.emit("}")


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

