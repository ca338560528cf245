#!/usr/bin/env python3
"""Run numba-cuda's own test suite against numbacuda_ufunc, as a Numba user would.

A Numba user moving to numbacuda_ufunc rewrites ``numba`` to ``numbacuda_ufunc`` in their
imports. This script measures how much of numba-cuda's test suite survives that: it builds,
in a temporary folder, a ``numba`` package whose public modules (``numba.cuda``,
``numba.cuda.types``, ``numba.types``, ``numba.cuda.core.errors``/``config``,
``numba.cuda.np.numpy_support``, ``numba.cuda.extending``, ``numba.cuda.libdevice``...) are
ours, and a minimal test harness (``numba.cuda.testing``, ``numba.cuda.tests.support``)
written here. Modules with nothing of ours behind them (Numba's IR, typing internals) are
absent, so tests that import them fail (they are counted as failed, not skipped, and
listed).

Nothing of numba-cuda is copied into this repository: the script takes the path of a
numba-cuda checkout (or of its ``numba/cuda/tests`` folder), copies the selected test
folders into the temporary folder next to the shim, and runs each test file with pytest in
its own subprocess under ``NUMBACUDA_UFUNC_ENABLE_CUDASIM=1``.

Harness decisions (see README, "Numba compatibility"):

* ``config.ENABLE_CUDASIM`` is False: our host backend stands in for a GPU, so tests take
  their hardware paths and ``skip_on_cudasim`` does not skip. ``skip_unless_cudasim``
  (simulator-only tests) skips.
* Markings that need a real GPU (``skip_unless_cc_*``, ``cc_X_or_above``) follow the
  emulated device (compute capability 9.0); tool checks (nvdisasm, nvJitLink, CUDA
  headers, cffi) look at this machine.
* Without cuda-python, ``cuda.bindings.runtime`` is a stand-in whose only name is
  ``cudaRoundMode`` (numbacuda_ufunc.cuda.fp8's, same values), which the FP8 tests pass
  to the e8m0 conversions. A stand-in rather than installing ``cuda-bindings``: the
  harness stays offline and self-contained, and cuda-python's presence would change what
  other test files import (cuda.core).

Usage::

    python scripts/numba_suite.py /path/to/numba-cuda            # cudapy/ and doc_examples/
    python scripts/numba_suite.py /path/to/numba-cuda --files cudapy/test_math.py
    python scripts/numba_suite.py /path/to/numba-cuda --resume   # continue a stopped run

Results go to ``--out`` (default ``numba_suite_results/``): ``events/*.jsonl`` (one file per
test file, written as tests finish), ``summary.json`` and ``summary.md``.
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The shim (numba_suite_shim.py) sits beside this script, which also runs by path.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numba_suite_shim import shim_sources, write_shim  # noqa: E402, F401  (shim_sources: tests)

DEFAULT_SELECTION = ("cudapy", "doc_examples")
SUPPORT_FOLDERS = ("data",)  # test data the selected tests read (test_data_dir)


def find_tests_dir(path: Path) -> Path:
    """The numba/cuda/tests folder of a numba-cuda checkout, or the folder itself."""
    for candidate in (path, path / "numba" / "cuda" / "tests",
                      path / "numba_cuda" / "numba" / "cuda" / "tests"):
        if (candidate / "cudapy").is_dir():
            return candidate
    raise SystemExit(f"numba_suite.py: no numba-cuda tests folder (with cudapy/) under "
                     f"{str(path)!r}; pass a numba-cuda checkout or its numba/cuda/tests")


def build(tests_src: Path, root: Path, folders) -> Path:
    """Shim plus copies of the selected test folders; returns the shim's tests folder."""
    write_shim(root)
    dest = root / "numba" / "cuda" / "tests"
    for folder in (*folders, *SUPPORT_FOLDERS):
        src = tests_src / folder
        if src.is_dir() and not (dest / folder).exists():
            shutil.copytree(src, dest / folder,
                            ignore=shutil.ignore_patterns("__pycache__"))
    return dest


# --------------------------------------------------------------------------------------
# Counting, outcomes, clustering
# --------------------------------------------------------------------------------------

