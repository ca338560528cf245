"""Kernel cache (DESIGN.md section 4): memory + disk, new processes hit the disk without
loading NVRTC, corrupt/truncated entries are rebuilt, concurrent builders all succeed."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json, sys, time
    from numbacuda_ufunc import _core
    src = '#include "nu_scalar.cuh"\\nextern "C" __global__ void k(double* o) { o[0] = nu::mod(o[1], o[2]) + %s; }\\n'
    t0 = time.perf_counter()
    ptx = _core.compile_ptx(src % sys.argv[1], (9, 0))
    ptx_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    lib = _core.build_host(src.replace("__global__ ", "") % sys.argv[1])
    host_s = time.perf_counter() - t0
    lib.symbol("k")
    nvrtc_loaded = "libnvrtc" in open("/proc/self/maps").read()
    print(json.dumps(dict(stats=_core.cache_stats(), ptx_len=len(ptx), ptx_s=ptx_s,
                          host_s=host_s, nvrtc_loaded=nvrtc_loaded, ptx_hash=hash(ptx))))
""")


def run(cache_dir, value="1.0", extra_env=None):
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(cache_dir), PYTHONHASHSEED="0")
    env.pop("NUMBACUDA_UFUNC_DISABLE_CACHE", None)
    env.update(extra_env or {})
    out = subprocess.run([sys.executable, "-c", SCRIPT, value], env=env, capture_output=True,
                         text=True, check=True)
    import json
    return json.loads(out.stdout)


def entries(cache_dir):
    return sorted(p for p in cache_dir.iterdir() if p.suffix == ".nuc")


def test_warm_process_runs_no_nvrtc_and_no_compiler(tmp_path):
    cold = run(tmp_path)
    assert cold["stats"]["nvrtc_compiles"] == 1 and cold["stats"]["host_compiles"] == 1
    assert len(entries(tmp_path)) == 2
    warm = run(tmp_path)
    assert warm["stats"]["nvrtc_compiles"] == 0 and warm["stats"]["host_compiles"] == 0
    assert warm["stats"]["disk_hits"] == 2
    assert not warm["nvrtc_loaded"], "a warm first call must not even load libnvrtc"
    assert warm["ptx_hash"] == cold["ptx_hash"]
    assert warm["ptx_s"] < 0.05  # typically ~1 ms; generous for loaded CI machines


def test_key_covers_the_source(tmp_path):
    run(tmp_path, "1.0")
    other = run(tmp_path, "2.0")
    assert other["stats"]["nvrtc_compiles"] == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_corrupt_entry_is_rebuilt_not_loaded(tmp_path, damage):
    cold = run(tmp_path)
    for path in entries(tmp_path):
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            path.write_bytes(data[:40] + bytes([data[40] ^ 0xFF]) + data[41:])
        else:
            path.write_bytes(b"")
    again = run(tmp_path)
    assert again["stats"]["rejected_entries"] == 2
    assert again["stats"]["nvrtc_compiles"] == 1 and again["stats"]["host_compiles"] == 1
    assert again["ptx_hash"] == cold["ptx_hash"]
    warm = run(tmp_path)  # the rebuilt entries are good again
    assert warm["stats"]["disk_hits"] == 2 and warm["stats"]["rejected_entries"] == 0


def test_two_processes_compiling_at_once_both_succeed(tmp_path):
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, "3.0"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len(entries(tmp_path)) == 2
    assert not [p for p in tmp_path.iterdir() if ".tmp." in p.name]
    warm = run(tmp_path, "3.0")
    assert warm["stats"]["disk_hits"] == 2


def test_disable_cache_writes_nothing(tmp_path):
    out = run(tmp_path, extra_env={"NUMBACUDA_UFUNC_DISABLE_CACHE": "1"})
    assert out["stats"]["nvrtc_compiles"] == 1
    assert entries(tmp_path) == []


def test_memory_cache_within_a_process():
    from numbacuda_ufunc import _core

    src = '#include "nu_scalar.cuh"\n__device__ int memo_probe_7() { return 7; }\n'
    _core.compile_ptx(src, (9, 0))
    before = _core.cache_stats()
    _core.compile_ptx(src, (9, 0))
    after = _core.cache_stats()
    assert after["memory_hits"] == before["memory_hits"] + 1
    assert after["nvrtc_compiles"] == before["nvrtc_compiles"]


def test_cache_dir_follows_environment(tmp_path, monkeypatch):
    from numbacuda_ufunc import _core

    monkeypatch.setenv("NUMBACUDA_UFUNC_CACHE_DIR", str(tmp_path / "sub"))
    assert _core.cache_dir() == str(tmp_path / "sub")
    assert (tmp_path / "sub").is_dir()
