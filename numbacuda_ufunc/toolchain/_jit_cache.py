"""``cuda.jit(cache=True)``: Numba's per-function cache files.

Numba keeps a kernel compiled with ``cache=True`` in files beside its source, so that a new
process loads it instead of compiling it again. Here the engine's kernel cache already
serves every compiled binary by the SHA-256 of its generated source (src/compile/
kernel_cache.cpp); what a new process would still redo is the translation of the Python
function. These files hold that translation, so a kernel loaded from them goes straight
to the kernel cache: no translation, and no NVRTC or host compiler when the binary is
there.

Layout, as Numba's (own suffixes, so that Numba's and our files never read each other):
one index per function, ``<module>.<qualname>-<line>.py<XY>.nui``, mapping keys to data
files ``<same>.<n>.nuc``, in the first of ``cuda.config.CACHE_DIR`` (``NUMBA_CACHE_DIR``),
the ``__pycache__`` folder beside the source file, and ``<kernel cache>/jit``, that can
be written. The index records the source file's modification time and size: any other
value makes it empty (the file changed). A function whose source has no file (a notebook
cell) is stamped by its source instead, in ``<kernel cache>/jit/interactive``. A key covers the argument types, the function's
bytecode and the values its closure holds (Numba's key), and the translator itself (every
source file of this package), so a new version of numbacuda_ufunc never loads an old
translation. Globals are frozen at translation, as Numba documents: a hit keeps the values
they had then until ``recompile()``.

Each file is written to a temporary name and renamed, and carries a SHA-256 of its
contents; a data file also carries its key. A file that is missing, truncated, corrupt,
not a regular file, or that holds another key is a miss and is rewritten; nothing here
raises for the file system (a folder that cannot be written just leaves the function
uncached).
"""

from __future__ import annotations

import collections
import hashlib
import inspect
import io
import os
import pickle
import stat
import sys
import tempfile
import threading
import types
import warnings

import cloudpickle

from .. import _core, config
from ..errors import NumbaWarning
from ._compile import core

__all__ = ["CompileStats", "FunctionCache", "check_cachable"]

CompileStats = collections.namedtuple("_CompileStats", ("cache_path", "cache_hits", "cache_misses"))

_DEVICE_ARRAYS = ("Cannot serialize kernels or device functions referencing global device "
                  "arrays. Pass the array(s) as arguments to the kernel instead.")
_LINKS = "Cannot pickle CUDACodeLibrary with linking files"


def check_cachable(tk, name: str) -> None:
    """Numba's refusals, for a translation about to be saved: a kernel holding the pointer
    of a global or closure device array (stale in another process) raises
    ``pickle.PicklingError``; one linking files (``link=``, ``declare_device(link=...)``)
    ``RuntimeError``. Both with Numba's words."""
    if tk.captured:
        raise pickle.PicklingError(f"kernel '{name}' (cache=True) reads {len(tk.captured)} "
                                   f"global or closure device array(s): {_DEVICE_ARRAYS}")
    if tk.links:
        raise RuntimeError(f"kernel '{name}' (cache=True) links {', '.join(map(str, tk.links))}: "
                           f"{_LINKS}")


def refuse_links(link, name: str) -> None:
    """``cuda.jit(cache=True, link=[...])``: refused at decoration (Numba refuses it when it
    saves the first compile)."""
    if link:
        raise RuntimeError(f"cuda.jit({name!r}): cache=True cannot cache a kernel that links "
                           f"files (link={list(link)!r}): {_LINKS}")


