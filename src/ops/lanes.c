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

/* PyTorch's CPU sort(stable=False) is libstdc++'s std::sort of (value, index) pairs, so its
   order of equal values is that algorithm's: introsort (median-of-3 pivot, unguarded
   partition, heapsort past depth 2 log2 n) down to runs of 16, then insertion sort. The
   same steps on the indices ix (an index names its pair), so ties come out as PyTorch's. */
static void tn__heap_adjust(int64_t *ix, int64_t hole, int64_t len, int64_t value, const void *vals, tn__less_fn less) {
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (less(vals, ix[child], ix[child - 1])) child--;
        ix[hole] = ix[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        ix[hole] = ix[child - 1];
        hole = child - 1;
    }
    for (int64_t parent = (hole - 1) / 2; hole > top && less(vals, ix[parent], value); parent = (hole - 1) / 2) {   /* __push_heap */
        ix[hole] = ix[parent];
        hole = parent;
    }
    ix[hole] = value;
}
static void tn__heap_sort(int64_t *ix, int64_t n, const void *vals, tn__less_fn less) {   /* __partial_sort(first, last, last) */
    if (n >= 2)
        for (int64_t parent = (n - 2) / 2;; parent--) {
            tn__heap_adjust(ix, parent, n, ix[parent], vals, less);
            if (parent == 0) break;
        }
    for (int64_t last = n - 1; last > 0; last--) {   /* __sort_heap: __pop_heap to the end */
        int64_t v = ix[last];
        ix[last] = ix[0];
        tn__heap_adjust(ix, 0, last, v, vals, less);
    }
}
static void tn__introsort_loop(int64_t *ix, int64_t first, int64_t last, int depth, const void *vals, tn__less_fn less) {
    while (last - first > 16) {
        if (depth == 0) { tn__heap_sort(ix + first, last - first, vals, less); return; }
        depth--;
        /* __move_median_to_first(first, first + 1, mid, last - 1) */
        int64_t a = first + 1, b = first + (last - first) / 2, c = last - 1, m, t;
        if (less(vals, ix[a], ix[b])) m = less(vals, ix[b], ix[c]) ? b : less(vals, ix[a], ix[c]) ? c : a;
        else m = less(vals, ix[a], ix[c]) ? a : less(vals, ix[b], ix[c]) ? c : b;
        t = ix[first]; ix[first] = ix[m]; ix[m] = t;
        /* __unguarded_partition(first + 1, last, pivot = first) */
        int64_t lo = first + 1, hi = last;
        for (;;) {
            while (less(vals, ix[lo], ix[first])) lo++;
            hi--;
            while (less(vals, ix[first], ix[hi])) hi--;
            if (!(lo < hi)) break;
            t = ix[lo]; ix[lo] = ix[hi]; ix[hi] = t;
            lo++;
        }
        tn__introsort_loop(ix, lo, last, depth, vals, less);
        last = lo;
    }
}
static void tn__std_sort(int64_t *ix, int64_t n, const void *vals, tn__less_fn less) {
    if (n < 2) return;
    int lg = 0;
    while (((uint64_t)n >> (lg + 1)) != 0) lg++;
    tn__introsort_loop(ix, 0, n, 2 * lg, vals, less);
    /* __final_insertion_sort: a guarded insertion sort of the first 16, unguarded after */
    const int64_t guarded = n > 16 ? 16 : n;
    for (int64_t i = 1; i < n; i++) {
        const int64_t v = ix[i];
        if (i < guarded && less(vals, v, ix[0])) {
            memmove(ix + 1, ix, (size_t)i * sizeof *ix);
            ix[0] = v;
        } else {   /* __unguarded_linear_insert */
            int64_t j = i;
            while (j > 0 && less(vals, v, ix[j - 1])) { ix[j] = ix[j - 1]; j--; }   /* (j > 0: never false after the introsort) */
            ix[j] = v;
        }
    }
}

/* log(exp(x) + exp(y)) as PyTorch's _log_add_exp_helper: NaN propagates; two equal
   infinities give x (inf + inf = inf, -inf + -inf = -inf) rather than inf - inf. */
static double tn__log_add_exp(double x, double y) {
    double lo = y != y ? y : (y < x ? y : x), hi = y != y ? y : (x < y ? y : x);   /* std::min / std::max: x when unordered */
    if (lo != hi || isfinite(lo)) return hi + log1p(exp(lo - hi));
    return x;
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
        case CUMMAX: case CUMMIN: { /* a NaN, or a value at least as large (small), takes over: PyTorch's indices */
            T best = *(const T *)xp; int64_t bi = 0;
            for (int64_t i = 0; i < len; i++) {
                T v = *(const T *)(xp + i * sx);
                if (TN__NAN(v) || (!TN__NAN(best) && (c->op == CUMMAX ? v >= best : v <= best))) { best = v; bi = i; }
                *(T *)(o + i * so) = best; *(int64_t *)(o1 + i * so1) = bi; } break; }
        case SORT: {
            T *vals = (T *)(c->tmp + len);
            for (int64_t i = 0; i < len; i++) { vals[i] = *(const T *)(xp + i * sx); c->ix[i] = i; }
            tn__less_fn less = (c->flag & 1) ? tn__gt_##S : tn__lt_##S;   /* flag: 1 descending, 2 PyTorch's unstable order */
            if (c->flag & 2) tn__std_sort(c->ix, len, vals, less); else tn__msort(c->ix, c->tmp, len, vals, less);
            for (int64_t i = 0; i < len; i++) {
                *(T *)(o + i * so) = vals[c->ix[i]]; *(int64_t *)(o1 + i * so1) = c->ix[i]; } break; }
        default: tn__lane_float_##S(c, o, xp); break;
        } } }
/* @end TN__DEFINE_LANE */

/* softmax, log_softmax and logcumsumexp along a lane, float types only (others never reach here) */
#define TN__DEFINE_LANE_FLOAT(T, S, F) \
    static void tn__lane_float_##S(tn__lctx *c, char *o, char *xp) { \
        int64_t len = c->len, so = c->so, sx = c->sx; \
        if (c->op == LOGCUMSUMEXP) { double acc = -INFINITY; /* in double, as the float scans */ \
            for (int64_t i = 0; i < len; i++) { acc = tn__log_add_exp((double)*(const T *)(xp + i * sx), acc); *(T *)(o + i * so) = (T)acc; } \
            return; } \
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
TN__DEFINE_LANE_FLOAT_NONE(i8) TN__DEFINE_LANE_FLOAT_NONE(i16)
TN__DEFINE_LANE(TN_F32, float, f32, double)
TN__DEFINE_LANE(TN_F64, double, f64, double)
TN__DEFINE_LANE(TN_I32, int32_t, i32, uint64_t)
TN__DEFINE_LANE(TN_I64, int64_t, i64, uint64_t)
TN__DEFINE_LANE(TN_U8, uint8_t, u8, uint64_t) /* bool lanes (sort, argmax) run as uint8 */
TN__DEFINE_LANE(TN_I8, int8_t, i8, uint64_t)
TN__DEFINE_LANE(TN_I16, int16_t, i16, uint64_t)
/* complex lanes: cumprod (accumulated in complex128, as ATen's acc_type); the other lane ops
   refuse complex before they get here */
