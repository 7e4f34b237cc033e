/* Tests of tn_load_pt / tn_save_pt (PyTorch's .pt zip format): files written by real
   PyTorch (tests/data/pt_*.pt, made by tests/data/make_pt_fixtures.py: values are the
   formulas below), views sharing a storage, float16/bfloat16 kept, nested objects,
   deflated entries, round trips through tn_save_pt with the file's bytes checked against
   the zip layout torch writes, and hostile inputs: pickles naming os.system and
   builtins.eval, legacy files, every truncation and bit flips of a real file (refused or
   loaded, never a crash: run under SANITIZE=1 too). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>
#include <stdint.h>

static char tmpdir[256];
static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int which;
    char *b = buf[which++ & 3];
    snprintf(b, 512, "%s/%s", tmpdir, name);
    return b;
}
static unsigned char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = (unsigned char *)malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}
static void write_file(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(b, 1, n, f); fclose(f); }
}
static double at(tn_tensor *t, int64_t i, int64_t j) {   /* element [i] or [i, j] through the strides */
    int64_t off = i * (tn_ndim(t) > 0 ? tn_strides(t)[0] : 0) + (tn_ndim(t) > 1 ? j * tn_strides(t)[1] : 0);
    const char *p = (const char *)tn_data_ptr(t) + off * (int64_t)tn_dtype_size(tn_get_dtype(t));
    switch (tn_get_dtype(t)) {
    case TN_F32: return *(const float *)p;
    case TN_F64: return *(const double *)p;
    case TN_I32: return *(const int32_t *)p;
    case TN_I64: return (double)*(const int64_t *)p;
    case TN_U8: return *(const uint8_t *)p;
    case TN_BOOL: return *(const bool *)p;
    case TN_F16: return tn_half_to_float(*(const uint16_t *)p);
    case TN_BF16: return tn_bfloat16_to_float(*(const uint16_t *)p);
    default: return NAN;
    }
}
static bool shape_is(tn_tensor *t, int ndim, int64_t a, int64_t b) {
    return t && tn_ndim(t) == ndim && (ndim < 1 || tn_shape(t)[0] == a) && (ndim < 2 || tn_shape(t)[1] == b);
}

