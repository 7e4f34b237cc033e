/* test_linalg_eig.c — issue 26: torch.linalg.eig and eigvals (src/ops/linalg_eig.c). The residual
 * |A V - V diag(L)| / |A| at LAPACK's level, unit-norm vectors with their largest entry real,
 * batched, non-contiguous, 1x1, 0x0, repeated and complex-conjugate eigenvalues, a defective
 * matrix, permuted (triangular) input, a 200x200 random matrix, float32/complex64 dtypes,
 * gradcheck of gauge-invariant functions, the gauge error and PyTorch's input errors. The
 * Python side (bindings/python/tests/test_linalg_eig.py) compares values and order with torch. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#define EPS 2.220446049250313e-16

static double amax(tn_tensor *a) {
    tn_scope_begin();
    double r = tn_numel(a) ? tn_item(tn_max(tn_abs(a))) : 0;
    tn_scope_end();
    return r;
}
/* |A V - V diag(L)| / |A|, A of any dtype (real promoted to V's complex dtype) */
static double residual(tn_tensor *A, tn_tensor *L, tn_tensor *V) {
    tn_scope_begin();
    tn_tensor *Ac = tn_to_dtype(A, tn_get_dtype(V));
    double r = amax(tn_sub(tn_matmul(Ac, V), tn_mul(V, tn_unsqueeze(L, -2)))) / (amax(A) > 0 ? amax(A) : 1);
    tn_scope_end();
    return r;
}
/* every column of V: norm 1 (to tol), its largest-magnitude entry real */
static bool normalised(tn_tensor *V, double tol) {
    tn_scope_begin();
    tn_tensor *Vc = tn_contiguous(tn_to_dtype(V, TN_C128));
    const int64_t n = tn_size(V, -1), B = n ? tn_numel(V) / (n * n) : 0;
    const double *d = (const double *)tn_data_ptr(Vc);
    bool ok = true;
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < n; c++) {
            double s = 0, best = -1, im = 0;
            for (int64_t r = 0; r < n; r++) {
                const double re_ = d[2 * (b * n * n + r * n + c)], im_ = d[2 * (b * n * n + r * n + c) + 1], m2 = re_ * re_ + im_ * im_;
                s += m2;
                if (m2 > best * (1 + 1e-12)) { best = m2; im = im_; }
            }
            if (fabs(s - 1) > tol || im != 0) ok = false;
        }
    tn_scope_end();
    return ok;
}
static tn_tensor *mat(const double *v, int64_t n) { return tn_from_data(v, TN_SHAPE(n, n), TN_F64); }

TEST(random_real_complex_batched) {
    tn_manual_seed(1);
    const int64_t ns[] = {1, 2, 3, 5, 9, 30};
    for (int k = 0; k < 6; k++) {
        tn_scope_begin();
        const int64_t n = ns[k];
        tn_tensor *A = tn_transpose(tn_randn(TN_SHAPE(2, 3, n, n), TN_F64), -2, -1), *V = NULL;   /* non-contiguous */
        tn_tensor *L = tn_linalg_eig(A, &V);
        CHECK(L && V && tn_get_dtype(L) == TN_C128 && tn_size(L, -1) == n && tn_size(V, 0) == 2);
        CHECK(residual(A, L, V) < 20 * (double)n * EPS);
        CHECK(normalised(V, 1e-13));
        CHECK(amax(tn_sub(tn_linalg_eigvals(A), L)) == 0);
        tn_tensor *C = tn_complex(tn_randn(TN_SHAPE(3, n, n), TN_F64), tn_randn(TN_SHAPE(3, n, n), TN_F64)), *W = NULL;
        tn_tensor *M = tn_linalg_eig(C, &W);
        CHECK(M && W && residual(C, M, W) < 20 * (double)n * EPS && normalised(W, 1e-13));
        /* float32 and complex64 give complex64 */
        tn_tensor *V32 = NULL, *L32 = tn_linalg_eig(tn_to_dtype(A, TN_F32), &V32);
        CHECK(L32 && tn_get_dtype(L32) == TN_C64 && tn_get_dtype(V32) == TN_C64 && residual(A, L32, V32) < 1e-4);
        CHECK(tn_get_dtype(tn_linalg_eigvals(tn_to_dtype(C, TN_C64))) == TN_C64);
        tn_scope_end();
    }
}

