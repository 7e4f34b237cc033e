/* ---- keyword arguments as text: "padding=1, bias=False, padding_mode='zeros'" ----
   The _str functions fill their options struct from PyTorch's keyword syntax through the
   struct's key table, made from the same TN_FIELDS_<struct> list as the struct itself:
       #define TN__KW_T tn_conv_opts
       static const tn__kwkey tn__kw_conv[] = {TN_FIELDS_tn_conv_opts(TN__KW_ROW)};
       #undef TN__KW_T
   Values: numbers (inf, -inf, nan), True/False, None, words (quotes optional), tuples
   "(a, b)". Nothing is copied into fixed buffers: any length parses or is refused. */
typedef struct tn__kwkey { const char *name; char type; size_t off; const char *words; } tn__kwkey;
#define TN__KW_TYPE_I 'I'
#define TN__KW_TYPE_D 'D'
#define TN__KW_TYPE_B 'B'
#define TN__KW_TYPE_E 'E'
#define TN__KW_TYPE_P 'P'
#define TN__KW_TYPE_I2 'J'
#define TN__KW_ROW(type, name, def, words) {#name, TN__KW_TYPE_##type, offsetof(TN__KW_T, name), words},
#define TN__KW_N(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* a slice of the option text */
typedef struct tn__kwspan { const char *p; size_t n; } tn__kwspan;
static bool tn__kw_is(tn__kwspan v, const char *word) { return strlen(word) == v.n && !memcmp(v.p, word, v.n); }
static tn__kwspan tn__kw_unquote(tn__kwspan v) {
    if (v.n >= 2 && (v.p[0] == '\'' || v.p[0] == '"') && v.p[v.n - 1] == v.p[0]) { v.p++; v.n -= 2; }
    return v;
}
/* One number of v at *pos (advanced past it and a following comma); 1, 0 at the end of v,
   -1 when there is text that is not a number. */