#define TN__DEFINE_LANE_COMPLEX(T, S) \
    static void tn__lane_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
        const tn__lctx *c = (const tn__lctx *)vc; \
        for (int64_t e = 0; e < n; e++) { \
            char *o = p[0] + e * s[0], *xp = p[2] + e * s[2]; \
            tn__cplx acc = tn__cx(1, 0); \
            for (int64_t i = 0; i < c->len; i++) { \
                acc = tn__cmul(acc, TN__CLOAD(T, xp + i * c->sx)); \
                TN__CSTORE(T, o + i * c->so, acc); } } }
TN__DEFINE_LANE_COMPLEX(float, c64)
TN__DEFINE_LANE_COMPLEX(double, c128)

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
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__lane_f32, tn__lane_f64, tn__lane_i32, tn__lane_i64, tn__lane_u8, tn__lane_u8, tn__lane_i8, tn__lane_i16);
    if (op == CUMPROD && tn_dtype_is_complex(x->dtype)) fn = x->dtype == TN_C64 ? tn__lane_c64 : tn__lane_c128;
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

TNDEF tn_tensor *tn_max_dim_opts(tn_tensor *x, int64_t dim, tn_tensor **indices, tn_keepdim_fn_opts o) { return tn__arg_extreme("tn_max_dim", ARGMAX, x, dim, o.keepdim, true, indices); }
TNDEF tn_tensor *tn_min_dim_opts(tn_tensor *x, int64_t dim, tn_tensor **indices, tn_keepdim_fn_opts o) { return tn__arg_extreme("tn_min_dim", ARGMIN, x, dim, o.keepdim, true, indices); }
TNDEF tn_tensor *tn_max_dim_str(tn_tensor *x, int64_t dim, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_max_dim", options, tn_max_dim_opts(x, dim, indices, o));
}
TNDEF tn_tensor *tn_min_dim_str(tn_tensor *x, int64_t dim, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_keepdim_fn_opts, keepdim, "tn_min_dim", options, tn_min_dim_opts(x, dim, indices, o));
}
static tn_tensor *tn__arg_flat(const char *fn, tn_lane_op op, tn_tensor *x);
/* dim None: the flat index, reshaped to all ones with keepdim (as torch.argmax) */
static tn_tensor *tn__argmax_dim(const char *fn, tn_lane_op op, tn_tensor *x, tn_argmax_fn_opts o) {
    tn_tensor *idx = NULL;
    if (o.dim != TN_NONE) {
        tn__arg_extreme(fn, op, x, o.dim, o.keepdim, false, &idx);
        return idx;
    }
    idx = tn__arg_flat(fn, op, x);
    if (!idx || !o.keepdim) return idx;
    int64_t ones[TN_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) ones[i] = 1;
    tn_scope_begin();
    return tn__scope_return(tn_reshape(idx, ones, x->ndim));
}
TNDEF tn_tensor *tn_argmax_dim_opts(tn_tensor *x, tn_argmax_fn_opts o) { return tn__argmax_dim("tn_argmax_dim", ARGMAX, x, o); }
TNDEF tn_tensor *tn_argmin_dim_opts(tn_tensor *x, tn_argmax_fn_opts o) { return tn__argmax_dim("tn_argmin_dim", ARGMIN, x, o); }
TNDEF tn_tensor *tn_argmax_dim_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_argmax_fn_opts, argmax, "tn_argmax_dim", options, tn_argmax_dim_opts(x, o)); }
TNDEF tn_tensor *tn_argmin_dim_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_argmax_fn_opts, argmax, "tn_argmin_dim", options, tn_argmin_dim_opts(x, o)); }
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
    tn__gop g = op == CUMSUM ? G_CUMSUM : op == CUMPROD ? G_CUMPROD : op == LOGCUMSUMEXP ? G_LOGCUMSUMEXP : op == SOFTMAX ? G_SOFTMAX : G_LOG_SOFTMAX;
    tn_node *node = out ? tn__node_new(g, 0, &x, 1) : NULL;
    if (node) {
        node->i[0] = d;
        if (g == G_CUMPROD || g == G_LOGCUMSUMEXP) tn__node_save(node, x);
        if (g != G_CUMSUM) tn__node_save_result(node, out); /* softmax and log_softmax: the result only */
    }
    return tn__own(tn__node_attach(node, out));
}
static tn_dtype tn__scan_dtype(tn_dtype d) { return tn_dtype_is_floating(d) || tn_dtype_is_complex(d) ? d : TN_I64; }
TNDEF tn_tensor *tn_cumsum(tn_tensor *x, int64_t dim) {
    if (x && tn_dtype_is_complex(x->dtype)) {   /* the parts' sums: exact, and differentiable through the views */
        tn_scope_begin();
        tn_tensor *r = tn_complex(tn_cumsum(tn_real(x), dim), tn_cumsum(tn_imag(x), dim));
        return tn__grad_name(TN__AS("tn_cumsum", tn__scope_return(r)), "CumsumBackward0");
    }
    return tn__lane_like("tn_cumsum", CUMSUM, x, dim, x ? tn__scan_dtype(x->dtype) : TN_F32);
}
TNDEF tn_tensor *tn_cumprod(tn_tensor *x, int64_t dim) {
    return tn__lane_like("tn_cumprod", CUMPROD, x, dim, x ? tn__scan_dtype(x->dtype) : TN_F32);
}
TNDEF tn_tensor *tn_logcumsumexp(tn_tensor *x, int64_t dim) {
    TN__CHECK_NULL(x);
    if (!tn_dtype_is_floating(x->dtype))   /* PyTorch has no integer kernel */
        return (tn_tensor *)tn__error("tn_logcumsumexp: \"logcumsumexp_out_cpu\" not implemented for '%s' (input %s): the input must be floating point",
                                      tn__torch_type_name(x->dtype), TN__SHAPE(x));
    return tn__lane_like("tn_logcumsumexp", LOGCUMSUMEXP, x, dim, x->dtype);
}

/* cummax / cummin: values and int64 indices shaped like x. The gradient goes back to the
   index each running extreme came from: SortBackward's scatter, under PyTorch's name. */
