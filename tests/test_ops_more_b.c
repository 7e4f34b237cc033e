/* test_ops_more_b.c — issue 20, item 2 (second half): the shape and linear-algebra-lite ops
 * (diagonal, diag_embed, diag, diagflat, einsum, tensordot, kron, cross, rot90,
 * block_diag, cartesian_prod, meshgrid, trace, addmv, addr, addbmm, vdot, cdist, pdist,
 * cov, corrcoef) and the special
 * functions of the elementwise families, against values PyTorch 1.13 computed (the
 * E_* arrays, generated with torch on the inputs built here), float64 gradchecks (and
 * gradgradchecks) of every differentiable one on non-contiguous views, and PyTorch's
 * errors. The Python side compares all of them with PyTorch's OpInfo samples
 * (bindings/python/tests/test_ops_elementwise_linalg.py). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

/* ---- expected values, from PyTorch 1.13 ---- */
static const double E_DIAG1[6] = {-2.5, 4.0, -0.5, 6.0, 1.5, 8.0};
static const double E_DIAGN[6] = {-2.5, 0.0, 2.5, 3.5, 6.0, 8.5};
static const double E_EMBED[32] = {0.0, 1.5, 0.0, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
static const double E_DIAGFLAT[25] = {0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0};
static const double E_EIN_MM[15] = {1.0476190476190477, 0.761904761904762, 0.4761904761904762, 0.1904761904761904, -0.09523809523809532, 1.4285714285714288, 1.9047619047619049, 2.380952380952381, 2.8571428571428577, 3.333333333333334, 1.8095238095238095, 3.0476190476190466, 4.285714285714285, 5.523809523809525, 6.761904761904762};
static const double E_EIN_DIAG[3] = {0.0, 4.0, 8.0};
static const double E_EIN_ELL[24] = {-3.0, -1.0, 1.0, -2.5, -0.5, 1.5, -2.0, 0.0, 2.0, -1.5, 0.5, 2.5, 3.0, 5.0, 7.0, 3.5, 5.5, 7.5, 4.0, 6.0, 8.0, 4.5, 6.5, 8.5};
static const double E_EIN_IMPL[15] = {1.0476190476190477, 0.761904761904762, 0.4761904761904762, 0.1904761904761904, -0.09523809523809532, 1.4285714285714288, 1.9047619047619049, 2.380952380952381, 2.8571428571428577, 3.333333333333334, 1.8095238095238095, 3.0476190476190466, 4.285714285714285, 5.523809523809525, 6.761904761904762};
static const double E_EIN_BMM[18] = {21.5, 3.5, -14.5, 3.5, 1.5, -0.5, -14.5, -0.5, 13.5, 57.5, 87.5, 117.5, 87.5, 133.5, 179.5, 117.5, 179.5, 241.5};
static const double E_EIN_3[3] = {1.9047619047619042, 28.571428571428577, 55.23809523809524};
static const double E_TDOT[2] = {21.333333333333336, 81.33333333333334};
static const double E_KRON[12] = {1.0, -1.0, 2.0, 2.0, -2.0, 4.0, 3.0, -3.0, 6.0, 4.0, -4.0, 8.0};
static const double E_CROSS[6] = {-7.0, 2.0, 1.0, -3.0, -2.0, -1.0};
static const double E_ROT1[12] = {0.0, 1.3333333333333335, 2.6666666666666665, -0.33333333333333337, 1.0, 2.3333333333333335, -0.6666666666666667, 0.6666666666666667, 2.0, -1.0, 0.33333333333333326, 1.6666666666666665};
static const double E_ROT3[12] = {0.0, 1.3333333333333335, 2.6666666666666665, -0.33333333333333337, 1.0, 2.3333333333333335, -0.6666666666666667, 0.6666666666666667, 2.0, -1.0, 0.33333333333333326, 1.6666666666666665};
static const double E_BLOCK[15] = {1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 5.0};
static const double E_CART[12] = {1.0, 3.0, 1.0, 4.0, 1.0, 5.0, 2.0, 3.0, 2.0, 4.0, 2.0, 5.0};
static const double E_MESH_XY0[6] = {1.0, 2.0, 1.0, 2.0, 1.0, 2.0};
static const double E_ADDMV[3] = {-2.166666666666667, 14.333333333333334, 30.833333333333336};
static const double E_ADDR[12] = {2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 0.0, -1.0, 2.0, 0.0, -2.0, -4.0};
static const double E_ADDBMM[9] = {20.25, 23.25, 26.25, 23.25, 34.25, 45.25, 26.25, 45.25, 64.25};
static const double E_LGAMMA[4] = {1.0957979948180756, -0.09580769740706588, -0.05624371649767405, 7.0521854507385395};
static const double E_DIGAMMA[4] = {-3.502524222200133, 0.20854787487349372, 1.1031566406452433, 1.910453526883736};
static const double E_POLY2[4] = {-75.27253658872601, -0.6040890841034592, -0.1082040516417282, -0.021828952295197733};
static const double E_ERFINV[4] = {-1.1630871536766743, -0.1791434546212917, 0.4226802386475619, 2.3267537655135153};
static const double E_I0[4] = {1.0226268793515967, 1.8639649620738397, 3.289839144050123, 212.55834116279757};
static const double E_LAE[4] = {1.4031860488854577, 1.7090541641698875, 0.5485873515737419, 7.255233798151743};
static const double E_HYPOT[4] = {1.044030650891055, 3.4481879299133333, 2.5495097567963922, 7.520804478245662};
static const double E_XLOGY[4] = {0.0, 1.8676408907357867, 1.7328679513998633, 5.025317059059604};
static const double E_CDIST2[15] = {1.4253932901995967, 1.6632618282450458, 1.9142620230706455, 2.1738499448596817, 2.4392854237839425, 1.7457431218879391, 1.5028317941009048, 1.2777531299998797, 1.0816968277714807, 0.9331389496316869, 4.27617987059879, 3.9965971920680543, 3.717946913512978, 3.440455593940656, 3.1644281382545043};
static const double E_CDIST1[15] = {2.2857142857142856, 2.8571428571428568, 3.4285714285714284, 4.0, 4.571428571428572, 3.0476190476190474, 2.4761904761904767, 2.095238095238095, 1.8095238095238095, 1.5238095238095237, 8.380952380952381, 7.809523809523808, 7.238095238095239, 6.666666666666666, 6.095238095238095};
static const double E_CDISTINF[15] = {1.1428571428571428, 1.2857142857142856, 1.4285714285714284, 1.5714285714285716, 1.7142857142857144, 1.3333333333333333, 1.1904761904761905, 1.0476190476190474, 0.9047619047619047, 0.7619047619047619, 2.6666666666666665, 2.5238095238095237, 2.380952380952381, 2.238095238095238, 2.095238095238095};
static const double E_CDIST0[15] = {3.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 3.0, 4.0, 4.0, 4.0, 4.0, 4.0};
static const double E_CDISTMM[15] = {1.4253932901995967, 1.6632618282450458, 1.9142620230706455, 2.1738499448596817, 2.4392854237839425, 1.745743121887939, 1.502831794100905, 1.2777531299998799, 1.081696827771481, 0.933138949631687, 4.27617987059879, 3.9965971920680543, 3.717946913512978, 3.4404555939406554, 3.1644281382545048};
static const double E_PDIST[10] = {0.22677157885259985, 0.45354315770519976, 0.6803147365577998, 0.9070863154103997, 0.22677157885259994, 0.4535431577052001, 0.6803147365578, 0.22677157885260016, 0.4535431577052001, 0.22677157885259994};
static const double E_COV[9] = {7.0, 2.9166666666666665, -2.5, 2.9166666666666665, 3.0625, -1.2083333333333333, -2.5, -1.2083333333333333, 0.9166666666666666};
static const double E_COVW[9] = {3.2834467120181405, 2.154195011337868, -1.26984126984127, 2.154195011337868, 3.2052154195011338, -0.984126984126984, -1.26984126984127, -0.984126984126984, 0.507936507936508};
static const double E_CORR[9] = {0.9999999999999998, 0.629940788348712, -0.9869275424396534, 0.6299407883487119, 1.0, -0.721178860387891, -0.9869275424396534, -0.721178860387891, 1.0};

/* ---- helpers ---- */
static tn_tensor *f64(const double *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_F64); }
/* t - as float64, contiguous - equals want[0..n) within tol (and has n elements). */
static void check_vals_(tn_tensor *t, const double *want, int64_t n, double tol, const char *what, int line) {
    if (!t) { fail_at(line, "%s: NULL (%s)", what, tn_last_error()); return; }
    if (tn_numel(t) != n) { fail_at(line, "%s: %lld elements, expected %lld", what, (long long)tn_numel(t), (long long)n); return; }
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_F64));
    const double *got = (const double *)tn_data_ptr(c);
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(got[i] - want[i]) <= tol * (1 + fabs(want[i])) || (got[i] != got[i] && want[i] != want[i]))) {
            fail_at(line, "%s[%lld] = %.17g, expected %.17g", what, (long long)i, got[i], want[i]);
            return;
        }
    tn_test_passed++;
}
#define CHECK_VALS(t, want, tol) check_vals_((t), (want), (int64_t)(sizeof(want) / sizeof(double)), (tol), #t, __LINE__)
static void check_shape_(tn_tensor *t, const int64_t *shape, int nd, int line) {
    if (!t) { fail_at(line, "NULL (%s)", tn_last_error()); return; }
    if (tn_ndim(t) != nd || (nd && memcmp(tn_shape(t), shape, (size_t)nd * sizeof(int64_t)))) { fail_at(line, "shape mismatch (ndim %d, expected %d)", tn_ndim(t), nd); return; }
    tn_test_passed++;
}
#define CHECK_SHAPE(t, ...) check_shape_((t), TN_SHAPE(__VA_ARGS__), __LINE__)
/* the inputs of the tests: X [2, 3, 4], A [3, 4], B [4, 5], S [3, 3] as gen.py made them */
static tn_tensor *mk_x(void) { return tn_add_scalar(tn_mul_scalar(tn_reshape(tn_arange(0, 24, 1, TN_F64), TN_SHAPE(2, 3, 4)), 0.5), -3); }
static tn_tensor *mk_a(void) { return tn_add_scalar(tn_div_scalar(tn_reshape(tn_arange(0, 12, 1, TN_F64), TN_SHAPE(3, 4)), 3), -1); }
static tn_tensor *mk_b(void) { return tn_add_scalar(tn_div_scalar(tn_reshape(tn_arange(0, 20, 1, TN_F64), TN_SHAPE(4, 5)), 7), -1); }
static tn_tensor *leaf(const int64_t *shape, int nd) {
    tn_tensor *t = tn_randn(shape, nd, TN_F64);
    tn_requires_grad_(t, true);
    return t;
}
#define LEAF(...) leaf(TN_SHAPE(__VA_ARGS__))