def count_tests_in_source(text: str) -> int:
    """Tests a file defines (test* methods of Test*/…TestCase classes, module test_*
    functions), for files that cannot be imported and so are never collected."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return 1
    count = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            count += node.name.startswith("test")
        elif isinstance(node, ast.ClassDef):
            bases = [ast.unparse(b) for b in node.bases]
            if node.name.startswith("Test") or any(b.endswith("TestCase") for b in bases):
                count += sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                             and n.name.startswith("test") for n in node.body)
    return max(count, 1)


_NORMALISERS = [
    (re.compile(r"(?:[A-Za-z]:)?[\w./<>\\-]*\.(?:py|cu|ptx|cuh|h)(?![\w.])(?::\d+)?"), "<file>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"\b(in|of) (function|kernel) '[^']*'"), r"\1 \2 '…'"),
    (re.compile(r"\[[^\[\]]{40,}\]"), "[…]"),
    (re.compile(r"([\[{(])(?=.{60,}$)(?=.*\\n).*$"), r"\1…"),  # a multi-line repr
    (re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?j?(?![\w])"), "N"),
    (re.compile(r"\s+"), " "),
]


def normalise_message(message: str, limit: int = 160) -> str:
    """One line standing for a family of messages: paths, addresses, numbers and
    function names replaced, so failures of one cause cluster together."""
    lines = [ln for ln in (message or "").strip().splitlines() if ln.strip()]
    text = lines[0] if lines else ""
    for pattern, replacement in _NORMALISERS:
        text = pattern.sub(replacement, text)
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def split_exception_line(line: str) -> tuple[str, str]:
    """'pkg.FooError: text' -> ('FooError', 'text') for collection errors."""
    match = re.match(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Warning|Skipped|Failed))"
                     r"(?::\s*(.*))?$", line.strip())
    if not match:
        return "Error", line.strip()
    return match.group(1).rsplit(".", 1)[-1], match.group(2) or ""


def cluster_key(exc_type: str, message: str) -> str:
    return f"{exc_type}: {normalise_message(message)}"


def outcomes_from_events(events: list[dict], source_text: str, file_label: str,
                         process_note: str | None) -> dict[str, dict]:
    """Per test: {'outcome': passed|failed|errored|skipped|xfailed, 'cluster', 'message'}."""
    results: dict[str, dict] = {}
    collected = [e["nodeid"] for e in events if e["kind"] == "collected"]
    module_errors = [e for e in events if e["kind"] == "collect_error"]
    module_skips = [e for e in events if e["kind"] == "collect_skip"]
    if module_errors and not collected:
        exc_type, message = split_exception_line(module_errors[0]["error"])
        n = count_tests_in_source(source_text)
        for i in range(n):
            results[f"{file_label}::<not importable #{i + 1}>"] = dict(
                outcome="failed", cluster=cluster_key(exc_type, message), message=message)
        return results
    if module_skips and not collected:
        n = count_tests_in_source(source_text)
        for i in range(n):
            results[f"{file_label}::<module skipped #{i + 1}>"] = dict(
                outcome="skipped", reason=module_skips[0]["reason"])
        return results
    for nodeid in collected:
        results[nodeid] = dict(outcome=None)
    for event in events:
        if event["kind"] != "report":
            continue
        entry = results.setdefault(event["nodeid"], dict(outcome=None))
        if event["outcome"] == "failed":
            failed_as = "failed" if event["when"] == "call" else "errored"
            if entry.get("outcome") not in ("failed", "errored"):
                msg = event.get("exc_msg", "")
                entry.update(outcome=failed_as, message=msg,
                             cluster=cluster_key(event.get("exc_type", "Error"), msg))
        elif event["outcome"] == "skipped" and entry.get("outcome") is None:
            entry.update(outcome="xfailed" if event["xfail"] else "skipped",
                         reason=event.get("reason", ""))
        elif event["outcome"] == "passed" and event["when"] == "call":
            if entry.get("outcome") is None:
                entry["outcome"] = "passed"
        entry.setdefault("_phases", set()).add(event["when"])
    for entry in results.values():
        phases = entry.pop("_phases", set())
        if entry["outcome"] is None or (process_note and "teardown" not in phases
                                        and entry["outcome"] == "passed"):
            note = process_note or "test did not report an outcome"
            entry.update(outcome="failed", message=note, cluster=cluster_key("Timeout", note))
    return results


def summarise(per_file: dict[str, dict[str, dict]], top: int = 15) -> dict:
    kinds = ("passed", "failed", "errored", "skipped", "xfailed")
    files = {}
    total = collections.Counter()
    clusters: dict[str, list[str]] = collections.defaultdict(list)
    for label, tests in sorted(per_file.items()):
        counts = collections.Counter(t["outcome"] for t in tests.values())
        files[label] = {k: counts.get(k, 0) for k in kinds}
        total.update(files[label])
        for nodeid, t in tests.items():
            if t["outcome"] in ("failed", "errored"):
                clusters[t["cluster"]].append(nodeid)
    n = sum(total[k] for k in kinds)
    ran = n - total["skipped"] - total["xfailed"]
    ordered = sorted(clusters.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    not_importable = sorted(label for label, tests in per_file.items()
                            if any("<not importable" in k for k in tests))
    importable = [t for label, tests in per_file.items() if label not in not_importable
                  for t in tests.values() if t["outcome"] not in ("skipped", "xfailed")]
    importable_passed = sum(t["outcome"] == "passed" for t in importable)
    return dict(
        total={k: total.get(k, 0) for k in kinds} | {"tests": n},
        pass_rate_of_collected=(total["passed"] / n) if n else 0.0,
        pass_rate_of_not_skipped=(total["passed"] / ran) if ran else 0.0,
        pass_rate_of_importable_not_skipped=(importable_passed / len(importable)
                                             if importable else 0.0),
        files=files,
        clusters=[dict(key=k, count=len(v), examples=v[:3]) for k, v in ordered],
        not_importable=not_importable,
        top=top,
    )


def summary_markdown(summary: dict, meta: dict) -> str:
    t = summary["total"]
    importable_files = len(summary["files"]) - len(summary["not_importable"])
    lines = [
        "# numba-cuda test suite against numbacuda_ufunc",
        "",
        f"Run {meta.get('date', '?')}, numbacuda_ufunc {meta.get('commit', '?')}, "
        f"numba-cuda {meta.get('numba_cuda_commit', '?')}, selection "
        f"{', '.join(meta.get('selection', []))}.",
        "",
        f"* tests: {t['tests']} (passed {t['passed']}, failed {t['failed']}, "
        f"errored {t['errored']}, skipped {t['skipped']}, xfailed {t['xfailed']})",
        f"* pass rate of collected tests: {100 * summary['pass_rate_of_collected']:.1f}%",
        f"* pass rate of tests not skipped: {100 * summary['pass_rate_of_not_skipped']:.1f}%",
        f"* pass rate of tests not skipped, in the {importable_files} files that import: "
        f"{100 * summary['pass_rate_of_importable_not_skipped']:.1f}%",
        "",
        f"## Largest failure clusters (top {summary['top']})",
        "",
        "| # | tests | exception: normalised message | examples |",
        "|---|---|---|---|",
    ]
    for i, c in enumerate(summary["clusters"][: summary["top"]], 1):
        key = c["key"].replace("|", "\\|")
        lines.append(f"| {i} | {c['count']} | {key} | {'<br>'.join(c['examples'][:2])} |")
    lines += ["", "## Files that do not import (all their tests counted as failed)", ""]
    lines += [f"* {label}" for label in summary["not_importable"]] or ["* none"]
    lines += ["", "## Per file", "", "| file | passed | failed | errored | skipped | xfailed |",
              "|---|---|---|---|---|---|"]
    for label, c in summary["files"].items():
        lines.append(f"| {label} | {c['passed']} | {c['failed']} | {c['errored']} | "
                     f"{c['skipped']} | {c['xfailed']} |")
    lines += ["", "## All failure clusters", ""]
    for c in summary["clusters"]:
        lines.append(f"* {c['count']} × `{c['key']}` e.g. {', '.join(c['examples'][:2])}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------

def _have_pytest_timeout() -> bool:
    return importlib.util.find_spec("pytest_timeout") is not None


def run_file(root: Path, rel: str, events_path: Path, timeout: float,
             file_timeout: float) -> str | None:
    """Run one test file; returns a note when the process did not end normally."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    env["NUMBACUDA_UFUNC_ENABLE_CUDASIM"] = "1"
    env["NUMBA_SUITE_EVENTS"] = str(events_path)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "_numba_suite_reporter",
           "-c", str(root / "pytest.ini"), "--rootdir", str(root)]
    if _have_pytest_timeout():
        cmd += [f"--timeout={timeout}", "--timeout-method=signal"]
    cmd.append(rel)
    events_path.unlink(missing_ok=True)
    events_path.touch()
    log = events_path.with_suffix(".log")
    with open(log, "w", encoding="utf-8") as out:
        try:
            proc = subprocess.run(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=file_timeout)
        except subprocess.TimeoutExpired:
            return f"file timeout after {file_timeout:.0f} s (process killed)"
    if proc.returncode not in (0, 1, 2, 5):  # 2: collection errors, reported as events
        return f"pytest process ended with code {proc.returncode}"
    return None


