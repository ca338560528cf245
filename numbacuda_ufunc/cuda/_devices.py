"""Numba's devices: ``cuda.Device``, ``cuda.gpus``, ``select_device``, ``close`` and the
capability checks (``is_available``, ``is_fp8_supported``...), over the engine."""

from __future__ import annotations

from .. import _core
from ._driver import Device, _index, _ordinal, current_context

__all__ = ["Device", "close", "detect", "get_current_device", "gpus", "is_available",
           "is_bfloat16_supported", "is_emulated", "is_float16_supported", "is_fp8_supported",
           "list_devices", "select_device"]


def is_available() -> bool:
    """True when a GPU (or the host backend, under emulation) can run kernels. Never raises."""
    return _core.is_available()


def _cc_at_least(cc) -> bool:
    """The current device has compute capability ``cc`` or newer (always true on the host
    backend, which emulates sm_90). False, never an error, when there is no device."""
    if _core.emulation_enabled():
        return True
    try:
        return tuple(get_current_device().compute_capability) >= cc
    except Exception:  # no driver or no device: such kernels cannot run
        return False


def is_bfloat16_supported() -> bool:
    """Numba's check for ``cuda.bf16``: compute capability 8.0 or newer."""
    return _cc_at_least((8, 0))


def is_float16_supported() -> bool:
    """Numba's check for float16 arithmetic: compute capability 5.3 or newer."""
    return _cc_at_least((5, 3))


def is_fp8_supported() -> bool:
    """Numba's check for FP8 types (``numba.cuda.api.is_fp8_supported``): compute
    capability 8.9 or newer."""
    return _cc_at_least((8, 9))


def is_emulated() -> bool:
    """True when the cuda target runs on the host backend (NUMBACUDA_UFUNC_ENABLE_CUDASIM=1)."""
    return _core.emulation_enabled()


def detect() -> bool:
    """Print the devices found and return whether any is usable (Numba's ``cuda.detect``)."""
    if not _core.is_available():
        print(f"No CUDA device: {_core.unavailable_reason()}")
        return False
    count = _core.device_count()
    print(f"Found {count} CUDA device{'s' if count != 1 else ''}")
    for i in range(count):
        dev = Device(i)
        cc = ".".join(map(str, dev.compute_capability))
        print(f"id {dev.id:>2} {dev.name!r:>40}  compute capability {cc}  "
              f"memory {dev.total_memory / 2**30:.1f} GiB")
    return True


def get_current_device() -> Device:
    return Device(_core.current_device())


def list_devices() -> list[Device]:
    return [Device(i) for i in range(_core.device_count())]


def select_device(device_id: int) -> Device:
    _core.select_device(_ordinal(device_id, "select_device"))
    return get_current_device()


def close() -> None:
    """Numba's ``cuda.close()``: waits for the device, does deferred frees and gives the
    pool's cache back. Arrays still referenced stay valid (the context lives until the
    process exits, so later calls work as before)."""
    if _core.is_available():
        current_context().reset()


class _DeviceContext:
    """``cuda.gpus[i]``: a device that ``with`` makes current for the block."""

    def __init__(self, ordinal: int):
        self.id = ordinal
        self._previous = []

    def __getattr__(self, name):
        return getattr(Device(self.id), name)

    def __enter__(self):
        self._previous.append(_core.current_device())
        _core.select_device(self.id)
        return Device(self.id)

    def __exit__(self, *exc):
        _core.select_device(self._previous.pop())

    def __repr__(self):
        return repr(Device(self.id))


class _DeviceList:
    """``cuda.gpus``: the devices, indexable (by an integer or a slice) and iterable;
    ``gpus.current`` is the device in use."""

    def __len__(self):
        return _core.device_count()

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):  # Numba's gpus is a list: a slice is a list of devices
            return [_DeviceContext(k) for k in range(n)[i]]
        i = _index(i, "gpus", "index")
        if not -n <= i < n:
            raise IndexError(f"gpus[{i}]: no such device (this machine has {n})")
        return _DeviceContext(i % n)

    def __iter__(self):
        return (_DeviceContext(i) for i in range(len(self)))

    @property
    def current(self):
        return _DeviceContext(_core.current_device())

    def __repr__(self):
        return f"<Managed device list: {list(self)!r}>"


gpus = _DeviceList()
