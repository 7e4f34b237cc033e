/* test_optim.c — optimizers, LR schedulers and gradient clipping (section 13).
 *
 *  1. Every optimizer, several option combinations, 10 steps on two float64 parameters
 *     with fixed gradients: against its update rule written out naively below (from
 *     PyTorch 2's algorithms) and against torch (a Python script run through popen;
 *     those checks are skipped, with a message, when `import torch` fails).
 *  2. LBFGS on the Rosenbrock function (gradients from our autograd) against torch,
 *     with and without strong_wolfe.
 *  3. Param groups, tn_optim_set mid-training, zero_grad, skipped parameters, version
 *     counters, non-contiguous parameters, float32.
 *  4. Schedulers against their formulas for 30 steps, and against torch.
 *  5. state_dict layout, and the round trip: k steps, save, a fresh optimizer loads it,
 *     the next steps equal the uninterrupted run exactly.
 *  6. clip_grad_norm_ / clip_grad_value_ against hand values.
 *  7. Errors, and no leaked tensors (memory stats).
 *
 * torch 1.13 is the oracle here but PyTorch 2 the specification: NAdam (1.13 multiplies
 * mu twice in mu_product_next) and options 1.13 lacks (decoupled_weight_decay, maximize
 * for NAdam/RAdam) are checked against the naive rules only. */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdint.h>
#ifdef __unix__
#include <unistd.h>
#endif

#define SH(...) TN_SHAPE(__VA_ARGS__)
#define PI 3.14159265358979323846
#define NSTEPS 10
#define NP 2                       /* parameters: [2, 3] and [4] */
#define NE 10                      /* their elements together */
static const int pn[NP] = {6, 4}, poff[NP] = {0, 6};

static double init_val(int i, int j) { return ((3 * j + 2 * i) % 7 - 3) * 0.5 + 0.125; }
static double grad_val(int i, int j, int k) { return ((7 * j + 3 * k + 5 * i) % 11 - 5) * 0.25; }

static tn_tensor *leaf(tn_tensor *t) {
    if (t && tn_requires_grad_(t, true)) return NULL;
    return t;
}
/* the two parameters, with init_val; returned tensors are owned by the current scope */
static void make_params(tn_tensor **ps, tn_dtype dt) {
    double v[6];
    for (int j = 0; j < 6; j++) v[j] = init_val(0, j);
    ps[0] = leaf(tn_to_dtype(tn_from_data(v, SH(2, 3), TN_F64), dt));
    for (int j = 0; j < 4; j++) v[j] = init_val(1, j);
    ps[1] = leaf(tn_to_dtype(tn_from_data(v, SH(4), TN_F64), dt));
}
static void set_grads(tn_tensor **ps, int n, int k) {
    tn_scope_begin();
    for (int i = 0; i < n; i++) {
        double v[8];
        int64_t m = tn_numel(ps[i]);
        for (int j = 0; j < m; j++) v[j] = grad_val(i, j, k);
        tn_tensor *g = tn_to_dtype(tn_reshape(tn_from_data(v, &m, 1, TN_F64), tn_shape(ps[i]), tn_ndim(ps[i])), tn_get_dtype(ps[i]));
        tn_set_grad(ps[i], tn_contiguous(g));
    }
    tn_scope_end();
}
static double elem(tn_tensor *t, int64_t j) {
    tn_scope_begin();
    double v = tn_item(tn_select(tn_reshape(t, SH(-1)), 0, j));
    tn_scope_end();
    return v;
}
static void read_params(tn_tensor **ps, double *out) {
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < pn[i]; j++) out[poff[i] + j] = elem(ps[i], j);
}
/* one CHECK per vector: the first element off by more than tol*(1 + |expected|) */
static void check_vec(const char *what, int step, const double *got, const double *exp, int n, double tol) {
    for (int j = 0; j < n; j++) {
        double d = fabs(got[j] - exp[j]);
        if (!(d <= tol * (1 + fabs(exp[j]))) && !(got[j] != got[j] && exp[j] != exp[j])) {
            CHECK_MSG(0, "%s step %d element %d: got %.17g, expected %.17g (diff %.3g)", what, step, j, got[j], exp[j], d);
            return;
        }
    }
    CHECK(1);
}
static int64_t live_tensors(void) { return tn_memory_stats_get().live_tensors; }

/* ------------------------------------------------------------------------------------ */
/* the update rules, written out naively in double (PyTorch 2's algorithm boxes)          */
/* ------------------------------------------------------------------------------------ */
typedef struct ropt {
    double lr, momentum, dampening, wd, b1, b2, eps, alpha, rho, lr_decay, init_acc, mdecay;
    int nesterov, maximize, amsgrad, centered, decoupled;
} ropt;
typedef struct rstate { double a[NE], b[NE], c[NE], d[NE], mu_product; int step, has_buf; } rstate;

static void ref_step(const char *kind, const ropt *o, rstate *s, double *p, int k) {
    s->step++;
    double t = s->step;
    if (s->step == 1) s->mu_product = 1;
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < pn[i]; j++) {
            int e = poff[i] + j;
            double g = grad_val(i, j, k);
            if (o->maximize) g = -g;
            bool decoupled = !strcmp(kind, "AdamW") || (o->decoupled && o->wd != 0);
            if (decoupled) p[e] *= 1 - o->lr * o->wd;
            else if (o->wd != 0) g += o->wd * p[e];
            if (!strcmp(kind, "SGD")) {
                if (o->momentum != 0) {
                    s->a[e] = s->has_buf ? o->momentum * s->a[e] + (1 - o->dampening) * g : g;
                    g = o->nesterov ? g + o->momentum * s->a[e] : s->a[e];
                }
                p[e] -= o->lr * g;
            } else if (!strcmp(kind, "Adam") || !strcmp(kind, "AdamW")) {
                s->a[e] = o->b1 * s->a[e] + (1 - o->b1) * g;
                s->b[e] = o->b2 * s->b[e] + (1 - o->b2) * g * g;
                double mhat = s->a[e] / (1 - pow(o->b1, t)), v = s->b[e];
                if (o->amsgrad) { s->c[e] = fmax(s->c[e], s->b[e]); v = s->c[e]; }
                double vhat = v / (1 - pow(o->b2, t));
                p[e] -= o->lr * mhat / (sqrt(vhat) + o->eps);
            } else if (!strcmp(kind, "RMSprop")) {
                s->a[e] = o->alpha * s->a[e] + (1 - o->alpha) * g * g;
                double v = s->a[e];
                if (o->centered) { s->c[e] = o->alpha * s->c[e] + (1 - o->alpha) * g; v -= s->c[e] * s->c[e]; }
                if (o->momentum > 0) {
                    s->b[e] = o->momentum * s->b[e] + g / (sqrt(v) + o->eps);
                    p[e] -= o->lr * s->b[e];
                } else {
                    p[e] -= o->lr * g / (sqrt(v) + o->eps);
                }
            } else if (!strcmp(kind, "Adagrad")) {
                if (s->step == 1) s->a[e] = o->init_acc;
                double clr = o->lr / (1 + (t - 1) * o->lr_decay);
                s->a[e] += g * g;
                p[e] -= clr * g / (sqrt(s->a[e]) + o->eps);
            } else if (!strcmp(kind, "Adadelta")) {
                s->a[e] = o->rho * s->a[e] + (1 - o->rho) * g * g;
                double dx = sqrt(s->b[e] + o->eps) / sqrt(s->a[e] + o->eps) * g;
                s->b[e] = o->rho * s->b[e] + (1 - o->rho) * dx * dx;
                p[e] -= o->lr * dx;
            } else if (!strcmp(kind, "Adamax")) {
                s->a[e] = o->b1 * s->a[e] + (1 - o->b1) * g;
                s->b[e] = fmax(o->b2 * s->b[e], fabs(g) + o->eps);
                p[e] -= o->lr / (1 - pow(o->b1, t)) * s->a[e] / s->b[e];
            } else if (!strcmp(kind, "NAdam")) {
                double mu = o->b1 * (1 - 0.5 * pow(0.96, t * o->mdecay)), mu1 = o->b1 * (1 - 0.5 * pow(0.96, (t + 1) * o->mdecay));
                double mp = (float)((float)s->mu_product * (float)mu);  /* a float32 tensor in PyTorch, updated below */
                s->a[e] = o->b1 * s->a[e] + (1 - o->b1) * g;
                s->b[e] = o->b2 * s->b[e] + (1 - o->b2) * g * g;
                double vhat = s->b[e] / (1 - pow(o->b2, t));
                p[e] -= o->lr * (1 - mu) / (1 - mp) * g / (sqrt(vhat) + o->eps) + o->lr * mu1 / (1 - mp * mu1) * s->a[e] / (sqrt(vhat) + o->eps);
            } else if (!strcmp(kind, "RAdam")) {
                s->a[e] = o->b1 * s->a[e] + (1 - o->b1) * g;
                s->b[e] = o->b2 * s->b[e] + (1 - o->b2) * g * g;
                double mhat = s->a[e] / (1 - pow(o->b1, t));
                double rinf = 2 / (1 - o->b2) - 1, rt = rinf - 2 * t * pow(o->b2, t) / (1 - pow(o->b2, t));
                if (rt > 5) {
                    double l = sqrt(1 - pow(o->b2, t)) / (sqrt(s->b[e]) + o->eps);
                    double r = sqrt((rt - 4) * (rt - 2) * rinf / ((rinf - 4) * (rinf - 2) * rt));
                    p[e] -= o->lr * mhat * l * r;
                } else {
                    p[e] -= o->lr * mhat;
                }
            }
        }
    if (!strcmp(kind, "NAdam")) {
        double mu = o->b1 * (1 - 0.5 * pow(0.96, t * o->mdecay));
        s->mu_product = (float)((float)s->mu_product * (float)mu);
    }
    s->has_buf = 1;
}

