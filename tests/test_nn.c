/* test_nn.c — section 10 of tensor.h (nn functional) against PyTorch 1.13.
 *
 *  1. Hand-computed cases (conv of ones, pooling borders and indices, fold, norms, ...).
 *  2. The PyTorch oracle: each oracle case runs a tn_ op on random inputs (float64 and
 *     float32, non-contiguous views, batch 1, odd sizes, unbatched) and the gradients of
 *     sum(out * cotangent) for a random cotangent; the inputs, the cotangent and a Python
 *     expression are written to a temporary directory, and after all tests one Python
 *     process (/usr/bin/python3, or $PYTHON) runs the same expressions with torch and
 *     writes outputs and gradients back for comparison. Without torch the oracle part
 *     prints "skipped: torch not available" and everything else still runs.
 *  3. tn_gradcheck (float64) for every op; tn_gradgradcheck for the twice-differentiable ones.
 *  4. Dropout statistics, batch_norm running statistics, grad_fn names, error messages
 *     (op name and shapes), NULL pass-through.
 *
 * Each test runs in a forked child (a crash is one failed check, the rest still runs) and
 * must give back every tensor it made (tn_memory_stats_get). */
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, fork */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#ifdef __unix__
#include <unistd.h>
#include <sys/wait.h>
#endif

/* ------------------------------------------------------------------------------------ */
/* helpers                                                                                 */
/* ------------------------------------------------------------------------------------ */

#define SH(...) TN_SHAPE(__VA_ARGS__)
#define D(...) ((const double[]){__VA_ARGS__})
#define I(...) ((const int64_t[]){__VA_ARGS__})
#define NARGS_(...) ((int)(sizeof((tn_tensor *[]){__VA_ARGS__}) / sizeof(tn_tensor *)))
#define TS(...) (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__)

/* a leaf that requires grad (t must be a tensor made without history) */
static tn_tensor *leaf(tn_tensor *t) {
    if (t && tn_requires_grad_(t, true)) return NULL;
    return t;
}
#define RN(...) leaf(tn_randn(SH(__VA_ARGS__), TN_F64))                        /* N(0, 1), requires grad */
#define RN32(...) leaf(tn_randn(SH(__VA_ARGS__), TN_F32))
#define RNT(dt, ...) leaf(tn_randn(SH(__VA_ARGS__), dt))
#define CONST(...) tn_randn(SH(__VA_ARGS__), TN_F64)                           /* no grad */
static tn_tensor *mk(const double *v, const int64_t *shape, int nd) { return tn_from_data(v, shape, nd, TN_F64); }
#define T64(vals, ...) mk(vals, SH(__VA_ARGS__))                               /* T64(D(1, 2, 3), 3) */
#define IDX(vals, ...) tn_from_data(vals, SH(__VA_ARGS__), TN_I64)            /* IDX(I(0, 2), 2) */

/* all elements (row-major) as doubles, malloc'ed; *n receives the count */
static double *tdata(tn_tensor *t, int64_t *n) {
    *n = 0;
    if (!t) return NULL;
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *c = tn_contiguous(tn_to_dtype(tn_detach(t), TN_F64));
    int64_t m = c ? tn_numel(c) : 0;
    double *v = (double *)malloc((size_t)(m + 1) * sizeof(double));
    if (c && v) { memcpy(v, tn_data_ptr(c), (size_t)m * sizeof(double)); *n = m; }
    tn_scope_end();
    tn_no_grad_end();
    return v;
}
static bool close_(double a, double e, double tol) {
    if (a != a || e != e) return a != a && e != e;
    if (isinf(e) || isinf(a)) return a == e;
    return fabs(a - e) <= tol * (1 + fabs(e));
}
static void check_vals_(tn_tensor *t, const double *e, int64_t n, double tol, const char *what, int line) {
    if (!t) { fail_at(line, "%s is NULL (%s)", what, tn_last_error()); return; }
    int64_t m;
    double *v = tdata(t, &m);
    if (m != n) fail_at(line, "%s has %lld elements, expected %lld", what, (long long)m, (long long)n);
    else {
        int64_t bad = -1;
        for (int64_t i = 0; i < n && bad < 0; i++) if (!close_(v[i], e[i], tol)) bad = i;
        if (bad >= 0) fail_at(line, "%s[%lld] = %.12g, expected %.12g", what, (long long)bad, v[bad], e[bad]);
        else tn_test_passed++;
    }
    free(v);
}
/* CHECK_VALS(t, tol, v0, v1, ...): t's elements (row-major) within tol*(1+|e|) */
#define CHECK_VALS(t, tol, ...) do { const double e_[] = {__VA_ARGS__}; \
    check_vals_((t), e_, (int64_t)(sizeof e_ / sizeof e_[0]), (tol), #t, __LINE__); } while (0)
static void check_same_(tn_tensor *a, tn_tensor *b, double tol, const char *what, int line) {
    if (!a || !b) { fail_at(line, "%s: NULL (%s)", what, tn_last_error()); return; }
    int64_t na, nb;
    double *va = tdata(a, &na), *vb = tdata(b, &nb);
    if (na != nb) fail_at(line, "%s: %lld vs %lld elements", what, (long long)na, (long long)nb);
    else {
        int64_t bad = -1;
        for (int64_t i = 0; i < na && bad < 0; i++)   /* tol 0: the same bits (signed zeros, NaN payloads too) */
            if (tol == 0 ? memcmp(&va[i], &vb[i], sizeof va[i]) != 0 : !close_(va[i], vb[i], tol)) bad = i;
        if (bad >= 0) fail_at(line, "%s: element %lld: %.12g vs %.12g", what, (long long)bad, va[bad], vb[bad]);
        else tn_test_passed++;
    }
    free(va);
    free(vb);
}
#define CHECK_SAME(a, b, tol) check_same_((a), (b), (tol), #a " vs " #b, __LINE__)
static void check_shape_(tn_tensor *t, const int64_t *s, int nd, const char *what, int line) {
    if (!t) { fail_at(line, "%s is NULL (%s)", what, tn_last_error()); return; }
    bool ok = tn_ndim(t) == nd;
    for (int i = 0; ok && i < nd; i++) ok = tn_shape(t)[i] == s[i];
    if (!ok) {
        char buf[128] = "";
        int k = 0;
        for (int i = 0; i < tn_ndim(t) && k < 100; i++) k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%lld", i ? ", " : "", (long long)tn_shape(t)[i]);
        fail_at(line, "%s has shape [%s]", what, buf);
        return;
    }
    tn_test_passed++;
}
#define CHECK_SHAPE(t, ...) check_shape_((t), SH(__VA_ARGS__), #t, __LINE__)
static void check_name_(tn_tensor *t, const char *name, const char *what, int line) {
    const char *n = tn_grad_fn_name(t);
    if (!n || strcmp(n, name)) { fail_at(line, "grad_fn of %s is %s, expected %s", what, n ? n : "NULL", name); return; }
    tn_test_passed++;
}
#define CHECK_NAME(t, name) check_name_((t), (name), #t, __LINE__)
#define CHECK_DTYPE(t, dt) CHECK_MSG((t) && tn_get_dtype(t) == (dt), "dtype of %s is %s, expected %s", #t, (t) ? tn_dtype_name(tn_get_dtype(t)) : "(NULL)", tn_dtype_name(dt))

/* every test runs in a scope and must give back every tensor it made */
#define BEGIN tn_memory_stats s0_ = tn_memory_stats_get(); tn_scope_begin(); tn_manual_seed(42)
#define END tn_scope_end(); do { tn_memory_stats s1_ = tn_memory_stats_get(); \
    CHECK_MSG(s1_.live_tensors == s0_.live_tensors && s1_.live_bytes == s0_.live_bytes, \
              "leak: %lld tensors / %lld bytes live, expected %lld / %lld", (long long)s1_.live_tensors, \
              (long long)s1_.live_bytes, (long long)s0_.live_tensors, (long long)s0_.live_bytes); } while (0)

/* d sum(out * g) / d x (new reference in scope; g NULL = ones), or NULL */
static tn_tensor *grad_of(tn_tensor *out, tn_tensor *x, tn_tensor *g) {
    tn_tensor *r = NULL;
    if (!out || !x) return NULL;
    if (!g) g = tn_ones_like(out);
    if (tn_autograd_grad(&out, 1, &x, 1, &g, &r, .retain_graph = true, .allow_unused = true)) return NULL;
    return r ? r : tn_zeros_like(x);
}

/* ------------------------------------------------------------------------------------ */
/* gradcheck plumbing                                                                      */
/* ------------------------------------------------------------------------------------ */
#define IN0 in_[0]
#define IN1 in_[1]
#define IN2 in_[2]
#define IN3 in_[3]
#define GF(name, ...) static tn_tensor *name(tn_tensor *const *in_, int n_, void *u_) { \
    (void)n_; (void)u_; return (__VA_ARGS__); }

static void gc_run(const char *name, tn_gradcheck_fn fn, tn_tensor *const *ins, int n, int order, int line) {
    for (int k = 0; k < n; k++)
        if (!ins[k]) { fail_at(line, "%s: input %d is NULL (%s)", name, k, tn_last_error()); return; }
    int64_t live0 = tn_memory_stats_get().live_tensors;
    tn_clear_error();
    if (tn_gradcheck(fn, ins, n, NULL)) tn_test_passed++;
    else fail_at(line, "gradcheck %s: %s", name, tn_last_error());
    if (order >= 2) {
        tn_clear_error();
        if (tn_gradgradcheck(fn, ins, n, NULL)) tn_test_passed++;
        else fail_at(line, "gradgradcheck %s: %s", name, tn_last_error());
    }
    int64_t live1 = tn_memory_stats_get().live_tensors;
    if (live1 != live0) fail_at(line, "%s: %lld tensors leaked by gradcheck/gradgradcheck", name, (long long)(live1 - live0));
}
/* GC1: gradcheck; GC2: gradcheck and gradgradcheck (PyTorch's default tolerances) */
#define GC1(fn, ...) gc_run(#fn, fn, (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__), 1, __LINE__)
#define GC2(fn, ...) gc_run(#fn, fn, (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__), 2, __LINE__)

/* ------------------------------------------------------------------------------------ */
/* the PyTorch oracle                                                                      */
/* ------------------------------------------------------------------------------------ */
/* Files in a temporary directory: req.txt (one case per block: the Python code and the
   inputs), blob.bin (float64 input and cotangent values), cres.bin (the C side's results),
   torch.bin (written by the Python script). Cases are appended by the forked test children
   in order; oracle_finish() in the parent compares them. */
static char oc_dir[256];
static int oc_ncases;     /* cases registered so far (children send their count back) */
static bool oc_ok;        /* the directory exists */

static const char *oc_py =
    "import sys, struct, math\n"
    "try:\n"
    "    import numpy as np\n"
    "    import torch\n"
    "    import torch.nn.functional as F\n"
    "except Exception as e:\n"
    "    sys.exit(3)\n"
    "d = sys.argv[1]\n"
    "blob = np.fromfile(d + '/blob.bin', dtype=np.float64)\n"
    "DT = {0: torch.float32, 1: torch.float64, 2: torch.int32, 3: torch.int64, 4: torch.uint8, 5: torch.bool}\n"
    "CODE = {v: k for k, v in DT.items()}\n"
    "def sdpa(q, k, v, mask=None, causal=False, scale=None):\n"
    "    L, S = q.size(-2), k.size(-2)\n"
    "    a = (q @ k.transpose(-2, -1)) * (scale if scale else 1 / math.sqrt(q.size(-1)))\n"
    "    if causal:\n"
    "        mask = torch.ones(L, S, dtype=torch.bool).tril()\n"
    "    if mask is not None:\n"
    "        a = a.masked_fill(~mask, float('-inf')) if mask.dtype == torch.bool else a + mask\n"
    "    return torch.softmax(a, -1) @ v\n"
    "def rec(f, t):\n"
    "    t = t.detach()\n"
    "    f.write(struct.pack('<qq', CODE.get(t.dtype, 1), t.dim()))\n"
    "    f.write(struct.pack('<%dq' % t.dim(), *t.shape))\n"
    "    f.write(t.to(torch.float64).contiguous().numpy().astype('<f8').tobytes())\n"
    "def arr(off, shape):\n"
    "    n = 1\n"
    "    for s in shape: n *= s\n"
    "    return blob[off:off + n].reshape(shape)\n"
    "out = open(d + '/torch.bin', 'wb')\n"
    "lines = open(d + '/req.txt').read().split('\\n')\n"
    "i = 0\n"
    "while i < len(lines):\n"
    "    if not lines[i].startswith('case '):\n"
    "        i += 1\n"
    "        continue\n"
    "    cid = int(lines[i].split()[1]); code = lines[i + 1][5:]; i += 2\n"
    "    ins = []; cot = None\n"
    "    while lines[i] != 'end':\n"
    "        w = lines[i].split(); i += 1\n"
    "        if w[0] == 'in':\n"
    "            dt, rg, nd = int(w[1]), int(w[2]), int(w[3])\n"
    "            ins.append((dt, rg, [int(s) for s in w[4:4 + nd]], int(w[4 + nd])))\n"
    "        elif w[0] == 'cot':\n"
    "            nd = int(w[1]); cot = ([int(s) for s in w[2:2 + nd]], int(w[2 + nd]))\n"
    "    i += 1\n"
    "    ns = {'torch': torch, 'F': F, 'math': math, 'sdpa': sdpa, 'inf': float('inf')}\n"
    "    xs = []\n"
    "    for k, (dt, rg, shape, off) in enumerate(ins):\n"
    "        t = torch.from_numpy(arr(off, shape).copy()).to(DT[dt])\n"
    "        if rg: t.requires_grad_(True)\n"
    "        ns['x%d' % k] = t; xs.append(t)\n"
    "    try:\n"
    "        if code.startswith('exec:'):\n"
    "            exec(code[5:], ns); r = ns['out']; extras = list(ns.get('extras', []))\n"
    "        else:\n"
    "            r = eval(code, ns); extras = []\n"
    "            if isinstance(r, tuple): r, extras = r[0], list(r[1:])\n"
    "        gin = [x for x, c in zip(xs, ins) if c[1]]\n"
    "        grads = [torch.zeros_like(x) for x in gin]\n"
    "        if gin and cot is not None and r.requires_grad:\n"
    "            g = torch.from_numpy(arr(cot[1], cot[0]).copy()).to(r.dtype)\n"
    "            gs = torch.autograd.grad(r, gin, g, allow_unused=True)\n"
    "            grads = [a if a is not None else torch.zeros_like(x) for a, x in zip(gs, gin)]\n"
    "        res = [r] + extras + grads\n"
    "        msg = (r.grad_fn.name() if r.grad_fn is not None else 'None').encode()\n"
    "    except Exception as e:\n"
    "        res = None; msg = ('%s: %s' % (type(e).__name__, e)).encode()[:300]\n"
    "    out.write(struct.pack('<qqq', cid, -1 if res is None else len(res), len(msg))); out.write(msg)\n"
    "    for t in res or []: rec(out, t)\n"
    "out.close()\n";

static FILE *oc_open(const char *name, const char *mode) {
    char path[400];
    snprintf(path, sizeof path, "%s/%s", oc_dir, name);
    return fopen(path, mode);
}
static void oc_put_rec(FILE *f, tn_tensor *t) {
    int64_t h[2] = {t ? (int64_t)tn_get_dtype(t) : -1, t ? tn_ndim(t) : -1}, n;
    fwrite(h, sizeof h, 1, f);
    if (!t) return;
    fwrite(tn_shape(t), sizeof(int64_t), (size_t)tn_ndim(t), f);
    double *v = tdata(t, &n);
    if (v) fwrite(v, sizeof(double), (size_t)n, f);
    free(v);
}
/* the values of t appended to blob.bin; returns their offset (in doubles) */
static long oc_put_blob(FILE *blob, tn_tensor *t) {
    fseek(blob, 0, SEEK_END);
    long off = ftell(blob) / (long)sizeof(double);
    int64_t n;
    double *v = tdata(t, &n);
    if (v) fwrite(v, sizeof(double), (size_t)n, blob);
    free(v);
    return off;
}
static void oc_put_shape(FILE *f, tn_tensor *t) {
    fprintf(f, " %d", tn_ndim(t));
    for (int d = 0; d < tn_ndim(t); d++) fprintf(f, " %lld", (long long)tn_shape(t)[d]);
}

/* One oracle case: out (and extras: indices, updated running stats) computed by the C side
   from ins; code is Python over x0, x1, ... (an expression, or "exec:" statements setting
   out and extras). Inputs that require grad get d sum(out * cot)/d input on both sides. */
static bool oc_expect_err;   /* set by ORACLE_SWEEP: a C error must be an error in torch too */
static void oracle_(int line, double tol, tn_tensor *out, tn_tensor *const *extras, int nextra, const char *code,
                    tn_tensor *const *ins, int nin) {
    if (!oc_ok) return;
    tn_scope_begin();
    const char *err = out ? "" : tn_last_error();
    char errbuf[200];
    snprintf(errbuf, sizeof errbuf, "%s%.180s", !out && oc_expect_err ? "EXPECTERR:" : "", err);
    tn_tensor *gin[16], *grads[16], *cot = NULL;
    int ng = 0;
    for (int k = 0; k < nin && ng < 16; k++) if (ins[k] && tn_requires_grad(ins[k])) gin[ng++] = ins[k];
    for (int k = 0; k < ng; k++) grads[k] = NULL;
    if (out && ng && tn_requires_grad(out)) {
        tn_generator *gen = tn_generator_new(1000 + (uint64_t)oc_ncases);
        cot = tn_randn_gen(tn_shape(out), tn_ndim(out), tn_get_dtype(out), gen);
        tn_generator_free(gen);
        if (tn_autograd_grad(&out, 1, gin, ng, &cot, grads, .retain_graph = true, .allow_unused = true))
            snprintf(errbuf, sizeof errbuf, "backward failed: %.170s", tn_last_error());
    }
    for (int k = 0; k < ng; k++) if (!grads[k] && !errbuf[0]) grads[k] = tn_zeros_like(gin[k]);
    FILE *req = oc_open("req.txt", "a"), *blob = oc_open("blob.bin", "ab"), *cres = oc_open("cres.bin", "ab");
    if (req && blob && cres) {
        fprintf(req, "case %d\ncode %s\n", oc_ncases, code);
        for (int k = 0; k < nin; k++) {
            if (!ins[k]) continue;
            long off = oc_put_blob(blob, ins[k]);
            fprintf(req, "in %d %d", (int)tn_get_dtype(ins[k]), tn_requires_grad(ins[k]) ? 1 : 0);
            oc_put_shape(req, ins[k]);
            fprintf(req, " %ld\n", off);
        }
        if (cot) {
            long off = oc_put_blob(blob, cot);
            fprintf(req, "cot");
            oc_put_shape(req, cot);
            fprintf(req, " %ld\n", off);
        }
        fprintf(req, "end\n");
        /* C results: id, line, tol, test name, error, counts, then the records */
        int64_t hdr[4] = {oc_ncases, line, nextra, ng};
        char tname[64] = "", cerr[200] = "";
        snprintf(tname, sizeof tname, "%s", tn_test_current);
        snprintf(cerr, sizeof cerr, "%s", errbuf);
        fwrite(hdr, sizeof hdr, 1, cres);
        fwrite(&tol, sizeof tol, 1, cres);
        fwrite(tname, sizeof tname, 1, cres);
        fwrite(cerr, sizeof cerr, 1, cres);
        char gname[48] = "";
        snprintf(gname, sizeof gname, "%s", out && tn_grad_fn_name(out) ? tn_grad_fn_name(out) : "None");
        fwrite(gname, sizeof gname, 1, cres);
        int64_t clen = (int64_t)strlen(code);
        fwrite(&clen, sizeof clen, 1, cres);
        fwrite(code, 1, (size_t)clen, cres);
        oc_put_rec(cres, out);
        for (int k = 0; k < nextra; k++) oc_put_rec(cres, extras[k]);
        for (int k = 0; k < ng; k++) {
            int64_t which = 0;
            for (int j = 0; j < nin; j++) if (ins[j] == gin[k]) { which = j; break; }
            fwrite(&which, sizeof which, 1, cres);
            oc_put_rec(cres, grads[k]);
        }
        oc_ncases++;
    } else fail_at(line, "oracle: cannot write to %s", oc_dir);
    if (req) fclose(req);
    if (blob) fclose(blob);
    if (cres) fclose(cres);
    tn_scope_end();
}
/* ORACLE(tol, out, "F.op(x0, x1, ...)", in0, in1, ...) */
#define ORACLE(tol, out, code, ...) oracle_(__LINE__, (tol), (out), NULL, 0, (code), (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__))
/* ORACLE_X(tol, out, TS(extra0, ...), "code", in0, ...): the code's extra results (a tuple's
   tail, or the list `extras`) are compared with extra0, ... */
#define ORACLE_X(tol, out, extras, code, ...) oracle_(__LINE__, (tol), (out), extras, (code), (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__))
/* ORACLE_SWEEP: as ORACLE, but when the C side fails, torch must fail too (and vice versa) */
#define ORACLE_SWEEP(tol, out, code, ...) do { oc_expect_err = true; ORACLE(tol, out, code, __VA_ARGS__); oc_expect_err = false; } while (0)
#define ORACLE_SWEEP_X(tol, out, extras, code, ...) do { oc_expect_err = true; \
    oracle_(__LINE__, (tol), (out), extras, (code), (tn_tensor *[]){__VA_ARGS__}, NARGS_(__VA_ARGS__)); oc_expect_err = false; } while (0)
#define TOL64 1e-9
#define TOL32 2e-4

