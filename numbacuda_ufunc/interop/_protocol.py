"""NumPy's ufunc override protocol (NEP 13) and NumPy's result wrapping for our ufuncs
and gufuncs, off the hot path.

The C++ call path never runs this module for what the engine takes itself: exact NumPy
arrays, NumPy and Python scalars, our DeviceNDArray, ``__cuda_array_interface__`` objects
(CuPy, ...) and Dask arrays. Only an argument that is none of those and has an
``__array_ufunc__`` or an ``__array_wrap__`` (an ndarray subclass, a masked array, xarray,
pandas, pint or astropy objects, a torch CPU tensor...) makes the engine hand the call
here (``_core.OverrideArgument``); the methods (``reduce``, ``accumulate``...) check the
same in Python, after a ``type(a) is np.ndarray`` test. Then NumPy's rules apply:

1. **Overrides** (NEP 13): every input, ``out=`` and ``where=`` whose type defines an
   ``__array_ufunc__`` other than ndarray's, subclasses before their superclasses, then
   left to right, is asked ``type(x).__array_ufunc__(x, ufunc, method, *inputs, **kwargs)``
   with our ufunc object as ``ufunc``; the first answer that is not ``NotImplemented`` is
   the result. ``__array_ufunc__ = None`` refuses (TypeError), as do answers that are all
   ``NotImplemented`` (TypeError in NumPy's words, naming the types).
2. **Wrapping**: with no override, ndarray subclasses and other array-likes (a torch CPU
   tensor) are computed as NumPy arrays and the result goes through ``__array_wrap__`` of
   the input NumPy would choose (highest ``__array_priority__``; a subclass beats
   ndarray), with NumPy's context: ``(ufunc, args, i)`` for calls, ``None`` for methods
   (``outer`` is a call on reshaped inputs, as in NumPy). Masked arrays take this route
   (np.ma's ``__array_wrap__`` propagates the mask).
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

from .. import _core

__all__ = ["call", "method", "foreign", "outs", "applies", "dask_call_deferred", "NOT_DEFERRED"]

_NDARRAY_UFUNC = np.ndarray.__array_ufunc__
# NumPy never looks for overrides on these (nor on exact ndarrays): they are not containers.
_BASIC = frozenset({bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset,
                    slice, type(None), type(Ellipsis)})
_ABSENT = object()
_SCALAR_PRIORITY = -1000000.0  # NumPy's NPY_SCALAR_PRIORITY


def _array_ufunc(x):
    """``type(x).__array_ufunc__`` when it is not ndarray's (``None`` included), else
    _ABSENT; looked up on the type, as NumPy does."""
    t = type(x)
    if t is np.ndarray or t in _BASIC:
        return _ABSENT
    m = getattr(t, "__array_ufunc__", _ABSENT)
    return _ABSENT if m is _NDARRAY_UFUNC else m


def _is_dask(x) -> bool:
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(x, mod.Array)


def _engine_takes(x) -> bool:
    """Whether the engine takes ``x`` as it is (the C++ classification, in Python)."""
    t = type(x)
    if t is np.ndarray or t in _BASIC or isinstance(x, (np.generic, _core.DeviceNDArray)):
        return True
    if hasattr(x, "__cuda_array_interface__"):  # per object: a CPU torch tensor has none
        return True
    return _is_dask(x)


def _on_device_or_dask(x) -> bool:
    return isinstance(x, _core.DeviceNDArray) or _is_dask(x) or (
        not isinstance(x, np.ndarray) and hasattr(x, "__cuda_array_interface__"))


def foreign(objs) -> bool:
    """Whether any of ``objs`` is an argument the engine hands to this module: not one it
    takes, and with an ``__array_ufunc__`` or ``__array_wrap__`` (or an ndarray subclass)."""
    for x in objs:
        if _engine_takes(x):
            continue
        if isinstance(x, np.ndarray) or _array_ufunc(x) is not _ABSENT or \
                hasattr(x, "__array_wrap__"):
            return True
    return False


def _overrides(objs):
    """(object, its __array_ufunc__) to try, in NumPy's order: one per type, a subclass
    before its superclasses, otherwise left to right. ``__array_ufunc__ = None`` raises."""
    found = []
    for x in objs:
        m = _array_ufunc(x)
        if m is _ABSENT:
            continue
        t = type(x)
        if any(type(o) is t for o, _ in found):
            continue
        if m is None:
            raise TypeError(f"operand '{t.__name__}' does not support ufuncs "
                            f"(__array_ufunc__=None)")
        for i, (o, _) in enumerate(found):
            if issubclass(t, type(o)):
                found.insert(i, (x, m))
                break
        else:
            found.append((x, m))
    return found


def _defer(uf, name, inputs, kwargs, found):
    for obj, m in found:
        result = m(obj, uf, name, *inputs, **kwargs)
        if result is not NotImplemented:
            return result
    shown = [repr(x) for x in inputs] + [f"{k}={v!r}" for k, v in kwargs.items()]
    types = ", ".join(f"'{type(x).__name__}'" for x in (*inputs, *kwargs.get("out", ())))
    raise TypeError(f"operand type(s) all returned NotImplemented from __array_ufunc__("
                    f"{uf!r}, {name!r}, {', '.join(shown)}): {types}")


def _plain(x):
    """``x`` as the engine takes it: array-likes it does not take become NumPy arrays
    (an ndarray subclass a base-class view of the same memory)."""
    return x if _engine_takes(x) else np.asarray(x)


def _find_wrap(inputs):
    """NumPy's choice of ``__array_wrap__`` among the inputs: the highest
    ``__array_priority__``, a subclass's (priority 0) before plain arrays'; None when the
    result stays as it is."""
    wrap, priority = None, None
    for x in inputs:
        t = type(x)
        if t is np.ndarray:
            if priority is None or priority < 0.0:
                wrap, priority = None, 0.0
            continue
        if t in _BASIC or isinstance(x, np.generic):
            if priority is None or priority < _SCALAR_PRIORITY:
                wrap, priority = None, _SCALAR_PRIORITY
            continue
        if _engine_takes(x):
            continue  # device and Dask arrays: the engine returns their own kind
        w = getattr(x, "__array_wrap__", None)
        if w is None:
            continue
        p = float(getattr(x, "__array_priority__", 0.0))
        if priority is None or priority < p or (p == 0.0 and wrap is None):
            wrap, priority = w, p
    return wrap


def _apply_wrap(wrap, result, context, return_scalar):
    """A new host result through ``wrap`` (others are returned as they are)."""
    if wrap is None or not isinstance(result, (np.ndarray, np.generic)):
        return result
    return _call_wrap(wrap, np.asarray(result), context, return_scalar)


def _wrapped_outputs(uf, args, out):
    """What a call returns for the outputs it was given: each ndarray subclass through its
    own ``__array_wrap__`` (NumPy's way: np.ma sets the output's mask there), the others
    as they are."""
    done = []
    for k, o in enumerate(out):
        wrap = getattr(o, "__array_wrap__", None) if isinstance(o, np.ndarray) and \
            type(o) is not np.ndarray else None
        done.append(o if wrap is None else _call_wrap(wrap, o, (uf, tuple(args), k), False))
    return done[0] if len(done) == 1 else tuple(done)


def _call_wrap(wrap, arr, context, return_scalar):
    """``wrap(arr, context, return_scalar)``, NumPy's call; an ``__array_wrap__`` that
    takes fewer arguments is called with fewer, with NumPy's DeprecationWarning."""
    try:
        return wrap(arr, context, return_scalar)
    except TypeError:
        pass
    try:
        wrapped = wrap(arr, context)
    except TypeError:
        wrapped = wrap(arr)
    warnings.warn("__array_wrap__ must accept context and return_scalar arguments "
                  "(positionally) in the future. (Deprecated NumPy 2.0)", DeprecationWarning,
                  stacklevel=4)
    return wrapped


