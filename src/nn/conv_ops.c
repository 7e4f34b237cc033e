/* the arguments of a threaded im2col convolution backward */
typedef struct { tn_tensor *gx, *gw, *gy, *x, *w; const int64_t *g; int64_t G; tn_tensor *cbuf, *gbuf, *ybuf, *wbuf; bool direct, wt; int64_t R, IB, LB; int failed; } tn__conv_bwd_args;
/* chunk t of nthr: its share of the images, with buffers t (and weight-gradient sum t) */
static void tn__conv_backward_part(void *args, int t, int nthr) {
    tn__conv_bwd_args *a_ = (tn__conv_bwd_args *)args;
    tn_tensor *gx = a_->gx, *gw = a_->gw, *gy = a_->gy, *x = a_->x, *w = a_->w, *cbuf = a_->cbuf, *gbuf = a_->gbuf, *ybuf = a_->ybuf, *wbuf = a_->wbuf;
    const int64_t *g = a_->g, G = a_->G, R = a_->R, IB = a_->IB, LB = a_->LB;
    const bool direct = a_->direct, wt = a_->wt;
    const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], O = w->shape[0];
    const int64_t K = tn__mul_sat(C, g[0] * g[1]), Kg = K / G, Og = O / G, Cg = C / G, L = tn__mul_sat(g[8], g[9]);
    const size_t es = tn_dtype_size(x->dtype);
    const tn_backend *be = tn__backend(TN_CPU);
        {
            const int64_t n1 = tn__split_at(N, t + 1, nthr);
            for (int64_t n = tn__split_at(N, t, nthr); n < n1; n += IB) {
                const int64_t ni = TN__MIN(IB, n1 - n);
                if (gx && !direct) memset((char *)tn_data_ptr(gx) + (size_t)(n * C * H * W) * es, 0, (size_t)(ni * C * H * W) * es);
                /* a block: ni whole images (ni > 1 or IB > 1), or rows [y0, y0 + rows) of image n */
                for (int64_t y0 = 0; y0 < g[8]; y0 += IB > 1 ? g[8] : R) {
                    const int64_t rows = IB > 1 ? g[8] : TN__MIN(R, g[8] - y0), Lc = IB > 1 ? ni * L : rows * g[9];
                    int64_t gb[10];
                    tn__conv_block_geom(g, y0, rows, gb);
                    const int64_t cb = cbuf ? cbuf->offset + t * K * LB : 0, gcb = gbuf ? gbuf->offset + t * K * LB : 0, yb = ybuf ? ybuf->offset + t * O * LB : 0;
                    tn_tensor img = tn__image_view(x, n);
                    /* gy of the block as an [O, Lc] matrix (row stride gys) at gyo */
                    const tn_tensor *gys_t = IB > 1 ? ybuf : gy;
                    const int64_t gys = IB > 1 ? Lc : L, gyo = IB > 1 ? yb : gy->offset + n * O * L + y0 * g[9];
                    if (IB > 1) for (int64_t i = 0; i < ni; i++) for (int64_t o = 0; o < O; o++)
                        memcpy((char *)tn_data_ptr(ybuf) + (size_t)(t * O * LB + o * Lc + i * L) * es, (const char *)tn_data_ptr(gy) + (size_t)(((n + i) * O + o) * L) * es, (size_t)L * es);
                    if (gw && !direct)
                        for (int64_t i = 0; i < (IB > 1 ? ni : 1); i++) {
                            tn_tensor im = tn__image_view(x, n + i), cols = tn__mat_view(cbuf, cb + i * L, K, Lc / (IB > 1 ? ni : 1), Lc, 1);
                            if (be->im2col(0, &cols, &im, IB > 1 ? g : gb)) TN__STORE_RELAXED(&a_->failed, 1);
                        }
                    for (int64_t gi = 0; gi < G; gi++) {
                        tn_tensor gyn = tn__mat_view(gys_t, gyo + gi * Og * gys, Og, Lc, gys, 1);
                        if (gw) {   /* gw[g] += gy[g] @ cols[g]^T, or gw[g]^T += cols[g] @ gy[g]^T */
                            tn_tensor Cm = tn__mat_view(wbuf, wbuf->offset + (t * G + gi) * Og * Kg, wt ? Kg : Og, wt ? Og : Kg, wt ? Og : Kg, 1);
                            tn_tensor cm = direct ? tn__mat_view(x, img.offset + gi * Cg * x->strides[1], Cg, L, x->strides[1], x->strides[3])
                                                  : tn__mat_view(cbuf, cb + gi * Kg * Lc, Kg, Lc, Lc, 1);
                            tn_tensor cmT = tn__mat_view(&cm, cm.offset, Lc, Kg, cm.strides[2], cm.strides[1]);
                            tn_tensor gynT = tn__mat_view(&gyn, gyn.offset, Lc, Og, 1, gys);
                            if (wt ? be->matmul(&Cm, &cm, &gynT, 1, 1) : be->matmul(&Cm, &gyn, &cmT, 1, 1)) TN__STORE_RELAXED(&a_->failed, 1);
                        }
                        if (gx) {   /* the columns' gradient w[g]^T @ gy[g] (1x1: the image's) */
                            tn_tensor A = tn__mat_view(w, w->offset + gi * Og * Kg, Kg, Og, 1, Kg);
                            tn_tensor Cm = direct ? tn__mat_view(gx, gx->offset + n * C * L + gi * Cg * L, Cg, L, L, 1)
                                                  : tn__mat_view(gbuf, gcb + gi * Kg * Lc, Kg, Lc, Lc, 1);
                            if (be->matmul(&Cm, &A, &gyn, 1, 0)) TN__STORE_RELAXED(&a_->failed, 1);
                        }
                    }
                    if (gx && !direct)   /* folded back onto the images */
                        for (int64_t i = 0; i < (IB > 1 ? ni : 1); i++) {
                            tn_tensor gimg = tn__image_view(gx, n + i), gcols = tn__mat_view(gbuf, gcb + i * L, K, Lc / (IB > 1 ? ni : 1), Lc, 1);
                            if (be->im2col(1, &gcols, &gimg, IB > 1 ? g : gb)) TN__STORE_RELAXED(&a_->failed, 1);
                        }
                }
            }
        }
}
/* The gradients of tn__conv_forward_cpu for the inputs that need them (gx, gw new and
   contiguous, or NULL): per block of images or of rows, with a per-thread weight-gradient
   sum added up in thread order at the end (deterministic for a given thread count). The
   weight gradient is computed as gw or as gw^T, whichever the GEMM's tiles fit better.
   gy, w contiguous. */
