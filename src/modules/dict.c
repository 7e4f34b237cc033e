/* ---- tn_dict ---- */
/* Entries keep insertion order in arrays; a hash index (open addressing, linear probing,
   at most half full) finds a name in O(1), so building or looking up n names is O(n),
   not O(n^2) (a state dict of 200 K entries, or a hostile file of millions). Each dict
   hashes with its own seed, so names crafted to collide in one process do not in another.
   A slot keeps its name's hash: probes compare names only when the hashes match, and a
   larger table is filled without hashing the names again. */
typedef struct tn__islot { int e; uint32_t h; } tn__islot;        /* e: entry + 1, 0 empty */
typedef struct tn__index { tn__islot *slot; size_t cap; uint64_t seed; } tn__index;
struct tn_dict {
    int n, cap, nmeta, metacap;
    char **keys;
    tn_tensor **values;
    char **meta;                      /* key, value, key, value, ... */
    tn__index index, mindex;          /* over keys and over the metadata keys */
};
static char *tn__strdup(const char *s) {
    size_t len = strlen(s) + 1;
    char *c = (char *)TN_MALLOC(len);
    if (c) memcpy(c, s, len);
    return c;
}
/* a followed by b, exactly allocated (TN_MALLOC'd; NULL when out of memory) */
static char *tn__str_join(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *c = la + lb + 1 > la ? (char *)TN_MALLOC(la + lb + 1) : NULL;
    if (c) { memcpy(c, a, la); memcpy(c + la, b, lb + 1); }
    return c;
}
static uint32_t tn__hash_str(const char *s, uint64_t seed) {
    uint64_t h = 14695981039346656037ULL ^ seed;   /* FNV-1a, then splitmix64's finaliser */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    h ^= seed;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return (uint32_t)((h ^ (h >> 31)) >> 32);
}
/* The entry named key (name i at names[i * stride]), or -1. */
static int tn__index_find(const tn__index *x, char *const *names, int stride, const char *key) {
    if (!x->cap || !key) return -1;
    uint32_t h = tn__hash_str(key, x->seed);
    for (size_t at = h & (x->cap - 1);; at = (at + 1) & (x->cap - 1)) {
        const tn__islot *sl = &x->slot[at];
        if (!sl->e) return -1;
        if (sl->h == h && !strcmp(names[(size_t)(sl->e - 1) * (size_t)stride], key)) return sl->e - 1;
    }
}
static void tn__index_put(tn__index *x, uint32_t h, int entry) {  /* a name not in x; room checked */
    size_t at = h & (x->cap - 1);
    while (x->slot[at].e) at = (at + 1) & (x->cap - 1);
    x->slot[at].e = entry + 1;
    x->slot[at].h = h;
}
/* Room for n entries: a larger table when needed, refilled from the old one; with rebuild
   (after a removal moved the entries), refilled from the first n names instead. */
static int tn__index_reserve(tn__index *x, char *const *names, int stride, int n, bool rebuild) {
    size_t cap = x->cap ? x->cap : 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    tn__islot *old = x->slot;
    size_t oldcap = x->cap;
    if (cap != x->cap) {
        tn__islot *sl = (tn__islot *)TN_MALLOC(cap * sizeof *sl);
        if (!sl) return -1;
        x->slot = sl;
        x->cap = cap;
    } else if (!rebuild) return 0;
    memset(x->slot, 0, x->cap * sizeof *x->slot);
    if (rebuild)
        for (int i = 0; i < n; i++) tn__index_put(x, tn__hash_str(names[(size_t)i * (size_t)stride], x->seed), i);
    else
        for (size_t i = 0; i < oldcap; i++) if (old[i].e) tn__index_put(x, old[i].h, old[i].e - 1);
    if (old != x->slot) TN_FREE(old);
    return 0;
}
TNDEF tn_dict *tn_dict_new(void) {
    static int64_t made;
    tn_dict *d = (tn_dict *)TN_MALLOC(sizeof *d);
    if (!d) return (tn_dict *)tn__error("tn_dict_new: out of memory");
    memset(d, 0, sizeof *d);
    /* the seed: the addresses of this dict and of a static (both randomised by ASLR), and a count */
    uint64_t seed = (uint64_t)(uintptr_t)d ^ ((uint64_t)TN__ATOMIC_ADD(&made, 1) << 40) ^ (uint64_t)(uintptr_t)&made * 0x9E3779B97F4A7C15ULL;
    d->index.seed = seed;
    d->mindex.seed = ~seed;
    return d;
}
TNDEF void tn_dict_free(tn_dict *d) {
    if (!d) return;
    for (int i = 0; i < d->n; i++) { TN_FREE(d->keys[i]); tn_release(d->values[i]); }
    for (int i = 0; i < 2 * d->nmeta; i++) TN_FREE(d->meta[i]);
    TN_FREE(d->keys);
    TN_FREE(d->values);
    TN_FREE(d->meta);
    TN_FREE(d->index.slot);
    TN_FREE(d->mindex.slot);
    TN_FREE(d);
}
static int tn__dict_find(const tn_dict *d, const char *key) { return d ? tn__index_find(&d->index, d->keys, 1, key) : -1; }
static int tn__dict_find_meta(const tn_dict *d, const char *key) { return d ? tn__index_find(&d->mindex, d->meta, 2, key) : -1; }
/* tn_dict_set and tn_dict_set_meta for names known to be new (checked for duplicates):
   no lookup. The dict takes key (and value). */
