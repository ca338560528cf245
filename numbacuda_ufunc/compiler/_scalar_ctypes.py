"""The C++ types of scalar values (``nu::i32``, ``nu::chars<8>``...): the part of
:func:`~numbacuda_ufunc.compiler._types.ctype` that record layouts (``_records.py``) need
for their fields, below both so that neither imports the other's caller."""

from __future__ import annotations

from ..types import CharSeq, NPDatetime

__all__ = ["CTYPES", "scalar_ctype"]

CTYPES = {
    "bool": "bool", "int8": "nu::i8", "int16": "nu::i16", "int32": "nu::i32",
    "int64": "nu::i64", "uint8": "nu::u8", "uint16": "nu::u16", "uint32": "nu::u32",
    "uint64": "nu::u64", "float32": "nu::f32", "float64": "nu::f64",
    "complex64": "nu::c64", "complex128": "nu::c128", "float16": "nu::f16",
    "bfloat16": "nu::bf16",
}


def scalar_ctype(t) -> str:
    """The C++ type that holds values of the scalar type ``t``."""
    if isinstance(t, NPDatetime):  # an int64 count of its unit (_datetime.py)
        return "nu::i64"
    if isinstance(getattr(t, "nu_ctype", None), str):  # FP8 values, bfloat16_raw (_fp8.py)
        return t.nu_ctype
    if isinstance(t, CharSeq):  # S<n> / U<n>: the element's bytes (nu_record.cuh)
        return f"nu::chars<{t.dtype.itemsize}>"
    return CTYPES[t.name]
