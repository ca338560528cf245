"""Array arguments inside translated functions: indexing, views, attributes, loops.

An array is a ``nu::array<T, N>`` view (src/kernels/nu_array.cuh) passed by value; its
byte strides make every NumPy layout readable in place. What the translator emits:

* ``a[i, j]`` with one index per dimension: ``v_a(i, j)``, a ``T&`` (read or written);
* ``a[i]`` on an N-d array (N > 1): ``v_a.row(i)``, the (N-1)-d view of that row;
* ``a.shape[k]`` and ``len(a)``: ``v_a.shape[k]`` and ``v_a.shape[0]``; ``a.size``:
  ``v_a.size()``; ``a.ndim``: a constant.

Shapes and sizes are typed as Python ints (weak, held in ``nu::i64``), as they are when
the Python function runs on NumPy arrays: ``x / a.shape[0]`` stays float32 for float32
``x``. Elements have the array's dtype, as NumPy scalars read from an array do. Whole-array
expressions (``a + 1``, ``a[1:3]``, ``np.sqrt(a)``, ``a.sum()``) are outside the subset and
raise CompileError saying so.
"""

from __future__ import annotations

import ast

from ..types import Array, CharSeq, CPointer, Record, from_dtype
from . import _exceptions as exceptions
from . import _pointers as pointers
from . import _record_access as records
from ._array_stores import check_storable, store_chars, ufunc_into
from ._exceptions import out_of_range
from ._kernel_api import dtype_arg
from ._types import (
    BOTTOM,
    WEAK_INT,
    Bottom,
    FixedArray,
    TupleType,
    ctype,
    element_ctype,
    is_array,
    is_int_like,
    kind_of,
)
from ._values import Ref, TypeRef, Val, const_val

__all__ = [
    "address",
    "attribute",
    "assign_view",
    "copy",
    "aug_store",
    "for_each",
    "length",
    "load",
    "reject_method_call",
    "reshape",
    "shape_item",
    "shape_items",
    "store",
    "ufunc_into",
    "unpack_shape",
    "view",
]

_SUPPORTED = ("a[i, j], a[i] (a row), slices a[1:n, ::2], a.shape, a.strides, a.size, a.itemsize, "
              "a.nbytes, a.ndim, a.dtype, "
              "a.real, a.imag, a.reshape(...), a.view(dtype), a.copy() (of an array whose "
              "shape is known at compile time) and len(a)")


def _view_type(t: Array, k: int) -> Array:
    """Type of ``a[i0, ..., ik-1]`` with k < ndim indices: the trailing dimensions."""
    # Rows of a C-contiguous array stay C-contiguous; any other row is strided.
    return Array(t.dtype, t.ndim - k, "C" if t.layout == "C" else "A")


def _index_codes(tr, node, t: Array):
    """C++ codes of the indices of ``node`` (a Subscript on an array of type ``t``), or
    None while an index type is still unknown (inference)."""
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for p in parts:
        if isinstance(p, ast.Slice):
            raise tr.error(node, f"updating a slice of {t} in place (a[1:n] += x) is not "
                                 f"supported; update the elements, one index per dimension, "
                                 f"in a loop")
    vals = [tr.expr(p) for p in parts]
    if any(isinstance(v.type, Bottom) for v in vals):
        return None
    if len(vals) == 1 and isinstance(vals[0].type, TupleType):  # idx = (i, j); a[idx]
        tup = vals[0]
        vals = [Val(f"({tup.code}).v{k}", it) for k, it in enumerate(tup.type.items)]
    # A 0-d integer array indexes by its element, as in NumPy (a[np.asarray(2)]).
    vals = [Val(f"({v.code})()", v.type.dtype)
            if is_array(v.type) and v.type.ndim == 0 and kind_of(v.type.dtype) in "iu" else v
            for v in vals]
    for v in vals:
        if v.type is None or isinstance(v.type, (Ref, TupleType)) or is_array(v.type):
            name = getattr(v.type, "name", "None")
            raise tr.error(node, f"array index must be an integer (got {name})")
        if kind_of(v.type) == "b":
            raise tr.error(node, f"boolean array indices (masks) are not supported; index "
                                 f"with integers (got {v.type})")
        if kind_of(v.type) != "i":
            raise tr.error(node, f"array index must be an integer (got {v.type})")
    if len(vals) > t.ndim:
        raise tr.error(node, f"too many indices for array: {t} is {t.ndim}-dimensional, "
                             f"but {len(vals)} were indexed")
    # Index codes go to nu::array::operator() / row(), which take any integer type and
    # wrap negative values as Python does.
    return [v.code for v in vals]


