"""``cuda.local.array`` / ``cuda.shared.array`` with ``alignment=`` (issue 16, Numba parity:
cudapy/test_array_alignment.py): Numba's validation and messages, the address aligned on
the host backend (read with ``a.ctypes.data``), and the alignment in the PTX NVRTC makes
for sm_90 (``.local``/``.shared .align N``)."""

import re

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CompileError

RECORD = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=False)
DTYPES = [np.uint8, np.uint64, RECORD]


def _kernel(space, shape, dtype, alignment):
    if space == "local":
        @cuda.jit
        def k(out):
            arr = cuda.local.array(shape=shape, dtype=dtype, alignment=alignment)
            if cuda.grid(1) == 0:
                out[0] = arr.ctypes.data
    else:
        @cuda.jit
        def k(out):
            arr = cuda.shared.array(shape=shape, dtype=dtype, alignment=alignment)
            if cuda.grid(1) == 0:
                out[0] = arr.ctypes.data
    return k


def _ptx_alignments(kernel, space):
    ptx = next(iter(kernel.inspect_ptx().values()))
    return [int(a) for a in re.findall(rf"^\s*\.{space} \.align (\d+) ", ptx, re.MULTILINE)]


@pytest.mark.parametrize("space", ["local", "shared"])
@pytest.mark.parametrize("shape", [1, 50, (2, 3), (1, 4, 5)], ids=str)
@pytest.mark.parametrize("alignment", [None, 16, 64, 256])
@pytest.mark.parametrize("dtype", DTYPES, ids=["u1", "u8", "record"])
def test_alignment_honoured(space, shape, alignment, dtype):
    k = _kernel(space, shape, dtype, alignment)
    out = np.zeros(1, np.uint64)
    k[1, 1](out)
    assert out[0] != 0
    if alignment is not None:
        assert int(out[0]) % alignment == 0
    # The GPU side: NVRTC's PTX declares the array's storage with that alignment.
    found = _ptx_alignments(k, space)
    assert found, f"no .{space} declaration in the PTX"
    if alignment is not None:
        assert alignment in found
    else:  # no alignment asked: the element type's own (a power of two)
        assert all(a & (a - 1) == 0 for a in found)


def test_alignment_positional_and_global_constant():
    align = 128

    @cuda.jit
    def k(out):
        loc = cuda.local.array(3, np.float32, align)
        sh = cuda.shared.array((2, 2), np.int8, 64)
        loc[0] = 1.5
        sh[0, 0] = 2
        out[0] = loc.ctypes.data  # the address escapes: the array stays in memory
        out[1] = sh.ctypes.data
        out[2] = loc[0] + sh[0, 0]

    out = np.full(3, 99, np.uint64)
    k[1, 1](out)
    np.testing.assert_array_equal(out % [align, 64, 2**64 - 1], [0, 0, 3])
    assert 128 in _ptx_alignments(k, "local") and 64 in _ptx_alignments(k, "shared")


@pytest.mark.parametrize("space", ["local", "shared"])
@pytest.mark.parametrize("bad,why", [(-1, "must be positive"), (0, "must be positive"),
                                     (3, "must be a power of 2"), (17, "must be a power of 2"),
                                     (33, "must be a power of 2"),
                                     (4, "must be a multiple of 8")])
def test_invalid_alignment_values_raise_valueerror(space, bad, why):
    k = _kernel(space, 1, np.uint8, bad)
    with pytest.raises(ValueError, match=f"Alignment {why}"):
        k[1, 1](np.zeros(1, np.uint64))
    with pytest.raises(CompileError, match=f"cuda.{space}.array\\(\\): Alignment {why} "
                                           f"\\(got {bad}\\)"):
        k[1, 1](np.zeros(1, np.uint64))


@pytest.mark.parametrize("space", ["local", "shared"])
@pytest.mark.parametrize("bad", ["1", "foo", 1.0, 1.5, True])
def test_invalid_alignment_types_require_a_constant_integer(space, bad):
    k = _kernel(space, 50, np.uint64, bad)
    with pytest.raises(CompileError, match=r"RequireLiteralValue: alignment must be a "
                                           r"constant integer"):
        k[1, 1](np.zeros(1, np.uint64))


def test_alignment_must_be_known_at_compile_time():
    @cuda.jit
    def k(out, n):
        loc = cuda.local.array(4, np.float64, alignment=n)
        out[0] = loc.ctypes.data

    with pytest.raises(CompileError, match=r"alignment must be a constant integer \(got a "
                                           r"run-time int64\)"):
        k[1, 1](np.zeros(1, np.uint64), 16)


def test_dynamic_shared_alignment():
    @cuda.jit
    def ok(out):
        dyn = cuda.shared.array(0, np.float32, alignment=16)
        dyn[cuda.threadIdx.x] = cuda.threadIdx.x
        cuda.syncthreads()
        out[cuda.threadIdx.x] = dyn[3 - cuda.threadIdx.x]

    out = np.zeros(4, np.float32)
    ok[1, 4, 0, 16](out)
    np.testing.assert_array_equal(out, [3, 2, 1, 0])

    @cuda.jit
    def too_much(out):
        dyn = cuda.shared.array(0, np.float32, alignment=64)
        out[0] = dyn[0]

    with pytest.raises(CompileError, match=r"dynamic shared memory \(shape 0\) is aligned to "
                                           r"16 bytes"):
        too_much[1, 1, 0, 16](out)
