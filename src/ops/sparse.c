/* ---- sparse matrices: the C kernels under torch.sparse ----
   A CSR matrix is three tensors, as torch's crow_indices() / col_indices() / values():
   crow [nrows + 1] int64 (row i's entries are k = crow[i] .. crow[i + 1] - 1), col [nnz]
   int64, values [nnz]; a COO matrix is two: indices [2, nnz] int64 (rows, then columns) and
   values [nnz]. The matrix's size is passed as nrows and ncols. Plain tensors rather than a
   struct: a graph network keeps its adjacency as the three tensors it loaded, and the
   values are an ordinary differentiable tensor (edge weights, attention scores). CPU only.

   The product out = A B (B dense [ncols, p]) is one pass per row: out[i] = sum over row i's
   entries of values[k] * B[col[k]], accumulated in the output row (contiguous: vectorised
   over the p columns), rows split into blocks of equal work (nonzeros + rows) over the
   library's thread pool. Its gradients are products of the same kind, recorded in turn (so
   double backward works): for B, A^T g, the same kernel over the transposed structure (a
   stable counting sort of the entries by column, O(nnz + ncols), never a dense A^T); for the
   values, the sampled product g B^T at the nonzeros (one dot product per entry), whose own
   gradients are A-shaped products again. Indices are validated before any is used
   (lengths, crow's monotone rows, column range): hostile input is an error, never a read
   out of bounds. */

static int tn__sp_fail_cuda(const char *fn) { return TN__FAIL_INT("%s: sparse tensors are CPU only (not on CUDA yet)", fn); }
/* An index tensor: int64, ndim dims, on the CPU. */
static int tn__sp_index_check(const char *fn, const tn_tensor *t, const char *what, int ndim) {
    if (t->device != TN_CPU) return tn__sp_fail_cuda(fn);
    if (t->dtype != TN_I64) return TN__FAIL_INT("%s: %s must be an int64 tensor, got %s", fn, what, tn_dtype_name(t->dtype));
    if (t->ndim != ndim) return TN__FAIL_INT("%s: %s must be %d-D, got %s", fn, what, ndim, TN__SHAPE(t));
    return 0;
}
static int tn__sp_size_check(const char *fn, int64_t nrows, int64_t ncols) {
    if (nrows < 0 || ncols < 0 || nrows == INT64_MAX || ncols == INT64_MAX)
        return TN__FAIL_INT("%s: the matrix size (%lld, %lld) must be nonnegative", fn, (long long)nrows, (long long)ncols);
    return 0;
}
/* Whether every index in [0, n) (n of them at p). */
static bool tn__sp_in_range(const int64_t *p, int64_t count, int64_t n) {
    for (int64_t k = 0; k < count; k++)
        if ((uint64_t)p[k] >= (uint64_t)n) return false;
    return true;
}
/* A CSR matrix's invariants, as torch's sparse_csr_tensor checks them (its messages):
   int64 1-D indices on the CPU, crow of nrows + 1 entries from 0 to nnz never decreasing,
   col and values of nnz entries, columns in [0, ncols). values may be NULL (a structure
   only) or must be 1-D. *crow_c and *col_c: contiguous forms (owned by the open scope). */
static int tn__csr_check(const char *fn, tn_tensor *crow, tn_tensor *col, tn_tensor *values, int64_t nrows, int64_t ncols,
                         tn_tensor **crow_c, tn_tensor **col_c) {
    if (tn__sp_size_check(fn, nrows, ncols) || tn__sp_index_check(fn, crow, "crow_indices", 1) || tn__sp_index_check(fn, col, "col_indices", 1))
        return -1;
    if (values && values->device != TN_CPU) return tn__sp_fail_cuda(fn);
    if (values && values->ndim != 1) return TN__FAIL_INT("%s: values must be 1-D (nnz), got %s", fn, TN__SHAPE(values));
    if (crow->shape[0] != nrows + 1)
        return TN__FAIL_INT("%s: crow_indices.shape[-1] must be equal to the number of rows + 1 (=%lld), but got %lld", fn,
                            (long long)(nrows + 1), (long long)crow->shape[0]);
    const int64_t nnz = col->shape[0];
    if (values && values->shape[0] != nnz)
        return TN__FAIL_INT("%s: col_indices.shape[-1] must be equal to nnz (=%lld) as defined by values.shape[0], but got %lld", fn,
                            (long long)values->shape[0], (long long)nnz);
    tn_tensor *rc = tn_contiguous(crow), *cc = rc ? tn_contiguous(col) : NULL;
    if (!cc) return -1;
    const int64_t *r = (const int64_t *)tn_data_ptr(rc), *c = (const int64_t *)tn_data_ptr(cc);
    if (r[0] != 0) return TN__FAIL_INT("%s: `crow_indices[..., 0] == 0` is not satisfied.", fn);
    if (r[nrows] != nnz) return TN__FAIL_INT("%s: `crow_indices[..., -1] == nnz` is not satisfied.", fn);
    for (int64_t i = 0; i < nrows; i++)
        if (r[i + 1] < r[i] || r[i + 1] - r[i] > ncols)
            return TN__FAIL_INT("%s: `0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.", fn);
    if (!tn__sp_in_range(c, nnz, ncols)) return TN__FAIL_INT("%s: `0 <= col_indices < ncols` is not satisfied.", fn);
    *crow_c = rc;
    *col_c = cc;
    return 0;
}
/* A COO matrix's indices [2, nnz] (int64, CPU, rows in [0, nrows), columns in [0, ncols))
   and values [nnz, ...] (NULL: none); *rows_c, *cols_c contiguous (scope-owned). */
