#!/bin/sh
# TN_MAX_DIMS's cost on small ops (bench/bench_max_dims.c): one binary per limit, run in
# turns (4 rounds) so that a busy machine loads each alike; compare within a round.
#   sh bench/bench_max_dims.sh [limits...]      (default: 8 16 25 64)
set -e
cd "$(dirname "$0")/.."
mkdir -p build
limits=${*:-8 16 25 64}
for n in $limits; do
    ${CC:-cc} -std=c11 -O3 -fopenmp -fno-math-errno -I. -DTN_MAX_DIMS=$n bench/bench_max_dims.c -o build/bench_max_dims_$n -lm -pthread
done
for round in 1 2 3 4; do
    echo "round $round"
    for n in $limits; do OMP_NUM_THREADS=1 ./build/bench_max_dims_$n; done
done
