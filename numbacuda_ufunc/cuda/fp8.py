"""FP8 in kernels: numba-cuda's ``numba.cuda._internal.cuda_fp8`` (CUDA's cuda_fp8.h).

``from numbacuda_ufunc.cuda.fp8 import fp8_e4m3, cvt_float_to_fp8, saturation_t`` as from
Numba's module. In a kernel or device function:

* ``fp8_e4m3(x)``, ``fp8_e5m2(x)``, ``fp8_e8m0(x)`` build a value from a float16,
  bfloat16, float32, float64 or integer (CUDA's constructors: round to nearest even and
  saturate to the largest finite value; e8m0 rounds ``|x|`` up to a power of two);
  ``float32(v)``, ``float64(v)``, ``float16(v)``, ``bfloat16(v)``, ``int64(v)``,
  ``uint8(v)``... convert a value back (integers toward zero, saturating).
* ``cvt_float_to_fp8(x, saturation_t.NOSAT, fp8_interpretation_t.E5M2)``,
  ``cvt_double_to_fp8``, ``cvt_bfloat16raw_to_fp8`` return the raw byte (uint8);
  ``cvt_float_to_e8m0(x, saturation_t.SATFINITE, cudaRoundMode.cudaRoundPosInf)``,
  ``cvt_double_to_e8m0``, ``cvt_bfloat16raw_to_e8m0`` the e8m0 byte;
  ``cvt_e8m0_to_bf16raw(b)`` a bfloat16_raw whose ``.x`` is its uint16 bits.
* ``fp8x2_e4m3(v)`` ... ``fp8x4_e8m0(v)`` pack two (four) values from a float32x2 or
  float64x2 (float32x4, float64x4), converted as the scalar constructors do;
  ``cuda.float32x2(p)`` (``float32x4``) converts back and ``p.__x`` is the packed bytes
  (x in the low byte); ``cvt_float2_to_fp8x2``, ``cvt_double2_to_fp8x2``,
  ``cvt_float2_to_e8m0x2``, ``cvt_double2_to_e8m0x2`` return the two bytes as a uint16.
* ours, not Numba's: ``fp8_to_bits(v)`` (the storage byte) and ``fp8_e4m3_from_bits(b)``,
  ``fp8_e5m2_from_bits(b)``, ``fp8_e8m0_from_bits(b)`` (a value from its byte).

``cudaRoundMode`` is cuda-python's enum (``cuda.bindings.runtime``); this module has one
with the same values for programs without cuda-python. The translator implements all of
them (compiler/_fp8.py, src/kernels/nu_fp8.cuh); on the GPU they are CUDA's own.
"""

from __future__ import annotations

from ..compiler._fp8 import (
    EXTENSIONS,
    FP8_FUNCTIONS,
    STUBS,
    cudaRoundMode,
    fp8_interpretation_t,
    saturation_t,
)
from ..compiler.intrinsics import Intrinsic
from ._devices import is_fp8_supported as _device_supports_fp8

__all__ = ["fp8_e4m3", "fp8_e5m2", "fp8_e8m0", "fp8x2_e4m3", "fp8x2_e5m2", "fp8x2_e8m0",
           "fp8x4_e4m3", "fp8x4_e5m2", "fp8x4_e8m0", "saturation_t", "fp8_interpretation_t",
           "cudaRoundMode", "is_fp8_supported", *FP8_FUNCTIONS, *EXTENSIONS]

fp8_e4m3 = STUBS["fp8_e4m3"]
fp8_e5m2 = STUBS["fp8_e5m2"]
fp8_e8m0 = STUBS["fp8_e8m0"]
fp8x2_e4m3, fp8x2_e5m2, fp8x2_e8m0 = (STUBS[f"fp8x2_{k}"] for k in ("e4m3", "e5m2", "e8m0"))
fp8x4_e4m3, fp8x4_e5m2, fp8x4_e8m0 = (STUBS[f"fp8x4_{k}"] for k in ("e4m3", "e5m2", "e8m0"))

for _name in (*FP8_FUNCTIONS, *EXTENSIONS):
    globals()[_name] = Intrinsic(f"fp8.{_name}")
del _name


def is_fp8_supported() -> bool:
    """Numba's ``numba.cuda.api.is_fp8_supported``: compute capability 8.9 or newer (the
    host backend emulates sm_90: True). False, never an error, when there is no device."""
    return _device_supports_fp8()
