/* test_api_surface.c — the C side of the Python API surface (issue 20, item 1):
 *
 *  1. tn_set_default_dtype: Python floats, float functions and true division of integer
 *     tensors follow it, and the printer leaves it unnamed (PyTorch 1.13's values).
 *  2. tn_set_printoptions: precision, threshold, edgeitems, linewidth, sci_mode and the
 *     profiles, in the struct form and as option text, against PyTorch's strings.
 *  3. Graph introspection: tn_grad_fn, tn_node_next (nodes, leaves, inputs without
 *     gradient), reference counts (a node outlives its tensor while held), pre- and
 *     post-hooks of nodes (called with PyTorch's arguments, replacing gradients, errors).
 *  4. tn_resize_ (Tensor.resize_, what out= resizes with) and tn_openmp_is_available.
 *
 * Expected strings and values come from PyTorch 1.13 (hard-coded). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

#define SH(...) TN_SHAPE(__VA_ARGS__)

static tn_print_options get_opts(void) {
    tn_print_options o;
    tn_get_printoptions(&o);
    return o;
}

/* t printed equals want */
static void check_str(tn_tensor *t, const char *want, int line) {
    char *s = tn_to_string(t);
    if (!s) { fail_at(line, "tn_to_string failed: %s", tn_last_error()); return; }
    if (strcmp(s, want)) fail_at(line, "printed\n%s\nexpected\n%s", s, want);
    else tn_test_passed++;
    tn_string_free(s);
}
#define CHECK_STR(t, want) check_str((t), (want), __LINE__)

static tn_tensor *from(const double *v, int64_t n, tn_dtype dt) {
    tn_tensor *t = tn_from_data(v, SH(n), TN_F64);
    tn_tensor *r = tn_to_dtype(t, dt);
    return r;
}

