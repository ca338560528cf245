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
from ..types import (
    from_dtype as from_dtype,  # numba.cuda.from_dtype too
)
from ..ufuncs.gufunc import guvectorize
from ..ufuncs.reduce import Reduce, reduce
from ..ufuncs.ufunc import vectorize
from . import (
    _device_arrays,  # noqa: F401  (DeviceNDArray's Python-side attributes)
    args,
    vector_types,
)
from ._array_creation import (
    DeviceNDArray,
    as_cuda_array,
    device_array,
    device_array_like,
    is_cuda_array,
    to_device,
)
from ._compile import (
    compile,
    compile_all,
    compile_for_current_device,
    compile_ptx,
    compile_ptx_for_current_device,
)
from ._device_arrays import IpcArrayHandle, open_ipc_array
from ._devices import (
    Device,
    close,
    detect,
    get_current_device,
    gpus,
    is_available,
    is_bfloat16_supported,
    is_emulated,
    is_float16_supported,
    is_fp8_supported,
    list_devices,
    select_device,
)
from ._driver import (
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
from ._host_memory import (
    ManagedNDArray,
    MappedNDArray,
    from_cuda_array_interface,
    managed_array,
    mapped,
    mapped_array,
    mapped_array_like,
    pinned,
    pinned_array_like,
)
from ._host_memory import (
    like_strides as like_strides,  # was importable from here
)
from ._streams import (
    Event,
    Stream,
    event,
    event_elapsed_time,
    external_stream,
    legacy_default_stream,
    per_thread_default_stream,
)
from .args import In, InOut, Out

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


def memory_stats() -> dict:
    """Device memory held by this process: ``in_use_bytes``, ``reserved_bytes`` (the pool),
    ``allocations``, ``free_bytes``, ``total_bytes``."""
    return _core.memory_stats()


# config: Numba's run-time settings (CUDA_ARRAY_INTERFACE_SYNC, the launch warnings...),
# read from the environment and handed to the engine.
from .. import config  # noqa: E402, I001  (Numba's cuda.config: numbacuda_ufunc.config)
from . import _driver, bf16, fp8, random  # noqa: E402, I001  (Numba's submodules)
from . import cudadrv  # noqa: E402, F401  (Numba's numba.cuda.cudadrv names)
from .cudadrv import devicearray  # noqa: E402, F401
from .cudadrv import devices  # noqa: E402, F401  (Numba: cuda.devices.gpus, get_context)
from .cudadrv import driver  # noqa: E402, F401  (numba.cuda.driver)
from .cudadrv.devices import require_context  # noqa: E402, F401
from . import extending, kernels, libdevice  # noqa: E402, F401, I001  (Numba's submodules)
from .. import errors, types  # noqa: E402, F401, I001  (numba.cuda.errors / .types: ours)

_driver._plugin_from_environment()
