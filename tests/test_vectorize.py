"""vectorize: NumPy semantics of calls, loop selection, results placement and errors.

The oracle is the Python function itself, applied element by element with np.vectorize
on NumPy scalars of the loop's types.
"""

import math

import numpy as np
import pytest

import numbacuda_ufunc as nu
from numbacuda_ufunc import cuda, float32, float64, int32, int64, vectorize


def oracle(pyfunc, loop_dtype, *args):
    """The Python function applied element by element on NumPy scalars of the loop type."""
    cast = [np.asarray(a).astype(loop_dtype) for a in args]
    with np.errstate(all="ignore"):
        return np.vectorize(pyfunc, otypes=[loop_dtype])(*cast)


def poly(a, b):
    return a * a - 3.0 * b + 0.5


def transcendental(x, y):
    return math.exp(-x * x) * math.sin(y)


poly_ufunc = vectorize(["float32(float32, float32)", "float64(float64, float64)"])(poly)
trans_ufunc = vectorize([float32(float32, float32), float64(float64, float64)])(transcendental)


@vectorize(["int32(int32, int32)", "int64(int64, int64)", "float64(float64, float64)"])
def floor_mod(a, b):
    return a % b if b != 0 else a


# ---------------------------------------------------------------- the seed examples

def test_seed_doubled_ufunc():
    @vectorize([float32(float32), ], target="cuda")
    def doubled_ufunc(arr):
        arr *= 2
        return arr

    arr = np.random.randn(3, 3).astype(np.float32)
    before = arr.copy()
    out = doubled_ufunc(arr)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == (3, 3)
    np.testing.assert_array_equal(out, before * 2)
    np.testing.assert_array_equal(arr, before)  # the argument is a scalar copy


def test_numba_doc_examples_sinc_and_discriminant():
    @vectorize(["float64(float64)", "float32(float32)"], target="cuda")
    def sinc(x):
        if x == 0.0:
            return 1.0
        return math.sin(x * math.pi) / (x * math.pi)

    x = np.linspace(-4, 4, 101)
    np.testing.assert_allclose(sinc(x), np.sinc(x), rtol=1e-12, atol=1e-15)
    assert sinc(x.astype(np.float32)).dtype == np.float32

    @vectorize(["float32(float32, float32, float32)"], target="cuda")
    def discriminant(a, b, c):
        return math.sqrt(b ** 2 - 4 * a * c)

    rng = np.random.default_rng(0)
    a, b, c = (rng.random(1000).astype(np.float32) for _ in range(3))
    b = b * 10 + 2  # a positive discriminant
    np.testing.assert_allclose(discriminant(a, b, c), np.sqrt(b ** 2 - 4 * a * c), rtol=1e-6)


@cuda.jit(device=True)
def clamp(x, lo, hi):
    return max(lo, min(x, hi))


def test_device_function_helpers_and_plain_python_helpers():
    def scaled(x):  # an undecorated Python function is translated too
        return x * 3.0

    @vectorize(["float32(float32)", "float64(float64)"], target="cuda")
    def squash(x):
        return clamp(scaled(x), -1.0, 1.0)

    x = np.linspace(-1, 1, 50, dtype=np.float32)
    np.testing.assert_array_equal(squash(x), np.clip(x * np.float32(3.0), -1, 1))
    assert clamp(5, 0, 2) == 2  # still callable from Python


# ---------------------------------------------------------------- semantics vs the oracle

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast", "fortran", "reversed"])
def test_polynomial_and_transcendental_layouts(dtype, layout):
    rng = np.random.default_rng(7)
    base = rng.standard_normal((34, 18)).astype(dtype)
    other = rng.standard_normal((34, 18)).astype(dtype)
    if layout == "strided":
        a, b = base[::2, 1::3], other[1::2, ::3]
    elif layout == "broadcast":
        a, b = base[:, :1], other[0]
    elif layout == "fortran":
        a, b = np.asfortranarray(base), np.asfortranarray(other)
    elif layout == "reversed":
        a, b = base[::-1, ::-2], other[:, ::-2]
    else:
        a, b = base, other
    tol = 1e-6 if dtype == np.float32 else 1e-13
    for uf, fn in ((poly_ufunc, poly), (trans_ufunc, transcendental)):
        got = uf(a, b)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, oracle(fn, dtype, a, b), rtol=tol, atol=tol)
    if layout == "fortran":
        assert poly_ufunc(a, b).flags.f_contiguous