#ifdef __unix__
typedef struct oc_rec { int64_t dtype, nd, shape[TN_MAX_DIMS], n; double *v; } oc_rec;
static bool oc_read_rec(FILE *f, oc_rec *r) {
    memset(r, 0, sizeof *r);
    int64_t h[2];
    if (fread(h, sizeof h, 1, f) != 1) return false;
    r->dtype = h[0];
    r->nd = h[1];
    if (r->nd < 0) return true;
    if (r->nd > TN_MAX_DIMS || fread(r->shape, sizeof(int64_t), (size_t)r->nd, f) != (size_t)r->nd) return false;
    r->n = 1;
    for (int d = 0; d < r->nd; d++) r->n *= r->shape[d];
    r->v = (double *)malloc((size_t)(r->n + 1) * sizeof(double));
    return r->v && fread(r->v, sizeof(double), (size_t)r->n, f) == (size_t)r->n;
}
static void oc_shape_str(const oc_rec *r, char *buf, size_t cap) {
    int k = snprintf(buf, cap, "[");
    for (int d = 0; d < r->nd && k < (int)cap - 24; d++) k += snprintf(buf + k, cap - (size_t)k, d ? ", %lld" : "%lld", (long long)r->shape[d]);
    snprintf(buf + k, cap - (size_t)k, "]");
}
/* compare one C record with torch's; what names it ("out", "indices", "grad x1") */
static void oc_compare(const char *test, int line, const char *what, const oc_rec *c, const oc_rec *t, double tol, const char *code) {
    char sc[128], st[128];
    tn_test_current = test;
    if (c->nd < 0) { fail_at(line, "[oracle] %s: the C side gave NULL (%s)", what, code); return; }
    oc_shape_str(c, sc, sizeof sc);
    oc_shape_str(t, st, sizeof st);
    if (c->nd != t->nd || memcmp(c->shape, t->shape, (size_t)c->nd * sizeof(int64_t))) {
        fail_at(line, "[oracle] %s: shape %s, torch %s (%s)", what, sc, st, code);
        return;
    }
    if (c->dtype != t->dtype) {
        fail_at(line, "[oracle] %s: dtype %s, torch %s (%s)", what, tn_dtype_name((tn_dtype)c->dtype), tn_dtype_name((tn_dtype)t->dtype), code);
        return;
    }
    for (int64_t i = 0; i < c->n; i++)
        if (!close_(c->v[i], t->v[i], tol)) {
            fail_at(line, "[oracle] %s %s: element %lld = %.12g, torch %.12g (%s)", what, sc, (long long)i, c->v[i], t->v[i], code);
            return;
        }
    tn_test_passed++;
}
static const char *oc_python(void) {
    const char *p = getenv("PYTHON");
    if (p && *p) return p;
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}
#endif
static void oc_init(void) {
#ifndef __unix__
    (void)oc_py;
    printf("skipped: the PyTorch oracle needs a POSIX system\n");
    return;
#else
    snprintf(oc_dir, sizeof oc_dir, "/tmp/tn_test_nn_XXXXXX");
    oc_ok = mkdtemp(oc_dir) != NULL;
    if (!oc_ok) { printf("oracle: cannot create a temporary directory; PyTorch checks skipped\n"); return; }
    FILE *f = oc_open("oracle.py", "w");
    if (f) { fputs(oc_py, f); fclose(f); }
    const char *names[3] = {"req.txt", "blob.bin", "cres.bin"};
    for (int k = 0; k < 3; k++) { f = oc_open(names[k], "w"); if (f) fclose(f); }
#endif
}
#ifdef __unix__
static void oc_cleanup(void) {
    const char *names[6] = {"req.txt", "blob.bin", "cres.bin", "torch.bin", "oracle.py", "py.log"};
    char path[400];
    for (int k = 0; k < 6; k++) { snprintf(path, sizeof path, "%s/%s", oc_dir, names[k]); remove(path); }
    rmdir(oc_dir);
}
/* Run the Python side once and compare every case. */
static void oracle_finish(void) {
    if (!oc_ok) return;
    tn_test_current = "oracle";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "\"%s\" \"%s/oracle.py\" \"%s\" > \"%s/py.log\" 2>&1", oc_python(), oc_dir, oc_dir, oc_dir);
    fflush(stdout);
    int st = system(cmd);
    int rc = st == -1 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (rc == 3 || rc == 127) { printf("skipped: torch not available (%d PyTorch oracle cases not compared)\n", oc_ncases); oc_cleanup(); return; }
    if (rc != 0) {
        char log[2000] = "";
        FILE *lf = oc_open("py.log", "r");
        if (lf) { size_t k = fread(log, 1, sizeof log - 1, lf); log[k] = 0; fclose(lf); }
        fail_at(__LINE__, "oracle: the Python script failed (exit %d): %s", rc, log);
        oc_cleanup();
        return;
    }
    FILE *cf = oc_open("cres.bin", "rb"), *tf = oc_open("torch.bin", "rb");
    int compared = 0;
    bool verbose = getenv("TN_NN_VERBOSE") != NULL;
    for (int c = 0; cf && tf && c < oc_ncases; c++) {
        int64_t hdr[4], th[3];
        double tol;
        char tname[64], cerr[200], gname[48], msg[400] = "";
        if (fread(hdr, sizeof hdr, 1, cf) != 1 || fread(&tol, sizeof tol, 1, cf) != 1 || fread(tname, sizeof tname, 1, cf) != 1 ||
            fread(cerr, sizeof cerr, 1, cf) != 1 || fread(gname, sizeof gname, 1, cf) != 1 || fread(th, sizeof th, 1, tf) != 1 ||
            th[2] < 0 || th[2] >= (int64_t)sizeof msg || fread(msg, 1, (size_t)th[2], tf) != (size_t)th[2]) {
            fail_at(__LINE__, "oracle: result files end early at case %d", c);
            break;
        }
        msg[th[2]] = 0;
        tname[63] = cerr[199] = gname[47] = 0;
        int line = (int)hdr[1], nextra = (int)hdr[2], ng = (int)hdr[3];
        int64_t clen = 0;
        char code[400];
        if (fread(&clen, sizeof clen, 1, cf) != 1 || clen < 0 || clen > 100000) { fail_at(__LINE__, "oracle: bad case %d", c); break; }
        size_t keep = (size_t)clen < sizeof code - 1 ? (size_t)clen : sizeof code - 1;
        if (fread(code, 1, keep, cf) != keep || fseek(cf, (long)((size_t)clen - keep), SEEK_CUR)) { fail_at(__LINE__, "oracle: bad case %d", c); break; }
        code[keep] = 0;
        oc_rec cr, tr;
        bool torch_ok = th[1] >= 0;
        if (torch_ok && th[1] != 1 + nextra + ng) {
            tn_test_current = tname;
            fail_at(line, "[oracle] torch gave %lld results, expected %d (%s)", (long long)th[1], 1 + nextra + ng, code);
        }
        bool expect_err = strncmp(cerr, "EXPECTERR:", 10) == 0;
        tn_test_current = tname;
        if (expect_err && torch_ok) fail_at(line, "[oracle] C failed (%s) but torch succeeded (%s)", cerr + 10, code);
        else if (expect_err) { tn_test_passed++; compared++; }
        else if (!torch_ok) fail_at(line, "[oracle] torch failed: %s (%s)", msg, code);
        if (cerr[0] && !expect_err) fail_at(line, "[oracle] C side: %s (%s)", cerr, code);
        if (verbose) printf("case %d (%s:%d): C grad_fn %s, torch %s\n", c, tname, line, gname, torch_ok ? msg : "-");
        bool rd = true;
        for (int k = 0; rd && k < 1 + nextra + ng; k++) {
            int64_t which = -1;
            if (k > nextra && fread(&which, sizeof which, 1, cf) != 1) { rd = false; break; }
            rd = oc_read_rec(cf, &cr);
            if (!rd) { free(cr.v); break; }
            bool have_t = torch_ok && k < th[1];
            if (have_t && !oc_read_rec(tf, &tr)) { free(cr.v); free(tr.v); rd = false; break; }
            char what[32];
            if (k == 0) snprintf(what, sizeof what, "out");
            else if (k <= nextra) snprintf(what, sizeof what, "extra %d", k - 1);
            else snprintf(what, sizeof what, "grad x%lld", (long long)which);
            if (have_t && !cerr[0]) { oc_compare(tname, line, what, &cr, &tr, tol, code); compared++; }
            free(cr.v);
            if (have_t) free(tr.v);
        }
        /* torch records past the expected count */
        for (int64_t k = 1 + nextra + ng; rd && torch_ok && k < th[1]; k++) { rd = oc_read_rec(tf, &tr); free(tr.v); }
        if (!rd) { fail_at(__LINE__, "oracle: cannot read the records of case %d", c); break; }
    }
    if (!cf || !tf) fail_at(__LINE__, "oracle: cannot open the result files in %s", oc_dir);
    if (cf) fclose(cf);
    if (tf) fclose(tf);
    printf("oracle: %d cases, %d comparisons with PyTorch\n", oc_ncases, compared);
    if (!getenv("TN_NN_KEEP")) oc_cleanup();
}
#else
static void oracle_finish(void) {}
#endif

/* Python code with printf formatting (rotating buffers: several per statement are fine) */
static const char *PY(const char *fmt, ...) {
    static char bufs[8][1024];
    static int which;
    char *b = bufs[which++ & 7];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof bufs[0], fmt, ap);
    va_end(ap);
    return b;
}
/* a float32 leaf with t's values (rounded) */
static tn_tensor *f32(tn_tensor *t) { return leaf(tn_to_dtype(tn_detach(t), TN_F32)); }
/* a non-contiguous view with t's shape and values: t's values stored with dims a and b
   swapped, then transposed back (the gradient flows to the returned view) */
static tn_tensor *nc(tn_tensor *t, int64_t a, int64_t b) {
    tn_tensor *s = leaf(tn_contiguous(tn_transpose(tn_detach(t), a, b)));
    return tn_transpose(s, a, b);
}
#define PAIR(a, b) ((const int64_t[]){a, b})

/* ==================================================================================== */
/* 1. hand-computed cases                                                                 */
/* ==================================================================================== */
TEST(hand_conv) {
    BEGIN;
    /* a 3x3 image of ones and a 2x2 kernel of ones: every window sums 4 ones */
    tn_tensor *x = leaf(tn_ones(SH(1, 1, 3, 3), TN_F64)), *w = leaf(tn_ones(SH(1, 1, 2, 2), TN_F64));
    tn_tensor *y = tn_conv2d(x, w, NULL);
    CHECK_SHAPE(y, 1, 1, 2, 2);
    CHECK_VALS(y, 1e-12, 4, 4, 4, 4);
    CHECK_VALS(grad_of(y, x, NULL), 1e-12, 1, 2, 1, 2, 4, 2, 1, 2, 1);   /* windows covering each pixel */
    CHECK_VALS(grad_of(y, w, NULL), 1e-12, 4, 4, 4, 4);
    tn_tensor *b = leaf(T64(D(1), 1));
    CHECK_VALS(tn_conv2d(x, w, b), 1e-12, 5, 5, 5, 5);
    CHECK_VALS(grad_of(tn_conv2d(x, w, b), b, NULL), 1e-12, 4);
    /* padding 1: corners see one pixel, edges two */
    CHECK_VALS(tn_conv2d(x, w, NULL, .padding = 1), 1e-12, 1, 2, 2, 1, 2, 4, 4, 2, 2, 4, 4, 2, 1, 2, 2, 1);
    CHECK_VALS(tn_conv2d(x, w, NULL, .stride = 2, .padding = 1), 1e-12, 1, 2, 2, 4);
    /* 1x1 (the image is its own column matrix): a matmul per image, also channels-last and with groups */
    tn_tensor *x1 = tn_randn(SH(3, 4, 2, 5), TN_F64), *w1 = tn_randn(SH(6, 4, 1, 1), TN_F64), *b1 = tn_randn(SH(6), TN_F64);
    tn_tensor *mm1 = tn_add(tn_matmul(tn_reshape(w1, SH(6, 4)), tn_reshape(x1, SH(3, 4, 10))), tn_reshape(b1, SH(6, 1)));
    CHECK_SAME(tn_conv2d(x1, w1, b1), tn_reshape(mm1, SH(3, 6, 2, 5)), 1e-12);
    tn_tensor *xcl = tn_permute(tn_contiguous(tn_permute(x1, SH(0, 2, 3, 1))), SH(0, 3, 1, 2));
    CHECK_SAME(tn_conv2d(xcl, w1, b1), tn_reshape(mm1, SH(3, 6, 2, 5)), 1e-12);
    tn_tensor *wg = tn_randn(SH(6, 2, 1, 1), TN_F64), *wgf = tn_zeros(SH(6, 4), TN_F64);   /* groups 2 as a block-diagonal weight */
    tn_copy_(tn_slice(tn_slice(wgf, 0, 0, 3, 1), 1, 0, 2, 1), tn_reshape(tn_slice(wg, 0, 0, 3, 1), SH(3, 2)));
    tn_copy_(tn_slice(tn_slice(wgf, 0, 3, 6, 1), 1, 2, 4, 1), tn_reshape(tn_slice(wg, 0, 3, 6, 1), SH(3, 2)));
    CHECK_SAME(tn_conv2d(x1, wg, NULL, .groups = 2), tn_reshape(tn_matmul(wgf, tn_reshape(x1, SH(3, 4, 10))), SH(3, 6, 2, 5)), 1e-12);
    /* float32 as well */
    CHECK_VALS(tn_conv2d(tn_ones(SH(1, 1, 3, 3), TN_F32), tn_ones(SH(1, 1, 2, 2), TN_F32), NULL), 0, 4, 4, 4, 4);
    /* conv1d: a difference kernel, with stride, dilation and 'same' */
    tn_tensor *s = T64(D(1, 2, 3, 4, 5), 1, 1, 5), *k = T64(D(1, 0, -1), 1, 1, 3);
    CHECK_VALS(tn_conv1d(s, k, NULL), 1e-12, -2, -2, -2);
    CHECK_VALS(tn_conv1d(s, k, NULL, .stride = 2), 1e-12, -2, -2);
    CHECK_VALS(tn_conv1d(s, k, NULL, .dilation = 2), 1e-12, -4);
    CHECK_VALS(tn_conv1d(s, k, NULL, .padding = TN_PADDING_SAME), 1e-12, -2, -2, -2, -2, 4);
    /* an even kernel with 'same': the extra zero goes to the right */
    CHECK_VALS(tn_conv1d(s, T64(D(1, 2), 1, 1, 2), NULL, .padding = TN_PADDING_SAME), 1e-12, 5, 8, 11, 14, 5);
    /* unbatched [C, L] */
    CHECK_VALS(tn_conv1d(T64(D(1, 2, 3, 4, 5), 1, 5), k, NULL), 1e-12, -2, -2, -2);
    CHECK_SHAPE(tn_conv1d(T64(D(1, 2, 3, 4, 5), 1, 5), k, NULL), 1, 3);
    /* groups: two channels, each with its own kernel */
    tn_tensor *x2 = T64(D(1, 2, 3, 10, 20, 30), 1, 2, 3), *k2 = T64(D(1, 1, 1, -1), 2, 1, 2);
    CHECK_VALS(tn_conv1d(x2, k2, NULL, .groups = 2), 1e-12, 3, 5, -10, -10);
    /* transposed: each input scatters a copy of the kernel, stride apart */
    tn_tensor *t1 = T64(D(1, 2), 1, 1, 2), *k3 = T64(D(1, 1, 1), 1, 1, 3);
    CHECK_VALS(tn_conv_transpose1d(t1, k3, NULL, .stride = 2), 1e-12, 1, 1, 3, 2, 2);
    CHECK_VALS(tn_conv_transpose1d(t1, k3, NULL, .stride = 2, .padding = 1), 1e-12, 1, 3, 2);
    CHECK_VALS(tn_conv_transpose1d(t1, k3, NULL, .stride = 2, .output_padding = 1), 1e-12, 1, 1, 3, 2, 2, 0);
    CHECK_VALS(tn_conv_transpose1d(t1, k3, NULL, .dilation = 2), 1e-12, 1, 2, 1, 2, 1, 2);
    CHECK_VALS(tn_conv_transpose2d(tn_ones(SH(1, 1, 2, 2), TN_F64), tn_ones(SH(1, 1, 2, 2), TN_F64), NULL), 1e-12,
               1, 2, 1, 2, 4, 2, 1, 2, 1);
    END;
}

/* conv2d with a path knob at each level lo ... top (then left at top): the output and the
   input and weight gradients for a random output gradient agree with level lo's within tol
   (0: the same bits). */
static void conv_knob_agree(int *knob, int lo, int top, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *st, const int64_t *pd,
                            const int64_t *dl, int64_t groups, double tol, int line) {
    tn_tensor *y[3], *gx[3], *gw[3], *gy = NULL;
    tn_requires_grad_(x, true);
    for (int k = lo; k <= top; k++) {
        *knob = k;
        y[k] = tn_conv2d(x, w, b, .stride_hw = {st[0], st[1]}, .padding_hw = {pd[0], pd[1]}, .dilation_hw = {dl[0], dl[1]}, .groups = groups);
        if (!gy && y[k]) gy = tn_randn(tn_shape(y[k]), tn_ndim(y[k]), tn_get_dtype(x));
        gx[k] = grad_of(y[k], x, gy);
        gw[k] = grad_of(y[k], w, gy);
    }
    *knob = top;
    for (int k = lo + 1; k <= top; k++) {
        check_same_(y[lo], y[k], tol, "conv2d output", line);
        check_same_(gx[lo], gx[k], tol, "conv2d input gradient", line);
        check_same_(gw[lo], gw[k], tol, "conv2d weight gradient", line);
    }
}
/* conv2d's special paths (tn__conv_fast_paths = 1) against im2col + GEMM (0). */
static void conv_paths_agree(tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *st, const int64_t *pd, const int64_t *dl,
                             int64_t groups, double tol, int line) {
    conv_knob_agree(&tn__conv_fast_paths, 0, 1, x, w, b, st, pd, dl, groups, tol, line);
}

/* Winograd F(2x2, 3x3) (3x3, stride 1, undilated, 8+ channels both sides) against the
   im2col path: forward, input and weight gradients, float64 and float32; odd and even
   sizes, padding 0..3 (the input gradient by Winograd up to 2), bias, a non-contiguous
   input, 1x1 images, a case of several blocks of tile rows, and over 64 channels. */
TEST(winograd_conv) {
    BEGIN;
    static const int64_t cs[][7] = {   /* n, c, o, h, w, ph, pw */
        {2, 8, 8, 5, 5, 1, 1}, {1, 9, 13, 6, 7, 0, 0}, {3, 16, 8, 7, 4, 2, 1}, {2, 64, 64, 20, 56, 1, 1},
        {1, 8, 9, 3, 3, 0, 2}, {2, 8, 8, 1, 1, 1, 1}, {1, 10, 8, 9, 11, 3, 0}, {2, 12, 20, 14, 14, 1, 1},
        {1, 70, 67, 5, 6, 1, 1}};   /* the last: over 64 channels both ways (the weight transform's blocks of 64) */
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int d = 0; d < 2; d++) {
            const int64_t *c = cs[i], st[2] = {1, 1}, pd[2] = {c[5], c[6]}, dl[2] = {1, 1};
            tn_dtype dt = d ? TN_F32 : TN_F64;
            double tol = d ? 1e-4 : 1e-11;
            tn_tensor *x = i == 2 ? tn_transpose(tn_randn(SH(c[0], c[1], c[4], c[3]), dt), 2, 3) : tn_randn(SH(c[0], c[1], c[3], c[4]), dt);
            tn_tensor *w = leaf(tn_randn(SH(c[2], c[1], 3, 3), dt)), *b = i % 2 ? leaf(tn_randn(SH(c[2]), dt)) : NULL;
            conv_paths_agree(x, w, b, st, pd, dl, 1, tol, __LINE__);
        }
    END;
}

/* The Winograd transforms' AVX-512 and AVX2 rows (where the CPU has them; knob
   tn__wino_avx512 2 and 1) against the portable ones (0), bit for bit: output, input and weight gradients in float32; widths of 1 ... 37 (one and
   several 8-tile chunks, tiles split across the GEMM's 32-column panels, odd last columns),
   paddings 0 ... 2, a non-contiguous input, several blocks of tile rows. */
TEST(winograd_rows_agree) {
    BEGIN;
    static const int64_t cs[][7] = {   /* n, c, o, h, w, ph, pw */
        {2, 8, 8, 5, 1, 1, 1}, {1, 9, 13, 6, 7, 0, 0}, {3, 16, 8, 7, 14, 2, 1}, {2, 8, 16, 9, 16, 1, 2},
        {1, 8, 9, 3, 17, 0, 2}, {2, 12, 20, 14, 14, 1, 1}, {1, 8, 8, 11, 37, 1, 0}, {2, 32, 64, 28, 28, 1, 1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int64_t *c = cs[i], st[2] = {1, 1}, pd[2] = {c[5], c[6]}, dl[2] = {1, 1};
        tn_tensor *x = i == 2 ? tn_transpose(tn_randn(SH(c[0], c[1], c[4], c[3]), TN_F32), 2, 3) : tn_randn(SH(c[0], c[1], c[3], c[4]), TN_F32);
        tn_tensor *w = leaf(tn_randn(SH(c[2], c[1], 3, 3), TN_F32)), *b = i % 2 ? leaf(tn_randn(SH(c[2]), TN_F32)) : NULL;
        conv_knob_agree(&tn__wino_avx512, 0, 2, x, w, b, st, pd, dl, 1, 0, __LINE__);
    }
    END;
}

/* Convolutions with few products per output (K = C kh kw <= 27; the direct AVX-512 or AVX2
   loops where the CPU has them, knob tn__smallk_wide 2 or 1) against the im2col path (0),
   and the AVX2 loops against the AVX-512 ones bit for bit (on a CPU without AVX-512 both
   levels run AVX2): the output and the weight gradient
   (the input gradient keeps im2col); one and three channels, 1x1 to 5x5 kernels, widths
   of 1 ... 33 (16-wide vectors and their masked ends), paddings 0 ... 2, odd channel
   counts (the unpaired last one), K over 9 and not a multiple of it, a non-contiguous
   input, bias or none, and two threads. */
TEST(smallk_conv) {
    BEGIN;
    static const int64_t cs[][9] = {   /* n, c, o, h, w, kh, kw, ph, pw */
        {2, 1, 32, 28, 28, 3, 3, 1, 1}, {3, 3, 8, 9, 17, 3, 3, 1, 1}, {1, 1, 5, 12, 16, 5, 5, 2, 2}, {2, 2, 7, 6, 33, 1, 3, 0, 1},
        {1, 1, 3, 5, 1, 1, 1, 0, 0}, {2, 3, 6, 7, 15, 3, 3, 0, 2}, {1, 1, 4, 4, 4, 3, 3, 2, 0}, {2, 2, 9, 10, 20, 2, 5, 1, 2}};
    const int nt0 = tn_get_num_threads();
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const int64_t *c = cs[i], st[2] = {1, 1}, pd[2] = {c[7], c[8]}, dl[2] = {1, 1};
        tn_tensor *x = i == 3 ? tn_transpose(tn_randn(SH(c[0], c[1], c[4], c[3]), TN_F32), 2, 3) : tn_randn(SH(c[0], c[1], c[3], c[4]), TN_F32);
        tn_tensor *w = leaf(tn_randn(SH(c[2], c[1], c[5], c[6]), TN_F32)), *b = i % 2 ? NULL : leaf(tn_randn(SH(c[2]), TN_F32));
        tn_set_num_threads(i == 5 ? 2 : 1);
        conv_paths_agree(x, w, b, st, pd, dl, 1, 1e-4, __LINE__);
        conv_knob_agree(&tn__smallk_wide, 0, 2, x, w, b, st, pd, dl, 1, 1e-4, __LINE__);   /* im2col, AVX2, AVX-512 */
        conv_knob_agree(&tn__smallk_wide, 1, 2, x, w, b, st, pd, dl, 1, 0, __LINE__);      /* AVX2 and AVX-512: the same bits */
    }
    tn_set_num_threads(nt0);
    END;
}

/* Depthwise convolutions (groups = input channels; the direct loops) against the im2col
   path: multipliers 1 and 2, strides, dilations, paddings, non-square kernels, bias, a
   non-contiguous input; forward, input and weight gradients, float64 and float32. */
TEST(depthwise_conv) {
    BEGIN;
    static const int64_t cs[][13] = {   /* n, c, mult, h, w, kh, kw, sh, sw, ph, pw, dh, dw */
        {2, 3, 1, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1}, {1, 4, 2, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1}, {2, 2, 1, 8, 9, 5, 3, 1, 2, 2, 0, 1, 1},
        {1, 5, 3, 6, 6, 3, 3, 1, 1, 2, 2, 2, 2}, {3, 8, 1, 5, 4, 1, 3, 1, 1, 0, 1, 1, 1}, {1, 2, 1, 3, 3, 3, 3, 3, 3, 0, 0, 1, 1},
        {1, 16, 1, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
        for (int d = 0; d < 2; d++) {
            const int64_t *c = cs[i], st[2] = {c[7], c[8]}, pd[2] = {c[9], c[10]}, dl[2] = {c[11], c[12]}, O = c[1] * c[2];
            tn_dtype dt = d ? TN_F32 : TN_F64;
            double tol = d ? 1e-5 : 1e-12;
            tn_tensor *x = i == 2 ? tn_transpose(tn_randn(SH(c[0], c[1], c[4], c[3]), dt), 2, 3) : tn_randn(SH(c[0], c[1], c[3], c[4]), dt);
            tn_tensor *w = leaf(tn_randn(SH(O, 1, c[5], c[6]), dt)), *b = i % 2 ? NULL : leaf(tn_randn(SH(O), dt));
            conv_paths_agree(x, w, b, st, pd, dl, c[1], tol, __LINE__);
        }
    END;
}

/* 2x2 stride-2 max pooling: the AVX-512 and the AVX2 rows (where the CPU has them; knob
   tn__pool22_avx512 2 and 1) against the portable ones (0), exactly: values, indices,
   gradients; ties, NaNs and signed zeros, rows of 1 ... 40 windows (the 8- and 16-lane
   chunks and their masks), an odd last column, float32 and float64. */
TEST(pool_rows_agree) {
    BEGIN;
    for (int64_t ow = 1; ow <= 40; ow += ow < 18 ? 1 : 11)
        for (int d = 0; d < 2; d++) {
            const tn_dtype dt = d ? TN_F32 : TN_F64;
            const int64_t shape[4] = {2, 3, 5, 2 * ow + 1};
            tn_tensor *x = tn_sub_scalar(tn_floor(tn_mul_scalar(tn_rand(shape, 4, dt), 4)), 2);   /* few values: ties */
            x = tn_where(tn_lt_scalar(tn_rand(shape, 4, dt), 0.1), tn_full(shape, 4, -0.0, dt), x);   /* -0 ties +0: the first is kept */
            x = leaf(tn_where(tn_lt_scalar(tn_rand(shape, 4, dt), 0.08), tn_full(shape, 4, NAN, dt), x));
            tn_tensor *y[3], *idx[3], *g[3], *gy = tn_randn(SH(2, 3, 2, ow), dt);
            for (int k = 0; k < 3; k++) {
                tn__pool22_avx512 = k;
                y[k] = tn_max_pool2d_with_indices(x, &idx[k], 2, .stride = 2);
                g[k] = grad_of(y[k], x, gy);
            }
            tn__pool22_avx512 = 2;
            for (int k = 1; k < 3; k++) {
                check_same_(y[0], y[k], 0, "max_pool2d values", __LINE__);
                check_same_(idx[0], idx[k], 0, "max_pool2d indices", __LINE__);
                check_same_(g[0], g[k], 0, "max_pool2d gradient", __LINE__);
            }
        }
    END;
}

TEST(hand_fold) {
    BEGIN;
    tn_tensor *x = T64(D(1, 2, 3, 4, 5, 6, 7, 8, 9), 1, 1, 3, 3);
    tn_tensor *c = tn_im2col(x, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1));
    CHECK_SHAPE(c, 1, 4, 4);
    CHECK_VALS(c, 0, 1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9);
    /* fold sums the overlaps: folding ones counts the windows covering each pixel */
    tn_tensor *f = tn_col2im(tn_ones(SH(1, 4, 4), TN_F64), PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1));
    CHECK_SHAPE(f, 1, 1, 3, 3);
    CHECK_VALS(f, 0, 1, 2, 1, 2, 4, 2, 1, 2, 1);
    /* with padding and stride: corners of a zero-padded image */
    tn_tensor *cp = tn_im2col(x, PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), PAIR(2, 2));
    CHECK_SHAPE(cp, 1, 4, 4);
    CHECK_VALS(cp, 0, 0, 0, 0, 5, 0, 0, 4, 6, 0, 2, 0, 8, 1, 3, 7, 9);
    /* unbatched [C, H, W] -> [C*kh*kw, L] and back */
    CHECK_SHAPE(tn_im2col(T64(D(1, 2, 3, 4, 5, 6, 7, 8, 9), 1, 3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), 4, 4);
    CHECK_SHAPE(tn_col2im(tn_ones(SH(4, 4), TN_F64), PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), 1, 3, 3);
    END;
}

