/* Graphs saved and loaded. The file is a safetensors file: every constant is a tensor
   under its name, and the metadata holds "format": "tn_graph" and "tn_graph": the graph as
   text, one line per value in value order, each defining the next value id:
       tn_graph 1                                    the format and its version
       input <dtype> <ndim> <sizes...>               a graph input (in input order)
       const <wrapped 0|1> <name>                    the tensor <name> of the file
       node <op> <sub> <dtype> <ndim> <sizes...> <nin> <value ids...> <ni> <ints...> <nd> <doubles...>
       output <n> <value ids...>
       dynamic <input> <traced size>                 (optional) dim 0 of that input may vary
   <op> is a key of TN__JIT_OPS (J_CONV2D, ...), <sub> the kernel op's name for the
   unary/binary/ternary kinds ("-" otherwise); a node may only use earlier values, so a
   graph is acyclic by construction; -1 is an absent optional input (a bias). Loading
   checks every field and refuses anything else with a message. */
#define TN__GRAPH_VERSION 1
#define TN__GRAPH_MAX_VALUES (1 << 22)

static bool tn__graph_name_ok(const char *s) {
    if (!*s) return false;   /* any length: the reader takes names of any length */
    for (; *s; s++) if ((unsigned char)*s <= ' ' || *s == '"' || *s == '\\' || (unsigned char)*s >= 127) return false;
    return true;
}
static const char *tn__graph_sub_name(const tn__gnode *n) {
    if (n->op == J_UNARY) return tn_unary_op_name((tn_unary_op)n->sub);
    if (n->op == J_BINARY) return tn_binary_op_name((tn_binary_op)n->sub);
    if (n->op == J_TERNARY) return tn__ternary_names[n->sub];
    return "-";
}
static char *tn__graph_text(const tn_graph *g) {
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__sb_printf(&b, "tn_graph %d\n", TN__GRAPH_VERSION);
    int k = 0;
    for (int v = 0; v < g->nvals; v++) {
        const tn__gval *x = &g->vals[v];
        if (x->kind == TN__GV_CONST) { tn__sb_printf(&b, "const %d %s\n", x->t->is_wrapped_number ? 1 : 0, x->name); continue; }
        const tn__gnode *n = NULL;
        if (x->kind == TN__GV_NODE) {
            while (k < g->nnodes && g->nodes[k].out != v) k++;
            if (k == g->nnodes) { TN_FREE(b.s); return (char *)tn__error("tn_graph_save: value %d has no node", v); }
            n = &g->nodes[k];
            tn__sb_printf(&b, "node %s %s ", tn__jit_keys[n->op], tn__graph_sub_name(n));
        } else tn__sb_puts(&b, "input ");
        tn__sb_printf(&b, "%s %d", tn_dtype_name(x->dtype), x->ndim);
        for (int d = 0; d < x->ndim; d++) tn__sb_printf(&b, " %lld", (long long)x->shape[d]);
        if (n) {
            tn__sb_printf(&b, " %d", n->nin);
            for (int i = 0; i < n->nin; i++) tn__sb_printf(&b, " %d", n->in[i]);
            tn__sb_printf(&b, " %d", n->ni);
            for (int i = 0; i < n->ni; i++) tn__sb_printf(&b, " %lld", (long long)n->i[i]);
            tn__sb_printf(&b, " %d", n->nd);
            for (int i = 0; i < n->nd; i++) tn__sb_printf(&b, " %.17g", n->d[i]);
        }
        tn__sb_puts(&b, "\n");
    }
    tn__sb_printf(&b, "output %d", g->noutputs);
    for (int i = 0; i < g->noutputs; i++) tn__sb_printf(&b, " %d", g->outputs[i]);
    tn__sb_puts(&b, "\n");
    if (g->dyn_input >= 0) tn__sb_printf(&b, "dynamic %d %lld\n", g->dyn_input, (long long)g->dyn_size);
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_graph_save: out of memory"); }
    return b.s;
}
static tn_dict *tn__graph_dict(const char *fn, const tn_graph *g) {
    tn_dict *d = tn_dict_new();
    char *text = d ? tn__graph_text(g) : NULL;
    int rc = text ? 0 : -1;
    for (int v = 0; v < g->nvals && rc == 0; v++) {
        const tn__gval *x = &g->vals[v];
        if (x->kind != TN__GV_CONST) continue;
        if (!tn__graph_name_ok(x->name)) rc = TN__FAIL_INT("%s: constant name \"%s\" cannot be saved (spaces, quotes or control characters)", fn, x->name);
        else if (tn_dict_contains(d, x->name)) rc = TN__FAIL_INT("%s: two constants are named \"%s\"", fn, x->name);
        else rc = tn_dict_set(d, x->name, x->t);
    }
    if (rc == 0) rc = tn_dict_set_meta(d, "format", "tn_graph");
    if (rc == 0) rc = tn_dict_set_meta(d, "tn_graph", text);
    TN_FREE(text);
    if (rc) { tn_dict_free(d); return NULL; }
    return d;
}
TNDEF int tn_graph_save(const tn_graph *g, const char *path) {
    if (!g || !path) return TN__FAIL_INT("tn_graph_save: the graph and the path must not be NULL");
    tn_dict *d = tn__graph_dict("tn_graph_save", g);
    if (!d) return -1;
    int rc = tn_safetensors_save(path, d);
    tn_dict_free(d);
    return rc;
}

