"""NumPy's ufunc methods beyond ``reduce`` for binary vectorize ufuncs: ``accumulate``,
``outer``, ``at`` and ``reduceat``, on NumPy, device and ``__cuda_array_interface__``
arrays.

The front end checks arguments and lays the arrays out (the method's axis last, as views);
the engine (src/dispatch/ufunc_methods.cpp, kernels in src/kernels/ufunc_methods.cuh)
runs the translated T(T, T) operator, the loops ufunc.reduce uses.
"""

from __future__ import annotations

import builtins
import dis
import inspect

import numpy as np

from .. import _core
from .._axes import _axis
from ..interop._cupy import as_cupy, stream_handle
from ._keywords import where_as_array

__all__ = ["accumulate", "outer", "at", "reduceat", "masked_for_reduce"]


def _binary(uf, api):
    if uf.nin != 2:
        raise ValueError(f"{api}(): only binary ufuncs support this method (got a ufunc with "
                         f"{uf.nin} input(s))")


def _engine(uf):
    engine = uf.__dict__.get("_methods_engine")
    if engine is None:
        engine = _core.UFuncMethods(uf.__name__, uf.target, uf.fastmath,
                                    atomic=_atomic_operator(getattr(uf, "py_func", None)))
        uf._methods_engine = engine
    return engine


_AT_OPERATORS = {"+": "add", "&": "and", "|": "or", "^": "xor",  # BINARY_OP (3.11+)
                 "BINARY_ADD": "add", "BINARY_AND": "and", "BINARY_OR": "or", "BINARY_XOR": "xor"}
_AT_CALLS = {"min": ("min", builtins.min), "max": ("max", builtins.max)}
_NO_EFFECT = {"RESUME", "NOP", "CACHE", "EXTENDED_ARG", "PRECALL", "PUSH_NULL"}


