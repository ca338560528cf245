"""scripts/numba_suite.py: the parts that need no numba-cuda checkout (message
normalising and clustering, outcome bookkeeping, the shim's import mapping) and one run
end to end on a small tests folder written here."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "numba_suite.py"
_spec = importlib.util.spec_from_file_location("numba_suite", _SCRIPT)
ns = importlib.util.module_from_spec(_spec)
sys.modules["numba_suite"] = ns
_spec.loader.exec_module(ns)


# -- normalising and clustering ---------------------------------------------------------

def test_normalise_message_numbers_paths_and_names_collapse():
    a = ns.normalise_message("/tmp/x/test_a.py:12: unsupported construct 'try' in function "
                             "'kernel_one'\n    try:")
    b = ns.normalise_message("/home/u/test_b.py:7: unsupported construct 'try' in function "
                             "'other'")
    assert a == b == "<file>: unsupported construct 'try' in function '…'"


def test_normalise_message_keeps_module_names_and_words():
    msg = ns.normalise_message("No module named 'numba.cuda.cudadrv.nvvm'")
    assert msg == "No module named 'numba.cuda.cudadrv.nvvm'"
    msg = ns.normalise_message("module 'numbacuda_ufunc.cuda' has no attribute 'const'")
    assert msg == "module 'numbacuda_ufunc.cuda' has no attribute 'const'"


def test_normalise_message_numbers_and_addresses():
    assert (ns.normalise_message("expected 3.5e-07 got -2 at 0x7f00ab12, 1+2j")
            == "expected N got N at 0x…, N+N")
    assert ns.normalise_message("") == ""
    long = ns.normalise_message("x" * 400, limit=50)
    assert len(long) == 50 and long.endswith("…")


def test_normalise_message_cuts_multiline_reprs():
    a = ns.normalise_message("'membar.cta;' not found in {'(int32[:])': '//\\n// Generated "
                             "by NVIDIA NVVM Compiler\\n// Build CL-1\\n'}")
    assert a == "'membar.cta;' not found in {…"
    short = "unsupported call (x) of y"
    assert ns.normalise_message(short) == short


def test_split_exception_line():
    assert ns.split_exception_line(
        "ModuleNotFoundError: No module named 'numba.cuda.extending'") == (
        "ModuleNotFoundError", "No module named 'numba.cuda.extending'")
    assert ns.split_exception_line("numbacuda_ufunc.errors.CompileError: bad") == (
        "CompileError", "bad")
    assert ns.split_exception_line("something odd") == ("Error", "something odd")


def test_count_tests_in_source():
    src = textwrap.dedent("""
        import unittest
        class TestA(unittest.TestCase):
            def test_one(self): pass
            def test_two(self): pass
            def helper(self): pass
        class Helper:
            def test_not_counted(self): pass
        class Mine(CUDATestCase):
            def test_three(self): pass
        def test_four(): pass
        def other(): pass
    """)
    assert ns.count_tests_in_source(src) == 4
    assert ns.count_tests_in_source("x = 1") == 1  # a file that fails counts once at least
    assert ns.count_tests_in_source("def (:") == 1


def _report(nodeid, when, outcome, **kw):
    return dict(kind="report", nodeid=nodeid, when=when, outcome=outcome,
                xfail=kw.pop("xfail", False), **kw)


def test_outcomes_from_events_each_kind():
    events = [dict(kind="collected", nodeid=n) for n in ("f::a", "f::b", "f::c", "f::d",
                                                          "f::e")]
    events += [
        _report("f::a", "setup", "passed"), _report("f::a", "call", "passed"),
        _report("f::a", "teardown", "passed"),
        _report("f::b", "setup", "passed"),
        _report("f::b", "call", "failed", exc_type="AssertionError", exc_msg="1 != 2"),
        _report("f::b", "teardown", "passed"),
        _report("f::c", "setup", "failed", exc_type="RuntimeError", exc_msg="no device"),
        _report("f::c", "teardown", "passed"),
        _report("f::d", "setup", "skipped", reason="requires cc >= 10.0"),
        _report("f::e", "setup", "passed"), _report("f::e", "call", "skipped", xfail=True),
    ]
    got = ns.outcomes_from_events(events, "", "f", None)
    assert {k: v["outcome"] for k, v in got.items()} == dict(
        [("f::a", "passed"), ("f::b", "failed"), ("f::c", "errored"), ("f::d", "skipped"),
         ("f::e", "xfailed")])
    assert got["f::b"]["cluster"] == "AssertionError: N != N"
    assert got["f::d"]["reason"] == "requires cc >= 10.0"


def test_outcomes_unimportable_file_counts_its_tests_as_failed():
    src = "class TestX(CUDATestCase):\n    def test_a(self): pass\n    def test_b(self): pass\n"
    events = [dict(kind="collect_error", nodeid="f.py",
                   error="ModuleNotFoundError: No module named 'numba.cuda.extending'")]
    got = ns.outcomes_from_events(events, src, "f.py", None)
    assert len(got) == 2
    assert all(v["outcome"] == "failed" for v in got.values())
    assert {v["cluster"] for v in got.values()} == {
        "ModuleNotFoundError: No module named 'numba.cuda.extending'"}


def test_outcomes_module_skip_counts_tests_as_skipped():
    src = "def test_a(): pass\ndef test_b(): pass\ndef test_c(): pass\n"
    events = [dict(kind="collect_skip", nodeid="f.py", reason="not here")]
    got = ns.outcomes_from_events(events, src, "f.py", None)
    assert [v["outcome"] for v in got.values()] == ["skipped"] * 3


def test_outcomes_killed_process_fails_unfinished_tests():
    events = [dict(kind="collected", nodeid="f::a"), dict(kind="collected", nodeid="f::b"),
              _report("f::a", "setup", "passed"), _report("f::a", "call", "passed"),
              _report("f::a", "teardown", "passed"), _report("f::b", "setup", "passed")]
    got = ns.outcomes_from_events(events, "", "f", "file timeout after 10 s")
    assert got["f::a"]["outcome"] == "passed"
    assert got["f::b"]["outcome"] == "failed"
    assert got["f::b"]["cluster"].startswith("Timeout: file timeout after N s")


def test_summarise_rates_and_cluster_order():
    per_file = {
        "a": {"a::1": dict(outcome="passed"), "a::2": dict(outcome="skipped"),
              "a::3": dict(outcome="failed", cluster="E: x"),
              "a::4": dict(outcome="failed", cluster="F: y")},
        "b": {"b::1": dict(outcome="errored", cluster="F: y"),
              "b::2": dict(outcome="passed")},
    }
    s = ns.summarise(per_file, top=1)
    assert s["total"] == dict(passed=2, failed=2, errored=1, skipped=1, xfailed=0, tests=6)
    assert s["pass_rate_of_collected"] == pytest.approx(2 / 6)
    assert s["pass_rate_of_not_skipped"] == pytest.approx(2 / 5)
    assert s["pass_rate_of_importable_not_skipped"] == pytest.approx(2 / 5)
    per_file["c"] = {"c::<not importable #1>": dict(outcome="failed", cluster="I: z")}
    s2 = ns.summarise(per_file, top=1)
    assert s2["pass_rate_of_not_skipped"] == pytest.approx(2 / 6)
    assert s2["pass_rate_of_importable_not_skipped"] == pytest.approx(2 / 5)
    assert s2["not_importable"] == ["c"]
    assert [c["key"] for c in s["clusters"]] == ["F: y", "E: x"]
    assert s["clusters"][0]["examples"] == ["a::4", "b::1"]
    md = ns.summary_markdown(s, dict(date="d", commit="c", selection=["cudapy"]))
    top = md.split("## Files")[0]
    assert "| 1 | 2 | F: y |" in top and "E: x" not in top  # only the top 1 listed


# -- the shim's import mapping ------------------------------------------------------------

_SHIM_CHECKS = r"""
import unittest
import numbacuda_ufunc, numbacuda_ufunc.cuda, numbacuda_ufunc.types, numbacuda_ufunc.errors
import numba
from numba import cuda
import numba.cuda.types, numba.types
from numba.cuda import config, float32, HAS_NUMBA
from numba.cuda.core import errors
from numba.core.errors import TypingError
from numba.cuda.np.numpy_support import from_dtype, as_dtype
from numba.cuda.compiler import compile_ptx
from numba.cuda import testing
from numba.cuda.tests.support import TestCase, override_config, captured_stdout

