/* Tests of the safetensors reader and writer (section 15): round trips of every dtype,
   byte-exact output against fixtures built by hand from the format's spec, the
   memory-mapped load (aliasing, lifetime, copy-on-write), hostile files (each refused
   with its message; buffers are exactly sized so ASan sees any overread), and files
   exchanged with Python readers and writers written from the spec. */
#define _POSIX_C_SOURCE 200809L /* popen, mkdtemp */
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

static bool same_tensor(tn_tensor *a, tn_tensor *b) {
    if (!a || !b || tn_get_dtype(a) != tn_get_dtype(b) || tn_ndim(a) != tn_ndim(b)) return false;
    for (int i = 0; i < tn_ndim(a); i++) if (tn_shape(a)[i] != tn_shape(b)[i]) return false;
    if (!tn_is_contiguous(b)) return false;
    /* compare a's elements in row-major order with b's bytes (a may be strided) */
    size_t es = tn_dtype_size(tn_get_dtype(a));
    int64_t n = tn_numel(a), idx[TN_MAX_DIMS] = {0};
    const char *pb = (const char *)tn_data_ptr(b);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < tn_ndim(a); d++) off += idx[d] * tn_strides(a)[d];
        if (memcmp((const char *)tn_data_ptr(a) + off * (int64_t)es, pb + k * (int64_t)es, es)) return false;
        for (int d = tn_ndim(a) - 1; d >= 0; d--) { if (++idx[d] < tn_shape(a)[d]) break; idx[d] = 0; }
    }
    return true;
}

static char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = (char *)malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

/* Every dtype, 0-d, 0-sized, non-contiguous: the dict the round trips use. */
static tn_dict *sample_dict(void) {
    tn_dict *d = tn_dict_new();
    float f32[6] = {1.5f, -2, 3, 4, 5, 6.25f};
    double f64[3] = {1.0 / 3, -1e300, 2.5};
    int32_t i32[4] = {-7, 8, INT32_MAX, INT32_MIN};
    int64_t i64[4] = {9007199254740993LL, -5, 0, 1};
    uint8_t u8[3] = {0, 255, 7};
    bool b[3] = {true, false, true};
    uint16_t f16[4] = {0x3C00, 0xC000, 0x3800, 0x7BFF}, bf16[3] = {0x3F80, 0xC000, 0x4049};
    tn_dict_set(d, "f32", tn_from_data(f32, TN_SHAPE(2, 3), TN_F32));
    tn_dict_set(d, "f64", tn_from_data(f64, TN_SHAPE(3), TN_F64));
    tn_dict_set(d, "i32", tn_from_data(i32, TN_SHAPE(2, 2), TN_I32));
    tn_dict_set(d, "i64", tn_from_data(i64, TN_SHAPE(4), TN_I64));
    tn_dict_set(d, "u8", tn_from_data(u8, TN_SHAPE(3), TN_U8));
    tn_dict_set(d, "bool", tn_from_data(b, TN_SHAPE(3), TN_BOOL));
    tn_dict_set(d, "f16", tn_from_data(f16, TN_SHAPE(2, 2), TN_F16));
    tn_dict_set(d, "bf16", tn_from_data(bf16, TN_SHAPE(3), TN_BF16));
    tn_dict_set(d, "scalar", tn_scalar_tensor(42, TN_F32));
    tn_dict_set(d, "empty", tn_zeros(TN_SHAPE(0, 3), TN_I64));
    tn_dict_set(d, "t", tn_transpose(tn_from_data(f32, TN_SHAPE(2, 3), TN_F32), 0, 1));       /* [3, 2], strided */
    tn_dict_set(d, "t16", tn_transpose(tn_from_data(f16, TN_SHAPE(2, 2), TN_F16), 0, 1));     /* strided half */
    tn_dict_set(d, "layer.0.weight", tn_slice(tn_arange(0, 20, 1, TN_F64), 0, 1, 20, 3));     /* offset and step */
    tn_dict_set_meta(d, "format", "pt");
    tn_dict_set_meta(d, "note", "caf\xc3\xa9 \"quoted\" back\\slash\nnew line");
    return d;
}

static void check_same_dict(tn_dict *want, tn_dict *got) {
    CHECK(got && tn_dict_len(got) == tn_dict_len(want));
    for (int i = 0; got && i < tn_dict_len(want); i++) {
        const char *k = tn_dict_key(want, i);
        CHECK_MSG(same_tensor(tn_dict_value(want, i), tn_dict_get(got, k)), "tensor '%s' differs", k);
    }
    CHECK(got && tn_dict_meta_len(got) == tn_dict_meta_len(want));
    for (int i = 0; got && i < tn_dict_meta_len(want); i++) {
        const char *k = tn_dict_meta_key(want, i), *v = tn_dict_get_meta(got, k);
        CHECK_MSG(v && !strcmp(v, tn_dict_get_meta(want, k)), "metadata '%s' differs", k);
    }
}

