/* int8 and int16 (TN_I8, TN_I16) through the core, with the values PyTorch 1.13 gives
   (bindings/python/tests/test_int8_int16.py compares the same against torch itself):
   names and sizes, casts from every dtype (float overflow wraps through int32, NaN/inf give
   0), the promotion table of every pair, wrapping arithmetic, integer division family,
   bitwise ops, reductions to int64, sort and indexing, printing, safetensors, .pt and
   DLPack round trips, and the clear refusal on CUDA (the stand-in). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#define TENSOR_IMPLEMENTATION
#include "tensor.h"
#include "tn_test.h"
#include <stdlib.h>

#define N7 7
static const int8_t X8[N7] = {-128, -7, -1, 0, 1, 7, 127}, Y8[N7] = {3, -2, 5, 9, -4, 2, -1};
static const int16_t X16[N7] = {-32768, -300, -1, 0, 1, 300, 32767}, Y16[N7] = {3, -2, 5, 9, -4, 2, -1};

/* t's values as int64 (any dtype, any layout) equal want[0..n) */
static bool vals_are(tn_tensor *t, const int64_t *want, int64_t n) {
    if (!t || tn_numel(t) != n) return false;
    tn_tensor *c = tn_contiguous(tn_to_dtype(t, TN_I64));
    if (!c) return false;
    const int64_t *p = (const int64_t *)tn_data_ptr(c);
    for (int64_t i = 0; i < n; i++) if (p[i] != want[i]) return false;
    return true;
}
static tn_tensor *i8(const int8_t *v, int64_t n) { return tn_from_data(v, &n, 1, TN_I8); }
static tn_tensor *i16(const int16_t *v, int64_t n) { return tn_from_data(v, &n, 1, TN_I16); }

TEST(names_sizes) {
    CHECK(!strcmp(tn_dtype_name(TN_I8), "int8") && !strcmp(tn_dtype_name(TN_I16), "int16"));
    CHECK(tn_dtype_size(TN_I8) == 1 && tn_dtype_size(TN_I16) == 2);
    CHECK(!tn_dtype_is_floating(TN_I8) && !tn_dtype_is_floating(TN_I16));
}

