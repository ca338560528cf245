"""Numba's high-level extension API (``numba.cuda.extending`` / ``numba.extending``):
give plain Python functions per-type implementations callable from kernels.

``@overload(func)`` registers a *typing function*: called at translation time with the
argument types (``types.int32``, ``types.float64[:]``, ``types.IntegerLiteral(3)``...), it
returns an implementation (a Python function with the same parameters), which is then
translated as a device function, or None when these types are not its to handle.
``@overload_method(TypeClass, name)`` and ``@overload_attribute(TypeClass, name)`` do the
same for ``x.name(...)`` and ``x.name`` when x's type is an instance of ``TypeClass``
(``types.Array``, ``types.Integer``, ``types.Float``...). ``register_jitable`` marks a
function callable both in Python and in kernels.

The low-level API (``intrinsic``, ``lower_builtin``, ``type_callable``, data models,
``make_attribute_wrapper``...) generates LLVM IR in Numba; this package generates CUDA C++
and has no LLVM, so those names exist (a module that imports them still loads) but using
one raises :class:`NotImplementedError`.
"""

from __future__ import annotations

import inspect

from ..compiler import _overloads

__all__ = ["overload", "overload_method", "overload_attribute", "register_jitable",
           "intrinsic", "lower_builtin", "lower_cast", "lower_getattr", "lower_setattr",
           "lower_getattr_generic", "type_callable", "typeof_impl", "register_model",
           "models", "core_models", "make_attribute_wrapper", "box", "unbox", "NativeValue",
           "infer", "infer_global", "infer_getattr", "make_function_type"]


def _check_options(api, inline, prefer_literal, jit_options):
    if not (inline in ("never", "always") or callable(inline)):
        raise ValueError(f"{api}: inline must be 'never', 'always' or a function (got "
                         f"{inline!r})")
    if not isinstance(prefer_literal, bool):
        raise TypeError(f"{api}: prefer_literal must be a bool (got {prefer_literal!r})")
    if jit_options is not None and not isinstance(jit_options, dict):
        raise TypeError(f"{api}: jit_options must be a dict (got {jit_options!r})")


def _typing_function(api, fn):
    if not callable(fn):
        raise TypeError(f"{api}: the decorated typing function must be callable (got {fn!r})")
    return fn


def overload(func, jit_options=None, strict=True, inline="never", prefer_literal=False,
             target="generic", **kwargs):
    """``@overload(func)``: the decorated typing function gives ``func`` implementations
    in kernels and device functions. ``target='cuda'`` or ``'generic'`` (the default)
    apply here, ``'cuda'`` ones first; ``'cpu'`` ones do not. ``inline`` is accepted (the
    C++ compiler decides inlining); ``prefer_literal=True`` offers integer constants as
    ``IntegerLiteral`` types before their plain type."""
    api = "overload()"
    _check_options(api, inline, prefer_literal, jit_options)
    tgt = _overloads.target_of(target, api)
    if not callable(func):
        raise TypeError(f"{api}: func must be the function to overload (got {func!r})")

    def decorate(typing_fn):
        name = getattr(func, "__name__", repr(func))
        _overloads.add_function(func, _overloads.Template(
            _typing_function(api, typing_fn), tgt, prefer_literal, f"function '{name}'"))
        return typing_fn

    return decorate


def _type_class(api, type_class):
    if not isinstance(type_class, type):
        raise TypeError(f"{api}: the first argument must be a type class such as "
                        f"types.Array or types.Integer (got {type_class!r})")
    return type_class


def overload_method(typ, attr, jit_options=None, strict=True, inline="never",
                    prefer_literal=False, target="generic", **kwargs):
    """``@overload_method(types.Array, 'name')``: ``x.name(...)`` for x of that type class
    calls the implementation the typing function returns for ``(type of x, *arg types)``."""
    api = "overload_method()"
    _check_options(api, inline, prefer_literal, jit_options)
    tgt = _overloads.target_of(target, api)
    cls = _type_class(api, typ)
    if not isinstance(attr, str) or not attr.isidentifier():
        raise TypeError(f"{api}: the method name must be an identifier (got {attr!r})")

    def decorate(typing_fn):
        _overloads.add_method(cls, attr, _overloads.Template(
            _typing_function(api, typing_fn), tgt, prefer_literal,
            f"method '{cls.__name__}.{attr}'"))
        return typing_fn

    return decorate


