"""Numba's ``cuda.jit(lineinfo=True)`` and ``cuda.jit(launch_bounds=...)`` for launched
kernels: the PTX NVRTC builds for sm_90 (no GPU needed) maps lines to this Python file and
carries the bounds; results are unchanged; the bounds limit launches on every backend."""

import pickle
import re
import warnings

import numpy as np
import pytest

from numbacuda_ufunc import cuda
from numbacuda_ufunc.cuda.cudadrv.driver import CudaAPIError
from numbacuda_ufunc.errors import NumbaInvalidConfigWarning

SIG = "void(float64[:], float64[:])"


def scaled(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * 2.5 - 1.0


def helper(v):
    return v * v + 1.0


@cuda.jit(device=True)
def dev_helper(v):
    return helper(v)


def calls_device(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = dev_helper(x[i])


def _locs(ptx):
    files = dict(re.findall(r'\.file\s+(\d+)\s+"([^"]*)"', ptx))
    lines = [(files.get(f, ""), int(n)) for f, n in re.findall(r"\.loc\s+(\d+)\s+(\d+)\s+\d+", ptx)]
    return files, lines


def test_lineinfo_maps_the_ptx_to_this_file_and_its_lines():
    k = cuda.jit(SIG, lineinfo=True)(scaled)
    ptx = k.inspect_asm(SIG)
    files, lines = _locs(ptx)
    ours = [n for f, n in lines if f.endswith("test_kernel_lineinfo_bounds.py")]
    first = scaled.__code__.co_firstlineno
    assert ours, files
    # The body's lines (the def line for the entry's own code), and nothing outside it.
    assert {first + 1, first + 3} <= set(ours) <= set(range(first, first + 4)), ours
    assert ".debug_info" not in ptx  # line information only, not full debug information
    # No #line marker leaks: lines past the Python function are the unit's own again.
    assert "nu: end of python lines" not in k.inspect_cuda(SIG)


def test_without_lineinfo_no_python_lines_and_the_same_code():
    plain = cuda.jit(SIG)(scaled).inspect_asm(SIG)
    files, _ = _locs(plain)
    assert not any(f.endswith(".py") for f in files.values())
    lined = cuda.jit(SIG, lineinfo=True)(scaled).inspect_asm(SIG)
    strip = re.compile(r"^\s*(\.loc|\.file|//).*$|\.section\s+\.debug_\w+\s*\{[^}]*\}", re.M)
    body = lambda ptx: [ln.strip() for ln in strip.sub("", ptx).splitlines()  # noqa: E731
                        if ln.strip() and not ln.strip().startswith(("$L__", "}", "{"))]
    ops = lambda ptx: [ln for ln in body(ptx) if not ln.startswith((".b8", ".b32", ".b64"))]  # noqa: E731
    assert len(ops(plain)) > 10
    assert [o for o in ops(lined) if "nu_scaled" not in o] == \
        [o for o in ops(plain) if "nu_scaled" not in o]  # code generation unaffected


def test_lineinfo_reaches_device_functions():
    k = cuda.jit(SIG, lineinfo=True)(calls_device)
    _, lines = _locs(k.inspect_asm(SIG))
    assert helper.__code__.co_firstlineno + 1 in {n for f, n in lines if f.endswith(".py")}


@pytest.mark.parametrize("lineinfo", [False, True])
def test_results_are_those_of_the_python_function(lineinfo):
    k = cuda.jit(lineinfo=lineinfo, launch_bounds=128)(scaled)
    x = np.array([0.0, -0.0, 1.5, -3.25, np.inf, -np.inf, np.nan, 1e308] * 40)
    out = np.zeros_like(x)
    k[(x.size + 127) // 128, 128](x, out)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, x * 2.5 - 1.0)


@pytest.mark.parametrize("bounds, text", [
    (96, [".maxntid 96, 1, 1"]),
    ((256, 3), [".maxntid 256, 1, 1", ".minnctapersm 3"]),
])
def test_launch_bounds_are_in_the_ptx(bounds, text):
    ptx = cuda.jit(SIG, launch_bounds=bounds)(scaled).inspect_asm(SIG)
    for t in text:
        assert t in ptx
    assert ".maxntid" not in cuda.jit(SIG)(scaled).inspect_asm(SIG)


def test_launch_beyond_the_bounds_is_refused_naming_them():
    k = cuda.jit(launch_bounds=64)(scaled)
    x = np.ones(256)
    with pytest.raises(ValueError, match=r"128 threads per block .* more than the 64 .*launch_bounds") as err:
        k[2, 128](x, np.zeros_like(x))
    # Numba's launch fails in the driver: the error is also the CudaAPIError it raises
    assert isinstance(err.value, CudaAPIError)
    assert (err.value.name, err.value.call) == ("CUDA_ERROR_INVALID_VALUE", "cuLaunchKernel")
    assert str(err.value).endswith("(CUDA_ERROR_INVALID_VALUE)")
    out = np.zeros_like(x)
    k[4, 64](x, out)
    np.testing.assert_array_equal(out, x * 2.5 - 1.0)


@pytest.mark.parametrize("bad", [0, -1, (1, 2, 3, 4), (), "128", (128, 1.5), True])
def test_bad_launch_bounds_are_a_value_error(bad):
    with pytest.raises(ValueError, match=r"cuda\.jit\('scaled'\).*[Ll]aunch.bounds"):
        cuda.jit(launch_bounds=bad)(scaled)


def test_debug_with_lineinfo_warns_as_numba_does():
    with pytest.warns(NumbaInvalidConfigWarning, match="debug and lineinfo are mutually exclusive"):
        cuda.jit(debug=True, lineinfo=True, opt=False)(scaled)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.jit(lineinfo=True)(scaled)


def test_options_survive_pickling_and_specialize():
    k = cuda.jit(lineinfo=True, launch_bounds=(64, 2))(scaled)
    rebuilt = pickle.loads(pickle.dumps(k))
    rebuilt.compile(SIG)
    for other in (rebuilt, k.specialize(np.ones(4), np.ones(4))):
        assert other.lineinfo and other.launch_bounds == (64, 2)
        (ptx,) = other.inspect_asm().values()
        assert ".maxntid 64, 1, 1" in ptx and ".minnctapersm 2" in ptx
        assert any(f.endswith(".py") for f in _locs(ptx)[0].values())
