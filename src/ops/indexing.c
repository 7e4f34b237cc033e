/* ---- gathering and scattering ----
   All of them are one backend call, `index`: dst, src and the index tensors are laid
   over one iteration shape by restriding (stride 0 on the dim an index replaces), and
   the kernel adds idx * stride to the gathered-from or scattered-to address. */

/* Index values checked by the device's check_index entry (flags, skip: its), untracked: a
   contiguous int64 tensor on idx's device. A bad value is reported at the next
   synchronisation as the message (printf-formatted here; its "%%lld" is the value). */
static tn_tensor *tn__device_checked(tn_tensor *idx, int64_t size, int flags, int64_t skip, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int64_t *slot = tn_deferred_check(idx->device, msg);
    tn_tensor *c = slot ? tn__new(TN_I64, idx->device, idx->shape, idx->ndim) : NULL;
    if (c && tn__backend(idx->device)->check_index(c, idx, size, flags, skip, slot)) { tn_release(c); return NULL; }
    return c;
}

/* The backend's nonzero (untracked): off the CPU it waits for the device, so a failed
   device-side check surfaces here. */
static tn_tensor *tn__nonzero_raw(tn_tensor *x) {
    tn_tensor *r = tn__backend(x->device)->nonzero(x);
    if (r && x->device != TN_CPU && tn__deferred_report("nonzero")) { tn_release(r); return NULL; }
    return r;
}

/* Contiguous int64 copy of an index tensor after checking every value is in
   [-size, size) (negatives wrapped when allowed, else [0, size)). Untracked. */
static tn_tensor *tn__checked_index(const char *fn, tn_tensor *idx, int64_t size, bool allow_negative, int dim, tn_device dev) {
    if (idx->dtype != TN_I64 && idx->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: index tensors must be int64 or int32, got %s", fn, tn_dtype_name(idx->dtype));
    if (idx->device != TN_CPU && idx->device == dev && tn__backend(dev)->check_index)   /* on the device, reported at the next sync */
        return tn__device_checked(idx, size, allow_negative ? 1 : 0, 0, "%s: index %%lld is out of bounds for dimension %d with size %lld", fn, dim, (long long)size);
    tn_tensor *c = tn__copy_as(idx, TN_I64, TN_CPU);
    if (!c) return NULL;
    int64_t *v = (int64_t *)tn_data_ptr(c), n = tn_numel(c);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < (allow_negative ? -size : 0) || v[i] >= size) {
            tn__error("%s: index %lld is out of bounds for dimension %d with size %lld", fn, (long long)v[i], dim, (long long)size);
            tn_release(c);
            return NULL;
        }
        if (v[i] < 0) v[i] += size;
    }
    if (dev != TN_CPU) { /* the indexed tensor's device, wherever the indices came from */
        tn_tensor *d = tn__copy_as(c, TN_I64, dev);
        tn_release(c);
        c = d;
    }
    return c;
}

/* A borrowed, transient view of t with the given shape and strides (no refcount). */
static tn_tensor tn__restrided(tn_tensor *t, const int64_t *shape, const int64_t *strides, int ndim) {
    tn_tensor v = tn__shallow(t);
    v.ndim = ndim;
    for (int i = 0; i < ndim; i++) { v.shape[i] = shape[i]; v.strides[i] = strides[i]; }
    return v;
}

static int tn__run_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *idx, const int64_t *idx_strides, int k) {
    tn_tensor *ptrs[TN_MAX_DIMS];
    for (int j = 0; j < k; j++) ptrs[j] = &idx[j];
    return tn__backend(dst->device)->index(mode, dst, src, ptrs, idx_strides, k);
}

TNDEF tn_tensor *tn_index_select(tn_tensor *t, int64_t dim, tn_tensor *index) {
    TN__CHECK_NULL(t, index);
    int d = tn__wrap_dim("tn_index_select", dim, t->ndim);
    if (d < 0) return NULL;
    if (index->ndim > 1) return (tn_tensor *)tn__error("tn_index_select: index must be 0-d or 1-d, got shape %s", TN__SHAPE(index));
    if (tn__check_same_device("tn_index_select", t, index)) return NULL;
    int64_t size = t->ndim ? t->shape[d] : 1;
    tn_tensor *idx = tn__checked_index("tn_index_select", index, size, false, d, t->device);
    if (!idx) return NULL;
    int nd = t->ndim ? t->ndim : 1;
    int64_t os[TN_MAX_DIMS], ss[TN_MAX_DIMS], is[TN_MAX_DIMS], tst = t->ndim ? t->strides[d] : 0;
    for (int i = 0; i < nd; i++) {
        os[i] = t->ndim ? t->shape[i] : 1;
        ss[i] = t->ndim ? t->strides[i] : 0;
        is[i] = 0;
    }
    os[d] = tn_numel(idx);
    ss[d] = 0;
    is[d] = 1;
    if (t->ndim == 0 && os[0] == 0) { /* nothing selected from a 0-d input: PyTorch's 0-d result, here t's value */
        tn_release(idx);
        return tn__grad_name(tn_clone(t), "IndexSelectBackward0");
    }
    tn_tensor *out = tn__new(t->dtype, t->device, os, nd);
    if (out && t->ndim == 0) out->ndim = 0;   /* a 0-d input gives a 0-d result, as PyTorch (self[index[0]]) */
    tn_tensor src = tn__restrided(t, os, ss, nd), iv = tn__restrided(idx, os, is, nd), dstv;
    if (out) {
        dstv = tn__restrided(out, os, out->strides, nd);
        if (out->ndim == 0) dstv.strides[0] = 1;
        if (tn__run_index(GATHER, &dstv, &src, &iv, &tst, 1)) { tn_release(out); out = NULL; }
    }
    tn_release(idx);
    tn_node *node = out ? tn__node_new(G_INDEX_SELECT, 0, &t, 1) : NULL;
    if (node) { node->i[0] = d; tn__node_save(node, index); }
    return tn__own(tn__node_attach(node, out));
}

/* gather/scatter read no index when it is empty, so PyTorch takes any dtype then: an empty
   index of another dtype stands in as int64 (NULL when there is no need; t to release). */
static tn_tensor *tn__empty_index_i64(tn_tensor *index) {
    if (tn_numel(index) != 0 || index->dtype == TN_I64 || index->dtype == TN_I32) return NULL;
    return tn__new(TN_I64, index->device, index->shape, index->ndim);
}
/* Shared checks of gather/scatter: index has t's ndim and fits inside `bound` (t, or
   src for scatter) on every dim but `d`. */
static int tn__check_gather_shapes(const char *fn, tn_tensor *t, tn_tensor *index, int d, tn_tensor *src) {
    if (tn_numel(index) == 0) return 0;   /* PyTorch reads no index then: any dtype, any shape */
    if (index->dtype != TN_I64)   /* PyTorch takes only int64 here (index_select also takes int32) */
        return TN__FAIL_INT("%s: Expected dtype int64 for index, got %s", fn, tn_dtype_name(index->dtype));
    if (index->ndim != t->ndim && !(index->ndim <= 1 && t->ndim <= 1))
        return TN__FAIL_INT("%s: index tensor must have the same number of dimensions as input tensor (index %s, input %s)", fn, TN__SHAPE(index), TN__SHAPE(t));
    for (int i = 0; i < index->ndim && i < t->ndim; i++) {
        if (i != d && index->shape[i] > t->shape[i])
            return TN__FAIL_INT("%s: size of index %s exceeds input %s at dimension %d", fn, TN__SHAPE(index), TN__SHAPE(t), i);
        if (src && (src->ndim != index->ndim || index->shape[i] > src->shape[i]))
            return TN__FAIL_INT("%s: index %s is larger than src %s at dimension %d", fn, TN__SHAPE(index), TN__SHAPE(src), i);
    }
    return 0;
}

