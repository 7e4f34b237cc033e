#!/bin/sh
# bench_busy.sh — training on a busy machine: the MLP and the CNN epoch of bench_epoch (their
# first STEPS steps), this library beside PyTorch, at 1 and 2 threads, quiet and with a
# competing busy process on every core; reports each side's slowdown (busy / quiet).
# Issue 25 asks: ours slows down no more than PyTorch's, and 2 threads are never slower
# than 1. Both sides load batches in the training process (ours: TN_BENCH_WORKERS=0).
# Runs alternate (quiet and busy, ours and PyTorch's back to back) and every figure
# is the median of REPS runs, as the machine may be shared.
#
#     sh bench/bench_busy.sh [DATA_DIR] [REPS] [CNN_STEPS] [MLP_STEPS]
#         (make build/bench_epoch first; data: make demo; PyTorch: /usr/bin/python3)
set -u
DIR=${1:-data/fashion-mnist}
REPS=${2:-3}
CNN_STEPS=${3:-100}
MLP_STEPS=${4:-300}
BIN=./build/bench_epoch
NCPU=$(getconf _NPROCESSORS_ONLN)
[ -x "$BIN" ] || { echo "bench_busy: build $BIN first (make build/bench_epoch)" >&2; exit 1; }
TMP=$(mktemp -d)
BUSY=""
stop_busy() { for p in $BUSY; do kill "$p" 2>/dev/null; done; for p in $BUSY; do wait "$p" 2>/dev/null; done; BUSY=""; }
trap 'stop_busy; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
have_torch=0
/usr/bin/python3 -c "import torch, numpy" 2>/dev/null && have_torch=1

# one run: seconds of the timed loop, or "nan"
one() {   # lib model threads steps
    if [ "$1" = ours ]; then
        # batches loaded in the training process, as PyTorch's side indexes its tensors (a
        # loader worker process would be one more process competing for the busy cores)
        out=$(TN_BENCH_WORKERS=0 "$BIN" --one "$DIR" "$3" "$2" "$4" 2>/dev/null)
    else
        out=$(env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS="$3" OMP_NUM_THREADS="$3" /usr/bin/python3 bench/bench_epoch.py "$DIR" "$3" "$2" "$4" 2>/dev/null)
    fi
    echo "$out" | sed -n 's/^seconds \([0-9.]*\) .*/\1/p' | grep . || echo nan
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "## Training on a busy machine: slowdown under a busy process per core ($NCPU cores)"
echo
echo "sh bench/bench_busy.sh $DIR $REPS $CNN_STEPS $MLP_STEPS — medians of $REPS alternating runs; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for rep in $(seq 1 "$REPS"); do
    for cond in quiet busy; do
        if [ $cond = busy ]; then
            for i in $(seq 1 "$NCPU"); do sh -c 'while :; do :; done' & BUSY="$BUSY $!"; done
            sleep 1
        fi
        for model in mlp cnn; do
            steps=$MLP_STEPS; [ $model = cnn ] && steps=$CNN_STEPS
            for t in 1 2; do
                for lib in ours torch; do
                    [ $lib = torch ] && [ $have_torch = 0 ] && continue
                    v=$(one $lib $model $t "$steps")
                    echo "$v" >> "$TMP/$lib.$model.$t.$cond"
                    echo "run $rep $cond $model $t $lib: $v s" >&2   # progress, and the raw figures
                done
            done
        done
        stop_busy
    done
done
echo "| model | threads | tensor.h quiet s | tensor.h busy s | tensor.h slowdown | PyTorch quiet s | PyTorch busy s | PyTorch slowdown |"
echo "|---|---|---|---|---|---|---|---|"
fail=0
for model in mlp cnn; do
    for t in 1 2; do
        oq=$(median < "$TMP/ours.$model.$t.quiet"); ob=$(median < "$TMP/ours.$model.$t.busy")
        if [ $have_torch = 1 ]; then
            pq=$(median < "$TMP/torch.$model.$t.quiet"); pb=$(median < "$TMP/torch.$model.$t.busy")
        else pq=nan; pb=nan; fi
        awk -v m=$model -v t=$t -v oq="$oq" -v ob="$ob" -v pq="$pq" -v pb="$pb" 'BEGIN {
            printf "| %s | %d | %.2f | %.2f | %.2fx | %s | %s | %s |\n", m, t, oq, ob, ob / oq,
                pq == "nan" ? "-" : sprintf("%.2f", pq), pb == "nan" ? "-" : sprintf("%.2f", pb), pq == "nan" ? "-" : sprintf("%.2fx", pb / pq) }'
        echo "$model $t $oq $ob $pq $pb" >> "$TMP/rows"
    done
done
echo
# the two claims, each from the medians above
awk -v torch=$have_torch '
    { oq[$1, $2] = $3; ob[$1, $2] = $4; pq[$1, $2] = $5; pb[$1, $2] = $6 }
    END {
        bad = 0
        for (k in ob) {
            split(k, p, SUBSEP)
            if (torch && ob[k] / oq[k] > pb[k] / pq[k] * 1.10) { printf "- %s, %s threads: tensor.h slows down %.2fx, PyTorch %.2fx\n", p[1], p[2], ob[k] / oq[k], pb[k] / pq[k]; bad = 1 }
        }
        split("mlp cnn", ms, " ")
        for (i = 1; i <= 2; i++) {
            m = ms[i]
            if (oq[m, 2] > oq[m, 1] * 1.10) { printf "- %s quiet: 2 threads %.2f s, 1 thread %.2f s\n", m, oq[m, 2], oq[m, 1]; bad = 1 }
            if (ob[m, 2] > ob[m, 1] * 1.10) { printf "- %s busy: 2 threads %.2f s, 1 thread %.2f s\n", m, ob[m, 2], ob[m, 1]; bad = 1 }
        }
        if (!bad) print "Both hold (within 10 % noise): tensor.h slows down no more than PyTorch, and 2 threads are not slower than 1."
        exit bad
    }' "$TMP/rows"
