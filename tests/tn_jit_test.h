/* Helpers shared by the graph tests (test_jit.c, test_jit22.c, test_onnx.c): include after
   tn_test.h with TN_JIT_TEST_TMP defined as the temporary directory's prefix. */
#ifndef TN_JIT_TEST_H
#define TN_JIT_TEST_H
#include <stdlib.h>

static const char *tmpdir(void) {
    static char dir[64];
    if (!dir[0]) { strcpy(dir, TN_JIT_TEST_TMP "_XXXXXX"); if (!mkdtemp(dir)) strcpy(dir, "/tmp"); }
    return dir;
}
static tn_tensor *rnd(const int64_t *shape, int nd) { return tn_randn(shape, nd, TN_F32); }
/* max |a - b|, or +inf when the shapes differ or either is NULL */
static double maxdiff(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || tn_ndim(a) != tn_ndim(b) || memcmp(tn_shape(a), tn_shape(b), (size_t)tn_ndim(a) * sizeof(int64_t))) return INFINITY;
    if (tn_numel(a) == 0) return 0;
    return tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(a, TN_F64), tn_to_dtype(b, TN_F64)))));
}
/* begin/end around a test body: a fixed seed, and every tensor given back by the end */
static int64_t live0;
static void begin(void) { tn_manual_seed(7); live0 = tn_memory_stats_get().live_tensors; tn_scope_begin(); }
static void end(int line) {
    tn_scope_end();
    int64_t live = tn_memory_stats_get().live_tensors;
    if (live != live0) fail_at(line, "%lld tensors leaked", (long long)(live - live0));
}
#endif