static int tn__kw_number(tn__kwspan v, size_t *pos, double *x) {
    size_t i = *pos;
    while (i < v.n && v.p[i] == ' ') i++;
    if (i == v.n) { *pos = i; return 0; }
    tn__kwspan w = {v.p + i, 0};
    while (i + w.n < v.n && v.p[i + w.n] != ',' && v.p[i + w.n] != ' ') w.n++;
    if (tn__kw_is(w, "True") || tn__kw_is(w, "true")) *x = 1;
    else if (tn__kw_is(w, "False") || tn__kw_is(w, "false")) *x = 0;
    else if (tn__kw_is(w, "inf")) *x = HUGE_VAL;
    else if (tn__kw_is(w, "-inf")) *x = -HUGE_VAL;
    else if (tn__kw_is(w, "nan")) *x = NAN;
    else {
        char *end;
        *x = strtod(w.p, &end);   /* stops at the comma, bracket or space after the number */
        if (end != w.p + w.n) return -1;
    }
    i += w.n;
    while (i < v.n && v.p[i] == ' ') i++;
    if (i < v.n && v.p[i] == ',') i++;
    *pos = i;
    return 1;
}
/* A value's numbers: a number, or a tuple "(a, b, ...)" / "[a, b]" of up to max. How many. */
static int tn__kw_numbers(const char *fn, const char *key, tn__kwspan v, double *out, int max, bool *tuple) {
    *tuple = v.n >= 2 && ((v.p[0] == '(' && v.p[v.n - 1] == ')') || (v.p[0] == '[' && v.p[v.n - 1] == ']'));
    tn__kwspan in = *tuple ? (tn__kwspan){v.p + 1, v.n - 2} : v;
    size_t pos = 0;
    int n = 0, r;
    double x;
    while ((r = tn__kw_number(in, &pos, &x)) == 1) {
        if (n == max) return TN__FAIL_INT("%s: option %s=%.*s: expected at most %d value%s", fn, key, (int)v.n, v.p, max, max > 1 ? "s" : "");
        out[n++] = x;
    }
    if (r < 0 || n == 0) return TN__FAIL_INT("%s: option %s=%.*s is not a number%s", fn, key, (int)v.n, v.p, max > 1 ? " or a tuple of numbers" : "");
    return n;
}
/* A double as an int64_t option: integral and in range (never an undefined conversion). */
static int tn__kw_int(const char *fn, const char *key, double x, int64_t *out) {
    if (!(x == floor(x) && fabs(x) < 9.2e18)) return TN__FAIL_INT("%s: option %s=%g: expected an integer", fn, key, x);
    *out = (int64_t)x;
    return 0;
}
static int tn__kw_find(const tn__kwkey *keys, int nkeys, tn__kwspan k, const char *suffix) {
    size_t sl = strlen(suffix);
    for (int i = 0; i < nkeys; i++)
        if (strlen(keys[i].name) == k.n + sl && !memcmp(keys[i].name, k.p, k.n) && !strcmp(keys[i].name + k.n, suffix)) return i;
    return -1;
}
/* The valid names of a table, for messages: "stride, padding, ..." (owned by the caller). */
static char *tn__kw_names(const tn__kwkey *keys, int nkeys) {
    size_t len = 1;
    for (int i = 0; i < nkeys; i++) len += strlen(keys[i].name) + 2;
    char *s = (char *)TN_MALLOC(len), *q = s;
    if (!s) return NULL;
    for (int i = 0; i < nkeys; i++) {
        size_t l = strlen(keys[i].name);
        if (keys[i].type == 'J' && l > 3 && !strcmp(keys[i].name + l - 3, "_hw")) {   /* the pair: under its int's name */
            if (tn__kw_find(keys, nkeys, (tn__kwspan){keys[i].name, l - 3}, "") >= 0) continue;
            l -= 3;
        }
        if (q != s) { memcpy(q, ", ", 2); q += 2; }
        memcpy(q, keys[i].name, l);
        q += l;
    }
    *q = 0;
    return s;
}
static int tn__kw_set(const char *fn, const tn__kwkey *key, tn__kwspan k, tn__kwspan v, void *out) {
    char *f = (char *)out + key->off;
    char name[64];   /* the name as typed, for messages (cut, never overflowed) */
    snprintf(name, sizeof name, "%.*s", (int)(k.n < 63 ? k.n : 63), k.p);
    double x[2];
    bool tuple;
    int n;
    switch (key->type) {
    case 'B':
        if (tn__kw_is(v, "True") || tn__kw_is(v, "true") || tn__kw_is(v, "1")) *(bool *)f = true;
        else if (tn__kw_is(v, "False") || tn__kw_is(v, "false") || tn__kw_is(v, "0")) *(bool *)f = false;
        else return TN__FAIL_INT("%s: option %s=%.*s: expected True or False", fn, name, (int)v.n, v.p);
        return 0;
    case 'E': case 'P': {
        tn__kwspan w = tn__kw_unquote(v);
        if (key->type == 'P' && (tn__kw_is(w, "same") || tn__kw_is(w, "valid"))) {
            *(int64_t *)f = tn__kw_is(w, "same") ? TN_PADDING_SAME : TN_PADDING_VALID;
            return 0;
        }
        if (key->type == 'P' && (w.n != v.n || (w.n && ((w.p[0] | 32) >= 'a' && (w.p[0] | 32) <= 'z'))))
            return TN__FAIL_INT("%s: option %s=%.*s: expected an int, a tuple, 'same' or 'valid'", fn, name, (int)v.n, v.p);
        if (key->type == 'P') break;
        int idx = 0;
        for (const char *c = key->words; *c; idx++) {
            const char *e = strchr(c, '|');
            size_t cl = e ? (size_t)(e - c) : strlen(c);
            if (cl == w.n && !memcmp(c, w.p, cl)) { *(int *)f = idx; return 0; }
            if (!e) break;
            c = e + 1;
        }
        return TN__FAIL_INT("%s: option %s='%.*s': expected one of %s", fn, name, (int)w.n, w.p, key->words);
    }
    case 'D':
        if (tn__kw_is(v, "None")) { *(double *)f = NAN; return 0; }
        if (tn__kw_numbers(fn, name, v, x, 1, &tuple) < 0) return -1;
        *(double *)f = x[0];
        return 0;
    case 'J':
        if ((n = tn__kw_numbers(fn, name, v, x, 2, &tuple)) < 0) return -1;
        if (n == 1) x[1] = x[0];
        return tn__kw_int(fn, name, x[0], (int64_t *)f) || tn__kw_int(fn, name, x[1], (int64_t *)f + 1) ? -1 : 0;
    default: break;
    }
    /* I, and P given a number */
    if (tn__kw_is(v, "None")) { *(int64_t *)f = TN_NONE; return 0; }
    if (tn__kw_numbers(fn, name, v, x, 1, &tuple) < 0 || tn__kw_int(fn, name, x[0], (int64_t *)f)) return -1;
    if (key->type == 'P' && x[0] < 0) return TN__FAIL_INT("%s: option %s=%.*s: padding must be non-negative", fn, name, (int)v.n, v.p);
    return 0;
}
/* Fills *out (holding the defaults) from text, through keys. 0, or -1 with an error. */
static int tn__kw_parse(const char *fn, const char *text, const tn__kwkey *keys, int nkeys, void *out) {
    uint64_t seen = 0;   /* tables have at most 64 rows */
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        tn__kwspan k = {p, 0};
        while (p[k.n] && p[k.n] != '=' && p[k.n] != ',') k.n++;
        if (p[k.n] != '=') return TN__FAIL_INT("%s: option text \"%s\": expected name=value", fn, text);
        p += k.n + 1;
        while (k.n && k.p[k.n - 1] == ' ') k.n--;
        while (*p == ' ') p++;
        tn__kwspan v = {p, 0};
        int depth = 0;
        char quote = 0;              /* commas inside quotes or brackets belong to the value */
        for (; p[v.n] && (depth || quote || p[v.n] != ','); v.n++) {
            const char c = p[v.n];
            if (quote) { if (c == quote) quote = 0; }
            else if (c == '\'' || c == '"') quote = c;
            else if (c == '(' || c == '[') depth++;
            else if (c == ')' || c == ']') depth--;
        }
        p += v.n;
        while (v.n && v.p[v.n - 1] == ' ') v.n--;
        if (!k.n || !v.n) return TN__FAIL_INT("%s: option text \"%s\": expected name=value", fn, text);
        /* "stride=(2, 1)" sets stride_hw; a name only the _hw form has takes ints too */
        const bool tuple = v.p[0] == '(' || v.p[0] == '[';
        int i = tn__kw_find(keys, nkeys, k, "");
        if ((i < 0 || (tuple && keys[i].type != 'J')) && tn__kw_find(keys, nkeys, k, "_hw") >= 0) i = tn__kw_find(keys, nkeys, k, "_hw");
        if (i < 0) {
            char *names = tn__kw_names(keys, nkeys);
            int r = TN__FAIL_INT("%s: unknown option '%.*s' (valid: %s)", fn, (int)k.n, k.p, names ? names : "?");
            TN_FREE(names);
            return r;
        }
        if (seen >> i & 1) return TN__FAIL_INT("%s: option '%.*s' given twice", fn, (int)k.n, k.p);
        seen |= (uint64_t)1 << i;
        if (tn__kw_set(fn, &keys[i], k, v, out)) return -1;
    }
    return 0;
}

