/* ---- lane ops: one dim at a time (arg-extremes, scans, softmax, sort) ----
   The iterator walks every position of the other dims; the lane function then runs
   along `dim` with the lane stride of each operand. */
typedef struct tn__lctx {
    tn_lane_op op;
    int64_t len, so, so1, sx; /* lane length and byte strides of out, out1, x */
    int flag;
    int64_t *ix, *tmp;        /* sort scratch: 2 * len indices */
    const void *vals;
} tn__lctx;

/* Stable merge sort of indices ix[0..n) by less(vals, a, b). */
typedef bool (*tn__less_fn)(const void *vals, int64_t a, int64_t b);
static void tn__msort(int64_t *ix, int64_t *tmp, int64_t n, const void *vals, tn__less_fn less) {
    if (n < 2) return;
    if (n <= 16) { /* insertion sort: stable */
        for (int64_t i = 1; i < n; i++) {
            int64_t v = ix[i], j = i;
            while (j > 0 && less(vals, v, ix[j - 1])) { ix[j] = ix[j - 1]; j--; }
            ix[j] = v;
        }
        return;
    }
    int64_t h = n / 2;
    tn__msort(ix, tmp, h, vals, less);
    tn__msort(ix + h, tmp, n - h, vals, less);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = less(vals, ix[j], ix[i]) ? ix[j++] : ix[i++];
    while (i < h) tmp[k++] = ix[i++];
    while (j < n) tmp[k++] = ix[j++];
    memcpy(ix, tmp, (size_t)n * sizeof *ix);
}

/* x != x: NaN for any T (a macro: for integer T the compiler sees no self-comparison to warn of) */
#define TN__NAN(x) ((x) != (x))
/* @template TN__DEFINE_LANE(E, T, S, ACC) */
static bool tn__lt_##S(const void *v, int64_t a, int64_t b) { /* NaN is largest */
    T x = ((const T *)v)[a], y = ((const T *)v)[b]; return !TN__NAN(x) && (TN__NAN(y) || x < y); }
static bool tn__gt_##S(const void *v, int64_t a, int64_t b) {
    T x = ((const T *)v)[a], y = ((const T *)v)[b]; return (TN__NAN(x) && !TN__NAN(y)) || x > y; }
static void tn__lane_##S(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__lctx *c = (tn__lctx *)vc;
    int64_t len = c->len;
    for (int64_t e = 0; e < n; e++) {
        char *o = p[0] + e * s[0], *o1 = p[1] + e * s[1], *xp = p[2] + e * s[2];
        const int64_t so = c->so, so1 = c->so1, sx = c->sx;
        (void)so1;
        switch (c->op) {
        case ARGMAX: case ARGMIN: {
            T best = *(const T *)xp; int64_t bi = 0;
            for (int64_t i = 1; i < len && !TN__NAN(best); i++) {
                T v = *(const T *)(xp + i * sx);
                if (TN__NAN(v) || (c->op == ARGMAX ? v > best : v < best)) { best = v; bi = i; } }
            if (c->flag) *(T *)o = best;
            *(int64_t *)o1 = bi; break; }
        case CUMSUM: case CUMPROD: { /* float scans accumulate in double, integer ones wrap in uint64 */
            ACC acc = c->op == CUMSUM ? (ACC)0 : (ACC)1;
            for (int64_t i = 0; i < len; i++) {
                ACC v = (ACC)*(const T *)(xp + i * sx);
                acc = c->op == CUMSUM ? (ACC)(acc + v) : (ACC)(acc * v);
                *(T *)(o + i * so) = (T)acc; } break; }
        case SORT: {
            T *vals = (T *)(c->tmp + len);
            for (int64_t i = 0; i < len; i++) { vals[i] = *(const T *)(xp + i * sx); c->ix[i] = i; }
            tn__msort(c->ix, c->tmp, len, vals, c->flag ? tn__gt_##S : tn__lt_##S);
            for (int64_t i = 0; i < len; i++) {
                *(T *)(o + i * so) = vals[c->ix[i]]; *(int64_t *)(o1 + i * so1) = c->ix[i]; } break; }
        default: tn__lane_float_##S(c, o, xp); break;
        } } }
