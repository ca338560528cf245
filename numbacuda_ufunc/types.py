"""Scalar and array types and signature parsing (Numba's spelling).

``float32(float32, float32)`` builds a :class:`Signature`; ``float32[:, ::1]`` builds an
:class:`Array` type; :func:`parse_signature` accepts those objects or their string forms
(``"f8(f8)"``, ``"void(float32[:,:], float32[:,:])"``, ``"(f8[:], f8[:])"``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

__all__ = [
    "Type", "Scalar", "Record", "Array", "Signature", "void", "none",
    "bool_", "boolean", "b1", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128", "bfloat16",
    "half", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16",
    "intp", "uintp", "double", "single", "byte",
    "parse_signature", "signature", "from_dtype", "SCALARS", "CPointer", "voidptr", "carray",
    "farray", "typeof", "NPDatetime", "NPTimedelta", "CharSeq", "UnicodeCharSeq",
    "char", "uchar", "short", "ushort", "intc", "uintc", "long_", "ulong", "longlong",
    "ulonglong", "signed_domain", "unsigned_domain", "integer_domain", "real_domain",
    "complex_domain", "number_domain",
    # Numba's type classes, for isinstance checks in @overload typing functions
    "Number", "Integer", "Float", "Complex", "Boolean", "Literal", "IntegerLiteral",
    "BooleanLiteral", "BaseTuple", "Tuple", "UniTuple", "NoneType", "Omitted",
]


class Type:
    """Base of every type object. ``Type(name)`` names a user-defined type, as Numba's
    ``types.Type(name=...)`` does for extension types."""

    name = "?"

    def __init__(self, name=None):
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"Type(): name must be a str (got {name!r})")
            self.name = name

    def __repr__(self):
        return self.name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    def _key(self):
        return self.name

    def __getitem__(self, item):
        """``my_type[::1]``: an array of a user type with a registered StructModel."""
        rec = struct_record(self)
        if rec is None:
            raise TypeError(f"'{type(self).__name__}' object is not subscriptable (only "
                            f"number types and user types with a registered StructModel "
                            f"make array types)")
        return rec[item]


class Scalar(Type):
    """A NumPy scalar type usable in ufunc loops: ``float32``, ``int64``, ``complex128``..."""

    def __init__(self, name: str, dtype):
        self.name = name
        self.dtype = np.dtype(dtype)

    @property
    def kind(self) -> str:
        """NumPy kind character: 'b', 'i', 'u', 'f' or 'c'."""
        return self.dtype.kind

    @property
    def bits(self) -> int:
        return self.dtype.itemsize * 8

    @property
    def bitwidth(self) -> int:
        """Width in bits (Numba's name for it): ``float16.bitwidth`` is 16."""
        return self.bits

    @property
    def signed(self) -> bool:
        """Numba's ``Integer.signed``: True for int8 ... int64."""
        return self.kind == "i"

    @property
    def char(self) -> str:
        """NumPy type character, as in ``ufunc.types`` (``'f'`` for float32)."""
        return self.dtype.char

    @property
    def underlying_float(self) -> Scalar:
        """The type of a complex type's parts (Numba's ``Complex.underlying_float``):
        ``complex64.underlying_float`` is ``float32``."""
        if self.kind != "c":
            raise AttributeError(f"'{self.name}' is not a complex type: only complex types "
                                 f"have underlying_float")
        return from_dtype(np.dtype(f"f{self.dtype.itemsize // 2}"))

    def __call__(self, *args):
        """``float32(float32, int32)``: a signature. ``int16(x)`` with one number: the value
        cast to the type, as Numba's types do in Python (so a kernel's Python function,
        run as the oracle, computes what the kernel does)."""
        if len(args) == 1 and isinstance(args[0], (int, float, complex, np.generic)):
            return self.dtype.type(args[0])
        return Signature(self, tuple(_as_type(a, "signature argument") for a in args))

    def __getitem__(self, item) -> Array:
        dims = item if isinstance(item, tuple) else (item,)
        if not dims or not all(isinstance(d, slice) for d in dims):
            raise TypeError(f"{self.name}[...]: array types take slices such as [:] or "
                            f"[:, ::1] (got {item!r})")
        for d in dims:
            if d.start is not None or d.stop is not None or d.step not in (None, 1):
                raise TypeError(f"{self.name}[...]: only ':' and '::1' are valid array "
                                f"dimensions (got {d!r})")
        layout = "A"
        if dims[-1].step == 1:
            layout = "C"
        elif dims[0].step == 1:
            layout = "F"
        return Array(self, len(dims), layout)


class Record(Scalar):
    """A NumPy record (structured) dtype: ``from_dtype(np.dtype([('x', 'f8'), ('y', 'i4')]))``,
    Numba's ``Record``. ``rec[:]`` is an array of records; the layout (itemsize, offsets,
    alignment) is NumPy's own. Fields are read in kernels as ``r.x`` or ``r['x']``."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        fields = ", ".join(f"{n}: {self.dtype.fields[n][0]}@{self.dtype.fields[n][1]}"
                           for n in self.dtype.names)
        aligned = ", aligned" if self.dtype.isalignedstruct else ""
        self.name = f"Record({fields}; {self.dtype.itemsize} bytes{aligned})"

    def _key(self):
        return repr(self.dtype)

    @property
    def kind(self) -> str:
        return "V"

    @property
    def char(self) -> str:
        return "V"


class StructRecord(Record):
    """The record a user type with a registered ``StructModel`` is held as (Numba's
    extension types: ``register_model(MyType)(MyModel)`` with members ``[("x", int32),
    ("y", int32)]``): an aligned NumPy record of those members, so arrays of the type
    (``my_type[::1]``, ``cuda.local.array(n, dtype=my_type)``) hold, copy and read fields
    as record arrays do. It names itself and compares equal to the user type it stands
    for, so typing records show that type."""

    def __init__(self, origin, members):
        fields = []
        for field, t in members:
            if not isinstance(field, str) or not isinstance(t, Scalar):
                raise TypeError(f"{origin.name}: StructModel members must be (name, scalar "
                                f"type) pairs such as ('x', int32) (got {(field, t)!r})")
            fields.append((field, t.dtype))
        super().__init__(np.dtype(fields, align=True))
        self.origin = origin
        self.name = origin.name

    @property
    def attributes(self) -> dict:
        """make_attribute_wrapper(MyType, "x", "px"): ``r.px`` names field x."""
        return {py: field for field, py in _STRUCT_ATTRIBUTES.get(type(self.origin), ())}

    def __eq__(self, other):
        if isinstance(other, StructRecord):
            return other.origin == self.origin
        return other == self.origin

    def __hash__(self):
        return hash(self.origin)


_STRUCT_MODELS: dict = {}  # user Type class -> its StructModel class (register_model)
_STRUCT_ATTRIBUTES: dict = {}  # user Type class -> [(field, attribute)] (attribute wrappers)


def wrap_struct_attribute(type_class, field, attribute) -> None:
    """``make_attribute_wrapper(type_class, field, attribute)`` (cuda.extending)."""
    _STRUCT_ATTRIBUTES.setdefault(type_class, []).append((field, attribute))


def register_struct_model(type_class, model_class) -> None:
    """``register_model(type_class)(model_class)`` for a StructModel (cuda.extending)."""
    _STRUCT_MODELS[type_class] = model_class


def struct_record(t):
    """The StructRecord of a user type whose class has a registered StructModel (the
    model made once per type, with members read from it), or None."""
    if not isinstance(t, Type) or isinstance(t, Scalar):
        return None
    model = _STRUCT_MODELS.get(type(t))  # the type's own class, as Numba's data models
    if model is None:
        return None
    cached = getattr(t, "_nu_struct_record", None)
    if cached is None:
        members = model(None, t)._nu_members
        cached = StructRecord(t, members)
        try:
            t._nu_struct_record = cached
        except AttributeError:
            pass
    return cached
class CharSeq(Scalar):
    """A fixed-width bytes element, NumPy's ``S<count>`` (Numba's ``types.CharSeq``).
    Kernels take arrays of them and record fields of them, and store constants into their
    elements (truncated to the width, NUL-padded, as NumPy and Numba do)."""

    _kind = "S"
    _unit = 1  # bytes per character

    def __init__(self, count: int):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise TypeError(f"{type(self).__name__}(): count must be a positive integer "
                            f"(got {count!r})")
        self.count = int(count)
        self.dtype = np.dtype(f"{self._kind}{self.count}")
        self.name = f"[{'char' if self._kind == 'S' else 'unichr'} x {self.count}]"

    def _key(self):
        return (self._kind, self.count)

    @property
    def kind(self) -> str:
        return self._kind

    def encode(self, value) -> bytes:
        """The element's bytes for constant ``value``: NumPy's conversion, truncated to the
        width and padded with NULs."""
        return np.array(value, dtype=self.dtype).tobytes()


class UnicodeCharSeq(CharSeq):
    """A fixed-width str element, NumPy's ``U<count>``: ``count`` UTF-32 code units (Numba's
    ``types.UnicodeCharSeq``)."""

    _kind = "U"
    _unit = 4


DATETIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")


class NPDatetime(Scalar):
    """``datetime64[unit]`` (Numba's ``types.NPDatetime(unit)``): held in kernels as the
    int64 count of ``unit`` since 1970-01-01; NaT is the smallest int64."""

    _kind = "M"
    _title = "datetime64"

    def __init__(self, unit: str):
        if unit not in DATETIME_UNITS:
            raise TypeError(f"{type(self).__name__}(): unit must be one of "
                            f"{', '.join(DATETIME_UNITS)} (got {unit!r})")
        self.unit = unit
        self.name = f"{self._title}[{unit}]"
        self.dtype = np.dtype(f"{self._kind}8[{unit}]")

    def __call__(self, *args):
        """``datetime64[D](5)`` or ``('2005-02-01')``: the NumPy value; else a signature."""
        if len(args) == 1 and isinstance(args[0], (int, str, np.integer, np.generic)):
            return self.dtype.type(args[0], self.unit)
        return super().__call__(*args)


class NPTimedelta(NPDatetime):
    """``timedelta64[unit]`` (Numba's ``types.NPTimedelta(unit)``): an int64 count of
    ``unit``; NaT is the smallest int64."""

    _kind = "m"
    _title = "timedelta64"


class _BFloat16(Scalar):
    """``bfloat16``: ml_dtypes' type (an optional dependency), imported on first use."""

    def __init__(self):
        self.name = "bfloat16"

    @property
    def dtype(self):
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError("bfloat16 needs the ml_dtypes package (pip install ml_dtypes)") from None
        return np.dtype(ml_dtypes.bfloat16)

    @property
    def kind(self) -> str:
        return "f"  # NumPy says 'V' for ml_dtypes' types; it is a float for every rule here

    @property
    def bits(self) -> int:
        return 16

    @property
    def char(self) -> str:
        return "E"


def is_bfloat16_dtype(dt) -> bool:
    """Whether NumPy dtype ``dt`` is ml_dtypes.bfloat16 (without importing ml_dtypes)."""
    return dt.kind == "V" and dt.name == "bfloat16" and dt.itemsize == 2


class NoneType(Type):
    """``void``: the return type of a gufunc kernel."""

    name = "void"

    def __call__(self, *args) -> Signature:
        return Signature(None, tuple(_as_type(a, "signature argument") for a in args))


class Array(Type):
    """An array type: element type, number of dimensions and layout ('C', 'F' or 'A')."""

    def __init__(self, dtype: Scalar, ndim: int, layout: str = "A"):
        self.dtype = dtype
        self.ndim = ndim
        self.layout = layout
        dims = [":"] * ndim
        if layout == "C" and dims:
            dims[-1] = "::1"
        elif layout == "F" and dims:
            dims[0] = "::1"
        self.name = f"{dtype.name}[{', '.join(dims)}]"

    def _key(self):
        return (self.dtype.name, self.ndim, self.layout)


class CPointer(Type):
    """A C pointer to ``dtype`` values (``void*`` with None), for arguments of foreign
    device functions (``cuda.declare_device``): a kernel passes an array there, and the
    function receives the array's data pointer (Numba's ``types.CPointer``)."""

    def __init__(self, dtype):
        if dtype is not None and not isinstance(dtype, Scalar):
            dtype = _as_type(dtype, "CPointer()")
            if not isinstance(dtype, Scalar):
                raise TypeError(f"CPointer(): expected a scalar type such as float32 (got "
                                f"{dtype!r})")
        self.dtype = dtype
        self.name = f"{dtype.name}*" if dtype is not None else "void*"

    def _key(self):
        return self.name

    def __call__(self, *args) -> Signature:
        """``CPointer(int32)(int32)``: a signature returning a pointer (a foreign
        function's, ``cuda.declare_device``), as Numba's types make one."""
        return Signature(self, tuple(_as_type(a, "signature argument") for a in args))


class Signature:
    """``return_type(*args)``; ``return_type`` is None for ``void`` or an omitted return."""

    def __init__(self, return_type: Type | None, args: tuple):
        self.return_type = return_type
        self.args = tuple(args)

    def __repr__(self):
        ret = self.return_type.name if self.return_type is not None else "void"
        return f"{ret}({', '.join(a.name for a in self.args)})"

    __str__ = __repr__

    def __eq__(self, other):
        return (isinstance(other, Signature) and self.return_type == other.return_type
                and self.args == other.args)

    def __hash__(self):
        return hash((self.return_type, self.args))


def signature(return_type, *args) -> Signature:
    """Numba's ``typing.signature(return_type, *args)``: ``signature(float32, int32, int32)``
    is ``float32(int32, int32)``; a ``void`` or None return type makes a kernel's."""
    for k, t in enumerate(args):
        if not isinstance(t, Type):
            raise TypeError(f"signature(): argument {k + 1} must be a type such as float32[:] "
                            f"(got {t!r})")
    if return_type is not None and not isinstance(return_type, Type):
        raise TypeError(f"signature(): the return type must be a type or None (got {return_type!r})")
    if return_type is void:
        return_type = None
    return Signature(return_type, args)


def _scalar(name, dtype):
    return Scalar(name, dtype)


bool_ = _scalar("bool", np.bool_)
int8 = _scalar("int8", np.int8)
int16 = _scalar("int16", np.int16)
int32 = _scalar("int32", np.int32)
int64 = _scalar("int64", np.int64)
uint8 = _scalar("uint8", np.uint8)
uint16 = _scalar("uint16", np.uint16)
uint32 = _scalar("uint32", np.uint32)
uint64 = _scalar("uint64", np.uint64)
float16 = _scalar("float16", np.float16)
float32 = _scalar("float32", np.float32)
float64 = _scalar("float64", np.float64)
complex64 = _scalar("complex64", np.complex64)
complex128 = _scalar("complex128", np.complex128)
bfloat16 = _BFloat16()
void = none = NoneType()
voidptr = CPointer(None)

SCALARS = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
           float16, float32, float64, complex64, complex128, bfloat16)

boolean = b1 = bool_
byte = uint8
i1, i2, i4, i8 = int8, int16, int32, int64
u1, u2, u4, u8 = uint8, uint16, uint32, uint64
f2 = half = float16
f4 = single = float32
f8 = double = float64
c8, c16 = complex64, complex128
intp = int64 if np.dtype(np.intp).itemsize == 8 else int32
uintp = uint64 if np.dtype(np.uintp).itemsize == 8 else uint32

_BY_DTYPE = {t.dtype: t for t in SCALARS if t is not bfloat16}

# Numba's C-named aliases (the C types' widths on this platform, as NumPy's np.longlong...).
char = _BY_DTYPE[np.dtype(np.byte)]
uchar = _BY_DTYPE[np.dtype(np.ubyte)]
short = _BY_DTYPE[np.dtype(np.short)]
ushort = _BY_DTYPE[np.dtype(np.ushort)]
intc = _BY_DTYPE[np.dtype(np.intc)]
uintc = _BY_DTYPE[np.dtype(np.uintc)]
long_ = _BY_DTYPE[np.dtype(np.int_)]
ulong = _BY_DTYPE[np.dtype(np.uint)]
longlong = _BY_DTYPE[np.dtype(np.longlong)]
ulonglong = _BY_DTYPE[np.dtype(np.ulonglong)]

# Numba's sets of types by domain (``ty in types.signed_domain``).
signed_domain = frozenset([int8, int16, int32, int64])
unsigned_domain = frozenset([uint8, uint16, uint32, uint64])
integer_domain = signed_domain | unsigned_domain
real_domain = frozenset([float32, float64])
complex_domain = frozenset([complex64, complex128])
number_domain = real_domain | integer_domain | complex_domain

# Names a signature string may use; nothing else is visible to its evaluation.
_NAMESPACE = {
    "void": void, "none": none, "bool_": bool_, "boolean": boolean, "bool": bool_,
    "b1": b1, "byte": byte, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64,
    "float16": float16, "float32": float32, "float64": float64, "complex64": complex64,
    "complex128": complex128, "bfloat16": bfloat16, "half": half, "f2": f2,
    "i1": i1, "i2": i2, "i4": i4, "i8": i8, "u1": u1, "u2": u2,
    "u4": u4, "u8": u8, "f4": f4, "f8": f8, "c8": c8, "c16": c16, "intp": intp,
    "uintp": uintp, "double": double, "single": single, "CPointer": CPointer,
    "voidptr": voidptr, "NPDatetime": NPDatetime, "NPTimedelta": NPTimedelta,
}

_ALLOWED_NODES = (ast.Expression, ast.Call, ast.Name, ast.Load, ast.Subscript, ast.Slice,
                  ast.Tuple, ast.Constant)


# Numba's conversion kinds for choosing among declared signatures, best first.
EXACT, PROMOTE, SAFE, UNSAFE = range(4)


def conversion_kind(src, dst) -> int | None:
    """How a number of dtype ``src`` converts to ``dst`` by Numba's rules: EXACT, PROMOTE
    (a wider type of the same kind: int8 to int16, float32 to float64), SAFE (every value
    kept, with Numba's exception int64/uint64 to float64), UNSAFE (values may change:
    float to int, int32 to float32), or None (complex to a real type never converts)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return EXACT
    if src.kind == "c" and dst.kind != "c":
        return None
    if src.kind == dst.kind and src.kind in "iufc" and dst.itemsize > src.itemsize:
        return PROMOTE
    if np.can_cast(src, dst, "safe"):
        return SAFE
    return UNSAFE


def best_signatures(candidates):
    """``candidates`` are (signature, conversion kinds of its arguments) for the signatures
    the arguments convert to. Returns those rated best as Numba rates them: fewest unsafe
    conversions, then fewest safe ones, then fewest promotions. More than one is a tie."""
    def rating(kinds):
        return (kinds.count(UNSAFE), kinds.count(SAFE), kinds.count(PROMOTE))

    if not candidates:
        return []
    best = min(rating(kinds) for _, kinds in candidates)
    return [sig for sig, kinds in candidates if rating(kinds) == best]


def from_dtype(dtype) -> Scalar:
    """The type of a NumPy dtype (a scalar type, or a :class:`Record` for a structured
    dtype, as Numba's ``from_dtype``); ``TypeError`` for dtypes kernels cannot use."""
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"from_dtype(): not a dtype (got {dtype!r})") from exc
    if is_bfloat16_dtype(dt):
        return bfloat16
    if dt.fields is not None:
        if dt.hasobject:
            raise TypeError(f"from_dtype(): record dtype {dt} has Python object fields, which "
                            f"kernels cannot use")
        if not dt.isnative:
            raise TypeError(f"from_dtype(): record dtype {dt} has fields in non-native byte "
                            f"order (convert with dtype.newbyteorder('=') first)")
        return Record(dt)
    if dt.kind in "SU":
        if dt.itemsize == 0 or not dt.isnative:
            raise TypeError(f"from_dtype(): unsupported dtype {dt} (fixed-width bytes and str "
                            f"need a width, as in S12 or U12, and native byte order)")
        cls = CharSeq if dt.kind == "S" else UnicodeCharSeq
        return cls(dt.itemsize // cls._unit)
    if dt.kind in "Mm":
        unit, count = np.datetime_data(dt)
        if unit not in DATETIME_UNITS or count != 1 or not dt.isnative:
            raise TypeError(f"from_dtype(): unsupported dtype {dt} (datetime64 and timedelta64 "
                            f"need one of the units {', '.join(DATETIME_UNITS)}, as in "
                            f"datetime64[D], in native byte order)")
        return (NPDatetime if dt.kind == "M" else NPTimedelta)(unit)
    try:
        return _BY_DTYPE[dt.newbyteorder("=") if dt.byteorder not in "=|" else dt]
    except KeyError:
        raise TypeError(f"from_dtype(): unsupported dtype {dt} (supported: bool, int8..int64, "
                        f"uint8..uint64, float16, float32, float64, complex64, complex128, "
                        f"bfloat16, datetime64[unit], timedelta64[unit], records)") from None


def typeof(value) -> Type:
    """The type of a value, as Numba's ``numba.typeof``: Python ``bool``/``int``/``float``/
    ``complex`` -> ``bool``/``int64``/``float64``/``complex128``; a NumPy scalar -> its
    dtype's type (a :class:`Record` for a structured one); a NumPy array, a device array or
    any ``__cuda_array_interface__`` object -> ``Array(dtype, ndim, layout)`` with layout
    'C' (C-contiguous, also every 0-d and 1-d contiguous array), 'F' (Fortran-contiguous)
    or 'A'. ``TypeError`` for other values."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    try:
        if isinstance(value, np.generic):
            return from_dtype(value.dtype)
        if isinstance(value, np.ndarray):
            layout = ("C" if value.flags.c_contiguous else
                      "F" if value.flags.f_contiguous else "A")
            return Array(from_dtype(value.dtype), value.ndim, layout)
        cai = getattr(value, "__cuda_array_interface__", None)
        if cai is not None:
            dtype = np.dtype(cai["descr"] if len(cai.get("descr") or ()) > 1 else cai["typestr"])
            return Array(from_dtype(dtype), len(cai["shape"]), _cai_layout(cai, dtype.itemsize))
    except TypeError as exc:
        raise TypeError(f"typeof(): cannot type {value!r}: {exc}") from None
    raise TypeError(f"typeof(): cannot determine the type of a {type(value).__name__} value "
                    f"(got {value!r}); supported: numbers, NumPy scalars and arrays, device "
                    f"arrays")


def _cai_layout(cai, itemsize) -> str:
    """'C', 'F' or 'A' from an array interface's shape and strides (None: C order)."""
    shape = tuple(int(s) for s in cai["shape"])
    strides = cai.get("strides")
    if strides is None or 0 in shape:
        return "C"
    strides = tuple(int(s) for s in strides)

    def contiguous(dims, steps):
        expect = itemsize
        for n, st in zip(dims, steps):
            if n != 1 and st != expect:
                return False
            expect *= n
        return True

    if contiguous(reversed(shape), reversed(strides)):
        return "C"
    return "F" if contiguous(shape, strides) else "A"


def _as_type(obj, what: str) -> Type:
    if isinstance(obj, Type):
        return obj
    if isinstance(obj, str):
        return _eval_type_string(obj, what)
    try:
        return from_dtype(obj)
    except TypeError:
        raise TypeError(f"{what}: expected a type such as float32 or 'f4' (got {obj!r})") from None


def _eval_type_string(text: str, what: str):
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise TypeError(f"{what}: cannot parse {text!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise TypeError(f"{what}: unexpected {type(node).__name__} in {text!r}")
        if isinstance(node, ast.Name) and node.id not in _NAMESPACE:
            raise TypeError(f"{what}: unknown type name {node.id!r} in {text!r}")
        if isinstance(node, ast.Constant) and node.value not in (None, 1):
            raise TypeError(f"{what}: unexpected constant {node.value!r} in {text!r}")
    return eval(compile(tree, "<signature>", "eval"), {"__builtins__": {}}, dict(_NAMESPACE))


def parse_signature_for(api: str, sig) -> Signature:
    """parse_signature, with errors prefixed by the decorator that received ``sig``."""
    try:
        return parse_signature(sig)
    except TypeError as exc:
        raise TypeError(f"{api}: {exc}") from None


def parse_signature(sig) -> Signature:
    """Accept a Signature, a string such as ``"f4(f4, f4)"`` or ``"(f8[:], f8[:])"``, or a
    tuple of types (no return type)."""
    if isinstance(sig, Signature):
        return sig
    if isinstance(sig, str):
        value = _eval_type_string(sig, "signature")
    elif isinstance(sig, tuple):
        value = tuple(_as_type(a, "signature argument") for a in sig)
    else:
        raise TypeError(f"signature: expected a string like 'float32(float32)' or a "
                        f"signature object (got {sig!r})")
    if isinstance(value, Signature):
        return value
    if isinstance(value, Type):
        value = (value,)
    if isinstance(value, tuple) and all(isinstance(a, Type) for a in value):
        return Signature(None, value)
    raise TypeError(f"signature: {sig!r} is not a signature")


def _numpy_dtype(dtype) -> np.dtype:
    return dtype.dtype if isinstance(dtype, Scalar) else np.dtype(dtype)


def _pointer_array(order, ptr, shape, dtype):
    api = "carray()" if order == "C" else "farray()"
    import ctypes

    if not isinstance(ptr, ctypes._Pointer) and not isinstance(ptr, ctypes.c_void_p):
        raise TypeError(f"{api}: ptr must be a ctypes pointer here (got {type(ptr).__name__}); "
                        f"in a kernel, a CPointer argument or ffi.from_buffer()")
    shape = (shape,) if hasattr(shape, "__index__") else tuple(shape)
    if isinstance(ptr, ctypes.c_void_p):
        if dtype is None:
            raise TypeError(f"{api}: dtype is required for a void pointer")
        target = _numpy_dtype(dtype)
    else:
        target = np.dtype(ptr._type_)
        if dtype is not None and _numpy_dtype(dtype) != target:
            raise TypeError(f"{api}: mismatching dtype {dtype} for a pointer to {target}")
    count = int(np.prod(shape, dtype=np.int64))
    address = ctypes.cast(ptr, ctypes.c_void_p).value
    buffer = (ctypes.c_char * (count * target.itemsize)).from_address(address)
    return np.frombuffer(buffer, dtype=target).reshape(shape, order=order)


def carray(ptr, shape, dtype=None):
    """Numba's ``carray``: the C-contiguous array of ``shape`` at pointer ``ptr``. In a
    kernel or device function ``ptr`` is a ``CPointer`` value (a kernel argument declared
    ``CPointer(t)``, or ``ffi.from_buffer(a)``); in Python, a ctypes pointer. ``dtype`` is
    needed for a void pointer and must match a typed one."""
    return _pointer_array("C", ptr, shape, dtype)


def farray(ptr, shape, dtype=None):
    """Numba's ``farray``: as :func:`carray`, Fortran-contiguous."""
    return _pointer_array("F", ptr, shape, dtype)


carray._nu_pointer_array = "C"
farray._nu_pointer_array = "F"


# ---- Numba's type classes ------------------------------------------------------------------
# ``types.Integer``, ``types.Float``, ``types.UniTuple``... for the ``isinstance`` checks of
# ``@overload`` typing functions (numbacuda_ufunc.cuda.extending). Our types stay what they
# are (``types.int32`` is one Scalar); these classes answer ``isinstance(types.int32,
# types.Integer)`` by looking at the object's kind, as Numba's class hierarchy would.
# Literal types (``IntegerLiteral(3)``) are real instances: the translator gives them to
# typing functions for integer constants.


class _KindClass(type):
    """``isinstance(obj, cls)``: a real instance, or a scalar type of one of ``cls._kinds``."""

    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        kinds = cls.__dict__.get("_kinds")
        if kinds is None:
            return False
        return isinstance(obj, Scalar) and not isinstance(obj, Record) and obj.kind in kinds


class Number(Type, metaclass=_KindClass):
    """Numba's ``types.Number``: every integer, float and complex type."""

    _kinds = "iufc"


class Integer(Number):
    """Numba's ``types.Integer``: ``int8`` ... ``uint64``."""

    _kinds = "iu"


class Float(Number):
    """Numba's ``types.Float``: ``float16``, ``float32``, ``float64`` (and ``bfloat16``)."""

    _kinds = "f"


class Complex(Number):
    """Numba's ``types.Complex``: ``complex64``, ``complex128``."""

    _kinds = "c"


class Boolean(Type, metaclass=_KindClass):
    """Numba's ``types.Boolean``: ``boolean``."""

    _kinds = "b"


class Literal(Type, metaclass=_KindClass):
    """A compile-time constant's type (Numba's ``types.Literal``); ``literal_value`` is the
    constant, ``literal_type`` the type it has when not taken literally."""

    _kinds = None

    def __init__(self, value):
        self.literal_value = value
        self.name = f"Literal[{type(value).__name__}]({value!r})"

    def _key(self):
        return (type(self.literal_value), self.literal_value)


class IntegerLiteral(Literal, Integer):
    """The type of an integer constant, ``Literal[int](3)``: an :class:`Integer` too."""

    _kinds = None

    def __init__(self, value):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"IntegerLiteral(): value must be an int (got {value!r})")
        super().__init__(value)

    @property
    def literal_type(self):
        return int64

    # as the integer type it stands for (typing functions read these of any Integer)
    kind = property(lambda self: "i")
    bitwidth = property(lambda self: 64)
    signed = property(lambda self: True)
    dtype = property(lambda self: int64.dtype)


class BooleanLiteral(Literal, Boolean):
    """The type of ``True`` or ``False`` as a constant, ``Literal[bool](True)``."""

    _kinds = None

    def __init__(self, value):
        if not isinstance(value, bool):
            raise TypeError(f"BooleanLiteral(): value must be a bool (got {value!r})")
        super().__init__(value)

    @property
    def literal_type(self):
        return boolean


class _TupleClass(_KindClass):
    """Tuples of the translator: any object whose class sets ``_nu_tuple``."""

    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        if not getattr(type(obj), "_nu_tuple", False):
            return False
        items = tuple(obj.items)
        uniform = bool(items) and all(t == items[0] for t in items)
        return cls._uniform is None or cls._uniform == uniform


class BaseTuple(Type, metaclass=_TupleClass):
    """Any tuple type (Numba's ``types.BaseTuple``)."""

    _uniform = None


class Tuple(BaseTuple):
    """A tuple of differing item types (Numba's ``types.Tuple``; one of equal items is a
    :class:`UniTuple`, as in Numba)."""

    _uniform = False


class UniTuple(BaseTuple):
    """A tuple of ``count`` items of type ``dtype`` (Numba's ``types.UniTuple``)."""

    _uniform = True


class Omitted(Type):
    """An argument left to its default value (Numba's ``types.Omitted``); ``value`` is the
    default."""

    def __init__(self, value):
        self.value = value
        self.name = f"omitted(default={value!r})"

    def _key(self):
        return repr(self.value)


# What a signature list may hold: "float32(float32, float32)", float32(float32, float32).
SignatureSpec: TypeAlias = "str | Signature | Sequence[Any]"