/* The state dict of make_pt_fixtures.py's state(), as read from any of its files. */
static void check_state(tn_dict *d, bool from_torch) {
    CHECK(d && tn_dict_len(d) == 13);
    if (!d) return;
    const char *order[] = {"w", "wt", "row", "d", "i", "n", "b", "u", "i32", "h", "bf", "e", "p"};
    for (int k = 0; k < 13; k++) CHECK(!strcmp(tn_dict_key(d, k), order[k]));
    tn_tensor *w = tn_dict_get(d, "w"), *wt = tn_dict_get(d, "wt"), *row = tn_dict_get(d, "row");
    CHECK(shape_is(w, 2, 3, 4) && tn_get_dtype(w) == TN_F32 && tn_strides(w)[0] == 4 && tn_strides(w)[1] == 1);
    CHECK(shape_is(wt, 2, 4, 3) && tn_strides(wt)[0] == 1 && tn_strides(wt)[1] == 4 && !tn_is_contiguous(wt));
    CHECK(shape_is(row, 1, 4, 0) && tn_storage_offset(row) - tn_storage_offset(w) == 4);
    CHECK(tn_same_storage(w, wt) && tn_same_storage(w, row));   /* one storage, as in the file */
    bool ok = true;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) ok = ok && at(w, i, j) == (i * 4 + j) / 4.0 && at(wt, j, i) == (i * 4 + j) / 4.0;
    for (int j = 0; j < 4; j++) ok = ok && at(row, j, 0) == (4 + j) / 4.0;
    CHECK(ok);
    tn_tensor *dd = tn_dict_get(d, "d");
    CHECK(shape_is(dd, 1, 5, 0) && tn_get_dtype(dd) == TN_F64 && at(dd, 3, 0) == 1.5);
    tn_tensor *i = tn_dict_get(d, "i");
    CHECK(tn_get_dtype(i) == TN_I64 && at(i, 0, 0) == -3 && at(i, 2, 0) == 1099511627776.0);
    tn_tensor *n = tn_dict_get(d, "n");
    CHECK(shape_is(n, 0, 0, 0) && tn_get_dtype(n) == TN_I64 && at(n, 0, 0) == 5);
    CHECK(tn_get_dtype(tn_dict_get(d, "b")) == TN_BOOL && at(tn_dict_get(d, "b"), 0, 0) == 1 && at(tn_dict_get(d, "b"), 1, 0) == 0);
    CHECK(tn_get_dtype(tn_dict_get(d, "u")) == TN_U8 && at(tn_dict_get(d, "u"), 1, 0) == 255);
    CHECK(tn_get_dtype(tn_dict_get(d, "i32")) == TN_I32 && at(tn_dict_get(d, "i32"), 0, 0) == -1);
    /* half precision keeps its dtype, as torch.load's (float32 before 0.2.0) */
    tn_tensor *h = tn_dict_get(d, "h"), *bf = tn_dict_get(d, "bf");
    CHECK(shape_is(h, 1, 4, 0) && tn_get_dtype(h) == TN_F16 && at(h, 1, 0) == 0.5 && at(h, 3, 0) == 1.5);
    CHECK(shape_is(bf, 1, 3, 0) && tn_get_dtype(bf) == TN_BF16 && at(bf, 0, 0) == -1 && at(bf, 2, 0) == 1);
    CHECK(shape_is(tn_dict_get(d, "e"), 2, 0, 3));
    tn_tensor *p = tn_dict_get(d, "p");
    CHECK(shape_is(p, 1, 2, 0) && at(p, 1, 0) == 1);
    if (from_torch) CHECK(tn_requires_grad(p));   /* an nn.Parameter: torch._utils._rebuild_parameter */
}

TEST(load_torch_files) {
    tn_dict *d = tn_load_pt("tests/data/pt_state.pt");
    CHECK_MSG(d, "%s", tn_last_error());
    check_state(d, true);
    tn_dict_free(d);
#ifdef TENSOR_ZLIB
    d = tn_load_pt("tests/data/pt_deflate.pt");
    CHECK_MSG(d, "%s", tn_last_error());
    check_state(d, true);
    tn_dict_free(d);
#else
    CHECK_ERR(tn_load_pt("tests/data/pt_deflate.pt"), "build with -DTENSOR_ZLIB");
#endif
    /* {"model": {"a": ones(2)}, "epoch": 3, "lr": 0.5, "name": "x", "none": None, "list": [ones(1), 2]} */
    d = tn_load_pt("tests/data/pt_nested.pt");
    CHECK_MSG(d, "%s", tn_last_error());
    if (d) {
        CHECK(tn_dict_len(d) == 5);
        CHECK(!strcmp(tn_dict_key(d, 0), "model.a") && shape_is(tn_dict_get(d, "model.a"), 1, 2, 0));
        CHECK(tn_get_dtype(tn_dict_get(d, "epoch")) == TN_I64 && at(tn_dict_get(d, "epoch"), 0, 0) == 3);
        CHECK(tn_get_dtype(tn_dict_get(d, "lr")) == TN_F64 && at(tn_dict_get(d, "lr"), 0, 0) == 0.5);
        CHECK(tn_dict_get_meta(d, "name") && !strcmp(tn_dict_get_meta(d, "name"), "x"));
        CHECK(!tn_dict_contains(d, "none") && tn_dict_get(d, "list.0") && at(tn_dict_get(d, "list.1"), 0, 0) == 2);
    }
    tn_dict_free(d);
}

