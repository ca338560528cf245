"""One local name, several variables: splitting a function's names by def-use webs.

The translator gives each local one type for the whole function. Python code often reuses
a name for unrelated values (``arr = arr.reshape(6)`` then ``arr = arr.reshape(3, 2)``; a
loop variable ``t`` later bound to an array), which Numba types apart through its SSA form.
When typing meets such a name (``variable 'x' is assigned incompatible types``), the
function is typed again from a copy of its AST in which every independent use of the name
has a name of its own: the definitions that reach a common read form one web (a variable),
found by a reaching-definitions pass over the structured control flow (if, while, for,
break, continue, return). A web keeps the original name when it holds the parameter (or
else the first definition); the others become ``<name>__<k>``.

An ``if`` whose test the translator found known at compile time (``if b_is_tuple:``
with a closure constant, ``if a.ndim == 1:``) is followed into the branch taken only, as
the translator types only that branch (Numba prunes dead branches before its SSA pass):
a definition in the pruned branch reaches nothing.

Names read by nested functions or lambdas are left alone (those read them when called),
and so is every name of a function using a statement this pass does not model.
"""

from __future__ import annotations

import ast
import copy

__all__ = ["split_webs", "uninitialized_reads"]


class _GiveUp(Exception):
    pass


def _undefined(name):
    return frozenset([("undef", name)])


def _is_undefined(key) -> bool:
    return isinstance(key, tuple) and key[0] == "undef"


_SIMPLE = (ast.Pass, ast.Expr, ast.Assert, ast.Return, ast.Raise, ast.Assign, ast.AugAssign,
           ast.AnnAssign, ast.If, ast.While, ast.For, ast.Break, ast.Continue, ast.FunctionDef)


class _Flow:
    def __init__(self, known_tests=None):
        self.known_tests = known_tests or {}  # id(If node) -> the branch always taken
        self.uses = {}  # id(Name load node) -> (node, set of def keys)
        self.defs = {}  # def key -> (name, Name store node or None for a parameter)
        self.pinned = set()  # names nested functions read
        self.loops = []  # (break states, continue states) of the enclosing loops
        self.augmented = []  # (read half, Name store) of each `name op= value`

    # ---- states: name -> frozenset of def keys (None: unreachable) ----------------------
    # A name a state does not hold is unassigned there: ("undef", name) stands for that
    # path where states merge and where it is read.
    @staticmethod
    def merge(*states):
        live = [s for s in states if s is not None]
        if not live:
            return None
        if len(live) == 1:
            return dict(live[0])
        out = {}
        for k in set().union(*live):
            out[k] = frozenset().union(*(s.get(k, _undefined(k)) for s in live))
        return out

    def read(self, node, state):
        if state is None:
            return
        entry = self.uses.setdefault(id(node), (node, set()))
        entry[1].update(state.get(node.id, _undefined(node.id)))

    def define(self, node, name, state):
        key = id(node)
        self.defs[key] = (name, node)
        if state is None:
            return None
        out = dict(state)
        out[name] = frozenset([key])
        return out

    # ---- expressions ----------------------------------------------------------------------
    def expr(self, e, state):
        if e is None:
            return
        todo = [e]
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.Lambda, ast.FunctionDef)):
                self.pin(n)
                continue
            if isinstance(n, (ast.NamedExpr, ast.ListComp, ast.SetComp, ast.DictComp,
                              ast.GeneratorExp, ast.Yield, ast.YieldFrom, ast.Await)):
                raise _GiveUp
            if isinstance(n, ast.Name):
                if not isinstance(n.ctx, ast.Load):
                    raise _GiveUp
                self.read(n, state)
                continue
            todo.extend(ast.iter_child_nodes(n))

    def pin(self, node):
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                self.pinned.add(n.id)

    def target(self, t, state):
        """Binds an assignment target; returns the new state."""
        if isinstance(t, ast.Name):
            return self.define(t, t.id, state)
        if isinstance(t, (ast.Tuple, ast.List)):
            for x in t.elts:
                state = self.target(x, state)
            return state
        if isinstance(t, (ast.Subscript, ast.Attribute)):
            self.expr(t.value, state)
            if isinstance(t, ast.Subscript):
                self.expr(t.slice, state)
            return state
        raise _GiveUp

    # ---- statements -----------------------------------------------------------------------
    def block(self, stmts, state):
        for s in stmts:
            if state is None:
                break
            state = self.stmt(s, state)
        return state

    def stmt(self, s, state):
        if not isinstance(s, _SIMPLE):
            raise _GiveUp
        if isinstance(s, ast.Assign):
            self.expr(s.value, state)
            for t in s.targets:
                state = self.target(t, state)
            return state
        if isinstance(s, ast.AnnAssign):
            if s.value is None:
                return state
            self.expr(s.value, state)
            return self.target(s.target, state)
        if isinstance(s, ast.AugAssign):
            self.expr(s.value, state)
            if isinstance(s.target, ast.Name):
                load = ast.copy_location(ast.Name(s.target.id, ast.Load()), s.target)
                self.read(load, state)  # the read half, tied to the store below
                self.augmented.append((load, s.target))
                return self.define(s.target, s.target.id, state)
            return self.target(s.target, state)
        if isinstance(s, (ast.Expr, ast.Assert)):
            self.expr(s.value if isinstance(s, ast.Expr) else s.test, state)
            if isinstance(s, ast.Assert):
                self.expr(s.msg, state)
            return state
        if isinstance(s, (ast.Return, ast.Raise)):
            self.expr(s.value if isinstance(s, ast.Return) else s.exc, state)
            return None
        if isinstance(s, ast.Pass):
            return state
        if isinstance(s, (ast.Break, ast.Continue)):
            if not self.loops:
                raise _GiveUp
            self.loops[-1][0 if isinstance(s, ast.Break) else 1].append(state)
            return None
        if isinstance(s, ast.FunctionDef):
            self.pin(s)
            return self.define(s, s.name, state)
        if isinstance(s, ast.If):
            self.expr(s.test, state)
            taken = self.known_tests.get(id(s))
            if taken is not None:
                return self.block(s.body if taken else s.orelse, state)
            return self.merge(self.block(s.body, state), self.block(s.orelse, state))
        if isinstance(s, ast.While):
            return self.loop(s, state, s.test, None)
        return self.loop(s, state, None, s.target)  # for

    def loop(self, s, state, test, target):
        if target is not None:
            self.expr(s.iter, state)
        head = state
        while True:
            self.expr(test, head)
            self.loops.append(([], []))
            body_in = self.target(target, head) if target is not None else head
            out = self.block(s.body, body_in)
            breaks, continues = self.loops.pop()
            new_head = self.merge(state, out, *continues)
            if new_head == head:
                break
            head = new_head
        if isinstance(test, ast.Constant) and test.value:  # while True: only break leaves
            return self.merge(*breaks)
        after = self.block(s.orelse, head) if s.orelse else head
        return self.merge(after, *breaks)


