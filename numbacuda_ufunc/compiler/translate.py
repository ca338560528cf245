"""Public entry of the translator: ``translate(pyfunc, arg_types) -> TranslatedFunction``.

The result holds the C++ of the function and of every Python function it calls
(translated recursively, one specialisation per tuple of argument types), ready to be
compiled after ``#include "nu_array.cuh"`` (which includes nu_scalar.cuh) by NVRTC or by the host backend.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import re
import sys
import threading
import types as pytypes
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np

from .. import config
from ..errors import CompileError, NumbaWarning
from ..types import Array, CPointer, Record, Scalar, parse_signature
from . import _records, _tuples
from ._foreign import declared_source
from ._source import BytecodeSource, error_at, line_directive, load_source
from ._translator import FunctionTranslator
from ._types import BOTTOM, TupleType, strong, typecode
from ._webs import split_webs, uninitialized_reads

__all__ = ["HEADER", "KERNEL_HEADER", "LINE_RESET", "line_directives", "TranslatedFunction",
           "TranslatedKernel", "forget_translations", "translate", "translate_kernel"]

HEADER = '#include "nu_array.cuh"\n'
# Ends the Python lines of a definition translated with line_info=True: whoever assembles
# the whole translation unit replaces it with a #line naming the unit (line_directives()).
LINE_RESET = "// nu: end of python lines"
KERNEL_HEADER = '#include "kernel.cuh"\n'
_LOCAL_LIMIT = 512 * 1024  # bytes of local memory a CUDA thread may have


@dataclass(frozen=True)
class TranslatedFunction:
    """A translated function: ``name`` is its C++ symbol (``nu_<pyname>_<types>_<hash8>``)."""

    name: str
    py_name: str
    arg_types: tuple
    return_type: object  # a Scalar, a TupleType, or None (no return value)
    source: str  # prototypes + definitions of this function and its helpers, no #include
    helpers: tuple = field(default=())  # symbols of the Python functions it calls
    foreign: tuple = ()  # C names of the foreign functions it calls (cuda.declare_device)
    links: tuple = ()  # files those and the device functions it calls ask to link

    @property
    def cuda_source(self) -> str:
        """A complete translation unit for NVRTC (or, after the host prelude, for g++)."""
        return HEADER + self.source


class _Record:
    def __init__(self, fn, arg_types, name):
        self.fn = fn
        self.arg_types = arg_types
        self.name = name
        self.return_type = BOTTOM  # known after the first inference pass
        self.prototype = None
        self.definition = None
        self.in_progress = True
        self.waits_on = set()  # in-progress records whose return type this one read
        self.recursive = False  # called while being translated: opens with NU_RECURSION_GUARD


class _Context:
    """Translation of one entry function and everything it calls."""

    def _translate(self, fn, src, arg_types, rec, declared_return):
        return _translate_split(self, fn, src, arg_types, rec, declared_return)

    def __init__(self, kernel=False, line_info=False, internal_linkage=False):
        self.records = {}
        # ``#line`` directives that map the C++ back to the Python source (lineinfo/debug).
        self.line_info = line_info
        # ``static`` functions: units compiled on their own and linked together later
        # (cuda.compile) must not each export the helpers they share.
        self.internal_linkage = internal_linkage
        self.order = []  # callees before callers
        self.stack = []
        # @cuda.jit kernels (src/compiler/_kernel_api.py): what the launch must know.
        self.kernel = kernel
        self.cooperative = False  # barriers or warp intrinsics
        self.grid_sync = False  # cuda.cg.this_grid().sync(): a cooperative launch
        self.static_shared_bytes = 0
        self.local_bytes = 0  # cuda.local.array per thread
        self.constants = {}  # frozen global arrays -> their symbol
        self.file_scope = []  # definitions of those arrays
        self.captured = []  # global device arrays the kernel reads by pointer: kept alive
        self.foreign = {}  # C name -> ForeignFunction called (cuda.declare_device)
        self.links = {}  # files to link (declare_device / device functions' link=), in order
        self.libdevice = False  # calls numba.cuda.libdevice functions (nu_libdevice.cuh)
        self.fp8 = False  # uses FP8 types or conversions (nu_fp8.cuh, _fp8.py)
        self.exceptions = []  # raise sites: (class, args, (function, file, line)); code = index + 1
        self.device_calls = []  # (module, qualname, types, return type) of @cuda.jit callees

    def function(self, fn, arg_types, caller=None, node=None, declared_return=None, src=None):
        key = (fn, arg_types, declared_return)
        rec = self.records.get(key)
        if rec is None and caller is not None and declared_return is None:
            # A recursive call of a function entered with a declared return type (an eager
            # device-function signature) is the same specialisation.
            rec = next((a for a in self.stack if a.fn is fn and a.arg_types == arg_types),
                       None)
        if rec is not None:
            if rec.in_progress:
                rec.recursive = True
                # Recursion (direct or mutual): every function entered since ``rec`` reads
                # its return type before it is final, so each is translated again on
                # ``rec``'s next pass instead of being kept (see _finish).
                for active in self.stack[self.stack.index(rec) + 1:]:
                    active.waits_on.add(rec)
            return rec
        for active in self.stack:
            if active.fn is fn and caller is not None:
                raise caller.error(node, f"recursive call of '{fn.__name__}' with changing "
                                         f"argument types ({', '.join(map(str, active.arg_types))}"
                                         f" -> {', '.join(map(str, arg_types))}) is not supported")
        if len(self.stack) > 64:
            raise caller.error(node, "calls nested more than 64 functions deep")
        src = src or load_source(fn)  # given for nested functions (_closures.py)
        digest = hashlib.sha256(repr((fn.__module__, fn.__qualname__, src.text(),
                                      [t.token() if hasattr(t, "token") else str(t)
                                       for t in arg_types],
                                      str(declared_return), _environment_token(fn))
                                     ).encode()).hexdigest()[:8]
        pyname = re.sub(r"\W", "_", src.name) if src.name.isascii() else "fn"
        codes = "".join(typecode(t) for t in arg_types) or "v"
        rec = _Record(fn, arg_types, f"nu_{pyname}_{codes}_{digest}")
        rec.entry = caller is None
        self.records[key] = rec
        self.stack.append(rec)
        try:
            rec.definition = self._translate(fn, src, arg_types, rec, declared_return)
        except CompileError as exc:
            if caller is None:
                raise
            # Where the failing function was called from, as Numba's "During:" lines.
            line = (getattr(node, "lineno", 0) or 0) + caller.src.line_offset
            raise CompileError(f"{exc}\nDuring: resolving callee type: type(CUDADispatcher("
                               f"<function {fn.__qualname__}>)), called at "
                               f"{caller.src.filename}:{line} in function "
                               f"'{caller.src.name}'") from None
        finally:
            self.stack.pop()
        rec.in_progress = False
        rec.waits_on.discard(rec)
        if any(r.in_progress for r in rec.waits_on):
            # Provisional: typed against a caller still being inferred. It is not kept,
            # so the caller's next pass (ultimately its emission pass, with final types)
            # translates it again; the last translation replaces this one in ``order``.
            del self.records[key]
        self.order = [r for r in self.order if r.name != rec.name]
        self.order.append(rec)
        return rec


def _translate_split(ctx, fn, src, arg_types, rec, declared_return):
    """Translates the function; where one name holds values of incompatible types in
    independent parts of it, translates it again with a name per part (_webs.py)."""
    tr = FunctionTranslator(ctx, fn, src, arg_types, rec, declared_return)
    try:
        definition = tr.run()
        _warn_uninitialized(src, tr.if_tests)
        return definition
    except CompileError as exc:
        split = split_webs(src.node, tr.if_tests) \
            if getattr(exc, "nu_incompatible", False) else None
        if split is None:
            raise
        first = exc
    again = copy.copy(src)
    again.node = split
    rec.return_type, rec.prototype, rec.waits_on = BOTTOM, None, set()
    tr = FunctionTranslator(ctx, fn, again, arg_types, rec, declared_return)
    try:
        definition = tr.run()
        _warn_uninitialized(again, tr.if_tests)
        return definition
    except CompileError as exc:
        if getattr(exc, "nu_incompatible", False):
            raise first from None  # the names that do not split: the original message
        raise


def _warn_uninitialized(src, if_tests):
    """Numba's warning (with ALWAYS_WARN_UNINIT_VAR) for locals that some path reads before
    any assignment; such a read gives the type's zero here. Functions without source are
    lifted into a state machine whose paths the analysis cannot follow: not checked."""
    # Numba's ALWAYS_WARN_UNINIT_VAR (default off), read at each translation so that
    # cuda.config.ALWAYS_WARN_UNINIT_VAR = 1 applies from then on (a deleted one is off).
    if not getattr(config, "ALWAYS_WARN_UNINIT_VAR", 0) or isinstance(src, BytecodeSource):
        return
    for name, node in uninitialized_reads(src.node, if_tests):
        line = node.lineno + src.line_offset
        warnings.warn_explicit(NumbaWarning(
            f"Detected uninitialized variable {name} in function '{src.name}' "
            f"({src.filename}:{line}): some path reads it before any assignment (Python "
            f"raises UnboundLocalError there; the kernel reads the zero of its type)"),
            NumbaWarning, src.filename, line)


def _environment_token(fn, depth=0):
    """What the function's free names are bound to (closure cells, and the globals its code
    names): two closures of one source (``make(operator.add)``, ``make(operator.sub)``)
    translate differently, so their C++ names must differ too, or one translation unit
    would keep only the first. Stable across processes wherever the values are (numbers,
    modules, functions by name), so the disk cache still finds the kernels."""
    code = fn.__code__
    cells = [_cell_value(c) for c in (fn.__closure__ or ())]
    names = [n for n in code.co_names if n in fn.__globals__]
    return (tuple(_value_token(v, depth) for v in cells),
            tuple((n, _value_token(fn.__globals__[n], depth)) for n in names))


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet assigned
        return None


def _value_token(v, depth):
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic,
                                   enum.Enum)):
        return f"{type(v).__qualname__}:{v!r}"
    if isinstance(v, tuple) and depth < 4:
        return tuple(_value_token(x, depth + 1) for x in v)
    if isinstance(v, pytypes.ModuleType):
        return f"module:{v.__name__}"
    v = getattr(v, "py_func", v)  # device functions, kernels, ufuncs: their function
    if isinstance(v, pytypes.FunctionType):
        where = f"{v.__module__}.{v.__qualname__}:{v.__code__.co_firstlineno}"
        return (where, _environment_token(v, depth + 1)) if depth < 2 else where
    if isinstance(v, np.ndarray) and v.nbytes <= 1 << 16:
        return f"ndarray:{v.dtype.str}:{v.shape}:{hashlib.sha256(v.tobytes()).hexdigest()[:16]}"
    name = getattr(v, "__qualname__", None)
    if isinstance(name, str):  # classes, builtins (operator.add), types
        return f"{getattr(v, '__module__', '')}.{name}"
    return f"{type(v).__qualname__}:{id(v):x}"  # anything else: this object


def _includes(ctx) -> str:
    """Headers only some units need (their parse time is paid only by those)."""
    return (('#include "nu_libdevice.cuh"\n' if ctx.libdevice else "")
            + ('#include "nu_fp8.cuh"\n' if ctx.fp8 else ""))


def _source_of(records, line_info=False) -> str:
    protos = [r.prototype + ";" for r in records]
    # Guards let many translated functions share one translation unit (tests and loops
    # batch them) even when they call the same helper. With line information, what follows
    # a definition maps back to the unit itself (see LINE_RESET).
    reset = f"\n{LINE_RESET}" if line_info else ""
    defs = [f"#ifndef NU_DEFINED_{r.name}\n#define NU_DEFINED_{r.name}\n{r.definition}\n#endif"
            f"{reset}" for r in records]
    body = "\n".join(protos) + "\n\n" + "\n\n".join(defs) + "\n"
    # the structs of record dtypes and of tuples longer than 8 items used
    return _records.definitions(body) + _tuples.long_tuple_definitions(body) + body


_cache_lock = threading.Lock()
_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _python_function(pyfunc, api):
    fn = getattr(pyfunc, "py_func", pyfunc)
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise CompileError(f"{api}: expected a Python function (got {pyfunc!r})")
    return fn


def _memoized(fn, key, build):
    """The translation of ``fn`` for ``key``, made once (per function object, weakly)."""
    with _cache_lock:
        hit = _cache.get(fn, {}).get(key)
    if hit is not None:
        return hit
    made = build()
    with _cache_lock:
        return _cache.setdefault(fn, {}).setdefault(key, made)


def forget_translations(pyfunc) -> None:
    """Drop the translations of ``pyfunc`` made so far, so the next ones read its globals
    again (Numba's ``recompile()``)."""
    with _cache_lock:
        _cache.pop(getattr(pyfunc, "py_func", pyfunc), None)


def _as_types(arg_types, kernel=False):
    if isinstance(arg_types, str):
        arg_types = parse_signature(arg_types).args
    out = []
    for t in arg_types:
        if isinstance(t, str):
            t = parse_signature(f"({t},)").args[0]
        if isinstance(t, Record) or isinstance(t, Array) and isinstance(t.dtype, Record):
            try:
                _records.struct_name(t if isinstance(t, Record) else t.dtype)
            except _records.RecordError as exc:
                raise CompileError(f"translate(): {exc}") from None
        if isinstance(t, CPointer):  # an address (kernels) or a T* / void* (_pointers.py)
            out.append(t)
            continue
        if not isinstance(t, (Scalar, TupleType, Array)):
            raise CompileError(f"translate(): argument types must be scalar, array, tuple or "
                               f"pointer types such as float32, float32[:, :] or "
                               f"CPointer(int32) (got {t!r})")
        if isinstance(t, Array) and t.ndim < 1 and not kernel:  # kernels take 0-d arrays
            raise CompileError(f"translate(): array arguments need at least one dimension; "
                               f"pass a 0-d value as a scalar (got {t!r})")
        out.append(t)
    return tuple(out)


def translate(pyfunc, arg_types, return_type=None, line_info=False,
              internal_linkage=False) -> TranslatedFunction:
    """Translate ``pyfunc`` for the given argument types.

    ``return_type`` (a scalar type) makes the C++ function return that type, casting each
    returned value as NumPy would; by default the return type is inferred. ``line_info``
    adds ``#line`` directives naming the Python file and lines (for NVRTC's ``-lineinfo``
    and ``-G``; the unit must then go through ``line_directives``); ``internal_linkage``
    makes every translated function ``static``. Raises CompileError (a TypeError) for
    anything outside the supported subset.
    """
    fn = _python_function(pyfunc, "translate()")
    types = _as_types(arg_types)
    if return_type is not None and not isinstance(return_type, Scalar):
        raise CompileError(f"translate(): return_type must be a scalar type (got "
                           f"{return_type!r})")

    line_info, internal_linkage = bool(line_info), bool(internal_linkage)

    def build():
        ctx = _Context(line_info=line_info, internal_linkage=internal_linkage)
        rec = ctx.function(fn, types, declared_return=return_type)
        ret = rec.return_type
        return TranslatedFunction(
            name=rec.name, py_name=fn.__name__, arg_types=types,
            return_type=strong(ret) if ret is not None else None,
            source=_includes(ctx) + declared_source(ctx) + _source_of(ctx.order, line_info),
            helpers=tuple(r.name for r in ctx.order[:-1]), foreign=tuple(ctx.foreign),
            links=tuple(ctx.links))

    options = (("lines",) if line_info else ()) + (("static",) if internal_linkage else ())
    return _memoized(fn, (types, return_type) + options, _within_depth(fn, build))


def _within_depth(fn, build):
    """``build`` with a RecursionError (code nested deeper than the translator's recursion
    allows) turned into a CompileError that names the function's file and line, not a bare
    RecursionError from deep inside the translator."""
    def run():
        try:
            return build()
        except RecursionError:
            code = fn.__code__
            raise CompileError(
                f"{code.co_filename}:{code.co_firstlineno}: function {fn.__name__!r} is nested "
                f"too deeply to translate (Python's recursion limit, {sys.getrecursionlimit()}, "
                f"was reached): split the long expression or if/elif chain into helper "
                f"functions, or raise sys.setrecursionlimit()") from None
    return run


@dataclass(frozen=True)
class TranslatedKernel:
    """A translated @cuda.jit kernel: the ``__device__ void`` function ``name`` (with its
    helpers and frozen global arrays in ``source``), and what its launch must know."""

    name: str
    py_name: str
    arg_types: tuple
    source: str  # no #include; the engine adds kernel.cuh and the entry point
    cooperative: bool  # uses barriers or warp intrinsics
    static_shared_bytes: int
    grid_sync: bool = False  # uses cuda.cg.this_grid().sync()
    local_types: tuple = ()  # (name, type) of arguments and locals, for inspect_types()
    captured: tuple = ()  # global device arrays whose pointers the source holds
    foreign: tuple = ()  # C names of the foreign functions it calls (cuda.declare_device)
    links: tuple = ()  # files to link that declare_device / device functions ask for
    exceptions: tuple = ()  # raise sites, code k at index k - 1: (class, args, (fn, file, line))
    # (module, qualname, argument types, return type) of the module-level @cuda.jit kernels
    # it calls as device functions: a translation loaded from cache=True files tells them
    # again (their signatures list such calls, as Numba's do)
    device_calls: tuple = ()

    @property
    def cuda_source(self) -> str:
        return KERNEL_HEADER + self.source


def translate_kernel(pyfunc, arg_types, line_info=False,
                     internal_linkage=False, launch_config=None) -> TranslatedKernel:
    """Translate ``pyfunc`` as a @cuda.jit kernel for the given argument types (scalars,
    arrays, 0-d arrays, tuples and CPointer addresses). Raises CompileError for anything outside the
    subset, for a kernel that returns a value, and for misuse of the ``cuda`` intrinsics.
    ``line_info``, ``internal_linkage``: as for ``translate``. ``launch_config`` (a hashable
    key of the launch configuration being compiled for) keeps the translations of a kernel
    whose code depends on its configuration (mark_launch_config_sensitive) apart."""
    fn = _python_function(pyfunc, "cuda.jit()")
    types = _as_types(arg_types, kernel=True)
    line_info, internal_linkage = bool(line_info), bool(internal_linkage)
    options = (("lines",) if line_info else ()) + (("static",) if internal_linkage else ())
    if launch_config is not None:
        options += (("config", launch_config),)
    return _memoized(fn, ("kernel", types) + options,
                     _within_depth(fn, lambda: _kernel_of(fn, types, line_info, internal_linkage)))


def _kernel_of(fn, types, line_info=False, internal_linkage=False) -> TranslatedKernel:
    ctx = _Context(kernel=True, line_info=line_info, internal_linkage=internal_linkage)
    rec = ctx.function(fn, types)
    if rec.return_type is not None:
        src = load_source(fn)
        raise error_at(src, src.node, f"kernel '{fn.__name__}' returns a value "
                                      f"({rec.return_type}); kernels return nothing: write "
                                      f"results into an array argument")
    if ctx.local_bytes > _LOCAL_LIMIT:
        src = load_source(fn)
        raise error_at(src, src.node, f"kernel '{fn.__name__}' declares {ctx.local_bytes} bytes of "
                                      f"cuda.local.array per thread, more than CUDA's "
                                      f"{_LOCAL_LIMIT} (use global or shared memory)")
    scope = "\n".join(ctx.file_scope + [_includes(ctx) + declared_source(ctx)])
    return TranslatedKernel(
        name=rec.name, py_name=fn.__name__, arg_types=types,
        source=(scope + "\n\n" if scope.strip() else "") + _source_of(ctx.order, line_info),
        cooperative=ctx.cooperative, static_shared_bytes=ctx.static_shared_bytes,
        grid_sync=ctx.grid_sync, local_types=getattr(rec, "var_types", ()),
        captured=tuple(ctx.captured), foreign=tuple(ctx.foreign), links=tuple(ctx.links),
        exceptions=tuple(ctx.exceptions), device_calls=tuple(ctx.device_calls))


def line_directives(unit: str, unit_name: str = "nu_module.cu") -> str:
    """A whole translation unit with each LINE_RESET replaced by the ``#line`` that gives
    the lines after it their own numbers in ``unit_name`` again."""
    lines = unit.split("\n")
    for i, text in enumerate(lines):
        if text == LINE_RESET:
            lines[i] = line_directive(unit_name, i + 2)
    return "\n".join(lines)


__all__ += ["error_at", "line_directive"]
