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
import inspect
import math
import operator
import re
import sys
import types as pytypes

import numpy as np

from ..types import (
    EXACT,
    CPointer,
    Record,
    Scalar,
    Signature,
    best_signatures,
    bool_,
    conversion_kind,
    struct_record,
)
from . import _arrays as arrays
from . import _closures as closures
from . import _contains as contains
from . import _datetime as datetimes
from . import _enums as enums
from . import _exceptions as exceptions
from . import _foreign as foreign
from . import _fp8 as fp8
from . import _iteration as iteration
from . import _kernel_api as kernel_api
from . import _overloads as overloads
from . import _pointers as pointers
from . import _record_access as records
from . import _reductions as reductions
from . import _tuples as tuples
from . import _vectors as vectors
from ._bytecode import HIDDEN
from ._library import (
    UFUNC_NIN,
    call_library,
    isinstance_call,
    lookup_attribute,
    lookup_global_function,
)
from ._literal_args import literal_params
from ._source import error_at, line_directive, load_source
from ._types import (
    BOTTOM,
    WEAK_BOOL,
    WEAK_FLOAT,
    WEAK_INT,
    Bottom,
    OptionalType,
    PromotionError,
    TupleType,
    Weak,
    binary_result,
    ctype,
    is_array,
    is_complex,
    is_int_like,
    is_numeric,
    kind_of,
    strong,
    unary_result,
    unify,
)
from ._values import (
    BuiltinRef,
    DtypeCallRef,
    LibFuncRef,
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

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.LShift: "<<", ast.RShift: ">>",
}
_HELPERS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
            "<<": "lshift", ">>": "rshift"}
_CMPOPS = {ast.Lt: ("<", "lt"), ast.LtE: ("<=", "le"), ast.Gt: (">", "gt"),
           ast.GtE: (">=", "ge"), ast.Eq: ("==", "eq"), ast.NotEq: ("!=", "ne")}
_UNSUPPORTED_STMT = {
    "Try": "try", "TryStar": "try", "With": "with", "AsyncWith": "async with",
    "AsyncFunctionDef": "nested async def", "ClassDef": "class", "Import": "import",
    "ImportFrom": "import", "Global": "global", "Nonlocal": "nonlocal", "Delete": "del",
    "Match": "match", "AsyncFor": "async for",
}
_UNSUPPORTED_EXPR = {
    "ListComp": "list comprehension", "SetComp": "set comprehension",
    "DictComp": "dict comprehension", "GeneratorExp": "generator expression",
    "Yield": "yield", "YieldFrom": "yield from", "Await": "await",
    "List": "list", "Dict": "dict", "Set": "set", "JoinedStr": "f-string",
    "FormattedValue": "f-string", "NamedExpr": "assignment expression (:=)",
    "Starred": "starred expression", "Slice": "slice",
}
_PY_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
_MAX_PASSES = 32
_SPLIT = 32  # operations of a long chain per C++ expression
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


def _binding(name: str, v) -> str:
    """The C++ statement that evaluates ``v`` once into the constant ``name``."""
    return f"const {ctype(v.type)} {name} = {v.code};"


def _cname(name: str) -> str:
    return "v_" + (name if name.isascii() else "u" + name.encode().hex())


def _own_nodes(fn_node):
    """The nodes of a function's body, without those of the functions nested in it (their
    locals are their own); a nested ``def`` yields its node, which binds its name."""
    todo = list(fn_node.body) if isinstance(fn_node.body, list) else [fn_node.body]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.FunctionDef):
            todo.extend(node.decorator_list + node.args.defaults)
        elif isinstance(node, ast.Lambda):
            todo.extend(node.args.defaults)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _stored_names(fn_node):
    for node in _own_nodes(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.FunctionDef):
            yield node.name


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


