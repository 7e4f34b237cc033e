/* An optimizer is its parameter groups (each: a range of o->params and a table of named
   options, PyTorch's param_groups[g] dict) and per-parameter state tensors in the slots
   its kind names (PyTorch's optimizer.state[p]). The CPU step calls the TN_HD update
   rules of the declaration half over contiguous float32/float64 data. */

/* An option with its default. type: 'f' number, 'i' integer, 'b' bool, 'p' pair
   (betas), 'w' line_search_fn (None | 'strong_wolfe'), 'e' max_eval (None: max_iter*5//4). */
typedef struct tn__optdef { const char *name; char type; double def, def2; } tn__optdef;
#define TN__OPTDEF_END {NULL, 0, 0, 0}
static const tn__optdef tn__optdefs[TN__NUM_OPTIMS][9] = {
    {{"lr", 'f', 1e-3, 0}, {"momentum", 'f', 0, 0}, {"dampening", 'f', 0, 0}, {"weight_decay", 'f', 0, 0},
     {"nesterov", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"amsgrad", 'b', 0, 0}, {"maximize", 'b', 0, 0}, {"capturable", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 1e-2, 0},
     {"amsgrad", 'b', 0, 0}, {"maximize", 'b', 0, 0}, {"capturable", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-2, 0}, {"alpha", 'f', 0.99, 0}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"momentum", 'f', 0, 0}, {"centered", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-2, 0}, {"lr_decay", 'f', 0, 0}, {"weight_decay", 'f', 0, 0}, {"initial_accumulator_value", 'f', 0, 0},
     {"eps", 'f', 1e-10, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1.0, 0}, {"rho", 'f', 0.9, 0}, {"eps", 'f', 1e-6, 0}, {"weight_decay", 'f', 0, 0},
     {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 2e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 2e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"momentum_decay", 'f', 4e-3, 0}, {"decoupled_weight_decay", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"decoupled_weight_decay", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1, 0}, {"max_iter", 'i', 20, 0}, {"max_eval", 'e', 0, 0}, {"tolerance_grad", 'f', 1e-7, 0},
     {"tolerance_change", 'f', 1e-9, 0}, {"history_size", 'i', 100, 0}, {"line_search_fn", 'w', 0, 0}, TN__OPTDEF_END},
};
static const char *const tn__optim_names[TN__NUM_OPTIMS] = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                                           "Adamax", "NAdam", "RAdam", "LBFGS"};
/* Keyword arguments PyTorch 2 has that change nothing here: foreach/fused choose an
   implementation (one here); capturable/differentiable are accepted when False (Adam and
   AdamW take capturable=True: their table has it). */
static const char *const tn__optim_noops[TN__NUM_OPTIMS] = {"foreach fused", "foreach fused", "foreach fused", "foreach",
                                                           "foreach fused", "foreach", "foreach", "foreach", "foreach", ""};
static const char *const tn__optim_false_only[TN__NUM_OPTIMS] = {"differentiable", "differentiable",
    "differentiable", "capturable differentiable", "differentiable", "capturable differentiable",
    "capturable differentiable", "capturable differentiable", "capturable differentiable", ""};
