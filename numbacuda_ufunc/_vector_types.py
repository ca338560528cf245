"""CUDA's vector types (``float4``, ``short2``...) with Numba's names: ``cuda.float32x4``,
``cuda.int16x2``..., for 1 to 4 components of int8..int64, uint8..uint64, float32 and
float64, and the C names as aliases (``cuda.float4 is cuda.float32x4``).

In a kernel or device function ``cuda.float32x3(a, b, c)`` builds a value from numbers
(cast to the base type) and vectors of the same base type, as long as the components add
up (``float32x4(float32x2(...), z, w)``); ``v.x .y .z .w`` read them. Values are passed to
and returned from device functions. The generated C++ uses CUDA's built-in types
(src/kernels/nu_vector.cuh), so a ``float4`` reaches foreign CUDA C++ functions as one.

On the host the same call builds a small immutable value with the same attributes, so a
kernel's Python function runs as Python too. This module is pure Python (the translator
reads it); ``numbacuda_ufunc.cuda.vector_types`` is Numba's module name for it.
"""

from __future__ import annotations

import inspect

import numpy as np

from .types import (
    Type,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ = ["VectorType", "VectorTypeStub", "vector_types", "vector_type_aliases"]

_ATTRS = ("x", "y", "z", "w")
_BASES = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64)


class VectorType(Type):
    """The type of a vector value: ``base_type`` (a scalar type), ``attr_names`` (``('x',
    'y')``...), ``num_elements`` and ``user_facing_object`` (what ``cuda.<name>`` is),
    as Numba's ``VectorType``."""

    def __init__(self, name, base_type, attr_names, user_facing_object):
        super().__init__(name)
        self._base_type = base_type
        self._attr_names = tuple(attr_names)
        self._user_facing_object = user_facing_object

    @property
    def base_type(self):
        return self._base_type

    @property
    def attr_names(self) -> tuple:
        return self._attr_names

    @property
    def num_elements(self) -> int:
        return len(self._attr_names)

    @property
    def user_facing_object(self):
        return self._user_facing_object


class VectorTypeStub:
    """Base of ``cuda.float32x4`` and the others: called in a kernel it builds a vector
    value; called on the host it builds this immutable stand-in with the same
    components."""

    __slots__ = ("_components",)
    _nu_vector_type: VectorType = None  # set on each subclass
    aliases: list = []

    def __init__(self, *parts):
        vt = self._nu_vector_type
        components = []
        for p in parts:
            if isinstance(p, VectorTypeStub):
                if p._nu_vector_type.base_type != vt.base_type:
                    raise TypeError(f"{vt.name}(): a vector argument must have base type "
                                    f"{vt.base_type} (got {p._nu_vector_type.name})")
                components.extend(p._components)
            elif isinstance(p, (bool, int, float, np.generic)) and not isinstance(p, complex):
                components.append(np.asarray(p).astype(vt.base_type.dtype)[()])
            else:
                raise TypeError(f"{vt.name}(): arguments must be numbers or {vt.base_type} "
                                f"vectors (got {type(p).__name__})")
        if len(components) != vt.num_elements:
            raise TypeError(f"{vt.name}(): the arguments give {len(components)} component"
                            f"{'s' if len(components) != 1 else ''}, {vt.name} has "
                            f"{vt.num_elements}")
        self._components = tuple(components)

    def __getattr__(self, name):
        attrs = self._nu_vector_type.attr_names
        if name in attrs:
            return self._components[attrs.index(name)]
        raise AttributeError(f"{self._nu_vector_type.name} has no attribute {name!r} "
                             f"(it has {', '.join(attrs)})")

    def __setattr__(self, name, value):
        if name != "_components":
            raise AttributeError(f"{self._nu_vector_type.name} values are immutable")
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        return (isinstance(other, VectorTypeStub)
                and other._nu_vector_type == self._nu_vector_type
                and other._components == self._components)

    def __hash__(self):
        return hash((self._nu_vector_type.name, self._components))

    def __repr__(self):
        return f"{self._nu_vector_type.name}({', '.join(repr(c) for c in self._components)})"


def _c_aliases() -> dict:
    """C name -> our base type name, by this platform's C type sizes (``long`` is 64-bit
    on Linux, 32-bit on Windows), as Numba maps them."""
    def bits(t):
        return np.dtype(t).itemsize * 8

    return {
        "char": f"int{bits(np.byte)}", "short": f"int{bits(np.short)}",
        "int": f"int{bits(np.intc)}", "long": f"int{bits(np.int_)}",
        "longlong": f"int{bits(np.longlong)}", "uchar": f"uint{bits(np.ubyte)}",
        "ushort": f"uint{bits(np.ushort)}", "uint": f"uint{bits(np.uintc)}",
        "ulong": f"uint{bits(np.uint)}", "ulonglong": f"uint{bits(np.ulonglong)}",
        "float": f"float{bits(np.single)}", "double": f"float{bits(np.double)}",
    }


def _make_all():
    types = {}
    for base in _BASES:
        for n in (1, 2, 3, 4):
            name = f"{base.name}x{n}"
            attrs = _ATTRS[:n]
            stub = type(name, (VectorTypeStub,), {
                "__slots__": (),
                "__doc__": f"CUDA's {name}: {n} {base.name} component{'s' if n > 1 else ''} "
                           f"({', '.join(attrs)}). Build it in kernels from numbers and "
                           f"{base.name} vectors.",
                "__module__": "numbacuda_ufunc.cuda",
                "__signature__": inspect.Signature([
                    inspect.Parameter(a, inspect.Parameter.POSITIONAL_ONLY) for a in attrs]),
                "aliases": [],
            })
            vt = VectorType(name, base, attrs, stub)
            stub._nu_vector_type = vt
            types[name] = vt
    aliases = {}
    for c_name, base_name in _c_aliases().items():
        for n in (1, 2, 3, 4):
            vt = types[f"{base_name}x{n}"]
            vt.user_facing_object.aliases.append(f"{c_name}{n}")
            aliases[f"{c_name}{n}"] = vt
    return types, aliases


vector_types, vector_type_aliases = _make_all()
