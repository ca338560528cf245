"""Statements in translated code: blocks, assignments (names, targets, augmented), if,
while and for loops, return, break/continue, pass, assert and raise (FunctionTranslator's
part for the ast statement nodes)."""

from __future__ import annotations

import ast
import builtins
import math

from ..types import (
    bool_,
)
from . import _arrays as arrays
from . import _closures as closures
from . import _exceptions as exceptions
from . import _iteration as iteration
from . import _kernel_api as kernel_api
from . import _record_access as records
from . import _tuples as tuples
from ._translator_operators import _BINOPS, _binding, _cname
from ._types import (
    BOTTOM,
    WEAK_INT,
    Bottom,
    OptionalType,
    PromotionError,
    TupleType,
    ctype,
    is_array,
    kind_of,
    unify,
)
from ._values import (
    BuiltinRef,
    PyFuncRef,
    Ref,
    Val,
)

_UNSUPPORTED_STMT = {
    "Try": "try", "TryStar": "try", "With": "with", "AsyncWith": "async with",
    "AsyncFunctionDef": "nested async def", "ClassDef": "class", "Import": "import",
    "ImportFrom": "import", "Global": "global", "Nonlocal": "nonlocal", "Delete": "del",
    "Match": "match", "AsyncFor": "async for",
}


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


def _local_names(fn_node) -> set[str]:
    if isinstance(fn_node, ast.Module):  # statements made by a rewrite (_iteration.py)
        return {n.id for n in ast.walk(fn_node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return set(_stored_names(fn_node))


class StatementTranslation:
    """FunctionTranslator's statement methods (``stmt_*``, assignments, loops)."""

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
