"""Numba's compile entry points and kernel attributes (issue 16, items 2 and 3):
cuda.compile_ptx for kernels, cuda.compile with ptx/ltoir/cubin output,
compile_for_current_device, overloads/definition(s)/specialize/py_func/inspect_types/
max_cooperative_grid_blocks/extensions, and the nopython option."""

import io
import re
import warnings

import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int32, void
from numbacuda_ufunc.errors import CompileError
from numbacuda_ufunc.toolchain import _sass


def axpy(r, a, x, y):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = a * x[i] + y[i]


def scaled(x, k):
    return x * k + 1.0


def test_compile_ptx_compiles_kernels_by_default():
    ptx, resty = cuda.compile_ptx(axpy, (float32[::1], float32, float32[::1], float32[::1]))
    assert resty is void
    assert re.search(r"\.visible \.entry \w*axpy", ptx) and ".target sm_" in ptx
    with pytest.raises(CompileError, match=r"must not return a value \(got float64\)"):
        cuda.compile_ptx(scaled, (float64, float64))
    ptx, resty = cuda.compile_ptx(scaled, float64(float64, float64), device=True, cc=(8, 0))
    assert resty == float64 and ".visible .func" in ptx and "sm_80" in ptx


def test_compile_outputs():
    ptx, resty = cuda.compile(scaled, float32(float32, float32))  # device=True, abi="c"
    assert resty == float32
    assert re.search(r"\.visible \.func\s+\(\.param \.b32 \w+\) scaled\(", ptx)
    ptx2, _ = cuda.compile(scaled, "f8(f8, f8)", abi_info={"abi_name": "my_scaled"})
    assert "my_scaled(" in ptx2
    cubin, _ = cuda.compile(scaled, "f8(f8, f8)", output="cubin", cc=(9, 0))
    assert isinstance(cubin, bytes) and cubin[:4] == b"\x7fELF"
    ltoir, _ = cuda.compile(scaled, "f8(f8, f8)", output="ltoir", cc=(9, 0))
    assert isinstance(ltoir, bytes) and len(ltoir) > 64 and ltoir[:4] != b"\x7fELF"
    kcubin, kres = cuda.compile(axpy, "void(f4[:], f4, f4[:], f4[:])", device=False,
                                output="cubin", cc=(9, 0))
    assert kres is void and kcubin[:4] == b"\x7fELF"
    ptx3, _ = cuda.compile_for_current_device(scaled, "f4(f4, f4)")
    assert ".target sm_" in ptx3
    ptx4, _ = cuda.compile_ptx_for_current_device(axpy, "void(f8[:], f8, f8[:], f8[:])")
    assert ".entry" in ptx4
    # Numba's error (NotImplementedError), naming what is supported
    with pytest.raises(NotImplementedError, match="Unsupported output type: llvm .*output "
                                                  "must be one of ptx, ltoir, cubin"):
        cuda.compile(scaled, "f8(f8, f8)", output="llvm")


def test_kernel_attributes():
    k = cuda.jit(axpy)
    assert k.py_func is axpy and k.overloads == {} and k.definitions == []
    with pytest.raises(TypeError, match="has 0 specializations"):
        k.definition  # noqa: B018
    r = np.full(5, np.nan, np.float32)
    x, y = np.arange(5, dtype=np.float32), np.ones(5, np.float32)
    k[1, 8](r, np.float32(2), x, y)
    np.testing.assert_array_equal(r, 2 * x + y)
    (types,) = k.overloads
    assert types[0].dtype == float32 and k.definition.py_name == "axpy"
    s = k.specialize(r, np.float32(2), x, y)
    assert len(s.overloads) == 1 and s.py_func is axpy
    buf = io.StringIO()
    k.inspect_types(file=buf)
    text = buf.getvalue()
    assert "axpy" in text and "r[i] = a * x[i] + y[i]" in text
    assert re.search(r"#   i = python int", text) and "#   r = float32[:]" in text


def test_max_cooperative_grid_blocks():
    @cuda.jit
    def gsync(a):
        cuda.cg.this_grid().sync()
        a[0] = 1

    n = gsync.max_cooperative_grid_blocks(128)
    assert n >= 1
    assert gsync.max_cooperative_grid_blocks((16, 8)) == n
    assert gsync.max_cooperative_grid_blocks(4096) == 0
    with pytest.raises(ValueError, match="blockdim"):
        gsync.max_cooperative_grid_blocks(0)


