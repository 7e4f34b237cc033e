/* The CPU index kernel: GATHER dst[i] = src[i + sum idx_j[i] * stride_j], SCATTER the
   reverse, SCATTER_ADD / MUL / MAX / MIN accumulate (sequential, so duplicate indices
   combine). */
typedef struct tn__ictx { tn_index_mode mode; int k; int64_t strides[TN_MAX_DIMS]; size_t es; tn_dtype dtype; } tn__ictx;
/* *d = *d op *s for the reducing scatters other than add; integers multiply wrapping (through
   unsigned), max and min keep a NaN once there (PyTorch's scatter_reduce amax/amin) */
#define TN__SCATTER_RED(T, U) do { T *dp_ = (T *)d, sv_ = *(const T *)sp; \
        if (c->mode == SCATTER_MUL) *dp_ = (T)((U)*dp_ * (U)sv_); \
        else if (TN__NAN(*dp_)) break; \
        else if (TN__NAN(sv_) || (c->mode == SCATTER_MAX ? sv_ > *dp_ : sv_ < *dp_)) *dp_ = sv_; } while (0)
static void tn__scatter_reduce_elem(const struct tn__ictx *c, char *d, const char *sp) {
    switch (c->dtype) {
    case TN_F32: TN__SCATTER_RED(float, float); break;
    case TN_F64: TN__SCATTER_RED(double, double); break;
    case TN_I32: TN__SCATTER_RED(int32_t, uint32_t); break;
    case TN_I64: TN__SCATTER_RED(int64_t, uint64_t); break;
    case TN_U8: TN__SCATTER_RED(uint8_t, unsigned); break;
    case TN_I8: TN__SCATTER_RED(int8_t, unsigned); break;
    case TN_I16: TN__SCATTER_RED(int16_t, unsigned); break;
    default: { bool *dp = (bool *)d, sv = *(const bool *)sp; *dp = c->mode == SCATTER_MUL || c->mode == SCATTER_MIN ? (*dp && sv) : (*dp || sv); break; }
    }
}
static void tn__index_loop(char **p, const int64_t *s, int64_t n, void *vc) {
    const tn__ictx *c = (const tn__ictx *)vc;
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int j = 0; j < c->k; j++) off += *(const int64_t *)(p[2 + j] + i * s[2 + j]) * c->strides[j];
        char *d = p[0] + i * s[0], *sp = p[1] + i * s[1];
        off *= (int64_t)c->es;
        if (c->mode == GATHER) { memcpy(d, sp + off, c->es); continue; }
        d += off;
        if (c->mode == SCATTER) { memcpy(d, sp, c->es); continue; }
        if (c->mode != SCATTER_ADD) { tn__scatter_reduce_elem(c, d, sp); continue; }
        switch (c->dtype) {
        case TN_F32: *(float *)d += *(const float *)sp; break;
        case TN_F64: *(double *)d += *(const double *)sp; break;
        case TN_I32: *(int32_t *)d = (int32_t)((uint32_t)*(int32_t *)d + (uint32_t)*(const int32_t *)sp); break;
        case TN_I64: *(int64_t *)d = (int64_t)((uint64_t)*(int64_t *)d + (uint64_t)*(const int64_t *)sp); break;
        case TN_U8: *(uint8_t *)d = (uint8_t)(*(uint8_t *)d + *(const uint8_t *)sp); break;
        case TN_I8: *(int8_t *)d = (int8_t)(*(int8_t *)d + *(const int8_t *)sp); break;     /* in int, wrapped on the store */
        case TN_I16: *(int16_t *)d = (int16_t)(*(int16_t *)d + *(const int16_t *)sp); break;
        case TN_C64: ((float *)d)[0] += ((const float *)sp)[0]; ((float *)d)[1] += ((const float *)sp)[1]; break;   /* part by part */
        case TN_C128: ((double *)d)[0] += ((const double *)sp)[0]; ((double *)d)[1] += ((const double *)sp)[1]; break;
        default: *(bool *)d = *(bool *)d || *(const bool *)sp; break;
        }
    }
}

