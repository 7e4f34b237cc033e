/* ---- half precision on the CPU: every kernel entry stages float16/bfloat16 operands in
   float32, runs the float32 kernel and rounds each result once on the way back: the values
   of PyTorch's CPU kernels, which load half into float32 registers and round on store
   (reductions and matmul accumulate in float32). Copies and fills convert directly
   (core/half.c); gathers and plain scatters move 2-byte elements as they are. ---- */
static int tn__cpu_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k);
static int tn__cpu_im2col(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom);
static int tn__cpu_pool_argmax(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw);

enum { TN__STAGE_IN = 1, TN__STAGE_OUT = 2, TN__STAGE_INOUT = 3, TN__STAGE_MAX = 8 };
typedef struct { tn_tensor *orig[TN__STAGE_MAX], *st[TN__STAGE_MAX]; int role[TN__STAGE_MAX], n, failed; } tn__stage;

/* t as the float32 kernel sees it: t itself unless half, else a float32 tensor of t's shape
   (read from t when role has TN__STAGE_IN) whose broadcast dims keep stride 0. */
static tn_tensor *tn__stage_add(tn__stage *s, tn_tensor *t, int role) {
    if (!t || !tn__is_half(t->dtype)) return t;
    TN_ASSERT(s->n < TN__STAGE_MAX);
    int64_t rs[TN_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) rs[i] = t->strides[i] == 0 ? 1 : t->shape[i];
    tn_tensor *r = tn__new(TN_F32, TN_CPU, rs, t->ndim);
    if (!r) { s->failed = 1; return t; }
    if (role & TN__STAGE_IN) {
        tn_tensor v = *t;                         /* t's elements without the broadcast */
        memcpy(v.shape, rs, sizeof rs);
        if (tn__cpu_copy(r, &v)) s->failed = 1;
    }
    for (int i = 0; i < t->ndim; i++) if (t->strides[i] == 0) { r->shape[i] = t->shape[i]; r->strides[i] = 0; }
    s->orig[s->n] = t; s->st[s->n] = r; s->role[s->n] = role; s->n++;
    return r;
}
/* After the kernel (rc): the outputs rounded back into their half tensors; the stage freed. */
static int tn__stage_end(tn__stage *s, int rc) {
    for (int i = 0; i < s->n; i++) {
        if (rc == 0 && (s->role[i] & TN__STAGE_OUT) && tn__cpu_copy(s->orig[i], s->st[i])) rc = -1;
        tn_release(s->st[i]);
    }
    return rc;
}
#define TN__STAGE_BEGIN(...) tn__stage stg_; stg_.n = stg_.failed = 0; tn_tensor *ts_[] = {__VA_ARGS__}; \
    bool any_ = false; for (size_t i_ = 0; i_ < sizeof ts_ / sizeof ts_[0]; i_++) any_ = any_ || (ts_[i_] && tn__is_half(ts_[i_]->dtype))
#define TN__STAGE_RUN(call) (stg_.failed ? tn__stage_end(&stg_, -1) : tn__stage_end(&stg_, (call)))

static int tn__cpu_half_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params) {
    TN__STAGE_BEGIN(out, x);
    if (!any_) return tn__cpu_unary(op, out, x, params);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_unary(op, so, sx, params));
}
static int tn__cpu_half_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha) {
    TN__STAGE_BEGIN(out, a, b);
    if (!any_) return tn__cpu_binary(op, out, a, b, alpha);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *sa = tn__stage_add(&stg_, a, TN__STAGE_IN), *sb = tn__stage_add(&stg_, b, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_binary(op, so, sa, sb, alpha));
}
static int tn__cpu_half_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    TN__STAGE_BEGIN(out, x, y, z);
    if (!any_) return tn__cpu_ternary(op, out, x, y, z, value);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    tn_tensor *sy = tn__stage_add(&stg_, y, TN__STAGE_IN), *sz = tn__stage_add(&stg_, z, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_ternary(op, so, sx, sy, sz, value));
}
static int tn__cpu_half_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) {
    TN__STAGE_BEGIN(out, x);
    if (!any_) return tn__cpu_reduce(op, out, x);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_INOUT)   /* out holds the start value */, *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_reduce(op, so, sx));
}
static int tn__cpu_half_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag) {
    TN__STAGE_BEGIN(out, out1, x);
    if (!any_) return tn__cpu_lane(op, out, out1, x, dim, flag);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT), *so1 = tn__stage_add(&stg_, out1, TN__STAGE_OUT), *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_lane(op, so, so1, sx, dim, flag));
}
/* The accumulating scatters reach dst's elements through offsets past its view (stride 0
   on the indexed dims): the whole storage is staged, and dst's view moved onto the copy. */
