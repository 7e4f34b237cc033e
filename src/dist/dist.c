/* ---- distributed: process groups and collectives (torch.distributed) over MPI or NCCL ----
   Two backends. "mpi" (and "gloo", served by it) is compiled in with TENSOR_MPI (make
   DIST=mpi: mpicc's flags); without it those calls are errors that say so, and the header
   needs no MPI. "nccl" runs the collectives of CUDA tensors on the device through the
   backend table's nccl entry (tensor_cuda.cu built with NCCL; the checking stand-in on host
   memory), with or without MPI: the ncclUniqueId goes from rank 0 to every rank over MPI
   when built with TENSOR_MPI, else over a TCP connection to MASTER_ADDR:MASTER_PORT as
   torchrun sets them (the 128-byte id only: data never goes through it; one process
   connects nowhere, but env:// rendezvous wants every variable even then, as PyTorch's).
   Each collective is started without blocking and completed by polling with a deadline
   (the group's timeout, 30 minutes by default as PyTorch's), so a rank that died or never
   calls makes the others fail with an error instead of hanging; after a timeout the group
   is broken and says so (nccl's communicator is aborted). MPI gets contiguous CPU buffers
   (a strided or GPU tensor is staged through one and copied back); NCCL contiguous device
   buffers (a strided tensor is staged through a contiguous device copy). Ranks given to a
   collective are global ranks, as in PyTorch. */
#ifdef TENSOR_MPI
#include <mpi.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_POLL 1
#include <poll.h>
#endif
#if (defined(__unix__) || defined(__APPLE__)) && !defined(TENSOR_MPI)
#define TN__HAVE_TCP 1                  /* nccl's bootstrap without MPI */
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <fcntl.h>
#endif

struct tn_dist_group {
#ifdef TENSOR_MPI
    MPI_Comm comm;                      /* MPI_COMM_NULL on a rank outside the group */
    MPI_Group group;
#endif
    int rank, size;                     /* in the group (-1 outside it) */
    bool broken;                        /* a collective timed out: the communicator is unusable */
    void *nccl;                         /* the nccl backend's communicator (NULL outside the group, or mpi's) */
    int *ranks;                         /* the members' global ranks, in group order (NULL: the world) */
};

struct tn_dist_work {
#ifdef TENSOR_MPI
    MPI_Request req;
#endif
    void *event;                        /* nccl: the device event after the collective */
    tn_dist_group *g;
    const char *fn;
    tn_tensor *t, *stage;               /* the user's tensor (retained) and the buffer the backend writes, if another */
    bool average, completed, nccl;
    int source;                         /* recv: the sender's global rank */
};

static bool tn__dist_ready;
static bool tn__dist_nccl;              /* the default group (and so every group) is nccl's */
static double tn__dist_timeout = 1800;
#ifdef TENSOR_MPI
static tn_dist_group tn__dist_world = {MPI_COMM_NULL, MPI_GROUP_NULL, -1, 0, false, NULL, NULL};
static bool tn__dist_finalized;
#else
static tn_dist_group tn__dist_world = {-1, 0, false, NULL, NULL};
#endif

/* .timeout, else $TN_DIST_TIMEOUT, else PyTorch's 30 minutes; NAN (None) fails the > 0 test */
static void tn__dist_set_timeout(double timeout_s) {
    const char *env = getenv("TN_DIST_TIMEOUT");
    tn__dist_timeout = timeout_s > 0 ? timeout_s : env && atof(env) > 0 ? atof(env) : 1800;
}

/* the registered CUDA table when it has the nccl entry (the unit's raw table: no half wrapper) */
static const tn_backend *tn__nccl_backend(void) {
    const tn_backend *b = tn_get_backend(TN_CUDA);
    return b && b->nccl ? b : NULL;
}

TNDEF bool tn_dist_is_backend_available(const char *backend) {
    if (!backend) return false;
    if (!strcmp(backend, "nccl")) return tn__nccl_backend() != NULL;
#ifdef TENSOR_MPI
    return !strcmp(backend, "mpi") || !strcmp(backend, "gloo");
#else
    return false;
#endif
}
TNDEF bool tn_dist_is_available(void) { return tn_dist_is_backend_available("mpi") || tn_dist_is_backend_available("nccl"); }
TNDEF bool tn_dist_is_initialized(void) { return tn__dist_ready; }

static tn_dist_group *tn__dist_group(const char *fn, tn_dist_group *g) {
    if (!tn__dist_ready) return (tn_dist_group *)tn__error("%s: the default process group is not initialized (call tn_dist_init first)", fn);
    if (!g) g = &tn__dist_world;
    if (g->broken) return (tn_dist_group *)tn__error("%s: the process group is broken: an earlier collective timed out", fn);
    if (g->rank < 0) return (tn_dist_group *)tn__error("%s: this rank (%d) is not a member of the group", fn, tn__dist_world.rank);
    return g;
}

TNDEF int tn_dist_get_rank(const tn_dist_group *g) {
    if (!tn__dist_ready) return TN__FAIL_INT("tn_dist_get_rank: the default process group is not initialized");
    return g ? g->rank : tn__dist_world.rank;
}
TNDEF int tn_dist_get_world_size(const tn_dist_group *g) {
    if (!tn__dist_ready) return TN__FAIL_INT("tn_dist_get_world_size: the default process group is not initialized");
    return g ? g->size : tn__dist_world.size;
}

/* a global rank as the group's rank, or -1 with an error */
static int tn__dist_local(const char *fn, tn_dist_group *g, int global) {
    if (global < 0 || global >= tn__dist_world.size) return TN__FAIL_INT("%s: rank %d is not in the world of %d", fn, global, tn__dist_world.size);
    if (g == &tn__dist_world) return global;
    for (int i = 0; i < g->size; i++)
        if (g->ranks[i] == global) return i;
    return TN__FAIL_INT("%s: global rank %d is not a member of the group", fn, global);
}

static tn_dist_work *tn__dist_work(const char *fn, tn_dist_group *g, tn_tensor *t, tn_tensor *stage) {
    tn_dist_work *w = (tn_dist_work *)TN_MALLOC(sizeof *w);
    if (!w) { tn_release(stage); return (tn_dist_work *)tn__error("%s: out of memory", fn); }
    memset(w, 0, sizeof *w);
#ifdef TENSOR_MPI
    w->req = MPI_REQUEST_NULL;
#endif
    w->g = g;
    w->fn = fn;
    w->t = tn_retain(t);
    w->stage = stage;
    w->source = -1;
    return w;
}

static void tn__nccl_release(tn_dist_work *w);
static void tn__dist_work_free(tn_dist_work *w) {
#ifdef TENSOR_MPI
    if (w->req != MPI_REQUEST_NULL) MPI_Request_free(&w->req);
#endif
    tn__nccl_release(w);
    tn_release(w->stage);
    tn_release(w->t);
    TN_FREE(w);
}

/* A reduction op for t's dtype: AVG needs floating or complex values, MIN/MAX an order
   (complex has none: PyTorch refuses them too). 0, or -1 with the error. */
static int tn__dist_op_ok(const char *fn, tn_tensor *t, tn_dist_op op) {
    if (!t) return 0;
    if (op == TN_DIST_AVG && !tn_dtype_is_floating(t->dtype) && !tn_is_complex(t))
        return TN__FAIL_INT("%s: ReduceOp.AVG needs a floating-point tensor, got %s", fn, tn_dtype_name(t->dtype));
    if ((op == TN_DIST_MIN || op == TN_DIST_MAX) && tn_is_complex(t))
        return TN__FAIL_INT("%s: does not support %s on complex tensors", fn, op == TN_DIST_MIN ? "MIN" : "MAX");
    return 0;
}