TNDEF tn_tensor *tn_gather(tn_tensor *t, int64_t dim, tn_tensor *index) {
    TN__CHECK_NULL(t, index);
    int d = tn__wrap_dim("tn_gather", dim, t->ndim);
    if (d < 0 || tn__check_gather_shapes("tn_gather", t, index, d, NULL) || tn__check_same_device("tn_gather", t, index)) return NULL;
    tn_tensor *empty = tn__empty_index_i64(index);
    tn_tensor *idx = tn__checked_index("tn_gather", empty ? empty : index, t->ndim ? t->shape[d] : 1, false, d, t->device);
    tn_release(empty);
    if (!idx) return NULL;
    tn_tensor *out = tn__new(t->dtype, t->device, idx->shape, idx->ndim);
    int nd = idx->ndim;
    int64_t ss[TN_MAX_DIMS], tst = t->ndim ? t->strides[d] : 0;
    for (int i = 0; i < nd; i++) ss[i] = i < t->ndim ? t->strides[i] : 0;
    if (nd) ss[d] = 0;
    tn_tensor src = tn__restrided(t, idx->shape, ss, nd);
    if (out && tn__run_index(GATHER, out, &src, idx, &tst, 1)) { tn_release(out); out = NULL; }
    tn_release(idx);
    tn_node *node = out ? tn__node_new(G_GATHER, 0, &t, 1) : NULL;
    if (node) { node->i[0] = d; tn__node_save(node, index); }
    return tn__own(tn__node_attach(node, out));
}

/* scatter / scatter_add into `target` (modified in place). */
static int tn__scatter_into(const char *fn, tn_tensor *target, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_mode mode) {
    int d = tn__wrap_dim(fn, dim, target->ndim);
    if (d < 0 || tn__check_gather_shapes(fn, target, index, d, src) || tn__check_same_device(fn, target, index) || tn__check_same_device(fn, target, src)) return -1;
    if (src->dtype != target->dtype)
        return TN__FAIL_INT("%s: expected self.dtype to be equal to src.dtype (%s vs %s)", fn, tn_dtype_name(target->dtype), tn_dtype_name(src->dtype));
    if (tn__check_no_internal_overlap(fn, target) || tn__check_cpu_dtype(fn, target)) return -1;
    if (tn__check_no_overlap(fn, target, src) || tn__check_no_overlap(fn, target, index)) return -1;
    tn_tensor *empty = tn__empty_index_i64(index);
    tn_tensor *idx = tn__checked_index(fn, empty ? empty : index, target->ndim ? target->shape[d] : 1, false, d, target->device);
    tn_release(empty);
    tn_tensor *s = idx ? tn_retain(src) : NULL;
    if (!s) { tn_release(idx); return -1; }
    int nd = idx->ndim;
    int64_t ds[TN_MAX_DIMS], tst = target->ndim ? target->strides[d] : 0;
    for (int i = 0; i < nd; i++) ds[i] = i < target->ndim ? target->strides[i] : 0;
    if (nd) ds[d] = 0;
    tn_tensor dst = tn__restrided(target, idx->shape, ds, nd);
    tn_tensor sv = tn__restrided(s, idx->shape, s->strides, nd);
    int rc = tn__run_index(mode, &dst, &sv, idx, &tst, 1);
    tn_release(idx);
    tn_release(s);

    if (rc == 0) tn__bump_version(target);
    return rc;
}

