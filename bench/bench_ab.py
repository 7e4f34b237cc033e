#!/usr/bin/env python3
"""A/B of two bench_train binaries on one workload, alternating blocks of steps.

    TN_BENCH_CPU=1 python3 bench/bench_ab.py OLD_BINARY NEW_BINARY [WORKLOAD [THREADS [ROUNDS [STEPS [NEW_THREADS]]]]]

Both binaries run as `--serve WORKLOAD THREADS` servers (bench_train.c), set up and warmed
up once; then ROUNDS rounds (default 8) of STEPS steps (default 10) each, alternating which
goes first. Prints the medians of all steps and new / old per round and overall. With
TN_BENCH_CPU=1 (inherited by the servers) each step is timed in process CPU time, so
waiting for a core on a loaded machine is not counted (meaningful at 1 thread). NEW_THREADS
(default THREADS) gives the second server another thread count: the same binary twice at
1 and 2 threads (wall clock) is the threads' A/B.
"""
import statistics
import subprocess
import sys


def start(binary, workload, threads):
    p = subprocess.Popen([binary, "--serve", workload, str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if line != "ready":
        sys.exit(f"{binary}: no 'ready' ({line!r})")
    return p


def run(p, steps):
    p.stdin.write(f"run {steps}\n")
    p.stdin.flush()
    return [float(x) for x in p.stdout.readline().split()]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = sys.argv[1], sys.argv[2]
    workload = sys.argv[3] if len(sys.argv) > 3 else "gpt"
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    steps = int(sys.argv[6]) if len(sys.argv) > 6 else 10
    new_threads = int(sys.argv[7]) if len(sys.argv) > 7 else threads
    po, pn = start(old, workload, threads), start(new, workload, new_threads)
    all_o, all_n, per = [], [], []
    for r in range(rounds):
        if r % 2:
            tn, to = run(pn, steps), run(po, steps)
        else:
            to, tn = run(po, steps), run(pn, steps)
        all_o += to
        all_n += tn
        per.append(statistics.median(tn) / statistics.median(to))
    for p in (po, pn):
        p.stdin.write("end\n")
        p.stdin.flush()
        p.communicate()
    mo, mn = statistics.median(all_o), statistics.median(all_n)
    print(f"{workload} {threads}/{new_threads} thread(s): old {mo:.2f} ms, new {mn:.2f} ms, new/old {mn / mo:.3f}; per round " + " ".join(f"{x:.2f}" for x in per))


if __name__ == "__main__":
    main()
