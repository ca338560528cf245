"""Adversarial inputs to the device API (arrays, indexing, launches): each bad input is a
typed exception naming the argument and what was wrong, and each valid one behaves as
NumPy (array semantics) or Numba (launches) does. Found by a robustness pass; each test
is the reproducer of one defect."""

import numpy as np
import pytest

from numbacuda_ufunc import cuda


def _dev(shape=(3, 4, 5)):
    host = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return host, cuda.to_device(host)


# ------------------------------------------------ integers: a 1-d ndarray is not one

@pytest.mark.parametrize("make", [cuda.device_array, cuda.pinned_array, cuda.mapped_array,
                                  cuda.managed_array])
def test_shape_given_as_ndarray_is_a_sequence(make):
    # NumPy takes a 1-d integer array as a shape; it was read as one integer that
    # "exceeds the maximum allowed dimension".
    a = make(np.array([2, 3]), dtype=np.float32)
    assert a.shape == np.empty(np.array([2, 3])).shape == (2, 3)


@pytest.mark.parametrize("shape, message", [
    (np.array(1.23), r"shape must be an int or a tuple of ints \(got array\(1\.23\)\)"),
    (np.array([1.1]), r"shape entries must be integers \(got np\.float64\(1\.1\)\)"),
    (np.array([[2, 3]]), r"shape must be an int or a tuple of ints"),
], ids=["0d-float", "1d-float", "2d"])
def test_shape_given_as_a_non_integer_ndarray_is_a_type_error(shape, message):
    # A 0-d float array was iterated as a sequence: IndexError "too many indices for array"
    # (numba-cuda's test_device_array_float asks for TypeError).
    with pytest.raises(TypeError, match=message):
        cuda.device_array(shape)


@pytest.mark.parametrize("key", [np.array([0, 2]), np.array([], dtype=np.intp),
                                 np.array(1.5), np.array([True, False, True])],
                         ids=["int-array", "empty-int-array", "0d-float", "bool-array"])
def test_getitem_array_index_is_refused_by_kind(key):
    _, d = _dev()
    # Was "index array([0, 2]) is out of bounds (it does not fit in int64)".
    with pytest.raises(IndexError, match=r"only integers, slices, None and '\.\.\.' are valid"):
        d[key]
    with pytest.raises(IndexError, match=r"only integers, slices, None and '\.\.\.' are valid"):
        d[key] = 1.0


def test_getitem_0d_integer_array_is_an_integer():
    host, d = _dev()
    np.testing.assert_array_equal(d[np.array(1)].copy_to_host(), host[np.array(1)])
    np.testing.assert_array_equal(d[np.int8(-1), np.uint64(2)].copy_to_host(), host[-1, 2])


# ------------------------------------------------------------ launch configurations