static tn_tensor *tn__cum_extreme(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    tn_tensor *vals = tn__new(x->dtype, x->device, x->shape, x->ndim), *idx = tn__new(TN_I64, x->device, x->shape, x->ndim);
    if (!vals || !idx || tn__backend(x->device)->lane(op, vals, idx, x, d, 0)) {
        tn_release(vals); tn_release(idx);
        return NULL;
    }
    tn_node *node = tn__node_new(G_SORT, 0, &x, 1);
    if (node) { node->i[0] = d; node->name = op == CUMMAX ? "CummaxBackward0" : "CumminBackward0"; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = tn__own(idx); else tn_release(idx);
    return tn__own(vals);
}
TNDEF tn_tensor *tn_cummax(tn_tensor *x, int64_t dim, tn_tensor **indices) { return tn__cum_extreme("tn_cummax", CUMMAX, x, dim, indices); }
TNDEF tn_tensor *tn_cummin(tn_tensor *x, int64_t dim, tn_tensor **indices) { return tn__cum_extreme("tn_cummin", CUMMIN, x, dim, indices); }

/* sort(stable=): a stable sort, or PyTorch's CPU order of ties (std::sort's; on CUDA the
   device's own) */
static tn_tensor *tn__sort(const char *fn, tn_tensor *x, int64_t dim, bool descending, bool stable, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    tn_tensor *vals = tn__new(x->dtype, x->device, x->shape, x->ndim), *idx = tn__new(TN_I64, x->device, x->shape, x->ndim);
    const int flag = (int)descending | (!stable && x->device == TN_CPU ? 2 : 0);
    if (!vals || !idx || tn__backend(x->device)->lane(SORT, vals, idx, x, d, flag)) {
        tn_release(vals); tn_release(idx);
        return NULL;
    }
    tn_node *node = tn__node_new(G_SORT, 0, &x, 1);
    if (node) { node->i[0] = d; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = tn__own(idx); else tn_release(idx);
    return tn__own(vals);
}
TNDEF tn_tensor *tn_sort_opts(tn_tensor *x, tn_tensor **indices, tn_sort_fn_opts o) { return tn__sort("tn_sort", x, o.dim, o.descending, o.stable, indices); }
TNDEF tn_tensor *tn_sort_str(tn_tensor *x, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_sort_fn_opts, sort, "tn_sort", options, tn_sort_opts(x, indices, o));
}

static tn_tensor *tn__argsort(const char *fn, tn_tensor *x, int64_t dim, bool descending, bool stable) {
    tn_tensor *idx = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x) || tn__wrap_dim(fn, dim, x->ndim) < 0) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn__sort(fn, x, dim, descending, stable, &idx);
    idx = v ? tn_keep(idx) : NULL;
    tn_scope_end();
    return idx;
}
TNDEF tn_tensor *tn_argsort_opts(tn_tensor *x, tn_sort_fn_opts o) { return tn__argsort("tn_argsort", x, o.dim, o.descending, o.stable); }
TNDEF tn_tensor *tn_argsort_str(tn_tensor *x, const char *options) { TN__KW_STR(tn_sort_fn_opts, sort, "tn_argsort", options, tn_argsort_opts(x, o)); }

TNDEF tn_tensor *tn_topk_opts(tn_tensor *x, int64_t k, tn_tensor **indices, tn_topk_fn_opts o) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_topk", x)) return NULL;
    int d = tn__wrap_dim("tn_topk", o.dim, x->ndim);
    if (d < 0) return NULL;
    int64_t size = x->ndim ? x->shape[d] : 1;
    if (k < 0 || k > size) return (tn_tensor *)tn__error("tn_topk: selected index k (%lld) out of range for dimension %d of size %lld", (long long)k, d, (long long)size);
    tn_scope_begin();
    tn_tensor *idx = NULL, *v = tn__sort("tn_topk", x, d, o.largest, true, &idx), *vk = NULL, *ik = NULL;
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
TNDEF tn_tensor *tn_topk_str(tn_tensor *x, int64_t k, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_topk_fn_opts, topk, "tn_topk", options, tn_topk_opts(x, k, indices, o));
}

/* ---- selections from the sorted lane: medians, kthvalue, mode, quantiles ---- */
/* Drop dim d of a fresh contiguous tensor in place (its size is 1): no view, so a node can
   be attached to it. */
static void tn__drop_dim(tn_tensor *t, int d) {
    for (int i = d; i < t->ndim - 1; i++) { t->shape[i] = t->shape[i + 1]; t->strides[i] = t->strides[i + 1]; }
    t->ndim--;
}
/* The values and int64 indices (kept into the caller's scope) at dim d of x's sort along d
   at the per-lane positions pos, with dim d dropped unless keepdim (and always for a 0-d x),
   with PyTorch's value-selecting backward (MaxBackward0's scatter) named name. */
