"""cuda.activemask() in divergent code: the lanes executing the same activemask() call
together, as on the GPU (the host emulation groups the lanes of a warp per call site and
round), next to the other warp intrinsics; NVRTC compiles of the kernels (sm_90 PTX)."""

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda


def _mask(lanes):
    return sum(1 << k for k in lanes)


@cuda.jit
def branches(out):
    i = cuda.threadIdx.x
    out[i, 0] = cuda.activemask()  # converged: the whole (live part of the) warp
    if i % 3 == 0:
        out[i, 1] = cuda.activemask()
    elif i % 3 == 1:
        out[i, 1] = cuda.activemask()
    else:
        out[i, 1] = 0
    out[i, 2] = cuda.activemask()  # reconverged after the if


@pytest.mark.parametrize("nthreads", [32, 64, 40])
def test_activemask_in_if_branches_is_the_lanes_of_that_branch(nthreads):
    out = np.full((nthreads, 3), 123, np.uint32)
    branches[1, nthreads](out)
    for i in range(nthreads):
        w = i // 32
        warp = [k for k in range(32) if w * 32 + k < nthreads]
        assert out[i, 0] == _mask(warp)
        if i % 3 == 2:
            assert out[i, 1] == 0
        else:
            same = [k for k in warp if (w * 32 + k) % 3 == i % 3]
            assert out[i, 1] == _mask(same), (i, hex(out[i, 1]))
        assert out[i, 2] == _mask(warp)


@cuda.jit
def loop_rounds(counts, out):
    # lane i runs counts[i] rounds; round r is executed by the lanes with counts > r
    i = cuda.threadIdx.x
    for r in range(counts[i]):
        out[i, r] = cuda.activemask()


def test_activemask_in_a_loop_some_lanes_leave():
    counts = np.array([(k * 7) % 5 for k in range(32)], np.int64)
    out = np.zeros((32, 5), np.uint32)
    loop_rounds[1, 32](counts, out)
    # The emulation runs a round's lanes together. A GPU (independent thread scheduling,
    # sm_70+) may split them: there the mask holds the lane itself and only lanes still in
    # the loop (an H100 gave 0xb5ad6b5a for round 0, against 0xbdef7bde of such lanes).
    exact = _core.emulation_enabled()
    for i in range(32):
        for r in range(5):
            want = _mask([k for k in range(32) if counts[k] > r]) if r < counts[i] else 0
            got = int(out[i, r])
            if exact or want == 0:
                assert got == want, (i, r, hex(got), hex(want))
            else:
                assert got >> i & 1 and got & ~want == 0, (i, r, hex(got), hex(want))


@cuda.jit
def early_return(out):
    i = cuda.threadIdx.x
    if i >= 20:
        return
    out[i] = cuda.activemask()


def test_activemask_after_lanes_returned():
    out = np.zeros(32, np.uint32)
    early_return[1, 32](out)
    np.testing.assert_array_equal(out[:20], _mask(range(20)))
    np.testing.assert_array_equal(out[20:], 0)


@cuda.jit
def with_other_intrinsics(a, out):
    i = cuda.threadIdx.x
    if a[i] > 0:
        m = cuda.activemask()
        out[i, 0] = m
        out[i, 1] = cuda.ballot_sync(m, a[i] > 10)  # the branch's lanes vote together
        out[i, 2] = cuda.shfl_sync(m, a[i], 31)  # lane 31 takes this branch
    else:
        out[i, 0] = cuda.activemask()
        out[i, 1] = 0
        out[i, 2] = 0
    cuda.syncwarp()
    out[i, 3] = cuda.ballot_sync(0xFFFFFFFF, a[i] > 0)
    cuda.syncthreads()
    out[i, 4] = cuda.activemask()


def test_activemask_mask_drives_votes_and_shuffles_in_a_branch():
    a = np.array([(-1) ** k * (k + 1) * 3 for k in range(64)], np.int64)
    a[31] = a[63] = 50
    out = np.zeros((64, 5), np.uint32)
    with_other_intrinsics[1, 64](a, out)
    for w in range(2):
        lanes = range(w * 32, w * 32 + 32)
        pos = _mask([k - w * 32 for k in lanes if a[k] > 0])
        neg = _mask([k - w * 32 for k in lanes if a[k] <= 0])
        big = _mask([k - w * 32 for k in lanes if a[k] > 10])
        for i in lanes:
            if a[i] > 0:
                assert out[i, 0] == pos and out[i, 1] == big and out[i, 2] == 50
            else:
                assert out[i, 0] == neg
            assert out[i, 3] == pos
            assert out[i, 4] == 0xFFFFFFFF


def test_activemask_kernels_compile_with_nvrtc():
    for kernel, sig in [(branches, "void(uint32[:, :])"),
                        (loop_rounds, "void(int64[:], uint32[:, :])"),
                        (with_other_intrinsics, "void(int64[:], uint32[:, :])")]:
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
        assert "activemask" in ptx and ".target sm_90" in ptx