TEST(casts) {
    tn_scope_begin();
    /* from float: torch.tensor([...]).to(int8 / int16), incl. overflow, NaN and inf */
    const double f[] = {300.0, -129.0, 127.9, -128.9, 40000., 70000.5, -70000.5, 3e9, -3e9, 1e10, 1e20, NAN, INFINITY, -INFINITY};
    int64_t nf = 14;
    const int64_t want8[] = {44, 127, 127, -128, 64, 112, -112, 0, 0, 0, 0, 0, 0, 0};
    const int64_t want16[] = {300, -129, 127, -128, -25536, 4464, -4464, 0, 0, 0, 0, 0, 0, 0};
    tn_tensor *d = tn_from_data(f, &nf, 1, TN_F64);
    CHECK(vals_are(tn_to_dtype(d, TN_I8), want8, nf) && tn_to_dtype(d, TN_I8)->dtype == TN_I8);
    CHECK(vals_are(tn_to_dtype(d, TN_I16), want16, nf));
    CHECK(vals_are(tn_to_dtype(tn_to_dtype(d, TN_F32), TN_I8), want8, nf));
    /* float16: 70000 is inf there (0); bfloat16 rounds 127.9 to 128 (-128 in int8) */
    const int64_t want8h[] = {44, 127, 127, -128, 64, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const int64_t want8b[] = {44, 127, -128, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(vals_are(tn_to_dtype(tn_to_dtype(d, TN_F16), TN_I8), want8h, nf));
    CHECK(vals_are(tn_to_dtype(tn_to_dtype(d, TN_BF16), TN_I8), want8b, nf));
    /* from int64: the low bits */
    const int64_t l[] = {300, -129, ((int64_t)1 << 40) + 5, 70000};
    int64_t nl = 4;
    const int64_t wl8[] = {44, 127, 5, 112}, wl16[] = {300, -129, 5, 4464};
    tn_tensor *li = tn_from_data(l, &nl, 1, TN_I64);
    CHECK(vals_are(tn_to_dtype(li, TN_I8), wl8, 4) && vals_are(tn_to_dtype(li, TN_I16), wl16, 4));
    /* from bool and uint8; to every dtype and back */
    const bool b[] = {true, false};
    int64_t nb = 2;
    const int64_t wb[] = {1, 0};
    CHECK(vals_are(tn_to_dtype(tn_from_data(b, &nb, 1, TN_BOOL), TN_I8), wb, 2));
    const uint8_t u[] = {200, 7};
    const int64_t wu8[] = {-56, 7}, wu16[] = {200, 7};
    tn_tensor *ut = tn_from_data(u, &nb, 1, TN_U8);
    CHECK(vals_are(tn_to_dtype(ut, TN_I8), wu8, 2) && vals_are(tn_to_dtype(ut, TN_I16), wu16, 2));
    const int64_t x8[N7] = {-128, -7, -1, 0, 1, 7, 127};
    for (int dt = 0; dt < TN_NUM_DTYPES; dt++) {
        if (dt == TN_BOOL || dt == TN_U8) continue;
        CHECK_MSG(vals_are(tn_to_dtype(tn_to_dtype(i8(X8, N7), (tn_dtype)dt), TN_I8), x8, N7), "int8 -> %s -> int8", tn_dtype_name((tn_dtype)dt));
    }
    const int64_t wbool[N7] = {1, 1, 1, 0, 1, 1, 1}, wbyte[N7] = {128, 249, 255, 0, 1, 7, 127};
    CHECK(vals_are(tn_to_dtype(i8(X8, N7), TN_BOOL), wbool, N7) && vals_are(tn_to_dtype(i8(X8, N7), TN_U8), wbyte, N7));
    /* a strided source */
    tn_tensor *s = tn_narrow(tn_to_dtype(d, TN_I16), 0, 1, 4);
    CHECK(vals_are(tn_to_dtype(tn_flip(s, TN_DIMS(0)), TN_I8), (const int64_t[]){64, -128, 127, 127}, 4));
    tn_scope_end();
}

TEST(promotion_table) {
    /* torch.promote_types over our dtypes, in enum order (F32 F64 I32 I64 U8 BOOL F16 BF16 I8 I16) */
    static const tn_dtype want[TN_I16 + 1][TN_I16 + 1] = {   /* the complex dtypes: tests/test_complex.c */
        {TN_F32, TN_F64, TN_F32, TN_F32, TN_F32, TN_F32, TN_F32, TN_F32, TN_F32, TN_F32},
        {TN_F64, TN_F64, TN_F64, TN_F64, TN_F64, TN_F64, TN_F64, TN_F64, TN_F64, TN_F64},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_I32, TN_I32, TN_F16, TN_BF16, TN_I32, TN_I32},
        {TN_F32, TN_F64, TN_I64, TN_I64, TN_I64, TN_I64, TN_F16, TN_BF16, TN_I64, TN_I64},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_U8, TN_F16, TN_BF16, TN_I16, TN_I16},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL, TN_F16, TN_BF16, TN_I8, TN_I16},
        {TN_F32, TN_F64, TN_F16, TN_F16, TN_F16, TN_F16, TN_F16, TN_F32, TN_F16, TN_F16},
        {TN_F32, TN_F64, TN_BF16, TN_BF16, TN_BF16, TN_BF16, TN_F32, TN_BF16, TN_BF16, TN_BF16},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_I16, TN_I8, TN_F16, TN_BF16, TN_I8, TN_I16},
        {TN_F32, TN_F64, TN_I32, TN_I64, TN_I16, TN_I16, TN_F16, TN_BF16, TN_I16, TN_I16},
    };
    for (int a = 0; a <= TN_I16; a++)
        for (int b = 0; b <= TN_I16; b++)
            CHECK_MSG(tn_promote_types((tn_dtype)a, (tn_dtype)b) == want[a][b], "promote(%s, %s) = %s", tn_dtype_name((tn_dtype)a),
                      tn_dtype_name((tn_dtype)b), tn_dtype_name(tn_promote_types((tn_dtype)a, (tn_dtype)b)));
    tn_scope_begin();
    /* and an op's result dtype: int8 + uint8 is int16; an int64 0-d operand does not lift it */
    const uint8_t u[N7] = {0};
    int64_t n = N7;
    CHECK(tn_add(i8(X8, N7), tn_from_data(u, &n, 1, TN_U8))->dtype == TN_I16);
    CHECK(tn_add(i8(X8, N7), tn_scalar_int(1000))->dtype == TN_I8);
    CHECK(tn_add(i16(X16, N7), i8(Y8, N7))->dtype == TN_I16);
    tn_scope_end();
}

