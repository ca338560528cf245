"""Reductions on the CUDA backend under the fake driver (tests/_fake_driver.py): driver
traffic per steady-state call and which kernels get built. Kernels do nothing under the
fake, so only calls are checked; tests/test_reduce_order.py covers the results."""

import pytest

# One subprocess for every scenario (NVRTC runs once per kernel built).
_SCENARIOS = r"""
import numpy as np
from numbacuda_ufunc import cuda, reduce

drv = FakeDriver()
out = {}

@reduce
def total(a, b):
    return a + b

dt = np.dtype(np.float32)
engine = total._engine
arrays = {}
for n in (1 << 22, 1000):  # many units (one pass, partials) and one unit
    d = arrays[n] = cuda.to_device(np.ones(n, dtype=np.float32))
    total(d)  # compile, load, the stream's scratch
    out[f"host_scalar_{n}"] = drv.traffic(lambda: total(d), repeat=5)
out["built_after_full"] = engine._built_kernels(engine._find_loop(dt), dt, dt)

# Several long rows: the units kernel and the final kernel, partials from the scratch.
m = cuda.to_device(np.ones((4, 1 << 20), dtype=np.float32))
res = cuda.device_array(4, np.float32)
total(m, axis=1, res=res)
out["rows_to_device"] = drv.traffic(lambda: total(m, axis=1, res=res), repeat=5)
out["built_after_rows"] = engine._built_kernels(engine._find_loop(dt), dt, dt)

# A stream's scratch is freed with the stream.
s = cuda.stream()
total(arrays[1 << 22], stream=s)
drv.reset()
del s
import gc; gc.collect()
out["stream_destroyed"] = drv.calls()
print(json.dumps(out))
"""

UNITS_CONTIG, FINAL, FULL_CONTIG = 1 << 0, 1 << 2, 1 << 6


@pytest.fixture(scope="module")
def scenarios(fake_driver):
    return fake_driver.run_json(_SCENARIOS)


@pytest.mark.parametrize("n", [1 << 22, 1000])
def test_fake_driver_reduce_to_host_scalar_is_one_launch_one_sync(scenarios, n):
    t = scenarios[f"host_scalar_{n}"]
    assert t["launches"] == 1, t
    assert t["allocations"] == 0 and t["frees"] == 0, t
    assert t["syncs"] == 1, t
    assert t["copies"] == 0, t  # the result comes through mapped page-locked memory


def test_fake_driver_full_reduction_builds_only_its_kernel(scenarios):
    assert scenarios["built_after_full"] == FULL_CONTIG


def test_fake_driver_row_reduction_is_two_launches_without_allocation(scenarios):
    t = scenarios["rows_to_device"]
    assert t["launches"] == 2, t
    assert t["allocations"] == 0 and t["frees"] == 0, t
    assert t["syncs"] == 0 and t["copies"] == 0, t
    assert scenarios["built_after_rows"] == FULL_CONTIG | UNITS_CONTIG | FINAL  # the full one before


def test_fake_driver_stream_scratch_is_freed_with_the_stream(scenarios):
    calls = scenarios["stream_destroyed"]
    assert calls.get("cuStreamDestroy_v2", calls.get("cuStreamDestroy", 0)) == 1, calls
    assert calls.get("cuMemFreeAsync", 0) + calls.get("cuMemFree", 0) >= 2, calls  # partials, counter
    assert calls.get("cuMemFreeHost", 0) == 1, calls  # the mapped result slot