def _access(base: Val, codes) -> Val:
    t = base.type
    if len(codes) == t.ndim:
        if isinstance(t.dtype, Record):  # a record is a reference to the element (_records)
            return Val(f"(&{base.code}({', '.join(codes)}))", t.dtype)
        return Val(f"{base.code}({', '.join(codes)})", t.dtype)
    code = base.code
    for c in codes:
        code = f"{code}.row({c})"
    return Val(code, _view_type(t, len(codes)))


def _integer(tr, node, v: Val, what):
    if v.type is None or isinstance(v.type, (Ref, TupleType)) or is_array(v.type) \
            or kind_of(v.type) not in ("i", "b"):
        raise tr.error(node, f"{what} must be an integer (got {getattr(v.type, 'name', 'None')})")
    return tr.cast(node, v, WEAK_INT)


def _slice_view(tr, node, base: Val, parts) -> Val:
    """``a[1:n]``, ``a[i, :]``, ``a[::-1]``: a view (nu::subview in nu_array.cuh), with
    Python's slice semantics (negative and out-of-range bounds are clamped)."""
    t = base.type
    if len(parts) > t.ndim:
        raise tr.error(node, f"too many indices for array: {t} is {t.ndim}-dimensional, but "
                             f"{len(parts)} were indexed")
    items, kept = [], t.ndim - len(parts)
    for p in parts:
        if not isinstance(p, ast.Slice):
            v = tr.expr(p)
            if isinstance(v.type, Bottom):
                return Val("0", BOTTOM)
            items.append(f"nu::index_part{{0, {_integer(tr, node, v, 'array index')}, 0LL, 0LL}}")
            continue
        kept += 1
        flags, codes = 1, []
        for bound, flag in ((p.lower, 2), (p.upper, 4), (p.step, 0)):
            if bound is None:
                codes.append("1LL" if flag == 0 else "0LL")
                continue
            v = tr.expr(bound)
            if isinstance(v.type, Bottom):
                return Val("0", BOTTOM)
            if flag == 0 and v.const == 0:
                raise tr.error(node, "slice step cannot be zero")
            codes.append(_integer(tr, node, v, "slice bound"))
            flags |= flag
        items.append(f"nu::index_part{{{flags}, {', '.join(codes)}}}")
    return Val(f"nu::subview<{kept}>({base.code}, {{{', '.join(items)}}})", Array(t.dtype, kept, "A"))


def load(tr, node, base: Val) -> Val:
    """``a[...]`` read: an element (all indices given) or a view (fewer, or slices)."""
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if any(isinstance(p, ast.Slice) for p in parts):
        return _slice_view(tr, node, base, parts)
    codes = _index_codes(tr, node, base.type)
    if codes is None:
        return Val("0", BOTTOM)
    if isinstance(getattr(base.type, "dtype", None), CharSeq) and len(codes) == base.type.ndim:
        raise tr.error(node, f"reading an element of a {base.type.dtype.dtype} array is not "
                             f"supported: kernels can store str and bytes constants into "
                             f"fixed-width bytes and str elements, not read them")
    return _access(base, codes)


