/* ---- keyword arguments as text: "padding=1, bias=False, padding_mode='zeros'" ----
   The _str functions fill their options struct from PyTorch's keyword syntax through the
   struct's key table, made from the same TN_FIELDS_<struct> list as the struct itself:
       #define TN__KW_T tn_conv_opts
       static const tn__kwkey tn__kw_conv[] = {TN_FIELDS_tn_conv_opts(TN__KW_ROW)};
       #undef TN__KW_T
   Values: numbers (inf, -inf, nan), True/False, None, words and strings (quotes optional for
   words), tuples "(a, b)" / lists "[a, b]". Nothing is copied into fixed buffers: any length
   parses or is refused (an S value is a copy the caller frees with tn__kw_release). */
typedef struct tn__kwkey { const char *name; char type; size_t off; const char *words; } tn__kwkey;
#define TN__KW_TYPE_I 'I'
#define TN__KW_TYPE_D 'D'
#define TN__KW_TYPE_B 'B'
#define TN__KW_TYPE_OB 'O'
#define TN__KW_TYPE_E 'E'
#define TN__KW_TYPE_P 'P'
#define TN__KW_TYPE_I2 'J'
#define TN__KW_TYPE_D2 'K'
#define TN__KW_TYPE_S 'S'
#define TN__KW_TYPE_T 'T'
#define TN__KW_TYPE_MOD 'N'
#define TN__KW_TYPE_GEN 'G'
#define TN__KW_TYPE_IL 'L'
#define TN__KW_TYPE_DL 'M'
#define TN__KW_ROW(type, name, def, words) {#name, TN__KW_TYPE_##type, offsetof(TN__KW_T, name), words},
#define TN__KW_N(table) ((int)(sizeof(table) / sizeof((table)[0])))
#define TN__KW_MAXKEYS 64   /* a table's rows (the parser's "given" mask has a bit each) */
static bool tn__kw_tuple_type(char t) { return t == 'J' || t == 'K' || t == 'L' || t == 'M'; }

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
/* An integer literal read exactly, over int64's whole range (a double holds 53 bits): so
   "correction=-9223372036854775808" is the value the struct form would take. */
static bool tn__kw_int_literal(tn__kwspan v, int64_t *out) {
    const bool neg = v.n && v.p[0] == '-';
    if ((size_t)neg == v.n) return false;
    uint64_t u = 0;
    for (size_t j = neg; j < v.n; j++) {
        if (v.p[j] < '0' || v.p[j] > '9') return false;
        const unsigned d = (unsigned)(v.p[j] - '0');
        if (u > (UINT64_MAX - d) / 10) return false;   /* out of range: the double path's message */
        u = u * 10 + d;
    }
    if (u > (uint64_t)INT64_MAX + neg) return false;
    *out = !neg ? (int64_t)u : u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    return true;
}
/* A double as an int64_t option: integral and in range (never an undefined conversion). */
static int tn__kw_int(const char *fn, const char *key, double x, int64_t *out) {
    if (!(x == floor(x) && fabs(x) < 9.2e18)) return TN__FAIL_INT("%s: option %s=%g: expected an integer", fn, key, x);
    *out = (int64_t)x;
    return 0;
}
static int tn__kw_find(const tn__kwkey *keys, int nkeys, tn__kwspan k, const char *suffix) {
    const size_t sl = strlen(suffix);
    for (int i = 0; i < nkeys; i++) {
        const char *name = keys[i].name;
        const size_t l = strlen(name);
        if (l < sl || l - sl != k.n) continue;
        if (!memcmp(name, k.p, k.n) && !memcmp(name + (l - sl), suffix, sl)) return i;
    }
    return -1;
}
/* The sibling suffixes: a tuple for `name` goes to name_dhw (IL, the 3-d kinds' triples),
   name_hw (I2) or name_groups (DL); "_dhw" is tried before the "_hw" it ends with. */