static void gc_(const char *name, tn_gradcheck_fn fn, tn_tensor **ins, int n, int order, int line) {
    for (int k = 0; k < n; k++)
        if (!ins[k]) { fail_at(line, "%s: input %d is NULL (%s)", name, k, tn_last_error()); return; }
    tn_clear_error();
    if (tn_gradcheck(fn, ins, n, NULL, .atol = 1e-6, .rtol = 1e-4)) tn_test_passed++;
    else fail_at(line, "gradcheck %s: %s", name, tn_last_error());
    if (order >= 2) {
        tn_clear_error();
        if (tn_gradgradcheck(fn, ins, n, NULL, .atol = 1e-6, .rtol = 1e-4)) tn_test_passed++;
        else fail_at(line, "gradgradcheck %s: %s", name, tn_last_error());
    }
}
#define GC(fn, order, ...) do { tn_tensor *ins_[] = {__VA_ARGS__}; gc_(#fn, fn, ins_, (int)(sizeof ins_ / sizeof ins_[0]), order, __LINE__); } while (0)
#define I0 in_[0]
#define I1 in_[1]
#define I2 in_[2]
#define GF(name, ...) static tn_tensor *name(tn_tensor *const *in_, int n_, void *u_) { (void)n_; (void)u_; return (__VA_ARGS__); }

