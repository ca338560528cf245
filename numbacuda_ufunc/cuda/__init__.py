"""The ``cuda`` namespace: Numba's device API, thin over the C++ engine.

``from numbacuda_ufunc import cuda`` replaces ``from numba import cuda`` for device
discovery, streams and device arrays. Without a GPU, set
``NUMBACUDA_UFUNC_ENABLE_CUDASIM=1`` and every call runs on the host backend.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .. import _core
from ..compiler._foreign import ForeignFunction
from ..compiler._linking import (
    LTOIR,
    Archive,
    Cubin,
    CUSource,
    Fatbin,
    LinkableCode,
    Object,
    PTXSource,
)
from ..compiler._tuples import literal_unroll
from ..compiler.intrinsics import *  # noqa: F403  (the kernel-only names, as in Numba)
from ..errors import CudaSupportError
from ..kernels import launchconfig  # Numba's numba.cuda.launchconfig (cuda/launchconfig.py)
from ..kernels.jit import jit
from ..kernels.kernel import Kernel
from ..types import (  # numba.cuda re-exports Numba's scalar types: cuda.float32, cuda.int32 ...
    b1,
    bfloat16,
    bool_,
    boolean,
    byte,
    c8,
    c16,
    char,
    complex64,
    complex128,
    double,
    f4,
    f8,
    float32,
    float64,
    from_dtype,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intc,
    intp,
    long_,
    longlong,
    none,
    short,
    u1,
    u2,
    u4,
    u8,
    uchar,
    uint8,
    uint16,
    uint32,
    uint64,
    uintc,
    uintp,
    ulong,
    ulonglong,
    ushort,
    void,
)
from ..ufuncs.gufunc import guvectorize
from ..ufuncs.reduce import Reduce, reduce
from ..ufuncs.ufunc import vectorize
from . import (
    _device_arrays,  # noqa: F401  (DeviceNDArray's Python-side attributes)
    args,
    vector_types,
)
from ._compile import (
    compile,
    compile_all,
    compile_for_current_device,
    compile_ptx,
    compile_ptx_for_current_device,
)
from ._device_arrays import IpcArrayHandle, open_ipc_array
from ._device_attributes import ATTRIBUTES, EMULATED_H100
from ._host_memory import (
    ManagedNDArray,
    MappedNDArray,
    from_cuda_array_interface,
    like_strides,
    managed_array,
    mapped,
    mapped_array,
    mapped_array_like,
    pinned,
    pinned_array_like,
)
from ._host_memory import like_source as _like_source
from ._memory_managers import (
    BaseCUDAMemoryManager,
    Context,
    GetIpcHandleMixin,
    HostOnlyCUDAMemoryManager,
    IpcCapableMemoryManager,
    IpcHandle,
    MappedMemory,
    MemoryInfo,
    MemoryPointer,
    NumbaCudaUfuncMemoryManager,
    PinnedMemory,
    current_context,
    defer_cleanup,
    set_memory_manager,
)
from ._streams import (
    Event,
    event,
    event_elapsed_time,
    external_stream,
    legacy_default_stream,
    per_thread_default_stream,
)
from .args import In, InOut, Out

DeviceNDArray = _core.DeviceNDArray
Stream = _core.Stream

# CUDA's vector types: cuda.float32x4 ... and their C names (cuda.float4 ...)
for _name, _vt in {**vector_types.vector_types, **vector_types.vector_type_aliases}.items():
    globals()[_name] = _vt.user_facing_object
del _name, _vt

__all__ = [
    "DeviceNDArray", "Stream", "Device", "is_available", "detect", "get_current_device",
    "list_devices", "select_device", "close", "synchronize", "to_device", "device_array",
    "device_array_like", "pinned_array", "as_cuda_array", "is_cuda_array", "stream",
    "default_stream", "legacy_default_stream", "per_thread_default_stream", "external_stream",
    "memory_stats", "current_context", "is_emulated", "jit", "Kernel", "compile_ptx",
    "declare_device", "LinkableCode", "CUSource", "PTXSource", "Cubin", "Fatbin", "LTOIR",
    "Object", "Archive",
    "compile", "compile_all", "compile_for_current_device", "compile_ptx_for_current_device",
    "reduce", "Reduce", "vectorize", "guvectorize", "random", "bf16", "is_bfloat16_supported",
    "fp8", "is_fp8_supported",
    # memory
    "mapped_array", "mapped_array_like", "managed_array", "pinned_array_like", "pinned",
    "mapped", "MappedNDArray", "ManagedNDArray", "defer_cleanup", "from_cuda_array_interface",
    "open_ipc_array", "IpcArrayHandle", "IpcHandle",
    # EMM plugins and contexts
    "set_memory_manager", "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager",
    "GetIpcHandleMixin", "NumbaCudaUfuncMemoryManager", "IpcCapableMemoryManager", "MemoryPointer", "MappedMemory",
    "PinnedMemory", "MemoryInfo", "Context", "gpus", "profile_start", "profile_stop",
    "profiling",
    # events and kernel argument hints
    "Event", "event", "event_elapsed_time", "In", "Out", "InOut", "args", "config", "launchconfig",
    "vector_types", *vector_types.vector_types, *vector_types.vector_type_aliases,
    # Numba's scalar types, as numba.cuda re-exports them
    "b1", "bfloat16", "bool_", "boolean", "byte", "c8", "c16", "char", "complex64", "complex128",
    "double", "f4", "f8", "float32", "float64", "i1", "i2", "i4", "i8", "int8", "int16", "int32",
    "int64", "intc", "intp", "long_", "longlong", "none", "short", "u1", "u2", "u4", "u8",
    "uchar", "uint8", "uint16", "uint32", "uint64", "uintc", "uintp", "ulong", "ulonglong",
    "ushort", "void", "is_float16_supported", "CudaSupportError", "literal_unroll",
]


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """Numba's ``cuda.declare_device``: a device function written in CUDA C++ (or PTX...),
    callable from kernels and device functions. ``sig`` such as ``"float32(float32,
    float32)"`` (a return type is required; ``CPointer(t)`` arguments take arrays).
    The function follows Numba's ABI, ``extern "C" __device__ int name(ret_t*, args...)``
    (``abi="c"``: ``ret_t name(args...)``); ``link`` names files that define it, linked
    into every kernel that calls it."""
    return ForeignFunction(name, sig, link=link, use_cooperative=use_cooperative, abi=abi)


class Device:
    """A CUDA device as Numba describes it: ``id``, ``name``, ``compute_capability``,
    and every ``CU_DEVICE_ATTRIBUTE_*`` by its name without the prefix
    (``MAX_BLOCK_DIM_X``, ``MULTIPROCESSOR_COUNT``, ...), read from the driver at first use.
    Under emulation the attributes are an H100's (cuda/_device_attributes.py)."""

    def __init__(self, ordinal: int):
        info = _core.device_info(_ordinal(ordinal, "Device"))
        self.id = info["id"]
        self.name = info["name"]
        self.compute_capability = info["compute_capability"]
        self.total_memory = info["total_memory"]
        self.MULTIPROCESSOR_COUNT = info["multiprocessors"]
        self.MAX_THREADS_PER_BLOCK = info["max_threads_per_block"]
        self.WARP_SIZE = info["warp_size"]

    def __getattr__(self, name):  # only for names __init__ did not set
        if name not in ATTRIBUTES:
            raise AttributeError(f"'Device' object has no attribute {name!r}")
        value = _core.device_attribute(self.id, ATTRIBUTES[name])
        if value == -1 and _core.emulation_enabled():
            if name not in EMULATED_H100:
                raise AttributeError(f"Device.{name}: the emulated device (the host backend) "
                                     f"has no value for CU_DEVICE_ATTRIBUTE_{name}")
            value = EMULATED_H100[name]
        setattr(self, name, value)  # Numba caches each attribute on the object too
        return value

    @property
    def supports_float16(self) -> bool:
        return tuple(self.compute_capability) >= (5, 3)

    @property
    def supports_bfloat16(self) -> bool:
        return tuple(self.compute_capability) >= (8, 0)

    @property
    def supports_fp8(self) -> bool:
        return tuple(self.compute_capability) >= (8, 9)

    def reset(self) -> None:
        """Numba's ``Device.reset()``: ``cuda.close()`` here (arrays stay valid)."""
        close()

    def __repr__(self):
        cc = ".".join(map(str, self.compute_capability))
        return f"<CUDA device {self.id} '{self.name}' cc={cc}>"


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