def field_name(node):
    """The field a subscript names (``r['x']``, ``a['x']``): a string constant, else None."""
    if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


def _element(tr, target, what):
    """The element a subscript target names, as a Val whose code is a ``T&``; None while
    types are still unknown."""
    base = tr.expr(target.value)
    if isinstance(base.type, Bottom):
        return None
    if isinstance(base.type, Record):  # r['x'] = v
        if isinstance(target.slice, ast.Tuple) and not target.slice.elts:
            return base  # r[()] = rec: a 0-d structured array's one record, whole
        name = field_name(target)
        if name is None:
            name = records.field_at(tr, target, base.type)
        return records.field_store_ref(tr, target, base, name)
    if isinstance(base.type, CPointer):  # p[i] = v
        return pointers.element(tr, target, base)
    if isinstance(base.type, TupleType):
        raise tr.error(target, f"tuples are immutable: cannot {what} an item of {base.type}")
    if not is_array(base.type):
        name = getattr(base.type, "name", "None")
        raise tr.error(target, f"cannot {what} an item of {name} (item assignment is "
                               f"supported only on arrays)")
    codes = _index_codes(tr, target, base.type)
    if codes is None:
        return None
    if len(codes) < base.type.ndim and what == "assign to":
        return _access(base, codes)  # a[i] = x on an N-d array: the row (assign_view)
    if len(codes) < base.type.ndim:
        raise tr.error(target, f"cannot {what} a whole row ({base.type} indexed with "
                               f"{len(codes)} of its {base.type.ndim} indices); assign its "
                               f"elements, one index per dimension")
    return _access(base, codes)



def store(tr, target, v: Val):
    """``a[i, j] = v``: Python evaluates the value first, as C++17 does for ``=``."""
    name = field_name(target)
    if name is not None and not isinstance(v.type, Bottom):  # r['h'] = src, a sub-array
        base = tr.expr(target.value)
        if isinstance(base.type, Record) and records.fill_sub_array(tr, target, base, name, v):
            return
    parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    if any(isinstance(p, ast.Slice) for p in parts):  # a[1:n] = x: the view, then assign
        elem = tr.expr(target)
    else:
        elem = _element(tr, target, "assign to")
    if elem is None or isinstance(elem.type, Bottom) or isinstance(v.type, Bottom):
        return
    if is_array(elem.type):
        assign_view(tr, target, elem, v)
        return
    if isinstance(elem.type, Record):  # a[i] = a[j], a[i] = r: the record's bytes
        records.copy_record(tr, target, elem, v)
        return
    if isinstance(elem.type, CharSeq):  # a[i] = "XYZ", r["name"] = b"XYZ"
        store_chars(tr, target, elem, v)
        return
    check_storable(tr, target, v, elem.type)
    tr.emit(f"{elem.code} = {tr.cast(target, v, elem.type)};")



def assign_view(tr, node, view: Val, v: Val):
    """``a[1:n] = x``, ``a[i] = row``, ``a[:] = b``: NumPy's assignment to a view. A number
    fills every element; an array is copied, its dimensions broadcast against the view's
    (``nu::assign_array``). In a kernel, shapes that do not broadcast raise ValueError, as
    NumPy does, and so does an overlap no element order can copy (NumPy would copy through
    a temporary); the thread ends there (``debug=True`` reports it)."""
    t = view.type
    if isinstance(t.dtype, Record):
        raise tr.error(node, f"assignment to a view of records ({t}) is not supported; "
                             f"assign the records one by one")
    if not is_array(v.type):
        check_storable(tr, node, v, t.dtype)
        tr.emit(f"nu::assign_scalar({view.code}, {tr.cast(node, v, t.dtype)});")
        return
    if isinstance(v.type.dtype, Record):
        raise tr.error(node, f"cannot assign an array of records ({v.type}) to {t}")
    if v.type.ndim > t.ndim:
        raise tr.error(node, f"could not broadcast a {v.type.ndim}-d array ({v.type}) into "
                             f"a {t.ndim}-d view ({t})")
    check_storable(tr, node, Val("", v.type.dtype), t.dtype)
    status = tr.temp("nu_status")
    tr.emit(f"const int {status} = nu::assign_array({view.code}, {v.code});")
    mismatch = exceptions.raise_at_run_time(
        tr, node, ValueError, "could not broadcast the input array into the shape of the "
                              "assigned view")
    overlap = exceptions.raise_at_run_time(
        tr, node, ValueError, "the assigned array overlaps the view with another layout; "
                              "copy it first")
    if mismatch:
        tr.emit(f"if ({status} == 1) {{ {mismatch} }}")
        tr.emit(f"if ({status} == 2) {{ {overlap} }}")
    else:
        tr.emit(f"(void){status};")


