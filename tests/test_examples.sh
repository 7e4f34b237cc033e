#!/bin/sh
# The examples behave like programs: --help prints their flags and exits 0; an unknown or
# misspelt flag, a flag without its value and a value that is not a number are errors
# (exit 2, with the nearest flag suggested) rather than silently ignored or read as 0; the
# progress bar is drawn only on a terminal.
cd "$(dirname "$0")/.." || exit 1
B=${BUILD:-build}
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else f=$((f + 1)); echo "FAIL $1"; fi; }
for e in fashion_mlp fashion_cnn custom_module char_lm fashion_mlp_by_hand hogwild ddp_fashion; do
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
# the examples without flags (and onnx_run, whose arguments are files) say so too
for e in hello custom_op onnx_run; do
    x="$B/$e"
    [ -x "$x" ] || { f=$((f + 1)); echo "FAIL $x is not built"; continue; }
    out=$("$x" --help 2>&1); rc=$?
    check "$e --help exits 0 with its usage" '[ $rc -eq 0 ] && echo "$out" | grep -q "^usage: "'
    out=$("$x" --bogus-flag 2>&1); rc=$?
    check "$e refuses an unknown flag" '[ $rc -eq 2 ] && echo "$out" | grep -q "usage: "'
done
# the progress bar only on a terminal: a log gets one plain line per epoch. A 200-sample
# IDX set (random pixels, label 0) keeps the runs to a fraction of a second.
t=$(mktemp -d)
{ printf '\000\000\010\003\000\000\000\310\000\000\000\034\000\000\000\034'; head -c 156800 /dev/urandom; } > "$t/train-images-idx3-ubyte"
{ printf '\000\000\010\001\000\000\000\310'; head -c 200 /dev/zero; } > "$t/train-labels-idx1-ubyte"
cp "$t/train-images-idx3-ubyte" "$t/t10k-images-idx3-ubyte"; cp "$t/train-labels-idx1-ubyte" "$t/t10k-labels-idx1-ubyte"
"$B/fashion_mlp" --data "$t" --epochs 2 --save "$t/ck.safetensors" >/dev/null 2>"$t/log"; rc=$?
check "a log gets one line per epoch, no bar" '[ $rc -eq 0 ] && [ $(grep -c "^epoch [12]/2  loss [0-9.]*  [0-9]* samples/s" "$t/log") -eq 2 ] && ! grep -q "$(printf "\r")" "$t/log" && ! grep -q "\[#" "$t/log"'
if command -v script >/dev/null; then
    script -qec "$B/fashion_mlp --data $t --epochs 1 --save $t/ck.safetensors" /dev/null >"$t/tty" 2>&1
    check "a terminal gets the progress bar" 'grep -aq "epoch 1/1 \[####################\] *[0-9]*/[0-9]*  loss" "$t/tty"'
else
    echo "terminal check skipped: no script(1) (util-linux)"
fi
rm -rf "$t"
out=$("$B/fashion_mlp" --epoch 3 2>&1); rc=$?
check "a misspelt flag gets a suggestion" '[ $rc -eq 2 ] && echo "$out" | grep -q "did you mean --epochs?"'
out=$("$B/fashion_mlp" --epochs two 2>&1); rc=$?
check "a value that is not a number is an error" '[ $rc -eq 2 ] && echo "$out" | grep -q "expected a number"'
out=$("$B/char_lm" --steps 2>&1); rc=$?
check "a flag without its value is an error" '[ $rc -eq 2 ] && echo "$out" | grep -q "needs a value"'
out=$("$B/fashion_mlp" --device tpu 2>&1); rc=$?
check "an unknown device is an error" '[ $rc -eq 2 ] && echo "$out" | grep -q "expected cpu or cuda"'
# DDP's --backend: nccl without CUDA says so (exit 1), an unknown one is refused (exit 2); the Python example alike
out=$("$B/ddp_fashion" --backend nccl 2>&1); rc=$?
check "ddp_fashion --backend nccl without CUDA is an error" '[ $rc -eq 1 ] && echo "$out" | grep -q -- "--backend nccl needs CUDA"'
out=$("$B/ddp_fashion" --backend nvlink 2>&1); rc=$?
check "ddp_fashion refuses an unknown backend" '[ $rc -eq 2 ] && echo "$out" | grep -q "mpi, gloo or nccl"'
# (the plain build's library: a SANITIZE=1 tree has none, and its Python runs preload ASan)
if [ -x /usr/bin/python3 ] && [ -f lib/libtensor.so ] && [ "$B" = build ]; then
    out=$(TENSOR_LIB="$PWD/lib/libtensor.so" /usr/bin/python3 examples/ddp_fashion.py --backend nccl 2>&1); rc=$?
    check "ddp_fashion.py --backend nccl without CUDA is an error" '[ $rc -eq 1 ] && echo "$out" | grep -q -- "--backend nccl needs CUDA"'
fi
# Hogwild: two forked processes train one model in shared memory; the parent tests it
if [ -f data/fashion-mnist/train-labels-idx1-ubyte ] || [ -f data/fashion-mnist/train-labels-idx1-ubyte.gz ]; then
    out=$("$B/hogwild" --processes 2 --epochs 1 --expect 0.75 2>&1); rc=$?
    check "hogwild: 2 processes train one shared model (test accuracy >= 75 %)" '[ $rc -eq 0 ] && [ $(echo "$out" | grep -c "^process [01] ") -eq 2 ]'
else
    echo "hogwild run skipped: no data/fashion-mnist (make demo fetches it)"
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
