/* ---- PyTorch .pt files ----
   torch.save's format since PyTorch 1.6: a zip archive "<name>/data.pkl" (a pickle of the
   object, protocol 2), "<name>/data/<key>" (each storage's raw little-endian bytes),
   "<name>/version", "<name>/byteorder". Tensors in the pickle are
   torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)
   with storage a persistent id ('storage', torch.FloatStorage, key, location, numel).

   Reading: the zip's directory (zip64 too) is checked against the file's size before any
   entry is read; entries are stored (deflated ones through zlib with TENSOR_ZLIB) and their
   CRC-32s checked. The pickle runs on a small machine that knows the opcodes PyTorch emits
   and a fixed list of globals (collections.OrderedDict, the torch._utils rebuilders, the
   storage types): every other global is refused by name before anything could call it, so
   loading weights never runs code. Every size from the file is checked (tn__mul_ok,
   tn__span_ok) and bounded by the file's own size; any error frees everything. */

static uint32_t tn__le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t tn__le32(const unsigned char *p) { return tn__le16(p) | tn__le16(p + 2) << 16; }
static uint64_t tn__le64(const unsigned char *p) { return (uint64_t)tn__le32(p) | (uint64_t)tn__le32(p + 4) << 32; }

/* zip's CRC-32 (zlib's when linked, else a table built per call: 256 steps, nothing shared) */
static uint32_t tn__crc32(uint32_t crc, const unsigned char *p, size_t n) {
#ifdef TENSOR_ZLIB
    while (n) {
        uInt k = (uInt)TN__MIN(n, (size_t)1 << 30);
        crc = (uint32_t)crc32((uLong)crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
#else
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
#endif
}

typedef struct tn__zent {
    const unsigned char *name;
    size_t nlen;
    uint64_t lho, csize, usize;
    uint32_t crc;
    int method;
    void *loaded;                       /* the pickle's storage made from it */
} tn__zent;

typedef struct tn__pt {
    const char *fn, *path;
    const unsigned char *b;             /* the whole file */
    size_t size;
    tn__zent *e;                        /* sorted by name */
    int64_t ne;
    char prefix[256];                   /* "<name>/" */
} tn__pt;

/* "tn_load_pt: 'file': what" */
static int tn__pt_fail(const tn__pt *z, const char *fmt, ...) TN__PRINTF_FMT(2, 3);
static int tn__pt_fail(const tn__pt *z, const char *fmt, ...) {
    char why[900];   /* the error buffer holds 1024 bytes */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char pb[256];   /* tn__msg_path's */
    tn__error("%s: '%s': %s", z->fn, tn__msg_path(z->path, pb), why);
    return -1;
}

/* A name from the file as messages show it: at most 100 bytes, unprintable bytes as '?'. */
static const char *tn__pt_show(const unsigned char *s, size_t n, char *buf /* 112 */) {
    size_t k = 0;
    for (; k < n && k < 100; k++) buf[k] = s[k] >= 0x20 && s[k] < 0x7f ? (char)s[k] : '?';
    if (n > 100) { memcpy(buf + k, "...", 3); k += 3; }
    buf[k] = 0;
    return buf;
}

static int tn__zent_cmp(const void *a, const void *b) {
    const tn__zent *x = (const tn__zent *)a, *y = (const tn__zent *)b;
    int c = memcmp(x->name, y->name, TN__MIN(x->nlen, y->nlen));
    return c ? c : x->nlen < y->nlen ? -1 : x->nlen > y->nlen;
}
static tn__zent *tn__zip_find(const tn__pt *z, const char *name) {
    tn__zent key;
    memset(&key, 0, sizeof key);
    key.name = (const unsigned char *)name;
    key.nlen = strlen(name);
    return (tn__zent *)bsearch(&key, z->e, (size_t)z->ne, sizeof *z->e, tn__zent_cmp);
}

/* What a file that is not a PyTorch zip archive is, for the message. */
static int tn__pt_not_zip(const tn__pt *z) {
    const unsigned char *b = z->b;
    size_t n = z->size;
    if (n >= 2 && b[0] == 0x80 && b[1] <= 5)
        return tn__pt_fail(z, "not a PyTorch zip file: this is a bare pickle (PyTorch's legacy format from before 1.6, or "
                              "torch.save(..., _use_new_zipfile_serialization=False)), which is not supported: re-save it with torch.save in PyTorch >= 1.6");
    if (n >= 9 && tn__le64(b) <= n - 8 && b[8] == '{')
        return tn__pt_fail(z, "not a PyTorch zip file: this is a safetensors file (read it with tn_safetensors_load)");
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) return tn__pt_fail(z, "not a PyTorch zip file: this is a gzip file");
    if (n >= 6 && !memcmp(b, "\x93NUMPY", 6)) return tn__pt_fail(z, "not a PyTorch zip file: this is a NumPy .npy file");
    if (n >= 4 && !memcmp(b, "PK\x03\x04", 4)) return tn__pt_fail(z, "not a PyTorch zip file: a damaged zip archive (no end of central directory record)");
    if (n < 4) return tn__pt_fail(z, "not a PyTorch zip file (%zu bytes)", n);
    return tn__pt_fail(z, "not a PyTorch zip file (%zu bytes, starting %02x %02x %02x %02x)", n, b[0], b[1], b[2], b[3]);
}

/* The central directory: every entry's name, sizes and offsets, checked to lie in the file. */
static int tn__zip_open(tn__pt *z) {
    const unsigned char *b = z->b;
    size_t n = z->size;
    if (n < 22 || memcmp(b, "PK\x03\x04", 4)) return tn__pt_not_zip(z);
    int64_t eocd = -1;
    for (size_t i = n - 22, stop = n > 65557 ? n - 65557 : 0;; i--) {
        if (tn__le32(b + i) == 0x06054b50 && i + 22 + tn__le16(b + i + 20) == n) { eocd = (int64_t)i; break; }
        if (i == stop) break;
    }
    if (eocd < 0) return tn__pt_not_zip(z);
    const unsigned char *e = b + eocd;
    if (tn__le16(e + 4) || tn__le16(e + 6)) return tn__pt_fail(z, "multi-disk zip archives are not supported");
    uint64_t count = tn__le16(e + 10), cdsize = tn__le32(e + 12), cdoff = tn__le32(e + 16), limit = (uint64_t)eocd;
    if (eocd >= 20 && tn__le32(e - 20) == 0x07064b50) {   /* zip64: PyTorch always writes one */
        uint64_t z64 = tn__le64(e - 12);
        if (z64 > (uint64_t)eocd - 20 || (uint64_t)eocd - 20 - z64 < 56 || tn__le32(b + z64) != 0x06064b50)
            return tn__pt_fail(z, "damaged zip archive: the zip64 end of central directory record is missing or out of place");
        count = tn__le64(b + z64 + 32);
        cdsize = tn__le64(b + z64 + 40);
        cdoff = tn__le64(b + z64 + 48);
        limit = z64;
    }
    if (cdoff > limit || cdsize > limit - cdoff)
        return tn__pt_fail(z, "damaged zip archive: the central directory (%llu bytes at %llu) goes past its end (%llu)", (unsigned long long)cdsize, (unsigned long long)cdoff, (unsigned long long)limit);
    if (count > cdsize / 46) return tn__pt_fail(z, "damaged zip archive: %llu entries cannot fit in a central directory of %llu bytes", (unsigned long long)count, (unsigned long long)cdsize);
    if (!count) return tn__pt_fail(z, "not a PyTorch zip file: the zip archive is empty");
    z->e = (tn__zent *)tn__malloc_n(z->fn, (int64_t)count, sizeof *z->e);
    if (!z->e) return -1;
    memset(z->e, 0, (size_t)count * sizeof *z->e);
    const unsigned char *p = b + cdoff, *end = b + cdoff + cdsize;
    char nb[112];   /* tn__pt_show's */
    for (uint64_t k = 0; k < count; k++) {
        if (end - p < 46 || tn__le32(p) != 0x02014b50) return tn__pt_fail(z, "damaged zip archive: central directory entry %llu is missing", (unsigned long long)k);
        tn__zent *t = &z->e[k];
        size_t nlen = tn__le16(p + 28), xlen = tn__le16(p + 30), clen = tn__le16(p + 32);
        if ((size_t)(end - p) - 46 < nlen + xlen + clen) return tn__pt_fail(z, "damaged zip archive: central directory entry %llu runs past the directory", (unsigned long long)k);
        t->name = p + 46;
        t->nlen = nlen;
        t->method = (int)tn__le16(p + 10);
        t->crc = tn__le32(p + 16);
        t->csize = tn__le32(p + 20);
        t->usize = tn__le32(p + 24);
        t->lho = tn__le32(p + 42);
        if (tn__le16(p + 8) & 1) return tn__pt_fail(z, "zip entry '%s' is encrypted", tn__pt_show(t->name, nlen, nb));
        if (memchr(t->name, 0, nlen)) return tn__pt_fail(z, "damaged zip archive: an entry's name holds a NUL byte");
        for (const unsigned char *x = p + 46 + nlen, *xe = x + xlen; xe - x >= 4;) {   /* the zip64 extra field */
            size_t id = tn__le16(x), len = tn__le16(x + 2);
            if ((size_t)(xe - x) - 4 < len) return tn__pt_fail(z, "damaged zip archive: the extra field of '%s' runs past its end", tn__pt_show(t->name, nlen, nb));
            if (id == 1) {
                const unsigned char *f = x + 4;
                uint64_t *fields[3] = {&t->usize, &t->csize, &t->lho};
                for (int j = 0; j < 3; j++) {
                    if (*fields[j] != 0xFFFFFFFFu) continue;
                    if (f + 8 > x + 4 + len) return tn__pt_fail(z, "damaged zip archive: the zip64 field of '%s' is too short", tn__pt_show(t->name, nlen, nb));
                    *fields[j] = tn__le64(f);
                    f += 8;
                }
            }
            x += 4 + len;
        }
        p += 46 + nlen + xlen + clen;
    }
    z->ne = (int64_t)count;
    /* the archive's folder: everything before the first entry's '/' (as PyTorch reads it) */
    const unsigned char *slash = (const unsigned char *)memchr(z->e[0].name, '/', z->e[0].nlen);
    size_t pl = slash ? (size_t)(slash - z->e[0].name) + 1 : 0;
    if (!pl || pl >= sizeof z->prefix) return tn__pt_fail(z, "not a PyTorch zip file: its first entry '%s' is not in an archive folder", tn__pt_show(z->e[0].name, z->e[0].nlen, nb));
    memcpy(z->prefix, z->e[0].name, pl);
    z->prefix[pl] = 0;
    qsort(z->e, (size_t)count, sizeof *z->e, tn__zent_cmp);
    for (int64_t k = 1; k < z->ne; k++)
        if (!tn__zent_cmp(&z->e[k - 1], &z->e[k])) return tn__pt_fail(z, "damaged zip archive: entry '%s' appears twice", tn__pt_show(z->e[k].name, z->e[k].nlen, nb));
    return 0;
}

/* An entry's bytes: in the file (stored; *owned = NULL) or inflated into *owned
   (TN_MALLOC'd). The local header must agree with the directory; the CRC-32 must match. */
static const unsigned char *tn__zip_read(const tn__pt *z, const tn__zent *t, unsigned char **owned) {
    char nb[112];   /* tn__pt_show's */
    const char *name = tn__pt_show(t->name, t->nlen, nb);
    *owned = NULL;
    if (t->lho > z->size || z->size - t->lho < 30 || tn__le32(z->b + t->lho) != 0x04034b50) {
        tn__pt_fail(z, "damaged zip archive: the local header of '%s' is missing", name);
        return NULL;
    }
    const unsigned char *h = z->b + t->lho;
    uint64_t at = t->lho + 30 + tn__le16(h + 26) + tn__le16(h + 28);
    if (tn__le16(h + 26) != t->nlen || memcmp(h + 30, t->name, t->nlen) || at > z->size || z->size - at < t->csize) {
        tn__pt_fail(z, "damaged zip archive: the local header or data of '%s' does not match the directory (or runs past the end)", name);
        return NULL;
    }
    const unsigned char *data = z->b + at;
    if (t->method == 0) {
        if (t->csize != t->usize) { tn__pt_fail(z, "damaged zip archive: stored entry '%s' has sizes %llu and %llu", name, (unsigned long long)t->csize, (unsigned long long)t->usize); return NULL; }
    } else if (t->method == 8) {
#ifdef TENSOR_ZLIB
        /* deflate expands at most ~1032:1: a larger claimed size is a lie, not an allocation */
        if (t->usize / 1032 > t->csize + 1 || t->usize > (uint64_t)SIZE_MAX - 1) { tn__pt_fail(z, "damaged zip archive: entry '%s' claims %llu bytes from %llu compressed", name, (unsigned long long)t->usize, (unsigned long long)t->csize); return NULL; }
        unsigned char *out = (unsigned char *)TN_MALLOC((size_t)t->usize + 1);
        if (!out) { tn__pt_fail(z, "out of memory inflating '%s' (%llu bytes)", name, (unsigned long long)t->usize); return NULL; }
        z_stream s;
        memset(&s, 0, sizeof s);
        int zr = inflateInit2(&s, -15);
        uint64_t in_left = t->csize, out_left = t->usize + 1;   /* one spare byte sees a stream that runs long */
        const unsigned char *ip = data;
        unsigned char *op = out;
        while (zr == Z_OK) {
            uInt ic = (uInt)TN__MIN(in_left, (uint64_t)1 << 30), oc = (uInt)TN__MIN(out_left, (uint64_t)1 << 30);
            s.next_in = (Bytef *)(uintptr_t)ip; s.avail_in = ic;
            s.next_out = op; s.avail_out = oc;
            zr = inflate(&s, Z_NO_FLUSH);
            ip += ic - s.avail_in; in_left -= ic - s.avail_in;
            op += oc - s.avail_out; out_left -= oc - s.avail_out;
            if (zr == Z_BUF_ERROR && (in_left == 0 || out_left == 0)) break;
            if (zr == Z_OK && ic == s.avail_in && oc == s.avail_out) break;   /* no progress */
        }
        inflateEnd(&s);
        if (zr != Z_STREAM_END || out_left != 1) {
            TN_FREE(out);
            tn__pt_fail(z, "damaged zip archive: entry '%s' does not inflate to its %llu bytes", name, (unsigned long long)t->usize);
            return NULL;
        }
        *owned = out;
        data = out;
#else
        tn__pt_fail(z, "zip entry '%s' is deflate-compressed; build with -DTENSOR_ZLIB and link -lz to read it (PyTorch itself writes stored entries)", name);
        return NULL;
#endif
    } else {
        tn__pt_fail(z, "zip entry '%s' uses compression method %d (only stored and deflate are supported)", name, t->method);
        return NULL;
    }
    if (tn__crc32(0, data, (size_t)t->usize) != t->crc) {
        TN_FREE(*owned);
        *owned = NULL;
        tn__pt_fail(z, "damaged zip archive: the CRC-32 of '%s' does not match (the data is corrupt)", name);
        return NULL;
    }
    return data;
}

/* ---- the pickle machine ---- */
enum { TN__PV_NONE, TN__PV_BOOL, TN__PV_INT, TN__PV_FLOAT, TN__PV_STR, TN__PV_BYTES, TN__PV_TUPLE, TN__PV_LIST, TN__PV_DICT,
       TN__PV_GLOBAL, TN__PV_STORAGE, TN__PV_TENSOR };
static const char *const tn__pv_names[] = {"None", "bool", "int", "float", "str", "bytes", "tuple", "list", "dict", "global", "storage", "tensor"};
/* The globals a weights file may name; all else is refused. */
enum { TN__G_ORDERED_DICT, TN__G_REBUILD_TENSOR, TN__G_REBUILD_PARAM, TN__G_REBUILD_PARAM_STATE, TN__G_STORAGE };
static const struct { const char *module, *name; int g; int dtype; } tn__pt_globals[] = {
    {"collections", "OrderedDict", TN__G_ORDERED_DICT, 0},
    {"torch._utils", "_rebuild_tensor_v2", TN__G_REBUILD_TENSOR, 0},
    {"torch._utils", "_rebuild_parameter", TN__G_REBUILD_PARAM, 0},
    {"torch._utils", "_rebuild_parameter_with_state", TN__G_REBUILD_PARAM_STATE, 0},
    {"torch", "FloatStorage", TN__G_STORAGE, TN_F32}, {"torch", "DoubleStorage", TN__G_STORAGE, TN_F64},
    {"torch", "HalfStorage", TN__G_STORAGE, TN_F16}, {"torch", "BFloat16Storage", TN__G_STORAGE, TN_BF16},
    {"torch", "LongStorage", TN__G_STORAGE, TN_I64}, {"torch", "IntStorage", TN__G_STORAGE, TN_I32},
    {"torch", "ByteStorage", TN__G_STORAGE, TN_U8}, {"torch", "BoolStorage", TN__G_STORAGE, TN_BOOL},
    {"torch", "CharStorage", TN__G_STORAGE, TN_I8}, {"torch", "ShortStorage", TN__G_STORAGE, TN_I16},
    {"torch", "ComplexFloatStorage", TN__G_STORAGE, TN_C64}, {"torch", "ComplexDoubleStorage", TN__G_STORAGE, TN_C128},
    {"torch", "UntypedStorage", TN__G_STORAGE, TN_U8},
};
/* torch's storage types of the dtypes tensor.h lacks: named in the message */
static const char *const tn__pt_unsupported_storages[] = {"QInt8Storage", "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage"};

typedef struct tn__pv {
    int kind;
    int g, dtype;                       /* GLOBAL: which, and a storage type's dtype */
    int64_t i;                          /* BOOL, INT */
    double f;                           /* FLOAT */
    char *s;                            /* STR, BYTES (NUL-terminated, TN_MALLOC'd) */
    size_t n;
    struct tn__pv **it;                 /* TUPLE, LIST; DICT: key, value, key, value, ... */
    int64_t len, cap;
    tn_tensor *t;                       /* STORAGE (1-d), TENSOR: owned by tn__pt_parse's scope */
} tn__pv;

typedef struct tn__pm {
    tn__pt *z;
    const unsigned char *p;             /* data.pkl */
    size_t n, i;
    tn__pv **all;                       /* every value made, freed at the end */
    int64_t nall, capall;
    tn__pv **stack;
    int64_t sp, capstack;
    int64_t *marks;
    int64_t nmarks, capmarks;
    tn__pv **memo;                      /* indices < the pickle's length (each put takes 2+ bytes) */
    size_t nmemo;
} tn__pm;

static int tn__pm_fail(tn__pm *m, const char *fmt, ...) TN__PRINTF_FMT(2, 3);
static int tn__pm_fail(tn__pm *m, const char *fmt, ...) {
    char why[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tn__pt_fail(m->z, "%sdata.pkl at byte %zu: %s", m->z->prefix, m->i, why);
}

/* arr (of *cap items of size bytes) grown to hold need: the array (moved or not), or NULL
   (arr unchanged) with an error. */
static void *tn__pm_grow(tn__pm *m, void *arr, int64_t *cap, int64_t need, size_t size) {
    if (need <= *cap) return arr;
    int64_t c = TN__MAX(need, *cap ? 2 * *cap : 16);
    int64_t bytes;
    void *a = tn__mul_ok(c, (int64_t)size, &bytes) && (uint64_t)bytes <= SIZE_MAX ? TN_REALLOC(arr, (size_t)bytes) : NULL;
    if (!a) { tn__pm_fail(m, "out of memory"); return NULL; }
    *cap = c;
    return a;
}
static tn__pv *tn__pm_new(tn__pm *m, int kind) {
    tn__pv **all = (tn__pv **)tn__pm_grow(m, m->all, &m->capall, m->nall + 1, sizeof *m->all);
    if (!all) return NULL;
    m->all = all;
    tn__pv *v = (tn__pv *)TN_MALLOC(sizeof *v);
    if (!v) { tn__pm_fail(m, "out of memory"); return NULL; }
    memset(v, 0, sizeof *v);
    v->kind = kind;
    m->all[m->nall++] = v;
    return v;
}
static void tn__pm_free(tn__pm *m) {
    for (int64_t k = 0; k < m->nall; k++) {
        TN_FREE(m->all[k]->s);
        TN_FREE(m->all[k]->it);   /* the tensors are the scope's (tn__pt_parse's) */
        TN_FREE(m->all[k]);
    }
    TN_FREE(m->all); TN_FREE(m->stack); TN_FREE(m->marks); TN_FREE(m->memo);
}
static int tn__pm_push(tn__pm *m, tn__pv *v) {
    tn__pv **stack = v ? (tn__pv **)tn__pm_grow(m, m->stack, &m->capstack, m->sp + 1, sizeof *m->stack) : NULL;
    if (!stack) return -1;
    m->stack = stack;
    m->stack[m->sp++] = v;
    return 0;
}
static int tn__pm_add(tn__pm *m, tn__pv *c, tn__pv *v) {
    tn__pv **it = (tn__pv **)tn__pm_grow(m, c->it, &c->cap, c->len + 1, sizeof *c->it);
    if (!it) return -1;
    c->it = it;
    c->it[c->len++] = v;
    return 0;
}
/* The stack's top above the last MARK: its position (the mark popped). */
static int64_t tn__pm_mark(tn__pm *m) {
    if (!m->nmarks) return tn__pm_fail(m, "no MARK on the stack");
    int64_t at = m->marks[--m->nmarks];
    return at > m->sp ? tn__pm_fail(m, "the stack is shorter than its MARK") : at;
}
static tn__pv *tn__pm_pop(tn__pm *m) {
    if (m->sp <= (m->nmarks ? m->marks[m->nmarks - 1] : 0)) { tn__pm_fail(m, "pop from an empty stack"); return NULL; }
    return m->stack[--m->sp];
}
static const unsigned char *tn__pm_take(tn__pm *m, size_t k) {
    if (m->n - m->i < k) { tn__pm_fail(m, "the pickle ends inside an opcode's argument (truncated)"); return NULL; }
    const unsigned char *p = m->p + m->i;
    m->i += k;
    return p;
}
/* A string value of k bytes from the pickle (unicode: must be UTF-8). */
static tn__pv *tn__pm_str(tn__pm *m, uint64_t k, int kind) {
    if (k > m->n - m->i) { tn__pm_fail(m, "a string of %llu bytes runs past the pickle's end", (unsigned long long)k); return NULL; }
    const unsigned char *p = tn__pm_take(m, (size_t)k);
    size_t bad;
    if (kind == TN__PV_STR && !tn__utf8_ok(p, (size_t)k, &bad)) { tn__pm_fail(m, "a string is not valid UTF-8"); return NULL; }
    tn__pv *v = tn__pm_new(m, kind);
    if (!v) return NULL;
    if (!(v->s = (char *)TN_MALLOC((size_t)k + 1))) { tn__pm_fail(m, "out of memory"); return NULL; }
    memcpy(v->s, p, (size_t)k);
    v->s[k] = 0;
    v->n = (size_t)k;
    return v;
}
static tn__pv *tn__pm_int(tn__pm *m, int64_t i, int kind) {
    tn__pv *v = tn__pm_new(m, kind);
    if (v) v->i = i;
    return v;
}
/* A global by module and name: one of the list, or refused naming it. */
static tn__pv *tn__pm_global(tn__pm *m, const char *mod, size_t ml, const char *name, size_t nl) {
    for (size_t k = 0; k < sizeof tn__pt_globals / sizeof *tn__pt_globals; k++)
        if (strlen(tn__pt_globals[k].module) == ml && !memcmp(mod, tn__pt_globals[k].module, ml) && strlen(tn__pt_globals[k].name) == nl && !memcmp(name, tn__pt_globals[k].name, nl)) {
            tn__pv *v = tn__pm_new(m, TN__PV_GLOBAL);
            if (v) { v->g = tn__pt_globals[k].g; v->dtype = tn__pt_globals[k].dtype; }
            return v;
        }
    char mb[112], nb[112];   /* tn__pt_show's */
    tn__pt_show((const unsigned char *)mod, ml, mb);
    tn__pt_show((const unsigned char *)name, nl, nb);
    for (size_t k = 0; k < sizeof tn__pt_unsupported_storages / sizeof *tn__pt_unsupported_storages; k++)
        if (!strcmp(mb, "torch") && !strcmp(nb, tn__pt_unsupported_storages[k])) { tn__pm_fail(m, "torch.%s: tensors of this dtype are not supported by tensor.h", nb); return NULL; }
    tn__pm_fail(m, "refusing the global '%s.%s': a weights file may name only tensors, state-dict containers and plain values "
                   "(loading weights never runs code)", mb, nb);
    return NULL;
}

static bool tn__pv_ints(const tn__pv *v, int64_t *out, int max, int *count) {
    if (v->kind != TN__PV_TUPLE || v->len > max) return false;
    for (int64_t k = 0; k < v->len; k++) {
        if (v->it[k]->kind != TN__PV_INT) return false;
        out[k] = v->it[k]->i;
    }
    *count = (int)v->len;
    return true;
}

/* persistent id ('storage', type, key, location, numel) -> the storage (one per key). */
static tn__pv *tn__pm_storage(tn__pm *m, tn__pv *pid) {
    if (pid->kind != TN__PV_TUPLE || pid->len != 5 || pid->it[0]->kind != TN__PV_STR || strcmp(pid->it[0]->s, "storage") || pid->it[1]->kind != TN__PV_GLOBAL ||
        pid->it[1]->g != TN__G_STORAGE || pid->it[2]->kind != TN__PV_STR || pid->it[3]->kind != TN__PV_STR || pid->it[4]->kind != TN__PV_INT) {
        tn__pm_fail(m, "a persistent id is not ('storage', type, key, location, numel)");
        return NULL;
    }
    tn_dtype dt = (tn_dtype)pid->it[1]->dtype;
    const char *key = pid->it[2]->s;
    int64_t numel = pid->it[4]->i, nbytes;
    char nb[112];   /* tn__pt_show's */
    tn__pt_show((const unsigned char *)key, pid->it[2]->n, nb);
    char *name = tn__str_join(m->z->prefix, "data/");
    char *full = name ? tn__str_join(name, key) : NULL;
    TN_FREE(name);
    if (!full) { tn__pm_fail(m, "out of memory"); return NULL; }
    tn__zent *e = strlen(key) == pid->it[2]->n ? tn__zip_find(m->z, full) : NULL;
    TN_FREE(full);
    if (!e) { tn__pm_fail(m, "storage '%s' has no entry %sdata/%s in the archive", nb, m->z->prefix, nb); return NULL; }
    if (e->loaded) {
        tn__pv *s = (tn__pv *)e->loaded;
        if (s->dtype != (int)dt || s->i != numel) { tn__pm_fail(m, "storage '%s' is named with two dtypes or sizes", nb); return NULL; }
        return s;
    }
    if (numel < 0 || !tn__mul_ok(numel, (int64_t)tn_dtype_size(dt), &nbytes) || (uint64_t)nbytes != e->usize) {
        tn__pm_fail(m, "storage '%s' of %lld %s elements does not match its entry's %llu bytes", nb, (long long)numel,
                    tn_dtype_name(dt), (unsigned long long)e->usize);
        return NULL;
    }
    unsigned char *owned;
    const unsigned char *data = tn__zip_read(m->z, e, &owned);
    if (!data) return NULL;
    tn__pv *s = tn__pm_new(m, TN__PV_STORAGE);
    /* every dtype as torch.load keeps it, float16/bfloat16 too (their bits, little-endian as on every CPU tensor.h runs on) */
    tn_tensor *t = s ? tn_empty(&numel, 1, dt) : NULL;
    if (t && nbytes) memcpy(tn_data_ptr(t), data, (size_t)nbytes);
    TN_FREE(owned);
    if (!t) { if (s) tn__pm_fail(m, "cannot make storage '%s' (%lld elements): %s", nb, (long long)numel, tn_last_error()); return NULL; }
    s->t = t;
    s->dtype = (int)dt;
    s->i = numel;
    e->loaded = s;
    return s;
}

/* REDUCE: f(*args) for the allowed callables. */
static tn__pv *tn__pm_reduce(tn__pm *m, tn__pv *f, tn__pv *args) {
    if (f->kind != TN__PV_GLOBAL || args->kind != TN__PV_TUPLE) { tn__pm_fail(m, "REDUCE of a %s", tn__pv_names[f->kind]); return NULL; }
    tn__pv **a = args->it;
    int64_t na = args->len;
    switch (f->g) {
    case TN__G_ORDERED_DICT:
        if (na) { tn__pm_fail(m, "collections.OrderedDict() takes no arguments here"); return NULL; }
        return tn__pm_new(m, TN__PV_DICT);
    case TN__G_REBUILD_TENSOR: {
        int64_t size[TN_MAX_DIMS], stride[TN_MAX_DIMS], last;
        int nd = 0, ns = 0;
        if ((na != 6 && na != 7) || a[0]->kind != TN__PV_STORAGE || a[1]->kind != TN__PV_INT || !tn__pv_ints(a[2], size, TN_MAX_DIMS, &nd) ||
            !tn__pv_ints(a[3], stride, TN_MAX_DIMS, &ns) || nd != ns || a[4]->kind != TN__PV_BOOL) {
            tn__pm_fail(m, "_rebuild_tensor_v2 needs (storage, offset, size, stride, requires_grad, hooks) with at most %d dims", TN_MAX_DIMS);
            return NULL;
        }
        tn_tensor *st = a[0]->t;
        int64_t off = a[1]->i;
        bool ok = off >= 0;
        for (int k = 0; k < nd; k++) ok = ok && size[k] >= 0 && stride[k] >= 0;
        ok = ok && !tn__check_shape(m->z->fn, size, nd) && tn__span_ok(size, stride, nd, off, &last) && last < tn_numel(st);
        if (!ok) {
            tn_clear_error();
            tn__pm_fail(m, "a tensor of size %s, stride %s, offset %lld does not fit in its storage of %lld elements", tn__shape_str(size, nd), tn__shape_str(stride, nd), (long long)off, (long long)tn_numel(st));
            return NULL;
        }
        tn__pv *v = tn__pm_new(m, TN__PV_TENSOR);
        if (v && !(v->t = tn_as_strided(st, size, nd, stride, off))) { tn__pm_fail(m, "%s", tn_last_error()); return NULL; }
        return v;
    }
    case TN__G_REBUILD_PARAM:
    case TN__G_REBUILD_PARAM_STATE:
        if (na != (f->g == TN__G_REBUILD_PARAM ? 3 : 4) || a[0]->kind != TN__PV_TENSOR || a[1]->kind != TN__PV_BOOL) {
            tn__pm_fail(m, "_rebuild_parameter needs (tensor, requires_grad, hooks%s)", f->g == TN__G_REBUILD_PARAM ? "" : ", state");
            return NULL;
        }
        if (a[1]->i && tn_dtype_is_floating(a[0]->t->dtype)) tn_requires_grad_(a[0]->t, true);
        return a[0];
    default:
        tn__pm_fail(m, "a storage type is not callable here");
        return NULL;
    }
}

/* Run data.pkl; the object it builds, or NULL. */
static tn__pv *tn__pm_run(tn__pm *m) {
#define TN__PM_TAKE(var, k) const unsigned char *var = tn__pm_take(m, k); if (!var) return NULL
#define TN__PM_PUSH(v) do { if (tn__pm_push(m, (v))) return NULL; } while (0)
#define TN__PM_POP(var) tn__pv *var = tn__pm_pop(m); if (!var) return NULL
    while (m->i < m->n) {
        size_t at = m->i;
        unsigned char op = m->p[m->i++];
        switch (op) {
        case 0x80: { TN__PM_TAKE(p, 1); if (*p > 5) { tn__pm_fail(m, "pickle protocol %d is not known", *p); return NULL; } break; }
        case 0x95: { TN__PM_TAKE(p, 8); (void)p; break; }                     /* FRAME */
        case '.': {                                                           /* STOP */
            if (m->sp != 1 || m->nmarks) { tn__pm_fail(m, "STOP with %lld values on the stack", (long long)m->sp); return NULL; }
            return m->stack[0];
        }
        case '(': {
            int64_t *marks = (int64_t *)tn__pm_grow(m, m->marks, &m->capmarks, m->nmarks + 1, sizeof *m->marks);
            if (!marks) return NULL;
            m->marks = marks;
            m->marks[m->nmarks++] = m->sp;
            break;
        }
        case '0': { TN__PM_POP(v); (void)v; break; }
        case '1': { int64_t k = tn__pm_mark(m); if (k < 0) return NULL; m->sp = k; break; }
        case '2': { TN__PM_POP(v); TN__PM_PUSH(v); TN__PM_PUSH(v); break; }
        case 'N': TN__PM_PUSH(tn__pm_new(m, TN__PV_NONE)); break;
        case 0x88: case 0x89: TN__PM_PUSH(tn__pm_int(m, op == 0x88, TN__PV_BOOL)); break;
        case 'J': { TN__PM_TAKE(p, 4); TN__PM_PUSH(tn__pm_int(m, (int32_t)tn__le32(p), TN__PV_INT)); break; }
        case 'K': { TN__PM_TAKE(p, 1); TN__PM_PUSH(tn__pm_int(m, *p, TN__PV_INT)); break; }
        case 'M': { TN__PM_TAKE(p, 2); TN__PM_PUSH(tn__pm_int(m, tn__le16(p), TN__PV_INT)); break; }
        case 0x8a: case 0x8b: {                                               /* LONG1, LONG4 */
            TN__PM_TAKE(p, op == 0x8a ? 1 : 4);
            uint64_t k = op == 0x8a ? *p : tn__le32(p);
            if (k > 8) { tn__pm_fail(m, "an integer of %llu bytes does not fit in int64", (unsigned long long)k); return NULL; }
            TN__PM_TAKE(q, (size_t)k);
            uint64_t u = 0;
            for (uint64_t j = 0; j < k; j++) u |= (uint64_t)q[j] << (8 * j);
            if (k && k < 8 && (q[k - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * k);   /* sign-extend */
            TN__PM_PUSH(tn__pm_int(m, (int64_t)u, TN__PV_INT));
            break;
        }
        case 'G': {
            TN__PM_TAKE(p, 8);
            uint64_t u = 0;
            for (int j = 0; j < 8; j++) u = u << 8 | p[j];
            tn__pv *v = tn__pm_new(m, TN__PV_FLOAT);
            if (v) memcpy(&v->f, &u, 8);
            TN__PM_PUSH(v);
            break;
        }
        case 'X': case 0x8c: case 0x8d: case 'T': case 'U': case 'B': case 'C': case 0x8e: {
            size_t w = op == 0x8c || op == 'U' || op == 'C' ? 1 : op == 0x8d || op == 0x8e ? 8 : 4;
            TN__PM_TAKE(p, w);
            uint64_t k = w == 1 ? *p : w == 4 ? tn__le32(p) : tn__le64(p);
            if (op == 'T' && (k & 0x80000000u)) { tn__pm_fail(m, "negative string length"); return NULL; }
            TN__PM_PUSH(tn__pm_str(m, k, op == 'B' || op == 'C' || op == 0x8e ? TN__PV_BYTES : TN__PV_STR));
            break;
        }
        case ')': TN__PM_PUSH(tn__pm_new(m, TN__PV_TUPLE)); break;
        case ']': TN__PM_PUSH(tn__pm_new(m, TN__PV_LIST)); break;
        case '}': TN__PM_PUSH(tn__pm_new(m, TN__PV_DICT)); break;
        case 't': case 'l': case 'd': case 0x85: case 0x86: case 0x87: {      /* from MARK, or the top 1-3 */
            int64_t from = op >= 0x85 ? m->sp - (op - 0x84) : tn__pm_mark(m);
            if (op >= 0x85 && from < (m->nmarks ? m->marks[m->nmarks - 1] : 0)) { tn__pm_fail(m, "TUPLE%d from a short stack", op - 0x84); return NULL; }
            if (from < 0) return NULL;
            if (op == 'd' && (m->sp - from) % 2) { tn__pm_fail(m, "DICT with an odd number of items"); return NULL; }
            tn__pv *v = tn__pm_new(m, op == 'l' ? TN__PV_LIST : op == 'd' ? TN__PV_DICT : TN__PV_TUPLE);
            if (!v) return NULL;
            for (int64_t k = from; k < m->sp; k++) if (tn__pm_add(m, v, m->stack[k])) return NULL;
            m->sp = from;
            TN__PM_PUSH(v);
            break;
        }
        case 'a': case 'e': case 's': case 'u': {                             /* APPEND(S), SETITEM(S) */
            bool one = op == 'a' || op == 's', dict = op == 's' || op == 'u';
            int64_t from = one ? m->sp - (dict ? 2 : 1) : tn__pm_mark(m);
            if (!one && from < 0) return NULL;
            if (from - 1 < (m->nmarks ? m->marks[m->nmarks - 1] : 0)) { tn__pm_fail(m, "%s without a container", dict ? "SETITEM" : "APPEND"); return NULL; }
            tn__pv *c = m->stack[from - 1];
            if (c->kind != (dict ? TN__PV_DICT : TN__PV_LIST) || (dict && (m->sp - from) % 2)) {
                tn__pm_fail(m, "%s on a %s", dict ? "SETITEM" : "APPEND", tn__pv_names[c->kind]);
                return NULL;
            }
            for (int64_t k = from; k < m->sp; k++) if (tn__pm_add(m, c, m->stack[k])) return NULL;
            m->sp = from;
            break;
        }
        case 'q': case 'r': case 0x94: {                                      /* BINPUT, LONG_BINPUT, MEMOIZE */
            uint64_t k = m->nmemo;
            if (op != 0x94) { TN__PM_TAKE(p, op == 'q' ? 1 : 4); k = op == 'q' ? *p : tn__le32(p); }
            if (!m->sp) { tn__pm_fail(m, "memo put from an empty stack"); return NULL; }
            if (k >= m->n) { tn__pm_fail(m, "memo index %llu is out of range", (unsigned long long)k); return NULL; }
            if (k >= m->nmemo) {
                tn__pv **memo = (tn__pv **)TN_REALLOC(m->memo, ((size_t)k + 1) * sizeof *memo);
                if (!memo) { tn__pm_fail(m, "out of memory"); return NULL; }
                memset(memo + m->nmemo, 0, ((size_t)k + 1 - m->nmemo) * sizeof *memo);
                m->memo = memo;
                m->nmemo = (size_t)k + 1;
            }
            m->memo[k] = m->stack[m->sp - 1];
            break;
        }
        case 'h': case 'j': {
            TN__PM_TAKE(p, op == 'h' ? 1 : 4);
            uint64_t k = op == 'h' ? *p : tn__le32(p);
            if (k >= m->nmemo || !m->memo[k]) { tn__pm_fail(m, "memo index %llu was never stored", (unsigned long long)k); return NULL; }
            TN__PM_PUSH(m->memo[k]);
            break;
        }
        case 'c': {                                                           /* GLOBAL "module\nname\n" */
            const unsigned char *mod = m->p + m->i, *nl1 = (const unsigned char *)memchr(mod, '\n', m->n - m->i);
            const unsigned char *name = nl1 ? nl1 + 1 : NULL, *nl2 = nl1 ? (const unsigned char *)memchr(name, '\n', (size_t)(m->p + m->n - name)) : NULL;
            if (!nl2) { tn__pm_fail(m, "GLOBAL without its two lines"); return NULL; }
            m->i = (size_t)(nl2 + 1 - m->p);
            TN__PM_PUSH(tn__pm_global(m, (const char *)mod, (size_t)(nl1 - mod), (const char *)name, (size_t)(nl2 - name)));
            break;
        }
        case 0x93: {                                                          /* STACK_GLOBAL */
            TN__PM_POP(name);
            TN__PM_POP(mod);
            if (mod->kind != TN__PV_STR || name->kind != TN__PV_STR) { tn__pm_fail(m, "STACK_GLOBAL of non-strings"); return NULL; }
            TN__PM_PUSH(tn__pm_global(m, mod->s, mod->n, name->s, name->n));
            break;
        }
        case 'R': {
            TN__PM_POP(args);
            TN__PM_POP(f);
            TN__PM_PUSH(tn__pm_reduce(m, f, args));
            break;
        }
        case 'b': {                                                           /* BUILD: a state dict's _metadata, dropped */
            TN__PM_POP(state);
            if (!m->sp || !((m->stack[m->sp - 1]->kind == TN__PV_DICT && (state->kind == TN__PV_DICT || state->kind == TN__PV_NONE)) ||
                            (m->stack[m->sp - 1]->kind == TN__PV_TENSOR && (state->kind == TN__PV_NONE || (state->kind == TN__PV_DICT && !state->len))))) {
                tn__pm_fail(m, "BUILD of a %s with a %s is not part of a weights file", m->sp ? tn__pv_names[m->stack[m->sp - 1]->kind] : "nothing", tn__pv_names[state->kind]);
                return NULL;
            }
            break;
        }
        case 'Q': {
            TN__PM_POP(pid);
            TN__PM_PUSH(tn__pm_storage(m, pid));
            break;
        }
        default:
            m->i = at;
            tn__pm_fail(m, "pickle opcode 0x%02x%s%c%s is not part of a weights file", op, op >= 0x20 && op < 0x7f ? " ('" : "", op >= 0x20 && op < 0x7f ? (char)op : ' ',
                        op >= 0x20 && op < 0x7f ? "')" : "");
            return NULL;
        }
    }
    tn__pm_fail(m, "the pickle ends without STOP (truncated)");
    return NULL;
#undef TN__PM_TAKE
#undef TN__PM_PUSH
#undef TN__PM_POP
}

/* The object into d: tensors under their dotted paths ("layer.0.weight"), nested dicts,
   lists and tuples flattened, numbers as 0-d tensors (int64, float64, bool), strings as
   metadata, None dropped. */
static int tn__pm_flatten(tn__pm *m, tn_dict *d, const tn__pv *v, const char *name, int depth) {
    if (depth > 64) return tn__pm_fail(m, "the object is nested deeper than 64 levels (or holds itself)");
    const char *key = *name ? name : "tensor";
    switch (v->kind) {
    case TN__PV_NONE: case TN__PV_BYTES: return 0;
    case TN__PV_STR: return tn_dict_set_meta(d, key, v->s);
    case TN__PV_TENSOR: case TN__PV_STORAGE: return tn_dict_set(d, key, v->t);
    case TN__PV_INT: case TN__PV_BOOL: case TN__PV_FLOAT: {
        bool b = v->i != 0;
        tn_tensor *t = tn_from_data(v->kind == TN__PV_FLOAT ? (const void *)&v->f : v->kind == TN__PV_INT ? (const void *)&v->i : (const void *)&b, NULL, 0,
                                    v->kind == TN__PV_FLOAT ? TN_F64 : v->kind == TN__PV_INT ? TN_I64 : TN_BOOL);
        return t ? tn_dict_set(d, key, t) : -1;
    }
    case TN__PV_TUPLE: case TN__PV_LIST: case TN__PV_DICT: {
        bool dict = v->kind == TN__PV_DICT;
        for (int64_t k = 0; k < v->len; k += dict ? 2 : 1) {
            char kb[32];   /* an int64 */
            const tn__pv *kv = dict ? v->it[k] : NULL;
            const char *part = kb;
            if (!dict) snprintf(kb, sizeof kb, "%lld", (long long)k);
            else if (kv->kind == TN__PV_STR && strlen(kv->s) == kv->n) part = kv->s;
            else if (kv->kind == TN__PV_INT) snprintf(kb, sizeof kb, "%lld", (long long)kv->i);
            else return tn__pm_fail(m, "a dict key of type %s (names are strings or ints)", tn__pv_names[kv->kind]);
            char *sub = *name ? tn__str_join(name, ".") : NULL, *full = *name ? (sub ? tn__str_join(sub, part) : NULL) : tn__strdup(part);
            TN_FREE(sub);
            int rc = full ? tn__pm_flatten(m, d, dict ? v->it[k + 1] : v->it[k], full, depth + 1) : tn__pm_fail(m, "out of memory");
            TN_FREE(full);
            if (rc) return -1;
        }
        return 0;
    }
    default: return tn__pm_fail(m, "a %s is not a value a weights file holds", tn__pv_names[v->kind]);
    }
}

static tn_dict *tn__pt_parse(tn__pt *z) {
    if (tn__zip_open(z)) return NULL;
    char name[300];   /* prefix (< 256) + a record's name */
    const char *recs[3] = {"version", ".data/version", "byteorder"};
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "%s%s", z->prefix, recs[k]);
        tn__zent *e = tn__zip_find(z, name);
        if (!e) continue;
        unsigned char *owned;
        const unsigned char *p = e->usize <= 64 ? tn__zip_read(z, e, &owned) : NULL;
        if (!p) { if (e->usize > 64) tn__pt_fail(z, "record '%s' is %llu bytes long", name, (unsigned long long)e->usize); return NULL; }
        char val[72];
        memcpy(val, p, (size_t)e->usize);
        val[e->usize] = 0;
        TN_FREE(owned);
        long ver = k < 2 ? strtol(val, NULL, 10) : 1;
        if (k == 2 && strcmp(val, "little")) { tn__pt_fail(z, "byte order '%.20s' is not supported (only little-endian files)", val); return NULL; }
        if (ver < 1 || ver > 64) { tn__pt_fail(z, "file format version '%.20s' is not known", val); return NULL; }
    }
    snprintf(name, sizeof name, "%sdata.pkl", z->prefix);
    tn__zent *e = tn__zip_find(z, name);
    if (!e) { tn__pt_fail(z, "not a PyTorch file: the zip archive has no %s", name); return NULL; }
    tn__pm m;
    memset(&m, 0, sizeof m);
    m.z = z;
    unsigned char *owned;
    m.p = tn__zip_read(z, e, &owned);
    if (!m.p) return NULL;
    m.n = (size_t)e->usize;
    tn_dict *d = NULL;
    tn_scope_begin();
    tn__pv *root = tn__pm_run(&m);
    if (root && (d = tn_dict_new()) && tn__pm_flatten(&m, d, root, "", 0)) { tn_dict_free(d); d = NULL; }
    tn__pm_free(&m);
    tn_scope_end();   /* the dict holds its own references */
    TN_FREE(owned);
    return d;
}

TNDEF tn_dict *tn_load_pt(const char *path) {
    const char *fn = "tn_load_pt";
    if (!path) return (tn_dict *)tn__error("%s: path is NULL", fn);
    char pb[256];   /* tn__msg_path's */
    tn__file r;
    memset(&r, 0, sizeof r);
    r.f = fopen(path, "rb");
    if (!r.f) return (tn_dict *)tn__error("%s: cannot open '%s': %s", fn, tn__msg_path(path, pb), strerror(errno));
    int64_t size = tn__file_left(&r);
    char *buf = size >= 0 && (uint64_t)size <= SIZE_MAX ? tn__file_read_exact(fn, path, &r, size) : NULL;
    fclose(r.f);
    if (!buf) return size >= 0 ? NULL : (tn_dict *)tn__error("%s: '%s' is not a regular file of addressable size", fn, tn__msg_path(path, pb));
    tn__pt z;
    memset(&z, 0, sizeof z);
    z.fn = fn;
    z.path = path;
    z.b = (const unsigned char *)buf;
    z.size = (size_t)size;
    tn_dict *d = tn__pt_parse(&z);
    TN_FREE(z.e);
    TN_FREE(buf);
    return d;
}

/* ---- writing ---- */
static void tn__sb_le(tn__sbuf *b, uint64_t v, int bytes) {
    char c[8];
    for (int k = 0; k < bytes; k++) c[k] = (char)(v >> (8 * k) & 0xFF);
    tn__sb_put(b, c, (size_t)bytes);
}
static void tn__pk_str(tn__sbuf *b, const char *s) {   /* BINUNICODE */
    tn__sb_put(b, "X", 1);
    tn__sb_le(b, strlen(s), 4);
    tn__sb_puts(b, s);
}
static void tn__pk_int(tn__sbuf *b, int64_t v) {
    if (v >= 0 && v < 256) { tn__sb_put(b, "K", 1); tn__sb_le(b, (uint64_t)v, 1); }
    else if (v >= INT32_MIN && v <= INT32_MAX) { tn__sb_put(b, "J", 1); tn__sb_le(b, (uint64_t)v, 4); }
    else { tn__sb_put(b, "\x8a\x08", 2); tn__sb_le(b, (uint64_t)v, 8); }   /* LONG1 of 8 bytes, two's complement */
}
static void tn__pk_ints(tn__sbuf *b, const int64_t *v, int n) {
    tn__sb_put(b, "(", 1);
    for (int k = 0; k < n; k++) tn__pk_int(b, v[k]);
    tn__sb_put(b, "t", 1);
}

/* One storage written: the elements [lo, hi) of a tensor group's shared storage. */
typedef struct tn__pt_item { const char *name; tn_tensor *t; int64_t lo, hi; int storage; } tn__pt_item;
typedef struct tn__pt_out {
    const char *fn;
    tn__sbuf pkl;
    tn__pt_item *items;
    int n, nstorages;
    int *first;                         /* per storage: the item whose storage it is */
    tn__sbuf cdir;                      /* the central directory, built as entries are written */
    uint64_t at;                        /* bytes written */
    int64_t nentries;
} tn__pt_out;

static int tn__pt_entry(tn__wfile *w, tn__pt_out *o, const char *name, const void *data, uint64_t size) {
    uint32_t crc = tn__crc32(0, (const unsigned char *)data, (size_t)size);
    bool z64 = size >= 0xFFFFFFFFu || o->at >= 0xFFFFFFFFu;
    size_t nlen = strlen(name), xlen = (size >= 0xFFFFFFFFu ? 20 : 0);
    size_t pad = (64 - (o->at + 30 + nlen + xlen + 4) % 64) % 64;   /* data 64-byte aligned, as torch writes it */
    tn__sbuf h;
    memset(&h, 0, sizeof h);
    tn__sb_le(&h, 0x04034b50, 4);
    tn__sb_le(&h, z64 ? 45 : 20, 2);
    tn__sb_le(&h, 0, 2); tn__sb_le(&h, 0, 2);       /* flags, stored */
    tn__sb_le(&h, 0, 2); tn__sb_le(&h, 0x21, 2);    /* time, date: 1980-01-01 */
    tn__sb_le(&h, crc, 4);
    tn__sb_le(&h, size >= 0xFFFFFFFFu ? 0xFFFFFFFFu : size, 4);
    tn__sb_le(&h, size >= 0xFFFFFFFFu ? 0xFFFFFFFFu : size, 4);
    tn__sb_le(&h, nlen, 2);
    tn__sb_le(&h, xlen + 4 + pad, 2);
    tn__sb_puts(&h, name);
    if (xlen) { tn__sb_le(&h, 1, 2); tn__sb_le(&h, 16, 2); tn__sb_le(&h, size, 8); tn__sb_le(&h, size, 8); }
    tn__sb_le(&h, 0x4246, 2);                       /* "FB": torch's padding field */
    tn__sb_le(&h, pad, 2);
    for (size_t k = 0; k < pad; k++) tn__sb_put(&h, "Z", 1);
    /* the central directory's record of it */
    bool big_size = size >= 0xFFFFFFFFu, big_off = o->at >= 0xFFFFFFFFu;
    tn__sbuf *c = &o->cdir;
    tn__sb_le(c, 0x02014b50, 4);
    tn__sb_le(c, z64 ? 45 : 20, 2); tn__sb_le(c, z64 ? 45 : 20, 2);
    tn__sb_le(c, 0, 2); tn__sb_le(c, 0, 2); tn__sb_le(c, 0, 2); tn__sb_le(c, 0x21, 2);
    tn__sb_le(c, crc, 4);
    tn__sb_le(c, big_size ? 0xFFFFFFFFu : size, 4);
    tn__sb_le(c, big_size ? 0xFFFFFFFFu : size, 4);
    tn__sb_le(c, nlen, 2);
    tn__sb_le(c, (big_size ? 16 : 0) + (big_off ? 8 : 0) + (z64 ? 4 : 0), 2);
    tn__sb_le(c, 0, 2); tn__sb_le(c, 0, 2); tn__sb_le(c, 0, 2); tn__sb_le(c, 0, 4);
    tn__sb_le(c, big_off ? 0xFFFFFFFFu : o->at, 4);
    tn__sb_puts(c, name);
    if (z64) {
        tn__sb_le(c, 1, 2);
        tn__sb_le(c, (big_size ? 16 : 0) + (big_off ? 8 : 0), 2);
        if (big_size) { tn__sb_le(c, size, 8); tn__sb_le(c, size, 8); }
        if (big_off) tn__sb_le(c, o->at, 8);
    }
    if (h.failed || c->failed) { TN_FREE(h.s); return TN__FAIL_INT("%s: out of memory", o->fn); }
    int err = tn__wf_write(w, h.s, h.n);
    if (!err) err = tn__wf_write(w, data, (size_t)size);
    o->at += h.n + size;
    o->nentries++;
    TN_FREE(h.s);
    return err;
}

static int tn__pt_body(tn__wfile *w, void *ctx) {
    tn__pt_out *o = (tn__pt_out *)ctx;
    char name[64];   /* "archive/data/<int>" */
    int err = tn__pt_entry(w, o, "archive/data.pkl", o->pkl.s, o->pkl.n);
    if (!err) err = tn__pt_entry(w, o, "archive/byteorder", "little", 6);
    for (int s = 0; !err && s < o->nstorages; s++) {
        tn__pt_item *it = &o->items[o->first[s]];
        size_t es = tn_dtype_size(it->t->dtype);
        snprintf(name, sizeof name, "archive/data/%d", s);
        const char *base = (const char *)it->t->storage->data;
        err = tn__pt_entry(w, o, name, base ? base + (size_t)it->lo * es : "", (uint64_t)(it->hi - it->lo) * es);
    }
    if (!err) err = tn__pt_entry(w, o, "archive/version", "3\n", 2);
    if (err) return err;
    /* the central directory, then zip64's end records and the classic one, as torch writes them */
    tn__sbuf e;
    memset(&e, 0, sizeof e);
    uint64_t cdoff = o->at, cdsize = o->cdir.n, n = (uint64_t)o->nentries;
    tn__sb_le(&e, 0x06064b50, 4); tn__sb_le(&e, 44, 8); tn__sb_le(&e, 45, 2); tn__sb_le(&e, 45, 2);
    tn__sb_le(&e, 0, 4); tn__sb_le(&e, 0, 4); tn__sb_le(&e, n, 8); tn__sb_le(&e, n, 8); tn__sb_le(&e, cdsize, 8); tn__sb_le(&e, cdoff, 8);
    tn__sb_le(&e, 0x07064b50, 4); tn__sb_le(&e, 0, 4); tn__sb_le(&e, cdoff + cdsize, 8); tn__sb_le(&e, 1, 4);
    tn__sb_le(&e, 0x06054b50, 4); tn__sb_le(&e, 0, 2); tn__sb_le(&e, 0, 2);
    tn__sb_le(&e, n >= 0xFFFF ? 0xFFFF : n, 2); tn__sb_le(&e, n >= 0xFFFF ? 0xFFFF : n, 2);
    tn__sb_le(&e, cdsize >= 0xFFFFFFFFu ? 0xFFFFFFFFu : cdsize, 4);
    tn__sb_le(&e, cdoff >= 0xFFFFFFFFu ? 0xFFFFFFFFu : cdoff, 4);
    tn__sb_le(&e, 0, 2);
    if (e.failed || o->cdir.failed) { TN_FREE(e.s); return TN__FAIL_INT("%s: out of memory", o->fn); }
    err = tn__wf_write(w, o->cdir.s, o->cdir.n);
    if (!err) err = tn__wf_write(w, e.s, e.n);
    TN_FREE(e.s);
    return err;
}

static int tn__pt_cmp_storage(const void *a, const void *b) {
    const tn__pt_item *x = (const tn__pt_item *)a, *y = (const tn__pt_item *)b;
    uintptr_t p = (uintptr_t)x->t->storage, q = (uintptr_t)y->t->storage;
    return p != q ? (p < q ? -1 : 1) : x->t->dtype != y->t->dtype ? (x->t->dtype < y->t->dtype ? -1 : 1) : 0;
}

TNDEF int tn_save_pt(const char *path, const tn_dict *d) {
    const char *fn = "tn_save_pt";
    if (!path || !d) return TN__FAIL_INT("%s: need a path and a dict", fn);
    static const char *const storage_names[TN_NUM_DTYPES] = {"FloatStorage", "DoubleStorage", "IntStorage", "LongStorage", "ByteStorage", "BoolStorage", "HalfStorage", "BFloat16Storage",
                                                                             "CharStorage", "ShortStorage", "ComplexFloatStorage", "ComplexDoubleStorage"};
    tn__pt_out o;
    memset(&o, 0, sizeof o);
    o.fn = fn;
    o.n = tn_dict_len(d);
    o.items = (tn__pt_item *)tn__malloc_n(fn, o.n + 1, sizeof *o.items);
    o.first = (int *)tn__malloc_n(fn, o.n + 1, sizeof *o.first);
    int rc = o.items && o.first ? 0 : -1;
    tn_scope_begin();
    /* tensors off the CPU come to it (a storage of their own); every tensor's element span */
    for (int i = 0; !rc && i < o.n; i++) {
        tn_tensor *t = tn_dict_value(d, i);
        if (!t) { rc = TN__FAIL_INT("%s: tensor '%s' is NULL", fn, tn_dict_key(d, i)); break; }
        if (t->device != TN_CPU && !(t = tn_to(t, TN_CPU))) { rc = -1; break; }
        int64_t last = -1;
        tn__span_ok(t->shape, t->strides, t->ndim, t->offset, &last);   /* checked when t was made */
        o.items[i].name = tn_dict_key(d, i);
        o.items[i].t = t;
        o.items[i].lo = last < 0 ? 0 : t->offset;
        o.items[i].hi = last + 1;
        for (int k = 0; last >= 0 && k < t->ndim; k++) if (t->shape[k] > 1 && t->strides[k] < 0) o.items[i].lo = -1;   /* not produced here; refused below */
        if (o.items[i].lo < 0) rc = TN__FAIL_INT("%s: tensor '%s' has a negative stride", fn, o.items[i].name);
    }
    /* tensors sharing a storage share one entry spanning all of them, as torch saves views */
    tn__pt_item *sorted = rc ? NULL : (tn__pt_item *)tn__malloc_n(fn, o.n + 1, sizeof *sorted);
    if (!rc && !sorted) rc = -1;
    if (!rc) {
        for (int i = 0; i < o.n; i++) { sorted[i] = o.items[i]; sorted[i].storage = i; }
        qsort(sorted, (size_t)o.n, sizeof *sorted, tn__pt_cmp_storage);
        for (int i = 0, j; i < o.n; i = j) {
            int64_t lo = sorted[i].lo, hi = sorted[i].hi;
            for (j = i; j < o.n && !tn__pt_cmp_storage(&sorted[i], &sorted[j]); j++)
                if (sorted[j].hi > sorted[j].lo) { lo = hi > lo ? TN__MIN(lo, sorted[j].lo) : sorted[j].lo; hi = TN__MAX(hi, sorted[j].hi); }
            for (int k = i; k < j; k++) { o.items[sorted[k].storage].lo = lo; o.items[sorted[k].storage].hi = TN__MAX(hi, lo); o.items[sorted[k].storage].storage = -1 - i; }
        }
        /* storage keys in the order of first use */
        for (int i = 0; i < o.n; i++) {
            int group = o.items[i].storage;
            if (group >= 0) continue;
            for (int k = i; k < o.n; k++) if (o.items[k].storage == group) o.items[k].storage = o.nstorages;
            o.first[o.nstorages++] = i;
        }
        TN_FREE(sorted);
    }
    if (!rc) {
        tn__sbuf *b = &o.pkl;
        char num[32];   /* an int */
        tn__sb_puts(b, "\x80\x02" "ccollections\nOrderedDict\n)R(");
        for (int i = 0; i < o.n; i++) {
            tn__pt_item *it = &o.items[i];
            tn__pk_str(b, it->name);
            tn__sb_puts(b, "ctorch._utils\n_rebuild_tensor_v2\n((");
            tn__pk_str(b, "storage");
            tn__sb_puts(b, "ctorch\n");
            tn__sb_puts(b, storage_names[it->t->dtype]);
            tn__sb_puts(b, "\n");
            snprintf(num, sizeof num, "%d", it->storage);
            tn__pk_str(b, num);
            tn__pk_str(b, "cpu");
            tn__pk_int(b, it->hi - it->lo);
            tn__sb_put(b, "tQ", 2);
            tn__pk_int(b, tn_numel(it->t) ? it->t->offset - it->lo : 0);
            tn__pk_ints(b, it->t->shape, it->t->ndim);
            tn__pk_ints(b, it->t->strides, it->t->ndim);
            tn__sb_puts(b, "\x89" "ccollections\nOrderedDict\n)RtR");
            if (i % 1000 == 999 && i + 1 < o.n) tn__sb_puts(b, "u(");   /* SETITEMS in batches, as pickle does */
        }
        tn__sb_puts(b, "u.");
        if (b->failed) rc = TN__FAIL_INT("%s: out of memory", fn);
    }
    if (!rc) rc = tn__safe_save(fn, path, tn__pt_body, &o);
    tn_scope_end();
    TN_FREE(o.pkl.s);
    TN_FREE(o.cdir.s);
    TN_FREE(o.items);
    TN_FREE(o.first);
    return rc;
}
