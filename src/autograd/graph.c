/* The differentiable ops, as data: one enum and one name table, and below one function
   (tn__node_backward) with every backward formula, next to each other the way
   PyTorch's derivatives.yaml lists them. Ops record a node through tn__node_new /
   tn__node_save / tn__node_attach. */
/* PyTorch's node names for the elementwise families, by op id */
static const char *tn__unary_grad_name(int op) {
    switch ((tn_unary_op)op) {
    case NEG: return "NegBackward0"; case ABS: return "AbsBackward0"; case SIGN: return "SignBackward0";
    case SQUARE: return "PowBackward0"; case RELU: return "ReluBackward0"; case FLOOR: return "FloorBackward0";
    case CEIL: return "CeilBackward0"; case ROUND: return "RoundBackward0"; case TRUNC: return "TruncBackward0";
    case CLAMP: return "ClampBackward1"; case EXP: return "ExpBackward0"; case EXP2: return "Exp2Backward0";
    case LOG: return "LogBackward0"; case LOG2: return "Log2Backward0"; case LOG10: return "Log10Backward0";
    case LOG1P: return "Log1PBackward0"; case EXPM1: return "Expm1Backward0"; case SQRT: return "SqrtBackward0";
    case RSQRT: return "RsqrtBackward0"; case RECIPROCAL: return "ReciprocalBackward0"; case SIN: return "SinBackward0";
    case COS: return "CosBackward0"; case TAN: return "TanBackward0"; case ASIN: return "AsinBackward0";
    case ACOS: return "AcosBackward0"; case ATAN: return "AtanBackward0"; case SINH: return "SinhBackward0";
    case COSH: return "CoshBackward0"; case TANH: return "TanhBackward0"; case ASINH: return "AsinhBackward0";
    case ACOSH: return "AcoshBackward0"; case ATANH: return "AtanhBackward0"; case SIGMOID: return "SigmoidBackward0";
    case GELU: case GELU_TANH: return "GeluBackward0"; case SILU: return "SiluBackward0";
    case SOFTPLUS: return "SoftplusBackward0"; case LEAKY_RELU: return "LeakyReluBackward0"; case ELU: return "EluBackward0";
    case HARDTANH: return "HardtanhBackward0"; case MISH: return "MishBackward0"; case HARDSWISH: return "HardswishBackward0";
    case HARDSIGMOID: return "HardsigmoidBackward0"; case ERF: return "ErfBackward0"; case ERFINV: return "ErfinvBackward0";
    case LGAMMA: return "LgammaBackward0"; case DIGAMMA: return "DigammaBackward0"; case POLYGAMMA: return "PolygammaBackward0";
    case I0: return "I0Backward0"; case I0E: return "SpecialI0EBackward0"; case I1: return "SpecialI1Backward0";
    case I1E: return "SpecialI1EBackward0"; case SINC: return "SincBackward0"; case LOGIT: return "LogitBackward0";
    case FREXP_MANTISSA: case FREXP_EXPONENT: return "FrexpBackward0"; case ERFC: return "ErfcBackward0";
    case FRAC: return "FracBackward0"; case NAN_TO_NUM: return "NanToNumBackward0";
    default: return "UnaryBackward";
    }
}
static const char *tn__binary_grad_name(int op) {
    switch ((tn_binary_op)op) {
    case ADD: return "AddBackward0"; case SUB: return "SubBackward0"; case MUL: return "MulBackward0";
    case DIV: return "DivBackward0"; case FLOOR_DIVIDE: return "FloorDivideBackward0"; case REMAINDER: return "RemainderBackward0";
    case FMOD: return "FmodBackward0"; case POW: return "PowBackward1"; case ATAN2: return "Atan2Backward0";
    case MAXIMUM: return "MaximumBackward0"; case MINIMUM: return "MinimumBackward0"; case FMAX: return "FmaxBackward0";
    case FMIN: return "FminBackward0"; case LOGADDEXP: return "LogaddexpBackward0"; case LOGADDEXP2: return "Logaddexp2Backward0";
    case HYPOT: return "HypotBackward0"; case XLOGY: return "XlogyBackward0"; case XLOG1PY: return "SpecialXlog1PyBackward0";
    case COPYSIGN: return "CopysignBackward0"; case NEXTAFTER: return "NextafterBackward0"; case HEAVISIDE: return "HeavisideBackward0";
    default: return "BinaryBackward";
    }
}
static const char *const tn__ternary_grad_names[] = {"WhereBackward0", "LerpBackward1", "AddcmulBackward0", "AddcdivBackward0"};