/* n same-shape tensors like t (each checked) stacked into one contiguous CPU tensor, or
   unstacked back into them: the buffers of the list collectives. */
static int tn__dist_check_list(const char *fn, tn_tensor *const *ts, int n, tn_tensor *like) {
    if (!ts) return TN__FAIL_INT("%s: the tensor list is NULL", fn);
    for (int i = 0; i < n; i++) {
        if (!ts[i]) return TN__FAIL_INT("%s: tensor %d of the list is NULL", fn, i);
        if (ts[i]->dtype != like->dtype || ts[i]->ndim != like->ndim || memcmp(ts[i]->shape, like->shape, (size_t)like->ndim * sizeof(int64_t)))
            return TN__FAIL_INT("%s: tensor %d of the list is %s %s; every tensor must be %s %s like the input", fn, i,
                                tn_dtype_name(ts[i]->dtype), TN__SHAPE(ts[i]), tn_dtype_name(like->dtype), TN__SHAPE(like));
    }
    return 0;
}

#ifdef TENSOR_MPI
static int tn__mpi_fail(const char *fn, int rc) {
    char msg[MPI_MAX_ERROR_STRING];     /* MPI's own bound on its messages */
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    return TN__FAIL_INT("%s: MPI error: %s", fn, len ? msg : "unknown");
}

/* MPI started (once per process) and the world's communicator; the default group of both
   backends under TENSOR_MPI (nccl's bootstrap runs over it) */
static int tn__mpi_init(const char *fn, double timeout_s) {
    if (tn__dist_finalized) return TN__FAIL_INT("%s: MPI cannot be initialized again in a process that finalized it", fn);
    int inited = 0, rc;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided;
        if ((rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided)) != MPI_SUCCESS) return tn__mpi_fail(fn, rc);
    }
    /* MPI_COMM_WORLD's copy: errors come back as codes, and user traffic on WORLD cannot mix with ours */
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &tn__dist_world.comm)) != MPI_SUCCESS) return tn__mpi_fail(fn, rc);
    MPI_Comm_set_errhandler(tn__dist_world.comm, MPI_ERRORS_RETURN);
    MPI_Comm_group(tn__dist_world.comm, &tn__dist_world.group);
    MPI_Comm_rank(tn__dist_world.comm, &tn__dist_world.rank);
    MPI_Comm_size(tn__dist_world.comm, &tn__dist_world.size);
    tn__dist_world.broken = false;
    /* torchrun's variables, when set, must agree with what mpirun says */
    const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
    if ((r && atoi(r) != tn__dist_world.rank) || (w && atoi(w) != tn__dist_world.size)) {
        MPI_Comm_free(&tn__dist_world.comm);
        MPI_Group_free(&tn__dist_world.group);
        return TN__FAIL_INT("%s: RANK=%s / WORLD_SIZE=%s disagree with MPI's rank %d of %d (launch with mpirun, which sets both)", fn,
                            r ? r : "(unset)", w ? w : "(unset)", tn__dist_world.rank, tn__dist_world.size);
    }
    tn__dist_set_timeout(timeout_s);
    return 0;
}