/* ---- diagonal and friends ---- */
TEST(diagonal_views) {
    tn_scope_begin();
    tn_tensor *x = mk_x();
    tn_tensor *d = tn_diagonal(x, .offset = 1, .dim2 = 2);
    CHECK_SHAPE(d, 3, 2);
    CHECK_VALS(d, E_DIAG1, 0);
    CHECK(tn_same_storage(d, x));   /* a view */
    CHECK_VALS(tn_diagonal(x, .offset = -1, .dim1 = -1), E_DIAGN, 0);
    CHECK_SHAPE(tn_diagonal(x, .offset = 5, .dim1 = 1, .dim2 = 2), 2, 0);     /* past the edge: empty */
    CHECK_SHAPE(tn_diagonal(x, .offset = -3, .dim1 = 1, .dim2 = 2), 2, 0);
    CHECK_SHAPE(tn_diagonal(tn_zeros(TN_SHAPE(0, 3), TN_F32)), 0);
    CHECK_ERR(tn_diagonal(x, .dim1 = 1, .dim2 = -2), "diagonal dimensions cannot be identical");
    CHECK_ERR(tn_diagonal(x, .dim2 = 3), "out of range");
    CHECK_ERR(tn_diagonal(tn_zeros(TN_SHAPE(3), TN_F32)), "out of range");
    /* writes through the view reach the base */
    tn_fill_(tn_diagonal(x, .dim1 = 1, .dim2 = 2), 7);
    CHECK(tn_item(tn_select(tn_select(tn_select(x, 0, 1), 0, 1), 0, 1)) == 7);

    tn_tensor *v = tn_expand(tn_reshape(f64((const double[]){1.5, -2., 3.}, TN_SHAPE(3)), TN_SHAPE(1, 3)), TN_SHAPE(2, 3));
    tn_tensor *e = tn_diag_embed(v, .offset = 1, .dim1 = 0, .dim2 = 2);
    CHECK_SHAPE(e, 4, 2, 4);
    CHECK_VALS(e, E_EMBED, 0);
    CHECK_ERR(tn_diag_embed(tn_scalar_tensor(1, TN_F32)), "at least 1 dimension");
    CHECK_ERR(tn_diag_embed(v, .dim1 = 0, .dim2 = -3), "cannot be identical");
    CHECK_VALS(tn_diagflat(f64((const double[]){1, 2, 3, 4}, TN_SHAPE(2, 2)), .offset = -1), E_DIAGFLAT, 0);
    CHECK_SHAPE(tn_diagflat(tn_scalar_tensor(2, TN_I64)), 1, 1);
    CHECK_SHAPE(tn_diag(tn_zeros(TN_SHAPE(0), TN_F32), .diagonal = 2), 2, 2);
    tn_tensor *a = mk_a(), *dg = tn_diag(a, .diagonal = 1);
    CHECK_SHAPE(dg, 3);
    CHECK(!tn_same_storage(dg, a));   /* diag copies, diagonal views */
    CHECK_ERR(tn_diag(x), "Supports 1D or 2D tensors. Got 3D");
    tn_tensor *tr = tn_trace(tn_reshape(tn_arange(0, 12, 1, TN_I32), TN_SHAPE(3, 4)));
    CHECK(tr && tn_get_dtype(tr) == TN_I64 && tn_item(tr) == 15);   /* 0 + 5 + 10; integers sum as int64 */
    CHECK_ERR(tn_trace(tn_zeros(TN_SHAPE(3), TN_F32)), "expected a matrix, but got tensor with dim 1");
    tn_scope_end();
}

GF(g_diagonal, tn_diagonal(tn_transpose(I0, 0, 2), .offset = -1, .dim1 = 2, .dim2 = 0))
GF(g_diag_embed, tn_diag_embed(tn_transpose(I0, 0, 1), .offset = 2, .dim1 = 2, .dim2 = 0))
GF(g_diag, tn_diag(tn_t(I0), .diagonal = -1))
GF(g_diagflat, tn_diagflat(tn_t(I0), .offset = 1))
GF(g_trace, tn_trace(tn_t(I0)))
TEST(diagonal_grads) {
    tn_scope_begin();
    GC(g_diagonal, 2, LEAF(3, 4, 5));
    GC(g_diag_embed, 2, LEAF(3, 2));
    GC(g_diag, 2, LEAF(4, 3));
    GC(g_diagflat, 2, LEAF(2, 3));
    GC(g_trace, 2, LEAF(3, 4));
    /* PyTorch's node names */
    tn_tensor *x = LEAF(3, 3);
    CHECK(strcmp(tn_grad_fn_name(tn_diagonal(x)), "DiagonalBackward0") == 0);
    CHECK(strcmp(tn_grad_fn_name(tn_trace(x)), "TraceBackward0") == 0);
    tn_scope_end();
}

