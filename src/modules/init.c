/* ---- nn.init ---- */
/* Copy src into t without autograd (the init functions and load_state_dict write so). */
static int tn__init_fill(tn_tensor *t, tn_tensor *src) {
    tn_no_grad_begin();
    int rc = src ? tn_copy_(t, src) : -1;
    tn_no_grad_end();
    return rc;
}
static int tn__fans(const char *fn, tn_tensor *t, double *fan_in, double *fan_out) {
    if (t->ndim < 2) return TN__FAIL_INT("%s: fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got %s)", fn, TN__SHAPE(t));
    double rf = 1;
    for (int d = 2; d < t->ndim; d++) rf *= (double)t->shape[d];
    *fan_in = (double)t->shape[1] * rf;
    *fan_out = (double)t->shape[0] * rf;
    return 0;
}
TNDEF double tn_init_calculate_gain_opts(const char *nl, tn_init_gain_fn_opts o) {
    const double param = o.param;
    if (!nl) nl = "leaky_relu";
    if (!strcmp(nl, "linear") || !strcmp(nl, "sigmoid") || !strncmp(nl, "conv", 4)) return 1;
    if (!strcmp(nl, "tanh")) return 5.0 / 3;
    if (!strcmp(nl, "relu")) return sqrt(2.0);
    if (!strcmp(nl, "leaky_relu")) { double s = param != param ? 0.01 : param; return sqrt(2.0 / (1 + s * s)); }
    if (!strcmp(nl, "selu")) return 3.0 / 4;
    tn__error("tn_init_calculate_gain: unsupported nonlinearity %s", nl);
    return NAN;
}
TNDEF double tn_init_calculate_gain_str(const char *nonlinearity, const char *options) {
    TN__KW_STR_NAN(tn_init_gain_fn_opts, init_gain, "tn_init_calculate_gain", options, tn_init_calculate_gain_opts(nonlinearity, o));
}
#define TN__INIT_BEGIN(fn) if (!t) return -1; if (!tn_dtype_is_floating(t->dtype)) return TN__FAIL_INT("%s: expected a floating tensor, got %s", fn, tn_dtype_name(t->dtype)); tn_scope_begin()
#define TN__INIT_END(src) do { int rc_ = tn__init_fill(t, src); tn_scope_end(); return rc_; } while (0)
/* Tensor.uniform_ / normal_ under no_grad, as PyTorch's init: a non-contiguous t is drawn in
   its memory order */
