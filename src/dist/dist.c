/* ---- distributed: process groups and collectives over MPI (torch.distributed) ----
   Compiled in with TENSOR_MPI (make DIST=mpi: mpicc's flags); without it every function
   is an error that says so, and the header needs no MPI. Each collective is MPI's
   non-blocking form completed by polling with a deadline (the group's timeout, 30 minutes
   by default as PyTorch's), so a rank that died or never calls makes the others fail with
   an error instead of hanging; after a timeout the group is broken and says so. Tensors
   go to MPI as contiguous CPU buffers: a strided or GPU tensor is staged through one and
   copied back. Ranks given to a collective are global ranks, as in PyTorch. */
#ifdef TENSOR_MPI
#include <mpi.h>
#include <poll.h>
#endif

struct tn_dist_group {
#ifdef TENSOR_MPI
    MPI_Comm comm;                      /* MPI_COMM_NULL on a rank outside the group */
    MPI_Group group;
#endif
    int rank, size;                     /* in the group (-1 outside it) */
    bool broken;                        /* a collective timed out: the communicator is unusable */
};

struct tn_dist_work {
#ifdef TENSOR_MPI
    MPI_Request req;
#endif
    tn_dist_group *g;
    const char *fn;
    tn_tensor *t, *stage;               /* the user's tensor (retained) and the buffer MPI writes, if another */
    bool average, completed;
    int source;                         /* recv: the sender's global rank */
};

static bool tn__dist_ready;
#ifdef TENSOR_MPI
static tn_dist_group tn__dist_world = {MPI_COMM_NULL, MPI_GROUP_NULL, -1, 0, false};
static bool tn__dist_finalized;
static double tn__dist_timeout = 1800;
#endif

TNDEF bool tn_dist_is_available(void) {
#ifdef TENSOR_MPI
    return true;
#else
    return false;
#endif
}
TNDEF bool tn_dist_is_initialized(void) { return tn__dist_ready; }

#ifndef TENSOR_MPI
#define TN__NO_MPI(fn) TN__FAIL_INT("%s: this library was built without MPI (build it with make DIST=mpi, which links Open MPI)", fn)
TNDEF int tn_dist_init_opts(const char *backend, tn_dist_init_fn_opts o) { (void)backend; (void)o; return TN__NO_MPI("tn_dist_init"); }
TNDEF int tn_dist_destroy(void) { return TN__NO_MPI("tn_dist_destroy"); }
TNDEF int tn_dist_get_rank(const tn_dist_group *g) { (void)g; return TN__NO_MPI("tn_dist_get_rank"); }
TNDEF int tn_dist_get_world_size(const tn_dist_group *g) { (void)g; return TN__NO_MPI("tn_dist_get_world_size"); }
TNDEF tn_dist_group *tn_dist_new_group(const int64_t *ranks, int n) { (void)ranks; (void)n; (void)TN__NO_MPI("tn_dist_new_group"); return NULL; }
TNDEF void tn_dist_group_free(tn_dist_group *g) { (void)g; }
TNDEF tn_dist_work *tn_dist_all_reduce_async(tn_tensor *t, tn_dist_op op, tn_dist_group *g) { (void)t; (void)op; (void)g; (void)TN__NO_MPI("tn_dist_all_reduce"); return NULL; }
TNDEF tn_dist_work *tn_dist_broadcast_async(tn_tensor *t, int src, tn_dist_group *g) { (void)t; (void)src; (void)g; (void)TN__NO_MPI("tn_dist_broadcast"); return NULL; }
TNDEF tn_dist_work *tn_dist_send_async(tn_tensor *t, int dst, int tag, tn_dist_group *g) { (void)t; (void)dst; (void)tag; (void)g; (void)TN__NO_MPI("tn_dist_send"); return NULL; }
TNDEF tn_dist_work *tn_dist_recv_async(tn_tensor *t, int src, int tag, tn_dist_group *g) { (void)t; (void)src; (void)tag; (void)g; (void)TN__NO_MPI("tn_dist_recv"); return NULL; }
TNDEF int tn_dist_wait(tn_dist_work *w) { (void)w; return TN__NO_MPI("tn_dist_wait"); }
TNDEF int tn_dist_test(tn_dist_work *w) { (void)w; return TN__NO_MPI("tn_dist_test"); }
TNDEF int tn_dist_reduce(tn_tensor *t, int dst, tn_dist_op op, tn_dist_group *g) { (void)t; (void)dst; (void)op; (void)g; return TN__NO_MPI("tn_dist_reduce"); }
TNDEF int tn_dist_all_gather(tn_tensor *const *outs, tn_tensor *t, tn_dist_group *g) { (void)outs; (void)t; (void)g; return TN__NO_MPI("tn_dist_all_gather"); }
TNDEF int tn_dist_gather(tn_tensor *t, tn_tensor *const *outs, int dst, tn_dist_group *g) { (void)t; (void)outs; (void)dst; (void)g; return TN__NO_MPI("tn_dist_gather"); }
TNDEF int tn_dist_scatter(tn_tensor *t, tn_tensor *const *ins, int src, tn_dist_group *g) { (void)t; (void)ins; (void)src; (void)g; return TN__NO_MPI("tn_dist_scatter"); }
TNDEF int tn_dist_reduce_scatter(tn_tensor *out, tn_tensor *const *ins, tn_dist_op op, tn_dist_group *g) { (void)out; (void)ins; (void)op; (void)g; return TN__NO_MPI("tn_dist_reduce_scatter"); }
TNDEF int tn_dist_barrier(tn_dist_group *g) { (void)g; return TN__NO_MPI("tn_dist_barrier"); }
#else

