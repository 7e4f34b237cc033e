/* Sparse CSR x dense (src/ops/sparse.c) beside PyTorch's torch.sparse.mm on the same CSR
 * matrix: a random graph of 100 000 nodes and 1 000 000 edges (uniform endpoints, coalesced:
 * a few duplicate edges merge), float32 edge weights, times a dense float32 feature matrix of
 * 64 and of 16 columns: one graph-convolution propagation, A X.
 *
 * tn_sparse_csr_mm as a caller calls it (indices validated each call, the result allocated).
 * Median (and fastest) milliseconds of REPS runs at 1 and 2 threads; PyTorch in a child
 * process (bench/bench_sparse.py, /usr/bin/python3, OPENBLAS_CORETYPE unset) with the same
 * count, on the matrix this program writes to a temporary directory.
 *
 *   make build/bench_sparse && ./build/bench_sparse [REPS]
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
enum { NODES = 100000, EDGES = 1000000, NP = 2 };
static const int64_t ps[NP] = {64, 16};

static int write_file(const char *dir, const char *name, tn_tensor *t) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t bytes = (size_t)tn_numel(t) * tn_dtype_size(tn_get_dtype(t));
    int ok = fwrite(tn_data_ptr(t), 1, bytes, f) == bytes;
    return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    if (reps < 1 || reps > 1000) reps = 21;
    char dir[] = "/tmp/bench_sparse_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    tn_manual_seed(0);
    tn_scope_begin();
    tn_tensor *idx = tn_randint(0, NODES, TN_SHAPE(2, EDGES), TN_I64, NULL), *w = tn_rand(TN_SHAPE(EDGES), TN_F32);
    tn_tensor *crow = NULL, *col = NULL, *val = tn_sparse_coo_to_csr(idx, w, NODES, NODES, &crow, &col);
    tn_tensor *X[NP];
    if (!val) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }
    int rc = write_file(dir, "crow.bin", crow) | write_file(dir, "col.bin", col) | write_file(dir, "val.bin", val);
    for (int i = 0; i < NP; i++) {
        char name[32];
        snprintf(name, sizeof name, "x%lld.bin", (long long)ps[i]);
        X[i] = tn_randn(TN_SHAPE(NODES, ps[i]), TN_F32);
        rc |= write_file(dir, name, X[i]);
    }
    if (rc) { fprintf(stderr, "bench_sparse: cannot write the matrix under %s\n", dir); return 1; }
    double *ts = (double *)malloc((size_t)reps * sizeof(double));
    printf("# CSR x dense beside PyTorch (torch.sparse.mm), %d nodes, %lld stored edges, float32, median (fastest) ms of %d runs\n\n",
           NODES, (long long)tn_numel(col), reps);
    printf("| features | threads | tensor.h ms | PyTorch ms | ratio | fastest: tensor.h | PyTorch | ratio |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int threads = 1; threads <= 2; threads++) {
        tn_set_num_threads(threads);
        double ours[NP], theirs[NP], ob[NP], tb[NP];
        for (int c = 0; c < NP; c++) {
            tn_scope_begin();
            if (!tn_sparse_csr_mm(crow, col, val, NODES, NODES, X[c])) { fprintf(stderr, "%s\n", tn_last_error()); return 1; }   /* warm-up */
            tn_scope_end();
            for (int r = 0; r < reps; r++) {
                tn_scope_begin();
                double t0 = now_ms();
                tn_sparse_csr_mm(crow, col, val, NODES, NODES, X[c]);
                ts[r] = now_ms() - t0;
                tn_scope_end();
            }
            qsort(ts, (size_t)reps, sizeof ts[0], cmp_double);
            ours[c] = ts[reps / 2];
            ob[c] = ts[0];
        }
        char cmd[512];
        snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE /usr/bin/python3 bench/bench_sparse.py %s %d %d %lld %lld 2>/dev/null", dir, threads, reps,
                 (long long)ps[0], (long long)ps[1]);
        FILE *p = popen(cmd, "r");
        int have = p != NULL;
        for (int c = 0; c < NP && have; c++) have = fscanf(p, "%lf", &theirs[c]) == 1;
        for (int c = 0; c < NP && have; c++) have = fscanf(p, "%lf", &tb[c]) == 1;
        if (p) pclose(p);
        for (int c = 0; c < NP; c++) {
            if (have) printf("| %lld | %d | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |\n", (long long)ps[c], threads, ours[c], theirs[c], ours[c] / theirs[c], ob[c], tb[c], ob[c] / tb[c]);
            else printf("| %lld | %d | %.3f | (no PyTorch) | | %.3f | | |\n", (long long)ps[c], threads, ours[c], ob[c]);
        }
        fflush(stdout);
    }
    tn_scope_end();
    free(ts);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_sparse: could not remove %s\n", dir);
    return 0;
}
