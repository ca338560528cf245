"""Foreign device functions (Numba's "Calling foreign functions from Python kernels"):
``cuda.declare_device`` with Numba's ABI, ``cuda.jit(link=[...])``, ``CPointer`` arguments.

On the host backend the ``.cu`` files are compiled by the host compiler next to the kernel,
so the kernels run and are checked against NumPy. The GPU path (NVRTC to LTO IR, linked by
nvJitLink into one CUBIN for sm_90) is checked up to the CUBIN, which is inspected here;
running it needs a GPU (``@pytest.mark.gpu``)."""

import re
import struct

import numpy as np
import pytest

from numbacuda_ufunc import (
    _core,
    carray,
    cuda,
    farray,
    float32,
    float64,
    int32,
    types,
    vectorize,
)
from numbacuda_ufunc.errors import CompileError, LinkerError
from numbacuda_ufunc.types import CPointer, parse_signature, voidptr

RNG = np.random.default_rng(20261122)

# Numba's own documentation example, written out here: the ABI with a result pointer.
FUNCTIONS_CU = r"""
extern "C" __device__ int mul_f32_f32(float* return_value, float x, float y) {
    *return_value = x * y;
    return 0;
}

extern "C" __device__ int sum_reduce(float* return_value, float* array, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; ++i) sum += array[i];
    *return_value = sum;
    return 0;
}

// int64 arithmetic wraps; long long is the 64-bit type on both compilers.
extern "C" __device__ int mix_i64(long long* return_value, long long a, int b) {
    *return_value = a * 3 + b;
    return 0;
}

extern "C" __device__ int hypot_f64(double* return_value, double x, double y) {
    *return_value = sqrt(x * x + y * y);
    return 0;
}

// A void function: writes through a pointer argument; the result slot is unused.
extern "C" __device__ int store_scaled(int* unused, float* out, int i, float v) {
    out[i] = 2.0f * v;
    return 0;
}

// The C ABI (declare_device(..., abi="c")): the value is returned directly.
extern "C" __device__ float add_c(float x, float y) { return x + y; }
"""


@pytest.fixture
def functions_cu(tmp_path):
    path = tmp_path / "functions.cu"
    path.write_text(FUNCTIONS_CU)
    return str(path)


def _floats(n, dtype=np.float32):
    x = RNG.standard_normal(n).astype(dtype) * 100
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(dtype).max]
    return x


def _launch(kernel, n, *args):
    kernel[(n + 31) // 32, 32](*args)


# ---- running on the host backend, checked against NumPy --------------------------------

def test_ffi_mul_matches_numpy(functions_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit(link=[functions_cu])
    def multiply_vectors(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])

    x, y = _floats(200), _floats(200)[::-1].copy()
    r = np.full_like(x, 7.0)
    _launch(multiply_vectors, len(r), r, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, x * y)


def test_ffi_arguments_are_cast_to_declared_types(functions_cu):
    # float64 arguments to a float32 function are converted, as Numba's typing does.
    mul = cuda.declare_device("mul_f32_f32", float32(float32, float32))

    @cuda.jit(link=functions_cu)  # one path, not a list
    def k(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], 3)

    x = RNG.standard_normal(50)
    r = np.zeros(50)
    _launch(k, 50, r, x)
    np.testing.assert_array_equal(r, (x.astype(np.float32) * np.float32(3)).astype(np.float64))


def test_ffi_int64_and_float64(functions_cu):
    mix = cuda.declare_device("mix_i64", "int64(int64, int32)")
    hyp = cuda.declare_device("hypot_f64", "float64(float64, float64)")

    @cuda.jit(link=[functions_cu])
    def k(ri, a, b, rf, x, y):
        i = cuda.grid(1)
        if i < len(ri):
            ri[i] = mix(a[i], b[i])
            rf[i] = hyp(x[i], y[i])

    info = np.iinfo(np.int64)
    a = RNG.integers(info.min, info.max, 64, dtype=np.int64)
    a[:3] = [info.min, info.max, -1]
    b = RNG.integers(-2**31, 2**31 - 1, 64).astype(np.int32)
    x, y = _floats(64, np.float64), _floats(64, np.float64)
    ri = np.zeros(64, np.int64)
    rf = np.zeros(64)
    _launch(k, 64, ri, a, b, rf, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ri, a * np.int64(3) + b.astype(np.int64))
        np.testing.assert_allclose(rf, np.sqrt(x * x + y * y), rtol=1e-15)


def test_ffi_cpointer_sum_reduce(functions_cu):
    # Numba's "Passing pointers" example: an array argument declared CPointer(float32).
    sum_reduce = cuda.declare_device("sum_reduce",
                                     types.float32(types.CPointer(types.float32), types.int32))

    @cuda.jit(link=[functions_cu])
    def reduce_kernel(result, array):
        if cuda.grid(1) == 0:
            result[0] = sum_reduce(array, len(array))

    for n in (0, 1, 1000):
        a = RNG.standard_normal(n).astype(np.float32)
        result = np.full(1, np.nan, np.float32)
        reduce_kernel[1, 32](result, a)
        expected = np.cumsum(a, dtype=np.float32)[-1] if n else np.float32(0)  # in order
        assert result[0] == expected


