/* test_cuda_ipc.c — CUDA tensors across processes by CUDA IPC without a GPU: the checking
 * stand-in exports a storage by moving it into a memfd mapping and names it by pid,
 * descriptor and inode; a child process (this binary again) opens /proc/<pid>/fd/<fd> and
 * maps the same pages, as cudaIpcOpenMemHandle maps device memory. main runs the cases of
 * cuda_cases_ipc.h on the plain stand-in and on the one with unreadable device memory; in
 * test_cuda.c they run on a real GPU (make gpu-check).
 *
 *     make build/test_cuda_ipc && ./build/test_cuda_ipc */
#define _POSIX_C_SOURCE 200809L   /* popen, setenv, readlink */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include "cuda_cases_ipc.h"

/* before any CUDA backend (a build without the GPU unit), and the tables' entries */
TEST(ipc_without_cuda_and_tables) {
    unsigned char h[TN_CUDA_IPC_HANDLE_BYTES];
    memset(h, 0, sizeof h);
    CHECK_ERR(tn_from_cuda_ipc(h, 64, 0, 4, TN_F32, TN_SHAPE(1), NULL, 0) != NULL, "CUDA IPC needs CUDA");
    CHECK(tn_cuda_ipc_open_count() == 0);
    const tn_backend *cpu = tn_get_backend(TN_CPU);
    CHECK(cpu && !cpu->ipc_export && !cpu->ipc_import && !cpu->ipc_close);
    tn_debug_cuda_stand_in();
    const tn_backend *si = tn_get_backend(TN_CUDA);
    CHECK(si && si->ipc_export && si->ipc_import && si->ipc_close);
    tn_debug_cuda_stand_in_unreadable();
    si = tn_get_backend(TN_CUDA);
    CHECK(si && si->ipc_export && si->ipc_import && si->ipc_close);
}

/* the stand-in's refusals: memory it did not allocate, an export inside a graph capture */
TEST(stand_in_ipc_refusals) {
    tn_scope_begin();
    const tn_backend *be = tn_get_backend(TN_CUDA);
    unsigned char h[TN_CUDA_IPC_HANDLE_BYTES];
    uint64_t off, size;
    tn_tensor *t = tn_to(tn_ones(TN_SHAPE(4), TN_F32), TN_CUDA);
    CHECK(be->graph_begin() == 0);
    CHECK_ERR(be->ipc_export(t->storage, h, &off, &size) == 0, "an IPC export while capturing");
    void *graph = NULL;
    CHECK_ERR(be->graph_end(&graph) == 0, "capture failed");
    /* exported twice: moved once, the same handle */
    unsigned char h2[TN_CUDA_IPC_HANDLE_BYTES];
    int64_t s1, s2, a1, a2;
    CHECK(tn_cuda_ipc_handle(t, h, &s1, &a1, NULL) == 0 && tn_cuda_ipc_handle(t, h2, &s2, &a2, NULL) == 0 && !memcmp(h, h2, sizeof h) && s1 == s2);
    CHECK(tn_equal(tn_to(t, TN_CPU), tn_ones(TN_SHAPE(4), TN_F32)));
    tn_scope_end();
}

int main(void) {
    const int64_t live0 = tn_memory_stats_get().live_tensors;
    RUN(ipc_without_cuda_and_tables);
    for (int unreadable = 0; unreadable < 2; unreadable++) {   /* the plain stand-in, then the unreadable one */
        if (unreadable) tn_debug_cuda_stand_in_unreadable();
        else tn_debug_cuda_stand_in();
        RUN(gpu_cuda_ipc);
        RUN(stand_in_ipc_refusals);
        CHECK_MSG(tn_memory_stats_get().live_tensors == live0, "%lld tensors leaked", (long long)(tn_memory_stats_get().live_tensors - live0));
    }
    return tn_test_report();
}