class FunctionCache:
    """The cache files of one ``cache=True`` function. Made at decoration: a function
    without source (``exec``, ``python -c``) raises ``RuntimeError`` there, as in Numba.
    The folder is chosen at first use."""

    def __init__(self, py_func, api: str):
        self._py_func = py_func
        qualname = getattr(py_func, "__qualname__", py_func.__name__)
        try:
            self._source_file = inspect.getfile(py_func)
        except TypeError:
            self._source_file = "?"
        self._interactive = not os.path.isfile(self._source_file)
        if not self._interactive:
            # Modification time and size, as Numba's stamp: some file systems keep whole
            # seconds. The line tells functions of one name apart.
            st = os.stat(self._source_file)
            self._stamp = (st.st_mtime, st.st_size)
            disambiguator = str(py_func.__code__.co_firstlineno)
        else:
            # A notebook cell (or another source linecache holds, with no file): stamped
            # by its source, told apart by its first two lines (Numba's IPython locator).
            try:
                source = inspect.getsource(py_func).encode()
            except (OSError, TypeError):
                raise RuntimeError(f"{api}: cannot cache function {qualname!r}: no locator "
                                   f"available for file {self._source_file!r} (cache=True "
                                   f"keeps its files beside the function's source file, and "
                                   f"it has none)") from None
            self._stamp = hashlib.sha256(source).hexdigest()
            first = b"".join(source.splitlines(True)[:2])
            disambiguator = hashlib.sha256(first).hexdigest()[:10]
        module = os.path.splitext(os.path.basename(self._source_file))[0]
        fullname = f"{module}.{qualname}".replace("<", "").replace(">", "")
        abiflags = getattr(sys, "abiflags", "")
        self._base = (f"{fullname}-{disambiguator}.py"
                      f"{sys.version_info[0]}{sys.version_info[1]}{abiflags}")
        # The index file's own key (a data file's is its entry's key): an index copied over
        # another function's is a miss.
        self._index_key = hashlib.sha256(f"index {self._base}".encode()).hexdigest()
        self._path = None
        self._located = False
        self._lock = threading.Lock()

    # ---- where ------------------------------------------------------------------------------
    @property
    def cache_path(self):
        """The folder of this function's files, or None when none can be written (or
        ``NUMBACUDA_UFUNC_DISABLE_CACHE=1``)."""
        if os.environ.get("NUMBACUDA_UFUNC_DISABLE_CACHE") == "1":
            return None
        with self._lock:
            if not self._located:
                self._path = self._locate()
                self._located = True
            return self._path

    def _locate(self):

        folder = os.path.dirname(os.path.abspath(self._source_file))
        # A folder per source folder: its name, then a hash of its path (Numba's layout).
        sub = f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"
        candidates = []
        user_dir = getattr(config, "CACHE_DIR", "")
        try:
            engine_dir = None if core().cache_dir_refusal() else core().cache_dir()
        except Exception:  # no engine cache folder (a read-only home): the others or none
            engine_dir = None
        if self._interactive:
            sub = "interactive"
        else:
            if user_dir:
                candidates.append(os.path.join(os.fspath(user_dir), sub))
            candidates.append(os.path.join(folder, "__pycache__"))
        if engine_dir is not None:
            candidates.append(os.path.join(engine_dir, "jit", sub))
        for path in candidates:
            if _writable(path) and _trusted(path, core()):
                return path
        return None

    # ---- keys -------------------------------------------------------------------------------
    def key(self, types, options=()) -> str:
        """The index key of a specialization. Pickling the closure raises Numba's
        ``PicklingError`` when it holds a device array."""
        fn = self._py_func
        cells = tuple(_cell_value(c) for c in (fn.__closure__ or ()))
        h = hashlib.sha256(_translator_fingerprint())
        h.update(_key_bytes((tuple(types), tuple(options), _code_identity(fn.__code__), cells)))
        return h.hexdigest()

    # ---- files ------------------------------------------------------------------------------
    def load(self, key):
        """The object saved under ``key``, or None (a miss) when there is none or its files
        cannot be read back intact."""
        path = self.cache_path
        if path is None:
            return None
        name = self._entries(path).get(key)
        if name is None:
            return None
        payload = _read(os.path.join(path, name), key)
        if payload is None:
            return None
        try:
            return pickle.loads(payload)
        except Exception:  # a class it names is gone, a module fails to import...
            return None

    def save(self, key, obj, name: str) -> None:
        """Saves ``obj`` under ``key``: its data file first, then the index, so a reader
        never finds an entry without its data. An object pickle cannot write is left
        uncached with a ``NumbaWarning``."""
        path = self.cache_path
        if path is None:
            return
        try:
            payload = cloudpickle.dumps(obj)
        except Exception as exc:
            warnings.warn(f"kernel '{name}' (cache=True): not cached, its translation cannot "
                          f"be pickled ({type(exc).__name__}: {exc}); it is translated again "
                          f"in each process", NumbaWarning, stacklevel=4)
            return
        with self._lock:
            try:
                entries = self._entries(path)
                data = entries.get(key) or self._free_name(entries)
                _write(os.path.join(path, data), key, payload)
                if entries.get(key) != data:
                    entries[key] = data
                    self._write_index(path, entries)
            except OSError:  # the folder became read-only, the disk is full...: uncached
                pass

    def flush(self) -> None:
        """Empties the index (Numba's ``recompile()`` starts afresh)."""
        path = self.cache_path
        if path is not None:
            try:
                self._write_index(path, {})
            except OSError:
                pass

    def _index_path(self, path):
        return os.path.join(path, self._base + ".nui")

    def _entries(self, path) -> dict:
        payload = _read(self._index_path(path), self._index_key)
        if payload is None:
            return {}
        try:
            index = pickle.loads(payload)
            fresh = (index["stamp"] == self._stamp
                     and index["translator"] == _translator_fingerprint())
            entries = index["entries"] if fresh else {}
            if not (isinstance(entries, dict)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items())):
                return {}
        except Exception:
            return {}
        # Only names this function's files can have: an index never points elsewhere.
        return {k: v for k, v in entries.items() if _is_data_name(v, self._base)}

    def _write_index(self, path, entries):
        index = {"stamp": self._stamp, "translator": _translator_fingerprint(),
                 "entries": entries}
        _write(self._index_path(path), self._index_key, pickle.dumps(index, protocol=4))

    def _free_name(self, entries) -> str:
        used = set(entries.values())
        n = 1
        while f"{self._base}.{n}.nuc" in used:
            n += 1
        return f"{self._base}.{n}.nuc"


