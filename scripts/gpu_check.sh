#!/usr/bin/env bash
# scripts/gpu_check.sh: the GPU check in stages, each small enough for one device call.
#
#   scripts/gpu_check.sh STAGE [STAGE ...]
#
#   build      offline editable build (pip --no-build-isolation --no-deps -e .); every
#              other stage runs it first, which is a no-op when the tree is already built
#   smoke      python -m numbacuda_ufunc, then tests/test_smoke.py (round trip, vectorize,
#              guvectorize, reduce, a @cuda.jit launch, a pinned copy, CuPy interop)
#   tests      the whole suite, one pytest process per test file ($JOBS at once, each
#              under a $FILE_TIMEOUT-second limit), so one sticky CUDA error (a context
#              that an illegal access has poisoned) fails one file, not every later one
#   sanitizer  compute-sanitizer memcheck and racecheck over the smoke set
#   bench      the benchmarks side by side with CuPy and numba-cuda: the JSON, the ratio
#              table (.md) and the throughput plot (.png) in benchmarks/results and $OUT
#   profile    Nsight Compute (ncu) on one warm launch of each case of
#              benchmarks/profile_cases.py (the largest gaps of the last GPU run), ours
#              and the peer's, into $OUT/ncu.txt
#   all        every stage above, in order (too long for one device call; for a local run)
#   check      the first device call of a GPU session: smoke, then tests (build included)
#
# A GPU session's device time is 15 minutes, start-up included, so the check is two calls
# back to back (the machine stays warm 30 s after a call; nothing may wait between them):
#
#   1. JOBS=16 TESTS_BUDGET=330 scripts/gpu_check.sh check        (timeout_s=480)
#      build on all cores, the main job, the smoke set, the whole suite
#   2. BENCH_BUDGET=230 scripts/gpu_check.sh bench                (timeout_s=300)
#      the default BENCH_FILES below at --bench-time=0.1: every GPU group but the host
#      target's; stopped with SIGINT at the budget, so the JSON of what ran is still written
#
# Environment: OUT (logs and results; default /tmp/numbacuda_ufunc_gpu_check), PYTHON
# (default python3), JOBS (test files at once; default: the CPU count), FILE_TIMEOUT
# (seconds per test file; default 420), TESTS_BUDGET (seconds for the whole tests stage,
# after which files still running are stopped and the log is written all the same; default
# 540), TEST_FILES (a subset of test files, e.g. to re-run failures), BENCH_FILES (benchmark
# files; default every GPU one: dispatch, launch, throughput, gufunc, reduce, methods,
# host_roundtrip, staging (host_roundtrip's CPU copy, on the GPU machine's CPU), compile),
# BENCH_ARGS (extra pytest options for the benchmarks, e.g. "--bench-max-log2=24";
# default "--bench-time=0.1 --bench-compile-rounds=2"), BENCH_BUDGET
# (seconds for the benchmarks; default 600), PROFILE_CASES (e.g. "gufunc16:ours
# gufunc16:numba-cuda"; default: every case, ours and its peer). Each stage ends with one
# line "SUMMARY <stage>: ..." and the script exits non-zero when any stage failed.
#
# $OUT stays flat and small (the device tool returns at most 8 files): gpu.txt, build.log,
# smoke.txt, tests.txt, sanitizer.txt, benchmarks.txt and the results it names, ncu.txt.
# shellcheck disable=SC2317  # the stage functions are called as "stage_$s"
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${OUT:-/tmp/numbacuda_ufunc_gpu_check}
mkdir -p "$out"
py=${PYTHON:-python3}
jobs=${JOBS:-$(nproc)}
file_timeout=${FILE_TIMEOUT:-420}
export PYTHONUNBUFFERED=1

gpu_name() {
    nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1
}

gpu_slug() {
    local g
    g=$(gpu_name)
    echo "${g:-no-gpu}" | tr '[:upper:]' '[:lower:]' | sed -e 's/nvidia//' -e 's/[^a-z0-9]\+/-/g' \
        -e 's/^-//' -e 's/-$//'
}

stage_build() {
    { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
      nvcc --version | tail -2
      $py -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
      $py -m pip list 2>/dev/null | grep -iE '^(cupy|numba|ml.dtypes|pytest|pybind11|scikit-build)'
    } >"$out/gpu.txt" 2>&1
    if ! CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) $py -m pip install --no-build-isolation --no-deps -e . \
            >"$out/build.log" 2>&1; then
        tail -40 "$out/build.log"
        echo "SUMMARY build: FAILED (see build.log)"
        return 1
    fi
    echo "SUMMARY build: ok ($(head -2 "$out/gpu.txt" | tail -1))"
}

