#!/bin/sh
# The examples behave like programs: --help prints their flags and exits 0; an unknown or
# misspelt flag, a flag without its value and a value that is not a number are errors
# (exit 2, with the nearest flag suggested) rather than silently ignored or read as 0.
cd "$(dirname "$0")/.." || exit 1
B=${BUILD:-build}
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else f=$((f + 1)); echo "FAIL $1"; fi; }
for e in fashion_mlp fashion_cnn custom_module char_lm fashion_mlp_by_hand; do
    x="$B/$e"
    [ -x "$x" ] || { f=$((f + 1)); echo "FAIL $x is not built"; continue; }
    out=$("$x" --help 2>&1); rc=$?
    check "$e --help exits 0" '[ $rc -eq 0 ]'
    check "$e --help lists its flags" 'echo "$out" | grep -q "^usage: " && echo "$out" | grep -q -- "--help"'
    out=$("$x" --bogus-flag 1 2>&1); rc=$?
    check "$e refuses an unknown flag" '[ $rc -eq 2 ] && echo "$out" | grep -q "unknown flag '"'"'--bogus-flag'"'"'"'
    out=$("$x" stray 2>&1); rc=$?
    check "$e refuses a stray argument" '[ $rc -eq 2 ] && echo "$out" | grep -q "unexpected argument"'
done
out=$("$B/fashion_mlp" --epoch 3 2>&1); rc=$?
check "a misspelt flag gets a suggestion" '[ $rc -eq 2 ] && echo "$out" | grep -q "did you mean --epochs?"'
out=$("$B/fashion_mlp" --epochs two 2>&1); rc=$?
check "a value that is not a number is an error" '[ $rc -eq 2 ] && echo "$out" | grep -q "expected a number"'
out=$("$B/char_lm" --steps 2>&1); rc=$?
check "a flag without its value is an error" '[ $rc -eq 2 ] && echo "$out" | grep -q "needs a value"'
out=$("$B/fashion_mlp" --device tpu 2>&1); rc=$?
check "an unknown device is an error" '[ $rc -eq 2 ] && echo "$out" | grep -q "expected cpu or cuda"'
echo "$p passed, $f failed"
[ $f -eq 0 ]