TNDEF bool tn_is_grad_enabled(void) { return !tn__grad_disabled; }
static void tn__grad_mode_push(bool enabled) {
    if (tn__grad_mode_depth < 64) tn__grad_mode_stack[tn__grad_mode_depth] = tn__grad_disabled;
    tn__grad_mode_depth++;
    tn__grad_disabled = !enabled;
}
static void tn__grad_mode_pop(const char *fn) {
    if (tn__grad_mode_depth == 0) { tn__error("%s: no matching begin", fn); return; }
    tn__grad_mode_depth--;
    tn__grad_disabled = tn__grad_mode_depth < 64 ? tn__grad_mode_stack[tn__grad_mode_depth] != 0 : tn__grad_disabled;
}
TNDEF void tn_no_grad_begin(void) { tn__grad_mode_push(false); }
TNDEF void tn_no_grad_end(void) { tn__grad_mode_pop("tn_no_grad_end"); }
TNDEF void tn_enable_grad_begin(void) { tn__grad_mode_push(true); }
TNDEF void tn_enable_grad_end(void) { tn__grad_mode_pop("tn_enable_grad_end"); }

static void tn__node_release(tn_node *n) {
    /* iterative: a long chain of nodes must not recurse once per node */
    tn_node *stack_local[64], **stack = stack_local;
    int64_t sp = 0, cap = 64;
    if (n) stack[sp++] = n;
    while (sp > 0) {
        tn_node *x = stack[--sp];
        if (TN__ATOMIC_ADD(&x->refcount, -1) != 0) continue;
        for (int i = 0; i < x->nin; i++) {
            tn_release(x->next[i].leaf);
            if (!x->next[i].fn) continue;
            if (sp == cap) {
                tn_node **s = (tn_node **)TN_MALLOC((size_t)cap * 2 * sizeof *s);
                if (!s) { tn__node_release(x->next[i].fn); continue; } /* out of memory: fall back to recursion */
                memcpy(s, stack, (size_t)sp * sizeof *s);
                if (stack != stack_local) TN_FREE(stack);
                stack = s;
                cap *= 2;
            }
            stack[sp++] = x->next[i].fn;
        }
        for (int i = 0; i < x->nshown; i++) {   /* (made before x: no cycle) */
            tn_release(x->shown[i].leaf);
            if (x->shown[i].fn) tn__node_release(x->shown[i].fn);
        }
        TN_FREE(x->shown);
        for (int i = 0; i < x->nsaved; i++) tn_release(x->saved[i]);
        for (int i = 0; i < x->nsaved; i++) if (x->saved_fn[i]) tn__node_release(x->saved_fn[i]);
        tn__node_free_saved_arrays(x);
        TN_FREE(x->custom_name);
        tn_release(x->gsum);
        TN_FREE(x->hooks.items);
        if (x->post) { TN_FREE(x->post->items); TN_FREE(x->post); }
        if (x->nin <= 3) tn__blk_put(TN__BLK_NODE, x);
        else TN_FREE(x);
    }
    if (stack != stack_local) TN_FREE(stack);
}

static void tn__meta_of(tn__meta *m, tn_tensor *t) {
    m->dtype = t->dtype;
    m->device = t->device;
    m->ndim = t->ndim;
    memcpy(m->shape, t->shape, (size_t)t->ndim * sizeof *m->shape);   /* the slots past ndim are never read */
}

/* A view whose base was modified in place after the view got its history reads, as in
   PyTorch, from the base's current history: its grad_fn is rebuilt as a strided view of
   the base (contiguous bases; others keep the history they had). */
