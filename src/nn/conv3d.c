/* ---- 3-d convolutions ----
   Both are one 2-d convolution (tn__conv: the CPU's blocked im2col + GEMM, or cuDNN) over
   the depth dim folded away:
     conv3d: the kD depth windows of each output depth stacked as channels (im2col over
       depth, [N, C*kD, OD*H*W]) and the weight [O, C/g, kD, kH, kW] read as [O, C/g*kD, kH,
       kW], so that groups keep their channels together; each output depth is one sample.
     conv_transpose3d: each input depth one sample of conv_transpose2d, with the depth taps
       as output channels (weight [C, O/g*kD, kH, kW]), then the taps summed into their output
       depths (col2im over depth), cropped by the padding, widened by output_padding.
   Every step is differentiable (im2col and col2im are each other's backward), so the
   gradients, of any order, are those of the convolution. */
/* A triple option: the list when given (3 values), else the int for every dim. */
static int tn__kw_triple(const char *fn, const char *name, int64_t v, const tn_ints *l, int64_t out[3]) {
    if (l->n != 0 && l->n != 3) return TN__FAIL_INT("%s: %s must be an int or a tuple of 3 ints, got %d values", fn, name, l->n);
    for (int i = 0; i < 3; i++) out[i] = l->n ? l->v[i] : v;
    return 0;
}
/* x [N, C, D, H, W]: per-dim stride, padding (p[0] TN_PADDING_SAME for 'same'), dilation,
   output padding checked as tn__conv checks its dims. */