/* ------------------------------------------------------------------------------------ */
/* the cases (the Python oracle is generated from these tables)                           */
/* ------------------------------------------------------------------------------------ */
typedef struct ocase { const char *kind, *opts; int torch; ropt r; } ocase;
#define ADAMB .b1 = 0.9, .b2 = 0.999, .eps = 1e-8
static const ocase ocases[] = {
    {"SGD", "lr=0.1", 1, {.lr = 0.1}},
    {"SGD", "lr=0.1, momentum=0.9", 1, {.lr = 0.1, .momentum = 0.9}},
    {"SGD", "lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01", 1, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5, .wd = 0.01}},
    {"SGD", "lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True", 1,
     {.lr = 0.05, .momentum = 0.9, .nesterov = 1, .wd = 0.1, .maximize = 1}},
    {"Adam", "lr=0.01", 1, {.lr = 0.01, ADAMB}},
    {"Adam", "lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True", 1,
     {.lr = 0.01, .b1 = 0.8, .b2 = 0.99, .eps = 1e-6, .wd = 0.1, .amsgrad = 1}},
    {"Adam", "lr=0.02, maximize=True, amsgrad=True", 1, {.lr = 0.02, ADAMB, .maximize = 1, .amsgrad = 1}},
    {"AdamW", "lr=0.01", 1, {.lr = 0.01, ADAMB, .wd = 0.01}},
    {"AdamW", "lr=0.01, weight_decay=0.5, amsgrad=True, betas=(0.5, 0.9)", 1,
     {.lr = 0.01, .b1 = 0.5, .b2 = 0.9, .eps = 1e-8, .wd = 0.5, .amsgrad = 1}},
    {"RMSprop", "lr=0.01", 1, {.lr = 0.01, .alpha = 0.99, .eps = 1e-8}},
    {"RMSprop", "lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1", 1,
     {.lr = 0.01, .alpha = 0.9, .eps = 1e-8, .momentum = 0.5, .centered = 1, .wd = 0.1}},
    {"RMSprop", "lr=0.02, centered=True, maximize=True", 1, {.lr = 0.02, .alpha = 0.99, .eps = 1e-8, .centered = 1, .maximize = 1}},
    {"Adagrad", "lr=0.1", 1, {.lr = 0.1, .eps = 1e-10}},
    {"Adagrad", "lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True", 1,
     {.lr = 0.1, .lr_decay = 0.01, .wd = 0.1, .init_acc = 0.5, .eps = 1e-6, .maximize = 1}},
    {"Adadelta", "lr=1.0", 1, {.lr = 1.0, .rho = 0.9, .eps = 1e-6}},
    {"Adadelta", "lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True", 1,
     {.lr = 0.5, .rho = 0.8, .eps = 1e-4, .wd = 0.1, .maximize = 1}},
    {"Adamax", "lr=0.01", 1, {.lr = 0.01, ADAMB}},
    {"Adamax", "lr=0.01, betas=(0.7, 0.9), weight_decay=0.2, maximize=True", 1,
     {.lr = 0.01, .b1 = 0.7, .b2 = 0.9, .eps = 1e-8, .wd = 0.2, .maximize = 1}},
    {"NAdam", "lr=0.01", 0, {.lr = 0.01, ADAMB, .mdecay = 4e-3}},
    {"NAdam", "lr=0.01, weight_decay=0.1, momentum_decay=0.01", 0, {.lr = 0.01, ADAMB, .wd = 0.1, .mdecay = 0.01}},
    {"NAdam", "lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True", 0,
     {.lr = 0.01, ADAMB, .wd = 0.1, .mdecay = 4e-3, .decoupled = 1, .maximize = 1}},
    {"RAdam", "lr=0.01", 1, {.lr = 0.01, ADAMB}},
    {"RAdam", "lr=0.01, betas=(0.9, 0.9), weight_decay=0.1", 1, {.lr = 0.01, .b1 = 0.9, .b2 = 0.9, .eps = 1e-8, .wd = 0.1}},
    {"RAdam", "lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True", 0,
     {.lr = 0.01, ADAMB, .wd = 0.1, .decoupled = 1, .maximize = 1}},
};
#define NOCASES ((int)(sizeof ocases / sizeof ocases[0]))

/* LBFGS on the 4-d Rosenbrock function from (-1.2, 1, -0.5, 0.8) */
static const char *const lcases[] = {"", "line_search_fn='strong_wolfe'", "lr=0.5, max_iter=5, history_size=3",
                                     "history_size=2, line_search_fn='strong_wolfe', max_iter=7"};
#define NLCASES 4
#define LSTEPS 5

/* schedulers: SGD with two groups (lr 0.1 and 0.05, momentum 0.9), 30 steps */
typedef struct scase { const char *kind, *opts, *optim; } scase;
static const scase scases[] = {
    {"StepLR", "step_size=7, gamma=0.5", "SGD"},
    {"MultiStepLR", "milestones=(5, 12, 12, 20), gamma=0.3", "SGD"},
    {"ExponentialLR", "gamma=0.9", "SGD"},
    {"CosineAnnealingLR", "T_max=10, eta_min=0.001", "SGD"},
    {"CosineAnnealingWarmRestarts", "T_0=5, T_mult=2, eta_min=0.01", "SGD"},
    {"LinearLR", "start_factor=0.25, end_factor=1.0, total_iters=8", "SGD"},
    {"ConstantLR", "factor=0.5, total_iters=4", "SGD"},
    {"PolynomialLR", "total_iters=10, power=2.0", "SGD"},
    {"OneCycleLR", "max_lr=0.1, total_steps=30", "SGD"},
    {"OneCycleLR", "max_lr=(0.1, 0.05), total_steps=30, three_phase=True, anneal_strategy='linear', pct_start=0.25", "Adam"},
    {"ReduceLROnPlateau", "patience=2, factor=0.5, cooldown=1, threshold=0.1, min_lr=0.01", "SGD"},
    {"ReduceLROnPlateau", "mode='max', patience=1, threshold_mode='abs', threshold=0.05, min_lr=(0.02, 0.0), eps=1e-3", "SGD"},
    {"LambdaLR", "", "SGD"},
    {"SequentialLR", "LinearLR(start_factor=0.1, total_iters=5)|CosineAnnealingLR(T_max=20)|5", "SGD"},
    {"SequentialLR", "ConstantLR(factor=0.1, total_iters=2)|ExponentialLR(gamma=0.9)|2", "SGD"},
};
#define NSCASES ((int)(sizeof scases / sizeof scases[0]))
#define SSTEPS 30
static double metric_at(int k) { return 1.0 / (1 + (k % 7)) + 0.01 * k; }   /* a noisy metric for ReduceLROnPlateau */

/* ------------------------------------------------------------------------------------ */
/* the torch oracle                                                                         */
/* ------------------------------------------------------------------------------------ */
static const char *const py_body =
    "import sys, math, warnings\n"
    "warnings.filterwarnings('ignore')\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    print('notorch', e); sys.exit(0)\n"
    "print('torch', torch.__version__)\n"
    "def init(i, j): return ((3*j + 2*i) % 7 - 3) * 0.5 + 0.125\n"
    "def grad(i, j, k): return ((7*j + 3*k + 5*i) % 11 - 5) * 0.25\n"
    "def params(dt):\n"
    "    a = torch.tensor([init(0, j) for j in range(6)], dtype=dt).reshape(2, 3).requires_grad_()\n"
    "    b = torch.tensor([init(1, j) for j in range(4)], dtype=dt).requires_grad_()\n"
    "    return [a, b]\n"
    "def fmt(vs): return ' '.join(repr(float(v)) for v in vs)\n"
    "for idx, (kind, opts, use, dtname) in enumerate(OPT):\n"
    "    if not use: continue\n"
    "    dt = getattr(torch, dtname)\n"
    "    ps = params(dt)\n"
    "    opt = getattr(torch.optim, kind)(ps, **eval('dict(%s)' % opts))\n"
    "    for k in range(NSTEPS):\n"
    "        for i, p in enumerate(ps):\n"
    "            p.grad = torch.tensor([grad(i, j, k) for j in range(p.numel())], dtype=dt).reshape(p.shape)\n"
    "        opt.step()\n"
    "        print('opt', idx, k, fmt([v for p in ps for v in p.detach().reshape(-1).tolist()]))\n"
    "for idx, opts in enumerate(LBFGS):\n"
    "    x = torch.tensor([-1.2, 1.0, -0.5, 0.8], dtype=torch.float64, requires_grad=True)\n"
    "    opt = torch.optim.LBFGS([x], **eval('dict(%s)' % opts))\n"
    "    def closure():\n"
    "        opt.zero_grad()\n"
    "        loss = (100 * (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2).sum()\n"
    "        loss.backward()\n"
    "        return loss\n"
    "    for k in range(LSTEPS):\n"
    "        l = opt.step(closure)\n"
    "        st = opt.state[x]\n"
    "        print('lbfgs', idx, k, fmt([l] + x.tolist() + [st['func_evals'], st['n_iter']]))\n"
    "def sched(opt, kind, opts):\n"
    "    L = torch.optim.lr_scheduler\n"
    "    if kind == 'LambdaLR':\n"
    "        return L.LambdaLR(opt, [lambda e: 0.95 ** e, lambda e: 1.0 / (1 + e)])\n"
    "    if kind == 'SequentialLR':\n"
    "        a, b, m = opts.split('|')\n"
    "        s1 = eval('L.' + a.replace('(', '(opt, ', 1)); s2 = eval('L.' + b.replace('(', '(opt, ', 1))\n"
    "        return L.SequentialLR(opt, [s1, s2], milestones=[int(m)])\n"
    "    return getattr(L, kind)(opt, **eval('dict(%s)' % opts))\n"
    "def metric(k): return 1.0 / (1 + (k % 7)) + 0.01 * k\n"
    "for idx, (kind, opts, oname) in enumerate(SCHED):\n"
    "    a = torch.zeros(2, requires_grad=True); b = torch.zeros(2, requires_grad=True)\n"
    "    extra = {'momentum': 0.9} if oname == 'SGD' else {}\n"
    "    opt = getattr(torch.optim, oname)([{'params': [a]}, {'params': [b], 'lr': 0.05}], lr=0.1, **extra)\n"
    "    s = sched(opt, kind, opts)\n"
    "    def mom(g): return g['betas'][0] if 'betas' in g else g['momentum']\n"
    "    for k in range(SSTEPS + 1):\n"
    "        gs = opt.param_groups\n"
    "        print('sched', idx, k, fmt([gs[0]['lr'], gs[1]['lr'], mom(gs[0]), mom(gs[1])]))\n"
    "        if k == SSTEPS: break\n"
    "        opt.step()\n"
    "        if kind == 'ReduceLROnPlateau': s.step(metric(k))\n"
    "        else: s.step()\n";