def _atomic_operator(fn) -> str:
    """The native atomic ``ufunc.at`` may apply for ``fn`` (the engine uses it where the
    loop's type has one: src/kernels/ufunc_methods.cuh's at_atomic): 'add', 'and', 'or',
    'xor' for a body that is exactly ``return a + b`` (``&``, ``|``, ``^``; either order),
    'min'/'max' for ``return min(a, b)``/``max(a, b)`` with the builtins; '' for anything
    else, which keeps the compare-and-swap loop over the translated function. Read from
    the bytecode, so lambdas and functions without source qualify."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_argcount != 2 or code.co_kwonlyargcount or \
            code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return ""
    ops = []
    for ins in dis.get_instructions(fn):
        if ins.opname in _NO_EFFECT:
            continue
        if ins.opname.startswith("LOAD_FAST"):  # LOAD_FAST_LOAD_FAST (3.13) loads two
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            ops += [("LOAD_FAST", n) for n in names]
        elif ins.opname.startswith("BINARY_"):
            ops.append(("BINARY", ins.argrepr if ins.opname == "BINARY_OP" else ins.opname))
        else:
            ops.append((ins.opname, ins.argval))
    args = set(code.co_varnames[:2])
    loads = {n for op, n in ops if op == "LOAD_FAST"}
    if len(ops) == 4 and [op for op, _ in ops] == ["LOAD_FAST", "LOAD_FAST", "BINARY", "RETURN_VALUE"] \
            and loads == args:
        return _AT_OPERATORS.get(ops[2][1], "")
    if len(ops) == 5 and [op for op, _ in ops[:3]] == ["LOAD_GLOBAL", "LOAD_FAST", "LOAD_FAST"] and \
            ops[3][0] in ("CALL", "CALL_FUNCTION") and ops[3][1] == 2 and ops[4][0] == "RETURN_VALUE" \
            and loads == args and ops[0][1] in _AT_CALLS:
        name, builtin = _AT_CALLS[ops[0][1]]
        if fn.__globals__.get(name, builtin) is builtin:  # not shadowed by a module global
            return name
    return ""


def _host_side(uf):
    """True when the ufunc computes in host memory while device arrays are GPU memory
    (targets cpu and parallel on a real GPU): device data is brought over first."""
    return uf.target != "cuda" and not _core.emulation_enabled()


def _device_array(x):
    """x as a DeviceNDArray view when it is a device or CAI array, else None."""
    if isinstance(x, _core.DeviceNDArray):
        return x
    if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
        return _core.as_cuda_array(x)
    return None


def _operand(x, uf=None):
    """(array, on_device, is_cupy): NumPy arrays as they are, device and CAI arrays as
    DeviceNDArray views (host copies for host targets on a GPU), anything else through
    np.asarray."""
    if isinstance(x, np.ndarray):
        return x, False, False
    d = _device_array(x)
    if d is not None:
        if uf is not None and _host_side(uf):
            return d.copy_to_host(), False, False
        return d, True, type(x).__module__.startswith("cupy")
    return np.asarray(x), False, False


def _axis_last(a, axis):
    perm = [d for d in range(a.ndim) if d != axis] + [axis]
    return a.transpose(*perm) if isinstance(a, _core.DeviceNDArray) else a.transpose(perm)


def _new(shape, dtype, on_device, stream):
    if on_device:
        return _core.device_array(tuple(shape), np.dtype(dtype), None, "C", stream)
    return np.empty(shape, dtype)


def _check_out(uf, out, shape, loop_type, api):
    if not isinstance(out, (np.ndarray, _core.DeviceNDArray)) and \
            not hasattr(out, "__cuda_array_interface__"):
        raise TypeError(f"{api}(): out must be a NumPy or device array (got "
                        f"{type(out).__name__})")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{api}(): out has shape {tuple(out.shape)}, the result has shape "
                         f"{tuple(shape)}")
    # NumPy's reduce-like methods cast their result into out= unsafely
    # (np.add.accumulate(floats, out=ints) truncates the float sums), as ufunc.reduce does.
    if not np.can_cast(loop_type, out.dtype, "unsafe"):
        raise TypeError(f"{api}(): cannot cast the loop's output {loop_type} to out's dtype "
                        f"{out.dtype}")
    if not isinstance(out, np.ndarray) and _host_side(uf):
        raise TypeError(f"{api}(): out must be a NumPy array for the cpu and parallel targets "
                        f"(got a device array)")
    return out if isinstance(out, (np.ndarray, _core.DeviceNDArray)) else _core.as_cuda_array(out)


def _finish(result, is_cupy, stream=0):
    """A new device result as CuPy when an input was CuPy: built from the raw pointer and
    ordered after `stream` with an event (see interop/_cupy.py, as_cupy), after the work is queued."""
    if is_cupy and isinstance(result, _core.DeviceNDArray):
        handle = stream_handle(stream)
        if handle is None:  # a stream form we cannot read: CuPy's own (synchronizing) import
            import cupy

            return cupy.asarray(result)
        return as_cupy(result, handle)
    return result


def _unwrap_out(out, api):
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"{api}(): out must be an array or a 1-tuple (got a tuple of "
                            f"{len(out)})")
        out = out[0]
    return out


def out_loop_dtype(in_dtype, out):
    """NumPy's choice for a reduction-like method given out= and no dtype=: out's dtype when
    the input casts to it safely (add.reduce(bool_array, out=int64_array) counts), else None
    (the input's loop, its result cast to out: add.accumulate(float_array, out=int_array)
    sums floats)."""
    out_dtype = getattr(out, "dtype", None)
    if out_dtype is None or isinstance(in_dtype, str):
        return None
    try:
        if not np.can_cast(in_dtype, out_dtype, "safe"):
            return None
    except TypeError:
        return None
    return np.dtype(out_dtype).newbyteorder("=")  # loops are native; a swapped out converts


def _method_dtype(a, dtype, out):
    """The dtype whose loop a method runs: dtype=, else out's (see out_loop_dtype), else
    the input's."""
    if dtype is not None:
        return dtype
    return (out_loop_dtype(a.dtype, out) if out is not None else None) or a.dtype


def _loop(uf, engine, dt, api):
    """The T(T, T) loop for dtype dt (as ufunc.reduce chooses it) and its type T."""
    index = uf._reduce_loop(engine, np.dtype(dt), api)
    return index, np.dtype(engine._loop_type(index))


def accumulate(uf, array, axis=0, dtype=None, out=None, stream=0):
    api = f"{uf.__name__}.accumulate"
    _binary(uf, api)
    a, on_device, is_cupy = _operand(array, uf)
    if a.ndim == 0:
        raise TypeError(f"{api}(): cannot accumulate a 0-d array (got shape ())")
    axis = _axis(axis, a.ndim, api)
    engine = _engine(uf)
    out = _unwrap_out(out, api)
    loop, loop_type = _loop(uf, engine, _method_dtype(a, dtype, out), api)
    if out is None:
        result = _new(a.shape, loop_type if dtype is None else dtype, on_device, stream)
    else:
        result = _check_out(uf, out, a.shape, loop_type, api)
    engine._accumulate(_axis_last(a, axis), _axis_last(result, axis), loop, stream, api)
    return out if out is not None else _finish(result, is_cupy, stream)


