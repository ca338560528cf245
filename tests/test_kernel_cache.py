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
    lib = _core.build_host(src.replace("__global__ ", "") % sys.argv[1], [], ["k"])
    host_s = time.perf_counter() - t0
    lib.symbol("k")
    host_key = lib.key
    nvrtc_loaded = "libnvrtc" in open("/proc/self/maps").read()
    print(json.dumps(dict(stats=_core.cache_stats(), ptx_len=len(ptx), ptx_s=ptx_s,
                          host_s=host_s, nvrtc_loaded=nvrtc_loaded, ptx_hash=hash(ptx),
                          host_key=host_key)))
""")


def run(cache_dir, value="1.0", extra_env=None, script=SCRIPT, wrap=(), timeout=300):
    env = dict(os.environ, NUMBACUDA_UFUNC_CACHE_DIR=str(cache_dir), PYTHONHASHSEED="0")
    env.pop("NUMBACUDA_UFUNC_DISABLE_CACHE", None)
    env.update(extra_env or {})
    code = ["-c", script]
    if "def " in script:  # the translator reads function source: run it from a file
        import tempfile
        fd, name = tempfile.mkstemp(suffix=".py")
        with os.fdopen(fd, "w") as fh:
            fh.write(script)
        code = [name]
    out = subprocess.run([*wrap, sys.executable, *code, value], env=env,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
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


# ---- robustness (issue 15): a cache that never breaks the process

def entry_bytes(key: str, payload: bytes) -> bytes:
    """An entry in the on-disk format, with a valid checksum (kernel_cache.cpp)."""
    import hashlib
    head = b"NUCACHE2" + key.encode() + len(payload).to_bytes(8, "little")
    return head + payload + hashlib.sha256(head + payload).digest()


def entry_payload(path) -> bytes:
    data = path.read_bytes()
    return data[8 + 64 + 8:-32]


USES_CPU_UFUNC = textwrap.dedent("""
    import json, sys
    import numpy as np
    import numbacuda_ufunc as nu
    from numbacuda_ufunc import _core
    v = float(sys.argv[1])
    def scaled(x):
        return x * 3.0 + 1.0
    def shifted(x):
        return x * 3.0 + 2.5
    f = nu.vectorize(["float64(float64)"], target="cpu")(scaled if v == 1.0 else shifted)
    x = np.arange(5.0)
    np.testing.assert_array_equal(f(x), x * 3.0 + v)
    print(json.dumps(dict(stats=_core.cache_stats())))