static void tn__mpi_destroy(void) {
    if (!tn__dist_world.broken) MPI_Comm_free(&tn__dist_world.comm);
    MPI_Group_free(&tn__dist_world.group);
    tn__dist_finalized = true;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

static MPI_Datatype tn__mpi_type(tn_dtype d) {
    switch (d) {
        case TN_F32: return MPI_FLOAT;
        case TN_F64: return MPI_DOUBLE;
        case TN_I32: return MPI_INT32_T;
        case TN_I64: return MPI_INT64_T;
        case TN_U8: return MPI_UINT8_T;
        case TN_I8: return MPI_INT8_T;
        case TN_I16: return MPI_INT16_T;
        case TN_BOOL: return MPI_C_BOOL;
        case TN_C64: return MPI_C_FLOAT_COMPLEX;
        case TN_C128: return MPI_C_DOUBLE_COMPLEX;
        default: return MPI_DATATYPE_NULL;
    }
}

/* MPI's op for ours; bools reduce logically (sum and max: or; product and min: and) */
static MPI_Op tn__mpi_op(tn_dist_op op, tn_dtype d) {
    const bool b = d == TN_BOOL;
    switch (op) {
        case TN_DIST_SUM: case TN_DIST_AVG: return b ? MPI_LOR : MPI_SUM;
        case TN_DIST_PRODUCT: return b ? MPI_LAND : MPI_PROD;
        case TN_DIST_MIN: return b ? MPI_LAND : MPI_MIN;
        case TN_DIST_MAX: return b ? MPI_LOR : MPI_MAX;
        default: return MPI_OP_NULL;
    }
}

/* The element count of t as MPI's int, its MPI type, and the buffer MPI reads and writes:
   t's own memory when it is a contiguous CPU tensor, else a contiguous CPU copy (*stage,
   a new reference the caller copies back and releases). */
static void *tn__dist_buffer(const char *fn, tn_tensor *t, int *count, MPI_Datatype *type, tn_tensor **stage) {
    *stage = NULL;
    if (!t) return tn__error("%s: tensor is NULL", fn);
    *type = tn__mpi_type(t->dtype);
    if (*type == MPI_DATATYPE_NULL) return tn__error("%s: dtype %s cannot be communicated (MPI has no type for it)", fn, tn_dtype_name(t->dtype));
    const int64_t n = tn_numel(t);
    if (n > INT_MAX) return tn__error("%s: %lld elements exceed MPI's int count (%d): split the tensor", fn, (long long)n, INT_MAX);
    *count = (int)n;
    if (t->device == TN_CPU && tn_is_contiguous(t)) return tn_data_ptr(t);
    tn_scope_begin();
    tn_tensor *c = tn_contiguous(tn_to(t, TN_CPU));
    if (c) tn_retain(c);
    tn_scope_end();
    *stage = c;
    return c ? tn_data_ptr(c) : NULL;
}

/* Completes req by polling until the group's deadline (a rank that never comes is an
   error, not a hang); status may be NULL. */
static int tn__dist_complete(const char *fn, tn_dist_group *g, MPI_Request *req, MPI_Status *status) {
    const double deadline = MPI_Wtime() + tn__dist_timeout;
    for (long spin = 0;; spin++) {
        int done = 0, rc = MPI_Test(req, &done, status ? status : MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return tn__mpi_fail(fn, rc);
        if (done) return 0;
        if (MPI_Wtime() > deadline) {
            g->broken = true;
            return TN__FAIL_INT("%s: timed out after %.0f s on rank %d of %d: another rank failed, exited or did not make the same call "
                                "(the process group is unusable now)", fn, tn__dist_timeout, tn__dist_world.rank, tn__dist_world.size);
        }
        if (spin > 256) poll(NULL, 0, spin > 4096 ? 1 : 0);   /* yield the core to the other ranks */
    }
}



/* t /= n in place (ReduceOp.AVG: the sum divided, as PyTorch does) */
static int tn__dist_divide(tn_tensor *t, int n) {
    tn_scope_begin();
    int rc = tn_div_(t, tn_scalar_tensor((double)n, t->dtype)) ? 0 : -1;
    tn_scope_end();
    return rc;
}

/* After MPI finished: averages, copy back from the staging buffer. */
static int tn__dist_finish(tn_dist_work *w) {
    int rc = 0;
    tn_tensor *buf = w->stage ? w->stage : w->t;
    if (w->average) {
        tn_no_grad_begin();
        rc = tn__dist_divide(buf, w->g->size);
        tn_no_grad_end();
    }
    if (!rc && w->stage) {
        tn_no_grad_begin();
        rc = tn_copy_(w->t, w->stage);
        tn_no_grad_end();
    }
    w->completed = true;
    return rc;
}

static int tn__mpi_wait(tn_dist_work *w) {
    MPI_Status st;
    int rc = w->completed ? 0 : tn__dist_complete(w->fn, w->g, &w->req, &st);
    if (!rc && !w->completed) {
        if (strcmp(w->fn, "tn_dist_recv") == 0) MPI_Group_translate_ranks(w->g->group, 1, &st.MPI_SOURCE, tn__dist_world.group, &w->source);
        rc = tn__dist_finish(w);
    }
    const int source = w->source;
    if (rc && w->g->broken) w->req = MPI_REQUEST_NULL;         /* a timed-out request is abandoned with its group */
    tn__dist_work_free(w);
    return rc ? rc : source >= 0 ? source : 0;
}

static int tn__mpi_test(tn_dist_work *w) {
    int done = 0, rc = MPI_Test(&w->req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return tn__mpi_fail(w->fn, rc);
    if (!done) return 0;
    return tn__dist_finish(w) ? -1 : 1;
}

/* The in-place single-tensor collectives over MPI, as async work (local: the peer's group rank). */
static tn_dist_work *tn__mpi_start(const char *fn, int kind, tn_tensor *t, tn_dist_op op, int local, int tag, tn_dist_group *g) {
    int count, rc;
    MPI_Datatype type;
    tn_tensor *stage;
    if (kind == 3 && local == -1) local = MPI_ANY_SOURCE;
    void *buf = tn__dist_buffer(fn, t, &count, &type, &stage);
    if (!buf) return NULL;
    tn_dist_work *w = tn__dist_work(fn, g, t, stage);
    if (!w) return NULL;
    w->average = kind == 0 && op == TN_DIST_AVG;
    switch (kind) {
        case 0: rc = MPI_Iallreduce(MPI_IN_PLACE, buf, count, type, tn__mpi_op(op, t->dtype), g->comm, &w->req); break;
        case 1: rc = MPI_Ibcast(buf, count, type, local, g->comm, &w->req); break;
        case 2: rc = MPI_Isend(buf, count, type, local, tag, g->comm, &w->req); break;
        default: rc = MPI_Irecv(buf, count, type, local, tag, g->comm, &w->req); break;
    }
    if (rc != MPI_SUCCESS) { w->req = MPI_REQUEST_NULL; tn__dist_work_free(w); tn__mpi_fail(fn, rc); return NULL; }
    return w;
}

static int tn__mpi_reduce(const char *fn, tn_tensor *t, int root, tn_dist_op op, tn_dist_group *g) {
    int count;
    MPI_Datatype type;
    tn_tensor *stage;
    void *buf = tn__dist_buffer(fn, t, &count, &type, &stage);
    if (!buf) return -1;
    tn_dist_work *w = tn__dist_work(fn, g, t, stage);
    if (!w) return -1;
    w->average = op == TN_DIST_AVG && g->rank == root;
    int rc = MPI_Ireduce(g->rank == root ? MPI_IN_PLACE : buf, buf, count, type, tn__mpi_op(op, t->dtype), root, g->comm, &w->req);
    if (rc != MPI_SUCCESS) { w->req = MPI_REQUEST_NULL; tn__dist_work_free(w); return tn__mpi_fail(fn, rc); }
    return tn_dist_wait(w) < 0 ? -1 : 0;
}

/* Runs one list collective over MPI: sendbuf/recvbuf over contiguous CPU copies, then copies back. */
static int tn__mpi_list(const char *fn, int kind, tn_tensor *t, tn_tensor *const *list, int root, tn_dist_op op, tn_dist_group *g) {
    const bool has_list = kind == 0 || kind == 3 || g->rank == root;
    int count, rc = 0;
    MPI_Datatype type;
    tn_tensor *stage;
    void *one = tn__dist_buffer(fn, t, &count, &type, &stage);
    if (!one) return -1;
    tn_scope_begin();
    tn_tensor *all = NULL;
    if (has_list) {
        all = g->size ? tn_stack(list, g->size) : NULL;
        all = all ? tn_contiguous(tn_to(all, TN_CPU)) : NULL;
        if (!all) rc = -1;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    void *many = all ? tn_data_ptr(all) : NULL;
    if (!rc) {
        switch (kind) {
            case 0: rc = MPI_Iallgather(one, count, type, many, count, type, g->comm, &req); break;
            case 1: rc = MPI_Igather(one, count, type, many, count, type, root, g->comm, &req); break;
            case 2: rc = MPI_Iscatter(many, count, type, one, count, type, root, g->comm, &req); break;
            default: rc = MPI_Ireduce_scatter_block(many, one, count, type, tn__mpi_op(op, t->dtype), g->comm, &req); break;
        }
        rc = rc != MPI_SUCCESS ? tn__mpi_fail(fn, rc) : tn__dist_complete(fn, g, &req, NULL);
    }
    tn_no_grad_begin();
    if (!rc && (kind == 0 || (kind == 1 && g->rank == root)))   /* the gathered rows into the list */
        for (int i = 0; i < g->size && !rc; i++) rc = tn_copy_(list[i], tn_select(all, 0, i));
    if (!rc && kind == 3 && op == TN_DIST_AVG) rc = tn__dist_divide(stage ? stage : t, g->size);
    if (!rc && (kind == 2 || kind == 3) && stage) rc = tn_copy_(t, stage);
    tn_no_grad_end();
    tn_scope_end();
    tn_release(stage);
    return rc ? -1 : 0;
}

static int tn__mpi_barrier(const char *fn, tn_dist_group *g) {
    MPI_Request req;
    int rc = MPI_Ibarrier(g->comm, &req);
    return rc != MPI_SUCCESS ? tn__mpi_fail(fn, rc) : tn__dist_complete(fn, g, &req, NULL);
}
#endif /* TENSOR_MPI */

/* ---- the nccl backend: the backend table's nccl entry on device buffers ---- */
static void tn__dist_nap(long spin) {   /* yields the core to the other ranks while polling */
#ifdef TN__HAVE_POLL
    if (spin > 256) poll(NULL, 0, spin > 4096 ? 1 : 0);
#else
    (void)spin;
#endif
}

/* one call of the entry; its error under fn's name */
static int tn__nccl_run(const char *fn, tn_nccl_op op, tn_nccl_args *a) {
    const tn_backend *b = tn__nccl_backend();
    if (!b) return TN__FAIL_INT("%s: the CUDA backend has no nccl entry any more (another table was registered after tn_dist_init)", fn);
    const int r = b->nccl(op, a);
    return r < 0 ? TN__FAIL_INT("%s: %s", fn, tn_last_error()) : r;
}

static void tn__nccl_release(tn_dist_work *w) {
    const tn_backend *b = tn__nccl_backend();
    if (w->event && b) {
        tn_nccl_args a;
        memset(&a, 0, sizeof a);
        a.event = w->event;
        b->nccl(TN_NCCL_RELEASE, &a);
    }
    w->event = NULL;
}

/* the group's communicator given up without waiting (a peer died or never came): the group is broken */
static void tn__nccl_abort(tn_dist_group *g) {
    const tn_backend *b = tn__nccl_backend();
    if (g->nccl && b) {
        tn_nccl_args a;
        memset(&a, 0, sizeof a);
        a.comm = g->nccl;
        b->nccl(TN_NCCL_ABORT, &a);
    }
    g->nccl = NULL;
    g->broken = true;
}

/* ReduceOp as NCCL takes it: bools as uint8 (or: max, and: min), as PyTorch's ProcessGroupNCCL */
static tn_dist_op tn__nccl_op(tn_dist_op op, tn_dtype d) {
    if (d != TN_BOOL) return op;
    return op == TN_DIST_SUM || op == TN_DIST_MAX ? TN_DIST_MAX : TN_DIST_MIN;
}

/* The contiguous device buffer NCCL reads and writes: t, or a contiguous device copy
   (*stage: a new reference the caller copies back and releases). No host staging. */
static tn_tensor *tn__nccl_buffer(const char *fn, tn_tensor *t, tn_tensor **stage) {
    *stage = NULL;
    if (!t) return (tn_tensor *)tn__error("%s: tensor is NULL", fn);
    if (t->device != TN_CUDA)
        return (tn_tensor *)tn__error("%s: Tensors must be CUDA and dense: the nccl process group takes CUDA tensors, this one is on %s "
                                      "(PyTorch: no backend type associated with device type %s)", fn, tn_device_name(t->device), tn_device_name(t->device));
    if (t->dtype == TN_I16) return (tn_tensor *)tn__error("%s: dtype int16 cannot be communicated: NCCL has no type for it (Unsupported data type for NCCL process group)", fn);
    if (tn_is_contiguous(t)) return t;
    tn_scope_begin();
    tn_tensor *c = tn_contiguous(t);
    if (c) tn_retain(c);
    tn_scope_end();
    *stage = c;
    return c;
}

/* complex numbers go to NCCL as pairs of reals: a product of pairs is not theirs */
static int tn__nccl_op_ok(const char *fn, tn_tensor *t, tn_dist_op op) {
    if (t && op == TN_DIST_PRODUCT && tn_is_complex(t)) return TN__FAIL_INT("%s: does not support PRODUCT on complex tensors with the nccl backend", fn);
    return 0;
}

/* Waits for the event of work queued on g's communicator, polling until the deadline and
   asking the communicator for a peer's failure now and then; at the deadline the
   communicator is aborted (ncclCommAbort) and the group broken. Frees the event. */
static int tn__nccl_complete(const char *fn, tn_dist_group *g, void **event) {
    const double deadline = tn__now() + tn__dist_timeout;
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    a.comm = g->nccl;
    a.event = *event;
    int rc = 0;
    for (long spin = 0;; spin++) {
        const int r = tn__nccl_run(fn, TN_NCCL_QUERY, &a);
        if (r != 0) { rc = r < 0 ? -1 : 0; break; }
        if ((spin & 63) == 63 && tn__nccl_run(fn, TN_NCCL_CHECK, &a) < 0) { tn__nccl_abort(g); rc = -1; break; }
        if (tn__now() > deadline) {
            tn__nccl_abort(g);
            rc = TN__FAIL_INT("%s: timed out after %.0f s on rank %d of %d: another rank failed, exited or did not make the same call "
                              "(the NCCL communicator was aborted: the process group is unusable now)", fn, tn__dist_timeout,
                              tn__dist_world.rank, tn__dist_world.size);
            break;
        }
        tn__dist_nap(spin);
    }
    tn_dist_work tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.event = *event;
    tn__nccl_release(&tmp);
    *event = NULL;
    return rc;
}

/* the work queued so far on g, waited for */
static int tn__nccl_sync(const char *fn, tn_dist_group *g, tn_nccl_args *a) {
    a->comm = g->nccl;
    if (tn__nccl_run(fn, TN_NCCL_RECORD, a) < 0) return -1;
    return tn__nccl_complete(fn, g, &a->event);
}

/* after the device finished: the staging buffer back into the user's tensor (on the device) */
static int tn__nccl_finish(tn_dist_work *w) {
    int rc = 0;
    if (w->stage) {
        tn_no_grad_begin();
        rc = tn_copy_(w->t, w->stage);
        tn_no_grad_end();
    }
    w->completed = true;
    return rc;
}

/* all_reduce (0), broadcast (1), send (2), recv (3) queued on the device; local: the peer's group rank */
static tn_dist_work *tn__nccl_start(const char *fn, int kind, tn_tensor *t, tn_dist_op op, int local, tn_dist_group *g) {
    static const tn_nccl_op ops[4] = {TN_NCCL_ALL_REDUCE, TN_NCCL_BROADCAST, TN_NCCL_SEND, TN_NCCL_RECV};
    if (kind == 3 && local == -1) return (tn_dist_work *)tn__error("%s: the nccl backend cannot receive from any source (src -1): name the sender", fn);
    if (kind >= 2 && local == g->rank)
        return (tn_dist_work *)tn__error("%s: Invalid %s rank: should not be the same as rank of the current process", fn, kind == 2 ? "destination" : "source");
    if (kind == 0 && tn__nccl_op_ok(fn, t, op)) return NULL;
    tn_tensor *stage;
    tn_tensor *buf = tn__nccl_buffer(fn, t, &stage);
    if (!buf) return NULL;
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    a.comm = g->nccl;
    a.x = a.y = buf;
    a.peer = local;
    a.op = tn__nccl_op(op, t->dtype);
    if (tn__nccl_run(fn, ops[kind], &a) < 0 || tn__nccl_run(fn, TN_NCCL_RECORD, &a) < 0) { tn_release(stage); return NULL; }
    tn_dist_work *w = tn__dist_work(fn, g, t, stage);
    if (!w) {
        tn_dist_work tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.event = a.event;
        tn__nccl_release(&tmp);
        return NULL;
    }
    w->event = a.event;
    w->nccl = true;
    if (kind == 3) w->source = g == &tn__dist_world ? local : g->ranks[local];
    return w;
}

static int tn__nccl_wait(tn_dist_work *w) {
    int rc = w->completed ? 0 : tn__nccl_complete(w->fn, w->g, &w->event);
    if (!rc && !w->completed) rc = tn__nccl_finish(w);
    const int source = w->source;
    tn__dist_work_free(w);
    return rc ? rc : source >= 0 ? source : 0;
}

static int tn__nccl_test(tn_dist_work *w) {
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    a.comm = w->g->nccl;
    a.event = w->event;
    const int r = tn__nccl_run(w->fn, TN_NCCL_QUERY, &a);
    if (r <= 0) return r;
    tn__nccl_release(w);
    return tn__nccl_finish(w) ? -1 : 1;
}

static int tn__nccl_reduce(const char *fn, tn_tensor *t, int root, tn_dist_op op, tn_dist_group *g) {
    if (tn__nccl_op_ok(fn, t, op)) return -1;
    tn_tensor *stage;
    tn_tensor *buf = tn__nccl_buffer(fn, t, &stage);
    if (!buf) return -1;
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    a.comm = g->nccl;
    a.x = a.y = buf;
    a.peer = root;
    a.op = tn__nccl_op(op, t->dtype);
    int rc = tn__nccl_run(fn, TN_NCCL_REDUCE, &a) < 0 ? -1 : tn__nccl_sync(fn, g, &a);
    if (!rc && stage && g->rank == root) {
        tn_no_grad_begin();
        rc = tn_copy_(t, stage);
        tn_no_grad_end();
    }
    tn_release(stage);
    return rc ? -1 : 0;
}

/* all_gather (0), gather (1), scatter (2), reduce_scatter (3) on the device: the list as one
   contiguous [size, ...] device tensor; gather and scatter are grouped sends and receives
   (NCCL has neither), as PyTorch's ProcessGroupNCCL does them */
static int tn__nccl_list(const char *fn, int kind, tn_tensor *t, tn_tensor *const *list, int root, tn_dist_op op, tn_dist_group *g) {
    const bool has_list = kind == 0 || kind == 3 || g->rank == root;
    for (int i = 0; has_list && i < g->size; i++)
        if (list[i]->device != TN_CUDA)
            return TN__FAIL_INT("%s: Tensors must be CUDA and dense: tensor %d of the list is on %s", fn, i, tn_device_name(list[i]->device));
    if (kind == 3 && tn__nccl_op_ok(fn, t, op)) return -1;
    tn_tensor *stage;
    tn_tensor *buf = tn__nccl_buffer(fn, t, &stage);
    if (!buf) return -1;
    int rc = 0;
    tn_scope_begin();
    tn_tensor *all = NULL;
    if (has_list) {
        if (kind == 0 || kind == 1) {   /* written whole by NCCL: uninitialised */
            int64_t shape[TN_MAX_DIMS + 1];
            shape[0] = g->size;
            memcpy(shape + 1, t->shape, (size_t)t->ndim * sizeof(int64_t));
            all = tn__own(tn__new(t->dtype, TN_CUDA, shape, t->ndim + 1));
        } else all = g->size ? tn_contiguous(tn_stack(list, g->size)) : NULL;
        if (!all) rc = -1;
    }
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    a.comm = g->nccl;
    a.op = tn__nccl_op(op, t->dtype);
    if (!rc) {
        switch (kind) {
        case 0: a.x = buf; a.y = all; rc = tn__nccl_run(fn, TN_NCCL_ALL_GATHER, &a); break;
        case 3: a.x = all; a.y = buf; rc = tn__nccl_run(fn, TN_NCCL_REDUCE_SCATTER, &a); break;
        default:
            if (g->rank != root) {
                a.peer = root;
                if (kind == 1) a.x = buf; else a.y = buf;
                rc = tn__nccl_run(fn, kind == 1 ? TN_NCCL_SEND : TN_NCCL_RECV, &a);
                break;
            }
            rc = tn__nccl_run(fn, TN_NCCL_GROUP_START, &a);
            for (int i = 0; i < g->size && rc >= 0; i++) {
                if (i == root) continue;
                a.peer = i;
                if (kind == 1) a.y = tn_select(all, 0, i); else a.x = tn_select(all, 0, i);
                rc = (kind == 1 ? a.y : a.x) ? tn__nccl_run(fn, kind == 1 ? TN_NCCL_RECV : TN_NCCL_SEND, &a) : -1;
            }
            if (tn__nccl_run(fn, TN_NCCL_GROUP_END, &a) < 0) rc = -1;   /* closed also after a failed call */
        }
        rc = rc < 0 ? -1 : tn__nccl_sync(fn, g, &a);
    }
    tn_no_grad_begin();
    if (!rc && (kind == 0 || (kind == 1 && g->rank == root)))   /* the gathered rows into the list */
        for (int i = 0; i < g->size && !rc; i++) rc = tn_copy_(list[i], kind == 1 && i == root ? t : tn_select(all, 0, i));
    if (!rc && kind == 2 && g->rank == root) rc = tn_copy_(t, list[root]);
    else if (!rc && (kind == 2 || kind == 3) && stage) rc = tn_copy_(t, stage);
    tn_no_grad_end();
    tn_scope_end();
    tn_release(stage);
    return rc ? -1 : 0;
}

/* PyTorch's NCCL barrier: an all-reduce of one element on the device, waited for */
static int tn__nccl_barrier(const char *fn, tn_dist_group *g) {
    const int64_t one = 1;
    tn_scope_begin();
    tn_tensor *t = tn__own(tn__new(TN_F32, TN_CUDA, &one, 1));
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    a.comm = g->nccl;
    a.x = a.y = t;
    a.op = TN_DIST_SUM;
    int rc = !t || tn__nccl_run(fn, TN_NCCL_ALL_REDUCE, &a) < 0 ? -1 : tn__nccl_sync(fn, g, &a);
    tn_scope_end();
    return rc;
}

/* ---- nccl's bootstrap without MPI: torchrun's variables and a TCP connection per rank ----
   Rank 0 listens on MASTER_PORT and keeps a connection to every other rank (each says its
   rank and the world size first); the others connect to MASTER_ADDR:MASTER_PORT, retrying
   until rank 0 listens or the deadline passes. Only ncclUniqueIds go over them. */
#ifdef TN__HAVE_TCP
static int tn__tcp_sock = -1;           /* ranks > 0: the connection to rank 0 */
static int *tn__tcp_peers;              /* rank 0: each rank's connection (index: the rank) */
static int tn__tcp_world;

TN__TESTABLE void tn__tcp_close(void) {
    if (tn__tcp_sock >= 0) close(tn__tcp_sock);
    for (int i = 0; tn__tcp_peers && i < tn__tcp_world; i++)
        if (tn__tcp_peers[i] >= 0) close(tn__tcp_peers[i]);
    TN_FREE(tn__tcp_peers);
    tn__tcp_peers = NULL;
    tn__tcp_sock = -1;
    tn__tcp_world = 0;
}

/* all n bytes of buf over fd (out: sent, else received) before the deadline: 0, -1 (the
   peer closed or failed) or -2 (the deadline) */
static int tn__tcp_io(int fd, void *buf, size_t n, bool out, double deadline) {
    char *p = (char *)buf;
    while (n) {
        const double left = deadline - tn__now();
        if (left <= 0) return -2;
        struct pollfd pf;
        pf.fd = fd;
        pf.events = out ? POLLOUT : POLLIN;
        pf.revents = 0;
        const int pr = poll(&pf, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
        if (pr < 0 && errno != EINTR) return -1;
        if (pr <= 0) continue;
        const ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* connect fd to sa before the deadline (a host that never answers would block connect()
   for minutes): non-blocking, polled; 0 or -1 */
static int tn__tcp_connect(int fd, const struct sockaddr_in *sa, double deadline) {
    const int fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
    int rc = connect(fd, (const struct sockaddr *)sa, sizeof *sa);
    if (rc < 0 && errno == EINPROGRESS) {
        struct pollfd pf;
        pf.fd = fd;
        pf.events = POLLOUT;
        pf.revents = 0;
        const double left = deadline - tn__now();
        int err = 0;
        socklen_t len = sizeof err;
        rc = left > 0 && poll(&pf, 1, (int)(left * 1000) + 1) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 ? 0 : -1;
    }
    if (fcntl(fd, F_SETFL, fl) < 0) return -1;   /* blocking again: tn__tcp_io polls before each call */
    return rc;
}

/* the connections of rank of world through addr:port, made before timeout_s passes */
TN__TESTABLE int tn__tcp_rendezvous(const char *fn, int rank, int world, const char *addr, const char *port, double timeout_s) {
    char *end = NULL;
    const long pn = port ? strtol(port, &end, 10) : 0;
    if (!port || !*port || *end || pn < 1 || pn > 65535) return TN__FAIL_INT("%s: MASTER_PORT=%s is not a port number (1 to 65535)", fn, port ? port : "(unset)");
    const double deadline = tn__now() + timeout_s;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)pn);
    tn__tcp_close();
    tn__tcp_world = world;
    if (rank == 0) {
        tn__tcp_peers = (int *)TN_MALLOC((size_t)world * sizeof(int));
        if (!tn__tcp_peers) return TN__FAIL_INT("%s: out of memory", fn);
        for (int i = 0; i < world; i++) tn__tcp_peers[i] = -1;
        const int ls = socket(AF_INET, SOCK_STREAM, 0), on = 1;
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) || bind(ls, (struct sockaddr *)&sa, sizeof sa) || listen(ls, world)) {
            const int e = errno;
            if (ls >= 0) close(ls);
            tn__tcp_close();
            return TN__FAIL_INT("%s: rank 0 cannot listen on port %ld (MASTER_PORT): %s", fn, pn, strerror(e));
        }
        int joined = 1;
        while (joined < world) {
            const double left = deadline - tn__now();
            struct pollfd pf;
            pf.fd = ls;
            pf.events = POLLIN;
            pf.revents = 0;
            if (left <= 0) {
                close(ls);
                tn__tcp_close();
                return TN__FAIL_INT("%s: timed out after %.0f s: %d of %d ranks connected to rank 0 on port %ld (MASTER_PORT)", fn, timeout_s, joined, world, pn);
            }
            if (poll(&pf, 1, left > 1 ? 1000 : (int)(left * 1000) + 1) <= 0) continue;
            const int fd = accept(ls, NULL, NULL);
            if (fd < 0) continue;
            int32_t hello[2];   /* its rank and world size, within seconds: a silent peer cannot hold rank 0 */
            const double said = tn__now() + 5 < deadline ? tn__now() + 5 : deadline;
            if (tn__tcp_io(fd, hello, sizeof hello, false, said) || hello[0] < 1 || hello[0] >= world || hello[1] != world ||
                tn__tcp_peers[hello[0]] >= 0) {
                close(fd);   /* not one of ours (a port scanner, a stale run): ignored */
                continue;
            }
            tn__tcp_peers[hello[0]] = fd;
            joined++;
        }
        close(ls);
        return 0;
    }
    if (!addr || !*addr) return TN__FAIL_INT("%s: environment variable MASTER_ADDR expected, but not set (rank 0's host name or address)", fn);
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        struct hostent *he = gethostbyname(addr);
        if (!he || he->h_addrtype != AF_INET || !he->h_addr_list[0]) return TN__FAIL_INT("%s: MASTER_ADDR=%s: no IPv4 address for that host", fn, addr);
        memcpy(&sa.sin_addr, he->h_addr_list[0], sizeof sa.sin_addr);
    }
    for (;;) {   /* rank 0 may not listen yet: retried */
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && tn__tcp_connect(fd, &sa, deadline) == 0) {
            const int32_t hello[2] = {rank, world};
            if (tn__tcp_io(fd, (void *)hello, sizeof hello, true, deadline) == 0) { tn__tcp_sock = fd; return 0; }
        }
        if (fd >= 0) close(fd);
        if (tn__now() > deadline) return TN__FAIL_INT("%s: timed out after %.0f s connecting to rank 0 at %s:%ld (MASTER_ADDR:MASTER_PORT)", fn, timeout_s, addr, pn);
        poll(NULL, 0, 20);
    }
}

/* n bytes of buf from rank 0 to every rank over the connections */
TN__TESTABLE int tn__tcp_bcast(const char *fn, int rank, void *buf, size_t n, double timeout_s) {
    const double deadline = tn__now() + timeout_s;
    if (rank != 0) {
        const int r = tn__tcp_sock < 0 ? -1 : tn__tcp_io(tn__tcp_sock, buf, n, false, deadline);
        return r ? TN__FAIL_INT("%s: rank %d got nothing from rank 0: %s", fn, rank, r == -2 ? "timed out" : "rank 0 closed the connection (it failed or exited)") : 0;
    }
    for (int i = 1; i < tn__tcp_world; i++) {
        const int r = !tn__tcp_peers || tn__tcp_peers[i] < 0 ? -1 : tn__tcp_io(tn__tcp_peers[i], buf, n, true, deadline);
        if (r) return TN__FAIL_INT("%s: rank 0 could not reach rank %d: %s", fn, i, r == -2 ? "timed out" : "it closed the connection (it failed or exited)");
    }
    return 0;
}
#endif

/* A new ncclUniqueId from world rank 0 to every rank (each calls this, as each calls
   new_group): over MPI under TENSOR_MPI, else over the TCP connections. One byte before
   the id says whether rank 0 made one, so its failure stops the others too. */
static int tn__nccl_share_id(const char *fn, tn_nccl_args *a) {
    unsigned char msg[1 + sizeof a->id];
    memset(msg, 0, sizeof msg);
    if (tn__dist_world.rank == 0) {
        if (tn__nccl_run(fn, TN_NCCL_GET_ID, a) < 0) msg[0] = 1;
        memcpy(msg + 1, a->id, sizeof a->id);
    }
    if (tn__dist_world.size > 1) {
#ifdef TENSOR_MPI
        MPI_Request req;
        int rc = MPI_Ibcast(msg, (int)sizeof msg, MPI_BYTE, 0, tn__dist_world.comm, &req);
        if (rc != MPI_SUCCESS) return tn__mpi_fail(fn, rc);
        if (tn__dist_complete(fn, &tn__dist_world, &req, NULL)) return -1;
#elif defined(TN__HAVE_TCP)
        if (tn__tcp_bcast(fn, tn__dist_world.rank, msg, sizeof msg, tn__dist_timeout)) return -1;
#else
        return TN__FAIL_INT("%s: nccl over %d ranks needs MPI (make DIST=mpi) or TCP sockets, which this platform lacks", fn, tn__dist_world.size);
#endif
    }
    if (msg[0]) return tn__dist_world.rank == 0 ? -1 : TN__FAIL_INT("%s: rank 0 could not make the NCCL id (its error is on rank 0)", fn);
    memcpy(a->id, msg + 1, sizeof a->id);
    return 0;
}

/* g's communicator (members only; every rank of the world calls it for the id) */
static int tn__nccl_comm(const char *fn, tn_dist_group *g) {
    tn_nccl_args a;
    memset(&a, 0, sizeof a);
    if (tn__nccl_share_id(fn, &a)) return -1;
    if (g->rank < 0) return 0;
    a.rank = g->rank;
    a.size = g->size;
#ifdef TENSOR_MPI
    a.mpi_comm = &g->comm;
#endif
    if (tn__nccl_run(fn, TN_NCCL_INIT, &a) < 0) return -1;
    g->nccl = a.comm;
    return 0;
}

#ifndef TENSOR_MPI
/* an environment variable as an int in [lo, hi]: 0, 1 when unset, -1 with an error */
static int tn__dist_env_int(const char *fn, const char *name, int lo, int hi, int *v) {
    const char *s = getenv(name);
    if (!s) return 1;
    char *end = NULL;
    const long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi) return TN__FAIL_INT("%s: %s=%s is not an integer in [%d, %d]", fn, name, s, lo, hi);
    *v = (int)x;
    return 0;
}
#endif

