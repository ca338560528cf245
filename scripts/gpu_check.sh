#!/usr/bin/env bash
# scripts/gpu_check.sh: the whole GPU check in one call, on a machine without network.
# Builds the project offline, prints the environment report, runs every test on the real
# device, runs the benchmarks (benchmarks/, side by side with numba-cuda and CuPy when
# installed) and writes benchmarks/results/<date>-<gpu>.json and .md (the ratio table);
# logs and copies of the results go to $OUT (or /tmp/numbacuda_ufunc_gpu_check).
# BENCH_ARGS adds pytest options to the benchmark run (e.g. "--bench-max-log2=24");
# SKIP_TESTS=1 skips the test suite, SKIP_BENCH=1 the benchmarks.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/numbacuda_ufunc_gpu_check}
mkdir -p "$out"
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu.txt"

echo "== build (offline)"
if ! $py -m pip install --no-build-isolation --no-deps -e . >"$out/build.log" 2>&1; then
    tail -40 "$out/build.log"
    echo "SUMMARY: build failed"
    exit 1
fi

echo "== python -m numbacuda_ufunc"
$py -m numbacuda_ufunc 2>&1 | tee "$out/main.txt"
main_rc=${PIPESTATUS[0]}

test_rc=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
    echo "== tests on the device"
    $py -m pytest -q -ra tests 2>&1 | tee "$out/tests.txt"
    test_rc=${PIPESTATUS[0]}
else
    echo "tests skipped (SKIP_TESTS=1)" >"$out/tests.txt"
fi

bench_rc=0
if [ "${SKIP_BENCH:-0}" != 1 ] && ls benchmarks/bench_*.py >/dev/null 2>&1; then
    echo "== benchmarks"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    slug=$(echo "${gpu:-no-gpu}" | tr 'A-Z' 'a-z' | sed -e 's/nvidia//' -e 's/[^a-z0-9]\+/-/g' \
           -e 's/^-//' -e 's/-$//')
    stem="benchmarks/results/$(date -u +%Y-%m-%d)-${slug:-no-gpu}"
    mkdir -p benchmarks/results
    # shellcheck disable=SC2086
    $py -m pytest benchmarks --benchmark-only -q -rs --benchmark-json="$stem.json" \
        --benchmark-columns=median,iqr,rounds --benchmark-sort=name \
        --bench-time=0.2 ${BENCH_ARGS:-} 2>&1 | tee "$out/benchmarks.txt"
    bench_rc=${PIPESTATUS[0]}
    if [ -f "$stem.json" ]; then
        $py benchmarks/report.py "$stem.json" -o "$stem.md" && cat "$stem.md"
        cp "$stem.json" "$stem.md" "$out/"
    else
        echo "no benchmark JSON written"
        bench_rc=1
    fi
fi

echo "SUMMARY: main job rc=$main_rc, tests rc=$test_rc, benchmarks rc=$bench_rc;" \
     "$(tail -1 "$out/tests.txt")"
[ "$main_rc" -eq 0 ] && [ "$test_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
