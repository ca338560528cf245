"""The CUDA backend's host code under the fake driver (tests/_fake_driver.py): driver
traffic per steady-state call, and smoke runs of the pool, staging, streams, events and
interop that no other CPU test reaches. Kernels do nothing under the fake, so these tests
check calls and data movement, never computed values (the host-backend suite does)."""

import os
import subprocess
import sys

import pytest

# One subprocess runs every scenario (each pays NVRTC once per kernel) and prints a JSON
# record; the tests below check its parts.
_SCENARIOS = r"""
import numpy as np
from numbacuda_ufunc import cuda, vectorize

drv = FakeDriver()
out = {}

@vectorize(["float32(float32, float32)"], target="cuda")
def add(a, b):
    return a + b

n = 1 << 12
x = cuda.to_device(np.arange(n, dtype=np.float32))
y = cuda.to_device(np.ones(n, dtype=np.float32))
z = cuda.device_array(n, np.float32)
add(x, y, out=z)  # compile, load, first-use set-up
out["ufunc_out"] = drv.traffic(lambda: add(x, y, out=z), repeat=5)
out["ufunc_out_grid"] = drv.last_launch()

print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def scenarios(fake_driver):
    return fake_driver.run_json(_SCENARIOS)


def test_fake_driver_ufunc_with_out_is_one_launch(scenarios):
    t = scenarios["ufunc_out"]
    assert t["launches"] == 1, t
    assert t["allocations"] == 0 and t["frees"] == 0, t
    assert t["syncs"] == 0 and t["copies"] == 0, t
    grid, block, _ = scenarios["ufunc_out_grid"]
    assert grid[0] >= 1 and block[0] >= 32


_SMOKE = r"""
import numpy as np
from numbacuda_ufunc import cuda

drv = FakeDriver()
out = {}
dev = cuda.get_current_device()
out["device"] = [dev.name.decode() if isinstance(dev.name, bytes) else dev.name,
                 list(dev.compute_capability)]
out["available"] = cuda.is_available()

# Staging: small copies go direct, large ones through the pinned pipeline in pieces.
rng = np.random.default_rng(20261128)
for n in (1000, 3 << 20, 5 << 20):
    a = rng.random(n)
    drv.reset()
    d = cuda.to_device(a)
    back = d.copy_to_host()
    out[f"roundtrip_{n}"] = [bool(np.array_equal(a, back)), drv.calls()]

# Pool: a freed block returns through cuMemFreeAsync; memory info answers.
del d, back
drv.reset()
d = cuda.device_array(1 << 20, np.float64)
del d
out["pool"] = drv.calls()
free, total = cuda.current_context().get_memory_info()
out["meminfo"] = [free, total]

# Streams and events.
s = cuda.stream()
e1, e2 = cuda.event(), cuda.event()
e1.record(s)
a = cuda.to_device(np.arange(10.0), stream=s)
e2.record(s)
e2.synchronize()
s.synchronize()
out["elapsed"] = e1.elapsed_time(e2) >= 0
out["stream_back"] = a.copy_to_host(stream=s).tolist()

# Pinned and mapped host memory.
p = cuda.pinned_array(16, np.float32)
p[:] = 2.5
dp = cuda.to_device(p)
out["pinned"] = dp.copy_to_host().tolist() == [2.5] * 16
m = cuda.mapped_array(8, np.int32)
m[:] = 4
out["mapped"] = np.asarray(m).tolist() == [4] * 8

# Interop: the CUDA array interface in and out.
d = cuda.to_device(np.arange(6, dtype=np.int64))
view = cuda.as_cuda_array(d)
out["cai"] = [view.__cuda_array_interface__["shape"] == (6,),
              view.copy_to_host().tolist() == list(range(6))]
