"""``cuda.*`` inside @cuda.jit kernels: thread geometry, barriers, shared/local/constant
arrays, atomics, warp intrinsics, bit tricks and the ``cuda.random`` generators.

Each intrinsic becomes a call of ``nu::kern::...`` (src/kernels/kernel.cuh), which runs on
the GPU and in the host emulation. Geometry values are typed as Python ints (held in 64
bits), as in Numba's simulator: ``blockIdx.x * blockDim.x`` cannot overflow. The context
records what the launch must know: whether threads cooperate (barriers and warp
intrinsics need every thread of a block to run concurrently in the emulation) and how
many bytes of static shared memory the kernel declares.
"""

from __future__ import annotations

import ast
import warnings
import zlib

import numpy as np

from ..errors import CompileError
from ..types import Array, Record, Scalar, bool_, from_dtype
from . import _bf16, _cache_hints, _fp8, _libdevice
from ._records import random_states_ok
from ._tuples import starred_items
from ._types import (
    BOTTOM,
    WEAK_BOOL,
    WEAK_INT,
    Bottom,
    FixedArray,
    TupleType,
    Weak,
    ctype,
    element_ctype,
    is_array,
    kind_of,
    strong,
    unify,
)
from ._values import (
    Ref,
    StringRef,
    TypeRef,
    UnsupportedDtypeRef,
    Val,
    bind_arguments,
    const_val,
)
from .intrinsics import CACHE_LOADS, CACHE_STORES, FP16_FUNCTIONS, grid_group

__all__ = ["IntrinsicRef", "NamespaceRef", "attribute", "call", "constant_array", "dtype_arg",
           "dtype_from_string", "print_call", "value"]

_AXES = {"x": 0, "y": 1, "z": 2}
_GEOMETRY = {"threadIdx": "thread_idx", "blockIdx": "block_idx", "blockDim": "block_dim",
             "gridDim": "grid_dim"}
_INTS32 = ("int32", "uint32", "int64", "uint64")
_NUMERIC = _INTS32 + ("float16", "bfloat16", "float32", "float64")
_ATOMIC_TYPES = {
    "add": _NUMERIC, "sub": _NUMERIC, "max": _NUMERIC, "min": _NUMERIC, "nanmax": _NUMERIC,
    "nanmin": _NUMERIC, "exch": _NUMERIC, "and_": _INTS32, "or_": _INTS32, "xor": _INTS32,
    "inc": ("uint32", "uint64"), "dec": ("uint32", "uint64"), "cas": _INTS32,
    "compare_and_swap": _INTS32,
}
_ATOMIC_CPP = {"and_": "and", "or_": "or", "compare_and_swap": "cas"}
_SHUFFLES = {"shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"}
_VOTES = {"all_sync", "any_sync", "ballot_sync", "eq_sync", "match_any_sync", "match_all_sync"}
_COOPERATIVE = {"syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
                "syncwarp", "activemask", "lanemask_lt"} | _SHUFFLES | _VOTES
_CONSTANT_LIMIT = 60 * 1024  # bytes of __constant__ data per kernel (the GPU has 64 KiB)
_UINT32 = Scalar("uint32", "u4")
_INT32 = Scalar("int32", "i4")
_INT64 = Scalar("int64", "i8")
# numba.cuda.random (numbacuda_ufunc/cuda/random.py, src/kernels/nu_random.cuh): the result
# type of each device function; None returns nothing.
_RANDOM = {
    "xoroshiro128p_next": Scalar("uint64", "u8"),
    "xoroshiro128p_jump": None,
    "xoroshiro128p_uniform_float32": Scalar("float32", "f4"),
    "xoroshiro128p_uniform_float64": Scalar("float64", "f8"),
    "xoroshiro128p_normal_float32": Scalar("float32", "f4"),
    "xoroshiro128p_normal_float64": Scalar("float64", "f8"),
}


class IntrinsicRef(Ref):
    """``cuda.grid``, ``cuda.syncthreads``, ``cuda.atomic.add``...: ``key`` names it."""

    def __init__(self, key):
        self.key = key
        self.name = f"cuda.{key}"


class NamespaceRef(Ref):
    """A Python object whose attributes the translator resolves at compile time: the
    ``cuda`` module, ``numbacuda_ufunc``, ``cuda.threadIdx``, ``cuda.atomic``, the grid
    group ``cuda.cg.this_grid()`` returns (which may be bound to a local name)."""

    def __init__(self, obj, name):
        self.obj = obj
        self.name = name

    def _key(self):  # the same object on every inference pass
        return id(self.obj)


def _call_site(tr, node):
    """A 64-bit number for a call in the user's code that orders calls as the source does
    (line and column in the high half; file and function, hashed, in the low half) and is
    the same in every process, so the generated source and its cache key are too."""
    fn = getattr(tr, "fn", None)
    code = getattr(fn, "__code__", None)
    where = f"{getattr(code, 'co_filename', '')}:{getattr(fn, '__qualname__', '')}"
    line = min(getattr(node, "lineno", 0) or 0, (1 << 20) - 1)
    col = min(getattr(node, "col_offset", 0) or 0, (1 << 12) - 1)
    return (line << 44) | (col << 32) | zlib.crc32(where.encode())


