"""Record (structured) dtypes in translated functions: C++ structs and field access.

Each NumPy record dtype becomes one C++ struct, ``nu_rec_<hash8>``, with every field at
NumPy's byte offset (explicit padding members between them) and ``static_assert`` checks of
``sizeof`` and of each field's offset, so NVRTC and the host compiler lay it out exactly as
NumPy does. The structs a translation unit uses are emitted at its top
(:func:`definitions`), nested records first.

A record *value* in translated code is a pointer to its bytes (``nu_rec_x*``): ``r = a[i]``
keeps a reference, so ``r.x = 1`` writes the array, and a record passed to a device function
or as a kernel argument is passed by reference, as in Numba. What a field access gives
(src/kernels/nu_record.cuh):

* a scalar field: the value (``r.x``), or an lvalue for stores; a field of a packed dtype
  that is not at a multiple of its alignment in every element is an ``nu::unaligned<T>``,
  copied byte by byte so the GPU never issues a misaligned access;
* a nested record field: a pointer to the inner record;
* a sub-array field (``('h', f4, (3, 2))``): a C-contiguous ``nu::array`` view of its bytes;
* ``a.x`` / ``a['x']`` on an array of records: the field of every element, an array view of
  the same shape and strides (``nu::field_view``).

Fields of other types (strings, raw bytes, datetimes) are kept as opaque bytes: the record
can still be used, and reading such a field is a CompileError naming it and its dtype.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass

import numpy as np

from ..types import Array, CharSeq, Record, Scalar, from_dtype
from ._scalar_ctypes import scalar_ctype

__all__ = ["MAX_RECORD_BYTES", "Field", "definitions", "field", "struct_name"]

MAX_RECORD_BYTES = 4096  # the bounds-checked out-of-range element (nu_array.cuh) holds this

_NAME = re.compile(r"nu_rec_[0-9a-f]{8}")
_lock = threading.Lock()
_layouts: dict = {}  # repr(dtype) -> _Layout
_by_name: dict = {}  # struct name -> _Layout


class RecordError(TypeError):
    """A record dtype the translator cannot lay out, or a field it cannot access."""


@dataclass(frozen=True)
class Field:
    """One field of a record: how the struct holds it and what accessing it gives."""

    name: str
    member: str  # the C++ member
    offset: int
    dtype: np.dtype  # the field's own dtype (for a sub-array, the whole (base, shape))
    kind: str  # "scalar", "record", "array" or "opaque"
    type: object = None  # Scalar / Record; the element type of a sub-array
    shape: tuple = ()  # sub-array dimensions
    aligned: bool = True  # at a multiple of its alignment in every element


@dataclass(frozen=True)
class _Layout:
    record: Record
    name: str
    alignment: int
    fields: dict  # field name -> Field
    text: str  # the C++ definition
    needs: tuple  # struct names of nested records


def _natural_alignment(t) -> int:
    if isinstance(t, Record):
        return _layout(t).alignment
    if isinstance(t, CharSeq):
        return 1  # nu::chars<N>: bytes
    if t.kind == "c":
        return t.dtype.itemsize // 2  # nu::complex<T>: two T, as NumPy's complex
    return t.dtype.itemsize


def _element_ctype(t) -> str:
    # A field is a scalar, a string or a nested record (never a tuple, weak or array type).
    return _layout(t).name if isinstance(t, Record) else scalar_ctype(t)


def _classify(fdt: np.dtype):
    """(kind, element type, shape) of a field dtype; kind "opaque" for unsupported ones."""
    shape = ()
    base = fdt
    if fdt.subdtype is not None:
        base, shape = fdt.subdtype
    try:
        t = from_dtype(base)
    except TypeError:
        return "opaque", None, shape
    if shape:
        return "array", t, shape
    return ("record" if isinstance(t, Record) else "scalar"), t, shape


def _member_name(name: str, index: int) -> str:
    if name.isidentifier() and name.isascii():
        return f"f_{name}"
    return f"f{index}"


def _layout(rec: Record) -> _Layout:
    key = repr(rec.dtype)
    with _lock:
        hit = _layouts.get(key)
    if hit is not None:
        return hit
    made = _build(rec)
    with _lock:
        made = _layouts.setdefault(key, made)
        _by_name.setdefault(made.name, made)
    return made


def _build(rec: Record) -> _Layout:
    dt = rec.dtype
    if not dt.names or dt.itemsize == 0:
        raise RecordError(f"record dtype {dt} has no fields (or no bytes); kernels take "
                          f"records with at least one field")
    if dt.itemsize > MAX_RECORD_BYTES:
        raise RecordError(f"record dtype {dt} is {dt.itemsize} bytes; kernels take records of "
                          f"at most {MAX_RECORD_BYTES} bytes")
    name = "nu_rec_" + hashlib.sha256(repr(dt).encode()).hexdigest()[:8]
    items = sorted(((n,) + tuple(dt.fields[n][:2]) for n in dt.names), key=lambda x: x[2])
    fields, members, needs = {}, [], []
    alignment, end, pad = 1, 0, 0
    checks = [f"static_assert(sizeof({name}) == {dt.itemsize}, \"{name}: NumPy's itemsize\");"]
    for index, (fname, fdt, offset) in enumerate(items):
        if offset < end:
            raise RecordError(f"record dtype {dt}: field '{fname}' overlaps the field before "
                              f"it; kernels take records whose fields do not overlap")
        kind, t, shape = _classify(fdt)
        member = _member_name(fname, index)
        if offset > end:
            members.append(f"    unsigned char nu_pad{pad}[{offset - end}];")
            pad += 1
        if kind == "opaque":
            a, aligned = 1, True
            decl = f"unsigned char {member}[{fdt.itemsize}];"
        else:
            a = _natural_alignment(t)
            aligned = offset % a == 0 and dt.itemsize % a == 0
            ct = _element_ctype(t)
            if isinstance(t, Record):
                needs.append(_layout(t).name)
            if kind == "array":
                decl = f"unsigned char {member}[{fdt.itemsize}];"
            elif kind == "record" and not aligned:
                decl = f"unsigned char {member}[{fdt.itemsize}];"
            elif kind == "scalar" and not aligned:
                decl = f"nu::unaligned<{ct}> {member};"
            else:
                decl = f"{ct} {member};"
            if aligned:
                alignment = max(alignment, a)
        members.append(f"    {decl}  // '{fname}' {fdt} at {offset}"
                       if fname.isascii() and fname.isprintable() else f"    {decl}")
        checks.append(f"NU_RECORD_OFFSET({name}, {member}, {offset});")
        fields[fname] = Field(fname, member, offset, fdt, kind, t, tuple(shape), aligned)
        end = offset + fdt.itemsize
    if dt.itemsize > end:
        members.append(f"    unsigned char nu_pad{pad}[{dt.itemsize - end}];")
    text = "\n".join([f"struct alignas({alignment}) {name} {{  // {dt}"] + members + ["};"]
                     + checks)
    return _Layout(rec, name, alignment, fields, text, tuple(needs))


def struct_name(rec: Record) -> str:
    """The C++ struct of a record type (laid out on first use)."""
    return _layout(rec).name


def element_ctype(t) -> str:
    """The C++ type of one array element of type ``t`` (a record's struct, or a scalar's)."""
    return _element_ctype(t)


def definitions(text: str) -> str:
    """The struct definitions ``text`` refers to, nested records before their users, each
    guarded so that translation units batching several functions define it once."""
    done, out = set(), []

    def emit(name):
        if name in done:
            return
        done.add(name)
        with _lock:
            layout = _by_name.get(name)
        if layout is None:
            return
        for inner in layout.needs:
            emit(inner)
        out.append(f"#ifndef NU_DEFINED_{name}\n#define NU_DEFINED_{name}\n{layout.text}\n"
                   f"#endif")

    for name in dict.fromkeys(_NAME.findall(text)):
        emit(name)
    return "\n".join(out) + ("\n\n" if out else "")


def _fields_text(rec: Record) -> str:
    return ", ".join(rec.dtype.names)


def field(rec: Record, name: str):
    """The Field ``name`` of ``rec``; RecordError naming the fields when there is none."""
    f = _layout(rec).fields.get(name)
    if f is None:
        raise RecordError(f"record dtype {rec.dtype} has no field '{name}' (its fields: "
                          f"{_fields_text(rec)})")
    return f


def read(rec_code: str, rec: Record, f: Field):
    """(code, type) of reading field ``f`` of the record at pointer ``rec_code``."""
    ref = f"({rec_code})->{f.member}"
    if f.kind == "opaque":
        raise RecordError(f"field '{f.name}' of record dtype {rec.dtype} has dtype {f.dtype}, "
                          f"which kernels cannot use (supported field types: bool, integers, "
                          f"floats, complex, records and sub-arrays of those)")
    if f.kind == "scalar" and isinstance(f.type, CharSeq):
        raise RecordError(f"field '{f.name}' of record dtype {rec.dtype} has dtype {f.dtype}: "
                          f"kernels can store str and bytes constants into it, not read it")
    if f.kind == "scalar":
        return (ref if f.aligned else f"nu::field_value({ref})"), f.type
    if not f.aligned:
        raise RecordError(f"field '{f.name}' ({f.dtype}) of the packed record dtype "
                          f"{rec.dtype} is not aligned in every element; read its scalar "
                          f"fields through a dtype made with align=True")
    if f.kind == "record":
        return f"(&{ref})", f.type
    dims = ", ".join(f"{n}LL" for n in f.shape)
    return (f"nu::member_array<{_element_ctype(f.type)}, {len(f.shape)}>({ref}, {{{dims}}})",
            Array(f.type, len(f.shape), "C"))


def store_ref(rec_code: str, rec: Record, f: Field):
    """(lvalue code, type) of field ``f`` for an assignment: scalar fields only."""
    if f.kind != "scalar":
        read(rec_code, rec, f)  # raises for opaque and unaligned fields
        what = "a record" if f.kind == "record" else "a sub-array"
        raise RecordError(f"cannot assign to field '{f.name}' of record dtype {rec.dtype}: it "
                          f"is {what}; assign its fields or elements one by one")
    return f"({rec_code})->{f.member}", f.type


def view(arr_code: str, t: Array, f: Field, rec: Record):
    """(code, type) of ``a.x``: the field of every element of the record array ``a``."""
    if f.kind == "opaque" or not f.aligned:
        read("nullptr", rec, f)  # the same error as a read
    if f.kind == "scalar" and not f.aligned:
        raise RecordError(f"field '{f.name}' of the packed record dtype {rec.dtype} is not "
                          f"aligned in every element, so it cannot be viewed as an array; "
                          f"read it element by element (a[i].{f.name})")
    if f.kind == "array":
        raise RecordError(f"a view of the sub-array field '{f.name}' across the whole array is "
                          f"not supported; index the record first (a[i].{f.name}[j])")
    code = f"nu::field_view<{_element_ctype(f.type)}>({arr_code}, {f.offset}LL)"
    return code, Array(f.type, t.ndim, "A")


def is_record(t) -> bool:
    return isinstance(t, Record)


def random_states_ok(t) -> bool:
    """Whether array type ``t`` holds xoroshiro128+ states in Numba's record layout."""
    if not (isinstance(t, Array) and isinstance(t.dtype, Record) and t.ndim == 1):
        return False
    fields = t.dtype.dtype.fields
    return (set(fields) == {"s0", "s1"} and t.dtype.dtype.itemsize == 16
            and fields["s0"][0] == np.uint64 and fields["s0"][1] == 0
            and fields["s1"][0] == np.uint64 and fields["s1"][1] == 8)


assert issubclass(Record, Scalar)
