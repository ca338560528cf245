#!/bin/bash
# Cold test-suite run with a cost breakdown (issue 15): a fresh empty kernel cache, the
# README's command (xdist, one worker per core), every host compiler run logged and timed,
# per-file CPU seconds. Usage: scripts/suite_cost/run.sh OUTDIR [pytest args...]
# Then: python scripts/suite_cost/report.py OUTDIR. On a shared machine run it under
# `flock /work/suite.lock`; compare CPU seconds, not wall time, between loaded runs.
set -u
out=$(realpath -m "$1"); shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
rm -rf "$out/cache" "$out/stats" "$out/cxx.log"
export NUMBACUDA_UFUNC_CACHE_DIR="$out/cache" SUITE_COST_DIR="$out"
export SUITE_COST_CXX="${CXX:-g++}" CXX="$here/logging_cxx.sh" PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
echo "start $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg)" > "$out/meta.txt"
/usr/bin/time -v -o "$out/time.txt" python -m pytest -n auto --dist loadfile -p suite_cost_plugin \
    -p no:cacheprovider --durations=40 -q "$@" > "$out/pytest.txt" 2>&1
rc=$?
echo "rc $rc end $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/meta.txt"
exit $rc
