/* One Fashion-MNIST training epoch of examples/fashion_cnn.c's CNN (two conv blocks with
 * batch norm, max pooling, dropout, two linear layers; batch 64, Adam lr 1e-3), this
 * library beside PyTorch (bench/bench_epoch.py, the same model and loop) in one run, at 1
 * and 2 threads. Only the training loop is timed; the loader prefetches in one worker
 * process as the example does (TN_BENCH_WORKERS=0: in the training process, as PyTorch's
 * side loads: bench/bench_busy.sh), PyTorch indexes tensors already in memory (uint8, as
 * tn_mnist_dataset and torchvision hold them, scaled per batch). Each side runs in a fresh
 * process; the table gives each process's peak resident memory (VmHWM) beside the times.
 *
 *     ./build/bench_epoch [DATA_DIR] [THREADS...]     (make bench-epoch; data: make demo)
 *     ./build/bench_epoch --one DATA_DIR THREADS [cnn|mlp [STEPS]]   (one side, one process:
 *         "seconds S loss L peak MB"; bench/bench_busy.sh runs these under load)
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "../tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* seconds for one epoch (or its first max_steps steps when > 0) of the CNN or, with mlp,
   examples/fashion_mlp.c's MLP; mean loss in *loss; -1 on failure */
static double our_epoch(const char *dir, bool mlp, int64_t max_steps, double *loss) {
    tn_manual_seed(0);
    tn_module *model = mlp ? tn_nn_sequential(tn_nn_flatten(), tn_nn_linear(784, 256), tn_nn_relu(),
                                              tn_nn_linear(256, 128), tn_nn_relu(), tn_nn_linear(128, 10))
                           : tn_nn_sequential(
        tn_nn_conv2d(1, 32, 3, .padding = 1), tn_nn_batch_norm2d(32), tn_nn_relu(), tn_nn_max_pool2d(2),
        tn_nn_conv2d(32, 64, 3, .padding = 1), tn_nn_batch_norm2d(64), tn_nn_relu(), tn_nn_max_pool2d(2),
        tn_nn_flatten(), tn_nn_dropout(.p = 0.25), tn_nn_linear(64 * 7 * 7, 128), tn_nn_relu(), tn_nn_linear(128, 10));
    tn_dict *params = tn_module_named_parameters(model);
    tn_optim *opt = tn_optim_adam(tn_dict_values(params), tn_dict_len(params), .lr = 1e-3);
    tn_dataset *train = tn_mnist_dataset(dir);
    const char *we = getenv("TN_BENCH_WORKERS");
    const int workers = we && *we ? atoi(we) : 1;
    tn_loader *loader = train ? tn_loader_new(train, .batch_size = 64, .shuffle = true, .num_workers = workers, .seed = 0) : NULL;
    if (!model || !opt || !loader) { fprintf(stderr, "bench_epoch: %s\n", tn_last_error()); return -1; }
    tn_tensor *batch[2];
    double total = 0, t0 = now_s();
    int64_t steps = 0;
    int rc;
    while (max_steps <= 0 || steps < max_steps) {
        tn_scope_begin();
        if ((rc = tn_loader_next(loader, batch)) != 1) { tn_scope_end(); break; }
        tn_tensor *l = tn_cross_entropy(tn_module_forward(model, batch[0]), batch[1]);
        tn_optim_zero_grad(opt);
        if (!l || tn_backward(l) || tn_optim_step(opt)) { fprintf(stderr, "bench_epoch: %s\n", tn_last_error()); exit(1); }
        total += tn_item(l);
        steps++;
        tn_scope_end();
    }
    double s = now_s() - t0;
    *loss = total / (double)(steps ? steps : 1);
    tn_loader_free(loader);
    tn_dataset_free(train);
    tn_optim_free(opt);
    tn_dict_free(params);
    tn_module_free(model);
    return rc < 0 ? -1 : s;
}

/* VmHWM of this process in MB (Linux; 0 elsewhere): its peak resident memory */
static double peak_mb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double v = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) { v = atof(line + 6) / 1024; break; }
    if (f) fclose(f);
    return v;
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "--one")) {   /* a child: our epoch in a fresh process, as PyTorch's */
        tn_set_num_threads(atoi(argv[3]));
        double loss = 0, s = our_epoch(argv[2], argc > 4 && !strcmp(argv[4], "mlp"), argc > 5 ? atoll(argv[5]) : 0, &loss);
        if (s < 0) return 1;
        printf("seconds %.3f loss %.4f peak %.1f\n", s, loss, peak_mb());
        return 0;
    }
    const char *dir = argc > 1 ? argv[1] : "data/fashion-mnist";
    int threads[8] = {1, 2}, nt = 2;
    if (argc > 2) for (nt = 0; nt < 8 && nt + 2 < argc; nt++) threads[nt] = atoi(argv[nt + 2]);
    char self[400] = {0};   /* this program, run again per thread count */
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) snprintf(self, sizeof self, "%s", argv[0]);
    printf("## One Fashion-MNIST epoch of the CNN example (batch 64, Adam), beside PyTorch\n\n");
    printf("| threads | tensor.h s | PyTorch s | ratio | tensor.h loss | PyTorch loss | tensor.h peak MB | PyTorch peak MB | peak ratio |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nt; i++) {
        /* each side in a fresh process; peak = the process's VmHWM (program, libraries, data and all) */
        double r[2][3] = {{-1, -1, -1}, {-1, -1, -1}};
        for (int side = 0; side < 2; side++) {
            char cmd[1024], line[256];
            if (side == 0) snprintf(cmd, sizeof cmd, "'%s' --one '%s' %d", self, dir, threads[i]);
            else snprintf(cmd, sizeof cmd, "env -u OPENBLAS_CORETYPE OPENBLAS_NUM_THREADS=%d /usr/bin/python3 bench/bench_epoch.py '%s' %d 2>/dev/null", threads[i], dir, threads[i]);
            FILE *p = popen(cmd, "r");
            while (p && fgets(line, sizeof line, p))
                if (sscanf(line, "seconds %lf loss %lf peak %lf", &r[side][0], &r[side][1], &r[side][2]) == 3) break;
            if (p) pclose(p);
        }
        if (r[0][0] < 0) { fprintf(stderr, "bench_epoch: our epoch failed (data in %s? make demo fetches it)\n", dir); return 1; }
        if (r[1][0] > 0)
            printf("| %d | %.1f | %.1f | %.2f | %.4f | %.4f | %.1f | %.1f | %.2f |\n", threads[i], r[0][0], r[1][0], r[0][0] / r[1][0], r[0][1], r[1][1],
                   r[0][2], r[1][2], r[0][2] / r[1][2]);
        else
            printf("| %d | %.1f | (no PyTorch: /usr/bin/python3 with torch and numpy) | | %.4f | | %.1f | | |\n", threads[i], r[0][0], r[0][1], r[0][2]);
        fflush(stdout);
    }
    return 0;
}