static tn_tensor *tn__select_record(tn_tensor *x, int d, bool keepdim, tn_tensor *vals, tn_tensor *idx, const char *name, tn_tensor **indices) {
    if (vals && (!keepdim || x->ndim == 0)) { tn__drop_dim(vals, d); tn__drop_dim(idx, d); }
    tn_node *node = vals ? tn__node_new(G_MAX_DIM, 0, &x, 1) : NULL;
    if (node) { node->i[0] = d; node->i[1] = keepdim; node->name = name; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = idx;
    else if (idx && tn__nscopes == 0) tn_release(idx);   /* kept for us, not wanted */
    return vals;
}
enum { TN__SEL_MEDIAN, TN__SEL_NANMEDIAN, TN__SEL_KTH };
static tn_tensor *tn__select_dim(const char *fn, const char *name, int kind, tn_tensor *x, int64_t k, int64_t dim, bool keepdim, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    if (kind != TN__SEL_KTH && x->dtype == TN_BOOL)
        return (tn_tensor *)tn__error("%s: \"median_cpu\" not implemented for 'Bool' (input %s)", fn, TN__SHAPE(x));
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    const int64_t n = x->ndim ? x->shape[d] : 1;
    if (kind == TN__SEL_KTH && (k < 1 || k > n))
        return (tn_tensor *)tn__error("%s: selected number k out of range for dimension %d (k = %lld, size %lld)", fn, d, (long long)k, (long long)n);
    if (n == 0) return (tn_tensor *)tn__error("%s: expected reduction dim %d to have non-zero size (input shape %s)", fn, d, TN__SHAPE(x));
    tn_scope_begin();
    tn_tensor *xv = x->ndim ? tn_detach(x) : tn_reshape(tn_detach(x), tn__one, 1), *si = NULL, *pos;
    tn_tensor *sv = tn__sort("tn_sort", xv, d, false, true, &si);   /* NaN sorts last; ties in order */
    int64_t kshape[TN_MAX_DIMS], dd = d;
    int knd = xv ? xv->ndim : 0;
    for (int i = 0; i < knd; i++) kshape[i] = i == d ? 1 : xv->shape[i];
    if (kind == TN__SEL_KTH) {
        pos = tn__own(tn__full_on(kshape, knd, (double)(k - 1), TN_I64, x->device));
    } else {
        tn_tensor *nans = tn_sum_dims(tn_isnan(xv), &dd, 1, .keepdim = true);   /* int64 counts */
        if (kind == TN__SEL_MEDIAN)   /* the first NaN where there is one, else the lower middle */
            pos = tn_where(tn_gt_scalar(nans, 0), tn_rsub_scalar(nans, (double)n), tn__own(tn__full_on(kshape, knd, (double)((n - 1) / 2), TN_I64, x->device)));
        else   /* the lower middle of the values before the NaNs; 0 (a NaN) when all are */
            pos = tn_clamp(tn_floor_divide_scalar(tn_rsub_scalar(nans, (double)(n - 1)), 2), .min = 0);
    }
    tn_tensor *vals = tn_keep(tn_gather(sv, d, pos)), *idx = tn_keep(vals ? tn_gather(si, d, pos) : NULL);
    tn_scope_end();
    if (!vals || !idx) { if (tn__nscopes == 0) { tn_release(vals); tn_release(idx); } return NULL; }
    return tn__select_record(x, d, keepdim, vals, idx, name, indices);
}
TNDEF tn_tensor *tn_median_dim_opts(tn_tensor *x, tn_tensor **indices, tn_median_fn_opts o) {
    return TN__AS("tn_median_dim", tn__select_dim("tn_median_dim", "MedianBackward1", TN__SEL_MEDIAN, x, 0, o.dim, o.keepdim, indices));
}
TNDEF tn_tensor *tn_nanmedian_dim_opts(tn_tensor *x, tn_tensor **indices, tn_median_fn_opts o) {
    return TN__AS("tn_nanmedian_dim", tn__select_dim("tn_nanmedian_dim", "NanmedianBackward1", TN__SEL_NANMEDIAN, x, 0, o.dim, o.keepdim, indices));
}
TNDEF tn_tensor *tn_kthvalue_opts(tn_tensor *x, int64_t k, tn_tensor **indices, tn_median_fn_opts o) {
    return TN__AS("tn_kthvalue", tn__select_dim("tn_kthvalue", "KthvalueBackward0", TN__SEL_KTH, x, k, o.dim, o.keepdim, indices));
}
TNDEF tn_tensor *tn_median_dim_str(tn_tensor *x, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_median_fn_opts, median, "tn_median_dim", options, tn_median_dim_opts(x, indices, o));
}
TNDEF tn_tensor *tn_nanmedian_dim_str(tn_tensor *x, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_median_fn_opts, median, "tn_nanmedian_dim", options, tn_nanmedian_dim_opts(x, indices, o));
}
TNDEF tn_tensor *tn_kthvalue_str(tn_tensor *x, int64_t k, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_median_fn_opts, median, "tn_kthvalue", options, tn_kthvalue_opts(x, k, indices, o));
}
/* The median of all elements: 0-d, NaN for an empty floating tensor; its gradient is shared
   evenly by the elements equal to it (all NaNs when it is NaN), as PyTorch. */
static tn_tensor *tn__median_all(const char *fn, tn_tensor *x, bool ignore_nan) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    if (x->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: \"median_cpu\" not implemented for 'Bool' (input %s)", fn, TN__SHAPE(x));
    if (tn_numel(x) == 0) {
        if (!tn_dtype_is_floating(x->dtype)) return (tn_tensor *)tn__error("%s: median of an empty %s tensor (shape %s) has no value", fn, tn_dtype_name(x->dtype), TN__SHAPE(x));
        tn_tensor *r = tn__new(x->dtype, x->device, NULL, 0);
        if (r && tn__backend(r->device)->fill(r, NAN)) { tn_release(r); r = NULL; }
        return tn__own(r);
    }
    tn_scope_begin();
    int64_t m1 = -1;
    tn_tensor *r = tn_keep(tn__select_dim(fn, NULL, ignore_nan ? TN__SEL_NANMEDIAN : TN__SEL_MEDIAN, tn_reshape(tn_detach(x), &m1, 1), 0, 0, false, NULL));
    tn_scope_end();
    tn_node *node = r ? tn__node_new(G_MEDIAN, 0, &x, 1) : NULL;
    if (node) {
        node->name = ignore_nan ? "NanmedianBackward0" : "MedianBackward0";
        tn__node_save(node, x);
        tn__node_save_result(node, r);
    }
    return tn__node_attach(node, r);
}
TNDEF tn_tensor *tn_median(tn_tensor *x) { return TN__AS("tn_median", tn__median_all("tn_median", x, false)); }
TNDEF tn_tensor *tn_nanmedian(tn_tensor *x) { return TN__AS("tn_nanmedian", tn__median_all("tn_nanmedian", x, true)); }

/* Element comparisons of the host-side scans (unique, mode): equality as C's == (NaN
   unequal to everything) and an order with NaN largest (NaNs tie). */
static bool tn__elem_eq(const char *a, const char *b, tn_dtype dt) {
    switch (dt) {
    case TN_F32: return *(const float *)a == *(const float *)b;
    case TN_F64: return *(const double *)a == *(const double *)b;
    case TN_I32: return *(const int32_t *)a == *(const int32_t *)b;
    case TN_I64: return *(const int64_t *)a == *(const int64_t *)b;
    case TN_I16: return *(const int16_t *)a == *(const int16_t *)b;
    default: return *(const uint8_t *)a == *(const uint8_t *)b;   /* uint8, int8, bool: the byte */
    }
}
#define TN__ELEM_CMP(T) { T x = *(const T *)a, y = *(const T *)b; \
        return TN__NAN(x) || TN__NAN(y) ? TN__NAN(x) - TN__NAN(y) : (x > y) - (x < y); }
