/* ---- shared memory: storages other processes can map (torch.multiprocessing) ----
   A shared storage lives in an unnamed file: on Linux a memfd (memfd_create: it never has a
   name, so a process killed at any instruction, a DataLoader worker stopped mid-batch
   included, leaves nothing behind); elsewhere, or where memfds are refused, a file created
   in /dev/shm (else $TMPDIR or /tmp) with O_EXCL and unlinked at once, so no name outlives
   the next few instructions. The kernel frees the memory when the last descriptor and
   mapping go, whichever process dies last or how. The data is written into the file with write() before it is mapped, so a
   full /dev/shm is an error here rather than a SIGBUS on first touch. The storage keeps
   the descriptor: across fork a child inherits the mapping, and tn_shared_send passes the
   descriptor over a Unix socket (SCM_RIGHTS) to any process, which maps the same pages. */
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_SHM 1
#include <sys/socket.h>
#include <sys/uio.h>
#include <errno.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#if defined(SYS_memfd_create) && !defined(__cplusplus)
long syscall(long number, ...);         /* hidden by -std=c11 without _DEFAULT_SOURCE (C++ has _GNU_SOURCE) */
#endif
#endif

typedef struct tn__shm {
    int fd;
    void *map;
    size_t size;                        /* of the mapping (>= 1) */
} tn__shm;

#if TN__HAVE_SHM
static void tn__shm_deleter(void *data, void *ctx) {
    (void)data;
    tn__shm *m = (tn__shm *)ctx;
    munmap(m->map, m->size);
    close(m->fd);
    TN_FREE(m);
}

/* An unlinked file holding data's nbytes (one zero byte for 0), mapped shared; NULL on error. */
static tn__shm *tn__shm_create(const char *fn, const void *data, size_t nbytes) {
    static int64_t counter;
    const char *dirs[3] = {"/dev/shm", getenv("TMPDIR"), "/tmp"};
    int fd = -1;
#if defined(__linux__) && defined(SYS_memfd_create)
    fd = (int)syscall(SYS_memfd_create, "tensor_h", 1u /* MFD_CLOEXEC */);   /* < 0 (an old kernel, a sandbox): a file */
#endif
    for (int d = 0; d < 3 && fd < 0; d++) {
        if (!dirs[d] || !*dirs[d]) continue;
        for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
            size_t cap = strlen(dirs[d]) + 64;
            char *path = (char *)TN_MALLOC(cap);
            if (!path) return (tn__shm *)tn__error("%s: out of memory", fn);
            snprintf(path, cap, "%s/tensor_h.%ld.%lld", dirs[d], (long)getpid(), (long long)TN__ATOMIC_ADD(&counter, 1));
            fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
            if (fd >= 0) unlink(path);  /* nameless from here on: nothing to leak */
            TN_FREE(path);
            if (fd < 0 && errno != EEXIST) break;
        }
    }
    if (fd < 0) return (tn__shm *)tn__error("%s: cannot create a shared-memory file in /dev/shm, $TMPDIR or /tmp: %s", fn, strerror(errno));
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    static const char zero = 0;
    const char *src = nbytes ? (const char *)data : &zero;
    size_t size = nbytes ? nbytes : 1;
    for (size_t done = 0; done < size;) {      /* write(), not a sparse file: ENOSPC now, not SIGBUS later */
        size_t n = size - done < (1u << 30) ? size - done : (1u << 30);
        ssize_t w = write(fd, src + done, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            return (tn__shm *)tn__error("%s: cannot write %zu bytes of shared memory (%s; /dev/shm may be too small)", fn, size,
                                        w < 0 ? strerror(e) : "no space");
        }
        done += (size_t)w;
    }
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    tn__shm *m = map == MAP_FAILED ? NULL : (tn__shm *)TN_MALLOC(sizeof *m);
    if (!m) {
        if (map != MAP_FAILED) munmap(map, size);
        close(fd);
        return (tn__shm *)tn__error("%s: cannot map %zu bytes of shared memory", fn, size);
    }
    m->fd = fd;
    m->map = map;
    m->size = size;
    return m;
}
#endif

