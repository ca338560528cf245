"""CUDA vector types in translated code: ``cuda.float32x4(...)`` builds one, ``v.x``
reads a component (numbacuda_ufunc/_vector_types.py has the types; the C++ side is
src/kernels/nu_vector.cuh).

A constructor takes numbers (cast to the base type, as Numba's typing converts them) and
vectors of the same base type, whose components are spliced in order; the components
must add up to the vector's count. Values are immutable, as in Numba.
"""

from __future__ import annotations

from .._vector_types import VectorType, VectorTypeStub
from ._types import Bottom, is_numeric, kind_of
from ._values import Ref, Val

__all__ = ["VectorCtorRef", "attribute", "construct", "ctor_of", "is_vector"]


class VectorCtorRef(Ref):
    """``cuda.float32x4`` (or an alias) in translated code: a constructor."""

    def __init__(self, vtype: VectorType):
        self.vtype = vtype
        self.name = f"vector type {vtype.name}"


def is_vector(t) -> bool:
    return isinstance(t, VectorType)


def ctor_of(value):
    """The constructor Ref when ``value`` is one of the vector type objects, else None."""
    if isinstance(value, type) and issubclass(value, VectorTypeStub) \
            and value._nu_vector_type is not None:
        return VectorCtorRef(value._nu_vector_type)
    return None


def construct(tr, node, ref: VectorCtorRef, args, kwargs) -> Val:
    vt = ref.vtype
    if kwargs:
        raise tr.error(node, f"{vt.name}() takes positional arguments only (got "
                             f"{', '.join(kwargs)}=)")
    if len(args) == 1 and hasattr(args[0].type, "count") and hasattr(args[0].type, "nu_ctype"):
        return Val(tr.cast(node, args[0], vt), vt)  # float32x2(fp8x2_e4m3 value): _fp8.py
    parts = []
    count = 0
    for k, v in enumerate(args):
        if isinstance(v.type, Bottom):
            return Val("0", v.type)
        if isinstance(v.type, VectorType):
            if v.type.base_type != vt.base_type:
                raise tr.error(node, f"{vt.name}(): argument {k + 1} is a {v.type.name}; "
                                     f"vector arguments must have base type "
                                     f"{vt.base_type.name}")
            parts.append(v.code)
            count += v.type.num_elements
        elif is_numeric(v.type) and kind_of(v.type) != "c":
            parts.append(tr.cast(node, v, vt.base_type))
            count += 1
        else:
            raise tr.error(node, f"{vt.name}(): argument {k + 1} must be a real number or "
                                 f"a {vt.base_type.name} vector (got "
                                 f"{getattr(v.type, 'name', v.type)})")
    if count != vt.num_elements:
        raise tr.error(node, f"{vt.name}() needs {vt.num_elements} component"
                             f"{'s' if vt.num_elements > 1 else ''} (its arguments give "
                             f"{count})")
    return Val(f"nu::make_vector<nu::{vt.name}>({', '.join(parts)})", vt)


def attribute(tr, node, base: Val, attr: str) -> Val:
    vt = base.type
    if attr not in vt.attr_names:
        raise tr.error(node, f"{vt.name} has no attribute '.{attr}' (it has "
                             f"{', '.join('.' + a for a in vt.attr_names)})")
    return Val(f"({base.code}).{attr}", vt.base_type)
