"""Numba's ``numba.cuda.cudadrv.devices`` (also reached as ``cuda.devices``): the device
list ``gpus`` and the context helpers that programs written for Numba call."""

import functools

from .._devices import close, gpus, select_device
from .._driver import current_context

__all__ = ["gpus", "get_context", "require_context", "reset"]


def get_context(devnum=None):
    """The current context, after making device ``devnum`` current when it is given."""
    if devnum is not None:
        select_device(devnum)
    return current_context()


def require_context(fn):
    """A decorator: ``fn`` runs with a context current (made at first use, as everywhere)."""
    @functools.wraps(fn)
    def with_context(*args, **kwargs):
        get_context()
        return fn(*args, **kwargs)
    return with_context


def reset():
    """Numba's ``devices.reset()``: ``cuda.close()`` here (the context stays usable)."""
    close()
