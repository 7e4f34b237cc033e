/* ---- writing ---- */
static void tn__st_json_string(tn__sbuf *b, const char *s) {
    static const char hex[] = "0123456789abcdef";
    tn__sb_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
        switch (*c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            if (*c >= 0x20) { tn__sb_put(b, (const char *)c, 1); continue; }
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0'; esc[4] = hex[*c >> 4]; esc[5] = hex[*c & 15];
        }
        tn__sb_puts(b, esc);
    }
    tn__sb_put(b, "\"", 1);
}

typedef struct tn__st_item { const char *name; tn_tensor *t; int64_t nbytes; } tn__st_item;
static int tn__st_cmp_items(const void *a, const void *b) {
    const tn__st_item *x = (const tn__st_item *)a, *y = (const tn__st_item *)b;
    int rx = tn__st_rank[x->t->dtype], ry = tn__st_rank[y->t->dtype];
    return rx != ry ? ry - rx : strcmp(x->name, y->name);
}

/* The padded header of d, and d's tensors in file order (*items, TN_MALLOC'd). */
static int tn__st_header(const char *fn, const tn_dict *d, tn__sbuf *hdr, tn__st_item **items_out, int *n_out) {
    int n = tn_dict_len(d);
    tn__st_item *items = (tn__st_item *)TN_MALLOC((size_t)(n ? n : 1) * sizeof *items);
    if (!items) return TN__FAIL_INT("%s: out of memory", fn);
    size_t bad;
    for (int i = 0; i < n; i++) {
        const char *name = tn_dict_key(d, i);
        tn_tensor *t = tn_dict_value(d, i);
        const char *why = !t ? "has no tensor (NULL)" : !strcmp(name, "__metadata__") ? "is reserved for the metadata"
                        : !tn__utf8_ok((const unsigned char *)name, strlen(name), &bad) ? "is not valid UTF-8" : NULL;
        if (why) { TN_FREE(items); return TN__FAIL_INT("%s: tensor name '%s' %s", fn, name, why); }
        items[i].name = name;
        items[i].t = t;
        if (!tn__mul_ok(tn_numel(t), (int64_t)tn_dtype_size(t->dtype), &items[i].nbytes)) {
            TN_FREE(items);
            return TN__FAIL_INT("%s: tensor '%s' (%s) has more bytes than int64 counts", fn, name, TN__SHAPE(t));
        }
    }
    for (int i = 0; i < tn_dict_meta_len(d); i++) {
        const char *k = tn_dict_meta_key(d, i), *v = tn__dict_meta_value(d, i);
        if (!tn__utf8_ok((const unsigned char *)k, strlen(k), &bad) || !tn__utf8_ok((const unsigned char *)v, strlen(v), &bad)) {
            TN_FREE(items);
            return TN__FAIL_INT("%s: metadata '%s' is not valid UTF-8", fn, k);
        }
    }
    qsort(items, (size_t)n, sizeof *items, tn__st_cmp_items);
    memset(hdr, 0, sizeof *hdr);
    tn__sb_puts(hdr, "{");
    if (tn_dict_meta_len(d)) {
        tn__sb_puts(hdr, "\"__metadata__\":{");
        for (int i = 0; i < tn_dict_meta_len(d); i++) {
            const char *k = tn_dict_meta_key(d, i);
            if (i) tn__sb_puts(hdr, ",");
            tn__st_json_string(hdr, k);
            tn__sb_puts(hdr, ":");
            tn__st_json_string(hdr, tn__dict_meta_value(d, i));
        }
        tn__sb_puts(hdr, n ? "}," : "}");
    }
    int64_t off = 0;
    char num[64];   /* one or two int64s and a few bytes of JSON */
    for (int i = 0; i < n; i++) {
        tn_tensor *t = items[i].t;
        int64_t end;
        if (!tn__add_ok(off, items[i].nbytes, &end)) {   /* the offsets, and below the file's size, fit an int64 */
            TN_FREE(items);
            TN_FREE(hdr->s);
            return TN__FAIL_INT("%s: the tensors' bytes add up past what int64 counts", fn);
        }
        if (i) tn__sb_puts(hdr, ",");
        tn__st_json_string(hdr, items[i].name);
        tn__sb_puts(hdr, ":{\"dtype\":\"");
        tn__sb_puts(hdr, tn__st_dtype_names[t->dtype]);
        tn__sb_puts(hdr, "\",\"shape\":[");
        for (int k = 0; k < t->ndim; k++) { snprintf(num, sizeof num, k ? ",%lld" : "%lld", (long long)t->shape[k]); tn__sb_puts(hdr, num); }
        snprintf(num, sizeof num, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)end);
        tn__sb_puts(hdr, num);
        off = end;
    }
    tn__sb_puts(hdr, "}");
    while (!hdr->failed && hdr->n % 8) tn__sb_puts(hdr, " ");  /* the data starts 8-byte aligned */
    if (hdr->failed || hdr->n > TN__ST_MAX_HEADER) {
        TN_FREE(items);
        TN_FREE(hdr->s);
        return TN__FAIL_INT("%s: %s", fn, hdr->failed ? "out of memory" : "the header would be larger than 100 MB");
    }
    *items_out = items;
    *n_out = n;
    return 0;
}