#define TN__KW_NSIBLINGS 3
static const char *const tn__kw_siblings[TN__KW_NSIBLINGS] = {"_dhw", "_hw", "_groups"};
/* The length of name without its sibling suffix (stride_hw: "stride"), else strlen. */
static size_t tn__kw_base_len(const char *name) {
    size_t l = strlen(name);
    for (int s = 0; s < TN__KW_NSIBLINGS; s++) {
        size_t sl = strlen(tn__kw_siblings[s]);
        if (l > sl && !strcmp(name + l - sl, tn__kw_siblings[s])) return l - sl;
    }
    return l;
}
/* The valid names of a table, for messages: "stride, padding, ..." (owned by the caller). */
static char *tn__kw_names(const tn__kwkey *keys, int nkeys) {
    size_t len = 1;
    for (int i = 0; i < nkeys; i++) len += strlen(keys[i].name) + 2;
    char *s = (char *)TN_MALLOC(len), *q = s;
    if (!s) return NULL;
    for (int i = 0; i < nkeys; i++) {
        size_t l = tn__kw_base_len(keys[i].name);   /* a sibling (stride_hw) goes under its base's name, */
        if (l != strlen(keys[i].name) && tn__kw_find(keys, nkeys, (tn__kwspan){keys[i].name, l}, "") >= 0) continue;   /* once */
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
    double x[TN_LIST_MAX];
    bool tuple;
    int n;
    switch (key->type) {
    case 'B': case 'O':
        if (tn__kw_is(v, "True") || tn__kw_is(v, "true") || tn__kw_is(v, "1")) n = 1;
        else if (tn__kw_is(v, "False") || tn__kw_is(v, "false") || tn__kw_is(v, "0")) n = 0;
        else if (key->type == 'O' && tn__kw_is(v, "None")) n = -1;
        else return TN__FAIL_INT("%s: option %s=%.*s: expected True or False", fn, name, (int)v.n, v.p);
        if (key->type == 'B') *(bool *)f = n == 1;
        else *(int *)f = n;
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
    case 'K':
        if ((n = tn__kw_numbers(fn, name, v, x, 2, &tuple)) < 0) return -1;
        if (n != 2) return TN__FAIL_INT("%s: option %s=%.*s needs a pair, e.g. %s=(0.9, 0.999)", fn, name, (int)v.n, v.p, name);
        ((double *)f)[0] = x[0];
        ((double *)f)[1] = x[1];
        return 0;
    case 'J':
        if ((n = tn__kw_numbers(fn, name, v, x, 2, &tuple)) < 0) return -1;
        if (n == 1) x[1] = x[0];
        return tn__kw_int(fn, name, x[0], (int64_t *)f) || tn__kw_int(fn, name, x[1], (int64_t *)f + 1) ? -1 : 0;
    case 'L': case 'M': {
        if (tn__kw_is(v, "None")) n = 0;
        else if ((n = tn__kw_numbers(fn, name, v, x, TN_LIST_MAX, &tuple)) < 0) return -1;
        if (key->type == 'M') {
            tn_doubles *d = (tn_doubles *)f;
            d->n = n;
            for (int i = 0; i < n; i++) d->v[i] = x[i];
            return 0;
        }
        tn_ints *l = (tn_ints *)f;
        l->n = n;
        for (int i = 0; i < n; i++) if (tn__kw_int(fn, name, x[i], &l->v[i])) return -1;
        return 0;
    }
    case 'S': {
        if (tn__kw_is(v, "None")) { *(const char **)f = NULL; return 0; }
        tn__kwspan w = tn__kw_unquote(v);
        char *str = (char *)TN_MALLOC(w.n + 1);
        if (!str) return TN__FAIL_INT("%s: out of memory", fn);
        memcpy(str, w.p, w.n);
        str[w.n] = 0;
        *(const char **)f = str;
        return 0;
    }
    case 'T':
        return TN__FAIL_INT("%s: option %s is a tensor, which the option text cannot give (pass it in the options struct)", fn, name);
    case 'N':
        return TN__FAIL_INT("%s: option %s is a module, which the option text cannot give (pass it in the options struct)", fn, name);
    case 'G':
        return TN__FAIL_INT("%s: option %s is a generator, which the option text cannot give (pass it in the options struct)", fn, name);
    default: break;
    }
    /* I, and P given a number */
    if (tn__kw_is(v, "None")) { *(int64_t *)f = TN_NONE; return 0; }
    if (key->type == 'I' && tn__kw_int_literal(v, (int64_t *)f)) return 0;
    if (tn__kw_numbers(fn, name, v, x, 1, &tuple) < 0 || tn__kw_int(fn, name, x[0], (int64_t *)f)) return -1;
    if (key->type == 'P' && x[0] < 0) return TN__FAIL_INT("%s: option %s=%.*s: padding must be non-negative", fn, name, (int)v.n, v.p);
    return 0;
}
/* Frees what the parser allocated in *opts (the S values of the rows in seen). */
static void tn__kw_release(const tn__kwkey *keys, int nkeys, void *opts, uint64_t seen) {
    for (int i = 0; i < nkeys; i++)
        if ((seen >> i & 1) && keys[i].type == 'S') {
            char **f = (char **)((char *)opts + keys[i].off);
            TN_FREE(*f);
            *f = NULL;
        }
}
/* Fills *out (holding the defaults) from text, through keys; *seen (may be NULL) gets a
   bit per row the text gave. 0, or -1 with an error (nothing left allocated then). */
static int tn__kw_parse(const char *fn, const char *text, const tn__kwkey *keys, int nkeys, void *out, uint64_t *seen_out) {
    uint64_t seen = 0;   /* tables have at most 64 rows */
    const char *p = text ? text : "";
    if (seen_out) *seen_out = 0;
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        tn__kwspan k = {p, 0};
        while (p[k.n] && p[k.n] != '=' && p[k.n] != ',') k.n++;
        if (p[k.n] != '=') goto malformed;
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
        if (!k.n || !v.n) goto malformed;
        /* "stride=(2, 1)" sets stride_hw, "max_lr=(0.1, 0.01)" max_lr_groups; a name only
           the sibling has takes single values too */
        const bool tuple = v.p[0] == '(' || v.p[0] == '[';
        int i = tn__kw_find(keys, nkeys, k, "");
        for (int s = 0; s < TN__KW_NSIBLINGS; s++) {
            int j = tn__kw_find(keys, nkeys, k, tn__kw_siblings[s]);
            if (j >= 0 && (i < 0 || (tuple && !tn__kw_tuple_type(keys[i].type)))) i = j;
        }
        if (i < 0) {
            char *names = tn__kw_names(keys, nkeys);
            tn__error("%s: unknown option '%.*s' (valid: %s)", fn, (int)k.n, k.p, !names ? "?" : names[0] ? names : "none");
            TN_FREE(names);
            goto fail;
        }
        if (seen >> i & 1) { tn__error("%s: option '%.*s' given twice", fn, (int)k.n, k.p); goto fail; }
        if (tn__kw_set(fn, &keys[i], k, v, out)) goto fail;
        seen |= (uint64_t)1 << i;
        if (keys[i].type == 'J') {   /* (a, a) is the int a: "stride=(0, 0)" is 0, not the pair {0, 0} ("not given") */
            int64_t *pair = (int64_t *)((char *)out + keys[i].off);
            const int b = tn__kw_find(keys, nkeys, (tn__kwspan){keys[i].name, tn__kw_base_len(keys[i].name)}, "");
            if (b >= 0 && b != i && (keys[b].type == 'I' || keys[b].type == 'P') && pair[0] == pair[1]) {
                if (keys[b].type == 'P' && pair[0] < 0) { tn__error("%s: option %.*s=%.*s: padding must be non-negative", fn, (int)k.n, k.p, (int)v.n, v.p); goto fail; }
                *(int64_t *)((char *)out + keys[b].off) = pair[0];
                pair[0] = pair[1] = 0;
            }
        }
    }
    if (seen_out) *seen_out = seen;
    return 0;
malformed:
    tn__error("%s: option text \"%s\": expected name=value", fn, text);
fail:
    tn__kw_release(keys, nkeys, out, seen);
    return -1;
}

