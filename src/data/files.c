/* ---- files: plain, or gzip through zlib ---- */
typedef struct tn__file {
    FILE *f;
#ifdef TENSOR_ZLIB
    gzFile gz;
#endif
} tn__file;

static int tn__file_open(const char *fn, const char *path, tn__file *r) {
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) return TN__FAIL_INT("%s: cannot open '%s': %s", fn, path, strerror(errno));
    unsigned char m[2] = {0, 0};
    size_t got = fread(m, 1, 2, f), pl = strlen(path);
    bool gz = (got == 2 && m[0] == 0x1f && m[1] == 0x8b) || (pl >= 3 && !strcmp(path + pl - 3, ".gz"));
    if (!gz) {
        if (fseek(f, 0, SEEK_SET)) { fclose(f); return TN__FAIL_INT("%s: cannot read '%s': %s", fn, path, strerror(errno)); }
        r->f = f;
        return 0;
    }
    fclose(f);
#ifdef TENSOR_ZLIB
    r->gz = gzopen(path, "rb");
    if (!r->gz) return TN__FAIL_INT("%s: cannot open '%s' through zlib", fn, path);
    return 0;
#else
    return TN__FAIL_INT("%s: '%s' is gzip-compressed; build with -DTENSOR_ZLIB and link -lz to read it (or gunzip it first)", fn, path);
#endif
}

/* Read up to n bytes; returns how many (short at the end of the file), or -1 with an error. */
static int64_t tn__file_read(const char *fn, const char *path, tn__file *r, void *buf, int64_t n) {
    int64_t done = 0;
#ifdef TENSOR_ZLIB
    if (r->gz) {
        while (done < n) {
            unsigned chunk = (unsigned)TN__MIN(n - done, (int64_t)1 << 30);
            int got = gzread(r->gz, (char *)buf + done, chunk);
            if (got < 0) {
                int zerr;
                const char *msg = gzerror(r->gz, &zerr);
                return TN__FAIL_INT("%s: '%s': corrupt gzip data (zlib: %s)", fn, path, msg ? msg : "unknown error");
            }
            if (got == 0) {
                int zerr;
                const char *msg = gzerror(r->gz, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END && zerr != Z_BUF_ERROR)
                    return TN__FAIL_INT("%s: '%s': corrupt gzip data (zlib: %s)", fn, path, msg ? msg : "unknown error");
                break;
            }
            done += got;
        }
        return done;
    }
#endif
    done = (int64_t)fread(buf, 1, (size_t)n, r->f);
    if (done < n && ferror(r->f)) return TN__FAIL_INT("%s: cannot read '%s': %s", fn, path, strerror(errno));
    return done;
}

/* Bytes from the position to the end of a plain file; -1 for gzip (not known ahead). */
static int64_t tn__file_left(tn__file *r) {
    if (!r->f) return -1;
    long here = ftell(r->f);
    if (here < 0 || fseek(r->f, 0, SEEK_END)) return -1;
    long end = ftell(r->f);
    if (end < 0 || fseek(r->f, here, SEEK_SET)) return -1;
    return (int64_t)end - (int64_t)here;
}

static void tn__file_close(tn__file *r) {
    if (r->f) fclose(r->f);
#ifdef TENSOR_ZLIB
    if (r->gz) gzclose(r->gz);
#endif
    memset(r, 0, sizeof *r);
}

/* Exactly n bytes, then end of file: into dst (the caller's n bytes: for a plain file whose
   size was checked, so large data is not held twice), or without dst into a new buffer
   (TN_MALLOC'd) grown as data arrives, so a short hostile file never makes a large
   allocation. Returns the bytes' address, NULL on error (dst stays the caller's). */
static char *tn__file_read_into(const char *fn, const char *path, tn__file *r, int64_t n, char *dst) {
    /* a plain file's size is known (read it at once), unless it lies (a directory) */
    int64_t cap = dst ? n : TN__MIN(n, r->f ? (int64_t)1 << 28 : (int64_t)1 << 20), have = 0;
    char *buf = dst ? dst : (char *)TN_MALLOC((size_t)(cap ? cap : 1));
#define TN__FREE_BUF() do { if (!dst) TN_FREE(buf); } while (0)
    if (!buf) return (char *)tn__error("%s: out of memory", fn);
    while (have < n) {
        if (have == cap) {
            cap = TN__MIN(n, 2 * cap);
            char *nb = (char *)TN_REALLOC(buf, (size_t)cap);
            if (!nb) { TN_FREE(buf); return (char *)tn__error("%s: out of memory reading '%s' (%lld bytes)", fn, path, (long long)n); }
            buf = nb;
        }
        int64_t got = tn__file_read(fn, path, r, buf + have, cap - have);
        if (got < 0) { TN__FREE_BUF(); return NULL; }
        if (got == 0) {
            TN__FREE_BUF();
            return (char *)tn__error("%s: '%s' is truncated: the header promises %lld bytes of data, the file has %lld", fn, path, (long long)n, (long long)have);
        }
        have += got;
    }
    char extra[256];
    int64_t more = tn__file_read(fn, path, r, extra, sizeof extra);
    if (more != 0) {
        TN__FREE_BUF();
        if (more < 0) return NULL;
        int64_t left = r->f ? tn__file_left(r) : -1;
        return (char *)tn__error("%s: '%s' has %s%lld bytes after the %lld bytes of data the header describes", fn, path,
                                 left < 0 ? "at least " : "", (long long)(more + (left > 0 ? left : 0)), (long long)n);
    }
    return buf;
#undef TN__FREE_BUF
}
static char *tn__file_read_exact(const char *fn, const char *path, tn__file *r, int64_t n) { return tn__file_read_into(fn, path, r, n, NULL); }
