"""NumPy's call keywords for vectorize ufuncs: ``where dtype casting order signature sig
subok``.

Calls with only ``out=`` and ``stream=`` never come here: the engine runs them in C++.
Any other keyword routes the call to :func:`call_with_keywords`, which checks the
keywords, chooses the loop as NumPy does (a signature or dtype fixes types; ``casting``
checks every input cast) and hands the engine the loop, the output casting rule, the
memory order of a new result and the ``where`` mask.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ..errors import DUPLICATE_OUTPUT, DuplicateOutputError
from ..types import bfloat16

__all__ = ["CASTING_RULES", "call_with_keywords", "input_dtype", "where_as_array"]

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


def where_as_array(where, api):
    """NumPy's conversion of a ``where=`` that is not an array (None, Python and NumPy
    scalars, lists): to bool as bool() would, so None is False and [1, 0] a mask. Arrays
    (NumPy, device, CAI) are returned as they are; their dtype is checked by the caller."""
    if isinstance(where, (bool, np.bool_, np.ndarray)) or \
            hasattr(where, "__cuda_array_interface__"):
        return where
    try:
        return np.asarray(where, dtype=np.bool_)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{api}: where must be a boolean array or bool (got "
                        f"{type(where).__name__}: {e})") from None


def _signature_types(sig, api, nin, nout, kind):
    """signature= as nin + nout dtypes (None: free): "ff->f", "f4,f4->f4" or a tuple of
    dtypes and None. A ufunc's (`kind` "ufunc") one output is the text after "->" whole."""
    if isinstance(sig, str) and "->" in sig:
        ins, _, outs = sig.partition("->")

        def split(side):
            return [p.strip() for p in (side.split(",") if "," in side else list(side.strip()))]

        parts = split(ins) + ([outs.strip()] if kind == "ufunc" else split(outs))
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
        raise TypeError(f"{api}: the signature must be a string such as 'ff->f' or a tuple of "
                        f"dtypes and None, as for NumPy {kind}s (got {sig!r})")
    if len(types) != nin + nout:
        outputs = "one output" if kind == "ufunc" else f"{nout} output(s)"
        raise ValueError(f"{api}: signature {sig!r} has {len(types)} types, the {kind} has "
                         f"{nin} input(s) and {outputs}")
    return types


def _parse_signature(uf, sig):
    """signature= of a ufunc call as nin + 1 dtypes (None: free)."""
    return _signature_types(sig, f"{uf.__name__}()", uf.nin, 1, "ufunc")


def _casting(kwargs, api):
    """casting= (default 'same_kind'), checked as NumPy checks it."""
    casting = kwargs.get("casting", "same_kind")
    if not isinstance(casting, str):
        raise TypeError(f"{api}: casting must be a str (got {type(casting).__name__})")
    if casting not in CASTING_RULES:
        raise ValueError(f"{api}: casting must be one of 'no', 'equiv', 'safe', "
                         f"'same_kind', or 'unsafe' (got {casting!r})")
    return casting


def _accepts(t, loop_t, rule):
    """Whether an input of dtype t (or weak kind) may be passed as loop_t under rule."""
    if isinstance(t, str):  # weak Python scalar: by kind, as the engine matches it
        return loop_t.kind in {"i": "iufc", "f": "fc", "c": "c"}[t] or rule == "unsafe"
    return np.can_cast(t, loop_t, rule)


def _char_dtype(c):
    """The dtype of a ``types`` character; 'E' is ml_dtypes' bfloat16 (NumPy does not know
    the character)."""
    if c == "E":
        return bfloat16.dtype
    return np.dtype(c)


def _loop_types(uf):
    """(input dtypes, output dtype) of each loop, in order (cached per loop count)."""
    cached = uf.__dict__.get("_keyword_types")
    if cached is not None and len(cached) == uf.ntypes:
        return cached
    out = []
    for s in uf.types:
        ins, o = s.split("->")
        out.append(([_char_dtype(c) for c in ins], _char_dtype(o)))
    uf._keyword_types = out
    return out


