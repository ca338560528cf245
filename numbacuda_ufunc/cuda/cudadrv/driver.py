"""Numba's ``numba.cuda.cudadrv.driver``: the driver-level classes and errors by Numba's
names. ``driver`` is the one driver object Numba exposes; here it answers what code asks
it (device count, nvJitLink), and attributes set on it (Numba's tests patch its ``cuMemcpy*``
functions) change nothing in the engine."""

from ...errors import CudaError, CudaSupportError, LinkerError
from .. import Context, Device, Event, Stream

__all__ = ["CudaAPIError", "CudaSupportError", "Context", "Device", "Event", "LinkerError",
           "Stream", "driver"]

CudaAPIError = CudaError


class _Driver:
    """Numba's ``driver`` singleton, reduced to the questions that make sense here."""

    def get_device_count(self) -> int:
        from .. import gpus

        return len(gpus)

    @property
    def is_available(self) -> bool:
        from .. import is_available

        return is_available()

    def __repr__(self):
        return "<numbacuda_ufunc CUDA driver (the engine calls it from C++)>"


driver = _Driver()


def _have_nvjitlink() -> bool:
    """Whether nvJitLink can be loaded (it links ``cuda.jit(link=...)`` files)."""
    from ..._compile import core

    try:
        core().nvjitlink_version()
    except Exception:  # noqa: BLE001 - any load failure means "not available"
        return False
    return True
