"""The host copies under the CUDA backend's staging (src/runtime/host_copy.cpp): the
streaming-store copy that fills the pinned staging rings and empties them into NumPy
arrays, its parallel split over the thread pool, and the plain pool copy, byte for byte
against NumPy, at every alignment of head and tail, sizes 0, 1 and odd, and across the
boundaries of the pieces the pool's threads take.
"""

import numpy as np
import pytest

from numbacuda_ufunc import _core

HOWS = ["memcpy", "pool", "streaming", "streaming_single"]
KIB = 1 << 10
MIB = 1 << 20


def _copy_and_check(how, size, dst_offset, src_offset, seed=0):
    rng = np.random.default_rng(seed)
    # Guard bytes on both sides of the destination show any write outside it.
    guard = 64
    src_block = rng.integers(0, 256, size + src_offset + guard, dtype=np.uint8)
    dst_block = np.full(size + dst_offset + 2 * guard, 0xA5, np.uint8)
    src = src_block[src_offset:src_offset + size]
    dst = dst_block[guard + dst_offset:guard + dst_offset + size]
    _core._host_copy(dst, src, how)
    np.testing.assert_array_equal(dst, src)
    assert (dst_block[:guard + dst_offset] == 0xA5).all()
    assert (dst_block[guard + dst_offset + size:] == 0xA5).all()


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("size", [0, 1, 2, 15, 16, 17, 31, 63, 64, 65, 127, 128, 129, 1000, 4095, 4097])
def test_host_copy_small_sizes(how, size):
    _copy_and_check(how, size, 0, 0)


@pytest.mark.parametrize("how", ["streaming", "streaming_single"])
@pytest.mark.parametrize("dst_offset", range(16))
def test_host_copy_streaming_misaligned_heads_and_tails(how, dst_offset):
    # The streaming path copies the head up to the first 16-byte-aligned destination
    # address and the tail past the last 64-byte step with memcpy: every split of the two.
    for src_offset in (0, 1, 7, 8, 15):
        for size in (1, 17, 79, 80, 81, 200, 4099):
            _copy_and_check(how, size, dst_offset, src_offset, seed=dst_offset * 16 + src_offset)


def test_host_copy_piece_rule():
    pieces = [_core._host_copy_piece(n) for n in (0, 2 * MIB, 64 * MIB, 1 << 34)]
    for piece in pieces:
        assert 64 * KIB <= piece <= 512 * KIB and piece % 4096 == 0
    assert _core._host_copy_piece(0) == 64 * KIB
    assert _core._host_copy_piece(1 << 34) == 512 * KIB


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("delta", [-1, 0, 1, 4099])
@pytest.mark.parametrize("base", ["parallel_min", "piece_multiple", "staging_piece"])
def test_host_copy_piece_boundaries(how, delta, base):
    # From 2 MiB on the copy is split over the pool's threads in pieces of
    # _host_copy_piece(size) bytes; sizes just below, at and past a multiple of the piece
    # (and of the 4 MiB staging piece) leave a last piece of 1 byte, none, or a piece - 1.
    size = {"parallel_min": 2 * MIB, "staging_piece": 4 * MIB}.get(base, 0)
    if base == "piece_multiple":
        size = 2 * MIB + 3 * _core._host_copy_piece(3 * MIB)
    size += delta
    for dst_offset, src_offset in [(0, 0), (3, 0), (0, 5), (9, 13)]:
        _copy_and_check(how, size, dst_offset, src_offset, seed=size + dst_offset)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int8, np.bool_])
def test_host_copy_streaming_typed_arrays(dtype):
    rng = np.random.default_rng(1)
    n = (3 * MIB) // np.dtype(dtype).itemsize + 3
    src = rng.random(n).astype(dtype) if dtype is not np.bool_ else rng.random(n) < 0.5
    dst = np.zeros_like(src)
    _core._host_copy(dst, src, "streaming")
    np.testing.assert_array_equal(dst, src)


def test_host_copy_refuses_bad_arguments():
    a = np.zeros(16, np.uint8)
    with pytest.raises(ValueError, match="differ in size"):
        _core._host_copy(a, np.zeros(15, np.uint8), "streaming")
    with pytest.raises(ValueError, match="how must be"):
        _core._host_copy(a, np.zeros(16, np.uint8), "fast")
    with pytest.raises(ValueError, match="C-contiguous"):
        _core._host_copy(np.zeros(32, np.uint8)[::2], np.zeros(16, np.uint8), "streaming")
    with pytest.raises(ValueError, match="overlap"):
        _core._host_copy(a[:8], a[4:12], "streaming")
    with pytest.raises((ValueError, BufferError, TypeError)):
        ro = np.zeros(16, np.uint8)
        ro.flags.writeable = False
        _core._host_copy(ro, a, "streaming")