static void tn__refresh_view(tn_tensor *x) {
    tn_tensor *b = x->base;
    if (!b->requires_grad || !tn_is_contiguous(b) || x->ndim > TN_MAX_DIMS) return;
    tn_node *vn = tn__node_new(G_BASE_VIEW, 0, &b, 1);
    if (!vn) return;
    vn->i[0] = x->ndim;
    for (int d = 0; d < x->ndim; d++) { vn->i[1 + d] = x->shape[d]; vn->i[1 + x->ndim + d] = x->strides[d]; }
    vn->i[1 + 2 * x->ndim] = x->offset - b->offset;
    tn__node_attach(vn, x);
}

/* A node for op on inputs ins[0..n) when grad mode is on and an input requires grad;
   NULL otherwise (nothing to record). NULL entries in ins are inputs without gradient. */
static tn_node *tn__node_new(tn__gop op, int sub, tn_tensor *const *ins, int n) {
    if (tn__grad_disabled) return NULL;
    for (int i = 0; i < n; i++) {
        tn_tensor *x = ins[i];
        if (x && x->base && x->requires_grad && x->grad_fn && tn_version(x) != x->grad_fn_version) tn__refresh_view(x);
    }
    bool any = false;
    for (int i = 0; i < n; i++) any = any || (ins[i] && ins[i]->requires_grad);
    if (!any) return NULL;
    /* one block: the node, then its n edges, then its n input descriptions; nodes of up
       to 3 inputs come from the small-block cache, all of one size */
    const size_t sz = sizeof(tn_node) + (size_t)(n > 3 ? n : 3) * (sizeof(tn__edge) + sizeof(tn__meta));
    tn_node *nd = (tn_node *)(n <= 3 ? tn__blk_get(TN__BLK_NODE, sz) : TN_MALLOC(sz));
    if (!nd) return (tn_node *)tn__error("autograd: out of memory recording a node");
    { static tn_node zero_; *nd = zero_; }
    nd->refcount = 1;
    nd->op = op;
    nd->sub = sub;
    nd->nin = n;
    nd->next = (tn__edge *)(nd + 1);
    nd->in = (tn__meta *)(nd->next + n);
    for (int i = 0; i < n; i++) {
        tn_tensor *x = ins[i];
        nd->next[i].fn = NULL;
        nd->next[i].leaf = NULL;
        nd->in[i].ndim = 0;   /* an absent input's (the shape slots are never read past ndim) */
        nd->in[i].dtype = TN_F32;
        nd->in[i].device = TN_CPU;
        if (!x) continue;
        tn__meta_of(&nd->in[i], x);
        if (!x->requires_grad) continue;
        if (x->grad_fn) { nd->next[i].fn = x->grad_fn; TN__ATOMIC_ADD(&x->grad_fn->refcount, 1); }
        else nd->next[i].leaf = tn_retain(x);
    }
    if (tn__tracing) tn__trace_new(tn__tracing, nd, ins, n);
    return nd;
}

static void tn__node_free_saved_arrays(tn_node *nd) {
    if (nd->saved == nd->saved_inline) return;
    TN_FREE(nd->saved);
    TN_FREE(nd->saved_version);
    TN_FREE(nd->saved_fn);
}

