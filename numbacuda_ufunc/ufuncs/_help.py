"""What ``help()`` shows for ufuncs, gufuncs and reducers (kernels: kernels/_help.py).

NumPy's ufuncs open their ``__doc__`` with the call signature and document the call's
keywords; ours do the same, with the decorated function's own docstring in between (still
``f.py_func.__doc__``). The texts are numpydoc sections, so Sphinx renders them too.
"""

from __future__ import annotations

import inspect

__all__ = ["gufunc_doc", "reduce_doc", "ufunc_doc"]

_UFUNC_KEYWORDS = """\
out : array, tuple of arrays or None, optional
    Where the result goes (NumPy or device array of any layout; it may alias an input).
    It may also be the last positional argument. Without it the result is allocated where
    the inputs live: a NumPy array for host inputs, a device array if any input is one.
where : array_like of bool, optional
    Elements where it is False are not computed (``out`` keeps them). Broadcasts with the
    inputs.
casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, optional
    NumPy's casting rule for the inputs and ``out`` (default ``'same_kind'``).
order : {'K', 'A', 'C', 'F'}, optional
    Memory layout of a new result (default ``'K'``).
dtype : data-type, optional
    The result's dtype; chooses the loop as NumPy does.
subok : bool, optional
    Accepted, as NumPy's.
signature : str or tuple, optional
    The loop to use: ``"ff->f"``, ``"f4,f4->f4"`` or a tuple of dtypes and None (``sig=``
    is the same).
stream : Stream or int, optional
    The CUDA stream the call runs on (default 0, the default stream)."""

_UFUNC_METHODS = """\
Methods
-------
reduce(a, axis=0, dtype=None, out=None, keepdims=False, initial=<no value>, where=True, stream=0)
    Fold along axes (binary ufuncs); ``initial`` defaults to ``identity``.
accumulate(a, axis=0, dtype=None, out=None, stream=0)
    The running fold along an axis.
reduceat(a, indices, axis=0, dtype=None, out=None, stream=0)
    Folds of the segments that ``indices`` start.
outer(A, B, **keywords)
    The function of every pair of elements, shape ``A.shape + B.shape``.
at(a, indices, b=None, stream=0)
    Unbuffered in-place ``a[indices] = f(a[indices], b)``.
inspect_cuda(), inspect_ptx(cc=(9, 0)), inspect_sass()
    The CUDA C++, PTX and SASS of each loop."""


def _parameter_names(pyfunc, count: int) -> list[str]:
    try:
        names = list(inspect.signature(pyfunc).parameters)
    except (TypeError, ValueError):
        names = []
    return names[:count] if len(names) >= count else [f"x{i + 1}" for i in range(count)]


def _assemble(call: str, summary: str, user_doc: str | None, sections: str) -> str:
    parts = [call, "", summary]
    if user_doc and user_doc.strip():
        parts += ["", inspect.cleandoc(user_doc)]
    parts += ["", sections]
    return "\n".join(parts)


def ufunc_doc(name: str, pyfunc, nin: int, target: str) -> str:
    """``__doc__`` of a :func:`vectorize` ufunc."""
    names = _parameter_names(pyfunc, nin)
    call = (f"{name}({', '.join(names)}, /, out=None, *, where=True, casting='same_kind', "
            f"order='K', dtype=None, subok=True, signature=None, stream=0)")
    summary = (f"A ufunc made by ``vectorize`` (target {target!r}): ``{name}`` applied element "
               "by element with NumPy's broadcasting.")
    params = "\n".join(f"{n} : array_like\n    Input array or scalar: NumPy, device or "
                       "``__cuda_array_interface__`` array, or a Python or NumPy scalar."
                       for n in names)
    sections = ("Parameters\n----------\n" + params + "\n" + _UFUNC_KEYWORDS +
                "\n\nReturns\n-------\nout : ndarray, DeviceNDArray or scalar\n"
                "    Where the inputs live: NumPy for host inputs (a NumPy scalar for a 0-d "
                "result),\n    a DeviceNDArray for device inputs, CuPy for CuPy inputs.\n\n"
                + _UFUNC_METHODS)
    return _assemble(call, summary, pyfunc.__doc__, sections)


def gufunc_doc(name: str, pyfunc, layout: str, nin: int, nout: int, target: str) -> str:
    """``__doc__`` of a :func:`guvectorize` gufunc."""
    names = _parameter_names(pyfunc, nin + nout)
    ins, outs = names[:nin], names[nin:]
    call = (f"{name}({', '.join(ins)}, /, {', '.join(o + '=None' for o in outs)}, *, out=None, "
            "axes=None, axis=None, keepdims=False, casting='same_kind', dtype=None, "
            "signature=None, stream=0)")
    summary = (f"A generalized ufunc made by ``guvectorize`` (target {target!r}), layout "
               f"``{layout}``: ``{name}`` runs once per element of the loop dimensions.")
    params = "\n".join(f"{n} : array_like\n    Input array, its last dimensions the core "
                       "dimensions of the layout." for n in ins)
    params += "\n" + "\n".join(f"{n} : array, optional\n    Output array, passed "
                               "positionally (or with ``out=``); allocated when left out."
                               for n in outs)
    sections = ("Parameters\n----------\n" + params + """
out : array or tuple of arrays, optional
    The outputs, as a keyword.
axes : list of tuples, optional
    NumPy's: the core axes of each operand.
axis : int, optional
    NumPy's: the one core axis every operand shares.
keepdims : bool, optional
    Outputs without core dimensions keep the inputs' core axes as size 1.
casting, dtype, signature
    Choose the loop as NumPy's type resolution does (``sig=`` is ``signature=``).
stream : Stream or int, optional
    The CUDA stream the call runs on (default 0).

Returns
-------
out : array or tuple of arrays
    The outputs, where the inputs live (a tuple when there are several).""")
    return _assemble(call, summary, pyfunc.__doc__, sections)


def reduce_doc(name: str, pyfunc) -> str:
    """``__doc__`` of a :func:`reduce` reducer."""
    call = f"{name}(arr, size=None, res=None, init=0, stream=0, axis=None)"
    summary = (f"A reduction made by ``reduce``: folds an array with the binary function "
               f"``{name}``, which must be associative.")
    sections = """Parameters
----------
arr : array_like
    NumPy, device, ``__cuda_array_interface__`` or CuPy array of any layout.
size : int, optional
    Reduce the first ``size`` elements only.
res : device array, optional
    Where the result goes (its first element); the call then returns None.
init : scalar, optional
    Folded in once: ``f(init, fold(arr))``; the result of an empty input (default 0).
stream : Stream or int, optional
    The CUDA stream the call runs on (default 0).
axis : int or tuple of int, optional
    Reduce over these axes and return an array (default: every element, a scalar).

Returns
-------
result : scalar, array or None
    A NumPy scalar of the input's dtype for a full reduction; an array (on the device for
    device input) with ``axis``; None with ``res``."""
    return _assemble(call, summary, getattr(pyfunc, "__doc__", None), sections)
