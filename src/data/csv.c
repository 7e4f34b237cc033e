/* ---- CSV ---- */
/* One field of a CSV line starting at p (end: the line's end): trimmed, unquoted, in
   buf, which holds the whole line (a field is never longer): nothing is cut. Returns the
   position after the field's delimiter (or end), NULL on a bad quote. */
static const char *tn__csv_field(const char *p, const char *end, char delim, char *buf, bool *last) {
    size_t n = 0;
    while (p < end && *p != delim && (*p == ' ' || *p == '\t')) p++;
    if (p < end && *p == '"') {
        p++;
        for (;;) {
            if (p >= end) return NULL;
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') { buf[n++] = '"'; p += 2; continue; }
                p++;
                break;
            }
            buf[n++] = *p;
            p++;
        }
        while (p < end && *p != delim && (*p == ' ' || *p == '\t')) p++;
        if (p < end && *p != delim) return NULL;
    } else {
        while (p < end && *p != delim) buf[n++] = *p++;
        while (n && buf[n - 1] != delim && (buf[n - 1] == ' ' || buf[n - 1] == '\t')) n--;
    }
    buf[n] = 0;
    *last = p >= end;
    return p < end ? p + 1 : end;
}

static int tn__csv_count_fields(const char *p, const char *end, char delim) {
    int n = 1;
    bool q = false;
    for (; p < end; p++) {
        if (*p == '"') q = !q;
        else if (*p == delim && !q) n++;
    }
    return n;
}

