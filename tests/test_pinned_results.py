"""Large NumPy results of GPU calls live in page-locked blocks from a cache
(src/runtime/pinned_results.h): the device copies into them directly, and a freed block
serves the next result of a similar size without new page faults. The host backend, small
results and NUMBACUDA_UFUNC_PINNED_RESULTS=0 give ordinary NumPy arrays."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from conftest import HAVE_GPU

from numbacuda_ufunc import _core, cuda, guvectorize, vectorize

BIG = 1 << 21  # float32 elements: 8 MiB, above the 4 MiB threshold


@vectorize(["float32(float32, float32)"], target="cuda")
def add(a, b):
    return a + b


@guvectorize(["void(float32[:], float32[:])"], "(n)->(n)", target="cuda")
def doubled(x, out):
    for i in range(x.shape[0]):
        out[i] = 2 * x[i]


def _pinned(a):
    return not a.flags.owndata and type(a.base).__name__ == "PyCapsule"


def _inputs(n):
    rng = np.random.default_rng(n)
    return rng.random(n, np.float32), rng.random(n, np.float32)


@pytest.mark.gpu
def test_large_results_are_page_locked_and_reused():
    cuda.close()  # no idle blocks from earlier tests
    a, b = _inputs(BIG)
    r = add(a, b)
    np.testing.assert_array_equal(r, a + b)
    assert _pinned(r)
    address = r.ctypes.data
    idle_before = _core.pinned_results()[0]
    del r
    assert _core.pinned_results()[0] >= idle_before + BIG * 4
    r2 = add(b, a)
    assert r2.ctypes.data == address  # the freed block served it
    np.testing.assert_array_equal(r2, a + b)


@pytest.mark.gpu
def test_copy_to_host_and_gufunc_results():
    a, _ = _inputs(BIG)
    d = cuda.to_device(a)
    h = d.copy_to_host()
    assert _pinned(h)
    np.testing.assert_array_equal(h, a)
    rows = a.reshape(1024, -1)
    g = doubled(rows)
    assert _pinned(g)
    np.testing.assert_array_equal(g, rows * 2)


@pytest.mark.gpu
def test_small_results_and_views_are_ordinary():
    a, b = _inputs(1000)
    r = add(a, b)
    assert r.flags.owndata
    np.testing.assert_array_equal(r, a + b)


@pytest.mark.gpu
def test_pinned_results_behave_as_numpy_arrays():
    a, b = _inputs(BIG)
    r = add(a, b)
    back = pickle.loads(pickle.dumps(r))
    np.testing.assert_array_equal(back, r)
    view = r[::3]
    del r
    np.testing.assert_array_equal(view, (a + b)[::3])  # the view keeps the block alive


@pytest.mark.gpu
def test_close_frees_idle_blocks():
    a, b = _inputs(BIG)
    r = add(a, b)
    del r
    assert _core.pinned_results()[0] > 0
    cuda.close()
    assert _core.pinned_results()[0] == 0


@pytest.mark.gpu
def test_environment_turns_it_off():
    code = ("import numpy as np; from numbacuda_ufunc import vectorize; "
            "f = vectorize(['float32(float32, float32)'], target='cuda')(lambda a, b: a + b); "
            "a = np.ones(1 << 21, np.float32); r = f(a, a); "
            "print(r.flags.owndata, float(r[5]))")
    env = dict(os.environ, NUMBACUDA_UFUNC_PINNED_RESULTS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.split() == ["True", "2.0"], out.stderr


@pytest.mark.skipif(HAVE_GPU, reason="checks the host backend")
def test_host_backend_results_own_their_memory():
    a, b = _inputs(BIG)
    r = add(a, b)
    assert r.flags.owndata
    assert cuda.to_device(a).copy_to_host().flags.owndata
    assert _core.pinned_results() == (0, 0)
