/* ---- state_dict: PyTorch's {"state": {i: {...}}, "param_groups": [...]} flattened ---- */
static int tn__dict_put(tn_dict *d, const char *key, tn_tensor *t) { /* takes t's reference */
    if (!t) return -1;
    int rc = tn_dict_set(d, key, t);
    tn_release(t);
    return rc;
}
static tn_tensor *tn__optim_scalar(double v, tn_dtype dtype) {
    tn_tensor *t = tn__new(dtype, TN_CPU, NULL, 0);
    if (!t) return NULL;
    if (dtype == TN_F32) *(float *)t->storage->data = (float)v;
    else if (dtype == TN_I64) *(int64_t *)t->storage->data = (int64_t)v;
    else *(double *)t->storage->data = v;
    return t;
}
static tn_tensor *tn__optim_f64(const double *v, const int64_t *shape, int ndim) {
    tn_tensor *t = tn__new(TN_F64, TN_CPU, shape, ndim);
    if (t && v) memcpy(t->storage->data, v, (size_t)tn_numel(t) * sizeof(double));
    return t;
}
/* The one value of a one-element CPU tensor (any dtype but the GPU-only ones). */
static double tn__optim_read1(const tn_tensor *t) {
    if (t->device != TN_CPU) return tn_item((tn_tensor *)t);
    const char *p = (const char *)t->storage->data + t->offset * (int64_t)tn_dtype_size(t->dtype);
    switch (t->dtype) {
    case TN_F32: return *(const float *)p;
    case TN_F64: return *(const double *)p;
    case TN_I32: return *(const int32_t *)p;
    case TN_I64: return (double)*(const int64_t *)p;
    case TN_U8: return *(const uint8_t *)p;
    case TN_I8: return *(const int8_t *)p;
    case TN_I16: return *(const int16_t *)p;
    case TN_BOOL: return *(const bool *)p;
    default: return NAN;
    }
}
static bool tn__optim_readable(const tn_tensor *t) {
    return t && t->dtype != TN_F16 && t->dtype != TN_BF16;
}
/* "betas[0]" -> "<prefix>betas.0" */
static void tn__optim_dict_key(char *out, size_t cap, const char *prefix, const char *key) {
    size_t l = strlen(key);
    if (l > 3 && key[l - 3] == '[' && key[l - 1] == ']') snprintf(out, cap, "%s%.*s.%c", prefix, (int)(l - 3), key, key[l - 2]);
    else snprintf(out, cap, "%s%s", prefix, key);
}
static int tn__lbfgs_save(const tn__lbfgs *lb, tn_dict *d) {
    int rc = 0;
    int64_t sh[2] = {lb->nold, lb->N};
    if (lb->has_counts) {
        rc |= tn__dict_put(d, "state.0.func_evals", tn__optim_scalar((double)lb->func_evals, TN_I64));
        rc |= tn__dict_put(d, "state.0.n_iter", tn__optim_scalar((double)lb->n_iter, TN_I64));
    }
    if (lb->has_d) rc |= tn__dict_put(d, "state.0.d", tn__optim_f64(lb->d, &lb->N, 1));
    if (lb->has_t) rc |= tn__dict_put(d, "state.0.t", tn__optim_scalar(lb->t, TN_F64));
    if (lb->has_hist) {
        tn_tensor *dirs = tn__optim_f64(NULL, sh, 2), *stps = tn__optim_f64(NULL, sh, 2);
        for (int i = 0; dirs && stps && i < lb->nold; i++) {
            memcpy((double *)dirs->storage->data + i * lb->N, lb->old_dirs[i], (size_t)lb->N * sizeof(double));
            memcpy((double *)stps->storage->data + i * lb->N, lb->old_stps[i], (size_t)lb->N * sizeof(double));
        }
        rc |= tn__dict_put(d, "state.0.old_dirs", dirs);
        rc |= tn__dict_put(d, "state.0.old_stps", stps);
        rc |= tn__dict_put(d, "state.0.ro", tn__optim_f64(lb->ro, sh, 1));
    }
    if (lb->has_H) rc |= tn__dict_put(d, "state.0.H_diag", tn__optim_scalar(lb->H_diag, TN_F64));
    if (lb->has_prev) rc |= tn__dict_put(d, "state.0.prev_flat_grad", tn__optim_f64(lb->prev_flat_grad, &lb->N, 1));
    if (lb->has_prev_loss) rc |= tn__dict_put(d, "state.0.prev_loss", tn__optim_scalar(lb->prev_loss, TN_F64));
    return rc;
}
TNDEF tn_dict *tn_optim_state_dict(const tn_optim *o) {
    const char *fn = "tn_optim_state_dict";
    if (!o) return NULL;
    tn_dict *d = tn_dict_new();
    if (!d) return NULL;
    char key[128], prefix[48];   /* "state.<int>.<slot>", "param_groups.<int>." and an option name (< 32 bytes): bounded */
    int rc = 0;
    for (int i = 0; i < o->np; i++)
        for (int k = 0; k < TN__OPT_NSLOT; k++) {
            tn_tensor *st = o->state[i * TN__OPT_NSLOT + k];
            if (!st) continue;
            snprintf(key, sizeof key, "state.%d.%s", i, tn__optim_slots[o->kind][k]);
            rc |= tn__dict_put(d, key, tn__copy_as(st, st->dtype, TN_CPU));
        }
    if (o->lb) rc |= tn__lbfgs_save(o->lb, d);
    for (int gi = 0; gi < o->ng; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        snprintf(prefix, sizeof prefix, "param_groups.%d.", gi);
        for (int j = 0; j < g->nv; j++) {
            const tn__optdef *def = tn__optim_def(o->kind, g->key[j]);
            tn__optim_dict_key(key, sizeof key, prefix, g->key[j]);
            if (def && def->type == 'w') rc |= tn_dict_set_meta(d, key, g->val[j] != 0 ? "strong_wolfe" : "None");
            else rc |= tn__dict_put(d, key, tn__optim_scalar(g->val[j], TN_F64));
        }
        int64_t n = g->n;
        tn_tensor *ids = tn__new(TN_I64, TN_CPU, &n, 1);
        for (int j = 0; ids && j < g->n; j++) ((int64_t *)ids->storage->data)[j] = g->first + j;
        snprintf(key, sizeof key, "%sparams", prefix);
        rc |= tn__dict_put(d, key, ids);
    }
    if (rc) {
        tn_dict_free(d);
        return (tn_dict *)tn__error("%s: out of memory", fn);
    }
    return d;
}

