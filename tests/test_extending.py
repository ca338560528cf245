"""numbacuda_ufunc.cuda.extending (issue 16): Numba's @overload, @overload_method,
@overload_attribute and register_jitable. Typing functions get Numba-style types and pick
an implementation, which is translated as a device function. Oracles: the implementation
run as Python on the same inputs; every kernel is compiled by NVRTC for sm_90."""

import math

import numpy as np
import pytest

from numbacuda_ufunc import _core, cuda, types, vectorize
from numbacuda_ufunc.cuda import extending
from numbacuda_ufunc.cuda.extending import (
    overload,
    overload_attribute,
    overload_method,
    register_jitable,
)
from numbacuda_ufunc.errors import CompileError

rng = np.random.default_rng(1616)


def compiles(kernel):
    sources = kernel.inspect_cuda().values()
    assert sources
    for src in sources:
        _core.compile_ptx(src, (9, 0))


# --------------------------------------------------------------------------------------
# Typing by type class
# --------------------------------------------------------------------------------------

def scale(x):
    """Overloaded below: doubles integers, halves floats, refuses complex numbers."""
    raise AssertionError("not called in Python")


def _scale_int(x):
    return x * 2


def _scale_float(x):
    return x * 0.5


SEEN = []


@overload(scale)
def ol_scale(x):
    SEEN.append(x)
    if isinstance(x, types.Integer):
        return _scale_int
    if isinstance(x, types.Float):
        return _scale_float
    return None


@cuda.jit
def scale_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = scale(x[i])


@pytest.mark.parametrize("dtype, oracle", [
    (np.int32, _scale_int), (np.int64, _scale_int), (np.uint16, _scale_int),
    (np.float32, _scale_float), (np.float64, _scale_float)])
def test_overload_typing_by_type_class(dtype, oracle):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is not None:
        x = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
        x[:2] = (info.min, info.max)
    else:
        x = np.concatenate([np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310]),
                            rng.standard_normal(58) * 1e3]).astype(dtype)
    out = np.full(x.size, 7, dtype)
    scale_kernel[1, 64](x, out)
    with np.errstate(over="ignore"):
        want = np.array([oracle(v) for v in x], dtype)
    np.testing.assert_array_equal(out, want)
    assert types.from_dtype(np.dtype(dtype)) in SEEN
    compiles(scale_kernel)


def test_overload_no_match_names_function_and_types():
    @cuda.jit
    def k(x, out):
        out[0] = scale(x[0])

    with pytest.raises(CompileError, match=r"No implementation of function 'scale' found "
                                           r"for signature \(complex128\)"):
        k[1, 1](np.ones(1, np.complex128), np.zeros(1, np.complex128))


def test_overload_in_a_ufunc():
    @vectorize(["float32(float32)", "int16(int16)"])
    def u(x):
        return scale(x) + 1

    x = np.linspace(-5, 5, 11, dtype=np.float32)
    np.testing.assert_array_equal(u(x), x * np.float32(0.5) + np.float32(1))
    i = np.arange(-5, 6, dtype=np.int16)
    np.testing.assert_array_equal(u(i), (i * 2 + 1).astype(np.int16))


def test_type_classes_isinstance():
    for t in (types.int8, types.uint64, types.int32):
        assert isinstance(t, types.Integer) and isinstance(t, types.Number)
        assert not isinstance(t, types.Float)
    assert types.int32.bitwidth == 32 and types.int32.signed and not types.uint8.signed
    for t in (types.float16, types.float32, types.float64):
        assert isinstance(t, types.Float) and not isinstance(t, types.Integer)
    assert isinstance(types.complex64, types.Complex)
    assert isinstance(types.boolean, types.Boolean) and not isinstance(types.boolean,
                                                                      types.Number)
    assert isinstance(types.float32[:], types.Array)
    assert not isinstance(types.float32[:], types.Number)
    lit = types.IntegerLiteral(3)
    assert isinstance(lit, types.Integer) and isinstance(lit, types.Literal)
    assert lit.literal_value == 3 and lit.literal_type == types.int64
    assert not isinstance(types.int64, types.Literal)
    assert isinstance(types.none, types.NoneType)
    assert types.Omitted(5).value == 5
    with pytest.raises(TypeError, match="must be an int"):
        types.IntegerLiteral(1.5)


