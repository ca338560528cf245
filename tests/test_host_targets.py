"""target="cpu" and "parallel" run in any process: here in a subprocess without a GPU and
without NUMBACUDA_UFUNC_ENABLE_CUDASIM (the suite sets it, which once hid this), beside a
cuda-target ufunc that keeps its own backend choice."""

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import HAVE_GPU

SCRIPT = textwrap.dedent("""
    import numpy as np
    from numbacuda_ufunc import cuda, guvectorize, vectorize
    from numbacuda_ufunc.errors import CudaSupportError

    def add2(a, b):
        return a + b

    def gsum(x, res):
        acc = 0.0
        for i in range(x.shape[0]):
            acc += x[i]
        res[0] = acc

    x = np.linspace(-1, 3, 70000)
    for target in ("cpu", "parallel"):
        f = vectorize(["f8(f8, f8)", "i8(i8, i8)"], target=target)(add2)
        np.testing.assert_array_equal(f(x, 1.5), x + 1.5)
        assert f(2, 3) == 5
        np.testing.assert_allclose(f.reduce(x), np.add.reduce(x))
        np.testing.assert_allclose(f.accumulate(x), np.add.accumulate(x))
        out = np.full_like(x, -1.0)
        f(x, 1.0, where=x > 1, out=out)
        np.testing.assert_array_equal(out, np.add(x, 1.0, where=x > 1, out=np.full_like(x, -1.0)))
        a = np.zeros(4)
        f.at(a, [0, 0, 3], 1.0)
        np.testing.assert_array_equal(a, [2, 0, 0, 1])
        g = guvectorize(["void(f8[:], f8[:])"], "(n)->()", target=target)(gsum)
        np.testing.assert_allclose(g(x.reshape(7, -1)), x.reshape(7, -1).sum(axis=1))
        lazy = vectorize(target=target)(add2)
        assert lazy(np.int8(3), 4) == 7
    cuda_ufunc = vectorize(["f8(f8, f8)"])(add2)
    if cuda.is_available():
        np.testing.assert_array_equal(cuda_ufunc(x, 1.0), x + 1.0)
    else:
        try:
            cuda_ufunc(x, 1.0)
        except CudaSupportError as e:
            assert "NUMBACUDA_UFUNC_ENABLE_CUDASIM" in str(e)
        else:
            raise AssertionError("the cuda target ran without a GPU or emulation")
    np.testing.assert_array_equal(f(x, 2.0), x + 2.0)  # still fine afterwards
    print("ok")
""")


def _run(tmp_path, env):
    script = tmp_path / "host_targets.py"  # a file: the translator reads function sources
    script.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=600)


def test_host_targets_run_without_emulation_variable(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBACUDA_UFUNC_ENABLE_CUDASIM"}
    done = _run(tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")


@pytest.mark.skipif(HAVE_GPU, reason="emulation is only set when there is no GPU")
def test_host_targets_beside_emulated_cuda_target(tmp_path):
    done = _run(tmp_path, dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1"))
    assert done.returncode == 0, done.stderr