static int tn__conv_backward_cpu(tn_tensor *gx, tn_tensor *gw, tn_tensor *gy, tn_tensor *x, tn_tensor *w, const int64_t *g, int64_t G) {
    if (tn__conv_dw_ok(x, G)) {   /* depthwise, or Winograd where it applies */
        if ((gx && tn__conv_dw_cpu(1, gx, w, NULL, gy, g)) || (gw && tn__conv_dw_cpu(2, x, gw, NULL, gy, g))) return -1;
        return 0;
    }
    if (gw && tn__conv_smallk_ok(x, g, G)) {
        if (tn__conv_smallk_cpu(2, x, gw, NULL, gy, g)) return -1;
        gw = NULL;
    }
    if (gx && tn__conv_wino_ok(x, w, g, G, true)) {
        if (tn__conv_wino_cpu(gx, gy, w, NULL, g, 1)) return -1;
        gx = NULL;
    }
    if (gw && tn__conv_wino_ok(x, w, g, G, false)) {
        if (tn__conv_wino_wgrad_cpu(gw, x, gy, g)) return -1;
        gw = NULL;
    }
    if (!gx && !gw) return 0;
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0];
    const int64_t K = tn__mul_sat(C, g[0] * g[1]), Kg = K / G, Og = O / G, L = tn__mul_sat(g[8], g[9]);   /* fit: at most w's and y's numel */
    const bool direct = tn__conv_direct(x, g);
    const size_t es = tn_dtype_size(x->dtype);
    const int nbuf = gx && gw ? 2 : 1;
    const int64_t R = direct ? g[8] : tn__conv_block_rows(K, g, es, nbuf), IB = tn__conv_block_images(K, g, es, nbuf, R, direct);
    const int64_t LB = IB > 1 ? IB * L : R * g[9];
    const bool wt = gw && tn__gemm_tiles(x->dtype, Kg, Og) < tn__gemm_tiles(x->dtype, Og, Kg);   /* per group: [Kg, Og] */
    const tn_backend *be = tn__backend(TN_CPU);
    const int nthr = tn__par_threads(tn__mul_sat(tn__mul_sat(N, K), L), N);
    tn_tensor *cbuf = gw && !direct ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, K, LB)) : NULL;
    tn_tensor *gbuf = gx && !direct ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, K, LB)) : NULL;
    tn_tensor *ybuf = IB > 1 ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, O, LB)) : NULL;   /* gy of a block as [O, images*L] */
    tn_tensor *wbuf = gw ? (nthr == 1 && !wt ? tn_retain(gw) : tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, G, wt ? Kg : Og, wt ? Og : Kg))) : NULL;
    int failed = (gw && !wbuf) || (gw && !direct && !cbuf) || (gx && !direct && !gbuf) || (IB > 1 && !ybuf) || (wbuf && be->fill(wbuf, 0));
    if (!failed) {
        tn__conv_bwd_args a = {gx, gw, gy, x, w, g, G, cbuf, gbuf, ybuf, wbuf, direct, wt, R, IB, LB, 0};
        tn__parallel(nthr, tn__conv_backward_part, &a);
        failed = a.failed;
    }
    if (!failed && gw && (nthr > 1 || wt)) {   /* the threads' partial sums, in thread order */
        tn_tensor *sum = tn__reduce("conv2d", SUM, wbuf, TN_SHAPE(0), false);
        if (sum && wt) sum = tn_transpose(sum, 1, 2);
        failed = !sum || tn__copy(gw, tn_reshape(sum, gw->shape, gw->ndim));
    }
    tn_release(cbuf); tn_release(gbuf); tn_release(ybuf); tn_release(wbuf);
    return failed ? TN__FAIL_INT("conv2d backward: out of memory") : 0;
}
/* The backend conv2d entry's geometry (sh, sw, ph, pw, dh, dw, groups) from ours. */
static void tn__conv_lib_geom(const int64_t *g, int64_t G, int64_t *geom) {
    const int64_t v[7] = {g[6], g[7], g[4], g[5], g[2], g[3], G};
    memcpy(geom, v, sizeof v);
}
static int tn__conv_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)user;
    const int64_t *g = n->i, G = n->i[10];
    tn_tensor *x = tn_ctx_saved(n, 0), *w = tn_ctx_saved(n, 1);
    const bool nx = tn_ctx_needs_grad(n, 0), nw = tn_ctx_needs_grad(n, 1);
    if (tn__grad_disabled && !(gy = tn_contiguous(gy))) return -1;   /* read by the bias sum and the GEMMs */
    if (nin > 2 && tn_ctx_needs_grad(n, 2) && !(gin[2] = tn_sum_dims(gy, TN_SHAPE(0, 2, 3)))) return -1;
    if (!x || !w || (!nx && !nw)) return x && w ? 0 : -1;
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], K = C * g[0] * g[1], L = g[8] * g[9];
    if (tn__grad_disabled && x->device != TN_CPU) {   /* plain gradients from the backend's library (cuDNN) */
        const tn_backend *be = tn__backend(x->device);
        int64_t geom[7];
        tn__conv_lib_geom(g, G, geom);
        tn_tensor *xc = tn_contiguous(x), *wc = tn_contiguous(w);
        tn_tensor *gx = nx ? tn__own(tn__new(x->dtype, x->device, x->shape, 4)) : NULL, *gw = nw ? tn__own(tn__new(w->dtype, w->device, w->shape, 4)) : NULL;
        if (!xc || !wc || (nx && !gx) || (nw && !gw)) return -1;
        int rx = nx ? be->conv2d(1, gx, wc, gy, geom) : 0, rw = rx == 0 && nw ? be->conv2d(2, xc, gw, gy, geom) : 0;
        if (rx < 0 || rw < 0) return -1;
        if (rx == 0 && rw == 0) { gin[0] = gx; gin[1] = gw; return 0; }
        /* declined: the composite below */
    } else if (tn__grad_disabled) {   /* plain gradients: per image */
        tn_tensor *gx = nx ? tn__own(tn__new(x->dtype, TN_CPU, x->shape, 4)) : NULL, *gw = nw ? tn__own(tn__new(w->dtype, TN_CPU, w->shape, 4)) : NULL;
        if ((nx && !gx) || (nw && !gw)) return -1;
        if (tn__conv_backward_cpu(gx, gw, gy, x, tn_contiguous(w), g, G)) return -1;
        gin[0] = gx; gin[1] = gw;
        return 0;
    }
    /* recording (create_graph), or a case the library declined: the same products with
       differentiable ops over the batch */
    tn_tensor *gy2 = tn_reshape(tn_permute(gy, TN_SHAPE(1, 0, 2, 3)), TN_SHAPE(G, O / G, N * L));
    if (nw) {
        tn_tensor *ct = tn_reshape(tn_permute(tn__im2col(x, g), TN_SHAPE(1, 0, 2)), TN_SHAPE(G, K / G, N * L));
        if (!(gin[1] = tn_reshape(tn_matmul(gy2, tn_transpose(ct, 1, 2)), w->shape, 4))) return -1;
    }
    if (nx) {
        tn_tensor *wt = tn_transpose(tn_reshape(w, TN_SHAPE(G, O / G, K / G)), 1, 2);
        tn_tensor *gc = tn_permute(tn_reshape(tn_matmul(wt, gy2), TN_SHAPE(K, N, L)), TN_SHAPE(1, 0, 2));
        if (!(gin[0] = gc ? tn__col2im(gc, x->shape[2], x->shape[3], g) : NULL)) return -1;
    }
    return 0;
}
/* y = conv2d(x4, w4) + b (or the transposed one, backward bw) recorded as one node. */
static tn_tensor *tn__conv_record(tn_tensor *x4, tn_tensor *w4, tn_tensor *b, const int64_t *g, int64_t G, tn_tensor *y, tn_custom_backward bw) {
    tn_tensor *ins[3] = {x4, w4, b};
    tn_node *nd = tn__fn_node("ConvolutionBackward0", bw, ins, b ? 3 : 2);
    if (nd) {
        tn__node_geom(nd, g, 1, G, 0);
        tn__node_save(nd, x4);
        tn__node_save(nd, w4);
    }
    return tn__own(tn__node_attach(nd, y));
}
/* The graph replay's request (src/jit/trace.c) that the next CPU conv2d of this thread, under
   no_grad, apply activation act (TN__EPI_*) to its result in its GEMM's epilogue; the conv
   sets tn__conv_act_done when it did. tn__conv_pool_req: and then the 2x2, stride-2 max pool
   (the result [N, O, oh / 2, ow / 2]) where tn__conv_pool_ok; tn__conv_pool_done when it did. */
