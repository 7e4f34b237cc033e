/* ---- gathering and scattering ----
   All of them are one backend call, `index`: dst, src and the index tensors are laid
   over one iteration shape by restriding (stride 0 on the dim an index replaces), and
   the kernel adds idx * stride to the gathered-from or scattered-to address. */

/* Contiguous int64 copy of an index tensor after checking every value is in
   [-size, size) (negatives wrapped when allowed, else [0, size)). Untracked. */
static tn_tensor *tn__checked_index(const char *fn, tn_tensor *idx, int64_t size, bool allow_negative, int dim, tn_device dev) {
    if (idx->dtype != TN_I64 && idx->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: index tensors must be int64 or int32, got %s", fn, tn_dtype_name(idx->dtype));
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
    tn_tensor *out = tn__new(t->dtype, t->device, os, t->ndim ? nd : index->ndim);
    if (out && t->ndim == 0) { /* keep PyTorch's shape: a 0-d input gives the index's shape */
        out->ndim = index->ndim;
    }
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

/* Shared checks of gather/scatter: index has t's ndim and fits inside `bound` (t, or
   src for scatter) on every dim but `d`. */
static int tn__check_gather_shapes(const char *fn, tn_tensor *t, tn_tensor *index, int d, tn_tensor *src) {
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
    tn_tensor *idx = tn__checked_index("tn_gather", index, t->ndim ? t->shape[d] : 1, false, d, t->device);
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
    tn_tensor *idx = tn__checked_index(fn, index, target->ndim ? target->shape[d] : 1, false, d, target->device);
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
            tn_tensor *nz = tn__backend(ix->device)->nonzero(ix);
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


TNDEF tn_tensor *tn_index_put_(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate) {
    TN__CHECK_NULL(t, values);
    tn_tensor *x0;
    int m = tn__inplace_begin("tn_index_put_", t, &values, 1, &x0);
    if (m) return m < 0 ? NULL : tn__inplace_end("tn_index_put_", t, tn_index_put(x0, indices, n, values, accumulate));
    return tn__index_put_into("tn_index_put_", t, indices, n, values, accumulate) ? NULL : t;
}
TNDEF tn_tensor *tn_index_put(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate) {
    TN__CHECK_NULL(t, values);
    tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
    if (c && tn__index_put_into("tn_index_put", c, indices, n, values, accumulate)) { tn_release(c); c = NULL; }
    tn_tensor *ins[2] = {t, values};
    tn_node *nd = c ? tn__node_new(G_INDEX_PUT, 0, ins, 2) : NULL;
    if (nd) nd->d[0] = accumulate;
    tn__save_indices(nd, indices, n);
    return tn__own(tn__node_attach(nd, c));
}

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
    return tn__own(tn__backend(t->device)->nonzero(t));
}
