/* test_nosync.c — no host synchronisation inside a training step (issue 23, item 3), on
 * the checking stand-in: a steady-state step of an MLP, a CNN and a small transformer
 * copies nothing between host and device and never waits on the device; bad indices and
 * targets are still reported, at the next synchronisation, naming the op. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"

#include "nosync_cases.h"

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : "";   /* a test filter: a substring of the test names */
    tn_debug_cuda_stand_in();
    NOSYNC_RUN_ALL(only);
    CHECK(tn_memory_stats_get().live_tensors == 0);
    return tn_test_report();
}
