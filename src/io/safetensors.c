/* ---- safetensors ----
   8-byte little-endian header size N, N bytes of JSON padded with spaces to a multiple
   of 8, then the data; data_offsets count from the data's first byte. Reading checks
   what the reference (Rust) implementation checks: N <= 100 MB and within the file,
   UTF-8, JSON into {name: {dtype, shape, data_offsets}} plus an optional
   "__metadata__" of strings; sorted by offsets, each tensor starts where the previous
   ended, holds exactly numel * itemsize bytes (no overflow), and the last ends at the
   end of the file. Also refused here: duplicate names or fields, nesting deeper than
   64, more than TN_MAX_DIMS dims, dtypes this library lacks. Nothing outside [data, data+size)
   is read. */
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_MMAP 1
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#endif

#define TN__ST_MAX_HEADER 100000000ULL
/* C128 is this library's own name: the format's Dtype list stops at C64 (other readers refuse C128) */
static const char *const tn__st_dtype_names[TN_NUM_DTYPES] = {"F32", "F64", "I32", "I64", "U8", "BOOL", "F16", "BF16", "I8", "I16", "C64", "C128"};
/* The reference's Dtype order (BOOL U8 I8 I16 F16 BF16 I32 F32 F64 I64 among ours; increasing
   alignment): writers sort by it, descending. */
static const int tn__st_rank[TN_NUM_DTYPES] = {7, 9, 6, 10, 1, 0, 4, 5, 2, 3, 8, 11};   /* C64 between F32 and F64; C128 last */

typedef struct tn__st_entry {
    char *name;
    tn_dtype dtype;
    int ndim;
    int64_t shape[TN_MAX_DIMS];
    int64_t begin, end;                 /* in the data */
} tn__st_entry;

typedef struct tn__st_parse {
    const char *fn;                     /* the public function, for messages */
    const char *src;                    /* the file name, or NULL for a buffer */
    const unsigned char *s;             /* the JSON header */
    size_t n, i;
    tn__st_entry *e;
    int64_t ne, ecap;
    char **meta;                        /* key, value, key, value, ... */
    int64_t nmeta, metacap;
    bool has_meta;
} tn__st_parse;

/* A path as messages show it: whole up to 250 bytes, else its first and last 120 bytes
   (cut at UTF-8 character boundaries) around "...", so that the reason after it still fits
   the error buffer's 1024 bytes. buf: 256 bytes. */
static const char *tn__msg_path(const char *path, char *buf) {
    size_t n = strlen(path), head = 120, tail = n - 120;
    if (n <= 250) return path;
    while (head && ((unsigned char)path[head] & 0xC0) == 0x80) head--;
    while (tail < n && ((unsigned char)path[tail] & 0xC0) == 0x80) tail++;
    snprintf(buf, 256, "%.*s...%s", (int)head, path, path + tail);
    return buf;
}

/* "tn_safetensors_load: 'file': what" */
static int tn__st_fail(tn__st_parse *p, const char *fmt, ...) TN__PRINTF_FMT(2, 3);
static int tn__st_fail(tn__st_parse *p, const char *fmt, ...) {
    char why[900];   /* the message under the function and file names: the error buffer holds 1024 bytes */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char pb[256];   /* tn__msg_path's */
    if (p->src) tn__error("%s: '%s': %s", p->fn, tn__msg_path(p->src, pb), why);
    else tn__error("%s: %s", p->fn, why);
    return -1;
}
/* A JSON syntax error, with its byte position in the file. */
static int tn__st_syntax(tn__st_parse *p, const char *what) {
    if (p->i >= p->n) return tn__st_fail(p, "invalid header JSON: unexpected end of the header (%zu bytes): %s", p->n, what);
    unsigned char c = p->s[p->i];
    if (c >= 0x20 && c < 0x7f) return tn__st_fail(p, "invalid header JSON at byte %zu ('%c'): %s", 8 + p->i, (char)c, what);
    return tn__st_fail(p, "invalid header JSON at byte %zu (0x%02x): %s", 8 + p->i, c, what);
}

static void tn__st_ws(tn__st_parse *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}
static bool tn__st_eat(tn__st_parse *p, char c) {
    tn__st_ws(p);
    if (p->i < p->n && p->s[p->i] == (unsigned char)c) { p->i++; return true; }
    return false;
}

/* Strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF). */
static bool tn__utf8_ok(const unsigned char *s, size_t n, size_t *bad) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) { *bad = i; return false; }
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) { *bad = i; return false; }
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = i;
            return false;
        }
        i += len;
    }
    return true;
}

static int tn__st_hex4(tn__st_parse *p, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        if (p->i >= p->n) return tn__st_syntax(p, "unterminated \\u escape");
        unsigned char c = p->s[p->i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return tn__st_syntax(p, "invalid \\u escape (expected 4 hex digits)");
        v = v << 4 | (uint32_t)d;
        p->i++;
    }
    *out = v;
    return 0;
}

/* A JSON string into a new NUL-terminated UTF-8 buffer (*out, TN_MALLOC'd; NULL to skip). */
static int tn__st_string(tn__st_parse *p, char **out) {
    if (out) *out = NULL;
    tn__st_ws(p);
    if (p->i >= p->n || p->s[p->i] != '"') return tn__st_syntax(p, "expected a string");
    size_t start = ++p->i;
    char *buf = NULL;
    size_t len = 0;
    if (out) { /* the decoded string is never longer than its source */
        size_t j = start;
        while (j < p->n && p->s[j] != '"') j += p->s[j] == '\\' ? 2 : 1;
        buf = (char *)TN_MALLOC((j > p->n ? p->n : j) - start + 1);
        if (!buf) return tn__st_fail(p, "out of memory");
    }
    for (;;) {
        if (p->i >= p->n) { TN_FREE(buf); p->i = start - 1; return tn__st_syntax(p, "unterminated string"); }
        unsigned char c = p->s[p->i];
        if (c == '"') { p->i++; break; }
        if (c < 0x20) { TN_FREE(buf); return tn__st_syntax(p, "control character in a string (must be escaped)"); }
        if (c != '\\') { if (buf) buf[len++] = (char)c; p->i++; continue; }
        if (++p->i >= p->n) { TN_FREE(buf); return tn__st_syntax(p, "unterminated string"); }
        c = p->s[p->i++];
        char e = c == '"' ? '"' : c == '\\' ? '\\' : c == '/' ? '/' : c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : 0;
        if (e) { if (buf) buf[len++] = e; continue; }
        if (c != 'u') { p->i--; TN_FREE(buf); return tn__st_syntax(p, "invalid escape in a string"); }
        uint32_t cp = 0, lo = 0;   /* set by tn__st_hex4; initialised for -O3's flow analysis */
        if (tn__st_hex4(p, &cp)) { TN_FREE(buf); return -1; }
        if (cp >= 0xDC00 && cp <= 0xDFFF) { TN_FREE(buf); return tn__st_syntax(p, "lone trailing surrogate in a \\u escape"); }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p->i + 1 >= p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') { TN_FREE(buf); return tn__st_syntax(p, "lone leading surrogate in a \\u escape"); }
            p->i += 2;
            if (tn__st_hex4(p, &lo)) { TN_FREE(buf); return -1; }
            if (lo < 0xDC00 || lo > 0xDFFF) { TN_FREE(buf); return tn__st_syntax(p, "invalid surrogate pair in a \\u escape"); }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp == 0) { TN_FREE(buf); return tn__st_syntax(p, "\\u0000 in a string is not supported (names are C strings)"); }
        if (!buf) continue; /* 6 or 12 source bytes become at most 4 */
        if (cp < 0x80) buf[len++] = (char)cp;
        else if (cp < 0x800) { buf[len++] = (char)(0xC0 | cp >> 6); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) { buf[len++] = (char)(0xE0 | cp >> 12); buf[len++] = (char)(0x80 | (cp >> 6 & 0x3F)); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
        else { buf[len++] = (char)(0xF0 | cp >> 18); buf[len++] = (char)(0x80 | (cp >> 12 & 0x3F)); buf[len++] = (char)(0x80 | (cp >> 6 & 0x3F)); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
    }
    if (buf) { buf[len] = 0; *out = buf; }
    return 0;
}

/* A JSON number; *integer tells whether it was a plain non-negative integer that fits in
   int64 (then in *v). */
static int tn__st_number(tn__st_parse *p, bool *integer, int64_t *v) {
    tn__st_ws(p);
    size_t i = p->i;
    bool neg = false, frac = false, big = false;
    uint64_t acc = 0;
    if (i < p->n && p->s[i] == '-') { neg = true; i++; }
    if (i >= p->n || p->s[i] < '0' || p->s[i] > '9') { p->i = i; return tn__st_syntax(p, "expected a number"); }
    if (p->s[i] == '0' && i + 1 < p->n && p->s[i + 1] >= '0' && p->s[i + 1] <= '9') { p->i = i; return tn__st_syntax(p, "leading zero in a number"); }
    for (; i < p->n && p->s[i] >= '0' && p->s[i] <= '9'; i++) {
        if (acc > (uint64_t)INT64_MAX / 10 || (acc == (uint64_t)INT64_MAX / 10 && (uint64_t)(p->s[i] - '0') > (uint64_t)INT64_MAX % 10)) big = true;
        acc = acc * 10 + (uint64_t)(p->s[i] - '0');
    }
    if (i < p->n && p->s[i] == '.') {
        frac = true;
        if (++i >= p->n || p->s[i] < '0' || p->s[i] > '9') { p->i = i; return tn__st_syntax(p, "expected digits after '.'"); }
        while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
        frac = true;
        if (++i < p->n && (p->s[i] == '+' || p->s[i] == '-')) i++;
        if (i >= p->n || p->s[i] < '0' || p->s[i] > '9') { p->i = i; return tn__st_syntax(p, "expected digits in an exponent"); }
        while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
    }
    p->i = i;
    *integer = !neg && !frac && !big;
    *v = *integer ? (int64_t)acc : neg ? -1 : INT64_MAX;
    return 0;
}

/* Any JSON value, checked and dropped (fields the format does not define). */
static int tn__st_skip(tn__st_parse *p, int depth) {
    if (depth > 64) return tn__st_syntax(p, "nesting deeper than 64 levels");
    tn__st_ws(p);
    if (p->i >= p->n) return tn__st_syntax(p, "expected a value");
    unsigned char c = p->s[p->i];
    if (c == '"') return tn__st_string(p, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        p->i++;
        if (tn__st_eat(p, close)) return 0;
        do {
            if (c == '{' && (tn__st_string(p, NULL) || (!tn__st_eat(p, ':') && tn__st_syntax(p, "expected ':'")))) return -1;
            if (tn__st_skip(p, depth + 1)) return -1;
        } while (tn__st_eat(p, ','));
        return tn__st_eat(p, close) ? 0 : tn__st_syntax(p, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    const char *lit[3] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lit[k]);
        if (p->n - p->i >= l && !memcmp(p->s + p->i, lit[k], l)) { p->i += l; return 0; }
    }
    bool integer;
    int64_t v;
    return tn__st_number(p, &integer, &v);
}

/* [a, b, ...] of non-negative integers, at most max of them. */
static int tn__st_int_array(tn__st_parse *p, const char *tname, const char *field, int64_t *out, int max, int *count) {
    *count = 0;
    if (!tn__st_eat(p, '[')) return tn__st_syntax(p, "expected '['");
    if (tn__st_eat(p, ']')) return 0;
    do {
        bool integer;
        int64_t v;
        size_t at = p->i;
        if (tn__st_number(p, &integer, &v)) return -1;
        if (!integer) {
            char num[40];   /* the offending number, shown (cut) in the message only */
            size_t l = TN__MIN(p->i - at, sizeof num - 1);
            memcpy(num, p->s + at, l);
            num[l] = 0;
            return tn__st_fail(p, "tensor '%s': %s holds %s, expected integers in [0, 2^63)", tname, field, num);
        }
        if (*count == max) return tn__st_fail(p, "tensor '%s': %s has more than %d entries%s", tname, field, max, max == TN_MAX_DIMS ? " (tensor.h supports at most TN_MAX_DIMS dims)" : "");
        out[(*count)++] = v;
    } while (tn__st_eat(p, ','));
    return tn__st_eat(p, ']') ? 0 : tn__st_syntax(p, "expected ',' or ']'");
}

/* One tensor's {"dtype": ..., "shape": [...], "data_offsets": [b, e]} (name taken). */
static int tn__st_tensor(tn__st_parse *p, char *name) {
    if (p->ne == p->ecap) {
        int64_t cap = p->ecap ? 2 * p->ecap : 16;
        tn__st_entry *e = (tn__st_entry *)TN_REALLOC(p->e, (size_t)cap * sizeof *e);
        if (!e) { TN_FREE(name); return tn__st_fail(p, "out of memory"); }
        p->e = e;
        p->ecap = cap;
    }
    tn__st_entry *t = &p->e[p->ne++];
    memset(t, 0, sizeof *t);
    t->name = name;
    bool seen[3] = {false, false, false};
    if (!tn__st_eat(p, '{')) return tn__st_syntax(p, "expected '{' (a tensor's dtype, shape and data_offsets)");
    if (!tn__st_eat(p, '}')) {
    do {
        char *key;
        if (tn__st_string(p, &key)) return -1;
        int f = !strcmp(key, "dtype") ? 0 : !strcmp(key, "shape") ? 1 : !strcmp(key, "data_offsets") ? 2 : -1;
        TN_FREE(key);
        if (!tn__st_eat(p, ':')) return tn__st_syntax(p, "expected ':'");
        if (f < 0) { if (tn__st_skip(p, 2)) return -1; continue; }
        if (seen[f]) return tn__st_fail(p, "tensor '%s': field '%s' given twice", name, f == 0 ? "dtype" : f == 1 ? "shape" : "data_offsets");
        seen[f] = true;
        if (f == 0) {
            char *d;
            tn__st_ws(p);
            if (p->i >= p->n || p->s[p->i] != '"') return tn__st_fail(p, "tensor '%s': dtype must be a string", name);
            if (tn__st_string(p, &d)) return -1;
            int k = 0;
            while (k < TN_NUM_DTYPES && strcmp(d, tn__st_dtype_names[k])) k++;
            static const char *const known[] = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"};
            bool other = false;
            for (size_t j = 0; j < sizeof known / sizeof *known; j++) other = other || !strcmp(d, known[j]);
            if (k == TN_NUM_DTYPES) {
                int rc = other ? tn__st_fail(p, "tensor '%s' has dtype %s, which tensor.h does not support (supported: F32, F64, I32, I64, I16, I8, U8, BOOL, F16, BF16, C64, C128)", name, d)
                               : tn__st_fail(p, "tensor '%s' has unknown dtype \"%.40s\"", name, d);
                TN_FREE(d);
                return rc;
            }
            TN_FREE(d);
            t->dtype = (tn_dtype)k;
        } else if (f == 1) {
            if (tn__st_int_array(p, name, "shape", t->shape, TN_MAX_DIMS, &t->ndim)) return -1;
        } else {
            int64_t off[2];
            int c;
            if (tn__st_int_array(p, name, "data_offsets", off, 2, &c)) return -1;
            if (c != 2) return tn__st_fail(p, "tensor '%s': data_offsets must be [begin, end], got %d numbers", name, c);
            t->begin = off[0];
            t->end = off[1];
        }
    } while (tn__st_eat(p, ','));
    if (!tn__st_eat(p, '}')) return tn__st_syntax(p, "expected ',' or '}'");
    }
    for (int f = 0; f < 3; f++)
        if (!seen[f]) return tn__st_fail(p, "tensor '%s' has no '%s'", name, f == 0 ? "dtype" : f == 1 ? "shape" : "data_offsets");
    return 0;
}

static int tn__st_metadata(tn__st_parse *p) {
    if (p->has_meta) return tn__st_fail(p, "\"__metadata__\" given twice");
    p->has_meta = true;
    tn__st_ws(p);
    if (p->n - p->i >= 4 && !memcmp(p->s + p->i, "null", 4)) { p->i += 4; return 0; }
    if (!tn__st_eat(p, '{')) return tn__st_fail(p, "\"__metadata__\" must be an object of strings");
    if (tn__st_eat(p, '}')) return 0;
    do {
        char *k, *v;
        if (tn__st_string(p, &k)) return -1;
        if (!tn__st_eat(p, ':')) { TN_FREE(k); return tn__st_syntax(p, "expected ':'"); }
        tn__st_ws(p);
        if (p->i >= p->n || p->s[p->i] != '"') {
            int rc = tn__st_fail(p, "metadata value of '%s' is not a string (safetensors metadata maps strings to strings)", k);
            TN_FREE(k);
            return rc;
        }
        if (tn__st_string(p, &v)) { TN_FREE(k); return -1; }
        if (p->nmeta == p->metacap) {
            int64_t cap = p->metacap ? 2 * p->metacap : 8;
            char **m = (char **)TN_REALLOC(p->meta, (size_t)cap * 2 * sizeof *m);
            if (!m) { TN_FREE(k); TN_FREE(v); return tn__st_fail(p, "out of memory"); }
            p->meta = m;
            p->metacap = cap;
        }
        p->meta[2 * p->nmeta] = k;
        p->meta[2 * p->nmeta++ + 1] = v;
    } while (tn__st_eat(p, ','));
    return tn__st_eat(p, '}') ? 0 : tn__st_syntax(p, "expected ',' or '}'");
}

static int tn__st_cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int tn__st_cmp_offsets(const void *a, const void *b) {
    const tn__st_entry *x = *(const tn__st_entry *const *)a, *y = *(const tn__st_entry *const *)b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1) : x->end != y->end ? (x->end < y->end ? -1 : 1) : 0;
}

