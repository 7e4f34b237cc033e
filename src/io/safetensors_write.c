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
        items[i].nbytes = tn_numel(t) * (int64_t)tn_dtype_size(t->dtype);
    }
    for (int i = 0; i < tn_dict_meta_len(d); i++) {
        const char *k = tn_dict_meta_key(d, i), *v = tn_dict_get_meta(d, k);
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
            tn__st_json_string(hdr, tn_dict_get_meta(d, k));
        }
        tn__sb_puts(hdr, n ? "}," : "}");
    }
    int64_t off = 0;
    char num[64];
    for (int i = 0; i < n; i++) {
        tn_tensor *t = items[i].t;
        if (i) tn__sb_puts(hdr, ",");
        tn__st_json_string(hdr, items[i].name);
        tn__sb_puts(hdr, ":{\"dtype\":\"");
        tn__sb_puts(hdr, tn__st_dtype_names[t->dtype]);
        tn__sb_puts(hdr, "\",\"shape\":[");
        for (int k = 0; k < t->ndim; k++) { snprintf(num, sizeof num, k ? ",%lld" : "%lld", (long long)t->shape[k]); tn__sb_puts(hdr, num); }
        snprintf(num, sizeof num, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)(off + items[i].nbytes));
        tn__sb_puts(hdr, num);
        off += items[i].nbytes;
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

TNDEF int tn_safetensors_save(const char *path, const tn_dict *d) {
    if (!path || !d) return TN__FAIL_INT("tn_safetensors_save: need a path and a dict");
    tn__sbuf hdr;
    tn__st_item *items;
    int n;
    if (tn__st_header("tn_safetensors_save", d, &hdr, &items, &n)) return -1;
    size_t pl = strlen(path);
    char *tmpname = (char *)TN_MALLOC(pl + 16);
    FILE *f = NULL;
    int rc = 0;
    if (!tmpname) rc = TN__FAIL_INT("tn_safetensors_save: out of memory");
    else {
        snprintf(tmpname, pl + 16, "%s.tmp", path);
        f = fopen(tmpname, "wb");
        if (!f) rc = TN__FAIL_INT("tn_safetensors_save: cannot create '%s': %s", tmpname, strerror(errno));
    }
    unsigned char len8[8];
    for (int k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)hdr.n >> (8 * k) & 0xFF);
    bool io_ok = f && fwrite(len8, 1, 8, f) == 8 && fwrite(hdr.s, 1, hdr.n, f) == hdr.n;
    for (int i = 0; f && io_ok && i < n; i++) {
        tn_tensor *tmp;
        const void *src = tn__st_bytes("tn_safetensors_save", items[i].t, &tmp);
        if (!src) { rc = -1; break; }
        io_ok = !items[i].nbytes || fwrite(src, 1, (size_t)items[i].nbytes, f) == (size_t)items[i].nbytes;
        tn_release(tmp);
    }
    if (f) {
        int err = errno;
        if (fclose(f) != 0 && io_ok) { io_ok = false; err = errno; }
        if (!rc && !io_ok) rc = TN__FAIL_INT("tn_safetensors_save: cannot write '%s': %s", tmpname, strerror(err));
        if (!rc && rename(tmpname, path) != 0) {
            remove(path);  /* platforms whose rename does not replace */
            if (rename(tmpname, path) != 0) rc = TN__FAIL_INT("tn_safetensors_save: cannot rename '%s' to '%s': %s", tmpname, path, strerror(errno));
        }
        if (rc) remove(tmpname);
    }
    TN_FREE(tmpname);
    TN_FREE(hdr.s);
    TN_FREE(items);
    return rc;
}