/* PyTorch's words for what env:// rendezvous misses (torch/distributed/rendezvous.py) */
#define TN__ENV_RDZV(fn, var) TN__FAIL_INT("%s: Error initializing torch.distributed using env:// rendezvous: environment variable %s expected, but not set", fn, var)

static int tn__nccl_init(const char *fn, tn_dist_init_fn_opts o) {
    const double timeout_s = o.timeout;
    const tn_backend *cuda = tn_get_backend(TN_CUDA);
    if (!cuda) return TN__FAIL_INT("%s: backend 'nccl' needs CUDA: %s", fn, tn_cuda_unavailable_reason());
    if (!cuda->nccl)
        return TN__FAIL_INT("%s: backend 'nccl' is not available: the CUDA backend (%s) was built without NCCL (tensor_cuda.cu: make NCCL=1 where nccl.h "
                            "and libnccl are)", fn, cuda->name);
#ifdef TENSOR_MPI
    (void)o;
    if (tn__mpi_init(fn, timeout_s)) return -1;   /* mpirun's rank and size (tn_dist_init_opts checks .rank / .world_size against them) */
#else
    /* env:// rendezvous, as PyTorch's: rank and world size from the arguments or RANK and
       WORLD_SIZE, then MASTER_ADDR and MASTER_PORT, in that order, even for one process */
    int rank = 0, world = 1;
    if (o.rank >= 0) {
        if (o.rank > INT_MAX - 1) return TN__FAIL_INT("%s: rank %lld is too large", fn, (long long)o.rank);
        rank = (int)o.rank;
    } else {
        const int h = tn__dist_env_int(fn, "RANK", 0, INT_MAX - 1, &rank);
        if (h) return h < 0 ? -1 : TN__ENV_RDZV(fn, "RANK");
    }
    if (o.world_size >= 0) {
        if (o.world_size < 1 || o.world_size > INT_MAX) return TN__FAIL_INT("%s: world_size %lld is not a positive int", fn, (long long)o.world_size);
        world = (int)o.world_size;
    } else {
        const int h = tn__dist_env_int(fn, "WORLD_SIZE", 1, INT_MAX, &world);
        if (h) return h < 0 ? -1 : TN__ENV_RDZV(fn, "WORLD_SIZE");
    }
    if (!getenv("MASTER_ADDR")) return TN__ENV_RDZV(fn, "MASTER_ADDR");
    if (!getenv("MASTER_PORT")) return TN__ENV_RDZV(fn, "MASTER_PORT");
    if (rank >= world) return TN__FAIL_INT("%s: RANK=%d is not below WORLD_SIZE=%d", fn, rank, world);
    tn__dist_world.rank = rank;
    tn__dist_world.size = world;
    tn__dist_world.broken = false;
    tn__dist_set_timeout(timeout_s);
    if (world > 1) {
#ifdef TN__HAVE_TCP
        if (tn__tcp_rendezvous(fn, rank, world, getenv("MASTER_ADDR"), getenv("MASTER_PORT"), tn__dist_timeout)) return -1;
#else
        return TN__FAIL_INT("%s: nccl over %d ranks needs MPI (make DIST=mpi) or TCP sockets, which this platform lacks", fn, world);
#endif
    }
#endif
    if (tn__nccl_comm(fn, &tn__dist_world)) {
#ifdef TENSOR_MPI
        MPI_Comm_free(&tn__dist_world.comm);
        MPI_Group_free(&tn__dist_world.group);
#elif defined(TN__HAVE_TCP)
        tn__tcp_close();
#endif
        return -1;
    }
    return 0;
}