/* ---- options text: "lr=0.01, betas=(0.9, 0.999), nesterov=True, padding='same'" ----
   Modules, optimizers, schedulers and loaders take their keyword arguments as text with
   PyTorch's names, so C reads like Python and an unknown or misspelt name is an error. */
#define TN__MAX_OPTS 24
typedef struct tn__opts {
    const char *fn;                   /* the public function, for messages */
    int n;
    char key[TN__MAX_OPTS][32];
    char val[TN__MAX_OPTS][96];
    bool used[TN__MAX_OPTS];
} tn__opts;
static int tn__opts_parse(const char *fn, const char *text, tn__opts *o) {
    memset(o, 0, sizeof *o);
    o->fn = fn;
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        const char *k = p;
        while (*p && *p != '=' && *p != ',') p++;
        if (*p != '=') return TN__FAIL_INT("%s: option text \"%s\": expected name=value", fn, text);
        size_t kl = (size_t)(p - k);
        while (kl && k[kl - 1] == ' ') kl--;
        p++;
        while (*p == ' ') p++;
        const char *v = p;
        int depth = 0;
        char quote = 0;          /* commas inside quotes or brackets belong to the value */
        for (; *p && (depth || quote || *p != ','); p++) {
            if (quote) { if (*p == quote) quote = 0; }
            else if (*p == '\'' || *p == '"') quote = *p;
            else if (*p == '(' || *p == '[') depth++;
            else if (*p == ')' || *p == ']') depth--;
        }
        size_t vl = (size_t)(p - v);
        while (vl && v[vl - 1] == ' ') vl--;
        if (o->n == TN__MAX_OPTS || !kl || kl >= sizeof o->key[0] || vl >= sizeof o->val[0])
            return TN__FAIL_INT("%s: option text \"%s\" is malformed or too long", fn, text);
        for (int i = 0; i < o->n; i++)
            if (strlen(o->key[i]) == kl && !memcmp(o->key[i], k, kl)) return TN__FAIL_INT("%s: option '%s' given twice", fn, o->key[i]);
        memcpy(o->key[o->n], k, kl);
        memcpy(o->val[o->n], v, vl);
        o->n++;
    }
    return 0;
}
static int tn__opts_find(tn__opts *o, const char *key) {
    for (int i = 0; i < o->n; i++) if (!strcmp(o->key[i], key)) { o->used[i] = true; return i; }
    return -1;
}
/* Numbers: a value or a tuple "(a, b)" of up to max; a single value fills all max slots.
   Returns how many were given (0: absent or None, out untouched), or -1 with an error. */
