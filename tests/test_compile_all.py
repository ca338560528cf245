"""Numba's compile entry points beyond the basics (issue 16): ``cuda.compile_all`` and the
options ``cuda.compile``/``compile_ptx`` share with it — ``debug``/``lineinfo`` (line
information naming the Python file and lines), ``launch_bounds``, ``cc`` with an
architecture suffix, fastmath instructions, the C ABI's names, Numba's errors — and
``cuda.cudadrv.nvrtc``. Everything is compiled by NVRTC for sm_90 (no GPU needed); the
outputs of ``compile_all`` are linked by nvJitLink to prove they fit together."""

import inspect
import math
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

from numbacuda_ufunc import (
    _core,
    cuda,
    float32,
    float64,
    int16,
    int32,
    int64,
    types,
    uint32,
    void,
)
from numbacuda_ufunc.compiler.translate import line_directive
from numbacuda_ufunc.cuda.cudadrv import nvrtc
from numbacuda_ufunc.cuda.cudadrv.error import CCSupportError
from numbacuda_ufunc.errors import CompileError, LinkerError, NumbaInvalidConfigWarning

LTOIR_MAGIC = 0x7F4E43ED  # the first 4 bytes of NVVM's LTO IR (little endian)
THIS_FILE = __file__


def add(x, y):
    return x + y


def axpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def empty():
    pass


def first_sum(x, y):
    return x[0] + y[0]