static int tn__coo_check(const char *fn, tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor **rows_c, tn_tensor **cols_c) {
    if (tn__sp_size_check(fn, nrows, ncols) || tn__sp_index_check(fn, indices, "indices", 2)) return -1;
    if (indices->shape[0] != 2) return TN__FAIL_INT("%s: indices must be 2 x nnz for a sparse matrix, got %s", fn, TN__SHAPE(indices));
    if (values && values->device != TN_CPU) return tn__sp_fail_cuda(fn);
    if (values && (values->ndim < 1 || values->shape[0] != indices->shape[1]))
        return TN__FAIL_INT("%s: indices and values must have same nnz, but got nnz from indices: %lld, nnz from values: %s", fn,
                            (long long)indices->shape[1], values->ndim ? TN__SHAPE(values) : "a 0-d tensor");
    tn_tensor *rc = tn_contiguous(tn_select(indices, 0, 0)), *cc = rc ? tn_contiguous(tn_select(indices, 0, 1)) : NULL;
    if (!cc) return -1;
    const int64_t nnz = indices->shape[1], *r = (const int64_t *)tn_data_ptr(rc), *c = (const int64_t *)tn_data_ptr(cc);
    for (int64_t k = 0; k < nnz; k++) {
        if (r[k] < 0 || c[k] < 0) return TN__FAIL_INT("%s: found negative index %lld for dim %d", fn, (long long)(r[k] < 0 ? r[k] : c[k]), r[k] < 0 ? 0 : 1);
        if (r[k] >= nrows || c[k] >= ncols)
            return TN__FAIL_INT("%s: size is inconsistent with indices: for dim %d, size is %lld but found index %lld", fn, r[k] >= nrows ? 0 : 1,
                                (long long)(r[k] >= nrows ? nrows : ncols), (long long)(r[k] >= nrows ? r[k] : c[k]));
    }
    *rows_c = rc;
    *cols_c = cc;
    return 0;
}

/* ---- structure: counting sorts (serial, O(nnz + n)) ---- */
static tn_tensor *tn__sp_i64(int64_t n) { return tn__own(tn__new(TN_I64, TN_CPU, &n, 1)); }
/* The entries grouped by key (key[k] in [0, nkeys)), stably: *starts [nkeys + 1] (a CSR
   crow over the keys) and the returned perm [nnz] (perm[j]: the entry placed j-th). */
