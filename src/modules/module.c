/* ---- modules: the base ---- */
struct tn__slot { char *name; tn_tensor *t; tn_module *m; bool persistent; };
static const char *const tn__slot_kinds[3] = {"parameter", "buffer", "child"};
static tn__slot **tn__slots(tn_module *m, int kind, int **n) {
    *n = kind == 0 ? &m->nparams : kind == 1 ? &m->nbuffers : &m->nchildren;
    return kind == 0 ? &m->params : kind == 1 ? &m->buffers : &m->children;
}
/* The slot called name (replacing its contents) or a new one; NULL after an error. */
static tn__slot *tn__slot_put(tn_module *m, int kind, const char *name) {
    int *n;
    tn__slot **v = tn__slots(m, kind, &n);
    for (int i = 0; i < *n; i++)
        if (!strcmp((*v)[i].name, name)) { tn_release((*v)[i].t); tn_module_free((*v)[i].m); (*v)[i].t = NULL; (*v)[i].m = NULL; return &(*v)[i]; }
    if (*n == m->cap[kind]) {
        int cap = m->cap[kind] ? 2 * m->cap[kind] : 4;
        tn__slot *s = (tn__slot *)TN_REALLOC(*v, (size_t)cap * sizeof *s);
        if (!s) return (tn__slot *)tn__error("tn_module: out of memory");
        *v = s;
        m->cap[kind] = cap;
    }
    tn__slot *s = &(*v)[*n];
    memset(s, 0, sizeof *s);
    if (!(s->name = tn__strdup(name))) return (tn__slot *)tn__error("tn_module: out of memory");
    (*n)++;
    return s;
}
static int tn__check_name(const char *fn, tn_module *m, const char *name, int kind) {
    if (!m || !name || !*name || strchr(name, '.'))
        return TN__FAIL_INT("%s: need a module and a name without '.' (got \"%s\")", fn, name ? name : "(null)");
    for (int k = 0; k < 3; k++) { /* one name, one kind (PyTorch: "attribute 'x' already exists") */
        int *n;
        tn__slot **v = tn__slots(m, k, &n);
        for (int i = 0; k != kind && i < *n; i++)
            if (!strcmp((*v)[i].name, name)) return TN__FAIL_INT("%s: \"%s\" is already a %s of %s", fn, name, tn__slot_kinds[k], m->type->name);
    }
    return 0;
}
TNDEF tn_module *tn_module_new(const tn_module_type *type, size_t size) {
    if (!type || !type->name || size < sizeof(tn_module)) return (tn_module *)tn__error("tn_module_new: need a type with a name and size >= sizeof(tn_module)");
    tn_module *m = (tn_module *)TN_MALLOC(size);
    if (!m) return (tn_module *)tn__error("tn_module_new: out of memory");
    memset(m, 0, size);
    m->type = type;
    m->training = true;
    return m;
}
TNDEF void tn_module_free(tn_module *m) {
    if (!m) return;
    if (m->type->destroy) m->type->destroy(m);
    for (int k = 2; k >= 0; k--) {
        int *n;
        tn__slot **v = tn__slots(m, k, &n);
        for (int i = *n - 1; i >= 0; i--) { tn_module_free((*v)[i].m); tn_release((*v)[i].t); TN_FREE((*v)[i].name); }
        TN_FREE(*v);
    }
    TN_FREE(m);
}
TNDEF tn_tensor *tn_module_register_parameter(tn_module *m, const char *name, tn_tensor *t) {
    if (!t) return NULL;
    if (tn__check_name("tn_module_register_parameter", m, name, 0)) return NULL;
    if (t->grad_fn) return (tn_tensor *)tn__error("tn_module_register_parameter: \"%s\" must be a leaf tensor (detach it first)", name);
    if (!tn_dtype_is_floating(t->dtype)) return (tn_tensor *)tn__error("tn_module_register_parameter: \"%s\" must be floating, got %s", name, tn_dtype_name(t->dtype));
    tn__slot *s = tn__slot_put(m, 0, name);
    if (!s) return NULL;
    s->t = tn_retain(t);
    t->requires_grad = true;
    return t;
}
TNDEF tn_tensor *tn_module_register_buffer_opts(tn_module *m, const char *name, tn_tensor *t, tn_register_buffer_opts o) {
    if (!t) return NULL;
    if (tn__check_name("tn_module_register_buffer", m, name, 1)) return NULL;
    tn__slot *s = tn__slot_put(m, 1, name);
    if (!s) return NULL;
    s->t = tn_retain(t);
    s->persistent = o.persistent;
    return t;
}
TNDEF tn_tensor *tn_module_register_buffer_str(tn_module *m, const char *name, tn_tensor *t, const char *options) {
    TN__KW_STR(tn_register_buffer_opts, register_buffer, "tn_module_register_buffer", options, tn_module_register_buffer_opts(m, name, t, o));
}
/* Whether m is root or inside the tree under root. */
static bool tn__module_in_tree(const tn_module *root, const tn_module *m) {
    if (root == m) return true;
    for (int i = 0; root && i < root->nchildren; i++) if (tn__module_in_tree(root->children[i].m, m)) return true;
    return false;
}
TNDEF tn_module *tn_module_add(tn_module *m, const char *name, tn_module *child) {
    if (!child) return NULL;
    /* a module the tree already holds is not taken over (nor freed): it would be owned twice,
       or would own its own parent */
    if (m && (tn__module_in_tree(child, m) || tn__module_in_tree(m, child)))
        return (tn_module *)tn__error("tn_module_add: %s \"%s\" is already in the tree of %s (a module has one parent; adding it again, or under its own descendant, would make a cycle)",
                                      child->type->name, name ? name : "(null)", m->type->name);
    if (tn__check_name("tn_module_add", m, name, 2)) { tn_module_free(child); return NULL; }
    tn__slot *s = tn__slot_put(m, 2, name);
    if (!s) { tn_module_free(child); return NULL; }
    s->m = child;
    return child;
}
TNDEF tn_tensor *tn_module_forward(tn_module *m, tn_tensor *x) {
    if (!m || !x) return NULL;
    if (!m->type->forward) return (tn_tensor *)tn__error("tn_module_forward: %s has no single-input forward", m->type->name);
    return m->type->forward(m, x);
}
TNDEF const char *tn_module_name(const tn_module *m) { return m ? m->type->name : NULL; }
TNDEF int tn_module_num_children(const tn_module *m) { return m ? m->nchildren : 0; }
TNDEF tn_module *tn_module_child_at(const tn_module *m, int i, const char **name) {
    if (!m || i < 0 || i >= m->nchildren) return NULL;
    if (name) *name = m->children[i].name;
    return m->children[i].m;
}
/* Follow "a.b.c": the module holding the last part, and where that part starts. */
static const tn_module *tn__module_walk(const tn_module *m, const char *name, const char **last) {
    for (const char *dot; m && (dot = strchr(name, '.')); name = dot + 1) {
        const tn_module *next = NULL;
        for (int i = 0; i < m->nchildren; i++)
            if (strlen(m->children[i].name) == (size_t)(dot - name) && !memcmp(m->children[i].name, name, (size_t)(dot - name))) next = m->children[i].m;
        m = next;
    }
    *last = name;
    return m;
}
TNDEF tn_tensor *tn_module_get(const tn_module *m, const char *name) {
    const char *last;
    if (!m || !name || !(m = tn__module_walk(m, name, &last))) return NULL;
    for (int i = 0; i < m->nparams; i++) if (!strcmp(m->params[i].name, last)) return m->params[i].t;
    for (int i = 0; i < m->nbuffers; i++) if (!strcmp(m->buffers[i].name, last)) return m->buffers[i].t;
    return NULL;
}
TNDEF tn_module *tn_module_child(const tn_module *m, const char *name) {
    const char *last;
    if (!m || !name || !(m = tn__module_walk(m, name, &last))) return NULL;
    for (int i = 0; i < m->nchildren; i++) if (!strcmp(m->children[i].name, last)) return m->children[i].m;
    return NULL;
}
/* Walk the tree in PyTorch's order (own tensors, then children), with dotted names. kind 0
   parameters, 1 buffers, 2 the state dict (parameters then persistent buffers per module).
   Names are built at their exact length: a long one is never cut (two cut names would be one). */