TNDEF tn_tensor *tn_read_csv_opts(const char *path, tn_tensor **labels, tn_csv_opts o) {
    if (labels) *labels = NULL;
    if (!path) return (tn_tensor *)tn__error("tn_read_csv: path is NULL");
    const bool header = o.header;
    const char *d = o.delimiter ? o.delimiter : "", *label_name = o.label_name ? o.label_name : "";
    char delim;
    if (!strcmp(d, "\\t") || !strcmp(d, "\t")) delim = '\t';
    else if (strlen(d) == 1 && d[0] != '"' && d[0] != '\n' && d[0] != '\r') delim = d[0];
    else return (tn_tensor *)tn__error("tn_read_csv: option delimiter='%s': expected one character (or '\\t')", d);
    const int64_t label_col = o.label_column;   /* TN_NONE: none */
    if (label_name[0] && label_col != TN_NONE) return (tn_tensor *)tn__error("tn_read_csv: give label_column or label_name, not both");
    if (label_name[0] && !header) return (tn_tensor *)tn__error("tn_read_csv: label_name='%s' names a column, which needs header=True", label_name);
    if (o.dtype != TN_F32 && o.dtype != TN_F64) return (tn_tensor *)tn__error("tn_read_csv: dtype must be TN_F32 or TN_F64, got %d", o.dtype);
    const tn_dtype dtype = (tn_dtype)o.dtype;

    FILE *f = fopen(path, "rb");
    if (!f) return (tn_tensor *)tn__error("tn_read_csv: cannot open '%s': %s", path, strerror(errno));
    tn__file r;
    memset(&r, 0, sizeof r);
    r.f = f;
    int64_t size = tn__file_left(&r);
    char *buf = size >= 0 ? tn__file_read_exact("tn_read_csv", path, &r, size) : NULL;
    if (size < 0 && !buf) tn__error("tn_read_csv: cannot read '%s'", path);
    fclose(f);
    if (!buf) return NULL;

    double *vals = NULL;
    int64_t *labs = NULL, rows = 0, cap = 0, line = 0;
    int ncols = -1, lc = -1;
    char *cell = NULL;      /* one field, as long as the longest line so far */
    size_t cellcap = 0;
    tn_tensor *x = NULL, *y = NULL;
    bool failed = false;
    const char *p = buf, *bend = buf + size;
    while (p < bend && !failed) {
        const char *e = (const char *)memchr(p, '\n', (size_t)(bend - p));
        const char *next = e ? e + 1 : bend;
        if (!e) e = bend;
        line++;
        if (e > p && e[-1] == '\r') e--;
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        if (q == e) { p = next; continue; }  /* a blank line */
        if ((size_t)(e - p) + 1 > cellcap) {
            size_t want = TN__MAX((size_t)(e - p) + 1, 2 * cellcap);
            char *c = (char *)TN_REALLOC(cell, want);
            if (!c) { tn__error("tn_read_csv: out of memory at line %lld of '%s'", (long long)line, path); failed = true; break; }
            cell = c;
            cellcap = want;
        }
        int nf = tn__csv_count_fields(p, e, delim);
        if (ncols < 0) { /* the first line fixes the columns and the label column */
            ncols = nf;
            if (label_name[0]) {
                const char *fp = p;
                bool last = false;
                for (int c = 0; c < nf && fp; c++) {
                    fp = tn__csv_field(fp, e, delim, cell, &last);
                    if (fp && !strcmp(cell, label_name)) { lc = c; break; }
                }
                if (lc < 0) { tn__error("tn_read_csv: '%s': no column named '%s' in the header", path, label_name); failed = true; break; }
            } else if (label_col != TN_NONE) {
                if (label_col < -ncols || label_col >= ncols) {
                    tn__error("tn_read_csv: label_column=%lld is out of range for %d columns", (long long)label_col, ncols);
                    failed = true;
                    break;
                }
                lc = (int)(label_col < 0 ? label_col + ncols : label_col);
            }
            if (header) { p = next; continue; }
        }
        if (nf != ncols) { tn__error("tn_read_csv: '%s' line %lld has %d columns, expected %d", path, (long long)line, nf, ncols); failed = true; break; }
        int nfeat = ncols - (lc >= 0);
        if (rows == cap) {
            cap = cap ? 2 * cap : 64;
            double *nv = (double *)TN_REALLOC(vals, (size_t)(cap * (nfeat ? nfeat : 1)) * sizeof *nv);
            if (nv) vals = nv;
            int64_t *nl = nv ? (int64_t *)TN_REALLOC(labs, (size_t)cap * sizeof *nl) : NULL;
            if (nl) labs = nl;
            if (!nl) { tn__error("tn_read_csv: out of memory at line %lld of '%s'", (long long)line, path); failed = true; break; }
        }
        const char *fp = p;
        int j = 0;
        for (int c = 0; c < ncols; c++) {
            bool last = false;
            fp = tn__csv_field(fp, e, delim, cell, &last);
            if (!fp) { tn__error("tn_read_csv: '%s' line %lld, column %d: unterminated or misplaced quote", path, (long long)line, c + 1); failed = true; break; }
            char *end;
            double v = strtod(cell, &end);
            if (!cell[0] || *end) {
                tn__error("tn_read_csv: '%s' line %lld, column %d: cannot parse '%s' as a number", path, (long long)line, c + 1, cell);
                failed = true;
                break;
            }
            if (c == lc) {
                if (v != floor(v) || fabs(v) > 9.2e18) {
                    tn__error("tn_read_csv: '%s' line %lld, column %d: label '%s' is not an integer", path, (long long)line, c + 1, cell);
                    failed = true;
                    break;
                }
                labs[rows] = (int64_t)v;
            } else vals[rows * nfeat + j++] = v;
        }
        rows++;
        p = next;
    }
    if (!failed && ncols < 0) { tn__error("tn_read_csv: '%s' has no lines", path); failed = true; }
    if (!failed) {
        int64_t shape[2] = {rows, ncols - (lc >= 0)};
        tn_tensor *xd = tn__new(TN_F64, TN_CPU, shape, 2);
        if (xd && rows * shape[1] > 0) memcpy(tn_data_ptr(xd), vals, (size_t)(rows * shape[1]) * sizeof(double));
        x = xd ? tn__as_dtype(xd, dtype) : NULL;
        tn_release(xd);
        if (x && lc >= 0 && labels) {
            y = tn__new(TN_I64, TN_CPU, &rows, 1);
            if (y && rows) memcpy(tn_data_ptr(y), labs, (size_t)rows * sizeof(int64_t));
            if (!y) { tn_release(x); x = NULL; }
        }
        if (!x) tn__error("tn_read_csv: out of memory for %lld rows of '%s'", (long long)rows, path);
    }
    TN_FREE(vals);
    TN_FREE(labs);
    TN_FREE(cell);
    TN_FREE(buf);
    if (labels && x) *labels = tn__own(y);
    return tn__own(x);
}

TNDEF tn_tensor *tn_read_csv_str(const char *path, tn_tensor **labels, const char *options) {
    if (labels) *labels = NULL;
    tn_csv_opts o = TN_DEFAULTS(tn_csv_opts);
    uint64_t seen;
    if (tn__kw_parse("tn_read_csv", options, tn__kw_csv, TN__KW_N(tn__kw_csv), &o, &seen)) return NULL;
    tn_tensor *x = tn_read_csv_opts(path, labels, o);
    tn__kw_release(tn__kw_csv, TN__KW_N(tn__kw_csv), &o, seen);
    return x;
}
