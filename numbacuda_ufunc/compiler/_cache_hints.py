"""``cuda.ldca/ldcg/ldcs/ldlu/ldcv(array, index)`` and ``cuda.stcg/stcs/stwb/stwt(array,
index, value)``: one element loaded or stored with a PTX cache operator
(src/kernels/nu_cache_hints.cuh), as Numba's cache-hint functions.

``array`` is an array of integers or floats (float16, float32, float64) or a typed pointer
(a ``CPointer`` argument). The index is an integer, or a tuple of integers with one item per
dimension; on arrays it wraps and is bounds-checked exactly as ``a[i]`` is (the element's
address comes from the same ``a(i, j)`` accessor), on pointers it is C pointer arithmetic.
"""

from __future__ import annotations

from ..types import CPointer, Scalar
from ._types import TupleType, Weak, element_ctype, is_array, kind_of, strong
from ._values import Ref, Val, bind_arguments

__all__ = ["call"]

_OPS = {"ldca": "ca", "ldcg": "cg", "ldcs": "cs", "ldlu": "lu", "ldcv": "cv",
        "stcg": "cg", "stcs": "cs", "stwb": "wb", "stwt": "wt"}


def _name(t) -> str:
    return getattr(strong(t), "name", str(t))


def _index(tr, node, api, t, idx: Val) -> list[str]:
    """The index codes, one per dimension of array type ``t`` (one for a pointer)."""
    ndim = t.ndim if is_array(t) else 1
    if isinstance(idx.type, TupleType):
        items = idx.type.items
        codes = [f"({idx.code}).v{k}" for k in range(len(items))]
        if isinstance(idx.const, tuple):
            codes = [str(int(c)) for c in idx.const]
        if len(items) != ndim:
            raise tr.error(node, f"{api}: Expected {ndim} indices, got {len(items)}")
    else:
        items, codes = [idx.type], [idx.code]
        if ndim != 1:
            raise tr.error(node, f"{api}: Expected {ndim} indices, got a scalar")
    for it in items:
        if isinstance(it, Ref) or not isinstance(it, (Scalar, Weak)) or kind_of(it) != "i":
            raise tr.error(node, f"{api}: {_name(it)} is not a valid index (indices are "
                                 f"integers)")
    return [f"(long long)({c})" for c in codes]


def call(tr, node, key: str, args, kwargs) -> Val:
    api = f"cuda.{key}()"
    store = key.startswith("st")
    params = ("array", "i", "value") if store else ("array", "i")
    vals = bind_arguments(tr, node, api, args, kwargs, params)
    ary, idx = vals[0], vals[1]
    t = ary.type
    if not (is_array(t) or isinstance(t, CPointer) and t.dtype is not None):
        raise tr.error(node, f"{api}: the first argument must be an array or a typed pointer "
                             f"(got {getattr(t, 'name', t)})")
    dtype = t.dtype
    if not isinstance(dtype, Scalar) or dtype.kind not in "iuf" or dtype.name == "bfloat16":
        raise tr.error(node, f"{api}: {key} requires array of integer or float type "
                             f"(int8..uint64, float16, float32, float64; got {t})")
    codes = _index(tr, node, api, t, idx)
    if is_array(t):
        address = f"&({ary.code})({', '.join(codes)})"
    else:
        address = f"(({ary.code}) + {codes[0]})"
    op = f"nu::kern::cache_op::{_OPS[key]}"
    ct = element_ctype(dtype)
    if not store:
        return Val(f"nu::kern::cache_load<{op}, {ct}>({address})", dtype)
    value = vals[2]
    tr._numeric(node, value, api)
    return Val(f"nu::kern::cache_store<{op}, {ct}>({address}, {tr.cast(node, value, dtype)})",
               None)