static tn_tensor *tn__conv3d(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, bool transposed, const int64_t *s, const int64_t *p,
                             const int64_t *d, const int64_t *op, int64_t groups) {
    TN__CHECK_NULL(x); TN__CHECK_NULL(w);
    if (x->ndim != 4 && x->ndim != 5)
        return (tn_tensor *)tn__error("%s: expected 4D (unbatched) or 5D (batched) input, but got input of size %s", fn, TN__SHAPE(x));
    if (w->ndim != 5)
        return (tn_tensor *)tn__error("%s: expected a 5-d weight [%s, kD, kH, kW], got %s", fn, transposed ? "in_channels, out_channels/groups" : "out_channels, in_channels/groups", TN__SHAPE(w));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    if (groups <= 0) return (tn_tensor *)tn__error("%s: non-positive groups is not supported (got %lld)", fn, (long long)groups);
    const bool same = p[0] == TN_PADDING_SAME;
    if (tn__check_positive(fn, "stride", s, 3) || tn__check_positive(fn, "dilation", d, 3)) return NULL;
    for (int i = 0; i < 3; i++) {
        if (!same && p[i] < 0) return (tn_tensor *)tn__error("%s: negative padding is not supported (got %lld)", fn, (long long)p[i]);
        if (s[i] > INT32_MAX || d[i] > INT32_MAX || (!same && p[i] > INT32_MAX) || (op && (op[i] < 0 || op[i] > INT32_MAX)) || w->shape[2 + i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: stride, padding, dilation and kernel size must be below 2^31 and output padding non-negative (dim %d)", fn, i);
        if (w->shape[2 + i] <= 0) return (tn_tensor *)tn__error("%s: kernel size should be greater than zero, but got weight of size %s", fn, TN__SHAPE(w));
        if (same && s[i] != 1) return (tn_tensor *)tn__error("%s: padding='same' is not supported for strided convolutions", fn);
    }
    if (same && transposed) return (tn_tensor *)tn__error("%s: padding='same' is not supported for transposed convolutions", fn);
    const bool batched = x->ndim == 5;
    const int64_t C = x->shape[batched ? 1 : 0], kD = w->shape[2], sD = s[0], dD = d[0];
    if (w->shape[0] % groups)
        return (tn_tensor *)tn__error("%s: given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of size %s instead",
                                      fn, (long long)groups, (long long)groups, TN__SHAPE(w));
    int64_t wc;
    if (!transposed && (C % groups || !tn__mul_ok(w->shape[1], groups, &wc) || wc != C))
        return (tn_tensor *)tn__error("%s: given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels instead",
                                      fn, (long long)groups, TN__SHAPE(w), TN__SHAPE(x), (long long)tn__mul_sat(w->shape[1], groups), (long long)C);
    if (transposed && (C % groups || w->shape[0] != C))
        return (tn_tensor *)tn__error("%s: given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels instead",
                                      fn, (long long)groups, TN__SHAPE(w), TN__SHAPE(x), (long long)w->shape[0], (long long)C);
    const int64_t O = transposed ? tn__mul_sat(w->shape[1], groups) : w->shape[0];
    if (b && (b->ndim != 1 || b->shape[0] != O)) return (tn_tensor *)tn__error("%s: bias of size %s, expected [%lld]", fn, TN__SHAPE(b), (long long)O);
    const int64_t D = x->shape[x->ndim - 3], H = x->shape[x->ndim - 2], W = x->shape[x->ndim - 1];
    /* the depth geometry (H and W are the 2-d convolution's to check) */
    const int64_t span = dD * (kD - 1) + 1;
    int64_t padL = same ? dD * (kD - 1) / 2 : p[0], padR = same ? dD * (kD - 1) - padL : p[0], OD;
    if (!transposed) {
        if (D + padL + padR < span)
            return (tn_tensor *)tn__error("%s: calculated padded input size per channel: (%lld x %lld x %lld). Kernel size: (%lld x %lld x %lld). Kernel size can't be greater than actual input size",
                                          fn, (long long)(D + padL + padR), (long long)(H + (same ? 0 : 2 * p[1])), (long long)(W + (same ? 0 : 2 * p[2])),
                                          (long long)kD, (long long)w->shape[3], (long long)w->shape[4]);
        OD = (D + padL + padR - span) / sD + 1;
    } else {
        if (op[0] >= sD && op[0] >= dD)
            return (tn_tensor *)tn__error("%s: output padding must be smaller than either stride or dilation, but got output_padding=%lld, stride=%lld, dilation=%lld",
                                          fn, (long long)op[0], (long long)sD, (long long)dD);
        int64_t grown;
        if (!tn__mul_ok(D - 1 < 0 ? 0 : D - 1, sD, &grown) || grown > INT64_MAX / 2)
            return (tn_tensor *)tn__error("%s: input %s with stride %lld gives an output size past int64", fn, TN__SHAPE(x), (long long)sD);
        OD = grown + span - 2 * p[0] + op[0];
        if (OD <= 0) return (tn_tensor *)tn__error("%s: input %s gives a non-positive output depth %lld", fn, TN__SHAPE(x), (long long)OD);
    }
    const int64_t s2[2] = {s[1], s[2]}, d2[2] = {d[1], d[2]}, p2[2] = {same ? TN_PADDING_SAME : p[1], same ? 0 : p[2]}, op2[2] = {op ? op[1] : 0, op ? op[2] : 0};
    tn_scope_begin();
    tn_tensor *x5 = batched ? x : tn_unsqueeze(x, 0), *y = NULL;
    const int64_t N = x5 ? x5->shape[0] : 0, HW = tn__mul_sat(H, W);
    if (!transposed) {
        /* [N, C, Dp, H*W] -> depth windows [N, C*kD, OD, H, W] -> [N*OD, C*kD, H, W] */
        tn_tensor *xp = padL || padR ? tn_pad(x5, TN_SHAPE(0, 0, 0, 0, padL, padR)) : x5;
        tn_tensor *x4 = tn_reshape(xp, TN_SHAPE(N, C, D + padL + padR, HW));
        const int64_t g[10] = {kD, 1, dD, 1, 0, 0, sD, 1, OD, HW};
        tn_tensor *cols = x4 ? tn__im2col(x4, g) : NULL;
        tn_tensor *xs = tn_reshape(tn_permute(tn_reshape(cols, TN_SHAPE(N, C * kD, OD, H, W)), TN_SHAPE(0, 2, 1, 3, 4)), TN_SHAPE(N * OD, C * kD, H, W));
        tn_tensor *w4 = tn_reshape(w, TN_SHAPE(O, w->shape[1] * kD, w->shape[3], w->shape[4]));
        tn_tensor *y4 = xs && w4 ? tn__conv(fn, xs, w4, b, 2, false, s2, p2, d2, NULL, groups) : NULL;
        if (y4) y = tn_permute(tn_reshape(y4, TN_SHAPE(N, OD, O, y4->shape[2], y4->shape[3])), TN_SHAPE(0, 2, 1, 3, 4));
    } else {
        /* [N*D, C, H, W] -> conv_transpose2d with the taps as channels [N*D, O*kD, OH, OW] */
        tn_tensor *xs = tn_reshape(tn_permute(x5, TN_SHAPE(0, 2, 1, 3, 4)), TN_SHAPE(N * D, C, H, W));
        tn_tensor *w4 = tn_reshape(w, TN_SHAPE(C, w->shape[1] * kD, w->shape[3], w->shape[4]));
        tn_tensor *y4 = xs && w4 ? tn__conv(fn, xs, w4, NULL, 2, true, s2, p2, d2, op2, groups) : NULL;
        if (y4) {
            const int64_t OH = y4->shape[2], OW = y4->shape[3], K = tn__mul_sat(tn__mul_sat(O, OH), tn__mul_sat(OW, kD)), Dfull = (D - 1) * sD + span;
            /* the taps of each output (o, h, w) as col2im's rows: [N, O*OH*OW*kD, D] */
            tn_tensor *cols = tn_reshape(tn_permute(tn_reshape(y4, TN_SHAPE(N, D, O, kD, OH, OW)), TN_SHAPE(0, 2, 4, 5, 3, 1)), TN_SHAPE(N, K, D));
            const int64_t g[10] = {kD, 1, dD, 1, 0, 0, sD, 1, D, 1};
            tn_tensor *img = cols ? tn__col2im(tn_contiguous(cols), Dfull, 1, g) : NULL;   /* [N, O*OH*OW, Dfull, 1] */
            y = tn_permute(tn_reshape(img, TN_SHAPE(N, O, OH, OW, Dfull)), TN_SHAPE(0, 1, 4, 2, 3));
            if (p[0] || op[0]) y = tn_pad(y, TN_SHAPE(0, 0, 0, 0, -p[0], op[0] - p[0]));
            if (b) y = tn_add(y, tn_reshape(b, TN_SHAPE(1, O, 1, 1, 1)));
        }
    }
    y = tn__grad_name(tn_contiguous(y), "ConvolutionBackward0");
    return tn__scope_return(batched ? y : tn__grad_name(tn_squeeze_dim(y, 0), "SqueezeBackward1"));
}
typedef struct tn__conv3d_call { const char *fn; bool transposed; const tn_conv3d_fn_opts *o; } tn__conv3d_call;
static tn_tensor *tn__conv3d_kw(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, bool transposed, const tn_conv3d_fn_opts *o);
static tn_tensor *tn__conv3d_part(tn_tensor *x, tn_tensor *w, const void *ctx) {
    const tn__conv3d_call *c = (const tn__conv3d_call *)ctx;
    return tn__conv3d_kw(c->fn, x, w, NULL, c->transposed, c->o);
}
static tn_tensor *tn__conv3d_kw(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, bool transposed, const tn_conv3d_fn_opts *o) {
    TN__AUTOCAST(TN__AC_LOWER, tn__conv3d_kw(fn, ac_[0], ac_[1], ac_[2], transposed, o), x, w, b);
    int64_t s[3], p[3], d[3], op[3];
    if (tn__kw_triple(fn, "stride", o->stride, &o->stride_dhw, s) || tn__kw_triple(fn, "padding", o->padding == TN_PADDING_VALID ? 0 : o->padding, &o->padding_dhw, p) ||
        tn__kw_triple(fn, "dilation", o->dilation, &o->dilation_dhw, d) || tn__kw_triple(fn, "output_padding", o->output_padding, &o->output_padding_dhw, op))
        return NULL;
    if (o->padding == TN_PADDING_SAME && o->padding_dhw.n) return (tn_tensor *)tn__error("%s: give padding='same' or a padding tuple, not both", fn);
    if (!transposed && (op[0] || op[1] || op[2])) return (tn_tensor *)tn__error("%s: output_padding is an option of the transposed convolutions only", fn);
    const int cx = tn__conv_complex_check(fn, x, w, b);
    if (cx) {
        tn__conv3d_call c = {fn, transposed, o};
        return cx < 0 ? NULL : TN__AS(fn, tn__conv_complex(x, w, b, 3, tn__conv3d_part, &c));
    }
    tn_scope_begin();
    tn_tensor *xw[2] = {x, w};
    const int r = tn__conv_int_begin(fn, xw, &b, transposed, d, 3);
    tn_tensor *y = r < 0 ? NULL : tn__conv3d(fn, xw[0], xw[1], b, transposed, s, p, d, transposed ? op : NULL, o->groups);
    return TN__AS(fn, r > 0 ? tn__nn_int_end(y, x->dtype) : tn__scope_return(y));
}
TNDEF tn_tensor *tn_conv3d_opts(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_conv3d_fn_opts o) { return tn__conv3d_kw("tn_conv3d", x, w, b, false, &o); }
TNDEF tn_tensor *tn_conv_transpose3d_opts(tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_conv3d_fn_opts o) { return tn__conv3d_kw("tn_conv_transpose3d", x, w, b, true, &o); }
TNDEF tn_tensor *tn_conv3d_str(tn_tensor *x, tn_tensor *w, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_conv3d_fn_opts, conv3d_fn, "tn_conv3d", options, tn_conv3d_opts(x, w, b, o));
}
TNDEF tn_tensor *tn_conv_transpose3d_str(tn_tensor *x, tn_tensor *w, tn_tensor *b, const char *options) {
    TN__KW_STR(tn_conv3d_fn_opts, conv3d_fn, "tn_conv_transpose3d", options, tn_conv_transpose3d_opts(x, w, b, o));
}
