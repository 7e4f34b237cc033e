/* ---- half precision on every device: each kernel entry stages float16/bfloat16 operands
   in float32 on the operand's device, runs the device's float32 kernel and rounds each
   result once on the way back: the values of PyTorch's kernels, which load half into
   float32 registers and round on store (reductions and matmul accumulate in float32).
   Copies and fills convert directly (core/half.c; the GPU unit's copy kernels the same
   bits); gathers and plain scatters on the CPU move 2-byte elements as they are. One
   set of entries serves the CPU's table (over its float32 kernels, tn__cpu_f32_backend)
   and the wrapper tn__backend puts over a GPU's registered table (tn__half_wrap), whose
   unit then sees half operands only in copy, fill and matmul (cuBLAS's half GEMM; it
   returns 1 for a layout it cannot take, and the operands are staged instead). ---- */
static int tn__cpu_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k);
static int tn__cpu_im2col(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom);
static int tn__cpu_pool_argmax(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw);

/* the CPU's float32 kernels as a table: what the CPU's half entries stage around */
static const tn_backend tn__cpu_f32_backend = {
    "cpu", tn__cpu_alloc, tn__cpu_free, tn__cpu_copy, tn__cpu_fill, tn__cpu_unary, tn__cpu_binary, tn__cpu_ternary,
    tn__cpu_reduce, tn__cpu_lane, tn__cpu_index, tn__cpu_nonzero, tn__cpu_matmul, tn__cpu_random,
    tn__cpu_im2col, tn__cpu_pool_argmax, tn__cpu_optim, NULL, tn__cpu_batch_norm, NULL, tn__cpu_layer_norm, tn__cpu_cross_entropy, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

enum { TN__STAGE_IN = 1, TN__STAGE_OUT = 2, TN__STAGE_INOUT = 3, TN__STAGE_MAX = 8 };
typedef struct { tn_tensor *orig[TN__STAGE_MAX], *st[TN__STAGE_MAX]; int role[TN__STAGE_MAX], n, failed; } tn__stage;

/* t as the float32 kernel sees it: t itself unless half, else a float32 tensor of t's shape
   on t's device (read from t when role has TN__STAGE_IN) whose broadcast dims keep stride 0. */
static tn_tensor *tn__stage_add(tn__stage *s, tn_tensor *t, int role) {
    if (!t || !tn__is_half(t->dtype)) return t;
    TN_ASSERT(s->n < TN__STAGE_MAX);
    int64_t rs[TN_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) rs[i] = t->strides[i] == 0 ? 1 : t->shape[i];
    tn_tensor *r = tn__new(TN_F32, t->device, rs, t->ndim);
    if (!r) { s->failed = 1; return t; }
    if (role & TN__STAGE_IN) {
        tn_tensor v = *t;                         /* t's elements without the broadcast */
        memcpy(v.shape, rs, sizeof rs);
        if (tn__backend(t->device)->copy(r, &v)) s->failed = 1;
    }
    for (int i = 0; i < t->ndim; i++) if (t->strides[i] == 0) { r->shape[i] = t->shape[i]; r->strides[i] = 0; }
    s->orig[s->n] = t; s->st[s->n] = r; s->role[s->n] = role; s->n++;
    return r;
}
/* After the kernel (rc): the outputs rounded back into their half tensors; the stage freed. */
static int tn__stage_end(tn__stage *s, int rc) {
    for (int i = 0; i < s->n; i++) {
        if (rc == 0 && (s->role[i] & TN__STAGE_OUT) && tn__backend(s->orig[i]->device)->copy(s->orig[i], s->st[i])) rc = -1;
        tn_release(s->st[i]);
    }
    return rc;
}
#define TN__STAGE_BEGIN(...) tn__stage stg_; stg_.n = stg_.failed = 0; tn_tensor *ts_[] = {__VA_ARGS__}; \
    bool any_ = false; for (size_t i_ = 0; i_ < sizeof ts_ / sizeof ts_[0]; i_++) any_ = any_ || (ts_[i_] && tn__is_half(ts_[i_]->dtype))
#define TN__STAGE_RUN(call) (stg_.failed ? tn__stage_end(&stg_, -1) : tn__stage_end(&stg_, (call)))

/* The entries over the float32 table in (the CPU's, or a GPU's registered one). */
static int tn__half_unary(const tn_backend *in, tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params) {
    TN__STAGE_BEGIN(out, x);
    if (!any_) return in->unary(op, out, x, params);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(in->unary(op, so, sx, params));
}
static int tn__half_binary(const tn_backend *in, tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha) {
    TN__STAGE_BEGIN(out, a, b);
    if (!any_) return in->binary(op, out, a, b, alpha);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *sa = tn__stage_add(&stg_, a, TN__STAGE_IN), *sb = tn__stage_add(&stg_, b, TN__STAGE_IN);
    return TN__STAGE_RUN(in->binary(op, so, sa, sb, alpha));
}
static int tn__half_ternary(const tn_backend *in, tn_ternary_op op, tn_tensor *out, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    TN__STAGE_BEGIN(out, x, y, z);
    if (!any_) return in->ternary(op, out, x, y, z, value);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    tn_tensor *sy = tn__stage_add(&stg_, y, TN__STAGE_IN), *sz = tn__stage_add(&stg_, z, TN__STAGE_IN);
    return TN__STAGE_RUN(in->ternary(op, so, sx, sy, sz, value));
}
static int tn__half_reduce(const tn_backend *in, tn_reduce_op op, tn_tensor *out, tn_tensor *x) {
    TN__STAGE_BEGIN(out, x);
    if (!any_) return in->reduce(op, out, x);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_INOUT)   /* out holds the start value */, *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(in->reduce(op, so, sx));
}
static int tn__half_lane(const tn_backend *in, tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag) {
    TN__STAGE_BEGIN(out, out1, x);
    if (!any_) return in->lane(op, out, out1, x, dim, flag);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *so1 = tn__stage_add(&stg_, out1, TN__STAGE_OUT), *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(in->lane(op, so, so1, sx, dim, flag));
}
/* The indexed side reaches its elements through offsets past its view (stride 0 on the
   indexed dims): src for GATHER, dst for the scatters. Its whole storage is staged, and
   its view moved onto the float32 copy (*view); whole is the copy, flat the half original. */