TEST(roundtrip) {
    tn_scope_begin();
    tn_dict *d = sample_dict();
    CHECK(tn_safetensors_save(tmp_path("all.safetensors"), d) == 0);
    tn_dict *m = tn_safetensors_load(tmp_path("all.safetensors"));
    check_same_dict(d, m);
    size_t n = 0, fn = 0;
    char *bytes = tn_safetensors_serialize(d, &n);
    char *file = read_file(tmp_path("all.safetensors"), &fn);
    CHECK(bytes && n == fn && !memcmp(bytes, file, n));  /* save writes exactly the serialized bytes */
    uint64_t hn = 0;
    for (int k = 7; k >= 0; k--) hn = hn << 8 | (unsigned char)bytes[k];
    CHECK(hn % 8 == 0);  /* the data starts 8-byte aligned */
    tn_dict *b = tn_safetensors_load_buffer(bytes, n);
    check_same_dict(d, b);
    /* the buffer loader copies: the bytes may go away */
    memset(bytes, 0, n);
    CHECK(same_tensor(tn_dict_get(d, "f32"), tn_dict_get(b, "f32")));
    tn_string_free(bytes);
    free(file);
    tn_dict_free(b);
    tn_dict_free(m);
    /* overwriting a file; an empty dict */
    tn_dict *e = tn_dict_new();
    CHECK(tn_safetensors_save(tmp_path("all.safetensors"), e) == 0);
    m = tn_safetensors_load(tmp_path("all.safetensors"));
    CHECK(m && tn_dict_len(m) == 0 && tn_dict_meta_len(m) == 0);
    tn_dict_free(m);
    tn_dict_free(e);
    tn_dict_free(d);
    tn_scope_end();
}

/* The file bytes for header text h (its length is the header size) and data. */
static char *bytes_of(const char *h, const void *data, size_t dn, size_t *n) {
    size_t hl = strlen(h);
    *n = 8 + hl + dn;
    char *b = (char *)malloc(*n);
    for (int k = 0; k < 8; k++) b[k] = (char)((uint64_t)hl >> (8 * k) & 0xFF);
    memcpy(b + 8, h, hl);
    if (dn) memcpy(b + 8 + hl, data, dn);
    return b;
}

/* d serializes to header h, padded with spaces to a multiple of 8 as the spec says, then data. */
static bool serializes_to(tn_dict *d, const char *h, const void *data, size_t dn) {
    size_t n, wn;
    char padded[2048];
    snprintf(padded, sizeof padded, "%s", h);
    while (strlen(padded) % 8) strcat(padded, " ");
    char *want = bytes_of(padded, data, dn, &wn);
    char *got = tn_safetensors_serialize(d, &n);
    bool ok = got && n == wn && !memcmp(got, want, n);
    if (!ok && got) printf("    got header: %.*s\n", (int)(n > 8 ? n - 8 : 0), got + 8);
    tn_string_free(got);
    free(want);
    return ok;
}

TEST(fixture_bytes) {
    tn_scope_begin();
    /* the reference implementation's own test vectors */
    float v[6] = {0, 1, 2, 3, 4, 5};
    const unsigned char le[24] = {0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64};
    tn_dict *d = tn_dict_new();
    tn_dict_set(d, "attn.0", tn_from_data(v, TN_SHAPE(1, 2, 3), TN_F32));
    const char *h1 = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
    CHECK(strlen(h1) == 64 && serializes_to(d, h1, le, 24));
    tn_dict_free(d);
    d = tn_dict_new();
    tn_dict_set(d, "attn0", tn_from_data(v, TN_SHAPE(1, 1, 2, 3), TN_F32));
    CHECK(serializes_to(d, "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ", le, 24));
    tn_dict_free(d);
    d = tn_dict_new();
    CHECK(serializes_to(d, "{}      ", NULL, 0));
    tn_dict_set_meta(d, "framework", "pt");
    CHECK(serializes_to(d, "{\"__metadata__\":{\"framework\":\"pt\"}}     ", NULL, 0));
    /* the Python package's order: by dtype alignment (descending), then by name */
    int64_t c = -2;
    float a = 1.5f;
    uint8_t bb[2] = {1, 2};
    tn_dict_set(d, "b", tn_from_data(bb, TN_SHAPE(2), TN_U8));
    tn_dict_set(d, "a2", tn_zeros(TN_SHAPE(0), TN_F32));
    tn_dict_set(d, "a", tn_from_data(&a, TN_SHAPE(1), TN_F32));
    tn_dict_set(d, "c", tn_from_data(&c, TN_SHAPE(1), TN_I64));
    tn_dict_set(d, "we\"ird\n\x01", tn_scalar_tensor(1, TN_BOOL));
    unsigned char data[15];
    memcpy(data, &c, 8);
    memcpy(data + 8, &a, 4);
    data[12] = 1;
    data[13] = 2;
    data[14] = 1;
    CHECK(serializes_to(d, "{\"__metadata__\":{\"framework\":\"pt\"},"
                           "\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                           "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]},"
                           "\"a2\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[12,12]},"
                           "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[12,14]},"
                           "\"we\\\"ird\\n\\u0001\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[14,15]}}", data, 15));
    /* and reading a hand-built file in any order, with whitespace and escapes */
    const char *h = " {\n \"z\" : {\"data_offsets\": [4, 6], \"shape\": [2], \"dtype\": \"U8\", \"extra\": {\"a\": [1, 2.5e3, null, true]}},\n"
                    "  \"__metadata__\": {\"k\\u00e9y\": \"v\\/\\t\\ud83d\\ude00\"},\n  \"y\\u0041\": {\"dtype\": \"I32\", \"shape\": [], \"data_offsets\": [0, 4]}\n}   ";
    unsigned char dd[6] = {0x78, 0x56, 0x34, 0x12, 9, 8};
    size_t n;
    char *buf = bytes_of(h, dd, 6, &n);
    tn_dict *r = tn_safetensors_load_buffer(buf, n);
    CHECK(r && tn_dict_len(r) == 2 && !strcmp(tn_dict_key(r, 0), "z") && !strcmp(tn_dict_key(r, 1), "yA"));
    CHECK(r && tn_item(tn_dict_get(r, "yA")) == 0x12345678 && tn_ndim(tn_dict_get(r, "yA")) == 0);
    CHECK(r && tn_item(tn_select(tn_dict_get(r, "z"), 0, 1)) == 8);
    const char *mv = r ? tn_dict_get_meta(r, "k\xc3\xa9y") : NULL;
    CHECK(mv && !strcmp(mv, "v/\t\xf0\x9f\x98\x80"));
    tn_dict_free(r);
    free(buf);
    tn_dict_free(d);
    tn_scope_end();
}

