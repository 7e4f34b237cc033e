#!/bin/sh
# demo-check: the whole pipeline (IDX reader, loader, model, Adam, checkpoint) must reach
# 80 % in one epoch, and again after resuming from the checkpoint it saved. Ends with
# "N passed, N failed"; skipped (0 passed, 0 failed) when Fashion-MNIST cannot be fetched.
bin=${DEMO_BIN:-build/fashion_mlp}
ck=$(dirname "$bin")/demo-check.safetensors
if ! sh tools/fetch_fashion_mnist.sh; then
    echo "demo-check: skipped (Fashion-MNIST could not be fetched)"; echo "0 passed, 0 failed"; exit 0
fi
p=0; f=0
if "$bin" --data data/fashion-mnist --epochs 1 --expect 0.80 --save "$ck"; then p=$((p + 1)); else f=$((f + 1)); fi
if "$bin" --data data/fashion-mnist --epochs 2 --expect 0.80 --resume "$ck" --save "$ck"; then p=$((p + 1)); else f=$((f + 1)); fi
[ $f -eq 0 ] && echo "demo-check: passed"
echo "$p passed, $f failed"
[ $f -eq 0 ]