static tn_tensor *tn__stage_whole(tn_tensor *t, tn_tensor *view, tn_tensor *flat) {
    const int64_t n = (int64_t)(t->storage->nbytes / 2);
    *flat = *t;                                   /* the whole storage as a 1-d half tensor */
    flat->ndim = 1; flat->shape[0] = n; flat->strides[0] = 1; flat->offset = 0;
    tn_tensor *whole = tn__new(TN_F32, t->device, &n, 1);
    if (!whole || tn__backend(t->device)->copy(whole, flat)) { tn_release(whole); return NULL; }
    *view = *t;
    view->dtype = TN_F32; view->storage = whole->storage;
    return whole;
}
/* The CPU moves the bytes of gathers and plain scatters; a GPU's are staged too (exact both
   ways), so its unit never indexes 2-byte elements. */
static int tn__half_index(const tn_backend *in, tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k) {
    const bool bytes = in == &tn__cpu_f32_backend && (mode == GATHER || mode == SCATTER);
    if ((!tn__is_half(dst->dtype) && (!src || !tn__is_half(src->dtype))) || bytes) return in->index(mode, dst, src, idx, idx_strides, k);
    tn_tensor *far = mode == GATHER ? src : dst, view, flat;   /* the side the offsets move in */
    tn_tensor *whole = NULL;
    if (tn__is_half(far->dtype) && !(whole = tn__stage_whole(far, &view, &flat))) return -1;
    TN__STAGE_BEGIN(mode == GATHER ? dst : src);
    tn_tensor *near = tn__stage_add(&stg_, mode == GATHER ? dst : src, mode == GATHER ? TN__STAGE_OUT : TN__STAGE_IN);
    tn_tensor *fv = whole ? &view : far;
    int rc = stg_.failed ? -1 : mode == GATHER ? in->index(mode, near, fv, idx, idx_strides, k) : in->index(mode, fv, near, idx, idx_strides, k);
    if (rc == 0 && whole && mode != GATHER) rc = tn__backend(dst->device)->copy(&flat, whole);
    tn_release(whole);
    (void)any_;
    return tn__stage_end(&stg_, rc);
}
static tn_tensor *tn__half_nonzero(const tn_backend *in, tn_tensor *x) {
    if (!tn__is_half(x->dtype)) return in->nonzero(x);
    tn_tensor *sx = tn__copy_as(x, TN_F32, x->device), *r = sx ? in->nonzero(sx) : NULL;
    tn_release(sx);
    return r;
}
static int tn__half_matmul(const tn_backend *in, tn_tensor *c, tn_tensor *a, tn_tensor *b, double alpha, double beta) {
    TN__STAGE_BEGIN(c, a, b);
    if (!any_) return in->matmul(c, a, b, alpha, beta);
    if (in != &tn__cpu_f32_backend && a->dtype == c->dtype && b->dtype == c->dtype) {   /* a GPU's half GEMM, unless it declines (1) */
        int rc = in->matmul(c, a, b, alpha, beta);
        if (rc != 1) return rc;
    }
    tn_tensor *sc = tn__stage_add(&stg_, c, beta != 0 ? TN__STAGE_INOUT : TN__STAGE_OUT);
    tn_tensor *sa = tn__stage_add(&stg_, a, TN__STAGE_IN), *sb = tn__stage_add(&stg_, b, TN__STAGE_IN);
    return TN__STAGE_RUN(in->matmul(sc, sa, sb, alpha, beta));
}
static int tn__half_random(const tn_backend *in, tn_random_op op, tn_tensor *out, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range) {
    TN__STAGE_BEGIN(out);
    if (!any_) return in->random(op, out, seed, offset, a, b, low, range);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT);
    return TN__STAGE_RUN(in->random(op, so, seed, offset, a, b, low, range));
}
static int tn__half_im2col(const tn_backend *in, int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom) {
    TN__STAGE_BEGIN(cols, img);
    if (!any_) return in->im2col(fold, cols, img, geom);
    tn_tensor *sc = tn__stage_add(&stg_, cols, fold ? TN__STAGE_IN : TN__STAGE_OUT), *si = tn__stage_add(&stg_, img, fold ? TN__STAGE_INOUT : TN__STAGE_IN);
    return TN__STAGE_RUN(in->im2col(fold, sc, si, geom));
}
static int tn__half_pool_argmax(const tn_backend *in, tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    TN__STAGE_BEGIN(x);
    if (!any_) return in->pool_argmax(idx, x, hs, he, ws, we, dh, dw);
    tn_tensor *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(in->pool_argmax(idx, sx, hs, he, ws, we, dh, dw));
}
static int tn__half_optim(const tn_backend *in, const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    TN__STAGE_BEGIN(p, g, s[0], s[1], s[2]);
    if (!any_) return in->optim(k, p, g, s);
    tn_tensor *sp = tn__stage_add(&stg_, p, TN__STAGE_INOUT), *sg = tn__stage_add(&stg_, g, TN__STAGE_IN), *ss[3];
    for (int i = 0; i < 3; i++) ss[i] = tn__stage_add(&stg_, s[i], TN__STAGE_INOUT);
    return TN__STAGE_RUN(in->optim(k, sp, sg, ss));
}
/* The fused library entries (convolution, norms, pooling, loss) decline half operands:
   their composites run instead, through the entries above. */