/* State slots, in PyTorch's order of optimizer.state[p]. */
#define TN__OPT_NSLOT 4
static const char *const tn__optim_slots[TN__NUM_OPTIMS][TN__OPT_NSLOT] = {
    {"momentum_buffer", NULL, NULL, NULL}, {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
    {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}, {"step", "square_avg", "momentum_buffer", "grad_avg"},
    {"step", "sum", NULL, NULL}, {"step", "square_avg", "acc_delta", NULL}, {"step", "exp_avg", "exp_inf", NULL},
    {"step", "mu_product", "exp_avg", "exp_avg_sq"}, {"step", "exp_avg", "exp_avg_sq", NULL}, {NULL, NULL, NULL, NULL}};
/* Keys schedulers add to param groups (tn_optim_set may create them). */
static const char *const tn__sched_keys[] = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", NULL};

#define TN__OPT_MAXV 24
typedef struct tn__pgroup {
    int first, n;                     /* its parameters: o->params[first, first + n) */
    int nv;                           /* options: the kind's first (table order), then schedulers' keys */
    char key[TN__OPT_MAXV][32];
    double val[TN__OPT_MAXV];
} tn__pgroup;

/* LBFGS keeps everything in float64 (PyTorch: in the parameters' dtype). */
typedef struct tn__lbfgs {
    int64_t N;                        /* total number of elements */
    bool has_counts, has_d, has_t, has_hist, has_H, has_prev, has_prev_loss;
    int64_t func_evals, n_iter;
    double *d, t, H_diag, *prev_flat_grad, prev_loss;
    int nold, cap;                    /* history: old_dirs[i], old_stps[i], ro[i], oldest first */
    double **old_dirs, **old_stps, *ro;
} tn__lbfgs;

struct tn_optim {
    int kind;
    int ng, gcap;
    tn__pgroup *groups;
    tn__pgroup defaults;              /* the options given at creation: add_param_group starts from them */
    int np, pcap;
    tn_tensor **params;               /* retained, group after group */
    tn_tensor **state;                /* np * TN__OPT_NSLOT, owned */
    unsigned char *fresh;             /* per param: SGD momentum buffer made this step (starts as the grad) */
    tn__lbfgs *lb;
};

/* ---- group tables ---- */
static int tn__pg_find(const tn__pgroup *g, const char *key) {
    for (int i = 0; i < g->nv; i++) if (!strcmp(g->key[i], key)) return i;
    return -1;
}
static double tn__pg_get(const tn__pgroup *g, const char *key) {
    int i = tn__pg_find(g, key);
    return i < 0 ? NAN : g->val[i];
}
static int tn__pg_set(const char *fn, tn__pgroup *g, const char *key, double v) {
    int i = tn__pg_find(g, key);
    if (i < 0) {
        if (g->nv == TN__OPT_MAXV || strlen(key) >= sizeof g->key[0])
            return TN__FAIL_INT("%s: too many options in a parameter group (or name '%s' too long)", fn, key);
        i = g->nv++;
        snprintf(g->key[i], sizeof g->key[i], "%s", key);
    }
    g->val[i] = v;
    return 0;
}
static const tn__optdef *tn__optim_def(int kind, const char *key) {
    for (const tn__optdef *d = tn__optdefs[kind]; d->name; d++) {
        size_t l = strlen(d->name);
        if (!strncmp(key, d->name, l) && (!key[l] || (d->type == 'p' && (!strcmp(key + l, "[0]") || !strcmp(key + l, "[1]")))))
            return d;
    }
    return NULL;
}
static void tn__optim_valid_names(int kind, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (const tn__optdef *d = tn__optdefs[kind]; d->name && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", d->name);
    const char *extra[2] = {tn__optim_noops[kind], tn__optim_false_only[kind]};
    for (int e = 0; e < 2; e++)
        for (const char *p = extra[e]; *p && n < cap;) {
            size_t l = strcspn(p, " ");
            n += (size_t)snprintf(buf + n, cap - n, ", %.*s", (int)l, p);
            p += l + (p[l] == ' ');
        }
}

/* PyTorch's constructor checks ("Invalid learning rate: -1"), on any group. */
static int tn__optim_validate(const char *fn, int kind, const tn__pgroup *g) {
    static const struct { const char *key, *what; double lo, hi; bool open; } checks[] = {
        {"lr", "Invalid learning rate", 0, INFINITY, false}, {"eps", "Invalid epsilon value", 0, INFINITY, false},
        {"betas[0]", "Invalid beta parameter at index 0", 0, 1, true},
        {"betas[1]", "Invalid beta parameter at index 1", 0, 1, true},
        {"weight_decay", "Invalid weight_decay value", 0, INFINITY, false},
        {"momentum", "Invalid momentum value", 0, INFINITY, false}, {"alpha", "Invalid alpha value", 0, INFINITY, false},
        {"rho", "Invalid rho value", 0, 1, false}, {"lr_decay", "Invalid lr_decay value", 0, INFINITY, false},
        {"initial_accumulator_value", "Invalid initial_accumulator_value value", 0, INFINITY, false},
        {"momentum_decay", "Invalid momentum_decay value", 0, INFINITY, false},
        {"history_size", "Invalid history_size (at least 1)", 1, INFINITY, false},
        {"max_iter", "Invalid max_iter value", 0, INFINITY, false}, {"max_eval", "Invalid max_eval value", 0, INFINITY, false}};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (tn__pg_find(g, checks[i].key) < 0) continue;
        double v = tn__pg_get(g, checks[i].key);
        if (!(v >= checks[i].lo && (checks[i].open ? v < checks[i].hi : v <= checks[i].hi)))
            return TN__FAIL_INT("%s: %s: %g", fn, checks[i].what, v);
    }
    if (kind == TN__SGD && tn__pg_get(g, "nesterov") != 0 && (tn__pg_get(g, "momentum") <= 0 || tn__pg_get(g, "dampening") != 0))
        return TN__FAIL_INT("%s: Nesterov momentum requires a momentum and zero dampening", fn);
    return 0;
}

/* tn_optim_opts -> a group's table: each option of the kind as given, else base's value
   (add_param_group: the optimizer's defaults) or the kind's PyTorch default. given: the
   option text's rows (a text value counts even where it equals "not given": "lr=nan"). */
static int tn__optim_from_opts(const char *fn, int kind, const tn_optim_opts *in, uint64_t given, const tn__pgroup *base, tn__pgroup *out) {
    const tn_optim_opts unset = TN_DEFAULTS(tn_optim_opts);
    const int nkeys = TN__KW_N(tn__kw_optim);
    char valid[400], key[40];
    tn__optim_valid_names(kind, valid, sizeof valid);
    if (tn__kw_only(fn, tn__optim_names[kind], tn__kw_optim, nkeys, in, &unset, valid)) return -1;
    for (const char *p = tn__optim_false_only[kind]; *p;) {
        size_t len = strcspn(p, " ");
        for (int i = 0; i < nkeys; i++)
            if (strlen(tn__kw_optim[i].name) == len && !memcmp(tn__kw_optim[i].name, p, len) && *(const int *)((const char *)in + tn__kw_optim[i].off) == 1)
                return TN__FAIL_INT("%s: %.*s=True is not supported (only %.*s=False)", fn, (int)len, p, (int)len, p);
        p += len + (p[len] == ' ');
    }
    out->nv = 0;
    for (const tn__optdef *d = tn__optdefs[kind]; d->name; d++) {
        int ki = 0;
        while (strcmp(tn__kw_optim[ki].name, d->name)) ki++;   /* every option has its field */
        const char *f = (const char *)in + tn__kw_optim[ki].off;
        const bool seen = given >> ki & 1;
        double v = base ? tn__pg_get(base, d->name) : d->def;
        if (d->type == 'f') {
            if (seen || *(const double *)f == *(const double *)f) v = *(const double *)f;
        } else if (d->type == 'i' || d->type == 'e') {
            const int64_t x = *(const int64_t *)f;
            if (x != TN_NONE) v = (double)x;
            else if (d->type == 'e' && !base) v = floor(tn__pg_get(out, "max_iter") * 5 / 4);   /* max_eval=None */
        } else if (d->type == 'b' || d->type == 'w') {
            const int x = *(const int *)f;
            if (x != -1) v = x;
        } else { /* the pair: "betas[0]", "betas[1]", each given or not */
            for (int e = 0; e < 2; e++) {
                const double x = ((const double *)f)[e];
                snprintf(key, sizeof key, "%s[%d]", d->name, e);
                v = seen || x == x ? x : base ? tn__pg_get(base, key) : e ? d->def2 : d->def;
                if (tn__pg_set(fn, out, key, v)) return -1;
            }
            continue;
        }
        if (d->type == 'b' && v != 0 && v != 1) return TN__FAIL_INT("%s: option %s=%g: expected true or false", fn, d->name, v);
        if (d->type == 'w' && v != 0 && v != 1)
            return TN__FAIL_INT("%s: line_search_fn %g is not TN_LINE_SEARCH_NONE or TN_LINE_SEARCH_STRONG_WOLFE", fn, v);
        if (tn__pg_set(fn, out, d->name, v)) return -1;
    }
    return tn__optim_validate(fn, kind, out);
}
/* The option text of kind (only its names are known) -> a group's table. */
static int tn__optim_from_str(const char *fn, int kind, const char *text, const tn__pgroup *base, tn__pgroup *out) {
    char valid[400];
    tn__optim_valid_names(kind, valid, sizeof valid);
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_optim, TN__KW_N(tn__kw_optim), valid, keys);
    tn_optim_opts o = TN_DEFAULTS(tn_optim_opts);
    uint64_t seen = 0, given = 0;
    if (tn__kw_parse(fn, text, keys, n, &o, &seen)) return -1;
    for (int i = 0; i < n; i++)   /* the filtered rows' bits -> the full table's */
        if (seen >> i & 1)
            for (int j = 0; j < TN__KW_N(tn__kw_optim); j++) if (tn__kw_optim[j].off == keys[i].off) given |= (uint64_t)1 << j;
    return tn__optim_from_opts(fn, kind, &o, given, base, out);
}

/* ---- state ---- */
/* A complex tensor's real view [..., 2], a new reference without autograd: PyTorch 2's
   optimizers update a complex parameter as view_as_real of it, its grad and its state
   (each part one coordinate; 1.13 refused some). */