/* Duplicate strings in a list (names or metadata keys), found by sorting: n log n, not n^2. */
static const char *tn__st_duplicate(char **names, int64_t n) {
    qsort(names, (size_t)n, sizeof *names, tn__st_cmp_name);
    for (int64_t i = 1; i < n; i++) if (!strcmp(names[i - 1], names[i])) return names[i];
    return NULL;
}

/* Whole-header checks after the JSON: names unique, offsets tile [0, datalen). */
static int tn__st_validate(tn__st_parse *p, uint64_t datalen) {
    int64_t ne = p->ne;
    void *scratch = TN_MALLOC((size_t)(TN__MAX(ne, p->nmeta) + 1) * sizeof(void *));
    if (!scratch) return tn__st_fail(p, "out of memory");
    char **names = (char **)scratch;
    for (int64_t i = 0; i < ne; i++) names[i] = p->e[i].name;
    const char *dup = tn__st_duplicate(names, ne);
    if (dup) { int rc = tn__st_fail(p, "tensor name '%s' appears twice in the header", dup); TN_FREE(scratch); return rc; }
    for (int64_t i = 0; i < p->nmeta; i++) names[i] = p->meta[2 * i];
    dup = tn__st_duplicate(names, p->nmeta);
    if (dup) { int rc = tn__st_fail(p, "metadata key '%s' appears twice", dup); TN_FREE(scratch); return rc; }
    int rc = 0;
    for (int64_t i = 0; i < ne && !rc; i++) {
        tn__st_entry *t = &p->e[i];
        int64_t numel = 1, nbytes = 0;
        bool ok = true;
        for (int d = 0; d < t->ndim; d++) ok = ok && tn__mul_ok(numel, t->shape[d], &numel);
        ok = ok && tn__mul_ok(numel, (int64_t)tn_dtype_size(t->dtype), &nbytes);
        if (t->end < t->begin) rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] are reversed", t->name, (long long)t->begin, (long long)t->end);
        else if ((uint64_t)t->end > datalen)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] go past the end of the data (%llu bytes)", t->name, (long long)t->begin, (long long)t->end, (unsigned long long)datalen);
        else if (!ok) rc = tn__st_fail(p, "tensor '%s': shape %s overflows", t->name, tn__shape_str(t->shape, t->ndim));
        else if (t->end - t->begin != nbytes)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] hold %lld bytes, but shape %s of %s needs %lld", t->name, (long long)t->begin,
                             (long long)t->end, (long long)(t->end - t->begin), tn__shape_str(t->shape, t->ndim), tn__st_dtype_names[t->dtype], (long long)nbytes);
    }
    tn__st_entry **byoff = (tn__st_entry **)scratch;
    for (int64_t i = 0; i < ne && !rc; i++) byoff[i] = &p->e[i];
    if (!rc) qsort(byoff, (size_t)ne, sizeof *byoff, tn__st_cmp_offsets);
    int64_t at = 0;
    for (int64_t i = 0; i < ne && !rc; i++) {
        tn__st_entry *t = byoff[i];
        if (t->begin < at)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] overlap tensor '%s' (which ends at %lld)", t->name, (long long)t->begin, (long long)t->end, byoff[i - 1]->name, (long long)at);
        else if (t->begin > at)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] leave a hole: bytes [%lld, %lld) belong to no tensor", t->name, (long long)t->begin, (long long)t->end, (long long)at, (long long)t->begin);
        at = t->end;
    }
    if (!rc && (uint64_t)at != datalen)
        rc = tn__st_fail(p, "the tensors cover %lld bytes of data, but the file has %llu after the header (incomplete or extra data)", (long long)at, (unsigned long long)datalen);
    TN_FREE(scratch);
    return rc;
}

