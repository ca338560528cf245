"""Whole-array NumPy reductions in translated code: ``np.sum(a)``, ``a.mean()``,
``np.argmax(a)``... on arrays of any ndim and layout (no ``axis``), with NumPy's result
types and values. The work is done by the templates of src/kernels/nu_reductions.cuh;
this module picks NumPy's accumulator and result types and checks the call."""

from __future__ import annotations

import ast

from ..types import Scalar, bool_, float32, float64, int64, uint64
from ._library import call_library
from ._types import BOTTOM, Bottom, ctype, is_array
from ._values import LibFuncRef, ModuleRef, Val

__all__ = ["FUNCTIONS", "METHODS", "try_call"]

# np.<name>(a) -> (kind of reduction, NumPy's name in messages)
FUNCTIONS = {
    "sum": "sum", "prod": "prod", "product": "prod", "mean": "mean", "var": "var",
    "std": "std", "min": "min", "max": "max", "amin": "min", "amax": "max",
    "argmin": "argmin", "argmax": "argmax", "all": "all", "any": "any",
    "nansum": "nansum", "nanprod": "nanprod", "nanmean": "nanmean", "nanmin": "nanmin",
    "nanmax": "nanmax", "nanvar": "nanvar", "nanstd": "nanstd", "median": "median",
    "nanmedian": "nanmedian", "count_nonzero": "count_nonzero",
    "cumsum": None, "cumprod": None, "ptp": None, "percentile": None, "quantile": None,
}
METHODS = {"sum": "sum", "prod": "prod", "mean": "mean", "var": "var", "std": "std",
           "min": "min", "max": "max", "argmin": "argmin", "argmax": "argmax",
           "all": "all", "any": "any"}


def try_call(tr, e):
    """``np.<reduction>(a, ...)`` or ``a.<reduction>()`` as a Val; None when ``e`` is
    another call."""
    f = e.func
    if not isinstance(f, ast.Attribute):
        return None
    base = tr.expr(f.value)
    if isinstance(base.type, ModuleRef) and base.type.module.__name__ == "numpy":
        if f.attr not in FUNCTIONS:
            return None
        if not e.args:
            raise tr.error(e, f"np.{f.attr}() needs an array argument")
        args = [tr.expr(a) for a in e.args]
        if any(isinstance(a.type, Bottom) for a in args):
            return Val("0", BOTTOM)
        if not is_array(args[0].type):
            if f.attr == "count_nonzero" and len(args) == 1 and not e.keywords \
                    and tr._numeric(e, args[0], "np.count_nonzero()"):
                return Val(f"nu::i64({tr.truth(args[0])})", int64)  # a 0-d value: 0 or 1
            return None  # a scalar: the library's message
        if FUNCTIONS[f.attr] is None:
            raise tr.error(e, f"np.{f.attr}() is not supported in translated functions "
                              f"(whole-array reductions: np.{', np.'.join(_SUPPORTED)})")
        return _reduce(tr, e, f"np.{f.attr}", FUNCTIONS[f.attr], args[0], args[1:],
                       e.keywords)
    if is_array(base.type) and f.attr in METHODS:
        args = [tr.expr(a) for a in e.args]
        return _reduce(tr, e, f".{f.attr}", METHODS[f.attr], base, args, e.keywords)
    return None


_SUPPORTED = sorted(k for k, v in FUNCTIONS.items() if v is not None)
_DDOF = ("var", "std", "nanvar", "nanstd")


def _options(tr, node, api, kind, args, keywords):
    """The ddof of var/std; rejects axis and the other keywords."""
    names = ["axis", "dtype", "out", "ddof"] if kind in _DDOF else ["axis"]
    given = {}
    for k, v in zip(names, args):
        given[k] = v
    for kw in keywords:
        if kw.arg is None or kw.arg in given:
            raise tr.error(node, f"{api}(): unsupported or repeated argument")
        given[kw.arg] = tr.expr(kw.value)
    ddof = 0
    for k, v in given.items():
        if k == "axis":
            if v.type is not None:  # axis=None is the whole array
                raise tr.error(node, f"{api}(): axis= is not supported in translated code "
                                     f"(whole-array reductions only; got axis "
                                     f"{v.const if v.const is not None else v.type})")
        elif k == "ddof" and kind in _DDOF:
            if not isinstance(v.const, int) or isinstance(v.const, bool) or v.const < 0:
                shown = v.const if v.const is not None else v.type
                raise tr.error(node, f"{api}(): ddof must be a non-negative integer "
                                     f"constant (got {shown})")
            ddof = v.const
        elif k in ("dtype", "out") and v.type is None:
            continue
        else:
            raise tr.error(node, f"{api}(): argument '{k}' is not supported in translated "
                                 f"code")
    return ddof