static tn_tensor *tn__sp_bucket(const int64_t *key, int64_t nnz, int64_t nkeys, tn_tensor **starts) {
    tn_tensor *st = tn__sp_i64(nkeys + 1), *perm = st ? tn__sp_i64(nnz) : NULL;
    if (!perm) return NULL;
    int64_t *s = (int64_t *)tn_data_ptr(st), *pm = (int64_t *)tn_data_ptr(perm);
    memset(s, 0, (size_t)(nkeys + 1) * sizeof *s);
    for (int64_t k = 0; k < nnz; k++) s[key[k] + 1]++;
    for (int64_t i = 0; i < nkeys; i++) s[i + 1] += s[i];
    int64_t *next = (int64_t *)TN_MALLOC((size_t)(nkeys + 1) * sizeof *next);
    if (!next) return (tn_tensor *)tn__error("tensor.h: out of memory sorting %lld sparse entries", (long long)nnz);
    memcpy(next, s, (size_t)(nkeys + 1) * sizeof *next);
    for (int64_t k = 0; k < nnz; k++) pm[next[key[k]]++] = k;
    TN_FREE(next);
    *starts = st;
    return perm;
}
/* The row of each entry of a CSR structure: [nnz]. */
static tn_tensor *tn__csr_rows(const int64_t *crow, int64_t nrows, int64_t nnz) {
    tn_tensor *rows = tn__sp_i64(nnz);
    if (!rows) return NULL;
    int64_t *r = (int64_t *)tn_data_ptr(rows);
    for (int64_t i = 0; i < nrows; i++)
        for (int64_t k = crow[i]; k < crow[i + 1]; k++) r[k] = i;
    return rows;
}
/* The transpose's structure (CSR of A^T, [ncols, nrows]): *crow_t, *col_t (the rows), and
   perm (entry j of A^T is entry perm[j] of A); each column's entries in row order. */
static tn_tensor *tn__csr_transpose(tn_tensor *crow, tn_tensor *col, int64_t nrows, int64_t ncols, tn_tensor **crow_t, tn_tensor **col_t) {
    const int64_t nnz = col->shape[0];
    tn_tensor *rows = tn__csr_rows((const int64_t *)tn_data_ptr(crow), nrows, nnz);
    tn_tensor *perm = rows ? tn__sp_bucket((const int64_t *)tn_data_ptr(col), nnz, ncols, crow_t) : NULL;
    tn_tensor *ct = perm ? tn__sp_i64(nnz) : NULL;
    if (!ct) return NULL;
    const int64_t *pm = (const int64_t *)tn_data_ptr(perm), *r = (const int64_t *)tn_data_ptr(rows);
    int64_t *c = (int64_t *)tn_data_ptr(ct);
    for (int64_t j = 0; j < nnz; j++) c[j] = r[pm[j]];
    *col_t = ct;
    return perm;
}

/* ---- the kernels ---- */
/* out[i] = sum_k val[k] B[col[k]] for rows [r0, r1) (out and B rows of p); the sampled
   product sv[k] = A[row k] . B[col[k]] for the entries of rows [r0, r1). */
