"""One Python function -> one typed C++ __device__ function.

A FunctionTranslator walks the function's AST twice over the same code path: first in
inference mode, repeated until the types of all locals and of the return value stop
changing (a loop can widen a variable on a later iteration), then once in emission mode
with the final types, producing C++ text. Expressions are translated to (code, type)
values; operators and library calls become calls of the helpers in src/kernels/.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import enum
import math
import operator
import re
import sys
import types as pytypes

import numpy as np

from ..types import (
    CPointer,
    Record,
    Scalar,
    Signature,
    from_dtype,
    struct_record,
)
from . import _arrays as arrays
from . import _enums as enums
from . import _exceptions as exceptions
from . import _foreign as foreign
from . import _fp8 as fp8
from . import _kernel_api as kernel_api
from . import _overloads as overloads
from . import _pointers as pointers
from . import _record_access as records
from . import _tuples as tuples
from . import _vectors as vectors
from ._bytecode import HIDDEN
from ._library import (
    lookup_attribute,
    lookup_global_function,
)
from ._source import error_at, line_directive
from ._translator_calls import CallTranslation
from ._translator_operators import OperatorTranslation, _cname
from ._translator_statements import StatementTranslation, _local_names, _own_nodes, _stored_names
from ._types import (
    BOTTOM,
    WEAK_FLOAT,
    WEAK_INT,
    Bottom,
    OptionalType,
    PromotionError,
    TupleType,
    Weak,
    ctype,
    is_array,
    is_complex,
    kind_of,
    strong,
)
from ._values import (
    BuiltinRef,
    LiteralRef,
    ModuleRef,
    PyFuncRef,
    Ref,
    StringRef,
    TypeRef,
    UnsupportedDtypeRef,
    UserModuleRef,
    Val,
    cast_code,
    const_val,
)

__all__ = ["FunctionTranslator"]

_UNSUPPORTED_EXPR = {
    "ListComp": "list comprehension", "SetComp": "set comprehension",
    "DictComp": "dict comprehension", "GeneratorExp": "generator expression",
    "Yield": "yield", "YieldFrom": "yield from", "Await": "await",
    "List": "list", "Dict": "dict", "Set": "set", "JoinedStr": "f-string",
    "FormattedValue": "f-string", "NamedExpr": "assignment expression (:=)",
    "Starred": "starred expression", "Slice": "slice",
}
_MAX_PASSES = 32
# Calls whose order can show: translated device functions (nu_<name>_<types>_<hash8>) and
# kernel intrinsics with effects (atomics, random draws, print, barriers and warp
# collectives, cache-hinted loads and stores, exceptions). Python evaluates operands left to
# right; C++ leaves the order of a call's arguments unspecified (g++ often goes right to
# left), so such operands are bound to temporaries in Python's order (in_order).
_EFFECTS = re.compile(r"\bnu_\w+_[0-9a-f]{8}\(|nu::kern::(?:atomic|xoroshiro128p_(?:uniform|normal)"
                      r"|print|sync|\w+_sync\b|activemask|nanosleep|cache_|raise|assert)")


def _has_effects(v) -> bool:
    return bool(v.code) and _EFFECTS.search(v.code) is not None


def _reads_nothing(v) -> bool:
    """A constant or a plain name: its value cannot depend on when it is read."""
    return v.const is not None or not v.code or v.code.isidentifier()


def _param_names(fn_node) -> list[str]:
    a = fn_node.args
    return [x.arg for x in a.posonlyargs + a.args] + ([a.vararg.arg] if a.vararg else [])


def _constant_locals(fn_node) -> dict:
    """Locals bound once, at the top level of the body, to a literal number or tuple of
    numbers (``n = 32``, ``shape = (16, 16)``): their value is known at compile time, so
    they can size a shared or local array as a global constant can."""
    if not isinstance(fn_node, ast.FunctionDef):
        return {}
    stores = {}
    for name in _stored_names(fn_node):
        stores[name] = stores.get(name, 0) + 1
    params = set(_param_names(fn_node))
    out = {}
    for stmt in fn_node.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            name = stmt.targets[0].id
            try:
                value = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            ok = (type(value) in (int, float) or isinstance(value, tuple) and value and all(
                type(v) in (int, float) for v in value))
            if ok and stores.get(name) == 1 and name not in params:
                out[name] = value
    return out


class FunctionTranslator(StatementTranslation, OperatorTranslation, CallTranslation):
    """Types and emits one function for one tuple of argument types."""

    def __init__(self, ctx, fn, src, arg_types, record, declared_return=None):
        self.ctx = ctx
        self.fn = fn
        self.src = src
        self.node = src.node
        self.arg_types = tuple(arg_types)
        self.record = record
        self.declared_return = declared_return
        # Hidden parameters: what a nested function reads from its definer (_closures.py).
        self.arg_names = _param_names(self.node) + list(getattr(src, "hidden", ()))
        self.locals = _local_names(self.node) | set(self.arg_names)
        self.constant_locals = _constant_locals(self.node)
        self.vars = dict(zip(self.arg_names, self.arg_types))
        self.ret = BOTTOM
        self.returns_none = False
        self.emitting = False
        self.lines = []
        self.depth = 1
        self.counter = 0
        # Loop variables of unrolled loops: name -> (hidden local of this item, constant).
        self.aliases = {}
        self.unroll_path = ()  # (loop node id, item) of the enclosing unrolled loops
        self.unroll_slots = {}  # unroll_path -> number, stable over the inference passes
        self.loops = []  # enclosing loops, innermost last: None or tuples.Unrolled
        self.rewritten = {}  # id(for statement) -> (it, its enumerate/zip rewrite)
        self.star_bindings = []  # per call being translated: (name, tuple Val) of f(*g())
        self.storage = []  # C++ arrays declared with the locals: a.copy()'s (_arrays.copy)
        # id(If node) -> the values its test had: True/False where the branch was pruned
        # at compile time, None where it was not; _webs.py follows the pruned branches.
        self.if_tests = {}
        self.statement = None  # the statement being translated

    # ---- driver ----------------------------------------------------------------------------
    def run(self) -> str:
        a = self.node.args
        if a.kwarg or a.kwonlyargs or a.vararg and self.record.entry:
            raise self.error(self.node, "**kwargs and keyword-only parameters are not "
                                        "supported (nor *args in a kernel)" if not a.vararg else
                                        "*args parameters are supported in device functions "
                                        "only, not in kernels or ufuncs")
        if len(self.arg_names) != len(self.arg_types):
            raise self.error(self.node, f"function '{self.src.name}' takes "
                                        f"{len(self.arg_names)} arguments (got "
                                        f"{len(self.arg_types)} argument types)")
        body = self.node.body if isinstance(self.node, ast.FunctionDef) else None
        for _ in range(_MAX_PASSES):
            before = (dict(self.vars), self.ret)
            self.ret, self.returns_none = BOTTOM, False
            self.lines = []
            self._body_or_lambda(body)
            self.record.return_type = self._final_return()
            if (dict(self.vars), self.ret) == before:
                break
        else:
            raise self.error(self.node, "types of the local variables do not settle")
        if isinstance(self.ret, Bottom) and body is not None and not any(
                isinstance(n, ast.Return) and n.value is not None
                and not (isinstance(n.value, ast.Constant) and n.value.value is None)
                for n in _own_nodes(self.node)):
            self.ret = None  # no `return <value>` anywhere: the function returns None
        if self.ret is None and self.declared_return is not None:
            raise self.error(self.node, f"function '{self.src.name}' never returns a value, "
                                        f"but its signature declares {self.declared_return}")
        if isinstance(self.ret, Bottom):
            raise self.error(self.node, self._unresolved_return_message())
        for name, t in self.vars.items():
            if isinstance(t, Bottom):
                raise self.error(self.node, f"local variable '{name}' is read before any "
                                            f"assignment")
        self.record.return_type = self._final_return()
        self.record.var_types = tuple((n, t) for n, t in self.vars.items()
                                      if not n.startswith("__nu_"))  # inspect_types()
        self.emitting = True
        self.lines = []
        self._body_or_lambda(body)
        return self._assemble()

    def _body_or_lambda(self, body):
        if body is None:  # lambda: a single expression
            v = self.expr(self.node.body)
            if v.type is None:  # lambda: None, lambda: cuda.syncthreads(): returns None
                if v.code:
                    self.emit(f"{v.code};")
                self.ret, self.returns_none = None, True
                return
            self._return_value(self.node.body, v)
        else:
            reaches_end = not self._always_returns(body)
            if reaches_end and not isinstance(self.ret, Bottom) and self.ret is not None \
                    and self.emitting and self.record.entry:
                raise self.error(body[-1], "the function can reach its end without returning "
                                           "a value (it would return None)")
            self.block(body)
            if reaches_end and not isinstance(self.ret, Bottom) and self.ret is not None \
                    and not self.record.entry:
                self.returns_none = True  # the end returns None: an OptionalType result
                if self.emitting:
                    self._return_none()

    def _unresolved_return_message(self) -> str:
        """Why the return type stayed unknown, in Numba's words: a recursion that never
        reaches a return without a recursive call, or one whose type keeps changing."""
        name = self.src.name

        def recursive(n):
            return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                       and c.func.id == name for c in ast.walk(n))
        base_case = any(isinstance(n, ast.Return) and (n.value is None or not recursive(n.value))
                        for n in _own_nodes(self.node))
        if base_case:
            return ("Return type of recursive function does not converge: the types its "
                    "returns give do not settle on one type")
        return ("cannot type infer runaway recursion: no return reaches a value without "
                "calling the function again (a base case that returns first?)")

    def _final_return(self):
        if self.declared_return is not None:
            return self.declared_return
        if self.ret is None or isinstance(self.ret, Bottom):
            return self.ret
        if self.record.entry and isinstance(self.ret, OptionalType):
            return strong(self.ret.type)  # a kernel or ufunc returns the value
        if self.returns_none and not self.record.entry:
            # a value on some paths, None on others: Numba's Optional
            return strong(self.ret) if isinstance(self.ret, OptionalType) \
                else OptionalType(strong(self.ret))
        if not self.record.entry:
            # A Python function called from translated code returns what Python would: a
            # Python float stays weak beside float32 in the caller (NEP 50).
            return self.ret
        return strong(self.ret)

    def _assemble(self) -> str:
        ret = self.record.return_type
        params, prologue = [], []
        for name, t in zip(self.arg_names, self.arg_types):
            if isinstance(t, Ref):  # compile-time argument: no C++ parameter
                continue
            final = self.vars[name]
            if final == t or ctype(final) == ctype(t) and kind_of(final) == kind_of(t):
                params.append(f"{ctype(t)} {_cname(name)}")
            else:
                params.append(f"{ctype(t)} p_{_cname(name)}")
                prologue.append(f"    {ctype(final)} {_cname(name)} = "
                                f"{cast_code(Val('p_' + _cname(name), t), final)};")
        decls = [f"    {ctype(t)} {_cname(n)}{{}};" for n, t in self.vars.items()
                 if n not in self.arg_names and not isinstance(t, Ref)]
        linkage = "static " if self.ctx.internal_linkage else ""
        self.record.prototype = (f"{linkage}__device__ {ctype(ret)} {self.record.name}"
                                 f"({', '.join(params)})")
        tail = [] if ret is None or not self._needs_tail else [
            "    return nullptr;" if isinstance(ret, Record) else f"    return {ctype(ret)}{{}};"]
        if getattr(self.record, "recursive", False):  # host kernels: fail before the stack does
            name = self.src.name if re.fullmatch(r"[\w<>.]+", self.src.name, re.ASCII) else "fn"
            prologue.insert(0, f'    NU_RECURSION_GUARD("{name}");')
        head = self._line_directives(self.node) + [self.record.prototype + " {"]
        return "\n".join(head + prologue + decls + self.storage + self.lines + tail + ["}"])

    @property
    def _needs_tail(self):
        # C++ compilers warn about a missing return after loops that always return.
        return isinstance(self.node, ast.FunctionDef)

    def _always_returns(self, stmts) -> bool:
        if not stmts:
            return False
        last = stmts[-1]
        if isinstance(last, ast.Return) or isinstance(last, ast.Raise) and not (
                isinstance(last.exc, ast.Call) and isinstance(last.exc.func, ast.Name)
                and last.exc.func.id == exceptions.ASSERTION_ERROR):
            return True
        while isinstance(last, ast.If):  # an elif chain, iteratively
            if not self._always_returns(last.body):
                return False
            if len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If):
                last = last.orelse[0]
                continue
            return self._always_returns(last.orelse)
        if isinstance(last, ast.While):
            test = last.test
            return (isinstance(test, ast.Constant) and test.value is True and not any(
                isinstance(n, ast.Break) for n in ast.walk(last)))
        return False

    # ---- helpers ---------------------------------------------------------------------------
    def error(self, node, message):
        return error_at(self.src, node, message)

    def promote(self, node, thunk):
        try:
            return thunk()
        except PromotionError as exc:
            raise self.error(node, str(exc)) from None

    def cast(self, node, v, t) -> str:
        try:
            return cast_code(v, t)
        except PromotionError as exc:
            raise self.error(node, str(exc)) from None

    def truth(self, v) -> str:
        if kind_of(v.type) == "b":
            return v.code
        return f"nu::truth({v.code})"

    def temp(self, prefix="nu_t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def in_order(self, vals) -> tuple:
        """(bindings, vals): when one of the operands ``vals`` has effects and another one
        reads anything, every scalar operand but the last is bound to a temporary, in
        Python's left-to-right order ((name, Val) pairs for the caller to emit first)."""
        if len(vals) < 2 or not any(_has_effects(v) for v in vals) or \
                sum(not _reads_nothing(v) for v in vals) < 2:
            return [], list(vals)
        bindings, out = [], []
        for v in vals[:-1]:
            if _reads_nothing(v) or not isinstance(strong(v.type), Scalar):
                out.append(v)  # arrays, tuples and compile-time values stay as they are
                continue
            name = self.temp("nu_o")
            bindings.append((name, v))
            out.append(Val(name, v.type))
        return bindings, out + [vals[-1]]

    def _line_directives(self, node) -> list:
        """``[#line]`` mapping what follows to ``node``'s Python line (lineinfo/debug
        builds), else ``[]``; so does a node without a line (a rewrite's)."""
        if not self.ctx.line_info or not getattr(node, "lineno", None):
            return []
        return [line_directive(self.src.filename, node.lineno + self.src.line_offset)]

    def emit(self, line):
        if self.emitting:
            self.lines.append("    " * self.depth + line)

    def _numeric(self, node, v, what):
        if isinstance(v.type, Bottom):
            return False
        if v.type is None:
            raise self.error(node, f"{what}: the value is None (a function without a return "
                                   f"value?)")
        if isinstance(v.type, Ref):
            raise self.error(node, f"{what}: {v.type.name} is not a number")
        if enums.plain(v.type):
            raise self.error(node, f"{what}: a member of the Enum {v.type.cls.__name__} is not "
                                   f"a number (use its .value, or an IntEnum)")
        if isinstance(v.type, TupleType):
            raise self.error(node, f"{what}: tuples are not supported here (got {v.type})")
        if is_array(v.type):
            raise self.error(node, f"{what}: whole arrays are not supported here (got "
                                   f"{v.type}); index their elements, as in a[i]")
        if isinstance(v.type, Record):
            raise self.error(node, f"{what}: a record is not a number (got {v.type}); read "
                                   f"one of its fields, as in r.x")
        if fp8.is_fp8_value(v.type):
            raise self.error(node, f"{what}: a {v.type.name} value is not a number here "
                                   f"(FP8 values have no arithmetic, as in Numba); convert it "
                                   f"first, as in float32(v)")
        return True


    # ---- expressions -----------------------------------------------------------------------
    def expr(self, e) -> Val:
        """The value of ``e``; an OptionalType value reads as its value (Numba unwraps an
        Optional where a value is needed). ``expr_raw`` keeps it, for names, returns and
        ``is None``."""
        v = self.expr_raw(e)
        if isinstance(v.type, OptionalType):
            return Val(f"({v.code}).value", v.type.type)
        return v

    def expr_raw(self, e) -> Val:
        kind = type(e).__name__
        if kind in _UNSUPPORTED_EXPR:
            raise self.error(e, f"unsupported construct '{_UNSUPPORTED_EXPR[kind]}'")
        handler = getattr(self, "expr_" + kind, None)
        if handler is None:
            raise self.error(e, f"unsupported expression '{kind}'")
        return handler(e)

    def expr_Constant(self, e):
        if e.value is None:
            return Val("", None)
        if isinstance(e.value, (str, bytes)):
            # a compile-time value (compared, passed, stored into S/U elements)
            return Val("", StringRef(e.value))
        v = self.promote(e, lambda: const_val(e.value))
        if v is None:
            raise self.error(e, f"unsupported constant {e.value!r}")
        return v

    def _float_of_string(self, e):
        """``float("nan")``, ``float("-inf")``...: a string literal, folded at compile time (the
        one use of strings kernels have, as in Numba)."""
        if not (isinstance(e.func, ast.Name) and e.func.id == "float" and len(e.args) == 1
                and not e.keywords and isinstance(e.args[0], ast.Constant)
                and isinstance(e.args[0].value, str) and e.func.id not in self.locals
                and self.fn.__globals__.get("float", builtins.float) is builtins.float):
            return None
        try:
            value = float(e.args[0].value)
        except ValueError:
            raise self.error(e, f"float(): could not convert the string to a float (got "
                                f"{e.args[0].value!r})") from None
        return self.promote(e, lambda: const_val(value))

    def expr_Name(self, e):
        name = e.id
        alias = self.aliases.get(name)
        if alias is not None:  # the loop variable of an unrolled loop: this item's
            hidden, const = alias
            t = self.vars.get(hidden, BOTTOM)
            return Val(_cname(hidden) if not isinstance(t, Bottom) else "0", t, const)
        if name in self.locals:
            if name not in self.vars:
                if self.emitting:
                    raise self.error(e, f"local variable '{name}' is read before assignment")
                return Val("0", BOTTOM)
            t = self.vars[name]
            if isinstance(t, LiteralRef):  # an integer constant argument (_literal_args)
                return const_val(t.value)
            if isinstance(t, Ref) and not isinstance(t, kernel_api.NamespaceRef):
                return Val("", t)  # a compile-time argument
            const = self.constant_locals.get(name)
            if const is not None and not isinstance(const, tuple) and isinstance(t, Weak):
                return Val(_cname(name), t, const)
            if isinstance(const, tuple) and isinstance(t, TupleType):
                return Val(_cname(name), t, const)
            return Val(_cname(name), t)
        return self.global_value(e, name)

    def global_value(self, node, name):
        fn = self.fn
        code = fn.__code__
        # A function calling itself by a name not bound yet: decorated with a signature, it
        # is translated while `def` runs, before the name is assigned (Numba allows this).
        unbound_self = name == code.co_name
        if name in code.co_freevars:
            cell = fn.__closure__[code.co_freevars.index(name)]
            try:
                value = cell.cell_contents
            except ValueError:
                if not unbound_self:
                    raise self.error(node, f"free variable '{name}' is not bound yet") from None
                value = fn
        elif unbound_self and name not in fn.__globals__:
            value = fn
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        elif name.startswith("__nu_") and name in HIDDEN:  # helpers of lifted bytecode
            value = HIDDEN[name]
            if value is None:
                return Val("", BuiltinRef(name))
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            raise self.error(node, f"NameError: name '{name}' is not defined")
        return self.classify(node, name, value)

    def classify(self, node, name, value) -> Val:
        """A compile-time Python object as a Val (constant) or a Ref (module, function...)."""
        if isinstance(value, pytypes.ModuleType):
            if value in (math, cmath, np, operator):
                return Val("", ModuleRef(value))
            if value.__name__.partition(".")[0] == "numbacuda_ufunc":  # cuda, types
                return Val("", kernel_api.NamespaceRef(value, value.__name__))
            if value.__name__.partition(".")[0] in sys.stdlib_module_names:
                raise self.error(node, f"module '{value.__name__}' cannot be used in a "
                                       f"translated function (supported: math, cmath, operator, "
                                       f"numpy, cuda, and the functions and constants of your "
                                       f"own modules)")
            return Val("", UserModuleRef(value))  # mymod.f(x): the user's own module
        if overloads.is_overloaded(value):  # @overload(value): before any other reading
            return Val("", overloads.OverloadRef(value))
        api = overloads.llvm_only_api(value)
        if api is not None:
            raise NotImplementedError(str(self.error(
                node, f"'{name}' is implemented with Numba's low-level API ({api}), which "
                      f"generates LLVM IR; numbacuda_ufunc translates to CUDA C++ without LLVM "
                      f"(use @overload or register_jitable)")))
        if enums.is_enum_class(value):
            return Val("", enums.EnumClassRef(value))
        if isinstance(value, enum.Enum):
            return enums.member(self, node, value)
        vector_ctor = vectors.ctor_of(value)  # cuda.float32x4...
        if vector_ctor is not None:
            return Val("", vector_ctor)
        fp8_ctor = fp8.ctor_of(value)  # fp8_e4m3...
        if fp8_ctor is not None:
            return Val("", fp8_ctor)
        key = getattr(type(value), "_nu_intrinsic", None) and value._nu_intrinsic
        if key:
            return kernel_api.value(self, node, kernel_api.IntrinsicRef(key))
        if isinstance(getattr(value, "_nu_namespace", None), str):
            return Val("", kernel_api.NamespaceRef(value, f"cuda.{value._nu_namespace}"))
        if isinstance(value, np.ndarray):
            return kernel_api.constant_array(self, node, name, value)
        if hasattr(type(value), "__cuda_array_interface__") or (
                "__cuda_array_interface__" in getattr(value, "__dict__", ())):  # set on the instance
            return kernel_api.device_array_global(self, node, name, value)
        if isinstance(value, np.dtype):
            try:
                return Val("", TypeRef(from_dtype(value)))
            except TypeError:  # an error where it is used (as an array's dtype...)
                return Val("", UnsupportedDtypeRef(value))
        try:
            v = const_val(value)
        except PromotionError as exc:
            raise self.error(node, str(exc)) from None
        if v is not None:
            return v
        if isinstance(value, (str, bytes)):  # a global or closure string: compile-time, as a literal is
            return Val("", StringRef(value))
        if tuples.is_namedtuple_class(value):
            return Val("", tuples.NamedTupleRef(value))
        if pointers.is_cffi_ffi(value):
            return Val("", pointers.FfiRef())
        if getattr(value, "_nu_pointer_array", None) in ("C", "F"):  # carray / farray
            return Val("", pointers.PointerArrayRef(value._nu_pointer_array))
        ref = lookup_global_function(value) if callable(value) else None
        if ref is not None:
            return Val("", ref)
        if isinstance(value, Scalar):
            return Val("", TypeRef(value))
        rec = struct_record(value)  # a user type with a registered StructModel
        if rec is not None:
            return Val("", TypeRef(rec))
        if isinstance(value, type) and issubclass(value, np.generic):
            r = lookup_attribute(np, value.__name__)
            if isinstance(r, TypeRef):
                return Val("", r)
        if getattr(value, "_nu_foreign", False) is True:  # cuda.declare_device
            return Val("", foreign.ForeignRef(value))
        if getattr(type(value), "_nu_gufunc", False) is True:
            raise self.error(node, f"Untyped global name '{name}': a guvectorize gufunc cannot "
                                   f"be called from translated code (call a "
                                   f"cuda.jit(device=True) function with its loop instead)")
        py = getattr(value, "py_func", None)  # cuda.jit(device=True) / Numba dispatchers
        if isinstance(py, pytypes.FunctionType):
            if getattr(value, "_nu_cpu_only", False) is True:
                raise self.error(node, f"Untyped global name '{name}': using cpu function on "
                                       f"device but its compilation is disabled (it was "
                                       f"made with jit(signature); use jit without one, or "
                                       f"cuda.jit(device=True))")
            for path in getattr(value, "link", None) or ():  # cuda.jit(device=True, link=)
                self.ctx.links[path] = None
            sigs = getattr(value, "signatures", None)  # declared ones (a kernel's: its specs)
            sigs = tuple(x for x in sigs if isinstance(x, Signature)) \
                if isinstance(sigs, list) else ()
            return Val("", PyFuncRef(py, sigs, owner=value))
        if isinstance(value, pytypes.FunctionType):
            return Val("", PyFuncRef(value))
        if value is None:  # a global or closure None: the None constant
            return Val("", None)
        if getattr(builtins, name, None) is value:
            raise self.error(node, f"builtin '{name}' is not supported")
        raise self.error(node, f"'{name}' has unsupported type {type(value).__name__} "
                               f"(translated functions can use numbers, tuples of numbers, "
                               f"math/cmath/numpy and other functions)")

    def expr_Attribute(self, e):
        if e.attr == "data" and isinstance(e.value, ast.Attribute) and e.value.attr == "ctypes":
            r = arrays.address(self, e, self.expr(e.value.value))  # a.ctypes.data
            if r is not None:
                return r
        base = self.expr(e.value)
        r = overloads.try_attribute(self, e, base)  # @overload_attribute
        if r is not None:
            return r
        if isinstance(base.type, ModuleRef):
            r = lookup_attribute(base.type.module, e.attr)
            if r is None:
                raise self.error(e, f"{base.type.module.__name__}.{e.attr} is not supported")
            return r if isinstance(r, Val) else Val("", r)
        if isinstance(base.type, UserModuleRef):  # mymod.f: the attribute, as a global
            module = base.type.module
            if not hasattr(module, e.attr):
                raise self.error(e, f"module '{module.__name__}' has no attribute '{e.attr}'")
            return self.classify(e, f"{module.__name__}.{e.attr}", getattr(module, e.attr))
        if isinstance(base.type, (enums.EnumClassRef, enums.EnumMember)):
            return enums.attribute(self, e, base, e.attr)
        if isinstance(base.type, kernel_api.NamespaceRef):
            r = kernel_api.attribute(self, e, base.type, e.attr)
            if r is None:
                raise self.error(e, f"{base.type.name}.{e.attr} is not supported")
            return r
        if isinstance(base.type, Bottom):
            return Val("0", BOTTOM)
        if isinstance(base.type, pointers.FfiRef) and base.type.method is None:
            return pointers.attribute(self, e, e.attr)
        if is_array(base.type):
            return arrays.attribute(self, e, base)
        if isinstance(base.type, Record):
            return records.field_read(self, e, base, records.attribute_field(base.type, e.attr))
        if vectors.is_vector(base.type):
            return vectors.attribute(self, e, base, e.attr)
        if fp8.is_fp8_value(base.type):
            return fp8.attribute(self, e, base, e.attr)
        if e.attr in ("real", "imag") and self._numeric(e, base, f".{e.attr}"):
            t = base.type
            if is_complex(t):
                part = WEAK_FLOAT if isinstance(t, Weak) else \
                    Scalar("float32" if t.name == "complex64" else "float64",
                           "f4" if t.name == "complex64" else "f8")
                return Val(f"({base.code}).{'re' if e.attr == 'real' else 'im'}", part)
            if e.attr == "real":
                return base
            return Val(self.cast(e, Val("0", WEAK_INT, 0), t), t, 0)
        if isinstance(base.type, TupleType) and e.attr in (base.type.names or ()):
            i = base.type.names.index(e.attr)  # a namedtuple's field
            const = base.const[i] if isinstance(base.const, tuple) else None
            return Val(f"({base.code}).v{i}", base.type.items[i], const)
        raise self.error(e, f"attribute '.{e.attr}' is not supported on {base.type}")

    def expr_Subscript(self, e):
        shape = arrays.shape_items(self, e.value)
        if shape is not None:  # a.shape[k]
            return arrays.shape_item(self, e, *shape)
        base = self.expr(e.value)
        if isinstance(base.type, Bottom):
            return Val("0", BOTTOM)
        if isinstance(base.type, enums.EnumClassRef):  # Color["red"]
            return enums.subscript(self, e, base)
        name = arrays.field_name(e)
        if name is not None and isinstance(base.type, Record):  # r['x']
            return records.field_read(self, e, base, name)
        if name is not None and is_array(base.type) and isinstance(base.type.dtype, Record):
            return records.field_view(self, e, base, name)  # a['x']
        if isinstance(base.type, Record) and isinstance(e.slice, ast.Tuple) and not e.slice.elts:
            return base  # r[()]: a 0-d structured array's one record
        if isinstance(base.type, Record):  # r[0]: the field at that position, as NumPy
            return records.field_read(self, e, base, records.field_at(self, e, base.type))
        if is_array(base.type):
            return arrays.load(self, e, base)
        if isinstance(base.type, CPointer):
            return pointers.element(self, e, base)
        if not isinstance(base.type, TupleType):
            raise self.error(e, f"indexing is supported only on arrays and tuples (got "
                                f"{getattr(base.type, 'name', 'None')})")
        idx = self.expr(e.slice)
        if isinstance(idx.type, Bottom):
            return Val("0", BOTTOM)
        if not isinstance(idx.const, int) or isinstance(idx.const, bool):
            return tuples.dynamic_index(self, e, base, idx)
        n = len(base.type.items)
        i = idx.const + n if idx.const < 0 else idx.const
        if not 0 <= i < n:
            raise self.error(e, f"tuple index {idx.const} out of range for {base.type}")
        const = base.const[i] if isinstance(base.const, tuple) else None
        return Val(f"({base.code}).v{i}", base.type.items[i], const)

    def expr_Tuple(self, e):
        vals = [self.expr(x) for x in e.elts]
        if any(isinstance(v.type, Bottom) for v in vals):
            return Val("0", BOTTOM)
        for x, v in zip(e.elts, vals):
            if not isinstance(v.type, (TupleType, enums.EnumMember)) and not is_array(v.type) \
                    and not vectors.is_vector(v.type) and not fp8.is_fp8_value(v.type):
                self._numeric(x, v, "tuple item")  # tuples of tuples, arrays, vectors, enums: fine
        tt = TupleType(v.type for v in vals)
        const = tuple(v.const for v in vals) if all(v.const is not None for v in vals) else None
        ct = self.promote(e, lambda: ctype(tt))
        codes = [v.code if v.code or not isinstance(v.type, TupleType) else
                 f"{ctype(v.type)}{{{', '.join(const_val(c).code for c in v.const)}}}"
                 for v in vals]  # a shape item ((3,), ...) has no code of its own
        return Val(f"{ct}{{{', '.join(codes)}}}", tt, const)

