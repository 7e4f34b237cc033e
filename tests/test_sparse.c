/* test_sparse.c — issue 26, item 6: the sparse kernels (src/ops/sparse.c). CSR x dense and
 * COO x dense against the dense product (float32/float64, non-contiguous dense operands,
 * empty rows, no entries, 0-size sides, duplicate COO entries, sizes that run on the thread
 * pool at 1 and 2 threads), the conversions (COO -> CSR coalescing as torch's coalesce,
 * CSR -> COO / dense, dense -> CSR), gradients for the values and the dense operand against
 * the dense product's and float64 gradcheck / gradgradcheck, and hostile indices (each an
 * error with torch's message, never a read out of bounds: run under SANITIZE=1).
 * bindings/python/tests/test_sparse_csr.py compares the package with torch directly. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static double maxabs(tn_tensor *a, tn_tensor *b) {
    tn_scope_begin();
    double r = 1e300;
    if (a && b && tn_ndim(a) == tn_ndim(b) && !memcmp(tn_shape(a), tn_shape(b), (size_t)tn_ndim(a) * sizeof(int64_t)))
        r = tn_numel(a) ? tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(a, TN_F64), tn_to_dtype(b, TN_F64))))) : 0;
    tn_scope_end();
    return r;
}
/* A random [n, m] matrix with about density of its entries nonzero (rows `empty_every`-th all zero). */
static tn_tensor *sparse_dense(int64_t n, int64_t m, double density, int64_t empty_every, tn_dtype dt) {
    tn_tensor *x = tn_randn(TN_SHAPE(n, m), dt);
    tn_tensor *keep = tn_lt_scalar(tn_rand(TN_SHAPE(n, m), dt), density);
    x = tn_mul(x, tn_to_dtype(keep, dt));
    if (empty_every > 0 && n > 0) {
        tn_tensor *rows = tn_arange(0, (double)n, 1, TN_I64);
        tn_tensor *alive = tn_ne_scalar(tn_remainder_scalar(rows, (double)empty_every), 0);
        x = tn_mul(x, tn_unsqueeze(tn_to_dtype(alive, dt), 1));
    }
    return x;
}

TEST(csr_mm_values) {
    tn_manual_seed(1);
    tn_scope_begin();
    const int64_t sizes[][3] = {{7, 5, 3}, {40, 30, 64}, {1, 1, 1}, {0, 4, 3}, {4, 0, 3}, {5, 4, 0}, {3000, 2000, 16}};
    for (int dt = 0; dt < 2; dt++)
        for (int si = 0; si < 7; si++) {
            const tn_dtype d = dt ? TN_F64 : TN_F32;
            const int64_t n = sizes[si][0], m = sizes[si][1], p = sizes[si][2];
            tn_tensor *A = sparse_dense(n, m, si == 6 ? 0.01 : 0.3, 3, d), *crow = NULL, *col = NULL;
            tn_tensor *vals = tn_sparse_dense_to_csr(A, &crow, &col);
            CHECK(vals && crow && col && tn_size(crow, 0) == n + 1 && tn_size(vals, 0) == tn_size(col, 0));
            CHECK(maxabs(tn_sparse_csr_to_dense(crow, col, vals, n, m), A) == 0);
            /* the dense operand transposed (non-contiguous) */
            tn_tensor *B = tn_transpose(tn_randn(TN_SHAPE(p, m), d), 0, 1);
            tn_tensor *ref = tn_mm(A, B);
            for (int th = 1; th <= 2; th++) {
                tn_set_num_threads(th);
                tn_tensor *out = tn_sparse_csr_mm(crow, col, vals, n, m, B);
                CHECK(out && tn_ndim(out) == 2 && tn_size(out, 0) == n && tn_size(out, 1) == p && tn_get_dtype(out) == d);
                CHECK(maxabs(out, ref) < (dt ? 1e-12 : 1e-4));
            }
        }
    /* no entries at all: zeros */
    tn_tensor *crow = tn_zeros(TN_SHAPE(4), TN_I64), *col = tn_zeros(TN_SHAPE(0), TN_I64), *vals = tn_zeros(TN_SHAPE(0), TN_F32);
    tn_tensor *out = tn_sparse_csr_mm(crow, col, vals, 3, 5, tn_ones(TN_SHAPE(5, 2), TN_F32));
    CHECK(out && maxabs(out, tn_zeros(TN_SHAPE(3, 2), TN_F32)) == 0);
    tn_set_num_threads(0);
    tn_scope_end();
}