TEST(arithmetic_wraps) {
    tn_scope_begin();
    tn_tensor *x = i8(X8, N7), *y = i8(Y8, N7);
    CHECK(vals_are(tn_add(x, y), (const int64_t[]){-125, -9, 4, 9, -3, 9, 126}, N7));
    CHECK(vals_are(tn_mul(x, y), (const int64_t[]){-128, 14, -5, 0, -4, 14, -127}, N7));
    CHECK(vals_are(tn_floor_divide(x, y), (const int64_t[]){-43, 3, -1, 0, -1, 3, -127}, N7));
    CHECK(vals_are(tn_remainder(x, y), (const int64_t[]){1, -1, 4, 0, -3, 1, 0}, N7));
    CHECK(vals_are(tn_fmod(x, y), (const int64_t[]){-2, -1, -1, 0, 1, 1, 0}, N7));
    CHECK(vals_are(tn_bitwise_and(x, y), (const int64_t[]){0, -8, 5, 0, 0, 2, 127}, N7));
    CHECK(vals_are(tn_bitwise_or(x, y), (const int64_t[]){-125, -1, -1, 9, -3, 7, -1}, N7));
    CHECK(vals_are(tn_bitwise_xor(x, y), (const int64_t[]){-125, 7, -6, 9, -3, 5, -128}, N7));
    CHECK(vals_are(tn_neg(x), (const int64_t[]){-128, 7, 1, 0, -1, -7, -127}, N7));
    CHECK(vals_are(tn_abs(x), (const int64_t[]){-128, 7, 1, 0, 1, 7, 127}, N7));
    CHECK(tn_div(x, y)->dtype == TN_F32);   /* true division */
    CHECK(tn_eq(x, y)->dtype == TN_BOOL && vals_are(tn_lt(x, y), (const int64_t[]){1, 1, 1, 1, 0, 0, 0}, N7));
    tn_tensor *s = i16(X16, N7), *t = i16(Y16, N7);
    CHECK(vals_are(tn_add(s, t), (const int64_t[]){-32765, -302, 4, 9, -3, 302, 32766}, N7));
    CHECK(vals_are(tn_mul(s, t), (const int64_t[]){-32768, 600, -5, 0, -4, 600, -32767}, N7));
    CHECK(vals_are(tn_mul(s, s), (const int64_t[]){0, 24464, 1, 0, 1, 24464, 1}, N7));   /* 32767^2 in uint32, never int overflow */
    CHECK(vals_are(tn_floor_divide(s, t), (const int64_t[]){-10923, 150, -1, 0, -1, 150, -32767}, N7));
    CHECK(vals_are(tn_remainder(s, t), (const int64_t[]){1, 0, 4, 0, -3, 0, 0}, N7));
    const int8_t z[2] = {1, 0};
    CHECK_ERR(tn_floor_divide(i8(z, 2), i8(z + 1, 1)), "division by zero");
    CHECK_ERR(tn_clamp(x, .min = -3, .max = 1000), "cannot be converted to type int8 without overflow");
    CHECK(vals_are(tn_clamp(x, .min = -3, .max = 3), (const int64_t[]){-3, -3, -1, 0, 1, 3, 3}, N7));
    CHECK_ERR(tn_full(TN_SHAPE(2), 200, TN_I8), "cannot be converted to type int8 without overflow");
    CHECK(vals_are(tn_full(TN_SHAPE(2), -32768, TN_I16), (const int64_t[]){-32768, -32768}, 2));
    tn_scope_end();
}

TEST(reductions_and_lanes) {
    tn_scope_begin();
    tn_tensor *x = i8(X8, N7), *s = i16(X16, N7);
    tn_tensor *sx = tn_sum(x), *px = tn_prod(x), *ss = tn_sum(s);
    CHECK(sx->dtype == TN_I64 && px->dtype == TN_I64 && ss->dtype == TN_I64);   /* PyTorch: integer sums in int64 */
    CHECK(tn_item(sx) == -1 && tn_item(px) == 0 && tn_item(ss) == -1);
    const int8_t p[4] = {-3, 5, 7, -11};
    CHECK(tn_item(tn_prod(i8(p, 4))) == 1155);   /* beyond int8: int64 */
    CHECK(tn_item(tn_max(x)) == 127 && tn_item(tn_min(s)) == -32768);
    CHECK(tn_item(tn_argmax(s)) == 6);
    tn_tensor *idx = NULL, *v = tn_sort(i8(Y8, N7), &idx, .dim = 0, .descending = true);
    CHECK(v->dtype == TN_I8 && vals_are(v, (const int64_t[]){9, 5, 3, 2, -1, -2, -4}, N7) && vals_are(idx, (const int64_t[]){3, 2, 0, 5, 6, 1, 4}, N7));
    CHECK(vals_are(tn_cumsum(x, 0), (const int64_t[]){-128, -135, -136, -136, -135, -128, -1}, N7) && tn_cumsum(x, 0)->dtype == TN_I64);
    CHECK(vals_are(tn_cat(((tn_tensor *[]){x, tn_to_dtype(s, TN_I8)}), 2), (const int64_t[]){-128, -7, -1, 0, 1, 7, 127, 0, -44, -1, 0, 1, 44, -1}, 14));
    tn_tensor *m = tn_reshape(tn_to_dtype(tn_arange(-6, 6, 1, TN_I64), TN_I16), TN_SHAPE(3, 4));
    CHECK(vals_are(tn_index_select(tn_transpose(m, 0, 1), 0, tn_from_data((const int64_t[]){3, 0}, TN_SHAPE(2), TN_I64)), (const int64_t[]){-3, 1, 5, -6, -2, 2}, 6));
    CHECK(vals_are(tn_matmul(m, tn_transpose(m, 0, 1)), (const int64_t[]){86, 14, -58, 14, 6, -2, -58, -2, 54}, 9));
    tn_scope_end();
}

