/* tn_trace: one forward call recorded as a graph (torch.jit.trace), replayed, printed.

   Recording happens where autograd records (tn__node_new / tn__node_attach): the example
   inputs are traced as tensors that require grad, so every op that depends on them makes a
   node; the tracer keeps each node with all its operands and its result. When the forward
   returns, each node reachable from the output becomes a graph node: the op's PyTorch name
   and the arguments of its forward (read from the node's attributes), whose inputs are
   graph inputs, earlier nodes' results, or constants (the module's parameters and buffers
   by their state-dict names, other tensors by number). Replaying a graph calls the same
   public ops with those arguments: there is no second implementation of any op. */

#define TN__JIT_MAXI 24   /* int attributes of a node */
/* The graph's ops: kind, PyTorch's name (the unary/binary/ternary kinds take theirs from
   the kernel op's name), the fixed number of inputs (-1: any, as cat). */
#define TN__JIT_OPS(X) \
    X(J_UNARY, "", 1) X(J_BINARY, "", 2) X(J_TERNARY, "", 3) \
    X(J_ADDMM, "aten::addmm", 3) X(J_BADDBMM, "aten::baddbmm", 3) X(J_MM, "aten::mm", 2) X(J_BMM, "aten::bmm", 2) \
    X(J_MV, "aten::mv", 2) X(J_DOT, "aten::dot", 2) \
    X(J_RESHAPE, "aten::reshape", 1) X(J_PERMUTE, "aten::permute", 1) X(J_EXPAND, "aten::expand", 1) \
    X(J_SLICE, "aten::slice", 1) X(J_SELECT, "aten::select", 1) X(J_SUM, "aten::sum", 1) X(J_MEAN, "aten::mean", 1) \
    X(J_SOFTMAX, "aten::softmax", 1) X(J_LOG_SOFTMAX, "aten::log_softmax", 1) X(J_CAT, "aten::cat", -1) \
    X(J_CLONE, "aten::clone", 1) X(J_TO, "aten::to", 1) X(J_INDEX_SELECT, "aten::index_select", 2) \
    X(J_CONV2D, "aten::conv2d", 3) X(J_MAX_POOL2D, "aten::max_pool2d", 1) X(J_BATCH_NORM, "aten::batch_norm", 5) \
    X(J_LAYER_NORM, "aten::layer_norm", 3) X(J_IM2COL, "aten::im2col", 1) \
    X(J_SDPA, "aten::scaled_dot_product_attention", 4) \
    X(J_MATMUL, "aten::matmul", 2) X(J_AVG_POOL2D, "aten::avg_pool2d", 1) \
    X(J_LSTM, "tn::lstm_recurrence", 4) X(J_RNN_SEQ, "tn::rnn_recurrence", 4)   /* the RNN layers' fused recurrences (src/modules/rnn.c): no aten op of their own */
#define TN__JIT_ENUM(e, name, nin) e,
#define TN__JIT_NAME(e, name, nin) name,
#define TN__JIT_KEY(e, name, nin) #e,
#define TN__JIT_NIN(e, name, nin) nin,
typedef enum tn__jit_op { TN__JIT_OPS(TN__JIT_ENUM) TN__NUM_JIT_OPS } tn__jit_op;
static const char *const tn__jit_names[] = {TN__JIT_OPS(TN__JIT_NAME) ""};
static const char *const tn__jit_keys[] = {TN__JIT_OPS(TN__JIT_KEY) ""};   /* the saved format's op names */
static const int tn__jit_nin[] = {TN__JIT_OPS(TN__JIT_NIN) 0};
static const char *const tn__ternary_names[] = {"where", "lerp", "addcmul", "addcdiv"};

typedef enum { TN__GV_INPUT, TN__GV_CONST, TN__GV_NODE } tn__gv_kind;
typedef struct tn__gval {
    tn__gv_kind kind;
    tn_dtype dtype;
    int ndim;
    int64_t shape[TN_MAX_DIMS];
    tn_tensor *t;     /* a constant's tensor (retained) */
    char *name;       /* a constant's name: "fc1.weight", "c3" */
} tn__gval;
typedef struct tn__gnode {
    tn__jit_op op;
    int sub;          /* the unary/binary/ternary op id */
    int nin, *in;     /* value ids; -1: an optional input left out (a bias) */
    int out;
    int ni, nd;
    int64_t i[TN__JIT_MAXI];
    double d[4];
} tn__gnode;
/* Constant weights packed once for the replay's products (its own run only, under no_grad
   on the CPU): the GEMM panels of a linear layer's weight (transposed: tn_graph_optimize
   folds the view) in a product with more rows than the GEMM's row path takes (that path
   reads the weight in place; src/ops/gemm.c tn__gemm_prepack), and the Winograd transform
   of a 3x3 convolution's weight (src/nn/winograd.c tn__wino_prepack). The products then
   read them instead of packing or transforming the weight on every call (at 32 rows the
   packing was a quarter of the transformer's forward, the transform an eighth of the CNN's
   at batch 1): the same values, the same bits. A weight changed in place since (its
   version) is packed again. */
typedef struct tn__gwpack {
    tn_tensor *t;        /* the packed values, or NULL */
    int64_t ver;         /* the weight's version when packed */
    int kind;            /* 1: gemm, 2: wino */
    tn__gemm_bpre gemm;
    tn__wino_pre wino;
} tn__gwpack;
struct tn_graph {
    tn__gval *vals;
    int nvals, capv;
    tn__gnode *nodes;
    int nnodes, capn;
    int ninputs, *inputs;
    int noutputs, *outputs;
    int dyn_input;                /* -1, or the input whose dim 0 may change between runs */
    int64_t dyn_size;             /* its size when traced */
    int *uses;                    /* per value: how many node inputs read it (tn__graph_plan; NULL: not planned) */
    int *last_use;                /* per value: the last node reading it (-1: none) */
    struct tn__fgroup *fg;        /* elementwise chains the replay fuses (tn__graph_plan) */
    int nfg;
    int *fgrp;                    /* per node: its fused group, or -1 */
    int *epi;                     /* per node: the activation (TN__EPI_*) a linear/conv applies in its GEMM's epilogue, or 0 */
    int *lnadd;                   /* per node: a layer_norm's add node run with it (tn__graph_lnadd_plan), -2 on that add, else -1 */
    tn__gwpack *wp;               /* per value: a constant weight packed ahead (tn__graph_wpack) */
    tn__mhook *mplan;             /* the static memory plan (src/jit/memplan.c), or NULL */
    int mruns, mfails;            /* no_grad runs without a plan; plans dropped (3: no more planning) */
    int64_t mbusy;                /* atomic: runs using the plan now (one at a time) */
};

static void tn__graph_free_parts(tn_graph *g) {
    for (int i = 0; i < g->nvals; i++) { tn_release(g->vals[i].t); TN_FREE(g->vals[i].name); }
    for (int i = 0; i < g->nnodes; i++) TN_FREE(g->nodes[i].in);
    TN_FREE(g->vals); TN_FREE(g->nodes); TN_FREE(g->inputs); TN_FREE(g->outputs);
    TN_FREE(g->uses); TN_FREE(g->last_use);
    TN_FREE(g->fg); TN_FREE(g->fgrp); TN_FREE(g->epi); TN_FREE(g->lnadd);
    for (int i = 0; g->wp && i < g->nvals; i++) tn_release(g->wp[i].t);
    TN_FREE(g->wp);
    tn__mhook_free(g->mplan);
}
TNDEF void tn_graph_free(tn_graph *g) {
    if (!g) return;
    tn__graph_free_parts(g);
    TN_FREE(g);
}
static tn_graph *tn__graph_new(void) {
    tn_graph *g = (tn_graph *)TN_MALLOC(sizeof *g);
    if (!g) return (tn_graph *)tn__error("tn_graph: out of memory");
    memset(g, 0, sizeof *g);
    g->dyn_input = -1;
    return g;
}
/* A new value (its id), or -1 when out of memory. */
static int tn__graph_add_value(tn_graph *g, tn__gv_kind kind, tn_dtype dtype, int ndim, const int64_t *shape) {
    if (g->nvals == g->capv) {
        int cap = g->capv ? 2 * g->capv : 16;
        tn__gval *v = (tn__gval *)TN_REALLOC(g->vals, (size_t)cap * sizeof *v);
        if (!v) return TN__FAIL_INT("tn_graph: out of memory");
        g->vals = v;
        g->capv = cap;
    }
    tn__gval *v = &g->vals[g->nvals];
    memset(v, 0, sizeof *v);
    v->kind = kind;
    v->dtype = dtype;
    v->ndim = ndim;
    memcpy(v->shape, shape, (size_t)ndim * sizeof(int64_t));
    return g->nvals++;
}
static tn__gnode *tn__graph_add_node(tn_graph *g, tn__jit_op op, int nin) {
    if (g->nnodes == g->capn) {
        int cap = g->capn ? 2 * g->capn : 16;
        tn__gnode *n = (tn__gnode *)TN_REALLOC(g->nodes, (size_t)cap * sizeof *n);
        if (!n) return (tn__gnode *)tn__error("tn_graph: out of memory");
        g->nodes = n;
        g->capn = cap;
    }
    tn__gnode *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->out = -1;
    n->in = (int *)TN_MALLOC((size_t)(nin > 0 ? nin : 1) * sizeof(int));
    if (!n->in) return (tn__gnode *)tn__error("tn_graph: out of memory");
    for (int k = 0; k < nin; k++) n->in[k] = -1;
    n->nin = nin;
    g->nnodes++;
    return n;
}

/* ---- recording ---- */
typedef struct tn__trec {       /* one node seen during the trace */
    tn_node *nd;                /* retained */
    tn_tensor **ins;            /* its operands (retained; NULL entries kept) */
    int nin;
    tn_tensor *out;             /* retained; NULL until attached */
} tn__trec;
struct tn__tracer {
    tn__trec *recs;
    int nrecs, cap;
    struct { tn_tensor *t; int rec; } *alias;   /* in-place ops: t now holds rec's result */
    int nalias, capa;
    const tn_storage **made;    /* storages made during the trace */
    int nmade, capm;
    const char *refused;        /* why the trace cannot be captured (first reason) */
    bool oom;
};
static void tn__trace_new(tn__tracer *tr, tn_node *nd, tn_tensor *const *ins, int n) {
    if (tr->nrecs == tr->cap) {
        int cap = tr->cap ? 2 * tr->cap : 64;
        tn__trec *r = (tn__trec *)TN_REALLOC(tr->recs, (size_t)cap * sizeof *r);
        if (!r) { tr->oom = true; return; }
        tr->recs = r;
        tr->cap = cap;
    }
    tn__trec *r = &tr->recs[tr->nrecs];
    r->ins = (tn_tensor **)TN_MALLOC((size_t)(n > 0 ? n : 1) * sizeof *r->ins);
    if (!r->ins) { tr->oom = true; return; }
    for (int i = 0; i < n; i++) {
        tn_tensor *x = ins[i];
        /* a Python-number operand lives on the op's stack (tn__stack_scalar): keep a copy */
        if (x && (const char *)x->storage == (const char *)x + offsetof(tn__stack_scalar, st)) {
            tn_tensor *c = tn__copy_as(x, x->dtype, TN_CPU);
            if (c) c->is_wrapped_number = x->is_wrapped_number;
            else tr->oom = true;
            r->ins[i] = c;
        } else r->ins[i] = tn_retain(x);
    }
    r->nin = n;
    r->nd = nd;
    TN__ATOMIC_ADD(&nd->refcount, 1);
    r->out = NULL;
    tr->nrecs++;
}
static void tn__trace_attach(tn__tracer *tr, tn_node *nd, tn_tensor *out) {
    for (int k = tr->nrecs - 1; k >= 0; k--)   /* the newest record of this node */
        if (tr->recs[k].nd == nd) { if (!tr->recs[k].out) tr->recs[k].out = tn_retain(out); return; }
}
static int tn__trace_find_out(const tn__tracer *tr, const tn_tensor *t) {
    for (int k = tr->nrecs - 1; k >= 0; k--) if (tr->recs[k].out == t) return k;
    return -1;
}
static void tn__trace_alias(tn__tracer *tr, tn_tensor *x, tn_tensor *r) {
    int k = tn__trace_find_out(tr, r);
    if (k < 0) return;
    if (tr->nalias == tr->capa) {
        int cap = tr->capa ? 2 * tr->capa : 16;
        void *a = TN_REALLOC(tr->alias, (size_t)cap * sizeof *tr->alias);
        if (!a) { tr->oom = true; return; }
        memcpy(&tr->alias, &a, sizeof a);
        tr->capa = cap;
    }
    tr->alias[tr->nalias].t = tn_retain(x);
    tr->alias[tr->nalias].rec = k;
    tr->nalias++;
}
static void tn__trace_refuse(tn__tracer *tr, const char *what) { if (!tr->refused) tr->refused = what; }
static void tn__trace_storage(tn__tracer *tr, const tn_storage *s) {
    if (tr->nmade == tr->capm) {
        int cap = tr->capm ? 2 * tr->capm : 256;
        const tn_storage **m = (const tn_storage **)TN_REALLOC((void *)tr->made, (size_t)cap * sizeof *m);
        if (!m) { tr->oom = true; return; }
        tr->made = m;
        tr->capm = cap;
    }
    tr->made[tr->nmade++] = s;
}
/* A storage made during the trace (one alive before it cannot share an address with it). */
static bool tn__trace_made(const tn__tracer *tr, const tn_storage *s) {
    for (int k = 0; k < tr->nmade; k++) if (tr->made[k] == s) return true;
    return false;
}
static void tn__tracer_free(tn__tracer *tr) {
    for (int k = 0; k < tr->nrecs; k++) {
        for (int i = 0; i < tr->recs[k].nin; i++) tn_release(tr->recs[k].ins[i]);
        TN_FREE(tr->recs[k].ins);
        tn_release(tr->recs[k].out);
        tn__node_release(tr->recs[k].nd);
    }
    for (int k = 0; k < tr->nalias; k++) tn_release(tr->alias[k].t);
    TN_FREE(tr->recs);
    TN_FREE(tr->alias);
    TN_FREE((void *)tr->made);
}