def test_overloads_are_numba_compiled_kernel_objects():
    @cuda.jit
    def gsync(a):
        cuda.cg.this_grid().sync()
        a[0] = 1

    a = np.zeros(1, np.int64)
    gsync[1, 1](a)
    k = cuda.jit(axpy)
    k[1, 8](np.zeros(4, np.float32), np.float32(1), np.ones(4, np.float32), np.ones(4, np.float32))
    (g_ov,) = gsync.overloads.values()
    (k_ov,) = k.overloads.values()
    # Numba's meaning of `cooperative`: launched cooperatively (it synchronises the grid).
    assert g_ov.cooperative is True and k_ov.cooperative is False
    assert g_ov.max_cooperative_grid_blocks(128) == gsync.max_cooperative_grid_blocks(128) >= 1
    # Fields of the translated kernel read through; queries agree with the kernel's own.
    assert k_ov.py_name == "axpy" and k_ov.argument_types == k.signatures[0]
    ptx = k_ov.inspect_asm((9, 0))
    assert re.search(r"\.visible \.entry \w*axpy", ptx) and ".target sm_90" in ptx
    assert k.definition.name == k_ov.name and "axpy" in repr(k.definition)
    with pytest.raises(AttributeError):
        k_ov.no_such_field  # noqa: B018


def test_this_grid_without_sync_is_not_cooperative():
    # Only grid.sync() makes a launch cooperative (its grid then must fit on the device at
    # once); Numba marks any kernel that calls this_grid() so.
    @cuda.jit
    def grid_only(a):
        cuda.cg.this_grid()
        a[0] = 1.0

    a = np.full(1, np.nan)
    grid_only[4096, 1024](a)  # more blocks than a cooperative launch could hold
    assert a[0] == 1.0
    (ov,) = grid_only.overloads.values()
    assert ov.cooperative is False


def test_codelibrary_lists_the_linked_files(tmp_path):
    cu = tmp_path / "one.cu"
    cu.write_text('extern "C" __device__ int nu_one(int* r) { *r = 1; return 0; }\n')
    one = cuda.declare_device("nu_one", "int32()", link=str(cu))

    @cuda.jit
    def plain(a):
        a[0] = cuda.grid(1)

    @cuda.jit
    def linked(a):
        a[0] = one()

    source = cuda.CUSource('extern "C" __device__ int nu_two(int* r) { *r = 2; return 0; }',
                           name="two.cu")
    two = cuda.declare_device("nu_two", "int32()", link=[source])

    @cuda.jit
    def linked_both(a):
        a[0] = one() + two()

    a = np.zeros(1, np.int32)
    for k in (plain, linked, linked_both):
        k[1, 1](a)
    assert a[0] == 3
    assert next(iter(plain.overloads.values()))._codelibrary._linking_files == []
    assert next(iter(linked.overloads.values()))._codelibrary._linking_files == [str(cu)]
    files = next(iter(linked_both.overloads.values()))._codelibrary._linking_files
    assert files == [str(cu), "two.cu"]


@pytest.mark.skipif(_sass.find_tool("cuobjdump") is None,
                    reason="no cuobjdump (CUDA toolkit, or pip install nvidia-cuda-cuobjdump)")
def test_overload_resource_queries_agree_with_the_kernel():
    k = cuda.jit(axpy)
    k[1, 8](np.zeros(4, np.float32), np.float32(1), np.ones(4, np.float32), np.ones(4, np.float32))
    (k_ov,) = k.overloads.values()
    sig = k.signatures[0]
    assert k_ov.regs_per_thread == k.get_regs_per_thread(sig) > 0
    assert k_ov.local_mem_per_thread == k.get_local_mem_per_thread(sig) == 0
    assert k_ov.shared_mem_per_block == 0 and k_ov.const_mem_size == 0
    assert "FFMA" in k_ov.inspect_sass() or "FADD" in k_ov.inspect_sass()


