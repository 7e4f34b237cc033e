/* cuda_cases_ipc.h — CUDA tensors across processes by CUDA IPC (issue 21): a child process
 * (this binary run again: a fresh process, as CUDA needs; the constructor below serves it
 * before main) maps the parent's tensor by its handle, reads it (contiguous and a strided
 * view), writes through it, and the parent sees the writes; the child's mappings are opened
 * once per segment and closed with the last tensor; a received tensor's handle is the one
 * it came by. Errors: a CPU tensor, a handle of this process (CUDA opens other processes'
 * only), a handle whose process exited, a malformed handle, a view outside the storage.
 * The child is exec'd (popen), never a bare fork: a child forked after CUDA started cannot
 * use CUDA. Included by test_cuda_ipc.c (the checking stand-in, plain and
 * unreadable) and by test_cuda.c (a real GPU). Include after tn_test.h, with
 * _POSIX_C_SOURCE 200809L (popen, setenv, readlink). */
#ifndef CUDA_CASES_IPC_H
#define CUDA_CASES_IPC_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void ipc_hex(const unsigned char *h, char *out) {
    for (int i = 0; i < TN_CUDA_IPC_HANDLE_BYTES; i++) snprintf(out + 2 * i, 3, "%02x", h[i]);
}
static int ipc_unhex(const char *s, unsigned char *h) {
    for (int i = 0; i < TN_CUDA_IPC_HANDLE_BYTES; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
        h[i] = (unsigned char)v;
    }
    return 0;
}
static int ipc_backend(const char *mode) {   /* the child's device, as the parent's */
    if (!strcmp(mode, "siu")) tn_debug_cuda_stand_in_unreadable();
    else if (!strcmp(mode, "si")) tn_debug_cuda_stand_in();
    return tn_get_backend(TN_CUDA) ? 0 : -1;
}
/* [3, 4] float32 arange(12) as the parent made it: 12 floats from storage_start */
static int ipc_child(const char *spec) {
    char mode[8], op[8], hex[2 * TN_CUDA_IPC_HANDLE_BYTES + 1];
    long long seg, start, nbytes;
    unsigned char h[TN_CUDA_IPC_HANDLE_BYTES];
    if (sscanf(spec, "%7s %7s %128s %lld %lld %lld", mode, op, hex, &seg, &start, &nbytes) != 6 || ipc_unhex(hex, h) || ipc_backend(mode)) return 2;
    if (!strcmp(op, "export")) {   /* print a handle, then exit: the handle's process is gone */
        tn_tensor *t = tn_to(tn_arange(0, 6, 1, TN_F32), TN_CUDA);
        int64_t s, st, n;
        if (!t || tn_cuda_ipc_handle(t, h, &s, &st, &n)) return 3;
        ipc_hex(h, hex);
        printf("%s %lld %lld %lld\n", hex, (long long)s, (long long)st, (long long)n);
        return 0;
    }
    int bad = 0;
    tn_scope_begin();
    tn_tensor *t = tn_from_cuda_ipc(h, seg, start, nbytes, TN_F32, TN_SHAPE(3, 4), NULL, 0);
    const int64_t strides[2] = {1, 4};
    tn_tensor *v = tn_from_cuda_ipc(h, seg, start, nbytes, TN_F32, TN_SHAPE(2, 3), strides, 1);   /* the parent's t()[1:3] */
    tn_tensor *want = tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4));
    if (!t || !v) { fprintf(stderr, "child: %s\n", tn_last_error()); tn_scope_end(); return 4; }
    bad |= tn_get_device(t) != TN_CUDA || !tn_equal(tn_to(t, TN_CPU), want);
    bad |= tn_is_contiguous(v) || !tn_equal(tn_to(v, TN_CPU), tn_narrow(tn_t(want), 0, 1, 2));
    bad |= (tn_cuda_ipc_open_count() != 1) << 1;   /* one mapping for both */
    unsigned char again[TN_CUDA_IPC_HANDLE_BYTES];
    int64_t s2, st2, n2;
    bad |= (tn_cuda_ipc_handle(v, again, &s2, &st2, &n2) || memcmp(again, h, sizeof again) || s2 != seg || st2 != start || n2 != nbytes) << 2;
    /* 0 bytes of it and a 0-d view: the same mapping */
    tn_tensor *empty = tn_from_cuda_ipc(h, seg, start, 0, TN_F32, TN_SHAPE(0), NULL, 0);
    tn_tensor *scalar = tn_from_cuda_ipc(h, seg, start + 4, 4, TN_F32, NULL, 0, NULL, 0);   /* element 1 */
    bad |= (!empty || tn_numel(empty) != 0 || tn_get_device(empty) != TN_CUDA || !scalar || tn_ndim(scalar) != 0 || tn_item(scalar) != 1.0 ||
            tn_cuda_ipc_open_count() != 1) << 4;
    tn_mul_scalar_(t, -1.0);   /* seen by the parent */
    tn_add_scalar_(v, 100.0);  /* through the strided view too: elements 1, 5, 9, 2, 6, 10 */
    tn_cuda_synchronize();
    tn_scope_end();
    bad |= (tn_cuda_ipc_open_count() != 0) << 3;   /* closed with the last tensor */
    if (bad) fprintf(stderr, "child: checks failed (%d): %s\n", bad, tn_last_error());
    return bad ? 5 : 0;
}
#if defined(__GNUC__) || defined(__clang__)
__attribute__((constructor)) static void ipc_child_entry(void) {
    const char *spec = getenv("TN_IPC_CHILD");
    if (spec && *spec) {
        fflush(stdout);
        const int rc = ipc_child(spec);
        fflush(stdout);
        _exit(rc);
    }
}
#endif