/* A floating or integer CPU tensor as float64 values, row-major. */
static int tn__optim_read_f64(const tn_tensor *t, double *out) {
    tn_tensor *c = tn__copy_as((tn_tensor *)t, TN_F64, TN_CPU);
    if (!c) return -1;
    if (tn_numel(c)) memcpy(out, c->storage->data, (size_t)tn_numel(c) * sizeof(double));
    tn_release(c);
    return 0;
}
/* LBFGS's state entries, in the order tn__lbfgs_load reads them */
static const char *const tn__lbfgs_names[10] = {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss"};
/* LBFGS state from sd (already known to belong to parameter 0); lb is filled in. */
static int tn__lbfgs_load(const char *fn, const tn_optim *o, const tn_dict *sd, const char *prefix, tn__lbfgs *lb) {
    const char *const *names = tn__lbfgs_names;
    const tn_tensor *v[10];
    char key[128];   /* "state.<int64>." and a name above: at most 42 bytes */
    int64_t N = 0;
    for (int i = 0; i < o->np; i++) N += tn_numel(o->params[i]);
    lb->N = N;
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof key, "%s%s", prefix, names[i]);
        v[i] = tn_dict_get(sd, key);
        if (!v[i]) continue;
        if (!tn__optim_readable(v[i])) return TN__FAIL_INT("%s: '%s' must not be float16 or bfloat16", fn, key);
        bool scalar = i <= 1 || i == 3 || i == 7 || i == 9;
        bool ok = scalar ? tn_numel(v[i]) == 1 : (i == 2 || i == 8) ? v[i]->ndim == 1 && v[i]->shape[0] == N
                : i == 6 ? v[i]->ndim == 1 : v[i]->ndim == 2 && v[i]->shape[1] == N;
        if (!ok)
            return TN__FAIL_INT("%s: '%s' has shape %s, which does not fit LBFGS parameters of %lld elements", fn, key,
                                TN__SHAPE(v[i]), (long long)N);
    }
    bool hist = v[4] || v[5] || v[6];
    if (hist && !(v[4] && v[5] && v[6] && v[4]->shape[0] == v[5]->shape[0] && v[4]->shape[0] == v[6]->shape[0]))
        return TN__FAIL_INT("%s: LBFGS history needs old_dirs [k, N], old_stps [k, N] and ro [k] of one length k", fn);
    if (v[0] && v[1]) {   /* counts read from a file: whole numbers in int64's range */
        const double fe = tn__optim_read1(v[0]), it = tn__optim_read1(v[1]);
        if (fe != floor(fe) || it != floor(it) || tn__double_to_int64(fn, "LBFGS func_evals", fe, &lb->func_evals) ||
            tn__double_to_int64(fn, "LBFGS n_iter", it, &lb->n_iter))
            return TN__FAIL_INT("%s: LBFGS func_evals and n_iter must be whole numbers in int64's range (got %g and %g)", fn, fe, it);
        lb->has_counts = true;
    }
    if (v[3]) { lb->has_t = true; lb->t = tn__optim_read1(v[3]); }
    if (v[7]) { lb->has_H = true; lb->H_diag = tn__optim_read1(v[7]); }
    if (v[9]) { lb->has_prev_loss = true; lb->prev_loss = tn__optim_read1(v[9]); }
    size_t vb = (size_t)TN__MAX(N, 1) * sizeof(double);
    if (v[2]) { lb->has_d = true; if (!(lb->d = (double *)TN_MALLOC(vb)) || tn__optim_read_f64(v[2], lb->d)) return -1; }
    if (v[8]) { lb->has_prev = true; if (!(lb->prev_flat_grad = (double *)TN_MALLOC(vb)) || tn__optim_read_f64(v[8], lb->prev_flat_grad)) return -1; }
    if (hist) {
        int k = (int)v[6]->shape[0];
        double *all = (double *)TN_MALLOC((size_t)TN__MAX((int64_t)k * N, 1) * sizeof(double));
        lb->has_hist = true;
        if (!all || tn__lbfgs_reserve(lb, k) || tn__optim_read_f64(v[6], lb->ro)) { TN_FREE(all); return -1; }
        for (int w = 0; w < 2; w++) {
            if (tn__optim_read_f64(v[4 + w], all)) { TN_FREE(all); return -1; }
            for (int i = 0; i < k; i++) {
                double *row = (double *)TN_MALLOC(vb);
                if (!row) { TN_FREE(all); return -1; }
                memcpy(row, all + (int64_t)i * N, (size_t)N * sizeof(double));
                (w ? lb->old_stps : lb->old_dirs)[i] = row;
                if (w) lb->nold = i + 1;
                else lb->old_stps[i] = NULL;
            }
        }
        TN_FREE(all);
    }
    return 0;
}
/* Loading is two steps, so that a refused load changes nothing (a checkpoint checks the
   model too before committing either): tn__optim_load_check reads all of sd into new
   state, groups and LBFGS history; tn__optim_load_commit swaps them in (cannot fail). */