def _local_names(fn_node) -> set[str]:
    if isinstance(fn_node, ast.Module):  # statements made by a rewrite (_iteration.py)
        return {n.id for n in ast.walk(fn_node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return set(_stored_names(fn_node))


class FunctionTranslator:
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

    # ---- statements ------------------------------------------------------------------------
    def block(self, stmts):
        for i, s in enumerate(stmts):
            if (i == 0 and isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                    and isinstance(s.value.value, str)):
                continue  # docstring
            self.stmt(s)

    def stmt(self, s):
        kind = type(s).__name__
        if self.emitting:
            self.lines.extend(self._line_directives(s))
        if kind in _UNSUPPORTED_STMT:
            raise self.error(s, f"unsupported construct '{_UNSUPPORTED_STMT[kind]}'")
        handler = getattr(self, "stmt_" + kind, None)
        if handler is None:
            raise self.error(s, f"unsupported statement '{kind}'")
        saved, self.statement = self.statement, s  # what messages name (assigned_name)
        try:
            handler(s)
        finally:
            self.statement = saved

    def stmt_Pass(self, s):
        pass

    def stmt_FunctionDef(self, s):
        closures.define(self, s)  # a compile-time value: nothing to emit

    def expr_Lambda(self, e):
        return closures.lambda_value(self, e)

    def stmt_Assert(self, s):
        exceptions.assert_stmt(self, s)  # checked in debug=True kernels only

    def stmt_Raise(self, s):
        exceptions.raise_stmt(self, s)

    def stmt_Break(self, s):
        if self.loops and self.loops[-1] is not None:  # an unrolled loop
            self.emit(self.loops[-1].jump(True))
        else:
            self.emit("break;")

    def stmt_Continue(self, s):
        if self.loops and self.loops[-1] is not None:
            self.emit(self.loops[-1].jump(False))
        else:
            self.emit("continue;")

    def stmt_Expr(self, s):
        v = self.expr(s.value)
        if v.code:
            self.emit(f"{v.code};" if v.type is None else f"(void)({v.code});")

    def stmt_Return(self, s):
        if s.value is None or (isinstance(s.value, ast.Constant) and s.value.value is None):
            if self.ret is not None and not isinstance(self.ret, Bottom) and self.emitting \
                    and self.record.entry:
                raise self.error(s, "the function returns a value on some paths and None on "
                                    "others")
            self.returns_none = True
            if self.declared_return is not None:
                raise self.error(s, f"the function returns None but must return "
                                    f"{self.declared_return}")
            self._return_none()
            return
        self._return_value(s, self.expr_raw(s.value))

    def _return_none(self):
        """``return``/``return None``/the end of the body: None, or an OptionalType's None
        in a device function that also returns values."""
        if self.emitting and isinstance(self.record.return_type, OptionalType):
            self.emit(f"return {ctype(self.record.return_type)}{{}};")
        else:
            self.emit("return;")

    def _return_value(self, node, v):
        if isinstance(v.type, Bottom):
            return
        if v.type is None or isinstance(v.type, Ref):
            raise self.error(node, f"cannot return {v.type.name if v.type else 'None'}")
        if is_array(v.type):
            raise self.error(node, f"cannot return an array ({v.type}); write the results "
                                   f"into an output array argument instead")
        if self.returns_none and self.record.entry:
            raise self.error(node, "the function returns a value on some paths and None on "
                                   "others")
        self.ret = self.promote(node, lambda: unify(self.ret, v.type)) \
            if not isinstance(self.ret, Bottom) else v.type
        if self.emitting:
            target = self.record.return_type
            code = self.cast(node, v, target)
            if isinstance(self.node, ast.Lambda):
                self.lines.append(f"    return {code};")
            else:
                self.emit(f"return {code};")

    def assign_name(self, node, name, v):
        alias = self.aliases.get(name)
        if alias is not None:  # in an unrolled loop: this item's hidden variable
            name = alias[0]
        if isinstance(v.type, Bottom):
            self.vars.setdefault(name, BOTTOM)
            return
        if isinstance(v.type, (kernel_api.NamespaceRef, closures.ClosureRef, PyFuncRef)):
            # grid = cuda.cg.this_grid(), f = lambda x: ..., g = helper: a compile-time alias
            old = self.vars.get(name, BOTTOM)
            if not isinstance(old, Bottom) and old != v.type:
                raise self.error(node, f"variable '{name}' is assigned {v.type.name} and {old}")
            self.vars[name] = v.type
            return
        if v.type is None or isinstance(v.type, Ref):
            raise self.error(node, f"cannot assign {v.type.name if v.type else 'None'} to a "
                                   f"variable ('{name}')")
        old = self.vars.get(name, BOTTOM)
        try:
            new = unify(old, v.type)
        except PromotionError:
            err = self.error(node, f"variable '{name}' is assigned incompatible types "
                                   f"{old} and {v.type}")
            err.nu_incompatible = True  # translate.py may split the name (_webs.py)
            raise err from None
        if not self.emitting:
            self.vars[name] = new
        else:
            self.emit(f"{_cname(name)} = {self.cast(node, v, self.vars[name])};")

    def assign_target(self, target, v):
        if isinstance(target, ast.Name):
            self.assign_name(target, target.id, v)
        elif isinstance(target, ast.Subscript):
            arrays.store(self, target, v)
        elif isinstance(target, ast.Attribute):  # r.x = v on a record
            records.store_attribute(self, target, v)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(v.type, Bottom):
                for t in target.elts:
                    self.assign_target(t, Val("0", BOTTOM))
                return
            if not isinstance(v.type, TupleType) or len(v.type.items) != len(target.elts):
                raise self.error(target, f"cannot unpack {v.type} into {len(target.elts)} "
                                         f"names")
            tmp = self.temp()
            self.emit(_binding(tmp, v))
            for i, (t, it) in enumerate(zip(target.elts, v.type.items)):
                self.assign_target(t, Val(f"{tmp}.v{i}", it))
        else:
            raise self.error(target, f"assignment to {type(target).__name__.lower()} is not "
                                     f"supported (only to names, array elements and tuples "
                                     f"of those)")

    def stmt_Assign(self, s):
        targets = s.targets
        # a, b = b, a + b: evaluate every right-hand value before assigning any name.
        if (len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List))
                and isinstance(s.value, (ast.Tuple, ast.List))):
            if len(targets[0].elts) != len(s.value.elts):
                raise self.error(s, f"cannot unpack {len(s.value.elts)} values into "
                                    f"{len(targets[0].elts)} names")
            temps = []
            for e in s.value.elts:
                v = self.expr(e)
                if not is_array(v.type) and (isinstance(v.type, (Bottom, TupleType))
                                             or not self._numeric(e, v, "value")):
                    temps.append(v)
                    continue
                tmp = self.temp()
                self.emit(_binding(tmp, v))
                temps.append(Val(tmp, v.type, v.const))
            for t, v in zip(targets[0].elts, temps):
                self.assign_target(t, v)
            return
        if len(targets) == 1 and isinstance(targets[0], (ast.Tuple, ast.List)):
            shape = arrays.shape_items(self, s.value)
            if shape is not None:  # m, n = a.shape
                arrays.unpack_shape(self, targets[0], shape)
                return
        single_name = len(targets) == 1 and isinstance(targets[0], ast.Name)
        v = self.expr_raw(s.value) if single_name else self.expr(s.value)
        if len(targets) > 1 and not isinstance(v.type, Bottom) and v.const is None \
                and not isinstance(v.type, (Ref, type(None))):
            tmp = self.temp()
            self.emit(_binding(tmp, v))
            v = Val(tmp, v.type)
        for t in targets:
            self.assign_target(t, v)

    def stmt_AnnAssign(self, s):
        if s.value is not None:
            self.assign_target(s.target, self.expr(s.value))

    def stmt_AugAssign(self, s):
        op = _BINOPS.get(type(s.op))
        if isinstance(s.target, ast.Subscript):
            arrays.aug_store(self, s, op)
            return
        if isinstance(s.target, ast.Attribute):
            records.aug_attribute(self, s, op)
            return
        if not isinstance(s.target, ast.Name):
            raise self.error(s, "augmented assignment is supported only to names and array "
                                "elements")
        cur = self.expr(ast.copy_location(ast.Name(s.target.id, ast.Load()), s))
        v = self.binop(s, op, cur, self.expr(s.value))
        self.assign_name(s, s.target.id, v)

    def stmt_If(self, s):
        # An elif chain is walked in a loop, not by recursion, so chains of any length
        # translate (Python's recursion limit stops near 220 nested statements).
        keyword, closes = "if", 1
        while True:
            saved, self.lines = self.lines, []
            test = self.expr(s.test)
            before, self.lines = self.lines, saved
            if test.type is None and not test.code:  # `if None:` (a None global): never taken
                test = Val("false", bool_, False)
            self._numeric(s.test, test, "if condition")
            known = (keyword == "if" and closes == 1 and test.const is not None
                     and not isinstance(test.type, (Ref, TupleType)))
            self.if_tests.setdefault(id(s), set()).add(bool(test.const) if known else None)
            if known:
                # Known at compile time (a.ndim == 1 with a literal_unroll item): only the
                # branch taken is typed and emitted, as Numba prunes dead branches.
                self.lines.extend(before)
                if not test.const and len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If):
                    s = s.orelse[0]
                    continue
                self.emit("{")
                self._nested(s.body if test.const else s.orelse)
                self.emit("}")
                return
            if before and keyword != "if":  # the test needs statements: nest it
                self.emit("} else {")
                keyword, closes = "if", closes + 1
            self.lines.extend(before)
            self.emit(f"{keyword} ({self.truth(test)}) {{")
            self._nested(s.body)
            if len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If):
                s, keyword = s.orelse[0], "} else if"
                continue
            if s.orelse:
                self.emit("} else {")
                self._nested(s.orelse)
            self.emit("}" * closes)
            return

    def _nested(self, stmts):
        self.depth += 1
        self.block(stmts)
        self.depth -= 1

    def stmt_While(self, s):
        if s.orelse:
            raise self.error(s, "unsupported construct 'while ... else'")
        test = self.expr(s.test)
        self._numeric(s.test, test, "while condition")
        self.emit(f"while ({self.truth(test)}) {{")
        self.loops.append(None)
        try:
            self._nested(s.body)
        finally:
            self.loops.pop()
        self.emit("}")

    def stmt_For(self, s):
        if iteration.iterator_kind(s.iter, self._resolve_global) in ("enumerate", "zip"):
            self.block(self._rewritten_for(s))
            return
        seq = tuples.tuple_loop(self, s)  # tuples and literal_unroll() (own loop context)
        if seq is True:
            return
        if s.orelse:
            raise self.error(s, "unsupported construct 'for ... else' (supported only in "
                                "literal_unroll() loops)")
        self.loops.append(None)
        try:
            self._for(s, seq)
        finally:
            self.loops.pop()

    def _resolve_global(self, name):
        """The object a non-local name refers to (None for locals and unbound names)."""
        if name in self.locals:
            return None
        code = self.fn.__code__
        if name in code.co_freevars:
            try:
                return self.fn.__closure__[code.co_freevars.index(name)].cell_contents
            except ValueError:
                return None
        return self.fn.__globals__.get(name, getattr(builtins, name, None))

    def _rewritten_for(self, s):
        """``for`` over enumerate()/zip() as an index loop (_iteration.py), made once per
        statement so that every inference pass sees the same nodes."""
        out = self.rewritten.get(id(s))
        if out is None:
            n = len(self.rewritten) + 1
            out = iteration.rewrite_for(s, self._resolve_global, f"__nu_z{n}_", self.error)
            for stmt in out:
                self.locals |= _local_names(ast.Module(body=[stmt], type_ignores=[]))
            self.rewritten[id(s)] = (s, out)  # s kept alive: its id stays unique
            return out
        return out[1]

    def _for(self, s, seq):
        it = s.iter
        ref = self.expr(it.func) if seq is None else None
        if not (isinstance(ref, Val) and isinstance(ref.type, BuiltinRef)
                and ref.type.fname == "range"):
            if seq is None:
                seq = self.expr(it)
            if is_array(seq.type):
                arrays.for_each(self, s, seq)
                return
            if isinstance(seq.type, Bottom):  # typed on a later inference pass
                return
            if isinstance(seq.type, TupleType):  # a call's result: tuple(t), f() -> tuple
                tuples.loop_over_value(self, s, seq)
                return
            raise self.error(s, "for loops are supported only over range(...), arrays and "
                                "tuples")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(s, f"range() takes 1 to 3 positional arguments "
                                f"(got {len(it.args)})")
        vals = [self.expr(a) for a in it.args]
        for a, v in zip(it.args, vals):
            # Integers, and floats as Numba takes them (converted to int64, truncating)
            if not isinstance(v.type, Bottom) and (not self._numeric(a, v, "range()")
                                                   or kind_of(v.type) not in "bif"):
                raise self.error(a, f"range() arguments must be integers or floats "
                                    f"(got {v.type})")
        codes = [self.cast(it, v, WEAK_INT) if not isinstance(v.type, Bottom) else "0"
                 for v in vals]
        start, stop, step = (["0LL", codes[0], "1LL"] if len(codes) == 1 else
                             [codes[0], codes[1], "1LL"] if len(codes) == 2 else codes)
        step_const = vals[2].const if len(vals) == 3 else 1
        if isinstance(step_const, float) and math.isfinite(step_const):
            step_const = int(step_const)
        if step_const == 0:
            raise self.error(it, "range() arg 3 must not be zero")
        i, n, st = self.temp("nu_i"), self.temp("nu_stop"), self.temp("nu_step")
        self.emit("{")
        self.depth += 1
        self.emit(f"const nu::i64 {n} = {stop};")
        self.emit(f"const nu::i64 {st} = {step};")
        # Python semantics: the body may rebind the loop variable without affecting the
        # iteration, so the counter is a hidden variable copied into the target.
        if step_const in (1, -1):
            # i < stop (or i > stop) bounds i, so i += 1 cannot overflow.
            cond = f"{i} < {n}" if step_const > 0 else f"{i} > {n}"
            self.emit(f"for (nu::i64 {i} = {start}; {cond}; {i} += {st}) {{")
            index = i
        else:
            # Larger steps can step past the int64 limits: run Python's iteration count
            # (len(range(...))) with a wrapping unsigned position instead.
            k, cnt = self.temp("nu_k"), self.temp("nu_count")
            self.emit(f"const nu::i64 {i}0 = {start};")
            self.emit(f"const nu::u64 {cnt} = nu::range_count({i}0, {n}, {st});")
            self.emit(f"nu::u64 {i} = nu::u64({i}0);")
            self.emit(f"for (nu::u64 {k} = 0; {k} < {cnt}; ++{k}, {i} += nu::u64({st})) {{")
            index = f"nu::i64({i})"
        self.depth += 1
        if not isinstance(s.target, ast.Name):
            raise self.error(s.target, "the target of a for loop must be a name")
        self.assign_name(s.target, s.target.id, Val(index, WEAK_INT))
        self.block(s.body)
        self.depth -= 1
        self.emit("}")
        self.depth -= 1
        self.emit("}")

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
                from ..types import from_dtype
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

    def expr_UnaryOp(self, e):
        return self.unaryop(e, type(e.op), self.expr(e.operand), e.operand)

    def unaryop(self, e, op_class, v, operand_node=None) -> Val:
        """``-v``, ``+v``, ``~v`` or ``not v`` (op_class: ast.USub...)."""
        if not self._numeric(operand_node or e, v, "operand"):
            return Val("0", BOTTOM)
        if op_class is ast.Not:
            return Val(f"(!{self.truth(v)})", WEAK_BOOL)
        op = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[op_class]
        if datetimes.involved(v.type):
            return datetimes.negate(self, e, op, v)
        r = self.promote(e, lambda: unary_result(op, v.type))
        if v.const is not None and isinstance(v.type, Weak) and isinstance(r, Weak):
            folded = {"-": lambda x: -x, "+": lambda x: +x, "~": lambda x: ~x}[op](v.const)
            c = self.promote(e, lambda: const_val(folded))
            if c is not None:
                return c
        code = self.cast(e, v, r)
        if op == "-":
            return Val(f"nu::neg<{ctype(r)}>({code})", r)
        if op == "~":
            return Val(f"nu::invert<{ctype(r)}>({code})", r)
        return Val(code, r)

    def op_type(self, op, a, b):
        return binary_result(op, a, b)

    def binop(self, node, op, a, b, numpy_power=False) -> Val:
        """``a op b``. Complex ``**`` of two Python numbers (weak types: literals, complex(),
        cmath results) is Python's complex_pow, as CPython computes it; with a NumPy complex
        operand, or for np.power (``numpy_power``), it is NumPy's power. They differ at
        special values, as ``z ** w`` does in Python for NumPy and Python scalars."""
        if op is None:
            raise self.error(node, "unsupported operator '@'")
        if is_array(a.type) or is_array(b.type):
            raise self.error(node, f"operator {op}: arithmetic on whole arrays is not "
                                   f"supported (got {a.type} {op} {b.type}); loop over the "
                                   f"elements instead")
        if not (self._numeric(node, a, f"operator {op}") and
                self._numeric(node, b, f"operator {op}")):
            return Val("0", BOTTOM)
        if datetimes.involved(a.type, b.type):
            return datetimes.binop(self, node, op, a, b)
        r = self.promote(node, lambda: binary_result(op, a.type, b.type))
        if (op == "**" and isinstance(r, Weak) and r.kind == "i" and b.const is not None
                and b.const < 0):
            r = WEAK_FLOAT  # Python: 2 ** -1 == 0.5
        elif (op == "**" and kind_of(r) == "i" and isinstance(b.const, int)
              and not isinstance(b.const, bool) and b.const < 0):
            # NumPy raises for every value of the base; a kernel could only guess.
            raise self.error(node, f"integers to negative integer powers are not allowed "
                                   f"({a.type} ** {b.const}, as in NumPy); write "
                                   f"{a.type}(1) / x ** {-b.const} or use a float")
        if (isinstance(a.type, Weak) and isinstance(b.type, Weak) and a.const is not None
                and b.const is not None):
            folded = self.promote(node, lambda: self._fold(op, a.const, b.const))
            if folded is not None:
                return folded
        ct = ctype(r)
        ca, cb = self.cast(node, a, r), self.cast(node, b, r)
        if op in ("/", "//", "%") and not (b.const is not None and b.const != 0):
            kinds = kind_of(a.type) + kind_of(b.type)  # Python's message names the operands'
            kind = "c" if "c" in kinds else "f" if "f" in kinds else "i"
            cb = exceptions.checked_divisor(self, node, op, kind, cb)
        if op in _HELPERS:
            return Val(f"nu::{_HELPERS[op]}<{ct}>({ca}, {cb})", r)
        if op == "**":
            helper = ("ipow" if is_int_like(r) else
                      "cpow" if is_complex(r) and isinstance(r, Weak) and not numpy_power
                      else "fpow")
            return Val(f"nu::{helper}<{ct}>({ca}, {cb})", r)
        return Val(f"{ct}({ca} {op} {cb})", r)  # & | ^

    def _fold(self, op, x, y):
        import operator as o
        f = {"+": o.add, "-": o.sub, "*": o.mul, "/": o.truediv, "//": o.floordiv,
             "%": o.mod, "**": o.pow, "&": o.and_, "|": o.or_, "^": o.xor,
             "<<": o.lshift, ">>": o.rshift}[op]
        try:
            if op == "**" and isinstance(y, int) and abs(y) > 256:
                return None
            value = f(x, y)
        except (ArithmeticError, ValueError, TypeError):
            return None  # left to run time (e.g. 1 // 0 gives 0, as NumPy does)
        try:
            return const_val(value)
        except PromotionError:
            # Python's exact big-integer result would silently wrap at run time.
            raise PromotionError(f"integer constant expression {x!r} {op} {y!r} = {value} "
                                 f"does not fit in 64 bits") from None

    def expr_BinOp(self, e):
        # A left-leaning chain (a + b + c + ...) is walked in a loop, so sums of any length
        # translate; every _SPLIT operations the partial result goes to a named temporary so
        # the C++ does not nest calls hundreds deep either.
        chain = []
        while isinstance(e, ast.BinOp):
            chain.append(e)
            e = e.left
        acc = self.expr(e)
        stmts = []
        for k, node in enumerate(reversed(chain), 1):
            right = self.expr(node.right)
            if not isinstance(acc.type, Bottom) and not isinstance(right.type, Bottom):
                bound, (acc, right) = self.in_order([acc, right])
                stmts += [_binding(name, v) for name, v in bound]
            acc = self.binop(node, _BINOPS.get(type(node.op)), acc, right)
            if (k % _SPLIT == 0 and k < len(chain) and acc.const is None
                    and not isinstance(acc.type, Bottom)):
                tmp = self.temp()
                stmts.append(_binding(tmp, acc))
                acc = Val(tmp, acc.type)
        if stmts:
            acc = Val(f"([&]() -> {ctype(acc.type)} {{ {' '.join(stmts)} return {acc.code}; "
                      f"}}())", acc.type, acc.const)
        return acc

    def _compare2(self, node, op, a, b):
        sym, name = op
        if datetimes.involved(a.type, b.type):
            return datetimes.compare(self, node, sym, a, b), bool_
        r = self.promote(node, lambda: binary_result(sym, a.type, b.type))
        if is_int_like(a.type) and is_int_like(b.type):
            ca = a.code if a.const is None or not isinstance(a.type, Weak) else \
                self.cast(node, a, strong(a.type))
            cb = b.code if b.const is None or not isinstance(b.type, Weak) else \
                self.cast(node, b, strong(b.type))
            return f"nu::{name}({ca}, {cb})", r
        common = self.promote(node, lambda: unify(a.type, b.type))
        return f"nu::{name}({self.cast(node, a, common)}, {self.cast(node, b, common)})", r

    def _compare_strings(self, node, op, a, b):
        """A comparison with a string constant, folded at compile time as Python computes
        it (a string never equals a number; ordering needs two strings)."""
        sym, name = op
        x, y = (v.type.value if isinstance(v.type, StringRef) else v.const for v in (a, b))
        if any(isinstance(v.type, Bottom) for v in (a, b)):
            return Val("0", BOTTOM)
        if name not in ("eq", "ne") and not (isinstance(x, str) and isinstance(y, str)):
            raise self.error(node, f"'{sym}' between a string and "
                                   f"{getattr((b if isinstance(a.type, StringRef) else a).type, 'name', 'None')}"
                                   f" is not supported (Python raises TypeError)")
        if name in ("is", "isnot"):
            raise self.error(node, "'is' and 'is not' are supported between enum members only")
        if (x is None or y is None) and name in ("eq", "ne"):  # a run-time number: never equal
            result = name == "ne"
        else:
            result = bool(_PY_CMP[name](x, y))
        return const_val(result)

    def expr_Compare(self, e):
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in e.ops):
            if len(e.ops) > 1:  # lo < x in t
                return contains.chain(self, e, _CMPOPS)
            return contains.compare(self, e)  # _contains.py
        ops = []
        for op in e.ops:
            ops.append(("is", "is") if isinstance(op, ast.Is) else
                       ("is not", "isnot") if isinstance(op, ast.IsNot) else _CMPOPS[type(op)])
        vals = [self.expr_raw(e.left)] + [self.expr_raw(c) for c in e.comparators]
        if len(ops) == 1 and ops[0][1] in ("is", "isnot"):
            # x is None for an OptionalType x (a device function's value-or-None result)
            opt = [v for v in vals if isinstance(v.type, OptionalType)]
            if len(opt) == 1 and any(v.type is None for v in vals):
                present = f"({opt[0].code}).present"
                return Val(f"(!{present})" if ops[0][1] == "is" else present, bool_)
        vals = [Val(f"({v.code}).value", v.type.type) if isinstance(v.type, OptionalType)
                else v for v in vals]
        if len(ops) == 1 and not any(isinstance(v.type, Bottom) for v in vals):
            r = enums.compare(self, e, ops[0][1], vals[0], vals[1])  # Enum members, is
            if r is not None:
                return r
        if len(ops) == 1 and any(isinstance(v.type, StringRef) for v in vals):
            return self._compare_strings(e, ops[0], vals[0], vals[1])
        if len(ops) == 1 and ops[0][1] in ("is", "isnot") and not any(
                isinstance(v.type, Bottom) for v in vals):
            r = self._compare_identity(e, ops[0][1] == "is", vals[0], vals[1])
            if r is not None:
                return r
        if any(name in ("is", "isnot") for _, name in ops):
            raise self.error(e, "'is' and 'is not' are supported between enum members only "
                                "(and against None, True or False)")
        for node, v in zip([e.left] + e.comparators, vals):
            if not self._numeric(node, v, "comparison"):
                return Val("0", BOTTOM)
        if len(ops) == 1:
            bound, vals = self.in_order(vals)
            code, r = self._compare2(e, ops[0], vals[0], vals[1])
            a, b = vals[0].const, vals[1].const
            if (isinstance(a, (int, float)) and isinstance(b, (int, float))
                    and isinstance(r, Weak)):  # ndim == 1, a constant: known to branches
                return Val(code, r, bool(_PY_CMP[ops[0][1]](a, b)))
            if bound:
                binds = " ".join(_binding(name, v) for name, v in bound)
                return Val(f"([&]() -> bool {{ {binds} return {code}; }}())", r)
            return Val(f"({code})" if not code.startswith("nu::") else code, r)
        # a < b < c: each operand evaluated once, later ones only if needed (Python).
        names = [self.temp("nu_c") for _ in vals]
        parts, rtype = [f"const auto {names[0]} = {vals[0].code};"], None
        for k, op in enumerate(ops):
            parts.append(f"const auto {names[k + 1]} = {vals[k + 1].code};")
            code, r = self._compare2(e, op, Val(names[k], vals[k].type),
                                     Val(names[k + 1], vals[k + 1].type))
            rtype = r if rtype is None else unify(rtype, r)
            last = k == len(ops) - 1
            parts.append(f"return {code};" if last else f"if (!{code}) return false;")
        return Val(f"([&]() -> bool {{ {' '.join(parts)} }}())", rtype)

    def _compare_identity(self, e, is_, a, b):
        """``x is None``, ``flag is True``, ``x is not False``: None is only itself, and a
        bool is True or False by its value (Numba types both as booleans, so a NumPy bool
        counts too); a number is never True, False or None. Known at compile time except
        for a bool compared with True or False."""
        def singleton(v):
            if v.type is None:
                return "none"
            if isinstance(v.const, bool) and kind_of(v.type) == "b":
                return v.const
            return None

        sa, sb = singleton(a), singleton(b)
        if sa is None and sb is None:
            return None
        if sa is not None and sb is not None:
            same = sa == sb
        else:
            other, flag = (b, sa) if sb is None else (a, sb)
            if other.type is not None and not isinstance(other.type, (Ref, TupleType)) \
                    and not is_array(other.type) and kind_of(other.type) == "b" \
                    and flag != "none":
                code = self.truth(other) if flag else f"!{self.truth(other)}"
                return Val(f"({code})" if is_ else f"(!({code}))", WEAK_BOOL)
            same = False
        result = same if is_ else not same
        return Val("true" if result else "false", WEAK_BOOL, result)

    def expr_BoolOp(self, e):
        vals = [self.expr(v) for v in e.values]
        for node, v in zip(e.values, vals):
            if not self._numeric(node, v, "and/or operand"):
                return Val("0", BOTTOM)
        is_and = isinstance(e.op, ast.And)
        if all(kind_of(v.type) == "b" for v in vals):
            r = vals[0].type
            for v in vals[1:]:
                r = unify(r, v.type)
            joiner = " && " if is_and else " || "
            return Val("(" + joiner.join(v.code for v in vals) + ")", r)
        # Python value semantics: `a and b` is a if a is falsy, else b (types unified).
        acc = vals[-1]
        for v in reversed(vals[:-1]):
            r = self.promote(e, lambda v=v, acc=acc: unify(v.type, acc.type))
            t = self.temp()
            keep = f"nu::truth({t})" if is_and else f"!nu::truth({t})"
            first = self.cast(e, Val(t, v.type), r)
            code = (f"([&]() -> {ctype(r)} {{ const {ctype(v.type)} {t} = {v.code}; "
                    f"return {keep} ? {self.cast(e, acc, r)} : {first}; }}())")
            acc = Val(code, r)
        return acc

    def expr_IfExp(self, e):
        test = self.expr(e.test)
        if test.const is not None and not isinstance(test.type, (Ref, TupleType)):
            # A condition known at compile time (a.ndim == 1 in a literal_unroll body):
            # only the branch taken is typed, as Numba prunes dead branches.
            return self.expr(e.body if test.const else e.orelse)
        a, b = self.expr(e.body), self.expr(e.orelse)
        unknown = [isinstance(v.type, Bottom) for v in (a, b)]
        if unknown[0] != unknown[1] and not isinstance(test.type, Bottom) and not self.emitting:
            # `n if n < 2 else f(n - 1) + f(n - 2)`: the recursive branch is still being
            # typed; the other gives the type meanwhile (the emitting pass has both).
            known = b if unknown[0] else a
            if not isinstance(known.type, Ref):
                return Val("0", known.type)
        for node, v in ((e.test, test), (e.body, a), (e.orelse, b)):
            if isinstance(v.type, (TupleType, enums.EnumMember)) and v is not test:
                continue  # (a, b) if c else (b, a); Color.red if c else Color.green
            if isinstance(v.type, Bottom):
                return Val("0", BOTTOM)
            if not self._numeric(node, v, "conditional expression"):
                return Val("0", BOTTOM)
        r = self.promote(e, lambda: unify(a.type, b.type))
        return Val(f"({self.truth(test)} ? {self.cast(e, a, r)} : {self.cast(e, b, r)})", r)

    def expr_Call(self, e):
        # f(*g(x)): the starred tuple is computed once, bound to a name for the call.
        self.star_bindings.append([])
        try:
            v = self._call(e)
        finally:
            bindings = self.star_bindings.pop()
        if bindings and v.code and not isinstance(v.type, Bottom):
            binds = " ".join(_binding(name, b) for name, b in bindings)
            return Val(f"([&]() {{ {binds} return {v.code}; }}())", v.type, v.const)
        return v

    def _starred(self, node, v):
        if (isinstance(v.type, TupleType) and not isinstance(v.const, tuple)
                and not v.code.isidentifier()):
            name = self.temp("nu_star")
            self.star_bindings[-1].append((name, v))
            v = Val(name, v.type)
        return tuples.starred_items(self, node, v)

    def _call(self, e):
        if (isinstance(e.func, ast.Name) and e.func.id == "isinstance"
                and e.func.id not in self.locals
                and exceptions.static_value(self, e.func) is builtins.isinstance):
            return isinstance_call(self, e)
        if isinstance(e.func, ast.Attribute):  # @overload_method, before built-in methods
            r = overloads.try_method(self, e)
            if r is not None:
                return r
        r = reductions.try_call(self, e)  # np.sum(a), a.mean(), np.argmax(a)...
        if r is not None:
            return r
        if isinstance(e.func, ast.Attribute) and e.func.attr in ("reshape", "view", "copy"):
            base = self.expr(e.func.value)
            if is_array(base.type):
                return getattr(arrays, e.func.attr)(self, e, base)
        if isinstance(e.func, ast.Attribute):
            arrays.reject_method_call(self, e)
        if isinstance(e.func, ast.Attribute) and e.func.attr == "bit_count":
            base = self.expr(e.func.value)
            if not isinstance(base.type, (ModuleRef, kernel_api.NamespaceRef)):
                if e.args or e.keywords:
                    raise self.error(e, ".bit_count() takes no arguments")
                if not self._numeric(e, base, ".bit_count()"):
                    return Val("0", BOTTOM)
                if not is_int_like(base.type):
                    raise self.error(e, f".bit_count() needs an integer (got {base.type})")
                t = strong(base.type) if kind_of(base.type) != "b" else strong(WEAK_INT)
                return Val(f"nu::bit_count<{ctype(t)}>({self.cast(e, base, t)})", WEAK_INT)
        if isinstance(e.func, ast.Attribute) and e.func.attr == "conjugate":
            base = self.expr(e.func.value)
            if not isinstance(base.type, ModuleRef):
                if e.args or e.keywords:
                    raise self.error(e, ".conjugate() takes no arguments")
                if not self._numeric(e, base, ".conjugate()"):
                    return Val("0", BOTTOM)
                return Val(f"nu::conj({base.code})", base.type)
        if (isinstance(e.func, ast.Name) and e.func.id == "print" and e.func.id not in self.locals
                and self.fn.__globals__.get("print", builtins.print) is builtins.print):
            return kernel_api.print_call(self, e)
        folded = self._float_of_string(e)
        if folded is not None:
            return folded
        f = self.expr(e.func)
        if isinstance(f.type, BuiltinRef) and f.type.fname == "len":
            n = arrays.length(self, e)  # len(a), len(a.shape)
            if n is not None:
                return n
        # cuda.local.array(n, dtype="int32"): a dtype may be a string, as in Numba
        dtype_strings = (isinstance(f.type, kernel_api.IntrinsicRef)
                         and f.type.key in ("shared.array", "local.array"))

        def arg_value(a, dtype_ok=True):
            if dtype_strings and not dtype_ok:  # alignment="16": refused as Numba does
                return self.expr(a)
            if dtype_strings and isinstance(a, ast.Constant) and isinstance(a.value, str):
                return kernel_api.dtype_from_string(self, a, a.value)
            if dtype_strings and isinstance(a, ast.List):  # a list shape: refused there
                return Val("", kernel_api.ListValue(self.expr(x) for x in a.elts))
            v = self.expr(a)
            if dtype_strings and isinstance(a, ast.Tuple) and v.const is None \
                    and isinstance(v.type, TupleType):  # a shape not known: refused there
                return Val("", kernel_api.ListValue((self.expr(x) for x in a.elts), "tuple"))
            return v

        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):  # f(*t): the tuple's items
                args.extend(self._starred(a, self.expr(a.value)))
            else:
                args.append(arg_value(a, len(args) < 2))
        kwargs = {}
        for k in e.keywords:
            if k.arg is None:
                raise self.error(e, "unsupported construct '**kwargs in a call'")
            kwargs[k.arg] = arg_value(k.value, k.arg != "alignment")
        ref = f.type
        if any(isinstance(a.type, Bottom) for a in list(args) + list(kwargs.values())):
            return Val("0", BOTTOM)
        # f(g(x), h(x)): the arguments in Python's order (bound in expr_Call's wrapper)
        bound, ordered = self.in_order(list(args) + list(kwargs.values()))
        if bound:
            self.star_bindings[-1].extend(bound)
            args, kwargs = ordered[:len(args)], dict(zip(kwargs, ordered[len(args):]))
        if isinstance(ref, LibFuncRef) and ref.lib == "numpy" and ref.fname in UFUNC_NIN:
            def element(vals, ref=ref):
                return call_library(self, e, ref, vals, {})
            element.nin = UFUNC_NIN[ref.fname]
            v = arrays.ufunc_into(self, e, ref.fname, args, kwargs, element)
            if v is not None:
                return v
        if isinstance(ref, (BuiltinRef, LibFuncRef, TypeRef)):
            for a in list(args) + list(kwargs.values()):
                if is_array(a.type):
                    shown = (ref.scalar.name if isinstance(ref, TypeRef) else ref.fname
                             if isinstance(ref, BuiltinRef) else
                             f"{'np' if ref.lib == 'numpy' else ref.lib}.{ref.fname}")
                    raise self.error(e, f"{shown}() on a whole array is not supported "
                                        f"(got {a.type}); apply it to the elements")
        if isinstance(ref, pointers.PointerArrayRef):  # carray / farray
            return pointers.pointer_array(
                self, e, ref.order, args, kwargs,
                lambda v: kernel_api.dtype_arg(self, e, v, f"{ref.name}()"))
        if isinstance(ref, pointers.FfiRef) and ref.method == "from_buffer":
            return pointers.from_buffer(self, e, args, kwargs)
        if isinstance(ref, DtypeCallRef):  # np.dtype("int32")
            return kernel_api.dtype_call(self, e, args, kwargs)
        if isinstance(ref, (BuiltinRef, LibFuncRef)):
            return call_library(self, e, ref, args, kwargs)
        if isinstance(ref, TypeRef) and isinstance(ref.scalar, Record):
            raise self.error(e, f"a record dtype cannot be called to make a value (got "
                                f"{ref.scalar}); use it as the dtype of an array")
        if isinstance(ref, TypeRef):
            if kwargs or len(args) > 1:
                raise self.error(e, f"{ref.scalar.name}() takes one argument")
            if not args:
                return Val(self.cast(e, Val("0", WEAK_INT, 0), ref.scalar), ref.scalar)
            if not fp8.is_fp8_value(args[0].type):  # float32(fp8 value): CUDA's conversion
                self._numeric(e, args[0], f"{ref.scalar.name}()")
            return Val(self.cast(e, args[0], ref.scalar), ref.scalar)
        if isinstance(ref, closures.ClosureRef):
            extra = closures.hidden_values(self, e, ref)
            if any(isinstance(v.type, Bottom) for v in extra):
                return Val("0", BOTTOM)
            return self.call_function(e, ref.fn, args, kwargs, src=ref.src, hidden=extra)
        if isinstance(ref, PyFuncRef):
            if ref.signatures:  # cuda.jit("int32(int32)", device=True): cast to it
                return self.call_with_signature(e, ref, args, kwargs)
            return self.call_function(e, ref.fn, args, kwargs, owner=ref.owner)
        if isinstance(ref, foreign.ForeignRef):
            return foreign.call(self, e, ref.fn, args, kwargs)
        if isinstance(ref, overloads.OverloadRef):
            return overloads.call(self, e, ref, args, kwargs)
        if isinstance(ref, kernel_api.IntrinsicRef):
            return kernel_api.call(self, e, ref, args, kwargs)
        if isinstance(ref, tuples.NamedTupleRef):
            return tuples.make_namedtuple(self, e, ref, args, kwargs)
        if isinstance(ref, vectors.VectorCtorRef):
            return vectors.construct(self, e, ref, args, kwargs)
        if isinstance(ref, fp8.Fp8CtorRef):
            return fp8.construct(self, e, ref, args, kwargs)
        if isinstance(ref, enums.EnumClassRef):  # Numba types no call of an Enum class
            name = ref.cls.__name__
            raise self.error(e, f"calling the Enum class {name}() is not supported (nor in "
                                f"Numba): name a member ({name}.member or {name}['member']), "
                                f"pass members as arguments, or compare with their .value")
        raise self.error(e, f"{getattr(ref, 'name', ref)} is not callable")

    def _pack_varargs(self, node, fn, items):
        """The values a ``*args`` parameter receives, as one tuple argument."""
        for v in items:
            if isinstance(v.type, Ref):
                raise self.error(node, f"'{fn.__name__}' takes *args: its extra arguments "
                                       f"must be numbers, arrays or tuples (got {v.type.name})")
        tt = TupleType(v.type for v in items)
        const = tuple(v.const for v in items) if all(v.const is not None for v in items) \
            else None
        ct = self.promote(node, lambda: ctype(tt))
        return Val(f"{ct}{{{', '.join(v.code for v in items)}}}", tt, const)

    def call_with_signature(self, node, ref, args, kwargs):
        """A device function declared with signatures, as Numba's dispatchers call one
        whose compilation is fixed: of the signatures whose arity fits, whose arrays match
        and to which every number converts, the one Numba rates best (fewest unsafe, then
        safe conversions, then promotions; the first of a tie, as Numba resolves one);
        the arguments are cast to it, and the result to its return type."""
        fn = ref.fn
        try:
            bound = inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(node, f"wrong arguments for '{fn.__name__}': {exc}") from None
        vals = list(bound.args)

        def conversions(sig):
            """The conversion kind of each argument, or None when one does not convert."""
            if len(sig.args) != len(vals):
                return None
            kinds = []
            for v, t in zip(vals, sig.args):
                if is_array(v.type) or is_array(t):
                    if not (is_array(v.type) and is_array(t) and v.type.ndim == t.ndim
                            and v.type.dtype == t.dtype):
                        return None
                    kinds.append(EXACT)
                elif not isinstance(t, Scalar) or not is_numeric(v.type):
                    return None
                elif strong(v.type) == t:
                    kinds.append(EXACT)
                else:  # numbers convert as in Numba's device calls, even unsafely
                    kinds.append(conversion_kind(strong(v.type).dtype, t.dtype))
                    if kinds[-1] is None:  # complex to a real type
                        return None
            return kinds

        candidates = [(s, k) for s in ref.signatures if (k := conversions(s)) is not None]
        best = best_signatures(candidates)
        if not best:
            got = ", ".join(getattr(v.type, "name", str(v.type)) for v in vals)
            shown = "; ".join(str(s) for s in ref.signatures)
            raise self.error(node, f"Invalid use of type(device function '{fn.__name__}') "
                                   f"with parameters ({got}): no signature matches; its "
                                   f"signatures are: {shown}")
        sig = best[0]
        cast = [v if is_array(t) else Val(self.cast(node, v, t), t)
                for v, t in zip(vals, sig.args)]
        r = self.call_function(node, fn, cast, {})
        if sig.return_type is None or isinstance(r.type, Bottom):
            return r
        return Val(self.cast(node, r, sig.return_type), sig.return_type)

    def call_function(self, node, fn, args, kwargs, src=None, hidden=(), owner=None):
        """A call of the Python function ``fn`` (specialised on the argument types);
        ``src`` and ``hidden`` are a nested function's source with hidden parameters, and
        the values for those (_closures.py); ``owner`` the dispatcher ``fn`` came from."""
        try:
            sig = inspect.signature(fn)
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise self.error(node, f"wrong arguments for '{fn.__name__}': {exc}") from None
        bound.apply_defaults()
        for pname, p in sig.parameters.items():
            if p.kind is inspect.Parameter.VAR_POSITIONAL:  # *args: one tuple argument
                bound.arguments[pname] = self._pack_varargs(node, fn, bound.arguments[pname])
        # Nested functions passed as arguments bring the locals they read along.
        forward, names, carried = closures.forwarding(self, node, bound.arguments.items())
        if names:
            src = closures.with_hidden(src or load_source(fn), names, forward)
            hidden = list(hidden) + carried
        if any(isinstance(v.type, Bottom) for v in hidden):
            return Val("0", BOTTOM)
        vals = []
        literals = frozenset()
        def weak_int(v):  # an int constant, or a tuple of them (a shape)
            if not isinstance(v, Val):
                return False
            if isinstance(v.const, tuple):
                return (isinstance(v.type, TupleType) and all(type(c) is int for c in v.const)
                        and all(isinstance(t, Weak) for t in v.type.items))
            return type(v.const) is int and isinstance(v.type, Weak)

        if any(weak_int(v) for v in bound.arguments.values()):
            literals = literal_params(src or load_source(fn))
        for pname, v in bound.arguments.items():
            if pname in literals and weak_int(v):
                vals.append(Val("", LiteralRef(v.const)))
                continue
            if not isinstance(v, Val):
                c = self.promote(node, lambda v=v: const_val(v))
                if c is None:
                    raise self.error(node, f"default value of parameter '{pname}' of "
                                           f"'{fn.__name__}' is not a number ({v!r})")
                v = c
            # A Ref (a dtype, a function, cuda.atomic.add...) is a compile-time argument:
            # the callee is specialised on it and it is not passed at run time.
            if not isinstance(v.type, (TupleType, Ref, Record, enums.EnumMember)) \
                    and not is_array(v.type) and not vectors.is_vector(v.type) \
                    and not fp8.is_fp8_value(v.type):
                self._numeric(node, v, f"argument '{pname}' of {fn.__name__}()")
            vals.append(v)
        vals.extend(hidden)
        types = tuple(v.type for v in vals)
        rec = self.ctx.function(fn, types, self, node, src=src)
        code = f"{rec.name}({', '.join(v.code for v in vals if not isinstance(v.type, Ref))})"
        rt = rec.return_type
        if isinstance(rt, Bottom):
            return Val("0", BOTTOM)
        note = getattr(owner, "_nu_device_call", None)
        if self.emitting and callable(note):  # final types: the dispatcher lists them
            final = tuple(strong(t) if isinstance(t, Weak) else t for t in types
                          if not isinstance(t, Ref))
            result = strong(rt) if isinstance(rt, Weak) else rt
            note(final, result)
            where = (getattr(fn, "__module__", None), getattr(fn, "__qualname__", ""))
            if where[0] and "<locals>" not in where[1]:
                self.ctx.device_calls.append((*where, final, result))
        return Val(code, rt)