@cuda.jit
def _increment(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


@pytest.mark.parametrize("config", [(2**40, 1), (2**63, 1), ((1, 2**33), 1), (1, 2**64)],
                         ids=["grid-2**40", "grid-2**63", "grid-y-2**33", "block-2**64"])
def test_launch_dimension_too_large_says_so(config):
    d = cuda.to_device(np.zeros(4))
    # Was "blocks per grid must be non-negative (got 1099511627776)", and for 2**63
    # "griddim must be a sequence of integers".
    with pytest.raises(ValueError, match=r"(blocks per grid|threads per block) \d+ is too large: "
                                         r"a launch dimension is at most 4294967295"):
        _increment[config](d)


def test_launch_negative_grid_still_says_non_negative():
    d = cuda.to_device(np.zeros(4))
    with pytest.raises(ValueError, match=r"blocks per grid must be non-negative \(got -1\)"):
        _increment[-1, 4](d)


def test_launch_dynamic_shared_memory_types():
    d = cuda.to_device(np.zeros(4))
    with pytest.raises(TypeError, match=r"dynamic shared memory must be an integer number of "
                                        r"bytes \(got 'x'\)"):
        _increment[1, 4, 0, "x"](d)
    with pytest.raises(ValueError, match=r"dynamic shared memory must be 0 to 2147483647 bytes "
                                         r"\(got 1099511627776\)"):
        _increment[1, 4, 0, 2**40](d)
    with pytest.raises(ValueError, match=r"dynamic shared memory must be 0 to 2147483647 bytes "
                                         r"\(got -1\)"):
        _increment[1, 4, 0, -1](d)


# ------------------------------------------- recursion on the host backend's stacks

@cuda.jit(device=True)
def _depth(n):
    if n <= 0:
        return 0
    return _depth(n - 1) + 1


@cuda.jit
def _recurse(a):
    a[0] = _depth(int(a[2]))


@cuda.jit
def _recurse_with_barrier(a):
    cuda.syncthreads()  # the threads run as fibers, each on its own 768 KiB stack
    a[cuda.threadIdx.x] = _depth(int(a[2]))


@cuda.jit
def _calls_itself(a):
    _calls_itself(a)


@pytest.mark.emulation
@pytest.mark.parametrize("kernel, threads", [(_recurse, 1), (_recurse_with_barrier, 2)],
                         ids=["loop", "fibers"])
def test_runaway_recursion_is_an_error_not_a_crash(kernel, threads):
    d = cuda.to_device(np.array([0.0, 0.0, 10.0]))
    kernel[1, threads](d)  # bounded recursion runs
    np.testing.assert_array_equal(d.copy_to_host()[:threads], [10.0] * threads)
    d = cuda.to_device(np.array([-1.0, -1.0, 1e7]))
    # Was a segfault of the process (the stack overflowed into its guard page).
    with pytest.raises(RuntimeError, match=r"recursion in '_depth' is too deep: it used the "
                                           r"\d+ KiB of stack an emulated thread has "
                                           r"\(thread \(0, 0, 0\) of block \(0, 0, 0\)\)"):
        kernel[1, threads](d)
    # The process and the module stay usable.
    d = cuda.to_device(np.array([0.0, 0.0, 5.0]))
    kernel[1, threads](d)
    np.testing.assert_array_equal(d.copy_to_host()[:threads], [5.0] * threads)


@pytest.mark.emulation
def test_kernel_calling_itself_is_an_error_not_a_crash():
    d = cuda.to_device(np.zeros(2))
    with pytest.raises(RuntimeError, match=r"recursion in '_calls_itself' is too deep"):
        _calls_itself[1, 1](d)


# ------------------------------------------- one-item constant tuples are values too

@cuda.jit
def _one_item_tuples(a, out):
    t = (2.5,)
    out[0] = t[0]
    i = (1,)
    out[i] = 7.0
    cuda.atomic.add(a, (0,), 1.0)
    cuda.atomic.max(a, (1,), 3.0)


def test_constant_one_item_tuple_as_a_value():
    # `t = (2.5,)` and `cuda.atomic.add(a, (0,), v)` generated `v_t = ;` and `a(().v0)`:
    # the host compiler (and NVRTC) failed on the code.
    a = cuda.to_device(np.array([0.0, -1.0]))
    out = cuda.to_device(np.full(2, np.nan))
    _one_item_tuples[1, 1](a, out)
    np.testing.assert_array_equal(a.copy_to_host(), [1.0, 3.0])
    np.testing.assert_array_equal(out.copy_to_host(), [2.5, 7.0])


def test_constant_one_item_tuple_compiles_to_ptx():
    ptx, _ = cuda.compile_ptx(_one_item_tuples.py_func, "void(float64[:], float64[:])",
                              cc=(9, 0))
    assert "atom.global.add.f64" in ptx or "atom.add.f64" in ptx


# ------------------------------------------------ reshape and ravel: order 'A' and 'K'

_VIEWS = {
    "C": lambda a: a,
    "F": lambda a: a.T,  # Fortran-contiguous
    "strided": lambda a: a[:, ::2],
    "reversed": lambda a: a[::-1, :, ::-1],
    "1d": lambda a: a[0, 0],
    "0d": lambda a: a[0, 0, 0:1].reshape(()),
}


@pytest.mark.parametrize("view", list(_VIEWS))
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_orders_match_numpy(view, order):
    host, d = _dev()
    h, v = _VIEWS[view](host), _VIEWS[view](d)
    # 'A' (Numba and NumPy accept it) and 'K' were ValueError: order must be 'C' or 'F'.
    np.testing.assert_array_equal(v.ravel(order=order).copy_to_host(), h.ravel(order=order))


@pytest.mark.parametrize("view", ["C", "F", "strided", "1d"])
def test_reshape_order_a_matches_numpy(view):
    host, d = _dev()
    h, v = _VIEWS[view](host), _VIEWS[view](d)
    shape = (-1, 2) if h.size % 2 == 0 else (-1,)
    np.testing.assert_array_equal(v.reshape(shape, order="A").copy_to_host(),
                                  h.reshape(shape, order="A"))


def test_reshape_ravel_bad_order_names_the_choices():
    _, d = _dev()
    with pytest.raises(ValueError, match=r"reshape\(\): order must be 'C', 'F' or 'A' \(got 'K'\)"):
        d.reshape(60, order="K")
    with pytest.raises(ValueError, match=r"ravel\(\): order must be 'C', 'F' or 'A' or 'K' "
                                         r"\(got 'x'\)"):
        d.ravel(order="x")


# ------------------------------------------------------------------ the *_like functions

@pytest.mark.parametrize("like", [cuda.device_array_like, cuda.pinned_array_like,
                                  cuda.mapped_array_like])
@pytest.mark.parametrize("source", [5, [1.0, 2.0], ((1, 2), (3, 4)), np.float32(2)],
                         ids=["int", "list", "nested", "np-scalar"])
def test_like_functions_take_what_asarray_takes(like, source):
    # pinned_array_like(5) and mapped_array_like([1, 2]) raised AttributeError ('int'
    # object has no attribute 'dtype').
    ref = np.empty_like(np.asarray(source))
    out = like(source)
    assert (out.shape, out.dtype, out.strides) == (ref.shape, ref.dtype, ref.strides)


@pytest.mark.parametrize("like", [cuda.device_array_like, cuda.pinned_array_like,
                                  cuda.mapped_array_like])
def test_like_functions_of_byteswapped_arrays_are_native(like):
    # device_array_like(a '>i4' array) was a TypeError while to_device(it) works and gives
    # int32: the like functions now agree with to_device.
    src = np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3))
    out = like(src)
    assert out.dtype == np.dtype("int32") == cuda.to_device(src).dtype
    assert (out.shape, out.strides) == (src.shape, src.strides)


