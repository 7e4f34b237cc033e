/* test_shared.c — shared-memory tensors: tn_share_memory_ moves a storage (every view) into
 * shared memory without changing a value; a forked child's writes reach the parent; a
 * process that did not inherit the mapping receives the tensor over a Unix socket and
 * shares the same memory both ways (strided views, offsets, 0-d and empty tensors); bad
 * descriptors, sizes and messages are errors; no /dev/shm entry is left, also after a
 * process is killed holding shared tensors. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* entries of /dev/shm this library could have made (none should exist, ever) */
static int shm_entries(void) {
    DIR *d = opendir("/dev/shm");
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) n += !strncmp(e->d_name, "tensor_h.", 9);
    closedir(d);
    return n;
}

static bool all_equal(tn_tensor *a, tn_tensor *b) { return tn_equal(a, b); }

TEST(share_in_place) {
    tn_scope_begin();
    tn_tensor *t = tn_reshape(tn_arange(0, 24, 1, TN_F32), TN_SHAPE(4, 6));
    tn_tensor *before = tn_clone(t);
    tn_tensor *view = tn_narrow(tn_t(t), 0, 1, 3);           /* a strided view made before sharing */
    tn_tensor *view_before = tn_clone(view);
    CHECK(!tn_is_shared(t) && tn_shared_fd(t, NULL, NULL) == -1);
    int64_t bytes = tn_memory_stats_get().live_bytes;
    CHECK(tn_share_memory_(t) == t);                         /* in place: t itself, borrowed */
    CHECK(tn_is_shared(t) && tn_is_shared(view) && tn_shared_fd(t, NULL, NULL) >= 0);
    CHECK(all_equal(t, before) && all_equal(view, view_before));
    CHECK(tn_memory_stats_get().live_bytes <= bytes);        /* the private copy is gone */
    int fd = tn_shared_fd(t, NULL, NULL);
    CHECK(tn_share_memory_(t) == t && tn_shared_fd(t, NULL, NULL) == fd); /* a second call changes nothing */
    tn_fill_(view, 7);                                        /* the view still writes into t */
    CHECK(tn_item(tn_select(tn_select(t, 0, 2), 0, 1)) == 7 && tn_item(tn_select(tn_select(t, 0, 2), 0, 0)) == 12);
    tn_tensor *small = tn_scalar_tensor(3.5, TN_F64), *empty = tn_zeros(TN_SHAPE(0, 3), TN_I64);
    CHECK(tn_share_memory_(small) && tn_item(small) == 3.5 && tn_is_shared(small));
    CHECK(tn_share_memory_(empty) && tn_numel(empty) == 0 && tn_is_shared(empty));
    CHECK_ERR(tn_share_memory_(NULL), "NULL");
    tn_scope_end();
    CHECK(shm_entries() == 0);
}

TEST(fork_sees_writes) {
    tn_scope_begin();
    tn_tensor *shared = tn_share_memory_(tn_zeros(TN_SHAPE(1000), TN_F64));
    tn_tensor *private_ = tn_zeros(TN_SHAPE(1000), TN_F64);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tn_fill_(shared, 2.5);
        tn_fill_(private_, 2.5);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(tn_item(tn_sum(shared)) == 2500.0);                 /* the child's writes are the parent's */
    CHECK(tn_item(tn_sum(private_)) == 0.0);                  /* a private tensor stays private */
    tn_scope_end();
}