static TN__TLS int tn__conv_act_req, tn__conv_act_done, tn__conv_pool_req, tn__conv_pool_done;
/* conv2d of x4 [N, C, H, W] by w4 on the CPU, + b, as one node. */
static tn_tensor *tn__conv2d_cpu(tn_tensor *x4, tn_tensor *w4, tn_tensor *b, const int64_t *g, int64_t G) {
    const int act = tn__grad_disabled ? tn__conv_act_req : TN__EPI_NONE;
    const bool pool = tn__grad_disabled && tn__conv_pool_req && tn__conv_pool_ok(x4, w4, g, G, act);
    tn__conv_act_req = TN__EPI_NONE;
    tn__conv_pool_req = 0;
    tn_tensor *wc = tn_contiguous(w4), *bc = b ? tn_contiguous(b) : NULL;
    tn_tensor *y = wc && (!b || bc) ? tn__new(x4->dtype, TN_CPU, TN_SHAPE(x4->shape[0], w4->shape[0], pool ? g[8] / 2 : g[8], pool ? g[9] / 2 : g[9])) : NULL;
    if (!y || (pool ? tn__conv_forward_pool_cpu(y, x4, wc, bc, g, G, act) : tn__conv_forward_cpu_act(y, x4, wc, bc, g, G, act))) { tn_release(y); return NULL; }
    tn__conv_act_done = act != TN__EPI_NONE;
    tn__conv_pool_done = pool;
    return tn__conv_record(x4, w4, b, g, G, y, tn__conv_bw);
}

