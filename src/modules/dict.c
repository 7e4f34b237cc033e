/* ---- tn_dict ---- */
struct tn_dict {
    int n, cap, nmeta, metacap;
    char **keys;
    tn_tensor **values;
    char **meta;                      /* key, value, key, value, ... */
};
static char *tn__strdup(const char *s) {
    size_t len = strlen(s) + 1;
    char *c = (char *)TN_MALLOC(len);
    if (c) memcpy(c, s, len);
    return c;
}
TNDEF tn_dict *tn_dict_new(void) {
    tn_dict *d = (tn_dict *)TN_MALLOC(sizeof *d);
    if (!d) return (tn_dict *)tn__error("tn_dict_new: out of memory");
    memset(d, 0, sizeof *d);
    return d;
}
TNDEF void tn_dict_free(tn_dict *d) {
    if (!d) return;
    for (int i = 0; i < d->n; i++) { TN_FREE(d->keys[i]); tn_release(d->values[i]); }
    for (int i = 0; i < 2 * d->nmeta; i++) TN_FREE(d->meta[i]);
    TN_FREE(d->keys);
    TN_FREE(d->values);
    TN_FREE(d->meta);
    TN_FREE(d);
}
static int tn__dict_find(const tn_dict *d, const char *key) {
    for (int i = 0; d && key && i < d->n; i++) if (!strcmp(d->keys[i], key)) return i;
    return -1;
}
/* tn_dict_set and tn_dict_set_meta for names known to be new (checked for duplicates):
   no lookup, so a dict of n entries is built in linear time, not quadratic (which a
   hostile header with millions of entries could exploit). The dict takes key (and value). */
static int tn__dict_append(tn_dict *d, char *key, tn_tensor *t) {
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        char **k = (char **)TN_REALLOC(d->keys, (size_t)cap * sizeof *k);
        if (k) d->keys = k;
        tn_tensor **v = k ? (tn_tensor **)TN_REALLOC(d->values, (size_t)cap * sizeof *v) : NULL;
        if (!v) return TN__FAIL_INT("tn_dict_set: out of memory");
        d->values = v;
        d->cap = cap;
    }
    d->keys[d->n] = key;
    d->values[d->n++] = t ? tn_retain(t) : NULL;
    return 0;
}
static int tn__dict_append_meta(tn_dict *d, char *key, char *value) {
    if (d->nmeta == d->metacap) {
        int cap = d->metacap ? 2 * d->metacap : 8;
        char **m = (char **)TN_REALLOC(d->meta, (size_t)cap * 2 * sizeof *m);
        if (!m) return TN__FAIL_INT("tn_dict_set_meta: out of memory");
        d->meta = m;
        d->metacap = cap;
    }
    d->meta[2 * d->nmeta] = key;
    d->meta[2 * d->nmeta++ + 1] = value;
    return 0;
}

TNDEF int tn_dict_set(tn_dict *d, const char *key, tn_tensor *t) {
    if (!d || !key) return TN__FAIL_INT("tn_dict_set: need a dict and a key");
    int i = tn__dict_find(d, key);
    if (i >= 0) {
        tn_release(d->values[i]);
        d->values[i] = t ? tn_retain(t) : NULL;
        return 0;
    }
    char *c = tn__strdup(key);
    if (!c) return TN__FAIL_INT("tn_dict_set: out of memory");
    if (tn__dict_append(d, c, t)) { TN_FREE(c); return -1; }
    return 0;
}
TNDEF tn_tensor *tn_dict_get(const tn_dict *d, const char *key) {
    int i = tn__dict_find(d, key);
    return i < 0 ? NULL : d->values[i];
}
TNDEF bool tn_dict_contains(const tn_dict *d, const char *key) { return tn__dict_find(d, key) >= 0; }
TNDEF int tn_dict_remove(tn_dict *d, const char *key) {
    int i = tn__dict_find(d, key);
    if (i < 0) return -1;
    TN_FREE(d->keys[i]);
    tn_release(d->values[i]);
    memmove(d->keys + i, d->keys + i + 1, (size_t)(d->n - i - 1) * sizeof *d->keys);
    memmove(d->values + i, d->values + i + 1, (size_t)(d->n - i - 1) * sizeof *d->values);
    d->n--;
    return 0;
}
TNDEF int tn_dict_len(const tn_dict *d) { return d ? d->n : 0; }
TNDEF const char *tn_dict_key(const tn_dict *d, int i) { return d && i >= 0 && i < d->n ? d->keys[i] : NULL; }
TNDEF tn_tensor *tn_dict_value(const tn_dict *d, int i) { return d && i >= 0 && i < d->n ? d->values[i] : NULL; }
TNDEF tn_tensor *const *tn_dict_values(const tn_dict *d) { return d ? d->values : NULL; }
TNDEF int tn_dict_set_meta(tn_dict *d, const char *key, const char *value) {
    if (!d || !key || !value) return TN__FAIL_INT("tn_dict_set_meta: need a dict, a key and a value");
    char *v = tn__strdup(value);
    if (!v) return TN__FAIL_INT("tn_dict_set_meta: out of memory");
    for (int i = 0; i < d->nmeta; i++)
        if (!strcmp(d->meta[2 * i], key)) { TN_FREE(d->meta[2 * i + 1]); d->meta[2 * i + 1] = v; return 0; }
    char *k = tn__strdup(key);
    if (!k || tn__dict_append_meta(d, k, v)) { TN_FREE(k); TN_FREE(v); return k ? -1 : TN__FAIL_INT("tn_dict_set_meta: out of memory"); }
    return 0;
}
TNDEF const char *tn_dict_get_meta(const tn_dict *d, const char *key) {
    for (int i = 0; d && key && i < d->nmeta; i++) if (!strcmp(d->meta[2 * i], key)) return d->meta[2 * i + 1];
    return NULL;
}
TNDEF int tn_dict_meta_len(const tn_dict *d) { return d ? d->nmeta : 0; }
TNDEF const char *tn_dict_meta_key(const tn_dict *d, int i) { return d && i >= 0 && i < d->nmeta ? d->meta[2 * i] : NULL; }
