/* ---- LBFGS: torch/optim/lbfgs.py, in float64 ---- */
/* Flat views of the parameters, in order: gather (mode 0: buf = param, 1: buf = grad or
   0), add (2: param += alpha * buf) or set (3: param = buf). */
static void tn__lbfgs_flat(tn_optim *o, double *buf, int mode, double alpha) {
    int64_t off = 0;
    for (int pi = 0; pi < o->np; pi++) {
        tn_tensor *p = o->params[pi], *t = mode == 1 ? p->grad : p;
        int64_t n = tn_numel(p), idx[TN_MAX_DIMS] = {0}, e;
        if (!t) { memset(buf + off, 0, (size_t)n * sizeof *buf); off += n; continue; }
        e = t->offset;
        for (int64_t i = 0; i < n; i++) {
            double *b = buf + off + i;
            if (t->dtype == TN_F32) {
                float *x = (float *)t->storage->data + e;
                if (mode <= 1) *b = *x; else *x = (float)(mode == 2 ? *x + alpha * *b : *b);
            } else if (tn__is_half(t->dtype)) {   /* through float32, rounded once */
                uint16_t *x = (uint16_t *)t->storage->data + e;
                const bool bf = t->dtype == TN_BF16;
                const double xv = bf ? tn_bfloat16_to_float(*x) : tn_half_to_float(*x);
                const float nv = (float)(mode == 2 ? xv + alpha * *b : *b);
                if (mode <= 1) *b = xv; else *x = bf ? tn_float_to_bfloat16(nv) : tn_float_to_half(nv);
            } else {
                double *x = (double *)t->storage->data + e;
                if (mode <= 1) *b = *x; else *x = mode == 2 ? *x + alpha * *b : *b;
            }
            for (int d = t->ndim - 1; d >= 0; d--) { /* next index, row-major */
                e += t->strides[d];
                if (++idx[d] < t->shape[d]) break;
                e -= t->strides[d] * t->shape[d];
                idx[d] = 0;
            }
        }
        if (mode >= 2) tn__bump_version(p);
        off += n;
    }
}
static double tn__vdot(const double *a, const double *b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
static double tn__vabsmax(const double *a, int64_t n, double scale) { /* max |a*scale|, NaN propagates */
    double m = n ? 0 : NAN;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(a[i] * scale);
        if (v != v) return v;
        if (v > m) m = v;
    }
    return m;
}
static double tn__py_max(double a, double b) { return b > a ? b : a; }   /* Python's max(a, b) */
static double tn__py_min(double a, double b) { return b < a ? b : a; }
static double tn__cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2, const double *bounds) {
    double xmin_bound = bounds ? bounds[0] : (x1 <= x2 ? x1 : x2), xmax_bound = bounds ? bounds[1] : (x1 <= x2 ? x2 : x1);
    double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
    double d2_square = d1 * d1 - g1 * g2;
    if (d2_square >= 0) {
        double d2 = sqrt(d2_square), min_pos;
        if (x1 <= x2) min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2));
        else min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
        return tn__py_min(tn__py_max(min_pos, xmin_bound), xmax_bound);
    }
    return (xmin_bound + xmax_bound) / 2.;
}
typedef struct tn__lbfgs_ctx {
    tn_optim *o;
    tn_closure closure;
    void *user;
    const char *fn;
    int64_t N;
} tn__lbfgs_ctx;
/* _directional_evaluate: loss and flat grad at x + t*d, then the parameters back to x. */
static int tn__lbfgs_dir_eval(tn__lbfgs_ctx *c, const double *x, double t, const double *d, double *f, double *g) {
    tn__lbfgs_flat(c->o, (double *)d, 2, t);
    *f = tn__closure_call(c->closure, c->user);
    tn__lbfgs_flat(c->o, g, 1, 0);
    tn__lbfgs_flat(c->o, (double *)x, 3, 0);
    if (*f != *f) return tn__closure_failed(c->fn), -1;
    return 0;
}
/* _strong_wolfe with its defaults (c1 1e-4, c2 0.9, tolerance_change 1e-9, max_ls 25).
   Python's tensors are never changed in place there, so its aliases are copies here.
   buf: 5 vectors of N. Returns 0 (f, g, t, evals set) or -1. */
