"""Kernel inspection without a GPU: SASS and resource usage read from the CUBIN that NVRTC
builds (cuobjdump/nvdisasm), for @cuda.jit kernels (Numba's names) and for ufunc, gufunc
and reducer loops; and the code-generation properties it lets us hold: contiguous
elementwise kernels use 128-bit loads and stores, no generated kernel uses local memory
(register spills) for the common dtypes, reduce kernels leave room for several blocks per
multiprocessor."""

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda, float32, float64, guvectorize, reduce, vectorize
from numbacuda_ufunc.errors import CudaSupportError
from numbacuda_ufunc.toolchain import _sass

needs_cuobjdump = pytest.mark.skipif(
    _sass.find_tool("cuobjdump") is None,
    reason="no cuobjdump (CUDA toolkit, or pip install nvidia-cuda-cuobjdump)")

COMMON = ["float32", "float64", "int32", "int64", "uint8", "bool", "complex64", "complex128"]


SIG = "void(float32[:], float32[:])"


@cuda.jit(SIG)
def stencil(a, out):
    tile = cuda.shared.array(128, float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    if i < a.size:
        tile[t] = a[i]
    cuda.syncthreads()
    if i < a.size:
        out[i] = tile[t] + tile[(t + 1) % 128]


@needs_cuobjdump
def test_kernel_resources_and_sass_numba_names():
    sass = stencil.inspect_sass(SIG)
    entry = stencil._entry(0)
    assert f"Function : {entry}" in sass and "BAR.SYNC" in sass and "EXIT" in sass
    regs = stencil.get_regs_per_thread(SIG)
    assert isinstance(regs, int) and 4 <= regs <= 255
    # 128 float32, without the 1 KiB the driver reserves per block (which sm_90 CUBINs
    # lay out before the kernel's own arrays), as the driver's attribute counts it.
    assert stencil.get_shared_mem_per_block(SIG) == 512
    assert stencil.get_local_mem_per_thread(SIG) == 0
    assert stencil.get_const_mem_size(SIG) == 0
    # Without a signature: a kernel jitted with one signature is specialized, so the
    # value itself (Numba); SASS is a dict per specialization, keyed like overloads.
    assert stencil.get_regs_per_thread() == regs
    assert stencil.inspect_sass() == {tuple(stencil.overloads)[0]: sass}


@needs_cuobjdump
def test_kernel_local_memory_is_reported():
    @cuda.jit("void(float64[:], int64)")
    def uses_local(a, k):
        loc = cuda.local.array(64, float64)
        for j in range(64):
            loc[j] = a[j] * j
        a[0] = loc[k % 64]  # a runtime index: the array must live in local memory

    assert uses_local.get_local_mem_per_thread("void(float64[:], int64)") >= 64 * 8


@needs_cuobjdump
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)])
def test_shared_memory_leaves_out_the_driver_reservation(cc):
    # ptxas for sm_90 places shared data after a 1 KiB reserved window; sm_80 does not.
    # The kernel's own bytes are the same on both: a plain NVRTC kernel, no scaffolding.
    static = ('extern "C" __global__ void k(float* a) { __shared__ float s[100];'
              " int i = threadIdx.x; if (i == 0) for (int j = 0; j < 100; ++j) s[j] = j;"
              " __syncthreads(); a[i] = s[i]; }")
    dynamic = ('extern __shared__ float d[]; extern "C" __global__ void k(float* a)'
               " { int i = threadIdx.x; d[i] = i; __syncthreads(); a[i] = d[i ^ 1]; }")
    none = 'extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }'
    for src, want in ((static, 400), (dynamic, 0), (none, 0)):
        assert _sass.resource_usage(_sass.cubin_of(src, cc=cc))["k"]["shared"] == want


@needs_cuobjdump
def test_kernel_scaffolding_adds_no_shared_memory():
    # Kernels with no shared arrays of their own, including a grid-synchronizing one (its
    # counter pointer is the scaffolding's only __shared__ variable), and ufunc loops.
    @cuda.jit("void(float32[:])")
    def plain(a):
        a[cuda.grid(1)] += 1

    @cuda.jit("void(float32[:])")
    def grid_sync(a):
        i = cuda.grid(1)
        a[i] += 1
        cuda.cg.this_grid().sync()
        a[i] += 1

    assert plain.get_shared_mem_per_block("void(float32[:])") == 0
    assert grid_sync.get_shared_mem_per_block("void(float32[:])") == 8
    tile = cuda.jit("void(float32[:])")(_tile_kernel)
    assert tile.get_shared_mem_per_block("void(float32[:])") == 10 * 4