/* ---- einsum ---- */
TEST(einsum_values) {
    tn_scope_begin();
    tn_tensor *x = mk_x(), *a = mk_a(), *b = mk_b(), *s = tn_reshape(tn_arange(0, 9, 1, TN_F64), TN_SHAPE(3, 3));
    tn_tensor *ab[2] = {a, b}, *ba[2] = {b, a}, *xx[2] = {x, x}, *abk[3] = {a, b, tn_arange(0, 5, 1, TN_F64)};
    CHECK_VALS(tn_einsum("ij,jk->ik", ab, 2), E_EIN_MM, 1e-14);
    CHECK_VALS(tn_einsum("ii->i", &s, 1), E_EIN_DIAG, 0);
    CHECK_VALS(tn_einsum("...ij->...ji", &x, 1), E_EIN_ELL, 0);
    CHECK_SHAPE(tn_einsum("...ij->...ji", &x, 1), 2, 4, 3);
    CHECK_VALS(tn_einsum("jk,ij", ba, 2), E_EIN_IMPL, 1e-14);     /* implicit output: i, k */
    CHECK_VALS(tn_einsum("bij,bkj->bik", xx, 2), E_EIN_BMM, 1e-14);
    CHECK_VALS(tn_einsum(" ij , jk , k -> i", abk, 3), E_EIN_3, 1e-13);
    tn_tensor *e = tn_einsum("bA", &a, 1);   /* capitals come first in the implicit output */
    CHECK_SHAPE(e, 4, 3);
    tn_tensor *all = tn_einsum("ij->", &a, 1);
    CHECK(all && tn_ndim(all) == 0 && fabs(tn_item(all) - tn_item(tn_sum(a))) < 1e-14);
    tn_tensor *z[2] = {tn_zeros(TN_SHAPE(0, 3), TN_F64), tn_ones(TN_SHAPE(3, 2), TN_F64)};
    CHECK_SHAPE(tn_einsum("ij,jk", z, 2), 0, 2);
    tn_tensor *z2[2] = {tn_ones(TN_SHAPE(2, 0), TN_F64), tn_ones(TN_SHAPE(0, 3), TN_F64)};
    tn_tensor *zs = tn_einsum("ij,jk", z2, 2);
    CHECK_SHAPE(zs, 2, 3);
    CHECK(zs && tn_item(tn_sum(tn_abs(zs))) == 0);
    /* broadcasting of size-1 dims */
    tn_tensor *bc[2] = {tn_ones(TN_SHAPE(2, 1, 3), TN_F64), tn_ones(TN_SHAPE(1, 4, 3), TN_F64)};
    tn_tensor *r = tn_einsum("bij,bkj->bik", bc, 2);
    CHECK_SHAPE(r, 2, 1, 4);
    CHECK(r && tn_item(tn_sum(r)) == 24);
    /* errors, as PyTorch's */
    CHECK_ERR(tn_einsum("ij,jk->ik", ab, 1), "more operands were specified");
    CHECK_ERR(tn_einsum("ij->ij", ab, 2), "fewer operands");
    CHECK_ERR(tn_einsum("ijk->i", &a, 1), "does not match the number of dimensions");
    CHECK_ERR(tn_einsum("i1->i", &a, 1), "subscripts must be in [a-zA-Z]");
    CHECK_ERR(tn_einsum("ij->ii", &a, 1), "appears more than once in the output");
    CHECK_ERR(tn_einsum("ij->k", &a, 1), "does not appear in the equation for any input operand");
    CHECK_ERR(tn_einsum("ii->i", &a, 1), "sizes don't match");
    CHECK_ERR(tn_einsum("ij,ij->ij", ab, 2), "do not broadcast");
    CHECK_ERR(tn_einsum("i.j->i", &a, 1), "ellipsis");
    tn_tensor *mixed[2] = {a, tn_to_dtype(b, TN_F32)};
    CHECK_ERR(tn_einsum("ij,jk->ik", mixed, 2), "tn_einsum");
    tn_scope_end();
}
GF(g_ein_mm, tn_einsum("ij,jk->ik", (tn_tensor *[]){tn_t(I0), I1}, 2))
GF(g_ein_trace_bcast, tn_einsum("bii,bj->bj", (tn_tensor *[]){tn_transpose(I0, 1, 2), I1}, 2))
GF(g_ein_ell, tn_einsum("...i,...i", (tn_tensor *[]){I0, tn_t(I1)}, 2))
GF(g_ein_three, tn_einsum("ij,jk,kl->li", (tn_tensor *[]){I0, I1, I2}, 3))
TEST(einsum_grads) {
    tn_scope_begin();
    GC(g_ein_mm, 2, LEAF(4, 3), LEAF(4, 2));
    GC(g_ein_trace_bcast, 2, LEAF(2, 3, 3), LEAF(1, 4));
    GC(g_ein_ell, 1, LEAF(3, 4), LEAF(4, 3));
    GC(g_ein_three, 1, LEAF(2, 3), LEAF(3, 4), LEAF(4, 2));
    tn_scope_end();
}

