"""Numba's driver objects: ``Device``, the ``Context`` (which answers with its ``Device``, as
``Device.reset()`` resets the ``Context``: one module, as in Numba's ``cudadrv/driver.py``)
and External Memory Management (EMM) plugins, with Numba's names.

A plugin is a class like Numba's: subclass ``HostOnlyCUDAMemoryManager`` (or
``BaseCUDAMemoryManager``), implement ``memalloc(size)`` returning a ``MemoryPointer``,
``initialize()``, ``get_memory_info()``, ``get_ipc_handle(memory)`` (or mix in
``GetIpcHandleMixin``) and ``interface_version`` (1), then call
``cuda.set_memory_manager(MyManager)`` or name the module in
``NUMBACUDA_UFUNC_MEMORY_MANAGER`` (its ``_numba_memory_manager`` attribute is the class, the
convention RMM's ``rmm.allocators.numba`` follows). From then on every device allocation
of ours (device arrays, ufunc and gufunc outputs, reduction scratch) comes from the
plugin's ``memalloc``; the ``MemoryPointer`` it returns is kept until the memory is no
longer used, and dropping it is the plugin's free. Classes that only duck-type this
interface (RMM's ``RMMNumbaManager``, which derives from Numba's own base) work too: only
``memalloc`` (returning an object with ``device_pointer`` and ``size``) is required.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import threading
from abc import ABCMeta, abstractmethod
from collections import namedtuple

from .. import _core
from ._device_attributes import ATTRIBUTES, EMULATED_H100
from ._streams import external_stream

__all__ = [
    "BaseCUDAMemoryManager", "HostOnlyCUDAMemoryManager", "GetIpcHandleMixin",
    "NumbaCudaUfuncMemoryManager", "IpcCapableMemoryManager", "MemoryPointer", "MappedMemory", "PinnedMemory",
    "MemoryInfo", "IpcHandle", "set_memory_manager", "current_context", "defer_cleanup",
    "Context", "Device",
]

_EMM_INTERFACE_VERSION = 1
MEMORY_MANAGER_ENV = "NUMBACUDA_UFUNC_MEMORY_MANAGER"

MemoryInfo = namedtuple("MemoryInfo", "free,total")
MemoryInfo.__doc__ = "Free and total device memory in bytes (Numba's MemoryInfo)."


def _pointer_value(pointer) -> int:
    value = getattr(pointer, "value", pointer)  # ctypes c_void_p, as Numba's
    if value is None:
        return 0
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"MemoryPointer(): pointer must be an integer or ctypes.c_void_p "
                        f"(got {pointer!r})")
    return value.__index__()


class DevicePointer(ctypes.c_void_p):
    """A device address: a ``ctypes.c_void_p`` (Numba's ctypes binding) that ``int()``
    also reads, as Numba's NVIDIA-binding ``CUdeviceptr`` (``int(d.gpu_data.device_pointer)``
    is the usual way to pass an address to a ``CPointer`` kernel argument)."""

    def __int__(self):
        return self.value or 0

    __index__ = __int__


class MemoryPointer:
    """Device memory handed out by a memory manager: ``device_pointer`` (a
    ``ctypes.c_void_p``), ``size`` in bytes, and the ``owner`` that keeps it alive.
    ``free()`` (or the last reference going away) runs ``finalizer`` once."""

    __cuda_memory__ = True

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        if isinstance(size, bool) or not hasattr(size, "__index__") or size < 0:
            raise ValueError(f"MemoryPointer(): size must be a non-negative integer (got {size!r})")
        self.context = context
        self.device_pointer = DevicePointer(_pointer_value(pointer))
        self.size = size.__index__()
        self._cuda_memsize_ = self.size
        self.owner = owner
        self.handle = self.device_pointer
        self.is_managed = finalizer is not None
        self._finalizer = finalizer

    @property
    def device_pointer_value(self) -> int:
        return self.device_pointer.value or 0

    @property
    def device_ctypes_pointer(self):
        return self.device_pointer

    def free(self) -> None:
        """Run the finalizer now (once); the memory must not be used afterwards."""
        fin, self._finalizer = self._finalizer, None
        if fin is not None:
            fin()

    def __del__(self):
        try:
            self.free()
        except Exception:  # noqa: BLE001  (interpreter shutdown: nothing left to free into)
            pass

    def __repr__(self):
        return f"<{type(self).__name__} 0x{self.device_pointer_value:x} size={self.size}>"

    def __eq__(self, other):
        """The same memory: equal address and size (``a.view(t).gpu_data == a.gpu_data``,
        as in Numba, where the view shares its base's pointer object)."""
        if not isinstance(other, MemoryPointer):
            return NotImplemented
        return (type(self) is type(other) and self.device_pointer_value == other.device_pointer_value
                and self.size == other.size)

    def __hash__(self):
        return hash((type(self).__name__, self.device_pointer_value, self.size))


class PinnedMemory(MemoryPointer):
    """Page-locked host memory: ``host_pointer``; kernels cannot use it directly."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        super().__init__(context, pointer, size, owner, finalizer)
        self.host_pointer = self.device_pointer
        self.device_pointer = ctypes.c_void_p(None)
        self.handle = self.host_pointer


class MappedMemory(MemoryPointer):
    """Page-locked host memory mapped into the device: ``host_pointer`` for the host,
    ``device_pointer`` for kernels (the same address under unified addressing)."""

    def __init__(self, context, pointer, size, owner=None, finalizer=None):
        host = _pointer_value(pointer)
        device = _core.mapped_device_pointer(host) if size else host
        super().__init__(context, device, size, owner, finalizer)
        self.host_pointer = ctypes.c_void_p(host)
        self.handle = self.host_pointer


class IpcHandle:
    """A CUDA IPC handle (64 bytes) for ``size`` bytes at ``offset`` of a shared
    allocation; picklable, so it can be sent to another process."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base
        self.handle = bytes(handle)
        self.size = size
        self.source_info = source_info
        self.offset = offset

    def __reduce__(self):
        return (IpcHandle, (None, self.handle, self.size, self.source_info, self.offset))


class _PendingDeallocs:
    """Numba's deallocation queue for the memory we allocate: ``disable()`` holds frees
    until the outermost block ends; ``len()`` counts the frees held; ``clear()`` does
    them now unless a ``disable()`` block is open."""

    def __len__(self) -> int:
        return _core.pending_deallocations()

    @property
    def is_disabled(self) -> bool:
        return _core.cleanup_deferred()

    def clear(self) -> None:
        _core.flush_deallocations()

    @contextlib.contextmanager
    def disable(self):
        _core.begin_deferred_cleanup()
        try:
            yield
        finally:
            _core.end_deferred_cleanup()


class BaseCUDAMemoryManager(metaclass=ABCMeta):
    """Numba's EMM interface. Subclasses are instantiated with ``context=``."""

    def __init__(self, *args, **kwargs):
        if "context" not in kwargs:
            raise RuntimeError("Memory manager requires a context")
        self.context = kwargs.pop("context")

    @abstractmethod
    def memalloc(self, size):
        """``size`` bytes of device memory, as a MemoryPointer."""

    @abstractmethod
    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        """``size`` bytes of page-locked host memory: MappedMemory or PinnedMemory."""

    @abstractmethod
    def mempin(self, owner, pointer, size, mapped=False):
        """Page-lock existing host memory: MappedMemory or PinnedMemory."""

    @abstractmethod
    def initialize(self):
        """Called once, after construction."""

    @abstractmethod
    def get_ipc_handle(self, memory):
        """An IpcHandle for a MemoryPointer's memory."""

    @abstractmethod
    def get_memory_info(self):
        """MemoryInfo(free, total)."""

    @abstractmethod
    def reset(self):
        """Free all memory this manager holds (cuda.current_context().reset())."""

    @abstractmethod
    def defer_cleanup(self):
        """A context manager that holds deallocations until it exits."""

    @property
    @abstractmethod
    def interface_version(self):
        """1, the EMM interface this package implements."""


class HostOnlyCUDAMemoryManager(BaseCUDAMemoryManager):
    """A base for plugins that manage device memory only: page-locked host memory
    (``memhostalloc``, ``mempin``), ``reset`` and ``defer_cleanup`` are done here."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.allocations = {}
        self.deallocations = _PendingDeallocs()

    def memhostalloc(self, size, mapped=False, portable=False, wc=False):
        if mapped:
            buf = _core.mapped_array(size, "u1", None, "C", bool(portable), bool(wc))
            return MappedMemory(self.context, buf.ctypes.data, size, owner=buf)
        buf = _core.pinned_array(size, "u1", "C")
        return PinnedMemory(self.context, buf.ctypes.data, size, owner=buf)

    def mempin(self, owner, pointer, size, mapped=False):
        ptr = _pointer_value(pointer)
        registered = size > 0 and _core.register_host(ptr, size, bool(mapped), False)
        finalizer = (lambda: _core.unregister_host(ptr)) if registered else None
        cls = MappedMemory if mapped else PinnedMemory
        return cls(self.context, ptr, size, owner=owner, finalizer=finalizer)

    def reset(self):
        self.allocations.clear()
        self.deallocations.clear()

    @contextlib.contextmanager
    def defer_cleanup(self):
        with self.deallocations.disable():
            yield


class GetIpcHandleMixin:
    """``get_ipc_handle`` for managers whose memory CUDA IPC can share (cuMemAlloc)."""

    def get_ipc_handle(self, memory):
        ptr = _pointer_value(memory.device_pointer)
        base, _ = _core.address_range(ptr) or (ptr, memory.size)
        handle = _core.ipc_handle(base)
        return IpcHandle(memory, handle, memory.size, offset=ptr - base)


class NumbaCudaUfuncMemoryManager(GetIpcHandleMixin, HostOnlyCUDAMemoryManager):
    """The built-in manager: device memory from our stream-ordered pool. Subclass it to
    observe allocations while keeping our pool underneath."""

    def memalloc(self, size):
        raw = _core.RawDeviceAllocation(size)
        return MemoryPointer(self.context, raw.ptr, size, owner=raw, finalizer=raw.free)

    def initialize(self):
        pass

    def get_memory_info(self):
        stats = _core.memory_stats()
        return MemoryInfo(free=stats["free_bytes"], total=stats["total_bytes"])

    @property
    def interface_version(self):
        return _EMM_INTERFACE_VERSION


class IpcCapableMemoryManager(NumbaCudaUfuncMemoryManager):
    """Device memory from ``cuMemAlloc`` instead of the stream-ordered pool: slower to
    allocate and free, but CUDA IPC can share it (``DeviceNDArray.get_ipc_handle``), as
    Numba's default manager's memory."""

    def memalloc(self, size):
        raw = _core.RawDeviceAllocation(size, True)
        return MemoryPointer(self.context, raw.ptr, size, owner=raw, finalizer=raw.free)


class Context:
    """Numba's ``cuda.current_context()``: memory queries, ``reset()``, the
    ``deallocations`` queue and the memory manager in use."""

    def __init__(self):
        self.deallocations = _PendingDeallocs()

    @property
    def device(self):
        return Device(_core.current_device())

    @property
    def memory_manager(self):
        return _manager(self)

    def get_memory_info(self) -> MemoryInfo:
        """MemoryInfo(free, total) in bytes, as the memory manager sees it."""
        info = _manager(self).get_memory_info()
        return MemoryInfo(*info)

    def memalloc(self, size):
        return _manager(self).memalloc(size)

    def memory_stats(self) -> dict:
        return _core.memory_stats()

    def trim_pool(self) -> None:
        _core.trim_pool()

    def synchronize(self) -> None:
        _core.synchronize()

    # Numba's Context stream and event factories (what cuda.stream() and the rest call)
    def create_stream(self):
        return _core.stream()

    def create_external_stream(self, ptr):
        return external_stream(ptr)

    def get_default_stream(self):
        return _core.default_stream()

    def get_legacy_default_stream(self):
        return _core.legacy_default_stream()

    def get_per_thread_default_stream(self):
        return _core.per_thread_default_stream()

    def create_event(self, timing=True):
        return _core.event(timing)

    def reset(self) -> None:
        """Wait for the device, do held frees, give the pool's cache back and reset the
        memory manager. Arrays still referenced stay valid."""
        _core.synchronize()
        self.deallocations.clear()
        _core.trim_pool()
        if _plugin is not None:
            _plugin.reset()

    @contextlib.contextmanager
    def defer_cleanup(self):
        with self.deallocations.disable():
            if _plugin is not None and hasattr(_plugin, "defer_cleanup"):
                with _plugin.defer_cleanup():
                    yield
            else:
                yield

    def __repr__(self):
        return f"<numbacuda_ufunc Context device={_core.current_device()}>"


_lock = threading.Lock()
_context = None
_plugin = None  # the installed plugin instance; None: our pool, with no Python in the way
_default = None


def current_context() -> Context:
    global _context
    with _lock:
        if _context is None:
            _context = Context()
        return _context


def _manager(ctx):
    global _default
    if _plugin is not None:
        return _plugin
    if _default is None:
        _default = NumbaCudaUfuncMemoryManager(context=ctx)
    return _default


def defer_cleanup():
    """Hold deallocations until the block ends (Numba's ``cuda.defer_cleanup()``)."""
    return current_context().defer_cleanup()


def set_memory_manager(mm_plugin) -> None:
    """Back every device allocation of ours with the EMM plugin class ``mm_plugin``.

    Memory allocated before the switch stays with whoever allocated it. ``None`` or
    ``NumbaCudaUfuncMemoryManager`` returns to the built-in pool.
    """
    global _plugin
    if mm_plugin is None or mm_plugin is NumbaCudaUfuncMemoryManager:
        _core.set_external_allocator(None)
        _plugin = None
        return
    if not isinstance(mm_plugin, type) or not callable(getattr(mm_plugin, "memalloc", None)):
        raise TypeError(f"set_memory_manager(): mm_plugin must be a memory manager class with a "
                        f"memalloc(size) method (got {mm_plugin!r})")
    instance = mm_plugin(context=current_context())
    version = getattr(instance, "interface_version", _EMM_INTERFACE_VERSION)
    if version != _EMM_INTERFACE_VERSION:
        raise RuntimeError(f"set_memory_manager(): {mm_plugin.__name__} implements EMM interface "
                           f"version {version}; this package supports version "
                           f"{_EMM_INTERFACE_VERSION}")
    if callable(getattr(instance, "initialize", None)):
        instance.initialize()
    _core.set_external_allocator(instance.memalloc)
    _plugin = instance


def _plugin_from_environment() -> None:
    """``NUMBACUDA_UFUNC_MEMORY_MANAGER=module`` (its ``_numba_memory_manager``) or
    ``module:Class`` installs that plugin at import."""
    name = os.environ.get(MEMORY_MANAGER_ENV, "").strip()
    if not name or name == "default":
        return
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise RuntimeError(f"{MEMORY_MANAGER_ENV}={name!r}: cannot import module "
                           f"{module_name!r} ({e})") from e
    attr = attr or "_numba_memory_manager"
    if not hasattr(module, attr):
        raise RuntimeError(f"{MEMORY_MANAGER_ENV}={name!r}: module {module_name!r} has no "
                           f"attribute {attr!r} naming a memory manager class")
    set_memory_manager(getattr(module, attr))


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
        if _core.is_available():
            current_context().reset()

    def __repr__(self):
        cc = ".".join(map(str, self.compute_capability))
        return f"<CUDA device {self.id} '{self.name}' cc={cc}>"


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
