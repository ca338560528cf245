"""The second front end: a function without source (made by ``exec``/``compile``, typed at
``python -c`` or at a REPL before Python 3.13) is lifted from its code object into the
same AST the first front end reads, so one translator types and emits both.

The lifter never rebuilds Python's loops and ifs. It cuts the bytecode into basic blocks
and writes them as a state machine the translator already understands::

    __nu_pc = 0
    while True:
        if __nu_pc == 0:
            ...                   # one basic block, its stack turned into expressions
            __nu_pc = 3           # a jump; a conditional one is an if/else of two
        elif __nu_pc == 3:
            ...
            return s

so any control flow the compiler produced (and/or, chained comparisons, conditional
expressions, break/continue, early returns) maps over without pattern matching, and
NVRTC or g++ turns the dispatch back into plain branches. Values left on the stack at a
jump travel in locals ``__nu_s<block>_<k>`` (one per join and stack position, so their
types unify like the branches of a conditional expression do); compile-time
objects (modules, functions, a call's NULL) travel as they are. A ``for`` loop's iterator
becomes a counter (``range`` keeps Python's iteration count near the int64 limits).

Opcodes are read by name with ``dis``, and every version difference is spelled out where
it is handled: 3.10 (BINARY_ADD..., CALL_FUNCTION/CALL_METHOD, ROT_*/DUP_TOP,
JUMP_IF_*_OR_POP), 3.11 (BINARY_OP, PRECALL/CALL, KW_NAMES, PUSH_NULL, SWAP/COPY,
forward/backward jumps), 3.12 (LOAD_ATTR's method bit, RETURN_CONST, END_FOR,
BINARY_SLICE, CALL_INTRINSIC_1) and 3.13 (TO_BOOL, CALL_KW, LOAD_FAST_LOAD_FAST,
'bool(<)' comparisons, the iterator left below END_FOR). An opcode outside the subset is
a CompileError naming it and the line.
"""

from __future__ import annotations

import ast
import builtins
import dis
import sys
import threading
import weakref

import numpy as np

from ..errors import CompileError
from ..types import int64, uint64
from . import _iteration as iteration
from ._exceptions import ASSERTION_ERROR

__all__ = ["HIDDEN", "lift"]

_PY = sys.version_info[:2]


def _range_len(start, stop, step):
    """len(range(start, stop, step)) for int64 arguments, without overflow (translated as
    the count of a lifted ``for`` loop; never run in Python)."""
    if step > 0 and start < stop:
        return (uint64(stop) - uint64(start) - uint64(1)) // uint64(step) + uint64(1)
    if step < 0 and start > stop:
        return (uint64(start) - uint64(stop) - uint64(1)) // (uint64(0) - uint64(step)) \
            + uint64(1)
    return uint64(0)


# Names the lifted code uses that are not the user's: the translator resolves them here.
HIDDEN = {"__nu_range_len": _range_len, "__nu_uint64": uint64, "__nu_int64": int64,
          "__nu_range_arg": None}  # None: a builtin of the translator (_library.py)


class _Null:
    """The NULL that 3.11+ pushes below a callable (and our model of LOAD_METHOD's)."""

    def __repr__(self):
        return "NULL"


NULL = _Null()


class _Iter:
    """A for loop's iterator on the stack: hidden locals ``__nu_r<k>_*`` hold its state."""

    def __init__(self, k, kind):
        self.k = k
        self.kind = kind  # "range" or "seq"

    def name(self, part):
        return f"__nu_r{self.k}_{part}"


_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
           "%": ast.Mod, "**": ast.Pow, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor,
           "<<": ast.LShift, ">>": ast.RShift, "@": ast.MatMult}
# Python 3.10's one opcode per operator (BINARY_ADD, INPLACE_ADD...).
_OLD_BINOPS = {"ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/",
               "FLOOR_DIVIDE": "//", "MODULO": "%", "POWER": "**", "AND": "&", "OR": "|",
               "XOR": "^", "LSHIFT": "<<", "RSHIFT": ">>", "MATRIX_MULTIPLY": "@"}
_CMPOPS = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq,
           "!=": ast.NotEq}
