"""Stores into array elements that record fields share with arrays: NumPy's checks on an
assigned value, str/bytes constants into ``S<n>``/``U<n>`` elements, and whole-array ufunc
calls with an ``out`` array (``np.copyto`` included). Below ``_arrays.py`` and
``_record_access.py``, which both use them."""

from __future__ import annotations

from ..types import Array
from ._types import ctype, is_array, is_complex
from ._values import StringRef, Val

__all__ = ["check_storable", "store_chars", "ufunc_into"]


def check_storable(tr, node, v: Val, elem: Array):
    """NumPy's item assignment casts the value to the element type, except that Numba (and
    NumPy for Python complex values) refuses to drop an imaginary part silently."""
    if is_array(v.type):
        raise tr.error(node, f"cannot store an array ({v.type}) in an element of type "
                             f"{elem}; copy it element by element")
    tr._numeric(node, v, "assigned value")
    if is_complex(v.type) and not is_complex(elem):
        raise tr.error(node, f"cannot store a complex value ({v.type}) in an element of "
                             f"type {elem}; take .real or abs() explicitly")


def store_chars(tr, node, elem: Val, v: Val):
    """A str or bytes constant stored into a fixed-width bytes (``S<n>``) or str (``U<n>``)
    element or field: converted as NumPy converts it (``np.array(v, dtype)``: truncated to
    the width, padded with NULs; str into ``S`` must be ASCII), the bytes kept once as
    constant data and copied in."""
    t = elem.type
    if not isinstance(v.type, StringRef):
        raise tr.error(node, f"cannot store {getattr(v.type, 'name', v.type)} in an element "
                             f"of type {t.dtype}: only str and bytes constants can be stored "
                             f"in fixed-width bytes and str elements")
    try:
        raw = t.encode(v.type.value)
    except (UnicodeError, ValueError, TypeError) as exc:
        raise tr.error(node, f"cannot store {v.type.value!r} in an element of type "
                             f"{t.dtype}: {exc}") from None
    consts = tr.ctx.constants
    key = ("chars", raw)
    symbol = consts.get(key)
    if symbol is None:
        symbol = f"nu_const_{len(consts)}"
        body = ", ".join(f"{b:#04x}" for b in raw)
        tr.ctx.file_scope.append(f"__constant__ const unsigned char {symbol}[{len(raw)}] = "
                                 f"{{{body}}};")
        consts[key] = symbol
    tr.emit(f"nu::store_chars(&({elem.code}), {symbol}, {len(raw)});")


def ufunc_into(tr, node, fname, args, kwargs, element_call):
    """``np.sin(x, out)`` / ``np.add(a, b, out=c)`` on whole arrays (Numba's "calling a
    NumPy ufunc" in kernels): a loop over ``out``'s elements, the inputs broadcast against
    it as NumPy does (a dimension of 1 repeats). ``element_call(vals)`` types and emits one
    element; returns ``out``, as NumPy does, or None when no argument is an array."""
    vals = list(args) + list(kwargs.values())
    if not any(is_array(v.type) for v in vals):
        return None
    nin = element_call.nin
    if set(kwargs) - {"out"}:
        raise tr.error(node, f"np.{fname}() got an unexpected keyword argument "
                             f"'{min(set(kwargs) - {'out'})}'")
    ins, out = list(args[:nin]), kwargs.get("out")
    if out is None and len(args) == nin + 1:
        out = args[nin]
    if out is None or len(ins) != nin or len(args) > nin + (0 if "out" in kwargs else 1):
        raise tr.error(node, f"np.{fname}() on whole arrays needs its output array: "
                             f"np.{fname}({', '.join(['x', 'y'][:nin])}, out) (the kernel "
                             f"cannot allocate one)")
    if not is_array(out.type):
        raise tr.error(node, f"np.{fname}(): the output must be an array (got {out.type})")
    t = out.type
    for v in ins:
        if is_array(v.type) and v.type.ndim > t.ndim:
            raise tr.error(node, f"np.{fname}(): an input of {v.type.ndim} dimensions does not "
                                 f"broadcast to the {t.ndim}-d output")
    o = tr.temp("nu_out")
    idx = [tr.temp("nu_i") for _ in range(t.ndim)]
    tr.emit("{")
    tr.depth += 1
    tr.emit(f"const {ctype(t)} {o} = {out.code};")
    elems = []
    for v in ins:
        if not is_array(v.type):
            tmp = tr.temp()
            tr.emit(f"const {ctype(v.type)} {tmp} = {v.code};")
            elems.append(Val(tmp, v.type, v.const))
            continue
        a = tr.temp("nu_in")
        tr.emit(f"const {ctype(v.type)} {a} = {v.code};")
        lead = t.ndim - v.type.ndim
        codes = [f"({a}.shape[{j}] == 1 ? 0 : {idx[lead + j]})" for j in range(v.type.ndim)]
        elems.append(Val(f"{a}({', '.join(codes)})", v.type.dtype))
    for d, i in enumerate(idx):
        tr.emit(f"for (nu::i64 {i} = 0; {i} < {o}.shape[{d}]; ++{i}) {{")
        tr.depth += 1
    r = element_call(elems)
    check_storable(tr, node, r, t.dtype)
    tr.emit(f"{o}({', '.join(idx)}) = {tr.cast(node, r, t.dtype)};")
    for _ in idx:
        tr.depth -= 1
        tr.emit("}")
    tr.depth -= 1
    tr.emit("}")
    return out
