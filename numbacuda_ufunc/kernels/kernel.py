"""``@cuda.jit``: CUDA kernels written in Python, launched as ``kernel[grid, block](*args)``.

The Python function is translated once per tuple of argument types (or per declared
signature) and compiled by NVRTC, or by the host compiler under emulation, where
src/kernels/kernel.cuh runs blocks, threads, shared memory, barriers and atomics on the
CPU. The launch path (argument conversion, specialization lookup, checks, launch) is C++;
Python runs only to translate a new specialization.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _core
from ..compiler import TranslatedKernel, translate_kernel
from ..compiler._enums import member_type_of
from ..compiler._linking import link_paths, read_link_files
from ..compiler._source import _take_identity_of, line_directive, load_source
from ..compiler._types import TupleType, ctype, element_ctype
from ..compiler.translate import forget_translations
from ..errors import CompileError, LinkerError
from ..interop._pickling import function_ref, global_name
from ..toolchain import _sass
from ..toolchain._compile import _launch_bounds
from ..toolchain._jit_cache import CompileStats, FunctionCache, check_cachable, refuse_links
from ..types import (
    EXACT,
    Array,
    CharSeq,
    CPointer,
    NPDatetime,
    Record,
    Scalar,
    Signature,
    Type,
    best_signatures,
    conversion_kind,
    from_dtype,
    typeof,
    void,
)
from . import launchconfig
from ._help import kernel_doc
from ._inspection import KernelInspection
from ._signatures import _kernel_signature, _same_types, _sig_text
from .device_function import _NO_LLVM

__all__ = ["Kernel"]

# Numba options that change nothing here (NVRTC always optimises).
# Threads one multiprocessor holds at once, by compute capability (CUDA's occupancy tables).
_THREADS_PER_SM = {(7, 5): 1024, (8, 6): 1536, (8, 7): 1536, (8, 9): 1536, (12, 0): 1536}
_EMULATED_GRID_SYNC_BLOCKS = 1024  # the host backend runs each block of such a kernel on a thread


class Kernel(KernelInspection, _core.Kernel):
    """A @cuda.jit kernel. ``k[blocks, threads](*args)`` and ``k[blocks, threads, stream,
    shared_bytes](*args)`` launch it; ``k.forall(n)(*args)`` picks the shape for ``n``
    threads. Host NumPy arrays are copied to the device and back, as in Numba.
    ``cache=True`` keeps each specialization's translation in files beside the source
    (_jit_cache.py); ``stats`` counts the hits and misses, as Numba's."""

    if TYPE_CHECKING:  # the engine's launch configuration (src/bindings/kernel.cpp)
        __name__: str

        def __getitem__(self, config: Any) -> Callable[..., None]: ...

    def __init__(self, pyfunc, signatures=(), debug=False, fastmath=False, extensions=(),
                 link=(), lineinfo=False, launch_bounds=None, shared_memory_carveout=None,
                 cache=False):
        if not callable(pyfunc) or not hasattr(pyfunc, "__code__"):
            raise CompileError(f"cuda.jit(): expected a Python function (got {pyfunc!r})")
        super().__init__(pyfunc.__name__, bool(debug), bool(fastmath))
        _take_identity_of(self, pyfunc)
        self.__doc__ = kernel_doc(self.__name__, pyfunc)  # help(): the launch and its arguments
        self.debug = bool(debug)
        self.fastmath = bool(fastmath)
        self.lineinfo = bool(lineinfo)
        self.launch_bounds = launch_bounds
        prefix, nvrtc_extra, self._bounds_threads = _device_codegen(pyfunc, self.lineinfo,
                                                                     launch_bounds)
        self._set_device_codegen(prefix, nvrtc_extra, self._bounds_threads)
        self.shared_memory_carveout = shared_memory_carveout
        if shared_memory_carveout is not None:
            self._set_carveout(_carveout_percent(shared_memory_carveout))
        self._specialized = False  # compiled for one signature only (Numba's `specialized`)
        self.specializations = {}  # (cc, argument types) -> Kernel, made by specialize()
        self.extensions = list(extensions or ())
        self.link = link_paths(link, f"cuda.jit({pyfunc.__name__!r})")
        self._cache_hits = collections.Counter()  # argument types -> count (Numba's stats)
        self._cache_misses = collections.Counter()
        self._disk = None  # the cache=True files
        if cache:
            refuse_links(self.link, pyfunc.__name__)
            self._disk = FunctionCache(pyfunc, f"cuda.jit({pyfunc.__name__!r})")
        self._specs = []  # index -> TranslatedKernel
        self._lock = threading.Lock()
        self._declared = []  # (Signature, spec index): eager signatures, in order
        self._tuple_types = {}  # spec index -> argument types with tuples (_resolve_tuples)
        # argument types -> DeviceCallOverload: specializations translated for calls from
        # other kernels (this kernel used as a device function), listed as Numba lists them
        self._device_calls = {}
        # spec index -> the (griddim, blockdim, sharedmem) it was compiled for, for the
        # specializations marked launch-config sensitive (mark_launch_config_sensitive)
        self._config_of = {}
        self._config_sensitive = False  # a launch marked a specialization (above)
        for sig in signatures:
            sig = _kernel_signature(sig, pyfunc.__name__)
            self._declared.append((sig, self._add(self._translate_spec(sig.args))))

    # ---- specializations ------------------------------------------------------------------
    def _translate(self, fn, types, launch_config=None):
        return translate_kernel(fn, types, line_info=self.lineinfo, launch_config=launch_config)

    def _translate_spec(self, types):
        """The kernel translated for ``types``: with cache=True loaded from its files when
        they hold it (a hit), else translated (a miss) and saved there. Once the kernel is
        launch-config sensitive its translations are per configuration and stay out of the
        files (a new process learns the sensitivity again by translating)."""

        types = tuple(types)
        current = launchconfig.current_launch_config()
        config = _config_key(current) if self._config_sensitive else None
        disk = self._disk if config is None else None
        key = None
        if disk is not None and disk.cache_path is not None:
            key = disk.key(types, ("lineinfo",) if self.lineinfo else ())
            tk = disk.load(key)
            if isinstance(tk, TranslatedKernel) and _same_types(tk.arg_types, types):
                self._cache_hits[types] += 1
                _replay_device_calls(tk)
                return tk
        self._cache_misses[types] += 1
        tk = self._translate(self.py_func, types, config)
        if disk is not None:
            check_cachable(tk, self.__name__)
            marked = current is not None and current._is_kernel_launch_config_sensitive()
            if key is not None and not marked:
                disk.save(key, tk, self.__name__)
        return tk

    @property
    def stats(self):
        """Numba's compile statistics: ``cache_path`` (the folder of the cache=True files,
        None without them), ``cache_hits`` and ``cache_misses`` (argument types -> count;
        every specialization translated in this process is a miss)."""
        path = self._disk.cache_path if self._disk is not None else None
        return CompileStats(path, self._cache_hits, self._cache_misses)

    def recompile(self) -> None:
        """Translate and compile every specialization afresh (Numba's ``recompile``): the
        globals it reads are read again, and with cache=True its files start afresh."""
        with self._lock:
            forget_translations(self.py_func)
            if self._disk is not None:
                self._disk.flush()
            for index, tk in enumerate(self._specs):
                types = self._tuple_types.get(index)
                new = self._translate_spec(tk.arg_types) if types is None \
                    else self._translate_tuples(types)
                self._replace_spec(index, *self._spec_fields(new))
                self._specs[index] = new

    def _spec_fields(self, tk) -> tuple:
        """What the engine's _add_spec/_replace_spec take for a translation."""
        params = [_param(t) for t in tk.arg_types]
        paths = self._link_paths(tk)
        if tk.foreign and not paths:
            raise LinkerError(f"kernel '{self.__name__}' calls the foreign function"
                              f"{'s' if len(tk.foreign) > 1 else ''} {', '.join(tk.foreign)} "
                              f"but links no file that defines them: pass link=[...] to "
                              f"cuda.jit or to cuda.declare_device")
        links = read_link_files(paths, f"kernel '{self.__name__}'")
        return (params, tk.name, tk.source, tk.cooperative, tk.static_shared_bytes,
                tk.grid_sync, links)

    def _add(self, tk) -> int:
        index = self._add_spec(*self._spec_fields(tk))
        self._specs.append(tk)
        return index

    def _resolve_launch(self, descr, launch, args) -> int:
        """Called by the engine for a launch whose argument types are new: compiles through
        ``_compile_for_args`` (Numba's hook, which code may wrap) with the launch's
        configuration current (``cuda.launchconfig``). Returns the specialization."""

        config = launchconfig.LaunchConfig(self, launch.griddim, launch.blockdim,
                                           launch.stream, launch.sharedmem, args, launch)
        with launchconfig._compiling(config, descr):
            overload = self._compile_for_args(*args)
        if not isinstance(overload, KernelOverload) or overload._kernel is not self:
            raise TypeError(f"kernel '{self.__name__}': _compile_for_args() must return one "
                            f"of this kernel's overloads (got {overload!r})")
        if config._is_kernel_launch_config_sensitive():
            with self._lock:
                self._config_of.setdefault(overload._index, _config_key(config))
                self._config_sensitive = True
            self._set_launch_config_sensitive()
        return overload._index

    def mark_launch_config_sensitive(self):
        """Numba's: mark the specialization a launch is compiling now as valid for that
        launch configuration (grid, block, dynamic shared memory) only, as when its code
        depends on it. A later launch of the same argument types with another
        configuration compiles again (through ``_compile_for_args``). Only during a
        launch's compilation of this kernel (``cuda.launchconfig``)."""

        config = launchconfig.ensure_current_launch_config()
        if config.dispatcher is not self:
            raise RuntimeError("mark_launch_config_sensitive() must be called on the active "
                               "launch configuration's dispatcher")
        config._kernel_launch_config_sensitive = True

    def _compile_for_args(self, *args, **kws):
        """Numba's hook: the specialization for these launch arguments, compiled when new
        (during a launch, for the types the engine described; otherwise for the types of
        ``args`` as a launch types them)."""

        if kws:
            raise TypeError(f"kernel '{self.__name__}' takes no keyword arguments")
        descr = launchconfig._pending_descr(self)
        if descr is None:
            return self.compile(tuple(_type_of(a) for a in args))
        return KernelOverload(self, self._resolve(descr))

    def _resolve(self, descr) -> int:
        """Called by the engine for a new tuple of argument types: ``descr`` holds
        (dtype, ndim) per argument, ndim -1 for scalars. Returns the specialization."""

        nparams = self.py_func.__code__.co_argcount
        if len(descr) != nparams:
            raise TypeError(f"kernel '{self.__name__}' takes {nparams} argument"
                            f"{'s' if nparams != 1 else ''} (got {len(descr)})")
        if self._declared and any(_has_enum(d) for d in descr):
            try:  # a declared parameter takes the member's value
                descr = tuple(_enum_values(d) for d in descr)
            except TypeError as exc:
                raise TypeError(f"kernel '{self.__name__}': {exc}") from None
        if any(isinstance(d, (list, dict)) for d in descr):
            return self._resolve_tuples(descr)
        if self._declared:
            return self._choose_declared(descr)
        types = tuple(_array_or_scalar(dtype, ndim) for dtype, ndim in descr)
        config = _config_key(launchconfig.current_launch_config())
        with self._lock:  # two threads' first calls with the same types share one spec
            for index, tk in enumerate(self._specs):
                if index not in self._tuple_types and _same_types(tk.arg_types, types) \
                        and self._config_of.get(index, config) == config:
                    return index
            return self._add(self._translate_spec(types))

    def _choose_declared(self, descr) -> int:
        """The declared signature the arguments convert to best, as Numba's dispatcher
        chooses: fewest unsafe, then safe conversions, then promotions; a tie between the
        best two is an error, as is an argument that converts to no signature."""
        candidates = []
        for sig, index in self._declared:
            if all(_accepts(t, dtype, ndim) for t, (dtype, ndim) in zip(sig.args, descr)):
                kinds = [conversion_kind(dtype, t.dtype) if _is_number(t, ndim) else EXACT
                         for t, (dtype, ndim) in zip(sig.args, descr)]
                candidates.append(((sig, index), kinds))
        best = best_signatures(candidates)
        got = ", ".join(_describe(dtype, ndim) for dtype, ndim in descr)
        if not best:
            sigs = "; ".join(str(sig) for sig, _ in self._declared)
            raise TypeError(f"kernel '{self.__name__}': No matching definition for argument "
                            f"type(s) {got}; the signatures are: {sigs}")
        if len(best) > 1:
            # Numba's wording and type names, then ours: the function, the arguments' types
            # and each tied signature, one a line.
            tied = "\n".join(f"{_numba_types_text(sig.args)} -> none" for sig, _ in best)
            raise TypeError(f"Ambiguous overloading for {self.py_func!r} "
                            f"{_numba_types_text(self._launch_types(descr))}:\n{tied}\n"
                            f"(kernel '{self.__name__}': these signatures convert the "
                            f"arguments equally well; pass arguments of one signature's "
                            f"types, np.float32(x), ...)")
        return best[0][1]

    def _launch_types(self, descr) -> tuple:
        """The types of the arguments of the launch compiling now, as ``typeof`` gives them
        (layouts included), else as ``descr`` describes them."""

        config = launchconfig.current_launch_config()
        if config is not None and config.dispatcher is self and len(config.args) == len(descr):
            try:
                return tuple(typeof(a) for a in config.args)
            except TypeError:
                pass
        return tuple(_array_or_scalar(dtype, ndim) for dtype, ndim in descr)

    def _resolve_tuples(self, descr) -> int:
        """A launch with tuple or enum arguments. The engine passes a tuple's items as
        scalars; the kernel made for it is a wrapper taking those scalars that rebuilds each
        tuple and calls the Python kernel with it (translated as a device function), so the
        tuples are ordinary tuple values inside the kernel. An enum member is passed as its
        value, to a parameter typed as a member of its class (compiler/_enums.py)."""
        if self._declared:
            sigs = "; ".join(str(sig) for sig, _ in self._declared)
            raise TypeError(f"kernel '{self.__name__}': tuple arguments need a lazily "
                            f"compiled kernel (no signatures); the signatures are: {sigs}")
        types = tuple(_descr_type(d, self.__name__) for d in descr)
        with self._lock:
            for index, known in self._tuple_types.items():
                if known == types:
                    return index
            index = self._add(self._translate_tuples(types))
            self._tuple_types[index] = types
            return index

    def _translate_tuples(self, types):
        """The translation for tuple or enum arguments (never in the cache=True files: its
        wrapper is made in each process)."""
        self._cache_misses[types] += 1
        if any(isinstance(t, TupleType) for t in types):
            wrapper, flat = _flat_wrapper(self.py_func, types)
            return self._translate(wrapper, flat)
        return self._translate(self.py_func, types)  # enum members only: the kernel takes them

    @property
    def signatures(self) -> list:
        """The argument types of every specialization made so far: the kernel's, then those
        translated for calls from other kernels (as a device function)."""
        sigs = [self._tuple_types.get(i, tk.arg_types) for i, tk in enumerate(self._specs)]
        return sigs + [t for t in list(self._device_calls) if t not in sigs]

    @property
    def overloads(self) -> dict:
        """Argument types -> each specialization (a :class:`KernelOverload`, or a
        :class:`DeviceCallOverload` for one made by calls from other kernels), as Numba's
        ``overloads``."""
        out = self._by_types(lambda i: KernelOverload(self, i))
        for types, ov in list(self._device_calls.items()):
            out.setdefault(types, ov)
        return out

    def _nu_device_call(self, arg_types, return_type) -> None:
        """The translator's note that a kernel calls this one as a device function with
        these argument types (compiler/_translator.py, call_function)."""
        self._device_calls.setdefault(tuple(arg_types),
                                      DeviceCallOverload(self, arg_types, return_type))

    def _by_types(self, value_of):
        """``value_of(index)`` per specialization, keyed by argument types as ``overloads``;
        of the launch-config sensitive specializations of the same types, the first (Numba
        keeps the others in per-configuration dispatchers)."""
        out = _ByTypes()
        for i, tk in enumerate(self._specs):
            types = self._tuple_types.get(i, tk.arg_types)
            if i not in self._config_of or types not in out:
                out[types] = value_of(i)
        return out

    @property
    def definitions(self) -> list:
        """Every specialization (:class:`KernelOverload`)."""
        return [KernelOverload(self, i) for i in range(len(self._specs))]

    @property
    def definition(self):
        """The only specialization; an error when there are none or several (Numba)."""
        if len(self._specs) != 1:
            raise TypeError(f"kernel '{self.__name__}' has {len(self._specs)} "
                            f"specializations; 'definition' needs exactly one (use "
                            f"'definitions' or 'overloads')")
        return KernelOverload(self, 0)

    def inspect_types(self, file=None, signature=None) -> None:
        """Print the kernel's source with the type of each argument and local, per
        specialization (Numba's ``inspect_types``)."""
        import inspect
        import sys

        out = file if file is not None else sys.stdout
        try:
            lines, first = inspect.getsourcelines(self.py_func)
        except (OSError, TypeError):
            lines, first = [], self.py_func.__code__.co_firstlineno
        for i in self._selected(signature):
            tk = self._specs[i]
            print(f"{self.__name__} {_sig_text(tk.arg_types)}", file=out)
            print("-" * 80, file=out)
            print(f"# File: {self.py_func.__code__.co_filename}", file=out)
            print(f"# --- LINE {first} --- ", file=out)
            for line in lines:
                print(line.rstrip("\n"), file=out)
            print("# --- types ---", file=out)
            for name, t in tk.local_types:
                print(f"#   {name} = {getattr(t, 'name', t)}", file=out)
            print("=" * 80, file=out)

    def max_cooperative_grid_blocks(self, blockdim) -> int:
        """How many blocks of ``blockdim`` threads a grid-synchronising launch may have
        (Numba's method). On the host backend: the emulation's limit. On a GPU: the
        multiprocessors times the blocks one of them holds by thread count (registers and
        shared memory can lower the real figure; a launch beyond it fails with an error,
        never silently)."""
        dims = blockdim if isinstance(blockdim, tuple) else (blockdim,)
        threads = 1
        for d in dims:
            if isinstance(d, bool) or not hasattr(d, "__index__") or d < 1:
                raise ValueError(f"kernel '{self.__name__}'.max_cooperative_grid_blocks(): "
                                 f"blockdim must be positive integers (got {blockdim!r})")
            threads *= d.__index__()
        dev = _core.device_info(_core.current_device())  # what cuda.get_current_device() reads
        if threads > dev["max_threads_per_block"]:
            return 0
        if _core.emulation_enabled():
            return _EMULATED_GRID_SYNC_BLOCKS
        per_sm = _THREADS_PER_SM.get(tuple(dev["compute_capability"]), 2048) // threads
        return per_sm * dev["multiprocessors"]

    def compile(self, sig) -> KernelOverload:
        """Compile for the argument types of ``sig`` now (Numba's ``compile``) and return
        that specialization. A kernel without signatures stays lazy for other types; one
        with signatures accepts ``sig`` from now on too."""
        sig = _kernel_signature(sig, self.__name__)
        with self._lock:
            for index, tk in enumerate(self._specs):
                if index not in self._tuple_types and _same_types(tk.arg_types, sig.args):
                    return KernelOverload(self, index)
            index = self._add(self._translate_spec(sig.args))
            if self._declared:
                self._declared.append((sig, index))
        return KernelOverload(self, index)

    @property
    def specialized(self) -> bool:
        """True for a kernel compiled for exactly one signature: ``cuda.jit(sig)`` (one
        signature, not a list) or a ``specialize()`` result (Numba's ``specialized``)."""
        return self._specialized

    def specialize(self, *args) -> Kernel:
        """A kernel compiled only for the types of ``args`` (values or types), made once
        per types and device (``specializations``), as Numba's ``specialize``."""

        if self.specialized:
            raise RuntimeError(f"Dispatcher already specialized: kernel '{self.__name__}' "
                               f"is compiled for one signature only")
        types = tuple(_type_of(a) for a in args)
        key = (_sass.inspection_cc(), types)
        with self._lock:
            k = self.specializations.get(key)
            if k is not None:
                return k
        k = type(self)(self.py_func, debug=self.debug, fastmath=self.fastmath,
                       extensions=self.extensions, link=self.link, lineinfo=self.lineinfo,
                       launch_bounds=self.launch_bounds,
                       shared_memory_carveout=self.shared_memory_carveout,
                       cache=self._disk is not None)
        k._declared.append((Signature(None, types), k._add(k._translate_spec(types))))
        k._specialized = True
        with self._lock:
            return self.specializations.setdefault(key, k)

    # ---- launching ------------------------------------------------------------------------
    def _extension_launch(self, launcher):
        """Called by the engine's ``kernel[...]`` when ``extensions`` holds any."""
        return _ExtensionLauncher(self, launcher)

    def _raise_from_kernel(self, index, code, tid, ctaid):
        """Called by the engine when a launch of specialization ``index`` raised: raises
        the exception of raise site ``code`` as Numba does, its first argument prefixed
        with where and in which thread (indices listed z, y, x, as Numba prints them)."""
        sites = self._specs[index].exceptions
        if not 1 <= code <= len(sites):
            raise RuntimeError(f"kernel '{self.__name__}' raised an exception of unknown code "
                               f"{code}")
        cls, args, (fname, filename, line) = sites[code - 1]
        path = filename if filename.startswith("<") else os.path.abspath(filename)
        prefix = (f"In function {fname!r}, file {path}, line {line}, "
                  f"tid={list(tid)[::-1]} ctaid={list(ctaid)[::-1]}")
        args = (f"{prefix}: {args[0]}",) + tuple(args[1:]) if args else (prefix,)
        raise cls(*args)

    def __call__(self, *args, **kwargs):
        raise ValueError(f"kernel '{self.__name__}': launch configuration was not specified; "
                         f"call it as {self.__name__}[blocks_per_grid, threads_per_block](*args)")

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        """Numba's dispatcher method behind ``kernel[griddim, blockdim, stream, sharedmem]``:
        the kernel configured for launch."""
        return self[griddim, blockdim, stream, sharedmem]

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launch of at least ``ntasks`` threads in 1-d blocks of ``tpb`` threads; with
        ``tpb=0`` the blocks are as large as the kernel allows (at most 1024), as Numba's
        occupancy-based choice gives for most kernels."""
        if isinstance(ntasks, bool) or not hasattr(ntasks, "__index__") or ntasks < 0:
            numba = "; Can't create ForAll with negative task count" \
                if hasattr(ntasks, "__index__") and not isinstance(ntasks, bool) else ""
            raise ValueError(f"kernel '{self.__name__}'.forall(): ntasks must be a "
                             f"non-negative integer{numba} (got {ntasks!r})")
        if ntasks.__index__() >= 2**63:
            raise ValueError(f"kernel '{self.__name__}'.forall(): ntasks must fit in int64 "
                             f"(got {ntasks!r})")
        for name, value in (("tpb", tpb), ("sharedmem", sharedmem)):
            if isinstance(value, bool) or not hasattr(value, "__index__") or \
                    not 0 <= value.__index__() < 2**31:
                raise ValueError(f"kernel '{self.__name__}'.forall(): {name} must be a "
                                 f"non-negative integer below 2**31 (got {value!r})")
        if tpb:
            return self[(ntasks + tpb - 1) // tpb, tpb, stream, sharedmem]
        return self._forall(ntasks.__index__(), stream, sharedmem)


    def __repr__(self):
        return f"<numbacuda_ufunc.Kernel '{self.__name__}' ({len(self._specs)} specializations)>"

    def __reduce__(self):
        # By name when the kernel is a module global; otherwise by its function, eager
        # signatures and options (_pickling.py). Rebuilt, it compiles again on first use.
        return global_name(self) or (_rebuild_kernel, (
            type(self), function_ref(self.py_func), [sig for sig, _ in self._declared],
            self.debug, self.fastmath, self.extensions, self.link, self.lineinfo,
            self.launch_bounds, self.shared_memory_carveout, self._specialized,
            self._disk is not None))


class _ExtensionLauncher:
    """A launch through Numba's ``extensions``: each extension's ``prepare_args(ty, val,
    stream=, retr=)`` may replace an argument (and its type) before the launch; the
    callables it appends to ``retr`` run after it, as in Numba."""

    def __init__(self, kernel, launcher):
        self.kernel = kernel
        self.launcher = launcher

    def __getattr__(self, name):  # griddim, blockdim, sharedmem, stream, callbacks
        return getattr(self.launcher, name)

    def __call__(self, *args):
        retr = []
        prepared = []
        stream = self.launcher.stream
        for val in args:
            ty = _extension_type_of(val)
            for ext in self.kernel.extensions:
                ty, val = ext.prepare_args(ty, val, stream=stream, retr=retr)
            prepared.append(val)
        self.launcher(*prepared)
        for writeback in retr:
            writeback()


class DeviceCallOverload:
    """A specialization of a kernel translated because another kernel calls it as a device
    function (Numba compiles it as one and lists it in ``overloads``): its ``signature``
    (with the return type found) and ``argument_types``. It is part of the caller's
    translation unit, so it has no code of its own; ``library.get_llvm_str()`` and
    ``inspect_llvm()`` raise NotImplementedError as for every kernel (no LLVM here)."""

    def __init__(self, kernel, arg_types, return_type):
        self._kernel = kernel
        self.argument_types = tuple(arg_types)
        self.signature = Signature(return_type if return_type is not None else void,
                                   self.argument_types)
        self.library = self  # Numba's compile result: .library.get_llvm_str()

    def get_llvm_str(self):
        raise NotImplementedError(_NO_LLVM.format(
            what=f"device function '{self._kernel.__name__}'"))

    inspect_llvm = get_llvm_str

    def __repr__(self):
        return f"<DeviceCallOverload {self._kernel.__name__} {self.signature}>"


class KernelOverload:
    """One specialization of a kernel (Numba's ``kernel.overloads[types]``): the translated
    kernel's fields (``name``, ``arg_types``, ``source``, ``static_shared_bytes``...) and
    the queries of Numba's compiled-kernel object. ``cooperative`` is Numba's: True when
    the kernel synchronises the grid, so it is launched cooperatively."""

    def __init__(self, kernel, index):
        self._kernel = kernel
        self._index = index

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._kernel._specs[self._index], name)

    def __repr__(self):
        tk = self._kernel._specs[self._index]
        return f"<KernelOverload {self._kernel.__name__}{_sig_text(tk.arg_types)}>"

    @property
    def cooperative(self) -> bool:
        return self._kernel._specs[self._index].grid_sync

    @property
    def launch_config_sensitive(self) -> bool:
        """Whether this specialization was compiled for its launch configuration only
        (``mark_launch_config_sensitive``)."""
        return self._index in self._kernel._config_of

    @property
    def argument_types(self) -> tuple:
        return self._kernel._specs[self._index].arg_types

    @property
    def _codelibrary(self):
        """Numba's code library, reduced to ``_linking_files``: the files this
        specialization links (its kernel's and its device functions' ``link=``, by path,
        in-memory code by name; nothing else, cudadevrt included, is ever linked)."""
        import types as pytypes

        tk = self._kernel._specs[self._index]
        files = [p if isinstance(p, str) else p.name for p in self._kernel._link_paths(tk)]
        return pytypes.SimpleNamespace(_linking_files=files)

    @property
    def _type_annotation(self):
        """Numba's typing record, reduced to what code reads of it: ``typemap``, the type
        of each argument and local by name (as ``inspect_types`` prints them)."""
        import types as pytypes

        return pytypes.SimpleNamespace(typemap=dict(self._kernel._specs[self._index].local_types))

    def inspect_asm(self, cc=None) -> str:
        """PTX for ``cc`` (the current device's, or sm_90 without one)."""

        return self._kernel._ptx(self._index, _sass.inspection_cc() if cc is None else cc)

    inspect_ptx = inspect_asm

    def inspect_llvm(self):
        raise NotImplementedError(_NO_LLVM.format(what=f"kernel '{self._kernel.__name__}'"))

    def inspect_sass(self) -> str:

        return _sass.sass_of(self._kernel._cubin(self._index))

    def max_cooperative_grid_blocks(self, blockdim) -> int:
        return self._kernel.max_cooperative_grid_blocks(blockdim)

    def _usage(self, key):
        return self._kernel._usage_of(self._index, self._kernel._cubin(self._index), key,
                                      f"kernel '{self._kernel.__name__}' overload")

    @property
    def regs_per_thread(self) -> int:
        return self._usage("regs")

    @property
    def shared_mem_per_block(self) -> int:
        return self._usage("shared")

    @property
    def local_mem_per_thread(self) -> int:
        return self._usage("local")

    @property
    def const_mem_size(self) -> int:
        return self._usage("const")


def _descr_type(d, name):
    """The type of one argument from the engine's description: (dtype, ndim) or, for a
    tuple, a list of its items' descriptions ({"fields": ..., "items": list} for a
    namedtuple)."""
    names = None
    if isinstance(d, dict) and "enum" in d:  # an enum member, passed as its value
        try:
            return member_type_of(d["enum"])
        except TypeError as exc:
            raise TypeError(f"kernel '{name}': {exc}") from None
    if isinstance(d, dict):
        names, d = tuple(d["fields"]), d["items"]
    if isinstance(d, list):
        if len(d) > 8:
            raise TypeError(f"kernel '{name}': tuple arguments hold at most 8 items (got "
                            f"{len(d)})")
        return TupleType((_descr_type(x, name) for x in d), names)
    return _array_or_scalar(*d)


def _has_enum(d) -> bool:
    if isinstance(d, dict):
        return "enum" in d or any(_has_enum(x) for x in d["items"])
    return isinstance(d, list) and any(_has_enum(x) for x in d)


def _enum_values(d):
    """The description with each enum member replaced by its value's."""
    if isinstance(d, dict) and "enum" in d:
        if not issubclass(d["enum"], int):  # Numba converts only IntEnum members to numbers
            raise TypeError(f"a member of the Enum {d['enum'].__name__} is not a number: a "
                            f"declared signature cannot take it (use an IntEnum, pass its "
                            f".value, or let the kernel compile lazily)")
        return d["item"]
    if isinstance(d, dict):
        return {"fields": d["fields"], "items": [_enum_values(x) for x in d["items"]]}
    if isinstance(d, list):
        return [_enum_values(x) for x in d]
    return d


def _array_or_scalar(dtype, ndim):
    """ndim -1: a scalar; 0: a record (by reference) or a 0-d array; else an array."""
    if ndim >= 1 or ndim == 0 and np.dtype(dtype).fields is None:
        return Array(from_dtype(dtype), ndim, "A")
    return from_dtype(dtype)


def _flat_wrapper(pyfunc, types):
    """A function of the tuples' items (flattened, in order) that calls ``pyfunc`` with
    the tuples rebuilt, and its argument types."""
    code = pyfunc.__code__
    names = code.co_varnames[:code.co_argcount]
    params, flat = [], []
    namespace = {"nu_kernel_body": pyfunc}

    def rebuild(prefix, t):
        if not isinstance(t, TupleType):
            params.append(prefix)
            flat.append(t)
            return prefix
        items = [rebuild(f"{prefix}_{i}", it) for i, it in enumerate(t.items)]
        if t.names is not None:  # a namedtuple: built by its (stand-in) class, with names
            maker = f"nu_named_{len(namespace)}"
            namespace[maker] = _namedtuple_class(t.names)
            return f"{maker}({', '.join(items)})"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    calls = [rebuild(f"nu_arg{i}", t) for i, t in enumerate(types)]
    name = f"{pyfunc.__name__}_tuples" if pyfunc.__name__.isidentifier() else "kernel_tuples"
    text = (f"def {name}({', '.join(params)}):\n"
            f"    nu_kernel_body({', '.join(calls)})\n")
    exec(compile(text, f"<tuple arguments of kernel {', '.join(names)}>", "exec"), namespace)
    return namespace[name], tuple(flat)


def _namedtuple_class(fields):
    """A namedtuple class with these field names: the translator types a call of one as
    a tuple whose items ``.name`` reads (only the names matter to it)."""
    import collections

    return collections.namedtuple("NamedTupleArgument", fields)


def _rebuild_kernel(cls, pyfunc, signatures, debug, fastmath, extensions, link, lineinfo=False,
                    launch_bounds=None, shared_memory_carveout=None, specialized=False,
                    cache=False):
    if cache:
        try:  # a worker may lack the source file the cache=True files go beside
            FunctionCache(pyfunc, "cuda.jit()")
        except RuntimeError:
            cache = False
    k = cls(pyfunc, signatures, debug=debug, fastmath=fastmath, extensions=extensions,
            link=link, lineinfo=lineinfo, launch_bounds=launch_bounds,
            shared_memory_carveout=shared_memory_carveout, cache=cache)
    k._specialized = specialized
    return k


_CARVEOUTS = {"default": -1, "maxl1": 0, "maxshared": 100}


def _carveout_percent(carveout) -> int:
    """Numba's shared_memory_carveout: a percentage of the unified L1/shared storage (0 to
    100, -1 the driver's default) or "default" / "MaxL1" / "MaxShared" (any case)."""
    if isinstance(carveout, str):
        if carveout.lower() not in _CARVEOUTS:
            raise ValueError(f"Invalid carveout value: {carveout}. Must be -1 to 100 or one "
                             f"of {['MaxL1', 'MaxShared', 'default']}")
        return _CARVEOUTS[carveout.lower()]
    if isinstance(carveout, (int, np.integer)) and not isinstance(carveout, bool):
        if not -1 <= carveout <= 100:
            raise ValueError(f"Carveout must be between -1 and 100 (got {carveout})")
        return int(carveout)
    raise TypeError(f"shared_memory_carveout must be str or int, got {type(carveout).__name__}")


def _device_codegen(pyfunc, lineinfo, launch_bounds):
    """What Numba's ``lineinfo=`` and ``launch_bounds=`` change in a kernel's device build:
    the text before its entry point (``__launch_bounds__``; a ``#line`` that maps the entry
    point's own code to the ``def`` line) and NVRTC's options (``-lineinfo``: ``.loc``
    directives naming the Python file, code generation unchanged)."""

    prefix, max_threads = "", 0
    if launch_bounds is not None:
        bounds = _launch_bounds(launch_bounds, f"cuda.jit({pyfunc.__name__!r})")
        max_threads = int(bounds.split(",")[0])
        prefix += (f"#undef NU_LAUNCH_BOUNDS\n"
                   f"#define NU_LAUNCH_BOUNDS __launch_bounds__({bounds})\n")
    if lineinfo:
        src = load_source(pyfunc)
        prefix += line_directive(src.filename, src.node.lineno + src.line_offset) + "\n"
    return prefix, ["-lineinfo"] if lineinfo else [], max_threads


def _param(t):
    """(dtype, ndim, C++ element type) of a kernel parameter for the engine: ndim -1 for a
    scalar, 0 for a record (passed by reference); the C++ type only for records and
    fixed-width bytes/str elements."""
    if isinstance(t, Array):
        elem = element_ctype(t.dtype) if isinstance(t.dtype, (Record, CharSeq)) else ""
        return (t.dtype.dtype, t.ndim, elem)
    if isinstance(t, Record):
        return (t.dtype, 0, element_ctype(t))
    if isinstance(t, CPointer):  # an address, passed as a uint64 word
        return (np.dtype(np.uint64), -1, ctype(t))
    return (t.dtype, -1, "")


def _describe(dtype, ndim) -> str:
    return str(np.dtype(dtype)) if ndim < 1 else f"{np.dtype(dtype)}[{', '.join([':'] * ndim)}]"


def _is_number(t, ndim) -> bool:
    """Whether a declared parameter takes a number that may convert (Numba's rules)."""
    return ndim < 0 and isinstance(t, Scalar) and not isinstance(t, (Record, NPDatetime)) \
        and np.dtype(t.dtype).kind in "biufc"


def _accepts(t, dtype, ndim) -> bool:
    """Whether an argument of (dtype, ndim) can be passed for a declared parameter ``t``:
    arrays and records must match exactly; numbers convert (Numba's rule), except complex
    to real."""
    if isinstance(t, Array):
        return ndim == t.ndim and np.dtype(dtype) == t.dtype.dtype
    if isinstance(t, CPointer):  # an address: an integer (Numba's CPointer argument)
        return ndim < 0 and np.dtype(dtype).kind in "iu"
    if isinstance(t, Record) or ndim == 0:
        return ndim == 0 and isinstance(t, Record) and np.dtype(dtype) == t.dtype
    if ndim >= 0:
        return False
    if np.dtype(dtype).kind in "Mm" or t.dtype.kind in "Mm":  # datetimes: exactly their type
        return np.dtype(dtype) == t.dtype
    return np.dtype(dtype).kind != "c" or t.dtype.kind == "c"


class _ByTypes(dict):
    """Argument types -> a value per specialization, keyed as Numba keys ``overloads``.
    A specialization made from a launch serves every layout of its arrays (its arrays are
    ``A``), so a lookup by the types Numba would have compiled (``float32[::1]`` for a
    contiguous argument) finds it too."""

    def __missing__(self, key):
        if isinstance(key, tuple) and all(isinstance(t, Type) for t in key):
            for types, value in self.items():
                if _same_types(types, key):
                    return value
        raise KeyError(key)

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True

    def get(self, key, default=None):
        return self[key] if key in self else default


def _numba_types_text(types) -> str:
    """A tuple of types as Numba prints one in its messages: arrays as
    ``Array(float64, 1, 'C', False, aligned=True)``, other types by name."""
    def text(t):
        if isinstance(t, Array):
            return f"Array({t.dtype.name}, {t.ndim}, '{t.layout}', False, aligned=True)"
        return t.name
    items = [text(t) for t in types]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _replay_device_calls(tk) -> None:
    """The calls a cached translation makes to module-level kernels as device functions,
    told to those kernels again (the translator that noted them did not run)."""
    import sys

    for module, qualname, types, result in getattr(tk, "device_calls", ()):
        callee = sys.modules.get(module)
        for part in qualname.split("."):
            callee = getattr(callee, part, None)
        note = getattr(callee, "_nu_device_call", None)
        if callable(note):
            note(types, result)


def _config_key(config):
    """The launch configuration a launch-config sensitive specialization is valid for."""
    if config is None:
        return None
    return (tuple(config.griddim), tuple(config.blockdim), int(config.sharedmem))


def _type_of(value):
    """A launch argument's type as the engine keys it: Python ints are int64 (Numba),
    other numbers and arrays keep their NumPy dtype; a type (``float32[::1]``) is itself."""
    if isinstance(value, Type):
        return value
    if type(value) is int:
        return from_dtype(np.int64)
    arr = value if hasattr(value, "dtype") and hasattr(value, "ndim") else np.asarray(value)
    if arr.ndim == 0:
        return from_dtype(arr.dtype)
    return Array(from_dtype(np.dtype(arr.dtype)), arr.ndim, "A")


def _extension_type_of(value):
    """The type Numba's extensions receive with an argument (None where we have none)."""
    if hasattr(value, "_nu_copy_direction"):  # a cuda.args hint: its value's type
        value = value.value
    if isinstance(value, (list, dict, str, tuple)):
        return None
    try:
        return _type_of(value)
    except (TypeError, ValueError, KeyError):
        return None
