#!/bin/sh
# bench_ddp.sh — data-parallel training beside PyTorch's, in one run:
#   1. one Fashion-MNIST epoch of the CNN of examples/ddp_fashion.{c,py} (conv 1->32,
#      conv 32->64, each 3x3 + ReLU + 2x2 max pool, linear 3136->128->10; SGD momentum,
#      global batch 64) with DDP on 2 processes x 1 thread: ours (examples/ddp_fashion.c
#      over MPI) against PyTorch's DDP (examples/ddp_fashion.py --torch, gloo backend,
#      2 x 1 thread), alternating ROUNDS times; the medians and their ratio (target <= 0.5);
#   2. scaling efficiency of 2 processes against 1 at the same global batch:
#      T(1 process) / (2 * T(2 processes)), ours and PyTorch's;
#   3. the DataLoader with 2 worker processes feeding the CNN (1 process, 1 thread for the
#      steps): the time the steps waited on data over the epoch, ours (tn_loader, C) and
#      the Python package's DataLoader against torch's.
# Usage: sh bench/bench_ddp.sh [ROUNDS] [MAX_STEPS]   (MAX_STEPS 0: whole epochs; default 0)
# Needs Open MPI (make DIST=mpi), PyTorch (/usr/bin/python3) and data/fashion-mnist.
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${1:-1}
STEPS=${2:-0}
PY=${PYTHON:-/usr/bin/python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
${MAKE:-make} -s DIST=mpi build/mpi/ddp_fashion lib/libtensor_mpi.so >/dev/null || exit 1
MPI="mpirun --bind-to none"
OURS="build/mpi/ddp_fashion --model cnn --lr 0.05 --threads 1 --max-steps $STEPS"
THEIRS="$PY examples/ddp_fashion.py --torch --threads 1 --max-steps $STEPS"
TN_PY="$PY examples/ddp_fashion.py --threads 1 --max-steps $STEPS"
secs() { sed -n 's/.* steps in \([0-9.]*\) s .*/\1/p' | head -1; }
waited() { sed -n 's/.*waited \([0-9.]*\) s on data.*/\1/p' | head -1; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
cpu() { sed -n 's/^cpu \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' | awk '{printf "%.2f", $1 + $2}'; }
# one run: its output, then "cpu USER SYS" (the CPU seconds of every rank: mpirun reaps them)
run() { out=$(/usr/bin/time -f "cpu %U %S" $MPI -np "$1" $2 2>&1); echo "$out" | grep -q "steps in" || { echo "FAILED: mpirun -np $1 $2" >&2; echo "$out" | tail -5 >&2; }; echo "$out"; }

o2=""; t2=""; o1=""; t1=""; co2=""; ct2=""; co1=""; ct1=""
r=1
while [ $r -le "$ROUNDS" ]; do
    x=$(run 2 "$OURS"); o2="$o2 $(echo "$x" | secs)"; co2="$co2 $(echo "$x" | cpu)"
    x=$(run 2 "$THEIRS"); t2="$t2 $(echo "$x" | secs)"; ct2="$ct2 $(echo "$x" | cpu)"
    x=$(run 1 "$OURS"); o1="$o1 $(echo "$x" | secs)"; co1="$co1 $(echo "$x" | cpu)"
    x=$(run 1 "$THEIRS"); t1="$t1 $(echo "$x" | secs)"; ct1="$ct1 $(echo "$x" | cpu)"
    r=$((r + 1))
done
m() { echo "$1" | tr ' ' '\n' | grep . | median; }
O2=$(m "$o2"); T2=$(m "$t2"); O1=$(m "$o1"); T1=$(m "$t1")
CO2=$(m "$co2"); CT2=$(m "$ct2"); CO1=$(m "$co1"); CT1=$(m "$ct1")
echo "## DDP, Fashion-MNIST CNN, global batch 64, $( [ "$STEPS" = 0 ] && echo "one epoch" || echo "$STEPS steps per process"), $ROUNDS round(s), medians"
echo
echo "| | ours (C, MPI) | PyTorch DDP (gloo) | ours / PyTorch |"
echo "|---|---|---|---|"
echo "| 2 processes x 1 thread, epoch wall s | $O2 | $T2 | $(awk "BEGIN {printf \"%.2f\", $O2 / $T2}") |"
echo "| 2 processes x 1 thread, CPU s (all ranks, whole run) | $CO2 | $CT2 | $(awk "BEGIN {printf \"%.2f\", $CO2 / $CT2}") |"
echo "| 1 process x 1 thread, epoch wall s | $O1 | $T1 | $(awk "BEGIN {printf \"%.2f\", $O1 / $T1}") |"
echo "| 1 process x 1 thread, CPU s (whole run) | $CO1 | $CT1 | $(awk "BEGIN {printf \"%.2f\", $CO1 / $CT1}") |"
echo "| scaling efficiency T1 / (2 T2), wall | $(awk "BEGIN {printf \"%.2f\", $O1 / (2 * $O2)}") | $(awk "BEGIN {printf \"%.2f\", $T1 / (2 * $T2)}") | |"
echo "| work efficiency CPU1 / CPU2 (T1 / (2 T2) on 2 idle cores) | $(awk "BEGIN {printf \"%.2f\", $CO1 / $CO2}") | $(awk "BEGIN {printf \"%.2f\", $CT1 / $CT2}") | |"
echo
# 3. the DataLoader with 2 worker processes feeding the CNN, one process
ow=$(run 1 "$OURS --workers 2"); tw=$(run 1 "$THEIRS --workers 2"); pw=$(run 1 "$TN_PY --workers 2")
echo "| DataLoader, 2 worker processes, 1 training process | epoch wall s | waited on data, s | CPU s (all processes) |"
echo "|---|---|---|---|"
echo "| ours, C (tn_loader) | $(echo "$ow" | secs) | $(echo "$ow" | waited) | $(echo "$ow" | cpu) |"
echo "| ours, Python (tensor.utils.data.DataLoader) | $(echo "$pw" | secs) | $(echo "$pw" | waited) | $(echo "$pw" | cpu) |"
echo "| PyTorch (torch.utils.data.DataLoader) | $(echo "$tw" | secs) | $(echo "$tw" | waited) | $(echo "$tw" | cpu) |"
