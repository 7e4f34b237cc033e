/* tn_test.h — the tiny test harness of tensor.h's C tests.
 *
 *   TEST(name) { CHECK(cond); CHECK_CLOSE(a, b, tol); CHECK_ERR(expr, "substring"); }
 *   int main(void) { RUN(name); ...; return tn_test_report(); }
 *   TN_TEST_FILTER=name1,name2 ./build/test_x    runs only the tests whose names contain one
 *
 * Each failed check prints file:line and what failed; tn_test_report() prints
 * "N passed, N failed" as the last line and returns nonzero on failure. */
#ifndef TN_TEST_H
#define TN_TEST_H
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdarg.h>

static int tn_test_passed, tn_test_failed;
static const char *tn_test_current = "";

#define TN_TEST_FAIL_(...) do { tn_test_failed++; printf("FAIL %s (%s:%d): ", tn_test_current, __FILE__, __LINE__); \
    printf(__VA_ARGS__); printf("\n"); } while (0)

#define CHECK(cond) do { if (cond) tn_test_passed++; else TN_TEST_FAIL_("%s", #cond); } while (0)
/* fail_at(line, fmt, ...): a failed check reported at the caller's line, for helper
   functions that check on a test's behalf (they take __LINE__ from it). */
#define fail_at(line, ...) tn_test_fail_at_(__FILE__, (line), __VA_ARGS__)
static inline void tn_test_fail_at_(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    tn_test_failed++;
    printf("FAIL %s (%s:%d): ", tn_test_current, file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* TN_TEST_LSAN: built with AddressSanitizer, whose leak checker a forked test can run. */
#if defined(__SANITIZE_ADDRESS__)
#define TN_TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TN_TEST_LSAN 1
#endif
#endif
#ifdef TN_TEST_LSAN
int __lsan_do_recoverable_leak_check(void);
#endif
#define CHECK_MSG(cond, ...) do { if (cond) tn_test_passed++; else TN_TEST_FAIL_(__VA_ARGS__); } while (0)
/* |a - b| <= tol (NaN equals NaN) */
#define CHECK_CLOSE(a, b, tol) do { double a_ = (double)(a), b_ = (double)(b); \
    if ((a_ != a_ && b_ != b_) || fabs(a_ - b_) <= (tol) || a_ == b_) tn_test_passed++; \
    else TN_TEST_FAIL_("%s = %.17g, expected %s = %.17g (tol %g)", #a, a_, #b, b_, (double)(tol)); } while (0)
/* expr must be false (a NULL result; write `f(...) == 0` for int-returning functions)
   and tn_last_error() must contain substr */
#define CHECK_ERR(expr, substr) do { tn_clear_error(); int ok_ = !(expr); \
    if (ok_ && strstr(tn_last_error(), substr)) tn_test_passed++; \
    else TN_TEST_FAIL_("%s should fail with \"%s\", got %s \"%s\"", #expr, substr, ok_ ? "error" : "success,", tn_last_error()); } while (0)

#define TEST(name) static void name(void)
/* TN_TEST_FILTER=a,b in the environment: only the tests whose names contain a or b run (so
   one case can be rerun, e.g. under compute-sanitizer); tn_test_selected(env, name) is the
   same match for finer filters (cuda_cases.h's TN_CASE_FILTER). */
#include <stdlib.h>
static inline int tn_test_selected(const char *env, const char *name) {
    const char *f = getenv(env);
    if (!f || !*f) return 1;
    while (*f) {
        size_t n = strcspn(f, ",");
        for (const char *p = name; n && *p; p++)
            if (!strncmp(p, f, n)) return 1;
        f += n;
        if (*f) f++;
    }
    return 0;
}
#define RUN(name) do { if (tn_test_selected("TN_TEST_FILTER", #name)) { tn_test_current = #name; name(); } } while (0)

/* RUN_ISOLATED(name, seconds): name runs in a forked child, so a crash, a sanitizer abort
   or a hang past `seconds` (SIGALRM) is one failed check instead of the end of the suite;
   the child's check counts come back through a pipe. Without fork it is RUN. */
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#include <sys/wait.h>
static inline void tn_test_run_isolated(const char *name, void (*fn)(void), unsigned seconds) {
    int fd[2];
    if (pipe(fd) != 0) { fn(); return; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        tn_test_passed = tn_test_failed = 0;
        tn_test_current = name;
        alarm(seconds);
        fn();
        fflush(stdout);
        int counts[2] = {tn_test_passed, tn_test_failed};
        if (write(fd[1], counts, sizeof counts) != (ssize_t)sizeof counts) _exit(3);
        _exit(0);
    }
    close(fd[1]);
    int counts[2] = {0, 0}, st = 0;
    ssize_t got = read(fd[0], counts, sizeof counts);
    close(fd[0]);
    waitpid(pid, &st, 0);
    const char *saved = tn_test_current;
    tn_test_current = name;
    if (got == (ssize_t)sizeof counts) { tn_test_passed += counts[0]; tn_test_failed += counts[1]; }
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == (ssize_t)sizeof counts,
              "crashed: child %s %d (a crash, a hang or a sanitizer report; see stderr)", WIFSIGNALED(st) ? "killed by signal" : "exit status",
              WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    tn_test_current = saved;
}
#define RUN_ISOLATED(name, seconds) do { if (tn_test_selected("TN_TEST_FILTER", #name)) tn_test_run_isolated(#name, name, seconds); } while (0)
#else
#define RUN_ISOLATED(name, seconds) RUN(name)
#endif

static int tn_test_report(void) {
    printf("%d passed, %d failed\n", tn_test_passed, tn_test_failed);
    return tn_test_failed != 0;
}
#endif