def aug_store(tr, s, op):
    """``a[i] += x``: the indices are evaluated once and the element is read before the
    right-hand side, as in Python; the result is cast back to the element type."""
    elem = _element(tr, s.target, "update")
    rhs = tr.expr(s.value)
    if elem is None or isinstance(rhs.type, Bottom):
        return
    ref, old = tr.temp("nu_ref"), tr.temp("nu_old")
    t = ctype(elem.type)
    r = tr.binop(s, op, Val(old, elem.type), rhs)
    if isinstance(r.type, Bottom):
        return
    check_storable(tr, s, r, elem.type)
    # auto&: a field of a packed record is an nu::unaligned<T>, which converts to T.
    tr.emit(f"auto& {ref} = {elem.code};")
    tr.emit(f"const {t} {old} = {ref};")
    tr.emit(f"{ref} = {tr.cast(s, r, elem.type)};")


def shape_items(tr, node):
    """``(array Val, [code of each dimension])`` when ``node`` is ``<array>.shape`` or
    ``<array>.strides`` (bytes, as NumPy's), else None. ``a.shape[k]``, ``len(a.shape)``
    and ``m, n = a.shape`` use this directly, so they work for every ndim without building
    a tuple."""
    if not (isinstance(node, ast.Attribute) and node.attr in ("shape", "strides")):
        return None
    base = tr.expr(node.value)
    if not is_array(base.type):
        return None
    return base, [f"{base.code}.{node.attr}[{k}]" for k in range(base.type.ndim)]


def shape_item(tr, node, base: Val, items) -> Val:
    """``a.shape[k]`` or ``a.strides[k]`` (negative k counts from the end, as in Python)."""
    what = node.value.attr  # "shape" or "strides"
    idx = tr.expr(node.slice)
    n = len(items)
    if isinstance(idx.type, Bottom):
        return Val("0", BOTTOM)
    if not isinstance(idx.const, int) or isinstance(idx.const, bool):
        if not tr._numeric(node.slice, idx, f"{what} index") or not is_int_like(idx.type):
            raise tr.error(node, f"{what} indices must be integers (got {idx.type})")
        k, a = tr.temp("nu_k"), tr.temp("nu_a")
        return Val(f"([&]() -> nu::i64 {{ const auto& {a} = {base.code}; nu::i64 {k} = "
                   f"nu::i64({idx.code}); if ({k} < 0) {k} += {n}; if ({k} < 0 || {k} >= {n})"
                   f" {{ {out_of_range(tr, node)} return 0; }} return {a}.{what}[{k}]; }}())",
                   WEAK_INT)
    k = idx.const + n if idx.const < 0 else idx.const
    if not 0 <= k < n:
        raise tr.error(node, f"{what} index {idx.const} out of range for a {n}-d array")
    return Val(items[k], WEAK_INT)