/* The [start, end) of path's mapping in /proc/self/maps that holds p, or 0. */
static int mapped_at(const char *path, const void *p) {
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[1024];
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char *name = strchr(line, '/');
        if (!name || sscanf(line, "%llx-%llx", &lo, &hi) != 2) continue;
        name[strcspn(name, "\n")] = 0;
        if (strcmp(name, path)) continue;
        found = found ? found : 1;
        if ((uintptr_t)p >= lo && (uintptr_t)p < hi) found = 2;
    }
    fclose(f);
    return found;  /* 0: no mapping of path, 1: mapped but not at p, 2: p is inside it */
}

TEST(mmap_lifetime) {
    tn_scope_begin();
    tn_dict *d = sample_dict();
    const char *path = tmp_path("map.safetensors");
    char abspath[600];
    snprintf(abspath, sizeof abspath, "%s", path);
    CHECK(tn_safetensors_save(abspath, d) == 0);
    if (mapped_at("/", NULL) < 0) { printf("skipped: mapping checks (no /proc/self/maps)\n"); tn_dict_free(d); tn_scope_end(); return; }
    int64_t live = tn_memory_stats_get().live_tensors;
    tn_dict *m = tn_safetensors_load(abspath);
    tn_tensor *w = tn_dict_get(m, "f32"), *s = tn_dict_get(m, "i64");
    CHECK(mapped_at(abspath, tn_data_ptr(w)) == 2 && mapped_at(abspath, tn_data_ptr(s)) == 2);  /* aliases the file */
    CHECK(tn_get_device(w) == TN_CPU && tn_is_contiguous(w));
    /* the mapping outlives the dict while a tensor lives */
    tn_retain(w);
    tn_dict_free(m);
    CHECK(mapped_at(abspath, tn_data_ptr(w)) == 2);
    CHECK(same_tensor(tn_dict_get(d, "f32"), w));
    /* copy-on-write: writing to the tensor leaves the file alone */
    tn_scope_begin();
    CHECK(tn_mul_scalar_(w, 2) != NULL);
    tn_scope_end();
    CHECK(((const float *)tn_data_ptr(w))[0] == 3.0f);
    tn_dict *again = tn_safetensors_load(abspath);
    CHECK(again && ((const float *)tn_data_ptr(tn_dict_get(again, "f32")))[0] == 1.5f);
    tn_dict_free(again);
    tn_release(w);
    CHECK(mapped_at(abspath, NULL) == 0);  /* unmapped with the last tensor */
    CHECK(tn_memory_stats_get().live_tensors == live);
    /* a file whose header size is not a multiple of 8: misaligned tensors are copies */
    float f[2] = {7.5f, -1};
    size_t n;
    char *b = bytes_of("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", f, 8, &n);
    FILE *fp = fopen(abspath, "wb");
    fwrite(b, 1, n, fp);
    fclose(fp);
    free(b);
    m = tn_safetensors_load(abspath);
    w = m ? tn_dict_get(m, "x") : NULL;
    CHECK(w && ((uintptr_t)tn_data_ptr(w) % 4) == 0 && ((const float *)tn_data_ptr(w))[0] == 7.5f);
    CHECK(mapped_at(abspath, tn_data_ptr(w)) != 2);
    tn_dict_free(m);
    CHECK(mapped_at(abspath, NULL) == 0);
    /* files that are not there or empty */
    CHECK_ERR(tn_safetensors_load(tmp_path("nope.safetensors")), "cannot open");
    fp = fopen(abspath, "wb");
    fclose(fp);
    CHECK_ERR(tn_safetensors_load(abspath), "0 bytes is too small for a safetensors file");
    CHECK_ERR(tn_safetensors_load(tmpdir), "is not a regular file");
    tn_dict_free(d);
    tn_scope_end();
}

