"""FP8 in translated code: numba-cuda's ``numba.cuda._internal.cuda_fp8`` (CUDA's cuda_fp8.h).

``fp8_e4m3(x)``, ``fp8_e5m2(x)``, ``fp8_e8m0(x)`` build a value from a number (float16,
bfloat16, float32/64, an integer or bool); ``float32(v)``, ``int64(v)``, ``float16(v)``,
``bfloat16(v)``, ``bool_(v)``... convert one back. As in Numba, conversions are explicit:
FP8 values are not numbers in arithmetic, stores or returns (they may be held in
variables and passed to and returned from device functions).
The ``cvt_*`` functions take the saturation, interpretation and rounding arguments as
members of :class:`saturation_t`, :class:`fp8_interpretation_t` and ``cudaRoundMode``
(cuda-python's, or ours) and return raw bytes (uint8) or a :data:`BF16_RAW` value, whose
``.x`` is its uint16 bits. Every one is a function of src/kernels/nu_fp8.cuh (CUDA's
intrinsic on the GPU, a bit-exact software version in host builds), which the unit then
includes.
"""

from __future__ import annotations

from enum import IntEnum

from .. import types
from ..types import Scalar, Type, bool_, uint8, uint16, uint32
from ._refs import Ref, Val
from ._types import BOTTOM, Bottom, ctype, is_numeric, kind_of

__all__ = ["BF16_RAW", "FP8_FUNCTIONS", "Fp8Type", "Fp8VecType", "Fp8CtorRef", "Fp8Stub", "attribute",
           "call", "cast", "construct", "ctor_of", "cudaRoundMode", "fp8_interpretation_t",
           "is_fp8_value", "saturation_t"]


class saturation_t(IntEnum):  # noqa: N801  (cuda_fp8.h's and Numba's name)
    """``__nv_saturation_t``: NOSAT (overflow gives NaN or infinity), SATFINITE (the
    largest finite value)."""

    NOSAT = 0
    SATFINITE = 1


class fp8_interpretation_t(IntEnum):  # noqa: N801
    """``__nv_fp8_interpretation_t``: which FP8 format the raw byte holds."""

    E4M3 = 0
    E5M2 = 1


class cudaRoundMode(IntEnum):  # noqa: N801  (CUDA's name; cuda-python's enum has these values)
    """CUDA's ``cudaRoundMode`` (device_types.h), for the ``*_to_e8m0`` conversions, which
    support cudaRoundZero and cudaRoundPosInf."""

    cudaRoundNearest = 0
    cudaRoundZero = 1
    cudaRoundPosInf = 2
    cudaRoundMinInf = 3


class Fp8Type(Type):
    """The type of an FP8 value (Numba's ``fp8_e4m3``...): one byte, no arithmetic."""

    def __init__(self, name: str):
        super().__init__(name)
        self.nu_ctype = f"nu::{name}"
        self.bitwidth = 8


class _Bf16RawType(Type):
    """CUDA's ``__nv_bfloat16_raw``: the bits of a bfloat16, read as ``.x`` (uint16)."""

    nu_ctype = "nu::bf16_raw"


class Fp8VecType(Type):
    """Two or four FP8 values of one kind (``fp8x2_e4m3``..., CUDA's ``__nv_fp8x2_e4m3``):
    built from a float32x2/float64x2 (x4: float32x4/float64x4), converted to float32x2
    (float32x4) by ``cuda.float32x2(v)``; ``v.__x`` reads the packed bytes."""

    def __init__(self, name: str, count: int):
        super().__init__(name)
        self.nu_ctype = f"nu::{name}"
        self.count = count
        self.kind = name.split("_")[1]
        self.bitwidth = 8 * count


FP8_TYPES = {n: Fp8Type(n) for n in ("fp8_e4m3", "fp8_e5m2", "fp8_e8m0")}
FP8_VEC_TYPES = {f"fp8x{c}_{k}": Fp8VecType(f"fp8x{c}_{k}", c)
                 for c in (2, 4) for k in ("e4m3", "e5m2", "e8m0")}