/* ---- checks shared by the _opts functions ---- */
/* Whether field key of a and b holds the same value (NaN equals NaN: None). */
static bool tn__kw_same(const tn__kwkey *key, const void *a, const void *b) {
    const char *x = (const char *)a + key->off, *y = (const char *)b + key->off;
    double u, w;
    switch (key->type) {
    case 'I': case 'P': return *(const int64_t *)x == *(const int64_t *)y;
    case 'B': return *(const bool *)x == *(const bool *)y;
    case 'O': case 'E': return *(const int *)x == *(const int *)y;
    case 'J': return !memcmp(x, y, 2 * sizeof(int64_t));
    case 'D': case 'K':
        for (int i = 0; i < (key->type == 'K' ? 2 : 1); i++) {
            u = ((const double *)x)[i];
            w = ((const double *)y)[i];
            if (!(u == w || (u != u && w != w))) return false;
        }
        return true;
    case 'S': {
        const char *s = *(const char *const *)x, *t = *(const char *const *)y;
        return s == t || (s && t && !strcmp(s, t));
    }
    case 'T': case 'N': case 'G': return *(void *const *)x == *(void *const *)y;
    case 'L': return ((const tn_ints *)x)->n == 0 && ((const tn_ints *)y)->n == 0;
    case 'M': return ((const tn_doubles *)x)->n == 0 && ((const tn_doubles *)y)->n == 0;
    default: return false;
    }
}
/* Whether name (or its base, for a sibling) is in list ("a, b, c"). */
static bool tn__kw_listed(const char *list, const char *name, size_t len) {
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == len && !memcmp(p, name, len)) return true;
        p += l;
        while (*p == ',' || *p == ' ') p++;
    }
    return false;
}
/* The rows of keys a kind has, in the order of valid ("a, b, c": PyTorch's order, which
   messages then follow); a sibling (stride_hw) goes with its base's name. */
static int tn__kw_filter(const tn__kwkey *keys, int nkeys, const char *valid, tn__kwkey *out) {
    int n = 0;
    for (const char *p = valid; *p;) {
        size_t l = strcspn(p, ",");
        for (int i = 0; i < nkeys; i++)
            if (tn__kw_base_len(keys[i].name) == l && !memcmp(keys[i].name, p, l)) out[n++] = keys[i];
        p += l;
        while (*p == ',' || *p == ' ') p++;
    }
    return n;
}
/* A kind's options: every field whose name is not in valid must equal its default (or not
   be given, for the kind-family structs whose defaults are "not given"). what: the kind,
   "MaxPool2d". 0, or -1 with "fn: option 'x' is not an option of what (valid: ...)". */
static int tn__kw_only(const char *fn, const char *what, const tn__kwkey *keys, int nkeys, const void *opts, const void *defaults,
                       const char *valid) {
    for (int i = 0; i < nkeys; i++) {
        size_t b = tn__kw_base_len(keys[i].name);
        if (tn__kw_listed(valid, keys[i].name, b) || tn__kw_same(&keys[i], opts, defaults)) continue;
        return TN__FAIL_INT("%s: %.*s is not an option of %s (valid: %s)", fn, (int)b, keys[i].name, what, valid[0] ? valid : "none");
    }
    return 0;
}

