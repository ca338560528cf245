"""Installing without a CUDA toolkit (issue 28): which NVRTC the engine takes for a driver
(tested with fake driver versions), where the CUDA wheels' files are found, the error for a
missing host compiler, and that NVRTC builds need no host compiler."""

import os
import subprocess
import sys
import textwrap

import pytest

from numbacuda_ufunc import _core
from numbacuda_ufunc.errors import CompileError, CudaSupportError, HostCompilerNotFoundError
from numbacuda_ufunc.toolchain._cuda_wheels import WHEELS, origin, wheel_dirs

BOTH = [("/toolkit/lib64/libnvrtc.so.12", 12), ("/wheel/cu13/lib/libnvrtc.so.13", 13)]


@pytest.mark.parametrize("driver, chosen", [
    (0, "/wheel/cu13/lib/libnvrtc.so.13"),        # no driver (inspection, compile_ptx): newest
    (13000, "/wheel/cu13/lib/libnvrtc.so.13"),    # a CUDA 13.0 driver runs 13.x code
    (13020, "/wheel/cu13/lib/libnvrtc.so.13"),
    (12040, "/toolkit/lib64/libnvrtc.so.12"),     # a 12.4 driver cannot load NVRTC 13's code
    (12090, "/toolkit/lib64/libnvrtc.so.12"),
])
def test_newest_nvrtc_the_driver_supports(driver, chosen):
    assert _core.choose_nvrtc(driver, BOTH) == chosen
    assert _core.choose_nvrtc(driver, BOTH[::-1]) == chosen


def test_equal_majors_keep_the_search_order():
    found = [("/first/libnvrtc.so.12", 12), ("/second/libnvrtc.so.12", 12)]
    assert _core.choose_nvrtc(12080, found) == "/first/libnvrtc.so.12"
    assert _core.choose_nvrtc(0, found) == "/first/libnvrtc.so.12"


def test_nvrtc_newer_than_the_driver_is_a_support_error():
    with pytest.raises(CudaSupportError) as info:
        _core.choose_nvrtc(12080, [("/wheel/cu13/lib/libnvrtc.so.13", 13)])
    message = str(info.value)
    assert "CUDA 12.8" in message                      # the driver's version
    assert "/wheel/cu13/lib/libnvrtc.so.13 (CUDA 13)" in message  # what was found
    assert 'pip install "numbacuda_ufunc[cu12]"' in message      # the command that fixes it


def test_driver_older_than_cuda_12_is_told_to_update():
    with pytest.raises(CudaSupportError, match="CUDA 11.8.*update the GPU driver"):
        _core.choose_nvrtc(11080, BOTH)


def test_nothing_found_chooses_nothing():
    assert _core.choose_nvrtc(12040, []) is None


def test_candidates_are_listed_without_loading():
    found = _core.nvrtc_candidates()
    assert all(os.path.isfile(path) and major in (12, 13) for path, major in found)
    if found:  # the one loaded is the rule's choice among them
        assert _core.nvrtc_library_path() == _core.choose_nvrtc(_core.nvrtc_driver_version(), found)


def test_extras_name_the_wheels_searched():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    for extra, names in WHEELS.items():
        assert sorted(r.split(">")[0].split(";")[0].strip() for r in extras[extra]) == sorted(names)


