"""Kernel argument hints (Numba's ``numba.cuda.args``): ``cuda.In``, ``cuda.Out`` and
``cuda.InOut`` wrap a host array passed to a kernel to say which copies the launch makes.

The launch (src/bindings/kernel.cpp) reads ``_nu_copy_direction`` of the three hints
itself, so they cost no Python at launch. Any other :class:`ArgHint` subclass is
converted by calling its ``to_device(retr, stream)``, as Numba does; the callables it
appends to ``retr`` run after the launch.
"""

from __future__ import annotations

import numpy as np

from ..types import typeof
from ._array_creation import (
    DeviceNDArray,
    as_cuda_array,
    device_array_like,
    is_cuda_array,
    to_device,
)

__all__ = ["ArgHint", "In", "Out", "InOut", "wrap_arg"]


class ArgHint:
    """Base of the kernel argument hints. A subclass overrides ``to_device(retr,
    stream=0)``: it returns what the kernel receives (usually a device array) and appends
    to ``retr`` the zero-argument callables to run after the launch (copies back)."""

    __slots__ = ("value",)
    _nu_copy_direction = "custom"

    def __init__(self, value):
        self.value = value

    def to_device(self, retr, stream=0):
        raise NotImplementedError(f"{type(self).__name__}.to_device(retr, stream) must be "
                                  f"defined by ArgHint subclasses")

    @property
    def _numba_type_(self):
        return typeof(self.value)

    def __repr__(self):
        return f"cuda.{type(self).__name__}({self.value!r})"


def _on_device(value):
    return isinstance(value, DeviceNDArray) or is_cuda_array(value)


def _uploaded(value, stream, copy):
    """``value`` on the device and whether a device copy was made for it (Numba's
    ``auto_device``): device arrays and CUDA-array-interface objects are used as they are."""
    if _on_device(value):
        return (value if hasattr(value, "copy_to_host") else as_cuda_array(value)), False
    host = np.asarray(value)
    if copy:
        return to_device(host, stream=stream), True
    return device_array_like(host, stream=stream), True


class In(ArgHint):
    """Copied to the device before the launch, not back (the kernel's writes are lost)."""

    __slots__ = ()
    _nu_copy_direction = "in"

    def to_device(self, retr, stream=0):
        devary, _ = _uploaded(self.value, stream, copy=True)
        retr.append(lambda: devary)  # keeps the device copy alive until after the launch
        return devary


class _CopiedBack(ArgHint):
    __slots__ = ()
    _copy_in = True

    def to_device(self, retr, stream=0):
        devary, made = _uploaded(self.value, stream, copy=self._copy_in)
        if made:
            retr.append(lambda: devary.copy_to_host(self.value, stream=stream))
        return devary


class Out(_CopiedBack):
    """Copied back after the launch, not to the device before it (the kernel must write
    every element it wants back)."""

    __slots__ = ()
    _nu_copy_direction = "out"
    _copy_in = False


class InOut(_CopiedBack):
    """Copied both ways (what a plain host array gets)."""

    __slots__ = ()
    _nu_copy_direction = "inout"


def wrap_arg(value, default=InOut):
    """``value`` itself when it is already a hint, else ``default(value)``."""
    return value if isinstance(value, ArgHint) else default(value)
