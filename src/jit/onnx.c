/* ONNX: a graph exported as an ONNX model (opset 17), an ONNX model imported as a graph.

   The protobuf wire format is read and written here (no dependency): varints, fixed32/64
   and length-delimited fields. The reader never trusts a length: each is checked against
   the bytes left; messages nest only as ONNX's schema does for the fields we read
   (model > graph > node > attribute > tensor), so the depth is fixed by the code, and
   every size product goes through the checked helpers.

   Import runs each ONNX node as it is read on example tensors (zeros of the inputs' shapes):
   that gives every value's dtype and shape, and a node whose operands are all constants
   (initializers, Constant, Shape of a static shape and the arithmetic on it) is folded into
   a constant on the spot. The other nodes become the graph's nodes (the replay engine's
   ops: no second implementation of any op). */

#define TN__ONNX_OPSET 17
#define TN__ONNX_IR 8

/* ---- protobuf: writing ---- */
typedef struct tn__pbw { uint8_t *p; size_t n, cap; bool failed; } tn__pbw;
static void tn__pbw_put(tn__pbw *w, const void *d, size_t n) {
    if (w->failed || n == 0) return;
    if (n > SIZE_MAX / 2 - w->n) { w->failed = true; return; }
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->n + n) cap *= 2;
        uint8_t *p = (uint8_t *)TN_REALLOC(w->p, cap);
        if (!p) { w->failed = true; return; }
        w->p = p;
        w->cap = cap;
    }
    memcpy(w->p + w->n, d, n);
    w->n += n;
}
static void tn__pbw_free(tn__pbw *w) { TN_FREE(w->p); memset(w, 0, sizeof *w); }
static void tn__pbw_varint(tn__pbw *w, uint64_t v) {
    uint8_t b[10];
    int n = 0;
    do { b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)); v >>= 7; } while (v);
    tn__pbw_put(w, b, (size_t)n);
}
static void tn__pbw_tag(tn__pbw *w, int field, int wt) { tn__pbw_varint(w, ((uint64_t)field << 3) | (uint64_t)wt); }
static void tn__pbw_int(tn__pbw *w, int field, int64_t v) { tn__pbw_tag(w, field, 0); tn__pbw_varint(w, (uint64_t)v); }
static void tn__pbw_bytes(tn__pbw *w, int field, const void *d, size_t n) {
    tn__pbw_tag(w, field, 2);
    tn__pbw_varint(w, (uint64_t)n);
    tn__pbw_put(w, d, n);
}
static void tn__pbw_str(tn__pbw *w, int field, const char *s) { tn__pbw_bytes(w, field, s, strlen(s)); }
static void tn__pbw_float(tn__pbw *w, int field, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    tn__pbw_tag(w, field, 5);
    tn__pbw_put(w, b, 4);
}
/* A sub-message: its bytes (built in m) as a length-delimited field; m is freed. */
static void tn__pbw_msg(tn__pbw *w, int field, tn__pbw *m) {
    if (m->failed) w->failed = true;
    else tn__pbw_bytes(w, field, m->p, m->n);
    tn__pbw_free(m);
}