static tn_tensor *tn__optim_real_view(tn_tensor *t) {
    int64_t sh[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (!t || t->ndim >= TN_MAX_DIMS) return NULL;
    for (int d = 0; d < t->ndim; d++) { sh[d] = t->shape[d]; st[d] = t->strides[d] * 2; }
    sh[t->ndim] = 2;
    st[t->ndim] = 1;
    tn_tensor *v = tn__view_of(t, sh, st, t->ndim + 1, t->offset * 2);
    if (v) v->dtype = tn_dtype_to_real(t->dtype);
    return v;
}
/* t = {param, grad, s0, s1, s2} (NULLs kept) replaced by their real views, held in views
   (NULLs where none) for the caller to release; -1 with an error (and nothing held) when
   out of memory. A real parameter changes nothing. */
static int tn__optim_as_real(const char *fn, tn_tensor **t, tn_tensor **views) {
    for (int q = 0; q < 5; q++) views[q] = NULL;
    if (!tn_is_complex(t[0])) return 0;
    for (int q = 0; q < 5; q++)
        if (t[q] && !(t[q] = views[q] = tn__optim_real_view(t[q]))) {
            for (int r = 0; r < q; r++) tn_release(views[r]);
            return TN__FAIL_INT("%s: out of memory viewing a complex parameter as real", fn);
        }
    return 0;
}
static bool tn__optim_scalar_slot(const char *name) { return !strcmp(name, "step") || !strcmp(name, "mu_product"); }
/* A new state tensor for param p: "step" 0-d float32 0, "mu_product" 1, "sum" the
   initial accumulator, buffers zeros of p's shape and dtype. */
static tn_tensor *tn__optim_state_new(tn_tensor *p, const char *name, double init) {
    bool scalar = tn__optim_scalar_slot(name);
    tn_tensor *t = scalar ? tn__new(TN_F32, TN_CPU, NULL, 0) : tn__new(p->dtype, TN_CPU, p->shape, p->ndim);
    if (!t) return NULL;
    int64_t n = tn_numel(t);
    double v = !strcmp(name, "mu_product") ? 1 : scalar ? 0 : init;
    if (t->dtype == TN_F32) for (int64_t i = 0; i < n; i++) ((float *)t->storage->data)[i] = (float)v;
    else if (t->dtype == TN_F64) for (int64_t i = 0; i < n; i++) ((double *)t->storage->data)[i] = v;
    else if (tn_is_complex(t)) {   /* both parts (PyTorch's Adagrad: complex(init, init)) */
        tn_tensor *rv = tn__optim_real_view(t);
        const int rc = rv ? tn__cpu_fill(rv, v) : -1;
        tn_release(rv);
        if (rc) { tn_release(t); return NULL; }
    } else if (tn__cpu_fill(t, v)) { tn_release(t); return NULL; }   /* half precision buffers */
    if (!scalar && p->device != TN_CPU) { /* buffers live beside the parameter; step counters stay on the CPU, as PyTorch's */
        tn_tensor *d = tn__copy_as(t, t->dtype, p->device);
        tn_release(t);
        t = d;
    }
    return t;
}
/* Whether slot k of param group g's kind is in use with the group's options. */
static bool tn__optim_slot_used(int kind, int k, const tn__pgroup *g) {
    const char *name = tn__optim_slots[kind][k];
    if (!name) return false;
    if (!strcmp(name, "max_exp_avg_sq")) return tn__pg_get(g, "amsgrad") != 0;
    if (!strcmp(name, "grad_avg")) return tn__pg_get(g, "centered") != 0;
    if (!strcmp(name, "momentum_buffer")) return kind == TN__SGD ? tn__pg_get(g, "momentum") != 0 : tn__pg_get(g, "momentum") > 0;
    return true;
}
static int tn__optim_slot_index(int kind, const char *name) {
    for (int k = 0; k < TN__OPT_NSLOT; k++)
        if (tn__optim_slots[kind][k] && !strcmp(tn__optim_slots[kind][k], name)) return k;
    return -1;
}
/* Create the missing state of param i (in group g). SGD's momentum buffer starts as the
   gradient: it is allocated here and filled by the update (fresh). */
static int tn__optim_init_state(const char *fn, tn_optim *o, int i, const tn__pgroup *g) {
    for (int k = 0; k < TN__OPT_NSLOT; k++) {
        if (o->state[i * TN__OPT_NSLOT + k] || !tn__optim_slot_used(o->kind, k, g)) continue;
        const char *name = tn__optim_slots[o->kind][k];
        tn_tensor *t = tn__optim_state_new(o->params[i], name, !strcmp(name, "sum") ? tn__pg_get(g, "initial_accumulator_value") : 0);
        if (!t) return TN__FAIL_INT("%s: out of memory creating optimizer state", fn);
        o->state[i * TN__OPT_NSLOT + k] = t;
        if (o->kind == TN__SGD) o->fresh[i] = 1;
    }
    return 0;
}

/* ---- creation ---- */
static int tn__optim_kind(const char *fn, const char *kind) {
    for (int k = 0; kind && k < TN__NUM_OPTIMS; k++) if (!strcmp(kind, tn__optim_names[k])) return k;
    return TN__FAIL_INT("%s: unknown optimizer '%s' (known: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS)",
                        fn, kind ? kind : "(null)");
}
static int tn__optim_check_params(const char *fn, const tn_optim *o, tn_tensor *const *params, int n) {
    if (n <= 0 || !params) return TN__FAIL_INT("%s: optimizer got an empty parameter list", fn);
    for (int i = 0; i < n; i++) {
        tn_tensor *p = params[i];
        if (!p) return -1; /* a failed expression upstream: its error stands */
        if (p->grad_fn) return TN__FAIL_INT("%s: can't optimize a non-leaf Tensor (parameter %d has grad_fn %s)", fn, i, tn_grad_fn_name(p));
        if (!p->requires_grad)
            return TN__FAIL_INT("%s: parameter %d does not require grad (call tn_requires_grad_(t, true) first)", fn, i);
        if (!tn_dtype_is_floating(p->dtype) && !(tn_is_complex(p) && o->kind != TN__LBFGS))
            return TN__FAIL_INT("%s: parameter %d has dtype %s; the optimizers update floating tensors%s", fn, i, tn_dtype_name(p->dtype),
                                tn_is_complex(p) ? " (LBFGS: not complex ones)" : " (and complex ones)");
        for (int j = 0; j < i; j++)
            if (params[j] == p) return TN__FAIL_INT("%s: parameter %d appears twice in the parameter group", fn, i);
        for (int j = 0; j < o->np; j++)
            if (o->params[j] == p) return TN__FAIL_INT("%s: some parameters appear in more than one parameter group (parameter %d)", fn, i);
    }
    return 0;
}
/* Append a group (options already parsed into g). */
static int tn__optim_append(const char *fn, tn_optim *o, tn_tensor *const *params, int n, const tn__pgroup *g) {
    if (tn__optim_check_params(fn, o, params, n)) return -1;
    if (o->ng == o->gcap) {
        int cap = o->gcap ? 2 * o->gcap : 2;
        tn__pgroup *gs = (tn__pgroup *)TN_REALLOC(o->groups, (size_t)cap * sizeof *gs);
        if (!gs) return TN__FAIL_INT("%s: out of memory", fn);
        o->groups = gs;
        o->gcap = cap;
    }
    if (o->np + n > o->pcap) {
        int cap = TN__MAX(o->np + n, 2 * o->pcap);
        tn_tensor **ps = (tn_tensor **)TN_REALLOC(o->params, (size_t)cap * sizeof *ps);
        if (ps) o->params = ps;
        tn_tensor **st = ps ? (tn_tensor **)TN_REALLOC(o->state, (size_t)cap * TN__OPT_NSLOT * sizeof *st) : NULL;
        if (st) o->state = st;
        unsigned char *fr = st ? (unsigned char *)TN_REALLOC(o->fresh, (size_t)cap) : NULL;
        if (!fr) return TN__FAIL_INT("%s: out of memory", fn);
        o->fresh = fr;
        o->pcap = cap;
    }
    tn__pgroup *ng = &o->groups[o->ng];
    *ng = *g;
    ng->first = o->np;
    ng->n = n;
    for (int i = 0; i < n; i++) {
        o->params[o->np + i] = tn_retain(params[i]);
        for (int k = 0; k < TN__OPT_NSLOT; k++) o->state[(o->np + i) * TN__OPT_NSLOT + k] = NULL;
        o->fresh[o->np + i] = 0;
    }
    o->np += n;
    o->ng++;
    return 0;
}
static tn__lbfgs *tn__lbfgs_new(void) {
    tn__lbfgs *lb = (tn__lbfgs *)TN_MALLOC(sizeof *lb);
    if (lb) memset(lb, 0, sizeof *lb);
    return lb;
}
static void tn__lbfgs_free(tn__lbfgs *lb) {
    if (!lb) return;
    for (int i = 0; i < lb->nold; i++) { TN_FREE(lb->old_dirs[i]); TN_FREE(lb->old_stps[i]); }
    TN_FREE(lb->old_dirs);
    TN_FREE(lb->old_stps);
    TN_FREE(lb->ro);
    TN_FREE(lb->d);
    TN_FREE(lb->prev_flat_grad);
    TN_FREE(lb);
}
static const char *const tn__optim_fns[TN__NUM_OPTIMS] = {"tn_optim_sgd", "tn_optim_adam", "tn_optim_adamw", "tn_optim_rmsprop",
    "tn_optim_adagrad", "tn_optim_adadelta", "tn_optim_adamax", "tn_optim_nadam", "tn_optim_radam", "tn_optim_lbfgs"};
/* opts, or the option text when text is not NULL */
static tn_optim *tn__optim_create(const char *kind, tn_tensor *const *params, int n, const tn_optim_opts *opts, const char *text) {
    for (int i = 0; params && i < n; i++) if (!params[i]) return NULL;
    int k = tn__optim_kind("tn_optim_create", kind);
    if (k < 0) return NULL;
    const char *fn = tn__optim_fns[k];
    tn_optim *o = (tn_optim *)TN_MALLOC(sizeof *o);
    if (!o) return (tn_optim *)tn__error("%s: out of memory", fn);
    memset(o, 0, sizeof *o);
    o->kind = k;
    if ((text ? tn__optim_from_str(fn, k, text, NULL, &o->defaults) : tn__optim_from_opts(fn, k, opts, 0, NULL, &o->defaults)) ||
        tn__optim_append(fn, o, params, n, &o->defaults) || (k == TN__LBFGS && !(o->lb = tn__lbfgs_new()))) {
        if (k == TN__LBFGS && o->ng == 1 && !o->lb) tn__error("%s: out of memory", fn);
        tn_optim_free(o);
        return NULL;
    }
    /* Adagrad makes its state in the constructor (step 0, sum = initial_accumulator_value) */
    for (int i = 0; k == TN__ADAGRAD && i < o->np; i++)
        if (tn__optim_init_state(fn, o, i, &o->groups[0])) { tn_optim_free(o); return NULL; }
    return o;
}
TNDEF tn_optim *tn_optim_create_opts(const char *kind, tn_tensor *const *params, int n, tn_optim_opts opts) {
    return tn__optim_create(kind, params, n, &opts, NULL);
}
TNDEF tn_optim *tn_optim_create_str(const char *kind, tn_tensor *const *params, int n, const char *options) {
    return tn__optim_create(kind, params, n, NULL, options ? options : "");
}
static int tn__optim_add_group(tn_optim *o, tn_tensor *const *params, int n, const tn_optim_opts *opts, const char *text) {
    const char *fn = "tn_optim_add_param_group";
    if (!o) return -1;
    for (int i = 0; params && i < n; i++) if (!params[i]) return -1;
    if (o->kind == TN__LBFGS) return TN__FAIL_INT("%s: LBFGS doesn't support per-parameter options (parameter groups)", fn);
    tn__pgroup g;
    if ((text ? tn__optim_from_str(fn, o->kind, text, &o->defaults, &g) : tn__optim_from_opts(fn, o->kind, opts, 0, &o->defaults, &g)) ||
        tn__optim_append(fn, o, params, n, &g)) return -1;
    for (int i = o->groups[o->ng - 1].first; o->kind == TN__ADAGRAD && i < o->np; i++)
        if (tn__optim_init_state(fn, o, i, &o->groups[o->ng - 1])) return -1;
    return 0;
}
TNDEF int tn_optim_add_param_group_opts(tn_optim *o, tn_tensor *const *params, int n, tn_optim_opts opts) {
    return tn__optim_add_group(o, params, n, &opts, NULL);
}
TNDEF int tn_optim_add_param_group_str(tn_optim *o, tn_tensor *const *params, int n, const char *options) {
    return tn__optim_add_group(o, params, n, NULL, options ? options : "");
}
TNDEF void tn_optim_free(tn_optim *o) {
    if (!o) return;
    for (int i = 0; i < o->np; i++) {
        tn_release(o->params[i]);
        for (int k = 0; k < TN__OPT_NSLOT; k++) tn_release(o->state[i * TN__OPT_NSLOT + k]);
    }
    TN_FREE(o->params);
    TN_FREE(o->state);
    TN_FREE(o->fresh);
    TN_FREE(o->groups);
    tn__lbfgs_free(o->lb);
    TN_FREE(o);
}
TNDEF int tn_optim_num_groups(const tn_optim *o) { return o ? o->ng : 0; }
TNDEF int tn_optim_num_params(const tn_optim *o) { return o ? o->np : 0; }
TNDEF tn_tensor *tn_optim_param(const tn_optim *o, int i) { return o && i >= 0 && i < o->np ? o->params[i] : NULL; }
TNDEF tn_tensor *tn_optim_state(const tn_optim *o, int param, const char *name) {
    if (!o || param < 0 || param >= o->np || !name) return NULL;
    int k = tn__optim_slot_index(o->kind, name);
    return k < 0 ? NULL : o->state[param * TN__OPT_NSLOT + k];
}

static int tn__optim_group_arg(const char *fn, const tn_optim *o, int group, const char *name) {
    if (group < 0 || group >= o->ng)
        return TN__FAIL_INT("%s: group %d out of range (the %s optimizer has %d)", fn, group, tn__optim_names[o->kind], o->ng);
    if (!name) return TN__FAIL_INT("%s: name is NULL", fn);
    if (!strcmp(name, "betas") && tn__optim_def(o->kind, "betas"))
        return TN__FAIL_INT("%s: betas is a pair: use \"betas[0]\" or \"betas[1]\"", fn);
    return 0;
}
TNDEF double tn_optim_get(const tn_optim *o, int group, const char *name) {
    const char *fn = "tn_optim_get";
    if (!o) return NAN;
    if (tn__optim_group_arg(fn, o, group, name)) return NAN;
    int i = tn__pg_find(&o->groups[group], name);
    if (i < 0) return tn__error("%s: param group %d of %s has no option '%s'", fn, group, tn__optim_names[o->kind], name), NAN;
    return o->groups[group].val[i];
}
TNDEF int tn_optim_set(tn_optim *o, int group, const char *name, double value) {
    const char *fn = "tn_optim_set";
    if (!o) return -1;
    if (tn__optim_group_arg(fn, o, group, name)) return -1;
    tn__pgroup *g = &o->groups[group];
    const tn__optdef *d = tn__optim_def(o->kind, name);
    if (d && d->type == 'b') value = value != 0;
    if (d && d->type == 'w' && value != 0 && value != 1)
        return TN__FAIL_INT("%s: %s is 0 (None) or 1 ('strong_wolfe'), got %g", fn, name, value);
    if (!d && tn__pg_find(g, name) < 0) {
        bool sched = false;
        for (int i = 0; tn__sched_keys[i]; i++) sched = sched || !strcmp(tn__sched_keys[i], name);
        if (!sched) {
            char valid[400];
            tn__optim_valid_names(o->kind, valid, sizeof valid);
            return TN__FAIL_INT("%s: %s has no option '%s' (options: %s; initial_lr, max_lr, min_lr, max_momentum, base_momentum)",
                                fn, tn__optim_names[o->kind], name, valid);
        }
    }
    return tn__pg_set(fn, g, name, value);
}

/* ---- zero_grad ---- */
TNDEF void tn_optim_zero_grad_opts(tn_optim *o, tn_zero_grad_opts opts) {
    if (!o) return;
    tn_scope_begin();
    for (int i = 0; i < o->np; i++) tn__zero_grad_param(o->params[i], opts.set_to_none);
    tn_scope_end();
}
TNDEF int tn_optim_zero_grad_str(tn_optim *optim, const char *options) {
    TN__KW_STR_INT(tn_zero_grad_opts, zero_grad, "tn_optim_zero_grad", options, (tn_optim_zero_grad_opts(optim, o), 0));
}

/* ---- the CPU step ---- */
TN__NO_CONTRACT_BEGIN   /* the rules' bits are torch's: only their written fmas fuse */
/* One parameter's update over n contiguous elements: p, g and up to three state buffers
   (NULL: unused, read as a dummy). TN__OPTIM_LOOP expands the loop with the kind and the
   flags as constants, so tn_optim_apply's switch and flag tests fold away and the loop
   vectorises (the same operations in the same order per element: the same bits as the
   general loop); the common rules get such a copy, the rest the general loop. A, B, E: the
   state pointers of element i (&d: a scratch value for a slot the rule does not touch). */
/* the arguments of a threaded step: the rule's constants, the buffers */
#define TN__OPTIM_ARGS(T, S) typedef struct { const tn__optk *k; const T *c; T *p; const T *g; T *s0, *s1, *s2; } tn__optim_args_##S;
#define TN__OPTIM_LOOP(T, S, NAME, KIND, F, A, B, E) TN__OPTIM_LOOP_ATTR(T, S, NAME, KIND, F, A, B, E, TN__PLAIN_FN)
#define TN__OPTIM_LOOP_ATTR(T, S, NAME, KIND, F, A, B, E, ATTR) \
ATTR static void tn__optim_part_##S##_##NAME(void *args, int64_t lo, int64_t hi) { \
    const tn__optim_args_##S *a_ = (const tn__optim_args_##S *)args; \
    T *p = a_->p, *s0 = a_->s0, *s1 = a_->s1; \
    const T *g = a_->g; \
    T cl[12];   /* a private copy: the stores cannot alias it, the loop keeps it in registers */ \
    memcpy(cl, a_->c, sizeof cl); \
    (void)s0; (void)s1; \
    for (int64_t i = lo; i < hi; i++) { \
        T d = 0; \
        p[i] = tn_optim_apply_##S(KIND, F, cl, p[i], g[i], A, B, E); \
    } \
}
#define TN__OPTIM_WD TN_OPTF_WEIGHT_DECAY
#define TN__OPTIM_DEC TN_OPTF_DECOUPLED
#define TN__OPTIM_MOM TN_OPTF_MOMENTUM
#ifdef TN__FMA_FN
#define TN__FMA_PART(SFX, NAME) (tn__cpu_fma() ? tn__optim_part_##SFX##_##NAME##_fma : tn__optim_part_##SFX##_##NAME)
#else
#define TN__FMA_PART(SFX, NAME) tn__optim_part_##SFX##_##NAME
#endif
/* the general loop: any rule and flags (NAME: any, any_fma) */
#define TN__OPTIM_ANY(T, S, NAME, ATTR) \
ATTR static void tn__optim_part_##S##_##NAME(void *args, int64_t lo, int64_t hi) { \
    const tn__optim_args_##S *a = (const tn__optim_args_##S *)args; \
    T *p = a->p, *s0 = a->s0, *s1 = a->s1, *s2 = a->s2; \
    const T *g = a->g, *c = a->c; \
    const int kind = a->k->kind, f = a->k->flags; \
    for (int64_t i = lo; i < hi; i++) { \
        T d[3] = {0, 0, 0};   /* scratch state for the unused slots, per element */ \
        p[i] = tn_optim_apply_##S(kind, f, c, p[i], g[i], s0 ? s0 + i : &d[0], s1 ? s1 + i : &d[1], s2 ? s2 + i : &d[2]); \
    } \
}
/* @template TN__OPTIM_KERNEL(T, S) */
TN__OPTIM_ARGS(T, S)
TN__OPTIM_LOOP(T, S, adam, TN__ADAM, 0, s0 + i, s1 + i, &d)
TN__OPTIM_LOOP(T, S, adam_wd, TN__ADAM, TN__OPTIM_WD, s0 + i, s1 + i, &d)
TN__OPTIM_LOOP(T, S, adam_wd_dec, TN__ADAM, TN__OPTIM_WD | TN__OPTIM_DEC, s0 + i, s1 + i, &d)
TN__OPTIM_LOOP(T, S, adam_dec, TN__ADAM, TN__OPTIM_DEC, s0 + i, s1 + i, &d)
TN__OPTIM_LOOP(T, S, sgd, TN__SGD, 0, &d, &d, &d)
TN__OPTIM_LOOP(T, S, sgd_wd, TN__SGD, TN__OPTIM_WD, &d, &d, &d)
TN__OPTIM_LOOP(T, S, sgd_mom, TN__SGD, TN__OPTIM_MOM, s0 + i, &d, &d)
TN__OPTIM_LOOP(T, S, sgd_mom_wd, TN__SGD, TN__OPTIM_MOM | TN__OPTIM_WD, s0 + i, &d, &d)
/* The rules' fused multiply-adds (api.h): fma a libm call in the plain copies, one
   instruction in these */