BF16_RAW = _Bf16RawType("bfloat16_raw")
_KIND = {"fp8_e4m3": 0, "fp8_e5m2": 1, "fp8_e8m0": 2}  # nu::fp8::value<K>
_VKIND = {"e4m3": 0, "e5m2": 1, "e8m0": 2}


def is_fp8_value(t) -> bool:
    """An FP8 value (or pair, quadruple) or a bfloat16_raw: values that are not numbers but
    may be held, passed to device functions and converted."""
    return isinstance(t, (Fp8Type, Fp8VecType, _Bf16RawType))


class Fp8Stub:
    """Base of the ``fp8_e4m3``... objects users import: called in a kernel it builds a
    value. There is no host-side FP8 value (as in Numba)."""

    _nu_fp8_type: Fp8Type = None

    def __new__(cls, *args, **kwargs):
        raise TypeError(f"{cls.__name__}() builds an FP8 value only inside a @cuda.jit kernel "
                        f"or device function (on the host use ml_dtypes' float8 types)")


def _stub(name, t):
    return type(name, (Fp8Stub,), {"_nu_fp8_type": t, "__module__":
                                   "numbacuda_ufunc.cuda.fp8", "__doc__":
                                   f"CUDA's __nv_{name} (cuda_fp8.h) in kernels."})


STUBS = {n: _stub(n, t) for n, t in {**FP8_TYPES, **FP8_VEC_TYPES}.items()}


class Fp8CtorRef(Ref):
    """``fp8_e4m3`` (or another FP8 type) in translated code: a constructor."""

    def __init__(self, ftype: Fp8Type):
        self.ftype = ftype
        self.name = f"FP8 type {ftype.name}"


def ctor_of(value):
    """The constructor Ref when ``value`` is one of the FP8 type objects, else None."""
    if isinstance(value, type) and issubclass(value, Fp8Stub) and value._nu_fp8_type is not None:
        return Fp8CtorRef(value._nu_fp8_type)
    return None


def _uses_fp8(tr):
    tr.ctx.fp8 = True  # the unit includes nu_fp8.cuh (translate.py)


def construct(tr, node, ref: Fp8CtorRef, args, kwargs) -> Val:
    """``fp8_e4m3(x)``: CUDA's constructor (round to nearest even, saturating to the
    largest finite value; e8m0: rounded up to a power of two)."""
    ft = ref.ftype
    if kwargs or len(args) > 1:
        raise tr.error(node, f"{ft.name}() takes one argument (got {len(args) + len(kwargs)})")
    if not args:  # CUDA leaves the bits unset; ours are 0
        _uses_fp8(tr)
        return Val(f"{ft.nu_ctype}{{}}", ft)
    v = args[0]
    if isinstance(v.type, Bottom):
        return Val("0", BOTTOM)
    if isinstance(ft, Fp8VecType):
        want = [f"float32x{ft.count}", f"float64x{ft.count}"]
        if getattr(v.type, "name", None) not in want:
            raise tr.error(node, f"{ft.name}() takes a {' or '.join(want)} (got "
                                 f"{getattr(v.type, 'name', v.type)})")
        _uses_fp8(tr)
        return Val(f"nu::fp8::make_vec<{_VKIND[ft.kind]}, {ft.count}>({v.code})", ft)
    if is_fp8_value(v.type) or not is_numeric(v.type) or kind_of(v.type) == "c":
        raise tr.error(node, f"{ft.name}() takes a real number: float16, bfloat16, float32, "
                             f"float64, an integer or bool (got {getattr(v.type, 'name', v.type)})")
    t = types.float64 if kind_of(v.type) == "f" and not isinstance(v.type, Scalar) else None
    if t is None and not isinstance(v.type, Scalar):  # a Python int or bool: int64, as Numba
        t = types.int64 if kind_of(v.type) == "i" else bool_
    code = tr.cast(node, v, t) if t is not None else v.code
    _uses_fp8(tr)
    return Val(f"nu::fp8::make<{_KIND[ft.name]}>({code})", ft)


