"""raise and assert in kernels and device functions (issue 16, language leftovers), as
Numba documents them: the raising thread ends there (the others go on); a debug=True
kernel reports the launch's first exception on the host after the launch, as Numba does
("In function 'f', file F, line L, tid=[z, y, x] ctaid=[z, y, x]: message"); assert is
checked only under debug=True. Every kernel is also compiled to PTX by NVRTC."""

import inspect
import re
import textwrap

import numpy as np
import pytest

from numbacuda_ufunc import cuda, vectorize
from numbacuda_ufunc.errors import CompileError


class MyError(Exception):
    pass


LIMIT = 100.0


def check(v):
    if v > LIMIT:
        raise OverflowError("too big", 3)
    return v


def raising(out, x, flag):
    i = cuda.grid(1)
    if i >= out.size:
        return
    out[i] = 1.0
    if x[i] < 0:
        raise ValueError("negative")
    if flag == 1 and i == 2:
        raise MyError
    check(x[i])
    assert x[i] != 7.0, "seven"
    out[i] = 2.0


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def _where(fn, text, tid, ctaid):
    return (rf"In function '{fn.__name__}', file .*test_kernel_exceptions\.py, line "
            rf"{_line_of(fn, text)}, tid={re.escape(str(tid))} ctaid={re.escape(str(ctaid))}")


@pytest.fixture(scope="module")
def kernels():
    plain, debug = cuda.jit(raising), cuda.jit(debug=True, opt=False)(raising)
    return plain, debug


def _launch(k, x, flag=0, grid=(1, 8)):
    out = np.full(x.size, np.nan)
    k[grid](out, x, flag)
    return out


def test_raise_without_debug_ends_only_the_raising_thread(kernels):
    plain, _ = kernels
    x = np.array([1.0, -1.0, 3.0, 500.0, 7.0, -0.0, 2.0, -5.0])
    out = _launch(plain, x, flag=1)
    # Negative x, thread 2 (MyError) and 500 (raised in check()) stop after out[i] = 1;
    # the failing assert is not checked without debug=True.
    np.testing.assert_array_equal(out, [2.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0])
    ptx = plain.inspect_ptx()
    assert all(".entry" in p and "exit;" in p for p in ptx.values())


@pytest.mark.parametrize("case", ["value", "user_class", "device_function", "assert", "none"])
def test_raise_with_debug_reaches_the_host(kernels, case):
    _, debug = kernels
    x = np.arange(1.0, 9.0) * 1.5
    flag = 0
    if case == "value":
        x[5] = -2.0
        exc, match = ValueError, _where(raising, '"negative"', [0, 0, 5], [0, 0, 0]) + ": negative$"
    elif case == "user_class":
        flag = 1
        exc, match = MyError, _where(raising, "raise MyError", [0, 0, 2], [0, 0, 0]) + "$"
    elif case == "device_function":
        x[3] = 1e9
        exc, match = OverflowError, _where(check, "too big", [0, 0, 3], [0, 0, 0])
    elif case == "assert":
        x[6] = 7.0
        exc, match = AssertionError, _where(raising, "seven", [0, 0, 6], [0, 0, 0]) + ": seven$"
    else:
        np.testing.assert_array_equal(_launch(debug, x), np.full(8, 2.0))
        return
    with pytest.raises(exc) as info:
        _launch(debug, x, flag)
    assert re.search(match, str(info.value)), str(info.value)
    if case == "device_function":
        assert info.value.args[1:] == (3,)  # Numba prefixes only the first argument
    assert ".entry" in next(iter(debug.inspect_ptx().values()))


def test_raise_reports_the_first_thread_and_block(kernels):
    _, debug = kernels
    x = np.arange(1.0, 9.0) * 1.5
    x[5] = -1.0
    with pytest.raises(ValueError, match=re.escape("tid=[0, 0, 1] ctaid=[0, 0, 1]: negative")):
        _launch(debug, x, grid=(2, 4))
    np.testing.assert_array_equal(_launch(debug, np.arange(1.0, 9.0) * 1.5, grid=(2, 4)),
                                  np.full(8, 2.0))  # the next launch starts clean


def test_raise_before_a_barrier_does_not_block_the_others():
    @cuda.jit(debug=True)
    def barrier(out):
        i = cuda.threadIdx.x
        if i == 0:
            raise KeyError("first")
        cuda.syncthreads()
        out[i] = i

    # A device array: as in Numba, a NumPy argument is not copied back when the launch
    # raises (on a GPU its element 1..3 stay -1 in host memory).
    out = cuda.to_device(np.full(4, -1.0))
    with pytest.raises(KeyError, match=r"tid=\[0, 0, 0\] ctaid=\[0, 0, 0\]: first"):
        barrier[1, 4](out)
    np.testing.assert_array_equal(out.copy_to_host(), [-1.0, 1.0, 2.0, 3.0])