/* The backward of a transposed convolution through the library (tn__conv2d_lib): the
   forward (the gradient of x4) and weight gradient of the convolution that maps the
   output back to x4 (geometry g, g[8..9]: x4's size), image and output gradient swapped
   (mode 2). Under create_graph, or declined: the same with differentiable ops. */
static int tn__convt_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)user;
    const int64_t *g = n->i, G = n->i[10];
    tn_tensor *x = tn_ctx_saved(n, 0), *w = tn_ctx_saved(n, 1);
    const bool nx = tn_ctx_needs_grad(n, 0), nw = tn_ctx_needs_grad(n, 1);
    if (nin > 2 && tn_ctx_needs_grad(n, 2) && !(gin[2] = tn_sum_dims(gy, TN_SHAPE(0, 2, 3)))) return -1;
    if (!x || !w || (!nx && !nw)) return x && w ? 0 : -1;
    if (tn__grad_disabled) {
        const tn_backend *be = tn__backend(x->device);
        int64_t geom[7];
        tn__conv_lib_geom(g, G, geom);
        tn_tensor *gc = tn_contiguous(gy), *wc = tn_contiguous(w), *xc = tn_contiguous(x);
        tn_tensor *gx = nx ? tn__own(tn__new(x->dtype, x->device, x->shape, 4)) : NULL, *gw = nw ? tn__own(tn__new(w->dtype, w->device, w->shape, 4)) : NULL;
        if (!gc || !wc || !xc || (nx && !gx) || (nw && !gw)) return -1;
        int rx = nx ? be->conv2d(0, gc, wc, gx, geom) : 0, rw = rx == 0 && nw ? be->conv2d(2, gc, gw, xc, geom) : 0;
        if (rx < 0 || rw < 0) return -1;
        if (rx == 0 && rw == 0) { gin[0] = gx; gin[1] = gw; return 0; }
    }
    const int64_t N = x->shape[0], C = x->shape[1], KO = w->shape[1] * G * g[0] * g[1], L = g[8] * g[9];
    tn_conv_fn_opts co = TN_DEFAULTS(tn_conv_fn_opts);   /* g's stride, padding, dilation pairs */
    memcpy(co.stride_hw, g + 6, sizeof co.stride_hw);
    memcpy(co.padding_hw, g + 4, sizeof co.padding_hw);
    memcpy(co.dilation_hw, g + 2, sizeof co.dilation_hw);
    co.groups = G;
    if (nx && !(gin[0] = tn_conv2d_opts(gy, w, NULL, co))) return -1;
    if (nw) {
        tn_tensor *xg = tn_reshape(tn_permute(x, TN_SHAPE(1, 0, 2, 3)), TN_SHAPE(G, C / G, N * L));
        tn_tensor *ct = tn_reshape(tn_permute(tn__im2col(gy, g), TN_SHAPE(1, 0, 2)), TN_SHAPE(G, KO / G, N * L));
        if (!(gin[1] = tn_reshape(tn_matmul(xg, tn_transpose(ct, 1, 2)), w->shape, 4))) return -1;
    }
    return 0;
}
/* conv2d (out NULL) or conv_transpose2d (out: its output size) of x4 by w4 (+ b) through
   the backend's library convolution (cuDNN), as the same node as on the CPU: a transposed
   convolution is the input gradient (mode 1) of the convolution with the same weight that
   maps the output back to x4. *declined when the library cannot take the case (then
   nothing is recorded and the caller takes the im2col path). */