/* The child is forked before the tensor exists, so only the socket can give it the memory. */
TEST(send_to_another_process) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        tn_scope_begin();
        tn_tensor *got = tn_shared_recv(sv[1]);               /* a [3, 2] strided view, offset 1 */
        int bad = !got || tn_shape(got)[0] != 3 || tn_shape(got)[1] != 2 || !tn_is_shared(got);
        double want[6] = {1, 5, 2, 6, 3, 7};                  /* base [2, 4] = 0..7: view = base.t()[1:4] */
        for (int i = 0; !bad && i < 6; i++) bad |= tn_item(tn_select(tn_select(got, 0, i / 2), 0, i % 2)) != want[i];
        if (got) tn_mul_scalar_(got, 10);                     /* seen by the parent */
        tn_tensor *mine = tn_full(TN_SHAPE(4), 9, TN_I32);    /* and one back the other way */
        bad |= tn_shared_send(sv[1], mine) != 0;
        tn_scope_end();
        _exit(bad);
    }
    close(sv[1]);
    tn_scope_begin();
    tn_tensor *base = tn_reshape(tn_arange(0, 8, 1, TN_F32), TN_SHAPE(2, 4));
    tn_tensor *view = tn_narrow(tn_t(base), 0, 1, 3);
    CHECK(tn_shared_send(sv[0], view) == 0 && tn_is_shared(base));   /* sending shares it */
    tn_tensor *back = tn_shared_recv(sv[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    float want[8] = {0, 10, 20, 30, 4, 50, 60, 70};
    for (int i = 0; i < 8; i++) CHECK(((float *)tn_data_ptr(base))[i] == want[i]);
    CHECK(back && tn_get_dtype(back) == TN_I32 && tn_item(tn_sum(back)) == 36);   /* outlives its sender */
    tn_scope_end();
    close(sv[0]);
    CHECK(shm_entries() == 0);
}

TEST(errors) {
    tn_scope_begin();
    tn_tensor *t = tn_share_memory_(tn_zeros(TN_SHAPE(4), TN_F32));
    int64_t start = -1, nbytes = -1;
    int fd = tn_shared_fd(t, &start, &nbytes);
    CHECK(start == 0 && nbytes == 16);
    CHECK(tn_from_shared_fd(fd, 0, 16, TN_F32, TN_SHAPE(4), NULL, 0) != NULL);
    CHECK_ERR(tn_from_shared_fd(fd, 0, 32, TN_F32, TN_SHAPE(8), NULL, 0), "outside the");
    CHECK_ERR(tn_from_shared_fd(fd, 8, 16, TN_F32, TN_SHAPE(4), NULL, 0), "outside the");
    CHECK_ERR(tn_from_shared_fd(fd, -1, 4, TN_F32, TN_SHAPE(1), NULL, 0), "outside the");
    CHECK_ERR(tn_from_shared_fd(fd, 0, 16, TN_F32, TN_SHAPE(5), NULL, 0), "does not fit");
    CHECK_ERR(tn_from_shared_fd(fd, 0, 16, TN_F32, TN_SHAPE(2), NULL, 3), "does not fit");
    int64_t big[1] = {INT64_MAX / 2};
    CHECK_ERR(tn_from_shared_fd(fd, 0, 16, TN_F32, TN_SHAPE(2), big, 0), "does not fit");
    int64_t neg[1] = {-1};
    CHECK_ERR(tn_from_shared_fd(fd, 0, 16, TN_F32, TN_SHAPE(2), neg, 1), "negative stride");
    CHECK_ERR(tn_from_shared_fd(-1, 0, 4, TN_F32, TN_SHAPE(1), NULL, 0), "not an open file descriptor");
    CHECK_ERR(tn_from_shared_fd(fd, 0, 4, (tn_dtype)99, TN_SHAPE(1), NULL, 0), "dtype");
    CHECK(tn_shared_send(-1, t) == -1 && strstr(tn_last_error(), "sendmsg on socket -1 failed"));
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(write(sv[0], "not a tensor", 12) == 12);            /* bytes without a descriptor */
    CHECK_ERR(tn_shared_recv(sv[1]), "did not deliver a tensor");
    close(sv[0]);
    CHECK_ERR(tn_shared_recv(sv[1]), "end of stream");
    close(sv[1]);
    tn_scope_end();
}

TEST(killed_process_leaves_nothing) {
    int before = shm_entries();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 20; i++) tn_share_memory_(tn_ones(TN_SHAPE(1 << 16), TN_F32));
        raise(SIGKILL);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(shm_entries() == before && before == 0);
}

int main(void) {
    RUN(share_in_place);
    RUN(fork_sees_writes);
    RUN(send_to_another_process);
    RUN(errors);
    RUN(killed_process_leaves_nothing);
    return tn_test_report();
}