stage_smoke() {
    local main_rc test_rc
    echo "== python -m numbacuda_ufunc" >"$out/smoke.txt"
    $py -m numbacuda_ufunc >>"$out/smoke.txt" 2>&1
    main_rc=$?
    echo "== tests/test_smoke.py" >>"$out/smoke.txt"
    $py -m pytest -q -ra -p no:cacheprovider tests/test_smoke.py >>"$out/smoke.txt" 2>&1
    test_rc=$?
    cat "$out/smoke.txt"
    echo "SUMMARY smoke: main job rc=$main_rc; tests rc=$test_rc; $(tail -1 "$out/smoke.txt")"
    [ "$main_rc" = 0 ] && [ "$test_rc" = 0 ]
}

stage_tests() {
    local logs files
    logs=$(mktemp -d)
    if [ -n "${TEST_FILES:-}" ]; then
        files=$TEST_FILES
    else
        # the costliest files first (tests/conftest.py's HEAVY_FILES_FIRST, which orders
        # the README's xdist run), so that none of them starts late and runs on alone
        files=$($py -c 'import ast, glob, re
heavy = ast.literal_eval(re.search(r"HEAVY_FILES_FIRST = (\([^)]*\))",
                                   open("tests/conftest.py").read()).group(1))
files = sorted(glob.glob("tests/test_*.py"))
first = [f"tests/{h}" for h in heavy if f"tests/{h}" in files]
print("\n".join(first + [f for f in files if f not in first]))')
    fi
    # one process per file; --junitxml gives exact counts to add up
    # shellcheck disable=SC2086,SC2016  # word-split file list; $name expands in sh -c
    printf '%s\n' $files | timeout -k 10 "${TESTS_BUDGET:-540}" xargs -P "$jobs" -I{} sh -c '
        f={}; name=$(basename "$f" .py)
        timeout -k 10 '"$file_timeout"' '"$py"' -m pytest -q -ra -p no:cacheprovider \
            --junitxml="'"$logs"'/$name.xml" "$f" >"'"$logs"'/$name.log" 2>&1
        echo "$?" >"'"$logs"'/$name.rc"'
    : >"$out/tests.txt"
    for log in "$logs"/*.log; do
        name=$(basename "$log" .log)
        echo "==================== $name (rc=$(cat "$logs/$name.rc" 2>/dev/null || echo unfinished))" >>"$out/tests.txt"
        cat "$log" >>"$out/tests.txt"
    done
    $py - "$logs" >>"$out/tests.txt" <<'EOF'
import glob, os, sys
import xml.etree.ElementTree as ET
logs = sys.argv[1]
tot = dict(passed=0, failed=0, skipped=0, errors=0)
bad = []
for log in sorted(glob.glob(os.path.join(logs, "*.log"))):
    name = os.path.basename(log)[:-4]
    rc_file = os.path.join(logs, name + ".rc")
    if not os.path.exists(rc_file):
        bad.append(f"{name} (unfinished: stage budget spent)")
        continue
    rc = int(open(rc_file).read().strip() or 1)
    xml = os.path.join(logs, name + ".xml")
    if os.path.exists(xml):
        for s in ET.parse(xml).getroot().iter("testsuite"):
            n, f, e, sk = (int(s.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
            tot["passed"] += n - f - e - sk
            tot["failed"] += f
            tot["errors"] += e
            tot["skipped"] += sk
    if rc not in (0, 5):
        bad.append(f"{name} (rc={rc}{', timed out' if rc in (124, 137) else ''})")
print("files not clean:", ", ".join(bad) if bad else "none")
print(f"{tot['passed']} passed, {tot['failed'] + tot['errors']} failed, "
      f"{tot['skipped']} skipped")
EOF
    rm -rf "$logs"
    tail -2 "$out/tests.txt"
    echo "SUMMARY tests: $(tail -1 "$out/tests.txt"); $(tail -2 "$out/tests.txt" | head -1)"
    tail -2 "$out/tests.txt" | head -1 | grep -q 'files not clean: none'
}

stage_sanitizer() {
    local rc=0 tool
    : >"$out/sanitizer.txt"
    for tool in memcheck racecheck; do
        echo "==================== compute-sanitizer --tool $tool" >>"$out/sanitizer.txt"
        compute-sanitizer --tool "$tool" --target-processes all --error-exitcode 86 \
            "$py" -m pytest -q -p no:cacheprovider tests/test_smoke.py \
            >>"$out/sanitizer.txt" 2>&1 || rc=1
    done
    grep -E '^=+ (ERROR SUMMARY|RACECHECK SUMMARY)' "$out/sanitizer.txt"
    echo "SUMMARY sanitizer: $( [ "$rc" = 0 ] && echo clean || echo 'ERRORS (see sanitizer.txt)');" \
         "$(grep -cE '^=+ (ERROR SUMMARY|RACECHECK SUMMARY)' "$out/sanitizer.txt") summaries"
    return "$rc"
}

stage_bench() {
    local stem rc
    stem="benchmarks/results/$(date -u +%Y-%m-%d)-$(gpu_slug)"
    mkdir -p benchmarks/results
    # shellcheck disable=SC2086
    local files=${BENCH_FILES:-"dispatch launch throughput gufunc reduce methods host_roundtrip staging compile"}
    files=$(for f in $files; do case $f in *.py) echo "$f" ;; *) echo "benchmarks/bench_$f.py" ;; esac; done)
    # SIGINT at the budget: pytest ends the session as after Ctrl-C, and pytest-benchmark
    # still writes the JSON of every benchmark that finished
    # shellcheck disable=SC2086
    timeout -s INT -k 30 "${BENCH_BUDGET:-600}" \
        $py -m pytest $files --benchmark-only -q -rs -p no:cacheprovider \
        --benchmark-json="$stem.json" --benchmark-columns=median,iqr,rounds --benchmark-sort=name \
        ${BENCH_ARGS:---bench-time=0.1 --bench-compile-rounds=2} >"$out/benchmarks.txt" 2>&1
    rc=$?
    tail -5 "$out/benchmarks.txt"
    if [ ! -f "$stem.json" ]; then
        echo "SUMMARY bench: FAILED, no benchmark JSON written (rc=$rc)"
        return 1
    fi
    # Compact (no raw samples, no indentation): the full file (over 16 MiB at 328
    # benchmarks) is more than the device tool brings back.
    $py -c 'import json, sys
doc = json.load(open(sys.argv[1]))
for b in doc.get("benchmarks", []):
    b.get("stats", {}).pop("data", None)
json.dump(doc, open(sys.argv[1], "w"), separators=(",", ":"))' "$stem.json"
    $py benchmarks/report.py "$stem.json" -o "$stem.md" && cat "$stem.md"
    $py benchmarks/plot_throughput.py "$stem.json" -o "$stem.png" || rc=1
    cp "$stem".* "$out/"
    echo "SUMMARY bench: rc=$rc; $(tail -1 "$out/benchmarks.txt"); results:" "$stem".*
    return "$rc"
}

stage_profile() {
    local spec case impl rc=0
    : >"$out/ncu.txt"
    for spec in ${PROFILE_CASES:-gufunc16:ours gufunc16:numba-cuda gufunc4:ours gufunc4:numba-cuda \
                sum28:ours sum28:cupy strided24:ours strided24:cupy}; do
        case=${spec%%:*}
        impl=${spec#*:}
        echo "==================== $case $impl" >>"$out/ncu.txt"
        # the longest kernel of the case's third run: its launches are warm (compiled,
        # loaded), and the regex leaves out copies and CUB's small second passes
        (cd benchmarks && timeout 300 ncu --clock-control none --launch-skip 2 --launch-count 1 \
            -k "regex:.*(gufunc|reduce|units|elementwise|kernel|matmul|cupy|add).*" \
            --section SpeedOfLight --section LaunchStats --section Occupancy \
            --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
            "$py" profile_cases.py "$case" "$impl") >>"$out/ncu.txt" 2>&1 || rc=1
    done
    grep -E '^====================|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy' \
        "$out/ncu.txt"
    echo "SUMMARY profile: $( [ "$rc" = 0 ] && echo ok || echo 'a case failed (see ncu.txt)'); $out/ncu.txt"
    return "$rc"
}

[ $# -gt 0 ] || { sed -n '2,44p' "$0"; exit 2; }
stages=("$@")
[ "${stages[0]}" = all ] && stages=(smoke tests sanitizer bench profile)
[ "${stages[0]}" = check ] && stages=(smoke tests)
status=0
stage_build || exit 1
for s in "${stages[@]}"; do
    case "$s" in
        build) ;;
        smoke | tests | sanitizer | bench | profile) "stage_$s" || status=1 ;;
        *) echo "unknown stage '$s' (build, smoke, tests, sanitizer, bench, profile, check, all)"; exit 2 ;;
    esac
done
exit $status