def _first_loop(loops, in_types, fixed, nin, rules, outputs_fixed=True):
    """NumPy's search with fixed types: the index of the first loop (inputs, outputs)
    matching every fixed type (the outputs' only with `outputs_fixed`) whose inputs cast
    under the first of `rules` that finds one; None when none does. With some inputs fixed
    and others free, NumPy promotes the free ones with the fixed: a free input must cast
    safely (add(f8, f8, signature=("f4", None, None)) has no loop)."""
    fixed_in = [f is not None for f in fixed[:nin]]
    partial = any(fixed_in) and not all(fixed_in)
    for rule in rules:
        for index, (ins, outs) in enumerate(loops):
            if any(f is not None and f != t for f, t in zip(fixed[:nin], ins)):
                continue
            if outputs_fixed and any(f is not None and f != t for f, t in zip(fixed[nin:], outs)):
                continue
            if all(_accepts(t, lt, "safe" if partial and not is_fixed else rule)
                   for t, lt, is_fixed in zip(in_types, ins, fixed_in)):
                return index
    return None


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
    # A lazy loop's output type is inferred; the result is cast to dtype= instead.
    loops = [(ins, [o]) for ins, o in _loop_types(uf)]
    index = _first_loop(loops, in_types, fixed, uf.nin, ("safe", casting),
                        outputs_fixed=not uf._lazy)
    if index is not None:
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
            # Weak Python scalars take the loop's type (an overflow is checked later), but
            # NumPy 2 refuses them under 'equiv' unless their default type is the loop's.
            default = {"i": np.int64, "f": np.float64, "c": np.complex128}[t]
            if casting == "equiv" and lt != default:
                raise TypeError(f"{uf.__name__}(): cannot cast Python {_type_name(t)} to {lt} "
                                f"under the casting rule 'equiv'")
            continue
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

    casting = _casting(kwargs, f"{name}()")
    order = kwargs.get("order", "K")
    order = "K" if order is None else order
    if isinstance(order, bytes):
        order = order.decode("ascii", "replace")  # NumPy takes b"C"
    if not isinstance(order, str):
        raise TypeError(f"{name}(): order must be a str (got {type(order).__name__})")
    if order.upper() not in _ORDERS:
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
    else:
        where = where_as_array(where, f"{name}()")
    if where is not None and not isinstance(where, (bool, np.bool_)):
        wt = input_dtype(where)
        if isinstance(wt, str) or wt != np.bool_:
            raise TypeError(f"{name}(): where must be a boolean array or bool (got "
                            f"{_type_name(wt)}); NumPy casts it with casting rule 'safe'")

    if where is not None and out is None:
        warnings.warn("'where' used without 'out', expect uninitialized memory in output. "
                      "If this is intentional, use out=None.", UserWarning, stacklevel=3)
    fixed = None
    if signature is not None:
        fixed = _parse_signature(uf, signature)
    elif dtype is not None:
        fixed = [None] * nin + [np.dtype(dtype)]
    in_types = [input_dtype(x) for x in inputs]
    fixes = fixed is not None and any(f is not None for f in fixed)
    loop = -1
    if fixes or casting != "same_kind":
        # The choice depends on the types alone unless a weak scalar's value may matter:
        # remembered per ufunc (keyed on its loop count, which only grows).
        memo = uf.__dict__.setdefault("_keyword_loops", {})
        key = None if any(isinstance(t, str) for t in in_types) else \
            (tuple(in_types), tuple(fixed) if fixes else None, casting, uf.ntypes)
        loop = memo.get(key, -1) if key is not None else -1
        if loop < 0:
            loop = _choose_loop(uf, in_types, fixed, casting) if fixes else uf._select_loop(inputs)
            if loop >= 0:  # (-1: the engine raises its no-loop TypeError)
                _check_input_casts(uf, in_types, loop, casting)
                if key is not None:
                    if len(memo) > 256:
                        memo.clear()
                    memo[key] = loop
    result_type = fixed[-1] if fixed is not None and fixed[-1] is not None else None
    return uf._call_loop(inputs, out, loop, casting, order, where, result_type,
                         kwargs.get("stream", 0))


# ---------------------------------------------------------------- gufuncs: axes, axis, keepdims

_GUFUNC_KEYWORDS = ("out", "stream", "axes", "axis", "keepdims", "dtype", "signature", "sig",
                    "casting")


def _gufunc_loop_types(g):
    """(input dtypes, output dtypes) of each of the gufunc's loops, in order."""
    loops = []
    for s in g.types:
        ins, outs = s.split("->")
        loops.append(([_char_dtype(c) for c in ins], [_char_dtype(c) for c in outs]))
    return loops


def _gufunc_fixed(g, kwargs, api):
    """signature=/sig= or dtype= as nin + nout dtypes (None: free), or None for neither."""
    sig = kwargs.get("signature", kwargs.get("sig"))
    dtype = kwargs.get("dtype")
    if sig is not None and dtype is not None:
        raise TypeError(f"{api}: cannot specify both 'signature' and 'dtype'")
    if dtype is not None:
        try:
            return [None] * g.nin + [np.dtype(dtype)] * g.nout  # NumPy: every output
        except TypeError:
            raise TypeError(f"{api}: dtype {dtype!r} is not a NumPy dtype") from None
    if sig is None:
        return None
    return _signature_types(sig, api, g.nin, g.nout, "gufunc")


