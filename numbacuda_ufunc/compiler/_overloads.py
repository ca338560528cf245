"""``@overload``, ``@overload_method`` and ``@overload_attribute`` in the translator.

The decorators (:mod:`numbacuda_ufunc.cuda.extending`) register *typing functions* here.
When translated code calls an overloaded function (or method, or reads an attribute),
the translator gives each applicable typing function the arguments' types, as Numba does
(``types.int32``, ``types.float64[:]``, ``IntegerLiteral(3)`` for a constant...); the
first one that returns an implementation wins, and that Python function is translated as
a device function. Implementations are memoized per typing function and argument types,
so a call site typed the same way reuses one device function.
"""

from __future__ import annotations

import sys
import types as pytypes

from ..types import BooleanLiteral, IntegerLiteral, boolean, complex128, float64, int64, typeof
from ._types import BOTTOM, Bottom, TupleType, Weak, strong
from ._values import LiteralRef, Ref, Val

__all__ = ["OverloadRef", "Template", "add_attribute", "add_function", "add_method",
           "call", "is_overloaded", "run_in_python", "try_attribute", "try_method"]

_TARGETS = {"cuda": "cuda", "gpu": "cuda", "generic": "generic", "cpu": "cpu",
            "parallel": "cpu", "npyufunc": "cpu"}