TEST(coo_mm_and_conversions) {
    tn_manual_seed(2);
    tn_scope_begin();
    /* entries out of order, with duplicates: (1,2) twice, (0,0) three times */
    const int64_t idx[2][7] = {{1, 0, 2, 1, 0, 0, 2}, {2, 0, 1, 2, 0, 0, 3}};
    const double v[7] = {1, 2, 3, 4, 5, 6, 7};
    tn_tensor *I = tn_from_data(idx, TN_SHAPE(2, 7), TN_I64), *V = tn_from_data(v, TN_SHAPE(7), TN_F64);
    double dense[3][4] = {{0}};
    for (int k = 0; k < 7; k++) dense[idx[0][k]][idx[1][k]] += v[k];
    tn_tensor *D = tn_from_data(dense, TN_SHAPE(3, 4), TN_F64);
    tn_tensor *B = tn_randn(TN_SHAPE(4, 5), TN_F64);
    CHECK(maxabs(tn_sparse_coo_mm(I, V, 3, 4, B), tn_mm(D, B)) < 1e-12);
    /* COO -> CSR coalesces: rows then columns sorted, duplicates summed */
    tn_tensor *crow = NULL, *col = NULL, *cv = tn_sparse_coo_to_csr(I, V, 3, 4, &crow, &col);
    const int64_t crow_e[4] = {0, 1, 2, 4}, col_e[4] = {0, 2, 1, 3};
    const double cv_e[4] = {13, 5, 3, 7};
    CHECK(cv && maxabs(crow, tn_from_data(crow_e, TN_SHAPE(4), TN_I64)) == 0 && maxabs(col, tn_from_data(col_e, TN_SHAPE(4), TN_I64)) == 0);
    CHECK(maxabs(cv, tn_from_data(cv_e, TN_SHAPE(4), TN_F64)) == 0);
    CHECK(maxabs(tn_sparse_csr_to_dense(crow, col, cv, 3, 4), D) == 0);
    /* CSR -> COO: the rows expanded */
    const int64_t coo_e[2][4] = {{0, 1, 2, 2}, {0, 2, 1, 3}};
    CHECK(maxabs(tn_sparse_csr_to_coo(crow, col, 3, 4), tn_from_data(coo_e, TN_SHAPE(2, 4), TN_I64)) == 0);
    /* a COO matrix with no entries, and one over an empty side */
    tn_tensor *I0 = tn_zeros(TN_SHAPE(2, 0), TN_I64), *V0 = tn_zeros(TN_SHAPE(0), TN_F32);
    CHECK(maxabs(tn_sparse_coo_mm(I0, V0, 2, 3, tn_ones(TN_SHAPE(3, 4), TN_F32)), tn_zeros(TN_SHAPE(2, 4), TN_F32)) == 0);
    cv = tn_sparse_coo_to_csr(I0, V0, 2, 3, &crow, &col);
    CHECK(cv && tn_size(cv, 0) == 0 && tn_size(crow, 0) == 3 && tn_size(col, 0) == 0);
    /* a wide matrix: no table of its columns is built (INT64_MAX - 1 columns) */
    tn_tensor *Iw = tn_from_data(idx, TN_SHAPE(2, 7), TN_I64);
    cv = tn_sparse_coo_to_csr(Iw, V, 3, INT64_MAX - 1, &crow, &col);
    CHECK(cv && maxabs(cv, tn_from_data(cv_e, TN_SHAPE(4), TN_F64)) == 0 && maxabs(col, tn_from_data(col_e, TN_SHAPE(4), TN_I64)) == 0);
    /* a larger random COO (duplicates likely) against its dense form, float32, threaded */
    tn_tensor *rows = tn_randint(0, 500, TN_SHAPE(20000), TN_I64, NULL), *cols = tn_randint(0, 300, TN_SHAPE(20000), TN_I64, NULL);
    tn_tensor *both[2] = {rows, cols}, *Ir = tn_stack(both, 2), *Vr = tn_randn(TN_SHAPE(20000), TN_F32);
    tn_tensor *Dr = tn_reshape(tn_index_add(tn_zeros(TN_SHAPE(500 * 300), TN_F32), 0, tn_add(tn_mul_scalar(rows, 300), cols), Vr), TN_SHAPE(500, 300));
    tn_tensor *Br = tn_randn(TN_SHAPE(300, 33), TN_F32);
    CHECK(maxabs(tn_sparse_coo_mm(Ir, Vr, 500, 300, Br), tn_mm(Dr, Br)) < 1e-3);
    cv = tn_sparse_coo_to_csr(Ir, Vr, 500, 300, &crow, &col);
    CHECK(maxabs(tn_sparse_csr_to_dense(crow, col, cv, 500, 300), Dr) < 1e-5);
    CHECK(maxabs(tn_sparse_csr_mm(crow, col, cv, 500, 300, Br), tn_mm(Dr, Br)) < 1e-3);
    tn_scope_end();
}