#if defined(__GNUC__) || defined(__clang__)
#define TN__SP_PREFETCH(p) __builtin_prefetch(p)
#else
#define TN__SP_PREFETCH(p) ((void)(p))
#endif
#ifndef TN__SP_AHEAD
#define TN__SP_AHEAD 8   /* entries ahead whose dense rows are prefetched */
#endif
/* @template TN__SPMM_DEFINE(T, SUF, ATTR) */
ATTR static void tn__spmm_rows_##SUF(const int64_t *crow, const int64_t *col, const T *val, const T *B, T *out, int64_t p,
                                     int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; i++) {
        T *TN__RESTRICT o = out + i * p;
        const int64_t k1 = crow[i + 1];
        for (int64_t c = 0; c < p; c++) o[c] = 0;
        for (int64_t k = crow[i]; k < k1; k++) {
            const T v = val[k], *TN__RESTRICT b = B + col[k] * p;
            if (k + TN__SP_AHEAD < k1) {   /* the whole row TN__SP_AHEAD entries ahead: its lines are random reads */
                const char *ahead = (const char *)(B + col[k + TN__SP_AHEAD] * p);
                for (int64_t byte = 0; byte < p * (int64_t)sizeof(T); byte += 64) TN__SP_PREFETCH(ahead + byte);
            }
            for (int64_t c = 0; c < p; c++) o[c] += v * b[c];
        }
    }
}
ATTR static void tn__sddmm_rows_##SUF(const int64_t *crow, const int64_t *col, const T *A, const T *B, T *sv, int64_t p,
                                      int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; i++) {
        const T *TN__RESTRICT a = A + i * p;
        for (int64_t k = crow[i]; k < crow[i + 1]; k++) {
            const T *TN__RESTRICT b = B + col[k] * p;
            T s = 0;
            for (int64_t c = 0; c < p; c++) s += a[c] * b[c];
            sv[k] = s;
        }
    }
}
/* @end TN__SPMM_DEFINE */
TN__SPMM_DEFINE(float, f32, TN__PLAIN_FN)
TN__SPMM_DEFINE(double, f64, TN__PLAIN_FN)
#ifdef TN__AVX512_FN
TN__SPMM_DEFINE(float, f32x, TN__AVX512_FN)
TN__SPMM_DEFINE(double, f64x, TN__AVX512_FN)
TN__SPMM_DEFINE(float, f32y, TN__AVX2_FN)
TN__SPMM_DEFINE(double, f64y, TN__AVX2_FN)
#endif
typedef struct {
    const int64_t *crow, *col;
    const void *val, *B;   /* spmm: values, B; sddmm: A, B */
    void *out;
    int64_t nrows, nnz, p;
    bool dbl, sampled;
} tn__sp_job;
/* The first row of chunk t of nt, by work: entries plus rows (crow[r] + r grows with r). */
static int64_t tn__sp_row_at(const tn__sp_job *j, int t, int nt) {
    if (t <= 0) return 0;
    if (t >= nt) return j->nrows;
    const int64_t goal = tn__split_at(j->nnz + j->nrows, t, nt);
    int64_t lo = 0, hi = j->nrows;   /* the first r with crow[r] + r >= goal */
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (j->crow[mid] + mid >= goal) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}
static void tn__sp_chunk(void *ctx, int t, int nt) {
    const tn__sp_job *j = (const tn__sp_job *)ctx;
    const int64_t r0 = tn__sp_row_at(j, t, nt), r1 = tn__sp_row_at(j, t + 1, nt);
    if (r1 <= r0) return;
    if (j->sampled) {
        if (j->dbl) TN__WIDE(tn__sddmm_rows_f64)(j->crow, j->col, (const double *)j->val, (const double *)j->B, (double *)j->out, j->p, r0, r1);
        else TN__WIDE(tn__sddmm_rows_f32)(j->crow, j->col, (const float *)j->val, (const float *)j->B, (float *)j->out, j->p, r0, r1);
    } else {
        if (j->dbl) TN__WIDE(tn__spmm_rows_f64)(j->crow, j->col, (const double *)j->val, (const double *)j->B, (double *)j->out, j->p, r0, r1);
        else TN__WIDE(tn__spmm_rows_f32)(j->crow, j->col, (const float *)j->val, (const float *)j->B, (float *)j->out, j->p, r0, r1);
    }
}
static void tn__sp_run(tn__sp_job *j) {
    const int64_t work = tn__mul_sat(tn__add_sat(j->nnz, j->nrows), j->p > 0 ? j->p : 1);
    const int nth = tn__par_threads(work, j->nrows);
    /* a few chunks per thread: whichever thread is free claims the next (a busy core holds less up) */
    const int64_t chunks = nth < 2 ? 1 : TN__MIN(j->nrows, (int64_t)nth * 4);
    tn__parallel((int)chunks, tn__sp_chunk, j);
}

/* ---- the recorded products ---- */
static tn_tensor *tn__csr_mm_core(tn_tensor *crow, tn_tensor *col, tn_tensor *vals, int64_t nrows, int64_t ncols, tn_tensor *B);
static tn_tensor *tn__csr_sddmm_core(tn_tensor *crow, tn_tensor *col, int64_t nrows, int64_t ncols, tn_tensor *A, tn_tensor *B);
/* The product's nodes save crow, col and their operands; i[0] nrows, i[1] ncols. */
static tn_node *tn__sp_node(const char *name, tn_custom_backward bw, tn_tensor *x, tn_tensor *y, tn_tensor *crow, tn_tensor *col, int64_t nrows,
                            int64_t ncols) {
    tn_tensor *ins[2] = {x, y};
    tn_node *nd = tn__fn_node(name, bw, ins, 2);
    if (nd) {
        tn__node_save(nd, crow); tn__node_save(nd, col); tn__node_save(nd, x); tn__node_save(nd, y);
        nd->i[0] = nrows; nd->i[1] = ncols; nd->ni = 2;
    }
    return nd;
}
/* g B^T at the nonzeros: the values' gradient, or A (B) A^T g: the B operand's. */
static tn_tensor *tn__csr_t_mm(tn_tensor *crow, tn_tensor *col, tn_tensor *vals, int64_t nrows, int64_t ncols, tn_tensor *g) {
    tn_tensor *ct = NULL, *colt = NULL, *perm = tn__csr_transpose(crow, col, nrows, ncols, &ct, &colt);
    return perm ? tn__csr_mm_core(ct, colt, tn_index_select(vals, 0, perm), ncols, nrows, g) : NULL;
}
/* out = A B: d values = (g B^T) sampled at the nonzeros, d B = A^T g. */
static int tn__csr_mm_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *crow = tn_ctx_saved(n, 0), *col = tn_ctx_saved(n, 1), *vals = tn_ctx_saved(n, 2), *B = tn_ctx_saved(n, 3);
    const int64_t nrows = n->i[0], ncols = n->i[1];
    if (tn_ctx_needs_grad(n, 0) && !(gin[0] = tn__csr_sddmm_core(crow, col, nrows, ncols, g, B))) return -1;
    if (tn_ctx_needs_grad(n, 1) && !(gin[1] = tn__csr_t_mm(crow, col, vals, nrows, ncols, g))) return -1;
    return 0;
}
/* s[k] = A[row k] . B[col k]: d A = S B (S the CSR matrix of values g), d B = S^T A. */
static int tn__csr_sddmm_bw(tn_ctx *n, tn_tensor *g, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *crow = tn_ctx_saved(n, 0), *col = tn_ctx_saved(n, 1), *A = tn_ctx_saved(n, 2), *B = tn_ctx_saved(n, 3);
    const int64_t nrows = n->i[0], ncols = n->i[1];
    if (tn_ctx_needs_grad(n, 0) && !(gin[0] = tn__csr_mm_core(crow, col, g, nrows, ncols, B))) return -1;
    if (tn_ctx_needs_grad(n, 1) && !(gin[1] = tn__csr_t_mm(crow, col, g, nrows, ncols, A))) return -1;
    return 0;
}
/* A B for a checked structure (crow, col contiguous int64), vals [nnz] and B [ncols, p] of one
   float dtype; the result joins the open scope. */