def test_compile_adds_a_specialization():
    k = cuda.jit(axpy)
    ov = k.compile("void(f8[::1], f8, f8[::1], f8[::1])")
    assert ov.argument_types == k.signatures[0] and len(k.overloads) == 1
    assert k.compile((float64[::1], float64, float64[::1], float64[::1])).name == ov.name
    r = np.zeros(3)
    k[1, 4](r, 2.0, np.arange(3.0), np.ones(3))  # the compiled specialization runs
    r32 = np.zeros(3, np.float32)
    k[1, 4](r32, np.float32(2), np.arange(3, dtype=np.float32), np.ones(3, np.float32))
    assert len(k.overloads) == 2  # still lazy for other types
    np.testing.assert_array_equal(r, [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(r32, [1.0, 3.0, 5.0])
    eager = cuda.jit("void(f4[:], f4, f4[:], f4[:])")(axpy)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        eager[1, 4](r, 2.0, np.arange(3.0), np.ones(3))
    eager.compile("void(f8[:], f8, f8[:], f8[:])")
    eager[1, 4](r, 1.0, np.arange(3.0), np.ones(3))  # accepted from now on
    np.testing.assert_array_equal(r, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="kernels return nothing"):
        k.compile("f8(f8[:], f8, f8[:], f8[:])")


def test_nopython_option():
    with pytest.raises(NotImplementedError, match="nopython=False"):
        cuda.jit(nopython=False)(axpy)
    with pytest.warns(RuntimeWarning, match="nopython kwarg for cuda target is redundant"):
        k = cuda.jit(nopython=True)(axpy)
    assert k.py_func is axpy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cuda.jit(axpy)


def test_numba_debug_options_are_accepted():
    # _dbg_optnone (Numba's LLVM optnone for debugging) changes nothing in a -G build.
    @cuda.jit("int64(boolean, boolean)", debug=True, opt=False, _dbg_optnone=True, device=True)
    def choice(c1, c2):
        return 1 if c1 and c2 else 2

    @cuda.jit(debug=True, opt=False, _dbg_optnone=True)
    def k(r, a, b):
        r[0] = choice(a, b)

    r = np.zeros(1, np.int64)
    for a, b in ((True, True), (True, False), (False, True)):
        k[1, 1](r, a, b)
        assert r[0] == (1 if a and b else 2)
    with pytest.raises(TypeError, match="unexpected keyword argument '_dbg_nothing'"):
        cuda.jit(_dbg_nothing=True)(axpy)


def test_inspect_asm_is_keyed_like_overloads():
    # Numba's inspect_asm(): argument-type tuples -> PTX, looked up with the signature's
    # types (test_optimization indexes it so).
    sig = (float64[::1],)
    k = cuda.jit(sig)(_store_one)
    ptx = k.inspect_asm()
    assert list(ptx) == list(k.overloads) and ".entry" in ptx[sig]
    assert "__local_depot" not in ptx[sig]  # optimised: no stack frame
    assert k.inspect_lto_ptx()[sig] == ptx[sig]
    lazy = cuda.jit(_store_one)
    lazy[1, 1](np.zeros(2))
    assert lazy.inspect_asm()[sig] == lazy.inspect_asm(sig)  # the launch's float64[:] serves


def _store_one(x):
    x[0] = 1


class _Doubler:
    """A Numba-style extension: scales float64 host arrays by 2 on the way in and
    records the write-back."""

    def __init__(self):
        self.written = []

    def prepare_args(self, ty, val, stream=0, retr=None):
        if isinstance(val, np.ndarray) and val.dtype == np.float64:
            staged = val * 2
            retr.append(lambda: self.written.append(staged.copy()))
            return ty, staged
        return ty, val


def test_extensions_prepare_arguments():
    ext = _Doubler()

    @cuda.jit(extensions=[ext])
    def inc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    a = np.arange(4, dtype=np.float64)
    inc[1, 4](a)
    assert inc.extensions == [ext]
    np.testing.assert_array_equal(ext.written[0], a * 2 + 1)
    np.testing.assert_array_equal(a, np.arange(4))  # the original was never passed


def _add_to_first(a, v):
    cuda.atomic.add(a, 0, v)


def test_tuple_signature_with_int32_scalar():
    k = cuda.jit((int32[:], int32))(_add_to_first)
    a = np.zeros(1, np.int32)
    k[2, 32](a, 3)
    assert a[0] == 192


# ---- device functions: declared signatures, misuse, functions from user modules --------

def test_device_function_signature_casts_arguments_and_result():
    @cuda.jit("int32(int32, int32)", device=True)
    def pack(r, g):
        return ((r & 0xFF) << 8) | (g & 0xFF)

    @cuda.jit("float64(float64)", device=True)
    def half(x):
        return x / 2

    @cuda.jit
    def caller(out, f, big):
        out[0] = pack(f[0], f[1])  # float32 -> int32, as Numba's dispatcher converts
        out[1] = pack(big[0], big[1])  # int64 -> int32 wraps
        out[2] = half(big[0])  # int64 -> float64

    f = np.array([1.9, -2.5], np.float32)
    big = np.array([2**40 + 0x1234, -1], np.int64)
    out = np.full(3, -7, np.int64)
    caller[1, 1](out, f, big)

    def pack_np(r, g):
        r, g = np.int32(r), np.int32(g)
        return ((r & 0xFF) << 8) | (g & 0xFF)

    with np.errstate(over="ignore"):
        expected = [pack_np(np.float32(1.9).astype(np.int32), np.float32(-2.5).astype(np.int32)),
                    pack_np(big[0].astype(np.int32), big[1].astype(np.int32)),
                    np.int64(np.float64(big[0]) / 2)]
    np.testing.assert_array_equal(out, expected)
    assert ".entry" in next(iter(caller.inspect_ptx().values()))

    @cuda.jit
    def wrong(out, x):
        out[0] = half(x)  # an array for a float64 parameter

    with pytest.raises(CompileError, match=r"Invalid use of type\(device function 'half'\)"):
        wrong[1, 1](np.zeros(1), np.zeros(2))


def test_device_function_misuse_and_cpu_only_jit():
    from numbacuda_ufunc import jit

    @cuda.jit(device=True)
    def dev(x):
        return x + 1

    with pytest.raises(RuntimeError, match="Cannot compile a device function as a kernel"):
        dev[1, 1](1)
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        dev.inspect_sass((int32,))

    @jit("(i4, i4)")  # Numba: a CPU-only signature; refused on the device
    def add(a, b):
        return a + b

    assert add(2, 3) == 5  # runs as Python on the host

    @cuda.jit
    def k(ary):
        ary[0] = add(ary[0], 1)

    with pytest.raises(CompileError, match="Untyped global name 'add'.*cpu function on device"):
        k[1, 1](np.zeros(1))


def test_functions_and_constants_from_user_modules():
    import types as pytypes

    mymod = pytypes.ModuleType("mymod")
    exec("SCALE = 3\ndef add(a, b):\n    return a + b * SCALE\n", mymod.__dict__)

    @cuda.jit
    def k(ary):
        i = cuda.grid(1)
        if i < ary.size:
            ary[i] = mymod.add(ary[i], mymod.SCALE)

    a = np.arange(10.0)
    a[:3] = [np.nan, -0.0, np.inf]
    expected = a + 9
    k[1, 16](a)
    np.testing.assert_array_equal(a, expected)

    @cuda.jit
    def missing(ary):
        ary[0] = mymod.nothing(1)

    with pytest.raises(CompileError, match="module 'mymod' has no attribute 'nothing'"):
        missing[1, 1](np.zeros(1))


def test_device_function_compile_device_and_inspect_asm():
    @cuda.jit(device=True)
    def add(x, y):
        return x + y

    ov = add.compile_device((int32, int32))
    assert ov.signature.args == (int32, int32) and ov.signature.return_type == int32  # NumPy's rule
    assert "add" in ov.fndesc.mangled_name
    ptx = add.inspect_asm((int32, int32), cc=(9, 0))
    assert ov.fndesc.mangled_name in ptx and ".target sm_90" in ptx
    assert list(add.overloads) == [(int32, int32)] and add.signatures == []
    assert add(2, 3) == 5  # still the Python function on the host
    with pytest.raises(RuntimeError, match="Cannot inspect SASS of a device function"):
        add.inspect_sass((int32, int32))
    for obj in (add, cuda.jit(axpy)):
        with pytest.raises(NotImplementedError, match="no LLVM IR.*NVRTC"):
            obj.inspect_llvm()


@pytest.mark.parametrize("name,fast,approx", [
    ("cos", "cos.approx.ftz.f32", "cos.approx"),
    ("sin", "sin.approx.ftz.f32", "sin.approx"),
    ("log2", "lg2.approx.ftz.f32", "lg2.approx"),
])
def test_fastmath_device_function_ptx_uses_approximate_instructions(name, fast, approx):
    import math

    op = getattr(math, name)

    def dev(x):
        return op(x)

    fast_ptx = cuda.jit((float32,), device=True, fastmath=True)(dev).inspect_asm((float32,))
    prec_ptx = cuda.jit((float32,), device=True)(dev).inspect_asm((float32,))
    assert fast in fast_ptx and approx not in prec_ptx


def _local_ours(x):
    loc = cuda.local.array(10, dtype=int32)
    loc[0] = x[0]
    x[0] = loc[0]


def _local_numpy(x):
    loc = cuda.local.array(10, dtype=np.int32)
    loc[0] = x[0]
    x[0] = loc[0]


def _local_string(x):
    loc = cuda.local.array(10, dtype="int32")
    loc[0] = x[0]
    x[0] = loc[0]


@pytest.mark.parametrize("fn", [_local_ours, _local_numpy, _local_string])
def test_type_annotation_gives_the_types_of_locals(fn):
    f = cuda.jit(void(int32[::1]))(fn)
    typemap = next(iter(f.overloads.values()))._type_annotation.typemap
    assert typemap["loc"].dtype == int32 and typemap["loc"].ndim == 1
    assert typemap["x"] == int32[::1]