cuda.synchronize()
print(json.dumps(out))
"""


def test_fake_driver_smoke_pool_staging_streams_interop(fake_driver):
    out = fake_driver.run_json(_SMOKE)
    assert out["available"] is True
    assert out["device"][1] == [9, 0] and "Fake" in out["device"][0]
    for n in (1000, 3 << 20, 5 << 20):
        same, calls = out[f"roundtrip_{n}"]
        assert same, n
        if n * 8 > (8 << 20):  # more than one staging piece in; out lands in a pinned result block
            assert calls.get("cuMemcpyHtoDAsync", 0) >= 2 and calls.get("cuMemcpyDtoHAsync", 0) >= 1, calls
    assert out["pool"].get("cuMemAllocAsync") == 1 and out["pool"].get("cuMemFreeAsync") == 1, out["pool"]
    free, total = out["meminfo"]
    assert 0 < free <= total
    assert out["elapsed"] and out["stream_back"] == [float(i) for i in range(10)]
    assert out["pinned"] and out["mapped"] and out["cai"] == [True, True]


def test_fake_driver_loader_variable_names_a_missing_library(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBACUDA_UFUNC_ENABLE_CUDASIM"}
    missing = tmp_path / "no_such_libcuda.so"
    env["NUMBACUDA_UFUNC_LIBCUDA"] = str(missing)
    code = ("from numbacuda_ufunc import _core; print(int(_core.is_available())); "
            "print(_core.unavailable_reason())")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    available, reason = done.stdout.splitlines()[:2]
    assert available == "0"
    assert "NUMBACUDA_UFUNC_LIBCUDA" in reason and str(missing) in reason


_SMOKE_KERNELS = r"""
import numpy as np
from numbacuda_ufunc import cuda, guvectorize

drv = FakeDriver()
out = {}

@cuda.jit
def scale(a, k):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= k

d = cuda.to_device(np.arange(1000, dtype=np.float32))
scale[8, 128](d, 2.0)
drv.reset()
scale[8, 128](d, 2.0)
out["jit"] = [drv.calls(), drv.last_launch()]

@guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda")
def total(x, res):
    s = 0.0
    for v in x:
        s += v
    res[0] = s

g = cuda.to_device(np.ones((64, 16)))
r = cuda.device_array(64)
total(g, r)
out["gufunc"] = drv.traffic(lambda: total(g, r))

@cuda.reduce
def add(a, b):
    return a + b

v = cuda.to_device(np.ones(1 << 12, dtype=np.float32))
add(v)
out["reduce_ran"] = isinstance(float(add(v)), float)

m = cuda.managed_array(16, np.float64)
m[:] = 1.5
out["managed"] = bool((np.asarray(m) == 1.5).all())

host = np.arange(64, dtype=np.int32)
with cuda.pinned(host):
    dh = cuda.to_device(host)
out["registered"] = dh.copy_to_host().tolist() == list(range(64))

import threading
s = cuda.stream()
seen, ran = [], threading.Event()
s.add_callback(lambda stream, status, arg: (seen.append(arg), ran.set()), 7)
ran.wait(120)  # the callback runs on the engine's worker thread
out["callback"] = seen

cuda.set_memory_manager(cuda.IpcCapableMemoryManager)
shared = cuda.to_device(np.arange(4.0))
handle = shared.get_ipc_handle()
out["ipc"] = handle is not None
cuda.set_memory_manager(None)

cuda.profile_start()
cuda.profile_stop()
out["memory_stats"] = bool(cuda.memory_stats())
print(json.dumps(out, default=str))
"""


def test_fake_driver_smoke_kernels_gufuncs_memory_kinds(fake_driver):
    out = fake_driver.run_json(_SMOKE_KERNELS)
    calls, (grid, block, _) = out["jit"]
    assert calls.get("cuLaunchKernel") == 1 and grid[0] == 8 and block[0] == 128, out["jit"]
    assert out["gufunc"]["launches"] >= 1 and out["gufunc"]["copies"] == 0, out["gufunc"]
    assert out["reduce_ran"] and out["managed"] and out["registered"]
    assert out["callback"] == [7] and out["ipc"] and out["memory_stats"]
