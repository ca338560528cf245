"""The N-d elementwise kernel (elementwise.cuh's run_pieces): the coalesced shape as rows of
its innermost dimension, cut into pieces; divisions once per thread, none per element; each
operand's innermost stride class (unit, zero, any) fixed at compile time.

Correctness runs on the host backend, whose emulation of the cuda target executes the
device loop itself (37 emulated threads per chunk, so steps wrap rows and carry through
outer dimensions). The SASS checks need only NVRTC and cuobjdump/nvdisasm.
"""

import re

import numpy as np
import pytest

from numbacuda_ufunc import vectorize
from numbacuda_ufunc.toolchain import _sass

needs_sass = pytest.mark.skipif(
    _sass.find_tool("cuobjdump") is None and _sass.find_tool("nvdisasm") is None,
    reason="needs cuobjdump or nvdisasm")

DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float16", "float32", "float64", "complex64",
          "complex128"]


def _fma(dtype):
    if dtype == "bool":
        @vectorize(["b1(b1, b1)"], target="cuda")
        def f(a, b):
            return a ^ b

        return f, lambda a, b: a ^ b

    @vectorize([f"{dtype}({dtype}, {dtype})"], target="cuda")
    def g(a, b):
        return a * 3 + b

    return g, lambda a, b: (a * np.asarray(3, a.dtype) + b).astype(a.dtype)


_UFUNCS = {}


def _ufunc(dtype):
    if dtype not in _UFUNCS:
        _UFUNCS[dtype] = _fma(dtype)
    return _UFUNCS[dtype]


def _values(shape, dtype, rng):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    x = rng.integers(-20, 20, shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-20, 20, shape)
    return x.astype(dtype)


# (a's shape, b's shape): column + row, a row over many rows, rows shorter than a piece,
# 3-d and 4-d broadcasts, a scalar-shaped operand, rows of odd length.
SHAPES = [((37, 1), (1, 53)), ((1000, 3), (3,)), ((5, 3, 7), (7,)), ((4, 5, 6, 7), (5, 1, 7)),
          ((3, 1, 2), (1, 4, 1)), ((129, 2), ()), ((2, 3, 5, 7, 11), (11,)), ((61, 17), (61, 1))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}+{s[1]}")
def test_broadcast_and_strided_layouts_match_numpy(dtype, shapes):
    f, ref = _ufunc(dtype)
    rng = np.random.default_rng(len(shapes[0]) * 100 + len(shapes[1]))
    a, b = _values(shapes[0], dtype, rng), _values(shapes[1], dtype, rng)
    want = ref(a, b)
    np.testing.assert_array_equal(f(a, b), want)
    # reversed rows (negative innermost strides) of both inputs
    full = np.ascontiguousarray(np.broadcast_to(a, want.shape))[..., ::-1]
    rb = b[..., ::-1] if b.ndim else b
    np.testing.assert_array_equal(f(full, rb), ref(full, rb))
    # every other element of a larger array (no unit stride anywhere), into a poisoned out=
    big = _values(tuple(2 * s for s in want.shape), dtype, rng)
    view = big[(slice(None, None, 2),) * want.ndim]
    out = np.full(want.shape, 1, dtype)
    out[...] = _values(want.shape, dtype, rng)
    f(view, b, out=out)
    np.testing.assert_array_equal(out, ref(view, b))
    # a transposed (Fortran-ordered) output: the output's innermost stride is not a unit
    out_t = np.zeros(want.shape[::-1], dtype).T
    f(a, b, out=out_t)
    np.testing.assert_array_equal(out_t, want)


@pytest.mark.parametrize("dtype", ["int8", "float32", "float64"])
def test_rows_that_do_not_allow_vector_accesses(dtype):
    # One element past an aligned start: every row of the unit-stride operands is misaligned
    # for the 16-byte path, which the engine then leaves out.
    f, ref = _ufunc(dtype)
    rng = np.random.default_rng(7)
    raw = _values(1 + 64 * 24, dtype, rng)
    a = raw[1:].reshape(64, 24)
    row = _values(24, dtype, rng)
    np.testing.assert_array_equal(f(a, row), ref(a, row))
    # rows 24 elements apart inside a wider array: aligned starts, odd row pitch
    wide = _values((64, 27), dtype, rng)
    np.testing.assert_array_equal(f(wide[:, :24], row), ref(wide[:, :24], row))


