"""Import and device discovery with and without a GPU, and `python -m numbacuda_ufunc`."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import HAVE_GPU

from numbacuda_ufunc import cuda
from numbacuda_ufunc.errors import CudaSupportError, NumbaCudaUfuncError


def run_python(code: str, emulate: bool):
    env = {k: v for k, v in os.environ.items() if k != "NUMBACUDA_UFUNC_ENABLE_CUDASIM"}
    if emulate:
        env["NUMBACUDA_UFUNC_ENABLE_CUDASIM"] = "1"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.skipif(HAVE_GPU, reason="checks the behaviour without a GPU")
def test_without_gpu_import_works_and_device_use_names_the_variable():
    code = (
        "import numbacuda_ufunc as nu\n"
        "from numbacuda_ufunc import cuda\n"
        "assert cuda.is_available() is False\n"
        "assert cuda.detect() is False\n"
        "try:\n"
        "    cuda.device_array(3)\n"
        "except nu.errors.CudaSupportError as e:\n"
        "    assert isinstance(e, RuntimeError)\n"
        "    print('raised:', e)\n"
    )
    out = run_python(code, emulate=False)
    assert out.returncode == 0, out.stderr
    assert "raised:" in out.stdout and "NUMBACUDA_UFUNC_ENABLE_CUDASIM" in out.stdout


def test_error_hierarchy():
    assert issubclass(CudaSupportError, NumbaCudaUfuncError)
    assert issubclass(CudaSupportError, RuntimeError)


def test_devices_are_described():
    assert cuda.is_available()
    dev = cuda.get_current_device()
    assert dev.id == 0 and isinstance(dev.name, str) and len(dev.compute_capability) == 2
    assert cuda.select_device(0).id == 0
    assert len(cuda.list_devices()) >= 1
    assert cuda.detect() is True
    cuda.synchronize()


def test_select_device_errors():
    with pytest.raises(ValueError, match="select_device"):
        cuda.select_device(99)
    with pytest.raises(TypeError, match="device_id must be an integer"):
        cuda.select_device("0")


def test_main_job_reports_and_round_trips():
    env = dict(os.environ)
    env.pop("NUMBACUDA_UFUNC_CUDA_LOW_OCCUPANCY_WARNINGS", None)  # as a user runs it
    out = subprocess.run([sys.executable, "-m", "numbacuda_ufunc"], capture_output=True,
                         text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr, out.stderr
    assert "numbacuda_ufunc" in out.stdout and "emulation" in out.stdout
    assert "NVRTC" in out.stdout and "CCCL headers" in out.stdout and "cache directory" in out.stdout
    assert "nvJitLink" in out.stdout and "CUDA headers" in out.stdout
    assert "round trip" in out.stdout and "correct" in out.stdout and "GB/s" in out.stdout
    assert "vectorize" in out.stdout and "guvectorize" in out.stdout and "reduce:" in out.stdout
    assert "WRONG" not in out.stdout


@pytest.mark.gpu
def test_real_device_round_trip_uses_staging_for_large_arrays():
    host = np.random.default_rng(3).random(3 * 2**20 + 17)  # several staging chunks
    dev = cuda.to_device(host)
    np.testing.assert_array_equal(dev.copy_to_host(), host)
    assert cuda.is_emulated() is False
