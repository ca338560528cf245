"""``reduce`` / ``Reduce``: Numba's ``cuda.reduce`` with any Python binary operator.

``@reduce`` on ``def f(a, b)`` (or ``reduce(lambda a, b: a + b)``) gives a reducer:
``r(arr, size=None, res=None, init=0, stream=0, axis=None)``. The operator is translated
to CUDA C++ once per dtype and folded by warp and block reductions in element order,
so any associative operator works, commutative or not. Arrays may be NumPy, device
arrays, ``__cuda_array_interface__`` objects or CuPy arrays, of any numeric dtype and
any layout (read in place).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _core
from ..compiler import translate
from ..interop import _dask
from ..interop._pickling import function_ref, global_name
from ..toolchain import _sass
from ..types import from_dtype
from ._help import reduce_doc

__all__ = ["Reduce", "reduce"]


class Reduce:
    """A reduction by the binary function ``functor`` (Numba's ``cuda.Reduce``).

    ``r(arr, size=None, res=None, init=0, stream=0, axis=None)``:

    * ``init`` is folded in exactly once: ``functor(init, fold(arr))``; an empty input
      gives ``init``.
    * ``size`` reduces the first ``size`` elements (1-d or C-contiguous input).
    * ``res``, a device array of the input's dtype, receives the result in its first
      element on the device and the call returns None (nothing waits for the GPU).
      Otherwise ``axis=None`` returns a NumPy scalar of the input's dtype.
    * ``axis`` (an int or a tuple, beyond Numba) reduces those axes and returns an array:
      a device array (CuPy for CuPy input) for device input, else a NumPy array.
    """

    def __init__(self, functor: Callable[[Any, Any], Any]) -> None:
        name = getattr(functor, "__name__", None)
        api = f"reduce({name!r})" if name and name != "<lambda>" else "reduce()"
        try:
            params = list(inspect.signature(functor).parameters.values())
        except (TypeError, ValueError):
            raise TypeError(f"{api}: expected a Python function of two arguments "
                            f"(got {functor!r})") from None
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and
                    p.default is p.empty for p in params)
        if len(params) != 2 or not plain:
            raise TypeError(f"{api}: the operator must take exactly two positional arguments "
                            f"(got {name or 'the function'}"
                            f"({', '.join(str(p) for p in params)}))")
        self._functor = functor
        self._api = name if name and name.isidentifier() else "reduce"  # "sum_reduce(): ..."
        self._engine = _core.Reducer(name if name and name.isidentifier() else "lambda")
        owner = weakref.ref(self)  # no cycle through the engine: freed by reference count
        self._engine._resolve = lambda dtype: owner()._resolve(dtype)
        self.__name__ = name or "reduce"
        self.__qualname__ = getattr(functor, "__qualname__", self.__name__)
        self.__module__ = getattr(functor, "__module__", None)
        self.__doc__ = reduce_doc(self.__name__, functor)  # help(): the call and its keywords
        self.__wrapped__ = functor

    @property
    def py_func(self):
        return self._functor

    def _resolve(self, dtype) -> int:
        """The engine calls this for a dtype it has no loop for: translate T(T, T)."""
        t = from_dtype(np.dtype(dtype))
        tf = translate(self._functor, (t, t), t)
        return self._engine._add_loop(np.dtype(dtype).str, tf.name, tf.source)

    def __call__(self, arr: Any, size: int | None = None, res: Any = None, init: Any = 0,
                 stream: Any = 0, axis: int | tuple[int, ...] | None = None) -> Any:
        try:
            return self._engine._run(arr, axis, size, res, None, init, None, False, stream,
                                     True, self._api)
        except _core.DaskArgument:
            return _dask.reducer_call(self, arr, size, res, init, stream, axis)

    def __reduce__(self):
        return global_name(self) or (Reduce, (function_ref(self._functor),))

    def inspect_cuda(self, dtype) -> str:
        """The CUDA C++ translation unit reducing arrays of ``dtype`` (NVRTC's input)."""
        dt = np.dtype(dtype)
        index = self._engine._find_loop(dt)
        if index < 0:
            index = self._resolve(dt)
        return self._engine._source(index, dt, dt)

    def inspect_sass(self, dtype) -> str:
        """SASS of the kernels reducing arrays of ``dtype`` (units, final pass, columns),
        from the CUBIN NVRTC builds for the current device (sm_90 with no device)."""

        return _sass.sources_sass((self.inspect_cuda(dtype),))

    def __repr__(self):
        return f"<numbacuda_ufunc.Reduce {self.__name__!r} types={self._engine.types}>"


def reduce(functor: Callable[[Any, Any], Any]) -> Reduce:
    """Make a reduction of a binary Python function (Numba's ``cuda.reduce``).

    Parameters
    ----------
    functor : callable
        ``f(a, b)``, associative (elements are combined in order, so it need not be
        commutative); a function or a lambda.

    Returns
    -------
    Reduce
        Call it as ``r(arr, size=None, res=None, init=0, stream=0, axis=None)``; ``help()``
        of it describes each argument.

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import reduce
    >>> @reduce
    ... def biggest(a, b):
    ...     return a if a > b else b
    >>> float(biggest(np.array([3.0, 7.0, 5.0])))
    7.0
    """
    return Reduce(functor)