static int tn__half_conv2d(const tn_backend *in, int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *geom) {
    return tn__is_half(x->dtype) || tn__is_half(w->dtype) || tn__is_half(y->dtype) ? 1 : in->conv2d(mode, x, w, y, geom);
}
static int tn__half_batch_norm(const tn_backend *in, int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                               tn_tensor *gb, double eps) {
    return tn__is_half(x->dtype) ? 1 : in->batch_norm(mode, x, w, b, st, y, gx, gw, gb, eps);
}
static int tn__half_pool2d(const tn_backend *in, tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *geom) {
    return tn__is_half(x->dtype) ? 1 : in->pool2d(x, y, gy, gx, geom);
}
static int tn__half_layer_norm(const tn_backend *in, int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                               tn_tensor *gb, double eps) {
    return tn__is_half(x->dtype) ? 1 : in->layer_norm(mode, x, w, b, st, y, gx, gw, gb, eps);
}
static int tn__half_cross_entropy(const tn_backend *in, int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx) {
    return tn__is_half(x->dtype) ? 1 : in->cross_entropy(mode, x, t, wr, lse, out, gx);
}

/* Each entry twice: tn__cpu_half_X over the CPU's kernels (the CPU's table, backend/cpu.c),
   tn__gpu_half_X over the table registered for TN_CUDA (the unit or the stand-in). */
#define TN__HALF_ENTRY_GPU(ret, name, params, ...) \
    static ret tn__gpu_half_##name params { return tn__half_##name(tn__backends[TN_CUDA], __VA_ARGS__); }
#define TN__HALF_ENTRY(ret, name, params, ...) \
    static ret tn__cpu_half_##name params { return tn__half_##name(&tn__cpu_f32_backend, __VA_ARGS__); } \
    TN__HALF_ENTRY_GPU(ret, name, params, __VA_ARGS__)
