"""The CUDA backend's host staging (src/runtime/cuda_staging.cpp) under the fake driver
(tests/_fake_driver.py): copies between pageable NumPy arrays and the device go through
rings of pinned buffers, one per stream and direction, in pieces. Device memory is host
memory under the fake, so the values of a round trip are real: every dtype, size (one
byte past the direct-copy limit, piece boundaries, more pieces than a ring has buffers)
and layout the copies take comes back unchanged. Driver traffic shows the pieces, and that
a steady-state copy allocates nothing (no cuMemHostAlloc, no device allocation).
"""

import pytest

KIB, MIB = 1 << 10, 1 << 20
PIECE, DEPTH, RINGS = 4 * MIB, 4, 4  # k_staging_piece, k_staging_depth, k_rings_per_context

_ROUND_TRIPS = r"""
import numpy as np
from numbacuda_ufunc import cuda

out = {}
rng = np.random.default_rng(20261128)
cases = {
    "float32-direct-limit+1": (np.float32, (256 << 10) // 4 + 1),
    "int8-odd": (np.int8, (4 << 20) + 12345),
    "uint8-piece": (np.uint8, 4 << 20),
    "uint8-piece+1": (np.uint8, (4 << 20) + 1),
    "float64-6-pieces": (np.float64, (24 << 20) // 8 - 3),
    "complex64-wraps-ring-twice": (np.complex64, (37 << 20) // 8 + 5),
    "bool-odd": (np.bool_, (9 << 20) + 7),
    "int16-2d": (np.int16, (1031, 3001)),
}
for name, (dtype, shape) in cases.items():
    if np.dtype(dtype).kind == "b":
        a = rng.random(shape) < 0.5
    elif np.dtype(dtype).kind in "iu":
        a = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)
    else:
        a = (rng.random(shape) * 2 - 1).astype(dtype)
    d = cuda.to_device(a)
    existing = np.full_like(a, 7)
    d.copy_to_host(existing)  # pageable destination: staged back through a ring
    out[name] = [bool(np.array_equal(d.copy_to_host(), a)), bool(np.array_equal(existing, a))]

# Strided host arrays on both sides: packed on the host, the packed bytes staged.
a = rng.random((3000, 1200))
d = cuda.to_device(a[:, ::3])
back = np.full((3000, 800), np.nan)
d.copy_to_host(back[:, ::2])
out["strided"] = [bool(np.array_equal(d.copy_to_host(), a[:, ::3])),
                  bool(np.array_equal(back[:, ::2], a[:, ::3])), bool(np.isnan(back[:, 1::2]).all())]

# An explicit stream: copy_to_host into pageable memory still returns with the data.
s = cuda.stream()
a = rng.random(3 << 20)
d = cuda.to_device(a, stream=s)
back = np.zeros_like(a)
d.copy_to_host(back, stream=s)
out["stream"] = [bool(np.array_equal(back, a))]
print(json.dumps(out))
"""


def test_fake_staging_round_trips_keep_every_value(fake_driver):
    out = fake_driver.run_json(_ROUND_TRIPS)
    bad = {name: ok for name, ok in out.items() if not all(ok)}
    assert not bad, bad
    assert len(out) == 10


