/* The samplers torch.distributions needs, on the CPU (a CUDA tensor is refused: not on CUDA
   yet), drawn from the library's generators: standard gamma (Marsaglia-Tsang, PyTorch's
   kernel: its numbers from mt19937; a Philox generator's normals by the polar method below),
   with the implicit-reparameterisation gradient dx/dalpha = -(dP/dalpha) / (dP/dx) of its
   CDF P; Poisson (PTRS transformed rejection from 10 up, products of uniforms below);
   binomial (PyTorch's BTRS and inversion: its numbers from mt19937); Dirichlet. */
TN__NO_CONTRACT_BEGIN   /* PyTorch's samplers' roundings: only what torch fuses may fuse (nothing, here) */
static double tn__smp_normal(tn_generator *g) {   /* Marsaglia's polar method */
    double u, v, s;
    do { u = 2 * tn_generator_uniform(g) - 1; v = 2 * tn_generator_uniform(g) - 1; s = u * u + v * v; } while (s >= 1 || s == 0);
    return u * sqrt(-2 * log(s) / s);
}
/* torch._standard_gamma's CPU kernel (sample_gamma in ATen's Distributions.h): Marsaglia and
   Tsang from the generator's uniform and normal doubles (an mt19937 one: PyTorch's draws for
   the same seed), alpha < 1 boosted by (1 - u)^(1/alpha); the arithmetic in double but the
   float literals' (1/3 and 0.0331 as floats) and, for a float32 alpha, its own steps in
   float; clamped to the dtype's smallest normal. NaN and negative alpha give NaN (PyTorch
   loops for ever there). */
static double tn__smp_std_normal(tn_generator *g) {
    if (!g) g = tn_default_generator();
    return g->kind == TN_GEN_MT19937 ? tn__gen_mt_normal(g) : tn__smp_normal(g);
}
static double tn__smp_gamma_as(double alpha, tn_generator *g, bool f32) {
    if (!(alpha >= 0)) return NAN;
    const double tiny = f32 ? (double)FLT_MIN : DBL_MIN;
    if (alpha == INFINITY) return INFINITY;
    double scale = 1.0;
    if (alpha < 1) {
        if (alpha == 0) return tiny;
        scale *= pow(1 - tn_generator_uniform(g), f32 ? (double)(1.0f / (float)alpha) : 1.0 / alpha);
        alpha = f32 ? (double)((float)alpha + 1.0f) : alpha + 1.0;
    }
    const double d = f32 ? (double)((float)alpha - 1.0f / 3.0f) : alpha - (double)(1.0f / 3.0f);
    const double c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, y;
        do {
            x = tn__smp_std_normal(g);
            y = 1.0 + c * x;
        } while (y <= 0);
        const double v = y * y * y, u = 1 - tn_generator_uniform(g), xx = x * x;
        if (u < 1.0 - (double)0.0331f * xx * xx || log(u) < 0.5 * xx + d * (1.0 - v + log(v))) {
            const double r = f32 ? (double)(float)(scale * d * v) : scale * d * v;
            return r > tiny ? r : tiny;
        }
    }
}
static double tn__smp_gamma_f32(double alpha, tn_generator *g) { return tn__smp_gamma_as(alpha, g, true); }
static double tn__smp_gamma_f64(double alpha, tn_generator *g) { return tn__smp_gamma_as(alpha, g, false); }
static double tn__smp_poisson(double lam, tn_generator *g) {
    if (!(lam >= 0)) return NAN;
    if (lam == 0) return 0;
    if (lam < 10) {   /* the count of uniforms whose product stays above e^-lam */
        const double l = exp(-lam);
        double p = 1, k = -1;
        do { k += 1; p *= tn_generator_uniform(g); } while (p > l);
        return k;
    }
    /* Hormann's PTRS */
    const double sl = sqrt(lam), ll = log(lam), b = 0.931 + 2.53 * sl, a = -0.059 + 0.02483 * b;
    const double ia = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        const double U = tn_generator_uniform(g) - 0.5, V = tn_generator_uniform(g), us = 0.5 - fabs(U);
        const double k = floor((2 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) return k;
        if (k < 0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(ia) - log(a / (us * us) + b) <= -lam + k * ll - tn_lgamma_f64(k + 1)) return k;
    }
}
/* torch.binomial's CPU kernel: sample_binomial of ATen's Distributions.h (after TensorFlow's
   random_binomial_op) from uniform doubles of the generator (mt19937: PyTorch's numbers for
   the same seed). count * p >= 10 (p the smaller of prob and 1 - prob): Hormann's BTRS
   transformed rejection; below, the count of geometric waiting times that fit in count.
   count <= 0 or prob <= 0 give 0, prob >= 1 count, NaN prob NaN; a float32 kernel keeps
   its scalar_t steps (products of count and prob, sqrt, k) in float, the rest in double.
   A count of NaN or infinity gives NaN (PyTorch loops for ever there). */