TEST(roundtrip) {
    tn_dict *d = tn_load_pt("tests/data/pt_state.pt");
    CHECK(d && tn_save_pt(tmp_path("a.pt"), d) == 0);
    tn_dict *back = tn_load_pt(tmp_path("a.pt"));
    CHECK_MSG(back, "%s", tn_last_error());
    check_state(back, false);
    tn_dict_free(back);
    tn_dict_free(d);
    /* the layout torch writes: entries under "archive/", data 64-byte aligned, zip64 end records */
    size_t n;
    unsigned char *b = read_file(tmp_path("a.pt"), &n);
    CHECK(b && n > 100 && !memcmp(b, "PK\3\4", 4) && !memcmp(b + 30, "archive/data.pkl", 16));
    bool aligned = true;
    int entries = 0;
    for (size_t k = 0; b && k + 30 < n; k++)
        if (!memcmp(b + k, "PK\3\4", 4)) {
            size_t nl = b[k + 26] | b[k + 27] << 8, xl = b[k + 28] | b[k + 29] << 8;
            aligned = aligned && (k + 30 + nl + xl) % 64 == 0;
            entries++;
        }
    CHECK_MSG(aligned && entries == 3 + 11, "aligned %d, %d entries", aligned, entries);   /* data.pkl, byteorder, version and one per storage (w, wt, row share one) */
    bool z64 = false;
    for (size_t k = 0; b && k + 4 <= n; k++) z64 = z64 || !memcmp(b + k, "PK\6\6", 4);
    CHECK(z64);
    free(b);
    /* views saved from here: a small view of a big storage saves the span it uses */
    tn_scope_begin();
    tn_tensor *base = tn_arange(0, 100, 1, TN_F64);
    tn_dict *v = tn_dict_new();
    tn_dict_set(v, "mid", tn_slice(base, 0, 10, 20, 2));
    tn_dict_set(v, "grid", tn_transpose(tn_view(tn_slice(base, 0, 12, 24, 1), TN_SHAPE(3, 4)), 0, 1));
    tn_dict_set(v, "zero_d", tn_select(base, 0, 50));
    tn_dict_set(v, "empty", tn_slice(base, 0, 99, 99, 1));
    tn_dict_set(v, "own", tn_ones(TN_SHAPE(2, 2), TN_I32));
    CHECK(tn_save_pt(tmp_path("v.pt"), v) == 0);
    tn_dict *vb = tn_load_pt(tmp_path("v.pt"));
    CHECK_MSG(vb, "%s", tn_last_error());
    if (vb) {
        tn_tensor *mid = tn_dict_get(vb, "mid"), *grid = tn_dict_get(vb, "grid"), *z = tn_dict_get(vb, "zero_d");
        CHECK(shape_is(mid, 1, 5, 0) && tn_strides(mid)[0] == 2 && at(mid, 4, 0) == 18);
        CHECK(shape_is(grid, 2, 4, 3) && tn_strides(grid)[0] == 1 && tn_strides(grid)[1] == 4 && at(grid, 1, 2) == 12 + 2 * 4 + 1);
        CHECK(shape_is(z, 0, 0, 0) && at(z, 0, 0) == 50);
        CHECK(tn_same_storage(mid, grid) && tn_same_storage(mid, z) && !tn_same_storage(mid, tn_dict_get(vb, "own")));
        CHECK(tn_numel(tn_dict_get(vb, "empty")) == 0 && at(tn_dict_get(vb, "own"), 1, 1) == 1);
        /* the storage written is the span [10, 51), not the 100 elements */
        CHECK(tn_storage_offset(mid) == 0 && tn_storage_offset(z) == 40);
    }
    tn_dict_free(vb);
    tn_dict_free(v);
    tn_scope_end();
}