typedef struct { tn_tensor *crow, *col; int64_t n, m; } csr_ctx;
static tn_tensor *f_csr_mm(tn_tensor *const *in, int n, void *u) {
    (void)n;
    const csr_ctx *c = (const csr_ctx *)u;
    return tn_sparse_csr_mm(c->crow, c->col, in[0], c->n, c->m, in[1]);
}
static tn_tensor *f_csr_mm_t(tn_tensor *const *in, int n, void *u) {   /* the dense operand transposed: non-contiguous */
    (void)n;
    const csr_ctx *c = (const csr_ctx *)u;
    return tn_sparse_csr_mm(c->crow, c->col, in[0], c->n, c->m, tn_transpose(in[1], 0, 1));
}
static tn_tensor *f_coo_to_dense(tn_tensor *const *in, int n, void *u) {
    (void)n;
    tn_tensor **I = (tn_tensor **)u, *crow = NULL, *col = NULL;
    tn_tensor *v = tn_sparse_coo_to_csr(I[0], in[0], 3, 4, &crow, &col);
    return tn_sparse_csr_to_dense(crow, col, v, 3, 4);
}
static tn_tensor *f_coo_mm(tn_tensor *const *in, int n, void *u) {
    (void)n;
    return tn_sparse_coo_mm(*(tn_tensor **)u, in[0], 3, 4, in[1]);
}

TEST(gradients) {
    tn_manual_seed(3);
    tn_scope_begin();
    /* against the dense product's gradients: d values = (g B^T) at the nonzeros, d B = A^T g */
    for (int dt = 0; dt < 2; dt++) {
        const tn_dtype d = dt ? TN_F64 : TN_F32;
        tn_tensor *A = sparse_dense(30, 20, 0.3, 4, d), *crow = NULL, *col = NULL;
        tn_tensor *vals = tn_detach(tn_sparse_dense_to_csr(A, &crow, &col));
        tn_tensor *B = tn_randn(TN_SHAPE(20, 7), d), *g = tn_randn(TN_SHAPE(30, 7), d);
        tn_requires_grad_(vals, true);
        tn_requires_grad_(B, true);
        CHECK(tn_backward(tn_sparse_csr_mm(crow, col, vals, 30, 20, B), .gradient = g) == 0);
        tn_tensor *gv = tn_clone(tn_grad(vals)), *gB = tn_clone(tn_grad(B));
        tn_set_grad(vals, NULL);
        tn_set_grad(B, NULL);
        CHECK(tn_backward(tn_mm(tn_sparse_csr_to_dense(crow, col, vals, 30, 20), B), .gradient = g) == 0);
        CHECK(maxabs(gv, tn_grad(vals)) < (dt ? 1e-12 : 1e-4) && maxabs(gB, tn_grad(B)) < (dt ? 1e-12 : 1e-4));
        /* the names torch's graph shows */
        tn_tensor *o = tn_sparse_csr_mm(crow, col, vals, 30, 20, B);
        tn_node *nd = o ? tn_grad_fn(o) : NULL;
        CHECK(nd && !strcmp(tn_node_name(nd), "SparseAddmmBackward0"));
        tn_node_release(nd);
    }
    /* float64 gradcheck and gradgradcheck: both operands (the values' gradient is the sampled
       product, whose own gradients are products again); empty rows and columns included */
    tn_tensor *A = sparse_dense(6, 5, 0.5, 3, TN_F64), *crow = NULL, *col = NULL;
    tn_tensor *vals = tn_detach(tn_sparse_dense_to_csr(A, &crow, &col)), *B = tn_randn(TN_SHAPE(5, 4), TN_F64);
    tn_requires_grad_(vals, true);
    tn_requires_grad_(B, true);
    csr_ctx c = {crow, col, 6, 5};
    tn_tensor *in[2] = {vals, B};
    CHECK(tn_gradcheck(f_csr_mm, in, 2, &c, .atol = 1e-7, .rtol = 1e-5));
    CHECK(tn_gradgradcheck(f_csr_mm, in, 2, &c, .atol = 1e-7, .rtol = 1e-5));
    /* a non-contiguous dense operand */
    tn_tensor *Bt = tn_randn(TN_SHAPE(4, 5), TN_F64);
    tn_requires_grad_(Bt, true);
    tn_tensor *in2[2] = {vals, Bt};
    CHECK(tn_gradcheck(f_csr_mm_t, in2, 2, &c, .atol = 1e-7, .rtol = 1e-5));
    CHECK(tn_gradgradcheck(f_csr_mm_t, in2, 2, &c, .atol = 1e-7, .rtol = 1e-5));
    /* COO: duplicates each get their entry's gradient; through coalescing too */
    const int64_t idx[2][5] = {{1, 0, 2, 1, 0}, {2, 0, 1, 2, 3}};
    tn_tensor *I = tn_from_data(idx, TN_SHAPE(2, 5), TN_I64), *V = tn_randn(TN_SHAPE(5), TN_F64), *B4 = tn_randn(TN_SHAPE(4, 3), TN_F64);
    tn_requires_grad_(V, true);
    tn_requires_grad_(B4, true);
    tn_tensor *in3[2] = {V, B4};
    CHECK(tn_gradcheck(f_coo_mm, in3, 2, &I, .atol = 1e-7, .rtol = 1e-5));
    CHECK(tn_gradgradcheck(f_coo_mm, in3, 2, &I, .atol = 1e-7, .rtol = 1e-5));
    CHECK(tn_gradcheck(f_coo_to_dense, in3, 1, &I, .atol = 1e-7, .rtol = 1e-5));
    tn_scope_end();
}