#ifdef TN__FMA_FN
TN__OPTIM_LOOP_ATTR(T, S, adam_fma, TN__ADAM, 0, s0 + i, s1 + i, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, adam_wd_fma, TN__ADAM, TN__OPTIM_WD, s0 + i, s1 + i, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, adam_wd_dec_fma, TN__ADAM, TN__OPTIM_WD | TN__OPTIM_DEC, s0 + i, s1 + i, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, adam_dec_fma, TN__ADAM, TN__OPTIM_DEC, s0 + i, s1 + i, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, sgd_fma, TN__SGD, 0, &d, &d, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, sgd_wd_fma, TN__SGD, TN__OPTIM_WD, &d, &d, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, sgd_mom_fma, TN__SGD, TN__OPTIM_MOM, s0 + i, &d, &d, TN__FMA_FN)
TN__OPTIM_LOOP_ATTR(T, S, sgd_mom_wd_fma, TN__SGD, TN__OPTIM_MOM | TN__OPTIM_WD, s0 + i, &d, &d, TN__FMA_FN)
#endif
/* the general loop: any rule and flags */
TN__OPTIM_ANY(T, S, any, TN__PLAIN_FN)
#ifdef TN__FMA_FN
TN__OPTIM_ANY(T, S, any_fma, TN__FMA_FN)
#endif
/* The loop for k's rule and flags: a specialised copy when there is one. */
static void (*tn__optim_part_for_##S(const tn__optk *k, const T *s0, const T *s1))(void *, int64_t, int64_t) {
    const int f = k->flags, WD = TN__OPTIM_WD, DEC = TN__OPTIM_DEC, MOM = TN__OPTIM_MOM;
    if ((k->kind == TN__ADAM || k->kind == TN__ADAMW) && s0 && s1) {
        if (f == 0) return TN__FMA_PART(S, adam);
        if (f == WD) return TN__FMA_PART(S, adam_wd);
        if (f == (WD | DEC)) return TN__FMA_PART(S, adam_wd_dec);
        if (f == DEC) return TN__FMA_PART(S, adam_dec);
    } else if (k->kind == TN__SGD) {
        if (f == 0) return TN__FMA_PART(S, sgd);
        if (f == WD) return TN__FMA_PART(S, sgd_wd);
        if (s0 && f == MOM) return TN__FMA_PART(S, sgd_mom);
        if (s0 && f == (MOM | WD)) return TN__FMA_PART(S, sgd_mom_wd);
    }
    return TN__FMA_PART(S, any);
}
static void tn__optim_kernel_##S(const tn__optk *k, int64_t n, T *p, const T *g, T *s0, T *s1, T *s2) {
    T c[12];
    for (int j = 0; j < 12; j++) c[j] = (T)k->c[j];
    tn__optim_args_##S a = {k, c, p, g, s0, s1, s2};
    /* elementwise: the same result for any thread count */
    tn__parallel_range(tn__par_threads(tn__mul_sat(n, 8), n), n, tn__optim_part_for_##S(k, s0, s1), &a);
}
/* The multi-tensor step: every parameter of this dtype one segment [start, start + n) of one
   range the threads share (PyTorch's foreach / fused optimizers): one job for the whole model
   instead of one per parameter, whose small ones (biases, norms) each ran alone. Each element
   gets its parameter's loop: the same bits as one parameter at a time. */