def _tile_kernel(a):
    s = cuda.shared.array(10, float32)
    s[cuda.threadIdx.x % 10] = a[0]
    cuda.syncthreads()
    a[cuda.grid(1)] = s[(cuda.threadIdx.x + 1) % 10]


@needs_cuobjdump
def test_print_formats_live_in_constant_memory():
    # Numba keeps print()'s format strings in constant memory; one copy per distinct
    # format: "%lld\n\0" is 6 bytes, "%f\n\0" 4, "a %lld\n\0" 8.
    @cuda.jit
    def show(val, to_print):
        if to_print:
            print(val)
            print(val)

    @cuda.jit
    def show_two(val, to_print):
        if to_print:
            print(val)
            print("a", val)

    show[1, 1](1, False)
    show[1, 1](1.0, False)
    show_two[1, 1](1, False)
    assert show.get_const_mem_size("void(int64, bool)") == 6
    assert show.get_const_mem_size("void(float64, bool)") == 4
    assert show_two.get_const_mem_size("void(int64, bool)") == 6 + 8


def test_missing_tools_raise_a_typed_error(monkeypatch):
    monkeypatch.setattr(_sass, "find_tool", lambda name: None)
    with pytest.raises(CudaSupportError, match=r"inspect_sass\(\): needs cuobjdump or nvdisasm .*"
                                               r"pip install nvidia-cuda-cuobjdump") as err:
        stencil.inspect_sass(SIG)
    # Numba's RuntimeError and words when nvdisasm is missing
    assert isinstance(err.value, RuntimeError) and "nvdisasm was not found" in str(err.value)
    with pytest.raises(CudaSupportError, match=r"get_regs_per_thread\(\): needs cuobjdump"):
        stencil.get_regs_per_thread(SIG)


def test_unknown_signature_is_a_key_error():
    with pytest.raises(KeyError, match="no specialization for"):
        stencil.get_regs_per_thread("void(int8[:], int8[:])")


def test_tool_lookup_honours_cuda_home(monkeypatch, tmp_path):
    tool = tmp_path / "bin" / "nvdisasm"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    monkeypatch.setenv("NUMBACUDA_UFUNC_CUDA_HOME", str(tmp_path))
    assert _sass.find_tool("nvdisasm") == str(tool)


def _binary(dtype):
    @vectorize([f"{dtype}({dtype}, {dtype})"], target="cuda")
    def add(a, b):
        return a + b

    return add


@needs_cuobjdump
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "complex64"])
def test_contiguous_elementwise_kernels_use_128_bit_accesses(dtype):
    add = _binary(dtype)
    entry, src = add._variant_source(0, 0)
    sass = _sass.sass_of(_sass.cubin_of(src))
    assert "LDG.E.128" in sass, sass
    assert "STG.E.128" in sass, sass


@needs_cuobjdump
@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8"])
def test_strided_elementwise_kernels_issue_four_elements_loads_before_storing(dtype):
    # The device loop takes a piece of (at least) four consecutive elements of a row and
    # issues all their loads before any store, so a thread keeps 4x the bytes in flight.
    import re

    add = _binary(dtype)
    entry, src = add._variant_source(0, 2)
    sass = _sass.sass_of(_sass.cubin_of(src))
    ops = re.findall(r"\b(LDG|STG)\.E\S*", sass)
    runs = "".join("L" if op == "LDG" else "S" for op in ops)
    assert "L" * 8 + "S" * 4 in runs, runs  # the unrolled group: 2 inputs x 4, then 4 stores
    assert "LLS" in runs, runs  # and the one-at-a-time rest


@needs_cuobjdump
def test_ufunc_and_gufunc_inspect_sass():
    add = _binary("float32")
    sass = add.inspect_sass()
    assert list(sass) == ["float32(float32, float32)"]
    text = sass["float32(float32, float32)"]
    assert "_contig" in text and "_strided1" in text

    @guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda")
    def total(x, out):
        s = 0.0
        for v in x:
            s += v
        out[0] = s

    gsass = total.inspect_sass(nloop=2)
    assert list(gsass) == ["(float64[:], float64[:])"] or len(gsass) == 1
    assert "_gufunc2" in next(iter(gsass.values()))


def _usage_of(src, options=()):
    return _sass.resource_usage(_sass.cubin_of(src, options=options))