static int tn__strong_wolfe(tn__lbfgs_ctx *c, const double *x, double t, const double *d, double f, const double *g0,
                            double gtd, double *buf, double *f_out, double *g_out, double *t_out, int64_t *evals) {
    const double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;
    const int max_ls = 25;
    const int64_t N = c->N;
    const size_t vb = (size_t)N * sizeof(double);
    double *g = buf, *g_new = buf + N, *g_prev = buf + 2 * N, *bg[2] = {buf + 3 * N, buf + 4 * N};
    double d_norm = tn__vabsmax(d, N, 1), f_new, bracket[2] = {0, 0}, bf[2] = {0, 0}, bgtd[2] = {0, 0};
    int nb = 0;
    memcpy(g, g0, vb);
    if (tn__lbfgs_dir_eval(c, x, t, d, &f_new, g_new)) return -1;
    int64_t ls_func_evals = 1;
    double gtd_new = tn__vdot(g_new, d, N);
    double t_prev = 0, f_prev = f, gtd_prev = gtd;
    memcpy(g_prev, g, vb);
    bool done = false;
    int ls_iter = 0;
    while (ls_iter < max_ls) {
        if (f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev)) {
            bracket[0] = t_prev; bracket[1] = t; bf[0] = f_prev; bf[1] = f_new;
            memcpy(bg[0], g_prev, vb); memcpy(bg[1], g_new, vb);
            bgtd[0] = gtd_prev; bgtd[1] = gtd_new; nb = 2;
            break;
        }
        if (fabs(gtd_new) <= -c2 * gtd) {
            bracket[0] = t; bf[0] = f_new; memcpy(bg[0], g_new, vb); nb = 1;
            done = true;
            break;
        }
        if (gtd_new >= 0) {
            bracket[0] = t_prev; bracket[1] = t; bf[0] = f_prev; bf[1] = f_new;
            memcpy(bg[0], g_prev, vb); memcpy(bg[1], g_new, vb);
            bgtd[0] = gtd_prev; bgtd[1] = gtd_new; nb = 2;
            break;
        }
        /* interpolate */
        double bounds[2] = {t + 0.01 * (t - t_prev), t * 10}, tmp = t;
        t = tn__cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds);
        t_prev = tmp; f_prev = f_new; memcpy(g_prev, g_new, vb); gtd_prev = gtd_new;
        if (tn__lbfgs_dir_eval(c, x, t, d, &f_new, g_new)) return -1;
        ls_func_evals++;
        gtd_new = tn__vdot(g_new, d, N);
        ls_iter++;
    }
    if (ls_iter == max_ls) {
        bracket[0] = 0; bracket[1] = t; bf[0] = f; bf[1] = f_new;
        memcpy(bg[0], g, vb); memcpy(bg[1], g_new, vb); nb = 2;
    }
    /* zoom */
    bool insuf_progress = false;
    int low = bf[0] <= bf[nb - 1] ? 0 : 1, high = 1 - low;
    while (!done && ls_iter < max_ls) {
        if (fabs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
        t = tn__cubic_interpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1], NULL);
        double bmax = tn__py_max(bracket[0], bracket[1]), bmin = tn__py_min(bracket[0], bracket[1]);
        double eps = 0.1 * (bmax - bmin);
        if (tn__py_min(bmax - t, t - bmin) < eps) {
            if (insuf_progress || t >= bmax || t <= bmin) {
                t = fabs(t - bmax) < fabs(t - bmin) ? bmax - eps : bmin + eps;
                insuf_progress = false;
            } else {
                insuf_progress = true;
            }
        } else {
            insuf_progress = false;
        }
        if (tn__lbfgs_dir_eval(c, x, t, d, &f_new, g_new)) return -1;
        ls_func_evals++;
        gtd_new = tn__vdot(g_new, d, N);
        ls_iter++;
        if (f_new > (f + c1 * t * gtd) || f_new >= bf[low]) {
            bracket[high] = t; bf[high] = f_new; memcpy(bg[high], g_new, vb); bgtd[high] = gtd_new;
            low = bf[0] <= bf[1] ? 0 : 1;
            high = 1 - low;
        } else {
            if (fabs(gtd_new) <= -c2 * gtd) {
                done = true;
            } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
                bracket[high] = bracket[low]; bf[high] = bf[low]; memcpy(bg[high], bg[low], vb); bgtd[high] = bgtd[low];
            }
            bracket[low] = t; bf[low] = f_new; memcpy(bg[low], g_new, vb); bgtd[low] = gtd_new;
        }
    }
    *t_out = bracket[low];
    *f_out = bf[low];
    memcpy(g_out, bg[low], vb);
    *evals = ls_func_evals;
    return 0;
}
/* Drop the oldest history entry (old_dirs.pop(0), ...). */
static void tn__lbfgs_pop(tn__lbfgs *lb) {
    TN_FREE(lb->old_dirs[0]);
    TN_FREE(lb->old_stps[0]);
    memmove(lb->old_dirs, lb->old_dirs + 1, (size_t)(lb->nold - 1) * sizeof *lb->old_dirs);
    memmove(lb->old_stps, lb->old_stps + 1, (size_t)(lb->nold - 1) * sizeof *lb->old_stps);
    memmove(lb->ro, lb->ro + 1, (size_t)(lb->nold - 1) * sizeof *lb->ro);
    lb->nold--;
}
static int tn__lbfgs_reserve(tn__lbfgs *lb, int n) {
    if (n <= lb->cap) return 0;
    int cap = TN__MAX(n, 2 * lb->cap);
    double **a = (double **)TN_REALLOC(lb->old_dirs, (size_t)cap * sizeof *a);
    if (a) lb->old_dirs = a;
    double **b = a ? (double **)TN_REALLOC(lb->old_stps, (size_t)cap * sizeof *b) : NULL;
    if (b) lb->old_stps = b;
    double *r = b ? (double *)TN_REALLOC(lb->ro, (size_t)cap * sizeof *r) : NULL;
    if (!r) return -1;
    lb->ro = r;
    lb->cap = cap;
    return 0;
}
static double tn__lbfgs_step(const char *fn, tn_optim *o, tn_closure closure, void *user) {
    const tn__pgroup *g = &o->groups[0];
    tn__lbfgs *lb = o->lb;
    const double lr = tn__pg_get(g, "lr"), tolerance_grad = tn__pg_get(g, "tolerance_grad");
    const double tolerance_change = tn__pg_get(g, "tolerance_change");
    int64_t max_iter, max_eval, history_size;   /* group values are doubles anyone may have set: range-checked */
    if (tn__double_to_int64(fn, "max_iter", floor(tn__pg_get(g, "max_iter")), &max_iter) ||
        tn__double_to_int64(fn, "max_eval", floor(tn__pg_get(g, "max_eval")), &max_eval) ||
        tn__double_to_int64(fn, "history_size", floor(tn__pg_get(g, "history_size")), &history_size))
        return NAN;
    const bool wolfe = tn__pg_get(g, "line_search_fn") != 0;
    int64_t N = 0;
    for (int i = 0; i < o->np; i++) {
        tn_tensor *p = o->params[i];
        if (p->device != TN_CPU) return tn__error("%s: parameter %d is on %s; LBFGS runs on CPU tensors only", fn, i, tn_device_name(p->device)), NAN;
        N += tn_numel(p);
    }
    if (lb->has_d && lb->N != N) return tn__error("%s: the parameters changed size since the last step", fn), NAN;
    lb->N = N;
    const size_t vb = (size_t)N * sizeof(double);
    /* flat_grad, q, x_init, and 5 line-search vectors; d and prev_flat_grad live in the state */
    double *work = (double *)TN_MALLOC(TN__MAX(vb, 1) * 8), *y = NULL, *s = NULL, *al = NULL;
    if (!lb->d) lb->d = (double *)TN_MALLOC(TN__MAX(vb, 1));
    if (!lb->prev_flat_grad) lb->prev_flat_grad = (double *)TN_MALLOC(TN__MAX(vb, 1));
    if (!work || !lb->d || !lb->prev_flat_grad) { TN_FREE(work); return tn__error("%s: out of memory", fn), NAN; }
    double *flat_grad = work, *q = work + N, *x_init = work + 2 * N, *ls = work + 3 * N;
    double orig_loss = NAN, result = NAN;
    int64_t n_iter = 0, current_evals = 0;
    double loss = NAN, t = 0;
    bool opt_cond = false;

    tn_no_grad_begin();
    if (!lb->has_counts) { lb->has_counts = true; lb->func_evals = 0; lb->n_iter = 0; }
    orig_loss = tn__closure_call(closure, user);
    if (orig_loss != orig_loss) { tn__closure_failed(fn); goto done; }
    loss = orig_loss;
    current_evals = 1;
    lb->func_evals += 1;
    tn__lbfgs_flat(o, flat_grad, 1, 0);
    opt_cond = tn__vabsmax(flat_grad, N, 1) <= tolerance_grad;
    if (opt_cond) { result = orig_loss; goto done; }

    while (n_iter < max_iter) {
        n_iter++;
        lb->n_iter++;
        /* direction */
        if (lb->n_iter == 1) {
            for (int64_t i = 0; i < N; i++) lb->d[i] = -flat_grad[i];
            while (lb->nold) tn__lbfgs_pop(lb);
            lb->has_hist = true;
            lb->H_diag = 1;
            lb->has_H = true;
        } else {
            y = (double *)TN_MALLOC(TN__MAX(vb, 1));
            s = (double *)TN_MALLOC(TN__MAX(vb, 1));
            if (!y || !s || tn__lbfgs_reserve(lb, lb->nold + 1)) { tn__error("%s: out of memory", fn); goto done; }
            for (int64_t i = 0; i < N; i++) { y[i] = flat_grad[i] - lb->prev_flat_grad[i]; s[i] = lb->d[i] * lb->t; }
            double ys = tn__vdot(y, s, N);
            if (ys > 1e-10) {
                if (lb->nold == history_size) tn__lbfgs_pop(lb);
                lb->old_dirs[lb->nold] = y;
                lb->old_stps[lb->nold] = s;
                lb->ro[lb->nold++] = 1. / ys;
                y = s = NULL;
                lb->H_diag = ys / tn__vdot(lb->old_dirs[lb->nold - 1], lb->old_dirs[lb->nold - 1], N);
            } else {
                TN_FREE(y); TN_FREE(s);
                y = s = NULL;
            }
            int num_old = lb->nold;
            TN_FREE(al);
            al = (double *)TN_MALLOC((size_t)TN__MAX(num_old, 1) * sizeof *al);
            if (!al) { tn__error("%s: out of memory", fn); goto done; }
            for (int64_t i = 0; i < N; i++) q[i] = -flat_grad[i];
            for (int i = num_old - 1; i >= 0; i--) {
                al[i] = tn__vdot(lb->old_stps[i], q, N) * lb->ro[i];
                for (int64_t j = 0; j < N; j++) q[j] += -al[i] * lb->old_dirs[i][j];
            }
            for (int64_t j = 0; j < N; j++) lb->d[j] = q[j] * lb->H_diag;   /* d = r */
            for (int i = 0; i < num_old; i++) {
                double be_i = tn__vdot(lb->old_dirs[i], lb->d, N) * lb->ro[i];
                for (int64_t j = 0; j < N; j++) lb->d[j] += (al[i] - be_i) * lb->old_stps[i][j];
            }
        }
        lb->has_d = true;
        memcpy(lb->prev_flat_grad, flat_grad, vb);
        lb->has_prev = true;
        lb->prev_loss = loss;
        lb->has_prev_loss = true;
        /* step length */
        if (lb->n_iter == 1) {
            double sum = 0;
            for (int64_t i = 0; i < N; i++) sum += fabs(flat_grad[i]);
            double inv = 1. / sum;
            t = (inv < 1. ? inv : 1.) * lr;
        } else {
            t = lr;
        }
        lb->t = t;
        lb->has_t = true;
        double gtd = tn__vdot(flat_grad, lb->d, N);
        if (gtd > -tolerance_change) break;
        int64_t ls_func_evals = 0;
        if (wolfe) {
            tn__lbfgs_ctx c;
            c.o = o; c.closure = closure; c.user = user; c.fn = fn; c.N = N;
            tn__lbfgs_flat(o, x_init, 0, 0);
            if (tn__strong_wolfe(&c, x_init, t, lb->d, loss, flat_grad, gtd, ls, &loss, flat_grad, &t, &ls_func_evals)) goto done;
            lb->t = t;
            tn__lbfgs_flat(o, lb->d, 2, t);
            opt_cond = tn__vabsmax(flat_grad, N, 1) <= tolerance_grad;
        } else {
            tn__lbfgs_flat(o, lb->d, 2, t);
            if (n_iter != max_iter) {
                loss = tn__closure_call(closure, user);
                if (loss != loss) { tn__closure_failed(fn); goto done; }
                tn__lbfgs_flat(o, flat_grad, 1, 0);
                opt_cond = tn__vabsmax(flat_grad, N, 1) <= tolerance_grad;
                ls_func_evals = 1;
            }
        }
        current_evals += ls_func_evals;
        lb->func_evals += ls_func_evals;
        /* stopping conditions */
        if (n_iter == max_iter) break;
        if (current_evals >= max_eval) break;
        if (opt_cond) break;
        if (tn__vabsmax(lb->d, N, t) <= tolerance_change) break;
        if (fabs(loss - lb->prev_loss) < tolerance_change) break;
    }
    result = orig_loss;
done:
    tn_no_grad_end();
    TN_FREE(y);
    TN_FREE(s);
    TN_FREE(al);
    TN_FREE(work);
    return result;
}

TNDEF double tn_optim_step_closure(tn_optim *o, tn_closure closure, void *user) {
    const char *fn = "tn_optim_step_closure";
    if (!o) return NAN;
    if (o->kind == TN__LBFGS) {
        if (!closure) return tn__error("%s: LBFGS needs a closure (got NULL)", fn), NAN;
        return tn__lbfgs_step(fn, o, closure, user);
    }
    double loss = 0;
    if (closure) {
        loss = tn__closure_call(closure, user);
        if (loss != loss) return tn__closure_failed(fn);
    }
    return tn__optim_step(fn, o) ? NAN : loss;
}