/* A file mapping (or a malloc'd copy of the file) shared by the tensors that alias it. */
typedef struct tn__st_map { void *addr; size_t len; int64_t refs; bool mapped; } tn__st_map;
static void tn__st_map_unref(tn__st_map *m) {
    if (!m || TN__ATOMIC_ADD(&m->refs, -1) != 0) return;
#ifdef TN__HAVE_MMAP
    if (m->mapped) munmap(m->addr, m->len);
    else
#endif
        TN_FREE(m->addr);
    TN_FREE(m);
}
static void tn__st_map_deleter(void *data, void *ctx) { (void)data; tn__st_map_unref((tn__st_map *)ctx); }

/* Parse and check bytes [0, size); then build the dict. With map, a tensor whose data is
   aligned to its element size aliases the bytes (taking a reference on map); otherwise
   tensors are copies. */
static tn_dict *tn__st_parse_bytes(const char *fn, const char *src, const unsigned char *b, size_t size, tn__st_map *map) {
    tn__st_parse p;
    memset(&p, 0, sizeof p);
    p.fn = fn;
    p.src = src;
    if (size < 8) { tn__st_fail(&p, "%zu bytes is too small for a safetensors file (the header size alone takes 8)", size); return NULL; }
    uint64_t hn = 0;
    for (int k = 7; k >= 0; k--) hn = hn << 8 | b[k];
    if (hn > TN__ST_MAX_HEADER) { tn__st_fail(&p, "header size %llu is larger than the limit of %llu bytes", (unsigned long long)hn, TN__ST_MAX_HEADER); return NULL; }
    if (hn > size - 8) { tn__st_fail(&p, "header size %llu goes past the end of the file (%zu bytes)", (unsigned long long)hn, size); return NULL; }
    p.s = b + 8;
    p.n = (size_t)hn;
    size_t bad;
    if (!tn__utf8_ok(p.s, p.n, &bad)) { tn__st_fail(&p, "the header is not valid UTF-8 (at byte %zu)", 8 + bad); return NULL; }
    tn_dict *d = NULL;
    int rc = 0;
    tn__st_ws(&p);
    if (p.i >= p.n || p.s[p.i] != '{') rc = tn__st_fail(&p, "the header is not a JSON object (it must start with '{')");
    else {
        p.i++;
        if (!tn__st_eat(&p, '}')) {
            do {
                char *key;
                if ((rc = tn__st_string(&p, &key)) != 0) break;
                if (!tn__st_eat(&p, ':')) { TN_FREE(key); rc = tn__st_syntax(&p, "expected ':'"); break; }
                if (!strcmp(key, "__metadata__")) { TN_FREE(key); rc = tn__st_metadata(&p); }
                else rc = tn__st_tensor(&p, key);
            } while (!rc && tn__st_eat(&p, ','));
            if (!rc && !tn__st_eat(&p, '}')) rc = tn__st_syntax(&p, "expected ',' or '}'");
        }
        tn__st_ws(&p);
        if (!rc && p.i != p.n) rc = tn__st_syntax(&p, "unexpected bytes after the JSON object (only spaces may pad the header)");
    }
    if (!rc) rc = tn__st_validate(&p, size - 8 - hn);
    if (!rc && !(d = tn_dict_new())) rc = -1;
    /* the tensors, in header order; names and metadata move into the dict as they are */
    const unsigned char *data = b + 8 + hn;
    tn_scope_begin();
    for (int64_t i = 0; i < p.ne && !rc; i++) {
        tn__st_entry *t = &p.e[i];
        size_t nb = (size_t)(t->end - t->begin), es = tn_dtype_size(t->dtype);
        const unsigned char *at = data + t->begin;
        tn_tensor *x;
        if (map && nb && (uintptr_t)at % es == 0) {
            int64_t refs = TN__ATOMIC_ADD(&map->refs, 1);
            x = tn_from_blob((void *)(uintptr_t)at, t->shape, t->ndim, NULL, t->dtype, tn__st_map_deleter, map);
            /* a failed tn_from_blob may or may not have run the deleter: settle the count */
            if (!x && TN__ATOMIC_LOAD(&map->refs) == refs) tn__st_map_unref(map);
        } else {
            x = tn_empty(t->shape, t->ndim, t->dtype);
            if (x && nb) memcpy(tn_data_ptr(x), at, nb);
        }
        if (!x) rc = tn__st_fail(&p, "out of memory for tensor '%s'", t->name);
        else if (p.ne > INT_MAX - 1) rc = tn__st_fail(&p, "%lld tensors are more than a tn_dict holds", (long long)p.ne);
        else if (tn__dict_append(d, t->name, x)) rc = -1;
        else t->name = NULL;  /* the dict's now */
    }
    for (int64_t i = 0; i < p.nmeta && !rc; i++) {
        if (p.nmeta > INT_MAX / 2) rc = tn__st_fail(&p, "%lld metadata entries are more than a tn_dict holds", (long long)p.nmeta);
        else if (tn__dict_append_meta(d, p.meta[2 * i], p.meta[2 * i + 1])) rc = -1;
        else p.meta[2 * i] = p.meta[2 * i + 1] = NULL;
    }
    tn_scope_end();
    for (int64_t i = 0; i < p.ne; i++) TN_FREE(p.e[i].name);
    for (int64_t i = 0; i < 2 * p.nmeta; i++) TN_FREE(p.meta[i]);
    TN_FREE(p.e);
    TN_FREE(p.meta);
    if (rc) { tn_dict_free(d); return NULL; }
    return d;
}

