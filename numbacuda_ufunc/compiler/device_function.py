"""``cuda.jit(device=True)``: device functions callable from translated functions.

A DeviceFunction is the Python function plus a marker the translator recognises; calling
it from Python on scalars simply runs the Python function (which is also how the test
oracle evaluates it).
"""

from __future__ import annotations

import functools

from .._linking import link_paths
from ..errors import CompileError
from ..types import parse_signature
from .translate import translate

__all__ = ["DeviceFunction", "cpu_jit"]


class DeviceFunction:
    """A Python function marked for use on the device (``cuda.jit(device=True)``)."""

    def __init__(self, py_func, signatures=(), fastmath=False, link=None):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise CompileError(f"cuda.jit(): expected a Python function (got {py_func!r})")
        self.py_func = py_func
        self.fastmath = fastmath
        # Files every kernel calling this function links (cuda.jit(device=True, link=...)).
        self.link = link_paths(link, f"cuda.jit({py_func.__name__!r}, device=True)")
        self.signatures = [parse_signature(s) for s in signatures]
        functools.update_wrapper(self, py_func)
        for sig in self.signatures:  # eager signatures are checked at decoration
            translate(py_func, sig.args, return_type=sig.return_type)

    def __call__(self, *args, **kwargs):
        return self.py_func(*args, **kwargs)

    def __getitem__(self, config):
        raise RuntimeError(f"Cannot compile a device function as a kernel: "
                           f"'{self.__name__}' was made with cuda.jit(device=True); launch a "
                           f"@cuda.jit kernel that calls it")

    def inspect_sass(self, signature=None):
        raise RuntimeError(f"Cannot inspect SASS of a device function ('{self.__name__}'): "
                           f"SASS exists only for kernels; use inspect_ptx()")

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
        from .._compile import compile_ptx

        sigs = [parse_signature(signature)] if signature is not None else self.signatures
        return {sig: compile_ptx(self.py_func, sig, device=True, cc=cc,
                                 fastmath=self.fastmath)[0] for sig in sigs}


def cpu_jit(func=None, signature=None, **options):
    """``numba.jit`` / ``numba.njit`` for code shared between the CPU and kernels (Numba's
    "JIT function CPU-GPU compatibility"): called from Python it runs the Python function
    itself (we compile nothing for the CPU); called from a kernel, ufunc or device function
    it is translated like any other Python function. Numba's options are accepted."""
    if callable(func) and hasattr(func, "__code__"):
        return DeviceFunction(func)
    # numba.jit("(i4, i4)"): Numba compiles only that CPU signature and refuses the
    # function on the device; so do we (the signature is not compiled for the CPU).
    cpu_only = func is not None or signature is not None

    def decorate(fn):
        d = DeviceFunction(fn)
        d._nu_cpu_only = cpu_only
        return d

    return decorate
