"""Pointer values in translated code: ``CPointer`` kernel arguments, cffi's
``ffi.from_buffer(a)`` and Numba's ``carray``/``farray``.

A pointer is a value of type ``CPointer(t)`` (``void*`` when ``t`` is None), held in C++ as
``T*``. Kernels receive one as an integer address (a ``CPointer`` parameter), or take the
address of an array's first element with ``ffi.from_buffer(a)``; foreign functions
(``cuda.declare_device``) accept it for their ``CPointer`` parameters, and
``carray(ptr, shape, dtype)`` turns it back into an array view of the given shape;
``p[i]`` reads and writes the elements it points at.
"""

from __future__ import annotations

import ast

from ..types import Array, CPointer, Record, Scalar
from ._types import TupleType, Weak, element_ctype, is_array, kind_of, strong
from ._values import Ref, Val, bind_arguments

__all__ = ["FfiRef", "PointerArrayRef", "attribute", "element", "from_buffer", "is_cffi_ffi",
           "pointer_array"]


class FfiRef(Ref):
    """A ``cffi.FFI()`` object (or one of its methods, ``method`` set)."""

    def __init__(self, method=None):
        self.method = method
        self.name = f"ffi.{method}" if method else "cffi FFI object"


class PointerArrayRef(Ref):
    """Numba's ``carray`` (order "C") or ``farray`` ("F")."""

    def __init__(self, order):
        self.order = order
        self.name = "carray" if order == "C" else "farray"


def is_cffi_ffi(value) -> bool:
    cls = type(value)
    return cls.__name__ == "FFI" and cls.__module__.partition(".")[0] == "cffi"


def attribute(tr, node, attr) -> Val:
    if attr != "from_buffer":
        raise tr.error(node, f"ffi.{attr} is not supported in translated code (supported: "
                             f"ffi.from_buffer)")
    return Val("", FfiRef(attr))


def from_buffer(tr, node, args, kwargs) -> Val:
    """``ffi.from_buffer(a)``: a pointer to the first element of array ``a``."""
    if kwargs or len(args) != 1:
        raise tr.error(node, "ffi.from_buffer() takes one argument, an array")
    (a,) = args
    if not is_array(a.type):
        raise tr.error(node, f"ffi.from_buffer() takes an array (got "
                             f"{getattr(a.type, 'name', a.type)})")
    ct = element_ctype(a.type.dtype)
    return Val(f"reinterpret_cast<{ct}*>(({a.code}).data)", CPointer(a.type.dtype))


def pointer_array(tr, node, order, args, kwargs, dtype_of) -> Val:
    """``carray(ptr, shape, dtype=None)`` (``order`` "C") or ``farray`` ("F"): the
    contiguous array of ``shape`` at ``ptr``. ``dtype_of(val)`` reads a dtype argument."""
    api = "carray()" if order == "C" else "farray()"
    ptr, shape, dtype_arg = bind_arguments(tr, node, api, args, kwargs, ("ptr", "shape", "dtype"),
                                           required=2)
    if not isinstance(ptr.type, CPointer):
        raise tr.error(node, f"{api}: ptr must be a pointer (a CPointer argument or "
                             f"ffi.from_buffer(...)) (got {getattr(ptr.type, 'name', ptr.type)})")
    dtype = ptr.type.dtype
    if dtype_arg is not None:
        want = dtype_of(dtype_arg)
        if dtype is not None and want != dtype:
            raise tr.error(node, f"{api}: mismatching dtype {want} for a pointer to {dtype}")
        dtype = want
    if dtype is None:
        raise tr.error(node, f"{api}: dtype is required for a void pointer")
    if isinstance(shape.type, TupleType):
        dims = [Val(f"({shape.code}).v{k}", t) for k, t in enumerate(shape.type.items)]
        if isinstance(shape.const, tuple):
            dims = [Val(str(c), t, c) for c, t in zip(shape.const, shape.type.items)]
    else:
        dims = [shape]
    if not dims:
        raise tr.error(node, f"{api}: shape must have at least one dimension")
    for d in dims:
        t = strong(d.type)
        if not isinstance(t, Scalar) or kind_of(t) not in ("i", "u"):
            raise tr.error(node, f"{api}: shape must be an integer or a tuple of integers "
                                 f"(got {getattr(d.type, 'name', d.type)})")
    ct = element_ctype(dtype)
    extents = ", ".join(f"(long long)({d.code})" for d in dims)
    view = "contiguous_view" if order == "C" else "fortran_view"
    return Val(f"nu::kern::{view}<{ct}, {len(dims)}>(reinterpret_cast<{ct}*>({ptr.code}), "
               f"{{{extents}}})", Array(dtype, len(dims), order))


def element(tr, node, base: Val):
    """``p[i]`` on a typed pointer: the element ``i`` places after ``*p`` (C's pointer
    arithmetic, as Numba's: no bounds and no wrap-around of negative indices). The code
    is an lvalue (a ``T&``; for a record, its address, as records are held)."""
    t = base.type
    if t.dtype is None:
        raise tr.error(node, "a void pointer cannot be indexed; make an array of it with "
                             "carray(ptr, shape, dtype)")
    if isinstance(node.slice, ast.Tuple) or isinstance(node.slice, ast.Slice):
        raise tr.error(node, f"a pointer ({t}) takes one integer index")
    idx = tr.expr(node.slice)
    if not isinstance(idx.type, (Scalar, Weak)) or kind_of(idx.type) != "i":
        raise tr.error(node, f"a pointer index must be an integer (got "
                             f"{getattr(idx.type, 'name', idx.type)})")
    code = f"({base.code})[(long long)({idx.code})]"
    if isinstance(t.dtype, Record):
        return Val(f"(&{code})", t.dtype)
    return Val(code, t.dtype)