# --------------------------------------------------------------------------------------
# Literals, tuples
# --------------------------------------------------------------------------------------

def pick(x, n):
    raise AssertionError("not called in Python")


LITERAL_SEEN = []


@overload(pick, prefer_literal=True)
def ol_pick(x, n):
    LITERAL_SEEN.append(n)
    if isinstance(n, types.IntegerLiteral):
        if n.literal_value == 0:
            return lambda x, n: x + 100
        return lambda x, n: x * n
    if isinstance(n, types.Integer):
        return lambda x, n: x - n
    return None


def later(x, n):
    raise AssertionError("not called in Python")


@overload(later)
def ol_later(x, n):  # prefer_literal=False: the plain type first, the literal if refused
    LITERAL_SEEN.append(("later", n))
    if isinstance(n, types.IntegerLiteral):
        return lambda x, n: x + n * 1000
    return None


def test_overload_literals():
    @cuda.jit
    def k(x, n, out):
        out[0] = pick(x[0], 0)
        out[1] = pick(x[0], 3)
        out[2] = pick(x[0], n)
        out[3] = later(x[0], 2)

    out = np.zeros(4, np.int64)
    k[1, 1](np.array([5], np.int64), 4, out)
    np.testing.assert_array_equal(out, [105, 15, 1, 2005])
    assert types.IntegerLiteral(0) in LITERAL_SEEN and types.IntegerLiteral(3) in LITERAL_SEEN
    assert types.int64 in LITERAL_SEEN  # the kernel argument n is not a constant
    assert ("later", types.int64) in LITERAL_SEEN
    assert ("later", types.IntegerLiteral(2)) in LITERAL_SEEN
    compiles(k)


def tuple_sum(t):
    raise AssertionError("not called in Python")


@overload(tuple_sum)
def ol_tuple_sum(t):
    if isinstance(t, types.UniTuple) and isinstance(t.dtype, types.Float):
        def impl(t):
            s = 0.0
            for v in t:
                s += v
            return s
        return impl
    if isinstance(t, types.Tuple):
        return lambda t: len(t)
    return None


def test_overload_tuples():
    @cuda.jit
    def k(x, out):
        out[0] = tuple_sum((x[0], x[1], x[2]))
        out[1] = tuple_sum((x[0], 1))

    x = np.array([0.5, 1.25, -3.0])
    out = np.zeros(2)
    k[1, 1](x, out)
    np.testing.assert_array_equal(out, [x.sum(), 2.0])
    compiles(k)


# --------------------------------------------------------------------------------------
# Defaults and keywords, targets, overloads calling overloads
# --------------------------------------------------------------------------------------

def defaults(out, x, y=5, z=6):
    raise AssertionError("not called in Python")


@overload(defaults)
def ol_defaults(out, x, y=5, z=6):
    def impl(out, x, y=5, z=6):
        out[0], out[1], out[2] = x + y, z, y
    return impl


def test_overload_default_values_and_keywords():
    @cuda.jit
    def k(a, b, out):
        defaults(out[0], a, z=b)
        defaults(out[1], a, b)
        defaults(x=b, out=out[2])

    out = np.zeros((3, 3), np.int64)
    k[1, 1](1, 2, out)
    np.testing.assert_array_equal(out, [[6, 2, 5], [3, 6, 2], [7, 6, 5]])
    compiles(k)


def which():
    raise AssertionError("not called in Python")


def calls_which():
    raise AssertionError("not called in Python")