def _known(fn_node, node, if_tests):
    """``if_tests`` (keyed by the If nodes of ``fn_node``) as id(If of ``node``, a copy or
    ``fn_node`` itself) -> the branch always taken."""
    known = {}
    if if_tests:  # the copy's nodes, walked in the same order as the original's
        for old, new in zip(ast.walk(fn_node), ast.walk(node)):
            seen = if_tests.get(id(old))
            if seen is not None and len(seen) == 1 and None not in seen:
                known[id(new)] = next(iter(seen))
    return known


def uninitialized_reads(fn_node, if_tests=None):
    """``[(name, Name node)]``: the first read of each local that some path reaches with
    the name unassigned (Numba's "Detected uninitialized variable"); [] when the pass does
    not model the function."""
    if not isinstance(fn_node, ast.FunctionDef):
        return []
    flow = _Flow(_known(fn_node, fn_node, if_tests))
    a = fn_node.args
    params = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs] + \
        [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    state = {p: frozenset([("param", p)]) for p in params}
    try:
        flow.block(fn_node.body, state)
    except (_GiveUp, RecursionError):
        return []
    assigned = {name for name, _ in flow.defs.values()} - set(params)
    out = {}
    for node, reaching in flow.uses.values():
        name = node.id
        if name in assigned and ("undef", name) in reaching and not name.startswith("__nu_"):
            where = (node.lineno, node.col_offset)
            if name not in out or where < (out[name].lineno, out[name].col_offset):
                out[name] = node
    return sorted(out.items(), key=lambda kv: (kv[1].lineno, kv[1].col_offset))


def split_webs(fn_node, if_tests=None):
    """A copy of ``fn_node`` (an ast.FunctionDef) whose locals with independent def-use
    webs have one name per web, or None when no name splits (or the pass gives up).
    ``if_tests``: id(If node of ``fn_node``) -> the set of values its test had while
    typing (True/False: known at compile time; None: not)."""
    if not isinstance(fn_node, ast.FunctionDef):
        return None
    node = copy.deepcopy(fn_node)
    flow = _Flow(_known(fn_node, node, if_tests))
    a = node.args
    params = [x.arg for x in a.posonlyargs + a.args] + ([a.vararg.arg] if a.vararg else [])
    state = {}
    for p in params:
        key = ("param", p)
        flow.defs[key] = (p, None)
        state[p] = frozenset([key])
    try:
        flow.block(node.body, state)
    except (_GiveUp, RecursionError):
        return None
    parent = {k: k for k in flow.defs}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for _, reaching in flow.uses.values():
        keys = [k for k in reaching if not _is_undefined(k)]
        for k in keys[1:]:
            ra, rb = find(keys[0]), find(k)
            if ra != rb:
                parent[rb] = ra
    for load, store in flow.augmented:  # x += 1 reads and writes one variable
        reaching = flow.uses[id(load)][1]
        for k in reaching:
            if _is_undefined(k):
                continue
            ra, rb = find(k), find(id(store))
            if ra != rb:
                parent[rb] = ra
    webs = {}  # name -> {root: [def keys]}
    for key, (name, _) in flow.defs.items():
        webs.setdefault(name, {}).setdefault(find(key), []).append(key)
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | set(params)
    rename = {}  # root -> new name
    for name, groups in webs.items():
        if len(groups) < 2 or name in flow.pinned:
            continue

        def order(root, name=name, groups=groups):
            keys = groups[root]
            if ("param", name) in keys:
                return (0, 0, 0)
            first = min((flow.defs[k][1].lineno, flow.defs[k][1].col_offset) for k in keys)
            return (1,) + first

        roots = sorted(groups, key=order)
        for k, root in enumerate(roots[1:], start=2):
            new = f"{name}__{k}"
            while new in used:
                new += "_"
            used.add(new)
            rename[root] = new
    if not rename:
        return None
    for key, (_, store) in flow.defs.items():
        new = rename.get(find(key))
        if new is not None and store is not None:
            if isinstance(store, ast.FunctionDef):
                return None  # a nested function's name: leave the function alone
            store.id = new
    for load, reaching in flow.uses.values():
        roots = {find(k) for k in reaching if not _is_undefined(k)}
        if len(roots) == 1:
            new = rename.get(roots.pop())
            if new is not None:
                load.id = new
    return node