/* @end TN__DEFINE_LANE */

/* softmax and log_softmax along a lane, float types only (others never reach here) */
#define TN__DEFINE_LANE_FLOAT(T, S, F) \
    static void tn__lane_float_##S(tn__lctx *c, char *o, char *xp) { \
        int64_t len = c->len, so = c->so, sx = c->sx; \
        T m = -(T)INFINITY; double sum = 0; \
        for (int64_t i = 0; i < len; i++) { T v = *(const T *)(xp + i * sx); m = (v != v || v > m) ? v : m; } \
        for (int64_t i = 0; i < len; i++) sum += exp##F(*(const T *)(xp + i * sx) - m); \
        if (c->op == SOFTMAX) { T inv = (T)(1.0 / sum); \
            for (int64_t i = 0; i < len; i++) *(T *)(o + i * so) = exp##F(*(const T *)(xp + i * sx) - m) * inv; \
        } else { T ls = (T)log(sum); /* (x - m) - log(sum): never forms the large m + log(sum) */ \
            for (int64_t i = 0; i < len; i++) *(T *)(o + i * so) = (*(const T *)(xp + i * sx) - m) - ls; } }
TN__DEFINE_LANE_FLOAT(float, f32, f)
TN__DEFINE_LANE_FLOAT(double, f64, )
#define TN__DEFINE_LANE_FLOAT_NONE(S) static void tn__lane_float_##S(tn__lctx *c, char *o, char *xp) { (void)c; (void)o; (void)xp; }
TN__DEFINE_LANE_FLOAT_NONE(i32) TN__DEFINE_LANE_FLOAT_NONE(i64) TN__DEFINE_LANE_FLOAT_NONE(u8)
TN__DEFINE_LANE(TN_F32, float, f32, double)
TN__DEFINE_LANE(TN_F64, double, f64, double)
TN__DEFINE_LANE(TN_I32, int32_t, i32, uint64_t)
TN__DEFINE_LANE(TN_I64, int64_t, i64, uint64_t)
TN__DEFINE_LANE(TN_U8, uint8_t, u8, uint64_t) /* bool lanes (sort, argmax) run as uint8 */

static int tn__cpu_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag) {
    tn__lctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.flag = flag;
    int nd = x->ndim ? x->ndim : 1;
    int64_t shape[TN_MAX_DIMS];
    tn_tensor xv = tn__shallow(x), ov, o1v;
    if (x->ndim == 0) { xv.ndim = 1; xv.shape[0] = 1; xv.strides[0] = 1; }
    c.len = xv.shape[dim];
    int64_t es = (int64_t)tn_dtype_size(x->dtype);
    c.sx = tn__mul_or(xv.strides[dim], es, 0);   /* 0: an empty tensor's, never used */
    memcpy(shape, xv.shape, sizeof shape);
    shape[dim] = 1;
    tn_tensor *o = out ? out : out1, *o1 = out1 ? out1 : out;
    ov = tn__shallow(o); o1v = tn__shallow(o1);
    if (ov.ndim == 0) { ov.ndim = 1; ov.shape[0] = 1; ov.strides[0] = 1; }
    if (o1v.ndim == 0) { o1v.ndim = 1; o1v.shape[0] = 1; o1v.strides[0] = 1; }
    c.so = tn__mul_or(ov.strides[dim], (int64_t)tn_dtype_size(ov.dtype), 0);
    c.so1 = tn__mul_or(o1v.strides[dim], (int64_t)tn_dtype_size(o1v.dtype), 0);
    if (op == ARGMAX || op == ARGMIN) c.flag = out != NULL;
    if (op == SORT) {
        c.ix = (int64_t *)tn__malloc_n("sort", c.len ? c.len : 1, 2 * sizeof(int64_t) + 8);
        if (!c.ix) return -1;
        c.tmp = c.ix + c.len;
    }
    tn_tensor xr = tn__restride(&xv, shape, nd), orr = tn__restride(&ov, shape, nd), o1r = tn__restride(&o1v, shape, nd);
    tn__iter it;
    tn__iter_init(&it, shape, nd);
    tn__iter_add(&it, &orr);
    tn__iter_add(&it, &o1r);
    tn__iter_add(&it, &xr);
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__lane_f32, tn__lane_f64, tn__lane_i32, tn__lane_i64, tn__lane_u8, tn__lane_u8);
    if (fn && c.len > 0 && op == SORT) tn__iter_run(&it, fn, &c);   /* one scratch buffer */
    else if (fn && c.len > 0) tn__iter_run_par(&it, fn, &c, tn_numel(x));
    TN_FREE(c.ix);
    return fn ? 0 : TN__FAIL_INT("lane op: dtype %s is not supported on the CPU", tn_dtype_name(x->dtype));
}