def _is_data_name(name, base) -> bool:
    number = name[len(base) + 1:-len(".nuc")] if name.startswith(base + ".") else ""
    return name.endswith(".nuc") and number.isdigit() and os.path.basename(name) == name


def _make_dirs(path) -> None:
    """``os.makedirs`` with mode 0755 at every level: os.makedirs applies its mode to the
    last folder only, so under umask 000 the folders above the pickles (read back with
    pickle.loads) came out writable by every user (issue 35)."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    if parent != os.path.abspath(path):
        _make_dirs(parent)
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass


def _trusted(path, core) -> bool:
    """Whether the pickles in ``path`` can be unpickled: a folder another user could write to,
    or put in place, would run their code as ours (issue 35). It must belong to this user
    (or root) and be writable by no one else, and its parent must not let others replace it
    (not writable by others, or sticky like /tmp)."""
    try:
        st = os.stat(path)
        parent = os.stat(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    if st.st_uid not in (os.geteuid(), 0) or core.folder_refusal(path):
        return False
    return not core.folder_refusal(os.path.dirname(os.path.abspath(path))) or \
        bool(parent.st_mode & stat.S_ISVTX)


def _writable(path) -> bool:
    """Whether ``path`` exists (or can be made) as a folder one can write to (Numba probes
    with a temporary file too: permissions alone do not tell, e.g. for root)."""
    try:
        _make_dirs(path)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _write(path, key: str, payload: bytes) -> None:
    """``payload`` for ``key`` in the kernel cache's entry format (the engine's: key, size,
    SHA-256), written to a temporary file and renamed over ``path``: readers see the old
    file or the new one, never a part. OSError when it cannot be written."""
    if not _core.write_cache_file(path, key, payload):
        raise OSError(f"cannot write the cache file {path}")


def _read(path, key: str):
    """The payload ``_write`` stored for ``key`` at ``path``, or None: missing, not a
    regular file (a FIFO is never waited on), too large, not intact, or another key's."""
    return _core.read_cache_file(path, key)


def _code_identity(code) -> tuple:
    """What a code object computes, as plain values that pickle alike in every process
    (marshal's bytes depend on reference counts, a frozenset's order on the hash seed).
    Line numbers are left out: the source file's stamp covers them."""
    def const(c):
        if isinstance(c, types.CodeType):
            return _code_identity(c)
        if isinstance(c, tuple):
            return tuple(const(x) for x in c)
        if isinstance(c, frozenset):
            return ("frozenset", tuple(sorted(repr(x) for x in c)))
        return c

    return (code.co_code, const(code.co_consts), code.co_names, code.co_varnames,
            code.co_freevars, code.co_cellvars, code.co_argcount, code.co_posonlyargcount,
            code.co_kwonlyargcount, code.co_flags, getattr(code, "co_exceptiontable", b""))


_EMPTY_CELL = "<empty cell>"


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # a cell not yet assigned
        return _EMPTY_CELL


class _KeyPickler(cloudpickle.CloudPickler):
    """Numba's pickling of a key's closure values: device arrays are refused; a jitted
    object (kernel, device function, ufunc) stands for its Python function, so what it
    compiled meanwhile does not change the key."""

    def reducer_override(self, obj):
        try:
            cai = getattr(obj, "__cuda_array_interface__", None)
        except Exception:
            cai = None
        if cai is not None:
            raise pickle.PicklingError(_DEVICE_ARRAYS)
        fn = getattr(obj, "py_func", None) if not isinstance(obj, type) else None
        if fn is not None and fn is not obj and hasattr(fn, "__code__"):
            return _jitted, (type(obj).__qualname__, fn)
        return super().reducer_override(obj)


def _jitted(kind, fn):  # never called: keys are hashed, not loaded
    return fn


def _key_bytes(value) -> bytes:
    buf = io.BytesIO()
    _KeyPickler(buf, protocol=4).dump(value)
    return buf.getvalue()


_fingerprint = None


def _translator_fingerprint() -> bytes:
    """SHA-256 of every source file of this package, of the kernel headers embedded in the
    engine (a translation's C++ calls into them; the engine's digest, as its own cache keys
    use) and of the Python version: a cached translation is only ever loaded by the
    translator and headers that made it. About 3 ms, once."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"{sys.version_info[:2]}".encode())
        h.update(_core.headers_digest().encode() + b"\0")
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package
        for folder, _, files in sorted(os.walk(root)):
            for name in sorted(files):
                if name.endswith(".py"):
                    full = os.path.join(folder, name)
                    h.update(os.path.relpath(full, root).encode() + b"\0")
                    try:
                        with open(full, "rb") as f:
                            h.update(f.read())
                    except OSError:
                        pass
        _fingerprint = h.digest()
    return _fingerprint
