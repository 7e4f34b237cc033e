/* ---- fused scaled dot-product attention (CPU) ----
   FlashAttention's scheme on the CPU: per batch and block of TN__SDPA_BR query rows, the keys
   go by in blocks of TN__SDPA_BC; each block's scores are one small GEMM into a Br x Bc tile,
   the softmax runs online (a running maximum and sum per row, earlier output rescaled), and
   P V accumulates straight into the output rows. No L x S matrix exists: memory is the
   output plus one logsumexp per row. Causal key blocks wholly right of the diagonal are
   skipped. Backward (FlashAttention-2) recomputes each tile from q, k and the logsumexp.
   Double backward (create_graph) uses the same formulas written in library ops instead. */
#define TN__SDPA_BR 64
#define TN__SDPA_BC 64
#define TN__SDPA_LANES 16   /* a row's max and sum: interleaved partial results (one AVX-512 register) */

/* The problem as the kernels see it: batch b's q rows at q + qo[b] + i * rsq (last dim
   contiguous), likewise k, v; the mask element (b, i, j) at m + mo[b] + i * rsm + j * csm. */
typedef struct tn__sdpa_args {
    int64_t B, L, S, E, Ev;
    const int64_t *qo, *ko, *vo, *mo;
    int64_t rsq, rsk, rsv, rsm, csm;
    const void *q, *k, *v, *m;
    int mask_kind; /* 0 none, 1 bool (true = may attend), 2 additive (q's dtype) */
    bool causal;
    double scale;
} tn__sdpa_args;

/* @template TN__SDPA_DEFINE(T, SFX, EXP, LOG, ATTR, GEMM) */
/* scores of rows [i0, i0 + br) against keys [j0, j0 + bc) of batch b into st (row stride BC):
   scale q k^T, masked entries -inf, the additive mask added */
ATTR static void tn__sdpa_scores_##SFX(const tn__sdpa_args *a, int64_t b, int64_t i0, int64_t br, int64_t j0,
                                  int64_t bc, T *st) {
    const T *q = (const T *)a->q + a->qo[b] + i0 * a->rsq, *k = (const T *)a->k + a->ko[b] + j0 * a->rsk;
    GEMM(br, bc, a->E, (T)a->scale, q, a->rsq, 1, k, 1, a->rsk, (T)0, st, TN__SDPA_BC, 1);
    for (int64_t r = 0; r < br; r++) {
        T *s = st + r * TN__SDPA_BC;
        const int64_t i = i0 + r;
        if (a->mask_kind == 1) {
            const bool *mb = (const bool *)a->m + a->mo[b] + i * a->rsm + j0 * a->csm;
            for (int64_t j = 0; j < bc; j++) if (!mb[j * a->csm]) s[j] = (T)-INFINITY;
        } else if (a->mask_kind == 2) {
            const T *mf = (const T *)a->m + a->mo[b] + i * a->rsm + j0 * a->csm;
            for (int64_t j = 0; j < bc; j++) s[j] += mf[j * a->csm];
        }
        if (a->causal) for (int64_t j = i - j0 + 1 > 0 ? i - j0 + 1 : 0; j < bc; j++) s[j] = (T)-INFINITY;
    }
}
/* A row's maximum (from m; NaN entries skipped, as `s > m ? s : m` does) and its sum, in 16
   interleaved lanes added in a fixed order: a sequential chain of 64 scalar max or add
   instructions waited on each one's latency (a third of the forward's own time, GPT step). */
ATTR static inline T tn__sdpa_rowmax_##SFX(const T *s, int64_t n, T m) {
    T l[TN__SDPA_LANES];
    int64_t j = 0;
    for (int k = 0; k < TN__SDPA_LANES; k++) l[k] = m;
    for (; j + TN__SDPA_LANES <= n; j += TN__SDPA_LANES)
        for (int k = 0; k < TN__SDPA_LANES; k++) l[k] = s[j + k] > l[k] ? s[j + k] : l[k];
    for (; j < n; j++) m = s[j] > m ? s[j] : m;
    for (int k = 0; k < TN__SDPA_LANES; k++) m = l[k] > m ? l[k] : m;
    return m;
}
ATTR static inline T tn__sdpa_rowsum_##SFX(const T *s, int64_t n) {
    T l[TN__SDPA_LANES] = {0}, acc = 0;
    int64_t j = 0;
    for (; j + TN__SDPA_LANES <= n; j += TN__SDPA_LANES)
        for (int k = 0; k < TN__SDPA_LANES; k++) l[k] += s[j + k];
    for (int k = 0; k < TN__SDPA_LANES; k++) acc += l[k];
    for (; j < n; j++) acc += s[j];
    return acc;
}
/* out [B, L, Ev] and lse [B, L], contiguous; the gradients dq, dk, dv contiguous [B, L or S, E
   or Ev], or (ga not NULL) laid out as ga's q, k, v: batch b's rows at dq + ga->qo[b], ga->rsq
   apart (written straight into the stacked buffer of the packed projections) */
