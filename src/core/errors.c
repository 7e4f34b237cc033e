static TN__TLS char tn__errbuf[1024];
static TN__TLS int tn__quiet; /* > 0: record only (a caller re-words the message with its own name) */
static TN__TLS unsigned tn__nerrors, tn__err_mark[64];
static tn_error_handler tn__error_handler;
static void *tn__error_user;

TNDEF const char *tn_library_version(void) { return TENSOR_VERSION_STRING; }
TNDEF int tn_max_dims(void) { return TN_MAX_DIMS; }
TNDEF const char *tn_last_error(void) { return tn__errbuf; }
TNDEF void tn_clear_error(void) { tn__errbuf[0] = 0; }
TNDEF void tn_set_error_handler(tn_error_handler handler, void *user) {
    tn__error_handler = handler;
    tn__error_user = user;
}

/* Record an error: "tn_fn: what went wrong". Always returns NULL so callers can
   `return tn__error(...)`. */
static void *tn__error(const char *fmt, ...) TN__PRINTF_FMT(1, 2);
static void *tn__error(const char *fmt, ...) {
    va_list ap;
    char msg[sizeof tn__errbuf];   /* formatted aside: an argument may be tn_last_error() itself (a message wrapped) */
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(tn__errbuf, msg, sizeof msg);
    tn__nerrors++;
    if (tn__quiet) return NULL;
    /* TN_LOG_ERRORS=1: every error to stderr as it happens; TN_ABORT_ON_ERROR=1: and abort */
    const char *ab = getenv("TN_ABORT_ON_ERROR"), *log = getenv("TN_LOG_ERRORS");
    if ((ab && ab[0] == '1') || (log && log[0] == '1')) fprintf(stderr, "tensor.h error: %s\n", tn__errbuf);
    if (ab && ab[0] == '1') abort();
    if (tn__error_handler) tn__error_handler(tn__errbuf, tn__error_user);
    return NULL;
}
#define TN__FAIL_INT(...) (tn__error(__VA_ARGS__), -1)

/* An array of n items of size bytes (a table, a workspace), its byte count checked
   (tn__mul_ok); NULL and an error under fn's name when it overflows or malloc fails. */
static void *tn__malloc_n(const char *fn, int64_t n, size_t size) {
    int64_t bytes;
    if (n < 0 || size > (size_t)INT64_MAX || !tn__mul_ok(n, (int64_t)size, &bytes) || (uint64_t)bytes > (uint64_t)SIZE_MAX)
        return tn__error("%s: cannot allocate %lld items of %zu bytes (the size overflows)", fn, (long long)n, size);
    void *p = TN_MALLOC(bytes ? (size_t)bytes : 1);
    if (!p) return tn__error("%s: out of memory allocating %lld bytes", fn, (long long)bytes);
    return p;
}

/* A double that is to become an int64 (a size from a scale factor, a step count read
   from a file): C leaves the conversion undefined out of range, so it is checked first.
   0 and the value in *out, or -1 and an error "fn: what v is out of range". */
static int tn__double_to_int64(const char *fn, const char *what, double v, int64_t *out) {
    /* 2^63 is the first double past INT64_MAX; -2^63 is INT64_MIN itself */
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return TN__FAIL_INT("%s: %s %g is out of the range of int64", fn, what, v);
    *out = (int64_t)v;
    return 0;
}
TNDEF int tn_error(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    return TN__FAIL_INT("%s", msg);
}


/* Run a kernel call quietly, then report its failure under fn ("tn_floor_divide: ..."
   rather than the kernel's "floor_divide: ..."), so the handler sees one message. */
static int tn__kernel_result(const char *fn, int rc) {
    tn__quiet--;
    if (rc == 0) return 0;
    const char *colon = strstr(tn__errbuf, ": ");
    char why[1024];
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn__errbuf);
    return TN__FAIL_INT("%s: %s", fn, why);
}
#define TN__KERNEL(fn, call) (tn__quiet++, tn__kernel_result(fn, (call)))