static double tn__smp_stirling_tail(double k) {
    static const double tail[10] = {0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
                                    0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287};
    if (k <= 9) return tail[(size_t)k];
    const double kp1sq = (k + 1) * (k + 1);
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}
static double tn__smp_binomial_inversion(double count, double prob, tn_generator *g, bool f32) {
    const double logprob = f32 ? (double)log1pf(-(float)prob) : log1p(-prob);
    double geom_sum = 0, num = 0;
    for (;;) {
        geom_sum += ceil(log(tn_generator_uniform(g)) / logprob);
        if (geom_sum > count) return num;
        num += 1;
    }
}
static double tn__smp_btrs(double count, double prob, tn_generator *g, bool f32) {
    const float cf = (float)count, pf = (float)prob;
    const double stddev = f32 ? (double)sqrtf(cf * pf * (1.0f - pf)) : sqrt(count * prob * (1 - prob));
    const double b = 1.15 + 2.53 * stddev, a = -0.0873 + 0.0248 * b + 0.01 * prob;
    const double c = (f32 ? (double)(cf * pf) : count * prob) + 0.5, v_r = 0.92 - 4.2 / b;
    const double r = f32 ? (double)(pf / (1.0f - pf)) : prob / (1 - prob);
    const double alpha = (2.83 + 5.1 / b) * stddev;
    const double m = floor(f32 ? (double)((cf + 1.0f) * pf) : (count + 1) * prob);
    for (;;) {
        const double U = tn_generator_uniform(g) - 0.5, V = tn_generator_uniform(g), us = 0.5 - fabs(U);
        const double kd = floor((2 * a / us + b) * U + c), k = f32 ? (double)(float)kd : kd;
        if (k < 0 || k > count) continue;
        if (us >= 0.07 && V <= v_r) return k;
        /* count - k + 1 and k + 1 in the dtype */
        const double cmk = f32 ? (double)(cf - (float)k + 1.0f) : count - k + 1, k1 = f32 ? (double)((float)k + 1.0f) : k + 1;
        const double cp1 = f32 ? (double)(cf + 1.0f) : count + 1, cmkk = f32 ? (double)(cf - (float)k) : count - k;
        const double upper = (m + 0.5) * log((m + 1) / (r * (count - m + 1))) + cp1 * log((count - m + 1) / cmk) + (k + 0.5) * log(r * cmk / k1) +
                             tn__smp_stirling_tail(m) + tn__smp_stirling_tail(count - m) - tn__smp_stirling_tail(k) - tn__smp_stirling_tail(cmkk);
        if (log(V * alpha / (a / (us * us) + b)) <= upper) return k;
    }
}
static double tn__smp_binomial(double count, double prob, tn_generator *g, bool f32) {
    if (count != count || count == INFINITY) return NAN;
    if (count <= 0 || prob <= 0) return 0;
    if (prob >= 1) return count;
    if (prob <= 0.5) {
        const double np = f32 ? (double)((float)count * (float)prob) : count * prob;
        return np >= 10 ? tn__smp_btrs(count, prob, g, f32) : tn__smp_binomial_inversion(count, prob, g, f32);
    }
    if (prob > 0.5) {
        const double q = f32 ? (double)(float)(1.0 - prob) : 1.0 - prob;
        const double nq = f32 ? (double)((float)count * (float)q) : count * q;
        const double x = nq >= 10 ? tn__smp_btrs(count, q, g, f32) : tn__smp_binomial_inversion(count, q, g, f32);
        return f32 ? (double)((float)count - (float)x) : count - x;
    }
    return NAN;
}
/* dP(alpha, x)/dalpha by a central difference on the smaller of P and Q (its relative digits),
   step 1e-4 min(alpha, sqrt alpha): the scale P changes on; over the density x^(alpha-1) e^-x / Gamma(alpha) */
