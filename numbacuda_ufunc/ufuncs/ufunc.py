"""``vectorize``: Python scalar functions as NumPy-semantics ufuncs on the GPU.

The decorator translates the function for each signature at decoration (or, without
signatures, for each new tuple of input dtypes at first call) and registers the loops
with the C++ engine; calls go from ``ufunc(*args)`` to the kernel launch without running
Python code.
"""

from __future__ import annotations

import inspect
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .. import _core
from ..compiler import translate
from ..compiler._source import _take_identity_of
from ..errors import CompileError
from ..interop import _dask, _protocol
from ..interop._pickling import function_ref, global_name
from ..toolchain import _sass
from ..toolchain._compile import device_ptx
from ..types import (
    Scalar,
    Signature,
    SignatureSpec,
    from_dtype,
    is_bfloat16_dtype,
    parse_signature,
    parse_signature_for,
)
from . import _methods
from ._help import ufunc_doc
from ._keywords import call_with_keywords, input_dtype

__all__ = ["vectorize", "UFunc"]

TARGETS = ("cuda", "cpu", "parallel")
# One output and up to 63 inputs: NumPy's 64-operand limit, and the width of the kernels'
# bitmask of by-value scalars (src/kernels/elementwise.cuh).
MAX_INPUTS = 63
_NO_VALUE = object()  # ufunc.reduce(initial=...) not given (None means "no initial")
# Argument types the methods pass on without asking _protocol (NEP 13): a set lookup.
_ENGINE_ARRAYS = frozenset({np.ndarray, _core.DeviceNDArray, type(None), int, float, bool})
_OPTIONS = ("signatures", "target", "identity", "fastmath", "cache", "nopython", "forceobj")


def _arity(pyfunc, api: str) -> int:
    try:
        params = inspect.signature(pyfunc).parameters.values()
    except (TypeError, ValueError):
        raise TypeError(f"{api}: expected a Python function (got {pyfunc!r})") from None
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is not p.empty:
            raise TypeError(f"{api}: '{pyfunc.__name__}' must take only plain positional "
                            f"parameters (got '{p}')")
    return len(params)


def _signature_list(signatures, api: str) -> list:
    if signatures is None:
        return []
    if isinstance(signatures, (str, Signature)):
        signatures = [signatures]
    return [parse_signature_for(api, s) for s in signatures]


def _checked_identity(identity, api):
    """Numba's identities (0, 1, None, "reorderable") and, as NumPy's ufuncs allow, any other
    number (``-inf`` for a maximum). Anything else is refused at decoration, as Numba does,
    instead of failing at the first reduction."""
    if identity is None or (isinstance(identity, str) and identity == "reorderable") or \
            isinstance(identity, (int, float, complex, np.number, np.bool_)):
        return identity
    raise ValueError(f"{api}: Invalid identity value {identity!r} (identity must be 0, 1, None, "
                     f"'reorderable' or another number)")