TNDEF bool tn_is_shared(const tn_tensor *t) {
    if (t && t->device == TN_CUDA) return true;   /* as PyTorch: CUDA memory is shareable as it is (CUDA IPC) */
#if TN__HAVE_SHM
    return t && t->storage->deleter == tn__shm_deleter;
#else
    return false;
#endif
}

TNDEF tn_tensor *tn_share_memory_(tn_tensor *t) {
    if (!t) return (tn_tensor *)tn__error("tn_share_memory_: tensor is NULL");
    if (t->device != TN_CPU || tn_is_shared(t)) return t;      /* as PyTorch: a no-op for CUDA and for shared storages */
#if TN__HAVE_SHM
    tn_storage *s = t->storage;
    tn__shm *m = tn__shm_create("tn_share_memory_", s->data, s->nbytes);
    if (!m) return NULL;
    /* every view of the storage moves with it: the storage's data changes, not the tensors */
    void *old = s->data;
    void (*old_deleter)(void *, void *) = s->deleter;
    void *old_ctx = s->deleter_ctx;
    s->data = m->map;
    s->deleter = tn__shm_deleter;
    s->deleter_ctx = m;
    if (old_deleter) old_deleter(old, old_ctx);
    else if (old) {
        if (!s->inline_data) tn__backend(TN_CPU)->free(old, s->nbytes);
        tn__track_bytes(-(int64_t)s->nbytes);
    }
    return t;
#else
    return (tn_tensor *)tn__error("tn_share_memory_: shared memory needs a POSIX system");
#endif
}

TNDEF int tn_shared_fd(const tn_tensor *t, int64_t *storage_start, int64_t *storage_nbytes) {
#if TN__HAVE_SHM
    if (t && t->device == TN_CPU && tn_is_shared(t)) {
        tn__shm *m = (tn__shm *)t->storage->deleter_ctx;
        if (storage_start) *storage_start = (int64_t)((char *)t->storage->data - (char *)m->map);
        if (storage_nbytes) *storage_nbytes = (int64_t)t->storage->nbytes;
        return m->fd;
    }
#else
    (void)storage_start; (void)storage_nbytes;
#endif
    return TN__FAIL_INT("tn_shared_fd: the tensor is not in shared memory (tn_share_memory_ moves it there)");
}

/* What a receiver needs besides the descriptor: the view, and where its storage's data
   starts in the file (a storage received from elsewhere may start inside it). */
typedef struct tn__shm_header {
    char magic[8];                      /* "tnshm01" */
    int64_t dtype, ndim, offset, storage_start, storage_nbytes;
    int64_t shape[TN_MAX_DIMS], strides[TN_MAX_DIMS];
} tn__shm_header;
/* A received view's strides (contiguous ones, written to contiguous, where strides is NULL)
   when it fits in a storage of storage_nbytes; NULL with the error otherwise. */
static const int64_t *tn__shared_view_ok(const char *fn, tn_dtype dtype, const int64_t *shape, int ndim, const int64_t *strides, int64_t offset,
                                         int64_t storage_nbytes, int64_t *contiguous) {
    int64_t last, bytes;
    if (!strides) {
        tn__contiguous_strides(shape, ndim, contiguous);
        strides = contiguous;
    }
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0) return (const int64_t *)tn__error("%s: negative stride %lld", fn, (long long)strides[i]);
    if (offset < 0 || !tn__span_ok(shape, strides, ndim, offset, &last) || !tn__mul_ok(last + 1, (int64_t)tn_dtype_size(dtype), &bytes) ||
        bytes > storage_nbytes)
        return (const int64_t *)tn__error("%s: a view of shape %s, strides %s and offset %lld does not fit in a %lld-byte storage", fn,
                                          tn__shape_str(shape, ndim), tn__shape_str(strides, ndim), (long long)offset, (long long)storage_nbytes);
    return strides;
}

