#!/bin/bash
# Host compiler wrapper (CXX=scripts/suite_cost/logging_cxx.sh): runs g++ and appends one
# line per build to $SUITE_COST_DIR/cxx.log: wall user sys (seconds, g++ and its children),
# kind (so / pch, -O1 when given), exit status, and the pytest test that asked for it.
t=$(mktemp)
/usr/bin/time -f "%e %U %S" -o "$t" "${SUITE_COST_CXX:-g++}" "$@"
rc=$?
kind=so
for a in "$@"; do
    case "$a" in c++-header) kind=pch ;; -O1) kind="$kind-O1" ;; esac
done
echo "$(tail -1 "$t") $kind rc=$rc|${PYTEST_CURRENT_TEST:-none}" >> "$SUITE_COST_DIR/cxx.log"
rm -f "$t"
exit $rc
