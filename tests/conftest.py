"""Test configuration: pick the real GPU when one works, else the host backend.

The backend is chosen once per process at first device use, so the choice is made here,
before anything touches the device: a subprocess probes for a usable GPU without
emulation; if there is none, NUMBACUDA_UFUNC_ENABLE_CUDASIM=1 is set for the session.
Tests that need the real device carry ``@pytest.mark.gpu`` and are skipped otherwise.
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


def pytest_collection_modifyitems(config, items):
    if HAVE_GPU:
        return
    skip = pytest.mark.skip(reason="needs a real CUDA GPU (running on the host backend)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_report_header(config):
    return f"numbacuda_ufunc backend: {'CUDA GPU' if HAVE_GPU else 'host (emulation)'}"


def pytest_addoption(parser):
    # Differential fuzzer of the translator (tests/test_fuzz_translator.py).
    parser.addoption("--fuzz-count", type=int, default=2000,
                     help="number of random functions the translator fuzzer runs")
    parser.addoption("--fuzz-seed", type=int, default=20240601,
                     help="seed of the translator fuzzer")
