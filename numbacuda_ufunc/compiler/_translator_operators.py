"""Operators in translated code: unary and binary arithmetic with NumPy's promotion, constant
folding, comparisons (chained, of strings, identity), boolean operators and conditional
expressions (FunctionTranslator's part for ast.UnaryOp, BinOp, Compare, BoolOp, IfExp)."""

from __future__ import annotations

import ast

from ..types import (
    bool_,
)
from . import _contains as contains
from . import _datetime as datetimes
from . import _enums as enums
from . import _exceptions as exceptions
from ._types import (
    BOTTOM,
    WEAK_BOOL,
    WEAK_FLOAT,
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
    kind_of,
    strong,
    unary_result,
    unify,
)
from ._values import (
    Ref,
    StringRef,
    Val,
    const_val,
)

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.LShift: "<<", ast.RShift: ">>",
}
_HELPERS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
            "<<": "lshift", ">>": "rshift"}
_CMPOPS = {ast.Lt: ("<", "lt"), ast.LtE: ("<=", "le"), ast.Gt: (">", "gt"),
           ast.GtE: (">=", "ge"), ast.Eq: ("==", "eq"), ast.NotEq: ("!=", "ne")}
_PY_CMP = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
_SPLIT = 32  # operations of a long chain per C++ expression


def _binding(name: str, v) -> str:
    """The C++ statement that evaluates ``v`` once into the constant ``name``."""
    return f"const {ctype(v.type)} {name} = {v.code};"


def _cname(name: str) -> str:
    return "v_" + (name if name.isascii() else "u" + name.encode().hex())


class OperatorTranslation:
    """FunctionTranslator's operator methods (unary, binary, comparison, boolean, ``x if c else y``)."""

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
