/* Ops that were Python composites in bindings/python/tensor/_ops.py, now C functions (issue
   20): var_mean / std_mean, renorm, sum_to_size, inner, the view scatters (select_,
   slice_, diagonal_, as_strided_scatter), trapezoid / cumulative_trapezoid, isposinf /
   isneginf, angle, index_reduce, narrow_copy and combinations. Values against the library's own building blocks
   and hand-computed numbers on random, non-contiguous, broadcast and 0-size inputs; float64
   gradcheck and gradgradcheck; PyTorch's errors. (bindings/python/tests/test_opinfo.py runs
   PyTorch's OpInfo samples of each against torch.) */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static tn_tensor *leaf(tn_tensor *t) { tn_requires_grad_(t, true); return t; }
static bool gc(tn_gradcheck_fn f, tn_tensor *const *in, int n, void *u) {
    return tn_gradcheck(f, in, n, u, .rtol = 1e-4) && tn_gradgradcheck(f, in, n, u, .rtol = 1e-4);
}
static bool near(tn_tensor *a, tn_tensor *b) { return a && b && tn_allclose(a, b, .rtol = 1e-12, .atol = 1e-12, .equal_nan = true); }
static bool same_shape(tn_tensor *t, const int64_t *shape, int nd) {
    if (!t || tn_ndim(t) != nd) return false;
    for (int i = 0; i < nd; i++)
        if (tn_shape(t)[i] != shape[i]) return false;
    return true;
}
/* a [2, 4, 3] view of a [3, 4, 2] float64 tensor: non-contiguous */
static tn_tensor *noncontig(void) { return tn_permute(tn_randn(TN_SHAPE(3, 4, 2), TN_F64), TN_SHAPE(2, 1, 0)); }
/* gradcheck takes contiguous leaves: a [3, 4, 2] one, seen through the same permutation */
static tn_tensor *gleaf(void) { return leaf(tn_randn(TN_SHAPE(3, 4, 2), TN_F64)); }
static tn_tensor *P(tn_tensor *x) { return tn_permute(x, TN_SHAPE(2, 1, 0)); }

/* ---- var_mean / std_mean ---- */
static tn_tensor *f_var_mean(tn_tensor *const *x, int n, void *u) {
    (void)n;
    tn_tensor *m = NULL;
    tn_tensor *v = u ? tn_std_mean_dims(P(x[0]), ((int64_t[]){1, -1}), 2, &m, .keepdim = true) : tn_var_mean_dims(P(x[0]), ((int64_t[]){1, -1}), 2, &m, .keepdim = true);
    return v && m ? tn_add(v, tn_mul_scalar(m, 3)) : NULL;   /* both results' gradients */
}
TEST(var_mean_std_mean) {
    tn_manual_seed(1);
    tn_scope_begin();
    tn_tensor *x = noncontig();
    for (int sd = 0; sd < 2; sd++) {
        tn_tensor *m = NULL;
        const int64_t dims[2] = {0, 2};
        tn_tensor *v = sd ? tn_std_mean_dims(x, dims, 2, &m) : tn_var_mean_dims(x, dims, 2, &m);
        CHECK(near(v, sd ? tn_std_dims(x, dims, 2) : tn_var_dims(x, dims, 2)));
        CHECK(near(m, tn_mean_dims(x, dims, 2)) && same_shape(m, TN_SHAPE(4)));
        /* all dims, correction 0; the mean pointer may be NULL */
        v = sd ? tn_std_mean(x, &m, .correction = 0) : tn_var_mean(x, &m, .correction = 0);
        CHECK(near(v, sd ? tn_std(x, .correction = 0) : tn_var(x, .correction = 0)) && near(m, tn_mean(x)) && tn_ndim(v) == 0);
        CHECK((sd ? tn_std_mean(x, NULL) : tn_var_mean(x, NULL)) != NULL);
        /* keepdim, a negative dim */
        v = sd ? tn_std_mean_dims(x, (int64_t[]){-1}, 1, &m, .keepdim = true) : tn_var_mean_dims(x, (int64_t[]){-1}, 1, &m, .keepdim = true);
        CHECK(same_shape(v, TN_SHAPE(2, 4, 1)) && same_shape(m, TN_SHAPE(2, 4, 1)));
        /* 0-size: reducing an empty dim gives NaN, as PyTorch */
        v = sd ? tn_std_mean_dims(tn_zeros(TN_SHAPE(0, 3), TN_F64), (int64_t[]){0}, 1, &m)
               : tn_var_mean_dims(tn_zeros(TN_SHAPE(0, 3), TN_F64), (int64_t[]){0}, 1, &m);
        CHECK(same_shape(v, TN_SHAPE(3)) && isnan(tn_item(tn_select(v, 0, 0))) && isnan(tn_item(tn_select(m, 0, 0))));
        /* errors */
        tn_tensor *mm = (tn_tensor *)1;
        CHECK_ERR(sd ? tn_std_mean(tn_ones(TN_SHAPE(3), TN_I64), &mm) : tn_var_mean(tn_ones(TN_SHAPE(3), TN_I64), &mm), "only support floating point");
        CHECK(mm == NULL);
        CHECK_ERR(sd ? tn_std_mean_dims(x, (int64_t[]){3}, 1, &m) : tn_var_mean_dims(x, (int64_t[]){3}, 1, &m), "out of range");
        tn_tensor *in = gleaf();
        CHECK(gc(f_var_mean, &in, 1, sd ? (void *)1 : NULL));
    }
    tn_scope_end();
}

