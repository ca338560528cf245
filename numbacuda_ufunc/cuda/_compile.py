"""Numba's ``cuda.compile``, ``compile_all``, ``compile_ptx`` and their
``_for_current_device`` forms: a device function or a kernel, translated and built by
NVRTC without a GPU. A kernel's source comes from :class:`Kernel` (the kernel layer); the
build itself is ``toolchain/_compile.py``'s."""

from __future__ import annotations

from ..compiler import translate, translate_kernel
from ..compiler._linking import LinkableCode
from ..compiler._source import load_source
from ..compiler.translate import line_directive
from ..errors import CompileError
from ..kernels.kernel import Kernel
from ..toolchain._compile import _compile, _compile_cu, _default_cc
from ..types import void

__all__ = ["compile", "compile_all", "compile_for_current_device", "compile_ptx",
           "compile_ptx_for_current_device"]


def compile(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
            opt=None, abi=None, abi_info=None, output="ptx", forceinline=False,
            launch_bounds=None):
    """Numba's ``cuda.compile``: ``(code, return_type)`` for ``pyfunc`` at ``sig``.

    ``output`` is ``"ptx"`` (text), ``"ltoir"`` (LTO IR bytes for nvJitLink) or
    ``"cubin"`` (bytes for ``sm_XY``). ``device=True`` (the default, as in Numba) exports a
    device function: with ``abi="c"`` (its default) under the Python name (or
    ``abi_info["abi_name"]``), with ``abi="numba"`` under its generated symbol plus
    ``_export``. ``device=False`` compiles a kernel (``abi="numba"``; the C ABI is refused
    for kernels, as in Numba), which must not return a value. ``debug``/``lineinfo`` add
    debug or line information naming the Python file and lines; ``launch_bounds`` sets the
    kernel's ``__launch_bounds__``; ``cc`` may be ``(9, 0, "a")``. No GPU is needed."""
    c = _compile("compile()", pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi,
                 abi_info, output, forceinline, launch_bounds, kernel_unit=_kernel_unit)
    return c.code, c.resty

def compile_all(pyfunc, sig, debug=None, lineinfo=False, device=True, fastmath=False, cc=None,
                opt=None, abi=None, abi_info=None, output="ltoir", forceinline=False,
                launch_bounds=None):
    """Numba's ``cuda.compile_all``: ``([code, *linked], return_type)``: the function's
    PTX text or LTO IR bytes (``output="ptx"`` or ``"ltoir"``, the default) followed by
    what it must be linked with: the files given to ``cuda.declare_device(link=...)`` for
    the functions it calls and to ``cuda.jit(link=...)``. CUDA C++ ones (``.cu`` files,
    ``cuda.CUSource``) are compiled by NVRTC to the same output (a ``cuda.PTXSource`` or
    ``cuda.LTOIR``, with the same ``lineinfo``/``debug``); the others are returned as
    ``cuda.LinkableCode`` objects of their kind. Otherwise as ``compile``."""
    api = "compile_all()"
    c = _compile(api, pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt, abi, abi_info,
                 output, forceinline, launch_bounds, outputs=("ptx", "ltoir"),
                 kernel_unit=_kernel_unit)
    codes = [c.code]
    for item in c.links:
        obj = LinkableCode.from_path_or_obj(item)
        if obj.kind != "cu":
            codes.append(obj)
            continue
        codes.append(_compile_cu(obj, item, output, debug, lineinfo, opt, cc, api))
    return codes, c.resty

def _kernel_unit(fn, s, debug, fastmath, line_info, bounds, link, api):
    if s.return_type is not None and s.return_type is not void:
        raise CompileError(f"{api}: CUDA kernel must have void return type: a kernel "
                           f"(device=False) must not return a value (got {s.return_type})")
    try:
        tk = translate_kernel(fn, s.args, line_info=line_info, internal_linkage=True)
    except CompileError as exc:
        if "returns a value" not in str(exc):
            raise
        rt = translate(fn, s.args).return_type
        raise CompileError(f"{api}: CUDA kernel must have void return type: a kernel "
                           f"(device=False) must not return a value (got {rt})") from None
    k = Kernel(fn, debug=debug, fastmath=fastmath, link=link)
    source = k._source(k._add(tk), False)
    entry = source.rindex("NU_KERNEL_ENTRY(")
    before = ""
    if bounds is not None:
        before += f"#undef NU_LAUNCH_BOUNDS\n#define NU_LAUNCH_BOUNDS __launch_bounds__({bounds})\n"
    if line_info:
        # The entry point is the Python kernel: its own code (the prologue, the return)
        # maps to the def line, as the rest of the kernel maps to the lines of its body.
        src = load_source(fn)
        before += line_directive(src.filename, src.node.lineno + src.line_offset) + "\n"
    return source[:entry] + before + source[entry:], void, tk.links

def compile_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=True,
                               fastmath=False, opt=None, abi=None, abi_info=None,
                               output="ptx", forceinline=False, launch_bounds=None):
    """``compile`` for the current device's compute capability (sm_90 without one)."""
    return compile(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                   fastmath=fastmath, cc=_default_cc(), opt=opt, abi=abi, abi_info=abi_info,
                   output=output, forceinline=forceinline, launch_bounds=launch_bounds)

def compile_ptx(pyfunc, sig, debug=None, lineinfo=False, device=False, fastmath=False,
                cc=None, opt=None, abi="numba", abi_info=None, forceinline=False,
                launch_bounds=None, **options):
    """Numba's ``cuda.compile_ptx``: ``(ptx, return_type)``. ``device=False`` (Numba's
    default) compiles a kernel (return type ``void``; it must not return a value),
    ``device=True`` a ``.visible .func``. No GPU is needed."""
    bad = set(options) - {"output"}
    if bad:
        raise TypeError(f"compile_ptx(): unexpected keyword argument '{min(bad)}'")
    if options.get("output", "ptx") != "ptx":
        raise TypeError("compile_ptx(): only output='ptx' is supported (use cuda.compile "
                        "for LTO IR or CUBIN)")
    c = _compile("compile_ptx()", pyfunc, sig, debug, lineinfo, device, fastmath, cc, opt,
                 abi, abi_info, "ptx", forceinline, launch_bounds, kernel_unit=_kernel_unit)
    return c.code, c.resty

def compile_ptx_for_current_device(pyfunc, sig, debug=None, lineinfo=False, device=False,
                                   fastmath=False, opt=None, abi="numba", abi_info=None,
                                   forceinline=False, launch_bounds=None, **options):
    """``compile_ptx`` for the current device's compute capability."""
    return compile_ptx(pyfunc, sig, debug=debug, lineinfo=lineinfo, device=device,
                       fastmath=fastmath, cc=_default_cc(), opt=opt, abi=abi,
                       abi_info=abi_info, forceinline=forceinline,
                       launch_bounds=launch_bounds, **options)
