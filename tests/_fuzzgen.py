"""Random Python scalar functions over the translator's subset, for differential fuzzing.

Expressions are generated with their NumPy types tracked (using the translator's own
promotion probe only to stay inside what NumPy accepts); correctness is judged solely by
comparing the compiled results with the Python function run on NumPy scalars.

The two branches of a conditional expression, and/or, and min/max get operands of one
type (converted explicitly): Python picks a branch's type at run time, a static
translator must unify them, and for Python int/float the two differ (0 // -100 is int 0,
0 // -100.0 is float -0.0). That divergence is inherent to static typing (Numba shares
it) and is documented rather than fuzzed.

Math calls go through float() so both sides call the same libm routine in double
precision, which keeps the comparison exact even when a result feeds a branch.
"""

from __future__ import annotations

import random

from numbacuda_ufunc import types as nt
from numbacuda_ufunc.compiler._types import (
    WEAK_BOOL,
    WEAK_FLOAT,
    WEAK_INT,
    PromotionError,
    Weak,
    binary_result,
    kind_of,
    unary_result,
    unify,
)

DTYPES = [nt.bool_, nt.int8, nt.int16, nt.int32, nt.int64, nt.uint8, nt.uint16, nt.uint32,
          nt.uint64, nt.float32, nt.float64, nt.complex64, nt.complex128]