/* ---- renorm ---- */
static tn_tensor *f_renorm(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_renorm(P(x[0]), 2, 1, 1.3); }
static tn_tensor *f_renorm3(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_renorm(P(x[0]), 3, 0, 2.0); }
TEST(renorm) {
    tn_scope_begin();
    /* rows of norm 5 and 0.5 along dim 0, maxnorm 1: the first scaled by 1 / (5 + 1e-7) */
    tn_tensor *x = tn_from_data((double[]){3, 4, 0.3, 0.4}, TN_SHAPE(2, 2), TN_F64);
    tn_tensor *r = tn_renorm(x, 2, 0, 1);
    const double s = 1 / (5 + 1e-7);
    CHECK(near(r, tn_from_data((double[]){3 * s, 4 * s, 0.3, 0.4}, TN_SHAPE(2, 2), TN_F64)));
    /* dim 1 of the transpose: the same slices */
    CHECK(near(tn_renorm(tn_t(x), 2, -1, 1), tn_t(r)));
    /* p = inf and p = 1, float32 keeps its dtype */
    CHECK(near(tn_renorm(x, INFINITY, 0, 2), tn_from_data((double[]){3 * 2 / (4 + 1e-7), 4 * 2 / (4 + 1e-7), 0.3, 0.4}, TN_SHAPE(2, 2), TN_F64)));
    tn_tensor *f = tn_renorm(tn_to_dtype(x, TN_F32), 1, 0, 7);
    CHECK(f && tn_get_dtype(f) == TN_F32 && tn_allclose(f, tn_to_dtype(x, TN_F32), .rtol = 0, .atol = 0));
    /* 0-size */
    tn_tensor *z = tn_renorm(tn_zeros(TN_SHAPE(0, 3), TN_F64), 2, 1, 1);
    CHECK(same_shape(z, TN_SHAPE(0, 3)));
    /* errors, PyTorch's words */
    CHECK_ERR(tn_renorm(tn_ones(TN_SHAPE(3), TN_F64), 2, 0, 1), "renorm: input needs at least 2 dimensions, got 1 dimensions");
    CHECK_ERR(tn_renorm(x, 0, 0, 1), "renorm: non-positive-norm not supported");
    CHECK_ERR(tn_renorm(x, 2, 0, -1), "renorm: expected maxnorm to be >= 0 but got -1");
    CHECK_ERR(tn_renorm(x, 2, 2, 1), "out of range");
    CHECK_ERR(tn_renorm(tn_ones(TN_SHAPE(2, 2), TN_I64), 2, 0, 1), "Expected a floating point or complex tensor as input. Got Long");
    tn_manual_seed(2);
    tn_tensor *in = gleaf();
    CHECK(gc(f_renorm, &in, 1, NULL));
    CHECK(gc(f_renorm3, &in, 1, NULL));
    tn_scope_end();
}