def overload_attribute(typ, attr, target="generic", **kwargs):
    """``@overload_attribute(types.Array, 'name')``: ``x.name`` for x of that type class is
    the value of the implementation the typing function returns for the type of x."""
    api = "overload_attribute()"
    tgt = _overloads.target_of(target, api)
    cls = _type_class(api, typ)
    if not isinstance(attr, str) or not attr.isidentifier():
        raise TypeError(f"{api}: the attribute name must be an identifier (got {attr!r})")

    def decorate(typing_fn):
        _overloads.add_attribute(cls, attr, _overloads.Template(
            _typing_function(api, typing_fn), tgt, False,
            f"attribute '{cls.__name__}.{attr}'"))
        return typing_fn

    return decorate


def register_jitable(*args, **kwargs):
    """``@register_jitable`` (or ``@register_jitable(**options)``): the function stays a
    plain Python function, and kernels and device functions can call it (it is translated
    as a device function, per argument types)."""
    def decorate(fn):
        if not inspect.isfunction(fn):
            raise TypeError(f"register_jitable(): expected a Python function (got {fn!r})")
        fn._nu_jitable = True
        return fn

    if len(args) == 1 and not kwargs and callable(args[0]):
        return decorate(args[0])
    if args:
        raise TypeError(f"register_jitable(): options are keywords only (got {args!r})")
    return decorate


# --------------------------------------------------------------------------------------
# Numba's low-level API: LLVM IR generation, which this package does not have.
# --------------------------------------------------------------------------------------

def _llvm_only(name):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(
            f"numbacuda_ufunc.cuda.extending.{name}: Numba's low-level extension API "
            f"generates LLVM IR, and numbacuda_ufunc translates Python to CUDA C++ without "
            f"LLVM; use @overload / @overload_method / @overload_attribute / "
            f"register_jitable, or cuda.declare_device with a CUDA C++ file for code "
            f"written by hand")
    unsupported.__name__ = name
    unsupported.__qualname__ = name
    return unsupported


def _llvm_only_class(name):
    """A class of Numba's low-level API (``models.StructModel``...): subclassing or
    instantiating it raises NotImplementedError."""
    def refuse(*args, **kwargs):
        _llvm_only(name)()

    return type(name.rpartition(".")[2], (), {
        "__new__": refuse, "__init_subclass__": classmethod(refuse),
        "__doc__": f"{name}: not available (needs LLVM)"})


class _LLVMOnlyNamespace:
    """``models``, ``typeof_impl``...: every attribute use raises NotImplementedError."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _llvm_only_class(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        return _llvm_only(self._name)(*args, **kwargs)

    def __repr__(self):
        return f"<{self._name}: not available (needs LLVM)>"


intrinsic = _llvm_only("intrinsic")
lower_builtin = _llvm_only("lower_builtin")
lower_cast = _llvm_only("lower_cast")
lower_getattr = _llvm_only("lower_getattr")
lower_getattr_generic = _llvm_only("lower_getattr_generic")
lower_setattr = _llvm_only("lower_setattr")
type_callable = _llvm_only("type_callable")
register_model = _llvm_only("register_model")
make_attribute_wrapper = _llvm_only("make_attribute_wrapper")
box = _llvm_only("box")
unbox = _llvm_only("unbox")
infer = _llvm_only("infer")
infer_global = _llvm_only("infer_global")
infer_getattr = _llvm_only("infer_getattr")
make_function_type = _llvm_only("make_function_type")
typeof_impl = _LLVMOnlyNamespace("typeof_impl")
models = _LLVMOnlyNamespace("models")
core_models = models
NativeValue = _LLVMOnlyNamespace("NativeValue")
_Intrinsic = _LLVMOnlyNamespace("_Intrinsic")
