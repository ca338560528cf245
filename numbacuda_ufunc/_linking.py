"""Files linked into kernels: ``cuda.jit(link=[...])`` and ``cuda.declare_device(link=...)``.

Paths are made absolute and checked when declared (a missing file or an unknown kind is
an error at decoration); the contents are read when a specialization is made, and travel
with it to the engine, so the kernel cache key covers them: an edited ``.cu`` file gives
a new key in the next process (or the next specialization) and is compiled again.
"""

from __future__ import annotations

import os

from .errors import LinkerError

__all__ = ["LINK_KINDS", "link_paths", "read_link_files"]

# Extension -> what it holds. ``.cu`` is CUDA C++ (NVRTC on a GPU, the host compiler on the
# host backend); the rest are GPU code that nvJitLink links as it is.
LINK_KINDS = {
    "cu": "CUDA C++ source", "ptx": "PTX", "cubin": "CUBIN", "fatbin": "fat binary",
    "ltoir": "LTO IR", "o": "object file", "a": "library",
}


def link_paths(link, api: str) -> tuple:
    """``link`` (a path, or a list/tuple/set of paths) as absolute paths, each checked."""
    if link is None:
        return ()
    items = [link] if isinstance(link, (str, bytes, os.PathLike)) else link
    if not isinstance(items, (list, tuple, set, frozenset)):
        raise TypeError(f"{api}: link must be a path or a list of paths (got {link!r})")
    out = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{api}: link entries must be paths (got {item!r})")
        path = os.path.abspath(os.fsdecode(os.fspath(item)))
        kind = os.path.splitext(path)[1][1:].lower()
        if kind not in LINK_KINDS:
            raise LinkerError(f"{api}: cannot link '{path}': unknown file kind "
                              f"'{os.path.splitext(path)[1] or '(no extension)'}' (expected "
                              f"{', '.join('.' + k for k in LINK_KINDS)})")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{api}: link file '{path}' does not exist")
        if path not in out:
            out.append(path)
    return tuple(out)


def read_link_files(paths, api: str) -> list:
    """``[(path, kind, bytes)]`` for the engine, read now."""
    files = []
    for path in paths:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise FileNotFoundError(f"{api}: cannot read link file '{path}': "
                                    f"{exc.strerror}") from None
        files.append((path, os.path.splitext(path)[1][1:].lower(), data))
    return files