@overload(which, target="generic")
def ol_which_generic():
    return lambda: 1


@overload(which, target="cuda")
def ol_which_cuda():
    return lambda: 2


@overload(which, target="cpu")
def ol_which_cpu():
    return lambda: 3


@overload(calls_which, target="generic")
def ol_calls_which():
    return lambda: which() * 10


def cpu_only():
    raise AssertionError("not called in Python")


@overload(cpu_only, target="cpu")
def ol_cpu_only():
    return lambda: 1


def test_overload_targets():
    @cuda.jit
    def k(out):
        out[0] = which()
        out[1] = calls_which()

    out = np.zeros(2, np.int32)
    k[1, 1](out)
    np.testing.assert_array_equal(out, [2, 20])  # cuda before generic; cpu never
    compiles(k)

    @cuda.jit
    def bad(out):
        out[0] = cpu_only()

    with pytest.raises(CompileError, match="only for other targets"):
        bad[1, 1](out)
    with pytest.raises(ValueError, match="target must be"):
        overload(which, target="fpga")


def raises_in_typing(x):
    raise AssertionError("not called in Python")


@overload(raises_in_typing)
def ol_raises_in_typing(x):
    raise TypeError(f"cannot type raises_in_typing({x})")


def returns_garbage(x):
    raise AssertionError("not called in Python")


@overload(returns_garbage)
def ol_returns_garbage(x):
    return 42


def test_overload_typing_function_errors():
    @cuda.jit
    def k(x):
        x[0] = raises_in_typing(x[0])

    with pytest.raises(CompileError, match=r"cannot type raises_in_typing\(complex128\)"):
        k[1, 1](np.ones(1, np.complex128))

    @cuda.jit
    def k2(x):
        x[0] = returns_garbage(x[0])

    with pytest.raises(CompileError, match="must return a Python function"):
        k2[1, 1](np.ones(1))
    with pytest.raises(ValueError, match="inline must be"):
        overload(which, inline="sometimes")


# --------------------------------------------------------------------------------------
# Methods and attributes
# --------------------------------------------------------------------------------------

@overload_method(types.Array, "sumsq")
def ol_array_sumsq(a, start=0):
    if isinstance(a.dtype, (types.Integer, types.Float)) and a.ndim == 1:
        def impl(a, start=0):
            s = start
            for i in range(a.shape[0]):
                s += a[i] * a[i]
            return s
        return impl
    return None


@overload_method(types.Float, "clamp01")
def ol_float_clamp01(x):
    def impl(x):
        return min(max(x, 0.0), 1.0)
    return impl


@overload_attribute(types.Array, "nbytes2")
def ol_array_nbytes2(a):
    size = a.dtype.bitwidth // 8
    return lambda a: a.size * size * 2


@overload_attribute(types.Integer, "is_odd")
def ol_int_is_odd(x):
    return lambda x: x % 2 != 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_overload_method_on_arrays(dtype):
    @cuda.jit
    def k(a, out):
        out[0] = a.sumsq()
        out[1] = a.sumsq(10)
        out[2] = a.sumsq(start=-1)

    a = (rng.standard_normal(37) * 10).astype(dtype)
    out = np.full(3, np.nan)
    k[1, 1](a, out)
    want = [sum(v * v for v in a.tolist()) + s for s in (0, 10, -1)]
    np.testing.assert_allclose(out, want, rtol=1e-6 if dtype == np.float32 else 1e-12)
    compiles(k)


