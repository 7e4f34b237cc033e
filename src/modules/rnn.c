/* ---- recurrent and attention modules ---- */
/* RNN cells: arguments checked once, then a time step made of library ops, so autograd
   (and gradients of any order) needs nothing more. */
enum { TN__RNN_TANH, TN__RNN_RELU, TN__RNN_LSTM, TN__RNN_GRU };
static const int tn__rnn_gates[4] = {1, 1, 4, 3};

/* One step on batched [N, *] operands. gi = x W_ih^T + b_ih, computed by the caller (for a
   whole sequence in one GEMM); returns h' and, for the LSTM, replaces *c by c'. w_hr: the
   LSTM's projection or NULL. */
static tn_tensor *tn__rnn_step(int mode, tn_tensor *gi, tn_tensor *h, tn_tensor **c, tn_tensor *w_hh, tn_tensor *b_hh, tn_tensor *w_hr) {
    tn_tensor *gh = gi && h ? tn_linear(h, w_hh, b_hh) : NULL;
    if (!gh) return NULL;
    if (mode == TN__RNN_TANH) return tn_tanh(tn_add(gi, gh));
    if (mode == TN__RNN_RELU) return tn_relu(tn_add(gi, gh));
    const int64_t H = w_hh->shape[0] / tn__rnn_gates[mode];
    if (mode == TN__RNN_GRU) { /* the n gate's hidden part, bias included, is scaled by r */
        tn_tensor *r = tn_sigmoid(tn_add(tn_narrow(gi, -1, 0, H), tn_narrow(gh, -1, 0, H)));
        tn_tensor *z = tn_sigmoid(tn_add(tn_narrow(gi, -1, H, H), tn_narrow(gh, -1, H, H)));
        tn_tensor *n = tn_tanh(tn_add(tn_narrow(gi, -1, 2 * H, H), tn_mul(r, tn_narrow(gh, -1, 2 * H, H))));
        return tn_add(n, tn_mul(z, tn_sub(h, n)));   /* (1 - z) n + z h */
    }
    tn_tensor *g = tn_add(gi, gh);
    tn_tensor *i = tn_sigmoid(tn_narrow(g, -1, 0, H)), *f = tn_sigmoid(tn_narrow(g, -1, H, H));
    tn_tensor *gg = tn_tanh(tn_narrow(g, -1, 2 * H, H)), *o = tn_sigmoid(tn_narrow(g, -1, 3 * H, H));
    *c = tn_add(tn_mul(f, *c), tn_mul(i, gg));
    tn_tensor *hn = tn_mul(o, tn_tanh(*c));
    return w_hr ? tn_linear(hn, w_hr, NULL) : hn;
}

/* ---- the LSTM layer's recurrence as one op (issue 25) ----
   Inputs: gi [L, N, 4H] (x W_ih^T + b_ih + b_hh for every step, one GEMM by the caller), h0 and
   c0 [N, H], W_hh [4H, H], and a float64 [reverse]. Result [L + 1, N, H]: h_t for each t, then
   the last c. Per step: one GEMM writes h W_hh^T into the step's gates buffer (W_hh^T packed
   once per sequence), then one pass adds gi and does the gates' pointwise math. Backward runs
   the steps in reverse, one pass per step for the gates' gradients and one GEMM for dh (W_hh
   packed once); W_hh's gradient is one GEMM over all steps at the end. No allocation per
   step. Threads take batch rows for the whole sequence (tn__rnn_job, below).
   Under create_graph the backward is autograd of the same steps in library ops. */
/* The float loops come three times, plain, for AVX2 and for AVX-512 (TN__WIDE, src/core/config.c). */
/* @template TN__LSTM_DEFINE(T, SFX, EXP, TANH, ATTR, GEMM) */
/* One row's gates -> c, h: the pre-activations are the GEMM's h W_hh^T (ai..ao) plus the
   input part (xi..xo, from gi: added here rather than copied into the GEMM's C first, the same
   one rounding of the sum); ai..ao get the activations. The row pointers are restrict
   parameters so that the loop vectorises without GCC's run-time alias checks (more than it
   will emit: block-scope restrict pointers are not enough). */
ATTR static inline void tn__lstm_row_fwd_##SFX(int64_t H, const T *TN__RESTRICT xi, const T *TN__RESTRICT xf, const T *TN__RESTRICT xg,
                                              const T *TN__RESTRICT xo, T *TN__RESTRICT ai, T *TN__RESTRICT af, T *TN__RESTRICT ag,
                                              T *TN__RESTRICT ao, const T *TN__RESTRICT cp, T *TN__RESTRICT c, T *TN__RESTRICT h) {
    for (int64_t j = 0; j < H; j++) {
        const T ig = 1 / (1 + EXP(-(ai[j] + xi[j]))), fg = 1 / (1 + EXP(-(af[j] + xf[j]))), gg = TANH(ag[j] + xg[j]),
                og = 1 / (1 + EXP(-(ao[j] + xo[j])));
        const T cn = fg * cp[j] + ig * gg;
        ai[j] = ig; af[j] = fg; ag[j] = gg; ao[j] = og;
        c[j] = cn;
        h[j] = og * TANH(cn);
    }
}
/* one row's backward: the gates' gradients into di..do_, the carried dc updated */
ATTR static inline void tn__lstm_row_bwd_##SFX(int64_t H, const T *TN__RESTRICT ai, const T *TN__RESTRICT af, const T *TN__RESTRICT ag,
                                              const T *TN__RESTRICT ao, const T *TN__RESTRICT c, const T *TN__RESTRICT cp,
                                              const T *TN__RESTRICT gh, const T *TN__RESTRICT dh, T *TN__RESTRICT dc, T *TN__RESTRICT di,
                                              T *TN__RESTRICT df, T *TN__RESTRICT dg, T *TN__RESTRICT do_) {
    for (int64_t j = 0; j < H; j++) {
        const T ig = ai[j], fg = af[j], gg = ag[j], og = ao[j];
        const T tc = TANH(c[j]), dhk = dh[j] + gh[j];
        const T dck = dc[j] + dhk * og * (1 - tc * tc);
        di[j] = dck * gg * ig * (1 - ig);
        df[j] = dck * cp[j] * fg * (1 - fg);
        dg[j] = dck * ig * (1 - gg * gg);
        do_[j] = dhk * tc * og * (1 - og);
        dc[j] = dck * fg;
    }
}
/* the batch rows [n0, n1) (see tn__rnn_job) */
ATTR static void tn__lstm_fwd_##SFX(int64_t L, int64_t N, int64_t H, bool rev, const T *gi, const T *h0, const T *c0, const T *WT,
                               T *out, T *acts, T *cs, int64_t n0, int64_t n1) {
    const int64_t G = 4 * H;
    for (int64_t s = 0; s < L; s++) {
        const int64_t t = rev ? L - 1 - s : s, tp = rev ? t + 1 : t - 1;
        const T *hp = s ? out + tp * N * H : h0, *cp = s ? cs + tp * N * H : c0;
        T *a = acts + t * N * G, *h = out + t * N * H, *c = cs + t * N * H;
        /* a = h W_hh^T: WT packed ahead by the caller (or read in place, or packed here) */
        GEMM(n1 - n0, G, H, (T)1, hp + n0 * H, H, 1, WT, G, 1, (T)0, a + n0 * G, G, 1);
        for (int64_t n = n0; n < n1; n++) {
            const T *xr = gi + (t * N + n) * G;
            T *ar = a + n * G;
            tn__lstm_row_fwd_##SFX(H, xr, xr + H, xr + 2 * H, xr + 3 * H, ar, ar + H, ar + 2 * H, ar + 3 * H, cp + n * H, c + n * H, h + n * H);
        }
    }
    memcpy(out + L * N * H + n0 * H, cs + (rev ? 0 : L - 1) * N * H + n0 * H, (size_t)((n1 - n0) * H) * sizeof(T));
}
/* g [L + 1, N, H] -> dgi [L, N, 4H] (the gates' gradients), dh0, dc0 [N, H]: the batch rows [n0, n1) */
ATTR static void tn__lstm_bwd_##SFX(int64_t L, int64_t N, int64_t H, bool rev, const T *c0, const T *W, const T *acts,
                               const T *cs, const T *g, T *dgi, T *dh, T *dc, int64_t n0, int64_t n1) {
    const int64_t G = 4 * H, nr = n1 - n0;
    memset(dh + n0 * H, 0, (size_t)(nr * H) * sizeof(T));
    memcpy(dc + n0 * H, g + L * N * H + n0 * H, (size_t)(nr * H) * sizeof(T));
    for (int64_t s = L - 1; s >= 0; s--) {
        const int64_t t = rev ? L - 1 - s : s, tp = rev ? t + 1 : t - 1;
        const T *cp = s ? cs + tp * N * H : c0, *a = acts + t * N * G, *c = cs + t * N * H, *gh = g + t * N * H;
        T *d = dgi + t * N * G;
        for (int64_t n = n0; n < n1; n++) {
            const T *ar = a + n * G;
            T *dr = d + n * G;
            tn__lstm_row_bwd_##SFX(H, ar, ar + H, ar + 2 * H, ar + 3 * H, c + n * H, cp + n * H, gh + n * H, dh + n * H, dc + n * H,
                                   dr, dr + H, dr + 2 * H, dr + 3 * H);
        }
        GEMM(nr, H, G, (T)1, d + n0 * G, G, 1, W, H, 1, (T)0, dh + n0 * H, H, 1); /* dh_prev = dgates W_hh (dh read above) */
    }
}
/* dW [4H, H] = sum_t dgates_t^T h_{t-1}: the first step's against h0, the others against out */
static void tn__lstm_dw_##SFX(int64_t L, int64_t N, int64_t H, bool rev, const T *h0, const T *out, const T *dgi, T *dW) {
    const int64_t G = 4 * H;
    const int64_t t0 = rev ? L - 1 : 0;
    GEMM(G, H, N, (T)1, dgi + t0 * N * G, 1, G, h0, H, 1, (T)0, dW, H, 1);
    if (L > 1) /* forward: dgates [1, L) with h [0, L - 1); reverse: dgates [0, L - 1) with h [1, L) */
        GEMM(G, H, (L - 1) * N, (T)1, dgi + (rev ? 0 : N * G), 1, G, out + (rev ? N * H : 0), H, 1, (T)1, dW, H, 1);
}
/* @end TN__LSTM_DEFINE */
TN__LSTM_DEFINE(float, f32, tn__expf_v, tn__tanhf_v, TN__PLAIN_FN, tn__gemm_f32)
#ifdef TN__AVX512_FN
TN__LSTM_DEFINE(float, f32x, tn__expf_v, tn__tanhf_v, TN__AVX512_FN, tn__gemm_f32)
TN__LSTM_DEFINE(float, f32y, tn__expf_v, tn__tanhf_v, TN__AVX2_FN, tn__gemm_f32)
#endif
TN__LSTM_DEFINE(double, f64, exp, tanh, TN__PLAIN_FN, tn__gemm_f64)

/* The fused recurrences' steps by batch rows: a row's recurrence reads only its own h (and
   c), so each thread runs all the steps on its share of the rows (whole 8-row panels): one
   job per sequence instead of a join per step, the pointwise passes split too. W_hh, the
   steps' GEMMs' B, is packed once ahead and shared (a thread's GEMMs run single-threaded,
   inside the job); results do not depend on the split (a GEMM row's sums do not). */