typedef struct { tn__optk k; T c[12]; int64_t start, n; tn__optim_args_##S a; void (*part)(void *, int64_t, int64_t); } tn__optim_seg_##S;
typedef struct { tn__optim_seg_##S *seg; int nseg; } tn__optim_multi_##S;
static void tn__optim_multi_part_##S(void *args, int64_t lo, int64_t hi) {
    const tn__optim_multi_##S *m = (const tn__optim_multi_##S *)args;
    int a = 0, b = m->nseg - 1;
    while (a < b) { /* the first segment that ends after lo */
        const int mid = (a + b) / 2;
        if (m->seg[mid].start + m->seg[mid].n <= lo) a = mid + 1; else b = mid;
    }
    for (int i = a; i < m->nseg && m->seg[i].start < hi; i++) {
        tn__optim_seg_##S *sg = &m->seg[i];
        const int64_t l = lo > sg->start ? lo - sg->start : 0, h = hi < sg->start + sg->n ? hi - sg->start : sg->n;
        if (l < h) sg->part(&sg->a, l, h);
    }
}
/* segment i of seg: k's constants, the buffers; start and n set by the caller */
static void tn__optim_seg_set_##S(tn__optim_seg_##S *sg, const tn__optk *k, T *p, const T *g, T *s0, T *s1, T *s2) {
    sg->k = *k;
    for (int j = 0; j < 12; j++) sg->c[j] = (T)k->c[j];
    sg->part = tn__optim_part_for_##S(k, s0, s1);
    sg->a.k = &sg->k; sg->a.c = sg->c; sg->a.p = p; sg->a.g = g; sg->a.s0 = s0; sg->a.s1 = s1; sg->a.s2 = s2;
}
static void tn__optim_multi_run_##S(tn__optim_seg_##S *seg, int nseg) {
    if (nseg <= 0) return;
    const int64_t total = seg[nseg - 1].start + seg[nseg - 1].n;
    tn__optim_multi_##S m = {seg, nseg};
    tn__parallel_range(tn__par_threads(tn__mul_sat(total, 8), total), total, tn__optim_multi_part_##S, &m);
}
/* @end TN__OPTIM_KERNEL */

