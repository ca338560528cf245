"""``numba.cuda.libdevice``: CUDA's libdevice functions, callable in kernels and device
functions by their names without ``__nv_`` (``libdevice.sin(x)``, ``libdevice.sincosf(x)``,
``libdevice.fast_sinf(x)``, ``libdevice.popc(x)``, ``libdevice.dadd_rd(x, y)``...).

The types are libdevice's, as Numba gives them (``sinf`` takes and returns float32;
unsigned values are int32/int64 bits). Functions that return extra values through pointers
in libdevice return a tuple: ``s, c = libdevice.sincos(x)``, ``frac, exp = libdevice.frexp(x)``.
The table is :data:`FUNCTIONS` (name -> (parameter type codes, result type codes)).
Called from Python outside a kernel they raise, as Numba's stubs do.
"""

from __future__ import annotations

from ..compiler._libdevice import FUNCTIONS
from ..compiler.intrinsics import Intrinsic

__all__ = sorted(FUNCTIONS)

for _name in FUNCTIONS:
    globals()[_name] = Intrinsic(f"libdevice.{_name}")
del _name
