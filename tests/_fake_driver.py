"""The fake CUDA driver (tests/cxx/fake_cuda_driver.cpp): build it, run code under it.

The fake stands in for libcuda through ``NUMBACUDA_UFUNC_LIBCUDA``: the CUDA backend's
own host code (pool, staging, streams, events, launches, interop) then runs without a GPU,
kernels do nothing, and every driver call is counted. The backend is chosen once per
process, so code runs in a subprocess (``FakeDriverLibrary.run``); there
``FakeDriver()`` reads and resets the counts through ctypes (``ctypes.CDLL`` of the same
path returns the library the engine loaded).

From a test, take the session fixture ``fake_driver`` (tests/conftest.py)::

    def test_x(fake_driver):
        out = fake_driver.run('''
            drv = FakeDriver()
            ...
            print(json.dumps(drv.traffic(lambda: f(x, out=y))))
        ''')
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "cxx" / "fake_cuda_driver.cpp"
ENGINE_HEADERS = HERE.parent / "src"

ALLOCATIONS = ("cuMemAlloc", "cuMemAllocAsync", "cuMemAllocManaged", "cuMemHostAlloc")
FREES = ("cuMemFree", "cuMemFreeAsync", "cuMemFreeHost")
COPIES = ("cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemcpyDtoDAsync")
SYNCS = ("cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize")
LAUNCHES = ("cuLaunchKernel", "cuLaunchCooperativeKernel")


def compiler() -> str | None:
    """The host C++ compiler: $CXX where set (None if it does not exist), else c++, g++, clang++."""
    if os.environ.get("CXX"):
        return shutil.which(os.environ["CXX"])
    return shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")


def build(directory: Path) -> Path:
    """Compile the fake into ``directory``. Raises LookupError without a host compiler (the
    tests skip) and RuntimeError when it does not compile (the tests fail: driver.h and
    the fake disagree)."""
    cxx = compiler()
    if cxx is None:
        raise LookupError("no host C++ compiler (set CXX) to build the fake CUDA driver")
    target = Path(directory) / "libfake_cuda.so"
    cmd = [cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-fPIC", "-shared",
           "-fvisibility=hidden", f"-I{ENGINE_HEADERS}", str(SOURCE), "-o", str(target)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"building the fake CUDA driver failed: {' '.join(cmd)}\n{done.stderr}")
    return target


class FakeDriver:
    """The loaded fake's counters, inside the process the engine runs in."""

    def __init__(self, path: str | None = None):
        self._lib = ctypes.CDLL(path or os.environ["NUMBACUDA_UFUNC_LIBCUDA"])
        self._lib.nu_fake_driver_calls.restype = ctypes.c_longlong
        self._lib.nu_fake_driver_calls.argtypes = [ctypes.c_char_p]
        self._lib.nu_fake_driver_names.restype = ctypes.c_char_p
        self._lib.nu_fake_driver_live_blocks.restype = ctypes.c_longlong
        self.names = self._lib.nu_fake_driver_names().decode().split()

    def reset(self) -> None:
        self._lib.nu_fake_driver_reset()

    def calls(self) -> Counter:
        """Calls per entry point since the last reset (only those made)."""
        counts = {n: self._lib.nu_fake_driver_calls(n.encode()) for n in self.names}
        return Counter({n: c for n, c in counts.items() if c})

    def traffic(self, fn, repeat: int = 1) -> dict:
        """Driver calls of ``repeat`` calls of ``fn``, per call, with sums by kind."""
        self.reset()
        for _ in range(repeat):
            fn()
        return summarize(self.calls(), repeat)

    def live_blocks(self) -> int:
        return self._lib.nu_fake_driver_live_blocks()

    def last_launch(self) -> tuple:
        out = (ctypes.c_uint * 7)()
        self._lib.nu_fake_driver_last_launch(out)
        return tuple(out[:3]), tuple(out[3:6]), out[6]


def summarize(calls: Counter, repeat: int = 1) -> dict:
    def per_call(names):
        return sum(calls[n] for n in names) / repeat

    return {"calls": {n: c / repeat for n, c in sorted(calls.items())},
            "launches": per_call(LAUNCHES), "allocations": per_call(ALLOCATIONS),
            "frees": per_call(FREES), "copies": per_call(COPIES), "syncs": per_call(SYNCS)}


_PRELUDE = f"""\
import json, sys
sys.path.insert(0, {str(HERE)!r})
from _fake_driver import FakeDriver
"""


class FakeDriverLibrary:
    """A built fake: ``run`` executes code on the CUDA backend over it in a subprocess."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def environment(self) -> dict:
        env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBACUDA_UFUNC_ENABLE_CUDASIM", "NUMBACUDA_UFUNC_NVRTC_CHECK")}
        env["NUMBACUDA_UFUNC_LIBCUDA"] = str(self.path)
        return env

    def run(self, code: str, timeout: float = 600) -> str:
        """Run ``code`` (FakeDriver and json imported) and return its stdout."""
        script = _PRELUDE + textwrap.dedent(code)
        done = subprocess.run([sys.executable, "-c", script], env=self.environment(),
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise AssertionError(f"the code under the fake driver failed (rc {done.returncode}):\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done.stdout

    def run_json(self, code: str, timeout: float = 600):
        """``run`` whose last line of output is JSON."""
        return json.loads(self.run(code, timeout).strip().splitlines()[-1])