@pytest.mark.parametrize("like", [cuda.device_array_like, cuda.pinned_array_like,
                                  cuda.mapped_array_like])
def test_like_functions_name_themselves_for_bad_dtypes(like):
    # Was "like_strides(): dtype: unsupported dtype '|O'" (or an AttributeError).
    with pytest.raises(TypeError, match=rf"{like.__name__}\(\): unsupported dtype object"):
        like(None)


# --------------------------------------------------------------------------- iteration

def test_iterating_a_0d_device_array_is_a_type_error():
    # list() of a 0-d device array was [] (d[0] raised IndexError at once); NumPy raises.
    with pytest.raises(TypeError, match=r"iteration over a 0-d device array"):
        list(cuda.to_device(np.array(3.0)))


def test_iteration_matches_numpy():
    host, d = _dev((3, 2))
    rows = list(d)
    assert len(rows) == 3
    for row, ref in zip(rows, host):
        np.testing.assert_array_equal(row.copy_to_host(), ref)
    assert list(cuda.to_device(np.arange(3.0))) == [0.0, 1.0, 2.0]
    assert list(cuda.device_array((0, 2))) == []


# --------------------------------------- copies: Numba's shape rule and dtype error type

@pytest.mark.parametrize("shape", [(1, 2, 3), (2, 1, 3), (2, 3, 1), (1, 2, 1, 3, 1)])
def test_copies_between_shapes_differing_by_unit_axes(shape):
    # Numba's check_array_compatibility compares squeezed shapes: these copies work there
    # and were ValueError here.
    host = np.arange(6.0).reshape(2, 3)
    d = cuda.to_device(host)
    out = np.full(shape, np.nan)[..., ::-1][..., ::-1]  # a view: written in place
    assert d.copy_to_host(out) is out
    np.testing.assert_array_equal(out.reshape(2, 3), host)
    e = cuda.device_array((2, 3))
    e.copy_to_device(host.reshape(shape))
    np.testing.assert_array_equal(e.copy_to_host(), host)
    e = cuda.device_array((2, 3))
    e.copy_to_device(cuda.to_device(host[::-1].reshape(shape)))
    np.testing.assert_array_equal(e.copy_to_host(), host[::-1])
    e = cuda.to_device(np.zeros((2, 3)))
    cuda.to_device(host.reshape(shape), to=e)
    np.testing.assert_array_equal(e.copy_to_host(), host)