typedef struct tn__rnn_job {
    int mode;
    int64_t L, N, H;
    bool rev;
    tn_dtype dt;
    tn_tensor *gi, *h0, *c0, *W, *bh, *out, *acts, *cs, *g, *gh, *dgi, *dgh, *dh, *dc, *tmp;
    tn__gemm_bpre pre;   /* pre.P NULL: not packed ahead */
    void (*rows)(const struct tn__rnn_job *j, int64_t n0, int64_t n1);
} tn__rnn_job;
/* a job with its sizes and rows function, the tensors NULL (set by the caller) */
static tn__rnn_job tn__rnn_job_of(int mode, int64_t L, int64_t N, int64_t H, bool rev, tn_dtype dt,
                                  void (*rows)(const tn__rnn_job *j, int64_t n0, int64_t n1)) {
    tn__rnn_job j;
    memset(&j, 0, sizeof j);
    j.mode = mode; j.L = L; j.N = N; j.H = H; j.rev = rev; j.dt = dt; j.rows = rows;
    return j;
}
static void tn__rnn_job_part(void *p, int t, int nt) {
    const tn__rnn_job *j = (const tn__rnn_job *)p;
    const int64_t P = (j->N + 7) / 8, n0 = tn__split_at(P, t, nt) * 8, n1 = tn__split_at(P, t + 1, nt) * 8;
    if (n0 >= j->N) return;
    const tn__gemm_bpre keep = tn__gemm_bpre_on;   /* the graph replay's, on the submitting thread */
    if (j->pre.P) tn__gemm_bpre_on = j->pre;
    j->rows(j, n0, n1 < j->N ? n1 : j->N);
    tn__gemm_bpre_on = keep;
}
/* j->rows over the batch, b [K, N] (the steps' GEMMs' B) packed ahead for more than one step */
static void tn__rnn_job_run(tn__rnn_job *j, const tn_tensor *b) {
    const int nt = tn__par_threads((int64_t)((double)j->L * (double)j->N * (double)b->shape[0] * (double)b->shape[1] / TN__GEMM_UNIT), (j->N + 7) / 8);
    tn_tensor *pk = j->L > 1 ? tn__gemm_prepack(b, &j->pre) : NULL;
    if (pk) j->pre.over_direct = 1;   /* also where few rows would read b in place: it is packed already */
    else j->pre.P = NULL;
    tn__parallel(nt, tn__rnn_job_part, j);
    tn_release(pk);
}
#define TN__P(t, T) ((T *)tn_data_ptr(t))
static void tn__lstm_fwd_rows(const tn__rnn_job *j, int64_t n0, int64_t n1) {
    if (j->dt == TN_F32)
        TN__WIDE(tn__lstm_fwd_f32)(j->L, j->N, j->H, j->rev, TN__P(j->gi, const float), TN__P(j->h0, const float), TN__P(j->c0, const float),
                                   TN__P(j->W, const float), TN__P(j->out, float), TN__P(j->acts, float), TN__P(j->cs, float), n0, n1);
    else
        tn__lstm_fwd_f64(j->L, j->N, j->H, j->rev, TN__P(j->gi, const double), TN__P(j->h0, const double), TN__P(j->c0, const double),
                         TN__P(j->W, const double), TN__P(j->out, double), TN__P(j->acts, double), TN__P(j->cs, double), n0, n1);
}
static void tn__lstm_bwd_rows(const tn__rnn_job *j, int64_t n0, int64_t n1) {
    if (j->dt == TN_F32)
        TN__WIDE(tn__lstm_bwd_f32)(j->L, j->N, j->H, j->rev, TN__P(j->c0, const float), TN__P(j->W, const float), TN__P(j->acts, const float),
                                   TN__P(j->cs, const float), TN__P(j->g, const float), TN__P(j->dgi, float), TN__P(j->dh, float), TN__P(j->dc, float), n0, n1);
    else
        tn__lstm_bwd_f64(j->L, j->N, j->H, j->rev, TN__P(j->c0, const double), TN__P(j->W, const double), TN__P(j->acts, const double),
                         TN__P(j->cs, const double), TN__P(j->g, const double), TN__P(j->dgi, double), TN__P(j->dh, double), TN__P(j->dc, double), n0, n1);
}
static tn_tensor *tn__lstm_seq_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *gi = tn_contiguous(in[0]), *h0 = tn_contiguous(in[1]), *c0 = tn_contiguous(in[2]), *WT = tn_contiguous(tn_t(in[3]));
    if (!gi || !h0 || !c0 || !WT) return NULL;
    const bool rev = *(const double *)tn_data_ptr(in[4]) != 0;
    const int64_t L = gi->shape[0], N = gi->shape[1], H = h0->shape[1];
    tn_tensor *out = tn_empty(TN_SHAPE(L + 1, N, H), gi->dtype), *acts = tn_empty(gi->shape, 3, gi->dtype), *cs = tn_empty(TN_SHAPE(L, N, H), gi->dtype);
    if (!out || !acts || !cs) return NULL;
    tn__rnn_job j = tn__rnn_job_of(TN__RNN_LSTM, L, N, H, rev, gi->dtype, tn__lstm_fwd_rows);
    j.gi = gi; j.h0 = h0; j.c0 = c0; j.W = WT; j.out = out; j.acts = acts; j.cs = cs;
    tn__rnn_job_run(&j, WT);
    for (int i = 0; i < 5; i++) tn_ctx_save(ctx, in[i]);
    tn_ctx_save(ctx, out);
    tn_ctx_save(ctx, acts);
    tn_ctx_save(ctx, cs);
    return out;
}
/* the same steps in library ops: [L + 1, N, H] as the fused op's result */
static tn_tensor *tn__lstm_seq_ops(tn_tensor *gi, tn_tensor *h, tn_tensor *c, tn_tensor *w, bool rev) {
    const int64_t L = gi->shape[0];
    tn_tensor **hs = (tn_tensor **)TN_MALLOC((size_t)(L + 1) * sizeof(tn_tensor *));
    if (!hs) return (tn_tensor *)tn__error("LSTM: out of memory");
    for (int64_t s = 0; s < L && h; s++) {
        const int64_t t = rev ? L - 1 - s : s;
        h = tn__rnn_step(TN__RNN_LSTM, tn_select(gi, 0, t), h, &c, w, NULL, NULL);
        hs[t] = h;
    }
    hs[L] = c;
    tn_tensor *r = h && c ? tn_stack(hs, (int)(L + 1)) : NULL;
    TN_FREE(hs);
    return r;
}
static int tn__lstm_seq_bwd(tn_ctx *ctx, tn_tensor *grad, tn_tensor **gin, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *gi = tn_ctx_saved(ctx, 0), *h0 = tn_ctx_saved(ctx, 1), *c0 = tn_ctx_saved(ctx, 2), *W = tn_ctx_saved(ctx, 3);
    const bool rev = *(const double *)tn_data_ptr(tn_ctx_saved(ctx, 4)) != 0;
    if (tn_is_grad_enabled()) { /* create_graph: differentiate the steps written in library ops */
        tn_tensor *ins[4] = {gi, h0, c0, W}, *sel[4], *res[4] = {NULL, NULL, NULL, NULL};
        int idx[4], k = 0;
        for (int i = 0; i < 4; i++) if (tn_ctx_needs_grad(ctx, i)) { sel[k] = ins[i]; idx[k++] = i; }
        tn_tensor *y = tn__lstm_seq_ops(gi, h0, c0, W, rev);
        if (!y || tn_autograd_grad(&y, 1, sel, k, &grad, res, .create_graph = true, .allow_unused = true)) return -1;
        for (int i = 0; i < k; i++) gin[idx[i]] = res[i];   /* owned by the scope already, as op results */
        return 0;
    }
    tn_tensor *out = tn_ctx_saved(ctx, 5), *acts = tn_ctx_saved(ctx, 6), *cs = tn_ctx_saved(ctx, 7);
    tn_tensor *g = tn_contiguous(grad), *h0c = tn_contiguous(h0), *c0c = tn_contiguous(c0), *Wc = tn_contiguous(W);
    if (!g || !h0c || !c0c || !Wc || !out || !acts || !cs) return -1;
    const int64_t L = acts->shape[0], N = acts->shape[1], H = h0->shape[1];
    const tn_dtype dt = acts->dtype;
    tn_tensor *dgi = tn_empty(acts->shape, 3, dt), *dh = tn_empty(TN_SHAPE(N, H), dt), *dc = tn_empty(TN_SHAPE(N, H), dt);
    tn_tensor *dW = tn_empty(TN_SHAPE(4 * H, H), dt);
    if (!dgi || !dh || !dc || !dW) return -1;
    tn__rnn_job j = tn__rnn_job_of(TN__RNN_LSTM, L, N, H, rev, dt, tn__lstm_bwd_rows);
    j.c0 = c0c; j.W = Wc; j.acts = acts; j.cs = cs; j.g = g; j.dgi = dgi; j.dh = dh; j.dc = dc;
    tn__rnn_job_run(&j, Wc);   /* the steps' dh = dgates W_hh */
    if (dt == TN_F32)
        TN__WIDE(tn__lstm_dw_f32)(L, N, H, rev, TN__P(h0c, const float), TN__P(out, const float), TN__P(dgi, const float), TN__P(dW, float));
    else
        tn__lstm_dw_f64(L, N, H, rev, TN__P(h0c, const double), TN__P(out, const double), TN__P(dgi, const double), TN__P(dW, double));
    tn_tensor *r[4] = {dgi, dh, dc, dW};
    for (int i = 0; i < 4; i++) if (tn_ctx_needs_grad(ctx, i)) gin[i] = r[i];
    return 0;
}
/* The fused recurrence, [L + 1, N, H] (h_t, then the last c); NULL with an error on failure. */
static tn_tensor *tn__lstm_seq(tn_tensor *gi, tn_tensor *h0, tn_tensor *c0, tn_tensor *w_hh, bool rev) {
    tn_scope_begin();
    const double pv[1] = {rev ? 1.0 : 0.0};
    tn_tensor *par = tn_from_data(pv, TN_SHAPE(1), TN_F64);
    tn_tensor *in[5] = {gi, h0, c0, w_hh, par};
    return tn__scope_return(par ? tn_custom_op("LstmBackward", tn__lstm_seq_fwd, tn__lstm_seq_bwd, in, 5, NULL) : NULL);
}

/* ---- the GRU's and the plain RNN's recurrence as one op, as the LSTM's above ----
   Inputs: gi [L, N, G*H] (x W_ih^T + b_ih, and for the RNN b_hh too), h0 [N, H], W_hh [G*H, H],
   b_hh [3H] (GRU: its n part is scaled by r, so it stays apart; zeros without a bias) and a
   float64 [mode, reverse]. Result [L, N, H]: h_t. acts keeps per step r, z, n and the hidden
   n part (GRU) or nothing (the RNN reads h_t back). */
/* @template TN__RNNSEQ_DEFINE(T, SFX, EXP, TANH, ATTR, GEMM) */
/* the GRU's rows as the LSTM's (restrict parameters, so the loops vectorise): forward from the
   input and hidden parts of r, z, n (the hidden parts: the GEMM's h W_hh^T plus b_hh, added
   here) -> the saved r, z, n, hidden n part and h */
ATTR static inline void tn__gru_row_fwd_##SFX(int64_t H, const T *TN__RESTRICT gr, const T *TN__RESTRICT gz, const T *TN__RESTRICT gn,
                                             const T *TN__RESTRICT hr, const T *TN__RESTRICT hz, const T *TN__RESTRICT hn,
                                             const T *TN__RESTRICT br, const T *TN__RESTRICT bz, const T *TN__RESTRICT bn,
                                             const T *TN__RESTRICT hp, T *TN__RESTRICT ar, T *TN__RESTRICT az, T *TN__RESTRICT an,
                                             T *TN__RESTRICT ahn, T *TN__RESTRICT h) {
    for (int64_t j = 0; j < H; j++) {
        const T ghn = hn[j] + bn[j];
        const T r = 1 / (1 + EXP(-(gr[j] + (hr[j] + br[j])))), z = 1 / (1 + EXP(-(gz[j] + (hz[j] + bz[j]))));
        const T nn = TANH(gn[j] + r * ghn);
        ar[j] = r; az[j] = z; an[j] = nn; ahn[j] = ghn;
        h[j] = nn + z * (hp[j] - nn);
    }
}
/* backward of one row: the input parts' and hidden parts' gate gradients; dh gets the direct
   path (the GEMM's part is added by the caller) */
ATTR static inline void tn__gru_row_bwd_##SFX(int64_t H, const T *TN__RESTRICT ar, const T *TN__RESTRICT az, const T *TN__RESTRICT an,
                                             const T *TN__RESTRICT ahn, const T *TN__RESTRICT hp, const T *TN__RESTRICT gt,
                                             T *TN__RESTRICT dh, T *TN__RESTRICT dir, T *TN__RESTRICT diz, T *TN__RESTRICT din,
                                             T *TN__RESTRICT dgr, T *TN__RESTRICT dgz, T *TN__RESTRICT dgn) {
    for (int64_t j = 0; j < H; j++) {
        const T r = ar[j], z = az[j], nn = an[j], ghn = ahn[j];
        const T d = dh[j] + gt[j];
        const T dnp = d * (1 - z) * (1 - nn * nn), dr = dnp * ghn * r * (1 - r), dz = d * (hp[j] - nn) * z * (1 - z);
        dir[j] = dgr[j] = dr;
        diz[j] = dgz[j] = dz;
        din[j] = dnp;
        dgn[j] = dnp * r;
        dh[j] = d * z;
    }
}
/* the batch rows [n0, n1) (see tn__rnn_job) */
ATTR static void tn__rnnseq_fwd_##SFX(int mode, int64_t L, int64_t N, int64_t H, bool rev, const T *gi, const T *h0, const T *WT,
                                 const T *bh, T *out, T *acts, T *gh, int64_t n0, int64_t n1) {
    const int64_t G = (mode == TN__RNN_GRU ? 3 : 1) * H;
    for (int64_t s = 0; s < L; s++) {
        const int64_t t = rev ? L - 1 - s : s, tp = rev ? t + 1 : t - 1;
        const T *hp = s ? out + tp * N * H : h0, *g = gi + t * N * G;
        T *h = out + t * N * H;
        /* gh = h W_hh^T (WT packed ahead by the caller, or read in place, or packed here); the
           input part (RNN) or b_hh (GRU) is added by the pointwise pass */
        GEMM(n1 - n0, G, H, (T)1, hp + n0 * H, H, 1, WT, G, 1, (T)0, gh + n0 * G, G, 1);
        if (mode == TN__RNN_TANH) {
            for (int64_t k = n0 * H; k < n1 * H; k++) h[k] = TANH(gh[k] + g[k]);
            continue;
        }
        if (mode == TN__RNN_RELU) {
            for (int64_t k = n0 * H; k < n1 * H; k++) { const T x = gh[k] + g[k]; h[k] = x > 0 ? x : 0; }
            continue;
        }
        T *a = acts + t * N * 4 * H;
        for (int64_t n = n0; n < n1; n++) {
            const T *gr = g + n * G, *hr = gh + n * G;
            T *ar = a + n * 4 * H;
            tn__gru_row_fwd_##SFX(H, gr, gr + H, gr + 2 * H, hr, hr + H, hr + 2 * H, bh, bh + H, bh + 2 * H, hp + n * H, ar, ar + H, ar + 2 * H,
                                  ar + 3 * H, h + n * H);
        }
    }
}
/* g [L, N, H] -> dgi [L, N, G*H], dgh [L, N, G*H] (GRU: the hidden part's; RNN: dgi itself),
   dh0: the batch rows [n0, n1) */