/* Keep t for backward (its version is checked there). */
static void tn__node_save(tn_node *nd, tn_tensor *t) {
    if (!nd) return; /* t may be NULL: a slot kept empty on purpose */
    if (t && t->is_wrapped_number) { /* alone in a formula a Python float would promote like one (to float32): keep a plain 0-d tensor */
        tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
        if (!c) nd->save_failed = true;
        tn__node_save(nd, c);
        tn_release(c);
        return;
    }
    if (!nd->saved) { /* the first few live inside the node: no allocation */
        nd->saved = nd->saved_inline;
        nd->saved_version = nd->version_inline;
        nd->saved_fn = nd->fn_inline;
        nd->saved_cap = 4;
    }
    if (nd->nsaved == nd->saved_cap) {
        int cap = 2 * nd->saved_cap;
        tn_tensor **s = (tn_tensor **)TN_MALLOC((size_t)cap * sizeof *s);
        int64_t *v = (int64_t *)TN_MALLOC((size_t)cap * sizeof *v);
        tn_node **f = (tn_node **)TN_MALLOC((size_t)cap * sizeof *f);
        if (!s || !v || !f) { TN_FREE(s); TN_FREE(v); TN_FREE(f); nd->save_failed = true; tn__error("autograd: out of memory saving a tensor"); return; }
        memcpy(s, nd->saved, (size_t)nd->nsaved * sizeof *s);
        memcpy(v, nd->saved_version, (size_t)nd->nsaved * sizeof *v);
        memcpy(f, nd->saved_fn, (size_t)nd->nsaved * sizeof *f);
        tn__node_free_saved_arrays(nd);
        nd->saved = s;
        nd->saved_version = v;
        nd->saved_fn = f;
        nd->saved_cap = cap;
    }
    /* As PyTorch's SavedVariable: a non-leaf is kept as a plain alias of its data plus a
       reference to its grad_fn, never as the tensor object (whose .grad may own this node:
       no cycle); the formula gets the history back when the backward is recorded. */
    if (t && t->grad_fn) {
        nd->saved[nd->nsaved] = tn__view_of(t, t->shape, t->strides, t->ndim, t->offset);
        if (nd->saved[nd->nsaved]) nd->saved[nd->nsaved]->is_view = false;
        else nd->save_failed = true;   /* (the error is recorded) */
        nd->saved_fn[nd->nsaved] = t->grad_fn;
        TN__ATOMIC_ADD(&t->grad_fn->refcount, 1);
    } else {
        nd->saved[nd->nsaved] = tn_retain(t);
        nd->saved_fn[nd->nsaved] = NULL;
    }
    nd->saved_version[nd->nsaved] = t ? tn_version(t) : 0;
    nd->nsaved++;
}

/* A result is saved detached: it must not own the node that owns it (no cycle). */
static void tn__node_save_result(tn_node *nd, tn_tensor *out) {
    if (!nd || !out) return;
    tn_tensor *d = tn__view_of(out, out->shape, out->strides, out->ndim, out->offset);
    if (d) { tn__node_save(nd, d); tn_release(d); }
    else nd->save_failed = true;
}

/* Make nd the grad_fn of out (out takes the node's reference). Returns out. */
static tn_tensor *tn__node_attach(tn_node *nd, tn_tensor *out) {
    if (!nd) return out;
    if (!out || (!tn_dtype_is_floating(out->dtype) && !tn_dtype_is_complex(out->dtype))) { tn__node_release(nd); return out; }
    /* a formula without its saved tensors would read past them: the op fails (out of memory, recorded) */
    if (nd->save_failed) { tn__node_release(nd); tn_release(out); return NULL; }
    tn__meta_of(&nd->out, out);
    if (tn__tracing) tn__trace_attach(tn__tracing, nd, out);
    if (out->grad_fn) tn__node_release(out->grad_fn);
    out->grad_fn = nd;
    out->requires_grad = true;
    out->grad_fn_version = tn_version(out);
    return out;
}

