"""Dask arrays: f(x) -> lazy Dask array (blockwise, broadcasting across chunks), gufuncs
through dask.array.apply_gufunc, reductions through dask.array.reduction; the threaded
scheduler and a distributed.LocalCluster of worker processes, on the host backend.

The oracle is the same call on the NumPy arrays the Dask arrays hold.
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda, guvectorize, vectorize

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

rng = np.random.default_rng(2024)


@vectorize(["float64(float64, float64)", "float32(float32, float32)", "int64(int64, int64)"],
           identity=0)
def add_sq(a, b):
    return a + b * b


@vectorize
def hyp(a, b):
    return math.hypot(a, b)


@vectorize(["float64(float64, float64)"])
def fmax2(a, b):
    return a if a > b else b


@guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def dot(a, b, out):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    out[0] = acc


@guvectorize(["void(float64[:], float64[:], float64[:])"], "(n)->(),()")
def min_max(a, lo, hi):
    lo[0] = a[0]
    hi[0] = a[0]
    for i in range(a.shape[0]):
        lo[0] = min(lo[0], a[i])
        hi[0] = max(hi[0], a[i])


@nu.reduce
def sum_reduce(a, b):
    return a + b


def test_import_does_not_import_dask_and_works_without_it():
    code = ("import sys\n"
            "import numpy as np\n"
            "import numbacuda_ufunc\n"
            "assert 'dask' not in sys.modules, 'dask imported'\n"
            "sys.modules['dask'] = None; sys.modules['dask.array'] = None\n"
            "from numbacuda_ufunc import cuda\n"
            "r = cuda.reduce(lambda a, b: a + b) if False else None\n"
            "print('OK')\n")
    env = dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.stdout.strip() == "OK", out.stderr


def test_ufunc_on_dask_arrays_is_lazy_and_broadcasts_across_chunks():
    x = rng.standard_normal((40, 6))
    y = rng.standard_normal(6)
    dx = da.from_array(x, chunks=(10, 4))
    dy = da.from_array(y, chunks=3)            # chunks that do not line up with x's
    r = add_sq(dx, dy)
    assert isinstance(r, da.Array) and r.shape == (40, 6) and r.dtype == np.float64
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(r.compute(), add_sq(x, y))
        # a NumPy array and a weak Python scalar beside a Dask array
        np.testing.assert_array_equal(add_sq(dx, 2.5).compute(), add_sq(x, 2.5))
        np.testing.assert_array_equal(add_sq(y, dx).compute(), add_sq(y, x))
        f32 = dx.astype(np.float32)
        got = add_sq(f32, 2.5)
        assert got.dtype == np.float32               # the loop the whole array would pick
        np.testing.assert_array_equal(got.compute(), add_sq(x.astype(np.float32), 2.5))
        # lazy ufuncs, and a (40, 1) x (1, 6) outer broadcast
        col = da.from_array(x[:, :1], chunks=(7, 1))
        np.testing.assert_allclose(hyp(col, dy[None, :]).compute(), np.hypot(x[:, :1], y))
        # ints
        i = da.arange(10, chunks=4)
        np.testing.assert_array_equal(add_sq(i, i).compute(), np.arange(10) + np.arange(10) ** 2)


def test_gufunc_on_dask_arrays_goes_through_apply_gufunc():
    a = rng.standard_normal((30, 8))
    b = rng.standard_normal((30, 8))
    da_ = da.from_array(a, chunks=(7, 8))
    db = da.from_array(b, chunks=(5, 8))
    r = dot(da_, db)
    assert isinstance(r, da.Array) and r.shape == (30,)
    lo, hi = min_max(da_)
    with dask.config.set(scheduler="threads"):
        np.testing.assert_allclose(r.compute(), dot(a, b))
        np.testing.assert_array_equal(lo.compute(), a.min(axis=1))
        np.testing.assert_array_equal(hi.compute(), a.max(axis=1))
        # loop dimensions broadcast: one row against every row
        np.testing.assert_allclose(dot(da_, b[0]).compute(), a @ b[0])
    with pytest.raises(ValueError, match="Core dimension .* multiple chunks"):
        dot(da.from_array(a, chunks=(30, 4)), b)   # a core dimension split over chunks


def test_gufunc_type_keywords_reach_every_chunk():
    # dtype=/signature= choose the loop of each block's call (Dask's apply_gufunc takes
    # dtype= itself and used to drop it: float32 declared, float64 blocks)
    dot2 = guvectorize(["void(float64[:], float64[:], float64[:])",
                        "void(float32[:], float32[:], float32[:])"], "(n),(n)->()")(dot.py_func)
    a = rng.standard_normal((12, 5))
    da_ = da.from_array(a, chunks=(5, 5))
    for kw in ({"dtype": np.float32}, {"signature": "ff->f"}):
        r = dot2(da_, da_, **kw)
        assert r.dtype == np.float32
        with dask.config.set(scheduler="threads"):
            got = r.compute()
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, dot2(a, a, **kw))


@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_ufunc_reduce_of_dask_arrays(axis, keepdims):
    x = rng.integers(-50, 50, (23, 9)).astype(np.float64)   # exact in any order
    dx = da.from_array(x, chunks=(4, 5))
    r = fmax2.reduce(dx, axis=axis, keepdims=keepdims)
    assert isinstance(r, da.Array)
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(r.compute(), np.maximum.reduce(x, axis=axis, keepdims=keepdims))
    add = vectorize(["float64(float64, float64)"], identity=0)(lambda a, b: a + b)
    with dask.config.set(scheduler="threads"):
        got = add.reduce(dx, axis=axis, keepdims=keepdims, initial=5.0).compute()
        np.testing.assert_array_equal(got, np.add.reduce(x, axis=axis, keepdims=keepdims, initial=5.0))
        # initial is folded once however many chunks there are
        ones = da.ones((12,), chunks=2)
        assert add.reduce(ones, axis=0, initial=100.0).compute() == 112.0
    assert got.shape == np.add.reduce(x, axis=axis, keepdims=keepdims).shape


def test_cuda_reduce_of_dask_arrays_folds_init_once():
    x = np.arange(1, 1235, dtype=np.float64).reshape(2, 617)
    dx = da.from_array(x, chunks=(1, 100))
    with dask.config.set(scheduler="threads"):
        total = sum_reduce(dx)
        assert isinstance(total, da.Array) and total.ndim == 0
        assert total.compute() == x.sum()
        assert sum_reduce(dx, init=10).compute() == x.sum() + 10
        np.testing.assert_array_equal(sum_reduce(dx, axis=1).compute(), x.sum(axis=1))
        np.testing.assert_array_equal(sum_reduce(dx, axis=0, init=1).compute(), x.sum(axis=0) + 1)


def test_dask_call_errors():
    dx = da.ones((4,), chunks=2)
    with pytest.raises(TypeError, match="out= is not supported with Dask arrays"):
        add_sq(dx, dx, out=np.empty(4))
    with pytest.raises(TypeError, match="out= is not supported"):
        fmax2.reduce(dx, out=np.empty(()))
    with pytest.raises(TypeError, match="res= is not supported"):
        sum_reduce(dx, res=cuda.device_array(1))
    with pytest.raises(TypeError, match="takes 2 input arguments"):
        add_sq(dx)
    with pytest.raises(np.exceptions.AxisError):
        fmax2.reduce(dx, axis=3)
    with pytest.raises(TypeError, match="where= is not supported with Dask"):
        add_sq(dx, dx, where=True)
    with pytest.raises(TypeError, match="axes=, axis= and keepdims= are not supported"):
        dot(da.ones((3, 4), chunks=(1, 4)), da.ones((3, 4), chunks=(1, 4)), axis=-1)


def test_elementwise_keywords_apply_to_every_chunk():
    x = rng.standard_normal(10)
    dx = da.from_array(x, chunks=3)
    r = add_sq(dx, dx, dtype=np.float32)           # NumPy: the float32 loop
    assert r.dtype == np.float32
    with dask.config.set(scheduler="threads"):
        np.testing.assert_array_equal(r.compute(), add_sq(x, x, dtype=np.float32))
        got = add_sq(dx.astype(np.int64), 2, casting="same_kind").compute()
        np.testing.assert_array_equal(got, add_sq(x.astype(np.int64), 2))


def test_ufuncs_pickle_for_distributed_workers():
    import pickle

    for obj in (add_sq, hyp, dot, sum_reduce):
        clone = pickle.loads(pickle.dumps(obj))
        assert type(clone) is type(obj) and clone.__name__ == obj.__name__
    x = rng.standard_normal(5)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(add_sq))(x, x), add_sq(x, x))
    assert pickle.loads(pickle.dumps(sum_reduce))(x) == sum_reduce(x)


def test_cupy_chunks_stay_on_the_device():
    cp = pytest.importorskip("cupy")
    x = cp.arange(24, dtype=cp.float64).reshape(4, 6)
    dx = da.from_array(x, chunks=(2, 3), asarray=False)
    with dask.config.set(scheduler="threads"):
        got = add_sq(dx, dx).compute()
        assert isinstance(got, cp.ndarray)
        cp.testing.assert_array_equal(got, x + x * x)
        assert isinstance(sum_reduce(dx, axis=1).compute(), cp.ndarray)


def test_distributed_local_cluster_with_processes():
    distributed = pytest.importorskip("distributed")
    x = rng.standard_normal((24, 8))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        dx = da.from_array(x, chunks=(6, 8))
        elementwise, reduced, rows = client.compute(
            [add_sq(dx, 1.5), sum_reduce(dx), dot(dx, dx)], sync=True)
        pids = client.run(os.getpid)
    assert len(set(pids.values()) - {os.getpid()}) == 2   # two worker processes, not this one
    np.testing.assert_array_equal(elementwise, add_sq(x, 1.5))
    np.testing.assert_allclose(reduced, x.sum())
    np.testing.assert_allclose(rows, dot(x, x))
