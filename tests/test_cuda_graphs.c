/* test_cuda_graphs.c — graph replays on "cuda" without a GPU: the checking stand-in, whose
 * graph entries record each backend call of a capture (nothing runs) and replay them at a
 * launch, as a CUDA graph does; an allocation, a transfer, a synchronisation or an entry
 * that cannot be captured inside a capture fails it. main runs everything twice: on the
 * plain stand-in and on the one whose device memory is unreadable from the host outside
 * backend calls. The cases of cuda_cases_graphs.h and cuda_cases_fused.h (the fused
 * elementwise chains) run here and, in test_cuda.c, on a real GPU. */
#define _POSIX_C_SOURCE 200809L   /* setenv */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include "cuda_cases_graphs.h"
#include "cuda_cases_fused.h"

/* The capture protocol of tn_backend.graph_* on the stand-in itself. */
TEST(stand_in_capture_protocol) {
    tn_scope_begin();
    const tn_backend *be = tn_get_backend(TN_CUDA);
    CHECK(be && be->graph_begin && be->graph_end && be->graph_launch && be->graph_free);
    tn_tensor *a = tn_to(tn_randn(TN_SHAPE(4, 5), TN_F32), TN_CUDA), *b = tn_to(tn_randn(TN_SHAPE(4, 5), TN_F32), TN_CUDA);
    tn_tensor *out = tn_to(tn_zeros(TN_SHAPE(4, 5), TN_F32), TN_CUDA);
    tn_tensor *want = tn_add(tn_to(a, TN_CPU), tn_to(b, TN_CPU));
    /* a capture records: nothing runs until the launch, and each launch runs on the memory as it is then */
    void *graph = NULL;
    CHECK(be->graph_begin() == 0);
    CHECK_ERR(be->graph_begin() == 0, "capturing already");
    CHECK_ERR(be->graph_launch(&graph) == 0, "while capturing");
    CHECK(be->binary(ADD, out, a, b, 1.0) == 0);
    CHECK(be->unary(RELU, out, out, NULL) == 0);
    CHECK(be->graph_end(&graph) == 0 && graph);
    CHECK_MSG(cg_maxdiff(out, tn_zeros(TN_SHAPE(4, 5), TN_F32)) == 0, "the capture ran its calls");
    CHECK(be->graph_launch(graph) == 0);
    CHECK(cg_maxdiff(out, tn_relu(want)) == 0);
    CHECK(be->fill(a, -7.0) == 0);   /* new values in the captured memory */
    CHECK(be->graph_launch(graph) == 0);
    CHECK(cg_maxdiff(out, tn_relu(tn_add_scalar(tn_to(b, TN_CPU), -7.0))) == 0);
    be->graph_free(graph);
    /* an allocation inside: it fails, and so does the capture (as tensor_cuda.cu's allocator) */
    CHECK(be->graph_begin() == 0);
    CHECK_ERR(tn_add(a, b) != NULL, "out of memory");
    CHECK_ERR(be->graph_end(&graph) == 0, "an allocation of device memory");
    CHECK(graph == NULL);
    /* a transfer, a synchronisation, an entry that cannot be captured: the call fails, so does the capture */
    CHECK(be->graph_begin() == 0);
    CHECK_ERR(be->copy(tn_zeros(TN_SHAPE(4, 5), TN_F32), a) == 0, "a copy between host and device while capturing");
    CHECK_ERR(be->graph_end(&graph) == 0, "capture failed");
    CHECK(be->graph_begin() == 0);
    CHECK_ERR(tn_cuda_synchronize() == 0, "a synchronisation");
    CHECK_ERR(be->graph_end(&graph) == 0, "capture failed");
    CHECK(be->graph_begin() == 0);
    CHECK_ERR(be->random(UNIFORM, out, 1, 0, 0, 1, 0, 0) == 0, "a random draw");
    CHECK_ERR(be->graph_end(&graph) == 0, "capture failed");
    CHECK_ERR(be->graph_end(&graph) == 0, "without graph_begin");
    tn_scope_end();
}

int main(void) {
    const int64_t live0 = tn_memory_stats_get().live_tensors;
    for (int unreadable = 0; unreadable < 2; unreadable++) {   /* the plain stand-in, then the unreadable one (no tensor lives across) */
        if (unreadable) tn_debug_cuda_stand_in_unreadable();
        else tn_debug_cuda_stand_in();   /* TN_STAND_IN_UNREADABLE=1: the unreadable one both times */
        RUN(stand_in_capture_protocol);
        RUN(gpu_graph_replay);
        RUN(gpu_graph_capture_fallback);
        RUN(gpu_eager_graph_training);
        RUN(gpu_eager_graph_adam_refused);
        RUN(gpu_eager_graph_cnn);
        RUN(gpu_eager_graph_pool_sharing);
        RUN(gpu_eager_graph_errors);
        RUN(gpu_eager_graph_uncapturable);
        RUN(gpu_eager_graph_random);
        RUN(gpu_eager_graph_lm);
        RUN(gpu_eager_graph_check_slots);
        RUN(gpu_eager_graph_pool_argmax);
        RUN(gpu_fused_elementwise_replay);
        RUN(gpu_fused_elementwise_entry);
        /* the same with captures switched off: the device plan alone */
        setenv("TN_CUDA_GRAPHS", "0", 1);
        RUN(gpu_graph_replay);
        RUN(gpu_graph_capture_fallback);
        RUN(gpu_fused_elementwise_replay);
        unsetenv("TN_CUDA_GRAPHS");
        CHECK_MSG(tn_memory_stats_get().live_tensors == live0, "%lld tensors leaked", (long long)(tn_memory_stats_get().live_tensors - live0));
    }
    return tn_test_report();
}
