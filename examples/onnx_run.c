/* onnx_run.c — run an ONNX model from plain C: no Python, no libtorch, no ONNX runtime.
 *
 *   ./build/onnx_run MODEL.onnx INPUT [--top K]
 *
 * MODEL: an ONNX file (torch.onnx.export's, tensor.onnx.export's, ...). INPUT: the model's
 * input as a serialized ONNX TensorProto (.pb, as ONNX's test data) or a .safetensors file
 * (its first tensor). Prints the output's shape and, per row, the top K classes (softmax of
 * the last dim). docs/deploy.md has the operators supported. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) { fprintf(f, "usage: onnx_run MODEL.onnx INPUT(.pb | .safetensors) [--top K]\n"); }

int main(int argc, char **argv) {
    const char *model = NULL, *input = NULL;
    int top = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return 0; }
        if (!strcmp(argv[i], "--top") && i + 1 < argc) { top = atoi(argv[++i]); continue; }
        if (argv[i][0] == '-') { fprintf(stderr, "onnx_run: unknown option %s\n", argv[i]); usage(stderr); return 2; }
        if (!model) model = argv[i];
        else if (!input) input = argv[i];
        else { usage(stderr); return 2; }
    }
    if (!model || !input || top < 1) { usage(stderr); return 2; }
    tn_scope_begin();
    tn_graph *g = tn_onnx_load(model);
    if (!g) { fprintf(stderr, "onnx_run: %s\n", tn_last_error()); return 1; }
    tn_tensor *x = NULL;
    size_t n = strlen(input);
    if (n > 12 && !strcmp(input + n - 12, ".safetensors")) {
        tn_dict *d = tn_safetensors_load(input);
        if (d && tn_dict_len(d) > 0) x = tn_clone(tn_dict_value(d, 0));   /* the scope's: outlives the dict */
        tn_dict_free(d);
    } else x = tn_onnx_load_tensor(input);
    if (!x) { fprintf(stderr, "onnx_run: %s: %s\n", input, tn_last_error()); tn_graph_free(g); return 1; }
    tn_tensor *outs[8];
    int no = tn_graph_run(g, &x, 1, outs, 8);
    if (no < 0) { fprintf(stderr, "onnx_run: %s\n", tn_last_error()); tn_graph_free(g); return 1; }
    tn_tensor *y = outs[0];
    printf("output: %s, shape [", tn_dtype_name(tn_get_dtype(y)));
    for (int d = 0; d < tn_ndim(y); d++) printf("%s%lld", d ? ", " : "", (long long)tn_shape(y)[d]);
    printf("]\n");
    if (tn_ndim(y) >= 1 && tn_dtype_is_floating(tn_get_dtype(y))) {
        tn_tensor *p = tn_softmax(tn_reshape(y, TN_SHAPE(-1, tn_shape(y)[tn_ndim(y) - 1])), -1);
        const int64_t k = top < tn_shape(p)[1] ? top : tn_shape(p)[1];
        tn_tensor *idx = NULL;
        tn_tensor *val = tn_topk(p, k, &idx);
        for (int64_t r = 0; val && r < tn_shape(val)[0] && r < 8; r++) {
            printf("row %lld:", (long long)r);
            for (int64_t j = 0; j < k; j++)
                printf("  %lld (%.4f)", (long long)tn_item(tn_select(tn_select(idx, 0, r), 0, j)), tn_item(tn_select(tn_select(val, 0, r), 0, j)));
            printf("\n");
        }
    }
    tn_graph_free(g);
    tn_scope_end();
    return 0;
}