static int tn__elem_cmp(const char *a, const char *b, tn_dtype dt) {
    switch (dt) {
    case TN_F32: TN__ELEM_CMP(float)
    case TN_F64: TN__ELEM_CMP(double)
    case TN_I32: TN__ELEM_CMP(int32_t)
    case TN_I64: TN__ELEM_CMP(int64_t)
    case TN_I8: TN__ELEM_CMP(int8_t)
    case TN_I16: TN__ELEM_CMP(int16_t)
    default: TN__ELEM_CMP(uint8_t)
    }
}
/* Rows of m elements of one dtype, for sorting row indices lexicographically. */
typedef struct tn__rows { const char *data; int64_t m; size_t es; tn_dtype dt; } tn__rows;
static bool tn__row_less(const void *v, int64_t a, int64_t b) {
    const tn__rows *r = (const tn__rows *)v;
    const char *pa = r->data + (size_t)a * (size_t)r->m * r->es, *pb = r->data + (size_t)b * (size_t)r->m * r->es;
    for (int64_t k = 0; k < r->m; k++) {
        int c = tn__elem_cmp(pa + (size_t)k * r->es, pb + (size_t)k * r->es, r->dt);
        if (c) return c < 0;
    }
    return false;
}
static bool tn__row_eq(const tn__rows *r, int64_t a, int64_t b) {
    const char *pa = r->data + (size_t)a * (size_t)r->m * r->es, *pb = r->data + (size_t)b * (size_t)r->m * r->es;
    for (int64_t k = 0; k < r->m; k++)
        if (!tn__elem_eq(pa + (size_t)k * r->es, pb + (size_t)k * r->es, r->dt)) return false;
    return true;
}
/* x with dim d moved last (the other dims in order), as a contiguous CPU tensor. */
static tn_tensor *tn__dim_last_host(tn_tensor *x, int d) {
    int64_t perm[TN_MAX_DIMS];
    int np = 0;
    for (int i = 0; i < x->ndim; i++) if (i != d) perm[np++] = i;
    perm[np++] = d;
    tn_tensor *p = x->ndim ? tn_permute(x, perm, x->ndim) : x;
    return p ? tn__own(tn__copy_as(p, p->dtype, TN_CPU)) : NULL;
}

TNDEF tn_tensor *tn_mode_opts(tn_tensor *x, tn_tensor **indices, tn_median_fn_opts o) {
    const char *fn = "tn_mode";
    const int64_t dim = o.dim;
    const bool keepdim = o.keepdim;
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    const int64_t n = x->ndim ? x->shape[d] : 1;
    if (n == 0) return (tn_tensor *)tn__error("%s: expected reduction dim %d to have non-zero size (input shape %s)", fn, d, TN__SHAPE(x));
    tn__as_begin();
    tn_scope_begin();
    /* a stable sort puts equal values together, NaNs last; the counting runs on the host */
    tn_tensor *xv = x->ndim ? tn_detach(x) : tn_reshape(tn_detach(x), tn__one, 1), *si = NULL, *sv = tn__sort("tn_sort", xv, d, false, true, &si);
    tn_tensor *hv = sv ? tn__dim_last_host(sv, d) : NULL, *hi = sv ? tn__dim_last_host(si, d) : NULL;
    int64_t kshape[TN_MAX_DIMS];
    int knd = xv ? xv->ndim : 0;
    for (int i = 0; i < knd; i++) kshape[i] = i == d ? 1 : xv->shape[i];
    tn_tensor *ov = hv ? tn__own(tn__new(x->dtype, TN_CPU, kshape, knd)) : NULL, *oi = ov ? tn__own(tn__new(TN_I64, TN_CPU, kshape, knd)) : NULL;
    tn_tensor *vals = NULL, *idx = NULL;
    if (oi) {
        const size_t es = tn_dtype_size(x->dtype);
        const char *v = (const char *)tn_data_ptr(hv);
        const int64_t *ix = (const int64_t *)tn_data_ptr(hi), lanes = tn_numel(ov);
        char *outv = (char *)tn_data_ptr(ov);
        int64_t *outi = (int64_t *)tn_data_ptr(oi);
        for (int64_t l = 0; l < lanes; l++) {
            const char *lv = v + (size_t)(l * n) * es;
            int64_t best = 0, best_n = 0, run = 0;
            for (int64_t i = 0; i < n; i++) {
                run++;
                if (i + 1 < n && tn__elem_eq(lv + (size_t)i * es, lv + (size_t)(i + 1) * es, x->dtype)) continue;
                if (run > best_n) { best_n = run; best = i; }   /* strictly more: the smallest of equally frequent values */
                run = 0;
            }
            memcpy(outv + (size_t)l * es, lv + (size_t)best * es, es);
            outi[l] = ix[l * n + best];   /* the last of the run: its last occurrence (stable sort) */
        }
        vals = tn_keep(tn__own(tn__copy_as(ov, ov->dtype, x->device)));
        idx = tn_keep(vals ? tn__own(tn__copy_as(oi, TN_I64, x->device)) : NULL);
    }
    tn_scope_end();
    if (!vals || !idx) {
        if (tn__nscopes == 0) { tn_release(vals); tn_release(idx); }
        return tn__as_end(fn, NULL);
    }
    return tn__as_end(fn, tn__select_record(x, d, keepdim, vals, idx, "ModeBackward0", indices));
}
TNDEF tn_tensor *tn_mode_str(tn_tensor *x, tn_tensor **indices, const char *options) {
    if (indices) *indices = NULL;
    TN__KW_STR(tn_median_fn_opts, median, "tn_mode", options, tn_mode_opts(x, indices, o));
}

TNDEF tn_tensor *tn_msort(tn_tensor *x) { return TN__AS("tn_msort", tn_sort(x, NULL, .dim = 0)); }

/* quantile / nanquantile as PyTorch's quantile_compute: sort the lane, turn q into ranks
   (the last one where the lane has a NaN; for nanquantile over the values before the NaNs),
   read the two nearest ranks and interpolate. Composed of differentiable ops: the gradient
   is theirs, as in PyTorch (a composite there too). */