TEST(hostile) {
    CHECK_ERR(tn_load_pt("tests/data/pt_hostile_system.pt"), "refusing the global 'posix.system'");
    CHECK_ERR(tn_load_pt("tests/data/pt_hostile_eval.pt"), "refusing the global 'builtins.eval'");
    CHECK_ERR(tn_load_pt("tests/data/pt_legacy.pt"), "legacy format from before 1.6");
    CHECK_ERR(tn_load_pt(tmp_path("missing.pt")), "cannot open");
    CHECK_ERR(tn_load_pt(NULL), "path is NULL");
    CHECK_ERR(tn_save_pt(NULL, NULL) == 0, "need a path and a dict");
    tn_dict *e = tn_dict_new();
    CHECK_ERR(tn_save_pt(tmp_path("no/such/dir.pt"), e) == 0, "cannot create");
    tn_dict_free(e);
    /* another format */
    tn_scope_begin();
    tn_dict *s = tn_dict_new();
    tn_dict_set(s, "x", tn_ones(TN_SHAPE(2), TN_F32));
    tn_safetensors_save(tmp_path("s.safetensors"), s);
    tn_dict_free(s);
    tn_scope_end();
    CHECK_ERR(tn_load_pt(tmp_path("s.safetensors")), "this is a safetensors file");
    write_file(tmp_path("text.pt"), (const unsigned char *)"hello world, not a zip", 22);
    CHECK_ERR(tn_load_pt(tmp_path("text.pt")), "not a PyTorch zip file (22 bytes, starting 68 65 6c 6c)");
    write_file(tmp_path("empty.pt"), (const unsigned char *)"", 0);
    CHECK_ERR(tn_load_pt(tmp_path("empty.pt")), "not a PyTorch zip file (0 bytes)");
    CHECK_ERR(tn_load_pt(tmpdir), "Is a directory");
    /* every truncation of a real file is refused; bit flips are refused or load, never crash */
    size_t n;
    unsigned char *b = read_file("tests/data/pt_state.pt", &n);
    CHECK(b != NULL);
    int truncated_ok = 0;
    for (size_t k = 0; b && k < n; k += k < 200 || n - k < 200 ? 1 : 7) {
        write_file(tmp_path("cut.pt"), b, k);
        tn_dict *d = tn_load_pt(tmp_path("cut.pt"));
        if (d) { truncated_ok++; tn_dict_free(d); }
    }
    CHECK_MSG(truncated_ok == 0, "%d truncations loaded", truncated_ok);
    tn_dict *orig = tn_load_pt("tests/data/pt_state.pt");
    uint32_t rng = 12345;
    int refused = 0, loaded = 0;
    for (int k = 0; b && k < 600; k++) {
        unsigned char *c = (unsigned char *)malloc(n);
        memcpy(c, b, n);
        for (int f = 0; f < 1 + k % 3; f++) {
            rng = rng * 1103515245u + 12345u;
            size_t pos = (rng >> 8) % n;
            c[pos] ^= (unsigned char)(1u << (rng >> 3 & 7));
        }
        write_file(tmp_path("flip.pt"), c, n);
        free(c);
        tn_dict *d = tn_load_pt(tmp_path("flip.pt"));
        if (!d) { refused++; continue; }
        /* a flip that loads touched only what carries no data (padding, dates, ...) */
        bool same = tn_dict_len(d) == tn_dict_len(orig);
        for (int i = 0; same && i < tn_dict_len(d); i++) {
            tn_tensor *x = tn_dict_value(d, i), *y = tn_dict_value(orig, i);
            same = !strcmp(tn_dict_key(d, i), tn_dict_key(orig, i)) && tn_get_dtype(x) == tn_get_dtype(y) && tn_storage_offset(x) == tn_storage_offset(y) &&
                   tn_ndim(x) == tn_ndim(y) && !memcmp(tn_strides(x), tn_strides(y), (size_t)tn_ndim(x) * sizeof(int64_t));
            tn_scope_begin();
            same = same && tn_equal(x, y);
            tn_scope_end();
        }
        CHECK_MSG(same, "flip %d loaded different data", k);
        loaded++;
        tn_dict_free(d);
    }
    CHECK_MSG(refused > 300 && loaded + refused == 600, "%d refused, %d loaded", refused, loaded);   /* the CRC-32s and the directory catch most */
    tn_dict_free(orig);
    free(b);
}