typedef struct { const tn__sdpa_args *a, *ga; T *out, *lse; const T *dout; T *dq, *dk, *dv; } tn__sdpa_job_##SFX;
ATTR static void tn__sdpa_fwd_tasks_##SFX(void *job, int64_t t0, int64_t t1) {
    const tn__sdpa_job_##SFX *jb = (const tn__sdpa_job_##SFX *)job;
    const tn__sdpa_args *a = jb->a;
    T *out = jb->out, *lse = jb->lse;
    const int64_t L = a->L, S = a->S, Ev = a->Ev, nqb = (L + TN__SDPA_BR - 1) / TN__SDPA_BR;
    for (int64_t task = t0; task < t1; task++) {
        T st[TN__SDPA_BR * TN__SDPA_BC], mx[TN__SDPA_BR], sum[TN__SDPA_BR];
        const int64_t b = task / nqb, i0 = task % nqb * TN__SDPA_BR;
        const int64_t br = L - i0 < TN__SDPA_BR ? L - i0 : TN__SDPA_BR;
        const int64_t jend = a->causal && i0 + br < S ? i0 + br : S; /* keys past the last row's: masked */
        T *o = out + (b * L + i0) * Ev;
        memset(o, 0, (size_t)(br * Ev) * sizeof(T));
        for (int64_t r = 0; r < br; r++) { mx[r] = (T)-INFINITY; sum[r] = 0; }
        for (int64_t j0 = 0; j0 < jend; j0 += TN__SDPA_BC) {
            const int64_t bc = jend - j0 < TN__SDPA_BC ? jend - j0 : TN__SDPA_BC;
            tn__sdpa_scores_##SFX(a, b, i0, br, j0, bc, st);
            for (int64_t r = 0; r < br; r++) {
                T *s = st + r * TN__SDPA_BC, m = mx[r];
                /* under the causal mask, keys right of row i0 + r are -inf: not read */
                const int64_t n = a->causal && i0 + r - j0 + 1 < bc ? (i0 + r - j0 + 1 > 0 ? i0 + r - j0 + 1 : 0) : bc;
                m = tn__sdpa_rowmax_##SFX(s, n, m);
                if (m == (T)-INFINITY) { memset(s, 0, (size_t)bc * sizeof(T)); continue; } /* all masked so far */
                const T alpha = EXP(mx[r] - m); /* 0 when the row had nothing yet */
                for (int64_t j = 0; j < n; j++) s[j] = EXP(s[j] - m);   /* apart from the sum: this loop vectorises */
                if (n < bc) memset(s + n, 0, (size_t)(bc - n) * sizeof(T));
                const T acc = tn__sdpa_rowsum_##SFX(s, n);
                sum[r] = sum[r] * alpha + acc;
                mx[r] = m;
                if (alpha != (T)1) { T *orow = o + r * Ev; for (int64_t e = 0; e < Ev; e++) orow[e] *= alpha; }
            }
            GEMM(br, Ev, bc, (T)1, st, TN__SDPA_BC, 1, (const T *)a->v + a->vo[b] + j0 * a->rsv,
                           a->rsv, 1, (T)1, o, Ev, 1);
        }
        for (int64_t r = 0; r < br; r++) { /* a row with every key masked is NaN, as softmax over -inf */
            T *orow = o + r * Ev;
            const T inv = sum[r] > 0 ? 1 / sum[r] : (T)NAN;
            for (int64_t e = 0; e < Ev; e++) orow[e] *= inv;
            lse[b * L + i0 + r] = sum[r] > 0 ? mx[r] + LOG(sum[r]) : (T)NAN;
        }
    }
}
ATTR static void tn__sdpa_fwd_##SFX(const tn__sdpa_args *a, T *out, T *lse) {
    const int64_t nqb = (a->L + TN__SDPA_BR - 1) / TN__SDPA_BR, ntask = a->B * nqb;
    const int nthr = tn__par_threads(tn__mul_sat(tn__mul_sat(a->B, a->L), tn__mul_sat(a->S, a->E + a->Ev)), ntask);
    tn__sdpa_job_##SFX jb = {a, NULL, out, lse, NULL, NULL, NULL, NULL};
    tn__parallel_range(nthr, ntask, tn__sdpa_fwd_tasks_##SFX, &jb);
}
/* dq [B, L, E], dk [B, S, E], dv [B, S, Ev] (zeroed, contiguous) from dout [B, L, Ev]: per batch,
   key blocks outside and query blocks inside, so dk and dv blocks accumulate in place */