def cast(v: Val, t) -> str | None:
    """C++ of FP8 value (or bfloat16_raw) ``v`` converted to ``t``; None when this
    module has nothing to say (neither side is one of its types). Raises TypeError."""
    if isinstance(v.type, Fp8Type):
        if isinstance(t, Scalar) and (kind_of(t) in ("b", "i") or
                                      t.name in ("float16", "bfloat16", "float32", "float64")):
            return f"nu::fp8::to<{ctype(t)}>({v.code})"
        raise TypeError(f"cannot convert {v.type.name} to {getattr(t, 'name', t)} (FP8 values "
                        f"convert to float16, bfloat16, float32, float64, integers and bool)")
    if isinstance(v.type, Fp8VecType):
        if getattr(t, "name", None) == f"float32x{v.type.count}":
            return f"nu::fp8::to_floats({v.code})"
        raise TypeError(f"cannot convert {v.type.name} to {getattr(t, 'name', t)} (it converts "
                        f"to float32x{v.type.count})")
    if isinstance(v.type, _Bf16RawType):
        if getattr(t, "name", None) == "bfloat16":
            return f"nu::fp8::bf16_of({v.code})"
        raise TypeError(f"cannot convert bfloat16_raw to {getattr(t, 'name', t)} (read its "
                        f"bits as .x, or convert it to bfloat16)")
    if isinstance(t, (Fp8Type, Fp8VecType, _Bf16RawType)):
        if isinstance(t, _Bf16RawType) and getattr(v.type, "name", None) == "bfloat16":
            return f"nu::fp8::raw_of({v.code})"
        raise TypeError(f"cannot convert {getattr(v.type, 'name', v.type)} to {t.name} "
                        f"implicitly (call {t.name}(x))")
    return None


def attribute(tr, node, base: Val, attr: str) -> Val:
    """``raw.x``: a bfloat16_raw's bits. FP8 values have no attributes (as in Numba)."""
    if isinstance(base.type, _Bf16RawType) and attr == "x":
        return Val(f"({base.code}).x", uint16)
    if isinstance(base.type, Fp8VecType) and attr == "__x":
        return Val(f"({base.code}).bits", uint16 if base.type.count == 2 else uint32)
    has = ("it has .x" if isinstance(base.type, _Bf16RawType) else
           "it has .__x, the packed bytes" if isinstance(base.type, Fp8VecType) else
           "convert it first, e.g. float32(v)")
    raise tr.error(node, f"{base.type.name} has no attribute '.{attr}' ({has})")


# name -> (first parameter: a type name or "bf16raw", enum classes' names of the others, result)
FP8_FUNCTIONS = {
    "cvt_float_to_fp8": ("float32", ("saturation_t", "fp8_interpretation_t"), "uint8"),
    "cvt_double_to_fp8": ("float64", ("saturation_t", "fp8_interpretation_t"), "uint8"),
    "cvt_bfloat16raw_to_fp8": ("bf16raw", ("saturation_t", "fp8_interpretation_t"), "uint8"),
    "cvt_bfloat16raw_to_e8m0": ("bf16raw", ("saturation_t", "cudaRoundMode"), "uint8"),
    "cvt_float_to_e8m0": ("float32", ("saturation_t", "cudaRoundMode"), "uint8"),
    "cvt_double_to_e8m0": ("float64", ("saturation_t", "cudaRoundMode"), "uint8"),
    "cvt_e8m0_to_bf16raw": ("uint8", (), "bf16raw"),
    "cvt_float2_to_fp8x2": ("float32x2", ("saturation_t", "fp8_interpretation_t"), "uint16"),
    "cvt_double2_to_fp8x2": ("float64x2", ("saturation_t", "fp8_interpretation_t"), "uint16"),
    "cvt_float2_to_e8m0x2": ("float32x2", ("saturation_t", "cudaRoundMode"), "uint16"),
    "cvt_double2_to_e8m0x2": ("float64x2", ("saturation_t", "cudaRoundMode"), "uint16"),
}
# numbacuda_ufunc's own: the storage byte of an FP8 value, and a value from one.
EXTENSIONS = {"fp8_to_bits": None, "fp8_e4m3_from_bits": "fp8_e4m3",
              "fp8_e5m2_from_bits": "fp8_e5m2", "fp8_e8m0_from_bits": "fp8_e8m0"}