/* A zip holding archive/data.pkl = pkl (and a version record), stored, CRCs right:
   hostile pickles that pass the zip's checks. */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) { c ^= p[i]; for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1; }
    return ~c;
}
static void put(unsigned char **w, uint64_t v, int bytes) { for (int k = 0; k < bytes; k++) *(*w)++ = (unsigned char)(v >> (8 * k)); }
static const char *pickle_file(const unsigned char *pkl, size_t pn, const unsigned char *data0, size_t dn) {
    static unsigned char buf[8192];
    const char *names[3] = {"archive/data.pkl", "archive/version", "archive/data/0"};
    const unsigned char *datas[3] = {pkl, (const unsigned char *)"3\n", data0};
    size_t sizes[3] = {pn, 2, dn}, offs[3];
    int count = data0 ? 3 : 2;
    unsigned char *w = buf;
    for (int e = 0; e < count; e++) {
        offs[e] = (size_t)(w - buf);
        put(&w, 0x04034b50, 4); put(&w, 20, 2); put(&w, 0, 2); put(&w, 0, 2); put(&w, 0, 4);
        put(&w, crc32_of(datas[e], sizes[e]), 4); put(&w, sizes[e], 4); put(&w, sizes[e], 4);
        put(&w, strlen(names[e]), 2); put(&w, 0, 2);
        memcpy(w, names[e], strlen(names[e])); w += strlen(names[e]);
        memcpy(w, datas[e], sizes[e]); w += sizes[e];
    }
    size_t cd = (size_t)(w - buf);
    for (int e = 0; e < count; e++) {
        put(&w, 0x02014b50, 4); put(&w, 20, 2); put(&w, 20, 2); put(&w, 0, 2); put(&w, 0, 2); put(&w, 0, 4);
        put(&w, crc32_of(datas[e], sizes[e]), 4); put(&w, sizes[e], 4); put(&w, sizes[e], 4);
        put(&w, strlen(names[e]), 2); put(&w, 0, 2); put(&w, 0, 2); put(&w, 0, 2); put(&w, 0, 2); put(&w, 0, 4);
        put(&w, offs[e], 4);
        memcpy(w, names[e], strlen(names[e])); w += strlen(names[e]);
    }
    size_t cdn = (size_t)(w - buf) - cd;
    put(&w, 0x06054b50, 4); put(&w, 0, 4); put(&w, (uint64_t)count, 2); put(&w, (uint64_t)count, 2); put(&w, cdn, 4); put(&w, cd, 4); put(&w, 0, 2);
    write_file(tmp_path("p.pt"), buf, (size_t)(w - buf));
    return tmp_path("p.pt");
}
#define PKL(s) (const unsigned char *)(s), sizeof(s) - 1