def test_overload_method_on_scalars_and_attributes():
    @cuda.jit
    def k(x, n, out, odd):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = x[i].clamp01()
            odd[i] = n[i].is_odd
        if i == 0:
            odd[x.size] = x.nbytes2

    x = np.array([-1.0, -0.0, 0.25, 1.0, 3.0, np.inf, -np.inf, np.nan, 0.999])
    n = np.array([0, 1, -1, 2, -3, 2**31 - 1, -2**31, 8, 9], np.int32)
    out = np.zeros_like(x)
    odd = np.full(x.size + 1, -1, np.int64)
    k[1, x.size](x, n, out, odd)
    want = [min(max(v, 0.0), 1.0) for v in x]  # Python's min/max: nan stays where it is
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(odd[:-1], [int(v % 2 != 0) for v in n.tolist()])
    assert odd[-1] == x.nbytes * 2
    compiles(k)


def test_overload_method_not_for_this_type():
    @cuda.jit
    def k(a, out):
        out[0] = a.sumsq()

    with pytest.raises(CompileError, match=r"No implementation of method "
                                           r"'complex128\[:\]\.sumsq'"):
        k[1, 1](np.ones(2, np.complex128), np.zeros(1, np.complex128))

    @cuda.jit
    def k2(x, out):
        out[0] = x[0].clamp01()  # an int: no overload_method applies, no such method

    with pytest.raises(CompileError):
        k2[1, 1](np.ones(2, np.int32), np.zeros(1))


# --------------------------------------------------------------------------------------
# register_jitable and the LLVM-only API
# --------------------------------------------------------------------------------------

@register_jitable
def hypot3(x, y, z):
    return math.sqrt(x * x + y * y + z * z)


@register_jitable(inline="always")
def lerp(a, b, t):
    return a + (b - a) * t


def test_register_jitable_python_and_kernel():
    assert hypot3(1.0, 2.0, 2.0) == 3.0  # still a Python function
    assert lerp(0.0, 10.0, 0.25) == 2.5

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            out[i] = lerp(hypot3(x[i, 0], x[i, 1], x[i, 2]), 1.0, 0.5)

    x = rng.standard_normal((40, 3)) * 100
    x[0] = (np.inf, 1, 1)
    x[1] = (0, -0.0, 0)
    out = np.full(40, np.nan)
    k[1, 40](x, out)
    want = [lerp(hypot3(*row), 1.0, 0.5) for row in x.tolist()]
    np.testing.assert_allclose(out, want, rtol=1e-15)
    compiles(k)


def test_llvm_only_api_imports_and_refuses_use():
    @extending.intrinsic
    def my_intrinsic(typingctx, x):
        raise AssertionError("never run")

    def lowered(x):
        raise AssertionError("never run")

    extending.type_callable(lowered)(lambda context: None)  # registrations are accepted
    extending.lower_builtin(lowered, types.Float)(lambda *a: None)
    extending.make_attribute_wrapper(types.Type, "x", "x")
    extending.typeof_impl.register(complex)(lambda val, c: None)

    @extending.register_model(types.Type)  # StructModels are made (see below); others not
    class Model(extending.models.OpaqueModel):
        pass

    with pytest.raises(NotImplementedError, match="LLVM"):
        Model(None, None)
    with pytest.raises(NotImplementedError, match="LLVM"):
        my_intrinsic(1.0)

    @cuda.jit
    def k(x):
        x[0] = my_intrinsic(x[0])

    with pytest.raises(NotImplementedError, match=r"'my_intrinsic' is implemented with "
                                                  r"Numba's low-level API \(intrinsic\)"):
        k[1, 1](np.ones(1))

    @cuda.jit
    def k2(x):
        x[0] = lowered(x[0])

    with pytest.raises(NotImplementedError, match=r"low-level API \((type_callable|"
                                                  r"lower_builtin)\).*LLVM"):
        k2[1, 1](np.ones(1))


def _scaled_by_target():
    pass


def _calls_scaled():
    pass


@overload(_scaled_by_target, target="generic")
def _ol_scaled_generic(x):
    def impl(x):
        x[0] *= 2
    return impl


@overload(_scaled_by_target, target="cuda")
def _ol_scaled_cuda(x):
    def impl(x):
        x[0] *= 3
    return impl