def test_ffi_void_function_and_device_array(functions_cu):
    store = cuda.declare_device("store_scaled", "void(CPointer(float32), int32, float32)")

    @cuda.jit(link=[functions_cu])
    def k(out, x):
        i = cuda.grid(1)
        if i < len(x):
            store(out, i, x[i])

    x = _floats(100)
    out = cuda.to_device(np.full(100, 5.0, np.float32))
    _launch(k, 100, out, x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out.copy_to_host(), np.float32(2) * x)


def test_ffi_c_abi_and_declare_device_link(functions_cu):
    # declare_device(link=...): the file travels with the declaration, not the kernel.
    add = cuda.declare_device("add_c", "float32(float32, float32)", link=[functions_cu],
                              abi="c")

    @cuda.jit
    def k(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = add(x[i], y[i])

    x, y = _floats(40), _floats(40)
    r = np.zeros_like(x)
    _launch(k, 40, r, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, x + y)


def test_ffi_from_device_function_with_link(functions_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit(device=True, link=[functions_cu])
    def square_plus_one(v):
        return mul(v, v) + float32(1)

    @cuda.jit
    def k(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = square_plus_one(x[i])

    x = _floats(70)
    r = np.zeros_like(x)
    _launch(k, 70, r, x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, x * x + np.float32(1))


def test_ffi_cu_includes_its_own_headers(tmp_path):
    (tmp_path / "scale.h").write_text("#define NU_TEST_SCALE 4.0f\n")
    cu = tmp_path / "scaled.cu"
    cu.write_text('#include "scale.h"\nextern "C" __device__ int scaled(float* r, float x) '
                  '{ *r = NU_TEST_SCALE * x; return 0; }\n')
    scaled = cuda.declare_device("scaled", "float32(float32)")

    @cuda.jit(link=[str(cu)])
    def k(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = scaled(x[i])

    x = _floats(10)
    r = np.zeros_like(x)
    _launch(k, 10, r, x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, np.float32(4) * x)


def test_ffi_cu_includes_from_the_extra_search_paths(tmp_path, monkeypatch):
    # Numba's config.CUDA_NVRTC_EXTRA_SEARCH_PATHS: directories separated by ':', searched
    # for a linked .cu file's <...> includes, on the host backend and through NVRTC.
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "nu_mul.cuh").write_text("#define NU_TEST_MUL(a, b) ((a) * (b))\n")
    (two / "nu_add.cuh").write_text("#define NU_TEST_ADD(a, b) ((a) + (b))\n")
    cu = tmp_path / "src" / "axpy.cu"
    cu.parent.mkdir()
    cu.write_text("#include <nu_mul.cuh>\n#include <nu_add.cuh>\n"
                  'extern "C" __device__ int nu_axpy(float* r, float a, float x, float y) '
                  "{ *r = NU_TEST_ADD(NU_TEST_MUL(a, x), y); return 0; }\n")
    axpy = cuda.declare_device("nu_axpy", "float32(float32, float32, float32)", link=str(cu))

    def make():
        @cuda.jit
        def k(r, a, x, y):
            i = cuda.grid(1)
            if i < len(r):
                r[i] = axpy(a, x[i], y[i])
        return k

    x, y = _floats(10), _floats(10)
    r = np.full_like(x, np.nan)
    monkeypatch.setattr(cuda.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "")
    with pytest.raises(CompileError, match="nu_mul.cuh"):
        _launch(make(), 10, r, np.float32(3), x, y)
    monkeypatch.setattr(cuda.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", f"{one}:{two}")
    k = make()
    _launch(k, 10, r, np.float32(3), x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, np.float32(3) * x + y)
    assert _cuda_elf_arch(k._cubin(0, cc=(9, 0))) == 90  # NVRTC + nvJitLink find them too
    monkeypatch.setattr(cuda.config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", 3)
    with pytest.raises(TypeError, match="CUDA_NVRTC_EXTRA_SEARCH_PATHS must be a string"):
        make()[1, 1](r, np.float32(3), x, y)


def test_ffi_edited_file_recompiles(tmp_path):
    cu = tmp_path / "factor.cu"
    f = cuda.declare_device("factor_fn", "float32(float32)")

    def make():
        @cuda.jit(link=[str(cu)])
        def k(r, x):
            i = cuda.grid(1)
            if i < len(r):
                r[i] = f(x[i])
        return k

    x = _floats(20)
    results = []
    for factor in ("2.0f", "3.0f", "2.0f"):
        cu.write_text(f'extern "C" __device__ int factor_fn(float* r, float x) '
                      f'{{ *r = {factor} * x; return 0; }}\n')
        _core.reset_cache_stats()
        r = np.zeros_like(x)
        _launch(make(), 20, r, x)
        results.append((r, _core.cache_stats()))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(results[0][0], np.float32(2) * x)
        np.testing.assert_array_equal(results[1][0], np.float32(3) * x)
        np.testing.assert_array_equal(results[2][0], np.float32(2) * x)
    # The third build has the first one's contents: served by the cache, not compiled.
    assert results[2][1]["host_compiles"] == 0


# ---- types ------------------------------------------------------------------------------

def test_ffi_cpointer_types_and_signature_strings():
    assert CPointer(float32).name == "float32*"
    assert voidptr.name == "void*" and CPointer(None) == voidptr
    assert CPointer(float32) == types.CPointer(types.float32) != CPointer(int32)
    sig = parse_signature("int32(CPointer(float32), voidptr, int32)")
    assert sig.args == (CPointer(float32), voidptr, int32) and sig.return_type == int32
    with pytest.raises(TypeError, match="CPointer"):
        CPointer(float32[:])


def test_ffi_voidptr_takes_any_array(tmp_path):
    cu = tmp_path / "bytes.cu"
    cu.write_text('extern "C" __device__ int first_byte(int* r, void* p) '
                  '{ *r = ((unsigned char*)p)[0]; return 0; }\n')
    first = cuda.declare_device("first_byte", "int32(voidptr)")

    @cuda.jit(link=[str(cu)])
    def k(r, a, b):
        r[0] = first(a)
        r[1] = first(b)

    r = np.zeros(2, np.int32)
    k[1, 1](r, np.array([0x01020304], np.int32), np.array([7.5]))
    assert r.tolist() == [0x04, np.frombuffer(np.array([7.5]).tobytes(), np.uint8)[0]]


# ---- errors -----------------------------------------------------------------------------

def test_ffi_declaration_errors(functions_cu):
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", "(float32,)")
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", (float32,))
    arr = cuda.declare_device("f", "int32(float32[:])")  # declares, as in Numba ...
    assert arr.name == "f" and arr.sig.args == (float32[:],) and arr.sig.return_type == int32

    def call_arr(r, x):
        r[0] = arr(x)

    with pytest.raises(CompileError, match=r"CPointer\(float32\)"):  # ... a call is refused
        cuda.jit(link=[functions_cu])(call_arr)[1, 1](np.zeros(1, np.int32),
                                                      np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="C identifier"):
        cuda.declare_device("not a name", "float32(float32)")
    with pytest.raises(NotImplementedError, match="ABI"):
        cuda.declare_device("f", "float32(float32)", abi="fortran")
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
    with pytest.raises(TypeError, match="only from kernels"):
        mul(1.0, 2.0)


def test_ffi_missing_file_and_unknown_kind(tmp_path):
    missing = str(tmp_path / "nowhere.cu")
    with pytest.raises(FileNotFoundError, match="nowhere.cu"):
        @cuda.jit(link=[missing])
        def k(r):
            r[0] = 1
    with pytest.raises(FileNotFoundError, match="nowhere.cu"):
        cuda.declare_device("f", "float32(float32)", link=missing)
    odd = tmp_path / "code.cpp"
    odd.write_text("int x;\n")
    with pytest.raises(LinkerError, match=r"code.cpp.*unknown file kind '\.cpp'"):
        @cuda.jit(link=[str(odd)])
        def k2(r):
            r[0] = 1


def test_ffi_wrong_arity_and_argument_types(functions_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)")

    def arity(r, x):
        r[0] = mul(x[0])

    def not_an_array(r, x):
        r[0] = sum_reduce(x[0], 3)

    def wrong_dtype(r, x):
        r[0] = sum_reduce(x, 3)

    def array_for_scalar(r, x):
        r[0] = mul(x, x[0])

    cases = [(arity, np.float32, "'mul_f32_f32' takes 2 arguments .* \\(got 1\\)"),
             (not_an_array, np.float32, "argument 1 .*'sum_reduce' is a pointer"),
             (wrong_dtype, np.float64, "pointer to float32: pass an array of float32"),
             (array_for_scalar, np.float32, "argument 1 of foreign function 'mul_f32_f32' "
                                            "must be a float32")]
    for fn, dtype, message in cases:
        k = cuda.jit(link=[functions_cu])(fn)
        with pytest.raises(CompileError, match=message):
            k[1, 1](np.zeros(1, dtype), np.zeros(4, dtype))


def test_ffi_cu_compile_error_carries_log(tmp_path):
    cu = tmp_path / "broken.cu"
    cu.write_text('extern "C" __device__ int broken(float* r, float x) { *r = x +; return 0; }\n')
    broken = cuda.declare_device("broken", "float32(float32)")

    @cuda.jit(link=[str(cu)])
    def k(r):
        r[0] = broken(r[0])

    with pytest.raises(CompileError, match="broken.cu") as info:
        k[1, 1](np.zeros(1, np.float32))
    # g++ (the host backend) writes broken.cu:1, NVRTC broken.cu(1)
    assert "broken.cu:1" in info.value.log or "broken.cu(1)" in info.value.log


def test_ffi_undefined_function_is_an_error(functions_cu):
    nothere = cuda.declare_device("not_defined_anywhere", "float32(float32)")

    @cuda.jit(link=[functions_cu])
    def k(r):
        r[0] = nothere(r[0])

    # the host build's link, or nvJitLink on a GPU (a LinkerError, as in Numba)
    with pytest.raises((CompileError, LinkerError), match="not_defined_anywhere"):
        k[1, 1](np.zeros(1, np.float32))


def test_ffi_call_without_link_file():
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit
    def k(r):
        r[0] = mul(r[0], r[0])

    with pytest.raises(LinkerError, match="calls the foreign function mul_f32_f32 but links "
                                          "no file"):
        k[1, 1](np.zeros(1, np.float32))


def test_ffi_gpu_code_on_host_backend_needs_a_gpu(tmp_path):
    if not cuda.is_emulated():
        pytest.skip("the host backend's error")
    ptx = tmp_path / "mul.ptx"
    ptx.write_text(_core.compile_ptx(FUNCTIONS_CU, (9, 0), False, ["-rdc=true"]))
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit(link=[str(ptx)])
    def k(r):
        r[0] = mul(r[0], r[0])

    with pytest.raises(LinkerError, match=r"mul\.ptx' on the host backend.*only a GPU can link"):
        k[1, 1](np.zeros(1, np.float32))


def test_ffi_not_in_vectorize(functions_cu):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    def f(x):
        return mul(x, x)

    with pytest.raises(CompileError, match="linked into @cuda.jit kernels only"):
        vectorize(["float32(float32)"], target="cuda")(f)


def test_ffi_conflicting_declarations(functions_cu):
    a = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")
    b = cuda.declare_device("mul_f32_f32", "float64(float64, float64)")

    @cuda.jit(link=[functions_cu])
    def k(r):
        r[0] = a(r[0], r[0]) + b(r[0], r[0])

    with pytest.raises(CompileError, match="declared twice with different signatures"):
        k[1, 1](np.zeros(1, np.float32))


# ---- the GPU path up to the CUBIN: NVRTC -> LTO IR, nvJitLink -> sm_90 -----------------

def _elf_symbols(image: bytes) -> dict:
    """{name: (section index, type)} of an ELF64 image's symbol table."""
    assert image[:4] == b"\x7fELF" and image[4] == 2
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + k * shentsize)
                for k in range(shnum)]
    out = {}
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            name_off, info, _, shndx = struct.unpack_from("<IBBH", image, off)
            end = image.index(b"\0", strtab[4] + name_off)
            out[image[strtab[4] + name_off:end].decode()] = (shndx, info & 0xF)
    return out


def _cuda_elf_arch(image: bytes) -> int:
    machine, = struct.unpack_from("<H", image, 0x12)
    assert machine == 190  # EM_CUDA
    flags, = struct.unpack_from("<I", image, 0x30)
    return (flags >> 8) & 0xFF if image[8] >= 8 else flags & 0xFF  # by the ELF ABI version


def _mul_kernel(link):
    mul = cuda.declare_device("mul_f32_f32", "float32(float32, float32)")

    @cuda.jit("void(float32[::1], float32[::1], float32[::1])", link=link)
    def multiply_vectors(r, x, y):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = mul(x[i], y[i])

    return multiply_vectors


def test_ffi_nvjitlink_cu_into_cubin(functions_cu):
    k = _mul_kernel([functions_cu])
    cubin = k._cubin(0, cc=(9, 0))
    assert _cuda_elf_arch(cubin) == 90
    syms = _elf_symbols(cubin)
    entry = k._entry(0)
    assert syms[entry][0] != 0 and syms[entry][1] == 2  # defined, STT_FUNC
    undefined = [n for n, (shndx, kind) in syms.items() if n and shndx == 0 and kind == 2]
    assert undefined == []  # LTO resolved mul_f32_f32 (inlined into the kernel)
    assert _core.nvjitlink_version() >= (12, 0)


def test_ffi_nvjitlink_ptx_keeps_the_function(functions_cu, tmp_path):
    ptx = tmp_path / "functions.ptx"
    ptx.write_text(_core.compile_ptx(FUNCTIONS_CU, (9, 0), False, ["-rdc=true"]))
    k = _mul_kernel([str(ptx)])
    syms = _elf_symbols(k._cubin(0, cc=(9, 0)))
    # PTX is linked, not optimised together: the foreign function is its own defined symbol.
    assert syms["mul_f32_f32"][0] != 0 and syms["mul_f32_f32"][1] == 2
    assert syms[k._entry(0)][0] != 0


def test_ffi_nvjitlink_missing_symbol(functions_cu):
    nothere = cuda.declare_device("not_defined_anywhere", "float32(float32)")

    @cuda.jit("void(float32[::1])", link=[functions_cu])
    def k(r):
        r[0] = nothere(r[0])

    with pytest.raises(LinkerError, match="not_defined_anywhere") as info:
        k._cubin(0, cc=(9, 0))
    assert "not_defined_anywhere" in info.value.log


def test_ffi_nvrtc_error_in_cu_names_the_file(tmp_path):
    cu = tmp_path / "broken.cu"
    cu.write_text('extern "C" __device__ int mul_f32_f32(float* r, float x, float y) '
                  '{ *r = x * ; return 0; }\n')
    k = _mul_kernel([str(cu)])
    with pytest.raises(CompileError, match="broken.cu"):
        k._cubin(0, cc=(9, 0))


def test_ffi_inspect_ptx_declares_the_extern_function(functions_cu):
    k = _mul_kernel([functions_cu])
    ptx = next(iter(k.inspect_ptx().values()))
    assert ".extern .func" in ptx and "mul_f32_f32" in ptx
    src = next(iter(k.inspect_cuda().values()))
    assert 'extern "C" __device__ int mul_f32_f32(nu::f32*, nu::f32, nu::f32);' in src


def test_ffi_inspect_lto_ptx_is_the_linked_program(functions_cu):
    # Before linking, the kernel's PTX calls the foreign function; nvJitLink's LTO inlines
    # it, so the linked PTX defines no such call (Numba's inspect_lto_ptx).
    k = _mul_kernel([functions_cu])
    (sig,) = k.signatures
    plain = k.inspect_ptx(f"void({', '.join(t.name for t in sig)})")
    linked = k.inspect_lto_ptx(cc=(9, 0))
    (lto,) = linked.values()
    assert "call" in plain and "mul_f32_f32" in plain
    assert ".target sm_90" in lto and f".entry {k._entry(0)}(" in lto
    entry = lto[lto.index(f".entry {k._entry(0)}("):]
    assert "call" not in entry and re.search(r"\bmul(\.rn)?\.f32", entry)  # inlined


def test_ffi_nvjitlink_direct_inputs():
    # A PTX caller and an LTO IR callee, linked by nvJitLink (the unreferenced functions of
    # functions.cu are dropped, as a device link does).
    caller = ('extern "C" __device__ int sum_reduce(float*, float*, int);\n'
              'extern "C" __global__ void caller(float* r, float* a, int n) '
              '{ sum_reduce(r, a, n); }\n')
    ptx = _core.compile_ptx(caller, (9, 0), False, ["-rdc=true"])
    ltoir = _core.compile_cubin(FUNCTIONS_CU, (9, 0), False, ["-rdc=true", "-dlto"])
    cubin = _core.nvjitlink_link([("caller.ptx", "ptx", ptx.encode()),
                                  ("functions.ltoir", "ltoir", ltoir)], 90, True)
    syms = _elf_symbols(cubin)
    assert _cuda_elf_arch(cubin) == 90
    assert syms["caller"][0] != 0 and "mul_f32_f32" not in syms
    with pytest.raises(LinkerError, match="not_defined"):
        _core.nvjitlink_link([("caller.ptx", "ptx", ptx.replace("sum_reduce",
                                                                 "not_defined").encode())],
                             90, False)
    with pytest.raises(LinkerError, match="expected ptx"):
        _core.nvjitlink_link([("x.cu", "cu", b"")], 90, True)
    with pytest.raises(LinkerError, match="garbage.ptx"):
        _core.nvjitlink_link([("garbage.ptx", "ptx", b"this is not ptx")], 90, False)


@pytest.mark.gpu
def test_ffi_runs_on_gpu(functions_cu):
    k = _mul_kernel([functions_cu])
    x, y = _floats(300), _floats(300)
    r = np.zeros_like(x)
    _launch(k, 300, r, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, x * y)


def test_ffi_kernel_made_with_exec(functions_cu):
    # Functions without source (exec, python -c) go through the bytecode front end.
    ns = {"cuda": cuda,
          "mul": cuda.declare_device("mul_f32_f32", "float32(float32, float32)")}
    exec("def k(r, x):\n    i = cuda.grid(1)\n    if i < len(r):\n        r[i] = mul(x[i], x[i])\n",
         ns)
    k = cuda.jit(link=[functions_cu])(ns["k"])
    x = _floats(33)
    r = np.zeros_like(x)
    _launch(k, 33, r, x)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, x * x)


# ---- in-memory code: cuda.CUSource (Numba's LinkableCode) -------------------------------

TIMES2_CU = cuda.CUSource(r"""
extern "C" __device__ int times2(int* out, int a) { *out = a * 2; return 0; }
""")
TIMES4_CU = cuda.CUSource(r"""
extern "C" __device__ int times2(int* out, int a);
extern "C" __device__ int times4(int* out, int a) {
    int t;
    times2(&t, a);
    *out = t * 2;
    return 0;
}
""", name="times4.cu")


@pytest.mark.parametrize("container", [list, tuple, set])
def test_ffi_cusource_in_memory_and_calling_each_other(container):
    times4 = cuda.declare_device("times4", "int32(int32)", link=container([TIMES2_CU, TIMES4_CU]))
    times2 = cuda.declare_device("times2", "int32(int32)", link=TIMES2_CU)

    @cuda.jit
    def helper(x):
        return times2(x)

    @cuda.jit
    def k(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = times4(x[i]) + helper(x[i])

    info = np.iinfo(np.int32)
    x = RNG.integers(info.min, info.max, 50, dtype=np.int32)
    x[:3] = [info.min, info.max, 0]
    r = np.full_like(x, -7)
    _launch(k, 50, r, x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(r, x * np.int32(4) + x * np.int32(2))


def test_ffi_cusource_and_file_together_and_cubin(functions_cu):
    src = cuda.CUSource(FUNCTIONS_CU.encode())  # bytes are accepted as well as str
    k = _mul_kernel([src])
    x, y = _floats(40), _floats(40)
    r = np.zeros_like(x)
    _launch(k, 40, r, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(r, x * y)
    cubin = k._cubin(0, cc=(9, 0))  # NVRTC (LTO IR) + nvJitLink, named <unnamed-cu>
    assert _cuda_elf_arch(cubin) == 90 and k._entry(0) in _elf_symbols(cubin)
    both = _mul_kernel([functions_cu, TIMES2_CU])
    assert _cuda_elf_arch(both._cubin(0, cc=(9, 0))) == 90


@pytest.mark.parametrize("name", ["evil\n#error spliced\n.cu", "q\"uote\\s\r\t\x7f.cu"])
def test_ffi_cusource_name_is_never_source(name):
    # The name goes into a #line directive: a raw newline used to end it, and the rest of the
    # name became source lines (#error here; an __attribute__((constructor)) would have run at
    # dlopen). Escaped, it stays a name on the host build and in NVRTC's (issue 35).
    code = cuda.CUSource(TIMES2_CU.data, name=name)
    times2 = cuda.declare_device("times2", "int32(int32)", link=code)

    @cuda.jit
    def k(r, x):
        r[0] = times2(x[0])

    r = np.zeros(1, np.int32)
    _launch(k, 1, r, np.array([21], np.int32))
    assert r[0] == 42
    assert _cuda_elf_arch(k._cubin(0, cc=(9, 0))) == 90
    broken = cuda.CUSource('extern "C" __device__ int g(int* o) { return undefined_y; }',
                           name="bad\n#error spliced\n.cu")
    g = cuda.declare_device("g", "int32()", link=broken)

    @cuda.jit
    def kg(r):
        r[0] = g()

    with pytest.raises(CompileError, match="undefined_y") as info:
        kg[1, 1](np.zeros(1, np.int32))
    assert not re.search(r"error:? *#error", str(info.value))  # no directive ran


def test_ffi_cusource_errors_name_the_source(tmp_path):
    broken = cuda.CUSource('extern "C" __device__ int f(int* o) { return undefined_x; }',
                           name="broken_source.cu")
    f = cuda.declare_device("f", "int32()", link=broken)

    @cuda.jit
    def k(r):
        r[0] = f()

    with pytest.raises(CompileError, match="broken_source.cu"):
        k[1, 1](np.zeros(1, np.int32))
    with pytest.raises(TypeError, match="data must be str or bytes"):
        cuda.CUSource(42)
    with pytest.raises(NotImplementedError, match="setup_callback"):
        cuda.CUSource("", setup_callback=print)
    with pytest.raises(TypeError, match="use one of its kinds"):
        cuda.LinkableCode("")
    path = tmp_path / "code.ptx"
    path.write_text("// ptx")
    obj = cuda.LinkableCode.from_path_or_obj(str(path))
    assert isinstance(obj, cuda.PTXSource) and obj.data == b"// ptx" and obj.name == "code.ptx"
    assert cuda.LinkableCode.from_path_or_obj(obj) is obj
    ptx = cuda.declare_device("times2", "int32(int32)", link=cuda.PTXSource("// ptx"))

    @cuda.jit
    def needs_gpu(r):
        r[0] = ptx(1)

    # the host backend refuses PTX; nvJitLink on a GPU refuses this PTX's text
    with pytest.raises(LinkerError, match="only a GPU can link" if cuda.is_emulated() else
                       "cannot add"):
        needs_gpu[1, 1](np.zeros(1, np.int32))


# ---- pointers: CPointer kernel arguments, ffi.from_buffer, carray / farray --------------

def test_ffi_from_buffer_passes_array_pointers(functions_cu):
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    sum_reduce = cuda.declare_device("sum_reduce", "float32(CPointer(float32), int32)")
    store = cuda.declare_device("store_scaled", "void(CPointer(float32), int32, float32)")

    @cuda.jit(link=[functions_cu])
    def k(result, array, out):
        result[()] = sum_reduce(ffi.from_buffer(array), len(array))
        for i in range(len(out) - 1):
            store(ffi.from_buffer(out[1:]), i, array[i])  # a view: its own first element

    a = _floats(12)[6:].copy()  # finite values
    out = np.full(6, np.nan, np.float32)
    r = np.full((), np.nan, np.float32)
    k[1, 1](r, a, out)
    assert r[()] == np.cumsum(a, dtype=np.float32)[-1]
    np.testing.assert_array_equal(out[1:], 2 * a[:5])
    assert np.isnan(out[0])


def pointer_views(a_ptr, out):
    c = carray(a_ptr, (2, 3), dtype=float32)
    f = farray(a_ptr, (2, 3))
    for i in range(2):
        for j in range(3):
            out[i, j] = c[i, j]
            out[2 + i, j] = f[i, j]
    c[0, 0] += 1.5


def test_ffi_cpointer_kernel_argument_and_carray_farray():
    k = cuda.jit(types.void(CPointer(float32), float32[:, :]))(pointer_views)
    a = cuda.to_device(np.array([0.25, -1.0, np.inf, np.nan, -0.0, 7.0], np.float32))
    out = np.full((4, 3), -7.0, np.float32)
    host = a.copy_to_host()
    k[1, 1](int(a.gpu_data.device_pointer), out)
    np.testing.assert_array_equal(out[:2], host.reshape(2, 3))
    np.testing.assert_array_equal(out[2:], host.reshape(2, 3, order="F"))
    got = a.copy_to_host()
    assert got[0] == np.float32(0.25) + np.float32(1.5)
    np.testing.assert_array_equal(got[1:], host[1:])
    assert ".entry" in next(iter(k.inspect_ptx().values()))
    # In Python, on a ctypes pointer, as Numba's carray does.
    import ctypes
    buf = (ctypes.c_float * 6)(*range(6))
    view = carray(ctypes.cast(buf, ctypes.POINTER(ctypes.c_float)), (2, 3))
    np.testing.assert_array_equal(view, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert farray(ctypes.cast(buf, ctypes.c_void_p), 6, np.float32)[5] == 5.0


def test_ffi_pointer_errors():
    def bad_dtype(p, out):
        out[0] = carray(p, 1, dtype=float64)[0]

    def not_a_pointer(p, out):
        out[0] = carray(out, 1)[0]

    def void_needs_dtype(p, out):
        out[0] = carray(p, 1)[0]

    with pytest.raises(CompileError, match="mismatching dtype"):
        cuda.jit("void(CPointer(float32), float32[:])")(bad_dtype)
    with pytest.raises(CompileError, match="ptr must be a pointer"):
        cuda.jit("void(CPointer(float32), float32[:])")(not_a_pointer)
    with pytest.raises(CompileError, match="dtype is required"):
        cuda.jit(types.void(voidptr, float32[:]))(void_needs_dtype)
    def nothing(p, out):
        out[0] = 1

    good = cuda.jit("void(CPointer(float32), float32[:])")(nothing)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        good[1, 1](1.5, np.zeros(1, np.float32))  # an address is an integer
    with pytest.raises(TypeError, match="ctypes pointer"):
        carray(12345, 3, np.float32)


def test_ffi_cpointer_indexing_reads_and_writes():
    # Numba's documentation example (CPointer(uint8) argument, x[i] += 1) and a read.
    @cuda.jit(types.void(types.CPointer(types.uint8), types.uint32, types.CPointer(types.float64)))
    def add_one(x, n, y):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1  # wraps at 255 as uint8
            y[i] = y[i] * 2 + x[i]

    x = cuda.to_device(np.array([0, 1, 127, 128, 254, 255], np.uint8))
    y_host = np.array([0.5, -0.0, np.inf, np.nan, -3.0, 1e308])
    y = cuda.to_device(y_host)
    add_one[1, 32](x.__cuda_array_interface__["data"][0], 6, int(y.gpu_data.device_pointer))
    x_new = np.array([1, 2, 128, 129, 255, 0], np.uint8)
    np.testing.assert_array_equal(x.copy_to_host(), x_new)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(y.copy_to_host(), y_host * 2 + x_new)

    def void_index(p, out):
        out[0] = p[0]

    def two_indices(p, out):
        out[0] = p[0, 1]

    with pytest.raises(CompileError, match="void pointer cannot be indexed"):
        cuda.jit(types.void(voidptr, float32[:]))(void_index)
    with pytest.raises(CompileError, match="one integer index"):
        cuda.jit("void(CPointer(float32), float32[:])")(two_indices)


def test_ffi_cusource_equal_by_content_and_pickled_kernels_link_it_once():
    import pickle

    assert cuda.CUSource("int x;") == cuda.CUSource(b"int x;")
    assert cuda.CUSource("int x;") != cuda.PTXSource("int x;")
    assert len({cuda.CUSource("a"), cuda.CUSource("a"), cuda.CUSource("a", name="n")}) == 2
    times2 = cuda.declare_device("times2", "int32(int32)", link=TIMES2_CU)

    def make():  # a local kernel: pickled by value (cloudpickle), with copies of the source
        @cuda.jit(link=[TIMES2_CU])
        def k(r, x):
            r[0] = times2(x[0])
        return k

    k = pickle.loads(pickle.dumps(make()))
    r = np.zeros(1, np.int32)
    k[1, 1](r, np.array([-21], np.int32))
    assert r[0] == -42


POINTERS_CU = """
// Numba's ABI with a pointer result: the result slot is a T**.
extern "C" __device__ int shifted(int** r, int* p, int k) { *r = p + k; return 0; }
// The C ABI: the pointer itself.
extern "C" __device__ void* as_void(float* p) { return p; }
"""


def test_ffi_pointer_results(tmp_path):
    # numba-cuda's test_external_cooperative_func declares signature(CPointer(int32))
    cu = tmp_path / "pointers.cu"
    cu.write_text(POINTERS_CU)
    shifted = cuda.declare_device("shifted", CPointer(int32)(CPointer(int32), int32),
                                  link=[str(cu)])
    as_void = cuda.declare_device("as_void", "voidptr(CPointer(float32))", link=[str(cu)],
                                  abi="c")

    @cuda.jit
    def k(a, f):
        q = shifted(a, 2)
        q[0] = 7
        q[1] += 1
        v = as_void(f)
        g = carray(v, (2, 2), dtype=np.float32)
        g[1, 0] = 5.5

    a = np.zeros(5, np.int32)
    f = np.zeros(4, np.float32)
    k[1, 1](a, f)
    np.testing.assert_array_equal(a, [0, 0, 7, 1, 0])
    np.testing.assert_array_equal(f, [0, 0, 5.5, 0])


def test_device_functions_take_pointers():
    # numba-cuda's test_compile_jitted_subroutine: a device function of void* arguments
    def times2(x):
        return 2 * x

    dev = cuda.jit(device=True)(times2)

    def through_pointers(inp, outp):
        a = carray(inp, 1, dtype=np.int32)
        b = carray(outp, 1, dtype=np.int32)
        b[0] = dev(a[0])

    def scale(p, n, k):
        for i in range(n):
            p[i] = p[i] * k

    dev_scale = cuda.jit(device=True)(scale)
    ptx, resty = cuda.compile_ptx(through_pointers, (voidptr, voidptr), device=True)
    assert resty == types.void and ".visible .func" in ptx
    code, _ = cuda.compile(scale, (CPointer(float32), int32, float32), output="ltoir")
    assert isinstance(code, bytes) and code

    ffi = pytest.importorskip("cffi").FFI()

    @cuda.jit
    def k(a):
        dev_scale(ffi.from_buffer(a), a.size, 3)

    a = np.arange(4, dtype=np.float32)
    k[1, 1](a)
    np.testing.assert_array_equal(a, [0, 3, 6, 9])


# A linked file that includes cooperative_groups.h, which since CUDA 13 includes libcu++
# (<cuda/std/type_traits>) from include/cccl: nvcc searches there by itself, NVRTC only
# when told (numba-cuda's test_external_cooperative_func failed on it).
COOPERATIVE_CU = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __device__ int tile_rank(int* return_value) {
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    *return_value = (int)tile.thread_rank();
    return 0;
}
"""


def test_ffi_cu_with_cooperative_groups_compiles_for_the_gpu(tmp_path):
    from numbacuda_ufunc.toolchain._compile import compile_cuda_source

    cu = tmp_path / "tile_rank.cu"
    cu.write_text(COOPERATIVE_CU)
    # cuda.compile_all's link step (Python), to PTX and to LTO IR
    assert ".func  (.param .b32 func_retval0) tile_rank(" in \
        compile_cuda_source(COOPERATIVE_CU, str(cu), (9, 0), "ptx").replace("\t", " ")
    assert compile_cuda_source(COOPERATIVE_CU, str(cu), (9, 0), "ltoir")
    # a kernel's link step (the engine: NVRTC LTO IR + nvJitLink), as a GPU builds it
    rank = cuda.declare_device("tile_rank", "int32()")

    @cuda.jit("void(int32[::1])", link=[str(cu)])
    def ranks(out):
        out[cuda.grid(1)] = rank()

    assert _cuda_elf_arch(ranks._cubin(0, cc=(9, 0))) == 90