static int tn__cpu_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k) {
    if (tn_dtype_is_complex(dst->dtype) && mode != GATHER && mode != SCATTER && mode != SCATTER_ADD)
        return TN__FAIL_INT("scatter_reduce: not implemented for dtype %s (complex: gather, scatter and add only)", tn_dtype_name(dst->dtype));
    tn__ictx c;
    c.mode = mode;
    c.k = k;
    c.es = tn_dtype_size(dst->dtype);
    c.dtype = dst->dtype;
    for (int j = 0; j < k; j++) c.strides[j] = idx_strides[j];
    tn_tensor *shape_of = mode == GATHER ? dst : (k ? idx[0] : src);
    tn__iter it;
    tn__iter_init(&it, shape_of->shape, shape_of->ndim);
    tn__iter_add(&it, dst);
    tn__iter_add(&it, src);
    for (int j = 0; j < k; j++) tn__iter_add(&it, idx[j]);
    /* scatter must not merge dims in a way that reorders writes; it never does: the
       iterator keeps the row-major order of the iteration shape */
    if (mode == GATHER) tn__iter_run_par(&it, tn__index_loop, &c, -1);
    else tn__iter_run(&it, tn__index_loop, &c);
    return 0;
}

/* ---- sliding windows (convolution and pooling) ---- */
/* the arguments of a threaded im2col / pooling argmax */
typedef struct { int fold; tn_tensor *cols, *img; const int64_t *g; } tn__im2col_args;
typedef struct { tn_tensor *idx, *x; const int64_t *hs, *he, *ws, *we; int64_t dh, dw; } tn__argmax_args;
/* @template TN__DEFINE_IM2COL(T, S) */
/* planes [nc0, nc1) of im2col (fold: col2im) */
static void tn__im2col_part_##S(void *args, int64_t nc0, int64_t nc1) {
    const tn__im2col_args *a = (const tn__im2col_args *)args;
    const int fold = a->fold;
    tn_tensor *cols = a->cols, *img = a->img;
    const int64_t *g = a->g;
    const int64_t C = img->shape[1], H = img->shape[2], W = img->shape[3];
    const int64_t kh = g[0], kw = g[1], dh = g[2], dw = g[3], ph = g[4], pw = g[5], sh = g[6], sw = g[7], oh = g[8], ow = g[9];
    const int64_t *is = img->strides, *cs = cols->strides;
    T *ib = (T *)img->storage->data + img->offset, *cb = (T *)cols->storage->data + cols->offset;
    for (int64_t nc = nc0; nc < nc1; nc++) for (int64_t ki = 0; ki < kh; ki++) for (int64_t kj = 0; kj < kw; kj++) {
        const int64_t n = nc / C, c = nc % C;
        T *row = cb + n * cs[0] + ((c * kh + ki) * kw + kj) * cs[1], *plane = ib + n * is[0] + c * is[1];
        /* the window columns x in [x0, x1) read inside the image: iw = x*sw - pw + kj*dw in [0, W) */
        const int64_t off = kj * dw - pw;
        int64_t x0 = off >= 0 ? 0 : (-off + sw - 1) / sw, x1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
        if (x1 > ow) x1 = ow;
        if (x0 > x1) x0 = x1;
        const int64_t c2 = cs[2], i3 = is[3] * sw;
        for (int64_t y = 0; y < oh; y++) {
            const int64_t ih = y * sh - ph + ki * dh;
            T *cp = row + y * ow * c2;
            if (ih < 0 || ih >= H) { if (!fold) for (int64_t x = 0; x < ow; x++) cp[x * c2] = 0; continue; }
            const T *ip = plane + ih * is[2] + (x0 * sw + off) * is[3];
            if (fold) {
                T *fp = (T *)ip;
                for (int64_t x = x0; x < x1; x++, fp += i3) *fp += cp[x * c2];
                continue;
            }
            for (int64_t x = 0; x < x0; x++) cp[x * c2] = 0;
            if (c2 == 1 && i3 == 1) memcpy(cp + x0, ip, (size_t)(x1 - x0) * sizeof(T));
            else for (int64_t x = x0; x < x1; x++, ip += i3) cp[x * c2] = *ip;
            for (int64_t x = x1; x < ow; x++) cp[x * c2] = 0;
        }
    }
}
static void tn__im2col_##S(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *g) {
    /* planes (n, c) in parallel: each writes its own rows of cols (or its own image plane) */
    const int64_t NC = img->shape[0] * img->shape[1];
    tn__im2col_args a = {fold, cols, img, g};
    tn__parallel_range(tn__par_threads(tn__mul_sat(NC, g[0] * g[1] * g[8] * g[9]), NC), NC, tn__im2col_part_##S, &a);
}
/* planes [nc0, nc1) of the pooling argmax */
static void tn__pool_argmax_part_##S(void *args, int64_t nc0, int64_t nc1) {
    const tn__argmax_args *a = (const tn__argmax_args *)args;
    tn_tensor *idx = a->idx, *x = a->x;
    const int64_t *hs = a->hs, *he = a->he, *ws = a->ws, *we = a->we, dh = a->dh, dw = a->dw;
    const int64_t C = x->shape[1], W = x->shape[3], OH = idx->shape[2], OW = idx->shape[3];
    const int64_t *xs = x->strides;
    const T *xb = (const T *)x->storage->data + x->offset;
    int64_t *obase = (int64_t *)idx->storage->data + idx->offset;
    for (int64_t nc = nc0; nc < nc1; nc++) {
        const int64_t n = nc / C, c = nc % C;
        const T *plane = xb + n * xs[0] + c * xs[1];
        int64_t *ob = obase + nc * OH * OW;
        for (int64_t y = 0; y < OH; y++) for (int64_t z = 0; z < OW; z++) {
            int64_t bh, bw;
            tn__window_max_##S(plane, xs[2], xs[3], hs[y], he[y], ws[z], we[z], dh, dw, &bh, &bw);
            ob[y * OW + z] = bh * W + bw;
        }
    }
}
static void tn__pool_argmax_##S(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    const int64_t NC = x->shape[0] * x->shape[1];
    tn__argmax_args a = {idx, x, hs, he, ws, we, dh, dw};
    tn__parallel_range(tn__par_threads(tn__mul_sat(NC, x->shape[2] * x->shape[3]), NC), NC, tn__pool_argmax_part_##S, &a);
}
/* @end TN__DEFINE_IM2COL */
TN__DEFINE_IM2COL(float, f32)
TN__DEFINE_IM2COL(double, f64)
static int tn__cpu_im2col(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom) {
    if (img->dtype == TN_F32) tn__im2col_f32(fold, cols, img, geom);
    else if (img->dtype == TN_F64) tn__im2col_f64(fold, cols, img, geom);
    else return TN__FAIL_INT("im2col: dtype %s not supported (floating only)", tn_dtype_name(img->dtype));
    return 0;
}
static int tn__cpu_pool_argmax(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    if (x->dtype == TN_F32) tn__pool_argmax_f32(idx, x, hs, he, ws, we, dh, dw);
    else if (x->dtype == TN_F64) tn__pool_argmax_f64(idx, x, hs, he, ws, we, dh, dw);
    else return TN__FAIL_INT("max pooling: dtype %s not supported (floating only)", tn_dtype_name(x->dtype));
    return 0;
}