def attribute(tr, node, base: Val) -> Val:
    t = base.type
    if node.attr in ("shape", "strides"):  # strides in bytes, as NumPy's
        what = node.attr
        if not 2 <= t.ndim <= 4:  # the tuple sizes nu::tupleN holds
            raise tr.error(node, f"the {what} of a {t.ndim}-d array can be used only as "
                                 f"a.{what}[k], len(a.{what}) or unpacked "
                                 f"({'n,' if t.ndim == 1 else 'm, n, ...'} = a.{what})")
        tt = TupleType((WEAK_INT,) * t.ndim)
        dims = ", ".join(f"{base.code}.{what}[{k}]" for k in range(t.ndim))
        return Val(f"{ctype(tt)}{{{dims}}}", tt)
    if node.attr == "size":
        return Val(f"{base.code}.size()", WEAK_INT)
    if node.attr == "itemsize":
        return const_val(t.dtype.dtype.itemsize)
    if node.attr == "nbytes":
        return Val(f"({base.code}.size() * {t.dtype.dtype.itemsize}LL)", WEAK_INT)
    if node.attr == "ndim":
        return const_val(t.ndim)
    if node.attr == "dtype":  # cuda.local.array(n, a.dtype), np.float32(x) style casts
        return Val("", TypeRef(t.dtype))
    if node.attr in ("real", "imag") and t.dtype.kind == "c":  # views, as in NumPy
        part = from_dtype("f4" if t.dtype.name == "complex64" else "f8")
        return Val(f"nu::part_view({base.code}, {int(node.attr == 'imag')})",
                   Array(part, t.ndim, "A"))
    if node.attr == "real":
        return base  # NumPy: the array itself for real dtypes
    if node.attr == "ctypes":
        raise tr.error(node, "of a.ctypes only a.ctypes.data (the address, a uint64) is "
                             "supported in kernels")
    if isinstance(t.dtype, Record):  # a.x: the field of every element
        return records.field_view(tr, node, base, node.attr)
    raise tr.error(node, f"array attribute '.{node.attr}' is not supported (supported on "
                         f"arrays: {_SUPPORTED})")


def address(tr, node, base: Val):
    """``a.ctypes.data``: the address of the array's first element, a uint64 (Numba's
    uintp); None when ``base`` is not an array."""
    if isinstance(base.type, Bottom):
        return Val("0", BOTTOM)
    if not is_array(base.type):
        return None
    return Val(f"nu::u64(reinterpret_cast<unsigned long long>(({base.code}).data))",
               from_dtype("u8"))


def length(tr, node):
    """``len(a)`` (the first dimension) or ``len(a.shape)``; None for other arguments."""
    if len(node.args) != 1 or node.keywords:
        return None
    shape = shape_items(tr, node.args[0])
    if shape is not None:
        return const_val(len(shape[1]))
    a = tr.expr(node.args[0])
    if is_array(a.type):
        return Val(f"{a.code}.shape[0]", WEAK_INT)
    return None


def reject_method_call(tr, node):
    """``a.sum()``, ``a.copy()``...: name the method rather than a missing attribute."""
    base = tr.expr(node.func.value)
    if is_array(base.type):
        raise tr.error(node, f"array method '.{node.func.attr}()' is not supported "
                             f"(supported on arrays: {_SUPPORTED})")


