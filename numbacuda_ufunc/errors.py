"""The exception hierarchy of numbacuda_ufunc.

One root, :class:`NumbaCudaUfuncError`; each subclass also inherits the builtin that
matches it, so ``except TypeError`` catches a :class:`CompileError`. This module
imports nothing from ``_core`` (the C++ engine imports it to raise these types).
"""

__all__ = ["NumbaCudaUfuncError", "CompileError", "CudaSupportError", "CudaError"]


class NumbaCudaUfuncError(Exception):
    """Root of every exception this package raises on purpose."""


class CompileError(NumbaCudaUfuncError, TypeError):
    """A Python function could not be translated, or NVRTC/the host compiler failed.

    ``log`` carries the compiler log when there is one.
    """

    def __init__(self, message, log=""):
        super().__init__(message)
        self.log = log


class CudaSupportError(NumbaCudaUfuncError, RuntimeError):
    """No usable CUDA driver/device (set NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 to emulate)."""


class CudaError(NumbaCudaUfuncError, RuntimeError):
    """A CUDA driver call failed; ``name`` is the CUDA error name, ``call`` the API call."""

    def __init__(self, message, name="", call=""):
        super().__init__(message)
        self.name = name
        self.call = call