/* ---- sum_to_size ---- */
static tn_tensor *f_sts(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_sum_to_size(P(x[0]), TN_SHAPE(4, 1)); }
TEST(sum_to_size) {
    tn_manual_seed(3);
    tn_scope_begin();
    tn_tensor *x = noncontig();   /* [2, 4, 3] */
    tn_tensor *r = tn_sum_to_size(x, TN_SHAPE(4, 1));
    CHECK(same_shape(r, TN_SHAPE(4, 1)) && near(r, tn_reshape(tn_sum_dims(x, ((int64_t[]){0, 2}), 2, .keepdim = true), TN_SHAPE(4, 1))));
    r = tn_sum_to_size(x, TN_SHAPE(1, 4, 3));
    CHECK(same_shape(r, TN_SHAPE(1, 4, 3)) && near(r, tn_sum_dims(x, (int64_t[]){0}, 1, .keepdim = true)));
    r = tn_sum_to_size(x, NULL, 0);   /* to a 0-d tensor: everything */
    CHECK(r && tn_ndim(r) == 0 && near(r, tn_sum(x)));
    r = tn_sum_to_size(x, TN_SHAPE(2, 4, 3));   /* the same size: x itself */
    CHECK(r == x);
    /* the gradient of a broadcast comes back to the operand's size */
    tn_tensor *b = tn_randn(TN_SHAPE(3), TN_F64), *y = tn_add(x, b);
    CHECK(near(tn_sum_to_size(y, TN_SHAPE(3)), tn_add(tn_sum_dims(x, ((int64_t[]){0, 1}), 2), tn_mul_scalar(b, 8))));
    /* 0-size */
    r = tn_sum_to_size(tn_ones(TN_SHAPE(0, 3), TN_F32), TN_SHAPE(1, 3));
    CHECK(same_shape(r, TN_SHAPE(1, 3)) && tn_item(tn_sum(r)) == 0);
    /* integers stay int64 (sum's rule) */
    r = tn_sum_to_size(tn_ones(TN_SHAPE(2, 3), TN_I32), TN_SHAPE(3));
    CHECK(r && tn_get_dtype(r) == TN_I64 && tn_item(tn_select(r, 0, 0)) == 2);
    CHECK_ERR(tn_sum_to_size(x, TN_SHAPE(3, 3)), "size {[3, 3]} is not expandable to size {[2, 4, 3]}.");
    CHECK_ERR(tn_sum_to_size(x, TN_SHAPE(1, 2, 4, 3)), "is not expandable");
    tn_tensor *in = gleaf();
    CHECK(gc(f_sts, &in, 1, NULL));
    tn_scope_end();
}

/* ---- inner ---- */
static tn_tensor *f_inner(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_inner(P(x[0]), x[1]); }
TEST(inner) {
    tn_manual_seed(4);
    tn_scope_begin();
    tn_tensor *a = noncontig(), *b = tn_t(tn_randn(TN_SHAPE(3, 5), TN_F64));   /* [2, 4, 3] and [5, 3] */
    tn_tensor *r = tn_inner(a, b);
    CHECK(same_shape(r, TN_SHAPE(2, 4, 5)) && near(r, tn_matmul(a, tn_t(b))));
    tn_tensor *v = tn_randn(TN_SHAPE(3), TN_F64);
    r = tn_inner(v, v);
    CHECK(r && tn_ndim(r) == 0 && near(r, tn_sum(tn_mul(v, v))));
    /* a 0-d operand multiplies */
    r = tn_inner(tn_full(NULL, 0, 2.0, TN_F64), a);
    CHECK(near(r, tn_mul_scalar(a, 2)));
    /* 0-size contraction: zeros */
    r = tn_inner(tn_ones(TN_SHAPE(2, 0), TN_F64), tn_ones(TN_SHAPE(3, 0), TN_F64));
    CHECK(same_shape(r, TN_SHAPE(2, 3)) && tn_item(tn_sum(tn_abs(r))) == 0);
    CHECK_ERR(tn_inner(tn_ones(TN_SHAPE(2, 3), TN_F64), tn_ones(TN_SHAPE(4), TN_F64)),
              "inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]");
    tn_tensor *in[2] = {gleaf(), leaf(tn_randn(TN_SHAPE(5, 3), TN_F64))};
    CHECK(gc(f_inner, in, 2, NULL));
    tn_scope_end();
}