TEST(hand_pool) {
    BEGIN;
    tn_tensor *x = leaf(T64(D(1, 9, 2, 3, 4, 5, 8, 0, 7, 6, 11, 10, 12, 15, 14, 13), 1, 1, 4, 4)), *idx = NULL;
    tn_tensor *y = tn_max_pool2d_with_indices(x, &idx, 2);
    CHECK_VALS(y, 0, 9, 8, 15, 14);
    CHECK_VALS(idx, 0, 1, 6, 13, 14);
    CHECK_DTYPE(idx, TN_I64);
    CHECK_SHAPE(idx, 1, 1, 2, 2);
    CHECK_VALS(grad_of(y, x, NULL), 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0);
    /* padding: overlapping windows pick the same maximum twice; its gradient adds up */
    y = tn_max_pool2d_with_indices(x, &idx, 3, .stride = 2, .padding = 1);
    CHECK_VALS(y, 0, 9, 9, 15, 15);
    CHECK_VALS(idx, 0, 1, 1, 13, 13);
    CHECK_VALS(grad_of(y, x, NULL), 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0);
    /* ceil_mode: a last, partial window */
    y = tn_max_pool2d_with_indices(x, &idx, 3, .stride = 2, .ceil_mode = true);
    CHECK_SHAPE(y, 1, 1, 2, 2);
    CHECK_VALS(y, 0, 11, 11, 15, 14);
    CHECK_VALS(idx, 0, 10, 10, 13, 14);
    CHECK_SHAPE(tn_max_pool2d(x, 3, .stride = 2), 1, 1, 1, 1);
    /* dilation 2: window {0, 2} x {0, 2} */
    CHECK_VALS(tn_max_pool2d_with_indices(x, &idx, 2, .stride = 1, .dilation = 2), 0, 11, 10, 14, 15);
    CHECK_VALS(idx, 0, 10, 11, 14, 13);
    /* NaN propagates, as PyTorch */
    CHECK_VALS(tn_max_pool1d(T64(D(1, NAN, 3, 2), 1, 1, 4), 2), 0, NAN, 3);
    /* 2x2 stride 2 (an unrolled kernel): ties keep the first, the last NaN wins; float32, and a strided input */
    tn_tensor *xq = T64(D(1, 1, NAN, 2, 1, 0, 5, NAN), 1, 1, 2, 4);
    CHECK_VALS(tn_max_pool2d_with_indices(xq, &idx, 2, .stride = 2), 0, 1, NAN);
    CHECK_VALS(idx, 0, 0, 7);
    CHECK_VALS(tn_max_pool2d_with_indices(tn_to_dtype(xq, TN_F32), &idx, 2, .stride = 2), 0, 1, NAN);
    CHECK_VALS(idx, 0, 0, 7);
    CHECK_VALS(tn_max_pool2d_with_indices(tn_transpose(xq, 2, 3), &idx, 2, .stride = 2), 0, 1, NAN);   /* rows 1 1 | 1 0 | N 5 | 2 N */
    CHECK_VALS(idx, 0, 0, 7);
    /* average: count_include_pad counts the zeros of the padding */
    tn_tensor *s = T64(D(1, 2, 3, 4), 1, 1, 4);
    CHECK_VALS(tn_avg_pool1d(s, 2, .stride = 2, .padding = 1), 1e-12, 0.5, 2.5, 2);
    CHECK_VALS(tn_avg_pool1d(s, 2, .stride = 2, .padding = 1, .count_include_pad = false), 1e-12, 1, 2.5, 4);
    /* ceil_mode: the last window is cut at the end of the input (no padding to count) */
    CHECK_VALS(tn_avg_pool1d(s, 3, .stride = 2, .ceil_mode = true), 1e-12, 2, 3.5);
    CHECK_VALS(tn_avg_pool1d(s, 3, .stride = 2), 1e-12, 2);
    tn_tensor *x3 = leaf(T64(D(1, 2, 3, 4, 5, 6, 7, 8, 9), 1, 1, 3, 3));
    CHECK_VALS(tn_avg_pool2d(x3, 2, .stride = 2, .padding = 1), 1e-12, 0.25, 1.25, 2.75, 7);
    CHECK_VALS(tn_avg_pool2d(x3, 2, .stride = 2, .padding = 1, .count_include_pad = false), 1e-12, 1, 2.5, 5.5, 7);
    tn_tensor *ya = tn_avg_pool2d(x3, 2, .stride = 2, .padding = 1, .divisor_override = 3);
    CHECK_VALS(ya, 1e-12, 1. / 3, 5. / 3, 11. / 3, 28. / 3);
    CHECK_VALS(grad_of(ya, x3, NULL), 1e-12, 1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3, 1. / 3);
    CHECK_VALS(grad_of(tn_avg_pool2d(x3, 2, .stride = 2, .padding = 1, .count_include_pad = false), x3, NULL), 1e-12, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.5, 0.25, 0.25);
    /* stride 0 means stride = kernel */
    CHECK_VALS(tn_avg_pool2d(x3, 2), 1e-12, 3);
    /* adaptive windows [floor(i*in/out), ceil((i+1)*in/out)) overlap when in is odd */
    CHECK_VALS(tn_adaptive_avg_pool2d(x3, 2, 2), 1e-12, 3, 4, 6, 7);
    CHECK_VALS(tn_adaptive_avg_pool2d(x3, 1, 1), 1e-12, 5);
    CHECK_SHAPE(tn_adaptive_avg_pool2d(x3, 1, 1), 1, 1, 1, 1);
    CHECK_VALS(tn_adaptive_max_pool2d(x3, 2, 2, &idx), 0, 5, 6, 8, 9);
    CHECK_VALS(idx, 0, 4, 5, 7, 8);
    CHECK_VALS(tn_adaptive_max_pool2d(x3, 1, 3, &idx), 0, 7, 8, 9);
    CHECK_VALS(idx, 0, 6, 7, 8);
    END;
}

TEST(hand_norm) {
    BEGIN;
    const double r = 1.2247448713915890491;   /* 1 / sqrt(2/3) */
    tn_tensor *x = T64(D(1, 2, 3), 1, 3);
    CHECK_VALS(tn_layer_norm(x, I(3), 1, .eps = 0), 1e-12, -r, 0, r);
    CHECK_VALS(tn_layer_norm(x, I(3), 1, .weight = T64(D(2, 2, 2), 3), .bias = T64(D(1, 1, 1), 3), .eps = 0), 1e-12, 1 - 2 * r, 1, 1 + 2 * r);
    /* layer_norm over the last two dims */
    CHECK_VALS(tn_layer_norm(T64(D(1, 2, 3, 1, 2, 3), 2, 3), I(2, 3), 2, .eps = 0), 1e-12, -r, 0, r, -r, 0, r);
    CHECK_VALS(tn_group_norm(T64(D(1, 2, 3, 4, 5, 6), 1, 2, 3), 2, .eps = 0), 1e-12, -r, 0, r, -r, 0, r);
    /* batch_norm training: batch statistics; running stats with the unbiased variance */
    tn_tensor *b = T64(D(1, 2, 3, 4), 4, 1), *rm = tn_zeros(SH(1), TN_F64), *rv = tn_ones(SH(1), TN_F64);
    const double sd = sqrt(1.25 + 1e-5);
    CHECK_VALS(tn_batch_norm(b, rm, rv, .training = true), 1e-12, -1.5 / sd, -0.5 / sd, 0.5 / sd, 1.5 / sd);
    CHECK_VALS(rm, 1e-12, 0.25);
    CHECK_VALS(rv, 1e-12, 0.9 + 0.1 * 5. / 3);
    /* eval: the running statistics */
    CHECK_VALS(tn_batch_norm(b, rm, rv, .eps = 0), 1e-12, 0.75 / sqrt(0.9 + 0.5 / 3), 1.75 / sqrt(0.9 + 0.5 / 3),
               2.75 / sqrt(0.9 + 0.5 / 3), 3.75 / sqrt(0.9 + 0.5 / 3));
    CHECK_VALS(rm, 1e-12, 0.25);   /* eval leaves them alone */
    /* training without running stats */
    CHECK_VALS(tn_batch_norm(b, NULL, NULL, .weight = T64(D(2), 1), .bias = T64(D(1), 1), .training = true, .eps = 0), 1e-9, 1 - 3 / sqrt(1.25), 1 - 1 / sqrt(1.25),
               1 + 1 / sqrt(1.25), 1 + 3 / sqrt(1.25));
    /* instance_norm: each (sample, channel) plane on its own */
    CHECK_VALS(tn_instance_norm(T64(D(1, 2, 3, 5, 5, 8), 2, 1, 3), .eps = 0), 1e-12, -r, 0, r,
               -0.70710678118654752, -0.70710678118654752, 1.4142135623730950);
    END;
}

TEST(hand_misc) {
    BEGIN;
    /* embedding */
    tn_tensor *w = leaf(T64(D(0, 1, 2, 3, 4, 5), 3, 2)), *idx = IDX(I(2, 0, 1, 2), 2, 2);
    tn_tensor *e = tn_embedding(idx, w);
    CHECK_SHAPE(e, 2, 2, 2);
    CHECK_VALS(e, 0, 4, 5, 0, 1, 2, 3, 4, 5);
    CHECK_VALS(grad_of(e, w, NULL), 0, 1, 1, 1, 1, 2, 2);
    tn_tensor *ep = tn_embedding_padded(idx, w, 2);
    CHECK_VALS(ep, 0, 4, 5, 0, 1, 2, 3, 4, 5);                       /* the forward is unchanged */
    CHECK_VALS(grad_of(ep, w, NULL), 0, 1, 1, 1, 1, 0, 0);           /* the padding row gets no gradient */
    CHECK_VALS(grad_of(tn_embedding_padded(idx, w, -1), w, NULL), 0, 1, 1, 1, 1, 0, 0);   /* -1 is row 2 */
    CHECK_VALS(tn_embedding(tn_from_data((const int32_t[]){1, 0}, SH(2), TN_I32), w), 0, 2, 3, 0, 1);
    CHECK_SHAPE(tn_embedding(IDX(I(1), 1), w), 1, 2);
    CHECK_SHAPE(tn_embedding(tn_scalar_tensor(1, TN_I64), w), 2);    /* 0-d index: one row */
    /* one_hot */
    tn_tensor *oh = tn_one_hot(IDX(I(0, 2, 1), 3));
    CHECK_DTYPE(oh, TN_I64);
    CHECK_SHAPE(oh, 3, 3);
    CHECK_VALS(oh, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0);
    CHECK_SHAPE(tn_one_hot(IDX(I(0, 2, 1, 1), 2, 2), .num_classes = 5), 2, 2, 5);
    CHECK_VALS(tn_one_hot(IDX(I(0, 2, 1, 1), 2, 2), .num_classes = 4), 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0);
    /* softmax and log_softmax */
    tn_tensor *s = T64(D(1, 2, 3), 3);
    CHECK_VALS(tn_softmax(s, 0), 1e-12, 0.09003057317038046, 0.24472847105479764, 0.66524095577481770);
    CHECK_VALS(tn_log_softmax(s, -1), 1e-12, -2.4076059644443806, -1.4076059644443804, -0.4076059644443804);
    /* huge inputs: max subtracted */
    CHECK_VALS(tn_softmax(T64(D(1000, 1000), 2), 0), 1e-12, 0.5, 0.5);
    CHECK_VALS(tn_log_softmax(T64(D(-1000, 0), 2), 0), 1e-12, -1000, 0);
    /* integer input: refused as PyTorch ("softmax_lastdim_kernel_impl" not implemented for 'Long'); converted first, float32 */
    CHECK(tn_softmax(IDX(I(1, 2, 3), 3), 0) == NULL);
    tn_tensor *si = tn_softmax(tn_to_dtype(IDX(I(1, 2, 3), 3), TN_F32), 0);
    CHECK_DTYPE(si, TN_F32);
    CHECK_VALS(si, 1e-6, 0.09003057317038046, 0.24472847105479764, 0.66524095577481770);
    /* pixel shuffle: channel c*r*r + i*r + j goes to (h*r + i, w*r + j) */
    tn_tensor *ps = tn_pixel_shuffle(T64(D(1, 2, 3, 4, 5, 6, 7, 8), 1, 4, 1, 2), 2);
    CHECK_SHAPE(ps, 1, 1, 2, 4);
    CHECK_VALS(ps, 0, 1, 3, 2, 4, 5, 7, 6, 8);
    CHECK_VALS(tn_pixel_unshuffle(ps, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8);
    CHECK_SHAPE(tn_pixel_unshuffle(ps, 2), 1, 4, 1, 2);
    /* interpolate */
    tn_tensor *l = T64(D(1, 2), 1, 1, 2);
    CHECK_VALS(tn_interpolate(l, .scale_factor = TN_DOUBLES(2)), 0, 1, 1, 2, 2);
    CHECK_VALS(tn_interpolate(l, .size = TN_INTS(3), .mode = "linear", .align_corners = true), 1e-12, 1, 1.5, 2);
    CHECK_VALS(tn_interpolate(l, .size = TN_INTS(4), .mode = "linear"), 1e-12, 1, 1.25, 1.75, 2);
    CHECK_VALS(tn_interpolate(T64(D(1, 2, 3, 4), 1, 1, 2, 2), .size = TN_INTS(3, 3), .mode = "bilinear", .align_corners = true), 1e-12, 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4);
    CHECK_VALS(tn_interpolate(T64(D(1, 2, 3, 4), 1, 1, 4), .size = TN_INTS(2)), 0, 1, 3);
    /* attention: one query, two keys */
    tn_tensor *q = T64(D(1, 0), 1, 2), *k = T64(D(1, 0, 0, 1), 2, 2), *v = T64(D(1, 2, 3, 4), 2, 2);
    double a0 = 1 / (1 + exp(-1 / sqrt(2.0)));
    CHECK_VALS(tn_scaled_dot_product_attention(q, k, v), 1e-12, 3 - 2 * a0, 4 - 2 * a0);
    double a1 = 1 / (1 + exp(-2.0));
    CHECK_VALS(tn_scaled_dot_product_attention(q, k, v, .scale = 2), 1e-12, 3 - 2 * a1, 4 - 2 * a1);
    CHECK_VALS(tn_scaled_dot_product_attention(q, k, v, .attn_mask = tn_from_data((const bool[]){false, true}, SH(1, 2), TN_BOOL)), 1e-12, 3, 4);
    CHECK_VALS(tn_scaled_dot_product_attention(T64(D(1, 0, 0, 1), 2, 2), k, v, .is_causal = true), 1e-12, 1, 2, 3 - 2 * (1 - a0), 4 - 2 * (1 - a0));
    /* linear and bilinear */
    tn_tensor *lw = T64(D(1, 2, 3, 4, 5, 6), 2, 3);
    CHECK_VALS(tn_linear(T64(D(1, 1, 1), 3), lw, T64(D(10, 20), 2)), 1e-12, 16, 35);
    CHECK_VALS(tn_linear(T64(D(1, 0, 0, 0, 1, 0), 2, 3), lw, NULL), 1e-12, 1, 4, 2, 5);
    CHECK_VALS(tn_bilinear(T64(D(1, 2), 1, 2), T64(D(3, 4), 1, 2), T64(D(1, 0, 0, 1, 0, 1, 1, 0), 2, 2, 2), T64(D(0, 1), 2)), 1e-12, 11, 11);
    END;
}

TEST(hand_activations) {
    BEGIN;
    tn_tensor *x = T64(D(-7, -3, -1, -0.5, 0, 0.5, 1, 3, 7), 9);
    CHECK_VALS(tn_relu(x), 0, 0, 0, 0, 0, 0, 0.5, 1, 3, 7);
    CHECK_VALS(tn_relu6(x), 0, 0, 0, 0, 0, 0, 0.5, 1, 3, 6);
    CHECK_VALS(tn_leaky_relu(x, .negative_slope = 0.1), 1e-12, -0.7, -0.3, -0.1, -0.05, 0, 0.5, 1, 3, 7);
    CHECK_VALS(tn_hardtanh(x), 0, -1, -1, -1, -0.5, 0, 0.5, 1, 1, 1);
    CHECK_VALS(tn_hardtanh(x, .min_val = -2, .max_val = 0.25), 0, -2, -2, -1, -0.5, 0, 0.25, 0.25, 0.25, 0.25);
    CHECK_VALS(tn_hardsigmoid(x), 1e-12, 0, 0, 1. / 3, 2.5 / 6, 0.5, 3.5 / 6, 2. / 3, 1, 1);
    CHECK_VALS(tn_hardswish(x), 1e-12, 0, 0, -1. / 3, -0.5 * 2.5 / 6, 0, 0.5 * 3.5 / 6, 2. / 3, 3, 7);
    CHECK_VALS(tn_elu(T64(D(-1, 0, 2), 3)), 1e-12, expm1(-1.0), 0, 2);
    CHECK_VALS(tn_elu(T64(D(-1, 2), 2), .alpha = 0.5), 1e-12, 0.5 * expm1(-1.0), 2);
    CHECK_VALS(tn_celu(T64(D(-1, 2), 2), .alpha = 2), 1e-12, 2 * expm1(-0.5), 2);
    CHECK_VALS(tn_selu(T64(D(-1, 1), 2)), 1e-12, 1.0507009873554804934 * 1.6732632423543772848 * expm1(-1.0), 1.0507009873554804934);
    CHECK_VALS(tn_mish(T64(D(0, 1), 2)), 1e-12, 0, tanh(log1p(exp(1.0))));
    CHECK_VALS(tn_silu(T64(D(0, 1), 2)), 1e-12, 0, 1 / (1 + exp(-1.0)));
    CHECK_VALS(tn_gelu(T64(D(0, 1), 2)), 1e-12, 0, 0.5 * (1 + erf(1 / sqrt(2.0))));
    CHECK_VALS(tn_gelu(T64(D(1), 1), .approximate = TN_APPROXIMATE_TANH), 1e-12, 0.5 * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (1 + 0.044715))));
    CHECK_VALS(tn_softplus(T64(D(0, 30), 2)), 1e-12, log(2.0), 30);
    CHECK_VALS(tn_softplus(T64(D(1, 6), 2), .beta = 2, .threshold = 10), 1e-12, log1p(exp(2.0)) / 2, 6);   /* linear above threshold/beta */
    CHECK_VALS(tn_sigmoid(T64(D(0, -800), 2)), 1e-12, 0.5, 0);
    CHECK_VALS(tn_tanh(T64(D(0, 800), 2)), 1e-12, 0, 1);
    /* gradients at the kinks, as PyTorch: hardtanh and relu6 0 at the bounds, relu 0 at 0,
       leaky_relu the slope at 0, hardswish x/3 + 0.5 at +-3, hardsigmoid 0 at +-3 */
    tn_tensor *k = leaf(T64(D(-3, -1, 0, 1, 3, 6), 6));
    CHECK_VALS(grad_of(tn_relu(k), k, NULL), 0, 0, 0, 0, 1, 1, 1);
    CHECK_VALS(grad_of(tn_relu6(k), k, NULL), 0, 0, 0, 0, 1, 1, 0);
    CHECK_VALS(grad_of(tn_hardtanh(k), k, NULL), 0, 0, 0, 1, 0, 0, 0);
    CHECK_VALS(grad_of(tn_leaky_relu(k, .negative_slope = 0.25), k, NULL), 0, 0.25, 0.25, 0.25, 1, 1, 1);
    CHECK_VALS(grad_of(tn_hardswish(k), k, NULL), 1e-12, -0.5, 1. / 6, 0.5, 5. / 6, 1.5, 1);
    CHECK_VALS(grad_of(tn_hardsigmoid(k), k, NULL), 1e-12, 0, 1. / 6, 1. / 6, 1. / 6, 0, 0);
    CHECK_VALS(grad_of(tn_elu(k, .alpha = 2), k, NULL), 1e-12, 2 * exp(-3.0), 2 * exp(-1.0), 2, 1, 1, 1);
    /* float32 in, float32 out */
    tn_tensor *x32 = tn_to_dtype(x, TN_F32);
    tn_tensor *outs[] = {tn_relu6(x32), tn_leaky_relu(x32), tn_elu(x32), tn_selu(x32), tn_celu(x32), tn_hardtanh(x32),
                         tn_mish(x32), tn_hardswish(x32), tn_hardsigmoid(x32), tn_gelu(x32, .approximate = TN_APPROXIMATE_TANH), tn_silu(x32), tn_softmax(x32, 0)};
    for (int i = 0; i < (int)(sizeof outs / sizeof outs[0]); i++) CHECK_MSG(outs[i] && tn_get_dtype(outs[i]) == TN_F32, "activation %d: float32 in, float32 out", i);
    END;
}

/* ==================================================================================== */
/* 2. PyTorch oracle: outputs and gradients on random inputs                              */
/* ==================================================================================== */
TEST(oc_linear) {
    BEGIN;
    tn_tensor *x = RN(3, 5), *w = RN(4, 5), *b = RN(4);
    ORACLE(TOL64, tn_linear(x, w, b), "F.linear(x0, x1, x2)", x, w, b);
    ORACLE(TOL64, tn_linear(x, w, NULL), "F.linear(x0, x1)", x, w);
    tn_tensor *x3 = RN(2, 3, 5), *x1 = RN(5), *xb = RN(1, 5);
    ORACLE(TOL64, tn_linear(x3, w, b), "F.linear(x0, x1, x2)", x3, w, b);
    ORACLE(TOL64, tn_linear(x1, w, b), "F.linear(x0, x1, x2)", x1, w, b);
    ORACLE(TOL64, tn_linear(xb, w, b), "F.linear(x0, x1, x2)", xb, w, b);
    /* non-contiguous input and weight (weight stored as [in, out]) */
    tn_tensor *xv = nc(x, 0, 1), *wv = nc(w, 0, 1), *x3v = nc(x3, 0, 2);
    ORACLE(TOL64, tn_linear(xv, wv, b), "F.linear(x0, x1, x2)", xv, wv, b);
    ORACLE(TOL64, tn_linear(x3v, wv, NULL), "F.linear(x0, x1)", x3v, wv);
    tn_tensor *x32 = f32(x), *w32 = f32(w), *b32 = f32(b);
    tn_tensor *y32 = tn_linear(x32, w32, b32);
    CHECK_DTYPE(y32, TN_F32);
    ORACLE(TOL32, y32, "F.linear(x0, x1, x2)", x32, w32, b32);
    /* bilinear */
    tn_tensor *a = RN(3, 4), *c = RN(3, 5), *bw = RN(2, 4, 5), *bb = RN(2);
    ORACLE(TOL64, tn_bilinear(a, c, bw, bb), "F.bilinear(x0, x1, x2, x3)", a, c, bw, bb);
    ORACLE(TOL64, tn_bilinear(a, c, bw, NULL), "F.bilinear(x0, x1, x2)", a, c, bw);
    tn_tensor *a3 = RN(2, 1, 4), *c3 = RN(2, 1, 5), *bwv = nc(bw, 1, 2), *av = nc(a, 0, 1);
    ORACLE(TOL64, tn_bilinear(a3, c3, bwv, bb), "F.bilinear(x0, x1, x2, x3)", a3, c3, bwv, bb);
    ORACLE(TOL64, tn_bilinear(av, c, bw, bb), "F.bilinear(x0, x1, x2, x3)", av, c, bw, bb);
    tn_tensor *a1 = RN(4), *c1 = RN(5);
    ORACLE(TOL64, tn_bilinear(a1, c1, bw, bb), "F.bilinear(x0, x1, x2, x3)", a1, c1, bw, bb);
    tn_tensor *a32 = f32(a), *c32 = f32(c), *bw32 = f32(bw), *bb32 = f32(bb);
    ORACLE(TOL32, tn_bilinear(a32, c32, bw32, bb32), "F.bilinear(x0, x1, x2, x3)", a32, c32, bw32, bb32);
    END;
}

/* conv2d with the pairs (.stride_hw, ...), or the ints when the pairs agree */
static void oc_conv2d_case(int line, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *s, const int64_t *p, const int64_t *d, int64_t g, double tol) {
    tn_tensor *y = s[0] == s[1] && p[0] == p[1] && d[0] == d[1] ? tn_conv2d(x, w, b, .stride = s[0], .padding = p[0], .dilation = d[0], .groups = g) : tn_conv2d(x, w, b, .stride_hw = {s[0], s[1]}, .padding_hw = {p[0], p[1]}, .dilation_hw = {d[0], d[1]}, .groups = g);
    const char *pad = p[0] == TN_PADDING_SAME ? "'same'" : PY("(%lld, %lld)", (long long)p[0], (long long)p[1]);
    if (b) oracle_(line, tol, y, NULL, 0, PY("F.conv2d(x0, x1, x2, (%lld, %lld), %s, (%lld, %lld), %lld)", (long long)s[0], (long long)s[1], pad, (long long)d[0], (long long)d[1], (long long)g), TS(x, w, b));
    else oracle_(line, tol, y, NULL, 0, PY("F.conv2d(x0, x1, None, (%lld, %lld), %s, (%lld, %lld), %lld)", (long long)s[0], (long long)s[1], pad, (long long)d[0], (long long)d[1], (long long)g), TS(x, w));
}
#define OC_CONV2D(x, w, b, s, p, d, g, tol) oc_conv2d_case(__LINE__, x, w, b, s, p, d, g, tol)

