/* ---- convolution ----
   On the CPU: one image at a time (the threads take whole images), im2col of a block of
   output rows into a [C*kh*kw, rows*ow] buffer that stays in cache, then one GEMM per
   group straight into the output (no [K, N*L] buffer for the batch, no permuted copy); 1x1 stride-1
   unpadded convolutions skip im2col and multiply the image itself. The node's backward
   does the same per image when autograd is not recording, and otherwise (create_graph)
   is a composite of differentiable ops (im2col, matmul, col2im), so conv stays
   differentiable to any order. Elsewhere (GPU): im2col of the batch + one GEMM. */
/* A [rows, cols] matrix at element offset off of t's storage, as a 3-d matmul operand. */
static tn_tensor tn__mat_view(const tn_tensor *t, int64_t off, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    tn_tensor v = tn__shallow(t);
    v.ndim = 3;
    v.shape[0] = 1; v.shape[1] = rows; v.shape[2] = cols;
    v.strides[0] = 0; v.strides[1] = rs; v.strides[2] = cs;
    v.offset = off;
    return v;
}
/* Image n of x [N, C, H, W] as a one-image batch. */
static tn_tensor tn__image_view(const tn_tensor *x, int64_t n) {
    tn_tensor v = tn__shallow(x);
    v.shape[0] = 1;
    v.offset = x->offset + n * x->strides[0];
    return v;
}
/* 1x1, stride 1, no padding, and H, W mergeable: the image is its own column matrix. */
static bool tn__conv_direct(const tn_tensor *x, const int64_t *g) {
    return g[0] == 1 && g[1] == 1 && g[4] == 0 && g[5] == 0 && g[6] == 1 && g[7] == 1 && (x->shape[2] == 1 || x->strides[2] == x->shape[3] * x->strides[3]);
}
/* Output rows per block of columns: the blocks [K, rows*ow] of a thread (nbuf of them)
   within TN_CONV_BLOCK_BYTES mostly stay in L2 while the GEMM packs them (1 MiB measured
   best on a 2 MiB L2: smaller blocks pay more GEMM calls). */
#ifndef TN_CONV_BLOCK_BYTES
#define TN_CONV_BLOCK_BYTES ((size_t)1 << 20)
#endif
/* How many units of unit_bytes fit TN_CONV_BLOCK_BYTES, within [1, most]. */
static int64_t tn__block_units(size_t unit_bytes, int64_t most) {
    int64_t r = (int64_t)((size_t)(TN_CONV_BLOCK_BYTES) / unit_bytes);
    return r < 1 ? 1 : r > most ? most : r;
}
static int64_t tn__conv_block_rows(int64_t K, const int64_t *g, size_t es, int nbuf) {
    return tn__block_units((size_t)tn__mul_sat(tn__mul_sat(K, g[9]), nbuf * (int64_t)es), g[8]);
}
/* The geometry of output rows [y0, y0 + rows): the top padding shifts by y0 windows (it may
   go negative: the CPU kernel only offsets rows by it). */
static void tn__conv_block_geom(const int64_t *g, int64_t y0, int64_t rows, int64_t *gb) {
    memcpy(gb, g, 10 * sizeof(int64_t));
    gb[4] = g[4] - y0 * g[6];
    gb[8] = rows;
}
/* Images per block when whole images fit a block and are small (under 512 outputs: one
   GEMM over several images' columns is wider and packs the weight once), else 1 (larger
   images: the GEMM writes the output in place, no copy through a block buffer). */
static int64_t tn__conv_block_images(int64_t K, const int64_t *g, size_t es, int nbuf, int64_t R, bool direct) {
    if (direct || R < g[8] || g[8] * g[9] >= 512) return 1;
    int64_t ib = (int64_t)((size_t)(TN_CONV_BLOCK_BYTES) / (size_t)nbuf / (size_t)tn__mul_sat(tn__mul_sat(K, g[8] * g[9]), (int64_t)es));   /* g[8] * g[9] < 512 here */
    return ib < 2 ? 1 : ib;
}
/* Rows of a product rounded up to the GEMM kernel's tile: its work including edge waste. */
static double tn__gemm_tiles(tn_dtype dt, int64_t M, int64_t N) {
    int mr = 8, nr = 8;
    if (dt == TN_F32) { tn__gemm_kern_f32 k = tn__gemm_kern_for_f32(M); mr = k.mr; nr = k.nr; }
    else { tn__gemm_kern_f64 k = tn__gemm_kern_for_f64(M); mr = k.mr; nr = k.nr; }
    return (double)((M + mr - 1) / mr * mr) * (double)((N + nr - 1) / nr * nr);
}
/* The convolution's special paths (Winograd, depthwise loops); 0: im2col + GEMM for every
   case (tests compare the paths). */
TN__TESTABLE int tn__conv_fast_paths = 1;