static int tn__init_random(const char *fn, tn_tensor *t, bool normal, double a, double b, tn_generator *gen) {
    if (!t) return -1;
    if (!tn_dtype_is_floating(t->dtype)) return TN__FAIL_INT("%s: expected a floating tensor, got %s", fn, tn_dtype_name(t->dtype));
    tn_no_grad_begin();
    tn_tensor *r = TN__AS(fn, normal ? tn_normal_(t, .mean = a, .std = b, .generator = gen) : tn_uniform_(t, .from = a, .to = b, .generator = gen));
    tn_no_grad_end();
    return r ? 0 : -1;
}
TNDEF int tn_init_uniform__opts(tn_tensor *t, tn_init_uniform_fn_opts o) { return tn__init_random("tn_init_uniform_", t, false, o.a, o.b, o.generator); }
TNDEF int tn_init_uniform__str(tn_tensor *t, const char *options) { TN__KW_STR_INT(tn_init_uniform_fn_opts, init_uniform, "tn_init_uniform_", options, tn_init_uniform__opts(t, o)); }
TNDEF int tn_init_normal__opts(tn_tensor *t, tn_init_normal_fn_opts o) { return tn__init_random("tn_init_normal_", t, true, o.mean, o.std, o.generator); }
TNDEF int tn_init_normal__str(tn_tensor *t, const char *options) { TN__KW_STR_INT(tn_init_normal_fn_opts, init_normal, "tn_init_normal_", options, tn_init_normal__opts(t, o)); }
TNDEF int tn_init_constant_(tn_tensor *t, double value) {
    TN__INIT_BEGIN("tn_init_constant_");
    TN__INIT_END(tn_full(t->shape, t->ndim, value, t->dtype));
}
TNDEF int tn_init_zeros_(tn_tensor *t) { return tn_init_constant_(t, 0); }
TNDEF int tn_init_ones_(tn_tensor *t) { return tn_init_constant_(t, 1); }
TNDEF int tn_init_xavier_uniform__opts(tn_tensor *t, tn_init_xavier_fn_opts o) {
    double fi, fo;
    if (t && tn__fans("tn_init_xavier_uniform_", t, &fi, &fo)) return -1;
    double a = t ? sqrt(3.0) * o.gain * sqrt(2.0 / (fi + fo)) : 0;
    return tn_init_uniform_(t, .a = -a, .b = a, .generator = o.generator);
}
TNDEF int tn_init_xavier_uniform__str(tn_tensor *t, const char *options) { TN__KW_STR_INT(tn_init_xavier_fn_opts, init_xavier, "tn_init_xavier_uniform_", options, tn_init_xavier_uniform__opts(t, o)); }
TNDEF int tn_init_xavier_normal__opts(tn_tensor *t, tn_init_xavier_fn_opts o) {
    double fi, fo;
    if (t && tn__fans("tn_init_xavier_normal_", t, &fi, &fo)) return -1;
    return tn_init_normal_(t, .mean = 0, .std = t ? o.gain * sqrt(2.0 / (fi + fo)) : 0, .generator = o.generator);
}
TNDEF int tn_init_xavier_normal__str(tn_tensor *t, const char *options) { TN__KW_STR_INT(tn_init_xavier_fn_opts, init_xavier, "tn_init_xavier_normal_", options, tn_init_xavier_normal__opts(t, o)); }
static double tn__kaiming_std(const char *fn, tn_tensor *t, double a, const char *mode, const char *nl) {
    double fi, fo;
    if (tn__fans(fn, t, &fi, &fo)) return NAN;
    bool out = mode && !strcmp(mode, "fan_out");
    if (mode && !out && strcmp(mode, "fan_in")) { tn__error("%s: mode %s not supported, please use one of fan_in, fan_out", fn, mode); return NAN; }
    double gain = tn_init_calculate_gain(nl ? nl : "leaky_relu", .param = a);
    double fan = out ? fo : fi;
    if (fan == 0) { tn__error("%s: initializing zero-element tensors is a no-op", fn); return NAN; }
    return gain / sqrt(fan);
}
TNDEF int tn_init_kaiming_uniform__opts(tn_tensor *t, tn_init_kaiming_fn_opts o) {
    if (!t) return -1;
    double std = tn__kaiming_std("tn_init_kaiming_uniform_", t, o.a, o.mode, o.nonlinearity);
    return std != std ? -1 : tn_init_uniform_(t, .a = -sqrt(3.0) * std, .b = sqrt(3.0) * std, .generator = o.generator);
}
TNDEF int tn_init_kaiming_normal__opts(tn_tensor *t, tn_init_kaiming_fn_opts o) {
    if (!t) return -1;
    double std = tn__kaiming_std("tn_init_kaiming_normal_", t, o.a, o.mode, o.nonlinearity);
    return std != std ? -1 : tn_init_normal_(t, .mean = 0, .std = std, .generator = o.generator);
}
/* mode and nonlinearity from the text are the parser's copies, freed after the call */
static int tn__init_kaiming_str(const char *fn, tn_tensor *t, const char *options, bool normal) {
    tn_init_kaiming_fn_opts o = TN_DEFAULTS(tn_init_kaiming_fn_opts);
    uint64_t seen;
    if (tn__kw_parse(fn, options, tn__kw_init_kaiming, TN__KW_N(tn__kw_init_kaiming), &o, &seen)) return -1;
    int rc = normal ? tn_init_kaiming_normal__opts(t, o) : tn_init_kaiming_uniform__opts(t, o);
    tn__kw_release(tn__kw_init_kaiming, TN__KW_N(tn__kw_init_kaiming), &o, seen);
    return rc;
}
TNDEF int tn_init_kaiming_uniform__str(tn_tensor *t, const char *options) { return tn__init_kaiming_str("tn_init_kaiming_uniform_", t, options, false); }
TNDEF int tn_init_kaiming_normal__str(tn_tensor *t, const char *options) { return tn__init_kaiming_str("tn_init_kaiming_normal_", t, options, true); }
/* Linear's and Conv's weight init, kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
   its bound computed as PyTorch computes it (the same float bound, so the same numbers);
   a no-op on an empty weight (PyTorch warns). */