class UFunc(_core.UFunc):
    """A ufunc made by :func:`vectorize`. Call it like a NumPy ufunc:
    ``f(*inputs, out=None, stream=0)``."""

    signature = None  # NumPy's: None for element-wise ufuncs (xarray and Dask read it)

    if TYPE_CHECKING:  # the engine's tp_call (src/bindings/ufunc.cpp), for type checkers
        __name__: str
        nin: int
        nout: int
        nargs: int
        ntypes: int
        types: list[str]
        target: str

        def __call__(self, *args: Any, out: Any = None, stream: Any = 0,
                     **kwargs: Any) -> Any: ...

    def __init__(self, pyfunc, signatures, target, identity, fastmath, cache):
        api = f"vectorize({pyfunc.__name__!r})" if hasattr(pyfunc, "__name__") else "vectorize()"
        nin = _arity(pyfunc, api)
        if target not in TARGETS:
            raise ValueError(f"{api}: target must be one of {', '.join(TARGETS)} (got {target!r})")
        if nin > MAX_INPUTS:
            raise ValueError(f"{api}: at most {MAX_INPUTS} inputs are supported, as in NumPy, "
                             f"whose ufuncs take at most 64 operands (got {nin})")
        super().__init__(pyfunc.__name__, nin, target, bool(fastmath))
        _take_identity_of(self, pyfunc)
        self.__doc__ = ufunc_doc(self.__name__, pyfunc, nin, target)  # help(): NumPy's layout
        self.identity = _checked_identity(identity, api)
        self.fastmath = bool(fastmath)
        self.cache = cache  # the kernel cache is always on; NUMBACUDA_UFUNC_DISABLE_CACHE=1 disables it
        self._translated = {}
        self._compile_lock = threading.Lock()
        for sig in _signature_list(signatures, api):
            self.add(sig)
        # Lazy: the engine calls _compile_for with the exact NEP 50 types of a call it has
        # no loop for, and selects only exact matches (the loop is a function of the types).
        self._lazy = not self._translated

    @property
    def signatures(self) -> list:
        return list(self._translated)

    @property
    def ufunc(self) -> np.ufunc:
        """A real ``numpy.ufunc`` over this ufunc's host loops (targets ``cpu`` and
        ``parallel``), as Numba's DUFunc keeps one: pandas' ``Series.apply`` and code that
        checks ``isinstance(x, np.ufunc)`` take it. It has one loop per loop compiled so
        far, in the same order, and NumPy selects among them by its own rule (the first
        loop the inputs cast to safely). A lazy ufunc gets a new object once it has
        compiled more loops. AttributeError for target ``cuda``, and before a lazy ufunc
        has compiled any loop."""
        api = f"{self.__name__}.ufunc"
        if self.target == "cuda":
            raise AttributeError(f"{api}: a NumPy ufunc runs host loops, so it exists for "
                                 f"targets 'cpu' and 'parallel' only (got target 'cuda')")
        count = self.ntypes
        if count == 0:
            raise AttributeError(f"{api}: the lazy ufunc '{self.__name__}' has no loop yet; "
                                 f"call it once, or give vectorize() signatures")
        cached = self.__dict__.get("_numpy_ufunc")
        if cached is not None and cached[0] == count:
            return cached[1]
        if self.identity is None or self.identity == "reorderable":
            identity, value = ("none" if self.identity is None else "reorderable"), None
        else:
            identity, value = "value", self.identity
        made = _core.numpy_ufunc(self, self.__name__, self.py_func.__doc__ or "", identity, value)
        self._numpy_ufunc = (count, made)
        return made

    def add(self, sig) -> None:
        """Translate and register one more loop (Numba's ``ufunc.add``)."""
        sig = parse_signature(sig)
        api = f"vectorize({self.__name__!r})"
        if len(sig.args) != self.nin:
            raise TypeError(f"{api}: signature {sig} has {len(sig.args)} argument(s), the "
                            f"function takes {self.nin}")
        for t in (*sig.args, *([sig.return_type] if sig.return_type is not None else [])):
            if not isinstance(t, Scalar):
                raise TypeError(f"{api}: vectorize signatures take scalar types only (got {t} "
                                f"in {sig}); use guvectorize for arrays")
        tf = translate(self.py_func, sig.args, sig.return_type)
        if tf.foreign:
            raise CompileError(f"{api}: the function calls the foreign device function"
                               f"{'s' if len(tf.foreign) > 1 else ''} {', '.join(tf.foreign)}; "
                               f"foreign functions (cuda.declare_device) are linked into "
                               f"@cuda.jit kernels only")
        ret = sig.return_type or tf.return_type
        if not isinstance(ret, Scalar):
            raise TypeError(f"{api}: the function must return one scalar value (got {ret})")
        full = Signature(ret, sig.args)
        self._add_loop([a.dtype.str for a in sig.args], ret.dtype.str, tf.name, tf.source)
        self._translated[full] = tf

    def _compile_for(self, dtypes) -> None:
        args = tuple(from_dtype(np.dtype(d)) for d in dtypes)
        # Threads that miss the same types at once compile it once; others wait here.
        with self._compile_lock:
            if not any(sig.args == args for sig in self._translated):
                self.add(Signature(None, args))

    def inspect_cuda(self) -> dict:
        """Signature -> the CUDA C++ of the translated function (with its helpers)."""
        return {str(sig): tf.cuda_source for sig, tf in self._translated.items()}

    def inspect_ptx(self, cc=(9, 0)) -> dict:
        """Signature -> PTX of the translated function for compute capability ``cc``
        (NVRTC, no GPU needed)."""
        return {str(sig): device_ptx(self.py_func, sig, cc, self.fastmath)
                for sig in self._translated}

    def inspect_sass(self) -> dict:
        """Signature -> SASS of the loop's kernels for arrays of its own dtypes (the
        contiguous variant, then the 1-d strided one), from the CUBIN NVRTC builds for
        the current device (sm_90 with no device); no GPU needed. Needs the toolkit's
        cuobjdump or nvdisasm (see docs/user-guide/kernels.md, "Inspection")."""
        return {str(sig): _sass.sources_sass((self._variant_source(i, 0)[1],
                                              self._variant_source(i, 1)[1]), self.fastmath)
                for i, sig in enumerate(self._translated)}

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
               keepdims: bool = False, initial: Any = _NO_VALUE, where: Any = True,
               stream: Any = 0) -> Any:
        """NumPy's ``ufunc.reduce`` on the GPU, for a binary ufunc whose loop has one
        type for both inputs and the output. ``initial`` defaults to the ufunc's identity;
        an empty reduction with neither raises TypeError. ``where`` (a boolean mask that
        broadcasts to ``a``) leaves elements out, for a ufunc with an identity."""
        api = f"{self.__name__}.reduce"
        # The array alone is checked by the engine (_core.OverrideArgument, below).
        if (out is not None or where is not True) and \
                _protocol.foreign((a, *_protocol.outs(out), where)):
            return self._reduce_protocol(a, axis, dtype, out, keepdims, initial, where, stream)
        if self.nin != 2:
            if _protocol.foreign((a,)):  # NumPy asks the overrides first
                return self._reduce_protocol(a, axis, dtype, out, keepdims, initial, where,
                                             stream)
            raise ValueError(f"{api}(): reduce is only supported for binary functions "
                             f"(got a ufunc with {self.nin} input(s))")
        if where is not True:
            if _dask.is_dask_array(a):
                raise TypeError(f"{api}(): where= is not supported with Dask arrays")
            a = _methods.masked_for_reduce(self, a, where, initial is not _NO_VALUE, stream, api,
                                           _select_ufunc)
        engine = self.__dict__.get("_reducer")
        if engine is None:
            engine = _core.Reducer(self.__name__, self.target, self.fastmath)
            # Weak references: the engine lives in this ufunc's __dict__, and a closure over
            # the ufunc would make a cycle that keeps both (and their kernels) alive until
            # a full garbage collection.
            owner, eng = weakref.ref(self), weakref.ref(engine)
            engine._resolve = lambda dt: owner()._reduce_loop(eng(), np.dtype(dt), api)
            engine._protocol = True  # NumPy's protocol for arguments it does not take
            self._reducer = engine
        given_initial = initial
        if initial is _NO_VALUE:
            initial = None if self.identity in (None, "reorderable") else self.identity
        out = _methods._unwrap_out(out, api)  # NumPy's out=(array,)
        if dtype is None and out is not None:
            dtype = _methods.out_loop_dtype(input_dtype(a), out)
        if _methods._host_side(self) and not isinstance(a, np.ndarray) and \
                hasattr(a, "__cuda_array_interface__"):
            a, _, _ = _methods._operand(a, self)  # a host target reads host memory
        given_axis = axis
        if axis == 0 and (getattr(a, "ndim", None) == 0 or type(a) in (int, float, complex, bool)):
            axis = None  # NumPy accepts axis=0 for a 0-d array: it reduces the one element
        try:
            return engine._run(a, axis, None, None, out, initial, dtype, bool(keepdims), stream,
                               False, api)
        except _core.DaskArgument:
            if out is not None:
                raise TypeError(f"{api}(): out= is not supported with Dask arrays") from None
            return _dask.ufunc_reduce(self, a, axis, dtype, initial, bool(keepdims))
        except _core.OverrideArgument:
            return self._reduce_protocol(a, given_axis, dtype, out, keepdims, given_initial,
                                         where, stream)

    def _reduce_protocol(self, a, axis, dtype, out, keepdims, initial, where, stream):
        """reduce() through NumPy's protocol (_protocol.py): NEP 13, or NumPy's wrapping."""
        return _protocol.method(self, "reduce", (a,), _given(
            axis=(axis, 0), dtype=(dtype, None), out=(out, None), keepdims=(keepdims, False),
            initial=(initial, _NO_VALUE), where=(where, True), stream=(stream, 0)))

    def accumulate(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
                   stream: Any = 0) -> Any:
        """NumPy's ``ufunc.accumulate``: ``out[..., k] = f(out[..., k-1], a[..., k])`` along
        ``axis``. On the GPU long lines are scanned device-wide (cub::BlockScan tiles
        chained by CUB's decoupled look-back), which regroups the operations: the function
        must be associative."""
        if type(array) not in _ENGINE_ARRAYS or out is not None:
            if _protocol.foreign((array, *_protocol.outs(out))):
                return _protocol.method(self, "accumulate", (array,), _given(
                    axis=(axis, 0), dtype=(dtype, None), out=(out, None), stream=(stream, 0)))
            if _dask.is_dask_array(array):
                return _dask.ufunc_accumulate(self, array, axis, dtype, out, stream)
        return _methods.accumulate(self, array, axis, dtype, out, stream)

    def reduceat(self, array: Any, indices: Any, axis: Any = 0, dtype: Any = None,
                 out: Any = None, stream: Any = 0) -> Any:
        """NumPy's ``ufunc.reduceat``: a reduction of each segment
        ``a[indices[i]:indices[i+1]]`` along ``axis`` (``a[indices[i]]`` alone when the next
        index is not larger), folded left to right."""
        if (type(array) not in _ENGINE_ARRAYS or out is not None) and \
                (_protocol.foreign((array, *_protocol.outs(out))) or _dask.is_dask_array(array)):
            # A Dask array has no lazy reduceat: its __array_ufunc__ declines, as in NumPy.
            return _protocol.method(self, "reduceat", (array, indices), _given(
                axis=(axis, 0), dtype=(dtype, None), out=(out, None), stream=(stream, 0)))
        return _methods.reduceat(self, array, indices, axis, dtype, out, stream)

    def at(self, a: Any, indices: Any, b: Any = None, stream: Any = 0) -> None:
        """NumPy's ``ufunc.at``: ``a[indices] = f(a[indices], b)`` unbuffered, so a repeated
        index applies once per occurrence. On the GPU the updates of elements of up to 8
        bytes run in parallel as compare-and-swap loops (the function must be commutative
        and associative); complex128, and the host backend, apply them in order."""
        if (type(a) not in _ENGINE_ARRAYS or type(b) not in _ENGINE_ARRAYS) and \
                (_protocol.foreign((a, b)) or _dask.is_dask_array(a)):
            # Dask arrays are immutable: their __array_ufunc__ declines `at`, as in NumPy.
            args = (a, indices) if b is None else (a, indices, b)
            return _protocol.method(self, "at", args, _given(stream=(stream, 0)))
        return _methods.at(self, a, indices, b, stream)

    def outer(self, A: Any, B: Any, **kwargs: Any) -> Any:
        """NumPy's ``ufunc.outer``: ``f(A[i, ...], B[j, ...])`` for every pair, shape
        ``A.shape + B.shape``; takes the call's keywords."""
        if (type(A) not in _ENGINE_ARRAYS or type(B) not in _ENGINE_ARRAYS or kwargs) and \
                _protocol.applies((A, B), kwargs):
            return _protocol.method(self, "outer", (A, B), kwargs)
        if _dask.is_dask_array(A) or _dask.is_dask_array(B):
            return _dask.ufunc_outer(self, A, B, kwargs)
        return _methods.outer(self, A, B, **kwargs)

    def _call_keywords(self, args, kwargs):
        """A call with keywords beyond out= and stream= (the engine sends it here)."""
        if _protocol.applies(args, kwargs):
            return _protocol.call(self, args, kwargs)
        if any(_dask.is_dask_array(a) for a in args):
            return _dask.ufunc_call(self, args, kwargs)
        return call_with_keywords(self, args, kwargs)

    def _reduce_loop(self, engine, dt, api) -> int:
        """The reducer's loop for input dtype ``dt``: the first T(T, T) loop that ``dt``
        matches exactly, else casts to safely (NumPy's order); lazy ufuncs compile one."""
        def homogeneous():
            return [(sig, tf) for sig, tf in self._translated.items()
                    if sig.args[0] == sig.args[1] == sig.return_type]
        if not any(sig.args[0].dtype == dt for sig, _ in homogeneous()) and \
                self._lazy and (dt.kind in "biufc" or is_bfloat16_dtype(dt)):
            self._compile_for((dt, dt))
        for exact in (True, False):
            for sig, tf in homogeneous():
                t = sig.args[0].dtype
                if t == dt if exact else np.can_cast(dt, t, "safe"):
                    index = engine._find_loop(t)
                    return index if index >= 0 else engine._add_loop(t.str, tf.name, tf.source)
        raise TypeError(f"{api}(): no loop of the form T(T, T) accepts {dt} with safe casting; "
                        f"the loops are {self.types}")

    def _dask_call(self, *args, **kwargs):
        """The engine found a Dask array among the arguments: a lazy Dask array."""
        result = _protocol.dask_call_deferred(self, args, kwargs)
        if result is not _protocol.NOT_DEFERRED:
            return result
        return _dask.ufunc_call(self, args, kwargs)

    def _protocol_call(self, *args, **kwargs):
        """The engine found an argument NumPy's protocol concerns (an ndarray subclass,
        xarray, pandas...): NEP 13 overrides, else NumPy's __array_wrap__ (_protocol.py)."""
        return _protocol.call(self, args, kwargs)

    def __reduce__(self):
        # By name when the ufunc is a module global (the usual @vectorize); otherwise by
        # the function and its signatures (_pickling.py). Rebuilt, it compiles on first use.
        sigs = None if self._lazy else [str(s) for s in self._translated]
        return global_name(self) or (_rebuild, (function_ref(self.py_func), sigs, self.target, self.identity,
                                                self.fastmath, self.cache))

    def __repr__(self):
        return f"<numbacuda_ufunc.UFunc '{self.__name__}' target={self.target} types={self.types}>"