static int tn__cpu_half_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k) {
    if (!tn__is_half(dst->dtype) || mode == GATHER || mode == SCATTER) return tn__cpu_index(mode, dst, src, idx, idx_strides, k);   /* bytes moved */
    const int64_t n = (int64_t)(dst->storage->nbytes / 2);
    tn_tensor flat = *dst;                        /* the whole storage as a 1-d half tensor */
    flat.ndim = 1; flat.shape[0] = n; flat.strides[0] = 1; flat.offset = 0;
    tn_tensor *whole = tn__new(TN_F32, TN_CPU, &n, 1);
    if (!whole) return -1;
    TN__STAGE_BEGIN(src);
    tn_tensor *ss = tn__stage_add(&stg_, src, TN__STAGE_IN);
    tn_tensor sd = *dst;
    sd.dtype = TN_F32; sd.storage = whole->storage;
    int rc = stg_.failed || tn__cpu_copy(whole, &flat) ? -1 : tn__cpu_index(mode, &sd, ss, idx, idx_strides, k);
    if (rc == 0) rc = tn__cpu_copy(&flat, whole);
    tn_release(whole);
    (void)any_;
    return tn__stage_end(&stg_, rc);
}
static tn_tensor *tn__cpu_half_nonzero(tn_tensor *x) {
    if (!tn__is_half(x->dtype)) return tn__cpu_nonzero(x);
    tn_tensor *sx = tn__copy_as(x, TN_F32, TN_CPU), *r = sx ? tn__cpu_nonzero(sx) : NULL;
    tn_release(sx);
    return r;
}
static int tn__cpu_half_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double alpha, double beta) {
    TN__STAGE_BEGIN(c, a, b);
    if (!any_) return tn__cpu_matmul(c, a, b, alpha, beta);
    tn_tensor *sc = tn__stage_add(&stg_, c, beta != 0 ? TN__STAGE_INOUT : TN__STAGE_OUT);
    tn_tensor *sa = tn__stage_add(&stg_, a, TN__STAGE_IN), *sb = tn__stage_add(&stg_, b, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_matmul(sc, sa, sb, alpha, beta));
}
static int tn__cpu_half_random(tn_random_op op, tn_tensor *out, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range) {
    TN__STAGE_BEGIN(out);
    if (!any_) return tn__cpu_random(op, out, seed, offset, a, b, low, range);
    tn_tensor *so = tn__stage_add(&stg_, out, TN__STAGE_OUT);
    return TN__STAGE_RUN(tn__cpu_random(op, so, seed, offset, a, b, low, range));
}
static int tn__cpu_half_im2col(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom) {
    TN__STAGE_BEGIN(cols, img);
    if (!any_) return tn__cpu_im2col(fold, cols, img, geom);
    tn_tensor *sc = tn__stage_add(&stg_, cols, fold ? TN__STAGE_IN : TN__STAGE_OUT), *si = tn__stage_add(&stg_, img, fold ? TN__STAGE_INOUT : TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_im2col(fold, sc, si, geom));
}
static int tn__cpu_half_pool_argmax(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    TN__STAGE_BEGIN(x);
    if (!any_) return tn__cpu_pool_argmax(idx, x, hs, he, ws, we, dh, dw);
    tn_tensor *sx = tn__stage_add(&stg_, x, TN__STAGE_IN);
    return TN__STAGE_RUN(tn__cpu_pool_argmax(idx, sx, hs, he, ws, we, dh, dw));
}
static int tn__cpu_half_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    TN__STAGE_BEGIN(p, g, s[0], s[1], s[2]);
    if (!any_) return tn__cpu_optim(k, p, g, s);
    tn_tensor *sp = tn__stage_add(&stg_, p, TN__STAGE_INOUT), *sg = tn__stage_add(&stg_, g, TN__STAGE_IN), *ss[3];
    for (int i = 0; i < 3; i++) ss[i] = tn__stage_add(&stg_, s[i], TN__STAGE_INOUT);
    return TN__STAGE_RUN(tn__cpu_optim(k, sp, sg, ss));
}
/* The fused norm and loss kernels decline half operands: their composites run instead. */
static int tn__cpu_half_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                                   tn_tensor *gb, double eps) {
    return tn__is_half(x->dtype) ? 1 : tn__cpu_batch_norm(mode, x, w, b, st, y, gx, gw, gb, eps);
}
static int tn__cpu_half_layer_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                                   tn_tensor *gb, double eps) {
    return tn__is_half(x->dtype) ? 1 : tn__cpu_layer_norm(mode, x, w, b, st, y, gx, gw, gb, eps);
}
static int tn__cpu_half_cross_entropy(int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx) {
    return tn__is_half(x->dtype) ? 1 : tn__cpu_cross_entropy(mode, x, t, wr, lse, out, gx);
}