TNDEF int tn_requires_grad_(tn_tensor *t, bool requires_grad) {
    if (!t) return -1;
    if (t->grad_fn) return TN__FAIL_INT("tn_requires_grad_: you can only change requires_grad flags of leaf tensors (this one has grad_fn %s)", tn_grad_fn_name(t));
    if (requires_grad && !tn_dtype_is_floating(t->dtype) && !tn_dtype_is_complex(t->dtype))
        return TN__FAIL_INT("tn_requires_grad_: only Tensors of floating point and complex dtype can require gradients (got %s)", tn_dtype_name(t->dtype));
    t->requires_grad = requires_grad;
    return 0;
}
TNDEF bool tn_is_leaf(const tn_tensor *t) { return t && !t->grad_fn; }
TNDEF int tn_set_grad(tn_tensor *t, tn_tensor *grad) {
    if (!t) return -1;
    if (grad && (grad->ndim != t->ndim || memcmp(grad->shape, t->shape, (size_t)t->ndim * sizeof(int64_t)) || grad->dtype != t->dtype))
        return TN__FAIL_INT("tn_set_grad: assigned grad has shape %s and dtype %s, but the tensor has shape %s and dtype %s",
                            TN__SHAPE(grad), tn_dtype_name(grad->dtype), TN__SHAPE(t), tn_dtype_name(t->dtype));
    tn_retain(grad);
    tn_release(t->grad);
    t->grad = grad;
    return 0;
}
TNDEF int tn_retain_grad(tn_tensor *t) {
    if (!t) return -1;
    if (!t->requires_grad) return TN__FAIL_INT("tn_retain_grad: can't retain_grad on a tensor that has requires_grad=False");
    if (t->grad_fn) t->grad_fn->retain_target = t;
    t->retains_grad = t->grad_fn != NULL;
    return 0;
}
TNDEF bool tn_retains_grad(const tn_tensor *t) { return t && t->retains_grad; }
static bool tn__anomaly;
TNDEF void tn_set_detect_anomaly(bool enabled) { tn__anomaly = enabled; }
TNDEF bool tn_is_anomaly_enabled(void) { return tn__anomaly; }
static const char *tn__node_name(tn_node *n) {
    if (n->name) return n->name;
    if (n->op == G_UNARY) return tn__unary_grad_name(n->sub);
    if (n->op == G_BINARY) return tn__binary_grad_name(n->sub);
    if (n->op == G_TERNARY) return tn__ternary_grad_names[n->sub];
    return tn__gop_names[n->op];
}
TNDEF const char *tn_grad_fn_name(const tn_tensor *t) { return t && t->grad_fn ? tn__node_name(t->grad_fn) : NULL; }
TNDEF int tn_detach_(tn_tensor *t) {
    if (!t) return -1;
    tn__node_release(t->grad_fn);
    t->grad_fn = NULL;
    t->requires_grad = false;
    t->retains_grad = false;
    return 0;
}

static tn__hooks *tn__hooks_of(tn_tensor *t, bool create) {
    if (t->grad_fn) return &t->grad_fn->hooks;
    if (!t->hooks && create) {
        t->hooks = (tn__hooks *)TN_MALLOC(sizeof *t->hooks);
        if (t->hooks) memset(t->hooks, 0, sizeof *t->hooks);
    }
    return t->hooks;
}
static int tn__hooks_add(const char *fn, tn__hooks *h, tn_hook_fn f, tn_node_hook_fn post, void *user) {
    if (!f && !post) return TN__FAIL_INT("%s: the hook function is NULL", fn);
    if (!h) return TN__FAIL_INT("%s: out of memory", fn);
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 4;
        tn__hook *items = (tn__hook *)TN_REALLOC(h->items, (size_t)cap * sizeof *items);
        if (!items) return TN__FAIL_INT("%s: out of memory", fn);
        h->items = items;
        h->cap = cap;
    }
    h->items[h->n].fn = f;
    h->items[h->n].post = post;
    h->items[h->n].user = user;
    h->items[h->n].handle = h->next_handle++;
    return h->items[h->n++].handle;
}
static int tn__hooks_remove(const char *fn, tn__hooks *h, int handle) {
    for (int i = 0; h && i < h->n; i++)
        if (h->items[i].handle == handle) {
            memmove(&h->items[i], &h->items[i + 1], (size_t)(h->n - i - 1) * sizeof *h->items);
            h->n--;
            return 0;
        }
    return TN__FAIL_INT("%s: no hook with handle %d", fn, handle);
}
TNDEF int tn_register_hook(tn_tensor *t, tn_hook_fn fn, void *user) {
    if (!t) return -1;
    if (!fn) return TN__FAIL_INT("tn_register_hook: the hook function is NULL");
    if (!t->requires_grad) return TN__FAIL_INT("tn_register_hook: cannot register a hook on a tensor that doesn't require gradient");
    return tn__hooks_add("tn_register_hook", tn__hooks_of(t, true), fn, NULL, user);
}
TNDEF int tn_remove_hook(tn_tensor *t, int handle) {
    if (!t) return -1;
    return tn__hooks_remove("tn_remove_hook", tn__hooks_of(t, false), handle);
}
TNDEF int tn_node_register_prehook(tn_node *n, tn_hook_fn fn, void *user) {
    if (!n) return TN__FAIL_INT("tn_node_register_prehook: the node is NULL");
    return tn__hooks_add("tn_node_register_prehook", &n->hooks, fn, NULL, user);
}
TNDEF int tn_node_remove_prehook(tn_node *n, int handle) {
    if (!n) return TN__FAIL_INT("tn_node_remove_prehook: the node is NULL");
    return tn__hooks_remove("tn_node_remove_prehook", &n->hooks, handle);
}
TNDEF int tn_node_register_hook(tn_node *n, tn_node_hook_fn fn, void *user) {
    if (!n) return TN__FAIL_INT("tn_node_register_hook: the node is NULL");
    if (!fn) return TN__FAIL_INT("tn_node_register_hook: the hook function is NULL");
    if (!n->post) {
        n->post = (tn__hooks *)TN_MALLOC(sizeof *n->post);
        if (!n->post) return TN__FAIL_INT("tn_node_register_hook: out of memory");
        memset(n->post, 0, sizeof *n->post);
    }
    return tn__hooks_add("tn_node_register_hook", n->post, NULL, fn, user);
}
TNDEF int tn_node_remove_hook(tn_node *n, int handle) {
    if (!n) return TN__FAIL_INT("tn_node_remove_hook: the node is NULL");
    return tn__hooks_remove("tn_node_remove_hook", n->post, handle);
}