ATTR static void tn__rnnseq_bwd_##SFX(int mode, int64_t L, int64_t N, int64_t H, bool rev, const T *h0, const T *W, const T *out, const T *acts,
                                 const T *g, T *dgi, T *dgh, T *dh, T *tmp, int64_t n0, int64_t n1) {
    const int64_t G = (mode == TN__RNN_GRU ? 3 : 1) * H;
    const bool gru = mode == TN__RNN_GRU;
    if (!gru) dgh = dgi;
    memset(dh + n0 * H, 0, (size_t)((n1 - n0) * H) * sizeof(T));
    for (int64_t s = L - 1; s >= 0; s--) {
        const int64_t t = rev ? L - 1 - s : s, tp = rev ? t + 1 : t - 1;
        const T *hp = s ? out + tp * N * H : h0, *h = out + t * N * H, *gt = g + t * N * H;
        T *di = dgi + t * N * G, *dg = dgh + t * N * G;
        if (!gru) {
            for (int64_t k = n0 * H; k < n1 * H; k++) {
                const T d = dh[k] + gt[k];
                di[k] = mode == TN__RNN_TANH ? d * (1 - h[k] * h[k]) : h[k] > 0 ? d : 0;
            }
        } else {
            const T *a = acts + t * N * 4 * H;
            for (int64_t n = n0; n < n1; n++) {
                const T *ar = a + n * 4 * H;
                T *dir = di + n * G, *dgr = dg + n * G;
                tn__gru_row_bwd_##SFX(H, ar, ar + H, ar + 2 * H, ar + 3 * H, hp + n * H, gt + n * H, dh + n * H, dir, dir + H, dir + 2 * H,
                                      dgr, dgr + H, dgr + 2 * H);
            }
        }
        /* dh_prev = dgates W_hh (the GRU's: plus the direct path, after the GEMM's sum as before) */
        GEMM(n1 - n0, H, G, (T)1, dg + n0 * G, G, 1, W, H, 1, (T)0, (gru ? tmp : dh) + n0 * H, H, 1);
        if (gru) for (int64_t k = n0 * H; k < n1 * H; k++) dh[k] += tmp[k];
    }
}
/* dW [G*H, H] = sum_t dgates_t^T h_{t-1}, as the LSTM's */
static void tn__rnnseq_dw_##SFX(int mode, int64_t L, int64_t N, int64_t H, bool rev, const T *h0, const T *out, const T *dgh, T *dW) {
    const int64_t G = (mode == TN__RNN_GRU ? 3 : 1) * H;
    const int64_t t0 = rev ? L - 1 : 0;
    GEMM(G, H, N, (T)1, dgh + t0 * N * G, 1, G, h0, H, 1, (T)0, dW, H, 1);
    if (L > 1) GEMM(G, H, (L - 1) * N, (T)1, dgh + (rev ? 0 : N * G), 1, G, out + (rev ? N * H : 0), H, 1, (T)1, dW, H, 1);
}
/* @end TN__RNNSEQ_DEFINE */
TN__RNNSEQ_DEFINE(float, f32, tn__expf_v, tn__tanhf_v, TN__PLAIN_FN, tn__gemm_f32)
#ifdef TN__AVX512_FN
TN__RNNSEQ_DEFINE(float, f32x, tn__expf_v, tn__tanhf_v, TN__AVX512_FN, tn__gemm_f32)
TN__RNNSEQ_DEFINE(float, f32y, tn__expf_v, tn__tanhf_v, TN__AVX2_FN, tn__gemm_f32)
#endif
TN__RNNSEQ_DEFINE(double, f64, exp, tanh, TN__PLAIN_FN, tn__gemm_f64)

static void tn__rnnseq_fwd_rows(const tn__rnn_job *j, int64_t n0, int64_t n1) {
    if (j->dt == TN_F32)
        TN__WIDE(tn__rnnseq_fwd_f32)(j->mode, j->L, j->N, j->H, j->rev, TN__P(j->gi, const float), TN__P(j->h0, const float), TN__P(j->W, const float),
                                     TN__P(j->bh, const float), TN__P(j->out, float), TN__P(j->acts, float), TN__P(j->gh, float), n0, n1);
    else
        tn__rnnseq_fwd_f64(j->mode, j->L, j->N, j->H, j->rev, TN__P(j->gi, const double), TN__P(j->h0, const double), TN__P(j->W, const double),
                           TN__P(j->bh, const double), TN__P(j->out, double), TN__P(j->acts, double), TN__P(j->gh, double), n0, n1);
}
static void tn__rnnseq_bwd_rows(const tn__rnn_job *j, int64_t n0, int64_t n1) {
    if (j->dt == TN_F32)
        TN__WIDE(tn__rnnseq_bwd_f32)(j->mode, j->L, j->N, j->H, j->rev, TN__P(j->h0, const float), TN__P(j->W, const float), TN__P(j->out, const float),
                                     TN__P(j->acts, const float), TN__P(j->g, const float), TN__P(j->dgi, float), TN__P(j->dgh, float), TN__P(j->dh, float),
                                     TN__P(j->tmp, float), n0, n1);
    else
        tn__rnnseq_bwd_f64(j->mode, j->L, j->N, j->H, j->rev, TN__P(j->h0, const double), TN__P(j->W, const double), TN__P(j->out, const double),
                           TN__P(j->acts, const double), TN__P(j->g, const double), TN__P(j->dgi, double), TN__P(j->dgh, double), TN__P(j->dh, double),
                           TN__P(j->tmp, double), n0, n1);
}
static tn_tensor *tn__rnnseq_fwd(tn_ctx *ctx, tn_tensor *const *in, int n, void *user) {
    (void)n; (void)user;
    const double *pv = (const double *)tn_data_ptr(in[4]);
    const int mode = (int)pv[0];
    const bool rev = pv[1] != 0, gru = mode == TN__RNN_GRU;
    tn_tensor *gi = tn_contiguous(in[0]), *h0 = tn_contiguous(in[1]), *WT = tn_contiguous(tn_t(in[2])), *bh = tn_contiguous(in[3]);
    if (!gi || !h0 || !WT || !bh) return NULL;
    const int64_t L = gi->shape[0], N = gi->shape[1], H = h0->shape[1], G = gi->shape[2];
    tn_tensor *out = tn_empty(TN_SHAPE(L, N, H), gi->dtype), *acts = tn_empty(TN_SHAPE(gru ? L : 1, N, gru ? 4 * H : 1), gi->dtype);
    tn_tensor *gh = tn_empty(TN_SHAPE(N, G), gi->dtype);
    if (!out || !acts || !gh) return NULL;
    tn__rnn_job j = tn__rnn_job_of(mode, L, N, H, rev, gi->dtype, tn__rnnseq_fwd_rows);
    j.gi = gi; j.h0 = h0; j.W = WT; j.bh = bh; j.out = out; j.acts = acts; j.gh = gh;
    tn__rnn_job_run(&j, WT);
    for (int i = 0; i < 5; i++) tn_ctx_save(ctx, in[i]);
    tn_ctx_save(ctx, out);
    tn_ctx_save(ctx, acts);
    return out;
}
static int tn__rnnseq_bwd(tn_ctx *ctx, tn_tensor *grad, tn_tensor **gin, int n, void *user) {
    (void)n; (void)user;
    tn_tensor *gi = tn_ctx_saved(ctx, 0), *h0 = tn_ctx_saved(ctx, 1), *W = tn_ctx_saved(ctx, 2), *bh = tn_ctx_saved(ctx, 3);
    const double *pv = (const double *)tn_data_ptr(tn_ctx_saved(ctx, 4));
    const int mode = (int)pv[0];
    const bool rev = pv[1] != 0, gru = mode == TN__RNN_GRU;
    if (tn_is_grad_enabled()) { /* create_graph: differentiate the steps written in library ops */
        tn_tensor *ins[4] = {gi, h0, W, bh}, *sel[4], *res[4] = {NULL, NULL, NULL, NULL};
        int idx[4], k = 0;
        for (int i = 0; i < 4; i++) if (tn_ctx_needs_grad(ctx, i)) { sel[k] = ins[i]; idx[k++] = i; }
        const int64_t L = gi->shape[0];
        tn_tensor **hs = (tn_tensor **)TN_MALLOC((size_t)L * sizeof(tn_tensor *)), *h = h0;
        if (!hs) return TN__FAIL_INT("%s: out of memory", gru ? "GRU" : "RNN");
        for (int64_t s = 0; s < L && h; s++) {
            const int64_t t = rev ? L - 1 - s : s;
            h = tn__rnn_step(mode, tn_select(gi, 0, t), h, NULL, W, gru ? bh : NULL, NULL);
            hs[t] = h;
        }
        tn_tensor *y = h ? tn_stack(hs, (int)L) : NULL;
        TN_FREE(hs);
        if (!y || tn_autograd_grad(&y, 1, sel, k, &grad, res, .create_graph = true, .allow_unused = true)) return -1;
        for (int i = 0; i < k; i++) gin[idx[i]] = res[i];   /* owned by the scope already, as op results */
        return 0;
    }
    tn_tensor *out = tn_ctx_saved(ctx, 5), *acts = tn_ctx_saved(ctx, 6);
    tn_tensor *g = tn_contiguous(grad), *h0c = tn_contiguous(h0), *Wc = tn_contiguous(W);
    if (!g || !h0c || !Wc || !out || !acts) return -1;
    const int64_t L = gi->shape[0], N = gi->shape[1], G = gi->shape[2], H = h0->shape[1];
    const tn_dtype dt = out->dtype;
    tn_tensor *dgi = tn_empty(TN_SHAPE(L, N, G), dt), *dgh = gru ? tn_empty(TN_SHAPE(L, N, G), dt) : dgi;
    tn_tensor *dh = tn_empty(TN_SHAPE(N, H), dt), *dW = tn_empty(TN_SHAPE(G, H), dt), *tmp = tn_empty(TN_SHAPE(N, H), dt);
    if (!dgi || !dgh || !dh || !dW || !tmp) return -1;
    tn__rnn_job j = tn__rnn_job_of(mode, L, N, H, rev, dt, tn__rnnseq_bwd_rows);
    j.h0 = h0c; j.W = Wc; j.out = out; j.acts = acts; j.g = g; j.dgi = dgi; j.dgh = dgh; j.dh = dh; j.tmp = tmp;
    tn__rnn_job_run(&j, Wc);   /* the steps' dh = dgates W_hh */
    if (dt == TN_F32)
        TN__WIDE(tn__rnnseq_dw_f32)(mode, L, N, H, rev, TN__P(h0c, const float), TN__P(out, const float), TN__P(dgh, const float), TN__P(dW, float));
    else
        tn__rnnseq_dw_f64(mode, L, N, H, rev, TN__P(h0c, const double), TN__P(out, const double), TN__P(dgh, const double), TN__P(dW, double));
    tn_tensor *r[4] = {dgi, dh, dW, gru ? tn_sum_dims(dgh, TN_DIMS(0, 1)) : NULL};
    for (int i = 0; i < 4; i++) if (tn_ctx_needs_grad(ctx, i)) { if (!r[i]) return -1; gin[i] = r[i]; }
    return 0;
}
#undef TN__P
/* The fused GRU / RNN recurrence, [L, N, H]; b_hh NULL: none (the RNN's is in gi). */
static tn_tensor *tn__rnnseq(int mode, tn_tensor *gi, tn_tensor *h0, tn_tensor *w_hh, tn_tensor *b_hh, bool rev) {
    tn_scope_begin();
    const double pv[2] = {(double)mode, rev ? 1.0 : 0.0};
    tn_tensor *par = tn_from_data(pv, TN_SHAPE(2), TN_F64);
    if (!b_hh) b_hh = tn_zeros(TN_SHAPE(w_hh->shape[0]), w_hh->dtype);
    tn_tensor *in[5] = {gi, h0, w_hh, b_hh, par};
    return tn__scope_return(par && b_hh ? tn_custom_op(mode == TN__RNN_GRU ? "GruBackward" : "RnnBackward", tn__rnnseq_fwd, tn__rnnseq_bwd, in, 5, NULL) : NULL);
}

/* A cell step's arguments, with PyTorch's messages; fn is the function or the layer. h and c
   may be NULL (zeros). */
