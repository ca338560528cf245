"""NEP 50 scalar typing of calls with only Python scalars, and lazy ufuncs whose loop is a
function of the argument types alone (not of call history or other threads), checked for
weak-int overflow and freed when unreferenced."""

import gc
import threading
import weakref

import numpy as np
import pytest

from numbacuda_ufunc import cuda, vectorize


def ident(x):
    return x


def add_fn(a, b):
    return a + b


# ---------------------------------------------------------------- scalars alone (NEP 50)

def test_python_float_alone_is_float64():
    f = vectorize(["float32(float32)", "float64(float64)"])(ident)
    assert f(1e300) == np.float64(1e300) and type(f(1e300)) is np.float64
    assert type(f(2.5)) is np.float64


def test_python_int_alone_is_int64():
    f = vectorize(["float32(float32)", "float64(float64)"])(ident)
    assert f(16777217) == 16777217.0 and type(f(16777217)) is np.float64  # f4 would round
    add = vectorize(["int8(int8, int8)", "int64(int64, int64)"])(add_fn)
    assert add(100, 100) == np.add(100, 100) == 200
    assert type(add(100, 100)) is np.int64


def test_numba_vector_add_scalars_are_float64():
    vector_add = vectorize(["float32(float32, float32)", "float64(float64, float64)"])(add_fn)
    r = vector_add(1.2, 2.3)
    assert type(r) is np.float64 and r == np.add(1.2, 2.3)


@pytest.mark.parametrize("args", [(1, 2), (1.5, 2), (1, 2.5), (1j, 2), (True, 3), (2**40, 1)])
def test_scalars_alone_match_numpy_result_dtype(args):
    add = vectorize(["int8(int8, int8)", "int64(int64, int64)", "float32(float32, float32)",
                     "float64(float64, float64)", "complex128(complex128, complex128)"])(add_fn)
    expected = np.add(*args)
    got = add(*args)
    assert got.dtype == expected.dtype and got == expected


def test_scalars_alone_fall_back_to_a_narrower_loop_of_their_kind():
    # No loop takes float64: the scalar stays weak, as for arrays (a superset of NumPy,
    # which would raise; Numba's float32-only ufuncs are called this way).
    f32 = vectorize(["float32(float32, float32)"])(add_fn)
    assert f32(1.5, 2.0) == np.float32(3.5) and type(f32(1.5, 2.0)) is np.float32


def test_weak_scalars_beside_arrays_are_unchanged():
    add = vectorize(["float32(float32, float32)", "float64(float64, float64)"])(add_fn)
    assert add(np.ones(3, np.float32), 2.5).dtype == np.float32


# ---------------------------------------------------------------- lazy: types alone

def test_lazy_loop_depends_on_types_not_history():
    lazy = vectorize(add_fn)
    i8 = np.arange(5, dtype=np.int8)
    assert lazy(i8, 2).dtype == np.int8                    # NEP 50: the weak int is int8
    assert lazy(i8, i8).dtype == np.int8
    assert lazy(i8, 1 + 2j).dtype == np.complex128
    assert lazy(i8, i8).dtype == np.int8                   # not complex after a complex call
    assert lazy(i8, np.int64(3)).dtype == np.int64         # NumPy scalars are strong
    assert lazy(i8, i8).dtype == np.int8
    f4 = np.ones(3, np.float32)
    assert lazy(f4, 2).dtype == np.float32 and lazy(f4, 1j).dtype == np.complex64
    assert lazy(i8, 2.5).dtype == np.float64


@pytest.mark.parametrize("a,b", [
    (np.arange(3, dtype=np.int8), 2), (np.arange(3, dtype=np.uint8), 7),
    (np.ones(3, np.float32), 2), (np.ones(3, np.float32), 2.5), (np.ones(3, np.float32), 1j),
    (np.arange(3, dtype=np.int16), 2.5), (np.arange(3, dtype=np.int8), np.arange(3, dtype=np.uint8)),
    (np.arange(3, dtype=np.int64), np.arange(3, dtype=np.uint64)), (np.ones(3, bool), 3),
    (1, 2), (1.5, 2), (1, 2j),
])
def test_lazy_result_dtype_matches_numpy(a, b):
    lazy = vectorize(add_fn)
    expected = np.add(a, b)
    got = lazy(a, b)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_lazy_weak_int_overflow():
    lazy = vectorize(add_fn)
    with pytest.raises(OverflowError, match="-1 is out of bounds for uint8"):
        lazy(np.arange(3, dtype=np.uint8), -1)
    with pytest.raises(OverflowError, match="300 is out of bounds for int8"):
        lazy(np.arange(3, dtype=np.int8), 300)
    with pytest.raises(OverflowError):
        lazy(cuda.to_device(np.arange(3, dtype=np.uint8)), -1)
    assert lazy.ntypes == 0  # refused before compiling anything


def test_lazy_threads_get_the_types_of_their_own_arguments():
    lazy = vectorize(add_fn)
    cases = [np.arange(8, dtype=t) for t in (np.uint8, np.int8, np.int16, np.uint32,
                                              np.float32, np.float64, np.int64, np.uint8)]
    errors = []
    barrier = threading.Barrier(len(cases))

    def work(x):
        barrier.wait()
        for _ in range(20):
            r = lazy(x, x)
            if r.dtype != np.add(x, x).dtype:
                errors.append((x.dtype, r.dtype))
            r = lazy(x, 1)
            if r.dtype != x.dtype:
                errors.append((x.dtype, "weak", r.dtype))

    threads = [threading.Thread(target=work, args=(x,)) for x in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(lazy.types) == len(set(lazy.types)) == 7  # one loop per type tuple


# ---------------------------------------------------------------- lazy: freed when unreferenced

@pytest.mark.parametrize("lazy", [True, False])
def test_ufuncs_are_freed_by_reference_counting(lazy):
    x = np.arange(6.0)
    gc.disable()  # freed without the cycle collector: no reference cycles
    try:
        f = vectorize(add_fn) if lazy else vectorize(["f8(f8, f8)"])(add_fn)
        f(x, x)
        f.reduce(x)
        f.accumulate(x)
        f(x, x, where=x > 2, out=np.zeros(6))
        ref = weakref.ref(f)
        del f
        assert ref() is None
    finally:
        gc.enable()


def _rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 2**20


def test_rss_stays_bounded_over_many_lazy_ufuncs():
    x = np.arange(4.0)
    for _ in range(200):  # warm up allocator pools and caches
        f = vectorize(add_fn)
        f(x, x)
        f.reduce(x)
    before = _rss_mb()
    for _ in range(3000):
        f = vectorize(add_fn)
        f(x, x)
        f.reduce(x)
    assert _rss_mb() - before < 16