static const tn_backend tn__cpu_backend = {
    /* the compute entries through backend/cpu_half.c: half operands staged in float32 */
    "cpu", tn__cpu_alloc, tn__cpu_free, tn__cpu_copy, tn__cpu_fill, tn__cpu_half_unary, tn__cpu_half_binary, tn__cpu_half_ternary,
    tn__cpu_half_reduce, tn__cpu_half_lane, tn__cpu_half_index, tn__cpu_half_nonzero, tn__cpu_half_matmul, tn__cpu_half_random,
    tn__cpu_half_im2col, tn__cpu_half_pool_argmax, tn__cpu_half_optim, NULL, tn__cpu_half_batch_norm, NULL, tn__cpu_half_layer_norm, tn__cpu_half_cross_entropy,
    NULL,   /* attention: src/nn/attention.c runs its own fused kernel on the CPU */
    NULL,   /* check_index: the host checks at once */
    NULL,   /* optim_multi: optim/optim.c runs the CPU's multi-tensor step itself */
    NULL,   /* linalg: src/ops/linalg_*.c run their own kernels on the CPU */
    NULL,   /* matmul_ep: the CPU's GEMM has its own epilogue (src/ops/linalg.c) */
    NULL,   /* fft: src/ops/fft.c runs its own engine on the CPU */
    NULL, NULL, NULL, NULL,   /* graph_*: a CPU replay runs its nodes (no capture) */
    NULL,   /* nccl: CPU tensors are not NCCL's (the nccl process group refuses them) */
    NULL,   /* graph_pool: CUDA graphs of eager code are the GPU's (tn_cuda_graph_begin refuses the CPU) */
    NULL, NULL, NULL,   /* ipc_*: CPU storages cross processes as shared memory (io/shared.c) */
    NULL,   /* fused_elementwise: a CPU replay runs its own fused loop (src/jit/trace.c) */
};

static const tn_backend *tn__cpu_backend_get(void) { return &tn__cpu_backend; }

TNDEF void tn_register_backend(tn_device device, const tn_backend *backend) {
    if ((unsigned)device < TN_NUM_DEVICES && device != TN_CPU) tn__backends[device] = backend;
}
TNDEF const tn_backend *tn_get_backend(tn_device device) { return tn__backend_registered(device); }