def _normalize_out(out):
    """NumPy's form of ``out=`` for ``__array_ufunc__``: a tuple, absent when None."""
    if out is None:
        return ()
    out = out if isinstance(out, tuple) else (out,)
    return () if all(o is None for o in out) else out


def call(uf, args, kwargs):
    """``uf(*args, **kwargs)`` (a ufunc or gufunc call) with an argument the engine does not
    take: NEP 13, else the call on NumPy arrays and NumPy's wrapping of the results."""
    nin, nout = uf.nin, uf.nout
    kwargs = dict(kwargs)
    inputs = tuple(args[:nin])
    if len(args) > nin:  # positional outputs, as NumPy passes them: out=(...)
        if kwargs.get("out") is not None:
            # The engine's own message for this (the call below raises it).
            return uf(*(_plain(x) for x in args), **kwargs)
        kwargs["out"] = tuple(args[nin:])
    out = _normalize_out(kwargs.pop("out", None))
    if out:
        kwargs["out"] = out
    where = kwargs.get("where", True)
    found = _overrides((*inputs, *out, where))
    if found:
        return _defer(uf, "__call__", inputs, kwargs, found)
    plain_kwargs = dict(kwargs)
    if "where" in kwargs:
        plain_kwargs["where"] = _plain(where)
    if out:
        plain_out = tuple(None if o is None else _plain(o) for o in out)
        plain_kwargs["out"] = plain_out if nout > 1 else plain_out[0]
    result = uf(*(_plain(x) for x in inputs), **plain_kwargs)
    if out:
        return _wrapped_outputs(uf, args if len(args) > nin else (*inputs, *out), out)
    wrap = _find_wrap(inputs)
    if wrap is None:
        return result
    context = (uf, tuple(args), 0)
    if nout == 1:
        return _apply_wrap(wrap, result, context, np.ndim(result) == 0)
    return tuple(_apply_wrap(wrap, r, (uf, tuple(args), k), np.ndim(r) == 0)
                 for k, r in enumerate(result))