TEST(oc_conv) {
    BEGIN;
    tn_tensor *x = RN(2, 3, 7, 5), *w = RN(4, 3, 3, 3), *b = RN(4);
    OC_CONV2D(x, w, b, PAIR(1, 1), PAIR(0, 0), PAIR(1, 1), 1, TOL64);
    OC_CONV2D(x, w, b, PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), 1, TOL64);
    OC_CONV2D(x, w, NULL, PAIR(2, 1), PAIR(1, 0), PAIR(1, 2), 1, TOL64);
    OC_CONV2D(x, w, b, PAIR(3, 2), PAIR(2, 1), PAIR(2, 1), 1, TOL64);
    OC_CONV2D(x, w, b, PAIR(1, 1), PAIR(TN_PADDING_SAME, TN_PADDING_SAME), PAIR(1, 1), 1, TOL64);
    /* 'same' with even kernels and dilation: the odd padding pixel goes to the end */
    tn_tensor *we = RN(2, 3, 4, 2);
    OC_CONV2D(x, we, b ? tn_narrow(b, 0, 0, 2) : NULL, PAIR(1, 1), PAIR(TN_PADDING_SAME, TN_PADDING_SAME), PAIR(2, 1), 1, TOL64);
    OC_CONV2D(x, we, NULL, PAIR(1, 1), PAIR(TN_PADDING_SAME, TN_PADDING_SAME), PAIR(1, 3), 1, TOL64);
    /* groups: 2, and depthwise */
    tn_tensor *x4 = RN(1, 4, 7, 5), *wg = RN(6, 2, 3, 2), *bg = RN(6), *wd = RN(4, 1, 3, 3);
    OC_CONV2D(x4, wg, bg, PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), 2, TOL64);
    OC_CONV2D(x4, wd, NULL, PAIR(1, 1), PAIR(2, 2), PAIR(2, 2), 4, TOL64);
    OC_CONV2D(x4, wd, NULL, PAIR(1, 1), PAIR(TN_PADDING_SAME, TN_PADDING_SAME), PAIR(1, 1), 4, TOL64);
    /* unbatched [C, H, W] */
    tn_tensor *xu = RN(3, 7, 5);
    OC_CONV2D(xu, w, b, PAIR(1, 2), PAIR(1, 1), PAIR(1, 1), 1, TOL64);
    /* a 1x1 kernel, kernel as large as the input */
    OC_CONV2D(x, RN(2, 3, 1, 1), NULL, PAIR(2, 2), PAIR(0, 0), PAIR(1, 1), 1, TOL64);
    OC_CONV2D(x, RN(2, 3, 7, 5), RN(2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1), 1, TOL64);
    /* non-contiguous input (channels-last storage) and weight (kernel transposed) */
    tn_tensor *xv = tn_permute(leaf(tn_randn(SH(2, 7, 5, 3), TN_F64)), SH(0, 3, 1, 2)), *wv = nc(w, 2, 3), *xs = tn_slice(RN(2, 6, 7, 5), 1, 0, 6, 2);
    OC_CONV2D(xv, wv, b, PAIR(1, 1), PAIR(1, 1), PAIR(1, 1), 1, TOL64);
    OC_CONV2D(xs, w, b, PAIR(2, 1), PAIR(0, 1), PAIR(1, 1), 1, TOL64);
    /* float32 */
    tn_tensor *x32 = f32(x), *w32 = f32(w), *b32 = f32(b);
    OC_CONV2D(x32, w32, b32, PAIR(2, 1), PAIR(1, 1), PAIR(1, 2), 1, TOL32);
    OC_CONV2D(f32(x4), f32(wg), f32(bg), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1), 2, TOL32);

    /* conv1d */
    tn_tensor *s = RN(2, 3, 11), *k = RN(4, 3, 3), *kb = RN(4), *kg = RN(6, 1, 4);
    ORACLE(TOL64, tn_conv1d(s, k, kb), "F.conv1d(x0, x1, x2)", s, k, kb);
    ORACLE(TOL64, tn_conv1d(s, k, kb, .stride = 2, .padding = 1, .dilation = 2), "F.conv1d(x0, x1, x2, 2, 1, 2, 1)", s, k, kb);
    ORACLE(TOL64, tn_conv1d(s, kg, NULL, .padding = 3, .dilation = 2, .groups = 3), "F.conv1d(x0, x1, None, 1, 3, 2, 3)", s, kg);
    tn_tensor *k4 = RN(2, 3, 4);
    ORACLE(TOL64, tn_conv1d(s, k4, NULL, .padding = TN_PADDING_SAME, .dilation = 2), "F.conv1d(x0, x1, None, 1, 'same', 2, 1)", s, k4);
    tn_tensor *su = RN(3, 9), *sv = nc(s, 1, 2), *s1 = RN(1, 3, 5);
    ORACLE(TOL64, tn_conv1d(su, k, kb, .stride = 2, .padding = 2), "F.conv1d(x0, x1, x2, 2, 2)", su, k, kb);
    ORACLE(TOL64, tn_conv1d(sv, k, kb, .padding = 1), "F.conv1d(x0, x1, x2, 1, 1)", sv, k, kb);
    ORACLE(TOL64, tn_conv1d(s1, k, kb), "F.conv1d(x0, x1, x2)", s1, k, kb);
    tn_tensor *s32 = f32(s), *k32 = f32(k), *kb32 = f32(kb);
    ORACLE(TOL32, tn_conv1d(s32, k32, kb32, .stride = 2, .padding = 1), "F.conv1d(x0, x1, x2, 2, 1)", s32, k32, kb32);
    END;
}

TEST(oc_conv_transpose) {
    BEGIN;
    tn_tensor *x = RN(2, 4, 5, 4), *w = RN(4, 3, 3, 3), *b = RN(3);
    ORACLE(TOL64, tn_conv_transpose2d(x, w, b), "F.conv_transpose2d(x0, x1, x2)", x, w, b);
    ORACLE(TOL64, tn_conv_transpose2d(x, w, b, .stride = 2, .padding = 1, .output_padding = 1), "F.conv_transpose2d(x0, x1, x2, 2, 1, 1, 1, 1)", x, w, b);
    ORACLE(TOL64, tn_conv_transpose2d(x, w, NULL, .stride = 3, .padding = 2, .output_padding = 1, .dilation = 2), "F.conv_transpose2d(x0, x1, None, 3, 2, 1, 1, 2)", x, w);
    /* groups 2: weight [C, O/groups, kh, kw] */
    tn_tensor *wg = RN(4, 2, 3, 2), *bg = RN(4);
    ORACLE(TOL64, tn_conv_transpose2d(x, wg, bg, .stride = 2, .output_padding = 1, .groups = 2, .dilation = 2), "F.conv_transpose2d(x0, x1, x2, 2, 0, 1, 2, 2)", x, wg, bg);
    tn_tensor *wd = RN(4, 1, 2, 2);
    ORACLE(TOL64, tn_conv_transpose2d(x, wd, NULL, .padding = 1, .groups = 4), "F.conv_transpose2d(x0, x1, None, 1, 1, 0, 4, 1)", x, wd);
    /* per-dim arguments */
    tn_tensor *y = tn_conv_transpose2d(x, w, b, .stride_hw = {2, 3}, .padding_hw = {1, 0}, .output_padding_hw = {1, 2}, .dilation_hw = {1, 2});
    ORACLE(TOL64, y, "F.conv_transpose2d(x0, x1, x2, (2, 3), (1, 0), (1, 2), 1, (1, 2))", x, w, b);
    /* unbatched, batch 1, non-contiguous, float32 */
    tn_tensor *xu = RN(4, 3, 5), *x1 = RN(1, 4, 5, 4), *xv = nc(x, 2, 3), *wv = nc(w, 0, 1);
    ORACLE(TOL64, tn_conv_transpose2d(xu, w, b, .stride = 2, .padding = 1), "F.conv_transpose2d(x0, x1, x2, 2, 1)", xu, w, b);
    ORACLE(TOL64, tn_conv_transpose2d(x1, w, b, .stride = 2), "F.conv_transpose2d(x0, x1, x2, 2)", x1, w, b);
    ORACLE(TOL64, tn_conv_transpose2d(xv, wv, b, .stride = 2, .padding = 1, .output_padding = 1), "F.conv_transpose2d(x0, x1, x2, 2, 1, 1)", xv, wv, b);
    tn_tensor *x32 = f32(x), *w32 = f32(w), *b32 = f32(b);
    ORACLE(TOL32, tn_conv_transpose2d(x32, w32, b32, .stride = 2, .padding = 1, .output_padding = 1), "F.conv_transpose2d(x0, x1, x2, 2, 1, 1)", x32, w32, b32);
    /* conv_transpose1d */
    tn_tensor *s = RN(2, 4, 6), *k = RN(4, 3, 3), *kb = RN(3), *kg = RN(4, 1, 2), *kgb = RN(2);
    ORACLE(TOL64, tn_conv_transpose1d(s, k, kb), "F.conv_transpose1d(x0, x1, x2)", s, k, kb);
    ORACLE(TOL64, tn_conv_transpose1d(s, k, kb, .stride = 3, .padding = 1, .output_padding = 2), "F.conv_transpose1d(x0, x1, x2, 3, 1, 2, 1, 1)", s, k, kb);
    ORACLE(TOL64, tn_conv_transpose1d(s, kg, kgb, .output_padding = 1, .groups = 2, .dilation = 2), "F.conv_transpose1d(x0, x1, x2, 1, 0, 1, 2, 2)", s, kg, kgb);
    tn_tensor *su = RN(4, 7), *sv = nc(s, 1, 2);
    ORACLE(TOL64, tn_conv_transpose1d(su, k, kb, .stride = 2, .padding = 1, .output_padding = 1), "F.conv_transpose1d(x0, x1, x2, 2, 1, 1)", su, k, kb);
    ORACLE(TOL64, tn_conv_transpose1d(sv, k, NULL, .stride = 2, .dilation = 3), "F.conv_transpose1d(x0, x1, None, 2, 0, 0, 1, 3)", sv, k);
    tn_tensor *s32 = f32(s), *k32 = f32(k);
    ORACLE(TOL32, tn_conv_transpose1d(s32, k32, NULL, .stride = 2, .padding = 1, .output_padding = 1), "F.conv_transpose1d(x0, x1, None, 2, 1, 1)", s32, k32);
    END;
}

TEST(oc_fold) {
    BEGIN;
    tn_tensor *x = RN(2, 3, 7, 5);
    ORACLE(TOL64, tn_im2col(x, PAIR(3, 2), PAIR(1, 2), PAIR(1, 1), PAIR(2, 1)), "F.unfold(x0, (3, 2), (1, 2), (1, 1), (2, 1))", x);
    ORACLE(TOL64, tn_im2col(x, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "F.unfold(x0, 2)", x);
    tn_tensor *xu = RN(3, 7, 5), *xv = nc(x, 2, 3), *x1 = RN(1, 2, 5, 5);
    ORACLE(TOL64, tn_im2col(xu, PAIR(3, 3), PAIR(1, 1), PAIR(1, 1), PAIR(2, 2)), "F.unfold(x0, 3, 1, 1, 2)", xu);
    ORACLE(TOL64, tn_im2col(xv, PAIR(2, 3), PAIR(2, 1), PAIR(0, 1), PAIR(1, 2)), "F.unfold(x0, (2, 3), (2, 1), (0, 1), (1, 2))", xv);
    ORACLE(TOL64, tn_im2col(x1, PAIR(5, 5), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "F.unfold(x0, 5)", x1);
    tn_tensor *x32 = f32(x);
    ORACLE(TOL32, tn_im2col(x32, PAIR(3, 2), PAIR(1, 1), PAIR(1, 0), PAIR(1, 1)), "F.unfold(x0, (3, 2), 1, (1, 0))", x32);
    /* fold: L = 4 * 5 windows of 3x2 over 7x5 with padding 1, stride 2 x 1 */
    tn_tensor *c = RN(2, 18, 16);
    ORACLE(TOL64, tn_col2im(c, PAIR(7, 5), PAIR(3, 2), PAIR(1, 1), PAIR(1, 0), PAIR(2, 1)), "F.fold(x0, (7, 5), (3, 2), 1, (1, 0), (2, 1))", c);
    tn_tensor *c2 = RN(1, 12, 9), *cu = RN(12, 9), *cv = nc(c2, 1, 2);
    ORACLE(TOL64, tn_col2im(c2, PAIR(5, 4), PAIR(2, 2), PAIR(2, 1), PAIR(1, 0), PAIR(2, 1)), "F.fold(x0, (5, 4), 2, (2, 1), (1, 0), (2, 1))", c2);
    ORACLE(TOL64, tn_col2im(cu, PAIR(5, 4), PAIR(2, 2), PAIR(2, 1), PAIR(1, 0), PAIR(2, 1)), "F.fold(x0, (5, 4), 2, (2, 1), (1, 0), (2, 1))", cu);
    ORACLE(TOL64, tn_col2im(cv, PAIR(5, 4), PAIR(2, 2), PAIR(2, 1), PAIR(1, 0), PAIR(2, 1)), "F.fold(x0, (5, 4), 2, (2, 1), (1, 0), (2, 1))", cv);
    tn_tensor *c32 = f32(c);
    ORACLE(TOL32, tn_col2im(c32, PAIR(7, 5), PAIR(3, 2), PAIR(1, 1), PAIR(1, 0), PAIR(2, 1)), "F.fold(x0, (7, 5), (3, 2), 1, (1, 0), (2, 1))", c32);
    END;
}

static void oc_maxpool_case(int line, tn_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d, bool ceil, double tol) {
    tn_tensor *idx = NULL;
    tn_tensor *y = k[0] == k[1] && s[0] == s[1] && p[0] == p[1] && d[0] == d[1] ? tn_max_pool2d_with_indices(x, &idx, k[0], .stride = s[0] ? s[0] : TN_NONE, .padding = p[0], .dilation = d[0], .ceil_mode = ceil)
                                                                               : tn_max_pool2d_with_indices(x, &idx, k[0], .kernel_size_hw = {k[0], k[1]}, .stride_hw = {s[0], s[1]}, .padding_hw = {p[0], p[1]}, .dilation_hw = {d[0], d[1]}, .ceil_mode = ceil);
    oracle_(line, tol, y, TS(idx), PY("F.max_pool2d(x0, (%lld, %lld), %s, (%lld, %lld), (%lld, %lld), %s, True)", (long long)k[0], (long long)k[1],
                                      s[0] ? PY("(%lld, %lld)", (long long)s[0], (long long)s[1]) : "None", (long long)p[0], (long long)p[1],
                                      (long long)d[0], (long long)d[1], ceil ? "True" : "False"), TS(x));
}
#define OC_MAXPOOL(x, k, s, p, d, ceil, tol) oc_maxpool_case(__LINE__, x, k, s, p, d, ceil, tol)
static void oc_avgpool_case(int line, tn_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p, bool ceil, bool cip, int64_t div, double tol) {
    tn_tensor *y = k[0] == k[1] && s[0] == s[1] && p[0] == p[1] && !div ? tn_avg_pool2d(x, k[0], .stride = s[0] ? s[0] : TN_NONE, .padding = p[0], .ceil_mode = ceil, .count_include_pad = cip)
                                                                       : tn_avg_pool2d(x, k[0], .kernel_size_hw = {k[0], k[1]}, .stride_hw = {s[0], s[1]}, .padding_hw = {p[0], p[1]}, .ceil_mode = ceil, .count_include_pad = cip, .divisor_override = div ? div : TN_NONE);
    oracle_(line, tol, y, NULL, 0, PY("F.avg_pool2d(x0, (%lld, %lld), %s, (%lld, %lld), %s, %s, %s)", (long long)k[0], (long long)k[1],
                                      s[0] ? PY("(%lld, %lld)", (long long)s[0], (long long)s[1]) : "None", (long long)p[0], (long long)p[1],
                                      ceil ? "True" : "False", cip ? "True" : "False", div ? PY("%lld", (long long)div) : "None"), TS(x));
}
#define OC_AVGPOOL(x, k, s, p, ceil, cip, div, tol) oc_avgpool_case(__LINE__, x, k, s, p, ceil, cip, div, tol)

TEST(oc_pool) {
    BEGIN;
    tn_tensor *x = RN(2, 3, 7, 5), *xu = RN(3, 7, 5), *x1 = RN(1, 2, 6, 6), *xv = nc(x, 2, 3);
    OC_MAXPOOL(x, PAIR(2, 2), PAIR(0, 0), PAIR(0, 0), PAIR(1, 1), false, TOL64);
    OC_MAXPOOL(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), false, TOL64);
    OC_MAXPOOL(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), true, TOL64);
    OC_MAXPOOL(x, PAIR(2, 2), PAIR(2, 2), PAIR(1, 1), PAIR(2, 2), true, TOL64);
    OC_MAXPOOL(x, PAIR(3, 2), PAIR(2, 1), PAIR(1, 0), PAIR(1, 2), true, TOL64);
    OC_MAXPOOL(x, PAIR(2, 3), PAIR(3, 2), PAIR(1, 1), PAIR(2, 1), false, TOL64);
    OC_MAXPOOL(x1, PAIR(4, 4), PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), true, TOL64);
    OC_MAXPOOL(xu, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), true, TOL64);
    OC_MAXPOOL(xv, PAIR(3, 2), PAIR(1, 2), PAIR(1, 1), PAIR(1, 1), false, TOL64);
    OC_MAXPOOL(f32(x), PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), PAIR(1, 1), true, TOL32);
    /* max_pool1d */
    tn_tensor *s = RN(2, 3, 11), *su = RN(3, 10), *idx = NULL, *y;
    /* (the result first: the indices are set by the call) */
    y = tn_max_pool1d_with_indices(s, &idx, 3, .stride = 2, .padding = 1, .dilation = 2, .ceil_mode = true);
    ORACLE_X(TOL64, y, TS(idx), "F.max_pool1d(x0, 3, 2, 1, 2, True, True)", s);
    y = tn_max_pool1d_with_indices(s, &idx, 2);
    ORACLE_X(TOL64, y, TS(idx), "F.max_pool1d(x0, 2, return_indices=True)", s);
    y = tn_max_pool1d_with_indices(su, &idx, 3, .stride = 3, .padding = 1, .ceil_mode = true);
    ORACLE_X(TOL64, y, TS(idx), "F.max_pool1d(x0, 3, 3, 1, 1, True, True)", su);
    tn_tensor *s32 = f32(s);
    y = tn_max_pool1d_with_indices(s32, &idx, 4, .stride = 2, .padding = 2);
    ORACLE_X(TOL32, y, TS(idx), "F.max_pool1d(x0, 4, 2, 2, 1, False, True)", s32);
    tn_tensor *sv = nc(s, 1, 2);
    ORACLE(TOL64, tn_max_pool1d(sv, 3, .stride = 1, .padding = 1), "F.max_pool1d(x0, 3, 1, 1)", sv);
    /* adaptive max: shrinking, the same size, and growing windows */
    y = tn_adaptive_max_pool2d(x, 3, 2, &idx);
    ORACLE_X(TOL64, y, TS(idx), "F.adaptive_max_pool2d(x0, (3, 2), True)", x);
    y = tn_adaptive_max_pool2d(x, 7, 5, &idx);
    ORACLE_X(TOL64, y, TS(idx), "F.adaptive_max_pool2d(x0, (7, 5), True)", x);
    y = tn_adaptive_max_pool2d(x, 9, 4, &idx);
    ORACLE_X(TOL64, y, TS(idx), "F.adaptive_max_pool2d(x0, (9, 4), True)", x);
    y = tn_adaptive_max_pool2d(xu, 1, 1, &idx);
    ORACLE_X(TOL64, y, TS(idx), "F.adaptive_max_pool2d(x0, 1, True)", xu);
    y = tn_adaptive_max_pool2d(xv, 4, 3, &idx);
    ORACLE_X(TOL64, y, TS(idx), "F.adaptive_max_pool2d(x0, (4, 3), True)", xv);
    tn_tensor *x32 = f32(x);
    y = tn_adaptive_max_pool2d(x32, 3, 3, &idx);
    ORACLE_X(TOL32, y, TS(idx), "F.adaptive_max_pool2d(x0, 3, True)", x32);
    /* average */
    OC_AVGPOOL(x, PAIR(2, 2), PAIR(0, 0), PAIR(0, 0), false, true, 0, TOL64);
    OC_AVGPOOL(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), false, true, 0, TOL64);
    OC_AVGPOOL(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), false, false, 0, TOL64);
    OC_AVGPOOL(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), true, true, 0, TOL64);
    OC_AVGPOOL(x, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), true, false, 0, TOL64);
    OC_AVGPOOL(x, PAIR(2, 2), PAIR(3, 3), PAIR(1, 1), true, true, 0, TOL64);
    OC_AVGPOOL(x, PAIR(3, 2), PAIR(2, 1), PAIR(1, 1), true, false, 0, TOL64);
    OC_AVGPOOL(x, PAIR(3, 2), PAIR(2, 1), PAIR(1, 1), false, true, 5, TOL64);
    OC_AVGPOOL(x1, PAIR(4, 4), PAIR(3, 3), PAIR(2, 2), true, true, 0, TOL64);
    OC_AVGPOOL(xu, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), true, false, 0, TOL64);
    OC_AVGPOOL(xv, PAIR(2, 3), PAIR(1, 2), PAIR(1, 0), false, false, 0, TOL64);
    OC_AVGPOOL(x32, PAIR(3, 3), PAIR(2, 2), PAIR(1, 1), true, false, 0, TOL32);
    ORACLE(TOL64, tn_avg_pool1d(s, 3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false), "F.avg_pool1d(x0, 3, 2, 1, True, False)", s);
    ORACLE(TOL64, tn_avg_pool1d(s, 3, .stride = 2, .padding = 1), "F.avg_pool1d(x0, 3, 2, 1)", s);
    ORACLE(TOL64, tn_avg_pool1d(su, 2, .padding = 1, .ceil_mode = true), "F.avg_pool1d(x0, 2, None, 1, True)", su);
    ORACLE(TOL32, tn_avg_pool1d(s32, 4, .stride = 3, .padding = 2, .ceil_mode = true, .count_include_pad = false), "F.avg_pool1d(x0, 4, 3, 2, True, False)", s32);
    /* adaptive average */
    ORACLE(TOL64, tn_adaptive_avg_pool2d(x, 3, 2), "F.adaptive_avg_pool2d(x0, (3, 2))", x);
    ORACLE(TOL64, tn_adaptive_avg_pool2d(x, 1, 1), "F.adaptive_avg_pool2d(x0, 1)", x);
    ORACLE(TOL64, tn_adaptive_avg_pool2d(x, 7, 5), "F.adaptive_avg_pool2d(x0, (7, 5))", x);
    ORACLE(TOL64, tn_adaptive_avg_pool2d(x, 9, 4), "F.adaptive_avg_pool2d(x0, (9, 4))", x);
    ORACLE(TOL64, tn_adaptive_avg_pool2d(x, 7, 2), "F.adaptive_avg_pool2d(x0, (7, 2))", x);
    ORACLE(TOL64, tn_adaptive_avg_pool2d(xu, 2, 4), "F.adaptive_avg_pool2d(x0, (2, 4))", xu);
    ORACLE(TOL64, tn_adaptive_avg_pool2d(xv, 4, 3), "F.adaptive_avg_pool2d(x0, (4, 3))", xv);
    ORACLE(TOL32, tn_adaptive_avg_pool2d(x32, 3, 3), "F.adaptive_avg_pool2d(x0, 3)", x32);
    END;
}

