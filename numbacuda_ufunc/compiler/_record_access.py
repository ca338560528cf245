"""Field access on records inside translated functions: the translator's side of
_records.py (which lays the structs out).

``r.x`` / ``r['x']`` read a field; ``r.x = v`` / ``r['x'] = v`` (and ``+=``) write one, the
value cast to the field's type as NumPy's item assignment casts; ``a[i] = r`` copies a
whole record of the same dtype; ``a.x`` / ``a['x']`` on an array of records is the field's
view. Errors name the field and the dtype.
"""

from __future__ import annotations

from ..types import CharSeq, Record
from . import _records
from ._array_stores import store_chars, ufunc_into
from ._types import Bottom, ctype, is_complex
from ._values import Val

__all__ = ["aug_attribute", "copy_record", "field_at", "field_read", "field_store_ref", "field_view", "fill_sub_array",
           "store_attribute", "store_field"]


def _field(tr, node, rec: Record, name: str):
    try:
        return _records.field(rec, name)
    except _records.RecordError as exc:
        raise tr.error(node, str(exc)) from None


def _wrap(tr, node, thunk):
    try:
        return thunk()
    except _records.RecordError as exc:
        raise tr.error(node, str(exc)) from None


def field_at(tr, node, rec: Record) -> str:
    """The name of the field ``r[k]`` selects: k an integer constant, its position (a
    negative k counts from the end), as NumPy indexes a record."""
    idx = tr.expr(node.slice)
    names = rec.dtype.names
    k = idx.const
    if not isinstance(k, int) or isinstance(k, bool):
        raise tr.error(node, f"a record is indexed by a field name or position constant, "
                             f"r['x'] or r[0] (record {rec})")
    if not -len(names) <= k < len(names):
        raise tr.error(node, f"record index {k} is out of range for record dtype {rec.dtype} "
                             f"({len(names)} fields)")
    return names[k]


def field_read(tr, node, base: Val, name: str) -> Val:
    """``r.x``: the field's value (a scalar), inner record, or sub-array view."""
    f = _field(tr, node, base.type, name)
    code, t = _wrap(tr, node, lambda: _records.read(base.code, base.type, f))
    return Val(code, t)


def field_store_ref(tr, node, base: Val, name: str) -> Val:
    """The lvalue of scalar field ``name`` of record ``base``, for a store."""
    f = _field(tr, node, base.type, name)
    code, t = _wrap(tr, node, lambda: _records.store_ref(base.code, base.type, f))
    return Val(code, t)


def field_view(tr, node, base: Val, name: str) -> Val:
    """``a.x`` on an array of records."""
    rec = base.type.dtype
    f = _field(tr, node, rec, name)
    code, t = _wrap(tr, node, lambda: _records.view(base.code, base.type, f, rec))
    return Val(code, t)


def _check_value(tr, node, v: Val, field_type, what):
    if isinstance(v.type, Record) or getattr(v.type, "ndim", None) is not None:
        raise tr.error(node, f"cannot store {v.type} in {what} of type {field_type}")
    tr._numeric(node, v, "assigned value")
    if is_complex(v.type) and not is_complex(field_type):
        raise tr.error(node, f"cannot store a complex value ({v.type}) in {what} of type "
                             f"{field_type}; take .real or abs() explicitly")


def store_field(tr, node, ref: Val, v: Val, name: str):
    if isinstance(ref.type, CharSeq):  # r.name = "XYZ"
        store_chars(tr, node, ref, v)
        return
    _check_value(tr, node, v, ref.type, f"field '{name}'")
    tr.emit(f"{ref.code} = {tr.cast(node, v, ref.type)};")


def store_attribute(tr, target, v: Val):
    """``r.x = v`` (``target`` an ast.Attribute)."""
    base = tr.expr(target.value)
    if isinstance(base.type, Bottom) or isinstance(v.type, Bottom):
        return
    if not isinstance(base.type, Record):
        name = getattr(base.type, "name", "None")
        raise tr.error(target, f"cannot assign to attribute '.{target.attr}' of {name} "
                               f"(attribute assignment is supported only on record fields)")
    attr = attribute_field(base.type, target.attr)
    if not fill_sub_array(tr, target, base, attr, v):
        ref = field_store_ref(tr, target, base, attr)
        store_field(tr, target, ref, v, attr)


def attribute_field(t, attr: str) -> str:
    """The field ``r.attr`` names: a StructModel type's ``make_attribute_wrapper`` may
    give a field another attribute name; other records' attributes are their fields."""
    return getattr(t, "attributes", {}).get(attr, attr)


def fill_sub_array(tr, node, base: Val, name: str, v: Val) -> bool:
    """``r.h = src`` for a sub-array field: NumPy's ``np.copyto(r.h, src)``, elements cast
    and ``src`` (an array or a number) broadcast. False when ``name`` is no sub-array."""
    f = _field(tr, node, base.type, name)
    if f.kind != "array":
        return False
    view = field_read(tr, node, base, name)

    def element(vals):
        return vals[0]

    element.nin = 1
    ufunc_into(tr, node, "copyto", [v], {"out": view}, element)
    return True


def aug_attribute(tr, s, op):
    """``r.x += v``: the field is read once and written back, cast to its type."""
    base = tr.expr(s.target.value)
    rhs = tr.expr(s.value)
    if isinstance(base.type, Bottom) or isinstance(rhs.type, Bottom):
        return
    if not isinstance(base.type, Record):
        name = getattr(base.type, "name", "None")
        raise tr.error(s, f"cannot update attribute '.{s.target.attr}' of {name} "
                          f"(attribute assignment is supported only on record fields)")
    ref = field_store_ref(tr, s.target, base, s.target.attr)
    cur = tr.temp("nu_old")
    tr.emit(f"const {_scalar_ctype(ref.type)} {cur} = {ref.code};")
    r = tr.binop(s, op, Val(cur, ref.type), rhs)
    if isinstance(r.type, Bottom):
        return
    store_field(tr, s, ref, r, s.target.attr)


def _scalar_ctype(t):
    return ctype(t)


def copy_record(tr, node, elem: Val, v: Val):
    """``a[i] = r``: the bytes of a record of the same dtype (NumPy would convert between
    record dtypes field by field; kernels take only the same dtype)."""
    if not isinstance(v.type, Record):
        raise tr.error(node, f"cannot store {getattr(v.type, 'name', v.type)} in an element "
                             f"of {elem.type}; assign its fields (a[i].x = ...)")
    if v.type != elem.type:
        raise tr.error(node, f"cannot store a record of dtype {v.type.dtype} in an element of "
                             f"dtype {elem.type.dtype}: kernels copy records of the same "
                             f"dtype only")
    tr.emit(f"*{elem.code} = *{v.code};")