/* ---- the view scatters ---- */
static int kind_;
static tn_tensor *scatter(tn_tensor *t, tn_tensor *src) {
    switch (kind_) {
    case 0: return tn_select_scatter(t, src, 1, -1);
    case 1: return tn_slice_scatter(t, src, .dim = 1, .start = 1, .step = 2);
    case 2: return tn_diagonal_scatter(t, src, .offset = -1, .dim1 = 1, .dim2 = 2);
    default: return tn_as_strided_scatter(t, src, TN_SHAPE(2, 2), (int64_t[]){5, 1}, 3);
    }
}
static tn_tensor *f_scatter(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return scatter(P(x[0]), x[1]); }
TEST(view_scatters) {
    tn_manual_seed(5);
    tn_scope_begin();
    tn_tensor *t = noncontig();   /* [2, 4, 3] */
    const int64_t src_shapes[4][3] = {{2, 3}, {2, 2, 3}, {2, 3}, {2, 2}};
    const int src_nd[4] = {2, 3, 2, 2};
    for (kind_ = 0; kind_ < 4; kind_++) {
        tn_tensor *src = tn_randn(src_shapes[kind_], src_nd[kind_], TN_F64);
        tn_tensor *r = scatter(t, src);
        /* the reference: a clone with the view overwritten */
        tn_tensor *want = tn_clone(t);
        tn_tensor *view = kind_ == 0 ? tn_select(want, 1, -1) : kind_ == 1 ? tn_slice(want, 1, 1, TN_END, 2)
                        : kind_ == 2 ? tn_diagonal(want, .offset = -1, .dim1 = 1, .dim2 = 2)
                                     : tn_as_strided(want, TN_SHAPE(2, 2), (int64_t[]){5, 1}, 3);
        CHECK(tn_copy_(view, src) == 0);
        CHECK_MSG(near(r, want) && same_shape(r, TN_SHAPE(2, 4, 3)), "scatter kind %d", kind_);
        CHECK(near(t, t) && !tn_same_storage(r, t));   /* out of place */
        /* a broadcast-free float32 src is cast into t's dtype */
        r = scatter(t, tn_to_dtype(src, TN_F32));
        CHECK(r && tn_get_dtype(r) == TN_F64 && tn_allclose(r, want, .rtol = 1e-6, .atol = 1e-6));
        tn_tensor *gin[2] = {gleaf(), leaf(tn_randn(src_shapes[kind_], src_nd[kind_], TN_F64))};
        CHECK_MSG(gc(f_scatter, gin, 2, NULL), "gradcheck kind %d", kind_);
    }
    /* slice_scatter: None bounds, negative bounds, the keyword text */
    tn_tensor *x = tn_zeros(TN_SHAPE(6), TN_F64);
    tn_tensor *r = tn_slice_scatter(x, tn_ones(TN_SHAPE(2), TN_F64), .start = -3, .end = -1);
    CHECK(near(r, tn_from_data((double[]){0, 0, 0, 1, 1, 0}, TN_SHAPE(6), TN_F64)));
    r = tn_slice_scatter_str(x, tn_ones(TN_SHAPE(6), TN_F64), "dim=0, start=None, end=None, step=1");
    CHECK(near(r, tn_ones(TN_SHAPE(6), TN_F64)));
    r = tn_diagonal_scatter_str(tn_zeros(TN_SHAPE(2, 2), TN_F64), tn_ones(TN_SHAPE(2), TN_F64), "offset=0");
    CHECK(near(r, tn_eye(2, 2, TN_F64)));
    /* 0-size */
    r = tn_select_scatter(tn_zeros(TN_SHAPE(2, 0), TN_F64), tn_zeros(TN_SHAPE(0), TN_F64), 0, 1);
    CHECK(same_shape(r, TN_SHAPE(2, 0)));
    r = tn_slice_scatter(x, tn_zeros(TN_SHAPE(0), TN_F64), .start = 4, .end = 2);
    CHECK(near(r, x));
    /* errors, PyTorch's words */
    CHECK_ERR(tn_select_scatter(tn_zeros(TN_SHAPE(3, 4), TN_F64), tn_ones(TN_SHAPE(3), TN_F64), 0, 0),
              "expected src to have a size equal to the slice of self. src size = [3], slice size = [4]");
    CHECK_ERR(tn_select_scatter(tn_zeros(TN_SHAPE(3, 4), TN_F64), tn_ones(TN_SHAPE(4), TN_F64), 0, 5), "out of range");
    CHECK_ERR(tn_slice_scatter(x, x, .step = 0), "slice step must be positive");
    CHECK_ERR(tn_diagonal_scatter(tn_zeros(TN_SHAPE(3, 4), TN_F64), tn_ones(TN_SHAPE(4), TN_F64)), "slice size = [3]");
    CHECK_ERR(tn_as_strided_scatter(tn_zeros(TN_SHAPE(3, 4), TN_F64), tn_ones(TN_SHAPE(2), TN_F64), TN_SHAPE(3), (int64_t[]){1}, TN_NONE), "slice size = [3]");
    CHECK_ERR(tn_slice_scatter_str(x, x, "stop=2"), "stop");
    tn_scope_end();
}

