"""Dask arrays in, lazy Dask arrays out: ufuncs, gufuncs and reductions beyond one machine.

The C++ call path never looks for Dask on its hot path: only when an argument is none of
the array types the engine takes does it ask whether it is a ``dask.array.Array`` (without
importing Dask: no Dask array can exist before ``dask.array`` is imported) and hand the
call back here. Each chunk then runs through the ordinary engine, so NumPy chunks are
computed on the host's arrays and CuPy chunks stay on the device.

* ``f(x, ...)`` -> ``dask.array.elemwise``: blockwise, NumPy broadcasting across chunks.
* ``g(x, ...)`` -> ``dask.array.apply_gufunc`` with the gufunc's layout (core dimensions
  must each be one chunk, as Dask requires).
* ``f.reduce(x, axis)`` and ``r(x)`` -> ``dask.array.reduction``: our reducer folds each
  chunk, then the partial results (the tree's combine steps), and ``initial``/``init`` is
  folded in once, in the final step.
* ``f.accumulate(x, axis)``: each chunk accumulated, then each chunk combined with the
  running total of the chunks before it (a graph as deep as the chunks along ``axis``).
* ``f.outer(x, y)``: ``f(x[..., None, ...], y)``, lazy like any call. ``f.at`` and
  ``f.reduceat`` have no lazy form: Dask's ``__array_ufunc__`` declines them, as in NumPy.

The ufunc objects pickle (they rebuild from the Python function and signatures), so the
graphs run on ``distributed`` workers in other processes, and on several GPUs with
dask-cuda's ``LocalCUDACluster``.
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from .._axes import _axis

__all__ = ["is_dask_array", "ufunc_call", "gufunc_call", "ufunc_reduce", "reducer_call",
           "ufunc_accumulate", "ufunc_outer"]


_CHUNK_KEYWORDS = ("dtype", "casting", "order", "signature", "sig", "subok")


def is_dask_array(obj) -> bool:
    mod = sys.modules.get("dask.array")
    return mod is not None and isinstance(obj, mod.Array)


def _no_out(api, kwargs):
    for key in ("out", "res", "size"):
        if kwargs.get(key) is not None:
            raise TypeError(f"{api}(): {key}= is not supported with Dask arrays (the result is "
                            f"a new lazy Dask array; store it with dask.array.store)")


def _sample(arg):
    """A zero-size stand-in of an argument, for loop selection: Python scalars stay (they
    are weak), arrays become empty arrays of their dtype."""
    if isinstance(arg, (bool, int, float, complex)):
        return arg
    dtype = getattr(arg, "dtype", None)
    if dtype is None:
        return np.asarray(arg)
    return np.empty((0,), dtype)


def ufunc_call(uf, args, kwargs):
    """``uf(*args)`` with a Dask array among ``args``: a lazy Dask array."""
    from dask.array.core import elemwise

    kwargs = dict(kwargs)
    _no_out(uf.__name__, kwargs)
    kwargs.pop("out", None)
    if len(args) != uf.nin:
        raise TypeError(f"{uf.__name__}() takes {uf.nin} input argument"
                        f"{'' if uf.nin == 1 else 's'} with Dask arrays (got {len(args)})")
    stream = kwargs.pop("stream", 0)
    if "where" in kwargs:
        raise TypeError(f"{uf.__name__}(): where= is not supported with Dask arrays (use "
                        f"dask.array.where on the result)")
    # Keywords that act element by element go to every chunk's call.
    per_chunk = {k: kwargs.pop(k) for k in _CHUNK_KEYWORDS if k in kwargs}
    if kwargs:
        raise TypeError(f"{uf.__name__}() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if stream not in (0, None):
        per_chunk["stream"] = stream
    # The loop is chosen once, here, as for the whole array: NumPy's rules on the dtypes.
    dtype = uf(*(_sample(a) for a in args), **per_chunk).dtype
    op = functools.partial(uf, **per_chunk) if per_chunk else uf
    return elemwise(op, *args, dtype=dtype)


def gufunc_call(g, args, kwargs):
    """``g(*inputs)`` with a Dask array among the inputs: ``dask.array.apply_gufunc``."""
    import dask.array as da

    kwargs = dict(kwargs)
    _no_out(g.__name__, kwargs)
    kwargs.pop("out", None)
    stream = kwargs.pop("stream", 0)
    if kwargs.keys() & {"axes", "axis", "keepdims"}:
        raise TypeError(f"{g.__name__}(): axes=, axis= and keepdims= are not supported with "
                        f"Dask arrays (move the core dimensions last with .transpose())")
    # dtype=, signature= and casting= choose the loop of every block's call
    types = {k: kwargs.pop(k) for k in ("dtype", "signature", "sig", "casting") if k in kwargs}
    if kwargs:
        raise TypeError(f"{g.__name__}() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if len(args) != g.nin:
        raise TypeError(f"{g.__name__}(): outputs cannot be passed with Dask arrays; pass the "
                        f"{g.nin} input(s) only (got {len(args)} arguments)")
    ins = g._core_dims[:g.nin]
    samples = []
    for arg, dims in zip(args, ins):
        a = arg if hasattr(arg, "dtype") and hasattr(arg, "shape") else np.asarray(arg)
        core = tuple(a.shape[a.ndim - len(dims):]) if dims else ()
        samples.append(np.empty((0,) + core, a.dtype))
    sample_out = g(*samples, **types)
    outs = sample_out if isinstance(sample_out, tuple) else (sample_out,)
    dtypes = [o.dtype for o in outs]
    block_kwargs = {} if stream in (0, None) else {"stream": stream}
    args = _align_loop_chunks(args, ins)
    # Dask's apply_gufunc takes dtype= itself (and drops it): the types go in a closure.
    func = g if not types else functools.partial(g, **types)
    return da.apply_gufunc(func, g.signature, *args,
                           output_dtypes=dtypes if len(dtypes) > 1 else dtypes[0],
                           **block_kwargs)


def _align_loop_chunks(args, core_dims):
    """Rechunk the inputs so that broadcast loop dimensions (and same-named core
    dimensions) have the same chunks, as NumPy's broadcasting lines them up; Dask's
    apply_gufunc asks for that and would refuse unequal chunkings."""
    from dask.array.core import unify_chunks

    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ndims = [getattr(a, "ndim", np.ndim(a)) for a in args]
    nloop = max([n - len(d) for n, d in zip(ndims, core_dims)] + [0])
    loop = [next(letters) for _ in range(nloop)]
    named = {}
    pairs = []
    for a, n, dims in zip(args, ndims, core_dims):
        if n == 0:
            pairs += [a, None]
            continue
        core = [named.setdefault(d, next(letters)) if isinstance(d, str) else next(letters)
                for d in dims]
        pairs += [a, "".join(loop[nloop - (n - len(dims)):] + core)]
    return unify_chunks(*pairs)[1]


def _axes(axis, ndim, api):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{api}(): axis must be None, an int or a tuple of ints (got {axis!r})")
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(f"{api}(): axis {a} is out of bounds for array of "
                                          f"dimension {ndim}")
        out.append(int(a) % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"{api}(): duplicate value in axis (got {axis!r})")
    return tuple(sorted(out))


def _reduction(x, fold, axis, keepdims, dtype, api):
    """dask.array.reduction with ``fold(block, axes, keepdims, final)`` as chunk, combine and
    aggregate (``final`` marks the step that folds the initial value in)."""
    import dask.array as da

    axes = _axes(axis, x.ndim, api)

    def chunk(block, axis, keepdims, computing_meta=False, **_):
        if computing_meta:
            return block  # Dask asks for the result's array type only (NumPy or CuPy)
        return fold(block, axis, True, False)

    def aggregate(block, axis, keepdims, computing_meta=False, **_):
        if computing_meta:
            return block
        return fold(block, axis, keepdims, True)

    return da.reduction(x, chunk, aggregate, combine=chunk, axis=axes, keepdims=keepdims,
                        dtype=dtype, concatenate=True)


def ufunc_reduce(uf, x, axis, dtype, initial, keepdims):
    """``uf.reduce(x, axis, ...)`` of a Dask array: a lazy Dask array. ``initial`` (None for
    none) is folded in once, in the final step."""
    api = f"{uf.__name__}.reduce"
    axes = _axes(axis, x.ndim, api)
    if initial is None and any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"{api}(): zero-size array to reduction operation {uf.__name__} "
                         f"which has no identity")
    out_dtype = np.asarray(uf.reduce(np.zeros((1,), x.dtype), axis=0, dtype=dtype)).dtype

    def fold(block, axis, keepdims, final):
        if final and initial is not None:
            return uf.reduce(block, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
        if block.size == 0 and initial is not None:
            # an empty chunk folds to the identity (only the final step applies `initial`)
            return uf.reduce(block, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
        if block.size == 0:
            # NumPy's words: Dask recognises them when it probes with empty meta arrays
            raise ValueError(f"{api}(): zero-size array to reduction operation "
                             f"{uf.__name__} which has no identity")
        return uf.reduce(block, axis=axis, dtype=dtype, keepdims=keepdims, initial=None)

    return _reduction(x, fold, axes, keepdims, out_dtype, api)


def reducer_call(r, x, size, res, init, stream, axis):
    """``r(x, ...)`` (Numba's cuda.reduce) of a Dask array: a lazy Dask array, 0-d for a
    full reduction (``.compute()`` gives the scalar)."""
    api = r._api
    _no_out(api, {"res": res, "size": size})
    axes = _axes(axis, x.ndim, api)

    def fold(block, axis, keepdims, final):  # captures `r`, which pickles (not its engine)
        engine = r._engine
        # init is folded in exactly once: in the final step, as op(init, fold(x))
        if final:
            return engine._run(block, axis, None, None, None, init, None, keepdims, stream,
                               False, api)
        if block.size == 0:
            raise ValueError(f"{api}(): zero-size array to reduction operation {api} which "
                             f"has no identity (an empty Dask chunk: rechunk)")
        return engine._run(block, axis, None, None, None, None, None, True, stream, False, api)

    return _reduction(x, fold, axes, False, x.dtype, api)


def ufunc_accumulate(uf, x, axis, dtype, out, stream):
    """``uf.accumulate(x, axis, ...)`` of a Dask array: a lazy Dask array. Chunk ``i``
    along ``axis`` is ``uf(total, acc_i)``, where ``acc_i`` is the chunk accumulated alone
    and ``total`` folds the last elements of the chunks before it, left to right (so the
    function must be associative, as the GPU's scan already asks)."""
    import dask.array as da
    from dask.array.utils import meta_from_array

    api = f"{uf.__name__}.accumulate"
    _no_out(api, {"out": out})
    if x.ndim == 0:
        raise TypeError(f"{api}(): cannot accumulate a 0-d array (got shape ())")
    axis = _axis(axis, x.ndim, api)
    kw = {} if dtype is None else {"dtype": dtype}
    if stream not in (0, None):
        kw["stream"] = stream
    loop_dtype = uf.accumulate(np.zeros((1,), x.dtype), **kw).dtype
    acc = x.map_blocks(functools.partial(uf.accumulate, axis=axis, **kw), dtype=loop_dtype,
                       meta=meta_from_array(x, ndim=x.ndim, dtype=loop_dtype))
    keep = [slice(None)] * x.ndim
    parts = []
    for i, size in enumerate(acc.chunks[axis]):
        if size:  # an empty chunk has no last element to carry
            keep[axis] = i
            parts.append(acc.blocks[tuple(keep)])
    if len(parts) <= 1:
        return acc
    keep[axis] = slice(-1, None)
    last = tuple(keep)
    call_kw = {"stream": stream} if stream not in (0, None) else {}
    total = parts[0][last]
    result = [parts[0]]
    for i in range(1, len(parts)):
        result.append(uf(total, parts[i], **call_kw))
        if i + 1 < len(parts):
            total = uf(total, parts[i][last], **call_kw)
    return da.concatenate(result, axis=axis)


def ufunc_outer(uf, a, b, kwargs):
    """``uf.outer(a, b)`` with a Dask array: ``uf(a[..., None, ...], b)``, lazy."""
    a = a if hasattr(a, "ndim") and hasattr(a, "shape") else np.asarray(a)
    b = b if hasattr(b, "ndim") and hasattr(b, "shape") else np.asarray(b)
    return uf(a[(Ellipsis,) + (None,) * b.ndim], b, **kwargs)