static tn_tensor *tn__quantile(const char *fn, tn_tensor *x, tn_tensor *q, tn_quantile_fn_opts o, bool ignore_nan) {
    TN__CHECK_NULL(x, q);
    if (x->dtype != TN_F32 && x->dtype != TN_F64)
        return (tn_tensor *)tn__error("%s: input tensor must be either float or double dtype, got %s", fn, tn_dtype_name(x->dtype));
    if (q->ndim > 1) return (tn_tensor *)tn__error("%s: q must be a scalar or 1D tensor, got shape %s", fn, TN__SHAPE(q));
    if (q->dtype != x->dtype && !q->is_wrapped_number)
        return (tn_tensor *)tn__error("%s: q tensor must be same dtype as the input tensor, got %s and %s", fn, tn_dtype_name(q->dtype), tn_dtype_name(x->dtype));
    if (tn_numel(x) == 0) return (tn_tensor *)tn__error("%s: input tensor must be non-empty (shape %s)", fn, TN__SHAPE(x));
    if (o.interpolation < 0 || o.interpolation > TN_INTERPOLATION_NEAREST)
        return (tn_tensor *)tn__error("%s: interpolation must be one of linear, lower, higher, midpoint or nearest, got %d", fn, o.interpolation);
    int d = o.dim == TN_NONE ? -1 : tn__wrap_dim(fn, o.dim, x->ndim);
    if (o.dim != TN_NONE && d < 0) return NULL;
    if (tn__check_same_device(fn, x, q)) return NULL;
    tn_tensor *qh = tn__copy_as(q, TN_F64, TN_CPU);   /* the range check reads q on the host */
    if (!qh) return NULL;
    const double *qv = (const double *)tn_data_ptr(qh);
    for (int64_t i = 0, nq = tn_numel(qh); i < nq; i++)
        if (!(qv[i] >= 0 && qv[i] <= 1)) {
            if (q->ndim == 0) tn__error("%s: q must be in the range [0, 1] but got %g", fn, qv[i]);
            else tn__error("%s: q values must be in the range [0, 1], got %g", fn, qv[i]);
            tn_release(qh);
            return NULL;
        }
    tn_release(qh);
    tn__as_begin();
    tn_scope_begin();
    /* the output: q's dim (if any), then x's shape reduced over dim (all dims when none) */
    int64_t out_shape[TN_MAX_DIMS + 1], in_shape[TN_MAX_DIMS + 1], m1 = -1;
    int nout = 0;
    if (d >= 0 && x->ndim > 0) {
        for (int i = 0; i < x->ndim; i++) if (i != d || o.keepdim) out_shape[nout++] = i == d ? 1 : x->shape[i];
    } else if (o.keepdim) {
        for (int i = 0; i < x->ndim; i++) out_shape[nout++] = 1;
    }
    tn_tensor *sorted = d < 0 ? tn_sort(tn_reshape(x, &m1, 1), NULL, .dim = 0) : tn_sort(tn_transpose(tn_unsqueeze(x, -1), d, -1), NULL);
    const int64_t n = sorted ? sorted->shape[sorted->ndim - 1] : 0;
    memcpy(in_shape, out_shape, sizeof(int64_t) * (size_t)nout);
    in_shape[nout] = n;
    sorted = tn_reshape(sorted, in_shape, nout + 1);
    tn_tensor *q1 = tn_reshape(tn_to(tn_to_dtype(q, x->dtype), x->device), &m1, 1), *ranks;
    if (ignore_nan) {   /* over the values before the NaNs; all NaN: rank 0, a NaN */
        tn_tensor *cnt = tn_sum_dims(tn_logical_not(tn_isnan(sorted)), &m1, 1, .keepdim = true);
        ranks = tn_mul(q1, tn_sub_scalar(cnt, 1));
        ranks = ranks ? tn_where(tn_lt_scalar(ranks, 0), tn_zeros_like(ranks), ranks) : NULL;
    } else {   /* a NaN in the lane: the last rank, a NaN */
        ranks = tn_where(tn_any_dim(tn_isnan(sorted), -1, .keepdim = true), tn_scalar_tensor((double)(n - 1), x->dtype), tn_mul_scalar(q1, (double)(n - 1)));
    }
    if (o.interpolation == TN_INTERPOLATION_LOWER) ranks = tn_floor(ranks);
    else if (o.interpolation == TN_INTERPOLATION_HIGHER) ranks = tn_ceil(ranks);
    else if (o.interpolation == TN_INTERPOLATION_NEAREST) ranks = tn_round(ranks);   /* half to even, as PyTorch's round_ */
    tn_tensor *below = tn_to_dtype(ranks, TN_I64), *r = tn_gather(sorted, -1, below);
    if (o.interpolation == TN_INTERPOLATION_LINEAR || o.interpolation == TN_INTERPOLATION_MIDPOINT) {
        tn_tensor *w = o.interpolation == TN_INTERPOLATION_MIDPOINT ? tn_full_like(ranks, 0.5) : tn_sub(ranks, tn_to_dtype(below, x->dtype));
        r = tn_lerp(r, tn_gather(sorted, -1, tn_to_dtype(tn_ceil(ranks), TN_I64)), w);
    }
    r = q->ndim == 0 ? tn_squeeze_dim(r, -1) : tn_squeeze_dim(tn_transpose(tn_unsqueeze(r, 0), 0, -1), -1);
    r = tn_keep(r);
    tn_scope_end();
    return tn__as_end(fn, r);
}
TNDEF tn_tensor *tn_quantile_opts(tn_tensor *x, tn_tensor *q, tn_quantile_fn_opts o) { return tn__quantile("tn_quantile", x, q, o, false); }
TNDEF tn_tensor *tn_nanquantile_opts(tn_tensor *x, tn_tensor *q, tn_quantile_fn_opts o) { return tn__quantile("tn_nanquantile", x, q, o, true); }
TNDEF tn_tensor *tn_quantile_str(tn_tensor *x, tn_tensor *q, const char *options) {
    TN__KW_STR(tn_quantile_fn_opts, quantile, "tn_quantile", options, tn_quantile_opts(x, q, o));
}
TNDEF tn_tensor *tn_nanquantile_str(tn_tensor *x, tn_tensor *q, const char *options) {
    TN__KW_STR(tn_quantile_fn_opts, quantile, "tn_nanquantile", options, tn_nanquantile_opts(x, q, o));
}

/* ---- searchsorted, on the host (binary searches, as PyTorch's CPU kernel) ----
   rows of the sequence (one shared row for a 1-d sequence) against rows of V values. */
/* @template TN__DEFINE_SEARCH(T, S) */
static void tn__search_##S(const char *bd, const int64_t *srt, int64_t rows, int64_t M, const char *vals, int64_t V, bool shared, bool right, int64_t *out) {
    for (int64_t r = 0; r < rows; r++) {
        const T *b = (const T *)bd + (shared ? 0 : r * M);
        const int64_t *so = srt ? srt + (shared ? 0 : r * M) : NULL;
        for (int64_t j = 0; j < V; j++) {
            const T v = ((const T *)vals)[r * V + j];
            int64_t lo = 0, hi = M;
            while (lo < hi) {   /* PyTorch's comparisons, so NaN lands where it does there */
                const int64_t mid = lo + ((hi - lo) >> 1);
                const T mv = so ? b[so[mid]] : b[mid];
                if (right ? !(mv > v) : !(mv >= v)) lo = mid + 1;
                else hi = mid;
            }
            out[r * V + j] = lo;
        }
    }
}
/* @end TN__DEFINE_SEARCH */
TN__DEFINE_SEARCH(float, f32)
TN__DEFINE_SEARCH(double, f64)
TN__DEFINE_SEARCH(int32_t, i32)
TN__DEFINE_SEARCH(int64_t, i64)
TN__DEFINE_SEARCH(uint8_t, u8)
TN__DEFINE_SEARCH(int8_t, i8)
TN__DEFINE_SEARCH(int16_t, i16)

