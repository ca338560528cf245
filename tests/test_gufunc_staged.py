"""gufunc launches that stage small items through shared memory (gufunc.cuh's
run_device_staged, chosen by src/dispatch/gufunc.cpp on a GPU for one loop dimension).

The staged kernel only runs on a GPU (``@pytest.mark.gpu``): each case is checked against
NumPy or the Python function, over the layouts that decide how an operand is staged
(packed items, one broadcast item, an operand read in place, outputs given with
``out=``, inputs the function writes, unaligned data, item counts around the block
size). The compile-level checks run anywhere: the staged variant builds with NVRTC for
sm_90, moves items with vector loads and stores and synchronizes the block; specialised on
its operands' staging modes and small core extents (as a call builds it), the function
reads staged items with shared-memory loads and no generic ones, and an output the engine
allocated is not copied in.
"""

import re

import numpy as np
import pytest
from conftest import HAVE_GPU

from numbacuda_ufunc import cuda, guvectorize
from numbacuda_ufunc.toolchain import _sass


def _matmul_body(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = a[0, 0] * 0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc


_TYPES = ["float32", "float64", "complex128", "int32"]
matmul = guvectorize([f"void({t}[:,:], {t}[:,:], {t}[:,:])" for t in _TYPES],
                     "(m,n),(n,p)->(m,p)", target="cuda")(_matmul_body)


@guvectorize(["void(float32[:], float32[:])"], "(n)->(n)", target="cuda")
def even_only(x, out):
    # writes every other element: the rest of out= must keep its values
    for i in range(0, x.shape[0], 2):
        out[i] = x[i] * 2


@guvectorize(["void(float64[:], float64[:])"], "(n)->()", target="cuda", writable_args=("x",))
def sum_and_clear(x, total):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        x[i] = -1.0
    total[0] = s


@guvectorize(["void(int8[:], int8[:])"], "(n)->(n)", target="cuda")
def bytes_plus_one(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + 1


def _staged_entries(g):
    return [name for name, _ in g._kernel_sources() if name.endswith("_staged")]


def _random(shape, dtype, rng):
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _close(got, want, dtype):
    rtol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", _TYPES)
@pytest.mark.parametrize("size", [4, 16])
@pytest.mark.parametrize("batch", [1, 31, 32, 33, 127, 128, 129, 1000, 70001])
def test_batched_matmul_matches_numpy(dtype, size, batch):
    rng = np.random.default_rng(batch)
    a = _random((batch, size, size), dtype, rng)
    b = _random((batch, size, size), dtype, rng)
    got = matmul(cuda.to_device(a), cuda.to_device(b)).copy_to_host()
    _close(got, a @ b, dtype)
    if batch > 1 and not (size == 16 and dtype == "complex128"):
        # the largest items (16x16 complex128, 4 KiB) do not fit and stay in place
        assert _staged_entries(matmul), matmul._kernel_sources()


@pytest.mark.gpu
def test_broadcast_operand_is_one_item_for_every_thread():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5000, 4, 4)).astype(np.float32)
    b = rng.standard_normal((4, 4)).astype(np.float32)
    _close(matmul(cuda.to_device(a), cuda.to_device(b)).copy_to_host(), a @ b, "float32")
    _close(matmul(cuda.to_device(b), cuda.to_device(a)).copy_to_host(), b @ a, "float32")


@pytest.mark.gpu
def test_operands_read_in_place_beside_staged_ones():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3000, 8, 8))
    wide = rng.standard_normal((3000, 8, 16))
    # every other column: items that are not contiguous are read in place, a is staged
    got = matmul(cuda.to_device(a), cuda.to_device(wide)[:, :, ::2]).copy_to_host()
    _close(got, a @ wide[:, :, ::2], "float64")
    # every other batch item (a loop stride of two items): read in place
    got = matmul(cuda.to_device(a)[::2], cuda.to_device(wide[:, :, :8].copy())[::2]).copy_to_host()
    _close(got, a[::2] @ wide[::2, :, :8], "float64")


@pytest.mark.gpu
def test_outputs_keep_what_the_function_does_not_write():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((777, 64)).astype(np.float32)
    out = np.full_like(x, 5.0)
    dout = cuda.to_device(out)
    even_only(cuda.to_device(x), out=dout)
    want = out.copy()
    want[:, ::2] = x[:, ::2] * 2
    np.testing.assert_array_equal(dout.copy_to_host(), want)
    assert _staged_entries(even_only)