TN__OPTIM_KERNEL(float, f32)
TN__OPTIM_KERNEL(double, f64)
TN__NO_CONTRACT_END
/* The CPU backend's optim entry. */
static int tn__cpu_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    int64_t n = tn_numel(p);
    if (p->dtype == TN_F32)
        tn__optim_kernel_f32(k, n, (float *)tn_data_ptr(p), (const float *)tn_data_ptr(g), (float *)tn_data_ptr(s[0]),
                             (float *)tn_data_ptr(s[1]), (float *)tn_data_ptr(s[2]));
    else
        tn__optim_kernel_f64(k, n, (double *)tn_data_ptr(p), (const double *)tn_data_ptr(g), (double *)tn_data_ptr(s[0]),
                             (double *)tn_data_ptr(s[1]), (double *)tn_data_ptr(s[2]));
    return 0;
}

/* step += 1 in the float32 state tensor, as PyTorch's step_t += 1; returns the new value */
static double tn__optim_bump_step(tn_tensor *step) {
    float *s = (float *)step->storage->data + step->offset;
    *s = *s + 1.0f;
    return (double)*s;
}
/* The scalars and flags of param i's update (and its step counters), from group g. */
static void tn__optim_coefs(tn_optim *o, int i, const tn__pgroup *g, tn__optk *k) {
    tn_tensor **st = o->state + i * TN__OPT_NSLOT;
    double lr = tn__pg_get(g, "lr"), wd = tn__pg_get(g, "weight_decay"), *c = k->c;
    double b1 = tn__pg_get(g, "betas[0]"), b2 = tn__pg_get(g, "betas[1]"), eps = tn__pg_get(g, "eps");
    int f = (tn__pg_get(g, "maximize") != 0 ? TN_OPTF_MAXIMIZE : 0) | (wd != 0 ? TN_OPTF_WEIGHT_DECAY : 0);
    double step = o->kind == TN__SGD ? 0 : tn__optim_bump_step(st[0]);
    memset(c, 0, sizeof k->c);
    k->kind = o->kind;
    switch (o->kind) {
    case TN__SGD: {
        double m = tn__pg_get(g, "momentum");
        c[0] = lr; c[1] = m; c[2] = 1 - tn__pg_get(g, "dampening"); c[3] = wd;
        f |= (m != 0 ? TN_OPTF_MOMENTUM : 0) | (tn__pg_get(g, "nesterov") != 0 ? TN_OPTF_NESTEROV : 0) | (o->fresh[i] ? TN_OPTF_FIRST : 0);
        o->fresh[i] = 0;
        break;
    }
    case TN__ADAM: case TN__ADAMW: {
        double bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
        c[0] = wd; c[1] = 1 - lr * wd; c[2] = 1 - b1; c[3] = b2; c[4] = 1 - b2; c[5] = sqrt(bc2); c[6] = eps; c[7] = -(lr / bc1);
        f |= (tn__pg_get(g, "amsgrad") != 0 ? TN_OPTF_AMSGRAD : 0) | (o->kind == TN__ADAMW ? TN_OPTF_DECOUPLED : 0);
        break;
    }
    case TN__RMSPROP: {
        double alpha = tn__pg_get(g, "alpha"), m = tn__pg_get(g, "momentum");
        c[0] = wd; c[1] = alpha; c[2] = 1 - alpha; c[3] = eps; c[4] = m; c[5] = lr;
        f |= (tn__pg_get(g, "centered") != 0 ? TN_OPTF_CENTERED : 0) | (m > 0 ? TN_OPTF_MOMENTUM : 0);
        break;
    }
    case TN__ADAGRAD:
        c[0] = wd; c[1] = eps; c[2] = lr / (1 + (step - 1) * tn__pg_get(g, "lr_decay"));
        break;
    case TN__ADADELTA: {
        double rho = tn__pg_get(g, "rho");
        c[0] = wd; c[1] = rho; c[2] = 1 - rho; c[3] = eps; c[4] = lr;
        break;
    }
    case TN__ADAMAX:
        c[0] = wd; c[1] = 1 - b1; c[2] = b2; c[3] = eps; c[4] = lr / (1 - pow(b1, step));
        break;
    case TN__NADAM: {
        double md = tn__pg_get(g, "momentum_decay"), bc2 = 1 - pow(b2, step);
        double mu = b1 * (1. - 0.5 * pow(0.96, step * md)), mu_next = b1 * (1. - 0.5 * pow(0.96, (step + 1) * md));
        float *mp = (float *)st[1]->storage->data + st[1]->offset;
        *mp = *mp * (float)mu;        /* mu_product *= mu, in float32 as PyTorch's state tensor */
        double mu_product = *mp, mu_product_next = mu_product * mu_next;
        c[0] = wd; c[1] = 1 - lr * wd; c[2] = 1 - b1; c[3] = b2; c[4] = 1 - b2; c[5] = bc2; c[6] = eps;
        c[7] = -lr * (1. - mu) / (1. - mu_product); c[8] = (-lr * mu_next) / (1. - mu_product_next);
        if (wd != 0 && tn__pg_get(g, "decoupled_weight_decay") != 0) f |= TN_OPTF_DECOUPLED;
        break;
    }
    case TN__RADAM: {
        double bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
        double rho_inf = 2 / (1 - b2) - 1, rho_t = rho_inf - 2 * step * pow(b2, step) / bc2;
        c[0] = wd; c[1] = 1 - lr * wd; c[2] = 1 - b1; c[3] = b2; c[4] = 1 - b2; c[5] = bc1; c[6] = lr; c[7] = sqrt(bc2); c[8] = eps;
        if (rho_t > 5.) {
            c[9] = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
            f |= TN_OPTF_RECTIFY;
        }
        if (wd != 0 && tn__pg_get(g, "decoupled_weight_decay") != 0) f |= TN_OPTF_DECOUPLED;
        break;
    }
    default: break;
    }
    k->flags = f;
}
/* Adam and AdamW with capturable=True: the step count lives on the parameter's device. */
static bool tn__optim_capturable(const tn_optim *o, const tn__pgroup *g) {
    return (o->kind == TN__ADAM || o->kind == TN__ADAMW) && tn__pg_get(g, "capturable") != 0;
}
/* The state buffers the kernel takes, in its order: s0, s1, s2. */
static void tn__optim_buffers(const tn_optim *o, int i, tn_tensor **s) {
    tn_tensor *const *st = o->state + i * TN__OPT_NSLOT;
    s[0] = s[1] = s[2] = NULL;
    switch (o->kind) {
    case TN__SGD: s[0] = st[0]; break;
    case TN__ADAM: case TN__ADAMW: case TN__RMSPROP: s[0] = st[1]; s[1] = st[2]; s[2] = st[3]; break; /* RMSprop: square_avg, momentum_buffer, grad_avg */
    case TN__ADAGRAD: s[0] = st[1]; break;
    case TN__ADADELTA: case TN__ADAMAX: case TN__RADAM: s[0] = st[1]; s[1] = st[2]; break;
    case TN__NADAM: s[0] = st[2]; s[1] = st[3]; break;
    default: break;
    }
}
/* Param i's update with capturable=True, as PyTorch's capturable branch of _single_tensor_adam
   (2.x: exp_avg by lerp_): step_t += 1 and the bias corrections are device ops on the 0-d
   step tensor, so that a CUDA graph replay of the step advances them; the kernel path takes
   them as host scalars, which a replay would repeat. A complex parameter updates as its real
   view, with its grad's and state's. */