def _gufunc_keyword_loop(g, inputs, outputs, kwargs):
    """The loop that dtype=, signature= and casting= choose, as NumPy's type resolution
    does (inputs cast safely first, then under `casting` when types are fixed), or None
    when none of them is given (the engine's own choice). Outputs passed in must take the
    loop's results under `casting` when it is stricter than the engine's 'same_kind'."""
    if not any(k in kwargs for k in ("dtype", "signature", "sig", "casting")):
        return None
    api = f"{g.__name__}()"
    casting = _casting(kwargs, api)
    fixed = _gufunc_fixed(g, kwargs, api) or [None] * (g.nin + g.nout)
    in_types = [input_dtype(x) for x in inputs]
    safe = CASTING_RULES.index("safe")
    rules = [CASTING_RULES[min(CASTING_RULES.index(casting), safe)]]
    if any(f is not None for f in fixed) and CASTING_RULES.index(casting) > safe:
        rules.append(casting)
    loops = _gufunc_loop_types(g)
    index = _first_loop(loops, in_types, fixed, g.nin, rules)
    if index is not None:
        outs = loops[index][1]
        for k, o in enumerate(outputs):
            if o is not None and CASTING_RULES.index(casting) < CASTING_RULES.index(
                    "same_kind") and not np.can_cast(outs[k], o.dtype, casting):
                raise TypeError(f"{api}: cannot cast output {k} from the loop's "
                                f"{outs[k]} to {o.dtype} with casting rule {casting!r}")
        return index
    shown = ", ".join("None" if f is None else str(f) for f in fixed)
    raise TypeError(f"{api}: no loop matching the specified signature ({shown}) and casting "
                    f"rule {casting!r} was found for input types "
                    f"({', '.join(_type_name(t) for t in in_types)}); the loops are {g.types}")


def _is_device(x):
    return not isinstance(x, np.ndarray) and hasattr(x, "__cuda_array_interface__")


def _transpose(x, perm):
    if list(perm) == list(range(len(perm))):
        return x
    if isinstance(x, np.ndarray):
        return x.transpose(perm)
    from .. import _core

    d = x if isinstance(x, _core.DeviceNDArray) else _core.as_cuda_array(x)
    return d.transpose(*perm)


def _reshape(x, shape):
    return x.reshape(shape) if isinstance(x, np.ndarray) else x.reshape(*shape)


def _normalize_axes(g, axes, axis, keepdims):
    """One tuple of axes per operand (negative counts from the operand's end) from
    NumPy's axes= or axis=; None where an operand keeps its core dimensions last."""
    name = g.__name__
    ncore = [len(c) for c in g._core_dims]
    nops = len(ncore)
    if axes is not None and axis is not None:
        raise TypeError(f"{name}(): cannot specify both 'axis' and 'axes'")
    if axis is not None:
        if any(n > 1 for n in ncore) or any(n != 1 for n in ncore[:g.nin]) or \
                len({c[0] for c in g._core_dims if c}) > 1:
            raise TypeError(f"{name}(): axis can only be used with a single shared core "
                            f"dimension (the layout is {g.signature})")
        try:
            axis = operator.index(axis)
        except TypeError:
            raise TypeError(f"{name}(): axis must be an integer (got {type(axis).__name__} "
                            f"{axis!r})") from None
        axes = [(axis,) if n == 1 else () for n in ncore]
    if keepdims and any(ncore[g.nin:]):
        raise TypeError(f"{name}(): keepdims can only be used for gufuncs whose outputs have "
                        f"no core dimensions (the layout is {g.signature})")
    if keepdims and len(set(ncore[:g.nin])) != 1:
        raise TypeError(f"{name}(): keepdims needs inputs with the same number of core "
                        f"dimensions (the layout is {g.signature})")
    if axes is None:
        return [tuple(range(-n, 0)) for n in ncore]
    if not isinstance(axes, list):
        raise TypeError(f"{name}(): axes must be a list of tuples (got {type(axes).__name__})")
    if len(axes) == g.nin and not any(ncore[g.nin:]):
        axes = list(axes) + [()] * g.nout  # outputs without core dimensions may be left out
    if len(axes) != nops:
        raise ValueError(f"{name}(): axes should be a list with an entry for all {nops} "
                         f"inputs and outputs (got {len(axes)})")
    out = []
    for k, (ax, n) in enumerate(zip(axes, ncore)):
        if isinstance(ax, int) and not isinstance(ax, bool):
            ax = (ax,)
        if not isinstance(ax, tuple) or len(ax) != n:
            raise ValueError(f"{name}(): axes item {k} should be a tuple with {n} "
                             f"element(s) (got {ax!r})")
        out.append(ax)
    return out