static int tn__collect(const tn_module *m, const char *prefix, int kind, tn_dict *out) {
    for (int pass = 0; pass < 2; pass++) {
        if ((kind == 0 && pass == 1) || (kind == 1 && pass == 0)) continue;
        const tn__slot *v = pass == 0 ? m->params : m->buffers;
        int n = pass == 0 ? m->nparams : m->nbuffers;
        for (int i = 0; i < n; i++) {
            if (kind == 2 && pass == 1 && !v[i].persistent) continue;
            tn_tensor *t = v[i].t;
            bool seen = false;    /* a tensor shared by two modules (tied weights) is listed once, as PyTorch */
            for (int j = 0; kind != 2 && j < out->n && !seen; j++) seen = out->values[j] == t;
            if (seen) continue;
            if (kind == 2) { /* detached, as state_dict(): same storage, no autograd */
                t = tn__view_of(v[i].t, v[i].t->shape, v[i].t->strides, v[i].t->ndim, v[i].t->offset);
                if (!t) return -1;
                t->is_view = false;
            }
            char *key = tn__str_join(prefix, v[i].name);
            int rc = key ? tn_dict_set(out, key, t) : TN__FAIL_INT("tn_module: out of memory");
            TN_FREE(key);
            if (kind == 2) tn_release(t);
            if (rc) return -1;
        }
    }
    for (int i = 0; i < m->nchildren; i++) {
        char *name = tn__str_join(prefix, m->children[i].name), *sub = name ? tn__str_join(name, ".") : NULL;
        int rc = sub ? tn__collect(m->children[i].m, sub, kind, out) : TN__FAIL_INT("tn_module: out of memory");
        TN_FREE(name);
        TN_FREE(sub);
        if (rc) return -1;
    }
    return 0;
}
static tn_dict *tn__collect_dict(const tn_module *m, int kind) {
    if (!m) return NULL;
    tn_dict *d = tn_dict_new();
    if (d && tn__collect(m, "", kind, d)) { tn_dict_free(d); d = NULL; }
    return d;
}
TNDEF tn_dict *tn_module_named_parameters(const tn_module *m) { return tn__collect_dict(m, 0); }
TNDEF tn_dict *tn_module_named_buffers(const tn_module *m) { return tn__collect_dict(m, 1); }
TNDEF tn_dict *tn_module_state_dict(const tn_module *m) { return tn__collect_dict(m, 2); }