TEST(oc_norm) {
    BEGIN;
    /* batch_norm training: three steps, then the running statistics and the last output */
    tn_tensor *xa = RN(3, 4, 5, 3), *xb = RN(3, 4, 5, 3), *xc = RN(3, 4, 5, 3), *w = RN(4), *b = RN(4);
    tn_tensor *rm = tn_mul_scalar(tn_randn(SH(4), TN_F64), 0.1), *rv = tn_add_scalar(tn_rand(SH(4), TN_F64), 0.5);
    tn_tensor *rm0 = tn_clone(rm), *rv0 = tn_clone(rv);
    tn_batch_norm(xa, rm, rv, .weight = w, .bias = b, .training = true);
    tn_batch_norm(xb, rm, rv, .weight = w, .bias = b, .training = true);
    tn_tensor *yc = tn_batch_norm(xc, rm, rv, .weight = w, .bias = b, .training = true);
    ORACLE_X(TOL64, yc, TS(rm, rv),
             "exec:m = x3.clone(); v = x4.clone(); F.batch_norm(x0, m, v, x5, x6, True, 0.1, 1e-5); F.batch_norm(x1, m, v, x5, x6, True, 0.1, 1e-5); "
             "out = F.batch_norm(x2, m, v, x5, x6, True, 0.1, 1e-5); extras = [m, v]", xa, xb, xc, rm0, rv0, w, b);
    /* eval with those statistics */
    ORACLE(TOL64, tn_batch_norm(xa, rm, rv, .weight = w, .bias = b), "F.batch_norm(x0, x1, x2, x3, x4, False, 0.1, 1e-5)", xa, rm, rv, w, b);
    ORACLE(TOL64, tn_batch_norm(xa, rm, rv, .eps = 1e-3), "F.batch_norm(x0, x1, x2, None, None, False, 0.1, 1e-3)", xa, rm, rv);
    /* [N, C] and [N, C, L] inputs, no running stats, no affine, another momentum */
    tn_tensor *x2 = RN(5, 4), *x3 = RN(4, 3, 6), *x3v = nc(x3, 0, 2);
    ORACLE(TOL64, tn_batch_norm(x2, NULL, NULL, .weight = w, .bias = b, .training = true), "F.batch_norm(x0, None, None, x1, x2, True)", x2, w, b);
    tn_tensor *rm3 = tn_zeros(SH(3), TN_F64), *rv3 = tn_ones(SH(3), TN_F64);
    tn_tensor *y3 = tn_batch_norm(x3v, rm3, rv3, .training = true, .momentum = 0.3, .eps = 1e-3);
    ORACLE_X(TOL64, y3, TS(rm3, rv3), "exec:m = torch.zeros(3, dtype=torch.float64); v = torch.ones(3, dtype=torch.float64); "
             "out = F.batch_norm(x0, m, v, None, None, True, 0.3, 1e-3); extras = [m, v]", x3v);
    /* float32 with float32 running stats */
    tn_tensor *xa32 = f32(xa), *w32 = f32(w), *b32 = f32(b), *rm32 = tn_zeros(SH(4), TN_F32), *rv32 = tn_ones(SH(4), TN_F32);
    tn_tensor *y32 = tn_batch_norm(xa32, rm32, rv32, .weight = w32, .bias = b32, .training = true);
    ORACLE_X(TOL32, y32, TS(rm32, rv32), "exec:m = torch.zeros(4); v = torch.ones(4); out = F.batch_norm(x0, m, v, x1, x2, True); extras = [m, v]",
             xa32, w32, b32);

    /* layer_norm */
    tn_tensor *x = RN(2, 3, 4, 5), *lw = RN(4, 5), *lb = RN(4, 5), *lw1 = RN(5), *xv = nc(x, 0, 1);
    ORACLE(TOL64, tn_layer_norm(x, I(4, 5), 2, .weight = lw, .bias = lb), "F.layer_norm(x0, (4, 5), x1, x2)", x, lw, lb);
    ORACLE(TOL64, tn_layer_norm(x, I(5), 1), "F.layer_norm(x0, (5,))", x);
    ORACLE(TOL64, tn_layer_norm(x, I(5), 1, .weight = lw1, .eps = 1e-3), "F.layer_norm(x0, (5,), x1, None, 1e-3)", x, lw1);
    ORACLE(TOL64, tn_layer_norm(xv, I(4, 5), 2, .bias = lb), "F.layer_norm(x0, (4, 5), None, x1)", xv, lb);
    ORACLE(TOL64, tn_layer_norm(x, I(3, 4, 5), 3), "F.layer_norm(x0, (3, 4, 5))", x);
    tn_tensor *xl = RN(7), *x32 = f32(x), *lw32 = f32(lw), *lb32 = f32(lb);
    ORACLE(TOL64, tn_layer_norm(xl, I(7), 1), "F.layer_norm(x0, (7,))", xl);
    ORACLE(TOL32, tn_layer_norm(x32, I(4, 5), 2, .weight = lw32, .bias = lb32), "F.layer_norm(x0, (4, 5), x1, x2)", x32, lw32, lb32);

    /* group_norm */
    tn_tensor *g = RN(2, 6, 4, 3), *gw = RN(6), *gb = RN(6), *g3 = RN(3, 4, 5), *gv = nc(g, 2, 3);
    ORACLE(TOL64, tn_group_norm(g, 3, .weight = gw, .bias = gb), "F.group_norm(x0, 3, x1, x2)", g, gw, gb);
    ORACLE(TOL64, tn_group_norm(g, 1), "F.group_norm(x0, 1)", g);
    ORACLE(TOL64, tn_group_norm(g, 6, .weight = gw, .eps = 1e-3), "F.group_norm(x0, 6, x1, None, 1e-3)", g, gw);
    ORACLE(TOL64, tn_group_norm(gv, 2, .bias = gb), "F.group_norm(x0, 2, torch.ones(6, dtype=torch.float64), x1)", gv, gb);
    ORACLE(TOL64, tn_group_norm(g3, 2), "F.group_norm(x0, 2)", g3);
    tn_tensor *g32 = f32(g), *gw32 = f32(gw), *gb32 = f32(gb);
    ORACLE(TOL32, tn_group_norm(g32, 3, .weight = gw32, .bias = gb32), "F.group_norm(x0, 3, x1, x2)", g32, gw32, gb32);

    /* instance_norm */
    tn_tensor *in = RN(2, 3, 5, 4), *iw = RN(3), *ib = RN(3), *i3 = RN(2, 3, 7);
    ORACLE(TOL64, tn_instance_norm(in, .weight = iw, .bias = ib), "F.instance_norm(x0, None, None, x1, x2)", in, iw, ib);
    ORACLE(TOL64, tn_instance_norm(i3), "F.instance_norm(x0)", i3);
    tn_tensor *irm = tn_mul_scalar(tn_randn(SH(3), TN_F64), 0.1), *irv = tn_add_scalar(tn_rand(SH(3), TN_F64), 0.5);
    tn_tensor *irm0 = tn_clone(irm), *irv0 = tn_clone(irv);
    tn_tensor *yi = tn_instance_norm(in, .running_mean = irm, .running_var = irv, .weight = iw, .bias = ib, .momentum = 0.2);
    ORACLE_X(TOL64, yi, TS(irm, irv), "exec:m = x1.clone(); v = x2.clone(); out = F.instance_norm(x0, m, v, x3, x4, True, 0.2, 1e-5); extras = [m, v]",
             in, irm0, irv0, iw, ib);
    ORACLE(TOL64, tn_instance_norm(in, .running_mean = irm, .running_var = irv, .weight = iw, .bias = ib, .use_input_stats = false), "F.instance_norm(x0, x1, x2, x3, x4, False)", in, irm, irv, iw, ib);
    tn_tensor *irm1 = tn_zeros(SH(3), TN_F64);
    tn_tensor *yi1 = tn_instance_norm(in, .running_mean = irm1);
    ORACLE_X(TOL64, yi1, TS(irm1), "exec:m = torch.zeros(3, dtype=torch.float64); out = F.instance_norm(x0, m, None); extras = [m]", in);
    tn_tensor *inv = nc(in, 2, 3), *in1 = RN(1, 3, 4, 3);
    ORACLE(TOL64, tn_instance_norm(inv, .weight = iw), "F.instance_norm(x0, None, None, x1)", inv, iw);
    ORACLE(TOL64, tn_instance_norm(in1, .bias = ib), "F.instance_norm(x0, None, None, None, x1)", in1, ib);
    /* batch of one */
    tn_tensor *b1 = RN(1, 4, 3, 5), *rm1 = tn_zeros(SH(4), TN_F64), *rv1 = tn_ones(SH(4), TN_F64);
    tn_tensor *yb1 = tn_batch_norm(b1, rm1, rv1, .weight = w, .bias = b, .training = true);
    ORACLE_X(TOL64, yb1, TS(rm1, rv1), "exec:m = torch.zeros(4, dtype=torch.float64); v = torch.ones(4, dtype=torch.float64); "
             "out = F.batch_norm(x0, m, v, x1, x2, True); extras = [m, v]", b1, w, b);
    tn_tensor *g1 = RN(1, 6, 5, 3);
    ORACLE(TOL64, tn_group_norm(g1, 2, .weight = gw, .bias = gb), "F.group_norm(x0, 2, x1, x2)", g1, gw, gb);
    tn_tensor *in32 = f32(in);
    ORACLE(TOL32, tn_instance_norm(in32), "F.instance_norm(x0)", in32);
    END;
}

TEST(oc_embedding) {
    BEGIN;
    tn_tensor *w = RN(10, 4), *idx = IDX(I(1, 3, 3, 9, 0, 1), 2, 3);
    ORACLE(TOL64, tn_embedding(idx, w), "F.embedding(x0, x1)", idx, w);
    ORACLE(TOL64, tn_embedding_padded(idx, w, 3), "F.embedding(x0, x1, padding_idx=3)", idx, w);
    ORACLE(TOL64, tn_embedding_padded(idx, w, -9), "F.embedding(x0, x1, padding_idx=-9)", idx, w);
    tn_tensor *wv = nc(w, 0, 1), *i1 = IDX(I(4), 1), *i3 = IDX(I(0, 1, 2, 3, 4, 5, 6, 7), 2, 2, 2);
    ORACLE(TOL64, tn_embedding(i1, wv), "F.embedding(x0, x1)", i1, wv);
    ORACLE(TOL64, tn_embedding(i3, w), "F.embedding(x0, x1)", i3, w);
    tn_tensor *w32 = f32(w);
    ORACLE(TOL32, tn_embedding_padded(idx, w32, 1), "F.embedding(x0, x1, padding_idx=1)", idx, w32);
    /* one_hot */
    tn_tensor *c = IDX(I(0, 4, 2, 2, 1, 0), 3, 2);
    ORACLE(0, tn_one_hot(c), "F.one_hot(x0)", c);
    ORACLE(0, tn_one_hot(c, .num_classes = 7), "F.one_hot(x0, 7)", c);
    tn_tensor *c0 = tn_scalar_tensor(3, TN_I64);
    ORACLE(0, tn_one_hot(c0, .num_classes = 5), "F.one_hot(x0, 5)", c0);
    END;
}

TEST(oc_softmax) {
    BEGIN;
    tn_tensor *x = RN(3, 4, 5), *xv = nc(x, 0, 2), *x32 = f32(x);
    for (int d = -1; d < 3; d++) {
        ORACLE(TOL64, tn_softmax(x, d), PY("F.softmax(x0, %d)", d), x);
        ORACLE(TOL64, tn_log_softmax(x, d), PY("F.log_softmax(x0, %d)", d), x);
    }
    ORACLE(TOL64, tn_softmax(xv, 1), "F.softmax(x0, 1)", xv);
    ORACLE(TOL64, tn_log_softmax(xv, 0), "F.log_softmax(x0, 0)", xv);
    ORACLE(TOL32, tn_softmax(x32, -1), "F.softmax(x0, -1)", x32);
    ORACLE(TOL32, tn_log_softmax(x32, 1), "F.log_softmax(x0, 1)", x32);
    tn_tensor *s = RN(6);
    ORACLE(TOL64, tn_softmax(s, 0), "F.softmax(x0, 0)", s);
    /* -inf entries (masked) */
    tn_tensor *m = leaf(T64(D(1, -INFINITY, 2, -INFINITY, 0, 3), 2, 3));
    ORACLE(TOL64, tn_softmax(m, 1), "F.softmax(x0, 1)", m);
    ORACLE(TOL64, tn_log_softmax(m, 1), "F.log_softmax(x0, 1)", m);
    END;
}

/* ---- activations: one table for the oracle, gradcheck and grad_fn names ---- */
/* tol: float64 tolerance of the oracle; torch's hardsigmoid backward multiplies by 1/6 as a
   float constant (so only ~1e-8 relative in float64). hardswish at exactly 3 is left out:
   torch 1.13 gives 1.5 there in its scalar loop and 1 in its vectorized one (position-dependent). */
typedef struct act_case { const char *name; tn_tensor *(*f)(tn_tensor *); const char *py, *grad_fn; bool smooth; double tol; bool avoid3; } act_case;
static tn_tensor *a_relu(tn_tensor *x) { return tn_relu(x); }
static tn_tensor *a_relu6(tn_tensor *x) { return tn_relu6(x); }
static tn_tensor *a_leaky(tn_tensor *x) { return tn_leaky_relu(x, .negative_slope = 0.2); }
static tn_tensor *a_leaky_default(tn_tensor *x) { return tn_leaky_relu(x); }
static tn_tensor *a_elu(tn_tensor *x) { return tn_elu(x, .alpha = 1.5); }
static tn_tensor *a_elu_default(tn_tensor *x) { return tn_elu(x); }
static tn_tensor *a_selu(tn_tensor *x) { return tn_selu(x); }
static tn_tensor *a_celu(tn_tensor *x) { return tn_celu(x, .alpha = 0.75); }   /* 0.75: torch's backward takes 1/alpha through float */
static tn_tensor *a_gelu(tn_tensor *x) { return tn_gelu(x); }
static tn_tensor *a_gelu_tanh(tn_tensor *x) { return tn_gelu(x, .approximate = TN_APPROXIMATE_TANH); }
static tn_tensor *a_silu(tn_tensor *x) { return tn_silu(x); }
static tn_tensor *a_mish(tn_tensor *x) { return tn_mish(x); }
static tn_tensor *a_softplus(tn_tensor *x) { return tn_softplus(x, .beta = 2, .threshold = 10); }
static tn_tensor *a_softplus_default(tn_tensor *x) { return tn_softplus(x); }
static tn_tensor *a_hardtanh(tn_tensor *x) { return tn_hardtanh(x, .min_val = -0.5, .max_val = 2); }
static tn_tensor *a_hardswish(tn_tensor *x) { return tn_hardswish(x); }
static tn_tensor *a_hardsigmoid(tn_tensor *x) { return tn_hardsigmoid(x); }
static tn_tensor *a_tanh(tn_tensor *x) { return tn_tanh(x); }
static tn_tensor *a_sigmoid(tn_tensor *x) { return tn_sigmoid(x); }
static const act_case acts[] = {
    {"relu", a_relu, "F.relu(x0)", "ReluBackward0", false, 0, false},
    {"relu6", a_relu6, "F.relu6(x0)", "HardtanhBackward0", false, 0, false},
    {"leaky_relu", a_leaky, "F.leaky_relu(x0, 0.2)", "LeakyReluBackward0", false, 0, false},
    {"leaky_relu(0.01)", a_leaky_default, "F.leaky_relu(x0)", "LeakyReluBackward0", false, 0, false},
    {"elu", a_elu, "F.elu(x0, 1.5)", "EluBackward0", false, 0, false},
    {"elu(1)", a_elu_default, "F.elu(x0)", "EluBackward0", true, 0, false},
    {"selu", a_selu, "F.selu(x0)", "EluBackward0", false, 0, false},
    {"celu", a_celu, "F.celu(x0, 0.75)", "CeluBackward0", false, 0, false},
    {"gelu", a_gelu, "F.gelu(x0)", "GeluBackward0", true, 0, false},
    {"gelu_tanh", a_gelu_tanh, "F.gelu(x0, approximate='tanh')", "GeluBackward0", true, 0, false},
    {"silu", a_silu, "F.silu(x0)", "SiluBackward0", true, 0, false},
    {"mish", a_mish, "F.mish(x0)", "MishBackward0", true, 0, false},
    {"softplus", a_softplus, "F.softplus(x0, 2, 10)", "SoftplusBackward0", true, 0, false},
    {"softplus(1, 20)", a_softplus_default, "F.softplus(x0)", "SoftplusBackward0", true, 0, false},
    {"hardtanh", a_hardtanh, "F.hardtanh(x0, -0.5, 2)", "HardtanhBackward0", false, 0, false},
    {"hardswish", a_hardswish, "F.hardswish(x0)", "HardswishBackward0", false, 0, true},
    {"hardsigmoid", a_hardsigmoid, "F.hardsigmoid(x0)", "HardsigmoidBackward0", false, 1e-7, false},
    {"tanh", a_tanh, "torch.tanh(x0)", "TanhBackward0", true, 0, false},
    {"sigmoid", a_sigmoid, "torch.sigmoid(x0)", "SigmoidBackward0", true, 0, false},
};
#define NACTS ((int)(sizeof acts / sizeof acts[0]))

TEST(oc_activations) {
    BEGIN;
    /* random values and every kink: -3, -1, -0.5, 0, 2, 3, 5 (softplus beta 2 threshold 10), 6, 20 */
    tn_tensor *r = tn_mul_scalar(tn_randn(SH(30), TN_F64), 4);
    tn_tensor *k = T64(D(-30, -6, -3, -1, -0.5, 0, 0.5, 1, 2, 3, 5, 6, 20, 21, 30, 1e-8, -1e-8), 17);
    tn_tensor *x = leaf(tn_cat(((tn_tensor *[]){r, k}), 2));
    tn_tensor *x_no3 = leaf(tn_where(tn_eq_scalar(x, 3), tn_scalar(2.9), tn_detach(x)));
    tn_tensor *x2 = RN(5, 8), *xv = tn_mul_scalar(nc(x2, 0, 1), 3);
    for (int i = 0; i < NACTS; i++) {
        tn_tensor *xi = acts[i].avoid3 ? x_no3 : x, *x32 = f32(xi);
        double tol = acts[i].tol > 0 ? acts[i].tol : TOL64;
        oracle_(__LINE__, tol, acts[i].f(xi), NULL, 0, acts[i].py, TS(xi));
        oracle_(__LINE__, tol, acts[i].f(xv), NULL, 0, acts[i].py, TS(xv));
        oracle_(__LINE__, TOL32, acts[i].f(x32), NULL, 0, acts[i].py, TS(x32));
    }
    END;
}

TEST(oc_attention) {
    BEGIN;
    tn_tensor *q = RN(2, 3, 5, 4), *k = RN(2, 3, 6, 4), *v = RN(2, 3, 6, 3);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v), "sdpa(x0, x1, x2)", q, k, v);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .scale = 0.3), "sdpa(x0, x1, x2, scale=0.3)", q, k, v);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .is_causal = true), "sdpa(x0, x1, x2, causal=True)", q, k, v);
    static const bool mb[30] = {1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 0, 1, 0};
    tn_tensor *bm = tn_from_data(mb, SH(5, 6), TN_BOOL), *fm = RN(3, 5, 6), *fm1 = RN(1, 6);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .attn_mask = bm), "sdpa(x0, x1, x2, x3)", q, k, v, bm);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .attn_mask = fm), "sdpa(x0, x1, x2, x3)", q, k, v, fm);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .attn_mask = fm1, .scale = 0.5), "sdpa(x0, x1, x2, x3, scale=0.5)", q, k, v, fm1);
    /* unbatched, non-contiguous key (stored [.., E, S]), float32 */
    tn_tensor *qu = RN(5, 4), *ku = RN(6, 4), *vu = RN(6, 2), *kv = nc(k, 2, 3);
    ORACLE(TOL64, tn_scaled_dot_product_attention(qu, ku, vu, .is_causal = true), "sdpa(x0, x1, x2, causal=True)", qu, ku, vu);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, kv, v, .attn_mask = bm), "sdpa(x0, x1, x2, x3)", q, kv, v, bm);
    tn_tensor *q32 = f32(q), *k32 = f32(k), *v32 = f32(v);
    ORACLE(TOL32, tn_scaled_dot_product_attention(q32, k32, v32, .is_causal = true), "sdpa(x0, x1, x2, causal=True)", q32, k32, v32);
    END;
}

TEST(oc_interpolate) {
    BEGIN;
    tn_tensor *x = RN(2, 3, 5), *xv = nc(x, 0, 1);
    ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(8)), "F.interpolate(x0, size=8)", x);
    ORACLE(TOL64, tn_interpolate(x, .scale_factor = TN_DOUBLES(2.0)), "F.interpolate(x0, scale_factor=2.0)", x);
    ORACLE(TOL64, tn_interpolate(x, .scale_factor = TN_DOUBLES(1.5)), "F.interpolate(x0, scale_factor=1.5)", x);
    ORACLE(TOL64, tn_interpolate(x, .scale_factor = TN_DOUBLES(0.5)), "F.interpolate(x0, scale_factor=0.5)", x);
    ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(3)), "F.interpolate(x0, size=3)", x);
    ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(8), .mode = "linear"), "F.interpolate(x0, size=8, mode='linear', align_corners=False)", x);
    ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(8), .mode = "linear", .align_corners = true), "F.interpolate(x0, size=8, mode='linear', align_corners=True)", x);
    ORACLE(TOL64, tn_interpolate(x, .scale_factor = TN_DOUBLES(1.7), .mode = "linear"), "F.interpolate(x0, scale_factor=1.7, mode='linear')", x);
    ORACLE(TOL64, tn_interpolate(x, .scale_factor = TN_DOUBLES(1.7), .mode = "linear", .align_corners = true), "F.interpolate(x0, scale_factor=1.7, mode='linear', align_corners=True)", x);
    ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(3), .mode = "linear"), "F.interpolate(x0, size=3, mode='linear')", x);
    ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(1), .mode = "linear", .align_corners = true), "F.interpolate(x0, size=1, mode='linear', align_corners=True)", x);
    ORACLE(TOL64, tn_interpolate(xv, .size = TN_INTS(7), .mode = "linear"), "F.interpolate(x0, size=7, mode='linear')", xv);
    tn_tensor *y = RN(2, 3, 5, 4), *yv = nc(y, 2, 3), *y1 = RN(1, 1, 3, 3);
    ORACLE(TOL64, tn_interpolate(y, .size = TN_INTS(7, 9)), "F.interpolate(x0, size=(7, 9))", y);
    ORACLE(TOL64, tn_interpolate(y, .scale_factor = TN_DOUBLES(1.5, 2.0)), "F.interpolate(x0, scale_factor=(1.5, 2.0))", y);
    ORACLE(TOL64, tn_interpolate(y, .size = TN_INTS(3, 2)), "F.interpolate(x0, size=(3, 2))", y);
    ORACLE(TOL64, tn_interpolate(y, .size = TN_INTS(7, 9), .mode = "bilinear"), "F.interpolate(x0, size=(7, 9), mode='bilinear')", y);
    ORACLE(TOL64, tn_interpolate(y, .size = TN_INTS(7, 9), .mode = "bilinear", .align_corners = true), "F.interpolate(x0, size=(7, 9), mode='bilinear', align_corners=True)", y);
    ORACLE(TOL64, tn_interpolate(y, .scale_factor = TN_DOUBLES(1.5, 2.0), .mode = "bilinear"), "F.interpolate(x0, scale_factor=(1.5, 2.0), mode='bilinear')", y);
    ORACLE(TOL64, tn_interpolate(y, .scale_factor = TN_DOUBLES(0.6, 1.3), .mode = "bilinear", .align_corners = true), "F.interpolate(x0, scale_factor=(0.6, 1.3), mode='bilinear', align_corners=True)", y);
    ORACLE(TOL64, tn_interpolate(y, .size = TN_INTS(3, 2), .mode = "bilinear"), "F.interpolate(x0, size=(3, 2), mode='bilinear')", y);
    ORACLE(TOL64, tn_interpolate(yv, .size = TN_INTS(6, 6), .mode = "bilinear"), "F.interpolate(x0, size=(6, 6), mode='bilinear')", yv);
    ORACLE(TOL64, tn_interpolate(y1, .size = TN_INTS(5, 4), .mode = "bilinear", .align_corners = true), "F.interpolate(x0, size=(5, 4), mode='bilinear', align_corners=True)", y1);
    tn_tensor *y32 = f32(y), *x32 = f32(x);
    ORACLE(TOL32, tn_interpolate(y32, .size = TN_INTS(7, 9), .mode = "bilinear"), "F.interpolate(x0, size=(7, 9), mode='bilinear')", y32);
    ORACLE(TOL32, tn_interpolate(y32, .scale_factor = TN_DOUBLES(1.5, 2.0)), "F.interpolate(x0, scale_factor=(1.5, 2.0))", y32);
    ORACLE(TOL32, tn_interpolate(x32, .size = TN_INTS(8), .mode = "linear", .align_corners = true), "F.interpolate(x0, size=8, mode='linear', align_corners=True)", x32);
    END;
}

TEST(oc_pixel_shuffle) {
    BEGIN;
    tn_tensor *x = RN(2, 8, 3, 2), *x5 = RN(2, 2, 9, 2, 2), *xu = RN(8, 3, 2), *xv = nc(x, 2, 3);
    ORACLE(TOL64, tn_pixel_shuffle(x, 2), "F.pixel_shuffle(x0, 2)", x);
    ORACLE(TOL64, tn_pixel_shuffle(x5, 3), "F.pixel_shuffle(x0, 3)", x5);
    ORACLE(TOL64, tn_pixel_shuffle(xu, 2), "F.pixel_shuffle(x0, 2)", xu);
    ORACLE(TOL64, tn_pixel_shuffle(xv, 2), "F.pixel_shuffle(x0, 2)", xv);
    ORACLE(TOL64, tn_pixel_shuffle(x, 1), "F.pixel_shuffle(x0, 1)", x);
    tn_tensor *y = RN(2, 2, 6, 4), *y3 = RN(3, 6, 9), *y5 = RN(2, 1, 3, 6, 9), *x32 = f32(x);
    ORACLE(TOL64, tn_pixel_unshuffle(y, 2), "F.pixel_unshuffle(x0, 2)", y);
    ORACLE(TOL64, tn_pixel_unshuffle(y3, 3), "F.pixel_unshuffle(x0, 3)", y3);
    ORACLE(TOL64, tn_pixel_unshuffle(y5, 3), "F.pixel_unshuffle(x0, 3)", y5);
    ORACLE(TOL32, tn_pixel_shuffle(x32, 2), "F.pixel_shuffle(x0, 2)", x32);
    tn_tensor *y32 = f32(y), *yv = nc(y, 1, 3);
    ORACLE(TOL32, tn_pixel_unshuffle(y32, 2), "F.pixel_unshuffle(x0, 2)", y32);
    ORACLE(TOL64, tn_pixel_unshuffle(yv, 2), "F.pixel_unshuffle(x0, 2)", yv);
    END;
}

/* ---- sweeps over geometries: every output size rule, ceil_mode border, and the errors ---- */
static uint64_t sw_state = 88172645463325252ull;
static int64_t sw_pick(int64_t lo, int64_t hi) {   /* xorshift: a fixed sequence of choices */
    sw_state ^= sw_state << 13;
    sw_state ^= sw_state >> 7;
    sw_state ^= sw_state << 17;
    return lo + (int64_t)(sw_state % (uint64_t)(hi - lo + 1));
}
TEST(oc_sweep_pool) {
    BEGIN;
    for (int64_t L = 4; L <= 7; L++) {
        tn_tensor *x = RN(1, 2, L), *idx = NULL, *y;
        for (int64_t k = 1; k <= 4; k++)
            for (int64_t st = 1; st <= 3; st++)
                for (int64_t p = 0; p <= k / 2; p++)
                    for (int c = 0; c < 2; c++) {
                        for (int64_t d = 1; d <= 2; d++) {
                            y = tn_max_pool1d_with_indices(x, &idx, k, .stride = st, .padding = p, .dilation = d, .ceil_mode = c);
                            ORACLE_SWEEP_X(TOL64, y, TS(y ? idx : NULL), PY("F.max_pool1d(x0, %lld, %lld, %lld, %lld, %s, True)", (long long)k, (long long)st,
                                                                       (long long)p, (long long)d, c ? "True" : "False"), x);
                        }
                        for (int cip = 0; cip < 2; cip++)
                            ORACLE_SWEEP(TOL64, tn_avg_pool1d(x, k, .stride = st, .padding = p, .ceil_mode = c, .count_include_pad = cip), PY("F.avg_pool1d(x0, %lld, %lld, %lld, %s, %s)", (long long)k, (long long)st,
                                                                                      (long long)p, c ? "True" : "False", cip ? "True" : "False"), x);
                    }
    }
    /* 2-d: random geometries, divisor_override included */
    tn_tensor *x2 = RN(1, 2, 6, 5);
    for (int t = 0; t < 40; t++) {
        int64_t k[2] = {sw_pick(1, 4), sw_pick(1, 4)}, st[2] = {sw_pick(1, 3), sw_pick(1, 3)}, p[2] = {sw_pick(0, k[0] / 2), sw_pick(0, k[1] / 2)};
        int64_t div = sw_pick(0, 1) ? sw_pick(1, 7) : 0;
        bool c = sw_pick(0, 1), cip = sw_pick(0, 1);
        ORACLE_SWEEP(TOL64, tn_avg_pool2d(x2, k[0], .kernel_size_hw = {k[0], k[1]}, .stride_hw = {st[0], st[1]}, .padding_hw = {p[0], p[1]}, .ceil_mode = c, .count_include_pad = cip, .divisor_override = div ? div : TN_NONE),
                     PY("F.avg_pool2d(x0, (%lld, %lld), (%lld, %lld), (%lld, %lld), %s, %s, %s)", (long long)k[0], (long long)k[1], (long long)st[0],
                        (long long)st[1], (long long)p[0], (long long)p[1], c ? "True" : "False", cip ? "True" : "False", div ? PY("%lld", (long long)div) : "None"), x2);
    }
    /* 2-d max: random geometries, dilation included (windows coded by their position) */
    for (int t = 0; t < 30; t++) {
        int64_t k[2] = {sw_pick(1, 4), sw_pick(1, 4)}, st[2] = {sw_pick(1, 3), sw_pick(1, 3)}, p[2] = {sw_pick(0, k[0] / 2), sw_pick(0, k[1] / 2)};
        int64_t d[2] = {sw_pick(1, 2), sw_pick(1, 2)};
        for (int i = 0; i < 2; i++) if ((k[i] - 1) * d[i] + 1 > x2->shape[2 + i] + 2 * p[i]) d[i] = 1;   /* windows that fit */
        oc_maxpool_case(__LINE__, x2, k, st, p, d, sw_pick(0, 1), TOL64);
    }
    /* 2x2 stride 2 (vectorised rows) over odd and even sizes, float32 too; windows of more than
       256 positions (int64 indices and gather instead of codes) */
    for (int64_t h = 2; h <= 5; h++) {
        tn_tensor *xk = RN(2, 3, h, 2 * h + 1);
        OC_MAXPOOL(xk, PAIR(2, 2), PAIR(2, 2), PAIR(0, 0), PAIR(1, 1), false, TOL64);
        OC_MAXPOOL(f32(xk), PAIR(2, 2), PAIR(2, 2), PAIR(0, 0), PAIR(1, 1), h % 2 == 1, TOL32);
    }
    tn_tensor *xb = RN(1, 2, 18, 17);
    OC_MAXPOOL(xb, PAIR(17, 16), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1), false, TOL64);
    OC_MAXPOOL(xb, PAIR(16, 16), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1), false, TOL64);
    /* adaptive: every (in, out) pair up to 8 */
    for (int64_t in = 1; in <= 8; in++) {
        tn_tensor *xa = RN(1, 1, in, 3), *idx = NULL, *y;
        for (int64_t out = 1; out <= 8; out++) {
            ORACLE(TOL64, tn_adaptive_avg_pool2d(xa, out, 2), PY("F.adaptive_avg_pool2d(x0, (%lld, 2))", (long long)out), xa);
            y = tn_adaptive_max_pool2d(xa, out, 2, &idx);
            ORACLE_X(TOL64, y, TS(idx), PY("F.adaptive_max_pool2d(x0, (%lld, 2), True)", (long long)out), xa);
        }
    }
    END;
}