/* A composite public function evaluates its body through TN__AS: an error inside is
   reported once, under the function the user called ("tn_outer: ..." rather than the
   "tn_mul: ..." it was built from). A NULL input stays silent. */
static void tn__as_begin(void) {
    if (tn__quiet < 64) tn__err_mark[tn__quiet] = tn__nerrors;
    tn__quiet++;
}
static tn_tensor *tn__as_end(const char *fn, tn_tensor *r) {
    tn__quiet--;
    unsigned before = tn__quiet < 64 ? tn__err_mark[tn__quiet] : tn__nerrors;
    if (r || tn__nerrors == before) return r;
    const char *colon = strncmp(tn__errbuf, "tn_", 3) == 0 || strncmp(tn__errbuf, "tensor.h", 8) == 0 ? strstr(tn__errbuf, ": ") : NULL;
    char why[1024];
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn__errbuf);
    return (tn_tensor *)tn__error("%s: %s", fn, why);
}
#define TN__AS(fn, expr) (tn__as_begin(), tn__as_end(fn, (expr)))


/* "[2, 3]" in one of a few rotating thread-local buffers, so one message can show
   several shapes. */
static const char *tn__shape_str(const int64_t *shape, int ndim) {
    /* 192 bytes hold any shape: "[" + TN_MAX_DIMS sizes of at most 20 characters + ", " between + "]" */
    static TN__TLS char bufs[4][192];
    static TN__TLS int which;
    char *b = bufs[which++ & 3];
    int n = snprintf(b, 192, "[");
    for (int i = 0; i < ndim && i < TN_MAX_DIMS; i++)
        n += snprintf(b + n, (size_t)(192 - n), i ? ", %lld" : "%lld", (long long)shape[i]);
    snprintf(b + n, (size_t)(192 - n), "]");
    return b;
}
#define TN__SHAPE(t) tn__shape_str((t)->shape, (t)->ndim)

/* A growing string (printing, graph dumps). */
typedef struct tn__sbuf { char *s; size_t n, cap; int failed; } tn__sbuf;
static void tn__sb_put(tn__sbuf *b, const char *str, size_t len) {
    if (b->failed) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + len;
        char *s = (char *)TN_REALLOC(b->s, cap);
        if (!s) { b->failed = 1; return; }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, str, len);
    b->n += len;
    b->s[b->n] = 0;
}
static void tn__sb_puts(tn__sbuf *b, const char *str) { tn__sb_put(b, str, strlen(str)); }
static void tn__sb_pad(tn__sbuf *b, int n) { for (int i = 0; i < n; i++) tn__sb_put(b, " ", 1); }
/* printf onto the end, whatever the length (user data: names, paths), never cut. */
static void tn__sb_printf(tn__sbuf *b, const char *fmt, ...) TN__PRINTF_FMT(2, 3);
static void tn__sb_printf(tn__sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->failed) return;
    if (len < 0) { b->failed = 1; return; }
    tn__sb_put(b, "", 0);   /* the buffer exists */
    if (!b->failed && b->n + (size_t)len + 1 > b->cap) {
        size_t cap = b->n + (size_t)len + 1 + b->cap;
        char *s = (char *)TN_REALLOC(b->s, cap);
        if (!s) { b->failed = 1; return; }
        b->s = s;
        b->cap = cap;
    }
    if (b->failed) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)len + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)len;
}

/* Wrap a possibly negative dim into [0, ndim); 0-d tensors accept -1 and 0 as PyTorch. */
static int tn__wrap_dim(const char *fn, int64_t dim, int ndim) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        tn__error("%s: dim %lld out of range for a %d-d tensor (expected in [%lld, %lld])", fn,
                  (long long)dim, ndim, (long long)-n, (long long)(n - 1));
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}
