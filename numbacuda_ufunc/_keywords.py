"""NumPy's call keywords for vectorize ufuncs: ``where dtype casting order signature sig
subok``.

Calls with only ``out=`` and ``stream=`` never come here: the engine runs them in C++.
Any other keyword routes the call to :func:`call_with_keywords`, which checks the
keywords, chooses the loop as NumPy does (a signature or dtype fixes types; ``casting``
checks every input cast) and hands the engine the loop, the output casting rule, the
memory order of a new result and the ``where`` mask.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CASTING_RULES", "call_with_keywords", "input_dtype"]

CASTING_RULES = ("no", "equiv", "safe", "same_kind", "unsafe")
_ORDERS = ("K", "A", "C", "F")
_KEYWORDS = ("out", "where", "dtype", "casting", "order", "signature", "sig", "subok", "stream")
_WEAK = {int: "i", float: "f", complex: "c"}  # Python scalars are weak (NEP 50)


def input_dtype(x):
    """The dtype of a call argument, or "i"/"f"/"c" for a weak Python scalar."""
    if type(x) in _WEAK:
        return _WEAK[type(x)]
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return np.dtype(dt)
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return np.dtype(cai["typestr"])
    return np.asarray(x).dtype


def _parse_signature(uf, sig):
    """signature= as a list of nin + 1 dtypes (None: free): "ff->f", "f4,f4->f4", a
    tuple of dtypes/None, or one dtype (every operand)."""
    n = uf.nin + 1
    api = f"{uf.__name__}()"
    if isinstance(sig, str) and "->" in sig:
        ins, _, outs = sig.partition("->")
        parts = [p.strip() for p in (ins.split(",") if "," in ins else list(ins.strip()))]
        parts += [outs.strip()]
        try:
            types = [np.dtype(p) for p in parts]
        except TypeError:
            raise TypeError(f"{api}: signature {sig!r} names an unknown dtype") from None
    elif isinstance(sig, tuple):
        try:
            types = [None if t is None else np.dtype(t) for t in sig]
        except TypeError:
            raise TypeError(f"{api}: signature {sig!r} names an unknown dtype") from None
    else:
        try:
            types = [np.dtype(sig)] * n
        except TypeError:
            raise TypeError(f"{api}: signature must be a string such as 'ff->f', a tuple of "
                            f"dtypes or a dtype (got {sig!r})") from None
    if len(types) != n:
        raise ValueError(f"{api}: signature {sig!r} has {len(types)} types, the ufunc has "
                         f"{uf.nin} input(s) and one output")
    return types


def _accepts(t, loop_t, rule):
    """Whether an input of dtype t (or weak kind) may be passed as loop_t under rule."""
    if isinstance(t, str):  # weak Python scalar: by kind, as the engine matches it
        return loop_t.kind in {"i": "iufc", "f": "fc", "c": "c"}[t] or rule == "unsafe"
    return np.can_cast(t, loop_t, rule)


def _loop_types(uf):
    """(input dtypes, output dtype) of each loop, in order."""
    out = []
    for s in uf.types:
        ins, o = s.split("->")
        out.append(([np.dtype(c) for c in ins], np.dtype(o)))
    return out


def _choose_loop(uf, in_types, fixed, casting):
    """NumPy's search with fixed types: the first loop matching every fixed type whose
    inputs cast safely, else the first whose inputs cast under `casting`."""
    api = f"{uf.__name__}()"
    if uf._lazy:
        # Lazy ufuncs compile the fixed input types; free ones take the argument's type
        # (a weak scalar its default), or the fixed output type with dtype=.
        default = {"i": np.dtype(np.int64), "f": np.dtype(np.float64), "c": np.dtype(np.complex128)}
        want = []
        for k, t in enumerate(in_types):
            if fixed[k] is not None:
                want.append(fixed[k])
            elif fixed[-1] is not None and all(f is None for f in fixed[:-1]):
                want.append(fixed[-1])  # dtype=: the all-dtype loop, as NumPy's promoters pick
            else:
                want.append(default[t] if isinstance(t, str) else t)
        uf._compile_for(want)
    loops = _loop_types(uf)
    for rule in ("safe", casting):
        for index, (ins, o) in enumerate(loops):
            if any(f is not None and f != t for f, t in zip(fixed, ins)):
                continue
            # A lazy loop's output type is inferred; the result is cast to dtype= instead.
            if fixed[-1] is not None and o != fixed[-1] and not uf._lazy:
                continue
            if all(_accepts(t, lt, rule) for t, lt in zip(in_types, ins)):
                return index
    shown = ", ".join("None" if f is None else str(f) for f in fixed)
    raise TypeError(f"{api}: no loop matching the specified signature ({shown}) and casting "
                    f"rule {casting!r} was found for input types "
                    f"({', '.join(_type_name(t) for t in in_types)}); the loops are {uf.types}")


def _type_name(t):
    return {"i": "int", "f": "float", "c": "complex"}.get(t, str(t)) if isinstance(t, str) else str(t)


def _check_input_casts(uf, in_types, loop, casting):
    ins, _ = _loop_types(uf)[loop]
    for k, (t, lt) in enumerate(zip(in_types, ins)):
        if isinstance(t, str):
            continue  # weak Python scalars take the loop's type (an overflow is checked later)
        if not np.can_cast(t, lt, casting):
            raise TypeError(f"{uf.__name__}(): cannot cast input {k} from {t} to the loop's "
                            f"{lt} with casting rule {casting!r}")


def call_with_keywords(uf, args, kwargs):
    """The call ``uf(*args, **kwargs)`` with NumPy's keywords."""
    name = uf.__name__
    for key in kwargs:
        if key not in _KEYWORDS:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    nin = uf.nin
    if len(args) not in (nin, nin + 1):
        raise TypeError(f"{name}() takes {nin} input argument{'s' if nin != 1 else ''} "
                        f"(got {len(args)})")
    out = kwargs.get("out")
    if len(args) == nin + 1:
        if out is not None:
            raise TypeError(f"{name}(): cannot specify 'out' as both a positional and keyword "
                            "argument")
        out = args[nin]
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"{name}(): out must be an array or a 1-tuple (got a tuple of "
                            f"{len(out)})")
        out = out[0]
    inputs = tuple(args[:nin])

    casting = kwargs.get("casting", "same_kind")
    if casting not in CASTING_RULES:
        raise ValueError(f"{name}(): casting must be one of 'no', 'equiv', 'safe', "
                         f"'same_kind', or 'unsafe' (got {casting!r})")
    order = kwargs.get("order", "K")
    order = "K" if order is None else order
    if not isinstance(order, str) or order.upper() not in _ORDERS:
        raise ValueError(f"{name}(): order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    order = order.upper()
    if "sig" in kwargs and "signature" in kwargs:
        raise TypeError(f"{name}(): cannot specify both 'sig' and 'signature'")
    signature = kwargs.get("signature", kwargs.get("sig"))
    dtype = kwargs.get("dtype")
    if signature is not None and dtype is not None:
        raise TypeError(f"{name}(): cannot specify both 'signature' and 'dtype'")
    where = kwargs.get("where", True)
    if where is True:
        where = None  # no mask: the plain loop
    elif where is not None and not isinstance(where, (bool, np.bool_)):
        wt = input_dtype(where)
        if isinstance(wt, str) or wt != np.bool_:
            raise TypeError(f"{name}(): where must be a boolean array or bool (got "
                            f"{_type_name(wt)}); NumPy casts it with casting rule 'safe'")

    fixed = None
    if signature is not None:
        fixed = _parse_signature(uf, signature)
    elif dtype is not None:
        fixed = [None] * nin + [np.dtype(dtype)]
    in_types = [input_dtype(x) for x in inputs]
    if fixed is not None and any(f is not None for f in fixed):
        loop = _choose_loop(uf, in_types, fixed, casting)
    elif casting != "same_kind":
        loop = uf._select_loop(inputs)
        if loop < 0:
            loop = -1  # the engine raises its no-loop TypeError
    else:
        loop = -1
    if loop >= 0:
        _check_input_casts(uf, in_types, loop, casting)
    result_type = fixed[-1] if fixed is not None and fixed[-1] is not None else None
    return uf._call_loop(inputs, out, loop, casting, order, where, result_type,
                         kwargs.get("stream", 0))