/* -(d/dalpha P(alpha, x)) / pdf(x; alpha) for x ~ Gamma(alpha), as PyTorch's CPU kernel
   (standard_gamma_grad_one in double): a Taylor series for small x, Rice's saddle-point
   expansion for large alpha, else a bivariate rational approximation in log(x / alpha) and
   log(alpha). Its thresholds are float literals there, so they are float here too. */
static double tn__smp_gamma_grad(double alpha, double x, tn_generator *g) {
    (void)g;
    if (x < (double)0.8f) {
        double numer = 1, denom = alpha, series1 = numer / denom, series2 = numer / (denom * denom);
        for (int i = 1; i <= 5; ++i) {
            numer *= -x / i;
            denom += 1;
            series1 += numer / denom;
            series2 += numer / (denom * denom);
        }
        const double pow_x_alpha = pow(x, alpha), pdf = pow(x, alpha - 1) * exp(-x);
        const double cdf_alpha = (log(x) - tn_digamma_f64(alpha)) * (pow_x_alpha * series1) - pow_x_alpha * series2;
        const double r = -cdf_alpha / pdf;
        return r != r ? 0 : r;
    }
    if (alpha > 8) {
        if ((double)0.9f * alpha <= x && x <= (double)1.1f * alpha) {
            const double numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
            const double numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x);
            return numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha));
        }
        const double denom = sqrt(8 * alpha), term2 = denom / (alpha - x);
        const double term3 = pow(x - alpha - alpha * log(x / alpha), -1.5);
        const double term23 = x < alpha ? term2 - term3 : term2 + term3;
        const double term1 = log(x / alpha) * term23 - sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
        const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
        return -stirling * (x * term1) / denom;
    }
    static const double c[3][8] = {
        {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
        {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623},
        {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07},
    };
    const double u = log(x / alpha), v = log(alpha);
    double cv[8];
    for (int i = 0; i < 8; ++i) cv[i] = c[0][i] + u * (c[1][i] + u * c[2][i]);
    const double p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]));
    const double q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]));
    return exp(p / q);
}