/* ---- building the graph from the records ---- */
typedef struct tn__tbuild {
    tn_graph *g;
    tn__tracer *tr;
    tn_tensor *const *inputs;    /* the traced stand-ins of the example inputs */
    int ninputs;
    int *rec_val;                /* value id of each record's result, -1 if none (yet) */
    const tn_dict *params, *buffers;
    int nconst;
} tn__tbuild;

/* The value id of operand t at record position `at` (records before it are visible):
   an input, an earlier record's result (the newest, in-place ops included), or a constant. */
static int tn__trace_value(tn__tbuild *b, tn_tensor *t, int at) {
    if (!t) return -1;
    int best_rec = -1;
    for (int k = at - 1; k >= 0; k--) if (b->tr->recs[k].out == t && b->rec_val[k] >= 0) { best_rec = k; break; }
    for (int a = b->tr->nalias - 1; a >= 0; a--)   /* an in-place op after that result replaced t's value */
        if (b->tr->alias[a].t == t && b->tr->alias[a].rec < at && b->tr->alias[a].rec > best_rec && b->rec_val[b->tr->alias[a].rec] >= 0) {
            best_rec = b->tr->alias[a].rec;
            break;
        }
    if (best_rec >= 0) return b->rec_val[best_rec];
    for (int i = 0; i < b->ninputs; i++) if (b->inputs[i] == t) return b->g->inputs[i];
    for (int i = 0; i < b->g->nvals; i++) if (b->g->vals[i].kind == TN__GV_CONST && b->g->vals[i].t == t) return i;
    /* a constant: a parameter or buffer by its name, else numbered */
    const char *name = NULL;
    for (int k = 0; k < 2 && !name; k++) {
        const tn_dict *d = k ? b->buffers : b->params;
        for (int i = 0; d && i < tn_dict_len(d) && !name; i++) if (tn_dict_value(d, i) == t) name = tn_dict_key(d, i);
    }
    if (!name && !t->is_wrapped_number && !tn_dtype_is_floating(t->dtype) && tn__trace_made(b->tr, t->storage)) {
        /* an integer or bool tensor made during the forward (a mask, indices) may depend on
           the input, and such ops are not recorded: refuse rather than freeze it */
        tn__trace_refuse(b->tr, "a bool or integer tensor computed during the forward (a mask or indices: not recorded yet) feeds the output");
    }
    char buf[32];
    if (!name) { snprintf(buf, sizeof buf, "c%d", b->nconst++); name = buf; }
    int v = tn__graph_add_value(b->g, TN__GV_CONST, t->dtype, t->ndim, t->shape);
    if (v < 0) return -2;
    b->g->vals[v].t = tn_retain(t);
    b->g->vals[v].name = tn__strdup(name);
    if (!b->g->vals[v].name) return -2;
    return v;
}

static bool tn__trace_same_device(tn_node *nd) { return nd->in[0].device == nd->out.device; }

/* Translate record k into a graph node (op and forward arguments). 0; 1 when its op has
   no replay (*why says which); -1 on an error. */
static int tn__trace_translate(tn__tbuild *b, int k, const char **why) {
    tn__trec *r = &b->tr->recs[k];
    tn_node *nd = r->nd;
    tn__jit_op op;
    int nin = r->nin, sub = 0;
    tn_tensor *ext[5] = {NULL, NULL, NULL, NULL, NULL};   /* operands other than r->ins */
    int next = 0;
    int64_t iv[TN__JIT_MAXI];
    int ni = 0, ndbl = 0;
    double dv[4] = {0, 0, 0, 0};
    const tn__meta *out = &nd->out, *in0 = &nd->in[0];
    switch (nd->op) {
    case G_UNARY: op = J_UNARY; sub = nd->sub; ndbl = 3; memcpy(dv, nd->d, 3 * sizeof(double)); break;
    case G_BINARY: op = J_BINARY; sub = nd->sub; ndbl = 1; dv[0] = nd->d[0]; break;
    case G_TERNARY: op = J_TERNARY; sub = nd->sub; ndbl = 1; dv[0] = nd->d[0]; break;
    case G_ADDMM: case G_BADDBMM: op = nd->op == G_ADDMM ? J_ADDMM : J_BADDBMM; ndbl = 2; dv[0] = nd->d[0]; dv[1] = nd->d[1]; break;
    case G_MM: op = J_MM; break;
    case G_BMM: op = J_BMM; break;
    case G_MV: op = J_MV; break;
    case G_DOT: op = J_DOT; break;
    case G_RESHAPE: case G_EXPAND:
        op = nd->op == G_RESHAPE ? J_RESHAPE : J_EXPAND;
        ni = out->ndim;
        memcpy(iv, out->shape, (size_t)ni * sizeof(int64_t));
        break;
    case G_PERMUTE: op = J_PERMUTE; ni = in0->ndim; memcpy(iv, nd->i, (size_t)ni * sizeof(int64_t)); break;
    case G_SLICE: {   /* dim, start, stop, step */
        op = J_SLICE;
        int64_t d = nd->i[0], len = out->shape[d];
        iv[0] = d; iv[1] = nd->i[1]; iv[3] = nd->i[2];
        iv[2] = len > 0 ? nd->i[1] + (len - 1) * nd->i[2] + 1 : nd->i[1];
        ni = 4;
        break;
    }
    case G_SELECT: op = J_SELECT; iv[0] = nd->i[0]; iv[1] = nd->i[1]; ni = 2; break;
    case G_SUM: case G_MEAN:   /* the reduced dims, then keepdim */
        op = nd->op == G_SUM ? J_SUM : J_MEAN;
        for (int d = 0; d < in0->ndim; d++) if (nd->i[d]) iv[ni++] = d;
        iv[ni++] = out->ndim == in0->ndim && in0->ndim > 0;
        if (out->dtype != in0->dtype) { *why = "a sum or mean with a dtype"; return 1; }
        break;
    case G_SOFTMAX: case G_LOG_SOFTMAX:
        op = nd->op == G_SOFTMAX ? J_SOFTMAX : J_LOG_SOFTMAX;
        iv[0] = nd->i[0]; ni = 1;
        if (out->dtype != in0->dtype) { *why = "softmax with a dtype"; return 1; }
        break;
    case G_CAT: op = J_CAT; iv[0] = nd->i[0]; ni = 1; break;
    case G_COPY: op = J_CLONE; break;
    case G_TO:
        if (!tn__trace_same_device(nd)) { *why = "a copy to another device"; return 1; }
        op = J_TO; iv[0] = out->dtype; ni = 1;
        break;
    case G_INDEX_SELECT:
        if (nd->nsaved < 1) { *why = "index_select without its index"; return 1; }
        op = J_INDEX_SELECT; iv[0] = nd->i[0]; ni = 1;
        ext[next++] = nd->saved[0];
        break;
    case G_CUSTOM:
        if (nd->custom_bw == tn__conv_bw) {   /* conv2d: the geometry (tn__node_geom) as stride, padding, dilation, groups */
            op = J_CONV2D;
            const int64_t a[7] = {nd->i[6], nd->i[7], nd->i[4], nd->i[5], nd->i[2], nd->i[3], nd->i[10]};
            memcpy(iv, a, sizeof a);
            ni = 7;
            if (nin == 2) { ext[next++] = NULL; }   /* no bias */
        } else if (nd->custom_bw == tn__im2col_bw) {   /* the geometry: kernel, dilation, padding, stride, output size (h, w) */
            op = J_IM2COL;
            memcpy(iv, nd->i, 10 * sizeof(int64_t));
            ni = 10;
        } else if (nd->custom_bw == tn__max_pool_bw && nd->ni == 19) {   /* kernel, stride, padding, dilation (h, w), ceil_mode */
            op = J_MAX_POOL2D;
            const int64_t *g = nd->i + 8;
            const int64_t a[9] = {g[0], g[1], g[6], g[7], g[4], g[5], g[2], g[3], nd->i[18]};
            memcpy(iv, a, sizeof a);
            ni = 9;
        } else if (nd->custom_bw == tn__pool_lib_bw && nd->ni == 12 && nd->i[10] != 0) {   /* avg_pool2d as tn__avg_pool records it for the trace */
            op = J_AVG_POOL2D;
            const int64_t *g = nd->i;
            const int64_t a[8] = {g[0], g[1], g[6], g[7], g[4], g[5], g[11], g[10] == 1};
            memcpy(iv, a, sizeof a);
            ni = 8;
        } else if (nd->custom_bw == tn__pool_lib_bw && nd->ni == 11 && nd->i[10] >= 0 && nd->i[10] <= 2) {
            /* the backend's library pooling (a GPU's): mode 0 max, 1 average counting the padding, 2 not; its windows are
               those the floor formula counts, so ceil_mode off replays the same windows */
            const int64_t *g = nd->i;
            op = g[10] == 0 ? J_MAX_POOL2D : J_AVG_POOL2D;
            const int64_t mx[9] = {g[0], g[1], g[6], g[7], g[4], g[5], g[2], g[3], 0}, av[8] = {g[0], g[1], g[6], g[7], g[4], g[5], 0, g[10] == 1};
            ni = op == J_MAX_POOL2D ? 9 : 8;
            memcpy(iv, op == J_MAX_POOL2D ? mx : av, (size_t)ni * sizeof(int64_t));
        } else if (nd->custom_bw == tn__lstm_seq_bwd && nin == 5 && r->ins[4] && r->ins[4]->dtype == TN_F64) {   /* gi, h0, c0, w_hh, [reverse] */
            op = J_LSTM;
            iv[0] = *(const double *)tn_data_ptr(r->ins[4]) != 0;
            ni = 1;
            nin = 4;
        } else if (nd->custom_bw == tn__rnnseq_bwd && nin == 5 && r->ins[4] && r->ins[4]->dtype == TN_F64 && tn_numel(r->ins[4]) == 2) {   /* gi, h0, w_hh, b_hh, [mode, reverse] */
            op = J_RNN_SEQ;
            const double *pv = (const double *)tn_data_ptr(r->ins[4]);
            iv[0] = (int64_t)pv[0];
            iv[1] = pv[1] != 0;
            ni = 2;
            nin = 4;
        } else if (nd->custom_bw == tn__bn_bw && nd->i[0] == 0 && nd->nsaved >= 4) {   /* eval mode: the running statistics were saved for us */
            op = J_BATCH_NORM;
            ndbl = 2; dv[0] = nd->d[1]; dv[1] = nd->d[0];   /* momentum, eps */
            tn_tensor *w = nin > 1 ? r->ins[1] : NULL, *bias = nin > 2 ? r->ins[2] : NULL;
            nin = 1;
            ext[next++] = nd->saved[nd->nsaved - 2];
            ext[next++] = nd->saved[nd->nsaved - 1];
            ext[next++] = w;
            ext[next++] = bias;
        } else if (nd->custom_bw == tn__bn_bw) {
            *why = "batch_norm in training mode (call tn_module_eval before tracing)"; return 1;
        } else if (nd->custom_bw == tn__ln_bw) {
            op = J_LAYER_NORM;
            iv[0] = nd->i[0]; ni = 1;
            ndbl = 1; dv[0] = nd->d[0];
            if (nin == 1) { ext[next++] = NULL; ext[next++] = NULL; }
        } else if (nd->custom_bw == tn__sdpa_fused_bwd && nin >= 4 && r->ins[3]) {   /* q, k, v, [scale, causal], mask */
            op = J_SDPA;
            const double *pv = (const double *)tn_data_ptr(r->ins[3]);
            ndbl = 2; dv[0] = pv[0]; dv[1] = pv[1];
            ext[next++] = nin > 4 ? r->ins[4] : NULL;
            nin = 3;
        } else { *why = nd->custom_name ? nd->custom_name : nd->name ? nd->name : "a custom op"; return 1; }
        break;
    default: *why = tn__node_name(nd); return 1;
    }
    tn__gnode *gn = tn__graph_add_node(b->g, op, nin + next);
    if (!gn) return -1;
    gn->sub = sub;
    gn->ni = ni;
    memcpy(gn->i, iv, (size_t)ni * sizeof(int64_t));
    gn->nd = ndbl;
    memcpy(gn->d, dv, sizeof dv);
    for (int i = 0; i < nin + next; i++) {
        tn_tensor *t = i < nin ? r->ins[i] : ext[i - nin];
        int v = tn__trace_value(b, t, k);
        if (v == -2) return -1;
        gn->in[i] = v;
    }
    int v = tn__graph_add_value(b->g, TN__GV_NODE, out->dtype, out->ndim, out->shape);
    if (v < 0) return -1;
    gn->out = v;
    b->rec_val[k] = v;
    return 0;
}

