#!/usr/bin/env bash
# scripts/gpu_check.sh: the whole GPU check in one call, on a machine without network.
# Builds the project offline, prints the environment report, runs every test on the real
# device, and leaves logs in $OUT (or /tmp/numbacuda_ufunc_gpu_check).
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

echo "== tests on the device"
$py -m pytest -q -ra tests 2>&1 | tee "$out/tests.txt"
test_rc=${PIPESTATUS[0]}

bench_rc=0
if ls benchmarks/bench_*.py >/dev/null 2>&1; then
    echo "== benchmarks"
    $py -m pytest benchmarks --benchmark-only --benchmark-json="$out/benchmarks.json" -q 2>&1 \
        | tee "$out/benchmarks.txt"
    bench_rc=${PIPESTATUS[0]}
fi

echo "SUMMARY: main job rc=$main_rc, tests rc=$test_rc, benchmarks rc=$bench_rc;" \
     "$(tail -1 "$out/tests.txt")"
[ "$main_rc" -eq 0 ] && [ "$test_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