def reduceat(uf, array, indices, axis=0, dtype=None, out=None, stream=0):
    api = f"{uf.__name__}.reduceat"
    _binary(uf, api)
    a, on_device, is_cupy = _operand(array, uf)
    if a.ndim == 0:
        raise TypeError(f"{api}(): cannot reduceat a 0-d array (got shape ())")
    axis = _axis(axis, a.ndim, api)
    idx = np.asarray(indices.copy_to_host() if isinstance(indices, _core.DeviceNDArray)
                     else indices)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise TypeError(f"{api}(): indices must be a 1-d array of integers (got "
                        f"{idx.dtype} with shape {idx.shape})")
    idx = idx.astype(np.int64)
    n = a.shape[axis]
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise IndexError(f"{api}(): index {int(idx[bad][0])} is out of bounds for axis "
                         f"{axis} with size {n} (indices must be in [0, {n}))")
    shape = list(a.shape)
    shape[axis] = idx.size
    engine = _engine(uf)
    out = _unwrap_out(out, api)
    loop, loop_type = _loop(uf, engine, _method_dtype(a, dtype, out), api)
    if out is None:
        result = _new(shape, loop_type if dtype is None else dtype, on_device, stream)
    else:
        result = _check_out(uf, out, shape, loop_type, api)
    engine._reduceat(_axis_last(a, axis), idx, _axis_last(result, axis), loop, stream, api)
    return out if out is not None else _finish(result, is_cupy, stream)


def at(uf, a, indices, b=None, stream=0):
    api = f"{uf.__name__}.at"
    if uf.nin == 1:
        return _unary_at(uf, a, indices, b, stream, api)
    _binary(uf, api)
    if b is None:
        raise TypeError(f"{api}(): a binary ufunc needs the second operand b")
    target = _at_target(uf, a, api)
    if _at_on_device(uf, target, indices, b, stream, api):
        return
    flat = _at_elements(target, indices, api)
    if (d_b := _device_array(b)) is not None:
        b = d_b.copy_to_host()
    bt = b if type(b) in (int, float, complex) else np.asarray(b)
    dt = np.result_type(target.dtype, bt)
    engine = _engine(uf)
    loop, loop_type = _loop(uf, engine, dt, api)
    # As in NumPy, the result is cast back to the array's dtype unsafely (int += 1.5).
    try:
        values = np.broadcast_to(_at_values(bt, loop_type), flat.shape)
    except ValueError:
        raise ValueError(f"{api}(): b with shape {np.shape(bt)} does not broadcast to the "
                         f"indexed shape {flat.shape}") from None
    engine._at(target, flat.ravel(), np.ascontiguousarray(values).ravel(), loop, stream, api)


def _at_target(uf, a, api):
    """The array ``f.at`` updates in place: a writable NumPy array, or a device (or CAI)
    array for the cuda target."""
    if isinstance(a, np.ndarray):
        if not a.flags.writeable:
            raise ValueError(f"{api}(): the array is read-only")
        return a
    if (target := _device_array(a)) is not None:
        if _host_side(uf):
            raise TypeError(f"{api}(): a must be a NumPy array for the cpu and parallel "
                            f"targets (got a device array)")
        return target
    raise TypeError(f"{api}(): a must be a NumPy or device array (got {type(a).__name__})")


def _at_elements(target, indices, api):
    """C-order element numbers of the indexed elements, repeats kept (int64): NumPy's own
    indexing on a grid of numbers gives every index form (ints, slices, arrays, masks,
    tuples); a 1-d integer index array is checked and wrapped without the grid."""
    if isinstance(indices, _core.DeviceNDArray):
        indices = indices.copy_to_host()
    if target.ndim == 1 and isinstance(indices, (list, np.ndarray)) and \
            np.asarray(indices).dtype.kind in "iu":
        flat = np.asarray(indices, dtype=np.int64)
        n = target.shape[0]
        # min and max first: two passes without temporaries (the masks only on the way out)
        low, high = (int(flat.min()), int(flat.max())) if flat.size else (0, 0)
        if low < -n or high >= n:
            bad = (flat < -n) | (flat >= n)
            raise IndexError(f"{api}(): index {int(flat[bad][0])} is out of bounds for axis 0 "
                             f"with size {n}")
        if low < 0:
            flat = np.where(flat < 0, flat + n, flat)
    else:
        try:
            flat = np.arange(int(np.prod(target.shape)), dtype=np.int64).reshape(target.shape)[indices]
        except IndexError as e:
            raise IndexError(f"{api}(): {e}") from None
    return np.asarray(flat, dtype=np.int64)


def _at_values(b, loop_type):
    """b as the loop's dtype. A Python int the type cannot hold wraps, as NumPy's ufunc.at
    casts it (np.add.at(uint8_array, i, -1) subtracts one), where a call would raise."""
    try:
        return np.asarray(b, dtype=loop_type)
    except OverflowError:
        if type(b) is not int:
            raise
        with np.errstate(all="ignore"):
            return np.asarray(b).astype(loop_type)