/* Drop the nodes no output needs (composites' leftovers) and the values only they used,
   renumbering the rest in order. */
static int tn__graph_prune(tn_graph *g) {
    bool *live = (bool *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(bool));
    int *map = (int *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(int));
    if (!live || !map) { TN_FREE(live); TN_FREE(map); return TN__FAIL_INT("tn_graph: out of memory"); }
    memset(live, 0, (size_t)(g->nvals + 1) * sizeof(bool));
    for (int i = 0; i < g->ninputs; i++) live[g->inputs[i]] = true;
    for (int i = 0; i < g->noutputs; i++) live[g->outputs[i]] = true;
    for (int n = g->nnodes - 1; n >= 0; n--)
        if (live[g->nodes[n].out]) for (int k = 0; k < g->nodes[n].nin; k++) if (g->nodes[n].in[k] >= 0) live[g->nodes[n].in[k]] = true;
    int nv = 0;
    for (int i = 0; i < g->nvals; i++) {
        if (live[i]) { map[i] = nv; g->vals[nv++] = g->vals[i]; }
        else { map[i] = -1; tn_release(g->vals[i].t); TN_FREE(g->vals[i].name); }
    }
    int nn = 0;
    for (int n = 0; n < g->nnodes; n++) {
        tn__gnode *x = &g->nodes[n];
        if (map[x->out] < 0) { TN_FREE(x->in); continue; }
        for (int k = 0; k < x->nin; k++) if (x->in[k] >= 0) x->in[k] = map[x->in[k]];
        x->out = map[x->out];
        g->nodes[nn++] = *x;
    }
    for (int i = 0; i < g->ninputs; i++) g->inputs[i] = map[g->inputs[i]];
    for (int i = 0; i < g->noutputs; i++) g->outputs[i] = map[g->outputs[i]];
    g->nvals = nv;
    g->nnodes = nn;
    TN_FREE(live);
    TN_FREE(map);
    return 0;
}

/* The records' graph: values for inputs, nodes for the records, the output. */
static int tn__trace_build(tn__tbuild *b, tn_tensor *y) {
    tn_graph *g = b->g;
    tn__tracer *tr = b->tr;
    g->inputs = (int *)TN_MALLOC((size_t)(b->ninputs > 0 ? b->ninputs : 1) * sizeof(int));
    g->outputs = (int *)TN_MALLOC(sizeof(int));
    b->rec_val = (int *)TN_MALLOC((size_t)(tr->nrecs > 0 ? tr->nrecs : 1) * sizeof(int));
    if (!g->inputs || !g->outputs || !b->rec_val) return TN__FAIL_INT("tn_jit_trace: out of memory");
    for (int i = 0; i < b->ninputs; i++) {
        tn_tensor *x = b->inputs[i];
        if ((g->inputs[i] = tn__graph_add_value(g, TN__GV_INPUT, x->dtype, x->ndim, x->shape)) < 0) return -1;
        g->ninputs++;
    }
    /* which records the output needs: walk back from it through the operands */
    bool *need = (bool *)TN_MALLOC((size_t)(tr->nrecs > 0 ? tr->nrecs : 1) * sizeof(bool));
    if (!need) return TN__FAIL_INT("tn_jit_trace: out of memory");
    memset(need, 0, (size_t)(tr->nrecs > 0 ? tr->nrecs : 1) * sizeof(bool));
    int ky = tn__trace_find_out(tr, y);
    for (int a = tr->nalias - 1; a >= 0; a--) if (tr->alias[a].t == y) { if (tr->alias[a].rec > ky) ky = tr->alias[a].rec; break; }
    if (ky >= 0) need[ky] = true;
    for (int k = tr->nrecs - 1; k >= 0; k--) {
        if (!need[k]) continue;
        tn__trec *r = &tr->recs[k];
        for (int i = 0; i < r->nin + r->nd->nsaved; i++) {   /* saved tensors too: some ops' operands are only there */
            tn_tensor *t = i < r->nin ? r->ins[i] : r->nd->saved[i - r->nin];
            if (!t) continue;
            for (int j = k - 1; j >= 0; j--) if (tr->recs[j].out == t || (tr->recs[j].out && tr->recs[j].out->storage == t->storage && t->storage)) { need[j] = true; break; }
            for (int a = tr->nalias - 1; a >= 0; a--) if (tr->alias[a].t == t && tr->alias[a].rec < k) { need[tr->alias[a].rec] = true; break; }
        }
    }
    int rc = 0;
    for (int k = 0; k < tr->nrecs && rc == 0; k++) {
        b->rec_val[k] = -1;
        if (!need[k] || !tr->recs[k].out) continue;
        const char *why = NULL;
        int t = tn__trace_translate(b, k, &why);
        if (t < 0) rc = -1;
        else if (t > 0) rc = TN__FAIL_INT("tn_jit_trace: the forward uses %s, which the graph cannot replay yet", why);
    }
    TN_FREE(need);
    if (rc) return -1;
    int vy = tn__trace_value(b, y, tr->nrecs);
    if (vy < 0) return vy == -1 ? TN__FAIL_INT("tn_jit_trace: the forward returned no tensor") : -1;
    g->outputs[0] = vy;
    g->noutputs = 1;
    if (tr->refused) return TN__FAIL_INT("tn_jit_trace: cannot capture this forward: %s", tr->refused);
    return tn__graph_prune(g);
}

/* As torch.jit.trace's check_trace: the graph and the forward must agree on other inputs
   (each x as 0.5 x + cos(7.3 x + 1.1): no random draw). A disagreement means a value the
   output depends on was computed outside the recorded ops (a float cast of a mask, a
   value read in C and used as a number) and frozen: refused. */
static int tn__trace_check(const char *fn, tn_graph *g, tn_jit_trace_fn f, void *user, tn_module *m, tn_tensor *const *inputs, int n) {
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *alt[64];
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        if (!(alt[i] = tn_add(tn_mul_scalar(inputs[i], 0.5), tn_cos(tn_add_scalar(tn_mul_scalar(inputs[i], 7.3), 1.1))))) rc = -1;
    tn_tensor *want = rc ? NULL : m ? tn_module_forward(m, alt[0]) : f(alt, n, user), *got = NULL;
    if (want && tn_graph_run(g, alt, n, &got, 1) < 0) got = NULL;
    if (!want || !got) rc = TN__FAIL_INT("%s: checking the graph on other inputs failed: %s", fn, tn_last_error());
    else if (want->dtype != got->dtype || want->ndim != got->ndim || memcmp(want->shape, got->shape, (size_t)want->ndim * sizeof(int64_t)) ||
             !tn_allclose(got, want, .rtol = 1e-4, .atol = 1e-5, .equal_nan = true)) {
        double d = want->dtype == got->dtype && want->ndim == got->ndim ? tn_item(tn_max(tn_abs(tn_sub(tn_to_dtype(got, TN_F64), tn_to_dtype(want, TN_F64))))) : NAN;
        rc = TN__FAIL_INT("%s: the graph replays differently from the forward on other inputs (%s %s against %s %s, max difference %g): a value the "
                          "output depends on was computed outside the recorded ops (a float cast of a mask or of integers, a random draw, a "
                          "value read into C or Python) and was frozen as traced", fn, tn_dtype_name(got->dtype), TN__SHAPE(got),
                          tn_dtype_name(want->dtype), TN__SHAPE(want), d);
    }
    tn_no_grad_end();
    tn_scope_end();
    return rc;
}

static tn_graph *tn__trace_run(const char *fn, tn_jit_trace_fn f, void *user, tn_module *m, tn_tensor *const *inputs, int n, const tn_dict *names) {
    if (tn__tracing) return (tn_graph *)tn__error("%s: a trace is already running on this thread", fn);
    if (n < 1 || n > 64 || !inputs) return (tn_graph *)tn__error("%s: expected 1 to 64 example inputs, got %d", fn, n);
    for (int i = 0; i < n; i++) {
        if (!inputs[i]) return (tn_graph *)tn__error("%s: example input %d is NULL", fn, i);
        if (!tn_dtype_is_floating(inputs[i]->dtype))
            return (tn_graph *)tn__error("%s: example input %d is %s: only floating point inputs can be traced yet (integer inputs such as embedding indices are not recorded)",
                                         fn, i, tn_dtype_name(inputs[i]->dtype));
        if (inputs[i]->device != inputs[0]->device)   /* a graph runs on one device: its constants are the model's tensors there */
            return (tn_graph *)tn__error("%s: example input %d is on %s, input 0 on %s: a graph runs on one device", fn, i,
                                         tn_device_name(inputs[i]->device), tn_device_name(inputs[0]->device));
    }
    tn_graph *g = tn__graph_new();
    if (!g) return NULL;
    tn__tracer tr;
    memset(&tr, 0, sizeof tr);
    tn__tbuild b;
    memset(&b, 0, sizeof b);
    b.g = g;
    b.tr = &tr;
    b.ninputs = n;
    tn_tensor *stand[64];
    tn_dict *params = m ? tn_module_named_parameters(m) : NULL, *buffers = m ? tn_module_named_buffers(m) : NULL;
    b.params = m ? params : names;
    b.buffers = buffers;
    b.inputs = stand;
    tn_scope_begin();
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {   /* stand-ins that require grad: every op on them records */
        stand[i] = tn__view_of(inputs[i], inputs[i]->shape, inputs[i]->strides, inputs[i]->ndim, inputs[i]->offset);
        if (!stand[i] || !tn__own(stand[i])) rc = -1;
        else stand[i]->requires_grad = true;
    }
    tn_tensor *y = NULL;
    if (rc == 0) {
        tn_enable_grad_begin();
        tn__tracing = &tr;
        y = m ? tn_module_forward(m, stand[0]) : f(stand, n, user);
        tn__tracing = NULL;
        tn_enable_grad_end();
        if (!y) rc = -1;
        else if (tr.oom) rc = TN__FAIL_INT("%s: out of memory recording the trace", fn);
        else rc = tn__trace_build(&b, y);
        if (rc == 0) rc = tn__trace_check(fn, g, f, user, m, inputs, n);
    }
    tn_scope_end();
    tn__tracer_free(&tr);
    TN_FREE(b.rec_val);
    tn_dict_free(params);
    tn_dict_free(buffers);
    if (rc) { tn_graph_free(g); return NULL; }
    return g;
}
TNDEF tn_graph *tn_jit_trace(tn_jit_trace_fn fn, void *user, tn_tensor *const *inputs, int n, const tn_dict *names) {
    if (!fn) return (tn_graph *)tn__error("tn_jit_trace: the function is NULL");
    return tn__trace_run("tn_jit_trace", fn, user, NULL, inputs, n, names);
}
TNDEF tn_graph *tn_jit_trace_module(tn_module *m, tn_tensor *x) {
    if (!m) return (tn_graph *)tn__error("tn_jit_trace_module: the module is NULL");
    if (!m->type || !m->type->forward) return (tn_graph *)tn__error("tn_jit_trace_module: %s has no forward", tn_module_name(m));
    return tn__trace_run("tn_jit_trace_module", NULL, NULL, m, &x, 1, NULL);
}

TNDEF int tn_graph_set_dynamic(tn_graph *g, int input, int64_t dim) {
    if (!g) return TN__FAIL_INT("tn_graph_set_dynamic: the graph is NULL");
    if (input < 0 || input >= g->ninputs) return TN__FAIL_INT("tn_graph_set_dynamic: input %d out of range (the graph has %d)", input, g->ninputs);
    const tn__gval *v = &g->vals[g->inputs[input]];
    if (dim != 0 || v->ndim == 0) return TN__FAIL_INT("tn_graph_set_dynamic: only dim 0 (the batch) of a tensor input can be dynamic yet, got dim %lld", (long long)dim);
    for (int i = 0; i < g->ninputs; i++)
        if (i != input && g->vals[g->inputs[i]].ndim > 0 && g->vals[g->inputs[i]].shape[0] == v->shape[0] && g->dyn_input >= 0) break;
    g->dyn_input = input;
    g->dyn_size = v->shape[0];
    return 0;
}

TNDEF int tn_graph_num_inputs(const tn_graph *g) { return g ? g->ninputs : 0; }
TNDEF int tn_graph_num_outputs(const tn_graph *g) { return g ? g->noutputs : 0; }
TNDEF int tn_graph_num_nodes(const tn_graph *g) { return g ? g->nnodes : 0; }
TNDEF int64_t tn_graph_arena_bytes(const tn_graph *g) { return g && g->mplan && g->mplan->arena ? (int64_t)g->mplan->arena->bytes : 0; }
static void tn__graph_op_name(const tn__gnode *n, char *buf, size_t cap) {
    if (n->op == J_UNARY) snprintf(buf, cap, "aten::%s", tn_unary_op_name((tn_unary_op)n->sub));
    else if (n->op == J_BINARY) snprintf(buf, cap, "aten::%s", tn_binary_op_name((tn_binary_op)n->sub));
    else if (n->op == J_TERNARY) snprintf(buf, cap, "aten::%s", tn__ternary_names[n->sub]);
    else snprintf(buf, cap, "%s", tn__jit_names[n->op]);
}
TNDEF const char *tn_graph_node_op(const tn_graph *g, int i) {
    static TN__TLS char buf[64];
    if (!g || i < 0 || i >= g->nnodes) return NULL;
    tn__graph_op_name(&g->nodes[i], buf, sizeof buf);
    return buf;
}