static void tn__nccl_destroy(void) {
    const tn_backend *b = tn__nccl_backend();
    if (tn__dist_world.nccl && b) {
        tn_nccl_args a;
        memset(&a, 0, sizeof a);
        a.comm = tn__dist_world.nccl;
        b->nccl(TN_NCCL_DESTROY, &a);
    }
    tn__dist_world.nccl = NULL;
#if !defined(TENSOR_MPI) && defined(TN__HAVE_TCP)
    tn__tcp_close();
#endif
}

/* ---- the public calls: checks common to both backends, then the backend's ---- */
#define TN__NO_MPI(fn) TN__FAIL_INT("%s: this library was built without MPI (build it with make DIST=mpi, which links Open MPI)", fn)

TNDEF int tn_dist_init_opts(const char *backend, tn_dist_init_fn_opts o) {
    const char *fn = "tn_dist_init";
    if (!backend) backend = "mpi";
    const bool nccl = !strcmp(backend, "nccl");
    if (!nccl && strcmp(backend, "mpi") && strcmp(backend, "gloo"))
        return TN__FAIL_INT("%s: backend '%s' is not available (the backends are 'mpi', 'gloo' (served by MPI) and 'nccl')", fn, backend);
    if (tn__dist_ready) return TN__FAIL_INT("%s: the default process group is already initialized", fn);
    if (o.rank < -1 || o.world_size < -1 || o.world_size == 0)
        return TN__FAIL_INT("%s: rank %lld / world_size %lld: each is -1 (not given) or a rank below a positive world size", fn, (long long)o.rank,
                            (long long)o.world_size);
    if (nccl) {
        if (tn__nccl_init(fn, o)) return -1;
    } else {
#ifdef TENSOR_MPI
        if (tn__mpi_init(fn, o.timeout)) return -1;
#else
        return TN__NO_MPI(fn);
#endif
    }
    tn__dist_nccl = nccl;
    tn__dist_ready = true;
    /* given with a launcher's (MPI's) own rank and size: they must agree, as PyTorch's MPI backend insists */
    if ((o.rank != -1 && o.rank != tn__dist_world.rank) || (o.world_size != -1 && o.world_size != tn__dist_world.size)) {
        const int r = tn__dist_world.rank, w = tn__dist_world.size;
        tn_dist_destroy();
        return TN__FAIL_INT("%s: rank %lld / world_size %lld disagree with the launcher's rank %d of %d", fn, (long long)o.rank, (long long)o.world_size, r, w);
    }
    return 0;
}