ATTR static void tn__sdpa_bwd_batches_##SFX(void *job, int64_t b0, int64_t b1) {
    const tn__sdpa_job_##SFX *jb = (const tn__sdpa_job_##SFX *)job;
    const tn__sdpa_args *a = jb->a;
    const T *out = jb->out, *lse = jb->lse, *dout = jb->dout;
    T *dq = jb->dq, *dk = jb->dk, *dv = jb->dv;
    const int64_t L = a->L, S = a->S, E = a->E, Ev = a->Ev;
    for (int64_t b = b0; b < b1; b++) {
        T p[TN__SDPA_BR * TN__SDPA_BC], dp[TN__SDPA_BR * TN__SDPA_BC], D[TN__SDPA_BR];
        const T *q = (const T *)a->q + a->qo[b], *k = (const T *)a->k + a->ko[b], *v = (const T *)a->v + a->vo[b];
        const T *dO = dout + b * L * Ev, *O = out + b * L * Ev, *ls = lse + b * L;
        const tn__sdpa_args *ga = jb->ga;
        T *dqb = ga ? dq + ga->qo[b] : dq + b * L * E, *dkb = ga ? dk + ga->ko[b] : dk + b * S * E, *dvb = ga ? dv + ga->vo[b] : dv + b * S * Ev;
        const int64_t rdq = ga ? ga->rsq : E, rdk = ga ? ga->rsk : E, rdv = ga ? ga->rsv : Ev;
        for (int64_t i0 = 0; i0 < L; i0 += TN__SDPA_BR) {
            const int64_t br = L - i0 < TN__SDPA_BR ? L - i0 : TN__SDPA_BR;
            for (int64_t r = 0; r < br; r++) { /* D_i = dout_i . out_i */
                T acc = 0;
                for (int64_t e = 0; e < Ev; e++) acc += dO[(i0 + r) * Ev + e] * O[(i0 + r) * Ev + e];
                D[r] = acc;
            }
            const int64_t jend = a->causal && i0 + br < S ? i0 + br : S;
            for (int64_t j0 = 0; j0 < jend; j0 += TN__SDPA_BC) {
                const int64_t bc = jend - j0 < TN__SDPA_BC ? jend - j0 : TN__SDPA_BC;
                tn__sdpa_scores_##SFX(a, b, i0, br, j0, bc, p);
                for (int64_t r = 0; r < br; r++) { /* P = exp(s - lse) */
                    T *s = p + r * TN__SDPA_BC;
                    const T l = ls[i0 + r];
                    for (int64_t j = 0; j < bc; j++) s[j] = EXP(s[j] - l);
                }
                /* dv_j += P^T dout_i */
                GEMM(bc, Ev, br, (T)1, p, 1, TN__SDPA_BC, dO + i0 * Ev, Ev, 1, (T)1, dvb + j0 * rdv, rdv, 1);
                /* dP = dout_i v_j^T, then dS = P (dP - D) */
                GEMM(br, bc, Ev, (T)1, dO + i0 * Ev, Ev, 1, v + j0 * a->rsv, 1, a->rsv, (T)0, dp, TN__SDPA_BC, 1);
                for (int64_t r = 0; r < br; r++) {
                    T *d = dp + r * TN__SDPA_BC;
                    const T *pr = p + r * TN__SDPA_BC;
                    for (int64_t j = 0; j < bc; j++) d[j] = pr[j] * (d[j] - D[r]);
                    /* a row whose keys are all masked by a bool or causal mask: NaN weights (dv gets
                       them, as the composite's), but masked_fill's backward zeroes its scores' gradient */
                    if (a->mask_kind != 2 && ls[i0 + r] != ls[i0 + r]) memset(d, 0, (size_t)bc * sizeof(T));
                }
                /* dq_i += scale dS k_j; dk_j += scale dS^T q_i */
                GEMM(br, E, bc, (T)a->scale, dp, TN__SDPA_BC, 1, k + j0 * a->rsk, a->rsk, 1, (T)1, dqb + i0 * rdq, rdq, 1);
                GEMM(bc, E, br, (T)a->scale, dp, 1, TN__SDPA_BC, q + i0 * a->rsq, a->rsq, 1, (T)1, dkb + j0 * rdk, rdk, 1);
            }
        }
    }
}
ATTR static void tn__sdpa_bwd_into_##SFX(const tn__sdpa_args *a, const tn__sdpa_args *ga, const T *out, const T *lse, const T *dout, T *dq, T *dk, T *dv) {
    const int nthr = tn__par_threads(tn__mul_sat(tn__mul_sat(a->B, a->L), tn__mul_sat(a->S, a->E + a->Ev)), a->B);
    tn__sdpa_job_##SFX jb = {a, ga, (T *)out, (T *)lse, dout, dq, dk, dv};
    tn__parallel_range(nthr, a->B, tn__sdpa_bwd_batches_##SFX, &jb);
}
/* the gradients contiguous */
ATTR static void tn__sdpa_bwd_##SFX(const tn__sdpa_args *a, const T *out, const T *lse, const T *dout, T *dq, T *dk, T *dv) {
    tn__sdpa_bwd_into_##SFX(a, NULL, out, lse, dout, dq, dk, dv);
}
/* @end TN__SDPA_DEFINE */
TN__SDPA_DEFINE(float, f32, tn__expf_v, logf, TN__PLAIN_FN, tn__gemm_f32)
#ifdef TN__AVX512_FN
TN__SDPA_DEFINE(float, f32x, tn__expf_v, logf, TN__AVX512_FN, tn__gemm_f32)   /* TN__WIDE (src/core/config.c) */
TN__SDPA_DEFINE(float, f32y, tn__expf_v, logf, TN__AVX2_FN, tn__gemm_f32)
#endif
TN__SDPA_DEFINE(double, f64, exp, log, TN__PLAIN_FN, tn__gemm_f64)

/* The batch layout of q [*, L, E], k [*, S, E], v [*, S, Ev] and the mask (broadcast to
   [*, L, S]): the broadcast batch shape, per-batch offsets (one buffer, freed by the caller
   as *offs) and strides. The tensors' last dims must be contiguous (the caller's job).
   false when the shapes do not broadcast. */