/* ---- the key tables: one per options struct, from its TN_FIELDS_ list ---- */
#define TN__KW_T tn_conv_opts
static const tn__kwkey tn__kw_conv[] = {TN_FIELDS_tn_conv_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pool_opts
static const tn__kwkey tn__kw_pool[] = {TN_FIELDS_tn_pool_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_batch_norm_module_opts
static const tn__kwkey tn__kw_batch_norm[] = {TN_FIELDS_tn_batch_norm_module_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_layer_norm_module_opts
static const tn__kwkey tn__kw_layer_norm[] = {TN_FIELDS_tn_layer_norm_module_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_group_norm_module_opts
static const tn__kwkey tn__kw_group_norm[] = {TN_FIELDS_tn_group_norm_module_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_affine_norm_fn_opts
static const tn__kwkey tn__kw_affine_norm[] = {TN_FIELDS_tn_affine_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_dropout_module_opts
static const tn__kwkey tn__kw_dropout[] = {TN_FIELDS_tn_dropout_module_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_dropout_fn_opts
static const tn__kwkey tn__kw_dropout_fn[] = {TN_FIELDS_tn_dropout_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_embedding_opts
static const tn__kwkey tn__kw_embedding[] = {TN_FIELDS_tn_embedding_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_activation_opts
static const tn__kwkey tn__kw_activation[] = {TN_FIELDS_tn_activation_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_rnn_opts
static const tn__kwkey tn__kw_rnn[] = {TN_FIELDS_tn_rnn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_rnn_cell_opts
static const tn__kwkey tn__kw_rnn_cell[] = {TN_FIELDS_tn_rnn_cell_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_multihead_attention_opts
static const tn__kwkey tn__kw_mha[] = {TN_FIELDS_tn_multihead_attention_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_transformer_layer_opts
static const tn__kwkey tn__kw_transformer_layer[] = {TN_FIELDS_tn_transformer_layer_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linear_opts
static const tn__kwkey tn__kw_linear[] = {TN_FIELDS_tn_linear_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_flatten_module_opts
static const tn__kwkey tn__kw_flatten_module[] = {TN_FIELDS_tn_flatten_module_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pad_module_opts
static const tn__kwkey tn__kw_pad_module[] = {TN_FIELDS_tn_pad_module_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_prelu_opts
static const tn__kwkey tn__kw_prelu[] = {TN_FIELDS_tn_prelu_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_max_unpool_opts
static const tn__kwkey tn__kw_max_unpool[] = {TN_FIELDS_tn_max_unpool_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_transformer_stack_opts
static const tn__kwkey tn__kw_transformer_stack[] = {TN_FIELDS_tn_transformer_stack_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_transformer_encoder_opts
static const tn__kwkey tn__kw_transformer_encoder[] = {TN_FIELDS_tn_transformer_encoder_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_register_buffer_opts
static const tn__kwkey tn__kw_register_buffer[] = {TN_FIELDS_tn_register_buffer_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_load_state_dict_opts
static const tn__kwkey tn__kw_load_state_dict[] = {TN_FIELDS_tn_load_state_dict_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_train_opts
static const tn__kwkey tn__kw_train[] = {TN_FIELDS_tn_train_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_zero_grad_opts
static const tn__kwkey tn__kw_zero_grad[] = {TN_FIELDS_tn_zero_grad_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_mnist_opts
static const tn__kwkey tn__kw_mnist[] = {TN_FIELDS_tn_mnist_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_optim_opts
static const tn__kwkey tn__kw_optim[] = {TN_FIELDS_tn_optim_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_lr_scheduler_opts
static const tn__kwkey tn__kw_sched[] = {TN_FIELDS_tn_lr_scheduler_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_loader_opts
static const tn__kwkey tn__kw_loader[] = {TN_FIELDS_tn_loader_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_onnx_opts
static const tn__kwkey tn__kw_onnx_export[] = {TN_FIELDS_tn_onnx_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_csv_opts
static const tn__kwkey tn__kw_csv[] = {TN_FIELDS_tn_csv_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_conv_fn_opts
static const tn__kwkey tn__kw_conv_fn[] = {TN_FIELDS_tn_conv_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_loss_opts
static const tn__kwkey tn__kw_loss[] = {TN_FIELDS_tn_loss_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_reduction_fn_opts
static const tn__kwkey tn__kw_reduction[] = {TN_FIELDS_tn_reduction_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_smooth_l1_loss_fn_opts
static const tn__kwkey tn__kw_smooth_l1_loss[] = {TN_FIELDS_tn_smooth_l1_loss_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_huber_loss_fn_opts
static const tn__kwkey tn__kw_huber_loss[] = {TN_FIELDS_tn_huber_loss_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_binary_cross_entropy_fn_opts
static const tn__kwkey tn__kw_binary_cross_entropy[] = {TN_FIELDS_tn_binary_cross_entropy_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_binary_cross_entropy_with_logits_fn_opts
static const tn__kwkey tn__kw_binary_cross_entropy_with_logits[] = {TN_FIELDS_tn_binary_cross_entropy_with_logits_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_kl_div_fn_opts
static const tn__kwkey tn__kw_kl_div[] = {TN_FIELDS_tn_kl_div_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_margin_loss_fn_opts
static const tn__kwkey tn__kw_margin_loss[] = {TN_FIELDS_tn_margin_loss_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_ddp_opts
static const tn__kwkey tn__kw_ddp[] = {TN_FIELDS_tn_ddp_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_conv3d_fn_opts
static const tn__kwkey tn__kw_conv3d_fn[] = {TN_FIELDS_tn_conv3d_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pool3d_opts
static const tn__kwkey tn__kw_pool3d[] = {TN_FIELDS_tn_pool3d_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_conv3d_layer_opts
static const tn__kwkey tn__kw_conv3d[] = {TN_FIELDS_tn_conv3d_layer_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_embedding_bag_layer_opts
static const tn__kwkey tn__kw_embedding_bag_layer[] = {TN_FIELDS_tn_embedding_bag_layer_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_lrn_opts
static const tn__kwkey tn__kw_lrn[] = {TN_FIELDS_tn_lrn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_embedding_bag_fn_opts
static const tn__kwkey tn__kw_embedding_bag[] = {TN_FIELDS_tn_embedding_bag_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_grid_opts
static const tn__kwkey tn__kw_grid_sample[] = {TN_FIELDS_tn_grid_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_loss_fn_opts
static const tn__kwkey tn__kw_loss_fn[] = {TN_FIELDS_tn_loss_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_print_options
static const tn__kwkey tn__kw_print[] = {TN_FIELDS_tn_print_options(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_isin_fn_opts
static const tn__kwkey tn__kw_isin[] = {TN_FIELDS_tn_isin_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_sum_fn_opts
static const tn__kwkey tn__kw_sum[] = {TN_FIELDS_tn_sum_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_keepdim_fn_opts
static const tn__kwkey tn__kw_keepdim[] = {TN_FIELDS_tn_keepdim_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_argmax_fn_opts
static const tn__kwkey tn__kw_argmax[] = {TN_FIELDS_tn_argmax_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_median_fn_opts
static const tn__kwkey tn__kw_median[] = {TN_FIELDS_tn_median_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_var_fn_opts
static const tn__kwkey tn__kw_var[] = {TN_FIELDS_tn_var_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_norm_fn_opts
static const tn__kwkey tn__kw_norm[] = {TN_FIELDS_tn_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_quantile_fn_opts
static const tn__kwkey tn__kw_quantile[] = {TN_FIELDS_tn_quantile_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_searchsorted_fn_opts
static const tn__kwkey tn__kw_searchsorted[] = {TN_FIELDS_tn_searchsorted_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_unique_fn_opts
static const tn__kwkey tn__kw_unique[] = {TN_FIELDS_tn_unique_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_sort_fn_opts
static const tn__kwkey tn__kw_sort[] = {TN_FIELDS_tn_sort_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_topk_fn_opts
static const tn__kwkey tn__kw_topk[] = {TN_FIELDS_tn_topk_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_diagonal_fn_opts
static const tn__kwkey tn__kw_diagonal[] = {TN_FIELDS_tn_diagonal_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_tensor_split_fn_opts
static const tn__kwkey tn__kw_tensor_split[] = {TN_FIELDS_tn_tensor_split_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cat_fn_opts
static const tn__kwkey tn__kw_cat[] = {TN_FIELDS_tn_cat_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_split_fn_opts
static const tn__kwkey tn__kw_split[] = {TN_FIELDS_tn_split_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_rot90_fn_opts
static const tn__kwkey tn__kw_rot90[] = {TN_FIELDS_tn_rot90_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_meshgrid_fn_opts
static const tn__kwkey tn__kw_meshgrid[] = {TN_FIELDS_tn_meshgrid_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_diag_fn_opts
static const tn__kwkey tn__kw_diag[] = {TN_FIELDS_tn_diag_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_logspace_fn_opts
static const tn__kwkey tn__kw_logspace[] = {TN_FIELDS_tn_logspace_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_multinomial_fn_opts
static const tn__kwkey tn__kw_multinomial[] = {TN_FIELDS_tn_multinomial_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_flatten_fn_opts
static const tn__kwkey tn__kw_flatten[] = {TN_FIELDS_tn_flatten_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_put_fn_opts
static const tn__kwkey tn__kw_put[] = {TN_FIELDS_tn_put_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_scatter_reduce_fn_opts
static const tn__kwkey tn__kw_scatter_reduce[] = {TN_FIELDS_tn_scatter_reduce_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_isclose_fn_opts
static const tn__kwkey tn__kw_isclose[] = {TN_FIELDS_tn_isclose_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_bincount_fn_opts
static const tn__kwkey tn__kw_bincount[] = {TN_FIELDS_tn_bincount_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_lu_factor_fn_opts
static const tn__kwkey tn__kw_lu_factor[] = {TN_FIELDS_tn_lu_factor_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_lu_factor_ex_fn_opts
static const tn__kwkey tn__kw_lu_factor_ex[] = {TN_FIELDS_tn_lu_factor_ex_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_solve_fn_opts
static const tn__kwkey tn__kw_solve[] = {TN_FIELDS_tn_solve_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_solve_ex_fn_opts
static const tn__kwkey tn__kw_solve_ex[] = {TN_FIELDS_tn_solve_ex_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_ex_fn_opts
static const tn__kwkey tn__kw_linalg_ex[] = {TN_FIELDS_tn_linalg_ex_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_vecdot_fn_opts
static const tn__kwkey tn__kw_vecdot[] = {TN_FIELDS_tn_vecdot_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_tensorinv_fn_opts
static const tn__kwkey tn__kw_tensorinv[] = {TN_FIELDS_tn_tensorinv_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pinverse_fn_opts
static const tn__kwkey tn__kw_pinverse[] = {TN_FIELDS_tn_pinverse_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_histogramdd_fn_opts
static const tn__kwkey tn__kw_histogramdd[] = {TN_FIELDS_tn_histogramdd_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_ormqr_fn_opts
static const tn__kwkey tn__kw_ormqr[] = {TN_FIELDS_tn_ormqr_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_ldl_factor_fn_opts
static const tn__kwkey tn__kw_ldl_factor[] = {TN_FIELDS_tn_ldl_factor_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_ldl_factor_ex_fn_opts
static const tn__kwkey tn__kw_ldl_factor_ex[] = {TN_FIELDS_tn_ldl_factor_ex_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_ldl_solve_fn_opts
static const tn__kwkey tn__kw_ldl_solve[] = {TN_FIELDS_tn_ldl_solve_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cholesky_fn_opts
static const tn__kwkey tn__kw_cholesky[] = {TN_FIELDS_tn_cholesky_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cholesky_ex_fn_opts
static const tn__kwkey tn__kw_cholesky_ex[] = {TN_FIELDS_tn_cholesky_ex_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_vander_fn_opts
static const tn__kwkey tn__kw_vander[] = {TN_FIELDS_tn_vander_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_qr_fn_opts
static const tn__kwkey tn__kw_qr[] = {TN_FIELDS_tn_qr_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_svd_fn_opts
static const tn__kwkey tn__kw_svd[] = {TN_FIELDS_tn_svd_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_one_hot_fn_opts
static const tn__kwkey tn__kw_one_hot[] = {TN_FIELDS_tn_one_hot_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_interpolate_fn_opts
static const tn__kwkey tn__kw_interpolate[] = {TN_FIELDS_tn_interpolate_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_affine_grid_fn_opts
static const tn__kwkey tn__kw_affine_grid[] = {TN_FIELDS_tn_affine_grid_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_addmm_fn_opts
static const tn__kwkey tn__kw_addmm[] = {TN_FIELDS_tn_addmm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cdist_fn_opts
static const tn__kwkey tn__kw_cdist[] = {TN_FIELDS_tn_cdist_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pdist_fn_opts
static const tn__kwkey tn__kw_pdist[] = {TN_FIELDS_tn_pdist_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_normalize_fn_opts
static const tn__kwkey tn__kw_normalize[] = {TN_FIELDS_tn_normalize_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cov_fn_opts
static const tn__kwkey tn__kw_cov[] = {TN_FIELDS_tn_cov_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_solve_triangular_fn_opts
static const tn__kwkey tn__kw_solve_triangular[] = {TN_FIELDS_tn_solve_triangular_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_triangular_solve_fn_opts
static const tn__kwkey tn__kw_triangular_solve[] = {TN_FIELDS_tn_triangular_solve_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_lu_solve_fn_opts
static const tn__kwkey tn__kw_lu_solve[] = {TN_FIELDS_tn_lu_solve_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_vector_norm_fn_opts
static const tn__kwkey tn__kw_vector_norm[] = {TN_FIELDS_tn_vector_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_matrix_norm_fn_opts
static const tn__kwkey tn__kw_matrix_norm[] = {TN_FIELDS_tn_matrix_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_norm_fn_opts
static const tn__kwkey tn__kw_linalg_norm[] = {TN_FIELDS_tn_linalg_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_qr_fn_opts
static const tn__kwkey tn__kw_linalg_qr[] = {TN_FIELDS_tn_linalg_qr_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_eigh_fn_opts
static const tn__kwkey tn__kw_linalg_eigh[] = {TN_FIELDS_tn_linalg_eigh_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_svd_fn_opts
static const tn__kwkey tn__kw_linalg_svd[] = {TN_FIELDS_tn_linalg_svd_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_pinv_fn_opts
static const tn__kwkey tn__kw_linalg_pinv[] = {TN_FIELDS_tn_linalg_pinv_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_matrix_rank_fn_opts
static const tn__kwkey tn__kw_linalg_matrix_rank[] = {TN_FIELDS_tn_linalg_matrix_rank_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_linalg_lstsq_fn_opts
static const tn__kwkey tn__kw_linalg_lstsq[] = {TN_FIELDS_tn_linalg_lstsq_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_repeat_interleave_fn_opts
static const tn__kwkey tn__kw_repeat_interleave[] = {TN_FIELDS_tn_repeat_interleave_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_diff_fn_opts
static const tn__kwkey tn__kw_diff[] = {TN_FIELDS_tn_diff_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_gradient_fn_opts
static const tn__kwkey tn__kw_gradient[] = {TN_FIELDS_tn_gradient_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_histogram_fn_opts
static const tn__kwkey tn__kw_histogram[] = {TN_FIELDS_tn_histogram_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_slice_scatter_fn_opts
static const tn__kwkey tn__kw_slice_scatter[] = {TN_FIELDS_tn_slice_scatter_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_trapezoid_fn_opts
static const tn__kwkey tn__kw_trapezoid[] = {TN_FIELDS_tn_trapezoid_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_combinations_fn_opts
static const tn__kwkey tn__kw_combinations[] = {TN_FIELDS_tn_combinations_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_gumbel_softmax_fn_opts
static const tn__kwkey tn__kw_gumbel_softmax[] = {TN_FIELDS_tn_gumbel_softmax_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_diag_embed_fn_opts
static const tn__kwkey tn__kw_diag_embed[] = {TN_FIELDS_tn_diag_embed_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_diagflat_fn_opts
static const tn__kwkey tn__kw_diagflat[] = {TN_FIELDS_tn_diagflat_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pad_fn_opts
static const tn__kwkey tn__kw_pad[] = {TN_FIELDS_tn_pad_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_histc_fn_opts
static const tn__kwkey tn__kw_histc[] = {TN_FIELDS_tn_histc_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cosine_similarity_fn_opts
static const tn__kwkey tn__kw_cosine_similarity[] = {TN_FIELDS_tn_cosine_similarity_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_pairwise_distance_fn_opts
static const tn__kwkey tn__kw_pairwise_distance[] = {TN_FIELDS_tn_pairwise_distance_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_gelu_fn_opts
static const tn__kwkey tn__kw_gelu[] = {TN_FIELDS_tn_gelu_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_softplus_fn_opts
static const tn__kwkey tn__kw_softplus[] = {TN_FIELDS_tn_softplus_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_leaky_relu_fn_opts
static const tn__kwkey tn__kw_leaky_relu[] = {TN_FIELDS_tn_leaky_relu_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_elu_fn_opts
static const tn__kwkey tn__kw_elu[] = {TN_FIELDS_tn_elu_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_shrink_fn_opts
static const tn__kwkey tn__kw_shrink[] = {TN_FIELDS_tn_shrink_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_rrelu_fn_opts
static const tn__kwkey tn__kw_rrelu[] = {TN_FIELDS_tn_rrelu_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_hardtanh_fn_opts
static const tn__kwkey tn__kw_hardtanh[] = {TN_FIELDS_tn_hardtanh_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_glu_fn_opts
static const tn__kwkey tn__kw_glu[] = {TN_FIELDS_tn_glu_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_softmin_fn_opts
static const tn__kwkey tn__kw_softmin[] = {TN_FIELDS_tn_softmin_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_tri_indices_fn_opts
static const tn__kwkey tn__kw_tri_indices[] = {TN_FIELDS_tn_tri_indices_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_fftfreq_fn_opts
static const tn__kwkey tn__kw_fftfreq[] = {TN_FIELDS_tn_fftfreq_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_fftshift_fn_opts
static const tn__kwkey tn__kw_fftshift[] = {TN_FIELDS_tn_fftshift_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_fft_fn_opts
static const tn__kwkey tn__kw_fft[] = {TN_FIELDS_tn_fft_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_fft2_fn_opts
static const tn__kwkey tn__kw_fft2[] = {TN_FIELDS_tn_fft2_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_fftn_fn_opts
static const tn__kwkey tn__kw_fftn[] = {TN_FIELDS_tn_fftn_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_stft_fn_opts
static const tn__kwkey tn__kw_stft[] = {TN_FIELDS_tn_stft_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_istft_fn_opts
static const tn__kwkey tn__kw_istft[] = {TN_FIELDS_tn_istft_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_logit_fn_opts
static const tn__kwkey tn__kw_logit[] = {TN_FIELDS_tn_logit_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_nan_to_num_fn_opts
static const tn__kwkey tn__kw_nan_to_num[] = {TN_FIELDS_tn_nan_to_num_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_clamp_fn_opts
static const tn__kwkey tn__kw_clamp[] = {TN_FIELDS_tn_clamp_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_addcmul_fn_opts
static const tn__kwkey tn__kw_addcmul[] = {TN_FIELDS_tn_addcmul_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_index_add_fn_opts
static const tn__kwkey tn__kw_index_add[] = {TN_FIELDS_tn_index_add_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_tensordot_fn_opts
static const tn__kwkey tn__kw_tensordot[] = {TN_FIELDS_tn_tensordot_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cross_fn_opts
static const tn__kwkey tn__kw_cross[] = {TN_FIELDS_tn_cross_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
/* issue 19's last positional functions: the norms, attention, the in-place random fills, nn.init,
   clip_grad_norm_, gradcheck, autocast and init_process_group */
#define TN__KW_T tn_batch_norm_fn_opts
static const tn__kwkey tn__kw_batch_norm_fn[] = {TN_FIELDS_tn_batch_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_instance_norm_fn_opts
static const tn__kwkey tn__kw_instance_norm_fn[] = {TN_FIELDS_tn_instance_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_sdpa_fn_opts
static const tn__kwkey tn__kw_sdpa[] = {TN_FIELDS_tn_sdpa_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_normal_fill_opts
static const tn__kwkey tn__kw_normal_fill[] = {TN_FIELDS_tn_normal_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_uniform_fill_opts
static const tn__kwkey tn__kw_uniform_fill[] = {TN_FIELDS_tn_uniform_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_exponential_fill_opts
static const tn__kwkey tn__kw_exponential_fill[] = {TN_FIELDS_tn_exponential_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_generator_fill_opts
static const tn__kwkey tn__kw_generator_fill[] = {TN_FIELDS_tn_generator_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_cauchy_fill_opts
static const tn__kwkey tn__kw_cauchy_fill[] = {TN_FIELDS_tn_cauchy_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_log_normal_fill_opts
static const tn__kwkey tn__kw_log_normal_fill[] = {TN_FIELDS_tn_log_normal_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_random_fill_opts
static const tn__kwkey tn__kw_random_fill[] = {TN_FIELDS_tn_random_fill_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_gradcheck_fn_opts
static const tn__kwkey tn__kw_gradcheck[] = {TN_FIELDS_tn_gradcheck_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_autocast_fn_opts
static const tn__kwkey tn__kw_autocast[] = {TN_FIELDS_tn_autocast_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_gain_fn_opts
static const tn__kwkey tn__kw_init_gain[] = {TN_FIELDS_tn_init_gain_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_uniform_fn_opts
static const tn__kwkey tn__kw_init_uniform[] = {TN_FIELDS_tn_init_uniform_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_normal_fn_opts
static const tn__kwkey tn__kw_init_normal[] = {TN_FIELDS_tn_init_normal_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_xavier_fn_opts
static const tn__kwkey tn__kw_init_xavier[] = {TN_FIELDS_tn_init_xavier_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_kaiming_fn_opts
static const tn__kwkey tn__kw_init_kaiming[] = {TN_FIELDS_tn_init_kaiming_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_trunc_normal_fn_opts
static const tn__kwkey tn__kw_init_trunc_normal[] = {TN_FIELDS_tn_init_trunc_normal_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_init_sparse_fn_opts
static const tn__kwkey tn__kw_init_sparse[] = {TN_FIELDS_tn_init_sparse_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_clip_grad_norm_fn_opts
static const tn__kwkey tn__kw_clip_grad_norm[] = {TN_FIELDS_tn_clip_grad_norm_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
#define TN__KW_T tn_dist_init_fn_opts
static const tn__kwkey tn__kw_dist_init[] = {TN_FIELDS_tn_dist_init_fn_opts(TN__KW_ROW)};
#undef TN__KW_T
/* A _str function's body: the defaults, then the text (T's table tn__kw_<table>); on
   success `call` (which may use o) is returned, else NULL. */
#define TN__KW_STR(T, table, fn, text, call) do { \
        T o = TN_DEFAULTS(T); \
        if (tn__kw_parse(fn, text, tn__kw_##table, TN__KW_N(tn__kw_##table), &o, NULL)) return NULL; \
        return call; \
    } while (0)
/* The same for a _str function that returns a bool (false on error, as tn_allclose's). */
#define TN__KW_STR_BOOL(T, table, fn, text, call) do { \
        T o = TN_DEFAULTS(T); \
        if (tn__kw_parse(fn, text, tn__kw_##table, TN__KW_N(tn__kw_##table), &o, NULL)) return false; \
        return call; \
    } while (0)
/* The same for a _str function that returns a double (NAN on error, as clip_grad_norm_'s). */
#define TN__KW_STR_NAN(T, table, fn, text, call) do { \
        T o = TN_DEFAULTS(T); \
        if (tn__kw_parse(fn, text, tn__kw_##table, TN__KW_N(tn__kw_##table), &o, NULL)) return NAN; \
        return call; \
    } while (0)
/* The same for a _str function that returns an int (-1 on error). */
#define TN__KW_STR_INT(T, table, fn, text, call) do { \
        T o = TN_DEFAULTS(T); \
        if (tn__kw_parse(fn, text, tn__kw_##table, TN__KW_N(tn__kw_##table), &o, NULL)) return -1; \
        return call; \
    } while (0)
