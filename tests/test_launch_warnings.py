"""Numba's warnings (numbacuda_ufunc.errors, numbacuda_ufunc.cuda.config): low-occupancy
grids, host arrays copied by a launch, debug=True with opt=True; their settings, read
from the environment and assignable at run time."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import (
    NumbaInvalidConfigWarning,
    NumbaPerformanceWarning,
    NumbaWarning,
)

_OCCUPANCY = "Grid size .+ will likely result in GPU under-utilization due to low occupancy"
_COPY = "Host array used in CUDA kernel will incur copy overhead to/from device"


@cuda.jit
def _touch(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = x + 1


@cuda.jit
def _set_0d(r):
    r[()] = 7


@pytest.fixture
def warnings_on(monkeypatch):
    monkeypatch.setattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    monkeypatch.setattr(cuda.config, "CUDA_WARN_ON_IMPLICIT_COPY", 1)


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [(x.category, str(x.message), x.filename) for x in w]


def test_warning_classes():
    assert issubclass(NumbaPerformanceWarning, NumbaWarning)
    assert issubclass(NumbaInvalidConfigWarning, NumbaWarning)
    assert issubclass(NumbaWarning, Warning)


def test_low_occupancy_threshold_is_128_blocks(warnings_on):
    # Numba's fixed number, whatever the device's multiprocessor count (the H100 has 132,
    # so a threshold of two blocks per multiprocessor would warn at 256)
    dev = cuda.device_array(4)
    for grid in [1, (1, 1), 127, (1, 127, 1), (3, 6, 7)]:
        with pytest.warns(NumbaPerformanceWarning, match=_OCCUPANCY) as rec:
            launch = _touch[grid, 32]
        assert rec[0].filename == __file__  # points at the line that configured it
        launch(dev, 1)
    for grid in [128, (2, 64), (4, 4, 8), 256, 1024]:
        assert _caught(lambda grid=grid: _touch[grid, 32](dev, 1)) == []


def test_implicit_copy_warnings(warnings_on):
    grid = 128
    host = np.zeros(8, np.float32)
    for arg in [host, cuda.pinned_array(8, np.float32), cuda.In(host), cuda.InOut(host)]:
        got = _caught(lambda arg=arg: _touch[grid, 32](arg, 1))
        assert [(c, m) for c, m, _ in got] == [(NumbaPerformanceWarning, _COPY + ".")]
        assert got[0][2] == __file__
    quiet = [cuda.device_array(8, np.float32), cuda.mapped_array(8, np.float32),
             cuda.managed_array(8, np.float32), cuda.In(cuda.device_array(8, np.float32))]
    for arg in quiet:
        assert _caught(lambda arg=arg: _touch[grid, 32](arg, 1)) == []
    assert _caught(lambda: _touch[grid, 32](cuda.device_array(1), np.float64(2.5))) == []
    zero_d = np.zeros((), np.float32)
    got = _caught(lambda: _set_0d[grid, 1](zero_d))
    assert [(c, m) for c, m, _ in got] == [(NumbaPerformanceWarning, _COPY + ".")]
    assert zero_d == 7
    r = np.zeros(3)
    with pytest.warns(NumbaPerformanceWarning, match=_COPY):
        _touch[grid, 32](r, 1)
    np.testing.assert_array_equal(r, [2, 2, 2])  # the launch itself is unchanged


def test_settings_turn_warnings_off(monkeypatch):
    monkeypatch.setattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS", 0)
    monkeypatch.setattr(cuda.config, "CUDA_WARN_ON_IMPLICIT_COPY", 0)
    assert _caught(lambda: _touch[1, 1](np.zeros(2), 1)) == []
    monkeypatch.setattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS", 1)
    got = _caught(lambda: _touch[1, 1](np.zeros(2), 1))
    assert [c for c, _, _ in got] == [NumbaPerformanceWarning]
    monkeypatch.delattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS")  # read as off
    assert _caught(lambda: _touch[1, 1](cuda.device_array(2), 1)) == []


def test_warnings_as_errors_stop_the_launch(warnings_on):
    r = np.zeros(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPerformanceWarning)
        with pytest.raises(NumbaPerformanceWarning, match=_COPY):
            _touch[256, 32](r, 5)
    assert not r.any()


def test_environment_settings():
    code = ("from numbacuda_ufunc import cuda; c = cuda.config; "
            "print(c.CUDA_LOW_OCCUPANCY_WARNINGS, c.CUDA_WARN_ON_IMPLICIT_COPY, "
            "c.CUDA_ARRAY_INTERFACE_SYNC, c.OPT)")
    env = {k: v for k, v in os.environ.items()
           if "OCCUPANCY" not in k and "IMPLICIT_COPY" not in k}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["1", "1", "1", "3"], out.stderr
    env.update(NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS="0",
               NUMBACUDA_UFUNC_CUDA_WARN_ON_IMPLICIT_COPY="false", NUMBA_OPT="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["0", "0", "1", "0"], out.stderr
    env.update(NUMBACUDA_UFUNC_CUDA_WARN_ON_IMPLICIT_COPY="sometimes")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode != 0
    assert "NUMBACUDA_UFUNC_CUDA_WARN_ON_IMPLICIT_COPY must be an integer" in out.stderr


def _axpy(r, a, x):
    r[0] = a * x[0]


def test_debug_with_opt_warns(monkeypatch):
    with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(debug=True)(_axpy)
    with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(debug=True, opt=True)
    with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(device=True, debug=True)(_axpy)
    for quiet in (dict(debug=True, opt=False), dict(), dict(debug=False), dict(opt=True)):
        assert _caught(lambda quiet=quiet: cuda.jit(**quiet)(_axpy)) == []
    monkeypatch.setattr(cuda.config, "CUDA_DEBUGINFO_DEFAULT", 1)
    with pytest.warns(NumbaInvalidConfigWarning, match="not supported by CUDA"):
        cuda.jit(_axpy)
    assert _caught(lambda: cuda.jit(opt=False)(_axpy)) == []
    monkeypatch.setattr(cuda.config, "OPT", 0)
    assert _caught(lambda: cuda.jit(_axpy)) == []
    k = cuda.jit(debug=True, opt=False)(_axpy)
    assert k.debug is True


def test_gufunc_calls_warn_of_low_occupancy(warnings_on, monkeypatch):
    # Numba's gufuncs are kernel launches and warn the same way: one block per 128 loop
    # iterations here, so fewer than 128 * 128 iterations is a grid under 128 blocks.
    from numbacuda_ufunc import guvectorize

    def body(a, b, out):
        for i in range(a.shape[0]):
            out[i] = a[i] * b[i]

    sig = ["void(float32[:], float32[:], float32[:])"]
    dist = guvectorize(sig, "(n),(n)->(n)", target="cuda")(body)
    rng = np.random.default_rng(3)
    a, b = rng.random(4096, np.float32), rng.random(4096, np.float32)
    with pytest.warns(NumbaPerformanceWarning, match=_OCCUPANCY):
        got = dist(a, b)  # one loop iteration: a grid of one block
    np.testing.assert_array_equal(got, a * b)
    many_a, many_b = rng.random((128 * 128, 2), np.float32), rng.random((128 * 128, 2), np.float32)
    quiet = []
    quiet += _caught(lambda: np.testing.assert_array_equal(dist(many_a, many_b), many_a * many_b))
    quiet += _caught(lambda: dist(a[:0].reshape(0, 0), b[:0].reshape(0, 0)))  # nothing launched
    host_side = guvectorize(sig, "(n),(n)->(n)", target="cpu")(body)
    quiet += _caught(lambda: host_side(a, b))
    assert quiet == []
    with pytest.warns(NumbaPerformanceWarning, match="Grid size 127 "):
        dist(many_a[:127 * 128], many_b[:127 * 128])
    monkeypatch.setattr(cuda.config, "CUDA_LOW_OCCUPANCY_WARNINGS", 0)
    assert _caught(lambda: dist(a, b)) == []