def _given(**pairs):
    """The keywords of a method call for ``__array_ufunc__``: ``name=(value, default)``
    pairs, less those at their default. (NumPy passes the keywords given, a default given
    explicitly too; overriders take NumPy's defaults, so the calls mean the same.)"""
    return {k: v for k, (v, default) in pairs.items() if v is not default and not (
        type(v) in (bool, int) and type(default) is type(v) and v == default)}


def _rebuild(pyfunc, signatures, target, identity, fastmath, cache):
    return UFunc(pyfunc, signatures, target, identity, fastmath, cache)


_core.install_fast_call(UFunc)


class UnsupportedOptionError(TypeError, KeyError):
    """An option the decorator does not take: a TypeError (as Python's for an unexpected
    keyword, and Numba's @guvectorize) and a KeyError (Numba's @vectorize)."""

    def __str__(self):  # KeyError's would quote the message
        return TypeError.__str__(self)


def _with_note(exc, note):
    if hasattr(exc, "add_note"):  # Python 3.11+: shown in tracebacks, not in str(exc)
        exc.add_note(note)
    else:
        exc.args = (f"{exc.args[0]} ({note})",)
    return exc


def check_options(api, options, allowed, target) -> None:
    """Numba's decorator options, with Numba's messages (tests compare them exactly; our
    explanation is the exception's note): an unknown option is refused, listing them;
    ``nopython=False`` is refused (the CUDA target has no object mode) and
    ``nopython=True`` on the cuda target warns that it is redundant."""
    bad = sorted(set(options) - set(allowed))
    if bad:
        names = ", ".join(repr(b) for b in bad)
        lead = "Unrecognized options. " if api == "vectorize()" else ""
        raise _with_note(UnsupportedOptionError(
            f"{lead}The following target options are not supported: {names}"),
            f"{api} got an unexpected option; it takes {', '.join(allowed)}")
    if "nopython" in options:
        if not options["nopython"]:
            raise _with_note(TypeError("nopython flag must be True"),
                             f"{api}: nopython=False is not supported: functions are always "
                             f"compiled in nopython mode")
        if target == "cuda":
            warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning,
                          stacklevel=3)


