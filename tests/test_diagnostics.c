/* test_diagnostics.c — what a C user sees when something goes wrong: TN_LOG_ERRORS=1 prints
 * every error as it happens, TN_LEAK_CHECK=1 lists the tensors alive at exit with the
 * backtrace of their creation, and tn_last_error() keeps the last error until the next one
 * or tn_clear_error() (a success does not clear it). The environment cases run this program
 * again as a child with the variable set and read its stderr. */
#define _POSIX_C_SOURCE 200809L
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdio.h>

static const char *self;

/* the child's work: one leak, one error */
static int child(void) {
    tn_tensor *kept = tn_ones(TN_SHAPE(3, 4), TN_F32);   /* never released */
    tn_tensor *x = tn_zeros(TN_SHAPE(2), TN_F64);
    tn_release(x);
    if (tn_matmul(kept, kept)) return 1;                  /* an error: [3,4] @ [3,4] */
    return 0;
}

/* stderr of this program run as a child with env set, in buf */
static void run_child(const char *env, char *buf, size_t cap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s child 2>&1 >/dev/null", env, self);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(buf, 1, cap - 1, p) : 0;
    buf[n] = 0;
    if (p) pclose(p);
}

TEST(log_errors) {
    char out[8192];
    run_child("TN_LOG_ERRORS=1", out, sizeof out);
    CHECK_MSG(strstr(out, "tensor.h error: tn_matmul: shapes [3, 4] and [3, 4] cannot be multiplied (4 != 3)") != NULL, "stderr: %s", out);
    run_child("TN_LOG_ERRORS=0", out, sizeof out);
    CHECK_MSG(strstr(out, "tensor.h error") == NULL, "logged without TN_LOG_ERRORS=1: %s", out);
}

TEST(leak_check) {
    char out[16384];
    run_child("TN_LEAK_CHECK=1", out, sizeof out);
#if defined(__GLIBC__)   /* the library keeps creation backtraces where glibc has backtrace() */
    CHECK_MSG(strstr(out, "TN_LEAK_CHECK: 1 tensor still alive at exit") != NULL, "stderr: %s", out);
    CHECK_MSG(strstr(out, "float32 [3, 4], refcount 1, made at:") != NULL, "stderr: %s", out);
    CHECK_MSG(strstr(out, "made at:\n") && strstr(strstr(out, "made at:\n"), "[0x"), "the backtrace of its creation follows: %s", out);
    CHECK_MSG(strstr(out, "float64") == NULL, "a released tensor is not reported: %s", out);
#else
    CHECK(1);   /* no backtrace() on this platform: the variable does nothing */
#endif
    run_child("", out, sizeof out);
    CHECK_MSG(strstr(out, "TN_LEAK_CHECK") == NULL, "reported without TN_LEAK_CHECK=1: %s", out);
}

TEST(last_error_is_sticky) {
    tn_clear_error();
    CHECK(strcmp(tn_last_error(), "") == 0);
    tn_scope_begin();
    tn_tensor *a = tn_ones(TN_SHAPE(2, 3), TN_F32);
    CHECK(tn_matmul(a, a) == NULL);
    char first[1024];
    snprintf(first, sizeof first, "%s", tn_last_error());
    CHECK(strstr(first, "tn_matmul:") != NULL);
    CHECK(tn_add(a, a) != NULL);                       /* a success leaves the message */
    CHECK(strcmp(tn_last_error(), first) == 0);
    tn_clear_error();
    CHECK(strcmp(tn_last_error(), "") == 0);
    tn_scope_end();
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "child")) return child();
    self = argv[0];
    RUN(log_errors);
    RUN(leak_check);
    RUN(last_error_is_sticky);
    return tn_test_report();
}