TEST(oc_sweep_interpolate) {
    BEGIN;
    static const char *modes[3][2] = {{"nearest", "mode='nearest'"}, {"linear", "mode='linear', align_corners=False"}, {"linear", "mode='linear', align_corners=True"}};
    for (int64_t in = 1; in <= 7; in++) {
        tn_tensor *x = RN(1, 2, in);
        for (int m = 0; m < 3; m++) {
            for (int64_t out = 1; out <= 10; out++)
                ORACLE(TOL64, tn_interpolate(x, .size = TN_INTS(out), .mode = modes[m][0], .align_corners = m ? m == 2 : -1), PY("F.interpolate(x0, size=%lld, %s)", (long long)out, modes[m][1]), x);
            static const double sfs[8] = {0.3, 0.5, 0.7, 1.3, 1.5, 2.5, 3.0, 1.0 / 3};
            for (int j = 0; j < 8; j++) {
                /* nearest with a scale_factor that keeps the size: torch 1.13's backward ignores the
                   scale its forward used (a torch bug), so only the forward is compared */
                tn_tensor *xi = m == 0 && (int64_t)floor((double)in * sfs[j]) == in ? tn_detach(x) : x;
                ORACLE_SWEEP(TOL64, tn_interpolate(xi, .scale_factor = TN_DOUBLES(sfs[j]), .mode = modes[m][0], .align_corners = m ? m == 2 : -1), PY("F.interpolate(x0, scale_factor=%.17g, %s)", sfs[j], modes[m][1]), xi);
            }
        }
    }
    /* 2-d nearest and bilinear at random sizes */
    tn_tensor *y = RN(1, 1, 5, 3);
    for (int t = 0; t < 24; t++) {
        int64_t sz[2] = {sw_pick(1, 11), sw_pick(1, 11)};
        int m = (int)sw_pick(0, 2);
        ORACLE(TOL64, tn_interpolate(y, .size = TN_INTS(sz[0], sz[1]), .mode = m ? "bilinear" : "nearest", .align_corners = m ? m == 2 : -1),
               PY("F.interpolate(x0, size=(%lld, %lld), mode='%s'%s)", (long long)sz[0], (long long)sz[1], m ? "bilinear" : "nearest",
                  m == 2 ? ", align_corners=True" : m == 1 ? ", align_corners=False" : ""), y);
    }
    END;
}

TEST(oc_sweep_conv) {
    BEGIN;
    /* conv1d and conv_transpose1d over random geometries (invalid ones must fail on both sides) */
    for (int t = 0; t < 70; t++) {
        int64_t L = sw_pick(1, 8), k = sw_pick(1, 4), st = sw_pick(1, 3), p = sw_pick(0, 2), d = sw_pick(1, 3), g = sw_pick(1, 2), N = sw_pick(0, 2);
        bool same = sw_pick(0, 4) == 0;
        if (same) st = 1;
        tn_tensor *x = N ? RN(N, 2 * g, L) : RN(2 * g, L), *w = RN(3 * g, 2, k), *b = sw_pick(0, 1) ? RN(3 * g) : NULL;
        tn_tensor *y = tn_conv1d(x, w, b, .stride = st, .padding = same ? TN_PADDING_SAME : p, .dilation = d, .groups = g);
        const char *code = PY("F.conv1d(x0, x1, %s, %lld, %s, %lld, %lld)", b ? "x2" : "None", (long long)st, same ? "'same'" : PY("%lld", (long long)p), (long long)d, (long long)g);
        if (b) ORACLE_SWEEP(TOL64, y, code, x, w, b);
        else ORACLE_SWEEP(TOL64, y, code, x, w);
    }
    for (int t = 0; t < 70; t++) {
        int64_t L = sw_pick(1, 5), k = sw_pick(1, 4), st = sw_pick(1, 3), p = sw_pick(0, 2), d = sw_pick(1, 3), g = sw_pick(1, 2), op = sw_pick(0, 2);
        tn_tensor *x = RN(1, 2 * g, L), *w = RN(2 * g, 3, k), *b = sw_pick(0, 1) ? RN(3 * g) : NULL;
        tn_tensor *y = tn_conv_transpose1d(x, w, b, .stride = st, .padding = p, .output_padding = op, .groups = g, .dilation = d);
        const char *code = PY("F.conv_transpose1d(x0, x1, %s, %lld, %lld, %lld, %lld, %lld)", b ? "x2" : "None", (long long)st, (long long)p, (long long)op, (long long)g, (long long)d);
        if (b) ORACLE_SWEEP(TOL64, y, code, x, w, b);
        else ORACLE_SWEEP(TOL64, y, code, x, w);
    }
    /* 2-d, fewer */
    for (int t = 0; t < 30; t++) {
        int64_t s2[2] = {sw_pick(1, 3), sw_pick(1, 3)}, p2[2] = {sw_pick(0, 2), sw_pick(0, 2)}, d2[2] = {sw_pick(1, 2), sw_pick(1, 2)}, g = sw_pick(1, 2);
        tn_tensor *x = RN(1, 2 * g, sw_pick(2, 6), sw_pick(2, 6)), *w = RN(2 * g, 1, sw_pick(1, 3), sw_pick(1, 3));
        tn_tensor *y = tn_conv2d(x, w, NULL, .stride_hw = {s2[0], s2[1]}, .padding_hw = {p2[0], p2[1]}, .dilation_hw = {d2[0], d2[1]}, .groups = g);
        ORACLE_SWEEP(TOL64, y, PY("F.conv2d(x0, x1, None, (%lld, %lld), (%lld, %lld), (%lld, %lld), %lld)", (long long)s2[0], (long long)s2[1],
                                  (long long)p2[0], (long long)p2[1], (long long)d2[0], (long long)d2[1], (long long)g), x, w);
        int64_t o2[2] = {sw_pick(0, 1), sw_pick(0, 1)};
        y = tn_conv_transpose2d(x, w, NULL, .stride_hw = {s2[0], s2[1]}, .padding_hw = {p2[0], p2[1]}, .output_padding_hw = {o2[0], o2[1]}, .groups = g, .dilation_hw = {d2[0], d2[1]});
        ORACLE_SWEEP(TOL64, y, PY("F.conv_transpose2d(x0, x1, None, (%lld, %lld), (%lld, %lld), (%lld, %lld), %lld, (%lld, %lld))", (long long)s2[0], (long long)s2[1],
                                  (long long)p2[0], (long long)p2[1], (long long)o2[0], (long long)o2[1], (long long)g, (long long)d2[0], (long long)d2[1]), x, w);
    }
    END;
}

/* ---- edge cases: empty batches, 0-d, fully masked rows, partial requires_grad ---- */
TEST(oc_edges) {
    BEGIN;
    /* an empty batch goes through (or fails) as in torch */
    tn_tensor *e4 = RN(0, 3, 5, 4), *e3 = RN(0, 3, 6), *w = RN(2, 3, 3, 3), *w1 = RN(2, 3, 3), *idx = NULL, *y;
    ORACLE_SWEEP(TOL64, tn_conv2d(e4, w, NULL, .padding = 1), "F.conv2d(x0, x1, None, 1, 1)", e4, w);
    ORACLE_SWEEP(TOL64, tn_conv1d(e3, w1, NULL), "F.conv1d(x0, x1)", e3, w1);
    ORACLE_SWEEP(TOL64, tn_conv_transpose2d(e4, RN(3, 2, 2, 2), NULL, .stride = 2), "F.conv_transpose2d(x0, torch.zeros(3, 2, 2, 2, dtype=torch.float64), None, 2)", e4);
    y = tn_max_pool2d_with_indices(e4, &idx, 2);
    ORACLE_SWEEP_X(TOL64, y, TS(y ? idx : NULL), "F.max_pool2d(x0, 2, return_indices=True)", e4);
    ORACLE_SWEEP(TOL64, tn_avg_pool2d(e4, 2), "F.avg_pool2d(x0, 2)", e4);
    ORACLE_SWEEP(TOL64, tn_adaptive_avg_pool2d(e4, 2, 2), "F.adaptive_avg_pool2d(x0, 2)", e4);
    ORACLE_SWEEP(TOL64, tn_layer_norm(e4, I(5, 4), 2), "F.layer_norm(x0, (5, 4))", e4);
    ORACLE_SWEEP(TOL64, tn_group_norm(e4, 3), "F.group_norm(x0, 3)", e4);
    ORACLE_SWEEP(TOL64, tn_batch_norm(e4, NULL, NULL, .training = true), "F.batch_norm(x0, None, None, training=True)", e4);
    tn_tensor *lw = RN(4, 6), *el = RN(0, 6);
    ORACLE_SWEEP(TOL64, tn_linear(el, lw, NULL), "F.linear(x0, x1)", el, lw);
    ORACLE_SWEEP(TOL64, tn_softmax(el, 1), "F.softmax(x0, 1)", el);
    ORACLE_SWEEP(TOL64, tn_interpolate(e3, .size = TN_INTS(9), .mode = "linear"), "F.interpolate(x0, size=9, mode='linear')", e3);
    ORACLE_SWEEP(TOL64, tn_pixel_shuffle(RN(0, 4, 2, 2), 2), "F.pixel_shuffle(x0, 2)", tn_zeros(SH(0, 4, 2, 2), TN_F64));
    tn_tensor *ei = tn_zeros(SH(0, 2), TN_I64), *ew = RN(5, 3);
    ORACLE_SWEEP(TOL64, tn_embedding(ei, ew), "F.embedding(x0, x1)", ei, ew);
    ORACLE_SWEEP(0, tn_one_hot(tn_zeros(SH(0), TN_I64), .num_classes = 4), "F.one_hot(x0, 4)", tn_zeros(SH(0), TN_I64));
    /* 0-d softmax; a linear bias of 0 dims */
    tn_tensor *z = leaf(tn_scalar_tensor(2, TN_F64)), *b0 = leaf(tn_scalar_tensor(0.5, TN_F64)), *x = RN(3, 6);
    ORACLE(TOL64, tn_softmax(z, 0), "F.softmax(x0, 0)", z);
    ORACLE(TOL64, tn_log_softmax(z, -1), "F.log_softmax(x0, -1)", z);
    ORACLE_SWEEP(TOL64, tn_linear(x, lw, b0), "F.linear(x0, x1, x2)", x, lw, b0);
    /* attention: a row that may attend to nothing gives NaN in the reference too; a -inf float mask */
    tn_tensor *q = RN(3, 4), *k = RN(5, 4), *v = RN(5, 2);
    static const bool mb[15] = {1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    tn_tensor *bm = tn_from_data(mb, SH(3, 5), TN_BOOL);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .attn_mask = bm), "sdpa(x0, x1, x2, x3)", q, k, v, bm);
    tn_tensor *fm = T64(D(0, -INFINITY, 0, 1, 2, -INFINITY, 0, 0, 0, 0, 0.5, -1, -2, 3, -INFINITY), 3, 5);
    ORACLE(TOL64, tn_scaled_dot_product_attention(q, k, v, .attn_mask = fm), "sdpa(x0, x1, x2, x3)", q, k, v, fm);
    /* dropout_p = 1 zeroes every weight: the output is 0 */
    CHECK_VALS(tn_scaled_dot_product_attention(q, k, v, .dropout_p = 1), 0, 0, 0, 0, 0, 0, 0);
    /* gradients for some inputs only */
    tn_tensor *xc = CONST(2, 3, 5, 4), *wr = RN(2, 3, 3, 3), *br = RN(2);
    ORACLE(TOL64, tn_conv2d(xc, wr, br, .padding = 1), "F.conv2d(x0, x1, x2, 1, 1)", xc, wr, br);
    tn_tensor *xr = RN(2, 3, 5, 4), *wc = CONST(2, 3, 3, 3);
    ORACLE(TOL64, tn_conv2d(xr, wc, NULL, .stride = 2, .padding = 1), "F.conv2d(x0, x1, None, 2, 1)", xr, wc);
    tn_tensor *lnw = RN(4), *xl = CONST(2, 3, 4);
    ORACLE(TOL64, tn_layer_norm(xl, I(4), 1, .weight = lnw), "F.layer_norm(x0, (4,), x1)", xl, lnw);
    tn_tensor *bb = RN(3);
    ORACLE(TOL64, tn_batch_norm(xc, NULL, NULL, .bias = bb, .training = true), "F.batch_norm(x0, None, None, None, x1, True)", xc, bb);
    /* momentum 1: the running statistics become the batch's */
    tn_tensor *rm = tn_zeros(SH(3), TN_F64), *rv = tn_zeros(SH(3), TN_F64), *xb = RN(4, 3, 2);
    tn_tensor *yb = tn_batch_norm(xb, rm, rv, .training = true, .momentum = 1.0);
    ORACLE_X(TOL64, yb, TS(rm, rv), "exec:m = torch.zeros(3, dtype=torch.float64); v = torch.zeros(3, dtype=torch.float64); "
             "out = F.batch_norm(x0, m, v, None, None, True, 1.0); extras = [m, v]", xb);
    /* only one of the running statistics given: torch updates that one */
    tn_tensor *rmo = tn_zeros(SH(3), TN_F64), *rvo = tn_ones(SH(3), TN_F64);
    yb = tn_batch_norm(xb, rmo, NULL, .training = true);
    ORACLE_X(TOL64, yb, TS(rmo), "exec:m = torch.zeros(3, dtype=torch.float64); out = F.batch_norm(x0, m, None, None, None, True); extras = [m]", xb);
    yb = tn_batch_norm(xb, NULL, rvo, .training = true);
    ORACLE_X(TOL64, yb, TS(rvo), "exec:v = torch.ones(3, dtype=torch.float64); out = F.batch_norm(x0, None, v, None, None, True); extras = [v]", xb);
    /* running statistics are updated under no_grad too */
    tn_tensor *rm2 = tn_zeros(SH(3), TN_F64), *rv2 = tn_ones(SH(3), TN_F64);
    tn_no_grad_begin();
    tn_tensor *yn = tn_batch_norm(xb, rm2, rv2, .training = true);
    tn_no_grad_end();
    CHECK(yn && !tn_requires_grad(yn));
    CHECK_SAME(rm2, tn_mul_scalar(rm, 0.1), 1e-12);
    /* float32 statistics of data far from 0 (catastrophic cancellation in a one-pass variance) */
    tn_tensor *big = f32(tn_add_scalar(tn_randn(SH(16, 3, 16, 16), TN_F64), 1000));
    ORACLE(1e-3, tn_batch_norm(big, NULL, NULL, .training = true), "F.batch_norm(x0, None, None, training=True)", big);
    ORACLE(1e-3, tn_layer_norm(big, I(3, 16, 16), 3), "F.layer_norm(x0, (3, 16, 16))", big);
    ORACLE(1e-3, tn_group_norm(big, 3), "F.group_norm(x0, 3)", big);
    ORACLE(1e-3, tn_instance_norm(big), "F.instance_norm(x0)", big);
    tn_tensor *rmb = tn_zeros(SH(3), TN_F32), *rvb = tn_ones(SH(3), TN_F32);
    tn_tensor *ybig = tn_batch_norm(big, rmb, rvb, .training = true);
    ORACLE_X(1e-4, ybig, TS(rmb, rvb), "exec:m = torch.zeros(3); v = torch.ones(3); out = F.batch_norm(x0, m, v, None, None, True); extras = [m, v]", big);
    /* indices of any shape for embedding; non-contiguous indices */
    tn_tensor *iv = tn_t(IDX(I(0, 1, 2, 3, 4, 0), 2, 3)), *ew2 = RN(5, 3);
    ORACLE(TOL64, tn_embedding(iv, ew2), "F.embedding(x0, x1)", iv, ew2);
    ORACLE(0, tn_one_hot(iv, .num_classes = 6), "F.one_hot(x0, 6)", iv);
    END;
}

/* ==================================================================================== */
/* 3. gradcheck (float64) for every op; gradgradcheck where the op is twice differentiable */
/* ==================================================================================== */
GF(g_linear, tn_linear(tn_t(IN0), IN1, IN2))                                       /* x stored [in, N] */
GF(g_linear3, tn_linear(IN0, IN1, NULL))
GF(g_bilinear, tn_bilinear(IN0, IN1, IN2, IN3))
GF(g_conv2d, tn_conv2d(IN0, IN1, IN2, .padding = 1))
GF(g_conv2d_1x1, tn_conv2d(IN0, IN1, IN2, .groups = 2))                         /* 1x1: no im2col, groups */
GF(g_conv2d_1x1s, tn_conv2d(tn_permute(IN0, TN_SHAPE(0, 3, 1, 2)), IN1, NULL))  /* channels-last image */
GF(g_conv2d_ex, tn_conv2d(tn_transpose(IN0, 2, 3), IN1, NULL, .stride_hw = {2, 1}, .padding_hw = {1, 0}, .dilation_hw = {1, 2}, .groups = 2))
GF(g_conv2d_same, tn_conv2d(IN0, IN1, NULL, .padding = TN_PADDING_SAME, .dilation = 2))
GF(g_conv1d, tn_conv1d(IN0, IN1, IN2, .stride = 2, .padding = 1))
GF(g_conv1d_g, tn_conv1d(IN0, IN1, NULL, .padding = TN_PADDING_SAME, .dilation = 2, .groups = 2))
GF(g_convt2d, tn_conv_transpose2d(IN0, IN1, IN2, .stride = 2, .padding = 1, .output_padding = 1))
GF(g_convt2d_ex, tn_conv_transpose2d(IN0, IN1, NULL, .stride_hw = {1, 2}, .padding_hw = {0, 1}, .output_padding_hw = {0, 1}, .groups = 2, .dilation_hw = {2, 1}))
GF(g_convt1d, tn_conv_transpose1d(IN0, IN1, IN2, .stride = 2, .output_padding = 1, .dilation = 2))
GF(g_im2col, tn_im2col(IN0, PAIR(2, 3), PAIR(1, 1), PAIR(1, 1), PAIR(1, 2)))
GF(g_col2im, tn_col2im(IN0, PAIR(4, 5), PAIR(2, 3), PAIR(1, 1), PAIR(1, 1), PAIR(1, 2)))
GF(g_maxpool2d, tn_max_pool2d(IN0, 3, .stride = 2, .padding = 1, .ceil_mode = true))
GF(g_maxpool2d_ex, tn_max_pool2d(tn_transpose(IN0, 2, 3), 2, .kernel_size_hw = {2, 3}, .stride_hw = {1, 2}, .padding_hw = {1, 0}, .dilation_hw = {2, 1}))
GF(g_maxpool1d, tn_max_pool1d(IN0, 3, .stride = 2, .padding = 1, .ceil_mode = true))
GF(g_avgpool2d, tn_avg_pool2d(IN0, 3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false))
GF(g_avgpool2d_ex, tn_avg_pool2d(IN0, 2, .kernel_size_hw = {2, 3}, .stride_hw = {1, 2}, .padding = 1, .divisor_override = 4))
GF(g_avgpool1d, tn_avg_pool1d(IN0, 3, .stride = 2, .padding = 1))
GF(g_aavg, tn_adaptive_avg_pool2d(IN0, 2, 3))
GF(g_amax, tn_adaptive_max_pool2d(IN0, 2, 3, NULL))
GF(g_bn_train, tn_batch_norm(IN0, NULL, NULL, .weight = IN1, .bias = IN2, .training = true))
GF(g_bn_eval, tn_batch_norm(IN0, IN3, tn_add_scalar(tn_abs(IN3), 0.5), .weight = IN1, .bias = IN2))
GF(g_ln, tn_layer_norm(IN0, I(3, 4), 2, .weight = IN1, .bias = IN2))
GF(g_ln_plain, tn_layer_norm(IN0, I(5), 1))
GF(g_ln_whole, tn_layer_norm(IN0, I(2, 3), 2, .weight = IN1, .bias = IN2, .eps = 0.1))
GF(g_gn, tn_group_norm(IN0, 2, .weight = IN1, .bias = IN2))
GF(g_in, tn_instance_norm(IN0, .weight = IN1, .bias = IN2))
GF(g_emb, tn_embedding(IDX(I(1, 3, 3, 0), 2, 2), IN0))
GF(g_emb_pad, tn_embedding_padded(IDX(I(1, 3, 3, 0), 2, 2), IN0, 2))   /* the padding row 2 is not used: its zero gradient is not a finite difference */
GF(g_softmax, tn_softmax(IN0, 1))
GF(g_log_softmax, tn_log_softmax(tn_t(IN0), 0))
GF(g_sdpa, tn_scaled_dot_product_attention(IN0, IN1, IN2))
GF(g_sdpa_mask, tn_scaled_dot_product_attention(IN0, IN1, IN2, .attn_mask = IN3))
GF(g_sdpa_causal, tn_scaled_dot_product_attention(IN0, IN1, IN2, .is_causal = true, .scale = 0.7))
GF(g_interp_near, tn_interpolate(IN0, .size = TN_INTS(5, 7)))
GF(g_interp_lin, tn_interpolate(IN0, .scale_factor = TN_DOUBLES(1.6), .mode = "linear"))
GF(g_interp_bil, tn_interpolate(IN0, .size = TN_INTS(5, 4), .mode = "bilinear", .align_corners = true))
GF(g_interp_bil2, tn_interpolate(IN0, .size = TN_INTS(2, 5), .mode = "bilinear"))
GF(g_pixel_shuffle, tn_pixel_shuffle(IN0, 2))
GF(g_pixel_unshuffle, tn_pixel_unshuffle(IN0, 2))
/* dropout with the same mask on every evaluation (the seed is reset inside) */
GF(g_dropout, (tn_manual_seed(7), tn_dropout(IN0, .p = 0.4)))
GF(g_dropout2d, (tn_manual_seed(7), tn_dropout2d(IN0)))

TEST(gc_layers) {
    BEGIN;
    GC2(g_linear, RN(5, 3), RN(4, 5), RN(4));
    GC1(g_linear3, RN(2, 1, 3), RN(2, 3));
    GC2(g_bilinear, RN(2, 3), RN(2, 2), RN(2, 3, 2), RN(2));
    GC2(g_conv2d, RN(1, 2, 4, 3), RN(2, 2, 2, 2), RN(2));
    GC1(g_conv2d_ex, RN(1, 4, 4, 5), RN(2, 2, 2, 2));
    GC2(g_conv2d_1x1, RN(3, 4, 2, 3), RN(2, 2, 1, 1), RN(2));
    GC2(g_conv2d_1x1s, RN(2, 2, 3, 2), RN(2, 2, 1, 1));
    GC2(g_conv2d, RN(3, 2, 3, 3), RN(2, 2, 2, 2), RN(2));
    GC1(g_conv2d_same, RN(1, 1, 4, 3), RN(1, 1, 2, 2));
    GC1(g_conv1d, RN(2, 2, 5), RN(2, 2, 3), RN(2));
    GC1(g_conv1d_g, RN(1, 2, 6), RN(4, 1, 2));
    GC2(g_convt2d, RN(1, 2, 3, 2), RN(2, 1, 2, 2), RN(1));
    GC1(g_convt2d_ex, RN(1, 2, 3, 2), RN(2, 1, 2, 2));
    GC1(g_convt1d, RN(1, 2, 3), RN(2, 2, 2), RN(2));
    GC2(g_im2col, RN(1, 2, 4, 5));
    GC2(g_col2im, RN(1, 12, 15));
    END;
}