static int tn__mpi_fail(const char *fn, int rc) {
    char msg[MPI_MAX_ERROR_STRING];     /* MPI's own bound on its messages */
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    return TN__FAIL_INT("%s: MPI error: %s", fn, len ? msg : "unknown");
}

TNDEF int tn_dist_init_opts(const char *backend, tn_dist_init_fn_opts o) {
    const char *fn = "tn_dist_init";
    const double timeout_s = o.timeout;   /* NAN (None) fails the > 0 test below: the default */
    if (!backend) backend = "mpi";
    if (strcmp(backend, "mpi") && strcmp(backend, "gloo"))
        return TN__FAIL_INT("%s: backend '%s' is not available (this build has 'mpi'; 'gloo' is served by MPI; 'nccl' needs the GPU unit's NCCL build)", fn, backend);
    if (tn__dist_ready) return TN__FAIL_INT("%s: the default process group is already initialized", fn);
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
        return TN__FAIL_INT("%s: RANK=%s / WORLD_SIZE=%s disagree with MPI's rank %d of %d (launch with mpirun, which sets both)", fn,
                            r ? r : "(unset)", w ? w : "(unset)", tn__dist_world.rank, tn__dist_world.size);
    }
    const char *env = getenv("TN_DIST_TIMEOUT");
    tn__dist_timeout = timeout_s > 0 ? timeout_s : env && atof(env) > 0 ? atof(env) : 1800;
    tn__dist_ready = true;
    return 0;
}

TNDEF int tn_dist_destroy(void) {
    if (!tn__dist_ready) return TN__FAIL_INT("tn_dist_destroy: the default process group is not initialized");
    if (!tn__dist_world.broken) MPI_Comm_free(&tn__dist_world.comm);
    MPI_Group_free(&tn__dist_world.group);
    tn__dist_ready = false;
    tn__dist_finalized = true;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
    return 0;
}

