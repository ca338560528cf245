"""The smoke set: one short check of each path a first GPU run must get right.

scripts/gpu_check.sh runs this file alone (stage ``smoke``) and under compute-sanitizer
(stage ``sanitizer``), so it stays small and touches every kind of device work once: a
round trip, a ufunc on host and device arrays, a gufunc, a CUB reduction, a ``@cuda.jit``
launch, pinned copies and CuPy interop. It runs on the host backend too (CI).
"""

import math

import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, guvectorize, reduce, vectorize


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def test_round_trip_every_layout(rng):
    host = rng.random((37, 53))
    for view in (host, host.T, host[::2, ::-3]):
        d = cuda.to_device(view)
        np.testing.assert_array_equal(d.copy_to_host(), view)


@vectorize([float32(float32, float32), float64(float64, float64)], target="cuda")
def _saxpy_like(a, b):
    return 2 * a + b if a > 0 else math.sqrt(b * b + 1)


def _saxpy_ref(a, b):
    return np.where(a > 0, 2 * a + b, np.sqrt(b * b + 1)).astype(a.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vectorize_host_and_device(rng, dtype):
    a = (rng.random(100_003) - 0.5).astype(dtype)
    b = rng.random(100_003).astype(dtype)
    want = _saxpy_ref(a, b)
    got_host = _saxpy_like(a, b)
    assert isinstance(got_host, np.ndarray)
    np.testing.assert_allclose(got_host, want, rtol=1e-6)
    d_out = _saxpy_like(cuda.to_device(a), cuda.to_device(b))
    assert isinstance(d_out, cuda.DeviceNDArray)
    np.testing.assert_allclose(d_out.copy_to_host(), want, rtol=1e-6)
    # broadcast, strided and an out= of another layout
    out = np.zeros((64, 3), dtype=dtype, order="F")
    _saxpy_like(a[:64, None], b[:3], out=out)
    np.testing.assert_allclose(out, _saxpy_ref(a[:64, None], b[:3]), rtol=1e-6)


@guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)",
             target="cuda")
def _matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0.0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc


def test_guvectorize_batched_matmul(rng):
    a = rng.random((500, 4, 5), dtype=np.float32)
    b = rng.random((500, 5, 3), dtype=np.float32)
    np.testing.assert_allclose(_matmul(a, b), a @ b, rtol=1e-5)
    d = _matmul(cuda.to_device(a), cuda.to_device(b))
    np.testing.assert_allclose(d.copy_to_host(), a @ b, rtol=1e-5)


@reduce
def _sum(a, b):
    return a + b


def test_reduce(rng):
    x = rng.integers(-1000, 1000, 1 << 20).astype(np.int64)
    assert _sum(x) == x.sum()
    assert _sum(cuda.to_device(x), init=5) == x.sum() + 5
    m = rng.random((300, 200))
    np.testing.assert_allclose(_sum(m, axis=0), m.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(_sum(m, axis=1), m.sum(axis=1), rtol=1e-12)


@cuda.jit
def _increment(a, n):
    i = cuda.grid(1)
    if i < n:
        a[i] += 1


def test_jit_kernel_launch(rng):
    host = rng.random(1000)
    d = cuda.to_device(host)
    _increment[(1000 + 127) // 128, 128](d, 1000)
    np.testing.assert_array_equal(d.copy_to_host(), host + 1)
    # a host array is copied in and back, as in Numba
    h = host.copy()
    _increment[8, 128](h, 1000)
    np.testing.assert_array_equal(h, host + 1)


def test_pinned_copies(rng):
    src = cuda.pinned_array(1 << 20, dtype=np.float32)
    src[:] = rng.random(1 << 20, dtype=np.float32)
    d = cuda.to_device(src)
    src[:] = -1  # after to_device on the default stream, the source may be reused
    back = cuda.pinned_array(1 << 20, dtype=np.float32)
    d.copy_to_host(back)
    assert (back >= 0).all() and (back < 1).all()
    s = cuda.stream()
    d2 = cuda.to_device(back, stream=s)
    back2 = cuda.pinned_array(1 << 20, dtype=np.float32)
    d2.copy_to_host(back2, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(back2, back)


@pytest.mark.gpu
def test_cupy_interop(rng):
    cp = pytest.importorskip("cupy")
    a = cp.asarray(rng.random(4099, dtype=np.float32) - 0.5)
    b = cp.asarray(rng.random(4099, dtype=np.float32))
    got = _saxpy_like(a, b)
    assert isinstance(got, cp.ndarray)
    np.testing.assert_allclose(cp.asnumpy(got), _saxpy_ref(cp.asnumpy(a), cp.asnumpy(b)),
                               rtol=1e-6)
    d = cuda.as_cuda_array(a)
    np.testing.assert_array_equal(d.copy_to_host(), cp.asnumpy(a))