static tn_tensor *tn__scatter_op(const char *fn, tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_mode mode, bool inplace) {
    TN__CHECK_NULL(t, index, src);
    if (tn__check_cpu_dtype(fn, t) || tn__check_cpu_dtype(fn, src)) return NULL;
    if (inplace) {
        tn_tensor *x0;
        int m = tn__inplace_begin(fn, t, &src, 1, &x0);
        if (m) return m < 0 ? NULL : tn__inplace_end(fn, t, tn__scatter_op(fn, x0, dim, index, src, mode, false));
    }
    tn_tensor *target = inplace ? tn_retain(t) : tn__copy_as(t, t->dtype, t->device);
    if (target && tn__scatter_into(fn, target, dim, index, src, mode)) { tn_release(target); target = NULL; }
    if (!inplace && target) {
        tn_tensor *ins[2] = {t, src};
        tn_node *nd = tn__node_new(mode == SCATTER ? G_SCATTER : G_SCATTER_ADD, 0, ins, 2);
        if (nd) { nd->i[0] = tn__wrap_dim(fn, dim, t->ndim); tn__node_save(nd, index); }
        target = tn__node_attach(nd, target);
    }
    return inplace ? tn__borrowed(target) : tn__own(target);
}
TNDEF tn_tensor *tn_scatter(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter", t, dim, index, src, SCATTER, false); }
TNDEF tn_tensor *tn_scatter_add(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter_add", t, dim, index, src, SCATTER_ADD, false); }
TNDEF tn_tensor *tn_scatter_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter_", t, dim, index, src, SCATTER, true); }
TNDEF tn_tensor *tn_scatter_add_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter_add_", t, dim, index, src, SCATTER_ADD, true); }

/* Advanced indexing plan (aten::index semantics). */
typedef struct tn__adv {
    int k;                                /* index tensors after bool masks became int64 ones */
    tn_tensor *idx[TN_MAX_DIMS];          /* owned, normalised int64 */
    tn_tensor view[TN_MAX_DIMS];          /* idx[j] laid over the result shape */
    int64_t idx_strides[TN_MAX_DIMS];     /* t's stride on the dim idx[j] indexes */
    int ndim;
    int64_t shape[TN_MAX_DIMS];           /* the result */
    int64_t tstrides[TN_MAX_DIMS];        /* t in result space: 0 on the broadcast index dims */
} tn__adv;

static void tn__adv_free(tn__adv *a) {
    for (int j = 0; j < a->k; j++) tn_release(a->idx[j]);
    a->k = 0;
}

static int tn__adv_plan(const char *fn, tn_tensor *t, tn_tensor *const *indices, int n, tn__adv *a) {
    memset(a, 0, sizeof *a);
    if (n < 0 || n > t->ndim || (n && !indices))
        return TN__FAIL_INT("%s: too many indices for tensor of dimension %d (got %d)", fn, t->ndim, n);
    int dims[TN_MAX_DIMS], k = 0, pos = 0;
    tn_tensor *raw[TN_MAX_DIMS], *temps[2 * TN_MAX_DIMS];
    int ntemps = 0, rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        tn_tensor *ix = indices[i];
        int used = ix && (ix->dtype == TN_BOOL || ix->dtype == TN_U8) ? ix->ndim : 1;
        if (pos + used > t->ndim) { rc = TN__FAIL_INT("%s: too many indices for tensor of dimension %d", fn, t->ndim); break; }
        if (!ix) { pos++; continue; }
        if (ix->dtype == TN_BOOL || ix->dtype == TN_U8) { /* a mask over ix->ndim dims: its nonzero coordinates */
            for (int j = 0; j < ix->ndim; j++)
                if (ix->shape[j] != t->shape[pos + j]) {
                    rc = TN__FAIL_INT("%s: the shape of the mask %s at index %d does not match the shape of the indexed tensor %s at index %d",
                                      fn, TN__SHAPE(ix), j, TN__SHAPE(t), pos + j);
                    break;
                }
            if (rc) break;
            tn_tensor *nz = tn__nonzero_raw(ix);
            if (!nz) { rc = -1; break; }
            temps[ntemps++] = nz;
            for
 (int j = 0; j < ix->ndim; j++) {
                int64_t shp = nz->shape[0], st = nz->strides[0];
                tn_tensor col = tn__restrided(nz, &shp, &st, 1);
                col.offset = nz->offset + j * nz->strides[1];
                raw[k] = tn__copy_as(&col, TN_I64, nz->device);
                if (!raw[k]) { rc = -1; break; }
                temps[ntemps++] = raw[k];
                dims[k++] = pos++;
            }
        } else {
            raw[k] = ix;
            dims[k++] = pos++;
        }
    }
    int64_t bshape[TN_MAX_DIMS];
    int bnd = 0;
    for (int j = 0; j < k && rc == 0; j++) {
        int nb = tn__broadcast(bshape, bnd, raw[j]->shape, raw[j]->ndim, bshape);
        if (nb < 0) { rc = TN__FAIL_INT("%s: shape mismatch: indexing tensors could not be broadcast together (shapes %s and %s)", fn, tn__shape_str(bshape, bnd), TN__SHAPE(raw[j])); break; }
        bnd = nb;
    }
    for (int j = 0; j < k && rc == 0; j++) {
        a->idx[j] = tn__checked_index(fn, raw[j], t->shape[dims[j]], true, dims[j], t->device);
        if (!a->idx[j]) rc = -1; else a->k = j + 1;
    }
    for (int i = 0; i < ntemps; i++) tn_release(temps[i]);
    if (rc) { tn__adv_free(a); return -1; }
    if (k == 0) { /* no advanced index: the whole tensor */
        a->ndim = t->ndim;
        for (int i = 0; i < t->ndim; i++) { a->shape[i] = t->shape[i]; a->tstrides[i] = t->strides[i]; }
        return 0;
    }
    bool adjacent = true;
    for (int j = 1; j < k; j++) adjacent = adjacent && dims[j] == dims[j - 1] + 1;
    int bpos = adjacent ? dims[0] : 0, nd = 0;
    if (t->ndim - k + bnd > TN_MAX_DIMS) { tn__adv_free(a); return TN__FAIL_INT("%s: result would have more than %d dims", fn, TN_MAX_DIMS); }
    bool is_adv[TN_MAX_DIMS] = {false};
    for (int j = 0; j < k; j++) is_adv[dims[j]] = true;
    for (int i = 0; i <= t->ndim; i++) {
        if (nd == bpos && (adjacent ? i == dims[0] : i == 0)) {
            for (int b = 0; b < bnd; b++) { a->shape[nd] = bshape[b]; a->tstrides[nd++] = 0; }
        }
        if (i < t->ndim && !is_adv[i]) { a->shape[nd] = t->shape[i]; a->tstrides[nd++] = t->strides[i]; }
    }
    a->ndim = nd;
    for (int j = 0; j < k; j++) {
        int64_t es[TN_MAX_DIMS], bs[TN_MAX_DIMS], vs[TN_MAX_DIMS] = {0};
        tn__expand_strides(fn, a->idx[j], bshape, bnd, es, bs);
        for (int b = 0; b < bnd; b++) vs[bpos + b] = bs[b];
        a->view[j] = tn__restrided(a->idx[j], a->shape, vs, nd);
        a->idx_strides[j] = t->strides[dims[j]];
    }
    return 0;
}

/* x[True] / x[False]: a 0-d bool index adds a dim of size 1 and keeps (True) or empties
   (False) it. Rewritten here as an int64 index [0] or [] on a dim of size 1 inserted at
   its place, so the plan above never sees one. p->t is a view of t (writes reach t). */
typedef struct tn__prep { tn_tensor *t, *idx[TN_MAX_DIMS], *temps[TN_MAX_DIMS + 1]; int ntemps; } tn__prep;
static void tn__prep_free(tn__prep *p) { for (int i = 0; i < p->ntemps; i++) tn_release(p->temps[i]); p->ntemps = 0; }
static int tn__index_prep(const char *fn, tn_tensor *t, tn_tensor *const *indices, int n, tn__prep *p) {
    memset(p, 0, sizeof *p);
    p->t = t;
    if (n < 0 || n > TN_MAX_DIMS || (n && !indices)) return TN__FAIL_INT("%s: too many indices for tensor of dimension %d (got %d)", fn, t->ndim, n);
    int pos = 0;
    for (int i = 0; i < n; i++) {
        tn_tensor *ix = indices[i];
        p->idx[i] = ix;
        if (!(ix && ix->dtype == TN_BOOL && ix->ndim == 0)) { pos += ix && ix->dtype == TN_BOOL ? ix->ndim : 1; continue; }
        tn_tensor *cur = p->t;
        if (cur->ndim >= TN_MAX_DIMS || pos > cur->ndim) { tn__prep_free(p); return TN__FAIL_INT("%s: too many indices for tensor of dimension %d", fn, t->ndim); }
        int64_t shape[TN_MAX_DIMS], strides[TN_MAX_DIMS], len = tn__read_double(ix) != 0;
        for (int d = 0, j = 0; d <= cur->ndim; d++) {
            if (d == pos) { shape[d] = 1; strides[d] = 1; continue; }
            shape[d] = cur->shape[j]; strides[d] = cur->strides[j]; j++;
        }
        tn_tensor *v = tn__view_of(cur, shape, strides, cur->ndim + 1, cur->offset);
        tn_tensor *zero = tn__new(TN_I64, t->device, &len, 1);
        if (v) p->temps[p->ntemps++] = v;
        if (zero) p->temps[p->ntemps++] = zero;
        if (!v || !zero || tn__backend(zero->device)->fill(zero, 0)) { tn__prep_free(p); return -1; }
        p->t = v;
        p->idx[i] = zero;
        pos++;
    }
    return 0;
}

/* Save the index list of an advanced-indexing node (i[k] marks which entries exist). */
static void tn__save_indices(tn_node *nd, tn_tensor *const *indices, int n) {
    if (!nd) return;
    nd->ni = n;
    for (int k = 0; k < n; k++) {
        nd->i[k] = indices[k] != NULL;
        if (indices[k]) tn__node_save(nd, indices[k]);
    }
}

static tn_tensor *tn__index_planned(tn_tensor *t, tn_tensor *const *indices, int n);
TNDEF tn_tensor *tn_index(tn_tensor *t, tn_tensor *const *indices, int n) {
    TN__CHECK_NULL(t);
    tn__prep pr;
    if (tn__index_prep("tn_index", t, indices, n, &pr)) return NULL;
    tn_tensor *out = tn__index_planned(pr.t, pr.idx, n);
    tn__prep_free(&pr);
    tn_node *nd = out ? tn__node_new(G_INDEX, 0, &t, 1) : NULL;
    tn__save_indices(nd, indices, n);
    return tn__own(tn__node_attach(nd, out));
}

static tn_tensor *tn__index_planned(tn_tensor *t, tn_tensor *const *indices, int n) {
    tn__adv a;
    if (tn__adv_plan("tn_index", t, indices, n, &a)) return NULL;
    tn_tensor *out = tn__new(t->dtype, t->device, a.shape, a.ndim);
    tn_tensor src = tn__restrided(t, a.shape, a.tstrides, a.ndim);
    if (out && tn__run_index(GATHER, out, &src, a.view, a.idx_strides, a.k)) { tn_release(out); out = NULL; }
    tn__adv_free(&a);
    return out;
}

static int tn__index_put_into(const char *fn, tn_tensor *target, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate) {
    if (values->dtype != target->dtype && !values->is_wrapped_number)
        return TN__FAIL_INT("%s: index put requires the source and destination dtypes match, got %s for the destination and %s for the source",
                            fn, tn_dtype_name(target->dtype), tn_dtype_name(values->dtype));
    if (tn__check_no_internal_overlap(fn, target) || tn__check_no_overlap(fn, target, values) || tn__check_cpu_dtype(fn, target)) return -1;
    tn__prep pr;
    tn_tensor *orig = target; /* pr.t may be a temporary view, freed below */
    if (tn__index_prep(fn, target, indices, n, &pr)) return -1;
    target = pr.t;
    indices = pr.idx;
    tn__adv a;
    if (tn__adv_plan(fn, target, indices, n, &a)) { tn__prep_free(&pr); return -1; }
    int64_t es[TN_MAX_DIMS], vs[TN_MAX_DIMS];
    int rc = -1;
    tn_tensor *v = tn__check_same_device(fn, target, values) ? NULL : tn__as_dtype(values, target->dtype);
    if (v && v->device != target->device) { /* a CPU scalar joins the target's device */
        tn_tensor *m = tn__copy_as(v, v->dtype, target->device);
        tn_release(v);
        v = m;
    }
    if (v && tn__expand_strides(fn, v, a.shape, a.ndim, es, vs) == 0) {
        tn_tensor src = tn__restrided(v, es, vs, a.ndim);
        tn_tensor dst = tn__restrided(target, a.shape, a.tstrides, a.ndim);
        rc = tn__run_index(accumulate ? SCATTER_ADD : SCATTER, &dst, &src, a.view, a.idx_strides, a.k);
    } else if (v) {
        tn__error("%s: shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s", fn, TN__SHAPE(values), tn__shape_str(a.shape, a.ndim));
    }
    tn_release(v);
    tn__adv_free(&a);
    if (rc == 0) tn__bump_version(orig);
    tn__prep_free(&pr);
    return rc;
}


TNDEF tn_tensor *tn_index_put__opts(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, tn_put_fn_opts o) {
    const bool accumulate = o.accumulate;
    TN__CHECK_NULL(t, values);
    tn_tensor *x0;
    int m = tn__inplace_begin("tn_index_put_", t, &values, 1, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_index_put_", t, tn_index_put(x0, indices, n, values, .accumulate = accumulate));
    return tn__index_put_into("tn_index_put_", t, indices, n, values, accumulate) ? NULL : t;
}
TNDEF tn_tensor *tn_index_put__str(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, const char *options) { TN__KW_STR(tn_put_fn_opts, put, "tn_index_put_", options, tn_index_put__opts(t, indices, n, values, o)); }
TNDEF tn_tensor *tn_index_put_opts(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, tn_put_fn_opts o) {
    const bool accumulate = o.accumulate;
    TN__CHECK_NULL(t, values);
    tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
    if (c && tn__index_put_into("tn_index_put", c, indices, n, values, accumulate)) { tn_release(c); c = NULL; }
    tn_tensor *ins[2] = {t, values};
    tn_node *nd = c ? tn__node_new(G_INDEX_PUT, 0, ins, 2) : NULL;
    if (nd) nd->d[0] = accumulate;
    tn__save_indices(nd, indices, n);
    return tn__own(tn__node_attach(nd, c));
}
TNDEF tn_tensor *tn_index_put_str(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, const char *options) { TN__KW_STR(tn_put_fn_opts, put, "tn_index_put", options, tn_index_put_opts(t, indices, n, values, o)); }

static int tn__check_mask(const char *fn, tn_tensor *mask) {
    if (mask->dtype != TN_BOOL) return TN__FAIL_INT("%s: expected a bool mask, got %s", fn, tn_dtype_name(mask->dtype));
    return 0;
}

static tn_tensor *tn__masked_fill_impl(tn_tensor *t, tn_tensor *mask, double value) {
    TN__CHECK_NULL(t, mask);
    if (tn__check_mask("tn_masked_fill", mask)) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn_scalar_tensor(value, t->dtype);
    tn_tensor *w = tn_where(mask, v, t); /* broadcasts self and mask, as PyTorch's out-of-place form */

    tn_tensor *r = tn_keep(w ? tn_to_dtype(w, t->dtype) : NULL);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_masked_fill(tn_tensor *t, tn_tensor *mask, double value) { return tn__grad_name(TN__AS("tn_masked_fill", tn__masked_fill_impl(t, mask, value)), "MaskedFillBackward0"); }

static tn_tensor *tn__masked_fill__impl(tn_tensor *t, tn_tensor *mask, double value) {
    TN__CHECK_NULL(t, mask);
    tn_tensor *x0;
    int m = tn__inplace_begin("tn_masked_fill_", t, NULL, 0, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_masked_fill_", t, tn_masked_fill(x0, mask, value));
    tn_scope_begin();

    tn_tensor *r = tn_masked_fill(t, mask, value);
    int rc = r ? tn__copy_into("tn_masked_fill_", t, r) : -1;
    tn_scope_end();
    return rc ? NULL : t;
}
TNDEF tn_tensor *tn_masked_fill_(tn_tensor *t, tn_tensor *mask, double value) { return tn__grad_name(TN__AS("tn_masked_fill_", tn__masked_fill__impl(t, mask, value)), "MaskedFillBackward0"); }

static tn_tensor *tn__masked_fill_tensor_impl(tn_tensor *t, tn_tensor *mask, tn_tensor *value) {
    TN__CHECK_NULL(t, mask, value);
    if (tn__check_mask("tn_masked_fill", mask)) return NULL;
    if (value->ndim != 0)
        return (tn_tensor *)tn__error("tn_masked_fill: only supports a 0-dimensional value tensor, but got tensor with %d dimension(s)", value->ndim);
    double re = 0, im = 0;   /* a complex value into a real tensor: its imaginary part would be lost (PyTorch's checked conversion) */
    if (tn_dtype_is_complex(value->dtype) && !tn_dtype_is_complex(t->dtype) && (tn_item_complex(value, &re, &im) || im != 0))
        return (tn_tensor *)tn__error("tn_masked_fill: value cannot be converted to type %s without overflow", tn_dtype_name(t->dtype));
    tn_scope_begin();
    tn_tensor *v = tn_to_dtype(value, t->dtype); /* differentiable: value's gradient is the masked sum */
    tn_tensor *w = v ? tn_where(mask, v, t) : NULL;
    tn_tensor *r = tn_keep(w ? tn_to_dtype(w, t->dtype) : NULL);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_masked_fill_tensor(tn_tensor *t, tn_tensor *mask, tn_tensor *value) { return tn__grad_name(TN__AS("tn_masked_fill", tn__masked_fill_tensor_impl(t, mask, value)), "MaskedFillBackward1"); }

static tn_tensor *tn__masked_fill_tensor__impl(tn_tensor *t, tn_tensor *mask, tn_tensor *value) {
    TN__CHECK_NULL(t, mask, value);
    tn_tensor *x0;
    int m = tn__inplace_begin("tn_masked_fill_", t, &value, 1, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_masked_fill_", t, tn_masked_fill_tensor(x0, mask, value));
    tn_scope_begin();
    tn_tensor *r = tn_masked_fill_tensor(t, mask, value);
    int rc = r ? tn__copy_into("tn_masked_fill_", t, r) : -1;
    tn_scope_end();
    return rc ? NULL : t;
}
TNDEF tn_tensor *tn_masked_fill_tensor_(tn_tensor *t, tn_tensor *mask, tn_tensor *value) { return tn__grad_name(TN__AS("tn_masked_fill_", tn__masked_fill_tensor__impl(t, mask, value)), "MaskedFillBackward1"); }

TNDEF tn_tensor *tn_masked_select(tn_tensor *t, tn_tensor *mask) {
    TN__CHECK_NULL(t, mask);
    if (tn__check_mask("tn_masked_select", mask)) return NULL;
    int64_t bs[TN_MAX_DIMS];
    int nd = tn__broadcast(t->shape, t->ndim, mask->shape, mask->ndim, bs);
    if (nd < 0) return (tn_tensor *)tn__error("tn_masked_select: mask %s and input %s are not broadcastable", TN__SHAPE(mask), TN__SHAPE(t));
    tn_scope_begin();
    tn_tensor *tb = tn_expand(t, bs, nd), *mb = tn_expand(mask, bs, nd), *r;
    if (nd == 0) { /* a 0-d mask selects all or nothing */
        tb = tn_reshape(tb, tn__one, 1);
        mb = tn_reshape(mb, tn__one, 1);
    }
    r = tn_keep(tn_index(tb, &mb, 1));
    tn_scope_end();
    return r;
}

static tn_tensor *tn__cpu_nonzero(tn_tensor *x) {
    tn_tensor *b = tn__copy_as(x, TN_BOOL, TN_CPU);
    if (!b) return NULL;
    const bool *v = (const bool *)tn_data_ptr(b);
    int64_t n = tn_numel(b), count = 0;
    for (int64_t i = 0; i < n; i++) count += v[i];
    int64_t shape[2] = {count, x->ndim};
    tn_tensor *out = tn__new(TN_I64, TN_CPU, shape, 2);
    if (out) {
        int64_t *o = (int64_t *)tn_data_ptr(out);
        for (int64_t i = 0; i < n; i++) {
            if (!v[i]) continue;
            int64_t r = i;
            for (int d = x->ndim - 1; d >= 0; d--) { o[d] = r % x->shape[d]; r /= x->shape[d]; }
            o += x->ndim;
        }
    }
    tn_release(b);
    return out;
}

TNDEF tn_tensor *tn_nonzero(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (tn__check_cpu_dtype("tn_nonzero", t)) return NULL;
    return tn__own(tn__nonzero_raw(t));
}

TNDEF tn_tensor *tn_argwhere(tn_tensor *t) { return TN__AS("tn_argwhere", tn_nonzero(t)); }

/* ---- scatter_reduce and scatter(reduce=) ---- */
enum { TN__SRED_SUM, TN__SRED_PROD, TN__SRED_MEAN, TN__SRED_AMAX, TN__SRED_AMIN };
static const char *const tn__sred_names[] = {"sum", "prod", "mean", "amax", "amin"};
/* The reduction a reduce argument names (scatter's legacy "add" / "multiply" with legacy), or -1. */
static int tn__sred_kind(const char *fn, const char *reduce, bool legacy) {
    if (reduce && legacy && !strcmp(reduce, "add")) return TN__SRED_SUM;
    if (reduce && legacy && !strcmp(reduce, "multiply")) return TN__SRED_PROD;
    for (int k = 0; reduce && !legacy && k < 5; k++) if (!strcmp(reduce, tn__sred_names[k])) return k;
    if (legacy) return TN__FAIL_INT("%s: reduce argument must be either add or multiply, got %s", fn, reduce ? reduce : "NULL");
    return TN__FAIL_INT("%s: reduce argument must be either sum, prod, mean, amax or amin, got %s", fn, reduce ? reduce : "NULL");
}
/* target (modified in place) reduced with src at index along dim, untracked. */
static int tn__scatter_reduce_into(const char *fn, tn_tensor *target, int64_t dim, tn_tensor *index, tn_tensor *src, int kind, bool include_self) {
    static const tn_index_mode modes[] = {SCATTER_ADD, SCATTER_MUL, SCATTER_ADD, SCATTER_MAX, SCATTER_MIN};
    tn_scope_begin();
    int rc = 0;
    if (!include_self) {   /* the scattered-to positions start from the reduction's identity, as PyTorch */
        const bool fl = tn_dtype_is_floating(target->dtype);
        double lowest = fl ? -INFINITY : tn__int_lowest(target->dtype), highest = fl ? INFINITY : tn__int_highest(target->dtype);
        double ident = kind == TN__SRED_PROD ? 1 : kind == TN__SRED_AMAX ? lowest : kind == TN__SRED_AMIN ? highest : 0;
        tn_tensor *fill = tn_full(index->shape, index->ndim, ident, target->dtype);
        /* INT64_MAX is no double (2^63 saturates to INT64_MIN): its bits are ~INT64_MIN */
        if (fill && kind == TN__SRED_AMIN && target->dtype == TN_I64) fill = tn_bitwise_not(tn_full(index->shape, index->ndim, (double)INT64_MIN, TN_I64));
        fill = tn_to(fill, target->device);
        rc = fill ? tn__scatter_into(fn, target, dim, index, fill, SCATTER) : -1;
    }
    if (rc == 0) rc = tn__scatter_into(fn, target, dim, index, src, modes[kind]);
    if (rc == 0 && kind == TN__SRED_MEAN) {   /* divided by the count of values combined (at least 1); integers floor */
        tn_tensor *count = include_self ? tn_ones_like(target) : tn_zeros_like(target);
        rc = count ? tn__scatter_into(fn, count, dim, index, tn_ones_like(src), SCATTER_ADD) : -1;
        if (rc == 0) {
            count = tn_where(tn_eq_scalar(count, 0), tn_ones_like(count), count);
            tn_tensor *r = tn_dtype_is_floating(target->dtype) ? tn_div(target, count) : tn_floor_divide(target, count);
            rc = r ? tn__copy(target, r) : -1;
        }
    }
    tn_scope_end();
    return rc;
}
static tn_tensor *tn__scatter_reduce_op(const char *fn, tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, bool include_self,
                                        bool legacy, bool inplace) {
    TN__CHECK_NULL(t, index, src);
    const int kind = tn__sred_kind(fn, reduce, legacy);
    if (kind < 0 || tn__check_cpu_dtype(fn, t) || tn__check_cpu_dtype(fn, src)) return NULL;
    if (inplace) {
        tn_tensor *x0;
        int m = tn__inplace_begin(fn, t, &src, 1, &x0);
        if (m) return m < 0 ? NULL : tn__inplace_end(fn, t, tn__scatter_reduce_op(fn, x0, dim, index, src, reduce, include_self, legacy, false));
    }
    tn_tensor *target = inplace ? tn_retain(t) : tn__copy_as(t, t->dtype, t->device);
    if (target && tn__scatter_reduce_into(fn, target, dim, index, src, kind, include_self)) { tn_release(target); target = NULL; }
    if (!inplace && target) {
        tn_tensor *ins[2] = {t, src};
        tn_node *nd = tn__node_new(G_SCATTER_REDUCE, kind, ins, 2);
        if (nd) {
            nd->i[0] = tn__wrap_dim(fn, dim, t->ndim);
            nd->i[1] = include_self;
            nd->i[2] = legacy;   /* no derivative */
            if (legacy) nd->name = "ScatterBackward1";
            tn__node_save(nd, index);
            tn__node_save(nd, t);
            tn__node_save(nd, src);
            tn__node_save_result(nd, target);
        }
        target = tn__node_attach(nd, target);
    }
    return inplace ? tn__borrowed(target) : tn__own(target);
}
TNDEF tn_tensor *tn_scatter_reduce_opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, tn_scatter_reduce_fn_opts o) {
    return tn__scatter_reduce_op("tn_scatter_reduce", t, dim, index, src, reduce, o.include_self, false, false);
}
TNDEF tn_tensor *tn_scatter_reduce_str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, const char *options) { TN__KW_STR(tn_scatter_reduce_fn_opts, scatter_reduce, "tn_scatter_reduce", options, tn_scatter_reduce_opts(t, dim, index, src, reduce, o)); }
TNDEF tn_tensor *tn_scatter_reduce__opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, tn_scatter_reduce_fn_opts o) {
    return tn__scatter_reduce_op("tn_scatter_reduce_", t, dim, index, src, reduce, o.include_self, false, true);
}
TNDEF tn_tensor *tn_scatter_reduce__str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, const char *options) { TN__KW_STR(tn_scatter_reduce_fn_opts, scatter_reduce, "tn_scatter_reduce_", options, tn_scatter_reduce__opts(t, dim, index, src, reduce, o)); }
/* index_reduce: index spread along source's other dims (a view), then scatter_reduce */
static tn_tensor *tn__index_reduce_impl(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, bool include_self) {
    TN__CHECK_NULL(t, index, src);
    const char *fn = "tn_index_reduce";
    if (!reduce || (strcmp(reduce, "prod") && strcmp(reduce, "mean") && strcmp(reduce, "amax") && strcmp(reduce, "amin")))
        return (tn_tensor *)tn__error("%s: index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s.", fn, reduce ? reduce : "NULL");
    if (index->ndim > 1)
        return (tn_tensor *)tn__error("%s: index_reduce_(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s", fn, index->ndim,
                                      tn__torch_type_name(index->dtype), TN__SHAPE(index));
    if (index->dtype != TN_I64 && index->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: index_reduce_(): Expected dtype int32/int64 for index but got: %s", fn, tn__torch_type_name(index->dtype));
    if (t->dtype != src->dtype)
        return (tn_tensor *)tn__error("%s: index_reduce_(): self (%s) and source (%s) must have the same scalar type", fn, tn__torch_type_name(t->dtype), tn__torch_type_name(src->dtype));
    const int d = tn__wrap_dim(fn, dim, t->ndim > 0 ? t->ndim : 1);
    if (d < 0) return NULL;
    const int64_t along = src->ndim ? (d < src->ndim ? src->shape[d] : -1) : 1;
    if (tn_numel(index) != along)
        return (tn_tensor *)tn__error("%s: index_reduce_(): Number of indices (%lld) should be equal to source.size(dim): (%lld), for dim: %d", fn,
                                      (long long)tn_numel(index), (long long)along, d);
    bool slices = (t->ndim > 0 ? t->ndim : 1) == (src->ndim > 0 ? src->ndim : 1);
    for (int i = 0; slices && i < src->ndim && t->ndim; i++) slices = i == d || src->shape[i] == t->shape[i];
    if (!slices) return (tn_tensor *)tn__error("%s: index_reduce_(): source (%s) and self (%s) must have the same slice shapes outside dim %d", fn, TN__SHAPE(src), TN__SHAPE(t), d);
    tn_scope_begin();
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < src->ndim; i++) shape[i] = i == d ? -1 : 1;
    tn_tensor *idx = tn_to_dtype(index, TN_I64);
    idx = idx ? (src->ndim ? tn_expand(tn_reshape(idx, shape, src->ndim), src->shape, src->ndim) : tn_reshape(idx, NULL, 0)) : NULL;
    return tn__scope_return(idx ? tn_scatter_reduce(t, d, idx, src, reduce, .include_self = include_self) : NULL);
}
TNDEF tn_tensor *tn_index_reduce_opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *source, const char *reduce, tn_scatter_reduce_fn_opts o) {
    return TN__AS("tn_index_reduce", tn__index_reduce_impl(t, dim, index, source, reduce, o.include_self));
}
TNDEF tn_tensor *tn_index_reduce_str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *source, const char *reduce, const char *options) { TN__KW_STR(tn_scatter_reduce_fn_opts, scatter_reduce, "tn_index_reduce", options, tn_index_reduce_opts(t, dim, index, source, reduce, o)); }
/* combinations: the index rows in itertools' order (the next row: the rightmost index that
   can still grow grows, those after it restart from it, or from it + 1 without
   replacement), gathered by index_select */