def reshape(tr, node, base: Val) -> Val:
    """``a.reshape(m, n)`` or ``a.reshape((m, n))`` of a C-contiguous array: a view, as in
    Numba; one dimension may be -1. Arrays typed without a layout are checked when the
    kernel runs (kernel.cuh, reshape_view)."""
    t = base.type
    if node.keywords:
        raise tr.error(node, "a.reshape() takes the shape only (no keywords)")
    if not getattr(tr.ctx, "kernel", False):
        raise tr.error(node, "a.reshape() is supported in @cuda.jit kernels (and the device "
                             "functions they call)")
    if t.layout == "F" and t.ndim > 1:
        raise tr.error(node, f"a.reshape() needs a C-contiguous array (got {t})")
    args = [tr.expr(a) for a in node.args]
    if any(isinstance(a.type, Bottom) for a in args):
        return Val("0", BOTTOM)
    if len(args) == 1 and isinstance(args[0].type, TupleType):
        tup = args[0]
        items = tup.type.items
        codes = [f"({tup.code}).v{k}" for k in range(len(items))]
        consts = list(tup.const) if isinstance(tup.const, tuple) else [None] * len(items)
    else:
        items = [a.type for a in args]
        codes = [a.code for a in args]
        consts = [a.const for a in args]
    if not items:
        raise tr.error(node, "a.reshape() needs a shape")
    if any(kind_of(it) != "i" for it in items if not isinstance(it, Ref)) or \
            any(isinstance(it, (Ref, TupleType)) for it in items):
        raise tr.error(node, "a.reshape(): the shape must be integers")
    if sum(c == -1 for c in consts) > 1:
        raise tr.error(node, "a.reshape(): only one dimension can be -1")
    if len(items) > 32:
        raise tr.error(node, f"a.reshape(): at most 32 dimensions (got {len(items)})")
    dims = ", ".join(f"{c}LL" if isinstance(c, int) else f"(long long)({code})"
                     for c, code in zip(consts, codes))
    return Val(f"nu::kern::reshape_view({base.code}, {{{dims}}})",
               Array(t.dtype, len(items), "C"))


_VIEW_ERRORS = {  # nu::view_as's status -> NumPy's message (4: ours, see nu_array.cuh)
    1: "To change to a dtype of a different size, the last axis must be contiguous",
    2: "When changing to a larger dtype, its size must be a divisor of the total size in "
       "bytes of the last axis of the array.",
    3: "Changing the dtype of a 0d array is only supported if the itemsize is unchanged",
    4: "the view is not aligned for its new dtype (its data or a stride is not a multiple "
       "of the dtype's alignment), which the GPU cannot read",
}


def view(tr, node, base: Val) -> Val:
    """``a.view(np.int32)``: the same bytes as another dtype, NumPy's ndarray.view(dtype)
    (nu::view_as): a different itemsize rescales the last axis, which must be contiguous.
    What only the run time can tell (strides, the last axis' length) raises ValueError
    with NumPy's message in a kernel; elsewhere the view is empty."""
    t = base.type
    if node.keywords or len(node.args) != 1:
        raise tr.error(node, "a.view() takes one argument, the dtype (a.view(np.int32)); "
                             "views as another array class are not supported")
    dt = tr.expr(node.args[0])
    if isinstance(dt.type, Bottom):
        return Val("0", BOTTOM)
    new = dtype_arg(tr, node, dt, "a.view()")
    old_size, new_size = t.dtype.dtype.itemsize, new.dtype.itemsize
    if old_size != new_size and t.ndim == 0:
        raise tr.error(node, f"a.view(): {_VIEW_ERRORS[3]} (got {t} viewed as {new})")
    if new_size < old_size and old_size % new_size:
        raise tr.error(node, f"a.view(): When changing to a smaller dtype, its size must be a "
                             f"divisor of the size of original dtype ({t} viewed as {new})")
    if old_size != new_size and t.layout == "F" and t.ndim > 1:
        raise tr.error(node, f"a.view(): {_VIEW_ERRORS[1]} (got the Fortran-ordered {t})")
    # The last axis is rescaled in place, so a C-contiguous array stays one.
    rt = Array(new, t.ndim, t.layout if t.layout in "CA" or t.ndim <= 1 else "A")
    if isinstance(t, FixedArray) and old_size == new_size:
        rt = FixedArray(new, t.shape)
    r, status = tr.temp("nu_view"), tr.temp("nu_status")
    checks = []
    for code, message in _VIEW_ERRORS.items():
        stmt = exceptions.raise_at_run_time(tr, node, ValueError, message)
        if stmt:
            checks.append(f"if ({status} == {code}) {{ {stmt} }}")
    body = " ".join(checks) or f"(void){status};"
    # A lambda keeps it one expression (a while condition evaluates it on every test).
    return Val(f"([&]() {{ {ctype(rt)} {r}; const int {status} = nu::view_as<"
               f"{element_ctype(new)}>({base.code}, &{r}); {body} return {r}; }}())", rt)