/* t's bytes, row-major on the CPU: t's own memory when contiguous, else a copy in
   *tmp (any dtype, F16/BF16 too: elements are moved as bytes). */
static void tn__st_copy_loop(char **p, const int64_t *s, int64_t n, void *ctx) {
    size_t es = *(const size_t *)ctx;
    for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], es);
}
static const void *tn__st_bytes(const char *fn, tn_tensor *t, tn_tensor **tmp) {
    *tmp = NULL;
    if (t->device == TN_CPU && tn_is_contiguous(t)) return tn_data_ptr(t);
    tn_tensor *c = tn__new(t->dtype, TN_CPU, t->shape, t->ndim);
    if (!c) return NULL;
    if (t->device == TN_CPU) {
        size_t es = tn_dtype_size(t->dtype);
        tn__iter it;
        tn__iter_init(&it, t->shape, t->ndim);
        tn__iter_add(&it, c);
        tn__iter_add(&it, t);
        tn__iter_run(&it, tn__st_copy_loop, &es);
    } else if (TN__KERNEL(fn, tn__backend(t->device)->copy(c, t))) {
        tn_release(c);
        return NULL;
    }
    *tmp = c;
    return tn_data_ptr(c);
}

TNDEF char *tn_safetensors_serialize(const tn_dict *d, size_t *size) {
    if (size) *size = 0;
    if (!d || !size) return (char *)tn__error("tn_safetensors_serialize: need a dict and a size pointer");
    tn__sbuf hdr;
    tn__st_item *items;
    int n;
    if (tn__st_header("tn_safetensors_serialize", d, &hdr, &items, &n)) return NULL;
    uint64_t total = 8 + hdr.n;
    for (int i = 0; i < n; i++) total += (uint64_t)items[i].nbytes;
    char *out = total <= (uint64_t)SIZE_MAX ? (char *)TN_MALLOC((size_t)total) : NULL;
    if (!out) tn__error("tn_safetensors_serialize: out of memory for %llu bytes", (unsigned long long)total);
    size_t at = 8;
    for (int k = 0; out && k < 8; k++) out[k] = (char)(hdr.n >> (8 * k) & 0xFF);
    if (out) memcpy(out + 8, hdr.s, hdr.n);
    at += hdr.n;
    for (int i = 0; out && i < n; i++) {
        tn_tensor *tmp;
        const void *src = tn__st_bytes("tn_safetensors_serialize", items[i].t, &tmp);
        if (!src) { TN_FREE(out); out = NULL; break; }
        if (items[i].nbytes) memcpy(out + at, src, (size_t)items[i].nbytes);
        at += (size_t)items[i].nbytes;
        tn_release(tmp);
    }
    TN_FREE(hdr.s);
    TN_FREE(items);
    if (out) *size = (size_t)total;
    return out;
}

/* The file a save writes before it replaces path. POSIX: open/write/fsync, so that the data
   is on the disk before the rename makes it the file, and every failure (a full disk
   included) is seen; elsewhere stdio. */