assert cuda is numbacuda_ufunc.cuda  # the translator knows the namespace by identity
assert numbacuda_ufunc.cuda.np.float64 is __import__("numpy").float64  # still numpy
assert numba.cuda.types is numbacuda_ufunc.types is numba.types
assert float32 is numbacuda_ufunc.float32 and HAS_NUMBA
assert numba.vectorize is numbacuda_ufunc.vectorize
assert TypingError is errors.TypingError is numbacuda_ufunc.errors.CompileError
assert numba.errors is errors
assert from_dtype is numbacuda_ufunc.types.from_dtype
import numpy
assert as_dtype(numbacuda_ufunc.float32) == numpy.float32
assert as_dtype(from_dtype(numpy.dtype("c8"))) == numpy.complex64
assert config.CUDA_ENABLE_NRT == 0 and config.DISABLE_PERFORMANCE_WARNINGS == 0
assert compile_ptx is numbacuda_ufunc.cuda.compile_ptx
assert numba.cuda.config is config and config.ENABLE_CUDASIM is False

def f(): pass
assert not getattr(testing.skip_on_cudasim("sim")(f), "__unittest_skip__", False)
assert not getattr(testing.skip_on_standalone_numba_cuda(f), "__unittest_skip__", False)
assert not getattr(testing.skip_unless_cc_90(f), "__unittest_skip__", False)
assert not getattr(testing.skip_if_cudadevrt_missing(f), "__unittest_skip__", False)
assert getattr(testing.skip_unless_cudasim("sim only")(f), "__unittest_skip__", False)
assert testing.cc_X_or_above(9, 0) and not testing.cc_X_or_above(10, 0)

