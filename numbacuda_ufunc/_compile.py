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
from .types import Array, CPointer, Scalar, Signature, parse_signature, void

__all__ = ["DEFAULT_CC", "compile", "compile_for_current_device", "compile_ptx",
           "compile_ptx_for_current_device", "core"]

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
        for sub in ("cuda_nvrtc/lib", "nvjitlink/lib", "cu13/lib", "cu12/lib"):
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


_OUTPUTS = ("ptx", "ltoir", "cubin")


def compile(pyfunc, sig, debug=False, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=True, abi="c", abi_info=None, output="ptx", **options):
    """Numba's ``cuda.compile``: ``(code, return_type)`` for ``pyfunc`` at ``sig``.

    ``output`` is ``"ptx"`` (text), ``"ltoir"`` (LTO IR bytes for nvJitLink) or
    ``"cubin"`` (bytes for ``sm_XY``). ``device=True`` (the default here, as in Numba)
    exports a device function: with ``abi="c"`` under the Python name (or
    ``abi_info["abi_name"]``), with ``abi="numba"`` under its generated symbol plus
    ``_export``. ``device=False`` compiles a kernel, which must not return a value.
    No GPU is needed."""
    bad = set(options) - {"forceinline", "launch_bounds", "lto", "max_registers"}
    if bad:
        raise TypeError(f"compile(): unexpected keyword argument '{min(bad)}'")
    if output not in _OUTPUTS:
        raise TypeError(f"compile(): output must be one of {', '.join(_OUTPUTS)} "
                        f"(got {output!r})")
    if abi not in ("c", "numba"):
        raise TypeError(f"compile(): abi must be 'c' or 'numba' (got {abi!r})")
    fn = getattr(pyfunc, "py_func", pyfunc)
    s = parse_signature(sig)
    for a in s.args:
        if not isinstance(a, (Scalar, Array, CPointer)):
            raise CompileError(f"compile(): argument types must be scalar, array or pointer "
                               f"(CPointer) types (got {a})")
    cc = tuple(cc) if cc is not None else _default_cc()
    if len(cc) != 2:
        raise TypeError(f"compile(): cc must be (major, minor) (got {cc!r})")
    if device:
        source, resty = _device_unit(fn, s, abi, abi_info)
        extra = ["-rdc=true"]  # keeps an unreferenced extern device function
    else:
        source, resty = _kernel_unit(fn, s)
        extra = []
    if output == "ptx":
        return core().compile_ptx(source, cc, fastmath, extra), resty
    if output == "ltoir":
        extra = sorted(set(extra) | {"-rdc=true", "-dlto"})
    return core().compile_cubin(source, cc, fastmath, extra), resty


def _device_unit(fn, s, abi, abi_info):
    ret = s.return_type if isinstance(s.return_type, Scalar) else None
    tf = translate(fn, s.args, return_type=ret)
    params = ", ".join(f"{ctype(t)} a{i}" for i, t in enumerate(s.args))
    call = f"{tf.name}({', '.join(f'a{i}' for i in range(len(s.args)))})"
    name = f"{tf.name}_export"
    if abi == "c":
        name = (abi_info or {}).get("abi_name", fn.__name__)
        if not name.isidentifier() or not name.isascii():
            raise CompileError(f"compile(): abi_name must be a C identifier (got {name!r})")
    rt = ctype(tf.return_type)
    body = f"return {call};" if tf.return_type is not None else f"{call};"
    wrapper = f'extern "C" __device__ {rt} {name}({params}) {{ {body} }}\n'
    return HEADER + tf.source + wrapper, (tf.return_type if tf.return_type is not None
                                          else void)


def _kernel_unit(fn, s):
    from .kernel import Kernel  # imports _core: only when a kernel is compiled

    if s.return_type is not None:
        raise CompileError(f"compile_ptx(): a kernel (device=False) must not return a value "
                           f"(got {s.return_type})")
    try:
        k = Kernel(fn, [Signature(None, s.args)])
    except CompileError as exc:
        if "returns a value" not in str(exc):
            raise
        rt = translate(fn, s.args).return_type
        raise CompileError(f"compile_ptx(): a kernel (device=False) must not return a value "
                           f"(got {rt})") from None
    return k._source(0, False), void


def compile_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=True,
                               fastmath=False, opt=True, abi="c", abi_info=None,
                               output="ptx", **options):
    """``compile`` for the current device's compute capability (sm_90 without one)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=_default_cc(), opt=opt, abi=abi, abi_info=abi_info,
                   output=output, **options)


def compile_ptx(pyfunc, sig, debug=False, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=True, abi="numba", abi_info=None, **options):
    """Numba's ``cuda.compile_ptx``: ``(ptx, return_type)``. ``device=False`` (Numba's
    default) compiles a kernel (return type ``void``; it must not return a value),
    ``device=True`` a ``.visible .func``. No GPU is needed."""
    bad = set(options) - {"output", "forceinline", "launch_bounds"}
    if bad:
        raise TypeError(f"compile_ptx(): unexpected keyword argument '{min(bad)}'")
    if options.pop("output", "ptx") != "ptx":
        raise TypeError("compile_ptx(): only output='ptx' is supported (use cuda.compile "
                        "for LTO IR or CUBIN)")
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=cc, opt=opt, abi=abi, abi_info=abi_info,
                   output="ptx", **options)


def compile_ptx_for_current_device(pyfunc, sig, debug=False, lineinfo=False, device=False,
                                   fastmath=False, opt=True, abi="numba", abi_info=None,
                                   **options):
    """``compile_ptx`` for the current device's compute capability."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=_default_cc(), opt=opt, abi=abi,
                       abi_info=abi_info, **options)