def test_integer_semantics_against_python():
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, 2000).astype(np.int32)
    b = rng.integers(-7, 7, 2000).astype(np.int32)
    np.testing.assert_array_equal(floor_mod(a, b), oracle(floor_mod.py_func, np.int32, a, b))
    big = np.array([np.iinfo(np.int64).min, -1, np.iinfo(np.int64).max], np.int64)
    np.testing.assert_array_equal(floor_mod(big, np.int64(-3)),
                                  oracle(floor_mod.py_func, np.int64, big, -3))


def test_edge_values_nan_inf_negative_zero():
    vals = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-310, -1e308], np.float64)
    a, b = np.meshgrid(vals, vals)
    got = poly_ufunc(a, b)
    np.testing.assert_array_equal(got, oracle(poly, np.float64, a, b))
    # Python's math raises on sin(inf); CUDA (and Numba) return NaN like NumPy does.
    with np.errstate(all="ignore"):
        expected = np.exp(-a * a) * np.sin(b)
    np.testing.assert_allclose(trans_ufunc(a, b), expected, rtol=1e-13)


def test_broadcasting_many_ranks_scalars_and_zero_d():
    rng = np.random.default_rng(2)

    @vectorize(["float64(float64, float64, float64, float64)"])
    def combine(a, b, c, d):
        return a * b - c / d

    a = rng.random((2, 1, 4, 1, 3))
    b = rng.random((4, 5, 3))
    c = np.float64(0.25)          # strong 0-d scalar
    d = np.array(2.0)             # 0-d array
    got = combine(a, b, c, d)
    assert got.shape == (2, 1, 4, 5, 3)
    np.testing.assert_allclose(got, a * b - c / d)
    one = combine(1.0, 2.0, 3.0, 4.0)  # all scalars: a NumPy scalar back
    assert isinstance(one, np.float64) and one == 1.0 * 2.0 - 3.0 / 4.0


def test_empty_arrays_launch_nothing_and_return_empty():
    out = poly_ufunc(np.zeros((0, 3), np.float32), np.zeros(3, np.float32))
    assert out.shape == (0, 3) and out.dtype == np.float32
    dev = poly_ufunc(cuda.device_array((4, 0), np.float64), 1.0)
    assert isinstance(dev, cuda.DeviceNDArray) and dev.shape == (4, 0)


def test_large_arrays_with_tails_on_every_target():
    n = 3 * 2**17 + 5  # not a multiple of any vector width; above the parallel threshold
    rng = np.random.default_rng(3)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    expected = a * a - np.float32(3.0) * b + np.float32(0.5)
    for target in ("cuda", "cpu", "parallel"):
        uf = vectorize(["float32(float32, float32)"], target=target)(poly)
        np.testing.assert_allclose(uf(a, b), expected, rtol=1e-6)
        np.testing.assert_allclose(uf(a[1:], b[:-1]), a[1:] * a[1:] - np.float32(3) * b[:-1] + np.float32(.5),
                                   rtol=1e-6)  # misaligned: the scalar path


# ---------------------------------------------------------------- loop selection

def test_loop_selection_exact_then_safe_casting():
    assert poly_ufunc(np.ones(3, np.float32), np.ones(3, np.float32)).dtype == np.float32
    assert poly_ufunc(np.ones(3, np.float32), np.ones(3, np.float64)).dtype == np.float64
    assert poly_ufunc(np.ones(3, np.int16), np.ones(3, np.int8)).dtype == np.float32
    assert poly_ufunc(np.ones(3, np.int32), np.ones(3, np.float32)).dtype == np.float64
    assert poly_ufunc(np.ones(3, np.uint64), np.ones(3, np.float32)).dtype == np.float64
    np.testing.assert_allclose(poly_ufunc(np.arange(4, dtype=np.int32), np.ones(4, np.float32)),
                               np.arange(4.0) ** 2 - 3.0 + 0.5)