TEST(printing) {
    tn_scope_begin();
    const int8_t v[4] = {-128, 0, 5, 127};
    char *a = tn_to_string(tn_reshape(i8(v, 4), TN_SHAPE(2, 2)));
    CHECK_MSG(a && !strcmp(a, "tensor([[-128,    0],\n        [   5,  127]], dtype=torch.int8)"), "%s", a ? a : "NULL");
    free(a);
    const int16_t w[2] = {-32768, 300};
    char *b = tn_to_string(i16(w, 2));
    CHECK_MSG(b && !strcmp(b, "tensor([-32768,    300], dtype=torch.int16)"), "%s", b ? b : "NULL");
    free(b);
    tn_scope_end();
}

static char tmpdir[256];
TEST(files_and_dlpack) {
    tn_scope_begin();
    char st[300], pt[300];
    snprintf(st, sizeof st, "%s/a.safetensors", tmpdir);
    snprintf(pt, sizeof pt, "%s/a.pt", tmpdir);
    tn_dict *d = tn_dict_new();
    tn_tensor *x = i8(X8, N7), *s = tn_transpose(tn_reshape(tn_narrow(i16(X16, N7), 0, 1, 6), TN_SHAPE(2, 3)), 0, 1);
    tn_dict_set(d, "x", x);
    tn_dict_set(d, "s", s);
    const int64_t x8[N7] = {-128, -7, -1, 0, 1, 7, 127}, sw[6] = {-300, 1, -1, 300, 0, 32767};
    CHECK(tn_safetensors_save(st, d) == 0);
    tn_dict *b = tn_safetensors_load(st);
    CHECK_MSG(b, "%s", tn_last_error());
    if (b) {
        CHECK(tn_dict_get(b, "x")->dtype == TN_I8 && vals_are(tn_dict_get(b, "x"), x8, N7));
        CHECK(tn_dict_get(b, "s")->dtype == TN_I16 && vals_are(tn_dict_get(b, "s"), sw, 6));
    }
    tn_dict_free(b);
    CHECK(tn_save_pt(pt, d) == 0);
    b = tn_load_pt(pt);
    CHECK_MSG(b, "%s", tn_last_error());
    if (b) {
        CHECK(tn_dict_get(b, "x")->dtype == TN_I8 && vals_are(tn_dict_get(b, "x"), x8, N7));
        CHECK(tn_dict_get(b, "s")->dtype == TN_I16 && vals_are(tn_dict_get(b, "s"), sw, 6) && tn_strides(tn_dict_get(b, "s"))[0] == 1);
    }
    tn_dict_free(b);
    tn_dict_free(d);
    DLManagedTensor *m = tn_to_dlpack(s);
    CHECK(m && m->dl_tensor.dtype.code == kDLInt && m->dl_tensor.dtype.bits == 16);
    tn_tensor *back = tn_from_dlpack(m);
    CHECK(back && back->dtype == TN_I16 && vals_are(back, sw, 6) && tn_data_ptr(back) == tn_data_ptr(s));
    tn_scope_end();
}

TEST(cuda_refused) {
    tn_scope_begin();
    tn_debug_cuda_stand_in();
    CHECK_ERR(tn_to(i8(X8, N7), TN_CUDA), "int8 is not supported on CUDA");
    CHECK_ERR(tn_to_dtype(tn_to(tn_ones(TN_SHAPE(2), TN_F32), TN_CUDA), TN_I16), "int16 is not supported on CUDA");
    tn_scope_end();
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tn_i8_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(names_sizes);
    RUN(casts);
    RUN(promotion_table);
    RUN(arithmetic_wraps);
    RUN(reductions_and_lanes);
    RUN(printing);
    RUN(files_and_dlpack);
    RUN(cuda_refused);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) return 1;
    return tn_test_report();
}