import numba.cuda.cudadrv.driver
assert numba.cuda.cudadrv.driver is numbacuda_ufunc.cuda.cudadrv.driver
import numba.cuda.extending
import numba.extending
assert numba.cuda.extending is numba.extending is numbacuda_ufunc.cuda.extending
from numba.cuda import libdevice
assert libdevice is numbacuda_ufunc.cuda.libdevice
from numba.cuda.libdevicefuncs import create_signature, functions
assert len(functions) == 317 and len(create_signature(*functions["__nv_sincos"]).return_type) == 2
from numba.cuda.cudadrv import nvrtc
assert nvrtc is numbacuda_ufunc.cuda.cudadrv.nvrtc and numba.cuda.cudadrv.nvrtc is nvrtc
from numba.cuda.core.callconv import CUDACallConv
try:
    CUDACallConv(None)
except NotImplementedError as exc:
    assert "no counterpart" in str(exc)
else:
    raise AssertionError("CUDACallConv made")
from numba.cuda import compile_all
assert compile_all is numbacuda_ufunc.cuda.compile_all
for missing in ("numba.cuda.core.controlflow", "numba.cuda.cudadrv.nvvm", "numba.core.ir"):
    try:
        __import__(missing)
    except ImportError:
        pass
    else:
        raise AssertionError(missing + " imported")
for module, name in (("numba.cuda.compiler", "run_frontend"), ("numba.cuda", "cudadecl")):
    try:
        exec(f"from {module} import {name}")
    except ImportError:
        pass
    else:
        raise AssertionError(name + " imported")

with override_config("ENABLE_CUDASIM", 1):
    assert config.ENABLE_CUDASIM == 1
assert config.ENABLE_CUDASIM is False
with captured_stdout() as out:
    print("hi")
assert out.getvalue() == "hi\n"

import numpy as np
t = TestCase()
t.assertPreciseEqual(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
t.assertPreciseEqual(1.0, 1.0 + 1e-17, prec="double")
for a, b in ((0.0, -0.0), (1, 1.0), (np.float32(1), np.float64(1)),
             (np.array([1, 2]), np.array([1, 3])), (1.0, 1.001)):
    try:
        t.assertPreciseEqual(a, b)
    except AssertionError:
        pass
    else:
        raise AssertionError(f"{a!r} == {b!r} accepted")
print("SHIM OK")
"""


# The shim stands in for numba-cuda; where the real one is installed (the GPU machine's
# image), its numba_cuda package's own modules are imported through the shim and fail there
# (numba-cuda 0.30.4 on NumPy 2.5: np.row_stack is gone).
_REAL_NUMBA_CUDA = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is not None,
                                      reason="numba-cuda is installed: it shadows the shim")


def _shim_env(root):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


@_REAL_NUMBA_CUDA
def test_shim_import_mapping(tmp_path):
    ns.write_shim(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _SHIM_CHECKS], env=_shim_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "SHIM OK" in proc.stdout


def test_shim_sources_compile():
    for name, text in ns.shim_sources().items():
        compile(text, name, "exec")  # every generated module is valid Python


# -- end to end on a small tests folder written here ---------------------------------------

_FAKE_TESTS = '''
import numpy as np
from numba import cuda
from numba.cuda.testing import CUDATestCase, skip_on_cudasim, skip_unless_cudasim


def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * 2


class TestFake(CUDATestCase):
    @skip_on_cudasim("runs here")
    def test_kernel_runs(self):
        a = np.arange(5, dtype=np.float32)
        cuda.jit(double)[1, 32](a)
        self.assertPreciseEqual(a, np.arange(5, dtype=np.float32) * 2)

    def test_fails(self):
        self.assertEqual(1, 2)

    @skip_unless_cudasim("simulator only")
    def test_skipped(self):
        pass
'''


@_REAL_NUMBA_CUDA
def test_end_to_end_on_a_small_tests_folder(tmp_path):
    tests = tmp_path / "numba" / "cuda" / "tests"
    (tests / "cudapy").mkdir(parents=True)
    (tests / "cudapy" / "__init__.py").write_text("")
    (tests / "cudapy" / "test_fake.py").write_text(_FAKE_TESTS)
    (tests / "cudapy" / "test_noimport.py").write_text(
        "from numba.cuda.core.controlflow import CFGraph\n"
        "def test_a(): pass\ndef test_b(): pass\n")
    out = tmp_path / "out"
    rc = ns.main([str(tmp_path), "--select", "cudapy", "--out", str(out),
                  "--timeout", "200", "--file-timeout", "400"])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total"] == dict(passed=1, failed=3, errored=0, skipped=1, xfailed=0,
                                    tests=5)
    keys = {c["key"]: c["count"] for c in summary["clusters"]}
    assert keys == {"ModuleNotFoundError: No module named 'numba.cuda.core.controlflow'": 2,
                    "AssertionError: N != N": 1}
    assert summary["not_importable"] == ["cudapy/test_noimport.py"]
    assert "pass rate of collected tests: 20.0%" in (out / "summary.md").read_text()
