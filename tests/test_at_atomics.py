"""ufunc.at's native atomics, proven in the sm_90 SASS of the update kernel (no GPU
needed): `a + b`, min, max, &, |, ^ on 32/64-bit integers and `a + b` on float64 are one
RED/ATOM instruction without a compare-and-swap loop; float32 add keeps the exact CAS
loop unless opted in, because the hardware's float32 atomic add flushes subnormals (FTZ
in the SASS); CAS loops start from an L2 read. Results on the host backend: the
existing `.at(` tests (tests/test_ufunc_methods.py) and the ones here."""

import re

import numpy as np
import pytest

from numbacuda_ufunc import _core, _sass, cuda, vectorize
from numbacuda_ufunc._methods import _atomic_operator, _engine

TYPES = ["int32(int32, int32)", "uint32(uint32, uint32)", "int64(int64, int64)",
         "uint64(uint64, uint64)", "float32(float32, float32)", "float64(float64, float64)",
         "int16(int16, int16)"]


def _add(a, b):
    return a + b


def _min(a, b):
    return min(a, b)


def _max(a, b):
    return max(b, a)


def _and(a, b):
    return a & b


def _or(a, b):
    return a | b


def _xor(a, b):
    return b ^ a


def _sub(a, b):
    return a - b


OPS = {"add": _add, "min": _min, "max": _max, "and": _and, "or": _or, "xor": _xor}
UFUNCS = {name: vectorize([t for t in TYPES if not (name in ("and", "or", "xor") and t.startswith("float"))],
                          target="cuda")(fn) for name, fn in {**OPS, "sub": _sub}.items()}


def test_atomic_operator_recognises_exact_bodies():
    assert {name: _atomic_operator(fn) for name, fn in OPS.items()} == {n: n for n in OPS}
    assert _atomic_operator(_sub) == ""
    assert _atomic_operator(lambda a, b: a + a) == ""
    assert _atomic_operator(lambda a, b: abs(a) + b) == ""

    def two_steps(a, b):
        c = a + b
        return c + 1
    assert _atomic_operator(two_steps) == ""


def _need_sass():
    try:
        _core.nvrtc_version()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if _sass.find_tool("cuobjdump") is None and _sass.find_tool("nvdisasm") is None:
        pytest.skip("needs cuobjdump or nvdisasm (pip install nvidia-cuda-cuobjdump)")


def _at_cas_sass(uf, dtype, engine=None):
    """SASS of the at_cas kernel (a thread per update) of uf's loop for dtype."""
    engine = engine or _engine(uf)
    dt = np.dtype(dtype)
    loop = uf._reduce_loop(engine, dt, "at")
    src = engine._source(loop, dt, dt)
    sass = _sass.sass_of(_sass.cubin_of(src, options=_core.Reducer._nvrtc_extra()))
    name = src.split("NU_METHODS_ENTRY(")[1].split(",")[0] + "_at_cas"
    functions = re.split(r"^\s*Function\s*:\s*", sass, flags=re.MULTILINE)
    found = [f for f in functions if f.split(None, 1)[0].rstrip(":") == name]
    assert found, f"{name} not in the SASS"
    return found[0]


_ATOMIC = r"\b(?:RED|REDG|ATOM|ATOMG)\.[A-Z0-9._]*"
_CAS = r"\b(?:ATOM|ATOMG)\.[A-Z0-9._]*CAS"

NATIVE = [(op, dt) for op in OPS for dt in ("int32", "uint32", "int64", "uint64")] + [("add", "float64")]


@pytest.mark.parametrize("op, dtype", NATIVE, ids=[f"{o}-{d}" for o, d in NATIVE])
def test_at_native_atomic_in_sass(op, dtype):
    _need_sass()
    sass = _at_cas_sass(UFUNCS[op], dtype)
    mnemonic = {"add": "ADD", "min": "MIN", "max": "MAX", "and": "AND", "or": "OR", "xor": "XOR"}[op]
    # and/or/xor may print as LOP-style suffixes (.AND/.OR/.XOR) on the RED instruction.
    assert re.search(_ATOMIC + mnemonic, sass), sass
    assert not re.search(_CAS, sass), "a native atomic needs no compare-and-swap loop"
    if dtype == "float64":
        assert re.search(_ATOMIC + r"ADD\.F64", sass) and "FTZ" not in sass  # subnormals kept


@pytest.mark.parametrize("op, dtype", [("add", "float32"), ("sub", "int32"), ("min", "float64"),
                                       ("add", "int16")])
def test_at_cas_loop_where_no_native_atomic(op, dtype):
    _need_sass()
    sass = _at_cas_sass(UFUNCS[op], dtype)
    assert re.search(_CAS, sass), sass
    # The first guess comes from L2: ld.global.cg is LDG.E.STRONG.GPU on sm_90 (a plain
    # LDG.E may hit a stale L1 line); the other loads are the index and the value.
    assert re.search(r"\bLDG\.E(\.64)?\.STRONG\.GPU\b", sass), re.findall(r"\bLDG\.E[A-Z0-9._]*", sass)


def test_at_float32_native_add_is_opt_in_and_flushes_subnormals(monkeypatch):
    _need_sass()
    monkeypatch.setenv("NUMBACUDA_UFUNC_AT_NATIVE_FLOAT32_ADD", "1")
    opted = _core.UFuncMethods("add_f32_native", "cuda", False, atomic="add")
    sass = _at_cas_sass(UFUNCS["add"], "float32", engine=opted)
    assert re.search(_ATOMIC + r"ADD\.F32\.FTZ", sass), sass  # what the default avoids
    assert not re.search(_CAS, sass)


