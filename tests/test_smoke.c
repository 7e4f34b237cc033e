#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

TEST(smoke_add_matmul) {
    tn_scope_begin();
    tn_tensor *a = tn_reshape(tn_arange(0, 6, 1, TN_F32), TN_SHAPE(2, 3));
    tn_tensor *c = tn_matmul(a, tn_t(a));
    CHECK_CLOSE(tn_item(tn_select(tn_select(c, 0, 1), 0, 1)), 50, 0);
    CHECK_CLOSE(tn_item(tn_sum(tn_add(a, tn_ones(TN_SHAPE(3), TN_F32)))), 21, 0);
    tn_scope_end();
    CHECK(tn_memory_stats_get().live_tensors == 0);
}

int main(void) {
    RUN(smoke_add_matmul);
    return tn_test_report();
}