static int tn__opts_num(tn__opts *o, const char *key, double *out, int max) {
    int i = tn__opts_find(o, key);
    if (i < 0 || !strcmp(o->val[i], "None")) return 0;
    const char *p = o->val[i];
    bool tuple = *p == '(' || *p == '[';
    if (tuple) p++;
    double tmp[8] = {0};
    int n = 0;
    for (;;) {
        while (*p == ' ') p++;
        if (tuple && (*p == ')' || *p == ']')) break;
        char *end;
        double x;
        if (!strncmp(p, "True", 4) || !strncmp(p, "true", 4)) { x = 1; end = (char *)p + 4; }
        else if (!strncmp(p, "False", 5) || !strncmp(p, "false", 5)) { x = 0; end = (char *)p + 5; }
        else if (!strncmp(p, "inf", 3)) { x = HUGE_VAL; end = (char *)p + 3; }
        else if (!strncmp(p, "-inf", 4)) { x = -HUGE_VAL; end = (char *)p + 4; }
        else x = strtod(p, &end);
        if (end == p || n == max || n == 8)
            return TN__FAIL_INT("%s: option %s=%s: expected %s%d number%s", o->fn, key, o->val[i], max > 1 ? "up to " : "", max, max > 1 ? "s" : "");
        tmp[n++] = x;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') { p++; continue; }
        if (tuple && (*p == ')' || *p == ']')) break;
        if (!tuple && !*p) break;
        return TN__FAIL_INT("%s: option %s=%s is not a number", o->fn, key, o->val[i]);
    }
    if (n == 0) return TN__FAIL_INT("%s: option %s=%s is empty", o->fn, key, o->val[i]);
    const int last = n >= 1 && n <= 8 ? n - 1 : 0;   /* n is 1..8 here; spelt out for -Warray-bounds */
    for (int k = 0; k < max; k++) out[k] = tmp[n == 1 ? 0 : k < n && k < 8 ? k : last];
    return n;
}
static int tn__opts_int(tn__opts *o, const char *key, int64_t *out, int max) {
    double v[8];
    int n = tn__opts_num(o, key, v, max);
    for (int k = 0; k < max && n > 0; k++) {
        if (v[k] != floor(v[k]) || fabs(v[k]) > 9e15) return TN__FAIL_INT("%s: option %s needs integers", o->fn, key);
        out[k] = (int64_t)v[k];
    }
    return n;
}
static int tn__opts_bool(tn__opts *o, const char *key, bool *out) {
    int i = tn__opts_find(o, key);
    if (i < 0) return 0;
    const char *v = o->val[i];
    if (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "1")) *out = true;
    else if (!strcmp(v, "False") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "None")) *out = false;
    else return TN__FAIL_INT("%s: option %s=%s: expected True or False", o->fn, key, v);
    return 1;
}
/* A word among choices ("zeros|reflect|replicate|circular"), quotes optional; returns its
   index, or -2 when absent (out untouched), or -1 with an error. */
static int tn__opts_word(tn__opts *o, const char *key, const char *choices) {
    int i = tn__opts_find(o, key);
    if (i < 0) return -2;
    char w[96];
    const char *v = o->val[i];
    size_t l = strlen(v);
    if (l >= 2 && (v[0] == '\'' || v[0] == '"') && v[l - 1] == v[0]) { v++; l -= 2; }
    memcpy(w, v, l);
    w[l] = 0;
    int idx = 0;
    for (const char *c = choices; *c; idx++) {
        const char *e = strchr(c, '|');
        size_t cl = e ? (size_t)(e - c) : strlen(c);
        if (cl == l && !memcmp(c, w, l)) return idx;
        if (!e) break;
        c = e + 1;
    }
    return TN__FAIL_INT("%s: option %s='%s': expected one of %s", o->fn, key, w, choices);
}
/* Every option given must have been read: names are checked against the valid list. */
static int tn__opts_done(tn__opts *o, const char *valid) {
    for (int i = 0; i < o->n; i++)
        if (!o->used[i]) return TN__FAIL_INT("%s: unknown option '%s' (valid: %s)", o->fn, o->key[i], valid);
    return 0;
}