TNDEF tn_tensor *tn_from_shared_fd(int fd, int64_t storage_start, int64_t storage_nbytes, tn_dtype dtype,
                                   const int64_t *shape, int ndim, const int64_t *strides, int64_t offset) {
    const char *fn = "tn_from_shared_fd";
    if (tn__check_shape(fn, shape, ndim) || tn__check_dtype_arg(fn, dtype)) return NULL;
#if TN__HAVE_SHM
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return (tn_tensor *)tn__error("%s: %d is not an open file descriptor", fn, fd);
    int64_t end;
    if (storage_start < 0 || storage_nbytes < 0 || !tn__add_ok(storage_start, storage_nbytes, &end) || end > (int64_t)st.st_size)
        return (tn_tensor *)tn__error("%s: storage bytes [%lld, %lld + %lld) lie outside the %lld-byte shared file", fn,
                                      (long long)storage_start, (long long)storage_start, (long long)storage_nbytes, (long long)st.st_size);
    int64_t contiguous[TN_MAX_DIMS];
    if (!(strides = tn__shared_view_ok(fn, dtype, shape, ndim, strides, offset, storage_nbytes, contiguous))) return NULL;
    tn__shm *m = (tn__shm *)TN_MALLOC(sizeof *m);
    int own = m ? fcntl(fd, F_DUPFD, 0) : -1;
    void *map = own < 0 ? MAP_FAILED : mmap(NULL, (size_t)(st.st_size ? st.st_size : 1), PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
    if (map == MAP_FAILED) {
        if (own >= 0) close(own);
        TN_FREE(m);
        return (tn_tensor *)tn__error("%s: cannot map the shared file (%s)", fn, strerror(errno));
    }
    fcntl(own, F_SETFD, FD_CLOEXEC);
    m->fd = own;
    m->map = map;
    m->size = (size_t)(st.st_size ? st.st_size : 1);
    tn_storage *s = tn__foreign_storage((char *)map + storage_start, (size_t)storage_nbytes, tn__shm_deleter, m);
    if (!s) { tn__shm_deleter(NULL, m); return (tn_tensor *)tn__error("%s: out of memory", fn); }
    return tn__own(tn__tensor_over(s, dtype, shape, strides, ndim, offset));
#else
    (void)fd; (void)storage_start; (void)storage_nbytes; (void)strides; (void)offset;
    return (tn_tensor *)tn__error("%s: shared memory needs a POSIX system", fn);
#endif
}

TNDEF int tn_shared_send(int sock, tn_tensor *t) {
    const char *fn = "tn_shared_send";
    if (!t) return TN__FAIL_INT("%s: tensor is NULL", fn);
    if (t->device != TN_CPU) return TN__FAIL_INT("%s: only CPU tensors can be sent (a CUDA tensor goes by tn_cuda_ipc_handle)", fn);
#if TN__HAVE_SHM
    tn__shm_header h;
    memset(&h, 0, sizeof h);
    const int fd = tn_share_memory_(t) ? tn_shared_fd(t, &h.storage_start, &h.storage_nbytes) : -1;
    if (fd < 0) return -1;
    memcpy(h.magic, "tnshm01", 8);
    h.dtype = t->dtype;
    h.ndim = t->ndim;
    h.offset = t->offset;
    for (int i = 0; i < t->ndim; i++) { h.shape[i] = t->shape[i]; h.strides[i] = t->strides[i]; }
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec io = {&h, sizeof h};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    ssize_t n;
    do n = sendmsg(sock, &msg, 0); while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof h) return TN__FAIL_INT("%s: sendmsg on socket %d failed (%s)", fn, sock, n < 0 ? strerror(errno) : "short write");
    return 0;
#else
    (void)sock;
    return TN__FAIL_INT("%s: shared memory needs a POSIX system", fn);
#endif
}