def test_weak_python_scalars_follow_nep50():
    x32 = np.arange(4, dtype=np.float32)
    assert poly_ufunc(x32, 2.5).dtype == np.float32          # weak float keeps float32
    assert poly_ufunc(x32, 2).dtype == np.float32            # weak int too
    assert poly_ufunc(x32, np.float64(2.5)).dtype == np.float64  # NumPy scalars are strong
    assert floor_mod(7, 3) == 1 and isinstance(floor_mod(7, 3), np.int64)  # alone: int64 (NumPy 2)
    assert isinstance(floor_mod(7, 2.5), np.float64)
    assert floor_mod(2**40, 3).dtype == np.int64
    with pytest.raises(OverflowError, match="1099511627776 is out of bounds for int32"):
        floor_mod(np.arange(3, dtype=np.int32), 2**40)  # with arrays: the arrays' type (NEP 50)
    with pytest.raises(OverflowError, match="out of bounds"):
        floor_mod(np.arange(3), 2**70)


def test_no_matching_loop_lists_the_loops():
    with pytest.raises(TypeError, match=r"no loop matches the input types \(complex128, float32\).*'ff->f', 'dd->d'"):
        poly_ufunc(np.ones(2, np.complex128), np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"\(float, int\)"):
        floor_mod_int = vectorize(["int32(int32, int32)"])(floor_mod.py_func)
        floor_mod_int(1.5, 2)


def test_lazy_vectorize_compiles_per_dtype_tuple():
    @vectorize
    def hyp(a, b):
        return math.hypot(a, b)

    assert hyp.ntypes == 0
    np.testing.assert_allclose(hyp(np.float32(3), np.float32(4)), 5.0)
    assert hyp.types == ["ff->f"]
    assert hyp(np.arange(3), 4).dtype == np.float64
    assert hyp.types == ["ff->f", "ll->d"]
    hyp(np.arange(3.0), 4.0)
    assert hyp.ntypes == 3  # ("dd") is new; a repeated tuple compiles nothing


# ---------------------------------------------------------------- where results live

def test_results_live_where_the_inputs_are():
    host = np.arange(6, dtype=np.float64).reshape(2, 3)
    dev = cuda.to_device(host)
    assert isinstance(poly_ufunc(host, host), np.ndarray)
    result = poly_ufunc(dev, host)
    assert isinstance(result, cuda.DeviceNDArray)
    np.testing.assert_allclose(result.copy_to_host(), poly(host, host))
    scalar = poly_ufunc(np.float32(2), np.float32(1))
    assert isinstance(scalar, np.float32) and scalar == np.float32(1.5)
    zero_d_dev = poly_ufunc(cuda.to_device(np.float64(2.0)), 1.0)
    assert isinstance(zero_d_dev, cuda.DeviceNDArray) and zero_d_dev.shape == ()


def test_cuda_array_interface_inputs_give_device_results():
    class Foreign:
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    dev = cuda.to_device(np.arange(5.0))
    result = poly_ufunc(Foreign(dev), 1.0)
    assert isinstance(result, cuda.DeviceNDArray)
    np.testing.assert_allclose(result.copy_to_host(), poly(np.arange(5.0), 1.0))


@pytest.mark.parametrize("out_kind", ["host", "device", "host-fortran", "device-view"])
def test_out_argument_any_layout_is_returned(out_kind):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    expected = poly(a, 2.0)
    if out_kind == "host":
        out = np.full((3, 4), np.nan)
    elif out_kind == "device":
        out = cuda.device_array((3, 4))
    elif out_kind == "host-fortran":
        out = np.asfortranarray(np.full((3, 4), np.nan))
    else:
        out = cuda.device_array((3, 8))[:, ::2]
    assert poly_ufunc(a, 2.0, out=out) is out
    got = out if isinstance(out, np.ndarray) else out.copy_to_host()
    np.testing.assert_allclose(got, expected)
    assert poly_ufunc(a, 2.0, out) is out  # positional out, as NumPy allows


