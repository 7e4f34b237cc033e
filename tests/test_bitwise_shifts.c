/* torch.bitwise_left_shift / bitwise_right_shift (tn_bitwise_left_shift, tn_bitwise_right_shift):
   every integer dtype against a reference computed here, counts in and past the width and
   negative (2025 PyTorch: << gives 0, >> gives the sign, for unsigned 0), negative values
   shifted right arithmetically, broadcasting, a non-contiguous operand, promotion, 0-size,
   and the refusals (floating and bool operands). Values against torch itself:
   bindings/python/tests/test_bitwise_shifts.py and OpInfo's entries. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <string.h>

static tn_tensor *ints(tn_dtype dt, const int64_t *v, int64_t n) { return tn_to_dtype(tn_from_data(v, &n, 1, TN_I64), dt); }
/* the reference: a and s as int64 values of a dtype of `bits` bits (signed or not) */
static int64_t ref_shl(int64_t a, int64_t s, int bits, bool sgn) {
    if (s < 0 || s >= bits) return 0;
    uint64_t u = (uint64_t)a << s, mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    u &= mask;
    if (sgn && bits < 64 && (u >> (bits - 1))) return (int64_t)(u | ~mask);
    return (int64_t)u;
}
static int64_t ref_shr(int64_t a, int64_t s, int bits, bool sgn) {
    const int w = bits - (sgn ? 1 : 0);
    if (s < 0 || s >= w) s = w;
    if (s >= 64) return 0;
    return a < 0 ? -1 - ((-1 - a) >> s) : a >> s;   /* arithmetic, written without >> of negatives */
}

TEST(values_every_dtype) {
    static const struct { tn_dtype dt; int bits; bool sgn; } ds[] = {{TN_U8, 8, false}, {TN_I8, 8, true}, {TN_I16, 16, true}, {TN_I32, 32, true}, {TN_I64, 64, true}};
    static const int64_t av[] = {0, 1, -1, 5, -5, 100, -128, 127, 77, -77, 12345, -12345, 3000000000LL, INT64_MIN, INT64_MAX};
    static const int64_t sv[] = {0, 1, 2, 3, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 62, 63, 64, 65, 100, -1, -3};
    const int64_t na = sizeof av / sizeof av[0], ns = sizeof sv / sizeof sv[0];
    for (size_t d = 0; d < sizeof ds / sizeof ds[0]; d++) {
        tn_scope_begin();
        /* every value against every count: a [na, 1] and s [1, ns] broadcast to [na, ns] */
        tn_tensor *a = tn_reshape(ints(ds[d].dt, av, na), TN_SHAPE(na, 1));
        int64_t svd[32];
        int64_t nsd = 0;
        for (int64_t j = 0; j < ns; j++)
            if (!(ds[d].dt == TN_U8 && sv[j] < 0)) svd[nsd++] = sv[j];   /* uint8 has no negative counts */
        tn_tensor *s = tn_reshape(ints(ds[d].dt, svd, nsd), TN_SHAPE(1, nsd));
        tn_tensor *l = tn_contiguous(tn_bitwise_left_shift(a, s)), *r = tn_contiguous(tn_bitwise_right_shift(a, s));
        tn_tensor *ai = tn_contiguous(tn_to_dtype(a, TN_I64)), *si = tn_contiguous(tn_to_dtype(s, TN_I64));
        tn_tensor *li = l ? tn_contiguous(tn_to_dtype(l, TN_I64)) : NULL, *ri = r ? tn_contiguous(tn_to_dtype(r, TN_I64)) : NULL;
        CHECK_MSG(l && r && l->dtype == ds[d].dt && r->dtype == ds[d].dt, "dtype %s: %s", tn_dtype_name(ds[d].dt), tn_last_error());
        if (li && ri) {
            const int64_t *A = (const int64_t *)tn_data_ptr(ai), *S = (const int64_t *)tn_data_ptr(si);
            const int64_t *L = (const int64_t *)tn_data_ptr(li), *R = (const int64_t *)tn_data_ptr(ri);
            int bad = 0;
            for (int64_t i = 0; i < na; i++)
                for (int64_t j = 0; j < nsd; j++) {
                    const int64_t wl = ref_shl(A[i], S[j], ds[d].bits, ds[d].sgn), wr = ref_shr(A[i], S[j], ds[d].bits, ds[d].sgn);
                    if (L[i * nsd + j] != wl || R[i * nsd + j] != wr) {
                        if (bad++ < 3) CHECK_MSG(0, "%s: %lld << %lld = %lld (want %lld), >> = %lld (want %lld)", tn_dtype_name(ds[d].dt), (long long)A[i],
                                                 (long long)S[j], (long long)L[i * nsd + j], (long long)wl, (long long)R[i * nsd + j], (long long)wr);
                    }
                }
            CHECK_MSG(bad == 0, "%s: %d wrong values", tn_dtype_name(ds[d].dt), bad);
        }
        tn_scope_end();
    }
}

TEST(layout_promotion_and_errors) {
    tn_scope_begin();
    /* a non-contiguous left operand (a transposed view), a 0-d count */
    tn_tensor *a = tn_transpose(tn_reshape(tn_arange(-6, 6, 1, TN_I64), TN_SHAPE(3, 4)), 0, 1);
    tn_tensor *two = tn_full(NULL, 0, 2, TN_I64), *y = tn_bitwise_left_shift(a, two), *z = tn_bitwise_right_shift(a, two);
    CHECK(y && z && tn_allclose(y, tn_mul_scalar(a, 4), .rtol = 0, .atol = 0) && tn_allclose(z, tn_floor_divide(a, tn_full(NULL, 0, 4, TN_I64)), .rtol = 0, .atol = 0));
    /* promotion: int8 << int64 is int64; 0-size stays 0-size */
    tn_tensor *p = tn_bitwise_left_shift(ints(TN_I8, (const int64_t[]){100}, 1), ints(TN_I64, (const int64_t[]){4}, 1));
    CHECK(p && p->dtype == TN_I64 && tn_item(p) == 1600);
    tn_tensor *e = tn_bitwise_right_shift(tn_zeros(TN_SHAPE(0, 3), TN_I32), tn_ones(TN_SHAPE(3), TN_I32));
    CHECK(e && e->ndim == 2 && e->shape[0] == 0 && e->shape[1] == 3);
    /* refusals: floating operands, bool (PyTorch: "lshift_cpu" not implemented for 'Bool') */
    CHECK_ERR(tn_bitwise_left_shift(tn_ones(TN_SHAPE(2), TN_F32), tn_ones(TN_SHAPE(2), TN_I64)), "not implemented");
    CHECK_ERR(tn_bitwise_right_shift(tn_ones(TN_SHAPE(2), TN_I64), tn_ones(TN_SHAPE(2), TN_F64)), "not implemented");
    CHECK_ERR(tn_bitwise_left_shift(tn_ones(TN_SHAPE(2), TN_BOOL), tn_ones(TN_SHAPE(2), TN_BOOL)), "Bool");
    CHECK_ERR(tn_bitwise_left_shift(tn_ones(TN_SHAPE(2), TN_I64), tn_ones(TN_SHAPE(3), TN_I64)), "must match the size");
    tn_scope_end();
}

int main(void) {
    RUN(values_every_dtype);
    RUN(layout_promotion_and_errors);
    return tn_test_report();
}
