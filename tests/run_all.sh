#!/bin/sh
# Runs each test program, echoes its output, and ends with the summed line
# "N passed, N failed". Exit status is nonzero if any program failed.
passed=0; failed=0; status=0
for t in "$@"; do
    echo "== $t"
    out=$("$t" 2>&1); rc=$?
    echo "$out" | grep -v '^ok ' | tail -n 40
    line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
    if [ -z "$line" ]; then
        echo "$t: crashed or printed no summary (exit $rc)"; failed=$((failed + 1)); status=1; continue
    fi
    p=$(echo "$line" | cut -d' ' -f1); f=$(echo "$line" | cut -d' ' -f3)
    passed=$((passed + p)); failed=$((failed + f))
    [ "$rc" -ne 0 ] && status=1
done
echo "$passed passed, $failed failed"
exit $status