/* Values and/or indices of the first max/min along dim. */
static tn_tensor *tn__arg_extreme(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim, bool keepdim, bool want_values, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    if (x->ndim && x->shape[d] == 0)
        return (tn_tensor *)tn__error("%s: expected reduction dim %d to have non-zero size (input shape %s)", fn, d, TN__SHAPE(x));
    int64_t kshape[TN_MAX_DIMS];
    memcpy(kshape, x->shape, sizeof kshape);
    if (x->ndim) kshape[d] = 1;
    tn_tensor *vals = want_values ? tn__new(x->dtype, x->device, kshape, x->ndim) : NULL;
    tn_tensor *idx = tn__new(TN_I64, x->device, kshape, x->ndim);
    if ((want_values && !vals) || !idx || tn__backend(x->device)->lane(op, vals, idx, x, d, 0)) {
        tn_release(vals); tn_release(idx);
        return NULL;
    }
    tn_tensor *both[2] = {vals, idx};
    for (int k = 0; k < 2 && !keepdim && x->ndim; k++) {
        tn_tensor *t = both[k];
        if (!t) continue;
        for (int i = d; i < t->ndim - 1; i++) { t->shape[i] = t->shape[i + 1]; t->strides[i] = t->strides[i + 1]; }
        t->ndim--;
    }
    tn_node *node = vals ? tn__node_new(op == ARGMAX ? G_MAX_DIM : G_MIN_DIM, 0, &x, 1) : NULL;
    if (node) { node->i[0] = d; node->i[1] = keepdim; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = tn__own(idx); else tn_release(idx);
    return want_values ? tn__own(vals) : NULL;
}

TNDEF tn_tensor *tn_max_dim(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **indices) { return tn__arg_extreme("tn_max_dim", ARGMAX, x, dim, keepdim, true, indices); }
TNDEF tn_tensor *tn_min_dim(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **indices) { return tn__arg_extreme("tn_min_dim", ARGMIN, x, dim, keepdim, true, indices); }
TNDEF tn_tensor *tn_argmax_dim(tn_tensor *x, int64_t dim, bool keepdim) {
    tn_tensor *idx = NULL;
    tn__arg_extreme("tn_argmax_dim", ARGMAX, x, dim, keepdim, false, &idx);
    return idx;
}
TNDEF tn_tensor *tn_argmin_dim(tn_tensor *x, int64_t dim, bool keepdim) {
    tn_tensor *idx = NULL;
    tn__arg_extreme("tn_argmin_dim", ARGMIN, x, dim, keepdim, false, &idx);
    return idx;
}
static tn_tensor *tn__arg_flat(const char *fn, tn_lane_op op, tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (tn_numel(x) == 0) return (tn_tensor *)tn__error("%s: expected a non-empty tensor (input shape %s)", fn, TN__SHAPE(x));
    tn_scope_begin();
    int64_t m1 = -1;
    tn_tensor *idx = NULL;
    tn__arg_extreme(fn, op, tn_reshape(x, &m1, 1), 0, false, false, &idx);
    idx = tn_keep(idx);
    tn_scope_end();
    return idx;
}
TNDEF tn_tensor *tn_argmax(tn_tensor *x) { return tn__arg_flat("tn_argmax", ARGMAX, x); }
TNDEF tn_tensor *tn_argmin(tn_tensor *x) { return tn__arg_flat("tn_argmin", ARGMIN, x); }

/* Lane op producing a tensor shaped like x (scans, softmax) in dtype od. */
static tn_tensor *tn__lane_like(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim, tn_dtype od) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    tn_tensor *xc = tn__as_dtype(x, od);
    tn_tensor *out = xc ? tn__new(od, x->device, x->shape, x->ndim) : NULL;
    if (out && tn__backend(x->device)->lane(op, out, NULL, xc, d, 0)) { tn_release(out); out = NULL; }
    tn_release(xc);
    tn__gop g = op == CUMSUM ? G_CUMSUM : op == CUMPROD ? G_CUMPROD : op == SOFTMAX ? G_SOFTMAX : G_LOG_SOFTMAX;
    tn_node *node = out ? tn__node_new(g, 0, &x, 1) : NULL;
    if (node) {
        node->i[0] = d;
        if (g == G_CUMPROD) tn__node_save(node, x);
        if (g != G_CUMSUM) tn__node_save_result(node, out); /* softmax and log_softmax: the result only */
    }
    return tn__own(tn__node_attach(node, out));
}
static tn_dtype tn__scan_dtype(tn_dtype d) { return tn_dtype_is_floating(d) ? d : TN_I64; }
TNDEF tn_tensor *tn_cumsum(tn_tensor *x, int64_t dim) { return tn__lane_like("tn_cumsum", CUMSUM, x, dim, x ? tn__scan_dtype(x->dtype) : TN_F32); }
TNDEF tn_tensor *tn_cumprod(tn_tensor *x, int64_t dim) { return tn__lane_like("tn_cumprod", CUMPROD, x, dim, x ? tn__scan_dtype(x->dtype) : TN_F32); }