static tn_tensor *tn__csr_mm_core(tn_tensor *crow, tn_tensor *col, tn_tensor *vals, int64_t nrows, int64_t ncols, tn_tensor *B) {
    if (!crow || !col || !vals || !B) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn_contiguous(tn_detach(vals)), *b = v ? tn_contiguous(tn_detach(B)) : NULL, *r = NULL;
    const int64_t p = B->shape[1], shape[2] = {nrows, p};
    if (b && (r = tn__own(tn__new(B->dtype, TN_CPU, shape, 2)))) {
        tn__sp_job j = {(const int64_t *)tn_data_ptr(crow), (const int64_t *)tn_data_ptr(col), tn_data_ptr(v), tn_data_ptr(b),
                        tn_data_ptr(r), nrows, col->shape[0], p, B->dtype == TN_F64, false};
        if (p > 0) tn__sp_run(&j);
        tn_node *nd = tn__sp_node("SparseAddmmBackward0", tn__csr_mm_bw, vals, B, crow, col, nrows, ncols);
        r = tn__node_attach(nd, r);
    }
    return tn__scope_return(r);
}
/* The sampled product at a checked structure's entries, A [nrows, p], B [ncols, p]. */
static tn_tensor *tn__csr_sddmm_core(tn_tensor *crow, tn_tensor *col, int64_t nrows, int64_t ncols, tn_tensor *A, tn_tensor *B) {
    if (!crow || !col || !A || !B) return NULL;
    tn_scope_begin();
    tn_tensor *a = tn_contiguous(tn_detach(A)), *b = a ? tn_contiguous(tn_detach(B)) : NULL, *r = NULL;
    const int64_t nnz = col->shape[0];
    if (b && (r = tn__own(tn__new(A->dtype, TN_CPU, &nnz, 1)))) {
        tn__sp_job j = {(const int64_t *)tn_data_ptr(crow), (const int64_t *)tn_data_ptr(col), tn_data_ptr(a), tn_data_ptr(b),
                        tn_data_ptr(r), nrows, nnz, A->shape[1], A->dtype == TN_F64, true};
        if (nnz > 0 && A->shape[1] == 0) memset(tn_data_ptr(r), 0, (size_t)nnz * tn_dtype_size(A->dtype));
        else if (nnz > 0) tn__sp_run(&j);
        tn_node *nd = tn__sp_node("SparseSampledMmBackward0", tn__csr_sddmm_bw, A, B, crow, col, nrows, ncols);
        r = tn__node_attach(nd, r);
    }
    return tn__scope_return(r);
}
/* The operands of a product: float32/float64 values and a 2-D dense of the same dtype with
   ncols rows. */
