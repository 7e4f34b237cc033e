#!/bin/sh
# run_all.sh never hides a failure: a suite that crashes without a summary, a Python test
# module whose import fails (or whose interpreter crashes: the summary names the frames), and a failing count are each counted and named at the end.
cd "$(dirname "$0")/.." || exit 1
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else f=$((f + 1)); echo "FAIL $1"; fi; }

printf '#!/bin/sh\necho partial output\nkill -SEGV $$\n' > "$d/crash"; chmod +x "$d/crash"
printf '#!/bin/sh\necho "FAIL x (t.c:3): 1 == 2"\necho "4 passed, 1 failed"\nexit 1\n' > "$d/fails"; chmod +x "$d/fails"
printf '#!/bin/sh\necho "7 passed, 0 failed"\n' > "$d/good"; chmod +x "$d/good"
mkdir "$d/py"; printf 'import no_such_module_anywhere\ndef test_x():\n    pass\n' > "$d/py/test_broken.py"

out=$(sh tests/run_all.sh "$d/good" "$d/crash" "$d/fails" 2>&1); rc=$?
check "exit status nonzero" '[ $rc -ne 0 ]'
check "last line sums the counts" '[ "$(echo "$out" | tail -n 1)" = "11 passed, 2 failed" ]'
check "the crash shows its output" 'echo "$out" | grep -q "partial output"'
check "the crash is named" 'echo "$out" | grep -q "^  $d/crash (exit 139"'
check "the failing suite is named with its failure" 'echo "$out" | grep -q "^  $d/fails (exit 1: FAIL x"'
check "the good suite is not named" '! echo "$out" | grep -q "^  $d/good"'

if /usr/bin/python3 -c "import pytest" 2>/dev/null; then
    out=$(PY_TESTS="$d/py" sh tests/run_all.sh "$d/good" python 2>&1); rc=$?
    check "broken import: exit status nonzero" '[ $rc -ne 0 ]'
    check "broken import: the error is printed" 'echo "$out" | grep -q "no_such_module_anywhere"'
    check "broken import: python is named" 'echo "$out" | grep -q "^  python (exit 2: .*ModuleNotFoundError"'
    check "broken import: counted" '[ "$(echo "$out" | tail -n 1)" = "7 passed, 1 failed" ]'
    # a crashed interpreter: the summary names faulthandler's innermost frame and the test's
    mkdir "$d/pyc"; printf 'import ctypes\ndef helper():\n    ctypes.string_at(0)\ndef test_ok():\n    pass\ndef test_crash():\n    helper()\n' > "$d/pyc/test_crashes.py"
    out=$(PY_PRELOAD= PY_TESTS="$d/pyc" sh tests/run_all.sh python 2>&1); rc=$?   # no sanitizer: faulthandler reports
    check "interpreter crash: exit status nonzero" '[ $rc -ne 0 ]'
    check "interpreter crash: the frames are named" 'echo "$out" | grep -q "^  python (exit 139: Fatal Python error: Segmentation fault at .*in string_at;.*test_crashes.py\", line 3 in helper)"'
else
    echo "python checks skipped: no pytest"
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
