"""NVRTC builds in the C++ engine: PTX for a requested cc without a GPU, options, errors
with the full log, compile_ptx (Numba's form) and cuda.jit(device=True) functions."""

import math
import re

import pytest

from numbacuda_ufunc import _core, cuda, float32, float64, int32
from numbacuda_ufunc.cuda import Kernel, compile_ptx, jit
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.kernels.device_function import DeviceFunction

SMALL = '#include "nu_scalar.cuh"\nextern "C" __global__ void k(double* o) { o[0] = nu::floordiv(o[1], o[2]); }\n'


def test_nvrtc_is_found_and_versioned():
    assert _core.nvrtc_version()[0] >= 12
    assert "nvrtc" in _core.nvrtc_library_path()


def test_ptx_for_requested_cc():
    for cc in [(7, 5), (8, 0), (9, 0)]:
        ptx = _core.compile_ptx(SMALL, cc)
        assert f".target sm_{cc[0]}{cc[1]}" in ptx
        assert ".entry k(" in ptx


def test_cubin_is_an_elf_image():
    cubin = _core.compile_cubin(SMALL, (9, 0))
    assert cubin[:4] == b"\x7fELF"


def test_options_are_cpp17_and_fastmath_maps_to_use_fast_math():
    exact = _core.nvrtc_options((9, 0))
    fast = _core.nvrtc_options((9, 0), fastmath=True)
    assert "-std=c++17" in exact and "--fmad=false" in exact
    assert "--use_fast_math" in fast and "--fmad=false" not in fast
    assert "--gpu-architecture=compute_90" in exact
    assert "--gpu-architecture=sm_90" in _core.nvrtc_options((9, 0), cubin=True)


def test_fastmath_changes_the_code():
    src = ('#include "nu_scalar.cuh"\nextern "C" __global__ void k(float* o) '
           '{ o[0] = nu::sin(o[1]) / o[2]; }\n')
    exact = _core.compile_ptx(src, (9, 0))
    fast = _core.compile_ptx(src, (9, 0), fastmath=True)
    assert "sin.approx" in fast and "sin.approx" not in exact


def test_failed_build_carries_log_and_options():
    with pytest.raises(CompileError) as info:
        _core.compile_ptx('#include "nu_scalar.cuh"\n__device__ int f() { return undefined_x; }',
                          (9, 0))
    err = info.value
    assert "undefined_x" in err.log
    assert "options: -std=c++17" in str(err)
    assert "undefined_x" in str(err)


def test_failed_build_shows_source_when_debugging(monkeypatch):
    monkeypatch.setenv("NUMBACUDA_UFUNC_DEBUG_SOURCE", "1")
    with pytest.raises(CompileError, match=r"---- source ----\n.*marker_1234"):
        _core.compile_ptx("__device__ int marker_1234() { return nope; }", (9, 0))


def test_cub_headers_are_found():
    inc = _core.cub_include_dir()
    assert inc, "CCCL headers not found"


def dev_square(x):
    return x * x


@jit(device=True)
def dev_hyp(a, b):
    return math.sqrt(dev_square(a) + dev_square(b))


def uses_device_function(x, y):
    return dev_hyp(x, y) + 1


def test_compile_ptx_device_function_numba_form():
    ptx, rt = compile_ptx(uses_device_function, "f4(f4, f4)", device=True)
    assert rt == float32
    assert re.search(r"\.visible \.func .*nu_uses_device_function_f4f4_\w+_export", ptx)
    assert ".target sm_90" in ptx
    ptx64, rt64 = compile_ptx(uses_device_function, float64(float64, float64), cc=(8, 0),
                             device=True)
    assert rt64 == float64 and ".target sm_80" in ptx64


def test_compile_ptx_declared_return_type_casts():
    _, rt = compile_ptx(dev_square, int32(float64), device=True)
    assert rt == int32


def test_compile_ptx_kernel_must_not_return():
    with pytest.raises(CompileError, match=r"must not return a value \(got float64\)"):
        compile_ptx(dev_square, "(f8,)", device=False)


