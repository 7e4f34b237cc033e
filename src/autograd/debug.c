/* ---- debugging: names and graph dumps ---- */
TNDEF int tn_set_name(tn_tensor *t, const char *name) {
    if (!t) return -1;
    char *c = NULL;
    if (name) {
        size_t len = strlen(name) + 1;
        c = (char *)TN_MALLOC(len);
        if (!c) return TN__FAIL_INT("tn_set_name: out of memory");
        memcpy(c, name, len);
    }
    TN_FREE((void *)t->name);
    t->name = c;
    return 0;
}
TNDEF const char *tn_get_name(const tn_tensor *t) { return t ? t->name : NULL; }

/* digraph of the nodes behind t: each node with its name, each leaf with its name and
   shape; edges point from an input to the op that consumed it (data flow). */
TNDEF char *tn_graph_dot(tn_tensor *t) {
    if (!t) return NULL;
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__sb_puts(&b, "digraph autograd {\n  node [shape=box, fontname=\"monospace\"];\n");
    tn__sb_printf(&b, "  out [label=\"%s %s\", shape=ellipse];\n", t->name ? t->name : "result", TN__SHAPE(t));
    if (!t->grad_fn) {
        tn__sb_puts(&b, "}\n");
        return b.s;
    }
    tn__sb_printf(&b, "  n%p -> out;\n", (void *)t->grad_fn);
    tn__nodevec stack = {NULL, 0, 0}, seen = {NULL, 0, 0};
    tn__nodevec_push(&stack, t->grad_fn);
    while (stack.n > 0 && !b.failed) {
        tn_node *n = stack.v[--stack.n];
        bool done = false;
        for (int64_t k = 0; k < seen.n && !done; k++) done = seen.v[k] == n;
        if (done) continue;
        tn__nodevec_push(&seen, n);
        tn__sb_printf(&b, "  n%p [label=\"%s\"];\n", (void *)n, tn__node_name(n));
        for (int i = 0; i < n->nin; i++) {
            tn__edge *e = &n->next[i];
            if (e->fn) {
                tn__sb_printf(&b, "  n%p -> n%p;\n", (void *)e->fn, (void *)n);
                tn__nodevec_push(&stack, e->fn);
            } else if (e->leaf) {
                tn__sb_printf(&b, "  l%p [label=\"%s %s\", shape=ellipse, style=filled, fillcolor=lightblue];\n  l%p -> n%p;\n",
                              (void *)e->leaf, e->leaf->name ? e->leaf->name : "leaf", TN__SHAPE(e->leaf), (void *)e->leaf, (void *)n);
            }
        }
    }
    TN_FREE(stack.v);
    TN_FREE(seen.v);
    tn__sb_puts(&b, "}\n");
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_graph_dot: out of memory"); }
    return b.s;
}

/* ---- graph introspection ---- */
TNDEF tn_node *tn_grad_fn(tn_tensor *t) { return t && t->grad_fn ? tn_node_retain(t->grad_fn) : NULL; }
TNDEF tn_node *tn_node_retain(tn_node *n) {
    if (n) TN__ATOMIC_ADD(&n->refcount, 1);
    return n;
}
TNDEF void tn_node_release(tn_node *n) { tn__node_release(n); }
TNDEF const char *tn_node_name(const tn_node *n) { return n ? tn__node_name((tn_node *)n) : NULL; }
/* a composite named as PyTorch's node shows its inputs (tn__grad_name_over), as PyTorch's graph */
TNDEF int tn_node_num_next(const tn_node *n) {
    return n ? (n->shown ? n->nshown : n->nin) : TN__FAIL_INT("tn_node_num_next: the node is NULL");
}
TNDEF tn_node *tn_node_next(tn_node *n, int i, tn_tensor **leaf) {
    if (leaf) *leaf = NULL;
    if (!n) return (tn_node *)tn__error("tn_node_next: the node is NULL");
    const tn__edge *e = n->shown ? n->shown : n->next;
    const int ne = n->shown ? n->nshown : n->nin;
    if (i < 0 || i >= ne) return (tn_node *)tn__error("tn_node_next: edge %d out of range for %s, which has %d", i, tn__node_name(n), ne);
    if (leaf) *leaf = e[i].leaf;
    return tn_node_retain(e[i].fn);
}
