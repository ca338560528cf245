"""The names kernels use from ``cuda``: ``cuda.threadIdx.x``, ``cuda.grid(1)``,
``cuda.syncthreads()``, ``cuda.shared.array(...)``, ``cuda.atomic.add(...)``...

They exist only to be recognised by the translator (src/kernels/kernel.cuh implements
them, on the GPU and in the host emulation). Used from Python outside a kernel they
raise, as Numba's do.
"""

from __future__ import annotations

# What `cuda` exports (cuda/__init__.py imports *): every kernel-only name.
__all__ = [
    "activemask", "all_sync", "any_sync", "atomic", "ballot_sync",
    "blockDim", "blockIdx", "brev", "cbrt", "cg", "clz", "const", "eq_sync", "ffs", "fma", "fp16",
    "grid",
    "gridDim", "gridsize", "laneid", "lanemask_lt", "local", "match_all_sync",
    "match_any_sync", "nanosleep", "popc", "selp", "shared",
    "shfl_down_sync", "shfl_sync", "shfl_up_sync", "shfl_xor_sync", "syncthreads",
    "syncthreads_and", "syncthreads_count", "syncthreads_or", "syncwarp", "threadIdx",
    "threadfence", "threadfence_block", "threadfence_system", "warpsize",
    "ldca", "ldcg", "ldcs", "ldlu", "ldcv", "stcg", "stcs", "stwb", "stwt",
]


class Intrinsic:
    """A kernel-only function or value; ``key`` is what the translator dispatches on."""

    __slots__ = ("key",)

    def __init__(self, key: str):
        self.key = key

    @property
    def _nu_intrinsic(self) -> str:
        return self.key

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"cuda.{self.key}() can be called only inside a @cuda.jit kernel "
                           f"(or a device function called from one)")

    def __repr__(self):
        return f"<kernel intrinsic cuda.{self.key}>"


class Namespace:
    """``cuda.threadIdx``, ``cuda.atomic``, ``cuda.shared``...: attributes are intrinsics."""

    def __init__(self, key: str, names):
        self._nu_namespace = key
        for name in names:
            setattr(self, name, Intrinsic(f"{key}.{name}"))

    def __repr__(self):
        return f"<kernel namespace cuda.{self._nu_namespace}>"


def _dim3(key):
    return Namespace(key, ("x", "y", "z"))


threadIdx = _dim3("threadIdx")
blockIdx = _dim3("blockIdx")
blockDim = _dim3("blockDim")
gridDim = _dim3("gridDim")
laneid = Intrinsic("laneid")
warpsize = Intrinsic("warpsize")
grid = Intrinsic("grid")
gridsize = Intrinsic("gridsize")

syncthreads = Intrinsic("syncthreads")
syncthreads_count = Intrinsic("syncthreads_count")
syncthreads_and = Intrinsic("syncthreads_and")
syncthreads_or = Intrinsic("syncthreads_or")
syncwarp = Intrinsic("syncwarp")
threadfence = Intrinsic("threadfence")
threadfence_block = Intrinsic("threadfence_block")
threadfence_system = Intrinsic("threadfence_system")
nanosleep = Intrinsic("nanosleep")

shared = Namespace("shared", ("array",))
cg = Namespace("cg", ("this_grid",))
grid_group = Namespace("cg.grid_group", ("sync",))  # what cuda.cg.this_grid() returns
local = Namespace("local", ("array",))
const = Namespace("const", ("array_like",))
atomic = Namespace("atomic", ("add", "sub", "max", "min", "nanmax", "nanmin", "and_", "or_",
                              "xor", "exch", "inc", "dec", "compare_and_swap", "cas"))

shfl_sync = Intrinsic("shfl_sync")
shfl_up_sync = Intrinsic("shfl_up_sync")
shfl_down_sync = Intrinsic("shfl_down_sync")
shfl_xor_sync = Intrinsic("shfl_xor_sync")
all_sync = Intrinsic("all_sync")
any_sync = Intrinsic("any_sync")
eq_sync = Intrinsic("eq_sync")
ballot_sync = Intrinsic("ballot_sync")
match_any_sync = Intrinsic("match_any_sync")
match_all_sync = Intrinsic("match_all_sync")
activemask = Intrinsic("activemask")
lanemask_lt = Intrinsic("lanemask_lt")

# numba.cuda.fp16: half-precision intrinsics (src/kernels/nu_half.cuh, namespace nu::fp16)
FP16_FUNCTIONS = {
    "hadd": 2, "hsub": 2, "hmul": 2, "hdiv": 2, "hneg": 1, "habs": 1, "hfma": 3, "hmax": 2,
    "hmin": 2, "heq": 2, "hne": 2, "hlt": 2, "hle": 2, "hgt": 2, "hge": 2, "hsqrt": 1,
    "hrsqrt": 1, "hexp": 1, "hexp2": 1, "hexp10": 1, "hlog": 1, "hlog2": 1, "hlog10": 1,
    "hcos": 1, "hsin": 1, "hceil": 1, "hfloor": 1, "htrunc": 1, "hrint": 1, "hrcp": 1,
}
fp16 = Namespace("fp16", tuple(FP16_FUNCTIONS))

fma = Intrinsic("fma")
popc = Intrinsic("popc")
clz = Intrinsic("clz")
ffs = Intrinsic("ffs")
brev = Intrinsic("brev")
cbrt = Intrinsic("cbrt")
selp = Intrinsic("selp")

# Loads and stores with a PTX cache operator (src/kernels/nu_cache_hints.cuh):
# ldXX(array, index) and stXX(array, index, value), on arrays and typed pointers.
CACHE_LOADS = ("ldca", "ldcg", "ldcs", "ldlu", "ldcv")
CACHE_STORES = ("stcg", "stcs", "stwb", "stwt")
ldca, ldcg, ldcs, ldlu, ldcv = (Intrinsic(k) for k in CACHE_LOADS)
stcg, stcs, stwb, stwt = (Intrinsic(k) for k in CACHE_STORES)
