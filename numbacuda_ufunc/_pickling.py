"""Pickling of ufuncs, gufuncs, reducers and kernels, as Numba pickles its dispatchers.

An object its module holds under its own name is pickled by that name. Any other one
(a local or ``exec``-made function, a lambda) travels as its Python function plus its
options and is rebuilt, then compiled again on first use, on the other side. A function
that pickle cannot find by name goes by value through cloudpickle, as in Numba.
"""

from __future__ import annotations

import pickle
import sys

__all__ = ["function_ref", "global_name"]


def global_name(obj):
    """``obj``'s qualified name when its module holds it under that name (pickle then
    stores a reference), else None."""
    target = sys.modules.get(getattr(obj, "__module__", None) or "")
    for part in getattr(obj, "__qualname__", "<").split("."):
        target = getattr(target, part, None)
    return obj.__qualname__ if target is obj else None


class _ByValue:
    """Pickles a function by value: unpickling it gives back the function itself."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __reduce__(self):
        try:
            import cloudpickle
        except ImportError:
            raise pickle.PicklingError(
                f"cannot pickle the function {self.fn.__qualname__!r} by value: its module "
                f"does not hold it under its name, and pickling it needs cloudpickle "
                f"(pip install cloudpickle)") from None
        return pickle.loads, (cloudpickle.dumps(self.fn),)


def function_ref(fn):
    """``fn`` itself when pickle can find it by name, else a stand-in pickling it by value."""
    return fn if global_name(fn) else _ByValue(fn)
