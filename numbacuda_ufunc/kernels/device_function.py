"""``cuda.jit(device=True)``: device functions callable from translated functions.

A DeviceFunction is the Python function plus a marker the translator recognises; calling
it from Python on scalars simply runs the Python function (which is also how the test
oracle evaluates it).
"""

from __future__ import annotations

import collections
import functools
import types as _pytypes

from ..compiler import _overloads
from ..compiler._linking import link_paths
from ..compiler.translate import translate
from ..errors import CompileError
from ..toolchain._compile import device_ptx
from ..toolchain._jit_cache import CompileStats, FunctionCache  # imports no _core
from ..types import Signature, parse_signature

__all__ = ["DeviceFunction", "cpu_jit"]


class DeviceFunction:
    """A Python function marked for use on the device (``cuda.jit(device=True)``).
    ``cache=True`` is Numba's: a device function is compiled into each kernel that calls
    it, so it is cached inside those kernels' cache files, and its own ``stats`` count no
    hits or misses."""

    def __init__(self, py_func, signatures=(), fastmath=False, link=None, cache=False):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise CompileError(f"cuda.jit(): expected a Python function (got {py_func!r})")
        self.py_func = py_func
        self._disk = None
        if cache:
            self._disk = FunctionCache(py_func, f"cuda.jit({py_func.__name__!r}, device=True)")
        self._cache_hits = collections.Counter()
        self._cache_misses = collections.Counter()
        self.fastmath = fastmath
        # Files every kernel calling this function links (cuda.jit(device=True, link=...)).
        self.link = link_paths(link, f"cuda.jit({py_func.__name__!r}, device=True)")
        self.signatures = [parse_signature(s) for s in signatures]
        functools.update_wrapper(self, py_func)
        self._compiled = {}  # argument types -> DeviceOverload (eager and compile_device)
        for sig in self.signatures:  # eager signatures are checked at decoration
            self.compile_device(sig.args, sig.return_type)

    def compile_device(self, args, return_type=None) -> DeviceOverload:
        """Translate for the argument types ``args`` now (Numba's ``compile_device``) and
        return that specialization. Calls from kernels are typed as before: this does not
        add a declared signature."""
        sig = parse_signature(tuple(args) if isinstance(args, list) else args)
        if isinstance(sig, Signature) and sig.return_type is None and return_type is not None:
            sig = Signature(return_type, sig.args)
        ov = self._compiled.get(sig.args)
        if ov is None:
            ov = DeviceOverload(self, sig)
            self._compiled[sig.args] = ov
        return ov

    @property
    def stats(self):
        """Numba's compile statistics: ``cache_path`` (None without cache=True) and the
        ``cache_hits`` / ``cache_misses`` counters, which stay empty for a device function."""
        path = self._disk.cache_path if self._disk is not None else None
        return CompileStats(path, self._cache_hits, self._cache_misses)

    @property
    def overloads(self) -> dict:
        """Argument types -> specialization, for the eager signatures and ``compile_device``."""
        return dict(self._compiled)

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __getitem__(self, config):
        raise RuntimeError(f"Cannot compile a device function as a kernel: "
                           f"'{self.__name__}' was made with cuda.jit(device=True); launch a "
                           f"@cuda.jit kernel that calls it")

    def inspect_sass(self, signature=None):
        raise RuntimeError(f"Cannot inspect SASS of a device function ('{self.__name__}'): "
                           f"SASS exists only for kernels; use inspect_ptx()")

    def inspect_llvm(self, signature=None):
        raise NotImplementedError(_NO_LLVM.format(what=f"device function '{self.__name__}'"))

    def inspect_asm(self, signature=None, cc=None):
        """PTX of the exported device function (NVRTC; no GPU needed): a str for
        ``signature``, else a dict over the specializations (Numba's ``inspect_asm``)."""
        if signature is not None:
            return self.compile_device(parse_signature(signature).args).inspect_asm(cc)
        return {args: ov.inspect_asm(cc) for args, ov in self._compiled.items()}

    def __repr__(self):
        return f"<DeviceFunction {self.py_func.__qualname__}>"

    def inspect_cuda(self, signature=None) -> dict:
        """Signature -> generated CUDA C++ (for the given signature, or each eager one)."""
        sigs = [parse_signature(signature)] if signature is not None else self.signatures
        out = {}
        for sig in sigs:
            out[sig] = translate(self.py_func, sig.args, return_type=sig.return_type).cuda_source
        return out

    def inspect_ptx(self, signature=None, cc=(9, 0)) -> dict:
        """Signature -> PTX compiled by NVRTC (no GPU needed)."""
        sigs = [parse_signature(signature)] if signature is not None else self.signatures
        return {sig: device_ptx(self.py_func, sig, cc, self.fastmath) for sig in sigs}


_NO_LLVM = ("{what}: there is no LLVM IR to inspect: numbacuda_ufunc translates Python to CUDA "
            "C++ and compiles it with NVRTC (inspect_cuda() gives the C++, inspect_asm() the "
            "PTX)")


class DeviceOverload:
    """One specialization of a device function: its ``signature`` (with the return type
    the translator found), ``name`` (the generated C++ symbol, also in the PTX) and, as in
    Numba, ``fndesc.mangled_name``."""

    def __init__(self, dfn, sig):
        tf = translate(dfn.py_func, sig.args, return_type=sig.return_type)
        self._dfn = dfn
        self._requested = sig  # the name depends on whether the return type was given
        self.signature = Signature(tf.return_type, sig.args)
        self.name = tf.name
        self.fndesc = _pytypes.SimpleNamespace(mangled_name=tf.name)

    def inspect_asm(self, cc=None) -> str:
        """PTX of this specialization for ``cc`` (the current device's, or sm_90)."""
        return device_ptx(self._dfn.py_func, self._requested, cc, self._dfn.fastmath)

    def __repr__(self):
        return f"<DeviceOverload {self._dfn.__name__} {self.signature}>"


def cpu_jit(func=None, signature=None, **options):
    """``numba.jit`` / ``numba.njit`` for code shared between the CPU and kernels (Numba's
    "JIT function CPU-GPU compatibility"): called from Python it runs the Python function
    itself (we compile nothing for the CPU); called from a kernel, ufunc or device function
    it is translated like any other Python function. Numba's options are accepted."""
    if callable(func) and hasattr(func, "__code__"):
        return _CpuFunction(func)
    # numba.jit("(i4, i4)"): Numba compiles only that CPU signature and refuses the
    # function on the device; so do we (the signature is not compiled for the CPU).
    cpu_only = func is not None or signature is not None

    def decorate(fn):
        d = _CpuFunction(fn)
        d._nu_cpu_only = cpu_only
        return d

    return decorate


class _CpuFunction(DeviceFunction):
    """What ``numba.jit``/``njit`` make here: a DeviceFunction that, called from Python,
    runs the Python function with its calls of ``@overload``-ed functions going to their
    'cpu' or 'generic' implementations, as Numba's CPU target resolves them."""

    def __call__(self, *args, **kwargs):
        return _overloads.run_in_python(self.py_func, args, kwargs)