static tn_tensor *tn__combinations_impl(tn_tensor *x, int64_t r, bool rep) {
    TN__CHECK_NULL(x);
    const char *fn = "tn_combinations";
    if (x->ndim != 1) return (tn_tensor *)tn__error("%s: Expect a 1D vector, but got shape %s", fn, TN__SHAPE(x));
    if (r < 0) return (tn_tensor *)tn__error("%s: Expect a non-negative number, but got %lld", fn, (long long)r);
    const int64_t n = x->shape[0];
    tn_scope_begin();
    if (r == 0) {
        const int64_t zero = 0;
        return tn__scope_return(tn_index_select(x, 0, tn_zeros(&zero, 1, TN_I64)));
    }
    /* the count: C(n, r), or C(n + r - 1, r) with replacement, checked as it grows */
    const int64_t top = rep ? n + r - 1 : n;
    int64_t count = top >= r ? 1 : 0;
    for (int64_t k = 1; count && k <= r; k++) {
        int64_t m;
        if (!tn__mul_ok(count, top - r + k, &m)) { tn_scope_end(); return (tn_tensor *)tn__error("%s: too many combinations of %lld elements taken %lld at a time", fn, (long long)n, (long long)r); }
        count = m / k;   /* exact: the product of k consecutive numbers is divisible by k! */
    }
    int64_t total;
    if (!tn__mul_ok(count, r, &total)) { tn_scope_end(); return (tn_tensor *)tn__error("%s: too many combinations of %lld elements taken %lld at a time", fn, (long long)n, (long long)r); }
    tn_tensor *idx = tn__own(tn__new_checked(fn, &total, 1, TN_I64));
    if (!idx) { tn_scope_end(); return NULL; }
    int64_t *p = (int64_t *)tn_data_ptr(idx);
    for (int64_t row = 0; row < count; row++) {
        int64_t *c = p + row * r;
        if (row == 0) {
            for (int64_t k = 0; k < r; k++) c[k] = rep ? 0 : k;
            continue;
        }
        memcpy(c, c - r, (size_t)r * sizeof *c);
        int64_t k = r - 1;
        while (c[k] == (rep ? n - 1 : n - r + k)) k--;   /* row < count: some index can grow */
        c[k]++;
        for (int64_t j = k + 1; j < r; j++) c[j] = rep ? c[k] : c[j - 1] + 1;
    }
    const int64_t shape[2] = {count, r};
    return tn__scope_return(tn_reshape(tn_index_select(x, 0, idx), shape, 2));
}
TNDEF tn_tensor *tn_combinations_opts(tn_tensor *x, tn_combinations_fn_opts o) { return TN__AS("tn_combinations", tn__combinations_impl(x, o.r, o.with_replacement)); }
TNDEF tn_tensor *tn_combinations_str(tn_tensor *x, const char *options) {
    TN__KW_STR(tn_combinations_fn_opts, combinations, "tn_combinations", options, tn_combinations_opts(x, o));
}
TNDEF tn_tensor *tn_scatter_with_reduce(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce) {
    return tn__scatter_reduce_op("tn_scatter_with_reduce", t, dim, index, src, reduce, true, true, false);
}
TNDEF tn_tensor *tn_scatter_with_reduce_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce) {
    return tn__scatter_reduce_op("tn_scatter_with_reduce_", t, dim, index, src, reduce, true, true, true);
}