/* Load a file made of header text h (its own length as the header size) and dn zero
   bytes of data, from a buffer of exactly that size. true if it loads. */
static bool st_ok(const char *h, size_t dn) {
    size_t n;
    char *zeros = (char *)calloc(dn + 1, 1);
    char *b = bytes_of(h, zeros, dn, &n);
    tn_dict *d = tn_safetensors_load_buffer(b, n);
    free(b);
    free(zeros);
    tn_dict_free(d);
    return d != NULL;
}
/* A raw file: the first 8 bytes as given. */
static bool raw_ok(const unsigned char *bytes, size_t n) {
    unsigned char *b = (unsigned char *)malloc(n ? n : 1);
    memcpy(b, bytes, n);
    tn_dict *d = tn_safetensors_load_buffer(b, n);
    free(b);
    tn_dict_free(d);
    return d != NULL;
}

#define T_(name, dt, shape, b, e) "\"" name "\":{\"dtype\":\"" dt "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

TEST(hostile) {
    tn_scope_begin();
    CHECK(st_ok("{" T_("a", "F32", "[2]", 0, 8) "}", 8));  /* the baseline loads */
    /* the header size */
    unsigned char r[16] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
    CHECK(raw_ok(r, 16));
    CHECK_ERR(raw_ok(r, 7), "7 bytes is too small for a safetensors file");
    CHECK_ERR(raw_ok(r, 0), "0 bytes is too small");
    r[0] = 9;
    CHECK_ERR(raw_ok(r, 16), "header size 9 goes past the end of the file (16 bytes)");
    unsigned char big[8] = {0x01, 0xE1, 0xF5, 0x05, 0, 0, 0, 0};  /* 100000001 */
    CHECK_ERR(raw_ok(big, 8), "header size 100000001 is larger than the limit of 100000000 bytes");
    unsigned char huge[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK_ERR(raw_ok(huge, 8), "header size 18446744073709551615 is larger than the limit");
    /* JSON syntax */
    CHECK_ERR(st_ok("{\"a\":{\"dtype\"\"F32\"}}", 0), "invalid header JSON at byte 21 ('\"'): expected ':'");
    CHECK_ERR(st_ok("[]", 0), "the header is not a JSON object");
    CHECK_ERR(st_ok("", 0), "the header is not a JSON object");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[2]", 0, 8) ",}", 8), "expected a string");
    CHECK_ERR(st_ok("{\"a", 0), "unterminated string");
    CHECK_ERR(st_ok("{\"a\\", 0), "unterminated string");
    CHECK_ERR(st_ok("{\"a\tb\":{}}", 0), "control character in a string");
    CHECK_ERR(st_ok("{\"a\\x\":{}}", 0), "invalid escape in a string");
    CHECK_ERR(st_ok("{\"a\\u12G4\":{}}", 0), "invalid \\u escape");
    CHECK_ERR(st_ok("{\"a\\u12", 0), "unterminated \\u escape");
    CHECK_ERR(st_ok("{\"a\\ud800\":{}}", 0), "lone leading surrogate");
    CHECK_ERR(st_ok("{\"a\\udc00\":{}}", 0), "lone trailing surrogate");
    CHECK_ERR(st_ok("{\"a\\ud800\\u0041\":{}}", 0), "invalid surrogate pair");
    CHECK_ERR(st_ok("{\"a\\u0000\":{}}", 0), "\\u0000 in a string is not supported");
    CHECK_ERR(st_ok("{} x", 0), "unexpected bytes after the JSON object");
    unsigned char nul[16] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', 0, 0, 0, 0, 0, 0};
    CHECK_ERR(raw_ok(nul, 16), "invalid header JSON at byte 10 (0x00): unexpected bytes after the JSON object");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\"", 0), "unexpected end of the header");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[01],\"data_offsets\":[0,4]}}", 4), "leading zero in a number");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.],\"data_offsets\":[0,4]}}", 4), "expected digits after '.'");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[1e],\"data_offsets\":[0,4]}}", 4), "expected digits in an exponent");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[-],\"data_offsets\":[0,4]}}", 4), "expected a number");
    CHECK_ERR(st_ok("{\"a\":{\"x\":tru,\"dtype\":\"F32\"}}", 0), "expected a number");
    CHECK_ERR(st_ok("{\"a\":{\"x\":[1 2]}}", 0), "expected ',' or ']'");
    {   /* invalid UTF-8: a stray continuation byte, an overlong form, a surrogate */
        CHECK_ERR(st_ok("{\"\x80\":{}}", 0), "the header is not valid UTF-8 (at byte 10)");
        CHECK_ERR(st_ok("{\"\xc0\xaf\":{}}", 0), "not valid UTF-8");
        CHECK_ERR(st_ok("{\"\xed\xa0\x80\":{}}", 0), "not valid UTF-8");
        CHECK_ERR(st_ok("{\"\xf0\x9f\x98\":{}}", 0), "not valid UTF-8");
    }
    /* nesting */
    char deep[400] = "{\"a\":{\"x\":";
    for (int i = 0; i < 70; i++) strcat(deep, "[");
    for (int i = 0; i < 70; i++) strcat(deep, "]");
    strcat(deep, "}}");
    CHECK_ERR(st_ok(deep, 0), "nesting deeper than 64 levels");
    /* duplicates */
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1]", 0, 4) "," T_("a", "F32", "[1]", 4, 8) "}", 8), "tensor name 'a' appears twice in the header");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4), "tensor 'a': field 'dtype' given twice");
    CHECK_ERR(st_ok("{\"__metadata__\":{},\"__metadata__\":{}}", 0), "\"__metadata__\" given twice");
    CHECK_ERR(st_ok("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0), "metadata key 'k' appears twice");
    /* missing or mistyped fields */
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4), "tensor 'a' has no 'shape'");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4), "tensor 'a' has no 'data_offsets'");
    CHECK_ERR(st_ok("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4), "tensor 'a' has no 'dtype'");
    CHECK_ERR(st_ok("{\"a\":{}}", 0), "tensor 'a' has no 'dtype'");
    CHECK_ERR(st_ok("{\"a\":[]}", 0), "expected '{' (a tensor's dtype, shape and data_offsets)");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4), "tensor 'a': dtype must be a string");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4), "expected '['");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4), "data_offsets has more than 2 entries");
    CHECK_ERR(st_ok("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", 4), "data_offsets must be [begin, end], got 1 numbers");
    /* dtypes */
    CHECK_ERR(st_ok("{" T_("a", "Q7", "[1]", 0, 4) "}", 4), "tensor 'a' has unknown dtype \"Q7\"");
    CHECK_ERR(st_ok("{" T_("a", "U32", "[1]", 0, 4) "}", 4), "tensor 'a' has dtype U32, which tensor.h does not support");
    CHECK_ERR(st_ok("{" T_("a", "U16", "[2]", 0, 4) "}", 4), "dtype U16, which tensor.h does not support");
    CHECK_ERR(st_ok("{" T_("a", "f32", "[1]", 0, 4) "}", 4), "unknown dtype \"f32\"");
    /* shapes */
    CHECK_ERR(st_ok("{" T_("a", "F32", "[-1]", 0, 4) "}", 4), "tensor 'a': shape holds -1, expected integers in [0, 2^63)");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[2.5]", 0, 4) "}", 4), "shape holds 2.5");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1e2]", 0, 4) "}", 4), "shape holds 1e2");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[99999999999999999999]", 0, 4) "}", 4), "shape holds 99999999999999999999");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[4611686018427387904,4]", 0, 4) "}", 4), "tensor 'a': shape [4611686018427387904, 4] overflows");
    CHECK_ERR(st_ok("{" T_("a", "U8", "[3037000500,3037000500]", 0, 4) "}", 4), "overflows");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", 0, 4) "}", 4),
              "shape has more than");   /* 65 entries: past any TN_MAX_DIMS */
    /* offsets */
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1]", 8, 4) "}", 8), "tensor 'a': data_offsets [8, 4] are reversed");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1]", 0, 1000) "}", 4), "data_offsets [0, 1000] go past the end of the data (4 bytes)");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1]", 0, 9223372036854775807) "}", 4), "go past the end of the data");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[1]", 0, -4) "}", 4), "data_offsets holds -4");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[4]", 0, 8) "}", 8), "tensor 'a': data_offsets [0, 8] hold 8 bytes, but shape [4] of F32 needs 16");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[4]", 0, 16) "," T_("b", "F32", "[4]", 8, 24) "}", 24), "tensor 'b': data_offsets [8, 24] overlap tensor 'a' (which ends at 16)");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[2]", 0, 8) "," T_("b", "F32", "[2]", 16, 24) "}", 24), "tensor 'b': data_offsets [16, 24] leave a hole: bytes [8, 16) belong to no tensor");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[2]", 4, 12) "}", 12), "leave a hole: bytes [0, 4)");
    CHECK_ERR(st_ok("{" T_("a", "F32", "[2]", 0, 8) "}", 12), "the tensors cover 8 bytes of data, but the file has 12 after the header");
    CHECK_ERR(st_ok("{}", 1), "the tensors cover 0 bytes of data, but the file has 1");
    CHECK(st_ok("{" T_("b", "F32", "[2]", 8, 16) "," T_("e", "F32", "[0]", 8, 8) "," T_("a", "F32", "[2]", 0, 8) "}", 16));  /* any order */
    /* metadata */
    CHECK_ERR(st_ok("{\"__metadata__\":{\"k\":1}}", 0), "metadata value of 'k' is not a string");
    CHECK_ERR(st_ok("{\"__metadata__\":{\"k\":{\"x\":\"y\"}}}", 0), "metadata value of 'k' is not a string");
    CHECK_ERR(st_ok("{\"__metadata__\":[\"k\"]}", 0), "\"__metadata__\" must be an object of strings");
    CHECK(st_ok("{\"__metadata__\":null}", 0));
    /* the file-path variant names the file */
    FILE *f = fopen(tmp_path("bad.safetensors"), "wb");
    fwrite("\x02\0\0\0\0\0\0\0{]", 1, 10, f);
    fclose(f);
    CHECK_ERR(tn_safetensors_load(tmp_path("bad.safetensors")), "bad.safetensors': invalid header JSON at byte 9 (']'): expected a string");
    CHECK_ERR(tn_safetensors_load_buffer(NULL, 8), "data is NULL");
    tn_scope_end();
}