static bool tn__sdpa_layout(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, tn__sdpa_args *a, int64_t *bshape, int *nb,
                            int64_t **offs) {
    tn_tensor *const ts[4] = {q, k, v, mask};
    int n = 0;
    for (int t = 0; t < 4; t++) if (ts[t] && ts[t]->ndim - 2 > n) n = ts[t]->ndim - 2;
    for (int d = 0; d < n; d++) bshape[d] = 1;
    for (int t = 0; t < 4; t++) {
        if (!ts[t]) continue;
        const int tb = ts[t]->ndim - 2 > 0 ? ts[t]->ndim - 2 : 0;
        for (int d = 0; d < tb; d++) {
            int64_t *s = &bshape[n - tb + d], x = ts[t]->shape[d];
            if (x != 1 && *s != 1 && x != *s) return false;
            if (x != 1) *s = x;
        }
    }
    if (mask) { /* [.., Lm, Sm] (or [Sm]) against [L, S] */
        const int64_t Lm = mask->ndim >= 2 ? mask->shape[mask->ndim - 2] : 1, Sm = mask->ndim >= 1 ? mask->shape[mask->ndim - 1] : 1;
        if ((Lm != 1 && Lm != a->L) || (Sm != 1 && Sm != a->S)) return false;
        a->rsm = Lm == 1 ? 0 : mask->strides[mask->ndim - 2];
        a->csm = Sm == 1 ? 0 : mask->strides[mask->ndim - 1];
    }
    int64_t B = 1;
    for (int d = 0; d < n; d++) if (!tn__mul_ok(B, bshape[d], &B)) return false;
    *nb = n;
    a->B = B;
    int64_t *o = (int64_t *)TN_MALLOC((size_t)(4 * (B ? B : 1)) * sizeof(int64_t));
    if (!o) return false;
    *offs = o;
    int64_t idx[TN_MAX_DIMS] = {0};
    for (int64_t b = 0; b < B; b++) {
        for (int t = 0; t < 4; t++) {
            int64_t off = 0;
            if (ts[t]) {
                const int tb = ts[t]->ndim - 2 > 0 ? ts[t]->ndim - 2 : 0;
                for (int d = 0; d < tb; d++) if (ts[t]->shape[d] != 1) off += idx[n - tb + d] * ts[t]->strides[d];
            }
            o[t * B + b] = off;
        }
        for (int d = n - 1; d >= 0; d--) { if (++idx[d] < bshape[d]) break; idx[d] = 0; }
    }
    a->qo = o; a->ko = o + B; a->vo = o + 2 * B; a->mo = o + 3 * B;
    a->q = tn_data_ptr(q); a->k = tn_data_ptr(k); a->v = tn_data_ptr(v); a->m = mask ? tn_data_ptr(mask) : NULL;
    a->rsq = q->strides[q->ndim - 2]; a->rsk = k->strides[k->ndim - 2]; a->rsv = v->strides[v->ndim - 2];
    a->mask_kind = !mask ? 0 : mask->dtype == TN_BOOL ? 1 : 2;
    return true;
}
/* t with its last dim contiguous (a copy only when it is not) */
static tn_tensor *tn__sdpa_lastdim(tn_tensor *t) {
    return !t || t->ndim == 0 || t->strides[t->ndim - 1] == 1 || t->shape[t->ndim - 1] == 1 ? t : tn_contiguous(t);
}
/* the kernels' compute type: float32 for the half dtypes (their logsumexp and additive masks) */
static tn_dtype tn__sdpa_acc(tn_dtype dt) { return dt == TN_F16 || dt == TN_BF16 ? TN_F32 : dt; }
/* q, k, v and the mask as a backend's attention entry takes them: last dims contiguous,
   expanded (views) to the broadcast batch shape bshape[0..nb); an additive mask in the
   compute type. false after an error. */