TNDEF tn_dict *tn_safetensors_load_buffer(const void *data, size_t size) {
    if (!data && size) return (tn_dict *)tn__error("tn_safetensors_load_buffer: data is NULL");
    return tn__st_parse_bytes("tn_safetensors_load_buffer", NULL, (const unsigned char *)(data ? data : ""), data ? size : 0, NULL);
}

TNDEF tn_dict *tn_safetensors_load(const char *path) {
    if (!path) return (tn_dict *)tn__error("tn_safetensors_load: path is NULL");
    char pb[256];   /* tn__msg_path's */
    tn__st_map *m = (tn__st_map *)TN_MALLOC(sizeof *m);
    if (!m) return (tn_dict *)tn__error("tn_safetensors_load: out of memory");
    memset(m, 0, sizeof *m);
    m->refs = 1;  /* ours, while parsing */
#ifdef TN__HAVE_MMAP
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        TN_FREE(m);
        return (tn_dict *)tn__error("tn_safetensors_load: cannot open '%s': %s", tn__msg_path(path, pb), strerror(err));
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        TN_FREE(m);
        return (tn_dict *)tn__error("tn_safetensors_load: '%s' is not a regular file of addressable size", tn__msg_path(path, pb));
    }
    m->len = (size_t)st.st_size;
    if (m->len) {
        /* private and copy-on-write: writes to a loaded tensor stay in this process */
        m->addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (m->addr == MAP_FAILED) {
            int err = errno;
            close(fd);
            TN_FREE(m);
            return (tn_dict *)tn__error("tn_safetensors_load: cannot map '%s' (%zu bytes): %s", tn__msg_path(path, pb), (size_t)st.st_size, strerror(err));
        }
        m->mapped = true;
    }
    close(fd);
#else
    FILE *f = fopen(path, "rb");
    if (!f) {
        TN_FREE(m);
        return (tn_dict *)tn__error("tn_safetensors_load: cannot open '%s': %s", tn__msg_path(path, pb), strerror(errno));
    }
    tn__file r;
    memset(&r, 0, sizeof r);
    r.f = f;
    int64_t size = tn__file_left(&r);
    if (size >= 0) m->addr = tn__file_read_exact("tn_safetensors_load", path, &r, size);
    fclose(f);
    if (!m->addr) {
        TN_FREE(m);
        return size >= 0 ? NULL : (tn_dict *)tn__error("tn_safetensors_load: cannot read '%s'", tn__msg_path(path, pb));
    }
    m->len = (size_t)size;
#endif
    tn_dict *d = tn__st_parse_bytes("tn_safetensors_load", path, (const unsigned char *)(m->addr ? m->addr : ""), m->len, m);
    tn__st_map_unref(m);
    return d;
}
