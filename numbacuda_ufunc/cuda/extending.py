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
and has no LLVM. Those names exist and their registrations are accepted, so a module that
makes them at import time still loads; using what they register (calling an intrinsic or
a function typed by ``type_callable``, making a data model) raises NotImplementedError.
"""

from __future__ import annotations

import inspect

from ..compiler import _overloads
from ..types import register_struct_model, wrap_struct_attribute

__all__ = ["overload", "overload_method", "overload_attribute", "register_jitable",
           "intrinsic", "lower_builtin", "lower_cast", "lower_getattr", "lower_setattr",
           "lower_getattr_generic", "type_callable", "typeof_impl", "register_model",
           "models", "core_models", "make_attribute_wrapper", "box", "unbox", "NativeValue",
           "infer", "infer_global", "infer_getattr", "make_function_type", "lower",
           "lower_attr", "lower_constant", "Registry", "registry"]


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
    return _member_overload(api, typ, attr, target, prefer_literal, "method",
                            _overloads.add_method)


def overload_attribute(typ, attr, target="generic", **kwargs):
    """``@overload_attribute(types.Array, 'name')``: ``x.name`` for x of that type class is
    the value of the implementation the typing function returns for the type of x."""
    return _member_overload("overload_attribute()", typ, attr, target, False, "attribute",
                            _overloads.add_attribute)


def _member_overload(api, typ, attr, target, prefer_literal, what, add):
    """The decorator of a method or attribute overload: ``add(type class, name, template)``
    registers it for ``attr`` of ``typ``."""
    tgt = _overloads.target_of(target, api)
    cls = _type_class(api, typ)
    if not isinstance(attr, str) or not attr.isidentifier():
        raise TypeError(f"{api}: the {what} name must be an identifier (got {attr!r})")

    def decorate(typing_fn):
        add(cls, attr, _overloads.Template(_typing_function(api, typing_fn), tgt,
                                           prefer_literal, f"{what} '{cls.__name__}.{attr}'"))
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
# Numba's low-level API: LLVM IR generation, which this package does not have. The
# registrations are accepted (a library that makes them at import time still imports);
# using what they register raises NotImplementedError: calling an @intrinsic or a function
# typed with type_callable / lower_builtin, in a kernel or in Python, or making a data model.
# --------------------------------------------------------------------------------------

_WHY = ("Numba's low-level extension API generates LLVM IR, and numbacuda_ufunc translates "
        "Python to CUDA C++ without LLVM; use @overload / @overload_method / "
        "@overload_attribute / register_jitable, or cuda.declare_device with a CUDA C++ file "
        "for code written by hand")


def _refuse(what):
    raise NotImplementedError(f"{what}: {_WHY}")


def _registration(name, marks_first=False):
    """``@name(*args)``: accepted and recorded, the decorated object returned unchanged.
    ``marks_first``: the first argument (a function) becomes LLVM-only for the translator."""
    def register(*args, **kwargs):
        if marks_first and args:
            _overloads.mark_llvm_only(args[0], name)

        def decorate(obj):
            return obj
        return decorate
    register.__name__ = register.__qualname__ = name
    return register


class _Intrinsic:
    """What ``@intrinsic`` makes: calling it, in a kernel or in Python, raises
    NotImplementedError (its code generator writes LLVM IR)."""

    def __init__(self, fn):
        self._defn = fn
        self.__name__ = getattr(fn, "__name__", "intrinsic")
        self.__doc__ = getattr(fn, "__doc__", None)
        _overloads.mark_llvm_only(self, "intrinsic")

    def __call__(self, *args, **kwargs):
        _refuse(f"@intrinsic '{self.__name__}'")


def intrinsic(*args, **kwargs):
    """``@intrinsic`` / ``@intrinsic(prefer_literal=...)``: see :class:`_Intrinsic`."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _Intrinsic(args[0])
    return _Intrinsic


def make_attribute_wrapper(typeclass, struct_attr, python_attr):
    """``x.python_attr`` reads (and writes) member ``struct_attr`` of a type with a
    registered StructModel (its members are also read by their own names)."""
    wrap_struct_attribute(typeclass, struct_attr, python_attr)


class _Model:
    """A data model (``models.StructModel``...): subclasses may be declared (and registered
    with ``register_model``); making one raises NotImplementedError."""

    def __init__(self, *args, **kwargs):
        _refuse(f"data model {type(self).__name__}")


class StructModel(_Model):
    """``models.StructModel``: a user type held as a struct of its ``members`` (a list of
    ``(name, type)`` pairs of scalar types). Registered with ``register_model(MyType)``,
    the type is an array dtype (``my_type[::1]``, ``cuda.local.array(n, dtype=my_type)``)
    whose elements are records of those fields (read as ``a[i].x``, copied whole). Making a
    value of the type in a kernel needs its constructor's lowering (LLVM): not supported."""

    def __init__(self, dmm, fe_type, members):
        self._nu_members = list(members)


class _Models:
    """``models`` / ``core_models``: ``StructModel``, and every other attribute a
    data-model base class that cannot be made here."""

    def __init__(self):
        self._made = {"StructModel": StructModel}

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr not in self._made:  # one class per name: isinstance and registries agree
            self._made[attr] = type(attr, (_Model,), {"__doc__": f"models.{attr}: see _Model"})
        return self._made[attr]


def register_model(type_class):
    """``@register_model(MyType)`` on a data model class: a ``StructModel`` makes MyType's
    instances usable as array dtypes (see :class:`StructModel`); other models are
    accepted and have no effect."""
    def decorate(model_class):
        if isinstance(model_class, type) and issubclass(model_class, StructModel):
            register_struct_model(type_class, model_class)
        return model_class
    return decorate


class _TypeofImpl:
    """``typeof_impl``: ``@typeof_impl.register(cls)`` is accepted (no effect here)."""

    def register(self, *args, **kwargs):
        return _registration("typeof_impl.register")(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        _refuse("typeof_impl()")


class _NativeValue:
    def __init__(self, *args, **kwargs):
        _refuse("NativeValue")


lower_builtin = _registration("lower_builtin", marks_first=True)
type_callable = _registration("type_callable", marks_first=True)
lower_cast = _registration("lower_cast")
lower_getattr = _registration("lower_getattr")
lower_getattr_generic = _registration("lower_getattr_generic")
lower_setattr = _registration("lower_setattr")
box = _registration("box")
unbox = _registration("unbox")
infer = _registration("infer")
infer_global = _registration("infer_global", marks_first=True)
infer_getattr = _registration("infer_getattr")
lower_constant = _registration("lower_constant")
lower = lower_builtin  # numba.cuda.cudaimpl's names for the same registrations
lower_attr = lower_getattr
typeof_impl = _TypeofImpl()
models = core_models = _Models()
NativeValue = _NativeValue


class Registry:
    """Numba's ``imputils.Registry``: its registrations are accepted as
    :func:`lower_builtin`'s are."""

    def __init__(self, name="unspecified"):
        self.name = name
        self.lower = lower_builtin
        self.lower_cast = lower_cast
        self.lower_getattr = lower_getattr
        self.lower_getattr_generic = lower_getattr_generic
        self.lower_setattr = lower_setattr
        self.lower_constant = lower_constant


registry = Registry("cudaimpl")


def make_function_type(*args, **kwargs):
    _refuse("make_function_type()")