TEST(save_errors) {
    tn_scope_begin();
    tn_dict *d = tn_dict_new();
    tn_dict_set(d, "w", NULL);
    CHECK_ERR(tn_safetensors_save(tmp_path("x.safetensors"), d) == 0, "tensor name 'w' has no tensor (NULL)");
    tn_dict_remove(d, "w");
    tn_dict_set(d, "__metadata__", tn_ones(TN_SHAPE(1), TN_F32));
    size_t n = 7;
    CHECK_ERR(tn_safetensors_serialize(d, &n), "tensor name '__metadata__' is reserved for the metadata");
    CHECK(n == 0);
    tn_dict_remove(d, "__metadata__");
    tn_dict_set(d, "bad\xff", tn_ones(TN_SHAPE(1), TN_F32));
    CHECK_ERR(tn_safetensors_serialize(d, &n), "is not valid UTF-8");
    tn_dict_remove(d, "bad\xff");
    tn_dict_set_meta(d, "k", "\xc3");
    CHECK_ERR(tn_safetensors_serialize(d, &n), "metadata 'k' is not valid UTF-8");
    tn_dict_free(d);
    d = tn_dict_new();
    tn_dict_set(d, "w", tn_ones(TN_SHAPE(2), TN_F32));
    CHECK_ERR(tn_safetensors_save("/nonexistent-dir/x.safetensors", d) == 0, "cannot create '/nonexistent-dir/x.safetensors.tmp'");
    CHECK_ERR(tn_safetensors_save(NULL, d) == 0, "need a path and a dict");
    CHECK_ERR(tn_safetensors_serialize(d, NULL), "need a dict and a size pointer");
    CHECK_ERR(tn_safetensors_load(NULL), "path is NULL");
    /* a failed save leaves an existing file as it was */
    CHECK(tn_safetensors_save(tmp_path("keep.safetensors"), d) == 0);
    tn_dict_set(d, "v", NULL);
    CHECK(tn_safetensors_save(tmp_path("keep.safetensors"), d) != 0);
    tn_dict *k = tn_safetensors_load(tmp_path("keep.safetensors"));
    CHECK(k && tn_dict_len(k) == 1);
    tn_dict_free(k);
    tn_dict_free(d);
    tn_scope_end();
}