def _require_kernel(tr, node, what):
    if not getattr(tr.ctx, "kernel", False):
        raise tr.error(node, f"{what} can be used only inside @cuda.jit kernels and the "
                             f"device functions they call (not in vectorize/guvectorize "
                             f"functions)")


def _geometry(axis_fn, axis):
    return f"nu::kern::{axis_fn}({axis})"


def value(tr, node, ref: IntrinsicRef) -> Val:
    """An intrinsic used as a value: ``cuda.threadIdx.x``, ``cuda.laneid``,
    ``cuda.warpsize``; anything else is a function and must be called."""
    key = ref.key
    base, _, attr = key.partition(".")
    if base in _GEOMETRY and attr in _AXES:
        _require_kernel(tr, node, f"cuda.{key}")
        return Val(_geometry(_GEOMETRY[base], _AXES[attr]), WEAK_INT)
    if key == "laneid":
        _require_kernel(tr, node, "cuda.laneid")
        return Val("nu::kern::lane_id()", WEAK_INT)
    if key == "warpsize":
        return const_val(32)
    return Val("", ref)


def attribute(tr, node, ns: NamespaceRef, attr: str):
    """``<namespace>.attr``: the Val of the attribute, or None when it does not exist."""
    obj = getattr(ns.obj, attr, None)
    if obj is None:
        return None
    if callable(obj) and getattr(obj, "__module__", "").startswith("numbacuda_ufunc") \
            and not isinstance(obj, (Scalar, type)) and not hasattr(obj, "py_func") \
            and not hasattr(obj, "_nu_intrinsic"):
        return None  # host API (cuda.to_device...): not usable on the device
    return tr.classify(node, f"{ns.name}.{attr}", obj)


def _dtype_arg(tr, node, v: Val, api) -> Scalar:
    if isinstance(v.type, StringRef):  # dtype="int32", or a global/closure string
        v = dtype_from_string(tr, node, v.type.value)
    if isinstance(v.type, TypeRef):
        return v.type.scalar
    if isinstance(v.type, UnsupportedDtypeRef):  # np.dtype("O"): Numba's words first
        target = assigned_name(tr)
        what = f"Cannot infer the type of variable '{target}': " if target else ""
        raise tr.error(node, f"{what}{api}: dtype {v.type.dtype!r} is not one translated "
                             f"code holds (numbers, bools, datetimes and records)")
    raise tr.error(node, f"{api}: dtype must be a scalar type such as float32 or np.float32 "
                         f"(got {getattr(v.type, 'name', v.type)})")


def dtype_arg(tr, node, v: Val, api) -> Scalar:
    """A dtype argument (a type, a NumPy type or dtype) of ``api``."""
    return _dtype_arg(tr, node, v, api)