/* ---- replay ---- */
/* A shape attribute with the dynamic batch: dim 0 equal to the traced size follows the run's. */
static void tn__graph_dyn_shape(const tn_graph *g, int64_t batch, const int64_t *in, int n, int64_t *out) {
    memcpy(out, in, (size_t)n * sizeof(int64_t));
    if (g->dyn_input >= 0 && n > 0 && in[0] == g->dyn_size) out[0] = batch;
}
static tn_tensor *tn__graph_node_run(const tn_graph *g, const tn__gnode *n, tn_tensor **v, int64_t batch) {
    tn_tensor *a[8] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    for (int k = 0; k < n->nin && k < 8; k++) a[k] = n->in[k] >= 0 ? v[n->in[k]] : NULL;
    int64_t shape[TN__JIT_MAXI];
    switch (n->op) {
    case J_UNARY: return tn__unary((tn_unary_op)n->sub, a[0], n->d);
    case J_BINARY: return tn__binary("tn_graph_run", (tn_binary_op)n->sub, a[0], a[1], n->d[0]);
    case J_TERNARY: return tn__ternary("tn_graph_run", (tn_ternary_op)n->sub, a[0], a[1], a[2], n->d[0]);
    case J_ADDMM: return tn_addmm(a[0], a[1], a[2], .beta = n->d[0], .alpha = n->d[1]);
    case J_BADDBMM: return tn_baddbmm(a[0], a[1], a[2], .beta = n->d[0], .alpha = n->d[1]);
    case J_MM: return tn_mm(a[0], a[1]);
    case J_BMM: return tn_bmm(a[0], a[1]);
    case J_MV: return tn_mv(a[0], a[1]);
    case J_DOT: return tn_dot(a[0], a[1]);
    case J_RESHAPE: tn__graph_dyn_shape(g, batch, n->i, n->ni, shape); return tn_reshape(a[0], shape, n->ni);
    case J_EXPAND: tn__graph_dyn_shape(g, batch, n->i, n->ni, shape); return tn_expand(a[0], shape, n->ni);
    case J_PERMUTE: return tn_permute(a[0], n->i, n->ni);
    case J_SLICE: return tn_slice(a[0], n->i[0], n->i[1], n->i[2], n->i[3]);
    case J_SELECT: return tn_select(a[0], n->i[0], n->i[1]);
    case J_SUM: return n->ni == 1 ? tn_sum(a[0]) : tn_sum_dims(a[0], n->i, n->ni - 1, .keepdim = n->i[n->ni - 1] != 0);
    case J_MEAN: return n->ni == 1 ? tn_mean(a[0]) : tn_mean_dims(a[0], n->i, n->ni - 1, .keepdim = n->i[n->ni - 1] != 0);
    case J_IM2COL: {   /* the geometry must be the input's (a loaded graph's is checked here) */
        const int64_t *g4 = n->i;
        bool ok = a[0] && a[0]->ndim == 4;
        for (int k = 0; ok && k < 2; k++) {
            const int64_t kk = g4[k], dl = g4[2 + k], pd = g4[4 + k], st = g4[6 + k], size = a[0]->shape[2 + k];
            ok = kk > 0 && dl > 0 && st > 0 && pd >= 0 && kk <= INT32_MAX && dl <= INT32_MAX && st <= INT32_MAX && pd <= INT32_MAX &&
                 size + 2 * pd >= dl * (kk - 1) + 1 && g4[8 + k] == (size + 2 * pd - dl * (kk - 1) - 1) / st + 1;
        }
        if (!ok) return (tn_tensor *)tn__error("tn_graph_run: im2col's geometry does not fit its input %s", a[0] ? TN__SHAPE(a[0]) : "(none)");
        return tn__im2col(a[0], g4);
    }
    case J_SOFTMAX: return tn_softmax(a[0], n->i[0]);
    case J_LOG_SOFTMAX: return tn_log_softmax(a[0], n->i[0]);
    case J_CAT: {
        for (int k = 0; k < n->nin; k++) if (n->in[k] < 0 || !v[n->in[k]]) return (tn_tensor *)tn__error("tn_graph_run: cat of a missing input");
        tn_tensor **ts = (tn_tensor **)TN_MALLOC((size_t)n->nin * sizeof *ts);
        if (!ts) return (tn_tensor *)tn__error("tn_graph_run: out of memory");
        for (int k = 0; k < n->nin; k++) ts[k] = v[n->in[k]];
        tn_tensor *r = tn_cat(ts, n->nin, .dim = n->i[0]);
        TN_FREE(ts);
        return r;
    }
    case J_CLONE: return tn_clone(a[0]);
    case J_TO: return tn_to_dtype(a[0], (tn_dtype)n->i[0]);
    case J_INDEX_SELECT: return tn_index_select(a[0], n->i[0], a[1]);
    case J_CONV2D: {
        tn_conv_fn_opts o = TN_DEFAULTS(tn_conv_fn_opts);
        o.stride_hw[0] = n->i[0]; o.stride_hw[1] = n->i[1];
        o.padding_hw[0] = n->i[2]; o.padding_hw[1] = n->i[3];
        o.dilation_hw[0] = n->i[4]; o.dilation_hw[1] = n->i[5];
        o.groups = n->i[6];
        return tn_conv2d_opts(a[0], a[1], a[2], o);
    }
    case J_MAX_POOL2D: {
        tn_pool_opts o = TN_DEFAULTS(tn_pool_opts);
        o.kernel_size_hw[0] = n->i[0]; o.kernel_size_hw[1] = n->i[1];
        o.stride_hw[0] = n->i[2]; o.stride_hw[1] = n->i[3];
        o.padding_hw[0] = n->i[4]; o.padding_hw[1] = n->i[5];
        o.dilation_hw[0] = n->i[6]; o.dilation_hw[1] = n->i[7];
        o.ceil_mode = n->i[8] != 0;
        return tn_max_pool2d_opts(a[0], NULL, 0, o);
    }
    case J_AVG_POOL2D: {   /* kernel, stride, padding (h, w), ceil_mode, count_include_pad */
        tn_pool_opts o = TN_DEFAULTS(tn_pool_opts);
        o.kernel_size_hw[0] = n->i[0]; o.kernel_size_hw[1] = n->i[1];
        o.stride_hw[0] = n->i[2]; o.stride_hw[1] = n->i[3];
        o.padding_hw[0] = n->i[4]; o.padding_hw[1] = n->i[5];
        o.ceil_mode = n->i[6] != 0;
        o.count_include_pad = n->i[7] != 0;
        return tn_avg_pool2d_opts(a[0], 0, o);
    }
    case J_MATMUL: return tn_matmul(a[0], a[1]);
    case J_LSTM: {   /* the kernel trusts its operands' sizes: a loaded graph's are checked here */
        const tn_tensor *gi = a[0], *h0 = a[1], *c0 = a[2], *w = a[3];
        const bool ok = gi && h0 && c0 && w && gi->ndim == 3 && h0->ndim == 2 && c0->ndim == 2 && w->ndim == 2 && gi->shape[0] > 0 &&
                        (gi->dtype == TN_F32 || gi->dtype == TN_F64) && h0->dtype == gi->dtype && c0->dtype == gi->dtype && w->dtype == gi->dtype &&
                        gi->device == TN_CPU && h0->device == TN_CPU && c0->device == TN_CPU && w->device == TN_CPU &&
                        h0->shape[0] == gi->shape[1] && c0->shape[0] == gi->shape[1] && c0->shape[1] == h0->shape[1] && w->shape[1] == h0->shape[1] &&
                        w->shape[0] == gi->shape[2] && gi->shape[2] == 4 * h0->shape[1];
        if (!ok)
            return (tn_tensor *)tn__error("tn_graph_run: lstm_recurrence takes gi [L > 0, N, 4H], h0 [N, H], c0 [N, H], w_hh [4H, H] of one float dtype on the CPU, got %s, %s, %s, %s",
                                          gi ? TN__SHAPE(gi) : "(none)", h0 ? TN__SHAPE(h0) : "(none)", c0 ? TN__SHAPE(c0) : "(none)", w ? TN__SHAPE(w) : "(none)");
        return tn__lstm_seq(a[0], a[1], a[2], a[3], n->i[0] != 0);
    }
    case J_RNN_SEQ: {   /* i: the mode (TN__RNN_TANH, _RELU, _GRU), reverse */
        const tn_tensor *gi = a[0], *h0 = a[1], *w = a[2], *bh = a[3];
        const int64_t G = n->i[0] == TN__RNN_GRU ? 3 : 1;
        const bool ok = gi && h0 && w && bh && (n->i[0] == TN__RNN_TANH || n->i[0] == TN__RNN_RELU || n->i[0] == TN__RNN_GRU) && gi->ndim == 3 &&
                        h0->ndim == 2 && w->ndim == 2 && bh->ndim == 1 && gi->shape[0] > 0 && (gi->dtype == TN_F32 || gi->dtype == TN_F64) &&
                        h0->dtype == gi->dtype && w->dtype == gi->dtype && bh->dtype == gi->dtype && gi->device == TN_CPU && h0->device == TN_CPU &&
                        w->device == TN_CPU && bh->device == TN_CPU && h0->shape[0] == gi->shape[1] && w->shape[1] == h0->shape[1] &&
                        w->shape[0] == gi->shape[2] && gi->shape[2] == G * h0->shape[1] && bh->shape[0] == gi->shape[2];
        if (!ok)
            return (tn_tensor *)tn__error("tn_graph_run: rnn_recurrence (mode %lld) takes gi [L > 0, N, GH], h0 [N, H], w_hh [GH, H], b_hh [GH] of one float dtype on the CPU (G = 3 for the GRU, else 1), got %s, %s, %s, %s",
                                          (long long)n->i[0], gi ? TN__SHAPE(gi) : "(none)", h0 ? TN__SHAPE(h0) : "(none)", w ? TN__SHAPE(w) : "(none)", bh ? TN__SHAPE(bh) : "(none)");
        return tn__rnnseq((int)n->i[0], a[0], a[1], a[2], a[3], n->i[1] != 0);
    }
    case J_BATCH_NORM: return tn_batch_norm(a[0], a[1], a[2], .weight = a[3], .bias = a[4], .momentum = n->d[0], .eps = n->d[1]);
    case J_LAYER_NORM: {
        if (!a[0] || n->i[0] < 0 || n->i[0] > a[0]->ndim) return (tn_tensor *)tn__error("tn_graph_run: layer_norm over %lld dims of a %d-d input", (long long)n->i[0], a[0] ? a[0]->ndim : 0);
        return tn_layer_norm(a[0], a[0]->shape + a[0]->ndim - n->i[0], (int)n->i[0], .weight = a[1], .bias = a[2], .eps = n->d[0]);
    }
    case J_SDPA: return tn_scaled_dot_product_attention(a[0], a[1], a[2], .attn_mask = a[3], .is_causal = n->d[1] != 0, .scale = n->d[0]);
    default: return (tn_tensor *)tn__error("tn_graph_run: unknown op %d", (int)n->op);
    }
}
/* The run's plan: each value's use count and last reader, so a replay frees an
   intermediate right after its last use (the allocator's cache hands its block to a later
   node) and may apply an activation in place on a result nothing else reads. Dropped by
   anything that changes the graph (tn__graph_unplan). */
static void tn__graph_unplan(tn_graph *g) {
    TN_FREE(g->uses); TN_FREE(g->last_use); TN_FREE(g->fg); TN_FREE(g->fgrp); TN_FREE(g->epi); TN_FREE(g->lnadd);
    for (int i = 0; g->wp && i < g->nvals; i++) tn_release(g->wp[i].t);
    TN_FREE(g->wp);
    g->uses = g->last_use = g->fgrp = g->epi = g->lnadd = NULL;
    g->wp = NULL;
    g->fg = NULL;
    g->nfg = 0;
    tn__mhook_free(g->mplan);
    g->mplan = NULL;
    g->mruns = g->mfails = 0;
}
static bool tn__graph_is_output(const tn_graph *g, int v) {
    for (int i = 0; i < g->noutputs; i++) if (g->outputs[i] == v) return true;
    return false;
}
/* The planning run, node k's result just kept (its inputs not yet released): the
   result's storage (made here, or earlier: a view) lives as long as its readers. */
static void tn__graph_mplan_result(const tn_graph *g, tn__mhook *h, int k, tn_tensor *const *v) {
    if (h->mode != TN__MH_RECORD) return;
    const tn__gnode *nd = &g->nodes[k];
    const int ri = tn__mhook_result(h, k, nd->out, v[nd->out] ? v[nd->out]->storage : NULL, nd->in, nd->nin, v);
    if (ri < 0) return;
    const int e = g->last_use[nd->out] < 0 ? g->nnodes : g->last_use[nd->out];
    if (e > h->recs[ri].end) h->recs[ri].end = e;
    if (tn__graph_is_output(g, nd->out)) h->recs[ri].output = true;
}
/* After node k of a planned run (its inputs released): the planning run learns which of
   the node's storages outlive it, a serving run checks that those planned to end here are
   free. */