static int tn__dict_append(tn_dict *d, char *key, tn_tensor *t) {
    if (d->n == INT_MAX) return TN__FAIL_INT("tn_dict_set: a dict holds at most %d entries", INT_MAX);
    if (d->n == d->cap) {
        int cap = d->cap ? (d->cap > INT_MAX / 2 ? INT_MAX : 2 * d->cap) : 16;
        char **k = (char **)TN_REALLOC(d->keys, (size_t)cap * sizeof *k);
        if (k) d->keys = k;
        tn_tensor **v = k ? (tn_tensor **)TN_REALLOC(d->values, (size_t)cap * sizeof *v) : NULL;
        if (!v) return TN__FAIL_INT("tn_dict_set: out of memory");
        d->values = v;
        d->cap = cap;
    }
    if (tn__index_reserve(&d->index, d->keys, 1, d->n + 1, false)) return TN__FAIL_INT("tn_dict_set: out of memory");
    tn__index_put(&d->index, tn__hash_str(key, d->index.seed), d->n);
    d->keys[d->n] = key;
    d->values[d->n++] = t ? tn_retain(t) : NULL;
    return 0;
}
static int tn__dict_append_meta(tn_dict *d, char *key, char *value) {
    if (d->nmeta == INT_MAX / 2) return TN__FAIL_INT("tn_dict_set_meta: a dict holds at most %d metadata entries", INT_MAX / 2);
    if (d->nmeta == d->metacap) {
        int cap = d->metacap ? (d->metacap > INT_MAX / 4 ? INT_MAX / 2 : 2 * d->metacap) : 8;
        char **m = (char **)TN_REALLOC(d->meta, (size_t)cap * 2 * sizeof *m);
        if (!m) return TN__FAIL_INT("tn_dict_set_meta: out of memory");
        d->meta = m;
        d->metacap = cap;
    }
    if (tn__index_reserve(&d->mindex, d->meta, 2, d->nmeta + 1, false)) return TN__FAIL_INT("tn_dict_set_meta: out of memory");
    tn__index_put(&d->mindex, tn__hash_str(key, d->mindex.seed), d->nmeta);
    d->meta[2 * d->nmeta] = key;
    d->meta[2 * d->nmeta++ + 1] = value;
    return 0;
}

TNDEF int tn_dict_set(tn_dict *d, const char *key, tn_tensor *t) {
    if (!d || !key) return TN__FAIL_INT("tn_dict_set: need a dict and a key");
    int i = tn__dict_find(d, key);
    if (i >= 0) {
        tn_tensor *old = d->values[i];
        d->values[i] = t ? tn_retain(t) : NULL;
        tn_release(old);              /* after: t may be the old value's only owner's */
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
    tn__index_reserve(&d->index, d->keys, 1, d->n, true);   /* the entries after i moved: O(n), as the memmove (cannot fail: no larger table) */
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
    int i = tn__dict_find_meta(d, key);
    if (i >= 0) { TN_FREE(d->meta[2 * i + 1]); d->meta[2 * i + 1] = v; return 0; }
    char *k = tn__strdup(key);
    if (!k || tn__dict_append_meta(d, k, v)) { TN_FREE(k); TN_FREE(v); return k ? -1 : TN__FAIL_INT("tn_dict_set_meta: out of memory"); }
    return 0;
}
TNDEF const char *tn_dict_get_meta(const tn_dict *d, const char *key) {
    int i = tn__dict_find_meta(d, key);
    return i < 0 ? NULL : d->meta[2 * i + 1];
}
TNDEF int tn_dict_meta_len(const tn_dict *d) { return d ? d->nmeta : 0; }
TNDEF const char *tn_dict_meta_key(const tn_dict *d, int i) { return d && i >= 0 && i < d->nmeta ? d->meta[2 * i] : NULL; }
/* The value of metadata entry i (no lookup, for walking all of them). */
static const char *tn__dict_meta_value(const tn_dict *d, int i) { return d && i >= 0 && i < d->nmeta ? d->meta[2 * i + 1] : NULL; }