/* runs this binary as the child with spec; its exit status (-1: not run); out: its stdout's first line */
static int ipc_run_child(const char *spec, char *out, size_t cap) {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    setenv("TN_IPC_CHILD", spec, 1);
    fflush(NULL);
    FILE *p = popen(exe, "r");
    unsetenv("TN_IPC_CHILD");
    if (!p) return -1;
    if (out && cap) { out[0] = 0; if (!fgets(out, (int)cap, p)) out[0] = 0; }
    char sink[256];
    while (fgets(sink, sizeof sink, p)) {}
    const int st = pclose(p);
    return st >= 0 && (st & 0x7f) == 0 ? (st >> 8) & 0xff : -1;   /* WIFEXITED / WEXITSTATUS */
}

TEST(gpu_cuda_ipc) {
    const tn_backend *be = tn_get_backend(TN_CUDA);
    const char *mode = be && strstr(be->name, "unreadable") ? "siu" : be && strstr(be->name, "stand-in") ? "si" : "gpu";
    tn_scope_begin();
    unsigned char h[TN_CUDA_IPC_HANDLE_BYTES];
    int64_t seg = 0, start = -1, nbytes = 0;
    /* the parent's [3, 4]; the child maps it, reads it, writes it */
    tn_tensor *base = tn_to(tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4)), TN_CUDA);
    CHECK(tn_is_shared(base) && tn_share_memory_(base) == base);   /* CUDA: shareable as it is (a no-op) */
    CHECK(tn_cuda_ipc_handle(base, h, &seg, &start, &nbytes) == 0 && nbytes == 48 && start >= 0 && start + nbytes <= seg);
    CHECK(tn_equal(tn_to(base, TN_CPU), tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4))));   /* exporting moved nothing visible */
    char hex[2 * TN_CUDA_IPC_HANDLE_BYTES + 1], spec[512];
    ipc_hex(h, hex);
    snprintf(spec, sizeof spec, "%s write %s %lld %lld %lld", mode, hex, (long long)seg, (long long)start, (long long)nbytes);
    const int rc = ipc_run_child(spec, NULL, 0);
    CHECK_MSG(rc == 0, "the child's checks: exit status %d", rc);
    /* -x everywhere, then +100 at 1, 5, 9, 2, 6, 10 */
    tn_tensor *want = tn_neg(tn_reshape(tn_arange(0, 12, 1, TN_F32), TN_SHAPE(3, 4)));
    tn_add_scalar_(tn_narrow(tn_t(want), 0, 1, 2), 100.0);
    CHECK_MSG(tn_equal(tn_to(base, TN_CPU), want), "the parent sees the child's writes");
    /* in this process: refused by name, as CUDA's cudaIpcOpenMemHandle maps other processes'
       memory only (the stand-in refuses its own pid's handle alike) */
    CHECK_ERR(tn_from_cuda_ipc(h, seg, start, nbytes, TN_F32, TN_SHAPE(12), NULL, 0) != NULL, "this process's own");
    CHECK(tn_cuda_ipc_open_count() == 0);
    /* a 0-d tensor and a view of another tensor: the handles of their allocations */
    tn_tensor *z = tn_to(tn_full(NULL, 0, 2.5, TN_F64), TN_CUDA);
    CHECK(tn_cuda_ipc_handle(z, h, &seg, &start, &nbytes) == 0 && nbytes == 8);
    tn_tensor *view = tn_narrow(tn_to(tn_arange(0, 10, 1, TN_I64), TN_CUDA), 0, 3, 4);
    CHECK(tn_cuda_ipc_handle(view, h, &seg, &start, &nbytes) == 0 && nbytes == 80 && tn_storage_offset(view) == 3);
    /* errors: a CPU tensor, NULLs, a handle from a process that exited, a malformed handle, views outside the storage */
    CHECK_ERR(tn_cuda_ipc_handle(tn_zeros(TN_SHAPE(2), TN_F32), h, NULL, NULL, NULL) == 0, "is on cpu: CUDA IPC shares CUDA tensors");
    CHECK_ERR(tn_cuda_ipc_handle(NULL, h, NULL, NULL, NULL) == 0, "tensor is NULL");
    CHECK_ERR(tn_from_cuda_ipc(NULL, 64, 0, 4, TN_F32, TN_SHAPE(1), NULL, 0) != NULL, "handle is NULL");
    char line[512];
    snprintf(spec, sizeof spec, "%s export %0128d 0 0 0", mode, 0);
    CHECK(ipc_run_child(spec, line, sizeof line) == 0);
    long long s3 = 0, st3 = 0, n3 = 0;
    CHECK(sscanf(line, "%128s %lld %lld %lld", hex, &s3, &st3, &n3) == 4 && ipc_unhex(hex, h) == 0 && n3 == 24);
    CHECK_ERR(tn_from_cuda_ipc(h, s3, st3, n3, TN_F32, TN_SHAPE(6), NULL, 0) != NULL, strcmp(mode, "gpu") ? "has exited" : "cudaIpcOpenMemHandle");
    CHECK(tn_cuda_ipc_open_count() == 0);
    memset(h, 0x5a, sizeof h);
    if (strcmp(mode, "gpu")) CHECK_ERR(tn_from_cuda_ipc(h, 64, 0, 4, TN_F32, TN_SHAPE(1), NULL, 0) != NULL, "not a handle the stand-in's ipc_export made");
    CHECK_ERR(tn_from_cuda_ipc(h, 64, 60, 8, TN_F32, TN_SHAPE(2), NULL, 0) != NULL, "lie outside the 64-byte segment");
    CHECK_ERR(tn_from_cuda_ipc(h, 64, 0, 8, TN_F32, TN_SHAPE(3), NULL, 0) != NULL, "does not fit in a 8-byte storage");
    const int64_t neg[1] = {-1};
    CHECK_ERR(tn_from_cuda_ipc(h, 64, 0, 8, TN_F32, TN_SHAPE(2), neg, 1) != NULL, "negative stride");
    CHECK_ERR(tn_from_cuda_ipc(h, 64, 0, 8, TN_F32, TN_SHAPE(-2), NULL, 0) != NULL, "");
    tn_scope_end();
    CHECK(tn_cuda_ipc_open_count() == 0);
}
#endif