static bool tn__sdpa_entry_operands(tn_tensor **q, tn_tensor **k, tn_tensor **v, tn_tensor **mask, int64_t *bshape, int *nb) {
    *q = tn__sdpa_lastdim(*q); *k = tn__sdpa_lastdim(*k); *v = tn__sdpa_lastdim(*v);
    tn_tensor *m = *mask ? tn__sdpa_lastdim(*mask) : NULL;
    if (m && m->dtype != TN_BOOL && *q && m->dtype != tn__sdpa_acc((*q)->dtype)) m = tn_to_dtype(m, tn__sdpa_acc((*q)->dtype));
    if (!*q || !*k || !*v || (*mask && !m)) return false;
    tn__sdpa_args a;
    memset(&a, 0, sizeof a);
    a.L = (*q)->shape[(*q)->ndim - 2]; a.S = (*k)->shape[(*k)->ndim - 2];
    int64_t *offs = NULL;
    if (!tn__sdpa_layout(*q, *k, *v, m, &a, bshape, nb, &offs)) { tn__error("tn_scaled_dot_product_attention: out of memory"); return false; }
    TN_FREE(offs);
    tn_tensor **ts[4] = {q, k, v, &m};
    for (int t = 0; t < 4; t++) {
        if (!*ts[t]) continue;
        tn_tensor *x = *ts[t];
        bshape[*nb] = t == 3 ? a.L : x->shape[x->ndim - 2];
        bshape[*nb + 1] = t == 3 ? a.S : x->shape[x->ndim - 1];
        if (!(*ts[t] = tn_expand(x, bshape, *nb + 2))) return false;
    }
    *mask = m;
    return true;
}
/* A device's results (out, lse) from its backend entry: the node's forward only saves them. */
typedef struct tn__sdpa_pre { tn_tensor *out, *lse; } tn__sdpa_pre;
/* The fused op's inputs: q, k, v and the mask (or none), and a float64 [scale, causal]. */
static tn_tensor *tn__sdpa_fused_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    const tn__sdpa_pre *pre = (const tn__sdpa_pre *)user;
    if (pre) {
        for (int i = 0; i < n; i++) tn_ctx_save(ctx, in[i]);
        tn_ctx_save(ctx, pre->out);
        tn_ctx_save(ctx, pre->lse);
        return pre->out;
    }
    tn_tensor *q = tn__sdpa_lastdim(in[0]), *k = tn__sdpa_lastdim(in[1]), *v = tn__sdpa_lastdim(in[2]);
    tn_tensor *mask = n > 4 ? tn__sdpa_lastdim(in[4]) : NULL, *par = in[3];
    if (!q || !k || !v || (n > 4 && !mask)) return NULL;
    const double *pv = (const double *)tn_data_ptr(par);
    tn__sdpa_args a;
    memset(&a, 0, sizeof a);
    a.L = q->shape[q->ndim - 2]; a.S = k->shape[k->ndim - 2]; a.E = q->shape[q->ndim - 1]; a.Ev = v->shape[v->ndim - 1];
    a.scale = pv[0]; a.causal = pv[1] != 0;
    int64_t bshape[TN_MAX_DIMS + 2], *offs = NULL;
    int nb = 0;
    if (!tn__sdpa_layout(q, k, v, mask, &a, bshape, &nb, &offs)) return (tn_tensor *)tn__error("tn_scaled_dot_product_attention: out of memory");
    bshape[nb] = a.L; bshape[nb + 1] = a.Ev;
    tn_tensor *out = tn_empty(bshape, nb + 2, q->dtype), *lse = tn_empty(bshape, nb + 1, q->dtype);
    if (out && lse) {
        if (q->dtype == TN_F32) TN__WIDE(tn__sdpa_fwd_f32)(&a, (float *)tn_data_ptr(out), (float *)tn_data_ptr(lse));
        else tn__sdpa_fwd_f64(&a, (double *)tn_data_ptr(out), (double *)tn_data_ptr(lse));
    }
    TN_FREE(offs);
    if (!out || !lse) return NULL;
    for (int i = 0; i < n; i++) tn_ctx_save(ctx, in[i]);   /* the inputs themselves: double backward differentiates through them */
    tn_ctx_save(ctx, out);
    tn_ctx_save(ctx, lse);
    return out;
}
static tn_tensor *tn__sum_to(tn_tensor *g, const tn__meta *m);
/* The gradients in library ops (create_graph: so that they are differentiable again). */
static void tn__sdpa_grad_composite(tn_tensor *g, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, double scale, bool causal,
                                    tn_tensor **gq, tn_tensor **gk, tn_tensor **gv) {
    const int64_t L = q->shape[q->ndim - 2], S = k->shape[k->ndim - 2];
    tn_tensor *att = tn_mul_scalar(tn_matmul(q, tn_transpose(k, -2, -1)), scale);
    if (causal) mask = tn__tril(tn__own(tn__full_on(TN_SHAPE(L, S), 1, TN_BOOL, q->device)), 0);
    if (mask && mask->dtype == TN_BOOL) att = tn_masked_fill(att, tn_logical_not(mask), -INFINITY);
    else if (mask) att = tn_add(att, mask);
    tn_tensor *p = tn_softmax(att, -1);
    tn_tensor *dp = tn_matmul(g, tn_transpose(v, -2, -1));
    tn_tensor *ds = tn_mul(p, tn_sub(dp, tn_sum_dims(tn_mul(dp, p), TN_DIMS(-1), .keepdim = true)));
    *gv = tn_matmul(tn_transpose(p, -2, -1), g);
    *gq = tn_mul_scalar(tn_matmul(ds, k), scale);
    *gk = tn_mul_scalar(tn_matmul(tn_transpose(ds, -2, -1), q), scale);
}
/* The gradients g[0..2] of q0, k0, v0 (q, k, v's shapes with the batch dims broadcast) from
   the forward's saved operands and results (out, lse); 0 or -1. qkv (not NULL: q0, k0, v0
   are views of it): where the CPU kernel can, the three are written straight into one
   zero-filled buffer of qkv's shape, *gqkv (g[] left NULL), at the places the views take in
   qkv: no stack of the three afterwards (1 % of the GPT step). */