def test_out_casts_same_kind_and_aliases_inputs():
    a = np.arange(6, dtype=np.float64)
    out32 = np.zeros(6, np.float32)
    poly_ufunc(a, a, out=out32)
    np.testing.assert_allclose(out32, poly(a, a).astype(np.float32))
    inplace = np.arange(6, dtype=np.float64)
    poly_ufunc(inplace, 1.0, out=inplace)                      # exact alias
    np.testing.assert_allclose(inplace, poly(np.arange(6.0), 1.0))
    shifted = np.arange(10, dtype=np.float64)
    poly_ufunc(shifted[:-1], 0.0, out=shifted[1:])             # partial overlap: NumPy semantics
    ref = np.arange(10, dtype=np.float64)
    np.testing.assert_allclose(shifted[1:], poly(ref[:-1], 0.0))
    dev = cuda.to_device(np.arange(8.0))
    poly_ufunc(dev[1:], 0.0, out=dev[:-1])
    np.testing.assert_allclose(dev.copy_to_host()[:-1], poly(np.arange(1.0, 8.0), 0.0))


def test_stream_argument():
    s = cuda.stream()
    dev = cuda.to_device(np.arange(4.0), stream=s)
    result = poly_ufunc(dev, 1.0, stream=s)
    s.synchronize()
    np.testing.assert_allclose(result.copy_to_host(), poly(np.arange(4.0), 1.0))


# ---------------------------------------------------------------- attributes

def test_attributes_and_inspection():
    @vectorize(["float32(float32, float32)", "float64(float64, float64)"], identity=0)
    def add(a, b):
        """Adds."""
        return a + b

    assert add.__name__ == "add" and add.py_func.__doc__ == "Adds."
    # __doc__ is what help() shows: the call signature first, as NumPy's ufuncs have it
    assert add.__doc__.startswith("add(a, b, /, out=None, *, where=True") and "Adds." in add.__doc__
    assert (add.nin, add.nout, add.nargs, add.ntypes) == (2, 1, 3, 2)
    assert add.types == ["ff->f", "dd->d"] and add.identity == 0
    assert [str(s) for s in add.signatures] == ["float32(float32, float32)",
                                                "float64(float64, float64)"]
    cuda_src = add.inspect_cuda()
    assert set(cuda_src) == {"float32(float32, float32)", "float64(float64, float64)"}
    assert all("__device__" in src for src in cuda_src.values())
    ptx = add.inspect_ptx(cc=(9, 0))
    assert all(".target sm_90" in p for p in ptx.values())
    assert "add" in repr(add)


def test_every_generated_kernel_compiles_with_nvrtc():
    from numbacuda_ufunc import _core

    a = np.arange(12.0).reshape(3, 4)
    poly_ufunc(a, a)            # contiguous, vectorized
    poly_ufunc(a[:, ::2], 1.0)  # strided with a by-value scalar
    poly_ufunc(a.astype(np.float32), a.T.T)  # cast on load
    sources = poly_ufunc._kernel_sources()
    assert len(sources) >= 3
    for entry, source in sources:
        ptx = _core.compile_ptx(source, (9, 0))
        assert f".entry {entry}(" in ptx


# ---------------------------------------------------------------- errors

