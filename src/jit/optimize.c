/* tn_graph_optimize: rewrites of a captured graph that keep its outputs (to float rounding)
   and make its replay cheaper:
     * constant folding: a node whose inputs are all constants runs once, its result becomes
       a constant (a transposed weight, a batch norm's scale);
     * batch norm folding: eval-mode batch_norm right after a conv2d (or linear's addmm) with
       constant weights is folded into that op's weight and bias, in float64;
     * dead code: nodes and constants no output needs are dropped.
   Batch norm's folded weights are new tensors: like torch.jit.freeze, optimise a trained
   model (later changes to those parameters no longer reach the graph); a folded view (a
   transposed weight) stays a view. At replay (tn_graph_run)
   intermediates are freed after their last use and, under no_grad, an activation whose
   input nothing else reads runs in place. */

/* Which node produces value v (-1: an input or a constant). */
static int tn__graph_producer(const tn_graph *g, int v) {
    for (int k = 0; k < g->nnodes; k++) if (g->nodes[k].out == v) return k;
    return -1;
}
static int tn__graph_count_uses(const tn_graph *g, int v) {
    int c = 0;
    for (int k = 0; k < g->nnodes; k++) for (int i = 0; i < g->nodes[k].nin; i++) c += g->nodes[k].in[i] == v;
    for (int i = 0; i < g->noutputs; i++) c += g->outputs[i] == v;
    return c;
}
static bool tn__graph_is_const(const tn_graph *g, int v) { return v < 0 || g->vals[v].kind == TN__GV_CONST; }
/* Value v becomes constant t (a new reference taken over). */
static int tn__graph_make_const(tn_graph *g, int v, tn_tensor *t, int *nfolded) {
    char name[32];
    snprintf(name, sizeof name, "folded%d", (*nfolded)++);
    char *nm = tn__strdup(name);
    if (!nm) { tn_release(t); return TN__FAIL_INT("tn_graph_optimize: out of memory"); }
    tn__gval *x = &g->vals[v];
    x->kind = TN__GV_CONST;
    x->t = t;
    x->name = nm;
    x->dtype = t->dtype;
    x->ndim = t->ndim;
    memcpy(x->shape, t->shape, sizeof x->shape);
    return 0;
}
static void tn__graph_drop_node(tn_graph *g, int k) {
    TN_FREE(g->nodes[k].in);
    memmove(&g->nodes[k], &g->nodes[k + 1], (size_t)(g->nnodes - k - 1) * sizeof *g->nodes);
    g->nnodes--;
}
/* A float64 copy of a constant's values (no history; owned by the open scope), or NULL. */
static tn_tensor *tn__graph_f64(tn_tensor *t) { return t ? tn__own(tn__copy_as(t, TN_F64, t->device)) : NULL; }