TNDEF tn_tensor *tn_shared_recv(int sock) {
    const char *fn = "tn_shared_recv";
#if TN__HAVE_SHM
    tn__shm_header h;
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec io = {&h, sizeof h};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof ctl.buf;
    ssize_t n;
    do n = recvmsg(sock, &msg, 0); while (n < 0 && errno == EINTR);
    int fd = -1;
    struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
    if (n != (ssize_t)sizeof h || fd < 0 || memcmp(h.magic, "tnshm01", 8) || h.ndim < 0 || h.ndim > TN_MAX_DIMS ||
        h.dtype < 0 || h.dtype >= TN_NUM_DTYPES || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        if (fd >= 0) close(fd);
        return (tn_tensor *)tn__error("%s: socket %d did not deliver a tensor from tn_shared_send (%s)", fn, sock,
                                      n < 0 ? strerror(errno) : n == 0 ? "end of stream" : "malformed message");
    }
    tn_tensor *t = tn_from_shared_fd(fd, h.storage_start, h.storage_nbytes, (tn_dtype)h.dtype, h.shape, (int)h.ndim, h.strides, h.offset);
    close(fd);                          /* the tensor holds its own duplicate */
    return t;
#else
    (void)sock;
    return (tn_tensor *)tn__error("%s: shared memory needs a POSIX system", fn);
#endif
}

/* ---- CUDA IPC: device memory other processes map (torch.multiprocessing's CUDA tensors) ----
   The backend's ipc_export names the allocation (segment) holding a storage, its ipc_import
   maps one another process named. Here a process keeps what it mapped, one entry per handle
   (PyTorch opens a segment once per process and caches it), counting the storages over it;
   the last one to die closes the mapping. A received tensor sent on again goes by the
   handle it came by. */
typedef struct tn__ipc_seg {
    unsigned char h[TN_CUDA_IPC_HANDLE_BYTES];
    uint64_t size;
    void *base;
    int64_t refs;                       /* storages over it */
    const tn_backend *b;                /* the table that mapped it closes it */
    struct tn__ipc_seg *next;
} tn__ipc_seg;
static tn__ipc_seg *tn__ipc_segs;
static int64_t tn__ipc_nsegs;
static int tn__ipc_lock_word;
static void tn__ipc_lock(void) {
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_exchange_n(&tn__ipc_lock_word, 1, __ATOMIC_ACQUIRE)) {}
#endif
}
static void tn__ipc_unlock(void) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(&tn__ipc_lock_word, 0, __ATOMIC_RELEASE);
#endif
}
static void tn__ipc_deleter(void *data, void *ctx) {
    (void)data;
    tn__ipc_seg *g = (tn__ipc_seg *)ctx;
    tn__ipc_lock();
    const bool last = --g->refs == 0;
    if (last) {   /* unlinked under the lock: nobody finds it again */
        tn__ipc_seg **p = &tn__ipc_segs;
        while (*p && *p != g) p = &(*p)->next;
        if (*p) *p = g->next;
        tn__ipc_nsegs--;
    }
    tn__ipc_unlock();
    if (!last) return;
    g->b->ipc_close(g->base, g->size);
    TN_FREE(g);
}

TNDEF int64_t tn_cuda_ipc_open_count(void) { return TN__ATOMIC_LOAD(&tn__ipc_nsegs); }

/* the CUDA table when it has CUDA IPC, else NULL with an error naming why not */
static const tn_backend *tn__ipc_backend(const char *fn) {
    const tn_backend *b = tn_get_backend(TN_CUDA);
    if (!b) return (const tn_backend *)tn__error("%s: CUDA IPC needs CUDA: %s", fn, tn_cuda_unavailable_reason());
    if (!b->ipc_export || !b->ipc_import || !b->ipc_close)
        return (const tn_backend *)tn__error("%s: the CUDA backend (%s) has no CUDA IPC", fn, b->name);
    return b;
}