def test_at_unknown_atomic_name_is_a_value_error():
    with pytest.raises(ValueError, match="atomic must be"):
        _core.UFuncMethods("x", "cuda", False, atomic="mul")


# ---------------------------------------------------------------- results (host backend)

@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32"])
def test_at_device_indices_match_numpy(op, dtype):
    rng = np.random.default_rng(30)
    np_op = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    a = rng.integers(0, 1000, 64).astype(dtype)
    idx = rng.integers(-64, 64, 500)
    b = rng.integers(0, 1000, 500).astype(dtype)
    want = a.copy()
    np_op.at(want, idx, b)
    target = cuda.to_device(a)
    UFUNCS[op].at(target, cuda.to_device(idx), cuda.to_device(b))
    np.testing.assert_array_equal(target.copy_to_host(), want)
    # A scalar b travels in the kernel's parameters.
    want2 = want.copy()
    np_op.at(want2, idx, 7)
    UFUNCS[op].at(target, cuda.to_device(idx), 7)
    np.testing.assert_array_equal(target.copy_to_host(), want2)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_at_device_out_of_bounds_names_the_first(index_dtype):
    target = cuda.to_device(np.zeros(10, np.int64))
    idx = cuda.to_device(np.array([1, 2, 12, -11, 30], dtype=index_dtype))
    with pytest.raises(IndexError, match=r"index 12 is out of bounds for axis 0 with size 10"):
        UFUNCS["add"].at(target, idx, 1)
    assert target.copy_to_host().tolist() == [0] * 10  # nothing applied
    # The check's word is reset for the next call.
    UFUNCS["add"].at(target, cuda.to_device(np.array([3, 3], dtype=index_dtype)), 2)
    assert target.copy_to_host().tolist() == [0, 0, 0, 4] + [0] * 6


@pytest.mark.parametrize("dtype, value", [(np.int8, -3), (np.int16, 300), (np.float32, 1.5),
                                          (np.float64, 0.0), (np.float64, 2.5), (np.complex128, 1 + 2j),
                                          (np.uint8, 255)])
def test_setitem_scalar_fill(dtype, value):
    a = np.full(1001, 9, dtype=dtype)
    d = cuda.to_device(a)
    d[:] = value
    np.testing.assert_array_equal(d.copy_to_host(), np.full(1001, value, dtype=dtype))
    d[3:7] = value - 1  # an unaligned piece for 1-byte types
    a[:] = value
    a[3:7] = value - 1
    np.testing.assert_array_equal(d.copy_to_host(), a)


# ---------------------------------------------------------------- driver traffic (fake driver)

_TRAFFIC = r"""
import numpy as np
from numbacuda_ufunc import cuda, vectorize

drv = FakeDriver()
out = {}

@vectorize(["float32(float32, float32)", "float64(float64, float64)", "int32(int32, int32)",
            "int64(int64, int64)"], target="cuda")
def add(a, b):
    return a + b

for dtype in ("int32", "int64", "float64", "float32"):
    target = cuda.to_device(np.zeros(1 << 10, dtype=dtype))
    idx = cuda.to_device(np.arange(1 << 12, dtype=np.int64) % (1 << 10))
    vals = cuda.to_device(np.ones(1 << 12, dtype=dtype))
    add.at(target, idx, vals)  # compile, load, the check's word
    out["at_" + dtype] = drv.traffic(lambda: add.at(target, idx, vals), repeat=5)
    add.at(target, idx, 1)
    out["at_scalar_" + dtype] = drv.traffic(lambda: add.at(target, idx, 1), repeat=5)

# a[...] = scalar: one memset that really fills (device memory is host memory here).
d = cuda.to_device(np.full(1000, 7, dtype=np.int16))
out["fill"] = drv.traffic(lambda: d.__setitem__(slice(None), 3))
out["fill_values"] = sorted(set(d.copy_to_host().tolist()))
f = cuda.to_device(np.full(1000, 7.0))
out["fill_f64"] = drv.traffic(lambda: f.__setitem__(slice(None), 0.0))
out["fill_f64_values"] = sorted(set(f.copy_to_host().tolist()))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def traffic(fake_driver):
    return fake_driver.run_json(_TRAFFIC)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64", "float32"])
@pytest.mark.parametrize("b", ["device", "scalar"])
def test_at_device_allocates_and_copies_nothing(traffic, dtype, b):
    t = traffic[("at_" if b == "device" else "at_scalar_") + dtype]
    assert t["allocations"] == 0 and t["frees"] == 0, t
    assert t["copies"] == 0, t
    assert t["syncs"] <= 1, t  # the bounds check's answer, before any update
    assert t["launches"] == 2, t  # the check, then the updates


def test_setitem_scalar_fill_is_a_memset(traffic):
    for key in ("fill", "fill_f64"):
        t = traffic[key]
        assert t["calls"].get("cuMemsetD32Async") == 1, t
        assert t["copies"] == 0 and t["allocations"] == 0 and t["launches"] == 0, t
    assert traffic["fill_values"] == [3]
    assert traffic["fill_f64_values"] == [0.0]