/* batch_norm (node b) on the result of conv2d / addmm (node c): fold, if everything is constant. */
static int tn__graph_fold_bn(tn_graph *g, int c, int b, int *nfolded, bool *done) {
    tn__gnode *cn = &g->nodes[c], *bn = &g->nodes[b];
    *done = false;
    const bool conv = cn->op == J_CONV2D;
    const int wi = conv ? 1 : 2, bi = conv ? 2 : 0;
    if (!conv && (cn->op != J_ADDMM || cn->d[0] != 1 || cn->d[1] != 1)) return 0;
    if (bn->in[0] != cn->out || tn__graph_count_uses(g, cn->out) != 1) return 0;
    for (int i = 1; i < 5; i++) if (!tn__graph_is_const(g, bn->in[i])) return 0;
    if (!tn__graph_is_const(g, cn->in[wi]) || !tn__graph_is_const(g, cn->in[bi]) || bn->in[1] < 0 || bn->in[2] < 0) return 0;
    tn_tensor *w = g->vals[cn->in[wi]].t, *bias = cn->in[bi] >= 0 ? g->vals[cn->in[bi]].t : NULL;
    const int64_t C = conv ? w->shape[0] : (w->ndim == 2 ? w->shape[1] : -1);
    tn_tensor *rm = g->vals[bn->in[1]].t, *rv = g->vals[bn->in[2]].t;
    tn_tensor *gam = bn->in[3] >= 0 ? g->vals[bn->in[3]].t : NULL, *bet = bn->in[4] >= 0 ? g->vals[bn->in[4]].t : NULL;
    if (C < 0 || tn_numel(rm) != C || tn_numel(rv) != C || (gam && tn_numel(gam) != C) || (bet && tn_numel(bet) != C) ||
        (bias && tn_numel(bias) != C) || !tn_dtype_is_floating(w->dtype) || g->vals[bn->out].ndim != (conv ? 4 : 2)) return 0;
    tn_scope_begin();
    tn_no_grad_begin();
    /* s = gamma / sqrt(var + eps); w' = w * s (per output channel); b' = (b - mean) * s + beta */
    tn_tensor *s = tn_rsqrt(tn_add_scalar(tn_reshape(tn__graph_f64(rv), TN_SHAPE(C)), bn->d[1]));
    if (gam) s = tn_mul(s, tn_reshape(tn__graph_f64(gam), TN_SHAPE(C)));
    tn_tensor *w64 = tn__graph_f64(w);
    tn_tensor *nw = conv ? tn_mul(w64, tn_reshape(s, TN_SHAPE(C, 1, 1, 1))) : tn_mul(w64, tn_reshape(s, TN_SHAPE(1, C)));
    tn_tensor *b0 = bias ? tn_reshape(tn__graph_f64(bias), TN_SHAPE(C)) : tn_zeros(TN_SHAPE(C), TN_F64);
    tn_tensor *nb = tn_mul(tn_sub(b0, tn_reshape(tn__graph_f64(rm), TN_SHAPE(C))), s);
    if (bet) nb = tn_add(nb, tn_reshape(tn__graph_f64(bet), TN_SHAPE(C)));
    nw = nw ? tn__copy_as(nw, w->dtype, w->device) : NULL;   /* untracked references of our own */
    nb = nb ? tn__copy_as(nb, w->dtype, w->device) : NULL;
    tn_no_grad_end();
    tn_scope_end();
    if (!nw || !nb) { tn_release(nw); tn_release(nb); return -1; }
    int vw = tn__graph_add_value(g, TN__GV_CONST, nw->dtype, nw->ndim, nw->shape), vb = vw < 0 ? -1 : tn__graph_add_value(g, TN__GV_CONST, nb->dtype, nb->ndim, nb->shape);
    if (vw < 0 || vb < 0 || tn__graph_make_const(g, vw, nw, nfolded) || tn__graph_make_const(g, vb, nb, nfolded)) return -1;
    cn = &g->nodes[c];   /* (the values array may have moved, the nodes did not) */
    cn->in[wi] = vw;
    cn->in[bi] = vb;
    /* the conv's result is now the batch norm's: its value takes the place of bn's output */
    const int old = cn->out, out = g->nodes[b].out;
    cn->out = out;
    g->vals[old].kind = TN__GV_CONST;   /* orphaned: pruned below (no node, no reader) */
    g->vals[old].t = NULL;
    tn__graph_drop_node(g, b);
    *done = true;
    return 0;
}

/* Nodes must produce values in increasing order after the rewrites (the saved format and
   the printout number values by position): renumber by a stable pass. */