/* Damaged copies of a valid file (bytes flipped, cut short, header size changed): each
   loads or is refused with a message, never read past its exact-size buffer (ASan). */
TEST(fuzz) {
    tn_scope_begin();
    tn_dict *d = sample_dict();
    size_t n;
    char *good = tn_safetensors_serialize(d, &n);
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    int loaded = 0, refused = 0, bad_msg = 0;
    for (int it = 0; it < 4000 && good; it++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t len = n;
        if (it % 4 == 1) len = (size_t)(seed >> 33) % (n + 1);
        unsigned char *b = (unsigned char *)malloc(len ? len : 1);
        memcpy(b, good, len);
        int flips = 1 + (int)((seed >> 20) % 4);
        for (int k = 0; k < flips && len && it % 4 != 1; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t at = (size_t)(seed >> 33) % (it % 4 == 2 && len > 8 ? (size_t)8 : len);
            static const char json_bytes[] = "{}[]\",:0123456789e-.\\ u";
            b[at] = it % 4 == 3 ? (unsigned char)json_bytes[(seed >> 13) % (sizeof json_bytes - 1)] : (unsigned char)(seed >> 40);
        }
        tn_clear_error();
        tn_dict *r = tn_safetensors_load_buffer(b, len);
        if (r) loaded++;
        else {
            refused++;
            if (strncmp(tn_last_error(), "tn_safetensors_load_buffer: ", 28)) bad_msg++;
        }
        tn_dict_free(r);
        free(b);
    }
    CHECK_MSG(refused > 2000 && loaded > 10 && bad_msg == 0, "%d loaded, %d refused, %d without the function's name", loaded, refused, bad_msg);
    tn_string_free(good);
    tn_dict_free(d);
    tn_scope_end();
}