TEST(structured) {
    tn_scope_begin();
    tn_tensor *V = NULL, *L;
    /* rotation: the conjugate pair +-i, the one with the positive imaginary part first */
    const double rot[] = {0, 1, -1, 0};
    L = tn_linalg_eig(mat(rot, 2), &V);
    CHECK(L && fabs(tn_item(tn_imag(tn_select(L, 0, 0))) - 1) < 1e-15 && fabs(tn_item(tn_imag(tn_select(L, 0, 1))) + 1) < 1e-15);
    CHECK(residual(mat(rot, 2), L, V) < 4 * EPS && normalised(V, 1e-14));
    /* the pair's vectors are conjugates */
    CHECK(amax(tn_sub(tn_select(V, 1, 1), tn_conj(tn_select(V, 1, 0)))) == 0);
    /* defective (a Jordan block): eigenvalue 2 three times, the vectors all (nearly) e1 */
    const double jordan[] = {2, 1, 0, 0, 2, 1, 0, 0, 2};
    L = tn_linalg_eig(mat(jordan, 3), &V);
    CHECK(L && amax(tn_sub(L, tn_full(TN_SHAPE(3), 2, TN_C128))) < 1e-15 && residual(mat(jordan, 3), L, V) < 1e-14);
    /* upper and lower triangular: balancing permutes, the diagonal is the spectrum (torch's order:
       the diagonal's for upper triangular input) */
    const double up[] = {1, 4, 5, 0, 3, 6, 0, 0, 2}, lo[] = {1, 0, 0, 4, 3, 0, 5, 6, 2};
    L = tn_linalg_eig(mat(up, 3), &V);
    const double want[] = {1, 0, 3, 0, 2, 0};
    CHECK(L && amax(tn_sub(L, tn_from_data(want, TN_SHAPE(3), TN_C128))) == 0 && residual(mat(up, 3), L, V) < 4 * EPS);
    L = tn_linalg_eig(mat(lo, 3), &V);
    CHECK(L && residual(mat(lo, 3), L, V) < 4 * EPS && normalised(V, 1e-14));
    /* repeated: the identity and zeros */
    L = tn_linalg_eig(tn_eye(4, 4, TN_F64), &V);
    CHECK(L && amax(tn_sub(V, tn_eye(4, 4, TN_C128))) == 0);
    L = tn_linalg_eig(tn_zeros(TN_SHAPE(3, 3), TN_F64), &V);
    CHECK(L && amax(L) == 0 && amax(tn_sub(V, tn_eye(3, 3, TN_C128))) == 0);
    /* 1x1 and 0x0 (batched) */
    const double seven[] = {7};
    L = tn_linalg_eig(mat(seven, 1), &V);
    CHECK(L && tn_item(tn_real(L)) == 7 && tn_item(tn_real(V)) == 1);
    L = tn_linalg_eig(tn_zeros(TN_SHAPE(2, 0, 0), TN_F32), &V);
    CHECK(L && tn_size(L, 0) == 2 && tn_size(L, 1) == 0 && tn_numel(V) == 0 && tn_get_dtype(V) == TN_C64);
    /* badly scaled rows (1e-6 .. 1e6): the residual as LAPACK's (dgeev: 1.2e-11 of |A| here) */
    tn_manual_seed(3);
    tn_tensor *S = tn_mul(tn_randn(TN_SHAPE(6, 6), TN_F64), tn_unsqueeze(tn_logspace(-6, 6, 6, TN_F64), -1));
    L = tn_linalg_eig(S, &V);
    CHECK(L && residual(S, L, V) < 1e-10);
    tn_scope_end();
}

TEST(large_200) {
    tn_scope_begin();
    tn_manual_seed(5);
    tn_tensor *A = tn_randn(TN_SHAPE(200, 200), TN_F64), *V = NULL;
    tn_tensor *L = tn_linalg_eig(A, &V);
    CHECK(L && residual(A, L, V) < 200 * 10 * EPS && normalised(V, 1e-12));
    tn_tensor *C = tn_complex(A, tn_randn(TN_SHAPE(200, 200), TN_F64)), *W = NULL;
    tn_tensor *M = tn_linalg_eig(C, &W);
    CHECK(M && residual(C, M, W) < 200 * 10 * EPS && normalised(W, 1e-12));
    tn_scope_end();
}

