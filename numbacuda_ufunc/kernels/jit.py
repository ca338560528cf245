"""Numba's ``cuda.jit`` decorator: a :class:`~numbacuda_ufunc.kernels.kernel.Kernel` for
``device=False``, a :class:`~numbacuda_ufunc.kernels.device_function.DeviceFunction` for
``device=True``; its options default to ``cuda.config``'s settings."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal, overload

from .. import config
from ..errors import NumbaInvalidConfigWarning
from ..types import (
    Signature,
    SignatureSpec,
)
from .device_function import DeviceFunction
from .kernel import Kernel, _carveout_percent

__all__ = ["jit"]

_IGNORED_OPTIONS = {"inline", "opt", "_dbg_optnone", "forceinline", "max_registers",
                    "boundscheck", "lto"}


@overload
def jit(func_or_sig: Callable[..., Any], device: Literal[False] = False,
        debug: bool | None = None, fastmath: bool = False, **options: Any) -> Kernel: ...


@overload
def jit(func_or_sig: Callable[..., Any], device: Literal[True],
        debug: bool | None = None, fastmath: bool = False, **options: Any) -> DeviceFunction: ...


@overload
def jit(func_or_sig: SignatureSpec | None = None, device: Literal[False] = False,
        debug: bool | None = None, fastmath: bool = False,
        **options: Any) -> Callable[[Callable[..., Any]], Kernel]: ...


@overload
def jit(func_or_sig: SignatureSpec | None = None, *, device: Literal[True],
        debug: bool | None = None, fastmath: bool = False,
        **options: Any) -> Callable[[Callable[..., Any]], DeviceFunction]: ...


def jit(func_or_sig: Any = None, device: bool = False, debug: bool | None = None,
        fastmath: bool = False, **options: Any) -> Any:
    """Compile a Python function as a CUDA kernel or device function (Numba's ``cuda.jit``).

    Parameters
    ----------
    func_or_sig : callable, str, type signature or list of them, optional
        The function (``@jit``), or the signatures to compile eagerly
        (``@jit("void(float32[:], float32[:])")``); without signatures a specialization is
        compiled for each new tuple of argument types.
    device : bool, optional
        True: a device function, callable from kernels, device functions and ufuncs.
    debug : bool, optional
        Bounds checks on the GPU and exceptions reported on the host (default
        ``cuda.config.CUDA_DEBUGINFO_DEFAULT``). With ``opt`` on it gives Numba's
        ``NumbaInvalidConfigWarning``.
    fastmath : bool, optional
        Relax IEEE semantics (NVRTC ``--use_fast_math``).
    **options
        ``link`` (files or code objects to link), ``lineinfo``, ``launch_bounds``,
        ``cache`` (keep translations in files), ``extensions``, ``opt`` (default
        ``cuda.config.OPT``), ``shared_memory_carveout``; Numba's ``inline``,
        ``max_registers``, ``lto`` ... are accepted and change nothing.

    Returns
    -------
    Kernel, DeviceFunction or callable
        The kernel (launch it with ``kernel[griddim, blockdim](*args)``; ``help()`` of it
        shows how), the device function, or a decorator that makes one.

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import cuda
    >>> @cuda.jit
    ... def add_one(a):
    ...     i = cuda.grid(1)
    ...     if i < a.size:
    ...         a[i] += 1
    >>> a = np.zeros(4)
    >>> add_one[1, 32](a)
    >>> a
    array([1., 1., 1., 1.])
    """

    if debug is None:
        debug = bool(getattr(config, "CUDA_DEBUGINFO_DEFAULT", 0))
    opt = options.pop("opt", None)
    if opt is None:
        opt = getattr(config, "OPT", 3) != 0
    if debug and opt:
        warnings.warn("debug=True with opt=True is not supported by CUDA: Numba warns that "
                      "it may crash there; set debug=False or opt=False (numbacuda_ufunc "
                      "compiles it: debug adds bounds checks, opt changes nothing)",
                      NumbaInvalidConfigWarning, stacklevel=2)
    if "nopython" in options:
        if not options.pop("nopython"):
            raise NotImplementedError("cuda.jit(): nopython=False is not supported: CUDA "
                                      "kernels and device functions are always compiled in "
                                      "nopython mode")
        warnings.warn("nopython kwarg for cuda target is redundant", RuntimeWarning,
                      stacklevel=2)
    extensions = options.pop("extensions", None) or ()
    link = options.pop("link", None)
    cache = bool(options.pop("cache", False))
    lineinfo = bool(options.pop("lineinfo", False))
    launch_bounds = options.pop("launch_bounds", None)
    carveout = options.pop("shared_memory_carveout", None)
    if carveout is not None:
        _carveout_percent(carveout)  # Numba checks it at decoration
    if debug and lineinfo:
        warnings.warn("debug and lineinfo are mutually exclusive. Use debug to get full debug "
                      "info (this disables some optimizations), or lineinfo for line info only "
                      "with code generation unaffected.", NumbaInvalidConfigWarning, stacklevel=2)
    # A device function has no launch: like Numba, its launch_bounds (and lineinfo, which
    # the calling kernel decides) change nothing.
    unknown = set(options) - _IGNORED_OPTIONS
    if unknown:
        raise TypeError(f"cuda.jit(): unexpected keyword argument '{min(unknown)}'")
    if callable(func_or_sig) and hasattr(func_or_sig, "__code__"):
        if device:
            return DeviceFunction(func_or_sig, fastmath=fastmath, link=link, cache=cache)
        return Kernel(func_or_sig, debug=debug, fastmath=fastmath, extensions=extensions,
                      link=link, lineinfo=lineinfo, launch_bounds=launch_bounds,
                      shared_memory_carveout=carveout, cache=cache)
    sigs = _signatures_of(func_or_sig)

    def decorate(fn):
        if device:
            return DeviceFunction(fn, sigs, fastmath=fastmath, link=link, cache=cache)
        k = Kernel(fn, sigs, debug=debug, fastmath=fastmath, extensions=extensions,
                   link=link, lineinfo=lineinfo, launch_bounds=launch_bounds,
                   shared_memory_carveout=carveout, cache=cache)
        # One signature (not a list of them) makes a specialized kernel, as in Numba.
        k._specialized = sigs == (func_or_sig,)
        return k

    return decorate



def _signatures_of(func_or_sig) -> tuple:
    """Numba's reading of jit's first argument: a list holds signatures; a string, a
    Signature or a tuple of types is one signature (``cuda.jit((float32[::1],))`` declares
    one kernel taking one array). A tuple made only of Signatures or of strings with
    parentheses (``("void(f4[:])", "void(f8[:])")``) cannot be argument types, so it is
    read as several signatures."""
    if func_or_sig is None:
        return ()
    if isinstance(func_or_sig, list):
        return tuple(func_or_sig)
    if isinstance(func_or_sig, tuple) and func_or_sig and all(
            isinstance(s, Signature) or isinstance(s, str) and "(" in s
            for s in func_or_sig):
        return func_or_sig
    return (func_or_sig,)
