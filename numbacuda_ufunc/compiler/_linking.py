"""Code linked into kernels: ``cuda.jit(link=[...])`` and ``cuda.declare_device(link=...)``.

An entry is a file path or an in-memory object of Numba's ``LinkableCode`` family
(``cuda.CUSource(text)``, ``cuda.PTXSource``, ``cuda.Cubin``, ``cuda.Fatbin``,
``cuda.LTOIR``, ``cuda.Object``, ``cuda.Archive``). Paths are made absolute and checked
when declared (a missing file or an unknown kind is an error at decoration); file contents
are read when a specialization is made and travel with it to the engine, so the kernel
cache key covers them: an edited ``.cu`` file gives a new key in the next process (or the
next specialization) and is compiled again. In-memory code travels the same way, named
``<kind ...>`` so that compiler messages point at it.
"""

from __future__ import annotations

import os

from ..config import extra_search_paths
from ..errors import LinkerError

__all__ = ["LINK_KINDS", "LinkableCode", "CUSource", "PTXSource", "Cubin", "Fatbin",
           "LTOIR", "Object", "Archive", "link_paths", "read_link_files"]

# Extension -> what it holds. ``.cu`` is CUDA C++ (NVRTC on a GPU, the host compiler on the
# host backend); the rest are GPU code that nvJitLink links as it is.
LINK_KINDS = {
    "cu": "CUDA C++ source", "ptx": "PTX", "cubin": "CUBIN", "fatbin": "fat binary",
    "ltoir": "LTO IR", "o": "object file", "a": "library",
}


class LinkableCode:
    """Code held in memory, linked like a file of its kind (Numba's ``LinkableCode``).

    ``data`` is the code (``str`` or ``bytes``); ``name`` names it in compiler and linker
    messages. Numba's ``setup_callback``/``teardown_callback`` (called with a
    ``cuda.core`` ObjectCode when a module loads) have no counterpart here: passing one is
    an error rather than a callback that silently never runs."""

    kind = ""  # a key of LINK_KINDS, set by each subclass

    def __init__(self, data, name=None, setup_callback=None, teardown_callback=None):
        api = f"cuda.{type(self).__name__}()"
        if type(self) is LinkableCode:
            raise TypeError(f"{api}: use one of its kinds: cuda.CUSource, cuda.PTXSource, "
                            f"cuda.Cubin, cuda.Fatbin, cuda.LTOIR, cuda.Object, cuda.Archive")
        if isinstance(data, str):
            data = data.encode("utf-8")
        elif isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        if not isinstance(data, bytes):
            raise TypeError(f"{api}: data must be str or bytes (got {type(data).__name__})")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{api}: name must be a str (got {name!r})")
        for arg, value in (("setup_callback", setup_callback),
                           ("teardown_callback", teardown_callback)):
            if value is not None:
                raise NotImplementedError(f"{api}: {arg} is not supported by numbacuda_ufunc "
                                          f"(modules are loaded by its C++ engine; got "
                                          f"{value!r})")
        self.data = data
        self.name = name if name else f"<unnamed-{self.kind}>"
        self.setup_callback = self.teardown_callback = None

    @classmethod
    def from_path(cls, path):
        """The file at ``path`` as in-memory code of the kind its extension names."""
        path = os.fspath(path)
        kind = os.path.splitext(path)[1][1:].lower()
        if kind not in _CLASSES:
            raise LinkerError(f"LinkableCode.from_path(): unknown file kind "
                              f"'{os.path.splitext(path)[1] or '(no extension)'}' of '{path}'")
        with open(path, "rb") as fh:
            return _CLASSES[kind](fh.read(), name=os.path.basename(path))

    @classmethod
    def from_path_or_obj(cls, path_or_obj):
        if isinstance(path_or_obj, LinkableCode):
            return path_or_obj
        return cls.from_path(path_or_obj)

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r}, {len(self.data)} bytes)"

    # Equal by content: the same code reached twice (a kernel's link= and a declared
    # function's, or copies made by pickling) is linked once.
    def _key(self):
        return (self.kind, self.name, self.data)

    def __eq__(self, other):
        return isinstance(other, LinkableCode) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())


class CUSource(LinkableCode):
    """CUDA C++ source text, compiled like a ``.cu`` file."""
    kind = "cu"


class PTXSource(LinkableCode):
    kind = "ptx"


class Cubin(LinkableCode):
    kind = "cubin"


class Fatbin(LinkableCode):
    kind = "fatbin"


class LTOIR(LinkableCode):
    kind = "ltoir"


class Object(LinkableCode):
    kind = "o"


class Archive(LinkableCode):
    kind = "a"


_CLASSES = {c.kind: c for c in (CUSource, PTXSource, Cubin, Fatbin, LTOIR, Object, Archive)}


def link_paths(link, api: str) -> tuple:
    """``link`` (a path or LinkableCode, or a list/tuple/set of them) as absolute paths,
    each checked, and LinkableCode objects as they are."""
    if link is None:
        return ()
    single = (str, bytes, os.PathLike, LinkableCode)
    items = [link] if isinstance(link, single) else link
    if not isinstance(items, (list, tuple, set, frozenset)):
        raise TypeError(f"{api}: link must be a path, a cuda.CUSource (or other LinkableCode) "
                        f"or a list of them (got {link!r})")
    out = []
    for item in items:
        if isinstance(item, LinkableCode):
            if item not in out:
                out.append(item)
            continue
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"{api}: link entries must be paths or cuda.CUSource (or other "
                            f"LinkableCode) objects (got {item!r})")
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
    """``[(path or name, kind, bytes, include dirs)]`` for the engine, read now. The engine
    adds a file's folder to the include path only for absolute paths, so in-memory code
    (named ``<...>``) includes only toolkit headers and ``cuda.config``'s
    ``CUDA_NVRTC_EXTRA_SEARCH_PATHS``, as in Numba; those directories go with every .cu
    file."""
    includes = extra_search_paths()
    files = []
    for path in paths:
        if isinstance(path, LinkableCode):
            files.append((path.name, path.kind, path.data, includes if path.kind == "cu" else []))
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            raise FileNotFoundError(f"{api}: cannot read link file '{path}': "
                                    f"{exc.strerror}") from None
        kind = os.path.splitext(path)[1][1:].lower()
        files.append((path, kind, data, includes if kind == "cu" else []))
    return files
