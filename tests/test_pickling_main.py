"""Objects defined in ``__main__`` (a script run directly, a notebook cell) pickle by value,
as cloudpickle pickles the functions of ``__main__``: another process's ``__main__`` lacks
them. Module-level objects of importable modules still pickle by name.

The notebook case runs an IPython ``InteractiveShell`` cell on a process-based
``distributed.LocalCluster``; the script case runs ``python script.py``. Both run in a child
process under a time limit, and every wait inside has a timeout of its own, so a worker
that cannot unpickle a function (which used to leave ``.compute()`` waiting for ever)
fails the test instead of hanging it.
"""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from numbacuda_ufunc import cuda, vectorize

# The functions below as a notebook or a script defines them: at the top level of
# ``__main__``. Emulated cuda-target objects and a cpu-target ufunc, eager and lazy.
_DEFINITIONS = '''
import math
import numpy as np
from numbacuda_ufunc import cuda, guvectorize, vectorize

@vectorize(["float64(float64, float64)"], target="cpu")
def rel(a, b):
    return (a - b) / b

@vectorize
def hyp(a, b):
    return math.hypot(a, b)

@cuda.jit(device=True)
def twice(v):
    return 2 * v

@guvectorize(["void(float64[:], float64[:])"], "(n)->()")
def total(x, out):
    s = 0.0
    for v in x:
        s += twice(v)
    out[0] = s

@cuda.jit
def negate(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = -twice(a[i])

def run_negate(a):
    a = a.copy()
    negate[1, 32](a)
    return a
'''

# Runs on a LocalCluster of two single-threaded worker processes; each wait is bounded.
_ON_CLUSTER = '''
import dask.array as da
import distributed

def on_cluster():
    x = np.linspace(1.0, 4.0, 24).reshape(4, 6)
    y = np.full((4, 6), 2.0)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \\
            distributed.Client(cluster, timeout=60) as client:
        pids = client.run(os.getpid)
        dx = da.from_array(x, chunks=(2, 6))
        dy = da.from_array(y, chunks=(2, 6))
        got = {
            "rel": client.compute(rel(dx, dy)).result(timeout=TIMEOUT),
            "hyp": client.compute(hyp(dx, dy)).result(timeout=TIMEOUT),
            "total": client.compute(total(dx)).result(timeout=TIMEOUT),
            "negate": client.submit(run_negate, x[0]).result(timeout=TIMEOUT),
            "rel_direct": client.submit(rel, x, y).result(timeout=TIMEOUT),
        }
    assert len(set(pids.values()) - {os.getpid()}) == 2, pids
    want = {"rel": (x - y) / y, "hyp": np.hypot(x, y), "total": 2 * x.sum(axis=1),
            "negate": -2 * x[0], "rel_direct": (x - y) / y}
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-15, err_msg=name)
    return sorted(got)
'''

# Each wait inside the child; the child itself gets this plus start-up time.
_WAIT = 90
_CHILD_LIMIT = 420


def _child_env():
    # The workers are processes of their own: they need emulation on a machine without a
    # GPU (conftest set it for this process; the child and its workers inherit it).
    return dict(os.environ, PYTHONUNBUFFERED="1")