/* Loading is two steps, so that a refused load changes nothing: tn__module_load_check
   checks every entry and stages its value in the target's dtype and on its device (that
   is where a dtype the CPU cannot hold, or a device without a backend, is refused);
   tn__module_load_commit then copies the staged values in: copies between tensors of one
   dtype, device and shape, not aliasing, which cannot fail on the CPU. A checkpoint
   checks the optimizer's state too before committing either. */
typedef struct tn__module_load { tn_dict *own; tn_tensor **staged; } tn__module_load;
static void tn__module_load_free(tn__module_load *l) {
    for (int i = 0; l->staged && i < l->own->n; i++) tn_release(l->staged[i]);
    TN_FREE(l->staged);
    tn_dict_free(l->own);
    memset(l, 0, sizeof *l);
}
static void tn__sb_quoted(tn__sbuf *b, int *count, const char *key) {
    tn__sb_puts(b, (*count)++ ? ", \"" : "\"");
    tn__sb_puts(b, key);
    tn__sb_puts(b, "\"");
}
/* The value to copy into dst: src itself when the copy cannot fail, else a converted copy. */
static tn_tensor *tn__module_stage(const char *fn, const char *key, tn_tensor *dst, tn_tensor *src) {
    bool direct = src->dtype == dst->dtype && src->device == dst->device && src->storage != dst->storage &&
                  (dst->device != TN_CPU || (dst->dtype != TN_F16 && dst->dtype != TN_BF16));
    tn__quiet++;   /* the inner message, re-worded below with the entry's name */
    tn_tensor *c = tn__check_no_internal_overlap("copy", dst) ? NULL : direct ? tn_retain(src) : tn__copy_as(src, dst->dtype, dst->device);
    tn__quiet--;
    if (c) return c;
    char why[1024];   /* a message: the error buffer holds no more */
    const char *colon = strstr(tn_last_error(), ": ");
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn_last_error());
    return (tn_tensor *)tn__error("%s: cannot load \"%s\" (%s on %s) into the module's %s on %s: %s", fn, key, tn_dtype_name(src->dtype),
                                  tn_device_name(src->device), tn_dtype_name(dst->dtype), tn_device_name(dst->device), why);
}
/* assign=True's entry: the state dict's tensor itself for a buffer; for a parameter a
   detached alias of it (PyTorch's nn.Parameter(input_param)) that requires grad as the
   module's parameter did. A new reference. */