def copy(tr, node, base: Val) -> Val:
    """``a.copy()``: a C-contiguous copy in storage of its own. Kernels cannot allocate
    (Numba needs its NRT heap for this), so the copy lives in the thread's local memory,
    like ``cuda.local.array``: the array's shape must be known at compile time (a local,
    shared or global array, or a copy of one); other arrays are refused, naming why."""
    t = base.type
    if node.args or node.keywords:
        raise tr.error(node, "a.copy() takes no arguments (the copy is C-contiguous)")
    what = ast.unparse(node.func.value) if hasattr(ast, "unparse") else "the array"
    if not isinstance(t, FixedArray):
        raise tr.error(node, f"a.copy() of '{what}' ({t}) is not supported: its shape is "
                             f"known only at run time and a kernel cannot allocate memory; "
                             f"copy into a cuda.local.array of a fixed shape, or pass an "
                             f"output array")
    if not getattr(tr.ctx, "kernel", False):
        raise tr.error(node, "a.copy() is supported in @cuda.jit kernels (and the device "
                             "functions they call)")
    if any(loop is None for loop in tr.loops):  # a for or while loop (not an unrolled one)
        # One storage per place in the code: a copy made on every iteration would reuse
        # it, and an earlier iteration's copy kept in a variable would change silently.
        raise tr.error(node, f"a.copy() of '{what}' inside a loop is not supported (its "
                             f"storage is fixed per place in the code); copy before the "
                             f"loop, or copy into a cuda.local.array element by element")
    count = 1
    for s in t.shape:
        count *= s
    elem = element_ctype(t.dtype)
    storage = tr.temp("nu_copy")
    if tr.emitting:
        tr.ctx.local_bytes += count * t.dtype.dtype.itemsize
        # Declared with the function's locals, so the copy outlives the block it is made
        # in (q = a.copy() inside an if, read after it).
        tr.storage.append(f"    {elem} {storage}[{max(count, 1)}];")
    dims = ", ".join(f"{s}LL" for s in t.shape)
    dst = tr.temp("nu_dst")
    rt = FixedArray(t.dtype, t.shape)
    tr.emit(f"const {ctype(rt)} {dst} = nu::kern::contiguous_view<{elem}, {t.ndim}>("
            f"{storage}, {{{dims}}});")
    tr.emit(f"nu::copy_elements({dst}, {base.code});")
    return Val(dst, rt)


def unpack_shape(tr, target, shape):
    """``m, n = a.shape``: each name gets its dimension, for any ndim."""
    base, items = shape
    if len(target.elts) != len(items):
        raise tr.error(target, f"cannot unpack the shape of a {base.type.ndim}-d array "
                               f"into {len(target.elts)} names")
    for t, code in zip(target.elts, items):
        tr.assign_target(t, Val(code, WEAK_INT))


def for_each(tr, s, seq: Val):
    """``for x in a``: the elements of a 1-d array or the rows of an N-d one. The view is
    copied once, as Python evaluates the iterable once; writes through it stay visible."""
    t = seq.type
    arr, i = tr.temp("nu_seq"), tr.temp("nu_i")
    tr.emit("{")
    tr.depth += 1
    tr.emit(f"const {ctype(t)} {arr} = {seq.code};")
    tr.emit(f"for (nu::i64 {i} = 0; {i} < {arr}.shape[0]; ++{i}) {{")
    tr.depth += 1
    tr.assign_target(s.target, _access(Val(arr, t), [i]))
    tr.block(s.body)
    tr.depth -= 1
    tr.emit("}")
    tr.depth -= 1
    tr.emit("}")
