#!/bin/sh
# Runs each suite, echoes its output, and ends with the summed line "N passed, N failed".
#   sh tests/run_all.sh build/test_a build/test_b ... [python] [demo-check]
# A program (a C test, a script) is a suite; "python" is pytest over $PY_TESTS
# (bindings/python/tests by default, with
# $PYTHON, against $TENSOR_LIB; with $PY_PRELOAD, the sanitizer runtimes, preloaded and
# leak checks off for the uninstrumented interpreter, failed allocations returned as NULL); "demo-check" is
# tests/demo_check.sh (with $DEMO_BIN).
# Exit status is nonzero if anything failed.
passed=0; failed=0; status=0; broken=""
tmp=$(mktemp); times=$(mktemp); trap 'rm -f "$tmp" "$times"' EXIT

# run CMD...: the suite's output goes to $tmp; sets rc; its wall seconds go to $times
# (the slowest suites are listed at the end: what to look at when CI's time grows)
run() { t0=$(date +%s); "$@" >"$tmp" 2>&1; rc=$?; echo "$(($(date +%s) - t0)) $suite" >>"$times"; }
# count NAME REGEX: the suite's last line matching REGEX gives "N passed", "N failed" and
# (pytest) "N error(s)", errors counted as failures. With no such line, or a nonzero exit
# and no failure counted, the suite itself counts as one failure and its last lines are
# shown. Every failing suite is named in the final summary with the line that says why.
count() {
    line=$(grep -E "$2" "$tmp" | tail -n 1)
    p=$(echo "$line" | grep -oE '[0-9]+ passed' | cut -d' ' -f1)
    f=$(echo "$line" | grep -oE '[0-9]+ failed' | cut -d' ' -f1)
    e=$(echo "$line" | grep -oE '[0-9]+ errors?' | cut -d' ' -f1)
    f=$((${f:-0} + ${e:-0}))
    if [ -z "$line" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
        echo "-- $1 exited $rc without a failure count; its last lines:"
        tail -n 20 "$tmp"
        f=$((f + 1))
    fi
    passed=$((passed + ${p:-0})); failed=$((failed + f))
    if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
        status=1
        why=$(grep -E '^(FAIL|E )|Error|error:' "$tmp" | tail -n 1)
        [ -n "$why" ] || why=$(grep -v '^[[:space:]]*$' "$tmp" | tail -n 1)
        why=$(echo "$why" | cut -c1-200)
        # a crashed interpreter: faulthandler's innermost frame and the test's own frame, or
        # the sanitizer's summary line
        if grep -q '^SUMMARY: AddressSanitizer' "$tmp"; then
            why=$(grep -m 1 '^SUMMARY: AddressSanitizer' "$tmp" | cut -c1-200)
        elif grep -q 'Fatal Python error' "$tmp"; then
            frames=$(sed -n '/most recent call first/,/^$/p' "$tmp" | grep -E '^ *File ')
            why="$(grep -m 1 'Fatal Python error' "$tmp" | sed 's/.*Fatal/Fatal/' | cut -c1-80) at$(echo "$frames" | head -n 1 | cut -c1-200);$(echo "$frames" | grep -E '/test_[^/]*\.py"' | head -n 1 | cut -c1-200)"
        fi
        broken="$broken
  $1 (exit $rc: $why)"
    fi
}

for t in "$@"; do
    suite=$t
    case $t in
    python)
        PY=${PYTHON:-/usr/bin/python3}; PYTESTS=${PY_TESTS:-bindings/python/tests}
        if ! [ -x "$PY" ] || ! "$PY" -c "import pytest" 2>/dev/null; then
            echo "== python tests skipped: no $PY with pytest (apt-get install python3-pytest)"; continue
        fi
        echo "== python: $PY -m pytest $PYTESTS${PY_PRELOAD:+ (preloading $PY_PRELOAD)}"
        if [ -n "${PY_PRELOAD:-}" ]; then
            run env LD_PRELOAD="$PY_PRELOAD" ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
                "$PY" -m pytest -q -p no:cacheprovider "$PYTESTS"
        else
            run "$PY" -m pytest -q -p no:cacheprovider "$PYTESTS"
        fi
        tail -n 15 "$tmp"
        count python ' in [0-9.]+s' ;;
    demo-check)
        echo "== demo-check"
        run sh tests/demo_check.sh
        cat "$tmp"
        count demo-check '^[0-9]+ passed, [0-9]+ failed$' ;;
    *)
        echo "== $t"
        run "$t"
        tail -n 40 "$tmp"
        count "$t" '^[0-9]+ passed, [0-9]+ failed' ;;
    esac
done
echo "slowest suites (wall s): $(sort -rn "$times" | head -n 8 | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1}')"
if [ -n "$broken" ]; then echo "failing suites:$broken"; fi
echo "$passed passed, $failed failed"
exit $status