/* ---- protobuf: reading ---- */
typedef struct tn__pbs { const uint8_t *p; size_t n; } tn__pbs;   /* bytes of the buffer */
typedef struct tn__pbf {   /* one field */
    int field, wt;
    uint64_t v;    /* varint, fixed32, fixed64 */
    tn__pbs s;     /* length-delimited */
} tn__pbf;
static int tn__pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t r = 0;
    for (int k = 0; k < 10; k++) {
        if (*p >= end) return -1;
        uint8_t b = *(*p)++;
        if (k == 9 && b > 1) return -1;   /* past 64 bits */
        r |= (uint64_t)(b & 0x7f) << (7 * k);
        if (!(b & 0x80)) { *v = r; return 0; }
    }
    return -1;
}
/* The next field of message m (advanced past it): 1, 0 at its end, -1 when malformed. */
static int tn__pb_next(tn__pbs *m, tn__pbf *f) {
    if (m->n == 0) return 0;
    const uint8_t *p = m->p, *end = m->p + m->n;
    uint64_t key;
    if (tn__pb_varint(&p, end, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return -1;
    f->field = (int)(key >> 3);
    f->wt = (int)(key & 7);
    f->v = 0;
    f->s.p = NULL;
    f->s.n = 0;
    switch (f->wt) {
    case 0: if (tn__pb_varint(&p, end, &f->v)) return -1; break;
    case 1: case 5: {
        size_t w = f->wt == 1 ? 8 : 4;
        if ((size_t)(end - p) < w) return -1;
        for (size_t k = 0; k < w; k++) f->v |= (uint64_t)p[k] << (8 * k);
        p += w;
        break;
    }
    case 2: {
        uint64_t len;
        if (tn__pb_varint(&p, end, &len) || len > (uint64_t)(end - p)) return -1;
        f->s.p = p;
        f->s.n = (size_t)len;
        p += len;
        break;
    }
    default: return -1;   /* groups (3, 4) are not in ONNX */
    }
    m->n -= (size_t)(p - m->p);
    m->p = p;
    return 1;
}
static bool tn__pbs_eq(tn__pbs s, const char *c) { size_t n = strlen(c); return s.n == n && (n == 0 || !memcmp(s.p, c, n)); }
static char *tn__pbs_dup(tn__pbs s) {
    char *r = (char *)TN_MALLOC(s.n + 1);
    if (!r) return NULL;
    if (s.n) memcpy(r, s.p, s.n);
    r[s.n] = 0;
    return r;
}
/* A name for messages: printable, cut at 60 characters. */
static const char *tn__pbs_show(tn__pbs s, char *buf, size_t cap) {
    size_t n = 0;
    for (size_t k = 0; k < s.n && n + 4 < cap && k < 60; k++) buf[n++] = s.p[k] >= 32 && s.p[k] < 127 ? (char)s.p[k] : '?';
    if (s.n > 60 && n + 4 < cap) { memcpy(buf + n, "...", 3); n += 3; }
    buf[n] = 0;
    return buf;
}

/* ---- dtypes ---- */
enum { TN__OX_FLOAT = 1, TN__OX_UINT8 = 2, TN__OX_INT8 = 3, TN__OX_INT16 = 5, TN__OX_INT32 = 6, TN__OX_INT64 = 7, TN__OX_BOOL = 9, TN__OX_FLOAT16 = 10, TN__OX_DOUBLE = 11 };
static int tn__onnx_type(tn_dtype d) {
    switch (d) {
    case TN_F32: return TN__OX_FLOAT;
    case TN_F64: return TN__OX_DOUBLE;
    case TN_I32: return TN__OX_INT32;
    case TN_I64: return TN__OX_INT64;
    case TN_U8: return TN__OX_UINT8;
    case TN_I8: return TN__OX_INT8;
    case TN_I16: return TN__OX_INT16;
    case TN_BOOL: return TN__OX_BOOL;
    default: return 0;
    }
}
static int tn__onnx_dtype(int64_t t, tn_dtype *d) {
    switch (t) {
    case TN__OX_FLOAT: *d = TN_F32; return 0;
    case TN__OX_DOUBLE: *d = TN_F64; return 0;
    case TN__OX_INT32: *d = TN_I32; return 0;
    case TN__OX_INT64: *d = TN_I64; return 0;
    case TN__OX_UINT8: *d = TN_U8; return 0;
    case TN__OX_INT8: *d = TN_I8; return 0;
    case TN__OX_INT16: *d = TN_I16; return 0;
    case TN__OX_BOOL: *d = TN_BOOL; return 0;
    default: return -1;
    }
}
static const char *tn__onnx_type_name(int64_t t) {
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
                                        "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    return t >= 0 && t <= 16 ? names[t] : "an unknown type";
}
static bool tn__little_endian(void) { const uint16_t one = 1; uint8_t b; memcpy(&b, &one, 1); return b == 1; }

/* ======================================================================= */
/* export                                                                  */
/* ======================================================================= */
typedef struct tn__oxe {
    const char *fn;
    const tn_graph *g;
    tn__pbw nodes, inits;         /* the GraphProto's node and initializer fields */
    char **names;                 /* per value: its ONNX name */
    tn_tensor **fold;             /* per value: its value when known at export (constants, nodes of constants) */
    bool *written;                /* per value: initializer written */
    int ntmp;
    int rc;
} tn__oxe;

static void tn__ox_tensor_proto(tn__pbw *w, const char *name, tn_tensor *t) {
    tn_tensor *c = tn_contiguous(t->device == TN_CPU ? t : tn_to(t, TN_CPU));   /* a graph traced on the GPU: its constants' bytes from the host; the export's scope holds it */
    if (!c) { w->failed = true; return; }
    for (int d = 0; d < c->ndim; d++) tn__pbw_int(w, 1, c->shape[d]);
    tn__pbw_int(w, 2, tn__onnx_type(c->dtype));
    tn__pbw_str(w, 8, name);
    tn__pbw_bytes(w, 9, tn_data_ptr(c), (size_t)tn_numel(c) * tn_dtype_size(c->dtype));   /* raw_data: little-endian (checked by the caller) */
}
/* An initializer of tensor t (CPU) named name. */
static void tn__ox_init(tn__oxe *e, const char *name, tn_tensor *t) {
    tn__pbw m;
    memset(&m, 0, sizeof m);
    tn__ox_tensor_proto(&m, name, t);
    tn__pbw_msg(&e->inits, 5, &m);
}
/* A new temporary's name (in a static ring: used at once by the caller). */
static const char *tn__ox_tmp(tn__oxe *e, char buf[32]) {
    snprintf(buf, 32, "t%d", e->ntmp++);
    return buf;
}
/* A constant tensor as an initializer; returns its name (buf). */
static const char *tn__ox_const(tn__oxe *e, tn_tensor *t, char buf[32]) {
    tn__ox_tmp(e, buf);
    if (t) tn__ox_init(e, buf, t);
    else e->nodes.failed = true;
    return buf;
}
static const char *tn__ox_scalar(tn__oxe *e, double v, tn_dtype dt, char buf[32]) {
    tn_tensor *t = tn_full(NULL, 0, v, dt);
    return tn__ox_const(e, t, buf);
}
static const char *tn__ox_ints(tn__oxe *e, const int64_t *v, int n, char buf[32]) {
    const int64_t shape[1] = {n};
    tn_tensor *t = tn_from_data(v, shape, 1, TN_I64);
    return tn__ox_const(e, t, buf);
}
/* Attributes, written into a node being built. */
static void tn__ox_attr_int(tn__pbw *a, const char *name, int64_t v) {
    tn__pbw m;
    memset(&m, 0, sizeof m);
    tn__pbw_str(&m, 1, name);
    tn__pbw_int(&m, 20, 2);
    tn__pbw_int(&m, 3, v);
    tn__pbw_msg(a, 5, &m);
}
static void tn__ox_attr_float(tn__pbw *a, const char *name, double v) {
    tn__pbw m;
    memset(&m, 0, sizeof m);
    tn__pbw_str(&m, 1, name);
    tn__pbw_int(&m, 20, 1);
    tn__pbw_float(&m, 2, (float)v);
    tn__pbw_msg(a, 5, &m);
}
static void tn__ox_attr_str(tn__pbw *a, const char *name, const char *v) {
    tn__pbw m;
    memset(&m, 0, sizeof m);
    tn__pbw_str(&m, 1, name);
    tn__pbw_int(&m, 20, 3);
    tn__pbw_str(&m, 4, v);
    tn__pbw_msg(a, 5, &m);
}
static void tn__ox_attr_ints(tn__pbw *a, const char *name, const int64_t *v, int n) {
    tn__pbw m;
    memset(&m, 0, sizeof m);
    tn__pbw_str(&m, 1, name);
    tn__pbw_int(&m, 20, 7);
    for (int k = 0; k < n; k++) tn__pbw_int(&m, 8, v[k]);
    tn__pbw_msg(a, 5, &m);
}
/* A node: op_type, inputs ("" for an absent optional one), one output, attributes (attrs
   holds attribute fields already, or is NULL). */
static void tn__ox_node_outs(tn__oxe *e, const char *op, const char *const *in, int nin, const char *const *outs, int nout, tn__pbw *attrs) {
    tn__pbw m;
    memset(&m, 0, sizeof m);
    for (int k = 0; k < nin; k++) tn__pbw_str(&m, 1, in[k] ? in[k] : "");
    for (int k = 0; k < nout; k++) tn__pbw_str(&m, 2, outs[k] ? outs[k] : "");
    char nm[48];
    snprintf(nm, sizeof nm, "%s_%d", op, e->ntmp++);
    tn__pbw_str(&m, 3, nm);
    tn__pbw_str(&m, 4, op);
    if (attrs) { tn__pbw_put(&m, attrs->p, attrs->n); if (attrs->failed) m.failed = true; tn__pbw_free(attrs); }
    tn__pbw_msg(&e->nodes, 1, &m);
}
static void tn__ox_node(tn__oxe *e, const char *op, const char *const *in, int nin, const char *out, tn__pbw *attrs) {
    tn__ox_node_outs(e, op, in, nin, &out, 1, attrs);
}
static void tn__ox_node1(tn__oxe *e, const char *op, const char *a, const char *out) { tn__ox_node(e, op, &a, 1, out, NULL); }
static void tn__ox_node2(tn__oxe *e, const char *op, const char *a, const char *b, const char *out) {
    const char *in[2] = {a, b};
    tn__ox_node(e, op, in, 2, out, NULL);
}

/* The ONNX name of value v as an operand: a constant's initializer is written on first use. */
static const char *tn__ox_use(tn__oxe *e, int v) {
    if (v < 0) return "";
    if (e->fold[v] && !e->written[v]) { tn__ox_init(e, e->names[v], e->fold[v]); e->written[v] = true; }
    return e->names[v];
}
/* Operand v converted to dtype dt (a Cast, or a converted initializer). */
static const char *tn__ox_as(tn__oxe *e, int v, tn_dtype dt, char buf[32]) {
    if (v < 0) return "";
    if (e->g->vals[v].dtype == dt) return tn__ox_use(e, v);
    if (e->fold[v]) return tn__ox_const(e, tn_to_dtype(e->fold[v], dt), buf);
    tn__pbw a;
    memset(&a, 0, sizeof a);
    tn__ox_attr_int(&a, "to", tn__onnx_type(dt));
    const char *in = tn__ox_use(e, v);
    tn__ox_tmp(e, buf);
    tn__ox_node(e, "Cast", &in, 1, buf, &a);
    return buf;
}

static const char *tn__ox_unary_name(int op) {
    switch (op) {
    case RELU: return "Relu"; case SIGMOID: return "Sigmoid"; case TANH: return "Tanh"; case EXP: return "Exp"; case LOG: return "Log";
    case SQRT: return "Sqrt"; case NEG: return "Neg"; case ABS: return "Abs"; case ERF: return "Erf"; case FLOOR: return "Floor";
    case CEIL: return "Ceil"; case RECIPROCAL: return "Reciprocal"; case SIN: return "Sin"; case COS: return "Cos"; case TAN: return "Tan";
    case ASIN: return "Asin"; case ACOS: return "Acos"; case ATAN: return "Atan"; case SINH: return "Sinh"; case COSH: return "Cosh";
    case ASINH: return "Asinh"; case ACOSH: return "Acosh"; case ATANH: return "Atanh"; case SIGN: return "Sign"; case ROUND: return "Round";
    case HARDSWISH: return "HardSwish"; case LOGICAL_NOT: return "Not"; case ISNAN: return "IsNaN";
    default: return NULL;
    }
}
static const char *tn__ox_binary_name(int op) {
    switch (op) {
    case ADD: return "Add"; case SUB: return "Sub"; case MUL: return "Mul"; case DIV: return "Div"; case POW: return "Pow";
    case MAXIMUM: return "Max"; case MINIMUM: return "Min"; case EQ: return "Equal"; case LT: return "Less"; case GT: return "Greater";
    case LE: return "LessOrEqual"; case GE: return "GreaterOrEqual"; case LOGICAL_AND: return "And"; case LOGICAL_OR: return "Or";
    case LOGICAL_XOR: return "Xor";
    default: return NULL;
    }
}

/* The RNN layers' fused recurrences as ONNX's LSTM, GRU or RNN over gi = x W_ih^T + b (the
   projection is the graph's own nodes): X = gi, W a permutation matrix [1, GH, GH] from our
   gate order (LSTM i, f, g, o; GRU r, z, n) to ONNX's (i, o, f, c; z, r, h), R = w_hh's rows
   in ONNX's order; the GRU's b_hh as B's recurrence half (linear_before_reset=1, which is
   PyTorch's GRU). The LSTM's result [L + 1, N, H] is Y's h_t then Y_c; the others' Y. */
static int tn__ox_rnn(tn__oxe *e, const tn__gnode *n, const char *x, const char *out) {
    const tn_graph *g = e->g;
    const bool lstm = n->op == J_LSTM, gru = !lstm && n->i[0] == TN__RNN_GRU;
    const tn_dtype dt = g->vals[n->out].dtype;
    const int64_t H = g->vals[n->in[1]].shape[1], G = lstm ? 4 : gru ? 3 : 1, GH = G * H;
    static const int64_t from_lstm[4] = {0, 3, 1, 2}, from_gru[3] = {1, 0, 2}, from_rnn[1] = {0};   /* ONNX's gate block j is our block from[j] */
    const int64_t *from = lstm ? from_lstm : gru ? from_gru : from_rnn;
    const int wv = n->in[lstm ? 3 : 2];
    char b0[32], b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], b8[32], b9[32];
    int64_t *idx = (int64_t *)tn__malloc_n(e->fn, GH, sizeof(int64_t));
    tn_tensor *W = tn_zeros(TN_SHAPE(1, GH, GH), dt);
    if (!idx || !W) { TN_FREE(idx); return -1; }
    for (int64_t j = 0; j < G; j++)
        for (int64_t r = 0; r < H; r++) {
            idx[j * H + r] = from[j] * H + r;
            if (dt == TN_F32) ((float *)tn_data_ptr(W))[(j * H + r) * GH + from[j] * H + r] = 1;
            else ((double *)tn_data_ptr(W))[(j * H + r) * GH + from[j] * H + r] = 1;
        }
    tn_tensor *ix = tn_from_data(idx, TN_SHAPE(GH), TN_I64);
    TN_FREE(idx);
    const char *perm = tn__ox_const(e, ix, b0);
    tn__pbw a;
    memset(&a, 0, sizeof a);
    tn__ox_attr_int(&a, "axis", 0);
    const char *gin[2] = {tn__ox_use(e, wv), perm};
    tn__ox_node(e, "Gather", gin, 2, tn__ox_tmp(e, b1), &a);   /* b1: w_hh's rows, reordered */
    const int64_t rs[3] = {1, GH, H}, hs[3] = {1, -1, H}, ys[3] = {0, -1, H}, bs[2] = {1, 2 * GH};
    tn__ox_node2(e, "Reshape", b1, tn__ox_ints(e, rs, 3, b2), tn__ox_tmp(e, b3));                       /* b3: R */
    tn__ox_node2(e, "Reshape", tn__ox_use(e, n->in[1]), tn__ox_ints(e, hs, 3, b2), tn__ox_tmp(e, b4));   /* b4: initial_h */
    if (lstm) tn__ox_node2(e, "Reshape", tn__ox_use(e, n->in[2]), tn__ox_ints(e, hs, 3, b2), tn__ox_tmp(e, b5));   /* b5: initial_c */
    if (gru) {   /* b6: B = [0 (Wb), b_hh reordered (Rb)] */
        memset(&a, 0, sizeof a);
        tn__ox_attr_int(&a, "axis", 0);
        const char *bin[2] = {tn__ox_use(e, n->in[3]), perm};
        tn__ox_node(e, "Gather", bin, 2, tn__ox_tmp(e, b7), &a);
        memset(&a, 0, sizeof a);
        tn__ox_attr_int(&a, "axis", 0);
        const char *cin[2] = {tn__ox_const(e, tn_zeros(TN_SHAPE(GH), dt), b8), b7};
        tn__ox_node(e, "Concat", cin, 2, tn__ox_tmp(e, b9), &a);
        tn__ox_node2(e, "Reshape", b9, tn__ox_ints(e, bs, 2, b2), tn__ox_tmp(e, b6));
    }
    const char *lin[7] = {x, tn__ox_const(e, W, b2), b3, gru ? b6 : "", "", b4, lstm ? b5 : ""};
    const char *louts[3] = {tn__ox_tmp(e, b7), "", lstm ? tn__ox_tmp(e, b8) : ""};   /* Y, -, Y_c */
    memset(&a, 0, sizeof a);
    tn__ox_attr_int(&a, "hidden_size", H);
    if (n->i[lstm ? 0 : 1]) tn__ox_attr_str(&a, "direction", "reverse");
    if (gru) tn__ox_attr_int(&a, "linear_before_reset", 1);
    if (!lstm && !gru && n->i[0] == TN__RNN_RELU) {
        tn__pbw m;
        memset(&m, 0, sizeof m);
        tn__pbw_str(&m, 1, "activations");
        tn__pbw_int(&m, 20, 8);   /* STRINGS */
        tn__pbw_str(&m, 9, "Relu");
        tn__pbw_msg(&a, 5, &m);
    }
    tn__ox_node_outs(e, lstm ? "LSTM" : gru ? "GRU" : "RNN", lin, lstm ? 7 : 6, louts, lstm ? 3 : 1, &a);
    if (!lstm) { tn__ox_node2(e, "Reshape", b7, tn__ox_ints(e, ys, 3, b2), out); return 0; }   /* [L, 1, N, H] -> [L, N, H] */
    tn__ox_node2(e, "Reshape", b7, tn__ox_ints(e, ys, 3, b2), tn__ox_tmp(e, b9));
    const char *cin[2] = {b9, b8};
    memset(&a, 0, sizeof a);
    tn__ox_attr_int(&a, "axis", 0);
    tn__ox_node(e, "Concat", cin, 2, out, &a);
    return 0;
}

/* One graph node as ONNX nodes whose last output is `out`. 0, or -1 with an error. */
static int tn__ox_emit(tn__oxe *e, const tn__gnode *n, const char *out) {
    const tn_graph *g = e->g;
    const tn__gval *ov = &g->vals[n->out];
    const tn_dtype dt = ov->dtype;
    char b0[32], b1[32], b2[32], b3[32], b4[32];
    const char *x = n->nin > 0 ? tn__ox_use(e, n->in[0]) : "";
    tn__pbw a;
    memset(&a, 0, sizeof a);
    switch (n->op) {
    case J_UNARY: {
        const char *nm = tn__ox_unary_name(n->sub);
        const char *xf = tn__ox_as(e, n->in[0], tn_dtype_is_floating(dt) ? dt : g->vals[n->in[0]].dtype, b0);
        if (nm && (n->sub != ROUND || tn_dtype_is_floating(dt))) { tn__ox_node1(e, nm, xf, out); return 0; }
        switch (n->sub) {
        case LEAKY_RELU: tn__ox_attr_float(&a, "alpha", n->d[0]); tn__ox_node(e, "LeakyRelu", &xf, 1, out, &a); return 0;
        case ELU:
            if (n->d[2] == 1 && n->d[1] == 1) { tn__ox_attr_float(&a, "alpha", n->d[0]); tn__ox_node(e, "Elu", &xf, 1, out, &a); return 0; }
            if (n->d[2] == 1) {
                tn__ox_attr_float(&a, "alpha", n->d[0]); tn__ox_attr_float(&a, "gamma", n->d[1]);
                tn__ox_node(e, "Selu", &xf, 1, out, &a);
                return 0;
            }
            break;
        case SOFTPLUS:
            if (n->d[0] == 1) { tn__ox_node1(e, "Softplus", xf, out); return 0; }   /* the threshold only guards overflow */
            break;
        case HARDSIGMOID:
            tn__ox_attr_float(&a, "alpha", 1.0 / 6); tn__ox_attr_float(&a, "beta", 0.5);
            tn__ox_node(e, "HardSigmoid", &xf, 1, out, &a);
            return 0;
        case CLAMP: case HARDTANH: {
            const char *in[3] = {xf, isinf(n->d[0]) && n->d[0] < 0 ? "" : tn__ox_scalar(e, n->d[0], dt, b1),
                                 isinf(n->d[1]) && n->d[1] > 0 ? "" : tn__ox_scalar(e, n->d[1], dt, b2)};
            tn__ox_node(e, "Clip", in, 3, out, NULL);
            return 0;
        }
        case SQUARE: tn__ox_node2(e, "Mul", xf, xf, out); return 0;
        case RSQRT: tn__ox_node1(e, "Sqrt", xf, tn__ox_tmp(e, b1)); tn__ox_node1(e, "Reciprocal", b1, out); return 0;
        case SILU: tn__ox_node1(e, "Sigmoid", xf, tn__ox_tmp(e, b1)); tn__ox_node2(e, "Mul", xf, b1, out); return 0;
        case MISH:
            tn__ox_node1(e, "Softplus", xf, tn__ox_tmp(e, b1)); tn__ox_node1(e, "Tanh", b1, tn__ox_tmp(e, b2));
            tn__ox_node2(e, "Mul", xf, b2, out);
            return 0;
        case GELU:   /* x * 0.5 * (1 + erf(x / sqrt(2))): Gelu is opset 20 */
            tn__ox_node2(e, "Div", xf, tn__ox_scalar(e, 1.4142135623730951, dt, b1), tn__ox_tmp(e, b2));
            tn__ox_node1(e, "Erf", b2, tn__ox_tmp(e, b3));
            tn__ox_node2(e, "Add", b3, tn__ox_scalar(e, 1, dt, b1), tn__ox_tmp(e, b4));
            tn__ox_node2(e, "Mul", xf, b4, tn__ox_tmp(e, b2));
            tn__ox_node2(e, "Mul", b2, tn__ox_scalar(e, 0.5, dt, b1), out);
            return 0;
        case GELU_TANH:   /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
            tn__ox_node2(e, "Mul", xf, xf, tn__ox_tmp(e, b1));
            tn__ox_node2(e, "Mul", b1, xf, tn__ox_tmp(e, b2));
            tn__ox_node2(e, "Mul", b2, tn__ox_scalar(e, 0.044715, dt, b1), tn__ox_tmp(e, b3));
            tn__ox_node2(e, "Add", xf, b3, tn__ox_tmp(e, b2));
            tn__ox_node2(e, "Mul", b2, tn__ox_scalar(e, 0.7978845608028654, dt, b1), tn__ox_tmp(e, b3));
            tn__ox_node1(e, "Tanh", b3, tn__ox_tmp(e, b2));
            tn__ox_node2(e, "Add", b2, tn__ox_scalar(e, 1, dt, b1), tn__ox_tmp(e, b3));
            tn__ox_node2(e, "Mul", xf, b3, tn__ox_tmp(e, b2));
            tn__ox_node2(e, "Mul", b2, tn__ox_scalar(e, 0.5, dt, b1), out);
            return 0;
        default: break;
        }
        return TN__FAIL_INT("%s: aten::%s has no ONNX export yet", e->fn, tn_unary_op_name((tn_unary_op)n->sub));
    }
    case J_BINARY: {
        const char *nm = tn__ox_binary_name(n->sub);
        if (!nm) return TN__FAIL_INT("%s: aten::%s has no ONNX export yet", e->fn, tn_binary_op_name((tn_binary_op)n->sub));
        /* ONNX wants one operand type: the promoted one (comparisons and logic ops: theirs) */
        tn_dtype t = dt;
        if (dt == TN_BOOL) t = tn_promote_types(g->vals[n->in[0]].dtype, g->vals[n->in[1]].dtype);
        if (n->sub >= LOGICAL_AND && n->sub <= LOGICAL_XOR) t = TN_BOOL;
        const char *p = tn__ox_as(e, n->in[0], t, b0), *q = tn__ox_as(e, n->in[1], t, b1);
        if ((n->sub == ADD || n->sub == SUB) && n->d[0] != 1) {
            tn__ox_node2(e, "Mul", q, tn__ox_scalar(e, n->d[0], t, b2), tn__ox_tmp(e, b3));
            q = b3;
        }
        tn__ox_node2(e, nm, p, q, out);
        return 0;
    }
    case J_TERNARY: {
        if (n->sub == WHERE) {
            const char *in[3] = {tn__ox_as(e, n->in[0], TN_BOOL, b0), tn__ox_as(e, n->in[1], dt, b1), tn__ox_as(e, n->in[2], dt, b2)};
            tn__ox_node(e, "Where", in, 3, out, NULL);
            return 0;
        }
        const char *p = tn__ox_as(e, n->in[0], dt, b0), *q = tn__ox_as(e, n->in[1], dt, b1), *r = tn__ox_as(e, n->in[2], dt, b2);
        if (n->sub == LERP) {   /* a + w (b - a) */
            tn__ox_node2(e, "Sub", q, p, tn__ox_tmp(e, b3));
            tn__ox_node2(e, "Mul", r, b3, tn__ox_tmp(e, b4));
            tn__ox_node2(e, "Add", p, b4, out);
            return 0;
        }
        /* addcmul / addcdiv: a + value * (b op c) */
        tn__ox_node2(e, n->sub == ADDCMUL ? "Mul" : "Div", q, r, tn__ox_tmp(e, b3));
        tn__ox_node2(e, "Mul", b3, tn__ox_scalar(e, n->d[0], dt, b1), tn__ox_tmp(e, b4));
        tn__ox_node2(e, "Add", p, b4, out);
        return 0;
    }
    case J_ADDMM: {
        const char *in[3] = {tn__ox_use(e, n->in[1]), tn__ox_use(e, n->in[2]), x};
        tn__ox_attr_float(&a, "alpha", n->d[1]);
        tn__ox_attr_float(&a, "beta", n->d[0]);
        tn__ox_node(e, "Gemm", in, 3, out, &a);
        return 0;
    }
    case J_BADDBMM:   /* beta * input + alpha * (b1 @ b2) */
        tn__ox_node2(e, "MatMul", tn__ox_use(e, n->in[1]), tn__ox_use(e, n->in[2]), tn__ox_tmp(e, b0));
        tn__ox_node2(e, "Mul", b0, tn__ox_scalar(e, n->d[1], dt, b1), tn__ox_tmp(e, b2));
        tn__ox_node2(e, "Mul", x, tn__ox_scalar(e, n->d[0], dt, b1), tn__ox_tmp(e, b3));
        tn__ox_node2(e, "Add", b3, b2, out);
        return 0;
    case J_MM: case J_BMM: case J_MV: case J_DOT: case J_MATMUL: tn__ox_node2(e, "MatMul", x, tn__ox_use(e, n->in[1]), out); return 0;
    case J_RESHAPE: {
        int64_t s[TN_MAX_DIMS];
        memcpy(s, n->i, (size_t)n->ni * sizeof(int64_t));
        if (g->dyn_input >= 0 && n->ni > 0 && s[0] == g->dyn_size) s[0] = -1;   /* the batch: whatever the other sizes leave */
        tn__ox_node2(e, "Reshape", x, tn__ox_ints(e, s, n->ni, b0), out);
        return 0;
    }
    case J_EXPAND: {
        int64_t s[TN_MAX_DIMS];
        memcpy(s, n->i, (size_t)n->ni * sizeof(int64_t));
        const tn__gval *iv = &g->vals[n->in[0]];
        for (int d = 0; d < n->ni; d++) {   /* 1 keeps the input's size (bidirectional broadcasting): a dynamic batch follows */
            const int di = d - (n->ni - iv->ndim);
            if (di >= 0 && iv->shape[di] == s[d]) s[d] = 1;
        }
        tn__ox_node2(e, "Expand", x, tn__ox_ints(e, s, n->ni, b0), out);
        return 0;
    }
    case J_PERMUTE: tn__ox_attr_ints(&a, "perm", n->i, n->ni); tn__ox_node(e, "Transpose", &x, 1, out, &a); return 0;
    case J_SLICE: {
        const int64_t st = n->i[1], en = n->i[2], ax = n->i[0], step = n->i[3];
        const char *in[5] = {x, tn__ox_ints(e, &st, 1, b0), tn__ox_ints(e, &en, 1, b1), tn__ox_ints(e, &ax, 1, b2), tn__ox_ints(e, &step, 1, b3)};
        tn__ox_node(e, "Slice", in, 5, out, NULL);
        return 0;
    }
    case J_SELECT: {
        tn_tensor *ix = tn_full(NULL, 0, (double)n->i[1], TN_I64);
        tn__ox_attr_int(&a, "axis", n->i[0]);
        const char *in[2] = {x, tn__ox_const(e, ix, b0)};
        tn__ox_node(e, "Gather", in, 2, out, &a);
        return 0;
    }
    case J_SUM: case J_MEAN: {
        const bool all = n->ni == 1;
        tn__ox_attr_int(&a, "keepdims", all ? 0 : n->i[n->ni - 1]);
        if (n->op == J_MEAN) {   /* opset 17: axes is an attribute */
            if (!all) tn__ox_attr_ints(&a, "axes", n->i, n->ni - 1);
            tn__ox_node(e, "ReduceMean", &x, 1, out, &a);
        } else {
            const char *in[2] = {x, all ? "" : tn__ox_ints(e, n->i, n->ni - 1, b0)};
            tn__ox_node(e, "ReduceSum", in, all ? 1 : 2, out, &a);
        }
        return 0;
    }
    case J_SOFTMAX: case J_LOG_SOFTMAX:
        tn__ox_attr_int(&a, "axis", n->i[0]);
        tn__ox_node(e, n->op == J_SOFTMAX ? "Softmax" : "LogSoftmax", &x, 1, out, &a);
        return 0;
    case J_CAT: {
        const char **in = (const char **)TN_MALLOC((size_t)n->nin * sizeof *in);
        if (!in) return TN__FAIL_INT("%s: out of memory", e->fn);
        for (int k = 0; k < n->nin; k++) in[k] = tn__ox_use(e, n->in[k]);
        tn__ox_attr_int(&a, "axis", n->i[0]);
        tn__ox_node(e, "Concat", in, n->nin, out, &a);
        TN_FREE(in);
        return 0;
    }
    case J_CLONE: tn__ox_node1(e, "Identity", x, out); return 0;
    case J_TO: tn__ox_attr_int(&a, "to", tn__onnx_type((tn_dtype)n->i[0])); tn__ox_node(e, "Cast", &x, 1, out, &a); return 0;
    case J_INDEX_SELECT: {
        const char *in[2] = {x, tn__ox_use(e, n->in[1])};
        tn__ox_attr_int(&a, "axis", n->i[0]);
        tn__ox_node(e, "Gather", in, 2, out, &a);
        return 0;
    }
    case J_CONV2D: {
        const tn__gval *w = &g->vals[n->in[1]];
        const int64_t pads[4] = {n->i[2], n->i[3], n->i[2], n->i[3]};
        tn__ox_attr_ints(&a, "kernel_shape", w->shape + 2, 2);
        tn__ox_attr_ints(&a, "strides", n->i, 2);
        tn__ox_attr_ints(&a, "pads", pads, 4);
        tn__ox_attr_ints(&a, "dilations", n->i + 4, 2);
        tn__ox_attr_int(&a, "group", n->i[6]);
        const char *in[3] = {x, tn__ox_use(e, n->in[1]), tn__ox_use(e, n->in[2])};
        tn__ox_node(e, "Conv", in, n->in[2] >= 0 ? 3 : 2, out, &a);
        return 0;
    }
    case J_MAX_POOL2D: case J_AVG_POOL2D: {
        const bool mx = n->op == J_MAX_POOL2D;
        const int64_t pads[4] = {n->i[4], n->i[5], n->i[4], n->i[5]};
        tn__ox_attr_ints(&a, "kernel_shape", n->i, 2);
        tn__ox_attr_ints(&a, "strides", n->i + 2, 2);
        tn__ox_attr_ints(&a, "pads", pads, 4);
        if (mx) tn__ox_attr_ints(&a, "dilations", n->i + 6, 2);
        tn__ox_attr_int(&a, "ceil_mode", mx ? n->i[8] : n->i[6]);
        if (!mx) tn__ox_attr_int(&a, "count_include_pad", n->i[7]);
        tn__ox_node(e, mx ? "MaxPool" : "AveragePool", &x, 1, out, &a);
        return 0;
    }
    case J_LSTM: case J_RNN_SEQ: return tn__ox_rnn(e, n, x, out);
    case J_BATCH_NORM: {   /* ours: x, mean, var, weight, bias; ONNX's: X, scale, B, mean, var */
        const int64_t c = g->vals[n->in[0]].ndim > 1 ? g->vals[n->in[0]].shape[1] : 1;
        const char *sc = n->in[3] >= 0 ? tn__ox_use(e, n->in[3]) : tn__ox_const(e, tn_ones(&c, 1, dt), b0);
        const char *bi = n->in[4] >= 0 ? tn__ox_use(e, n->in[4]) : tn__ox_const(e, tn_zeros(&c, 1, dt), b1);
        const char *in[5] = {x, sc, bi, tn__ox_use(e, n->in[1]), tn__ox_use(e, n->in[2])};
        tn__ox_attr_float(&a, "epsilon", n->d[1]);
        tn__ox_attr_float(&a, "momentum", 1 - n->d[0]);
        tn__ox_node(e, "BatchNormalization", in, 5, out, &a);
        return 0;
    }
    case J_LAYER_NORM: {
        const tn__gval *iv = &g->vals[n->in[0]];
        const int k = (int)n->i[0];
        const char *sc = n->in[1] >= 0 ? tn__ox_use(e, n->in[1]) : tn__ox_const(e, tn_ones(iv->shape + iv->ndim - k, k, dt), b0);
        const char *in[3] = {x, sc, tn__ox_use(e, n->in[2])};
        tn__ox_attr_int(&a, "axis", -k);
        tn__ox_attr_float(&a, "epsilon", n->d[0]);
        tn__ox_node(e, "LayerNormalization", in, n->in[2] >= 0 ? 3 : 2, out, &a);
        return 0;
    }
    case J_SDPA: {   /* softmax(q k^T * scale + mask) v: the primitives */
        const tn__gval *q = &g->vals[n->in[0]];
        const int nd = q->ndim;
        if (nd < 2) return TN__FAIL_INT("%s: scaled_dot_product_attention on a %d-d query", e->fn, nd);
        int64_t perm[TN_MAX_DIMS];
        for (int d = 0; d < nd; d++) perm[d] = d;
        perm[nd - 2] = nd - 1; perm[nd - 1] = nd - 2;
        const double scale = n->d[0] == n->d[0] && n->d[0] != 0 ? n->d[0] : 1 / sqrt((double)q->shape[nd - 1]);
        tn__ox_attr_ints(&a, "perm", perm, nd);
        const char *k = tn__ox_use(e, n->in[1]);
        tn__ox_node(e, "Transpose", &k, 1, tn__ox_tmp(e, b0), &a);
        tn__ox_node2(e, "MatMul", x, b0, tn__ox_tmp(e, b1));
        tn__ox_node2(e, "Mul", b1, tn__ox_scalar(e, scale, dt, b2), tn__ox_tmp(e, b3));
        const char *s = b3;
        if (n->d[1] != 0) {   /* causal: -inf above the diagonal (the static sizes) */
            const tn__gval *kv = &g->vals[n->in[1]];
            const int64_t L = q->shape[nd - 2], S = kv->shape[kv->ndim - 2];
            const int64_t ls[2] = {L, S};
            tn_diag_fn_opts dg = TN_DEFAULTS(tn_diag_fn_opts);
            dg.diagonal = 1;
            tn_tensor *m = tn_triu_opts(tn_full(ls, 2, -INFINITY, dt), dg);
            tn__ox_node2(e, "Add", s, tn__ox_const(e, m, b2), tn__ox_tmp(e, b4));
            s = b4;
        }
        if (n->nin > 3 && n->in[3] >= 0) {
            const tn__gval *mv = &g->vals[n->in[3]];
            const char *mk = tn__ox_use(e, n->in[3]);
            if (mv->dtype == TN_BOOL) {   /* True: attend */
                const char *in[3] = {mk, s, tn__ox_scalar(e, -INFINITY, dt, b2)};
                tn__ox_node(e, "Where", in, 3, tn__ox_tmp(e, b1), NULL);
            } else tn__ox_node2(e, "Add", s, tn__ox_as(e, n->in[3], dt, b2), tn__ox_tmp(e, b1));
            s = b1;
        }
        tn__ox_attr_int(&a, "axis", -1);
        tn__ox_node(e, "Softmax", &s, 1, tn__ox_tmp(e, b0), &a);
        tn__ox_node2(e, "MatMul", b0, tn__ox_use(e, n->in[2]), out);
        return 0;
    }
    default: break;
    }
    char name[64];
    tn__graph_op_name(n, name, sizeof name);
    return TN__FAIL_INT("%s: %s has no ONNX export yet", e->fn, name);
}

/* Names from "a,b,c" (NULL or ""): the k-th, or NULL. */
static char *tn__ox_list_item(const char *list, int k) {
    if (!list || !*list) return NULL;
    const char *s = list;
    for (int i = 0; i < k; i++) { s = strchr(s, ','); if (!s) return NULL; s++; }
    const char *e = strchr(s, ',');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    while (n && *s == ' ') { s++; n--; }
    while (n && s[n - 1] == ' ') n--;
    if (!n) return NULL;
    char *r = (char *)TN_MALLOC(n + 1);
    if (!r) return NULL;
    memcpy(r, s, n);
    r[n] = 0;
    return r;
}
static void tn__ox_value_info(tn__pbw *w, int field, const char *name, const tn__gval *v, bool dyn0) {
    tn__pbw vi, tp, tt, sh;
    memset(&vi, 0, sizeof vi); memset(&tp, 0, sizeof tp); memset(&tt, 0, sizeof tt); memset(&sh, 0, sizeof sh);
    for (int d = 0; d < v->ndim; d++) {
        tn__pbw dim;
        memset(&dim, 0, sizeof dim);
        if (d == 0 && dyn0) tn__pbw_str(&dim, 2, "batch");
        else tn__pbw_int(&dim, 1, v->shape[d]);
        tn__pbw_msg(&sh, 1, &dim);
    }
    tn__pbw_int(&tt, 1, tn__onnx_type(v->dtype));
    tn__pbw_msg(&tt, 2, &sh);
    tn__pbw_msg(&tp, 1, &tt);
    tn__pbw_str(&vi, 1, name);
    tn__pbw_msg(&vi, 2, &tp);
    tn__pbw_msg(w, field, &vi);
}

typedef struct tn__ox_save_ctx { const tn__pbw *model; } tn__ox_save_ctx;
static int tn__ox_save_body(tn__wfile *w, void *ctx) {
    const tn__pbw *m = ((const tn__ox_save_ctx *)ctx)->model;
    return tn__wf_write(w, m->p, m->n);
}

TNDEF int tn_onnx_export_opts(const tn_graph *g, const char *path, tn_onnx_opts o) {
    const char *fn = "tn_onnx_export";
    if (!g || !path) return TN__FAIL_INT("%s: the graph and the path must not be NULL", fn);
    if (o.opset_version != TN__ONNX_OPSET)
        return TN__FAIL_INT("%s: opset_version=%lld is not supported: the exporter writes opset %d", fn, (long long)o.opset_version, TN__ONNX_OPSET);
    if (!tn__little_endian()) return TN__FAIL_INT("%s: big-endian hosts are not supported (ONNX's raw data is little-endian)", fn);
    tn__oxe e;
    memset(&e, 0, sizeof e);
    e.fn = fn;
    e.g = g;
    const size_t nv = (size_t)(g->nvals > 0 ? g->nvals : 1);
    e.names = (char **)TN_MALLOC(nv * sizeof *e.names);
    e.fold = (tn_tensor **)TN_MALLOC(nv * sizeof *e.fold);
    e.written = (bool *)TN_MALLOC(nv * sizeof *e.written);
    int rc = e.names && e.fold && e.written ? 0 : TN__FAIL_INT("%s: out of memory", fn);
    if (e.names) memset(e.names, 0, nv * sizeof *e.names);
    if (e.fold) memset(e.fold, 0, nv * sizeof *e.fold);
    if (e.written) memset(e.written, 0, nv * sizeof *e.written);
    tn__pbw inputs, outputs;
    memset(&inputs, 0, sizeof inputs);
    memset(&outputs, 0, sizeof outputs);
    tn_scope_begin();
    tn_no_grad_begin();
    /* names: inputs and outputs as given (else input0, output0), constants theirs, nodes v<id> */
    for (int v = 0; v < g->nvals && rc == 0; v++) {
        char buf[32];
        if (tn_dtype_is_complex(g->vals[v].dtype))   /* (ONNX's COMPLEX64/128 have almost no operators: refused, never mistyped) */
            { rc = TN__FAIL_INT("%s: value %d of the graph is %s: ONNX export does not support complex tensors", fn, v, tn_dtype_name(g->vals[v].dtype)); break; }
        if (g->vals[v].kind == TN__GV_CONST) { e.names[v] = tn__strdup(g->vals[v].name); e.fold[v] = g->vals[v].t; }
        else { snprintf(buf, sizeof buf, "v%d", v); e.names[v] = tn__strdup(buf); }
        if (!e.names[v]) rc = TN__FAIL_INT("%s: out of memory", fn);
    }
    for (int i = 0; i < g->ninputs && rc == 0; i++) {
        char buf[32], *nm = tn__ox_list_item(o.input_names, i);
        if (!nm) { snprintf(buf, sizeof buf, "input%d", i); nm = tn__strdup(buf); }
        if (!nm) { rc = TN__FAIL_INT("%s: out of memory", fn); break; }
        TN_FREE(e.names[g->inputs[i]]);
        e.names[g->inputs[i]] = nm;
        if (!tn__onnx_type(g->vals[g->inputs[i]].dtype)) rc = TN__FAIL_INT("%s: input %d is %s, which ONNX export does not support", fn, i, tn_dtype_name(g->vals[g->inputs[i]].dtype));
        tn__ox_value_info(&inputs, 11, nm, &g->vals[g->inputs[i]], i == g->dyn_input);
    }
    /* nodes in order; one whose inputs are all known here is computed and becomes a constant */
    for (int k = 0; k < g->nnodes && rc == 0; k++) {
        const tn__gnode *n = &g->nodes[k];
        bool known = true;
        for (int i = 0; i < n->nin && known; i++) known = n->in[i] < 0 || e.fold[n->in[i]];
        if (known && n->nin > 0) {
            tn_tensor *vv[8];
            tn__gnode t = *n;
            int idx[8];
            if (n->nin <= 8) {
                for (int i = 0; i < n->nin; i++) { vv[i] = n->in[i] >= 0 ? e.fold[n->in[i]] : NULL; idx[i] = n->in[i] >= 0 ? i : -1; }
                t.in = idx;
                tn_tensor *r = tn__graph_node_run(g, &t, vv, g->dyn_size);
                if (r) { e.fold[n->out] = r; continue; }
                tn_clear_error();
            }
        }
        rc = tn__ox_emit(&e, n, e.names[n->out]);
    }
    for (int i = 0; i < g->noutputs && rc == 0; i++) {
        const int v = g->outputs[i];
        char buf[32], *nm = tn__ox_list_item(o.output_names, i);
        if (!nm) { snprintf(buf, sizeof buf, "output%d", i); nm = tn__strdup(buf); }
        if (!nm) { rc = TN__FAIL_INT("%s: out of memory", fn); break; }
        tn__ox_node1(&e, "Identity", tn__ox_use(&e, v), nm);   /* the output under its name, whatever made it */
        tn__ox_value_info(&outputs, 12, nm, &g->vals[v], g->dyn_input >= 0 && g->vals[v].ndim > 0 && g->vals[v].shape[0] == g->dyn_size);
        TN_FREE(nm);
    }
    tn__pbw graph, model, opset;
    memset(&graph, 0, sizeof graph); memset(&model, 0, sizeof model); memset(&opset, 0, sizeof opset);
    if (rc == 0) {
        tn__pbw_put(&graph, e.nodes.p, e.nodes.n);
        tn__pbw_str(&graph, 2, "tn_graph");
        tn__pbw_put(&graph, e.inits.p, e.inits.n);
        tn__pbw_put(&graph, inputs.p, inputs.n);
        tn__pbw_put(&graph, outputs.p, outputs.n);
        if (e.nodes.failed || e.inits.failed || inputs.failed || outputs.failed) graph.failed = true;
        tn__pbw_int(&model, 1, TN__ONNX_IR);
        tn__pbw_str(&model, 2, "tensor.h");
        tn__pbw_str(&model, 3, TENSOR_VERSION_STRING);
        tn__pbw_msg(&model, 7, &graph);
        tn__pbw_str(&opset, 1, "");
        tn__pbw_int(&opset, 2, TN__ONNX_OPSET);
        tn__pbw_msg(&model, 8, &opset);
        if (model.failed) rc = TN__FAIL_INT("%s: out of memory", fn);
    }
    if (rc == 0) {
        tn__ox_save_ctx c = {&model};
        rc = tn__safe_save(fn, path, tn__ox_save_body, &c);
    }
    tn_no_grad_end();
    tn_scope_end();
    for (int v = 0; e.names && v < g->nvals; v++) TN_FREE(e.names[v]);
    TN_FREE(e.names); TN_FREE(e.fold); TN_FREE(e.written);
    tn__pbw_free(&e.nodes); tn__pbw_free(&e.inits); tn__pbw_free(&inputs); tn__pbw_free(&outputs);
    tn__pbw_free(&graph); tn__pbw_free(&model); tn__pbw_free(&opset);
    return rc;
}
TNDEF int tn_onnx_export_str(const tn_graph *g, const char *path, const char *options) {
    tn_onnx_opts o = TN_DEFAULTS(tn_onnx_opts);
    uint64_t seen = 0;
    if (tn__kw_parse("tn_onnx_export", options, tn__kw_onnx_export, TN__KW_N(tn__kw_onnx_export), &o, &seen)) return -1;
    int rc = tn_onnx_export_opts(g, path, o);
    tn__kw_release(tn__kw_onnx_export, TN__KW_N(tn__kw_onnx_export), &o, seen);   /* the names are copies */
    return rc;
}

/* ======================================================================= */
/* import                                                                  */
/* ======================================================================= */
#define TN__OXI_MAXIO 4096   /* inputs or outputs of one node, attributes of one node */
typedef struct tn__oxa { tn__pbs name, msg; int64_t type, i; double f; tn__pbs t; } tn__oxa;   /* an attribute */
typedef struct tn__oxn {   /* a node */
    tn__pbs op, domain, name;
    tn__pbs *in, *out;
    int nin, nout;
    tn__oxa *at;
    int nat;
} tn__oxn;
typedef struct tn__oxv {   /* a value: a constant (gv < 0) or a graph value with an example */
    char *name;            /* NULL: a temporary */
    tn_tensor *t;          /* the constant, or the example (retained) */
    int gv;                /* the graph value, -1 for a constant */
    int cgv;               /* a constant's graph value once a node uses it, else -1 */
} tn__oxv;
typedef struct tn__oxi {
    const char *fn;
    tn_graph *g;
    tn__oxv *v;
    int nv, cap;
    int64_t opset;
    int nconst;
    int64_t dyn_example;   /* the size a symbolic batch takes when loading */
} tn__oxi;

static int tn__oxi_fail(const tn__oxi *c, const char *what) { return TN__FAIL_INT("%s: not a valid ONNX model: %s", c->fn, what); }

/* A TensorProto as a new tensor (*out, a reference of the caller's). */
static int tn__oxi_tensor(const tn__oxi *c, tn__pbs msg, tn_tensor **out, tn__pbs *name) {
    int64_t shape[TN_MAX_DIMS], type = 0;
    int ndim = 0;
    tn__pbs raw = {NULL, 0}, m = msg;
    bool has_raw = false;
    int64_t counts[16] = {0};   /* elements per typed data field */
    tn__pbf f;
    int r;
    if (name) { name->p = NULL; name->n = 0; }
    while ((r = tn__pb_next(&m, &f)) > 0) {
        if (f.field == 1) {   /* dims: one varint, or packed */
            tn__pbs pk = f.s;
            const uint8_t *p = f.wt == 2 ? pk.p : NULL;
            if (f.wt == 0) {
                if (ndim == TN_MAX_DIMS) return tn__oxi_fail(c, "a tensor with too many dims");
                shape[ndim++] = (int64_t)f.v;
            } else if (f.wt == 2) {
                while (p < pk.p + pk.n) {
                    uint64_t d;
                    if (tn__pb_varint(&p, pk.p + pk.n, &d)) return tn__oxi_fail(c, "a tensor's dims are malformed");
                    if (ndim == TN_MAX_DIMS) return tn__oxi_fail(c, "a tensor with too many dims");
                    shape[ndim++] = (int64_t)d;
                }
            } else return tn__oxi_fail(c, "a tensor's dims are malformed");
        } else if (f.field == 2 && f.wt == 0) type = (int64_t)f.v;
        else if (f.field == 8 && f.wt == 2) { if (name) *name = f.s; }
        else if (f.field == 9 && f.wt == 2) { raw = f.s; has_raw = true; }
        else if (f.field == 14 && f.wt == 0 && f.v == 1) return TN__FAIL_INT("%s: tensors with external data are not supported", c->fn);
        else if (f.field == 3 || f.field == 6) return TN__FAIL_INT("%s: segmented or string tensors are not supported", c->fn);
        else if (f.field == 4 || f.field == 5 || f.field == 7 || f.field == 10 || f.field == 11) {
            if (f.wt == 2) {   /* packed */
                if (f.field == 4) counts[f.field] += (int64_t)(f.s.n / 4);
                else if (f.field == 10 || f.field == 11) counts[f.field] += (int64_t)(f.s.n / 8);
                else for (size_t k = 0; k < f.s.n; k++) counts[f.field] += !(f.s.p[k] & 0x80);
            } else counts[f.field]++;
        }
    }
    if (r < 0) return tn__oxi_fail(c, "a tensor's bytes are malformed");
    tn_dtype dt;
    if (tn__onnx_dtype(type, &dt)) return TN__FAIL_INT("%s: tensors of type %s are not supported", c->fn, tn__onnx_type_name(type));
    int64_t numel, bytes;
    for (int d = 0; d < ndim; d++) if (shape[d] < 0) return tn__oxi_fail(c, "a tensor with a negative size");
    if (!tn__numel_ok(shape, ndim, &numel) || !tn__mul_ok(numel, (int64_t)tn_dtype_size(dt), &bytes)) return tn__oxi_fail(c, "a tensor's sizes multiply past int64");
    const int want = dt == TN_F32 ? 4 : dt == TN_F64 ? 10 : dt == TN_I64 ? 7 : 5;
    if (has_raw) {
        if ((uint64_t)raw.n != (uint64_t)bytes) return tn__oxi_fail(c, "a tensor's raw data does not match its sizes");
    } else if (counts[want] != numel) return tn__oxi_fail(c, "a tensor's data does not match its sizes");
    for (int k = 0; k < 16; k++) if (k != want && counts[k]) return tn__oxi_fail(c, "a tensor's data is in a field of another type");
    tn_tensor *t = tn__new(dt, TN_CPU, shape, ndim);
    if (!t) return -1;
    uint8_t *dst = (uint8_t *)tn_data_ptr(t);
    if (has_raw) {
        if (!tn__little_endian()) { tn_release(t); return TN__FAIL_INT("%s: big-endian hosts are not supported", c->fn); }
        if (bytes) memcpy(dst, raw.p, (size_t)bytes);
        if (dt == TN_BOOL) for (int64_t k = 0; k < numel; k++) dst[k] = dst[k] != 0;
    } else {
        int64_t at = 0;
        m = msg;
        while (tn__pb_next(&m, &f) > 0) {
            if (f.field != want) continue;
            tn__pbs pk = f.s;
            const uint8_t *p = pk.p, *end = pk.p + pk.n;
            for (;;) {
                uint64_t u;
                if (f.wt == 2) {
                    if (p >= end) break;
                    if (want == 4 || want == 10) {
                        const size_t w = want == 4 ? 4 : 8;
                        if ((size_t)(end - p) < w) break;
                        u = 0;
                        for (size_t k = 0; k < w; k++) u |= (uint64_t)p[k] << (8 * k);
                        p += w;
                    } else if (tn__pb_varint(&p, end, &u)) { tn_release(t); return tn__oxi_fail(c, "a tensor's data is malformed"); }
                } else u = f.v;
                if (at >= numel) break;
                switch (dt) {
                case TN_F32: { uint32_t b = (uint32_t)u; float x; memcpy(&x, &b, 4); ((float *)dst)[at] = x; break; }
                case TN_F64: { double x; memcpy(&x, &u, 8); ((double *)dst)[at] = x; break; }
                case TN_I64: ((int64_t *)dst)[at] = (int64_t)u; break;
                case TN_I32: ((int32_t *)dst)[at] = (int32_t)(uint32_t)u; break;
                case TN_U8: dst[at] = (uint8_t)u; break;
                case TN_I8: ((int8_t *)dst)[at] = (int8_t)(uint8_t)u; break;       /* int32_data holds them sign-extended */
                case TN_I16: ((int16_t *)dst)[at] = (int16_t)(uint16_t)u; break;
                default: dst[at] = u != 0; break;
                }
                at++;
                if (f.wt != 2) break;
            }
        }
    }
    *out = t;
    return 0;
}

static void tn__oxn_free(tn__oxn *n) { TN_FREE(n->in); TN_FREE(n->out); TN_FREE(n->at); memset(n, 0, sizeof *n); }
static int tn__oxn_parse(const tn__oxi *c, tn__pbs msg, tn__oxn *n) {
    memset(n, 0, sizeof *n);
    tn__pbs m = msg;
    tn__pbf f;
    int r, ni = 0, no = 0, na = 0;
    while ((r = tn__pb_next(&m, &f)) > 0) {
        if (f.wt != 2) continue;
        if (f.field == 1) ni++;
        else if (f.field == 2) no++;
        else if (f.field == 5) na++;
        else if (f.field == 4) n->op = f.s;
        else if (f.field == 7) n->domain = f.s;
        else if (f.field == 3) n->name = f.s;
    }
    if (r < 0) return tn__oxi_fail(c, "a node's bytes are malformed");
    if (ni > TN__OXI_MAXIO || no > TN__OXI_MAXIO || na > TN__OXI_MAXIO) return tn__oxi_fail(c, "a node with too many inputs, outputs or attributes");
    n->in = (tn__pbs *)TN_MALLOC((size_t)(ni + 1) * sizeof *n->in);
    n->out = (tn__pbs *)TN_MALLOC((size_t)(no + 1) * sizeof *n->out);
    n->at = (tn__oxa *)TN_MALLOC((size_t)(na + 1) * sizeof *n->at);
    if (!n->in || !n->out || !n->at) { tn__oxn_free(n); return TN__FAIL_INT("%s: out of memory", c->fn); }
    m = msg;
    while (tn__pb_next(&m, &f) > 0) {
        if (f.wt != 2) continue;
        if (f.field == 1) n->in[n->nin++] = f.s;
        else if (f.field == 2) n->out[n->nout++] = f.s;
        else if (f.field == 5) {
            tn__oxa *a = &n->at[n->nat++];
            memset(a, 0, sizeof *a);
            a->msg = f.s;
            tn__pbs am = f.s;
            tn__pbf g;
            while ((r = tn__pb_next(&am, &g)) > 0) {
                if (g.field == 1 && g.wt == 2) a->name = g.s;
                else if (g.field == 20 && g.wt == 0) a->type = (int64_t)g.v;
                else if (g.field == 3 && g.wt == 0) a->i = (int64_t)g.v;
                else if (g.field == 2 && g.wt == 5) { uint32_t b = (uint32_t)g.v; float x; memcpy(&x, &b, 4); a->f = x; }
                else if (g.field == 5 && g.wt == 2) a->t = g.s;
            }
            if (r < 0) { tn__oxn_free(n); return tn__oxi_fail(c, "an attribute's bytes are malformed"); }
        }
    }
    return 0;
}
static const tn__oxa *tn__oxn_attr(const tn__oxn *n, const char *name) {
    for (int k = 0; k < n->nat; k++) if (tn__pbs_eq(n->at[k].name, name)) return &n->at[k];
    return NULL;
}
static int64_t tn__oxn_int(const tn__oxn *n, const char *name, int64_t def) { const tn__oxa *a = tn__oxn_attr(n, name); return a ? a->i : def; }
static double tn__oxn_float(const tn__oxn *n, const char *name, double def) { const tn__oxa *a = tn__oxn_attr(n, name); return a ? a->f : def; }
/* An ints attribute into v[0..cap): the count, -1 if absent, -2 when malformed or longer. */
static int tn__oxn_ints(const tn__oxn *n, const char *name, int64_t *v, int cap) {
    const tn__oxa *a = tn__oxn_attr(n, name);
    if (!a) return -1;
    tn__pbs m = a->msg;
    tn__pbf f;
    int cnt = 0, r;
    while ((r = tn__pb_next(&m, &f)) > 0) {
        if (f.field != 8) continue;
        if (f.wt == 0) { if (cnt == cap) return -2; v[cnt++] = (int64_t)f.v; }
        else if (f.wt == 2) {
            const uint8_t *p = f.s.p, *end = f.s.p + f.s.n;
            while (p < end) {
                uint64_t u;
                if (tn__pb_varint(&p, end, &u) || cnt == cap) return -2;
                v[cnt++] = (int64_t)u;
            }
        }
    }
    return r < 0 ? -2 : cnt;
}

/* A string attribute (empty when absent). */
static tn__pbs tn__oxn_str(const tn__oxn *n, const char *name) {
    tn__pbs sv = {NULL, 0};
    const tn__oxa *a = tn__oxn_attr(n, name);
    if (!a) return sv;
    tn__pbs m = a->msg;
    tn__pbf f;
    while (tn__pb_next(&m, &f) > 0) if (f.field == 4 && f.wt == 2) sv = f.s;
    return sv;
}

/* values */
static int tn__oxi_add(tn__oxi *c, char *name, tn_tensor *t, int gv) {   /* takes name and the reference t */
    if (c->nv == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        tn__oxv *v = (tn__oxv *)TN_REALLOC(c->v, (size_t)cap * sizeof *v);
        if (!v) { TN_FREE(name); tn_release(t); return TN__FAIL_INT("%s: out of memory", c->fn); }
        c->v = v;
        c->cap = cap;
    }
    tn__oxv *e = &c->v[c->nv];
    e->name = name;
    e->t = t;
    e->gv = gv;
    e->cgv = -1;
    return c->nv++;
}
static int tn__oxi_find(const tn__oxi *c, tn__pbs name) {
    for (int k = c->nv - 1; k >= 0; k--)
        if (c->v[k].name && strlen(c->v[k].name) == name.n && !memcmp(c->v[k].name, name.p, name.n)) return k;
    return -1;
}
/* Bind an ONNX name to value e (a new entry that shares it when e is named already). */
static int tn__oxi_bind(tn__oxi *c, tn__pbs name, int e) {
    if (name.n == 0) return 0;
    char *nm = tn__pbs_dup(name);
    if (!nm) return TN__FAIL_INT("%s: out of memory", c->fn);
    if (!c->v[e].name) { c->v[e].name = nm; return 0; }
    return tn__oxi_add(c, nm, tn_retain(c->v[e].t), c->v[e].gv) < 0 ? -1 : 0;
}
/* The graph value of entry e (a constant gets one on first use). */
static int tn__oxi_gv(tn__oxi *c, int e) {
    tn__oxv *x = &c->v[e];
    if (x->gv >= 0) return x->gv;
    if (x->cgv >= 0) return x->cgv;
    int v = tn__graph_add_value(c->g, TN__GV_CONST, x->t->dtype, x->t->ndim, x->t->shape);
    if (v < 0) return -1;
    char buf[32];
    const char *nm = x->name;
    if (!nm || !tn__graph_name_ok(nm)) { snprintf(buf, sizeof buf, "onnx_c%d", c->nconst++); nm = buf; }
    c->g->vals[v].t = tn_retain(x->t);
    c->g->vals[v].name = tn__strdup(nm);
    if (!c->g->vals[v].name) return TN__FAIL_INT("%s: out of memory", c->fn);
    return c->v[e].cgv = v;
}
/* Run op on the entries ins (-1: absent): a constant result when every operand is one,
   else a graph node. The result's entry, or -1. */
static int tn__oxi_op(tn__oxi *c, tn__jit_op op, int sub, const int *ins, int nin, const int64_t *iv, int ni, const double *dv, int nd) {
    tn__gnode t;
    memset(&t, 0, sizeof t);
    int *idx = (int *)TN_MALLOC((size_t)(nin + 1) * sizeof(int));
    tn_tensor **vv = (tn_tensor **)TN_MALLOC((size_t)(nin + 1) * sizeof *vv);
    if (!idx || !vv) { TN_FREE(idx); TN_FREE(vv); return TN__FAIL_INT("%s: out of memory", c->fn); }
    bool known = true;
    for (int k = 0; k < nin; k++) {
        idx[k] = ins[k] >= 0 ? k : -1;
        vv[k] = ins[k] >= 0 ? c->v[ins[k]].t : NULL;
        if (ins[k] >= 0 && c->v[ins[k]].gv >= 0) known = false;
    }
    t.op = op; t.sub = sub; t.nin = nin; t.in = idx; t.out = -1;

    t.ni = ni; if (ni) memcpy(t.i, iv, (size_t)ni * sizeof(int64_t));
    t.nd = nd; if (nd) memcpy(t.d, dv, (size_t)nd * sizeof(double));
    tn_scope_begin();
    tn_tensor *ones = NULL;   /* an integer divisor known only when running: ones in the example run (zeros would raise) */
    if (op == J_BINARY && (sub == DIV || sub == FLOOR_DIVIDE || sub == REMAINDER || sub == FMOD) && nin == 2 && ins[1] >= 0 && c->v[ins[1]].gv >= 0 &&
        !tn_dtype_is_floating(vv[1]->dtype) && (ones = tn_retain(tn_ones_like(vv[1]))))
        vv[1] = ones;
    tn_tensor *r = tn_retain(tn__graph_node_run(c->g, &t, vv, c->g->dyn_size));   /* the example batch: shapes as they are */
    tn_scope_end();
    TN_FREE(vv);
    tn_release(ones);
    if (!r) { TN_FREE(idx); return -1; }
    if (known) { TN_FREE(idx); return tn__oxi_add(c, NULL, r, -1); }
    for (int k = 0; k < nin; k++) if (ins[k] >= 0 && (idx[k] = tn__oxi_gv(c, ins[k])) < 0) { TN_FREE(idx); tn_release(r); return -1; }
    int out = tn__graph_add_value(c->g, TN__GV_NODE, r->dtype, r->ndim, r->shape);
    tn__gnode *n = out < 0 ? NULL : tn__graph_add_node(c->g, op, nin);
    if (!n) { TN_FREE(idx); tn_release(r); return -1; }
    memcpy(n->in, idx, (size_t)nin * sizeof(int));
    TN_FREE(idx);
    n->sub = sub; n->ni = ni; n->nd = nd; n->out = out;
    memcpy(n->i, t.i, sizeof t.i);
    memcpy(n->d, t.d, sizeof t.d);
    return tn__oxi_add(c, NULL, r, out);
}
static int tn__oxi_op1(tn__oxi *c, tn__jit_op op, int a, const int64_t *iv, int ni) { return tn__oxi_op(c, op, 0, &a, 1, iv, ni, NULL, 0); }
static int tn__oxi_unary(tn__oxi *c, int sub, int a, double d0, double d1, double d2) {
    const double d[3] = {d0, d1, d2};
    return tn__oxi_op(c, J_UNARY, sub, &a, 1, NULL, 0, d, 3);
}
static int tn__oxi_binary(tn__oxi *c, int sub, int a, int b) {
    const int in[2] = {a, b};
    const double one = 1;
    return tn__oxi_op(c, J_BINARY, sub, in, 2, NULL, 0, &one, 1);
}
static int tn__oxi_reshape(tn__oxi *c, int a, const int64_t *shape, int n) { return tn__oxi_op1(c, J_RESHAPE, a, shape, n); }
static int tn__oxi_scalar(tn__oxi *c, double v, tn_dtype dt) {
    tn_scope_begin();
    tn_tensor *t = tn_retain(tn_full(NULL, 0, v, dt));
    tn_scope_end();
    return t ? tn__oxi_add(c, NULL, t, -1) : -1;
}
static const tn_tensor *tn__oxi_ex(const tn__oxi *c, int e) { return c->v[e].t; }
/* A constant int input's values (0-d or 1-d) into v[0..cap): the count, or -1. */
static int tn__oxi_const_ints(tn__oxi *c, const tn__oxn *n, int e, int64_t *v, int cap, const char *what) {
    char b[64];
    if (e < 0) return TN__FAIL_INT("%s: %s: the %s is missing", c->fn, tn__pbs_show(n->op, b, sizeof b), what);
    const tn_tensor *t = c->v[e].t;
    if (c->v[e].gv >= 0) return TN__FAIL_INT("%s: %s: its input '%s' computed when running is not supported (it must be a constant, or computed from static shapes)", c->fn, tn__pbs_show(n->op, b, sizeof b), what);
    if (t->ndim > 1 || tn_numel(t) > cap || (t->dtype != TN_I64 && t->dtype != TN_I32))
        return TN__FAIL_INT("%s: %s: the %s must be at most %d int32 or int64 values", c->fn, tn__pbs_show(n->op, b, sizeof b), what, cap);
    tn_scope_begin();
    tn_tensor *ct = tn_contiguous((tn_tensor *)t);
    const int cnt = ct ? (int)tn_numel(ct) : -1;
    for (int k = 0; k < cnt; k++) v[k] = ct->dtype == TN_I64 ? ((const int64_t *)tn_data_ptr(ct))[k] : ((const int32_t *)tn_data_ptr(ct))[k];
    tn_scope_end();
    return cnt;
}
static int tn__oxi_axis(tn__oxi *c, const tn__oxn *n, int64_t axis, int ndim, int64_t *out) {
    char b[64];
    if (axis < -ndim || axis >= (ndim > 0 ? ndim : 1)) return TN__FAIL_INT("%s: %s: axis %lld out of range for a %d-d input", c->fn, tn__pbs_show(n->op, b, sizeof b), (long long)axis, ndim);
    *out = axis < 0 ? axis + ndim : axis;
    return 0;
}

typedef struct { const char *name; int sub; } tn__oxi_map;
static const tn__oxi_map tn__oxi_unaries[] = {
    {"Relu", RELU}, {"Sigmoid", SIGMOID}, {"Tanh", TANH}, {"Exp", EXP}, {"Log", LOG}, {"Sqrt", SQRT}, {"Neg", NEG}, {"Abs", ABS},
    {"Erf", ERF}, {"Floor", FLOOR}, {"Ceil", CEIL}, {"Reciprocal", RECIPROCAL}, {"Sin", SIN}, {"Cos", COS}, {"Tan", TAN},
    {"Asin", ASIN}, {"Acos", ACOS}, {"Atan", ATAN}, {"Sinh", SINH}, {"Cosh", COSH}, {"Asinh", ASINH}, {"Acosh", ACOSH},
    {"Atanh", ATANH}, {"Sign", SIGN}, {"Round", ROUND}, {"HardSwish", HARDSWISH}, {"Not", LOGICAL_NOT}, {"IsNaN", ISNAN}};
static const tn__oxi_map tn__oxi_binaries[] = {
    {"Add", ADD}, {"Sub", SUB}, {"Mul", MUL}, {"Pow", POW}, {"Equal", EQ}, {"Less", LT}, {"Greater", GT}, {"LessOrEqual", LE},
    {"GreaterOrEqual", GE}, {"And", LOGICAL_AND}, {"Or", LOGICAL_OR}, {"Xor", LOGICAL_XOR}};

/* Pads [begin..., end...] of a 2-d window op as one (h, w) pair (PyTorch pads both sides
   alike); auto_pad SAME_* resolved from the input size. */
static int tn__oxi_pads2(tn__oxi *c, const tn__oxn *n, const tn_tensor *x, const int64_t *k, const int64_t *s, const int64_t *dl, int64_t *pad) {
    char b[64], ap[32];
    int64_t p[4] = {0, 0, 0, 0};
    const tn__oxa *a = tn__oxn_attr(n, "auto_pad");
    if (a) {
        tn__pbs sv = {NULL, 0};
        tn__pbs m = a->msg;
        tn__pbf f;
        while (tn__pb_next(&m, &f) > 0) if (f.field == 4 && f.wt == 2) sv = f.s;
        if (tn__pbs_eq(sv, "SAME_UPPER") || tn__pbs_eq(sv, "SAME_LOWER")) {
            for (int d = 0; d < 2; d++) {
                const int64_t in = x->shape[2 + d], o = (in + s[d] - 1) / s[d], tot = TN__MAX((o - 1) * s[d] + dl[d] * (k[d] - 1) + 1 - in, 0);
                const int64_t lo = tn__pbs_eq(sv, "SAME_UPPER") ? tot / 2 : tot - tot / 2;
                p[d] = lo; p[2 + d] = tot - lo;
            }
        } else if (!tn__pbs_eq(sv, "VALID") && !tn__pbs_eq(sv, "NOTSET") && sv.n)
            return TN__FAIL_INT("%s: %s: auto_pad '%s' is not supported", c->fn, tn__pbs_show(n->op, b, sizeof b), tn__pbs_show(sv, ap, sizeof ap));
        else if (tn__oxn_ints(n, "pads", p, 4) == -2) return tn__oxi_fail(c, "a pads attribute is malformed");
    } else {
        const int np = tn__oxn_ints(n, "pads", p, 4);
        if (np == -2 || (np >= 0 && np != 4)) return TN__FAIL_INT("%s: %s: pads must have 4 values for a 2-d window", c->fn, tn__pbs_show(n->op, b, sizeof b));
    }
    if (p[0] != p[2] || p[1] != p[3])
        return TN__FAIL_INT("%s: %s: asymmetric pads [%lld, %lld, %lld, %lld] are not supported", c->fn, tn__pbs_show(n->op, b, sizeof b), (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3]);
    pad[0] = p[0]; pad[1] = p[1];
    for (int d = 0; d < 2; d++)   /* PyTorch's limit, which the ops check */
        if (!tn__pbs_eq(n->op, "Conv") && 2 * pad[d] > dl[d] * (k[d] - 1) + 1)
            return TN__FAIL_INT("%s: %s: padding %lld beyond half the kernel (%lld) is not supported", c->fn, tn__pbs_show(n->op, b, sizeof b), (long long)pad[d], (long long)k[d]);
    return 0;
}
/* kernel_shape, strides, dilations of a 2-d window op */
static int tn__oxi_window(tn__oxi *c, const tn__oxn *n, const tn_tensor *x, const int64_t *wshape, int64_t *k, int64_t *s, int64_t *dl, int64_t *pad) {
    char b[64];
    if (x->ndim != 4) return TN__FAIL_INT("%s: %s: a %d-d input is not supported (only 2-d windows over [N, C, H, W])", c->fn, tn__pbs_show(n->op, b, sizeof b), x->ndim);
    if (!tn_dtype_is_floating(x->dtype)) return TN__FAIL_INT("%s: %s of %s is not supported", c->fn, tn__pbs_show(n->op, b, sizeof b), tn_dtype_name(x->dtype));
    k[0] = k[1] = s[0] = s[1] = dl[0] = dl[1] = 1;
    int nk = tn__oxn_ints(n, "kernel_shape", k, 2);
    if (nk < 0 && wshape) { k[0] = wshape[2]; k[1] = wshape[3]; nk = 2; }
    if (nk != 2) return TN__FAIL_INT("%s: %s: kernel_shape must have 2 values", c->fn, tn__pbs_show(n->op, b, sizeof b));
    const int ns = tn__oxn_ints(n, "strides", s, 2), nd = tn__oxn_ints(n, "dilations", dl, 2);
    if ((ns != -1 && ns != 2) || (nd != -1 && nd != 2)) return TN__FAIL_INT("%s: %s: strides and dilations must have 2 values", c->fn, tn__pbs_show(n->op, b, sizeof b));
    return tn__oxi_pads2(c, n, x, k, s, dl, pad);
}

/* One ONNX node: its outputs bound. 0, or -1 with an error. */
/* ONNX's LSTM, GRU (linear_before_reset=1, as PyTorch's) and RNN (layout 0, the default
   activations or RNN's Relu; no peepholes, clip or sequence_lens) as, per direction, the
   projection gi = X W^T + Wb (+ Rb but the GRU's) in graph ops, then the layers' fused
   recurrence (J_LSTM, J_RNN_SEQ) with W, R and the biases' rows reordered from ONNX's gate
   order (LSTM i, o, f, c; GRU z, r, h) to ours (i, f, g, o; r, z, n). Outputs Y [L, D, N, H],
   Y_h and, for the LSTM, Y_c [D, N, H]. */
static int tn__oxi_rnn(tn__oxi *c, const tn__oxn *n, const int *in) {
    const char *fn = c->fn;
    char b[64], nm[16];
    const bool lstm = tn__pbs_eq(n->op, "LSTM"), gru = tn__pbs_eq(n->op, "GRU");
    snprintf(nm, sizeof nm, "%s", lstm ? "LSTM" : gru ? "GRU" : "RNN");
    const int64_t G = lstm ? 4 : gru ? 3 : 1;
    if (n->nin < 3 || in[1] < 0 || in[2] < 0) return TN__FAIL_INT("%s: %s takes X, W and R", fn, nm);
    if ((n->nin > 4 && in[4] >= 0) || (n->nin > 7 && in[7] >= 0)) return TN__FAIL_INT("%s: %s with sequence_lens or peepholes (P) is not supported", fn, nm);
    if (tn__oxn_int(n, "layout", 0) != 0 || tn__oxn_int(n, "input_forget", 0) != 0 || tn__oxn_attr(n, "clip"))
        return TN__FAIL_INT("%s: %s with layout=1, input_forget=1 or clip is not supported", fn, nm);
    if (gru && tn__oxn_int(n, "linear_before_reset", 0) != 1)
        return TN__FAIL_INT("%s: GRU with linear_before_reset=0 is not supported (PyTorch's GRU is linear_before_reset=1)", fn);
    bool relu = false;
    const tn__oxa *acts = tn__oxn_attr(n, "activations");
    if (acts) {   /* only the defaults: LSTM f = Sigmoid, g = h = Tanh; GRU Sigmoid, Tanh; RNN Tanh (or Relu) */
        static const char *const want_lstm[3] = {"Sigmoid", "Tanh", "Tanh"}, *const want_gru[2] = {"Sigmoid", "Tanh"};
        tn__pbs m = acts->msg;
        tn__pbf f;
        int k = 0;
        while (tn__pb_next(&m, &f) > 0) {
            if (f.field != 9 || f.wt != 2) continue;
            const bool ok = lstm ? tn__pbs_eq(f.s, want_lstm[k % 3]) : gru ? tn__pbs_eq(f.s, want_gru[k % 2]) :
                            (k == 0 ? (relu = tn__pbs_eq(f.s, "Relu")) || tn__pbs_eq(f.s, "Tanh") : tn__pbs_eq(f.s, relu ? "Relu" : "Tanh"));
            k++;
            if (!ok) return TN__FAIL_INT("%s: %s with activation %s is not supported (only the defaults%s)", fn, nm, tn__pbs_show(f.s, b, sizeof b), lstm || gru ? "" : ", or Relu");
        }
    }
    const tn__pbs dir = tn__oxn_str(n, "direction");
    const bool bidi = tn__pbs_eq(dir, "bidirectional"), rev = tn__pbs_eq(dir, "reverse");
    if (dir.n && !bidi && !rev && !tn__pbs_eq(dir, "forward")) return TN__FAIL_INT("%s: %s: direction '%s' is not valid", fn, nm, tn__pbs_show(dir, b, sizeof b));
    const int D = bidi ? 2 : 1;
    const tn_tensor *X = tn__oxi_ex(c, in[0]), *W = tn__oxi_ex(c, in[1]), *R = tn__oxi_ex(c, in[2]);
    const int64_t H = tn__oxn_int(n, "hidden_size", R->ndim == 3 ? R->shape[2] : -1);
    if (X->ndim != 3 || (X->dtype != TN_F32 && X->dtype != TN_F64) || X->shape[0] < 1 || H < 1 || H > INT32_MAX / 8 || W->ndim != 3 ||
        W->shape[0] != D || W->shape[1] != G * H || W->shape[2] != X->shape[2] || R->ndim != 3 || R->shape[0] != D || R->shape[1] != G * H ||
        R->shape[2] != H || W->dtype != X->dtype || R->dtype != X->dtype)
        return TN__FAIL_INT("%s: %s: X %s, W %s and R %s do not fit hidden_size %lld and %d direction(s) (X [L > 0, N, I] of float32 or float64, W [D, %lldH, I], R [D, %lldH, H])",
                            fn, nm, TN__SHAPE(X), TN__SHAPE(W), TN__SHAPE(R), (long long)H, D, (long long)G, (long long)G);
    const int64_t L = X->shape[0], N = X->shape[1], GH = G * H;
    for (int k = 5; k < (lstm ? 7 : 6); k++)
        if (n->nin > k && in[k] >= 0) {
            const tn_tensor *s = tn__oxi_ex(c, in[k]);
            if (s->ndim != 3 || s->shape[0] != D || s->shape[1] != N || s->shape[2] != H || s->dtype != X->dtype)
                return TN__FAIL_INT("%s: %s: %s is %s, expected [%d, %lld, %lld]", fn, nm, k == 5 ? "initial_h" : "initial_c", TN__SHAPE(s), D, (long long)N, (long long)H);
        }
    const bool has_b = n->nin > 3 && in[3] >= 0;
    if (has_b) {
        const tn_tensor *B = tn__oxi_ex(c, in[3]);
        if (B->ndim != 2 || B->shape[0] != D || B->shape[1] != 2 * GH || B->dtype != X->dtype)
            return TN__FAIL_INT("%s: %s: B is %s, expected [%d, %lld]", fn, nm, TN__SHAPE(B), D, (long long)(2 * GH));
    }
    /* our gate block k reads ONNX's block of[k] */
    static const int64_t of_lstm[4] = {0, 2, 3, 1}, of_gru[3] = {1, 0, 2}, of_rnn[1] = {0};
    const int64_t *of = lstm ? of_lstm : gru ? of_gru : of_rnn;
    tn_tensor *ix = tn__new(TN_I64, TN_CPU, TN_SHAPE(GH));
    if (!ix) return -1;
    for (int64_t k = 0; k < G; k++) for (int64_t j = 0; j < H; j++) ((int64_t *)tn_data_ptr(ix))[k * H + j] = of[k] * H + j;
    const int perm = tn__oxi_add(c, NULL, ix, -1);
    int ys[2] = {-1, -1}, hs[2] = {-1, -1}, cs[2] = {-1, -1};
    const int64_t t10[2] = {1, 0}, y4[4] = {L, 1, N, H}, s3[3] = {1, N, H}, ax0 = 0;
    for (int d = 0; d < D && perm >= 0; d++) {
        const bool rv = rev || d == 1;
        const int64_t sel[2] = {0, d};
        int e[2], w = tn__oxi_op1(c, J_SELECT, in[1], sel, 2);   /* W[d] rows in our order, transposed */
        e[0] = w; e[1] = perm;
        w = w < 0 ? -1 : tn__oxi_op(c, J_INDEX_SELECT, 0, e, 2, &ax0, 1, NULL, 0);
        w = w < 0 ? -1 : tn__oxi_op1(c, J_PERMUTE, w, t10, 2);
        int rr = tn__oxi_op1(c, J_SELECT, in[2], sel, 2);
        e[0] = rr;
        rr = rr < 0 ? -1 : tn__oxi_op(c, J_INDEX_SELECT, 0, e, 2, &ax0, 1, NULL, 0);
        e[0] = in[0]; e[1] = w;
        int gi = w < 0 ? -1 : tn__oxi_op(c, J_MATMUL, 0, e, 2, NULL, 0, NULL, 0), bh = -1;
        if (has_b && gi >= 0) {   /* gi += Wb (+ Rb), reordered; the GRU's Rb is the recurrence's b_hh */
            int bb = tn__oxi_op1(c, J_SELECT, in[3], sel, 2);
            const int64_t lo[4] = {0, 0, GH, 1}, hi[4] = {0, GH, 2 * GH, 1};
            const int wb = bb < 0 ? -1 : tn__oxi_op1(c, J_SLICE, bb, lo, 4), rb = bb < 0 ? -1 : tn__oxi_op1(c, J_SLICE, bb, hi, 4);
            bb = wb < 0 || rb < 0 ? -1 : gru ? wb : tn__oxi_binary(c, ADD, wb, rb);
            e[0] = bb; e[1] = perm;
            bb = bb < 0 ? -1 : tn__oxi_op(c, J_INDEX_SELECT, 0, e, 2, &ax0, 1, NULL, 0);
            gi = bb < 0 ? -1 : tn__oxi_binary(c, ADD, gi, bb);
            e[0] = rb;
            if (gru) bh = rb < 0 ? -1 : tn__oxi_op(c, J_INDEX_SELECT, 0, e, 2, &ax0, 1, NULL, 0);
        }
        if (!lstm && (!gru || !has_b)) {   /* the recurrence's b_hh: zeros (the RNN's kernel reads none) */
            tn_tensor *z = tn__full_on(TN_SHAPE(GH), 0, X->dtype, TN_CPU);
            bh = z ? tn__oxi_add(c, NULL, z, -1) : -1;
        }
        int st[2] = {-1, -1};
        for (int k = 0; k < (lstm ? 2 : 1); k++) {
            if (n->nin > 5 + k && in[5 + k] >= 0) st[k] = tn__oxi_op1(c, J_SELECT, in[5 + k], sel, 2);
            else {
                tn_tensor *z = tn__full_on(TN_SHAPE(N, H), 0, X->dtype, TN_CPU);
                st[k] = z ? tn__oxi_add(c, NULL, z, -1) : -1;
            }
        }
        int seq = -1;
        if (lstm && gi >= 0 && rr >= 0 && st[0] >= 0 && st[1] >= 0) {
            const int li[4] = {gi, st[0], st[1], rr};
            const int64_t rvi = rv;
            seq = tn__oxi_op(c, J_LSTM, 0, li, 4, &rvi, 1, NULL, 0);
        } else if (!lstm && gi >= 0 && rr >= 0 && st[0] >= 0 && bh >= 0) {
            const int li[4] = {gi, st[0], rr, bh};
            const int64_t mi[2] = {gru ? TN__RNN_GRU : relu ? TN__RNN_RELU : TN__RNN_TANH, rv};
            seq = tn__oxi_op(c, J_RNN_SEQ, 0, li, 4, mi, 2, NULL, 0);
        }
        const int64_t sy[4] = {0, 0, L, 1}, sh[2] = {0, rv ? 0 : L - 1}, sc[2] = {0, L};
        ys[d] = seq < 0 ? -1 : lstm ? tn__oxi_op1(c, J_SLICE, seq, sy, 4) : seq;
        ys[d] = ys[d] < 0 ? -1 : tn__oxi_reshape(c, ys[d], y4, 4);
        hs[d] = seq < 0 ? -1 : tn__oxi_op1(c, J_SELECT, seq, sh, 2);
        hs[d] = hs[d] < 0 ? -1 : tn__oxi_reshape(c, hs[d], s3, 3);
        cs[d] = !lstm ? 0 : seq < 0 ? -1 : tn__oxi_op1(c, J_SELECT, seq, sc, 2);
        cs[d] = !lstm ? 0 : cs[d] < 0 ? -1 : tn__oxi_reshape(c, cs[d], s3, 3);
        if (ys[d] < 0 || hs[d] < 0 || cs[d] < 0) break;
    }
    int outs[3] = {ys[0], hs[0], cs[0]};
    if (D == 2 && ys[1] >= 0 && hs[1] >= 0 && cs[1] >= 0) {
        const int64_t a1 = 1, a0 = 0;
        outs[0] = tn__oxi_op(c, J_CAT, 0, ys, 2, &a1, 1, NULL, 0);
        outs[1] = tn__oxi_op(c, J_CAT, 0, hs, 2, &a0, 1, NULL, 0);
        outs[2] = lstm ? tn__oxi_op(c, J_CAT, 0, cs, 2, &a0, 1, NULL, 0) : 0;
    } else if (D == 2) outs[0] = -1;
    for (int k = 0; k < (lstm ? 3 : 2); k++) {
        if (outs[k] < 0) { char b2[64]; return TN__FAIL_INT("%s: node %s (%s): %s", fn, tn__pbs_show(n->name, b2, sizeof b2), nm, tn_last_error()); }
        if (k < n->nout && tn__oxi_bind(c, n->out[k], outs[k])) return -1;
    }
    if (!lstm && n->nout > 2 && n->out[2].n) return TN__FAIL_INT("%s: %s has 2 outputs, got %d", fn, nm, n->nout);
    return 0;
}

static int tn__oxi_node(tn__oxi *c, const tn__oxn *n) {
    char b[64];
    const char *fn = c->fn;
    int in[16];
    if (n->nin > 16) return TN__FAIL_INT("%s: %s with %d inputs is not supported (at most 16)", fn, tn__pbs_show(n->op, b, sizeof b), n->nin);
    const int nin = n->nin;
    for (int k = 0; k < nin; k++) {
        in[k] = n->in[k].n ? tn__oxi_find(c, n->in[k]) : -1;
        if (n->in[k].n && in[k] < 0) { char b2[64]; return TN__FAIL_INT("%s: node %s (%s): input '%s' is not defined before it", fn, tn__pbs_show(n->name, b, sizeof b), tn__pbs_show(n->op, b2, sizeof b2), tn__pbs_show(n->in[k], b2, sizeof b2)); }
    }
    for (int k = nin; k < 16; k++) in[k] = -1;
    const int x = in[0];
    const tn_tensor *xt = x >= 0 ? tn__oxi_ex(c, x) : NULL;
    const tn__pbs op = n->op;
    int r = -2;   /* the result's entry (the first output) */
    int64_t iv[TN__JIT_MAXI], sh[TN_MAX_DIMS];
    if (n->nout < 1) return tn__oxi_fail(c, "a node without outputs");
    for (int k = 1; k < n->nout; k++)   /* extra outputs (dropout's mask, pooling's indices, norms' statistics) */
        if (n->out[k].n && !tn__pbs_eq(op, "Split") && !tn__pbs_eq(op, "LSTM") && !tn__pbs_eq(op, "GRU") && !tn__pbs_eq(op, "RNN")) return TN__FAIL_INT("%s: %s with its output %d used is not supported", fn, tn__pbs_show(op, b, sizeof b), k);
    if (n->domain.n && !tn__pbs_eq(n->domain, "ai.onnx")) {
        char b2[64];
        return TN__FAIL_INT("%s: operator %s.%s is not supported (only the default domain's operators)", fn, tn__pbs_show(n->domain, b2, sizeof b2), tn__pbs_show(op, b, sizeof b));
    }
    bool needs_x = !tn__pbs_eq(op, "Constant");
    if (needs_x && x < 0) return TN__FAIL_INT("%s: %s without a first input is not supported", fn, tn__pbs_show(op, b, sizeof b));
    if (c->opset < 7 && n->nin == 2 && in[1] >= 0 && tn__oxn_int(n, "broadcast", 0)) {   /* before opset 7: B aligned at axis */
        const tn_tensor *bt = tn__oxi_ex(c, in[1]);
        const int64_t axis = tn__oxn_int(n, "axis", xt->ndim - bt->ndim);
        if (axis < 0 || axis + bt->ndim > xt->ndim) return TN__FAIL_INT("%s: %s: broadcast axis %lld does not fit", fn, tn__pbs_show(op, b, sizeof b), (long long)axis);
        int m = 0;
        for (int d = 0; d < bt->ndim; d++) sh[m++] = bt->shape[d];
        while (m < xt->ndim - axis) sh[m++] = 1;
        if (m != bt->ndim && (in[1] = tn__oxi_reshape(c, in[1], sh, m)) < 0) return -1;
    }
    for (size_t k = 0; k < sizeof tn__oxi_unaries / sizeof *tn__oxi_unaries && r == -2; k++)
        if (tn__pbs_eq(op, tn__oxi_unaries[k].name)) r = tn__oxi_unary(c, tn__oxi_unaries[k].sub, x, 0, 0, 0);
    for (size_t k = 0; k < sizeof tn__oxi_binaries / sizeof *tn__oxi_binaries && r == -2; k++)
        if (tn__pbs_eq(op, tn__oxi_binaries[k].name)) {
            if (n->nin != 2 || in[1] < 0) return TN__FAIL_INT("%s: %s takes 2 inputs", fn, tn__pbs_show(op, b, sizeof b));
            r = tn__oxi_binary(c, tn__oxi_binaries[k].sub, x, in[1]);
        }
    if (r >= 0 && tn__pbs_eq(op, "Pow") && tn__oxi_ex(c, r)->dtype != xt->dtype) {   /* ONNX: the base's type */
        iv[0] = xt->dtype;
        r = tn__oxi_op1(c, J_TO, r, iv, 1);
    }
    if (r != -2) {}
    else if (tn__pbs_eq(op, "Div")) {   /* integers: truncated (ONNX), not true division */
        if (n->nin != 2 || in[1] < 0) return TN__FAIL_INT("%s: Div takes 2 inputs", fn);
        r = tn__oxi_binary(c, DIV, x, in[1]);
        const tn_dtype dt = xt->dtype;
        if (r >= 0 && !tn_dtype_is_floating(dt) && tn_dtype_is_floating(tn__oxi_ex(c, r)->dtype)) {
            r = tn__oxi_unary(c, TRUNC, r, 0, 0, 0);
            iv[0] = dt;
            if (r >= 0) r = tn__oxi_op1(c, J_TO, r, iv, 1);
        }
    } else if (tn__pbs_eq(op, "Max") || tn__pbs_eq(op, "Min") || tn__pbs_eq(op, "Sum") || tn__pbs_eq(op, "Mean")) {
        const int sub = tn__pbs_eq(op, "Max") ? MAXIMUM : tn__pbs_eq(op, "Min") ? MINIMUM : ADD;
        r = x;
        for (int k = 1; k < nin && r >= 0; k++) if (in[k] >= 0) r = tn__oxi_binary(c, sub, r, in[k]);
        if (r >= 0 && tn__pbs_eq(op, "Mean") && nin > 1) { const int s = tn__oxi_scalar(c, (double)nin, xt->dtype); r = s < 0 ? -1 : tn__oxi_binary(c, DIV, r, s); }
        if (r == x) r = tn__oxi_op1(c, J_CLONE, x, NULL, 0);
    } else if (tn__pbs_eq(op, "Mod")) {
        if (in[1] < 0) return TN__FAIL_INT("%s: Mod takes 2 inputs", fn);
        r = tn__oxi_binary(c, tn__oxn_int(n, "fmod", 0) ? FMOD : REMAINDER, x, in[1]);
    } else if (tn__pbs_eq(op, "Where")) {
        if (in[1] < 0 || in[2] < 0) return TN__FAIL_INT("%s: Where takes 3 inputs", fn);
        const double one = 1;
        r = tn__oxi_op(c, J_TERNARY, WHERE, in, 3, NULL, 0, &one, 1);
    } else if (tn__pbs_eq(op, "Identity") || tn__pbs_eq(op, "Dropout")) {
        if (tn__pbs_eq(op, "Dropout") && in[2] >= 0) {
            int64_t tm[1] = {0};
            if (tn__oxi_const_ints(c, n, in[2], tm, 1, "training_mode") < 0) return -1;
            if (tm[0]) return TN__FAIL_INT("%s: Dropout in training mode is not supported", fn);
        }
        r = x;
    } else if (tn__pbs_eq(op, "LeakyRelu")) r = tn__oxi_unary(c, LEAKY_RELU, x, tn__oxn_float(n, "alpha", 0.01), 0, 0);
    else if (tn__pbs_eq(op, "Elu")) r = tn__oxi_unary(c, ELU, x, tn__oxn_float(n, "alpha", 1), 1, 1);
    else if (tn__pbs_eq(op, "Selu")) r = tn__oxi_unary(c, ELU, x, tn__oxn_float(n, "alpha", 1.67326319217681884765625), tn__oxn_float(n, "gamma", 1.05070102214813232421875), 1);
    else if (tn__pbs_eq(op, "Softplus")) r = tn__oxi_unary(c, SOFTPLUS, x, 1, 20, 0);
    else if (tn__pbs_eq(op, "Gelu")) {
        const tn__oxa *a = tn__oxn_attr(n, "approximate");
        bool tanh_ = false;
        if (a) { tn__pbs m = a->msg; tn__pbf f; while (tn__pb_next(&m, &f) > 0) if (f.field == 4 && f.wt == 2) tanh_ = tn__pbs_eq(f.s, "tanh"); }
        r = tn__oxi_unary(c, tanh_ ? GELU_TANH : GELU, x, 0, 0, 0);
    } else if (tn__pbs_eq(op, "HardSigmoid")) {
        const double al = tn__oxn_float(n, "alpha", 0.2), be = tn__oxn_float(n, "beta", 0.5);
        const int sa = tn__oxi_scalar(c, al, xt->dtype), sb = tn__oxi_scalar(c, be, xt->dtype);
        r = sa < 0 || sb < 0 ? -1 : tn__oxi_binary(c, MUL, x, sa);
        if (r >= 0) r = tn__oxi_binary(c, ADD, r, sb);
        if (r >= 0) r = tn__oxi_unary(c, CLAMP, r, 0, 1, 0);
    } else if (tn__pbs_eq(op, "Clip")) {
        double lo = -INFINITY, hi = INFINITY;
        if (c->opset < 11) { lo = tn__oxn_float(n, "min", -INFINITY); hi = tn__oxn_float(n, "max", INFINITY); }
        for (int k = 1; k <= 2; k++) {
            if (in[k] < 0) continue;
            const tn_tensor *t = tn__oxi_ex(c, in[k]);
            if (c->v[in[k]].gv >= 0 || tn_numel(t) != 1) return TN__FAIL_INT("%s: Clip: min and max computed when running are not supported (constant scalars are)", fn);
            const double v = tn_item((tn_tensor *)t);
            if (k == 1) lo = v; else hi = v;
        }
        r = tn__oxi_unary(c, CLAMP, x, lo, hi, 0);
    } else if (tn__pbs_eq(op, "Cast") || tn__pbs_eq(op, "CastLike")) {
        tn_dtype dt;
        if (tn__pbs_eq(op, "CastLike")) { if (in[1] < 0) return TN__FAIL_INT("%s: CastLike takes 2 inputs", fn); dt = tn__oxi_ex(c, in[1])->dtype; }
        else if (tn__onnx_dtype(tn__oxn_int(n, "to", 0), &dt)) return TN__FAIL_INT("%s: Cast to %s is not supported", fn, tn__onnx_type_name(tn__oxn_int(n, "to", 0)));
        iv[0] = dt;
        r = xt->dtype == dt ? x : tn__oxi_op1(c, J_TO, x, iv, 1);
    } else if (tn__pbs_eq(op, "MatMul")) {
        if (in[1] < 0) return TN__FAIL_INT("%s: MatMul takes 2 inputs", fn);
        const int ab[2] = {x, in[1]};
        r = tn__oxi_op(c, J_MATMUL, 0, ab, 2, NULL, 0, NULL, 0);
    } else if (tn__pbs_eq(op, "Gemm")) {
        if (in[1] < 0) return TN__FAIL_INT("%s: Gemm takes 2 or 3 inputs", fn);
        int A = x, B = in[1];
        const int64_t t10[2] = {1, 0};
        if (tn__oxn_int(n, "transA", 0)) A = tn__oxi_op1(c, J_PERMUTE, A, t10, 2);
        if (B >= 0 && tn__oxn_int(n, "transB", 0)) B = tn__oxi_op1(c, J_PERMUTE, B, t10, 2);
        if (A < 0 || B < 0) return -1;
        const double al = tn__oxn_float(n, "alpha", 1), be = tn__oxn_float(n, "beta", 1);
        if (in[2] >= 0) {
            const int abc[3] = {in[2], A, B};
            const double d[2] = {be, al};
            r = tn__oxi_op(c, J_ADDMM, 0, abc, 3, NULL, 0, d, 2);
        } else {
            const int ab[2] = {A, B};
            r = tn__oxi_op(c, J_MM, 0, ab, 2, NULL, 0, NULL, 0);
            if (r >= 0 && al != 1) { const int s = tn__oxi_scalar(c, al, tn__oxi_ex(c, r)->dtype); r = s < 0 ? -1 : tn__oxi_binary(c, MUL, r, s); }
        }
    } else if (tn__pbs_eq(op, "Conv")) {
        if (in[1] < 0) return TN__FAIL_INT("%s: Conv takes 2 or 3 inputs", fn);
        const tn_tensor *w = tn__oxi_ex(c, in[1]);
        int64_t k[2], s[2], dl[2], pad[2];
        if (w->ndim == 3 && xt->ndim == 3) {   /* 1-d: a 2-d convolution over [N, C, 1, L] */
            int64_t k = w->shape[2], s = 1, dl = 1, p[2] = {0, 0};
            const int ns = tn__oxn_ints(n, "strides", &s, 1), nd = tn__oxn_ints(n, "dilations", &dl, 1), np = tn__oxn_ints(n, "pads", p, 2);
            if (ns == -2 || nd == -2 || np == -2 || (np >= 0 && np != 2)) return TN__FAIL_INT("%s: Conv: 1-d strides, dilations and pads are malformed", fn);
            const tn__oxa *ap = tn__oxn_attr(n, "auto_pad");
            if (ap) {
                tn__pbs m = ap->msg, sv = {NULL, 0};
                tn__pbf f;
                while (tn__pb_next(&m, &f) > 0) if (f.field == 4 && f.wt == 2) sv = f.s;
                if (sv.n && !tn__pbs_eq(sv, "NOTSET") && !tn__pbs_eq(sv, "VALID")) return TN__FAIL_INT("%s: Conv: 1-d auto_pad '%s' is not supported", fn, tn__pbs_show(sv, b, sizeof b));
            }
            if (p[0] != p[1]) return TN__FAIL_INT("%s: Conv: asymmetric pads are not supported", fn);
            (void)k;
            const int64_t xs[4] = {xt->shape[0], xt->shape[1], 1, xt->shape[2]}, ws[4] = {w->shape[0], w->shape[1], 1, w->shape[2]};
            const int x4 = tn__oxi_reshape(c, x, xs, 4), w4 = x4 < 0 ? -1 : tn__oxi_reshape(c, in[1], ws, 4);
            if (w4 < 0) return -1;
            const int64_t a[7] = {1, s, 0, p[0], 1, dl, tn__oxn_int(n, "group", 1)};
            const int ins[3] = {x4, w4, in[2]};
            r = tn__oxi_op(c, J_CONV2D, 0, ins, 3, a, 7, NULL, 0);
            if (r >= 0) {
                const tn_tensor *o = tn__oxi_ex(c, r);
                const int64_t os[3] = {o->shape[0], o->shape[1], o->shape[3]};
                r = tn__oxi_reshape(c, r, os, 3);
            }
        } else {
            if (w->ndim != 4) return TN__FAIL_INT("%s: Conv: a %d-d convolution is not supported (1-d and 2-d are; weight %s)", fn, w->ndim - 2, TN__SHAPE(w));
            if (tn__oxi_window(c, n, xt, w->shape, k, s, dl, pad)) return -1;
            const int64_t a[7] = {s[0], s[1], pad[0], pad[1], dl[0], dl[1], tn__oxn_int(n, "group", 1)};
            const int ins[3] = {x, in[1], in[2]};
            r = tn__oxi_op(c, J_CONV2D, 0, ins, 3, a, 7, NULL, 0);
        }
    } else if (tn__pbs_eq(op, "MaxPool") || tn__pbs_eq(op, "AveragePool")) {
        int64_t k[2], s[2], dl[2], pad[2];
        if (tn__oxi_window(c, n, xt, NULL, k, s, dl, pad)) return -1;
        if (tn__oxn_int(n, "storage_order", 0)) return TN__FAIL_INT("%s: MaxPool: storage_order=1 is not supported", fn);
        if (tn__pbs_eq(op, "MaxPool")) {
            const int64_t a[9] = {k[0], k[1], s[0], s[1], pad[0], pad[1], dl[0], dl[1], tn__oxn_int(n, "ceil_mode", 0)};
            r = tn__oxi_op1(c, J_MAX_POOL2D, x, a, 9);
        } else {
            if (dl[0] != 1 || dl[1] != 1) return TN__FAIL_INT("%s: AveragePool: dilations are not supported", fn);
            const int64_t a[8] = {k[0], k[1], s[0], s[1], pad[0], pad[1], tn__oxn_int(n, "ceil_mode", 0), tn__oxn_int(n, "count_include_pad", 0)};
            r = tn__oxi_op1(c, J_AVG_POOL2D, x, a, 8);
        }
    } else if (tn__pbs_eq(op, "GlobalAveragePool") || tn__pbs_eq(op, "GlobalMaxPool")) {
        if (xt->ndim < 3) return TN__FAIL_INT("%s: %s: the input must be [N, C, ...]", fn, tn__pbs_show(op, b, sizeof b));
        if (tn__pbs_eq(op, "GlobalMaxPool")) {
            if (xt->ndim != 4) return TN__FAIL_INT("%s: GlobalMaxPool: only [N, C, H, W] inputs are supported", fn);
            const int64_t a[9] = {xt->shape[2], xt->shape[3], xt->shape[2], xt->shape[3], 0, 0, 1, 1, 0};
            r = tn__oxi_op1(c, J_MAX_POOL2D, x, a, 9);
        } else {
            int ni = 0;
            for (int d = 2; d < xt->ndim; d++) iv[ni++] = d;
            iv[ni++] = 1;
            r = tn__oxi_op1(c, J_MEAN, x, iv, ni);
        }
    } else if (tn__pbs_eq(op, "BatchNormalization")) {
        if (n->nin < 5 || in[1] < 0 || in[2] < 0 || in[3] < 0 || in[4] < 0) return TN__FAIL_INT("%s: BatchNormalization takes 5 inputs", fn);
        if (tn__oxn_int(n, "training_mode", 0)) return TN__FAIL_INT("%s: BatchNormalization in training mode is not supported", fn);
        if (c->opset < 7 && (!tn__oxn_int(n, "is_test", 0) || !tn__oxn_int(n, "spatial", 1))) return TN__FAIL_INT("%s: BatchNormalization with is_test=0 or spatial=0 is not supported", fn);
        const int ins[5] = {x, in[3], in[4], in[1], in[2]};
        const double d[2] = {1 - tn__oxn_float(n, "momentum", 0.9), tn__oxn_float(n, "epsilon", 1e-5)};
        r = tn__oxi_op(c, J_BATCH_NORM, 0, ins, 5, NULL, 0, d, 2);
    } else if (tn__pbs_eq(op, "LayerNormalization")) {
        int64_t ax;
        if (tn__oxi_axis(c, n, tn__oxn_int(n, "axis", -1), xt->ndim, &ax)) return -1;
        const int ins[3] = {x, in[1], in[2]};
        const int64_t k = xt->ndim - ax;
        const double eps = tn__oxn_float(n, "epsilon", 1e-5);
        r = tn__oxi_op(c, J_LAYER_NORM, 0, ins, 3, &k, 1, &eps, 1);
    } else if (tn__pbs_eq(op, "Softmax") || tn__pbs_eq(op, "LogSoftmax")) {
        const bool old = c->opset < 13;
        int64_t ax;
        if (tn__oxi_axis(c, n, tn__oxn_int(n, "axis", old ? 1 : -1), xt->ndim, &ax)) return -1;
        const tn__jit_op jo = tn__pbs_eq(op, "Softmax") ? J_SOFTMAX : J_LOG_SOFTMAX;
        if (!old || ax == xt->ndim - 1) r = tn__oxi_op1(c, jo, x, &ax, 1);
        else {   /* before opset 13: over the flattened dims from axis on */
            int64_t f[2] = {1, 1}, one = 1;
            for (int d = 0; d < xt->ndim; d++) f[d >= ax] *= xt->shape[d];
            r = tn__oxi_reshape(c, x, f, 2);
            if (r >= 0) r = tn__oxi_op1(c, jo, r, &one, 1);
            if (r >= 0) r = tn__oxi_reshape(c, r, xt->shape, xt->ndim);
        }
    } else if (tn__pbs_eq(op, "Flatten")) {
        int64_t ax = tn__oxn_int(n, "axis", 1);
        if (ax < -xt->ndim || ax > xt->ndim) return TN__FAIL_INT("%s: Flatten: axis %lld out of range for a %d-d input", fn, (long long)ax, xt->ndim);
        if (ax < 0) ax += xt->ndim;
        int64_t f[2] = {1, 1};
        for (int d = 0; d < xt->ndim; d++) f[d >= ax] *= xt->shape[d];
        r = tn__oxi_reshape(c, x, f, 2);
    } else if (tn__pbs_eq(op, "Reshape")) {
        const int cnt = tn__oxi_const_ints(c, n, in[1], sh, TN_MAX_DIMS, "shape");
        if (cnt < 0) return -1;
        int neg = -1;
        int64_t known = 1;
        const bool allowzero = tn__oxn_int(n, "allowzero", 0) != 0;
        for (int d = 0; d < cnt; d++) {
            if (sh[d] == 0 && !allowzero) {
                if (d >= xt->ndim) return TN__FAIL_INT("%s: Reshape: a 0 at position %d copies a dim the %d-d input does not have", fn, d, xt->ndim);
                sh[d] = xt->shape[d];
            }
            if (sh[d] == -1 && neg < 0) { neg = d; continue; }
            if (sh[d] < 0) return TN__FAIL_INT("%s: Reshape: invalid size %lld", fn, (long long)sh[d]);
            if (!tn__mul_ok(known, sh[d], &known)) return TN__FAIL_INT("%s: Reshape: the sizes multiply past int64", fn);
        }
        if (neg >= 0) sh[neg] = known ? tn_numel(xt) / known : 0;
        r = tn__oxi_reshape(c, x, sh, cnt);
    } else if (tn__pbs_eq(op, "Squeeze") || tn__pbs_eq(op, "Unsqueeze")) {
        int64_t axes[TN_MAX_DIMS];
        int na;
        if (c->opset < 13) { na = tn__oxn_ints(n, "axes", axes, TN_MAX_DIMS); if (na == -2) return tn__oxi_fail(c, "axes attribute malformed"); }
        else na = in[1] >= 0 ? tn__oxi_const_ints(c, n, in[1], axes, TN_MAX_DIMS, "axes") : -1;
        if (na < -1 || (na < 0 && in[1] >= 0)) return -1;
        const bool sq = tn__pbs_eq(op, "Squeeze");
        const int outnd = sq ? xt->ndim - (na < 0 ? 0 : na) : xt->ndim + na;
        if (!sq && na < 0) return TN__FAIL_INT("%s: Unsqueeze: axes are required", fn);
        bool mark[TN_MAX_DIMS + 1] = {false};
        for (int k = 0; k < na; k++) {
            int64_t a;
            if (tn__oxi_axis(c, n, axes[k], sq ? xt->ndim : outnd, &a) || outnd > TN_MAX_DIMS || outnd < 0) return outnd > TN_MAX_DIMS ? TN__FAIL_INT("%s: %s: too many dims", fn, tn__pbs_show(op, b, sizeof b)) : -1;
            if (mark[a]) return TN__FAIL_INT("%s: %s: axis %lld repeated", fn, tn__pbs_show(op, b, sizeof b), (long long)axes[k]);
            mark[a] = true;
        }
        int m = 0;
        if (sq) {
            for (int d = 0; d < xt->ndim; d++) {
                if (na < 0 ? xt->shape[d] == 1 : mark[d]) {
                    if (xt->shape[d] != 1) return TN__FAIL_INT("%s: Squeeze: dim %d has size %lld, not 1", fn, d, (long long)xt->shape[d]);
                    continue;
                }
                sh[m++] = xt->shape[d];
            }
        } else for (int d = 0, s = 0; d < outnd; d++) sh[m++] = mark[d] ? 1 : xt->shape[s++];
        r = tn__oxi_reshape(c, x, sh, m);
    } else if (tn__pbs_eq(op, "Transpose")) {
        int np = tn__oxn_ints(n, "perm", iv, TN_MAX_DIMS);
        if (np == -2) return tn__oxi_fail(c, "perm attribute malformed");
        if (np < 0) { np = xt->ndim; for (int d = 0; d < np; d++) iv[d] = np - 1 - d; }
        r = tn__oxi_op1(c, J_PERMUTE, x, iv, np);
    } else if (tn__pbs_eq(op, "Concat")) {
        int64_t ax;
        if (tn__oxi_axis(c, n, tn__oxn_int(n, "axis", 0), xt->ndim, &ax)) return -1;
        int ins[16], m = 0;
        for (int k = 0; k < nin; k++) if (in[k] >= 0) ins[m++] = in[k];
        r = tn__oxi_op(c, J_CAT, 0, ins, m, &ax, 1, NULL, 0);
    } else if (tn__pbs_eq(op, "Split")) {
        int64_t ax, sp[TN__JIT_MAXI];
        if (tn__oxi_axis(c, n, tn__oxn_int(n, "axis", 0), xt->ndim, &ax)) return -1;
        int ns = c->opset < 13 ? tn__oxn_ints(n, "split", sp, TN__JIT_MAXI) : in[1] >= 0 ? tn__oxi_const_ints(c, n, in[1], sp, TN__JIT_MAXI, "split") : -1;
        if (ns == -2 || (ns < 0 && in[1] >= 0)) return -1;
        if (n->nout > TN__JIT_MAXI) return TN__FAIL_INT("%s: Split into more than %d outputs is not supported", fn, TN__JIT_MAXI);
        if (ns < 0) {   /* equal parts */
            const int64_t len = xt->shape[ax];
            ns = n->nout;
            for (int k = 0; k < ns; k++) sp[k] = (len + ns - 1) / ns;
            sp[ns - 1] = len - (len + ns - 1) / ns * (ns - 1);
        }
        if (ns != n->nout) return TN__FAIL_INT("%s: Split: %d sizes for %d outputs", fn, ns, n->nout);
        int64_t at = 0;
        for (int k = 0; k < ns; k++) {
            if (sp[k] < 0 || at + sp[k] > xt->shape[ax]) return TN__FAIL_INT("%s: Split: the sizes do not add up to dim %lld's %lld", fn, (long long)ax, (long long)xt->shape[ax]);
            const int64_t a[4] = {ax, at, at + sp[k], 1};
            const int e = tn__oxi_op1(c, J_SLICE, x, a, 4);
            if (e < 0 || tn__oxi_bind(c, n->out[k], e)) return -1;
            at += sp[k];
        }
        return 0;
    } else if (tn__pbs_eq(op, "Slice")) {
        int64_t st[TN_MAX_DIMS], en[TN_MAX_DIMS], ax[TN_MAX_DIMS], stp[TN_MAX_DIMS];
        int ns, ne, na = -1, nst = -1;
        if (c->opset < 10) {
            ns = tn__oxn_ints(n, "starts", st, TN_MAX_DIMS); ne = tn__oxn_ints(n, "ends", en, TN_MAX_DIMS); na = tn__oxn_ints(n, "axes", ax, TN_MAX_DIMS);
            if (ns < 0 || ne < 0 || na == -2) return TN__FAIL_INT("%s: Slice: starts and ends are required", fn);
        } else {
            ns = tn__oxi_const_ints(c, n, in[1], st, TN_MAX_DIMS, "starts");
            ne = ns < 0 ? -1 : tn__oxi_const_ints(c, n, in[2], en, TN_MAX_DIMS, "ends");
            if (ne >= 0 && in[3] >= 0) na = tn__oxi_const_ints(c, n, in[3], ax, TN_MAX_DIMS, "axes");
            if (ne >= 0 && in[4] >= 0) nst = tn__oxi_const_ints(c, n, in[4], stp, TN_MAX_DIMS, "steps");
            if (ns < 0 || ne < 0 || (in[3] >= 0 && na < 0) || (in[4] >= 0 && nst < 0)) return -1;
        }
        if (na < 0) { na = ns; for (int k = 0; k < na; k++) ax[k] = k; }
        if (nst < 0) { nst = ns; for (int k = 0; k < nst; k++) stp[k] = 1; }
        if (ns != ne || ns != na || ns != nst) return TN__FAIL_INT("%s: Slice: starts, ends, axes and steps differ in length", fn);
        r = x;
        for (int k = 0; k < ns && r >= 0; k++) {
            int64_t a;
            if (tn__oxi_axis(c, n, ax[k], xt->ndim, &a)) return -1;
            const int64_t len = xt->shape[a];
            if (stp[k] <= 0) return TN__FAIL_INT("%s: Slice: step %lld is not supported (only positive steps)", fn, (long long)stp[k]);
            int64_t s0 = st[k] < 0 ? (st[k] < -len ? 0 : st[k] + len) : TN__MIN(st[k], len);
            int64_t e0 = en[k] < 0 ? (en[k] < -len ? 0 : en[k] + len) : TN__MIN(en[k], len);
            if (e0 < s0) e0 = s0;
            if (s0 == 0 && e0 == len && stp[k] == 1) continue;
            const int64_t sa[4] = {a, s0, e0, stp[k]};
            r = tn__oxi_op1(c, J_SLICE, r, sa, 4);
        }
        if (r == x) r = tn__oxi_op1(c, J_CLONE, x, NULL, 0);
    } else if (tn__pbs_eq(op, "Pad")) {   /* constant mode: slices (negative pads) and concatenated constant blocks */
        const tn__oxa *md = tn__oxn_attr(n, "mode");
        if (md) {
            tn__pbs m = md->msg, sv = {NULL, 0};
            tn__pbf f;
            while (tn__pb_next(&m, &f) > 0) if (f.field == 4 && f.wt == 2) sv = f.s;
            if (!tn__pbs_eq(sv, "constant")) return TN__FAIL_INT("%s: Pad: mode '%s' is not supported (only 'constant')", fn, tn__pbs_show(sv, b, sizeof b));
        }
        int64_t pads[2 * TN_MAX_DIMS];
        double value = 0;
        int np = c->opset < 11 ? tn__oxn_ints(n, "pads", pads, 2 * TN_MAX_DIMS) : tn__oxi_const_ints(c, n, in[1], pads, 2 * TN_MAX_DIMS, "pads");
        if (np < 0) return np == -1 && c->opset < 11 ? TN__FAIL_INT("%s: Pad: pads are required", fn) : -1;
        if (np != 2 * xt->ndim) return TN__FAIL_INT("%s: Pad: %d pads for a %d-d input", fn, np, xt->ndim);
        if (c->opset < 11) value = tn__oxn_float(n, "value", 0);
        else if (in[2] >= 0) {
            if (c->v[in[2]].gv >= 0 || tn_numel(c->v[in[2]].t) != 1) return TN__FAIL_INT("%s: Pad: a constant_value computed when running is not supported", fn);
            value = tn_item(c->v[in[2]].t);
        }
        if (n->nin > 3 && in[3] >= 0) return TN__FAIL_INT("%s: Pad: axes are not supported", fn);
        r = x;
        for (int d = 0; d < xt->ndim && r >= 0; d++) {
            const int64_t lo = pads[d], hi = pads[xt->ndim + d];
            if (lo == 0 && hi == 0) continue;
            if (c->g->dyn_input >= 0) return TN__FAIL_INT("%s: Pad with a dynamic batch is not supported", fn);
            const tn_tensor *cur = tn__oxi_ex(c, r);
            if (lo < 0 || hi < 0) {
                const int64_t s0 = lo < 0 ? -lo : 0, e0 = cur->shape[d] - (hi < 0 ? -hi : 0);
                if (e0 < s0) return TN__FAIL_INT("%s: Pad: negative pads remove more than dim %d holds", fn, d);
                const int64_t sa[4] = {d, s0, e0, 1};
                if ((r = tn__oxi_op1(c, J_SLICE, r, sa, 4)) < 0) break;
                cur = tn__oxi_ex(c, r);
            }
            int parts[3], m = 0;
            for (int side = 0; side < 2; side++) {
                const int64_t w = side ? hi : lo;
                if (side == 1) parts[m++] = r;
                if (w <= 0) continue;
                int64_t bs[TN_MAX_DIMS];
                memcpy(bs, cur->shape, (size_t)cur->ndim * sizeof(int64_t));
                bs[d] = w;
                tn_scope_begin();
                tn_tensor *blk = tn_retain(tn_full(bs, cur->ndim, value, cur->dtype));
                tn_scope_end();
                if (!blk || (parts[m++] = tn__oxi_add(c, NULL, blk, -1)) < 0) return -1;
            }
            if (m > 1) { const int64_t dd = d; r = tn__oxi_op(c, J_CAT, 0, parts, m, &dd, 1, NULL, 0); }
        }
    } else if (tn__pbs_eq(op, "Gather")) {
        if (in[1] < 0) return TN__FAIL_INT("%s: Gather takes 2 inputs", fn);
        int64_t ax;
        if (tn__oxi_axis(c, n, tn__oxn_int(n, "axis", 0), xt->ndim, &ax)) return -1;
        int idx = in[1];
        const tn_tensor *it = tn__oxi_ex(c, idx);
        if (it->dtype != TN_I64 && it->dtype != TN_I32) return TN__FAIL_INT("%s: Gather: indices must be int32 or int64, got %s", fn, tn_dtype_name(it->dtype));
        if (c->v[idx].gv < 0) {   /* constant indices: negative ones wrap */
            tn_scope_begin();
            tn_tensor *iw = tn_to_dtype((tn_tensor *)it, TN_I64);
            tn_tensor *fix = iw ? tn_where(tn_lt_scalar(iw, 0), tn_add_scalar(iw, (double)xt->shape[ax]), iw) : NULL;
            tn_tensor *kept = tn_retain(fix);
            tn_scope_end();
            if (!kept) return -1;
            if ((idx = tn__oxi_add(c, NULL, kept, -1)) < 0) return -1;
            it = kept;
            if (it->ndim == 0) {
                const int64_t a[2] = {ax, ((const int64_t *)tn_data_ptr(kept))[0]};
                r = tn__oxi_op1(c, J_SELECT, x, a, 2);
            }
        } else {   /* indices known when running: int64, negative ones wrapped (where(i < 0, i + n, i)) */
            if (it->dtype != TN_I64) {
                iv[0] = TN_I64;
                if ((idx = tn__oxi_op1(c, J_TO, idx, iv, 1)) < 0) return -1;
            }
            const int z = tn__oxi_scalar(c, 0, TN_I64), sz = tn__oxi_scalar(c, (double)xt->shape[ax], TN_I64);
            const int neg = z < 0 ? -1 : tn__oxi_binary(c, LT, idx, z), wrapped = sz < 0 ? -1 : tn__oxi_binary(c, ADD, idx, sz);
            if (neg < 0 || wrapped < 0) return -1;
            const int w3[3] = {neg, wrapped, idx};
            const double one = 1;
            if ((idx = tn__oxi_op(c, J_TERNARY, WHERE, w3, 3, NULL, 0, &one, 1)) < 0) return -1;
            it = tn__oxi_ex(c, idx);
        }
        if (r == -2) {
            const int64_t flat = -1;   /* -1, not the size: a dynamic batch changes it */
            const int fi = it->ndim == 1 ? idx : tn__oxi_reshape(c, idx, &flat, 1);
            if (fi < 0) return -1;
            const int ins[2] = {x, fi};
            r = tn__oxi_op(c, J_INDEX_SELECT, 0, ins, 2, &ax, 1, NULL, 0);
            if (r >= 0 && it->ndim != 1) {
                int m = 0;
                if (xt->ndim - 1 + it->ndim > TN_MAX_DIMS) return TN__FAIL_INT("%s: Gather: too many dims", fn);
                for (int d = 0; d < ax; d++) sh[m++] = xt->shape[d];
                for (int d = 0; d < it->ndim; d++) sh[m++] = it->shape[d];
                for (int d = (int)ax + 1; d < xt->ndim; d++) sh[m++] = xt->shape[d];
                r = tn__oxi_reshape(c, r, sh, m);
            }
        }
    } else if (tn__pbs_eq(op, "Expand")) {
        const int cnt = tn__oxi_const_ints(c, n, in[1], sh, TN_MAX_DIMS, "shape");
        if (cnt < 0) return -1;
        const int nd = TN__MAX(cnt, xt->ndim);
        int64_t o[TN_MAX_DIMS];
        for (int d = 0; d < nd; d++) {   /* bidirectional broadcasting */
            const int ds = d - (nd - cnt), dx = d - (nd - xt->ndim);
            const int64_t a = ds >= 0 ? sh[ds] : 1, bx = dx >= 0 ? xt->shape[dx] : 1;
            if (a != bx && a != 1 && bx != 1) return TN__FAIL_INT("%s: Expand: shape %s does not broadcast with the input's %s", fn, tn__shape_str(sh, cnt), TN__SHAPE(xt));
            o[d] = a == 1 ? bx : a;
        }
        r = tn__oxi_op1(c, J_EXPAND, x, o, nd);
    } else if (tn__pbs_eq(op, "ReduceMean") || tn__pbs_eq(op, "ReduceSum")) {
        const bool sum = tn__pbs_eq(op, "ReduceSum");
        int64_t axes[TN_MAX_DIMS];
        int na = (sum ? c->opset < 13 : c->opset < 18) ? tn__oxn_ints(n, "axes", axes, TN_MAX_DIMS) : in[1] >= 0 ? tn__oxi_const_ints(c, n, in[1], axes, TN_MAX_DIMS, "axes") : -1;
        if (na == -2 || (na < 0 && in[1] >= 0)) return -1;
        const int64_t keep = tn__oxn_int(n, "keepdims", 1);
        if (na == 0 && tn__oxn_int(n, "noop_with_empty_axes", 0)) r = x;
        else {
            int m = 0;
            if (na <= 0) for (int d = 0; d < xt->ndim; d++) iv[m++] = d;
            else for (int k = 0; k < na; k++) if (tn__oxi_axis(c, n, axes[k], xt->ndim, &iv[m++])) return -1;
            iv[m++] = keep != 0;
            r = tn__oxi_op1(c, sum ? J_SUM : J_MEAN, x, iv, m);
        }
    } else if (tn__pbs_eq(op, "Shape") || tn__pbs_eq(op, "Size")) {
        tn_tensor *t;
        if (tn__pbs_eq(op, "Size")) t = tn__new(TN_I64, TN_CPU, NULL, 0);
        else {
            int64_t s0 = tn__oxn_int(n, "start", 0), e0 = tn__oxn_int(n, "end", xt->ndim);
            const int64_t nd = xt->ndim;
            s0 = s0 < 0 ? TN__MAX(s0 + nd, 0) : TN__MIN(s0, nd);
            e0 = e0 < 0 ? TN__MAX(e0 + nd, 0) : TN__MIN(e0, nd);
            const int64_t len = TN__MAX(e0 - s0, 0);
            t = tn__new(TN_I64, TN_CPU, &len, 1);
            if (t) for (int64_t d = 0; d < len; d++) ((int64_t *)tn_data_ptr(t))[d] = xt->shape[s0 + d];
        }
        if (!t) return -1;
        if (tn__pbs_eq(op, "Size")) *(int64_t *)tn_data_ptr(t) = tn_numel(xt);
        r = tn__oxi_add(c, NULL, t, -1);
    } else if (tn__pbs_eq(op, "Constant")) {
        const tn__oxa *a = n->nat == 1 ? &n->at[0] : NULL;
        tn_tensor *t = NULL;
        if (!a) return TN__FAIL_INT("%s: Constant needs exactly one attribute", fn);
        if (tn__pbs_eq(a->name, "value")) { if (tn__oxi_tensor(c, a->t, &t, NULL)) return -1; }
        else if (tn__pbs_eq(a->name, "value_float") || tn__pbs_eq(a->name, "value_int")) {
            const bool fl = tn__pbs_eq(a->name, "value_float");
            t = tn__new(fl ? TN_F32 : TN_I64, TN_CPU, NULL, 0);
            if (t && fl) *(float *)tn_data_ptr(t) = (float)a->f;
            else if (t) *(int64_t *)tn_data_ptr(t) = a->i;
        } else if (tn__pbs_eq(a->name, "value_ints")) {
            int64_t vals[TN_LIST_MAX];
            const int cnt = tn__oxn_ints(n, "value_ints", vals, TN_LIST_MAX);
            if (cnt < 0) return TN__FAIL_INT("%s: Constant: value_ints longer than %d values is not supported", fn, TN_LIST_MAX);
            const int64_t len = cnt;
            t = tn__new(TN_I64, TN_CPU, &len, 1);
            if (t && cnt) memcpy(tn_data_ptr(t), vals, (size_t)cnt * sizeof(int64_t));
        } else return TN__FAIL_INT("%s: Constant with attribute '%s' is not supported", fn, tn__pbs_show(a->name, b, sizeof b));
        if (!t) return -1;
        r = tn__oxi_add(c, NULL, t, -1);
    } else if (tn__pbs_eq(op, "ConstantOfShape")) {
        const int cnt = tn__oxi_const_ints(c, n, x, sh, TN_MAX_DIMS, "shape");
        if (cnt < 0) return -1;
        const tn__oxa *a = tn__oxn_attr(n, "value");
        tn_tensor *v = NULL;
        if (a && tn__oxi_tensor(c, a->t, &v, NULL)) return -1;
        if (v && tn_numel(v) != 1) { tn_release(v); return TN__FAIL_INT("%s: ConstantOfShape: value must hold one element", fn); }
        for (int d = 0; d < cnt; d++) if (sh[d] < 0) { tn_release(v); return TN__FAIL_INT("%s: ConstantOfShape: negative size", fn); }
        tn_scope_begin();
        tn_tensor *t = tn_retain(tn_full(sh, cnt, v ? tn_item(v) : 0.0, v ? v->dtype : TN_F32));
        tn_scope_end();
        tn_release(v);
        if (!t) return -1;
        r = tn__oxi_add(c, NULL, t, -1);
    } else if (tn__pbs_eq(op, "Range")) {
        for (int k = 0; k < 3; k++)
            if (in[k] < 0 || c->v[in[k]].gv >= 0 || tn_numel(c->v[in[k]].t) != 1) return TN__FAIL_INT("%s: Range: start, limit and delta computed when running are not supported (constant scalars are)", fn);
        const double s0 = tn_item(c->v[in[0]].t), l0 = tn_item(c->v[in[1]].t), d0 = tn_item(c->v[in[2]].t);
        if (d0 == 0) return TN__FAIL_INT("%s: Range: delta is 0", fn);
        tn_scope_begin();
        tn_tensor *t = tn_retain(tn_arange(s0, (d0 > 0 && l0 < s0) || (d0 < 0 && l0 > s0) ? s0 : l0, d0, xt->dtype));
        tn_scope_end();
        if (!t) return -1;
        r = tn__oxi_add(c, NULL, t, -1);
    }
    else if (tn__pbs_eq(op, "LSTM") || tn__pbs_eq(op, "GRU") || tn__pbs_eq(op, "RNN")) return tn__oxi_rnn(c, n, in);
    if (r == -2) {
        char b2[64];
        return TN__FAIL_INT("%s: operator %s%s%s (opset %lld) is not supported (node %s)", fn, n->domain.n ? tn__pbs_show(n->domain, b2, sizeof b2) : "", n->domain.n ? "." : "",
                            tn__pbs_show(op, b, sizeof b), (long long)c->opset, tn__pbs_show(n->name, b2, sizeof b2));
    }
    if (r < 0) {
        char b2[64];
        return TN__FAIL_INT("%s: node %s (%s): %s", fn, tn__pbs_show(n->name, b2, sizeof b2), tn__pbs_show(op, b, sizeof b), tn_last_error());
    }
    return tn__oxi_bind(c, n->out[0], r);
}

/* A graph input's ValueInfoProto: name, dtype, static shape. */
/* The example sizes of a symbolic batch dim: the model is loaded with each, and the
   reshape / expand sizes that differ between the two are the ones that follow the batch
   (tn__onnx_dyn_merge). Unusual sizes, since a first size equal to the batch follows it. */
#define TN__ONNX_DYN_EXAMPLE 13
#define TN__ONNX_DYN_EXAMPLE2 17
static int tn__oxi_input(tn__oxi *c, tn__pbs msg, tn__pbs *name, tn_dtype *dt, int64_t *shape, int *ndim, bool *dyn0) {
    tn__pbs m = msg, type = {NULL, 0}, tt = {NULL, 0}, sh = {NULL, 0};
    tn__pbf f;
    int r;
    bool has_type = false, has_tt = false, has_shape = false;
    int64_t et = 0;
    name->p = NULL; name->n = 0;
    *dyn0 = false;
    while ((r = tn__pb_next(&m, &f)) > 0) {
        if (f.field == 1 && f.wt == 2) *name = f.s;
        else if (f.field == 2 && f.wt == 2) { type = f.s; has_type = true; }
    }
    if (r < 0) return tn__oxi_fail(c, "an input's bytes are malformed");
    char b[64];
    while (has_type && (r = tn__pb_next(&type, &f)) > 0) if (f.field == 1 && f.wt == 2) { tt = f.s; has_tt = true; }
    if (r < 0 || !has_tt) return TN__FAIL_INT("%s: input '%s' is not a tensor: sequences, maps and optionals are not supported", c->fn, tn__pbs_show(*name, b, sizeof b));
    while ((r = tn__pb_next(&tt, &f)) > 0) {
        if (f.field == 1 && f.wt == 0) et = (int64_t)f.v;
        else if (f.field == 2 && f.wt == 2) { sh = f.s; has_shape = true; }
    }
    if (r < 0) return tn__oxi_fail(c, "an input's type is malformed");
    if (tn__onnx_dtype(et, dt)) return TN__FAIL_INT("%s: input '%s' is %s, which is not supported", c->fn, tn__pbs_show(*name, b, sizeof b), tn__onnx_type_name(et));
    if (!has_shape) return TN__FAIL_INT("%s: input '%s' has no shape: only static shapes are supported", c->fn, tn__pbs_show(*name, b, sizeof b));
    *ndim = 0;
    while ((r = tn__pb_next(&sh, &f)) > 0) {
        if (f.field != 1 || f.wt != 2) continue;
        if (*ndim == TN_MAX_DIMS) return TN__FAIL_INT("%s: input '%s' has more than %d dims", c->fn, tn__pbs_show(*name, b, sizeof b), TN_MAX_DIMS);
        tn__pbs dm = f.s;
        tn__pbf g;
        bool val = false;
        tn__pbs param = {NULL, 0};
        while ((r = tn__pb_next(&dm, &g)) > 0) {
            if (g.field == 1 && g.wt == 0) { shape[*ndim] = (int64_t)g.v; val = true; }
            else if (g.field == 2 && g.wt == 2) param = g.s;
        }
        if (r < 0) return tn__oxi_fail(c, "an input's shape is malformed");
        if (!val && *ndim == 0) { shape[0] = c->dyn_example; *dyn0 = true; }   /* a symbolic batch */
        else if (!val || shape[*ndim] < 0) {
            char b2[64];
            return TN__FAIL_INT("%s: input '%s' has a symbolic size%s%s%s in dim %d: only static shapes and a symbolic dim 0 (the batch) are supported", c->fn,
                                tn__pbs_show(*name, b, sizeof b), param.n ? " ('" : "", param.n ? tn__pbs_show(param, b2, sizeof b2) : "", param.n ? "')" : "", *ndim);
        }
        (*ndim)++;
    }
    if (r < 0) return tn__oxi_fail(c, "an input's shape is malformed");
    int64_t numel;
    if (!tn__numel_ok(shape, *ndim, &numel)) return TN__FAIL_INT("%s: input '%s': its sizes multiply past int64", c->fn, tn__pbs_show(*name, b, sizeof b));
    return 0;
}

static tn_graph *tn__onnx_load_as(const char *fn, const uint8_t *data, size_t size, int64_t dyn_example) {
    tn__oxi c;
    memset(&c, 0, sizeof c);
    c.fn = fn;
    c.dyn_example = dyn_example;
    tn__pbs m = {data, size}, graph = {NULL, 0};
    tn__pbf f;
    int r;
    bool has_graph = false, has_opset = false;
    c.opset = 1;
    while ((r = tn__pb_next(&m, &f)) > 0) {
        if (f.field == 7 && f.wt == 2) { graph = f.s; has_graph = true; }
        else if (f.field == 8 && f.wt == 2) {   /* OperatorSetIdProto: domain, version */
            tn__pbs om = f.s, dom = {NULL, 0};
            tn__pbf g;
            int64_t ver = 0;
            while ((r = tn__pb_next(&om, &g)) > 0) {
                if (g.field == 1 && g.wt == 2) dom = g.s;
                else if (g.field == 2 && g.wt == 0) ver = (int64_t)g.v;
            }
            if (r < 0) { tn__oxi_fail(&c, "an opset_import is malformed"); return NULL; }
            if (dom.n == 0 || tn__pbs_eq(dom, "ai.onnx")) { c.opset = ver; has_opset = true; }
        }
    }
    if (r < 0) { tn__oxi_fail(&c, "the model's bytes are malformed (not an ONNX protobuf)"); return NULL; }
    if (!has_graph) { tn__oxi_fail(&c, "the model has no graph"); return NULL; }
    if (!has_opset) return (tn_graph *)tn__error("%s: the model imports no opset of the default domain (ai.onnx): other domains (training, ML) are not supported", fn);
    if (c.opset < 6 || c.opset > 18) return (tn_graph *)tn__error("%s: opset %lld is not supported (6 to 18 are)", fn, (long long)c.opset);
    if (!(c.g = tn__graph_new())) return NULL;
    tn_graph *g = c.g;
    int rc = 0, ni = 0, no = 0;
    /* first the initializers and the inputs, whatever their order in the bytes */
    tn__pbs gm = graph;
    while (rc == 0 && (r = tn__pb_next(&gm, &f)) > 0) {
        if (f.wt != 2) continue;
        if (f.field == 5) {
            tn_tensor *t = NULL;
            tn__pbs name;
            if (tn__oxi_tensor(&c, f.s, &t, &name)) { rc = -1; break; }
            char *nm = tn__pbs_dup(name);
            if (!nm) { tn_release(t); rc = TN__FAIL_INT("%s: out of memory", fn); break; }
            if (tn__oxi_add(&c, nm, t, -1) < 0) rc = -1;
        } else if (f.field == 15) rc = TN__FAIL_INT("%s: sparse initializers are not supported", fn);
        else if (f.field == 11) ni++;
        else if (f.field == 12) no++;
    }
    if (r < 0 && rc == 0) rc = tn__oxi_fail(&c, "the graph's bytes are malformed");
    const int ninit = c.nv;
    if (rc == 0) {
        g->inputs = (int *)TN_MALLOC((size_t)(ni + 1) * sizeof(int));
        g->outputs = (int *)TN_MALLOC((size_t)(no + 1) * sizeof(int));
        if (!g->inputs || !g->outputs) rc = TN__FAIL_INT("%s: out of memory", fn);
    }
    tn_no_grad_begin();
    gm = graph;
    while (rc == 0 && tn__pb_next(&gm, &f) > 0) {
        if (f.field != 11 || f.wt != 2) continue;
        tn__pbs name;
        tn_dtype dt;
        int64_t shape[TN_MAX_DIMS];
        int nd = 0;   /* set by tn__oxi_input; GCC -O1 cannot see it */
        bool dyn0;
        if (tn__oxi_input(&c, f.s, &name, &dt, shape, &nd, &dyn0)) { rc = -1; break; }
        bool init = false;   /* an input with an initializer is a constant (IR < 4 lists them) */
        for (int k = 0; k < ninit && !init; k++) init = strlen(c.v[k].name) == name.n && !memcmp(c.v[k].name, name.p, name.n);
        if (init) continue;
        int v = tn__graph_add_value(g, TN__GV_INPUT, dt, nd, shape);
        if (v < 0) { rc = -1; break; }
        g->inputs[g->ninputs++] = v;
        if (dyn0 && g->dyn_input >= 0) { char b[64]; rc = TN__FAIL_INT("%s: input '%s': a symbolic batch in more than one input is not supported", fn, tn__pbs_show(name, b, sizeof b)); break; }
        if (dyn0 && tn_graph_set_dynamic(g, g->ninputs - 1, 0)) { rc = -1; break; }        tn_scope_begin();
        tn_tensor *ex = tn_retain(tn_zeros(shape, nd, dt));
        tn_scope_end();
        char *nm = tn__pbs_dup(name);
        if (!ex || !nm) { tn_release(ex); TN_FREE(nm); rc = -1; break; }
        if (tn__oxi_add(&c, nm, ex, v) < 0) rc = -1;
    }
    /* the nodes, in order (ONNX lists them topologically sorted) */
    gm = graph;
    while (rc == 0 && tn__pb_next(&gm, &f) > 0) {
        if (f.field != 1 || f.wt != 2) continue;
        tn__oxn n;
        if (tn__oxn_parse(&c, f.s, &n)) { rc = -1; break; }
        rc = tn__oxi_node(&c, &n);
        tn__oxn_free(&n);
    }
    gm = graph;
    while (rc == 0 && tn__pb_next(&gm, &f) > 0) {
        if (f.field != 12 || f.wt != 2) continue;
        tn__pbs om = f.s, name = {NULL, 0};
        tn__pbf h;
        while (tn__pb_next(&om, &h) > 0) if (h.field == 1 && h.wt == 2) name = h.s;
        int e = tn__oxi_find(&c, name);
        char b[64];
        if (e < 0) { rc = TN__FAIL_INT("%s: output '%s' is not computed by the graph", fn, tn__pbs_show(name, b, sizeof b)); break; }
        int v = c.v[e].gv;
        if (v < 0 || g->vals[v].kind != TN__GV_NODE) {   /* a constant or an input returned: a node makes it */
            const int src = tn__oxi_gv(&c, e);
            tn__gnode *n = src < 0 ? NULL : tn__graph_add_node(g, J_CLONE, 1);
            v = n ? tn__graph_add_value(g, TN__GV_NODE, c.v[e].t->dtype, c.v[e].t->ndim, c.v[e].t->shape) : -1;
            if (v < 0) { rc = -1; break; }
            g->nodes[g->nnodes - 1].in[0] = src;
            g->nodes[g->nnodes - 1].out = v;
        }
        g->outputs[g->noutputs++] = v;
    }
    if (rc == 0 && g->noutputs == 0) rc = TN__FAIL_INT("%s: the graph has no outputs", fn);
    tn_no_grad_end();
    for (int k = 0; k < c.nv; k++) { TN_FREE(c.v[k].name); tn_release(c.v[k].t); }
    TN_FREE(c.v);
    if (rc == 0) rc = tn__graph_prune(g);
    if (rc) { tn_graph_free(g); return NULL; }
    return g;
}
/* A dynamic batch: the graph loaded with another example batch (b) must be the same but
   for sizes that follow the batch: a reshape's or expand's size that differs becomes -1
   (reshape: inferred; expand: kept), besides a first size equal to the batch (which
   follows it when running); anything else that depends on the batch is refused. */
static int tn__onnx_dyn_merge(const char *fn, tn_graph *a, const tn_graph *b) {
    const char *why = NULL;
    if (a->nnodes != b->nnodes || a->nvals != b->nvals) why = "the graph's structure depends on it";
    for (int v = 0; v < a->nvals && !why; v++)
        if (a->vals[v].kind == TN__GV_CONST && (a->vals[v].ndim != b->vals[v].ndim || memcmp(a->vals[v].shape, b->vals[v].shape, (size_t)a->vals[v].ndim * sizeof(int64_t))))
            why = "a constant computed when loading depends on it";
    for (int k = 0; k < a->nnodes && !why; k++) {
        tn__gnode *x = &a->nodes[k];
        const tn__gnode *y = &b->nodes[k];
        if (x->op != y->op || x->sub != y->sub || x->ni != y->ni || x->nin != y->nin) { why = "the graph's structure depends on it"; break; }
        int diff = 0, pos = -1;
        for (int d = 0; d < x->ni; d++) {
            if (x->i[d] == y->i[d]) continue;
            if ((x->op == J_RESHAPE || x->op == J_EXPAND) && d == 0 && x->i[0] == a->dyn_size && y->i[0] == b->dyn_size) continue;
            diff++;
            pos = d;
        }
        if (diff == 0) continue;
        if ((x->op != J_RESHAPE && x->op != J_EXPAND) || diff > 1) { why = "an op's sizes depend on it in a way a replay cannot follow"; break; }
        x->i[pos] = -1;
    }
    if (why) return TN__FAIL_INT("%s: a dynamic batch (a symbolic dim 0) is not supported for this model: %s (export it with a fixed batch)", fn, why);
    return 0;
}
static tn_graph *tn__onnx_load(const char *fn, const uint8_t *data, size_t size) {
    tn_graph *g = tn__onnx_load_as(fn, data, size, TN__ONNX_DYN_EXAMPLE);
    if (!g || g->dyn_input < 0) return g;
    tn_graph *h = tn__onnx_load_as(fn, data, size, TN__ONNX_DYN_EXAMPLE2);
    if (!h || tn__onnx_dyn_merge(fn, g, h)) { tn_graph_free(g); g = NULL; }
    tn_graph_free(h);
    return g;
}
TNDEF tn_graph *tn_onnx_load_buffer(const void *data, size_t size) {
    if (!data && size) return (tn_graph *)tn__error("tn_onnx_load_buffer: the data is NULL");
    return tn__onnx_load("tn_onnx_load_buffer", (const uint8_t *)data, size);
}
/* The whole file at path in a buffer the caller frees (*n: its size); NULL with an error. */
static char *tn__onnx_read_file(const char *fn, const char *path, int64_t *n) {
    if (!path) return (char *)tn__error("%s: the path is NULL", fn);
    tn__file f;
    if (tn__file_open(fn, path, &f)) return NULL;
    *n = tn__file_left(&f);
    char *buf = *n < 0 ? (char *)tn__error("%s: cannot read '%s'", fn, path) : tn__file_read_exact(fn, path, &f, *n);
    tn__file_close(&f);
    return buf;
}
TNDEF tn_graph *tn_onnx_load(const char *path) {
    const char *fn = "tn_onnx_load";
    int64_t n = 0;
    char *buf = tn__onnx_read_file(fn, path, &n);
    if (!buf) return NULL;
    tn_graph *g = tn__onnx_load(fn, (const uint8_t *)buf, (size_t)n);
    TN_FREE(buf);
    return g;
}
/* A TensorProto file (ONNX's test data: input_0.pb) as a tensor. */
TNDEF tn_tensor *tn_onnx_load_tensor_buffer(const void *data, size_t size) {
    tn__oxi c;
    memset(&c, 0, sizeof c);
    c.fn = "tn_onnx_load_tensor";
    if (!data && size) return (tn_tensor *)tn__error("%s: the data is NULL", c.fn);
    tn__pbs m = {(const uint8_t *)data, size};
    tn_tensor *t = NULL;
    if (tn__oxi_tensor(&c, m, &t, NULL)) return NULL;
    return tn__own(t);
}
TNDEF tn_tensor *tn_onnx_load_tensor(const char *path) {
    int64_t n = 0;
    char *buf = tn__onnx_read_file("tn_onnx_load_tensor", path, &n);
    if (!buf) return NULL;
    tn_tensor *t = tn_onnx_load_tensor_buffer(buf, (size_t)n);
    TN_FREE(buf);
    return t;
}