def profile_start() -> None:
    """Start the CUDA profiler's collection (cuProfilerStart; nothing on the host backend)."""
    _core.profiler(True)


def profile_stop() -> None:
    """Stop the CUDA profiler's collection (cuProfilerStop)."""
    _core.profiler(False)


@contextlib.contextmanager
def profiling():
    """Profile the block: ``profile_start()`` on entry, ``profile_stop()`` on exit."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()


def synchronize() -> None:
    """Wait for all work on the current device."""
    _core.synchronize()


def stream() -> Stream:
    """Create a CUDA stream.

    Returns
    -------
    Stream
        A new stream: pass it as ``stream=`` (or ``kernel[grid, block, stream]``) to order
        copies and launches on it; ``stream.synchronize()`` waits for them.

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import cuda
    >>> s = cuda.stream()
    >>> d = cuda.to_device(np.ones(3), stream=s)
    >>> s.synchronize()
    """
    return _core.stream()


def default_stream() -> Stream:
    """The default stream (what ``stream=0`` means: the legacy default stream). Closing
    it does nothing."""
    return _core.default_stream()


def to_device(obj, stream=0, copy=True, to=None):
    """Copy a host array (anything ``np.asarray`` accepts) to the device.

    Parameters
    ----------
    obj : array_like
        The data: any layout and ufunc dtype. A device array or
        ``__cuda_array_interface__`` object is copied device to device (or wrapped as it is
        with ``copy=False``).
    stream : Stream or int, optional
        The stream of the copy (default 0: it is complete when the call returns).
    copy : bool, optional
        False: a device object is wrapped instead of copied.
    to : DeviceNDArray, optional
        Copy into this device array, of ``obj``'s shape and dtype, and return it.

    Returns
    -------
    DeviceNDArray
        The device copy (or ``to``).

    Examples
    --------
    >>> import numpy as np
    >>> from numbacuda_ufunc import cuda
    >>> d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    >>> d.shape, d[:, 1].copy_to_host()
    ((2, 3), array([1., 4.]))
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
    if not arr.dtype.isnative:  # records too: newbyteorder converts every field
        arr = arr.astype(arr.dtype.newbyteorder("="))
    try:
        from_dtype(arr.dtype)  # TypeError for object, string, datetime... dtypes
    except TypeError as exc:
        raise TypeError(f"to_device(): {exc}") from None
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        arr = np.ascontiguousarray(arr)
    return _core.to_device(arr, stream)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0) -> DeviceNDArray:
    """An uninitialised device array.

    Parameters
    ----------
    shape : int or tuple of int
        The array's shape.
    dtype : data-type, optional
        Any ufunc dtype or record dtype (default float64).
    strides : tuple of int, optional
        Byte strides; default from ``order``.
    order : {'C', 'F'}, optional
        Memory layout without ``strides`` (default 'C').
    stream : Stream or int, optional
        The stream the allocation is ordered on (default 0).

    Returns
    -------
    DeviceNDArray
        The array, its memory from the stream-ordered pool (or the EMM plugin's).
    """
    return _core.device_array(shape, dtype, strides, order, stream)