_UNARY = {"UNARY_NEGATIVE": ast.USub, "UNARY_POSITIVE": ast.UAdd, "UNARY_NOT": ast.Not,
          "UNARY_INVERT": ast.Invert}
_NOOPS = {"NOP", "RESUME", "PRECALL", "EXTENDED_ARG", "CACHE", "COPY_FREE_VARS", "MAKE_CELL",
          "TO_BOOL", "GEN_START"}
_UNSUPPORTED = {
    "MAKE_FUNCTION": "nested def or lambda", "LOAD_CLOSURE": "nested def or lambda",
    "BUILD_MAP": "dict", "BUILD_SET": "set",
    "FORMAT_VALUE": "f-string", "BUILD_STRING": "f-string", "FORMAT_SIMPLE": "f-string",
    "POP_JUMP_IF_NONE": "'is None' test", "POP_JUMP_IF_NOT_NONE": "'is None' test",
    "POP_JUMP_FORWARD_IF_NONE": "'is None' test",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "'is None' test",
    "POP_JUMP_BACKWARD_IF_NONE": "'is None' test",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "'is None' test",
    "SETUP_FINALLY": "try", "PUSH_EXC_INFO": "try", "SETUP_WITH": "with",
    "BEFORE_WITH": "with", "YIELD_VALUE": "yield", "RETURN_GENERATOR": "generator",
    "STORE_GLOBAL": "global", "DELETE_FAST": "del",
    "STORE_SLICE": "slice assignment",
    "IMPORT_NAME": "import", "LOAD_FAST_AND_CLEAR": "comprehension",
}
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs) | set(getattr(dis, "hasjump", ()))
_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}


def _at(node, line):
    node.lineno, node.col_offset = line, 0
    node.end_lineno, node.end_col_offset = line, 0
    return node


def _name(ident, store=False):
    return ast.Name(ident, ast.Store() if store else ast.Load())


def _const(value):
    if isinstance(value, tuple):  # (16, 16): a Tuple node, as the source front end sees it
        return ast.Tuple([_const(v) for v in value], ast.Load())
    return ast.Constant(value)


def _assign(target, value):
    return ast.Assign([_name(target, True)], value)


