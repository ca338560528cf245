"""``raise`` and ``assert`` in kernels and the device functions they call (Numba's rules).

* ``raise E``, ``raise E(args)`` and ``raise <exception instance>`` end the raising thread
  at once, as a return from the kernel would; the other threads go on.
* In a ``debug=True`` kernel the launch's first exception also reaches the host: after the
  launch the engine raises ``E(*args)``, its first argument prefixed as Numba does:
  ``In function 'f', file /path.py, line 12, tid=[z, y, x] ctaid=[z, y, x]: message``
  (Numba lists the indices z first).
* ``assert cond[, message]`` is checked only in ``debug=True`` kernels (elsewhere it is
  compiled to nothing, as Numba and CUDA C++ do); a failure raises ``AssertionError``.

The exception's class and arguments are compile-time values (a class, constants); each
raise site gets a number, its *code*, which the generated code passes to
``nu::kern::raise_exception`` (src/kernels/kernel.cuh) with ``nu_kernel_debug``, the
constant the engine defines in each kernel's translation unit. ``_Context.exceptions`` lists the
sites; the kernel object maps a code back to the exception (kernel.py).
"""

from __future__ import annotations

import ast
import builtins

from ._values import Val

__all__ = ["ASSERTION_ERROR", "assert_stmt", "checked_divisor", "out_of_range", "raise_at_run_time",
           "raise_stmt", "static_value"]

# The lifted bytecode of `assert` names AssertionError through this hidden name, so that a
# failing lifted assert is checked only under debug=True, as a source assert is.
ASSERTION_ERROR = "__nu_assertion_error"


def _only_in_kernels(tr, node, what):
    if not getattr(tr.ctx, "kernel", False):
        raise tr.error(node, f"unsupported construct '{what}' (supported in @cuda.jit kernels "
                             f"and the device functions they call)")


def _constant_arg(tr, node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        return node.value
    if isinstance(node, ast.Attribute) or isinstance(node, ast.Name) and node.id not in tr.locals:
        value = static_value(tr, node)  # a global or closure string: `raise E(msg)`
        if isinstance(value, (str, bytes)):
            return value
    v = tr.expr(node)
    if not isinstance(v, Val) or v.const is None:
        raise tr.error(node, "exception arguments must be constants (strings or numbers known "
                             "at compile time)")
    return v.const


def _exception_of(tr, node):
    """(class, args, is_assert) of the exception ``node`` names, builds or holds."""
    call = node if isinstance(node, ast.Call) else None
    target = call.func if call is not None else node
    hidden = isinstance(target, ast.Name) and target.id == ASSERTION_ERROR
    value = AssertionError if hidden else static_value(tr, target)
    if call is not None:
        if call.keywords:
            raise tr.error(node, "exceptions take positional arguments only")
        args = tuple(_constant_arg(tr, a) for a in call.args)
        if not (isinstance(value, type) and issubclass(value, BaseException)):
            raise tr.error(node, f"raise needs an exception class or instance (got "
                                 f"{getattr(value, '__name__', value)!r})")
        return value, args, hidden
    if isinstance(value, BaseException):
        return type(value), tuple(value.args), False
    if isinstance(value, type) and issubclass(value, BaseException):
        return value, (), hidden
    raise tr.error(node, f"raise needs an exception class or instance (got {value!r})")


def static_value(tr, node, what="raise needs an exception class or instance"):
    """The Python object a global name or attribute chain refers to; ``what`` starts the
    message when it is not one."""
    if isinstance(node, ast.Name):
        if node.id in tr.locals:
            raise tr.error(node, f"{what} known at compile time (got the local variable "
                                 f"'{node.id}')")
        code = tr.fn.__code__
        if node.id in code.co_freevars:
            try:
                return tr.fn.__closure__[code.co_freevars.index(node.id)].cell_contents
            except ValueError:
                raise tr.error(node, f"free variable '{node.id}' is not bound yet") from None
        if node.id in tr.fn.__globals__:
            return tr.fn.__globals__[node.id]
        if hasattr(builtins, node.id):
            return getattr(builtins, node.id)
        raise tr.error(node, f"NameError: name '{node.id}' is not defined")
    if isinstance(node, ast.Attribute):
        base = static_value(tr, node.value, what)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise tr.error(node, f"{getattr(base, '__name__', base)!r} has no attribute "
                                 f"'{node.attr}'") from None
    raise tr.error(node, f"{what} known at compile time")


def _code(tr, node, cls, args):
    """The number of this raise site (registered once, when the code is emitted)."""
    if not tr.emitting:
        return 0
    lineno = getattr(node, "lineno", None) or getattr(tr.src.node, "lineno", 0)
    where = (tr.src.name, tr.src.filename, lineno + tr.src.line_offset)
    tr.ctx.exceptions.append((cls, args, where))
    return len(tr.ctx.exceptions)


def raise_stmt(tr, s):
    _only_in_kernels(tr, s, "raise")
    if s.exc is None:
        raise tr.error(s, "a bare 'raise' (re-raise) is not supported: there is no exception "
                          "being handled")
    cls, args, is_assert = _exception_of(tr, s.exc)
    code = _code(tr, s, cls, args)
    if is_assert:  # a lifted assert: checked only under debug=True
        tr.emit(f"nu::kern::assert_failed(nu_kernel_debug, {code});")
    else:
        tr.emit(f"nu::kern::raise_exception(nu_kernel_debug, {code});")


def assert_stmt(tr, s):
    _only_in_kernels(tr, s, "assert")
    args = () if s.msg is None else (_constant_arg(tr, s.msg),)
    test = tr.expr(s.test)
    tr._numeric(s.test, test, "assert condition")
    code = _code(tr, s, AssertionError, args)
    tr.emit(f"if (!{tr.truth(test)}) nu::kern::assert_failed(nu_kernel_debug, {code});")


def raise_at_run_time(tr, node, cls, message) -> str:
    """The C++ statement raising ``cls(message)`` where a run-time check fails: in a
    kernel the thread ends (debug=True reports it); elsewhere (a ufunc cannot raise)
    nothing."""
    if not getattr(tr.ctx, "kernel", False):
        return ""
    code = _code(tr, node, cls, (message,))
    return f"nu::kern::raise_exception(nu_kernel_debug, {code});"


def out_of_range(tr, node) -> str:
    """The C++ statement for a tuple index out of range at run time: Python's IndexError
    in a kernel; outside kernels nothing, and the caller reads a zero."""
    return raise_at_run_time(tr, node, IndexError, "tuple index out of range")


_ZERO = {"b": 0, "i": 0, "f": 0.0, "c": 0j}


def checked_divisor(tr, node, op, kind, code):
    """The divisor ``code`` of ``/``, ``//`` or ``%`` on operands of kind ``kind``: in a
    kernel, checked for zero under debug=True (Numba's Python error model), with Python's
    own message for that operation; unchanged elsewhere."""
    if not getattr(tr.ctx, "kernel", False):
        return code
    try:
        {"/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b}[op](
            _ZERO[kind] + 1, _ZERO[kind])
        message = "division by zero"
    except ZeroDivisionError as exc:
        message = str(exc)
    site = _code(tr, node, ZeroDivisionError, (message,))
    return f"nu::kern::divisor(nu_kernel_zero_division, {site}, {code})"
