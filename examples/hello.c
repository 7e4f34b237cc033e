/* hello.c — the README's first example: broadcasting, matmul, reductions, printing. */
#define TENSOR_IMPLEMENTATION          /* in exactly one .c file */
#include "tensor.h"
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1) {                                     /* no flags: --help says so, anything else is an error */
        fprintf(stderr, "usage: %s (no arguments)\n", argv[0]);
        return strcmp(argv[1], "--help") ? 2 : 0;
    }
    tn_manual_seed(0);
    tn_scope_begin();                                   /* owns every tensor made below */
    tn_tensor *x = tn_randn(TN_SHAPE(4, 3), TN_F32);    /* 4 samples, 3 features */
    tn_tensor *w = tn_arange(1, 4, 1, TN_F32);          /* [1, 2, 3] */
    tn_tensor *y = tn_mul(x, w);                        /* broadcasting: [4,3] * [3] */
    tn_tensor *g = tn_matmul(tn_t(y), y);               /* Gram matrix, [3,3]; tn_t is a view */
    tn_tensor *p = tn_softmax(tn_narrow(y, 0, 0, 2), 1);
    tn_print(g);
    tn_print(p);
    printf("mean %.4f  max |x| %.4f\n", tn_item(tn_mean(y)), tn_item(tn_amax(tn_abs(x), NULL, 0)));
    tn_tensor *bad = tn_matmul(x, x);                   /* [4,3] @ [4,3]: an error, not a crash */
    if (!bad) printf("error: %s\n", tn_last_error());
    tn_scope_end();                                     /* frees them all */
    return 0;
}