static tn_tensor *tn__conv2d_lib(tn_tensor *x4, tn_tensor *w4, tn_tensor *b, const int64_t *g, int64_t G, const int64_t *out, int *declined) {
    const tn_backend *be = tn__backend(x4->device);
    int64_t geom[7];
    tn__conv_lib_geom(g, G, geom);
    *declined = 1;
    for (int i = 0; out && i < 2; i++)   /* the convolution of the output must count x4's windows (output_padding >= stride does not) */
        if ((out[i] + 2 * g[4 + i] - g[2 + i] * (g[i] - 1) - 1) / g[6 + i] + 1 != g[8 + i]) return NULL;
    tn_tensor *xc = tn_contiguous(x4), *wc = tn_contiguous(w4);
    tn_tensor *y = xc && wc ? tn__new(x4->dtype, x4->device, TN_SHAPE(x4->shape[0], out ? w4->shape[1] * G : w4->shape[0], out ? out[0] : g[8], out ? out[1] : g[9]))
                            : NULL;
    *declined = 0;
    int rc = !y ? -1 : out ? be->conv2d(1, y, wc, xc, geom) : be->conv2d(0, xc, wc, y, geom);
    if (rc == 0 && b) {   /* y += bias, broadcast over N, H, W */
        const int64_t bs[4] = {1, b->shape[0], 1, 1}, bst[4] = {0, b->strides[0], 0, 0};
        tn_tensor bv = tn__restrided(b, bs, bst, 4);
        rc = be->binary(ADD, y, y, &bv, 1);
    }
    if (rc) { *declined = rc == 1; tn_release(y); return NULL; }
    return tn__conv_record(x4, w4, b, g, G, y, out ? tn__convt_bw : tn__conv_bw);
}