/* ---- the other contractions and products ---- */
TEST(products_values) {
    tn_scope_begin();
    tn_tensor *x = mk_x(), *a = mk_a();
    tn_tensor *ar = tn_reshape(tn_t(a), TN_SHAPE(4, 3));
    CHECK_VALS(tn_tensordot(x, ar, .dims_a = TN_INTS(1, 2), .dims_b = TN_INTS(1, 0)), E_TDOT, 1e-13);
    CHECK_SHAPE(tn_tensordot(x, a, .dims = 0), 2, 3, 4, 3, 4);   /* an outer product */
    CHECK_ERR(tn_tensordot(x, a, .dims_a = TN_INTS(0), .dims_b = TN_INTS(0)), "contracted dimensions need to match");
    CHECK_ERR(tn_tensordot(x, a, .dims_a = TN_INTS(1, 1), .dims_b = TN_INTS(0, 1)), "appears multiple times");
    tn_tensor *k1 = f64((const double[]){1, 2, 3, 4}, TN_SHAPE(2, 2)), *k2 = f64((const double[]){1, -1, 2}, TN_SHAPE(3));
    tn_tensor *k = tn_kron(k1, k2);
    CHECK_SHAPE(k, 2, 6);
    CHECK_VALS(k, E_KRON, 0);
    tn_tensor *ki = tn_kron(tn_ones(TN_SHAPE(2), TN_I64), tn_ones(TN_SHAPE(2), TN_I32));
    CHECK(ki && tn_get_dtype(ki) == TN_I64);
    tn_tensor *c1 = f64((const double[]){1, 2, 3, -1, 0.5, 2}, TN_SHAPE(2, 3)), *c2 = f64((const double[]){0, 1, -2}, TN_SHAPE(1, 3));
    CHECK_VALS(tn_cross(c1, c2, .dim = -1), E_CROSS, 0);
    CHECK_ERR(tn_cross(c1, tn_reshape(c2, TN_SHAPE(3)), .dim = -1), "same number of dimensions");
    CHECK_ERR(tn_cross(c1, c2, .dim = 0), "must have length 3");
    CHECK_ERR(tn_cross(c1, tn_to_dtype(c2, TN_F32), .dim = -1), "same dtype");
    CHECK_VALS(tn_rot90(a), E_ROT1, 0);
    CHECK_VALS(tn_rot90(a, .k = -1, .dims = TN_INTS(1, 0)), E_ROT3, 0);
    CHECK_SHAPE(tn_rot90(x, .k = 5, .dims = TN_INTS(-1, 0)), 4, 3, 2);
    CHECK_SHAPE(tn_rot90(x, .k = -2, .dims = TN_INTS(-1, 0)), 2, 3, 4);
    CHECK_ERR(tn_rot90(x, .dims = TN_INTS(0)), "expected total rotation dims == 2");
    CHECK_ERR(tn_rot90(x, .dims = TN_INTS(1, -2)), "expected rotation dims to be different");
    CHECK_ERR(tn_rot90(tn_zeros(TN_SHAPE(3), TN_F32)), "expected total dims >= 2");
    tn_tensor *blocks[3] = {f64((const double[]){1, 2}, TN_SHAPE(1, 2)), tn_scalar_tensor(3, TN_F32), f64((const double[]){4, 5}, TN_SHAPE(2))};
    tn_tensor *bd = tn_block_diag(blocks, 3);
    CHECK_SHAPE(bd, 3, 5);
    CHECK(bd && tn_get_dtype(bd) == TN_F64);
    CHECK_VALS(bd, E_BLOCK, 0);
    tn_tensor *bad[1] = {x};
    CHECK_ERR(tn_block_diag(bad, 1), "Input tensors must have 2 or fewer dimensions");
    tn_tensor *p[2] = {f64((const double[]){1, 2}, TN_SHAPE(2)), f64((const double[]){3, 4, 5}, TN_SHAPE(3))}, *g[2];
    CHECK_VALS(tn_cartesian_prod(p, 2), E_CART, 0);
    CHECK(tn_meshgrid(p, 2, g, .indexing = TN_INDEXING_XY) == 2);
    CHECK_SHAPE(g[0], 3, 2);
    CHECK_VALS(g[0], E_MESH_XY0, 0);
    CHECK(tn_meshgrid(p, 2, g) == 2);
    CHECK_SHAPE(g[1], 2, 3);
    CHECK_ERR(tn_meshgrid_str(p, 2, g, "indexing='ji'") == 2, "expected one of ij|xy");
    tn_tensor *p2[2] = {p[0], a};
    CHECK_ERR(tn_meshgrid(p2, 2, g) == 2, "Expected 0D or 1D tensor");
    CHECK_ERR(tn_cartesian_prod(p2, 2), "Expect a 1D vector");
    tn_scope_end();
}
TEST(addmv_addr_addbmm_vdot) {
    tn_scope_begin();
    tn_tensor *x = mk_x(), *a = mk_a();
    CHECK_VALS(tn_addmv(f64((const double[]){1, 2, 3}, TN_SHAPE(3)), a, tn_arange(0, 4, 1, TN_F64), .beta = 0.5, .alpha = 2), E_ADDMV, 1e-14);
    CHECK_VALS(tn_addr(tn_scalar_tensor(1, TN_F64), tn_arange(0, 3, 1, TN_F64), tn_arange(0, 4, 1, TN_F64), .beta = 2, .alpha = -1), E_ADDR, 0);
    CHECK_VALS(tn_addbmm(tn_ones(TN_SHAPE(3, 3), TN_F64), x, tn_transpose(x, 1, 2), .beta = 0.5, .alpha = 0.25), E_ADDBMM, 1e-14);
    /* beta = 0 ignores input (NaN included); addr's alpha * NaN stays NaN as PyTorch's */
    tn_tensor *nan3 = tn_full(TN_SHAPE(3), NAN, TN_F64);
    tn_tensor *r = tn_addmv(nan3, a, tn_ones(TN_SHAPE(4), TN_F64), .beta = 0);
    CHECK(r && !isnan(tn_item(tn_sum(r))));
    CHECK_ERR(tn_addmv(nan3, a, tn_ones(TN_SHAPE(3), TN_F64)), "tn_addmv");
    CHECK_ERR(tn_addbmm(a, x, x), "incompatible matrix sizes");
    CHECK_ERR(tn_addbmm(tn_zeros(TN_SHAPE(3, 3), TN_F64), x, tn_zeros(TN_SHAPE(3, 4, 3), TN_F64)), "same number of batches");
    CHECK_ERR(tn_addr(tn_zeros(TN_SHAPE(2, 2), TN_F64), tn_ones(TN_SHAPE(3), TN_F64), tn_ones(TN_SHAPE(3), TN_F64)), "does not broadcast");
    tn_tensor *vd = tn_vdot(tn_arange(0, 3, 1, TN_F64), f64((const double[]){1, 2, 3}, TN_SHAPE(3)));
    CHECK(vd && tn_item(vd) == 8);
    CHECK_ERR(tn_vdot(a, a), "tn_vdot");
    tn_scope_end();
}
GF(g_tensordot, tn_tensordot(tn_transpose(I0, 0, 2), I1, .dims_a = TN_INTS(2, 1), .dims_b = TN_INTS(0, 2)))
GF(g_kron, tn_kron(tn_t(I0), I1))
GF(g_cross, tn_cross(tn_t(I0), I1, .dim = 0))
GF(g_rot90, tn_rot90(tn_transpose(I0, 0, 2), .k = 3, .dims = TN_INTS(2, 0)))
GF(g_block, tn_block_diag((tn_tensor *[]){tn_t(I0), tn_select(I1, 0, 0), tn_select(I1, 0, 1)}, 3))
GF(g_cart, tn_cartesian_prod((tn_tensor *[]){I0, tn_select(I1, 1, 0)}, 2))
GF(g_addmv, tn_addmv(I0, tn_t(I1), I2, .beta = 0.5, .alpha = -2))
GF(g_addr, tn_addr(I0, I1, I2, .beta = 3, .alpha = 0.5))
GF(g_addbmm, tn_addbmm(I0, tn_transpose(I1, 1, 2), I2, .beta = -1, .alpha = 2))
GF(g_vdot, tn_vdot(tn_select(I0, 1, 0), tn_select(I0, 1, 1)))
/* as_strided with PyTorch's AsStridedBackward: overlapping windows sum their gradients */
GF(g_as_strided, tn_as_strided(I0, TN_SHAPE(3, 3), (const int64_t[]){1, 2}, 1))
GF(g_as_strided_view, tn_as_strided(tn_narrow(I0, 0, 2, 5), TN_SHAPE(2, 2), (const int64_t[]){1, 2}, 3))   /* positions 3..6: inside the narrowed view */
TEST(products_grads) {
    tn_scope_begin();
    GC(g_tensordot, 2, LEAF(4, 3, 2), LEAF(4, 5, 3));
    GC(g_kron, 2, LEAF(3, 2), LEAF(2, 1, 2));
    GC(g_cross, 2, LEAF(4, 3), LEAF(3, 1));
    GC(g_rot90, 1, LEAF(2, 3, 4));
    GC(g_block, 1, LEAF(3, 2), LEAF(2, 3));
    GC(g_cart, 1, LEAF(3), LEAF(2, 2));
    GC(g_addmv, 2, LEAF(1), LEAF(4, 3), LEAF(4));
    GC(g_addr, 2, LEAF(3, 1), LEAF(3), LEAF(2));
    GC(g_addbmm, 2, LEAF(3, 2), LEAF(2, 4, 3), LEAF(2, 4, 2));
    GC(g_vdot, 2, LEAF(3, 2));
    GC(g_as_strided, 2, LEAF(8));
    GC(g_as_strided_view, 1, LEAF(8));
    tn_tensor *x = LEAF(6);
    tn_tensor *v = tn_as_strided(x, TN_SHAPE(2, 2), (const int64_t[]){1, 1}, 0);
    CHECK(v && strcmp(tn_grad_fn_name(v), "AsStridedBackward0") == 0 && tn_same_storage(v, x));
    if (v && tn_backward(tn_sum(v)) == 0) {
        const double want[6] = {1, 2, 1, 0, 0, 0};   /* storage positions 0, 1, 1, 2 */
        CHECK_VALS(tn_grad(x), want, 0);
    }
    tn_scope_end();
}