/* ---- index_add, index_copy, index_fill: index_put along one dim ----
   PyTorch's checks (index 0-d or 1-d, non-negative and in range; source of self's shape
   with the index's length along dim), then t[:, ..., :, index] = / += values. */
static int tn__index_dim_check(const char *fn, tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, bool int32_ok, int *dout) {
    int d = tn__wrap_dim(fn, dim, t->ndim);
    if (d < 0) return -1;
    if (index->dtype != TN_I64 && !(int32_ok && index->dtype == TN_I32))
        return TN__FAIL_INT("%s: Expected dtype int%s64 for index but got %s", fn, int32_ok ? "32/int" : "", tn_dtype_name(index->dtype));
    if (index->ndim > 1) return TN__FAIL_INT("%s: Index is supposed to be a vector, but got dim: %d with shape %s", fn, index->ndim, TN__SHAPE(index));
    const int64_t ni = tn_numel(index), size = t->ndim ? t->shape[d] : 1;
    if (src) {
        if (src->dtype != t->dtype)
            return TN__FAIL_INT("%s: self (%s) and source (%s) must have the same scalar type", fn, tn_dtype_name(t->dtype), tn_dtype_name(src->dtype));
        bool ok = t->ndim == 0 ? src->ndim <= 1 && tn_numel(src) == ni : src->ndim == t->ndim;
        for (int i = 0; ok && i < t->ndim; i++) ok = src->shape[i] == (i == d ? ni : t->shape[i]);
        if (!ok)
            return TN__FAIL_INT("%s: source %s does not fit self %s with %lld indices along dim %d (source.size(dim) must be the number of indices, its other sizes self's)",
                                fn, TN__SHAPE(src), TN__SHAPE(t), (long long)ni, d);
        if (tn__check_same_device(fn, t, src)) return -1;
    }
    if (tn__check_same_device(fn, t, index)) return -1;
    tn_tensor *chk = tn__checked_index(fn, index, size, false, d, TN_CPU);   /* no negative indices, as PyTorch */
    if (!chk) return -1;
    tn_release(chk);
    *dout = d;
    return 0;
}
/* t[:, ..., index] (dim d) = or += values, out of place or into t; a 0-d t as [1]. */
static tn_tensor *tn__index_dim_put(tn_tensor *t, int d, tn_tensor *index, tn_tensor *values, bool accumulate, bool inplace) {
    tn_tensor *ix[TN_MAX_DIMS] = {NULL};
    int64_t m1 = -1;
    tn_tensor *tv = t->ndim ? t : tn_reshape(t, tn__one, 1);
    ix[d] = index->ndim ? index : tn_reshape(index, tn__one, 1);
    if (t->ndim == 0 && values->ndim) values = tn_reshape(values, &m1, 1);
    if (inplace) return tn_index_put_(tv, ix, d + 1, values, .accumulate = accumulate) ? t : NULL;
    tn_tensor *r = tn_index_put(tv, ix, d + 1, values, .accumulate = accumulate);
    return t->ndim ? r : tn_reshape(r, NULL, 0);
}
/* kind 0 index_add (alpha), 1 index_copy, 2 index_fill (value); in place or not. */
static tn_tensor *tn__index_dim_op(const char *fn, int kind, tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, double scalar, bool inplace) {
    static const char *const names[] = {"IndexAddBackward0", "IndexCopyBackward0", "IndexFillBackward0"};
    TN__CHECK_NULL(t, index);
    if (kind != 2 && !src) return NULL;
    int d;
    if (tn__check_cpu_dtype(fn, t) || tn__index_dim_check(fn, t, dim, index, kind == 2 ? NULL : src, kind == 0, &d)) return NULL;
    if (inplace && tn__check_no_internal_overlap(fn, t)) return NULL;
    tn__as_begin();
    tn_scope_begin();
    tn_tensor *v = src;
    if (kind == 0 && scalar != 1)   /* an integer tensor takes alpha truncated, as PyTorch */
        v = tn_mul_scalar(src, tn_dtype_is_floating(t->dtype) ? scalar : trunc(scalar));
    if (kind == 2) v = tn_to(tn_scalar_tensor(scalar, t->dtype), t->device);
    tn_tensor *r = v ? tn__index_dim_put(t, d, index, v, kind == 0, inplace) : NULL;
    if (r && r->grad_fn && r->grad_fn->op == G_INDEX_PUT) r->grad_fn->name = names[kind];
    if (r && !inplace) r = tn_keep(r);
    tn_scope_end();
    return tn__as_end(fn, r);
}
TNDEF tn_tensor *tn_index_add_opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_add_fn_opts o) { return tn__index_dim_op("tn_index_add", 0, t, dim, index, src, o.alpha, false); }
TNDEF tn_tensor *tn_index_add__opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_add_fn_opts o) { return tn__index_dim_op("tn_index_add_", 0, t, dim, index, src, o.alpha, true); }
TNDEF tn_tensor *tn_index_add_str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *options) {
    TN__KW_STR(tn_index_add_fn_opts, index_add, "tn_index_add", options, tn_index_add_opts(t, dim, index, src, o));
}
TNDEF tn_tensor *tn_index_add__str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *options) {
    TN__KW_STR(tn_index_add_fn_opts, index_add, "tn_index_add_", options, tn_index_add__opts(t, dim, index, src, o));
}
TNDEF tn_tensor *tn_index_copy(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__index_dim_op("tn_index_copy", 1, t, dim, index, src, 0, false); }
TNDEF tn_tensor *tn_index_copy_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__index_dim_op("tn_index_copy_", 1, t, dim, index, src, 0, true); }
TNDEF tn_tensor *tn_index_fill(tn_tensor *t, int64_t dim, tn_tensor *index, double value) { return tn__index_dim_op("tn_index_fill", 2, t, dim, index, NULL, value, false); }
TNDEF tn_tensor *tn_index_fill_(tn_tensor *t, int64_t dim, tn_tensor *index, double value) { return tn__index_dim_op("tn_index_fill_", 2, t, dim, index, NULL, value, true); }

