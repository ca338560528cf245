"""Compiling translated functions with the C++ engine: ``compile_ptx`` (Numba's form) and
the NVRTC/host-build plumbing shared by the decorators. Lives outside ``compiler/`` so the
translator never imports ``_core``."""

from __future__ import annotations

import importlib.util
import os
import threading

from .compiler import HEADER, translate
from .compiler._types import ctype
from .errors import CompileError
from .types import Array, Scalar, parse_signature

__all__ = ["DEFAULT_CC", "compile_ptx", "core"]

# Used when no device is present and no cc is given: the newest architecture that every
# supported NVRTC (CUDA 12.0+) can target.
DEFAULT_CC = (9, 0)

_setup_lock = threading.Lock()
_core_module = None


def _wheel_dirs():
    """Library and include directories of the nvidia-cuda-nvrtc / nvidia-cuda-cccl wheels."""
    libs, incs = [], []
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    for root in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cuda_nvrtc/lib", "cu13/lib", "cu12/lib"):
            if os.path.isdir(os.path.join(root, sub)):
                libs.append(os.path.join(root, sub))
        for sub in ("cuda_cccl/include", "cu13/include/cccl", "cu13/include", "cu12/include"):
            if os.path.isdir(os.path.join(root, sub)):
                incs.append(os.path.join(root, sub))
    return libs, incs


def core():
    """The C++ engine, with the wheel search paths configured once."""
    global _core_module
    if _core_module is None:
        with _setup_lock:
            if _core_module is None:
                from . import _core

                _core.set_wheel_search_paths(*_wheel_dirs())
                _core_module = _core
    return _core_module


def _default_cc():
    cur = getattr(core(), "current_device_cc", None)  # provided by the runtime when present
    if cur is not None:
        try:
            return tuple(cur())
        except RuntimeError:  # CudaSupportError/CudaError: no usable device
            return DEFAULT_CC
    return DEFAULT_CC


def compile_ptx(pyfunc, sig, device=True, cc=None, fastmath=False, **options):
    """Numba's ``cuda.compile_ptx``: PTX for ``pyfunc`` at signature ``sig`` and its return
    type. ``device=True`` gives a ``.visible .func``, ``device=False`` a kernel (which,
    as in Numba, must not return a value). No GPU is needed."""
    bad = set(options) - {"debug", "lineinfo", "opt", "abi", "abi_info", "output"}
    if bad:
        raise TypeError(f"compile_ptx(): unexpected keyword argument '{min(bad)}'")
    if options.get("output", "ptx") != "ptx":
        raise TypeError(f"compile_ptx(): only output='ptx' is supported "
                        f"(got {options['output']!r})")
    fn = getattr(pyfunc, "py_func", pyfunc)
    s = parse_signature(sig)
    for a in s.args:
        if not isinstance(a, (Scalar, Array)):
            raise CompileError(f"compile_ptx(): argument types must be scalar or array types "
                               f"(got {a})")
    ret = s.return_type if isinstance(s.return_type, Scalar) else None
    tf = translate(fn, s.args, return_type=ret)
    cc = tuple(cc) if cc is not None else _default_cc()
    if len(cc) != 2:
        raise TypeError(f"compile_ptx(): cc must be (major, minor) (got {cc!r})")
    params = ", ".join(f"{ctype(t)} a{i}" for i, t in enumerate(s.args))
    call = f"{tf.name}({', '.join(f'a{i}' for i in range(len(s.args)))})"
    if device:
        rt = ctype(tf.return_type)
        body = f"return {call};" if tf.return_type is not None else f"{call};"
        wrapper = f'extern "C" __device__ {rt} {tf.name}_export({params}) {{ {body} }}\n'
    else:
        if tf.return_type is not None:
            raise CompileError(f"compile_ptx(): a kernel (device=False) must not return a "
                               f"value (got {tf.return_type})")
        wrapper = f'extern "C" __global__ void {tf.name}_kernel({params}) {{ {call}; }}\n'
    # -rdc keeps an unreferenced extern device function in the PTX.
    extra = ["-rdc=true"] if device else []
    ptx = core().compile_ptx(HEADER + tf.source + wrapper, cc, fastmath, extra)
    return ptx, tf.return_type
