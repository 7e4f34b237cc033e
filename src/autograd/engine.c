/* ---- the engine ---- */
static int64_t tn__epoch;

typedef struct tn__nodevec { tn_node **v; int64_t n, cap; } tn__nodevec;
static int tn__nodevec_push(tn__nodevec *s, tn_node *x) {
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        tn_node **v = (tn_node **)TN_REALLOC(s->v, (size_t)cap * sizeof *v);
        if (!v) return TN__FAIL_INT("autograd: out of memory walking the graph");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* acc <- acc + g (references: takes g, returns the sum); under create_graph the sum is recorded.
   Without it, an acc no one else can see (its only reference and its storage's, contiguous, g's
   shape and dtype) takes the sum in place, as PyTorch's InputBuffer does: the same bits, no
   new buffer (the residual connections' gradients: 4 % of a transformer step went on them). */
static tn_tensor *tn__accumulate(tn_tensor *acc, tn_tensor *g) {
    if (!acc) return g;
    if (!g) return acc;
    if (!tn_is_grad_enabled() && acc != g && acc->storage && TN__ATOMIC_LOAD(&acc->refcount) == 1 && TN__ATOMIC_LOAD(&acc->storage->refcount) == 1 &&
        acc->dtype == g->dtype && acc->device == g->device && acc->ndim == g->ndim && tn_is_contiguous(acc) &&
        !memcmp(acc->shape, g->shape, (size_t)acc->ndim * sizeof(int64_t))) {
        tn_scope_begin();
        tn_tensor *r = tn_add_(acc, g);
        tn_scope_end();
        tn_release(g);
        if (r) return acc;
        tn_release(acc);
        return NULL;
    }
    tn_scope_begin();
    tn_tensor *s = tn_retain(tn_add(acc, g));
    tn_scope_end();
    tn_release(acc);
    tn_release(g);
    return s;
}

/* Bring a gradient to the dtype and device of the input it is for (takes and returns a reference). */
static tn_tensor *tn__grad_as(tn_tensor *g, const tn__meta *m) {
    if (!g || (g->dtype == m->dtype && g->device == m->device)) return g;
    tn_scope_begin();
    tn_tensor *r = tn_to_dtype(g, m->dtype);
    if (r && r->device != m->device) r = tn_to(r, m->device);
    tn_retain(r);
    tn_scope_end();
    tn_release(g);
    return r;
}

/* Deliver g (a reference, taken) to a leaf: hooks, then captured (autograd.grad) or .grad. */
static int tn__deliver_leaf(tn_tensor *leaf, tn_tensor *g, tn_tensor *const *inputs, int ninputs, tn_tensor **captured, bool create_graph) {
    if (!leaf->requires_grad) { tn_release(g); return 0; } /* requires_grad_(false) since: skipped, as PyTorch's AccumulateGrad */
    int rc = 0;
    tn_scope_begin();
    g = tn__run_hooks(leaf->hooks, g, &rc);
    tn_scope_end();
    if (!g) return rc;
    if (captured) {
        for (int k = 0; k < ninputs; k++)
            if (inputs[k] == leaf) captured[k] = tn__accumulate(captured[k], tn_retain(g));
        tn_release(g);
        return 0;
    }
    if (!create_graph) { /* .grad is a plain tensor: detached, and our own copy so += never aliases */
        if (leaf->grad && !leaf->grad->requires_grad && !tn_same_storage(leaf->grad, g)) { /* accumulate in place, as PyTorch */
            tn_no_grad_begin();
            tn_tensor *r = tn__binary_raw("backward", ADD, leaf->grad, g, 1, leaf->grad);
            tn_no_grad_end();
            tn_release(r);
            tn_release(g);
            return r ? 0 : -1;
        }
        /* a gradient nobody else can see (our only reference to a library-owned, contiguous,
           unshared storage) is taken as it is, as PyTorch's AccumulateGrad steals it */
        bool alone = !g->base ? TN__ATOMIC_LOAD(&g->storage->refcount) == 1   /* or a view that alone holds its base */
                              : !g->base->base && TN__ATOMIC_LOAD(&g->base->refcount) == 1 && TN__ATOMIC_LOAD(&g->storage->refcount) == 2;
        bool own = alone && !g->is_wrapped_number && TN__ATOMIC_LOAD(&g->refcount) == 1 && !g->storage->deleter &&
                   !g->grad_fn && !g->requires_grad && tn_is_contiguous(g);
        if (own && g->base) {   /* a plain tensor over the same storage, without the base */
            tn_tensor *c = tn__view_of(g, g->shape, g->strides, g->ndim, g->offset);
            tn_release(g);
            if (!c) return -1;
            c->is_view = false;
            g = c;
        } else if (!own) {
            tn_tensor *c = tn__copy_as(g, g->dtype, g->device);
            tn_release(g);
            if (!c) return -1;
            g = c;
        }
        if (leaf->grad && !leaf->grad->requires_grad) { /* same storage as g: add the copy */
            tn_no_grad_begin();
            tn_tensor *r = tn__binary_raw("backward", ADD, leaf->grad, g, 1, leaf->grad);
            tn_no_grad_end();
            tn_release(r);
            tn_release(g);
            return r ? 0 : -1;
        }
    }
    tn_tensor *sum = leaf->grad ? tn__accumulate(tn_retain(leaf->grad), g) : g;
    tn_release(leaf->grad);
    leaf->grad = sum;
    return 0;
}

static int tn__check_saved(tn_node *n) {
    for (int k = 0; k < n->nsaved; k++) {
        if (!n->saved[k]) continue;
        int64_t v = tn_version(n->saved[k]);
        if (v != n->saved_version[k])
            return TN__FAIL_INT("backward: one of the variables needed for gradient computation has been modified by an inplace operation: "
                                "[%s %s] is at version %lld; expected version %lld instead (saved by %s)",
                                tn_dtype_name(n->saved[k]->dtype), TN__SHAPE(n->saved[k]), (long long)v, (long long)n->saved_version[k],
                                n->op == G_UNARY ? tn__unary_grad_name(n->sub) : n->op == G_BINARY ? tn__binary_grad_name(n->sub)
                                : n->op == G_TERNARY ? tn__ternary_grad_names[n->sub] : tn__gop_names[n->op]);
    }
    return 0;
}

/* Reverse-mode sweep from roots (with their gradients) through every reachable node,
   in reverse topological order (Kahn's algorithm on consumer counts: no recursion, so
   any graph depth works). captured != NULL: gradients for `inputs` are returned there
   and .grad is untouched (tn_autograd_grad). */
/* A leaf's gradient is summed over all the edges that reach it before its hooks run
   and .grad is touched, once (PyTorch's AccumulateGrad node). */
typedef struct tn__leafacc { tn_tensor *leaf, *g; int64_t deps; } tn__leafacc;
typedef struct tn__leafvec { tn__leafacc *v; int64_t n, cap; } tn__leafvec;
static tn__leafacc *tn__leaf_entry(tn__leafvec *lv, tn_tensor *leaf, bool add) {
    for (int64_t k = 0; k < lv->n; k++) if (lv->v[k].leaf == leaf) return &lv->v[k];
    if (!add) return NULL;
    if (lv->n == lv->cap) {
        int64_t cap = lv->cap ? 2 * lv->cap : 16;
        tn__leafacc *v = (tn__leafacc *)TN_REALLOC(lv->v, (size_t)cap * sizeof *v);
        if (!v) return (tn__leafacc *)tn__error("autograd: out of memory");
        lv->v = v;
        lv->cap = cap;
    }
    tn__leafacc *e = &lv->v[lv->n++];
    e->leaf = leaf;
    e->g = NULL;
    e->deps = 0;
    return e;
}

/* Callbacks queued while a backward runs (tn_autograd_queue_callback) run, in order, when
   it has finished, also after an error (DDP completes its last all-reduces there). Each
   engine call has its own list: a backward inside a hook finishes its own. */
typedef struct tn__final_cb { int (*fn)(void *user); void *user; } tn__final_cb;
typedef struct tn__final_list { tn__final_cb *v; int n, cap; } tn__final_list;
static TN__TLS tn__final_list *tn__final_current;

TNDEF int tn_autograd_queue_callback(int (*fn)(void *user), void *user) {
    tn__final_list *l = tn__final_current;
    if (!fn) return TN__FAIL_INT("tn_autograd_queue_callback: fn is NULL");
    if (!l) return TN__FAIL_INT("tn_autograd_queue_callback: final callbacks can only be installed during the backward pass");
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        tn__final_cb *v = (tn__final_cb *)TN_REALLOC(l->v, (size_t)cap * sizeof *v);
        if (!v) return TN__FAIL_INT("tn_autograd_queue_callback: out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].fn = fn;
    l->v[l->n++].user = user;
    return 0;
}

static int tn__engine_run(const char *fn, tn_tensor *const *roots, tn_tensor **root_grads, int nroots,
                          tn_tensor *const *inputs, int ninputs, tn_tensor **captured, tn_autograd_opts o);
static int tn__engine(const char *fn, tn_tensor *const *roots, tn_tensor **root_grads, int nroots,
                      tn_tensor *const *inputs, int ninputs, tn_tensor **captured, tn_autograd_opts o) {
    tn__final_list finals = {NULL, 0, 0}, *outer = tn__final_current;
    tn__final_current = &finals;
    tn__ac_suspended++;   /* backward runs its ops as the formulas call them, never autocast */
    int rc = tn__engine_run(fn, roots, root_grads, nroots, inputs, ninputs, captured, o);
    tn__ac_suspended--;
    tn__final_current = outer;
    for (int i = 0; i < finals.n; i++) {       /* a callback may queue another: finals.n grows */
        tn__final_current = &finals;
        int r = finals.v[i].fn(finals.v[i].user);
        tn__final_current = outer;
        if (r && !rc) rc = -1;
    }
    TN_FREE(finals.v);
    return rc;
}

/* A node's engine scratch as a run found it: a backward run inside another one (a custom
   op's backward calling tn_autograd_grad, as the fused RNNs do under create_graph) walks
   nodes of the outer run's graph, and must hand them back as they were. */
typedef struct tn__scratch { tn_node *n; int64_t deps, epoch, need; tn_tensor *gsum; } tn__scratch;
typedef struct tn__scratchvec { tn__scratch *v; int64_t n, cap; } tn__scratchvec;
static int tn__engine_visit(tn__scratchvec *sv, tn__nodevec *stack, tn_node *x, int64_t epoch) {
    if (sv->n == sv->cap) {
        int64_t cap = sv->cap ? 2 * sv->cap : 64;
        tn__scratch *v = (tn__scratch *)TN_REALLOC(sv->v, (size_t)cap * sizeof *v);
        if (!v) return TN__FAIL_INT("autograd: out of memory walking the graph");
        sv->v = v;
        sv->cap = cap;
    }
    tn__scratch *e = &sv->v[sv->n++];
    e->n = x; e->deps = x->deps; e->epoch = x->epoch; e->need = x->need; e->gsum = x->gsum;
    x->epoch = epoch; x->deps = 0; x->need = 0; x->gsum = NULL;
    return tn__nodevec_push(stack, x);
}

/* For tn_autograd_grad: which nodes must run, as PyTorch's GraphTask exec_info. need bit 1:
   the node leads to an input (is an input's grad_fn, or has an edge to an input leaf or to
   such a node); bit 0: it must run (an edge to an input leaf or to a node with bit 1). Nodes
   without bit 0 are not run, so nothing upstream of the inputs is computed (or released). */
static int tn__mark_needed(tn__nodevec *all, tn_tensor *const *inputs, int ninputs) {
    tn__nodevec order = {NULL, 0, 0}, q = {NULL, 0, 0};
    int rc = 0;
    for (int64_t k = 0; k < all->n; k++) all->v[k]->need = all->v[k]->deps;     /* consumers left */
    for (int64_t k = 0; k < all->n && rc == 0; k++) if (all->v[k]->need == 0) rc = tn__nodevec_push(&q, all->v[k]);
    while (q.n > 0 && rc == 0) { /* consumers before producers */
        tn_node *x = q.v[--q.n];
        rc = tn__nodevec_push(&order, x);
        for (int i = 0; i < x->nin && rc == 0; i++)
            if (x->next[i].fn && --x->next[i].fn->need == 0) rc = tn__nodevec_push(&q, x->next[i].fn);
    }
    for (int64_t k = order.n - 1; k >= 0 && rc == 0; k--) { /* producers first */
        tn_node *x = order.v[k];
        int64_t need = 0;
        for (int i = 0; i < x->nin; i++) {
            if (x->next[i].fn && (x->next[i].fn->need & 2)) need = 3;
            for (int j = 0; x->next[i].leaf && j < ninputs; j++) if (x->next[i].leaf == inputs[j]) need = 3;
        }
        for (int j = 0; j < ninputs && !need; j++) if (inputs[j]->grad_fn == x) need = 2;
        x->need = need;
    }
    TN_FREE(order.v);
    TN_FREE(q.v);
    return rc;
}

static int tn__engine_run(const char *fn, tn_tensor *const *roots, tn_tensor **root_grads, int nroots,
                          tn_tensor *const *inputs, int ninputs, tn_tensor **captured, tn_autograd_opts o) {
    tn__nodevec all = {NULL, 0, 0}, stack = {NULL, 0, 0}, ready = {NULL, 0, 0};
    tn__scratchvec found = {NULL, 0, 0};
    tn__leafvec leaves = {NULL, 0, 0};
    int64_t epoch = TN__ATOMIC_ADD(&tn__epoch, 1);
    int rc = 0;
    if (o.retain_graph == -1) o.retain_graph = o.create_graph; /* PyTorch: retain_graph=None is create_graph */
    if (o.create_graph) o.retain_graph = true;

    /* 1. collect the reachable nodes and count each one's consumers */
    for (int r = 0; r < nroots && rc == 0; r++) {
        tn_node *x = roots[r]->grad_fn;
        if (x && x->epoch != epoch) rc = tn__engine_visit(&found, &stack, x, epoch);
    }
    while (stack.n > 0 && rc == 0) {
        tn_node *x = stack.v[--stack.n];
        rc = tn__nodevec_push(&all, x);
        for (int i = 0; i < x->nin && rc == 0; i++) {
            tn_node *c = x->next[i].fn;
            if (x->next[i].leaf) {
                tn__leafacc *e = tn__leaf_entry(&leaves, x->next[i].leaf, true);
                if (!e) rc = -1; else e->deps++;
            }
            if (!c) continue;
            if (c->epoch != epoch) rc = tn__engine_visit(&found, &stack, c, epoch);
            c->deps++;
        }
    }
    if (rc == 0 && captured) rc = tn__mark_needed(&all, inputs, ninputs);
    tn__grad_mode_push(o.create_graph);
    /* 2. seed the roots */
    for (int r = 0; r < nroots && rc == 0; r++) {
        tn_tensor *g = tn_retain(root_grads[r]);
        if (roots[r]->grad_fn) roots[r]->grad_fn->gsum = tn__accumulate(roots[r]->grad_fn->gsum, g);
        else rc = tn__deliver_leaf(roots[r], g, inputs, ninputs, captured, o.create_graph);
    }
    for (int64_t k = 0; k < all.n && rc == 0; k++)
        if (all.v[k]->deps == 0) rc = tn__nodevec_push(&ready, all.v[k]);
    /* 3. run each node once all its consumers have contributed */
    while (ready.n > 0 && rc == 0) {
        tn_node *n = ready.v[--ready.n];
        tn_tensor *g = n->gsum, *gin[2 * TN_MAX_DIMS + 2];
        tn_tensor **gv = n->nin <= 2 * TN_MAX_DIMS + 2 ? gin : (tn_tensor **)TN_MALLOC((size_t)n->nin * sizeof *gv);
        n->gsum = NULL;
        if (!gv) { tn_release(g); rc = TN__FAIL_INT("%s: out of memory", fn); break; }
        for (int i = 0; i < n->nin; i++) gv[i] = NULL;
        if (g) {
            tn_scope_begin();
            g = tn__run_hooks(&n->hooks, g, &rc);
            tn_scope_end();
            if (n->retain_target && g) { /* into the tensor's .grad (not the node's, so no cycle through the node) */
                tn_tensor *t = n->retain_target;
                tn_tensor *keep = o.create_graph ? tn_retain(g) : tn__copy_as(g, g->dtype, g->device);
                t->grad = tn__accumulate(t->grad, keep);
            }
            for (int k = 0; captured && k < ninputs; k++)
                if (inputs[k]->grad_fn == n) captured[k] = tn__accumulate(captured[k], tn_retain(g));
            if (captured && !(n->need & 1)) { /* nothing it leads to is wanted: not run */
                tn_release(g);
                if (gv != gin) TN_FREE(gv);
                continue;
            }
            if (n->released)
                rc = TN__FAIL_INT("%s: trying to backward through the graph a second time (or to use saved tensors after they were freed); "
                                  "pass retain_graph = true to the first backward if you need to do this", fn);
            if (rc == 0) rc = tn__check_saved(n);
            if (rc == 0) {
                tn_scope_begin();
                unsigned errors_before = tn__nerrors;
                rc = tn__node_backward(n, g, gv);
                if (rc == 0 && tn__nerrors != errors_before) rc = -1; /* an op inside the formula failed */
                for (int i = 0; tn__anomaly && rc == 0 && i < n->nin; i++)
                    if (gv[i] && tn_dtype_is_floating(gv[i]->dtype) && tn_item(tn_any(tn_isnan(gv[i]))) != 0)
                        rc = TN__FAIL_INT("%s: anomaly detected: Function '%s' returned nan values in its %dth output", fn, tn__node_name(n), i);
                if (rc == 0 && n->post) rc = tn__run_post_hooks(n, g, gv);
                for (int i = 0; i < n->nin; i++) {
                    if (rc == 0 && gv[i] && (n->next[i].fn || n->next[i].leaf)) gv[i] = tn_retain(gv[i]);
                    else gv[i] = NULL;
                }
                tn_scope_end();
            }
            tn_release(g);
        }
        for (int i = 0; i < n->nin; i++) {
            tn_tensor *gi = tn__grad_as(gv[i], &n->in[i]);
            tn__edge *e = &n->next[i];
            if (e->fn) {
                if (rc == 0) e->fn->gsum = tn__accumulate(e->fn->gsum, gi); else tn_release(gi);
                if (--e->fn->deps == 0 && rc == 0) rc = tn__nodevec_push(&ready, e->fn);
            } else if (e->leaf) {
                tn__leafacc *la = tn__leaf_entry(&leaves, e->leaf, false);
                if (la && rc == 0) {
                    la->g = tn__accumulate(la->g, gi);
                    if (--la->deps == 0 && la->g) {
                        rc = tn__deliver_leaf(e->leaf, la->g, inputs, ninputs, captured, o.create_graph);
                        la->g = NULL;
                    }
                } else tn_release(gi);
            } else tn_release(gi);
        }
        if (gv != gin) TN_FREE(gv);
        if (!o.retain_graph && n->nsaved > 0) { /* as PyTorch: saved tensors go, so memory stays flat */
            for (int k = 0; k < n->nsaved; k++) {
                tn_release(n->saved[k]);
                if (n->saved_fn[k]) tn__node_release(n->saved_fn[k]);
            }
            n->nsaved = 0;
            n->released = true;
        }
    }
    tn__grad_mode_pop(fn);
    for (int64_t k = found.n - 1; k >= 0; k--) { /* each node's scratch as this run found it */
        tn__scratch *e = &found.v[k];
        tn_release(e->n->gsum);
        e->n->gsum = e->gsum; e->n->deps = e->deps; e->n->epoch = e->epoch; e->n->need = e->need;
    }
    TN_FREE(found.v);
    for (int64_t k = 0; k < leaves.n; k++) tn_release(leaves.v[k].g);
    TN_FREE(leaves.v);
    TN_FREE(all.v);
    TN_FREE(stack.v);
    TN_FREE(ready.v);
    return rc;
}

static int tn__check_root(const char *fn, tn_tensor *t, int k) {
    if (!t->requires_grad) return TN__FAIL_INT("%s: element %d of tensors does not require grad and does not have a grad_fn", fn, k);
    return 0;
}

static int tn__backward(const char *fn, tn_tensor *t, tn_tensor *gradient, tn_autograd_opts opts) {
    if (!t) return -1;
    if (opts.allow_unused) return TN__FAIL_INT("%s: allow_unused is an option of tn_autograd_grad", fn);
    if (opts.retain_graph < -1 || opts.retain_graph > 1) return TN__FAIL_INT("%s: retain_graph %d is not true, false or -1 (None)", fn, opts.retain_graph);
    if (tn__check_root(fn, t, 0)) return -1;
    tn_tensor *g = gradient;
    if (g && (g->ndim != t->ndim || memcmp(g->shape, t->shape, (size_t)t->ndim * sizeof(int64_t))))
        return TN__FAIL_INT("%s: gradient of shape %s does not match the tensor's shape %s", fn, TN__SHAPE(g), TN__SHAPE(t));
    if (!g && tn_numel(t) != 1)
        return TN__FAIL_INT("%s: grad can be implicitly created only for scalar outputs (shape %s); pass a gradient", fn, TN__SHAPE(t));
    if (!g && tn_dtype_is_complex(t->dtype))
        return TN__FAIL_INT("%s: grad can be implicitly created only for real scalar outputs (got %s); pass a gradient", fn, tn_dtype_name(t->dtype));
    tn_tensor *own = g ? tn_retain(g) : tn__full_like(t, 1);
    if (!own) return -1;
    int rc = tn__engine(fn, &t, &own, 1, NULL, 0, NULL, opts);
    tn_release(own);
    return rc;
}
TNDEF int tn_backward_opts(tn_tensor *t, tn_autograd_opts opts) { return tn__backward("tn_backward", t, opts.gradient, opts); }

TNDEF int tn_autograd_grad_opts(tn_tensor *const *outputs, int n_outputs, tn_tensor *const *inputs, int n_inputs,
                                tn_tensor *const *grad_outputs, tn_tensor **results, tn_autograd_opts opts) {
    const char *fn = "tn_autograd_grad";
    if (opts.gradient) return TN__FAIL_INT("%s: gradient is an option of tn_backward (autograd.grad takes grad_outputs)", fn);
    if (opts.retain_graph < -1 || opts.retain_graph > 1) return TN__FAIL_INT("%s: retain_graph %d is not true, false or -1 (None)", fn, opts.retain_graph);
    if (!outputs || !inputs || !results || n_outputs <= 0 || n_inputs <= 0) return TN__FAIL_INT("%s: need outputs, inputs and a results array", fn);
    for (int k = 0; k < n_inputs; k++) results[k] = NULL;
    for (int k = 0; k < n_outputs; k++) if (!outputs[k] || tn__check_root(fn, outputs[k], k)) return -1;
    for (int k = 0; k < n_inputs; k++) {
        if (!inputs[k]) return -1;
        if (!inputs[k]->requires_grad) return TN__FAIL_INT("%s: input %d does not require grad", fn, k);
    }
    tn_tensor **gs = (tn_tensor **)TN_MALLOC((size_t)n_outputs * sizeof *gs), **cap = (tn_tensor **)TN_MALLOC((size_t)n_inputs * sizeof *cap);
    int rc = gs && cap ? 0 : TN__FAIL_INT("%s: out of memory", fn);
    for (int k = 0; gs && k < n_outputs; k++) gs[k] = NULL;

    for (int k = 0; k < n_outputs && rc == 0; k++) {
        tn_tensor *g = grad_outputs ? grad_outputs[k] : NULL;
        if (!g && tn_numel(outputs[k]) != 1) { rc = TN__FAIL_INT("%s: grad can be implicitly created only for scalar outputs (output %d has shape %s)", fn, k, TN__SHAPE(outputs[k])); break; }
        if (!g && tn_dtype_is_complex(outputs[k]->dtype)) { rc = TN__FAIL_INT("%s: grad can be implicitly created only for real scalar outputs (output %d is %s)", fn, k, tn_dtype_name(outputs[k]->dtype)); break; }
        gs[k] = g ? tn_retain(g) : tn__full_like(outputs[k], 1);
        if (!gs[k]) rc = -1;
    }
    for (int k = 0; k < n_inputs && cap; k++) cap[k] = NULL;
    if (rc == 0) rc = tn__engine(fn, outputs, gs, n_outputs, inputs, n_inputs, cap, opts);
    for (int k = 0; k < n_inputs && rc == 0; k++)
        if (!cap[k] && !opts.allow_unused) rc = TN__FAIL_INT("%s: input %d appears to not have been used in the graph; set allow_unused if this is intended", fn, k);
    for (int k = 0; k < n_inputs && cap; k++) {
        if (rc == 0) {
            tn_tensor *r = cap[k];
            if (r && !opts.create_graph && r->grad_fn) { /* hand out a plain tensor */
                tn_tensor *d = tn__view_of(r, r->shape, r->strides, r->ndim, r->offset);
                tn_release(r);
                r = d;
            }
            results[k] = tn__own(r);
        } else tn_release(cap[k]);
    }
    for (int k = 0; gs && k < n_outputs; k++) tn_release(gs[k]);
    TN_FREE(gs);
    TN_FREE(cap);
    return rc;
}