@overload
def vectorize(signatures: Callable[..., Any], /) -> UFunc: ...


@overload
def vectorize(signatures: SignatureSpec | None = None, target: str = "cuda",
              identity: Any = None, fastmath: bool = False, cache: bool = True,
              **options: Any) -> Callable[[Callable[..., Any]], UFunc]: ...


def vectorize(signatures: Any = None, target: str = "cuda", identity: Any = None,
              fastmath: bool = False, cache: bool = True, **options: Any) -> Any:
    """Make a ufunc from a scalar Python function (Numba's ``@vectorize``).

    ``@vectorize`` or ``@vectorize()`` is lazy: a loop is compiled for each new tuple of
    input dtypes. With signatures the loops are translated at decoration and compiled at
    their first use.

    Parameters
    ----------
    signatures : str, type signature or list of them, optional
        The loops, in the order loop selection tries them: ``"float32(float32, float32)"``,
        ``"f8(f8)"``, ``float32(float32)`` or ``"(f8, f8)"`` (return type inferred).
    target : {'cuda', 'cpu', 'parallel'}, optional
        ``"cuda"`` (default): the GPU, or the host backend under
        ``NUMBACUDA_UFUNC_ENABLE_CUDASIM=1``; ``"cpu"``: the host, one thread;
        ``"parallel"``: the host, all cores.
    identity : scalar, optional
        The ufunc's ``identity`` (``0``, ``1``, ``"reorderable"``, None or another number), used by
        ``reduce`` for empty reductions and ``where=``.
    fastmath : bool, optional
        Relax IEEE semantics (NVRTC ``--use_fast_math``; contraction into FMAs).
    cache : bool, optional
        Accepted for Numba's sake: compiled kernels are always cached.
    **options
        Numba's other options that apply (``nopython``...); unknown ones raise.

    Returns
    -------
    UFunc or callable
        The ufunc, or (with signatures) a decorator that makes it. ``help()`` of the ufunc
        shows its call signature and keywords.

    See Also
    --------
    guvectorize, reduce

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import vectorize
    >>> @vectorize(["float64(float64, float64)"])
    ... def hypot2(a, b):
    ...     return a * a + b * b
    >>> hypot2(np.array([3.0, 5.0]), 4.0)
    array([25., 41.])
    """
    check_options("vectorize()", options, _OPTIONS, target)
    if callable(signatures) and not isinstance(signatures, (str, Signature)):
        return UFunc(signatures, None, target, identity, fastmath, cache)  # bare @vectorize

    def decorate(pyfunc):
        return UFunc(pyfunc, signatures, target, identity, fastmath, cache)

    return decorate


# ---- reduce(where=...) -------------------------------------------------------------------

_SELECTS = {}  # target -> the lazy select ufunc of that target


def _select_ufunc(target):
    """``x if m else fill`` as a lazy ufunc of ``target``: the mask is applied where the
    data is (on the device for device arrays), never through the host."""
    uf = _SELECTS.get(target)
    if uf is None:
        def nu_where_select(m, x, fill):
            return x if m else fill

        uf = _SELECTS[target] = vectorize(target=target)(nu_where_select)
    return uf