static int tn__sp_mm_check(const char *fn, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense) {
    if (dense->device != TN_CPU) return tn__sp_fail_cuda(fn);
    if (dense->ndim != 2) return TN__FAIL_INT("%s: the dense operand must be 2-D, got %s", fn, TN__SHAPE(dense));
    if (dense->shape[0] != ncols)
        return TN__FAIL_INT("%s: mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)", fn, (long long)nrows, (long long)ncols,
                            (long long)dense->shape[0], (long long)dense->shape[1]);
    if (values->dtype != TN_F32 && values->dtype != TN_F64)
        return TN__FAIL_INT("%s: sparse values must be float32 or float64, got %s", fn, tn_dtype_name(values->dtype));
    if (dense->dtype != values->dtype)
        return TN__FAIL_INT("%s: expected mat1 and mat2 to have the same dtype, but got: %s != %s", fn, tn_dtype_name(values->dtype),
                            tn_dtype_name(dense->dtype));
    return 0;
}

/* ---- the public functions ---- */
TNDEF int tn_sparse_csr_check(tn_tensor *crow_indices, tn_tensor *col_indices, tn_tensor *values, int64_t nrows, int64_t ncols) {
    if (!crow_indices || !col_indices) return -1;
    tn_scope_begin();
    tn_tensor *rc = NULL, *cc = NULL;
    int rc_ = tn__csr_check("tn_sparse_csr_check", crow_indices, col_indices, values, nrows, ncols, &rc, &cc);
    tn_scope_end();
    return rc_;
}
static tn_tensor *tn__sparse_csr_mm_impl(tn_tensor *crow, tn_tensor *col, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense) {
    const char *fn = "tn_sparse_csr_mm";
    TN__CHECK_NULL(crow, col, values, dense);
    tn_scope_begin();
    tn_tensor *rc = NULL, *cc = NULL, *r = NULL;
    if (!tn__csr_check(fn, crow, col, values, nrows, ncols, &rc, &cc) && !tn__sp_mm_check(fn, values, nrows, ncols, dense))
        r = tn__csr_mm_core(rc, cc, values, nrows, ncols, dense);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sparse_csr_mm(tn_tensor *crow_indices, tn_tensor *col_indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense) {
    return tn__sparse_csr_mm_impl(crow_indices, col_indices, values, nrows, ncols, dense);
}
/* COO -> CSR without merging duplicates (a product adds them anyway): the entries grouped
   by row, stably; *vals the values in that order (differentiable: index_select). */
static int tn__coo_rows_csr(tn_tensor *rows, tn_tensor *cols, tn_tensor *values, int64_t nrows, tn_tensor **crow, tn_tensor **col, tn_tensor **vals) {
    const int64_t nnz = rows->shape[0];
    tn_tensor *perm = tn__sp_bucket((const int64_t *)tn_data_ptr(rows), nnz, nrows, crow), *c = perm ? tn__sp_i64(nnz) : NULL;
    if (!c) return -1;
    const int64_t *pm = (const int64_t *)tn_data_ptr(perm), *cs = (const int64_t *)tn_data_ptr(cols);
    int64_t *cd = (int64_t *)tn_data_ptr(c);
    for (int64_t j = 0; j < nnz; j++) cd[j] = cs[pm[j]];
    *col = c;
    *vals = values ? tn_index_select(values, 0, perm) : NULL;
    return values && !*vals ? -1 : 0;
}
static tn_tensor *tn__sparse_coo_mm_impl(tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense) {
    const char *fn = "tn_sparse_coo_mm";
    TN__CHECK_NULL(indices, values, dense);
    if (values->ndim != 1) return (tn_tensor *)tn__error("%s: values must be 1-D (nnz), got %s", fn, TN__SHAPE(values));
    tn_scope_begin();
    tn_tensor *rc = NULL, *cc = NULL, *crow = NULL, *col = NULL, *v = NULL, *r = NULL;
    if (!tn__coo_check(fn, indices, values, nrows, ncols, &rc, &cc) && !tn__sp_mm_check(fn, values, nrows, ncols, dense) &&
        !tn__coo_rows_csr(rc, cc, values, nrows, &crow, &col, &v))
        r = tn__csr_mm_core(crow, col, v, nrows, ncols, dense);
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sparse_coo_mm(tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense) {
    return tn__sparse_coo_mm_impl(indices, values, nrows, ncols, dense);
}
typedef struct { int64_t col, k; } tn__sp_entry;   /* an entry's column and its place in the input */
static int tn__sp_entry_cmp(const void *a, const void *b) {
    const tn__sp_entry *x = (const tn__sp_entry *)a, *y = (const tn__sp_entry *)b;
    return x->col != y->col ? (x->col > y->col) - (x->col < y->col) : (x->k > y->k) - (x->k < y->k);
}
/* COO -> CSR, coalesced as torch's coalesce(): entries sorted by (row, column), duplicates
   summed (index_add: differentiable in the values). */
static tn_tensor *tn__sparse_coo_to_csr_impl(tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor **crow_out, tn_tensor **col_out) {
    const char *fn = "tn_sparse_coo_to_csr";
    TN__CHECK_NULL(indices, values);
    tn_scope_begin();
    tn_tensor *rc = NULL, *cc = NULL, *rstart = NULL, *r = NULL;
    if (tn__coo_check(fn, indices, values, nrows, ncols, &rc, &cc)) return tn__scope_return(NULL);
    const int64_t nnz = indices->shape[1];
    /* grouped by row (a counting sort), then each row's entries sorted by column: no
       O(ncols) table, so a wide matrix (a vocabulary's columns) costs only its entries */
    tn_tensor *pr = tn__sp_bucket((const int64_t *)tn_data_ptr(rc), nnz, nrows, &rstart);
    tn_tensor *inverse = pr ? tn__sp_i64(nnz) : NULL, *crow = inverse ? tn__sp_i64(nrows + 1) : NULL, *colu = NULL;
    tn__sp_entry *e = crow ? (tn__sp_entry *)TN_MALLOC((size_t)(nnz ? nnz : 1) * sizeof *e) : NULL;
    int64_t *ucol = e ? (int64_t *)TN_MALLOC((size_t)(nnz ? nnz : 1) * sizeof *ucol) : NULL;
    if (crow && !ucol) { TN_FREE(e); e = NULL; tn__error("%s: out of memory sorting %lld entries", fn, (long long)nnz); }
    if (ucol) {
        const int64_t *pm = (const int64_t *)tn_data_ptr(pr), *st = (const int64_t *)tn_data_ptr(rstart), *cs = (const int64_t *)tn_data_ptr(cc);
        int64_t *inv = (int64_t *)tn_data_ptr(inverse), *cr = (int64_t *)tn_data_ptr(crow), u = -1;
        for (int64_t j = 0; j < nnz; j++) { e[j].col = cs[pm[j]]; e[j].k = pm[j]; }
        cr[0] = 0;
        for (int64_t i = 0; i < nrows; i++) {
            const int64_t j0 = st[i], j1 = st[i + 1];
            if (j1 - j0 > 1) qsort(e + j0, (size_t)(j1 - j0), sizeof *e, tn__sp_entry_cmp);
            for (int64_t j = j0; j < j1; j++) {
                if (j == j0 || e[j].col != e[j - 1].col) ucol[++u] = e[j].col;
                inv[e[j].k] = u;
            }
            cr[i + 1] = u + 1;
        }
        if ((colu = tn__sp_i64(u + 1))) memcpy(tn_data_ptr(colu), ucol, (size_t)(u + 1) * sizeof *ucol);
        TN_FREE(e);
        TN_FREE(ucol);
        int64_t vshape[TN_MAX_DIMS];
        memcpy(vshape, values->shape, (size_t)values->ndim * sizeof *vshape);
        vshape[0] = u + 1;
        tn_tensor *z = colu ? tn_zeros(vshape, values->ndim, values->dtype) : NULL;
        r = z ? tn_index_add(z, 0, inverse, values) : NULL;
    }
    if (r) {
        *crow_out = tn_keep(crow);
        *col_out = tn_keep(colu);
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sparse_coo_to_csr(tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor **crow_indices, tn_tensor **col_indices) {
    if (!crow_indices || !col_indices) return (tn_tensor *)tn__error("tn_sparse_coo_to_csr: crow_indices and col_indices (the outputs) must not be NULL");
    *crow_indices = *col_indices = NULL;
    return tn__sparse_coo_to_csr_impl(indices, values, nrows, ncols, crow_indices, col_indices);
}
static tn_tensor *tn__sparse_csr_to_coo_impl(tn_tensor *crow, tn_tensor *col, int64_t nrows, int64_t ncols) {
    TN__CHECK_NULL(crow, col);
    tn_scope_begin();
    tn_tensor *rc = NULL, *cc = NULL, *r = NULL;
    if (!tn__csr_check("tn_sparse_csr_to_coo", crow, col, NULL, nrows, ncols, &rc, &cc)) {
        tn_tensor *rows = tn__csr_rows((const int64_t *)tn_data_ptr(rc), nrows, col->shape[0]), *both[2] = {rows, cc};
        r = rows ? tn_stack(both, 2) : NULL;
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sparse_csr_to_coo(tn_tensor *crow_indices, tn_tensor *col_indices, int64_t nrows, int64_t ncols) {
    return tn__sparse_csr_to_coo_impl(crow_indices, col_indices, nrows, ncols);
}
/* Scatter-add of the entries at flat positions row * ncols + col: differentiable in values. */
static tn_tensor *tn__sparse_csr_to_dense_impl(tn_tensor *crow, tn_tensor *col, tn_tensor *values, int64_t nrows, int64_t ncols) {
    const char *fn = "tn_sparse_csr_to_dense";
    TN__CHECK_NULL(crow, col, values);
    int64_t total;
    if (tn__sp_size_check(fn, nrows, ncols)) return NULL;
    if (!tn__mul_ok(nrows, ncols, &total)) return (tn_tensor *)tn__error("%s: the size (%lld, %lld) has too many elements", fn, (long long)nrows, (long long)ncols);
    tn_scope_begin();
    tn_tensor *rc = NULL, *cc = NULL, *r = NULL;
    if (!tn__csr_check(fn, crow, col, values, nrows, ncols, &rc, &cc)) {
        tn_tensor *rows = tn__csr_rows((const int64_t *)tn_data_ptr(rc), nrows, col->shape[0]);
        tn_tensor *lin = rows ? tn_add(tn_mul_scalar(rows, (double)ncols), cc) : NULL;
        tn_tensor *z = lin ? tn_zeros(&total, 1, values->dtype) : NULL;
        const int64_t shape[2] = {nrows, ncols};
        r = z ? tn_reshape(tn_index_add(z, 0, lin, values), shape, 2) : NULL;
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sparse_csr_to_dense(tn_tensor *crow_indices, tn_tensor *col_indices, tn_tensor *values, int64_t nrows, int64_t ncols) {
    return tn__sparse_csr_to_dense_impl(crow_indices, col_indices, values, nrows, ncols);
}
/* The nonzeros of a 2-D x, row by row: values gathered from x (differentiable). */
static tn_tensor *tn__dense_to_csr_impl(tn_tensor *x, tn_tensor **crow_out, tn_tensor **col_out) {
    const char *fn = "tn_sparse_dense_to_csr";
    TN__CHECK_NULL(x);
    if (x->device != TN_CPU) return (tn_tensor *)tn__error("%s: sparse tensors are CPU only (not on CUDA yet)", fn);
    if (x->ndim != 2) return (tn_tensor *)tn__error("%s: expected a 2-D tensor, got %s (batched CSR is not supported)", fn, TN__SHAPE(x));
    tn_scope_begin();
    const int64_t nrows = x->shape[0], ncols = x->shape[1];
    tn_tensor *mask = tn_contiguous(tn_ne_scalar(tn_detach(x), 0)), *crow = mask ? tn__sp_i64(nrows + 1) : NULL, *r = NULL;
    if (crow) {
        const bool *m = (const bool *)tn_data_ptr(mask);
        int64_t *cr = (int64_t *)tn_data_ptr(crow), nnz = 0;
        cr[0] = 0;
        for (int64_t i = 0; i < nrows; i++) {
            for (int64_t j = 0; j < ncols; j++) nnz += m[i * ncols + j];
            cr[i + 1] = nnz;
        }
        tn_tensor *col = tn__sp_i64(nnz), *lin = col ? tn__sp_i64(nnz) : NULL;
        if (lin) {
            int64_t *c = (int64_t *)tn_data_ptr(col), *l = (int64_t *)tn_data_ptr(lin), k = 0;
            for (int64_t i = 0; i < nrows; i++)
                for (int64_t j = 0; j < ncols; j++)
                    if (m[i * ncols + j]) { c[k] = j; l[k++] = i * ncols + j; }
            const int64_t flat = -1;
            r = tn_index_select(tn_reshape(x, &flat, 1), 0, lin);
        }
        if (r) { *crow_out = tn_keep(crow); *col_out = tn_keep(col); }
    }
    return tn__scope_return(r);
}
TNDEF tn_tensor *tn_sparse_dense_to_csr(tn_tensor *x, tn_tensor **crow_indices, tn_tensor **col_indices) {
    if (!crow_indices || !col_indices) return (tn_tensor *)tn__error("tn_sparse_dense_to_csr: crow_indices and col_indices (the outputs) must not be NULL");
    *crow_indices = *col_indices = NULL;
    return tn__dense_to_csr_impl(x, crow_indices, col_indices);
}