typedef struct orow { char tag[8]; int idx, k; double v[12]; int nv; } orow;
static orow *orows;
static int norows, torch_ok = -1;

static void run_oracle(void) {
    torch_ok = 0;
#ifdef __unix__
    char path[64];
    snprintf(path, sizeof path, "/tmp/tn_test_optim_%d.py", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) { printf("  skipped: torch comparisons (cannot write %s)\n", path); return; }
    fprintf(f, "NSTEPS = %d\nLSTEPS = %d\nSSTEPS = %d\nOPT = [\n", NSTEPS, LSTEPS, SSTEPS);
    for (int i = 0; i < NOCASES; i++) fprintf(f, "    (%s, %s, %d, 'float64'),\n", "'X'", "''", 0);
    fprintf(f, "]\n");
    for (int i = 0; i < NOCASES; i++)
        fprintf(f, "OPT[%d] = ('%s', \"%s\", %d, 'float64')\n", i, ocases[i].kind, ocases[i].opts, ocases[i].torch);
    fprintf(f, "OPT.append(('Adam', 'lr=0.01, amsgrad=True', 1, 'float32'))\n");   /* case NOCASES: float32 */
    fprintf(f, "LBFGS = [\n");
    for (int i = 0; i < NLCASES; i++) fprintf(f, "    \"%s\",\n", lcases[i]);
    fprintf(f, "]\nSCHED = [\n");
    for (int i = 0; i < NSCASES; i++) fprintf(f, "    ('%s', \"%s\", '%s'),\n", scases[i].kind, scases[i].opts, scases[i].optim);
    fprintf(f, "]\n%s", py_body);
    fclose(f);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s 2>&1", path);
    FILE *p = popen(cmd, "r");
    if (!p) { printf("  skipped: torch comparisons (popen failed)\n"); remove(path); return; }
    char line[2048];
    int cap = 0;
    while (fgets(line, sizeof line, p)) {
        if (!strncmp(line, "torch ", 6)) { torch_ok = 1; continue; }
        orow r;
        memset(&r, 0, sizeof r);
        int off = 0;
        if (sscanf(line, "%7s %d %d%n", r.tag, &r.idx, &r.k, &off) != 3) {
            if (torch_ok != 1) printf("  python: %s", line);
            continue;
        }
        char *s = line + off, *end;
        while (r.nv < 12) {
            double v = strtod(s, &end);
            if (end == s) break;
            r.v[r.nv++] = v;
            s = end;
        }
        if (norows == cap) {
            cap = cap ? 2 * cap : 256;
            orows = (orow *)realloc(orows, (size_t)cap * sizeof *orows);
        }
        orows[norows++] = r;
    }
    int status = pclose(p);
    if (getenv("TN_TEST_KEEP_PY")) printf("  oracle script kept: %s\n", path);
    else remove(path);
    if (torch_ok != 1) { printf("  skipped: torch comparisons (import torch failed)\n"); torch_ok = 0; }
    else if (status != 0) { printf("  torch oracle exited with status %d\n", status); CHECK(status == 0); }
#else
    printf("  skipped: torch comparisons (no popen here)\n");
#endif
}
static const orow *oracle(const char *tag, int idx, int k) {
    for (int i = 0; i < norows; i++)
        if (!strcmp(orows[i].tag, tag) && orows[i].idx == idx && orows[i].k == k) return &orows[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* 1. every optimizer against the naive rules and torch                                   */
/* ------------------------------------------------------------------------------------ */
TEST(optimizers_against_rules_and_torch) {
    int64_t live0 = live_tensors();
    for (int c = 0; c < NOCASES; c++) {
        const ocase *oc = &ocases[c];
        char what[160];
        snprintf(what, sizeof what, "%s(%s)", oc->kind, oc->opts);
        tn_scope_begin();
        tn_tensor *ps[NP];
        make_params(ps, TN_F64);
        tn_optim *o = tn_optim_create_str(oc->kind, ps, NP, oc->opts);
        CHECK_MSG(o != NULL, "%s: %s", what, tn_last_error());
        if (!o) { tn_scope_end(); continue; }
        double ref[NE], got[NE];
        rstate rs;
        memset(&rs, 0, sizeof rs);
        read_params(ps, ref);
        for (int k = 0; k < NSTEPS; k++) {
            set_grads(ps, NP, k);
            int64_t v0 = tn_version(ps[0]);
            CHECK(tn_optim_step(o) == 0);
            CHECK(tn_version(ps[0]) > v0);
            ref_step(oc->kind, &oc->r, &rs, ref, k);
            read_params(ps, got);
            check_vec(what, k, got, ref, NE, 1e-12);
            const orow *r = torch_ok && oc->torch ? oracle("opt", c, k) : NULL;
            if (torch_ok && oc->torch) {
                CHECK_MSG(r && r->nv == NE, "%s: no torch row for step %d", what, k);
                if (r) check_vec(what, k, got, r->v, NE, 1e-12);
            }
        }
        CHECK(tn_is_leaf(ps[0]) && tn_grad_fn_name(ps[0]) == NULL);
        tn_optim_free(o);
        tn_scope_end();
    }
    CHECK(live_tensors() == live0);
}

TEST(float32_adam) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *ps[NP];
    make_params(ps, TN_F32);
    tn_optim *o = tn_optim_adam(ps, NP, .lr = 0.01, .amsgrad = true);
    ropt r = {.lr = 0.01, ADAMB, .amsgrad = 1};
    rstate rs;
    memset(&rs, 0, sizeof rs);
    double ref[NE], got[NE];
    read_params(ps, ref);
    for (int k = 0; k < NSTEPS; k++) {
        set_grads(ps, NP, k);
        CHECK(tn_optim_step(o) == 0);
        ref_step("Adam", &r, &rs, ref, k);
        read_params(ps, got);
        check_vec("float32 Adam vs double rule", k, got, ref, NE, 2e-6);
        if (torch_ok) {
            const orow *t = oracle("opt", NOCASES, k);
            CHECK(t != NULL);
            if (t) check_vec("float32 Adam vs torch", k, got, t->v, NE, 1e-6);
        }
    }
    CHECK(tn_get_dtype(tn_optim_state(o, 0, "exp_avg")) == TN_F32);
    CHECK(tn_get_dtype(tn_optim_state(o, 1, "step")) == TN_F32 && tn_ndim(tn_optim_state(o, 1, "step")) == 0);
    CHECK(elem(tn_optim_state(o, 1, "step"), 0) == NSTEPS);
    tn_optim_free(o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* ------------------------------------------------------------------------------------ */
/* 2. LBFGS on Rosenbrock                                                                  */
/* ------------------------------------------------------------------------------------ */
typedef struct rosen { tn_optim *o; tn_tensor *x; int calls; } rosen;
static double rosenbrock(void *user) {
    rosen *r = (rosen *)user;
    r->calls++;
    tn_optim_zero_grad(r->o);
    tn_scope_begin();
    tn_tensor *a = tn_slice(r->x, 0, 1, TN_END, 1), *b = tn_slice(r->x, 0, 0, -1, 1);
    tn_tensor *loss = tn_sum(tn_add(tn_mul_scalar(tn_square(tn_sub(a, tn_square(b))), 100), tn_square(tn_rsub_scalar(b, 1))));
    double v = loss && tn_backward(loss) == 0 ? tn_item(loss) : NAN;
    tn_scope_end();
    return v;
}
static tn_tensor *rosen_start(void) {
    double x0[4] = {-1.2, 1.0, -0.5, 0.8};
    return leaf(tn_from_data(x0, SH(4), TN_F64));
}
TEST(lbfgs_rosenbrock) {
    int64_t live0 = live_tensors();
    for (int c = 0; c < NLCASES; c++) {
        tn_scope_begin();
        rosen r = {NULL, rosen_start(), 0};
        r.o = tn_optim_create_str("LBFGS", &r.x, 1, lcases[c]);
        CHECK_MSG(r.o != NULL, "LBFGS(%s): %s", lcases[c], tn_last_error());
        if (!r.o) { tn_scope_end(); continue; }
        double first = 0, last = 0;
        for (int k = 0; k < LSTEPS; k++) {
            double l = tn_optim_step_closure(r.o, rosenbrock, &r);
            CHECK_MSG(l == l, "LBFGS(%s) step %d: %s", lcases[c], k, tn_last_error());
            if (k == 0) first = l;
            last = l;
            tn_dict *sd = tn_optim_state_dict(r.o);
            double got[7] = {l, elem(r.x, 0), elem(r.x, 1), elem(r.x, 2), elem(r.x, 3),
                             elem(tn_dict_get(sd, "state.0.func_evals"), 0), elem(tn_dict_get(sd, "state.0.n_iter"), 0)};
            tn_dict_free(sd);
            if (torch_ok) {
                const orow *t = oracle("lbfgs", c, k);
                CHECK(t && t->nv == 7);
                char what[120];
                snprintf(what, sizeof what, "LBFGS(%s)", lcases[c]);
                /* rounding differences (BLAS sums dot products in another order) grow along the
                   trajectory, to ~1e-9 without line search; the evaluation counts are exact */
                if (t) check_vec(what, k, got, t->v, 7, 1e-6);
                CHECK_MSG(t && got[5] == t->v[5] && got[6] == t->v[6], "%s step %d: func_evals %g n_iter %g", what, k, got[5], got[6]);
            }
        }
        CHECK_MSG(last < first, "LBFGS(%s) does not descend: %g -> %g", lcases[c], first, last);
        tn_optim_free(r.o);
        tn_scope_end();
    }
    /* with strong_wolfe it reaches the minimum (1, 1, 1, 1) */
    tn_scope_begin();
    rosen r = {NULL, rosen_start(), 0};
    r.o = tn_optim_lbfgs(&r.x, 1, .line_search_fn = TN_LINE_SEARCH_STRONG_WOLFE, .max_iter = 100);
    for (int k = 0; k < 3; k++) tn_optim_step_closure(r.o, rosenbrock, &r);
    for (int j = 0; j < 4; j++) CHECK_CLOSE(elem(r.x, j), 1.0, 1e-6);
    CHECK(r.calls > 10);
    tn_optim_free(r.o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* ------------------------------------------------------------------------------------ */
/* 3. groups, set/get, zero_grad, skipped parameters, strides                             */
/* ------------------------------------------------------------------------------------ */
TEST(param_groups_and_set) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *ps[NP];
    make_params(ps, TN_F64);
    tn_optim *o = tn_optim_sgd(ps, 1, .lr = 0.1, .momentum = 0.9);
    CHECK(tn_optim_add_param_group(o, ps + 1, 1, .lr = 0.01, .nesterov = true) == 0);
    CHECK(tn_optim_num_groups(o) == 2 && tn_optim_num_params(o) == 2 && tn_optim_param(o, 1) == ps[1]);
    CHECK(tn_optim_get(o, 0, "lr") == 0.1 && tn_optim_get(o, 1, "lr") == 0.01);
    CHECK(tn_optim_get(o, 1, "momentum") == 0.9);         /* from the optimizer's defaults */
    CHECK(tn_optim_get(o, 1, "nesterov") == 1 && tn_optim_get(o, 0, "nesterov") == 0);
    ropt r0 = {.lr = 0.1, .momentum = 0.9}, r1 = {.lr = 0.01, .momentum = 0.9, .nesterov = 1};
    double ref0[NE], ref1[NE], got[NE];
    rstate s0, s1;
    memset(&s0, 0, sizeof s0);
    memset(&s1, 0, sizeof s1);
    read_params(ps, ref0);
    memcpy(ref1, ref0, sizeof ref0);
    for (int k = 0; k < 6; k++) {
        if (k == 3) {   /* a new lr mid-training, as param_groups[0]['lr'] = 0.05 */
            CHECK(tn_optim_set(o, 0, "lr", 0.05) == 0);
            r0.lr = 0.05;
            CHECK(tn_optim_get(o, 0, "lr") == 0.05);
        }
        set_grads(ps, NP, k);
        CHECK(tn_optim_step(o) == 0);
        ref_step("SGD", &r0, &s0, ref0, k);
        ref_step("SGD", &r1, &s1, ref1, k);
        read_params(ps, got);
        check_vec("group 0", k, got, ref0, 6, 1e-12);
        check_vec("group 1", k, got + 6, ref1 + 6, 4, 1e-12);
    }
    tn_optim_free(o);

    /* betas of a new group, bools, scheduler keys */
    o = tn_optim_adam(ps, 1, .lr = 0.01);
    CHECK(tn_optim_add_param_group(o, ps + 1, 1, .betas = {0.5, 0.6}, .amsgrad = true) == 0);
    CHECK(tn_optim_get(o, 1, "betas[0]") == 0.5 && tn_optim_get(o, 1, "betas[1]") == 0.6);
    CHECK(tn_optim_get(o, 0, "betas[1]") == 0.999 && tn_optim_get(o, 1, "lr") == 0.01 && tn_optim_get(o, 1, "amsgrad") == 1);
    CHECK(tn_optim_set(o, 0, "amsgrad", 5) == 0 && tn_optim_get(o, 0, "amsgrad") == 1);
    CHECK(tn_optim_set(o, 0, "initial_lr", 0.3) == 0 && tn_optim_get(o, 0, "initial_lr") == 0.3);
    /* amsgrad switched on after the first step: max_exp_avg_sq is made then */
    tn_optim_set(o, 0, "amsgrad", 0);
    set_grads(ps, NP, 0);
    CHECK(tn_optim_step(o) == 0);
    CHECK(tn_optim_state(o, 0, "max_exp_avg_sq") == NULL && tn_optim_state(o, 1, "max_exp_avg_sq") != NULL);
    tn_optim_set(o, 0, "amsgrad", 1);
    CHECK(tn_optim_step(o) == 0 && tn_optim_state(o, 0, "max_exp_avg_sq") != NULL);
    tn_optim_free(o);

    /* the per-kind constructors */
    o = tn_optim_sgd(ps, NP, .lr = 0.1, .momentum = 0.9, .weight_decay = 1e-4);
    CHECK(o && tn_optim_get(o, 0, "momentum") == 0.9 && tn_optim_get(o, 0, "weight_decay") == 1e-4);
    tn_optim_free(o);
    o = tn_optim_adam(ps, NP, .lr = 3e-4);
    CHECK(o && tn_optim_get(o, 0, "lr") == 3e-4 && tn_optim_get(o, 0, "eps") == 1e-8);
    tn_optim_free(o);
    o = tn_optim_adamw(ps, NP, .lr = 1e-3, .weight_decay = 0.05);
    CHECK(o && tn_optim_get(o, 0, "weight_decay") == 0.05 && tn_optim_get(o, 0, "betas[0]") == 0.9);
    tn_optim_free(o);
    /* PyTorch 2's defaults */
    o = tn_optim_sgd(ps, NP);
    CHECK(o && tn_optim_get(o, 0, "lr") == 1e-3);
    tn_optim_free(o);
    o = tn_optim_lbfgs(ps, NP, .max_iter = 10);
    CHECK(o && tn_optim_get(o, 0, "max_eval") == 12 && tn_optim_get(o, 0, "tolerance_grad") == 1e-7 &&
          tn_optim_get(o, 0, "history_size") == 100 && tn_optim_get(o, 0, "line_search_fn") == 0);
    tn_optim_free(o);
    o = tn_optim_adamw(ps, NP, .foreach = true, .fused = -1, .capturable = false, .differentiable = false);
    CHECK(o && tn_optim_get(o, 0, "weight_decay") == 1e-2);
    tn_optim_free(o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

TEST(zero_grad_and_skipping) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *ps[NP];
    make_params(ps, TN_F64);
    tn_optim *o = tn_optim_adam(ps, NP, .lr = 0.1);
    set_grads(ps, NP, 0);
    tn_tensor *g0 = tn_grad(ps[0]);
    tn_optim_zero_grad(o, .set_to_none = false);
    CHECK(tn_grad(ps[0]) == g0 && elem(g0, 1) == 0 && elem(tn_grad(ps[1]), 3) == 0);
    tn_optim_zero_grad(o);
    CHECK(tn_grad(ps[0]) == NULL && tn_grad(ps[1]) == NULL);
    /* a parameter without grad is skipped: unchanged, no state */
    double before[NE], after[NE];
    read_params(ps, before);
    set_grads(ps, 1, 0);
    int64_t v1 = tn_version(ps[1]);
    CHECK(tn_optim_step(o) == 0);
    read_params(ps, after);
    CHECK(after[0] != before[0] && memcmp(after + 6, before + 6, 4 * sizeof(double)) == 0);
    CHECK(tn_version(ps[1]) == v1);
    CHECK(tn_optim_state(o, 0, "exp_avg") != NULL && tn_optim_state(o, 1, "exp_avg") == NULL);
    tn_dict *sd = tn_optim_state_dict(o);
    CHECK(tn_dict_contains(sd, "state.0.step") && !tn_dict_contains(sd, "state.1.step"));
    tn_dict_free(sd);
    tn_optim_free(o);
    /* zero grads in place keep .grad a leaf without history (grad from create_graph) */
    tn_tensor *x = ps[0];
    tn_set_grad(x, NULL);
    CHECK(tn_backward(tn_sum(tn_mul(x, x)), .create_graph = true) == 0);
    CHECK(tn_grad(x) && tn_requires_grad(tn_grad(x)));
    o = tn_optim_sgd(&x, 1, .lr = 0.1);
    tn_optim_zero_grad(o, .set_to_none = false);
    CHECK(tn_grad(x) && !tn_requires_grad(tn_grad(x)) && tn_is_leaf(tn_grad(x)) && elem(tn_grad(x), 0) == 0);
    tn_set_grad(x, NULL);
    tn_optim_free(o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* a transposed leaf and a strided grad are updated like their contiguous twins */
TEST(non_contiguous_parameters) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    double v[6] = {0.5, -1, 2, 0.25, -0.75, 1.5}, g[6] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
    tn_tensor *base = tn_from_data(v, SH(3, 2), TN_F64);
    tn_tensor *pt = leaf(tn_contiguous(tn_t(base)));       /* contiguous [2, 3] twin */
    tn_tensor *ptv = leaf(tn_detach(tn_t(tn_clone(base))));  /* a transposed view, a leaf */
    CHECK(pt && ptv && !tn_is_contiguous(ptv));
    tn_tensor *gg = tn_from_data(g, SH(2, 3), TN_F64);
    tn_set_grad(pt, gg);
    tn_set_grad(ptv, tn_t(tn_contiguous(tn_t(gg))));          /* strided grad, same values */
    CHECK(!tn_is_contiguous(tn_grad(ptv)));
    tn_optim *a = tn_optim_rmsprop(&pt, 1, .lr = 0.01, .momentum = 0.9, .centered = true);
    tn_optim *b = tn_optim_rmsprop(&ptv, 1, .lr = 0.01, .momentum = 0.9, .centered = true);
    for (int k = 0; k < 3; k++) { CHECK(tn_optim_step(a) == 0); CHECK(tn_optim_step(b) == 0); }
    CHECK(tn_equal(pt, ptv));
    CHECK(!tn_is_contiguous(ptv));
    tn_optim_free(a);
    tn_optim_free(b);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* ------------------------------------------------------------------------------------ */
/* 4. schedulers                                                                           */
/* ------------------------------------------------------------------------------------ */
static double lambda0(int64_t e, int group, void *user) {
    (void)user;
    return group == 0 ? pow(0.95, (double)e) : 1.0 / (1 + (double)e);
}
static tn_lr_scheduler *make_sched(tn_optim *o, const scase *sc) {
    if (!strcmp(sc->kind, "LambdaLR")) return tn_lr_scheduler_lambda(o, lambda0, NULL);
    if (!strcmp(sc->kind, "SequentialLR")) {
        char a[64], b[64], k1[32], k2[32], o1[48], o2[48];
        long m;
        sscanf(sc->opts, "%63[^|]|%63[^|]|%ld", a, b, &m);
        sscanf(a, "%31[^(](%47[^)])", k1, o1);
        sscanf(b, "%31[^(](%47[^)])", k2, o2);
        tn_lr_scheduler *ch[2] = {tn_lr_scheduler_create_str(o, k1, o1), tn_lr_scheduler_create_str(o, k2, o2)};
        int64_t ms = m;
        return tn_lr_scheduler_sequential(o, ch, 2, &ms);
    }
    return tn_lr_scheduler_create_str(o, sc->kind, sc->opts);
}
/* What each schedule should be at epoch e, from its formula (groups' base lr b). */
static double formula(int c, int64_t e, double b, int g) {
    double E = (double)e;
    switch (c) {
    case 0: return b * pow(0.5, (double)(e / 7));
    case 1: return b * pow(0.3, (e >= 5) + 2 * (e >= 12) + (e >= 20));
    case 2: return b * pow(0.9, E);
    case 3: return 0.001 + (b - 0.001) * (1 + cos(PI * E / 10)) / 2;
    case 4: { /* restarts after 5, 10, 20 epochs: cycles [0,5) [5,15) [15,35) */
        double tc = e < 5 ? E : e < 15 ? E - 5 : E - 15, ti = e < 5 ? 5 : e < 15 ? 10 : 20;
        return 0.01 + (b - 0.01) * (1 + cos(PI * tc / ti)) / 2;
    }
    case 5: return b * (0.25 + 0.75 * fmin(E, 8) / 8);
    case 6: return b * (e < 4 ? 0.5 : 1);
    case 7: return b * pow(1 - fmin(E, 10) / 10, 2);
    case 8: { /* cos up to 0.1 over 8 steps (end_step 0.3*30-1 = 8), down to 0.1/25/1e4 */
        double lo = 0.1 / 25, mn = lo / 1e4;
        if (E <= 8) return 0.1 + (lo - 0.1) / 2 * (cos(PI * E / 8) + 1);
        return mn + (0.1 - mn) / 2 * (cos(PI * (E - 8) / 21) + 1);
    }
    case 9: { /* linear, three phases: ends 6.5, 13, 29 */
        double mx = g == 0 ? 0.1 : 0.05, lo = mx / 25, mn = lo / 1e4;
        if (E <= 6.5) return lo + (mx - lo) * E / 6.5;
        if (E <= 13) return mx + (lo - mx) * (E - 6.5) / 6.5;
        return lo + (mn - lo) * (E - 13) / 16;
    }
    case 12: return g == 0 ? b * pow(0.95, E) : b / (1 + E);
    case 13: return e < 5 ? b * (0.1 + 0.9 * E / 5) : 0 + b * (1 + cos(PI * (E - 5) / 20)) / 2;
    case 14: return e < 2 ? b * 0.1 : b * pow(0.9, E - 2);
    default: return NAN;
    }
}
TEST(schedulers) {
    int64_t live0 = live_tensors();
    for (int c = 0; c < NSCASES; c++) {
        const scase *sc = &scases[c];
        tn_scope_begin();
        tn_tensor *a = leaf(tn_zeros(SH(2), TN_F32)), *b = leaf(tn_zeros(SH(2), TN_F32));
        bool sgd = !strcmp(sc->optim, "SGD");
        tn_optim *o = tn_optim_create_str(sc->optim, &a, 1, sgd ? "lr=0.1, momentum=0.9" : "lr=0.1");
        tn_optim_add_param_group(o, &b, 1, .lr = 0.05);
        tn_lr_scheduler *s = make_sched(o, sc);
        CHECK_MSG(s != NULL, "%s(%s): %s", sc->kind, sc->opts, tn_last_error());
        if (!s) { tn_optim_free(o); tn_scope_end(); continue; }
        const char *mk = sgd ? "momentum" : "betas[0]";
        char what[200];
        snprintf(what, sizeof what, "%s(%s)", sc->kind, sc->opts);
        bool plateau = !strcmp(sc->kind, "ReduceLROnPlateau");
        double lr_hand[2] = {0.1, 0.05}, best = c == 10 ? INFINITY : -INFINITY;
        int bad = 0, cool = 0;
        for (int k = 0; k <= SSTEPS; k++) {
            double got[4] = {tn_optim_get(o, 0, "lr"), tn_optim_get(o, 1, "lr"), tn_optim_get(o, 0, mk), tn_optim_get(o, 1, mk)};
            CHECK(tn_lr_scheduler_get_last_lr(s, 0) == got[0] && tn_lr_scheduler_get_last_lr(s, 1) == got[1]);
            if (plateau) {  /* by hand: ReduceLROnPlateau's rules */
                check_vec(what, k, got, lr_hand, 2, 1e-15);
            } else if (c != 10 && c != 11) {
                double f[2] = {formula(c, k, 0.1, 0), formula(c, k, 0.05, 1)};
                check_vec(what, k, got, f, 2, 1e-12);
            }
            if (torch_ok) {
                const orow *t = oracle("sched", c, k);
                CHECK(t && t->nv == 4);
                if (t) check_vec(what, k, got, t->v, 4, 1e-13);
            }
            if (k == SSTEPS) break;
            if (plateau) {
                double m = metric_at(k);
                CHECK(tn_lr_scheduler_step_metric(s, m) == 0);
                bool better = c == 10 ? m < best * (1 - 0.1) : m > best + 0.05;
                if (better) { best = m; bad = 0; } else bad++;
                if (cool > 0) { cool--; bad = 0; }
                if (bad > (c == 10 ? 2 : 1)) {
                    for (int g = 0; g < 2; g++) {
                        double mn = c == 10 ? 0.01 : g == 0 ? 0.02 : 0.0, nl = fmax(lr_hand[g] * (c == 10 ? 0.5 : 0.1), mn);
                        if (lr_hand[g] - nl > (c == 10 ? 1e-8 : 1e-3)) lr_hand[g] = nl;
                    }
                    cool = c == 10 ? 1 : 0;
                    bad = 0;
                }
            } else {
                CHECK(tn_lr_scheduler_step(s) == 0);
            }
        }
        CHECK(tn_lr_scheduler_last_epoch(s) == SSTEPS);
        tn_lr_scheduler_free(s);
        tn_optim_free(o);
        tn_scope_end();
    }
    CHECK(live_tensors() == live0);
}

TEST(scheduler_details) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *a = leaf(tn_zeros(SH(2), TN_F32));
    tn_optim *o = tn_optim_sgd(&a, 1, .lr = 0.1);
    /* creation sets initial_lr and the epoch-0 lr */
    tn_lr_scheduler *s = tn_lr_scheduler_linear_lr(o, .start_factor = 0.5, .total_iters = 2);
    CHECK(tn_optim_get(o, 0, "initial_lr") == 0.1 && tn_optim_get(o, 0, "lr") == 0.05 && tn_lr_scheduler_last_epoch(s) == 0);
    tn_lr_scheduler_free(s);
    /* OneCycleLR resumed (last_epoch given) needs the keys a fresh one writes */
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .max_lr = 0.1, .total_steps = 10, .last_epoch = 3), "param group 0 has no 'max_lr'");
    tn_optim_set(o, 0, "lr", 0.05);
    /* a second scheduler chains on the current lr (initial_lr kept) */
    s = tn_lr_scheduler_exponential_lr(o, .gamma = 0.5);
    CHECK(tn_optim_get(o, 0, "initial_lr") == 0.1 && tn_optim_get(o, 0, "lr") == 0.05);
    tn_lr_scheduler_step(s);
    CHECK_CLOSE(tn_optim_get(o, 0, "lr"), 0.025, 1e-17);
    tn_lr_scheduler_free(s);
    /* resuming with last_epoch: initial_lr is used as the base */
    tn_optim_set(o, 0, "lr", 0.1);
    s = tn_lr_scheduler_step_lr(o, .step_size = 2, .gamma = 0.1, .last_epoch = 3);
    CHECK(s && tn_lr_scheduler_last_epoch(s) == 4);
    CHECK_CLOSE(tn_optim_get(o, 0, "lr"), 0.01, 1e-17);    /* epoch 4 is a step: the chainable form multiplies once */
    tn_lr_scheduler_free(s);
    /* OneCycleLR with epochs * steps_per_epoch, and stepping past the end */
    s = tn_lr_scheduler_one_cycle_lr(o, .max_lr = 1.0, .epochs = 2, .steps_per_epoch = 3, .cycle_momentum = false);
    CHECK(s && tn_optim_get(o, 0, "max_lr") == 1.0);
    CHECK_CLOSE(tn_optim_get(o, 0, "lr"), 1.0 / 25, 1e-16);
    for (int k = 0; k < 5; k++) CHECK(tn_lr_scheduler_step(s) == 0);
    CHECK(tn_optim_get(o, 0, "lr") == 1.0 / 25 / 1e4);   /* min_lr at total_steps - 1 */
    CHECK(tn_lr_scheduler_step(s) == 0);                /* one more is allowed, as PyTorch */
    CHECK_ERR(tn_lr_scheduler_step(s) == 0, "Tried to step 7 times");
    tn_lr_scheduler_free(s);
    /* SGD's momentum cycles even when it was 0 (PyTorch sets it to max_momentum) */
    s = tn_lr_scheduler_one_cycle_lr(o, .max_lr = 0.5, .total_steps = 10);
    CHECK(tn_optim_get(o, 0, "momentum") == 0.95 && tn_optim_get(o, 0, "base_momentum") == 0.85);
    tn_lr_scheduler_free(s);
    tn_optim_free(o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* ------------------------------------------------------------------------------------ */
/* 5. state_dict                                                                           */
/* ------------------------------------------------------------------------------------ */
TEST(state_dict_layout) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *ps[NP];
    make_params(ps, TN_F64);
    tn_optim *o = tn_optim_adam(ps, 1, .lr = 0.01, .amsgrad = true);
    tn_optim_add_param_group(o, ps + 1, 1, .betas = {0.5, 0.75});
    for (int k = 0; k < 3; k++) { set_grads(ps, NP, k); tn_optim_step(o); }
    tn_dict *sd = tn_optim_state_dict(o);
    static const char *const keys[] = {
        "state.0.step", "state.0.exp_avg", "state.0.exp_avg_sq", "state.0.max_exp_avg_sq", "state.1.step", "state.1.exp_avg",
        "state.1.exp_avg_sq", "state.1.max_exp_avg_sq", "param_groups.0.lr", "param_groups.0.betas.0", "param_groups.0.betas.1",
        "param_groups.0.eps", "param_groups.0.weight_decay", "param_groups.0.amsgrad", "param_groups.0.maximize",
        "param_groups.0.capturable", "param_groups.0.params", "param_groups.1.lr", "param_groups.1.betas.0", "param_groups.1.betas.1",
        "param_groups.1.eps", "param_groups.1.weight_decay", "param_groups.1.amsgrad", "param_groups.1.maximize",
        "param_groups.1.capturable", "param_groups.1.params"};
    CHECK(tn_dict_len(sd) == (int)(sizeof keys / sizeof keys[0]));
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) CHECK_MSG(tn_dict_contains(sd, keys[i]), "missing %s", keys[i]);
    tn_tensor *st = tn_dict_get(sd, "state.1.step");
    CHECK(tn_get_dtype(st) == TN_F32 && tn_ndim(st) == 0 && elem(st, 0) == 3);
    tn_tensor *ea = tn_dict_get(sd, "state.0.exp_avg");
    CHECK(tn_ndim(ea) == 2 && tn_shape(ea)[0] == 2 && tn_get_dtype(ea) == TN_F64);
    CHECK(!tn_same_storage(ea, tn_optim_state(o, 0, "exp_avg")) && tn_equal(ea, tn_optim_state(o, 0, "exp_avg")));   /* a copy */
    CHECK(elem(tn_dict_get(sd, "param_groups.1.betas.1"), 0) == 0.75 && elem(tn_dict_get(sd, "param_groups.0.amsgrad"), 0) == 1);
    CHECK(tn_get_dtype(tn_dict_get(sd, "param_groups.0.lr")) == TN_F64 && tn_ndim(tn_dict_get(sd, "param_groups.0.lr")) == 0);
    tn_tensor *ids = tn_dict_get(sd, "param_groups.1.params");
    CHECK(tn_get_dtype(ids) == TN_I64 && tn_ndim(ids) == 1 && tn_numel(ids) == 1 && elem(ids, 0) == 1);
    {   /* a dict from before Adam had capturable loads, as False (PyTorch's __setstate__ default) */
        CHECK(tn_dict_remove(sd, "param_groups.0.capturable") == 0 && tn_dict_remove(sd, "param_groups.1.capturable") == 0);
        tn_optim *o2 = tn_optim_adam(ps, 1, .capturable = true);
        tn_optim_add_param_group(o2, ps + 1, 1);
        CHECK_MSG(tn_optim_load_state_dict(o2, sd) == 0, "%s", tn_last_error());
        CHECK(tn_optim_get(o2, 0, "capturable") == 0 && tn_optim_get(o2, 1, "capturable") == 0 && tn_optim_get(o2, 1, "betas[1]") == 0.75);
        tn_optim_free(o2);
    }
    tn_dict_free(sd);
    tn_optim_free(o);
    /* Adagrad makes its state at construction; LBFGS's words go to the metadata */
    o = tn_optim_adagrad(ps, NP, .initial_accumulator_value = 0.25);
    sd = tn_optim_state_dict(o);
    CHECK(tn_dict_contains(sd, "state.1.sum") && elem(tn_dict_get(sd, "state.1.sum"), 2) == 0.25 && elem(tn_dict_get(sd, "state.0.step"), 0) == 0);
    tn_dict_free(sd);
    tn_optim_free(o);
    o = tn_optim_lbfgs(ps, NP, .line_search_fn = TN_LINE_SEARCH_STRONG_WOLFE);
    sd = tn_optim_state_dict(o);
    CHECK(tn_dict_get_meta(sd, "param_groups.0.line_search_fn") && !strcmp(tn_dict_get_meta(sd, "param_groups.0.line_search_fn"), "strong_wolfe"));
    CHECK(tn_dict_contains(sd, "param_groups.0.max_eval") && !tn_dict_contains(sd, "param_groups.0.line_search_fn"));
    tn_dict_free(sd);
    tn_optim_free(o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

static double quad_closure(void *user) {  /* LBFGS round trip: a closure over two parameters */
    tn_tensor **ps = (tn_tensor **)user;
    tn_set_grad(ps[0], NULL);
    tn_set_grad(ps[1], NULL);
    tn_scope_begin();
    tn_tensor *l = tn_add(tn_sum(tn_pow_scalar(tn_sub_scalar(ps[0], 0.3), 4)), tn_sum(tn_mul(tn_square(ps[1]), tn_exp(ps[1]))));
    double v = tn_backward(l) == 0 ? tn_item(l) : NAN;
    tn_scope_end();
    return v;
}
TEST(state_dict_round_trip) {
    static const char *const cases[][2] = {
        {"SGD", "lr=0.1, momentum=0.9, nesterov=True"}, {"Adam", "lr=0.01, amsgrad=True"}, {"AdamW", "lr=0.01"},
        {"RMSprop", "lr=0.01, momentum=0.9, centered=True"}, {"Adagrad", "lr=0.1, lr_decay=0.1"}, {"Adadelta", ""},
        {"Adamax", ""}, {"NAdam", "weight_decay=0.01"}, {"RAdam", "betas=(0.9, 0.9)"}, {"LBFGS", "history_size=3, max_iter=4"},
        {"LBFGS", "line_search_fn='strong_wolfe', max_iter=3"}};
    int64_t live0 = live_tensors();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tn_scope_begin();
        bool lbfgs = !strcmp(cases[c][0], "LBFGS");
        tn_tensor *ps[NP], *qs[NP];
        make_params(ps, TN_F64);
        tn_optim *o = tn_optim_create_str(cases[c][0], ps, NP, cases[c][1]);
        tn_dict *sd = NULL;
        for (int k = 0; k < 6; k++) {
            if (k == 4) {   /* save, and fresh parameters with the same values */
                sd = tn_optim_state_dict(o);
                for (int i = 0; i < NP; i++) qs[i] = leaf(tn_clone(tn_detach(ps[i])));
            }
            if (lbfgs) { double l = tn_optim_step_closure(o, quad_closure, ps); CHECK(l == l); }
            else { set_grads(ps, NP, k); CHECK(tn_optim_step(o) == 0); }
        }
        tn_optim *o2 = tn_optim_create_str(cases[c][0], qs, NP, lbfgs ? cases[c][1] : "lr=123");  /* options come from the dict */
        CHECK_MSG(tn_optim_load_state_dict(o2, sd) == 0, "%s: %s", cases[c][0], tn_last_error());
        tn_dict_free(sd);
        for (int k = 4; k < 6; k++) {
            if (lbfgs) { double l = tn_optim_step_closure(o2, quad_closure, qs); CHECK(l == l); }
            else { set_grads(qs, NP, k); CHECK(tn_optim_step(o2) == 0); }
        }
        double a[NE], b[NE];
        read_params(ps, a);
        read_params(qs, b);
        CHECK_MSG(memcmp(a, b, sizeof a) == 0, "%s(%s): the loaded optimizer's steps differ", cases[c][0], cases[c][1]);
        CHECK(tn_optim_get(o2, 0, "lr") == tn_optim_get(o, 0, "lr"));
        tn_optim_free(o);
        tn_optim_free(o2);
        tn_scope_end();
    }
    CHECK(live_tensors() == live0);
}

/* ------------------------------------------------------------------------------------ */
/* 6. clipping                                                                             */
/* ------------------------------------------------------------------------------------ */
TEST(clipping) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *p[3] = {leaf(tn_zeros(SH(2), TN_F64)), leaf(tn_zeros(SH(1), TN_F64)), leaf(tn_zeros(SH(3), TN_F64))};
    double g0[2] = {3, -4}, g1[1] = {12};
    for (int norm = 0; norm < 4; norm++) {
        tn_set_grad(p[0], tn_from_data(g0, SH(2), TN_F64));
        tn_set_grad(p[1], tn_from_data(g1, SH(1), TN_F64));
        double type = norm == 0 ? 2 : norm == 1 ? 1 : norm == 2 ? INFINITY : 2, expect = norm == 0 || norm == 3 ? 13 : norm == 1 ? 19 : 12;
        double max_norm = norm == 3 ? 100 : 6.5;
        double total = tn_clip_grad_norm_(p, 3, max_norm, .norm_type = type);   /* p[2] has no grad: skipped */
        CHECK_CLOSE(total, expect, 1e-12);
        double coef = fmin(max_norm / (expect + 1e-6), 1.0);
        CHECK_CLOSE(elem(tn_grad(p[0]), 0), 3 * coef, 1e-12);
        CHECK_CLOSE(elem(tn_grad(p[0]), 1), -4 * coef, 1e-12);
        CHECK_CLOSE(elem(tn_grad(p[1]), 0), 12 * coef, 1e-12);
    }
    CHECK(tn_grad(p[2]) == NULL);
    CHECK(tn_clip_grad_norm_(p + 2, 1, 1.0) == 0);             /* no grads: 0 */
    /* float32 grads: the norm is computed in float32 */
    tn_tensor *q = leaf(tn_zeros(SH(2), TN_F32));
    tn_set_grad(q, tn_to_dtype(tn_from_data(g0, SH(2), TN_F64), TN_F32));
    CHECK_CLOSE(tn_clip_grad_norm_(&q, 1, 1.0), 5, 1e-6);
    CHECK_CLOSE(elem(tn_grad(q), 1), -4 / (5 + 1e-6), 1e-7);
    /* clip_grad_value_ */
    double g2[3] = {-3, 0.5, 7};
    tn_set_grad(p[2], tn_from_data(g2, SH(3), TN_F64));
    CHECK(tn_clip_grad_value_(p, 3, 1.0) == 0);
    CHECK(elem(tn_grad(p[2]), 0) == -1 && elem(tn_grad(p[2]), 1) == 0.5 && elem(tn_grad(p[2]), 2) == 1);
    CHECK(elem(tn_grad(p[1]), 0) == 1);
    for (int i = 0; i < 3; i++) tn_set_grad(p[i], NULL);
    tn_set_grad(q, NULL);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* ------------------------------------------------------------------------------------ */
/* 7. errors                                                                               */
/* ------------------------------------------------------------------------------------ */
static double nan_closure(void *user) { (void)user; return NAN; }
TEST(errors) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *ps[NP];
    make_params(ps, TN_F64);
    /* kinds and options */
    CHECK_ERR(tn_optim_create("Adamm", ps, NP), "tn_optim_create: unknown optimizer 'Adamm'");
    CHECK_ERR(tn_optim_create_str("SGD", ps, NP, "lr=0.1, momentom=0.9"), "unknown option 'momentom'");
    CHECK_ERR(tn_optim_sgd(ps, NP, .lr = -1), "tn_optim_sgd: Invalid learning rate: -1");
    CHECK_ERR(tn_optim_create_str("SGD", ps, NP, "lr=-1"), "tn_optim_sgd: Invalid learning rate: -1");
    CHECK_ERR(tn_optim_sgd(ps, NP, .momentum = -0.5), "Invalid momentum value: -0.5");
    CHECK_ERR(tn_optim_sgd(ps, NP, .nesterov = true), "Nesterov momentum requires a momentum and zero dampening");
    CHECK_ERR(tn_optim_sgd(ps, NP, .momentum = 0.9, .dampening = 0.1, .nesterov = true), "Nesterov momentum requires");
    CHECK_ERR(tn_optim_adam(ps, NP, .betas = {1.0, 0.9}), "Invalid beta parameter at index 0: 1");
    CHECK_ERR(tn_optim_adam(ps, NP, .betas = {0.9, -0.1}), "Invalid beta parameter at index 1: -0.1");
    CHECK_ERR(tn_optim_create_str("Adam", ps, NP, "betas=0.9"), "needs a pair");
    CHECK_ERR(tn_optim_adam(ps, NP, .eps = -1e-3), "Invalid epsilon value: -0.001");
    CHECK_ERR(tn_optim_adamw(ps, NP, .weight_decay = -1), "Invalid weight_decay value: -1");
    CHECK_ERR(tn_optim_create_str("Adam", ps, NP, "lr=nan"), "Invalid learning rate: nan");   /* given as text: NaN is a value */
    CHECK_ERR(tn_optim_create_str("Adam", ps, NP, "amsgrad=maybe"), "expected True or False");
    CHECK_ERR(tn_optim_create_str("Adam", ps, NP, "lr=fast"), "tn_optim_adam: option lr=fast is not a number");
    CHECK_ERR(tn_optim_create_str("RMSprop", ps, NP, "capturable=True"), "capturable=True is not supported");
    {   /* Adam takes capturable=True; its step wants the parameters on a GPU, as PyTorch's */
        tn_optim *ca = tn_optim_create_str("Adam", ps, NP, "capturable=True");
        CHECK(ca != NULL && tn_optim_get(ca, 0, "capturable") == 1);
        for (int i = 0; i < NP; i++) tn_set_grad(ps[i], tn_ones_like(ps[i]));
        CHECK_ERR(tn_optim_step(ca) == 0, "If capturable=True, params and state_steps must be on supported devices: ['cuda']");
        for (int i = 0; i < NP; i++) tn_set_grad(ps[i], NULL);
        tn_optim_free(ca);
    }
    CHECK_ERR(tn_optim_create_str("Adam", ps, NP, "nesterov=True"), "unknown option 'nesterov'");
    CHECK_ERR(tn_optim_rmsprop(ps, NP, .alpha = -1), "Invalid alpha value");
    CHECK_ERR(tn_optim_adadelta(ps, NP, .rho = 1.5), "Invalid rho value: 1.5");
    CHECK_ERR(tn_optim_adagrad(ps, NP, .lr_decay = -1), "Invalid lr_decay value");
    CHECK_ERR(tn_optim_adagrad(ps, NP, .initial_accumulator_value = -1), "Invalid initial_accumulator_value value");
    CHECK_ERR(tn_optim_nadam(ps, NP, .momentum_decay = -1), "Invalid momentum_decay value");
    CHECK_ERR(tn_optim_create_str("LBFGS", ps, NP, "line_search_fn='armijo'"), "expected one of None|strong_wolfe");
    CHECK_ERR(tn_optim_lbfgs(ps, NP, .history_size = 0), "history_size");
    CHECK_ERR(tn_optim_create_str("LBFGS", ps, NP, "max_iter=2.5"), "tn_optim_lbfgs: option max_iter=2.5: expected an integer");
    CHECK_ERR(tn_optim_create_str("LBFGS", ps, NP, "foreach=True"), "unknown option 'foreach'");
    /* parameters */
    CHECK_ERR(tn_optim_sgd(ps, 0), "optimizer got an empty parameter list");
    tn_tensor *nl = tn_mul_scalar(ps[0], 2), *nr = tn_zeros(SH(2), TN_F64), *dup[2] = {ps[0], ps[0]};
    CHECK_ERR(tn_optim_sgd(&nl, 1), "can't optimize a non-leaf Tensor");
    CHECK_ERR(tn_optim_sgd(&nr, 1), "parameter 0 does not require grad");
    CHECK_ERR(tn_optim_sgd(dup, 2), "appears twice");
    tn_tensor *nulls[2] = {ps[0], NULL};
    tn_clear_error();
    CHECK(tn_optim_sgd(nulls, 2) == NULL && !strcmp(tn_last_error(), ""));   /* NULL passes through silently */
    tn_optim *o = tn_optim_sgd(ps, 1, .lr = 0.1);
    CHECK_ERR(tn_optim_add_param_group(o, ps, 1) == 0, "some parameters appear in more than one parameter group");
    CHECK_ERR(tn_optim_add_param_group(o, ps + 1, 1, .lr = -2) == 0, "tn_optim_add_param_group: Invalid learning rate: -2");
    CHECK(tn_optim_num_groups(o) == 1);
    CHECK_ERR(tn_optim_get(o, 0, "betas[0]") == tn_optim_get(o, 0, "betas[0]"), "has no option 'betas[0]'");
    CHECK_ERR(tn_optim_get(o, 3, "lr") == tn_optim_get(o, 3, "lr"), "group 3 out of range");
    CHECK_ERR(tn_optim_set(o, 0, "lrr", 1) == 0, "SGD has no option 'lrr'");
    CHECK_ERR(tn_optim_step_closure(o, nan_closure, NULL) == 0, "the closure returned NaN");
    tn_optim_free(o);
    o = tn_optim_adam(ps, NP);
    CHECK_ERR(tn_optim_get(o, 0, "betas") == 0, "betas is a pair");
    tn_optim_free(o);
    /* LBFGS */
    o = tn_optim_lbfgs(ps, NP);
    CHECK_ERR(tn_optim_step(o) == 0, "LBFGS needs a closure");
    CHECK_ERR(tn_optim_step_closure(o, NULL, NULL) == tn_optim_step_closure(o, NULL, NULL), "LBFGS needs a closure (got NULL)");
    CHECK_ERR(tn_optim_add_param_group(o, &nr, 1) == 0, "LBFGS doesn't support per-parameter options");
    tn_optim_free(o);
    /* state dicts */
    o = tn_optim_adam(ps, NP, .lr = 0.01);
    set_grads(ps, NP, 0);
    tn_optim_step(o);
    tn_dict *sd = tn_optim_state_dict(o);
    tn_optim *o2 = tn_optim_adam(ps, 1);
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "contains a parameter group that doesn't match the size");
    tn_optim_add_param_group(o2, ps + 1, 1);
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "different number of parameter groups");
    tn_optim_free(o2);
    o2 = tn_optim_adam(ps, NP, .lr = 0.5);
    tn_dict_remove(sd, "param_groups.0.eps");
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "missing key 'param_groups.0.eps'");
    CHECK(tn_optim_get(o2, 0, "lr") == 0.5 && tn_optim_state(o2, 0, "exp_avg") == NULL);   /* unchanged on error */
    tn_dict_set(sd, "param_groups.0.eps", tn_scalar_tensor(1e-8, TN_F64));
    tn_dict_set(sd, "state.1.exp_avg", tn_zeros(SH(5), TN_F64));
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "'state.1.exp_avg' has shape [5]");
    tn_dict_set(sd, "state.1.exp_avg", tn_zeros(SH(4), TN_F64));
    tn_dict_set(sd, "state.1.momentum_buffer", tn_zeros(SH(4), TN_F64));
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "Adam keeps no state 'momentum_buffer'");
    tn_dict_remove(sd, "state.1.momentum_buffer");
    tn_dict_set(sd, "state.7.step", tn_zeros(NULL, 0, TN_F32));
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "which is in no parameter group");
    tn_dict_remove(sd, "state.7.step");
    tn_dict_set(sd, "lr", tn_zeros(NULL, 0, TN_F32));
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "unexpected key 'lr'");
    tn_dict_remove(sd, "lr");
    tn_dict_set(sd, "param_groups.0.params", tn_zeros(SH(1), TN_F32));
    CHECK_ERR(tn_optim_load_state_dict(o2, sd) == 0, "must be a 1-d integer tensor");
    tn_dict_free(sd);
    CHECK(tn_optim_load_state_dict(o2, NULL) == -1);
    tn_optim_free(o2);
    tn_optim_free(o);
    /* schedulers */
    o = tn_optim_sgd(ps, NP, .lr = 0.1);
    CHECK_ERR(tn_lr_scheduler_create_str(o, "StepLRR", ""), "unknown scheduler 'StepLRR'");
    CHECK_ERR(tn_lr_scheduler_step_lr(o, .gamma = 0.5), "StepLR needs step_size");
    CHECK_ERR(tn_lr_scheduler_create_str(o, "StepLR", "step_size=3, gama=0.5"), "unknown option 'gama'");
    CHECK_ERR(tn_lr_scheduler_cosine_annealing_warm_restarts(o, .T_0 = 0), "Expected positive integer T_0, but got 0");
    CHECK_ERR(tn_lr_scheduler_linear_lr(o, .start_factor = 2), "Starting multiplicative factor expected");
    CHECK_ERR(tn_lr_scheduler_reduce_lr_on_plateau(o, .factor = 1.0), "Factor should be < 1.0.");
    CHECK_ERR(tn_lr_scheduler_create_str(o, "ReduceLROnPlateau", "mode='maximum'"), "expected one of min|max");
    CHECK_ERR(tn_lr_scheduler_reduce_lr_on_plateau(o, .min_lr_groups = TN_DOUBLES(0.1, 0.2)), "expected 1 min_lrs, got 2");
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .total_steps = 10), "OneCycleLR needs max_lr");
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .max_lr = 0.1), "You must define either total_steps OR (epochs AND steps_per_epoch)");
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .max_lr_groups = TN_DOUBLES(0.1, 0.2), .total_steps = 5), "expected 1 values for max_lr, got 2");
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(o, .max_lr = 0.1, .total_steps = 5, .pct_start = 1.5), "Expected float between 0 and 1 pct_start");
    CHECK_ERR(tn_lr_scheduler_step_lr(o, .step_size = 3, .last_epoch = 4), "param 'initial_lr' is not specified in param_groups[0]");
    tn_lr_scheduler *pl = tn_lr_scheduler_reduce_lr_on_plateau(o);
    tn_lr_scheduler *st = tn_lr_scheduler_step_lr(o, .step_size = 3);
    CHECK_ERR(tn_lr_scheduler_step(pl) == 0, "use tn_lr_scheduler_step_metric");
    CHECK_ERR(tn_lr_scheduler_step_metric(st, 1.0) == 0, "only ReduceLROnPlateau steps on a metric");
    CHECK_ERR(tn_lr_scheduler_get_last_lr(st, 1) == 0, "group 1 out of range");
    tn_optim *oa = tn_optim_adagrad(ps, NP);
    CHECK_ERR(tn_lr_scheduler_one_cycle_lr(oa, .max_lr = 0.1, .total_steps = 5), "optimizer must support momentum or beta1");
    tn_lr_scheduler *other = tn_lr_scheduler_exponential_lr(oa, .gamma = 0.5);
    tn_lr_scheduler *seq1[2] = {st, other}, *seq2[2] = {tn_lr_scheduler_exponential_lr(o, .gamma = 0.5), pl};
    int64_t ms = 3;
    CHECK_ERR(tn_lr_scheduler_sequential(o, seq1, 2, &ms), "to be different than the optimizer passed in");   /* frees both */
    CHECK_ERR(tn_lr_scheduler_sequential(o, seq2, 2, &ms), "does not support `ReduceLROnPlateau`");
    CHECK_ERR(tn_lr_scheduler_sequential(o, NULL, 0, NULL), "expects at least one scheduler");
    CHECK_ERR(tn_lr_scheduler_lambda(o, NULL, NULL), "lr_lambda is NULL");
    tn_optim_free(oa);
    tn_optim_free(o);
    /* clipping */
    CHECK_ERR(tn_clip_grad_norm_(NULL, 2, 1) == tn_clip_grad_norm_(NULL, 2, 1), "tn_clip_grad_norm_: need an array");
    CHECK_ERR(tn_clip_grad_value_(NULL, 2, 1) == 0, "tn_clip_grad_value_: need an array");
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