static tn_dist_group *tn__dist_group(const char *fn, tn_dist_group *g) {
    if (!tn__dist_ready) return (tn_dist_group *)tn__error("%s: the default process group is not initialized (call tn_dist_init first)", fn);
    if (!g) g = &tn__dist_world;
    if (g->broken) return (tn_dist_group *)tn__error("%s: the process group is broken: an earlier collective timed out", fn);
    if (g->comm == MPI_COMM_NULL) return (tn_dist_group *)tn__error("%s: this rank (%d) is not a member of the group", fn, tn__dist_world.rank);
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
    for (int i = 0; i < n; i++) r[i] = (int)ranks[i];   /* < world size: fits */
    int rc = n ? MPI_Group_incl(tn__dist_world.group, n, r, &g->group) : MPI_SUCCESS;
    TN_FREE(r);
    if (!n) g->group = MPI_GROUP_EMPTY;
    if (rc == MPI_SUCCESS) rc = MPI_Comm_create(tn__dist_world.comm, g->group, &g->comm);   /* every rank calls it, as in PyTorch */
    if (rc != MPI_SUCCESS) { TN_FREE(g); tn__mpi_fail(fn, rc); return NULL; }
    g->rank = -1;
    g->size = n;
    if (g->comm != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(g->comm, &g->rank);
    }
    return g;
}

TNDEF void tn_dist_group_free(tn_dist_group *g) {
    if (!g || g == &tn__dist_world) return;
    if (g->comm != MPI_COMM_NULL && !g->broken && !tn__dist_finalized) MPI_Comm_free(&g->comm);
    if (g->group != MPI_GROUP_EMPTY && g->group != MPI_GROUP_NULL && !tn__dist_finalized) MPI_Group_free(&g->group);
    TN_FREE(g);
}