/* ---- trapezoid, cumulative_trapezoid ---- */
static int tmode_;
static tn_tensor *f_trap(tn_tensor *const *x, int n, void *u) {
    (void)n; (void)u;
    switch (tmode_) {
    case 0: return tn_trapezoid(P(x[0]), .dx = 0.5, .dim = 1);
    case 1: return tn_trapezoid(P(x[0]), .x = x[1], .dim = 1);
    case 2: return tn_cumulative_trapezoid(P(x[0]), .dim = -1);
    default: return tn_cumulative_trapezoid(P(x[0]), .x = x[1], .dim = 1);
    }
}
TEST(trapezoid) {
    tn_manual_seed(7);
    tn_scope_begin();
    /* y = [1, 2, 4, 7] at x = [0, 1, 3, 4]: (1.5 * 1 + 3 * 2 + 5.5 * 1) = 13; spacing 2: (1.5 + 3 + 5.5) * 2 = 20 */
    tn_tensor *y = tn_from_data((double[]){1, 2, 4, 7}, TN_SHAPE(4), TN_F64), *x = tn_from_data((double[]){0, 1, 3, 4}, TN_SHAPE(4), TN_F64);
    CHECK(near(tn_trapezoid(y, .x = x), tn_full(NULL, 0, 13, TN_F64)));
    CHECK(near(tn_trapezoid(y, .dx = 2), tn_full(NULL, 0, 20, TN_F64)));
    CHECK(near(tn_trapezoid(y), tn_full(NULL, 0, 10, TN_F64)));
    CHECK(near(tn_cumulative_trapezoid(y, .x = x), tn_from_data((double[]){1.5, 7.5, 13}, TN_SHAPE(3), TN_F64)));
    CHECK(near(tn_cumulative_trapezoid_str(y, "dx=2"), tn_from_data((double[]){3, 9, 20}, TN_SHAPE(3), TN_F64)));
    /* along dim 1 of a non-contiguous [2, 4, 3] with a 1-d x: each column integrated alike */
    tn_tensor *t = noncontig(), *x4 = tn_from_data((double[]){0, 0.5, 2, 3}, TN_SHAPE(4), TN_F64);
    tn_tensor *r = tn_trapezoid(t, .x = x4, .dim = 1);
    tn_tensor *want = tn_zeros(TN_SHAPE(2, 3), TN_F64);
    const double dxs[3] = {0.5, 1.5, 1};
    for (int i = 0; i < 3; i++)
        want = tn_add(want, tn_mul_scalar(tn_add(tn_select(t, 1, i), tn_select(t, 1, i + 1)), dxs[i] / 2));
    CHECK(near(r, want) && same_shape(r, TN_SHAPE(2, 3)));
    /* x broadcast with y ([4, 1] against [2, 4, 3] after the leading 1) */
    CHECK(near(tn_trapezoid(t, .x = tn_reshape(x4, TN_SHAPE(4, 1)), .dim = 1), want));
    /* integers: the sum's dtype, then float through the 0.5 (the default dtype) */
    tn_tensor *ri = tn_trapezoid(tn_arange(0, 5, 1, TN_I64));
    CHECK(ri && tn_get_dtype(ri) == TN_F32 && tn_item(ri) == 8);
    ri = tn_cumulative_trapezoid(tn_arange(0, 5, 1, TN_I64), .dx = 2);   /* dx / 2 = 1.0 still a float */
    CHECK(ri && tn_get_dtype(ri) == TN_F32 && tn_item(tn_select(ri, 0, 3)) == 16);
    /* 0-size and 1-element dims: zeros; cumulative of an empty dim is empty */
    r = tn_trapezoid(tn_ones(TN_SHAPE(3, 0), TN_F64));
    CHECK(same_shape(r, TN_SHAPE(3)) && tn_item(tn_sum(r)) == 0);
    r = tn_trapezoid(tn_ones(TN_SHAPE(3, 1), TN_F64), .x = tn_ones(TN_SHAPE(1), TN_F64));
    CHECK(same_shape(r, TN_SHAPE(3)) && tn_item(tn_sum(r)) == 0);
    r = tn_cumulative_trapezoid(tn_ones(TN_SHAPE(3, 1), TN_F64));
    CHECK(same_shape(r, TN_SHAPE(3, 0)));
    /* errors */
    CHECK_ERR(tn_trapezoid(tn_ones(TN_SHAPE(3), TN_BOOL)), "received a bool input for `y`, but bool is not supported");
    CHECK_ERR(tn_trapezoid(tn_ones(TN_SHAPE(3, 5), TN_F64), .x = tn_ones(TN_SHAPE(4), TN_F64)), "There must be one `x` value for each sample point");
    CHECK_ERR(tn_cumulative_trapezoid(tn_ones(TN_SHAPE(3, 5), TN_F64), .x = tn_ones(TN_SHAPE(2, 5), TN_F64)), "");
    CHECK_ERR(tn_trapezoid(y, .x = x, .dx = 1), "x and dx cannot both be given");
    CHECK_ERR(tn_trapezoid(tn_full(NULL, 0, 1, TN_F64)), "");
    CHECK_ERR(tn_trapezoid(y, .dim = 1), "out of range");
    for (tmode_ = 0; tmode_ < 4; tmode_++) {
        tn_tensor *in[2] = {gleaf(), leaf(tn_randn(TN_SHAPE(4), TN_F64))};
        CHECK_MSG(gc(f_trap, in, 2, NULL), "trapezoid gradcheck mode %d", tmode_);
    }
    tn_scope_end();
}