def _sum_type(t: Scalar) -> Scalar:
    """np.add.reduce's default accumulator: int64/uint64 for smaller integers and bool."""
    if t.kind == "b" or t.kind == "i" and t.bits < 64:
        return int64
    if t.kind == "u" and t.bits < 64:
        return uint64
    return t


def _real(t: Scalar) -> Scalar:
    return {"complex64": float32, "complex128": float64}.get(t.name, t)


def _reduce(tr, node, api, kind, arr, args, keywords):
    ddof = _options(tr, node, api, kind, args, keywords)
    t = arr.type.dtype
    if t.name == "float16" and kind not in ("min", "max", "argmin", "argmax", "all", "any",
                                            "nanmin", "nanmax", "count_nonzero"):
        raise tr.error(node, f"{api}() of a float16 array is not supported yet (got "
                             f"{arr.type}); cast the elements to float32")
    if t.kind == "c" and kind in ("min", "max", "argmin", "argmax", "nanmin", "nanmax",
                                  "median", "nanmedian"):
        raise tr.error(node, f"{api}() of a complex array is not supported (got {arr.type})")
    a = arr.code
    ct = ctype(t)
    floaty = float64 if t.kind in "biu" else t  # mean/var compute in float64 for integers
    if kind in ("sum", "nansum"):
        r = _sum_type(t)
        fn = "sum" if kind == "sum" or t.kind not in "fc" else "nansum"
        return Val(f"nu::red::{fn}<{ctype(r)}>({a})", r)
    if kind in ("prod", "nanprod"):
        r = _sum_type(t)
        skip = "true" if kind == "nanprod" and t.kind in "fc" else "false"
        return Val(f"nu::red::prod<{ctype(r)}>({a}, {skip})", r)
    if kind == "mean" or kind == "nanmean" and t.kind not in "fc":
        return Val(f"nu::red::mean<{ctype(floaty)}, {ctype(floaty)}>({a})", floaty)
    if kind == "nanmean":
        return Val(f"nu::red::nanmean<{ct}, {ct}>({a})", t)
    if kind in ("nanvar", "nanstd") and t.kind not in "fc":  # no NaN: np.var / np.std
        kind = kind[3:]
    if kind in _DDOF:
        r = _real(floaty)
        fn = "nanvar" if kind.startswith("nan") else "var"
        v = Val(f"nu::red::{fn}<{ctype(r)}, {ctype(floaty)}>({a}, {ddof}LL)", r)
        if kind in ("var", "nanvar"):
            return v
        return call_library(tr, node, LibFuncRef("numpy", "sqrt"), [v], {})
    if kind == "count_nonzero":
        return Val(f"nu::red::count_nonzero({a})", int64)
    if kind in ("median", "nanmedian"):  # the mean of the middle elements' type
        skip = "true" if kind == "nanmedian" else "false"
        return Val(f"nu::red::median<{ctype(floaty)}, {ctype(floaty)}>({a}, {skip})", floaty)
    if kind in ("min", "max"):
        return Val(f"nu::red::extremum<{'true' if kind == 'max' else 'false'}>({a})", t)
    if kind in ("nanmin", "nanmax"):
        return Val(f"nu::red::nan_extremum<{'true' if kind == 'nanmax' else 'false'}>({a})", t)
    if kind in ("argmin", "argmax"):
        return Val(f"nu::red::arg_extremum<{'true' if kind == 'argmax' else 'false'}>({a})",
                   int64)
    if kind in ("all", "any"):
        return Val(f"nu::red::all_any<{'true' if kind == 'any' else 'false'}>({a})", bool_)
    raise AssertionError(kind)