/* ---- tensor_split and the numpy-style stacks ---- */
TEST(splits_stacks) {
    tn_scope_begin();
    tn_tensor *x = tn_reshape(tn_arange(0, 14, 1, TN_F64), TN_SHAPE(2, 7)), *out[10];
    CHECK(tn_tensor_split(x, 3, NULL, 0, .dim = -1) == 3);   /* counting */
    CHECK(tn_tensor_split(x, 3, out, 8, .dim = -1) == 3);
    CHECK_SHAPE(out[0], 2, 3);
    CHECK_SHAPE(out[2], 2, 2);
    CHECK(tn_same_storage(out[1], x) && tn_item(tn_select(tn_select(out[1], 0, 0), 0, 0)) == 3);
    CHECK(tn_tensor_split(x, 9, out, 9, .dim = 1) == 9);
    CHECK_SHAPE(out[8], 2, 0);
    CHECK(tn_tensor_split_indices(x, ((const int64_t[]){2, -2, 100}), 3, out, 8, .dim = 1) == 4);
    CHECK_SHAPE(out[0], 2, 2);
    CHECK_SHAPE(out[1], 2, 3);   /* [2, -2) is [2, 5) */
    CHECK_SHAPE(out[2], 2, 2);
    CHECK_SHAPE(out[3], 2, 0);
    CHECK_ERR(tn_tensor_split(x, 0, out, 8) >= 0, "number of sections must be larger than 0");
    CHECK_ERR(tn_tensor_split(tn_scalar_tensor(1, TN_F32), 1, out, 8) >= 0, "at least a 1-dimensional tensor");
    CHECK_ERR(tn_tensor_split(x, 3, out, 8, .dim = 2) >= 0, "out of range");
    CHECK_ERR(tn_tensor_split(x, 3, out, 2, .dim = 1) >= 0, "max_out");
    tn_tensor *s0 = tn_scalar_tensor(1, TN_F64), *v3 = tn_arange(0, 3, 1, TN_F64), *m = tn_ones(TN_SHAPE(2, 3), TN_F64);
    CHECK_SHAPE(tn_atleast_1d(s0), 1);
    CHECK_SHAPE(tn_atleast_2d(v3), 1, 3);
    CHECK_SHAPE(tn_atleast_3d(v3), 1, 3, 1);
    CHECK_SHAPE(tn_atleast_3d(m), 2, 3, 1);
    tn_tensor *vv[2] = {v3, v3}, *mm[2] = {m, m}, *vm[2] = {m, v3};
    CHECK_SHAPE(tn_hstack(vv, 2), 6);
    CHECK_SHAPE(tn_hstack(mm, 2), 2, 6);
    CHECK_SHAPE(tn_vstack(vm, 2), 3, 3);
    CHECK_SHAPE(tn_dstack(mm, 2), 2, 3, 2);
    CHECK_SHAPE(tn_column_stack(vv, 2), 3, 2);
    tn_tensor *cs[2] = {tn_t(m), v3};
    tn_tensor *c = tn_column_stack(cs, 2);
    CHECK_SHAPE(c, 3, 3);
    CHECK(c && tn_item(tn_select(tn_select(c, 0, 2), 0, 2)) == 2);   /* v3 is the last column */
    CHECK_ERR(tn_hstack(vm, 2), "tn_hstack");
    CHECK_ERR(tn_vstack(NULL, 0), "non-empty");
    tn_scope_end();
}