TEST(gc_pool_norm) {
    BEGIN;
    GC2(g_maxpool2d, RN(1, 2, 5, 4));
    GC1(g_maxpool2d_ex, RN(1, 1, 6, 5));
    GC1(g_maxpool1d, RN(2, 7));
    GC2(g_avgpool2d, RN(1, 2, 5, 4));
    GC1(g_avgpool2d_ex, RN(1, 1, 5, 6));
    GC1(g_avgpool1d, RN(1, 2, 7));
    GC2(g_aavg, RN(1, 1, 5, 4));
    GC1(g_amax, RN(2, 5, 4));
    GC2(g_bn_train, RN(3, 2, 2), RN(2), RN(2));
    GC1(g_bn_eval, RN(2, 2, 3), RN(2), RN(2), CONST(2));
    GC2(g_ln, RN(2, 3, 4), RN(3, 4), RN(3, 4));
    GC2(g_ln_plain, RN(3, 5));
    GC2(g_ln_whole, RN(2, 3), RN(2, 3), RN(2, 3));   /* no leading dims */
    GC2(g_gn, RN(2, 4, 3), RN(4), RN(4));
    GC1(g_in, RN(2, 2, 4), RN(2), RN(2));
    GC1(g_emb, RN(4, 3));
    GC1(g_emb_pad, RN(4, 3));
    END;
}

TEST(gc_misc) {
    BEGIN;
    GC2(g_softmax, RN(3, 4));
    GC2(g_log_softmax, RN(4, 3));
    GC2(g_sdpa, RN(2, 3, 2), RN(2, 4, 2), RN(2, 4, 2));
    GC1(g_sdpa_mask, RN(3, 2), RN(4, 2), RN(4, 3), RN(3, 4));
    GC1(g_sdpa_causal, RN(3, 2), RN(3, 2), RN(3, 2));
    GC1(g_interp_near, RN(1, 2, 3, 4));
    GC2(g_interp_lin, RN(1, 2, 5));
    GC1(g_interp_bil, RN(1, 1, 3, 3));
    GC1(g_interp_bil2, RN(1, 2, 4, 3));
    GC1(g_pixel_shuffle, RN(1, 4, 2, 3));
    GC1(g_pixel_unshuffle, RN(2, 4, 2));
    GC1(g_dropout, RN(4, 5));
    GC1(g_dropout2d, RN(2, 4, 2, 2));
    END;
}

static tn_tensor *act_gc(tn_tensor *const *in_, int n_, void *u_) { (void)n_; return ((const act_case *)u_)->f(in_[0]); }
TEST(gc_activations) {
    BEGIN;
    /* away from every kink (-3, -1, -0.5, 0, 2, 3, 5, 6) */
    tn_tensor *x = leaf(T64(D(-4.1, -2.7, -1.3, -0.7, -0.2, 0.3, 0.8, 1.7, 2.6, 4.1, 5.5, 7.2), 3, 4));
    for (int i = 0; i < NACTS; i++) {
        tn_clear_error();
        int64_t live0 = tn_memory_stats_get().live_tensors;
        CHECK_MSG(tn_gradcheck(act_gc, &x, 1, (void *)&acts[i]), "gradcheck %s: %s", acts[i].name, tn_last_error());
        if (acts[i].smooth)
            CHECK_MSG(tn_gradgradcheck(act_gc, &x, 1, (void *)&acts[i]), "gradgradcheck %s: %s", acts[i].name, tn_last_error());
        CHECK_MSG(tn_memory_stats_get().live_tensors == live0, "gradcheck %s leaked", acts[i].name);
    }
    /* second derivatives of the piecewise ones, away from the kinks: gradgradcheck too */
    const int pw[] = {4, 6, 7, 15};   /* elu, selu, celu, hardswish */
    for (int j = 0; j < 4; j++)
        CHECK_MSG(tn_gradgradcheck(act_gc, &x, 1, (void *)&acts[pw[j]]), "gradgradcheck %s: %s", acts[pw[j]].name, tn_last_error());
    END;
}

/* ==================================================================================== */
/* 4. dropout, grad_fn names, errors, NULL inputs                                         */
/* ==================================================================================== */
/* dropout's one-pass CPU mask: the same numbers as tn_rand's float64 draws compared with
   1 - p, scaled (the composite it replaces), for float32/float64, odd sizes, a view, any p;
   and it takes as many draws from the generator as they did. Each copy of the loop (knob
   tn__drop_wide: 0 plain, 1 AVX2, 2 AVX-512, where the CPU has them). */
TEST(dropout_mask_draws) {
    BEGIN;
    const double ps[4] = {0.25, 0.5, 0.9, 1e-9};
    const int64_t sizes[3] = {1, 37, 10007};
    for (int lv = 0; lv < 3; lv++) {
        tn__drop_wide = lv;
        for (int d = 0; d < 2; d++)
            for (int k = 0; k < 4; k++)
                for (int s = 0; s < 3; s++) {
                    const tn_dtype dt = d ? TN_F64 : TN_F32;
                    const double p = ps[k];
                    tn_tensor *x = tn_transpose(tn_randn(SH(sizes[s], 3), dt), 0, 1);   /* [3, n], a view */
                    tn_manual_seed(11 + (uint64_t)k);
                    tn_tensor *y = tn_dropout(x, .p = p), *after = tn_rand(SH(5), TN_F64);
                    tn_manual_seed(11 + (uint64_t)k);
                    tn_tensor *u = tn_rand(SH(3, sizes[s]), TN_F64);
                    tn_tensor *mask = tn_mul_scalar(tn_to_dtype(tn_lt_scalar(u, 1 - p), dt), 1 / (1 - p));
                    CHECK_MSG(y && tn_equal(y, tn_mul(x, mask)), "dropout (loop %d) %s p=%g n=%lld: the mask differs from the draws", lv, tn_dtype_name(dt), p, (long long)sizes[s]);
                    CHECK(tn_equal(after, tn_rand(SH(5), TN_F64)));   /* the generator moved on as far */
                }
    }
    tn__drop_wide = 2;
    END;
}

TEST(dropout_stats) {
    BEGIN;
    const int64_t n = 100000;
    tn_tensor *x = leaf(tn_ones(SH(n), TN_F32));
    const double ps[3] = {0.1, 0.3, 0.75};
    for (int k = 0; k < 3; k++) {
        double p = ps[k];
        tn_tensor *y = tn_dropout(x, .p = p);
        CHECK_DTYPE(y, TN_F32);
        CHECK_SHAPE(y, n);
        int64_t m;
        double *v = tdata(y, &m), *g = tdata(grad_of(y, x, NULL), &m);
        int64_t zeros = 0, bad = 0, badg = 0;
        const float keep = (float)(1 / (1 - p));
        for (int64_t i = 0; i < m; i++) {
            if (v[i] == 0) zeros++;
            else if (v[i] != (double)keep) bad++;
            if (g[i] != v[i]) badg++;     /* the gradient is the mask: 0 or 1/(1-p) */
        }
        free(v);
        free(g);
        CHECK_MSG(m == n && fabs((double)zeros / (double)n - p) < 0.01, "dropout p=%g zeroed %lld of %lld", p, (long long)zeros, (long long)n);
        CHECK_MSG(bad == 0, "dropout p=%g: %lld kept values are not 1/(1-p)", p, (long long)bad);
        CHECK_MSG(badg == 0, "dropout p=%g: %lld gradients differ from the mask", p, (long long)badg);
        CHECK_CLOSE(tn_item(tn_mean(y)), 1, 0.02);   /* unbiased */
    }
    /* two calls draw different masks */
    CHECK(!tn_equal(tn_dropout(x), tn_dropout(x)));
    /* the same seed gives the same mask */
    tn_manual_seed(5);
    tn_tensor *a = tn_dropout(x);
    tn_manual_seed(5);
    CHECK(tn_equal(a, tn_dropout(x)));
    /* not training, or p = 0: the input itself (as PyTorch returns it) */
    tn_tensor *e = tn_dropout(x, .training = false);
    CHECK(e && tn_equal(e, x) && tn_same_storage(e, x));
    tn_tensor *z = tn_dropout(x, .p = 0);
    CHECK(z && tn_equal(z, x));
    CHECK(tn_equal(tn_dropout2d(x, .training = false), x));
    /* p = 1: all zeros, gradient zero */
    tn_tensor *x64 = RN(50);
    tn_tensor *o = tn_dropout(x64, .p = 1);
    CHECK(o && tn_item(tn_sum(tn_abs(o))) == 0);
    CHECK(o && tn_item(tn_sum(tn_abs(grad_of(o, x64, NULL)))) == 0);
    CHECK_VALS(tn_dropout2d(tn_ones(SH(1, 2, 2, 1), TN_F64), .p = 1), 0, 0, 0, 0, 0);
    /* float64 and non-contiguous inputs keep their values where kept */
    tn_tensor *r = tn_transpose(tn_randn(SH(30, 40), TN_F64), 0, 1), *dr = tn_dropout(r);
    CHECK(dr && tn_item(tn_sum(tn_abs(tn_sub(tn_mul(dr, tn_ne_scalar(dr, 0)), tn_mul_scalar(tn_mul(r, tn_ne_scalar(dr, 0)), 2))))) < 1e-12);
    CHECK_DTYPE(dr, TN_F64);
    END;
}

TEST(dropout2d_channels) {
    BEGIN;
    /* [N, C, H, W]: each (n, c) plane is all zero or all 1/(1-p) */
    tn_tensor *x = tn_ones(SH(20, 500, 2, 3), TN_F32);
    tn_tensor *y = tn_dropout2d(x, .p = 0.4);
    CHECK_SHAPE(y, 20, 500, 2, 3);
    int64_t m, zeroed = 0, mixed = 0;
    double *v = tdata(y, &m);
    for (int64_t c = 0; c < 20 * 500; c++) {
        int z = 0;
        for (int k = 0; k < 6; k++) z += v[c * 6 + k] == 0;
        if (z == 6) zeroed++;
        else if (z != 0) mixed++;
        else for (int k = 0; k < 6; k++) if (v[c * 6 + k] != (double)(float)(1 / 0.6)) mixed++;
    }
    free(v);
    CHECK_MSG(mixed == 0, "dropout2d: %lld channels are partly zeroed or wrongly scaled", (long long)mixed);
    CHECK_MSG(fabs((double)zeroed / 10000 - 0.4) < 0.03, "dropout2d zeroed %lld of 10000 channels (p = 0.4)", (long long)zeroed);
    /* the gradient is the channel mask */
    tn_tensor *xl = leaf(tn_ones(SH(2, 3, 2, 2), TN_F64)), *yl = tn_dropout2d(xl);
    CHECK_SAME(grad_of(yl, xl, NULL), yl, 0);
    /* 3-d input: PyTorch 1.13's feature_dropout treats it as [N, C, L] (a warning says so):
       each row of the last dim is zeroed as a whole */
    tn_tensor *u = tn_dropout2d(tn_ones(SH(100, 40, 5), TN_F32));
    v = tdata(u, &m);
    int64_t rows_zero = 0, partial = 0;
    for (int64_t r = 0; v && r < 100 * 40; r++) {
        int z = 0;
        for (int k = 0; k < 5; k++) z += v[r * 5 + k] == 0;
        if (z == 5) rows_zero++;
        else if (z) partial++;
    }
    free(v);
    CHECK_MSG(partial == 0 && fabs((double)rows_zero / 4000 - 0.5) < 0.05, "dropout2d of [100, 40, 5]: %lld of 4000 rows zeroed, %lld partly",
              (long long)rows_zero, (long long)partial);
    END;
}

TEST(grad_fn_names) {
    BEGIN;
    tn_tensor *x = RN(2, 4, 6, 6), *w = RN(4, 4, 3, 3), *x3 = RN(2, 4, 6), *w3 = RN(4, 4, 3);
    CHECK_NAME(tn_conv2d(x, w, NULL), "ConvolutionBackward0");
    CHECK_NAME(tn_conv2d(x, w, RN(4)), "ConvolutionBackward0");
    CHECK_NAME(tn_conv1d(x3, w3, NULL), "ConvolutionBackward0");
    CHECK_NAME(tn_conv_transpose2d(x, w, NULL), "ConvolutionBackward0");
    CHECK_NAME(tn_conv_transpose1d(x3, w3, NULL), "ConvolutionBackward0");
    CHECK_NAME(tn_im2col(x, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "Im2ColBackward0");
    CHECK_NAME(tn_col2im(RN(2, 16, 25), PAIR(6, 6), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "Col2ImBackward0");
    CHECK_NAME(tn_max_pool2d(x, 2), "MaxPool2DWithIndicesBackward0");
    CHECK_NAME(tn_max_pool2d(x3, 2), "MaxPool2DWithIndicesBackward0");   /* unbatched too */
    CHECK_NAME(tn_avg_pool2d(x, 2), "AvgPool2DBackward0");
    CHECK_NAME(tn_avg_pool2d(x3, 2), "AvgPool2DBackward0");
    CHECK_NAME(tn_adaptive_avg_pool2d(x, 2, 3), "AdaptiveAvgPool2DBackward0");
    CHECK_NAME(tn_adaptive_avg_pool2d(x, 1, 1), "MeanBackward1");    /* PyTorch takes the mean for a 1x1 output */
    CHECK_NAME(tn_adaptive_max_pool2d(x, 2, 3, NULL), "AdaptiveMaxPool2DBackward0");
    CHECK_NAME(tn_batch_norm(x, NULL, NULL, .training = true), "NativeBatchNormBackward0");
    CHECK_NAME(tn_batch_norm(x, tn_zeros(SH(4), TN_F64), tn_ones(SH(4), TN_F64)), "NativeBatchNormBackward0");
    CHECK_NAME(tn_layer_norm(x, I(6), 1), "NativeLayerNormBackward0");
    CHECK_NAME(tn_layer_norm(x, I(6), 1, .weight = RN(6), .bias = RN(6)), "NativeLayerNormBackward0");
    CHECK_NAME(tn_group_norm(x, 2), "NativeGroupNormBackward0");
    CHECK_NAME(tn_embedding(IDX(I(1, 2), 2), RN(5, 3)), "EmbeddingBackward0");
    CHECK_NAME(tn_embedding_padded(IDX(I(1, 2), 2), RN(5, 3), 1), "EmbeddingBackward0");
    CHECK_NAME(tn_softmax(x, 1), "SoftmaxBackward0");
    CHECK_NAME(tn_log_softmax(x, 1), "LogSoftmaxBackward0");
    CHECK_NAME(tn_dropout(x), "MulBackward0");            /* PyTorch 1.13 on CPU: input * mask */
    CHECK_NAME(tn_dropout2d(x), "MulBackward0");
    CHECK_NAME(tn_linear(RN(3, 5), RN(4, 5), RN(4)), "AddmmBackward0");
    CHECK_NAME(tn_linear(RN(3, 5), RN(4, 5), NULL), "MmBackward0");
    CHECK_NAME(tn_interpolate(x3, .size = TN_INTS(9)), "UpsampleNearest1DBackward1");
    CHECK_NAME(tn_interpolate(x, .size = TN_INTS(9, 9)), "UpsampleNearest2DBackward1");
    CHECK_NAME(tn_interpolate(x3, .size = TN_INTS(9), .mode = "linear"), "UpsampleLinear1DBackward1");
    CHECK_NAME(tn_interpolate(x, .size = TN_INTS(9, 9), .mode = "bilinear"), "UpsampleBilinear2DBackward1");
    CHECK_NAME(tn_pixel_shuffle(x, 2), "PixelShuffleBackward0");
    CHECK_NAME(tn_pixel_unshuffle(x, 2), "PixelUnshuffleBackward0");
    /* unbatched forms: PyTorch's 2-d pooling and fold kernels take 3-d input directly (their
       node), conv and 1-d pooling squeeze a batched result */
    tn_tensor *u = RN(4, 6, 6);
    CHECK_NAME(tn_conv2d(u, w, NULL), "SqueezeBackward1");
    CHECK_NAME(tn_max_pool1d(x3, 2), "SqueezeBackward1");
    CHECK_NAME(tn_avg_pool1d(x3, 2), "SqueezeBackward1");
    CHECK_NAME(tn_adaptive_avg_pool2d(u, 2, 3), "AdaptiveAvgPool2DBackward0");
    CHECK_NAME(tn_adaptive_max_pool2d(u, 2, 3, NULL), "AdaptiveMaxPool2DBackward0");
    CHECK_NAME(tn_im2col(u, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "Im2ColBackward0");
    CHECK_NAME(tn_pixel_shuffle(u, 2), "PixelShuffleBackward0");
    tn_tensor *k = RN(5);
    for (int i = 0; i < NACTS; i++) {
        tn_tensor *y = acts[i].f(k);
        const char *n = tn_grad_fn_name(y);
        CHECK_MSG(n && !strcmp(n, acts[i].grad_fn), "grad_fn of %s is %s, expected %s", acts[i].name, n ? n : "NULL", acts[i].grad_fn);
    }
    /* no grad mode, or inputs without grad: no history */
    tn_tensor *c = CONST(1, 1, 4, 4);
    CHECK(tn_grad_fn_name(tn_conv2d(c, CONST(1, 1, 2, 2), NULL)) == NULL);
    tn_no_grad_begin();
    CHECK(tn_grad_fn_name(tn_max_pool2d(x, 2)) == NULL);
    CHECK(!tn_requires_grad(tn_layer_norm(x, I(6), 1)));
    tn_no_grad_end();
    END;
}

TEST(errors) {
    BEGIN;
    tn_tensor *x = tn_randn(SH(1, 3, 5, 5), TN_F32), *w = tn_randn(SH(4, 3, 3, 3), TN_F32), *b = tn_randn(SH(4), TN_F32);
    /* conv: ranks, channels, groups, sizes, options, dtypes */
    CHECK_ERR(tn_conv2d(tn_randn(SH(3, 4), TN_F32), w, NULL), "tn_conv2d: expected 3D (unbatched) or 4D (batched) input");
    CHECK_ERR(tn_conv2d(tn_randn(SH(3, 4), TN_F32), w, NULL), "[3, 4]");
    CHECK_ERR(tn_conv2d(x, tn_randn(SH(4, 3, 3), TN_F32), NULL), "tn_conv2d: expected a 4-d weight");
    CHECK_ERR(tn_conv2d(x, tn_randn(SH(4, 2, 3, 3), TN_F32), NULL), "expected input [1, 3, 5, 5] to have 2 channels, but got 3 channels");
    CHECK_ERR(tn_conv2d(tn_randn(SH(1, 4, 5, 5), TN_F32), tn_randn(SH(3, 2, 3, 3), TN_F32), NULL, .groups = 2),
              "tn_conv2d: given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3, 3]");
    CHECK_ERR(tn_conv2d(x, w, NULL, .groups = 0), "tn_conv2d: non-positive groups");
    CHECK_ERR(tn_conv2d(x, w, NULL, .groups = 2), "groups=2");
    CHECK_ERR(tn_conv2d(tn_randn(SH(1, 3, 2, 2), TN_F32), w, NULL), "Kernel size can't be greater than actual input size");
    CHECK_ERR(tn_conv2d(x, w, NULL, .dilation = 3), "tn_conv2d: calculated padded input size");
    CHECK_ERR(tn_conv2d(x, w, NULL, .stride = 0), "tn_conv2d: stride must be greater than zero");
    CHECK_ERR(tn_conv2d(x, w, NULL, .dilation = 0), "tn_conv2d: dilation must be greater than zero");
    CHECK_ERR(tn_conv2d(x, w, NULL, .padding = -2), "tn_conv2d: negative padding");
    CHECK_ERR(tn_conv2d(x, w, NULL, .stride = 2, .padding = TN_PADDING_SAME), "padding='same' is not supported for strided convolutions");
    CHECK_ERR(tn_conv2d(x, tn_to_dtype(w, TN_F64), NULL), "tn_conv2d: input (float32) and weight (float64) must have the same dtype");
    CHECK_ERR(tn_conv2d(x, w, tn_to_dtype(b, TN_F64)), "tn_conv2d: input (float32) and bias (float64) must have the same dtype");
    CHECK_ERR(tn_conv2d(x, w, tn_randn(SH(3), TN_F32)), "tn_conv2d: bias of size [3], expected [4]");
    CHECK_ERR(tn_conv2d(tn_ones(SH(1, 3, 5, 5), TN_BOOL), tn_ones(SH(4, 3, 3, 3), TN_BOOL), NULL), "tn_conv2d: input must be a floating dtype, got bool");
    CHECK_ERR(tn_conv2d(tn_ones(SH(1, 3, 5, 5), TN_I64), tn_ones(SH(4, 3, 3, 3), TN_I32), NULL), "tn_conv2d: input (int64) and weight (int32) must have the same dtype");
    CHECK_ERR(tn_conv2d(x, w, NULL, .padding_hw = {0, -1}), "tn_conv2d: negative padding");
    CHECK_ERR(tn_conv1d(x, w, NULL), "tn_conv1d: expected 2D (unbatched) or 3D (batched) input");
    CHECK_ERR(tn_conv1d(tn_randn(SH(1, 3, 5), TN_F32), tn_randn(SH(2, 3, 7), TN_F32), NULL), "tn_conv1d: calculated padded input size");
    CHECK_ERR(tn_conv_transpose2d(x, tn_randn(SH(3, 2, 3, 3), TN_F32), NULL, .stride = 2, .output_padding = 2), "tn_conv_transpose2d: output padding must be smaller than either stride or dilation");
    CHECK_ERR(tn_conv_transpose2d(x, tn_randn(SH(4, 2, 3, 3), TN_F32), NULL), "tn_conv_transpose2d: given groups=1");
    CHECK_ERR(tn_conv_transpose2d(x, tn_randn(SH(3, 2, 3, 3), TN_F32), NULL, .groups = 2),
              "tn_conv_transpose2d: given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3, 3]");
    CHECK_ERR(tn_conv_transpose2d(x, tn_randn(SH(3, 2, 3, 3), TN_F32), NULL, .padding = TN_PADDING_SAME), "tn_conv_transpose2d: padding='same' is not supported");
    CHECK_ERR(tn_conv_transpose2d(tn_randn(SH(1, 3, 1, 1), TN_F32), tn_randn(SH(3, 2, 1, 1), TN_F32), NULL, .padding = 1), "non-positive output size");
    CHECK_ERR(tn_conv_transpose1d(x, tn_randn(SH(3, 2, 3), TN_F32), NULL), "tn_conv_transpose1d: expected 2D (unbatched) or 3D (batched) input");
    /* fold */
    CHECK_ERR(tn_im2col(tn_randn(SH(5, 5), TN_F32), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "tn_im2col: expected 3-d (unbatched) or 4-d (batched) input, got [5, 5]");
    CHECK_ERR(tn_im2col(x, PAIR(6, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "tn_im2col: input [1, 3, 5, 5] is smaller than the dilated kernel");
    CHECK_ERR(tn_im2col(x, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(0, 1)), "tn_im2col: stride must be greater than zero");
    CHECK_ERR(tn_col2im(tn_randn(SH(1, 12, 7), TN_F32), PAIR(4, 4), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "tn_col2im: input [1, 12, 7] does not fit output_size (4, 4)");
    CHECK_ERR(tn_col2im(tn_randn(SH(1, 10, 9), TN_F32), PAIR(4, 4), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), "tn_col2im");
    /* pooling */
    CHECK_ERR(tn_max_pool2d(x, 2, .padding = 2), "tn_max_pool2d: pad should be at most half");
    CHECK_ERR(tn_max_pool2d(x, 0), "tn_max_pool2d: kernel_size, stride and dilation must be greater than zero");
    CHECK_ERR(tn_max_pool2d(x, 2, .stride = -1), "tn_max_pool2d");
    CHECK_ERR(tn_max_pool2d(x, 2, .stride = 1, .dilation = 0), "tn_max_pool2d: kernel_size, stride and dilation must be greater than zero");
    CHECK_ERR(tn_max_pool2d(tn_randn(SH(1, 1, 2, 2), TN_F32), 3), "tn_max_pool2d: given input size [1, 1, 2, 2], calculated output size (0x0): output size is too small");
    CHECK_ERR(tn_max_pool2d(tn_randn(SH(1, 1, 5, 2), TN_F32), 3, .stride = 1), "calculated output size (3x0)");
    CHECK_ERR(tn_avg_pool2d(tn_randn(SH(1, 1, 2, 5), TN_F32), 3, .stride = 1), "tn_avg_pool2d: given input size [1, 1, 2, 5], calculated output size (0x3)");
    CHECK_ERR(tn_max_pool2d(tn_randn(SH(4, 4), TN_F32), 2), "tn_max_pool2d: expected 3D (unbatched) or 4D (batched) input, but got input of size [4, 4]");
    CHECK_ERR(tn_max_pool2d(tn_ones(SH(1, 1, 4, 4), TN_I64), 2), "tn_max_pool2d: input must be a floating dtype, got int64");
    CHECK_ERR(tn_max_pool1d(tn_randn(SH(4), TN_F32), 2), "tn_max_pool1d: expected 2D (unbatched) or 3D (batched) input");
    CHECK_ERR(tn_max_pool2d(tn_randn(SH(1, 1, 0, 4), TN_F32), 2), "tn_max_pool2d: Expected input's non-batch dimensions to have positive length, but input has a shape of [1, 1, 0, 4]");
    CHECK_ERR(tn_avg_pool2d(x, 3, .stride = 1, .padding = 2), "tn_avg_pool2d: pad should be");
    CHECK_ERR(tn_avg_pool2d(x, 2, .stride = 1, .divisor_override = 0), "tn_avg_pool2d: divisor must be not zero");   /* PyTorch refuses 0 only */
    CHECK_ERR(tn_avg_pool1d(tn_randn(SH(1, 1, 2), TN_F32), 3), "tn_avg_pool1d: given input size");
    CHECK_ERR(tn_avg_pool2d(tn_ones(SH(1, 1, 4, 4), TN_I64), 2), "tn_avg_pool2d: input must be a floating dtype");
    CHECK_ERR(tn_adaptive_avg_pool2d(x, 0, 2), "tn_adaptive_avg_pool2d: output size (0, 2) must be positive");
    CHECK_ERR(tn_adaptive_max_pool2d(x, 2, -1, NULL), "tn_adaptive_max_pool2d: output size (2, -1) must be positive");
    CHECK_ERR(tn_adaptive_avg_pool2d(tn_randn(SH(5, 5), TN_F32), 2, 2), "tn_adaptive_avg_pool2d: expected 3D (unbatched) or 4D (batched) input");
    /* normalisation */
    CHECK_ERR(tn_batch_norm(x, tn_zeros(SH(4), TN_F32), tn_ones(SH(3), TN_F32), .training = true), "tn_batch_norm: running_mean should contain 3 elements not 4");
    CHECK_ERR(tn_batch_norm(x, NULL, NULL, .weight = tn_ones(SH(2), TN_F32), .training = true), "tn_batch_norm: weight should contain 3 elements not 2");
    CHECK_ERR(tn_batch_norm(x, NULL, NULL), "tn_batch_norm: running_mean and running_var must be given when not training");
    CHECK_ERR(tn_batch_norm(tn_randn(SH(1, 3), TN_F32), NULL, NULL, .training = true), "tn_batch_norm: expected more than 1 value per channel when training, got input size [1, 3]");
    CHECK_ERR(tn_batch_norm(tn_randn(SH(3), TN_F32), NULL, NULL, .training = true), "tn_batch_norm: expected input with at least 2 dims");
    {   /* an empty 1-d input comes back as a copy, as PyTorch's */
        tn_tensor *e = tn_batch_norm(tn_zeros(SH(0), TN_F32), NULL, NULL, .training = true);
        CHECK(e && e->ndim == 1 && e->shape[0] == 0 && e->dtype == TN_F32);
    }
    CHECK_ERR(tn_batch_norm(x, NULL, NULL, .weight = tn_ones(SH(3), TN_F64), .training = true), "tn_batch_norm: input (float32) and weight (float64) must have the same dtype");
    CHECK_ERR(tn_layer_norm(x, I(4), 1), "tn_layer_norm: given normalized_shape=[4], expected input with shape [*, 4], but got input of size [1, 3, 5, 5]");
    CHECK_ERR(tn_layer_norm(x, I(5, 5), 2, .weight = tn_ones(SH(5), TN_F32)), "tn_layer_norm: weight of shape [5] must have normalized_shape [5, 5]");
    CHECK_ERR(tn_layer_norm(x, I(5), 0), "tn_layer_norm");
    CHECK_ERR(tn_layer_norm(x, I(1, 1, 3, 5, 5), 5), "tn_layer_norm");
    CHECK_ERR(tn_group_norm(x, 2), "tn_group_norm: expected number of channels in input to be divisible by num_groups, but got input of shape [1, 3, 5, 5] and num_groups=2");
    CHECK_ERR(tn_group_norm(x, 0), "tn_group_norm");
    CHECK_ERR(tn_group_norm(x, 3, .weight = tn_ones(SH(4), TN_F32)), "tn_group_norm: weight and bias must have 3 elements");
    CHECK_ERR(tn_instance_norm(tn_randn(SH(3, 4), TN_F32)), "tn_instance_norm: expected input with at least 3 dims");
    CHECK_ERR(tn_instance_norm(x, .use_input_stats = false), "tn_instance_norm");
    CHECK_ERR(tn_instance_norm(x, .weight = tn_ones(SH(4), TN_F32)), "tn_instance_norm: running stats, weight and bias must have 3 elements");
    CHECK_ERR(tn_layer_norm(tn_ones(SH(2, 3), TN_I64), I(3), 1), "tn_layer_norm: input must be a floating dtype, got int64");
    /* dropout */
    CHECK_ERR(tn_dropout(x, .p = 1.5), "tn_dropout: dropout probability has to be between 0 and 1, but got 1.5");
    CHECK_ERR(tn_dropout(x, .p = -0.1, .training = false), "tn_dropout: dropout probability has to be between 0 and 1");
    CHECK_ERR(tn_dropout(x, .p = NAN), "tn_dropout: dropout probability");
    CHECK_ERR(tn_dropout2d(tn_randn(SH(4, 4), TN_F32)), "tn_dropout2d");
    CHECK_ERR(tn_dropout(tn_ones(SH(4), TN_I64)), "tn_dropout: input must be a floating dtype");
    /* embedding, one_hot */
    tn_tensor *ew = tn_randn(SH(10, 3), TN_F32);
    CHECK_ERR(tn_embedding(IDX(I(1, 10), 2), ew), "tn_embedding");
    CHECK_ERR(tn_embedding(IDX(I(1, 10), 2), ew), "index 10 is out of bounds for dimension 0 with size 10");
    CHECK_ERR(tn_embedding(IDX(I(-1), 1), ew), "tn_embedding");
    CHECK_ERR(tn_embedding(tn_ones(SH(2), TN_F32), ew), "tn_embedding: expected indices of dtype int64 or int32, got float32");
    CHECK_ERR(tn_embedding(IDX(I(1), 1), tn_randn(SH(10), TN_F32)), "tn_embedding: weight must be 2-d [num_embeddings, embedding_dim], got [10]");
    CHECK_ERR(tn_embedding_padded(IDX(I(1), 1), ew, 10), "tn_embedding: padding_idx 10 must be within num_embeddings (10)");
    CHECK_ERR(tn_embedding_padded(IDX(I(1), 1), ew, -11), "tn_embedding: padding_idx -11");
    CHECK_ERR(tn_one_hot(IDX(I(0, -1), 2), .num_classes = 3), "tn_one_hot: class values must be non-negative");
    CHECK_ERR(tn_one_hot(IDX(I(0, 3), 2), .num_classes = 3), "tn_one_hot: class values must be smaller than num_classes (got 3 for 3 classes)");
    CHECK_ERR(tn_one_hot(tn_ones(SH(2), TN_F32), .num_classes = 3), "tn_one_hot: one_hot is only applicable to index tensors");
    CHECK_ERR(tn_one_hot(tn_zeros(SH(0), TN_I64)), "tn_one_hot: can not infer total number of classes from empty tensor");
    /* attention */
    tn_tensor *q = tn_randn(SH(2, 3, 4), TN_F32), *k = tn_randn(SH(2, 5, 4), TN_F32), *v = tn_randn(SH(2, 5, 6), TN_F32);
    CHECK_ERR(tn_scaled_dot_product_attention(q, tn_randn(SH(2, 5, 3), TN_F32), v), "tn_scaled_dot_product_attention: expected q [*, L, E], k [*, S, E], v [*, S, Ev], got [2, 3, 4], [2, 5, 3], [2, 5, 6]");
    CHECK_ERR(tn_scaled_dot_product_attention(q, k, tn_randn(SH(2, 4, 6), TN_F32)), "tn_scaled_dot_product_attention: expected q");
    CHECK_ERR(tn_scaled_dot_product_attention(q, k, v, .attn_mask = tn_zeros(SH(3, 5), TN_I64)), "tn_scaled_dot_product_attention: attn_mask must be bool or match the query dtype float32, got int64");
    CHECK_ERR(tn_scaled_dot_product_attention(q, k, v, .attn_mask = tn_zeros(SH(3, 5), TN_BOOL), .is_causal = true), "tn_scaled_dot_product_attention: give attn_mask or is_causal, not both");
    CHECK_ERR(tn_scaled_dot_product_attention(q, k, v, .attn_mask = tn_zeros(SH(3, 4), TN_F32)), "tn_scaled_dot_product_attention");
    CHECK_ERR(tn_scaled_dot_product_attention(q, tn_to_dtype(k, TN_F64), v), "tn_scaled_dot_product_attention: input (float32) and key (float64) must have the same dtype");
    /* interpolate */
    tn_tensor *im = tn_randn(SH(1, 2, 4, 4), TN_F32);
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(8, 8), .mode = "lanczos"), "tn_interpolate: mode 'lanczos' is not supported");
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(8, 8), .mode = NULL), "tn_interpolate: mode '(null)' is not supported");
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(8, 8), .align_corners = true), "tn_interpolate: align_corners option can only be set with the interpolating modes");
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(8), .mode = "linear"), "tn_interpolate: mode 'linear' expects a 3-d [N, C, W] input, got [1, 2, 4, 4]");
    CHECK_ERR(tn_interpolate(tn_randn(SH(1, 2, 4), TN_F32), .size = TN_INTS(8, 8), .mode = "bilinear"), "tn_interpolate: mode 'bilinear' expects a 4-d [N, C, H, W] input");
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(8, 8), .scale_factor = TN_DOUBLES(2, 2)), "tn_interpolate: give exactly one of size and scale_factor");
    CHECK_ERR(tn_interpolate(im), "tn_interpolate: give exactly one of size and scale_factor");
    CHECK_ERR(tn_interpolate(im, .scale_factor = TN_DOUBLES(-2, 2)), "tn_interpolate: scale_factor must be positive");
    CHECK_ERR(tn_interpolate(im, .size = TN_INTS(0, 3)), "tn_interpolate");
    CHECK_ERR(tn_interpolate(tn_randn(SH(4, 4), TN_F32), .size = TN_INTS(8, 8)), "tn_interpolate");
    CHECK_ERR(tn_interpolate(tn_ones(SH(1, 1, 4), TN_I64), .size = TN_INTS(8)), "tn_interpolate: input must be a floating dtype");
    /* pixel shuffle */
    CHECK_ERR(tn_pixel_shuffle(tn_randn(SH(1, 3, 2, 2), TN_F32), 2), "tn_pixel_shuffle: the channel count 3 of input [1, 3, 2, 2] must be divisible by the square of upscale_factor (4)");
    CHECK_ERR(tn_pixel_shuffle(tn_randn(SH(1, 4, 2, 2), TN_F32), 0), "tn_pixel_shuffle: factor must be greater than 0");
    CHECK_ERR(tn_pixel_shuffle(tn_randn(SH(4, 2), TN_F32), 2), "tn_pixel_shuffle: expected input [*, C, H, W], got [4, 2]");
    CHECK_ERR(tn_pixel_unshuffle(tn_randn(SH(1, 1, 3, 4), TN_F32), 2), "tn_pixel_unshuffle: height and width of input [1, 1, 3, 4] must be divisible by downscale_factor 2");
    /* linear, bilinear */
    CHECK_ERR(tn_linear(tn_randn(SH(2, 4), TN_F32), tn_randn(SH(3, 5), TN_F32), NULL), "tn_linear: input [2, 4] and weight [3, 5]: the last dim of the input must equal in_features (5)");
    CHECK_ERR(tn_linear(tn_randn(SH(2, 5), TN_F32), tn_randn(SH(3, 5, 1), TN_F32), NULL), "tn_linear: weight must be 2-d");
    CHECK_ERR(tn_linear(tn_randn(SH(2, 5), TN_F32), tn_randn(SH(3, 5), TN_F32), tn_randn(SH(4), TN_F32)), "tn_linear: bias [4] must have out_features (3) elements");
    CHECK_ERR(tn_linear(tn_randn(SH(2, 5), TN_F32), tn_randn(SH(3, 5), TN_F64), NULL), "tn_linear: input (float32) and weight (float64) must have the same dtype");
    CHECK_ERR(tn_bilinear(tn_randn(SH(2, 3), TN_F32), tn_randn(SH(3, 4), TN_F32), tn_randn(SH(5, 3, 4), TN_F32), NULL), "tn_bilinear: inputs [2, 3] and [3, 4] do not fit weight [5, 3, 4]");
    CHECK_ERR(tn_bilinear(tn_randn(SH(2, 3), TN_F32), tn_randn(SH(2, 4), TN_F32), tn_randn(SH(5, 3, 4), TN_F32), tn_randn(SH(4), TN_F32)), "tn_bilinear: bias [4] must be [5]");
    CHECK_ERR(tn_bilinear(tn_randn(SH(2, 3), TN_F32), tn_randn(SH(2, 4), TN_F64), tn_randn(SH(5, 3, 4), TN_F32), NULL), "tn_bilinear");
    /* activations */
    CHECK_ERR(tn_hardtanh(x, .min_val = 1, .max_val = -1), "tn_hardtanh: min_val (1) cannot be greater than max_val (-1)");
    CHECK_ERR(tn_celu(x, .alpha = 0), "tn_celu: alpha must be nonzero");
    CHECK_ERR(tn_softmax(x, 4), "tn_softmax");
    CHECK_ERR(tn_log_softmax(x, -5), "tn_log_softmax");
    END;
}

