"""numbacuda_ufunc: a GPU ufunc engine with Numba's CUDA API.

Plain Python scalar functions are translated to CUDA C++, compiled at run time with
NVRTC, cached, and launched with NumPy's broadcasting rules.
"""

from . import cuda, errors, types
from .compiler._tuples import literal_unroll
from .kernels.device_function import cpu_jit as jit
from .kernels.device_function import cpu_jit as njit
from .toolchain import _compile
from .types import (
    Record,
    b1,
    bfloat16,
    bool_,
    boolean,
    byte,
    c8,
    c16,
    carray,
    complex64,
    complex128,
    double,
    f2,
    f4,
    f8,
    farray,
    float16,
    float32,
    float64,
    from_dtype,
    half,
    i1,
    i2,
    i4,
    i8,
    int8,
    int16,
    int32,
    int64,
    intp,
    none,
    single,
    typeof,
    u1,
    u2,
    u4,
    u8,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
    void,
)
from .ufuncs.gufunc import guvectorize
from .ufuncs.reduce import Reduce, reduce
from .ufuncs.ufunc import vectorize

__version__ = "0.1.0"

# Numba's top-level names that CUDA programs import beside the GPU code: ``numba.config``
# (the same settings module as ``cuda.config``) and ``prange``, which kernels, device
# functions and jit functions run as ``range`` (Numba's CUDA target does the same).
config = cuda.config
prange = range

_compile.core()  # NVRTC/CCCL from pip wheels are found by the engine too

__all__ = [
    "cuda", "errors", "types", "vectorize", "guvectorize", "reduce", "Reduce", "jit", "njit",
    "literal_unroll", "config", "prange",
    "__version__",
    "void", "none", "bool_", "boolean", "b1", "byte", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "float32", "float64", "complex64", "complex128",
    "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f4", "f8", "c8", "c16", "intp", "uintp",
    "double", "single", "float16", "f2", "half", "bfloat16", "from_dtype", "Record",
    "carray", "farray", "typeof",
]