static int tn__sdpa_grads(tn_tensor *q0, tn_tensor *k0, tn_tensor *v0, tn_tensor *par, tn_tensor *mask0, tn_tensor *out, tn_tensor *lse,
                          tn_tensor *grad, tn_tensor **g, tn_tensor *qkv, tn_tensor **gqkv) {
    if (!q0 || !k0 || !v0 || !par || !out || !lse) return -1;
    const double *pv = (const double *)tn_data_ptr(par);
    if (tn_is_grad_enabled()) { /* create_graph */
        tn__sdpa_grad_composite(grad, q0, k0, v0, mask0, pv[0], pv[1] != 0, &g[0], &g[1], &g[2]);
    } else if (q0->device != TN_CPU) { /* the backend's entry; where it declines, the formulas in library ops */
        tn_tensor *q = q0, *k = k0, *v = v0, *mask = mask0, *dout = tn_contiguous(tn_expand(grad, out->shape, out->ndim));
        int64_t bshape[TN_MAX_DIMS + 2];
        int nb = 0, r = 1;
        if (!dout || !tn__sdpa_entry_operands(&q, &k, &v, &mask, &bshape[0], &nb)) return -1;
        for (int i = 0; i < 3; i++) {
            tn_tensor *like = i == 0 ? q : i == 1 ? k : v;
            if (!(g[i] = tn__own(tn__new(q->dtype, q->device, like->shape, like->ndim)))) return -1;
        }
        r = tn__backend(q0->device)->attention(q, k, v, mask, out, lse, dout, g[0], g[1], g[2], pv[0], pv[1] != 0);
        if (r < 0) return -1;
        if (r > 0) tn__sdpa_grad_composite(grad, q0, k0, v0, mask0, pv[0], pv[1] != 0, &g[0], &g[1], &g[2]);
    } else {
        tn_tensor *q = tn__sdpa_lastdim(q0), *k = tn__sdpa_lastdim(k0), *v = tn__sdpa_lastdim(v0), *mask = tn__sdpa_lastdim(mask0);
        tn_tensor *dout = tn_contiguous(tn_expand(grad, out->shape, out->ndim));
        if (!q || !k || !v || (mask0 && !mask) || !dout) return -1;
        tn__sdpa_args a;
        memset(&a, 0, sizeof a);
        a.L = q->shape[q->ndim - 2]; a.S = k->shape[k->ndim - 2]; a.E = q->shape[q->ndim - 1]; a.Ev = v->shape[v->ndim - 1];
        a.scale = pv[0]; a.causal = pv[1] != 0;
        int64_t bshape[TN_MAX_DIMS + 2], *offs = NULL;
        int nb = 0;
        if (!tn__sdpa_layout(q, k, v, mask, &a, bshape, &nb, &offs)) return TN__FAIL_INT("tn_scaled_dot_product_attention: out of memory");
        /* into qkv's buffer: the views read in place (no copy), none broadcast over a batch dim (each
           batch's rows its own) */
        bool into = qkv && gqkv && q == q0 && k == k0 && v == v0 && tn_is_contiguous(qkv) && qkv->dtype == q->dtype;
        tn_tensor *const qkv3[3] = {q, k, v};
        for (int i = 0; into && i < 3; i++) into = tn_numel(qkv3[i]) == a.B * qkv3[i]->shape[qkv3[i]->ndim - 2] * qkv3[i]->shape[qkv3[i]->ndim - 1];
        if (into) {
            tn_tensor *G = *gqkv = tn_zeros(qkv->shape, qkv->ndim, qkv->dtype);
            if (G) {
                const size_t es = tn_dtype_size(q->dtype);
                char *gb = (char *)tn_data_ptr(G);
                const char *qb = (const char *)tn_data_ptr(qkv);
                void *d[3];
                for (int i = 0; i < 3; i++) d[i] = gb + ((const char *)tn_data_ptr(qkv3[i]) - qb) / es * es;
                if (q->dtype == TN_F32)
                    TN__WIDE(tn__sdpa_bwd_into_f32)(&a, &a, (const float *)tn_data_ptr(out), (const float *)tn_data_ptr(lse), (const float *)tn_data_ptr(dout),
                                               (float *)d[0], (float *)d[1], (float *)d[2]);
                else
                    tn__sdpa_bwd_into_f64(&a, &a, (const double *)tn_data_ptr(out), (const double *)tn_data_ptr(lse), (const double *)tn_data_ptr(dout),
                                     (double *)d[0], (double *)d[1], (double *)d[2]);
            }
            TN_FREE(offs);
            return G ? 0 : -1;
        }
        bshape[nb] = a.L; bshape[nb + 1] = a.E;
        g[0] = tn_zeros(bshape, nb + 2, q->dtype);
        bshape[nb] = a.S;
        g[1] = tn_zeros(bshape, nb + 2, q->dtype);
        bshape[nb + 1] = a.Ev;
        g[2] = tn_zeros(bshape, nb + 2, q->dtype);
        if (g[0] && g[1] && g[2]) {
            if (q->dtype == TN_F32)
                TN__WIDE(tn__sdpa_bwd_f32)(&a, (const float *)tn_data_ptr(out), (const float *)tn_data_ptr(lse), (const float *)tn_data_ptr(dout),
                                 (float *)tn_data_ptr(g[0]), (float *)tn_data_ptr(g[1]), (float *)tn_data_ptr(g[2]));
            else
                tn__sdpa_bwd_f64(&a, (const double *)tn_data_ptr(out), (const double *)tn_data_ptr(lse), (const double *)tn_data_ptr(dout),
                                 (double *)tn_data_ptr(g[0]), (double *)tn_data_ptr(g[1]), (double *)tn_data_ptr(g[2]));
        }
        TN_FREE(offs);
    }
    return g[0] && g[1] && g[2] ? 0 : -1;
}
static int tn__sdpa_fused_bwd(tn_ctx *ctx, tn_tensor *grad, tn_tensor **gin, int n, void *user) {
    (void)user;
    tn_tensor *g[3] = {NULL, NULL, NULL};
    if (tn__sdpa_grads(tn_ctx_saved(ctx, 0), tn_ctx_saved(ctx, 1), tn_ctx_saved(ctx, 2), tn_ctx_saved(ctx, 3), n > 4 ? tn_ctx_saved(ctx, 4) : NULL,
                       tn_ctx_saved(ctx, n), tn_ctx_saved(ctx, n + 1), grad, g, NULL, NULL)) return -1;
    for (int i = 0; i < 3; i++)
        if (tn_ctx_needs_grad(ctx, i)) gin[i] = tn__sum_to(g[i], &ctx->in[i]);
    return 0;
}
/* Self-attention on its packed projections qkv [A, B, 3, H, hd] (q, k, v: qkv[:, :, i]
   permuted by perm to [N, H, seq, hd]) as one node on the CPU, whose gradient is one buffer of
   qkv's shape (the three stacked) instead of a select's backward per view (a zero-filled
   buffer of qkv's size each, then summed). Inputs: qkv, a float64 [scale, causal, perm[4]],
   the mask or none; saved: q, k, v, the parameters, the mask, out, lse (the fused node's
   order), then qkv. */
