"""The cache folders as an attack surface (issue 35): the kernel cache holds shared libraries
that are dlopened and cache=True pickles that are unpickled, so whoever can write a cache
folder can run code as its user. Folders other users can write to are refused (kernels stay
in memory, with a warning), the /tmp fallback without HOME must be this user's private
folder, and folders we make are never world-writable, whatever the umask."""

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

# Runs in a fresh process (the cache folder is chosen from the environment there): builds a
# host kernel, and reports the engine's verdict on its folder and what the build did.
PROBE = textwrap.dedent("""
    import json, warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        from numbacuda_ufunc import _compile
        core = _compile.core()
    src = 'extern "C" void k(double* r) { r[0] = %s; }'
    lib = core.build_host(src, [], ["k"])
    print(json.dumps(dict(dir=core.cache_dir(), refusal=core.cache_dir_refusal(),
                          warnings=[str(w.message) for w in caught], stats=core.cache_stats())))
""")


def _probe(env, value="1.5"):
    out = subprocess.run([sys.executable, "-c", PROBE % value], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _env(**changes):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBACUDA_UFUNC_CACHE_DIR", "NUMBACUDA_UFUNC_DISABLE_CACHE")}
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def test_world_writable_cache_dir_is_refused_with_a_warning(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant a library under a future key
    got = _probe(_env(NUMBACUDA_UFUNC_CACHE_DIR=str(shared)))
    assert "other users can write to it (mode 777" in got["refusal"]
    assert any("kept in memory only" in w and str(shared) in w for w in got["warnings"])
    assert got["stats"]["host_compiles"] == 1
    assert not any(p.suffix == ".nuc" for p in shared.rglob("*"))  # nothing read or written
    shared.chmod(0o700)
    again = _probe(_env(NUMBACUDA_UFUNC_CACHE_DIR=str(shared)))
    assert again["refusal"] == "" and again["warnings"] == []
    assert any(p.suffix == ".nuc" for p in shared.rglob("*"))


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_group_writable_cache_dir_of_another_user_is_refused(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    os.chown(other, 65534, 65534)  # nobody
    other.chmod(0o775)
    got = _probe(_env(NUMBACUDA_UFUNC_CACHE_DIR=str(other)))
    assert "owner uid 65534" in got["refusal"]
    other.chmod(0o755)  # another user's read-only cache (a cluster's shared one) is used
    assert _probe(_env(NUMBACUDA_UFUNC_CACHE_DIR=str(other)))["refusal"] == ""


def test_tmp_fallback_without_home_must_be_private(tmp_path):
    env = _env(HOME=None, XDG_CACHE_HOME=None)
    fallback = f"/tmp/numbacuda_ufunc-cache-{os.geteuid()}"
    existed = os.path.isdir(fallback)
    mode = stat.S_IMODE(os.stat(fallback).st_mode) if existed else None
    try:
        if existed:
            os.chmod(fallback, 0o700)
        got = _probe(env)
        assert got["dir"] == fallback and got["refusal"] == ""
        assert stat.S_IMODE(os.stat(fallback).st_mode) == 0o700
        os.chmod(fallback, 0o755)  # another user's planted folder would look like this or worse
        got = _probe(env, "2.5")
        assert "shared /tmp fallback" in got["refusal"] and "mode 755" in got["refusal"]
        assert any("kept in memory only" in w for w in got["warnings"])
    finally:
        if existed:
            os.chmod(fallback, mode)
        else:
            os.chmod(fallback, 0o700)


JIT_MODULE = textwrap.dedent("""
    import numpy as np
    from numbacuda_ufunc import cuda

    @cuda.jit(cache=True)
    def k(r):
        r[0] = 7.0

    r = np.zeros(1)
    k[1, 1](r)
    assert r[0] == 7.0
    print(k.stats.cache_path)
""")


def test_cache_true_folders_are_not_world_writable_under_umask_000(tmp_path):
    # os.makedirs gave the folders above the pickles mode 0777 under umask 000.
    (tmp_path / "src").mkdir()
    script = tmp_path / "src" / "jitmod.py"
    script.write_text(JIT_MODULE)
    nested = tmp_path / "numba_cache" / "a" / "b"
    env = _env(NUMBA_CACHE_DIR=str(nested), NUMBACUDA_UFUNC_CACHE_DIR=str(tmp_path / "engine"))
    out = subprocess.run([sys.executable, "-c", f"import os; os.umask(0); "
                          f"exec(compile(open({str(script)!r}).read(), {str(script)!r}, 'exec'))"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    path = out.stdout.strip().splitlines()[-1]
    assert path.startswith(str(nested))
    made = [nested.parent.parent, nested.parent, nested, path]
    for folder in made:
        assert stat.S_IMODE(os.stat(folder).st_mode) & 0o022 == 0, (folder, oct(os.stat(folder).st_mode))
    written = [p for p in os.scandir(path) if p.name.endswith((".nuc", ".nui"))]
    assert written


def test_cache_true_skips_a_world_writable_folder(tmp_path):
    (tmp_path / "src").mkdir()
    script = tmp_path / "src" / "jitmod.py"
    script.write_text(JIT_MODULE)
    planted = tmp_path / "numba_cache"
    planted.mkdir()
    planted.chmod(0o777)
    env = _env(NUMBA_CACHE_DIR=str(planted), NUMBACUDA_UFUNC_CACHE_DIR=str(tmp_path / "engine"))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    path = out.stdout.strip().splitlines()[-1]
    assert not path.startswith(str(planted)) and path == str(tmp_path / "src" / "__pycache__")
