"""Finding a function's source and AST, and reporting errors that point at the user's code.

The whole file is parsed (once per file version) and the function's node is picked by its
first line, so lambdas inside multi-line expressions, nested functions and decorated
functions are all found with their true line numbers. Functions defined by ``exec`` or in
a bare REPL have no source: their code object is lifted instead (_bytecode.py).
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import textwrap

from ..errors import CompileError
from ._bytecode import lift

__all__ = ["BytecodeSource", "FunctionSource", "error_at", "line_directive", "load_source"]


def _take_identity_of(obj, pyfunc) -> None:
    """Name, docstring and module of the decorated function, as functools.wraps gives."""
    obj.py_func = pyfunc
    obj.__name__ = pyfunc.__name__
    obj.__qualname__ = getattr(pyfunc, "__qualname__", pyfunc.__name__)
    obj.__module__ = getattr(pyfunc, "__module__", None)
    obj.__doc__ = pyfunc.__doc__
    obj.__wrapped__ = pyfunc


class FunctionSource:
    """The AST node of one function plus what error messages need."""

    def __init__(self, node, filename: str, lines: list[str], name: str, line_offset: int = 0):
        self.node = node  # ast.FunctionDef or ast.Lambda
        self.filename = filename
        self.lines = lines
        self.name = name
        self.line_offset = line_offset  # added to node line numbers (getsource fallback)

    def line_text(self, lineno: int) -> str:
        i = lineno - 1
        return self.lines[i].rstrip("\n") if 0 <= i < len(self.lines) else ""

    def text(self) -> str:
        """Source of the function with its position (for hashing; the position tells apart
        lambdas on one line). Not ast.dump, which recurses once per nesting level."""
        n = self.node
        first, last = n.lineno + self.line_offset, (n.end_lineno or n.lineno) + self.line_offset
        return repr((n.lineno, n.col_offset, n.end_lineno, n.end_col_offset,
                     "".join(self.lines[first - 1:last])))


class BytecodeSource(FunctionSource):
    """A function lifted from its code object (no source lines to quote)."""

    def __init__(self, node, filename, name, code):
        super().__init__(node, filename, [], name)
        self.code = code

    def text(self) -> str:
        c = self.code
        return repr((c.co_code, c.co_consts, c.co_names, c.co_varnames, c.co_firstlineno))


def line_directive(filename: str, line: int) -> str:
    """``#line line "filename"``, the name escaped as a C string (quotes, backslashes and
    control characters would end or break the directive)."""
    def escape(c):
        if c in '"\\':
            return "\\" + c
        if c.isprintable():
            return c
        return "".join(f"\\{b:03o}" for b in c.encode("utf-8"))
    return f'#line {line} "{"".join(map(escape, filename))}"'


def error_at(src: FunctionSource, node, message: str) -> CompileError:
    """``file.py:12: <message> in function 'f'`` followed by the offending source line."""
    lineno = getattr(node, "lineno", None) or getattr(src.node, "lineno", 0)
    lineno += src.line_offset
    line = src.line_text(lineno)
    text = f"{src.filename}:{lineno}: {message} in function '{src.name}'"
    if isinstance(src, BytecodeSource):
        text += " (translated from its bytecode: it has no source)"
    if line.strip():
        text += "\n    " + line.strip()
    return CompileError(text)


@functools.lru_cache(maxsize=64)
def _parse_file(filename: str, text: str):
    """The file's AST and its functions indexed by name and its lambdas by line, so that
    finding one function is a lookup, not a walk of the whole file (a module of 200
    functions would otherwise be walked 200 times)."""
    tree = ast.parse(text, filename)
    index: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda):
            index.setdefault(("<lambda>", node.lineno), []).append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            index.setdefault(node.name, []).append(node)
    return index


def _candidates(index, code):
    firstline = code.co_firstlineno
    if code.co_name == "<lambda>":
        return list(index.get(("<lambda>", firstline), ()))
    out = []
    for node in index.get(code.co_name, ()):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if first == firstline or node.lineno == firstline:
            out.append(node)
    return out


def _arg_names(node) -> list[str]:
    a = node.args
    return [x.arg for x in a.posonlyargs + a.args]


def _pick(cands, code):
    names = list(code.co_varnames[:code.co_argcount])
    cands = [c for c in cands if _arg_names(c) == names]
    if len(cands) > 1:
        # Several lambdas with the same parameters on one line: the body's column tells.
        positions = getattr(code, "co_positions", lambda: ())()  # Python 3.11+
        cols = {p[2] for p in positions if p[2] is not None and p[0] == code.co_firstlineno}
        exact = [c for c in cands
                 if isinstance(c, ast.Lambda) and c.body.col_offset in cols]
        if len(exact) == 1:
            return exact[0]
        return None
    return cands[0] if cands else None


def _pseudo_file(filename: str) -> bool:
    """``<string>``, ``<stdin>``, ``<python-input-3>``...: names of code that has no file."""
    return filename.startswith("<") and filename.endswith(">")


def _compiles_to(node, code, filename: str) -> bool:
    """Whether ``node`` compiles to ``code``'s bytecode. The text linecache holds for a
    pseudo-file is not necessarily this function's: every exec'd function is at
    ``<string>``, and Python 3.13 keeps the ``python -c`` command under that name too (a
    pytest-xdist worker's bootstrap, or a one-liner defining another ``f(x)``). A nested
    function compiles differently on its own (its free variables become globals) and so
    goes to the bytecode front end, which needs no source."""
    stmt = node if isinstance(node, ast.FunctionDef) else ast.copy_location(ast.Expr(node), node)
    try:
        module = compile(ast.Module(body=[stmt], type_ignores=[]), filename, "exec")
    except (SyntaxError, ValueError, TypeError):
        return False
    found = [c for c in module.co_consts if hasattr(c, "co_code") and c.co_name == code.co_name]
    return len(found) == 1 and found[0].co_code == code.co_code and \
        found[0].co_names == code.co_names and found[0].co_varnames == code.co_varnames


def _lifted(fn, filename, name, code) -> BytecodeSource:
    # The second front end: no source (exec()/compile(), python -c, a REPL before 3.13),
    # or none that is certainly this function's.
    return BytecodeSource(lift(fn), filename, name, code)


def load_source(fn, api: str = "translate()") -> FunctionSource:
    code = getattr(fn, "__code__", None)
    if code is None:
        raise CompileError(f"{api}: expected a Python function (got {fn!r})")
    name = "lambda" if code.co_name == "<lambda>" else code.co_name
    filename = code.co_filename
    pseudo = _pseudo_file(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    if lines:
        try:
            index = _parse_file(filename, "".join(lines))
        except SyntaxError:
            index = None
        if index is not None:
            node = _pick(_candidates(index, code), code)
            if node is not None and (not pseudo or _compiles_to(node, code, filename)):
                return FunctionSource(node, filename, lines, name)
    if pseudo:
        return _lifted(fn, filename, name, code)
    # The file changed since import, or a lambda we cannot single out: fall back to
    # inspect.getsource of the function alone.
    try:
        text = textwrap.dedent(inspect.getsource(fn))
        src_lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return _lifted(fn, filename, name, code)
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a lambda in the middle of an expression
        return _lifted(fn, filename, name, code)
    node = _pick([n for n in ast.walk(tree)
                  if (isinstance(n, ast.Lambda) if code.co_name == "<lambda>"
                      else isinstance(n, ast.FunctionDef) and n.name == code.co_name)], code)
    if node is None:
        # Lambdas alike on one line, which Python 3.10 cannot tell apart (no column
        # positions in its code objects): the code object itself says which one this is.
        return _lifted(fn, filename, name, code)
    all_lines = [""] * (start - 1) + list(src_lines)
    return FunctionSource(node, filename, all_lines, name, line_offset=start - 1)