/* ---- isposinf, isneginf, angle ---- */
static tn_tensor *f_angle(tn_tensor *const *x, int n, void *u) { (void)n; (void)u; return tn_add(tn_angle(P(x[0])), P(x[0])); }
TEST(isposinf_isneginf_angle) {
    tn_scope_begin();
    tn_tensor *v = tn_from_data((double[]){1, INFINITY, -INFINITY, NAN, -0.0, -3}, TN_SHAPE(6), TN_F64);
    CHECK(tn_equal(tn_isposinf(v), tn_from_data((bool[]){0, 1, 0, 0, 0, 0}, TN_SHAPE(6), TN_BOOL)));
    CHECK(tn_equal(tn_isneginf(v), tn_from_data((bool[]){0, 0, 1, 0, 0, 0}, TN_SHAPE(6), TN_BOOL)));
    CHECK(tn_equal(tn_isposinf(tn_t(tn_reshape(v, TN_SHAPE(2, 3)))), tn_t(tn_reshape(tn_isposinf(v), TN_SHAPE(2, 3)))));
    tn_tensor *ib = tn_isneginf(tn_full(TN_SHAPE(3), -5, TN_I64));
    CHECK(ib && tn_get_dtype(ib) == TN_BOOL && tn_item(tn_sum(ib)) == 0);
    CHECK(same_shape(tn_isposinf(tn_ones(TN_SHAPE(0, 2), TN_F32)), TN_SHAPE(0, 2)));
    tn_tensor *a = tn_angle(v);
    CHECK(a && tn_get_dtype(a) == TN_F64 && tn_item(tn_select(a, 0, 0)) == 0 && tn_item(tn_select(a, 0, 2)) == 3.14159265358979323846 &&
          isnan(tn_item(tn_select(a, 0, 3))) && tn_item(tn_select(a, 0, 4)) == 0 && tn_item(tn_select(a, 0, 5)) == 3.14159265358979323846);
    tn_tensor *ai = tn_angle(tn_from_data((int64_t[]){2, -1}, TN_SHAPE(2), TN_I64));
    CHECK(ai && tn_get_dtype(ai) == tn_get_default_dtype() && tn_item(tn_select(ai, 0, 1)) == (double)(float)3.14159265358979323846);
    /* angle's gradient is zero (the sum's gradient is x's 1 alone) */
    tn_tensor *in = gleaf();
    CHECK(gc(f_angle, &in, 1, NULL));
    tn_tensor *g = tn_clone(v);
    CHECK(tn_requires_grad_(g, true) == 0 && tn_backward(tn_sum(tn_angle(g))) == 0);
    CHECK(tn_grad(g) && tn_item(tn_sum(tn_abs(tn_grad(g)))) == 0);
    tn_scope_end();
}

