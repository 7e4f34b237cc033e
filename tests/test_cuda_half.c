/* test_cuda_half.c — white-box checks of the half-precision wrapper over a GPU's backend
 * table (backend/cpu_half.c): which entries see half operands, the matmul decline path
 * (the unit's 1 for a layout cuBLAS cannot take), tables registered later. The values
 * against the CPU are in cuda_cases_half.h (run by test_devices and test_cuda). */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

static const tn_backend *inner;   /* the stand-in's table */
static int half_matmuls, half_unaries, declines;
static int spy_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double al, double be) {
    if (c->dtype == TN_F16 || c->dtype == TN_BF16) {
        half_matmuls++;
        if (declines) return 1;   /* as the unit for K = 0: the header stages in float32 */
    }
    return inner->matmul(c, a, b, al, be);
}
static int spy_unary(tn_unary_op op, tn_tensor *o, tn_tensor *x, const double *p) {
    if (o->dtype == TN_F16 || o->dtype == TN_BF16 || x->dtype == TN_F16 || x->dtype == TN_BF16) half_unaries++;
    return inner->unary(op, o, x, p);
}

TEST(entries_that_see_half) {
    tn_scope_begin();
    tn_debug_cuda_stand_in();
    inner = tn_get_backend(TN_CUDA);
    CHECK(inner && strstr(inner->name, "stand-in"));   /* the registered table itself, not the wrapper */
    static tn_backend spy;
    spy = *inner;
    spy.name = "cuda (stand-in, spied)";
    spy.matmul = spy_matmul;
    spy.unary = spy_unary;
    tn_register_backend(TN_CUDA, &spy);
    CHECK(tn_get_backend(TN_CUDA) == &spy);
    const tn_dtype ds[2] = {TN_F16, TN_BF16};
    for (int k = 0; k < 2; k++) {
        tn_tensor *a = tn_to_dtype(tn_randn(TN_SHAPE(2, 5, 7), TN_F32), ds[k]), *b = tn_to_dtype(tn_randn(TN_SHAPE(7, 3), TN_F32), ds[k]);
        tn_tensor *ref = tn_matmul(a, b);
        tn_tensor *ga = tn_to(a, TN_CUDA), *gb = tn_to(b, TN_CUDA);
        for (declines = 0; declines < 2; declines++) {
            half_matmuls = 0;
            tn_tensor *g = tn_matmul(ga, gb);
            CHECK(g && g->dtype == ds[k] && g->device == TN_CUDA);
            CHECK(half_matmuls == 1);   /* one call with the half operands; declined: then staged (float32) */
            CHECK(g && tn_equal(tn_to(g, TN_CPU), ref));   /* the CPU's half matmul's values either way */
        }
        declines = 0;
        half_unaries = 0;
        tn_tensor *e = tn_exp(ga), *ce = tn_exp(a);
        CHECK(half_unaries == 0);   /* staged: the table's unary saw float32 only */
        CHECK(e && e->dtype == ds[k] && tn_equal(tn_to(e, TN_CPU), ce));
        tn_tensor *m = tn_to(tn_randn(TN_SHAPE(3, 4), TN_F32), TN_CUDA);
        half_matmuls = 0;
        tn_tensor *tr = tn_matmul(   /* a transposed operand: still the table's half GEMM */
            tn_to_dtype(m, ds[k]), tn_to_dtype(tn_transpose(m, 0, 1), ds[k]));
        CHECK(tr && half_matmuls == 1);
    }
    tn_debug_cuda_stand_in();   /* back to the stand-in for the tensors freed below */
    tn_scope_end();
}

int main(void) {
    RUN(entries_that_see_half);
    return tn_test_report();
}
