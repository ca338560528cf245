"""The run-time settings of Numba's ``numba.cuda.core.config`` that numbacuda_ufunc
honours, by Numba's names. Each starts from ``NUMBACUDA_UFUNC_<NAME>`` (or Numba's
``NUMBA_<NAME>``) in the environment and may be assigned at run time
(``cuda.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0``); the launch path reads the new value
from then on.

* ``CUDA_LOW_OCCUPANCY_WARNINGS`` (default 1): ``kernel[grid, block]`` with fewer than
  128 blocks (Numba's fixed threshold) issues a ``NumbaPerformanceWarning``.
* ``CUDA_WARN_ON_IMPLICIT_COPY`` (default 1): a kernel launch given a host NumPy array
  (copied to the device and back on a GPU) issues a ``NumbaPerformanceWarning``; device,
  mapped and managed arrays do not.
* ``CUDA_ARRAY_INTERFACE_SYNC`` (default 1): importing a ``__cuda_array_interface__``
  object waits for work on the stream it names.
* ``CUDA_DEBUGINFO_DEFAULT`` (default 0) and ``OPT`` (default 3): ``cuda.jit``'s defaults
  for ``debug`` and ``opt``; ``debug`` and ``opt`` both on give Numba's
  ``NumbaInvalidConfigWarning``.
* ``CACHE_DIR`` (default "", from ``NUMBA_CACHE_DIR`` only): where ``cuda.jit(cache=True)``
  keeps its files instead of the ``__pycache__`` folder beside the source.
* ``ALWAYS_WARN_UNINIT_VAR`` (default 0): translating a function that may read a local
  before any assignment on some path issues a ``NumbaWarning`` ("Detected uninitialized
  variable x"), as Numba's SSA pass does with this setting.
* ``CUDA_NVRTC_EXTRA_SEARCH_PATHS`` (default ``""``): include directories, separated by
  ``:``, for the CUDA C++ files that kernels link (``link=``) and ``cuda.compile`` builds,
  searched after the file's own directory; read when a kernel is compiled.
"""

from __future__ import annotations

import os
import sys
import types

from . import _core

__all__ = ["ALWAYS_WARN_UNINIT_VAR", "CACHE_DIR", "CUDA_ARRAY_INTERFACE_SYNC",
           "CUDA_DEBUGINFO_DEFAULT", "CUDA_LOW_OCCUPANCY_WARNINGS",
           "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "CUDA_WARN_ON_IMPLICIT_COPY", "OPT"]


def _from_environment(name, default):
    for key in (f"NUMBACUDA_UFUNC_{name}", f"NUMBA_{name}"):
        text = os.environ.get(key, "").strip()
        if text:
            if text.lower() in ("0", "false", "no", "off"):
                return 0
            if text.lower() in ("1", "true", "yes", "on"):
                return 1
            try:
                return int(text)
            except ValueError:
                raise ValueError(f"environment variable {key} must be an integer or a "
                                 f"boolean (got {text!r})") from None
    return default


CUDA_LOW_OCCUPANCY_WARNINGS = _from_environment("CUDA_LOW_OCCUPANCY_WARNINGS", 1)
CUDA_WARN_ON_IMPLICIT_COPY = _from_environment("CUDA_WARN_ON_IMPLICIT_COPY", 1)
CUDA_ARRAY_INTERFACE_SYNC = _from_environment("CUDA_ARRAY_INTERFACE_SYNC", 1)
CUDA_DEBUGINFO_DEFAULT = _from_environment("CUDA_DEBUGINFO_DEFAULT", 0)
OPT = _from_environment("OPT", 3)
# Numba's NUMBA_CACHE_DIR only: NUMBACUDA_UFUNC_CACHE_DIR is the engine's kernel cache.
CACHE_DIR = os.environ.get("NUMBA_CACHE_DIR", "")
ALWAYS_WARN_UNINIT_VAR = _from_environment("ALWAYS_WARN_UNINIT_VAR", 0)
CUDA_NVRTC_EXTRA_SEARCH_PATHS = (os.environ.get("NUMBACUDA_UFUNC_CUDA_NVRTC_EXTRA_SEARCH_PATHS")
                                 or os.environ.get("NUMBA_CUDA_NVRTC_EXTRA_SEARCH_PATHS", ""))


def extra_search_paths() -> list:
    """``CUDA_NVRTC_EXTRA_SEARCH_PATHS`` as a list of directories (empty entries dropped)."""
    value = getattr(sys.modules[__name__], "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "") or ""
    if not isinstance(value, str):
        raise TypeError(f"cuda.config.CUDA_NVRTC_EXTRA_SEARCH_PATHS must be a string of "
                        f"directories separated by ':' (got {value!r})")
    return [d for d in value.split(":") if d]

_ENGINE_SETTINGS = ("CUDA_LOW_OCCUPANCY_WARNINGS", "CUDA_WARN_ON_IMPLICIT_COPY",
                    "CUDA_ARRAY_INTERFACE_SYNC")


def _push(module) -> None:
    """Hand the settings the C++ launch path reads to it (a deleted one is off); the
    translator reads ALWAYS_WARN_UNINIT_VAR from this module itself."""
    _core.set_launch_warnings(bool(getattr(module, "CUDA_LOW_OCCUPANCY_WARNINGS", 0)),
                              bool(getattr(module, "CUDA_WARN_ON_IMPLICIT_COPY", 0)))
    _core.set_cai_sync(bool(getattr(module, "CUDA_ARRAY_INTERFACE_SYNC", 0)))


class _ConfigModule(types.ModuleType):
    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name in _ENGINE_SETTINGS:
            _push(self)

    def __delattr__(self, name):
        super().__delattr__(name)
        if name in _ENGINE_SETTINGS:
            _push(self)


sys.modules[__name__].__class__ = _ConfigModule
_push(sys.modules[__name__])