/* ------------------------------------------------------------------------------ 1 */
TEST(default_dtype) {
    tn_scope_begin();
    CHECK(tn_get_default_dtype() == TN_F32);
    tn_tensor *i = tn_arange(0, 3, 1, TN_I64);
    CHECK(tn_get_dtype(tn_mul(i, tn_scalar(2.5))) == TN_F32);
    CHECK(tn_set_default_dtype(TN_F64) == 0);
    CHECK(tn_get_default_dtype() == TN_F64);
    /* torch.set_default_dtype(torch.float64); torch.arange(3) * 2.5 -> float64 */
    tn_tensor *m = tn_mul(i, tn_scalar(2.5));
    CHECK(tn_get_dtype(m) == TN_F64);
    CHECK(tn_get_dtype(tn_div(i, tn_scalar_int(2))) == TN_F64);
    CHECK(tn_get_dtype(tn_exp(i)) == TN_F64);
    /* a float32 tensor keeps its dtype with a Python float (wrapped numbers weigh less) */
    CHECK(tn_get_dtype(tn_mul(tn_ones(SH(2), TN_F32), tn_scalar(2.5))) == TN_F32);
    CHECK_STR(m, "tensor([0.0000, 2.5000, 5.0000])");
    CHECK_STR(tn_ones(SH(2), TN_F32), "tensor([1., 1.], dtype=torch.float32)");
    CHECK_ERR(tn_set_default_dtype(TN_I64) == 0, "only floating-point types");
    CHECK_ERR(tn_set_default_dtype(TN_F16) == 0, "not supported as the default type");
    CHECK(tn_get_default_dtype() == TN_F64);
    CHECK(tn_set_default_dtype(TN_F32) == 0);
    CHECK(tn_get_dtype(tn_div(i, tn_scalar_int(2))) == TN_F32);
    CHECK_STR(tn_ones(SH(2), TN_F64), "tensor([1., 1.], dtype=torch.float64)");
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* ------------------------------------------------------------------------------ 2 */
TEST(print_options) {
    tn_scope_begin();
    const double v[] = {1.0 / 3, 2.5, -10.125};
    tn_tensor *x = from(v, 3, TN_F64);
    CHECK_STR(x, "tensor([  0.3333,   2.5000, -10.1250], dtype=torch.float64)");
    CHECK(tn_set_printoptions(.precision = 2) == 0);
    CHECK_STR(x, "tensor([  0.33,   2.50, -10.12], dtype=torch.float64)");
    CHECK(get_opts().precision == 2 && get_opts().edgeitems == 3);
    CHECK(tn_set_printoptions(.sci_mode = true) == 0);
    /* the width comes from the fixed format (6), then %e: PyTorch's order */
    CHECK_STR(x, "tensor([3.33e-01, 2.50e+00, -1.01e+01], dtype=torch.float64)");
    CHECK(tn_set_printoptions(.precision = 4) == 0);   /* sci_mode back to None */
    CHECK(get_opts().sci_mode == -1);
    const double w[] = {1e-5, 1.0};
    CHECK_STR(from(w, 2, TN_F32), "tensor([1.0000e-05, 1.0000e+00])");
    CHECK(tn_set_printoptions(.sci_mode = false) == 0);
    CHECK_STR(from(w, 2, TN_F32), "tensor([    0.0000,     1.0000])");
    /* threshold and edgeitems */
    CHECK(tn_set_printoptions(.threshold = 5, .edgeitems = 2) == 0);
    tn_tensor *r = tn_arange(0, 10, 1, TN_I64);
    CHECK_STR(r, "tensor([0, 1,  ..., 8, 9])");
    CHECK_STR(tn_reshape(tn_arange(0, 12, 1, TN_I64), SH(6, 2)),
              "tensor([[ 0,  1],\n        [ 2,  3],\n        ...,\n        [ 8,  9],\n        [10, 11]])");
    CHECK(tn_set_printoptions(.profile = "default") == 0);
    CHECK_STR(r, "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])");
    /* linewidth: elements per line and where the suffixes go */
    CHECK(tn_set_printoptions(.linewidth = 30) == 0);
    CHECK_STR(tn_arange(0, 10, 1, TN_F64),
              "tensor([0., 1., 2., 3., 4.,\n        5., 6., 7., 8., 9.],\n       dtype=torch.float64)");
    CHECK(tn_set_printoptions(.profile = "short") == 0);
    CHECK_STR(x, "tensor([  0.33,   2.50, -10.12], dtype=torch.float64)");
    tn_tensor *big = tn_arange(0, 2000, 1, TN_I64);
    CHECK_STR(big, "tensor([   0,    1,  ..., 1998, 1999])");
    CHECK(tn_set_printoptions(.profile = "full") == 0);
    char *s = tn_to_string(big);
    CHECK(s && !strstr(s, "...") && strstr(s, " 999, 1000,"));
    tn_string_free(s);
    CHECK(isinf(get_opts().threshold));
    /* the option text, and errors that leave the options as they were */
    CHECK(tn_set_printoptions_str("profile='default', precision=3, sci_mode=None") == 0);
    CHECK_STR(x, "tensor([  0.333,   2.500, -10.125], dtype=torch.float64)");
    CHECK(tn_set_printoptions_str("threshold=inf") == 0 && isinf(get_opts().threshold));
    CHECK_ERR(tn_set_printoptions_str("precison=2") == 0, "unknown option 'precison'");
    CHECK_ERR(tn_set_printoptions(.precision = -1) == 0, "precision must be in [0, 40]");
    CHECK_ERR(tn_set_printoptions(.edgeitems = -2) == 0, "edgeitems must be >= 0");
    CHECK_ERR(tn_set_printoptions(.linewidth = 0) == 0, "linewidth must be >= 1");
    CHECK_ERR(tn_set_printoptions(.threshold = -1) == 0, "threshold must be >= 0");
    CHECK_ERR(tn_set_printoptions(.profile = "long", .precision = 1) == 0, "unknown profile 'long'");
    CHECK(get_opts().precision == 3);
    /* the widest value a precision can ask for is written whole */
    CHECK(tn_set_printoptions(.precision = 40, .sci_mode = false) == 0);
    const double huge[] = {1e300, 0.5};
    s = tn_to_string(from(huge, 2, TN_F64));
    CHECK(s && strlen(s) > 400 && strstr(s, "0.5000000000000000000000000000000000000000]"));
    tn_string_free(s);
    CHECK(tn_set_printoptions(.profile = "default") == 0);
    CHECK(get_opts().sci_mode == -1 && get_opts().precision == 4 && get_opts().linewidth == 80);
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* ------------------------------------------------------------------------------ 3 */
TEST(graph_introspection) {
    tn_tensor *a = tn_randn(SH(2, 3), TN_F64), *b = tn_randn(SH(2, 3), TN_F64), *c = tn_randn(SH(2, 3), TN_F64);
    tn_requires_grad_(a, true);
    tn_requires_grad_(b, true);
    tn_scope_begin();
    /* y = (a * b + c).exp(): ExpBackward0 -> AddBackward0 -> (MulBackward0, None) */
    tn_tensor *y = tn_retain(tn_exp(tn_add(tn_mul(a, b), c)));
    tn_scope_end();
    CHECK(tn_grad_fn(a) == NULL);
    tn_node *e = tn_grad_fn(y);
    CHECK(e && !strcmp(tn_node_name(e), "ExpBackward0") && tn_node_num_next(e) == 1);
    tn_tensor *leaf = (tn_tensor *)1;
    tn_node *add = tn_node_next(e, 0, &leaf);
    CHECK(add && leaf == NULL && !strcmp(tn_node_name(add), "AddBackward0") && tn_node_num_next(add) == 2);
    tn_node *mul = tn_node_next(add, 0, &leaf);
    CHECK(mul && !strcmp(tn_node_name(mul), "MulBackward0"));
    leaf = (tn_tensor *)1;
    CHECK(tn_node_next(add, 1, &leaf) == NULL && leaf == NULL);      /* c needs no gradient */
    CHECK(tn_node_next(mul, 0, &leaf) == NULL && leaf == a);
    CHECK(tn_node_next(mul, 1, NULL) == NULL);
    CHECK(tn_node_next(mul, 1, &leaf) == NULL && leaf == b);
    CHECK_ERR(tn_node_next(mul, 2, &leaf) != NULL, "edge 2 out of range for MulBackward0, which has 2");
    CHECK_ERR(tn_node_next(NULL, 0, &leaf) != NULL, "the node is NULL");
    /* held nodes outlive the tensors: the graph is still there */
    tn_release(y);
    tn_release(c);
    CHECK(!strcmp(tn_node_name(mul), "MulBackward0") && tn_node_next(mul, 0, &leaf) == NULL && leaf == a);
    tn_node_release(e);
    tn_node_release(add);
    tn_node_release(mul);
    tn_node_release(NULL);
    tn_release(a);
    tn_release(b);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* post-hook: records what it saw and doubles the first input's gradient */
typedef struct { int calls, n; bool saw_null1; double out0; int fail; } post_rec;
static int post_hook(tn_tensor **gin, int n, tn_tensor *gout, void *user) {
    post_rec *r = (post_rec *)user;
    r->calls++;
    r->n = n;
    r->saw_null1 = gin[1] == NULL;
    r->out0 = tn_item(tn_select(tn_reshape(gout, SH(-1)), 0, 0));
    if (r->fail == 1) return tn_error("post_hook: refused");
    if (r->fail == 2) { gin[0] = tn_zeros(SH(5), TN_F64); return 0; }
    if (r->fail == 3) return -1;   /* no message: the engine writes one */
    gin[0] = tn_mul_scalar(gin[0], 2);
    return 0;
}
static int pre_calls;
static tn_tensor *pre_hook(tn_tensor *g, void *user) {
    (void)user;
    pre_calls++;
    return tn_mul_scalar(g, 3);
}

TEST(node_hooks) {
    tn_tensor *a = tn_ones(SH(2), TN_F64);
    tn_requires_grad_(a, true);
    tn_tensor *k = tn_full(SH(2), 5, TN_F64);
    post_rec rec = {0, 0, false, 0, 0};
    for (int fail = 0; fail < 4; fail++) {
        rec.fail = fail;
        rec.calls = 0;
        pre_calls = 0;
        tn_scope_begin();
        tn_tensor *m = tn_mul(a, k);     /* MulBackward0(a, k): k needs no gradient */
        tn_tensor *loss = tn_sum(m);
        tn_node *mn = tn_grad_fn(m);
        int h = tn_node_register_hook(mn, post_hook, &rec);
        int p = tn_node_register_prehook(mn, pre_hook, NULL);
        CHECK(h >= 0 && p >= 0);
        tn_set_grad(a, NULL);
        if (fail == 0) {
            CHECK(tn_backward(loss) == 0);
            /* grad_output 1 tripled by the pre-hook, times k = 15, doubled by the post-hook */
            CHECK(rec.calls == 1 && rec.n == 2 && rec.saw_null1 && pre_calls == 1);
            CHECK_CLOSE(rec.out0, 3.0, 0);
            CHECK_CLOSE(tn_item(tn_select(tn_grad(a), 0, 0)), 30.0, 0);
            /* removed hooks are not called again */
            CHECK(tn_node_remove_hook(mn, h) == 0 && tn_node_remove_prehook(mn, p) == 0);
            CHECK_ERR(tn_node_remove_hook(mn, h) == 0, "no hook with handle");
            CHECK_ERR(tn_node_remove_prehook(mn, p) == 0, "no hook with handle");
            tn_set_grad(a, NULL);
            CHECK(tn_backward(tn_sum(tn_mul(a, k))) == 0 && rec.calls == 1 && pre_calls == 1);
            CHECK_CLOSE(tn_item(tn_select(tn_grad(a), 0, 0)), 5.0, 0);
        } else if (fail == 1) {
            CHECK_ERR(tn_backward(loss) == 0, "post_hook: refused");
            CHECK(tn_grad(a) == NULL);
        } else if (fail == 2) {
            CHECK_ERR(tn_backward(loss) == 0, "a post-hook of MulBackward0 changed the gradient of input 0 to float64 [5]; it must be float64 [2]");
        } else {
            CHECK_ERR(tn_backward(loss) == 0, "a post-hook of MulBackward0 failed");
        }
        tn_node_release(mn);
        tn_scope_end();
    }
    CHECK_ERR(tn_node_register_hook(NULL, post_hook, NULL) >= 0, "the node is NULL");
    tn_scope_begin();
    tn_node *n = tn_grad_fn(tn_mul(a, k));
    CHECK_ERR(tn_node_register_hook(n, NULL, NULL) >= 0, "the hook function is NULL");
    CHECK_ERR(tn_node_register_prehook(n, NULL, NULL) >= 0, "the hook function is NULL");
    CHECK_ERR(tn_node_remove_hook(n, 0) == 0, "no hook with handle 0");
    tn_node_release(n);
    tn_scope_end();
    tn_release(a);
    tn_release(k);
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

/* ------------------------------------------------------------------------------ 4 */
TEST(resize) {
    tn_scope_begin();
    const double v[] = {1, 2, 3, 4, 5, 6};
    tn_tensor *t = tn_retain(from(v, 6, TN_F64));
    tn_tensor *view = tn_narrow(t, 0, 1, 2);        /* shares the storage */
    /* shrinking keeps the storage and the values in order */
    CHECK(tn_resize_(t, SH(2, 2)) == t && tn_ndim(t) == 2 && tn_shape(t)[1] == 2 && tn_strides(t)[0] == 2);
    CHECK_STR(t, "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)");
    CHECK(tn_same_storage(t, view));
    /* growing: a new storage starting with the old values */
    CHECK(tn_resize_(t, SH(3, 3)) == t && tn_numel(t) == 9 && !tn_same_storage(t, view));
    CHECK_CLOSE(tn_item(tn_select(tn_reshape(t, SH(-1)), 0, 5)), 6.0, 0);
    CHECK(tn_resize_(t, SH(0)) == t && tn_numel(t) == 0);
    CHECK(tn_resize_(t, NULL, 0) == t && tn_ndim(t) == 0);
    /* a view resized past its offset */
    tn_tensor *w = tn_narrow(from(v, 6, TN_F64), 0, 4, 2);
    CHECK(tn_resize_(w, SH(3)) == w && tn_numel(w) == 3);
    CHECK_CLOSE(tn_item(tn_select(w, 0, 0)), 5.0, 0);
    CHECK_ERR(tn_resize_(t, SH(-1)), "negative size -1");
    CHECK_ERR(tn_resize_(t, SH(INT64_MAX, 4)), "too many elements");
    tn_tensor *g = tn_zeros(SH(2), TN_F64);
    tn_requires_grad_(g, true);
    CHECK_ERR(tn_resize_(g, SH(3)), "cannot resize variables that require grad");
    double blob[2] = {1, 2};
    tn_tensor *b = tn_from_blob(blob, SH(2), NULL, TN_F64, NULL, NULL);
    CHECK(tn_resize_(b, SH(1)) == b);                          /* within the memory: fine */
    CHECK_ERR(tn_resize_(b, SH(3)), "not resizable");   /* b is the scope's, as every result here */
    tn_release(t);
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

TEST(openmp) {
#ifdef _OPENMP
    CHECK(tn_openmp_is_available());
#else
    CHECK(!tn_openmp_is_available());
#endif
}

int main(void) {
    RUN(default_dtype);
    RUN(print_options);
    RUN(graph_introspection);
    RUN(node_hooks);
    RUN(resize);
    RUN(openmp);
    return tn_test_report();
}