static void tn__graph_mplan_after(const tn_graph *g, tn__mhook *h, int k, tn_tensor *const *v) {
    if (h->mode == TN__MH_SERVE) tn__mhook_after_serve(h, k);
    else tn__mhook_after_record(h, k, v[g->nodes[k].out] ? v[g->nodes[k].out]->storage : NULL);
}
/* ---- elementwise fusion ----
   A chain of elementwise nodes (unary ops, and binary ops whose other operand is a tensor
   of the same dtype or a 0-d constant: a bias add and GELU, x * sigmoid(x), a residual add
   and a scale), each node's result read only by the next, all of one float dtype and one
   shape, runs under no_grad as one pass over the output: the strided iterator walks the
   output and the chain's outside operands (broadcast as the ops broadcast them), and each
   of its chunks goes through the members' own CPU kernels in tiles of TN__FUSE_TILE
   elements, the intermediate values in two tile buffers that stay in L1. The same kernels
   on the same values: the results are the unfused replay's, bit for bit, with one output
   written instead of one per member and no intermediate tensors. With grad enabled (autograd
   needs each node) or when the operands at run time are not as planned (another device or
   dtype), the members run one by one. */
#define TN__FUSE_MAX TN__FUSED_MAX   /* members of a group (src/api.h: a backend's program holds as many) */
#define TN__FUSE_EXT TN__FUSED_EXT   /* outside operands (the iterator takes TN__MAX_OPS, the output one of them) */
#define TN__FUSE_TILE 256
typedef struct tn__fgroup {
    int n;
    int node[TN__FUSE_MAX];
    signed char src[TN__FUSE_MAX][2];   /* per member operand: -1 the previous member's result, else an outside operand */
    int next;
    int ext[TN__FUSE_EXT];              /* the outside operands' values */
} tn__fgroup;
static bool tn__fuse_candidate(const tn_graph *g, const tn__gnode *n) {
    const tn__gval *o = &g->vals[n->out];
    if (o->dtype != TN_F32 && o->dtype != TN_F64) return false;
    if (n->op == J_UNARY) return n->nin == 1 && n->in[0] >= 0 && g->vals[n->in[0]].dtype == o->dtype && n->sub < LOGICAL_NOT;
    if (n->op != J_BINARY || n->nin != 2) return false;
    const int op = n->sub;
    if (op != ADD && op != SUB && op != MUL && op != DIV && op != POW && op != MAXIMUM && op != MINIMUM) return false;
    for (int i = 0; i < 2; i++) {
        const int w = n->in[i];
        if (w < 0 || (g->vals[w].dtype != o->dtype && !(g->vals[w].kind == TN__GV_CONST && g->vals[w].ndim == 0))) return false;
    }
    return true;
}
static bool tn__fuse_same_shape(const tn__gval *a, const tn__gval *b) {
    return a->dtype == b->dtype && a->ndim == b->ndim && !memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t));
}
/* Add member k to group G (operand slot pred: the previous member's result, -1: none).
   false when it does not fit. */
static bool tn__fuse_add(tn__fgroup *G, const tn__gnode *n, int k, int pred) {
    if (G->n == TN__FUSE_MAX) return false;
    tn__fgroup t = *G;
    for (int i = 0; i < n->nin; i++) {
        if (i == pred) { t.src[t.n][i] = -1; continue; }
        int e = 0;
        while (e < t.next && t.ext[e] != n->in[i]) e++;
        if (e == t.next) {
            if (t.next == TN__FUSE_EXT) return false;
            t.ext[t.next++] = n->in[i];
        }
        t.src[t.n][i] = (signed char)e;
    }
    t.node[t.n++] = k;
    *G = t;
    return true;
}
/* The groups of g (after uses / last_use): chains followed in node order; then an outside
   operand is kept to the group's last node at least (the group runs there: a value a member
   reads and a node of another group reads later, but before the last, lives on). */
static int tn__graph_fuse_plan(tn_graph *g) {
    int *lastg = (int *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(int));
    g->fgrp = (int *)TN_MALLOC((size_t)(g->nnodes + 1) * sizeof(int));
    g->fg = (tn__fgroup *)TN_MALLOC((size_t)(g->nnodes + 1) * sizeof(tn__fgroup));
    if (!lastg || !g->fgrp || !g->fg) { TN_FREE(lastg); return TN__FAIL_INT("tn_graph_run: out of memory"); }
    for (int v = 0; v < g->nvals; v++) lastg[v] = -1;
    int ng = 0;
    for (int k = 0; k < g->nnodes; k++) {
        const tn__gnode *n = &g->nodes[k];
        g->fgrp[k] = -1;
        if (!tn__fuse_candidate(g, n)) continue;
        int gid = -1, pred = -1;
        for (int i = 0; i < n->nin && gid < 0; i++) {
            const int w = n->in[i];
            if (w >= 0 && lastg[w] >= 0 && g->uses[w] == 1 && g->last_use[w] == k &&
                tn__fuse_same_shape(&g->vals[w], &g->vals[n->out])) { gid = lastg[w]; pred = i; }
        }
        if (gid >= 0 && tn__fuse_add(&g->fg[gid], n, k, pred)) lastg[n->in[pred]] = -1;
        else {
            gid = ng++;
            g->fg[gid].n = g->fg[gid].next = 0;
            if (!tn__fuse_add(&g->fg[gid], n, k, -1)) { ng--; continue; }
        }
        lastg[n->out] = gid;
    }
    TN_FREE(lastg);
    int m = 0;
    for (int q = 0; q < ng; q++) {   /* single members are no groups */
        const tn__fgroup *G = &g->fg[q];
        if (G->n < 2) continue;
        const int last = G->node[G->n - 1];
        for (int j = 0; j < G->n; j++) g->fgrp[G->node[j]] = m;
        for (int e = 0; e < G->next; e++)   /* read at the group's last node, also where a node between last reads it */
            if (g->last_use[G->ext[e]] < last) g->last_use[G->ext[e]] = last;
        g->fg[m++] = *G;
    }
    g->nfg = m;
    return 0;
}
typedef struct tn__fuse_ctx {
    const tn__fused_prog *P;
    tn__kctx kc[TN__FUSE_MAX];
    bool f64;
} tn__fuse_ctx;
static void tn__fuse_loop(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__fuse_ctx *c = (tn__fuse_ctx *)vc;
    const tn__fused_prog *P = c->P;
    double buf[2][TN__FUSE_TILE];   /* doubles: room for a tile of either dtype */
    const int64_t es = c->f64 ? 8 : 4;
    for (int64_t i0 = 0; i0 < n; i0 += TN__FUSE_TILE) {
        const int64_t m = n - i0 < TN__FUSE_TILE ? n - i0 : TN__FUSE_TILE;
        for (int j = 0; j < P->n; j++) {
            const tn__fused_op *M = &P->m[j];
            char *pp[3];
            int64_t ss[3];
            if (j == P->n - 1) { pp[0] = p[0] + i0 * s[0]; ss[0] = s[0]; }
            else { pp[0] = (char *)buf[j & 1]; ss[0] = es; }
            for (int i = 0; i < (M->binary ? 2 : 1); i++) {
                const int e = M->src[i];
                if (e < 0) { pp[1 + i] = (char *)buf[(j - 1) & 1]; ss[1 + i] = es; }
                else { pp[1 + i] = p[1 + e] + i0 * s[1 + e]; ss[1 + i] = s[1 + e]; }
            }
            if (!M->binary) (c->f64 ? tn__unary_f64 : tn__unary_f32)(pp, ss, m, &c->kc[j]);
            else (c->f64 ? tn__binary_f64 : tn__binary_f32)(pp, ss, m, &c->kc[j]);
        }
    }
}
/* out = program P over the next outside operands ext (out's dtype, broadcast to out) in one
   pass of the CPU's kernels; 0 or -1. The CPU's fused replay, and the checking stand-in's
   fused_elementwise (its "device" memory is the host's). */
static int tn__fused_cpu(tn_tensor *out, tn_tensor *const *ext, int next, const tn__fused_prog *P) {
    tn__fuse_ctx c;
    memset(&c, 0, sizeof c);
    c.P = P;
    c.f64 = out->dtype == TN_F64;
    for (int j = 0; j < P->n; j++) {
        c.kc[j].op = P->m[j].op;
        if (!P->m[j].binary) memcpy(c.kc[j].params, P->m[j].params, sizeof c.kc[j].params);
        else c.kc[j].alpha = P->m[j].params[0];
    }
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    for (int e = 0; e < next; e++) tn__iter_add(&it, ext[e]);
    tn__iter_run_par(&it, tn__fuse_loop, &c, -1);
    for (int j = 0; j < P->n; j++)
        if (c.kc[j].failed) return TN__FAIL_INT("tn_graph_run: a fused elementwise kernel failed");
    return 0;
}
/* the program of group G (its members' ops, operands and parameters as the nodes hold them) */
static void tn__fused_prog_of(const tn_graph *g, const tn__fgroup *G, tn__fused_prog *P) {
    memset(P, 0, sizeof *P);
    P->n = G->n;
    for (int j = 0; j < G->n; j++) {
        const tn__gnode *n = &g->nodes[G->node[j]];
        tn__fused_op *M = &P->m[j];
        M->binary = n->op != J_UNARY;
        M->op = n->sub;
        M->src[0] = G->src[j][0];
        M->src[1] = M->binary ? G->src[j][1] : 0;
        if (n->op == J_UNARY) memcpy(M->params, n->d, sizeof M->params);
        else M->params[0] = n->d[0];
    }
}
static int64_t tn__fused_counts[2];   /* chains a device's fused_elementwise ran, and declined (tn_cuda_stats) */
/* Group G in one pass: on the CPU by tn__fused_cpu, on a device by its backend's
   fused_elementwise (one kernel). NULL with *declined when its operands are not as planned
   or the device's backend declines (the caller runs the members one by one), NULL with an
   error when a kernel fails. */
static tn_tensor *tn__graph_fused_run(const tn_graph *g, const tn__fgroup *G, tn_tensor **v, bool *declined) {
    const tn__gval *o = &g->vals[g->nodes[G->node[G->n - 1]].out];
    tn_tensor *ex[TN__FUSE_EXT];
    int64_t shape[TN_MAX_DIMS];
    int nd = 0;
    *declined = true;
    tn_device dev = TN_CPU;   /* the operands' device: a 0-d CPU one may join a device's (a host scalar, as the ops take it) */
    for (int e = 0; e < G->next; e++)
        if (v[G->ext[e]] && v[G->ext[e]]->device != TN_CPU) dev = v[G->ext[e]]->device;
    const tn_backend *be = dev == TN_CPU ? NULL : tn__backend(dev);
    if (dev != TN_CPU && (!be || !be->fused_elementwise)) return NULL;
    for (int e = 0; e < G->next; e++) {
        tn_tensor *t = v[G->ext[e]];
        if (!t || (t->device != dev && !(t->device == TN_CPU && t->ndim == 0)) || (t->dtype != o->dtype && t->ndim != 0)) return NULL;
        ex[e] = t;
        int64_t b[TN_MAX_DIMS];
        const int r = e ? tn__broadcast(shape, nd, t->shape, t->ndim, b) : t->ndim;
        if (r < 0) return NULL;
        memcpy(shape, e ? b : t->shape, (size_t)r * sizeof(int64_t));
        nd = r;
    }
    if (nd != o->ndim) return NULL;
    for (int d = 1; d < nd; d++) if (shape[d] != o->shape[d]) return NULL;   /* dim 0: the batch may differ */
    tn__fused_prog P;
    tn__fused_prog_of(g, G, &P);
    tn_scope_begin();
    for (int e = 0; e < G->next; e++)   /* a 0-d operand of another dtype: as the op converts it */
        if (ex[e]->dtype != o->dtype && !(ex[e] = tn_to_dtype(ex[e], o->dtype))) { *declined = false; tn_scope_end(); return NULL; }
    tn_tensor *out = tn__new(o->dtype, dev, shape, nd);
    int rc = out ? 0 : -1;
    if (out && dev == TN_CPU) rc = tn__fused_cpu(out, ex, G->next, &P);
    else if (out) {
        rc = be->fused_elementwise(out, ex, G->next, &P);
        TN__ATOMIC_ADD(&tn__fused_counts[rc == 0 ? 0 : 1], rc >= 0 ? 1 : 0);
    }
    if (rc != 0) { tn_release(out); out = NULL; }
    *declined = rc > 0;
    tn_scope_end();
    return out;
}
/* Group G's members one by one (grad enabled, or operands not as planned): the last
   member's result (a reference of the caller's), or NULL. */
static tn_tensor *tn__graph_fused_each(const tn_graph *g, const tn__fgroup *G, tn_tensor **v, int64_t batch) {
    tn_tensor *r = NULL;
    for (int j = 0; j < G->n; j++) {
        const tn__gnode *n = &g->nodes[G->node[j]];
        tn_scope_begin();
        tn_tensor *x = tn_retain(tn__graph_node_run(g, n, v, batch));
        tn_scope_end();
        if (j > 0) { tn_release(v[g->nodes[G->node[j - 1]].out]); v[g->nodes[G->node[j - 1]].out] = NULL; }
        if (!x) return NULL;
        if (j < G->n - 1) v[n->out] = x;
        else r = x;
    }
    return r;
}
/* ---- activations in the GEMM's epilogue ----
   A linear layer's addmm or a conv2d whose result goes (through reshapes, each read once) to
   a relu, gelu or silu that is its only reader, and no fused chain's member: under no_grad
   on the CPU the product applies the activation to each tile of its result while the tile
   is in cache (src/ops/gemm.c's epilogue, the activations' own scalar formulas: the same
   bits), and the activation node only passes the result on.
   A conv2d so planned (or with no activation) whose result goes, read once, to a max_pool2d
   of 2x2 windows, stride 2, no padding or dilation, floor mode: the conv pools each window
   while its values are in cache where its kernel can (the small-K and Winograd paths,
   src/nn/winograd.c tn__conv_forward_pool_cpu: max_pool2d's comparisons, the same bits)
   and the pool node passes the result on; the full result is never written, nor read by a
   ReLU pass and the pool (at batch 64 the CNN's conv 1 -> 32 at 28x28 writes 6.4 MB). */