static tn_tensor *tn__searchsorted(const char *fn, tn_tensor *seq, tn_tensor *values, tn_searchsorted_fn_opts o) {
    TN__CHECK_NULL(seq, values);
    if (tn__check_cpu_dtype(fn, seq) || tn__check_cpu_dtype(fn, values)) return NULL;
    if (seq->ndim == 0) return (tn_tensor *)tn__error("%s: boundaries tensor should have positive dimension, but got 0 dimension", fn);
    bool right = o.right;
    if (o.side) {
        if (strcmp(o.side, "left") && strcmp(o.side, "right")) return (tn_tensor *)tn__error("%s: side can only be 'left' or 'right' but got %s", fn, o.side);
        if (o.right && !strcmp(o.side, "left")) return (tn_tensor *)tn__error("%s: side and right can't be set to opposites, got side of left while right was True", fn);
        right = !strcmp(o.side, "right");
    }
    const bool shared = seq->ndim == 1;
    if (!shared && (seq->ndim != values->ndim || memcmp(seq->shape, values->shape, (size_t)(seq->ndim - 1) * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, "
                                      "but we got boundaries tensor %s and input value tensor %s", fn, TN__SHAPE(seq), TN__SHAPE(values));
    if (o.sorter) {
        if (o.sorter->dtype != TN_I64) return (tn_tensor *)tn__error("%s: sorter must be a tensor of long dtype but got dtype %s", fn, tn_dtype_name(o.sorter->dtype));
        if (o.sorter->ndim != seq->ndim || memcmp(o.sorter->shape, seq->shape, (size_t)seq->ndim * sizeof(int64_t)))
            return (tn_tensor *)tn__error("%s: boundary and sorter must have the same size, but got boundary tensor %s and got sorter tensor %s", fn, TN__SHAPE(seq), TN__SHAPE(o.sorter));
        if (tn__check_same_device(fn, seq, o.sorter)) return NULL;
    }
    if (tn__check_same_device(fn, seq, values)) return NULL;
    tn_tensor *pair[2] = {seq, values};
    const tn_dtype ct = tn_result_type(pair, 2);
    const int64_t M = seq->shape[seq->ndim - 1], V = values->ndim ? values->shape[values->ndim - 1] : 1, nv = tn_numel(values);
    const int64_t rows = shared ? 1 : (M ? tn_numel(seq) / M : tn__numel(seq->shape, seq->ndim - 1));
    tn_tensor *hs = tn__copy_as(seq, ct, TN_CPU), *hv = hs ? tn__copy_as(values, ct, TN_CPU) : NULL;
    tn_tensor *hsrt = hv && o.sorter ? tn__copy_as(o.sorter, TN_I64, TN_CPU) : NULL;
    tn_tensor *out = hv && (hsrt || !o.sorter) ? tn__new(TN_I64, TN_CPU, values->shape, values->ndim) : NULL, *r = NULL;
    if (out) {
        const int64_t *sv = hsrt ? (const int64_t *)tn_data_ptr(hsrt) : NULL;
        bool ok = true;
        for (int64_t i = 0, ns = hsrt ? tn_numel(hsrt) : 0; i < ns && ok; i++)
            if (sv[i] < 0 || sv[i] >= M) ok = (tn__error("%s: sorter index %lld out of range for a sequence of %lld elements", fn, (long long)sv[i], (long long)M), false);
        const char *b = (const char *)tn_data_ptr(hs), *v = (const char *)tn_data_ptr(hv);
        int64_t *po = (int64_t *)tn_data_ptr(out);
        if (ok && nv > 0) {
            const int64_t vr = shared ? nv : V;   /* a shared sequence: all values as one row */
            switch (ct) {
            case TN_F32: tn__search_f32(b, sv, rows, M, v, vr, shared, right, po); break;
            case TN_F64: tn__search_f64(b, sv, rows, M, v, vr, shared, right, po); break;
            case TN_I32: tn__search_i32(b, sv, rows, M, v, vr, shared, right, po); break;
            case TN_I64: tn__search_i64(b, sv, rows, M, v, vr, shared, right, po); break;
            case TN_U8: tn__search_u8(b, sv, rows, M, v, vr, shared, right, po); break;
            case TN_I8: tn__search_i8(b, sv, rows, M, v, vr, shared, right, po); break;
            case TN_I16: tn__search_i16(b, sv, rows, M, v, vr, shared, right, po); break;
            default: ok = (tn__error("%s: \"searchsorted_out_cpu\" not implemented for '%s'", fn, tn__torch_type_name(ct)), false); break;
            }
        }
        if (ok) r = tn__copy_as(out, o.out_int32 ? TN_I32 : TN_I64, values->device);
    }
    tn_release(hs); tn_release(hv); tn_release(hsrt); tn_release(out);
    return tn__own(r);
}
TNDEF tn_tensor *tn_searchsorted_opts(tn_tensor *sorted_sequence, tn_tensor *values, tn_searchsorted_fn_opts o) { return tn__searchsorted("tn_searchsorted", sorted_sequence, values, o); }
TNDEF tn_tensor *tn_searchsorted_str(tn_tensor *sorted_sequence, tn_tensor *values, const char *options) {
    tn_searchsorted_fn_opts o = TN_DEFAULTS(tn_searchsorted_fn_opts);
    uint64_t seen;
    if (tn__kw_parse("tn_searchsorted", options, tn__kw_searchsorted, TN__KW_N(tn__kw_searchsorted), &o, &seen)) return NULL;
    tn_tensor *r = tn_searchsorted_opts(sorted_sequence, values, o);
    tn__kw_release(tn__kw_searchsorted, TN__KW_N(tn__kw_searchsorted), &o, seen);
    return r;
}
TNDEF tn_tensor *tn_bucketize_opts(tn_tensor *input, tn_tensor *boundaries, tn_searchsorted_fn_opts o) {
    TN__CHECK_NULL(input, boundaries);
    const tn_searchsorted_fn_opts def = TN_DEFAULTS(tn_searchsorted_fn_opts);
    if (tn__kw_only("tn_bucketize", "bucketize", tn__kw_searchsorted, TN__KW_N(tn__kw_searchsorted), &o, &def, "out_int32, right")) return NULL;
    if (boundaries->ndim != 1) return (tn_tensor *)tn__error("tn_bucketize: boundaries tensor must be 1 dimension, but got dim(%d)", boundaries->ndim);
    return tn__searchsorted("tn_bucketize", boundaries, input, o);
}
TNDEF tn_tensor *tn_bucketize_str(tn_tensor *input, tn_tensor *boundaries, const char *options) {
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_searchsorted, TN__KW_N(tn__kw_searchsorted), "out_int32, right", keys);
    tn_searchsorted_fn_opts o = TN_DEFAULTS(tn_searchsorted_fn_opts);
    return tn__kw_parse("tn_bucketize", options, keys, n, &o, NULL) ? NULL : tn_bucketize_opts(input, boundaries, o);
}

/* ---- unique and unique_consecutive, on the host ----
   x as rows of m elements (a row per element, or per slice along dim), grouped after a
   stable lexicographic sort (unique) or in place (unique_consecutive). */
static tn_tensor *tn__unique(const char *fn, tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, tn_unique_fn_opts o, bool consecutive) {
    if (inverse) *inverse = NULL;
    if (counts) *counts = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    if (tn_is_complex(x))   /* no complex order: PyTorch's CPU kernels refuse it */
        return (tn_tensor *)tn__error("%s: \"%s\" not implemented for '%s'", fn, consecutive ? "unique_consecutive" : "unique", tn__torch_type_name(x->dtype));
    if (consecutive) {
        const tn_unique_fn_opts def = TN_DEFAULTS(tn_unique_fn_opts);
        if (tn__kw_only(fn, "unique_consecutive", tn__kw_unique, TN__KW_N(tn__kw_unique), &o, &def, "return_inverse, return_counts, dim")) return NULL;
    }
    const bool by_dim = o.dim != TN_NONE;
    int d = 0;
    if (by_dim) {
        if (x->ndim == 0) return (tn_tensor *)tn__error("%s: dim %lld out of range: the tensor has no dimensions (Dimension specified as 0 but tensor has no dimensions)", fn, (long long)o.dim);
        if ((d = tn__wrap_dim(fn, o.dim, x->ndim)) < 0) return NULL;
        for (int i = 0; i < x->ndim; i++)
            if (i != d && x->shape[i] == 0 && x->shape[d] != 0)
                return (tn_tensor *)tn__error("%s: There are 0 sized dimensions, and they aren't selected, so unique cannot be applied (input %s, dim %d)", fn, TN__SHAPE(x), d);
    }
    tn__as_begin();
    tn_scope_begin();
    /* rows: [n, m], the dim first */
    int64_t perm[TN_MAX_DIMS], inv_perm[TN_MAX_DIMS];
    int np = 0;
    if (by_dim) {
        perm[np++] = d;
        for (int i = 0; i < x->ndim; i++) if (i != d) perm[np++] = i;
        for (int i = 0; i < np; i++) inv_perm[perm[i]] = i;
    }
    tn_tensor *xp = by_dim ? tn_permute(tn_detach(x), perm, x->ndim) : tn_detach(x);
    tn_tensor *h = xp ? tn__own(tn__copy_as(xp, x->dtype, TN_CPU)) : NULL;
    const int64_t n = by_dim ? x->shape[d] : tn_numel(x), m = n ? tn_numel(x) / n : 0;
    int64_t *order = h ? (int64_t *)tn__malloc_n(fn, n ? 2 * n : 1, sizeof(int64_t)) : NULL, *rep = order ? (int64_t *)tn__malloc_n(fn, n ? n : 1, sizeof(int64_t)) : NULL;
    tn_tensor *hinv = rep ? tn__own(tn__new(TN_I64, TN_CPU, &n, 1)) : NULL, *hcnt = NULL, *vals = NULL, *inv = NULL, *cnt = NULL;
    if (hinv) {
        tn__rows rows = {(const char *)tn_data_ptr(h), m, tn_dtype_size(x->dtype), x->dtype};
        int64_t *pinv = (int64_t *)tn_data_ptr(hinv), groups = 0;
        for (int64_t i = 0; i < n; i++) order[i] = i;
        if (!consecutive) tn__msort(order, order + n, n, &rows, tn__row_less);
        for (int64_t i = 0; i < n; i++) {
            if (i == 0 || !tn__row_eq(&rows, order[i - 1], order[i])) rep[groups++] = order[i];
            pinv[order[i]] = groups - 1;
        }
        hcnt = tn__own(tn__new(TN_I64, TN_CPU, &groups, 1));
        if (hcnt) {   /* counts from the group starts in sorted order */
            int64_t *pc = (int64_t *)tn_data_ptr(hcnt);
            for (int64_t g = 0; g < groups; g++) pc[g] = 0;
            for (int64_t i = 0; i < n; i++) pc[pinv[i]]++;
        }
        tn_tensor *ri = hcnt ? tn__own(tn__new(TN_I64, TN_CPU, &groups, 1)) : NULL;
        if (ri) memcpy(tn_data_ptr(ri), rep, (size_t)groups * sizeof(int64_t));
        /* the representatives' rows, back in x's layout and on its device */
        if (by_dim) {
            tn_tensor *g = tn_index_select(h, 0, ri);
            vals = g ? tn_contiguous(tn_permute(g, inv_perm, x->ndim)) : NULL;
        } else {
            vals = tn_index_select(tn_reshape(h, &n, 1), 0, ri);
        }
        vals = tn_to(vals, x->device);
        if (!by_dim) inv = tn_reshape(hinv, x->shape, x->ndim);
        else inv = hinv;
        inv = o.return_inverse ? tn_to(tn_contiguous(inv), x->device) : NULL;
        cnt = o.return_counts ? tn_to(hcnt, x->device) : NULL;
    }
    TN_FREE(order);
    TN_FREE(rep);
    bool ok = vals && (!o.return_inverse || inv) && (!o.return_counts || cnt);
    vals = ok ? tn_keep(vals) : NULL;
    inv = ok && inverse ? tn_keep(inv) : NULL;
    cnt = ok && counts ? tn_keep(cnt) : NULL;
    tn_scope_end();
    if (inverse) *inverse = inv;
    if (counts) *counts = cnt;
    return tn__as_end(fn, vals);
}
TNDEF tn_tensor *tn_unique_opts(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, tn_unique_fn_opts o) { return tn__unique("tn_unique", x, inverse, counts, o, false); }
TNDEF tn_tensor *tn_unique_consecutive_opts(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, tn_unique_fn_opts o) {
    return tn__unique("tn_unique_consecutive", x, inverse, counts, o, true);
}
TNDEF tn_tensor *tn_unique_str(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, const char *options) {
    TN__KW_STR(tn_unique_fn_opts, unique, "tn_unique", options, tn_unique_opts(x, inverse, counts, o));
}
TNDEF tn_tensor *tn_unique_consecutive_str(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, const char *options) {
    if (inverse) *inverse = NULL;
    if (counts) *counts = NULL;
    tn__kwkey keys[TN__KW_MAXKEYS];   /* sorted is unique's */
    const int n = tn__kw_filter(tn__kw_unique, TN__KW_N(tn__kw_unique), "return_inverse, return_counts, dim", keys);
    tn_unique_fn_opts o = TN_DEFAULTS(tn_unique_fn_opts);
    return tn__kw_parse("tn_unique_consecutive", options, keys, n, &o, NULL) ? NULL : tn_unique_consecutive_opts(x, inverse, counts, o);
}