TN__HALF_ENTRY(int, unary, (tn_unary_op op, tn_tensor *o, tn_tensor *x, const double *p), op, o, x, p)
TN__HALF_ENTRY(int, binary, (tn_binary_op op, tn_tensor *o, tn_tensor *a, tn_tensor *b, double al), op, o, a, b, al)
TN__HALF_ENTRY(int, ternary, (tn_ternary_op op, tn_tensor *o, tn_tensor *a, tn_tensor *b, tn_tensor *c, double v), op, o, a, b, c, v)
TN__HALF_ENTRY(int, reduce, (tn_reduce_op op, tn_tensor *o, tn_tensor *x), op, o, x)
TN__HALF_ENTRY(int, lane, (tn_lane_op op, tn_tensor *o, tn_tensor *o1, tn_tensor *x, int64_t d, int f), op, o, o1, x, d, f)
TN__HALF_ENTRY(int, index, (tn_index_mode m, tn_tensor *d, tn_tensor *s, tn_tensor *const *idx, const int64_t *is, int k), m, d, s, idx, is, k)
TN__HALF_ENTRY(tn_tensor *, nonzero, (tn_tensor *x), x)
TN__HALF_ENTRY(int, matmul, (tn_tensor *c, tn_tensor *a, tn_tensor *b, double al, double be), c, a, b, al, be)
TN__HALF_ENTRY(int, random, (tn_random_op op, tn_tensor *o, uint64_t s, uint64_t off, double a, double b, int64_t l, uint64_t r), op, o, s, off, a, b, l, r)
TN__HALF_ENTRY(int, im2col, (int f, tn_tensor *c, tn_tensor *i, const int64_t *g), f, c, i, g)
TN__HALF_ENTRY(int, pool_argmax, (tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw),
               idx, x, hs, he, ws, we, dh, dw)
TN__HALF_ENTRY(int, optim, (const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *st), k, p, g, st)
TN__HALF_ENTRY_GPU(int, conv2d, (int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *g), mode, x, w, y, g)
TN__HALF_ENTRY(int, batch_norm, (int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb, double eps),
               mode, x, w, b, st, y, gx, gw, gb, eps)
TN__HALF_ENTRY_GPU(int, pool2d, (tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *g), x, y, gy, gx, g)
TN__HALF_ENTRY(int, layer_norm, (int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, tn_tensor *gb, double eps),
               mode, x, w, b, st, y, gx, gw, gb, eps)
TN__HALF_ENTRY(int, cross_entropy, (int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx), mode, x, t, wr, lse, out, gx)
#undef TN__HALF_ENTRY
#undef TN__HALF_ENTRY_GPU

/* A GPU's registered table seen through the half entries: alloc, free, copy, fill and
   check_index its own, every other entry staged; the optional entries it leaves NULL stay
   NULL (callers choose paths by them). One wrapper per registered table, made on first use
   and kept (tables are static: the unit's, the stand-ins', a user's). */
static struct { const tn_backend *in; tn_backend out; } tn__half_wraps[8];
static int tn__half_nwraps, tn__half_wrap_lock;
static const tn_backend *tn__half_wrap(const tn_backend *in) {
    const int n = TN__ATOMIC_LOAD(&tn__half_nwraps);
    for (int i = 0; i < n; i++)
        if (tn__half_wraps[i].in == in) return &tn__half_wraps[i].out;
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_exchange_n(&tn__half_wrap_lock, 1, __ATOMIC_ACQUIRE)) {}
#endif
    const tn_backend *r = in;   /* more tables than slots: unwrapped (half operands then reach the table itself) */
    int m = tn__half_nwraps, i = 0;
    while (i < m && tn__half_wraps[i].in != in) i++;
    if (i < m) r = &tn__half_wraps[i].out;
    else if (m < (int)(sizeof tn__half_wraps / sizeof tn__half_wraps[0])) {
        tn_backend w = *in;
        w.unary = tn__gpu_half_unary; w.binary = tn__gpu_half_binary; w.ternary = tn__gpu_half_ternary; w.reduce = tn__gpu_half_reduce;
        w.lane = tn__gpu_half_lane; w.index = tn__gpu_half_index; w.nonzero = tn__gpu_half_nonzero; w.matmul = tn__gpu_half_matmul;
        w.random = tn__gpu_half_random; w.im2col = tn__gpu_half_im2col; w.pool_argmax = tn__gpu_half_pool_argmax; w.optim = tn__gpu_half_optim;
        if (in->conv2d) w.conv2d = tn__gpu_half_conv2d;
        if (in->batch_norm) w.batch_norm = tn__gpu_half_batch_norm;
        if (in->pool2d) w.pool2d = tn__gpu_half_pool2d;
        if (in->layer_norm) w.layer_norm = tn__gpu_half_layer_norm;
        if (in->cross_entropy) w.cross_entropy = tn__gpu_half_cross_entropy;
        tn__half_wraps[m].in = in;
        tn__half_wraps[m].out = w;
        r = &tn__half_wraps[m].out;
        TN__ATOMIC_ADD(&tn__half_nwraps, 1);   /* published after the slot is written */
    }
#if defined(__GNUC__) || defined(__clang__)
    __atomic_store_n(&tn__half_wrap_lock, 0, __ATOMIC_RELEASE);
#endif
    return r;
}
