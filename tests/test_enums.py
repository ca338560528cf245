"""Enum and IntEnum members in kernels, device functions and ufuncs (issue 16, language
leftovers), as Numba types them: constants (Color.red, Color["red"]), .value, ==/!=/is
between members of one class or of two, IntEnum members as int64 in arithmetic, casts and
array stores, members returned by device functions; from both front ends. The oracle is
the Python function itself; kernels are also compiled to PTX by NVRTC."""

import inspect
import textwrap
from enum import Enum, IntEnum

import numpy as np
import pytest

from numbacuda_ufunc import cuda, int16, vectorize
from numbacuda_ufunc.errors import CompileError


class Color(Enum):
    red = 1
    green = 2
    blue = 3


class Shake(Enum):
    vanilla = 7
    mint = 3  # Color.blue's value


class Mixed(Enum):
    one = 1.5
    two = 2j


class Shape(IntEnum):
    circle = 2
    square = 500


class Status(IntEnum):
    dummy = 2  # Shape.circle's value
    not_found = 404
    internal_error = 500


def pick(p):
    return Color.red if p else Color.green


def enum_kernel(out, x, p):
    out[0] = Color.red == Color.green
    out[1] = Color["red"] == Color["red"]
    out[2] = pick(p) == Color.red  # a member returned by a device function
    out[3] = pick(not p) is Color.green
    out[4] = pick(p) is not Color.green
    out[5] = Color.blue == Shake.mint  # same value, other class: never equal
    out[6] = Color.red != 1  # an Enum member is not its value
    out[7] = Color.red.value + Shape.square + Mixed.one.value
    out[8] = x - Status.not_found if x > Status.internal_error else x + int16(Shape.circle)
    out[9] = Shape.circle == Status.dummy  # IntEnums compare as ints
    out[10] = Shape.circle is Status.dummy
    out[11] = Shape.square  # stored as an int
    out[12] = Mixed.two.value.imag


def _no_source(fn):
    ns = dict(fn.__globals__)
    exec(compile(textwrap.dedent(inspect.getsource(fn)), "<exec>", "exec"), ns)
    return ns[fn.__name__]


@pytest.mark.parametrize("lifted", [False, True], ids=["source", "bytecode"])
def test_enum_members_in_kernels_match_python(lifted):
    k = cuda.jit(_no_source(enum_kernel) if lifted else enum_kernel)
    for x, p in ((300, True), (550, False), (-(2**40), True)):
        got, want = np.full(13, np.nan), np.full(13, np.nan)
        k[1, 1](got, x, p)
        enum_kernel(want, np.int64(x), p)  # a Python int argument is an int64 in a kernel
        np.testing.assert_array_equal(got, want)
    assert all(".entry" in p for p in k.inspect_ptx().values())


def test_intenum_in_vectorize_and_as_kernel_argument():
    def status(x):
        if x != Status.not_found:
            return Status["internal_error"]
        return Status.dummy

    uf = vectorize(["int64(int64)"], target="cuda")(status)
    arr = np.array([2, 404, 500, 404], dtype=np.int64)
    np.testing.assert_array_equal(uf(arr), [status(v) for v in arr])

    @cuda.jit
    def shifted(out, s):  # an IntEnum argument is an int64, as in Numba
        out[0] = s + Shape.square

    out = np.zeros(1, np.int64)
    shifted[1, 1](out, Status.not_found)
    assert out[0] == 904


def test_enum_errors():
    def arithmetic(out):
        out[0] = Color.red + 1

    def order(out):
        out[0] = Color.red < Color.green

    def missing(out):
        out[0] = Color["purple"] == Color.red

    def is_numbers(out, x):
        out[0] = x is out[0]

    out = np.zeros(1)
    with pytest.raises(CompileError, match=r"member of the Enum Color is not a number"):
        cuda.jit(arithmetic)[1, 1](out)
    with pytest.raises(CompileError, match=r"members of Color have no order"):
        cuda.jit(order)[1, 1](out)
    with pytest.raises(CompileError, match=r"Color has no member 'purple'"):
        cuda.jit(missing)[1, 1](out)
    with pytest.raises(CompileError, match=r"'is' and 'is not' are supported between enum "
                                           r"members only"):
        cuda.jit(is_numbers)[1, 1](out, 3)