/* Run a Python script (text) with arguments; its output in out. -1: no python/numpy. */
static int run_python(const char *script_name, const char *script, const char *args, char *out, size_t cap) {
    const char *sp = tmp_path(script_name);
    FILE *f = fopen(sp, "w");
    fputs(script, f);
    fclose(f);
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c 'import numpy' 2>/dev/null && /usr/bin/python3 '%s' %s 2>&1", sp, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return n == 0 && st != 0 ? -1 : st;
}

/* A reader written from the spec (struct + json + numpy), checking the file we wrote. */
static const char *py_reader =
    "import json, struct, sys\n"
    "import numpy as np\n"
    "b = open(sys.argv[1], 'rb').read()\n"
    "n = struct.unpack('<Q', b[:8])[0]\n"
    "assert n % 8 == 0 and n <= len(b) - 8\n"
    "h = json.loads(b[8:8 + n].decode('utf-8'))\n"
    "meta = h.pop('__metadata__', None)\n"
    "data = b[8 + n:]\n"
    "dt = {'F32': '<f4', 'F64': '<f8', 'I32': '<i4', 'I64': '<i8', 'U8': 'u1', 'BOOL': '?', 'F16': '<f2', 'BF16': '<u2'}\n"
    "rank = ['BOOL', 'U8', 'F16', 'BF16', 'I32', 'F32', 'F64', 'I64']\n"
    "names = list(h)\n"
    "assert names == sorted(names, key=lambda k: (-rank.index(h[k]['dtype']), k)), names\n"
    "at = 0\n"
    "t = {}\n"
    "for k in names:\n"
    "    s, e = h[k]['data_offsets']\n"
    "    assert s == at, (k, s, at)\n"
    "    at = e\n"
    "    t[k] = np.frombuffer(data[s:e], dtype=dt[h[k]['dtype']]).reshape(h[k]['shape'])\n"
    "assert at == len(data)\n"
    "assert meta == {'format': 'pt', 'note': 'caf\\u00e9 \"quoted\" back\\\\slash\\nnew line'}, meta\n"
    "assert (t['f32'] == np.array([[1.5, -2, 3], [4, 5, 6.25]], 'f4')).all()\n"
    "assert (t['f64'] == np.array([1 / 3, -1e300, 2.5])).all()\n"
    "assert (t['i32'] == np.array([[-7, 8], [2**31 - 1, -2**31]])).all()\n"
    "assert (t['i64'] == np.array([9007199254740993, -5, 0, 1], 'i8')).all()\n"
    "assert (t['u8'] == [0, 255, 7]).all() and (t['bool'] == [True, False, True]).all()\n"
    "assert (t['f16'] == np.array([[1, -2], [0.5, 65504]], 'f2')).all()\n"
    "assert (t['bf16'] == [0x3F80, 0xC000, 0x4049]).all()\n"
    "assert t['scalar'].shape == () and t['scalar'] == 42 and t['empty'].shape == (0, 3)\n"
    "assert (t['t'] == np.array([[1.5, 4], [-2, 5], [3, 6.25]], 'f4')).all()\n"
    "assert (t['t16'] == np.array([[1, 0.5], [-2, 65504]], 'f2')).all()\n"
    "assert (t['layer.0.weight'] == np.arange(1, 20, 3)).all()\n"
    "try:\n"
    "    import safetensors.numpy\n"
    "    s = safetensors.numpy.load_file(sys.argv[1])\n"
    "    assert all((s[k] == t[k]).all() for k in t if k != 'bf16')\n"
    "    print('safetensors package: OK')\n"
    "except ImportError:\n"
    "    print('skipped: the safetensors package is not installed')\n"
    "print('READ OK')\n";

/* A writer written from the spec: tensors in no particular order, json.dumps spacing,
   metadata last, a U8 tensor that leaves the next one misaligned. */
static const char *py_writer =
    "import json, struct, sys\n"
    "import numpy as np\n"
    "arrs = [('zeta', 'F32', np.arange(6, dtype='<f4').reshape(2, 3) * 0.5),\n"
    "        ('alpha', 'U8', np.array([1, 2, 3], 'u1')),\n"
    "        ('mid', 'I64', np.array([[-1, 2**40]], '<i8')),\n"
    "        ('b', 'BOOL', np.array([True, False], '?')),\n"
    "        ('h', 'F16', np.array([0.5, -1.5], '<f2')),\n"
    "        ('bf', 'BF16', (np.array([1.0, -2.0], np.float32).view(np.uint32) >> 16).astype('<u2')),\n"
    "        ('d', 'F64', np.array(3.25, '<f8')),\n"
    "        ('i', 'I32', np.zeros((0, 4), '<i4')),\n"
    "        ('\\u00fcber.w', 'I32', np.array([-5, 6], '<i4'))]\n"
    "hdr, off, blobs = {}, 0, []\n"
    "for name, dt, a in arrs:\n"
    "    b = a.tobytes()\n"
    "    hdr[name] = {'dtype': dt, 'shape': list(a.shape), 'data_offsets': [off, off + len(b)]}\n"
    "    off += len(b)\n"
    "    blobs.append(b)\n"
    "hdr['__metadata__'] = {'source': 'python', 'x': '\\u00e9'}\n"
    "h = json.dumps(hdr).encode()\n"
    "h += b' ' * ((8 - len(h) % 8) % 8)\n"
    "open(sys.argv[1], 'wb').write(struct.pack('<Q', len(h)) + h + b''.join(blobs))\n"
    "print('WROTE OK')\n";

