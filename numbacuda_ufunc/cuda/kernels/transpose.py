"""``transpose(a, b=None)``: the transpose of a 2-d device array, written into ``b``
(Numba's ``numba.cuda.kernels.transpose``).

A block of 32 x 32 threads moves one 32 x 32 tile through shared memory: it reads a tile
of ``a`` along its rows and writes the tile of ``b`` along its rows, so both sides of the
copy are coalesced on a GPU. The tile has one padding column so that reading it by
columns hits 32 different shared-memory banks. One kernel per dtype (the tile's element
type), made on first use; records and bools are moved like any other element.
"""

from __future__ import annotations

import threading

import numpy as np

from ...compiler.intrinsics import blockIdx, shared, syncthreads, threadIdx
from ...kernels.jit import jit
from ...types import from_dtype
from .._array_creation import DeviceNDArray, as_cuda_array, device_array, is_cuda_array

__all__ = ["transpose"]

_TILE = 32
_TILE_SHAPE = (_TILE, _TILE + 1)  # + 1: no shared-memory bank conflicts on the column read
_kernels = {}  # np.dtype -> Kernel
_lock = threading.Lock()


def _make_kernel(element_type):
    def transpose_tile(src, dst):
        tile = shared.array(_TILE_SHAPE, element_type)
        tx = threadIdx.x
        ty = threadIdx.y
        first_col = blockIdx.x * _TILE  # of src; a row of dst
        first_row = blockIdx.y * _TILE  # of src; a column of dst
        row = first_row + ty
        col = first_col + tx
        if row < src.shape[0] and col < src.shape[1]:
            tile[ty, tx] = src[row, col]
        syncthreads()
        row = first_col + ty
        col = first_row + tx
        if row < dst.shape[0] and col < dst.shape[1]:
            dst[row, col] = tile[tx, ty]

    return jit(transpose_tile)


def _kernel_for(dtype):
    with _lock:
        kernel = _kernels.get(dtype)
        if kernel is None:
            kernel = _kernels[dtype] = _make_kernel(from_dtype(dtype))
        return kernel


def _device_array(obj, name):
    if isinstance(obj, DeviceNDArray):
        return obj
    if is_cuda_array(obj):
        return as_cuda_array(obj)
    raise TypeError(f"transpose(): {name} must be a device array (DeviceNDArray or an object "
                    f"with __cuda_array_interface__) (got {type(obj).__name__}); copy host "
                    f"arrays with cuda.to_device first")


def _byte_range(arr):
    """[first, last] bytes an array's elements occupy."""
    cai = arr.__cuda_array_interface__
    start = cai["data"][0]
    itemsize = np.dtype(arr.dtype).itemsize
    strides = cai.get("strides") or tuple(itemsize * int(np.prod(arr.shape[k + 1:]))
                                          for k in range(arr.ndim))  # None: C order
    lo = hi = start
    for n, s in zip(arr.shape, strides):
        if n > 1:
            (lo, hi) = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
    return lo, hi + itemsize - 1


def _overlap(a, b) -> bool:
    if a.size == 0 or b.size == 0:
        return False
    a_lo, a_hi = _byte_range(a)
    b_lo, b_hi = _byte_range(b)
    return a_lo <= b_hi and b_lo <= a_hi


def transpose(a, b=None):
    """Write the transpose of the 2-d device array ``a`` into ``b`` and return ``b``.

    ``b`` must be a 2-d device array of shape ``a.shape[::-1]`` and ``a``'s dtype; with
    ``b=None`` a C-contiguous one is allocated. ``b`` may have any strides; it must not
    overlap ``a``. The work is queued on ``a``'s stream (the default stream when it has
    none) and not waited for, as for any kernel launch.
    """
    a = _device_array(a, "a")
    if a.ndim != 2:
        raise ValueError(f"transpose(): a must be a 2-d array (got {a.ndim} dimensions, shape "
                         f"{tuple(a.shape)})")
    stream = getattr(a, "stream", 0) or 0
    rows, cols = a.shape
    if b is None:
        b = device_array((cols, rows), dtype=a.dtype, stream=stream)
    else:
        b = _device_array(b, "b")
        if b.ndim != 2 or tuple(b.shape) != (cols, rows):
            raise ValueError(f"transpose(): b must have shape {(cols, rows)}, the transpose "
                             f"of a's {(rows, cols)} (got {tuple(b.shape)})")
        if np.dtype(b.dtype) != np.dtype(a.dtype):
            raise TypeError(f"transpose(): b must have a's dtype {np.dtype(a.dtype)} (got "
                            f"{np.dtype(b.dtype)})")
        if _overlap(a, b):
            raise ValueError("transpose(): b must not overlap a (a transpose in place is "
                             "not supported; pass b=None for a new array)")
    if a.size == 0:
        return b
    kernel = _kernel_for(np.dtype(a.dtype))
    blocks = ((cols + _TILE - 1) // _TILE, (rows + _TILE - 1) // _TILE)
    kernel[blocks, (_TILE, _TILE), stream](a, b)
    return b