_PARAMS = {"float32": "x", "float64": "x", "bf16raw": "x", "uint8": "x", "float32x2": "x",
           "float64x2": "x",
           "saturation_t": "saturate", "fp8_interpretation_t": "fp8_interpretation",
           "cudaRoundMode": "rounding"}


def _enum_arg(tr, node, api, v, cls_name):
    """The C++ of an enum argument: a member of the class named ``cls_name``."""
    cls = getattr(v.type, "cls", None)
    if cls is None or cls.__name__ != cls_name or not issubclass(cls, int):
        raise tr.error(node, f"{api}: argument '{_PARAMS[cls_name]}' must be a member of "
                             f"{cls_name} (got {getattr(v.type, 'name', v.type)})")
    if cls_name == "cudaRoundMode" and v.const is not None and int(v.const) not in (1, 2):
        raise tr.error(node, f"{api}: rounding must be cudaRoundMode.cudaRoundZero or "
                             f"cudaRoundMode.cudaRoundPosInf, the modes cuda_fp8.h supports for "
                             f"e8m0 (got {cls(int(v.const)).name})")
    return f"int({v.code})"


def call(tr, node, name, args, kwargs, bind) -> Val:
    """``cvt_float_to_fp8(x, saturation_t.SATFINITE, fp8_interpretation_t.E4M3)``..."""
    if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
        return Val("0", BOTTOM)
    api = f"{name}()"
    if name in EXTENSIONS:
        (v,) = bind(tr, node, api, args, kwargs, ("x",))
        _uses_fp8(tr)
        if name == "fp8_to_bits":
            if not isinstance(v.type, Fp8Type):
                raise tr.error(node, f"{api} takes an FP8 value (got {getattr(v.type, 'name', v.type)})")
            return Val(f"({v.code}).bits", uint8)
        ft = FP8_TYPES[EXTENSIONS[name]]
        tr._numeric(node, v, api)
        if kind_of(v.type) != "i":
            raise tr.error(node, f"{api} takes the storage byte, an integer (got {v.type})")
        return Val(f"nu::fp8::from_bits<{_KIND[ft.name]}>({tr.cast(node, v, uint8)})", ft)
    first, enums, result = FP8_FUNCTIONS[name]
    names = tuple(_PARAMS[p] for p in (first, *enums))
    vals = bind(tr, node, api, args, kwargs, names)
    x = vals[0]
    if first == "bf16raw":
        if isinstance(x.type, _Bf16RawType):
            code = x.code
        elif getattr(x.type, "name", None) == "bfloat16":  # Numba converts it implicitly
            code = f"nu::fp8::raw_of({x.code})"
        else:
            raise tr.error(node, f"{api}: argument 'x' must be a bfloat16_raw (from "
                                 f"cvt_e8m0_to_bf16raw) or a bfloat16 (got "
                                 f"{getattr(x.type, 'name', x.type)})")
    elif first in ("float32x2", "float64x2"):
        if getattr(x.type, "name", None) != first:
            raise tr.error(node, f"{api}: argument 'x' must be a {first} (got "
                                 f"{getattr(x.type, 'name', x.type)})")
        code = x.code
    else:
        if is_fp8_value(x.type):
            raise tr.error(node, f"{api}: argument 'x' must be a {first} number (got "
                                 f"{x.type.name})")
        tr._numeric(node, x, api)
        if kind_of(x.type) == "c":
            raise tr.error(node, f"{api} takes a real number (got {x.type})")
        code = tr.cast(node, x, getattr(types, first))
    codes = [code] + [_enum_arg(tr, node, api, v, c) for v, c in zip(vals[1:], enums)]
    _uses_fp8(tr)
    rt = {"bf16raw": BF16_RAW, "uint8": uint8, "uint16": uint16}[result]
    return Val(f"nu::fp8::{name}({', '.join(codes)})", rt)