static tn_tensor *tn__module_assign_stage(const char *fn, const char *key, const tn__slot *dst, tn_tensor *src, bool param) {
    if (!param) return tn_retain(src);
    /* tn_detach's view, but owned here rather than by an open scope */
    tn_tensor *a = tn__view_of(src, src->shape, src->strides, src->ndim, src->offset);
    if (!a) return NULL;
    a->base = tn_retain(src->base ? src->base : src);
    if (dst->t->requires_grad && tn_requires_grad_(a, true)) {
        char why[1024];
        snprintf(why, sizeof why, "%s", tn_last_error());
        tn_release(a);
        return (tn_tensor *)tn__error("%s: cannot assign \"%s\" (%s) to a parameter that requires grad: %s", fn, key, tn_dtype_name(src->dtype), why);
    }
    return a;
}
/* the slot of a state dict key (a parameter or a buffer), *param telling which */
static tn__slot *tn__module_state_slot(tn_module *m, const char *key, bool *param) {
    const char *last;
    tn_module *o = (tn_module *)tn__module_walk(m, key, &last);
    for (int i = 0; o && i < o->nparams; i++) if (!strcmp(o->params[i].name, last)) { *param = true; return &o->params[i]; }
    for (int i = 0; o && i < o->nbuffers; i++) if (!strcmp(o->buffers[i].name, last)) { *param = false; return &o->buffers[i]; }
    return NULL;
}
static int tn__module_load_check(const char *fn, tn_module *m, const tn_dict *sd, bool strict, bool assign, tn_dict *missing, tn_dict *unexpected, tn__module_load *l) {
    memset(l, 0, sizeof *l);
    tn_dict *own = tn_module_state_dict(m);
    if (!own) return -1;
    l->own = own;
    l->staged = (tn_tensor **)TN_MALLOC((size_t)(own->n ? own->n : 1) * sizeof *l->staged);
    if (!l->staged) { tn__module_load_free(l); return TN__FAIL_INT("%s: out of memory", fn); }
    memset(l->staged, 0, (size_t)(own->n ? own->n : 1) * sizeof *l->staged);
    tn__sbuf miss, unex, size;
    memset(&miss, 0, sizeof miss); memset(&unex, 0, sizeof unex); memset(&size, 0, sizeof size);
    int nmiss = 0, nunex = 0, nsize = 0;
    for (int i = 0; i < own->n; i++) {
        tn_tensor *src = tn_dict_get(sd, own->keys[i]), *dst = own->values[i];
        if (!src) {
            if (missing) tn_dict_set(missing, own->keys[i], NULL);
            tn__sb_quoted(&miss, &nmiss, own->keys[i]);
        } else if (src->ndim != dst->ndim || memcmp(src->shape, dst->shape, (size_t)src->ndim * sizeof(int64_t))) {
            tn__sb_puts(&size, nsize++ ? " size mismatch for " : "size mismatch for ");
            tn__sb_puts(&size, own->keys[i]);
            tn__sb_puts(&size, ": copying a param with shape ");
            tn__sb_puts(&size, TN__SHAPE(src));
            tn__sb_puts(&size, " from checkpoint, the shape in current model is ");
            tn__sb_puts(&size, TN__SHAPE(dst));
            tn__sb_puts(&size, ".");
        }
    }
    for (int i = 0; i < sd->n; i++)
        if (!tn_dict_contains(own, sd->keys[i])) {
            if (unexpected) tn_dict_set(unexpected, sd->keys[i], NULL);
            tn__sb_quoted(&unex, &nunex, sd->keys[i]);
        }
    int rc = 0;
    if (miss.failed || unex.failed || size.failed) rc = TN__FAIL_INT("%s: out of memory", fn);
    else if (nsize || (strict && (nmiss || nunex)))
        rc = TN__FAIL_INT("%s: Error(s) in loading state_dict for %s:%s%s%s%s%s%s%s%s", fn, m->type->name,
                          strict && nmiss ? " Missing key(s) in state_dict: " : "", strict && nmiss ? miss.s : "", strict && nmiss ? "." : "",
                          strict && nunex ? " Unexpected key(s) in state_dict: " : "", strict && nunex ? unex.s : "", strict && nunex ? "." : "",
                          nsize ? " " : "", nsize ? size.s : "");
    for (int i = 0; i < own->n && rc == 0; i++) {
        tn_tensor *src = tn_dict_get(sd, own->keys[i]);
        bool param = false;
        const tn__slot *slot = assign ? tn__module_state_slot(m, own->keys[i], &param) : NULL;
        if (assign && !slot) rc = TN__FAIL_INT("%s: no parameter or buffer \"%s\"", fn, own->keys[i]);
        else if (src && !(l->staged[i] = assign ? tn__module_assign_stage(fn, own->keys[i], slot, src, param)
                                                : tn__module_stage(fn, own->keys[i], own->values[i], src))) rc = -1;
    }
    TN_FREE(miss.s); TN_FREE(unex.s); TN_FREE(size.s);
    if (rc) tn__module_load_free(l);
    return rc;
}
static int tn__module_load_commit(const char *fn, tn_module *m, bool assign, tn__module_load *l) {
    int rc = 0;
    if (assign) { /* the staged tensors become the module's (cannot fail: every slot was found) */
        for (int i = 0; i < l->own->n; i++) {
            bool param;
            tn__slot *slot = l->staged[i] ? tn__module_state_slot(m, l->own->keys[i], &param) : NULL;
            if (!slot) continue;
            tn_release(slot->t);
            slot->t = l->staged[i];
            l->staged[i] = NULL;
        }
        tn__module_load_free(l);
        return 0;
    }
    tn_no_grad_begin();
    for (int i = 0; i < l->own->n && rc == 0; i++)
        if (l->staged[i] && tn_copy_(l->own->values[i], l->staged[i])) {   /* only a device fault */
            char why[1024];
            snprintf(why, sizeof why, "%s", tn_last_error());
            rc = TN__FAIL_INT("%s: copying \"%s\" failed after %d of %d entries were loaded: %s", fn, l->own->keys[i], i, l->own->n, why);
        }
    tn_no_grad_end();
    tn__module_load_free(l);
    return rc;
}
TNDEF int tn_module_load_state_dict_opts(tn_module *m, const tn_dict *sd, tn_dict *missing, tn_dict *unexpected, tn_load_state_dict_opts o) {
    const char *fn = "tn_module_load_state_dict";
    if (!m || !sd) return TN__FAIL_INT("%s: need a module and a state dict", fn);
    tn__module_load l;
    if (tn__module_load_check(fn, m, sd, o.strict, o.assign, missing, unexpected, &l)) return -1;
    return tn__module_load_commit(fn, m, o.assign, &l);
}
TNDEF int tn_module_load_state_dict_str(tn_module *m, const tn_dict *sd, tn_dict *missing, tn_dict *unexpected, const char *options) {
    TN__KW_STR_INT(tn_load_state_dict_opts, load_state_dict, "tn_module_load_state_dict", options, tn_module_load_state_dict_opts(m, sd, missing, unexpected, o));
}
TNDEF void tn_module_train_opts(tn_module *m, tn_train_opts o) {
    if (!m) return;
    m->training = o.mode;
    for (int i = 0; i < m->nchildren; i++) tn_module_train_opts(m->children[i].m, o);
}
TNDEF int tn_module_train_str(tn_module *m, const char *options) {
    TN__KW_STR_INT(tn_train_opts, train, "tn_module_train", options, (tn_module_train_opts(m, o), 0));
}
TNDEF void tn_module_eval(tn_module *m) { tn_module_train(m, .mode = false); }
/* one parameter's Module/Optimizer.zero_grad: PyTorch's grad = None, or grad.detach_() (or
   requires_grad_(False)), then zero_() */
