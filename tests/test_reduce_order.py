"""Reductions without CUB keep every result's bits (issue 30).

* The GPU's order: src/kernels/reduce.cuh's own warp shuffles and block fold, and the
  one-pass fold of a full reduction's partials in its last block, combine values exactly
  as the kernels built on CUB's WarpReduce and BlockReduce did. No GPU is needed to show
  it: tests/cxx/check_reduce_order.cpp runs the kernels' plan lane by lane on the host
  (reduce_kernels::emulate_device, through the same order predicates as the device code)
  against a model of CUB's algorithms, for float32 and float64 sums and an order-sensitive
  integer operator.
* The host backend's results: float32 and float64 sums of fixed-seed data, recorded before
  the change, bit for bit. Sizes stay within 64 warp tiles, where the host plan's chunks do
  not depend on the machine's core count.
* The GPU kernels compile with NVRTC without CUB's headers, and a first call builds only
  the kernel its plan runs.
"""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import _core, cuda

ROOT = Path(__file__).resolve().parents[1]

# reduce_kernel's order in src/launch/reduce_launch.h.
UNITS_CONTIG, UNITS_STRIDED, FINAL, COLUMNS, COLUMNS_TILED, COLUMNS_FINAL, FULL_CONTIG = (1 << i for i in range(7))
SUFFIXES = ("_units_contig", "_units_strided", "_final", "_columns", "_columns_tiled", "_columns_final",
            "_full_contig")


def add(a, b):
    return a + b


add_reduce = nu.Reduce(add)
add_ufunc = nu.vectorize(["float32(float32, float32)", "float64(float64, float64)"])(add)

# (dtype, n) -> the sum's bytes in hex, as the kernels with CUB computed them on the host
# backend (recorded at b6266e6 with np.random.default_rng(n).standard_normal(n)).
RECORDED = {
    ('float32', 1): '69f0b03e',
    ('float32', 7): '330f10c0',
    ('float32', 31): 'b6d5bbbf',
    ('float32', 33): '968362bf',
    ('float32', 511): 'c04a0442',
    ('float32', 513): 'e8db07c2',
    ('float32', 1000): '27342fc1',
    ('float32', 4097): '22b89b42',
    ('float32', 12345): 'cdb82943',
    ('float32', 32767): '2654c6c2',
    ('float64', 1): 'a1b3bb280d1ed63f',
    ('float64', 7): 'eafe4367e60102c0',
    ('float64', 255): 'f4f662fa9398d9bf',
    ('float64', 257): '12c1dc2b55ea3040',
    ('float64', 1000): '605906b486e625c0',
    ('float64', 4097): '18d4e5ad03775340',
    ('float64', 16383): '850a361da5786640',
}


def _compiler():
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def test_reduce_order_is_cubs_in_host_emulation(tmp_path):
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (c++, g++, clang++ or $CXX) to build the check")
    exe = tmp_path / "check_reduce_order"
    cmd = [cxx, "-std=c++17", "-O2", f"-I{ROOT / 'src' / 'kernels'}",
           str(ROOT / "tests/cxx/check_reduce_order.cpp"), "-o", str(exe)]
    built = subprocess.run(cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.count(": ok") == 3, ran.stdout


@pytest.mark.parametrize("key", sorted(RECORDED), ids=[f"{d}-{n}" for d, n in sorted(RECORDED)])
def test_host_sums_keep_their_recorded_bits(key):
    dtype, n = key
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    want = bytes.fromhex(RECORDED[key])
    assert add_reduce(x).tobytes() == want
    assert add_reduce(cuda.to_device(x)).tobytes() == want
    assert np.asarray(add_ufunc.reduce(x), dtype).tobytes() == want


def test_generated_source_has_no_cub_and_only_the_kernels_asked_for():
    engine = add_reduce._engine
    dt = np.dtype(np.float32)
    loop = engine._find_loop(dt)
    if loop < 0:
        loop = add_reduce._resolve(dt)
    full = engine._source(loop, dt, dt)
    assert "cub" not in full.lower()
    assert all(f", {s}," in full for s in SUFFIXES)
    full = engine._source(loop, dt, dt, FULL_CONTIG)
    assert ", _full_contig," in full
    assert not any(f", {s}," in full for s in SUFFIXES[:-1])


def test_host_build_makes_all_kernels_at_once():
    """The host compiler builds all seven kernels in one unit (one compile); the GPU builds
    each kernel when a plan first needs it (tests/test_fake_driver_reduce.py)."""
    r = nu.Reduce(lambda a, b: a + b)
    x = np.arange(10, dtype=np.float64)
    assert r(x) == 45.0
    engine = r._engine
    dt = np.dtype(np.float64)
    assert engine._built_kernels(engine._find_loop(dt), dt, dt) == (1 << 7) - 1


def _nvrtc_or_skip():
    try:
        _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128, np.bool_, np.int8])
def test_kernels_compile_with_nvrtc_without_cub(dtype):
    _nvrtc_or_skip()
    dt = np.dtype(dtype)
    src = add_reduce.inspect_cuda(dt)
    ptx = _core.compile_ptx(src, (9, 0))  # no include options: no CUB
    name = src.split("NU_REDUCE_ENTRY(")[1].split(",")[0]
    for suffix in SUFFIXES:
        assert f".entry {name}{suffix}(" in ptx
    for kernel in ("_full_contig", "_units_contig"):
        units = ptx.split(f".entry {name}{kernel}(")[1].split(".entry")[0]
        assert "shfl.sync.down.b32" in units       # the warp fold
        assert "atom.global.add.u32" in units      # the one-pass block counter
        assert "membar.gl" in units                # its fences
    final = ptx.split(f".entry {name}_final(")[1].split(".entry")[0]
    assert "bar.sync" in final                 # the block fold's barriers