def _unary_at(uf, a, indices, b, stream, api):
    """NumPy's ``f.at(a, indices)`` for a unary ufunc: ``a[indices] = f(a[indices])``
    unbuffered, so an element indexed k times is updated k times. Each round is one call of
    the ufunc on the elements still to update (as many rounds as the most repeated index);
    a device array is updated through a host copy."""
    if b is not None:
        raise ValueError(f"{api}(): a unary ufunc takes no second operand (got b={b!r})")
    given = _at_target(uf, a, api)
    device = None if isinstance(given, np.ndarray) else given
    target = given if device is None else device.copy_to_host(stream=stream)
    flat = _at_elements(target, indices, api).ravel()
    elements, counts = np.unique(flat, return_counts=True)
    for k in range(1, int(counts.max()) + 1 if counts.size else 1):
        idx = np.unravel_index(elements[counts >= k], target.shape) if target.ndim else ()
        with np.errstate(all="ignore"):
            target[idx] = uf(target[idx])  # NumPy casts the result back unsafely
    if device is not None:
        device.copy_to_device(target, stream=stream)


def _at_on_device(uf, target, indices, b, stream, api):
    """ufunc.at with the indices already on the device (cupyx.scatter_add's case): the
    updates run where the data is, with no round trip of indices or values through the host.
    Taken for a 1-d device target, a contiguous 1-d int32/int64 device index array, and b a
    device array of the loop's dtype with one value per index, or a scalar; everything else
    takes the general path. True when done."""
    if isinstance(target, np.ndarray) or target.ndim != 1:
        return False
    d_idx = _device_array(indices)
    if d_idx is None or d_idx.ndim != 1 or d_idx.dtype not in (np.int32, np.int64) \
            or not d_idx.is_c_contiguous():
        return False
    d_b = _device_array(b)
    if d_b is not None:
        if d_b.shape != d_idx.shape or not d_b.is_c_contiguous():
            return False
        dt = np.result_type(target.dtype, d_b.dtype)
    elif type(b) in (bool, int, float, complex) or (isinstance(b, np.generic) and b.dtype.kind in "biufc"):
        dt = np.result_type(target.dtype, b)
    else:
        return False
    engine = _engine(uf)
    loop, loop_type = _loop(uf, engine, dt, api)
    if d_b is None:  # a scalar travels in the kernel's parameters: no device copy
        d_b = _at_values(b, loop_type).reshape(1)
    elif d_b.dtype != loop_type:
        return False
    engine._at_device(target, d_idx, d_b, loop, stream, api)
    return True


def outer(uf, A, B, **kwargs):
    api = f"{uf.__name__}.outer"
    _binary(uf, api)
    a, _, _ = _operand(A)
    b, _, _ = _operand(B)
    shape = tuple(a.shape) + (1,) * b.ndim
    return uf(a.reshape(shape) if isinstance(a, np.ndarray) else a.reshape(*shape), b, **kwargs)


# ---- reduce(where=...) -------------------------------------------------------------------

def masked_for_reduce(uf, a, where, has_initial, stream, api, select_ufunc):
    """``a`` with the elements ``where`` leaves out replaced by the ufunc's identity, which
    then fold in without changing the result (NumPy's ``reduce(where=...)``). A ufunc
    without an identity would need the kernels to skip elements: it is refused.
    ``select_ufunc(target)`` gives the ``x if m else fill`` ufunc of a target (ufunc.py,
    which builds ufuncs, owns it)."""
    if uf.identity in (None, "reorderable"):
        if not has_initial:
            raise ValueError(f"{api}(): reduction operation '{uf.__name__}' does not have an "
                             f"identity, so to use a where mask one has to specify 'initial'")
        raise NotImplementedError(
            f"{api}(): where= needs a ufunc with an identity (vectorize(..., identity=...)); "
            f"'{uf.__name__}' has none (got identity={uf.identity!r})")
    a, on_device, is_cupy = _operand(a, uf)
    mask, mask_on_device, _ = _operand(where_as_array(where, f"{api}()"), uf)
    if mask.dtype != np.bool_:
        raise TypeError(f"{api}(): where must be a boolean mask (got dtype {mask.dtype})")
    try:
        fits = np.broadcast_shapes(tuple(mask.shape), tuple(a.shape)) == tuple(a.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{api}(): where of shape {tuple(mask.shape)} does not broadcast to "
                         f"the array's shape {tuple(a.shape)}")
    with np.errstate(all="ignore"):
        fill = np.asarray(uf.identity).astype(a.dtype)[()]
    if not on_device:
        if mask_on_device:
            mask = mask.copy_to_host()
        return np.where(mask, a, fill)
    return _finish(select_ufunc(uf.target)(mask, a, fill, stream=stream), is_cupy, stream)