#define TN__GEPI_POOL 0x100   /* in epi[k]: the 2x2 max pool too */
static int tn__graph_epi_act(int sub) {
    return sub == RELU ? TN__EPI_RELU : sub == GELU ? TN__EPI_GELU : sub == GELU_TANH ? TN__EPI_GELU_TANH : sub == SILU ? TN__EPI_SILU : TN__EPI_NONE;
}
static void tn__graph_epi_plan(tn_graph *g) {
    for (int k = 0; k < g->nnodes; k++) {
        const tn__gnode *n = &g->nodes[k];
        g->epi[k] = TN__EPI_NONE;
        if ((n->op != J_ADDMM && n->op != J_CONV2D) || (g->vals[n->out].dtype != TN_F32 && g->vals[n->out].dtype != TN_F64)) continue;
        for (int v = n->out; g->uses[v] == 1 && !tn__graph_is_output(g, v) && g->last_use[v] > k && g->last_use[v] < g->nnodes;) {
            const tn__gnode *m = &g->nodes[g->last_use[v]];
            if (m->nin < 1 || m->in[0] != v) break;
            if (m->op == J_RESHAPE) { v = m->out; continue; }
            if (m->op == J_UNARY && g->fgrp[g->last_use[v]] < 0) g->epi[k] = tn__graph_epi_act(m->sub);
            break;
        }
        if (n->op != J_CONV2D || g->vals[n->out].ndim != 4 || (g->epi[k] != TN__EPI_NONE && g->epi[k] != TN__EPI_RELU)) continue;
        int v = n->out;   /* the relu's result, or the conv's */
        if (g->epi[k] == TN__EPI_RELU) {
            const tn__gnode *m = &g->nodes[g->last_use[v]];
            if (m->op != J_UNARY || m->in[0] != v) continue;   /* (through a reshape) */
            v = m->out;
        }
        if (g->uses[v] != 1 || tn__graph_is_output(g, v) || g->last_use[v] <= k || g->last_use[v] >= g->nnodes) continue;
        const tn__gnode *p = &g->nodes[g->last_use[v]];
        static const int64_t k22[9] = {2, 2, 2, 2, 0, 0, 1, 1, 0};   /* kernel, stride, padding, dilation (h, w), ceil_mode */
        if (p->op == J_MAX_POOL2D && p->nin >= 1 && p->in[0] == v && p->ni >= 9 && !memcmp(p->i, k22, sizeof k22) && g->vals[p->out].ndim == 4)
            g->epi[k] |= TN__GEPI_POOL;
    }
}
/* Node n (an addmm or a conv2d of tn__graph_epi_plan) with activation act in its GEMM's
   epilogue (and a conv's pool, act | TN__GEPI_POOL); *applied false when it ran without
   (then the activation node runs it), *pooled false when it did not pool. */
static tn_tensor *tn__graph_node_run_act(const tn_graph *g, const tn__gnode *n, tn_tensor **v, int64_t batch, int act, bool *applied, bool *pooled) {
    *applied = *pooled = false;
    if (n->op == J_ADDMM) {
        tn_tensor *a[3];
        for (int k = 0; k < 3; k++) a[k] = k < n->nin && n->in[k] >= 0 ? v[n->in[k]] : NULL;
        return tn__addmm_act(a[0], a[1], a[2], n->d[0], n->d[1], act & ~TN__GEPI_POOL, applied);
    }
    tn__conv_act_req = act & ~TN__GEPI_POOL;
    tn__conv_pool_req = (act & TN__GEPI_POOL) != 0;
    tn__conv_act_done = tn__conv_pool_done = 0;
    tn_tensor *r = tn__graph_node_run(g, n, v, batch);
    *applied = r && tn__conv_act_done;
    *pooled = r && tn__conv_pool_done;
    tn__conv_act_req = tn__conv_act_done = tn__conv_pool_req = tn__conv_pool_done = 0;
    return r;
}
/* ---- the residual add and layer norm in one pass ----
   A layer_norm (with weight and bias, or neither) whose input is an add (alpha 1) of two
   float tensors of the output's shape, read by nothing else and no fused chain's member:
   under no_grad on the CPU the norm computes each row of the sum and normalises it while it
   is in L1 (src/nn/norm.c tn__layer_norm_add: the add's and the norm's bits), and the add
   node does not run; where the operands at run time are not contiguous the add runs first. */
static void tn__graph_lnadd_plan(tn_graph *g) {
    for (int k = 0; k < g->nnodes; k++) g->lnadd[k] = -1;
    for (int k = 0; k < g->nnodes; k++) {
        const tn__gnode *n = &g->nodes[k];
        if (n->op != J_LAYER_NORM || n->nin != 3 || n->in[0] < 0 || (n->in[1] < 0) != (n->in[2] < 0)) continue;
        const int u = n->in[0];
        int p = k - 1;   /* the producer of u */
        while (p >= 0 && g->nodes[p].out != u) p--;
        if (p < 0 || g->uses[u] != 1 || g->last_use[u] != k || tn__graph_is_output(g, u) || g->fgrp[p] >= 0 || g->lnadd[p] != -1) continue;
        const tn__gnode *a = &g->nodes[p];
        if (a->op != J_BINARY || a->sub != ADD || a->nin != 2 || a->d[0] != 1 || a->in[0] < 0 || a->in[1] < 0) continue;
        const tn__gval *o = &g->vals[u];
        if ((o->dtype != TN_F32 && o->dtype != TN_F64) || !tn__fuse_same_shape(&g->vals[a->in[0]], o) || !tn__fuse_same_shape(&g->vals[a->in[1]], o)) continue;
        g->lnadd[k] = p;
        g->lnadd[p] = -2;
        for (int i = 0; i < 2; i++) if (g->last_use[a->in[i]] == p) g->last_use[a->in[i]] = k;   /* read at the norm now */
    }
}
/* Node n's weight packed (kind 1: an addmm's, 2: a conv2d's), or NULL. */
static const tn__gwpack *tn__graph_wpack(tn_graph *g, const tn__gnode *n, tn_tensor *const *v) {
    const int kind = n->op == J_ADDMM ? 1 : n->op == J_CONV2D ? 2 : 0, w = kind == 1 && n->nin == 3 ? n->in[2] : kind == 2 && n->nin >= 2 ? n->in[1] : -1;
    tn_tensor *t = w >= 0 ? v[w] : NULL, *x = n->in[kind == 1 ? 1 : 0] >= 0 ? v[n->in[kind == 1 ? 1 : 0]] : NULL;
    if (!t || !x || g->vals[w].kind != TN__GV_CONST) return NULL;
    if (kind == 1 && (x->ndim != 2 || x->shape[0] <= TN__GEMM_ROWS_MAX || t->ndim != 2 || t->shape[1] < 16)) return NULL;
    if (kind == 2 && (n->i[0] != 1 || n->i[1] != 1 || n->i[4] != 1 || n->i[5] != 1 || n->i[6] != 1)) return NULL;   /* Winograd's: stride 1, no dilation, no groups */
    tn__gwpack *p = &g->wp[w];
    if (!p->t || p->kind != kind || p->ver != tn_version(t)) {
        tn_release(p->t);
        p->t = kind == 1 ? tn__gemm_prepack(t, &p->gemm) : tn__wino_prepack(t, &p->wino);
        p->ver = tn_version(t);
        p->kind = kind;
    }
    return p->t ? p : NULL;
}
static int tn__graph_plan(tn_graph *g) {
    if (g->uses) return 0;
    g->uses = (int *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(int));
    g->last_use = (int *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(int));
    if (!g->uses || !g->last_use) { tn__graph_unplan(g); return TN__FAIL_INT("tn_graph_run: out of memory"); }
    for (int v = 0; v < g->nvals; v++) { g->uses[v] = 0; g->last_use[v] = -1; }
    for (int k = 0; k < g->nnodes; k++)
        for (int i = 0; i < g->nodes[k].nin; i++) if (g->nodes[k].in[i] >= 0) { g->uses[g->nodes[k].in[i]]++; g->last_use[g->nodes[k].in[i]] = k; }
    for (int i = 0; i < g->noutputs; i++) g->last_use[g->outputs[i]] = g->nnodes;   /* kept to the end */
    if (tn__graph_fuse_plan(g)) { tn__graph_unplan(g); return -1; }
    if (!(g->epi = (int *)TN_MALLOC((size_t)(g->nnodes + 1) * sizeof(int)))) { tn__graph_unplan(g); return TN__FAIL_INT("tn_graph_run: out of memory"); }
    tn__graph_epi_plan(g);
    g->lnadd = (int *)TN_MALLOC((size_t)(g->nnodes + 1) * sizeof(int));
    g->wp = (tn__gwpack *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(tn__gwpack));
    if (!g->lnadd || !g->wp) { tn__graph_unplan(g); return TN__FAIL_INT("tn_graph_run: out of memory"); }
    memset(g->wp, 0, (size_t)(g->nvals + 1) * sizeof(tn__gwpack));
    tn__graph_lnadd_plan(g);
    return 0;
}
TNDEF int tn_graph_fused_nodes(tn_graph *g) {
    if (!g) return TN__FAIL_INT("tn_graph_fused_nodes: the graph is NULL");
    if (tn__graph_plan(g)) return -1;
    int c = 0;
    for (int q = 0; q < g->nfg; q++) c += g->fg[q].n;
    for (int k = 0; k < g->nnodes; k++)   /* a product and its activation (and a conv's pool); an add and its norm */
        c += (g->epi[k] & ~TN__GEPI_POOL ? 2 : g->epi[k] ? 1 : 0) + (g->epi[k] & TN__GEPI_POOL ? 1 : 0) + (g->lnadd[k] >= 0 ? 2 : 0);
    return c;
}

/* Ops whose result is new memory (never a view of an input): an in-place activation on it
   changes nothing else. */
static bool tn__graph_fresh(tn__jit_op op) {
    return op == J_UNARY || op == J_BINARY || op == J_TERNARY || op == J_ADDMM || op == J_BADDBMM || op == J_MM || op == J_BMM || op == J_CONV2D ||
           op == J_BATCH_NORM || op == J_LAYER_NORM || op == J_SOFTMAX || op == J_LOG_SOFTMAX || op == J_CAT || op == J_CLONE || op == J_MAX_POOL2D ||
           op == J_MATMUL || op == J_AVG_POOL2D || op == J_LSTM || op == J_RNN_SEQ;
}
static bool tn__graph_inplace_op(int op) {
    return op == RELU || op == SIGMOID || op == TANH || op == GELU || op == GELU_TANH || op == SILU || op == LEAKY_RELU || op == ELU || op == HARDTANH ||
           op == HARDSWISH || op == HARDSIGMOID || op == MISH || op == SOFTPLUS || op == NEG || op == EXP;
}
/* ---- CUDA-graph replay: a steady plan on a device with graph entries (tn_backend.graph_*) ----
   The run after the plan's first served one is captured: the inputs are copied into buffers
   of the capture's own, the nodes run with the backend's graph_begin in force (nothing runs:
   the calls are recorded with the arena's addresses), graph_end instantiates, and one launch
   gives this run's outputs. Later runs copy their inputs into those buffers and launch: no
   node runs on the host, nothing is allocated, nothing waits. As PyTorch's CUDA graphs, the
   inputs and outputs are static: the outputs handed back are the capture's (the arena's
   output slots), so a run whose caller still holds the previous run's output runs
   uncaptured (a held output is never overwritten), and a capture waits for a run whose
   outputs are all released. A capture that fails (a storage of the
   device allocated outside the plan, a synchronisation, a transfer, a call the backend
   cannot capture: each makes the capture run fail or be marked) is dropped without an error
   and that run is run again uncaptured, as are the plan's later runs; a new plan (another
   batch) captures anew. TN_CUDA_GRAPHS=0 turns capturing off. */