TEST(hostile_indices) {
    tn_scope_begin();
    tn_tensor *B = tn_ones(TN_SHAPE(3, 2), TN_F32), *v2 = tn_ones(TN_SHAPE(2), TN_F32);
    const int64_t good_crow[3] = {0, 1, 2}, good_col[2] = {0, 2};
    tn_tensor *crow = tn_from_data(good_crow, TN_SHAPE(3), TN_I64), *col = tn_from_data(good_col, TN_SHAPE(2), TN_I64);
    CHECK(tn_sparse_csr_mm(crow, col, v2, 2, 3, B) != NULL);
    const int64_t bad_crows[][3] = {{1, 1, 2}, {0, 1, 3}, {0, 2, 1}, {0, 3, 2}, {0, -5, 2}, {0, INT64_MAX, 2}, {0, INT64_MIN, 2}};
    const char *msgs[] = {"crow_indices[..., 0] == 0", "crow_indices[..., -1] == nnz", "crow_indices[..., -1] == nnz",
                          "crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols", "crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols",
                          "crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols", "crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols"};
    for (int i = 0; i < 7; i++) {
        tn_tensor *bc = tn_from_data(bad_crows[i], TN_SHAPE(3), TN_I64);
        CHECK_ERR(tn_sparse_csr_mm(bc, col, v2, 2, 3, B), msgs[i]);
        CHECK_ERR(tn_sparse_csr_to_dense(bc, col, v2, 2, 3), msgs[i]);
        CHECK(tn_sparse_csr_check(bc, col, v2, 2, 3) == -1);
    }
    const int64_t bad_cols[][2] = {{0, 3}, {-1, 0}, {INT64_MAX, 0}, {INT64_MIN, 1}};
    for (int i = 0; i < 4; i++)
        CHECK_ERR(tn_sparse_csr_mm(crow, tn_from_data(bad_cols[i], TN_SHAPE(2), TN_I64), v2, 2, 3, B), "0 <= col_indices < ncols");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v2, 3, 3, B), "crow_indices.shape[-1] must be equal to the number of rows + 1 (=4), but got 3");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, tn_ones(TN_SHAPE(3), TN_F32), 2, 3, B), "col_indices.shape[-1] must be equal to nnz (=3)");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, tn_ones(TN_SHAPE(2, 1), TN_F32), 2, 3, B), "values must be 1-D");
    CHECK_ERR(tn_sparse_csr_mm(tn_to_dtype(crow, TN_I32), col, v2, 2, 3, B), "crow_indices must be an int64 tensor, got int32");
    CHECK_ERR(tn_sparse_csr_mm(crow, tn_to_dtype(col, TN_F32), v2, 2, 3, B), "col_indices must be an int64 tensor, got float32");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v2, 2, 3, tn_ones(TN_SHAPE(4, 2), TN_F32)), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v2, 2, 3, tn_ones(TN_SHAPE(3), TN_F32)), "the dense operand must be 2-D");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v2, 2, 3, tn_ones(TN_SHAPE(3, 2), TN_F64)), "expected mat1 and mat2 to have the same dtype, but got: float32 != float64");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, tn_ones(TN_SHAPE(2), TN_I64), 2, 3, tn_ones(TN_SHAPE(3, 2), TN_I64)), "sparse values must be float32 or float64");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v2, -1, 3, B), "must be nonnegative");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v2, INT64_MAX, 3, B), "must be nonnegative");
    CHECK_ERR(tn_sparse_csr_to_dense(crow, col, v2, 2, INT64_MAX), "must be nonnegative");
    CHECK_ERR(tn_sparse_csr_to_dense(crow, col, v2, INT64_MAX / 2, INT64_MAX / 2), "too many elements");
    CHECK(tn_sparse_csr_mm(NULL, col, v2, 2, 3, B) == NULL);
    /* COO */
    const int64_t bad_idx[][2][2] = {{{0, -1}, {0, 0}}, {{0, 0}, {0, -7}}, {{0, 2}, {0, 0}}, {{0, 0}, {0, 3}}, {{INT64_MAX, 0}, {0, 0}}};
    const char *cmsgs[] = {"found negative index -1 for dim 0", "found negative index -7 for dim 1",
                           "for dim 0, size is 2 but found index 2", "for dim 1, size is 3 but found index 3", "for dim 0, size is 2"};
    for (int i = 0; i < 5; i++) {
        tn_tensor *I = tn_from_data(bad_idx[i], TN_SHAPE(2, 2), TN_I64), *cr = NULL, *cl = NULL;
        CHECK_ERR(tn_sparse_coo_mm(I, v2, 2, 3, B), cmsgs[i]);
        CHECK_ERR(tn_sparse_coo_to_csr(I, v2, 2, 3, &cr, &cl), cmsgs[i]);
        CHECK(cr == NULL && cl == NULL);
    }
    tn_tensor *I = tn_zeros(TN_SHAPE(2, 2), TN_I64), *cr = NULL, *cl = NULL;
    CHECK_ERR(tn_sparse_coo_mm(I, tn_ones(TN_SHAPE(3), TN_F32), 2, 3, B), "indices and values must have same nnz");
    CHECK_ERR(tn_sparse_coo_mm(tn_zeros(TN_SHAPE(3, 2), TN_I64), v2, 2, 3, B), "indices must be 2 x nnz");
    CHECK_ERR(tn_sparse_coo_to_csr(I, v2, 2, 3, NULL, &cl), "must not be NULL");
    CHECK_ERR(tn_sparse_dense_to_csr(tn_ones(TN_SHAPE(2, 2, 2), TN_F32), &cr, &cl), "expected a 2-D tensor");
    tn_scope_end();
}