/* ---- loading ---- */
typedef struct tn__gparse { const char *p; int line; const char *fn; } tn__gparse;
static int tn__gp_fail(tn__gparse *ps, const char *what) { return TN__FAIL_INT("%s: line %d of the graph: %s", ps->fn, ps->line, what); }
/* The next space-separated token of the current line into buf; 0, or -1 at the end of the line. */
static int tn__gp_token(tn__gparse *ps, char *buf, size_t cap) {
    while (*ps->p == ' ') ps->p++;
    size_t n = 0;
    while (*ps->p && *ps->p != ' ' && *ps->p != '\n') {
        if (n + 1 >= cap) return -1;
        buf[n++] = *ps->p++;
    }
    buf[n] = 0;
    return n ? 0 : -1;
}
/* The next token as a new string (NULL: none, or out of memory): names have no length limit. */
static char *tn__gp_token_dup(tn__gparse *ps) {
    while (*ps->p == ' ') ps->p++;
    size_t n = strcspn(ps->p, " \n");
    char *s = n ? (char *)TN_MALLOC(n + 1) : NULL;
    if (s) { memcpy(s, ps->p, n); s[n] = 0; ps->p += n; }
    return s;
}
static int tn__gp_int(tn__gparse *ps, int64_t lo, int64_t hi, int64_t *out, const char *what) {
    char buf[32], *end;
    if (tn__gp_token(ps, buf, sizeof buf)) { char m[96]; snprintf(m, sizeof m, "expected %s", what); return tn__gp_fail(ps, m); }
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (*end || errno || v < lo || v > hi) {
        char m[160];
        snprintf(m, sizeof m, "%s \"%s\" is not an integer in [%lld, %lld]", what, buf, (long long)lo, (long long)hi);
        return tn__gp_fail(ps, m);
    }
    *out = v;
    return 0;
}
static int tn__gp_end_line(tn__gparse *ps) {
    while (*ps->p == ' ') ps->p++;
    if (*ps->p && *ps->p != '\n') return tn__gp_fail(ps, "unexpected text at the end of the line");
    if (*ps->p) ps->p++;
    ps->line++;
    return 0;
}
static int tn__gp_shape(tn__gparse *ps, tn_dtype *dt, int *ndim, int64_t *shape) {
    char buf[32];
    if (tn__gp_token(ps, buf, sizeof buf)) return tn__gp_fail(ps, "expected a dtype");
    int d = 0;
    while (d < TN_NUM_DTYPES && strcmp(buf, tn_dtype_name((tn_dtype)d))) d++;
    if (d == TN_NUM_DTYPES) return tn__gp_fail(ps, "unknown dtype");
    *dt = (tn_dtype)d;
    int64_t v;
    if (tn__gp_int(ps, 0, TN_MAX_DIMS, &v, "ndim")) return -1;
    *ndim = (int)v;
    int64_t numel = 1;
    for (int i = 0; i < *ndim; i++) {
        if (tn__gp_int(ps, 0, INT64_MAX, &shape[i], "a size")) return -1;
        if (!tn__mul_ok(numel, shape[i], &numel)) return tn__gp_fail(ps, "the sizes multiply past int64");
    }
    return 0;
}
/* Whether input slot k of op may be absent (-1). */
static bool tn__graph_optional(tn__jit_op op, int k) {
    return (op == J_CONV2D && k == 2) || (op == J_BATCH_NORM && k >= 1) || (op == J_LAYER_NORM && k >= 1) || (op == J_ADDMM && k == 0 && false);
}
/* The attribute counts each op takes: ints (exactly, or a range), doubles. */
static int tn__graph_check_attrs(tn__gparse *ps, const tn__gnode *n, int in_ndim) {
    int lo = 0, hi = 0, nd = 0;
    switch (n->op) {
    case J_UNARY: nd = 3; break;
    case J_BINARY: case J_TERNARY: nd = 1; break;
    case J_ADDMM: case J_BADDBMM: case J_BATCH_NORM: nd = 2; break;
    case J_RESHAPE: case J_EXPAND: case J_PERMUTE: hi = TN_MAX_DIMS; break;
    case J_SLICE: lo = hi = 4; break;
    case J_SELECT: lo = hi = 2; break;
    case J_SUM: case J_MEAN: lo = 1; hi = TN_MAX_DIMS + 1; break;
    case J_IM2COL: lo = hi = 10; break;
    case J_SOFTMAX: case J_LOG_SOFTMAX: case J_CAT: case J_INDEX_SELECT: case J_TO: lo = hi = 1; break;
    case J_CONV2D: lo = hi = 7; break;
    case J_MAX_POOL2D: lo = hi = 9; break;
    case J_AVG_POOL2D: lo = hi = 8; break;
    case J_LSTM: lo = hi = 1; break;
    case J_RNN_SEQ: lo = hi = 2; break;
    case J_LAYER_NORM: lo = hi = 1; nd = 1; break;
    default: break;
    }
    (void)in_ndim;
    if (n->ni < lo || n->ni > hi) return tn__gp_fail(ps, "wrong number of int attributes for the op");
    if (n->nd != nd) return tn__gp_fail(ps, "wrong number of float attributes for the op");
    if (n->op == J_TO && (n->i[0] < 0 || n->i[0] >= TN_NUM_DTYPES)) return tn__gp_fail(ps, "aten::to: unknown dtype");
    if (n->op == J_SLICE && n->i[3] <= 0) return tn__gp_fail(ps, "aten::slice: step must be positive");
    if (n->op == J_LSTM && (n->i[0] < 0 || n->i[0] > 1)) return tn__gp_fail(ps, "lstm_recurrence: reverse must be 0 or 1");
    if (n->op == J_RNN_SEQ && (n->i[1] < 0 || n->i[1] > 1 || (n->i[0] != TN__RNN_TANH && n->i[0] != TN__RNN_RELU && n->i[0] != TN__RNN_GRU)))
        return tn__gp_fail(ps, "rnn_recurrence: unknown mode, or reverse not 0 or 1");
    return 0;
}
static int tn__graph_parse_node(tn__gparse *ps, tn_graph *g) {
    char key[32], sub[32];
    if (tn__gp_token(ps, key, sizeof key)) return tn__gp_fail(ps, "expected an op");
    int op = 0;
    while (op < TN__NUM_JIT_OPS && strcmp(key, tn__jit_keys[op])) op++;
    if (op == TN__NUM_JIT_OPS) return tn__gp_fail(ps, "unknown op");
    if (tn__gp_token(ps, sub, sizeof sub)) return tn__gp_fail(ps, "expected the op's kernel name or -");
    int s = -1;
    if (op == J_UNARY) { for (int k = 0; k < TN_NUM_UNARY_OPS && s < 0; k++) if (!strcmp(sub, tn_unary_op_name((tn_unary_op)k))) s = k; }
    else if (op == J_BINARY) { for (int k = 0; k < TN_NUM_BINARY_OPS && s < 0; k++) if (!strcmp(sub, tn_binary_op_name((tn_binary_op)k))) s = k; }
    else if (op == J_TERNARY) { for (int k = 0; k < TN_NUM_TERNARY_OPS && s < 0; k++) if (!strcmp(sub, tn__ternary_names[k])) s = k; }
    else if (!strcmp(sub, "-")) s = 0;
    if (s < 0) return tn__gp_fail(ps, "unknown kernel op name for the op");
    tn_dtype dt;
    int ndim;
    int64_t shape[TN_MAX_DIMS], v;
    if (tn__gp_shape(ps, &dt, &ndim, shape)) return -1;
    if (tn__gp_int(ps, 1, 4096, &v, "the number of inputs")) return -1;
    const int nin = (int)v;
    if (tn__jit_nin[op] >= 0 && nin != tn__jit_nin[op]) return tn__gp_fail(ps, "wrong number of inputs for the op");
    tn__gnode *n = tn__graph_add_node(g, (tn__jit_op)op, nin);
    if (!n) return -1;
    n->sub = s;
    for (int k = 0; k < nin; k++) {
        if (tn__gp_int(ps, -1, g->nvals - 1, &v, "an input value id (an earlier value)")) return -1;
        if (v < 0 && !tn__graph_optional((tn__jit_op)op, k)) return tn__gp_fail(ps, "a required input is absent (-1)");
        n->in[k] = (int)v;
    }
    if (tn__gp_int(ps, 0, TN__JIT_MAXI, &v, "the number of int attributes")) return -1;
    n->ni = (int)v;
    for (int k = 0; k < n->ni; k++) if (tn__gp_int(ps, INT64_MIN, INT64_MAX, &n->i[k], "an int attribute")) return -1;
    if (tn__gp_int(ps, 0, 4, &v, "the number of float attributes")) return -1;
    n->nd = (int)v;
    for (int k = 0; k < n->nd; k++) {
        char buf[64], *end;
        if (tn__gp_token(ps, buf, sizeof buf)) return tn__gp_fail(ps, "expected a float attribute");
        n->d[k] = strtod(buf, &end);
        if (*end) return tn__gp_fail(ps, "a float attribute is not a number");
    }
    if (tn__graph_check_attrs(ps, n, 0)) return -1;
    int out = tn__graph_add_value(g, TN__GV_NODE, dt, ndim, shape);
    if (out < 0) return -1;
    n->out = out;
    return 0;
}
static tn_graph *tn__graph_from_dict(const char *fn, const tn_dict *d) {
    const char *fmt = tn_dict_get_meta(d, "format"), *text = tn_dict_get_meta(d, "tn_graph");
    if (!fmt || strcmp(fmt, "tn_graph") || !text) return (tn_graph *)tn__error("%s: not a saved graph (no \"format\": \"tn_graph\" and \"tn_graph\" metadata)", fn);
    tn_graph *g = tn__graph_new();
    if (!g) return NULL;
    tn__gparse ps = {text, 1, fn};
    char tok[32];
    int64_t v;
    int rc = 0, nout_lines = 0;
    bool *used = NULL;
    if (tn__gp_token(&ps, tok, sizeof tok) || strcmp(tok, "tn_graph")) rc = tn__gp_fail(&ps, "expected \"tn_graph <version>\"");
    if (rc == 0 && tn__gp_int(&ps, 0, INT32_MAX, &v, "the version")) rc = -1;
    if (rc == 0 && v != TN__GRAPH_VERSION) rc = TN__FAIL_INT("%s: graph format version %lld is not supported (this library reads version %d)", fn, (long long)v, TN__GRAPH_VERSION);
    if (rc == 0) rc = tn__gp_end_line(&ps);
    if (rc == 0 && !(g->inputs = (int *)TN_MALLOC(64 * sizeof(int)))) rc = TN__FAIL_INT("%s: out of memory", fn);
    while (rc == 0 && *ps.p) {
        if (g->nvals >= TN__GRAPH_MAX_VALUES) { rc = tn__gp_fail(&ps, "too many values"); break; }
        if (tn__gp_token(&ps, tok, sizeof tok)) { rc = tn__gp_fail(&ps, "expected input, const, node, output or dynamic"); break; }
        if (nout_lines && strcmp(tok, "dynamic")) { rc = tn__gp_fail(&ps, "only \"dynamic\" may follow the output line"); break; }
        if (!strcmp(tok, "input")) {
            tn_dtype dt;
            int ndim;
            int64_t shape[TN_MAX_DIMS];
            if (g->ninputs == 64) rc = tn__gp_fail(&ps, "more than 64 inputs");
            else if (g->nnodes) rc = tn__gp_fail(&ps, "inputs must come before the nodes");
            else if (tn__gp_shape(&ps, &dt, &ndim, shape)) rc = -1;
            else { int x = tn__graph_add_value(g, TN__GV_INPUT, dt, ndim, shape); if (x < 0) rc = -1; else g->inputs[g->ninputs++] = x; }
        } else if (!strcmp(tok, "const")) {
            char *name = NULL;
            if (tn__gp_int(&ps, 0, 1, &v, "the wrapped-number flag")) rc = -1;
            else if (!(name = tn__gp_token_dup(&ps))) rc = tn__gp_fail(&ps, "expected a constant's name");
            else {
                tn_tensor *t = tn_dict_get(d, name);
                int dup = 0;
                for (int i = 0; i < g->nvals; i++) dup |= g->vals[i].kind == TN__GV_CONST && !strcmp(g->vals[i].name, name);
                if (!t) rc = TN__FAIL_INT("%s: line %d of the graph: constant \"%s\" is not a tensor of the file", fn, ps.line, name);
                else if (dup) rc = TN__FAIL_INT("%s: line %d of the graph: constant \"%s\" is declared twice", fn, ps.line, name);
                else if (v && t->ndim != 0) rc = tn__gp_fail(&ps, "a wrapped number must be 0-d");
                else {
                    int x = tn__graph_add_value(g, TN__GV_CONST, t->dtype, t->ndim, t->shape);
                    if (x < 0) rc = -1;
                    else {
                        tn_tensor *c = v ? tn__copy_as(t, t->dtype, t->device) : tn_retain(t);   /* the flag is the tensor's: a wrapped number is a copy of its own */
                        if (c && v) c->is_wrapped_number = true;
                        g->vals[x].t = c;
                        g->vals[x].name = tn__strdup(name);
                        if (!c || !g->vals[x].name) rc = TN__FAIL_INT("%s: out of memory", fn);
                    }
                }
            }
            TN_FREE(name);
        } else if (!strcmp(tok, "node")) {
            rc = tn__graph_parse_node(&ps, g);
        } else if (!strcmp(tok, "output")) {
            if (tn__gp_int(&ps, 1, 64, &v, "the number of outputs")) { rc = -1; break; }
            g->noutputs = (int)v;
            if (!(g->outputs = (int *)TN_MALLOC((size_t)v * sizeof(int)))) { rc = TN__FAIL_INT("%s: out of memory", fn); break; }
            for (int i = 0; i < g->noutputs && rc == 0; i++) {
                if (tn__gp_int(&ps, 0, g->nvals - 1, &v, "an output value id")) rc = -1;
                else g->outputs[i] = (int)v;
            }
            nout_lines++;
        } else if (!strcmp(tok, "dynamic")) {
            if (!nout_lines || g->dyn_input >= 0) { rc = tn__gp_fail(&ps, "\"dynamic\" comes once, after the output line"); break; }
            if (tn__gp_int(&ps, 0, g->ninputs - 1, &v, "the dynamic input")) { rc = -1; break; }
            const tn__gval *x = &g->vals[g->inputs[v]];
            int64_t size;
            if (tn__gp_int(&ps, 0, INT64_MAX, &size, "the traced size")) { rc = -1; break; }
            if (x->ndim == 0 || x->shape[0] != size) { rc = tn__gp_fail(&ps, "the traced size is not the input's dim 0"); break; }
            g->dyn_input = (int)v;
            g->dyn_size = size;
        } else rc = tn__gp_fail(&ps, "expected input, const, node, output or dynamic");
        if (rc == 0) rc = tn__gp_end_line(&ps);
    }
    if (rc == 0 && !nout_lines) rc = TN__FAIL_INT("%s: the graph has no output line", fn);
    if (rc == 0 && !g->ninputs) rc = TN__FAIL_INT("%s: the graph has no inputs", fn);
    /* every tensor of the file must be a constant of the graph: nothing unexplained */
    if (rc == 0 && !(used = (bool *)TN_MALLOC((size_t)tn_dict_len(d) + 1))) rc = TN__FAIL_INT("%s: out of memory", fn);
    for (int i = 0; rc == 0 && i < tn_dict_len(d); i++) {
        used[i] = false;
        for (int x = 0; x < g->nvals && !used[i]; x++) used[i] = g->vals[x].kind == TN__GV_CONST && !strcmp(g->vals[x].name, tn_dict_key(d, i));
        if (!used[i]) rc = TN__FAIL_INT("%s: tensor \"%s\" of the file is not a constant of the graph", fn, tn_dict_key(d, i));
    }
    TN_FREE(used);
    if (rc) { tn_graph_free(g); return NULL; }
    return g;
}
TNDEF tn_graph *tn_graph_load(const char *path) {
    if (!path) return (tn_graph *)tn__error("tn_graph_load: the path is NULL");
    tn_dict *d = tn_safetensors_load(path);
    if (!d) return (tn_graph *)tn__error("tn_graph_load: %s", tn_last_error());
    tn_graph *g = tn__graph_from_dict("tn_graph_load", d);
    tn_dict_free(d);
    return g;
}
TNDEF tn_graph *tn_graph_load_buffer(const void *data, size_t size) {
    if (!data) return (tn_graph *)tn__error("tn_graph_load_buffer: the data is NULL");
    tn_dict *d = tn_safetensors_load_buffer(data, size);
    if (!d) return (tn_graph *)tn__error("tn_graph_load_buffer: %s", tn_last_error());
    tn_graph *g = tn__graph_from_dict("tn_graph_load_buffer", d);
    tn_dict_free(d);
    return g;
}