TNDEF int tn_dist_destroy(void) {
    if (!tn__dist_ready) return TN__FAIL_INT("tn_dist_destroy: the default process group is not initialized");
    if (tn__dist_nccl) tn__nccl_destroy();
#ifdef TENSOR_MPI
    tn__mpi_destroy();
#else
    tn__dist_world.rank = -1;
    tn__dist_world.size = 0;
#endif
    tn__dist_world.broken = false;
    tn__dist_ready = tn__dist_nccl = false;
    return 0;
}

TNDEF tn_dist_group *tn_dist_new_group(const int64_t *ranks, int n) {
    const char *fn = "tn_dist_new_group";
    if (!tn__dist_group(fn, NULL)) return NULL;
    if (n < 0 || n > tn__dist_world.size || (n && !ranks)) return (tn_dist_group *)tn__error("%s: %d ranks in a world of %d", fn, n, tn__dist_world.size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= tn__dist_world.size)
            return (tn_dist_group *)tn__error("%s: rank %lld is not in the world of %d", fn, (long long)ranks[i], tn__dist_world.size);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) return (tn_dist_group *)tn__error("%s: rank %lld is listed twice", fn, (long long)ranks[i]);
    }
    tn_dist_group *g = (tn_dist_group *)TN_MALLOC(sizeof *g);
    int *r = (int *)TN_MALLOC((size_t)(n ? n : 1) * sizeof(int));
    if (!g || !r) { TN_FREE(g); TN_FREE(r); return (tn_dist_group *)tn__error("%s: out of memory", fn); }
    memset(g, 0, sizeof *g);
    g->ranks = r;
    g->size = n;
    g->rank = -1;
    for (int i = 0; i < n; i++) {
        r[i] = (int)ranks[i];   /* < world size: fits */
        if (r[i] == tn__dist_world.rank) g->rank = i;
    }
