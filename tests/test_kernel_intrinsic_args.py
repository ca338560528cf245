"""Argument rules of the warp and selection intrinsics (issue 16), as Numba types them:
a warp mask must be an integer, a vote's predicate an integer or bool (taken by its
truth, also by eq_sync), cuda.grid/gridsize need a constant ndim, and cuda.selp
evaluates both values as a call does. Run on the host backend and compiled by NVRTC."""

import numpy as np
import pytest

from numbacuda_ufunc import boolean, cuda, float32, float64, int32, int64, uint32, uint64
from numbacuda_ufunc.errors import CompileError


def vote_all(mask, pred, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        out[i] = cuda.all_sync(mask[i], pred[i])


@pytest.mark.parametrize("mask_t", [float32, float64, boolean])
def test_vote_mask_must_be_an_integer(mask_t):
    with pytest.raises(CompileError, match=r"cuda.all_sync\(\): Mask type must be an integer "
                                           rf"\(got {mask_t.name}\)"):
        cuda.jit((mask_t[:], int32[:], int32[:]))(vote_all)


@pytest.mark.parametrize("pred_t", [float32, float64])
def test_vote_predicate_must_be_integer_or_bool(pred_t):
    with pytest.raises(CompileError, match=r"Predicate must be an integer or boolean "
                                           rf"\(got {pred_t.name}\)"):
        cuda.jit((int32[:], pred_t[:], int32[:]))(vote_all)


@pytest.mark.parametrize("key", ["shfl_sync", "ballot_sync", "any_sync", "eq_sync",
                                 "match_any_sync"])
def test_other_warp_masks_must_be_integers(key):
    fn = getattr(cuda, key)

    def k(out):
        i = cuda.threadIdx.x
        if key == "shfl_sync":
            out[i] = fn(1.5, i, 0)
        else:
            out[i] = fn(True, i)

    with pytest.raises(CompileError, match="Mask type must be an integer"):
        cuda.jit((int64[:],))(k)


@pytest.mark.parametrize("mask_t, pred_t", [(uint32, uint32), (int64, int64), (uint64, uint64),
                                            (int32, int32), (uint32, boolean)])
def test_vote_valid_types_run(mask_t, pred_t):
    k = cuda.jit((mask_t[:], pred_t[:], int32[:]))(vote_all)
    mask = np.full(32, ~np.array(0, mask_t.name), mask_t.name)
    pred = np.ones(32, pred_t.name)
    out = np.full(32, -1, np.int32)
    k[1, 32](mask, pred, out)
    np.testing.assert_array_equal(out, 1)
    pred[7] = 0
    k[1, 32](mask, pred, out)
    np.testing.assert_array_equal(out, 0)
    assert ".entry" in next(iter(k.inspect_ptx().values()))


@cuda.jit
def eq_votes(a, out):
    i = cuda.threadIdx.x
    out[i] = cuda.eq_sync(0xffffffff, a[i])


def test_eq_sync_compares_truth_not_values():
    # Numba's eq_sync is a vote (vote.sync.uni): 1 and 2 are both true.
    out = np.full(32, -1, np.int32)
    eq_votes[1, 32](np.arange(1, 33, dtype=np.int64), out)
    np.testing.assert_array_equal(out, 1)
    a = np.arange(1, 33, dtype=np.int64)
    a[5] = 0
    eq_votes[1, 32](a, out)
    np.testing.assert_array_equal(out, 0)
    eq_votes[1, 32](np.zeros(32, np.int64), out)
    np.testing.assert_array_equal(out, 1)


def test_grid_needs_a_constant_ndim():
    def g(x):
        cuda.grid(x)

    def gs(x):
        cuda.gridsize(x)

    for fn, api in ((g, "grid"), (gs, "gridsize")):
        with pytest.raises(CompileError, match=rf"cuda.{api}\(\): ndim must be the constant "
                                               r"1, 2 or 3 \(got a run-time value; Numba: "
                                               r"RequireLiteralValue\)"):
            cuda.jit((int32,))(fn)



@cuda.jit(device=True)
def bump(counter, v):
    cuda.atomic.add(counter, 0, 1)
    return v


def selects(a, b, c, counter):
    i = cuda.grid(1)
    if i < a.shape[0]:
        inner = cuda.selp(b % 2 == 0, c[i], 13)
        # Both values are arguments of a call: each bump() runs, whichever is chosen.
        a[i] = cuda.selp(a[i] > 4, inner, bump(counter, 3)) + cuda.selp(True, 0,
                                                                          bump(counter, 0))


def test_selp_selects_and_evaluates_both_values():
    k = cuda.jit((int64[:], int64, int64[:], int32[:]))(selects)
    for b in (6, 7):
        a = np.arange(32, dtype=np.int64)
        c = np.full(32, 17, np.int64)
        counter = np.zeros(1, np.int32)
        k[1, 32](a, b, c, counter)
        want = np.where(np.arange(32) > 4, 17 if b % 2 == 0 else 13, 3)
        np.testing.assert_array_equal(a, want)
        assert counter[0] == 64  # two bump() calls per thread
    ptx = next(iter(k.inspect_ptx().values()))
    assert "selp" in ptx
