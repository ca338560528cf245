"""The ``cuda`` namespace: Numba's device API, thin over the C++ engine.

``from numbacuda_ufunc import cuda`` replaces ``from numba import cuda`` for device
discovery, streams and device arrays. Without a GPU, set
``NUMBACUDA_UFUNC_ENABLE_CUDASIM=1`` and every call runs on the host backend.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from .._compile import (
    compile,
    compile_for_current_device,
    compile_ptx,
    compile_ptx_for_current_device,
)
from ..compiler.intrinsics import *  # noqa: F403  (the kernel-only names, as in Numba)
from ..kernel import Kernel, jit
from ..reduce import Reduce, reduce
from ..types import from_dtype

DeviceNDArray = _core.DeviceNDArray
Stream = _core.Stream

__all__ = [
    "DeviceNDArray", "Stream", "Device", "is_available", "detect", "get_current_device",
    "list_devices", "select_device", "close", "synchronize", "to_device", "device_array",
    "device_array_like", "pinned_array", "as_cuda_array", "is_cuda_array", "stream",
    "default_stream", "legacy_default_stream", "external_stream", "memory_stats",
    "current_context", "is_emulated", "jit", "Kernel", "compile_ptx", "compile",
    "compile_for_current_device", "compile_ptx_for_current_device", "reduce", "Reduce",
    "random",
]


class Device:
    """A CUDA device as Numba describes it: ``id``, ``name``, ``compute_capability``."""

    def __init__(self, ordinal: int):
        info = _core.device_info(ordinal)
        self.id = info["id"]
        self.name = info["name"]
        self.compute_capability = info["compute_capability"]
        self.total_memory = info["total_memory"]
        self.MULTIPROCESSOR_COUNT = info["multiprocessors"]
        self.MAX_THREADS_PER_BLOCK = info["max_threads_per_block"]
        self.WARP_SIZE = info["warp_size"]

    def __repr__(self):
        cc = ".".join(map(str, self.compute_capability))
        return f"<CUDA device {self.id} '{self.name}' cc={cc}>"


def is_available() -> bool:
    """True when a GPU (or the host backend, under emulation) can run kernels. Never raises."""
    return _core.is_available()


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
    _core.select_device(_index(device_id, "select_device", "device_id"))
    return get_current_device()


def close() -> None:
    """Numba compatibility: synchronizes; contexts and pools live until process exit."""
    if _core.is_available():
        _core.synchronize()


def synchronize() -> None:
    """Wait for all work on the current device."""
    _core.synchronize()


def stream() -> Stream:
    """A new stream; pass it as ``stream=`` to order copies and launches on it."""
    return _core.stream()


def default_stream() -> Stream:
    """The legacy default stream (what ``stream=0`` means)."""
    return _core.default_stream()


legacy_default_stream = default_stream


def external_stream(ptr) -> Stream:
    """Wrap a stream handle created by another library; we never destroy it."""
    return _core.external_stream(ptr)


def to_device(obj, stream=0, copy=True, to=None):
    """Copy a host array (anything ``np.asarray`` accepts) to the device.

    With ``to=`` the data is copied into that device array, which is returned. A device
    array or CUDA-array-interface object is copied device to device (or wrapped as it
    is with ``copy=False``).
    """
    if to is not None:
        if not isinstance(to, DeviceNDArray):
            to = as_cuda_array(to)
        _core.copy_into(to, obj, stream)
        return to
    if isinstance(obj, DeviceNDArray) or is_cuda_array(obj):
        src = as_cuda_array(obj)
        if not copy:
            return src
        out = device_array_like(src, stream)
        _core.copy_into(out, src, stream)
        return out
    arr = np.asarray(obj)
    from_dtype(arr.dtype)  # TypeError for object, string, datetime... dtypes
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    return _core.to_device(arr, stream)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0) -> DeviceNDArray:
    """An uninitialised device array."""
    return _core.device_array(shape, dtype, strides, order, stream)


def device_array_like(ary, stream=0) -> DeviceNDArray:
    """An uninitialised device array with ``ary``'s shape, dtype and memory order."""
    if isinstance(ary, DeviceNDArray):
        c_order, f_order = ary.is_c_contiguous(), ary.is_f_contiguous()
    else:
        ary = ary if hasattr(ary, "flags") else np.asarray(ary)
        c_order, f_order = ary.flags["C_CONTIGUOUS"], ary.flags["F_CONTIGUOUS"]
    order = "F" if f_order and not c_order else "C"
    return _core.device_array(ary.shape, ary.dtype, None, order, stream)


def pinned_array(shape, dtype=np.float64, order="C") -> np.ndarray:
    """A NumPy array in page-locked host memory (fast, asynchronous copies)."""
    return _core.pinned_array(shape, dtype, order)


def as_cuda_array(obj, sync=True) -> DeviceNDArray:
    """A DeviceNDArray view of any ``__cuda_array_interface__`` object (CuPy, PyTorch...)."""
    return _core.as_cuda_array(obj)


def is_cuda_array(obj) -> bool:
    """True for objects that export ``__cuda_array_interface__``."""
    return hasattr(obj, "__cuda_array_interface__")


def memory_stats() -> dict:
    """Device memory held by this process: ``in_use_bytes``, ``reserved_bytes`` (the pool),
    ``allocations``, ``free_bytes``, ``total_bytes``."""
    return _core.memory_stats()


class _Context:
    """Numba's ``current_context()``: memory queries and pool control."""

    def get_memory_info(self):
        stats = _core.memory_stats()
        return stats["free_bytes"], stats["total_bytes"]

    def memory_stats(self) -> dict:
        return _core.memory_stats()

    def trim_pool(self) -> None:
        _core.trim_pool()

    def synchronize(self) -> None:
        _core.synchronize()


def current_context() -> _Context:
    return _Context()


def _index(value, api: str, name: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{api}(): {name} must be an integer (got {value!r})")
    return value.__index__()


from . import random  # noqa: E402  (numba.cuda.random; needs the names above)
