"""``numba.cuda.bf16``: the ``bfloat16`` type and CUDA's bfloat16 intrinsics for kernels.

``from numbacuda_ufunc.cuda.bf16 import bfloat16, hadd, float32_to_bfloat16_rz`` as from
Numba's module. Every name Numba's module exports is here: CUDA's (``hadd``,
``float2bfloat16_rz``, ``bfloat162ll_rn``, ``short_as_bfloat16``...) and the NumPy-style
aliases (``float32_to_bfloat16_rz``, ``bfloat16_to_int64_rn``, ``int16_as_bfloat16``...).
The translator implements them (compiler/_bf16.py, src/kernels/nu_bf16.cuh); called from
Python outside a kernel they raise, as Numba's do. ``bfloat16`` is the same type as
``numbacuda_ufunc.bfloat16``: ``bfloat16(x)`` in a kernel converts as NumPy/ml_dtypes do.
"""

from __future__ import annotations

from ..compiler._bf16 import BF16_ALIASES, BF16_FUNCTIONS
from ..compiler.intrinsics import Intrinsic
from ..types import bfloat16

__all__ = ["bfloat16", "nv_bfloat16", *BF16_FUNCTIONS, *BF16_ALIASES]

nv_bfloat16 = bfloat16  # the name Numba's generated bindings give the type

for _name in (*BF16_FUNCTIONS, *BF16_ALIASES):
    globals()[_name] = Intrinsic(f"bf16.{_name}")
del _name