def _run_child(args, cwd):
    try:
        out = subprocess.run(args, cwd=cwd, env=_child_env(), capture_output=True, text=True,
                             timeout=_CHILD_LIMIT)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the child did not finish in {_CHILD_LIMIT} s (a worker waiting for a "
                    f"function it cannot unpickle?); its output:\n{(e.stderr or '')[-3000:]}")
    assert out.returncode == 0, out.stderr[-4000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


_NOTEBOOK = '''
import json, os, sys
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
cells = [{definitions!r}, {on_cluster!r}, "import os\\nTIMEOUT = {wait}\\nresult = on_cluster()"]
for cell in cells:
    shell.run_cell(cell).raise_error()
assert shell.user_ns["rel"].__module__ == "__main__"
assert sys.modules["__main__"] is shell.user_module   # pickle would find rel here by name
print(json.dumps(shell.user_ns["result"]))
'''


def test_notebook_cell_objects_run_on_a_process_local_cluster(tmp_path):
    pytest.importorskip("IPython")
    pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    script = _NOTEBOOK.format(definitions=_DEFINITIONS, on_cluster=_ON_CLUSTER, wait=_WAIT)
    got = _run_child([sys.executable, "-c", script], tmp_path)
    assert got == ["hyp", "negate", "rel", "rel_direct", "total"]


def test_script_main_objects_run_on_a_process_local_cluster(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    # Workers started by spawn import the script again as __mp_main__; the guard keeps
    # them from starting clusters of their own.
    script = tmp_path / "script.py"
    script.write_text(_DEFINITIONS + "import json, os\n" + _ON_CLUSTER + textwrap.dedent(f'''
        TIMEOUT = {_WAIT}
        if __name__ == "__main__":
            print(json.dumps(on_cluster()))
        '''))
    got = _run_child([sys.executable, str(script)], tmp_path)
    assert got == ["hyp", "negate", "rel", "rel_direct", "total"]


# The same objects made in a stand-in ``__main__`` namespace (as a notebook cell or a script
# makes them), pickled here and loaded in a fresh process whose ``__main__`` lacks them.
_LOAD = '''
import json, pickle, sys
import numpy as np
rel, hyp, total, fact_launch, msum, negate_bytes = pickle.loads(sys.stdin.buffer.read())
run_negate = pickle.loads(negate_bytes)
x = np.array([1.0, 2.5, 4.0])
a = np.arange(5, dtype=np.int64)
fact_launch(a)
print(json.dumps([rel(x, 2.0).tolist(), hyp(x, x).tolist(), total(x).tolist(),
                  run_negate(x).tolist(), a.tolist(), float(msum(x))]))
'''

_RECURSIVE = '''
from numbacuda_ufunc import cuda, reduce

@reduce
def msum(a, b):
    return a + b

@cuda.jit(device=True)
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)

@cuda.jit
def fact_kernel(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = fact(a[i])
'''


def _as_main(source):
    namespace = {"__name__": "__main__"}
    exec(compile(source, "<notebook-cell>", "exec"), namespace)
    return namespace


def test_main_objects_pickle_by_value_and_rebuild_in_a_fresh_process():
    cloudpickle = pytest.importorskip("cloudpickle")
    ns = _as_main(_DEFINITIONS + _RECURSIVE)
    objs = tuple(ns[k] for k in ("rel", "hyp", "total", "fact_kernel", "msum"))
    for obj in objs:
        assert obj.__module__ == "__main__"
        # By value: the stream holds the function, not a reference to __main__.<name>
        assert b"__main__\n" + obj.__name__.encode() not in pickle.dumps(obj, protocol=0)
    # Our objects under plain pickle; a plain function of __main__ (calling the kernel
    # `negate`, a global it pickles by value) under cloudpickle, as dask.distributed does.
    # The kernel goes as a configured launch (kernel[1, 8]), which pickles the kernel.
    payload = pickle.dumps(objs[:3] + (ns["fact_kernel"][1, 8], ns["msum"],
                                       cloudpickle.dumps(ns["run_negate"])))
    out = subprocess.run([sys.executable, "-c", _LOAD], input=payload,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    rel, hyp, total, negate, fact, msum = json.loads(out.stdout.decode().strip().splitlines()[-1])
    x = np.array([1.0, 2.5, 4.0])
    np.testing.assert_allclose(rel, (x - 2.0) / 2.0, rtol=1e-15)
    np.testing.assert_allclose(hyp, np.hypot(x, x), rtol=1e-15)
    np.testing.assert_allclose(total, 2 * x.sum(), rtol=1e-15)
    np.testing.assert_allclose(negate, -2 * x, rtol=1e-15)
    assert fact == [1, 1, 2, 6, 24]
    assert msum == 7.5


def test_recursive_main_device_function_pickles_once():
    # fact's function refers to the Kernel `fact`, whose pickle holds that function: the
    # cycle goes through one cloudpickle dump, which memoizes it (no endless nesting).
    ns = _as_main(_RECURSIVE)
    clone = pickle.loads(pickle.dumps(ns["fact_kernel"]))
    assert clone is not ns["fact_kernel"]
    a = np.arange(6, dtype=np.int64)
    clone[1, 8](a)
    np.testing.assert_array_equal(a, [1, 1, 2, 6, 24, 120])


@vectorize(["float64(float64)"], target="cpu")
def module_level(v):
    return v + 1


@cuda.jit
def module_kernel(a):
    a[0] = 1


def test_importable_module_objects_still_pickle_by_name():
    assert pickle.loads(pickle.dumps(module_level)) is module_level
    assert pickle.loads(pickle.dumps(module_kernel)) is module_kernel
    assert pickle.loads(pickle.dumps(module_kernel[1, 1])).__class__ is type(module_kernel[1, 1])
