/* fashion_mlp_by_hand.c — train a 784-128-10 MLP on Fashion-MNIST with the tensor core only:
 * forward and backward are written out by hand (matmul, relu, softmax), which is exactly
 * what autograd will automate. Prints loss per epoch and the test accuracy.
 *
 *     make demo          (fetches the data into data/fashion-mnist first)
 *     ./build/fashion_mlp_by_hand --data data/fashion-mnist --epochs 10
 */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "train_util.h"   /* its flags only */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Read an uncompressed IDX file (big-endian header) into a uint8 tensor. */
static tn_tensor *read_idx(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s (run `make demo` to fetch the data)\n", path); return NULL; }
    unsigned char h[4];
    int64_t shape[4] = {0};
    int nd = 0;
    if (fread(h, 1, 4, f) != 4 || h[2] != 0x08 || h[3] < 1 || h[3] > 4) { fclose(f); fprintf(stderr, "%s: not an IDX uint8 file\n", path); return NULL; }
    nd = h[3];
    for (int i = 0; i < nd; i++) {
        if (fread(h, 1, 4, f) != 4) { fclose(f); return NULL; }
        shape[i] = ((int64_t)h[0] << 24) | (h[1] << 16) | (h[2] << 8) | h[3];
    }
    tn_tensor *t = tn_empty(shape, nd, TN_U8);
    if (t && fread(tn_data_ptr(t), 1, (size_t)tn_numel(t), f) != (size_t)tn_numel(t)) { fprintf(stderr, "%s: truncated\n", path); t = NULL; }
    fclose(f);
    return t;
}

static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }

int main(int argc, char **argv) {
    tu_flag f[] = {{"--data", "data/fashion-mnist", "directory of the Fashion-MNIST IDX files", NULL},
                   {"--epochs", "10", "training epochs", NULL}};
    tu_flags(argc, argv, "An MLP on Fashion-MNIST with the tensor core only: forward, backward and the SGD step written out by hand.", f, 2);
    const char *dir = tu_str(f, 2, "--data");
    const int epochs = (int)tu_num(f, 2, "--epochs");
    const int64_t B = 64, H = 128;
    const double lr = 0.02, momentum = 0.9;
    tn_manual_seed(0);

    tn_scope_begin();   /* everything made here dies at the final tn_scope_end */
    tn_tensor *xtr = read_idx(dir, "train-images-idx3-ubyte"), *ytr = read_idx(dir, "train-labels-idx1-ubyte");
    tn_tensor *xte = read_idx(dir, "t10k-images-idx3-ubyte"), *yte = read_idx(dir, "t10k-labels-idx1-ubyte");
    if (!xtr || !ytr || !xte || !yte) return 1;
    /* pixels to [0,1] floats, flattened to 784; labels to int64 */
    xtr = tn_div_scalar(tn_to_dtype(tn_flatten(xtr, .start_dim = 1), TN_F32), 255.0);
    xte = tn_div_scalar(tn_to_dtype(tn_flatten(xte, .start_dim = 1), TN_F32), 255.0);
    ytr = tn_to_dtype(ytr, TN_I64);
    yte = tn_to_dtype(yte, TN_I64);
    int64_t n = tn_size(xtr, 0);

    /* PyTorch's nn.Linear init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) */
    tn_tensor *W1 = tn_uniform(-1 / 28.0, 1 / 28.0, TN_SHAPE(784, H), TN_F32, NULL);
    tn_tensor *b1 = tn_uniform(-1 / 28.0, 1 / 28.0, TN_SHAPE(H), TN_F32, NULL);
    tn_tensor *W2 = tn_uniform(-1 / sqrt((double)H), 1 / sqrt((double)H), TN_SHAPE(H, 10), TN_F32, NULL);
    tn_tensor *b2 = tn_uniform(-1 / sqrt((double)H), 1 / sqrt((double)H), TN_SHAPE(10), TN_F32, NULL);
    tn_tensor *params[4] = {W1, b1, W2, b2}, *vel[4];
    for (int i = 0; i < 4; i++) vel[i] = tn_zeros_like(params[i]);
    tn_tensor *eye10 = tn_eye(10, -1, TN_F32);

    printf("Fashion-MNIST MLP 784-%lld-10, batch %lld, SGD lr %.2f momentum %.1f, %d epochs\n", (long long)H, (long long)B, lr, momentum, epochs);
    for (int ep = 0; ep < epochs; ep++) {
        double t0 = now(), total = 0;
        tn_tensor *perm = tn_randperm(n, TN_I64, NULL);
        int64_t steps = n / B;
        for (int64_t s = 0; s < steps; s++) {
            tn_scope_begin();   /* per-step temporaries */
            tn_tensor *idx = tn_narrow(perm, 0, s * B, B);
            tn_tensor *x = tn_index_select(xtr, 0, idx), *y = tn_index_select(ytr, 0, idx);
            /* forward */
            tn_tensor *h = tn_relu(tn_addmm(b1, x, W1));
            tn_tensor *logits = tn_addmm(b2, h, W2);
            tn_tensor *logp = tn_log_softmax(logits, 1);
            tn_tensor *onehot = tn_index_select(eye10, 0, y);
            total += -tn_item(tn_sum(tn_mul(logp, onehot))) / (double)B;
            /* backward of mean cross-entropy: d logits = (softmax - onehot) / B */
            tn_tensor *g = tn_div_scalar(tn_sub(tn_exp(logp), onehot), (double)B);
            tn_tensor *grads[4];
            grads[2] = tn_mm(tn_t(h), g);
            grads[3] = tn_sum_dims(g, TN_DIMS(0));
            tn_tensor *dh = tn_mul(tn_mm(g, tn_t(W2)), tn_gt_scalar(h, 0));
            grads[0] = tn_mm(tn_t(x), dh);
            grads[1] = tn_sum_dims(dh, TN_DIMS(0));
            /* SGD with momentum, in place: v = m v + g; p -= lr v */
            for (int i = 0; i < 4; i++) {
                tn_add_(tn_mul_scalar_(vel[i], momentum), grads[i]);
                tn_sub_(params[i], tn_mul_scalar(vel[i], lr));
            }
            tn_scope_end();
        }
        /* test accuracy */
        tn_scope_begin();
        tn_tensor *logits = tn_addmm(b2, tn_relu(tn_addmm(b1, xte, W1)), W2);
        double acc = tn_item(tn_mean(tn_to_dtype(tn_eq(tn_argmax_dim(logits, .dim = 1), yte), TN_F32)));
        double dt = now() - t0;
        printf("epoch %d  loss %.4f  test accuracy %.2f%%  (%.1f s, %.0f samples/s)\n", ep + 1, total / (double)steps, 100 * acc, dt, (double)(steps * B) / dt);
        tn_scope_end();
    }
    tn_scope_end();
    if (tn_last_error()[0]) { fprintf(stderr, "error: %s\n", tn_last_error()); return 1; }
    tn_memory_stats ms = tn_memory_stats_get();
    printf("live tensors at exit: %lld\n", (long long)ms.live_tensors);
    return 0;
}