def test_zero_d_empty_and_python_scalars():
    f, ref = _ufunc("float64")
    a = np.float64(2.5)
    assert f(np.array(a), np.array(1.0)) == ref(np.array(a), np.array(1.0))
    empty = np.zeros((0, 5))
    assert f(empty, np.ones(5)).shape == (0, 5)
    x = np.arange(12.0).reshape(3, 4)[:, ::-1]
    np.testing.assert_array_equal(f(x, 2.0), x * 3 + 2.0)
    np.testing.assert_array_equal(f(2.0, x), 2.0 * 3 + x)


# ---- SASS: the loop that stores elements computes no quotient.

def _instructions(sass):
    """(address, instruction text) of every SASS line."""
    return [(int(m.group(1), 16), m.group(2))
            for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+([^;]*?)\s*;", sass)]


def _loops(ins):
    """[first, last] address ranges of loops: a branch back to an earlier address."""
    out = []
    for addr, text in ins:
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)$", text)
        if m and int(m.group(1), 16) < addr:
            out.append((int(m.group(1), 16), addr))
    return out


# An unsigned division by a run-time divisor compiles to I2F.U32.RP + MUFU.RCP (the
# reciprocal) followed by IMAD.HI.U32 (the quotient estimate) and corrections; when the
# divisor is loop-invariant, ptxas hoists the reciprocal and leaves IMAD.HI.U32 in the loop
# (the previous kernel: four per unrolled group of four elements). A 64-bit division is a
# CALL to a subroutine. None of them may sit in a loop that stores results.
_DIVISION = re.compile(r"I2F\.U32\.RP|MUFU\.RCP|IMAD\.HI\.U32|^CALL")


@needs_sass
@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8"])
@pytest.mark.parametrize("inner", ["czc", "ccc", "sss"])
def test_broadcast_kernel_divides_nothing_per_element(dtype, inner):
    @vectorize([f"{dtype}({dtype}, {dtype})"], target="cuda")
    def add(a, b):
        return a + b

    # (R, 1) + (1, C) -> (R, C): output and b unit stride, a stride 0 along the row
    entry, src = add._variant_source(0, 2, inner=inner)
    ins = _instructions(_sass.sass_of(_sass.cubin_of(src)))
    storing = [(lo, hi) for lo, hi in _loops(ins)
               if any(lo <= a <= hi and "STG" in t for a, t in ins)]
    assert storing, "no loop stores elements"
    for lo, hi in storing:
        found = [t for a, t in ins if lo <= a <= hi and _DIVISION.search(t.lstrip("@!P0123456789 "))]
        assert not found, (hex(lo), hex(hi), found)
    if inner == "czc":
        ops = " ".join(t for _, t in ins)
        # unit-stride operands move in 16-byte vectors (b and the output) ...
        assert "LDG.E.128" in ops and "STG.E.128" in ops
    elif inner == "sss" and dtype == "float32":
        # ... and operands of any stride issue a whole piece's loads before its stores
        ops = re.findall(r"\b(LDG|STG)\.E\S*", " ".join(t for _, t in ins))
        runs = "".join("L" if op == "LDG" else "S" for op in ops)
        assert "L" * 8 + "S" * 4 in runs, runs


@needs_sass
def test_zero_stride_operand_is_loaded_once_per_piece():
    @vectorize(["float32(float32, float32)"], target="cuda")
    def add(a, b):
        return a + b

    general = _sass.sass_of(_sass.cubin_of(add._variant_source(0, 2, inner="sss")[1]))
    zero = _sass.sass_of(_sass.cubin_of(add._variant_source(0, 2, inner="ssz")[1]))
    loads = lambda s: len(re.findall(r"\bLDG\.E\b", s))  # noqa: E731
    assert loads(zero) < loads(general), (loads(zero), loads(general))


_FAKE_BROADCAST = r"""
import numpy as np
from numbacuda_ufunc import cuda, vectorize

drv = FakeDriver()

@vectorize(["float32(float32, float32)"], target="cuda")
def add(a, b):
    return a + b

col = cuda.to_device(np.ones((256, 1), np.float32))
row = cuda.to_device(np.ones((1, 1024), np.float32))
out = cuda.device_array((256, 1024), np.float32)
add(col, row, out=out)
t = drv.traffic(lambda: add(col, row, out=out))
print(json.dumps([t, drv.last_launch(), [name for name, _ in add._kernel_sources()]]))
"""


def test_broadcast_launch_under_the_fake_driver(fake_driver):
    traffic, (grid, block, shared), names = fake_driver.run_json(_FAKE_BROADCAST)
    assert traffic["launches"] == 1 and traffic["allocations"] == 0 and traffic["copies"] == 0, traffic
    # 2^18 elements in pieces of 4 (one float32 vector), 256 threads a block
    assert block[0] == 256 and grid[0] == (1 << 18) // (4 * 256), (grid, block)
    assert any(name.endswith("_strided2") for name in names), names
