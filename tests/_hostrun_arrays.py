"""Test scaffolding for translated functions with array arguments (gufunc-style): run the
translated function once on NumPy views through the host backend, and the Python function
itself (the oracle) on clones of the same views, then compare every buffer.

A view is handed to C++ as the bytes of a ``nu::array<T, N>`` (src/kernels/nu_array.cuh):
the data pointer, N extents and N byte strides, all 64-bit, so any NumPy layout (C, F,
strided, negative or zero strides) is passed as it is. Each case gets a tiny
``extern "C"`` wrapper taking an array of pointers to its arguments (and to the return
slot); the same wrappers, as kernels, are compiled by NVRTC to PTX for sm_90.
"""

from __future__ import annotations

import ctypes
import re
import warnings

import numpy as np

from numbacuda_ufunc import _core
from numbacuda_ufunc.compiler import HEADER, translate
from numbacuda_ufunc.compiler._types import ctype
from numbacuda_ufunc.types import Array

KINDS = ("C", "F", "strided", "negative", "broadcast")


class Case:
    """One function and its argument types (scalars and arrays)."""

    def __init__(self, fn, arg_types):
        self.fn = fn
        self.arg_types = tuple(arg_types)
        self.tf = translate(fn, self.arg_types)
        self.runner = None


def _wrapper(i, case):
    # __global__ is empty in the host prelude, so one text serves g++ and NVRTC.
    args = ", ".join(f"*static_cast<const {ctype(t)}*>(args[{k}])"
                     for k, t in enumerate(case.arg_types))
    call = f"{case.tf.name}({args})"
    rt = case.tf.return_type
    body = (f"{call};" if rt is None else
            f"*static_cast<{ctype(rt)}*>(args[{len(case.arg_types)}]) = {call};")
    return f'extern "C" __global__ void nu_run_{i}(void* const* args) {{ {body} }}\n'


def build(cases, nvrtc=True):
    """Compile all cases in one unit for the host (and NVRTC); attach ``case.runner``."""
    unit = HEADER + "".join(c.tf.source for c in cases) + "".join(
        _wrapper(i, c) for i, c in enumerate(cases))
    lib = _core.build_host(unit, [])
    if nvrtc:
        ptx = _core.compile_ptx(unit, (9, 0))
        entries = set(re.findall(r"\.entry\s+(nu_run_\d+)", ptx))
        missing = [i for i in range(len(cases)) if f"nu_run_{i}" not in entries]
        assert not missing, f"kernels missing from the PTX: {missing}"
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    for i, c in enumerate(cases):
        c.runner = (lib, proto(lib.symbol(f"nu_run_{i}")))
    return lib


# ---- views -----------------------------------------------------------------------------------

def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    assert a.flags.owndata and a.ndim == 1, "views must come from make_view()"
    return a


def poison(dtype):
    dt = np.dtype(dtype)
    if dt.kind in "fc":
        return np.nan
    if dt.kind == "b":
        return True
    return 77


def random_values(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind == "u":
        return rng.integers(0, 100, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-50, 50, shape).astype(dt)
    x = rng.standard_normal(shape) * 10
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape) * 10
    return x.astype(dt)


def make_view(kind, shape, dtype, rng=None):
    """A view of ``shape`` in a poisoned 1-d buffer of its own: C- or F-contiguous, every
    other element (``strided``), reversed in every dimension (``negative``) or repeated
    along the first dimension with stride 0 (``broadcast``). Filled with random values
    when ``rng`` is given, else left poisoned (an output)."""
    dt = np.dtype(dtype)
    shape = tuple(shape)
    n = int(np.prod(shape))
    if kind == "strided":
        big = tuple(2 * s for s in shape)
        root = np.full(int(np.prod(big)) + 3, poison(dt), dt)
        v = root[3:].reshape(big)[tuple(slice(None, None, 2) for _ in shape)]
    elif kind == "broadcast":
        inner = shape[1:]
        root = np.full(int(np.prod(inner)) + 1, poison(dt), dt)
        strides = (0,) + tuple(int(np.prod(inner[k + 1:])) * dt.itemsize
                               for k in range(len(inner)))
        v = np.ndarray(shape, dt, buffer=root, offset=dt.itemsize, strides=strides)
    else:
        root = np.full(n + 2, poison(dt), dt)
        flat = root[1:n + 1]
        if kind == "C":
            v = flat.reshape(shape)
        elif kind == "F":
            v = flat.reshape(shape[::-1]).T
        elif kind == "negative":
            v = flat.reshape(shape)[tuple(slice(None, None, -1) for _ in shape)]
        else:
            raise ValueError(kind)
    if rng is not None:
        v[...] = random_values(rng, shape, dt)
    return v


def _clone(a, memo):
    """The same view over a copy of its buffer; views sharing a buffer share the copy."""
    root = _root(a)
    copy = memo.setdefault(id(root), (root, root.copy()))[1]
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(a.shape, a.dtype, buffer=copy, offset=offset, strides=a.strides)


# ---- running and comparing -------------------------------------------------------------------

def run_compiled(case, *args):
    """Runs the translated function in place on ``args``; returns its result (or None)."""
    keep, ptrs = [], []
    for a, t in zip(args, case.arg_types):
        if isinstance(t, Array):
            assert a.dtype == t.dtype.dtype and a.ndim == t.ndim, (a.dtype, a.shape, t)
            view = np.array([a.__array_interface__["data"][0], *a.shape, *a.strides],
                            dtype=np.int64)  # the bytes of nu::array<T, N>
        else:
            view = np.array([a], dtype=t.dtype)
        keep.append(view)
        ptrs.append(view.ctypes.data)
    rt = case.tf.return_type
    if rt is not None:
        ret = np.full(1, poison(rt.dtype), rt.dtype)
        keep.append(ret)
        ptrs.append(ret.ctypes.data)
    case.runner[1]((ctypes.c_void_p * len(ptrs))(*ptrs))
    return ret[0] if rt is not None else None


def check(case, *args, rtol=0.0):
    """Runs both and compares the result and every buffer the arguments live in, bytes
    outside the views included (they are poisoned; a stray write shows)."""
    memo = {}
    clones = [_clone(a, memo) if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = case.fn(*clones)
    got = run_compiled(case, *args)
    what = f"{case.fn.__name__}{case.arg_types}"
    if case.tf.return_type is not None:
        _assert_same(np.asarray(got), np.asarray(want).astype(case.tf.return_type.dtype),
                     rtol, f"{what}: return value")
    for root, copy in memo.values():
        _assert_same(root, copy, rtol, f"{what}: buffer of an argument")


def _assert_same(got, want, rtol, what):
    if rtol and got.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True, err_msg=what)
    else:  # exact, NaN matching NaN
        np.testing.assert_array_equal(got, want, err_msg=what, strict=True)