def device_array_like(ary, stream=0) -> DeviceNDArray:
    """An uninitialised device array shaped like ``ary``.

    Parameters
    ----------
    ary : array_like
        Anything ``np.asarray`` takes, or a device array: its shape, dtype and memory
        layout are used as ``np.empty_like`` uses them (a Fortran-ordered view stays
        Fortran-ordered; a byte-swapped dtype gives the native one).
    stream : Stream or int, optional
        The stream the allocation is ordered on (default 0).

    Returns
    -------
    DeviceNDArray
    """
    ary, dtype = _like_source(ary, "device_array_like")
    return _core.device_array(ary.shape, dtype, like_strides(ary), "C", stream)


def pinned_array(shape, dtype=np.float64, order="C") -> np.ndarray:
    """A NumPy array in page-locked host memory.

    Copies between it and the device are fast and, on a stream, asynchronous.

    Parameters
    ----------
    shape : int or tuple of int
    dtype : data-type, optional
        Default float64.
    order : {'C', 'F'}, optional
        Default 'C'.

    Returns
    -------
    numpy.ndarray
    """
    return _core.pinned_array(shape, dtype, order)


def as_cuda_array(obj, sync=True) -> DeviceNDArray:
    """A DeviceNDArray view of any ``__cuda_array_interface__`` object (CuPy, PyTorch...).
    With ``sync`` the producer's stream is synchronized first (interface version 3)."""
    return _core.as_cuda_array(obj, bool(sync))


def is_cuda_array(obj) -> bool:
    """True for objects that export ``__cuda_array_interface__``."""
    return hasattr(obj, "__cuda_array_interface__")


def memory_stats() -> dict:
    """Device memory held by this process: ``in_use_bytes``, ``reserved_bytes`` (the pool),
    ``allocations``, ``free_bytes``, ``total_bytes``."""
    return _core.memory_stats()


def _index(value, api: str, name: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{api}(): {name} must be an integer (got {value!r})")
    return value.__index__()


def _ordinal(value, api: str) -> int:
    """A device number for the engine (a C int): beyond that range no device has it."""
    i = _index(value, api, "device_id")
    if not -2**31 <= i < 2**31:
        raise ValueError(f"{api}(): no device {i} (this machine has {_core.device_count()})")
    return i


# config: Numba's run-time settings (CUDA_ARRAY_INTERFACE_SYNC, the launch warnings...),
# read from the environment and handed to the engine.
from .. import config  # noqa: E402, I001  (Numba's cuda.config: numbacuda_ufunc.config)
from . import _memory_managers, bf16, fp8, random  # noqa: E402, I001  (random needs the names above)
from . import cudadrv  # noqa: E402, F401  (Numba's numba.cuda.cudadrv names; needs the names above)
from .cudadrv import devicearray  # noqa: E402, F401
from .cudadrv import devices  # noqa: E402, F401  (Numba: cuda.devices.gpus, get_context)
from .cudadrv import driver  # noqa: E402, F401  (numba.cuda.driver)
from .cudadrv.devices import require_context  # noqa: E402, F401
from . import extending, kernels, libdevice  # noqa: E402, F401, I001  (Numba's submodules)
from .. import errors, types  # noqa: E402, F401, I001  (numba.cuda.errors / .types: ours)

_memory_managers._plugin_from_environment()