/* Integer inputs: relu, relu6 and hardtanh keep the dtype (a clamp; float bounds truncated),
   sigmoid and tanh compute in float32, the others refuse integers (as torch 1.13) */
TEST(int_inputs) {
    BEGIN;
    tn_tensor *i = IDX(I(-3, 0, 3, 8), 4);
    tn_tensor *r = tn_relu(i), *r6 = tn_relu6(i), *ht = tn_hardtanh(i), *htf = tn_hardtanh(i, .min_val = -0.5, .max_val = 2.5);
    CHECK_DTYPE(r, TN_I64);
    CHECK_VALS(r, 0, 0, 0, 3, 8);
    CHECK_DTYPE(r6, TN_I64);
    CHECK_VALS(r6, 0, 0, 0, 3, 6);
    CHECK_DTYPE(ht, TN_I64);
    CHECK_VALS(ht, 0, -1, 0, 1, 1);
    CHECK_DTYPE(htf, TN_I64);
    CHECK_VALS(htf, 0, 0, 0, 2, 2);
    CHECK_DTYPE(tn_sigmoid(i), TN_F32);
    CHECK_DTYPE(tn_tanh(i), TN_F32);
    CHECK_ERR(tn_leaky_relu(i, .negative_slope = 0.1), "tn_leaky_relu");
    CHECK_ERR(tn_elu(i), "tn_elu");
    CHECK_ERR(tn_selu(i), "tn_selu");
    CHECK_ERR(tn_celu(i), "tn_celu");
    CHECK_ERR(tn_gelu(i), "tn_gelu");
    CHECK_ERR(tn_gelu(i, .approximate = TN_APPROXIMATE_TANH), "tn_gelu");
    CHECK_ERR(tn_silu(i), "tn_silu");
    CHECK_ERR(tn_mish(i), "tn_mish");
    CHECK_ERR(tn_softplus(i), "tn_softplus");
    CHECK_ERR(tn_hardswish(i), "tn_hardswish");
    CHECK_ERR(tn_hardsigmoid(i), "tn_hardsigmoid");
    CHECK_ERR(tn_hardswish(tn_ones(SH(2), TN_BOOL)), "tn_hardswish");
    CHECK_ERR(tn_relu(tn_ones(SH(2), TN_BOOL)), "tn_relu");
    END;
}

/* NULL inputs pass through: NULL result, no new message */
#define CHECK_NULL_PASS(expr) do { tn_clear_error(); tn_tensor *r_ = (expr); \
    CHECK_MSG(r_ == NULL && tn_last_error()[0] == 0, "%s should return NULL silently, got %s \"%s\"", #expr, r_ ? "a tensor" : "NULL", tn_last_error()); } while (0)
TEST(null_inputs) {
    BEGIN;
    tn_tensor *x = tn_randn(SH(1, 2, 4, 4), TN_F32), *w = tn_randn(SH(2, 2, 3, 3), TN_F32), *x3 = tn_randn(SH(1, 2, 4), TN_F32), *idx = NULL;
    CHECK_NULL_PASS(tn_linear(NULL, w, NULL));
    CHECK_NULL_PASS(tn_linear(x, NULL, NULL));
    CHECK_NULL_PASS(tn_bilinear(NULL, x, w, NULL));
    CHECK_NULL_PASS(tn_bilinear(x, NULL, w, NULL));
    CHECK_NULL_PASS(tn_bilinear(x, x, NULL, NULL));
    CHECK_NULL_PASS(tn_conv1d(NULL, w, NULL));
    CHECK_NULL_PASS(tn_conv2d(NULL, w, NULL));
    CHECK_NULL_PASS(tn_conv2d(x, NULL, NULL));
    CHECK_NULL_PASS(tn_conv2d(NULL, w, NULL));
    CHECK_NULL_PASS(tn_conv_transpose1d(NULL, w, NULL));
    CHECK_NULL_PASS(tn_conv_transpose2d(NULL, w, NULL));
    CHECK_NULL_PASS(tn_conv_transpose2d(x, NULL, NULL));
    CHECK_NULL_PASS(tn_conv_transpose2d(NULL, w, NULL));
    CHECK_NULL_PASS(tn_im2col(NULL, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)));
    CHECK_NULL_PASS(tn_col2im(NULL, PAIR(4, 4), PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)));
    CHECK_NULL_PASS(tn_max_pool1d_with_indices(NULL, &idx, 2));
    CHECK(idx == NULL);
    idx = x;
    CHECK_NULL_PASS(tn_max_pool2d_with_indices(NULL, &idx, 2));
    CHECK(idx == NULL);   /* indices cleared too */
    CHECK_NULL_PASS(tn_max_pool2d(NULL, 2));
    CHECK_NULL_PASS(tn_avg_pool1d(NULL, 2));
    CHECK_NULL_PASS(tn_avg_pool2d(NULL, 2));
    CHECK_NULL_PASS(tn_avg_pool2d(NULL, 2));
    CHECK_NULL_PASS(tn_adaptive_avg_pool2d(NULL, 2, 2));
    CHECK_NULL_PASS(tn_adaptive_max_pool2d(NULL, 2, 2, &idx));
    CHECK_NULL_PASS(tn_batch_norm(NULL, NULL, NULL, .training = true));
    CHECK_NULL_PASS(tn_layer_norm(NULL, I(4), 1));
    CHECK_NULL_PASS(tn_group_norm(NULL, 1));
    CHECK_NULL_PASS(tn_instance_norm(NULL));
    CHECK_NULL_PASS(tn_dropout(NULL));
    CHECK_NULL_PASS(tn_dropout(NULL, .training = false));
    CHECK_NULL_PASS(tn_dropout2d(NULL));
    CHECK_NULL_PASS(tn_embedding(NULL, w));
    CHECK_NULL_PASS(tn_embedding(IDX(I(0), 1), NULL));
    CHECK_NULL_PASS(tn_embedding_padded(NULL, w, 0));
    CHECK_NULL_PASS(tn_one_hot(NULL, .num_classes = 3));
    CHECK_NULL_PASS(tn_softmax(NULL, 0));
    CHECK_NULL_PASS(tn_log_softmax(NULL, 0));
    CHECK_NULL_PASS(tn_scaled_dot_product_attention(NULL, x3, x3));
    CHECK_NULL_PASS(tn_scaled_dot_product_attention(x3, NULL, x3));
    CHECK_NULL_PASS(tn_scaled_dot_product_attention(x3, x3, NULL));
    CHECK_NULL_PASS(tn_interpolate(NULL, .size = TN_INTS(8)));
    CHECK_NULL_PASS(tn_pixel_shuffle(NULL, 2));
    CHECK_NULL_PASS(tn_pixel_unshuffle(NULL, 2));
    for (int i = 0; i < NACTS; i++) {
        tn_clear_error();
        tn_tensor *r = acts[i].f(NULL);
        CHECK_MSG(r == NULL && tn_last_error()[0] == 0, "%s(NULL) should return NULL silently: \"%s\"", acts[i].name, tn_last_error());
    }
    /* a nested expression reports the first failure once */
    tn_clear_error();
    CHECK(tn_relu(tn_conv2d(tn_max_pool2d(tn_randn(SH(1, 2, 1, 1), TN_F32), 2), w, NULL)) == NULL);
    CHECK(strstr(tn_last_error(), "tn_max_pool2d") != NULL);
    END;
}

/* Big-ish shapes through every op once more, checking shapes and dtypes of the results,
   and that float32 and float64 agree. */
TEST(dtypes_agree) {
    BEGIN;
    tn_tensor *x = tn_randn(SH(2, 4, 9, 7), TN_F64), *w = tn_randn(SH(6, 2, 3, 3), TN_F64), *b = tn_randn(SH(6), TN_F64);
    tn_tensor *x32 = tn_to_dtype(x, TN_F32), *w32 = tn_to_dtype(w, TN_F32), *b32 = tn_to_dtype(b, TN_F32);
    tn_tensor *y = tn_conv2d(x, w, b, .stride = 2, .padding = 1, .groups = 2), *y32 = tn_conv2d(x32, w32, b32, .stride = 2, .padding = 1, .groups = 2);
    CHECK_SHAPE(y, 2, 6, 5, 4);
    CHECK_DTYPE(y32, TN_F32);
    CHECK_SAME(y32, y, 1e-5);
    tn_tensor *t = tn_conv_transpose2d(x, tn_randn(SH(4, 3, 3, 3), TN_F64), NULL, .stride = 2, .padding = 1, .output_padding = 1);
    CHECK_SHAPE(t, 2, 3, 18, 14);
    tn_tensor *idx = NULL, *mp = tn_max_pool2d_with_indices(x32, &idx, 3, .stride = 2, .padding = 1, .ceil_mode = true);
    CHECK_DTYPE(mp, TN_F32);
    CHECK_DTYPE(idx, TN_I64);
    CHECK_SHAPE(mp, 2, 4, 5, 4);
    CHECK_SAME(mp, tn_max_pool2d(x, 3, .stride = 2, .padding = 1, .ceil_mode = true), 1e-6);
    CHECK_SAME(tn_avg_pool2d(x32, 3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false), tn_avg_pool2d(x, 3, .stride = 2, .padding = 1, .ceil_mode = true, .count_include_pad = false), 1e-5);
    CHECK_SAME(tn_layer_norm(x32, I(9, 7), 2), tn_layer_norm(x, I(9, 7), 2), 1e-4);
    CHECK_SAME(tn_group_norm(x32, 2), tn_group_norm(x, 2), 1e-4);
    CHECK_SAME(tn_interpolate(x32, .size = TN_INTS(5, 11), .mode = "bilinear"), tn_interpolate(x, .size = TN_INTS(5, 11), .mode = "bilinear"), 1e-5);
    CHECK_DTYPE(tn_interpolate(x32, .size = TN_INTS(5, 11), .mode = "bilinear"), TN_F32);
    CHECK_DTYPE(tn_adaptive_avg_pool2d(x32, 3, 3), TN_F32);
    CHECK_DTYPE(tn_batch_norm(x32, NULL, NULL, .training = true), TN_F32);
    CHECK_DTYPE(tn_scaled_dot_product_attention(x32, x32, x32), TN_F32);
    CHECK_DTYPE(tn_pixel_shuffle(x32, 2), TN_F32);
    CHECK_DTYPE(tn_im2col(x32, PAIR(2, 2), PAIR(1, 1), PAIR(0, 0), PAIR(1, 1)), TN_F32);
    /* the input is never modified, and results never alias it (except dropout in eval) */
    tn_tensor *xc = tn_clone(x);
    tn_interpolate(x, .size = TN_INTS(9, 7));
    tn_tensor *same = tn_interpolate(x, .size = TN_INTS(9, 7), .mode = "bilinear");
    CHECK(same && !tn_same_storage(same, x));
    CHECK_SAME(same, x, 1e-12);
    tn_tensor *ps1 = tn_pixel_shuffle(x, 1);
    CHECK(ps1 && !tn_same_storage(ps1, x));
    tn_tensor *aap = tn_adaptive_avg_pool2d(x, 9, 7);
    CHECK(aap && !tn_same_storage(aap, x));
    CHECK(tn_equal(x, xc));
    END;
}

/* ==================================================================================== */
/* main                                                                                   */
/* ==================================================================================== */
#ifdef __unix__
static void run_isolated(const char *name, void (*fn)(void)) {
    int fd[2];
    if (pipe(fd) != 0) { tn_test_current = name; fn(); return; }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        tn_test_passed = tn_test_failed = 0;
        tn_test_current = name;
        alarm(120);
        fn();
        fflush(stdout);
        int leaks = 0;
#ifdef TN_TEST_LSAN
        leaks = __lsan_do_recoverable_leak_check();
#endif
        int counts[3] = {tn_test_passed, tn_test_failed + (leaks != 0), oc_ncases};
        if (leaks) printf("FAIL %s: LeakSanitizer found leaks (see stderr)\n", name);
        fflush(stdout);
        if (write(fd[1], counts, sizeof counts) != (ssize_t)sizeof counts) _exit(3);
        _exit(0);
    }
    close(fd[1]);
    int counts[3] = {0, 0, 0}, st = 0;
    ssize_t got = read(fd[0], counts, sizeof counts);
    close(fd[0]);
    waitpid(pid, &st, 0);
    tn_test_current = name;
    if (got == (ssize_t)sizeof counts) { tn_test_passed += counts[0]; tn_test_failed += counts[1]; oc_ncases = counts[2]; }
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0 && got == (ssize_t)sizeof counts,
              "crashed: child %s %d (see stderr)", WIFSIGNALED(st) ? "killed by signal" : "exit status",
              WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}
#define RUN_T(name) run_isolated(#name, name)
#else
#define RUN_T(name) RUN(name)
#endif

int main(void) {
    oc_init();
    RUN_T(hand_conv);
    RUN_T(winograd_conv);
    RUN_T(depthwise_conv);
    RUN_T(winograd_rows_agree);
    RUN_T(smallk_conv);
    RUN_T(pool_rows_agree);
    RUN_T(hand_fold);
    RUN_T(hand_pool);
    RUN_T(hand_norm);
    RUN_T(hand_misc);
    RUN_T(hand_activations);
    RUN_T(oc_linear);
    RUN_T(oc_conv);
    RUN_T(oc_conv_transpose);
    RUN_T(oc_fold);
    RUN_T(oc_pool);
    RUN_T(oc_norm);
    RUN_T(oc_embedding);
    RUN_T(oc_softmax);
    RUN_T(oc_activations);
    RUN_T(oc_attention);
    RUN_T(oc_interpolate);
    RUN_T(oc_pixel_shuffle);
    RUN_T(oc_sweep_pool);
    RUN_T(oc_sweep_interpolate);
    RUN_T(oc_sweep_conv);
    RUN_T(oc_edges);
    RUN_T(gc_layers);
    RUN_T(gc_pool_norm);
    RUN_T(gc_misc);
    RUN_T(gc_activations);
    RUN_T(dropout_stats);
    RUN_T(dropout_mask_draws);
    RUN_T(dropout2d_channels);
    RUN_T(grad_fn_names);
    RUN_T(errors);
    RUN_T(int_inputs);
    RUN_T(null_inputs);
    RUN_T(dtypes_agree);
    oracle_finish();
    return tn_test_report();
}
