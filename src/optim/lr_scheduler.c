/* ---- LR schedulers: torch/optim/lr_scheduler.py ---- */
enum { TN__STEPLR, TN__MULTISTEPLR, TN__EXPONENTIALLR, TN__COSINELR, TN__WARMRESTARTS, TN__LINEARLR, TN__CONSTANTLR,
       TN__POLYNOMIALLR, TN__ONECYCLELR, TN__PLATEAU, TN__LAMBDALR, TN__SEQUENTIALLR };
static const char *const tn__sched_names[] = {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR", "ReduceLROnPlateau", "LambdaLR", "SequentialLR"};
static const char *const tn__sched_valid[] = {"step_size, gamma, last_epoch", "milestones, gamma, last_epoch", "gamma, last_epoch",
    "T_max, eta_min, last_epoch", "T_0, T_mult, eta_min, last_epoch", "start_factor, end_factor, total_iters, last_epoch",
    "factor, total_iters, last_epoch", "total_iters, power, last_epoch",
    ("max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy, cycle_momentum, base_momentum, max_momentum, "
     "div_factor, final_div_factor, three_phase, last_epoch"),
    "mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps"};
#define TN__PI 3.14159265358979323846
#define TN__MAX_MILESTONES TN_LIST_MAX

typedef struct tn__phase { double end_step; const char *start_lr, *end_lr, *start_m, *end_m; } tn__phase;
struct tn_lr_scheduler {
    int kind;
    tn_optim *o;
    int ng;                                   /* groups when it was made */
    int64_t last_epoch, step_count;
    double *base_lrs, *last_lr, *vals;        /* ng each (one allocation) */
    double gamma, eta_min, factor, end_factor, power, T_max, T_cur;   /* factor: LinearLR's start_factor too */
    int64_t step_size, total_iters, T_0, T_mult, T_i;
    int nmil;
    int64_t milestones[TN__MAX_MILESTONES];   /* MultiStepLR (sorted), SequentialLR (as given) */
    int64_t total_steps;                      /* OneCycleLR */
    int nphases;
    tn__phase phase[3];
    bool linear, cycle_momentum, use_beta1;
    bool mode_max, thr_abs, has_default_min_lr; /* ReduceLROnPlateau */
    double threshold, best, eps, default_min_lr;
    int64_t patience, cooldown, cooldown_counter, num_bad_epochs;
    double *min_lrs;
    double (*lambda)(int64_t epoch, int group, void *user); /* LambdaLR */
    void *user;
    int nchild;                               /* SequentialLR */
    tn_lr_scheduler **child;
};

static int64_t tn__bisect_right(const int64_t *a, int n, int64_t x) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (x < a[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}
static double tn__py_fmod(double a, double b) { /* Python's %: the sign of b */
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static int64_t tn__py_floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static int tn__sched_ngroups(const tn_lr_scheduler *s) { return TN__MIN(s->ng, s->o->ng); }
static double tn__sched_anneal(const tn_lr_scheduler *s, double start, double end, double pct) {
    if (s->linear) return (end - start) * pct + start;
    double cos_out = cos(TN__PI * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
}

/* get_lr(): the chainable form, from the groups' current lr. */
static int tn__sched_get_lr(tn_lr_scheduler *s, double *v) {
    const char *fn = "tn_lr_scheduler_step";
    const int64_t e = s->last_epoch;
    for (int gi = 0; gi < tn__sched_ngroups(s); gi++) {
        tn__pgroup *g = &s->o->groups[gi];
        double lr = tn__pg_get(g, "lr"), base = s->base_lrs[gi];
        switch (s->kind) {
        case TN__STEPLR: v[gi] = (e == 0 || e % s->step_size != 0) ? lr : lr * s->gamma; break;
        case TN__MULTISTEPLR: {
            int count = 0;
            for (int i = 0; i < s->nmil; i++) count += s->milestones[i] == e;
            v[gi] = count ? lr * pow(s->gamma, count) : lr;
            break;
        }
        case TN__EXPONENTIALLR: v[gi] = e == 0 ? lr : lr * s->gamma; break;
        case TN__COSINELR: {
            double T = s->T_max, eta = s->eta_min;
            if (e == 0) v[gi] = lr;
            else if (s->step_count == 1 && e > 0) v[gi] = eta + (base - eta) * (1 + cos((double)e * TN__PI / T)) / 2;
            else if (tn__py_fmod((double)(e - 1) - T, 2 * T) == 0) v[gi] = lr + (base - eta) * (1 - cos(TN__PI / T)) / 2;
            else v[gi] = (1 + cos(TN__PI * (double)e / T)) / (1 + cos(TN__PI * (double)(e - 1) / T)) * (lr - eta) + eta;
            break;
        }
        case TN__WARMRESTARTS:
            v[gi] = s->eta_min + (base - s->eta_min) * (1 + cos(TN__PI * s->T_cur / (double)s->T_i)) / 2;
            break;
        case TN__LINEARLR: {
            double sf = s->factor, ef = s->end_factor;
            if (e == 0) v[gi] = lr * sf;
            else if (e > s->total_iters) v[gi] = lr;
            else v[gi] = lr * (1.0 + (ef - sf) / ((double)s->total_iters * sf + (double)(e - 1) * (ef - sf)));
            break;
        }
        case TN__CONSTANTLR:
            v[gi] = e == 0 ? lr * s->factor : e != s->total_iters ? lr : lr * (1.0 / s->factor);
            break;
        case TN__POLYNOMIALLR:
            if (e == 0 || e > s->total_iters) v[gi] = lr;
            else v[gi] = lr * pow((1.0 - (double)e / (double)s->total_iters) / (1.0 - (double)(e - 1) / (double)s->total_iters), s->power);
            break;
        case TN__LAMBDALR: v[gi] = base * s->lambda(e, gi, s->user); break;
        case TN__ONECYCLELR: {
            if (e > s->total_steps)
                return TN__FAIL_INT("%s: Tried to step %lld times. The specified number of total steps is %lld", fn, (long long)e, (long long)s->total_steps);
            double start_step = 0, out = 0, m = 0;
            for (int i = 0; i < s->nphases; i++) {
                const tn__phase *ph = &s->phase[i];
                if ((double)e <= ph->end_step || i == s->nphases - 1) {
                    const char *keys[4] = {ph->start_lr, ph->end_lr, ph->start_m, ph->end_m};
                    for (int j = 0; j < (s->cycle_momentum ? 4 : 2); j++)
                        if (tn__pg_find(g, keys[j]) < 0) return TN__FAIL_INT("%s: param group %d has no '%s' (OneCycleLR sets it when last_epoch is -1)", fn, gi, keys[j]);
                    if (ph->end_step == start_step)
                        return TN__FAIL_INT("%s: OneCycleLR phase %d has zero length (total_steps %lld): float division by zero", fn, i, (long long)s->total_steps);
                    double pct = ((double)e - start_step) / (ph->end_step - start_step);
                    out = tn__sched_anneal(s, tn__pg_get(g, ph->start_lr), tn__pg_get(g, ph->end_lr), pct);
                    if (s->cycle_momentum) m = tn__sched_anneal(s, tn__pg_get(g, ph->start_m), tn__pg_get(g, ph->end_m), pct);
                    break;
                }
                start_step = ph->end_step;
            }
            v[gi] = out;
            if (s->cycle_momentum && tn__pg_set(fn, g, s->use_beta1 ? "betas[0]" : "momentum", m)) return -1;
            break;
        }
        default: v[gi] = lr; break;
        }
    }
    return 0;
}
/* _get_closed_form_lr(), used when stepped to a given epoch; false if the kind has none. */
static bool tn__sched_closed_form(const tn_lr_scheduler *s, double *v) {
    const int64_t e = s->last_epoch;
    for (int gi = 0; gi < tn__sched_ngroups(s); gi++) {
        double base = s->base_lrs[gi], ti = (double)s->total_iters;
        switch (s->kind) {
        case TN__STEPLR: v[gi] = base * pow(s->gamma, (double)tn__py_floordiv(e, s->step_size)); break;
        case TN__MULTISTEPLR: v[gi] = base * pow(s->gamma, (double)tn__bisect_right(s->milestones, s->nmil, e)); break;
        case TN__EXPONENTIALLR: v[gi] = base * pow(s->gamma, (double)e); break;
        case TN__COSINELR: v[gi] = s->eta_min + (base - s->eta_min) * (1 + cos(TN__PI * (double)e / s->T_max)) / 2; break;
        case TN__LINEARLR:
            v[gi] = base * (s->factor + (s->end_factor - s->factor) * (double)TN__MIN(s->total_iters, e) / ti);
            break;
        case TN__CONSTANTLR: v[gi] = base * (s->factor + (double)(e >= s->total_iters) * (1 - s->factor)); break;
        case TN__POLYNOMIALLR: v[gi] = base * pow(1.0 - (double)TN__MIN(s->total_iters, e) / ti, s->power); break;
        default: return false;
        }
    }
    return true;
}
/* scheduler.step() (has_epoch false) or the deprecated scheduler.step(epoch). */
static int tn__sched_step(tn_lr_scheduler *s, bool has_epoch, int64_t epoch) {
    const char *fn = "tn_lr_scheduler_step";
    int ng = tn__sched_ngroups(s);
    if (s->kind == TN__PLATEAU)
        return TN__FAIL_INT("%s: ReduceLROnPlateau steps on a metric: use tn_lr_scheduler_step_metric", fn);
    if (s->kind == TN__SEQUENTIALLR) {
        s->last_epoch++;
        int idx = (int)tn__bisect_right(s->milestones, s->nchild - 1, s->last_epoch);
        tn_lr_scheduler *c = s->child[idx];
        if (tn__sched_step(c, idx > 0 && s->milestones[idx - 1] == s->last_epoch, 0)) return -1;
        memcpy(s->last_lr, c->last_lr, (size_t)TN__MIN(s->ng, c->ng) * sizeof(double));
        return 0;
    }
    if (s->kind == TN__WARMRESTARTS) {
        if (!has_epoch && s->last_epoch < 0) { has_epoch = true; epoch = 0; }
        double ep;
        if (!has_epoch) {
            ep = (double)(s->last_epoch + 1);
            s->T_cur = s->T_cur + 1;
            /* T_i saturates past int64 (PyTorch's int grows): a period of 2^63 steps is never
               reached, and its double (in the cosine) is the same */
            if (s->T_cur >= (double)s->T_i) { s->T_cur = s->T_cur - (double)s->T_i; s->T_i = tn__mul_sat(s->T_i, s->T_mult); }
        } else {
            if (epoch < 0) return TN__FAIL_INT("%s: Expected non-negative epoch, but got %lld", fn, (long long)epoch);
            ep = (double)epoch;
            if (epoch >= s->T_0) {
                if (s->T_mult == 1) {
                    s->T_cur = (double)(epoch % s->T_0);
                } else {
                    int64_t n = (int64_t)(log(ep / (double)s->T_0 * (double)(s->T_mult - 1) + 1) / log((double)s->T_mult));
                    s->T_cur = ep - (double)s->T_0 * (pow((double)s->T_mult, (double)n) - 1) / (double)(s->T_mult - 1);
                    const double ti = (double)s->T_0 * pow((double)s->T_mult, (double)n);
                    if (!(ti < 9.2e18)) return TN__FAIL_INT("%s: epoch %lld makes the restart period T_i overflow int64", fn, (long long)epoch);
                    s->T_i = (int64_t)ti;
                }
            } else {
                s->T_i = s->T_0;
                s->T_cur = ep;
            }
        }
        s->last_epoch = (int64_t)floor(ep);
        if (tn__sched_get_lr(s, s->vals)) return -1;
    } else {
        s->step_count++;
        if (!has_epoch) {
            s->last_epoch++;
            if (tn__sched_get_lr(s, s->vals)) return -1;
        } else {
            s->last_epoch = epoch;
            if (!tn__sched_closed_form(s, s->vals) && tn__sched_get_lr(s, s->vals)) return -1;
        }
    }
    for (int gi = 0; gi < ng; gi++) tn__pg_set(fn, &s->o->groups[gi], "lr", s->vals[gi]);
    for (int gi = 0; gi < s->ng; gi++) s->last_lr[gi] = gi < ng ? s->vals[gi] : NAN;
    return 0;
}

static tn_lr_scheduler *tn__sched_alloc(const char *fn, tn_optim *o, int kind) {
    tn_lr_scheduler *s = (tn_lr_scheduler *)TN_MALLOC(sizeof *s);
    double *v = (double *)TN_MALLOC((size_t)(3 * o->ng) * sizeof *v);
    if (!s || !v) {
        TN_FREE(s);
        TN_FREE(v);
        return (tn_lr_scheduler *)tn__error("%s: out of memory", fn);
    }
    memset(s, 0, sizeof *s);
    memset(v, 0, (size_t)(3 * o->ng) * sizeof *v);
    s->kind = kind;
    s->o = o;
    s->ng = o->ng;
    s->base_lrs = v;
    s->last_lr = v + o->ng;
    s->vals = v + 2 * o->ng;
    s->last_epoch = -1;
    return s;
}
TNDEF void tn_lr_scheduler_free(tn_lr_scheduler *s) {
    if (!s) return;
    for (int i = 0; i < s->nchild; i++) tn_lr_scheduler_free(s->child[i]);
    TN_FREE(s->child);
    TN_FREE(s->base_lrs);
    TN_FREE(s->min_lrs);
    TN_FREE(s);
}
/* LRScheduler.__init__: initial_lr in every group (or required when resuming), base_lrs,
   then the initial step. */
static int tn__sched_init(const char *fn, tn_lr_scheduler *s, int64_t last_epoch) {
    tn_optim *o = s->o;
    for (int gi = 0; gi < o->ng; gi++) {
        tn__pgroup *g = &o->groups[gi];
        if (tn__pg_find(g, "initial_lr") < 0) {
            if (last_epoch != -1)
                return TN__FAIL_INT("%s: param 'initial_lr' is not specified in param_groups[%d] when resuming an optimizer", fn, gi);
            if (tn__pg_set(fn, g, "initial_lr", tn__pg_get(g, "lr"))) return -1;
        }
        if (gi < s->ng) s->base_lrs[gi] = tn__pg_get(g, "initial_lr");
    }
    s->last_epoch = last_epoch;
    s->step_count = 0;
    return tn__sched_step(s, false, 0);
}
static double tn__sched_d(double v, double def) { return v == v ? v : def; }
static int64_t tn__sched_i(int64_t v, int64_t def) { return v == TN_NONE ? def : v; }
/* _format_param: one value for every group (the list, one per group, when given). */
static int tn__sched_per_group(const char *fn, const char *key, double v, const tn_doubles *list, int ng, double def, double *out) {
    if (list->n && list->n != ng) return TN__FAIL_INT("%s: expected %d values for %s, got %d", fn, ng, key, list->n);
    for (int i = 0; i < ng; i++) out[i] = list->n ? list->v[i] : tn__sched_d(v, def);
    return 0;
}
static const char *const tn__sched_fns[] = {"tn_lr_scheduler_step_lr", "tn_lr_scheduler_multi_step_lr", "tn_lr_scheduler_exponential_lr",
    "tn_lr_scheduler_cosine_annealing_lr", "tn_lr_scheduler_cosine_annealing_warm_restarts", "tn_lr_scheduler_linear_lr",
    "tn_lr_scheduler_constant_lr", "tn_lr_scheduler_polynomial_lr", "tn_lr_scheduler_one_cycle_lr", "tn_lr_scheduler_reduce_lr_on_plateau"};
static int tn__sched_kind(const char *kind) {
    for (int i = 0; kind && i <= TN__PLATEAU; i++) if (!strcmp(kind, tn__sched_names[i])) return i;
    return TN__FAIL_INT("tn_lr_scheduler_create: unknown scheduler '%s' (known: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, "
                        "CosineAnnealingWarmRestarts, LinearLR, ConstantLR, PolynomialLR, OneCycleLR, ReduceLROnPlateau; LambdaLR and "
                        "SequentialLR have their own functions)", kind ? kind : "(null)");
}
static tn_lr_scheduler *tn__sched_create(tn_optim *o, int k, const tn_lr_scheduler_opts *op) {
    const char *fn = tn__sched_fns[k], *name = tn__sched_names[k];
    const tn_lr_scheduler_opts unset = TN_DEFAULTS(tn_lr_scheduler_opts);
    if (tn__kw_only(fn, name, tn__kw_sched, TN__KW_N(tn__kw_sched), op, &unset, tn__sched_valid[k])) return NULL;
    tn_lr_scheduler *s = tn__sched_alloc(fn, o, k);
    if (!s) return NULL;
    const int64_t last_epoch = tn__sched_i(op->last_epoch, -1);
    switch (k) {
    case TN__STEPLR:
        if (op->step_size == TN_NONE) { tn__error("%s: StepLR needs step_size", fn); goto fail; }
        s->step_size = op->step_size;
        s->gamma = tn__sched_d(op->gamma, 0.1);
        if (s->step_size < 1) { tn__error("%s: StepLR step_size must be a positive integer, got %lld", fn, (long long)s->step_size); goto fail; }
        break;
    case TN__MULTISTEPLR: {
        if (!op->milestones.n) { tn__error("%s: MultiStepLR needs milestones", fn); goto fail; }
        if (op->milestones.n < 0 || op->milestones.n > TN_LIST_MAX) { tn__error("%s: milestones.n must be 1 to %d, got %d", fn, TN_LIST_MAX, op->milestones.n); goto fail; }
        s->gamma = tn__sched_d(op->gamma, 0.1);
        for (int i = 0; i < op->milestones.n; i++) {
            int64_t v = op->milestones.v[i];
            int j = i;  /* insertion sort: the closed form bisects a sorted list, as PyTorch's */
            while (j > 0 && s->milestones[j - 1] > v) { s->milestones[j] = s->milestones[j - 1]; j--; }
            s->milestones[j] = v;
        }
        s->nmil = op->milestones.n;
        break;
    }
    case TN__EXPONENTIALLR:
        if (op->gamma != op->gamma) { tn__error("%s: ExponentialLR needs gamma", fn); goto fail; }
        s->gamma = op->gamma;
        break;
    case TN__COSINELR:
        if (op->T_max != op->T_max) { tn__error("%s: CosineAnnealingLR needs T_max", fn); goto fail; }
        s->T_max = op->T_max;
        s->eta_min = tn__sched_d(op->eta_min, 0);
        if (!(s->T_max > 0)) { tn__error("%s: CosineAnnealingLR T_max must be positive, got %g", fn, s->T_max); goto fail; }
        break;
    case TN__WARMRESTARTS:
        if (op->T_0 == TN_NONE) { tn__error("%s: CosineAnnealingWarmRestarts needs T_0", fn); goto fail; }
        if (op->T_0 <= 0) { tn__error("%s: Expected positive integer T_0, but got %lld", fn, (long long)op->T_0); goto fail; }
        s->T_0 = s->T_i = op->T_0;
        s->T_mult = tn__sched_i(op->T_mult, 1);
        if (s->T_mult < 1) { tn__error("%s: Expected integer T_mult >= 1, but got %lld", fn, (long long)s->T_mult); goto fail; }
        s->eta_min = tn__sched_d(op->eta_min, 0);
        s->T_cur = (double)last_epoch;
        break;
    case TN__LINEARLR:
        s->factor = tn__sched_d(op->start_factor, 1.0 / 3);
        s->end_factor = tn__sched_d(op->end_factor, 1.0);
        s->total_iters = tn__sched_i(op->total_iters, 5);
        if (s->factor > 1.0 || !(s->factor > 0)) { tn__error("%s: Starting multiplicative factor expected to be greater than 0 and less or equal to 1.", fn); goto fail; }
        if (s->end_factor > 1.0 || !(s->end_factor >= 0)) { tn__error("%s: Ending multiplicative factor expected to be between 0 and 1.", fn); goto fail; }
        if (s->total_iters < 1) { tn__error("%s: LinearLR total_iters must be positive, got %lld", fn, (long long)s->total_iters); goto fail; }
        break;
    case TN__CONSTANTLR:
        s->factor = tn__sched_d(op->factor, 1.0 / 3);
        s->total_iters = tn__sched_i(op->total_iters, 5);
        if (s->factor > 1.0 || !(s->factor > 0)) { tn__error("%s: Constant multiplicative factor expected to be between 0 and 1.", fn); goto fail; }
        break;
    case TN__POLYNOMIALLR:
        s->total_iters = tn__sched_i(op->total_iters, 5);
        s->power = tn__sched_d(op->power, 1.0);
        if (s->total_iters < 1) { tn__error("%s: PolynomialLR total_iters must be positive, got %lld", fn, (long long)s->total_iters); goto fail; }
        break;
    case TN__ONECYCLELR: {
        double *max_lr = s->vals, *max_m = s->last_lr, *base_m = s->base_lrs; /* scratch until the initial step */
        if (op->max_lr != op->max_lr && !op->max_lr_groups.n) { tn__error("%s: OneCycleLR needs max_lr", fn); goto fail; }
        if (tn__sched_per_group(fn, "max_lr", op->max_lr, &op->max_lr_groups, o->ng, 0, max_lr) ||
            tn__sched_per_group(fn, "max_momentum", op->max_momentum, &op->max_momentum_groups, o->ng, 0.95, max_m) ||
            tn__sched_per_group(fn, "base_momentum", op->base_momentum, &op->base_momentum_groups, o->ng, 0.85, base_m)) goto fail;
        const double pct = tn__sched_d(op->pct_start, 0.3), div = tn__sched_d(op->div_factor, 25.0), final_div = tn__sched_d(op->final_div_factor, 1e4);
        const bool three = op->three_phase == 1, cyc = op->cycle_momentum != 0;
        const int an = op->anneal_strategy == -1 ? TN_ANNEAL_COS : op->anneal_strategy;
        if (an != TN_ANNEAL_COS && an != TN_ANNEAL_LINEAR) { tn__error("%s: anneal_strategy %d is not TN_ANNEAL_COS or TN_ANNEAL_LINEAR", fn, an); goto fail; }
        s->linear = an == TN_ANNEAL_LINEAR;
        if (op->total_steps != TN_NONE) {
            if (op->total_steps <= 0) { tn__error("%s: Expected positive integer total_steps, but got %lld", fn, (long long)op->total_steps); goto fail; }
            s->total_steps = op->total_steps;
        } else if (op->epochs != TN_NONE && op->steps_per_epoch != TN_NONE) {
            if (op->epochs <= 0) { tn__error("%s: Expected positive integer epochs, but got %lld", fn, (long long)op->epochs); goto fail; }
            if (op->steps_per_epoch <= 0) { tn__error("%s: Expected positive integer steps_per_epoch, but got %lld", fn, (long long)op->steps_per_epoch); goto fail; }
            if (op->epochs > INT64_MAX / op->steps_per_epoch) { tn__error("%s: epochs * steps_per_epoch is too large", fn); goto fail; }
            s->total_steps = op->epochs * op->steps_per_epoch;
        } else {
            tn__error("%s: You must define either total_steps OR (epochs AND steps_per_epoch)", fn);
            goto fail;
        }
        double T = (double)s->total_steps;
        tn__phase p3[3] = {{pct * T - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
                           {2 * pct * T - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"},
                           {T - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
        tn__phase p2[2] = {{pct * T - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
                           {T - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
        s->nphases = three ? 3 : 2;
        memcpy(s->phase, three ? p3 : p2, (size_t)s->nphases * sizeof(tn__phase));
        if (!(pct >= 0 && pct <= 1)) { tn__error("%s: Expected float between 0 and 1 pct_start, but got %g", fn, pct); goto fail; }
        s->cycle_momentum = cyc;
        if (cyc) {
            if (!tn__optim_def(o->kind, "momentum") && !tn__optim_def(o->kind, "betas")) {
                tn__error("%s: optimizer must support momentum or beta1 with `cycle_momentum` option enabled (%s has neither)", fn, tn__optim_names[o->kind]);
                goto fail;
            }
            s->use_beta1 = tn__optim_def(o->kind, "betas") != NULL;
        }
        if (last_epoch == -1)
            for (int gi = 0; gi < o->ng; gi++) {
                tn__pgroup *g = &o->groups[gi];
                double init = max_lr[gi] / div;
                if (tn__pg_set(fn, g, "initial_lr", init) || tn__pg_set(fn, g, "max_lr", max_lr[gi]) ||
                    tn__pg_set(fn, g, "min_lr", init / final_div)) goto fail;
                if (cyc && (tn__pg_set(fn, g, s->use_beta1 ? "betas[0]" : "momentum", max_m[gi]) ||
                            tn__pg_set(fn, g, "max_momentum", max_m[gi]) || tn__pg_set(fn, g, "base_momentum", base_m[gi]))) goto fail;
            }
        break;
    }
    case TN__PLATEAU: {
        const int mode = op->mode == -1 ? TN_MODE_MIN : op->mode, thr = op->threshold_mode == -1 ? TN_THRESHOLD_REL : op->threshold_mode;
        if (mode != TN_MODE_MIN && mode != TN_MODE_MAX) { tn__error("%s: mode %d is not TN_MODE_MIN or TN_MODE_MAX", fn, mode); goto fail; }
        if (thr != TN_THRESHOLD_REL && thr != TN_THRESHOLD_ABS) { tn__error("%s: threshold_mode %d is not TN_THRESHOLD_REL or TN_THRESHOLD_ABS", fn, thr); goto fail; }
        s->min_lrs = (double *)TN_MALLOC((size_t)TN__MAX(o->ng, 1) * sizeof(double));
        if (!s->min_lrs) { tn__error("%s: out of memory", fn); goto fail; }
        s->factor = tn__sched_d(op->factor, 0.1);
        s->patience = tn__sched_i(op->patience, 10);
        s->threshold = tn__sched_d(op->threshold, 1e-4);
        s->cooldown = tn__sched_i(op->cooldown, 0);
        s->eps = tn__sched_d(op->eps, 1e-8);
        const tn_doubles *ml = &op->min_lr_groups;
        if (ml->n && ml->n != o->ng) { tn__error("%s: expected %d min_lrs, got %d", fn, o->ng, ml->n); goto fail; }
        s->has_default_min_lr = !ml->n;
        s->default_min_lr = ml->n ? 0 : tn__sched_d(op->min_lr, 0);
        for (int gi = 0; gi < o->ng; gi++) s->min_lrs[gi] = ml->n ? ml->v[gi] : s->default_min_lr;
        if (!(s->factor < 1.0)) { tn__error("%s: Factor should be < 1.0.", fn); goto fail; }
        s->mode_max = mode == TN_MODE_MAX;
        s->thr_abs = thr == TN_THRESHOLD_ABS;
        s->last_epoch = 0;
        s->best = s->mode_max ? -INFINITY : INFINITY;
        for (int gi = 0; gi < o->ng; gi++) s->last_lr[gi] = tn__pg_get(&o->groups[gi], "lr");
        return s;
    }
    default: break;
    }
    if (tn__sched_init(fn, s, last_epoch)) goto fail;
    return s;
fail:
    tn_lr_scheduler_free(s);
    return NULL;
}
TNDEF tn_lr_scheduler *tn_lr_scheduler_create_opts(tn_optim *o, const char *kind, tn_lr_scheduler_opts opts) {
    if (!o) return NULL;
    const int k = tn__sched_kind(kind);
    return k < 0 ? NULL : tn__sched_create(o, k, &opts);
}
/* The option text: only the kind's names are known. */
TNDEF tn_lr_scheduler *tn_lr_scheduler_create_str(tn_optim *o, const char *kind, const char *options) {
    if (!o) return NULL;
    const int k = tn__sched_kind(kind);
    if (k < 0) return NULL;
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_sched, TN__KW_N(tn__kw_sched), tn__sched_valid[k], keys);
    tn_lr_scheduler_opts op = TN_DEFAULTS(tn_lr_scheduler_opts);
    return tn__kw_parse(tn__sched_fns[k], options, keys, n, &op, NULL) ? NULL : tn__sched_create(o, k, &op);
}
TNDEF tn_lr_scheduler *tn_lr_scheduler_lambda(tn_optim *o, double (*lr_lambda)(int64_t epoch, int group, void *user), void *user) {
    const char *fn = "tn_lr_scheduler_lambda";
    if (!o) return NULL;
    if (!lr_lambda) return (tn_lr_scheduler *)tn__error("%s: lr_lambda is NULL", fn);
    tn_lr_scheduler *s = tn__sched_alloc(fn, o, TN__LAMBDALR);
    if (!s) return NULL;
    s->lambda = lr_lambda;
    s->user = user;
    if (tn__sched_init(fn, s, -1)) { tn_lr_scheduler_free(s); return NULL; }
    return s;
}
TNDEF tn_lr_scheduler *tn_lr_scheduler_sequential(tn_optim *o, tn_lr_scheduler *const *schedulers, int n, const int64_t *milestones) {
    const char *fn = "tn_lr_scheduler_sequential";
    tn_lr_scheduler *s = NULL;
    bool bad = !o || !schedulers || n < 1;
    if (o && (!schedulers || n < 1)) tn__error("%s: SequentialLR expects at least one scheduler, but got no scheduler.", fn);
    for (int i = 0; !bad && i < n; i++) {
        tn_lr_scheduler *c = schedulers[i];
        if (!c) { bad = true; break; }  /* a failed creation: its error stands */
        for (int j = 0; j < i && !bad; j++)
            if (schedulers[j] == c) bad = TN__FAIL_INT("%s: scheduler %d is given twice", fn, i) != 0;
        if (bad) break;
        if (c->o != o)
            bad = TN__FAIL_INT("%s: Sequential Schedulers expects all schedulers to belong to the same optimizer, but got scheduler at "
                               "index %d to be different than the optimizer passed in.", fn, i) != 0;
        else if (c->kind == TN__PLATEAU)
            bad = TN__FAIL_INT("%s: SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                               "specified when calling `step`, but got one at index %d in the given schedulers sequence.", fn, i) != 0;
        else if (c->kind == TN__SEQUENTIALLR)
            bad = TN__FAIL_INT("%s: scheduler %d is a SequentialLR, which cannot be nested", fn, i) != 0;
    }
    if (!bad && n > 1 && !milestones) bad = TN__FAIL_INT("%s: %d schedulers need %d milestones (got NULL)", fn, n, n - 1) != 0;
    if (!bad && n - 1 > TN__MAX_MILESTONES) bad = TN__FAIL_INT("%s: at most %d milestones", fn, TN__MAX_MILESTONES) != 0;
    if (!bad) {
        s = tn__sched_alloc(fn, o, TN__SEQUENTIALLR);
        tn_lr_scheduler **ch = s ? (tn_lr_scheduler **)TN_MALLOC((size_t)n * sizeof *ch) : NULL;
        if (s && !ch) { tn__error("%s: out of memory", fn); tn_lr_scheduler_free(s); s = NULL; }
        if (s) {
            memcpy(ch, schedulers, (size_t)n * sizeof *ch);
            s->child = ch;
            s->nchild = n;
            for (int i = 0; i < n - 1; i++) s->milestones[i] = milestones[i];
        }
    }
    if (!s) { /* ownership was taken: free each distinct scheduler once */
        for (int i = 0; schedulers && i < n; i++) {
            bool seen = false;
            for (int j = 0; j < i; j++) seen = seen || schedulers[j] == schedulers[i];
            if (!seen) tn_lr_scheduler_free(schedulers[i]);
        }
        return NULL;
    }
    s->last_epoch = 0;
    for (int gi = 0; gi < o->ng; gi++) {
        tn__pgroup *g = &o->groups[gi];
        if (tn__pg_find(g, "initial_lr") < 0) {
            tn__error("%s: param group %d has no initial_lr", fn, gi);
            tn_lr_scheduler_free(s);
            return NULL;
        }
        tn__pg_set(fn, g, "lr", tn__pg_get(g, "initial_lr"));   /* back to the initial values */
    }
    for (int i = 0; i < n; i++) s->child[i]->last_epoch -= 1;   /* undo their initial steps */
    s->child[0]->step_count = 0;
    if (tn__sched_step(s->child[0], false, 0)) { tn_lr_scheduler_free(s); return NULL; }
    memcpy(s->last_lr, s->child[0]->last_lr, (size_t)TN__MIN(s->ng, s->child[0]->ng) * sizeof(double));
    return s;
}
TNDEF int tn_lr_scheduler_step(tn_lr_scheduler *s) { return s ? tn__sched_step(s, false, 0) : -1; }
TNDEF int tn_lr_scheduler_step_metric(tn_lr_scheduler *s, double metric) {
    const char *fn = "tn_lr_scheduler_step_metric";
    if (!s) return -1;
    if (s->kind != TN__PLATEAU) return TN__FAIL_INT("%s: only ReduceLROnPlateau steps on a metric (this is %s: use tn_lr_scheduler_step)", fn, tn__sched_names[s->kind]);
    tn_optim *o = s->o;
    s->last_epoch += 1;
    double a = metric, best = s->best, t = s->threshold;
    bool better = s->mode_max ? (s->thr_abs ? a > best + t : a > best * (t + 1.0)) : (s->thr_abs ? a < best - t : a < best * (1.0 - t));
    if (better) { s->best = a; s->num_bad_epochs = 0; }
    else s->num_bad_epochs += 1;
    if (s->cooldown_counter > 0) { s->cooldown_counter -= 1; s->num_bad_epochs = 0; }
    if (s->num_bad_epochs > s->patience) {
        if (o->ng != s->ng && !s->has_default_min_lr)
            return TN__FAIL_INT("%s: The number of param groups in the `optimizer` (%d) differs from when `ReduceLROnPlateau` was initialized (%d), "
                                "usually due to a new param group being added to the optimizer.", fn, o->ng, s->ng);
        for (int gi = 0; gi < o->ng; gi++) {
            tn__pgroup *g = &o->groups[gi];
            double old_lr = tn__pg_get(g, "lr"), min_lr = gi < s->ng ? s->min_lrs[gi] : s->default_min_lr;
            double new_lr = tn__py_max(old_lr * s->factor, min_lr);
            if (old_lr - new_lr > s->eps) tn__pg_set(fn, g, "lr", new_lr);
        }
        s->cooldown_counter = s->cooldown;
        s->num_bad_epochs = 0;
    }
    for (int gi = 0; gi < s->ng; gi++) s->last_lr[gi] = gi < o->ng ? tn__pg_get(&o->groups[gi], "lr") : NAN;
    return 0;
}
TNDEF double tn_lr_scheduler_get_last_lr(const tn_lr_scheduler *s, int group) {
    if (!s) return NAN;
    if (group < 0 || group >= s->ng)
        return tn__error("tn_lr_scheduler_get_last_lr: group %d out of range (%d groups)", group, s->ng), NAN;
    return s->last_lr[group];
}
TNDEF int64_t tn_lr_scheduler_last_epoch(const tn_lr_scheduler *s) { return s ? s->last_epoch : -1; }