class _Lifter:
    def __init__(self, fn):
        self.fn = fn
        self.code = code = fn.__code__
        self.instrs = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        self.index = {ins.offset: k for k, ins in enumerate(self.instrs)}
        self.locals = set(code.co_varnames) | set(code.co_cellvars)
        self.filename = code.co_filename
        self.line = code.co_firstlineno
        self.ntemp = 0
        self.niter = 0
        self.kwnames = ()
        self.leaders = self._leaders()
        self.shapes = {}  # block start index -> entry stack shape ("slot" or a static)
        self.bodies = {}  # block start index -> statements
        self.targets = set()  # blocks some edge jumps to
        self.work = []

    # ---- errors and small helpers ---------------------------------------------------------
    def error(self, message):
        name = "lambda" if self.code.co_name == "<lambda>" else self.code.co_name
        return CompileError(f"{self.filename}:{self.line}: {message} in function '{name}' "
                            f"(translated from its bytecode: it has no source)")

    def _line_of(self, ins):
        if _PY >= (3, 11):
            pos = ins.positions
            return pos.lineno if pos is not None and pos.lineno is not None else None
        return ins.starts_line

    def _exit_of(self, ins):
        """Where FOR_ITER goes when the iterator is exhausted, and whether the iterator
        is still on the stack there. 3.10/3.11 jump to the target with it popped; 3.12
        jumps past the END_FOR at the target with it popped; 3.13 jumps past END_FOR and
        leaves it for the POP_TOP that follows."""
        k = self.index[ins.argval]
        if self.instrs[k].opname == "END_FOR":
            return k + 1, _PY >= (3, 13)
        return k, False

    def _leaders(self):
        leaders = {0}
        for k, ins in enumerate(self.instrs):
            if ins.opcode in _JUMPS and isinstance(ins.argval, int):
                if ins.opname == "FOR_ITER":
                    leaders.add(self._exit_of(ins)[0])
                else:
                    leaders.add(self.index[ins.argval])
                leaders.add(k + 1)
            elif ins.opname in _TERMINAL:
                leaders.add(k + 1)
        return {k for k in leaders if k < len(self.instrs)}

    def _static(self, v):
        """Compile-time objects that cannot live in a local: NULL, iterators, and names or
        attributes of globals that are not numbers (modules, functions, types)."""
        if v is NULL or isinstance(v, _Iter) or getattr(v, "nu_item", False):
            return True
        if isinstance(v, ast.Attribute):
            return self._static(v.value)
        if isinstance(v, ast.Name) and v.id not in self.locals and not v.id.startswith("__nu_"):
            g = self.fn.__globals__
            value = g.get(v.id, getattr(builtins, v.id, None))
            if v.id in self.code.co_freevars:
                cell = self.fn.__closure__[self.code.co_freevars.index(v.id)]
                try:
                    value = cell.cell_contents
                except ValueError:
                    return True
            return not isinstance(value, (bool, int, float, complex, np.generic, tuple,
                                          np.ndarray))
        return False

    def _trivial(self, v):
        return self._static(v) or isinstance(v, ast.Constant) or (
            isinstance(v, ast.Tuple) and all(isinstance(e, ast.Constant) for e in v.elts))

    def _temp(self):
        self.ntemp += 1
        return f"__nu_t{self.ntemp}"

    # ---- blocks and edges -----------------------------------------------------------------
    def _edge(self, stmts, target, stack):
        """Statements that carry ``stack`` into block ``target`` and jump there."""
        shape = self.shapes.get(target)
        if shape is None:
            shape = ["slot" if not self._static(v) else v for v in stack]
            self.shapes[target] = shape
            self.work.append(target)
        if len(shape) != len(stack):
            raise self.error("unsupported control flow (stack depths differ at a join)")
        names, values = [], []
        for k, (want, have) in enumerate(zip(shape, stack)):
            if want == "slot":
                if self._static(have):
                    raise self.error("a module or function is used as a value in a branch")
                if not (isinstance(have, ast.Name) and have.id == f"__nu_s{target}_{k}"):
                    names.append(f"__nu_s{target}_{k}")
                    values.append(have)
            elif want is not have and not (isinstance(want, ast.AST) and isinstance(
                    have, ast.AST) and ast.dump(want) == ast.dump(have)):
                raise self.error("unsupported control flow (a callable differs between "
                                 "branches)")
        if len(names) == 1:
            stmts.append(_at(_assign(names[0], values[0]), self.line))
        elif names:
            stmts.append(_at(ast.Assign([ast.Tuple([_name(n, True) for n in names],
                                                   ast.Store())],
                                        ast.Tuple(values, ast.Load())), self.line))
        self.targets.add(target)
        stmts.append(_at(_assign("__nu_pc", ast.Constant(target)), self.line))
        return stmts

    def _spill(self, stmts, stack):
        """Before a statement: evaluate every pending stack value into a temporary, so
        Python's evaluation order survives (a value pushed before a store is read first)."""
        for k, v in enumerate(stack):
            # Temporaries and join slots are never reassigned inside a block.
            if not self._trivial(v) and not (isinstance(v, ast.Name) and v.id.startswith(
                    ("__nu_t", "__nu_s"))):
                t = self._temp()
                stmts.append(_at(_assign(t, v), self.line))
                stack[k] = _name(t)

    def _emit(self, stmts, stack, stmt):
        self._spill(stmts, stack)
        stmts.append(_at(stmt, self.line))

    def lift(self):
        self.shapes[0] = []
        self.work.append(0)
        while self.work:
            start = self.work.pop()
            if start not in self.bodies:
                self.bodies[start] = self._block(start)
        return self._assemble()

    def _assemble(self):
        order = sorted(self.bodies)
        entry = self.bodies[0]
        if len(order) == 1:
            body = entry
        else:
            chain = None
            for start in reversed([s for s in order if s in self.targets]):
                test = _at(ast.Compare(_name("__nu_pc"), [ast.Eq()], [ast.Constant(start)]),
                           self.line)
                chain = _at(ast.If(test, self.bodies[start], [chain] if chain else []),
                            self.line)
            if 0 in self.targets:
                body = [_at(_assign("__nu_pc", ast.Constant(0)), self.line)]
            else:
                body = entry
            body = body + [_at(ast.While(ast.Constant(True), [chain], []), self.line)]
        code = self.code
        args = [ast.arg(n) for n in code.co_varnames[:code.co_argcount]]
        node = ast.FunctionDef(
            name=code.co_name if code.co_name != "<lambda>" else "lambda",
            args=ast.arguments(posonlyargs=[], args=args, vararg=None, kwonlyargs=[],
                               kw_defaults=[], kwarg=None, defaults=[]),
            body=body, decorator_list=[], returns=None)
        if "type_params" in ast.FunctionDef._fields:  # 3.12+
            node.type_params = []
        _at(node, code.co_firstlineno)
        if code.co_flags & (0x04 | 0x08) or code.co_kwonlyargcount:  # *args, **kwargs
            node.args.vararg = ast.arg("args")
        return _fill_locations(node)

    # ---- one basic block ------------------------------------------------------------------
    def _block(self, start):
        stack = [_name(f"__nu_s{start}_{k}") if s == "slot" else s
                 for k, s in enumerate(self.shapes[start])]
        stmts = []
        k = start
        while True:
            ins = self.instrs[k]
            line = self._line_of(ins)
            if line:
                self.line = line
            done = self._op(ins, k, stack, stmts)
            if done:
                return stmts
            k += 1
            if k >= len(self.instrs):
                raise self.error("unsupported control flow (runs past the end)")
            if k in self.leaders:
                return self._edge(stmts, k, stack)

    def _pop(self, stack, n=1):
        if len(stack) < n:
            raise self.error("unsupported bytecode (stack underflow)")
        out = stack[len(stack) - n:]
        del stack[len(stack) - n:]
        return out

    def _callable(self, pair):
        """Of the two items below a call's arguments (3.11+: NULL and the callable, in
        either order; our LOAD_METHOD model pushes them the same way), the callable."""
        rest = [v for v in pair if v is not NULL]
        if len(rest) != 1:
            raise self.error("unsupported call (a method of a value)")
        return rest[0]

    def _call(self, stack, stmts, func, args, kwnames):
        kw = []
        if kwnames:
            kw = [ast.keyword(n, v) for n, v in zip(kwnames, args[len(args) - len(kwnames):])]
            args = args[:len(args) - len(kwnames)]
        if isinstance(func, _Iter) or func is NULL:
            raise self.error("unsupported call")
        stack.append(ast.Call(func, list(args), kw))

    def _branch(self, stmts, test, if_true, true_stack, if_false, false_stack, prefix=()):
        yes = self._edge(list(prefix), if_true, true_stack)
        no = self._edge([], if_false, false_stack)
        stmts.append(_at(ast.If(test, yes, no), self.line))
        return True

    def _op(self, ins, k, stack, stmts):  # noqa: C901  (one dispatch over opcodes)
        op = ins.opname
        if op in _NOOPS:
            return False
        if op in _UNSUPPORTED:
            raise self.error(f"unsupported construct '{_UNSUPPORTED[op]}'")
        # ---- loads and stores
        if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_GLOBAL", "LOAD_NAME",
                  "LOAD_CLASSDEREF"):
            if op == "LOAD_GLOBAL" and _PY >= (3, 11) and ins.arg & 1:
                stack.append(NULL)  # 3.11/3.12 push it before, 3.13 after: CALL takes both
            stack.append(_name(ins.argval))
            return False
        if op == "LOAD_FAST_LOAD_FAST":  # 3.13
            stack.extend(_name(n) for n in ins.argval)
            return False
        if op in ("STORE_FAST", "STORE_DEREF", "STORE_NAME"):
            (v,) = self._pop(stack)
            self._emit(stmts, stack, _assign(ins.argval, v))
            return False
        if op == "STORE_FAST_STORE_FAST":  # 3.13
            for n in ins.argval:
                (v,) = self._pop(stack)
                self._emit(stmts, stack, _assign(n, v))
            return False
        if op == "STORE_FAST_LOAD_FAST":  # 3.13
            (v,) = self._pop(stack)
            self._emit(stmts, stack, _assign(ins.argval[0], v))
            stack.append(_name(ins.argval[1]))
            return False
        if op == "LOAD_CONST":
            stack.append(_const(ins.argval))
            return False
        if op == "LOAD_SMALL_INT":  # 3.14
            stack.append(ast.Constant(ins.argval))
            return False
        if op in ("LOAD_ATTR", "LOAD_METHOD"):
            (obj,) = self._pop(stack)
            method = op == "LOAD_METHOD" or (_PY >= (3, 12) and ins.arg & 1)
            if method:
                stack.append(NULL)
            stack.append(ast.Attribute(obj, ins.argval, ast.Load()))
            return False
        if op == "PUSH_NULL":
            stack.append(NULL)
            return False
        # ---- stack shuffles
        if op in ("COPY", "DUP_TOP", "DUP_TOP_TWO"):
            n, count = {"DUP_TOP": (1, 1), "DUP_TOP_TWO": (2, 2)}.get(op, (ins.arg, 1))
            if any(not self._trivial(v) for v in stack[-n:]):
                self._spill(stmts, stack)  # a copied value is evaluated once
            for _ in range(count):
                stack.append(stack[-n])
            return False
        if op in ("SWAP", "ROT_TWO"):
            n = ins.arg if op == "SWAP" else 2
            stack[-1], stack[-n] = stack[-n], stack[-1]
            return False
        if op in ("ROT_THREE", "ROT_FOUR"):
            n = 3 if op == "ROT_THREE" else 4
            stack.insert(len(stack) - n, stack.pop())
            return False
        if op == "POP_TOP":
            (v,) = self._pop(stack)
            if isinstance(v, ast.AST) and any(isinstance(n, ast.Call) for n in ast.walk(v)):
                self._emit(stmts, stack, ast.Expr(v))
            return False
        # ---- operators
        if op == "BINARY_OP" or op.startswith(("BINARY_", "INPLACE_")) and (
                op.split("_", 1)[1] in _OLD_BINOPS):
            sym = ins.argrepr.rstrip("=") if op == "BINARY_OP" else \
                _OLD_BINOPS[op.split("_", 1)[1]]
            a, b = self._pop(stack, 2)
            stack.append(ast.BinOp(a, _BINOPS[sym](), b))
            return False
        if op == "COMPARE_OP":
            sym = ins.argrepr
            if sym.startswith("bool("):  # 3.13 marks comparisons whose result is a bool
                sym = sym[5:-1]
            if sym not in _CMPOPS:
                raise self.error(f"unsupported comparison '{sym}'")
            a, b = self._pop(stack, 2)
            stack.append(ast.Compare(a, [_CMPOPS[sym]()], [b]))
            return False
        if op == "CONTAINS_OP":  # in / not in (arg 1)
            a, b = self._pop(stack, 2)
            stack.append(ast.Compare(a, [ast.NotIn() if ins.arg else ast.In()], [b]))
            return False
        if op == "IS_OP":  # is / is not (arg 1): the translator allows them on enum members
            a, b = self._pop(stack, 2)
            stack.append(ast.Compare(a, [ast.IsNot() if ins.arg else ast.Is()], [b]))
            return False
        if op in _UNARY:
            (v,) = self._pop(stack)
            stack.append(ast.UnaryOp(_UNARY[op](), v))
            return False
        if op == "CALL_INTRINSIC_1" and ins.argrepr != "INTRINSIC_LIST_TO_TUPLE":  # 3.12: +x
            if ins.argrepr != "INTRINSIC_UNARY_POSITIVE":
                raise self.error(f"unsupported construct ({ins.argrepr})")
            (v,) = self._pop(stack)
            stack.append(ast.UnaryOp(ast.UAdd(), v))
            return False
        # ---- containers
        if op == "BINARY_SUBSCR":
            obj, idx = self._pop(stack, 2)
            stack.append(ast.Subscript(obj, idx, ast.Load()))
            return False
        if op == "BINARY_SLICE":  # 3.12
            obj, lo, hi = self._pop(stack, 3)
            stack.append(ast.Subscript(obj, ast.Slice(lo, hi, None), ast.Load()))
            return False
        if op == "BUILD_SLICE":
            parts = self._pop(stack, ins.arg)
            parts = [None if isinstance(p, ast.Constant) and p.value is None else p
                     for p in parts] + [None]
            stack.append(ast.Slice(parts[0], parts[1], parts[2]))
            return False
        if op == "STORE_SUBSCR":
            v, obj, idx = self._pop(stack, 3)
            self._emit(stmts, stack, ast.Assign([ast.Subscript(obj, idx, ast.Store())], v))
            return False
        if op == "STORE_ATTR":  # r.x = v (record fields)
            v, obj = self._pop(stack, 2)
            self._emit(stmts, stack, ast.Assign([ast.Attribute(obj, ins.argval, ast.Store())], v))
            return False
        # A call with many arguments (or f(*t)) builds its argument tuple: BUILD_LIST,
        # LIST_APPEND/LIST_EXTEND, LIST_TO_TUPLE, CALL_FUNCTION_EX. A list left as a value
        # is an ast.List, which the translator refuses as the source front end does.
        if op == "BUILD_LIST":
            stack.append(ast.List(self._pop(stack, ins.arg), ast.Load()))
            return False
        if op in ("LIST_APPEND", "LIST_EXTEND"):
            (v,) = self._pop(stack)
            target = stack[-ins.arg]
            if not isinstance(target, ast.List):
                raise self.error("unsupported construct 'list'")
            if op == "LIST_APPEND":
                target.elts.append(v)
            elif isinstance(v, (ast.Tuple, ast.List)):
                target.elts.extend(v.elts)
            else:
                target.elts.append(ast.Starred(v, ast.Load()))
            return False
        if op == "LIST_TO_TUPLE" or (op == "CALL_INTRINSIC_1"
                                     and ins.argrepr == "INTRINSIC_LIST_TO_TUPLE"):
            (v,) = self._pop(stack)
            if not isinstance(v, ast.List):
                raise self.error("unsupported construct 'list'")
            stack.append(ast.Tuple(v.elts, ast.Load()))
            return False
        if op == "CALL_FUNCTION_EX":
            if ins.arg & 1:
                raise self.error("unsupported construct '**kwargs in a call'")
            (args,) = self._pop(stack)
            (func,) = self._pop(stack) if _PY < (3, 11) else (self._callable(self._pop(stack, 2)),)
            elts = args.elts if isinstance(args, ast.Tuple) else [ast.Starred(args, ast.Load())]
            self._call(stack, stmts, func, elts, ())
            return False
        if op == "BUILD_TUPLE":
            stack.append(ast.Tuple(self._pop(stack, ins.arg), ast.Load()))
            return False
        if op == "UNPACK_SEQUENCE":
            (v,) = self._pop(stack)
            n = ins.arg
            if isinstance(v, ast.Tuple) and len(v.elts) == n:
                stack.extend(reversed(v.elts))
                return False
            pure = v
            while isinstance(pure, ast.Attribute):
                pure = pure.value
            if not isinstance(pure, ast.Name):
                t = self._temp()
                self._emit(stmts, stack, _assign(t, v))
                v = _name(t)
            stack.extend(ast.Subscript(v, ast.Constant(i), ast.Load())
                         for i in reversed(range(n)))
            return False
        # ---- calls
        if op == "KW_NAMES":  # 3.11/3.12: keyword names of the next CALL
            self.kwnames = self.code.co_consts[ins.arg]
            return False
        if op in ("CALL", "CALL_METHOD", "CALL_FUNCTION", "CALL_FUNCTION_KW", "CALL_KW"):
            kwnames = self.kwnames if op == "CALL" else ()
            self.kwnames = ()
            if op in ("CALL_FUNCTION_KW", "CALL_KW"):
                (names,) = self._pop(stack)
                kwnames = tuple(e.value for e in names.elts) if isinstance(
                    names, ast.Tuple) else names.value
            args = self._pop(stack, ins.arg)
            if op == "CALL_FUNCTION" or (op == "CALL_FUNCTION_KW" and _PY < (3, 11)):
                (func,) = self._pop(stack)
            else:
                pair = self._pop(stack, 2)
                if (isinstance(pair[0], ast.Name) and pair[0].id == ASSERTION_ERROR
                        and pair[1] is not NULL):
                    # assert's AssertionError(message), 3.11+: the message sits where a
                    # method call's self does.
                    func, args = pair[0], [pair[1]] + list(args)
                else:
                    func = self._callable(pair)
            self._call(stack, stmts, func, args, kwnames)
            return False
        # ---- loops
        if op == "GET_ITER":
            (seq,) = self._pop(stack)
            self.niter += 1
            it = self._iterator(stmts, stack, seq)
            stack.append(it)
            return False
        if op == "FOR_ITER":
            it = stack[-1]
            if not isinstance(it, _Iter):
                raise self.error("unsupported for loop")
            exit_k, keep = self._exit_of(ins)
            prefix = []
            value = _name(it.name("v"))
            if it.kind == "plan":
                # The item reads hidden locals only, which nothing changes before the next
                # FOR_ITER: it travels on the stack as a compile-time expression, so the
                # UNPACK_SEQUENCE that follows splits it without building a tuple.
                prefix.append(_at(_assign(it.name("k"), _name(it.name("i"))), self.line))
                value = it.plan.item(_name(it.name("k")))
                value.nu_item = True  # an enumerate()/zip() item: compile-time (_static)
                one = ast.Constant(1)
            elif it.kind == "range":
                prefix.append(_at(_assign(it.name("v"), _name(it.name("pos"))), self.line))
                prefix.append(_at(_assign(it.name("pos"), ast.BinOp(
                    _name(it.name("pos")), ast.Add(), _name(it.name("step")))), self.line))
                one = ast.Call(_name("__nu_uint64"), [ast.Constant(1)], [])
            else:
                prefix.append(_at(_assign(it.name("v"), ast.Subscript(
                    _name(it.name("seq")), _name(it.name("i")), ast.Load())), self.line))
                one = ast.Constant(1)
            prefix.append(_at(_assign(it.name("i"), ast.BinOp(_name(it.name("i")), ast.Add(),
                                                              one)), self.line))
            test = ast.Compare(_name(it.name("i")), [ast.Lt()], [_name(it.name("n"))])
            return self._branch(stmts, _at(test, self.line), k + 1, stack + [value], exit_k,
                                stack if keep else stack[:-1], prefix)
        if op == "END_FOR":  # reached only by falling through: 3.12 pops two values
            self._pop(stack, 2 if _PY == (3, 12) else 1)
            return False
        # ---- jumps
        if op in ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_ABSOLUTE", "JUMP",
                  "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_NO_INTERRUPT"):
            self._edge(stmts, self.index[ins.argval], stack)
            return True
        if op.startswith("POP_JUMP_") and op.endswith(("IF_FALSE", "IF_TRUE")):
            (cond,) = self._pop(stack)
            target = self.index[ins.argval]
            if op.endswith("IF_TRUE"):
                return self._branch(stmts, cond, target, stack, k + 1, stack)
            return self._branch(stmts, cond, k + 1, stack, target, stack)
        if op in ("JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):  # 3.10/3.11 and/or
            if not self._trivial(stack[-1]):
                self._spill(stmts, stack)
            cond = stack[-1]
            target = self.index[ins.argval]
            if op == "JUMP_IF_TRUE_OR_POP":
                return self._branch(stmts, cond, target, stack, k + 1, stack[:-1])
            return self._branch(stmts, cond, k + 1, stack[:-1], target, stack)
        # ---- exits
        if op == "RETURN_VALUE":
            (v,) = self._pop(stack)
            self._emit(stmts, stack, ast.Return(v))
            return True
        if op == "RETURN_CONST":  # 3.12
            self._emit(stmts, stack, ast.Return(_const(ins.argval)))
            return True
        if op == "LOAD_ASSERTION_ERROR":
            # assert: AssertionError under a hidden name, so that the raise that follows is
            # checked only under debug=True, as a source assert is (_exceptions.py).
            stack.append(_name(ASSERTION_ERROR))
            return False
        if op == "RAISE_VARARGS":
            if ins.arg == 0:
                raise self.error("a bare 'raise' (re-raise) is not supported: there is no "
                                 "exception being handled")
            exc = self._pop(stack, ins.arg)[0]  # `raise E from C`: the cause is dropped
            self._emit(stmts, stack, ast.Raise(exc, None))
            target = exc.func if isinstance(exc, ast.Call) else exc
            if (isinstance(target, ast.Name) and target.id == ASSERTION_ERROR
                    and k + 1 < len(self.instrs)):
                # A failing assert goes on after it unless debug=True: the code after the
                # raise is where the passing assert jumps.
                self._edge(stmts, k + 1, stack)
            return True
        raise self.error(f"unsupported bytecode {op}")

    def _resolve(self, name):
        """The object a non-local name refers to (None for locals)."""
        if name in self.locals:
            return None
        if name in self.code.co_freevars:
            try:
                return self.fn.__closure__[self.code.co_freevars.index(name)].cell_contents
            except ValueError:
                return None
        return self.fn.__globals__.get(name, getattr(builtins, name, None))

    def _iterator(self, stmts, stack, seq):
        it = _Iter(self.niter, "seq")
        if iteration.iterator_kind(seq, self._resolve) in ("enumerate", "zip"):
            # enumerate()/zip(): the parts _iteration.py plans; FOR_ITER pushes the item.
            it.kind = "plan"
            it.plan = iteration.plan(seq, self._resolve, it.name("z"),
                                     lambda node, message: self.error(message))
            for stmt in it.plan.setup:
                self._emit(stmts, stack, stmt)
            self._emit(stmts, stack, _assign(it.name("n"), it.plan.length))
            self._emit(stmts, stack, _assign(it.name("i"), ast.Constant(0)))
            return it
        func = seq.func if isinstance(seq, ast.Call) else None
        is_range = (isinstance(func, ast.Name) and func.id not in self.locals
                    and self.fn.__globals__.get(func.id, getattr(builtins, func.id, None))
                    is range)
        if is_range and not seq.keywords and 1 <= len(seq.args) <= 3:
            it.kind = "range"
            a = list(seq.args)
            start, stop, step = ([ast.Constant(0), a[0], ast.Constant(1)] if len(a) == 1 else
                                 [a[0], a[1], ast.Constant(1)] if len(a) == 2 else a)
            if isinstance(step, ast.Constant) and step.value == 0:
                raise self.error("range() arg 3 must not be zero")
            names = [it.name("pos"), it.name("stop"), it.name("step")]
            values = [ast.Call(_name("__nu_range_arg"), [x], []) for x in (start, stop, step)]
            self._emit(stmts, stack, ast.Assign(
                [ast.Tuple([_name(n, True) for n in names], ast.Store())],
                ast.Tuple(values, ast.Load())))
            self._emit(stmts, stack, _assign(it.name("n"), ast.Call(
                _name("__nu_range_len"), [_name(n) for n in names], [])))
            self._emit(stmts, stack, _assign(it.name("i"), ast.Call(
                _name("__nu_uint64"), [ast.Constant(0)], [])))
            return it
        self._emit(stmts, stack, _assign(it.name("seq"), seq))
        self._emit(stmts, stack, _assign(it.name("n"), ast.Call(
            _name("len"), [_name(it.name("seq"))], [])))
        self._emit(stmts, stack, _assign(it.name("i"), ast.Constant(0)))
        return it


_lock = threading.Lock()
_lifted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def lift(fn) -> ast.FunctionDef:
    """The function's body as an ``ast.FunctionDef`` the translator reads like source."""
    with _lock:
        hit = _lifted.get(fn)
    if hit is not None and hit[0] is fn.__code__:
        return hit[1]
    node = _Lifter(fn).lift()
    with _lock:
        _lifted[fn] = (fn.__code__, node)
    return node


def _fill_locations(root):
    """``ast.fix_missing_locations`` without recursion: a node without a position takes its
    parent's. The standard one recurses once per nesting level, and a lifted 1000-term sum
    (valid code: CPython compiles it) raised RecursionError with no file or line."""
    attrs = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    stack = [(root, (1, 0, 1, 0))]
    while stack:
        node, parent = stack.pop()
        if all(a in node._attributes for a in attrs):
            here = tuple(getattr(node, a, None) for a in attrs)
            here = tuple(p if h is None else h for h, p in zip(here, parent))
            for a, v in zip(attrs, here):
                setattr(node, a, v)
        else:
            here = parent
        stack.extend((child, here) for child in ast.iter_child_nodes(node))
    return root