TNDEF int tn_cuda_ipc_handle(tn_tensor *t, void *handle, int64_t *segment_size, int64_t *storage_start, int64_t *storage_nbytes) {
    const char *fn = "tn_cuda_ipc_handle";
    if (!t || !handle) return TN__FAIL_INT("%s: %s is NULL", fn, t ? "handle" : "tensor");
    if (t->device != TN_CUDA)
        return TN__FAIL_INT("%s: the tensor is on %s: CUDA IPC shares CUDA tensors (a CPU tensor goes by shared memory: tn_share_memory_, tn_shared_send)", fn,
                            tn_device_name(t->device));
    tn_storage *s = t->storage;
    uint64_t off = 0, size = 0;
    if (s->deleter == tn__ipc_deleter) {   /* received: the handle it came by */
        const tn__ipc_seg *g = (const tn__ipc_seg *)s->deleter_ctx;
        memcpy(handle, g->h, TN_CUDA_IPC_HANDLE_BYTES);
        off = (uint64_t)((char *)s->data - (char *)g->base);
        size = g->size;
    } else {
        const tn_backend *b = tn__ipc_backend(fn);
        if (!b) return -1;
        memset(handle, 0, TN_CUDA_IPC_HANDLE_BYTES);
        if (b->ipc_export(s, (unsigned char *)handle, &off, &size)) return -1;
    }
    if (segment_size) *segment_size = (int64_t)size;
    if (storage_start) *storage_start = (int64_t)off;
    if (storage_nbytes) *storage_nbytes = (int64_t)s->nbytes;
    return 0;
}

TNDEF tn_tensor *tn_from_cuda_ipc(const void *handle, int64_t segment_size, int64_t storage_start, int64_t storage_nbytes, tn_dtype dtype,
                                  const int64_t *shape, int ndim, const int64_t *strides, int64_t offset) {
    const char *fn = "tn_from_cuda_ipc";
    if (!handle) return (tn_tensor *)tn__error("%s: handle is NULL", fn);
    if (tn__check_shape(fn, shape, ndim) || tn__check_dtype_arg(fn, dtype)) return NULL;
    int64_t end;
    if (segment_size < 1 || storage_start < 0 || storage_nbytes < 0 || !tn__add_ok(storage_start, storage_nbytes, &end) || end > segment_size)
        return (tn_tensor *)tn__error("%s: storage bytes [%lld, %lld + %lld) lie outside the %lld-byte segment", fn, (long long)storage_start,
                                      (long long)storage_start, (long long)storage_nbytes, (long long)segment_size);
    int64_t contiguous[TN_MAX_DIMS];
    if (!(strides = tn__shared_view_ok(fn, dtype, shape, ndim, strides, offset, storage_nbytes, contiguous))) return NULL;
    const tn_backend *b = tn__ipc_backend(fn);
    if (!b) return NULL;
    tn__ipc_lock();   /* held while mapping: one mapping per handle, however many threads receive it */
    tn__ipc_seg *g = tn__ipc_segs;
    while (g && (g->size != (uint64_t)segment_size || memcmp(g->h, handle, TN_CUDA_IPC_HANDLE_BYTES))) g = g->next;
    if (!g) {
        void *base = NULL;
        g = (tn__ipc_seg *)TN_MALLOC(sizeof *g);
        if (!g || b->ipc_import((const unsigned char *)handle, (uint64_t)segment_size, &base)) {
            tn__ipc_unlock();
            if (!g) return (tn_tensor *)tn__error("%s: out of memory", fn);
            TN_FREE(g);
            return NULL;
        }
        memcpy(g->h, handle, TN_CUDA_IPC_HANDLE_BYTES);
        g->size = (uint64_t)segment_size;
        g->base = base;
        g->refs = 0;
        g->b = b;
        g->next = tn__ipc_segs;
        tn__ipc_segs = g;
        tn__ipc_nsegs++;
    }
    g->refs++;
    tn__ipc_unlock();
    tn_storage *s = tn__foreign_storage((char *)g->base + storage_start, (size_t)storage_nbytes, tn__ipc_deleter, g);
    if (!s) { tn__ipc_deleter(NULL, g); return (tn_tensor *)tn__error("%s: out of memory", fn); }
    s->device = TN_CUDA;
    return tn__own(tn__tensor_over(s, dtype, shape, strides, ndim, offset));
}