/* ---- index_reduce, narrow_copy, combinations ---- */
static tn_tensor *f_ired(tn_tensor *const *x, int n, void *u) {
    (void)n;
    tn_tensor *idx = tn_from_data((int64_t[]){3, 0, 3}, TN_SHAPE(3), TN_I64);
    return tn_index_reduce(P(x[0]), 1, idx, x[1], (const char *)u);
}
static tn_tensor *f_comb(tn_tensor *const *x, int n, void *u) { (void)n; return tn_combinations(x[0], .r = 3, .with_replacement = u != NULL); }
TEST(index_reduce_narrow_copy_combinations) {
    tn_manual_seed(8);
    tn_scope_begin();
    /* t [2, 4, 3] (non-contiguous), index [3, 0, 3] along dim 1, source [2, 3, 3] */
    tn_tensor *t = noncontig(), *src = tn_randn(TN_SHAPE(2, 3, 3), TN_F64);
    tn_tensor *idx = tn_from_data((int64_t[]){3, 0, 3}, TN_SHAPE(3), TN_I64);
    tn_tensor *r = tn_index_reduce(t, 1, idx, src, "prod");
    /* by hand: slice 0 times source slice 1; slice 3 times source slices 0 and 2; 1, 2 kept */
    tn_tensor *want = tn_clone(t);
    CHECK(tn_copy_(tn_select(want, 1, 0), tn_mul(tn_select(t, 1, 0), tn_select(src, 1, 1))) == 0);
    CHECK(tn_copy_(tn_select(want, 1, 3), tn_mul(tn_select(t, 1, 3), tn_mul(tn_select(src, 1, 0), tn_select(src, 1, 2)))) == 0);
    CHECK(near(r, want));
    /* amax without self; mean with self (the count includes it); int32 index */
    r = tn_index_reduce(t, 1, tn_to_dtype(idx, TN_I32), src, "amax", .include_self = false);
    CHECK(r && near(tn_select(r, 1, 3), tn_maximum(tn_select(src, 1, 0), tn_select(src, 1, 2))) && near(tn_select(r, 1, 1), tn_select(t, 1, 1)));
    r = tn_index_reduce(t, 1, idx, src, "mean");
    CHECK(r && near(tn_select(r, 1, 3), tn_div_scalar(tn_add(tn_select(t, 1, 3), tn_add(tn_select(src, 1, 0), tn_select(src, 1, 2))), 3)));
    /* 0-d */
    r = tn_index_reduce(tn_full(NULL, 0, 3, TN_F64), 0, tn_zeros(TN_SHAPE(1), TN_I64), tn_full(NULL, 0, 2, TN_F64), "prod");
    CHECK(r && tn_ndim(r) == 0 && tn_item(r) == 6);
    /* errors, PyTorch's words */
    CHECK_ERR(tn_index_reduce(t, 1, idx, src, "sum"), "Expected reduce to be one of prod, mean, amax or amin but got sum.");
    CHECK_ERR(tn_index_reduce(t, 1, tn_reshape(idx, TN_SHAPE(1, 3)), src, "prod"), "Index is supposed to be a vector");
    CHECK_ERR(tn_index_reduce(t, 1, tn_to_dtype(idx, TN_F32), src, "prod"), "Expected dtype int32/int64 for index but got: Float");
    CHECK_ERR(tn_index_reduce(t, 1, idx, tn_to_dtype(src, TN_F32), "prod"), "self (Double) and source (Float) must have the same scalar type");
    CHECK_ERR(tn_index_reduce(t, 1, tn_narrow(idx, 0, 0, 2), src, "prod"), "Number of indices (2) should be equal to source.size(dim): (3), for dim: 1");
    CHECK_ERR(tn_index_reduce(t, 1, idx, tn_randn(TN_SHAPE(2, 3, 2), TN_F64), "prod"), "slice shapes");
    CHECK_ERR(tn_index_reduce(t, 1, tn_from_data((int64_t[]){4, 0, 3}, TN_SHAPE(3), TN_I64), src, "prod"), "");
    const char *reds[4] = {"prod", "mean", "amax", "amin"};
    for (int k = 0; k < 4; k++) {
        tn_tensor *in[2] = {gleaf(), leaf(tn_randn(TN_SHAPE(2, 3, 3), TN_F64))};
        CHECK_MSG(tn_gradcheck(f_ired, in, 2, (void *)reds[k], .rtol = 1e-4), "index_reduce %s gradcheck", reds[k]);
    }

    /* narrow_copy: a contiguous copy of the narrowed view */
    tn_tensor *nc = tn_narrow_copy(t, 1, 1, 2);
    CHECK(nc && tn_is_contiguous(nc) && !tn_same_storage(nc, t) && near(nc, tn_narrow(t, 1, 1, 2)));
    CHECK(same_shape(tn_narrow_copy(t, 1, 4, 0), TN_SHAPE(2, 0, 3)));
    CHECK_ERR(tn_narrow_copy(t, 1, 3, 2), "");

    /* combinations: itertools' order */
    tn_tensor *x = tn_from_data((double[]){10, 20, 30, 40}, TN_SHAPE(4), TN_F64);
    tn_tensor *c = tn_combinations(x);
    CHECK(same_shape(c, TN_SHAPE(6, 2)) && near(c, tn_from_data((double[]){10, 20, 10, 30, 10, 40, 20, 30, 20, 40, 30, 40}, TN_SHAPE(6, 2), TN_F64)));
    c = tn_combinations_str(tn_narrow(x, 0, 0, 3), "r=2, with_replacement=True");
    CHECK(same_shape(c, TN_SHAPE(6, 2)) && near(c, tn_from_data((double[]){10, 10, 10, 20, 10, 30, 20, 20, 20, 30, 30, 30}, TN_SHAPE(6, 2), TN_F64)));
    c = tn_combinations(x, .r = 3);
    CHECK(same_shape(c, TN_SHAPE(4, 3)) && near(tn_select(c, 0, 3), tn_from_data((double[]){20, 30, 40}, TN_SHAPE(3), TN_F64)));
    c = tn_combinations(tn_narrow(tn_arange(0, 10, 1, TN_I64), 0, 0, 3), .r = 4, .with_replacement = true);
    CHECK(same_shape(c, TN_SHAPE(15, 4)) && tn_get_dtype(c) == TN_I64);
    /* a strided input; r = 1; r 0; r above n; an empty input */
    c = tn_combinations(tn_slice(x, 0, 0, TN_END, 2), .r = 1);
    CHECK(near(c, tn_from_data((double[]){10, 30}, TN_SHAPE(2, 1), TN_F64)));
    CHECK(same_shape(tn_combinations(x, .r = 0), TN_SHAPE(0)));
    CHECK(same_shape(tn_combinations(x, .r = 5), TN_SHAPE(0, 5)));
    CHECK(same_shape(tn_combinations(tn_zeros(TN_SHAPE(0), TN_F32), .with_replacement = true), TN_SHAPE(0, 2)));
    CHECK_ERR(tn_combinations(x, .r = -1), "Expect a non-negative number, but got -1");
    CHECK_ERR(tn_combinations(tn_ones(TN_SHAPE(2, 2), TN_F32)), "Expect a 1D vector, but got shape [2, 2]");
    CHECK_ERR(tn_combinations(tn_ones(TN_SHAPE(100000), TN_F32), .r = 50), "too many combinations");
    tn_tensor *xl = leaf(tn_randn(TN_SHAPE(5), TN_F64));
    CHECK(gc(f_comb, &xl, 1, NULL));
    CHECK(gc(f_comb, &xl, 1, (void *)1));
    tn_scope_end();
}

int main(void) {
    RUN(var_mean_std_mean);
    RUN(renorm);
    RUN(sum_to_size);
    RUN(inner);
    RUN(view_scatters);
    RUN(trapezoid);
    RUN(isposinf_isneginf_angle);
    RUN(index_reduce_narrow_copy_combinations);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
