"""enumerate() and zip() in kernels and device functions (issue 16, language leftovers):
over ranges, arrays (elements and rows), tuples, nested in each other, with start=,
break and continue; from the source front end and from the bytecode front end (the same
function made by exec). The oracle is the Python function itself; kernels are also
compiled to PTX by NVRTC."""

import inspect
import textwrap

import _hostrun as hr
import numpy as np
import pytest

from numbacuda_ufunc import cuda, float64, int64
from numbacuda_ufunc.errors import CompileError

WEIGHTS = (3, -1.5, 2)


def iterate_all(out, x, y, m):
    k = 0
    for i, v in enumerate(x):  # an array's elements
        out[k] = i * 100 + v
        k += 1
    for i, (a, b) in enumerate(zip(x, y), 5):  # zip stops at the shorter y
        out[k] = i * 100 + a - b
        k += 1
    for (i, a), b in zip(enumerate(y, start=-2), x[::-1]):
        if i == 0:
            continue
        out[k] = i * 1000 + a * b
        k += 1
    for a, row in zip(range(2, 40, 7), m):  # rows of a 2-d array
        out[k] = a + row[0] * row[1]
        k += 1
    for i, w in enumerate(WEIGHTS):  # a global tuple
        out[k] = i + w
        k += 1
    for i, c in enumerate((x[1], 2.5, k)):  # a tuple built here
        out[k] = i - c
        k += 1
    for p in zip(x, y):  # one name takes the whole item
        if p[0] > 6:
            break
        out[k] = p[0] * p[1]
        k += 1
    for i, r in enumerate(range(10, -10, -3)):
        out[k] = i * r
        k += 1
    for t in enumerate(zip(range(3), (7, 8, 9, 10))):
        out[k] = t[0] + t[1][0] * t[1][1]
        k += 1
    out[k] = k


def _no_source(fn):
    """The same function, made by exec: it has no source, so its bytecode is lifted."""
    ns = dict(fn.__globals__)
    exec(compile(textwrap.dedent(inspect.getsource(fn)), "<exec>", "exec"), ns)
    return ns[fn.__name__]


@pytest.mark.parametrize("lifted", [False, True], ids=["source", "bytecode"])
def test_enumerate_zip_in_kernels_match_python(lifted):
    fn = _no_source(iterate_all) if lifted else iterate_all
    if lifted:
        with pytest.raises(OSError):
            inspect.getsource(fn)
    x = np.array([10.0, -9.0, 8.5, 7.0, -0.0, 6.0])
    y = np.array([1.0, 2.0, np.inf, 4.0])
    m = np.arange(12, dtype=np.int32).reshape(6, 2) - 5
    out = np.full(64, np.nan)
    expected = out.copy()
    iterate_all(expected, x, y, m)
    k = cuda.jit(fn)
    k[1, 1](out, x, y, m)
    np.testing.assert_array_equal(out, expected)
    assert np.count_nonzero(~np.isnan(expected)) > 30  # every loop ran
    ptx = k.inspect_ptx()
    assert ptx and all(".entry" in p for p in ptx.values())


def enumerate_zip_scalars(a, b):
    s = 0.0
    for i, (p, q) in enumerate(zip((a, b, 1.5), (b, a, -2.0, 9.0))):
        s = s * 3 + i * p - q
    for i, r in zip(range(-3, 9, 4), range(7)):
        s += i * r
    return s


def test_enumerate_zip_in_device_functions_match_python():
    case = hr.Case(enumerate_zip_scalars, (float64, int64))
    hr.build([case])
    hr.check(case, hr.edge_values(float64)[:8], np.array([0, -1, 5, 2**40, -7, 3, 1, 2]))


def test_enumerate_zip_errors():
    def strict(out, x):
        for a, b in zip(x, x, strict=True):
            out[0] = a + b

    def bad_keyword(out, x):
        for i, a in enumerate(x, first=1):
            out[i] = a

    def unpack_mismatch(out, x):
        for i, a, b in enumerate(x):
            out[i] = a + b

    def as_value(out, x):
        z = zip(x, x)
        out[0] = len(z)

    x = np.zeros(3)
    with pytest.raises(CompileError, match=r"strict= is not supported"):
        cuda.jit(strict)[1, 1](x, x)
    with pytest.raises(CompileError, match=r"unexpected keyword argument 'first'"):
        cuda.jit(bad_keyword)[1, 1](x, x)
    with pytest.raises(CompileError, match=r"cannot unpack 2 values into 3 names"):
        cuda.jit(unpack_mismatch)[1, 1](x, x)
    with pytest.raises(CompileError, match=r"builtin 'zip' is not supported"):
        cuda.jit(as_value)[1, 1](x, x)