static int tn__cell_check(const char *fn, int mode, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor *w_ih, tn_tensor *w_hh,
                          tn_tensor *b_ih, tn_tensor *b_hh) {
    const int G = tn__rnn_gates[mode];
    if (x->ndim != 1 && x->ndim != 2) return TN__FAIL_INT("%s: expected input to be 1-D or 2-D but received %d-D tensor (input %s)", fn, x->ndim, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return -1;
    if (w_ih->ndim != 2 || w_hh->ndim != 2 || w_hh->shape[0] != G * w_hh->shape[1] || w_ih->shape[0] != w_hh->shape[0])
        return TN__FAIL_INT("%s: weight_ih %s and weight_hh %s must be [%d*hidden_size, input_size] and [%d*hidden_size, hidden_size]", fn,
                            TN__SHAPE(w_ih), TN__SHAPE(w_hh), G, G);
    const int64_t H = w_hh->shape[1];
    tn_tensor *const bs[2] = {b_ih, b_hh}, *const hs[2] = {h, c};
    for (int k = 0; k < 2; k++)
        if (bs[k] && (bs[k]->ndim != 1 || bs[k]->shape[0] != G * H))
            return TN__FAIL_INT("%s: %s %s must be [%lld] (%d*hidden_size)", fn, k ? "bias_hh" : "bias_ih", TN__SHAPE(bs[k]), (long long)(G * H), G);
    if (tn__nn_same(fn, x, w_ih, "weight_ih") || tn__nn_same(fn, x, w_hh, "weight_hh") || tn__nn_same(fn, x, b_ih, "bias_ih") ||
        tn__nn_same(fn, x, b_hh, "bias_hh") || tn__nn_same(fn, x, h, "hx") || tn__nn_same(fn, x, c, "cx"))
        return -1;
    if (x->shape[x->ndim - 1] != w_ih->shape[1])
        return TN__FAIL_INT("%s: input has inconsistent input_size: got %lld expected %lld (input %s)", fn, (long long)x->shape[x->ndim - 1], (long long)w_ih->shape[1], TN__SHAPE(x));
    for (int k = 0; k < 2; k++) {
        tn_tensor *s = hs[k];
        if (!s) continue;
        if (s->ndim != x->ndim)
            return TN__FAIL_INT("%s: for %s %d-D input %s, hidden%d should also be %d-D but got %s", fn, x->ndim == 2 ? "batched" : "unbatched", x->ndim, TN__SHAPE(x), k, x->ndim, TN__SHAPE(s));
        if (x->ndim == 2 && s->shape[0] != x->shape[0])
            return TN__FAIL_INT("%s: Input batch size %lld doesn't match hidden%d batch size %lld", fn, (long long)x->shape[0], k, (long long)s->shape[0]);
        if (s->shape[s->ndim - 1] != H)
            return TN__FAIL_INT("%s: hidden%d has inconsistent hidden_size: got %lld, expected %lld", fn, k, (long long)s->shape[s->ndim - 1], (long long)H);
    }
    return 0;
}
static tn_tensor *tn__cell_core(int mode, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih,
                                tn_tensor *b_hh, tn_tensor **c_out) {
    const bool batched = x->ndim == 2, lstm = mode == TN__RNN_LSTM;
    const int64_t H = w_hh->shape[1];
    tn_scope_begin();
    if (!batched) { /* [in] -> [1, in], and back at the end */
        x = tn_unsqueeze(x, 0);
        h = h ? tn_unsqueeze(h, 0) : NULL;
        c = c ? tn_unsqueeze(c, 0) : NULL;
    }
    if (x && !h) h = tn__own(tn__full_on(TN_SHAPE(x->shape[0], H), 0, x->dtype, x->device));
    if (x && lstm && !c) c = tn__own(tn__full_on(TN_SHAPE(x->shape[0], H), 0, x->dtype, x->device));
    tn_tensor *hn = x ? tn__rnn_step(mode, tn_linear(x, w_ih, b_ih), h, &c, w_hh, b_hh, NULL) : NULL;
    if (!batched) {
        hn = tn_squeeze_dim(hn, 0);
        c = lstm ? tn_squeeze_dim(c, 0) : NULL;
    }
    if (lstm && !c) hn = NULL;
    if (hn && lstm && c_out) *c_out = tn_keep(c);
    return tn__scope_return(hn);
}
static tn_tensor *tn__cell(const char *fn, int mode, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor *w_ih, tn_tensor *w_hh,
                           tn_tensor *b_ih, tn_tensor *b_hh, tn_tensor **c_out) {
    if (c_out) *c_out = NULL;
    TN__CHECK_NULL(x, w_ih, w_hh);
    if (tn__cell_check(fn, mode, x, h, c, w_ih, w_hh, b_ih, b_hh)) return NULL;
    return TN__AS(fn, tn__cell_core(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, c_out));
}
TNDEF tn_tensor *tn_rnn_tanh_cell(tn_tensor *x, tn_tensor *h, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh) {
    TN__CHECK_NULL(h);
    return tn__cell("tn_rnn_tanh_cell", TN__RNN_TANH, x, h, NULL, w_ih, w_hh, b_ih, b_hh, NULL);
}
TNDEF tn_tensor *tn_rnn_relu_cell(tn_tensor *x, tn_tensor *h, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh) {
    TN__CHECK_NULL(h);
    return tn__cell("tn_rnn_relu_cell", TN__RNN_RELU, x, h, NULL, w_ih, w_hh, b_ih, b_hh, NULL);
}
TNDEF tn_tensor *tn_lstm_cell(tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh,
                              tn_tensor **c_out) {
    if (c_out) *c_out = NULL;
    TN__CHECK_NULL(h, c);
    return tn__cell("tn_lstm_cell", TN__RNN_LSTM, x, h, c, w_ih, w_hh, b_ih, b_hh, c_out);
}
TNDEF tn_tensor *tn_gru_cell(tn_tensor *x, tn_tensor *h, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh) {
    TN__CHECK_NULL(h);
    return tn__cell("tn_gru_cell", TN__RNN_GRU, x, h, NULL, w_ih, w_hh, b_ih, b_hh, NULL);
}

/* RNN, LSTM, GRU and their cells: one struct, one type per PyTorch class. */
typedef struct tn__rnnm { tn_module base; int mode; bool cell, bias, batch_first, bidirectional; int64_t in, hidden, proj, layers; double dropout; } tn__rnnm;
static tn_tensor *tn__rnn_fwd(tn_module *m, tn_tensor *x);
static void tn__rnn_repr(tn_module *m, char *b, size_t n) {
    tn__rnnm *r = (tn__rnnm *)m;
    char t[32];
    size_t k = (size_t)snprintf(b, n, "%lld, %lld", (long long)r->in, (long long)r->hidden);
#define TN__PUT(...) do { if (k < n) k += (size_t)snprintf(b + k, n - k, __VA_ARGS__); } while (0)
    if (r->cell) {
        if (!r->bias) TN__PUT(", bias=False");
        if (r->mode == TN__RNN_RELU) TN__PUT(", nonlinearity=relu");
        return;
    }
    if (r->proj) TN__PUT(", proj_size=%lld", (long long)r->proj);
    if (r->layers != 1) TN__PUT(", num_layers=%lld", (long long)r->layers);
    if (!r->bias) TN__PUT(", bias=False");
    if (r->batch_first) TN__PUT(", batch_first=True");
    if (r->dropout != 0) TN__PUT(", dropout=%s", tn__pyfloat(r->dropout, t));
    if (r->bidirectional) TN__PUT(", bidirectional=True");
#undef TN__PUT
}
static const tn_module_type tn__rnn_type = {"RNN", tn__rnn_fwd, NULL, tn__rnn_repr};
static const tn_module_type tn__lstm_type = {"LSTM", tn__rnn_fwd, NULL, tn__rnn_repr};
static const tn_module_type tn__gru_type = {"GRU", tn__rnn_fwd, NULL, tn__rnn_repr};
static const tn_module_type tn__rnn_cell_type = {"RNNCell", tn__rnn_fwd, NULL, tn__rnn_repr};
static const tn_module_type tn__lstm_cell_type = {"LSTMCell", tn__rnn_fwd, NULL, tn__rnn_repr};
static const tn_module_type tn__gru_cell_type = {"GRUCell", tn__rnn_fwd, NULL, tn__rnn_repr};
static tn__rnnm *tn__as_rnn(tn_module *m) {
    if (!m) return NULL;
    const tn_module_type *t = m->type;
    bool ok = t == &tn__rnn_type || t == &tn__lstm_type || t == &tn__gru_type || t == &tn__rnn_cell_type || t == &tn__lstm_cell_type || t == &tn__gru_cell_type;
    return ok ? (tn__rnnm *)m : NULL;
}
static tn_tensor *tn__rnn_param(tn_module *m, const char *what, const char *suffix) {
    char name[64];
    snprintf(name, sizeof name, "%s%s", what, suffix);
    return tn_module_get(m, name);
}
/* The keyword arguments each kind has (its tn_rnn_opts / tn_rnn_cell_opts fields). */
static const char *tn__rnn_options(int mode, bool cell) {
    if (cell) return mode == TN__RNN_TANH ? "bias, nonlinearity" : "bias";
    return mode == TN__RNN_LSTM ? "num_layers, bias, batch_first, dropout, bidirectional, proj_size"
         : mode == TN__RNN_GRU ? "num_layers, bias, batch_first, dropout, bidirectional"
                               : "num_layers, nonlinearity, bias, batch_first, dropout, bidirectional";
}
/* mode: TN__RNN_TANH for RNN and RNNCell (nonlinearity picks RELU), LSTM, GRU */
/* The parameter elements of one layer and direction whose input has lin features (G gate
   rows, `real` recurrent features); false when they do not fit in int64. */
static bool tn__rnn_layer_numel(int64_t G, int64_t lin, int64_t real, bool bias, int64_t proj, int64_t hidden, int64_t *n) {
    int64_t ih, hh, hr = 0;
    if (!tn__mul_ok(G, lin, &ih) || !tn__mul_ok(G, real, &hh) || (proj && !tn__mul_ok(proj, hidden, &hr))) return false;
    return tn__add_ok(ih, hh, n) && (!bias || (tn__add_ok(*n, G, n) && tn__add_ok(*n, G, n))) && tn__add_ok(*n, hr, n);
}
static tn_module *tn__rnn_new(const char *fn, const tn_module_type *type, int mode, bool cell, int64_t in, int64_t hidden, tn_rnn_opts o) {
    if (!cell && o.proj_size != 0 && mode != TN__RNN_LSTM) return (tn_module *)tn__error("%s: proj_size argument is only supported for LSTM, not RNN or GRU", fn);
    const tn_rnn_opts def = TN_DEFAULTS(tn_rnn_opts);
    if (tn__kw_only(fn, type->name, tn__kw_rnn, TN__KW_N(tn__kw_rnn), &o, &def, tn__rnn_options(mode, cell))) return NULL;
    if (o.nonlinearity != TN_NONLINEARITY_TANH && o.nonlinearity != TN_NONLINEARITY_RELU)
        return (tn_module *)tn__error("%s: nonlinearity %d is not TN_NONLINEARITY_TANH or TN_NONLINEARITY_RELU", fn, o.nonlinearity);
    if (mode == TN__RNN_TANH && o.nonlinearity == TN_NONLINEARITY_RELU) mode = TN__RNN_RELU;
    const bool bias = o.bias, batch_first = o.batch_first, bidirectional = o.bidirectional;
    const int64_t layers = o.num_layers, proj = o.proj_size;
    const double dropout = o.dropout;
    int failed = 0;
    if (in < 0) return (tn_module *)tn__error("%s: input_size must be non-negative, got %lld", fn, (long long)in);
    if (hidden <= 0) return (tn_module *)tn__error("%s: hidden_size must be greater than zero, got %lld", fn, (long long)hidden);
    if (layers <= 0) return (tn_module *)tn__error("%s: num_layers must be greater than zero, got %lld", fn, (long long)layers);
    if (!(dropout >= 0 && dropout <= 1))
        return (tn_module *)tn__error("%s: dropout should be a number in range [0, 1] representing the probability of an element being zeroed, got %g", fn, dropout);
    if (proj < 0) return (tn_module *)tn__error("%s: proj_size should be a positive integer or zero to disable projections, got %lld", fn, (long long)proj);
    if (proj >= hidden) return (tn_module *)tn__error("%s: proj_size has to be smaller than hidden_size (got proj_size=%lld, hidden_size=%lld)", fn, (long long)proj, (long long)hidden);
    const int D = bidirectional ? 2 : 1;
    const int64_t real = proj ? proj : hidden;
    {   /* PyTorch allocates layer after layer; a count whose parameters cannot fit (or whose
           sizes overflow) is refused here, before the first, instead of allocating for hours */
        int64_t G, first, rest, all, bytes;
        bool fits = tn__mul_ok(tn__rnn_gates[mode], hidden, &G) && tn__rnn_layer_numel(G, in, real, bias, proj, hidden, &first) &&
                    tn__rnn_layer_numel(G, tn__mul_sat(real, D), real, bias, proj, hidden, &rest) && tn__mul_ok(rest, layers - 1, &all) &&
                    tn__add_ok(all, first, &all) && tn__mul_ok(all, D, &all) && tn__mul_ok(all, (int64_t)sizeof(float), &bytes);
        if (!fits || !tn__fits_memory(bytes))
            return (tn_module *)tn__error("%s: the parameters of input_size=%lld, hidden_size=%lld, num_layers=%lld%s%s cannot fit in memory",
                                          fn, (long long)in, (long long)hidden, (long long)layers, bidirectional ? ", bidirectional" : "",
                                          fits ? "" : " (their size overflows int64)");
    }
    tn__rnnm *r = (tn__rnnm *)tn_module_new(type, sizeof(tn__rnnm));
    if (!r) return NULL;
    r->mode = mode; r->cell = cell; r->bias = bias; r->batch_first = batch_first; r->bidirectional = bidirectional;
    r->in = in; r->hidden = hidden; r->proj = proj; r->layers = layers; r->dropout = dropout;
    const int64_t G = tn__rnn_gates[mode] * hidden;   /* fits: checked above */
    /* PyTorch's order: per layer, per direction: w_ih, w_hh, b_ih, b_hh, w_hr */
    for (int64_t l = 0; !failed && l < layers; l++)
        for (int d = 0; !failed && d < D; d++) {
            char sfx[40], name[64];
            if (cell) sfx[0] = 0;
            else snprintf(sfx, sizeof sfx, "_l%lld%s", (long long)l, d ? "_reverse" : "");
            const int64_t lin = l == 0 ? in : real * D;
            snprintf(name, sizeof name, "weight_ih%s", sfx);
            failed = !tn__param(&r->base, name, TN_SHAPE(G, lin));
            snprintf(name, sizeof name, "weight_hh%s", sfx);
            failed = failed || !tn__param(&r->base, name, TN_SHAPE(G, real));
            if (bias) {
                snprintf(name, sizeof name, "bias_ih%s", sfx);
                failed = failed || !tn__param(&r->base, name, TN_SHAPE(G));
                snprintf(name, sizeof name, "bias_hh%s", sfx);
                failed = failed || !tn__param(&r->base, name, TN_SHAPE(G));
            }
            if (proj) {
                snprintf(name, sizeof name, "weight_hr%s", sfx);
                failed = failed || !tn__param(&r->base, name, TN_SHAPE(proj, hidden));
            }
        }
    const double bound = 1 / sqrt((double)hidden);   /* reset_parameters: every parameter U(-1/sqrt(H), 1/sqrt(H)) */
    for (int i = 0; !failed && i < r->base.nparams; i++) failed = tn_init_uniform_(r->base.params[i].t, .a = -bound, .b = bound);
    return tn__module_or_free(&r->base, failed);
}
TNDEF tn_module *tn_nn_rnn_opts(int64_t in, int64_t hidden, tn_rnn_opts o) { return tn__rnn_new("tn_nn_rnn", &tn__rnn_type, TN__RNN_TANH, false, in, hidden, o); }
TNDEF tn_module *tn_nn_lstm_opts(int64_t in, int64_t hidden, tn_rnn_opts o) { return tn__rnn_new("tn_nn_lstm", &tn__lstm_type, TN__RNN_LSTM, false, in, hidden, o); }
TNDEF tn_module *tn_nn_gru_opts(int64_t in, int64_t hidden, tn_rnn_opts o) { return tn__rnn_new("tn_nn_gru", &tn__gru_type, TN__RNN_GRU, false, in, hidden, o); }
/* A cell: its two options in a tn_rnn_opts (the layer options at their defaults). */
static tn_module *tn__rnn_cell_new(const char *fn, const tn_module_type *type, int mode, int64_t in, int64_t hidden, tn_rnn_cell_opts c) {
    tn_rnn_opts o = TN_DEFAULTS(tn_rnn_opts);
    o.bias = c.bias;
    o.nonlinearity = c.nonlinearity;
    return tn__rnn_new(fn, type, mode, true, in, hidden, o);
}
TNDEF tn_module *tn_nn_rnn_cell_opts(int64_t in, int64_t hidden, tn_rnn_cell_opts o) { return tn__rnn_cell_new("tn_nn_rnn_cell", &tn__rnn_cell_type, TN__RNN_TANH, in, hidden, o); }
TNDEF tn_module *tn_nn_lstm_cell_opts(int64_t in, int64_t hidden, tn_rnn_cell_opts o) { return tn__rnn_cell_new("tn_nn_lstm_cell", &tn__lstm_cell_type, TN__RNN_LSTM, in, hidden, o); }
TNDEF tn_module *tn_nn_gru_cell_opts(int64_t in, int64_t hidden, tn_rnn_cell_opts o) { return tn__rnn_cell_new("tn_nn_gru_cell", &tn__gru_cell_type, TN__RNN_GRU, in, hidden, o); }
/* The text forms: only the kind's own names are known (an unknown one lists those). */
static tn_module *tn__rnn_str(const char *fn, const tn_module_type *type, int mode, bool cell, int64_t in, int64_t hidden, const char *options) {
    tn__kwkey keys[TN__KW_MAXKEYS];
    const int n = tn__kw_filter(tn__kw_rnn, TN__KW_N(tn__kw_rnn), tn__rnn_options(mode, cell), keys);
    tn_rnn_opts o = TN_DEFAULTS(tn_rnn_opts);
    return tn__kw_parse(fn, options, keys, n, &o, NULL) ? NULL : tn__rnn_new(fn, type, mode, cell, in, hidden, o);
}
TNDEF tn_module *tn_nn_rnn_str(int64_t in, int64_t hidden, const char *options) { return tn__rnn_str("tn_nn_rnn", &tn__rnn_type, TN__RNN_TANH, false, in, hidden, options); }
TNDEF tn_module *tn_nn_lstm_str(int64_t in, int64_t hidden, const char *options) { return tn__rnn_str("tn_nn_lstm", &tn__lstm_type, TN__RNN_LSTM, false, in, hidden, options); }
TNDEF tn_module *tn_nn_gru_str(int64_t in, int64_t hidden, const char *options) { return tn__rnn_str("tn_nn_gru", &tn__gru_type, TN__RNN_GRU, false, in, hidden, options); }
TNDEF tn_module *tn_nn_rnn_cell_str(int64_t in, int64_t hidden, const char *options) { return tn__rnn_str("tn_nn_rnn_cell", &tn__rnn_cell_type, TN__RNN_TANH, true, in, hidden, options); }
TNDEF tn_module *tn_nn_lstm_cell_str(int64_t in, int64_t hidden, const char *options) { return tn__rnn_str("tn_nn_lstm_cell", &tn__lstm_cell_type, TN__RNN_LSTM, true, in, hidden, options); }
TNDEF tn_module *tn_nn_gru_cell_str(int64_t in, int64_t hidden, const char *options) { return tn__rnn_str("tn_nn_gru_cell", &tn__gru_cell_type, TN__RNN_GRU, true, in, hidden, options); }

/* The L steps of t [L, ...] as views, halving recursively: each step's backward then writes a
   slab of its parent only, O(L log L) gradient traffic instead of O(L^2) for L selects of t. */
static void tn__unbind_steps(tn_tensor *t, int64_t lo, int64_t n, tn_tensor **out) {
    if (n == 1) { out[lo] = tn_select(t, 0, 0); return; }
    const int64_t h = n / 2;
    tn__unbind_steps(tn_narrow(t, 0, 0, h), lo, h, out);
    tn__unbind_steps(tn_narrow(t, 0, h, n - h), lo + h, n - h, out);
}
/* The whole sequence: layer by layer, each direction's input projection for every time step
   in one GEMM, then the steps; outputs of the two directions side by side; dropout between
   layers when training. x is [L, N, in] after batch_first / unbatched handling here. */
static tn_tensor *tn__rnn_core(tn__rnnm *r, tn_tensor *x, tn_tensor *h0, tn_tensor *c0, tn_tensor **h_n, tn_tensor **c_n) {
    tn_module *m = &r->base;
    const int mode = r->mode, D = r->bidirectional ? 2 : 1;
    const bool batched = x->ndim == 3, lstm = mode == TN__RNN_LSTM;
    const int64_t nl = r->layers, Hout = r->proj ? r->proj : r->hidden;
    tn_scope_begin();
    if (!batched) { /* [L, in] -> [L, 1, in]; states [D*layers, H] -> [D*layers, 1, H] */
        x = tn_unsqueeze(x, 1);
        h0 = h0 ? tn_unsqueeze(h0, 1) : NULL;
        c0 = c0 ? tn_unsqueeze(c0, 1) : NULL;
    } else if (r->batch_first) x = tn_transpose(x, 0, 1);
    const int64_t L = x ? x->shape[0] : 0, N = x ? x->shape[1] : 0;
    if (x && !h0) h0 = tn__own(tn__full_on(TN_SHAPE(D * nl, N, Hout), 0, x->dtype, x->device));
    if (x && lstm && !c0) c0 = tn__own(tn__full_on(TN_SHAPE(D * nl, N, r->hidden), 0, x->dtype, x->device));
    tn_tensor **steps = (tn_tensor **)TN_MALLOC((size_t)(2 * L + 2 * D * nl) * sizeof(tn_tensor *));
    if (!steps) { tn_scope_end(); return (tn_tensor *)tn__error("%s: out of memory", m->type->name); }
    tn_tensor **gis = steps + L, **hn = gis + L, **cn = hn + D * nl, *y = NULL, *in = x;
    bool ok = x && h0 && (!lstm || c0);
    for (int64_t l = 0; ok && l < nl; l++) {
        tn_tensor *dir[2] = {NULL, NULL};
        for (int d = 0; ok && d < D; d++) {
            char sfx[40];
            snprintf(sfx, sizeof sfx, "_l%lld%s", (long long)l, d ? "_reverse" : "");
            tn_tensor *w_hh = tn__rnn_param(m, "weight_hh", sfx), *b_hh = tn__rnn_param(m, "bias_hh", sfx), *w_hr = tn__rnn_param(m, "weight_hr", sfx);
            const bool fused = !w_hr && in && in->device == TN_CPU && (in->dtype == TN_F32 || in->dtype == TN_F64);
            const bool fold = fused && b_hh && mode != TN__RNN_GRU;   /* b_hh joins b_ih in the projection */
            tn_tensor *gi = fold ? in : tn_linear(in, tn__rnn_param(m, "weight_ih", sfx), tn__rnn_param(m, "bias_ih", sfx));   /* [L, N, G*H] */
            tn_tensor *h = tn_select(h0, 0, l * D + d), *c = lstm ? tn_select(c0, 0, l * D + d) : NULL;
            if (fold) gi = tn_linear(in, tn__rnn_param(m, "weight_ih", sfx), tn_add(tn__rnn_param(m, "bias_ih", sfx), b_hh));   /* one bias gradient sum */
            if (fused && !lstm) { /* GRU, RNN: the fused recurrence */
                tn_tensor *seq = gi ? tn__rnnseq(mode, gi, h, w_hh, mode == TN__RNN_GRU ? b_hh : NULL, d == 1) : NULL;
                hn[l * D + d] = seq ? tn_select(seq, 0, d ? 0 : L - 1) : NULL;
                ok = (dir[d] = seq) != NULL;
                continue;
            }
            if (fused) { /* the LSTM's fused recurrence */
                tn_tensor *seq = gi ? tn__lstm_seq(gi, h, c, w_hh, d == 1) : NULL;
                hn[l * D + d] = seq ? tn_select(seq, 0, d ? 0 : L - 1) : NULL;
                cn[l * D + d] = seq ? tn_select(seq, 0, L) : NULL;
                ok = (dir[d] = seq ? tn_narrow(seq, 0, 0, L) : NULL) != NULL;
                continue;
            }
            tn__unbind_steps(gi, 0, L, gis);
            for (int64_t s = 0; s < L && h; s++) {
                const int64_t t = d ? L - 1 - s : s;   /* the reverse direction reads the sequence backwards */
                h = tn__rnn_step(mode, gis[t], h, &c, w_hh, b_hh, w_hr);
                steps[t] = h;
            }
            hn[l * D + d] = h;
            cn[l * D + d] = c;
            ok = h && (!lstm || c) && (dir[d] = tn_stack(steps, (int)L)) != NULL;
        }
        y = !ok ? NULL : D == 2 ? tn_cat(dir, 2, .dim = 2) : dir[0];
        if (y && l < nl - 1 && r->dropout > 0 && m->training) y = tn_dropout(y, .p = r->dropout);
        ok = (in = y) != NULL;
    }
    tn_tensor *hN = ok ? tn_stack(hn, (int)(D * nl)) : NULL, *cN = ok && lstm ? tn_stack(cn, (int)(D * nl)) : NULL;
    TN_FREE(steps);
    if (!batched) {
        y = tn_squeeze_dim(y, 1);
        hN = tn_squeeze_dim(hN, 1);
        cN = tn_squeeze_dim(cN, 1);
    } else if (r->batch_first) y = tn_transpose(y, 0, 1);
    if (!hN || (lstm && !cN)) y = NULL;
    if (y && h_n) *h_n = tn_keep(hN);
    if (y && c_n) *c_n = tn_keep(cN);
    return tn__scope_return(y);
}
/* Checks of the RNN forwards, with PyTorch's messages under the layer's name. */
static tn_tensor *tn__rnn_forward(const char *api, tn_module *m, bool lstm, tn_tensor *x, tn_tensor *h0, tn_tensor *c0, tn_tensor **h_n, tn_tensor **c_n) {
    if (h_n) *h_n = NULL;
    if (c_n) *c_n = NULL;
    tn__rnnm *r = tn__as_rnn(m);
    if (!r || r->cell || (r->mode == TN__RNN_LSTM) != lstm)
        return (tn_tensor *)tn__error("%s: expected %s module, got %s", api, lstm ? "an LSTM" : "an RNN or GRU", m ? m->type->name : "NULL");
    TN__CHECK_NULL(x);
    const char *fn = m->type->name;
    if (lstm && !h0 != !c0) return (tn_tensor *)tn__error("%s: give both h0 and c0, or neither (zeros)", fn);
    if (x->ndim != 2 && x->ndim != 3) return (tn_tensor *)tn__error("%s: expected input to be 2-D or 3-D but received %d-D tensor (input %s)", fn, x->ndim, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return NULL;
    const bool batched = x->ndim == 3;
    const int64_t D = r->bidirectional ? 2 : 1, N = batched ? x->shape[r->batch_first ? 0 : 1] : 1;
    const int64_t L = x->shape[batched && r->batch_first ? 1 : 0];
    if (x->shape[x->ndim - 1] != r->in)
        return (tn_tensor *)tn__error("%s: input.size(-1) must be equal to input_size. Expected %lld, got %lld (input %s)", fn, (long long)r->in, (long long)x->shape[x->ndim - 1], TN__SHAPE(x));
    if (L <= 0 || L > INT32_MAX) return (tn_tensor *)tn__error("%s: the sequence length must be positive, got %lld (input %s)", fn, (long long)L, TN__SHAPE(x));
    tn_tensor *const st[2] = {h0, c0};
    for (int k = 0; k < 2; k++) {
        tn_tensor *s = st[k];
        if (!s) continue;
        if (s->ndim != x->ndim) {
            if (lstm) return (tn_tensor *)tn__error("%s: for %s %d-D input, hx and cx should also be %d-D but got (%d-D, %d-D) tensors", fn, batched ? "batched" : "unbatched", x->ndim, x->ndim, h0->ndim, c0->ndim);
            return (tn_tensor *)tn__error("%s: for %s %d-D input, hx should also be %d-D but got %d-D tensor", fn, batched ? "batched" : "unbatched", x->ndim, x->ndim, s->ndim);
        }
        int64_t want[3] = {D * r->layers, N, k ? r->hidden : (r->proj ? r->proj : r->hidden)};
        if (!batched) want[1] = want[2];
        if (memcmp(s->shape, want, (size_t)s->ndim * sizeof(int64_t))) {
            char w[TN__PYTUPLE_CAP];
            tn__pytuple(want, s->ndim, w);
            if (lstm) return (tn_tensor *)tn__error("%s: Expected hidden[%d] size %s, got %s", fn, k, w, TN__SHAPE(s));
            return (tn_tensor *)tn__error("%s: Expected hidden size %s, got %s", fn, w, TN__SHAPE(s));
        }
        if (tn__nn_same(fn, x, s, k ? "cx" : "hx")) return NULL;
    }
    for (int i = 0; i < m->nparams; i++) if (tn__nn_same(fn, x, m->params[i].t, m->params[i].name)) return NULL;
    return TN__AS(fn, tn__rnn_core(r, x, h0, c0, h_n, c_n));
}
TNDEF tn_tensor *tn_nn_rnn_forward(tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor **h_n) {
    return tn__rnn_forward("tn_nn_rnn_forward", m, false, x, h0, NULL, h_n, NULL);
}
TNDEF tn_tensor *tn_nn_lstm_forward(tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor *c0, tn_tensor **h_n, tn_tensor **c_n) {
    return tn__rnn_forward("tn_nn_lstm_forward", m, true, x, h0, c0, h_n, c_n);
}
static tn_tensor *tn__cell_forward(const char *api, tn_module *m, bool lstm, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor **c_out) {
    if (c_out) *c_out = NULL;
    tn__rnnm *r = tn__as_rnn(m);
    if (!r || !r->cell || (r->mode == TN__RNN_LSTM) != lstm)
        return (tn_tensor *)tn__error("%s: expected %s module, got %s", api, lstm ? "an LSTMCell" : "an RNNCell or GRUCell", m ? m->type->name : "NULL");
    TN__CHECK_NULL(x);
    if (lstm && !h != !c) return (tn_tensor *)tn__error("%s: give both h and c, or neither (zeros)", m->type->name);
    return tn__cell(m->type->name, r->mode, x, h, c, tn_module_get(m, "weight_ih"), tn_module_get(m, "weight_hh"), tn_module_get(m, "bias_ih"),
                    tn_module_get(m, "bias_hh"), c_out);
}
TNDEF tn_tensor *tn_nn_rnn_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h) { return tn__cell_forward("tn_nn_rnn_cell_forward", m, false, x, h, NULL, NULL); }
TNDEF tn_tensor *tn_nn_gru_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h) { return tn__cell_forward("tn_nn_gru_cell_forward", m, false, x, h, NULL, NULL); }
TNDEF tn_tensor *tn_nn_lstm_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor **c_out) {
    return tn__cell_forward("tn_nn_lstm_cell_forward", m, true, x, h, c, c_out);
}
/* tn_module_forward: zero initial states, the output only (so the layer fits in a Sequential). */
static tn_tensor *tn__rnn_fwd(tn_module *m, tn_tensor *x) {
    tn__rnnm *r = (tn__rnnm *)m;
    const bool lstm = r->mode == TN__RNN_LSTM;
    if (r->cell) return tn__cell_forward(m->type->name, m, lstm, x, NULL, NULL, NULL);
    return tn__rnn_forward(m->type->name, m, lstm, x, NULL, NULL, NULL, NULL);
}