static void tn__sdpa_qkv_views(tn_tensor *qkv, const double *pv, tn_tensor **qkvv) {
    const int64_t perm[4] = {(int64_t)pv[2], (int64_t)pv[3], (int64_t)pv[4], (int64_t)pv[5]};
    for (int i = 0; i < 3; i++) qkvv[i] = tn_permute(tn_select(qkv, 2, i), perm, 4);
}
static tn_tensor *tn__sdpa_qkv_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    tn_tensor *sub[5] = {NULL, NULL, NULL, in[1], n > 2 ? in[2] : NULL};
    tn__sdpa_qkv_views(in[0], (const double *)tn_data_ptr(in[1]), sub);
    if (!sub[0] || !sub[1] || !sub[2]) return NULL;
    tn_tensor *out = tn__sdpa_fused_fwd(ctx, sub, n > 2 ? 5 : 4, user);   /* a device's results computed before (user) */
    if (out) tn_ctx_save(ctx, in[0]);
    return out;
}
static int tn__sdpa_qkv_bwd(tn_ctx *ctx, tn_tensor *grad, tn_tensor **gin, int n, void *user) {
    (void)user;
    const int m = n > 2 ? 5 : 4;   /* the fused node's input count: where out, lse and qkv were saved */
    tn_tensor *par = tn_ctx_saved(ctx, 3), *qkv = tn_ctx_saved(ctx, m + 2), *v3[3] = {tn_ctx_saved(ctx, 0), tn_ctx_saved(ctx, 1), tn_ctx_saved(ctx, 2)};
    if (!par || !qkv) return -1;
    if (!tn_ctx_needs_grad(ctx, 0)) return 0;
    const double *pv = (const double *)tn_data_ptr(par);
    if (tn_is_grad_enabled()) tn__sdpa_qkv_views(qkv, pv, v3);   /* create_graph: the views of qkv on the tape, so that the gradients reach it */
    tn_tensor *g[3] = {NULL, NULL, NULL};
    tn_tensor *gqkv = NULL;
    if (tn__sdpa_grads(v3[0], v3[1], v3[2], par, m > 4 ? tn_ctx_saved(ctx, 4) : NULL, tn_ctx_saved(ctx, m), tn_ctx_saved(ctx, m + 1), grad, g,
                       tn_is_grad_enabled() ? NULL : qkv, &gqkv))
        return -1;
    if (gqkv) return (gin[0] = gqkv) ? 0 : -1;   /* written in place in qkv's layout */
    int64_t inv[4];
    for (int d = 0; d < 4; d++) inv[(int64_t)pv[2 + d]] = d;
    for (int i = 0; i < 3; i++) g[i] = tn_permute(g[i], inv, 4);   /* [A, B, H, hd] */
    return (gin[0] = tn_stack(g, 3, .dim = 2)) ? 0 : -1;
}
static tn_tensor *tn__sdpa_composite(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, double dropout_p, bool causal, double scale);
/* A device's forward through its backend's entry, run before the node is recorded (the
   node's forward then only saves out and lse): 0 with pre filled, 1 where the entry declines
   the case, -1 after an error. */
static int tn__sdpa_device_fwd(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, bool causal, double scale, tn__sdpa_pre *pre) {
    tn_tensor *qe = q, *ke = k, *ve = v, *me = mask;
    int64_t bshape[TN_MAX_DIMS + 2];
    int nb = 0;
    tn_no_grad_begin();   /* the views and copies for the entry record nothing: the node's inputs are its own */
    const bool ok = tn__sdpa_entry_operands(&qe, &ke, &ve, &me, bshape, &nb);
    tn_no_grad_end();
    if (!ok) return -1;
    bshape[nb] = qe->shape[nb];
    bshape[nb + 1] = ve->shape[nb + 1];
    pre->out = tn__own(tn__new(q->dtype, q->device, bshape, nb + 2));
    pre->lse = tn__own(tn__new(tn__sdpa_acc(q->dtype), q->device, bshape, nb + 1));
    return pre->out && pre->lse ? tn__backend(q->device)->attention(qe, ke, ve, me, pre->out, pre->lse, NULL, NULL, NULL, NULL, scale, causal) : -1;
}
/* The attention of q, k, v = the views above of qkv (checked, fusable as they are); on a
   device through its backend's entry, and where that declines the case, the composite on
   the views. */
