"""Pickling of ufuncs, gufuncs, reducers and kernels, as Numba pickles its dispatchers.

An object its module holds under its own name is pickled by that name, unless that module
is ``__main__`` (a script run directly, a notebook, an IPython session): another process
(a ``multiprocessing`` child started by spawn, a dask.distributed worker) has a
``__main__`` of its own that lacks the object, so such objects go by value, as cloudpickle
pickles the functions of ``__main__``. Any other one (a local or ``exec``-made function, a
lambda) travels as its Python function plus its options and is rebuilt, then compiled
again on first use, on the other side. A function that pickle cannot find by name goes by
value through cloudpickle, as in Numba.
"""

from __future__ import annotations

import pickle
import sys
import threading

__all__ = ["function_ref", "global_name"]

# Depth of _ByValue dumps running on this thread. Inside one, the pickler is cloudpickle's:
# function_ref then hands it the function itself, which it pickles by value and memoizes,
# so a function reaching itself through our objects (a recursive device function, a
# kernel calling a device function that calls it back) is pickled once instead of
# starting another nested dump for ever.
_nested = threading.local()


def global_name(obj):
    """``obj``'s qualified name when its module holds it under that name and is not
    ``__main__`` (pickle then stores a reference), else None."""
    module = getattr(obj, "__module__", None) or ""
    if module == "__main__":
        return None
    target = sys.modules.get(module)
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
        depth = getattr(_nested, "depth", 0)
        _nested.depth = depth + 1
        try:
            data = cloudpickle.dumps(self.fn)
        finally:
            _nested.depth = depth
        return pickle.loads, (data,)


def function_ref(fn):
    """``fn`` itself when pickle can find it by name (or cloudpickle is pickling it, see
    ``_nested``), else a stand-in pickling it by value."""
    return fn if global_name(fn) or getattr(_nested, "depth", 0) else _ByValue(fn)
