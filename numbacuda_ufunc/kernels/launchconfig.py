"""Numba's ``numba.cuda.launchconfig``: the launch configuration of the kernel launch whose
new argument types are being compiled, visible to code that runs during that compilation
(the kernel's ``_compile_for_args``, extensions, overloads). It is set only while a launch
compiles, per thread, and cleared when the compilation ends."""

from __future__ import annotations

import contextlib
import threading
from functools import wraps
from types import MethodType

__all__ = ["LaunchConfig", "capture_compile_config", "current_launch_config",
           "ensure_current_launch_config"]

_state = threading.local()


class LaunchConfig:
    """A launch as the compilation it triggers sees it: the kernel (``dispatcher``), its
    ``griddim`` and ``blockdim`` (3-tuples), ``stream``, dynamic ``sharedmem`` bytes and
    the launch's ``args``."""

    __slots__ = ("dispatcher", "griddim", "blockdim", "stream", "sharedmem", "args", "_launch",
                 "_kernel_launch_config_sensitive")

    def __init__(self, dispatcher, griddim, blockdim, stream, sharedmem, args, launch=None):
        self.dispatcher = dispatcher
        self.griddim = tuple(griddim)
        self.blockdim = tuple(blockdim)
        self.stream = stream
        self.sharedmem = sharedmem
        self.args = tuple(args)
        self._launch = launch  # the configured kernel (kernel[grid, block]) launching
        # Set by dispatcher.mark_launch_config_sensitive() during the compilation.
        self._kernel_launch_config_sensitive = False

    def _is_kernel_launch_config_sensitive(self):
        """Whether the compilation was marked launch-config sensitive (Numba's)."""
        return bool(self._kernel_launch_config_sensitive)

    def __repr__(self):
        return (f"LaunchConfig(kernel={getattr(self.dispatcher, '__name__', '?')!r}, "
                f"griddim={self.griddim}, blockdim={self.blockdim}, "
                f"sharedmem={self.sharedmem})")


def current_launch_config():
    """The launch configuration being compiled for on this thread, or None."""
    return getattr(_state, "config", None)


def ensure_current_launch_config():
    """The current launch configuration; RuntimeError outside a launch's compilation."""
    config = current_launch_config()
    if config is None:
        raise RuntimeError("No launch config set for this thread")
    return config


@contextlib.contextmanager
def capture_compile_config(dispatcher):
    """Within the block, record in the yielded dict's ``"config"`` the launch configuration
    a compilation of ``dispatcher`` triggered by a launch sees (None when nothing is
    compiled). The kernel's own ``_compile_for_args`` is restored afterwards."""
    if dispatcher is None:
        raise TypeError("capture_compile_config(): dispatcher is required")
    record = {"config": None}
    own = "_compile_for_args" in vars(dispatcher)
    saved = vars(dispatcher).get("_compile_for_args")
    compile_for_args = dispatcher._compile_for_args

    @wraps(compile_for_args)
    def recording(self, *args, **kws):
        record["config"] = current_launch_config()
        return compile_for_args(*args, **kws)

    dispatcher._compile_for_args = MethodType(recording, dispatcher)
    try:
        yield record
    finally:
        if own:
            dispatcher._compile_for_args = saved
        else:
            del dispatcher._compile_for_args


@contextlib.contextmanager
def _compiling(config, descr):
    """Engine use: ``config`` is current, and ``descr`` (the engine's description of the
    launch's arguments) pending, while a launch compiles on this thread."""
    before = getattr(_state, "config", None), getattr(_state, "descr", None)
    _state.config, _state.descr = config, descr
    try:
        yield
    finally:
        _state.config, _state.descr = before


def _pending_descr(dispatcher):
    """The argument description of the launch of ``dispatcher`` compiling on this thread."""
    config = current_launch_config()
    return _state.descr if config is not None and config.dispatcher is dispatcher else None
