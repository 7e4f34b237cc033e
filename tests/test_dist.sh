#!/bin/sh
# torch.distributed over MPI: builds the library with DIST=mpi (build/mpi, lib/libtensor_mpi.so)
# and runs tests/test_dist.c under mpirun with 1, 2 and 3 processes (--oversubscribe: more
# ranks than cores), the timeout case (a rank that comes late makes the other fail with an
# error, not hang), the Python package's distributed test with 2 and 3 processes, and the
# examples (examples/ddp_fashion.c with the CNN and DataLoader workers, examples/ddp_fashion.py);
# and the nccl backend on the checking GPU stand-in (tests/test_dist_nccl.c: its collectives
# carried between ranks by MPI) with 1, 2 and 3 processes and its timeout case.
# Skipped (0 passed, 0 failed) where Open MPI is not installed (Debian: libopenmpi-dev openmpi-bin).
cd "$(dirname "$0")/.." || exit 1
if ! command -v mpirun >/dev/null 2>&1 || ! command -v mpicc >/dev/null 2>&1; then
    echo "distributed tests skipped: no Open MPI (apt-get install libopenmpi-dev openmpi-bin)"
    echo "0 passed, 0 failed"; exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# one thread per rank: the ranks are the parallelism, and 3 ranks share 2 cores here
export OMP_NUM_THREADS=1
p=0; f=0
check() { if eval "$2"; then p=$((p + 1)); else f=$((f + 1)); echo "FAIL $1"; fi; }
if ! ${MAKE:-make} -s DIST=mpi build/mpi/test_dist build/mpi/test_dist_nccl build/mpi/ddp_fashion lib/libtensor_mpi.so >/tmp/tn_dist_build.$$ 2>&1; then
    tail -20 /tmp/tn_dist_build.$$; rm -f /tmp/tn_dist_build.$$
    echo "FAIL building with DIST=mpi"; echo "0 passed, 1 failed"; exit 1
fi
rm -f /tmp/tn_dist_build.$$
for n in 1 2 3; do
    out=$(timeout 300 mpirun -np $n build/mpi/test_dist 2>&1); rc=$?
    check "test_dist with $n processes (exit $rc)" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || echo "$out" | grep -v "^ *$" | tail -20
done
out=$(timeout 120 mpirun -np 2 build/mpi/test_dist timeout 2>&1); rc=$?
check "a rank that does not come: the other times out with an error (exit $rc)" '[ $rc -eq 0 ] && echo "$out" | grep -q "timed out after 2 s on rank 0 of 2"'
for n in 1 2 3; do
    out=$(timeout 300 mpirun -np $n build/mpi/test_dist_nccl 2>&1); rc=$?
    check "test_dist_nccl (nccl on the stand-in) with $n processes (exit $rc)" '[ $rc -eq 0 ]'
    [ $rc -eq 0 ] || echo "$out" | grep -v "^ *$" | tail -20
done
out=$(timeout 120 mpirun -np 2 build/mpi/test_dist_nccl timeout 2>&1); rc=$?
check "nccl: a rank that does not come: the other times out, the communicator aborted (exit $rc)" '[ $rc -eq 0 ] && echo "$out" | grep -q "timed out after 2 s on rank 0 of 2.*communicator was aborted"'
if [ -f data/fashion-mnist/train-labels-idx1-ubyte ] || [ -f data/fashion-mnist/train-labels-idx1-ubyte.gz ]; then
    out=$(timeout 600 mpirun -np 2 build/mpi/ddp_fashion --epochs 1 --expect 0.75 2>&1); rc=$?
    check "examples/ddp_fashion on 2 ranks learns (exit $rc)" '[ $rc -eq 0 ] && echo "$out" | grep -q "over 2 ranks"'
    [ $rc -eq 0 ] || echo "$out" | tail -10
fi
PY=${PYTHON:-/usr/bin/python3}
for n in 2 3; do
    out=$(TENSOR_LIB="$PWD/lib/libtensor_mpi.so" timeout 300 mpirun -np $n "$PY" bindings/python/tests/dist_worker.py 2>&1); rc=$?
    check "tensor.distributed with $n processes (exit $rc)" '[ $rc -eq 0 ] && [ $(echo "$out" | grep -o "dist_worker: rank [0-9] ok" | wc -l) -eq $n ]'
    [ $rc -eq 0 ] || echo "$out" | tail -30
done
if [ -f data/fashion-mnist/train-labels-idx1-ubyte ] || [ -f data/fashion-mnist/train-labels-idx1-ubyte.gz ]; then
    # the CNN with DataLoader worker processes on each rank (tn_loader over the rank's share)
    out=$(timeout 600 mpirun -np 2 build/mpi/ddp_fashion --model cnn --lr 0.05 --workers 2 --max-steps 80 --expect 0.5 2>&1); rc=$?
    check "examples/ddp_fashion --model cnn --workers 2 on 2 ranks learns (exit $rc)" '[ $rc -eq 0 ] && echo "$out" | grep -q "80 steps in .* over 2 ranks"'
    [ $rc -eq 0 ] || echo "$out" | tail -10
    # the Python example (torch's DDP tutorial pattern), briefly, with a worker per rank
    out=$(TENSOR_LIB="$PWD/lib/libtensor_mpi.so" timeout 600 mpirun -np 2 "$PY" examples/ddp_fashion.py --max-steps 80 --workers 1 --expect 0.5 2>&1); rc=$?
    check "examples/ddp_fashion.py on 2 ranks learns (exit $rc)" '[ $rc -eq 0 ] && echo "$out" | grep -q "80 steps in .* over 2 ranks"'
    [ $rc -eq 0 ] || echo "$out" | tail -10
fi
echo "$p passed, $f failed"
[ $f -eq 0 ]