/* f over the broadcast of a and b (b may be NULL), in double on the CPU; the result in dtype. */
static tn_tensor *tn__smp_map(const char *fn, tn_tensor *a, tn_tensor *b, double (*f2)(double, double, tn_generator *),
                              double (*f1)(double, tn_generator *), tn_generator *g, tn_dtype dtype) {
    TN__CHECK_NULL(a);
    if (a->device != TN_CPU || (b && b->device != TN_CPU)) return (tn_tensor *)tn__error("%s: not on CUDA yet (CPU tensors only)", fn);
    if (!tn_dtype_is_floating(a->dtype) || (b && !tn_dtype_is_floating(b->dtype)))
        return (tn_tensor *)tn__error("%s: expected floating tensors, got %s%s%s", fn, tn_dtype_name(a->dtype), b ? " and " : "", b ? tn_dtype_name(b->dtype) : "");
    int64_t shape[TN_MAX_DIMS];
    int nd = a->ndim;
    memcpy(shape, a->shape, (size_t)nd * sizeof(int64_t));
    if (b && (nd = tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape)) < 0)
        return (tn_tensor *)tn__error("%s: shapes %s and %s cannot be broadcast", fn, TN__SHAPE(a), TN__SHAPE(b));
    tn_scope_begin();
    tn_tensor *ac = tn_contiguous(tn_to_dtype(tn_expand(a, shape, nd), TN_F64));
    tn_tensor *bc = b ? tn_contiguous(tn_to_dtype(tn_expand(b, shape, nd), TN_F64)) : NULL;
    tn_tensor *out = tn_empty(shape, nd, TN_F64);
    if (!ac || (b && !bc) || !out) { tn_scope_end(); return NULL; }
    const double *pa = (const double *)tn_data_ptr(ac), *pb = bc ? (const double *)tn_data_ptr(bc) : NULL;
    double *po = (double *)tn_data_ptr(out);
    const int64_t n = tn_numel(out);
    for (int64_t i = 0; i < n; i++) po[i] = f2 ? f2(pa[i], pb[i], g) : f1(pa[i], g);
    return tn__scope_return(tn_to_dtype(out, dtype));
}
static int tn__standard_gamma_bw(tn_ctx *n, tn_tensor *gout, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    return (gin[0] = tn_mul(gout, tn_standard_gamma_grad(tn_ctx_saved(n, 0), tn_ctx_saved(n, 1)))) ? 0 : -1;
}
TNDEF tn_tensor *tn_standard_gamma(tn_tensor *alpha, tn_generator *gen) {
    /* float32 (and half) alphas take the kernel's float steps */
    double (*f)(double, tn_generator *) = alpha && alpha->dtype == TN_F64 ? tn__smp_gamma_f64 : tn__smp_gamma_f32;
    tn_tensor *x = TN__AS("tn_standard_gamma", tn__smp_map("tn_standard_gamma", alpha, NULL, NULL, f, gen, alpha ? alpha->dtype : TN_F32));
    if (!x || !alpha->requires_grad || tn__grad_disabled) return x;
    tn_node *nd = tn__fn_node("StandardGammaBackward0", tn__standard_gamma_bw, &alpha, 1);
    if (nd) { tn__node_save(nd, alpha); tn__node_save_result(nd, x); }
    return tn__node_attach(nd, x);
}
TNDEF tn_tensor *tn_standard_gamma_grad(tn_tensor *alpha, tn_tensor *x) {
    TN__CHECK_NULL(alpha, x);
    return TN__AS("tn_standard_gamma_grad", tn__smp_map("tn_standard_gamma_grad", alpha, x, tn__smp_gamma_grad, NULL, NULL, tn_promote_types(alpha->dtype, x->dtype)));
}
TNDEF tn_tensor *tn_poisson(tn_tensor *rates, tn_generator *gen) {
    return TN__AS("tn_poisson", tn__smp_map("tn_poisson", rates, NULL, NULL, tn__smp_poisson, gen, rates ? rates->dtype : TN_F32));
}
static double tn__smp_binomial_f32(double n, double p, tn_generator *g) { return tn__smp_binomial(n, p, g, true); }
static double tn__smp_binomial_f64(double n, double p, tn_generator *g) { return tn__smp_binomial(n, p, g, false); }
TNDEF tn_tensor *tn_binomial(tn_tensor *count, tn_tensor *prob, tn_generator *gen) {
    TN__CHECK_NULL(count, prob);
    const tn_dtype dt = tn_promote_types(count->dtype, prob->dtype);
    return TN__AS("tn_binomial", tn__smp_map("tn_binomial", count, prob, dt == TN_F64 ? tn__smp_binomial_f64 : tn__smp_binomial_f32, NULL, gen, dt));
}
/* Gamma(alpha) draws over their sum along the last dim, as PyTorch's CPU kernel: the gammas
   of alpha as doubles, the quotient cast to alpha's dtype and kept within [its smallest
   normal, the float below 1] (the gradient flows through the gammas) */
TNDEF tn_tensor *tn_sample_dirichlet(tn_tensor *alpha, tn_generator *gen) {
    TN__CHECK_NULL(alpha);
    if (alpha->ndim < 1) return (tn_tensor *)tn__error("tn_sample_dirichlet: alpha must have at least one dim (the categories), got shape %s", TN__SHAPE(alpha));
    if (!tn_dtype_is_floating(alpha->dtype)) return (tn_tensor *)tn__error("tn_sample_dirichlet: expected a floating alpha, got %s", tn_dtype_name(alpha->dtype));
    tn_scope_begin();
    tn_tensor *g = tn_standard_gamma(tn_to_dtype(alpha, TN_F64), gen);
    const int64_t last = -1;
    tn_tensor *r = g ? tn_to_dtype(tn_div(g, tn_sum_dims(g, &last, 1, .keepdim = true)), alpha->dtype) : NULL;
    const bool f64 = alpha->dtype == TN_F64;
    return tn__scope_return(r ? tn_clamp(r, .min = f64 ? DBL_MIN : FLT_MIN, .max = f64 ? nextafter(1.0, 0.0) : (double)nextafterf(1.0f, 0.0f)) : NULL);
}
TN__NO_CONTRACT_END
