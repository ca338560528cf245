"""pytest plugin (-p suite_cost_plugin): per test file, the CPU seconds of the test process
(NVRTC included: it runs in-process) and the kernel-cache counters (host and NVRTC
compiles); per worker, its getrusage (self and reaped children) and each test's start time.
Written to $SUITE_COST_DIR/stats/<worker>.json at the end of the session."""

import json
import os
import resource
import time

_open = {}
_files = {}
_starts = []


def _stats():
    from numbacuda_ufunc import _core
    return dict(_core.cache_stats())


def pytest_runtest_logstart(nodeid, location):
    _starts.append((nodeid, time.time()))


def pytest_runtest_setup(item):
    _open[item.nodeid] = (_stats(), time.process_time())


def pytest_runtest_logfinish(nodeid, location):
    if nodeid not in _open:
        return
    s0, c0 = _open.pop(nodeid)
    s1 = _stats()
    a = _files.setdefault(nodeid.split("::")[0],
                          {"nvrtc": 0, "host": 0, "disk_hits": 0, "proc_cpu": 0.0, "n": 0})
    a["nvrtc"] += s1["nvrtc_compiles"] - s0["nvrtc_compiles"]  # a test may reset the counters
    a["host"] += s1["host_compiles"] - s0["host_compiles"]
    a["disk_hits"] += s1["disk_hits"] - s0["disk_hits"]
    a["proc_cpu"] += time.process_time() - c0
    a["n"] += 1


def pytest_sessionfinish(session):
    out = os.path.join(os.environ["SUITE_COST_DIR"], "stats")
    os.makedirs(out, exist_ok=True)
    usage = {k: (lambda r: r.ru_utime + r.ru_stime)(resource.getrusage(v))
             for k, v in (("self", resource.RUSAGE_SELF), ("children", resource.RUSAGE_CHILDREN))}
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"files": _files, "rusage": usage, "starts": _starts}, f, indent=1)