static int64_t tn__gcap_counts[3];   /* captures, launches, failed captures (tn_cuda_stats) */
struct tn__gcap {
    const tn_backend *be;
    void *graph;                     /* the backend's captured graph, once ended */
    int nin, nout;
    tn_tensor **in;                  /* the buffers the capture reads the inputs from */
    tn_tensor **out;                 /* the outputs it writes (arena slots), in the same block as in */
};
static void tn__gcap_free(tn__gcap *c) {
    if (!c) return;
    if (c->graph) c->be->graph_free(c->graph);
    for (int i = 0; i < c->nin; i++) tn_release(c->in[i]);
    for (int i = 0; i < c->nout; i++) tn_release(c->out[i]);
    TN_FREE(c->in);
    TN_FREE(c);
}
static bool tn__gcap_enabled(const tn_backend *be) {
    if (!be || !be->graph_begin || !be->graph_end || !be->graph_launch || !be->graph_free) return false;
    const char *e = getenv("TN_CUDA_GRAPHS");
    return !(e && !strcmp(e, "0"));
}
/* A captured run: 1 (outputs set), 0 (the caller holds the last outputs: run uncaptured), -1. */
static int tn__gcap_launch(tn__gcap *c, tn_tensor *const *inputs, tn_tensor **outputs) {
    for (int i = 0; i < c->nout; i++)
        if (TN__ATOMIC_LOAD(&c->out[i]->refcount) != 1 || TN__ATOMIC_LOAD(&c->out[i]->storage->refcount) != 1) return 0;
    for (int i = 0; i < c->nin; i++)
        if (tn_numel(c->in[i]) && c->be->copy(c->in[i], inputs[i])) return -1;
    if (c->be->graph_launch(c->graph)) return -1;
    for (int i = 0; i < c->nout; i++) outputs[i] = tn_retain(c->out[i]);
    TN__ATOMIC_ADD(&tn__gcap_counts[1], 1);
    return 1;
}
/* Before the capture run: the input buffers (filled now), then capturing. -1: not started. */
static int tn__gcap_begin(tn__mhook *h, const tn_backend *be, tn_tensor *const *inputs, int n, int nout) {
    tn__gcap *c = (tn__gcap *)TN_MALLOC(sizeof *c);
    tn_tensor **arr = (tn_tensor **)TN_MALLOC((size_t)(n + nout + 1) * sizeof *arr);
    if (!c || !arr) { TN_FREE(c); TN_FREE(arr); return -1; }
    memset(c, 0, sizeof *c);
    c->be = be;
    c->in = arr;
    c->out = arr + n;
    for (int i = 0; i < n; i++) {
        tn_tensor *x = inputs[i], *b = tn__new(x->dtype, h->device, x->shape, x->ndim);
        if (!b) { tn__gcap_free(c); return -1; }
        c->in[c->nin++] = b;
        if (tn_numel(b) && be->copy(b, x)) { tn__gcap_free(c); return -1; }
    }
    if (be->graph_begin()) { tn__gcap_free(c); return -1; }
    h->gcap = c;
    h->capturing = true;
    h->capfail = false;
    return 0;
}
/* After the capture run (its outputs retained, its values released): 0 with the outputs
   from one launch, or 1 when the capture failed (outputs released: run it again). */
static int tn__gcap_end(tn__mhook *h, int rc, tn_tensor **outputs, int nout) {
    tn__gcap *c = h->gcap;
    void *graph = NULL;
    h->capturing = false;
    const int ended = c->be->graph_end(&graph);
    bool ok = rc == 0 && ended == 0 && graph && !h->capfail && !h->diverged;
    for (int i = 0; i < nout && ok; i++)   /* each output an arena slot of its own (not a view of an input or a constant) */
        ok = outputs[i] && outputs[i]->storage->deleter == tn__aslot_free && TN__ATOMIC_LOAD(&outputs[i]->refcount) == 1 &&
             TN__ATOMIC_LOAD(&outputs[i]->storage->refcount) == 1;
    if (ok) {
        c->graph = graph;
        for (int i = 0; i < nout; i++) { c->out[i] = outputs[i]; outputs[i] = NULL; }
        c->nout = nout;
        TN__ATOMIC_ADD(&tn__gcap_counts[0], 1);
        if (c->be->graph_launch(graph)) ok = false;   /* the capture ran nothing: this run's results */
        else {
            for (int i = 0; i < nout; i++) outputs[i] = tn_retain(c->out[i]);
            TN__ATOMIC_ADD(&tn__gcap_counts[1], 1);
            return 0;
        }
    } else if (ended == 0 && graph) c->be->graph_free(graph);
    for (int i = 0; i < nout; i++) { tn_release(outputs[i]); outputs[i] = NULL; }
    tn__gcap_free(c);
    h->gcap = NULL;
    h->capfailed = true;
    TN__ATOMIC_ADD(&tn__gcap_counts[2], 1);
    return 1;
}
TNDEF int tn_graph_run(tn_graph *g, tn_tensor *const *inputs, int n, tn_tensor **outputs, int nout) {
    if (!g) return TN__FAIL_INT("tn_graph_run: the graph is NULL");
    if (n != g->ninputs || !inputs) return TN__FAIL_INT("tn_graph_run: the graph takes %d inputs, got %d", g->ninputs, n);
    if (nout < g->noutputs || !outputs) return TN__FAIL_INT("tn_graph_run: the graph has %d outputs, room for %d given", g->noutputs, nout);
    int64_t batch = 0;
    for (int i = 0; i < n; i++) {
        const tn__gval *v = &g->vals[g->inputs[i]];
        tn_tensor *x = inputs[i];
        if (!x) return TN__FAIL_INT("tn_graph_run: input %d is NULL", i);
        bool ok = x->dtype == v->dtype && x->ndim == v->ndim;
        for (int d = 0; ok && d < v->ndim; d++) ok = x->shape[d] == v->shape[d] || (d == 0 && i == g->dyn_input);
        if (!ok)
            return TN__FAIL_INT("tn_graph_run: input %d is %s %s, but the graph was traced with %s %s%s", i, tn_dtype_name(x->dtype), TN__SHAPE(x),
                                tn_dtype_name(v->dtype), tn__shape_str(v->shape, v->ndim), i == g->dyn_input ? " (dim 0 dynamic)" : "");
        if (i == g->dyn_input) batch = x->shape[0];
    }
    if (tn__graph_plan(g)) return -1;
    tn_tensor **v = (tn_tensor **)TN_MALLOC((size_t)(g->nvals > 0 ? g->nvals : 1) * (sizeof *v + 1));
    if (!v) return TN__FAIL_INT("tn_graph_run: out of memory");
    char *actdone = (char *)(v + (g->nvals > 0 ? g->nvals : 1));   /* per value: 1 its activation already applied, 2 its 2x2 max pool (tn__graph_epi_plan) */
    memset(actdone, 0, (size_t)(g->nvals > 0 ? g->nvals : 1));
    /* the static memory plan: no_grad on the CPU (with grad, autograd keeps intermediates
       past the run); the first run warms the ops' caches, the second records, the others
       serve. One run at a time uses it; a batch of another size plans anew. */
    const bool no_grad = !tn_is_grad_enabled();
    bool cpu = no_grad, planned = no_grad && n > 0;   /* planned: every input on one device (the plan's) */
    for (int i = 0; i < n && cpu; i++) cpu = inputs[i]->device == TN_CPU;
    for (int i = 0; i < n && planned; i++) planned = inputs[i]->device == inputs[0]->device;
    const tn_device dev = planned ? inputs[0]->device : TN_CPU;
    tn__mhook *h = NULL;
    const bool mine = planned && TN__ATOMIC_ADD(&g->mbusy, 1) == 1;
    if (mine && g->mfails < 3) {
        if (g->mplan && (g->mplan->batch != batch || g->mplan->device != dev)) { tn__mhook_free(g->mplan); g->mplan = NULL; g->mruns = 0; }
        if (g->mplan) h = g->mplan;
        else if (++g->mruns >= 2) h = g->mplan = tn__mhook_new(g->nnodes, g->nvals, batch, dev);
        if (h && h->mode == TN__MH_SERVE && tn__mhook_ready(h)) h = NULL;
    }
    /* a steady plan on a device with CUDA graphs: launched, or captured now */
    tn_tensor *const *ins = inputs;
    char saved_err[sizeof tn__errbuf];   /* the error state before a capture, restored when it fails */
    bool capturing = false;
    const tn_backend *gbe = h && dev != TN_CPU && h->mode == TN__MH_SERVE && !h->capfailed ? tn__backend(dev) : NULL;
    if (gbe && !tn__gcap_enabled(gbe) && h->gcap) { tn__gcap_free(h->gcap); h->gcap = NULL; }   /* switched off: its output slots free again */
    if (gbe && tn__gcap_enabled(gbe)) {
        const int r = h->gcap ? tn__gcap_launch(h->gcap, inputs, outputs) : 0;
        if (r != 0) {
            TN__ATOMIC_ADD(&g->mbusy, -1);
            TN_FREE(v);
            for (int i = 0; i < g->noutputs && r > 0; i++) tn__own(outputs[i]);
            return r < 0 ? -1 : g->noutputs;
        }
        if (!h->gcap && h->nserved >= 1 && tn__mhook_outputs_free(h)) {   /* (an output the caller holds: captured later) */
            memcpy(saved_err, tn__errbuf, sizeof saved_err);
            tn__quiet++;   /* a capture that cannot start or fails is no error of the run's (run again uncaptured) */
            if (tn__gcap_begin(h, gbe, inputs, n, g->noutputs) == 0) { capturing = true; ins = h->gcap->in; }
            else { h->capfailed = true; TN__ATOMIC_ADD(&tn__gcap_counts[2], 1); tn__quiet--; memcpy(tn__errbuf, saved_err, sizeof saved_err); }
        }
    }
    for (int i = 0; i < g->nvals; i++) v[i] = g->vals[i].kind == TN__GV_CONST ? g->vals[i].t : NULL;
    for (int i = 0; i < n; i++) v[g->inputs[i]] = ins[i];
    int rc = 0;
    for (int k = 0; k < g->nnodes && rc == 0; k++) {   /* node results: references of our own, released after their last use */
        const tn__gnode *nd = &g->nodes[k];
        tn_tensor *r = NULL;
        const tn__fgroup *G = g->fgrp[k] >= 0 ? &g->fg[g->fgrp[k]] : NULL;
        if (G && k != G->node[G->n - 1]) continue;   /* a fused chain's member: runs with its last */
        if (no_grad && cpu && g->lnadd[k] == -2) continue;   /* an add that runs with its layer norm */
        if (no_grad && cpu && g->lnadd[k] >= 0) {
            const tn__gnode *ad = &g->nodes[g->lnadd[k]];
            if (h) tn__mhook_node(h, k);
            tn__mhook_on = h;
            tn_scope_begin();
            bool declined = true;
            tn_tensor *lw = nd->in[1] >= 0 ? v[nd->in[1]] : NULL, *lb = nd->in[2] >= 0 ? v[nd->in[2]] : NULL;
            r = tn_retain(tn__layer_norm_add(v[ad->in[0]], v[ad->in[1]], (int)nd->i[0], lw, lb, nd->d[0], &declined));
            if (!r && declined) {   /* the add, then the norm */
                tn_tensor *s = tn_retain(tn__graph_node_run(g, ad, v, batch));
                v[ad->out] = s;
                r = s ? tn_retain(tn__graph_node_run(g, nd, v, batch)) : NULL;
                tn_release(s);
                v[ad->out] = NULL;
            }
            tn_scope_end();
            tn__mhook_on = NULL;
            if (!r) {
                rc = TN__FAIL_INT("tn_graph_run: node %d (aten::layer_norm, with the add of node %d) failed: %s", k, g->lnadd[k], tn_last_error());
                break;
            }
            v[nd->out] = r;
            if (h) tn__graph_mplan_result(g, h, k, v);
            for (int q = 0; q < 2; q++) {
                const tn__gnode *m = q ? nd : ad;
                for (int i = 0; i < m->nin; i++) {
                    const int w = m->in[i];
                    if (w >= 0 && g->vals[w].kind == TN__GV_NODE && g->last_use[w] == k && v[w]) { tn_release(v[w]); v[w] = NULL; }
                }
            }
            if (h) tn__graph_mplan_after(g, h, k, v);
            continue;
        }
        if (G) {
            if (h) tn__mhook_node(h, k);
            tn__mhook_on = h;
            bool declined = true;
            r = no_grad ? tn__graph_fused_run(g, G, v, &declined) : NULL;
            if (!r && declined) r = tn__graph_fused_each(g, G, v, batch);
            tn__mhook_on = NULL;
            if (!r) {
                char name[64];
                tn__graph_op_name(nd, name, sizeof name);
                rc = TN__FAIL_INT("tn_graph_run: node %d (%s, the last of %d fused) failed: %s", k, name, G->n, tn_last_error());
                break;
            }
            v[nd->out] = r;
            if (h) tn__graph_mplan_result(g, h, k, v);
            for (int e = 0; e < G->next; e++) {
                const int w = G->ext[e];
                if (g->vals[w].kind == TN__GV_NODE && g->last_use[w] == k && v[w]) { tn_release(v[w]); v[w] = NULL; }
            }
            if (h) tn__graph_mplan_after(g, h, k, v);
            continue;
        }
        const int u = nd->nin > 0 ? nd->in[0] : -1;
        if (no_grad && u >= 0 && v[u] && ((nd->op == J_UNARY && (actdone[u] & 1)) || (nd->op == J_MAX_POOL2D && (actdone[u] & 2)))) {
            /* applied by the product's epilogue (a pool by the conv): the reference moves */
            if (h) tn__mhook_node(h, k);
            v[nd->out] = v[u];
            actdone[nd->out] = (char)(nd->op == J_UNARY ? actdone[u] & 2 : 0);
            if (h) tn__graph_mplan_result(g, h, k, v);
            v[u] = NULL;
            if (h) tn__graph_mplan_after(g, h, k, v);
            continue;
        }
        if (no_grad && nd->op == J_UNARY && tn__graph_inplace_op(nd->sub) && u >= 0 && g->vals[u].kind == TN__GV_NODE && g->uses[u] == 1 &&
            g->last_use[u] == k && v[u] && tn_dtype_is_floating(v[u]->dtype)) {
            int p = k - 1;   /* the producer of u */
            while (p >= 0 && g->nodes[p].out != u) p--;
            if (p >= 0 && tn__graph_fresh(g->nodes[p].op)) {
                if (h) tn__mhook_node(h, k);
                tn__mhook_on = h;
                tn_scope_begin();
                r = tn__unary_inplace((tn_unary_op)nd->sub, v[u], nd->d);
                tn_scope_end();
                tn__mhook_on = NULL;
                if (r) {   /* the reference moves with the tensor */
                    v[nd->out] = v[u];
                    if (h) tn__graph_mplan_result(g, h, k, v);
                    v[u] = NULL;
                    if (h) tn__graph_mplan_after(g, h, k, v);
                    continue;
                }
            }
        }
        if (h) tn__mhook_node(h, k);
        tn__mhook_on = h;
        tn_scope_begin();
        bool applied = false, pooled = false;
        if (mine && cpu && (nd->op == J_ADDMM || nd->op == J_CONV2D)) {   /* the plan's own run only (tn__graph_wpack replaces what it packed) */
            tn__mhook_on = NULL;   /* packed once, outside the arena */
            const tn__gwpack *pk = tn__graph_wpack(g, nd, v);
            if (pk && pk->kind == 1) tn__gemm_bpre_on = pk->gemm;
            if (pk && pk->kind == 2) tn__wino_pre_on = pk->wino;
            tn__mhook_on = h;
        }
        r = tn_retain(no_grad && cpu && g->epi[k] ? tn__graph_node_run_act(g, nd, v, batch, g->epi[k], &applied, &pooled) : tn__graph_node_run(g, nd, v, batch));
        tn__gemm_bpre_on.P = tn__wino_pre_on.P = NULL;
        tn_scope_end();
        tn__mhook_on = NULL;
        actdone[nd->out] = (char)((applied || (nd->op == J_RESHAPE && u >= 0 && (actdone[u] & 1))) | (pooled ? 2 : 0));
        if (!r) {
            char name[64];
            tn__graph_op_name(nd, name, sizeof name);
            rc = TN__FAIL_INT("tn_graph_run: node %d (%s) failed: %s", k, name, tn_last_error());
            break;
        }
        v[nd->out] = r;
        if (h) tn__graph_mplan_result(g, h, k, v);
        for (int q = 0; q < 2; q++) {   /* a layer norm run apart from its add (not on the CPU): the add's inputs were last read here */
            const tn__gnode *m = q ? nd : g->lnadd[k] >= 0 ? &g->nodes[g->lnadd[k]] : NULL;
            for (int i = 0; m && i < m->nin; i++) {
                const int w = m->in[i];
                if (w >= 0 && g->vals[w].kind == TN__GV_NODE && g->last_use[w] == k && v[w]) { tn_release(v[w]); v[w] = NULL; }
            }
        }
        if (h) tn__graph_mplan_after(g, h, k, v);
    }
    for (int i = 0; i < g->noutputs; i++) outputs[i] = rc ? NULL : tn_retain(v[g->outputs[i]]);
    for (int i = 0; i < g->nvals; i++) if (g->vals[i].kind == TN__GV_NODE) tn_release(v[i]);
    if (h && h->mode == TN__MH_SERVE) tn__mhook_after_serve(h, g->nnodes);   /* every storage but the outputs' is free */
    bool again = false;
    if (capturing) {
        again = tn__gcap_end(h, rc, outputs, g->noutputs) != 0;
        if (again) { rc = 0; memcpy(tn__errbuf, saved_err, sizeof saved_err); }
        tn__quiet--;
    }
    if (h && h->mode == TN__MH_SERVE && !rc && !h->diverged && !again) h->nserved++;
    if (h && (rc || h->diverged || (h->mode == TN__MH_RECORD && tn__mhook_place(h)))) {   /* a plan that failed: dropped (planned anew later) */
        tn__mhook_free(h);
        g->mplan = NULL;
        g->mruns = 0;
        g->mfails++;
    }
    if (planned) TN__ATOMIC_ADD(&g->mbusy, -1);
    TN_FREE(v);
    if (again) return tn_graph_run(g, inputs, n, outputs, nout);   /* the capture failed: this run uncaptured (so are the plan's later ones) */
    for (int i = 0; i < g->noutputs && rc == 0; i++) tn__own(outputs[i]);
    return rc ? -1 : g->noutputs;
}
TNDEF tn_tensor *tn_graph_forward(tn_graph *g, tn_tensor *x) {
    tn_tensor *y = NULL;
    if (g && g->noutputs != 1) return (tn_tensor *)tn__error("tn_graph_forward: the graph has %d outputs; call tn_graph_run", g->noutputs);
    return tn_graph_run(g, &x, 1, &y, 1) < 0 ? NULL : y;
}