typedef struct tn__wfile {
#ifdef TN__HAVE_MMAP
    int fd;
#else
    FILE *f;
#endif
} tn__wfile;
static int tn__wf_create(tn__wfile *w, const char *name) {   /* 0, or an errno */
#ifdef TN__HAVE_MMAP
    int flags = O_WRONLY | O_CREAT | O_EXCL;
#ifdef O_CLOEXEC
    flags |= O_CLOEXEC;
#endif
    w->fd = open(name, flags, 0666);
    return w->fd < 0 ? errno : 0;
#else
    w->f = fopen(name, "wbx");
    return w->f ? 0 : errno ? errno : EIO;
#endif
}
static int tn__wf_write(tn__wfile *w, const void *data, size_t n) {
#ifdef TN__HAVE_MMAP
    for (const char *p = (const char *)data; n;) {
        ssize_t k = write(w->fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
#else
    return !n || fwrite(data, 1, n, w->f) == n ? 0 : errno ? errno : EIO;
#endif
}
static int tn__wf_close(tn__wfile *w, bool sync) {   /* 0, or the first errno */
#ifdef TN__HAVE_MMAP
    int err = sync && fsync(w->fd) != 0 ? errno : 0;
    if (close(w->fd) != 0 && !err) err = errno;
    return err;
#else
    (void)sync;
    return fclose(w->f) != 0 ? (errno ? errno : EIO) : 0;
#endif
}
/* Create the temporary beside path, exclusively, so that no existing file is ever truncated
   (the user's "<path>.tmp", or another save's): "<path>.tmp", else "<path>.tmp1", ... When
   that name is too long for the file system (path's name near NAME_MAX), a short one in the
   same directory, "<dir>/.tn-save.tmp<n>". *name is TN_MALLOC'd, also on failure (NULL
   only when out of memory). */
static int tn__st_create_tmp(const char *path, tn__wfile *w, char **name) {
    size_t pl = strlen(path), cap = pl + 32;
    const char *slash = strrchr(path, '/');
#ifdef _WIN32
    const char *bs = strrchr(path, '\\');
    if (bs && (!slash || bs > slash)) slash = bs;
#endif
    size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
    char *s = *name = (char *)TN_MALLOC(cap);
    if (!s) return ENOMEM;
    bool short_name = false;
    int err = 0;
    for (int k = 0; k < 100; k++) {
        if (!short_name) snprintf(s, cap, k ? "%s.tmp%d" : "%s.tmp", path, k);
        else { memcpy(s, path, dl); snprintf(s + dl, cap - dl, ".tn-save.tmp%d", k); }
        if (!(err = tn__wf_create(w, s))) return 0;
        if (err == ENAMETOOLONG && !short_name) { short_name = true; k = -1; continue; }
        if (err != EEXIST) break;
    }
    return err;
}

/* The safe save every writer goes through: the bytes go to an exclusive temporary beside
   path (tn__st_create_tmp), fsync'd, then renamed over path, so a failed save leaves an old
   file intact and never a partial one. body writes through tn__wf_write and returns 0, an
   errno (a failed write: reported here), or -1 (its own error recorded). */
static int tn__safe_save(const char *fn, const char *path, int (*body)(tn__wfile *w, void *ctx), void *ctx) {
    char *tmpname = NULL, pb[256], tb[256];   /* tn__msg_path's */
    tn__wfile w;
    int rc = 0, err = tn__st_create_tmp(path, &w, &tmpname);
    if (!tmpname) return TN__FAIL_INT("%s: out of memory", fn);
    if (err) {
        rc = TN__FAIL_INT("%s: cannot create '%s': %s", fn, tn__msg_path(tmpname, tb), strerror(err));
        TN_FREE(tmpname);
        return rc;
    }
    err = body(&w, ctx);
    if (err < 0) { rc = -1; err = 0; }
    int cerr = tn__wf_close(&w, !rc && !err);
    if (!err) err = cerr;
    if (!rc && err) rc = TN__FAIL_INT("%s: cannot write '%s': %s", fn, tn__msg_path(tmpname, tb), strerror(err));
    /* the old file is replaced only by a complete new one, and never removed: a platform
       whose rename does not replace an existing file reports the error */
    if (!rc && rename(tmpname, path) != 0) rc = TN__FAIL_INT("%s: cannot rename '%s' to '%s': %s", fn, tn__msg_path(tmpname, tb), tn__msg_path(path, pb), strerror(errno));
    if (rc) remove(tmpname);
    TN_FREE(tmpname);
    return rc;
}

typedef struct tn__st_save { tn__sbuf *hdr; tn__st_item *items; int n; } tn__st_save;
static int tn__st_save_body(tn__wfile *w, void *ctx) {
    tn__st_save *s = (tn__st_save *)ctx;
    unsigned char len8[8];
    for (int k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)s->hdr->n >> (8 * k) & 0xFF);
    int err = tn__wf_write(w, len8, 8);
    if (!err) err = tn__wf_write(w, s->hdr->s, s->hdr->n);
    for (int i = 0; !err && i < s->n; i++) {
        tn_tensor *tmp;
        const void *src = tn__st_bytes("tn_safetensors_save", s->items[i].t, &tmp);
        if (!src) return -1;
        err = tn__wf_write(w, src, (size_t)s->items[i].nbytes);
        tn_release(tmp);
    }
    return err;
}

TNDEF int tn_safetensors_save(const char *path, const tn_dict *d) {
    const char *fn = "tn_safetensors_save";
    if (!path || !d) return TN__FAIL_INT("%s: need a path and a dict", fn);
    tn__sbuf hdr;
    tn__st_save s;
    if (tn__st_header(fn, d, &hdr, &s.items, &s.n)) return -1;
    s.hdr = &hdr;
    int rc = tn__safe_save(fn, path, tn__st_save_body, &s);
    TN_FREE(hdr.s);
    TN_FREE(s.items);
    return rc;
}