static int tn__init_kaiming_a5(tn_tensor *w) {
    return tn_numel(w) == 0 ? 0 : tn_init_kaiming_uniform_(w, .a = sqrt(5.0));
}
/* Q of the QR decomposition of a normal [rows, cols] draw (modified Gram-Schmidt on the
   shorter side, signs fixed by R's diagonal as PyTorch), times gain. */
TNDEF int tn_init_orthogonal__opts(tn_tensor *t, tn_init_xavier_fn_opts o) {
    const double gain = o.gain;
    const char *fn = "tn_init_orthogonal_";
    if (!t) return -1;
    if (t->ndim < 2) return TN__FAIL_INT("%s: only tensors with 2 or more dimensions are supported (got %s)", fn, TN__SHAPE(t));
    int64_t rows = t->shape[0], cols = tn_numel(t) / (rows ? rows : 1);
    if (rows == 0 || cols == 0) return 0;
    TN__INIT_BEGIN(fn);
    bool tr = rows < cols;
    int64_t m = tr ? cols : rows, n = tr ? rows : cols;        /* orthonormalise the n columns of [m, n] */
    /* PyTorch's draw: normal_ of a [rows, cols] tensor of t's dtype, transposed when rows < cols */
    tn_tensor *d = tn_to_dtype(tn_normal(0, 1, TN_SHAPE(rows, cols), t->dtype, o.generator), TN_F64);
    tn_tensor *a = d ? tn_contiguous(tr ? tn_t(d) : d) : NULL;
    double *q = a ? (double *)tn_data_ptr(a) : NULL;
    for (int64_t j = 0; q && j < n; j++) {
        for (int64_t k = 0; k < j; k++) {
            double dot = 0;
            for (int64_t i = 0; i < m; i++) dot += q[i * n + k] * q[i * n + j];
            for (int64_t i = 0; i < m; i++) q[i * n + j] -= dot * q[i * n + k];
        }
        double nrm = 0;
        for (int64_t i = 0; i < m; i++) nrm += q[i * n + j] * q[i * n + j];
        nrm = sqrt(nrm);
        for (int64_t i = 0; i < m; i++) q[i * n + j] = nrm > 0 ? q[i * n + j] / nrm : 0;  /* R's diagonal is the norm, > 0 */
    }
    for (int64_t i = 0; q && i < m * n; i++) q[i] *= gain;
    tn_tensor *r = a ? tn_reshape(tr ? tn_t(a) : a, t->shape, t->ndim) : NULL;
    TN__INIT_END(r);
}
TNDEF int tn_init_orthogonal__str(tn_tensor *t, const char *options) { TN__KW_STR_INT(tn_init_xavier_fn_opts, init_xavier, "tn_init_orthogonal_", options, tn_init_orthogonal__opts(t, o)); }
/* Inverse error function: Giles' single-precision start polished by two Newton steps. */
static double tn__erfinv(double y) {
    if (y <= -1) return -HUGE_VAL;
    if (y >= 1) return HUGE_VAL;
    double w = -log((1 - y) * (1 + y)), x;
    if (w < 5) {
        w -= 2.5;
        x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w;
        x = -0.00125372503 + x * w; x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3;
        x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w; x = 0.00573950773 + x * w;
        x = -0.0076224613 + x * w; x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w;
    }
    x *= y;
    for (int i = 0; i < 2; i++) x -= (erf(x) - y) / (1.12837916709551257390 * exp(-x * x));
    return x;
}
/* PyTorch's method: uniform in [cdf(a), cdf(b)], inverse CDF, clamp. */
TNDEF int tn_init_trunc_normal__opts(tn_tensor *t, tn_init_trunc_normal_fn_opts o) {
    const double mean = o.mean, std = o.std, a = o.a, b = o.b;
    const char *fn = "tn_init_trunc_normal_";
    if (!t) return -1;
    if (!(a < b)) return TN__FAIL_INT("%s: need a < b (got a=%g, b=%g)", fn, a, b);
    TN__INIT_BEGIN(fn);
    double l = 0.5 * (1 + erf((a - mean) / std / sqrt(2.0))), u = 0.5 * (1 + erf((b - mean) / std / sqrt(2.0)));
    /* PyTorch's steps in t's dtype: uniform_ (in t's memory order, as Tensor.uniform_),
       erfinv_, mul_(std sqrt(2)), add_(mean), clamp_ */
    const bool f32 = t->dtype == TN_F32;
    tn_no_grad_begin();
    tn_tensor *drawn = tn_uniform_(t, .from = 2 * l - 1, .to = 2 * u - 1, .generator = o.generator);
    tn_no_grad_end();
    tn_tensor *r = drawn ? tn_contiguous(tn_to_dtype(t, TN_F64)) : NULL;
    double *p = r ? (double *)tn_data_ptr(r) : NULL;
    const double sc = std * sqrt(2.0);
    for (int64_t i = 0; p && i < tn_numel(r); i++) {
        double v = f32 ? (double)(float)tn__erfinv(p[i]) : tn__erfinv(p[i]);
        v = f32 ? (double)((float)v * (float)sc) : v * sc;
        v = f32 ? (double)((float)v + (float)mean) : v + mean;
        p[i] = v < a ? a : v > b ? b : v;
    }
    TN__INIT_END(r);
}
/* PyTorch's sparse_: normal_(0, std), then in each column the rows of the first
   ceil(sparsity rows) entries of a randperm(rows) (a Python slice: a negative count drops
   from the end) set to 0, column by column from the default generator. */
