"""Numba's ``numba.cuda.cudadrv.driver``: the driver-level classes and errors by Numba's
names. ``driver`` is the one driver object Numba exposes; here it answers what code asks
it (device count, nvJitLink). The engine calls the driver from C++, so its functions are
not attributes here; but a callable set as ``driver.cuMemcpyHtoD`` or
``driver.cuMemcpyDtoH`` (as Numba's tests patch them) observes the host<->device copies
of array data: it is called ``(dst, src, nbytes)`` before each, and what it raises
propagates with the copy not made. Deleting the attribute removes it."""

from ...errors import CudaError, CudaSupportError, LinkerError
from ...toolchain._compile import core
from .._devices import Device, gpus, is_available
from .._driver import Context
from .._streams import Event, Stream

__all__ = ["CudaAPIError", "CudaSupportError", "Context", "Device", "Event", "LinkerError",
           "Stream", "driver"]

CudaAPIError = CudaError


_TRANSFER_OBSERVERS = ("cuMemcpyHtoD", "cuMemcpyDtoH")  # host->device, device->host


class _Driver:
    """Numba's ``driver`` singleton, reduced to the questions that make sense here."""

    def get_device_count(self) -> int:
        return len(gpus)

    @property
    def is_available(self) -> bool:
        return is_available()

    def __repr__(self):
        return "<numbacuda_ufunc CUDA driver (the engine calls it from C++)>"

    def __setattr__(self, name, value):
        if name in _TRANSFER_OBSERVERS and not callable(value):
            raise TypeError(f"driver.{name} must be callable (got {value!r})")
        object.__setattr__(self, name, value)
        if name in _TRANSFER_OBSERVERS:
            self._install_observers()

    def __delattr__(self, name):
        object.__delattr__(self, name)
        if name in _TRANSFER_OBSERVERS:
            self._install_observers()

    def _install_observers(self):
        core().set_transfer_observers(*(vars(self).get(n) for n in _TRANSFER_OBSERVERS))


driver = _Driver()


def _have_nvjitlink() -> bool:
    """Whether nvJitLink can be loaded (it links ``cuda.jit(link=...)`` files)."""
    try:
        core().nvjitlink_version()
    except Exception:  # noqa: BLE001 - any load failure means "not available"
        return False
    return True