def test_raise_and_assert_without_source_bytecode_front_end():
    src = textwrap.dedent('''
        def lifted(out, x):
            i = cuda.threadIdx.x
            assert x[i] >= 0, "negative"
            if x[i] > 10:
                raise ValueError("big", 5)
            out[i] = x[i] * 2
    ''')
    ns = {"cuda": cuda}
    exec(compile(src, "<lifted>", "exec"), ns)
    fn = ns["lifted"]
    x = np.array([1.0, -2.0, 3.0, 4.0])
    out = np.zeros(4)
    cuda.jit(fn)[1, 4](out, x)  # the assert is not checked: the thread goes on
    np.testing.assert_array_equal(out, [2.0, -4.0, 6.0, 8.0])
    k = cuda.jit(debug=True)(fn)
    with pytest.raises(AssertionError, match=r"tid=\[0, 0, 1\] ctaid=\[0, 0, 0\]: negative"):
        k[1, 4](out, x)
    x[1] = 20.0
    with pytest.raises(ValueError) as info:
        k[1, 4](out, x)
    assert info.value.args[1:] == (5,) and "In function 'lifted', file <lifted>" in str(
        info.value)
    assert ".entry" in next(iter(k.inspect_ptx().values()))


MESSAGE = "Device Function Error"


def third(t, i):
    return t[i]  # a run-time index: IndexError when out of range


def python_errors(r, x, y, i, k):
    if k == 0:
        r[0] = y / x
    elif k == 1:
        r[0] = int(y) // int(x)
    elif k == 2:
        r[0] = r.shape[i]
    elif k == 3:
        r[0] = third((1.5, 2.5, 3.5), i)
    else:
        raise ValueError(MESSAGE)  # a global string
    r[1] = 1.0


PYTHON_ERRORS = (cuda.jit(debug=True)(python_errors),
                 cuda.jit(debug=True, fastmath=True)(python_errors), cuda.jit(python_errors))


@pytest.mark.parametrize("k,exc,message", [
    (0, ZeroDivisionError, "float division by zero"),
    (1, ZeroDivisionError, "integer division or modulo by zero"),
    (2, IndexError, "tuple index out of range"),
    (3, IndexError, "tuple index out of range"),
    (4, ValueError, MESSAGE),
])
def test_python_errors_in_debug_kernels(k, exc, message):
    debug, fast, plain = PYTHON_ERRORS  # compiled once for all the cases
    r = np.zeros(2)
    with pytest.raises(exc, match=re.escape(f"ctaid=[0, 0, 0]: {message}")):
        debug[1, 1](r, 0.0, 1.0, 5, k)
    np.testing.assert_array_equal(r, [0.0, 0.0])  # the thread stopped at the error
    r = np.zeros(2)
    plain[1, 1](r, 0.0, 1.0, 5, k)  # no checks without debug=True: NumPy's results
    want = {0: [np.inf, 1.0], 1: [0.0, 1.0]}.get(k, [0.0, 0.0])
    np.testing.assert_array_equal(r, want)
    if k == 0:  # fastmath: no ZeroDivisionError (Numba). Checked on the source: loading a
        # host module built with -ffast-math sets the CPU's flush-to-zero mode for the whole
        # process (GCC's crtfastmath), which would change later tests' denormal results.
        src = next(iter(fast.specialize(r, 0.0, 1.0, 5, k).inspect_cuda().values()))
        assert "nu_kernel_zero_division = false" in src and "nu_kernel_debug = true" in src
        assert "nu_kernel_zero_division = true" in next(iter(debug.inspect_cuda().values()))
    debug[1, 1](r, 2.0, 1.0, -1, 2 if k == 2 else 3)  # in range: no error
    assert r[0] in (2.0, 3.5) and r[1] == 1.0
    assert ".entry" in next(iter(debug.inspect_ptx().values()))


def test_raise_errors():
    def in_ufunc(x):
        if x < 0:
            raise ValueError("negative")
        return x

    with pytest.raises(CompileError, match=r"unsupported construct 'raise'"):
        vectorize(["float64(float64)"], target="cuda")(in_ufunc)

    def bare(out):
        raise

    def runtime_argument(out):
        raise ValueError(out[0])

    def not_an_exception(out):
        raise LIMIT

    x = np.zeros(1)
    with pytest.raises(CompileError, match=r"bare 'raise'"):
        cuda.jit(bare)[1, 1](x)
    with pytest.raises(CompileError, match=r"exception arguments must be constants"):
        cuda.jit(runtime_argument)[1, 1](x)
    with pytest.raises(CompileError, match=r"exception class or instance"):
        cuda.jit(not_an_exception)[1, 1](x)