static tn_tensor *tn__sdpa_fused_qkv(tn_tensor *qkv, const int64_t *perm, tn_tensor *mask, bool causal, double scale) {
    tn_scope_begin();
    const double pv[6] = {scale, causal ? 1.0 : 0.0, (double)perm[0], (double)perm[1], (double)perm[2], (double)perm[3]};
    tn_tensor *par = tn_from_data(pv, TN_SHAPE(6), TN_F64);
    tn_tensor *in[3] = {qkv, par, mask};
    tn__sdpa_pre pre = {NULL, NULL}, *user = NULL;
    if (par && qkv->device != TN_CPU) {
        tn_tensor *v3[3];
        tn_no_grad_begin();
        tn__sdpa_qkv_views(qkv, pv, v3);
        const int r = v3[0] && v3[1] && v3[2] ? tn__sdpa_device_fwd(v3[0], v3[1], v3[2], mask, causal, scale, &pre) : -1;
        tn_no_grad_end();
        if (r < 0) return tn__scope_return(NULL);
        if (r > 0) {   /* declined: the views on the tape */
            tn__sdpa_qkv_views(qkv, pv, v3);
            return tn__scope_return(v3[0] && v3[1] && v3[2] ? tn__sdpa_composite(v3[0], v3[1], v3[2], mask, 0, causal, scale) : NULL);
        }
        user = &pre;
    }
    /* PyTorch's CPU flash attention node (on a GPU, its _scaled_dot_product_efficient_attention) */
    const char *name = qkv->device == TN_CPU ? "ScaledDotProductFlashAttentionForCpuBackward0" : "ScaledDotProductEfficientAttentionBackward0";
    return tn__scope_return(par ? tn_custom_op(name, tn__sdpa_qkv_fwd, tn__sdpa_qkv_bwd, in, mask ? 3 : 2, user) : NULL);
}
/* Whether the fused kernels take these arguments (the composite does everything else:
   dropout, other devices and dtypes, empty sizes, a mask that wants a gradient, shapes that
   do not broadcast, so that its message names them). */
static bool tn__sdpa_fusable(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, double dropout_p) {
    /* another device: through its backend's entry (src/nn/attention.c, tn__sdpa_fused) */
    const bool half_ok = q->device != TN_CPU && (q->dtype == TN_F16 || q->dtype == TN_BF16);   /* the CPU's kernels: float32/64 */
    if (dropout_p > 0 || (q->device != TN_CPU && !tn__backend(q->device)->attention) || (q->dtype != TN_F32 && q->dtype != TN_F64 && !half_ok)) return false;
    if (mask && (mask->device != q->device || (mask->dtype != TN_BOOL && mask->requires_grad && tn_is_grad_enabled()) || mask->ndim < 1)) return false;
    tn_tensor *const ts[4] = {q, k, v, mask};
    for (int t = 0; t < 4; t++)
        for (int d = 0; ts[t] && d < ts[t]->ndim; d++) if (ts[t]->shape[d] == 0) return false;
    tn__sdpa_args a;
    memset(&a, 0, sizeof a);
    a.L = q->shape[q->ndim - 2]; a.S = k->shape[k->ndim - 2];
    int64_t bshape[TN_MAX_DIMS + 2], *offs = NULL;
    int nb = 0;
    const bool ok = tn__sdpa_layout(q, k, v, mask, &a, bshape, &nb, &offs);
    TN_FREE(offs);
    return ok;
}
/* The attention in library ops, with its L x S matrix (checked arguments; mask as above). */
static tn_tensor *tn__sdpa_composite(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, double dropout_p, bool causal, double scale) {
    const int64_t L = q->shape[q->ndim - 2], S = k->shape[k->ndim - 2];
    tn_scope_begin();
    tn_tensor *att = tn_mul_scalar(tn_matmul(q, tn_transpose(k, -2, -1)), scale);
    if (causal) mask = tn__tril(tn__own(tn__full_on(TN_SHAPE(L, S), 1, TN_BOOL, q->device)), 0);
    if (mask && mask->dtype == TN_BOOL) att = tn_masked_fill(att, tn_logical_not(mask), -INFINITY);
    else if (mask) att = tn_add(att, mask);
    att = tn_softmax(att, -1);
    if (dropout_p > 0) att = tn_dropout(att, .p = dropout_p);
    return tn__scope_return(tn_matmul(att, v));
}
/* The fused attention on checked, fusable q [*, L, E], k [*, S, E], v [*, S, Ev]; mask NULL,
   bool (true = may attend) or additive; scale > 0. Off the CPU through the backend's entry,
   and where that declines the case, the composite. */
static tn_tensor *tn__sdpa_fused(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, bool causal, double scale) {
    /* the CPU's kernels are float32/float64 (under autocast MultiheadAttention's projections
       may be half), a device's entry takes what its backend does */
    const bool cpu_ok = q->dtype == TN_F32 || q->dtype == TN_F64;
    if (k->dtype != q->dtype || v->dtype != q->dtype || (q->device == TN_CPU && !cpu_ok) ||
        (q->device != TN_CPU && !cpu_ok && q->dtype != TN_F16 && q->dtype != TN_BF16))
        return tn__sdpa_composite(q, k, v, mask, 0, causal, scale);
    tn_scope_begin();
    const double pv[2] = {scale, causal ? 1.0 : 0.0};   /* no compound literal: the header compiles as C++ */
    tn_tensor *par = tn_from_data(pv, TN_SHAPE(2), TN_F64);
    tn_tensor *in[5] = {q, k, v, par, mask};
    tn__sdpa_pre pre = {NULL, NULL}, *user = NULL;
    if (par && q->device != TN_CPU) {
        const int r = tn__sdpa_device_fwd(q, k, v, mask, causal, scale, &pre);
        if (r < 0) return tn__scope_return(NULL);
        if (r > 0) return tn__scope_return(tn__sdpa_composite(q, k, v, mask, 0, causal, scale));
        user = &pre;
    }
    /* PyTorch's CPU flash attention node (on a GPU, its _scaled_dot_product_efficient_attention) */
    const char *name = q->device == TN_CPU ? "ScaledDotProductFlashAttentionForCpuBackward0" : "ScaledDotProductEfficientAttentionBackward0";
    return tn__scope_return(par ? tn_custom_op(name, tn__sdpa_fused_fwd, tn__sdpa_fused_bwd, in, mask ? 5 : 4, user) : NULL);
}