/* ---- distances and covariance ---- */
TEST(distances_cov) {
    tn_scope_begin();
    tn_tensor *a = mk_a(), *bt = tn_t(mk_b());   /* [3, 4] and a non-contiguous [5, 4] */
    CHECK_VALS(tn_cdist(a, bt), E_CDIST2, 1e-14);
    CHECK_VALS(tn_cdist(a, bt, .p = 1), E_CDIST1, 1e-14);
    CHECK_VALS(tn_cdist(a, bt, .p = INFINITY), E_CDISTINF, 1e-14);
    CHECK_VALS(tn_cdist(a, bt, .p = 0), E_CDIST0, 0);
    CHECK_VALS(tn_cdist(a, bt, .compute_mode = TN_COMPUTE_MODE_USE_MM_FOR_EUCLID_DIST), E_CDISTMM, 1e-12);
    CHECK_SHAPE(tn_cdist(tn_zeros(TN_SHAPE(2, 1, 0, 4), TN_F32), tn_zeros(TN_SHAPE(3, 5, 4), TN_F32)), 2, 3, 0, 5);
    CHECK_ERR(tn_cdist(a, tn_zeros(TN_SHAPE(2, 3), TN_F64)), "same number of columns");
    CHECK_ERR(tn_cdist(a, bt, .p = -1), "non-negative p");
    CHECK_ERR(tn_cdist(tn_zeros(TN_SHAPE(4), TN_F64), bt), "at least 2D");
    CHECK_ERR(tn_cdist(tn_zeros(TN_SHAPE(2, 4), TN_I64), tn_zeros(TN_SHAPE(2, 4), TN_I64)), "floating-point");
    CHECK_VALS(tn_pdist(bt, .p = 3), E_PDIST, 1e-14);
    CHECK_SHAPE(tn_pdist(tn_zeros(TN_SHAPE(1, 3), TN_F32)), 0);
    CHECK_ERR(tn_pdist(a, .p = -2), "non-negative p");
    CHECK_ERR(tn_pdist(tn_zeros(TN_SHAPE(2, 3, 4), TN_F32)), "only supports 2D tensors, got: 3D");
    tn_tensor *x = f64((const double[]){1, 2, 4, 7, 0.5, -1, 3, 2, 2, 2, 1, 0}, TN_SHAPE(3, 4));
    tn_tensor *fw = tn_from_data((const int64_t[]){1, 2, 1, 3}, TN_SHAPE(4), TN_I64), *aw = f64((const double[]){0.5, 1, 2, 0.25}, TN_SHAPE(4));
    CHECK_VALS(tn_cov(x), E_COV, 1e-14);
    CHECK_VALS(tn_cov(x, .correction = 0, .fweights = fw, .aweights = aw), E_COVW, 1e-14);
    CHECK_VALS(tn_corrcoef(x), E_CORR, 1e-14);
    tn_tensor *ci = tn_cov(tn_arange(0, 4, 1, TN_I64));   /* integers: the default float, 0-d */
    CHECK(ci && tn_ndim(ci) == 0 && tn_get_dtype(ci) == TN_F32 && fabs(tn_item(ci) - 5.0 / 3) < 1e-6);
    tn_tensor *c1 = tn_cov(tn_ones(TN_SHAPE(1), TN_F64));   /* no degrees of freedom: NaN */
    CHECK(c1 && isnan(tn_item(c1)));
    CHECK_ERR(tn_cov(tn_zeros(TN_SHAPE(2, 2, 2), TN_F32)), "two or fewer dimensions");
    CHECK_ERR(tn_cov(x, .fweights = aw), "fweights to have integral dtype");
    CHECK_ERR(tn_cov(x, .aweights = fw), "aweights to have floating point dtype");
    CHECK_ERR(tn_cov(x, .fweights = tn_neg(fw)), "fweights cannot be negative");
    CHECK_ERR(tn_cov(x, .aweights = tn_ones(TN_SHAPE(3), TN_F64)), "same numel as there are observations");
    tn_scope_end();
}
GF(g_cdist2, tn_cdist(tn_t(I0), I1, .compute_mode = TN_COMPUTE_MODE_DONOT_USE_MM_FOR_EUCLID_DIST))
GF(g_cdist_mm, tn_cdist(tn_t(I0), I1, .compute_mode = TN_COMPUTE_MODE_USE_MM_FOR_EUCLID_DIST))
GF(g_cdist3, tn_cdist(tn_t(I0), I1, .p = 3))
GF(g_pdist, tn_pdist(tn_t(I0), .p = 1.5))
GF(g_cov, tn_cov(tn_t(I0), .aweights = tn_exp(I1)))
GF(g_corrcoef, tn_corrcoef(tn_t(I0)))
TEST(distances_cov_grads) {
    tn_scope_begin();
    GC(g_cdist2, 2, LEAF(3, 4), LEAF(2, 5, 3));
    GC(g_cdist_mm, 2, LEAF(3, 4), LEAF(5, 3));
    GC(g_cdist3, 1, LEAF(3, 4), LEAF(1, 2, 3));
    GC(g_pdist, 1, LEAF(3, 4));
    GC(g_cov, 2, LEAF(5, 3), LEAF(5));
    GC(g_corrcoef, 1, LEAF(6, 3));
    tn_scope_end();
}