/* MultiheadAttention */
typedef struct tn__mham { tn_module base; int64_t E, heads, kdim, vdim; double dropout; bool batch_first, add_zero_attn; } tn__mham;
static const tn_module_type tn__mha_type = {"MultiheadAttention", NULL, NULL, NULL};
/* out_proj is a Linear under the class name PyTorch gives it (its repr shows it). */
static const tn_module_type tn__ndq_linear_type = {"NonDynamicallyQuantizableLinear", tn__linear_fwd, NULL, tn__linear_repr};
static tn_module *tn__mha_new(const char *fn, int64_t E, int64_t heads, double dropout, bool bias, bool add_bias_kv, bool add_zero_attn,
                              int64_t kdim, int64_t vdim, bool batch_first) {
    if (E <= 0 || heads <= 0) return (tn_module *)tn__error("%s: embed_dim (%lld) and num_heads (%lld) must be positive", fn, (long long)E, (long long)heads);
    if (E % heads) return (tn_module *)tn__error("%s: embed_dim must be divisible by num_heads (got embed_dim=%lld, num_heads=%lld)", fn, (long long)E, (long long)heads);
    if (kdim <= 0 || vdim <= 0) return (tn_module *)tn__error("%s: kdim (%lld) and vdim (%lld) must be positive", fn, (long long)kdim, (long long)vdim);
    if (!(dropout >= 0 && dropout <= 1)) return (tn_module *)tn__error("%s: dropout probability has to be between 0 and 1, but got %g", fn, dropout);
    tn__mham *a = (tn__mham *)tn_module_new(&tn__mha_type, sizeof(tn__mham));
    if (!a) return NULL;
    a->E = E; a->heads = heads; a->kdim = kdim; a->vdim = vdim; a->dropout = dropout; a->batch_first = batch_first; a->add_zero_attn = add_zero_attn;
    tn_module *m = &a->base;
    /* PyTorch builds out_proj (a Linear: its weight and bias drawn) before _reset_parameters draws the projections */
    tn_module *out = tn_nn_linear(E, E, .bias = bias);
    int failed = !out;
    if (!failed && kdim == E && vdim == E) {
        tn_tensor *w = tn__param(m, "in_proj_weight", TN_SHAPE(3 * E, E));
        failed = !w || tn_init_xavier_uniform_(w);
    } else if (!failed) { /* separate projections, as PyTorch when kdim or vdim differ */
        tn_tensor *wq = tn__param(m, "q_proj_weight", TN_SHAPE(E, E)), *wk = wq ? tn__param(m, "k_proj_weight", TN_SHAPE(E, kdim)) : NULL;
        tn_tensor *wv = wk ? tn__param(m, "v_proj_weight", TN_SHAPE(E, vdim)) : NULL;
        failed = !wv || tn_init_xavier_uniform_(wq) || tn_init_xavier_uniform_(wk) || tn_init_xavier_uniform_(wv);
    }
    if (!failed && bias) {
        tn_tensor *b = tn__param(m, "in_proj_bias", TN_SHAPE(3 * E));
        failed = !b || tn_init_zeros_(b);
    }
    if (!failed && add_bias_kv) {
        tn_tensor *bk = tn__param(m, "bias_k", TN_SHAPE(1, 1, E)), *bv = bk ? tn__param(m, "bias_v", TN_SHAPE(1, 1, E)) : NULL;
        failed = !bv || tn_init_xavier_normal_(bk) || tn_init_xavier_normal_(bv);
    }
    if (!failed) {
        out = tn_module_add(m, "out_proj", out);   /* frees out on failure */
        if (out) out->type = &tn__ndq_linear_type;
        failed = !out || (bias && tn_init_zeros_(tn_module_get(out, "bias")));
    } else if (out) {
        tn_module_free(out);
    }
    return tn__module_or_free(m, failed);
}
TNDEF tn_module *tn_nn_multihead_attention_opts(int64_t E, int64_t heads, tn_multihead_attention_opts o) {
    return tn__mha_new("tn_nn_multihead_attention", E, heads, o.dropout, o.bias, o.add_bias_kv, o.add_zero_attn,
                       o.kdim == TN_NONE ? E : o.kdim, o.vdim == TN_NONE ? E : o.vdim, o.batch_first);
}
TNDEF tn_module *tn_nn_multihead_attention_str(int64_t E, int64_t heads, const char *options) {
    TN__KW_STR(tn_multihead_attention_opts, mha, "tn_nn_multihead_attention", options, tn_nn_multihead_attention_opts(E, heads, o));
}
/* A bool mask (True = masked out) as an additive float mask: -inf where True, else 0. */
static tn_tensor *tn__mask_to_float(tn_tensor *mask, tn_dtype dtype) {
    if (!mask || mask->dtype != TN_BOOL) return mask;
    return tn_masked_fill(tn__own(tn__full_on(mask->shape, mask->ndim, 0, dtype, mask->device)), mask, -INFINITY);
}
/* Whether a 2-d [L, S] mask is exactly the causal one (bool: True above the diagonal;
   float: -inf above, 0 elsewhere), as PyTorch's _detect_is_causal_mask: the fused kernel
   then skips the masked key blocks instead of reading the mask. */
