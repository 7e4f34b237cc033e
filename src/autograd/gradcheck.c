/* ---- gradcheck ---- */
static double tn__flat_get(tn_tensor *t, int64_t i) { /* double i (row-major) of a contiguous f64 or c128 CPU tensor */
    return ((const double *)tn_data_ptr(t))[i];
}

/* Complex tensors take PyTorch's convention: each element is two real coordinates (real
   and imaginary part, as the memory of a contiguous complex tensor holds them). The numerical
   Jacobian perturbs each input coordinate; the analytical row of Re out[j] is the backward of
   a one-hot 1, of Im out[j] of a one-hot i, whose gradient dL/dRe x + i dL/dIm x gives the
   two columns of x's element. */
static bool tn__gc_dtype_ok(tn_dtype d) { return tn_dtype_is_floating(d) || d == TN_C64 || d == TN_C128; }
static bool tn__gc_double(tn_dtype d) { return d == TN_F64 || d == TN_C128; }
static int64_t tn__gc_coords(const tn_tensor *t) { return tn_dtype_is_complex(t->dtype) ? tn__mul_sat(tn_numel(t), 2) : tn_numel(t); }

static bool tn__gradcheck_impl(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, double eps, double atol, double rtol) {
    if (!fn || !inputs || n <= 0) { tn__error("tn_gradcheck: need a function and inputs"); return false; }
    if (eps <= 0) eps = 1e-6;
    if (atol <= 0) atol = 1e-5;
    if (rtol <= 0) rtol = 1e-3;
    for (int k = 0; k < n; k++) {
        tn_tensor *x = inputs[k];
        if (!x) return false;
        if (x->requires_grad && (x->device != TN_CPU || !tn_is_contiguous(x) || !tn__gc_dtype_ok(x->dtype))) {
            tn__error("tn_gradcheck: input %d must be a contiguous floating or complex CPU tensor (float64/complex128 recommended)", k);
            return false;
        }
    }
    bool ok = true;
    double worst = -1;
    char msg[512] = "";
    tn_scope_begin();
    tn_tensor *out = fn(inputs, n, user);
    if (!out || !tn__gc_dtype_ok(out->dtype)) {
        if (out) tn__error("tn_gradcheck: the function's output must be floating or complex, got %s", tn_dtype_name(out->dtype));
        tn_scope_end();
        return false;
    }
    const bool ocx = tn_dtype_is_complex(out->dtype);
    const int64_t m = tn__gc_coords(out);   /* real coordinates of the output */
    for (int k = 0; k < n && ok; k++) {
        tn_tensor *x = inputs[k];
        if (!x->requires_grad) continue;
        const bool xcx = tn_dtype_is_complex(x->dtype), xd = tn__gc_double(x->dtype);
        const int64_t nx = tn__gc_coords(x);
        /* numerical Jacobian column by column: central differences on x's raw data */
        double *num = (double *)tn__malloc_n("tn_gradcheck", tn__add_sat(tn__mul_sat(nx, m), 1), sizeof(double));   /* the Jacobian: nx * m can overflow */
        if (!num) { ok = false; break; }
        char *base = (char *)tn_data_ptr(x);
        for (int64_t e = 0; e < nx && ok; e++) {
            tn_tensor *outs[2];
            for (int s = 0; s < 2; s++) {
                double v = xd ? ((double *)base)[e] : ((float *)base)[e];
                double pv = v + (s ? -eps : eps);
                if (xd) ((double *)base)[e] = pv; else ((float *)base)[e] = (float)pv;
                tn_no_grad_begin();
                tn_tensor *o = fn(inputs, n, user);
                /* a copy: the output may be a view of the input being perturbed */
                outs[s] = o ? tn__own(tn__copy_as(o, ocx ? TN_C128 : TN_F64, TN_CPU)) : NULL;
                tn_no_grad_end();
                if (xd) ((double *)base)[e] = v; else ((float *)base)[e] = (float)v;
            }
            if (!outs[0] || !outs[1]) { ok = false; break; }
            for (int64_t j = 0; j < m; j++) num[j * nx + e] = (tn__flat_get(outs[0], j) - tn__flat_get(outs[1], j)) / (2 * eps);
        }
        /* analytical Jacobian row by row: one backward per output coordinate */
        for (int64_t j = 0; j < m && ok; j++) {
            tn_scope_begin();
            tn_tensor *go = tn_zeros_like(out), *gx = NULL; /* one-hot at output coordinate j: 1 or i */
            if (tn__gc_double(out->dtype)) ((double *)tn_data_ptr(go))[j] = 1; else ((float *)tn_data_ptr(go))[j] = 1;
            tn_autograd_opts o = TN_DEFAULTS(tn_autograd_opts);
            o.retain_graph = true;
            o.allow_unused = true;
            if (tn_autograd_grad_opts(&out, 1, &x, 1, &go, &gx, o)) { ok = false; tn_scope_end(); break; }
            tn_tensor *g64 = gx ? tn_contiguous(tn_to_dtype(gx, xcx ? TN_C128 : TN_F64)) : NULL;
            for (int64_t e = 0; e < nx; e++) {
                double a = g64 ? tn__flat_get(g64, e) : 0, nm = num[j * nx + e], err = fabs(a - nm);
                if (!(err <= atol + rtol * fabs(nm))) {
                    ok = false;
                    if (err > worst || worst < 0 || err != err) {
                        worst = err;
                        snprintf(msg, sizeof msg, "tn_gradcheck: Jacobian mismatch for input %d: d %s out[%lld] / d %s in[%lld]: analytical %.10g vs numerical %.10g",
                                 k, ocx ? (j % 2 ? "Im" : "Re") : "", (long long)(ocx ? j / 2 : j), xcx ? (e % 2 ? "Im" : "Re") : "",
                                 (long long)(xcx ? e / 2 : e), a, nm);
                    }
                }
            }
            tn_scope_end();
        }
        TN_FREE(num);
    }
    tn_scope_end();
    if (!ok && msg[0]) tn__error("%s", msg);
    return ok;
}