def test_wheel_files_are_found_through_their_metadata(tmp_path, monkeypatch):
    """A fake nvidia-cuda-nvrtc distribution (dist-info with a RECORD) on sys.path: its
    library and header folders are found from the file list, wherever it is installed."""
    site = tmp_path / "site"
    (site / "nvidia/cu13/lib").mkdir(parents=True)
    (site / "nvidia/cu13/include/cccl/cub").mkdir(parents=True)
    (site / "nvidia/cu13/lib/libnvrtc.so.13").write_bytes(b"")
    (site / "nvidia/cu13/include/cccl/cub/cub.cuh").write_text("")
    (site / "nvidia/cu13/include/cuda_runtime.h").write_text("")
    info = site / "nvidia_cuda_nvrtc-13.9.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cuda-nvrtc\nVersion: 13.9.1\n")
    (info / "RECORD").write_text("nvidia/cu13/lib/libnvrtc.so.13,,\nnvidia/cu13/include/cccl/cub/cub.cuh,,\n"
                                 "nvidia/cu13/include/cuda_runtime.h,,\n")
    (site / "nvidia/cu13/lib/libnvJitLink.so.13").write_bytes(b"")  # a second wheel, same folder
    info = site / "nvidia_nvjitlink-13.9.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-nvjitlink\nVersion: 13.9.2\n")
    (info / "RECORD").write_text("nvidia/cu13/lib/libnvJitLink.so.13,,\n")
    monkeypatch.syspath_prepend(str(site))
    libs, incs, found = wheel_dirs()
    assert str(site / "nvidia/cu13/lib") in libs
    assert str(site / "nvidia/cu13/include/cccl") in incs and str(site / "nvidia/cu13/include") in incs
    assert ("nvidia-cuda-nvrtc", "13.9.1") in [(n, v) for n, v, _ in found]
    assert origin(str(site / "nvidia/cu13/lib/libnvrtc.so.13"), found) == "pip wheel nvidia-cuda-nvrtc 13.9.1"
    assert origin(str(site / "nvidia/cu13/lib/libnvJitLink.so.13"), found) == "pip wheel nvidia-nvjitlink 13.9.2"
    assert origin(str(site / "nvidia/cu13/include/cccl"), found) == "pip wheel nvidia-cuda-nvrtc 13.9.1"
    assert origin("libnvrtc.so.13", found) == "the dynamic loader's search path"


def _run(code, folder, **env):
    """`code` as a script file (the translator reads the functions' source) in a fresh
    process on the host backend with no disk cache, so every build runs."""
    script = folder / "script.py"
    script.write_text(textwrap.dedent(code))
    full = {**os.environ, "NUMBACUDA_UFUNC_ENABLE_CUDASIM": "1", "NUMBACUDA_UFUNC_DISABLE_CACHE": "1",
            "NUMBACUDA_UFUNC_NVRTC_CHECK": "0", **env}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full, timeout=300)


MISSING = """
    import numpy as np
    import numbacuda_ufunc as nu
    from numbacuda_ufunc.errors import HostCompilerNotFoundError
    def twice_plus_one(x):
        return x * 2.0 + 1.0
    try:
        f = nu.vectorize(["float64(float64)"], target="cpu")(twice_plus_one)
        f(np.arange(3.0))
    except HostCompilerNotFoundError as e:
        print("ERROR:", e)
"""


@pytest.mark.parametrize("env, named", [
    ({"CXX": "/nonexistent/bin/c++"}, "'/nonexistent/bin/c++' was not found (from $CXX)"),
    ({"CXX": "", "PATH": "/nonexistent"}, "'c++' was not found (on PATH; $CXX is not set)"),
])
def test_missing_host_compiler_is_a_typed_error(env, named, tmp_path):
    assert issubclass(HostCompilerNotFoundError, CompileError)
    done = _run(MISSING, tmp_path, **env)
    assert done.returncode == 0, done.stderr
    assert "ERROR: build_host(): no host C++ compiler: " + named in done.stdout
    assert "apt-get install g++" in done.stdout and "set CXX" in done.stdout


def test_nvrtc_builds_need_no_host_compiler(tmp_path):
    """The cuda target's compile path is NVRTC only: PTX for a ufunc and a kernel with no
    host compiler at all (on a GPU the launch then loads that code with the driver)."""
    try:
        _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(f"no NVRTC: {exc}")
    done = _run("""
        import numbacuda_ufunc as nu
        from numbacuda_ufunc import cuda
        def twice_plus_one(x):
            return x * 2.0 + 1.0
        ptx, _ = cuda.compile_ptx(twice_plus_one, "float64(float64)", device=True)
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += 1.0
        kptx, _ = cuda.compile_ptx(k, "void(float64[:])")
        print("PTX", ".version" in ptx and ".entry" in kptx)
    """, tmp_path, CXX="/nonexistent/bin/c++", PATH="/nonexistent")
    assert done.returncode == 0, done.stderr
    assert "PTX True" in done.stdout
