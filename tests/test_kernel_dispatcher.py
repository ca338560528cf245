"""Numba's dispatcher surface of @cuda.jit kernels: ``specialized`` and ``specialize``
(one kernel per types, kept in ``specializations``), the resource queries' forms (one value
for a specialized kernel or a signature, else a dict keyed like ``overloads``),
``get_max_threads_per_block`` and ``shared_memory_carveout``. No GPU is needed except
where marked."""

import math
import pickle

import numpy as np
import pytest

from numbacuda_ufunc import cuda, float32, float64, int16, int32, int64, void
from numbacuda_ufunc.errors import CudaSupportError


def pi_sin(x, n):
    i = cuda.grid(1)
    if i < n:
        x[i] = 3.14 * math.sin(x[i])


def tile_copy(x):
    t = cuda.shared.array(100, float32)
    i = cuda.threadIdx.x
    if i < 100:
        t[i] = x[i]
    cuda.syncthreads()
    if i < 100:
        x[i] = t[99 - i]


def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = i + 1


def test_one_signature_makes_a_specialized_kernel_and_a_list_does_not():
    assert cuda.jit("void(float32[::1], int64)")(pi_sin).specialized
    assert cuda.jit(void(float32[::1], int64))(pi_sin).specialized
    assert cuda.jit((float32[::1], int64))(pi_sin).specialized
    assert not cuda.jit(["void(float32[::1], int64)"])(pi_sin).specialized
    assert not cuda.jit(pi_sin).specialized


def test_specialize_is_made_once_per_types_and_refuses_a_specialized_kernel():
    k = cuda.jit(pi_sin)
    assert k.specializations == {}
    f32 = k.specialize(float32[::1], int64)
    assert f32.specialized and len(k.specializations) == 1
    assert k.specialize(float32[::1], int64) is f32
    f64 = k.specialize(np.zeros(4), 4)  # values are typed as a launch types them
    assert f64 is not f32 and len(k.specializations) == 2
    for done in (f32, cuda.jit("void(float32[::1], int64)")(pi_sin)):
        with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
            done.specialize(float32[::1], int64)
    x = np.linspace(-2, 2, 50).astype(np.float32)
    expect = (np.float32(3.14) * np.sin(x.astype(np.float64)).astype(np.float32))
    f32[1, 64](x, x.size)
    np.testing.assert_allclose(x, expect, rtol=1e-6)


def test_specialized_kernels_survive_pickling():
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    again = pickle.loads(pickle.dumps(k))
    assert again.specialized
    assert not pickle.loads(pickle.dumps(cuda.jit(pi_sin))).specialized


def test_resource_queries_give_a_value_for_a_specialized_kernel():
    k = cuda.jit("void(float32[::1], int64)")(pi_sin)
    for query in (k.get_regs_per_thread, k.get_shared_mem_per_block,
                  k.get_local_mem_per_thread, k.get_const_mem_size, k.get_max_threads_per_block):
        try:
            value = query()
        except CudaSupportError:  # no cuobjdump on this machine
            pytest.skip("needs cuobjdump")
        assert isinstance(value, int) and value >= 0, query
        assert value == query(void(float32[::1], int64)), query


def test_resource_queries_of_a_lazy_kernel_are_keyed_like_overloads():
    k = cuda.jit(pi_sin)
    k[1, 10](np.zeros(10, np.float32), 10)
    k[1, 10](np.zeros(10, np.float64), 10)
    try:
        regs = k.get_regs_per_thread()
    except CudaSupportError:
        pytest.skip("needs cuobjdump")
    assert len(regs) == 2 and set(regs) == set(k.overloads)
    # Looked up by the types Numba compiles for contiguous arguments, or by a signature.
    sig32, sig64 = void(float32[::1], int64), void(float64[::1], int64)
    assert regs[sig32.args] == k.get_regs_per_thread(sig32) > 0
    assert regs[sig64.args] == k.get_regs_per_thread(sig64) > 0
    assert sig32.args in k.overloads and (int32[::1], int64) not in k.overloads
    with pytest.raises(KeyError):
        regs[(int32[::1], int64)]


def test_max_threads_per_block_follows_launch_bounds_and_registers():
    try:
        assert cuda.jit("void(float32[::1], int64)")(pi_sin).get_max_threads_per_block() == 1024
        assert cuda.jit("void(float32[::1], int64)", launch_bounds=128)(pi_sin) \
            .get_max_threads_per_block() == 128
        assert cuda.jit("void(float32[::1], int64)", launch_bounds=(96, 2))(pi_sin) \
            .get_max_threads_per_block() == 96
    except CudaSupportError:
        pytest.skip("needs cuobjdump")


def test_static_shared_memory_of_a_specialized_kernel():
    k = cuda.jit("void(float32[::1])")(tile_copy)
    try:
        shared = k.get_shared_mem_per_block()
    except CudaSupportError:
        pytest.skip("needs cuobjdump")
    assert shared in (400, 400 + 1024)  # sm_90 CUBINs add the 1 KiB reserved per block