TNDEF tn_tensor *tn_sort(tn_tensor *x, int64_t dim, bool descending, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_sort", x)) return NULL;
    int d = tn__wrap_dim("tn_sort", dim, x->ndim);
    if (d < 0) return NULL;
    tn_tensor *vals = tn__new(x->dtype, x->device, x->shape, x->ndim), *idx = tn__new(TN_I64, x->device, x->shape, x->ndim);
    if (!vals || !idx || tn__backend(x->device)->lane(SORT, vals, idx, x, d, descending)) {
        tn_release(vals); tn_release(idx);
        return NULL;
    }
    tn_node *node = tn__node_new(G_SORT, 0, &x, 1);
    if (node) { node->i[0] = d; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = tn__own(idx); else tn_release(idx);
    return tn__own(vals);
}

TNDEF tn_tensor *tn_argsort(tn_tensor *x, int64_t dim, bool descending) {
    tn_tensor *idx = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_argsort", x) || tn__wrap_dim("tn_argsort", dim, x->ndim) < 0) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn_sort(x, dim, descending, &idx);
    idx = v ? tn_keep(idx) : NULL;
    tn_scope_end();
    return idx;
}

TNDEF tn_tensor *tn_topk(tn_tensor *x, int64_t k, int64_t dim, bool largest, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_topk", x)) return NULL;
    int d = tn__wrap_dim("tn_topk", dim, x->ndim);
    if (d < 0) return NULL;
    int64_t size = x->ndim ? x->shape[d] : 1;
    if (k < 0 || k > size) return (tn_tensor *)tn__error("tn_topk: selected index k (%lld) out of range for dimension %d of size %lld", (long long)k, d, (long long)size);
    tn_scope_begin();
    tn_tensor *idx = NULL, *v = tn_sort(x, d, largest, &idx), *vk = NULL, *ik = NULL;
    if (v) {
        vk = x->ndim ? tn_contiguous(tn_narrow(v, d, 0, k)) : v;
        ik = x->ndim ? tn_contiguous(tn_narrow(idx, d, 0, k)) : idx;
    }
    vk = tn_keep(vk);
    ik = tn_keep(ik);
    tn_scope_end();
    if (indices) *indices = ik;
    else if (tn__nscopes == 0) tn_release(ik); /* kept for us, not wanted */
    return vk;
}