def test_call_errors():
    a = np.ones(3, np.float32)
    with pytest.raises(TypeError, match=r"poly\(\) takes 2 input arguments \(got 1\)"):
        poly_ufunc(a)
    with pytest.raises(TypeError, match=r"takes 2 input arguments \(got 4\)"):
        poly_ufunc(a, a, a, a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        poly_ufunc(a, a, bogus=True)
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(3,\) \(4,\)"):
        poly_ufunc(a, np.ones(4, np.float32))
    with pytest.raises(ValueError, match=r"out has shape \(2,\), but the inputs broadcast to \(3,\)"):
        poly_ufunc(a, a, out=np.empty(2, np.float32))
    with pytest.raises(TypeError, match="cannot cast the loop's output float32 to out's dtype int32"):
        poly_ufunc(a, a, out=np.empty(3, np.int32))
    with pytest.raises(TypeError, match="both a positional and keyword"):
        poly_ufunc(a, a, np.empty(3, np.float32), out=np.empty(3, np.float32))
    with pytest.raises(TypeError, match=r"no loop matches the input types \(float32, <U1\)"):
        poly_ufunc(a, np.array(["x", "y", "z"]))
    ro = np.empty(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        poly_ufunc(a, a, out=ro)


def test_decoration_errors():
    # Numba's message, then our explanation as the exception's note (pytest matches both).
    with pytest.raises(TypeError, match="(?s)not supported: 'nopythn'.*unexpected option"):
        vectorize(["f8(f8)"], nopythn=True)
    with pytest.raises(KeyError, match="Unrecognized options"):  # Numba's @vectorize type
        vectorize(["f8(f8)"], nopythn=True)
    with pytest.warns(RuntimeWarning, match="nopython kwarg for cuda target is redundant"):
        vectorize(["f8(f8)"], nopython=True)
    with pytest.raises(ValueError, match="target must be one of"):
        vectorize(["f8(f8)"], target="gpu")(lambda x: x)
    with pytest.raises(TypeError, match="has 2 argument"):
        vectorize(["f8(f8, f8)"])(lambda x: x)
    with pytest.raises(TypeError, match="scalar types only"):
        vectorize(["void(f8[:])"])(lambda x: x)
    with pytest.raises(TypeError, match="plain positional parameters"):
        vectorize(["f8(f8)"])(lambda *xs: xs[0])
    with pytest.raises(nu.errors.CompileError):
        @vectorize(["f8(f8)"])
        def uses_a_list(x):
            return [x][0]


def test_types_are_exported():
    assert int32(int32, int32).args == (int32, int32)
    assert int64 is nu.int64 and float64 is nu.float64


_PIPELINE_CHECK = r"""
import numpy as np
from numbacuda_ufunc import cuda, vectorize

@vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
def poly(a, b):
    return a * a - 3.0 * b + 0.5

rng = np.random.default_rng(0)
n = 10 * 1000 + 7                      # ten chunks of 1000 and a tail
a = rng.standard_normal(n).astype(np.float32)
b = rng.standard_normal(n)             # float64: the float64 loop, a cast on load
expected = poly.py_func(a.astype(np.float64), b)
np.testing.assert_allclose(poly(a, b), expected, rtol=1e-12)
grid = a[:10000].reshape(5, 2000)[:, ::2]  # strided: one launch, no chunks
np.testing.assert_allclose(poly(grid, 2.0), poly.py_func(grid, np.float32(2.0)), rtol=1e-6)
d_b = cuda.to_device(b)
out = np.full(n, np.nan)
poly(a, d_b, out=out)                  # a device input, a host out
np.testing.assert_allclose(out, expected, rtol=1e-12)
x = b.copy()
poly(x, 1.0, out=x)                    # exact aliasing is allowed
np.testing.assert_allclose(x, poly.py_func(b, 1.0), rtol=1e-12)
print("pipelined calls:", poly._pipelined_calls)
"""


def test_host_arrays_move_in_overlapped_chunks(tmp_path):
    # The chunked two-stream pipeline runs under emulation when a chunk size is forced, so
    # its chunk arithmetic is checked here; its overlap is measured on a GPU (benchmarks).
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBACUDA_UFUNC_ENABLE_CUDASIM="1", NUMBACUDA_UFUNC_PIPELINE_CHUNK="1000")
    script = tmp_path / "pipeline_check.py"  # a file: the translator reads the source
    script.write_text(_PIPELINE_CHECK)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert "pipelined calls: 3" in out.stdout  # the strided call is not pipelined


@pytest.mark.gpu
def test_cupy_in_cupy_out_on_the_gpu():
    cp = pytest.importorskip("cupy")
    a = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    got = poly_ufunc(a, a[:, ::-1])
    assert isinstance(got, cp.ndarray)
    expected = poly(cp.asnumpy(a), cp.asnumpy(a[:, ::-1]))
    np.testing.assert_allclose(cp.asnumpy(got), expected, rtol=1e-6)
    out = cp.full((3, 4), cp.nan, dtype=cp.float64)
    assert poly_ufunc(a, 1.0, out=out) is out
    np.testing.assert_allclose(cp.asnumpy(out), poly(cp.asnumpy(a), 1.0), rtol=1e-6)


@pytest.mark.gpu
def test_large_host_arrays_on_the_gpu_take_the_pipeline():
    n = 2**24 + 3  # several 16 MiB chunks and a tail
    rng = np.random.default_rng(12)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    before = poly_ufunc._pipelined_calls
    np.testing.assert_allclose(poly_ufunc(a, b), a * a - np.float32(3) * b + np.float32(0.5),
                               rtol=1e-6)
    assert poly_ufunc._pipelined_calls == before + 1


# ---------------------------------------------------------------- property test

def mixed(a, b, c):
    return a * b - c if a > c else a + b * c


mixed_ufunc = vectorize(["int32(int32, int32, int32)", "int64(int64, int64, int64)",
                         "float32(float32, float32, float32)",
                         "float64(float64, float64, float64)"])(mixed)


def random_view(rng, shape, dtype):
    """A view of `shape` with random steps (negative too) into a larger random array."""
    steps = [int(rng.choice([1, 2, -1, -3])) for _ in shape]
    base_shape = [n * abs(s) + 1 for n, s in zip(shape, steps)]
    if np.dtype(dtype).kind == "f":
        base = rng.standard_normal(base_shape).astype(dtype)
    else:
        base = rng.integers(-50, 50, base_shape).astype(dtype)
    view = base[tuple(slice(None, None, s) for s in steps)][tuple(slice(0, n) for n in shape)]
    return np.asfortranarray(view) if rng.random() < 0.2 else view


@pytest.mark.parametrize("seed", range(40))
def test_random_shapes_strides_and_dtype_mixes_match_numpy(seed):
    rng = np.random.default_rng(1000 + seed)
    out_shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(0, 4)))
    dtypes = [np.int8, np.int16, np.int32, np.uint8, np.float32, np.float64]
    args = []
    for _ in range(3):
        # Each operand takes a suffix of the result's shape, some dimensions set to 1.
        ndim = int(rng.integers(0, len(out_shape) + 1))
        shape = tuple(n if rng.random() < 0.7 else 1 for n in out_shape[len(out_shape) - ndim:])
        args.append(random_view(rng, shape, dtypes[rng.integers(len(dtypes))]))
    got = mixed_ufunc(*args)
    loop_dtype = first_safe_loop(mixed_ufunc, [a.dtype for a in args])
    assert got.dtype == loop_dtype
    expected = oracle(mixed, loop_dtype, *args)
    assert got.shape == np.broadcast_shapes(*[a.shape for a in args])
    np.testing.assert_allclose(got, expected, rtol=1e-6 if loop_dtype == np.float32 else 1e-12)