def test_compile_ptx_fastmath():
    def f(x):
        return math.sin(x)

    assert "sin.approx" in compile_ptx(f, "f4(f4)", fastmath=True, device=True)[0]
    assert "sin.approx" not in compile_ptx(f, "f4(f4)", device=True)[0]


def test_device_function_runs_python_and_inspects():
    assert dev_hyp(3.0, 4.0) == 5.0
    assert isinstance(dev_hyp, DeviceFunction) and dev_hyp.__name__ == "dev_hyp"
    src = dev_hyp.inspect_cuda("f8(f8, f8)")
    assert "nu_dev_square_f8_" in next(iter(src.values()))
    ptx = dev_hyp.inspect_ptx("f8(f8, f8)")
    assert ".visible .func" in next(iter(ptx.values()))


def test_jit_eager_signature_is_checked_at_decoration():
    with pytest.raises(CompileError, match="unsupported construct 'list'"):
        @jit("f8(f8)", device=True)
        def bad(x):
            return [x][0]


def test_jit_without_device_true_makes_a_kernel():
    # cuda.jit is one function: device=True gives a device function, else a kernel (it
    # refused device=False until @cuda.jit kernels existed).
    assert isinstance(jit(dev_square), Kernel)
    assert isinstance(jit(device=True)(dev_square), DeviceFunction)


def test_supported_archs_are_listed():
    archs = _core.nvrtc_supported_archs()
    assert archs == sorted(archs) and 90 in archs


@pytest.mark.parametrize("cc,archs,want", [
    (90, [75, 80, 86, 89, 90, 100, 120], ((9, 0), True)),     # known: its own CUBIN
    (87, [75, 80, 86, 89, 90], ((8, 6), True)),               # unknown minor: same major's CUBIN
    (121, [75, 80, 90, 100, 120], ((12, 0), True)),
    (130, [75, 80, 90, 100, 120, 121], ((12, 1), False)),     # newer than NVRTC: PTX, driver JIT
    (100, [75, 80, 86, 89, 90], ((9, 0), False)),
    (90, [], ((9, 0), True)),                                 # NVRTC too old to say
    (70, [75, 80], ((7, 0), True)),                           # too old for NVRTC: it names it
])
def test_device_target_clamps_to_this_nvrtc(cc, archs, want):
    assert _core.nvrtc_device_target(cc, archs) == want


def test_ptx_fallback_builds_for_the_newest_arch():
    newest = max(_core.nvrtc_supported_archs())
    (major, minor), cubin = _core.nvrtc_device_target(newest + 10, _core.nvrtc_supported_archs())
    assert not cubin and major * 10 + minor == newest
    ptx = _core.compile_ptx(SMALL, (major, minor))
    assert f".target sm_{newest}" in ptx


def test_generated_sources_without_cub_compile_with_minimal():
    """nvrtc_build adds -minimal (NVRTC 12.4+) to every source that does not include CUB,
    and retries without it if the build fails, which would hide a regression: here the
    option is given explicitly, so the retry has it too."""
    if _core.nvrtc_version() < (12, 4):
        pytest.skip("-minimal needs NVRTC 12.4+")
    from numbacuda_ufunc import guvectorize, vectorize

    uf = vectorize(["float64(float64, int32)"], target="cuda")(lambda a, b: math.hypot(a, b) // 2)
    gu = guvectorize(["void(float32[:], float32[:])"], "(n)->()", target="cuda")(_gu_sum)
    kernel = jit("void(float32[:], int32)")(_kernel_body)
    sources = [uf._variant_source(0, 0)[1], uf._variant_source(0, 1)[1],
               gu._loop_source(0, 1)[1], kernel._source(0)]
    for src in sources:
        assert "cub/" not in src
        assert _core.compile_cubin(src + "// minimal\n", (9, 0), options=["-minimal"])[:4] == b"\x7fELF"


def _gu_sum(a, out):
    s = 0.0
    for x in a:
        s += x
    out[0] = s


def _kernel_body(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * n