TEST(hostile_pickles) {
    /* a good one first: {"x": tensor(storage of 2 floats)} written by hand */
    const float two[2] = {1.5f, -2};
    const char *ok = pickle_file(PKL("\x80\x02}(X\x01\x00\x00\x00xctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                                     "X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x02tQK\x00K\x02\x85K\x01\x85\x89}tRu."), (const unsigned char *)two, 8);
    tn_dict *d = tn_load_pt(ok);
    CHECK_MSG(d && at(tn_dict_get(d, "x"), 1, 0) == -2, "%s", tn_last_error());
    tn_dict_free(d);
    struct { const char *pkl; size_t n; const char *err; } bad[] = {
#define BAD(s, e) {s, sizeof(s) - 1, e}
        BAD("\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00idR.", "refusing the global 'os.system'"),
        BAD("\x80\x04X\x08\x00\x00\x00" "builtinsX\x04\x00\x00\x00" "exec\x93.", "refusing the global 'builtins.exec'"),
        BAD("\x80\x02" "ctorch\nQInt8Storage\n.", "QInt8Storage: tensors of this dtype are not supported"),   /* complex storages load since issue 26 */
        BAD("\x80\x02(i__main__\nX\n.", "opcode 0x69 ('i') is not part"),
        BAD("\x80\x02]q\x00h\x00" "a.", "the object is nested deeper than 64"),         /* a list holding itself */
        BAD("\x80\x02}X\x01\x00\x00\x00" "a", "truncated"),
        BAD("\x80\x02X\xff\xff\xff\x7f", "runs past the pickle's end"),
        BAD("\x80\x02h\x05.", "memo index 5 was never stored"),
        BAD("\x80\x02r\xff\xff\xff\x7f.", "memo put from an empty stack"),
        BAD("\x80\x02N\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.", "does not fit in int64"),
        BAD("\x80\x02t.", "no MARK"),
        BAD("\x80\x02\x87.", "TUPLE3 from a short stack"),
        BAD("\x80\x02Ns.", "SETITEM without a container"),
        BAD("\x80\x02NK\x01" "a.", "APPEND on a None"),
        BAD("\x80\x02NN.", "STOP with 2 values"),
        BAD("\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "9X\x03\x00\x00\x00" "cpuK\x02tQ.", "storage '9' has no entry"),
        BAD("\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x03tQ.", "does not match its entry's 8 bytes"),
        BAD("\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpu\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40tQ.", "does not match"),
        /* a view past its storage, a huge size, a negative stride */
        BAD("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x02tQK\x01K\x02\x85K\x01\x85\x89}tR.", "does not fit in its storage"),
        BAD("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x02tQK\x00\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x40\x86K\x01K\x01\x86\x89}tR.", "does not fit in its storage"),
        BAD("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x02tQK\x01K\x02\x85J\xff\xff\xff\xff\x85\x89}tR.", "does not fit in its storage"),
        BAD("\x80\x02" "ctorch._utils\n_rebuild_tensor_v2\n(K\x01tR.", "_rebuild_tensor_v2 needs"),
        BAD("\x80\x02" "ccollections\nOrderedDict\nK\x01\x85R.", "takes no arguments"),
        BAD("\x80\x02]K\x01" "b.", "BUILD of a list"),
        BAD("\x80\x02}(K\x01K\x02N\x85K\x03u.", "a dict key of type tuple"),
#undef BAD
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        tn_clear_error();
        tn_dict *r = tn_load_pt(pickle_file((const unsigned char *)bad[k].pkl, bad[k].n, (const unsigned char *)two, 8));
        CHECK_MSG(!r && strstr(tn_last_error(), bad[k].err), "case %zu: want '%s', got '%s'", k, bad[k].err, tn_last_error());
        tn_dict_free(r);
    }
    /* every truncation of the good pickle (zip intact, pickle cut) is refused */
    const char *good = "\x80\x02}(X\x01\x00\x00\x00xctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
                       "X\x01\x00\x00\x00" "0X\x03\x00\x00\x00" "cpuK\x02tQK\x00K\x02\x85K\x01\x85\x89}tRu.";
    size_t gn = 0;
    while (good[gn] != '.' || good[gn - 1] != 'u') gn++;
    int loaded = 0;
    for (size_t k = 0; k <= gn; k++) {
        tn_dict *r = tn_load_pt(pickle_file((const unsigned char *)good, k, (const unsigned char *)two, 8));
        if (r) { loaded++; tn_dict_free(r); }
    }
    CHECK_MSG(loaded == 0, "%d cut pickles loaded", loaded);
    /* every single-byte change of it: refused or loaded, never a crash (ASan watches) */
    unsigned char c[256];
    for (size_t k = 0; k <= gn; k++)
        for (int v = 0; v < 256; v += 17) {
            memcpy(c, good, gn + 1);
            c[k] = (unsigned char)v;
            tn_dict *r = tn_load_pt(pickle_file(c, gn + 1, (const unsigned char *)two, 8));
            tn_dict_free(r);
        }
}

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tn_test_pt_XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) { printf("cannot make a temporary directory %s\n", tmpdir); return 1; }
    int64_t live = tn_memory_stats_get().live_tensors;
    RUN(load_torch_files);
    RUN(roundtrip);
    RUN(hostile);
    RUN(hostile_pickles);
    tn_test_current = "leaks";
    CHECK_MSG(tn_memory_stats_get().live_tensors == live, "%lld tensors leaked", (long long)(tn_memory_stats_get().live_tensors - live));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return tn_test_report();
}