_TRAFFIC = r"""
import numpy as np
from numbacuda_ufunc import cuda, vectorize

drv = FakeDriver()
out = {}
nbytes = (5 << 20) * 4 + 3 * 4  # 20 MiB + 12 bytes of float32: 6 pieces, more than a ring holds
a = np.random.default_rng(1).random(nbytes // 4, dtype=np.float32)
d = cuda.device_array_like(a)
back = np.zeros_like(a)
first = drv.traffic(lambda: (cuda.to_device(a, to=d), d.copy_to_host(back)))
out["first"] = first["calls"]
out["to_device"] = drv.traffic(lambda: cuda.to_device(a, to=d), repeat=3)
out["copy_to_host"] = drv.traffic(lambda: d.copy_to_host(back), repeat=3)
out["same"] = bool(np.array_equal(back, a))

# More streams than rings: the least recently used ring serves the next stream, and no
# buffer is allocated once RINGS rings per direction exist.
streams = [cuda.stream() for _ in range(7)]
def on_every_stream():
    for s in streams:
        cuda.to_device(a, to=d, stream=s)
        d.copy_to_host(back, stream=s)
warm = drv.traffic(on_every_stream)
out["streams_warm"] = warm["calls"]
out["streams_steady"] = drv.traffic(on_every_stream, repeat=2)
out["streams_same"] = bool(np.array_equal(back, a))

# A NumPy in/out ufunc call: pipelined over two streams, each with its own rings; its
# result comes from the pinned-result cache. Kernels do nothing under the fake, so only
# the traffic is checked.
add = vectorize(["float32(float32, float32)"], target="cuda")(lambda x, y: x + y)
x = np.ones(1 << 24, np.float32)
y = np.ones(1 << 24, np.float32)
for _ in range(2):
    r = add(x, y)
    del r
def call():
    r = add(x, y)
    del r
out["ufunc"] = drv.traffic(call, repeat=2)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def traffic(fake_driver):
    return fake_driver.run_json(_TRAFFIC)


def _pieces(nbytes, piece=PIECE):
    return -(-nbytes // piece)


def test_fake_staging_pieces_and_steady_state(traffic):
    nbytes = (5 << 20) * 4 + 12
    pieces = _pieces(nbytes)
    assert pieces > DEPTH
    # First use: one ring per direction, each allocating its DEPTH buffers once.
    assert traffic["first"].get("cuMemHostAlloc") == 2 * DEPTH, traffic["first"]
    for direction, copy in (("to_device", "cuMemcpyHtoDAsync"), ("copy_to_host", "cuMemcpyDtoHAsync")):
        t = traffic[direction]
        assert t["calls"].get(copy) == pieces, (direction, t)
        assert t["calls"].get("cuEventRecord") == pieces, (direction, t)
        assert t["allocations"] == 0 and t["frees"] == 0, (direction, t)
        assert t["launches"] == 0, (direction, t)
    # Host to device returns once the source may be reused: no wait for the last pieces.
    assert traffic["to_device"]["calls"].get("cuStreamSynchronize", 0) == 0
    assert traffic["same"]


def test_fake_staging_rings_per_stream_are_bounded_and_reused(traffic):
    warm, steady = traffic["streams_warm"], traffic["streams_steady"]
    # The default stream's two rings exist already; RINGS per direction in all.
    assert warm.get("cuMemHostAlloc", 0) == 2 * (RINGS - 1) * DEPTH, warm
    assert steady["allocations"] == 0 and steady["frees"] == 0, steady
    assert steady["calls"].get("cuMemcpyHtoDAsync") == 7 * _pieces((5 << 20) * 4 + 12), steady
    assert traffic["streams_same"]


def test_fake_staging_numpy_ufunc_call_allocates_no_pinned_memory(traffic):
    t = traffic["ufunc"]["calls"]
    nbytes = (1 << 24) * 4
    # Two inputs staged in pieces, no pinned allocation in the steady state (the rings and
    # the result's cached pinned block are reused), the result copied back directly.
    assert t.get("cuMemHostAlloc", 0) == 0 and t.get("cuMemFreeHost", 0) == 0, t
    assert t.get("cuMemcpyHtoDAsync") == 2 * _pieces(nbytes), t
    assert t.get("cuMemcpyDtoHAsync", 0) >= 1, t
    assert t.get("cuLaunchKernel", 0) >= 1, t


_PIECE_SETTINGS = r"""
import os
os.environ["NUMBACUDA_UFUNC_STAGING_PIECE_MIB"] = "1"
os.environ["NUMBACUDA_UFUNC_STAGING_STORES"] = "cached"
import numpy as np
from numbacuda_ufunc import cuda

drv = FakeDriver()
a = np.random.default_rng(2).integers(0, 255, (3 << 20) + 5, dtype=np.uint8)
d = cuda.to_device(a)
back = np.zeros_like(a)
d.copy_to_host(back)  # both rings made
t = drv.traffic(lambda: (cuda.to_device(a, to=d), d.copy_to_host(back)))
print(json.dumps({"calls": t["calls"], "same": bool(np.array_equal(back, a))}))
"""


def test_fake_staging_piece_size_and_cached_stores_from_the_environment(fake_driver):
    out = fake_driver.run_json(_PIECE_SETTINGS)
    assert out["same"]
    pieces = _pieces((3 << 20) + 5, 1 * MIB)
    assert out["calls"].get("cuMemcpyHtoDAsync") == pieces, out
    assert out["calls"].get("cuMemcpyDtoHAsync") == pieces, out
    assert out["calls"].get("cuMemHostAlloc", 0) == 0, out