/* CUDA tensors are refused with a message saying so (the checking stand-in plays the GPU). */
TEST(cuda_refused) {
    tn_debug_cuda_stand_in();
    tn_scope_begin();
    const int64_t crow_v[3] = {0, 1, 2}, col_v[2] = {0, 1};
    tn_tensor *crow = tn_from_data(crow_v, TN_SHAPE(3), TN_I64), *col = tn_from_data(col_v, TN_SHAPE(2), TN_I64);
    tn_tensor *v = tn_ones(TN_SHAPE(2), TN_F32), *B = tn_ones(TN_SHAPE(2, 3), TN_F32), *cr = NULL, *cl = NULL;
    CHECK_ERR(tn_sparse_csr_mm(crow, col, v, 2, 2, tn_to(B, TN_CUDA)), "sparse tensors are CPU only (not on CUDA yet)");
    CHECK_ERR(tn_sparse_csr_mm(crow, col, tn_to(v, TN_CUDA), 2, 2, B), "sparse tensors are CPU only (not on CUDA yet)");
    CHECK_ERR(tn_sparse_csr_mm(tn_to(crow, TN_CUDA), col, v, 2, 2, B), "sparse tensors are CPU only (not on CUDA yet)");
    CHECK_ERR(tn_sparse_dense_to_csr(tn_to(B, TN_CUDA), &cr, &cl), "sparse tensors are CPU only (not on CUDA yet)");
    tn_scope_end();
}

int main(void) {
    RUN(csr_mm_values);
    RUN(coo_mm_and_conversions);
    RUN(gradients);
    RUN(hostile_indices);
    RUN(cuda_refused);
    return tn_test_report();
}