/* a training loop's memory stays flat: state is made once */
/* The CPU step's specialised loops (common rule and flag combinations, compiled with the
   flags as constants so they vectorise) give the bits of the general loop: the same rule
   with maximize=True on the negated gradient takes the general loop and computes the same
   numbers. Odd sizes (vector remainders), a transposed parameter, float32 and float64. */
TEST(specialised_loops_match_general) {
    static const char *const cases[][2] = {
        {"Adam", "lr=0.01"}, {"Adam", "lr=0.01, weight_decay=0.1"}, {"AdamW", "lr=0.01"},
        {"AdamW", "lr=0.01, weight_decay=0"}, {"SGD", "lr=0.1"}, {"SGD", "lr=0.1, weight_decay=0.1"},
        {"SGD", "lr=0.1, momentum=0.9"}, {"SGD", "lr=0.1, momentum=0.9, weight_decay=0.1, dampening=0.2"},
    };
    int64_t live0 = live_tensors();
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++)
        for (int dt = 0; dt < 2; dt++) {
            tn_scope_begin();
            tn_dtype dtype = dt ? TN_F64 : TN_F32;
            tn_manual_seed(40 + c);
            tn_tensor *init[3] = {tn_randn(SH(1003), dtype), tn_randn(SH(7), dtype), tn_transpose(tn_randn(SH(13, 9), dtype), 0, 1)};
            tn_tensor *a[3], *b[3];
            for (int i = 0; i < 3; i++) {
                a[i] = leaf(tn_clone(init[i]));
                b[i] = leaf(tn_clone(init[i]));
            }
            char opts[160];
            snprintf(opts, sizeof opts, "%s, maximize=True", cases[c][1]);
            tn_optim *oa = tn_optim_create_str(cases[c][0], a, 3, cases[c][1]), *ob = tn_optim_create_str(cases[c][0], b, 3, opts);
            CHECK_MSG(oa && ob, "%s(%s): %s", cases[c][0], cases[c][1], tn_last_error());
            for (int k = 0; k < 4 && oa && ob; k++) {
                for (int i = 0; i < 3; i++) {
                    tn_tensor *g = tn_randn(tn_shape(a[i]), tn_ndim(a[i]), dtype);
                    tn_set_grad(a[i], g);
                    tn_set_grad(b[i], tn_neg(g));
                }
                CHECK(tn_optim_step(oa) == 0 && tn_optim_step(ob) == 0);
                for (int i = 0; i < 3; i++) {
                    tn_tensor *ca = tn_contiguous(a[i]), *cb = tn_contiguous(b[i]);
                    CHECK_MSG(!memcmp(tn_data_ptr(ca), tn_data_ptr(cb), (size_t)tn_numel(ca) * tn_dtype_size(dtype)),
                              "%s(%s) %s step %d param %d: the specialised loop differs from the general one",
                              cases[c][0], cases[c][1], tn_dtype_name(dtype), k, i);
                }
            }
            tn_optim_free(oa);
            tn_optim_free(ob);
            tn_scope_end();
        }
    CHECK(live_tensors() == live0);
}