@pytest.mark.parametrize("carveout", ["MaxL1", "MaxShared", "default", "maxshared", 0, 50, 100, -1])
@pytest.mark.parametrize("with_signature", [False, True])
def test_valid_carveouts_launch(carveout, with_signature):
    deco = cuda.jit("void(int32[:])", shared_memory_carveout=carveout) if with_signature \
        else cuda.jit(shared_memory_carveout=carveout)
    k = deco(add_one)
    x = np.zeros(10, np.int32)
    k[1, 16](x)
    np.testing.assert_array_equal(x, np.arange(1, 11))
    assert k.shared_memory_carveout == carveout


@pytest.mark.parametrize("carveout, error, message", [
    (150, ValueError, "must be between -1 and 100"),
    (-2, ValueError, "must be between -1 and 100"),
    (101, ValueError, "must be between -1 and 100"),
    ("InvalidOption", ValueError, "Invalid carveout value: InvalidOption"),
    (50.0, TypeError, "shared_memory_carveout must be str or int, got float"),
    (True, TypeError, "got bool"),
])
def test_invalid_carveouts_are_refused_at_decoration(carveout, error, message):
    with pytest.raises(error, match=message):
        cuda.jit(shared_memory_carveout=carveout)(add_one)
    with pytest.raises(error, match=message):
        cuda.jit("void(int32[:])", shared_memory_carveout=carveout)(add_one)


def test_specialize_keeps_the_carveout():
    k = cuda.jit(shared_memory_carveout="MaxShared")(add_one)
    s = k.specialize(np.zeros(4, np.int32))
    assert s.shared_memory_carveout == "MaxShared"
    x = np.zeros(4, np.int32)
    s[1, 4](x)
    np.testing.assert_array_equal(x, [1, 2, 3, 4])


@pytest.mark.gpu
def test_carveout_is_applied_on_the_gpu():
    # cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT) on each loaded function; a
    # kernel with most of the shared memory still launches and computes.
    for carveout in ("MaxShared", "MaxL1", 25):
        k = cuda.jit("void(float32[::1])", shared_memory_carveout=carveout)(tile_copy)
        x = np.arange(100, dtype=np.float32)
        d = cuda.to_device(x)
        k[1, 128](d)
        np.testing.assert_array_equal(d.copy_to_host(), x[::-1])



def one(x):
    x[0] = 1


def test_launch_config_is_current_while_a_launch_compiles():
    from numbacuda_ufunc.cuda import launchconfig

    k = cuda.jit(one)
    seen = []
    compile_for_args = k._compile_for_args

    def wrapped(*args):
        seen.append(launchconfig.ensure_current_launch_config())
        return compile_for_args(*args)

    k._compile_for_args = wrapped
    arr = np.zeros(3, np.int32)
    configured = k[2, (4, 2)]
    configured(arr)
    (cfg,) = seen
    assert cfg.dispatcher is k and cfg.griddim == (2, 1, 1) and cfg.blockdim == (4, 2, 1)
    assert cfg.sharedmem == 0 and cfg.args[0] is arr and arr[0] == 1
    assert launchconfig.current_launch_config() is None and configured.args is None
    with pytest.raises(RuntimeError, match="No launch config"):
        launchconfig.ensure_current_launch_config()
    k[1, 1](np.zeros(3, np.int32))  # the same types: nothing to compile
    assert len(seen) == 1


def _block_sized(x):
    x[0] = cuda.blockDim.x


def test_a_launch_config_sensitive_kernel_compiles_again_for_a_new_configuration():
    from numbacuda_ufunc.cuda import launchconfig

    k = cuda.jit(_block_sized)
    seen = []
    compile_for_args = k._compile_for_args

    def sensitive(*args):
        cfg = launchconfig.ensure_current_launch_config()
        seen.append((cfg.griddim, cfg.blockdim, cfg.sharedmem))
        cfg.dispatcher.mark_launch_config_sensitive()
        assert cfg._is_kernel_launch_config_sensitive()
        return compile_for_args(*args)

    k._compile_for_args = sensitive
    arr = np.full(1, -1, np.int32)
    k[1, 32](arr)
    k[1, 32](arr)  # the same configuration: compiled already
    assert seen == [((1, 1, 1), (32, 1, 1), 0)] and arr[0] == 32
    first = next(iter(k.overloads.values()))
    assert first.launch_config_sensitive
    for config in ((1, 64), (2, 32), (1, 32, 0, 8)):
        k[config](arr)
    assert seen[1:] == [((1, 1, 1), (64, 1, 1), 0), ((2, 1, 1), (32, 1, 1), 0),
                        ((1, 1, 1), (32, 1, 1), 8)]
    assert arr[0] == 32 and len(k.definitions) == 4
    # overloads keeps the first, as Numba's dispatcher (the others are per configuration)
    assert len(k.overloads) == 1 and next(iter(k.overloads.values()))._index == first._index
    k[1, 64](arr)  # every configuration seen is kept
    assert len(seen) == 4 and arr[0] == 64
    k[1, 32](np.zeros(2))  # new types: compiled anew, for this configuration
    assert len(seen) == 5 and len(k.overloads) == 2