/* ---- printing, as torch.jit's graph ---- */
static const char *tn__graph_type_name(tn_dtype d) {
    static const char *const names[] = {"Float", "Double", "Int", "Long", "Byte", "Bool", "Half", "BFloat16"};
    return (unsigned)d < TN_NUM_DTYPES ? names[d] : "?";
}
static void tn__graph_sb_value(tn__sbuf *b, const tn_graph *g, int v) {
    if (v < 0) { tn__sb_puts(b, "None"); return; }
    const tn__gval *x = &g->vals[v];
    if (x->kind == TN__GV_CONST) tn__sb_printf(b, "%%%s", x->name);
    else if (x->kind == TN__GV_INPUT) {
        int i = 0;
        while (i < g->ninputs && g->inputs[i] != v) i++;
        tn__sb_printf(b, "%%input%d", i);
    } else tn__sb_printf(b, "%%%d", v);
}
static void tn__graph_sb_type(tn__sbuf *b, const tn__gval *x) {
    tn__sb_printf(b, "%s(", tn__graph_type_name(x->dtype));
    for (int d = 0; d < x->ndim; d++) tn__sb_printf(b, "%s%lld", d ? ", " : "", (long long)x->shape[d]);
    tn__sb_puts(b, ")");
}
static void tn__graph_sb_ints(tn__sbuf *b, const char *name, const int64_t *v, int n) {
    tn__sb_printf(b, ", %s=[", name);
    for (int k = 0; k < n; k++) tn__sb_printf(b, "%s%lld", k ? ", " : "", (long long)v[k]);
    tn__sb_puts(b, "]");
}
/* The attributes under PyTorch's argument names. */
static void tn__graph_sb_attrs(tn__sbuf *b, const tn__gnode *n) {
    switch (n->op) {
    case J_UNARY:
        if (n->sub == CLAMP || n->sub == HARDTANH) tn__sb_printf(b, ", min=%g, max=%g", n->d[0], n->d[1]);
        else if (n->sub == LEAKY_RELU) tn__sb_printf(b, ", negative_slope=%g", n->d[0]);
        else if (n->sub == ELU) tn__sb_printf(b, ", alpha=%g, scale=%g, input_scale=%g", n->d[0], n->d[1], n->d[2]);
        else if (n->sub == SOFTPLUS) tn__sb_printf(b, ", beta=%g, threshold=%g", n->d[0], n->d[1]);
        break;
    case J_BINARY: if (n->sub == ADD || n->sub == SUB) tn__sb_printf(b, ", alpha=%g", n->d[0]); break;
    case J_TERNARY: if (n->sub == ADDCMUL || n->sub == ADDCDIV) tn__sb_printf(b, ", value=%g", n->d[0]); break;
    case J_ADDMM: case J_BADDBMM: tn__sb_printf(b, ", beta=%g, alpha=%g", n->d[0], n->d[1]); break;
    case J_RESHAPE: tn__graph_sb_ints(b, "shape", n->i, n->ni); break;
    case J_EXPAND: tn__graph_sb_ints(b, "size", n->i, n->ni); break;
    case J_PERMUTE: tn__graph_sb_ints(b, "dims", n->i, n->ni); break;
    case J_SLICE: tn__sb_printf(b, ", dim=%lld, start=%lld, end=%lld, step=%lld", (long long)n->i[0], (long long)n->i[1], (long long)n->i[2], (long long)n->i[3]); break;
    case J_SELECT: tn__sb_printf(b, ", dim=%lld, index=%lld", (long long)n->i[0], (long long)n->i[1]); break;
    case J_IM2COL:
        tn__graph_sb_ints(b, "kernel_size", n->i, 2); tn__graph_sb_ints(b, "dilation", n->i + 2, 2); tn__graph_sb_ints(b, "padding", n->i + 4, 2);
        tn__graph_sb_ints(b, "stride", n->i + 6, 2);
        break;
    case J_SUM: case J_MEAN: tn__graph_sb_ints(b, "dim", n->i, n->ni - 1); tn__sb_printf(b, ", keepdim=%s", n->i[n->ni - 1] ? "True" : "False"); break;
    case J_SOFTMAX: case J_LOG_SOFTMAX: case J_CAT: case J_INDEX_SELECT: tn__sb_printf(b, ", dim=%lld", (long long)n->i[0]); break;
    case J_TO: tn__sb_printf(b, ", dtype=%s", tn_dtype_name((tn_dtype)n->i[0])); break;
    case J_CONV2D:
        tn__graph_sb_ints(b, "stride", n->i, 2); tn__graph_sb_ints(b, "padding", n->i + 2, 2); tn__graph_sb_ints(b, "dilation", n->i + 4, 2);
        tn__sb_printf(b, ", groups=%lld", (long long)n->i[6]);
        break;
    case J_MAX_POOL2D:
        tn__graph_sb_ints(b, "kernel_size", n->i, 2); tn__graph_sb_ints(b, "stride", n->i + 2, 2); tn__graph_sb_ints(b, "padding", n->i + 4, 2);
        tn__graph_sb_ints(b, "dilation", n->i + 6, 2); tn__sb_printf(b, ", ceil_mode=%s", n->i[8] ? "True" : "False");
        break;
    case J_AVG_POOL2D:
        tn__graph_sb_ints(b, "kernel_size", n->i, 2); tn__graph_sb_ints(b, "stride", n->i + 2, 2); tn__graph_sb_ints(b, "padding", n->i + 4, 2);
        tn__sb_printf(b, ", ceil_mode=%s, count_include_pad=%s", n->i[6] ? "True" : "False", n->i[7] ? "True" : "False");
        break;
    case J_BATCH_NORM: tn__sb_printf(b, ", training=False, momentum=%g, eps=%g", n->d[0], n->d[1]); break;
    case J_LAYER_NORM: tn__sb_printf(b, ", normalized_dims=%lld, eps=%g", (long long)n->i[0], n->d[0]); break;
    case J_SDPA: tn__sb_printf(b, ", scale=%g, is_causal=%d", n->d[0], n->d[1] != 0); break;
    case J_LSTM: tn__sb_printf(b, ", reverse=%s", n->i[0] ? "True" : "False"); break;
    case J_RNN_SEQ: tn__sb_printf(b, ", mode=%s, reverse=%s", n->i[0] == TN__RNN_GRU ? "GRU" : n->i[0] == TN__RNN_RELU ? "RNN_RELU" : "RNN_TANH", n->i[1] ? "True" : "False"); break;
    default: break;
    }
}
TNDEF char *tn_graph_str(const tn_graph *g) {
    if (!g) return (char *)tn__error("tn_graph_str: the graph is NULL");
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__sb_puts(&b, "graph(");
    for (int i = 0; i < g->ninputs; i++) {
        tn__sb_printf(&b, "%s%%input%d : ", i ? ",\n      " : "", i);
        tn__graph_sb_type(&b, &g->vals[g->inputs[i]]);
        if (i == g->dyn_input) tn__sb_puts(&b, " (dim 0 dynamic)");
    }
    tn__sb_puts(&b, "):\n");
    for (int v = 0; v < g->nvals; v++) {
        if (g->vals[v].kind != TN__GV_CONST) continue;
        tn__sb_printf(&b, "  %%%s : ", g->vals[v].name);
        tn__graph_sb_type(&b, &g->vals[v]);
        tn__sb_puts(&b, " = prim::Constant()\n");
    }
    for (int k = 0; k < g->nnodes; k++) {
        const tn__gnode *n = &g->nodes[k];
        char name[64];
        tn__graph_op_name(n, name, sizeof name);
        tn__sb_puts(&b, "  ");
        tn__graph_sb_value(&b, g, n->out);
        tn__sb_puts(&b, " : ");
        tn__graph_sb_type(&b, &g->vals[n->out]);
        tn__sb_printf(&b, " = %s(", name);
        for (int i = 0; i < n->nin; i++) {
            if (i) tn__sb_puts(&b, ", ");
            tn__graph_sb_value(&b, g, n->in[i]);
        }
        tn__graph_sb_attrs(&b, n);
        tn__sb_puts(&b, ")\n");
    }
    tn__sb_puts(&b, "  return (");
    for (int i = 0; i < g->noutputs; i++) { if (i) tn__sb_puts(&b, ", "); tn__graph_sb_value(&b, g, g->outputs[i]); }
    tn__sb_puts(&b, ")\n");
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_graph_str: out of memory"); }
    return b.s;
}
TNDEF int tn_graph_print(const tn_graph *g) {
    char *s = tn_graph_str(g);
    if (!s) return -1;
    fputs(s, stdout);
    TN_FREE(s);
    return 0;
}