class Template:
    """One typing function and its options."""

    def __init__(self, typing_fn, target, prefer_literal, what):
        self.typing_fn = typing_fn
        self.target = target
        self.prefer_literal = prefer_literal
        self.what = what  # "function 'foo'", "method 'Array.foo'"... for messages
        self.impls = {}  # argument types -> implementation (or None)

    def implementation(self, tr, node, args, kwargs):
        """The typing function's answer for these types (memoized)."""
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self.impls:
            return self.impls[key]
        config = _launch_config()
        was_marked = config is not None and config._kernel_launch_config_sensitive
        if config is not None:
            config._kernel_launch_config_sensitive = False
        try:
            impl = self.typing_fn(*args, **kwargs)
        except Exception as exc:  # the typing function's own error, at the call site
            raise tr.error(node, f"{self.what}: the typing function "
                                 f"'{self.typing_fn.__name__}' raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        finally:
            marked = config is not None and config._kernel_launch_config_sensitive
            if config is not None:
                config._kernel_launch_config_sensitive = was_marked or marked
        if marked:
            key = None  # its answer depends on the launch configuration: ask again next time
        if impl is not None:
            py = getattr(impl, "py_func", impl)  # a cuda.jit device function is fine too
            if not isinstance(py, pytypes.FunctionType):
                raise tr.error(node, f"{self.what}: the typing function "
                                     f"'{self.typing_fn.__name__}' must return a Python "
                                     f"function (the implementation) or None (got "
                                     f"{type(impl).__name__})")
            impl = py
        if key is not None:
            self.impls[key] = impl
        return impl


def _launch_config():
    """The launch configuration a kernel launch is compiling for (cuda.launchconfig), or
    None. Looked up without importing the kernel layer, which the translator never does:
    when that module is not loaded, no launch is compiling."""
    module = sys.modules.get("numbacuda_ufunc.kernels.launchconfig")
    return module.current_launch_config() if module is not None else None


_FUNCTIONS: dict = {}  # overloaded function -> [Template]
_METHODS: dict = {}  # method name -> [(type class, Template)]
_ATTRIBUTES: dict = {}  # attribute name -> [(type class, Template)]


def target_of(target, api):
    t = _TARGETS.get(target.lower()) if isinstance(target, str) else None
    if t is None:
        raise ValueError(f"{api}: target must be 'cuda', 'generic' or 'cpu' (got {target!r})")
    return t


def add_function(fn, template):
    try:
        _FUNCTIONS.setdefault(fn, []).append(template)
    except TypeError:
        raise TypeError(f"overload(): the function to overload must be hashable (got "
                        f"{fn!r})") from None


def add_method(type_class, name, template):
    _METHODS.setdefault(name, []).append((type_class, template))


def add_attribute(type_class, name, template):
    _ATTRIBUTES.setdefault(name, []).append((type_class, template))


_LLVM_ONLY: dict = {}  # id -> (object, API): typed or lowered with Numba's LLVM-level API


def mark_llvm_only(obj, api):
    _LLVM_ONLY[id(obj)] = (obj, api)


def llvm_only_api(value):
    """The low-level API ``value`` was registered with (``'intrinsic'``...), or None."""
    hit = _LLVM_ONLY.get(id(value))
    return hit[1] if hit is not None and hit[0] is value else None


def is_overloaded(value) -> bool:
    try:
        return value in _FUNCTIONS
    except TypeError:
        return False


class OverloadRef(Ref):
    """A function with ``@overload`` implementations, called from translated code."""

    def __init__(self, fn):
        self.fn = fn
        self.name = f"overloaded function {getattr(fn, '__name__', fn)}"

    def _key(self):
        return self.fn

    def token(self) -> str:
        return f"{getattr(self.fn, '__module__', '')}.{getattr(self.fn, '__qualname__', '')}"


def numba_type(v: Val, literal: bool):
    """The type a typing function sees for value ``v``: Numba's (a Python int is int64, or
    ``IntegerLiteral`` when taken literally)."""
    t = v.type
    if isinstance(t, LiteralRef):
        if literal and isinstance(t.value, int):
            return IntegerLiteral(t.value)
        return int64 if isinstance(t.value, int) else TupleType(int64 for _ in t.value)
    if isinstance(t, Weak):
        if literal and t.kind == "i" and type(v.const) is int:
            return IntegerLiteral(v.const)
        if literal and t.kind == "b" and type(v.const) is bool:
            return BooleanLiteral(v.const)
        return {"b": boolean, "i": int64, "f": float64, "c": complex128}[t.kind]
    if isinstance(t, TupleType):
        return strong(t)
    return t


def _has_literal(vals) -> bool:
    return any(isinstance(v.type, LiteralRef) or (
        isinstance(v.type, Weak) and type(v.const) in (int, bool)) for v in vals)


def _resolve(tr, node, templates, what, lead, args, kwargs):
    """The first implementation the templates give (cuda ones before generic ones), trying
    argument types without literals first, unless a template prefers literals."""
    ordered = [t for t in templates if t.target == "cuda"] + \
              [t for t in templates if t.target == "generic"]
    vals = list(args) + list(kwargs.values())
    plain = (tuple(lead) + tuple(numba_type(v, False) for v in args),
             {k: numba_type(v, False) for k, v in kwargs.items()})
    tries = [plain]
    if _has_literal(vals):
        lit = (tuple(lead) + tuple(numba_type(v, True) for v in args),
               {k: numba_type(v, True) for k, v in kwargs.items()})
        tries.append(lit)
    for template in ordered:
        for a, kw in (reversed(tries) if template.prefer_literal else tries):
            impl = template.implementation(tr, node, a, kw)
            if impl is not None:
                return impl
    shown = ", ".join([str(t) for t in plain[0]] + [f"{k}={t}" for k, t in plain[1].items()])
    if not ordered:
        raise tr.error(node, f"{what} has overloads only for other targets (none for "
                             f"'cuda' or 'generic')")
    raise tr.error(node, f"No implementation of {what} found for signature ({shown}): "
                         f"every @overload typing function returned None")


def call(tr, node, ref: OverloadRef, args, kwargs) -> Val:
    """A call of an overloaded function: resolve, then translate the implementation."""
    name = getattr(ref.fn, "__name__", repr(ref.fn))
    impl = _resolve(tr, node, _FUNCTIONS[ref.fn], f"function '{name}'", (), args, kwargs)
    return tr.call_function(node, impl, list(args), dict(kwargs))


def _applicable(registry, name, base):
    if isinstance(base.type, (Ref, Bottom)):
        return []
    self_type = numba_type(base, False)
    return [t for cls, t in registry.get(name, ()) if isinstance(self_type, cls)]


def try_method(tr, node):
    """``x.name(...)`` where an ``@overload_method`` applies to x's type: its value, else
    None (the built-in methods then apply)."""
    attr = node.func
    if attr.attr not in _METHODS:
        return None
    base = tr.expr(attr.value)
    templates = _applicable(_METHODS, attr.attr, base)
    if not templates:
        return None
    args = [tr.expr(a) for a in node.args]
    kwargs = {k.arg: tr.expr(k.value) for k in node.keywords if k.arg is not None}
    if len(kwargs) != len(node.keywords) or any(type(a).__name__ == "Starred"
                                                  for a in node.args):
        raise tr.error(node, f"method '.{attr.attr}()': *args and **kwargs are not supported "
                             f"in calls of overloaded methods")
    if any(isinstance(v.type, Bottom) for v in [*args, *kwargs.values()]):
        return Val("0", BOTTOM)
    self_type = numba_type(base, False)
    impl = _resolve(tr, node, templates, f"method '{self_type}.{attr.attr}'", (self_type,),
                    args, kwargs)
    return tr.call_function(node, impl, [base, *args], kwargs)


def try_attribute(tr, node, base: Val):
    """``x.name`` where an ``@overload_attribute`` applies to x's type, else None."""
    if node.attr not in _ATTRIBUTES:
        return None
    templates = _applicable(_ATTRIBUTES, node.attr, base)
    if not templates:
        return None
    self_type = numba_type(base, False)
    impl = _resolve(tr, node, templates, f"attribute '{self_type}.{node.attr}'", (self_type,),
                    [], {})
    return tr.call_function(node, impl, [base], {})


# ---- Python execution (numba.njit functions called from Python) ----------------------------

def run_in_python(fn, args, kwargs):
    """Call the Python function ``fn`` with each call it makes of an overloaded function
    (named by a global) running that function's CPU implementation: the first ``'cpu'``,
    then ``'generic'``, typing function to return one for the arguments' types (Numba's
    ``njit`` of such code). The implementations run the same way, so an implementation
    that calls another overloaded function gets its CPU one too."""
    return _with_overloads(fn)(*args, **kwargs)


def _with_overloads(fn):
    g = getattr(fn, "__globals__", None)
    code = getattr(fn, "__code__", None)
    if g is None or code is None:
        return fn
    names = [n for n in code.co_names if n in g and is_overloaded(g[n])]
    if not names:
        return fn  # the function itself: nothing to dispatch
    patched = dict(g)
    for n in names:
        patched[n] = _CpuDispatcher(g[n])
    out = pytypes.FunctionType(code, patched, fn.__name__, fn.__defaults__, fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


class _CpuDispatcher:
    """An overloaded function as Python code running for the CPU calls it."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "overloaded")

    def __call__(self, *args, **kwargs):
        templates = [t for t in _FUNCTIONS[self.fn] if t.target == "cpu"] + \
                    [t for t in _FUNCTIONS[self.fn] if t.target == "generic"]
        try:
            types = tuple(typeof(a) for a in args)
            kwtypes = {k: typeof(v) for k, v in kwargs.items()}
        except TypeError as exc:
            raise TypeError(f"function '{self.__name__}' (overloaded): {exc}") from None
        for t in templates:
            impl = t.typing_fn(*types, **kwtypes)
            if impl is not None:
                return run_in_python(getattr(impl, "py_func", impl), args, kwargs)
        shown = ", ".join([str(x) for x in types] + [f"{k}={x}" for k, x in kwtypes.items()])
        raise TypeError(f"No implementation of function '{self.__name__}' found for "
                        f"signature ({shown}) on the CPU: no 'cpu' or 'generic' @overload "
                        f"typing function returned one")