def _resolved(ax, ndim, name, k):
    res = []
    for a in ax:
        try:
            a = operator.index(a)
        except TypeError:
            raise TypeError(f"{name}(): axes item {k} must hold integers (got "
                            f"{type(a).__name__} {a!r})") from None
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(f"{name}(): axis {a} of operand {k} is out of "
                                          f"bounds for array of dimension {ndim}")
        res.append(a % ndim)
    if len(set(res)) != len(res):
        raise ValueError(f"{name}(): axes item {k} has repeated axes {ax}")
    return res


def _core_last(x, ax):
    """A view of x with the axes ax moved to the end, in that order."""
    perm = [d for d in range(x.ndim) if d not in ax] + list(ax)
    return _transpose(x, perm)


def _core_at(r, ax):
    """The inverse: a view of r (core dimensions last) with them at positions ax."""
    ncore = len(ax)
    loop = iter(range(r.ndim - ncore))
    src = [r.ndim - ncore + ax.index(p) if p in ax else next(loop) for p in range(r.ndim)]
    return _transpose(r, src)


def gufunc_call_with_keywords(g, args, kwargs):
    """A gufunc call with NumPy's axes=, axis=, keepdims=, dtype=, signature= or casting=:
    operands are viewed with their core dimensions last, the gufunc runs (the loop those
    keywords choose), and new results are viewed back."""
    name = g.__name__
    for key in kwargs:
        if key not in _GUFUNC_KEYWORDS:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    nin, nout = g.nin, g.nout
    if len(args) not in (nin, nin + nout):
        raise TypeError(f"{name}(): gufunc accepts {nin} positional arguments (the inputs) "
                        f"or {nin + nout} positional arguments (inputs and outputs). Got "
                        f"{len(args)} positional argument{'' if len(args) == 1 else 's'}.")
    outs = list(args[nin:]) or [None] * nout
    if kwargs.get("out") is not None:
        if len(args) > nin:
            raise DuplicateOutputError(DUPLICATE_OUTPUT)
        o = kwargs["out"]
        outs = list(o) if isinstance(o, tuple) else [o]
        if len(outs) != nout:
            raise TypeError(f"{name}(): out must be a tuple of {nout} array(s) (got {len(outs)})")
    keepdims = bool(kwargs.get("keepdims", False))
    inputs = [x if isinstance(x, np.ndarray) or _is_device(x) else np.asarray(x)
              for x in args[:nin]]
    axes = _normalize_axes(g, kwargs.get("axes"), kwargs.get("axis"), keepdims)
    moved_in = []
    for k, x in enumerate(inputs):
        moved_in.append(_core_last(x, _resolved(axes[k], x.ndim, name, k)))
    kept = None
    if keepdims:  # outputs hold the inputs' core axes as size-1 dimensions
        ndim0 = inputs[0].ndim
        kept = _resolved(axes[0], ndim0, name, 0)
    moved_out = []
    for j, o in enumerate(outs):
        k = nin + j
        if o is None:
            moved_out.append(None)
            continue
        if kept is not None:
            if o.ndim != inputs[0].ndim or any(o.shape[a] != 1 for a in kept):
                raise ValueError(f"{name}(): with keepdims=True, output {j + 1} needs size 1 "
                                 f"on axes {tuple(kept)} (got shape {tuple(o.shape)})")
            o = _core_last(o, kept)
            o = _reshape(o, tuple(o.shape[:o.ndim - len(kept)]))
        else:
            o = _core_last(o, _resolved(axes[k], o.ndim, name, k))
        moved_out.append(o)
    call_kw = {"stream": kwargs.get("stream", 0)}
    if any(o is not None for o in moved_out):
        if not all(o is not None for o in moved_out):
            raise TypeError(f"{name}(): with axes=, pass every output or none")
        call_kw["out"] = tuple(moved_out)
    loop = _gufunc_keyword_loop(g, moved_in, moved_out, kwargs)
    results = g(*moved_in, **call_kw) if loop is None else g._call_loop(loop, *moved_in, **call_kw)
    if any(o is not None for o in outs):
        return outs[0] if nout == 1 else tuple(outs)
    results = [results] if nout == 1 else list(results)
    final = []
    for j, r in enumerate(results):
        if not hasattr(r, "ndim"):
            r = np.asarray(r)
        if kept is not None:
            r = _reshape(r, tuple(r.shape) + (1,) * len(kept))
            r = _core_at(r, kept)
        else:
            ax = axes[nin + j]
            if ax:
                r = _core_at(r, _resolved(ax, r.ndim, name, nin + j))
        final.append(r)
    return final[0] if nout == 1 else tuple(final)