static void tn__zero_grad_param(tn_tensor *p, bool set_to_none) {
    tn_tensor *g = p ? p->grad : NULL;
    if (!g) return;
    if (set_to_none) { tn_set_grad(p, NULL); return; }
    tn_no_grad_begin();
    if (g->grad_fn) tn_detach_(g);
    else g->requires_grad = false;
    tn_zero_(g);
    tn_no_grad_end();
}
TNDEF void tn_module_zero_grad_opts(tn_module *m, tn_zero_grad_opts o) {
    if (!m) return;
    for (int i = 0; i < m->nparams; i++) tn__zero_grad_param(m->params[i].t, o.set_to_none);
    for (int i = 0; i < m->nchildren; i++) tn_module_zero_grad_opts(m->children[i].m, o);
}
TNDEF int tn_module_zero_grad_str(tn_module *m, const char *options) {
    TN__KW_STR_INT(tn_zero_grad_opts, zero_grad, "tn_module_zero_grad", options, (tn_module_zero_grad_opts(m, o), 0));
}
TNDEF int64_t tn_module_num_parameters(const tn_module *m) {
    tn_dict *d = tn_module_named_parameters(m);   /* each tensor once, as sum(p.numel() for p in m.parameters()) */
    int64_t n = 0;
    for (int i = 0; i < tn_dict_len(d); i++) n += tn_numel(d->values[i]);
    tn_dict_free(d);
    return n;
}
TNDEF void tn_module_apply(tn_module *m, tn_module_fn fn, void *user) {
    if (!m || !fn) return;
    for (int i = 0; i < m->nchildren; i++) tn_module_apply(m->children[i].m, fn, user);
    fn(m, user);
}
/* PyTorch's Module.__repr__: extra_repr, then "(name): child" lines indented by two. */
static void tn__module_repr(const tn_module *m, tn__sbuf *b, int indent) {
    char extra[512] = "";
    if (m->type->extra_repr) m->type->extra_repr((tn_module *)m, extra, sizeof extra);
    tn__sb_puts(b, m->type->name);
    tn__sb_puts(b, "(");
    if (m->nchildren == 0) tn__sb_puts(b, extra);
    else {
        if (extra[0]) { tn__sb_puts(b, "\n"); tn__sb_pad(b, indent + 2); tn__sb_puts(b, extra); }
        for (int i = 0; i < m->nchildren; i++) {
            tn__sb_puts(b, "\n");
            tn__sb_pad(b, indent + 2);
            tn__sb_puts(b, "(");
            tn__sb_puts(b, m->children[i].name);
            tn__sb_puts(b, "): ");
            tn__module_repr(m->children[i].m, b, indent + 2);
        }
        tn__sb_puts(b, "\n");
        tn__sb_pad(b, indent);
    }
    tn__sb_puts(b, ")");
}
TNDEF char *tn_module_repr(const tn_module *m) {
    if (!m) return NULL;
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__module_repr(m, &b, 0);
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_module_repr: out of memory"); }
    return b.s;
}
/* Give t the data of src (module.to moves parameters in place, so optimizers keep them). */
static void tn__take_data(tn_tensor *t, tn_tensor *src) {
    TN__ATOMIC_ADD(&src->storage->refcount, 1);
    tn__storage_release(t->storage);
    t->storage = src->storage;
    t->dtype = src->dtype;
    t->device = src->device;
    t->ndim = src->ndim;
    memcpy(t->shape, src->shape, sizeof t->shape);
    memcpy(t->strides, src->strides, sizeof t->strides);
    t->offset = src->offset;
}
static int tn__module_convert(tn_module *m, tn_device device, int dtype) {
    for (int k = 0; k < 2; k++) {
        int *n;
        tn__slot **v = tn__slots(m, k, &n);
        for (int i = 0; i < *n; i++) {
            tn_tensor *t = (*v)[i].t, *c;
            if (dtype >= 0 && !tn_dtype_is_floating(t->dtype)) continue;
            tn_no_grad_begin();
            c = dtype >= 0 ? tn_to_dtype(t, (tn_dtype)dtype) : tn_to(t, device);
            if (c && t->grad) {
                tn_tensor *g = dtype >= 0 ? tn_to_dtype(t->grad, (tn_dtype)dtype) : tn_to(t->grad, device);
                if (g && g != t->grad) tn__take_data(t->grad, g);   /* g and c belong to the caller's scope */
            }
            tn_no_grad_end();
            if (!c) return -1;
            if (c != t) tn__take_data(t, c);
        }
    }
    for (int i = 0; i < m->nchildren; i++) if (tn__module_convert(m->children[i].m, device, dtype)) return -1;
    return 0;
}
TNDEF int tn_module_to(tn_module *m, tn_device device) {
    if (!m) return -1;
    tn_scope_begin();
    int rc = tn__module_convert(m, device, -1);
    tn_scope_end();
    return rc;
}
TNDEF int tn_module_to_dtype(tn_module *m, tn_dtype dtype) {
    if (!m) return -1;
    if (!tn_dtype_is_floating(dtype)) return TN__FAIL_INT("tn_module_to_dtype: nn.Module.to only accepts floating dtypes, got %s", tn_dtype_name(dtype));
    tn_scope_begin();
    int rc = tn__module_convert(m, TN_CPU, (int)dtype);
    tn_scope_end();
    return rc;
}