static bool tn__is_causal_mask(tn_tensor *mask, int64_t L, int64_t S) {
    if (!mask || mask->ndim != 2 || mask->shape[0] != L || mask->shape[1] != S || mask->device != TN_CPU) return false;
    if (mask->dtype != TN_BOOL && mask->dtype != TN_F32 && mask->dtype != TN_F64) return false;
    const char *p = (const char *)tn_data_ptr(mask);
    const int64_t es = (int64_t)tn_dtype_size(mask->dtype);
    for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < S; j++) {
            const char *e = p + (i * mask->strides[0] + j * mask->strides[1]) * es;
            const double x = mask->dtype == TN_BOOL ? (*(const bool *)e ? -INFINITY : 0) : mask->dtype == TN_F32 ? *(const float *)e : *(const double *)e;
            if (x != (j > i ? -INFINITY : 0)) return false;
        }
    return true;
}
/* MultiheadAttention without weights returned and without dropout, on the fused attention
   (src/nn/attention.c): self-attention projects q, k and v in one GEMM; the heads are views
   [N, H, L, hd] of the projections (no copies); a causal mask becomes the kernel's flag. x
   is [L, N, E], or [N, L, E] with bf (batch_first). */
static tn_tensor *tn__mha_fused(tn__mham *a, tn_tensor *query, tn_tensor *key, tn_tensor *value, tn_tensor *kpm, tn_tensor *mask, bool causal) {
    tn_module *m = &a->base;
    const int64_t E = a->E, H = a->heads, hd = E / H;
    const bool batched = query->ndim == 3, self = query == key && key == value, bf = batched && a->batch_first;
    tn_scope_begin();
    if (!batched) { query = tn_unsqueeze(query, 1); key = self ? query : tn_unsqueeze(key, 1); value = self ? query : tn_unsqueeze(value, 1); }
    const int64_t A = query->shape[0], Bd = query->shape[1], N = bf ? A : Bd, L = bf ? Bd : A, S = key->shape[bf ? 1 : 0];
    const int64_t perm[4] = {bf ? 0 : 1, 2, bf ? 1 : 0, 3};   /* [A, B, H, hd] -> [N, H, seq, hd] */
    tn_tensor *W = tn_module_get(m, "in_proj_weight"), *b = tn_module_get(m, "in_proj_bias"), *q = NULL, *k = NULL, *v = NULL, *qkv = NULL;
    bool packed = false;   /* the attention node takes qkv itself (tn__sdpa_fused_qkv): its gradient one buffer */
    if (W && self) { /* one GEMM for the three projections */
        qkv = tn_reshape(tn_linear(query, W, b), TN_SHAPE(A, Bd, 3, H, hd));
        /* recording for backward, and no trace running (the tracer records the views); on the
           CPU float32/float64, its kernels' dtypes (under autocast the projections may be half),
           on a device with an attention entry the half dtypes too */
        const bool dt_ok = qkv && (qkv->dtype == TN_F32 || qkv->dtype == TN_F64 ||
                                   (qkv->device != TN_CPU && (qkv->dtype == TN_F16 || qkv->dtype == TN_BF16)));
        packed = dt_ok && (qkv->device == TN_CPU || tn__backend(qkv->device)->attention) && tn_is_grad_enabled() && qkv->requires_grad && !tn__tracing;
        if (!packed) { q = tn_select(qkv, 2, 0); k = tn_select(qkv, 2, 1); v = tn_select(qkv, 2, 2); }
    } else {
        tn_tensor *wq = W ? tn_narrow(W, 0, 0, E) : tn_module_get(m, "q_proj_weight"), *wk = W ? tn_narrow(W, 0, E, E) : tn_module_get(m, "k_proj_weight");
        tn_tensor *wv = W ? tn_narrow(W, 0, 2 * E, E) : tn_module_get(m, "v_proj_weight");
        q = tn_reshape(tn_linear(query, wq, b ? tn_narrow(b, 0, 0, E) : NULL), TN_SHAPE(A, Bd, H, hd));
        k = tn_reshape(tn_linear(key, wk, b ? tn_narrow(b, 0, E, E) : NULL), TN_SHAPE(key->shape[0], key->shape[1], H, hd));
        v = tn_reshape(tn_linear(value, wv, b ? tn_narrow(b, 0, 2 * E, E) : NULL), TN_SHAPE(value->shape[0], value->shape[1], H, hd));
    }
    if (!packed) { q = tn_permute(q, perm, 4); k = tn_permute(k, perm, 4); v = tn_permute(v, perm, 4); }
    /* masks: attn_mask [L, S] or [N*H, L, S] (bool: True = masked out), key padding [N, S] */
    tn_tensor *am = NULL;
    /* is_causal with a mask and no padding mask: PyTorch's F.multi_head_attention_forward
       trusts the hint and drops the mask; a device's mask is taken on trust likewise (reading
       it back would wait on the GPU), a CPU one is checked */
    if (mask && (tn__is_causal_mask(mask, L, S) || (causal && !kpm && mask->device != TN_CPU))) causal = true;
    else if (mask) {
        causal = false;
        am = mask->ndim == 3 ? tn_reshape(mask, TN_SHAPE(N, H, L, S)) : mask;
    }
    tn_tensor *kp = kpm ? tn_reshape(kpm, TN_SHAPE(N, 1, 1, S)) : NULL;
    if (am && kp) { am = tn_add(tn__mask_to_float(am, query->dtype), tn__mask_to_float(kp, query->dtype)); kp = NULL; }
    if (!am) am = kp;
    if (am && am->dtype == TN_BOOL) am = tn_logical_not(am);   /* the kernel's bool masks say where to attend */
    tn_tensor *o = packed ? tn__sdpa_fused_qkv(qkv, perm, am, causal, 1 / sqrt((double)hd))
                 : q && k && v ? tn__sdpa_fused(q, k, v, am, causal, 1 / sqrt((double)hd)) : NULL;   /* [N, H, L, hd] */
    const int64_t back[4] = {bf ? 0 : 2, bf ? 2 : 0, 1, 3};
    o = tn_reshape(tn_permute(o, back, 4), TN_SHAPE(A * Bd, E));
    o = tn_reshape(tn_module_forward(tn_module_child(m, "out_proj"), o), TN_SHAPE(A, Bd, E));
    if (!batched) o = tn_squeeze_dim(o, 1);
    return tn__scope_return(o);
}
/* F.multi_head_attention_forward on checked inputs. */
static tn_tensor *tn__mha_core(tn__mham *a, tn_tensor *query, tn_tensor *key, tn_tensor *value, tn_tensor *kpm, tn_tensor *mask,
                               bool need_weights, bool average, bool causal, tn_tensor **weights) {
    tn_module *m = &a->base;
    const int64_t E = a->E, H = a->heads, hd = E / H;
    const bool batched = query->ndim == 3;
    tn_scope_begin();
    if (!batched) { /* one batch element in the middle dim, squeezed at the end */
        query = tn_unsqueeze(query, 1); key = tn_unsqueeze(key, 1); value = tn_unsqueeze(value, 1);
        kpm = kpm ? tn_unsqueeze(kpm, 0) : NULL;
    } else if (a->batch_first) {
        query = tn_transpose(query, 0, 1); key = tn_transpose(key, 0, 1); value = tn_transpose(value, 0, 1);
    }
    if (!query || !key || !value) { tn_scope_end(); return NULL; }
    const int64_t L = query->shape[0], N = query->shape[1], S = key->shape[0];
    const tn_dtype dt = query->dtype;
    tn_tensor *W = tn_module_get(m, "in_proj_weight"), *b = tn_module_get(m, "in_proj_bias");
    tn_tensor *wq = W ? tn_narrow(W, 0, 0, E) : tn_module_get(m, "q_proj_weight"), *wk = W ? tn_narrow(W, 0, E, E) : tn_module_get(m, "k_proj_weight");
    tn_tensor *wv = W ? tn_narrow(W, 0, 2 * E, E) : tn_module_get(m, "v_proj_weight");
    tn_tensor *q = tn_linear(query, wq, b ? tn_narrow(b, 0, 0, E) : NULL);
    tn_tensor *k = tn_linear(key, wk, b ? tn_narrow(b, 0, E, E) : NULL);
    tn_tensor *v = tn_linear(value, wv, b ? tn_narrow(b, 0, 2 * E, E) : NULL);
    /* additive masks: attn_mask [1 or N*H, L, S], key padding [N, S] */
    tn_tensor *am = mask ? tn__mask_to_float(mask, dt) : causal ? tn__triu(tn__own(tn__full_on(TN_SHAPE(L, S), -INFINITY, dt, q->device)), 1) : NULL;
    if (am && am->ndim == 2) am = tn_unsqueeze(am, 0);
    tn_tensor *kp = tn__mask_to_float(kpm, dt);
    tn_tensor *bk = tn_module_get(m, "bias_k"), *bv = tn_module_get(m, "bias_v");
    const int64_t pad[2] = {0, 1};
    if (bk && bv) { /* add_bias_kv: one more key and value, never masked */
        tn_tensor *kk[2] = {k, tn_repeat(bk, TN_SHAPE(1, N, 1))}, *vv[2] = {v, tn_repeat(bv, TN_SHAPE(1, N, 1))};
        k = tn_cat(kk, 2);
        v = tn_cat(vv, 2);
        am = am ? tn_pad(am, pad, 2) : NULL;
        kp = kp ? tn_pad(kp, pad, 2) : NULL;
    }
    /* heads: [L, N, E] -> [N*H, L, hd] */
    const int64_t Sk = k ? k->shape[0] : 0;
    q = tn_transpose(tn_reshape(q, TN_SHAPE(L, N * H, hd)), 0, 1);
    k = tn_transpose(tn_reshape(k, TN_SHAPE(Sk, N * H, hd)), 0, 1);
    v = tn_transpose(tn_reshape(v, TN_SHAPE(Sk, N * H, hd)), 0, 1);
    if (a->add_zero_attn) { /* a zero key and value at the end */
        tn_tensor *z = tn__own(tn__full_on(TN_SHAPE(N * H, 1, hd), 0, dt, k->device)), *kk[2] = {k, z}, *vv[2] = {v, z};
        k = tn_cat(kk, 2, .dim = 1);
        v = tn_cat(vv, 2, .dim = 1);
        am = am ? tn_pad(am, pad, 2) : NULL;
        kp = kp ? tn_pad(kp, pad, 2) : NULL;
    }
    const int64_t S2 = k ? k->shape[1] : 0;
    if (kp) kp = tn_reshape(tn_expand(tn_reshape(kp, TN_SHAPE(N, 1, 1, S2)), TN_SHAPE(N, H, 1, S2)), TN_SHAPE(N * H, 1, S2));
    tn_tensor *bias = am && kp ? tn_add(am, kp) : am ? am : kp;
    tn_tensor *att = tn_matmul(tn_div_scalar(q, sqrt((double)hd)), tn_transpose(k, 1, 2));   /* [N*H, L, S2] */
    if (bias) att = tn_add(att, bias);
    att = tn_softmax(att, -1);
    if (a->dropout > 0 && m->training) att = tn_dropout(att, .p = a->dropout);
    tn_tensor *o = tn_reshape(tn_transpose(tn_matmul(att, v), 0, 1), TN_SHAPE(L * N, E));
    o = tn_reshape(tn_module_forward(tn_module_child(m, "out_proj"), o), TN_SHAPE(L, N, E));
    tn_tensor *w = NULL;
    if (need_weights) {
        w = tn_reshape(att, TN_SHAPE(N, H, L, S2));
        if (average) w = tn_div_scalar(tn_sum_dims(w, TN_DIMS(1)), (double)H);
        if (!batched) w = tn_squeeze_dim(w, 0);
        if (!w) o = NULL;
    }
    if (!batched) o = tn_squeeze_dim(o, 1);
    else if (a->batch_first) o = tn_transpose(o, 0, 1);
    if (o && w && weights) *weights = tn_keep(w);
    return tn__scope_return(o);
}
static int tn__mha_check(const char *fn, tn__mham *a, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *kpm, tn_tensor *mask) {
    if (q->ndim != 2 && q->ndim != 3) return TN__FAIL_INT("%s: query should be unbatched 2D or batched 3D tensor but received %d-D query tensor %s", fn, q->ndim, TN__SHAPE(q));
    const bool batched = q->ndim == 3;
    if (k->ndim != q->ndim || v->ndim != q->ndim)
        return TN__FAIL_INT("%s: for %s (%d-D) query, expected key and value to be %d-D but found %d-D and %d-D tensors respectively", fn,
                            batched ? "batched" : "unbatched", q->ndim, q->ndim, k->ndim, v->ndim);
    if (tn__nn_check(fn, q, "query") || tn__nn_same(fn, q, k, "key") || tn__nn_same(fn, q, v, "value")) return -1;
    const int bd = a->batch_first ? 0 : 1, sd = batched ? 1 - bd : 0;
    const int64_t N = batched ? q->shape[bd] : 1, L = q->shape[sd], S = k->shape[sd];
    if (q->shape[q->ndim - 1] != a->E) return TN__FAIL_INT("%s: was expecting embedding dimension of %lld, but got %lld (query %s)", fn, (long long)a->E, (long long)q->shape[q->ndim - 1], TN__SHAPE(q));
    if (k->shape[k->ndim - 1] != a->kdim || v->shape[v->ndim - 1] != a->vdim)
        return TN__FAIL_INT("%s: key %s and value %s must have kdim=%lld and vdim=%lld features", fn, TN__SHAPE(k), TN__SHAPE(v), (long long)a->kdim, (long long)a->vdim);
    if (v->shape[sd] != S || (batched && (k->shape[bd] != N || v->shape[bd] != N)))
        return TN__FAIL_INT("%s: query %s, key %s and value %s must agree in batch size, and key and value in sequence length%s", fn, TN__SHAPE(q), TN__SHAPE(k), TN__SHAPE(v),
                            a->batch_first ? " (batch_first)" : "");
    if (kpm) {
        if (kpm->dtype != TN_BOOL && !tn_dtype_is_floating(kpm->dtype)) return TN__FAIL_INT("%s: only bool and floating types of key_padding_mask are supported, got %s", fn, tn_dtype_name(kpm->dtype));
        if (kpm->dtype != TN_BOOL && tn__nn_same(fn, q, kpm, "key_padding_mask")) return -1;
        if (kpm->ndim != (batched ? 2 : 1) || (batched && kpm->shape[0] != N) || kpm->shape[kpm->ndim - 1] != S) {
            int64_t want[2] = {N, S};
            return TN__FAIL_INT("%s: expecting key_padding_mask shape of %s, but got %s", fn, batched ? tn__shape_str(want, 2) : tn__shape_str(want + 1, 1), TN__SHAPE(kpm));
        }
    }
    if (mask) {
        if (mask->dtype != TN_BOOL && !tn_dtype_is_floating(mask->dtype)) return TN__FAIL_INT("%s: only float and bool types are supported for attn_mask, not %s", fn, tn_dtype_name(mask->dtype));
        if (mask->dtype != TN_BOOL && tn__nn_same(fn, q, mask, "attn_mask")) return -1;
        int64_t want[3] = {N * a->heads, L, S};
        if (mask->ndim == 2 && (mask->shape[0] != L || mask->shape[1] != S))
            return TN__FAIL_INT("%s: The shape of the 2D attn_mask is %s, but should be %s.", fn, TN__SHAPE(mask), tn__shape_str(want + 1, 2));
        if (mask->ndim == 3 && memcmp(mask->shape, want, sizeof want))
            return TN__FAIL_INT("%s: The shape of the 3D attn_mask is %s, but should be %s.", fn, TN__SHAPE(mask), tn__shape_str(want, 3));
        if (mask->ndim != 2 && mask->ndim != 3) return TN__FAIL_INT("%s: attn_mask's dimension %d is not supported (attn_mask %s)", fn, mask->ndim, TN__SHAPE(mask));
    }
    tn_module *op = tn_module_child(&a->base, "out_proj");
    for (int i = 0; i < a->base.nparams; i++) if (tn__nn_same(fn, q, a->base.params[i].t, a->base.params[i].name)) return -1;
    for (int i = 0; op && i < op->nparams; i++) if (tn__nn_same(fn, q, op->params[i].t, "out_proj's parameters")) return -1;
    return 0;
}
TNDEF tn_tensor *tn_nn_mha_forward_opts(tn_module *m, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor **attn_weights, tn_mha_forward_opts o) {
    const char *fn = "MultiheadAttention";
    tn_tensor *const key_padding_mask = o.key_padding_mask, *const attn_mask = o.attn_mask;
    const bool need_weights = o.need_weights, average_attn_weights = o.average_attn_weights, is_causal = o.is_causal;
    if (attn_weights) *attn_weights = NULL;
    if (!m || m->type != &tn__mha_type) return (tn_tensor *)tn__error("tn_nn_mha_forward: expected a MultiheadAttention module, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(q, k, v);
    tn__mham *a = (tn__mham *)m;
    if (tn__mha_check(fn, a, q, k, v, key_padding_mask, attn_mask)) return NULL;
    const bool fused = !need_weights && !(a->dropout > 0 && m->training) && !a->add_zero_attn && !tn_module_get(m, "bias_k") &&
                       (q->device == TN_CPU || tn__backend(q->device)->attention) && (q->dtype == TN_F32 || q->dtype == TN_F64) && tn_numel(q) && tn_numel(k) &&
                       (!attn_mask || attn_mask->device == q->device) && (!key_padding_mask || key_padding_mask->device == q->device) &&
                       !(tn_is_grad_enabled() && ((attn_mask && attn_mask->requires_grad) || (key_padding_mask && key_padding_mask->requires_grad)));
    if (fused) return TN__AS(fn, tn__mha_fused(a, q, k, v, key_padding_mask, attn_mask, is_causal));
    return TN__AS(fn, tn__mha_core(a, q, k, v, key_padding_mask, attn_mask, need_weights, average_attn_weights, is_causal, attn_weights));
}
static tn_tensor *tn__square_mask(int64_t sz, tn_dtype dtype) {
    tn_scope_begin();
    return tn__scope_return(tn__triu(tn_full(TN_SHAPE(sz, sz), -INFINITY, dtype), 1));
}
TNDEF tn_tensor *tn_nn_generate_square_subsequent_mask(int64_t sz, tn_dtype dtype) {
    const char *fn = "tn_nn_generate_square_subsequent_mask";
    if (sz < 0) return (tn_tensor *)tn__error("%s: sz must be non-negative, got %lld", fn, (long long)sz);
    if (!tn_dtype_is_floating(dtype)) return (tn_tensor *)tn__error("%s: the mask holds -inf: dtype must be floating, got %s", fn, tn_dtype_name(dtype));
    return TN__AS(fn, tn__square_mask(sz, dtype));
}

/* TransformerEncoderLayer, TransformerDecoderLayer */
typedef struct tn__tlayer { tn_module base; bool decoder, norm_first, gelu; } tn__tlayer;
static tn_tensor *tn__enc_layer_fwd(tn_module *m, tn_tensor *x) { return tn_nn_transformer_encoder_layer_forward(m, x); }
static const tn_module_type tn__enc_layer_type = {"TransformerEncoderLayer", tn__enc_layer_fwd, NULL, NULL};
static const tn_module_type tn__dec_layer_type = {"TransformerDecoderLayer", NULL, NULL, NULL};
static tn_module *tn__tlayer_new(const char *fn, bool decoder, int64_t d, int64_t nhead, tn_transformer_layer_opts o) {
    const int64_t dff = o.dim_feedforward;
    const double p = o.dropout;
    const bool bf = o.batch_first, nf = o.norm_first, bias = o.bias;
    const int act = o.activation;
    if (act != TN_ACTIVATION_RELU && act != TN_ACTIVATION_GELU) return (tn_module *)tn__error("%s: activation %d is not TN_ACTIVATION_RELU or TN_ACTIVATION_GELU", fn, act);
    if (dff <= 0) return (tn_module *)tn__error("%s: dim_feedforward must be positive, got %lld", fn, (long long)dff);
    if (!(p >= 0 && p <= 1)) return (tn_module *)tn__error("%s: dropout probability has to be between 0 and 1, but got %g", fn, p);
    tn__tlayer *t = (tn__tlayer *)tn_module_new(decoder ? &tn__dec_layer_type : &tn__enc_layer_type, sizeof(tn__tlayer));
    if (!t) return NULL;
    t->decoder = decoder; t->norm_first = nf; t->gelu = act == 1;
    tn_module *m = &t->base;
    tn_layer_norm_module_opts ln = TN_DEFAULTS(tn_layer_norm_module_opts);
    ln.eps = o.layer_norm_eps;
    ln.bias = bias;
    const int64_t ds[1] = {d};
    /* PyTorch's registration order (the state dict follows it) */
    bool ok = tn_module_add(m, "self_attn", tn__mha_new(fn, d, nhead, p, bias, false, false, d, d, bf)) &&
              (!decoder || tn_module_add(m, "multihead_attn", tn__mha_new(fn, d, nhead, p, bias, false, false, d, d, bf))) &&
              tn_module_add(m, "linear1", tn_nn_linear(d, dff, .bias = bias)) && tn_module_add(m, "dropout", tn_nn_dropout(.p = p)) &&
              tn_module_add(m, "linear2", tn_nn_linear(dff, d, .bias = bias)) && tn_module_add(m, "norm1", tn_nn_layer_norm_opts(ds, 1, ln)) &&
              tn_module_add(m, "norm2", tn_nn_layer_norm_opts(ds, 1, ln)) && (!decoder || tn_module_add(m, "norm3", tn_nn_layer_norm_opts(ds, 1, ln))) &&
              tn_module_add(m, "dropout1", tn_nn_dropout(.p = p)) && tn_module_add(m, "dropout2", tn_nn_dropout(.p = p)) &&
              (!decoder || tn_module_add(m, "dropout3", tn_nn_dropout(.p = p)));
    return tn__module_or_free(m, !ok);
}
TNDEF tn_module *tn_nn_transformer_encoder_layer_opts(int64_t d_model, int64_t nhead, tn_transformer_layer_opts o) {
    return tn__tlayer_new("tn_nn_transformer_encoder_layer", false, d_model, nhead, o);
}
TNDEF tn_module *tn_nn_transformer_decoder_layer_opts(int64_t d_model, int64_t nhead, tn_transformer_layer_opts o) {
    return tn__tlayer_new("tn_nn_transformer_decoder_layer", true, d_model, nhead, o);
}
TNDEF tn_module *tn_nn_transformer_encoder_layer_str(int64_t d_model, int64_t nhead, const char *options) {
    TN__KW_STR(tn_transformer_layer_opts, transformer_layer, "tn_nn_transformer_encoder_layer", options, tn_nn_transformer_encoder_layer_opts(d_model, nhead, o));
}
TNDEF tn_module *tn_nn_transformer_decoder_layer_str(int64_t d_model, int64_t nhead, const char *options) {
    TN__KW_STR(tn_transformer_layer_opts, transformer_layer, "tn_nn_transformer_decoder_layer", options, tn_nn_transformer_decoder_layer_opts(d_model, nhead, o));
}
static tn_tensor *tn__child_fwd(tn_module *m, const char *child, tn_tensor *x) { return tn_module_forward(tn_module_child(m, child), x); }
/* dropout(attention(x, mem, mem)); mem NULL: self-attention */
static tn_tensor *tn__tlayer_attn(tn_module *m, const char *attn, const char *drop, tn_tensor *x, tn_tensor *mem, tn_tensor *mask, tn_tensor *kpm, bool causal) {
    if (!mem) mem = x;
    return tn__child_fwd(m, drop, tn_nn_mha_forward(tn_module_child(m, attn), x, mem, mem, NULL, .key_padding_mask = kpm, .need_weights = false,
                                                    .attn_mask = mask, .is_causal = causal));
}
/* dropout_last(linear2(dropout(activation(linear1(x))))) */
static tn_tensor *tn__tlayer_ff(tn__tlayer *t, tn_tensor *x) {
    tn_module *m = &t->base;
    tn_tensor *y = tn__child_fwd(m, "linear1", x);
    y = t->gelu ? tn_gelu(y) : tn_relu(y);
    y = tn__child_fwd(m, "linear2", tn__child_fwd(m, "dropout", y));
    return tn__child_fwd(m, t->decoder ? "dropout3" : "dropout2", y);
}
/* Both layers: x + block(norm(x)) with norm_first, else norm(x + block(x)), per block. */
static tn_tensor *tn__tlayer_core(tn__tlayer *t, tn_tensor *x, tn_tensor *mem, tn_tensor *mask, tn_tensor *mem_mask, tn_tensor *kpm,
                                  tn_tensor *mem_kpm, bool causal) {
    tn_module *m = &t->base;
    const char *ff_norm = t->decoder ? "norm3" : "norm2";
    tn_scope_begin();
    if (t->norm_first) {
        x = tn_add(x, tn__tlayer_attn(m, "self_attn", "dropout1", tn__child_fwd(m, "norm1", x), NULL, mask, kpm, causal));
        if (t->decoder) x = tn_add(x, tn__tlayer_attn(m, "multihead_attn", "dropout2", tn__child_fwd(m, "norm2", x), mem, mem_mask, mem_kpm, false));
        x = tn_add(x, tn__tlayer_ff(t, tn__child_fwd(m, ff_norm, x)));
    } else {
        x = tn__child_fwd(m, "norm1", tn_add(x, tn__tlayer_attn(m, "self_attn", "dropout1", x, NULL, mask, kpm, causal)));
        if (t->decoder) x = tn__child_fwd(m, "norm2", tn_add(x, tn__tlayer_attn(m, "multihead_attn", "dropout2", x, mem, mem_mask, mem_kpm, false)));
        x = tn__child_fwd(m, ff_norm, tn_add(x, tn__tlayer_ff(t, x)));
    }
    return tn__scope_return(x);
}
TNDEF tn_tensor *tn_nn_transformer_encoder_layer_forward_opts(tn_module *m, tn_tensor *src, tn_encoder_layer_forward_opts o) {
    if (!m || m->type != &tn__enc_layer_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_encoder_layer_forward: expected a TransformerEncoderLayer, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(src);
    return TN__AS("TransformerEncoderLayer", tn__tlayer_core((tn__tlayer *)m, src, NULL, o.src_mask, NULL, o.src_key_padding_mask, NULL, o.is_causal));
}
TNDEF tn_tensor *tn_nn_transformer_decoder_layer_forward_opts(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_decoder_layer_forward_opts o) {
    if (!m || m->type != &tn__dec_layer_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_decoder_layer_forward: expected a TransformerDecoderLayer, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(tgt, memory);
    return TN__AS("TransformerDecoderLayer", tn__tlayer_core((tn__tlayer *)m, tgt, memory, o.tgt_mask, o.memory_mask, o.tgt_key_padding_mask,
                                                             o.memory_key_padding_mask, o.tgt_is_causal));
}

/* TransformerEncoder, TransformerDecoder: deep copies of one layer. copy.deepcopy needs each
   module's size, which tn_module does not record: the library's layer types are listed here. */
typedef struct tn__tstack { tn_module base; int64_t num_layers; } tn__tstack;
static size_t tn__module_size(const tn_module *m) {
    static const struct { const tn_module_type *type; size_t size; } sizes[] = {
        {&tn__linear_type, sizeof(tn__linear)}, {&tn__bilinear_type, sizeof(tn__linear)}, {&tn__ndq_linear_type, sizeof(tn__linear)},
        {&tn__conv1d_type, sizeof(tn__convm)}, {&tn__conv2d_type, sizeof(tn__convm)}, {&tn__convt2d_type, sizeof(tn__convm)},
        {&tn__maxpool1d_type, sizeof(tn__poolm)}, {&tn__maxpool2d_type, sizeof(tn__poolm)}, {&tn__avgpool1d_type, sizeof(tn__poolm)},
        {&tn__avgpool2d_type, sizeof(tn__poolm)}, {&tn__adaptive_avg_type, sizeof(tn__poolm)}, {&tn__adaptive_max_type, sizeof(tn__poolm)},
        {&tn__bn1d_type, sizeof(tn__normm)}, {&tn__bn2d_type, sizeof(tn__normm)}, {&tn__ln_type, sizeof(tn__normm)}, {&tn__gn_type, sizeof(tn__normm)},
        {&tn__dropout_type, sizeof(tn__miscm)}, {&tn__dropout2d_type, sizeof(tn__miscm)}, {&tn__embedding_type, sizeof(tn__miscm)},
        {&tn__flatten_type, sizeof(tn__miscm)}, {&tn__unflatten_type, sizeof(tn__miscm)},
        {&tn__identity_type, sizeof(tn_module)}, {&tn__sequential_type, sizeof(tn_module)}, {&tn__module_list_type, sizeof(tn_module)},
        {&tn__module_dict_type, sizeof(tn_module)},
        {&tn__rnn_type, sizeof(tn__rnnm)}, {&tn__lstm_type, sizeof(tn__rnnm)}, {&tn__gru_type, sizeof(tn__rnnm)}, {&tn__rnn_cell_type, sizeof(tn__rnnm)},
        {&tn__lstm_cell_type, sizeof(tn__rnnm)}, {&tn__gru_cell_type, sizeof(tn__rnnm)}, {&tn__mha_type, sizeof(tn__mham)},
        {&tn__enc_layer_type, sizeof(tn__tlayer)}, {&tn__dec_layer_type, sizeof(tn__tlayer)}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) if (sizes[i].type == m->type) return sizes[i].size;
    for (int i = 0; i < TN__NUM_ACTS; i++) if (m->type == &tn__act_types[i]) return sizeof(tn__actm);
    return 0;
}
/* copy.deepcopy: the struct's own fields, cloned parameters (requires_grad kept) and
   buffers, copied children. */
static tn_module *tn__module_deepcopy(const char *fn, const tn_module *m) {
    const size_t size = tn__module_size(m);
    if (!size) return (tn_module *)tn__error("%s: cannot copy a %s module (deep copies know the library's own layer types only)", fn, m->type->name);
    tn_module *c = tn_module_new(m->type, size);
    if (!c) return NULL;
    memcpy((char *)c + sizeof(tn_module), (const char *)m + sizeof(tn_module), size - sizeof(tn_module));
    c->training = m->training;
    int failed = 0;
    tn_scope_begin();
    tn_no_grad_begin();
    for (int i = 0; !failed && i < m->nparams; i++) {
        tn_tensor *t = tn_clone(m->params[i].t);
        failed = !t || !tn_module_register_parameter(c, m->params[i].name, t);
        if (!failed) t->requires_grad = m->params[i].t->requires_grad;
    }
    for (int i = 0; !failed && i < m->nbuffers; i++)
        failed = !tn_module_register_buffer(c, m->buffers[i].name, tn_clone(m->buffers[i].t), .persistent = m->buffers[i].persistent);
    tn_no_grad_end();
    tn_scope_end();
    for (int i = 0; !failed && i < m->nchildren; i++) failed = !tn_module_add(c, m->children[i].name, tn__module_deepcopy(fn, m->children[i].m));
    return tn__module_or_free(c, failed);
}
static tn_tensor *tn__encoder_fwd(tn_module *m, tn_tensor *x) { return tn_nn_transformer_encoder_forward(m, x); }
static const tn_module_type tn__encoder_type = {"TransformerEncoder", tn__encoder_fwd, NULL, NULL};
static const tn_module_type tn__decoder_type = {"TransformerDecoder", NULL, NULL, NULL};
static tn_module *tn__tstack_new(const char *fn, const tn_module_type *type, const tn_module_type *layer_type, tn_module *layer, int64_t n, tn_module *norm) {
    if (!layer) { /* a layer constructor failed: keep its message */
        tn_module_free(norm);
        if (!tn_last_error()[0]) tn__error("%s: the layer is NULL", fn);
        return NULL;
    }
    if (layer->type != layer_type || n < 0) {
        if (n < 0) tn__error("%s: num_layers must be non-negative, got %lld", fn, (long long)n);
        else tn__error("%s: expected a %s, got %s", fn, layer_type->name, layer->type->name);
        tn_module_free(layer);
        tn_module_free(norm);
        return NULL;
    }
    tn__tstack *s = (tn__tstack *)tn_module_new(type, sizeof(tn__tstack));
    tn_module *list = s ? tn_module_add(&s->base, "layers", tn_nn_module_list()) : NULL;
    bool ok = list != NULL;
    for (int64_t i = 0; ok && i < n; i++) ok = tn_nn_sequential_append(list, tn__module_deepcopy(fn, layer)) != NULL;
    tn_module_free(layer);
    if (!ok) {
        tn_module_free(norm);
        tn_module_free(s ? &s->base : NULL);
        return NULL;
    }
    s->num_layers = n;
    if (norm && !tn_module_add(&s->base, "norm", norm)) { tn_module_free(&s->base); return NULL; }   /* add freed norm */
    return &s->base;
}
TNDEF tn_module *tn_nn_transformer_encoder_opts(tn_module *encoder_layer, int64_t num_layers, tn_transformer_encoder_opts o) {
    return tn__tstack_new("tn_nn_transformer_encoder", &tn__encoder_type, &tn__enc_layer_type, encoder_layer, num_layers, o.norm);
}
TNDEF tn_module *tn_nn_transformer_decoder_opts(tn_module *decoder_layer, int64_t num_layers, tn_transformer_stack_opts o) {
    return tn__tstack_new("tn_nn_transformer_decoder", &tn__decoder_type, &tn__dec_layer_type, decoder_layer, num_layers, o.norm);
}
/* The text cannot give norm, so these take the layer over as the _opts forms do, freeing it
   on bad text too. */
static tn_module *tn__tstack_str(const char *fn, tn_module *layer, int64_t n, const char *options, bool decoder) {
    if (decoder) {
        tn_transformer_stack_opts o = TN_DEFAULTS(tn_transformer_stack_opts);
        if (tn__kw_parse(fn, options, tn__kw_transformer_stack, TN__KW_N(tn__kw_transformer_stack), &o, NULL)) { tn_module_free(layer); return NULL; }
        return tn_nn_transformer_decoder_opts(layer, n, o);
    }
    tn_transformer_encoder_opts o = TN_DEFAULTS(tn_transformer_encoder_opts);
    if (tn__kw_parse(fn, options, tn__kw_transformer_encoder, TN__KW_N(tn__kw_transformer_encoder), &o, NULL)) { tn_module_free(layer); return NULL; }
    return tn_nn_transformer_encoder_opts(layer, n, o);
}
TNDEF tn_module *tn_nn_transformer_encoder_str(tn_module *encoder_layer, int64_t num_layers, const char *options) {
    return tn__tstack_str("tn_nn_transformer_encoder", encoder_layer, num_layers, options, false);
}
TNDEF tn_module *tn_nn_transformer_decoder_str(tn_module *decoder_layer, int64_t num_layers, const char *options) {
    return tn__tstack_str("tn_nn_transformer_decoder", decoder_layer, num_layers, options, true);
}
static tn_tensor *tn__tstack_core(tn_module *m, bool decoder, tn_tensor *x, tn_tensor *mem, tn_tensor *mask, tn_tensor *mem_mask, tn_tensor *kpm,
                                  tn_tensor *mem_kpm, bool causal) {
    tn_module *layers = tn_module_child(m, "layers"), *norm = tn_module_child(m, "norm");
    tn_tensor *src = x;
    tn_scope_begin();
    for (int i = 0; x && i < tn_module_num_children(layers); i++) {
        tn_module *l = tn_module_child_at(layers, i, NULL);
        x = decoder ? tn_nn_transformer_decoder_layer_forward(l, x, mem, .tgt_mask = mask, .memory_mask = mem_mask, .tgt_key_padding_mask = kpm,
                                                              .memory_key_padding_mask = mem_kpm, .tgt_is_causal = causal)
                    : tn_nn_transformer_encoder_layer_forward(l, x, .src_mask = mask, .src_key_padding_mask = kpm, .is_causal = causal);
    }
    if (norm) x = tn_module_forward(norm, x);
    if (x == src) x = tn__own(tn_retain(x));   /* no layers and no norm: the input itself, a new reference */
    return tn__scope_return(x);
}
/* is_causal None (-1) as False: a causal mask is detected as one where it is used (tn__is_causal_mask) */
TNDEF tn_tensor *tn_nn_transformer_encoder_forward_opts(tn_module *m, tn_tensor *src, tn_encoder_forward_opts o) {
    if (!m || m->type != &tn__encoder_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_encoder_forward: expected a TransformerEncoder, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(src);
    return TN__AS("TransformerEncoder", tn__tstack_core(m, false, src, NULL, o.mask, NULL, o.src_key_padding_mask, NULL, o.is_causal == 1));
}
TNDEF tn_tensor *tn_nn_transformer_decoder_forward_opts(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_decoder_forward_opts o) {
    if (!m || m->type != &tn__decoder_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_decoder_forward: expected a TransformerDecoder, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(tgt, memory);
    return TN__AS("TransformerDecoder", tn__tstack_core(m, true, tgt, memory, o.tgt_mask, o.memory_mask, o.tgt_key_padding_mask,
                                                        o.memory_key_padding_mask, o.tgt_is_causal == 1));
}
