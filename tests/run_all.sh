#!/bin/sh
# Runs each C test program, then the Python tests (if python3 with pytest is there),
# echoes their output, and ends with the summed line "N passed, N failed".
# Exit status is nonzero if anything failed.
passed=0; failed=0; status=0
for t in "$@"; do
    echo "== $t"
    out=$("$t" 2>&1); rc=$?
    echo "$out" | tail -n 40
    line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    if [ -z "$line" ]; then
        echo "$t: crashed or printed no summary (exit $rc)"; failed=$((failed + 1)); status=1; continue
    fi
    p=$(echo "$line" | cut -d' ' -f1); f=$(echo "$line" | cut -d' ' -f3)
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -ne 0 ] && status=1
done
# Python package tests: PyTorch (when installed) is their oracle; they skip without it.
PY=${PYTHON:-/usr/bin/python3}
if [ -x "$PY" ] && "$PY" -c "import pytest" 2>/dev/null; then
    echo "== python: $PY -m pytest bindings/python/tests"
    out=$("$PY" -m pytest -q -p no:cacheprovider bindings/python/tests 2>&1); rc=$?
    echo "$out" | tail -n 15
    last=$(echo "$out" | tail -n 1)
    p=$(echo "$last" | grep -oE '[0-9]+ passed' | cut -d' ' -f1)
    f=$(echo "$last" | grep -oE '[0-9]+ failed' | cut -d' ' -f1); e=$(echo "$last" | grep -oE '[0-9]+ errors?' | cut -d' ' -f1)
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${e:-0}))
    # pytest exiting nonzero with no count (a collection error, say) still counts as a failure
    [ "$rc" -ne 0 ] && [ -z "$f$e" ] && failed=$((failed + 1))
    [ "$rc" -ne 0 ] && status=1
else
    echo "== python tests skipped: no $PY with pytest (apt-get install python3-pytest)"
fi
echo "$passed passed, $failed failed"
exit $status
