"""NVRTC, nvJitLink and the CUDA/CCCL headers from pip wheels (the ``cu12``/``cu13`` extras),
found through the installed distributions' file lists (importlib.metadata), never by
guessing site-packages paths. The engine searches these after the toolkit directories
($NUMBACUDA_UFUNC_CUDA_HOME, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda)."""

from __future__ import annotations

import importlib.metadata as metadata
import os
from pathlib import PurePosixPath

__all__ = ["WHEELS", "origin", "wheel_dirs"]

# Distributions per extra, newest CUDA first: the engine picks among the NVRTCs found by the
# driver's version, so both may be installed side by side.
WHEELS = {
    "cu13": ("nvidia-cuda-nvrtc", "nvidia-nvjitlink", "nvidia-cuda-cccl", "nvidia-cuda-runtime"),
    "cu12": ("nvidia-cuda-nvrtc-cu12", "nvidia-nvjitlink-cu12", "nvidia-cuda-cccl-cu12",
             "nvidia-cuda-runtime-cu12"),
}

# A file whose directory the engine needs: shared libraries, and the include directory that
# holds each marker header (CCCL's cub/, the runtime's cuda_runtime.h and cuda_fp8.h).
_LIBRARY_PREFIXES = ("libnvrtc.so.", "libnvJitLink.so.")
_INCLUDE_MARKERS = {("cub", "cub.cuh"): 2, ("cuda_runtime.h",): 1}


def _dirs_of(dist) -> tuple[list[str], list[str], list[str]]:
    """(library folders, include folders, the libraries themselves) of one distribution."""
    libs, incs, files = [], [], []
    for f in dist.files or ():
        parts = PurePosixPath(str(f)).parts
        if parts and parts[-1].startswith(_LIBRARY_PREFIXES) and "lib" in parts[:-1]:
            libs.append(str(dist.locate_file(PurePosixPath(*parts[:-1]))))
            files.append(str(dist.locate_file(f)))
        for marker, depth in _INCLUDE_MARKERS.items():
            if parts[-len(marker):] == marker and len(parts) > depth:
                incs.append(str(dist.locate_file(PurePosixPath(*parts[:-depth]))))
    return libs, incs, files


def wheel_dirs() -> tuple[list[str], list[str], list[tuple[str, str, list[str]]]]:
    """(library directories, include directories, [(distribution, version, its folders and
    libraries)]) of the CUDA wheels installed, cu13's before cu12's, each directory once."""
    libs: list[str] = []
    incs: list[str] = []
    found: list[tuple[str, str, list[str]]] = []
    for names in WHEELS.values():
        for name in names:
            try:
                dist = metadata.distribution(name)
            except metadata.PackageNotFoundError:
                continue
            dl, di, files = _dirs_of(dist)
            found.append((name, dist.version, files + dl + di))
            libs += [d for d in dl if d not in libs]
            incs += [d for d in di if d not in incs]
    return libs, incs, found


_HOME_VARIABLES = ("NUMBACUDA_UFUNC_CUDA_HOME", "CUDA_HOME", "CUDA_PATH")


def origin(path: str, wheels) -> str:
    """Where a library or include directory the engine uses comes from, in words: the pip
    wheel (from ``wheel_dirs()``'s third item), the toolkit and the variable naming it, or
    the dynamic loader's search path (a bare file name)."""
    if not path:
        return "not found"
    if os.sep not in path:
        return "the dynamic loader's search path"
    real = os.path.realpath(path)
    # The distribution holding the file or folder itself first: several wheels share a
    # folder (nvidia/cu13/lib holds NVRTC's and nvJitLink's libraries).
    for exact in (True, False):
        for name, version, paths in wheels:
            for p in map(os.path.realpath, paths):
                if real == p or (not exact and real.startswith(p + os.sep)):
                    return f"pip wheel {name} {version}"
    homes = [(v, os.environ.get(v)) for v in _HOME_VARIABLES] + [("default", "/usr/local/cuda")]
    for var, home in homes:
        if home and (real + os.sep).startswith(os.path.realpath(home) + os.sep):
            return "CUDA toolkit " + (home if var == "default" else f"${var}={home}")
    return "elsewhere"