/* ---- take, put, take_along_dim: indexing of the flattened tensor, gather ---- */
static tn_tensor *tn__take_impl(tn_tensor *t, tn_tensor *index) {
    TN__CHECK_NULL(t, index);
    if (index->dtype != TN_I64) return (tn_tensor *)tn__error("tn_take: Expected a long tensor for index, but got %s", tn_dtype_name(index->dtype));
    tn_scope_begin();
    int64_t m1 = -1;
    tn_tensor *r = tn__grad_name(tn_index(tn_reshape(t, &m1, 1), &index, 1), "TakeBackward0");
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_take(tn_tensor *t, tn_tensor *index) { return TN__AS("tn_take", tn__take_impl(t, index)); }

static int tn__put_check(const char *fn, tn_tensor *t, tn_tensor *index, tn_tensor *source) {
    if (index->dtype != TN_I64) return TN__FAIL_INT("%s: Expected a long tensor for index, but got %s", fn, tn_dtype_name(index->dtype));
    if (tn_numel(index) != tn_numel(source))
        return TN__FAIL_INT("%s: Expected source and index to have the same number of elements, but got source.numel() = %lld, index.numel() = %lld",
                            fn, (long long)tn_numel(source), (long long)tn_numel(index));
    if (source->dtype != t->dtype)
        return TN__FAIL_INT("%s: self and source expected to have the same dtype, but got self.dtype = %s and source.dtype = %s", fn, tn_dtype_name(t->dtype),
                            tn_dtype_name(source->dtype));
    return 0;
}
static tn_tensor *tn__put_impl(tn_tensor *t, tn_tensor *index, tn_tensor *source, bool accumulate) {
    TN__CHECK_NULL(t, index, source);
    if (tn__put_check("tn_put", t, index, source)) return NULL;
    tn_scope_begin();
    int64_t m1 = -1;
    tn_tensor *fi = tn_reshape(index, &m1, 1);
    tn_tensor *r = tn_index_put(tn_reshape(t, &m1, 1), &fi, 1, tn_reshape(source, &m1, 1), .accumulate = accumulate);
    r = tn_keep(tn__grad_name(tn_reshape(r, t->shape, t->ndim), "PutBackward0"));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_put_opts(tn_tensor *t, tn_tensor *index, tn_tensor *source, tn_put_fn_opts o) { return TN__AS("tn_put", tn__put_impl(t, index, source, o.accumulate)); }
TNDEF tn_tensor *tn_put_str(tn_tensor *t, tn_tensor *index, tn_tensor *source, const char *options) { TN__KW_STR(tn_put_fn_opts, put, "tn_put", options, tn_put_opts(t, index, source, o)); }
static tn_tensor *tn__put__impl(tn_tensor *t, tn_tensor *index, tn_tensor *source, bool accumulate) {
    TN__CHECK_NULL(t, index, source);
    if (tn__put_check("tn_put_", t, index, source) || tn__check_no_internal_overlap("tn_put_", t)) return NULL;
    tn_tensor *x0, *others[2] = {index, source};
    int m = tn__inplace_begin("tn_put_", t, others, 2, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_put_", t, tn_put(x0, index, source, .accumulate = accumulate));
    tn_scope_begin();
    int64_t m1 = -1;
    tn_tensor *fi = tn_reshape(index, &m1, 1), *fs = tn_reshape(source, &m1, 1);
    int rc;
    if (tn_is_contiguous(t)) {   /* written through a flat view */
        rc = tn_index_put_(tn_view(t, &m1, 1), &fi, 1, fs, .accumulate = accumulate) ? 0 : -1;
    } else {
        tn_tensor *r = tn_put(t, index, source, .accumulate = accumulate);
        rc = r ? tn__copy_into("tn_put_", t, r) : -1;
    }
    tn_scope_end();
    return rc ? NULL : t;
}
TNDEF tn_tensor *tn_put__opts(tn_tensor *t, tn_tensor *index, tn_tensor *source, tn_put_fn_opts o) { return TN__AS("tn_put_", tn__put__impl(t, index, source, o.accumulate)); }
TNDEF tn_tensor *tn_put__str(tn_tensor *t, tn_tensor *index, tn_tensor *source, const char *options) { TN__KW_STR(tn_put_fn_opts, put, "tn_put_", options, tn_put__opts(t, index, source, o)); }

static tn_tensor *tn__take_along_dim_impl(tn_tensor *t, tn_tensor *indices, int64_t dim) {
    TN__CHECK_NULL(t, indices);
    const char *fn = "tn_take_along_dim";
    if (indices->dtype != TN_I64) return (tn_tensor *)tn__error("%s: dtype of indices should be Long but got %s", fn, tn_dtype_name(indices->dtype));
    int64_t m1 = -1;
    if (dim == TN_NONE) {
        tn_scope_begin();
        tn_tensor *r = tn_keep(tn_gather(tn_reshape(t, &m1, 1), 0, tn_reshape(indices, &m1, 1)));
        tn_scope_end();
        return r;
    }
    if (t->ndim != indices->ndim)
        return (tn_tensor *)tn__error("%s: input and indices should have the same number of dimensions, but got %d dimensions for input, and %d dimensions for indices",
                                      fn, t->ndim, indices->ndim);
    int d = tn__wrap_dim(fn, dim, t->ndim);
    if (d < 0) return NULL;
    /* broadcast every dim but d; along d, t keeps its size and indices theirs */
    int64_t bs[TN_MAX_DIMS] = {0};
    const int nd = t->ndim;   /* indices' too */
    for (int i = 0; i < nd; i++) {
        const int64_t a = i == d ? indices->shape[i] : t->shape[i], b = indices->shape[i];
        if (a != b && a != 1 && b != 1)
            return (tn_tensor *)tn__error("%s: input %s and indices %s are not broadcastable outside dim %d", fn, TN__SHAPE(t), TN__SHAPE(indices), d);
        bs[i] = a == 1 ? b : a;
    }
    tn_scope_begin();
    tn_tensor *ib = tn_expand(indices, bs, nd);
    if (nd) bs[d] = t->shape[d];
    tn_tensor *r = tn_keep(tn_gather(tn_expand(t, bs, nd), d, ib));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_take_along_dim(tn_tensor *t, tn_tensor *indices, int64_t dim) { return TN__AS("tn_take_along_dim", tn__take_along_dim_impl(t, indices, dim)); }

/* ---- masked_scatter: an index_put of source's leading elements at the mask ---- */
static int tn__masked_scatter_check(const char *fn, tn_tensor *t, tn_tensor *mask, tn_tensor *source) {
    if (mask->dtype != TN_BOOL) return TN__FAIL_INT("%s: masked_scatter_ only supports boolean masks, but got mask with dtype %s", fn, tn_dtype_name(mask->dtype));
    if (source->dtype != t->dtype)
        return TN__FAIL_INT("%s: expected self and source to have same dtypes but got %s and %s", fn, tn_dtype_name(t->dtype), tn_dtype_name(source->dtype));
    return 0;
}
/* t (already of the broadcast shape, or a view to write into) [mask] = source[:count] */
static tn_tensor *tn__masked_scatter_into(const char *fn, tn_tensor *t, tn_tensor *mask, tn_tensor *source, bool inplace) {
    int64_t m1 = -1, one = 1;
    tn_tensor *tv = t->ndim ? t : tn_reshape(t, &one, 1), *mv = t->ndim ? mask : tn_reshape(mask, &one, 1);
    tn_tensor *cnt = tn_sum(mv);
    if (!cnt || !tv) return NULL;
    const int64_t count = (int64_t)tn_item(cnt), have = tn_numel(source);
    if (have < count) return (tn_tensor *)tn__error("%s: Number of elements of source < number of ones in mask (%lld < %lld)", fn, (long long)have, (long long)count);
    tn_tensor *vals = tn_narrow(tn_reshape(source, &m1, 1), 0, 0, count);
    if (inplace) return tn_index_put_(tv, &mv, 1, vals) ? t : NULL;
    tn_tensor *r = tn_index_put(tv, &mv, 1, vals);
    return t->ndim ? r : tn_reshape(r, NULL, 0);
}
static tn_tensor *tn__masked_scatter_impl(tn_tensor *t, tn_tensor *mask, tn_tensor *source) {
    TN__CHECK_NULL(t, mask, source);
    const char *fn = "tn_masked_scatter";
    if (tn__masked_scatter_check(fn, t, mask, source)) return NULL;
    int64_t bs[TN_MAX_DIMS];
    int nd = tn__broadcast(t->shape, t->ndim, mask->shape, mask->ndim, bs);
    if (nd < 0) return (tn_tensor *)tn__error("%s: mask %s and input %s are not broadcastable", fn, TN__SHAPE(mask), TN__SHAPE(t));
    tn_scope_begin();
    tn_tensor *r = tn__masked_scatter_into(fn, tn_expand(t, bs, nd), tn_expand(mask, bs, nd), source, false);
    r = tn_keep(tn__grad_name(r, "MaskedScatterBackward0"));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_masked_scatter(tn_tensor *t, tn_tensor *mask, tn_tensor *source) { return TN__AS("tn_masked_scatter", tn__masked_scatter_impl(t, mask, source)); }
static tn_tensor *tn__masked_scatter__impl(tn_tensor *t, tn_tensor *mask, tn_tensor *source) {
    TN__CHECK_NULL(t, mask, source);
    const char *fn = "tn_masked_scatter_";
    if (tn__masked_scatter_check(fn, t, mask, source) || tn__check_no_internal_overlap(fn, t)) return NULL;
    tn_tensor *x0, *others[2] = {mask, source};
    int m = tn__inplace_begin(fn, t, others, 2, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end(fn, t, tn_masked_scatter(x0, mask, source));
    tn_scope_begin();
    tn_tensor *mb = tn_expand(mask, t->shape, t->ndim);   /* the mask broadcasts to t, never t to it */
    tn_tensor *r = mb ? tn__masked_scatter_into(fn, t, mb, source, true) : NULL;
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_masked_scatter_(tn_tensor *t, tn_tensor *mask, tn_tensor *source) { return TN__AS("tn_masked_scatter_", tn__masked_scatter__impl(t, mask, source)); }

/* ---- isin ---- */
static tn_tensor *tn__isin_impl(tn_tensor *elements, tn_tensor *test, tn_isin_fn_opts o) {
    TN__CHECK_NULL(elements, test);
    if (tn__check_same_device("tn_isin", elements, test)) return NULL;
    tn_tensor *pair[2] = {elements, test};
    const tn_dtype ct = tn_result_type(pair, 2);
    if (tn_dtype_is_complex(ct)) return (tn_tensor *)tn__error("tn_isin: Unsupported input type encountered for isin(): %s", tn__torch_type_name(ct));
    const int64_t ne = tn_numel(elements), nt = tn_numel(test);
    int64_t m1 = -1, work;
    tn_scope_begin();
    tn_tensor *e = tn_to_dtype(elements, ct), *tf = tn_to(tn_reshape(tn_to_dtype(test, ct), &m1, 1), elements->device), *r;
    if (!tn__mul_ok(ne, nt, &work) || work > ((int64_t)1 << 24)) {   /* many pairs: binary searches in the sorted test elements */
        tn_tensor *s = tn_sort(tf, NULL, .dim = 0);
        tn_searchsorted_fn_opts so = TN_DEFAULTS(tn_searchsorted_fn_opts);
        tn_tensor *pos = tn_clamp(tn_searchsorted_opts(s, e, so), .min = 0, .max = (double)(nt ? nt - 1 : 0));
        r = nt ? tn_eq(tn_index(s, &pos, 1), e) : tn_zeros_like(tn_to_dtype(e, TN_BOOL));
    } else {   /* elements against every test element */
        int64_t last = -1;
        r = tn_any_dim(tn_eq(tn_unsqueeze(e, -1), tf), last);
    }
    if (o.invert) r = tn_logical_not(r);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_isin_opts(tn_tensor *elements, tn_tensor *test_elements, tn_isin_fn_opts o) { return TN__AS("tn_isin", tn__isin_impl(elements, test_elements, o)); }
TNDEF tn_tensor *tn_isin_str(tn_tensor *elements, tn_tensor *test_elements, const char *options) {
    TN__KW_STR(tn_isin_fn_opts, isin, "tn_isin", options, tn_isin_opts(elements, test_elements, o));
}