@needs_cuobjdump
@pytest.mark.parametrize("dtype", COMMON)
def test_elementwise_kernels_use_no_local_memory(dtype):
    add = _binary(dtype)
    for ndim in (0, 1, 2, 3):
        entry, src = add._variant_source(0, ndim)
        usage = _usage_of(src)[entry]
        assert usage["local"] == 0, (entry, usage)


@needs_cuobjdump
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
def test_gufunc_kernels_use_no_local_memory(dtype):
    @guvectorize([f"void({dtype}[:], {dtype}[:], {dtype}[:])"], "(n),(n)->(n)", target="cuda")
    def axpy(x, y, out):
        for i in range(x.shape[0]):
            out[i] = x[i] * 2 + y[i]

    for nloop in (0, 1, 2, 3):
        entry, src = axpy._loop_source(0, nloop)
        usage = _usage_of(src)[entry]
        assert usage["local"] == 0, (entry, usage)


@reduce
def add_reduce(a, b):
    return a + b


def _blocks_per_sm_sm90(regs, shared, threads=256):
    """How many blocks of `threads` fit on one sm_90 multiprocessor: registers are
    allocated per warp in units of 256, 64K per SM; 228 KiB of shared memory, of which
    each block takes its own plus the 1 KiB the driver reserves; 2048 threads; 32
    blocks."""
    warps = threads // 32
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = 65536 // (per_warp * warps)
    by_shared = (228 * 1024) // (shared + 1024)
    return min(by_regs, by_shared, 2048 // threads, 32)


@needs_cuobjdump
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "complex128"])
def test_reduce_kernels_fit_several_blocks_and_use_no_local_memory(dtype):
    src = add_reduce.inspect_cuda(dtype)
    usage = _usage_of(src)
    name = src.split("NU_REDUCE_ENTRY(")[1].split(",")[0]
    suffixes = ("_units_contig", "_units_strided", "_final", "_columns", "_columns_tiled",
                "_columns_final", "_full_contig")
    for suffix in suffixes:
        u = usage[name + suffix]
        assert u["local"] == 0, (suffix, u)
        # The launch asks the occupancy API for the real count; this guards the kernels
        # against growing so large that few blocks fit (the old plan assumed 8).
        assert _blocks_per_sm_sm90(u["regs"], u["shared"]) >= 4, (suffix, u)


# Blocks per sm_90 multiprocessor of the units kernels as they were with CUB (recorded
# from their CUBINs: 45/54 registers for float32, 46/54 for float64). The launcher sizes a
# full reduction's chunks from this count, so keeping it keeps an H100's partition of the
# elements, and with the order of tests/cxx/check_reduce_order.cpp its results' bits.
@needs_cuobjdump
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduce_units_keep_cubs_occupancy_on_sm90(dtype):
    src = add_reduce.inspect_cuda(dtype)
    usage = _usage_of(src)
    name = src.split("NU_REDUCE_ENTRY(")[1].split(",")[0]
    for suffix, blocks in (("_full_contig", 5), ("_units_contig", 5), ("_units_strided", 4), ("_final", 6)):
        u = usage[name + suffix]
        assert _blocks_per_sm_sm90(u["regs"], u["shared"]) == blocks, (suffix, u)


@needs_cuobjdump
def test_reducer_inspect_sass():
    sass = add_reduce.inspect_sass(np.float64)
    for suffix in ("_units_contig", "_columns_tiled", "_columns_final"):
        assert suffix in sass


def test_inspection_cc_is_a_cubin_target():
    cc = _sass.inspection_cc()
    archs = _core.nvrtc_supported_archs()
    assert cc[0] * 10 + cc[1] in archs


def test_grid_sync_kernels_take_a_per_launch_counter():
    sig = "void(int64[:], int64[:])"

    @cuda.jit(sig)
    def rotate(a, out):
        i = cuda.grid(1)
        g = cuda.cg.this_grid()
        if i < a.size:
            out[i] = a[i] + 1
        g.sync()

    ptx = rotate.inspect_ptx(sig)  # one signature: its PTX, as Numba's inspect_asm(sig)
    assert rotate.inspect_ptx() == {next(iter(rotate.inspect_ptx())): ptx}
    assert "nu_grid_barrier" not in ptx  # no module-wide counter shared by launches
    # The parameter block holds the two arrays' words (1 + 2 * 1 each) and the counter.
    assert ".param .align 8 .b8" in ptx and "[56]" in ptx