#ifdef TENSOR_MPI
    g->comm = MPI_COMM_NULL;
    g->group = MPI_GROUP_EMPTY;
    int rc = n ? MPI_Group_incl(tn__dist_world.group, n, r, &g->group) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS) rc = MPI_Comm_create(tn__dist_world.comm, g->group, &g->comm);   /* every rank calls it, as in PyTorch */
    if (rc != MPI_SUCCESS) { TN_FREE(r); TN_FREE(g); tn__mpi_fail(fn, rc); return NULL; }
    if (g->comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
#endif
    if (tn__dist_nccl && tn__nccl_comm(fn, g)) {
        tn_dist_group_free(g);
        return NULL;
    }
    return g;
}

TNDEF void tn_dist_group_free(tn_dist_group *g) {
    if (!g || g == &tn__dist_world) return;
    const tn_backend *b = tn__nccl_backend();
    if (g->nccl && b) {
        tn_nccl_args a;
        memset(&a, 0, sizeof a);
        a.comm = g->nccl;
        b->nccl(TN_NCCL_DESTROY, &a);
    }
#ifdef TENSOR_MPI
    if (g->comm != MPI_COMM_NULL && !g->broken && !tn__dist_finalized) MPI_Comm_free(&g->comm);
    if (g->group != MPI_GROUP_EMPTY && g->group != MPI_GROUP_NULL && !tn__dist_finalized) MPI_Group_free(&g->group);
#endif
    TN_FREE(g->ranks);
    TN_FREE(g);
}

