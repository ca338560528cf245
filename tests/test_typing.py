"""The package ships ``py.typed`` and typed entry points: mypy, run on a small user
script, sees the real types of what the decorators return and flags misuse."""

import os
import pathlib
import subprocess
import sys
import sysconfig

import pytest

import numbacuda_ufunc

PACKAGE = pathlib.Path(numbacuda_ufunc.__file__).resolve().parent

USER_SCRIPT = '''
import numpy as np
import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda, guvectorize, reduce, vectorize


@vectorize(["float64(float64, float64)"], target="cpu")
def plus(a, b):
    return a + b


@vectorize
def lazy(a):
    return a


@guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def total(a, out):
    out[0] = a.sum()


@reduce
def add(a, b):
    return a + b


@cuda.jit
def kernel(x):
    x[0] = 1


@cuda.jit(device=True)
def helper(x):
    return x


@cuda.jit("void(float64[:])")
def typed_kernel(x):
    x[0] = 1


reveal_type(plus)
reveal_type(lazy)
reveal_type(total)
reveal_type(add)
reveal_type(kernel)
reveal_type(helper)
reveal_type(typed_kernel)
reveal_type(plus.nin)
reveal_type(total.signature)
reveal_type(plus.at(np.zeros(3), [0], 1.0))
reveal_type(nu.vectorize)
n: str = plus.nin
vectorize(["f8(f8)"], target=3)
'''


def test_py_typed_is_in_the_package():
    assert (PACKAGE / "py.typed").is_file()


def test_mypy_sees_real_types(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (pip install mypy)")
    script = tmp_path / "user_script.py"
    script.write_text(USER_SCRIPT)
    env = dict(os.environ)
    site = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
    if site not in PACKAGE.parents:
        # An editable install resolves imports with a meta path finder mypy does not run:
        # point mypy at the source tree (the installed wheel needs nothing: py.typed).
        env["MYPYPATH"] = str(PACKAGE.parent)
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), "--python-version",
         f"{sys.version_info.major}.{sys.version_info.minor}", str(script)],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    lines = out.stdout.splitlines()
    revealed = [ln.split("Revealed type is ", 1)[1].strip('"') for ln in lines
                if "Revealed type is" in ln]
    assert revealed[:7] == [
        "numbacuda_ufunc.ufuncs.ufunc.UFunc", "numbacuda_ufunc.ufuncs.ufunc.UFunc",
        "numbacuda_ufunc.ufuncs.gufunc.GUFunc", "numbacuda_ufunc.ufuncs.reduce.Reduce",
        "numbacuda_ufunc.kernels.kernel.Kernel",
        "numbacuda_ufunc.kernels.device_function.DeviceFunction",
        "numbacuda_ufunc.kernels.kernel.Kernel"], out.stdout + out.stderr
    assert revealed[7:10] == ["int", "str", "None"], out.stdout
    assert "def" in revealed[10] and "UFunc" in revealed[10]
    errors = [ln for ln in lines if ": error:" in ln]
    assert any("Incompatible types in assignment" in e and '"int"' in e for e in errors), lines
    assert any('No overload variant of "vectorize"' in e for e in errors), lines
    assert len(errors) == 2, lines
