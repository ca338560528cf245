"""The exception hierarchy of numbacuda_ufunc.

One root, :class:`NumbaCudaUfuncError`; each subclass also inherits the builtin that
matches it, so ``except TypeError`` catches a :class:`CompileError`. This module
imports nothing from ``_core`` (the C++ engine imports it to raise these types).
"""

__all__ = ["NumbaCudaUfuncError", "CompileError", "HostCompilerNotFoundError", "CudaSupportError", "CudaError",
           "LaunchConfigError", "DuplicateOutputError", "LinkerError", "NumbaWarning", "NumbaPerformanceWarning",
           "NumbaInvalidConfigWarning"]


class NumbaCudaUfuncError(Exception):
    """Root of every exception this package raises on purpose."""


class CompileError(NumbaCudaUfuncError, TypeError):
    """A Python function could not be translated, or NVRTC/the host compiler failed.

    ``log`` carries the compiler log when there is one.
    """

    def __init__(self, message, log=""):
        super().__init__(message)
        self.log = log


class HostCompilerNotFoundError(CompileError, RuntimeError):
    """No host C++ compiler to run: the ``cpu`` and ``parallel`` targets and the host
    backend build generated C++ with one at run time (``$CXX``, else ``c++`` on ``PATH``).
    The message says how to install one; the ``cuda`` target on a GPU needs none."""


class CudaSupportError(NumbaCudaUfuncError, RuntimeError):
    """No usable CUDA driver/device (set NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 to emulate)."""


class CudaError(NumbaCudaUfuncError, RuntimeError):
    """A CUDA driver call failed; ``name`` is the CUDA error name, ``call`` the API call.
    Numba's form ``CudaAPIError(code, msg)`` (an integer code first) reads
    ``"[code] msg"``, with ``code`` and ``msg`` kept."""

    def __init__(self, message, name="", call=""):
        if isinstance(message, int) and not isinstance(message, bool):
            self.code, self.msg = message, str(name)
            message, name = f"[{message}] {name}", ""
        super().__init__(message)
        self.name = name
        self.call = call


class LaunchConfigError(CudaError, ValueError):
    """A launch configuration the device refuses (too many threads per block, a block or
    grid dimension or shared memory above the limit), caught before the launch on every
    backend. ``name`` is the CUDA error the driver gives for it (``CUDA_ERROR_INVALID_VALUE``,
    or ``CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`` when registers limit the block), so
    ``except CudaAPIError`` catches it as in Numba, and ``except ValueError`` too."""


class DuplicateOutputError(NumbaCudaUfuncError, TypeError, ValueError):
    """A gufunc call that gives its outputs both positionally and with ``out=``: a
    ``TypeError``, as NumPy raises for any ufunc, and a ``ValueError``, as Numba's gufuncs
    raise, with Numba's message (:data:`DUPLICATE_OUTPUT`)."""


DUPLICATE_OUTPUT = "cannot specify argument 'out' as both positional and keyword"


class LinkerError(NumbaCudaUfuncError, RuntimeError):
    """A file given to ``cuda.jit(link=...)`` / ``cuda.declare_device(link=...)`` cannot be
    linked: an unknown kind, GPU code on the host backend, or an nvJitLink failure (Numba's
    ``LinkerError``). ``log`` carries the linker's log when there is one."""

    def __init__(self, message, log=""):
        super().__init__(message)
        self.log = log


class NumbaWarning(Warning):
    """Root of the warnings this package issues, by Numba's name (so a warnings filter
    written for Numba applies)."""


class NumbaPerformanceWarning(NumbaWarning):
    """Code that works but runs slowly: a launch grid too small to fill the device, a host
    array a kernel launch copies to and from the device (numbacuda_ufunc.cuda.config
    turns each off)."""


class NumbaInvalidConfigWarning(NumbaWarning):
    """A combination of options Numba warns about (``debug=True`` with ``opt=True``)."""
