"""Test configuration: pick the real GPU when one works, else the host backend.

The backend is chosen once per process at first device use, so the choice is made here,
before anything touches the device: a subprocess probes for a usable GPU without
emulation; if there is none, NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 is set for the session.
Tests that need the real device carry ``@pytest.mark.gpu`` and are skipped otherwise;
tests of the emulation's own behaviour (its bounds checks, its fiber stacks) carry
``@pytest.mark.emulation`` and are skipped on a real GPU.
"""

import os
import subprocess
import sys

import pytest

_PROBE = "import numbacuda_ufunc._core as c; print(int(c.is_available()))"


def _real_gpu_available() -> bool:
    env = {k: v for k, v in os.environ.items() if k != "NUMBACUDA_UFUNC_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, timeout=120)
    return out.stdout.strip() == "1"


HAVE_GPU = os.environ.get("NUMBACUDA_UFUNC_ENABLE_CUDASIM", "") in ("", "0") and \
    _real_gpu_available()
if not HAVE_GPU:
    os.environ["NUMBACUDA_UFUNC_ENABLE_CUDASIM"] = "1"
# Numba's launch warnings (on by default) would flood the summary: the tests launch small
# grids on host arrays on purpose. tests/test_launch_warnings.py turns them on itself, as
# numba-cuda's CUDATestCase turns them off.
os.environ.setdefault("NUMBACUDA_UFUNC_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
os.environ.setdefault("NUMBACUDA_UFUNC_CUDA_WARN_ON_IMPLICIT_COPY", "0")


def _nvrtc_available() -> bool:
    from numbacuda_ufunc import _core

    try:
        _core.nvrtc_version()
    except RuntimeError:
        return False
    return True


# Every kernel a host build makes (emulated cuda-target kernels, cpu/parallel loops) is also
# compiled by NVRTC for sm_90, so the suite proves that what it runs on the host would
# compile for a GPU (two such kernels failed only there). About a third more suite time on
# a cold cache; set the variable to 0 to skip it.
if not HAVE_GPU and _nvrtc_available():
    os.environ.setdefault("NUMBACUDA_UFUNC_NVRTC_CHECK", "1")


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU:
        skip = pytest.mark.skip(reason="checks the host emulation itself (running on a real GPU)")
        marker = "emulation"
    else:
        skip = pytest.mark.skip(reason="needs a real CUDA GPU (running on the host backend)")
        marker = "gpu"
    for item in items:
        if marker in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config):
    return f"numbacuda_ufunc backend: {'CUDA GPU' if HAVE_GPU else 'host (emulation)'}"


def pytest_addoption(parser):
    # Differential fuzzer of the translator (tests/test_fuzz_translator.py).
    parser.addoption("--fuzz-count", type=int, default=2000,
                     help="number of random functions the translator fuzzer runs")
    parser.addoption("--fuzz-seed", type=int, default=20240601,
                     help="seed of the translator fuzzer")


# ---- scheduling under `-n auto --dist loadfile` (the README's command)
# pytest-xdist hands out whole files, largest test count first; a file of few but costly
# tests then starts last and runs alone while the other workers idle (the fuzzer: 10 tests,
# ~40% of a cold run's CPU, ran its last ~3 minutes alone on 2 cores). These files, the
# costliest in CPU seconds on a cold cache (measured, issue 15), start first instead;
# the rest keep xdist's order. Only the order changes: every test still runs.
HEAVY_FILES_FIRST = ("test_fuzz_translator.py", "test_kernel_reductions.py",
                     "test_kernel_cache.py", "test_kernels.py", "test_ffi.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    try:
        from xdist.scheduler import LoadFileScheduling
    except ImportError:
        return None

    class HeavyFirst(LoadFileScheduling):
        _reordered = False

        def _assign_work_unit(self, node):
            queue = getattr(self, "workqueue", None)
            if not self._reordered and hasattr(queue, "move_to_end"):
                self._reordered = True
                for name in reversed(HEAVY_FILES_FIRST):
                    for scope in [s for s in queue if s.rsplit("/", 1)[-1] == name]:
                        queue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return HeavyFirst(config, log)


@pytest.fixture
def ipc_capable_memory():
    """Device arrays from ``cuda.IpcCapableMemoryManager`` for the test's duration: on a real
    GPU the default stream-ordered pool memory refuses IPC handles (the host backend shares
    any memory, so only a GPU run catches a test that forgets this)."""
    from numbacuda_ufunc import cuda

    cuda.set_memory_manager(cuda.IpcCapableMemoryManager)
    try:
        yield
    finally:
        cuda.set_memory_manager(None)


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory):
    """The fake CUDA driver (tests/_fake_driver.py), built once per session: its ``run``
    executes code on the CUDA backend over the fake in a subprocess, which counts every
    driver call. Skipped where there is no host C++ compiler to build it."""
    import _fake_driver

    try:
        path = _fake_driver.build(tmp_path_factory.mktemp("fake_cuda"))
    except LookupError as e:
        pytest.skip(f"the fake CUDA driver cannot be built here: {e}")
    return _fake_driver.FakeDriverLibrary(path)