TEST(memory_flat) {
    int64_t live0 = live_tensors();
    tn_scope_begin();
    tn_tensor *ps[NP];
    make_params(ps, TN_F32);
    tn_optim *o = tn_optim_adamw(ps, NP, .lr = 0.01, .amsgrad = true);
    tn_lr_scheduler *s = tn_lr_scheduler_cosine_annealing_lr(o, .T_max = 50);
    tn_memory_stats m1 = {0, 0, 0, 0};
    for (int k = 0; k < 200; k++) {
        tn_scope_begin();
        tn_optim_zero_grad(o);
        tn_tensor *loss = tn_add(tn_sum(tn_square(ps[0])), tn_sum(tn_exp(ps[1])));
        tn_backward(loss);
        tn_clip_grad_norm_(ps, NP, 1.0);
        tn_optim_step(o);
        tn_lr_scheduler_step(s);
        tn_scope_end();
        if (k == 1) m1 = tn_memory_stats_get();
    }
    tn_memory_stats m2 = tn_memory_stats_get();
    CHECK(m1.live_tensors == m2.live_tensors && m1.live_bytes == m2.live_bytes);
    tn_lr_scheduler_free(s);
    tn_optim_free(o);
    tn_scope_end();
    CHECK(live_tensors() == live0);
}

int main(void) {
    run_oracle();
    RUN(optimizers_against_rules_and_torch);
    RUN(float32_adam);
    RUN(lbfgs_rosenbrock);
    RUN(param_groups_and_set);
    RUN(zero_grad_and_skipping);
    RUN(non_contiguous_parameters);
    RUN(schedulers);
    RUN(scheduler_details);
    RUN(state_dict_layout);
    RUN(state_dict_round_trip);
    RUN(clipping);
    RUN(errors);
    RUN(specialised_loops_match_general);
    RUN(memory_flat);
    free(orows);
    return tn_test_report();
}