static int tn__optim_adam_capturable(tn_optim *o, int i, const tn__pgroup *g) {
    tn_tensor *step = o->state[i * TN__OPT_NSLOT];
    const double lr = tn__pg_get(g, "lr"), wd = tn__pg_get(g, "weight_decay"), eps = tn__pg_get(g, "eps");
    const double b1 = tn__pg_get(g, "betas[0]"), b2 = tn__pg_get(g, "betas[1]");
    const bool amsgrad = tn__pg_get(g, "amsgrad") != 0;
    tn_tensor *t[5] = {o->params[i], o->params[i]->grad}, *view[5];
    tn__optim_buffers(o, i, t + 2);   /* exp_avg, exp_avg_sq, max_exp_avg_sq */
    if (tn__optim_as_real("tn_optim_step", t, view)) return -1;
    tn_tensor *p = t[0], *gr = t[1], *m = t[2], *v = t[3], *vmax = t[4];
    tn_scope_begin();
    bool ok = tn_add_scalar_(step, 1) != NULL;
    if (ok && tn__pg_get(g, "maximize") != 0) ok = (gr = tn_neg(gr)) != NULL;
    if (ok && wd != 0) ok = o->kind == TN__ADAMW ? tn_mul_scalar_(p, 1 - lr * wd) != NULL : (gr = tn_add_alpha(gr, p, wd)) != NULL;
    ok = ok && tn_lerp_(m, gr, 1 - b1) && tn_addcmul_(tn_mul_scalar_(v, b2), gr, gr, .value = 1 - b2);
    if (ok) {
        tn_tensor *bc1 = tn_rsub_scalar(tn_rpow_scalar(b1, step), 1), *bc2 = tn_rsub_scalar(tn_rpow_scalar(b2, step), 1);
        tn_tensor *step_neg = tn_neg(tn_mul_scalar(tn_reciprocal(bc1), lr));   /* -(lr / bc1) */
        tn_tensor *den = amsgrad ? (tn_copy_(vmax, tn_maximum(vmax, v)) ? NULL : vmax) : v;
        /* denom = sqrt(v) / (sqrt(bc2) * -step) + eps / -step; p += m / denom */
        den = tn_add_(tn_div(tn_sqrt(den), tn_mul(tn_sqrt(bc2), step_neg)), tn_mul_scalar(tn_reciprocal(step_neg), eps));
        ok = den && tn_addcdiv_(p, m, den);
    }
    tn_scope_end();
    for (int q = 0; q < 5; q++) tn_release(view[q]);
    return ok ? 0 : -1;
}
/* Checks every parameter that has a grad and makes missing state, before anything is
   updated: a refused step changes nothing. */
static int tn__optim_prepare(const char *fn, tn_optim *o) {
    for (int gi = 0; gi < o->ng; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        for (int i = g->first; i < g->first + g->n; i++) {
            tn_tensor *p = o->params[i], *gr = p->grad;
            if (!gr) continue;
            if (gr->device != p->device)
                return TN__FAIL_INT("%s: parameter %d is on %s but its grad is on %s", fn, i, tn_device_name(p->device), tn_device_name(gr->device));
            if (!tn_dtype_is_floating(p->dtype) && !tn_is_complex(p))
                return TN__FAIL_INT("%s: parameter %d has dtype %s; the optimizers update floating tensors (and complex ones)", fn, i, tn_dtype_name(p->dtype));
            if (gr->dtype != p->dtype || gr->ndim != p->ndim || memcmp(gr->shape, p->shape, (size_t)p->ndim * sizeof(int64_t)))
                return TN__FAIL_INT("%s: parameter %d has shape %s and dtype %s but its grad has shape %s and dtype %s", fn, i,
                                    TN__SHAPE(p), tn_dtype_name(p->dtype), TN__SHAPE(gr), tn_dtype_name(gr->dtype));
            if (tn__optim_init_state(fn, o, i, g)) return -1;
            tn_tensor **step = o->kind == TN__SGD || o->kind == TN__LBFGS ? NULL : &o->state[i * TN__OPT_NSLOT];
            const tn_device want = tn__optim_capturable(o, g) ? p->device : TN_CPU;
            if (want == TN_CPU && tn__optim_capturable(o, g))
                return TN__FAIL_INT("%s: If capturable=True, params and state_steps must be on supported devices: ['cuda'] (parameter %d is on cpu)", fn, i);
            if (step && *step && (*step)->device != want) {   /* PyTorch's placement of state['step'] (a loaded state dict's, a toggled capturable) */
                tn_tensor *moved = tn__copy_as(*step, TN_F32, want);
                if (!moved) return -1;
                tn_release(*step);
                *step = moved;
            }
            tn_tensor *s[3];
            tn__optim_buffers(o, i, s);
            for (int k = 0; k < 3; k++)
                if (s[k] && (s[k]->dtype != p->dtype || s[k]->device != p->device || tn_numel(s[k]) != tn_numel(p)))
                    return TN__FAIL_INT("%s: parameter %d is %s %s but its optimizer state is %s %s: it changed after the first step "
                                        "(tn_module_to_dtype / tn_module_to); create the optimizer after moving the model",
                                        fn, i, tn_dtype_name(p->dtype), TN__SHAPE(p), tn_dtype_name(s[k]->dtype), TN__SHAPE(s[k]));
        }
    }
    return 0;
}
/* Whether parameter i (with a grad) goes into the multi-tensor step: on the CPU, float32 or
   float64, p, grad and state contiguous, and no other parameter on its storage (shared[i]:
   those keep their one-at-a-time order). */
TN__TESTABLE int tn__optim_multi = 1;   /* tests: 0 updates one parameter at a time */
static bool tn__optim_fusable(const tn_optim *o, int i, tn_tensor *const *s, const bool *shared) {
    tn_tensor *p = o->params[i];
    if (!tn__optim_multi || shared[i] || p->device != TN_CPU || (p->dtype != TN_F32 && p->dtype != TN_F64) || !tn_is_contiguous(p) ||
        !tn_is_contiguous(p->grad))
        return false;
    for (int k = 0; k < 3; k++) if (s[k] && !tn_is_contiguous(s[k])) return false;
    return true;
}
typedef struct { const void *st; int i; } tn__optim_stref;
static int tn__optim_stref_cmp(const void *a, const void *b) {
    const uintptr_t x = (uintptr_t)((const tn__optim_stref *)a)->st, y = (uintptr_t)((const tn__optim_stref *)b)->st;
    return (x > y) - (x < y);
}
/* shared[i]: another parameter has param i's storage (sorted by storage: n log n) */
static int tn__optim_shared(const tn_optim *o, bool *shared) {
    tn__optim_stref *r = (tn__optim_stref *)TN_MALLOC((size_t)(o->np ? o->np : 1) * sizeof *r);
    if (!r) return -1;
    for (int i = 0; i < o->np; i++) { r[i].st = o->params[i]->storage; r[i].i = i; shared[i] = false; }
    qsort(r, (size_t)o->np, sizeof *r, tn__optim_stref_cmp);
    for (int i = 1; i < o->np; i++)
        if (r[i].st == r[i - 1].st) shared[r[i].i] = shared[r[i - 1].i] = true;
    TN_FREE(r);
    return 0;
}
/* Whether parameter i goes into its device's multi-tensor entry (tn_backend.optim_multi):
   a float32/float64 parameter off the CPU, p, grad and state contiguous, its storage its own. */
static bool tn__optim_device_multi(const tn_optim *o, int i, tn_tensor *const *s, const bool *shared) {
    tn_tensor *p = o->params[i];
    if (!tn__optim_multi || shared[i] || p->device == TN_CPU || !tn__backend(p->device)->optim_multi || (p->dtype != TN_F32 && p->dtype != TN_F64) ||
        !tn_is_contiguous(p) || !tn_is_contiguous(p->grad) || p->grad->dtype != p->dtype || p->grad->device != p->device)
        return false;
    for (int k = 0; k < 3; k++) if (s[k] && !tn_is_contiguous(s[k])) return false;
    return true;
}
/* The device parameters gathered by tn__optim_step: one optim_multi call per (device,
   dtype), each group gathered in order into the scratch arrays (k, p, g, s past n). */