def test_copies_still_refuse_other_shapes_and_dtypes():
    d = cuda.device_array((2, 3))
    with pytest.raises(ValueError, match=r"copy_to_device\(\): source has shape \(3, 2\), "
                                         r"the device array has \(2, 3\)"):
        d.copy_to_device(cuda.device_array((3, 2)))
    with pytest.raises(ValueError, match=r"copy_to_host\(\): ary has shape \(6,\)"):
        d.copy_to_host(np.empty(6))
    # A device source of another dtype was ValueError ("does not match destination"),
    # a host one TypeError: both are TypeError now, as in Numba.
    with pytest.raises(TypeError, match=r"copy_to_device\(\): source has dtype float32, the "
                                        r"device array has float64"):
        d.copy_to_device(cuda.device_array((2, 3), np.float32))


# ------------------------------------------- a[...] = value: NumPy's broadcast and message

@pytest.mark.parametrize("shape, value", [
    ((35,), np.ones((1, 2, 3))), ((5,), [1.0, 3.0]), ((4, 5), np.arange(3.0)),
    ((2, 3), np.ones((2, 2, 3))), ((4, 5), np.ones((1, 1, 5))), ((5,), np.ones((1, 5))),
    ((4, 5), np.arange(4.0).reshape(1, 4, 1)), ((2, 3), 7.0),
], ids=["highdim", "short", "row", "extra-axis", "lead-1s-row", "lead-1", "column", "scalar"])
@pytest.mark.parametrize("on_device", [False, True], ids=["host-value", "device-value"])
def test_setitem_broadcasts_and_words_errors_as_numpy(shape, value, on_device):
    # Host values said "operands could not be broadcast together with remapped shapes
    # [original->remapped]: ..." (np.broadcast_to's words); device values with extra leading
    # 1s ((1, 5) into (5,)), which NumPy assigns, were refused.
    host = np.zeros(shape)
    d = cuda.to_device(host)
    given = cuda.to_device(np.asarray(value)) if on_device else value
    try:
        host[...] = value
    except ValueError as exc:
        with pytest.raises(ValueError) as ours:
            d[...] = given
        assert str(ours.value) == str(exc)  # numba-cuda's slicing tests compare the text
        return
    d[...] = given
    np.testing.assert_array_equal(d.copy_to_host(), host)


# -------------------------------------------- extents whose byte arithmetic leaves int64