TNDEF int tn_init_trunc_normal__str(tn_tensor *t, const char *options) {
    TN__KW_STR_INT(tn_init_trunc_normal_fn_opts, init_trunc_normal, "tn_init_trunc_normal_", options, tn_init_trunc_normal__opts(t, o));
}
TNDEF int tn_init_sparse__opts(tn_tensor *t, double sparsity, tn_init_sparse_fn_opts o) {
    const double std = o.std;
    const char *fn = "tn_init_sparse_";
    if (!t) return -1;
    if (t->ndim != 2) return TN__FAIL_INT("%s: Only tensors with 2 dimensions are supported (got shape %s)", fn, TN__SHAPE(t));
    const int64_t rows = t->shape[0], cols = t->shape[1];
    int64_t nz;
    if (tn__double_to_int64(fn, "ceil(sparsity * rows)", ceil(sparsity * (double)rows), &nz)) return -1;
    nz = nz < 0 ? (rows + nz > 0 ? rows + nz : 0) : nz < rows ? nz : rows;
    TN__INIT_BEGIN(fn);
    tn_no_grad_begin();
    int rc = TN__AS(fn, tn_normal_(t, .std = std, .generator = o.generator)) ? 0 : -1;
    for (int64_t c = 0; c < cols && rc == 0; c++) {
        tn_tensor *perm = tn_randperm(rows, TN_I64, o.generator);
        tn_tensor *zero = perm ? tn_narrow(perm, 0, 0, nz) : NULL;
        rc = zero && tn_index_fill_(tn_select(t, 1, c), 0, zero, 0) ? 0 : -1;
    }
    tn_no_grad_end();
    tn_scope_end();
    return rc;
}
TNDEF int tn_init_sparse__str(tn_tensor *t, double sparsity, const char *options) {
    TN__KW_STR_INT(tn_init_sparse_fn_opts, init_sparse, "tn_init_sparse_", options, tn_init_sparse__opts(t, sparsity, o));
}