/* nsp spatial dims (1 or 2), values per dim in s, p, d, op; p[0] == TN_PADDING_SAME for 'same'. */
static tn_tensor *tn__conv(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, int nsp, bool transposed,
                           const int64_t *s, const int64_t *p, const int64_t *d, const int64_t *op, int64_t groups) {
    TN__AUTOCAST(TN__AC_LOWER, tn__conv(fn, ac_[0], ac_[1], ac_[2], nsp, transposed, s, p, d, op, groups), x, w, b);
    TN__CHECK_NULL(x); TN__CHECK_NULL(w);
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: expected %dD (unbatched) or %dD (batched) input, but got input of size %s", fn, nsp + 1, nsp + 2, TN__SHAPE(x));
    if (w->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: expected a %d-d weight [%s, k...], got %s", fn, nsp + 2, transposed ? "in_channels, out_channels/groups" : "out_channels, in_channels/groups", TN__SHAPE(w));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    if (tn__is_half(x->dtype)) {
        tn_scope_begin();
        return tn__nn_half_return(tn__conv(fn, tn__nn_f32(x), tn__nn_f32(w), tn__nn_f32(b), nsp, transposed, s, p, d, op, groups), x->dtype);
    }
    if (groups <= 0) return (tn_tensor *)tn__error("%s: non-positive groups is not supported (got %lld)", fn, (long long)groups);
    bool same = p[0] == TN_PADDING_SAME;
    if (tn__check_positive(fn, "stride", s, nsp) || tn__check_positive(fn, "dilation", d, nsp)) return NULL;
    for (int i = 0; i < nsp && !same; i++) if (p[i] < 0) return (tn_tensor *)tn__error("%s: negative padding is not supported (got %lld)", fn, (long long)p[i]);
    /* geometry within 2^31 keeps every size computed below far from int64 overflow */
    for (int i = 0; i < nsp; i++)
        if (s[i] > INT32_MAX || d[i] > INT32_MAX || (!same && p[i] > INT32_MAX) || (op && op[i] > INT32_MAX) || w->shape[2 + i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: stride, padding, dilation and kernel size must be below 2^31 (dim %d)", fn, i);
    if (same && transposed) return (tn_tensor *)tn__error("%s: padding='same' is not supported for transposed convolutions", fn);
    for (int i = 0; i < nsp && same; i++) if (s[i] != 1) return (tn_tensor *)tn__error("%s: padding='same' is not supported for strided convolutions", fn);
    const bool batched = x->ndim == nsp + 2;
    const int64_t C = x->shape[batched ? 1 : 0], O = transposed ? tn__mul_sat(w->shape[1], groups) : w->shape[0];   /* fits once groups divides C (checked below) */
    if (w->shape[0] % groups)
        return (tn_tensor *)tn__error("%s: given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of size %s instead",
                                      fn, (long long)groups, (long long)groups, TN__SHAPE(w));
    int64_t wc;   /* the input channels the weight expects: w->shape[1] * groups, checked (groups is the caller's) */
    if (!transposed && (C % groups || O % groups || !tn__mul_ok(w->shape[1], groups, &wc) || wc != C))
        return (tn_tensor *)tn__error("%s: given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels instead",
                                      fn, (long long)groups, TN__SHAPE(w), TN__SHAPE(x), (long long)tn__mul_sat(w->shape[1], groups), (long long)C);
    if (transposed && (C % groups || w->shape[0] != C))
        return (tn_tensor *)tn__error("%s: given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels instead",
                                      fn, (long long)groups, TN__SHAPE(w), TN__SHAPE(x), (long long)w->shape[0], (long long)C);
    if (b && (b->ndim != 1 || b->shape[0] != O)) return (tn_tensor *)tn__error("%s: bias of size %s, expected [%lld]", fn, TN__SHAPE(b), (long long)O);
    for (int i = 2; i < w->ndim; i++)
        if (w->shape[i] <= 0) return (tn_tensor *)tn__error("%s: kernel size should be greater than zero, but got weight of size %s", fn, TN__SHAPE(w));

    /* the 2-d geometry: a 1-d convolution is a 2-d one of height 1 */
    int64_t in[2], k[2], g[10];
    for (int i = 0; i < 2; i++) {
        int j = i - (2 - nsp);          /* index into the caller's per-dim arrays, -1 for the unit height */
        in[i] = j < 0 ? 1 : x->shape[x->ndim - nsp + j];
        k[i] = j < 0 ? 1 : w->shape[2 + j];
        g[2 + i] = j < 0 ? 1 : d[j];
        g[6 + i] = j < 0 ? 1 : s[j];
        g[4 + i] = j < 0 || same ? 0 : p[j];
        g[i] = k[i];
        if (same) g[4 + i] = g[2 + i] * (k[i] - 1) / 2;   /* the odd pixel goes to the end, as PyTorch */
        if (transposed) {
            int64_t o = j < 0 ? 0 : op[j];
            if (o < 0 || (o >= g[6 + i] && o >= g[2 + i]))
                return (tn_tensor *)tn__error("%s: output padding must be smaller than either stride or dilation, but got output_padding=%lld, stride=%lld, dilation=%lld",
                                              fn, (long long)o, (long long)g[6 + i], (long long)g[2 + i]);
            g[8 + i] = in[i];
            int64_t grown;   /* (in - 1) * stride: in up to 2^60, stride up to 2^31 */
            if (!tn__mul_ok(in[i] - 1, g[6 + i], &grown) || grown > INT64_MAX / 2)
                return (tn_tensor *)tn__error("%s: input %s with stride %lld gives an output size past int64", fn, TN__SHAPE(x), (long long)g[6 + i]);
            in[i] = grown - 2 * g[4 + i] + g[2 + i] * (k[i] - 1) + o + 1;   /* the output size */
            if (in[i] <= 0) return (tn_tensor *)tn__error("%s: input %s gives a non-positive output size %lld", fn, TN__SHAPE(x), (long long)in[i]);
        } else {
            int64_t span = g[2 + i] * (k[i] - 1) + 1, padded = in[i] + (same ? span - 1 : 2 * g[4 + i]);
            if (span > padded)
                return (tn_tensor *)tn__error("%s: calculated padded input size per channel: (%lld). Kernel size: (%lld). Kernel size can't be greater than actual input size (input %s, weight %s)",
                                              fn, (long long)padded, (long long)span, TN__SHAPE(x), TN__SHAPE(w));
            g[8 + i] = same ? in[i] : (padded - span) / g[6 + i] + 1;
        }
    }
    tn_scope_begin();
    tn_tensor *x4 = batched ? x : tn_unsqueeze(x, 0), *w4 = w;
    if (nsp == 1) { x4 = tn_unsqueeze(x4, 2); w4 = tn_unsqueeze(w, 2); }
    const int64_t N = x4 ? x4->shape[0] : 0, KK = k[0] * k[1], G = groups;
    tn_tensor *y = NULL;
    int declined = 1;   /* no one-node path took it: the composites below */
    if (!transposed && x4 && x4->device == TN_CPU) {
        y = tn__conv2d_cpu(x4, w4, b, g, G);
        b = NULL;   /* added */
        declined = 0;
    } else if (x4 && tn__backend(x4->device)->conv2d && (!b || b->dtype == x4->dtype)) {
        y = tn__conv2d_lib(x4, w4, b, g, G, transposed ? in : NULL, &declined);
        if (!declined) b = NULL;   /* added (or y is NULL after an error) */
    }
    if (declined && !transposed) {
        int64_t Kg = C / G * KK, L = g[8] * g[9];
        tn_tensor *cols = x4 ? tn__im2col(x4, g) : NULL;                        /* [N, K, L] over [K, N, L] */
        tn_tensor *ct = tn_permute(cols, TN_SHAPE(1, 0, 2));                     /* [K, N, L], contiguous */
        if (G == 1) y = tn_mm(tn_reshape(w4, TN_SHAPE(O, Kg)), tn_reshape(ct, TN_SHAPE(Kg, N * L)));
        else y = tn_matmul(tn_reshape(w4, TN_SHAPE(G, O / G, Kg)), tn_reshape(ct, TN_SHAPE(G, Kg, N * L)));
        y = tn_permute(tn_reshape(y, TN_SHAPE(O, N, g[8], g[9])), TN_SHAPE(1, 0, 2, 3));
    } else if (declined) {
        int64_t Cg = C / G, Og = O / G, HW = g[8] * g[9];
        tn_tensor *xt = tn_reshape(tn_permute(x4, TN_SHAPE(1, 0, 2, 3)), TN_SHAPE(G, Cg, N * HW));
        tn_tensor *wt = tn_transpose(tn_reshape(w4, TN_SHAPE(G, Cg, Og * KK)), 1, 2);   /* [G, Og*KK, Cg] */
        tn_tensor *cols = G == 1 ? tn_mm(tn_squeeze_dim(wt, 0), tn_squeeze_dim(xt, 0)) : tn_matmul(wt, xt);
        cols = tn_permute(tn_reshape(cols, TN_SHAPE(O * KK, N, HW)), TN_SHAPE(1, 0, 2)); /* [N, O*KK, HW] */
        y = cols ? tn__col2im(cols, in[0], in[1], g) : NULL;
    }
    y = b ? tn_add(y, tn_reshape(b, TN_SHAPE(1, O, 1, 1))) : tn_contiguous(y);
    if (nsp == 1) y = tn_squeeze_dim(y, 2);
    y = tn__grad_name(y, "ConvolutionBackward0");
    return tn__scope_return(batched ? y : tn_squeeze_dim(y, 0));
}
/* tn_conv_fn_opts -> per-dim stride, padding (TN_PADDING_SAME kept, VALID as 0), dilation,
   output padding; 0, or -1 with an error. */
static int tn__conv_args(const char *fn, int nsp, bool transposed, const tn_conv_fn_opts *o, int64_t s[2], int64_t p[2], int64_t d[2], int64_t op[2]) {
    const int64_t *hw[4] = {o->stride_hw, o->padding_hw, o->dilation_hw, o->output_padding_hw};
    const int64_t v[4] = {o->stride, o->padding == TN_PADDING_VALID ? 0 : o->padding, o->dilation, o->output_padding};
    int64_t *out[4] = {s, p, d, op};
    for (int a = 0; a < 4; a++) {
        const bool pair = hw[a][0] || hw[a][1];
        if (pair && nsp == 1) return TN__FAIL_INT("%s: a 1-d convolution takes ints, not (h, w) pairs", fn);
        out[a][0] = pair ? hw[a][0] : v[a];
        out[a][1] = pair ? hw[a][1] : v[a];
    }
    if (o->padding == TN_PADDING_SAME || o->padding == TN_PADDING_VALID) p[0] = p[1] = o->padding == TN_PADDING_SAME ? TN_PADDING_SAME : 0;
    if (!transposed && (op[0] || op[1])) return TN__FAIL_INT("%s: output_padding is an option of the transposed convolutions only", fn);
    return 0;
}
/* Integer convolutions, as PyTorch's CPU: every integer dtype, but the transposed and the
   dilated ones int64 only (its slow_conv_transpose and slow_conv_dilated kernels have no
   other); through float64 (tn__nn_int_begin). 0: not an integer input, the float path decides. */
static int tn__conv_int_begin(const char *fn, tn_tensor **xw, tn_tensor **b, bool transposed, const int64_t *dil, int nsp) {
    if (!xw[0] || !xw[1] || !tn__nn_is_int(xw[0])) return 0;
    bool dilated = false;
    for (int i = 0; i < nsp; i++) dilated = dilated || dil[i] != 1;
    if ((transposed || dilated) && xw[0]->dtype != TN_I64)
        return TN__FAIL_INT("%s: input must be a floating dtype or int64, got %s (PyTorch's CPU %s convolution has no %s kernel)", fn,
                            tn_dtype_name(xw[0]->dtype), transposed ? "transposed" : "dilated", tn_dtype_name(xw[0]->dtype));
    return tn__nn_int_begin(fn, xw, 2, b, tn_numel(xw[1]));   /* numel(w): at least the products per output */
}
/* Complex operands: 1 when x, w and b are all of one complex dtype (the caller takes
   tn__conv_complex), -1 with PyTorch's error when only some are complex, 0 when none is. */
static int tn__conv_complex_check(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b) {
    if (!x || !w) return 0;
    const bool any = tn_is_complex(x) || tn_is_complex(w) || (b && tn_is_complex(b));
    if (!any) return 0;
    if (x->dtype != w->dtype || (b && b->dtype != x->dtype))
        return TN__FAIL_INT("%s: Input type (%s), weight type (%s) and bias type (%s) should be the same", fn, tn_dtype_name(x->dtype),
                            tn_dtype_name(w->dtype), b ? tn_dtype_name(b->dtype) : "none");
    return 1;
}
/* A complex convolution as PyTorch's complex_convolution: Gauss's three real convolutions
   of the parts (ac - bd, (a + b)(c + d) - ac - bd), then the bias's parts; conv runs one
   real convolution without bias (differentiable: the parts are views). */
static tn_tensor *tn__conv_complex(tn_tensor *x, tn_tensor *w, tn_tensor *b, int nsp, tn_tensor *(*conv)(tn_tensor *, tn_tensor *, const void *), const void *ctx) {
    tn_scope_begin();
    tn_tensor *xr = tn_real(x), *xi = tn_imag(x), *wr = tn_real(w), *wi = tn_imag(w);
    tn_tensor *ac = conv(xr, wr, ctx), *bd = conv(xi, wi, ctx), *s = conv(tn_add(xr, xi), tn_add(wr, wi), ctx);
    tn_tensor *re = tn_sub(ac, bd), *im = tn_sub(tn_sub(s, ac), bd);
    if (b) {   /* [O, 1, ...]: broadcasts over the batched and the unbatched outputs */
        int64_t bs[TN_MAX_DIMS] = {-1};
        for (int k = 1; k <= nsp; k++) bs[k] = 1;
        re = tn_add(re, tn_reshape(tn_real(b), bs, nsp + 1));
        im = tn_add(im, tn_reshape(tn_imag(b), bs, nsp + 1));
    }
    return tn__scope_return(tn_complex(re, im));
}
typedef struct tn__conv_call { const char *fn; int nsp; bool transposed; tn_conv_fn_opts o; } tn__conv_call;
static tn_tensor *tn__conv_kw(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, int nsp, bool transposed, tn_conv_fn_opts o);
static tn_tensor *tn__conv_part(tn_tensor *x, tn_tensor *w, const void *ctx) {
    const tn__conv_call *c = (const tn__conv_call *)ctx;
    return tn__conv_kw(c->fn, x, w, NULL, c->nsp, c->transposed, c->o);
}
static tn_tensor *tn__conv_kw(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, int nsp, bool transposed, tn_conv_fn_opts o) {
    int64_t s[2], p[2], d[2], op[2];
    if (tn__conv_args(fn, nsp, transposed, &o, s, p, d, op)) return NULL;
    const int cx = tn__conv_complex_check(fn, x, w, b);
    if (cx) {
        tn__conv_call c = {fn, nsp, transposed, o};
        return cx < 0 ? NULL : TN__AS(fn, tn__conv_complex(x, w, b, nsp, tn__conv_part, &c));
    }
    tn_scope_begin();
    tn_tensor *xw[2] = {x, w};
    const int r = tn__conv_int_begin(fn, xw, &b, transposed, d, nsp);
    tn_tensor *y = r < 0 ? NULL : tn__conv(fn, xw[0], xw[1], b, nsp, transposed, s, p, d, transposed ? op : NULL, o.groups);
    return TN__AS(fn, r > 0 ? tn__nn_int_end(y, x->dtype) : tn__scope_return(y));
}
TNDEF tn_tensor *tn_conv1d_opts(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_conv_fn_opts o) { return tn__conv_kw("tn_conv1d", x, w, b, 1, false, o); }
TNDEF tn_tensor *tn_conv2d_opts(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_conv_fn_opts o) { return tn__conv_kw("tn_conv2d", x, w, b, 2, false, o); }
TNDEF tn_tensor *tn_conv_transpose1d_opts(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_conv_fn_opts o) { return tn__conv_kw("tn_conv_transpose1d", x, w, b, 1, true, o); }
TNDEF tn_tensor *tn_conv_transpose2d_opts(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_conv_fn_opts o) { return tn__conv_kw("tn_conv_transpose2d", x, w, b, 2, true, o); }
TNDEF tn_tensor *tn_conv1d_str(tn_tensor *x, tn_tensor *w, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_conv_fn_opts, conv_fn, "tn_conv1d", options, tn_conv1d_opts(x, w, b, o));
}
TNDEF tn_tensor *tn_conv2d_str(tn_tensor *x, tn_tensor *w, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_conv_fn_opts, conv_fn, "tn_conv2d", options, tn_conv2d_opts(x, w, b, o));
}
TNDEF tn_tensor *tn_conv_transpose1d_str(tn_tensor *x, tn_tensor *w, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_conv_fn_opts, conv_fn, "tn_conv_transpose1d", options, tn_conv_transpose1d_opts(x, w, b, o));
}
TNDEF tn_tensor *tn_conv_transpose2d_str(tn_tensor *x, tn_tensor *w, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_conv_fn_opts, conv_fn, "tn_conv_transpose2d", options, tn_conv_transpose2d_opts(x, w, b, o));
}