def _line_of(fn, text):
    """The line number in this file of the line of ``fn`` holding ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _file_index(ptx, path):
    """The number PTX's ``.file`` gives ``path`` (NVRTC makes a relative name absolute
    against the working directory, and escapes quotes and backslashes)."""
    files = {}
    for n, name in re.findall(r'\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"', ptx):
        files[re.sub(r"\\(.)", r"\1", name)] = int(n)
    hits = [n for name, n in files.items()
            if name == path or not path.startswith("/") and name.endswith("/" + path)]
    assert len(hits) == 1, (path, files)
    return hits[0]


def _loc_lines(ptx, index):
    return {int(line) for line in re.findall(rf"\.loc\s+{index}\s+(\d+)\s", ptx)}


# ---- compile_all: forms and results --------------------------------------------------------

def test_compile_all_kernel_ptx():
    codes, resty = cuda.compile_all(axpy, (float32[::1], float32, float32[::1], float32[::1]),
                                    device=False, abi="numba", output="ptx")
    assert resty is void and isinstance(codes, list) and len(codes) == 1
    (ptx,) = codes
    assert re.search(r"\.visible \.entry \w*axpy\w*\(", ptx)
    assert ".visible .func" not in ptx and "func_retval" not in ptx and ".target sm_" in ptx


@pytest.mark.parametrize("sig, resty, bits", [
    ((float32, float32), float32, 32),
    (int32(int32, int32), int32, 32),
    (int16(int16, int16), int16, 32),  # PTX widens sub-word results to .b32
    ("uint32(uint32, uint32)", uint32, 32),
    (int64(int64, int64), int64, 64),
    (float64(float32, float64), float64, 64),
])
def test_compile_all_device_c_abi(sig, resty, bits):
    (ptx,), rt = cuda.compile_all(add, sig, device=True, abi="c", output="ptx")
    assert rt == resty
    assert re.search(rf"\.visible\s+\.func\s+\(\.param\s+\.b{bits}\s+func_retval0\)\s+add\(",
                     ptx)
    assert ".visible .entry" not in ptx


def test_compile_all_defaults_ltoir_and_compile_outputs_match_magic():
    codes, rt = cuda.compile_all(add, int32(int32, int32))  # device=True, abi="c", ltoir
    assert rt == int32 and len(codes) == 1
    assert int.from_bytes(codes[0][:4], "little") == LTOIR_MAGIC
    code, rt = cuda.compile(add, int32(int32, int32), output="ltoir")
    assert int.from_bytes(code[:4], "little") == LTOIR_MAGIC and rt == int32
    # the kernel form too, and an LTO IR that nvJitLink turns into a CUBIN
    (kl,), krt = cuda.compile_all(axpy, "void(f8[:], f8, f8[:], f8[:])", device=False)
    assert krt is void and int.from_bytes(kl[:4], "little") == LTOIR_MAGIC
    cubin = _core.nvjitlink_link([("axpy", "ltoir", kl)], 90, True)
    assert cubin[:4] == b"\x7fELF"


def test_compile_all_numba_abi_device_function():
    (ptx,), rt = cuda.compile_all(add, (float64, float64), device=True, abi="numba",
                                  output="ptx")
    assert rt == float64 and re.search(r"\.visible \.func .*nu_add_f8f8_\w+_export", ptx)


# ---- compile_all with the code a function links ----------------------------------------

ADD_CU = r"""
// a function of Numba's ABI: the result through a pointer, a status returned
extern "C" __device__ int add_from_cu(unsigned int* ret, unsigned int x, unsigned int y) {
    *ret = x + y;
    return 0;
}
"""


def _declared(tmp_path, kind="cu"):
    cu = tmp_path / "adder.cu"
    cu.write_text(ADD_CU)
    if kind == "cu":
        link = str(cu)
    elif kind == "ptx":
        ptx, _ = nvrtc.compile(ADD_CU, "adder.cu", (9, 0))
        link = str(tmp_path / "adder.ptx")
        (tmp_path / "adder.ptx").write_text(ptx)
    else:  # an in-memory CUDA C++ source
        link = cuda.CUSource(ADD_CU, name="adder_mem.cu")
    return cuda.declare_device("add_from_cu", "uint32(uint32, uint32)", link=[link]), link


def test_compile_all_compiles_linked_cu_files(tmp_path):
    adder, path = _declared(tmp_path)

    def k(z, x, y):
        z[0] = adder(x, y)

    sig = (uint32[::1], uint32, uint32)
    (ptx, linked), rt = cuda.compile_all(k, sig, device=False, abi="numba", output="ptx",
                                         lineinfo=True)
    assert rt is void and isinstance(linked, cuda.PTXSource) and linked.kind == "ptx"
    text = linked.data.decode()
    assert re.search(r"\.visible \.func\s+\(\.param \.b32 func_retval0\) add_from_cu\(", text)
    assert f'"{path}"' in text  # its line information names the .cu file
    assert re.search(r"call\.uni .*add_from_cu|add_from_cu,", ptx)  # the kernel calls it
    # LTO IR: both parts are LTO IR, and nvJitLink links them into one CUBIN (the call
    # resolves: without the second part it would not)
    (kl, cl), _ = cuda.compile_all(k, sig, device=False, abi="numba")
    assert isinstance(cl, cuda.LTOIR) and int.from_bytes(cl.data[:4], "little") == LTOIR_MAGIC
    cubin = _core.nvjitlink_link([("k", "ltoir", kl), (cl.name, "ltoir", cl.data)], 90, True)
    assert cubin[:4] == b"\x7fELF"
    with pytest.raises(LinkerError, match="add_from_cu"):
        _core.nvjitlink_link([("k", "ltoir", kl)], 90, True)


def test_compile_all_returns_other_kinds_as_they_are(tmp_path):
    adder, path = _declared(tmp_path, "ptx")

    def k(z, x, y):
        z[0] = adder(x, y)

    (ptx, linked), _ = cuda.compile_all(k, (uint32[::1], uint32, uint32), device=False,
                                        abi="numba", output="ptx")
    assert isinstance(linked, cuda.PTXSource) and linked.kind == "ptx"
    with open(path, "rb") as fh:
        assert linked.data == fh.read()


def test_compile_all_in_memory_source_and_kernel_link(tmp_path):
    adder, src = _declared(tmp_path, "mem")

    def k(z, x, y):
        z[0] = adder(x, y)

    codes, _ = cuda.compile_all(k, (uint32[::1], uint32, uint32), device=False, abi="numba",
                                output="ptx")
    assert len(codes) == 2 and "add_from_cu" in codes[1].data.decode()
    # a kernel's own link= files come along too, each once
    extra = tmp_path / "extra.ptx"
    extra.write_text(codes[1].data.decode())
    jk = cuda.jit(link=[str(extra)])(k)
    codes2, _ = cuda.compile_all(jk, (uint32[::1], uint32, uint32), device=False,
                                 abi="numba", output="ptx")
    assert [type(c).__name__ for c in codes2] == ["str", "PTXSource", "PTXSource"]


# ---- Numba's errors --------------------------------------------------------------------

def test_errors_of_the_compile_functions():
    for fn in (cuda.compile, cuda.compile_all):
        with pytest.raises(NotImplementedError, match="Unsupported output type: illegal"):
            fn(add, int32(int32, int32), device=True, output="illegal")
        with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
            fn(add, (int32, int32), abi="c", device=False, output="ptx")
        with pytest.raises(NotImplementedError, match="Unsupported ABI: fastcall"):
            fn(add, (int32, int32), abi="fastcall", output="ptx")
        with pytest.raises(TypeError, match="must have void return type"):
            fn(first_sum, (uint32[::1], uint32[::1]), device=False, abi="numba",
               output="ptx")
        with pytest.raises(ValueError, match="Can only designate forced inlining in LTO-IR"):
            fn(add, (int32, int32), forceinline=True, output="ptx")
        with pytest.raises(ValueError, match="Cannot force-inline kernels"):
            fn(axpy, "void(f4[:], f4, f4[:], f4[:])", device=False, abi="numba",
               forceinline=True, output="ltoir")
    with pytest.raises(NotImplementedError, match="Unsupported output type: cubin"):
        cuda.compile_all(add, int32(int32, int32), output="cubin")  # as Numba: PTX or LTO IR
    with pytest.raises(NotImplementedError, match="The C ABI is not supported for kernels"):
        cuda.compile_ptx(add, (int32, int32), abi="c")
    with pytest.raises(TypeError, match="must have void return type"):
        cuda.compile_ptx(first_sum, (uint32[::1], uint32[::1]))
    with pytest.raises(TypeError, match=r"cc must be \(major, minor\)"):
        cuda.compile(add, (int32, int32), cc=(9, 0, "z"))
    with pytest.raises(TypeError, match=r"cc must be \(major, minor\)"):
        cuda.compile(add, (int32, int32), cc=(9,))
    with pytest.raises(CompileError, match="abi_name'] must be a C identifier"):
        cuda.compile(add, (int32, int32), abi_info={"abi_name": "not valid"})
    with pytest.raises(TypeError, match="abi_info takes only 'abi_name'"):
        cuda.compile(add, (int32, int32), abi="numba", abi_info={"abi_name": "f"})


def test_forceinline_ltoir_device_function():
    code, rt = cuda.compile(add, int32(int32, int32), output="ltoir", forceinline=True)
    assert rt == int32 and int.from_bytes(code[:4], "little") == LTOIR_MAGIC
    assert code != cuda.compile(add, int32(int32, int32), output="ltoir")[0]


def test_debug_with_opt_warns_as_numba():
    with pytest.warns(NumbaInvalidConfigWarning, match="debug=True with opt=True"):
        cuda.compile_ptx(empty, (), debug=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.compile_ptx(empty, (), debug=True, opt=False)


# ---- line information and debug information --------------------------------------------

def body_lines(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = math.sqrt(x[i]) * 2.0


@pytest.mark.parametrize("compile_function, kwargs", [
    (cuda.compile_ptx, {}),
    (cuda.compile_all, {"device": False, "abi": "numba", "output": "ptx"}),
])
def test_lineinfo_maps_ptx_to_python_lines(compile_function, kwargs):
    sig = (float32[::1], float32[::1])
    plain = compile_function(body_lines, sig, **kwargs)[0]
    plain = plain if isinstance(plain, str) else plain[0]
    assert THIS_FILE not in plain and ".loc" not in plain
    ptx = compile_function(body_lines, sig, lineinfo=True, **kwargs)[0]
    ptx = ptx if isinstance(ptx, str) else ptx[0]
    assert not re.search(r"\.section\s+\.debug_info", ptx)  # line numbers only
    index = _file_index(ptx, THIS_FILE)
    lines = _loc_lines(ptx, index)
    assert _line_of(body_lines, "r[i] = math.sqrt") in lines
    assert _line_of(body_lines, "if i < r.size") in lines
    # nothing maps to lines of this file outside the function
    first, last = _line_of(body_lines, "def body_lines"), _line_of(body_lines, "r[i] =")
    assert lines <= set(range(first, last + 1)), sorted(lines)


@pytest.mark.parametrize("device", [False, True])
def test_debug_info_for_empty_functions(device):
    kw = {"device": device, "abi": "c" if device else "numba"}
    for fn in (cuda.compile_ptx, cuda.compile_all):
        out = fn(empty, (), debug=True, opt=False, **kw, **(
            {"output": "ptx"} if fn is cuda.compile_all else {}))[0]
        ptx = out if isinstance(out, str) else out[0]
        assert re.search(r"\.section\s+\.debug_info", ptx)
        assert re.search(r'\.file.*test_compile_all\.py"', ptx)
    # an empty kernel's own code (its return) maps to its def line
    ptx, _ = cuda.compile_ptx(empty, (), lineinfo=True, device=device)
    assert _line_of(empty, "def empty") in _loc_lines(ptx, _file_index(ptx, THIS_FILE))


def test_lineinfo_of_functions_without_source_and_odd_file_names():
    # made by exec under a file name holding a quote and a backslash: the #line directive
    # escapes them, and NVRTC writes the name back in .file
    name = 'we"ird\\dir/kernel.py'
    ns = {"cuda": cuda}
    exec(compile("def k(r):\n    i = cuda.grid(1)\n    r[i] = i * 3\n", name, "exec"), ns)
    ptx, _ = cuda.compile_ptx(ns["k"], (int32[::1],), lineinfo=True)
    assert 'we\\"ird\\\\dir/kernel.py"' in ptx
    assert {2, 3} <= _loc_lines(ptx, _file_index(ptx, name))


def test_line_directive_escaping():
    assert line_directive("/a/b.py", 7) == '#line 7 "/a/b.py"'
    assert line_directive('a"b\\c', 1) == '#line 1 "a\\"b\\\\c"'
    assert line_directive("x\ny", 2) == '#line 2 "x\\012y"'


# ---- launch bounds, architectures, fastmath --------------------------------------------

@pytest.mark.parametrize("bounds, expect, absent", [
    (128, [r"\.maxntid\s+128, 1, 1"], [".minnctapersm", ".maxclusterrank"]),
    ((128,), [r"\.maxntid\s+128, 1, 1"], [".minnctapersm", ".maxclusterrank"]),
    ((256, 2), [r"\.maxntid\s+256, 1, 1", r"\.minnctapersm\s+2"], [".maxclusterrank"]),
    ((128, 2, 4), [r"\.maxntid\s+128, 1, 1", r"\.minnctapersm\s+2", r"\.maxclusterrank\s+4"],
     []),
])
def test_launch_bounds(bounds, expect, absent):
    ptx, rt = cuda.compile_ptx(empty, "void()", launch_bounds=bounds, cc=(9, 0))
    assert rt is void
    for pattern in expect:
        assert re.search(pattern, ptx), pattern
    for text in absent:
        assert text not in ptx
    plain, _ = cuda.compile_ptx(empty, "void()")
    assert ".maxntid" not in plain


def test_launch_bounds_errors():
    with pytest.raises(ValueError, match="Got 4 launch bounds:"):
        cuda.compile_ptx(empty, "void()", launch_bounds=(128, 2, 4, 8))
    with pytest.raises(ValueError, match="positive int"):
        cuda.compile_ptx(empty, "void()", launch_bounds=(0,))
    with pytest.raises(ValueError, match="apply to kernels"):
        cuda.compile(add, int32(int32, int32), launch_bounds=128)


def test_arch_specific_targets():
    ptx, _ = cuda.compile_ptx(lambda: None, (), cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx
    if nvrtc.get_version() >= (12, 9):
        ptx, _ = cuda.compile_ptx(lambda: None, (), cc=(10, 0, "f"))
        assert ".target sm_100f" in ptx
    cubin, _ = cuda.compile(add, int32(int32, int32), output="cubin", cc=(9, 0, "a"))
    assert cubin[:4] == b"\x7fELF"
    (ptx,), _ = cuda.compile_all(add, int32(int32, int32), output="ptx", cc=(9, 0, "a"))
    assert ".target sm_90a" in ptx


def fused(x, y, z, d):
    return math.sqrt((x * y + z) / d)


@pytest.mark.parametrize("compile_function", [cuda.compile_ptx, cuda.compile_all])
def test_fastmath_instructions(compile_function):
    kw = {"device": True} | ({"output": "ptx"} if compile_function is cuda.compile_all else {})
    out = compile_function(fused, (float32,) * 4, **kw)[0]
    ptx = out if isinstance(out, str) else out[0]
    # IEEE without contraction by default (README: "FMA contraction differs from numba-cuda")
    assert "div.rn.f32" in ptx and "sqrt.rn.f32" in ptx and "fma." not in ptx
    out = compile_function(fused, (float32,) * 4, fastmath=True, **kw)[0]
    ptx = out if isinstance(out, str) else out[0]
    for ins in ("fma.rn.ftz.f32", "div.approx.ftz.f32", "sqrt.approx.ftz.f32"):
        assert ins in ptx


# ---- the C ABI's names -----------------------------------------------------------------

def test_c_abi_names_follow_numba():
    ptx, _ = cuda.compile_ptx(lambda x: x, int32(int32), device=True, abi="c")
    assert re.search(r"func_retval0\)\s+_3clambda_3e\(", ptx)
    ptx, _ = cuda.compile_ptx(lambda x: x, int32(int32), device=True, abi="c",
                              abi_info={"abi_name": "blah"})
    assert re.search(r"func_retval0\)\s+blah\(", ptx)

    def outer():
        def café(x):
            return x + 1
        return café

    ptx, _ = cuda.compile(outer(), int32(int32))  # the last part of the qualified name
    assert re.search(r"func_retval0\)\s+caf_c3_a9\(", ptx)
    ptx, _ = cuda.compile(add, int32(int32, int32), abi_info={"abi_name": "_Z4funcii"})
    assert re.search(r"func_retval0\)\s+_Z4funcii\(", ptx)


def test_c_abi_boolean_and_complex_results():
    for op in ("==", "!=", "<", "<=", ">", ">="):
        ns = {}
        exec(f"def cmp(a, b):\n    return a {op} b\n", ns)
        ptx, rt = cuda.compile(ns["cmp"], (int32, int32))
        assert rt == types.boolean and ".visible .func" in ptx
    ptx, rt = cuda.compile(lambda z: z / 2, "complex128(complex128)")
    assert rt == types.complex128 and ".visible .func" in ptx


# ---- nvrtc ------------------------------------------------------------------------------

def test_nvrtc_module():
    version = nvrtc.get_version()
    assert isinstance(version, tuple) and version >= (12, 0)
    assert nvrtc._get_nvrtc_version() == version
    ccs = nvrtc.get_supported_ccs()
    assert ccs == sorted(ccs) and (9, 0) in ccs and nvrtc.get_lowest_supported_cc() == ccs[0]
    assert nvrtc.find_closest_arch((9, 0)) == (9, 0)
    assert nvrtc.find_closest_arch((9, 5)) == (9, 0)
    assert nvrtc.find_closest_arch((99, 0)) == ccs[-1]
    with pytest.raises(CCSupportError, match="is not supported"):
        nvrtc.find_closest_arch((1, 0))
    assert nvrtc.get_arch_option(9, 0, "a") == "compute_90a"
    with pytest.raises(ValueError, match="arch-specific"):
        nvrtc.get_arch_option(9, 5, "a")
    ptx, log = nvrtc.compile(ADD_CU, "adder.cu", (9, 0), lineinfo=True)
    assert "add_from_cu" in ptx and _file_index(ptx, "adder.cu") and log == ""
    lto, _ = nvrtc.compile(ADD_CU.encode(), "adder.cu", (9, 0), ltoir=True)
    assert int.from_bytes(lto[:4], "little") == LTOIR_MAGIC
    with pytest.raises(CompileError, match="adder_bad.cu"):
        nvrtc.compile("this is not C++", "adder_bad.cu", (9, 0))


# ---- translation details the compile tests met -----------------------------------------

FLAG = None


def test_none_globals_prune_if_branches():
    flag = None

    def k(b):
        b[0] = 1.0
        if flag:
            b[0] = 5.0
        if FLAG:
            b[0] = 7.0
        else:
            b[0] += 1.0

    a = np.full(1, np.nan, np.float32)
    cuda.jit("void(float32[::1])")(k)[1, 1](a)
    ref = np.full(1, np.nan, np.float32)
    k(ref)  # the Python function is the oracle
    np.testing.assert_array_equal(a, ref)
    cuda.compile_ptx(k, "void(float32[::1])")


def test_lambda_returning_none_is_a_void_function():
    ptx, rt = cuda.compile_ptx(lambda: None, ())
    assert rt is void and ".visible .entry" in ptx
    ptx, rt = cuda.compile(lambda: None, ())
    assert rt is void and re.search(r"\.visible \.func\s+_3clambda_3e\(", ptx)
    with pytest.raises(CompileError, match="never returns a value"):
        cuda.compile(lambda: None, "int32()")


@cuda.jit(device=True)
def square(x):
    return x * x


def plus_one(x):
    return square(x) + 1


def plus_two(x):
    return square(x) + 2


@pytest.mark.parametrize("output", ["ltoir", "ptx"])
def test_separately_compiled_functions_link_together(output):
    # Both call the same device function: only each exported function is visible, so the
    # two units link into one program (a shared helper exported twice would not).
    a, _ = cuda.compile(plus_one, int32(int32), output=output)
    b, _ = cuda.compile(plus_two, int32(int32), output=output)
    if output == "ptx":
        assert len(re.findall(r"\.visible \.func", a)) == 1
        a, b = a.encode(), b.encode()
    cubin = _core.nvjitlink_link([("a", output, a), ("b", output, b)], 90, output == "ltoir")
    assert cubin[:4] == b"\x7fELF"
    (k1,), _ = cuda.compile_all(axpy, "void(f8[:], f8, f8[:], f8[:])", device=False)
    (d1,), _ = cuda.compile_all(plus_one, int32(int32))
    assert _core.nvjitlink_link([("k", "ltoir", k1), ("d", "ltoir", d1)], 90, True)[:4] \
        == b"\x7fELF"


def sum_of_sines(x, y):
    s = 0.0
    for i in range(10):
        s += math.sin(x * i) * y
    return s


def test_opt_false_and_unknown_options():
    sig = float64(float64, float64)
    fast, _ = cuda.compile(sum_of_sines, sig, output="cubin")
    slow, _ = cuda.compile(sum_of_sines, sig, output="cubin", opt=False)
    assert slow[:4] == fast[:4] == b"\x7fELF" and len(slow) > len(fast)  # ptxas -O0
    # NVRTC has no NVVM level outside -G: the PTX is the same (README says so)
    assert cuda.compile(sum_of_sines, sig, opt=False)[0] == cuda.compile(sum_of_sines, sig)[0]
    with pytest.raises(TypeError, match="max_registers"):
        cuda.compile(sum_of_sines, sig, max_registers=32)
    with pytest.raises(TypeError, match="lto"):
        cuda.compile_ptx(sum_of_sines, sig, device=True, lto=True)


_AFTER_DEBUG_BUILD = r"""
import sys
from numbacuda_ufunc import _core, cuda, float64, reduce

@reduce
def add(a, b):
    return a + b

if sys.argv[1] == "debug-first":
    def f(x):
        return x + 1.0
    cuda.compile(f, float64(float64), debug=True, opt=False, output="cubin")
src = add.inspect_cuda("float64")
sys.stdout.buffer.write(_core.compile_cubin(src, (9, 0), False, _core.Reducer._nvrtc_extra()))
"""


@pytest.mark.skipif(not _core.cub_include_dir(), reason="no CUB headers (CUDA toolkit)")
def test_a_debug_build_does_not_change_later_builds_of_the_process(tmp_path):
    # NVRTC 13.0 carried an unoptimised -G build's code generation into every later build
    # of its process: a reduction then used 424 bytes of local memory per thread and called
    # its functions instead of inlining them. Such builds run in a child process.
    env = dict(os.environ, NUMBACUDA_UFUNC_DISABLE_CACHE="1")
    script = tmp_path / "after_debug.py"
    script.write_text(_AFTER_DEBUG_BUILD)
    clean, after = (subprocess.run([sys.executable, str(script), mode], env=env, check=True,
                                   capture_output=True).stdout
                    for mode in ("clean", "debug-first"))
    assert clean[:4] == b"\x7fELF" and after == clean