/* Run hooks on a gradient. g is the engine's reference; a hook's result is borrowed
   (the engine retains it), so a hook may return the result of any op. The engine calls
   this inside a scope, so tensors made by hooks die with it. */
static tn_tensor *tn__run_hooks(tn__hooks *h, tn_tensor *g, int *rc) {
    for (int i = 0; h && i < h->n && g; i++) {
        tn_tensor *r = h->items[i].fn(g, h->items[i].user);
        if (!r || r == g) continue;
        if (r->ndim != g->ndim || memcmp(r->shape, g->shape, (size_t)g->ndim * sizeof(int64_t)) || r->dtype != g->dtype) {
            *rc = TN__FAIL_INT("backward: a hook changed the gradient from %s %s to %s %s; a hook must keep shape and dtype",
                               tn_dtype_name(g->dtype), TN__SHAPE(g), tn_dtype_name(r->dtype), TN__SHAPE(r));
            tn_release(g);
            return NULL;
        }
        tn_retain(r);
        tn_release(g);
        g = r;
    }
    return g;
}

/* Run a node's post-hooks on the gradients it computed (gv: borrowed, inside the engine's
   scope; entries for inputs without an edge are NULL). A hook's replacement is borrowed too
   and must keep the input's shape and dtype. 0, or -1 with an error. */
static int tn__run_post_hooks(tn_node *n, tn_tensor *g, tn_tensor **gv) {
    for (int i = 0; i < n->nin; i++) if (!n->next[i].fn && !n->next[i].leaf) gv[i] = NULL;
    for (int k = 0; n->post && k < n->post->n; k++) {
        unsigned errors_before = tn__nerrors;
        if (n->post->items[k].post(gv, n->nin, g, n->post->items[k].user)) {
            if (tn__nerrors == errors_before) tn__error("backward: a post-hook of %s failed", tn__node_name(n));
            return -1;
        }
        for (int i = 0; i < n->nin; i++) {
            const tn__meta *m = &n->in[i];
            tn_tensor *r = gv[i];
            if (r && (r->ndim != m->ndim || memcmp(r->shape, m->shape, (size_t)m->ndim * sizeof(int64_t)) || r->dtype != m->dtype))
                return TN__FAIL_INT("backward: a post-hook of %s changed the gradient of input %d to %s %s; it must be %s %s",
                                    tn__node_name(n), i, tn_dtype_name(r->dtype), TN__SHAPE(r), tn_dtype_name(m->dtype), tn__shape_str(m->shape, m->ndim));
        }
    }
    return 0;
}