def read_events(path: Path) -> list[dict]:
    events = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line cut by a killed process
    return events


def _git_commit(path: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("numba_cuda", type=Path,
                        help="a numba-cuda checkout, or its numba/cuda/tests folder")
    parser.add_argument("--select", nargs="+", default=list(DEFAULT_SELECTION),
                        help="test folders under numba/cuda/tests (default: %(default)s)")
    parser.add_argument("--files", nargs="+", default=None,
                        help="only these files, relative to numba/cuda/tests")
    parser.add_argument("--out", type=Path, default=Path("numba_suite_results"))
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="per-test timeout in s (pytest-timeout; default %(default)s)")
    parser.add_argument("--file-timeout", type=float, default=1800.0,
                        help="per-file timeout in s (default %(default)s)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the results of files already run into --out")
    parser.add_argument("--summarize-only", action="store_true",
                        help="rebuild the summary from --out without running anything")
    parser.add_argument("--top", type=int, default=15, help="failure clusters listed")
    parser.add_argument("--commit", default=None, help="numbacuda_ufunc commit to record")
    args = parser.parse_args(argv)

    tests_src = find_tests_dir(args.numba_cuda.resolve())
    if args.files:
        files = [Path(f).as_posix() for f in args.files]
        missing = [f for f in files if not (tests_src / f).is_file()]
        if missing:
            raise SystemExit(f"numba_suite.py: no such test file under {tests_src}: "
                             f"{', '.join(missing)}")
        folders = sorted({f.split("/")[0] for f in files})
    else:
        folders = args.select
        files = sorted(p.relative_to(tests_src).as_posix()
                       for folder in folders for p in (tests_src / folder).glob("test_*.py"))
    out = args.out.resolve()
    events_dir = out / "events"
    events_dir.mkdir(parents=True, exist_ok=True)

    root = Path(tempfile.mkdtemp(prefix="numba_suite_"))
    try:
        build(tests_src, root, folders)
        for i, rel in enumerate(files, 1):
            events_path = events_dir / (rel.replace("/", "__") + ".jsonl")
            done = events_path.with_suffix(".done")
            if args.summarize_only or (args.resume and done.exists()):
                continue
            started = time.monotonic()
            note = run_file(root, f"numba/cuda/tests/{rel}", events_path, args.timeout,
                            args.file_timeout)
            done.write_text(json.dumps({"note": note,
                                        "seconds": round(time.monotonic() - started, 1)}))
            print(f"[{i}/{len(files)}] {rel}: {time.monotonic() - started:.0f} s"
                  + (f" ({note})" if note else ""), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    per_file = {}
    for rel in files:
        events_path = events_dir / (rel.replace("/", "__") + ".jsonl")
        done = events_path.with_suffix(".done")
        if not done.exists():
            continue
        note = json.loads(done.read_text()).get("note")
        per_file[rel] = outcomes_from_events(read_events(events_path),
                                             (tests_src / rel).read_text(encoding="utf-8"),
                                             f"numba/cuda/tests/{rel}", note)
    summary = summarise(per_file, top=args.top)
    repo = Path(__file__).resolve().parent.parent
    meta = dict(date=time.strftime("%Y-%m-%d", time.gmtime()),
                commit=args.commit or _git_commit(repo),
                numba_cuda_commit=_git_commit(args.numba_cuda), selection=folders,
                files_run=len(per_file), files_selected=len(files))
    (out / "summary.json").write_text(json.dumps(dict(meta=meta, **summary) | {
        "tests": per_file}, indent=1, default=str), encoding="utf-8")
    text = summary_markdown(summary, meta)
    (out / "summary.md").write_text(text, encoding="utf-8")
    print(text.split("\n## Files")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