/* ---- the special functions of the elementwise families ---- */
TEST(special_values) {
    tn_scope_begin();
    tn_tensor *xs = f64((const double[]){0.3, 1.7, -2.5, 7.25}, TN_SHAPE(4)), *ys = f64((const double[]){1.0, -3.0, 0.5, 2.0}, TN_SHAPE(4));
    tn_tensor *us = f64((const double[]){-0.9, -0.2, 0.45, 0.999}, TN_SHAPE(4));
    CHECK_VALS(tn_lgamma(xs), E_LGAMMA, 1e-14);
    CHECK_VALS(tn_digamma(xs), E_DIGAMMA, 1e-13);
    CHECK_VALS(tn_polygamma(2, xs), E_POLY2, 1e-12);
    CHECK_VALS(tn_erfinv(us), E_ERFINV, 1e-14);
    CHECK_VALS(tn_i0(xs), E_I0, 1e-14);
    CHECK_VALS(tn_logaddexp(xs, ys), E_LAE, 1e-15);
    CHECK_VALS(tn_hypot(xs, ys), E_HYPOT, 1e-15);
    CHECK_VALS(tn_xlogy(xs, tn_abs(ys)), E_XLOGY, 1e-15);
    tn_tensor *li = tn_lgamma(tn_arange(1, 4, 1, TN_I64));   /* integers promote to the default float */
    CHECK(li && tn_get_dtype(li) == TN_F32);
    CHECK_ERR(tn_polygamma(-1, xs), "tn_polygamma");
    CHECK_ERR(tn_mvlgamma(xs, 0), "p has to be greater than or equal to 1");
    tn_scope_end();
}
GF(g_lgamma, tn_lgamma(tn_t(I0)))
GF(g_digamma, tn_digamma(tn_t(I0)))
GF(g_polygamma, tn_polygamma(1, tn_t(I0)))
GF(g_erfinv, tn_erfinv(tn_mul_scalar(tn_tanh(tn_t(I0)), 0.9)))
GF(g_logaddexp, tn_logaddexp(tn_t(I0), I1))
GF(g_hypot, tn_hypot(tn_t(I0), I1))
GF(g_xlogy, tn_xlogy(tn_t(I0), tn_add_scalar(tn_exp(I1), 0.1)))
GF(g_logit, tn_logit(tn_sigmoid(tn_t(I0)), .eps = 0))
GF(g_mvlgamma, tn_mvlgamma(tn_add_scalar(tn_exp(tn_t(I0)), 2), 3))
TEST(special_grads) {
    tn_scope_begin();
    tn_tensor *pos = tn_add_scalar(tn_rand(TN_SHAPE(3, 2), TN_F64), 0.5);
    tn_requires_grad_(pos, true);
    GC(g_lgamma, 2, pos);
    GC(g_digamma, 2, pos);
    GC(g_polygamma, 1, pos);
    GC(g_erfinv, 2, LEAF(3, 2));
    GC(g_logaddexp, 2, LEAF(3, 2), LEAF(3));
    GC(g_hypot, 2, LEAF(3, 2), LEAF(1, 3));
    GC(g_xlogy, 2, LEAF(3, 2), LEAF(2, 3));
    GC(g_logit, 2, LEAF(2, 3));
    GC(g_mvlgamma, 1, LEAF(2, 2));
    tn_scope_end();
}

int main(void) {
    tn_manual_seed(20);
    RUN(diagonal_views);
    RUN(diagonal_grads);
    RUN(einsum_values);
    RUN(einsum_grads);
    RUN(products_values);
    RUN(addmv_addr_addbmm_vdot);
    RUN(products_grads);
    RUN(splits_stacks);
    RUN(distances_cov);
    RUN(distances_cov_grads);
    RUN(special_values);
    RUN(special_grads);
    return tn_test_report();
}