WEIGHTS = [1, 2, 2, 3, 3, 2, 1, 2, 2, 4, 4, 1, 1]
ARITH = ["+", "-", "*", "/", "//", "%"]
BITS = ["&", "|", "^", "<<", ">>"]
CMPS = ["<", "<=", ">", ">=", "==", "!="]
MATH = ["sin", "cos", "exp", "log", "sqrt", "atan", "tanh", "fabs", "expm1", "log1p", "erf"]
# Python ints are unbounded; the translator holds them in int64 (as Numba does). int() is
# applied only to types whose values fit, so the oracle never leaves int64's range.
NARROW = {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"}
CASTS = {"np.float32": nt.float32, "np.float64": nt.float64, "np.int16": nt.int16,
         "np.int64": nt.int64, "np.uint8": nt.uint8}


def _is_constant(text):
    try:
        eval(text, {"__builtins__": {}}, {})
    except (NameError, ArithmeticError, TypeError, ValueError, SyntaxError):
        return False
    return True


class Gen:
    def __init__(self, rng: random.Random):
        self.r = rng

    def literal(self):
        c = self.r.random()
        if c < 0.45:
            return str(self.r.choice([0, 1, 2, 3, 5, 7, 10, 100])), WEAK_INT
        if c < 0.85:
            return repr(self.r.choice([0.5, 2.0, 1.5, 0.25, 3.0, 1e-3, 10.0])), WEAK_FLOAT
        if c < 0.95:
            return self.r.choice(["True", "False"]), WEAK_BOOL
        return "1e308", WEAK_FLOAT

    def leaf(self, env):
        if env and self.r.random() < 0.75:
            name = self.r.choice(sorted(env))
            return name, env[name]
        return self.literal()

    def binop(self, env, depth):
        for _ in range(8):
            a, ta = self.expr(env, depth - 1)
            b, tb = self.expr(env, depth - 1)
            op = self.r.choice(ARITH * 3 + BITS + ["**"])
            if op == "**":
                b, tb = self.r.choice(["2", "3"]), WEAK_INT
                if kind_of(ta) not in "bi" and b == "3":
                    b = "2"
            if op in ("<<", ">>"):
                if isinstance(ta, Weak) and isinstance(tb, Weak):
                    continue  # Python would build a huge exact integer
                b = f"({b} & 7)" if kind_of(tb) in "bi" else b
            if op in ("*", "**") and isinstance(ta, Weak) and isinstance(tb, Weak):
                continue  # unbounded Python ints on one side, int64 on the other
            try:
                t = binary_result(op, ta, tb)
                if op in ("<<", ">>") and kind_of(tb) in "bi":
                    t = binary_result(op, ta, binary_result("&", tb, WEAK_INT))
            except PromotionError:
                continue
            return f"({a} {op} {b})", t
        return self.leaf(env)

    def compare(self, env, depth):
        for _ in range(8):
            a, ta = self.expr(env, depth - 1)
            b, tb = self.expr(env, depth - 1)
            op = self.r.choice(CMPS)
            if "c" in (kind_of(ta), kind_of(tb)) and op not in ("==", "!="):
                # NumPy orders complex scalars with NaN parts differently depending on
                # whether both operands have the same type (scalar math) or not (ufunc);
                # the translator follows the same-type rule, tested in the unit tests.
                op = self.r.choice(["==", "!="])
            try:
                t = binary_result(op, ta, tb)
            except PromotionError:
                continue
            if self.r.random() < 0.2:
                c, tc = self.expr(env, depth - 1)
                op2 = self.r.choice(CMPS)
                if "c" in (kind_of(tb), kind_of(tc)):
                    op2 = "=="
                try:
                    t2 = binary_result(op2, tb, tc)
                except PromotionError:
                    return f"({a} {op} {b})", t
                if isinstance(t, Weak) != isinstance(t2, Weak):
                    # Python's chain gives the first comparison's result when it is false
                    # and the second's otherwise: a NumPy bool or a Python bool depending
                    # on the values (and ~ of a Python bool is an int), which no static
                    # type describes.
                    return f"({a} {op} {b})", t
                return f"({a} {op} {b} {op2} {c})", t
            return f"({a} {op} {b})", t
        return "True", WEAK_BOOL

    def call(self, env, depth):
        a, ta = self.expr(env, depth - 1)
        k = kind_of(ta)
        c = self.r.random()
        if k == "c":
            if c < 0.4:
                return f"abs({a})", binary_result("+", WEAK_FLOAT, nt.float32) if \
                    ta == nt.complex64 else nt.float64 if not isinstance(ta, Weak) else WEAK_FLOAT
            if c < 0.7:
                part = self.r.choice(["real", "imag"])
                t = nt.float32 if ta == nt.complex64 else nt.float64
                return f"({a}).{part}", WEAK_FLOAT if isinstance(ta, Weak) else t
            return f"({a}).conjugate()", ta
        if c < 0.35 and not _is_constant(a):
            # (A constant argument would be folded by the C++ compiler, correctly rounded,
            # while CPython calls libm at run time: 1 ULP apart for expm1(1.0).)
            return f"math.{self.r.choice(MATH)}(float({a}))", WEAK_FLOAT
        if c < 0.5:
            return f"abs({a})", unary_result("-", ta) if k != "b" else ta
        if c < 0.65:
            b, tb = self.expr(env, depth - 1)
            if kind_of(tb) == "c":
                return f"abs({a})", unary_result("-", ta) if k != "b" else ta
            fn = self.r.choice(["min", "max"])
            t = unify(ta, tb)
            return f"{fn}({self.converted(a, ta, t)}, {self.converted(b, tb, t)})", t
        if c < 0.75:
            name = self.r.choice(sorted(CASTS))
            return f"{name}({a})", CASTS[name]
        if c < 0.85 and (isinstance(ta, Weak) and k in "bi" or getattr(ta, "name", "") in NARROW):
            return f"int({a})", WEAK_INT
        if c < 0.92:
            return f"float({a})", WEAK_FLOAT
        return f"bool({a})", WEAK_BOOL

    def expr(self, env, depth=3):
        if depth <= 0:
            return self.leaf(env)
        c = self.r.random()
        if c < 0.25:
            return self.leaf(env)
        if c < 0.6:
            return self.binop(env, depth)
        if c < 0.7:
            return self.compare(env, depth)
        if c < 0.85:
            return self.call(env, depth)
        if c < 0.92:
            t_, _ = self.compare(env, depth - 1)
            a, ta = self.expr(env, depth - 1)
            b, tb = self.expr(env, depth - 1)
            try:
                t = unify(ta, tb)
            except PromotionError:
                return a, ta
            a, b = self.converted(a, ta, t), self.converted(b, tb, t)
            if a is None or b is None:
                return self.leaf(env)
            return f"({a} if {t_} else {b})", t
        if c < 0.96:
            a, ta = self.expr(env, depth - 1)
            b, tb = self.expr(env, depth - 1)
            op = self.r.choice(["and", "or"])
            try:
                t = unify(ta, tb)
            except PromotionError:
                return a, ta
            a, b = self.converted(a, ta, t), self.converted(b, tb, t)
            if a is None or b is None:
                return self.leaf(env)
            return f"({a} {op} {b})", t
        a, ta = self.expr(env, depth - 1)
        if isinstance(ta, Weak):
            # A negative Python int next to an unsigned value is an OverflowError in NumPy
            # (and a CompileError here); keep Python ints non-negative.
            return a, ta
        if kind_of(ta) in "bi" and self.r.random() < 0.5:
            return f"(~{a})", unary_result("~", ta)
        if kind_of(ta) == "b":
            return f"(not {a})", WEAK_BOOL
        return f"(-{a})", unary_result("-", ta)

    def function(self, name, nargs):
        params = [f"a{i}" for i in range(nargs)]
        types = self.r.choices(DTYPES, weights=WEIGHTS, k=nargs)
        env = dict(zip(params, types))
        lines = [f"def {name}({', '.join(params)}):"]
        # Locals get a fixed type up front and every assignment converts to it, so the
        # Python function's run-time types equal the translator's static ones (a variable
        # that changed type at run time would make the comparison meaningless).
        for k in range(4):
            t = self.r.choice(DTYPES + [WEAK_INT, WEAK_FLOAT, WEAK_INT])
            lines.append(f"    v{k} = {self.converted('0', WEAK_INT, t)}")
            env[f"v{k}"] = t
        self.body(lines, env, 1, in_loop=False, budget=self.r.randint(2, 6))
        e, _ = self.expr(env, 3)
        lines.append(f"    return {e}")
        return "\n".join(lines) + "\n", types

    @staticmethod
    def converted(e, t, target):
        """``e`` (of type t) converted to exactly ``target``; None when Python can't."""
        if t == target:
            return e
        if kind_of(t) == "c" and kind_of(target) != "c":
            return None
        if target == WEAK_INT and not (isinstance(t, Weak) and t.kind in "bi"
                                       or getattr(t, "name", "") in NARROW):
            return None
        if isinstance(target, Weak):
            return {"b": "bool", "i": "int", "f": "float", "c": "complex"}[target.kind] + \
                f"({e})"
        return f"np.{target.name}({e})"

    def assign(self, lines, env, ind):
        e, t = self.expr(env, 3)
        pad = "    " * ind
        target = self.r.choice([f"v{k}" for k in range(4)])
        tt = env[target]
        if self.r.random() < 0.4:
            op = self.r.choice(["+", "-", "*"])
            try:
                if binary_result(op, tt, t) == tt and not (
                        op == "*" and isinstance(tt, Weak) and isinstance(t, Weak)):
                    lines.append(f"{pad}{target} {op}= {e}")
                    return
            except PromotionError:
                pass
        conv = self.converted(e, t, tt)
        if conv is not None:
            lines.append(f"{pad}{target} = {conv}")
        else:
            lines.append(f"{pad}pass")

    def body(self, lines, env, ind, in_loop, budget):
        pad = "    " * ind
        for _ in range(budget):
            c = self.r.random()
            if c < 0.5 or ind > 2:
                self.assign(lines, env, ind)
            elif c < 0.7:
                cond, _ = self.compare(env, 2)
                lines.append(f"{pad}if {cond}:")
                self.assign(lines, env, ind + 1)
                if in_loop and self.r.random() < 0.3:
                    lines.append(f"{pad}    {self.r.choice(['break', 'continue'])}")
                lines.append(f"{pad}else:")
                self.assign(lines, env, ind + 1)
            elif c < 0.85:
                var = f"i{ind}"
                args = self.r.choice(["4", "1, 6", "5, 0, -2", "0, 7, 3"])
                lines.append(f"{pad}for {var} in range({args}):")
                inner = dict(env, **{var: WEAK_INT})  # loop names stay inside the loop:
                self.body(lines, inner, ind + 1, True, self.r.randint(1, 2))  # a break
                # may skip their assignment
            else:
                var = f"k{ind}"
                lines.append(f"{pad}{var} = 0")
                inner = dict(env, **{var: WEAK_INT})
                cond, _ = self.compare(inner, 1)
                lines.append(f"{pad}while {var} < 4 and {cond}:")
                lines.append(f"{pad}    {var} += 1")
                self.body(lines, inner, ind + 1, True, 1)