@pytest.mark.parametrize("shape, strides", [
    ((3,), (2**62,)), ((3,), (-2**62,)), ((2,), (2**63 - 1,)), ((2,), (-2**63,)),
    ((2, 2), (2**62, -2**62)), ((2**40,), (2**40,)),
], ids=["3x2**62", "3x-2**62", "2x(2**63-1)", "2x-2**63", "mixed", "2**40x2**40"])
def test_interface_extent_overflow_is_refused(shape, strides):
    # (3,) with strides (2**62,) spans 2**63 bytes: the sum wrapped around and the view was
    # accepted over memory it does not own; 2**40 x 2**40 said "reaches ... bytes back".
    keep = cuda.device_array(4)
    desc = {"shape": shape, "strides": strides, "typestr": "<f8", "version": 3,
            "data": (keep.device_ctypes_pointer.value, False)}
    with pytest.raises(ValueError, match=r"from_cuda_array_interface\(\): __cuda_array_interface__: "
                                         r"array is too big: shape \(.*\) with strides \(.*\) spans "
                                         r"more bytes than memory addresses hold"):
        cuda.from_cuda_array_interface(desc, owner=keep)


def test_interface_extent_checks_still_pass_valid_and_refuse_outside():
    keep = cuda.device_array(4)
    ptr = keep.device_ctypes_pointer.value
    desc = {"shape": (2,), "strides": (-8,), "typestr": "<f8", "version": 3,
            "data": (ptr + 8, False)}
    assert cuda.from_cuda_array_interface(desc, owner=keep).shape == (2,)
    desc["data"] = (ptr, False)
    with pytest.raises(ValueError, match=r"reaches 8 bytes back from its pointer"):
        cuda.from_cuda_array_interface(desc, owner=keep)
    desc.update(strides=(8,), shape=(5,))
    with pytest.raises(ValueError, match=r"spans 40 bytes, past the end of its allocation "
                                         r"\(32 bytes"):
        cuda.from_cuda_array_interface(desc, owner=keep)


@pytest.mark.parametrize("shape, strides, offset", [
    ((3,), (2**62,), 0), ((1,), (8,), 2**62), ((1,), (8,), -2**62), ((2,), (-2**63,), 8),
])
def test_views_with_huge_strides_or_offsets_are_refused(shape, strides, offset):
    # The view primitive behind view()/split(): pointer arithmetic could wrap too.
    d = cuda.device_array(4)
    with pytest.raises(ValueError, match=r"array is too big|reach outside the array's memory"):
        d._with_layout(shape, strides, offset, np.float64, "view")


# ----------------------------------------------------------------- device numbers

@pytest.mark.parametrize("api", [cuda.select_device, cuda.cudadrv.driver.Device])
def test_device_numbers_beyond_a_c_int(api):
    # Were pybind11's "incompatible function arguments" TypeErrors.
    with pytest.raises(ValueError, match=r"no device 1180591620717411303424 \(this machine has "):
        api(2**70)
    with pytest.raises(TypeError, match=r"device_id must be an integer \(got 1\.0\)"):
        api(1.0)


# ------------------------------------------------------------------- open_ipc_array

@pytest.mark.parametrize("shape, dtype, strides, offset, exc, message", [
    (2.0, np.float64, None, 0, TypeError, r"shape must be an int or a tuple of ints \(got 2\.0\)"),
    ((2,), "foo", None, 0, TypeError, r"dtype: data type 'foo' not understood"),
    ((-3,), np.float64, None, 0, ValueError, r"negative dimensions are not allowed"),
    ((1000,), np.float64, None, 0, ValueError, r"past the end of its allocation"),
    ((2,), np.float64, (-8,), 0, ValueError, r"before the start of its allocation"),
])
def test_open_ipc_array_errors_name_it(shape, dtype, strides, offset, exc, message,
                                      ipc_capable_memory):
    # (Pool memory, the GPU's default, has no IPC handle: this failed on the H100, 2026-11-27.)
    # Were "'float' object is not iterable", or errors naming from_cuda_array_interface().
    d = cuda.to_device(np.arange(4.0))
    raw = d.get_ipc_handle()._ipc_handle.handle
    with pytest.raises(exc, match=r"open_ipc_array\(\): .*" + message):
        with cuda.open_ipc_array(raw, shape, dtype, strides=strides, offset=offset):
            pass
    with cuda.open_ipc_array(raw, np.int64(2), np.float64, strides=(16,)) as view:
        np.testing.assert_array_equal(view.copy_to_host(), [0.0, 2.0])