/* gradgradcheck: gradcheck of (inputs, v) -> the gradients of <out, v> w.r.t. the inputs,
   computed with create_graph, flattened and concatenated. */
typedef struct tn__ggctx { tn_gradcheck_fn fn; void *user; int n; } tn__ggctx;
static tn_tensor *tn__gg_fn(tn_tensor *const *in, int n_all, void *u) {
    tn__ggctx *c = (tn__ggctx *)u;
    tn_tensor *out = c->fn(in, c->n, c->user), *v = in[n_all - 1];
    if (!out) return NULL;
    tn_tensor *xs[TN_MAX_DIMS * 4], *gs[TN_MAX_DIMS * 4];
    int nx = 0;
    for (int k = 0; k < c->n && nx < TN_MAX_DIMS * 4; k++) if (in[k]->requires_grad) xs[nx++] = in[k];
    if (!tn_is_grad_enabled() || !out->requires_grad) { /* finite-difference evaluations run under no_grad */
        tn_enable_grad_begin();
        out = c->fn(in, c->n, c->user);
        tn_enable_grad_end();
        if (!out) return NULL;
    }
    tn_autograd_opts o = TN_DEFAULTS(tn_autograd_opts);
    o.create_graph = true;
    o.retain_graph = true;
    o.allow_unused = true;
    tn_tensor *vv = tn_reshape(v, out->shape, out->ndim);
    if (tn_autograd_grad_opts(&out, 1, xs, nx, &vv, gs, o)) return NULL;
    int64_t m1 = -1;
    for (int k = 0; k < nx; k++) gs[k] = tn_reshape(gs[k] ? gs[k] : tn_zeros_like(xs[k]), &m1, 1);
    return tn_cat(gs, nx);
}
static bool tn__gradgradcheck_impl(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, double eps, double atol, double rtol) {
    if (!fn || !inputs || n <= 0 || n >= TN_MAX_DIMS * 4) { tn__error("tn_gradgradcheck: need a function and 1 to %d inputs", TN_MAX_DIMS * 4 - 1); return false; }
    tn_scope_begin();
    tn_tensor *out = fn(inputs, n, user), *all[TN_MAX_DIMS * 4];
    bool ok = out != NULL;
    if (ok) {
        int64_t m = tn_numel(out);
        tn_generator gen;   /* its own generator (Philox): the caller's random stream is untouched */
        memset(&gen, 0, sizeof gen);
        gen.seed = 1234;
        tn_tensor *v = tn_contiguous(tn_dtype_is_complex(out->dtype) ? tn_randn_gen(&m, 1, out->dtype, &gen)   /* complex: both parts */
                                                                    : tn_to_dtype(tn_randn_gen(&m, 1, TN_F64, &gen), out->dtype));
        ok = v && tn_requires_grad_(v, true) == 0;
        for (int k = 0; k < n; k++) all[k] = inputs[k];
        all[n] = v;
        tn__ggctx c;
        c.fn = fn;
        c.user = user;
        c.n = n;
        if (ok) ok = tn__gradcheck_impl(tn__gg_fn, all, n + 1, &c, eps, atol, rtol);
    }
    tn_scope_end();
    return ok;
}

static void tn__hooks_free(tn__hooks *h) { if (h) { TN_FREE(h->items); TN_FREE(h); } }
static tn_tensor *tn__grad_name(tn_tensor *t, const char *name) {
    if (t && t->grad_fn) t->grad_fn->name = name;
    return t;
}
static tn_tensor *tn__grad_name_over(tn_tensor *t, const char *name, tn_tensor *const *ins, int n) {
    if (!t || !t->grad_fn) return t;
    tn_node *nd = t->grad_fn;
    nd->name = name;
    if (nd->shown || n <= 0) return t;   /* (a node already shown as another op's keeps that) */
    for (int i = 0; i < n; i++)
        if (ins[i] && ins[i]->grad_fn == nd) return t;   /* the composite is one node over that input: no self-edge */
    tn__edge *e = (tn__edge *)TN_MALLOC((size_t)n * sizeof *e);
    if (!e) return t;                    /* only introspection loses: the inner edges show */
    for (int i = 0; i < n; i++) {
        tn_tensor *x = ins[i];
        e[i].fn = x && x->requires_grad && x->grad_fn ? tn_node_retain(x->grad_fn) : NULL;
        e[i].leaf = x && x->requires_grad && !x->grad_fn ? tn_retain(x) : NULL;
    }
    nd->shown = e;
    nd->nshown = n;
    return t;
}
TNDEF bool tn_gradcheck_opts(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, tn_gradcheck_fn_opts o) {
    return tn__gradcheck_impl(fn, inputs, n, user, o.eps, o.atol, o.rtol);
}
TNDEF bool tn_gradcheck_str(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, const char *options) {
    TN__KW_STR_BOOL(tn_gradcheck_fn_opts, gradcheck, "tn_gradcheck", options, tn_gradcheck_opts(fn, inputs, n, user, o));
}
TNDEF bool tn_gradgradcheck_opts(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, tn_gradcheck_fn_opts o) {
    return tn__gradgradcheck_impl(fn, inputs, n, user, o.eps, o.atol, o.rtol);
}
TNDEF bool tn_gradgradcheck_str(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, const char *options) {
    TN__KW_STR_BOOL(tn_gradcheck_fn_opts, gradcheck, "tn_gradgradcheck", options, tn_gradgradcheck_opts(fn, inputs, n, user, o));
}