TEST(python_interop) {
    tn_scope_begin();
    tn_dict *d = sample_dict();
    const char *ours = tmp_path("ours.safetensors");
    CHECK(tn_safetensors_save(ours, d) == 0);
    char out[4096], args[600];
    snprintf(args, sizeof args, "'%s'", ours);
    int rc = run_python("reader.py", py_reader, args, out, sizeof out);
    if (rc < 0) {
        printf("skipped: Python interop (no /usr/bin/python3 with numpy)\n");
        tn_dict_free(d);
        tn_scope_end();
        return;
    }
    CHECK_MSG(rc == 0 && strstr(out, "READ OK"), "python reader: %s", out);
    const char *skip = strstr(out, "skipped");
    if (skip) printf("%.*s\n", (int)strcspn(skip, "\n"), skip);
    const char *theirs = tmp_path("theirs.safetensors");
    snprintf(args, sizeof args, "'%s'", theirs);
    rc = run_python("writer.py", py_writer, args, out, sizeof out);
    CHECK_MSG(rc == 0 && strstr(out, "WROTE OK"), "python writer: %s", out);
    tn_dict *t = tn_safetensors_load(theirs);
    CHECK(t && tn_dict_len(t) == 9);
    if (t) {
        CHECK(!strcmp(tn_dict_key(t, 0), "zeta") && !strcmp(tn_dict_key(t, 8), "\xc3\xbc" "ber.w"));  /* header order */
        tn_tensor *z = tn_dict_get(t, "zeta"), *m = tn_dict_get(t, "mid"), *h = tn_dict_get(t, "h"), *bf = tn_dict_get(t, "bf");
        CHECK(z && tn_get_dtype(z) == TN_F32 && tn_size(z, 1) == 3 && ((const float *)tn_data_ptr(z))[5] == 2.5f);
        CHECK(m && tn_get_dtype(m) == TN_I64 && ((const int64_t *)tn_data_ptr(m))[1] == ((int64_t)1 << 40) && ((const int64_t *)tn_data_ptr(m))[0] == -1);
        CHECK(m && (uintptr_t)tn_data_ptr(m) % 8 == 0);  /* misaligned in the file, so copied */
        CHECK(h && tn_get_dtype(h) == TN_F16 && ((const uint16_t *)tn_data_ptr(h))[0] == 0x3800 && ((const uint16_t *)tn_data_ptr(h))[1] == 0xBE00);
        CHECK(bf && tn_get_dtype(bf) == TN_BF16 && ((const uint16_t *)tn_data_ptr(bf))[1] == 0xC000);
        CHECK(tn_item(tn_dict_get(t, "d")) == 3.25 && tn_ndim(tn_dict_get(t, "d")) == 0);
        CHECK(tn_numel(tn_dict_get(t, "i")) == 0 && tn_size(tn_dict_get(t, "i"), 1) == 4);
        CHECK(tn_item(tn_select(tn_dict_get(t, "b"), 0, 1)) == 0 && tn_item(tn_select(tn_dict_get(t, "alpha"), 0, 2)) == 3);
        CHECK(tn_item(tn_select(tn_dict_get(t, "\xc3\xbc" "ber.w"), 0, 0)) == -5);
        const char *src = tn_dict_get_meta(t, "source"), *x = tn_dict_get_meta(t, "x");
        CHECK(src && !strcmp(src, "python") && x && !strcmp(x, "\xc3\xa9"));
    }
    tn_dict_free(t);
    tn_dict_free(d);
    tn_scope_end();
}

int main(void) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tn_test_st_XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) { printf("cannot make a temporary directory %s\n", tmpdir); return 1; }
    int64_t live = tn_memory_stats_get().live_tensors;
    RUN(roundtrip);
    RUN(fixture_bytes);
    RUN(mmap_lifetime);
    RUN(hostile);
    RUN(save_errors);
    RUN(fuzz);
    RUN(python_interop);
    tn_test_current = "leaks";
    CHECK_MSG(tn_memory_stats_get().live_tensors == live, "%lld tensors leaked", (long long)(tn_memory_stats_get().live_tensors - live));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("could not remove %s\n", tmpdir);
    return tn_test_report();
}
