"""Enum and IntEnum members in kernels, device functions and ufuncs (issue 16, language
leftovers), as Numba types them: constants (Color.red, Color["red"]), .value, ==/!=/is
between members of one class or of two, IntEnum members as int64 in arithmetic, casts and
array stores, members returned by device functions, members (of Enums of numbers or of
tuples) as kernel arguments; from both front ends. The oracle is
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


# ---- Enum and IntEnum members as kernel arguments ---------------------------------------

class Planet(Enum):  # tuple values: held by index in kernels
    MERCURY = (3.303e23, 2.4397e6)
    VENUS = (4.869e24, 6.0518e6)
    EARTH = (5.976e24, 6.37814e6)
    TWIN = (4.869e24, 6.0518e6)  # an alias of VENUS


class Negatives(IntEnum):
    one = 1
    two = 2
    too = 2  # an alias of two
    neg = -(2**62)


class Word(Enum):
    a = "x"


class Mixed2(Enum):
    number = 1
    pair = (1, 2)


def compare_members(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b
    out[4] = a == Color.red
    out[5] = b is Shake.mint


PAIRS = [(Color.red, Color.red), (Color.red, Color.green), (Color.blue, Shake.mint),
         (Shake.mint, Shake.mint), (Planet.EARTH, Planet.EARTH), (Planet.VENUS, Planet.TWIN),
         (Planet.VENUS, Planet.MERCURY), (Shape.circle, Negatives.two),
         (Negatives.two, Negatives.too), (Status.dummy, Negatives.neg), (Color.red, 1),
         (Shape.square, 500), (Planet.EARTH, Color.red)]


@pytest.mark.parametrize("lifted", [False, True], ids=["source", "bytecode"])
def test_enum_members_as_arguments_compare_as_in_python(lifted):
    k = cuda.jit(_no_source(compare_members) if lifted else compare_members)
    for a, b in PAIRS:
        got = np.full(6, 2, np.int8)  # poisoned: 2 is neither True nor False
        want = got.copy()
        k[1, 1](a, b, got)
        compare_members(a, b, want)
        np.testing.assert_array_equal(got, want, err_msg=f"{a!r}, {b!r}")
    assert all(".entry" in p for p in k.inspect_ptx().values())


def test_enum_argument_values_and_arithmetic():
    @cuda.jit
    def k(c, p, s, out):
        out[0] = c.value
        out[1] = p.value[0] / 1e24
        out[2] = p.value[1]
        out[3] = s + 1  # an IntEnum member is an int
        out[4] = s * Shape.square

    for c, p, s in ((Color.green, Planet.MERCURY, Negatives.neg), (Shake.vanilla,
                    Planet.TWIN, Status.not_found), (Mixed.two, Planet.EARTH, Shape.circle)):
        got = np.full(5, np.nan, np.complex128)
        k[1, 1](c, p, s, got)
        with np.errstate(over="ignore"):  # int64 wraps, as in the kernel
            wrapped = np.int64(s) * np.int64(500)
        want = [c.value, p.value[0] / 1e24, p.value[1], s + 1, wrapped]
        np.testing.assert_allclose(got, np.array(want, np.complex128), rtol=1e-15)


def test_enum_members_specialise_per_class():
    @cuda.jit
    def k(m, out):
        out[0] = m == Color.blue

    out = np.zeros(1, np.bool_)
    k[1, 1](Color.blue, out)
    assert out[0]
    k[1, 1](Shake.mint, out)  # the same value 3, another class: not equal
    assert not out[0]
    k[1, 1](Color.red, out)
    assert not out[0]
    assert len(k.overloads) == 2


def test_enum_members_inside_tuple_arguments():
    @cuda.jit
    def k(t, out):
        out[0] = t[0] == Color.green
        out[1] = t[1] is Planet.VENUS
        out[2] = t[2] + 1

    out = np.zeros(3)
    k[1, 1]((Color.green, Planet.TWIN, Shape.square), out)
    np.testing.assert_array_equal(out, [1, 1, 501])
    k[1, 1]((Color.red, Planet.EARTH, Shape.circle), out)
    np.testing.assert_array_equal(out, [0, 0, 3])


def test_enum_arguments_with_declared_signatures():
    @cuda.jit("void(int64, float64[:])")
    def k(x, out):
        out[0] = x * 2

    out = np.zeros(1)
    k[1, 1](Status.not_found, out)  # an IntEnum member converts to its int, as in Numba
    assert out[0] == 808
    with pytest.raises(TypeError, match=r"kernel 'k': a member of the Enum Color is not a "
                                        r"number: a declared signature cannot take it"):
        k[1, 1](Color.red, out)


def test_enum_argument_errors():
    @cuda.jit
    def k(m, out):
        out[0] = m == m

    out = np.zeros(1)
    with pytest.raises(TypeError, match=r"kernel 'k': members of Word have values that are "
                                        r"not numbers \(a = 'x'\)"):
        k[1, 1](Word.a, out)
    with pytest.raises(TypeError, match=r"the values of Mixed2 do not share a type"):
        k[1, 1](Mixed2.pair, out)

    def call_class(m, out):
        out[0] = Color(2) == m

    with pytest.raises(CompileError, match=r"calling the Enum class Color\(\) is not "
                                           r"supported \(nor in Numba\)"):
        cuda.jit(call_class)[1, 1](Color.green, out)
