"""Numba's ``numba.cuda.vector_types``: ``vector_types`` (name -> :class:`VectorType`) and
the type class. The constructors themselves are ``cuda.float32x4``, ``cuda.float4``...
(see numbacuda_ufunc/_vector_types.py)."""

from .._vector_types import VectorType, VectorTypeStub, vector_type_aliases, vector_types

__all__ = ["VectorType", "VectorTypeStub", "vector_type_aliases", "vector_types"]