/* a global rank as the group's rank, or -1 with an error */
static int tn__dist_local(const char *fn, tn_dist_group *g, int global) {
    if (global < 0 || global >= tn__dist_world.size) return TN__FAIL_INT("%s: rank %d is not in the world of %d", fn, global, tn__dist_world.size);
    if (g == &tn__dist_world) return global;
    int local = MPI_UNDEFINED;
    MPI_Group_translate_ranks(tn__dist_world.group, 1, &global, g->group, &local);
    if (local == MPI_UNDEFINED) return TN__FAIL_INT("%s: global rank %d is not a member of the group", fn, global);
    return local;
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

static tn_dist_work *tn__dist_work(const char *fn, tn_dist_group *g, tn_tensor *t, tn_tensor *stage) {
    tn_dist_work *w = (tn_dist_work *)TN_MALLOC(sizeof *w);
    if (!w) { tn_release(stage); return (tn_dist_work *)tn__error("%s: out of memory", fn); }
    memset(w, 0, sizeof *w);
    w->req = MPI_REQUEST_NULL;
    w->g = g;
    w->fn = fn;
    w->t = tn_retain(t);
    w->stage = stage;
    w->source = -1;
    return w;
}

static void tn__dist_work_free(tn_dist_work *w) {
    if (w->req != MPI_REQUEST_NULL) MPI_Request_free(&w->req);
    tn_release(w->stage);
    tn_release(w->t);
    TN_FREE(w);
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

TNDEF int tn_dist_wait(tn_dist_work *w) {
    if (!w) return TN__FAIL_INT("tn_dist_wait: work is NULL");
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

TNDEF int tn_dist_test(tn_dist_work *w) {
    if (!w) return TN__FAIL_INT("tn_dist_test: work is NULL");
    if (w->completed) return 1;
    int done = 0, rc = MPI_Test(&w->req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return tn__mpi_fail(w->fn, rc);
    if (!done) return 0;
    return tn__dist_finish(w) ? -1 : 1;
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
/* The in-place single-tensor collectives, as async work; the blocking forms wait on it. */
static tn_dist_work *tn__dist_start(const char *fn, int kind, tn_tensor *t, tn_dist_op op, int peer, int tag, tn_dist_group *g) {
    if (!(g = tn__dist_group(fn, g))) return NULL;
    int count, local = 0, rc;
    MPI_Datatype type;
    tn_tensor *stage;
    if (kind != 0 && (local = tn__dist_local(fn, g, peer)) < 0 && !(kind == 3 && peer == -1)) return NULL;
    if (kind == 3 && peer == -1) local = MPI_ANY_SOURCE;
    if (kind == 0 && (op < TN_DIST_SUM || op > TN_DIST_MAX)) return (tn_dist_work *)tn__error("%s: invalid reduce op %d", fn, (int)op);
    if (kind == 0 && tn__dist_op_ok(fn, t, op)) return NULL;
    if (tag < 0) return (tn_dist_work *)tn__error("%s: tag %d must be >= 0", fn, tag);
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

TNDEF tn_dist_work *tn_dist_all_reduce_async(tn_tensor *t, tn_dist_op op, tn_dist_group *g) { return tn__dist_start("tn_dist_all_reduce", 0, t, op, 0, 0, g); }
TNDEF tn_dist_work *tn_dist_broadcast_async(tn_tensor *t, int src, tn_dist_group *g) { return tn__dist_start("tn_dist_broadcast", 1, t, TN_DIST_SUM, src, 0, g); }
TNDEF tn_dist_work *tn_dist_send_async(tn_tensor *t, int dst, int tag, tn_dist_group *g) { return tn__dist_start("tn_dist_send", 2, t, TN_DIST_SUM, dst, tag, g); }
TNDEF tn_dist_work *tn_dist_recv_async(tn_tensor *t, int src, int tag, tn_dist_group *g) { return tn__dist_start("tn_dist_recv", 3, t, TN_DIST_SUM, src, tag, g); }

TNDEF int tn_dist_reduce(tn_tensor *t, int dst, tn_dist_op op, tn_dist_group *g) {
    const char *fn = "tn_dist_reduce";
    if (!(g = tn__dist_group(fn, g))) return -1;
    int root = tn__dist_local(fn, g, dst), count;
    if (root < 0) return -1;
    if (op < TN_DIST_SUM || op > TN_DIST_MAX) return TN__FAIL_INT("%s: invalid reduce op %d", fn, (int)op);
    if (tn__dist_op_ok(fn, t, op)) return -1;
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

/* Runs one list collective: sendbuf/recvbuf over contiguous CPU copies, then copies back. */
static int tn__dist_list(const char *fn, int kind, tn_tensor *t, tn_tensor *const *list, int peer, tn_dist_op op, tn_dist_group *g) {
    if (!(g = tn__dist_group(fn, g))) return -1;
    if (!t) return TN__FAIL_INT("%s: tensor is NULL", fn);
    int root = 0;
    if ((kind == 1 || kind == 2) && (root = tn__dist_local(fn, g, peer)) < 0) return -1;
    const bool has_list = kind == 0 || kind == 3 || g->rank == root;
    if (has_list && tn__dist_check_list(fn, list, g->size, t)) return -1;
    if (kind == 3 && (op < TN_DIST_SUM || op > TN_DIST_MAX)) return TN__FAIL_INT("%s: invalid reduce op %d", fn, (int)op);
    if (kind == 3 && tn__dist_op_ok(fn, t, op)) return -1;
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

TNDEF int tn_dist_all_gather(tn_tensor *const *outs, tn_tensor *t, tn_dist_group *g) { return tn__dist_list("tn_dist_all_gather", 0, t, outs, 0, TN_DIST_SUM, g); }
TNDEF int tn_dist_gather(tn_tensor *t, tn_tensor *const *outs, int dst, tn_dist_group *g) { return tn__dist_list("tn_dist_gather", 1, t, outs, dst, TN_DIST_SUM, g); }
TNDEF int tn_dist_scatter(tn_tensor *t, tn_tensor *const *ins, int src, tn_dist_group *g) { return tn__dist_list("tn_dist_scatter", 2, t, ins, src, TN_DIST_SUM, g); }
TNDEF int tn_dist_reduce_scatter(tn_tensor *out, tn_tensor *const *ins, tn_dist_op op, tn_dist_group *g) { return tn__dist_list("tn_dist_reduce_scatter", 3, out, ins, 0, op, g); }

TNDEF int tn_dist_barrier(tn_dist_group *g) {
    const char *fn = "tn_dist_barrier";
    if (!(g = tn__dist_group(fn, g))) return -1;
    MPI_Request req;
    int rc = MPI_Ibarrier(g->comm, &req);
    return rc != MPI_SUCCESS ? tn__mpi_fail(fn, rc) : tn__dist_complete(fn, g, &req, NULL);
}
#endif

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
