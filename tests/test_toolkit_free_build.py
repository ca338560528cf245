"""The build needs no CUDA toolkit (issue 28): src/cuda_api/ declares the driver API, NVRTC
and nvJitLink calls the engine makes. Where a toolkit's headers exist, those declarations
must agree with them (tests/cxx/check_cuda_api.cpp); without one the check skips."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEADERS = ("cuda.h", "cudaProfiler.h", "nvrtc.h", "nvJitLink.h")


def _toolkit_include_dirs():
    """Include directories that together hold every header the check compares against:
    a toolkit's (NUMBACUDA_UFUNC_CUDA_HOME, CUDA_HOME, CUDA_PATH, /usr/local/cuda), else
    None."""
    homes = [os.environ.get(v) for v in ("NUMBACUDA_UFUNC_CUDA_HOME", "CUDA_HOME", "CUDA_PATH")]
    for home in [h for h in homes if h] + ["/usr/local/cuda"]:
        inc = Path(home) / "include"
        if all((inc / h).is_file() for h in HEADERS):
            return [inc]
    return None


def _compiler():
    return os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def test_no_toolkit_header_or_package_in_the_build():
    """No source includes a toolkit header and CMake looks for no toolkit."""
    pattern = re.compile(r"#\s*include\s*[<\"](cuda|cudaProfiler|nvrtc|nvJitLink|cuda_runtime)\.h[>\"]")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*")
                 if p.suffix in (".cpp", ".h") and p.parent.name != "kernels" and pattern.search(p.read_text())]
    assert offenders == []
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert "find_package(CUDAToolkit" not in cmake and "CUDA::" not in cmake


def test_our_declarations_agree_with_the_toolkit_headers(tmp_path):
    incs = _toolkit_include_dirs()
    if incs is None:
        pytest.skip("no CUDA toolkit headers (cuda.h, nvrtc.h, nvJitLink.h) to compare against: "
                    "set CUDA_HOME to a toolkit")
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++ compiler (c++, g++, clang++ or $CXX) to build the check")
    exe = tmp_path / "check_cuda_api"
    cmd = [cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", f"-I{ROOT / 'src'}",
           *[f"-I{d}" for d in incs], str(ROOT / "tests/cxx/check_cuda_api.cpp"), "-o", str(exe)]
    built = subprocess.run(cmd, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ours agree" in ran.stdout