typedef struct tn__optim_id { int64_t id; int pos; } tn__optim_id;   /* a saved parameter id, and our parameter */
typedef struct tn__optim_load { int64_t *ids; tn__optim_id *byid; tn__pgroup *groups; tn_tensor **state; tn__lbfgs *lb; } tn__optim_load;
static int tn__optim_cmp_id(const void *a, const void *b) {
    int64_t x = ((const tn__optim_id *)a)->id, y = ((const tn__optim_id *)b)->id;
    return (x > y) - (x < y);
}
static void tn__optim_load_free(const tn_optim *o, tn__optim_load *l) {
    for (int i = 0; l->state && i < o->np * TN__OPT_NSLOT; i++) tn_release(l->state[i]);
    TN_FREE(l->state);
    TN_FREE(l->groups);
    TN_FREE(l->ids);
    TN_FREE(l->byid);
    tn__lbfgs_free(l->lb);
    memset(l, 0, sizeof *l);
}
static int tn__optim_load_check(const char *fn, const tn_optim *o, const tn_dict *sd, tn__optim_load *l) {
    char key[128], prefix[48];   /* "param_groups.<int>." and an option name (< 32 bytes, tn__pgroup's) */
    int G = 0;
    memset(l, 0, sizeof *l);
    while (snprintf(key, sizeof key, "param_groups.%d.params", G), tn_dict_contains(sd, key)) G++;
    if (G != o->ng)
        return TN__FAIL_INT("%s: loaded state dict has a different number of parameter groups (%d; the optimizer has %d)", fn, G, o->ng);
    int64_t *ids = l->ids = (int64_t *)TN_MALLOC((size_t)(o->np ? o->np : 1) * sizeof *ids);
    tn__optim_id *byid = l->byid = (tn__optim_id *)TN_MALLOC((size_t)(o->np ? o->np : 1) * sizeof *byid);
    tn__pgroup *groups = l->groups = (tn__pgroup *)TN_MALLOC((size_t)(o->ng ? o->ng : 1) * sizeof *groups);
    tn_tensor **state = l->state = (tn_tensor **)TN_MALLOC((size_t)(o->np ? o->np : 1) * TN__OPT_NSLOT * sizeof *state);
    tn__lbfgs *lb = l->lb = o->kind == TN__LBFGS ? tn__lbfgs_new() : NULL;
    if (state) memset(state, 0, (size_t)(o->np ? o->np : 1) * TN__OPT_NSLOT * sizeof *state);
    if (!ids || !byid || !groups || !state || (o->kind == TN__LBFGS && !lb)) { tn__error("%s: out of memory", fn); goto fail; }
    /* saved parameter ids map to ours by position, as PyTorch */
    for (int gi = 0; gi < G; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        snprintf(key, sizeof key, "param_groups.%d.params", gi);
        tn_tensor *pt = tn_dict_get(sd, key);
        if (!pt || pt->ndim != 1 || !tn__is_int(pt->dtype) || pt->device != TN_CPU) {
            tn__error("%s: '%s' must be a 1-d integer tensor of parameter indices", fn, key);
            goto fail;
        }
        if (pt->shape[0] != g->n) {
            tn__error("%s: loaded state dict contains a parameter group that doesn't match the size of optimizer's group "
                      "(group %d: %lld saved, %d here)", fn, gi, (long long)pt->shape[0], g->n);
            goto fail;
        }
        for (int j = 0; j < g->n; j++) {
            const char *p = (const char *)pt->storage->data + (pt->offset + j * pt->strides[0]) * (int64_t)tn_dtype_size(pt->dtype);
            ids[g->first + j] = pt->dtype == TN_I64 ? *(const int64_t *)p : pt->dtype == TN_I32 ? *(const int32_t *)p : pt->dtype == TN_I16 ? *(const int16_t *)p
                              : pt->dtype == TN_I8 ? *(const int8_t *)p : *(const uint8_t *)p;
            byid[g->first + j].id = ids[g->first + j];
            byid[g->first + j].pos = g->first + j;
        }
    }
    /* sorted by id: duplicates side by side, and each state entry's parameter by bisection */
    qsort(byid, (size_t)o->np, sizeof *byid, tn__optim_cmp_id);
    for (int i = 1; i < o->np; i++)
        if (byid[i].id == byid[i - 1].id) { tn__error("%s: parameter id %lld appears twice in param_groups", fn, (long long)byid[i].id); goto fail; }
    /* group options: every option of the kind, plus the schedulers' keys the dict has */
    for (int gi = 0; gi < G; gi++) {
        tn__pgroup *ng = &groups[gi];
        ng->first = o->groups[gi].first;
        ng->n = o->groups[gi].n;
        ng->nv = 0;
        snprintf(prefix, sizeof prefix, "param_groups.%d.", gi);
        for (int j = 0; j < o->groups[gi].nv; j++) {
            const char *name = o->groups[gi].key[j];
            const tn__optdef *def = tn__optim_def(o->kind, name);
            if (!def) continue;
            tn__optim_dict_key(key, sizeof key, prefix, name);
            double v;
            if (def->type == 'w') {
                const char *m = tn_dict_get_meta(sd, key);
                if (!m) { tn__error("%s: missing key '%s' (metadata: None or strong_wolfe)", fn, key); goto fail; }
                if (!strcmp(m, "None")) v = 0;
                else if (!strcmp(m, "strong_wolfe") || !strcmp(m, "'strong_wolfe'")) v = 1;
                else { tn__error("%s: '%s' is '%s' (expected None or strong_wolfe)", fn, key, m); goto fail; }
            } else {
                tn_tensor *t = tn_dict_get(sd, key);
                if (!t && !strcmp(name, "capturable")) { if (tn__pg_set(fn, ng, name, 0)) goto fail; continue; }   /* older dicts: False, as PyTorch's __setstate__ */
                if (!t) { tn__error("%s: missing key '%s'", fn, key); goto fail; }
                if (!tn__optim_readable(t) || tn_numel(t) != 1) { tn__error("%s: '%s' should hold one number (shape %s)", fn, key, TN__SHAPE(t)); goto fail; }
                v = tn__optim_read1(t);
            }
            if (tn__pg_set(fn, ng, name, v)) goto fail;
        }
    }
    /* the schedulers' keys ("initial_lr"), in one pass over sd */
    for (int i = 0; i < tn_dict_len(sd); i++) {
        const char *k = tn_dict_key(sd, i);
        char *end;
        if (strncmp(k, "param_groups.", 13)) continue;
        long gi = strtol(k + 13, &end, 10);
        if (end == k + 13 || *end != '.' || gi < 0 || gi >= G) continue;   /* refused below */
        const char *name = end + 1;
        if (!strcmp(name, "params")) continue;
        size_t len = strlen(name);
        if (len >= sizeof groups[0].key[0]) { tn__error("%s: '%s': option names are shorter than %d bytes", fn, k, (int)sizeof groups[0].key[0]); goto fail; }
        char ik[sizeof groups[0].key[0] + 2];   /* the name, "betas.0" as "betas[0]" */
        if (len > 2 && name[len - 2] == '.' && (name[len - 1] == '0' || name[len - 1] == '1')) snprintf(ik, sizeof ik, "%.*s[%c]", (int)(len - 2), name, name[len - 1]);
        else snprintf(ik, sizeof ik, "%s", name);
        if (tn__optim_def(o->kind, ik)) continue;
        tn_tensor *t = tn_dict_value(sd, i);
        if (!tn__optim_readable(t) || tn_numel(t) != 1) { tn__error("%s: '%s' should hold one number", fn, k); goto fail; }
        if (tn__pg_set(fn, &groups[gi], ik, tn__optim_read1(t))) goto fail;
    }
    /* state */
    for (int i = 0; i < tn_dict_len(sd); i++) {
        const char *k = tn_dict_key(sd, i);
        if (!strncmp(k, "param_groups.", 13)) {
            char *end;
            long gi = strtol(k + 13, &end, 10);
            if (end == k + 13 || *end != '.' || gi < 0 || gi >= G) { tn__error("%s: unexpected key '%s' (the optimizer has %d groups)", fn, k, G); goto fail; }
            continue;
        }
        if (strncmp(k, "state.", 6)) { tn__error("%s: unexpected key '%s'", fn, k); goto fail; }
        char *end;
        long long id = strtoll(k + 6, &end, 10);
        if (end == k + 6 || *end != '.') { tn__error("%s: unexpected key '%s' (expected state.<index>.<name>)", fn, k); goto fail; }
        const char *name = end + 1;
        tn__optim_id want = {id, -1};
        const tn__optim_id *hit = o->np ? (const tn__optim_id *)bsearch(&want, byid, (size_t)o->np, sizeof *byid, tn__optim_cmp_id) : NULL;
        int pi = hit ? hit->pos : -1;
        if (pi < 0) { tn__error("%s: '%s' is the state of parameter %lld, which is in no parameter group", fn, k, id); goto fail; }
        if (o->kind == TN__LBFGS) {
            bool known = false;
            for (int j = 0; j < 10; j++) known = known || !strcmp(name, tn__lbfgs_names[j]);
            if (pi != 0 || !known) { tn__error("%s: unexpected key '%s' (LBFGS keeps its state under parameter 0)", fn, k); goto fail; }
            continue;
        }
        int slot = tn__optim_slot_index(o->kind, name);
        if (slot < 0) { tn__error("%s: unexpected key '%s' (%s keeps no state '%s')", fn, k, tn__optim_names[o->kind], name); goto fail; }
        tn_tensor *t = tn_dict_value(sd, i), *p = o->params[pi], *c;
        if (!tn__optim_readable(t)) { tn__error("%s: '%s' must not be float16 or bfloat16", fn, k); goto fail; }
        if (tn__optim_scalar_slot(name)) {
            if (tn_numel(t) != 1) { tn__error("%s: '%s' should hold one number (shape %s)", fn, k, TN__SHAPE(t)); goto fail; }
            c = tn__optim_scalar(tn__optim_read1(t), TN_F32);
        } else {
            if (t->ndim != p->ndim || memcmp(t->shape, p->shape, (size_t)p->ndim * sizeof(int64_t)) || !tn_dtype_is_floating(t->dtype)) {
                tn__error("%s: '%s' has shape %s and dtype %s, but parameter %d has shape %s", fn, k, TN__SHAPE(t), tn_dtype_name(t->dtype), pi, TN__SHAPE(p));
                goto fail;
            }
            c = tn__copy_as(t, p->dtype, p->device);   /* a copy in the parameter's dtype and on its device, as PyTorch casts */
        }
        if (!c) { tn__error("%s: out of memory", fn); goto fail; }
        tn_release(state[pi * TN__OPT_NSLOT + slot]);
        state[pi * TN__OPT_NSLOT + slot] = c;
    }
    if (lb) {
        snprintf(prefix, sizeof prefix, "state.%lld.", (long long)ids[0]);
        if (tn__lbfgs_load(fn, o, sd, prefix, lb)) { if (!strstr(tn_last_error(), fn)) tn__error("%s: out of memory", fn); goto fail; }
    }
    return 0;
fail:
    tn__optim_load_free(o, l);
    return -1;
}
static void tn__optim_load_commit(tn_optim *o, tn__optim_load *l) {
    for (int i = 0; i < o->np * TN__OPT_NSLOT; i++) { tn_release(o->state[i]); o->state[i] = l->state[i]; l->state[i] = NULL; }
    for (int i = 0; i < o->np; i++) o->fresh[i] = 0;
    memcpy(o->groups, l->groups, (size_t)o->ng * sizeof *l->groups);
    if (l->lb) { tn__lbfgs_free(o->lb); o->lb = l->lb; l->lb = NULL; }
    tn__optim_load_free(o, l);
}
TNDEF int tn_optim_load_state_dict(tn_optim *o, const tn_dict *sd) {
    const char *fn = "tn_optim_load_state_dict";
    if (!o || !sd) return TN__FAIL_INT("%s: need an optimizer and a state dict", fn);
    tn__optim_load l;
    if (tn__optim_load_check(fn, o, sd, &l)) return -1;
    tn__optim_load_commit(o, &l);
    return 0;
}