static int tn__graph_reorder_values(tn_graph *g) {
    int *map = (int *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(int));
    tn__gval *nv = (tn__gval *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof *nv);
    bool *placed = (bool *)TN_MALLOC((size_t)(g->nvals + 1) * sizeof(bool));
    if (!map || !nv || !placed) { TN_FREE(map); TN_FREE(nv); TN_FREE(placed); return TN__FAIL_INT("tn_graph_optimize: out of memory"); }
    int n = 0;
    for (int v = 0; v < g->nvals; v++) { map[v] = -1; placed[v] = false; }
    for (int i = 0; i < g->ninputs; i++) { map[g->inputs[i]] = n; nv[n++] = g->vals[g->inputs[i]]; placed[g->inputs[i]] = true; }
    for (int k = 0; k < g->nnodes; k++) {
        tn__gnode *x = &g->nodes[k];
        for (int i = 0; i < x->nin; i++) {
            int v = x->in[i];
            if (v >= 0 && !placed[v]) { map[v] = n; nv[n++] = g->vals[v]; placed[v] = true; }
        }
        map[x->out] = n;
        nv[n++] = g->vals[x->out];
        placed[x->out] = true;
    }
    for (int i = 0; i < g->noutputs; i++) { int v = g->outputs[i]; if (!placed[v]) { map[v] = n; nv[n++] = g->vals[v]; placed[v] = true; } }
    for (int v = 0; v < g->nvals; v++) if (!placed[v]) { tn_release(g->vals[v].t); TN_FREE(g->vals[v].name); }
    for (int k = 0; k < g->nnodes; k++) {
        for (int i = 0; i < g->nodes[k].nin; i++) if (g->nodes[k].in[i] >= 0) g->nodes[k].in[i] = map[g->nodes[k].in[i]];
        g->nodes[k].out = map[g->nodes[k].out];
    }
    for (int i = 0; i < g->ninputs; i++) g->inputs[i] = map[g->inputs[i]];
    for (int i = 0; i < g->noutputs; i++) g->outputs[i] = map[g->outputs[i]];
    TN_FREE(g->vals);
    g->vals = nv;
    g->nvals = n;
    g->capv = g->nvals + 1;
    TN_FREE(map);
    TN_FREE(placed);
    return 0;
}

TNDEF int tn_graph_optimize(tn_graph *g) {
    if (!g) return TN__FAIL_INT("tn_graph_optimize: the graph is NULL");
    tn__graph_unplan(g);
    int nfolded = 0, rewrites = 0;
    for (int v = 0; v < g->nvals; v++)   /* continue the numbering of an earlier optimisation */
        if (g->vals[v].kind == TN__GV_CONST && !strncmp(g->vals[v].name, "folded", 6)) nfolded++;
    /* constant folding, in order: a folded result may make its readers foldable */
    for (int k = 0; k < g->nnodes;) {
        tn__gnode *n = &g->nodes[k];
        bool all = n->op != J_EXPAND;   /* an expand stays a view at run time: folded it would be a copy of the expanded size */
        for (int i = 0; i < n->nin && all; i++) all = tn__graph_is_const(g, n->in[i]);
        if (!all) { k++; continue; }
        tn_tensor **v = (tn_tensor **)TN_MALLOC((size_t)g->nvals * sizeof *v);
        if (!v) return TN__FAIL_INT("tn_graph_optimize: out of memory");
        for (int i = 0; i < g->nvals; i++) v[i] = g->vals[i].kind == TN__GV_CONST ? g->vals[i].t : NULL;
        tn_scope_begin();
        tn_no_grad_begin();
        tn_tensor *r = tn__graph_node_run(g, n, v, g->dyn_size);
        tn_tensor *c = tn_retain(r);   /* a view op's result stays a view (of a parameter: no copy) */
        tn_no_grad_end();
        tn_scope_end();
        TN_FREE(v);
        if (!c) return -1;
        if (tn__graph_make_const(g, n->out, c, &nfolded)) return -1;
        tn__graph_drop_node(g, k);
        rewrites++;
    }
    /* batch norm into the conv2d / linear before it */
    for (int b = 0; b < g->nnodes; b++) {
        if (g->nodes[b].op != J_BATCH_NORM) continue;
        int c = tn__graph_producer(g, g->nodes[b].in[0]);
        bool done = false;
        if (c >= 0 && tn__graph_fold_bn(g, c, b, &nfolded, &done)) return -1;
        if (done) { rewrites++; b--; }
    }
    if (tn__graph_reorder_values(g) || tn__graph_prune(g)) return -1;
    return rewrites;
}