def assigned_name(tr):
    """The name the statement being translated assigns (``arr = ...``), or None."""
    s = getattr(tr, "statement", None)
    if isinstance(s, (ast.Assign, ast.AnnAssign)):
        targets = s.targets if isinstance(s, ast.Assign) else [s.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    return None


def dtype_call(tr, node, args, kwargs) -> Val:
    """``np.dtype(x)``: ``x`` a dtype name or a type; a dtype without a type here (object,
    strings) is a value that only an error message reads."""
    if kwargs or len(args) != 1:
        raise tr.error(node, "np.dtype() takes one argument, a dtype name or type")
    (v,) = args
    if isinstance(v.type, TypeRef):
        return v
    if not isinstance(v.type, StringRef):
        raise tr.error(node, f"np.dtype() takes a dtype name or type (got "
                             f"{getattr(v.type, 'name', v.type)})")
    try:
        dt = np.dtype(v.type.value)
    except TypeError:
        raise tr.error(node, f"Invalid NumPy dtype specified: {v.type.value!r}") from None
    try:
        return Val("", TypeRef(from_dtype(dt)))
    except TypeError:
        return Val("", UnsupportedDtypeRef(dt))


def dtype_from_string(tr, node, text: str) -> Val:
    """A dtype given by name (``dtype="int32"``), as NumPy reads it."""
    try:
        return Val("", TypeRef(from_dtype(np.dtype(text))))
    except TypeError:
        raise tr.error(node, f"Invalid NumPy dtype specified: {text!r}") from None


class ListValue(Ref):
    """A list display ``[a, b]``, or a tuple display with items not known at compile time,
    given as a shared/local array shape: refused, with the items kept for the message."""

    def __init__(self, items, kind="list"):
        self.items = tuple(items)
        self.kind = kind
        self.name = kind


def _numba_type_text(v: Val) -> str:
    """An argument's type as Numba's typing errors print it (``float32``,
    ``array(float32, 1d, A)``, ``Tuple(Literal[int](1), int32)``, ``class(float32)``)."""
    t = v.type
    if isinstance(t, TupleType):
        consts = v.const if isinstance(v.const, tuple) else (None,) * len(t.items)
        texts = [_numba_type_text(Val("", it, c)) for it, c in zip(t.items, consts)]
        if texts and len(set(texts)) == 1 and not texts[0].startswith("Literal"):
            return f"UniTuple({texts[0]} x {len(texts)})"
        return f"Tuple({', '.join(texts)})"
    if isinstance(t, ListValue) and t.kind == "tuple":
        return _numba_type_text(Val("", TupleType(x.type for x in t.items),
                                    tuple(x.const for x in t.items)))
    if isinstance(t, ListValue):
        items = [_numba_type_text(Val("", x.type)) for x in t.items]
        consts = [x.const for x in t.items]
        item = items[0] if items and len(set(items)) == 1 else "undefined"
        if consts and all(type(c) is int for c in consts):
            return f"list({item})<iv={list(consts)}>"
        return f"list({item})"
    if isinstance(t, Weak) and type(v.const) is int:
        return f"Literal[int]({v.const})"
    if isinstance(t, Array):
        return f"array({t.dtype.name}, {t.ndim}d, {t.layout})"
    if isinstance(t, TypeRef):
        return f"class({t.scalar.name})"
    if isinstance(t, StringRef):
        return f"Literal[str]({t.value})"
    return getattr(strong(t), "name", str(t))


def _no_implementation(space, shape_v: Val, dtype_v: Val) -> str:
    """Numba's wording for a shared/local array call it cannot type, which code and tests
    written for Numba look for."""
    return (f"\nNo implementation of function Function(<function {space}.array>) found for "
            f"signature:\n \n >>> array(shape={_numba_type_text(shape_v)}, "
            f"dtype={_numba_type_text(dtype_v)})")


def _shape_arg(tr, node, v: Val, api, allow_zero, numba_text=""):
    shape = v.const
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not (isinstance(shape, tuple) and shape
            and all(isinstance(s, int) and not isinstance(s, bool) for s in shape)):
        raise tr.error(node, f"{api}: shape must be an integer or a tuple of integers known "
                             f"at compile time (a literal or a global constant){numba_text}")
    if allow_zero and shape == (0,):
        return shape
    if any(s <= 0 for s in shape):
        raise tr.error(node, f"{api}: every dimension of the shape must be positive (got "
                             f"{shape})")
    return shape




def _view(tr, dtype: Scalar, shape, pointer: str) -> Val:
    t = FixedArray(dtype, shape)  # its shape is known: a.copy() can give it storage
    dims = ", ".join(f"{s}LL" for s in shape)
    return Val(f"nu::kern::contiguous_view<{element_ctype(dtype)}, {len(shape)}>({pointer}, "
               f"{{{dims}}})", t)


class AlignmentError(CompileError, ValueError):
    """An ``alignment=`` Numba rejects with ValueError (not positive, not a power of two,
    not a multiple of the pointer size): a CompileError that is also a ValueError, so
    code written for Numba's exception catches it."""


_DYNAMIC_SHARED_ALIGNMENT = 16  # g_dynamic_shared's __align__ (kernel.cuh)


def _alignment_arg(tr, node, v: Val, api):
    """The alignment in bytes, or None: Numba's rules, a constant integer that is positive,
    a power of two and a multiple of the pointer size (8)."""
    if v is None or v.type is None:
        return None
    a = v.const
    if not isinstance(a, (int, np.integer)) or isinstance(a, (bool, np.bool_)) \
            or isinstance(v.type, Ref):
        got = v.type.name if isinstance(v.type, Ref) else (
            repr(a) if a is not None else f"a run-time {getattr(v.type, 'name', v.type)}")
        raise tr.error(node, f"{api}: RequireLiteralValue: alignment must be a constant "
                             f"integer (got {got})")
    a = int(a)
    why = ("must be positive" if a <= 0 else "must be a power of 2" if a & (a - 1)
           else "must be a multiple of 8" if a % 8 else None)  # 8: the pointer size
    if why is not None:
        raise AlignmentError(str(tr.error(node, f"{api}: Alignment {why} (got {a})")))
    return a


def _memory_array(tr, node, space, args, kwargs):
    api = f"cuda.{space}.array()"
    shape_v, dtype_v, align_v = bind_arguments(tr, node, api, args, kwargs,
                                               ("shape", "dtype", "alignment"), required=2)
    dtype = _dtype_arg(tr, node, dtype_v, api)
    shape = _shape_arg(tr, node, shape_v, api, allow_zero=space == "shared",
                       numba_text=_no_implementation(space, shape_v, dtype_v))
    alignment = _alignment_arg(tr, node, align_v, api)
    # alignas() in the generated C++: NVRTC places the array at a multiple of it (PTX
    # .align), and so does g++ on the host backend (stack realignment, aligned TLS).
    align = f"alignas({alignment}) " if alignment else ""
    t = element_ctype(dtype)  # a record's struct (records in shared and local memory)
    if space == "shared" and shape == (0,):
        if alignment and alignment > _DYNAMIC_SHARED_ALIGNMENT:
            raise tr.error(node, f"{api}: dynamic shared memory (shape 0) is aligned to "
                                 f"{_DYNAMIC_SHARED_ALIGNMENT} bytes; alignment={alignment} is "
                                 f"not supported for it (use a static shape)")
        # Dynamic shared memory: every such array starts at the same address (as in Numba
        # and CUDA); its length is what the launch gave, in elements.
        n = f"(long long)(nu::kern::dynamic_shared_bytes() / sizeof({t}))"
        return Val(f"nu::kern::contiguous_view<{t}, 1>(nu::kern::dynamic_shared<{t}>(), {{{n}}})",
                   Array(dtype, 1, "C"))
    count = int(np.prod(shape))
    name = tr.temp("nu_sh" if space == "shared" else "nu_loc")
    if space == "shared":
        if tr.emitting:
            tr.ctx.static_shared_bytes += count * dtype.dtype.itemsize
        tr.emit(f"{align}__shared__ {t} {name}[{count}];")
    else:
        if tr.emitting:
            tr.ctx.local_bytes += count * dtype.dtype.itemsize
        tr.emit(f"{align}{t} {name}[{count}];")
    return _view(tr, dtype, shape, name)


def constant_array(tr, node, name, arr: np.ndarray) -> Val:
    """A global NumPy array (or ``cuda.const.array_like(a)``): frozen into the kernel as
    constant data when the kernel is compiled, as Numba does."""
    _require_kernel(tr, node, f"the global array '{name}'")
    try:
        dtype = from_dtype(arr.dtype)
    except TypeError:
        raise tr.error(node, f"global array '{name}' has unsupported dtype {arr.dtype}") from None
    if arr.ndim == 0:
        if isinstance(dtype, Record):
            raise tr.error(node, f"global record '{name}' (0-d) cannot be frozen into the "
                                 f"kernel; use a 1-element array")
        return const_val(arr[()])
    data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    consts = tr.ctx.constants
    key = (id(arr), data.tobytes(), arr.shape, str(arr.dtype))
    symbol = consts.get(key)
    if symbol is None:
        symbol = f"nu_const_{len(consts)}"
        raw = data.tobytes()
        raw += b"\0" * (-len(raw) % 8)
        words = np.frombuffer(raw, dtype="<u8") if raw else np.zeros(1, "<u8")
        space = "__constant__" if len(raw) <= _CONSTANT_LIMIT else "__device__"
        body = ", ".join(f"{int(w):#x}ULL" for w in words)
        tr.ctx.file_scope.append(f"{space} const unsigned long long {symbol}[{len(words)}] = "
                                 f"{{{body}}};")
        consts[key] = symbol
    shape = arr.shape if arr.size else tuple(max(1, s) for s in arr.shape)
    t = element_ctype(dtype)
    v = _view(tr, dtype, shape, f"reinterpret_cast<const {t}*>({symbol})")
    if not arr.size:  # an empty global: a view of size 0 (never dereferenced)
        dims = ", ".join(f"{s}LL" for s in arr.shape)
        v = Val(f"nu::kern::contiguous_view<{t}, {arr.ndim}>(reinterpret_cast<const {t}*>"
                f"({symbol}), {{{dims}}})", FixedArray(dtype, arr.shape))
    return v


def device_array_global(tr, node, name, obj) -> Val:
    """A global or closure device array (``cuda.to_device``, CuPy, any object with
    ``__cuda_array_interface__``): captured by reference, as numba-cuda does. Its pointer,
    shape and strides are fixed in the kernel, so writes are seen by later launches and by
    the host; the kernel keeps the array alive."""
    _require_kernel(tr, node, f"the global device array '{name}'")
    cai = obj.__cuda_array_interface__
    try:
        dtype = from_dtype(np.dtype(cai["typestr"]))
    except TypeError:
        raise tr.error(node, f"global device array '{name}' has unsupported dtype "
                             f"{cai['typestr']}") from None
    shape = tuple(int(s) for s in cai["shape"])
    address = int(cai["data"][0] or 0)
    if not shape:  # 0-d: a[()] reads and writes its element
        tr.ctx.captured.append(obj)
        return Val(f"nu::captured_view<{ctype(dtype)}>({address:#x}ULL)", Array(dtype, 0, "A"))
    item = dtype.dtype.itemsize
    contiguous = [item * int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    strides = tuple(int(s) for s in cai.get("strides") or contiguous)
    layout = "C" if strides == tuple(contiguous) or 0 in shape else "A"
    tr.ctx.captured.append(obj)
    dims = ", ".join(f"{s}LL" for s in shape)
    steps = ", ".join(f"{s}LL" for s in strides)
    return Val(f"nu::captured_view<{ctype(dtype)}, {len(shape)}>({address:#x}ULL, {{{dims}}}, "
               f"{{{steps}}})", Array(dtype, len(shape), layout))


def _element(tr, node, api, ary: Val, idx: Val):
    """``T&`` code of ``ary[idx]`` for an atomic: one integer (1-d) or a tuple of them."""
    if not is_array(ary.type):
        raise tr.error(node, f"{api}: the first argument must be an array (got "
                             f"{getattr(ary.type, 'name', ary.type)})")
    t = ary.type
    if isinstance(idx.type, TupleType):
        codes = [f"({idx.code}).v{k}" for k in range(len(idx.type.items))]
        kinds = [kind_of(it) for it in idx.type.items]
    else:
        codes, kinds = [idx.code], [kind_of(idx.type) if not isinstance(idx.type, Ref) else "?"]
    if any(k != "i" for k in kinds):
        raise tr.error(node, f"{api}: the index must be an integer or a tuple of integers")
    if len(codes) != t.ndim:
        raise tr.error(node, f"{api}: a {t.ndim}-d array needs {t.ndim} indices (got "
                             f"{len(codes)})")
    return f"{ary.code}({', '.join(codes)})"


def _check_dtype(tr, node, api, dtype: Scalar, allowed):
    if dtype.name not in allowed:
        raise tr.error(node, f"{api} is not supported on {dtype.name} arrays (supported: "
                             f"{', '.join(allowed)})")


def _atomic(tr, node, op, args, kwargs):
    api = f"cuda.atomic.{op}()"
    if op == "compare_and_swap":
        ary, old, new = bind_arguments(tr, node, api, args, kwargs, ("ary", "old", "val"))
        idx = const_val(0)
        if is_array(ary.type) and ary.type.ndim != 1:
            raise tr.error(node, f"{api} works on the first element of a 1-d array (got "
                                 f"{ary.type})")
    elif op == "cas":
        ary, idx, old, new = bind_arguments(tr, node, api, args, kwargs, ("ary", "idx", "old", "val"))
    else:
        ary, idx, new = bind_arguments(tr, node, api, args, kwargs, ("ary", "idx", "val"))
        old = None
    elem = _element(tr, node, api, ary, idx)
    dtype = ary.type.dtype
    _check_dtype(tr, node, api, dtype, _ATOMIC_TYPES[op])
    operands = [v for v in (old, new) if v is not None]
    for v in operands:
        tr._numeric(node, v, api)
    codes = [tr.cast(node, v, dtype) for v in operands]
    fn = _ATOMIC_CPP.get(op, op)
    return Val(f"nu::kern::atomic_{fn}({elem}, {', '.join(codes)})", dtype)


def _mask_arg(tr, node, v, api):
    """A warp mask: an integer (Numba's rule: not a bool, not a float), as uint32."""
    tr._numeric(node, v, api)
    if kind_of(v.type) != "i":
        raise tr.error(node, f"{api}: Mask type must be an integer (got {v.type})")
    return tr.cast(node, v, _UINT32)


def _predicate_arg(tr, node, v, api):
    """A vote's predicate: an integer or bool, taken by its truth (CUDA's vote.sync)."""
    tr._numeric(node, v, api)
    if kind_of(v.type) not in ("i", "b"):
        raise tr.error(node, f"{api}: Predicate must be an integer or boolean (got {v.type})")
    return f"int({tr.truth(v)})"


def _int_arg(tr, node, v, t, api):
    tr._numeric(node, v, api)
    if kind_of(v.type) not in ("i", "b"):
        raise tr.error(node, f"{api}: expected an integer (got {v.type})")
    return tr.cast(node, v, t)


def _grid(tr, node, key, args, kwargs):
    api = f"cuda.{key}()"
    (ndim,) = bind_arguments(tr, node, api, args, kwargs, ("ndim",))
    n = ndim.const
    if n not in (1, 2, 3) or isinstance(n, bool):
        hint = " (for a 2-d index write: row, col = cuda.grid(2))" if key == "grid" else ""
        got = n if n is not None else "a run-time value; Numba: RequireLiteralValue"
        raise tr.error(node, f"{api}: ndim must be the constant 1, 2 or 3 (got {got}){hint}")
    if key == "grid":
        parts = [f"({_geometry('block_idx', a)} * {_geometry('block_dim', a)} + "
                 f"{_geometry('thread_idx', a)})" for a in range(n)]
    else:
        parts = [f"({_geometry('block_dim', a)} * {_geometry('grid_dim', a)})" for a in range(n)]
    if n == 1:
        return Val(parts[0], WEAK_INT)
    tt = TupleType((WEAK_INT,) * n)
    return Val(f"{ctype(tt)}{{{', '.join(parts)}}}", tt)


def _word_int(t):
    """Integers narrower than 32 bits take part in warp and bit intrinsics as 32-bit ones,
    as in CUDA (signed stays signed)."""
    if t.name in ("int8", "int16", "uint8", "uint16"):
        return _INT32 if t.name.startswith("int") else _UINT32
    return t


def _scalar_value(tr, node, v, api):
    tr._numeric(node, v, api)
    t = strong(v.type)
    if kind_of(t) == "c":
        raise tr.error(node, f"{api}: complex values are not supported (got {t})")
    return t


def _warp(tr, node, key, args, kwargs):
    api = f"cuda.{key}()"
    if key in _SHUFFLES:
        third = {"shfl_sync": "src_lane", "shfl_up_sync": "delta", "shfl_down_sync": "delta",
                 "shfl_xor_sync": "lane_mask"}[key]
        mask, v, lane = bind_arguments(tr, node, api, args, kwargs, ("mask", "value", third))
        t = _scalar_value(tr, node, v, api)
        t = _word_int(t)
        return Val(f"nu::kern::{key}({_mask_arg(tr, node, mask, api)}, "
                   f"{tr.cast(node, v, t)}, {_int_arg(tr, node, lane, WEAK_INT, api)})", t)
    if key == "eq_sync":
        # A vote, as Numba's: whether the predicate's truth is the same in every lane.
        mask, pred = bind_arguments(tr, node, api, args, kwargs, ("mask", "predicate"))
        m, p = _mask_arg(tr, node, mask, api), _predicate_arg(tr, node, pred, api)
        return Val(f"nu::kern::eq_sync({m}, bool({p}))", WEAK_BOOL)
    if key in ("match_any_sync", "match_all_sync"):
        mask, v = bind_arguments(tr, node, api, args, kwargs, ("mask", "value"))
        t = _scalar_value(tr, node, v, api)
        t = _word_int(t)
        m, c = _mask_arg(tr, node, mask, api), tr.cast(node, v, t)
        if key == "match_any_sync":
            return Val(f"nu::kern::match_any_sync({m}, {c})", _UINT32)
        # Numba: (mask, pred), the mask when all lanes agree (else 0) and whether they do.
        tt = TupleType((_UINT32, WEAK_BOOL))
        tmp = tr.temp()
        return Val(f"([&]() {{ const nu::u32 {tmp} = nu::kern::match_all_sync({m}, {c}); "
                   f"return {ctype(tt)}{{{tmp}, {tmp} != 0u}}; }}())", tt)
    mask, pred = bind_arguments(tr, node, api, args, kwargs, ("mask", "predicate"))
    m, p = _mask_arg(tr, node, mask, api), _predicate_arg(tr, node, pred, api)
    if key == "ballot_sync":
        return Val(f"nu::kern::ballot_sync({m}, {p})", _UINT32)
    return Val(f"nu::kern::{key}({m}, {p})", WEAK_BOOL)


def _bits(tr, node, key, args, kwargs):
    api = f"cuda.{key}()"
    if key == "fma":
        a, b, c = bind_arguments(tr, node, api, args, kwargs, ("a", "b", "c"))
        t = strong(tr.promote(node, lambda: unify(unify(a.type, b.type), c.type)))
        if kind_of(t) != "f":
            raise tr.error(node, f"{api} takes floating-point values (got {t})")
        return Val(f"nu::kern::fma({', '.join(tr.cast(node, v, t) for v in (a, b, c))})", t)
    if key == "selp":
        c, a, b = bind_arguments(tr, node, api, args, kwargs, ("cond", "a", "b"))
        for v in (c, a, b):
            tr._numeric(node, v, api)
        t = tr.promote(node, lambda: unify(a.type, b.type))
        # A call: both values are evaluated, as Python evaluates arguments, then one is
        # selected (CUDA's selp, no branch).
        ct = ctype(t)
        return Val(f"([](bool nu_c, {ct} nu_a, {ct} nu_b) {{ return nu_c ? nu_a : nu_b; }}"
                   f"({tr.truth(c)}, {tr.cast(node, a, t)}, {tr.cast(node, b, t)}))", t)
    (x,) = bind_arguments(tr, node, api, args, kwargs, ("x",))
    tr._numeric(node, x, api)
    t = strong(x.type)
    if key == "cbrt":
        t = t if kind_of(t) == "f" else Scalar("float64", "f8")
        if kind_of(x.type) == "c":
            raise tr.error(node, f"{api} takes a real number (got {x.type})")
        return Val(f"nu::cbrt({tr.cast(node, x, t)})", t)
    if kind_of(t) != "i":
        raise tr.error(node, f"{api} takes an integer (got {t})")
    t = _word_int(t)
    if key == "brev":
        return Val(f"nu::kern::brev({tr.cast(node, x, t)})", t)
    return Val(f"nu::kern::{key}({tr.cast(node, x, t)})", _INT32)


def _random(tr, node, name, args, kwargs):
    api = f"{name}()"
    if name not in _RANDOM:
        raise tr.error(node, f"cuda.random.{name} is not a device function")
    states, index = bind_arguments(tr, node, api, args, kwargs, ("states", "index"))
    t = states.type
    if random_states_ok(t):  # Numba's layout: records (s0, s1), seen as (n, 2) words
        code = f"nu::kern::xoroshiro128p_words({states.code})"
    elif is_array(t) and t.dtype.name == "uint64" and t.ndim == 2:
        code = states.code  # the (n, 2) uint64 form of earlier versions
    else:
        raise tr.error(node, f"{api}: states must be the array create_xoroshiro128p_states() "
                             f"returns: records of xoroshiro128p_dtype ([('s0', uint64), "
                             f"('s1', uint64)]), or a uint64 array of shape (n, 2) (got "
                             f"{getattr(t, 'name', t)})")
    idx = _int_arg(tr, node, index, _INT64, api)
    return Val(f"nu::kern::{name}({code}, {idx})", _RANDOM[name])


_FLOAT16 = Scalar("float16", "f2")
_FP16_COMPARISONS = {"heq", "hne", "hlt", "hle", "hgt", "hge"}


def _fp16(tr, node, name, args, kwargs) -> Val:
    """``cuda.fp16.hadd(a, b)``...: arguments convert to float16 as in Numba; the result is
    float16 (bool for the comparisons)."""
    api = f"cuda.fp16.{name}()"
    params = ("a", "b", "c")[:FP16_FUNCTIONS[name]]
    vals = bind_arguments(tr, node, api, args, kwargs, params)
    for v in vals:
        tr._numeric(node, v, api)
        if kind_of(v.type) == "c":
            raise tr.error(node, f"{api} takes real numbers (got {v.type})")
    codes = ", ".join(tr.cast(node, v, _FLOAT16) for v in vals)
    return Val(f"nu::fp16::{name}({codes})", bool_ if name in _FP16_COMPARISONS else _FLOAT16)


def call(tr, node, ref: IntrinsicRef, args, kwargs) -> Val:
    """A call of a kernel intrinsic."""
    key = ref.key
    if key.startswith("fp16."):  # also in device functions of ufuncs, as in Numba
        if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
            return Val("0", BOTTOM)
        return _fp16(tr, node, key.partition(".")[2], args, kwargs)
    if key.startswith("bf16."):  # numba.cuda.bf16, also in device functions of ufuncs
        return _bf16.call(tr, node, key.partition(".")[2], args, kwargs, bind_arguments)
    if key.startswith("fp8."):  # numba.cuda._internal.cuda_fp8, also in ufuncs' functions
        return _fp8.call(tr, node, key.partition(".")[2], args, kwargs, bind_arguments)
    if key.startswith("libdevice."):  # numba.cuda.libdevice, also in ufuncs' functions
        return _libdevice.call(tr, node, key.partition(".")[2], args, kwargs, bind_arguments)
    _require_kernel(tr, node, f"cuda.{key}()")
    if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
        return Val("0", BOTTOM)
    if key in _COOPERATIVE:
        tr.ctx.cooperative = True
    if key in ("grid", "gridsize"):
        return _grid(tr, node, key, args, kwargs)
    if key == "cg.this_grid":
        bind_arguments(tr, node, "cuda.cg.this_grid()", args, kwargs, ())
        return Val("", NamespaceRef(grid_group, "grid group"))
    if key == "cg.grid_group.sync":
        bind_arguments(tr, node, "grid.sync()", args, kwargs, ())
        tr.ctx.cooperative = True
        tr.ctx.grid_sync = True
        return Val("nu::kern::grid_sync()", None)
    if key in ("syncthreads", "threadfence", "threadfence_block", "threadfence_system",
               "activemask", "lanemask_lt"):
        bind_arguments(tr, node, f"cuda.{key}()", args, kwargs, ())
        if key == "activemask":  # numbered by call site: the host groups lanes per call
            return Val(f"nu::kern::activemask({_call_site(tr, node):#x}ull)", _UINT32)
        rt = _UINT32 if key == "lanemask_lt" else None
        return Val(f"nu::kern::{key}()", rt)
    if key in ("syncthreads_count", "syncthreads_and", "syncthreads_or"):
        (pred,) = bind_arguments(tr, node, f"cuda.{key}()", args, kwargs, ("predicate",))
        tr._numeric(node, pred, f"cuda.{key}()")
        return Val(f"nu::kern::{key}(int({tr.truth(pred)}))", _INT32)
    if key == "nanosleep":
        (ns,) = bind_arguments(tr, node, "cuda.nanosleep()", args, kwargs, ("ns",))
        return Val(f"nu::kern::nanosleep({_int_arg(tr, node, ns, _UINT32, 'cuda.nanosleep()')})", None)
    if key == "syncwarp":
        (mask,) = bind_arguments(tr, node, "cuda.syncwarp()", args, kwargs, ("mask",), required=0)
        m = _int_arg(tr, node, mask, _UINT32, "cuda.syncwarp()") if mask else "0xffffffffu"
        return Val(f"nu::kern::syncwarp({m})", None)
    if key in ("shared.array", "local.array"):
        return _memory_array(tr, node, key.partition(".")[0], args, kwargs)
    if key == "const.array_like":
        (arr,) = bind_arguments(tr, node, "cuda.const.array_like()", args, kwargs, ("ary",))
        if not is_array(arr.type):
            raise tr.error(node, "cuda.const.array_like() takes a global NumPy array")
        return arr
    if key.startswith("atomic."):
        return _atomic(tr, node, key.partition(".")[2], args, kwargs)
    if key in _SHUFFLES or key in _VOTES:
        return _warp(tr, node, key, args, kwargs)
    if key in ("fma", "popc", "clz", "ffs", "brev", "selp", "cbrt"):
        return _bits(tr, node, key, args, kwargs)
    if key.startswith("random."):
        return _random(tr, node, key.partition(".")[2], args, kwargs)
    if key in CACHE_LOADS or key in CACHE_STORES:
        return _cache_hints.call(tr, node, key, args, kwargs)
    raise tr.error(node, f"cuda.{key} is not callable")


def _c_string(text: str) -> str:
    out = []
    for ch in text.replace("%", "%%"):
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= ord(ch) < 127:
            out.append(ch)
        else:
            out.extend(f"\\x{b:02x}\"\"" for b in ch.encode())
    return "".join(out)


_PRINT_ITEMS = 32  # CUDA's printf takes at most 32 arguments after the format


def print_call(tr, node) -> Val:
    """``print(...)`` in a kernel: CUDA's printf with Numba's formats (ints %lld/%llu,
    floats %f, bools True/False, tuples and cuda.threadIdx & co. as Python writes tuples);
    string constants are printed as they are. More than 32 values print the raw format
    string, with Numba's warning, as CUDA's printf cannot take them."""
    _require_kernel(tr, node, "print()")
    if node.keywords:
        raise tr.error(node, "print() in a kernel takes no keyword arguments (sep, end...)")
    parts, values = [], []
    for a in node.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            parts.append(_c_string(a.value))
            continue
        if isinstance(a, ast.Starred):  # print(*t): the tuple's items
            vals = starred_items(tr, a, tr.expr(a.value))
        else:
            vals = [tr.expr(a)]
        for v in vals:
            if isinstance(v.type, Bottom):
                return Val("0", BOTTOM)
            parts.append(_print_value(tr, a, v, values))
    fmt = " ".join(parts) + "\\n"
    if len(values) > _PRINT_ITEMS:
        warnings.warn("CUDA print() cannot print more than 32 items. The raw format string "
                      "will be emitted by the kernel instead.", RuntimeWarning, stacklevel=2)
        return Val(f"nu::kern::print({_format_symbol(tr, fmt.replace('%', '%%'))})", None)
    return Val(f'nu::kern::print({_format_symbol(tr, fmt)}{"".join(", " + c for c in values)})',
               None)


def _format_symbol(tr, fmt: str) -> str:
    """A printf format (C string literal text) as a file-scope __constant__ array, one per
    distinct format: Numba keeps its formats in constant memory, where a kernel's
    get_const_mem_size() counts them; a literal would land in global memory."""
    consts = tr.ctx.constants
    key = ("print format", fmt)
    symbol = consts.get(key)
    if symbol is None:
        symbol = f"nu_const_{len(consts)}"
        tr.ctx.file_scope.append(f'__constant__ const char {symbol}[] = "{fmt}";')
        consts[key] = symbol
    return symbol


def _print_value(tr, node, v, values) -> str:
    """The printf format of one value (a number, a tuple, a dim3); its arguments are
    appended to ``values``."""
    if isinstance(v.type, NamespaceRef) and v.type.name[5:] in _GEOMETRY:
        axis_fn = _GEOMETRY[v.type.name[5:]]  # print(cuda.threadIdx): "(x, y, z)"
        values.extend(f"(long long)({_geometry(axis_fn, k)})" for k in range(3))
        return "(%lld, %lld, %lld)"
    if isinstance(v.type, TupleType):
        items = v.type.items
        if isinstance(v.const, tuple):
            subs = [const_val(c) if not isinstance(c, tuple) else Val("", t, c)
                    for c, t in zip(v.const, items)]
        else:
            tmp = tr.temp("nu_print")
            tr.emit(f"const {ctype(v.type)} {tmp} = {v.code};")
            subs = [Val(f"{tmp}.v{i}", t) for i, t in enumerate(items)]
        inner = [_print_value(tr, node, sub, values) for sub in subs]
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    tr._numeric(node, v, "print()")
    k = kind_of(v.type)
    if k == "b":
        values.append(f'({tr.truth(v)} ? "True" : "False")')
        return "%s"
    if k == "i":
        unsigned = strong(v.type).name.startswith("uint")
        values.append(f"(unsigned long long)({v.code})" if unsigned else f"(long long)({v.code})")
        return "%llu" if unsigned else "%lld"
    if k == "f":
        values.append(f"(double)({v.code})")
        return "%f"
    raise tr.error(node, f"print() of {v.type} is not supported in kernels")