def first_safe_loop(uf, dtypes):
    """NumPy's rule as DESIGN states it: an exact match, else the first loop in declaration
    order to which every input casts safely."""
    for exact in (True, False):
        for loop in uf.types:
            ins, out = loop.split("->")
            types = [np.dtype(c) for c in ins]
            if all((d == t) if exact else np.can_cast(d, t, "safe") for d, t in zip(dtypes, types)):
                return np.dtype(out)
    raise AssertionError("no loop")


def test_non_native_byte_order_inputs_are_converted_like_numpy():
    x = np.arange(5, dtype=">f8")
    np.testing.assert_array_equal(poly_ufunc(x, x), poly(x.astype("<f8"), x.astype("<f8")))
    assert poly_ufunc(x, 1.0).dtype == np.float64


@pytest.mark.parametrize("bad", ["bogus", [0], object()])
def test_invalid_identity_is_refused_at_decoration(bad):
    # Was accepted, failing only at the first reduction (issue 35); Numba's words.
    with pytest.raises(ValueError, match=r"vectorize\('f'\): Invalid identity value"):
        @vectorize(["float64(float64, float64)"], identity=bad)
        def f(a, b):
            return a + b


@pytest.mark.parametrize("good", [0, 1, None, "reorderable", -np.inf, np.float32(2.5), True])
def test_numeric_and_numba_identities_are_kept(good):
    @vectorize(["float64(float64, float64)"], identity=good)
    def f(a, b):
        return a + b

    assert f.identity is good or f.identity == good
