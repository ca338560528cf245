"""Benchmark configuration: pick the real GPU when one works, else the host backend.

Collected only when asked (``python -m pytest benchmarks --benchmark-only``); the default
``python -m pytest`` runs ``tests/`` alone. Files are ``bench_<topic>.py``, one group per
question (STYLE.md, "Benchmarks").

As in tests/conftest.py, a subprocess probes for a usable GPU without emulation; with none,
NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 is set so the emulated groups (dispatch on the host
backend, compile) still run, and the modules marked ``gpu`` skip with the probe's reason.
"""

import os
import subprocess
import sys

import pytest

_PROBE = ("import numbacuda_ufunc._core as c; ok = c.is_available(); "
          "print(int(ok)); print('' if ok else c.unavailable_reason())")


def _probe_gpu():
    env = {k: v for k, v in os.environ.items() if k != "NUMBACUDA_UFUNC_ENABLE_CUDASIM"}
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False, "the GPU probe timed out"
    lines = out.stdout.strip().splitlines()
    if lines and lines[0] == "1":
        return True, ""
    reason = " ".join(lines[1:]) or out.stderr.strip().splitlines()[-1:] or "probe failed"
    return False, str(reason)


if os.environ.get("NUMBACUDA_UFUNC_ENABLE_CUDASIM", "") in ("", "0"):
    HAVE_GPU, NO_GPU_REASON = _probe_gpu()
else:
    HAVE_GPU, NO_GPU_REASON = False, "NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 was set"
if not HAVE_GPU:
    os.environ["NUMBACUDA_UFUNC_ENABLE_CUDASIM"] = "1"

sys.path.insert(0, os.path.dirname(__file__))
import _harness  # noqa: E402  (after the backend choice)

_harness.HAVE_GPU = HAVE_GPU


def pytest_collect_file(file_path, parent):
    # bench_*.py given on the command line are already collected by pytest's python plugin
    if file_path.suffix == ".py" and file_path.name.startswith("bench_") and \
            not parent.session.isinitpath(file_path):
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_addoption(parser):
    group = parser.getgroup("numbacuda_ufunc benchmarks")
    group.addoption("--bench-time", type=float, default=0.25,
                    help="seconds of timed rounds per benchmark (at least 3 rounds)")
    group.addoption("--bench-max-log2", type=int, default=28,
                    help="largest problem size, as log2 of the element count "
                         "(cases above it are skipped)")
    group.addoption("--bench-compile-rounds", type=int, default=3,
                    help="fresh processes per compile benchmark")
    group.addoption("--bench-emulate-gpu-groups", action="store_true",
                    help="run the gpu groups on the host backend too (ours only): tests "
                         "the benchmark code without a GPU; the numbers mean nothing")


def pytest_configure(config):
    _harness.OPTIONS.update(time=config.getoption("--bench-time"),
                            max_log2=config.getoption("--bench-max-log2"),
                            compile_rounds=config.getoption("--bench-compile-rounds"))


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU or config.getoption("--bench-emulate-gpu-groups"):
        return
    skip = pytest.mark.skip(reason=f"needs a real CUDA GPU (host backend: {NO_GPU_REASON})")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config):
    return (f"numbacuda_ufunc benchmarks on: "
            f"{'CUDA GPU' if HAVE_GPU else 'host backend (emulation; not GPU numbers)'}")


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["numbacuda_ufunc"] = _harness.environment()


@pytest.fixture
def ncuda():
    """numba-cuda's ``cuda`` module, or a skip saying why it is not a peer here."""
    return _harness.numba_cuda()


@pytest.fixture
def cp():
    """CuPy, or a skip saying why it is not a peer here."""
    return _harness.cupy()


@pytest.fixture(autouse=True)
def _release_memory():
    yield
    _harness.release_memory()