@overload(_calls_scaled, target="cpu")
def _ol_calls_cpu(x):
    def impl(x):
        x[0] *= 5
        _scaled_by_target(x)
    return impl


@overload(_calls_scaled, target="generic")
def _ol_calls_generic(x):
    def impl(x):
        x[0] *= 7
        _scaled_by_target(x)
    return impl


def test_njit_from_python_runs_the_cpu_overloads():
    # numba-cuda's test_target_overloaded_calls_target_overloaded_cpu: njit code calling
    # overloaded functions runs their 'cpu', else 'generic', implementations
    from numbacuda_ufunc import njit

    def body(x):
        _calls_scaled(x)

    x = np.ones(1, np.int32)
    njit(body)(x)
    assert x[0] == 5 * 2  # cpu, then generic (the cuda one is not for the CPU)
    k = cuda.jit(body)
    y = np.ones(1, np.int32)
    k[1, 1](y)
    assert y[0] == 7 * 3  # in a kernel: generic (no cuda one), then cuda

    def no_cpu(x):
        _only_cuda(x)

    with pytest.raises(TypeError, match="No implementation of function '_only_cuda' found "
                                        r"for signature \(int32\[::1\]\) on the CPU"):
        njit(no_cpu)(x)


def _only_cuda():
    pass


@overload(_only_cuda, target="cuda")
def _ol_only_cuda(x):
    return lambda x: None


# ---- StructModel types as array dtypes (numba-cuda's extensions_usecases) ----

class _PairType(types.Type):
    def __init__(self):
        super().__init__(name="PairType")


pair_type = _PairType()


@extending.register_model(_PairType)
class _PairModel(extending.core_models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("x", types.int32), ("y", types.float64)])


extending.make_attribute_wrapper(_PairType, "y", "weight")


@pytest.mark.parametrize("space", ["local", "shared"])
def test_struct_model_type_as_array_dtype(space):
    if space == "local":
        @cuda.jit(types.void(pair_type[::1]))
        def k(a):
            tmp = cuda.local.array(4, dtype=pair_type)
            for i in range(a.size):
                tmp[i] = a[a.size - 1 - i]
            for i in range(a.size):
                a[i] = tmp[i]
                a[i].weight = tmp[i].x * 0.5 + a[i].y
    else:
        @cuda.jit(types.void(pair_type[::1]))
        def k(a):
            tmp = cuda.shared.array(4, dtype=pair_type)
            i = cuda.threadIdx.x
            tmp[i] = a[a.size - 1 - i]
            cuda.syncthreads()
            a[i] = tmp[i]
            a[i].weight = tmp[i].x * 0.5 + a[i].y

    typemap = next(iter(k.overloads.values()))._type_annotation.typemap
    assert typemap["tmp"].dtype == pair_type  # the record shows the user's type
    dtype = pair_type[::1].dtype.dtype
    assert dtype.names == ("x", "y") and dtype.isalignedstruct
    a = np.zeros(4, dtype)
    a["x"] = [1, 2, 3, -4]
    a["y"] = [0.5, -1.0, 2.25, 8.0]
    want_x = a["x"][::-1].copy()
    want_y = a["y"][::-1] + want_x * 0.5
    k[1, 4 if space == "shared" else 1](a)
    np.testing.assert_array_equal(a["x"], want_x)
    np.testing.assert_array_equal(a["y"], want_y)


def test_struct_model_needs_a_registered_model():
    class Unmodelled(types.Type):
        pass

    with pytest.raises(TypeError, match="not subscriptable"):
        Unmodelled("u")[::1]

    class Bad(types.Type):
        pass

    @extending.register_model(Bad)
    class BadModel(extending.models.StructModel):
        def __init__(self, dmm, fe_type):
            super().__init__(dmm, fe_type, [("x", types.int32[:])])

    with pytest.raises(TypeError, match=r"StructModel members must be \(name, scalar type\)"):
        Bad("b")[::1]