_CONFIG_OVERLOAD = """
import sys
import numpy as np
from numbacuda_ufunc import cuda
from numbacuda_ufunc.cuda import launchconfig
from numbacuda_ufunc.cuda.extending import overload


def block_constant():
    pass


@overload(block_constant, target="cuda")
def _block_constant():
    # Numba's use of the marker: code generated for the configuration being compiled
    cfg = launchconfig.ensure_current_launch_config()
    cfg.dispatcher.mark_launch_config_sensitive()
    n = cfg.blockdim[0] * 1000 + cfg.griddim[0]

    def impl():
        return n
    return impl


@cuda.jit(cache=CACHE)
def k(x):
    x[0] = block_constant()


arr = np.full(1, -1, np.int64)
for b, g in [tuple(int(v) for v in a.split("x")) for a in sys.argv[1:]]:
    k[g, b](arr)
    print(int(arr[0]))
"""


@pytest.mark.parametrize("cache", [False, True])
def test_a_translation_that_reads_the_configuration_is_made_per_configuration(tmp_path, cache):
    import subprocess
    import sys

    script = tmp_path / "lcs.py"
    script.write_text(_CONFIG_OVERLOAD.replace("CACHE", str(cache)))

    def run(*configs):
        out = subprocess.run([sys.executable, str(script), *configs], capture_output=True,
                             text=True, timeout=300, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
        return [int(v) for v in out.stdout.split()]

    # the overload's answer (and so the code) differs per configuration, and each
    # configuration seen keeps its own specialization
    assert run("32x1", "64x1", "32x1", "128x2") == [32001, 64001, 32001, 128002]
    # a new process, another configuration first: never the first process's code
    assert run("64x1", "32x1") == [64001, 32001]


def test_an_unmarked_kernel_serves_every_configuration():
    k = cuda.jit(_block_sized)
    arr = np.zeros(1, np.int32)
    k[1, 32](arr)
    k[1, 64](arr)
    assert arr[0] == 64 and len(k.definitions) == 1
    assert not next(iter(k.overloads.values())).launch_config_sensitive


def test_mark_launch_config_sensitive_needs_the_kernel_s_own_launch():
    from numbacuda_ufunc.cuda import launchconfig

    k, other = cuda.jit(_block_sized), cuda.jit(_block_sized)
    with pytest.raises(RuntimeError, match="No launch config set"):
        k.mark_launch_config_sensitive()
    compile_for_args = k._compile_for_args

    def marks_another(*args):
        other.mark_launch_config_sensitive()
        return compile_for_args(*args)

    k._compile_for_args = marks_another
    with pytest.raises(RuntimeError, match="active launch configuration's dispatcher"):
        k[1, 1](np.zeros(1, np.int32))
    assert launchconfig.current_launch_config() is None


def test_capture_compile_config_records_and_restores():
    from numbacuda_ufunc.cuda import launchconfig

    k = cuda.jit(one)
    with launchconfig.capture_compile_config(k) as capture:
        k[3, 5, 0, 16](np.zeros(1, np.float64))
    cfg = capture["config"]
    assert cfg.dispatcher is k and cfg.griddim == (3, 1, 1) and cfg.blockdim == (5, 1, 1)
    assert cfg.sharedmem == 16
    assert "_compile_for_args" not in vars(k)
    with launchconfig.capture_compile_config(k) as capture:
        k[1, 1](np.zeros(1, np.float64))  # compiled already
    assert capture["config"] is None
    with pytest.raises(TypeError, match="dispatcher is required"):
        with launchconfig.capture_compile_config(None):
            pass


def test_compile_for_args_outside_a_launch_compiles_for_the_values():
    k = cuda.jit(one)
    overload = k._compile_for_args(np.zeros(2, np.int16))
    assert overload.arg_types[0] == int16[:]
    assert len(k.overloads) == 1


def test_a_compile_hook_must_return_an_overload_of_the_kernel():
    k = cuda.jit(one)
    k._compile_for_args = lambda *args: "not an overload"
    with pytest.raises(TypeError, match="must return one of this kernel's overloads"):
        k[1, 1](np.zeros(1))


def test_kernel_called_as_device_function_lists_the_specialization():
    # numba-cuda's test_declare_device_cabi_propagate reads device_func.signatures[0]
    @cuda.jit
    def twice(x):
        return x * 2

    @cuda.jit
    def k(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = twice(x[i])

    @cuda.jit
    def k2(r, x):
        r[0] = twice(x[0]) + twice(1.5)

    assert twice.signatures == []
    x = np.arange(5, dtype=np.int32)
    r = np.zeros(5, np.int32)
    k[1, 8](r, x)
    np.testing.assert_array_equal(r, x * 2)
    assert twice.signatures == [(int32,)]
    ov = twice.overloads[twice.signatures[0]]
    assert ov.signature.return_type == int32 and ov.argument_types == (int32,)
    with pytest.raises(NotImplementedError, match="no LLVM IR"):
        ov.library.get_llvm_str()
    r2 = np.zeros(1, np.float64)
    k2[1, 1](r2, np.array([4], np.int32))  # listed signatures do not restrict later calls
    assert r2[0] == 11.0
    assert set(twice.signatures) == {(int32,), (float64,)}
