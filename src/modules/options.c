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