TEST(errors_as_torch) {
    tn_scope_begin();
    tn_tensor *V = NULL;
    CHECK(!tn_linalg_eig(tn_ones(TN_SHAPE(2, 3), TN_F64), &V) && strstr(tn_last_error(), "square matrices"));
    CHECK(!tn_linalg_eigvals(tn_ones(TN_SHAPE(3), TN_F64)) && strstr(tn_last_error(), "at least 2 dimensions"));
    CHECK(!tn_linalg_eig(tn_ones(TN_SHAPE(2, 2), TN_I64), &V) && strstr(tn_last_error(), "Got Long"));
    const double nan_[] = {1, NAN, 0, 1}, inf_[] = {1, 0, INFINITY, 1};
    CHECK(!tn_linalg_eig(mat(nan_, 2), &V) && V == NULL && strstr(tn_last_error(), "should not contain infs or NaNs"));
    CHECK(!tn_linalg_eigvals(mat(inf_, 2)) && strstr(tn_last_error(), "should not contain infs or NaNs"));
    CHECK(!tn_linalg_eig(tn_ones(TN_SHAPE(2, 2), TN_F64), NULL));
    CHECK(!tn_linalg_eig(NULL, &V));
    tn_scope_end();
}

/* gauge-invariant functions: the eigenvalues, |V| */
static tn_tensor *f_vals(tn_tensor *const *in, int n, void *u) { (void)n; (void)u; return tn_view_as_real(tn_linalg_eigvals(in[0])); }
static tn_tensor *f_absv(tn_tensor *const *in, int n, void *u) {
    (void)n; (void)u;
    tn_tensor *V = NULL, *L = tn_linalg_eig(in[0], &V);
    return L ? tn_add(tn_abs(V), tn_unsqueeze(tn_real(L), -2)) : NULL;
}
static tn_tensor *f_phase(tn_tensor *const *in, int n, void *u) {
    (void)n; (void)u;
    tn_tensor *V = NULL, *L = tn_linalg_eig(in[0], &V);
    return L ? tn_sum(tn_real(V)) : NULL;
}
TEST(gradients) {
    tn_manual_seed(7);
    tn_scope_begin();
    tn_tensor *A = tn_randn(TN_SHAPE(2, 4, 4), TN_F64);
    tn_requires_grad_(A, true);
    CHECK(tn_gradcheck(f_vals, &A, 1, NULL, .rtol = 1e-4));
    CHECK(tn_gradcheck(f_absv, &A, 1, NULL, .rtol = 1e-4));
    tn_tensor *C = tn_complex(tn_randn(TN_SHAPE(3, 3), TN_F64), tn_randn(TN_SHAPE(3, 3), TN_F64));
    tn_requires_grad_(C, true);
    CHECK(tn_gradcheck(f_vals, &C, 1, NULL, .rtol = 1e-4));
    /* double backward, of the eigenvalues and through the eigenvectors (|V|: the second
       order's two paths to V meet in V's node, whose gauge check sees their sum) */
    CHECK(tn_gradgradcheck(f_vals, &A, 1, NULL, .rtol = 1e-4));
    CHECK(tn_gradgradcheck(f_vals, &C, 1, NULL, .rtol = 1e-4));
    CHECK(tn_gradcheck(f_absv, &C, 1, NULL, .rtol = 1e-4));
    CHECK(tn_gradgradcheck(f_absv, &A, 1, NULL, .rtol = 1e-4));
    CHECK(tn_gradgradcheck(f_absv, &C, 1, NULL, .rtol = 1e-4));
    /* a loss that depends on the phase: PyTorch's error */
    const double pair[] = {0, 1, 0.3, -1, 0, 0.2, 0.1, 0.4, 1};
    tn_tensor *P = mat(pair, 3);
    tn_requires_grad_(P, true);
    tn_tensor *loss = f_phase(&P, 1, NULL);
    CHECK(loss && tn_backward(loss) != 0 && strstr(tn_last_error(), "specified up to multiplication by e^{i phi}"));
    tn_scope_end();
}

int main(void) {
    RUN(random_real_complex_batched);
    RUN(structured);
    RUN(large_200);
    RUN(errors_as_torch);
    RUN(gradients);
    return tn_test_report();
}