""")


def read_only_wrap(path):
    """A command prefix that runs its command with `path` read-only, even for root."""
    import shutil
    if os.geteuid() != 0:
        for p in [path, *path.rglob("*")]:
            if p.is_dir():
                p.chmod(0o555)
        return ()
    if not shutil.which("unshare"):
        pytest.skip("root without unshare: cannot make a read-only directory")
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unshare -m is not permitted here")
    mount = (f"mount --bind {path} {path} && mount -o remount,bind,ro {path} && "
             'exec "$0" "$@"')
    return ("unshare", "-m", "--propagation", "private", "sh", "-c", mount)


def test_read_only_cache_is_read_and_builds_go_elsewhere(tmp_path):
    cache = tmp_path / "shared"
    cold = run(cache)
    run(cache, "1.0", script=USES_CPU_UFUNC)
    assert (cache / "tmp").is_dir()  # the case that used to fail: tmp/ exists, read-only
    before = sorted(p.name for p in cache.rglob("*"))
    wrap = read_only_wrap(cache)
    warm = run(cache, "1.0", wrap=wrap)
    assert warm["stats"]["disk_hits"] == 2 and warm["stats"]["host_compiles"] == 0
    assert warm["ptx_hash"] == cold["ptx_hash"]
    new = run(cache, "7.0", wrap=wrap)  # new kernels build in a private directory
    assert new["stats"]["host_compiles"] == 1 and new["stats"]["nvrtc_compiles"] == 1
    cpu = run(cache, "2.5", script=USES_CPU_UFUNC, wrap=wrap)
    assert cpu["stats"]["host_compiles"] == 1
    cached_cpu = run(cache, "1.0", script=USES_CPU_UFUNC, wrap=wrap)
    assert cached_cpu["stats"]["host_compiles"] == 0
    assert sorted(p.name for p in cache.rglob("*")) == before


def test_entry_of_another_key_is_rejected_and_replaced(tmp_path):
    a = run(tmp_path, "1.0")
    b = run(tmp_path, "2.0")
    path_a = tmp_path / (a["host_key"] + ".nuc")
    path_b = tmp_path / (b["host_key"] + ".nuc")
    path_b.write_bytes(path_a.read_bytes())  # a valid entry, but of another kernel
    again = run(tmp_path, "2.0")
    assert again["stats"]["rejected_entries"] == 1 and again["stats"]["host_compiles"] == 1
    assert path_b.read_bytes() != path_a.read_bytes()
    assert run(tmp_path, "2.0")["stats"]["host_compiles"] == 0


@pytest.mark.parametrize("bad", ["garbage", "elf_machine", "missing_symbol", "truncated"])
def test_bad_payload_behind_valid_checksum_is_rebuilt(tmp_path, bad):
    cold = run(tmp_path, "1.0")
    path = tmp_path / (cold["host_key"] + ".nuc")
    good = entry_payload(path)
    if bad == "garbage":
        payload = os.urandom(len(good))
    elif bad == "elf_machine":  # e_machine of another architecture
        payload = good[:18] + (0xB7).to_bytes(2, "little") + good[20:]
    elif bad == "truncated":
        # Loaded segments past the end of the file, the headers intact (no section table,
        # which dlopen does not need): dlopen faulted with SIGBUS on every run (issue 35).
        cut = bytearray(good[:len(good) // 2])
        cut[0x28:0x30] = bytes(8)  # e_shoff
        cut[0x3C:0x40] = bytes(4)  # e_shnum, e_shstrndx
        payload = bytes(cut)
    else:  # a loadable library of another kernel: its entry point has another name
        other = run(tmp_path, "9.0", script=SCRIPT.replace('"k"', '"k2"').replace(
            "void k(", "void k2("))
        payload = entry_payload(tmp_path / (other["host_key"] + ".nuc"))
    path.write_bytes(entry_bytes(cold["host_key"], payload))
    again = run(tmp_path, "1.0")
    assert again["stats"]["rejected_entries"] == 1 and again["stats"]["host_compiles"] == 1
    assert entry_payload(path) != payload
    warm = run(tmp_path, "1.0")
    assert warm["stats"]["host_compiles"] == 0 and warm["stats"]["rejected_entries"] == 0


@pytest.mark.parametrize("special", ["fifo", "dev_zero", "directory"])
def test_special_file_in_place_of_an_entry_is_never_read(tmp_path, special):
    cold = run(tmp_path, "1.0")
    path = tmp_path / (cold["host_key"] + ".nuc")
    path.unlink()
    if special == "fifo":
        os.mkfifo(path)
    elif special == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        path.mkdir()
    again = run(tmp_path, "1.0", timeout=120)  # a FIFO used to hang at open
    assert again["stats"]["host_compiles"] == 1
    if special != "directory":
        assert path.is_file() and not path.is_symlink()
        assert run(tmp_path, "1.0")["stats"]["host_compiles"] == 0


def test_stale_build_directories_are_removed(tmp_path):
    import time
    run(tmp_path, "1.0")
    tmp = tmp_path / "tmp"
    now = time.time()

    def leftover(name, age):
        d = tmp / name
        d.mkdir()
        (d / "nu_module.cpp").write_text("int x;")
        os.utime(d, (now - age, now - age))
        return d

    dead = leftover("nu_build_4194000_aaaaaa", 120)       # its process is gone
    ancient = leftover(f"nu_build_{os.getpid()}_bbbbbb", 7200)  # alive pid, but hours old
    fresh = leftover(f"nu_build_{os.getpid()}_cccccc", 5)  # a build in progress
    run(tmp_path, "4.0")
    assert not dead.exists() and not ancient.exists()
    assert fresh.exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith("nu_build_") and p != fresh]


def test_stale_build_cleanup_never_follows_a_planted_link(tmp_path):
    # A symbolic link under a stale build's name (in a shared $TMPDIR anyone can write) was
    # opened and every file in its target unlinked (issue 35). Now only real directories of
    # this user are removed; the link itself is left alone, and so is what it points to.
    import time
    run(tmp_path, "1.0")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep")
    link = tmp_path / "tmp" / "nu_build_4194001_dddddd"
    link.symlink_to(victim, target_is_directory=True)
    old = time.time() - 7200
    os.utime(link, (old, old), follow_symlinks=False)
    run(tmp_path, "5.0")
    assert (victim / "precious.txt").read_text() == "keep"
    assert link.is_symlink()


def test_cache_file_primitives_bind_the_payload_to_its_key(tmp_path):
    """_core.read/write_cache_file (cuda.jit(cache=True)'s files use them): a round trip,
    another key's file, a flipped byte, a FIFO and a bad key."""
    from numbacuda_ufunc import _core

    key, other = "a" * 64, "b" * 64
    path = str(tmp_path / "entry.nuc")
    payload = bytes(range(256)) * 3
    assert _core.write_cache_file(path, key, payload) is True
    assert _core.read_cache_file(path, key) == payload
    assert _core.read_cache_file(path, other) is None
    data = bytearray(open(path, "rb").read())
    data[100] ^= 1
    open(path, "wb").write(bytes(data))
    assert _core.read_cache_file(path, key) is None
    assert _core.read_cache_file(str(tmp_path / "missing.nuc"), key) is None
    os.unlink(path)
    os.mkfifo(path)
    assert _core.read_cache_file(path, key) is None  # never waits for a writer
    assert _core.write_cache_file(path, key, b"x") is True  # the FIFO is replaced
    assert _core.read_cache_file(path, key) == b"x"
    assert _core.write_cache_file(str(tmp_path / "no" / "dir.nuc"), key, b"x") is False
    for bad in ("A" * 64, "a" * 63, "g" * 64):
        with pytest.raises(ValueError, match="key must be 64 lowercase hex digits"):
            _core.read_cache_file(path, bad)
        with pytest.raises(ValueError, match="key must be 64 lowercase hex digits"):
            _core.write_cache_file(path, bad, b"")


def test_damaged_precompiled_header_is_rebuilt(tmp_path):
    # A truncated .gch made every later host build fail, in every process (issue 35). Now
    # the build is retried without it, the header's folder goes, and the next build makes
    # it again.
    run(tmp_path, "1.0")
    (gch,) = tmp_path.glob("pch-*/nu_host_pch.h.gch")
    size = gch.stat().st_size
    with open(gch, "r+b") as fh:
        fh.truncate(size // 2)
    again = run(tmp_path, "2.0")
    assert again["stats"]["host_compiles"] == 2  # with the header, then without
    assert not gch.exists()
    third = run(tmp_path, "3.0")
    assert third["stats"]["host_compiles"] == 1
    (rebuilt,) = tmp_path.glob("pch-*/nu_host_pch.h.gch")
    assert rebuilt.stat().st_size > size // 2


def test_private_precompiled_header_is_removed_at_exit(tmp_path):
    # With the cache disabled (or read-only) each process built its header in $TMPDIR and
    # left it there: 11 MB per short-lived worker (issue 35).
    tmp = tmp_path / "t"
    tmp.mkdir()
    run(tmp_path / "cache", "1.0", extra_env={"NUMBACUDA_UFUNC_DISABLE_CACHE": "1",
                                              "TMPDIR": str(tmp)})
    assert list(tmp.iterdir()) == []


def _can_mount_tmpfs():
    try:
        out = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs none /mnt"],
                             capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


@pytest.mark.skipif(not _can_mount_tmpfs(), reason="needs unshare -m and a tmpfs mount (root)")
def test_full_disk_under_the_cache_falls_back_to_tmpdir(tmp_path):
    # A full disk made every build fail with "cannot write .../host_prelude.h" and no reason
    # (issue 35). Builds now go on in $TMPDIR, as for a read-only cache.
    cache, tmp = tmp_path / "cache", tmp_path / "t"
    cache.mkdir()
    tmp.mkdir()
    full = ("unshare", "-m", "sh", "-c",
            f"mount -t tmpfs -o size=64k none {cache} && exec \"$@\"", "sh")
    got = run(cache, "1.0", extra_env={"TMPDIR": str(tmp)}, wrap=full)
    assert got["stats"]["host_compiles"] >= 1 and got["host_key"]

