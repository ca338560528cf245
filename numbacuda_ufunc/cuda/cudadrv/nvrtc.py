"""Numba's ``numba.cuda.cudadrv.nvrtc``, over the NVRTC our engine loads: its version, the
compute capabilities it targets, and ``compile`` of CUDA C++ to PTX or LTO IR.

NVRTC is loaded at the first call, not at import. ``compile`` returns the code itself
(PTX text or LTO IR bytes) and a log, where Numba returns a ``cuda.core`` ObjectCode."""

from __future__ import annotations

from ...toolchain._compile import compile_cuda_source, core
from .error import CCSupportError

__all__ = ["compile", "find_closest_arch", "get_arch_option", "get_lowest_supported_cc",
           "get_supported_ccs", "get_version"]


def get_version() -> tuple:
    """``(major, minor)`` of NVRTC."""
    return tuple(core().nvrtc_version())


_get_nvrtc_version = get_version  # Numba's name


def get_supported_ccs() -> list:
    """The compute capabilities NVRTC compiles for, ascending: ``[(7, 5), (8, 0), ...]``."""
    return sorted((a // 10, a % 10) for a in core().nvrtc_supported_archs())


def get_lowest_supported_cc() -> tuple:
    return get_supported_ccs()[0]


def find_closest_arch(cc) -> tuple:
    """The newest compute capability NVRTC supports that is not above ``cc``
    (``CCSupportError`` when ``cc`` is below them all)."""
    cc = tuple(cc[:2])
    supported = get_supported_ccs()
    below = [s for s in supported if s <= cc]
    if not below:
        low = supported[0]
        raise CCSupportError(f"find_closest_arch(): GPU compute capability {cc[0]}.{cc[1]} is "
                             f"not supported (requires >={low[0]}.{low[1]})")
    return below[-1]


def get_arch_option(major, minor, arch="") -> str:
    """``compute_XY`` (or ``compute_XYa``) for the closest supported architecture."""
    found = find_closest_arch((major, minor))
    if arch and found != (major, minor):
        raise ValueError(f"get_arch_option(): Can't use arch-specific compute_{major}{minor}"
                         f"{arch} with closest found compute capability "
                         f"compute_{found[0]}{found[1]}")
    return f"compute_{found[0]}{found[1]}{arch}"


def compile(src, name, cc, ltoir=False, lineinfo=False, debug=False):
    """CUDA C++ ``src`` (named ``name`` in messages and line information) -> ``(code,
    log)``: PTX text, or LTO IR bytes with ``ltoir=True``, for ``cc`` = ``(major, minor)``
    or ``(major, minor, "a"|"f")``. Relocatable, with the toolkit's headers on the include
    path; a failure is ``CompileError`` carrying NVRTC's log."""
    if isinstance(src, bytes):
        src = src.decode("utf-8")
    code = compile_cuda_source(src, name, cc, "ltoir" if ltoir else "ptx", lineinfo=lineinfo,
                               debug=debug, opt=not debug, api="nvrtc.compile()")
    return code, ""