typedef struct { tn__optk *k; tn_tensor **p, **g, **s; int n; } tn__optim_dev;
static int tn__optim_dev_run(tn__optim_dev *d) {
    int rc = 0;
    tn__optk *gk = d->k + d->n;
    tn_tensor **gp = d->p + d->n, **gg = d->g + d->n, **gs = d->s + 3 * d->n;
    for (int i = 0; i < d->n; i++) {
        if (!d->p[i]) continue;   /* in an earlier group */
        const tn_device dev = d->p[i]->device;
        const tn_dtype dt = d->p[i]->dtype;
        int m = 0;
        for (int j = i; j < d->n; j++)
            if (d->p[j] && d->p[j]->device == dev && d->p[j]->dtype == dt) {
                gk[m] = d->k[j]; gp[m] = d->p[j]; gg[m] = d->g[j];
                for (int q = 0; q < 3; q++) gs[3 * m + q] = d->s[3 * j + q];
                d->p[j] = NULL;
                m++;
            }
        if (rc == 0 && tn__backend(dev)->optim_multi(gk, m, gp, gg, gs)) rc = -1;
    }
    return rc;
}
static int tn__optim_step(const char *fn, tn_optim *o) {
    bool all_capturable = true;   /* the others' scalars (bias corrections, step counts) are host values: a replay would repeat this step's */
    for (int gi = 0; gi < o->ng; gi++) all_capturable = all_capturable && tn__optim_capturable(o, &o->groups[gi]);
    if (o->kind != TN__SGD && !all_capturable && tn_cuda_graph_capturing())
        return tn__cuda_graph_refuse(fn, o->kind == TN__ADAM || o->kind == TN__ADAMW ? "Adam's step() with capturable=False (create it with capturable=True)"
                                                                                    : "an optimizer step other than SGD's and Adam's (capturable=False)");
    if (tn__optim_prepare(fn, o)) return -1;
    int rc = 0, n32 = 0, n64 = 0;
    /* the multi-tensor segments, by dtype (a parameter's coefficients are computed in order,
       as before: the step counters) */
    tn__optim_seg_f32 *seg32 = (tn__optim_seg_f32 *)TN_MALLOC((size_t)(o->np ? o->np : 1) * sizeof *seg32);
    tn__optim_seg_f64 *seg64 = (tn__optim_seg_f64 *)TN_MALLOC((size_t)(o->np ? o->np : 1) * sizeof *seg64);
    bool *shared = (bool *)TN_MALLOC((size_t)(o->np ? o->np : 1) * sizeof *shared);
    const size_t np1 = (size_t)(o->np ? o->np : 1);
    tn__optim_dev dev = {(tn__optk *)TN_MALLOC(2 * np1 * sizeof(tn__optk)), (tn_tensor **)TN_MALLOC(2 * np1 * sizeof(tn_tensor *)),
                         (tn_tensor **)TN_MALLOC(2 * np1 * sizeof(tn_tensor *)), (tn_tensor **)TN_MALLOC(6 * np1 * sizeof(tn_tensor *)), 0};   /* twice: a group's scratch */
    if (!seg32 || !seg64 || !shared || !dev.k || !dev.p || !dev.g || !dev.s || tn__optim_shared(o, shared)) {
        TN_FREE(seg32); TN_FREE(seg64); TN_FREE(shared);
        TN_FREE(dev.k); TN_FREE(dev.p); TN_FREE(dev.g); TN_FREE(dev.s);
        return TN__FAIL_INT("%s: out of memory", fn);
    }
    tn_no_grad_begin();
    for (int gi = 0; gi < o->ng && rc == 0; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        for (int i = g->first; i < g->first + g->n && rc == 0; i++) {
            tn_tensor *p = o->params[i], *gr = p->grad, *s[3], *param = p, *views[5] = {NULL, NULL, NULL, NULL, NULL};
            if (!gr) continue;
            if (tn__optim_capturable(o, g)) {
                if (tn__optim_adam_capturable(o, i, g)) rc = -1;
                continue;
            }
            tn__optk k;
            tn__optim_coefs(o, i, g, &k);
            tn__optim_buffers(o, i, s);
            {   /* a complex parameter's real views (released below; the segments keep data pointers only) */
                tn_tensor *t[5] = {p, gr, s[0], s[1], s[2]};
                if (tn__optim_as_real(fn, t, views)) { rc = -1; break; }
                p = t[0]; gr = t[1]; s[0] = t[2]; s[1] = t[3]; s[2] = t[4];
            }
            if (tn__optim_fusable(o, i, s, shared)) {
#define TN__OPTIM_SEG(S, T, segs, cnt) do { \
                    segs[cnt].start = cnt ? segs[cnt - 1].start + segs[cnt - 1].n : 0; \
                    segs[cnt].n = tn_numel(p); \
                    tn__optim_seg_set_##S(&segs[cnt], &k, (T *)tn_data_ptr(p), (const T *)tn_data_ptr(gr), (T *)tn_data_ptr(s[0]), \
                                          (T *)tn_data_ptr(s[1]), (T *)tn_data_ptr(s[2])); \
                    cnt++; \
                } while (0)
                if (p->dtype == TN_F32) TN__OPTIM_SEG(f32, float, seg32, n32);
                else TN__OPTIM_SEG(f64, double, seg64, n64);
#undef TN__OPTIM_SEG
                tn__bump_version(param);
                for (int q = 0; q < 5; q++) tn_release(views[q]);
                continue;
            }
            if (tn__optim_device_multi(o, i, s, shared)) {   /* after the loop, with the others of its device and dtype */
                dev.k[dev.n] = k; dev.p[dev.n] = p; dev.g[dev.n] = gr;
                for (int q = 0; q < 3; q++) dev.s[3 * dev.n + q] = s[q];
                dev.n++;
                tn__bump_version(p);   /* (never a complex parameter's view: complex stays on the CPU) */
                continue;
            }
            /* strided parameters or grads go through contiguous copies (the only allocation) */
            tn_tensor *pc = tn_is_contiguous(p) ? NULL : tn__copy_as(p, p->dtype, p->device);
            tn_tensor *gc = tn_is_contiguous(gr) ? NULL : tn__copy_as(gr, gr->dtype, p->device);
            if ((!pc && !tn_is_contiguous(p)) || (!gc && !tn_is_contiguous(gr))) {
                rc = TN__FAIL_INT("%s: out of memory copying a non-contiguous parameter", fn);
            } else {
                if (tn__backend(p->device)->optim(&k, pc ? pc : p, gc ? gc : gr, s)) rc = -1;
                if (pc && tn__copy(p, pc)) rc = -1;

                tn__bump_version(param);   /* as an in-place op on the parameter */
            }
            tn_release(pc);
            tn_release(gc);
            for (int q = 0; q < 5; q++) tn_release(views[q]);
        }
    }
    /* after a failure too: the parameters before it are updated, as one at a time */
    tn__optim_multi_run_f32(seg32, n32);
    tn__optim_multi_run_f64(seg64, n64);
    if (tn__optim_dev_run(&dev)) rc = -1;
    TN_FREE(seg32);
    TN_FREE(seg64);
    TN_FREE(shared);
    TN_FREE(dev.k); TN_FREE(dev.p); TN_FREE(dev.g); TN_FREE(dev.s);
    tn_no_grad_end();
    return rc;
}
TNDEF int tn_optim_step(tn_optim *o) {
    if (!o) return -1;
    if (o->kind == TN__LBFGS) return TN__FAIL_INT("tn_optim_step: LBFGS needs a closure: use tn_optim_step_closure");
    return tn__optim_step("tn_optim_step", o);
}

/* A NaN from the closure is its error: keep its message, say who saw it. */
static double tn__closure_failed(const char *fn) {
    char why[900];
    size_t l = strlen(tn_last_error());
    if (l >= sizeof why) l = sizeof why - 1;
    memcpy(why, tn_last_error(), l);
    why[l] = 0;
    tn__error("%s: the closure returned NaN%s%s%s", fn, why[0] ? " (" : "", why, why[0] ? ")" : "");
    return NAN;
}
static double tn__closure_call(tn_closure closure, void *user) {
    tn_enable_grad_begin();
    double f = closure(user);
    tn_enable_grad_end();
    return f;
}