TNDEF int tn_dist_wait(tn_dist_work *w) {
    if (!w) return TN__FAIL_INT("tn_dist_wait: work is NULL");
    if (w->nccl) return tn__nccl_wait(w);
#ifdef TENSOR_MPI
    return tn__mpi_wait(w);
#else
    return TN__NO_MPI("tn_dist_wait");   /* unreachable: without MPI all work is nccl's */
#endif
}

TNDEF int tn_dist_test(tn_dist_work *w) {
    if (!w) return TN__FAIL_INT("tn_dist_test: work is NULL");
    if (w->completed) return 1;
    if (w->nccl) return tn__nccl_test(w);
#ifdef TENSOR_MPI
    return tn__mpi_test(w);
#else
    return TN__NO_MPI("tn_dist_test");
#endif
}

/* The in-place single-tensor collectives, as async work; the blocking forms wait on it. */
static tn_dist_work *tn__dist_start(const char *fn, int kind, tn_tensor *t, tn_dist_op op, int peer, int tag, tn_dist_group *g) {
    if (!(g = tn__dist_group(fn, g))) return NULL;
    int local = -1;
    if (kind != 0 && !(kind == 3 && peer == -1) && (local = tn__dist_local(fn, g, peer)) < 0) return NULL;
    if (kind == 0 && (op < TN_DIST_SUM || op > TN_DIST_MAX)) return (tn_dist_work *)tn__error("%s: invalid reduce op %d", fn, (int)op);
    if (kind == 0 && tn__dist_op_ok(fn, t, op)) return NULL;
    if (tag < 0) return (tn_dist_work *)tn__error("%s: tag %d must be >= 0", fn, tag);
    if (tn__dist_nccl) return tn__nccl_start(fn, kind, t, op, local, g);
#ifdef TENSOR_MPI
    return tn__mpi_start(fn, kind, t, op, local, tag, g);
#else
    (void)TN__NO_MPI(fn);
    return NULL;
#endif
}

TNDEF tn_dist_work *tn_dist_all_reduce_async(tn_tensor *t, tn_dist_op op, tn_dist_group *g) { return tn__dist_start("tn_dist_all_reduce", 0, t, op, 0, 0, g); }
TNDEF tn_dist_work *tn_dist_broadcast_async(tn_tensor *t, int src, tn_dist_group *g) { return tn__dist_start("tn_dist_broadcast", 1, t, TN_DIST_SUM, src, 0, g); }
TNDEF tn_dist_work *tn_dist_send_async(tn_tensor *t, int dst, int tag, tn_dist_group *g) { return tn__dist_start("tn_dist_send", 2, t, TN_DIST_SUM, dst, tag, g); }
TNDEF tn_dist_work *tn_dist_recv_async(tn_tensor *t, int src, int tag, tn_dist_group *g) { return tn__dist_start("tn_dist_recv", 3, t, TN_DIST_SUM, src, tag, g); }

TNDEF int tn_dist_reduce(tn_tensor *t, int dst, tn_dist_op op, tn_dist_group *g) {
    const char *fn = "tn_dist_reduce";
    if (!(g = tn__dist_group(fn, g))) return -1;
    const int root = tn__dist_local(fn, g, dst);
    if (root < 0) return -1;
    if (op < TN_DIST_SUM || op > TN_DIST_MAX) return TN__FAIL_INT("%s: invalid reduce op %d", fn, (int)op);
    if (tn__dist_op_ok(fn, t, op)) return -1;
    if (tn__dist_nccl) return tn__nccl_reduce(fn, t, root, op, g);
#ifdef TENSOR_MPI
    return tn__mpi_reduce(fn, t, root, op, g);
#else
    return TN__NO_MPI(fn);
#endif
}

static int tn__dist_list(const char *fn, int kind, tn_tensor *t, tn_tensor *const *list, int peer, tn_dist_op op, tn_dist_group *g) {
    if (!(g = tn__dist_group(fn, g))) return -1;
    if (!t) return TN__FAIL_INT("%s: tensor is NULL", fn);
    int root = 0;
    if ((kind == 1 || kind == 2) && (root = tn__dist_local(fn, g, peer)) < 0) return -1;
    const bool has_list = kind == 0 || kind == 3 || g->rank == root;
    if (has_list && tn__dist_check_list(fn, list, g->size, t)) return -1;
    if (kind == 3 && (op < TN_DIST_SUM || op > TN_DIST_MAX)) return TN__FAIL_INT("%s: invalid reduce op %d", fn, (int)op);
    if (kind == 3 && tn__dist_op_ok(fn, t, op)) return -1;
    if (tn__dist_nccl) return tn__nccl_list(fn, kind, t, list, root, op, g);
#ifdef TENSOR_MPI
    return tn__mpi_list(fn, kind, t, list, root, op, g);
#else
    return TN__NO_MPI(fn);
#endif
}

TNDEF int tn_dist_all_gather(tn_tensor *const *outs, tn_tensor *t, tn_dist_group *g) { return tn__dist_list("tn_dist_all_gather", 0, t, outs, 0, TN_DIST_SUM, g); }
TNDEF int tn_dist_gather(tn_tensor *t, tn_tensor *const *outs, int dst, tn_dist_group *g) { return tn__dist_list("tn_dist_gather", 1, t, outs, dst, TN_DIST_SUM, g); }
TNDEF int tn_dist_scatter(tn_tensor *t, tn_tensor *const *ins, int src, tn_dist_group *g) { return tn__dist_list("tn_dist_scatter", 2, t, ins, src, TN_DIST_SUM, g); }
TNDEF int tn_dist_reduce_scatter(tn_tensor *out, tn_tensor *const *ins, tn_dist_op op, tn_dist_group *g) { return tn__dist_list("tn_dist_reduce_scatter", 3, out, ins, 0, op, g); }

TNDEF int tn_dist_barrier(tn_dist_group *g) {
    const char *fn = "tn_dist_barrier";
    if (!(g = tn__dist_group(fn, g))) return -1;
    if (tn__dist_nccl) return tn__nccl_barrier(fn, g);
#ifdef TENSOR_MPI
    return tn__mpi_barrier(fn, g);
#else
    return TN__NO_MPI(fn);
#endif
}

/* the blocking forms of the async collectives, with or without MPI */
TNDEF int tn_dist_all_reduce(tn_tensor *t, tn_dist_op op, tn_dist_group *g) {
    tn_dist_work *w = tn_dist_all_reduce_async(t, op, g);
    return w && tn_dist_wait(w) >= 0 ? 0 : -1;
}
TNDEF int tn_dist_broadcast(tn_tensor *t, int src, tn_dist_group *g) {
    tn_dist_work *w = tn_dist_broadcast_async(t, src, g);
    return w && tn_dist_wait(w) >= 0 ? 0 : -1;
}
TNDEF int tn_dist_send(tn_tensor *t, int dst, int tag, tn_dist_group *g) {
    tn_dist_work *w = tn_dist_send_async(t, dst, tag, g);
    return w && tn_dist_wait(w) >= 0 ? 0 : -1;
}
TNDEF int tn_dist_recv(tn_tensor *t, int src, int tag, tn_dist_group *g) {
    tn_dist_work *w = tn_dist_recv_async(t, src, tag, g);
    return w ? tn_dist_wait(w) : -1;
}
TNDEF int tn_dist_init_str(const char *backend, const char *options) {
    TN__KW_STR_INT(tn_dist_init_fn_opts, dist_init, "tn_dist_init", options, tn_dist_init_opts(backend, o));
}