def method(uf, name, inputs, kwargs):
    """``uf.<name>(*inputs, **kwargs)`` (reduce, accumulate, reduceat, outer, at) with an
    argument the engine does not take (or a Dask array where the method has no lazy form):
    NEP 13, else the method on NumPy arrays and NumPy's wrapping (context None)."""
    kwargs = dict(kwargs)
    out = _normalize_out(kwargs.pop("out", None))
    if out:
        kwargs["out"] = out
    found = _overrides((*inputs, *out, kwargs.get("where", True)))
    if found:
        return _defer(uf, name, inputs, kwargs, found)
    if name == "outer":
        # NumPy's outer: the inputs as arrays of their own class, the first with trailing
        # size-1 dimensions, then a call (whose wrapping keeps subclasses and masks).
        a, b = (x if _on_device_or_dask(x) else np.asanyarray(x) for x in inputs)
        shape = tuple(a.shape) + (1,) * b.ndim
        return uf(a.reshape(shape) if isinstance(a, np.ndarray) else a.reshape(*shape), b,
                  **kwargs)
    plain = tuple(_plain(x) for x in inputs)
    if name in ("at", "reduceat"):
        plain = (plain[0], inputs[1], *plain[2:])  # the indices are not an operand
    plain_kwargs = dict(kwargs)
    if "where" in kwargs:
        plain_kwargs["where"] = _plain(kwargs["where"])
    if out:
        plain_kwargs["out"] = _plain(out[0])  # the same memory
    result = getattr(uf, name)(*plain, **plain_kwargs)
    if out:
        return out[0]  # as NumPy's methods return it (no __array_wrap__)
    if name == "at":
        return result
    wrap = _find_wrap(inputs[:1])
    return _apply_wrap(wrap, result, None, np.ndim(result) == 0)


def outs(out) -> tuple:
    """``out=`` as a tuple of the objects given (NumPy's ``out=(array,)`` form too)."""
    return out if isinstance(out, tuple) else (out,)


def applies(args, kwargs) -> bool:
    """Whether a call with these arguments (and ``out=``, ``where=``) goes through this
    module (see ``foreign``)."""
    return foreign((*args, *outs(kwargs.get("out")), kwargs.get("where", True)))


def dask_call_deferred(uf, args, kwargs):
    """A call the engine sent to its Dask path (a Dask array among the arguments): when
    another argument is one NumPy's protocol concerns (xarray or pandas around the Dask
    array, say), the protocol decides first, as in NumPy, where Dask's ``__array_ufunc__``
    gives way to such objects. NOT_DEFERRED when the Dask path goes on."""
    if not applies(args, kwargs):
        return NOT_DEFERRED
    return call(uf, args, kwargs)


NOT_DEFERRED = object()