@pytest.mark.gpu
def test_inputs_the_function_writes_are_written_back():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((513, 40))
    dx = cuda.to_device(x)
    total = sum_and_clear(dx).copy_to_host()
    np.testing.assert_allclose(total, x.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(dx.copy_to_host(), np.full_like(x, -1.0))
    assert _staged_entries(sum_and_clear)


@pytest.mark.gpu
def test_unaligned_and_odd_sized_items():
    rng = np.random.default_rng(5)
    # float32 data 4 bytes past a 16-byte boundary: copied in 4-byte words
    raw = cuda.to_device(rng.standard_normal(1 + 2000 * 36).astype(np.float32))
    a = raw[1:].reshape(2000, 6, 6)
    b = cuda.to_device(rng.standard_normal((2000, 6, 6)).astype(np.float32))
    host_a = a.copy_to_host()
    _close(matmul(a, b).copy_to_host(), host_a @ b.copy_to_host(), "float32")
    # int8 items of 37 bytes are not whole words: read in place
    x = rng.integers(-100, 100, (3000, 37)).astype(np.int8)
    np.testing.assert_array_equal(bytes_plus_one(cuda.to_device(x)).copy_to_host(), x + np.int8(1))


@pytest.mark.gpu
def test_host_arrays_and_empty_batches():
    rng = np.random.default_rng(6)
    a = rng.standard_normal((300, 4, 4)).astype(np.float32)
    _close(matmul(a, a), a @ a, "float32")
    empty = np.zeros((0, 4, 4), np.float32)
    assert matmul(empty, empty).shape == (0, 4, 4)


def _staged_sass(dtype):
    entry, src = matmul._loop_source(_TYPES.index(dtype), 1, staged=True)
    assert entry.endswith("_staged") and "NU_GUFUNC_STAGED_ENTRY" in src
    cubin = _sass.cubin_of(src)
    return entry, cubin


@pytest.mark.parametrize("dtype", _TYPES)
def test_staged_kernel_builds_for_sm90_with_vector_copies(dtype):
    if _sass.find_tool("cuobjdump") is None and _sass.find_tool("nvdisasm") is None:
        pytest.skip("needs cuobjdump or nvdisasm")
    entry, cubin = _staged_sass(dtype)
    sass = _sass.sass_of(cubin)
    ops = re.findall(r"\b(LDG\.E\.128|STG\.E\.128|BAR\.SYNC|STS|LDS|STL|LDL)\b", sass)
    assert "LDG.E.128" in ops and "STG.E.128" in ops, "16-byte global copies"
    assert "STS" in ops and "LDS" in ops and "BAR.SYNC" in ops
    assert "STL" not in ops and "LDL" not in ops, "no local memory traffic"
    if _sass.find_tool("cuobjdump") is not None:  # resource counts come from cuobjdump only
        usage = _sass.resource_usage(cubin)[entry]
        assert usage["regs"] <= 64, usage


def test_staged_source_needs_one_loop_dimension():
    with pytest.raises(ValueError, match="one loop dimension"):
        matmul._loop_source(0, 2, staged=True)


@pytest.mark.skipif(HAVE_GPU, reason="checks the host backend, which never stages")
def test_host_backend_never_stages():
    a = np.ones((200, 4, 4), np.float32)
    np.testing.assert_array_equal(matmul(a, a), a @ a)
    assert _staged_entries(matmul) == []


def _specialised_sass(dtype, size, modes):
    # The kernel a call with packed (batch, size, size) items runs: staging modes and core
    # extents are template constants (src/dispatch/gufunc.cpp, staged_spec).
    entry, src = matmul._loop_source(_TYPES.index(dtype), 1, staged=True, modes=modes,
                                     extents=[[size, size]] * 3)
    assert entry.endswith("_staged")
    return _sass.sass_of(_sass.cubin_of(src))


def _count(pattern, sass):
    return len(re.findall(pattern, sass))


@pytest.mark.skipif(_sass.find_tool("cuobjdump") is None and _sass.find_tool("nvdisasm") is None,
                    reason="needs cuobjdump or nvdisasm")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_staged_matmul_reads_staged_items_with_shared_loads(dtype):
    # 16x16 items of a and b staged in (mode 1), the allocated output written back only (4).
    sass = _specialised_sass(dtype, 16, [1, 1, 4])
    # The function's reads of a and b are shared-memory loads at constant offsets ...
    assert _count(r"\bLDS(\.\S+)?\b", sass) >= 16, sass
    # ... never generic loads or stores (LD.E / ST.E: a pointer the compiler cannot place,
    # which the run-time staging mode made of every staged operand before)
    assert _count(r"\bLD\.E", sass) == 0 and _count(r"\bST\.E", sass) == 0, sass
    assert _count(r"\b(LDL|STL)\b", sass) == 0, "no local memory traffic"
    # The output is not copied in: its only global accesses are the copy out.
    staged_in_out = _specialised_sass(dtype, 16, [1, 1, 3])
    assert _count(r"\bLDG\.E", sass) < _count(r"\bLDG\.E", staged_in_out)
    # Copy-in keeps several loads in flight: four 16-byte loads before their shared stores.
    ops = "".join("L" if op.startswith("LDG") else "S"
                  for op in re.findall(r"\b(LDG\.E\.128|STS)\b", sass))
    assert "LLLL" in ops, ops


@pytest.mark.skipif(_sass.find_tool("cuobjdump") is None and _sass.find_tool("nvdisasm") is None,
                    reason="needs cuobjdump or nvdisasm")
def test_operands_read_in_place_or_broadcast_use_no_generic_loads():
    # a read where it lies (mode 0: global loads), b one item for the whole block (2),
    # the output staged in and out (3: passed with out=), extents fixed
    sass = _specialised_sass("float32", 4, [0, 2, 3])
    assert _count(r"\bLD\.E", sass) == 0 and _count(r"\bST\.E", sass) == 0, sass
    assert _count(r"\bLDS", sass) > 0 and _count(r"\bLDG\.E", sass) > 0


def test_staged_source_needs_one_mode_per_operand():
    with pytest.raises(ValueError, match="one entry per operand"):
        matmul._loop_source(0, 1, staged=True, modes=[1, 1])


_FAKE_STAGED = r"""
import numpy as np
from numbacuda_ufunc import cuda, guvectorize

drv = FakeDriver()
out = {}

@guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)", target="cuda")
def matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = a[0, 0] * 0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc

a = cuda.to_device(np.ones((4096, 16, 16), np.float32))
c = cuda.device_array((4096, 16, 16), np.float32)
matmul(a, a)      # output allocated by the call
matmul(a, a, out=c)  # output passed in
out["kernels"] = [src.split("NU_GUFUNC_STAGED_ENTRY(")[1] for name, src in matmul._kernel_sources()
                  if name.endswith("_staged")]
drv.reset()
matmul(a, a)
out["fresh"] = [drv.calls(), drv.last_launch()]
h = np.ones((300, 16, 16), np.float32)
matmul(h, h)
drv.reset()
matmul(h, h)  # host operands: inputs go to the device, the new output only comes back
out["host"] = drv.traffic(lambda: matmul(h, h))
print(json.dumps(out))
"""


def test_staged_launches_under_the_fake_driver(fake_driver):
    out = fake_driver.run_json(_FAKE_STAGED)
    # one kernel per staging specialisation: the allocated output written back only (4),
    # the output passed in staged in and out (3); 16x16 extents fixed in both
    kernels = out["kernels"]
    assert len(kernels) == 2, kernels
    assert any("1, 16, 16>, nu::garg<nu::f32, 2, 0, 1, 16, 16>, nu::garg<nu::f32, 2, 0, 4, 16, 16>" in k
               for k in kernels), kernels
    assert any("nu::garg<nu::f32, 2, 0, 3, 16, 16>" in k for k in kernels), kernels
    calls, (grid, block, shared) = out["fresh"]
    # Block by occupancy with the shared memory counted: 16x16 float32 items take 1,028
    # bytes each (an odd number of words), three per thread. 128 and 96 threads do not fit
    # the 227 KiB opt-in limit; 64 threads (one block per SM) and 32 (two) keep 64 threads
    # per SM resident; the larger block wins the tie.
    assert block[0] == 64 and shared == 3 * 64 * 1028, (block, shared)
    # (the occupancy answers are cached: a steady-state call asks the driver nothing)
    assert calls.get("cuOccupancyMaxActiveBlocksPerMultiprocessor", 0) == 0, calls
    assert calls["cuLaunchKernel"] == 1 and grid[0] == 4096 // 64, (calls, grid)
    # host inputs: two copies in, one out; the new output is not copied in
    host = out["host"]["calls"]
    assert host.get("cuMemcpyHtoDAsync", 0) + host.get("cuMemcpyHtoD", 0) == 2, host
    assert host.get("cuMemcpyDtoHAsync", 0) + host.get("cuMemcpyDtoH", 0) == 1, host
