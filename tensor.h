/* tensor.h — PyTorch's tensors, in one C header.                    MIT licence
 *
 * Strided tensors on CPU (and GPU through tensor_cuda.cu), broadcasting math,
 * reductions, indexing and linear algebra with PyTorch's names and meanings.
 *
 * QUICK START
 *     #define TENSOR_IMPLEMENTATION      // in exactly ONE .c file (never in a header)
 *     #include "tensor.h"
 *
 *     tn_scope_begin();
 *     tn_tensor *a = tn_randn(TN_SHAPE(2, 3), TN_F32);
 *     tn_tensor *b = tn_ones(TN_SHAPE(3), TN_F32);
 *     tn_tensor *c = tn_relu(tn_add(a, b));          // broadcasting [2,3] + [3]
 *     tn_print(c);
 *     tn_scope_end();                                 // releases a, b, c and the temporary
 *
 *     cc -O3 main.c -lm            (-O3 vectorises the kernels; -fopenmp for threads, -DTENSOR_CBLAS -lopenblas for BLAS)
 *
 * OWNERSHIP
 *   Inputs are borrowed; every returned tensor is a new reference. While a scope is
 *   open (tn_scope_begin/tn_scope_end, nestable, per thread) the scope owns it;
 *   tn_keep(t) hands it to the enclosing scope, or to the caller at top level. With no
 *   scope open the caller owns it and calls tn_release. Refcounts are atomic.
 *
 * ERRORS
 *   A function given bad input returns NULL (or a nonzero int) and records a message
 *   in a thread-local buffer: tn_last_error(). A NULL input makes an op return NULL
 *   without a new message, so a nested expression is checked once at the end.
 *   tn_set_error_handler() installs a callback; TN_ABORT_ON_ERROR=1 aborts.
 *
 * OPTIONS (define before including)
 *   TENSOR_STATIC        every symbol static      TENSOR_CBLAS   matmul through cblas
 *   TN_MALLOC/TN_REALLOC/TN_FREE (together)         TN_ASSERT      internal assertions
 *   TENSOR_CUDA          register the GPU backend of tensor_cuda.cu
 *   TN_PARALLEL_MIN      elements below which a CPU kernel runs on one thread (32768)
 *   TN_CONV_BLOCK_BYTES  im2col column blocks per thread in conv2d (1 MiB)
 *
 * CONTENTS (each section appears twice, same order: declarations, then implementation)
 *    1. config & allocator hooks        10. nn functional
 *    2. errors                          11. autograd engine
 *    3. dtypes & devices                12. modules
 *    4. storage & tensor, ownership     13. optimizers
 *    5. creation & RNG                  14. data
 *    6. views & indexing                15. serialization & printing
 *    7. elementwise & broadcasting      16. threading
 *    8. reductions                      17. backend interface (strided iterator, CPU table)
 *    9. linear algebra
 */
#ifndef TENSOR_H
#define TENSOR_H

/* ======================================================================= */
/* 1. config & allocator hooks                                              */
/* ======================================================================= */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <math.h>

#ifdef TENSOR_STATIC
#define TNDEF static
#else
#define TNDEF extern
#endif

#ifdef __CUDACC__
#define TN_HD __host__ __device__   /* scalar math shared by CPU and GPU kernels */
#else
#define TN_HD
#endif

#define TN_MAX_DIMS 8

/* Shape and dim-list literals: tn_zeros(TN_SHAPE(2, 3), TN_F32) expands to
   tn_zeros((int64_t[]){2, 3}, 2, TN_F32); in C++ the array is an initializer_list's,
   alive until the end of the call's full expression. */
#ifdef __cplusplus
#include <initializer_list>
#define TN_SHAPE(...) std::initializer_list<int64_t>{__VA_ARGS__}.begin(), (int)std::initializer_list<int64_t>{__VA_ARGS__}.size()
#else
#define TN_SHAPE(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#endif

#ifdef __cplusplus
extern "C" {
#endif


#define TN_DIMS(...) TN_SHAPE(__VA_ARGS__)

/* ======================================================================= */
/* 2. errors                                                                */
/* ======================================================================= */
typedef void (*tn_error_handler)(const char *message, void *user);

TNDEF const char *tn_last_error(void);        /* message of the last error on this thread ("" if none) */
TNDEF void tn_clear_error(void);              /* reset tn_last_error() to "" */
/* Calls handler(message, user) on every error (NULL restores the default: record only). */
TNDEF void tn_set_error_handler(tn_error_handler handler, void *user);
/* Record an error from your own code (a dataset's get, a collate or custom-op callback) so
   the library reports it like its own: printf-style; returns -1. */
TNDEF int tn_error(const char *fmt, ...);


/* ======================================================================= */
/* 3. dtypes & devices                                                      */
/* ======================================================================= */
typedef enum tn_dtype {
    TN_F32 = 0, /* the default: zero-initialised options mean float32, as in PyTorch */
    TN_F64, TN_I32, TN_I64, TN_U8, TN_BOOL,
    TN_F16, TN_BF16,   /* reserved for half precision on the GPU (not implemented yet); kernels refuse them */
    TN_NUM_DTYPES
} tn_dtype;

typedef enum tn_device { TN_CPU = 0, TN_CUDA = 1, TN_NUM_DEVICES } tn_device;

TNDEF const char *tn_dtype_name(tn_dtype dtype);  /* "float32", "int64", ... (PyTorch's names) */
TNDEF size_t tn_dtype_size(tn_dtype dtype);       /* bytes per element */
TNDEF bool tn_dtype_is_floating(tn_dtype dtype);
/* PyTorch's promotion of two tensor dtypes (torch.promote_types). */
TNDEF tn_dtype tn_promote_types(tn_dtype a, tn_dtype b);
TNDEF const char *tn_device_name(tn_device device); /* "cpu", "cuda" */

/* ======================================================================= */
/* 4. storage & tensor, ownership                                           */
/* ======================================================================= */
typedef struct tn_tensor tn_tensor;
typedef struct tn_node tn_node;                 /* autograd graph node (section 11) */

/* Reference-counted memory block; many tensors (views) may share one. */
typedef struct tn_storage {
    int64_t refcount;                           /* atomic */
    void *data;
    size_t nbytes;
    tn_device device;
    int64_t version;                            /* bumped by in-place writes (autograd checks it) */
    void (*deleter)(void *data, void *ctx);     /* NULL: the backend's free */
    void *deleter_ctx;
    int inline_data;                            /* data lives in this block, after the struct */
} tn_storage;

/* A view: dtype, device, shape, strides (in elements), offset into a storage.
   Read it through the accessors below; the layout may grow. */
struct tn_tensor {
    int64_t refcount;                           /* atomic */
    tn_dtype dtype;
    tn_device device;
    int ndim;
    int64_t shape[TN_MAX_DIMS];
    int64_t strides[TN_MAX_DIMS];
    int64_t offset;                             /* in elements */
    tn_storage *storage;
    /* autograd (section 11) */
    bool requires_grad;
    bool retains_grad;
    bool is_wrapped_number;                     /* a C/Python scalar: weaker in type promotion */
    bool is_view;                               /* made by a view op: shares another tensor's storage */
    tn_tensor *base;                            /* a view op's root tensor (retained), for in-place autograd */
    int64_t grad_fn_version;                    /* the version when grad_fn was set: a view whose base changed since is rebuilt */
    tn_tensor *grad;
    tn_node *grad_fn;                           /* NULL for leaves */
    struct tn__hooks *hooks;                    /* backward hooks of a leaf (a non-leaf's live in its node) */
    const char *name;
};

TNDEF tn_tensor *tn_retain(tn_tensor *t);       /* +1 reference; returns t */
TNDEF void tn_release(tn_tensor *t);            /* -1 reference; frees at 0; NULL is a no-op */

TNDEF void tn_scope_begin(void);                /* open a scope on this thread */
TNDEF void tn_scope_end(void);                  /* release every tensor the scope owns */
/* Hand t to the enclosing scope (or to the caller at top level) so it outlives the
   current scope; returns t. */
TNDEF tn_tensor *tn_keep(tn_tensor *t);
TNDEF int tn_scope_depth(void);                 /* number of open scopes on this thread */

typedef struct tn_memory_stats {
    int64_t live_tensors;    /* tensor objects (views included) not yet freed */
    int64_t live_storages;
    int64_t live_bytes;      /* bytes of storage the library allocated and still holds */
    int64_t peak_bytes;      /* maximum of live_bytes since start or the last reset */
} tn_memory_stats;
TNDEF tn_memory_stats tn_memory_stats_get(void);
TNDEF void tn_memory_stats_reset_peak(void);
/* The CPU backend keeps freed blocks of 64 KiB or more for reuse (up to TN_CPU_CACHE_LIMIT,
   1 GiB by default): these give the cache back / tell its size. */
TNDEF void tn_cpu_empty_cache(void);
TNDEF size_t tn_cpu_cached_bytes(void);


/* Accessors (never fail on a valid tensor; NULL gives 0/NULL). */
TNDEF int tn_ndim(const tn_tensor *t);
TNDEF const int64_t *tn_shape(const tn_tensor *t);     /* ndim entries, borrowed */
TNDEF const int64_t *tn_strides(const tn_tensor *t);   /* in elements, borrowed */
TNDEF int64_t tn_size(const tn_tensor *t, int64_t dim); /* negative dims count from the end; -1 if out of range */
TNDEF int64_t tn_numel(const tn_tensor *t);
TNDEF int64_t tn_storage_offset(const tn_tensor *t);
TNDEF tn_dtype tn_get_dtype(const tn_tensor *t);
TNDEF tn_device tn_get_device(const tn_tensor *t);
TNDEF void *tn_data_ptr(const tn_tensor *t);           /* address of element [0,...,0] */
TNDEF bool tn_is_contiguous(const tn_tensor *t);
TNDEF int64_t tn_version(const tn_tensor *t);          /* in-place modification counter */
TNDEF bool tn_same_storage(const tn_tensor *a, const tn_tensor *b);

/* ======================================================================= */
/* 5. creation & RNG                                                        */
/* ======================================================================= */
/* Shapes are (const int64_t *shape, int ndim); TN_SHAPE(2, 3) writes both. */
TNDEF tn_tensor *tn_empty(const int64_t *shape, int ndim, tn_dtype dtype);   /* uninitialised */
TNDEF tn_tensor *tn_zeros(const int64_t *shape, int ndim, tn_dtype dtype);
TNDEF tn_tensor *tn_ones(const int64_t *shape, int ndim, tn_dtype dtype);
TNDEF tn_tensor *tn_full(const int64_t *shape, int ndim, double value, tn_dtype dtype);
/* Copy ndim-shaped row-major data (of the given dtype) into a new tensor. */
TNDEF tn_tensor *tn_from_data(const void *data, const int64_t *shape, int ndim, tn_dtype dtype);
/* Wrap caller memory without a copy; strides NULL = contiguous. deleter(data, ctx) is
   called when the last view dies (NULL: the caller keeps ownership). */
TNDEF tn_tensor *tn_from_blob(void *data, const int64_t *shape, int ndim, const int64_t *strides,
                              tn_dtype dtype, void (*deleter)(void *data, void *ctx), void *ctx);
/* 0-d tensors; the tn_scalar* forms are "wrapped numbers" (Python scalars) for type promotion. */
TNDEF tn_tensor *tn_scalar_tensor(double value, tn_dtype dtype);
TNDEF tn_tensor *tn_scalar(double value);       /* a Python float */
TNDEF tn_tensor *tn_scalar_int(int64_t value);  /* a Python int */
TNDEF tn_tensor *tn_scalar_bool(bool value);    /* a Python bool */
/* [start, end) by step. dtype as PyTorch infers it is the caller's choice here. */
TNDEF tn_tensor *tn_arange(double start, double end, double step, tn_dtype dtype);
TNDEF tn_tensor *tn_linspace(double start, double end, int64_t steps, tn_dtype dtype);
TNDEF tn_tensor *tn_eye(int64_t n, int64_t m, tn_dtype dtype); /* m < 0 means m = n */
TNDEF tn_tensor *tn_empty_like(tn_tensor *t);
TNDEF tn_tensor *tn_zeros_like(tn_tensor *t);
TNDEF tn_tensor *tn_ones_like(tn_tensor *t);
TNDEF tn_tensor *tn_full_like(tn_tensor *t, double value);
TNDEF tn_tensor *tn_rand_like(tn_tensor *t);
TNDEF tn_tensor *tn_randn_like(tn_tensor *t);
TNDEF tn_tensor *tn_clone(tn_tensor *t);        /* a contiguous copy */
TNDEF tn_tensor *tn_contiguous(tn_tensor *t);   /* t itself (new reference) if already contiguous */
TNDEF tn_tensor *tn_to_dtype(tn_tensor *t, tn_dtype dtype); /* t itself if same dtype */
TNDEF tn_tensor *tn_to(tn_tensor *t, tn_device device);     /* t itself if same device */
TNDEF double tn_item(tn_tensor *t);             /* the value of a one-element tensor (NaN + error otherwise) */
/* Copy src into dst (broadcasting src, converting dtype); returns 0 or -1. */
TNDEF int tn_copy_(tn_tensor *dst, tn_tensor *src);

/* Philox-4x32-10: counter-based, so element i of a draw is the same on CPU, GPU and in
   any thread split. A generator is (seed, offset); each draw advances offset. */
typedef struct tn_generator { uint64_t seed; uint64_t offset; } tn_generator;
TNDEF void tn_manual_seed(uint64_t seed);       /* reseed the default generator */
TNDEF tn_generator *tn_default_generator(void); /* borrowed */
TNDEF tn_generator *tn_generator_new(uint64_t seed);
TNDEF void tn_generator_free(tn_generator *g);
/* gen NULL = default generator. Float dtypes for rand/randn/normal/bernoulli. */
TNDEF tn_tensor *tn_rand(const int64_t *shape, int ndim, tn_dtype dtype);   /* U[0, 1) */
TNDEF tn_tensor *tn_randn(const int64_t *shape, int ndim, tn_dtype dtype);  /* N(0, 1) */
TNDEF tn_tensor *tn_rand_gen(const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *gen);
TNDEF tn_tensor *tn_randn_gen(const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *gen);
TNDEF tn_tensor *tn_normal(double mean, double std, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *gen);
TNDEF tn_tensor *tn_uniform(double low, double high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *gen);
/* Integers uniform in [low, high). */
TNDEF tn_tensor *tn_randint(int64_t low, int64_t high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *gen);
/* 1 with probability p[i] (float tensor in [0, 1]), same shape and dtype as p. */
TNDEF tn_tensor *tn_bernoulli(tn_tensor *p, tn_generator *gen);
TNDEF tn_tensor *tn_bernoulli_p(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen);
TNDEF tn_tensor *tn_randperm(int64_t n, tn_dtype dtype, tn_generator *gen); /* int64 as in PyTorch */
/* Raw Philox block: 4 x uint32 for (key, counter). */
TN_HD static inline void tn_philox4x32(uint64_t key, uint64_t counter_hi, uint64_t counter_lo, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)counter_lo, c1 = (uint32_t)(counter_lo >> 32);
    uint32_t c2 = (uint32_t)counter_hi, c3 = (uint32_t)(counter_hi >> 32);
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1; c3 = (uint32_t)p0; c0 = n0; c2 = n2;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}
/* One element of a draw from Philox(seed, counter), as both backends compute it (op is a
   tn_random_op): UNIFORM a + (b-a)u (float32 outputs use 24 random bits, so the value
   stays below b after rounding), NORMAL a + b z (Box-Muller), RANDINT low + (64 random
   bits mod range) (range 0 stands for 2^64), exact in *iv. */
TN_HD static inline double tn_philox_draw(int op, bool f32, uint64_t seed, uint64_t counter, double a, double b,
                                          int64_t low, uint64_t range, int64_t *iv) {
    uint32_t r[4];
    tn_philox4x32(seed, 0, counter, r);
    uint64_t hi = ((uint64_t)r[0] << 32) | r[1], lo = ((uint64_t)r[2] << 32) | r[3];
    /* (double)(hi >> 11) exactly, from int32 pieces: loops over draws vectorise (no
       packed uint64 -> double before AVX-512) */
    double u53 = ((double)(int32_t)(r[0] >> 16) * 0x1.0p37 + (double)(int32_t)(r[0] & 0xFFFFu) * 0x1.0p21 + (double)(int32_t)(r[1] >> 11))
                 * 0x1.0p-53, v;
    *iv = 0;
    if (op == 0) {          /* UNIFORM */
        v = f32 ? a + (b - a) * (double)((float)(r[0] >> 8) * 0x1.0p-24f) : a + (b - a) * u53;
        if (f32 && (float)v >= (float)b && b > a) v = nextafterf((float)b, (float)a);
    } else if (op == 1) {   /* NORMAL */
        double u1 = ((double)(lo >> 11) + 0.5) * 0x1.0p-53; /* in (0, 1): log is finite */
        v = a + b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u53);
    } else {                /* RANDINT */
        *iv = (int64_t)((uint64_t)low + (range ? hi % range : hi));
        v = (double)*iv;
    }
    return v;
}

/* ======================================================================= */
/* 6. views & indexing                                                      */
/* ======================================================================= */
/* Views share storage with their input (no copy). Dims may be negative. */
TNDEF tn_tensor *tn_view(tn_tensor *t, const int64_t *shape, int ndim);    /* one dim may be -1 */
TNDEF tn_tensor *tn_reshape(tn_tensor *t, const int64_t *shape, int ndim); /* copies only when strides forbid a view */
TNDEF tn_tensor *tn_flatten(tn_tensor *t, int64_t start_dim, int64_t end_dim);
TNDEF tn_tensor *tn_unflatten(tn_tensor *t, int64_t dim, const int64_t *sizes, int n);
TNDEF tn_tensor *tn_permute(tn_tensor *t, const int64_t *dims, int ndim);
TNDEF tn_tensor *tn_transpose(tn_tensor *t, int64_t dim0, int64_t dim1);
TNDEF tn_tensor *tn_t(tn_tensor *t);                                        /* 0-, 1- or 2-d transpose */
TNDEF tn_tensor *tn_narrow(tn_tensor *t, int64_t dim, int64_t start, int64_t length);
/* Python's t[start:stop:step] on one dim: negative start/stop count from the end and
   are clamped; step > 0. Use TN_END for "to the end". */
#define TN_END INT64_MAX
TNDEF tn_tensor *tn_slice(tn_tensor *t, int64_t dim, int64_t start, int64_t stop, int64_t step);
TNDEF tn_tensor *tn_select(tn_tensor *t, int64_t dim, int64_t index);      /* removes dim */
TNDEF tn_tensor *tn_expand(tn_tensor *t, const int64_t *shape, int ndim);  /* -1 keeps a size */
TNDEF tn_tensor *tn_expand_as(tn_tensor *t, tn_tensor *other);
TNDEF tn_tensor *tn_broadcast_to(tn_tensor *t, const int64_t *shape, int ndim);
TNDEF tn_tensor *tn_squeeze(tn_tensor *t);                                  /* all size-1 dims */
TNDEF tn_tensor *tn_squeeze_dim(tn_tensor *t, int64_t dim);
TNDEF tn_tensor *tn_unsqueeze(tn_tensor *t, int64_t dim);
TNDEF tn_tensor *tn_unfold(tn_tensor *t, int64_t dim, int64_t size, int64_t step);
TNDEF tn_tensor *tn_as_strided(tn_tensor *t, const int64_t *shape, int ndim, const int64_t *strides, int64_t offset);
TNDEF tn_tensor *tn_detach(tn_tensor *t);       /* same data, no autograd history */

/* Gathering and scattering; index tensors are int64 (int32 accepted). Results are new tensors. */
TNDEF tn_tensor *tn_index_select(tn_tensor *t, int64_t dim, tn_tensor *index);
TNDEF tn_tensor *tn_gather(tn_tensor *t, int64_t dim, tn_tensor *index);
TNDEF tn_tensor *tn_scatter(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_scatter_add(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_scatter_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_scatter_add_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
/* Advanced indexing t[i0, i1, ...] as aten::index: indices[k] indexes dim k (NULL = ":");
   integer tensors broadcast together, bool tensors select where true. */
TNDEF tn_tensor *tn_index(tn_tensor *t, tn_tensor *const *indices, int n);
/* t[indices] = values (broadcast), or += with accumulate (duplicates add up). */
TNDEF tn_tensor *tn_index_put(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate);
TNDEF tn_tensor *tn_index_put_(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate);
TNDEF tn_tensor *tn_masked_fill(tn_tensor *t, tn_tensor *mask, double value);
TNDEF tn_tensor *tn_masked_fill_(tn_tensor *t, tn_tensor *mask, double value);
TNDEF tn_tensor *tn_masked_select(tn_tensor *t, tn_tensor *mask);   /* 1-D */
TNDEF tn_tensor *tn_nonzero(tn_tensor *t);                          /* [n, ndim] int64 */
TNDEF tn_tensor *tn_where(tn_tensor *cond, tn_tensor *a, tn_tensor *b);

/* Joining and splitting. split/chunk write up to max_out views into out and return
   how many there are (or -1 on error). */
TNDEF tn_tensor *tn_cat(tn_tensor *const *ts, int n, int64_t dim);
TNDEF tn_tensor *tn_stack(tn_tensor *const *ts, int n, int64_t dim);
TNDEF int tn_split(tn_tensor *t, int64_t split_size, int64_t dim, tn_tensor **out, int max_out);
TNDEF int tn_split_sizes(tn_tensor *t, const int64_t *sizes, int n, int64_t dim, tn_tensor **out, int max_out);
TNDEF int tn_chunk(tn_tensor *t, int64_t chunks, int64_t dim, tn_tensor **out, int max_out);
TNDEF tn_tensor *tn_flip(tn_tensor *t, const int64_t *dims, int n);
TNDEF tn_tensor *tn_roll(tn_tensor *t, const int64_t *shifts, const int64_t *dims, int n); /* n = 0: flattened, shifts[0] */
TNDEF tn_tensor *tn_repeat(tn_tensor *t, const int64_t *repeats, int n);
TNDEF tn_tensor *tn_tril(tn_tensor *t, int64_t diagonal);
TNDEF tn_tensor *tn_triu(tn_tensor *t, int64_t diagonal);
/* Constant padding as F.pad: pad = (last_left, last_right, prev_left, prev_right, ...),
   n even; negative pads crop. */
TNDEF tn_tensor *tn_pad(tn_tensor *t, const int64_t *pad, int n, double value);

/* ======================================================================= */
/* 7. elementwise & broadcasting                                            */
/* ======================================================================= */
/* Binary ops broadcast and promote dtypes as PyTorch. The *_scalar forms take a double:
   an integral value acts as a Python int, any other as a Python float (so an int tensor
   plus 2 stays int, plus 2.5 becomes float32). Pass tn_scalar()/tn_scalar_int() tensors
   to the tensor forms to choose explicitly. Forms ending in _ write into their first
   argument (whose shape and dtype must hold the result) and return it (a new reference). */
TNDEF tn_tensor *tn_add(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_add_alpha(tn_tensor *a, tn_tensor *b, double alpha);   /* a + alpha*b */
TNDEF tn_tensor *tn_sub(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_sub_alpha(tn_tensor *a, tn_tensor *b, double alpha);   /* a - alpha*b */
TNDEF tn_tensor *tn_mul(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_div(tn_tensor *a, tn_tensor *b);            /* true division: ints give float */
TNDEF tn_tensor *tn_floor_divide(tn_tensor *a, tn_tensor *b);   /* rounds toward -inf */
TNDEF tn_tensor *tn_remainder(tn_tensor *a, tn_tensor *b);      /* sign of b, as Python's % */
TNDEF tn_tensor *tn_fmod(tn_tensor *a, tn_tensor *b);           /* sign of a, as C's fmod */
TNDEF tn_tensor *tn_pow(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_atan2(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_maximum(tn_tensor *a, tn_tensor *b);        /* NaN propagates */
TNDEF tn_tensor *tn_minimum(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_eq(tn_tensor *a, tn_tensor *b);             /* comparisons give bool */
TNDEF tn_tensor *tn_ne(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_lt(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_le(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_gt(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_ge(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_logical_and(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_logical_or(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_logical_xor(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_bitwise_and(tn_tensor *a, tn_tensor *b);    /* integer and bool */
TNDEF tn_tensor *tn_bitwise_or(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_bitwise_xor(tn_tensor *a, tn_tensor *b);

TNDEF tn_tensor *tn_add_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_sub_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_rsub_scalar(tn_tensor *a, double b);        /* b - a */
TNDEF tn_tensor *tn_mul_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_div_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_pow_scalar(tn_tensor *a, double exponent);
TNDEF tn_tensor *tn_rpow_scalar(double base, tn_tensor *exponent);
TNDEF tn_tensor *tn_remainder_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_floor_divide_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_eq_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_ne_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_lt_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_le_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_gt_scalar(tn_tensor *a, double b);
TNDEF tn_tensor *tn_ge_scalar(tn_tensor *a, double b);

TNDEF tn_tensor *tn_add_(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_add_alpha_(tn_tensor *a, tn_tensor *b, double alpha);
TNDEF tn_tensor *tn_sub_(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_mul_(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_div_(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_pow_(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_add_scalar_(tn_tensor *a, double b);
TNDEF tn_tensor *tn_mul_scalar_(tn_tensor *a, double b);
TNDEF tn_tensor *tn_fill_(tn_tensor *t, double value);
TNDEF tn_tensor *tn_zero_(tn_tensor *t);

/* Unary math. Integer inputs of float functions (exp, sin, ...) give float32, as PyTorch. */
TNDEF tn_tensor *tn_neg(tn_tensor *x);
TNDEF tn_tensor *tn_abs(tn_tensor *x);
TNDEF tn_tensor *tn_sign(tn_tensor *x);
TNDEF tn_tensor *tn_exp(tn_tensor *x);
TNDEF tn_tensor *tn_exp2(tn_tensor *x);
TNDEF tn_tensor *tn_log(tn_tensor *x);
TNDEF tn_tensor *tn_log2(tn_tensor *x);
TNDEF tn_tensor *tn_log10(tn_tensor *x);
TNDEF tn_tensor *tn_log1p(tn_tensor *x);
TNDEF tn_tensor *tn_expm1(tn_tensor *x);
TNDEF tn_tensor *tn_sqrt(tn_tensor *x);
TNDEF tn_tensor *tn_rsqrt(tn_tensor *x);
TNDEF tn_tensor *tn_square(tn_tensor *x);
TNDEF tn_tensor *tn_reciprocal(tn_tensor *x);
TNDEF tn_tensor *tn_sin(tn_tensor *x);
TNDEF tn_tensor *tn_cos(tn_tensor *x);
TNDEF tn_tensor *tn_tan(tn_tensor *x);
TNDEF tn_tensor *tn_asin(tn_tensor *x);
TNDEF tn_tensor *tn_acos(tn_tensor *x);
TNDEF tn_tensor *tn_atan(tn_tensor *x);
TNDEF tn_tensor *tn_sinh(tn_tensor *x);
TNDEF tn_tensor *tn_cosh(tn_tensor *x);
TNDEF tn_tensor *tn_tanh(tn_tensor *x);
TNDEF tn_tensor *tn_sigmoid(tn_tensor *x);
TNDEF tn_tensor *tn_relu(tn_tensor *x);
TNDEF tn_tensor *tn_gelu(tn_tensor *x, bool tanh_approx);     /* approximate='none' | 'tanh' */
TNDEF tn_tensor *tn_silu(tn_tensor *x);
TNDEF tn_tensor *tn_softplus(tn_tensor *x, double beta, double threshold); /* PyTorch: beta 1, threshold 20 */
TNDEF tn_tensor *tn_erf(tn_tensor *x);
TNDEF tn_tensor *tn_erfc(tn_tensor *x);
TNDEF tn_tensor *tn_floor(tn_tensor *x);
TNDEF tn_tensor *tn_ceil(tn_tensor *x);
TNDEF tn_tensor *tn_round(tn_tensor *x);                       /* half to even */
TNDEF tn_tensor *tn_trunc(tn_tensor *x);
TNDEF tn_tensor *tn_frac(tn_tensor *x);
TNDEF tn_tensor *tn_logical_not(tn_tensor *x);
TNDEF tn_tensor *tn_bitwise_not(tn_tensor *x);
TNDEF tn_tensor *tn_isnan(tn_tensor *x);
TNDEF tn_tensor *tn_isinf(tn_tensor *x);
TNDEF tn_tensor *tn_isfinite(tn_tensor *x);
TNDEF tn_tensor *tn_nan_to_num(tn_tensor *x, double nan, double posinf, double neginf);
/* clamp(x, min, max); use -INFINITY / INFINITY for a missing bound. */
TNDEF tn_tensor *tn_clamp(tn_tensor *x, double min, double max);
TNDEF tn_tensor *tn_clamp_tensor(tn_tensor *x, tn_tensor *min, tn_tensor *max); /* either may be NULL */
TNDEF tn_tensor *tn_lerp(tn_tensor *start, tn_tensor *end, tn_tensor *weight);
TNDEF tn_tensor *tn_lerp_scalar(tn_tensor *start, tn_tensor *end, double weight);
TNDEF tn_tensor *tn_addcmul(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value); /* x + value*t1*t2 */
TNDEF tn_tensor *tn_addcdiv(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value); /* x + value*t1/t2 */
TNDEF tn_tensor *tn_neg_(tn_tensor *x);
TNDEF tn_tensor *tn_exp_(tn_tensor *x);
TNDEF tn_tensor *tn_relu_(tn_tensor *x);
TNDEF tn_tensor *tn_sigmoid_(tn_tensor *x);
TNDEF tn_tensor *tn_tanh_(tn_tensor *x);
TNDEF tn_tensor *tn_sqrt_(tn_tensor *x);
TNDEF tn_tensor *tn_clamp_(tn_tensor *x, double min, double max);
TNDEF tn_tensor *tn_addcmul_(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value);
TNDEF tn_tensor *tn_addcdiv_(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value);
TNDEF tn_tensor *tn_lerp_(tn_tensor *start, tn_tensor *end, double weight);
/* Torch's result_type over n operands (0-d and wrapped numbers weigh less). */
TNDEF tn_dtype tn_result_type(tn_tensor *const *ts, int n);
/* Broadcast shape of a and b into out (TN_MAX_DIMS entries); returns ndim or -1 with an error. */
TNDEF int tn_broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out);
/* Element equality with tolerance: |a-b| <= atol + rtol*|b| everywhere (NaN equal if equal_nan). */
TNDEF bool tn_allclose(tn_tensor *a, tn_tensor *b, double rtol, double atol, bool equal_nan);
TNDEF bool tn_equal(tn_tensor *a, tn_tensor *b);    /* same shape and values */

/* ======================================================================= */
/* 8. reductions                                                            */
/* ======================================================================= */
/* Forms without dims reduce all elements to a 0-d tensor. dims lists may hold negative
   dims; TN_DIMS(0, 2) writes (dims, n). Sums and products of integers and bools give
   int64; mean, var, std, norm and logsumexp need floating input. */
TNDEF tn_tensor *tn_sum(tn_tensor *x);
TNDEF tn_tensor *tn_sum_dims(tn_tensor *x, const int64_t *dims, int n, bool keepdim);
TNDEF tn_tensor *tn_mean(tn_tensor *x);
TNDEF tn_tensor *tn_mean_dims(tn_tensor *x, const int64_t *dims, int n, bool keepdim);
TNDEF tn_tensor *tn_prod(tn_tensor *x);
TNDEF tn_tensor *tn_prod_dims(tn_tensor *x, const int64_t *dims, int n, bool keepdim);
TNDEF tn_tensor *tn_amax(tn_tensor *x, const int64_t *dims, int n, bool keepdim); /* n = 0: all */
TNDEF tn_tensor *tn_amin(tn_tensor *x, const int64_t *dims, int n, bool keepdim);
TNDEF tn_tensor *tn_max(tn_tensor *x);          /* 0-d; NaN propagates; error on an empty tensor */
TNDEF tn_tensor *tn_min(tn_tensor *x);
/* Values and (if indices != NULL) int64 indices of the first extreme along dim;
   *indices follows the same ownership rule as the result. */
TNDEF tn_tensor *tn_max_dim(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **indices);
TNDEF tn_tensor *tn_min_dim(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **indices);
TNDEF tn_tensor *tn_argmax(tn_tensor *x);       /* index into the flattened tensor */
TNDEF tn_tensor *tn_argmin(tn_tensor *x);
TNDEF tn_tensor *tn_argmax_dim(tn_tensor *x, int64_t dim, bool keepdim);
TNDEF tn_tensor *tn_argmin_dim(tn_tensor *x, int64_t dim, bool keepdim);
/* var/std with Bessel-style correction (PyTorch's default is 1). */
TNDEF tn_tensor *tn_var(tn_tensor *x, int64_t correction);
TNDEF tn_tensor *tn_var_dims(tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim);
TNDEF tn_tensor *tn_std(tn_tensor *x, int64_t correction);
TNDEF tn_tensor *tn_std_dims(tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim);
/* Vector p-norm: p = 2 by default; INFINITY, -INFINITY, 0 (count of nonzeros), any p. */
TNDEF tn_tensor *tn_norm(tn_tensor *x, double p);
TNDEF tn_tensor *tn_norm_dims(tn_tensor *x, double p, const int64_t *dims, int n, bool keepdim);
TNDEF tn_tensor *tn_logsumexp(tn_tensor *x, const int64_t *dims, int n, bool keepdim);
TNDEF tn_tensor *tn_cumsum(tn_tensor *x, int64_t dim);
TNDEF tn_tensor *tn_cumprod(tn_tensor *x, int64_t dim);
TNDEF tn_tensor *tn_all(tn_tensor *x);          /* bool 0-d */
TNDEF tn_tensor *tn_any(tn_tensor *x);
TNDEF tn_tensor *tn_all_dim(tn_tensor *x, int64_t dim, bool keepdim);
TNDEF tn_tensor *tn_any_dim(tn_tensor *x, int64_t dim, bool keepdim);
/* Sorted values along dim (stable; NaN counts as largest); indices as in tn_max_dim. */
TNDEF tn_tensor *tn_sort(tn_tensor *x, int64_t dim, bool descending, tn_tensor **indices);
TNDEF tn_tensor *tn_argsort(tn_tensor *x, int64_t dim, bool descending);
/* The k largest (or smallest) along dim, sorted. */
TNDEF tn_tensor *tn_topk(tn_tensor *x, int64_t k, int64_t dim, bool largest, tn_tensor **indices);

/* ======================================================================= */
/* 9. linear algebra                                                        */
/* ======================================================================= */
/* matmul as torch.matmul: 1-D operands are promoted and the added dim removed; batch
   dims broadcast. Both operands must share a dtype. Transposed views are used as they
   are (no copy). */
TNDEF tn_tensor *tn_matmul(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_mm(tn_tensor *a, tn_tensor *b);       /* [n,k] @ [k,m] */
TNDEF tn_tensor *tn_bmm(tn_tensor *a, tn_tensor *b);      /* [B,n,k] @ [B,k,m] */
TNDEF tn_tensor *tn_mv(tn_tensor *a, tn_tensor *v);       /* [n,k] @ [k] */
TNDEF tn_tensor *tn_dot(tn_tensor *a, tn_tensor *b);      /* 1-D . 1-D -> 0-d */
TNDEF tn_tensor *tn_outer(tn_tensor *a, tn_tensor *b);    /* [n] x [m] -> [n,m] */
/* beta*input + alpha*(m1 @ m2); input broadcasts to the result. */
TNDEF tn_tensor *tn_addmm(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, double beta, double alpha);
TNDEF tn_tensor *tn_baddbmm(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, double beta, double alpha);

/* ======================================================================= */
/* 10. nn functional                                                        */
/* ======================================================================= */
/* Scalar activations shared by the CPU kernels and tensor_cuda.cu (one formula each). */
#define TN__DEFINE_ACTIVATIONS(T, S, F) \
    TN_HD static inline T tn_sigmoid_##S(T x) { \
        return x >= 0 ? (T)1 / ((T)1 + exp##F(-x)) : exp##F(x) / ((T)1 + exp##F(x)); } \
    TN_HD static inline T tn_silu_##S(T x) { return x * tn_sigmoid_##S(x); } \
    TN_HD static inline T tn_gelu_##S(T x) { return (T)0.5 * x * ((T)1 + erf##F(x * (T)0.70710678118654752440)); } \
    TN_HD static inline T tn_gelu_tanh_##S(T x) { \
        return (T)0.5 * x * ((T)1 + tanh##F((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x))); } \
    /* softplus = log(1 + exp(beta x)) / beta, linear above threshold as PyTorch */ \
    TN_HD static inline T tn_softplus_##S(T x, T beta, T threshold) { \
        return x * beta > threshold ? x : log1p##F(exp##F(x * beta)) / beta; } \
    TN_HD static inline T tn_leaky_relu_##S(T x, T slope) { return x > 0 ? x : x * slope; } \
    /* elu, selu and celu: scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)) */ \
    TN_HD static inline T tn_elu_##S(T x, T alpha, T scale, T input_scale) { \
        return x > 0 ? scale * x : scale * alpha * expm1##F(x * input_scale); } \
    TN_HD static inline T tn_hardtanh_##S(T x, T lo, T hi) { return x < lo ? lo : x > hi ? hi : x; } \
    TN_HD static inline T tn_mish_##S(T x) { return x * tanh##F(log1p##F(exp##F(x))); } \
    TN_HD static inline T tn_hardsigmoid_##S(T x) { return tn_hardtanh_##S(x + (T)3, (T)0, (T)6) / (T)6; } \
    TN_HD static inline T tn_hardswish_##S(T x) { return x * tn_hardsigmoid_##S(x); }
TN__DEFINE_ACTIVATIONS(float, f32, f)
TN__DEFINE_ACTIVATIONS(double, f64, )

/* Numerically stable (max subtracted). Integer inputs give float32. */
TNDEF tn_tensor *tn_softmax(tn_tensor *x, int64_t dim);
TNDEF tn_tensor *tn_log_softmax(tn_tensor *x, int64_t dim);

/* Activations beyond section 7's relu, gelu, silu, softplus, sigmoid, tanh (floating
   inputs; PyTorch's defaults in the comments). */
TNDEF tn_tensor *tn_relu6(tn_tensor *x);
TNDEF tn_tensor *tn_leaky_relu(tn_tensor *x, double negative_slope);        /* 0.01 */
TNDEF tn_tensor *tn_elu(tn_tensor *x, double alpha);                        /* 1.0 */
TNDEF tn_tensor *tn_selu(tn_tensor *x);
TNDEF tn_tensor *tn_celu(tn_tensor *x, double alpha);                       /* 1.0 */
TNDEF tn_tensor *tn_hardtanh(tn_tensor *x, double min_val, double max_val); /* -1, 1 */
TNDEF tn_tensor *tn_mish(tn_tensor *x);
TNDEF tn_tensor *tn_hardswish(tn_tensor *x);
TNDEF tn_tensor *tn_hardsigmoid(tn_tensor *x);

/* Linear layers: x [*, in], weight [out, in], bias [out] or NULL. */
TNDEF tn_tensor *tn_linear(tn_tensor *x, tn_tensor *weight, tn_tensor *bias);
/* x1 [*, in1], x2 [*, in2], weight [out, in1, in2], bias [out] or NULL: x1^T W x2 + b. */
TNDEF tn_tensor *tn_bilinear(tn_tensor *x1, tn_tensor *x2, tn_tensor *weight, tn_tensor *bias);

/* Convolutions (F.conv1d / F.conv2d / F.conv_transpose2d): x [N, C, *] or unbatched [C, *],
   weight [O, C/groups, k...], bias [O] or NULL. Scalars apply to every spatial dim; the
   _ex forms take one value per dim. padding TN_PAD_SAME is padding='same' (stride 1). */
#define TN_PAD_SAME (-1)
TNDEF tn_tensor *tn_conv1d(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, int64_t stride, int64_t padding, int64_t dilation, int64_t groups);
TNDEF tn_tensor *tn_conv2d(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, int64_t stride, int64_t padding, int64_t dilation, int64_t groups);
TNDEF tn_tensor *tn_conv2d_ex(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const int64_t stride[2], const int64_t padding[2],
                              const int64_t dilation[2], int64_t groups);
/* weight [C, O/groups, kh, kw]; output size (H-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1. */
TNDEF tn_tensor *tn_conv_transpose2d(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, int64_t stride, int64_t padding,
                                     int64_t output_padding, int64_t groups, int64_t dilation);
TNDEF tn_tensor *tn_conv_transpose2d_ex(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const int64_t stride[2], const int64_t padding[2],
                                        const int64_t output_padding[2], int64_t groups, const int64_t dilation[2]);
TNDEF tn_tensor *tn_conv_transpose1d(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, int64_t stride, int64_t padding,
                                     int64_t output_padding, int64_t groups, int64_t dilation);
/* F.unfold / F.fold (im2col / col2im): x [N, C, H, W] -> [N, C*kh*kw, L] and back (summing overlaps). */
TNDEF tn_tensor *tn_im2col(tn_tensor *x, const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2], const int64_t stride[2]);
TNDEF tn_tensor *tn_col2im(tn_tensor *cols, const int64_t output_size[2], const int64_t kernel[2], const int64_t dilation[2],
                           const int64_t padding[2], const int64_t stride[2]);

/* Pooling over [N, C, *] or unbatched [C, *]. stride 0 means stride = kernel (PyTorch's
   None). indices: NULL, or receives the int64 argmax positions (flat over each plane),
   as return_indices=True. */
TNDEF tn_tensor *tn_max_pool1d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode, tn_tensor **indices);
TNDEF tn_tensor *tn_max_pool2d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode, tn_tensor **indices);
TNDEF tn_tensor *tn_max_pool2d_ex(tn_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                                  const int64_t dilation[2], bool ceil_mode, tn_tensor **indices);
/* divisor_override 0: none. */
TNDEF tn_tensor *tn_avg_pool1d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode, bool count_include_pad);
TNDEF tn_tensor *tn_avg_pool2d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode, bool count_include_pad);
TNDEF tn_tensor *tn_avg_pool2d_ex(tn_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2],
                                  bool ceil_mode, bool count_include_pad, int64_t divisor_override);
TNDEF tn_tensor *tn_adaptive_avg_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w);
TNDEF tn_tensor *tn_adaptive_max_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w, tn_tensor **indices);

/* Normalisation. running_mean/var (NULL: none) are updated in place when training:
   new = (1 - momentum) * old + momentum * batch statistic (unbiased variance). */
TNDEF tn_tensor *tn_batch_norm(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, tn_tensor *weight, tn_tensor *bias,
                               bool training, double momentum, double eps);   /* 0.1, 1e-5 */
/* Normalises over the last n dims, which must equal normalized_shape. */
TNDEF tn_tensor *tn_layer_norm(tn_tensor *x, const int64_t *normalized_shape, int n, tn_tensor *weight, tn_tensor *bias, double eps);
TNDEF tn_tensor *tn_group_norm(tn_tensor *x, int64_t num_groups, tn_tensor *weight, tn_tensor *bias, double eps);
TNDEF tn_tensor *tn_instance_norm(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, tn_tensor *weight, tn_tensor *bias,
                                  bool use_input_stats, double momentum, double eps);

/* Dropout (from the default generator): zero with probability p, scale the rest by 1/(1-p);
   the identity when not training. dropout2d zeroes whole channels of [N, C, H, W]; a 3-d
   input is [N, C, L] (rows zeroed), as PyTorch 1.13's F.dropout2d does (with a warning). */
TNDEF tn_tensor *tn_dropout(tn_tensor *x, double p, bool training);
TNDEF tn_tensor *tn_dropout2d(tn_tensor *x, double p, bool training);

/* Rows of weight [V, D] for int64 indices of any shape -> [*, D]. padding_idx (negative
   counts from V) gets no gradient. */
TNDEF tn_tensor *tn_embedding(tn_tensor *indices, tn_tensor *weight);
TNDEF tn_tensor *tn_embedding_padded(tn_tensor *indices, tn_tensor *weight, int64_t padding_idx);
/* int64 [*, num_classes]; num_classes -1: max + 1. */
TNDEF tn_tensor *tn_one_hot(tn_tensor *indices, int64_t num_classes);

/* softmax(q k^T * scale + mask) v. q [*, L, E], k [*, S, E], v [*, S, Ev]; attn_mask NULL,
   bool (true = may attend) or floating (added), broadcast to [*, L, S]; is_causal masks
   j > i; scale 0 means 1/sqrt(E); dropout_p applies to the weights. */
TNDEF tn_tensor *tn_scaled_dot_product_attention(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *attn_mask,
                                                 double dropout_p, bool is_causal, double scale);

/* F.interpolate for [N, C, W] ("nearest", "linear") and [N, C, H, W] ("nearest", "bilinear"):
   size (NULL: from scale_factor) or scale_factor (one value per spatial dim). */
TNDEF tn_tensor *tn_interpolate(tn_tensor *x, const int64_t *size, const double *scale_factor, const char *mode, bool align_corners);
TNDEF tn_tensor *tn_pixel_shuffle(tn_tensor *x, int64_t upscale_factor);     /* [*, C r^2, H, W] -> [*, C, H r, W r] */
TNDEF tn_tensor *tn_pixel_unshuffle(tn_tensor *x, int64_t downscale_factor);

/* ---- losses ---- */
/* torch.nn.functional's losses: same formulas, defaults, broadcasting and errors. Each is
   a composite of the differentiable ops above, so gradients of any order (create_graph)
   reach every floating argument, and the result's grad_fn has PyTorch's name
   ("NllLossBackward0", "MseLossBackward0", ...). PyTorch's defaults are noted as (name=value). */
typedef enum tn_reduction {
    TN_REDUCTION_MEAN = 0, TN_REDUCTION_SUM, TN_REDUCTION_NONE,
    TN_REDUCTION_BATCHMEAN  /* kl_div only: the sum divided by input's first size */
} tn_reduction;
/* (input - target)^2; target broadcasts with input. */
TNDEF tn_tensor *tn_mse_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction);
/* |input - target|; target broadcasts with input. */
TNDEF tn_tensor *tn_l1_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction);
/* 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target; beta=1, >= 0; 0 gives l1). */
TNDEF tn_tensor *tn_smooth_l1_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction, double beta);
/* 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): delta * smooth_l1 with beta = delta (delta=1, > 0). */
TNDEF tn_tensor *tn_huber_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction, double delta);
/* Negative log likelihood of log-probabilities input [N, C], [C] or [N, C, d1, ...] at int64
   class indices target [N], [] or [N, d1, ...]: no weight, ignore_index=-100, mean. */
TNDEF tn_tensor *tn_nll_loss(tn_tensor *input, tn_tensor *target);
/* weight: NULL or [C] (input's dtype). Targets equal to ignore_index count nowhere; the mean
   divides by the summed weights of the other targets (NaN when there are none). */
TNDEF tn_tensor *tn_nll_loss_ex(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction reduction);
/* nll_loss(log_softmax(input, class dim), target) with F.cross_entropy's defaults. */
TNDEF tn_tensor *tn_cross_entropy(tn_tensor *input, tn_tensor *target);
/* target: int64 class indices, or floating class probabilities of input's shape (then
   ignore_index must be -100). label_smoothing in [0, 1] mixes in the uniform distribution. */
TNDEF tn_tensor *tn_cross_entropy_ex(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction reduction, double label_smoothing);
/* -w (t log(x) + (1 - t) log(1 - x)), logs clamped at -100; input in [0, 1], target of
   input's shape and dtype; weight NULL or broadcastable to input. */
TNDEF tn_tensor *tn_binary_cross_entropy(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_reduction reduction);
/* binary_cross_entropy(sigmoid(input), target) in a numerically stable form; pos_weight
   (NULL or broadcastable to target, e.g. [C]) weighs the positive term. */
TNDEF tn_tensor *tn_binary_cross_entropy_with_logits(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_tensor *pos_weight, tn_reduction reduction);
/* target (log(target) - input) for log-probabilities input (exp(target) (target - input) with
   log_target). Mean is over all elements as PyTorch; TN_REDUCTION_BATCHMEAN is the KL divergence. */
TNDEF tn_tensor *tn_kl_div(tn_tensor *input, tn_tensor *target, tn_reduction reduction, bool log_target);
/* sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along dim (torch 1.13's form), x1 and x2
   broadcast together (dim=1, eps=1e-8). */
TNDEF tn_tensor *tn_cosine_similarity(tn_tensor *x1, tn_tensor *x2, int64_t dim, double eps);
/* 1 - cos(x1, x2) where target == 1, max(0, cos - margin) where target == -1 (0 elsewhere);
   x1, x2 [N, D] with target [N], or [D] with a 0-d target (margin=0). */
TNDEF tn_tensor *tn_cosine_embedding_loss(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction reduction);
/* max(0, -target (x1 - x2) + margin); all three of one rank, broadcasting (margin=0). */
TNDEF tn_tensor *tn_margin_ranking_loss(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction reduction);

/* ======================================================================= */
/* 11. autograd engine                                                      */
/* ======================================================================= */
/* Tape-based reverse mode as PyTorch's: an op on inputs that require grad records a
   node (op, edges to its inputs' nodes or leaves, saved tensors) in the result's
   grad_fn; tn_backward walks the nodes in reverse topological order, iteratively, and
   accumulates into leaves' .grad. Backward formulas use the library's own ops, so
   create_graph gives higher-order gradients. Only floating tensors require grad. */
TNDEF bool tn_requires_grad(const tn_tensor *t);
/* Set requires_grad on a leaf (floating dtypes only); 0 or -1 with an error. */
TNDEF int tn_requires_grad_(tn_tensor *t, bool requires_grad);
TNDEF bool tn_is_leaf(const tn_tensor *t);          /* no grad_fn (made by the user, or detached) */
/* Accessor: the tensor's .grad, borrowed (NULL if none); for a non-leaf that called
   tn_retain_grad, the gradient kept by its node. */
TNDEF tn_tensor *tn_grad(const tn_tensor *t);
TNDEF int tn_set_grad(tn_tensor *t, tn_tensor *grad);   /* .grad = grad (retained); NULL clears */
TNDEF int tn_retain_grad(tn_tensor *t);             /* keep the gradient of a non-leaf in tn_grad */
TNDEF bool tn_retains_grad(const tn_tensor *t);     /* whether tn_retain_grad was called on this non-leaf */
TNDEF const char *tn_grad_fn_name(const tn_tensor *t); /* "MulBackward0", ... or NULL for a leaf */
TNDEF int tn_detach_(tn_tensor *t);                 /* drop t's history in place: it becomes a leaf */

/* Grad mode is per thread and nests: no_grad_begin/end, enable_grad_begin/end. */
TNDEF void tn_no_grad_begin(void);
TNDEF void tn_no_grad_end(void);
TNDEF void tn_enable_grad_begin(void);
TNDEF void tn_enable_grad_end(void);
TNDEF bool tn_is_grad_enabled(void);

typedef struct tn_backward_opts {
    int _reserved;        /* lets TN_BACKWARD_OPTS() with no options be valid C */
    bool retain_graph;    /* keep saved tensors for another backward */
    bool create_graph;    /* record the backward pass itself (higher-order gradients) */
    bool allow_unused;    /* tn_autograd_grad: an input the outputs do not depend on gives NULL, not an error */
} tn_backward_opts;
#ifndef __cplusplus
#define TN_BACKWARD_OPTS(...) ((tn_backward_opts){._reserved = 0, __VA_ARGS__})
#endif
/* Backward from a one-element tensor (gradient 1). Returns 0 or -1 with an error. */
TNDEF int tn_backward(tn_tensor *t);
/* Backward from t with the given gradient (t's shape; NULL means ones for one element). */
TNDEF int tn_backward_with(tn_tensor *t, tn_tensor *gradient, tn_backward_opts opts);
/* torch.autograd.grad: results[i] = d(sum outputs . grad_outputs)/d inputs[i] (new
   references, same ownership rule as op results; NULL for unused inputs with
   allow_unused). grad_outputs may be NULL (ones for one-element outputs). .grad is untouched. */
TNDEF int tn_autograd_grad(tn_tensor *const *outputs, int n_outputs, tn_tensor *const *inputs, int n_inputs,
                           tn_tensor *const *grad_outputs, tn_tensor **results, tn_backward_opts opts);

/* A hook sees the gradient flowing into t during backward and may replace it: return
   a tensor (borrowed: the engine retains it, so the result of any op will do) or NULL
   to keep the gradient. The engine calls hooks inside a scope: tensors a hook makes are
   owned by that scope (a binding that keeps one must retain it). */

typedef tn_tensor *(*tn_hook_fn)(tn_tensor *grad, void *user);
TNDEF int tn_register_hook(tn_tensor *t, tn_hook_fn fn, void *user); /* a handle >= 0, or -1 */
TNDEF int tn_remove_hook(tn_tensor *t, int handle);

/* Custom differentiable ops ("extensions without pain"): forward computes the result from
   the inputs (run under no_grad; it may keep tensors for backward with tn_ctx_save);
   backward receives the result's gradient and writes grad_inputs[i] for each input that
   needs one (or leaves NULL), using library ops, so create_graph works through it too.
   Tensors either callback returns follow the usual rule (they may come from any op);
   return 0 from backward, or -1 after recording an error. See examples/custom_op.c. */
typedef struct tn_node tn_ctx;
typedef tn_tensor *(*tn_custom_forward)(tn_ctx *ctx, tn_tensor *const *inputs, int n, void *user);
typedef int (*tn_custom_backward)(tn_ctx *ctx, tn_tensor *grad_output, tn_tensor **grad_inputs, int n, void *user);
TNDEF tn_tensor *tn_custom_op(const char *name, tn_custom_forward forward, tn_custom_backward backward,
                              tn_tensor *const *inputs, int n, void *user);
TNDEF int tn_ctx_save(tn_ctx *ctx, tn_tensor *t);          /* keep t for backward (version-checked) */
TNDEF tn_tensor *tn_ctx_saved(tn_ctx *ctx, int i);         /* the i-th saved tensor, borrowed */
TNDEF int tn_ctx_nsaved(tn_ctx *ctx);
TNDEF bool tn_ctx_needs_grad(tn_ctx *ctx, int i);          /* whether input i needs a gradient */

/* Debugging: names shown in graph dumps and messages; a Graphviz DOT dump of the graph
   behind t (the caller frees it with tn_string_free); anomaly mode makes backward report
   the first node whose gradient has a NaN, by name. */
TNDEF int tn_set_name(tn_tensor *t, const char *name);     /* copied */
TNDEF const char *tn_get_name(const tn_tensor *t);         /* borrowed, NULL if unnamed */
TNDEF char *tn_graph_dot(tn_tensor *t);
TNDEF void tn_set_detect_anomaly(bool enabled);
TNDEF bool tn_is_anomaly_enabled(void);

/* Compares analytical gradients (autograd) with central finite differences for every

   input that requires grad (use float64). fn maps the inputs to one output tensor.
   Returns true if all agree within atol + rtol*|numerical|; else false with the worst
   element described in tn_last_error(). */
typedef tn_tensor *(*tn_gradcheck_fn)(tn_tensor *const *inputs, int n, void *user);
TNDEF bool tn_gradcheck(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, double eps, double atol, double rtol);
/* The same check for the gradients of the gradients (create_graph through every formula). */
TNDEF bool tn_gradgradcheck(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, double eps, double atol, double rtol);


/* ======================================================================= */
/* 12. modules                                                              */
/* ======================================================================= */
/* tn_dict: an ordered map from names to tensors (state dicts, optimizer state, the
   contents of a safetensors file), plus string metadata. Keys are copied; values are
   retained (a value may be NULL, as in a list of missing keys). Lookups are linear. */
typedef struct tn_dict tn_dict;
TNDEF tn_dict *tn_dict_new(void);
TNDEF void tn_dict_free(tn_dict *d);                               /* releases its tensors */
TNDEF int tn_dict_set(tn_dict *d, const char *key, tn_tensor *t);  /* retains t; an existing key keeps its place */
TNDEF tn_tensor *tn_dict_get(const tn_dict *d, const char *key);   /* borrowed; NULL if absent (no error) */
TNDEF bool tn_dict_contains(const tn_dict *d, const char *key);
TNDEF int tn_dict_remove(tn_dict *d, const char *key);             /* 0, or -1 if absent (no error) */
TNDEF int tn_dict_len(const tn_dict *d);
TNDEF const char *tn_dict_key(const tn_dict *d, int i);            /* borrowed; NULL out of range */
TNDEF tn_tensor *tn_dict_value(const tn_dict *d, int i);           /* borrowed */
TNDEF tn_tensor *const *tn_dict_values(const tn_dict *d);          /* all values in order, borrowed */
TNDEF int tn_dict_set_meta(tn_dict *d, const char *key, const char *value); /* string metadata (copied) */
TNDEF const char *tn_dict_get_meta(const tn_dict *d, const char *key);      /* NULL if absent */
TNDEF int tn_dict_meta_len(const tn_dict *d);
TNDEF const char *tn_dict_meta_key(const tn_dict *d, int i);

/* Modules (nn.Module): a type (name, forward, ...) plus named parameters, buffers and
   children, with PyTorch's state_dict names ("0.weight", "bn.running_mean"). Layers come
   from tn_nn_* constructors that take PyTorch's arguments (keyword arguments as option
   text, "stride=2, padding=1"). A module owns its children and retains its tensors;
   tn_module_free frees the tree. A user module embeds tn_module as its first member,
   allocates itself with tn_module_new and registers what it holds (examples/custom_module.c). */
typedef struct tn_module tn_module;
typedef struct tn_module_type {
    const char *name;                                          /* PyTorch's class name, "Linear" */
    tn_tensor *(*forward)(tn_module *m, tn_tensor *x);         /* one input, one output; NULL: none */
    void (*destroy)(tn_module *m);                             /* frees what the type allocated itself; NULL: nothing */
    void (*extra_repr)(tn_module *m, char *buf, size_t cap);   /* "in_features=4, out_features=2, bias=True"; NULL: none */
} tn_module_type;
typedef struct tn__slot tn__slot;
struct tn_module {
    const tn_module_type *type;
    bool training;
    int nparams, nbuffers, nchildren, cap[3];
    tn__slot *params, *buffers, *children;   /* in registration order */
};
TNDEF tn_module *tn_module_new(const tn_module_type *type, size_t size);   /* zeroed, size >= sizeof(tn_module), training */
TNDEF void tn_module_free(tn_module *m);                                    /* children first, then m's tensors and m */
/* Register t as parameter name (retained; it becomes a leaf that requires grad); returns t, borrowed.
   An existing name is replaced. */
TNDEF tn_tensor *tn_module_register_parameter(tn_module *m, const char *name, tn_tensor *t);
TNDEF tn_tensor *tn_module_register_buffer(tn_module *m, const char *name, tn_tensor *t, bool persistent);
TNDEF tn_module *tn_module_add(tn_module *m, const char *name, tn_module *child);  /* takes ownership of child; returns it */
TNDEF tn_tensor *tn_module_forward(tn_module *m, tn_tensor *x);
TNDEF tn_tensor *tn_module_get(const tn_module *m, const char *name);       /* parameter or buffer by dotted name, borrowed */
TNDEF tn_module *tn_module_child(const tn_module *m, const char *name);     /* by dotted name ("encoder.layers.0") */
TNDEF tn_module *tn_module_child_at(const tn_module *m, int i, const char **name);
TNDEF int tn_module_num_children(const tn_module *m);
TNDEF const char *tn_module_name(const tn_module *m);                       /* its type's name */
/* Recursive, in PyTorch's order, values are the tensors themselves; the caller frees the dict. */
TNDEF tn_dict *tn_module_named_parameters(const tn_module *m);
TNDEF tn_dict *tn_module_named_buffers(const tn_module *m);
TNDEF tn_dict *tn_module_state_dict(const tn_module *m);                    /* parameters and persistent buffers, detached */
/* Copy sd's tensors into the module's (no autograd). strict: missing or unexpected keys are
   an error; otherwise their names go into missing/unexpected (either may be NULL). A shape
   mismatch is always an error. On error nothing is loaded. */
TNDEF int tn_module_load_state_dict(tn_module *m, const tn_dict *sd, bool strict, tn_dict *missing, tn_dict *unexpected);
TNDEF void tn_module_train(tn_module *m, bool mode);                        /* recursive */
TNDEF void tn_module_eval(tn_module *m);
TNDEF void tn_module_zero_grad(tn_module *m);                               /* .grad = NULL on every parameter */
TNDEF int64_t tn_module_num_parameters(const tn_module *m);                 /* elements over all parameters */
typedef void (*tn_module_fn)(tn_module *m, void *user);
TNDEF void tn_module_apply(tn_module *m, tn_module_fn fn, void *user);      /* children first, then m, as PyTorch */
TNDEF char *tn_module_repr(const tn_module *m);                             /* print(model); free with tn_string_free */
TNDEF int tn_module_to(tn_module *m, tn_device device);                     /* moves every parameter and buffer in place */
TNDEF int tn_module_to_dtype(tn_module *m, tn_dtype dtype);                 /* floating parameters and buffers */

/* nn.init: in place, no autograd, from the default generator. */
TNDEF double tn_init_calculate_gain(const char *nonlinearity, double param); /* param: leaky_relu's slope (NAN: 0.01) */
TNDEF int tn_init_uniform_(tn_tensor *t, double a, double b);
TNDEF int tn_init_normal_(tn_tensor *t, double mean, double std);
TNDEF int tn_init_constant_(tn_tensor *t, double value);
TNDEF int tn_init_zeros_(tn_tensor *t);
TNDEF int tn_init_ones_(tn_tensor *t);
TNDEF int tn_init_xavier_uniform_(tn_tensor *t, double gain);
TNDEF int tn_init_xavier_normal_(tn_tensor *t, double gain);
/* mode "fan_in" | "fan_out"; nonlinearity as calculate_gain (a: leaky_relu's slope). */
TNDEF int tn_init_kaiming_uniform_(tn_tensor *t, double a, const char *mode, const char *nonlinearity);
TNDEF int tn_init_kaiming_normal_(tn_tensor *t, double a, const char *mode, const char *nonlinearity);
TNDEF int tn_init_orthogonal_(tn_tensor *t, double gain);
TNDEF int tn_init_trunc_normal_(tn_tensor *t, double mean, double std, double a, double b);

/* Layers: PyTorch's constructor arguments; options are the keyword arguments as text.
   Initialisation as PyTorch's reset_parameters. */
TNDEF tn_module *tn_nn_linear(int64_t in_features, int64_t out_features, bool bias);
TNDEF tn_module *tn_nn_bilinear(int64_t in1_features, int64_t in2_features, int64_t out_features, bool bias);
TNDEF tn_tensor *tn_nn_bilinear_forward(tn_module *m, tn_tensor *x1, tn_tensor *x2);   /* two inputs */

/* options: stride, padding (n, (h, w), 'same', 'valid'), dilation, groups, bias, padding_mode ('zeros'), kernel_size=(h, w) */
TNDEF tn_module *tn_nn_conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
/* options: stride, padding, output_padding, groups, bias, dilation, kernel_size=(h, w) */
TNDEF tn_module *tn_nn_conv_transpose2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
/* options: stride, padding, dilation, ceil_mode (max); stride, padding, ceil_mode, count_include_pad, divisor_override (avg) */
TNDEF tn_module *tn_nn_max_pool2d(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_avg_pool2d(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_max_pool1d(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_avg_pool1d(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_adaptive_avg_pool2d(int64_t out_h, int64_t out_w);
TNDEF tn_module *tn_nn_adaptive_max_pool2d(int64_t out_h, int64_t out_w);
/* options: eps, momentum (None: cumulative average), affine, track_running_stats */
TNDEF tn_module *tn_nn_batch_norm1d(int64_t num_features, const char *options);
TNDEF tn_module *tn_nn_batch_norm2d(int64_t num_features, const char *options);
/* options: eps, elementwise_affine, bias */
TNDEF tn_module *tn_nn_layer_norm(const int64_t *normalized_shape, int n, const char *options);
/* options: eps, affine */
TNDEF tn_module *tn_nn_group_norm(int64_t num_groups, int64_t num_channels, const char *options);
TNDEF tn_module *tn_nn_dropout(double p);
TNDEF tn_module *tn_nn_dropout2d(double p);
/* options: padding_idx */
TNDEF tn_module *tn_nn_embedding(int64_t num_embeddings, int64_t embedding_dim, const char *options);
TNDEF tn_module *tn_nn_flatten(int64_t start_dim, int64_t end_dim);       /* 1, -1 */
TNDEF tn_module *tn_nn_unflatten(int64_t dim, const int64_t *sizes, int n);
TNDEF tn_module *tn_nn_identity(void);
/* Activations as modules: "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
   "Mish", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanh", "Sigmoid", "Softmax",
   "LogSoftmax", with their keyword arguments ("negative_slope=0.2", "approximate='tanh'", "dim=1"). */
TNDEF tn_module *tn_nn_activation(const char *name, const char *options);
TNDEF tn_module *tn_nn_relu(void);
TNDEF tn_module *tn_nn_tanh(void);
TNDEF tn_module *tn_nn_sigmoid(void);
TNDEF tn_module *tn_nn_gelu(void);
/* Containers. tn_nn_sequential(a, b, c) (C; C++ and bindings call tn_nn_sequential_n) names
   its children "0", "1", ...; if any is NULL (a failed constructor) all are freed. */
TNDEF tn_module *tn_nn_sequential_n(tn_module *const *mods, int n);
#ifndef __cplusplus
#define tn_nn_sequential(...) tn_nn_sequential_n((tn_module *const[]){__VA_ARGS__}, (int)(sizeof((tn_module *const[]){__VA_ARGS__}) / sizeof(tn_module *)))
#endif
TNDEF tn_module *tn_nn_sequential_append(tn_module *seq, tn_module *m);   /* also for ModuleList; returns m */
TNDEF tn_module *tn_nn_module_list(void);                                  /* no forward */
TNDEF tn_module *tn_nn_module_dict(void);                                  /* add with tn_module_add; no forward */

/* ---- recurrent and attention modules ---- */
/* Functional RNN cells (torch.rnn_tanh_cell, torch.lstm_cell, torch.gru_cell): one time step.
   x [N, in] or unbatched [in]; h and c [N, H] or [H]; w_ih [G*H, in], w_hh [G*H, H], b_ih and
   b_hh [G*H] or NULL. Gates in PyTorch's order: LSTM (i, f, g, o), G = 4; GRU (r, z, n), G = 3,
   with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)); plain RNN G = 1. Differentiable. */
TNDEF tn_tensor *tn_rnn_tanh_cell(tn_tensor *x, tn_tensor *h, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh);
TNDEF tn_tensor *tn_rnn_relu_cell(tn_tensor *x, tn_tensor *h, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh);
/* Returns h'; *c_out (may be NULL) receives c', under the same ownership rule. */
TNDEF tn_tensor *tn_lstm_cell(tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh,
                              tn_tensor **c_out);
TNDEF tn_tensor *tn_gru_cell(tn_tensor *x, tn_tensor *h, tn_tensor *w_ih, tn_tensor *w_hh, tn_tensor *b_ih, tn_tensor *b_hh);

/* nn.RNN / nn.LSTM / nn.GRU. options: num_layers=1, bias=True, batch_first=False, dropout=0
   (between layers, when training), bidirectional=False; nonlinearity='tanh'|'relu' (RNN only);
   proj_size=0 (LSTM only). Parameters weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
   (weight_hr_l{k} with proj_size), "_reverse" for the backward direction; all U(-1/sqrt(hidden),
   1/sqrt(hidden)). The module's single-input forward returns the output only. */
TNDEF tn_module *tn_nn_rnn(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_lstm(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_gru(int64_t input_size, int64_t hidden_size, const char *options);
/* RNN and GRU: x [L, N, H_in] ([N, L, H_in] with batch_first) or unbatched [L, H_in]; h0
   [D*num_layers, N, H_out] or [D*num_layers, H_out], NULL = zeros. Returns the output
   [L, N, D*H_out] ([N, L, D*H_out], [L, D*H_out]); *h_n (may be NULL) receives the final
   states, shaped as h0. D = 2 when bidirectional. */
TNDEF tn_tensor *tn_nn_rnn_forward(tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor **h_n);
/* LSTM: as tn_nn_rnn_forward with the cell state c0 [D*num_layers, N, hidden] (h0 and c0 both
   given or both NULL); H_out is proj_size when set. */
TNDEF tn_tensor *tn_nn_lstm_forward(tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor *c0, tn_tensor **h_n, tn_tensor **c_n);
/* nn.RNNCell (options: bias, nonlinearity), nn.LSTMCell, nn.GRUCell (option: bias); parameters
   weight_ih, weight_hh, bias_ih, bias_hh. Forwards take x [N, in] or [in]; NULL states are zeros. */
TNDEF tn_module *tn_nn_rnn_cell(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_lstm_cell(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_gru_cell(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_tensor *tn_nn_rnn_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h);        /* RNNCell (or GRUCell) */
TNDEF tn_tensor *tn_nn_lstm_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor **c_out);
TNDEF tn_tensor *tn_nn_gru_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h);        /* GRUCell (or RNNCell) */

/* nn.MultiheadAttention. options: dropout=0, bias=True, add_bias_kv=False, add_zero_attn=False,
   kdim=None, vdim=None, batch_first=False. Parameters as PyTorch's state dict: in_proj_weight
   [3E, E] (xavier_uniform; q_proj_weight, k_proj_weight, v_proj_weight when kdim or vdim differ
   from E), in_proj_bias [3E] (zeros), bias_k, bias_v [1, 1, E] (add_bias_kv), child out_proj. */
TNDEF tn_module *tn_nn_multihead_attention(int64_t embed_dim, int64_t num_heads, const char *options);
/* q [L, N, E], k [S, N, kdim], v [S, N, vdim] ([N, L, E] ... with batch_first) or unbatched
   [L, E], [S, kdim], [S, vdim]. key_padding_mask [N, S] / [S] and attn_mask [L, S] or
   [N*num_heads, L, S]: bool masks are True where attention is NOT allowed (the opposite of
   tn_scaled_dot_product_attention's bool mask); floating masks are added to the scores. is_causal
   with attn_mask NULL masks keys after the query position (with attn_mask, the mask is used).
   Returns [L, N, E] (as q); with need_weights, *attn_weights (may be NULL) receives the
   attention weights [N, L, S] averaged over heads or [N, num_heads, L, S] (unbatched: no N). */
TNDEF tn_tensor *tn_nn_mha_forward(tn_module *m, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *key_padding_mask,
                                   tn_tensor *attn_mask, bool need_weights, bool average_attn_weights, bool is_causal,
                                   tn_tensor **attn_weights);
/* nn.Transformer.generate_square_subsequent_mask: [sz, sz], -inf above the diagonal, 0 elsewhere. */
TNDEF tn_tensor *tn_nn_generate_square_subsequent_mask(int64_t sz, tn_dtype dtype);

/* nn.TransformerEncoderLayer / nn.TransformerDecoderLayer. options: dim_feedforward=2048,
   dropout=0.1, activation='relu'|'gelu', layer_norm_eps=1e-5, batch_first=False,
   norm_first=False, bias=True. Children as PyTorch's (self_attn, [multihead_attn,] linear1,
   dropout, linear2, norm1, norm2, [norm3,] dropout1, dropout2[, dropout3]). Masks as
   tn_nn_mha_forward's; NULL for none. The encoder layer's single-input forward uses no mask. */
TNDEF tn_module *tn_nn_transformer_encoder_layer(int64_t d_model, int64_t nhead, const char *options);
TNDEF tn_tensor *tn_nn_transformer_encoder_layer_forward(tn_module *m, tn_tensor *src, tn_tensor *src_mask,
                                                         tn_tensor *src_key_padding_mask, bool is_causal);
TNDEF tn_module *tn_nn_transformer_decoder_layer(int64_t d_model, int64_t nhead, const char *options);
TNDEF tn_tensor *tn_nn_transformer_decoder_layer_forward(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_tensor *tgt_mask,
                                                         tn_tensor *memory_mask, tn_tensor *tgt_key_padding_mask,
                                                         tn_tensor *memory_key_padding_mask, bool tgt_is_causal);
/* nn.TransformerEncoder / nn.TransformerDecoder: children "layers" (a ModuleList of num_layers
   deep copies of layer, all starting with its weights, as PyTorch's _get_clones) and "norm" (if
   not NULL). Both modules are taken over: layer is freed after copying, norm becomes the child;
   on error both are freed. */
TNDEF tn_module *tn_nn_transformer_encoder(tn_module *encoder_layer, int64_t num_layers, tn_module *norm);
TNDEF tn_tensor *tn_nn_transformer_encoder_forward(tn_module *m, tn_tensor *src, tn_tensor *mask, tn_tensor *src_key_padding_mask,
                                                   bool is_causal);
TNDEF tn_module *tn_nn_transformer_decoder(tn_module *decoder_layer, int64_t num_layers, tn_module *norm);
TNDEF tn_tensor *tn_nn_transformer_decoder_forward(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_tensor *tgt_mask,
                                                   tn_tensor *memory_mask, tn_tensor *tgt_key_padding_mask,
                                                   tn_tensor *memory_key_padding_mask, bool tgt_is_causal);

/* ======================================================================= */
/* 13. optimizers                                                           */
/* ======================================================================= */
/* torch.optim with PyTorch 2's algorithms: an optimizer updates leaf tensors (float32 or
   float64, CPU) from their .grad. Options are PyTorch's keyword arguments as text, with
   PyTorch's names and defaults ("lr=0.01, momentum=0.9, nesterov=True"); an unknown name,
   a wrong kind of value or an invalid value is an error. An optimizer retains its
   parameters until tn_optim_free. A scheduler borrows its optimizer (which must outlive
   it) and writes the groups' "lr". Guide: docs/optim.md. */
typedef struct tn_optim tn_optim;
/* kind: "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
   "RAdam", "LBFGS". params: leaf tensors that require grad (borrowed; the optimizer
   retains them), one group. NULL with an error on a bad kind, option or parameter. */
TNDEF tn_optim *tn_optim_create(const char *kind, tn_tensor *const *params, int n, const char *options);
TNDEF tn_optim *tn_optim_sgd(tn_tensor *const *params, int n, double lr, double momentum, double weight_decay);
TNDEF tn_optim *tn_optim_adam(tn_tensor *const *params, int n, double lr);
TNDEF tn_optim *tn_optim_adamw(tn_tensor *const *params, int n, double lr, double weight_decay);
/* A new parameter group: options override the optimizer's defaults (the options it was
   created with). 0, or -1 with an error (a parameter already in a group; LBFGS). */
TNDEF int tn_optim_add_param_group(tn_optim *o, tn_tensor *const *params, int n, const char *options);
TNDEF int tn_optim_num_groups(const tn_optim *o);
TNDEF int tn_optim_num_params(const tn_optim *o);             /* across groups, in PyTorch's numbering */
TNDEF tn_tensor *tn_optim_param(const tn_optim *o, int i);     /* the i-th parameter, borrowed */
/* param_groups[group][name]: "lr", "momentum", "betas[0]", "betas[1]", bools as 0/1,
   "initial_lr" once a scheduler set it, ... NAN with an error if unknown. */
TNDEF double tn_optim_get(const tn_optim *o, int group, const char *name);
/* param_groups[group][name] = value, read by the next step (not validated, as in
   PyTorch). Names are the group's options and the schedulers' keys (initial_lr, max_lr,
   min_lr, max_momentum, base_momentum); anything else is an error (catches typos). */
TNDEF int tn_optim_set(tn_optim *o, int group, const char *name, double value);
/* One update of every parameter that has a .grad (the others are skipped), without
   recording autograd; state (exp_avg, ...) is created on a parameter's first update.
   0, or -1 with an error. LBFGS needs tn_optim_step_closure. */
TNDEF int tn_optim_step(tn_optim *o);
/* Re-evaluates the model (zero_grad, forward, backward) and returns the loss, or NAN
   after recording an error (a NaN from the closure counts as its error). */
typedef double (*tn_closure)(void *user);
/* optimizer.step(closure): the closure runs with grad mode on, then the update (LBFGS
   calls it several times). Returns the first loss; NAN on error (and when the closure
   returned NaN: nothing is updated then). closure NULL (not for LBFGS) = tn_optim_step,
   returning 0. */
TNDEF double tn_optim_step_closure(tn_optim *o, tn_closure closure, void *user);
TNDEF void tn_optim_zero_grad(tn_optim *o);                   /* .grad = NULL on every parameter (set_to_none=True) */
TNDEF void tn_optim_zero_grad_set_to_none(tn_optim *o, bool set_to_none); /* false: zero the grads in place (detached) */
/* optimizer.state[param i][name] ("exp_avg", "step", ...), borrowed; NULL if absent
   (no error). LBFGS keeps its state as PyTorch does, under parameter 0, but only
   tn_optim_state_dict shows it. */
TNDEF tn_tensor *tn_optim_state(const tn_optim *o, int param, const char *name);
/* optimizer.state_dict() flattened: "state.<i>.<name>" (copies; "step" a 0-d float32)
   and "param_groups.<g>.<option>" (0-d float64; betas as ".betas.0"/".betas.1", bools
   0/1, "params" a 1-d int64 of indices; words such as line_search_fn in the metadata).
   The caller frees it with tn_dict_free. */
TNDEF tn_dict *tn_optim_state_dict(const tn_optim *o);
/* Replaces state and group options by copies of sd's (group count and sizes, option
   names, state names and shapes must match; nothing changes on error). 0 or -1. */
TNDEF int tn_optim_load_state_dict(tn_optim *o, const tn_dict *sd);
TNDEF void tn_optim_free(tn_optim *o);                         /* NULL is a no-op */

/* LR schedulers (torch.optim.lr_scheduler). Creating one performs PyTorch's initial
   step: it records "initial_lr" in each group and sets the epoch-0 learning rate. */
typedef struct tn_lr_scheduler tn_lr_scheduler;
/* kind: "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
   "CosineAnnealingWarmRestarts", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR",
   "ReduceLROnPlateau"; options as PyTorch's ("step_size=30, gamma=0.1",
   "milestones=(30, 80)", "max_lr=0.1, total_steps=1000", "mode='max', patience=5"). */
TNDEF tn_lr_scheduler *tn_lr_scheduler_create(tn_optim *o, const char *kind, const char *options);
/* LambdaLR: lr = initial_lr * lr_lambda(epoch, group, user). */
TNDEF tn_lr_scheduler *tn_lr_scheduler_lambda(tn_optim *o, double (*lr_lambda)(int64_t epoch, int group, void *user), void *user);
/* SequentialLR: schedulers[i] runs from milestones[i-1] (n schedulers, n-1 milestones).
   Takes ownership of the schedulers, also on error (they are freed then). */
TNDEF tn_lr_scheduler *tn_lr_scheduler_sequential(tn_optim *o, tn_lr_scheduler *const *schedulers, int n, const int64_t *milestones);
TNDEF int tn_lr_scheduler_step(tn_lr_scheduler *s);             /* scheduler.step(); 0 or -1 */
TNDEF int tn_lr_scheduler_step_metric(tn_lr_scheduler *s, double metric);  /* ReduceLROnPlateau.step(metric) (others: error) */
TNDEF double tn_lr_scheduler_get_last_lr(const tn_lr_scheduler *s, int group); /* NAN with an error if no such group */
TNDEF int64_t tn_lr_scheduler_last_epoch(const tn_lr_scheduler *s);
TNDEF void tn_lr_scheduler_free(tn_lr_scheduler *s);           /* NULL is a no-op */

/* torch.nn.utils.clip_grad_norm_: scales the grads so that their joint norm is at most
   max_norm (coefficient max_norm / (norm + 1e-6), as PyTorch); returns the total norm
   before clipping (NAN on error). norm_type INFINITY for the max-norm. Parameters
   without a grad are skipped (none: returns 0). */
TNDEF double tn_clip_grad_norm_(tn_tensor *const *params, int n, double max_norm, double norm_type);
TNDEF int tn_clip_grad_value_(tn_tensor *const *params, int n, double clip_value); /* grads clamped to [-clip_value, clip_value] */

/* Update rules, one element at a time, shared by the CPU step and tensor_cuda.cu. Each
   follows the tensor ops of PyTorch 2's _single_tensor_<optimizer> in order, with the
   per-step scalars (bias corrections, step sizes) computed by the caller in double and
   passed in the element type, as PyTorch's kernels receive them. State arguments are
   read and written; the new parameter value is returned. */
#define TN_OPTF_MAXIMIZE 1        /* the gradient is negated first */
#define TN_OPTF_WEIGHT_DECAY 2    /* weight_decay != 0: grad += weight_decay * param */
#define TN_OPTF_MOMENTUM 4        /* SGD: momentum != 0; RMSprop: momentum > 0 */
#define TN_OPTF_NESTEROV 8
#define TN_OPTF_FIRST 16          /* SGD: no momentum buffer yet (it starts as the gradient) */
#define TN_OPTF_AMSGRAD 32
#define TN_OPTF_CENTERED 64
#define TN_OPTF_DECOUPLED 128     /* AdamW, NAdam/RAdam decoupled_weight_decay: param *= 1 - lr*weight_decay */
#define TN_OPTF_RECTIFY 256       /* RAdam: rho_t > 5 */
#define TN__DEFINE_OPTIM_RULES(T, S, F) \
    /* torch.lerp(a, b, w), exact at both ends */ \
    TN_HD static inline T tn_optim_lerp_##S(T a, T b, T w) { \
        return fabs##F(w) < (T)0.5 ? a + w * (b - a) : b - (b - a) * ((T)1 - w); } \
    /* torch.maximum: NaN propagates */ \
    TN_HD static inline T tn_optim_max_##S(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; } \
    TN_HD static inline T tn__optim_grad_##S(T *p, T g, T wd, T decay, int f) { \
        if (f & TN_OPTF_MAXIMIZE) g = -g; \
        if (f & TN_OPTF_DECOUPLED) *p = *p * decay; \
        else if (f & TN_OPTF_WEIGHT_DECAY) g = g + wd * *p; \
        return g; } \
    TN_HD static inline T tn_sgd_update_##S(T p, T g, T *buf, T lr, T momentum, T one_minus_dampening, T wd, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED); \
        if (f & TN_OPTF_MOMENTUM) { \
            T b = (f & TN_OPTF_FIRST) ? g : *buf * momentum + one_minus_dampening * g; \
            *buf = b; \
            g = (f & TN_OPTF_NESTEROV) ? g + momentum * b : b; \
        } \
        return p + (-lr) * g; } \
    /* Adam, and AdamW with TN_OPTF_DECOUPLED (decay = 1 - lr*weight_decay) */ \
    TN_HD static inline T tn_adam_update_##S(T p, T g, T *m, T *v, T *vmax, T wd, T decay, T one_minus_beta1, \
                                             T beta2, T one_minus_beta2, T bias_correction2_sqrt, T eps, T neg_step_size, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, decay, f); \
        *m = tn_optim_lerp_##S(*m, g, one_minus_beta1); \
        *v = *v * beta2 + one_minus_beta2 * g * g; \
        T den; \
        if (f & TN_OPTF_AMSGRAD) { *vmax = tn_optim_max_##S(*vmax, *v); den = sqrt##F(*vmax) / bias_correction2_sqrt + eps; } \
        else den = sqrt##F(*v) / bias_correction2_sqrt + eps; \
        return p + neg_step_size * *m / den; } \
    TN_HD static inline T tn_rmsprop_update_##S(T p, T g, T *square_avg, T *grad_avg, T *buf, T wd, T alpha, \
                                                T one_minus_alpha, T eps, T momentum, T lr, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED); \
        *square_avg = *square_avg * alpha + one_minus_alpha * g * g; \
        T avg; \
        if (f & TN_OPTF_CENTERED) { \
            *grad_avg = tn_optim_lerp_##S(*grad_avg, g, one_minus_alpha); \
            avg = sqrt##F(*square_avg + (T)-1 * *grad_avg * *grad_avg); \
        } else avg = sqrt##F(*square_avg); \
        avg = avg + eps; \
        if (f & TN_OPTF_MOMENTUM) { *buf = *buf * momentum + g / avg; return p + (-lr) * *buf; } \
        return p + (-lr) * g / avg; } \
    /* clr = lr / (1 + (step - 1) * lr_decay) */ \
    TN_HD static inline T tn_adagrad_update_##S(T p, T g, T *sum, T wd, T eps, T clr, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED); \
        *sum = *sum + (T)1 * g * g; \
        return p + (-clr) * g / (sqrt##F(*sum) + eps); } \
    TN_HD static inline T tn_adadelta_update_##S(T p, T g, T *square_avg, T *acc_delta, T wd, T rho, \
                                                 T one_minus_rho, T eps, T lr, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED); \
        *square_avg = *square_avg * rho + one_minus_rho * g * g; \
        T std = sqrt##F(*square_avg + eps); \
        T delta = sqrt##F(*acc_delta + eps) / std * g; \
        *acc_delta = *acc_delta * rho + one_minus_rho * delta * delta; \
        return p + (-lr) * delta; } \
    /* clr = lr / (1 - beta1^step) */ \
    TN_HD static inline T tn_adamax_update_##S(T p, T g, T *m, T *exp_inf, T wd, T one_minus_beta1, T beta2, \
                                               T eps, T clr, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED); \
        *m = tn_optim_lerp_##S(*m, g, one_minus_beta1); \
        *exp_inf = tn_optim_max_##S(*exp_inf * beta2, fabs##F(g) + eps); \
        return p + (-clr) * *m / *exp_inf; } \
    /* c_grad = -lr (1 - mu) / (1 - mu_product), c_avg = -lr mu_next / (1 - mu_product mu_next) */ \
    TN_HD static inline T tn_nadam_update_##S(T p, T g, T *m, T *v, T wd, T decay, T one_minus_beta1, T beta2, \
                                              T one_minus_beta2, T bias_correction2, T eps, T c_grad, T c_avg, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, decay, f); \
        *m = tn_optim_lerp_##S(*m, g, one_minus_beta1); \
        *v = *v * beta2 + one_minus_beta2 * g * g; \
        T den = sqrt##F(*v / bias_correction2) + eps; \
        p = p + c_grad * g / den; \
        return p + c_avg * *m / den; } \
    /* rect: the variance rectification term, used with TN_OPTF_RECTIFY */ \
    TN_HD static inline T tn_radam_update_##S(T p, T g, T *m, T *v, T wd, T decay, T one_minus_beta1, T beta2, \
                                              T one_minus_beta2, T bias_correction1, T lr, T bias_correction2_sqrt, \
                                              T eps, T rect, int f) { \
        g = tn__optim_grad_##S(&p, g, wd, decay, f); \
        *m = tn_optim_lerp_##S(*m, g, one_minus_beta1); \
        *v = *v * beta2 + one_minus_beta2 * g * g; \
        T corrected = *m / bias_correction1; \
        if (f & TN_OPTF_RECTIFY) return p + (T)-1 * (corrected * lr * (bias_correction2_sqrt / (sqrt##F(*v) + eps)) * rect); \
        return p + (T)-1 * (corrected * lr); }
TN__DEFINE_OPTIM_RULES(float, f32, f)
TN__DEFINE_OPTIM_RULES(double, f64, )
/* How the step hands one parameter's update to a kernel (the CPU loop; a GPU kernel the
   same way): the optimizer kind, the flags, and the scalars c[] in the order its
   tn_<kind>_update function takes them after the state pointers. State buffers s0, s1,
   s2 (contiguous, the parameter's shape and dtype, NULL if unused): SGD momentum_buffer;
   Adam/AdamW exp_avg, exp_avg_sq, max_exp_avg_sq; RMSprop square_avg, momentum_buffer,
   grad_avg; Adagrad sum; Adadelta square_avg, acc_delta; Adamax exp_avg, exp_inf; NAdam
   and RAdam exp_avg, exp_avg_sq. */
enum { TN__SGD, TN__ADAM, TN__ADAMW, TN__RMSPROP, TN__ADAGRAD, TN__ADADELTA, TN__ADAMAX, TN__NADAM, TN__RADAM,
       TN__LBFGS, TN__NUM_OPTIMS };
typedef struct tn__optk { int kind, flags; double c[12]; } tn__optk;
/* One element's update for any kind: c the scalars (converted to T), a/b/e the element's
   state s0/s1/s2 (or a scratch value when the slot is unused). */
#define TN__DEFINE_OPTIM_APPLY(T, S) \
    TN_HD static inline T tn_optim_apply_##S(int kind, int f, const T *c, T p, T g, T *a, T *b, T *e) { \
        switch (kind) { \
        case TN__SGD: return tn_sgd_update_##S(p, g, a, c[0], c[1], c[2], c[3], f); \
        case TN__ADAM: case TN__ADAMW: return tn_adam_update_##S(p, g, a, b, e, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], f); \
        case TN__RMSPROP: return tn_rmsprop_update_##S(p, g, a, e, b, c[0], c[1], c[2], c[3], c[4], c[5], f); \
        case TN__ADAGRAD: return tn_adagrad_update_##S(p, g, a, c[0], c[1], c[2], f); \
        case TN__ADADELTA: return tn_adadelta_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], f); \
        case TN__ADAMAX: return tn_adamax_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], f); \
        case TN__NADAM: return tn_nadam_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], f); \
        case TN__RADAM: return tn_radam_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], f); \
        default: return p; \
        } }
TN__DEFINE_OPTIM_APPLY(float, f32)
TN__DEFINE_OPTIM_APPLY(double, f64)



/* ======================================================================= */
/* 14. data                                                                 */
/* ======================================================================= */
/* torch.utils.data: a dataset is a length and a way to get sample i as nitems tensors
   (image, label, ...); a loader batches, shuffles with the seeded Philox generator and
   prefetches on worker threads. A user dataset embeds tn_dataset first in its own struct:

       typedef struct { tn_dataset base; tn_tensor *x, *y; } my_ds;
       static int64_t my_len(tn_dataset *d) { return tn_size(((my_ds *)d)->x, 0); }
       static int my_get(tn_dataset *d, int64_t i, tn_tensor **items) {
           my_ds *m = (my_ds *)d;
           items[0] = tn_select(m->x, 0, i);       // results of library ops
           items[1] = tn_select(m->y, 0, i);
           return items[0] && items[1] ? 0 : -1;
       }
       my_ds ds = {{my_len, my_get, NULL, 2}, x, y};

   get follows the ownership rule of any library function: it writes tensors that
   library ops returned (while a scope is open, that scope owns them; the loader calls
   get inside a scope it closes after collating). To hand out a tensor the dataset
   holds, write a new reference to it such as tn_detach(t). With num_workers > 0, get
   runs on several worker threads at once: reading shared tensors and calling library
   ops is thread-safe; anything else the dataset mutates needs its own lock. On failure
   get records an error (ops do) and returns -1. */
typedef struct tn_dataset tn_dataset;
struct tn_dataset {
    int64_t (*len)(tn_dataset *ds);
    int (*get)(tn_dataset *ds, int64_t index, tn_tensor **items);  /* writes nitems new references; 0 or -1 with an error */
    void (*destroy)(tn_dataset *ds);                              /* frees the dataset (NULL: nothing to free) */
    int nitems;
};
/* Checked calls of the two callbacks: the length (-1 with an error), and sample index
   in [0, len) into items[0..nitems) (0; or -1 with an error and items all NULL). */
TNDEF int64_t tn_dataset_len(tn_dataset *ds);
TNDEF int tn_dataset_get(tn_dataset *ds, int64_t index, tn_tensor **items);
/* TensorDataset: sample i is (tensors[0][i], ..., tensors[n-1][i]) as views; sizes along
   dim 0 must agree. Retains the tensors. */
TNDEF tn_dataset *tn_tensor_dataset(tn_tensor *const *tensors, int n);
/* Subset: sample i is ds's sample indices[i] (indices copied, each in [0, len(ds))).
   Borrows ds: free the subset first. */
TNDEF tn_dataset *tn_subset(tn_dataset *ds, const int64_t *indices, int64_t n);
/* random_split: n subsets of ds (written to out[0..n)) over one random permutation.
   lengths are counts summing to len(ds), or fractions summing to 1 (PyTorch's rule:
   floor(len * frac) each, the remainder handed out one by one from the first). gen
   NULL = the default generator. Deterministic for a seed (not PyTorch's permutation).
   0, or -1 with an error and out untouched. */
TNDEF int tn_random_split(tn_dataset *ds, const double *lengths, int n, tn_generator *gen, tn_dataset **out);
TNDEF void tn_dataset_free(tn_dataset *ds);   /* calls ds->destroy; NULL is a no-op */

/* DataLoader. Options (PyTorch's names and defaults): "batch_size=1, shuffle=False,
   drop_last=False, num_workers=0, prefetch_factor=2, seed=None". batch_size=None
   yields samples one by one, uncollated. seed picks the loader's own shuffle generator
   (None: the default generator, so tn_manual_seed decides); each epoch draws a new
   permutation, the same for a seed whatever num_workers is. num_workers=0 loads in the
   caller's thread; N > 0 starts N threads that load up to prefetch_factor * N batches
   ahead (prefetch_factor may be given only with num_workers > 0, as in PyTorch). Batch
   k is always the same samples, and batches arrive in order. Borrows ds (free the
   loader first). One thread calls tn_loader_next. NULL on bad options. */
typedef struct tn_loader tn_loader;
TNDEF tn_loader *tn_loader_new(tn_dataset *ds, const char *options);
/* Collate: samples[s * nitems + k] is item k of sample s; write nitems batch tensors
   (results of library ops, as in get); 0 or -1 with an error. Runs on worker threads. */
typedef int (*tn_collate_fn)(tn_tensor *const *samples, int64_t nsamples, int nitems, tn_tensor **batch, void *user);
/* The default: batch[k] = stack of item k of every sample along a new dim 0 (labels
   that are 0-d tensors become a 1-d batch), as torch's default_collate. */
TNDEF int tn_default_collate(tn_tensor *const *samples, int64_t nsamples, int nitems, tn_tensor **batch, void *user);
/* fn NULL restores the default. Refused in the middle of an epoch. 0 or -1. */
TNDEF int tn_loader_set_collate(tn_loader *l, tn_collate_fn fn, void *user);
TNDEF int64_t tn_loader_len(const tn_loader *l);                /* batches per epoch (-1 on error) */
/* 1: a batch in batch[0..nitems) (new references); 0: the epoch is over (the next call
   starts a new epoch, reshuffled); -1: error, e.g. from the dataset's get in a worker,
   with that message (the failed batch is skipped: the next call goes on with the next). */
TNDEF int tn_loader_next(tn_loader *l, tn_tensor **batch);
TNDEF void tn_loader_free(tn_loader *l);        /* joins the workers, also mid-epoch; NULL is a no-op */

/* IDX files (MNIST's format): magic 00 00 <type> <ndim>, big-endian u32 dims, big-endian
   data. dtype from the type: uint8 -> U8, int32 -> I32, float32 -> F32, float64 -> F64,
   int8 and int16 widened to I32. A gzip file (.gz) is read through zlib when built with
   -DTENSOR_ZLIB (link -lz), refused otherwise. A damaged file is refused, never overread. */
TNDEF tn_tensor *tn_read_idx(const char *path);
/* A numeric CSV file as a [rows, cols] matrix. Options: "header=True, delimiter=',',
   label_column=None, dtype=float32" (delimiter: one character or '\t'; dtype float32
   or float64; label_column: an index, negative from the end, or a header name). The
   label column is left out of the matrix; with labels non-NULL it is written there as
   int64 [rows] (NULL when no label_column). Fields may be double-quoted; blank lines
   are skipped. A cell that is not a number is an error naming its line and column. */
TNDEF tn_tensor *tn_read_csv(const char *path, const char *options, tn_tensor **labels);
/* MNIST or Fashion-MNIST from dir: {train,t10k}-{images-idx3,labels-idx1}-ubyte, each
   plain or .gz. Sample i: image float32 [1, 28, 28] in [0, 1] (x / 255, as ToTensor),
   label int64 0-d. */
TNDEF tn_dataset *tn_mnist_dataset(const char *dir, bool train);

/* ======================================================================= */
/* 15. serialization & printing                                             */
/* ======================================================================= */
/* ---- safetensors ---- */
/* The safetensors format (Hugging Face's; read and written by PyTorch's ecosystem): an
   8-byte little-endian header size, a JSON header {"name": {"dtype": "F32", "shape":
   [2, 3], "data_offsets": [begin, end]}, "__metadata__": {"key": "value"}}, then the
   raw little-endian data. dtypes F32 F64 I32 I64 U8 BOOL F16 BF16; others (I8, U16, ...)
   are refused with a message. Tensor names are the dict's keys, metadata its string
   metadata. Writing orders tensors as the Python package does (by dtype alignment, then
   name). Reading checks the whole header first (sizes, JSON syntax, duplicate names,
   dtypes, shapes, offsets that must tile the data exactly) and refuses a damaged or
   hostile file with a message, never reading outside it. */
/* Write d's tensors (made contiguous, copied to the CPU) and metadata to path (through
   a temporary file renamed over path, so a failed save leaves an old file intact). */
TNDEF int tn_safetensors_save(const char *path, const tn_dict *d);
/* Load a file memory-mapped (copy-on-write: the file is never written). The tensors
   alias the mapping, which is unmapped when the last of them dies, so the dict may be
   freed while its tensors live on. (A tensor whose data is not aligned to its element
   size in the file is copied instead.) NULL with an error on a bad file. */
TNDEF tn_dict *tn_safetensors_load(const char *path);
TNDEF tn_dict *tn_safetensors_load_buffer(const void *data, size_t size);  /* parse bytes in memory (tensors are copies) */
/* The bytes tn_safetensors_save would write (size in *size); the caller frees them
   with tn_string_free. */
TNDEF char *tn_safetensors_serialize(const tn_dict *d, size_t *size);

/* ---- checkpoints ---- */
/* Training checkpoints: the model's state dict under "model.", the optimizer's under
   "optim." (opt may be NULL) and the step, in one safetensors file written atomically
   (a temporary file renamed over path). Loading restores all three exactly. */
TNDEF int tn_checkpoint_save(const char *path, const tn_module *model, const tn_optim *opt, int64_t step);
TNDEF int tn_checkpoint_load(const char *path, tn_module *model, tn_optim *opt, int64_t *step);

/* ---- printing ---- */
/* PyTorch's repr: "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)".
   Summarised with "..." past 1000 elements. The string is the caller's: tn_string_free. */
TNDEF char *tn_to_string(tn_tensor *t);
TNDEF void tn_string_free(char *s);
TNDEF int tn_print(tn_tensor *t);               /* tn_to_string + newline to stdout */

/* ======================================================================= */
/* 16. threading                                                            */
/* ======================================================================= */
/* Built with -fopenmp, CPU kernels split work of TN_PARALLEL_MIN elements or more among
   the threads: GEMM (row blocks), the strided iterator's elementwise ops, copies and fills
   (contiguous ranges), reductions and softmax-style lanes (over output elements only, so
   every sum keeps its serial order), gather, im2col/col2im and max pooling (over planes),
   conv2d (over images). Results are the same bits for any thread count, except conv2d's
   weight gradient: per-thread partial sums added in thread order, the same bits for a
   given count. OMP_NUM_THREADS sets the default count. */
TNDEF void tn_set_num_threads(int n);           /* OpenMP threads for kernels (when built with -fopenmp) */
TNDEF int tn_get_num_threads(void);

/* ======================================================================= */
/* 17. backend interface                                                    */
/* ======================================================================= */
/* Ops are data: one X-macro list per kernel family gives the enum and the name table,
   so a backend (tensor_cuda.cu) switches over the same values. */
#define TN_UNARY_OPS(X) \
    X(NEG) X(ABS) X(SIGN) X(SQUARE) X(RELU) X(FLOOR) X(CEIL) X(ROUND) X(TRUNC) X(CLAMP) \
    X(EXP) X(EXP2) X(LOG) X(LOG2) X(LOG10) X(LOG1P) X(EXPM1) X(SQRT) X(RSQRT) X(RECIPROCAL) \
    X(SIN) X(COS) X(TAN) X(ASIN) X(ACOS) X(ATAN) X(SINH) X(COSH) X(TANH) X(SIGMOID) \
    X(GELU) X(GELU_TANH) X(SILU) X(SOFTPLUS) X(LEAKY_RELU) X(ELU) X(HARDTANH) X(MISH) X(HARDSWISH) \
    X(HARDSIGMOID) X(ERF) X(ERFC) X(FRAC) X(NAN_TO_NUM) \
    X(BITWISE_NOT) X(LOGICAL_NOT) X(ISNAN) X(ISINF) X(ISFINITE)
#define TN_BINARY_OPS(X) \
    X(ADD) X(SUB) X(MUL) X(DIV) X(FLOOR_DIVIDE) X(REMAINDER) X(FMOD) X(POW) X(ATAN2) \
    X(MAXIMUM) X(MINIMUM) X(BITWISE_AND) X(BITWISE_OR) X(BITWISE_XOR) \
    X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(LOGICAL_AND) X(LOGICAL_OR) X(LOGICAL_XOR) \
    X(THRESHOLD_BACKWARD)
#define TN_TERNARY_OPS(X) X(WHERE) X(LERP) X(ADDCMUL) X(ADDCDIV)
#define TN_REDUCE_OPS(X) X(SUM) X(PROD) X(MAX) X(MIN) X(ALL) X(ANY)
#define TN_LANE_OPS(X) X(ARGMAX) X(ARGMIN) X(CUMSUM) X(CUMPROD) X(SOFTMAX) X(LOG_SOFTMAX) X(SORT)
#define TN_RANDOM_OPS(X) X(UNIFORM) X(NORMAL) X(RANDINT)
#define TN_INDEX_MODES(X) X(GATHER) X(SCATTER) X(SCATTER_ADD)

#define TN__ENUM_ENTRY(name) name,
typedef enum tn_unary_op { TN_UNARY_OPS(TN__ENUM_ENTRY) TN_NUM_UNARY_OPS } tn_unary_op;
typedef enum tn_binary_op { TN_BINARY_OPS(TN__ENUM_ENTRY) TN_NUM_BINARY_OPS } tn_binary_op;
typedef enum tn_ternary_op { TN_TERNARY_OPS(TN__ENUM_ENTRY) TN_NUM_TERNARY_OPS } tn_ternary_op;
typedef enum tn_reduce_op { TN_REDUCE_OPS(TN__ENUM_ENTRY) TN_NUM_REDUCE_OPS } tn_reduce_op;
typedef enum tn_lane_op { TN_LANE_OPS(TN__ENUM_ENTRY) TN_NUM_LANE_OPS } tn_lane_op;
typedef enum tn_random_op { TN_RANDOM_OPS(TN__ENUM_ENTRY) TN_NUM_RANDOM_OPS } tn_random_op;
typedef enum tn_index_mode { TN_INDEX_MODES(TN__ENUM_ENTRY) TN_NUM_INDEX_MODES } tn_index_mode;
TNDEF const char *tn_unary_op_name(tn_unary_op op);   /* "exp", ... */
TNDEF const char *tn_binary_op_name(tn_binary_op op);

/* A backend: device-independent code validates arguments, computes shapes and allocates
   outputs, then calls these. Operands already have the kernel's dtypes and broadcast
   shapes (stride 0 where broadcast); outputs may alias inputs element for element.
   Every entry returns 0, or -1 after recording an error. */
typedef struct tn_backend {
    const char *name;
    void *(*alloc)(size_t nbytes);                          /* NULL when out of memory */
    void (*free)(void *ptr, size_t nbytes);
    /* dst <- src elementwise, any dtypes; src is on this device or (for transfers) the CPU,
       or dst is on the CPU and src on this device. */
    int (*copy)(tn_tensor *dst, tn_tensor *src);
    int (*fill)(tn_tensor *dst, double value);
    /* params: CLAMP and HARDTANH (min, max), SOFTPLUS (beta, threshold), LEAKY_RELU (slope),
       ELU (alpha, scale, input_scale), NAN_TO_NUM (nan, posinf, neginf). */
    int (*unary)(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params);
    /* alpha: ADD, SUB (a + alpha b); THRESHOLD_BACKWARD (a where b > alpha, else 0: relu's
       backward in one pass, floating only; autograd uses it when not recording). */
    int (*binary)(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha);
    int (*ternary)(tn_ternary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, tn_tensor *c, double value);
    /* out has x's ndim with size 1 on reduced dims. */
    int (*reduce)(tn_reduce_op op, tn_tensor *out, tn_tensor *x);
    /* Along one dim: ARGMAX/ARGMIN (out values or NULL, out1 int64 indices, size 1 on dim),
       CUMSUM/CUMPROD/SOFTMAX/LOG_SOFTMAX (out like x), SORT (out values, out1 indices;
       flag = descending). */
    int (*lane)(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag);
    /* Indexed copy. All of dst, src and the k int64 index tensors have the iteration
       shape; offsets idx[j] * idx_strides[j] (in elements, bounds already checked) are
       added to src (GATHER) or dst (SCATTER, SCATTER_ADD). */
    int (*index)(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k);
    tn_tensor *(*nonzero)(tn_tensor *x);                    /* [n, ndim] int64, owned by the caller */
    /* c[b] = alpha * a[b] @ bm[b] + beta * c[b] for 3-d operands of one dtype (beta 0: c is not read). */
    int (*matmul)(tn_tensor *c, tn_tensor *a, tn_tensor *bm, double alpha, double beta);
    /* Element i of out from Philox(seed, offset + i): UNIFORM a + (b-a)u, NORMAL a + b z,
       RANDINT low + (64 random bits mod range), exact for any int64 bounds. */
    int (*random)(tn_random_op op, tn_tensor *out, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range);
    /* Sliding windows over the last two dims of img [N, C, H, W]; cols is [N, C*kh*kw, oh*ow]
       with rows ordered (c, ki, kj); both any strides, floating. geom: kh, kw, dh, dw
       (dilation), ph, pw (padding before), sh, sw (stride), oh, ow (window counts); windows
       read zeros past either edge. fold 0: cols = im2col(img); fold 1: img += col2im(cols). */
    int (*im2col)(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *geom);
    /* Max pooling's argmax: idx [N, C, OH, OW] (int64, contiguous) gets h*W + w of the largest
       element (NaN wins) of x [N, C, H, W] over rows hs[oh], hs[oh] + dh, ... < he[oh] (rows
       below 0 skipped) and columns likewise; every window has an element. */
    int (*pool_argmax)(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw);
    /* One optimizer step on one parameter: p, g and the state buffers s[0..2] (NULL when
       unused) are contiguous, of one float dtype, on this device (section 13, tn__optk). */
    int (*optim)(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s);
    /* Optional (NULL: im2col + matmul). 2-d convolution (cross-correlation) of x [N, C, H, W]
       with w [O, C/groups, kh, kw] into y [N, O, OH, OW], all contiguous, one float dtype;
       geom: sh, sw, ph, pw, dh, dw, groups. mode 0: y = conv(x, w); 1: x = the gradient
       of the input for output gradient y; 2: w = the gradient of the weight. The result
       is overwritten. Returns 1 (no error) when it declines the case: the caller falls back. */
    int (*conv2d)(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *geom);
    /* Optional (NULL: the composite). Batch norm as one node: x, y, gx contiguous [N, C, *]
       of one float dtype; w, b, gw, gb [C] of that dtype or NULL; st [3C] float64 on this
       device: per channel mean, invstd = 1/sqrt(var + eps) and the biased variance var.
       mode 0: training forward (y and st written from x's statistics); 1: evaluation
       forward (st given: the running statistics); 2, 3: the backward of mode 0, 1 for the
       output gradient passed as y (gx, gw, gb written where not NULL; b is NULL). Returns 1
       (no error) when it declines the case: the caller falls back. */
    int (*batch_norm)(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                      tn_tensor *gb, double eps);
    /* Optional (NULL: the composites). 2-d pooling by the backend's library: x [N, C, H, W]
       and y [N, C, OH, OW] contiguous, one float dtype, OH and OW as the floor formula
       counts windows; geom: kh, kw, sh, sw, ph, pw, mode (0 max: padding never wins, NaN
       does; 1 average counting the padding; 2 average not counting it). gx NULL: y =
       pool(x); else gx = the input gradient for output gradient gy (y: the forward's
       output). Returns 1 (no error) when it declines the case. */
    int (*pool2d)(tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *geom);
} tn_backend;

/* Install the backend of a device (tensor_cuda.cu calls this for TN_CUDA). */
TNDEF void tn_register_backend(tn_device device, const tn_backend *backend);
TNDEF const tn_backend *tn_get_backend(tn_device device);   /* NULL if none */
/* For tests on machines without a GPU: registers, for TN_CUDA, the CPU kernels over host
   memory behind a check of every operand as the GPU unit needs it (on the device, or a
   0-d CPU scalar where the unit takes one); a failed check is an error naming the op and
   the operand, where a real GPU would fault. tn_cuda_is_available() stays false. */
TNDEF void tn_debug_cuda_stand_in(void);

/* ---- the GPU unit: tensor_cuda.cu, linked and compiled in with TENSOR_CUDA ----
   Without the unit, or without a GPU or a recent enough driver, tn_cuda_is_available()
   is false, tn_cuda_unavailable_reason() says why, and every CUDA call fails with that
   reason. Moving data: tn_to(t, TN_CUDA) / tn_to(t, TN_CPU). */
TNDEF bool tn_cuda_is_available(void);
TNDEF const char *tn_cuda_unavailable_reason(void); /* "" when available */
TNDEF int tn_cuda_device_count(void);               /* 0 without a usable GPU */
TNDEF int tn_cuda_set_device(int index);            /* before the first CUDA tensor; 0 or -1 */
TNDEF int tn_cuda_current_device(void);             /* -1 without a usable GPU */
TNDEF int tn_cuda_synchronize(void);                /* wait for queued kernels; reports a failed one */
/* The caching allocator (as PyTorch's): freed blocks are kept for reuse, large ones split. */
typedef struct tn_cuda_stats {
    size_t allocated, reserved;                     /* bytes in tensors; bytes held from cudaMalloc */
    size_t peak_allocated, peak_reserved;
    int64_t num_allocs, num_cache_hits, num_cuda_mallocs, num_ooms;
} tn_cuda_stats;
TNDEF tn_cuda_stats tn_cuda_memory_stats(void);     /* zeros without a GPU */
TNDEF void tn_cuda_reset_peak_memory_stats(void);
TNDEF void tn_cuda_empty_cache(void);               /* give cached, unused blocks back (cudaFree) */
TNDEF void tn_set_tf32(bool allow);                 /* TF32 tensor cores in float32 matmul/conv (default off) */
TNDEF bool tn_get_tf32(void);
/* A CPU copy of t in page-locked (pinned) memory, from which tn_to_non_blocking copies
   asynchronously (on CPU-only builds an ordinary copy). */
TNDEF tn_tensor *tn_pin_memory(tn_tensor *t);
TNDEF bool tn_is_pinned(const tn_tensor *t);
/* tn_to that may return before the copy ends when it can (an upload from pinned host
   memory); kernels queued later see the data. */
TNDEF tn_tensor *tn_to_non_blocking(tn_tensor *t, tn_device device);

/* What tensor_cuda.cu provides besides its backend table (one struct, so a build without
   the unit has one place that says why). */
typedef struct tn_cuda_unit {
    const tn_backend *backend;                      /* NULL when no usable GPU */
    const char *reason;                             /* why not, when backend is NULL */
    int (*device_count)(void);
    int (*set_device)(int index);
    int (*current_device)(void);
    int (*synchronize)(void);
    tn_cuda_stats (*memory_stats)(void);
    void (*reset_peak)(void);
    void (*empty_cache)(void);
    void *(*host_alloc)(size_t nbytes);             /* pinned memory, NULL on failure */
    void (*host_free)(void *ptr);
    int (*copy_async)(tn_tensor *dst, tn_tensor *src); /* like copy; 1 when it fell back to a synchronous copy */
} tn_cuda_unit;
#ifdef TENSOR_CUDA
const tn_cuda_unit *tn_cuda_unit_get(void);         /* defined in tensor_cuda.cu; probes the GPU once */
#endif


#ifdef __cplusplus
}
#endif
#endif /* TENSOR_H */

/* ####################################################################### */
/*                           IMPLEMENTATION                                */
/* ####################################################################### */
#ifdef TENSOR_IMPLEMENTATION
#ifndef TENSOR_IMPLEMENTATION_DONE
#define TENSOR_IMPLEMENTATION_DONE

/* ======================================================================= */
/* 1. config & allocator hooks                                              */
/* ======================================================================= */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <float.h>
#include <limits.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef TENSOR_CBLAS
#include <cblas.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>   /* the AVX-512 loops chosen at run time (target attributes) */
/* Whether this CPU runs the AVX-512 loops (F, VL and BW: every AVX-512 core since Skylake-X),
   checked once; every thread would compute the same value. */
static bool tn__cpu_avx512(void) {
    static int has = -1;
    if (has < 0) {
        __builtin_cpu_init();
        has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    }
    return has != 0;
}
#endif

#if defined(TN_MALLOC) && defined(TN_FREE) && defined(TN_REALLOC)
#elif !defined(TN_MALLOC) && !defined(TN_FREE) && !defined(TN_REALLOC)
#define TN_MALLOC(sz) malloc(sz)
#define TN_REALLOC(p, sz) realloc(p, sz)
#define TN_FREE(p) free(p)
#else
#error "tensor.h: define all of TN_MALLOC, TN_REALLOC and TN_FREE, or none"
#endif
#ifndef TN_ASSERT
#include <assert.h>
#define TN_ASSERT(x) assert(x)
#endif

#if defined(__cplusplus)
#define TN__TLS thread_local
#elif defined(_MSC_VER)
#define TN__TLS __declspec(thread)
#else
#define TN__TLS _Thread_local
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TN__ATOMIC_ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define TN__ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define TN__PRINTF_FMT(a, b) __attribute__((format(printf, a, b)))
#else
#define TN__ATOMIC_ADD(p, v) (*(p) += (v)) /* TODO(port): MSVC Interlocked */
#define TN__ATOMIC_LOAD(p) (*(p))
#define TN__PRINTF_FMT(a, b)
#endif

#define TN__MIN(a, b) ((a) < (b) ? (a) : (b))
#define TN__MAX(a, b) ((a) > (b) ? (a) : (b))
/* restrict in C and C++ (kernels' inner loops: no aliasing, so they vectorise) */
#if defined(__cplusplus) && defined(_MSC_VER)
#define TN__RESTRICT __restrict
#elif defined(__cplusplus)
#define TN__RESTRICT __restrict__
#else
#define TN__RESTRICT restrict
#endif
#if defined(__GNUC__) || defined(__clang__)
#define TN__STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)  /* flags kernel threads may all set */
#else
#define TN__STORE_RELAXED(p, v) (*(p) = (v))
#endif

/* OpenMP (built with -fopenmp): CPU kernels split work of at least TN_PARALLEL_MIN
   elements among tn_get_num_threads() threads; below it, waking the team costs more than
   it saves. Elementwise kernels give the same bits for any thread count (each element is
   computed alone); reductions too, as they split only over output elements. */
#ifndef TN_PARALLEL_MIN
#define TN_PARALLEL_MIN 32768
#endif
/* Threads for `work` elements split into at most `parts` independent pieces. */
static int tn__par_threads(int64_t work, int64_t parts) {
#ifdef _OPENMP
    if (work < TN_PARALLEL_MIN || parts < 2 || omp_in_parallel()) return 1;
    int t = omp_get_max_threads();
    return (int64_t)t < parts ? t : (int)parts;
#else
    (void)work; (void)parts;
    return 1;
#endif
}
#ifdef _OPENMP
#define TN__OMP_PARALLEL_FOR(nthr) _Pragma("omp parallel for schedule(static) num_threads(nthr) if(nthr > 1)")
#else
#define TN__OMP_PARALLEL_FOR(nthr) (void)(nthr);
#endif

/* ======================================================================= */
/* 2. errors                                                                */
/* ======================================================================= */
static TN__TLS char tn__errbuf[1024];
static TN__TLS int tn__quiet; /* > 0: record only (a caller re-words the message with its own name) */
static TN__TLS unsigned tn__nerrors, tn__err_mark[64];
static tn_error_handler tn__error_handler;
static void *tn__error_user;

TNDEF const char *tn_last_error(void) { return tn__errbuf; }
TNDEF void tn_clear_error(void) { tn__errbuf[0] = 0; }
TNDEF void tn_set_error_handler(tn_error_handler handler, void *user) {
    tn__error_handler = handler;
    tn__error_user = user;
}

/* Record an error: "tn_fn: what went wrong". Always returns NULL so callers can
   `return tn__error(...)`. */
static void *tn__error(const char *fmt, ...) TN__PRINTF_FMT(1, 2);
static void *tn__error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tn__errbuf, sizeof tn__errbuf, fmt, ap);
    va_end(ap);
    tn__nerrors++;
    if (tn__quiet) return NULL;
    const char *ab = getenv("TN_ABORT_ON_ERROR");
    if (ab && ab[0] == '1') {
        fprintf(stderr, "tensor.h error: %s\n", tn__errbuf);
        abort();
    }
    if (tn__error_handler) tn__error_handler(tn__errbuf, tn__error_user);
    return NULL;
}
#define TN__FAIL_INT(...) (tn__error(__VA_ARGS__), -1)
TNDEF int tn_error(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt ? fmt : "(no message)", ap);
    va_end(ap);
    return TN__FAIL_INT("%s", msg);
}


/* Run a kernel call quietly, then report its failure under fn ("tn_floor_divide: ..."
   rather than the kernel's "floor_divide: ..."), so the handler sees one message. */
static int tn__kernel_result(const char *fn, int rc) {
    tn__quiet--;
    if (rc == 0) return 0;
    const char *colon = strstr(tn__errbuf, ": ");
    char why[1024];
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn__errbuf);
    return TN__FAIL_INT("%s: %s", fn, why);
}
#define TN__KERNEL(fn, call) (tn__quiet++, tn__kernel_result(fn, (call)))

/* A composite public function evaluates its body through TN__AS: an error inside is
   reported once, under the function the user called ("tn_outer: ..." rather than the
   "tn_mul: ..." it was built from). A NULL input stays silent. */
static void tn__as_begin(void) {
    if (tn__quiet < 64) tn__err_mark[tn__quiet] = tn__nerrors;
    tn__quiet++;
}
static tn_tensor *tn__as_end(const char *fn, tn_tensor *r) {
    tn__quiet--;
    unsigned before = tn__quiet < 64 ? tn__err_mark[tn__quiet] : tn__nerrors;
    if (r || tn__nerrors == before) return r;
    const char *colon = strncmp(tn__errbuf, "tn_", 3) == 0 || strncmp(tn__errbuf, "tensor.h", 8) == 0 ? strstr(tn__errbuf, ": ") : NULL;
    char why[1024];
    snprintf(why, sizeof why, "%s", colon ? colon + 2 : tn__errbuf);
    return (tn_tensor *)tn__error("%s: %s", fn, why);
}
#define TN__AS(fn, expr) (tn__as_begin(), tn__as_end(fn, (expr)))


/* "[2, 3]" in one of a few rotating thread-local buffers, so one message can show
   several shapes. */
static const char *tn__shape_str(const int64_t *shape, int ndim) {
    static TN__TLS char bufs[4][160];
    static TN__TLS int which;
    char *b = bufs[which++ & 3];
    int n = snprintf(b, 160, "[");
    for (int i = 0; i < ndim && n < 140; i++)
        n += snprintf(b + n, (size_t)(160 - n), i ? ", %lld" : "%lld", (long long)shape[i]);
    snprintf(b + n, (size_t)(160 - n), "]");
    return b;
}
#define TN__SHAPE(t) tn__shape_str((t)->shape, (t)->ndim)

/* A growing string (printing, graph dumps). */
typedef struct tn__sbuf { char *s; size_t n, cap; int failed; } tn__sbuf;
static void tn__sb_put(tn__sbuf *b, const char *str, size_t len) {
    if (b->failed) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + len;
        char *s = (char *)TN_REALLOC(b->s, cap);
        if (!s) { b->failed = 1; return; }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, str, len);
    b->n += len;
    b->s[b->n] = 0;
}
static void tn__sb_puts(tn__sbuf *b, const char *str) { tn__sb_put(b, str, strlen(str)); }
static void tn__sb_pad(tn__sbuf *b, int n) { for (int i = 0; i < n; i++) tn__sb_put(b, " ", 1); }

/* Wrap a possibly negative dim into [0, ndim); 0-d tensors accept -1 and 0 as PyTorch. */
static int tn__wrap_dim(const char *fn, int64_t dim, int ndim) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        tn__error("%s: dim %lld out of range for a %d-d tensor (expected in [%lld, %lld])", fn,
                  (long long)dim, ndim, (long long)-n, (long long)(n - 1));
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

/* ======================================================================= */
/* 3. dtypes & devices                                                      */
/* ======================================================================= */
static const char *const tn__dtype_names[TN_NUM_DTYPES] = {"float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16"};
static const size_t tn__dtype_sizes[TN_NUM_DTYPES] = {4, 8, 4, 8, 1, 1, 2, 2};

TNDEF const char *tn_dtype_name(tn_dtype d) { return (unsigned)d < TN_NUM_DTYPES ? tn__dtype_names[d] : "invalid"; }
TNDEF size_t tn_dtype_size(tn_dtype d) { return (unsigned)d < TN_NUM_DTYPES ? tn__dtype_sizes[d] : 0; }
TNDEF bool tn_dtype_is_floating(tn_dtype d) { return d == TN_F32 || d == TN_F64 || d == TN_F16 || d == TN_BF16; }
TNDEF const char *tn_device_name(tn_device d) { return d == TN_CPU ? "cpu" : d == TN_CUDA ? "cuda" : "invalid"; }
static bool tn__is_int(tn_dtype d) { return d == TN_I32 || d == TN_I64 || d == TN_U8; }
static int tn__category(tn_dtype d) { return d == TN_BOOL ? 0 : tn__is_int(d) ? 1 : 2; }

TNDEF tn_dtype tn_promote_types(tn_dtype a, tn_dtype b) {
    if (a == b) return a;
    int ca = tn__category(a), cb = tn__category(b);
    if (ca != cb) return ca > cb ? a : b;
    if (ca == 1) return a == TN_U8 ? b : b == TN_U8 ? a : (a == TN_I64 || b == TN_I64 ? TN_I64 : TN_I32);
    if (a == TN_F64 || b == TN_F64) return TN_F64;
    return TN_F32; /* f16 with bf16 or f32 */
}

/* c10's combine_categories: a lower-priority class (0-d tensors, then wrapped numbers)
   only matters when its category is higher. TN_NUM_DTYPES stands for "undefined". */
static tn_dtype tn__combine_categories(tn_dtype higher, tn_dtype lower) {
    if (higher != TN_NUM_DTYPES && tn_dtype_is_floating(higher)) return higher;
    if (higher == TN_BOOL || (lower != TN_NUM_DTYPES && tn_dtype_is_floating(lower))) {
        if (higher == TN_NUM_DTYPES) return lower;
        if (lower == TN_NUM_DTYPES) return higher;
        return tn_promote_types(higher, lower);
    }
    return higher != TN_NUM_DTYPES ? higher : lower;
}

TNDEF tn_dtype tn_result_type(tn_tensor *const *ts, int n) {
    tn_dtype dim = TN_NUM_DTYPES, zero = TN_NUM_DTYPES, wrapped = TN_NUM_DTYPES;
    for (int i = 0; i < n; i++) {
        tn_tensor *t = ts[i];
        if (!t) continue;
        tn_dtype *slot = t->is_wrapped_number ? &wrapped : t->ndim == 0 ? &zero : &dim;
        tn_dtype d = t->dtype;
        if (t->is_wrapped_number && tn_dtype_is_floating(d)) d = TN_F32; /* default dtype */
        *slot = *slot == TN_NUM_DTYPES ? d : tn_promote_types(*slot, d);
    }
    tn_dtype r = tn__combine_categories(dim, tn__combine_categories(zero, wrapped));
    return r == TN_NUM_DTYPES ? TN_F32 : r;
}

/* ======================================================================= */
/* 4. storage & tensor, ownership                                           */
/* ======================================================================= */
static int64_t tn__live_tensors, tn__live_storages, tn__live_bytes, tn__peak_bytes;
static const tn_backend *tn__backends[TN_NUM_DEVICES];
static const tn_backend *tn__cpu_backend_get(void);   /* section 17 */

/* Autograd recording, used by every differentiable op; the engine is section 11. */
#define TN__GRAD_OPS(X) \
    X(G_UNARY, "") X(G_BINARY, "") X(G_TERNARY, "") X(G_SUM, "SumBackward0") X(G_MEAN, "MeanBackward0") \
    X(G_PROD, "ProdBackward0") X(G_AMAX, "AmaxBackward0") X(G_AMIN, "AminBackward0") X(G_MAX_DIM, "MaxBackward0") \
    X(G_MIN_DIM, "MinBackward0") X(G_CUMSUM, "CumsumBackward0") X(G_CUMPROD, "CumprodBackward0") \
    X(G_SOFTMAX, "SoftmaxBackward0") X(G_LOG_SOFTMAX, "LogSoftmaxBackward0") X(G_SORT, "SortBackward0") \
    X(G_RESHAPE, "ViewBackward0") X(G_PERMUTE, "PermuteBackward0") X(G_EXPAND, "ExpandBackward0") \
    X(G_SLICE, "SliceBackward0") X(G_SELECT, "SelectBackward0") X(G_UNFOLD, "UnfoldBackward0") \
    X(G_SLICE_SCATTER, "SliceScatterBackward0") X(G_FLIP, "FlipBackward0") X(G_PAD, "ConstantPadNdBackward0") \
    X(G_COPY, "CloneBackward0") X(G_TO, "ToCopyBackward0") X(G_INDEX_SELECT, "IndexSelectBackward0") \
    X(G_GATHER, "GatherBackward0") X(G_SCATTER, "ScatterBackward0") X(G_SCATTER_ADD, "ScatterAddBackward0") \
    X(G_INDEX, "IndexBackward0") X(G_INDEX_PUT, "IndexPutBackward0") X(G_CAT, "CatBackward0") \
    X(G_MM, "MmBackward0") X(G_BMM, "BmmBackward0") X(G_ADDMM, "AddmmBackward0") X(G_BADDBMM, "BaddbmmBackward0") \
    X(G_MV, "MvBackward0") X(G_DOT, "DotBackward0") X(G_CUSTOM, "CustomBackward") \
    X(G_COPY_SLICES, "CopySlices") X(G_BASE_VIEW, "AsStridedBackward0")
#define TN__GOP_ENUM(e, name) e,
#define TN__GOP_NAME(e, name) name,
typedef enum tn__gop { TN__GRAD_OPS(TN__GOP_ENUM) TN__NUM_GOPS } tn__gop;
static const char *const tn__gop_names[] = {TN__GRAD_OPS(TN__GOP_NAME) ""};
typedef struct tn__edge { tn_node *fn; tn_tensor *leaf; } tn__edge; /* where an input's gradient goes */
typedef struct tn__meta { tn_dtype dtype; tn_device device; int ndim; int64_t shape[TN_MAX_DIMS]; } tn__meta;
typedef struct tn__hook { tn_hook_fn fn; void *user; int handle; } tn__hook;
typedef struct tn__hooks { tn__hook *items; int n, cap, next_handle; } tn__hooks;

struct tn_node {
    int64_t refcount;                 /* atomic: held by result tensors and by consumers' edges */
    const char *name;                 /* PyTorch's name when it differs from the op's (composites) */
    tn__gop op;
    int sub;                          /* the unary/binary/ternary op id */
    int nin;                          /* inputs: edges and metadata */
    tn__edge *next;
    tn__meta *in;
    int nsaved;                       /* saved tensors with their versions at save time */
    tn_tensor **saved;
    int64_t *saved_version;
    tn_node **saved_fn;               /* for a saved non-leaf: its grad_fn (the tensor itself is kept as a plain alias) */
    int saved_cap;                    /* the three arrays point into *_inline until more than 4 are saved */
    tn_tensor *saved_inline[4];
    int64_t version_inline[4];
    tn_node *fn_inline[4];
    bool released;                    /* saved tensors freed by a backward without retain_graph */
    double d[4];                      /* op attributes */
    int64_t i[2 * TN_MAX_DIMS + 4];
    int ni;
    tn__meta out;
    tn__hooks hooks;                  /* hooks of the node's result tensor (non-leaf tensors) */
    tn_custom_backward custom_bw;     /* G_CUSTOM: the user's backward and its argument */
    void *custom_user;
    char *custom_name;                /* G_CUSTOM: owned copy of the name */
    uint32_t saved_output_mask;       /* G_CUSTOM: saved slots that are the op's own result */
    tn_tensor *retain_target;         /* weak: the non-leaf result that called tn_retain_grad (its .grad gets the gradient) */
    tn_tensor **unpacked;             /* during a custom op's backward: its saved tensors with history */
    /* engine scratch, valid during one backward */
    int64_t deps, epoch;
    tn_tensor *gsum;
};

static TN__TLS int tn__grad_mode_stack[64];
static TN__TLS int tn__grad_mode_depth;
static TN__TLS bool tn__grad_disabled;   /* zero-initialised: grad mode starts enabled */
static void tn__node_release(tn_node *n);
static void tn__node_free_saved_arrays(tn_node *nd);
static void tn__hooks_free(struct tn__hooks *h);
static tn_node *tn__node_new(tn__gop op, int sub, tn_tensor *const *ins, int n);
static void tn__node_save(tn_node *nd, tn_tensor *t);
static void tn__node_save_result(tn_node *nd, tn_tensor *out);
static tn_tensor *tn__node_attach(tn_node *nd, tn_tensor *out);
/* Give t's node PyTorch's name for the op the user called (a composite's last node). */
static tn_tensor *tn__grad_name(tn_tensor *t, const char *name);
static int tn__inplace_mode(const char *fn, tn_tensor *x, tn_tensor *const *others, int n);
static int tn__inplace_finish(const char *fn, tn_tensor *x, tn_tensor *r);
/* Opening of every in-place op: refuse, run plainly, or (autograd) run CALL, an
   out-of-place expression of x0 (a clone of x), and rebase x on it. */
#define TN__INPLACE_GRAD(fn, x, others, nothers, CALL) do { \
    int m_ = tn__inplace_mode(fn, x, others, nothers); \
    if (m_ < 0) return NULL; \
    if (m_) { \
        tn_scope_begin(); \
        tn_tensor *x0 = tn_clone(x); \
        int rc_ = tn__inplace_finish(fn, x, x0 ? (CALL) : NULL); \
        tn_scope_end(); \
        return rc_ ? NULL : tn__own(tn_retain(x)); \
    } } while (0)


/* The GPU unit, probed once on first use (section 17). */
static const tn_cuda_unit *tn__cuda_unit(void);
static const tn_backend *tn__backend(tn_device d) {
    if (d == TN_CPU) return tn__cpu_backend_get();
    if (d == TN_CUDA && !tn__backends[d]) tn__cuda_unit();
    return (unsigned)d < TN_NUM_DEVICES ? tn__backends[d] : NULL;
}

TNDEF tn_memory_stats tn_memory_stats_get(void) {
    tn_memory_stats s;
    s.live_tensors = TN__ATOMIC_LOAD(&tn__live_tensors);
    s.live_storages = TN__ATOMIC_LOAD(&tn__live_storages);
    s.live_bytes = TN__ATOMIC_LOAD(&tn__live_bytes);
    s.peak_bytes = TN__ATOMIC_LOAD(&tn__peak_bytes);
    return s;
}
TNDEF void tn_memory_stats_reset_peak(void) { tn__peak_bytes = TN__ATOMIC_LOAD(&tn__live_bytes); }

static void tn__track_bytes(int64_t delta) {
    int64_t now = TN__ATOMIC_ADD(&tn__live_bytes, delta);
    if (delta > 0) {
        int64_t peak = TN__ATOMIC_LOAD(&tn__peak_bytes);
        while (now > peak) { /* lock-free max */
#if defined(__GNUC__) || defined(__clang__)
            if (__atomic_compare_exchange_n(&tn__peak_bytes, &peak, now, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) break;
#else
            tn__peak_bytes = now; break;
#endif
        }
    }
}

/* A cache of small blocks: tensors, small storages and autograd nodes are allocated and
   freed once per op, and a graph of a hundred ops frees a hundred of each at once (glibc's
   per-thread cache keeps 7 per size), so up to 256 of each class are kept for reuse: a
   fifth off the C per-op overhead. A thread that finds a class busy uses malloc/free
   instead of waiting (no deadlock, also in a child forked while another thread held it).
   Off under AddressSanitizer, which must see every free. */
#if defined(__SANITIZE_ADDRESS__)
#define TN__BLK_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TN__BLK_CACHE 0
#endif
#endif
#ifndef TN__BLK_CACHE
#if defined(__GNUC__) || defined(__clang__)
#define TN__BLK_CACHE 1
#else
#define TN__BLK_CACHE 0
#endif
#endif
enum { TN__BLK_TENSOR, TN__BLK_STORAGE, TN__BLK_NODE, TN__BLK_CLASSES, TN__BLK_KEEP = 256 };
#if TN__BLK_CACHE
static void *tn__blk_free[TN__BLK_CLASSES][TN__BLK_KEEP];
static int tn__blk_count[TN__BLK_CLASSES], tn__blk_lock[TN__BLK_CLASSES];
#endif
/* A block of class c (always size bytes), from the cache or TN_MALLOC. */
static void *tn__blk_get(int c, size_t size) {
#if TN__BLK_CACHE
    void *p = NULL;
    if (!__atomic_exchange_n(&tn__blk_lock[c], 1, __ATOMIC_ACQUIRE)) {   /* never waits: busy means malloc */
        if (tn__blk_count[c] > 0) p = tn__blk_free[c][--tn__blk_count[c]];
        __atomic_store_n(&tn__blk_lock[c], 0, __ATOMIC_RELEASE);
    }
    if (p) return p;
#else
    (void)c;
#endif
    return TN_MALLOC(size);
}
static void tn__blk_put(int c, void *p) {
#if TN__BLK_CACHE
    if (!p) return;
    if (!__atomic_exchange_n(&tn__blk_lock[c], 1, __ATOMIC_ACQUIRE)) {
        if (tn__blk_count[c] < TN__BLK_KEEP) { tn__blk_free[c][tn__blk_count[c]++] = p; p = NULL; }
        __atomic_store_n(&tn__blk_lock[c], 0, __ATOMIC_RELEASE);
    }
#else
    (void)c;
#endif
    TN_FREE(p);
}

#define TN__INLINE_BYTES 64
#define TN__INLINE_OFFSET ((sizeof(tn_storage) + 63) / 64 * 64) /* data stays 64-byte aligned within the block */
static tn_storage *tn__storage_new(size_t nbytes, tn_device device) {
    const tn_backend *be = tn__backend(device);
    if (!be) return (tn_storage *)tn__error("tensor.h: no backend for device '%s' (%s)", tn_device_name(device),
                                            device == TN_CUDA ? tn_cuda_unavailable_reason() : "invalid device");
    /* small CPU storages carry their data in the same block: one allocation, not two */
    bool inline_data = device == TN_CPU && nbytes <= TN__INLINE_BYTES;
    tn_storage *s = (tn_storage *)(inline_data ? tn__blk_get(TN__BLK_STORAGE, TN__INLINE_OFFSET + TN__INLINE_BYTES) : TN_MALLOC(sizeof *s));
    void *data = !s ? NULL : inline_data ? (void *)((char *)s + TN__INLINE_OFFSET) : be->alloc(nbytes ? nbytes : 1);
    if (!data) {
        if (inline_data) tn__blk_put(TN__BLK_STORAGE, s);
        else TN_FREE(s);
        return (tn_storage *)tn__error("tensor.h: out of memory allocating %zu bytes on %s", nbytes, tn_device_name(device));
    }
    { static tn_storage zero_; *s = zero_; }   /* a zero struct copied: vector stores, not a memset call (never written) */
    s->refcount = 1;
    s->data = data;
    s->nbytes = nbytes;
    s->device = device;
    s->inline_data = inline_data;
    TN__ATOMIC_ADD(&tn__live_storages, 1);
    tn__track_bytes((int64_t)nbytes);
    return s;
}

static void tn__storage_release(tn_storage *s) {
    if (!s || TN__ATOMIC_ADD(&s->refcount, -1) != 0) return;
    if (s->deleter) s->deleter(s->data, s->deleter_ctx);
    else if (s->data) {
        if (!s->inline_data) tn__backend(s->device)->free(s->data, s->nbytes);
        tn__track_bytes(-(int64_t)s->nbytes);
    }
    TN__ATOMIC_ADD(&tn__live_storages, -1);
    if (s->inline_data) tn__blk_put(TN__BLK_STORAGE, s);   /* a flag, not a pointer test: a separate data block may follow the struct */
    else TN_FREE(s);
}

static void tn__contiguous_strides(const int64_t *shape, int ndim, int64_t *strides) {
    int64_t st = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = st;
        if (i > 0 && shape[i] > 1 && st <= INT64_MAX / shape[i]) st *= shape[i]; /* empty tensors may not fit */
    }
}

static int64_t tn__numel(const int64_t *shape, int ndim) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

static const int64_t tn__one[1] = {1};

/* Size arithmetic that reports overflow instead of running into C's undefined behaviour:
   the result, or false when it does not fit in int64. */
static bool tn__mul_ok(int64_t a, int64_t b, int64_t *r) {
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_mul_overflow(a, b, r);
#else
    if (a != 0 && (b > INT64_MAX / (a < 0 ? -a : a) || b < -INT64_MAX / (a < 0 ? -a : a))) return false;
    *r = a * b;
    return true;
#endif
}
static bool tn__add_ok(int64_t a, int64_t b, int64_t *r) {
#if defined(__GNUC__) || defined(__clang__)
    return !__builtin_add_overflow(a, b, r);
#else
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
    *r = a + b;
    return true;
#endif
}

/* Last element offset reached by (shape, strides) from offset, or false on overflow. */
static bool tn__span_ok(const int64_t *shape, const int64_t *strides, int ndim, int64_t offset, int64_t *last) {
    int64_t l = offset, step;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { *last = -1; return true; }
        if (!tn__mul_ok(shape[i] - 1, strides[i], &step) || !tn__add_ok(l, step, &l)) return false;
    }
    *last = l;
    return true;
}

/* Check a user-given shape: ndim in range, sizes >= 0, element count fits. */
static int tn__check_shape(const char *fn, const int64_t *shape, int ndim) {
    if (ndim < 0 || ndim > TN_MAX_DIMS) return TN__FAIL_INT("%s: ndim %d out of range [0, %d]", fn, ndim, TN_MAX_DIMS);
    if (ndim > 0 && !shape) return TN__FAIL_INT("%s: shape is NULL", fn);
    double total = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return TN__FAIL_INT("%s: negative size %lld in shape %s", fn, (long long)shape[i], tn__shape_str(shape, ndim));
        total *= (double)shape[i];
    }
    if (total > 9e18 / 8) return TN__FAIL_INT("%s: shape %s has too many elements", fn, tn__shape_str(shape, ndim));
    return 0;
}

/* Broadcast shape of a and b (both of at most TN_MAX_DIMS dims) into out; -1 when they
   do not broadcast. Silent: callers word the error. */
static int tn__broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out) {
    int n = TN__MAX(na, nb);
    int64_t r[TN_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a[i - (n - na)], y = i < n - nb ? 1 : b[i - (n - nb)];
        if (x != y && x != 1 && y != 1) return -1;
        r[i] = x == 1 ? y : x;
    }
    memcpy(out, r, (size_t)n * sizeof(int64_t));
    return n;
}

/* A tensor object over a storage (takes a storage reference), untracked by scopes. */
static tn_tensor *tn__tensor_over(tn_storage *s, tn_dtype dtype, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    tn_tensor *t = (tn_tensor *)tn__blk_get(TN__BLK_TENSOR, sizeof *t);
    if (!t) {
        tn__storage_release(s);
        return (tn_tensor *)tn__error("tensor.h: out of memory allocating a tensor");
    }
    { static tn_tensor zero_; *t = zero_; }
    t->refcount = 1;
    t->dtype = dtype;
    t->device = s->device;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) { t->shape[i] = shape[i]; t->strides[i] = strides[i]; }
    t->offset = offset;
    t->storage = s;
    TN__ATOMIC_ADD(&tn__live_tensors, 1);
    return t;
}

/* New contiguous tensor (uninitialised), untracked: the caller owns the reference. */
static tn_tensor *tn__new(tn_dtype dtype, tn_device device, const int64_t *shape, int ndim) {
    /* every result passes here: a shape whose element count overflows (broadcasting two
       huge expanded views, a transposed convolution's output size) is refused, never wrapped */
    if (tn__check_shape("tensor.h", shape, ndim)) return NULL;
    int64_t strides[TN_MAX_DIMS];

    tn__contiguous_strides(shape, ndim, strides);
    tn_storage *s = tn__storage_new((size_t)tn__numel(shape, ndim) * tn_dtype_size(dtype), device);
    return s ? tn__tensor_over(s, dtype, shape, strides, ndim, 0) : NULL;
}

/* A view of base's storage, untracked. */
static tn_tensor *tn__view_of(tn_tensor *base, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    TN__ATOMIC_ADD(&base->storage->refcount, 1);
    tn_tensor *t = tn__tensor_over(base->storage, base->dtype, shape, strides, ndim, offset);
    if (t) t->is_view = true;
    return t;
}

TNDEF tn_tensor *tn_retain(tn_tensor *t) {
    if (t) TN__ATOMIC_ADD(&t->refcount, 1);
    return t;
}

TNDEF void tn_release(tn_tensor *t) {
    if (!t || TN__ATOMIC_ADD(&t->refcount, -1) != 0) return;
    tn_release(t->grad);
    if (t->grad_fn && t->grad_fn->retain_target == t) t->grad_fn->retain_target = NULL;
    tn__node_release(t->grad_fn);
    tn__hooks_free(t->hooks);
    TN_FREE((void *)t->name);
    tn_release(t->base);
    tn__storage_release(t->storage);
    TN__ATOMIC_ADD(&tn__live_tensors, -1);
    tn__blk_put(TN__BLK_TENSOR, t);
}

/* Scopes: a per-thread stack of lists of owned references. */
typedef struct tn__scope { tn_tensor **items; int64_t n, cap; } tn__scope;
static TN__TLS tn__scope *tn__scopes;
static TN__TLS int tn__nscopes, tn__scopes_cap;

static int tn__scope_push(tn__scope *sc, tn_tensor *t) {
    if (sc->n == sc->cap) {
        int64_t cap = sc->cap ? sc->cap * 2 : 64;
        tn_tensor **items = (tn_tensor **)TN_REALLOC(sc->items, (size_t)cap * sizeof *items);
        if (!items) return -1;
        sc->items = items;
        sc->cap = cap;
    }
    sc->items[sc->n++] = t;
    return 0;
}

TNDEF void tn_scope_begin(void) {
    if (tn__nscopes == tn__scopes_cap) {
        int cap = tn__scopes_cap ? tn__scopes_cap * 2 : 16;
        tn__scope *s = (tn__scope *)TN_REALLOC(tn__scopes, (size_t)cap * sizeof *s);
        if (!s) { tn__error("tn_scope_begin: out of memory"); return; }
        memset(s + tn__scopes_cap, 0, (size_t)(cap - tn__scopes_cap) * sizeof *s);
        tn__scopes = s;
        tn__scopes_cap = cap;
    }
    tn__scopes[tn__nscopes++].n = 0;
}

TNDEF void tn_scope_end(void) {
    if (tn__nscopes == 0) { tn__error("tn_scope_end: no scope is open"); return; }
    tn__scope *sc = &tn__scopes[--tn__nscopes];
    /* Release newest first: results die before the inputs they were made from. */
    for (int64_t i = sc->n - 1; i >= 0; i--) tn_release(sc->items[i]);
    sc->n = 0;
    if (tn__nscopes == 0) { /* give the lists back when the outermost scope closes */
        for (int i = 0; i < tn__scopes_cap; i++) TN_FREE(tn__scopes[i].items);
        TN_FREE(tn__scopes);
        tn__scopes = NULL;
        tn__scopes_cap = 0;
    }
}

TNDEF int tn_scope_depth(void) { return tn__nscopes; }

TNDEF tn_tensor *tn_keep(tn_tensor *t) {
    if (!t || tn__nscopes == 0) return t;
    tn_retain(t);
    if (tn__nscopes >= 2 && tn__scope_push(&tn__scopes[tn__nscopes - 2], t) != 0) {
        tn_release(t);
        return (tn_tensor *)tn__error("tn_keep: out of memory");
    }
    return t;
}

/* Every public op returns through here: the open scope (if any) takes the reference. */
static tn_tensor *tn__own(tn_tensor *t) {
    if (t && tn__nscopes > 0 && tn__scope_push(&tn__scopes[tn__nscopes - 1], t) != 0) {
        tn_release(t);
        return (tn_tensor *)tn__error("tensor.h: out of memory registering a tensor in its scope");
    }
    return t;
}

TNDEF int tn_ndim(const tn_tensor *t) { return t ? t->ndim : 0; }
TNDEF const int64_t *tn_shape(const tn_tensor *t) { return t ? t->shape : NULL; }
TNDEF const int64_t *tn_strides(const tn_tensor *t) { return t ? t->strides : NULL; }
TNDEF int64_t tn_size(const tn_tensor *t, int64_t dim) {
    if (!t) return -1;
    if (dim < -t->ndim || dim >= t->ndim) return -1;
    return t->shape[dim < 0 ? dim + t->ndim : dim];
}
TNDEF int64_t tn_numel(const tn_tensor *t) { return t ? tn__numel(t->shape, t->ndim) : 0; }
TNDEF int64_t tn_storage_offset(const tn_tensor *t) { return t ? t->offset : 0; }
TNDEF tn_dtype tn_get_dtype(const tn_tensor *t) { return t ? t->dtype : TN_F32; }
TNDEF tn_device tn_get_device(const tn_tensor *t) { return t ? t->device : TN_CPU; }
TNDEF void *tn_data_ptr(const tn_tensor *t) {
    return t ? (char *)t->storage->data + t->offset * (int64_t)tn_dtype_size(t->dtype) : NULL;
}
TNDEF bool tn_is_contiguous(const tn_tensor *t) {
    if (!t) return false;
    int64_t st = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] == 0) return true;
        if (t->shape[i] != 1 && t->strides[i] != st) return false;
        st *= t->shape[i];
    }
    return true;
}
TNDEF int64_t tn_version(const tn_tensor *t) { return t ? TN__ATOMIC_LOAD(&t->storage->version) : 0; }
TNDEF bool tn_same_storage(const tn_tensor *a, const tn_tensor *b) { return a && b && a->storage == b->storage; }
TNDEF bool tn_requires_grad(const tn_tensor *t) { return t && t->requires_grad; }
TNDEF tn_tensor *tn_grad(const tn_tensor *t) { return t ? t->grad : NULL; }
static void tn__bump_version(tn_tensor *t) { TN__ATOMIC_ADD(&t->storage->version, 1); }

/* Argument checks shared by every op. */
#define TN__CHECK_NULL(...) do { tn_tensor *tn__args_[] = {__VA_ARGS__}; \
    for (size_t tn__i_ = 0; tn__i_ < sizeof tn__args_ / sizeof tn__args_[0]; tn__i_++) \
        if (!tn__args_[tn__i_]) return NULL; } while (0)

static int tn__check_cpu_dtype(const char *fn, tn_tensor *t) {
    if (t->dtype == TN_F16 || t->dtype == TN_BF16)
        return TN__FAIL_INT("%s: dtype %s is not supported yet (half precision is reserved for the GPU unit)", fn, tn_dtype_name(t->dtype));
    return 0;
}

/* In-place writes into a tensor whose elements share memory (an expanded view) are
   refused, as PyTorch does: the result would depend on the write order. */
static int tn__check_no_internal_overlap(const char *fn, tn_tensor *t) {
    for (int i = 0; i < t->ndim; i++)
        if (t->strides[i] == 0 && t->shape[i] > 1)
            return TN__FAIL_INT("%s: unsupported operation: more than one element of the written-to tensor (shape %s, strides %s) refers to a single memory location; clone() it first",
                                fn, TN__SHAPE(t), tn__shape_str(t->strides, t->ndim));
    return 0;
}

/* PyTorch's assert_no_overlap: an in-place indexed write whose source shares memory
   with the destination is refused (its result would depend on the write order). */
static int tn__check_no_overlap(const char *fn, tn_tensor *dst, tn_tensor *src) {
    if (dst->storage != src->storage || tn_numel(dst) == 0 || tn_numel(src) == 0) return 0;
    int64_t lo[2], hi[2];
    tn_tensor *ts[2] = {dst, src};
    for (int k = 0; k < 2; k++) {
        lo[k] = hi[k] = ts[k]->offset * (int64_t)tn_dtype_size(ts[k]->dtype);
        for (int i = 0; i < ts[k]->ndim; i++) hi[k] += (ts[k]->shape[i] - 1) * ts[k]->strides[i] * (int64_t)tn_dtype_size(ts[k]->dtype);
        hi[k] += (int64_t)tn_dtype_size(ts[k]->dtype);
    }
    if (lo[0] < hi[1] && lo[1] < hi[0])
        return TN__FAIL_INT("%s: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location; clone() the input first", fn);
    return 0;
}

static int tn__check_same_device(const char *fn, tn_tensor *a, tn_tensor *b) {

    if (a->device == b->device || (b->ndim == 0 && b->device == TN_CPU) || (a->ndim == 0 && a->device == TN_CPU)) return 0;
    return TN__FAIL_INT("%s: expected all tensors on the same device, got %s and %s", fn, tn_device_name(a->device), tn_device_name(b->device));
}

/* ---- the strided iterator ------------------------------------------------
   Every CPU kernel walks its operands with this: operands are aligned to one
   iteration shape (broadcast dims get stride 0), size-1 dims are dropped and
   neighbouring dims that are contiguous for every operand are merged, so the
   inner loop is as long as possible. The loop function sees the inner dimension
   only: n elements with one byte stride per operand, and can take a fast path
   when the strides equal the element sizes. */
#define TN__MAX_OPS 12
typedef void (*tn__loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);
typedef struct tn__iter {
    int ndim, nops;
    int64_t shape[TN_MAX_DIMS];                    /* [0] outermost */
    int64_t strides[TN__MAX_OPS][TN_MAX_DIMS];     /* bytes */
    char *data[TN__MAX_OPS];
} tn__iter;

static void tn__iter_init(tn__iter *it, const int64_t *shape, int ndim) {
    it->nops = 0;   /* no memset: tn__iter_add fills what is read (it is ~1 KB; tiny ops felt it) */
    it->ndim = ndim;
    for (int i = 0; i < ndim; i++) it->shape[i] = shape[i];
}

/* Add an operand whose shape broadcasts to the iteration shape (aligned right). */
static void tn__iter_add(tn__iter *it, tn_tensor *t) {
    int k = it->nops++;
    int64_t es = (int64_t)tn_dtype_size(t->dtype);
    TN_ASSERT(k < TN__MAX_OPS && t->ndim <= it->ndim);
    it->data[k] = (char *)tn_data_ptr(t);
    for (int i = 0; i < it->ndim; i++) {
        int j = i - (it->ndim - t->ndim);
        it->strides[k][i] = (j < 0 || t->shape[j] == 1) ? 0 : t->strides[j] * es;
    }
}

static void tn__iter_coalesce(tn__iter *it) {
    int nd = 0;
    for (int i = 0; i < it->ndim; i++) { /* drop size-1 dims */
        if (it->shape[i] == 1) continue;
        it->shape[nd] = it->shape[i];
        for (int k = 0; k < it->nops; k++) it->strides[k][nd] = it->strides[k][i];
        nd++;
    }
    it->ndim = nd;
    if (nd < 2) return;
    int out = nd - 1; /* merge from the inside out */
    for (int i = nd - 2; i >= 0; i--) {
        bool ok = true;
        for (int k = 0; k < it->nops && ok; k++) ok = it->strides[k][i] == it->strides[k][out] * it->shape[out];
        if (ok) {
            it->shape[out] *= it->shape[i];
        } else {
            out--;
            it->shape[out] = it->shape[i];
            for (int k = 0; k < it->nops; k++) it->strides[k][out] = it->strides[k][i];
        }
    }
    int shift = out;
    it->ndim = nd - shift;
    for (int i = 0; i < it->ndim; i++) {
        it->shape[i] = it->shape[i + shift];
        for (int k = 0; k < it->nops; k++) it->strides[k][i] = it->strides[k][i + shift];
    }
}

static int64_t tn__iter_numel(const tn__iter *it) { return tn__numel(it->shape, it->ndim); }

/* Run fn over the outer rows [begin, end) (rows = elements of all dims but the last). */
static void tn__iter_run_rows(const tn__iter *it, tn__loop_fn fn, void *ctx, int64_t begin, int64_t end) {
    int nd = it->ndim, nops = it->nops;
    int64_t inner = nd ? it->shape[nd - 1] : 1, s[TN__MAX_OPS], idx[TN_MAX_DIMS];
    char *p[TN__MAX_OPS];
    for (int k = 0; k < nops; k++) s[k] = nd ? it->strides[k][nd - 1] : 0;
    int64_t r = begin; /* unravel begin into outer counters */
    for (int i = nd - 2; i >= 0; i--) { idx[i] = r % it->shape[i]; r /= it->shape[i]; }
    for (int64_t row = begin; row < end; row++) {
        for (int k = 0; k < nops; k++) {
            char *q = it->data[k];
            for (int i = 0; i < nd - 1; i++) q += idx[i] * it->strides[k][i];
            p[k] = q;
        }
        fn(p, s, inner, ctx);
        for (int i = nd - 2; i >= 0; i--) { /* odometer */
            if (++idx[i] < it->shape[i]) break;
            idx[i] = 0;
        }
    }
}

static void tn__iter_run(tn__iter *it, tn__loop_fn fn, void *ctx) {
    int64_t numel = tn__iter_numel(it);
    if (numel == 0) return;
    if (numel == 1) { /* one element (scalars, autograd's seeds): no coalescing, no odometer */
        int64_t zero[TN__MAX_OPS] = {0};
        fn(it->data, zero, 1, ctx);
        return;
    }
    tn__iter_coalesce(it);
    int64_t rows = it->ndim > 1 ? tn__numel(it->shape, it->ndim - 1) : 1;
    tn__iter_run_rows(it, fn, ctx, 0, rows);
}

/* Run fn over the elements [e0, e1) of a coalesced iterator in row-major order; a range
   may start and end inside a row. */
static void tn__iter_run_range(const tn__iter *it, tn__loop_fn fn, void *ctx, int64_t e0, int64_t e1) {
    int nd = it->ndim, nops = it->nops;
    int64_t inner = nd ? it->shape[nd - 1] : 1, s[TN__MAX_OPS], idx[TN_MAX_DIMS];
    char *p[TN__MAX_OPS];
    for (int k = 0; k < nops; k++) s[k] = nd ? it->strides[k][nd - 1] : 0;
    int64_t r = e0 / inner, col = e0 % inner;
    for (int i = nd - 2; i >= 0; i--) { idx[i] = r % it->shape[i]; r /= it->shape[i]; }
    for (int64_t e = e0; e < e1;) {
        int64_t n = TN__MIN(inner - col, e1 - e);
        for (int k = 0; k < nops; k++) {
            char *q = it->data[k] + col * s[k];
            for (int i = 0; i < nd - 1; i++) q += idx[i] * it->strides[k][i];
            p[k] = q;
        }
        fn(p, s, n, ctx);
        e += n;
        col = 0;
        for (int i = nd - 2; i >= 0; i--) { /* odometer */
            if (++idx[i] < it->shape[i]) break;
            idx[i] = 0;
        }
    }
}

/* tn__iter_run for elementwise kernels (every element written once through operand 0,
   independent of the others): above TN_PARALLEL_MIN elements of work (work < 0: the
   iteration size) the threads take contiguous ranges. fn must only read ctx (flags by
   TN__STORE_RELAXED). */
static void tn__iter_run_par(tn__iter *it, tn__loop_fn fn, void *ctx, int64_t work) {
    int64_t numel = tn__iter_numel(it);
    int nthr = tn__par_threads(work < 0 ? numel : work, numel / 64);
    if (nthr < 2) { tn__iter_run(it, fn, ctx); return; }
    tn__iter_coalesce(it);
    for (int i = 0; i < it->ndim; i++)   /* an output that repeats elements: keep the order */
        if (it->strides[0][i] == 0) { tn__iter_run_rows(it, fn, ctx, 0, it->ndim > 1 ? tn__numel(it->shape, it->ndim - 1) : 1); return; }
    const tn__iter *cit = it;
    TN__OMP_PARALLEL_FOR(nthr)
    for (int t = 0; t < nthr; t++) {   /* boundaries on 64-element multiples: no shared cache lines */
        int64_t e0 = numel / 64 * t / nthr * 64, e1 = t == nthr - 1 ? numel : numel / 64 * (t + 1) / nthr * 64;
        if (e1 > e0) tn__iter_run_range(cit, fn, ctx, e0, e1);
    }
}

/* tn__iter_run for reductions (operand 0 the output, stride 0 on reduced dims): threads
   split a dim that the output has, so each output element is still accumulated by one
   thread in the serial order and the result does not depend on the thread count. */
static void tn__iter_run_reduce(tn__iter *it, tn__loop_fn fn, void *ctx) {
    int64_t numel = tn__iter_numel(it);
    if (numel < TN_PARALLEL_MIN || numel <= 1) { tn__iter_run(it, fn, ctx); return; }
    tn__iter_coalesce(it);
    int d = -1;   /* the kept dim that splits best: the largest */
    for (int i = 0; i < it->ndim; i++)
        if (it->strides[0][i] != 0 && (d < 0 || it->shape[i] > it->shape[d])) d = i;
    int nthr = d < 0 ? 1 : tn__par_threads(numel, it->shape[d]);
    int64_t rows = it->ndim > 1 ? tn__numel(it->shape, it->ndim - 1) : 1;
    if (nthr < 2) { tn__iter_run_rows(it, fn, ctx, 0, rows); return; }
    const tn__iter *cit = it;
    TN__OMP_PARALLEL_FOR(nthr)
    for (int t = 0; t < nthr; t++) {
        tn__iter sub = *cit;
        int64_t a = cit->shape[d] * t / nthr, b = cit->shape[d] * (t + 1) / nthr;
        sub.shape[d] = b - a;
        for (int k = 0; k < sub.nops; k++) sub.data[k] += a * sub.strides[k][d];
        if (b > a) tn__iter_run_rows(&sub, fn, ctx, 0, sub.ndim > 1 ? tn__numel(sub.shape, sub.ndim - 1) : 1);
    }
}

/* Operand t restrided to the iteration shape `shape` (same rank) without copying:
   used to walk a tensor along another tensor's index space (gather, scatter, reduce). */
static tn_tensor tn__restride(tn_tensor *t, const int64_t *shape, int ndim) {
    tn_tensor v = *t;
    v.ndim = ndim;
    for (int i = 0; i < ndim; i++) v.shape[i] = shape[i];
    return v;
}

/* ======================================================================= */
/* 5. creation & RNG                                                        */
/* ======================================================================= */
/* The CPU element types. Each entry: dtype, C type, suffix, how values convert
   (flt: through double; int: through int64_t, so int64 values stay exact). */
#define TN__TYPES(X) X(TN_F32, float, f32, flt) X(TN_F64, double, f64, flt) X(TN_I32, int32_t, i32, int) \
                     X(TN_I64, int64_t, i64, int) X(TN_U8, uint8_t, u8, int) X(TN_BOOL, bool, b, int)
#define TN__TYPES_WITH(X, A, B) X(TN_F32, float, f32, flt, A, B) X(TN_F64, double, f64, flt, A, B) \
    X(TN_I32, int32_t, i32, int, A, B) X(TN_I64, int64_t, i64, int, A, B) X(TN_U8, uint8_t, u8, int, A, B) X(TN_BOOL, bool, b, int, A, B)

/* Float -> integer conversions are undefined in C out of range; give what x86 (and so
   PyTorch on CPU) gives: the "integer indefinite" value, and uint8 wraps through int64. */
static int64_t tn__f2i64(double v) { return (v != v || v >= 9.2233720368547758e18 || v < -9.2233720368547758e18) ? INT64_MIN : (int64_t)v; }
static float tn__cvt_f32_flt(double v) { return (float)v; }
static float tn__cvt_f32_int(int64_t v) { return (float)v; }
static double tn__cvt_f64_flt(double v) { return v; }
static double tn__cvt_f64_int(int64_t v) { return (double)v; }
static int32_t tn__cvt_i32_flt(double v) { return (v != v || v >= 2147483648.0 || v <= -2147483649.0) ? INT32_MIN : (int32_t)v; }
static int32_t tn__cvt_i32_int(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }
static int64_t tn__cvt_i64_flt(double v) { return tn__f2i64(v); }
static int64_t tn__cvt_i64_int(int64_t v) { return v; }
static uint8_t tn__cvt_u8_flt(double v) { return (uint8_t)(uint64_t)tn__f2i64(v); }
static uint8_t tn__cvt_u8_int(int64_t v) { return (uint8_t)(uint64_t)v; }
static bool tn__cvt_b_flt(double v) { return v != 0; }
static bool tn__cvt_b_int(int64_t v) { return v != 0; }

/* Strided elementwise conversion, one function per destination type. */
#define TN__CAST_FROM(E, TI, SI, KI, TO, SO) case E: { \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI)) { \
        TO *o = (TO *)p[0]; const TI *in = (const TI *)p[1]; \
        for (int64_t i = 0; i < n; i++) o[i] = tn__cvt_##SO##_##KI(in[i]); \
    } else if (s[0] == (int64_t)sizeof(TO) && s[1] == 0) { /* fill: convert once */ \
        TO *o = (TO *)p[0]; const TO v = tn__cvt_##SO##_##KI(*(const TI *)p[1]); \
        for (int64_t i = 0; i < n; i++) o[i] = v; \
    } else for (int64_t i = 0; i < n; i++) \
        *(TO *)(p[0] + i * s[0]) = tn__cvt_##SO##_##KI(*(const TI *)(p[1] + i * s[1])); \
    break; }
#define TN__DEFINE_CAST_TO(E, TO, SO, KO) \
    static void tn__cast_to_##SO(char **p, const int64_t *s, int64_t n, void *ctx) { \
        switch (*(const tn_dtype *)ctx) { TN__TYPES_WITH(TN__CAST_FROM, TO, SO) default: break; } }
TN__TYPES(TN__DEFINE_CAST_TO)

/* Same-dtype copies move bytes (ctx: the element size). */
static void tn__copy_bytes(char **p, const int64_t *s, int64_t n, void *ctx) {
    const int64_t es = *(const int64_t *)ctx;
    if (s[0] == es && s[1] == es) { memcpy(p[0], p[1], (size_t)(n * es)); return; }
    if (s[0] == es && s[1] == 0 && es == 4) { uint32_t v, *o = (uint32_t *)p[0]; memcpy(&v, p[1], 4); for (int64_t i = 0; i < n; i++) o[i] = v; return; }
    if (s[0] == es && s[1] == 0 && es == 8) { uint64_t v, *o = (uint64_t *)p[0]; memcpy(&v, p[1], 8); for (int64_t i = 0; i < n; i++) o[i] = v; return; }
    switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) *(uint8_t *)(p[0] + i * s[0]) = *(const uint8_t *)(p[1] + i * s[1]); break;
    case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(p[0] + i * s[0]) = *(const uint16_t *)(p[1] + i * s[1]); break;
    case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(p[0] + i * s[0]) = *(const uint32_t *)(p[1] + i * s[1]); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], (size_t)es); break;
    }
}
static int tn__cpu_copy(tn_tensor *dst, tn_tensor *src) {
    tn__iter it;
    tn__iter_init(&it, dst->shape, dst->ndim);
    tn__iter_add(&it, dst);
    tn__iter_add(&it, src);
    tn_dtype from = src->dtype;
    if (from == dst->dtype && (from == TN_F32 || from == TN_F64 || from == TN_I32 || from == TN_I64 || from == TN_U8)) {
        int64_t es = (int64_t)tn_dtype_size(from);
        tn__iter_run_par(&it, tn__copy_bytes, &es, -1);
        return 0;
    }
    switch (dst->dtype) {
#define TN__CAST_CASE(E, T, S, K) case E: tn__iter_run_par(&it, tn__cast_to_##S, &from, -1); break;
        TN__TYPES(TN__CAST_CASE)
#undef TN__CAST_CASE
        default: return TN__FAIL_INT("copy: dtype %s is not supported on the CPU", tn_dtype_name(dst->dtype));
    }
    return 0;
}

static int tn__cpu_fill(tn_tensor *dst, double value) {
    tn_tensor v; /* a one-element f64 operand broadcast over dst */
    memset(&v, 0, sizeof v);
    tn_storage st;
    memset(&st, 0, sizeof st);
    st.data = &value;
    v.storage = &st;
    v.dtype = TN_F64;
    return tn__cpu_copy(dst, &v);
}

/* Philox draws: element i of a draw uses counter (offset + i), so threads can take ranges
   and the numbers do not depend on how many there are. */
static int tn__cpu_random(tn_random_op op, tn_tensor *out, uint64_t seed, uint64_t offset, double a, double b, int64_t low, uint64_t range) {
    const int64_t n = tn_numel(out);
    char *base = (char *)tn_data_ptr(out);
    const tn_dtype dt = out->dtype;
    const int nthr = tn__par_threads(n * 16, n);   /* a draw costs about 16 simple ops */
    /* uniform float draws (dropout's masks, rand): the op and dtype as constants, so the
       per-element switches fold and the Philox rounds vectorise (the same numbers) */
    if (op == UNIFORM && (dt == TN_F32 || dt == TN_F64)) {
        if (dt == TN_F32) {
            float *o = (float *)base;
            TN__OMP_PARALLEL_FOR(nthr)
            for (int64_t i = 0; i < n; i++) {
                int64_t iv;
                o[i] = (float)tn_philox_draw(UNIFORM, true, seed, offset + (uint64_t)i, a, b, 0, 0, &iv);
            }
        } else {
            double *o = (double *)base;
            TN__OMP_PARALLEL_FOR(nthr)
            for (int64_t i = 0; i < n; i++) {
                int64_t iv;
                o[i] = tn_philox_draw(UNIFORM, false, seed, offset + (uint64_t)i, a, b, 0, 0, &iv);
            }
        }
        return 0;
    }
    TN__OMP_PARALLEL_FOR(nthr)
    for (int64_t i = 0; i < n; i++) {
        int64_t iv;
        double v = tn_philox_draw((int)op, dt == TN_F32, seed, offset + (uint64_t)i, a, b, low, range, &iv);
        if (op == RANDINT && dt == TN_I64) { ((int64_t *)base)[i] = iv; continue; } /* exact */
        switch (dt) {
        case TN_F32: ((float *)base)[i] = (float)v; break;
        case TN_F64: ((double *)base)[i] = v; break;
        case TN_I32: ((int32_t *)base)[i] = (int32_t)v; break;
        case TN_I64: ((int64_t *)base)[i] = (int64_t)v; break;
        case TN_U8: ((uint8_t *)base)[i] = (uint8_t)v; break;
        default: ((bool *)base)[i] = v != 0; break;
        }
    }
    return 0;
}

static int tn__check_dtype_arg(const char *fn, tn_dtype dtype) {
    if ((unsigned)dtype >= TN_NUM_DTYPES) return TN__FAIL_INT("%s: invalid dtype %d", fn, (int)dtype);
    return 0;
}
/* A dtype the CPU kernels can write (creation functions that fill values). */
static int tn__check_cpu_dtype_arg(const char *fn, tn_dtype dtype) {
    if (tn__check_dtype_arg(fn, dtype)) return -1;
    if (dtype == TN_F16 || dtype == TN_BF16) return TN__FAIL_INT("%s: dtype %s is not supported yet (half precision is reserved for the GPU unit)", fn, tn_dtype_name(dtype));
    return 0;
}

/* New uninitialised tensor after checking a user shape, untracked. */
static tn_tensor *tn__new_checked(const char *fn, const int64_t *shape, int ndim, tn_dtype dtype) {
    if (tn__check_shape(fn, shape, ndim) || tn__check_dtype_arg(fn, dtype)) return NULL;
    return TN__AS(fn, tn__new(dtype, TN_CPU, shape, ndim)); /* out of memory reads "tn_zeros: out of memory ..." */
}

/* PyTorch refuses a fill value that does not fit an integer dtype (300 into uint8). */
static int tn__check_fill_value(const char *fn, double v, tn_dtype dtype) {
    double lo = dtype == TN_U8 ? 0 : dtype == TN_I32 ? INT32_MIN : -9.2233720368547758e18;
    double hi = dtype == TN_U8 ? 255 : dtype == TN_I32 ? INT32_MAX : 9.2233720368547758e18;
    if (tn__is_int(dtype) && !(v >= lo && v <= hi))
        return TN__FAIL_INT("%s: value %g cannot be converted to type %s without overflow", fn, v, tn_dtype_name(dtype));
    return 0;
}

static tn_tensor *tn__filled(const char *fn, const int64_t *shape, int ndim, double value, tn_dtype dtype) {
    if (tn__check_cpu_dtype_arg(fn, dtype) || tn__check_fill_value(fn, value, dtype)) return NULL;
    tn_tensor *t = tn__new_checked(fn, shape, ndim, dtype);
    if (t && tn__backend(t->device)->fill(t, value)) { tn_release(t); return NULL; }
    return t;
}

TNDEF tn_tensor *tn_empty(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__own(tn__new_checked("tn_empty", shape, ndim, dtype)); }
TNDEF tn_tensor *tn_zeros(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__own(tn__filled("tn_zeros", shape, ndim, 0, dtype)); }
TNDEF tn_tensor *tn_ones(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__own(tn__filled("tn_ones", shape, ndim, 1, dtype)); }
TNDEF tn_tensor *tn_full(const int64_t *shape, int ndim, double value, tn_dtype dtype) { return tn__own(tn__filled("tn_full", shape, ndim, value, dtype)); }

TNDEF tn_tensor *tn_from_data(const void *data, const int64_t *shape, int ndim, tn_dtype dtype) {
    tn_tensor *t = tn__new_checked("tn_from_data", shape, ndim, dtype);
    if (!t) return NULL;
    size_t nb = (size_t)tn_numel(t) * tn_dtype_size(dtype);
    if (nb && !data) { tn_release(t); return (tn_tensor *)tn__error("tn_from_data: data is NULL"); }
    if (nb) memcpy(tn_data_ptr(t), data, nb);
    return tn__own(t);
}

static void tn__noop_deleter(void *data, void *ctx) { (void)data; (void)ctx; }
/* A CPU storage over memory someone else allocated, freed by deleter(data, ctx). */
static tn_storage *tn__foreign_storage(void *data, size_t nbytes, void (*deleter)(void *, void *), void *ctx) {
    tn_storage *s = (tn_storage *)TN_MALLOC(sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->refcount = 1;
    s->data = data;
    s->nbytes = nbytes;
    s->device = TN_CPU;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    TN__ATOMIC_ADD(&tn__live_storages, 1);
    return s;
}

TNDEF tn_tensor *tn_from_blob(void *data, const int64_t *shape, int ndim, const int64_t *strides, tn_dtype dtype,
                              void (*deleter)(void *data, void *ctx), void *ctx) {
    if (tn__check_shape("tn_from_blob", shape, ndim) || tn__check_dtype_arg("tn_from_blob", dtype)) return NULL;
    if (!data) return (tn_tensor *)tn__error("tn_from_blob: data is NULL");
    int64_t st[TN_MAX_DIMS], span = 1;
    tn__contiguous_strides(shape, ndim, st);
    for (int i = 0; i < ndim; i++) {
        if (strides) {
            if (strides[i] < 0) return (tn_tensor *)tn__error("tn_from_blob: negative stride %lld", (long long)strides[i]);
            st[i] = strides[i];
        }
        if (shape[i] == 0) span = 0;
    }
    if (span) {
        int64_t last, bytes;
        if (!tn__span_ok(shape, st, ndim, 0, &last) || last == INT64_MAX || !tn__mul_ok(last + 1, (int64_t)tn_dtype_size(dtype), &bytes))

            return (tn_tensor *)tn__error("tn_from_blob: shape %s with strides %s reaches past any addressable memory", tn__shape_str(shape, ndim), tn__shape_str(st, ndim));
        span = last + 1;
    }
    tn_storage *s = tn__foreign_storage(data, (size_t)span * tn_dtype_size(dtype), deleter ? deleter : tn__noop_deleter, ctx);
    if (!s) return (tn_tensor *)tn__error("tn_from_blob: out of memory");
    return tn__own(tn__tensor_over(s, dtype, shape, st, ndim, 0));
}

static tn_tensor *tn__scalar_new(double value, tn_dtype dtype, bool wrapped) {
    tn_tensor *t = tn__filled("tn_scalar", NULL, 0, value, dtype);
    if (t) t->is_wrapped_number = wrapped;
    return t;
}
static tn_tensor *tn__scalar_tensor_impl(double value, tn_dtype dtype) { return tn__own(tn__scalar_new(value, dtype, false)); }
TNDEF tn_tensor *tn_scalar(double value) { return tn__own(tn__scalar_new(value, TN_F64, true)); }
TNDEF tn_tensor *tn_scalar_bool(bool value) { return tn__own(tn__scalar_new(value, TN_BOOL, true)); }
TNDEF tn_tensor *tn_scalar_int(int64_t value) {
    tn_tensor *t = tn__scalar_new(0, TN_I64, true);
    if (t) *(int64_t *)tn_data_ptr(t) = value;
    return tn__own(t);
}
TNDEF tn_tensor *tn_scalar_tensor(double value, tn_dtype dtype) { return TN__AS("tn_scalar_tensor", tn__scalar_tensor_impl(value, dtype)); }

TNDEF tn_tensor *tn_arange(double start, double end, double step, tn_dtype dtype) {
    if (tn__check_cpu_dtype_arg("tn_arange", dtype)) return NULL;
    if (step == 0 || step != step) return (tn_tensor *)tn__error("tn_arange: step must be nonzero");
    if (!isfinite(start) || !isfinite(end)) return (tn_tensor *)tn__error("tn_arange: unsupported range: %g -> %g", start, end);
    if ((step > 0 && end < start) || (step < 0 && end > start))
        return (tn_tensor *)tn__error("tn_arange: upper bound and larger bound inconsistent with step sign (start %g, end %g, step %g)", start, end, step);
    double nd = ceil((end - start) / step);
    if (nd > 9e15) return (tn_tensor *)tn__error("tn_arange: too many elements (%g)", nd);
    int64_t n = (int64_t)nd;
    tn_tensor *t = tn__new_checked("tn_arange", &n, 1, dtype);
    if (!t) return NULL;
    tn_tensor *tmp = tn__new(TN_F64, TN_CPU, &n, 1);
    if (!tmp) { tn_release(t); return NULL; }
    for (int64_t i = 0; i < n; i++) ((double *)tmp->storage->data)[i] = start + (double)i * step;
    tn__cpu_copy(t, tmp);
    tn_release(tmp);
    return tn__own(t);
}

TNDEF tn_tensor *tn_linspace(double start, double end, int64_t steps, tn_dtype dtype) {
    if (steps < 0) return (tn_tensor *)tn__error("tn_linspace: number of steps must be non-negative, got %lld", (long long)steps);
    if (tn__check_cpu_dtype_arg("tn_linspace", dtype)) return NULL;
    tn_tensor *t = tn__new_checked("tn_linspace", &steps, 1, dtype);
    tn_tensor *tmp = t ? tn__new(TN_F64, TN_CPU, &steps, 1) : NULL;
    if (!tmp) { tn_release(t); return NULL; }
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0, *v = (double *)tmp->storage->data;
    for (int64_t i = 0; i < steps; i++) /* symmetric, as PyTorch: both ends exact */
        v[i] = steps == 1 ? start : i < steps / 2 ? start + step * (double)i : end - step * (double)(steps - 1 - i);
    tn__cpu_copy(t, tmp);
    tn_release(tmp);
    return tn__own(t);
}

TNDEF tn_tensor *tn_eye(int64_t n, int64_t m, tn_dtype dtype) {
    if (m < 0) m = n;
    int64_t shape[2] = {n, m};
    tn_tensor *t = tn__filled("tn_eye", shape, 2, 0, dtype);
    if (!t) return NULL;
    tn_tensor diag = *t; /* the diagonal as a strided 1-d view */
    diag.ndim = 1;
    diag.shape[0] = TN__MIN(n, m);
    diag.strides[0] = m + 1;
    tn__cpu_fill(&diag, 1);
    return tn__own(t);
}

TNDEF tn_tensor *tn_empty_like(tn_tensor *t) {
    TN__CHECK_NULL(t);
    return tn__own(tn__new(t->dtype, t->device, t->shape, t->ndim));
}
static tn_tensor *tn__full_like(tn_tensor *t, double v) {
    tn_tensor *r = tn__new(t->dtype, t->device, t->shape, t->ndim);
    if (r && tn__backend(r->device)->fill(r, v)) { tn_release(r); return NULL; }
    return r;
}
static tn_tensor *tn__zeros_like_impl(tn_tensor *t) { TN__CHECK_NULL(t); return tn__own(tn__full_like(t, 0)); }
static tn_tensor *tn__ones_like_impl(tn_tensor *t) { TN__CHECK_NULL(t); return tn__own(tn__full_like(t, 1)); }
static tn_tensor *tn__full_like_impl(tn_tensor *t, double v) { TN__CHECK_NULL(t); return tn__own(tn__full_like(t, v)); }

/* dst <- src (src broadcast to dst), through the backend that owns the non-CPU side. */
static int tn__copy(tn_tensor *dst, tn_tensor *src) {
    const tn_backend *be = tn__backend(dst->device != TN_CPU ? dst->device : src->device);
    if (!be) return TN__FAIL_INT("copy: no backend for device %s", tn_device_name(src->device));
    if (tn__check_cpu_dtype("copy", src) || (dst->device == TN_CPU && tn__check_cpu_dtype("copy", dst))) return -1;
    return be->copy(dst, src);
}
TNDEF tn_tensor *tn_full_like(tn_tensor *t, double v) { return TN__AS("tn_full_like", tn__full_like_impl(t, v)); }
TNDEF tn_tensor *tn_ones_like(tn_tensor *t) { return TN__AS("tn_ones_like", tn__ones_like_impl(t)); }
TNDEF tn_tensor *tn_zeros_like(tn_tensor *t) { return TN__AS("tn_zeros_like", tn__zeros_like_impl(t)); }

/* A contiguous copy of t with the given dtype on the given device, untracked. */
static tn_tensor *tn__copy_as(tn_tensor *t, tn_dtype dtype, tn_device device) {
    tn_tensor *r = tn__new(dtype, device, t->shape, t->ndim);
    if (r && tn__copy(r, t)) { tn_release(r); return NULL; }
    return r;
}

/* in converted to dtype (a new reference either way), untracked. */
static tn_tensor *tn__as_dtype(tn_tensor *in, tn_dtype dtype) {
    return in->dtype == dtype ? tn_retain(in) : tn__copy_as(in, dtype, in->device);
}

/* A copy of t (new dtype or device) with its node: the gradient flows back unchanged
   and is converted to t's dtype and device by the engine. */
static tn_tensor *tn__copy_record(tn_tensor *t, tn_tensor *out, tn__gop op) {
    tn_node *node = out ? tn__node_new(op, 0, &t, 1) : NULL;
    return tn__node_attach(node, out);
}
TNDEF tn_tensor *tn_clone(tn_tensor *t) { TN__CHECK_NULL(t); if (tn__check_cpu_dtype("tn_clone", t)) return NULL; return tn__own(tn__copy_record(t, tn__copy_as(t, t->dtype, t->device), G_COPY)); }
static tn_tensor *tn__contiguous_impl(tn_tensor *t) {
    TN__CHECK_NULL(t);
    return tn__own(tn_is_contiguous(t) ? tn_retain(t) : tn__copy_record(t, tn__copy_as(t, t->dtype, t->device), G_COPY));
}
TNDEF tn_tensor *tn_contiguous(tn_tensor *t) { return TN__AS("tn_contiguous", tn__contiguous_impl(t)); }
TNDEF tn_tensor *tn_to_dtype(tn_tensor *t, tn_dtype dtype) {
    TN__CHECK_NULL(t);
    if (tn__check_dtype_arg("tn_to_dtype", dtype)) return NULL;
    if (t->device == TN_CPU && t->dtype != dtype && (tn__check_cpu_dtype("tn_to_dtype", t) || tn__check_cpu_dtype_arg("tn_to_dtype", dtype))) return NULL;
    return tn__own(t->dtype == dtype ? tn_retain(t) : tn__grad_name(tn__copy_record(t, tn__copy_as(t, dtype, t->device), G_COPY), "ToCopyBackward0"));
}
TNDEF tn_tensor *tn_to(tn_tensor *t, tn_device device) {
    TN__CHECK_NULL(t);
    if (t->device == device) return tn__own(tn_retain(t));
    if (!tn__backend(device)) return (tn_tensor *)tn__error("tn_to: device '%s' is not available: %s", tn_device_name(device),
        device == TN_CUDA ? tn_cuda_unavailable_reason() : "invalid device");
    return tn__own(tn__copy_record(t, tn__copy_as(t, t->dtype, device), G_TO));
}

/* The value of one element, read back to the host. */
static double tn__read_double(tn_tensor *t) {
    double v = NAN;
    tn_tensor *h = tn__copy_as(t, TN_F64, TN_CPU);
    if (h) { v = *(double *)tn_data_ptr(h); tn_release(h); }
    return v;
}

TNDEF double tn_item(tn_tensor *t) {
    if (!t) return NAN;
    if (t->device == TN_CPU && tn__check_cpu_dtype("tn_item", t)) return NAN;
    if (tn_numel(t) != 1) {
        tn__error("tn_item: a tensor with %lld elements (shape %s) cannot be converted to a scalar", (long long)tn_numel(t), TN__SHAPE(t));
        return NAN;
    }
    if (t->dtype == TN_I64) { /* exact for |v| > 2^53 too, as far as a double allows */
        tn_tensor *h = tn__copy_as(t, TN_I64, TN_CPU);
        double v = h ? (double)*(int64_t *)tn_data_ptr(h) : NAN;
        tn_release(h);
        return v;
    }
    return tn__read_double(t);
}

/* Copy src into dst, cloning src first when the two overlap in memory but are not the
   same view (e.g. x.copy_(x.flip(0))), so no element is read after it was written. */
static int tn__copy_into(const char *fn, tn_tensor *dst, tn_tensor *src) {
    int64_t bshape[TN_MAX_DIMS];
    int nd = tn__broadcast(dst->shape, dst->ndim, src->shape, src->ndim, bshape);
    if (nd < 0 || nd != dst->ndim || memcmp(bshape, dst->shape, (size_t)nd * sizeof(int64_t)) != 0)
        return TN__FAIL_INT("%s: source of shape %s cannot be broadcast to destination %s", fn, TN__SHAPE(src), TN__SHAPE(dst));
    if (tn__check_same_device(fn, dst, src) || tn__check_no_internal_overlap(fn, dst)) return -1;
    tn_tensor *s = src;
    bool same_view = src->offset == dst->offset && src->ndim == dst->ndim &&
                     !memcmp(src->strides, dst->strides, (size_t)dst->ndim * sizeof(int64_t)) && src->dtype == dst->dtype;
    if (src->storage == dst->storage && !same_view) {
        s = tn__copy_as(src, src->dtype, src->device);
        if (!s) return -1;
    }
    int rc = tn__copy(dst, s);
    if (s != src) tn_release(s);
    if (rc == 0) tn__bump_version(dst);
    return rc;
}

TNDEF int tn_copy_(tn_tensor *dst, tn_tensor *src) {
    if (!dst || !src) return -1;
    if ((dst->device == TN_CPU && tn__check_cpu_dtype("tn_copy_", dst)) || (src->device == TN_CPU && tn__check_cpu_dtype("tn_copy_", src))) return -1;
    int m = tn__inplace_mode("tn_copy_", dst, &src, 1);
    if (m < 0) return -1;
    if (m) { /* dst takes src's values and history (the old value gets no gradient, as PyTorch) */
        tn_scope_begin();
        /* where(true, src, old): the value of src, its gradient, and zeros for the old value */
        tn_tensor *old = tn_clone(dst);
        tn_tensor *r = tn_where(tn_ones(NULL, 0, TN_BOOL), tn_to_dtype(src, dst->dtype), old);
        int rc = tn__inplace_finish("tn_copy_", dst, r);
        tn_scope_end();
        return rc;
    }

    return tn__copy_into("tn_copy_", dst, src);
}

/* ---- RNG ---- */
static tn_generator tn__default_gen = {0x853c49e6748fea9bULL, 0};
TNDEF tn_generator *tn_default_generator(void) { return &tn__default_gen; }
TNDEF void tn_manual_seed(uint64_t seed) { tn__default_gen.seed = seed; tn__default_gen.offset = 0; }
TNDEF tn_generator *tn_generator_new(uint64_t seed) {
    tn_generator *g = (tn_generator *)TN_MALLOC(sizeof *g);
    if (!g) return (tn_generator *)tn__error("tn_generator_new: out of memory");
    g->seed = seed;
    g->offset = 0;
    return g;
}
TNDEF void tn_generator_free(tn_generator *g) { TN_FREE(g); }

/* Reserve n counters of a generator (atomically, so threads get disjoint draws). */
static uint64_t tn__gen_take(tn_generator *g, int64_t n) {
    if (!g) g = &tn__default_gen;
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_fetch_add(&g->offset, (uint64_t)n, __ATOMIC_ACQ_REL);
#else
    uint64_t o = g->offset; g->offset += (uint64_t)n; return o;
#endif
}

static tn_tensor *tn__random(const char *fn, tn_random_op op, const int64_t *shape, int ndim, tn_dtype dtype,
                             tn_generator *gen, double a, double b, int64_t low, uint64_t range, tn_device device) {
    if (tn__check_cpu_dtype_arg(fn, dtype)) return NULL;
    if (op != RANDINT && !tn_dtype_is_floating(dtype))
        return (tn_tensor *)tn__error("%s: expected a floating dtype, got %s", fn, tn_dtype_name(dtype));
    tn_tensor *t = device == TN_CPU ? tn__new_checked(fn, shape, ndim, dtype)
                 : tn__check_shape(fn, shape, ndim) ? NULL : TN__AS(fn, tn__new(dtype, device, shape, ndim));
    if (!t) return NULL;
    uint64_t off = tn__gen_take(gen, tn_numel(t));
    if (tn__backend(t->device)->random(op, t, (gen ? gen : &tn__default_gen)->seed, off, a, b, low, range)) { tn_release(t); return NULL; }
    return tn__own(t);
}

TNDEF tn_tensor *tn_rand(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__random("tn_rand", UNIFORM, shape, ndim, dtype, NULL, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_randn(const int64_t *shape, int ndim, tn_dtype dtype) { return tn__random("tn_randn", NORMAL, shape, ndim, dtype, NULL, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_rand_gen(const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) { return tn__random("tn_rand_gen", UNIFORM, shape, ndim, dtype, g, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_randn_gen(const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) { return tn__random("tn_randn_gen", NORMAL, shape, ndim, dtype, g, 0, 1, 0, 0, TN_CPU); }
TNDEF tn_tensor *tn_normal(double mean, double std, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (!(std >= 0)) return (tn_tensor *)tn__error("tn_normal: std must be >= 0, got %g", std);
    return tn__random("tn_normal", NORMAL, shape, ndim, dtype, g, mean, std, 0, 0, TN_CPU);
}
TNDEF tn_tensor *tn_uniform(double low, double high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (!(low <= high)) return (tn_tensor *)tn__error("tn_uniform: expected low <= high, got %g > %g", low, high);
    return tn__random("tn_uniform", UNIFORM, shape, ndim, dtype, g, low, high, 0, 0, TN_CPU);
}
TNDEF tn_tensor *tn_randint(int64_t low, int64_t high, const int64_t *shape, int ndim, tn_dtype dtype, tn_generator *g) {
    if (low >= high) return (tn_tensor *)tn__error("tn_randint: expected low < high, got low %lld, high %lld", (long long)low, (long long)high);
    if (dtype == TN_BOOL) return (tn_tensor *)tn__error("tn_randint: dtype bool is not supported");
    double dmin = dtype == TN_U8 ? 0 : dtype == TN_I32 ? INT32_MIN : dtype == TN_F32 ? -16777216.0 : dtype == TN_F64 ? -9007199254740992.0 : -9.3e18;
    double dmax = dtype == TN_U8 ? 256 : dtype == TN_I32 ? 2147483648.0 : dtype == TN_F32 ? 16777217.0 : dtype == TN_F64 ? 9007199254740993.0 : 9.3e18;
    if ((double)low < dmin || (double)high > dmax)
        return (tn_tensor *)tn__error("tn_randint: range [%lld, %lld) is out of bounds for dtype %s", (long long)low, (long long)high, tn_dtype_name(dtype));
    return tn__random("tn_randint", RANDINT, shape, ndim, dtype, g, (double)low, (double)high, low, (uint64_t)high - (uint64_t)low, TN_CPU);
}
TNDEF tn_tensor *tn_rand_like(tn_tensor *t) { TN__CHECK_NULL(t); return tn__random("tn_rand_like", UNIFORM, t->shape, t->ndim, t->dtype, NULL, 0, 1, 0, 0, t->device); }
TNDEF tn_tensor *tn_randn_like(tn_tensor *t) { TN__CHECK_NULL(t); return tn__random("tn_randn_like", NORMAL, t->shape, t->ndim, t->dtype, NULL, 0, 1, 0, 0, t->device); }

static tn_tensor *tn__bernoulli_impl(tn_tensor *p, tn_generator *gen) {
    TN__CHECK_NULL(p);
    if (tn__check_cpu_dtype("tn_bernoulli", p)) return NULL;
    if (!tn_dtype_is_floating(p->dtype)) return (tn_tensor *)tn__error("tn_bernoulli: expected a floating probability tensor, got %s", tn_dtype_name(p->dtype));
    tn_scope_begin();
    double lo = tn_numel(p) ? tn_item(tn_amin(p, NULL, 0, false)) : 0, hi = tn_numel(p) ? tn_item(tn_amax(p, NULL, 0, false)) : 0;
    if (!(lo >= 0 && hi <= 1)) {
        tn_scope_end();
        return (tn_tensor *)tn__error("tn_bernoulli: expected 0 <= p <= 1 for every element of p (shape %s), got values from %g to %g", TN__SHAPE(p), lo, hi);
    }
    tn_tensor *u = tn__random("tn_bernoulli", UNIFORM, p->shape, p->ndim, TN_F64, gen, 0, 1, 0, 0, p->device);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_lt(u, p), p->dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bernoulli(tn_tensor *p, tn_generator *gen) { return TN__AS("tn_bernoulli", tn__bernoulli_impl(p, gen)); }
static tn_tensor *tn__bernoulli_p_impl(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen) {
    if (!(p >= 0 && p <= 1)) return (tn_tensor *)tn__error("tn_bernoulli_p: p must be in [0, 1], got %g", p);
    tn_scope_begin();
    tn_tensor *u = tn_rand_gen(shape, ndim, TN_F64, gen);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_lt_scalar(u, p), dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_bernoulli_p(const int64_t *shape, int ndim, double p, tn_dtype dtype, tn_generator *gen) { return TN__AS("tn_bernoulli_p", tn__bernoulli_p_impl(shape, ndim, p, dtype, gen)); }
/* A permutation as the argsort of uniform keys: the same on every device. */
static tn_tensor *tn__randperm_impl(int64_t n, tn_dtype dtype, tn_generator *gen) {
    if (n < 0) return (tn_tensor *)tn__error("tn_randperm: n must be non-negative, got %lld", (long long)n);
    tn_scope_begin();
    tn_tensor *keys = tn_rand_gen(&n, 1, TN_F64, gen);
    tn_tensor *r = tn_keep(tn_to_dtype(tn_argsort(keys, 0, false), dtype));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_randperm(int64_t n, tn_dtype dtype, tn_generator *gen) { return TN__AS("tn_randperm", tn__randperm_impl(n, dtype, gen)); }

/* ======================================================================= */
/* 6. views & indexing                                                      */
/* ======================================================================= */
static tn_tensor *tn__view_own(tn_tensor *t, const int64_t *shape, const int64_t *strides, int ndim, int64_t offset) {
    tn_tensor *v = tn__view_of(t, shape, strides, ndim, offset);
    if (v) v->base = tn_retain(t->base ? t->base : t); /* user-visible views know their base */
    return tn__own(v);
}

/* A view op's node: v (already made) gets op's backward with attributes attrs. */
static tn_tensor *tn__view_record(tn_tensor *t, tn_tensor *v, tn__gop op, const int64_t *attrs, int nattrs) {
    tn_node *node = v ? tn__node_new(op, 0, &t, 1) : NULL;
    if (node) {
        for (int k = 0; k < nattrs; k++) node->i[k] = attrs[k];
        node->ni = nattrs;
    }
    return tn__node_attach(node, v);
}

/* Strides for viewing (shape, strides) as newshape without a copy, as ATen's
   computeStride: each run of dims that is contiguous in memory may be re-split freely.
   Returns 0, or -1 (no error recorded) when a copy is unavoidable. */
static int tn__view_strides(const int64_t *shape, const int64_t *strides, int ndim, const int64_t *nshape, int nnd, int64_t *nstrides) {
    if (tn__numel(shape, ndim) == 0 || ndim == 0) {
        tn__contiguous_strides(nshape, nnd, nstrides);
        return 0;
    }
    int view_d = nnd - 1;
    int64_t chunk = strides[ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        tensor_numel *= shape[d];
        if (d == 0 || (shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk)) {
            while (view_d >= 0 && (view_numel < tensor_numel || nshape[view_d] == 1)) {
                nstrides[view_d] = view_numel * chunk;
                view_numel *= nshape[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) return -1;
            if (d > 0) { chunk = strides[d - 1]; tensor_numel = 1; view_numel = 1; }
        }
    }
    return view_d == -1 ? 0 : -1;
}

/* Resolve a requested shape with at most one -1 against numel. */
static int tn__infer_shape(const char *fn, tn_tensor *t, const int64_t *shape, int ndim, int64_t *out) {
    if (ndim < 0 || ndim > TN_MAX_DIMS) return TN__FAIL_INT("%s: ndim %d out of range [0, %d]", fn, ndim, TN_MAX_DIMS);
    if (ndim > 0 && !shape) return TN__FAIL_INT("%s: shape is NULL", fn);
    int infer = -1;
    int64_t known = 1, numel = tn_numel(t);
    for (int i = 0; i < ndim; i++) {
        out[i] = shape[i];
        if (shape[i] == -1) {
            if (infer >= 0) return TN__FAIL_INT("%s: only one dimension can be inferred (shape %s)", fn, tn__shape_str(shape, ndim));
            infer = i;
        } else if (shape[i] < 0) {
            return TN__FAIL_INT("%s: invalid shape dimension %lld in %s", fn, (long long)shape[i], tn__shape_str(shape, ndim));
        } else if (!tn__mul_ok(known, shape[i], &known)) {
            return TN__FAIL_INT("%s: shape %s has too many elements", fn, tn__shape_str(shape, ndim));
        }
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return TN__FAIL_INT("%s: shape %s is invalid for input of size %lld", fn, tn__shape_str(shape, ndim), (long long)numel);
        out[infer] = numel / known;
    } else if (known != numel) {
        return TN__FAIL_INT("%s: shape %s is invalid for input of size %lld", fn, tn__shape_str(shape, ndim), (long long)numel);
    }
    return 0;
}

TNDEF tn_tensor *tn_view(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (tn__infer_shape("tn_view", t, shape, ndim, ns)) return NULL;
    if (tn__view_strides(t->shape, t->strides, t->ndim, ns, ndim, st))
        return (tn_tensor *)tn__error("tn_view: view size %s is not compatible with input tensor's size %s and stride %s "
            "(at least one dimension spans across two contiguous subspaces); use tn_reshape", tn__shape_str(ns, ndim),
            TN__SHAPE(t), tn__shape_str(t->strides, t->ndim));
    return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_RESHAPE, NULL, 0);
}

static tn_tensor *tn__reshape_impl(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (tn__infer_shape("tn_reshape", t, shape, ndim, ns)) return NULL;
    if (tn__view_strides(t->shape, t->strides, t->ndim, ns, ndim, st) == 0)
        return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_RESHAPE, NULL, 0);
    tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
    if (!c) return NULL;
    tn__contiguous_strides(ns, ndim, st);
    tn_tensor *r = tn__view_own(c, ns, st, ndim, 0);
    tn_release(c);
    return tn__view_record(t, r, G_RESHAPE, NULL, 0);
}
TNDEF tn_tensor *tn_reshape(tn_tensor *t, const int64_t *shape, int ndim) { return TN__AS("tn_reshape", tn__reshape_impl(t, shape, ndim)); }

TNDEF tn_tensor *tn_flatten(tn_tensor *t, int64_t start_dim, int64_t end_dim) {
    TN__CHECK_NULL(t);
    int s = tn__wrap_dim("tn_flatten", start_dim, t->ndim), e = s < 0 ? -1 : tn__wrap_dim("tn_flatten", end_dim, t->ndim);
    if (s < 0 || e < 0) return NULL;
    if (s > e) return (tn_tensor *)tn__error("tn_flatten: start_dim %lld cannot come after end_dim %lld", (long long)start_dim, (long long)end_dim);
    if (t->ndim == 0) { int64_t one = 1; return tn_reshape(t, &one, 1); }
    int64_t ns[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < s; i++) ns[nd++] = t->shape[i];
    ns[nd] = 1;
    for (int i = s; i <= e; i++) ns[nd] *= t->shape[i];
    nd++;
    for (int i = e + 1; i < t->ndim; i++) ns[nd++] = t->shape[i];
    return tn_reshape(t, ns, nd);
}

TNDEF tn_tensor *tn_unflatten(tn_tensor *t, int64_t dim, const int64_t *sizes, int n) {
    TN__CHECK_NULL(t);
    int d = tn__wrap_dim("tn_unflatten", dim, t->ndim);
    if (d < 0) return NULL;
    if (n < 1 || !sizes || t->ndim - 1 + n > TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_unflatten: need 1 to %d sizes, got %d", TN_MAX_DIMS - t->ndim + 1, n);
    int64_t ns[TN_MAX_DIMS], prod = 1, infer = -1;
    int nd = 0;
    for (int i = 0; i < d; i++) ns[nd++] = t->shape[i];
    for (int i = 0; i < n; i++) {
        if (sizes[i] == -1) {
            if (infer >= 0) return (tn_tensor *)tn__error("tn_unflatten: only one dimension can be inferred (sizes %s)", tn__shape_str(sizes, n));
            infer = nd;
        } else if (sizes[i] < 0 || !tn__mul_ok(prod, sizes[i], &prod)) {
            return (tn_tensor *)tn__error("tn_unflatten: invalid sizes %s", tn__shape_str(sizes, n));
        }
        ns[nd++] = sizes[i];
    }
    for (int i = d + 1; i < t->ndim; i++) ns[nd++] = t->shape[i];
    if (infer >= 0 && prod > 0) ns[infer] = t->shape[d] / prod;
    if ((infer >= 0 ? ns[infer] * prod : prod) != t->shape[d])
        return (tn_tensor *)tn__error("tn_unflatten: sizes %s don't multiply up to the size of dim %d (%lld) in %s",
                                      tn__shape_str(sizes, n), d, (long long)t->shape[d], TN__SHAPE(t));
    return tn_view(t, ns, nd);
}

TNDEF tn_tensor *tn_permute(tn_tensor *t, const int64_t *dims, int ndim) {
    TN__CHECK_NULL(t);
    if (ndim != t->ndim || (ndim && !dims))
        return (tn_tensor *)tn__error("tn_permute: number of dims (%d) doesn't match the tensor's %d dims (shape %s)", ndim, t->ndim, TN__SHAPE(t));
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS], perm[TN_MAX_DIMS];
    bool seen[TN_MAX_DIMS] = {false};
    for (int i = 0; i < ndim; i++) {
        int d = tn__wrap_dim("tn_permute", dims[i], ndim);
        if (d < 0) return NULL;
        if (seen[d]) return (tn_tensor *)tn__error("tn_permute: dim %d repeats in %s", d, tn__shape_str(dims, ndim));
        seen[d] = true;
        perm[i] = d;
        ns[i] = t->shape[d];
        st[i] = t->strides[d];
    }
    return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_PERMUTE, perm, ndim);
}

TNDEF tn_tensor *tn_transpose(tn_tensor *t, int64_t dim0, int64_t dim1) {
    TN__CHECK_NULL(t);
    int a = tn__wrap_dim("tn_transpose", dim0, t->ndim), b = a < 0 ? -1 : tn__wrap_dim("tn_transpose", dim1, t->ndim);
    if (a < 0 || b < 0) return NULL;
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    memcpy(st, t->strides, sizeof st);
    if (t->ndim) {
        ns[a] = t->shape[b]; ns[b] = t->shape[a];
        st[a] = t->strides[b]; st[b] = t->strides[a];
    }
    int64_t perm[TN_MAX_DIMS];
    for (int i = 0; i < t->ndim; i++) perm[i] = i == a ? b : i == b ? a : i;
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, t->ndim, t->offset), G_PERMUTE, perm, t->ndim), "TransposeBackward0");
}

TNDEF tn_tensor *tn_t(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->ndim > 2) return (tn_tensor *)tn__error("tn_t: expects a tensor with <= 2 dimensions, but got %d (shape %s)", t->ndim, TN__SHAPE(t));
    return tn__grad_name(t->ndim < 2 ? tn__view_record(t, tn__view_own(t, t->shape, t->strides, t->ndim, t->offset), G_RESHAPE, NULL, 0) : tn_transpose(t, 0, 1), "TBackward0");
}

TNDEF tn_tensor *tn_narrow(tn_tensor *t, int64_t dim, int64_t start, int64_t length) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_narrow: cannot be applied to a 0-dim tensor");
    int d = tn__wrap_dim("tn_narrow", dim, t->ndim);
    if (d < 0) return NULL;
    int64_t size = t->shape[d];
    if (start < -size || start > size)
        return (tn_tensor *)tn__error("tn_narrow: start %lld out of range for dimension %d of size %lld", (long long)start, d, (long long)size);
    if (start < 0) start += size;
    if (length < 0 || length > size - start)
        return (tn_tensor *)tn__error("tn_narrow: start (%lld) + length (%lld) exceeds dimension %d of size %lld", (long long)start, (long long)length, d, (long long)size);
    int64_t ns[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    ns[d] = length;
    int64_t attrs[3] = {d, start, 1};
    return tn__view_record(t, tn__view_own(t, ns, t->strides, t->ndim, t->offset + start * t->strides[d]), G_SLICE, attrs, 3);
}

TNDEF tn_tensor *tn_slice(tn_tensor *t, int64_t dim, int64_t start, int64_t stop, int64_t step) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_slice: cannot slice a 0-dim tensor");
    int d = tn__wrap_dim("tn_slice", dim, t->ndim);
    if (d < 0) return NULL;
    if (step <= 0) return (tn_tensor *)tn__error("tn_slice: step must be greater than zero, got %lld", (long long)step);
    int64_t size = t->shape[d];
    if (start < 0) start = start < -size ? 0 : start + size; /* Python's clamping */
    if (stop < 0) stop = stop < -size ? 0 : stop + size;
    start = TN__MIN(start, size);
    stop = TN__MAX(TN__MIN(stop, size), start);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    memcpy(st, t->strides, sizeof st);
    ns[d] = stop > start ? (stop - start - 1) / step + 1 : 0;
    if (ns[d] > 1) st[d] *= step; /* one element or none: the stride never applies (and may not fit) */
    int64_t attrs[3] = {d, start, step};
    return tn__view_record(t, tn__view_own(t, ns, st, t->ndim, t->offset + start * t->strides[d]), G_SLICE, attrs, 3);
}

TNDEF tn_tensor *tn_select(tn_tensor *t, int64_t dim, int64_t index) {
    TN__CHECK_NULL(t);
    if (t->ndim == 0) return (tn_tensor *)tn__error("tn_select: cannot be applied to a 0-dim tensor");
    int d = tn__wrap_dim("tn_select", dim, t->ndim);
    if (d < 0) return NULL;
    if (index < -t->shape[d] || index >= t->shape[d])
        return (tn_tensor *)tn__error("tn_select: index %lld out of range for tensor of size %s at dimension %d", (long long)index, TN__SHAPE(t), d);
    if (index < 0) index += t->shape[d];
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    int64_t attrs[2] = {d, index};
    return tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset + index * t->strides[d]), G_SELECT, attrs, 2);
}

/* Strides of t expanded to shape (aligned right); -1 keeps a size. Returns 0 or -1 + error. */
static int tn__expand_strides(const char *fn, tn_tensor *t, const int64_t *shape, int ndim, int64_t *ns, int64_t *st) {
    if (ndim < t->ndim || ndim > TN_MAX_DIMS || (ndim && !shape))
        return TN__FAIL_INT("%s: the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d, shape %s)", fn, ndim, t->ndim, TN__SHAPE(t));
    for (int i = ndim - 1; i >= 0; i--) {
        int j = i - (ndim - t->ndim);
        int64_t want = shape[i];
        if (j < 0) {
            if (want < 0) return TN__FAIL_INT("%s: the expanded size %lld is not allowed in a leading, non-existing dimension", fn, (long long)want);
            ns[i] = want; st[i] = 0;
        } else if (want == -1 || want == t->shape[j]) {
            ns[i] = t->shape[j]; st[i] = t->strides[j];
        } else if (t->shape[j] == 1 && want >= 0) {
            ns[i] = want; st[i] = 0;
        } else {
            return TN__FAIL_INT("%s: the expanded size of the tensor (%lld) must match the existing size (%lld) at non-singleton dimension %d; target sizes %s, tensor sizes %s",
                                fn, (long long)want, (long long)t->shape[j], i, tn__shape_str(shape, ndim), TN__SHAPE(t));
        }
    }
    return tn__check_shape(fn, ns, ndim);
}

TNDEF tn_tensor *tn_expand(tn_tensor *t, const int64_t *shape, int ndim) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    if (tn__expand_strides("tn_expand", t, shape, ndim, ns, st)) return NULL;
    return tn__view_record(t, tn__view_own(t, ns, st, ndim, t->offset), G_EXPAND, NULL, 0);
}
TNDEF tn_tensor *tn_expand_as(tn_tensor *t, tn_tensor *other) { TN__CHECK_NULL(t, other); return TN__AS("tn_expand_as", tn_expand(t, other->shape, other->ndim)); }
TNDEF tn_tensor *tn_broadcast_to(tn_tensor *t, const int64_t *shape, int ndim) { return TN__AS("tn_broadcast_to", tn_expand(t, shape, ndim)); }

TNDEF tn_tensor *tn_squeeze(tn_tensor *t) {
    TN__CHECK_NULL(t);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (t->shape[i] != 1) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset), G_RESHAPE, NULL, 0), "SqueezeBackward0");
}

TNDEF tn_tensor *tn_squeeze_dim(tn_tensor *t, int64_t dim) {
    TN__CHECK_NULL(t);
    int d = tn__wrap_dim("tn_squeeze_dim", dim, t->ndim);
    if (d < 0) return NULL;
    if (t->ndim == 0 || t->shape[d] != 1) return tn__grad_name(tn__view_record(t, tn__view_own(t, t->shape, t->strides, t->ndim, t->offset), G_RESHAPE, NULL, 0), "SqueezeBackward1");
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < t->ndim; i++)
        if (i != d) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset), G_RESHAPE, NULL, 0), "SqueezeBackward1");
}

TNDEF tn_tensor *tn_unsqueeze(tn_tensor *t, int64_t dim) {
    TN__CHECK_NULL(t);
    if (t->ndim >= TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_unsqueeze: a %d-d tensor cannot grow past %d dims", t->ndim, TN_MAX_DIMS);
    int d = tn__wrap_dim("tn_unsqueeze", dim, t->ndim + 1);
    if (d < 0) return NULL;
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i <= t->ndim; i++) {
        if (i == d) { ns[nd] = 1; st[nd++] = d < t->ndim ? t->shape[d] * t->strides[d] : 1; }
        if (i < t->ndim) { ns[nd] = t->shape[i]; st[nd++] = t->strides[i]; }
    }
    return tn__grad_name(tn__view_record(t, tn__view_own(t, ns, st, nd, t->offset), G_RESHAPE, NULL, 0), "UnsqueezeBackward0");
}

TNDEF tn_tensor *tn_unfold(tn_tensor *t, int64_t dim, int64_t size, int64_t step) {
    TN__CHECK_NULL(t);
    int d = tn__wrap_dim("tn_unfold", dim, t->ndim);
    if (d < 0) return NULL;
    int64_t dsize = t->ndim ? t->shape[d] : 1, dstride = t->ndim ? t->strides[d] : 1;
    if (size < 0 || size > dsize)
        return (tn_tensor *)tn__error("tn_unfold: maximum size for tensor at dimension %d is %lld but size is %lld", d, (long long)dsize, (long long)size);
    if (step <= 0) return (tn_tensor *)tn__error("tn_unfold: step is %lld but must be > 0", (long long)step);
    if (t->ndim >= TN_MAX_DIMS) return (tn_tensor *)tn__error("tn_unfold: a %d-d tensor cannot grow past %d dims", t->ndim, TN_MAX_DIMS);
    int64_t ns[TN_MAX_DIMS], st[TN_MAX_DIMS];
    memcpy(ns, t->shape, sizeof ns);
    memcpy(st, t->strides, sizeof st);
    if (t->ndim == 0) { /* PyTorch: a 0-d tensor unfolds to shape [size] */
        ns[0] = size; st[0] = 1;
        int64_t attrs0[3] = {0, size, step};
        return tn__view_record(t, tn__view_own(t, ns, st, 1, t->offset), G_UNFOLD, attrs0, 3);
    }
    int nd = t->ndim;

    ns[d] = (dsize - size) / step + 1;
    st[d] = dstride * step;
    ns[nd] = size;
    st[nd] = dstride;
    int64_t attrs[3] = {d, size, step};
    return tn__view_record(t, tn__view_own(t, ns, st, nd + 1, t->offset), G_UNFOLD, attrs, 3);
}

TNDEF tn_tensor *tn_as_strided(tn_tensor *t, const int64_t *shape, int ndim, const int64_t *strides, int64_t offset) {
    TN__CHECK_NULL(t);
    if (t->requires_grad && tn_is_grad_enabled())
        return (tn_tensor *)tn__error("tn_as_strided: autograd through as_strided is not supported yet (input requires grad); detach it or use view ops");
    if (tn__check_shape("tn_as_strided", shape, ndim)) return NULL;
    if (ndim && !strides) return (tn_tensor *)tn__error("tn_as_strided: strides is NULL");
    int64_t last, es = (int64_t)tn_dtype_size(t->dtype), bytes = 0;
    if (offset < 0) return (tn_tensor *)tn__error("tn_as_strided: negative storage offset %lld", (long long)offset);
    for (int i = 0; i < ndim; i++)
        if (strides[i] < 0) return (tn_tensor *)tn__error("tn_as_strided: negative stride %lld", (long long)strides[i]);
    int64_t count = 0;
    if (!tn__span_ok(shape, strides, ndim, offset, &last) || (last >= 0 && (!tn__add_ok(last, 1, &count) || !tn__mul_ok(count, es, &bytes) || bytes > (int64_t)t->storage->nbytes)))
        return (tn_tensor *)tn__error("tn_as_strided: size %s, stride %s, offset %lld reach past the storage's %lld elements",
            tn__shape_str(shape, ndim), tn__shape_str(strides, ndim), (long long)offset, (long long)(t->storage->nbytes / (size_t)es));
    return tn__view_own(t, shape, strides, ndim, offset);
}

TNDEF tn_tensor *tn_detach(tn_tensor *t) {
    TN__CHECK_NULL(t);
    return tn__view_own(t, t->shape, t->strides, t->ndim, t->offset);
}

/* ---- gathering and scattering ----
   All of them are one backend call, `index`: dst, src and the index tensors are laid
   over one iteration shape by restriding (stride 0 on the dim an index replaces), and
   the kernel adds idx * stride to the gathered-from or scattered-to address. */

/* Contiguous int64 copy of an index tensor after checking every value is in
   [-size, size) (negatives wrapped when allowed, else [0, size)). Untracked. */
static tn_tensor *tn__checked_index(const char *fn, tn_tensor *idx, int64_t size, bool allow_negative, int dim, tn_device dev) {
    if (idx->dtype != TN_I64 && idx->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: index tensors must be int64 or int32, got %s", fn, tn_dtype_name(idx->dtype));
    tn_tensor *c = tn__copy_as(idx, TN_I64, TN_CPU);
    if (!c) return NULL;
    int64_t *v = (int64_t *)tn_data_ptr(c), n = tn_numel(c);
    for (int64_t i = 0; i < n; i++) {
        if (v[i] < (allow_negative ? -size : 0) || v[i] >= size) {
            tn__error("%s: index %lld is out of bounds for dimension %d with size %lld", fn, (long long)v[i], dim, (long long)size);
            tn_release(c);
            return NULL;
        }
        if (v[i] < 0) v[i] += size;
    }
    if (dev != TN_CPU) { /* the indexed tensor's device, wherever the indices came from */
        tn_tensor *d = tn__copy_as(c, TN_I64, dev);
        tn_release(c);
        c = d;
    }
    return c;
}

/* A borrowed, transient view of t with the given shape and strides (no refcount). */
static tn_tensor tn__restrided(tn_tensor *t, const int64_t *shape, const int64_t *strides, int ndim) {
    tn_tensor v = *t;
    v.ndim = ndim;
    for (int i = 0; i < ndim; i++) { v.shape[i] = shape[i]; v.strides[i] = strides[i]; }
    return v;
}

static int tn__run_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *idx, const int64_t *idx_strides, int k) {
    tn_tensor *ptrs[TN_MAX_DIMS];
    for (int j = 0; j < k; j++) ptrs[j] = &idx[j];
    return tn__backend(dst->device)->index(mode, dst, src, ptrs, idx_strides, k);
}

TNDEF tn_tensor *tn_index_select(tn_tensor *t, int64_t dim, tn_tensor *index) {
    TN__CHECK_NULL(t, index);
    int d = tn__wrap_dim("tn_index_select", dim, t->ndim);
    if (d < 0) return NULL;
    if (index->ndim > 1) return (tn_tensor *)tn__error("tn_index_select: index must be 0-d or 1-d, got shape %s", TN__SHAPE(index));
    if (tn__check_same_device("tn_index_select", t, index)) return NULL;
    int64_t size = t->ndim ? t->shape[d] : 1;
    tn_tensor *idx = tn__checked_index("tn_index_select", index, size, false, d, t->device);
    if (!idx) return NULL;
    int nd = t->ndim ? t->ndim : 1;
    int64_t os[TN_MAX_DIMS], ss[TN_MAX_DIMS], is[TN_MAX_DIMS], tst = t->ndim ? t->strides[d] : 0;
    for (int i = 0; i < nd; i++) {
        os[i] = t->ndim ? t->shape[i] : 1;
        ss[i] = t->ndim ? t->strides[i] : 0;
        is[i] = 0;
    }
    os[d] = tn_numel(idx);
    ss[d] = 0;
    is[d] = 1;
    tn_tensor *out = tn__new(t->dtype, t->device, os, t->ndim ? nd : index->ndim);
    if (out && t->ndim == 0) { /* keep PyTorch's shape: a 0-d input gives the index's shape */
        out->ndim = index->ndim;
    }
    tn_tensor src = tn__restrided(t, os, ss, nd), iv = tn__restrided(idx, os, is, nd), dstv;
    if (out) {
        dstv = tn__restrided(out, os, out->strides, nd);
        if (out->ndim == 0) dstv.strides[0] = 1;
        if (tn__run_index(GATHER, &dstv, &src, &iv, &tst, 1)) { tn_release(out); out = NULL; }
    }
    tn_release(idx);
    tn_node *node = out ? tn__node_new(G_INDEX_SELECT, 0, &t, 1) : NULL;
    if (node) { node->i[0] = d; tn__node_save(node, index); }
    return tn__own(tn__node_attach(node, out));
}

/* Shared checks of gather/scatter: index has t's ndim and fits inside `bound` (t, or
   src for scatter) on every dim but `d`. */
static int tn__check_gather_shapes(const char *fn, tn_tensor *t, tn_tensor *index, int d, tn_tensor *src) {
    if (index->ndim != t->ndim && !(index->ndim <= 1 && t->ndim <= 1))
        return TN__FAIL_INT("%s: index tensor must have the same number of dimensions as input tensor (index %s, input %s)", fn, TN__SHAPE(index), TN__SHAPE(t));
    for (int i = 0; i < index->ndim && i < t->ndim; i++) {
        if (i != d && index->shape[i] > t->shape[i])
            return TN__FAIL_INT("%s: size of index %s exceeds input %s at dimension %d", fn, TN__SHAPE(index), TN__SHAPE(t), i);
        if (src && (src->ndim != index->ndim || index->shape[i] > src->shape[i]))
            return TN__FAIL_INT("%s: index %s is larger than src %s at dimension %d", fn, TN__SHAPE(index), TN__SHAPE(src), i);
    }
    return 0;
}

TNDEF tn_tensor *tn_gather(tn_tensor *t, int64_t dim, tn_tensor *index) {
    TN__CHECK_NULL(t, index);
    int d = tn__wrap_dim("tn_gather", dim, t->ndim);
    if (d < 0 || tn__check_gather_shapes("tn_gather", t, index, d, NULL) || tn__check_same_device("tn_gather", t, index)) return NULL;
    tn_tensor *idx = tn__checked_index("tn_gather", index, t->ndim ? t->shape[d] : 1, false, d, t->device);
    if (!idx) return NULL;
    tn_tensor *out = tn__new(t->dtype, t->device, idx->shape, idx->ndim);
    int nd = idx->ndim;
    int64_t ss[TN_MAX_DIMS], tst = t->ndim ? t->strides[d] : 0;
    for (int i = 0; i < nd; i++) ss[i] = i < t->ndim ? t->strides[i] : 0;
    if (nd) ss[d] = 0;
    tn_tensor src = tn__restrided(t, idx->shape, ss, nd);
    if (out && tn__run_index(GATHER, out, &src, idx, &tst, 1)) { tn_release(out); out = NULL; }
    tn_release(idx);
    tn_node *node = out ? tn__node_new(G_GATHER, 0, &t, 1) : NULL;
    if (node) { node->i[0] = d; tn__node_save(node, index); }
    return tn__own(tn__node_attach(node, out));
}

/* scatter / scatter_add into `target` (modified in place). */
static int tn__scatter_into(const char *fn, tn_tensor *target, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_mode mode) {
    int d = tn__wrap_dim(fn, dim, target->ndim);
    if (d < 0 || tn__check_gather_shapes(fn, target, index, d, src) || tn__check_same_device(fn, target, index) || tn__check_same_device(fn, target, src)) return -1;
    if (src->dtype != target->dtype)
        return TN__FAIL_INT("%s: expected self.dtype to be equal to src.dtype (%s vs %s)", fn, tn_dtype_name(target->dtype), tn_dtype_name(src->dtype));
    if (tn__check_no_internal_overlap(fn, target) || tn__check_cpu_dtype(fn, target)) return -1;
    if (tn__check_no_overlap(fn, target, src) || tn__check_no_overlap(fn, target, index)) return -1;
    tn_tensor *idx = tn__checked_index(fn, index, target->ndim ? target->shape[d] : 1, false, d, target->device);
    tn_tensor *s = idx ? tn_retain(src) : NULL;
    if (!s) { tn_release(idx); return -1; }
    int nd = idx->ndim;
    int64_t ds[TN_MAX_DIMS], tst = target->ndim ? target->strides[d] : 0;
    for (int i = 0; i < nd; i++) ds[i] = i < target->ndim ? target->strides[i] : 0;
    if (nd) ds[d] = 0;
    tn_tensor dst = tn__restrided(target, idx->shape, ds, nd);
    tn_tensor sv = tn__restrided(s, idx->shape, s->strides, nd);
    int rc = tn__run_index(mode, &dst, &sv, idx, &tst, 1);
    tn_release(idx);
    tn_release(s);

    if (rc == 0) tn__bump_version(target);
    return rc;
}

static tn_tensor *tn__scatter_op(const char *fn, tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_mode mode, bool inplace) {
    TN__CHECK_NULL(t, index, src);
    if (tn__check_cpu_dtype(fn, t) || tn__check_cpu_dtype(fn, src)) return NULL;
    if (inplace) TN__INPLACE_GRAD(fn, t, &src, 1, tn__scatter_op(fn, x0, dim, index, src, mode, false));
    tn_tensor *target = inplace ? tn_retain(t) : tn__copy_as(t, t->dtype, t->device);
    if (target && tn__scatter_into(fn, target, dim, index, src, mode)) { tn_release(target); target = NULL; }
    if (!inplace && target) {
        tn_tensor *ins[2] = {t, src};
        tn_node *nd = tn__node_new(mode == SCATTER ? G_SCATTER : G_SCATTER_ADD, 0, ins, 2);
        if (nd) { nd->i[0] = tn__wrap_dim(fn, dim, t->ndim); tn__node_save(nd, index); }
        target = tn__node_attach(nd, target);
    }
    return tn__own(target);
}
TNDEF tn_tensor *tn_scatter(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter", t, dim, index, src, SCATTER, false); }
TNDEF tn_tensor *tn_scatter_add(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter_add", t, dim, index, src, SCATTER_ADD, false); }
TNDEF tn_tensor *tn_scatter_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter_", t, dim, index, src, SCATTER, true); }
TNDEF tn_tensor *tn_scatter_add_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src) { return tn__scatter_op("tn_scatter_add_", t, dim, index, src, SCATTER_ADD, true); }

/* Advanced indexing plan (aten::index semantics). */
typedef struct tn__adv {
    int k;                                /* index tensors after bool masks became int64 ones */
    tn_tensor *idx[TN_MAX_DIMS];          /* owned, normalised int64 */
    tn_tensor view[TN_MAX_DIMS];          /* idx[j] laid over the result shape */
    int64_t idx_strides[TN_MAX_DIMS];     /* t's stride on the dim idx[j] indexes */
    int ndim;
    int64_t shape[TN_MAX_DIMS];           /* the result */
    int64_t tstrides[TN_MAX_DIMS];        /* t in result space: 0 on the broadcast index dims */
} tn__adv;

static void tn__adv_free(tn__adv *a) {
    for (int j = 0; j < a->k; j++) tn_release(a->idx[j]);
    a->k = 0;
}

static int tn__adv_plan(const char *fn, tn_tensor *t, tn_tensor *const *indices, int n, tn__adv *a) {
    memset(a, 0, sizeof *a);
    if (n < 0 || n > t->ndim || (n && !indices))
        return TN__FAIL_INT("%s: too many indices for tensor of dimension %d (got %d)", fn, t->ndim, n);
    int dims[TN_MAX_DIMS], k = 0, pos = 0;
    tn_tensor *raw[TN_MAX_DIMS], *temps[2 * TN_MAX_DIMS];
    int ntemps = 0, rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        tn_tensor *ix = indices[i];
        int used = ix && (ix->dtype == TN_BOOL || ix->dtype == TN_U8) ? ix->ndim : 1;
        if (pos + used > t->ndim) { rc = TN__FAIL_INT("%s: too many indices for tensor of dimension %d", fn, t->ndim); break; }
        if (!ix) { pos++; continue; }
        if (ix->dtype == TN_BOOL || ix->dtype == TN_U8) { /* a mask over ix->ndim dims: its nonzero coordinates */
            for (int j = 0; j < ix->ndim; j++)
                if (ix->shape[j] != t->shape[pos + j]) {
                    rc = TN__FAIL_INT("%s: the shape of the mask %s at index %d does not match the shape of the indexed tensor %s at index %d",
                                      fn, TN__SHAPE(ix), j, TN__SHAPE(t), pos + j);
                    break;
                }
            if (rc) break;
            tn_tensor *nz = tn__backend(ix->device)->nonzero(ix);
            if (!nz) { rc = -1; break; }
            temps[ntemps++] = nz;
            for
 (int j = 0; j < ix->ndim; j++) {
                int64_t shp = nz->shape[0], st = nz->strides[0];
                tn_tensor col = tn__restrided(nz, &shp, &st, 1);
                col.offset = nz->offset + j * nz->strides[1];
                raw[k] = tn__copy_as(&col, TN_I64, nz->device);
                if (!raw[k]) { rc = -1; break; }
                temps[ntemps++] = raw[k];
                dims[k++] = pos++;
            }
        } else {
            raw[k] = ix;
            dims[k++] = pos++;
        }
    }
    int64_t bshape[TN_MAX_DIMS];
    int bnd = 0;
    for (int j = 0; j < k && rc == 0; j++) {
        int nb = tn__broadcast(bshape, bnd, raw[j]->shape, raw[j]->ndim, bshape);
        if (nb < 0) { rc = TN__FAIL_INT("%s: shape mismatch: indexing tensors could not be broadcast together (shapes %s and %s)", fn, tn__shape_str(bshape, bnd), TN__SHAPE(raw[j])); break; }
        bnd = nb;
    }
    for (int j = 0; j < k && rc == 0; j++) {
        a->idx[j] = tn__checked_index(fn, raw[j], t->shape[dims[j]], true, dims[j], t->device);
        if (!a->idx[j]) rc = -1; else a->k = j + 1;
    }
    for (int i = 0; i < ntemps; i++) tn_release(temps[i]);
    if (rc) { tn__adv_free(a); return -1; }
    if (k == 0) { /* no advanced index: the whole tensor */
        a->ndim = t->ndim;
        for (int i = 0; i < t->ndim; i++) { a->shape[i] = t->shape[i]; a->tstrides[i] = t->strides[i]; }
        return 0;
    }
    bool adjacent = true;
    for (int j = 1; j < k; j++) adjacent = adjacent && dims[j] == dims[j - 1] + 1;
    int bpos = adjacent ? dims[0] : 0, nd = 0;
    if (t->ndim - k + bnd > TN_MAX_DIMS) { tn__adv_free(a); return TN__FAIL_INT("%s: result would have more than %d dims", fn, TN_MAX_DIMS); }
    bool is_adv[TN_MAX_DIMS] = {false};
    for (int j = 0; j < k; j++) is_adv[dims[j]] = true;
    for (int i = 0; i <= t->ndim; i++) {
        if (nd == bpos && (adjacent ? i == dims[0] : i == 0)) {
            for (int b = 0; b < bnd; b++) { a->shape[nd] = bshape[b]; a->tstrides[nd++] = 0; }
        }
        if (i < t->ndim && !is_adv[i]) { a->shape[nd] = t->shape[i]; a->tstrides[nd++] = t->strides[i]; }
    }
    a->ndim = nd;
    for (int j = 0; j < k; j++) {
        int64_t es[TN_MAX_DIMS], bs[TN_MAX_DIMS], vs[TN_MAX_DIMS] = {0};
        tn__expand_strides(fn, a->idx[j], bshape, bnd, es, bs);
        for (int b = 0; b < bnd; b++) vs[bpos + b] = bs[b];
        a->view[j] = tn__restrided(a->idx[j], a->shape, vs, nd);
        a->idx_strides[j] = t->strides[dims[j]];
    }
    return 0;
}

/* x[True] / x[False]: a 0-d bool index adds a dim of size 1 and keeps (True) or empties
   (False) it. Rewritten here as an int64 index [0] or [] on a dim of size 1 inserted at
   its place, so the plan above never sees one. p->t is a view of t (writes reach t). */
typedef struct tn__prep { tn_tensor *t, *idx[TN_MAX_DIMS], *temps[TN_MAX_DIMS + 1]; int ntemps; } tn__prep;
static void tn__prep_free(tn__prep *p) { for (int i = 0; i < p->ntemps; i++) tn_release(p->temps[i]); p->ntemps = 0; }
static int tn__index_prep(const char *fn, tn_tensor *t, tn_tensor *const *indices, int n, tn__prep *p) {
    memset(p, 0, sizeof *p);
    p->t = t;
    if (n < 0 || n > TN_MAX_DIMS || (n && !indices)) return TN__FAIL_INT("%s: too many indices for tensor of dimension %d (got %d)", fn, t->ndim, n);
    int pos = 0;
    for (int i = 0; i < n; i++) {
        tn_tensor *ix = indices[i];
        p->idx[i] = ix;
        if (!(ix && ix->dtype == TN_BOOL && ix->ndim == 0)) { pos += ix && ix->dtype == TN_BOOL ? ix->ndim : 1; continue; }
        tn_tensor *cur = p->t;
        if (cur->ndim >= TN_MAX_DIMS || pos > cur->ndim) { tn__prep_free(p); return TN__FAIL_INT("%s: too many indices for tensor of dimension %d", fn, t->ndim); }
        int64_t shape[TN_MAX_DIMS], strides[TN_MAX_DIMS], len = tn__read_double(ix) != 0;
        for (int d = 0, j = 0; d <= cur->ndim; d++) {
            if (d == pos) { shape[d] = 1; strides[d] = 1; continue; }
            shape[d] = cur->shape[j]; strides[d] = cur->strides[j]; j++;
        }
        tn_tensor *v = tn__view_of(cur, shape, strides, cur->ndim + 1, cur->offset);
        tn_tensor *zero = tn__new(TN_I64, t->device, &len, 1);
        if (v) p->temps[p->ntemps++] = v;
        if (zero) p->temps[p->ntemps++] = zero;
        if (!v || !zero || tn__backend(zero->device)->fill(zero, 0)) { tn__prep_free(p); return -1; }
        p->t = v;
        p->idx[i] = zero;
        pos++;
    }
    return 0;
}

/* Save the index list of an advanced-indexing node (i[k] marks which entries exist). */
static void tn__save_indices(tn_node *nd, tn_tensor *const *indices, int n) {
    if (!nd) return;
    nd->ni = n;
    for (int k = 0; k < n; k++) {
        nd->i[k] = indices[k] != NULL;
        if (indices[k]) tn__node_save(nd, indices[k]);
    }
}

static tn_tensor *tn__index_planned(tn_tensor *t, tn_tensor *const *indices, int n);
TNDEF tn_tensor *tn_index(tn_tensor *t, tn_tensor *const *indices, int n) {
    TN__CHECK_NULL(t);
    tn__prep pr;
    if (tn__index_prep("tn_index", t, indices, n, &pr)) return NULL;
    tn_tensor *out = tn__index_planned(pr.t, pr.idx, n);
    tn__prep_free(&pr);
    tn_node *nd = out ? tn__node_new(G_INDEX, 0, &t, 1) : NULL;
    tn__save_indices(nd, indices, n);
    return tn__own(tn__node_attach(nd, out));
}

static tn_tensor *tn__index_planned(tn_tensor *t, tn_tensor *const *indices, int n) {
    tn__adv a;
    if (tn__adv_plan("tn_index", t, indices, n, &a)) return NULL;
    tn_tensor *out = tn__new(t->dtype, t->device, a.shape, a.ndim);
    tn_tensor src = tn__restrided(t, a.shape, a.tstrides, a.ndim);
    if (out && tn__run_index(GATHER, out, &src, a.view, a.idx_strides, a.k)) { tn_release(out); out = NULL; }
    tn__adv_free(&a);
    return out;
}

static int tn__index_put_into(const char *fn, tn_tensor *target, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate) {
    if (values->dtype != target->dtype && !values->is_wrapped_number)
        return TN__FAIL_INT("%s: index put requires the source and destination dtypes match, got %s for the destination and %s for the source",
                            fn, tn_dtype_name(target->dtype), tn_dtype_name(values->dtype));
    if (tn__check_no_internal_overlap(fn, target) || tn__check_no_overlap(fn, target, values) || tn__check_cpu_dtype(fn, target)) return -1;
    tn__prep pr;
    tn_tensor *orig = target; /* pr.t may be a temporary view, freed below */
    if (tn__index_prep(fn, target, indices, n, &pr)) return -1;
    target = pr.t;
    indices = pr.idx;
    tn__adv a;
    if (tn__adv_plan(fn, target, indices, n, &a)) { tn__prep_free(&pr); return -1; }
    int64_t es[TN_MAX_DIMS], vs[TN_MAX_DIMS];
    int rc = -1;
    tn_tensor *v = tn__check_same_device(fn, target, values) ? NULL : tn__as_dtype(values, target->dtype);
    if (v && v->device != target->device) { /* a CPU scalar joins the target's device */
        tn_tensor *m = tn__copy_as(v, v->dtype, target->device);
        tn_release(v);
        v = m;
    }
    if (v && tn__expand_strides(fn, v, a.shape, a.ndim, es, vs) == 0) {
        tn_tensor src = tn__restrided(v, es, vs, a.ndim);
        tn_tensor dst = tn__restrided(target, a.shape, a.tstrides, a.ndim);
        rc = tn__run_index(accumulate ? SCATTER_ADD : SCATTER, &dst, &src, a.view, a.idx_strides, a.k);
    } else if (v) {
        tn__error("%s: shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s", fn, TN__SHAPE(values), tn__shape_str(a.shape, a.ndim));
    }
    tn_release(v);
    tn__adv_free(&a);
    if (rc == 0) tn__bump_version(orig);
    tn__prep_free(&pr);
    return rc;
}


TNDEF tn_tensor *tn_index_put_(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate) {
    TN__CHECK_NULL(t, values);
    TN__INPLACE_GRAD("tn_index_put_", t, &values, 1, tn_index_put(x0, indices, n, values, accumulate));
    return tn__own(tn__index_put_into("tn_index_put_", t, indices, n, values, accumulate) ? NULL : tn_retain(t));
}
TNDEF tn_tensor *tn_index_put(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, bool accumulate) {
    TN__CHECK_NULL(t, values);
    tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
    if (c && tn__index_put_into("tn_index_put", c, indices, n, values, accumulate)) { tn_release(c); c = NULL; }
    tn_tensor *ins[2] = {t, values};
    tn_node *nd = c ? tn__node_new(G_INDEX_PUT, 0, ins, 2) : NULL;
    if (nd) nd->d[0] = accumulate;
    tn__save_indices(nd, indices, n);
    return tn__own(tn__node_attach(nd, c));
}

static int tn__check_mask(const char *fn, tn_tensor *mask) {
    if (mask->dtype != TN_BOOL) return TN__FAIL_INT("%s: expected a bool mask, got %s", fn, tn_dtype_name(mask->dtype));
    return 0;
}

static tn_tensor *tn__masked_fill_impl(tn_tensor *t, tn_tensor *mask, double value) {
    TN__CHECK_NULL(t, mask);
    if (tn__check_mask("tn_masked_fill", mask)) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn_scalar_tensor(value, t->dtype);
    tn_tensor *w = tn_where(mask, v, t); /* broadcasts self and mask, as PyTorch's out-of-place form */

    tn_tensor *r = tn_keep(w ? tn_to_dtype(w, t->dtype) : NULL);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_masked_fill(tn_tensor *t, tn_tensor *mask, double value) { return tn__grad_name(TN__AS("tn_masked_fill", tn__masked_fill_impl(t, mask, value)), "MaskedFillBackward0"); }

static tn_tensor *tn__masked_fill__impl(tn_tensor *t, tn_tensor *mask, double value) {
    TN__CHECK_NULL(t, mask);
    TN__INPLACE_GRAD("tn_masked_fill_", t, NULL, 0, tn_masked_fill(x0, mask, value));
    tn_scope_begin();

    tn_tensor *r = tn_masked_fill(t, mask, value);
    int rc = r ? tn__copy_into("tn_masked_fill_", t, r) : -1;
    tn_scope_end();
    return rc ? NULL : tn__own(tn_retain(t));
}
TNDEF tn_tensor *tn_masked_fill_(tn_tensor *t, tn_tensor *mask, double value) { return tn__grad_name(TN__AS("tn_masked_fill_", tn__masked_fill__impl(t, mask, value)), "MaskedFillBackward0"); }

TNDEF tn_tensor *tn_masked_select(tn_tensor *t, tn_tensor *mask) {
    TN__CHECK_NULL(t, mask);
    if (tn__check_mask("tn_masked_select", mask)) return NULL;
    int64_t bs[TN_MAX_DIMS];
    int nd = tn__broadcast(t->shape, t->ndim, mask->shape, mask->ndim, bs);
    if (nd < 0) return (tn_tensor *)tn__error("tn_masked_select: mask %s and input %s are not broadcastable", TN__SHAPE(mask), TN__SHAPE(t));
    tn_scope_begin();
    tn_tensor *tb = tn_expand(t, bs, nd), *mb = tn_expand(mask, bs, nd), *r;
    if (nd == 0) { /* a 0-d mask selects all or nothing */
        tb = tn_reshape(tb, tn__one, 1);
        mb = tn_reshape(mb, tn__one, 1);
    }
    r = tn_keep(tn_index(tb, &mb, 1));
    tn_scope_end();
    return r;
}

static tn_tensor *tn__cpu_nonzero(tn_tensor *x) {
    tn_tensor *b = tn__copy_as(x, TN_BOOL, TN_CPU);
    if (!b) return NULL;
    const bool *v = (const bool *)tn_data_ptr(b);
    int64_t n = tn_numel(b), count = 0;
    for (int64_t i = 0; i < n; i++) count += v[i];
    int64_t shape[2] = {count, x->ndim};
    tn_tensor *out = tn__new(TN_I64, TN_CPU, shape, 2);
    if (out) {
        int64_t *o = (int64_t *)tn_data_ptr(out);
        for (int64_t i = 0; i < n; i++) {
            if (!v[i]) continue;
            int64_t r = i;
            for (int d = x->ndim - 1; d >= 0; d--) { o[d] = r % x->shape[d]; r /= x->shape[d]; }
            o += x->ndim;
        }
    }
    tn_release(b);
    return out;
}

TNDEF tn_tensor *tn_nonzero(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (tn__check_cpu_dtype("tn_nonzero", t)) return NULL;
    return tn__own(tn__backend(t->device)->nonzero(t));
}

/* ---- joining and splitting ---- */
static tn_tensor *tn__cat_impl(tn_tensor *const *ts, int n, int64_t dim) {
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("tn_cat: expected a non-empty list of tensors");
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    tn_tensor *ref = NULL; /* first tensor that is not a legacy 1-d empty one */
    for (int i = 0; i < n && !ref; i++) if (!(ts[i]->ndim == 1 && ts[i]->shape[0] == 0)) ref = ts[i];
    if (!ref) ref = ts[0];
    for (int i = 0; i < n; i++)
        if (ts[i]->ndim == 0) return (tn_tensor *)tn__error("tn_cat: zero-dimensional tensor (at position %d) cannot be concatenated", i);
    int d = tn__wrap_dim("tn_cat", dim, ref->ndim);
    if (d < 0) return NULL;
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, ref->shape, sizeof shape);
    shape[d] = 0;
    for (int i = 0; i < n; i++) {
        tn_tensor *t = ts[i];
        if (t->ndim == 1 && t->shape[0] == 0 && ref->ndim != 1) continue;
        if (t->ndim != ref->ndim) return (tn_tensor *)tn__error("tn_cat: tensors must have same number of dimensions: got %d and %d (tensor %d)", ref->ndim, t->ndim, i);
        if (tn__check_same_device("tn_cat", ref, t)) return NULL;
        for (int j = 0; j < t->ndim; j++)
            if (j != d && t->shape[j] != ref->shape[j])
                return (tn_tensor *)tn__error("tn_cat: sizes of tensors must match except in dimension %d: expected size %lld but got size %lld for tensor number %d in the list (shapes %s and %s)",
                                              d, (long long)ref->shape[j], (long long)t->shape[j], i, TN__SHAPE(ref), TN__SHAPE(t));
        shape[d] += t->shape[d];
    }
    tn_tensor *out = tn__new(tn_result_type(ts, n), ref->device, shape, ref->ndim);
    int64_t off = 0;
    for (int i = 0; i < n && out; i++) {
        tn_tensor *t = ts[i];
        if (t->ndim != ref->ndim) continue;
        tn_tensor part = *out;
        part.shape[d] = t->shape[d];
        part.offset = out->offset + off * out->strides[d];
        off += t->shape[d];
        if (tn__copy(&part, t)) { tn_release(out); out = NULL; }
    }
    tn_node *nd = out ? tn__node_new(G_CAT, 0, ts, n) : NULL;
    if (nd) nd->i[0] = d;
    return tn__own(tn__node_attach(nd, out));
}
TNDEF tn_tensor *tn_cat(tn_tensor *const *ts, int n, int64_t dim) { return TN__AS("tn_cat", tn__cat_impl(ts, n, dim)); }

static tn_tensor *tn__stack_impl(tn_tensor *const *ts, int n, int64_t dim) {
    if (n <= 0 || !ts) return (tn_tensor *)tn__error("tn_stack: expected a non-empty list of tensors");
    for (int i = 0; i < n; i++) if (!ts[i]) return NULL;
    for (int i = 1; i < n; i++)
        if (ts[i]->ndim != ts[0]->ndim || memcmp(ts[i]->shape, ts[0]->shape, (size_t)ts[0]->ndim * sizeof(int64_t)))
            return (tn_tensor *)tn__error("tn_stack: stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d", TN__SHAPE(ts[0]), TN__SHAPE(ts[i]), i);
    int d = tn__wrap_dim("tn_stack", dim, ts[0]->ndim + 1);
    if (d < 0) return NULL;
    tn_tensor **us = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *us);
    if (!us) return (tn_tensor *)tn__error("tn_stack: out of memory");
    tn_scope_begin();
    for (int i = 0; i < n; i++) us[i] = tn_unsqueeze(ts[i], d);
    tn_tensor *r = tn_keep(tn_cat(us, n, d));
    tn_scope_end();
    TN_FREE(us);
    return r;
}
TNDEF tn_tensor *tn_stack(tn_tensor *const *ts, int n, int64_t dim) { return tn__grad_name(TN__AS("tn_stack", tn__stack_impl(ts, n, dim)), "StackBackward0"); }

TNDEF int tn_split_sizes(tn_tensor *t, const int64_t *sizes, int n, int64_t dim, tn_tensor **out, int max_out) {
    if (!t) return -1;
    if (t->ndim == 0) return TN__FAIL_INT("tn_split_sizes: cannot split a 0-dim tensor");
    int d = tn__wrap_dim("tn_split_sizes", dim, t->ndim);
    if (d < 0) return -1;
    if (n < 0 || (n > 0 && !sizes)) return TN__FAIL_INT("tn_split_sizes: sizes must be a non-NULL array of n >= 0 entries (n = %d)", n);
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] < 0) return TN__FAIL_INT("tn_split_sizes: split sizes must be non-negative, got %lld", (long long)sizes[i]);
        if (!tn__add_ok(total, sizes[i], &total)) return TN__FAIL_INT("tn_split_sizes: split sizes %s overflow", tn__shape_str(sizes, n));
    }
    if (total != t->shape[d])
        return TN__FAIL_INT("tn_split_sizes: split sizes %s sum to %lld, expected the size of dim %d (%lld)", tn__shape_str(sizes, n), (long long)total, d, (long long)t->shape[d]);
    if (out && max_out < n) return TN__FAIL_INT("tn_split_sizes: %d pieces do not fit in max_out = %d", n, max_out);
    int64_t start = 0;
    for (int i = 0; i < n && out; i++) {
        out[i] = tn_narrow(t, d, start, sizes[i]);
        start += sizes[i];
    }
    return n;
}

/* Pieces of `size` along dim d: all `step` long but the last (n pieces), or, when
   step is 0 (an empty dim chunked), n empty pieces. */
static int tn__split_even(const char *fn, tn_tensor *t, int d, int64_t step, int64_t n, tn_tensor **out, int max_out) {
    if (n > INT32_MAX) return TN__FAIL_INT("%s: %lld pieces is too many", fn, (long long)n);
    if (out && max_out < n) return TN__FAIL_INT("%s: %lld pieces do not fit in max_out = %d", fn, (long long)n, max_out);
    for (int64_t i = 0; i < n && out; i++) {
        int64_t start = TN__MIN(i * step, t->shape[d]);
        out[i] = tn_narrow(t, d, start, TN__MIN(step, t->shape[d] - start));
    }
    return (int)n;
}

TNDEF int tn_split(tn_tensor *t, int64_t split_size, int64_t dim, tn_tensor **out, int max_out) {
    if (!t) return -1;
    if (t->ndim == 0) return TN__FAIL_INT("tn_split: cannot split a 0-dim tensor");
    int d = tn__wrap_dim("tn_split", dim, t->ndim);
    if (d < 0) return -1;
    if (split_size < 0 || (split_size == 0 && t->shape[d] != 0))
        return TN__FAIL_INT("tn_split: split_size must be positive (or 0 for an empty dim), got %lld", (long long)split_size);
    int64_t size = t->shape[d], n = split_size ? size / split_size + (size % split_size != 0) : 1;
    return tn__split_even("tn_split", t, d, split_size, n ? n : 1, out, max_out);
}

TNDEF int tn_chunk(tn_tensor *t, int64_t chunks, int64_t dim, tn_tensor **out, int max_out) {
    if (!t) return -1;
    if (chunks <= 0) return TN__FAIL_INT("tn_chunk: number of chunks must be greater than 0, got %lld", (long long)chunks);
    if (t->ndim == 0) return TN__FAIL_INT("tn_chunk: cannot chunk a 0-dim tensor");
    int d = tn__wrap_dim("tn_chunk", dim, t->ndim);
    if (d < 0) return -1;
    int64_t size = t->shape[d], step = size / chunks + (size % chunks != 0);
    if (size == 0) return tn__split_even("tn_chunk", t, d, 0, chunks, out, max_out); /* PyTorch: `chunks` empty pieces */
    return tn__split_even("tn_chunk", t, d, step, size / step + (size % step != 0), out, max_out);
}

static tn_tensor *tn__flip_impl(tn_tensor *t, const int64_t *dims, int n) {
    TN__CHECK_NULL(t);
    if (n < 0 || (n > 0 && !dims)) return (tn_tensor *)tn__error("tn_flip: dims must be a non-NULL array of n >= 0 entries (n = %d)", n);
    tn_tensor v = *t; /* a transient view walking the flipped dims backwards */
    bool seen[TN_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        int d = tn__wrap_dim("tn_flip", dims[i], t->ndim);
        if (d < 0) return NULL;
        if (seen[d]) return (tn_tensor *)tn__error("tn_flip: dim %d appears multiple times in the list of dims", d);
        seen[d] = true;
        if (t->ndim == 0 || t->shape[d] == 0) continue;
        v.offset += (t->shape[d] - 1) * t->strides[d];
        v.strides[d] = -t->strides[d];
    }
    tn_tensor *out = tn__copy_as(&v, t->dtype, t->device);
    tn_node *nd = out ? tn__node_new(G_FLIP, 0, &t, 1) : NULL;
    if (nd) { nd->ni = n; for (int i = 0; i < n; i++) nd->i[i] = dims[i]; }
    return tn__own(tn__node_attach(nd, out));
}
TNDEF tn_tensor *tn_flip(tn_tensor *t, const int64_t *dims, int n) { return TN__AS("tn_flip", tn__flip_impl(t, dims, n)); }

static tn_tensor *tn__roll_impl(tn_tensor *t, const int64_t *shifts, const int64_t *dims, int n) {
    TN__CHECK_NULL(t);
    if (!shifts) return (tn_tensor *)tn__error("tn_roll: shifts is NULL");
    tn_scope_begin();
    tn_tensor *r = t;
    if (n == 0) {
        int64_t m1 = -1, zero = 0;
        tn_tensor *f = tn_roll(tn_reshape(t, &m1, 1), shifts, &zero, 1);
        r = f ? tn_reshape(f, t->shape, t->ndim) : NULL;
    } else if (!dims) {
        r = (tn_tensor *)tn__error("tn_roll: dims is NULL");
    }
    for (int i = 0; i < n && r; i++) {
        int d = tn__wrap_dim("tn_roll", dims[i], t->ndim);
        if (d < 0) { r = NULL; break; }
        int64_t size = t->ndim ? t->shape[d] : 1;
        if (size == 0) continue;
        int64_t s = ((shifts[i] % size) + size) % size;
        tn_tensor *parts[2] = {tn_narrow(r, d, size - s, s), tn_narrow(r, d, 0, size - s)};
        r = tn_cat(parts, 2, d);
    }
    if (r == t) r = tn_clone(t);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_roll(tn_tensor *t, const int64_t *shifts, const int64_t *dims, int n) { return tn__grad_name(TN__AS("tn_roll", tn__roll_impl(t, shifts, dims, n)), "RollBackward0"); }

static tn_tensor *tn__repeat_impl(tn_tensor *t, const int64_t *repeats, int n) {
    TN__CHECK_NULL(t);
    if (n < t->ndim) return (tn_tensor *)tn__error("tn_repeat: number of repeat dims (%d) can not be smaller than number of dimensions of tensor (%d)", n, t->ndim);
    if (n > TN_MAX_DIMS || (n && !repeats)) return (tn_tensor *)tn__error("tn_repeat: expected at most %d repeats, got %d", TN_MAX_DIMS, n);
    for (int i = 0; i < n; i++) if (repeats[i] < 0) return (tn_tensor *)tn__error("tn_repeat: repeats can not be negative, got %lld", (long long)repeats[i]);
    tn_scope_begin();
    int lead = n - t->ndim;
    int64_t shp[TN_MAX_DIMS] = {0}, out[TN_MAX_DIMS] = {0};
    for (int i = 0; i < n; i++) {
        shp[i] = i < lead ? 1 : t->shape[i - lead];
        if (!tn__mul_ok(shp[i], repeats[i], &out[i])) { tn_scope_end(); return (tn_tensor *)tn__error("tn_repeat: repeats %s of shape %s give too many elements", tn__shape_str(repeats, n), TN__SHAPE(t)); }
    }
    if (tn__check_shape("tn_repeat", out, n)) { tn_scope_end(); return NULL; }
    tn_tensor *x = tn_reshape(t, shp, n), *r = x;
    /* repeat one dim at a time: [.., s, ..] -> unsqueeze -> expand [.., r, s, ..] -> reshape */
    for (int i = 0; i < n && r; i++) {
        if (repeats[i] == 1) continue;
        tn_tensor *u = tn_unsqueeze(r, i);
        int64_t es[TN_MAX_DIMS];
        memcpy(es, u->shape, sizeof es);
        es[i] = repeats[i];
        int64_t rs[TN_MAX_DIMS];
        memcpy(rs, r->shape, sizeof rs);
        rs[i] *= repeats[i];
        r = tn_reshape(tn_contiguous(tn_expand(u, es, u->ndim)), rs, n);
    }
    if (r == x) r = tn_clone(x);
    r = tn_keep(r ? tn_reshape(r, out, n) : NULL);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_repeat(tn_tensor *t, const int64_t *repeats, int n) { return tn__grad_name(TN__AS("tn_repeat", tn__repeat_impl(t, repeats, n)), "RepeatBackward0"); }

/* Keep elements with col - row <= diagonal (tril) or >= diagonal (triu). */
static tn_tensor *tn__tri(const char *fn, tn_tensor *t, int64_t diagonal, bool lower) {
    TN__CHECK_NULL(t);
    if (t->ndim < 2) return (tn_tensor *)tn__error("%s: input tensor must have at least 2 dimensions, got shape %s", fn, TN__SHAPE(t));
    int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1];
    tn_scope_begin();
    tn_tensor *rows = tn_unsqueeze(tn_arange(0, (double)r, 1, TN_I64), 1);
    tn_tensor *cols = tn_arange(0, (double)c, 1, TN_I64);
    tn_tensor *diff = tn_to(tn_sub(cols, rows), t->device);
    tn_tensor *mask = lower ? tn_le_scalar(diff, (double)diagonal) : tn_ge_scalar(diff, (double)diagonal);
    tn_tensor *res = tn_where(mask, t, tn_zeros(NULL, 0, t->dtype));
    tn_tensor *out = tn_keep(res ? tn_to_dtype(res, t->dtype) : NULL);
    tn_scope_end();
    return out;
}
TNDEF tn_tensor *tn_tril(tn_tensor *t, int64_t diagonal) { return tn__grad_name(TN__AS("tn_tril", tn__tri("tn_tril", t, diagonal, true)), "TrilBackward0"); }
TNDEF tn_tensor *tn_triu(tn_tensor *t, int64_t diagonal) { return tn__grad_name(TN__AS("tn_triu", tn__tri("tn_triu", t, diagonal, false)), "TriuBackward0"); }

TNDEF tn_tensor *tn_pad(tn_tensor *t, const int64_t *pad, int n, double value) {
    TN__CHECK_NULL(t);
    if (n % 2 || n / 2 > t->ndim || (n && !pad))
        return (tn_tensor *)tn__error("tn_pad: padding length %d must be even and at most twice the number of dims (%d)", n, t->ndim);
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    for (int i = 0; i < n / 2; i++) {
        int d = t->ndim - 1 - i;
        if (!tn__add_ok(shape[d], pad[2 * i], &shape[d]) || !tn__add_ok(shape[d], pad[2 * i + 1], &shape[d]))
            return (tn_tensor *)tn__error("tn_pad: padding %s of shape %s gives too many elements", tn__shape_str(pad, n), TN__SHAPE(t));
        if (shape[d] < 0)
            return (tn_tensor *)tn__error("tn_pad: the input size %lld, plus negative padding %lld and %lld resulted in a negative output size", (long long)t->shape[d], (long long)pad[2 * i], (long long)pad[2 * i + 1]);
    }
    if (tn__check_shape("tn_pad", shape, t->ndim) || tn__check_cpu_dtype("tn_pad", t)) return NULL;
    tn_tensor *out = TN__AS("tn_pad", tn__new(t->dtype, t->device, shape, t->ndim));
    if (!out || tn__backend(out->device)->fill(out, value)) { tn_release(out); return NULL; }
    tn_tensor src = *t, dst = *out; /* the overlap of input and output */
    bool empty = false;
    for (int i = 0; i < n / 2; i++) {
        int d = t->ndim - 1 - i;
        int64_t l = pad[2 * i], r = pad[2 * i + 1];
        int64_t s0 = l < 0 ? -l : 0, d0 = l > 0 ? l : 0;
        int64_t len = t->shape[d] - s0 - (r < 0 ? -r : 0);
        if (len <= 0) { empty = true; break; }
        src.offset += s0 * t->strides[d]; src.shape[d] = len;
        dst.offset += d0 * out->strides[d]; dst.shape[d] = len;
    }
    if (!empty && tn_numel(&src) > 0 && tn__copy(&dst, &src)) { tn_release(out); return NULL; }
    tn_node *nd = tn__node_new(G_PAD, 0, &t, 1);
    if (nd) { nd->ni = n; for (int i = 0; i < n; i++) nd->i[i] = pad[i]; }
    return tn__own(tn__node_attach(nd, out));
}

/* ======================================================================= */
/* 7. elementwise & broadcasting                                            */
/* ======================================================================= */
TNDEF int tn_broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out) {
    if (na < 0 || na > TN_MAX_DIMS || nb < 0 || nb > TN_MAX_DIMS || (na && !a) || (nb && !b) || !out)
        return TN__FAIL_INT("tn_broadcast_shapes: ndim %d and %d must be in [0, %d] with non-NULL shapes", na, nb, TN_MAX_DIMS);
    int n = tn__broadcast(a, na, b, nb, out);
    if (n < 0) return TN__FAIL_INT("tn_broadcast_shapes: shapes %s and %s cannot be broadcast", tn__shape_str(a, na), tn__shape_str(b, nb));
    return n;
}

/* Kernel loops. Each operand p[k] advances by s[k] bytes; the first branch is the
   contiguous case, written so the compiler vectorises it. */
#define TN__MAP1(TO, TI, EXPR) do { \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI)) { \
        TO *o_ = (TO *)p[0]; const TI *i_ = (const TI *)p[1]; \
        for (int64_t i = 0; i < n; i++) { TI x = i_[i]; o_[i] = (TO)(EXPR); } \
    } else for (int64_t i = 0; i < n; i++) { \
        TI x = *(const TI *)(p[1] + i * s[1]); *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); } \
} while (0)
#define TN__MAP2(TO, TI, EXPR) do { \
    if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI) && s[2] == (int64_t)sizeof(TI)) { \
        TO *o_ = (TO *)p[0]; const TI *a_ = (const TI *)p[1], *b_ = (const TI *)p[2]; \
        for (int64_t i = 0; i < n; i++) { TI a = a_[i], b = b_[i]; o_[i] = (TO)(EXPR); } \
    } else if (s[0] == (int64_t)sizeof(TO) && s[1] == (int64_t)sizeof(TI) && s[2] == 0) { /* tensor op scalar */ \
        TO *o_ = (TO *)p[0]; const TI *a_ = (const TI *)p[1]; const TI b = *(const TI *)p[2]; \
        for (int64_t i = 0; i < n; i++) { TI a = a_[i]; o_[i] = (TO)(EXPR); } \
    } else for (int64_t i = 0; i < n; i++) { \
        TI a = *(const TI *)(p[1] + i * s[1]), b = *(const TI *)(p[2] + i * s[2]); \
        *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); } \
} while (0)
#define TN__MAP3(TO, T1, TI, EXPR) do { for (int64_t i = 0; i < n; i++) { \
    T1 c = *(const T1 *)(p[1] + i * s[1]); TI a = *(const TI *)(p[2] + i * s[2]), b = *(const TI *)(p[3] + i * s[3]); \
    *(TO *)(p[0] + i * s[0]) = (TO)(EXPR); } } while (0)

typedef struct tn__kctx { int op; double alpha, params[3]; int failed; } tn__kctx;
/* x < 0 that is silent (no "always false" warning) for unsigned types */
#define TN__ISNEG(x) ((x) < 1 && (x) != 0)

/* ---- unary kernels ---- */
#define TN__DEFINE_UNARY_FLOAT(T, S, F) \
static void tn__unary_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
    tn__kctx *c = (tn__kctx *)vc; \
    const T lo = (T)c->params[0], hi = (T)c->params[1], p2 = (T)c->params[2]; \
    switch ((tn_unary_op)c->op) { \
    case NEG: TN__MAP1(T, T, -x); break; \
    case ABS: TN__MAP1(T, T, fabs##F(x)); break; \
    case SIGN: TN__MAP1(T, T, (T)((x > 0) - (x < 0))); break; /* sign(NaN) = 0, as PyTorch */ \
    case SQUARE: TN__MAP1(T, T, x * x); break; \
    case RELU: TN__MAP1(T, T, x < 0 ? (T)0 : x); break; \
    case FLOOR: TN__MAP1(T, T, floor##F(x)); break; \
    case CEIL: TN__MAP1(T, T, ceil##F(x)); break; \
    case ROUND: TN__MAP1(T, T, nearbyint##F(x)); break; \
    case TRUNC: TN__MAP1(T, T, trunc##F(x)); break; \
    case FRAC: TN__MAP1(T, T, x - trunc##F(x)); break; \
    case CLAMP: TN__MAP1(T, T, (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x)); break; \
    case NAN_TO_NUM: TN__MAP1(T, T, x != x ? lo : x == (T)INFINITY ? hi : x == -(T)INFINITY ? p2 : x); break; \
    case EXP: TN__MAP1(T, T, exp##F(x)); break; \
    case EXP2: TN__MAP1(T, T, exp2##F(x)); break; \
    case LOG: TN__MAP1(T, T, log##F(x)); break; \
    case LOG2: TN__MAP1(T, T, log2##F(x)); break; \
    case LOG10: TN__MAP1(T, T, log10##F(x)); break; \
    case LOG1P: TN__MAP1(T, T, log1p##F(x)); break; \
    case EXPM1: TN__MAP1(T, T, expm1##F(x)); break; \
    case SQRT: TN__MAP1(T, T, sqrt##F(x)); break; \
    case RSQRT: TN__MAP1(T, T, (T)1 / sqrt##F(x)); break; \
    case RECIPROCAL: TN__MAP1(T, T, (T)1 / x); break; \
    case SIN: TN__MAP1(T, T, sin##F(x)); break; \
    case COS: TN__MAP1(T, T, cos##F(x)); break; \
    case TAN: TN__MAP1(T, T, tan##F(x)); break; \
    case ASIN: TN__MAP1(T, T, asin##F(x)); break; \
    case ACOS: TN__MAP1(T, T, acos##F(x)); break; \
    case ATAN: TN__MAP1(T, T, atan##F(x)); break; \
    case SINH: TN__MAP1(T, T, sinh##F(x)); break; \
    case COSH: TN__MAP1(T, T, cosh##F(x)); break; \
    case TANH: TN__MAP1(T, T, tanh##F(x)); break; \
    case SIGMOID: TN__MAP1(T, T, tn_sigmoid_##S(x)); break; \
    case GELU: TN__MAP1(T, T, tn_gelu_##S(x)); break; \
    case GELU_TANH: TN__MAP1(T, T, tn_gelu_tanh_##S(x)); break; \
    case SILU: TN__MAP1(T, T, tn_silu_##S(x)); break; \
    case SOFTPLUS: TN__MAP1(T, T, tn_softplus_##S(x, lo, hi)); break; \
    case LEAKY_RELU: TN__MAP1(T, T, tn_leaky_relu_##S(x, lo)); break; \
    case ELU: TN__MAP1(T, T, tn_elu_##S(x, lo, hi, p2)); break; \
    case HARDTANH: TN__MAP1(T, T, x != x ? x : tn_hardtanh_##S(x, lo, hi)); break; \
    case MISH: TN__MAP1(T, T, tn_mish_##S(x)); break; \
    case HARDSWISH: TN__MAP1(T, T, tn_hardswish_##S(x)); break; \
    case HARDSIGMOID: TN__MAP1(T, T, tn_hardsigmoid_##S(x)); break; \
    case ERF: TN__MAP1(T, T, erf##F(x)); break; \
    case ERFC: TN__MAP1(T, T, erfc##F(x)); break; \
    case ISNAN: TN__MAP1(bool, T, x != x); break; \
    case ISINF: TN__MAP1(bool, T, x == (T)INFINITY || x == -(T)INFINITY); break; \
    case ISFINITE: TN__MAP1(bool, T, x == x && x != (T)INFINITY && x != -(T)INFINITY); break; \
    case LOGICAL_NOT: TN__MAP1(bool, T, x == 0); break; \
    default: TN__STORE_RELAXED(&c->failed, 1); break; \
    } }
TN__DEFINE_UNARY_FLOAT(float, f32, f)
TN__DEFINE_UNARY_FLOAT(double, f64, )

/* Integers wrap on overflow as PyTorch does: arithmetic goes through the unsigned type U
   (signed overflow would be undefined in C). */
#define TN__DEFINE_UNARY_INT(T, S, U) \
static void tn__unary_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
    tn__kctx *c = (tn__kctx *)vc; \
    const double lo = c->params[0], hi = c->params[1]; \
    switch ((tn_unary_op)c->op) { \
    case NEG: TN__MAP1(T, T, (U)0 - (U)x); break; \
    case ABS: TN__MAP1(T, T, TN__ISNEG(x) ? (T)((U)0 - (U)x) : x); break; \
    case SIGN: TN__MAP1(T, T, (x > 0) - TN__ISNEG(x)); break; \
    case SQUARE: TN__MAP1(T, T, (U)x * (U)x); break; \
    case RELU: TN__MAP1(T, T, TN__ISNEG(x) ? 0 : x); break; \
    case FLOOR: case CEIL: case ROUND: case TRUNC: case NAN_TO_NUM: TN__MAP1(T, T, x); break; \
    case CLAMP: TN__MAP1(T, T, (double)x > hi || lo > hi ? (T)hi : (double)x < lo ? (T)lo : x); break; /* min(max(x, lo), hi) */ \
    case BITWISE_NOT: TN__MAP1(T, T, ~x); break; \
    case LOGICAL_NOT: TN__MAP1(bool, T, x == 0); break; \
    default: TN__STORE_RELAXED(&c->failed, 1); break; \
    } }
TN__DEFINE_UNARY_INT(int32_t, i32, uint32_t)
TN__DEFINE_UNARY_INT(int64_t, i64, uint64_t)
TN__DEFINE_UNARY_INT(uint8_t, u8, uint8_t)

static void tn__unary_b(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    switch ((tn_unary_op)c->op) {
    case SIGN: case FLOOR: case CEIL: case ROUND: case TRUNC: case NAN_TO_NUM: TN__MAP1(bool, bool, x); break;
    case CLAMP: TN__MAP1(bool, bool, (double)x < c->params[0] ? c->params[0] != 0 : (double)x > c->params[1] ? c->params[1] != 0 : x); break;
    case BITWISE_NOT: case LOGICAL_NOT: TN__MAP1(bool, bool, !x); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    }
}

static tn__loop_fn tn__pick_loop(tn_dtype d, tn__loop_fn f32, tn__loop_fn f64, tn__loop_fn i32, tn__loop_fn i64, tn__loop_fn u8, tn__loop_fn b) {
    switch (d) {
    case TN_F32: return f32; case TN_F64: return f64; case TN_I32: return i32;
    case TN_I64: return i64; case TN_U8: return u8; case TN_BOOL: return b; default: return NULL;
    }
}

static int tn__cpu_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params) {
    tn__kctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    if (params) memcpy(c.params, params, sizeof c.params);
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__unary_f32, tn__unary_f64, tn__unary_i32, tn__unary_i64, tn__unary_u8, tn__unary_b);
    if (!fn) return TN__FAIL_INT("%s: dtype %s is not supported on the CPU", tn_unary_op_name(op), tn_dtype_name(x->dtype));
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    tn__iter_add(&it, x);
    tn__iter_run_par(&it, fn, &c, -1);
    if (c.failed) return TN__FAIL_INT("%s: not implemented for dtype %s", tn_unary_op_name(op), tn_dtype_name(x->dtype));
    return 0;
}

/* ---- binary kernels ---- */
/* Python's floor division and modulo for floats (as CPython and PyTorch compute them). */
#define TN__DEFINE_FLOAT_DIVMOD(T, S, F) \
    static T tn__floordiv_##S(T a, T b) { \
        if (b == 0) return a / b; \
        T mod = fmod##F(a, b), div = (a - mod) / b; \
        if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1; \
        if (div == 0) return copysign##F((T)0, a / b); \
        T fl = floor##F(div); \
        return div - fl > (T)0.5 ? fl + 1 : fl; } \
    static T tn__remainder_##S(T a, T b) { \
        T r = fmod##F(a, b); \
        return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r; }
TN__DEFINE_FLOAT_DIVMOD(float, f32, f)
TN__DEFINE_FLOAT_DIVMOD(double, f64, )

#define TN__DEFINE_BINARY_FLOAT(T, S, F) \
static void tn__binary_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
    tn__kctx *c = (tn__kctx *)vc; \
    const T alpha = (T)c->alpha; \
    switch ((tn_binary_op)c->op) { \
    case ADD: if (alpha == 1) TN__MAP2(T, T, a + b); else TN__MAP2(T, T, a + alpha * b); break; \
    case SUB: if (alpha == 1) TN__MAP2(T, T, a - b); else TN__MAP2(T, T, a - alpha * b); break; \
    case MUL: TN__MAP2(T, T, a * b); break; \
    case DIV: TN__MAP2(T, T, a / b); break; \
    case FLOOR_DIVIDE: TN__MAP2(T, T, tn__floordiv_##S(a, b)); break; \
    case REMAINDER: TN__MAP2(T, T, tn__remainder_##S(a, b)); break; \
    case FMOD: TN__MAP2(T, T, fmod##F(a, b)); break; \
    case POW: TN__MAP2(T, T, pow##F(a, b)); break; \
    case ATAN2: TN__MAP2(T, T, atan2##F(a, b)); break; \
    case MAXIMUM: TN__MAP2(T, T, (a != a || a > b) ? a : b); break; \
    case MINIMUM: TN__MAP2(T, T, (a != a || a < b) ? a : b); break; \
    case EQ: TN__MAP2(bool, T, a == b); break; \
    case NE: TN__MAP2(bool, T, a != b); break; \
    case LT: TN__MAP2(bool, T, a < b); break; \
    case LE: TN__MAP2(bool, T, a <= b); break; \
    case GT: TN__MAP2(bool, T, a > b); break; \
    case GE: TN__MAP2(bool, T, a >= b); break; \
    case THRESHOLD_BACKWARD: TN__MAP2(T, T, b > alpha ? a : (T)0); break; \
    default: TN__STORE_RELAXED(&c->failed, 1); break; \
    } }
TN__DEFINE_BINARY_FLOAT(float, f32, f)
TN__DEFINE_BINARY_FLOAT(double, f64, )

/* Integer division family: division by zero is an error (PyTorch raises), and
   MIN / -1 wraps instead of trapping. */
#define TN__DEFINE_INT_DIVMOD(T, S, U, SIGNED) \
    static T tn__ifloordiv_##S(T a, T b, int *bad) { \
        if (b == 0) { *bad = 2; return 0; } \
        if (SIGNED && b == (T)-1) return (T)((U)0 - (U)a); \
        T q = (T)(a / b); \
        return (a % b != 0 && (TN__ISNEG(a) != TN__ISNEG(b))) ? (T)(q - 1) : q; } \
    static T tn__iremainder_##S(T a, T b, int *bad, bool python) { \
        if (b == 0) { *bad = 2; return 0; } \
        if (SIGNED && b == (T)-1) return 0; \
        T r = (T)(a % b); \
        return (python && r != 0 && (TN__ISNEG(r) != TN__ISNEG(b))) ? (T)(r + b) : r; } \
    static T tn__ipow_##S(T a, T b, int *bad) { \
        if (TN__ISNEG(b)) { (void)bad; if (a == 1) return 1; if (SIGNED && a == (T)-1) return (b & 1) ? a : 1; return 0; } /* 1/a^n truncated */ \
        U r = 1, base = (U)a; \
        for (uint64_t e = (uint64_t)b; e; e >>= 1) { if (e & 1) r = (U)(r * base); base = (U)(base * base); } \
        return (T)r; }
TN__DEFINE_INT_DIVMOD(int32_t, i32, uint32_t, 1)
TN__DEFINE_INT_DIVMOD(int64_t, i64, uint64_t, 1)
TN__DEFINE_INT_DIVMOD(uint8_t, u8, uint8_t, 0)

#define TN__DEFINE_BINARY_INT(T, S, U) \
static void tn__binary_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
    tn__kctx *c = (tn__kctx *)vc; \
    const U alpha = (U)(int64_t)c->alpha; \
    int bad = 0; \
    switch ((tn_binary_op)c->op) { \
    case ADD: TN__MAP2(T, T, (U)a + alpha * (U)b); break; \
    case SUB: TN__MAP2(T, T, (U)a - alpha * (U)b); break; \
    case MUL: TN__MAP2(T, T, (U)a * (U)b); break; \
    case FLOOR_DIVIDE: TN__MAP2(T, T, tn__ifloordiv_##S(a, b, &bad)); break; \
    case REMAINDER: TN__MAP2(T, T, tn__iremainder_##S(a, b, &bad, true)); break; \
    case FMOD: TN__MAP2(T, T, tn__iremainder_##S(a, b, &bad, false)); break; \
    case POW: TN__MAP2(T, T, tn__ipow_##S(a, b, &bad)); break; \
    case MAXIMUM: TN__MAP2(T, T, a > b ? a : b); break; \
    case MINIMUM: TN__MAP2(T, T, a < b ? a : b); break; \
    case BITWISE_AND: TN__MAP2(T, T, a & b); break; \
    case BITWISE_OR: TN__MAP2(T, T, a | b); break; \
    case BITWISE_XOR: TN__MAP2(T, T, a ^ b); break; \
    case EQ: TN__MAP2(bool, T, a == b); break; \
    case NE: TN__MAP2(bool, T, a != b); break; \
    case LT: TN__MAP2(bool, T, a < b); break; \
    case LE: TN__MAP2(bool, T, a <= b); break; \
    case GT: TN__MAP2(bool, T, a > b); break; \
    case GE: TN__MAP2(bool, T, a >= b); break; \
    default: bad = 1; break; \
    } \
    if (bad) TN__STORE_RELAXED(&c->failed, bad); }
TN__DEFINE_BINARY_INT(int32_t, i32, uint32_t)
TN__DEFINE_BINARY_INT(int64_t, i64, uint64_t)
TN__DEFINE_BINARY_INT(uint8_t, u8, uint8_t)

static void tn__binary_b(char **p, const int64_t *s, int64_t n, void *vc) {
    tn__kctx *c = (tn__kctx *)vc;
    switch ((tn_binary_op)c->op) {
    case ADD: if (c->alpha == 0) { TN__MAP2(bool, bool, a && (b || !b)); break; } /* a + 0*b */ /* fall through */
    case MAXIMUM: case BITWISE_OR: case LOGICAL_OR: TN__MAP2(bool, bool, a || b); break;
    case MUL: case MINIMUM: case BITWISE_AND: case LOGICAL_AND: TN__MAP2(bool, bool, a && b); break;
    case BITWISE_XOR: case LOGICAL_XOR: case NE: TN__MAP2(bool, bool, a != b); break;
    case EQ: TN__MAP2(bool, bool, a == b); break;
    case LT: TN__MAP2(bool, bool, !a && b); break;
    case LE: TN__MAP2(bool, bool, !a || b); break;
    case GT: TN__MAP2(bool, bool, a && !b); break;
    case GE: TN__MAP2(bool, bool, a || !b); break;
    default: TN__STORE_RELAXED(&c->failed, 1); break;
    }
}

static int tn__cpu_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha) {
    tn__kctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.alpha = alpha;
    tn__loop_fn fn = tn__pick_loop(a->dtype, tn__binary_f32, tn__binary_f64, tn__binary_i32, tn__binary_i64, tn__binary_u8, tn__binary_b);
    if (!fn) return TN__FAIL_INT("%s: dtype %s is not supported on the CPU", tn_binary_op_name(op), tn_dtype_name(a->dtype));
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    tn__iter_add(&it, a);
    tn__iter_add(&it, b);
    tn__iter_run_par(&it, fn, &c, -1);
    if (c.failed == 2) return TN__FAIL_INT("%s: integer division by zero (ZeroDivisionError)", tn_binary_op_name(op));
    if (c.failed) return TN__FAIL_INT("%s: not implemented for dtype %s", tn_binary_op_name(op), tn_dtype_name(a->dtype));
    return 0;
}

/* ---- ternary kernels: where, lerp, addcmul, addcdiv ---- */
#define TN__DEFINE_TERNARY(T, S, ISFLOAT) \
static void tn__ternary_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
    tn__kctx *kc = (tn__kctx *)vc; \
    const T v = (T)kc->alpha; \
    switch ((tn_ternary_op)kc->op) { \
    case WHERE: TN__MAP3(T, bool, T, c ? a : b); break; \
    case LERP: if (ISFLOAT) TN__MAP3(T, T, T, ((double)b < 0.5 && (double)b > -0.5) ? c + b * (a - c) : a - (a - c) * ((T)1 - b)); else TN__STORE_RELAXED(&kc->failed, 1); break; /* |w| < 0.5, as PyTorch */ \
    case ADDCMUL: TN__MAP3(T, T, T, c + v * a * b); break; \
    case ADDCDIV: if (ISFLOAT) TN__MAP3(T, T, T, c + v * a / b); else TN__STORE_RELAXED(&kc->failed, 1); break; \
    default: TN__STORE_RELAXED(&kc->failed, 1); break; \
    } }
#define TN__DEFINE_TERNARY_TYPES(E, T, S, K) TN__DEFINE_TERNARY(T, S, E == TN_F32 || E == TN_F64)
TN__TYPES(TN__DEFINE_TERNARY_TYPES)

static int tn__cpu_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    tn__kctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.alpha = value;
    /* operand order for the loop: out, first, second, third; WHERE: cond, a, b;
       LERP: start, end, weight -> (c, a, b) = (start, end, weight) */
    tn__loop_fn fn = tn__pick_loop(out->dtype, tn__ternary_f32, tn__ternary_f64, tn__ternary_i32, tn__ternary_i64, tn__ternary_u8, tn__ternary_b);
    if (!fn) return TN__FAIL_INT("ternary op: dtype %s is not supported on the CPU", tn_dtype_name(out->dtype));
    tn__iter it;
    tn__iter_init(&it, out->shape, out->ndim);
    tn__iter_add(&it, out);
    tn__iter_add(&it, x);
    tn__iter_add(&it, y);
    tn__iter_add(&it, z);
    tn__iter_run_par(&it, fn, &c, -1);
    if (c.failed) return TN__FAIL_INT("ternary op %d: not implemented for dtype %s", (int)op, tn_dtype_name(out->dtype));
    return 0;
}

/* ---- dispatch: dtype rules, broadcasting, in-place and aliasing ---- */
#define TN__NAME_ENTRY(name) #name,
static const char *const tn__unary_names_uc[] = {TN_UNARY_OPS(TN__NAME_ENTRY) ""};
static const char *const tn__binary_names_uc[] = {TN_BINARY_OPS(TN__NAME_ENTRY) ""};
static const char *tn__lower(const char *uc) { /* "LOG1P" -> "log1p" (a few rotating buffers) */
    static TN__TLS char bufs[4][32];
    static TN__TLS int which;
    char *b = bufs[which++ & 3];
    size_t i = 0;
    for (; uc[i] && i < 31; i++) b[i] = (char)(uc[i] >= 'A' && uc[i] <= 'Z' ? uc[i] - 'A' + 'a' : uc[i]);
    b[i] = 0;
    return b;
}
TNDEF const char *tn_unary_op_name(tn_unary_op op) { return (unsigned)op < TN_NUM_UNARY_OPS ? tn__lower(tn__unary_names_uc[op]) : "invalid"; }
TNDEF const char *tn_binary_op_name(tn_binary_op op) { return (unsigned)op < TN_NUM_BINARY_OPS ? tn__lower(tn__binary_names_uc[op]) : "invalid"; }

/* in as it is, or a copy when it shares memory with out without being the same view:
   writing out element by element must never clobber an element of in not yet read. */
static tn_tensor *tn__unalias(tn_tensor *out, tn_tensor *in) {
    if (out->storage != in->storage) return tn_retain(in);
    bool same = out->offset == in->offset && out->ndim == in->ndim && out->dtype == in->dtype &&
                !memcmp(out->strides, in->strides, (size_t)out->ndim * sizeof(int64_t)) &&
                !memcmp(out->shape, in->shape, (size_t)out->ndim * sizeof(int64_t));
    return same ? tn_retain(in) : tn__copy_as(in, in->dtype, in->device);
}

/* torch.can_cast: no float -> integral, no non-bool -> bool. */
static bool tn__can_cast(tn_dtype from, tn_dtype to) {
    if (tn_dtype_is_floating(from) && !tn_dtype_is_floating(to)) return false;
    if (from != TN_BOOL && to == TN_BOOL) return false;
    return true;
}

/* Write result r (a fresh tensor) into the in-place target, converting dtype. */
static tn_tensor *tn__store_inplace(const char *fn, tn_tensor *target, tn_tensor *r) {
    if (!r) return NULL;
    if (tn__check_no_internal_overlap(fn, target)) { tn_release(r); return NULL; }

    if (!tn__can_cast(r->dtype, target->dtype)) {
        tn__error("%s: result type %s can't be cast to the desired output type %s", fn, tn_dtype_name(r->dtype), tn_dtype_name(target->dtype));
        tn_release(r);
        return NULL;
    }
    int rc = tn__copy(target, r);
    tn_release(r);
    if (rc) return NULL;
    tn__bump_version(target);
    return tn_retain(target); /* untracked: callers pass it through tn__own */
}

static bool tn__is_float_op(tn_unary_op op) { return op >= EXP && op <= ERFC; }
static bool tn__is_pred_op(tn_unary_op op) { return op >= LOGICAL_NOT; }

/* Untracked result of a unary op (the engine behind tn_exp and friends). */
/* The dtype a unary op computes in for x, or TN_NUM_DTYPES after an error under fn. */
static tn_dtype tn__unary_dtype(const char *fn, tn_unary_op op, tn_tensor *x) {
    if (tn__check_cpu_dtype(fn, x)) return TN_NUM_DTYPES;
    tn_dtype cd = x->dtype;
    /* before the float32 promotion of float functions: torch refuses integer input here */
    if (!tn_dtype_is_floating(cd) && (op == SILU || op == GELU || op == GELU_TANH || (op >= SOFTPLUS && op <= HARDSIGMOID && op != HARDTANH)))
        return (tn__error("%s: not implemented for dtype %s (floating tensors only, as PyTorch)", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if (tn__is_float_op(op) && !tn_dtype_is_floating(cd)) cd = TN_F32;
    if (op == FRAC && !tn_dtype_is_floating(cd)) return (tn__error("%s: not implemented for dtype %s", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if (op == BITWISE_NOT && tn_dtype_is_floating(cd)) return (tn__error("%s: not implemented for dtype %s (integers and bool only)", fn, tn_dtype_name(cd)), TN_NUM_DTYPES);
    if (cd == TN_BOOL && op == SQUARE) cd = TN_I64; /* square is pow(x, 2): bool promotes to int64 */
    if (cd == TN_BOOL && (op == NEG || op == ABS || op == RELU))
        return (tn__error("%s: not supported for dtype bool%s", fn, op == NEG ? "; use tn_logical_not" : ""), TN_NUM_DTYPES);
    return cd;
}

static tn_tensor *tn__unary_raw(tn_unary_op op, tn_tensor *x, const double *params) {
    char fn[40];
    snprintf(fn, sizeof fn, "tn_%s", tn_unary_op_name(op));
    tn_dtype cd = tn__unary_dtype(fn, op, x);
    if (cd == TN_NUM_DTYPES) return NULL;
    if (!tn_dtype_is_floating(cd) && (op == ISNAN || op == ISINF || op == ISFINITE)) { /* integers are always finite */
        tn_tensor *r = tn__new(TN_BOOL, x->device, x->shape, x->ndim);
        if (r && tn__backend(r->device)->fill(r, op == ISFINITE)) { tn_release(r); r = NULL; }
        return r;
    }
    tn_tensor *xc = tn__as_dtype(x, cd);
    tn_tensor *out = xc ? tn__new(tn__is_pred_op(op) ? TN_BOOL : cd, x->device, x->shape, x->ndim) : NULL;
    if (out && TN__KERNEL(fn, tn__backend(x->device)->unary(op, out, xc, params))) { tn_release(out); out = NULL; }
    tn_release(xc);
    return out;
}

/* Ops whose derivative is a function of the result: like PyTorch they save the result,
   so changing the input afterwards is fine (and changing the result is caught). */
static bool tn__saves_result(tn_unary_op op) {
    return op == EXP || op == EXP2 || op == EXPM1 || op == TANH || op == SIGMOID || op == SQRT || op == RSQRT || op == RELU;
}

/* Record a unary op's node: the input (or the result) is saved, params kept (clamp bounds, softplus). */
static tn_tensor *tn__unary_record(tn_unary_op op, tn_tensor *x, const double *params, tn_tensor *out) {
    tn_node *nd = out ? tn__node_new(G_UNARY, op, &x, 1) : NULL;
    if (nd) {
        if (tn__saves_result(op)) tn__node_save_result(nd, out); else tn__node_save(nd, x);
        if (params) memcpy(nd->d, params, 3 * sizeof(double));
    }
    return tn__node_attach(nd, out);
}

static tn_tensor *tn__unary(tn_unary_op op, tn_tensor *x, const double *params) {
    TN__CHECK_NULL(x);
    return tn__own(tn__unary_record(op, x, params, tn__unary_raw(op, x, params)));
}

/* ---- in-place ops under autograd ----
   An in-place op on a tensor in a graph is computed as its out-of-place form on a
   clone of the old value (so a saved old value is never the overwritten one), then the
   result is copied in and its history moved to the tensor, as PyTorch rebases it.
   Refused: leaves that require grad (their .grad would be meaningless) and views
   (the base's history would not see the change; PyTorch's CopySlices is not here yet). */
static int tn__inplace_mode(const char *fn, tn_tensor *x, tn_tensor *const *others, int n) {
    if (tn__grad_disabled) return 0;
    bool any = x->requires_grad;
    for (int i = 0; i < n; i++) any = any || (others[i] && others[i]->requires_grad);
    if (!any) return 0;
    if (x->requires_grad && !x->grad_fn)
        return TN__FAIL_INT("%s: a leaf tensor that requires grad is being used in an in-place operation; use tn_no_grad_begin() or an out-of-place op", fn);
    if (x->base) {
        if (x->base->requires_grad && !x->base->grad_fn)
            return TN__FAIL_INT("%s: a view of a leaf tensor that requires grad is being used in an in-place operation", fn);
        if (!tn_is_contiguous(x->base))
            return TN__FAIL_INT("%s: in-place operations on views of a non-contiguous tensor are not supported under autograd yet; use the out-of-place op", fn);
    } else if (x->is_view) {
        return TN__FAIL_INT("%s: in-place operation on a view whose base is unknown under autograd; use the out-of-place op", fn);
    }
    return 1;
}

/* x <- r, history included (r computed out of place from a clone of x). */
static int tn__inplace_finish(const char *fn, tn_tensor *x, tn_tensor *r) {
    if (!r) return -1;
    if (r->ndim != x->ndim || memcmp(r->shape, x->shape, (size_t)x->ndim * sizeof(int64_t)))
        return TN__FAIL_INT("%s: output with shape %s doesn't match the broadcast shape %s", fn, TN__SHAPE(x), TN__SHAPE(r));
    if (!tn__can_cast(r->dtype, x->dtype))
        return TN__FAIL_INT("%s: result type %s can't be cast to the desired output type %s", fn, tn_dtype_name(r->dtype), tn_dtype_name(x->dtype));
    if (tn__copy(x, r)) return -1;
    tn__bump_version(x);
    if (x->base) { /* a view: the base's history becomes "old base with this region replaced by r"
                      (CopySlices) and the view reads its values from the new base */
        tn_tensor *b = x->base, *ins[2] = {b, r};
        tn_node *cs = tn__node_new(G_COPY_SLICES, 0, ins, 2);
        if (!cs) return 0;
        cs->i[0] = x->ndim;
        for (int d = 0; d < x->ndim; d++) { cs->i[1 + d] = x->shape[d]; cs->i[1 + x->ndim + d] = x->strides[d]; }
        cs->i[1 + 2 * x->ndim] = x->offset - b->offset;
        tn__node_attach(cs, b);
        tn_node *vn = tn__node_new(G_BASE_VIEW, 0, &b, 1);
        if (vn) memcpy(vn->i, cs->i, sizeof vn->i);
        tn__node_attach(vn, x);
        return 0;
    }
    if (r->grad_fn) {
        tn_node *n = r->grad_fn;
        TN__ATOMIC_ADD(&n->refcount, 1);
        x->grad_fn_version = tn_version(x);
        if (x->retains_grad) { /* retain_grad follows the tensor, as PyTorch */
            if (x->grad_fn && x->grad_fn->retain_target == x) x->grad_fn->retain_target = NULL;
            n->retain_target = x;
        }
        tn__node_release(x->grad_fn);
        x->grad_fn = n;
        x->requires_grad = true;
    }
    return 0;
}

static tn_tensor *tn__unary_inplace(tn_unary_op op, tn_tensor *x, const double *params) {
    TN__CHECK_NULL(x);
    char fn[40];
    snprintf(fn, sizeof fn, "tn_%s_", tn_unary_op_name(op));
    if (tn__check_no_internal_overlap(fn, x)) return NULL;
    tn_dtype cd = tn__unary_dtype(fn, op, x);
    if (cd == TN_NUM_DTYPES) return NULL;
    TN__INPLACE_GRAD(fn, x, NULL, 0, tn__unary(op, x0, params));
    if (x->dtype == cd && !tn__is_pred_op(op)) {
        if (TN__KERNEL(fn, tn__backend(x->device)->unary(op, x, x, params))) return NULL;  /* same view: no aliasing hazard */
        tn__bump_version(x);
        return tn__own(tn_retain(x));
    }
    return tn__own(tn__store_inplace(fn, x, tn__unary_raw(op, x, params)));
}

static bool tn__is_cmp(tn_binary_op op) { return op >= EQ && op <= GE; }
static bool tn__is_logical(tn_binary_op op) { return op >= LOGICAL_AND && op <= LOGICAL_XOR; }
static bool tn__is_bitwise(tn_binary_op op) { return op >= BITWISE_AND && op <= BITWISE_XOR; }

/* A Python number as a 0-d wrapped tensor living on the caller's stack: no allocation.
   Its one reference belongs to the stack frame, so it must never be stored (a node
   that saves a wrapped number saves a copy). */
typedef struct tn__stack_scalar { tn_tensor t; tn_storage st; union { double f; int64_t i; unsigned char bytes[16]; } v; } tn__stack_scalar;
/* ss as an empty 0-d CPU tensor of dtype over its own value. */
static tn_tensor *tn__stack_scalar_setup(tn__stack_scalar *ss, tn_dtype dtype, bool wrapped) {
    memset(ss, 0, sizeof *ss);
    ss->st.refcount = 1;
    ss->st.data = &ss->v;
    ss->st.nbytes = tn_dtype_size(dtype);
    ss->st.device = TN_CPU;
    ss->t.refcount = 1;
    ss->t.dtype = dtype;
    ss->t.device = TN_CPU;
    ss->t.storage = &ss->st;
    ss->t.is_wrapped_number = wrapped;
    return &ss->t;
}
static tn_tensor *tn__stack_scalar_init(tn__stack_scalar *ss, double v) {
    bool integral = v == floor(v) && fabs(v) < 9.2e18;
    tn_tensor *t = tn__stack_scalar_setup(ss, integral ? TN_I64 : TN_F64, true);
    if (integral) ss->v.i = (int64_t)v; else ss->v.f = v;
    return t;
}
/* The 0-d CPU tensor b converted to dtype in ss (no allocation): a binary op's operand in
   its compute dtype, for the common case of a Python-number or 0-d operand. NULL when b
   does not qualify (the caller then converts by a copy). */
static tn_tensor *tn__stack_convert(tn__stack_scalar *ss, tn_tensor *b, tn_dtype dtype) {
    if (b->ndim != 0 || b->device != TN_CPU || b->dtype == dtype || tn_dtype_size(dtype) > sizeof ss->v) return NULL;
    tn_tensor *t = tn__stack_scalar_setup(ss, dtype, b->is_wrapped_number);
    return tn__copy(t, b) ? NULL : t;
}

/* The engine of every binary op: promotion, broadcasting, then one backend call.
   target != NULL makes it in-place (target is a, shape must equal the broadcast). */
static tn_tensor *tn__binary_raw(const char *fn, tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha, tn_tensor *target) {
    if (tn__check_cpu_dtype(fn, a) || tn__check_cpu_dtype(fn, b) || tn__check_same_device(fn, a, b)) return NULL;
    int64_t shape[TN_MAX_DIMS];
    int nd = tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape);
    if (nd < 0) return (tn_tensor *)tn__error("%s: the size of tensor a %s must match the size of tensor b %s at a non-singleton dimension", fn, TN__SHAPE(a), TN__SHAPE(b));
    tn_tensor *ab[2] = {a, b};
    tn_dtype rt = tn_result_type(ab, 2), cd = rt, od = rt;
    if (op == DIV || op == ATAN2) { if (!tn_dtype_is_floating(rt)) cd = od = TN_F32; }
    else if (tn__is_cmp(op)) od = TN_BOOL;
    else if (tn__is_logical(op)) cd = od = TN_BOOL;
    else if (tn__is_bitwise(op) && tn_dtype_is_floating(rt))
        return (tn_tensor *)tn__error("%s: not implemented for dtype %s (integers and bool only)", fn, tn_dtype_name(rt));
    if (op == SUB && (a->dtype == TN_BOOL || b->dtype == TN_BOOL))
        return (tn_tensor *)tn__error("%s: subtraction, the `-` operator, with a bool tensor is not supported; use tn_logical_not or tn_logical_xor", fn);
    if (op == POW && !tn_dtype_is_floating(rt) && b->is_wrapped_number && !tn_dtype_is_floating(b->dtype) && tn__read_double(b) < 0)
        return (tn_tensor *)tn__error("%s: integers to negative integer powers are not allowed", fn);
    if (cd == TN_BOOL && (op == FLOOR_DIVIDE || op == REMAINDER || op == FMOD || op == POW))
        return (tn_tensor *)tn__error("%s: not implemented for bool tensors", fn);
    if ((op == ADD || op == SUB) && !tn_dtype_is_floating(cd) && alpha != floor(alpha))
        return (tn_tensor *)tn__error("%s: for integral input tensors, argument alpha must not be a floating point number (got %g)", fn, alpha);
    if (target && (nd != target->ndim || memcmp(shape, target->shape, (size_t)nd * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: output with shape %s doesn't match the broadcast shape %s", fn, TN__SHAPE(target), tn__shape_str(shape, nd));
    if (target && tn__check_no_internal_overlap(fn, target)) return NULL;
    if (target && !tn__can_cast(od, target->dtype))
        return (tn_tensor *)tn__error("%s: result type %s can't be cast to the desired output type %s", fn, tn_dtype_name(od), tn_dtype_name(target->dtype));
    tn_device dev = a->ndim == 0 && a->device == TN_CPU ? b->device : a->device;
    if (target && target->device != dev)   /* PyTorch: the CPU scalar rule is for inputs, not for the result */
        return (tn_tensor *)tn__error("%s: expected all tensors on the same device, got %s (the result) and %s", fn, tn_device_name(target->device), tn_device_name(dev));
    bool direct = target && target->dtype == od;
    tn_tensor *out = direct ? tn_retain(target) : tn__new(od, dev, shape, nd);
    tn__stack_scalar sa, sb;   /* 0-d CPU operands converted on the stack */
    tn_tensor *ca = out ? tn__stack_convert(&sa, a, cd) : NULL, *cb = out ? tn__stack_convert(&sb, b, cd) : NULL;
    tn_tensor *ac = out ? (ca ? tn_retain(ca) : tn__as_dtype(a, cd)) : NULL, *bc = ac ? (cb ? tn_retain(cb) : tn__as_dtype(b, cd)) : NULL;
    tn_tensor *au = bc ? tn__unalias(out, ac) : NULL, *bu = au ? tn__unalias(out, bc) : NULL;
    int rc = bu ? TN__KERNEL(fn, tn__backend(dev)->binary(op, out, au, bu, alpha)) : -1;
    tn_release(ac); tn_release(bc); tn_release(au); tn_release(bu);
    if (rc) { tn_release(out); return NULL; }
    if (target && !direct) return tn__store_inplace(fn, target, out);
    if (target) tn__bump_version(target);
    return out;
}

static tn_tensor *tn__binary_record(tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha, tn_tensor *out) {
    tn_tensor *ab[2] = {a, b};
    tn_node *nd = out ? tn__node_new(G_BINARY, op, ab, 2) : NULL;
    if (nd && op != ADD && op != SUB) { /* add/sub need only shapes, as PyTorch: no saved tensors */
        /* mul needs each operand only for the other's gradient, div needs a only for b's:
           a slot that is not needed stays NULL, so changing that operand later is fine */
        bool need_a = op != MUL || b->requires_grad, need_b = op != MUL || a->requires_grad;
        if (op == DIV) need_a = b->requires_grad;
        tn__node_save(nd, need_a ? a : NULL);
        tn__node_save(nd, need_b ? b : NULL);
    }
    if (nd) nd->d[0] = alpha;
    return tn__node_attach(nd, out);
}

static tn_tensor *tn__binary(const char *fn, tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha) {
    TN__CHECK_NULL(a, b);
    return tn__own(tn__binary_record(op, a, b, alpha, tn__binary_raw(fn, op, a, b, alpha, NULL)));
}

static tn_tensor *tn__binary_inplace(const char *fn, tn_binary_op op, tn_tensor *a, tn_tensor *b, double alpha) {
    TN__CHECK_NULL(a, b);
    TN__INPLACE_GRAD(fn, a, &b, 1, tn__binary(fn, op, x0, b, alpha));
    return tn__own(tn__binary_raw(fn, op, a, b, alpha, a));
}

static tn_tensor *tn__binary_scalar(const char *fn, tn_binary_op op, tn_tensor *a, double v, bool reversed, tn_tensor *target) {
    TN__CHECK_NULL(a);
    if (target) TN__INPLACE_GRAD(fn, a, NULL, 0, tn__binary_scalar(fn, op, x0, v, reversed, NULL));
    tn__stack_scalar ss;
    tn_tensor *s = tn__stack_scalar_init(&ss, v);
    tn_tensor *r = reversed ? tn__binary_raw(fn, op, s, a, 1, target) : tn__binary_raw(fn, op, a, s, 1, target);
    if (!target) r = reversed ? tn__binary_record(op, s, a, 1, r) : tn__binary_record(op, a, s, 1, r);
    return tn__own(r);
}


TNDEF tn_tensor *tn_add(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_add", ADD, a, b, 1); }
TNDEF tn_tensor *tn_add_alpha(tn_tensor *a, tn_tensor *b, double alpha) { return tn__binary("tn_add_alpha", ADD, a, b, alpha); }
TNDEF tn_tensor *tn_sub(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_sub", SUB, a, b, 1); }
TNDEF tn_tensor *tn_sub_alpha(tn_tensor *a, tn_tensor *b, double alpha) { return tn__binary("tn_sub_alpha", SUB, a, b, alpha); }
TNDEF tn_tensor *tn_mul(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_mul", MUL, a, b, 1); }
TNDEF tn_tensor *tn_div(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_div", DIV, a, b, 1); }
TNDEF tn_tensor *tn_floor_divide(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_floor_divide", FLOOR_DIVIDE, a, b, 1); }
TNDEF tn_tensor *tn_remainder(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_remainder", REMAINDER, a, b, 1); }
TNDEF tn_tensor *tn_fmod(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_fmod", FMOD, a, b, 1); }
TNDEF tn_tensor *tn_pow(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_pow", POW, a, b, 1); }
TNDEF tn_tensor *tn_atan2(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_atan2", ATAN2, a, b, 1); }
TNDEF tn_tensor *tn_maximum(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_maximum", MAXIMUM, a, b, 1); }
TNDEF tn_tensor *tn_minimum(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_minimum", MINIMUM, a, b, 1); }
TNDEF tn_tensor *tn_eq(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_eq", EQ, a, b, 1); }
TNDEF tn_tensor *tn_ne(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_ne", NE, a, b, 1); }
TNDEF tn_tensor *tn_lt(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_lt", LT, a, b, 1); }
TNDEF tn_tensor *tn_le(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_le", LE, a, b, 1); }
TNDEF tn_tensor *tn_gt(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_gt", GT, a, b, 1); }
TNDEF tn_tensor *tn_ge(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_ge", GE, a, b, 1); }
TNDEF tn_tensor *tn_logical_and(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logical_and", LOGICAL_AND, a, b, 1); }
TNDEF tn_tensor *tn_logical_or(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logical_or", LOGICAL_OR, a, b, 1); }
TNDEF tn_tensor *tn_logical_xor(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_logical_xor", LOGICAL_XOR, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_and(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_and", BITWISE_AND, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_or(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_or", BITWISE_OR, a, b, 1); }
TNDEF tn_tensor *tn_bitwise_xor(tn_tensor *a, tn_tensor *b) { return tn__binary("tn_bitwise_xor", BITWISE_XOR, a, b, 1); }

TNDEF tn_tensor *tn_add_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_add_scalar", ADD, a, b, false, NULL); }
TNDEF tn_tensor *tn_sub_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_sub_scalar", SUB, a, b, false, NULL); }
TNDEF tn_tensor *tn_rsub_scalar(tn_tensor *a, double b) { return tn__grad_name(tn__binary_scalar("tn_rsub_scalar", SUB, a, b, true, NULL), "RsubBackward1"); }
TNDEF tn_tensor *tn_mul_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_mul_scalar", MUL, a, b, false, NULL); }
TNDEF tn_tensor *tn_div_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_div_scalar", DIV, a, b, false, NULL); }
TNDEF tn_tensor *tn_pow_scalar(tn_tensor *a, double e) {
    /* PyTorch refuses an integer tensor to a negative integer Scalar power (a tensor exponent is fine) */
    if (a && !tn_dtype_is_floating(a->dtype) && e < 0 && e == floor(e))
        return (tn_tensor *)tn__error("tn_pow_scalar: integers to negative integer powers are not allowed (%s tensor, exponent %g)", tn_dtype_name(a->dtype), e);
    return tn__grad_name(tn__binary_scalar("tn_pow_scalar", POW, a, e, false, NULL), "PowBackward0");
}
TNDEF tn_tensor *tn_rpow_scalar(double base, tn_tensor *e) { return tn__binary_scalar("tn_rpow_scalar", POW, e, base, true, NULL); }
TNDEF tn_tensor *tn_remainder_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_remainder_scalar", REMAINDER, a, b, false, NULL); }
TNDEF tn_tensor *tn_floor_divide_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_floor_divide_scalar", FLOOR_DIVIDE, a, b, false, NULL); }
TNDEF tn_tensor *tn_eq_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_eq_scalar", EQ, a, b, false, NULL); }
TNDEF tn_tensor *tn_ne_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_ne_scalar", NE, a, b, false, NULL); }
TNDEF tn_tensor *tn_lt_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_lt_scalar", LT, a, b, false, NULL); }
TNDEF tn_tensor *tn_le_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_le_scalar", LE, a, b, false, NULL); }
TNDEF tn_tensor *tn_gt_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_gt_scalar", GT, a, b, false, NULL); }
TNDEF tn_tensor *tn_ge_scalar(tn_tensor *a, double b) { return tn__binary_scalar("tn_ge_scalar", GE, a, b, false, NULL); }

TNDEF tn_tensor *tn_add_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_add_", ADD, a, b, 1); }
TNDEF tn_tensor *tn_add_alpha_(tn_tensor *a, tn_tensor *b, double alpha) { return tn__binary_inplace("tn_add_alpha_", ADD, a, b, alpha); }
TNDEF tn_tensor *tn_sub_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_sub_", SUB, a, b, 1); }
TNDEF tn_tensor *tn_mul_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_mul_", MUL, a, b, 1); }
TNDEF tn_tensor *tn_div_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_div_", DIV, a, b, 1); }
TNDEF tn_tensor *tn_pow_(tn_tensor *a, tn_tensor *b) { return tn__binary_inplace("tn_pow_", POW, a, b, 1); }
TNDEF tn_tensor *tn_add_scalar_(tn_tensor *a, double b) { return tn__binary_scalar("tn_add_scalar_", ADD, a, b, false, a); }
TNDEF tn_tensor *tn_mul_scalar_(tn_tensor *a, double b) { return tn__binary_scalar("tn_mul_scalar_", MUL, a, b, false, a); }

TNDEF tn_tensor *tn_fill_(tn_tensor *t, double value) {
    TN__CHECK_NULL(t);
    /* under autograd: where(true, value, old) has the new value and a zero gradient to the old one */
    TN__INPLACE_GRAD("tn_fill_", t, NULL, 0, tn_where(tn_ones(NULL, 0, TN_BOOL), tn_full(NULL, 0, value, t->dtype), x0));
    if (tn__check_cpu_dtype("tn_fill_", t) || tn__check_fill_value("tn_fill_", value, t->dtype) || tn__backend(t->device)->fill(t, value)) return NULL;

    tn__bump_version(t);
    return tn__own(tn_retain(t));
}
TNDEF tn_tensor *tn_zero_(tn_tensor *t) { return TN__AS("tn_zero_", tn_fill_(t, 0)); }

TNDEF tn_tensor *tn_neg(tn_tensor *x) { return tn__unary(NEG, x, NULL); }
TNDEF tn_tensor *tn_abs(tn_tensor *x) { return tn__unary(ABS, x, NULL); }
TNDEF tn_tensor *tn_sign(tn_tensor *x) { return tn__unary(SIGN, x, NULL); }
TNDEF tn_tensor *tn_exp(tn_tensor *x) { return tn__unary(EXP, x, NULL); }
TNDEF tn_tensor *tn_exp2(tn_tensor *x) { return tn__unary(EXP2, x, NULL); }
TNDEF tn_tensor *tn_log(tn_tensor *x) { return tn__unary(LOG, x, NULL); }
TNDEF tn_tensor *tn_log2(tn_tensor *x) { return tn__unary(LOG2, x, NULL); }
TNDEF tn_tensor *tn_log10(tn_tensor *x) { return tn__unary(LOG10, x, NULL); }
TNDEF tn_tensor *tn_log1p(tn_tensor *x) { return tn__unary(LOG1P, x, NULL); }
TNDEF tn_tensor *tn_expm1(tn_tensor *x) { return tn__unary(EXPM1, x, NULL); }
TNDEF tn_tensor *tn_sqrt(tn_tensor *x) { return tn__unary(SQRT, x, NULL); }
TNDEF tn_tensor *tn_rsqrt(tn_tensor *x) { return tn__unary(RSQRT, x, NULL); }
TNDEF tn_tensor *tn_square(tn_tensor *x) { return tn__unary(SQUARE, x, NULL); }
TNDEF tn_tensor *tn_reciprocal(tn_tensor *x) { return tn__unary(RECIPROCAL, x, NULL); }
TNDEF tn_tensor *tn_sin(tn_tensor *x) { return tn__unary(SIN, x, NULL); }
TNDEF tn_tensor *tn_cos(tn_tensor *x) { return tn__unary(COS, x, NULL); }
TNDEF tn_tensor *tn_tan(tn_tensor *x) { return tn__unary(TAN, x, NULL); }
TNDEF tn_tensor *tn_asin(tn_tensor *x) { return tn__unary(ASIN, x, NULL); }
TNDEF tn_tensor *tn_acos(tn_tensor *x) { return tn__unary(ACOS, x, NULL); }
TNDEF tn_tensor *tn_atan(tn_tensor *x) { return tn__unary(ATAN, x, NULL); }
TNDEF tn_tensor *tn_sinh(tn_tensor *x) { return tn__unary(SINH, x, NULL); }
TNDEF tn_tensor *tn_cosh(tn_tensor *x) { return tn__unary(COSH, x, NULL); }
TNDEF tn_tensor *tn_tanh(tn_tensor *x) { return tn__unary(TANH, x, NULL); }
TNDEF tn_tensor *tn_sigmoid(tn_tensor *x) { return tn__unary(SIGMOID, x, NULL); }
TNDEF tn_tensor *tn_relu(tn_tensor *x) { return tn__unary(RELU, x, NULL); }
TNDEF tn_tensor *tn_gelu(tn_tensor *x, bool tanh_approx) { return TN__AS("tn_gelu", tn__unary(tanh_approx ? GELU_TANH : GELU, x, NULL)); }
TNDEF tn_tensor *tn_silu(tn_tensor *x) { return tn__unary(SILU, x, NULL); }
TNDEF tn_tensor *tn_softplus(tn_tensor *x, double beta, double threshold) {
    double p[3] = {beta, threshold, 0};
    TN__CHECK_NULL(x);
    if (beta == 0) return (tn_tensor *)tn__error("tn_softplus: beta must be nonzero");
    return tn__unary(SOFTPLUS, x, p);
}
TNDEF tn_tensor *tn_erf(tn_tensor *x) { return tn__unary(ERF, x, NULL); }
TNDEF tn_tensor *tn_erfc(tn_tensor *x) { return tn__unary(ERFC, x, NULL); }
TNDEF tn_tensor *tn_floor(tn_tensor *x) { return tn__unary(FLOOR, x, NULL); }
TNDEF tn_tensor *tn_ceil(tn_tensor *x) { return tn__unary(CEIL, x, NULL); }
TNDEF tn_tensor *tn_round(tn_tensor *x) { return tn__unary(ROUND, x, NULL); }
TNDEF tn_tensor *tn_trunc(tn_tensor *x) { return tn__unary(TRUNC, x, NULL); }
TNDEF tn_tensor *tn_frac(tn_tensor *x) { return tn__unary(FRAC, x, NULL); }
TNDEF tn_tensor *tn_logical_not(tn_tensor *x) { return tn__unary(LOGICAL_NOT, x, NULL); }
TNDEF tn_tensor *tn_bitwise_not(tn_tensor *x) { return tn__unary(BITWISE_NOT, x, NULL); }
TNDEF tn_tensor *tn_isnan(tn_tensor *x) { return tn__unary(ISNAN, x, NULL); }
TNDEF tn_tensor *tn_isinf(tn_tensor *x) { return tn__unary(ISINF, x, NULL); }
TNDEF tn_tensor *tn_isfinite(tn_tensor *x) { return tn__unary(ISFINITE, x, NULL); }
/* posinf = INFINITY / neginf = -INFINITY mean the dtype's largest / lowest finite value. */
TNDEF tn_tensor *tn_nan_to_num(tn_tensor *x, double nan, double posinf, double neginf) {
    TN__CHECK_NULL(x);
    double big = x->dtype == TN_F32 ? FLT_MAX : DBL_MAX;
    double p[3] = {nan, isinf(posinf) && posinf > 0 ? big : posinf, isinf(neginf) && neginf < 0 ? -big : neginf};
    return tn__unary(NAN_TO_NUM, x, p);
}

/* Bounds for clamp on x's dtype; a non-integral bound on an integer tensor promotes
   to float32 (PyTorch's type promotion for clamp). */
static tn_tensor *tn__clamp_raw(tn_tensor *x, double lo, double hi) {
    double p[3] = {lo != lo ? NAN : lo, hi != hi ? NAN : hi, 0};
    if (lo != lo || hi != hi) { /* NaN bound: PyTorch gives NaN */
        tn_tensor *r = tn__new(tn_dtype_is_floating(x->dtype) ? x->dtype : TN_F32, x->device, x->shape, x->ndim);
        if (r && tn__backend(r->device)->fill(r, NAN)) { tn_release(r); r = NULL; }
        return r;
    }
    if (x->dtype == TN_BOOL) { /* bool with integer bounds promotes to int64, as PyTorch */
        tn_tensor *xi = tn__copy_as(x, TN_I64, x->device);
        tn_tensor *r = xi ? tn__clamp_raw(xi, lo, hi) : NULL;
        tn_release(xi);
        return r;
    }
    if (x->dtype == TN_U8) { /* PyTorch casts integral bounds to uint8 first (-1 becomes 255) */
        if (isfinite(lo) && lo == floor(lo)) p[0] = lo = (double)(uint8_t)(int64_t)lo;
        if (isfinite(hi) && hi == floor(hi)) p[1] = hi = (double)(uint8_t)(int64_t)hi;
    }
    if (!tn_dtype_is_floating(x->dtype) && ((isfinite(lo) && lo != floor(lo)) || (isfinite(hi) && hi != floor(hi)))) {

        tn_tensor *xf = tn__copy_as(x, TN_F32, x->device);
        tn_tensor *r = xf ? tn__unary_raw(CLAMP, xf, p) : NULL;
        tn_release(xf);
        return r;
    }
    return tn__unary_raw(CLAMP, x, p);
}
TNDEF tn_tensor *tn_clamp(tn_tensor *x, double min, double max) {
    TN__CHECK_NULL(x);
    double p[3] = {min, max, 0};
    return tn__own(tn__unary_record(CLAMP, x, p, tn__clamp_raw(x, min, max)));
}
TNDEF tn_tensor *tn_clamp_(tn_tensor *x, double min, double max) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_clamp_", x)) return NULL;
    TN__INPLACE_GRAD("tn_clamp_", x, NULL, 0, tn_clamp(x0, min, max));
    return tn__own(tn__store_inplace("tn_clamp_", x, tn__clamp_raw(x, min, max)));
}
static tn_tensor *tn__clamp_tensor_impl(tn_tensor *x, tn_tensor *min, tn_tensor *max) {
    TN__CHECK_NULL(x);
    if (!min && !max) return (tn_tensor *)tn__error("tn_clamp_tensor: at least one of min and max must be given");
    tn_scope_begin();
    tn_tensor *r = x;
    if (min) r = tn_maximum(r, min);
    if (max && r) r = tn_minimum(r, max);
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_clamp_tensor(tn_tensor *x, tn_tensor *min, tn_tensor *max) { return TN__AS("tn_clamp_tensor", tn__clamp_tensor_impl(x, min, max)); }

TNDEF tn_tensor *tn_neg_(tn_tensor *x) { return tn__unary_inplace(NEG, x, NULL); }
TNDEF tn_tensor *tn_exp_(tn_tensor *x) { return tn__unary_inplace(EXP, x, NULL); }
TNDEF tn_tensor *tn_relu_(tn_tensor *x) { return tn__unary_inplace(RELU, x, NULL); }
TNDEF tn_tensor *tn_sigmoid_(tn_tensor *x) { return tn__unary_inplace(SIGMOID, x, NULL); }
TNDEF tn_tensor *tn_tanh_(tn_tensor *x) { return tn__unary_inplace(TANH, x, NULL); }
TNDEF tn_tensor *tn_sqrt_(tn_tensor *x) { return tn__unary_inplace(SQRT, x, NULL); }

/* The engine of where/lerp/addcmul/addcdiv: broadcast three operands, promote. */
static tn_tensor *tn__ternary_raw(const char *fn, tn_ternary_op op, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value, tn_tensor *target) {
    tn_tensor *ops[3] = {x, y, z};
    int64_t shape[TN_MAX_DIMS];
    int nd = 0, first = 0; /* the result's device: the first operand that is not a CPU scalar */
    while (first < 2 && ops[first]->ndim == 0 && ops[first]->device == TN_CPU) first++;
    for (int i = 0; i < 3; i++) {
        if (tn__check_cpu_dtype(fn, ops[i]) || tn__check_same_device(fn, ops[first], ops[i])) return NULL;
        int r = tn__broadcast(shape, nd, ops[i]->shape, ops[i]->ndim, shape);
        if (r < 0) return (tn_tensor *)tn__error("%s: shapes %s, %s and %s cannot be broadcast together", fn, TN__SHAPE(x), TN__SHAPE(y), TN__SHAPE(z));
        nd = r;
    }
    tn_dtype dt;
    if (op == WHERE) {
        if (x->dtype != TN_BOOL) return (tn_tensor *)tn__error("%s: condition must be a bool tensor, got %s", fn, tn_dtype_name(x->dtype));
        dt = tn_result_type(ops + 1, 2);
    } else {
        dt = tn_result_type(ops, 3);
        if (op == LERP && (!tn_dtype_is_floating(x->dtype) || !tn_dtype_is_floating(y->dtype)))
            return (tn_tensor *)tn__error("%s: lerp not implemented for dtypes %s and %s (floating tensors only)", fn, tn_dtype_name(x->dtype), tn_dtype_name(y->dtype));

        if (op == ADDCDIV && !tn_dtype_is_floating(dt))
            return (tn_tensor *)tn__error("%s: integer division with addcdiv is no longer supported; use floating tensors", fn);
    }
    if (target && (nd != target->ndim || memcmp(shape, target->shape, (size_t)nd * sizeof(int64_t))))
        return (tn_tensor *)tn__error("%s: output with shape %s doesn't match the broadcast shape %s", fn, TN__SHAPE(target), tn__shape_str(shape, nd));
    tn_tensor *out = tn__new(dt, ops[first]->device, shape, nd), *c[3] = {NULL, NULL, NULL};
    int rc = out ? 0 : -1;
    for (int i = 0; i < 3 && rc == 0; i++) {
        c[i] = tn__as_dtype(ops[i], (op == WHERE && i == 0) ? TN_BOOL : dt);
        if (!c[i]) rc = -1;
    }
    /* kernel operand order: WHERE (cond, a, b); others (self, t1, t2) -> loop's (c, a, b) */
    if (rc == 0) rc = tn__backend(out->device)->ternary(op, out, c[0], c[1], c[2], value);
    for (int i = 0; i < 3; i++) tn_release(c[i]);
    if (rc) { tn_release(out); return NULL; }
    return target ? tn__store_inplace(fn, target, out) : out;
}

/* Out-of-place ternary op with its node (all three inputs saved). */
static tn_tensor *tn__ternary(const char *fn, tn_ternary_op op, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    TN__CHECK_NULL(x, y, z);
    tn_tensor *ins[3] = {x, y, z};
    tn_tensor *out = tn__ternary_raw(fn, op, x, y, z, value, NULL);
    tn_node *nd = out ? tn__node_new(G_TERNARY, op, ins, 3) : NULL;
    for (int k = 0; nd && k < 3; k++) tn__node_save(nd, op == WHERE && k > 0 ? NULL : ins[k]); /* where needs only its condition */

    if (nd) nd->d[0] = value;
    return tn__own(tn__node_attach(nd, out));
}
static tn_tensor *tn__ternary_inplace(const char *fn, tn_ternary_op op, tn_tensor *x, tn_tensor *y, tn_tensor *z, double value) {
    TN__CHECK_NULL(x, y, z);
    tn_tensor *others[2] = {y, z};
    TN__INPLACE_GRAD(fn, x, others, 2, tn__ternary(fn, op, x0, y, z, value));
    return tn__own(tn__ternary_raw(fn, op, x, y, z, value, x));
}

TNDEF tn_tensor *tn_where(tn_tensor *cond, tn_tensor *a, tn_tensor *b) { return tn__ternary("tn_where", WHERE, cond, a, b, 0); }
TNDEF tn_tensor *tn_lerp(tn_tensor *start, tn_tensor *end, tn_tensor *weight) { return tn__ternary("tn_lerp", LERP, start, end, weight, 0); }
static tn_tensor *tn__lerp_scalar(tn_tensor *start, tn_tensor *end, double weight, tn_tensor *target) {
    TN__CHECK_NULL(start, end);
    tn_tensor *w = tn__scalar_new(weight, TN_F64, true);
    tn_tensor *r = !w ? NULL : target ? tn__ternary_inplace("tn_lerp_", LERP, start, end, w, 0) : tn__ternary("tn_lerp_scalar", LERP, start, end, w, 0);
    tn_release(w); /* a node that saved w holds its own reference */
    return r;

}
TNDEF tn_tensor *tn_lerp_scalar(tn_tensor *start, tn_tensor *end, double weight) { return tn__grad_name(tn__lerp_scalar(start, end, weight, NULL), "LerpBackward0"); }
TNDEF tn_tensor *tn_lerp_(tn_tensor *start, tn_tensor *end, double weight) { return tn__lerp_scalar(start, end, weight, start); }
TNDEF tn_tensor *tn_addcmul(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value) { return tn__ternary("tn_addcmul", ADDCMUL, x, t1, t2, value); }
TNDEF tn_tensor *tn_addcdiv(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value) { return tn__ternary("tn_addcdiv", ADDCDIV, x, t1, t2, value); }
TNDEF tn_tensor *tn_addcmul_(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value) { return tn__ternary_inplace("tn_addcmul_", ADDCMUL, x, t1, t2, value); }
TNDEF tn_tensor *tn_addcdiv_(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, double value) { return tn__ternary_inplace("tn_addcdiv_", ADDCDIV, x, t1, t2, value); }


TNDEF bool tn_allclose(tn_tensor *a, tn_tensor *b, double rtol, double atol, bool equal_nan) {
    if (!a || !b) return false;
    int64_t bs[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_allclose", a) || tn__check_cpu_dtype("tn_allclose", b)) return false;
    if (tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, bs) < 0) {
        tn__error("tn_allclose: shapes %s and %s cannot be broadcast", TN__SHAPE(a), TN__SHAPE(b));
        return false;
    }
    tn_scope_begin();
    tn_tensor *af = tn_to_dtype(a, TN_F64), *bf = tn_to_dtype(b, TN_F64);
    tn_tensor *diff = tn_abs(tn_sub(af, bf));
    tn_tensor *tol = tn_add_scalar(tn_mul_scalar(tn_abs(bf), rtol), atol);
    /* torch.isclose: equal, or both finite and within tolerance */
    tn_tensor *ok = tn_logical_and(tn_le(diff, tol), tn_logical_and(tn_isfinite(af), tn_isfinite(bf)));
    if (ok) ok = tn_logical_or(ok, tn_eq(af, bf));

    if (ok && equal_nan) ok = tn_logical_or(ok, tn_logical_and(tn_isnan(af), tn_isnan(bf)));
    bool r = ok && tn_item(tn_all(ok)) != 0;
    tn_scope_end();
    return r;
}

TNDEF bool tn_equal(tn_tensor *a, tn_tensor *b) {
    if (a && b && (tn__check_cpu_dtype("tn_equal", a) || tn__check_cpu_dtype("tn_equal", b))) return false;
    if (!a || !b || a->ndim != b->ndim || memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int64_t))) return false;
    tn_scope_begin();
    tn_tensor *eq = tn_eq(a, b);
    bool r = eq && tn_item(tn_all(eq)) != 0;
    tn_scope_end();
    return r;
}

/* ======================================================================= */
/* 8. reductions                                                            */
/* ======================================================================= */
/* Reduce kernel: x walked in full, out restrided with stride 0 on reduced dims, so one
   loop accumulates whether the reduced dims are inner (register accumulator, double
   for float32 sums) or outer (elementwise accumulate). out holds the identity first. */
#define TN__REDUCE_CASES(T, ACC, MAXV, MINV) \
    switch (op) { \
    case SUM: TN__RED(T, ACC, acc + x); break; \
    case PROD: TN__RED(T, ACC, acc * x); break; \
    case MAX: TN__RED(T, T, (x != x || x > acc) ? x : acc); break; \
    case MIN: TN__RED(T, T, (x != x || x < acc) ? x : acc); break; \
    case ALL: TN__RED(T, T, acc && x); break; \
    case ANY: TN__RED(T, T, acc || x); break; \
    default: break; }
#define TN__RED(T, ACC, EXPR) do { \
    if (s[0] == 0) { ACC acc = (ACC)*(T *)p[0]; \
        for (int64_t i = 0; i < n; i++) { T x = *(const T *)(p[1] + i * s[1]); acc = (ACC)(EXPR); } \
        *(T *)p[0] = (T)acc; \
    } else for (int64_t i = 0; i < n; i++) { T *o = (T *)(p[0] + i * s[0]); ACC acc = (ACC)*o; \
        T x = *(const T *)(p[1] + i * s[1]); *o = (T)(EXPR); } } while (0)
/* integer sums and products wrap (through uint64) as PyTorch's do */
#define TN__DEFINE_REDUCE(T, S, ACC) \
    static void tn__reduce_##S(char **p, const int64_t *s, int64_t n, void *ctx) { \
        tn_reduce_op op = *(const tn_reduce_op *)ctx; TN__REDUCE_CASES(T, ACC, 0, 0) }
TN__DEFINE_REDUCE(float, f32, double)
TN__DEFINE_REDUCE(double, f64, double)
TN__DEFINE_REDUCE(int32_t, i32, int32_t)
TN__DEFINE_REDUCE(uint8_t, u8, uint8_t)
static void tn__reduce_i64(char **p, const int64_t *s, int64_t n, void *ctx) {
    tn_reduce_op op = *(const tn_reduce_op *)ctx;
    switch (op) {
    case SUM: TN__RED(int64_t, uint64_t, acc + (uint64_t)x); break;
    case PROD: TN__RED(int64_t, uint64_t, acc * (uint64_t)x); break;
    case MAX: TN__RED(int64_t, int64_t, x > acc ? x : acc); break;
    case MIN: TN__RED(int64_t, int64_t, x < acc ? x : acc); break;
    case ALL: TN__RED(int64_t, int64_t, acc && x); break;
    case ANY: TN__RED(int64_t, int64_t, acc || x); break;
    default: break;
    }
}

/* The float64 sum of a contiguous float32 row: 32 partial sums (one add chain would wait on
   its latency; 32 make four independent 8-lane chains), added pairwise at the end. The
   order depends only on n, never on the thread count; both versions give the same bits. */
static double tn__sum_row_f32(const float *x, int64_t n) {
    double a[32] = {0};
    int64_t i;
    for (i = 0; i < n; i++) a[i & 31] += (double)x[i];
    for (int w = 16; w > 0; w /= 2)
        for (int j = 0; j < w; j++) a[j] += a[j + w];
    return a[0];
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same sums in four 8-lane registers (lanes j, 8 + j, 16 + j, 24 + j), the tail masked. */
__attribute__((target("avx512f,avx512vl"))) static double tn__sum_row_f32_avx512(const float *x, int64_t n) {
    __m512d a[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * k)));
    for (int k = 0; k < 4 && i + 8 * k < n; k++) {
        const int64_t r = TN__MIN(8, n - i - 8 * k);
        const __mmask8 m = (__mmask8)((1u << r) - 1);
        a[k] = _mm512_mask_add_pd(a[k], m, a[k], _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i + 8 * k)));
    }
    const __m512d s = _mm512_add_pd(_mm512_add_pd(a[0], a[2]), _mm512_add_pd(a[1], a[3]));
    const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}
#endif
static int tn__sum_row_avx512 = 1;   /* test knob: 0 runs the portable loop */
static double tn__sum_row(const float *x, int64_t n) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (tn__sum_row_avx512 && tn__cpu_avx512()) return tn__sum_row_f32_avx512(x, n);
#endif
    return tn__sum_row_f32(x, n);
}
/* float32 sums and products accumulate in a float64 copy of out, whichever dims are
   reduced (a float32 accumulator drifts by percents over 2^20 additions). */
static void tn__reduce_f32acc(char **p, const int64_t *s, int64_t n, void *ctx) {
    bool sum = *(const tn_reduce_op *)ctx == SUM;
    if (s[0] == 0 && sum && s[1] == (int64_t)sizeof(float) && n >= 64) {   /* a contiguous row */
        *(double *)p[0] += tn__sum_row((const float *)p[1], n);
        return;
    }
    if (s[0] == 0) { /* reducing along this row: keep the accumulator in a register */
        double a = *(double *)p[0];
        for (int64_t i = 0; i < n; i++) { double x = *(const float *)(p[1] + i * s[1]); a = sum ? a + x : a * x; }
        *(double *)p[0] = a;
        return;
    }
    for (int64_t i = 0; i < n; i++) {

        double *o = (double *)(p[0] + i * s[0]), x = *(const float *)(p[1] + i * s[1]);
        *o = sum ? *o + x : *o * x;
    }
}

static int tn__cpu_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) {
    /* bool reduces as uint8: same bytes, and all/any/max/min agree */
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__reduce_f32, tn__reduce_f64, tn__reduce_i32, tn__reduce_i64, tn__reduce_u8, tn__reduce_u8);
    if (!fn || out->dtype != x->dtype) return TN__FAIL_INT("reduce: dtype %s is not supported on the CPU", tn_dtype_name(x->dtype));
    tn_tensor *acc = NULL;
    if (x->dtype == TN_F32 && (op == SUM || op == PROD)) {
        acc = tn__copy_as(out, TN_F64, TN_CPU);
        if (!acc) return -1;
        fn = tn__reduce_f32acc;
    }
    tn__iter it;
    tn__iter_init(&it, x->shape, x->ndim);
    tn__iter_add(&it, acc ? acc : out);
    tn__iter_add(&it, x);
    tn__iter_run_reduce(&it, fn, &op);
    int rc = acc ? tn__cpu_copy(out, acc) : 0;
    tn_release(acc);
    return rc;
}


/* Parse a dim list into a mask; n == 0 means every dim. Returns 0 or -1. */
static int tn__dims_mask(const char *fn, tn_tensor *x, const int64_t *dims, int n, bool *mask) {
    memset(mask, 0, TN_MAX_DIMS * sizeof(bool));
    if (n < 0 || n > TN_MAX_DIMS || (n && !dims)) return TN__FAIL_INT("%s: invalid dim list (n = %d)", fn, n);
    if (n == 0) { for (int i = 0; i < x->ndim; i++) mask[i] = true; return 0; }
    for (int i = 0; i < n; i++) {
        int d = tn__wrap_dim(fn, dims[i], x->ndim);
        if (d < 0) return -1;
        if (x->ndim == 0) continue;
        if (mask[d]) return TN__FAIL_INT("%s: dim %d appears multiple times in the list of dims", fn, d);
        mask[d] = true;
    }
    return 0;
}

/* out shape with reduced dims kept as 1 (keepdim) or dropped. */
static int tn__reduced_shape(tn_tensor *x, const bool *mask, bool keepdim, int64_t *shape) {
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (!mask[i]) shape[nd++] = x->shape[i];
        else if (keepdim) shape[nd++] = 1;
    }
    return nd;
}

static double tn__reduce_identity(tn_reduce_op op) { return (op == PROD || op == ALL) ? 1 : 0; }

static tn_tensor *tn__reduce_raw(const char *fn, tn_reduce_op op, tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype(fn, x) || tn__dims_mask(fn, x, dims, n, mask)) return NULL;
    if (op == MAX || op == MIN) {
        for (int i = 0; i < x->ndim; i++)
            if (mask[i] && x->shape[i] == 0)
                return (tn_tensor *)tn__error("%s: expected reduction dim %d to have non-zero size (input shape %s)", fn, i, TN__SHAPE(x));
    }
    tn_dtype od = x->dtype;
    if ((op == SUM || op == PROD) && !tn_dtype_is_floating(od)) od = TN_I64;
    if (op == ALL || op == ANY) od = TN_BOOL;
    int64_t kshape[TN_MAX_DIMS], shape[TN_MAX_DIMS];
    int knd = tn__reduced_shape(x, mask, true, kshape), nd = tn__reduced_shape(x, mask, keepdim, shape);
    tn_tensor *xc = tn__as_dtype(x, od);
    tn_tensor *out = xc ? tn__new(od, x->device, kshape, knd) : NULL;
    const tn_backend *be = tn__backend(x->device);
    /* max/min start from the first slice (exact for every dtype), the others from their identity */
    tn_tensor first = xc ? tn__restrided(xc, kshape, xc->strides, knd) : *x;
    int rc = !out ? -1 : (op == MAX || op == MIN) ? tn__copy(out, &first) : be->fill(out, tn__reduce_identity(op));
    if (out && (rc || be->reduce(op, out, xc))) { tn_release(out); out = NULL; }
    tn_release(xc);
    if (out && !keepdim) { /* drop the reduced dims: a plain reshape of a contiguous tensor */
        out->ndim = nd;
        memcpy(out->shape, shape, sizeof shape);
        tn__contiguous_strides(shape, nd, out->strides);
    }
    return out;
}

/* Record a reduction's node: the reduced dims as a mask in i[] (SUM, MEAN, PROD, AMAX, AMIN). */
static tn_tensor *tn__reduce_record(const char *fn, tn__gop g, tn_tensor *x, const int64_t *dims, int n, tn_tensor *out) {
    tn_node *node = out ? tn__node_new(g, 0, &x, 1) : NULL;
    bool mask[TN_MAX_DIMS];
    if (node && tn__dims_mask(fn, x, dims, n, mask) == 0) {
        for (int d = 0; d < x->ndim; d++) node->i[d] = mask[d];
        if (g == G_PROD || g == G_AMAX || g == G_AMIN) tn__node_save(node, x);
        if (g == G_AMAX || g == G_AMIN) tn__node_save_result(node, out);
    }
    return tn__node_attach(node, out);
}

static tn_tensor *tn__reduce(const char *fn, tn_reduce_op op, tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    tn_tensor *out = tn__reduce_raw(fn, op, x, dims, n, keepdim);
    if (op == SUM || op == PROD || op == MAX || op == MIN)
        out = tn__reduce_record(fn, op == SUM ? G_SUM : op == PROD ? G_PROD : op == MAX ? G_AMAX : G_AMIN, x, dims, n, out);
    return tn__own(out);
}

TNDEF tn_tensor *tn_sum(tn_tensor *x) { return tn__reduce("tn_sum", SUM, x, NULL, 0, false); }
TNDEF tn_tensor *tn_sum_dims(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return tn__grad_name(tn__reduce("tn_sum_dims", SUM, x, dims, n, keepdim), n ? "SumBackward1" : "SumBackward0"); }
TNDEF tn_tensor *tn_prod(tn_tensor *x) { return tn__reduce("tn_prod", PROD, x, NULL, 0, false); }
TNDEF tn_tensor *tn_prod_dims(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return tn__reduce("tn_prod_dims", PROD, x, dims, n, keepdim); }
TNDEF tn_tensor *tn_amax(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return tn__reduce("tn_amax", MAX, x, dims, n, keepdim); }
TNDEF tn_tensor *tn_amin(tn_tensor *x, const int64_t *dims, int n, bool keepdim) { return tn__reduce("tn_amin", MIN, x, dims, n, keepdim); }
TNDEF tn_tensor *tn_max(tn_tensor *x) { return tn__grad_name(tn__reduce("tn_max", MAX, x, NULL, 0, false), "MaxBackward1"); }
TNDEF tn_tensor *tn_min(tn_tensor *x) { return tn__grad_name(tn__reduce("tn_min", MIN, x, NULL, 0, false), "MinBackward1"); }
TNDEF tn_tensor *tn_all(tn_tensor *x) { return tn__reduce("tn_all", ALL, x, NULL, 0, false); }
TNDEF tn_tensor *tn_any(tn_tensor *x) { return tn__reduce("tn_any", ANY, x, NULL, 0, false); }
TNDEF tn_tensor *tn_all_dim(tn_tensor *x, int64_t dim, bool keepdim) { return tn__reduce("tn_all_dim", ALL, x, &dim, 1, keepdim); }
TNDEF tn_tensor *tn_any_dim(tn_tensor *x, int64_t dim, bool keepdim) { return tn__reduce("tn_any_dim", ANY, x, &dim, 1, keepdim); }

static int64_t tn__reduced_count(const char *fn, tn_tensor *x, const int64_t *dims, int n) {
    bool mask[TN_MAX_DIMS];
    if (tn__dims_mask(fn, x, dims, n, mask)) return -1;
    int64_t c = 1;
    for (int i = 0; i < x->ndim; i++) if (mask[i]) c *= x->shape[i];
    return c;
}

static int tn__need_float(const char *fn, tn_tensor *x) {
    if (!tn_dtype_is_floating(x->dtype))
        return TN__FAIL_INT("%s: could not infer output dtype; input dtype must be floating point, got %s", fn, tn_dtype_name(x->dtype));
    return 0;
}

TNDEF tn_tensor *tn_mean_dims(tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_mean_dims", x) || tn__need_float("tn_mean_dims", x)) return NULL;
    int64_t count = tn__reduced_count("tn_mean_dims", x, dims, n);
    tn_tensor *s = count < 0 ? NULL : tn__reduce_raw("tn_mean", SUM, x, dims, n, keepdim);
    if (!s) return NULL;
    tn_tensor *inv = tn__scalar_new(count ? 1.0 / (double)count : NAN, TN_F64, true); /* empty: NaN as PyTorch */
    tn_tensor *r = inv ? tn__binary_raw("tn_mean", MUL, s, inv, 1, s) : NULL;
    tn_release(inv);
    tn_release(s);
    r = tn__reduce_record("tn_mean", G_MEAN, x, dims, n, r);
    if (r && r->grad_fn) { r->grad_fn->d[0] = (double)count; r->grad_fn->name = n ? "MeanBackward1" : "MeanBackward0"; }
    return tn__own(r);
}
TNDEF tn_tensor *tn_mean(tn_tensor *x) { return TN__AS("tn_mean", tn_mean_dims(x, NULL, 0, false)); }

TNDEF tn_tensor *tn_var_dims(tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_var_dims", x) || tn__need_float("tn_var_dims", x)) return NULL;
    int64_t count = tn__reduced_count("tn_var_dims", x, dims, n);
    if (count < 0) return NULL;
    tn_scope_begin();
    tn_tensor *m = tn_mean_dims(x, dims, n, true);
    tn_tensor *ss = tn_sum_dims(tn_square(tn_sub(x, m)), dims, n, keepdim);
    tn_tensor *r = tn_keep(tn_div_scalar(ss, (double)TN__MAX(0, count - correction)));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_var(tn_tensor *x, int64_t correction) { return tn__grad_name(TN__AS("tn_var", tn_var_dims(x, NULL, 0, correction, false)), "VarBackward0"); }
TNDEF tn_tensor *tn_std_dims(tn_tensor *x, const int64_t *dims, int n, int64_t correction, bool keepdim) {
    TN__CHECK_NULL(x);
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_std_dims", x) || tn__need_float("tn_std_dims", x) || tn__dims_mask("tn_std_dims", x, dims, n, mask)) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn_var_dims(x, dims, n, correction, keepdim), *zero = v ? tn_eq_scalar(v, 0) : NULL;
    /* sqrt with a zero gradient at 0 (PyTorch masks it): the double where keeps inf * 0 out */
    tn_tensor *r = tn_keep(zero ? tn_where(zero, tn_zeros_like(v), tn_sqrt(tn_where(zero, tn_ones_like(v), v))) : NULL);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_std(tn_tensor *x, int64_t correction) { return tn__grad_name(TN__AS("tn_std", tn_std_dims(x, NULL, 0, correction, false)), "StdBackward0"); }

TNDEF tn_tensor *tn_norm_dims(tn_tensor *x, double p, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_norm_dims", x) || tn__need_float("tn_norm_dims", x) || tn__dims_mask("tn_norm_dims", x, dims, n, mask)) return NULL;
    tn_scope_begin();
    tn_tensor *a = tn_abs(x), *r;
    if (p == INFINITY) r = tn_numel(x) ? tn_amax(a, dims, n, keepdim) : tn_sum_dims(a, dims, n, keepdim);
    else if (p == -INFINITY) r = tn_amin(a, dims, n, keepdim);
    else if (p == 0) r = tn_to_dtype(tn_sum_dims(tn_ne_scalar(x, 0), dims, n, keepdim), x->dtype);
    else if (p == 1) r = tn_sum_dims(a, dims, n, keepdim);
    else { /* (sum |x|^p)^(1/p), with a zero gradient where the norm is 0 (as PyTorch), not inf * 0 */
        tn_tensor *sp = tn_sum_dims(p == 2 ? tn_square(a) : tn_pow_scalar(a, p), dims, n, keepdim);
        tn_tensor *zero = sp ? tn_eq_scalar(sp, 0) : NULL;
        tn_tensor *safe = zero ? tn_where(zero, tn_ones_like(sp), sp) : NULL;
        r = safe ? tn_where(zero, tn_zeros_like(sp), p == 2 ? tn_sqrt(safe) : tn_pow_scalar(safe, 1.0 / p)) : NULL;
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_norm(tn_tensor *x, double p) { return tn__grad_name(TN__AS("tn_norm", tn_norm_dims(x, p, NULL, 0, false)), "NormBackward1"); }

TNDEF tn_tensor *tn_logsumexp(tn_tensor *x, const int64_t *dims, int n, bool keepdim) {
    TN__CHECK_NULL(x);
    bool mask[TN_MAX_DIMS];
    if (tn__check_cpu_dtype("tn_logsumexp", x) || tn__dims_mask("tn_logsumexp", x, dims, n, mask)) return NULL;
    tn_scope_begin();
    tn_tensor *xf = tn_dtype_is_floating(x->dtype) ? x : tn_to_dtype(x, TN_F32), *r;
    if (tn_numel(xf) == 0) {
        r = tn_log(tn_sum_dims(tn_exp(xf), dims, n, keepdim));
    } else { /* shift by the max (0 where the max is infinite, so inf - inf never happens) */
        tn_tensor *m = tn_amax(xf, dims, n, true);
        if (m) m = tn_where(tn_isinf(m), tn_zeros_like(m), m);
        tn_tensor *s = tn_log(tn_sum_dims(tn_exp(tn_sub(xf, m)), dims, n, true));
        r = tn_add(s, m);
        if (r && !keepdim) {
            int64_t shape[TN_MAX_DIMS];
            bool mask[TN_MAX_DIMS];
            tn__dims_mask("tn_logsumexp", xf, dims, n, mask);
            int nd = tn__reduced_shape(xf, mask, false, shape);
            r = tn_reshape(r, shape, nd);
        }
    }
    r = tn_keep(tn__grad_name(r, "LogsumexpBackward0"));
    tn_scope_end();
    return r;
}

/* ---- lane ops: one dim at a time (arg-extremes, scans, softmax, sort) ----
   The iterator walks every position of the other dims; the lane function then runs
   along `dim` with the lane stride of each operand. */
typedef struct tn__lctx {
    tn_lane_op op;
    int64_t len, so, so1, sx; /* lane length and byte strides of out, out1, x */
    int flag;
    int64_t *ix, *tmp;        /* sort scratch: 2 * len indices */
    const void *vals;
} tn__lctx;

/* Stable merge sort of indices ix[0..n) by less(vals, a, b). */
typedef bool (*tn__less_fn)(const void *vals, int64_t a, int64_t b);
static void tn__msort(int64_t *ix, int64_t *tmp, int64_t n, const void *vals, tn__less_fn less) {
    if (n < 2) return;
    if (n <= 16) { /* insertion sort: stable */
        for (int64_t i = 1; i < n; i++) {
            int64_t v = ix[i], j = i;
            while (j > 0 && less(vals, v, ix[j - 1])) { ix[j] = ix[j - 1]; j--; }
            ix[j] = v;
        }
        return;
    }
    int64_t h = n / 2;
    tn__msort(ix, tmp, h, vals, less);
    tn__msort(ix + h, tmp, n - h, vals, less);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = less(vals, ix[j], ix[i]) ? ix[j++] : ix[i++];
    while (i < h) tmp[k++] = ix[i++];
    while (j < n) tmp[k++] = ix[j++];
    memcpy(ix, tmp, (size_t)n * sizeof *ix);
}

#define TN__DEFINE_LANE(E, T, S, ACC) \
    static bool tn__lt_##S(const void *v, int64_t a, int64_t b) { /* NaN is largest */ \
        T x = ((const T *)v)[a], y = ((const T *)v)[b]; return x == x && (y != y || x < y); } \
    static bool tn__gt_##S(const void *v, int64_t a, int64_t b) { \
        T x = ((const T *)v)[a], y = ((const T *)v)[b]; return (x != x && y == y) || x > y; } \
    static void tn__lane_##S(char **p, const int64_t *s, int64_t n, void *vc) { \
        tn__lctx *c = (tn__lctx *)vc; \
        int64_t len = c->len; \
        for (int64_t e = 0; e < n; e++) { \
            char *o = p[0] + e * s[0], *o1 = p[1] + e * s[1], *xp = p[2] + e * s[2]; \
            const int64_t so = c->so, so1 = c->so1, sx = c->sx; \
            (void)so1; \
            switch (c->op) { \
            case ARGMAX: case ARGMIN: { \
                T best = *(const T *)xp; int64_t bi = 0; \
                for (int64_t i = 1; i < len && best == best; i++) { \
                    T v = *(const T *)(xp + i * sx); \
                    if (v != v || (c->op == ARGMAX ? v > best : v < best)) { best = v; bi = i; } } \
                if (c->flag) *(T *)o = best; \
                *(int64_t *)o1 = bi; break; } \
            case CUMSUM: case CUMPROD: { /* float scans accumulate in double, integer ones wrap in uint64 */ \
                ACC acc = c->op == CUMSUM ? (ACC)0 : (ACC)1; \
                for (int64_t i = 0; i < len; i++) { \
                    ACC v = (ACC)*(const T *)(xp + i * sx); \
                    acc = c->op == CUMSUM ? (ACC)(acc + v) : (ACC)(acc * v); \
                    *(T *)(o + i * so) = (T)acc; } break; } \
            case SORT: { \
                T *vals = (T *)(c->tmp + len); \
                for (int64_t i = 0; i < len; i++) { vals[i] = *(const T *)(xp + i * sx); c->ix[i] = i; } \
                tn__msort(c->ix, c->tmp, len, vals, c->flag ? tn__gt_##S : tn__lt_##S); \
                for (int64_t i = 0; i < len; i++) { \
                    *(T *)(o + i * so) = vals[c->ix[i]]; *(int64_t *)(o1 + i * so1) = c->ix[i]; } break; } \
            default: tn__lane_float_##S(c, o, xp); break; \
            } } }

/* softmax and log_softmax along a lane, float types only (others never reach here) */
#define TN__DEFINE_LANE_FLOAT(T, S, F) \
    static void tn__lane_float_##S(tn__lctx *c, char *o, char *xp) { \
        int64_t len = c->len, so = c->so, sx = c->sx; \
        T m = -(T)INFINITY; double sum = 0; \
        for (int64_t i = 0; i < len; i++) { T v = *(const T *)(xp + i * sx); m = (v != v || v > m) ? v : m; } \
        for (int64_t i = 0; i < len; i++) sum += exp##F(*(const T *)(xp + i * sx) - m); \
        if (c->op == SOFTMAX) { T inv = (T)(1.0 / sum); \
            for (int64_t i = 0; i < len; i++) *(T *)(o + i * so) = exp##F(*(const T *)(xp + i * sx) - m) * inv; \
        } else { T ls = (T)log(sum); /* (x - m) - log(sum): never forms the large m + log(sum) */ \
            for (int64_t i = 0; i < len; i++) *(T *)(o + i * so) = (*(const T *)(xp + i * sx) - m) - ls; } }
TN__DEFINE_LANE_FLOAT(float, f32, f)
TN__DEFINE_LANE_FLOAT(double, f64, )
#define TN__DEFINE_LANE_FLOAT_NONE(S) static void tn__lane_float_##S(tn__lctx *c, char *o, char *xp) { (void)c; (void)o; (void)xp; }
TN__DEFINE_LANE_FLOAT_NONE(i32) TN__DEFINE_LANE_FLOAT_NONE(i64) TN__DEFINE_LANE_FLOAT_NONE(u8)
TN__DEFINE_LANE(TN_F32, float, f32, double) TN__DEFINE_LANE(TN_F64, double, f64, double)
TN__DEFINE_LANE(TN_I32, int32_t, i32, uint64_t) TN__DEFINE_LANE(TN_I64, int64_t, i64, uint64_t)
TN__DEFINE_LANE(TN_U8, uint8_t, u8, uint64_t) /* bool lanes (sort, argmax) run as uint8 */

static int tn__cpu_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag) {
    tn__lctx c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.flag = flag;
    int nd = x->ndim ? x->ndim : 1;
    int64_t shape[TN_MAX_DIMS];
    tn_tensor xv = *x, ov, o1v;
    if (x->ndim == 0) { xv.ndim = 1; xv.shape[0] = 1; xv.strides[0] = 1; }
    c.len = xv.shape[dim];
    int64_t es = (int64_t)tn_dtype_size(x->dtype);
    c.sx = xv.strides[dim] * es;
    memcpy(shape, xv.shape, sizeof shape);
    shape[dim] = 1;
    tn_tensor *o = out ? out : out1, *o1 = out1 ? out1 : out;
    ov = *o; o1v = *o1;
    if (ov.ndim == 0) { ov.ndim = 1; ov.shape[0] = 1; ov.strides[0] = 1; }
    if (o1v.ndim == 0) { o1v.ndim = 1; o1v.shape[0] = 1; o1v.strides[0] = 1; }
    c.so = ov.strides[dim] * (int64_t)tn_dtype_size(ov.dtype);
    c.so1 = o1v.strides[dim] * (int64_t)tn_dtype_size(o1v.dtype);
    if (op == ARGMAX || op == ARGMIN) c.flag = out != NULL;
    if (op == SORT) {
        c.ix = (int64_t *)TN_MALLOC((size_t)(c.len ? c.len : 1) * (2 * sizeof(int64_t) + 8));
        if (!c.ix) return TN__FAIL_INT("sort: out of memory");
        c.tmp = c.ix + c.len;
    }
    tn_tensor xr = tn__restride(&xv, shape, nd), orr = tn__restride(&ov, shape, nd), o1r = tn__restride(&o1v, shape, nd);
    tn__iter it;
    tn__iter_init(&it, shape, nd);
    tn__iter_add(&it, &orr);
    tn__iter_add(&it, &o1r);
    tn__iter_add(&it, &xr);
    tn__loop_fn fn = tn__pick_loop(x->dtype, tn__lane_f32, tn__lane_f64, tn__lane_i32, tn__lane_i64, tn__lane_u8, tn__lane_u8);
    if (fn && c.len > 0 && op == SORT) tn__iter_run(&it, fn, &c);   /* one scratch buffer */
    else if (fn && c.len > 0) tn__iter_run_par(&it, fn, &c, tn_numel(x));
    TN_FREE(c.ix);
    return fn ? 0 : TN__FAIL_INT("lane op: dtype %s is not supported on the CPU", tn_dtype_name(x->dtype));
}

/* Values and/or indices of the first max/min along dim. */
static tn_tensor *tn__arg_extreme(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim, bool keepdim, bool want_values, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    if (x->ndim && x->shape[d] == 0)
        return (tn_tensor *)tn__error("%s: expected reduction dim %d to have non-zero size (input shape %s)", fn, d, TN__SHAPE(x));
    int64_t kshape[TN_MAX_DIMS];
    memcpy(kshape, x->shape, sizeof kshape);
    if (x->ndim) kshape[d] = 1;
    tn_tensor *vals = want_values ? tn__new(x->dtype, x->device, kshape, x->ndim) : NULL;
    tn_tensor *idx = tn__new(TN_I64, x->device, kshape, x->ndim);
    if ((want_values && !vals) || !idx || tn__backend(x->device)->lane(op, vals, idx, x, d, 0)) {
        tn_release(vals); tn_release(idx);
        return NULL;
    }
    tn_tensor *both[2] = {vals, idx};
    for (int k = 0; k < 2 && !keepdim && x->ndim; k++) {
        tn_tensor *t = both[k];
        if (!t) continue;
        for (int i = d; i < t->ndim - 1; i++) { t->shape[i] = t->shape[i + 1]; t->strides[i] = t->strides[i + 1]; }
        t->ndim--;
    }
    tn_node *node = vals ? tn__node_new(op == ARGMAX ? G_MAX_DIM : G_MIN_DIM, 0, &x, 1) : NULL;
    if (node) { node->i[0] = d; node->i[1] = keepdim; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = tn__own(idx); else tn_release(idx);
    return want_values ? tn__own(vals) : NULL;
}

TNDEF tn_tensor *tn_max_dim(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **indices) { return tn__arg_extreme("tn_max_dim", ARGMAX, x, dim, keepdim, true, indices); }
TNDEF tn_tensor *tn_min_dim(tn_tensor *x, int64_t dim, bool keepdim, tn_tensor **indices) { return tn__arg_extreme("tn_min_dim", ARGMIN, x, dim, keepdim, true, indices); }
TNDEF tn_tensor *tn_argmax_dim(tn_tensor *x, int64_t dim, bool keepdim) {
    tn_tensor *idx = NULL;
    tn__arg_extreme("tn_argmax_dim", ARGMAX, x, dim, keepdim, false, &idx);
    return idx;
}
TNDEF tn_tensor *tn_argmin_dim(tn_tensor *x, int64_t dim, bool keepdim) {
    tn_tensor *idx = NULL;
    tn__arg_extreme("tn_argmin_dim", ARGMIN, x, dim, keepdim, false, &idx);
    return idx;
}
static tn_tensor *tn__arg_flat(const char *fn, tn_lane_op op, tn_tensor *x) {
    TN__CHECK_NULL(x);
    if (tn_numel(x) == 0) return (tn_tensor *)tn__error("%s: expected a non-empty tensor (input shape %s)", fn, TN__SHAPE(x));
    tn_scope_begin();
    int64_t m1 = -1;
    tn_tensor *idx = NULL;
    tn__arg_extreme(fn, op, tn_reshape(x, &m1, 1), 0, false, false, &idx);
    idx = tn_keep(idx);
    tn_scope_end();
    return idx;
}
TNDEF tn_tensor *tn_argmax(tn_tensor *x) { return tn__arg_flat("tn_argmax", ARGMAX, x); }
TNDEF tn_tensor *tn_argmin(tn_tensor *x) { return tn__arg_flat("tn_argmin", ARGMIN, x); }

/* Lane op producing a tensor shaped like x (scans, softmax) in dtype od. */
static tn_tensor *tn__lane_like(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim, tn_dtype od) {
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype(fn, x)) return NULL;
    int d = tn__wrap_dim(fn, dim, x->ndim);
    if (d < 0) return NULL;
    tn_tensor *xc = tn__as_dtype(x, od);
    tn_tensor *out = xc ? tn__new(od, x->device, x->shape, x->ndim) : NULL;
    if (out && tn__backend(x->device)->lane(op, out, NULL, xc, d, 0)) { tn_release(out); out = NULL; }
    tn_release(xc);
    tn__gop g = op == CUMSUM ? G_CUMSUM : op == CUMPROD ? G_CUMPROD : op == SOFTMAX ? G_SOFTMAX : G_LOG_SOFTMAX;
    tn_node *node = out ? tn__node_new(g, 0, &x, 1) : NULL;
    if (node) {
        node->i[0] = d;
        if (g == G_CUMPROD) tn__node_save(node, x);
        if (g != G_CUMSUM) tn__node_save_result(node, out); /* softmax and log_softmax: the result only */
    }
    return tn__own(tn__node_attach(node, out));
}
static tn_dtype tn__scan_dtype(tn_dtype d) { return tn_dtype_is_floating(d) ? d : TN_I64; }
TNDEF tn_tensor *tn_cumsum(tn_tensor *x, int64_t dim) { return tn__lane_like("tn_cumsum", CUMSUM, x, dim, x ? tn__scan_dtype(x->dtype) : TN_F32); }
TNDEF tn_tensor *tn_cumprod(tn_tensor *x, int64_t dim) { return tn__lane_like("tn_cumprod", CUMPROD, x, dim, x ? tn__scan_dtype(x->dtype) : TN_F32); }

TNDEF tn_tensor *tn_sort(tn_tensor *x, int64_t dim, bool descending, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_sort", x)) return NULL;
    int d = tn__wrap_dim("tn_sort", dim, x->ndim);
    if (d < 0) return NULL;
    tn_tensor *vals = tn__new(x->dtype, x->device, x->shape, x->ndim), *idx = tn__new(TN_I64, x->device, x->shape, x->ndim);
    if (!vals || !idx || tn__backend(x->device)->lane(SORT, vals, idx, x, d, descending)) {
        tn_release(vals); tn_release(idx);
        return NULL;
    }
    tn_node *node = tn__node_new(G_SORT, 0, &x, 1);
    if (node) { node->i[0] = d; tn__node_save(node, idx); }
    vals = tn__node_attach(node, vals);
    if (indices) *indices = tn__own(idx); else tn_release(idx);
    return tn__own(vals);
}

TNDEF tn_tensor *tn_argsort(tn_tensor *x, int64_t dim, bool descending) {
    tn_tensor *idx = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_argsort", x) || tn__wrap_dim("tn_argsort", dim, x->ndim) < 0) return NULL;
    tn_scope_begin();
    tn_tensor *v = tn_sort(x, dim, descending, &idx);
    idx = v ? tn_keep(idx) : NULL;
    tn_scope_end();
    return idx;
}

TNDEF tn_tensor *tn_topk(tn_tensor *x, int64_t k, int64_t dim, bool largest, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (tn__check_cpu_dtype("tn_topk", x)) return NULL;
    int d = tn__wrap_dim("tn_topk", dim, x->ndim);
    if (d < 0) return NULL;
    int64_t size = x->ndim ? x->shape[d] : 1;
    if (k < 0 || k > size) return (tn_tensor *)tn__error("tn_topk: selected index k (%lld) out of range for dimension %d of size %lld", (long long)k, d, (long long)size);
    tn_scope_begin();
    tn_tensor *idx = NULL, *v = tn_sort(x, d, largest, &idx), *vk = NULL, *ik = NULL;
    if (v) {
        vk = x->ndim ? tn_contiguous(tn_narrow(v, d, 0, k)) : v;
        ik = x->ndim ? tn_contiguous(tn_narrow(idx, d, 0, k)) : idx;
    }
    vk = tn_keep(vk);
    ik = tn_keep(ik);
    tn_scope_end();
    if (indices) *indices = ik;
    else if (tn__nscopes == 0) tn_release(ik); /* kept for us, not wanted */
    return vk;
}

/* ======================================================================= */
/* 9. linear algebra                                                        */
/* ======================================================================= */
/* The packed, cache-blocked GEMM (tn__gemm_f32 / tn__gemm_f64): any strides, run-time
   AVX-512 / AVX2 micro-kernels. */
/* ============================================================================
 * GEMM: tn__gemm_f32 / tn__gemm_f64
 *
 *   C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C[M,N]
 *
 * Every operand is (base pointer, row stride, column stride), strides in
 * elements, so any strided 2-D view (transposed = swapped strides, every 2nd
 * column, ...) multiplies without a copy.  beta == 0 writes C without reading
 * it (NaN/Inf in C do not propagate), as in BLAS; alpha == 0 or K == 0 does
 * not read A or B.  Returns 0, or -1 if the packing buffers could not be
 * allocated (C is untouched then).
 *
 * Scheme (BLIS / GotoBLAS):
 *
 *   for jc in 0..N step NC            B panel  KC x NC   -> lives in L3
 *     for pc in 0..K step KC            pack B[pc:+KC, jc:+NC] into NR-wide
 *                                       column micro-panels, zero padded
 *       for ic in 0..M step MC          A block  MC x KC   -> lives in L2
 *         pack A[ic:+MC, pc:+KC] into MR-tall row micro-panels, zero padded
 *         for jr in 0..NC step NR       B micro-panel KC x NR -> L1/L2
 *           for ir in 0..MC step MR
 *             micro-kernel: MR x NR tile of C += A micro-panel @ B micro-panel
 *
 * Packing makes the operands' strides irrelevant to the inner loops (and
 * absorbs transposes for free): the micro-kernel always reads Ap[k*MR + i]
 * and Bp[k*NR + j] sequentially.  It keeps the whole MR x NR tile of C in
 * registers for the full KC loop, vectorised along N, and applies alpha/beta
 * only when storing.  beta is used on the first KC slice, 1 afterwards.
 * Edge tiles (M % MR, N % NR) and C without a unit column stride are computed
 * into a small temporary tile and copied out with alpha/beta.  A C with unit
 * *row* stride (column-major) is handled by computing C^T = B^T A^T instead,
 * so the kernel's vector stores still hit contiguous memory; so is a C narrower than
 * half a micro-tile but at least NR tall (a linear layer with 10 outputs, a convolution's
 * weight gradient with C*kh*kw = 9), where the lanes would otherwise idle.  With at most
 * 3 row panels (small M), a row-major B is read in place ("direct B"): a packed panel
 * would be reused too few times to pay for its packing.  Transposed B is packed 16 k at
 * a time, so the panel rows being written stay in L1.
 *
 * Micro-kernels, picked once at run time (the library is built for baseline
 * x86-64, so the fast paths carry their own target attributes):
 *   AVX-512F  f32 12x32, f64 12x16  (24 zmm accumulators)
 *   AVX2+FMA  f32  6x16, f64  6x8   (12 ymm accumulators)
 *   portable  f32  4x8,  f64  4x4   (plain C, auto-vectorisable)
 * Blocking, tuned by measurement on AMD Zen 4 (32 KiB L1d, 1 MiB L2 per
 * core, 32 MiB shared L3); the results are flat within a few percent around
 * these values:
 *            KC    MC    NC     A block MCxKC   B panel KCxNC   B micro-panel
 *   f32     512    96  4096     192 KiB (L2)    8 MiB (L3)      64 KiB (L1/L2)
 *   f64     256    60  4096     120 KiB (L2)    8 MiB (L3)      32 KiB (L1/L2)
 * (MC is a multiple of both 12 and 6.)  Each k step of the kernel does 2*MR
 * FMAs per 2 + MR loads, so streaming the packed panels from L2 keeps up.
 * Tiny products (M*N*K <= 4096) skip packing and use a direct triple loop.
 * The packing buffer is cached between calls (see tn__gemm_buf_get).
 * With OpenMP (-fopenmp) the ic loop is split across threads, each packing
 * its own A block; the packed B panel is shared.
 * ========================================================================== */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__GEMM_X86 1
#else
#define TN__GEMM_X86 0
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__GNUC__) || defined(__clang__)
#define TN__GEMM_GNUC 1 /* __atomic builtins, __attribute__ */
#define TN__GEMM_MAYBE_UNUSED __attribute__((unused))
#else
#define TN__GEMM_GNUC 0
#define TN__GEMM_MAYBE_UNUSED
#endif

/* micro-kernel: C[0:MR, 0:NR] (row stride rsc, column stride 1)
 *   = alpha * (Ap panel @ Bp panel) + beta * C,  C not read when beta == 0.
 * Row k of the B panel starts at Bp + k*ldb: ldb = NR for a packed panel, B's own row
 * stride when B is read in place (see "direct B" below). */
typedef void (*tn__gemm_ukr_f32)(int64_t kc, const float *Ap, const float *Bp, int64_t ldb,
                                 float *C, int64_t rsc, float alpha, float beta);
typedef void (*tn__gemm_ukr_f64)(int64_t kc, const double *Ap, const double *Bp, int64_t ldb,
                                 double *C, int64_t rsc, double alpha, double beta);

enum { TN__GEMM_SCALAR = 0, TN__GEMM_AVX2 = 1, TN__GEMM_AVX512 = 2 };

/* Knobs for tests/benchmarks only: force a lower ISA (-1 = best available),
 * override the cache blocking (0 = default), the direct-loop cutoff (-1 =
 * default) and the OpenMP thread count (0 = omp default). */
typedef struct tn__gemm_tune_t {
    int isa;
    int64_t kc, mc, nc, naive_max;
    int threads;
} tn__gemm_tune_t;
static tn__gemm_tune_t tn__gemm_tune = { -1, 0, 0, 0, -1, 0 };

static int tn__gemm_detect_isa(void)
{
#if TN__GEMM_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return TN__GEMM_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return TN__GEMM_AVX2;
#endif
    return TN__GEMM_SCALAR;
}

static int tn__gemm_isa(void)
{
    static int cached = -1; /* every thread would compute the same value */
#if TN__GEMM_GNUC
    int isa = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (isa < 0) __atomic_store_n(&cached, isa = tn__gemm_detect_isa(), __ATOMIC_RELAXED);
#else
    int isa = cached;
    if (isa < 0) cached = isa = tn__gemm_detect_isa();
#endif
    if (tn__gemm_tune.isa >= 0 && tn__gemm_tune.isa < isa) isa = tn__gemm_tune.isa;
    return isa;
}

/* ---------------------------------------------------------------------------
 * Portable micro-kernels.  Fixed trip counts so compilers vectorise the j loop.
 * ------------------------------------------------------------------------- */
#define TN__GEMM_SC_MR 4
#define TN__GEMM_SC_NR32 8
#define TN__GEMM_SC_NR64 4

/* The portable micro-kernel, one definition for both precisions: an MR x NR tile of C
   accumulated over kc packed columns, then C = alpha * acc + beta * C. */
#define TN__GEMM_DEFINE_UKR_SCALAR(T, SFX, NR)                                                   \
    static void tn__gemm_ukr_scalar_##SFX(int64_t kc, const T *Ap, const T *Bp, int64_t ldb,   \
                                          T *C, int64_t rsc, T alpha, T beta)                 \
    {                                                                                          \
        T acc[TN__GEMM_SC_MR * NR];                                                            \
        int64_t k;                                                                             \
        int i, j;                                                                              \
        for (i = 0; i < TN__GEMM_SC_MR * NR; i++) acc[i] = 0;                                  \
        for (k = 0; k < kc; k++, Ap += TN__GEMM_SC_MR, Bp += ldb)                              \
            for (i = 0; i < TN__GEMM_SC_MR; i++)                                               \
                for (j = 0; j < NR; j++) acc[i * NR + j] += Ap[i] * Bp[j];                     \
        for (i = 0; i < TN__GEMM_SC_MR; i++)                                                   \
            for (j = 0; j < NR; j++) {                                                         \
                T *c = C + i * rsc + j;                                                        \
                *c = beta == 0 ? alpha * acc[i * NR + j] : alpha * acc[i * NR + j] + beta * *c; \
            }                                                                                  \
    }
TN__GEMM_DEFINE_UKR_SCALAR(float, f32, TN__GEMM_SC_NR32)
TN__GEMM_DEFINE_UKR_SCALAR(double, f64, TN__GEMM_SC_NR64)

#if TN__GEMM_X86
/* ---------------------------------------------------------------------------
 * SIMD micro-kernels: one template (TN__GEMM_SIMD_KERNEL) instantiated for
 * AVX-512 and AVX2 x f32/f64, parameterised by these per-instance macros:
 *   TN__GEMM_VT vector type, TN__GEMM_ET element type, TN__GEMM_V lanes,
 *   TN__GEMM_LD / TN__GEMM_ST unaligned load / store, TN__GEMM_SET1 broadcast,
 *   TN__GEMM_ZERO, TN__GEMM_MUL, TN__GEMM_FMA(a, b, c) = a*b + c.
 * Tile row r lives in two accumulators, c<r>a (columns 0..V-1) and c<r>b
 * (columns V..2V-1): named variables, not an array, and rows unrolled by
 * macros, so the tile stays in registers at any optimisation level.  One k
 * step = 2 vector loads of B, MR broadcasts of A, 2*MR independent FMAs
 * (24 for MR = 12: enough to cover FMA latency x throughput).
 * ------------------------------------------------------------------------- */
#define TN__GEMM_ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define TN__GEMM_ROWS8(X) TN__GEMM_ROWS6(X) X(6) X(7)
#define TN__GEMM_ROWS12(X) TN__GEMM_ROWS6(X) X(6) X(7) X(8) X(9) X(10) X(11)

#define TN__GEMM_ROW_ZERO(r) TN__GEMM_VT c##r##a = TN__GEMM_ZERO(), c##r##b = c##r##a;
/* touch both ends of the C row so it is in L1 by the time it is stored */
#define TN__GEMM_ROW_PREFETCH(r)                                                   \
    _mm_prefetch((const char *)(C + (r) * rsc), _MM_HINT_T0);                      \
    _mm_prefetch((const char *)(C + (r) * rsc + 2 * TN__GEMM_V - 1), _MM_HINT_T0);
#define TN__GEMM_ROW_FMA(r)                                                        \
    {                                                                              \
        TN__GEMM_VT a_ = TN__GEMM_SET1(Ap[r]);                                     \
        c##r##a = TN__GEMM_FMA(a_, b0, c##r##a);                                   \
        c##r##b = TN__GEMM_FMA(a_, b1, c##r##b);                                   \
    }
#define TN__GEMM_ROW_STORE(r)                                                      \
    {                                                                              \
        TN__GEMM_ET *c_ = C + (r) * rsc;                                           \
        if (beta == 0) { /* C must not be read */                                  \
            TN__GEMM_ST(c_, TN__GEMM_MUL(va, c##r##a));                            \
            TN__GEMM_ST(c_ + TN__GEMM_V, TN__GEMM_MUL(va, c##r##b));               \
        } else {                                                                   \
            TN__GEMM_VT o0_ = TN__GEMM_LD(c_), o1_ = TN__GEMM_LD(c_ + TN__GEMM_V); \
            TN__GEMM_ST(c_, TN__GEMM_FMA(va, c##r##a, TN__GEMM_MUL(vb, o0_)));     \
            TN__GEMM_ST(c_ + TN__GEMM_V, TN__GEMM_FMA(va, c##r##b, TN__GEMM_MUL(vb, o1_))); \
        }                                                                          \
    }

#define TN__GEMM_SIMD_KERNEL(name, isa_str, MR, ROWS)                              \
    __attribute__((target(isa_str)))                                               \
    static void name(int64_t kc, const TN__GEMM_ET *Ap, const TN__GEMM_ET *Bp,     \
                     int64_t ldb, TN__GEMM_ET *C, int64_t rsc, TN__GEMM_ET alpha,  \
                     TN__GEMM_ET beta)                                             \
    {                                                                              \
        ROWS(TN__GEMM_ROW_ZERO)                                                    \
        TN__GEMM_VT va, vb;                                                        \
        int64_t k;                                                                 \
        ROWS(TN__GEMM_ROW_PREFETCH)                                                \
        for (k = 0; k < kc; k++) {                                                 \
            TN__GEMM_VT b0 = TN__GEMM_LD(Bp), b1 = TN__GEMM_LD(Bp + TN__GEMM_V);   \
            /* B panel a few steps ahead (the hardware prefetcher does the rest) */ \
            _mm_prefetch((const char *)(Bp + 16 * ldb), _MM_HINT_T0);              \
            ROWS(TN__GEMM_ROW_FMA)                                                 \
            Ap += MR;                                                              \
            Bp += ldb;                                                             \
        }                                                                          \
        va = TN__GEMM_SET1(alpha);                                                 \
        vb = TN__GEMM_SET1(beta);                                                  \
        ROWS(TN__GEMM_ROW_STORE)                                                   \
    }

/* AVX-512F, f32: 12 x 32 */
#define TN__GEMM_VT __m512
#define TN__GEMM_ET float
#define TN__GEMM_V 16
#define TN__GEMM_LD _mm512_loadu_ps
#define TN__GEMM_ST _mm512_storeu_ps
#define TN__GEMM_SET1 _mm512_set1_ps
#define TN__GEMM_ZERO _mm512_setzero_ps
#define TN__GEMM_MUL _mm512_mul_ps
#define TN__GEMM_FMA _mm512_fmadd_ps
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512_f32, "avx512f", 12, TN__GEMM_ROWS12)
/* 8 x 32 for M a multiple of 8 but not of 12 (64 channels: 8 panels, not 6 with 8 wasted rows) */
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512x8_f32, "avx512f", 8, TN__GEMM_ROWS8)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA
/* AVX-512F, f64: 12 x 16 */
#define TN__GEMM_VT __m512d
#define TN__GEMM_ET double
#define TN__GEMM_V 8
#define TN__GEMM_LD _mm512_loadu_pd
#define TN__GEMM_ST _mm512_storeu_pd
#define TN__GEMM_SET1 _mm512_set1_pd
#define TN__GEMM_ZERO _mm512_setzero_pd
#define TN__GEMM_MUL _mm512_mul_pd
#define TN__GEMM_FMA _mm512_fmadd_pd
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx512_f64, "avx512f", 12, TN__GEMM_ROWS12)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA
/* AVX2 + FMA, f32: 6 x 16 */
#define TN__GEMM_VT __m256
#define TN__GEMM_ET float
#define TN__GEMM_V 8
#define TN__GEMM_LD _mm256_loadu_ps
#define TN__GEMM_ST _mm256_storeu_ps
#define TN__GEMM_SET1 _mm256_set1_ps
#define TN__GEMM_ZERO _mm256_setzero_ps
#define TN__GEMM_MUL _mm256_mul_ps
#define TN__GEMM_FMA _mm256_fmadd_ps
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2_f32, "avx2,fma", 6, TN__GEMM_ROWS6)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA
/* AVX2 + FMA, f64: 6 x 8 */
#define TN__GEMM_VT __m256d
#define TN__GEMM_ET double
#define TN__GEMM_V 4
#define TN__GEMM_LD _mm256_loadu_pd
#define TN__GEMM_ST _mm256_storeu_pd
#define TN__GEMM_SET1 _mm256_set1_pd
#define TN__GEMM_ZERO _mm256_setzero_pd
#define TN__GEMM_MUL _mm256_mul_pd
#define TN__GEMM_FMA _mm256_fmadd_pd
TN__GEMM_SIMD_KERNEL(tn__gemm_ukr_avx2_f64, "avx2,fma", 6, TN__GEMM_ROWS6)
#undef TN__GEMM_VT
#undef TN__GEMM_ET
#undef TN__GEMM_V
#undef TN__GEMM_LD
#undef TN__GEMM_ST
#undef TN__GEMM_SET1
#undef TN__GEMM_ZERO
#undef TN__GEMM_MUL
#undef TN__GEMM_FMA

#undef TN__GEMM_SIMD_KERNEL
#undef TN__GEMM_ROW_ZERO
#undef TN__GEMM_ROW_PREFETCH
#undef TN__GEMM_ROW_FMA
#undef TN__GEMM_ROW_STORE
#undef TN__GEMM_ROWS6
#undef TN__GEMM_ROWS8
#undef TN__GEMM_ROWS12
#endif /* TN__GEMM_X86 */

/* ---------------------------------------------------------------------------
 * Kernel table.  kc/mc/nc: cache blocking (mc a multiple of mr, nc of nr).
 * ------------------------------------------------------------------------- */
typedef struct tn__gemm_kern_f32 {
    int mr, nr;
    int64_t kc, mc, nc;
    tn__gemm_ukr_f32 ukr;
} tn__gemm_kern_f32;
typedef struct tn__gemm_kern_f64 {
    int mr, nr;
    int64_t kc, mc, nc;
    tn__gemm_ukr_f64 ukr;
} tn__gemm_kern_f64;

#define TN__GEMM_MAX_TILE 512 /* >= mr*nr of every kernel (12*32 = 384) */

static tn__gemm_kern_f32 tn__gemm_kern_select_f32(void)
{
    tn__gemm_kern_f32 k = { TN__GEMM_SC_MR, TN__GEMM_SC_NR32, 256, 128, 4096, tn__gemm_ukr_scalar_f32 };
#if TN__GEMM_X86
    int isa = tn__gemm_isa();
    if (isa == TN__GEMM_AVX512) {
        tn__gemm_kern_f32 k5 = { 12, 32, 512, 96, 4096, tn__gemm_ukr_avx512_f32 };
        k = k5;
    } else if (isa == TN__GEMM_AVX2) {
        tn__gemm_kern_f32 k2 = { 6, 16, 512, 96, 4096, tn__gemm_ukr_avx2_f32 };
        k = k2;
    }
#endif
    return k;
}

static tn__gemm_kern_f64 tn__gemm_kern_select_f64(void)
{
    tn__gemm_kern_f64 k = { TN__GEMM_SC_MR, TN__GEMM_SC_NR64, 256, 64, 2048, tn__gemm_ukr_scalar_f64 };
#if TN__GEMM_X86
    int isa = tn__gemm_isa();
    if (isa == TN__GEMM_AVX512) {
        tn__gemm_kern_f64 k5 = { 12, 16, 256, 60, 4096, tn__gemm_ukr_avx512_f64 };
        k = k5;
    } else if (isa == TN__GEMM_AVX2) {
        tn__gemm_kern_f64 k2 = { 6, 8, 256, 60, 4096, tn__gemm_ukr_avx2_f64 };
        k = k2;
    }
#endif
    return k;
}

/* round x up to a multiple of m */
static int64_t tn__gemm_roundup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The kernel for a product of M rows: the 8-row AVX-512 f32 kernel where its panels waste
   fewer rows than the 12-row one's (M = 64: 64 rows computed instead of 72). */
static tn__gemm_kern_f32 tn__gemm_kern_for_f32(int64_t M)
{
    tn__gemm_kern_f32 k = tn__gemm_kern_select_f32();
#if TN__GEMM_X86
    if (k.mr == 12 && k.ukr == tn__gemm_ukr_avx512_f32 && tn__gemm_roundup(M, 8) < tn__gemm_roundup(M, 12)) {
        k.mr = 8;
        k.ukr = tn__gemm_ukr_avx512x8_f32;
    }
#endif
    return k;
}
static tn__gemm_kern_f64 tn__gemm_kern_for_f64(int64_t M) { (void)M; return tn__gemm_kern_select_f64(); }


/* ---------------------------------------------------------------------------
 * Packing buffer.  Allocating it per call makes glibc map/unmap and page-fault
 * fresh memory every time for mid sizes (measured: -15% single-threaded at
 * n = 200..400, -40% with 2 threads at n = 256), so one buffer is kept and
 * reused, grow-only (at most ~8.5 MiB + 200 KiB per extra OpenMP thread with
 * the blocking below).  It is claimed with an atomic flag; a caller that finds
 * it in use (another thread multiplying concurrently) allocates its own for
 * the call.  Without GCC/Clang atomics every call allocates.
 * tn__gemm_free_cache() hands the cached buffer back to TN_FREE.
 * ------------------------------------------------------------------------- */
static void *tn__gemm_cache_ptr = NULL;
static size_t tn__gemm_cache_cap = 0;
static int tn__gemm_cache_busy = 0;

static void *tn__gemm_buf_get(size_t need, int *cached)
{
#if TN__GEMM_GNUC
    if (__atomic_exchange_n(&tn__gemm_cache_busy, 1, __ATOMIC_ACQUIRE) == 0) {
        if (tn__gemm_cache_cap < need) {
            if (tn__gemm_cache_ptr) TN_FREE(tn__gemm_cache_ptr); /* free first: lower peak */
            tn__gemm_cache_ptr = TN_MALLOC(need);
            tn__gemm_cache_cap = tn__gemm_cache_ptr ? need : 0;
            if (!tn__gemm_cache_ptr) {
                __atomic_store_n(&tn__gemm_cache_busy, 0, __ATOMIC_RELEASE);
                return NULL;
            }
        }
        *cached = 1;
        return tn__gemm_cache_ptr;
    }
#else
    (void)tn__gemm_cache_busy;
#endif
    *cached = 0;
    return TN_MALLOC(need);
}

static void tn__gemm_buf_put(void *p, int cached)
{
#if TN__GEMM_GNUC
    if (cached) {
        __atomic_store_n(&tn__gemm_cache_busy, 0, __ATOMIC_RELEASE);
        return;
    }
#else
    (void)cached;
#endif
    TN_FREE(p);
}

/* Free the cached packing buffer (no-op while another thread is using it). */
TN__GEMM_MAYBE_UNUSED static void tn__gemm_free_cache(void)
{
#if TN__GEMM_GNUC
    if (__atomic_exchange_n(&tn__gemm_cache_busy, 1, __ATOMIC_ACQUIRE) != 0) return;
#endif
    if (tn__gemm_cache_ptr) TN_FREE(tn__gemm_cache_ptr);
    tn__gemm_cache_ptr = NULL;
    tn__gemm_cache_cap = 0;
#if TN__GEMM_GNUC
    __atomic_store_n(&tn__gemm_cache_busy, 0, __ATOMIC_RELEASE);
#endif
}

/* The driver's loop over the M blocks (its locals by name): pack the A block of
 * thread TID, multiply it by the current B panel. */
#define TN__GEMM_IC_LOOP(T, SFX, TID)                                                     \
    for (ic = 0; ic < M; ic += mstep) {                                                   \
        int64_t mcb = M - ic < mstep ? M - ic : mstep;                                    \
        T *Apt = (T *)((char *)Ap + (size_t)(TID) * szA);                                 \
        tn__gemm_packA_##SFX(mcb, kcb, A + ic * rsa + pc * csa, rsa, csa, kn.mr, Apt);    \
        tn__gemm_macro_##SFX(&kn, mcb, ncb, kcb, alpha, Apt, Bp, Bd, rsb, beta_p,         \
                             C + ic * rsc + jc * csc, rsc, csc);                          \
    }

/* The transposing copy of packing: P[k*ld + i] = a[i*rsa + k] for i < rows, k < kc (rows of
 * A along K, or columns of a transposed B). In 4x4 (float) or 2x2 (double) SSE transposes,
 * in blocks of 64 k so the panel rows being written stay in L1; 3x faster than the scalar
 * loop on the training steps' shapes. */
#if TN__GEMM_X86
/* Rows [0, rows rounded down to 8) of tn__gemm_packT_f32 in 8x8 AVX transposes (half the
   loads, stores and shuffles per element of the 4x4 SSE ones); returns the rows done. */
__attribute__((target("avx"))) static int64_t tn__gemm_packT8_f32(int64_t rows, int64_t kc, const float *a, int64_t rsa, int64_t ld, float *P)
{
    int64_t i = 0, k, k0;
    for (k0 = 0; k0 < kc; k0 += 64) {
        const int64_t k1 = kc - k0 < 64 ? kc : k0 + 64, k8 = k0 + (k1 - k0) / 8 * 8;
        for (i = 0; i + 8 <= rows; i += 8) {
            const float *r = a + i * rsa;
            for (k = k0; k < k8; k += 8) {
                __m256 t[8], s[8];
                for (int j = 0; j < 8; j += 2) {
                    const __m256 x0 = _mm256_loadu_ps(r + j * rsa + k), x1 = _mm256_loadu_ps(r + (j + 1) * rsa + k);
                    t[j] = _mm256_unpacklo_ps(x0, x1); t[j + 1] = _mm256_unpackhi_ps(x0, x1);
                }
                for (int j = 0; j < 8; j += 4) {
                    s[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44); s[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
                    s[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44); s[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
                }
                for (int j = 0; j < 4; j++) {   /* column k + j: rows 0-3 from s[j], 4-7 from s[4 + j] */
                    _mm256_storeu_ps(P + (k + j) * ld + i, _mm256_permute2f128_ps(s[j], s[4 + j], 0x20));
                    _mm256_storeu_ps(P + (k + 4 + j) * ld + i, _mm256_permute2f128_ps(s[j], s[4 + j], 0x31));
                }
            }
            for (; k < k1; k++)
                for (int j = 0; j < 8; j++) P[k * ld + i + j] = r[j * rsa + k];
        }
    }
    return i;
}
#endif
static void tn__gemm_packT_f32(int64_t rows, int64_t kc, const float *a, int64_t rsa, int64_t ld, float *P)
{
    int64_t i = 0, i0 = 0, k, k0;
#if TN__GEMM_X86
    if (rows >= 8 && tn__gemm_isa() != TN__GEMM_SCALAR) i0 = tn__gemm_packT8_f32(rows, kc, a, rsa, ld, P);
    i = i0;
    for (k0 = 0; k0 < kc; k0 += 64) {
        const int64_t k1 = kc - k0 < 64 ? kc : k0 + 64, k4 = k0 + (k1 - k0) / 4 * 4;
        for (i = i0; i + 4 <= rows; i += 4) {
            const float *a0 = a + i * rsa, *a1 = a0 + rsa, *a2 = a1 + rsa, *a3 = a2 + rsa;
            for (k = k0; k < k4; k += 4) {
                __m128 r0 = _mm_loadu_ps(a0 + k), r1 = _mm_loadu_ps(a1 + k), r2 = _mm_loadu_ps(a2 + k), r3 = _mm_loadu_ps(a3 + k);
                _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
                _mm_storeu_ps(P + k * ld + i, r0); _mm_storeu_ps(P + (k + 1) * ld + i, r1);
                _mm_storeu_ps(P + (k + 2) * ld + i, r2); _mm_storeu_ps(P + (k + 3) * ld + i, r3);
            }
            for (; k < k1; k++) { P[k * ld + i] = a0[k]; P[k * ld + i + 1] = a1[k]; P[k * ld + i + 2] = a2[k]; P[k * ld + i + 3] = a3[k]; }
        }
    }
#endif
    for (; i < rows; i++)
        for (k = 0; k < kc; k++) P[k * ld + i] = a[i * rsa + k];
}
static void tn__gemm_packT_f64(int64_t rows, int64_t kc, const double *a, int64_t rsa, int64_t ld, double *P)
{
    int64_t i = 0, k, k0;
#if TN__GEMM_X86
    for (k0 = 0; k0 < kc; k0 += 64) {
        const int64_t k1 = kc - k0 < 64 ? kc : k0 + 64, k2 = k0 + (k1 - k0) / 2 * 2;
        for (i = 0; i + 2 <= rows; i += 2) {
            const double *a0 = a + i * rsa, *a1 = a0 + rsa;
            for (k = k0; k < k2; k += 2) {
                const __m128d r0 = _mm_loadu_pd(a0 + k), r1 = _mm_loadu_pd(a1 + k);
                _mm_storeu_pd(P + k * ld + i, _mm_unpacklo_pd(r0, r1));
                _mm_storeu_pd(P + (k + 1) * ld + i, _mm_unpackhi_pd(r0, r1));
            }
            for (; k < k1; k++) { P[k * ld + i] = a0[k]; P[k * ld + i + 1] = a1[k]; }
        }
    }
#endif
    for (; i < rows; i++)
        for (k = 0; k < kc; k++) P[k * ld + i] = a[i * rsa + k];
}

/* ---------------------------------------------------------------------------
 * Type-generic part (packing, direct loop, driver), instantiated for float
 * and double.
 * ------------------------------------------------------------------------- */
#define TN__GEMM_DEFINE(T, SFX)                                                           \
                                                                                          \
/* Pack A[0:mc, 0:kc] into mr-row micro-panels: Ap[p][k*mr + i], rows >= mc zeroed. */    \
static void tn__gemm_packA_##SFX(int64_t mc, int64_t kc, const T *A, int64_t rsa,         \
                                 int64_t csa, int64_t mr, T *Ap)                          \
{                                                                                         \
    int64_t i0, i, k;                                                                     \
    for (i0 = 0; i0 < mc; i0 += mr, Ap += mr * kc) {                                      \
        int64_t mb = mc - i0 < mr ? mc - i0 : mr;                                         \
        const T *a = A + i0 * rsa;                                                        \
        if (csa == 1) { /* rows contiguous: a transposing copy */                         \
            tn__gemm_packT_##SFX(mb, kc, a, rsa, mr, Ap);                                 \
        } else { /* columns contiguous (transposed A) or general strides */               \
            for (k = 0; k < kc; k++)                                                      \
                for (i = 0; i < mb; i++) Ap[k * mr + i] = a[i * rsa + k * csa];           \
        }                                                                                 \
        if (mb < mr)                                                                      \
            for (k = 0; k < kc; k++)                                                      \
                for (i = mb; i < mr; i++) Ap[k * mr + i] = (T)0;                          \
    }                                                                                     \
}                                                                                         \
                                                                                          \
/* Pack B[0:kc, 0:nc] into nr-column micro-panels: Bp[p][k*nr + j], cols >= nc zeroed. */ \
static void tn__gemm_packB_##SFX(int64_t kc, int64_t nc, const T *B, int64_t rsb,         \
                                 int64_t csb, int64_t nr, T *Bp)                          \
{                                                                                         \
    int64_t j0, j, k;                                                                     \
    for (j0 = 0; j0 < nc; j0 += nr, Bp += nr * kc) {                                      \
        int64_t nb = nc - j0 < nr ? nc - j0 : nr;                                         \
        const T *b = B + j0 * csb;                                                        \
        if (csb == 1) { /* rows contiguous: copy nb-long runs */                          \
            for (k = 0; k < kc; k++) {                                                    \
                memcpy(Bp + k * nr, b + k * rsb, (size_t)nb * sizeof(T));                 \
                for (j = nb; j < nr; j++) Bp[k * nr + j] = (T)0;                          \
            }                                                                             \
        } else if (rsb == 1) { /* columns contiguous (transposed B): a transposing copy */ \
            tn__gemm_packT_##SFX(nb, kc, b, csb, nr, Bp);                                 \
            for (k = 0; k < kc; k++)                                                      \
                for (j = nb; j < nr; j++) Bp[k * nr + j] = (T)0;                          \
        } else {                                                                          \
            for (k = 0; k < kc; k++) {                                                    \
                for (j = 0; j < nb; j++) Bp[k * nr + j] = b[k * rsb + j * csb];           \
                for (j = nb; j < nr; j++) Bp[k * nr + j] = (T)0;                          \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
}                                                                                         \
                                                                                          \
/* C = beta*C (the whole result when K == 0 or alpha == 0). */                            \
static void tn__gemm_scale_##SFX(int64_t M, int64_t N, T beta, T *C, int64_t rsc,         \
                                 int64_t csc)                                             \
{                                                                                         \
    int64_t i, j;                                                                         \
    if (beta == (T)1) return;                                                             \
    for (i = 0; i < M; i++)                                                               \
        for (j = 0; j < N; j++) {                                                         \
            T *c = C + i * rsc + j * csc;                                                 \
            *c = beta == (T)0 ? (T)0 : beta * *c;                                         \
        }                                                                                 \
}                                                                                         \
                                                                                          \
/* Direct triple loop for tiny products, where packing would cost more than it saves. */ \
static void tn__gemm_naive_##SFX(int64_t M, int64_t N, int64_t K, T alpha, const T *A,    \
                                 int64_t rsa, int64_t csa, const T *B, int64_t rsb,       \
                                 int64_t csb, T beta, T *C, int64_t rsc, int64_t csc)     \
{                                                                                         \
    int64_t i, j, k;                                                                      \
    for (i = 0; i < M; i++)                                                               \
        for (j = 0; j < N; j++) {                                                         \
            T s = (T)0, *c = C + i * rsc + j * csc;                                       \
            for (k = 0; k < K; k++) s += A[i * rsa + k * csa] * B[k * rsb + j * csb];     \
            *c = beta == (T)0 ? alpha * s : alpha * s + beta * *c;                        \
        }                                                                                 \
}                                                                                         \
                                                                                          \
/* Multiply the packed mc x kc A block by the packed kc x nc B panel into C; with Bd,   \
   full-width panels are read in place from Bd (row stride ldbd), only a ragged last    \
   panel comes packed. */                                                                 \
static void tn__gemm_macro_##SFX(const tn__gemm_kern_##SFX *kn, int64_t mc, int64_t nc,   \
                                 int64_t kc, T alpha, const T *Ap, const T *Bp,           \
                                 const T *Bd, int64_t ldbd, T beta,                       \
                                 T *C, int64_t rsc, int64_t csc)                          \
{                                                                                         \
    T tile[TN__GEMM_MAX_TILE];                                                            \
    int64_t ir, jr, i, j, mr = kn->mr, nr = kn->nr;                                       \
    for (jr = 0; jr < nc; jr += nr) {                                                     \
        int64_t nb = nc - jr < nr ? nc - jr : nr;                                         \
        const T *b = Bd && nb == nr ? Bd + jr : Bp + jr * kc;                             \
        int64_t ldb = Bd && nb == nr ? ldbd : nr;                                         \
        for (ir = 0; ir < mc; ir += mr) {                                                 \
            int64_t mb = mc - ir < mr ? mc - ir : mr;                                     \
            T *c = C + ir * rsc + jr * csc;                                               \
            if (mb == mr && nb == nr && csc == 1) {                                       \
                kn->ukr(kc, Ap + ir * kc, b, ldb, c, rsc, alpha, beta);                   \
            } else { /* edge tile or strided C: via a temporary tile */                   \
                kn->ukr(kc, Ap + ir * kc, b, ldb, tile, nr, (T)1, (T)0);                  \
                for (i = 0; i < mb; i++)                                                  \
                    for (j = 0; j < nb; j++) {                                            \
                        T *cij = c + i * rsc + j * csc;                                   \
                        *cij = beta == (T)0 ? alpha * tile[i * nr + j]                    \
                                            : alpha * tile[i * nr + j] + beta * *cij;     \
                    }                                                                     \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
}                                                                                         \
                                                                                          \
static int tn__gemm_##SFX(int64_t M, int64_t N, int64_t K, T alpha,                       \
                          const T *A, int64_t rsa, int64_t csa,                           \
                          const T *B, int64_t rsb, int64_t csb,                           \
                          T beta, T *C, int64_t rsc, int64_t csc)                         \
{                                                                                         \
    tn__gemm_kern_##SFX kn;                                                               \
    int64_t kc, mc, nc, mstep, naive_max, jc, pc, nthr = 1;                               \
    int direct;                                                                           \
    void *buf;                                                                            \
    int cached;                                                                           \
    T *Ap, *Bp;                                                                           \
    size_t szA, szB;                                                                      \
    if (M <= 0 || N <= 0) return 0;                                                       \
    if (K <= 0 || alpha == (T)0) {                                                        \
        tn__gemm_scale_##SFX(M, N, beta, C, rsc, csc);                                    \
        return 0;                                                                         \
    }                                                                                     \
    kn = tn__gemm_kern_select_##SFX();                                                    \
    /* column-major C, or a C narrower than half a micro-tile but tall (a linear layer    \
       with 10 outputs): compute C^T = B^T A^T instead, so the vector lanes run along    \
       the long side */                                                                   \
    if ((csc != 1 && rsc == 1) || (N < kn.nr / 2 && M >= kn.nr && csc == 1)) {           \
        const T *tp = A;                                                                  \
        int64_t t = M, ra = rsa, ca = csa;                                                \
        M = N; N = t;                                                                     \
        A = B; B = tp;                                                                    \
        rsa = csb; csa = rsb; /* A' = B^T: A'[n,k] = B[k,n] */                            \
        rsb = ca; csb = ra;   /* B' = A^T: B'[k,m] = A[m,k] */                            \
        t = rsc; rsc = csc; csc = t;                                                      \
    }                                                                                     \
    kn = tn__gemm_kern_for_##SFX(M); /* by the final M (after the swap) */                \
    naive_max = tn__gemm_tune.naive_max >= 0 ? tn__gemm_tune.naive_max : 4096;            \
    if ((double)M * (double)N * (double)K <= (double)naive_max) {                         \
        tn__gemm_naive_##SFX(M, N, K, alpha, A, rsa, csa, B, rsb, csb, beta, C, rsc, csc);\
        return 0;                                                                         \
    }                                                                                     \
    if (tn__gemm_tune.kc > 0) kn.kc = tn__gemm_tune.kc;                                   \
    if (tn__gemm_tune.mc > 0) kn.mc = tn__gemm_roundup(tn__gemm_tune.mc, kn.mr);          \
    if (tn__gemm_tune.nc > 0) kn.nc = tn__gemm_roundup(tn__gemm_tune.nc, kn.nr);          \
    kc = K < kn.kc ? K : kn.kc;                                                           \
    nc = tn__gemm_roundup(N < kn.nc ? N : kn.nc, kn.nr);                                  \
    TN__GEMM_NTHREADS(nthr, M, N, K, kn.mr)                                               \
    mstep = kn.mc;                                                                        \
    if (nthr > 1) { /* equal shares: #M blocks a multiple of nthr, whole MR panels each */\
        int64_t nblk = tn__gemm_roundup((M + kn.mc - 1) / kn.mc, nthr);                   \
        mstep = ((M + kn.mr - 1) / kn.mr + nblk - 1) / nblk * kn.mr;                      \
    }                                                                                     \
    mc = tn__gemm_roundup(M < mstep ? M : mstep, kn.mr);                                  \
    /* one A block per thread, one shared B panel; +64 for manual alignment */            \
    szA = (size_t)tn__gemm_roundup(mc * kc * (int64_t)sizeof(T), 64);                     \
    szB = (size_t)tn__gemm_roundup(kc * nc * (int64_t)sizeof(T), 64);                     \
    buf = tn__gemm_buf_get(szB + (size_t)nthr * szA + 64, &cached);                       \
    if (!buf) return -1;                                                                  \
    Bp = (T *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);                                   \
    Ap = (T *)((char *)Bp + szB);                                                         \
    /* direct B: with few row panels a packed B panel is reused too little to pay for    \
       its packing, so row-major B is read in place (measured: M = 10, N = K = 128 runs  \
       1.9x faster; from 4 panels up packing wins) */                                    \
    direct = csb == 1 && (M + kn.mr - 1) / kn.mr <= 3 && N >= kn.nr;                      \
    for (jc = 0; jc < N; jc += kn.nc) {                                                   \
        int64_t ncb = N - jc < kn.nc ? N - jc : kn.nc;                                    \
        for (pc = 0; pc < K; pc += kn.kc) {                                               \
            int64_t kcb = K - pc < kn.kc ? K - pc : kn.kc, ic, full = ncb / kn.nr * kn.nr; \
            T beta_p = pc == 0 ? beta : (T)1; /* later K slices accumulate */             \
            const T *Bd = direct ? B + pc * rsb + jc : NULL;                              \
            if (!direct) tn__gemm_packB_##SFX(kcb, ncb, B + pc * rsb + jc * csb, rsb, csb, kn.nr, Bp); \
            else if (full < ncb) /* only the ragged last panel, where the macro looks */ \
                tn__gemm_packB_##SFX(kcb, ncb - full, B + pc * rsb + jc + full, rsb, 1, kn.nr, Bp + full * kcb); \
            if (nthr > 1) { /* a parallel region costs even when it runs on one thread */  \
                TN__GEMM_OMP_FOR                                                          \
                TN__GEMM_IC_LOOP(T, SFX, TN__GEMM_TID)                                    \
            } else {                                                                      \
                TN__GEMM_IC_LOOP(T, SFX, 0)                                               \
            }                                                                             \
        }                                                                                 \
    }                                                                                     \
    tn__gemm_buf_put(buf, cached);                                                        \
    return 0;                                                                             \
}

/* OpenMP: split the ic loop (M blocks) when there is enough work; every thread
 * packs into its own A block.  Without OpenMP these expand to nothing. */
#ifdef _OPENMP
#define TN__GEMM_NTHREADS(nthr, M, N, K, mr)                                              \
    {                                                                                     \
        int64_t npanels_ = ((M) + (mr) - 1) / (mr);                                       \
        nthr = tn__gemm_tune.threads > 0 ? tn__gemm_tune.threads : omp_get_max_threads(); \
        if (omp_in_parallel() || (double)(M) * (double)(N) * (double)(K) < 4e6) nthr = 1; \
        if (nthr > npanels_) nthr = npanels_;                                             \
        if (nthr < 1) nthr = 1;                                                           \
    }
/* uses the driver's local nthr */
#define TN__GEMM_OMP_FOR _Pragma("omp parallel for schedule(static) num_threads((int)nthr) if(nthr > 1)")
#define TN__GEMM_TID omp_get_thread_num()
#else
#define TN__GEMM_NTHREADS(nthr, M, N, K, mr)
#define TN__GEMM_OMP_FOR
#define TN__GEMM_TID 0
#endif

TN__GEMM_DEFINE(float, f32)
TN__GEMM_DEFINE(double, f64)

#undef TN__GEMM_DEFINE
#undef TN__GEMM_IC_LOOP
#undef TN__GEMM_NTHREADS
#undef TN__GEMM_OMP_FOR
#undef TN__GEMM_TID
#undef TN__GEMM_MAX_TILE
#undef TN__GEMM_SC_MR
#undef TN__GEMM_SC_NR32
#undef TN__GEMM_SC_NR64
#undef TN__GEMM_GNUC
#undef TN__GEMM_MAYBE_UNUSED
#undef TN__GEMM_X86

#ifdef TENSOR_CBLAS
/* A strided matrix as BLAS sees it: row-major (trans = false) or column-major. */
static bool tn__blas_layout(int64_t rs, int64_t cs, int64_t rows, int64_t cols, bool *trans, int64_t *ld) {
    if (cs == 1 && rs >= TN__MAX(1, cols)) { *trans = false; *ld = rs; return true; }
    if (rs == 1 && cs >= TN__MAX(1, rows)) { *trans = true; *ld = cs; return true; }
    return false;
}
#endif

#define TN__DEFINE_NAIVE_MM(T, S, U) \
    static void tn__mm_naive_##S(int64_t M, int64_t N, int64_t K, const T *A, int64_t rsa, int64_t csa, \
                                 const T *B, int64_t rsb, int64_t csb, T *C, int64_t rsc, int64_t csc, double alpha, double beta) { \
        for (int64_t i = 0; i < M; i++) \
            for (int64_t j = 0; j < N; j++) { \
                U acc = 0; \
                for (int64_t k = 0; k < K; k++) acc += (U)A[i * rsa + k * csa] * (U)B[k * rsb + j * csb]; \
                T *c = &C[i * rsc + j * csc]; \
                *c = (T)((U)(int64_t)alpha * acc + (beta == 0 ? (U)0 : (U)(int64_t)beta * (U)*c)); \
            } }
TN__DEFINE_NAIVE_MM(int32_t, i32, uint32_t)
TN__DEFINE_NAIVE_MM(int64_t, i64, uint64_t)
TN__DEFINE_NAIVE_MM(uint8_t, u8, uint8_t)

static int tn__cpu_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double alpha, double beta) {
    int64_t B = c->shape[0], M = c->shape[1], N = c->shape[2], K = a->shape[2];
    size_t es = tn_dtype_size(c->dtype);
    char *pa = (char *)tn_data_ptr(a), *pb = (char *)tn_data_ptr(b), *pc = (char *)tn_data_ptr(c);
    for (int64_t i = 0; i < B; i++) {
        char *A = pa + (size_t)(i * a->strides[0]) * es, *Bm = pb + (size_t)(i * b->strides[0]) * es, *C = pc + (size_t)(i * c->strides[0]) * es;
        int rc = 0;
        switch (c->dtype) {
        case TN_F32:
#ifdef TENSOR_CBLAS
        {
            bool ta, tb, tc; int64_t lda, ldb, ldc;
            if (M && N && K && tn__blas_layout(a->strides[1], a->strides[2], M, K, &ta, &lda) && tn__blas_layout(b->strides[1], b->strides[2], K, N, &tb, &ldb) &&
                tn__blas_layout(c->strides[1], c->strides[2], M, N, &tc, &ldc) && !tc) {
                cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                            (float)alpha, (const float *)A, (int)lda, (const float *)Bm, (int)ldb, (float)beta, (float *)C, (int)ldc);
                break;
            }
        }
#endif
            rc = tn__gemm_f32(M, N, K, (float)alpha, (const float *)A, a->strides[1], a->strides[2], (const float *)Bm, b->strides[1], b->strides[2],
                              (float)beta, (float *)C, c->strides[1], c->strides[2]);
            break;
        case TN_F64:
#ifdef TENSOR_CBLAS
        {
            bool ta, tb, tc; int64_t lda, ldb, ldc;
            if (M && N && K && tn__blas_layout(a->strides[1], a->strides[2], M, K, &ta, &lda) && tn__blas_layout(b->strides[1], b->strides[2], K, N, &tb, &ldb) &&
                tn__blas_layout(c->strides[1], c->strides[2], M, N, &tc, &ldc) && !tc) {
                cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                            alpha, (const double *)A, (int)lda, (const double *)Bm, (int)ldb, beta, (double *)C, (int)ldc);
                break;
            }
        }
#endif
            rc = tn__gemm_f64(M, N, K, alpha, (const double *)A, a->strides[1], a->strides[2], (const double *)Bm, b->strides[1], b->strides[2],
                              beta, (double *)C, c->strides[1], c->strides[2]);
            break;
        case TN_I32: tn__mm_naive_i32(M, N, K, (const int32_t *)A, a->strides[1], a->strides[2], (const int32_t *)Bm, b->strides[1], b->strides[2], (int32_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_I64: tn__mm_naive_i64(M, N, K, (const int64_t *)A, a->strides[1], a->strides[2], (const int64_t *)Bm, b->strides[1], b->strides[2], (int64_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        case TN_U8: tn__mm_naive_u8(M, N, K, (const uint8_t *)A, a->strides[1], a->strides[2], (const uint8_t *)Bm, b->strides[1], b->strides[2], (uint8_t *)C, c->strides[1], c->strides[2], alpha, beta); break;
        default: return TN__FAIL_INT("matmul: not implemented for dtype %s", tn_dtype_name(c->dtype));
        }
        if (rc) return TN__FAIL_INT("matmul: out of memory for the packing buffers");
    }
    return 0;
}

/* A 2-d (or batched 3-d) operand as a transient 3-d view. */
static tn_tensor tn__as3d(tn_tensor *t) {
    tn_tensor v = *t;
    if (t->ndim == 2) {
        v.ndim = 3;
        v.shape[0] = 1; v.shape[1] = t->shape[0]; v.shape[2] = t->shape[1];
        v.strides[0] = 0; v.strides[1] = t->strides[0]; v.strides[2] = t->strides[1];
    }
    return v;
}

/* c = alpha * a @ b + beta * (input broadcast), a/b 2-d or 3-d of one dtype. Untracked. */
static tn_tensor *tn__gemm_op(const char *fn, tn_tensor *a, tn_tensor *b, tn_tensor *input, double beta, double alpha) {
    if (tn__check_cpu_dtype(fn, a) || tn__check_same_device(fn, a, b)) return NULL;
    if (a->dtype != b->dtype)
        return (tn_tensor *)tn__error("%s: expected both operands to have the same dtype, but got %s and %s", fn, tn_dtype_name(a->dtype), tn_dtype_name(b->dtype));
    if (a->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: not implemented for bool tensors", fn);
    bool batched = a->ndim == 3;
    int64_t k1 = a->shape[a->ndim - 1], k2 = b->shape[b->ndim - 2];
    if (k1 != k2 || (batched && a->shape[0] != b->shape[0]))
        return (tn_tensor *)tn__error("%s: shapes %s and %s cannot be multiplied (%lld != %lld%s)", fn, TN__SHAPE(a), TN__SHAPE(b),
                                      (long long)(k1 != k2 ? k1 : a->shape[0]), (long long)(k1 != k2 ? k2 : b->shape[0]), k1 != k2 ? "" : " in the batch dim");
    int64_t shape[3];
    int nd = 0;
    if (batched) shape[nd++] = a->shape[0];
    shape[nd++] = a->shape[a->ndim - 2];
    shape[nd++] = b->shape[b->ndim - 1];
    tn_tensor *out = tn__new(a->dtype, a->device, shape, nd);
    if (!out) return NULL;
    if (input && beta != 0) {
        if (tn__copy_into(fn, out, input)) { tn_release(out); return NULL; }
    } else beta = 0;
    tn_tensor a3 = tn__as3d(a), b3 = tn__as3d(b), c3 = tn__as3d(out);
    if (tn__backend(out->device)->matmul(&c3, &a3, &b3, alpha, beta)) { tn_release(out); return NULL; }
    return out;
}

static int tn__need_ndim(const char *fn, const char *what, tn_tensor *t, int ndim) {
    if (t->ndim != ndim) return TN__FAIL_INT("%s: %s must be a %d-d tensor, got shape %s", fn, what, ndim, TN__SHAPE(t));
    return 0;
}

/* A product's node: the two operands saved (inputs: [input,] a, b). */
static tn_tensor *tn__gemm_record(tn__gop op, tn_tensor *input, tn_tensor *a, tn_tensor *b, double beta, double alpha, tn_tensor *out) {
    tn_tensor *ins[3] = {input, a, b};
    tn_node *node = out ? (input ? tn__node_new(op, 0, ins, 3) : tn__node_new(op, 0, ins + 1, 2)) : NULL;
    if (node) {
        tn__node_save(node, a);
        tn__node_save(node, b);
        node->d[0] = beta;
        node->d[1] = alpha;
    }
    return tn__node_attach(node, out);
}
static tn_tensor *tn__mm(const char *fn, tn_tensor *a, tn_tensor *b) {
    return tn__own(tn__gemm_record(G_MM, NULL, a, b, 0, 1, tn__gemm_op(fn, a, b, NULL, 0, 1)));
}

TNDEF tn_tensor *tn_mm(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_mm", "self", a, 2) || tn__need_ndim("tn_mm", "mat2", b, 2)) return NULL;
    return tn__mm("tn_mm", a, b);
}
TNDEF tn_tensor *tn_bmm(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_bmm", "batch1", a, 3) || tn__need_ndim("tn_bmm", "batch2", b, 3)) return NULL;
    return tn__own(tn__gemm_record(G_BMM, NULL, a, b, 0, 1, tn__gemm_op("tn_bmm", a, b, NULL, 0, 1)));
}
TNDEF tn_tensor *tn_addmm(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, double beta, double alpha) {
    TN__CHECK_NULL(input, m1, m2);
    if (tn__need_ndim("tn_addmm", "mat1", m1, 2) || tn__need_ndim("tn_addmm", "mat2", m2, 2)) return NULL;
    if (input->dtype != m1->dtype) return (tn_tensor *)tn__error("tn_addmm: self and mat1 must have the same dtype, got %s and %s", tn_dtype_name(input->dtype), tn_dtype_name(m1->dtype));
    return tn__own(tn__gemm_record(G_ADDMM, input, m1, m2, beta, alpha, tn__gemm_op("tn_addmm", m1, m2, input, beta, alpha)));
}
TNDEF tn_tensor *tn_baddbmm(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, double beta, double alpha) {
    TN__CHECK_NULL(input, b1, b2);
    if (tn__need_ndim("tn_baddbmm", "batch1", b1, 3) || tn__need_ndim("tn_baddbmm", "batch2", b2, 3)) return NULL;
    if (input->dtype != b1->dtype) return (tn_tensor *)tn__error("tn_baddbmm: self and batch1 must have the same dtype, got %s and %s", tn_dtype_name(input->dtype), tn_dtype_name(b1->dtype));
    return tn__own(tn__gemm_record(G_BADDBMM, input, b1, b2, beta, alpha, tn__gemm_op("tn_baddbmm", b1, b2, input, beta, alpha)));
}

static tn_tensor *tn__mv(const char *fn, tn_tensor *a, tn_tensor *v) {
    TN__CHECK_NULL(a, v);
    if (tn__need_ndim(fn, "self", a, 2) || tn__need_ndim(fn, "vec", v, 1)) return NULL;
    if (a->shape[1] != v->shape[0])
        return (tn_tensor *)tn__error("%s: shapes %s and %s cannot be multiplied (%lld != %lld)", fn, TN__SHAPE(a), TN__SHAPE(v), (long long)a->shape[1], (long long)v->shape[0]);
    tn_tensor col = *v; /* [k] as a [k, 1] column */
    col.ndim = 2; col.shape[1] = 1; col.strides[1] = 1;
    tn_tensor *r = tn__gemm_op(fn, a, &col, NULL, 0, 1);
    if (r) r->ndim = 1;
    return tn__own(tn__gemm_record(G_MV, NULL, a, v, 0, 1, r));
}
TNDEF tn_tensor *tn_mv(tn_tensor *a, tn_tensor *v) { return TN__AS("tn_mv", tn__mv("tn_mv", a, v)); }

static tn_tensor *tn__dot(const char *fn, tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim(fn, "self", a, 1) || tn__need_ndim(fn, "other", b, 1)) return NULL;
    if (a->shape[0] != b->shape[0])
        return (tn_tensor *)tn__error("%s: inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same number of elements", fn, (long long)a->shape[0], (long long)b->shape[0]);
    tn_tensor row = *a, col = *b;
    row.ndim = 2; row.shape[0] = 1; row.shape[1] = a->shape[0]; row.strides[0] = 0; row.strides[1] = a->strides[0];
    col.ndim = 2; col.shape[1] = 1; col.strides[1] = 0;
    tn_tensor *r = tn__gemm_op(fn, &row, &col, NULL, 0, 1);
    if (r) r->ndim = 0;
    return tn__own(tn__gemm_record(G_DOT, NULL, a, b, 0, 1, r));
}
TNDEF tn_tensor *tn_dot(tn_tensor *a, tn_tensor *b) { return tn__dot("tn_dot", a, b); }

static tn_tensor *tn__outer_impl(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (tn__need_ndim("tn_outer", "self", a, 1) || tn__need_ndim("tn_outer", "vec2", b, 1)) return NULL;
    tn_scope_begin();
    tn_tensor *r = tn_keep(tn_mul(tn_unsqueeze(a, 1), b));
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_outer(tn_tensor *a, tn_tensor *b) { return tn__grad_name(TN__AS("tn_outer", tn__outer_impl(a, b)), "OuterBackward0"); }

static tn_tensor *tn__matmul_impl(tn_tensor *a, tn_tensor *b) {
    TN__CHECK_NULL(a, b);
    if (a->ndim == 0 || b->ndim == 0)
        return (tn_tensor *)tn__error("tn_matmul: both arguments need at least 1 dimension, got %d-d and %d-d tensors", a->ndim, b->ndim);
    if (a->ndim == 1 && b->ndim == 1) return tn__dot("tn_matmul", a, b);
    if (a->ndim == 2 && b->ndim == 1) return tn__mv("tn_matmul", a, b);
    if (a->ndim == 2 && b->ndim == 2) return tn__mm("tn_matmul", a, b);
    tn_scope_begin();
    tn_tensor *x = a->ndim == 1 ? tn_unsqueeze(a, 0) : a, *y = b->ndim == 1 ? tn_unsqueeze(b, 1) : b, *r = NULL;
    int64_t n = x->shape[x->ndim - 2], k = x->shape[x->ndim - 1], k2 = y->shape[y->ndim - 2], m = y->shape[y->ndim - 1];
    int64_t bshape[TN_MAX_DIMS], xs[TN_MAX_DIMS], ys[TN_MAX_DIMS], rs[TN_MAX_DIMS];
    int bnd = tn__broadcast(x->shape, x->ndim - 2, y->shape, y->ndim - 2, bshape);
    if (k != k2) tn__error("tn_matmul: shapes %s and %s cannot be multiplied (%lld != %lld)", TN__SHAPE(a), TN__SHAPE(b), (long long)k, (long long)k2);
    else if (bnd < 0) tn__error("tn_matmul: batch dims of %s and %s cannot be broadcast", TN__SHAPE(a), TN__SHAPE(b));
    else if (bnd + 2 > TN_MAX_DIMS) tn__error("tn_matmul: too many dims");
    else {
        int64_t batch = tn__numel(bshape, bnd), x3[3] = {batch, n, k}, y3[3] = {batch, k, m};
        memcpy(xs, bshape, (size_t)bnd * sizeof(int64_t)); xs[bnd] = n; xs[bnd + 1] = k;
        memcpy(ys, bshape, (size_t)bnd * sizeof(int64_t)); ys[bnd] = k; ys[bnd + 1] = m;
        tn_tensor *p = tn_bmm(tn_reshape(tn_expand(x, xs, bnd + 2), x3, 3), tn_reshape(tn_expand(y, ys, bnd + 2), y3, 3));
        int nd = 0;
        for (int i = 0; i < bnd; i++) rs[nd++] = bshape[i];
        if (a->ndim > 1) rs[nd++] = n;
        if (b->ndim > 1) rs[nd++] = m;
        r = p ? tn_reshape(p, rs, nd) : NULL;
    }
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
TNDEF tn_tensor *tn_matmul(tn_tensor *a, tn_tensor *b) { return TN__AS("tn_matmul", tn__matmul_impl(a, b)); }

/* ======================================================================= */
/* 10. nn functional                                                        */
/* ======================================================================= */
static tn_tensor *tn__softmax(const char *fn, tn_lane_op op, tn_tensor *x, int64_t dim) {
    TN__CHECK_NULL(x);
    return tn__lane_like(fn, op, x, dim, tn_dtype_is_floating(x->dtype) ? x->dtype : TN_F32);
}
TNDEF tn_tensor *tn_softmax(tn_tensor *x, int64_t dim) { return tn__softmax("tn_softmax", SOFTMAX, x, dim); }
TNDEF tn_tensor *tn_log_softmax(tn_tensor *x, int64_t dim) { return tn__softmax("tn_log_softmax", LOG_SOFTMAX, x, dim); }

/* ---- activations ---- */
static tn_tensor *tn__act(const char *fn, tn_unary_op op, tn_tensor *x, double p0, double p1, double p2) {
    double p[3] = {p0, p1, p2};
    return TN__AS(fn, tn__unary(op, x, p));
}
/* hardtanh of an integer tensor stays integral (torch truncates the bounds): a clamp */
static tn_tensor *tn__hardtanh(const char *fn, tn_tensor *x, double lo, double hi) {
    if (x && x->dtype == TN_BOOL) return (tn_tensor *)tn__error("%s: Bool inputs not supported for hardtanh (input %s)", fn, TN__SHAPE(x));
    if (x && !tn_dtype_is_floating(x->dtype)) return TN__AS(fn, tn_clamp(x, trunc(lo), trunc(hi)));
    return tn__act(fn, HARDTANH, x, lo, hi, 0);
}
TNDEF tn_tensor *tn_relu6(tn_tensor *x) { return tn__hardtanh("tn_relu6", x, 0, 6); }
TNDEF tn_tensor *tn_leaky_relu(tn_tensor *x, double slope) { return tn__act("tn_leaky_relu", LEAKY_RELU, x, slope, 0, 0); }
TNDEF tn_tensor *tn_elu(tn_tensor *x, double alpha) { return tn__act("tn_elu", ELU, x, alpha, 1, 1); }
TNDEF tn_tensor *tn_selu(tn_tensor *x) {
    return tn__act("tn_selu", ELU, x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1);
}
TNDEF tn_tensor *tn_celu(tn_tensor *x, double alpha) {
    if (alpha == 0) return (tn_tensor *)tn__error("tn_celu: alpha must be nonzero (ZeroDivisionError in PyTorch)");
    return tn__grad_name(tn__act("tn_celu", ELU, x, alpha, 1, 1 / alpha), "CeluBackward0");
}
TNDEF tn_tensor *tn_hardtanh(tn_tensor *x, double min_val, double max_val) {
    if (min_val > max_val) return (tn_tensor *)tn__error("tn_hardtanh: min_val (%g) cannot be greater than max_val (%g)", min_val, max_val);
    return tn__hardtanh("tn_hardtanh", x, min_val, max_val);
}
TNDEF tn_tensor *tn_mish(tn_tensor *x) { return tn__act("tn_mish", MISH, x, 0, 0, 0); }
TNDEF tn_tensor *tn_hardswish(tn_tensor *x) { return tn__act("tn_hardswish", HARDSWISH, x, 0, 0, 0); }
TNDEF tn_tensor *tn_hardsigmoid(tn_tensor *x) { return tn__act("tn_hardsigmoid", HARDSIGMOID, x, 0, 0, 0); }

/* ---- nn helpers ---- */
/* An op whose backward is a function beside its forward, with the custom-op signature:
   saved tensors through tn_ctx_saved, attributes in n->d and n->i. */
static tn_node *tn__fn_node(const char *name, tn_custom_backward bw, tn_tensor *const *ins, int n) {
    tn_node *nd = tn__node_new(G_CUSTOM, 0, ins, n);
    if (nd) { nd->name = name; nd->custom_bw = bw; }
    return nd;
}
/* Composite nn ops open a scope for their intermediates and hand out only the result. */
static tn_tensor *tn__scope_return(tn_tensor *r) {
    r = tn_keep(r);
    tn_scope_end();
    return r;
}
static int tn__nn_check(const char *fn, tn_tensor *x, const char *what) {
    if (!tn_dtype_is_floating(x->dtype) || x->dtype == TN_F16 || x->dtype == TN_BF16)
        return TN__FAIL_INT("%s: %s must be float32 or float64, got %s", fn, what, tn_dtype_name(x->dtype));
    return 0;
}
/* The other tensors of a layer (weight, bias, ...) must match the input's dtype and device. */
static int tn__nn_same(const char *fn, tn_tensor *x, tn_tensor *t, const char *what) {
    if (!t) return 0;
    if (t->dtype != x->dtype) return TN__FAIL_INT("%s: input (%s) and %s (%s) must have the same dtype", fn, tn_dtype_name(x->dtype), what, tn_dtype_name(t->dtype));
    if (t->device != x->device) return TN__FAIL_INT("%s: input (%s) and %s (%s) must be on the same device", fn, tn_device_name(x->device), what, tn_device_name(t->device));
    return 0;
}
/* A [1, C, 1, ...] view of a per-channel vector for an input of ndim dims. */
static tn_tensor *tn__per_channel(tn_tensor *v, int ndim) {
    int64_t shape[TN_MAX_DIMS];
    for (int d = 0; d < ndim; d++) shape[d] = 1;
    shape[1] = -1;
    return v ? tn_reshape(v, shape, ndim) : NULL;
}

/* ---- linear ---- */
static tn_tensor *tn__linear_impl(tn_tensor *x, tn_tensor *w, tn_tensor *b) {
    TN__CHECK_NULL(x); TN__CHECK_NULL(w);
    if (w->ndim != 2 || (b && b->ndim > 1)) return (tn_tensor *)tn__error("tn_linear: weight must be 2-d [out, in] (got %s) and bias 1-d or 0-d", TN__SHAPE(w));
    if (x->ndim == 0 || x->shape[x->ndim - 1] != w->shape[1])
        return (tn_tensor *)tn__error("tn_linear: input %s and weight %s: the last dim of the input must equal in_features (%lld)", TN__SHAPE(x), TN__SHAPE(w), (long long)w->shape[1]);
    if (b && b->ndim == 1 && b->shape[0] != w->shape[0]) return (tn_tensor *)tn__error("tn_linear: bias %s must have out_features (%lld) elements", TN__SHAPE(b), (long long)w->shape[0]);
    if (tn__nn_same("tn_linear", x, w, "weight") || tn__nn_same("tn_linear", x, b, "bias")) return NULL;
    tn_scope_begin();
    tn_tensor *wt = tn_t(w), *y;
    if (x->ndim == 2 && b) y = tn_addmm(b, x, wt, 1, 1);  /* one GEMM with the bias as C, as PyTorch */
    else {
        y = tn_matmul(x, wt);
        if (b) y = tn_add(y, b);
    }
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_linear(tn_tensor *x, tn_tensor *w, tn_tensor *b) { return TN__AS("tn_linear", tn__linear_impl(x, w, b)); }
static tn_tensor *tn__bilinear_impl(tn_tensor *x1, tn_tensor *x2, tn_tensor *w, tn_tensor *b) {
    TN__CHECK_NULL(x1); TN__CHECK_NULL(x2); TN__CHECK_NULL(w);
    if (w->ndim != 3 || x1->ndim == 0 || x2->ndim == 0 || x1->shape[x1->ndim - 1] != w->shape[1] || x2->shape[x2->ndim - 1] != w->shape[2] ||
        x1->ndim != x2->ndim || memcmp(x1->shape, x2->shape, (size_t)(x1->ndim - 1) * sizeof(int64_t)))
        return (tn_tensor *)tn__error("tn_bilinear: inputs %s and %s do not fit weight %s (expected [*, in1], [*, in2] and [out, in1, in2])", TN__SHAPE(x1), TN__SHAPE(x2), TN__SHAPE(w));
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0])) return (tn_tensor *)tn__error("tn_bilinear: bias %s must be [%lld]", TN__SHAPE(b), (long long)w->shape[0]);
    if (tn__nn_check("tn_bilinear", x1, "input1") || tn__nn_same("tn_bilinear", x1, x2, "input2") || tn__nn_same("tn_bilinear", x1, w, "weight") ||
        tn__nn_same("tn_bilinear", x1, b, "bias")) return NULL;
    int64_t O = w->shape[0], I1 = w->shape[1], I2 = w->shape[2];
    tn_scope_begin();
    /* y[.., o] = sum_j (x1 @ W')[.., o, j] x2[.., j], W' = W as [in1, out * in2] */
    tn_tensor *wp = tn_reshape(tn_permute(w, TN_SHAPE(1, 0, 2)), TN_SHAPE(I1, O * I2));
    tn_tensor *t = tn_matmul(x1, wp);
    int64_t shape[TN_MAX_DIMS + 1];
    for (int d = 0; d < x1->ndim - 1; d++) shape[d] = x1->shape[d];
    shape[x1->ndim - 1] = O;
    shape[x1->ndim] = I2;
    t = tn_reshape(t, shape, x1->ndim + 1);
    tn_tensor *y = tn_sum_dims(tn_mul(t, tn_unsqueeze(x2, -2)), TN_SHAPE(-1), false);
    if (b) y = tn_add(y, b);
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_bilinear(tn_tensor *x1, tn_tensor *x2, tn_tensor *w, tn_tensor *b) { return TN__AS("tn_bilinear", tn__bilinear_impl(x1, x2, w, b)); }

/* ---- sliding windows: im2col / col2im, each the other's backward ---- */
/* g: kh, kw, dh, dw, ph, pw, sh, sw, oh, ow (the backend's geometry), then H, W of the image. */
static tn_tensor *tn__col2im(tn_tensor *cols, int64_t H, int64_t W, const int64_t *g);
static tn_tensor *tn__im2col(tn_tensor *x, const int64_t *g);
static int tn__im2col_bw(tn_ctx *n, tn_tensor *gout, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    return (gin[0] = tn__col2im(gout, n->i[10], n->i[11], n->i)) ? 0 : -1;
}
static int tn__col2im_bw(tn_ctx *n, tn_tensor *gout, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    return (gin[0] = tn__im2col(gout, n->i)) ? 0 : -1;
}
/* x [N, C, H, W] -> [N, C*kh*kw, oh*ow], stored as [C*kh*kw, N, oh*ow] so that convolution
   multiplies all samples in one GEMM. */
static tn_tensor *tn__im2col(tn_tensor *x, const int64_t *g) {
    int64_t N = x->shape[0], K = x->shape[1] * g[0] * g[1], L = g[8] * g[9];
    int64_t shape[3] = {K, N, L};
    tn_tensor *c = tn__new(x->dtype, x->device, shape, 3);
    if (!c) return NULL;
    c->shape[0] = N; c->shape[1] = K;
    c->strides[0] = L; c->strides[1] = N * L; c->strides[2] = 1;
    if (tn__backend(x->device)->im2col(0, c, x, g)) { tn_release(c); return NULL; }
    tn_node *nd = tn__fn_node("Im2ColBackward0", tn__im2col_bw, &x, 1);
    if (nd) { memcpy(nd->i, g, 10 * sizeof(int64_t)); nd->i[10] = x->shape[2]; nd->i[11] = x->shape[3]; nd->ni = 12; }
    return tn__own(tn__node_attach(nd, c));
}
static tn_tensor *tn__col2im(tn_tensor *cols, int64_t H, int64_t W, const int64_t *g) {
    int64_t shape[4] = {cols->shape[0], cols->shape[1] / (g[0] * g[1]), H, W};
    tn_tensor *img = tn__new(cols->dtype, cols->device, shape, 4);
    if (!img) return NULL;
    if (tn__backend(img->device)->fill(img, 0) || tn__backend(img->device)->im2col(1, cols, img, g)) { tn_release(img); return NULL; }
    tn_node *nd = tn__fn_node("Col2ImBackward0", tn__col2im_bw, &cols, 1);
    if (nd) { memcpy(nd->i, g, 10 * sizeof(int64_t)); nd->i[10] = H; nd->i[11] = W; nd->ni = 12; }
    return tn__own(tn__node_attach(nd, img));
}
/* Window count along one dim, as PyTorch's pooling_output_shape (ceil_mode: a last window
   may start in the right padding but not past it). */
static int64_t tn__window_count(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad) out--;
    return out;
}
static int tn__check_positive(const char *fn, const char *what, const int64_t *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i] <= 0) return TN__FAIL_INT("%s: %s must be greater than zero, got %lld", fn, what, (long long)v[i]);
    return 0;
}
static tn_tensor *tn__im2col_public(const char *fn, tn_tensor *x, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s) {
    TN__CHECK_NULL(x);
    if (x->ndim != 4 && x->ndim != 3) return (tn_tensor *)tn__error("%s: expected 3-d (unbatched) or 4-d (batched) input, got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__check_positive(fn, "kernel_size", k, 2) || tn__check_positive(fn, "dilation", d, 2) ||
        tn__check_positive(fn, "stride", s, 2)) return NULL;
    if (p[0] < 0 || p[1] < 0) return (tn_tensor *)tn__error("%s: padding must be non-negative", fn);
    for (int i = 0; i < 2; i++)   /* keeps the size arithmetic below far from int64 overflow */
        if (k[i] > INT32_MAX || d[i] > INT32_MAX || p[i] > INT32_MAX || s[i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: kernel_size, dilation, padding and stride must be below 2^31", fn);
    tn_scope_begin();
    tn_tensor *x4 = x->ndim == 4 ? x : tn_unsqueeze(x, 0);
    int64_t g[10] = {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], 0, 0};
    for (int i = 0; i < 2; i++) {
        g[8 + i] = (x4->shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
        if (x4->shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1 < 0) {
            tn_scope_end();
            return (tn_tensor *)tn__error("%s: input %s is smaller than the dilated kernel (%lld x %lld) with padding (%lld, %lld)", fn, TN__SHAPE(x),
                                          (long long)(d[0] * (k[0] - 1) + 1), (long long)(d[1] * (k[1] - 1) + 1), (long long)p[0], (long long)p[1]);
        }
    }
    tn_tensor *c = tn_contiguous(tn__im2col(x4, g));
    return tn__scope_return(tn__grad_name(x->ndim == 4 ? c : tn_squeeze_dim(c, 0), "Im2ColBackward0"));
}
TNDEF tn_tensor *tn_im2col(tn_tensor *x, const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2], const int64_t stride[2]) {
    return TN__AS("tn_im2col", tn__im2col_public("tn_im2col", x, kernel, dilation, padding, stride));
}
static tn_tensor *tn__col2im_public(const char *fn, tn_tensor *c, const int64_t *os, const int64_t *k, const int64_t *d, const int64_t *p, const int64_t *s) {
    TN__CHECK_NULL(c);
    if (c->ndim != 3 && c->ndim != 2) return (tn_tensor *)tn__error("%s: expected 2-d (unbatched) or 3-d (batched) input, got %s", fn, TN__SHAPE(c));
    if (tn__nn_check(fn, c, "input") || tn__check_positive(fn, "kernel_size", k, 2) || tn__check_positive(fn, "dilation", d, 2) ||
        tn__check_positive(fn, "stride", s, 2) || tn__check_positive(fn, "output_size", os, 2)) return NULL;
    if (p[0] < 0 || p[1] < 0) return (tn_tensor *)tn__error("%s: padding must be non-negative", fn);
    for (int i = 0; i < 2; i++)   /* keeps the size arithmetic below far from int64 overflow */
        if (k[i] > INT32_MAX || d[i] > INT32_MAX || p[i] > INT32_MAX || s[i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: kernel_size, dilation, padding and stride must be below 2^31", fn);
    int64_t g[10] = {k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], 0, 0};
    for (int i = 0; i < 2; i++) g[8 + i] = (os[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
    int64_t rows = c->shape[c->ndim - 2], L = c->shape[c->ndim - 1];
    if (rows % (k[0] * k[1]) || g[8] <= 0 || g[9] <= 0 || L != g[8] * g[9])
        return (tn_tensor *)tn__error("%s: input %s does not fit output_size (%lld, %lld) and kernel (%lld, %lld): expected [*, C*%lld, %lld]", fn, TN__SHAPE(c),
                                      (long long)os[0], (long long)os[1], (long long)k[0], (long long)k[1], (long long)(k[0] * k[1]),
                                      (long long)(g[8] > 0 && g[9] > 0 ? g[8] * g[9] : 0));
    tn_scope_begin();
    tn_tensor *c3 = c->ndim == 3 ? c : tn_unsqueeze(c, 0);
    tn_tensor *img = tn__col2im(c3, os[0], os[1], g);
    return tn__scope_return(tn__grad_name(c->ndim == 3 ? img : tn_squeeze_dim(img, 0), "Col2ImBackward0"));
}
TNDEF tn_tensor *tn_col2im(tn_tensor *cols, const int64_t output_size[2], const int64_t kernel[2], const int64_t dilation[2],
                           const int64_t padding[2], const int64_t stride[2]) {
    return TN__AS("tn_col2im", tn__col2im_public("tn_col2im", cols, output_size, kernel, dilation, padding, stride));
}

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
    tn_tensor v = *t;
    v.ndim = 3;
    v.shape[0] = 1; v.shape[1] = rows; v.shape[2] = cols;
    v.strides[0] = 0; v.strides[1] = rs; v.strides[2] = cs;
    v.offset = off;
    return v;
}
/* Image n of x [N, C, H, W] as a one-image batch. */
static tn_tensor tn__image_view(const tn_tensor *x, int64_t n) {
    tn_tensor v = *x;
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
    return tn__block_units((size_t)nbuf * (size_t)(K * g[9]) * es, g[8]);
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
    int64_t ib = (int64_t)((size_t)(TN_CONV_BLOCK_BYTES) / (size_t)nbuf / ((size_t)(K * g[8] * g[9]) * es));
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
static int tn__conv_fast_paths = 1;

/* Depthwise convolutions (groups = input channels, any multiplier): direct loops over the
   planes, one multiply-add per kernel tap and output, instead of one tiny GEMM per group. */
#define TN__DW_DEFINE(T, SFX)                                                                                                                \
/* y[i] += a x[i] (restrict: vectorises) */                                                                                                  \
static void tn__dw_axpy_##SFX(int64_t n, T a, const T *TN__RESTRICT x, T *TN__RESTRICT y)                                                    \
{                                                                                                                                            \
    int64_t i;                                                                                                                               \
    for (i = 0; i < n; i++) y[i] += a * x[i];                                                                                                \
}                                                                                                                                            \
static T tn__dw_dot_##SFX(int64_t n, const T *TN__RESTRICT x, const T *TN__RESTRICT y)                                                       \
{ /* in 4 partial sums, so it vectorises */                                                                                                  \
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                                                                        \
    int64_t i;                                                                                                                               \
    for (i = 0; i + 4 <= n; i += 4) { s0 += x[i] * y[i]; s1 += x[i + 1] * y[i + 1]; s2 += x[i + 2] * y[i + 2]; s3 += x[i + 3] * y[i + 3]; }  \
    for (; i < n; i++) s0 += x[i] * y[i];                                                                                                    \
    return (s0 + s1) + (s2 + s3);                                                                                                            \
}                                                                                                                                            \
/* Output columns [*o0, *o1) whose input column ox * sw + off lies in [0, W). */                                                             \
static void tn__dw_cols_##SFX(int64_t off, int64_t sw, int64_t W, int64_t ow, int64_t *o0, int64_t *o1)                                      \
{                                                                                                                                            \
    *o0 = off < 0 ? (-off + sw - 1) / sw : 0;                                                                                                \
    *o1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;                                                                                        \
    if (*o1 > ow) *o1 = ow;                                                                                                                  \
    if (*o1 < *o0) *o1 = *o0;                                                                                                                \
}                                                                                                                                            \
/* Depthwise (one input channel per group): plane p = (n, o) of y [N, O, oh, ow] reads plane                                                 \
   (n, o / (O / C)) of x [N, C, H, W]; w [O, 1, kh, kw]; all contiguous. mode 0: y = conv(x) + b;                                            \
   1: the input gradient gx (= x, written) from gy (= y); 2: the weight gradient gw (= w,                                                    \
   written) from gy and x. Threads take planes (0, 2) or input planes (1); every sum runs in                                                 \
   one order, so the result is the same for any thread count. */                                                                             \
static void tn__dw_conv_##SFX(int mode, T *x, T *w, const T *b, T *y, int64_t N, int64_t C, int64_t H,                                       \
                              int64_t W, int64_t O, const int64_t *g, int nthr)                                                              \
{                                                                                                                                            \
    const int64_t kh = g[0], kw = g[1], dh = g[2], dw = g[3], ph = g[4], pw = g[5], sh = g[6], sw = g[7];                                    \
    const int64_t oh = g[8], ow = g[9], Og = O / C, np = mode == 1 ? N * C : mode == 2 ? O : N * O;                                          \
    int64_t p;                                                                                                                               \
    TN__OMP_PARALLEL_FOR(nthr)                                                                                                               \
    for (p = 0; p < np; p++) {                                                                                                               \
        const int64_t nb = mode == 1 ? p / C : mode == 2 ? 0 : p / O, ne = mode == 2 ? N : nb + 1;                                           \
        const int64_t oa = mode == 1 ? p % C * Og : p % O, ob = mode == 1 ? oa + Og : oa + 1;                                                \
        int64_t oy, i, j, o0, o1, n, o;                                                                                                      \
        if (mode == 1) memset(x + p * H * W, 0, (size_t)(H * W) * sizeof(T));                                                                \
        if (mode == 2) for (i = 0; i < kh * kw; i++) w[p * kh * kw + i] = (T)0;                                                              \
        for (n = nb; n < ne; n++)                                                                                                            \
            for (o = oa; o < ob; o++) {                                                                                                      \
                T *xp = x + (n * C + o / Og) * H * W, *yp = y + (n * O + o) * oh * ow, *wp = w + o * kh * kw;                                \
                for (oy = 0; oy < oh; oy++) {                                                                                                \
                    T *yr = yp + oy * ow;                                                                                                    \
                    if (mode == 0) { const T bv = b ? b[o] : (T)0; for (j = 0; j < ow; j++) yr[j] = bv; }                                    \
                    for (i = 0; i < kh; i++) {                                                                                               \
                        const int64_t iy = oy * sh - ph + i * dh;                                                                            \
                        T *xr;                                                                                                               \
                        if (iy < 0 || iy >= H) continue;                                                                                     \
                        xr = xp + iy * W;                                                                                                    \
                        for (j = 0; j < kw; j++) {                                                                                           \
                            const int64_t off = j * dw - pw;                                                                                 \
                            tn__dw_cols_##SFX(off, sw, W, ow, &o0, &o1);                                                                     \
                            if (o1 == o0) continue;                                                                                          \
                            if (sw == 1) {                                                                                                   \
                                if (mode == 0) tn__dw_axpy_##SFX(o1 - o0, wp[i * kw + j], xr + o0 + off, yr + o0);                           \
                                else if (mode == 1) tn__dw_axpy_##SFX(o1 - o0, wp[i * kw + j], yr + o0, xr + o0 + off);                      \
                                else wp[i * kw + j] += tn__dw_dot_##SFX(o1 - o0, yr + o0, xr + o0 + off);                                    \
                            } else {                                                                                                         \
                                int64_t ox;                                                                                                  \
                                if (mode == 0) for (ox = o0; ox < o1; ox++) yr[ox] += wp[i * kw + j] * xr[ox * sw + off];                    \
                                else if (mode == 1) for (ox = o0; ox < o1; ox++) xr[ox * sw + off] += wp[i * kw + j] * yr[ox];               \
                                else { T s = 0; for (ox = o0; ox < o1; ox++) s += yr[ox] * xr[ox * sw + off]; wp[i * kw + j] += s; }         \
                            }                                                                                                                \
                        }                                                                                                                    \
                    }                                                                                                                        \
                }                                                                                                                            \
            }                                                                                                                                \
    }                                                                                                                                        \
}

TN__DW_DEFINE(float, f32)
TN__DW_DEFINE(double, f64)
#undef TN__DW_DEFINE
/* mode 0: y = conv(x, w) + b; 1: x = the input gradient from y = gy; 2: w = the weight
   gradient from y = gy and x; by the depthwise loops. The written tensor is new and
   contiguous, w and gy contiguous. */
static int tn__conv_dw_cpu(int mode, tn_tensor *x, tn_tensor *w, const tn_tensor *b, tn_tensor *y, const int64_t *g) {
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], kk = g[0] * g[1];
    const int64_t np = mode == 1 ? N * C : mode == 2 ? O : N * O;
    const int nthr = tn__par_threads(N * O * g[8] * g[9] * kk, np);
    tn_tensor *xc = mode == 1 || tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    if (!xc) return TN__FAIL_INT(mode ? "conv2d backward: out of memory" : "conv2d: out of memory");
    if (x->dtype == TN_F32)
        tn__dw_conv_f32(mode, (float *)tn_data_ptr(xc), (float *)tn_data_ptr(w), b ? (const float *)tn_data_ptr(b) : NULL,
                        (float *)tn_data_ptr(y), N, C, x->shape[2], x->shape[3], O, g, nthr);
    else
        tn__dw_conv_f64(mode, (double *)tn_data_ptr(xc), (double *)tn_data_ptr(w), b ? (const double *)tn_data_ptr(b) : NULL,
                        (double *)tn_data_ptr(y), N, C, x->shape[2], x->shape[3], O, g, nthr);
    tn_release(xc);
    return 0;
}
/* Depthwise: one input channel per group, more than one group. */
static bool tn__conv_dw_ok(const tn_tensor *x, int64_t G) {
    return tn__conv_fast_paths && G > 1 && x->shape[1] == G && (x->dtype == TN_F32 || x->dtype == TN_F64);
}

/* Convolutions with few products per output (K = C kh kw <= 27: first layers on 1- or
   3-channel images), stride 1, undilated, ungrouped, float32, where the CPU has AVX-512:
   im2col + GEMM spends its time copying for so short a K (conv 1 -> 32 at 28x28 ran at a
   third of the GEMM's speed). Directly instead, image by image: the image copied into a
   zero-padded buffer (so every shifted load is a plain load), 16 outputs of a row a
   vector, the K shifted vectors loaded once and shared by every output channel. The
   weight gradient sums per thread in 16 lanes and adds up in thread then lane order (the
   same bits for a given thread count). The input gradient keeps the im2col path. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__SMALLK_MAX 27
#define TN__SMALLK_AVX512 __attribute__((target("avx512f")))
/* The padded image: xn [C, H, W] at rows [ph, ph + H), columns [pw, pw + W) of pad
   [C, H + 2 ph, wp] (zeros around; wp >= ow rounded up to 16, + kw - 1); koff[k] the
   offset of tap k = (c, i, j) from an output's top-left input. */
static void tn__smallk_pad(const float *xn, int64_t C, int64_t H, int64_t W, const int64_t *g, int64_t wp, float *pad, int64_t *koff) {
    const int64_t hp = H + 2 * g[4];
    memset(pad, 0, (size_t)(C * hp * wp) * sizeof(float));
    for (int64_t c = 0; c < C; c++)
        for (int64_t r = 0; r < H; r++) memcpy(pad + (c * hp + r + g[4]) * wp + g[5], xn + (c * H + r) * W, (size_t)W * sizeof(float));
    for (int64_t c = 0, k = 0; c < C; c++)
        for (int64_t i = 0; i < g[0]; i++)
            for (int64_t j = 0; j < g[1]; j++) koff[k++] = (c * hp + i) * wp + j;
}
static int64_t tn__smallk_wp(const int64_t *g) { return (g[9] + 15) / 16 * 16 + g[1] - 1; }
/* y [N, O, oh, ow] = conv(x [N, C, H, W], w [O, K]) + b (NULL: none), all contiguous;
   buf: nthr C (H + 2 ph) wp floats. */
TN__SMALLK_AVX512 static void tn__smallk_fwd_f32(const float *x, const float *w, const float *b, float *y, int64_t N, int64_t C, int64_t H,
                                                int64_t W, int64_t O, const int64_t *g, int nthr, float *buf) {
    const int64_t K = C * g[0] * g[1], oh = g[8], ow = g[9], wp = tn__smallk_wp(g), per = C * (H + 2 * g[4]) * wp;
    int t;
    TN__OMP_PARALLEL_FOR(nthr)
    for (t = 0; t < nthr; t++) {
        float *pad = buf + t * per;
        int64_t koff[TN__SMALLK_MAX];
        for (int64_t n = N * t / nthr; n < N * (t + 1) / nthr; n++) {
            tn__smallk_pad(x + n * C * H * W, C, H, W, g, wp, pad, koff);
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                    __m512 X[TN__SMALLK_MAX];
                    const __mmask16 m = (__mmask16)((1u << TN__MIN(16, ow - ox0)) - 1);
                    const float *p = pad + oy * wp + ox0;
                    float *yp = y + (n * O * oh + oy) * ow + ox0;
                    int64_t o = 0;
                    for (int64_t k = 0; k < K; k++) X[k] = _mm512_loadu_ps(p + koff[k]);
                    for (; o + 4 <= O; o += 4) {   /* four output channels: four independent chains */
                        __m512 a0 = _mm512_set1_ps(b ? b[o] : 0.0f), a1 = _mm512_set1_ps(b ? b[o + 1] : 0.0f);
                        __m512 a2 = _mm512_set1_ps(b ? b[o + 2] : 0.0f), a3 = _mm512_set1_ps(b ? b[o + 3] : 0.0f);
                        const float *w0 = w + o * K;
                        for (int64_t k = 0; k < K; k++) {
                            a0 = _mm512_fmadd_ps(_mm512_set1_ps(w0[k]), X[k], a0);
                            a1 = _mm512_fmadd_ps(_mm512_set1_ps(w0[K + k]), X[k], a1);
                            a2 = _mm512_fmadd_ps(_mm512_set1_ps(w0[2 * K + k]), X[k], a2);
                            a3 = _mm512_fmadd_ps(_mm512_set1_ps(w0[3 * K + k]), X[k], a3);
                        }
                        _mm512_mask_storeu_ps(yp + o * oh * ow, m, a0);
                        _mm512_mask_storeu_ps(yp + (o + 1) * oh * ow, m, a1);
                        _mm512_mask_storeu_ps(yp + (o + 2) * oh * ow, m, a2);
                        _mm512_mask_storeu_ps(yp + (o + 3) * oh * ow, m, a3);
                    }
                    for (; o < O; o++) {
                        __m512 a = _mm512_set1_ps(b ? b[o] : 0.0f);
                        for (int64_t k = 0; k < K; k++) a = _mm512_fmadd_ps(_mm512_set1_ps(w[o * K + k]), X[k], a);
                        _mm512_mask_storeu_ps(yp + o * oh * ow, m, a);
                    }
                }
        }
    }
}
/* gw [O, K] (written) = the weight gradient from gy [N, O, oh, ow] and x; buf: nthr
   (C (H + 2 ph) wp + O K 16) floats. */
TN__SMALLK_AVX512 static void tn__smallk_wgrad_f32(const float *x, const float *gy, float *gw, int64_t N, int64_t C, int64_t H, int64_t W,
                                                  int64_t O, const int64_t *g, int nthr, float *buf) {
    const int64_t K = C * g[0] * g[1], oh = g[8], ow = g[9], wp = tn__smallk_wp(g), per = C * (H + 2 * g[4]) * wp + O * K * 16;
    int t;
    TN__OMP_PARALLEL_FOR(nthr)
    for (t = 0; t < nthr; t++) {
        float *pad = buf + t * per, *A = pad + per - O * K * 16;
        int64_t koff[TN__SMALLK_MAX];
        memset(A, 0, (size_t)(O * K * 16) * sizeof(float));
        for (int64_t n = N * t / nthr; n < N * (t + 1) / nthr; n++) {
            tn__smallk_pad(x + n * C * H * W, C, H, W, g, wp, pad, koff);
            int64_t o = 0;
            for (; o < O; o++) {
                const float *go = gy + (n * O + o) * oh * ow;
                int64_t k0 = 0;
                if (o + 1 < O)   /* two output channels with 9 taps each: 18 sums in registers, the 9 inputs loaded once */
                    for (; k0 + 9 <= K; k0 += 9) {
                        const int64_t *ko = koff + k0;
                        float *Ak = A + (o * K + k0) * 16, *Bk = Ak + K * 16;
#define TN__SMALLK_9(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8)
#define TN__SMALLK_LD(i) __m512 a##i = _mm512_loadu_ps(Ak + 16 * i), b##i = _mm512_loadu_ps(Bk + 16 * i);
#define TN__SMALLK_FMA(i) { const __m512 v = _mm512_loadu_ps(p + ko[i]); a##i = _mm512_fmadd_ps(ga, v, a##i); b##i = _mm512_fmadd_ps(gb, v, b##i); }
#define TN__SMALLK_ST(i) _mm512_storeu_ps(Ak + 16 * i, a##i); _mm512_storeu_ps(Bk + 16 * i, b##i);
                        TN__SMALLK_9(TN__SMALLK_LD)
                        for (int64_t oy = 0; oy < oh; oy++)
                            for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                                const __mmask16 m = (__mmask16)((1u << TN__MIN(16, ow - ox0)) - 1);
                                const __m512 ga = _mm512_maskz_loadu_ps(m, go + oy * ow + ox0), gb = _mm512_maskz_loadu_ps(m, go + (oh + oy) * ow + ox0);
                                const float *p = pad + oy * wp + ox0;
                                TN__SMALLK_9(TN__SMALLK_FMA)
                            }
                        TN__SMALLK_9(TN__SMALLK_ST)
#undef TN__SMALLK_9
#undef TN__SMALLK_LD
#undef TN__SMALLK_FMA
#undef TN__SMALLK_ST
                    }
                for (int64_t k = k0; k < K; k++)   /* the rest one tap (and channel) at a time */
                    for (int64_t c = o; c < (k0 > 0 ? o + 2 : o + 1); c++) {
                        const float *gc = gy + (n * O + c) * oh * ow;
                        __m512 a = _mm512_loadu_ps(A + (c * K + k) * 16);
                        for (int64_t oy = 0; oy < oh; oy++)
                            for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
                                const __m512 gv = _mm512_maskz_loadu_ps((__mmask16)((1u << TN__MIN(16, ow - ox0)) - 1), gc + oy * ow + ox0);
                                a = _mm512_fmadd_ps(gv, _mm512_loadu_ps(pad + oy * wp + ox0 + koff[k]), a);
                            }
                        _mm512_storeu_ps(A + (c * K + k) * 16, a);
                    }
                if (k0 > 0) o++;   /* channel o + 1 done with o */
            }
        }
    }
    for (int64_t q = 0; q < O * K; q++) {   /* threads, then lanes, in order */
        float s = 0;
        for (int u = 0; u < nthr; u++)
            for (int l = 0; l < 16; l++) s += buf[u * per + per - O * K * 16 + q * 16 + l];
        gw[q] = s;
    }
}
#undef TN__SMALLK_AVX512
static bool tn__conv_smallk_ok(const tn_tensor *x, const int64_t *g, int64_t G) {
    if (!tn__conv_fast_paths || G != 1 || x->dtype != TN_F32 || g[2] != 1 || g[3] != 1 || g[6] != 1 || g[7] != 1 || x->shape[1] * g[0] * g[1] > TN__SMALLK_MAX)
        return false;
    return tn__cpu_avx512();
}
/* mode 0: y = conv(x, w) + b; 2: w = the weight gradient from y = gy and x (new, contiguous). */
static int tn__conv_smallk_cpu(int mode, tn_tensor *x, tn_tensor *w, const tn_tensor *b, tn_tensor *y, const int64_t *g) {
    const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], O = w->shape[0], K = C * g[0] * g[1];
    const int nthr = tn__par_threads(N * O * g[8] * g[9] * K, N);
    const int64_t per = C * (H + 2 * g[4]) * tn__smallk_wp(g) + (mode == 2 ? O * K * 16 : 0);
    tn_tensor *xc = tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    tn_tensor *yc = tn_is_contiguous(y) ? tn_retain(y) : tn__copy_as(y, y->dtype, TN_CPU);
    tn_tensor *buf = tn__new(TN_F32, TN_CPU, TN_SHAPE(nthr * per));
    int failed = !xc || !yc || !buf;
    if (!failed && mode == 0)
        tn__smallk_fwd_f32((const float *)tn_data_ptr(xc), (const float *)tn_data_ptr(w), b ? (const float *)tn_data_ptr(b) : NULL,
                           (float *)tn_data_ptr(yc), N, C, H, x->shape[3], O, g, nthr, (float *)tn_data_ptr(buf));
    else if (!failed)
        tn__smallk_wgrad_f32((const float *)tn_data_ptr(xc), (const float *)tn_data_ptr(yc), (float *)tn_data_ptr(w), N, C, H, x->shape[3], O, g,
                             nthr, (float *)tn_data_ptr(buf));
    tn_release(xc); tn_release(yc); tn_release(buf);
    return failed ? TN__FAIL_INT(mode ? "conv2d backward: out of memory" : "conv2d: out of memory") : 0;
}
#else
static bool tn__conv_smallk_ok(const tn_tensor *x, const int64_t *g, int64_t G) { (void)x; (void)g; (void)G; return false; }
static int tn__conv_smallk_cpu(int mode, tn_tensor *x, tn_tensor *w, const tn_tensor *b, tn_tensor *y, const int64_t *g) {
    (void)mode; (void)x; (void)w; (void)b; (void)y; (void)g;
    return -1;
}
#endif

/* The rows of tiles of the Winograd transforms, float32 in AVX-512 (chosen at run time; the
   portable rows in TN__WINO_DEFINE compute the same operations in the same order, so both
   give the same bits). Rows of tiles are short (7 tiles at 14x14), too short for the
   auto-vectorised loops: here a row is one masked load per input row and 8 tiles a vector. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__WINO_AVX512 __attribute__((target("avx512f,avx512vl")))
/* Lanes [from, to) of 16, clamped. */
TN__WINO_AVX512 static __mmask16 tn__wino_lanes(int64_t from, int64_t to) {
    from = TN__MAX(0, TN__MIN(16, from)); to = TN__MAX(from, TN__MIN(16, to));
    return (__mmask16)(((1u << to) - 1) & ~((1u << from) - 1));
}
/* Lanes [0, n) of v (n <= 8) to p: 256-bit stores, as Zen 4 stores 512 bits in two halves. */
TN__WINO_AVX512 static void tn__wino_store8(float *p, int64_t n, __m512 v) { _mm256_mask_storeu_ps(p, (__mmask8)tn__wino_lanes(0, n), _mm512_castps512_ps256(v)); }
TN__WINO_AVX512 static __m512 tn__wino_neg(__m512 v) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))); }
/* The 16 values of B^T d B of tiles 0 ... tw - 1 of a row of tiles (tile j: columns
   2j ... 2j + 3 of the input rows d[0..3], which read as zero outside columns [j0, j1)), to
   columns c = cp pn + cr ... of V + xi vx: column c in panel c / pn (panels ps apart) at
   c % pn. E: scratch of the portable rows. */
TN__WINO_AVX512 static void tn__wino_in_row_f32_avx512(const float *const *d, int64_t j0, int64_t j1, int64_t tw, int64_t cp, int64_t cr,
                                                       int64_t pn, int64_t ps, float *V, int64_t vx, float *E) {
    const __m512i i0 = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), one = _mm512_set1_epi32(1);
    const __m512i i1 = _mm512_add_epi32(i0, one), i2 = _mm512_add_epi32(i1, one), i3 = _mm512_add_epi32(i2, one);
    (void)E;
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const int64_t n = TN__MIN(8, tw - t0), b = 2 * t0, s = TN__MAX(j0, b) - b, e = TN__MIN(j1, b + 2 * n + 2) - b;
        const int64_t m = TN__MIN(n, pn - cr);   /* lanes [0, m) in this panel, [m, n) at the next one's start */
        const __mmask16 ml = tn__wino_lanes(s, e), mh = tn__wino_lanes(s - 16, e - 16), m2 = tn__wino_lanes(m, n);
        float *p0 = V + cp * ps + cr, *p1 = V + (cp + 1) * ps - m;
        __m512 lo[4], hi[4], v[16];
        for (cr += 8; cr >= pn; cr -= pn) cp++;
        for (int k = 0; k < 4; k++) {
            lo[k] = _mm512_maskz_loadu_ps(ml, d[k] + b);
            hi[k] = mh ? _mm512_maskz_loadu_ps(mh, d[k] + b + 16) : _mm512_setzero_ps();
        }
        const __m512 el[4] = {_mm512_sub_ps(lo[0], lo[2]), _mm512_add_ps(lo[1], lo[2]), _mm512_sub_ps(lo[2], lo[1]), _mm512_sub_ps(lo[1], lo[3])};
        const __m512 eh[4] = {_mm512_sub_ps(hi[0], hi[2]), _mm512_add_ps(hi[1], hi[2]), _mm512_sub_ps(hi[2], hi[1]), _mm512_sub_ps(hi[1], hi[3])};
        for (int k = 0; k < 4; k++) {
            const __m512 a0 = _mm512_permutex2var_ps(el[k], i0, eh[k]), a1 = _mm512_permutex2var_ps(el[k], i1, eh[k]);
            const __m512 a2 = _mm512_permutex2var_ps(el[k], i2, eh[k]), a3 = _mm512_permutex2var_ps(el[k], i3, eh[k]);
            v[4 * k] = _mm512_sub_ps(a0, a2); v[4 * k + 1] = _mm512_add_ps(a1, a2);
            v[4 * k + 2] = _mm512_sub_ps(a2, a1); v[4 * k + 3] = _mm512_sub_ps(a1, a3);
        }
        for (int xi = 0; xi < 16; xi++) {
            tn__wino_store8(p0 + xi * vx, m, v[xi]);
            if (m < n) _mm512_mask_storeu_ps(p1 + xi * vx, m2, v[xi]);
        }
    }
}
/* A^T m A, 4 outputs per tile, for tiles i < nt: m[xi S + i] (xi < 16) to y00 ... y11, + bv. */
TN__WINO_AVX512 static void tn__wino_at_f32_avx512(int64_t nt, int64_t S, const float *m, float bv, float *y00, float *y01, float *y10, float *y11) {
    const __m512 b = _mm512_set1_ps(bv);
    for (int64_t i = 0; i < nt; i += 16) {
        const __mmask16 k = tn__wino_lanes(0, nt - i);
        __m512 v[16];
        for (int xi = 0; xi < 16; xi++) v[xi] = _mm512_maskz_loadu_ps(k, m + xi * S + i);
        __m512 r[4], u[4];
        for (int c = 0; c < 4; c++) {
            r[c] = _mm512_add_ps(_mm512_add_ps(v[c], v[4 + c]), v[8 + c]);
            u[c] = _mm512_sub_ps(_mm512_sub_ps(v[4 + c], v[8 + c]), v[12 + c]);
        }
        _mm512_mask_storeu_ps(y00 + i, k, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(r[0], r[1]), r[2]), b));
        _mm512_mask_storeu_ps(y01 + i, k, _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(r[1], r[2]), r[3]), b));
        _mm512_mask_storeu_ps(y10 + i, k, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(u[0], u[1]), u[2]), b));
        _mm512_mask_storeu_ps(y11 + i, k, _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(u[1], u[2]), u[3]), b));
    }
}
/* A row of output tiles into the output row yr [ow]: tile j's two values a[j], b[j] at
   columns 2j, 2j + 1. */
TN__WINO_AVX512 static void tn__wino_out_row_f32_avx512(const float *a, const float *b, int64_t tw, float *yr, int64_t ow) {
    const __m512i il = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const __mmask16 mn = tn__wino_lanes(0, tw - t0);
        const __m512 z = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(mn, a + t0), il, _mm512_maskz_loadu_ps(mn, b + t0));
        _mm512_mask_storeu_ps(yr + 2 * t0, tn__wino_lanes(0, ow - 2 * t0), z);
    }
}
/* A gy A^T of the 2x2 tiles 0 ... tw - 1 of output rows a, b (columns [0, j1) read, zeros
   past them): value (k, l) of tile j at Y[(4k + l) ys + j]. */
TN__WINO_AVX512 static void tn__wino_gy_row_f32_avx512(const float *a, const float *b, int64_t j1, int64_t tw, float *Y, int64_t ys, float *E) {
    const __m512i ie = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 0, 2, 4, 6, 8, 10, 12, 14), io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
    (void)E;
    for (int64_t t0 = 0; t0 < tw; t0 += 8) {
        const int64_t n = TN__MIN(8, tw - t0);
        const __mmask16 ml = tn__wino_lanes(0, j1 - 2 * t0);
        const __m512 av = _mm512_maskz_loadu_ps(ml, a + 2 * t0), bv = _mm512_maskz_loadu_ps(ml, b + 2 * t0);
        const __m512 f[4] = {av, _mm512_add_ps(av, bv), _mm512_sub_ps(av, bv),
                             _mm512_castsi512_ps(_mm512_maskz_xor_epi32(ml, _mm512_castps_si512(bv), _mm512_set1_epi32(INT32_MIN)))};
        for (int k = 0; k < 4; k++) {
            const __m512 u = _mm512_permutexvar_ps(ie, f[k]), w = _mm512_permutexvar_ps(io, f[k]);
            float *y = Y + 4 * k * ys + t0;
            tn__wino_store8(y, n, u);
            tn__wino_store8(y + ys, n, _mm512_add_ps(u, w));
            tn__wino_store8(y + 2 * ys, n, _mm512_sub_ps(u, w));
            tn__wino_store8(y + 3 * ys, n, tn__wino_neg(w));
        }
    }
}
#undef TN__WINO_AVX512
static int tn__wino_avx512 = 1;   /* test knob: 0 runs the portable rows */
static bool tn__wino_has_avx512(void) {
    return tn__wino_avx512 && tn__cpu_avx512();
}
/* var = fn's AVX-512 twin where the CPU has it (float32 only). */
#define TN__WINO_PICK_f32(var, fn) do { if (tn__wino_has_avx512()) var = fn##_avx512; } while (0)
#else
#define TN__WINO_PICK_f32(var, fn) ((void)0)
#endif
#define TN__WINO_PICK_f64(var, fn) ((void)0)

/* Winograd F(2x2, 3x3) (Lavin and Gray, 2016) for 3x3, stride-1, undilated, ungrouped
   convolutions with 8 or more channels on both sides: a 2x2 output tile is
   A^T [(G g G^T) . (B^T d B)] A of its 4x4 input tile d, so the products become 16 GEMMs
   [P, Q] x [Q, tiles] with 2.25x fewer multiply-adds than im2col's, and the transforms are
   additions (and halvings in G). It computes the forward and, as the convolution of gy by
   the turned kernel with padding 2 - p, the input gradient. Rounding differs from
   im2col's by a few ulps. */
#define TN__WINO_DEFINE(T, SFX)                                                                                                    \
/* U [16][P][Q] = G g G^T for each 3x3 kernel g: w[p][q] (flip = 0), or w[q][p] turned by                                          \
   180 degrees (flip = 1: the input gradient's kernel); w [O, C, 3, 3] contiguous. */                                              \
static void tn__wino_weights_##SFX(const T *w, int64_t O, int64_t C, int flip, T *U,                                               \
                                   const tn__gemm_kern_##SFX *kn, T *Up)                                                           \
{                                                                                                                                  \
    const int64_t P = flip ? C : O, Q = flip ? O : C;                                                                              \
    int64_t p, q, r;                                                                                                               \
    for (p = 0; p < P; p++)                                                                                                        \
        for (q = 0; q < Q; q++) {                                                                                                  \
            const T *k = flip ? w + (q * C + p) * 9 : w + (p * C + q) * 9;                                                         \
            T g[9], a[12];                                                                                                         \
            int s;                                                                                                                 \
            for (r = 0; r < 9; r++) g[r] = flip ? k[8 - r] : k[r];                                                                 \
            for (s = 0; s < 3; s++) { /* G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2 */                                           \
                a[s] = g[s];                                                                                                       \
                a[3 + s] = (T)0.5 * (g[s] + g[3 + s] + g[6 + s]);                                                                  \
                a[6 + s] = (T)0.5 * (g[s] - g[3 + s] + g[6 + s]);                                                                  \
                a[9 + s] = g[6 + s];                                                                                               \
            }                                                                                                                      \
            for (r = 0; r < 4; r++) { /* (G g) G^T, row by row */                                                                  \
                const T *b = a + 3 * r;                                                                                            \
                T *u = U + (4 * r * P + p) * Q + q;                                                                                \
                u[0] = b[0];                                                                                                       \
                u[P * Q] = (T)0.5 * (b[0] + b[1] + b[2]);                                                                          \
                u[2 * P * Q] = (T)0.5 * (b[0] - b[1] + b[2]);                                                                      \
                u[3 * P * Q] = b[2];                                                                                               \
            }                                                                                                                      \
        }                                                                                                                          \
    for (r = 0; r < 16; r++) /* as the GEMM's packed A: 16 blocks of [P rounded to mr, Q] */                                       \
        tn__gemm_packA_##SFX(P, Q, U + r * P * Q, Q, 1, kn->mr, Up + r * tn__gemm_roundup(P, kn->mr) * Q);                         \
}                                                                                                                                  \
                                                                                                                                   \
/* The transforms' inner loops, over the tiles of a block (restrict: they vectorise). */                                           \
static void tn__wino_bt_cols_##SFX(int64_t n, const T *TN__RESTRICT d0, const T *TN__RESTRICT d1,                                  \
                                   const T *TN__RESTRICT d2, const T *TN__RESTRICT d3, T *TN__RESTRICT e0,                         \
                                   T *TN__RESTRICT e1, T *TN__RESTRICT e2, T *TN__RESTRICT e3)                                     \
{                                                                                                                                  \
    int64_t j;                                                                                                                     \
    for (j = 0; j < n; j++) {                                                                                                      \
        const T a0 = d0[j], a1 = d1[j], a2 = d2[j], a3 = d3[j];                                                                    \
        e0[j] = a0 - a2; e1[j] = a1 + a2; e2[j] = a2 - a1; e3[j] = a1 - a3;                                                        \
    }                                                                                                                              \
}                                                                                                                                  \
static void tn__wino_bt_rows_##SFX(int64_t nt, int64_t cp, int64_t cr, int64_t pn, int64_t ps, const T *TN__RESTRICT ek,           \
                                   T *TN__RESTRICT v0, T *TN__RESTRICT v1, T *TN__RESTRICT v2, T *TN__RESTRICT v3)                 \
{ /* tiles i < nt (at column 2i of ek) to columns c + i of the GEMM's packed B, c = cp pn + cr:                                    \
     column c in panel c / pn (panels ps apart) at c % pn */                                                                       \
    int64_t i, j;                                                                                                                  \
    for (i = 0; i < nt; i += j, cp++, cr = 0) {                                                                                    \
        const int64_t o = cp * ps + cr, n = TN__MIN(pn - cr, nt - i);                                                              \
        const T *e = ek + 2 * i;                                                                                                   \
        for (j = 0; j < n; j++) {                                                                                                  \
            const T a0 = e[2 * j], a1 = e[2 * j + 1], a2 = e[2 * j + 2], a3 = e[2 * j + 3];                                        \
            v0[o + j] = a0 - a2; v1[o + j] = a1 + a2; v2[o + j] = a2 - a1; v3[o + j] = a1 - a3;                                    \
        }                                                                                                                          \
    }                                                                                                                              \
}                                                                                                                                  \
static void tn__wino_at_##SFX(int64_t nt, int64_t S, const T *TN__RESTRICT m, T bv, T *TN__RESTRICT y00,                           \
                              T *TN__RESTRICT y01, T *TN__RESTRICT y10, T *TN__RESTRICT y11)                                       \
{                                                                                                                                  \
    int64_t i;                                                                                                                     \
    for (i = 0; i < nt; i++) {                                                                                                     \
        const T r0 = m[i] + m[4 * S + i] + m[8 * S + i], u0 = m[4 * S + i] - m[8 * S + i] - m[12 * S + i];                         \
        const T r1 = m[S + i] + m[5 * S + i] + m[9 * S + i], u1 = m[5 * S + i] - m[9 * S + i] - m[13 * S + i];                     \
        const T r2 = m[2 * S + i] + m[6 * S + i] + m[10 * S + i], u2 = m[6 * S + i] - m[10 * S + i] - m[14 * S + i];               \
        const T r3 = m[3 * S + i] + m[7 * S + i] + m[11 * S + i], u3 = m[7 * S + i] - m[11 * S + i] - m[15 * S + i];               \
        y00[i] = r0 + r1 + r2 + bv; y01[i] = r1 - r2 - r3 + bv;                                                                    \
        y10[i] = u0 + u1 + u2 + bv; y11[i] = u1 - u2 - u3 + bv;                                                                    \
    }                                                                                                                              \
}                                                                                                                                  \
                                                                                                                                   \
static void tn__wino_a_cols_##SFX(int64_t n, const T *TN__RESTRICT a, const T *TN__RESTRICT c, T *TN__RESTRICT f0,                 \
                                  T *TN__RESTRICT f1, T *TN__RESTRICT f2, T *TN__RESTRICT f3)                                      \
{ /* A g for the rows a, c of 2x2 tiles of g */                                                                                    \
    int64_t j;                                                                                                                     \
    for (j = 0; j < n; j++) { f0[j] = a[j]; f1[j] = a[j] + c[j]; f2[j] = a[j] - c[j]; f3[j] = -c[j]; }                             \
}                                                                                                                                  \
static void tn__wino_a_rows_##SFX(int64_t nt, const T *TN__RESTRICT fk, T *TN__RESTRICT y0, T *TN__RESTRICT y1,                    \
                                  T *TN__RESTRICT y2, T *TN__RESTRICT y3)                                                          \
{ /* (A g) A^T, tile i at column 2i */                                                                                             \
    int64_t i;                                                                                                                     \
    for (i = 0; i < nt; i++) {                                                                                                     \
        const T u = fk[2 * i], v = fk[2 * i + 1];                                                                                  \
        y0[i] = u; y1[i] = u + v; y2[i] = u - v; y3[i] = -v;                                                                       \
    }                                                                                                                              \
}                                                                                                                                  \
                                                                                                                                   \
/* The rows of tiles, portable (tn__wino_in_row_f32_avx512 and its neighbours say what they                                        \
   compute); E: 4 (2 tw + 2) elements of scratch. */                                                                               \
static void tn__wino_in_row_##SFX(const T *const *d, int64_t j0, int64_t j1, int64_t tw, int64_t cp, int64_t cr, int64_t pn, int64_t ps,\
                                  T *V, int64_t vx, T *E)                                                                          \
{                                                                                                                                  \
    const int64_t wp = 2 * tw + 2;                                                                                                 \
    T *e0 = E, *e1 = E + wp, *e2 = E + 2 * wp, *e3 = E + 3 * wp;                                                                   \
    int64_t j;                                                                                                                     \
    int k;                                                                                                                         \
    for (j = 0; j < j0; j++) e0[j] = e1[j] = e2[j] = e3[j] = (T)0;                                                                 \
    tn__wino_bt_cols_##SFX(j1 - j0, d[0] + j0, d[1] + j0, d[2] + j0, d[3] + j0, e0 + j0, e1 + j0, e2 + j0, e3 + j0);               \
    for (j = j1; j < wp; j++) e0[j] = e1[j] = e2[j] = e3[j] = (T)0;                                                                \
    for (k = 0; k < 4; k++) { /* (B^T d) B: along the row, tile j at column 2j */                                                  \
        T *v0 = V + 4 * k * vx;                                                                                                    \
        tn__wino_bt_rows_##SFX(tw, cp, cr, pn, ps, E + k * wp, v0, v0 + vx, v0 + 2 * vx, v0 + 3 * vx);                             \
    }                                                                                                                              \
}                                                                                                                                  \
static void tn__wino_out_row_##SFX(const T *a, const T *b, int64_t tw, T *yr, int64_t ow)                                          \
{                                                                                                                                  \
    int64_t j;                                                                                                                     \
    (void)tw;                                                                                                                      \
    for (j = 0; j < ow / 2; j++) { yr[2 * j] = a[j]; yr[2 * j + 1] = b[j]; }                                                       \
    if (ow & 1) yr[ow - 1] = a[ow / 2];                                                                                            \
}                                                                                                                                  \
static void tn__wino_gy_row_##SFX(const T *a, const T *b, int64_t j1, int64_t tw, T *Y, int64_t ys, T *E)                          \
{                                                                                                                                  \
    const int64_t wp = 2 * tw + 2;                                                                                                 \
    T *f0 = E, *f1 = E + wp, *f2 = E + 2 * wp, *f3 = E + 3 * wp;                                                                   \
    int64_t j;                                                                                                                     \
    int k;                                                                                                                         \
    tn__wino_a_cols_##SFX(j1, a, b, f0, f1, f2, f3);                                                                               \
    for (j = j1; j < 2 * tw; j++) f0[j] = f1[j] = f2[j] = f3[j] = (T)0;                                                            \
    for (k = 0; k < 4; k++) { /* (A gy) A^T: along the row, tile j at column 2j */                                                 \
        T *y0 = Y + 4 * k * ys;                                                                                                    \
        tn__wino_a_rows_##SFX(tw, E + k * wp, y0, y0 + ys, y0 + 2 * ys, y0 + 3 * ys);                                              \
    }                                                                                                                              \
}                                                                                                                                  \
                                                                                                                                   \
/* V = B^T d B of the input tiles of tile rows [r0, r0 + nrow) of x [N, Q, H, W] (contiguous,                                      \
   padded by ph, pw; th rows of tw tiles per image): element (xi, q, tile i) at                                                    \
   V + xi * vx + q * vq + (i / pn) * ps + i % pn (the GEMM's packed panels, or rows), tile i                                       \
   of the block being tile i % tw of its row i / tw. E: scratch for a row. */                                                      \
static void tn__wino_input_##SFX(const T *x, int64_t Q, int64_t H, int64_t W, int64_t ph, int64_t pw,                              \
                                 int64_t th, int64_t tw, int64_t r0, int64_t nrow, const T *zero,                                  \
                                 T *E, T *V, int64_t vx, int64_t vq, int64_t pn, int64_t ps)                                       \
{                                                                                                                                  \
    const int64_t wp = 2 * tw + 2, j0 = TN__MIN(pw, wp), j1 = TN__MAX(j0, TN__MIN(pw + W, wp));                                    \
    void (*row)(const T *const *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, T *, int64_t, T *) = tn__wino_in_row_##SFX;\
    int64_t q, lr;                                                                                                                 \
    TN__WINO_PICK_##SFX(row, tn__wino_in_row_##SFX);                                                                               \
    for (q = 0; q < Q; q++) { /* channel by channel: the rows of V written stay in L1 */                                           \
        int64_t n = r0 / th, ty = r0 % th, cp = 0, cr = 0; /* tile row r0 + lr: row ty of image n; its tiles from column cp pn + cr */\
        for (lr = 0; lr < nrow; lr++) {                                                                                            \
            const T *d[4];                                                                                                         \
            int k;                                                                                                                 \
            for (k = 0; k < 4; k++) {                                                                                              \
                const int64_t iy = 2 * ty - ph + k;                                                                                \
                d[k] = (iy >= 0 && iy < H ? x + ((n * Q + q) * H + iy) * W : zero) - pw;                                           \
            }                                                                                                                      \
            row(d, j0, j1, tw, cp, cr, pn, ps, V + q * vq, vx, E);                                                                 \
            if (++ty == th) { ty = 0; n++; }                                                                                       \
            for (cr += tw; cr >= pn; cr -= pn) cp++;                                                                               \
        }                                                                                                                          \
    }                                                                                                                              \
}                                                                                                                                  \
/* y [N, P, oh, ow] (contiguous) = the 3x3 convolution of x [N, Q, H, W] (contiguous)                                              \
   padded by ph, pw, + b[p] when b, with Up from tn__wino_weights. Each thread takes a share                                       \
   of the batch's rows of 2x2 output tiles and goes through it in blocks of br rows: the                                           \
   input transform straight into the GEMM's packed B (V: 16 x [Q, tb] in panels of nr                                              \
   tiles), the 16 products M[xi] = U[xi] V[xi] [P, tb] by the GEMM's macro kernel, the                                             \
   output transform into y. Per thread buf holds 16 Q tbp + 16 P tb + 8 tb + 2 elements                                            \
   (tb = br t1 >= the br tw tiles of a block, tbp = tb rounded up to nr), and zero W zeros. Every tile is computed alike                                         \
   in whichever block it falls: the same result for any thread count. */                                                           \
static void tn__wino_conv_##SFX(const T *x, int64_t N, int64_t Q, int64_t H, int64_t W,                                            \
                                int64_t ph, int64_t pw, const tn__gemm_kern_##SFX *kn,                                             \
                                const T *Up, int64_t P, const T *b, T *y, int64_t oh, int64_t ow,                                  \
                                int64_t br, T *buf, const T *zero, int nthr)                                                       \
{                                                                                                                                  \
    const int64_t th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1, R = N * th;                                                            \
    const int64_t tb = br * t1, tbp = tn__gemm_roundup(tb, kn->nr), nr = kn->nr;                                                   \
    const int64_t vx = Q * tbp + 16, S = P * tb + 16; /* the 16 V and M a line off 4 KiB multiples: no set conflicts */            \
    const int64_t per = 16 * vx + 16 * S + 8 * tb + 2, ups = tn__gemm_roundup(P, kn->mr) * Q;                                      \
    TN__OMP_PARALLEL_FOR(nthr)                                                                                                     \
    for (int t = 0; t < nthr; t++) {                                                                                               \
        T *V = buf + t * per, *M = V + 16 * vx, *E = M + 16 * S, *O4 = E; /* E is done by then */                                  \
        const int64_t r1 = R * (t + 1) / nthr;                                                                                     \
        int64_t r0, lr, p, xi;                                                                                                     \
        void (*out_row)(const T *, const T *, int64_t, T *, int64_t) = tn__wino_out_row_##SFX;                                     \
        void (*at)(int64_t, int64_t, const T *, T, T *, T *, T *, T *) = tn__wino_at_##SFX;                                        \
        TN__WINO_PICK_##SFX(out_row, tn__wino_out_row_##SFX);                                                                      \
        TN__WINO_PICK_##SFX(at, tn__wino_at_##SFX);                                                                                \
        for (r0 = R * t / nthr; r0 < r1; r0 += br) {                                                                               \
            const int64_t nrow = TN__MIN(br, r1 - r0), nt = nrow * (t1 - 1);                                                       \
            tn__wino_input_##SFX(x, Q, H, W, ph, pw, th, t1 - 1, r0, nrow, zero, E, V, vx, nr, nr, Q * nr);                        \
            for (xi = 0; xi < 16; xi++)                                                                                            \
                tn__gemm_macro_##SFX(kn, P, nt, Q, (T)1, Up + xi * ups, V + xi * vx, NULL, 0, (T)0, M + xi * S, tb, 1);            \
            for (p = 0; p < P; p++) { /* A^T m A: four outputs per tile, then into y */                                            \
                T *y00 = O4, *y01 = O4 + tb, *y10 = O4 + 2 * tb, *y11 = O4 + 3 * tb;                                               \
                at(nt, S, M + p * tb, b ? b[p] : (T)0, y00, y01, y10, y11);                                                        \
                for (lr = 0; lr < nrow; lr++) {                                                                                    \
                    const int64_t n = (r0 + lr) / th, ty = (r0 + lr) % th, o = lr * (t1 - 1);                                      \
                    T *yr = y + ((n * P + p) * oh + 2 * ty) * ow;                                                                  \
                    out_row(y00 + o, y01 + o, t1 - 1, yr, ow);                                                                     \
                    if (2 * ty + 1 < oh) out_row(y10 + o, y11 + o, t1 - 1, yr + ow, ow);                                           \
                }                                                                                                                  \
            }                                                                                                                      \
        }                                                                                                                          \
    }                                                                                                                              \
}                                                                                                                                  \
                                                                                                                                   \
/* The weight gradient gw [P, Q, 3, 3] (contiguous) of y = conv3x3(x, w) padded by ph, pw,                                         \
   from gy [N, P, oh, ow] and x [N, Q, H, W] (both contiguous): with the forward's tiles,                                          \
   gw = G^T [sum over tiles of (A gy A^T) . (B^T d B)] G (the forward's bilinear form turned                                       \
   around), so per block the 16 products Z[xi] += Y[xi] V[xi]^T [P, Q] over the block's                                            \
   tiles (Y: 16 x [P, tb], V: 16 x [Q, tb], rows). Each thread sums its own Z (buf: per                                            \
   thread 16 Q tb + 16 P tb + 8 tb + 2 + 16 P Q elements); the threads' sums are added in                                          \
   thread order: the same bits for a given thread count. */                                                                        \
static int tn__wino_wgrad_##SFX(const T *x, const T *gy, int64_t N, int64_t Q, int64_t H, int64_t W,                               \
                                int64_t ph, int64_t pw, int64_t P, int64_t oh, int64_t ow, T *gw,                                  \
                                int64_t br, T *buf, const T *zero, int nthr)                                                       \
{                                                                                                                                  \
    const int64_t th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1, R = N * th, tb = br * t1;                                               \
    const int64_t vx = Q * tb + 16, ys = P * tb + 16, zo = 16 * (vx + ys) + 8 * tb + 2, per = zo + 16 * P * Q; /* as in conv */    \
    int64_t p, q;                                                                                                                  \
    int failed = 0, t;                                                                                                             \
    TN__OMP_PARALLEL_FOR(nthr)                                                                                                     \
    for (t = 0; t < nthr; t++) {                                                                                                   \
        T *V = buf + t * per, *Y = V + 16 * vx, *E = Y + 16 * ys, *Z = buf + t * per + zo;                                         \
        const int64_t r1 = R * (t + 1) / nthr;                                                                                     \
        int64_t r0, lr, pp, xi;                                                                                                    \
        void (*gy_row)(const T *, const T *, int64_t, int64_t, T *, int64_t, T *) = tn__wino_gy_row_##SFX;                         \
        TN__WINO_PICK_##SFX(gy_row, tn__wino_gy_row_##SFX);                                                                        \
        for (r0 = R * t / nthr; r0 < r1; r0 += br) {                                                                               \
            const int64_t nrow = TN__MIN(br, r1 - r0), nt = nrow * (t1 - 1);                                                       \
            tn__wino_input_##SFX(x, Q, H, W, ph, pw, th, t1 - 1, r0, nrow, zero, E, V, vx, tb, tb, 0);                             \
            for (pp = 0; pp < P; pp++) /* Y[.][pp] = A gy A^T of the block's 2x2 tiles of gy */                                    \
                for (lr = 0; lr < nrow; lr++) {                                                                                    \
                    const int64_t n = (r0 + lr) / th, ty = (r0 + lr) % th;                                                         \
                    const T *a = gy + ((n * P + pp) * oh + 2 * ty) * ow, *c = 2 * ty + 1 < oh ? a + ow : zero;                     \
                    gy_row(a, c, ow, t1 - 1, Y + pp * tb + lr * (t1 - 1), ys, E);                                                  \
                }                                                                                                                  \
            for (xi = 0; xi < 16; xi++)                                                                                            \
                if (tn__gemm_##SFX(P, Q, nt, (T)1, Y + xi * ys, tb, 1, V + xi * vx, 1, tb, (T)1, Z + xi * P * Q, Q, 1))            \
                    TN__STORE_RELAXED(&failed, 1);                                                                                 \
        }                                                                                                                          \
    }                                                                                                                              \
    for (t = 1; t < nthr; t++) { /* the threads' sums, in thread order */                                                          \
        const T *zt = buf + t * per + zo;                                                                                          \
        T *z0 = buf + zo;                                                                                                          \
        for (p = 0; p < 16 * P * Q; p++) z0[p] += zt[p];                                                                           \
    }                                                                                                                              \
    for (p = 0; p < P; p++) /* G^T z G: 4x4 -> 3x3 */                                                                              \
        for (q = 0; q < Q; q++) {                                                                                                  \
            const T *z = buf + zo + p * Q + q;                                                                                     \
            T s[12], *o = gw + (p * Q + q) * 9;                                                                                    \
            int c;                                                                                                                 \
            for (c = 0; c < 4; c++) { /* G^T z: along the columns */                                                               \
                const T z0 = z[c * P * Q], z1 = z[(4 + c) * P * Q], z2 = z[(8 + c) * P * Q], z3 = z[(12 + c) * P * Q];             \
                s[c] = z0 + (T)0.5 * (z1 + z2); s[4 + c] = (T)0.5 * (z1 - z2); s[8 + c] = (T)0.5 * (z1 + z2) + z3;                 \
            }                                                                                                                      \
            for (c = 0; c < 3; c++) { /* (G^T z) G: along the rows */                                                              \
                const T *r = s + 4 * c;                                                                                            \
                o[3 * c] = r[0] + (T)0.5 * (r[1] + r[2]);                                                                          \
                o[3 * c + 1] = (T)0.5 * (r[1] - r[2]);                                                                             \
                o[3 * c + 2] = (T)0.5 * (r[1] + r[2]) + r[3];                                                                      \
            }                                                                                                                      \
        }                                                                                                                          \
    return failed ? -1 : 0;                                                                                                        \
}

TN__WINO_DEFINE(float, f32)
TN__WINO_DEFINE(double, f64)
#undef TN__WINO_DEFINE
/* Tile rows per block (of R): a block's transforms (16 (P + Q) values per tile, t1 tiles a
   row) within TN_CONV_BLOCK_BYTES; where the GEMM takes the block's t1 - 1 tiles a row in
   panels of nr columns (nr > 1), the count between half and all of that whose last panel
   is fullest (at 14x14, 18 rows: 126 tiles in 128 columns, not 147 in 160). */
static int64_t tn__wino_block_rows(int64_t R, int64_t PQ, int64_t t1, size_t es, int64_t nr) {
    const int64_t most = tn__block_units((size_t)(16 * PQ * t1) * es, R);
    int64_t best = most;
    for (int64_t br = (most + 1) / 2; nr > 1 && br < most; br++)   /* padded columns per tile: smaller is better */
        if (tn__gemm_roundup(br * (t1 - 1), nr) * best < tn__gemm_roundup(best * (t1 - 1), nr) * br) best = br;
    return best;
}
static bool tn__conv_wino_ok(const tn_tensor *x, const tn_tensor *w, const int64_t *g, int64_t G, bool input_grad) {
    return tn__conv_fast_paths && G == 1 && g[0] == 3 && g[1] == 3 && g[2] == 1 && g[3] == 1 && g[6] == 1 && g[7] == 1 &&
           (x->dtype == TN_F32 || x->dtype == TN_F64) && w->shape[0] >= 8 && w->shape[1] >= 8 && (!input_grad || (g[4] <= 2 && g[5] <= 2));
}
/* y (new, contiguous) = conv(x, w) + b (flip = 0: y [N, O, oh, ow]), or the input gradient
   y [N, C, H, W] of x = gy [N, O, oh, ow] (flip = 1), by Winograd; w, b contiguous. */
static int tn__conv_wino_cpu(tn_tensor *y, tn_tensor *x, const tn_tensor *w, const tn_tensor *b, const int64_t *g, int flip) {
    const int64_t N = x->shape[0], Q = x->shape[1], H = x->shape[2], W = x->shape[3], P = y->shape[1], oh = y->shape[2], ow = y->shape[3];
    const int64_t ph = flip ? 2 - g[4] : g[4], pw = flip ? 2 - g[5] : g[5], th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1;
    const bool f32 = x->dtype == TN_F32;
    const size_t es = tn_dtype_size(x->dtype);
    tn__gemm_kern_f32 k32 = tn__gemm_kern_for_f32(P);   /* the macro kernel's panels: P rows, tiles as columns */
    tn__gemm_kern_f64 k64 = tn__gemm_kern_for_f64(P);
    const int64_t mr = f32 ? k32.mr : k64.mr, nr = f32 ? k32.nr : k64.nr;
    if (tn_numel(y) == 0) return 0;
    const int64_t br = tn__wino_block_rows(N * th, P + Q, t1, es, nr), tb = br * t1;
    const int64_t vx = Q * tn__gemm_roundup(tb, nr) + 16, per = 16 * vx + 16 * (P * tb + 16) + 8 * tb + 2;   /* as tn__wino_conv */
    const int nthr = tn__par_threads(N * P * Q * oh * ow, N * th);
    tn_tensor *xc = tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    tn_tensor *U = tn__new(x->dtype, TN_CPU, TN_SHAPE(16 * P * Q + 16 * tn__gemm_roundup(P, mr) * Q));
    tn_tensor *buf = tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr * per + W));
    int failed = !xc || !U || !buf;
    if (!failed) {
        char *bp = (char *)tn_data_ptr(buf), *up = (char *)tn_data_ptr(U), *zero = bp + (size_t)(nthr * per) * es;
        for (int t = 0; t < nthr; t++) {   /* per thread V (its packed columns past the last tile) and E; M is written first */
            memset(bp + (size_t)(t * per) * es, 0, (size_t)(16 * vx) * es);
            memset(bp + (size_t)(t * per + per - (8 * tb + 2)) * es, 0, (size_t)(8 * tb + 2) * es);
        }
        memset(zero, 0, (size_t)W * es);
        if (f32) {
            tn__wino_weights_f32((const float *)tn_data_ptr(w), w->shape[0], w->shape[1], flip, (float *)up, &k32, (float *)up + 16 * P * Q);
            tn__wino_conv_f32((const float *)tn_data_ptr(xc), N, Q, H, W, ph, pw, &k32, (const float *)up + 16 * P * Q, P,
                              b ? (const float *)tn_data_ptr(b) : NULL, (float *)tn_data_ptr(y), oh, ow, br, (float *)bp, (const float *)zero, nthr);
        } else {
            tn__wino_weights_f64((const double *)tn_data_ptr(w), w->shape[0], w->shape[1], flip, (double *)up, &k64, (double *)up + 16 * P * Q);
            tn__wino_conv_f64((const double *)tn_data_ptr(xc), N, Q, H, W, ph, pw, &k64, (const double *)up + 16 * P * Q, P,
                              b ? (const double *)tn_data_ptr(b) : NULL, (double *)tn_data_ptr(y), oh, ow, br, (double *)bp, (const double *)zero, nthr);
        }
    }
    tn_release(xc); tn_release(U); tn_release(buf);
    return failed ? TN__FAIL_INT(flip ? "conv2d backward: out of memory" : "conv2d: out of memory") : 0;
}
/* gw [O, C, 3, 3] (new, contiguous) = the weight gradient of y = conv(x, w) from gy, by Winograd. */
static int tn__conv_wino_wgrad_cpu(tn_tensor *gw, tn_tensor *x, tn_tensor *gy, const int64_t *g) {
    const int64_t N = x->shape[0], Q = x->shape[1], H = x->shape[2], W = x->shape[3], P = gy->shape[1], oh = gy->shape[2], ow = gy->shape[3];
    const int64_t th = (oh + 1) / 2, t1 = (ow + 1) / 2 + 1;
    const size_t es = tn_dtype_size(x->dtype);
    const int64_t br = tn__wino_block_rows(N * th, P + Q, t1, es, 1), tb = br * t1, zo = 16 * (Q + P) * tb + 512 + 8 * tb + 2, per = zo + 16 * P * Q;   /* as tn__wino_wgrad */
    const int nthr = tn__par_threads(N * P * Q * oh * ow, N * th);
    if (tn_numel(gy) == 0 || tn_numel(x) == 0) return tn__backend(TN_CPU)->fill(gw, 0);
    tn_tensor *xc = tn_is_contiguous(x) ? tn_retain(x) : tn__copy_as(x, x->dtype, TN_CPU);
    tn_tensor *gyc = tn_is_contiguous(gy) ? tn_retain(gy) : tn__copy_as(gy, gy->dtype, TN_CPU);
    tn_tensor *buf = tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr * per + W + ow));
    int failed = !xc || !gyc || !buf;
    if (!failed) {
        char *bp = (char *)tn_data_ptr(buf), *zero = bp + (size_t)(nthr * per) * es;
        for (int t = 0; t < nthr; t++)   /* per thread E and the sums Z; V and Y are written first */
            memset(bp + (size_t)(t * per + zo - (8 * tb + 2)) * es, 0, (size_t)(8 * tb + 2 + 16 * P * Q) * es);
        memset(zero, 0, (size_t)(W + ow) * es);
        failed = x->dtype == TN_F32
                     ? tn__wino_wgrad_f32((const float *)tn_data_ptr(xc), (const float *)tn_data_ptr(gyc), N, Q, H, W, g[4], g[5], P, oh, ow,
                                          (float *)tn_data_ptr(gw), br, (float *)bp, (const float *)zero, nthr)
                     : tn__wino_wgrad_f64((const double *)tn_data_ptr(xc), (const double *)tn_data_ptr(gyc), N, Q, H, W, g[4], g[5], P, oh, ow,
                                          (double *)tn_data_ptr(gw), br, (double *)bp, (const double *)zero, nthr);
    }
    tn_release(xc); tn_release(gyc); tn_release(buf);
    return failed ? TN__FAIL_INT("conv2d backward: out of memory") : 0;
}
/* y [N, O, oh, ow] (new, contiguous) = conv(x [N, C, H, W], w [O, C/G, kh, kw] contiguous) + b (contiguous or NULL). */
static int tn__conv_forward_cpu(tn_tensor *y, tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t *g, int64_t G) {
    const int64_t N = x->shape[0], C = x->shape[1], O = w->shape[0], K = C * g[0] * g[1], Kg = K / G, Og = O / G, Cg = C / G, L = g[8] * g[9];
    const bool direct = tn__conv_direct(x, g);
    const size_t es = tn_dtype_size(x->dtype);
    const int64_t R = direct ? g[8] : tn__conv_block_rows(K, g, es, 1), IB = tn__conv_block_images(K, g, es, 1, R, direct);
    const int64_t LB = IB > 1 ? IB * L : R * g[9];   /* columns of a block */
    if (tn__conv_smallk_ok(x, g, G)) return tn__conv_smallk_cpu(0, x, w, b, y, g);
    if (tn__conv_wino_ok(x, w, g, G, false)) return tn__conv_wino_cpu(y, x, w, b, g, 0);
    if (tn__conv_dw_ok(x, G)) return tn__conv_dw_cpu(0, x, w, b, y, g);
    const tn_backend *be = tn__backend(TN_CPU);
    const int nthr = tn__par_threads(N * K * L, N);
    tn_tensor *buf = direct ? NULL : tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, K, LB));
    tn_tensor *ybuf = IB > 1 ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, O, LB)) : NULL;   /* [O, images*L]: then into y */
    int failed = (!direct && !buf) || (IB > 1 && !ybuf);
    const char *bp = b ? (const char *)tn_data_ptr(b) : NULL;
    char *yp = (char *)tn_data_ptr(y);
    if (!failed) {
    TN__OMP_PARALLEL_FOR(nthr)
    for (int t = 0; t < nthr; t++) {
        const int64_t n1 = N * (t + 1) / nthr;
        for (int64_t n = N * t / nthr; n < n1 && IB > 1; n += IB) {   /* several whole images per block */
            const int64_t ni = TN__MIN(IB, n1 - n), Lc = ni * L;
            const int64_t cb = buf->offset + t * K * LB, yb = ybuf->offset + t * O * LB;
            for (int64_t i = 0; i < ni; i++) {
                tn_tensor img = tn__image_view(x, n + i), cols = tn__mat_view(buf, cb + i * L, K, L, Lc, 1);
                if (be->im2col(0, &cols, &img, g)) TN__STORE_RELAXED(&failed, 1);
            }
            for (int64_t gi = 0; gi < G; gi++) {
                tn_tensor A = tn__mat_view(w, w->offset + gi * Og * Kg, Og, Kg, Kg, 1), B = tn__mat_view(buf, cb + gi * Kg * Lc, Kg, Lc, Lc, 1);
                tn_tensor Cm = tn__mat_view(ybuf, yb + gi * Og * Lc, Og, Lc, Lc, 1);
                if (be->matmul(&Cm, &A, &B, 1, 0)) TN__STORE_RELAXED(&failed, 1);
            }
            for (int64_t i = 0; i < ni; i++) for (int64_t o = 0; o < O; o++) {   /* [O, ni*L] -> y[n + i], + bias */
                if (es == 4) {
                    const float *src = (const float *)tn_data_ptr(ybuf) + t * O * LB + o * Lc + i * L, v = bp ? ((const float *)bp)[o] : 0.0f;
                    float *dst = (float *)yp + ((n + i) * O + o) * L;
                    for (int64_t l = 0; l < L; l++) dst[l] = src[l] + v;
                } else {
                    const double *src = (const double *)tn_data_ptr(ybuf) + t * O * LB + o * Lc + i * L, v = bp ? ((const double *)bp)[o] : 0.0;
                    double *dst = (double *)yp + ((n + i) * O + o) * L;
                    for (int64_t l = 0; l < L; l++) dst[l] = src[l] + v;
                }
            }
        }
        for (int64_t n = N * t / nthr; n < n1 && IB == 1; n++) {   /* one image, in blocks of rows */
            tn_tensor img = tn__image_view(x, n);
            char *yn = yp + (size_t)(n * O * L) * es;
            for (int64_t o = 0; bp && o < O; o++) {   /* the bias first, then the GEMMs add to it */
                if (es == 4) { float v = ((const float *)bp)[o], *r = (float *)yn + o * L; for (int64_t l = 0; l < L; l++) r[l] = v; }
                else { double v = ((const double *)bp)[o], *r = (double *)yn + o * L; for (int64_t l = 0; l < L; l++) r[l] = v; }
            }
            for (int64_t y0 = 0; y0 < g[8]; y0 += R) {
                const int64_t rows = TN__MIN(R, g[8] - y0), Lc = rows * g[9];
                int64_t gb[10];
                tn__conv_block_geom(g, y0, rows, gb);
                tn_tensor cols = direct ? img : tn__mat_view(buf, buf->offset + t * K * LB, K, Lc, Lc, 1);
                if (!direct && be->im2col(0, &cols, &img, gb)) { TN__STORE_RELAXED(&failed, 1); break; }
                for (int64_t gi = 0; gi < G; gi++) {
                    tn_tensor A = tn__mat_view(w, w->offset + gi * Og * Kg, Og, Kg, Kg, 1);
                    tn_tensor B = direct ? tn__mat_view(x, img.offset + gi * Cg * x->strides[1], Cg, L, x->strides[1], x->strides[3])
                                         : tn__mat_view(buf, cols.offset + gi * Kg * Lc, Kg, Lc, Lc, 1);
                    tn_tensor Cm = tn__mat_view(y, y->offset + n * O * L + gi * Og * L + y0 * g[9], Og, Lc, L, 1);
                    if (be->matmul(&Cm, &A, &B, 1, bp ? 1 : 0)) TN__STORE_RELAXED(&failed, 1);
                }
            }
        }
    }
    }
    tn_release(buf); tn_release(ybuf);
    return failed ? TN__FAIL_INT("conv2d: out of memory") : 0;
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
    const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], O = w->shape[0];
    const int64_t K = C * g[0] * g[1], Kg = K / G, Og = O / G, Cg = C / G, L = g[8] * g[9];
    const bool direct = tn__conv_direct(x, g);
    const size_t es = tn_dtype_size(x->dtype);
    const int nbuf = gx && gw ? 2 : 1;
    const int64_t R = direct ? g[8] : tn__conv_block_rows(K, g, es, nbuf), IB = tn__conv_block_images(K, g, es, nbuf, R, direct);
    const int64_t LB = IB > 1 ? IB * L : R * g[9];
    const bool wt = gw && tn__gemm_tiles(x->dtype, Kg, Og) < tn__gemm_tiles(x->dtype, Og, Kg);   /* per group: [Kg, Og] */
    const tn_backend *be = tn__backend(TN_CPU);
    const int nthr = tn__par_threads(N * K * L, N);
    tn_tensor *cbuf = gw && !direct ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, K, LB)) : NULL;
    tn_tensor *gbuf = gx && !direct ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, K, LB)) : NULL;
    tn_tensor *ybuf = IB > 1 ? tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, O, LB)) : NULL;   /* gy of a block as [O, images*L] */
    tn_tensor *wbuf = gw ? (nthr == 1 && !wt ? tn_retain(gw) : tn__new(x->dtype, TN_CPU, TN_SHAPE(nthr, G, wt ? Kg : Og, wt ? Og : Kg))) : NULL;
    int failed = (gw && !wbuf) || (gw && !direct && !cbuf) || (gx && !direct && !gbuf) || (IB > 1 && !ybuf) || (wbuf && be->fill(wbuf, 0));
    if (!failed) {
        TN__OMP_PARALLEL_FOR(nthr)
        for (int t = 0; t < nthr; t++) {
            const int64_t n1 = N * (t + 1) / nthr;
            for (int64_t n = N * t / nthr; n < n1; n += IB) {
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
                            if (be->im2col(0, &cols, &im, IB > 1 ? g : gb)) TN__STORE_RELAXED(&failed, 1);
                        }
                    for (int64_t gi = 0; gi < G; gi++) {
                        tn_tensor gyn = tn__mat_view(gys_t, gyo + gi * Og * gys, Og, Lc, gys, 1);
                        if (gw) {   /* gw[g] += gy[g] @ cols[g]^T, or gw[g]^T += cols[g] @ gy[g]^T */
                            tn_tensor Cm = tn__mat_view(wbuf, wbuf->offset + (t * G + gi) * Og * Kg, wt ? Kg : Og, wt ? Og : Kg, wt ? Og : Kg, 1);
                            tn_tensor cm = direct ? tn__mat_view(x, img.offset + gi * Cg * x->strides[1], Cg, L, x->strides[1], x->strides[3])
                                                  : tn__mat_view(cbuf, cb + gi * Kg * Lc, Kg, Lc, Lc, 1);
                            tn_tensor cmT = tn__mat_view(&cm, cm.offset, Lc, Kg, cm.strides[2], cm.strides[1]);
                            tn_tensor gynT = tn__mat_view(&gyn, gyn.offset, Lc, Og, 1, gys);
                            if (wt ? be->matmul(&Cm, &cm, &gynT, 1, 1) : be->matmul(&Cm, &gyn, &cmT, 1, 1)) TN__STORE_RELAXED(&failed, 1);
                        }
                        if (gx) {   /* the columns' gradient w[g]^T @ gy[g] (1x1: the image's) */
                            tn_tensor A = tn__mat_view(w, w->offset + gi * Og * Kg, Kg, Og, 1, Kg);
                            tn_tensor Cm = direct ? tn__mat_view(gx, gx->offset + n * C * L + gi * Cg * L, Cg, L, L, 1)
                                                  : tn__mat_view(gbuf, gcb + gi * Kg * Lc, Kg, Lc, Lc, 1);
                            if (be->matmul(&Cm, &A, &gyn, 1, 0)) TN__STORE_RELAXED(&failed, 1);
                        }
                    }
                    if (gx && !direct)   /* folded back onto the images */
                        for (int64_t i = 0; i < (IB > 1 ? ni : 1); i++) {
                            tn_tensor gimg = tn__image_view(gx, n + i), gcols = tn__mat_view(gbuf, gcb + i * L, K, Lc / (IB > 1 ? ni : 1), Lc, 1);
                            if (be->im2col(1, &gcols, &gimg, IB > 1 ? g : gb)) TN__STORE_RELAXED(&failed, 1);
                        }
                }
            }
        }
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
    if (nin > 2 && tn_ctx_needs_grad(n, 2) && !(gin[2] = tn_sum_dims(gy, TN_SHAPE(0, 2, 3), false))) return -1;
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
/* y = conv2d(x4, w4) + b recorded as one node (its backward: tn__conv_bw). */
static tn_tensor *tn__conv_record(tn_tensor *x4, tn_tensor *w4, tn_tensor *b, const int64_t *g, int64_t G, tn_tensor *y) {
    tn_tensor *ins[3] = {x4, w4, b};
    tn_node *nd = tn__fn_node("ConvolutionBackward0", tn__conv_bw, ins, b ? 3 : 2);
    if (nd) {
        memcpy(nd->i, g, 10 * sizeof(int64_t));
        nd->i[10] = G;
        nd->ni = 11;
        tn__node_save(nd, x4);
        tn__node_save(nd, w4);
    }
    return tn__own(tn__node_attach(nd, y));
}
/* conv2d of x4 [N, C, H, W] by w4 on the CPU, + b, as one node. */
static tn_tensor *tn__conv2d_cpu(tn_tensor *x4, tn_tensor *w4, tn_tensor *b, const int64_t *g, int64_t G) {
    tn_tensor *wc = tn_contiguous(w4), *bc = b ? tn_contiguous(b) : NULL;
    tn_tensor *y = wc && (!b || bc) ? tn__new(x4->dtype, TN_CPU, TN_SHAPE(x4->shape[0], w4->shape[0], g[8], g[9])) : NULL;
    if (!y || tn__conv_forward_cpu(y, x4, wc, bc, g, G)) { tn_release(y); return NULL; }
    return tn__conv_record(x4, w4, b, g, G, y);
}

/* conv2d of x4 by w4 (+ b) through the backend's library convolution (cuDNN), as the same
   node as on the CPU; *declined when the library cannot take the case (then nothing is
   recorded and the caller takes the im2col path). */
static tn_tensor *tn__conv2d_lib(tn_tensor *x4, tn_tensor *w4, tn_tensor *b, const int64_t *g, int64_t G, int *declined) {
    const tn_backend *be = tn__backend(x4->device);
    int64_t geom[7];
    tn__conv_lib_geom(g, G, geom);
    tn_tensor *xc = tn_contiguous(x4), *wc = tn_contiguous(w4);
    tn_tensor *y = xc && wc ? tn__new(x4->dtype, x4->device, TN_SHAPE(x4->shape[0], w4->shape[0], g[8], g[9])) : NULL;
    *declined = 0;
    int rc = y ? be->conv2d(0, xc, wc, y, geom) : -1;
    if (rc == 0 && b) {   /* y += bias, broadcast over N, H, W */
        const int64_t bs[4] = {1, b->shape[0], 1, 1}, bst[4] = {0, b->strides[0], 0, 0};
        tn_tensor bv = tn__restrided(b, bs, bst, 4);
        rc = be->binary(ADD, y, y, &bv, 1);
    }
    if (rc) { *declined = rc == 1; tn_release(y); return NULL; }
    return tn__conv_record(x4, w4, b, g, G, y);
}

/* nsp spatial dims (1 or 2), values per dim in s, p, d, op; p[0] == TN_PAD_SAME for 'same'. */
static tn_tensor *tn__conv(const char *fn, tn_tensor *x, tn_tensor *w, tn_tensor *b, int nsp, bool transposed,
                           const int64_t *s, const int64_t *p, const int64_t *d, const int64_t *op, int64_t groups) {
    TN__CHECK_NULL(x); TN__CHECK_NULL(w);
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: expected %dD (unbatched) or %dD (batched) input, but got input of size %s", fn, nsp + 1, nsp + 2, TN__SHAPE(x));
    if (w->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: expected a %d-d weight [%s, k...], got %s", fn, nsp + 2, transposed ? "in_channels, out_channels/groups" : "out_channels, in_channels/groups", TN__SHAPE(w));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    if (groups <= 0) return (tn_tensor *)tn__error("%s: non-positive groups is not supported (got %lld)", fn, (long long)groups);
    bool same = p[0] == TN_PAD_SAME;
    if (tn__check_positive(fn, "stride", s, nsp) || tn__check_positive(fn, "dilation", d, nsp)) return NULL;
    for (int i = 0; i < nsp && !same; i++) if (p[i] < 0) return (tn_tensor *)tn__error("%s: negative padding is not supported (got %lld)", fn, (long long)p[i]);
    /* geometry within 2^31 keeps every size computed below far from int64 overflow */
    for (int i = 0; i < nsp; i++)
        if (s[i] > INT32_MAX || d[i] > INT32_MAX || (!same && p[i] > INT32_MAX) || (op && op[i] > INT32_MAX) || w->shape[2 + i] > INT32_MAX)
            return (tn_tensor *)tn__error("%s: stride, padding, dilation and kernel size must be below 2^31 (dim %d)", fn, i);
    if (same && transposed) return (tn_tensor *)tn__error("%s: padding='same' is not supported for transposed convolutions", fn);
    for (int i = 0; i < nsp && same; i++) if (s[i] != 1) return (tn_tensor *)tn__error("%s: padding='same' is not supported for strided convolutions", fn);
    const bool batched = x->ndim == nsp + 2;
    const int64_t C = x->shape[batched ? 1 : 0], O = transposed ? w->shape[1] * groups : w->shape[0];
    if (w->shape[0] % groups)
        return (tn_tensor *)tn__error("%s: given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of size %s instead",
                                      fn, (long long)groups, (long long)groups, TN__SHAPE(w));
    if (!transposed && (C % groups || O % groups || w->shape[1] * groups != C))
        return (tn_tensor *)tn__error("%s: given groups=%lld, weight of size %s, expected input %s to have %lld channels, but got %lld channels instead",
                                      fn, (long long)groups, TN__SHAPE(w), TN__SHAPE(x), (long long)(w->shape[1] * groups), (long long)C);
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
            in[i] = (in[i] - 1) * g[6 + i] - 2 * g[4 + i] + g[2 + i] * (k[i] - 1) + o + 1;   /* the output size */
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
    } else if (!transposed && x4 && tn__backend(x4->device)->conv2d && (!b || b->dtype == x4->dtype)) {
        y = tn__conv2d_lib(x4, w4, b, g, G, &declined);
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
TNDEF tn_tensor *tn_conv1d(tn_tensor *x, tn_tensor *w, tn_tensor *b, int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    return TN__AS("tn_conv1d", tn__conv("tn_conv1d", x, w, b, 1, false, &stride, &padding, &dilation, NULL, groups));
}
TNDEF tn_tensor *tn_conv2d_ex(tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t stride[2], const int64_t padding[2], const int64_t dilation[2], int64_t groups) {
    return TN__AS("tn_conv2d", tn__conv("tn_conv2d", x, w, b, 2, false, stride, padding, dilation, NULL, groups));
}
TNDEF tn_tensor *tn_conv2d(tn_tensor *x, tn_tensor *w, tn_tensor *b, int64_t stride, int64_t padding, int64_t dilation, int64_t groups) {
    int64_t s[2] = {stride, stride}, p[2] = {padding, padding}, d[2] = {dilation, dilation};
    return TN__AS("tn_conv2d", tn__conv("tn_conv2d", x, w, b, 2, false, s, p, d, NULL, groups));
}
TNDEF tn_tensor *tn_conv_transpose2d_ex(tn_tensor *x, tn_tensor *w, tn_tensor *b, const int64_t stride[2], const int64_t padding[2],
                                        const int64_t output_padding[2], int64_t groups, const int64_t dilation[2]) {
    return TN__AS("tn_conv_transpose2d", tn__conv("tn_conv_transpose2d", x, w, b, 2, true, stride, padding, dilation, output_padding, groups));
}
TNDEF tn_tensor *tn_conv_transpose2d(tn_tensor *x, tn_tensor *w, tn_tensor *b, int64_t stride, int64_t padding, int64_t output_padding, int64_t groups, int64_t dilation) {
    int64_t s[2] = {stride, stride}, p[2] = {padding, padding}, o[2] = {output_padding, output_padding}, d[2] = {dilation, dilation};
    return TN__AS("tn_conv_transpose2d", tn__conv("tn_conv_transpose2d", x, w, b, 2, true, s, p, d, o, groups));
}
TNDEF tn_tensor *tn_conv_transpose1d(tn_tensor *x, tn_tensor *w, tn_tensor *b, int64_t stride, int64_t padding, int64_t output_padding, int64_t groups, int64_t dilation) {
    return TN__AS("tn_conv_transpose1d", tn__conv("tn_conv_transpose1d", x, w, b, 1, true, &stride, &padding, &dilation, &output_padding, groups));
}

/* ---- pooling ---- */
/* x [N, C, *] or [C, *] with nsp spatial dims -> [N, C, H, W] (1-d gains a unit height). */
static tn_tensor *tn__pool_input(const char *fn, tn_tensor *x, int nsp) {
    if (x->ndim != nsp + 1 && x->ndim != nsp + 2)
        return (tn_tensor *)tn__error("%s: expected %dD (unbatched) or %dD (batched) input, but got input of size %s", fn, nsp + 1, nsp + 2, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return NULL;
    for (int d = x->ndim - nsp; d < x->ndim; d++)
        if (x->shape[d] == 0) return (tn_tensor *)tn__error("%s: expected input %s to have non-zero spatial sizes", fn, TN__SHAPE(x));
    tn_tensor *x4 = x->ndim == nsp + 2 ? x : tn_unsqueeze(x, 0);
    return nsp == 1 ? tn_unsqueeze(x4, 2) : x4;
}
/* Undo tn__pool_input on a result. */
static tn_tensor *tn__pool_output(tn_tensor *y, tn_tensor *x, int nsp) {
    if (nsp == 1) y = tn_squeeze_dim(y, 2);
    return x->ndim == nsp + 2 ? y : tn_squeeze_dim(y, 0);
}
/* Kernel, stride, padding, dilation per dim in 2-d form; stride 0 is the kernel size. */
static int tn__pool_geometry(const char *fn, int nsp, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d, int64_t *g) {
    for (int i = 0; i < 2; i++) {
        int j = i - (2 - nsp);
        g[i] = j < 0 ? 1 : k[j];
        g[6 + i] = j < 0 ? 1 : s && s[j] ? s[j] : k[j];
        g[4 + i] = j < 0 ? 0 : p[j];
        g[2 + i] = j < 0 || !d ? 1 : d[j];
        if (g[i] <= 0 || g[6 + i] <= 0 || g[2 + i] <= 0)
            return TN__FAIL_INT("%s: kernel_size, stride and dilation must be greater than zero (got %lld, %lld, %lld)", fn, (long long)g[i], (long long)g[6 + i], (long long)g[2 + i]);
        if (g[i] > INT32_MAX || g[6 + i] > INT32_MAX || g[2 + i] > INT32_MAX || g[4 + i] > INT32_MAX)
            return TN__FAIL_INT("%s: kernel_size, stride, padding and dilation must be below 2^31", fn);

        if (g[4 + i] < 0 || g[4 + i] > (g[2 + i] * (g[i] - 1) + 1) / 2)
            return TN__FAIL_INT("%s: pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld and dilation=%lld", fn,
                                (long long)g[4 + i], (long long)g[i], (long long)g[2 + i]);
    }
    return 0;
}
static int tn__pool_counts(const char *fn, tn_tensor *x4, int64_t *g, bool ceil_mode) {
    for (int i = 0; i < 2; i++) g[8 + i] = tn__window_count(x4->shape[2 + i], g[i], g[4 + i], g[6 + i], g[2 + i], ceil_mode);
    if (g[8] <= 0 || g[9] <= 0)   /* both counts first: the message shows them */
        return TN__FAIL_INT("%s: given input size %s, calculated output size (%lldx%lld): output size is too small", fn, TN__SHAPE(x4),
                            (long long)(g[8] > 0 ? g[8] : 0), (long long)(g[9] > 0 ? g[9] : 0));
    return 0;
}
/* Max pooling on the CPU (float dtypes): the values and, per window, a 1-byte code of its
   argmax, (row in the window) * KW + (column in the window), in one pass. KW is the widest
   window's column count; windows of more than 256 positions go the backend's way (int64
   indices, gather) instead. The codes are an eighth of int64 indices, which are made from
   them only when asked for (return_indices, or a backward that records). Rows of 2x2
   stride-2 windows, the common pooling, have row kernels: branch-free (random data would
   mispredict), and for float32 with AVX-512 (masked, as rows are short: 14 windows at 28x28)
   chosen at run time. As PyTorch: row-major scan of the window, a NaN is always taken (the
   last NaN wins). */
/* c ? a : b through the bits, so the compiler cannot make it a branch */
static float tn__select_f32(int c, float a, float b) {
    uint32_t x, y, m = (uint32_t)0 - (uint32_t)c;
    memcpy(&x, &a, 4); memcpy(&y, &b, 4);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, 4);
    return a;
}
static double tn__select_f64(int c, double a, double b) {
    uint64_t x, y, m = (uint64_t)0 - (uint64_t)c;
    memcpy(&x, &a, 8); memcpy(&y, &b, 8);
    x = (x & m) | (y & ~m);
    memcpy(&a, &x, 8);
    return a;
}
/* The max of one window of a plane (row stride s2, column stride s3) and its row *bh and
   column *bw: rows from hs (below 0: padding) to he by dh, columns likewise. The scan of
   max pooling's general windows, for the codes here and the backend's int64 argmax. */
#define TN__WINDOW_MAX(T, S) \
static T tn__window_max_##S(const T *plane, int64_t s2, int64_t s3, int64_t hs, int64_t he, int64_t ws, int64_t we, int64_t dh, int64_t dw, \
                            int64_t *bh, int64_t *bw) { \
    const int64_t h0 = hs >= 0 ? hs : hs + (-hs + dh - 1) / dh * dh, w0 = ws >= 0 ? ws : ws + (-ws + dw - 1) / dw * dw; \
    int64_t ih = h0, iw = w0; \
    T m = plane[h0 * s2 + w0 * s3]; \
    for (int64_t h = h0; h < he; h += dh) \
        for (int64_t w = w0; w < we; w += dw) { \
            const T v = plane[h * s2 + w * s3]; \
            const bool take = v > m || v != v;   /* branch-free: random data would mispredict */ \
            m = take ? v : m; \
            ih = take ? h : ih; \
            iw = take ? w : iw; \
        } \
    *bh = ih; *bw = iw; \
    return m; \
}
TN__WINDOW_MAX(float, f32)
TN__WINDOW_MAX(double, f64)
#undef TN__WINDOW_MAX
#define TN__POOL22_ROWS(T, S) \
static void tn__pool22_fwd_##S(const T *TN__RESTRICT r0, const T *TN__RESTRICT r1, T *TN__RESTRICT y, uint8_t *TN__RESTRICT code, int64_t OW) { \
    for (int64_t z = 0; z < OW; z++) { \
        const T a = r0[2 * z], b = r0[2 * z + 1], c = r1[2 * z], d = r1[2 * z + 1]; \
        const int tb = (b > a) | (b != b); T m = tn__select_##S(tb, b, a); int k = tb; \
        const int tc = (c > m) | (c != c); m = tn__select_##S(tc, c, m); k += (2 - k) & -tc; \
        const int td = (d > m) | (d != d); m = tn__select_##S(td, d, m); k += (3 - k) & -td; \
        y[z] = m; code[z] = (uint8_t)k; \
    } \
} \
static void tn__pool22_bwd_##S(const T *TN__RESTRICT gy, const uint8_t *TN__RESTRICT code, T *TN__RESTRICT g0, T *TN__RESTRICT g1, int64_t OW) { \
    for (int64_t z = 0; z < OW; z++) { \
        const T v = gy[z]; const int k = code[z]; \
        g0[2 * z] = tn__select_##S(k == 0, v, 0); g0[2 * z + 1] = tn__select_##S(k == 1, v, 0); \
        g1[2 * z] = tn__select_##S(k == 2, v, 0); g1[2 * z + 1] = tn__select_##S(k == 3, v, 0); \
    } \
}
TN__POOL22_ROWS(float, f32)
TN__POOL22_ROWS(double, f64)
#undef TN__POOL22_ROWS
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__POOL22_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
/* Lanes of 16 windows: the masks of the 2n inputs (two vectors) and the n outputs of a chunk. */
TN__POOL22_AVX512 static void tn__pool22_masks(int64_t n, __mmask16 *lo, __mmask16 *hi, __mmask16 *out) {
    *lo = (__mmask16)(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1);
    *hi = (__mmask16)(n > 8 ? (1u << (2 * n - 16)) - 1 : 0);
    *out = (__mmask16)((1u << n) - 1);
}
TN__POOL22_AVX512 static void tn__pool22_fwd_f32_avx512(const float *r0, const float *r1, float *y, uint8_t *code, int64_t OW) {
    const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    for (int64_t z = 0; z < OW; z += 16) {
        __mmask16 ml, mh, mo;
        tn__pool22_masks(TN__MIN(16, OW - z), &ml, &mh, &mo);
        const __m512 l0 = _mm512_maskz_loadu_ps(ml, r0 + 2 * z), h0 = _mm512_maskz_loadu_ps(mh, r0 + 2 * z + 16);
        const __m512 l1 = _mm512_maskz_loadu_ps(ml, r1 + 2 * z), h1 = _mm512_maskz_loadu_ps(mh, r1 + 2 * z + 16);
        const __m512 a = _mm512_permutex2var_ps(l0, ev, h0), b = _mm512_permutex2var_ps(l0, od, h0);
        const __m512 c = _mm512_permutex2var_ps(l1, ev, h1), d = _mm512_permutex2var_ps(l1, od, h1);
        __mmask16 t = _mm512_cmp_ps_mask(b, a, _CMP_GT_OQ) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
        __m512 m = _mm512_mask_blend_ps(t, a, b);
        __m512i k = _mm512_maskz_mov_epi32(t, _mm512_set1_epi32(1));
        t = _mm512_cmp_ps_mask(c, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q);
        m = _mm512_mask_blend_ps(t, m, c);
        k = _mm512_mask_mov_epi32(k, t, _mm512_set1_epi32(2));
        t = _mm512_cmp_ps_mask(d, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q);
        m = _mm512_mask_blend_ps(t, m, d);
        k = _mm512_mask_mov_epi32(k, t, _mm512_set1_epi32(3));
        _mm512_mask_storeu_ps(y + z, mo, m);
        _mm512_mask_cvtepi32_storeu_epi8(code + z, mo, k);
    }
}
TN__POOL22_AVX512 static void tn__pool22_bwd_f32_avx512(const float *gy, const uint8_t *code, float *g0, float *g1, int64_t OW) {
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    for (int64_t z = 0; z < OW; z += 16) {
        __mmask16 ml, mh, mo;
        tn__pool22_masks(TN__MIN(16, OW - z), &ml, &mh, &mo);
        const __m512 v = _mm512_maskz_loadu_ps(mo, gy + z);
        const __m512i k = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mo, code + z));
        const __m512 e0 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_setzero_si512()), v), e1 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(1)), v);
        const __m512 e2 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(2)), v), e3 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(k, _mm512_set1_epi32(3)), v);
        _mm512_mask_storeu_ps(g0 + 2 * z, ml, _mm512_permutex2var_ps(e0, lo, e1));
        _mm512_mask_storeu_ps(g0 + 2 * z + 16, mh, _mm512_permutex2var_ps(e0, hi, e1));
        _mm512_mask_storeu_ps(g1 + 2 * z, ml, _mm512_permutex2var_ps(e2, lo, e3));
        _mm512_mask_storeu_ps(g1 + 2 * z + 16, mh, _mm512_permutex2var_ps(e2, hi, e3));
    }
}
#undef TN__POOL22_AVX512
static int tn__pool22_avx512 = 1;   /* test knob: 0 runs the portable rows */
static bool tn__pool22_has_avx512(void) {
    return tn__pool22_avx512 && tn__cpu_avx512();
}
#define TN__POOL22_FWD_f32 (tn__pool22_has_avx512() ? tn__pool22_fwd_f32_avx512 : tn__pool22_fwd_f32)
#define TN__POOL22_BWD_f32 (tn__pool22_has_avx512() ? tn__pool22_bwd_f32_avx512 : tn__pool22_bwd_f32)
#else
#define TN__POOL22_FWD_f32 tn__pool22_fwd_f32
#define TN__POOL22_BWD_f32 tn__pool22_bwd_f32
#endif
#define TN__POOL22_FWD_f64 tn__pool22_fwd_f64
#define TN__POOL22_BWD_f64 tn__pool22_bwd_f64
/* tab: window rows [hs, he) and columns [ws, we) as tn__max_windows; k22: 2x2 stride-2
   windows at (2y, 2z). Forward: x any strides (k22 needs unit column stride), y and codes
   [N*C, OH, OW] contiguous. Backward: gx from gy and codes, all contiguous. */
#define TN__POOL_CODES_DEFINE(T, S) \
static void tn__pool_codes_fwd_##S(T *yb, uint8_t *cb, const tn_tensor *x, const int64_t *tab, int64_t OH, int64_t OW, int64_t dh, int64_t dw, int64_t KW, bool k22) { \
    const int64_t N = x->shape[0], C = x->shape[1], *xs = x->strides, *hs = tab, *he = tab + OH, *ws = tab + 2 * OH, *we = ws + OW; \
    const T *xb = (const T *)x->storage->data + x->offset; \
    void (*row)(const T *, const T *, T *, uint8_t *, int64_t) = TN__POOL22_FWD_##S; \
    const int nthr = tn__par_threads(N * C * x->shape[2] * x->shape[3], N * C); \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int64_t nc = 0; nc < N * C; nc++) { \
        const T *plane = xb + nc / C * xs[0] + nc % C * xs[1]; \
        T *yp = yb + nc * OH * OW; \
        uint8_t *cp = cb + nc * OH * OW; \
        for (int64_t y = 0; y < OH; y++) { \
            if (k22) { row(plane + 2 * y * xs[2], plane + (2 * y + 1) * xs[2], yp + y * OW, cp + y * OW, OW); continue; } \
            for (int64_t z = 0; z < OW; z++) { \
                int64_t bh, bw; \
                yp[y * OW + z] = tn__window_max_##S(plane, xs[2], xs[3], hs[y], he[y], ws[z], we[z], dh, dw, &bh, &bw); \
                cp[y * OW + z] = (uint8_t)((bh - hs[y]) / dh * KW + (bw - ws[z]) / dw); \
            } \
        } \
    } \
} \
static void tn__pool_codes_bwd_##S(T *gxb, const T *gyb, const uint8_t *cb, int64_t NC, int64_t H, int64_t W, const int64_t *tab, int64_t OH, int64_t OW, \
                                   int64_t dh, int64_t dw, int64_t KW, bool k22) { \
    void (*row)(const T *, const uint8_t *, T *, T *, int64_t) = TN__POOL22_BWD_##S; \
    const int nthr = tn__par_threads(NC * (H * W + OH * OW), NC); \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int64_t nc = 0; nc < NC; nc++) {   /* planes in parallel; within one, in order */ \
        T *o = gxb + nc * H * W; \
        const T *v = gyb + nc * OH * OW; \
        const uint8_t *cp = cb + nc * OH * OW; \
        if (k22) {   /* every element written once: no clearing first */ \
            for (int64_t y = 0; y < OH; y++) { \
                row(v + y * OW, cp + y * OW, o + 2 * y * W, o + (2 * y + 1) * W, OW); \
                for (int64_t w = 2 * OW; w < W; w++) o[2 * y * W + w] = o[(2 * y + 1) * W + w] = 0; \
            } \
            if (2 * OH < H) memset(o + 2 * OH * W, 0, (size_t)((H - 2 * OH) * W) * sizeof(T)); \
            continue; \
        } \
        memset(o, 0, (size_t)(H * W) * sizeof(T)); \
        for (int64_t y = 0; y < OH; y++) \
            for (int64_t z = 0; z < OW; z++) { \
                const int64_t k = cp[y * OW + z]; \
                o[(tab[y] + k / KW * dh) * W + tab[2 * OH + z] + k % KW * dw] += v[y * OW + z]; \
            } \
    } \
}
TN__POOL_CODES_DEFINE(float, f32)
TN__POOL_CODES_DEFINE(double, f64)
#undef TN__POOL_CODES_DEFINE
#undef TN__POOL22_FWD_f32
#undef TN__POOL22_BWD_f32
#undef TN__POOL22_FWD_f64
#undef TN__POOL22_BWD_f64
/* The int64 indices (into each H*W plane) of codes [N, C, OH, OW]. */
static tn_tensor *tn__pool_code_index(tn_tensor *codes, const int64_t *tab, int64_t W, int64_t KW, int64_t dh, int64_t dw) {
    const int64_t OH = codes->shape[2], OW = codes->shape[3], NC = codes->shape[0] * codes->shape[1];
    tn_tensor *idx = tn__own(tn__new(TN_I64, TN_CPU, codes->shape, 4));
    if (!idx) return NULL;
    int64_t *ip = (int64_t *)tn_data_ptr(idx);
    const uint8_t *cp = (const uint8_t *)tn_data_ptr(codes);
    for (int64_t nc = 0; nc < NC; nc++)
        for (int64_t y = 0; y < OH; y++)
            for (int64_t z = 0; z < OW; z++, ip++, cp++) *ip = (tab[y] + *cp / KW * dh) * W + tab[2 * OH + z] + *cp % KW * dw;
    return idx;
}
/* Max pooling's backward on the CPU: gy to each window's argmax, from the codes (saved 0)
   and the window table (saved 1). When autograd records (create_graph), by scatter_add of
   int64 indices, which is differentiable. */
static int tn__max_pool_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *codes = tn_ctx_saved(n, 0), *tabt = tn_ctx_saved(n, 1);
    if (!codes || !tabt) return -1;
    const int64_t N = n->i[0], C = n->i[1], H = n->i[2], W = n->i[3], KW = n->i[4], dh = n->i[5], dw = n->i[6];
    const int64_t OH = codes->shape[2], OW = codes->shape[3], *tab = (const int64_t *)tn_data_ptr(tabt);
    if (!tn__grad_disabled) {
        tn_tensor *idx = tn__pool_code_index(codes, tab, W, KW, dh, dw);
        tn_tensor *z = idx ? tn_zeros(TN_SHAPE(N, C, H * W), gy->dtype) : NULL;
        gin[0] = tn_reshape(tn_scatter_add(z, 2, tn_reshape(idx, TN_SHAPE(N, C, OH * OW)), tn_reshape(gy, TN_SHAPE(N, C, OH * OW))), TN_SHAPE(N, C, H, W));
        return gin[0] ? 0 : -1;
    }
    tn_tensor *gx = tn__own(tn__new(gy->dtype, TN_CPU, TN_SHAPE(N, C, H, W))), *g = tn_contiguous(gy);
    if (!gx || !g) return -1;
    const bool k22 = n->i[7] != 0;
    if (gy->dtype == TN_F32) tn__pool_codes_bwd_f32((float *)tn_data_ptr(gx), (const float *)tn_data_ptr(g), (const uint8_t *)tn_data_ptr(codes), N * C, H, W, tab, OH, OW, dh, dw, KW, k22);
    else tn__pool_codes_bwd_f64((double *)tn_data_ptr(gx), (const double *)tn_data_ptr(g), (const uint8_t *)tn_data_ptr(codes), N * C, H, W, tab, OH, OW, dh, dw, KW, k22);
    gin[0] = gx;
    return 0;
}
/* Max over windows given by row tables hs/he and column tables ws/we (tab: hs, he, ws, we),
   dilations dh, dw. On the CPU for float dtypes with windows of up to 256 positions: values
   and codes as above, under one node (tn__max_pool_bw). Otherwise the argmax from the
   backend and the values by gather (so the backward is gather's, twice differentiable too).
   *idx_out (when not NULL): the int64 indices into each H*W plane. */
static tn_tensor *tn__max_windows(tn_tensor *x4, int64_t OH, int64_t OW, const int64_t *tab, int64_t dh, int64_t dw, tn_tensor **idx_out) {
    const int64_t N = x4->shape[0], C = x4->shape[1], H = x4->shape[2], W = x4->shape[3];
    int64_t ishape[4] = {N, C, OH, OW}, KH = 0, KW = 0;
    for (int64_t y = 0; y < OH; y++) KH = TN__MAX(KH, (tab[OH + y] - tab[y] + dh - 1) / dh);
    for (int64_t z = 0; z < OW; z++) KW = TN__MAX(KW, (tab[2 * OH + OW + z] - tab[2 * OH + z] + dw - 1) / dw);
    if (x4->device == TN_CPU && (x4->dtype == TN_F32 || x4->dtype == TN_F64) && KH * KW <= 256) {
        bool k22 = dh == 1 && dw == 1 && x4->strides[3] == 1;
        for (int64_t y = 0; y < OH && k22; y++) k22 = tab[y] == 2 * y && tab[OH + y] == 2 * y + 2;
        for (int64_t z = 0; z < OW && k22; z++) k22 = tab[2 * OH + z] == 2 * z && tab[2 * OH + OW + z] == 2 * z + 2;
        tn_tensor *v = tn__new(x4->dtype, TN_CPU, ishape, 4), *codes = tn__own(tn__new(TN_U8, TN_CPU, ishape, 4));
        tn_tensor *tabt = tn__own(tn__new(TN_I64, TN_CPU, TN_SHAPE(2 * (OH + OW))));
        if (!v || !codes || !tabt) { tn_release(v); return NULL; }
        memcpy(tn_data_ptr(tabt), tab, (size_t)(2 * (OH + OW)) * sizeof(int64_t));
        if (x4->dtype == TN_F32) tn__pool_codes_fwd_f32((float *)tn_data_ptr(v), (uint8_t *)tn_data_ptr(codes), x4, tab, OH, OW, dh, dw, KW, k22);
        else tn__pool_codes_fwd_f64((double *)tn_data_ptr(v), (uint8_t *)tn_data_ptr(codes), x4, tab, OH, OW, dh, dw, KW, k22);
        tn_node *nd = tn__fn_node("MaxPool2DWithIndicesBackward0", tn__max_pool_bw, &x4, 1);
        if (nd) {
            const int64_t at[8] = {N, C, H, W, KW, dh, dw, k22};
            memcpy(nd->i, at, sizeof at);
            nd->ni = 8;
            tn__node_save(nd, codes);
            tn__node_save(nd, tabt);
        }
        if (idx_out && !(*idx_out = tn__pool_code_index(codes, tab, W, KW, dh, dw))) { tn_release(v); return NULL; }
        return tn__own(tn__node_attach(nd, v));
    }
    tn_tensor *idx = tn__own(tn__new(TN_I64, x4->device, ishape, 4));
    if (!idx || tn__backend(x4->device)->pool_argmax(idx, x4, tab, tab + OH, tab + 2 * OH, tab + 2 * OH + OW, dh, dw)) return NULL;
    tn_tensor *v = tn_gather(tn_reshape(x4, TN_SHAPE(N, C, H * W)), 2, tn_reshape(idx, TN_SHAPE(N, C, OH * OW)));
    if (idx_out) *idx_out = idx;
    return tn_reshape(v, ishape, 4);
}
/* The window tables of a pooling geometry g (after tn__pool_counts) over H x W: hs, he
   (rows [hs, he) clipped to the image), ws, we; TN_FREE them. NULL when out of memory. */
static int64_t *tn__pool_table(const char *fn, const int64_t *g, int64_t H, int64_t W) {
    const int64_t OH = g[8], OW = g[9];
    int64_t *tab = (int64_t *)TN_MALLOC((size_t)(2 * (OH + OW)) * sizeof(int64_t));
    if (!tab) return (int64_t *)tn__error("%s: out of memory", fn);
    for (int64_t o = 0; o < OH; o++) { tab[o] = o * g[6] - g[4]; tab[OH + o] = TN__MIN(tab[o] + g[2] * (g[0] - 1) + 1, H); }
    for (int64_t o = 0; o < OW; o++) { tab[2 * OH + o] = o * g[7] - g[5]; tab[2 * OH + OW + o] = TN__MIN(tab[2 * OH + o] + g[3] * (g[1] - 1) + 1, W); }
    return tab;
}
/* Average pooling's divisor per output position, as PyTorch's: [OH * OW] of like's dtype,
   on its device. */
static tn_tensor *tn__avg_divisors(const char *fn, const int64_t *g, int64_t H, int64_t W, bool count_include_pad, int64_t divisor_override, tn_tensor *like) {
    const int64_t OH = g[8], OW = g[9];
    double *div = (double *)TN_MALLOC((size_t)(OH * OW) * sizeof(double));
    if (!div) return (tn_tensor *)tn__error("%s: out of memory", fn);
    for (int64_t a = 0; a < OH; a++) for (int64_t b = 0; b < OW; b++) {
        int64_t h0 = a * g[6] - g[4], w0 = b * g[7] - g[5];
        int64_t h1 = h0 + g[0] < H + g[4] ? h0 + g[0] : H + g[4], w1 = w0 + g[1] < W + g[5] ? w0 + g[1] : W + g[5];
        int64_t pool = (h1 - h0) * (w1 - w0);
        h0 = h0 < 0 ? 0 : h0; w0 = w0 < 0 ? 0 : w0; h1 = h1 > H ? H : h1; w1 = w1 > W ? W : w1;
        div[a * OW + b] = divisor_override ? (double)divisor_override : count_include_pad ? (double)pool : (double)((h1 - h0) * (w1 - w0));
    }
    tn_tensor *dv = tn_to(tn_to_dtype(tn_from_data(div, TN_SHAPE(OH * OW), TN_F64), like->dtype), like->device);
    TN_FREE(div);
    return dv;
}
/* The backward of library pooling: the backend's, or (create_graph, or declined) the
   composites' own backward with differentiable ops: gather's for max, col2im's for average. */
static int tn__pool_lib_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)nin; (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *y = tn_ctx_saved(n, 1);
    if (!x || !y) return -1;
    const int64_t *g = n->i, mode = n->i[10], N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], OH = g[8], OW = g[9];
    const tn_backend *be = tn__backend(x->device);
    if (tn__grad_disabled) {
        const int64_t geom[7] = {g[0], g[1], g[6], g[7], g[4], g[5], mode};
        tn_tensor *gc = tn_contiguous(gy), *gx = tn__own(tn__new(x->dtype, x->device, x->shape, 4));
        int r = gc && gx ? be->pool2d(x, y, gc, gx, geom) : -1;
        if (r <= 0) return r ? -1 : ((gin[0] = gx), 0);
    }
    if (mode == 0) {
        int64_t *tab = tn__pool_table("max_pool2d backward", g, H, W);
        tn_tensor *idx = tab ? tn__own(tn__new(TN_I64, x->device, TN_SHAPE(N, C, OH, OW))) : NULL;
        int bad = !idx || be->pool_argmax(idx, x, tab, tab + OH, tab + 2 * OH, tab + 2 * OH + OW, 1, 1);
        TN_FREE(tab);
        if (bad) return -1;
        tn_tensor *z = tn_reshape(tn_zeros_like(x), TN_SHAPE(N, C, H * W));
        gin[0] = tn_reshape(tn_scatter_add(z, 2, tn_reshape(idx, TN_SHAPE(N, C, OH * OW)), tn_reshape(gy, TN_SHAPE(N, C, OH * OW))), x->shape, 4);
    } else {
        tn_tensor *dv = tn__avg_divisors("avg_pool2d backward", g, H, W, mode == 1, 0, x);
        tn_tensor *gc = tn_expand(tn_reshape(tn_div(tn_reshape(gy, TN_SHAPE(N * C, OH * OW)), dv), TN_SHAPE(N * C, 1, OH * OW)), TN_SHAPE(N * C, g[0] * g[1], OH * OW));
        gin[0] = gc ? tn_reshape(tn__col2im(gc, H, W, g), x->shape, 4) : NULL;
    }
    return gin[0] ? 0 : -1;
}
/* Pooling of x4 by the backend's library as one node (mode: tn_backend.pool2d's); NULL
   with *declined set when there is no library pooling for the case. */
static tn_tensor *tn__pool_lib(tn_tensor *x4, const int64_t *g, int64_t mode, const char *name, bool *declined) {
    const tn_backend *be = tn__backend(x4->device);
    *declined = true;
    if (!be->pool2d || g[2] != 1 || g[3] != 1) return NULL;   /* no dilation in the libraries */
    for (int i = 0; i < 2; i++)
        if (g[8 + i] != (x4->shape[2 + i] + 2 * g[4 + i] - g[i]) / g[6 + i] + 1) return NULL;   /* ceil_mode added a window */
    const int64_t geom[7] = {g[0], g[1], g[6], g[7], g[4], g[5], mode};
    tn_tensor *xc = tn_contiguous(x4), *y = xc ? tn__new(x4->dtype, x4->device, TN_SHAPE(x4->shape[0], x4->shape[1], g[8], g[9])) : NULL;
    int r = y ? be->pool2d(xc, y, NULL, NULL, geom) : -1;
    if (r) { tn_release(y); *declined = r > 0; return NULL; }
    *declined = false;
    tn_node *nd = tn__fn_node(name, tn__pool_lib_bw, &x4, 1);
    if (nd) {
        memcpy(nd->i, g, 10 * sizeof(int64_t));
        nd->i[10] = mode;
        nd->ni = 11;
        tn__node_save(nd, xc);
        tn__node_save_result(nd, y);
    }
    return tn__own(tn__node_attach(nd, y));
}
static tn_tensor *tn__max_pool(const char *fn, tn_tensor *x, int nsp, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d,
                               bool ceil_mode, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    int64_t g[10];
    if (tn__pool_geometry(fn, nsp, k, s, p, d, g)) return NULL;
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, nsp), *idx = NULL, *y = NULL;
    int64_t *tab = NULL;
    bool declined = true;
    if (x4 && tn__pool_counts(fn, x4, g, ceil_mode)) x4 = NULL;
    if (x4 && !indices) y = tn__pool_lib(x4, g, 0, "MaxPool2DWithIndicesBackward0", &declined);
    if (x4 && declined && (tab = tn__pool_table(fn, g, x4->shape[2], x4->shape[3]))) {
        y = tn__grad_name(tn__max_windows(x4, g[8], g[9], tab, g[2], g[3], indices ? &idx : NULL), "MaxPool2DWithIndicesBackward0");
        TN_FREE(tab);
    }
    if (y && indices) *indices = tn_keep(tn__pool_output(idx, x, nsp));
    y = y ? tn__pool_output(y, x, nsp) : NULL;
    return tn__scope_return(nsp == 2 ? tn__grad_name(y, "MaxPool2DWithIndicesBackward0") : y);   /* 1-d: SqueezeBackward1, as PyTorch */
}
TNDEF tn_tensor *tn_max_pool1d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode, tn_tensor **indices) {
    return TN__AS("tn_max_pool1d", tn__max_pool("tn_max_pool1d", x, 1, &kernel, &stride, &padding, &dilation, ceil_mode, indices));
}
TNDEF tn_tensor *tn_max_pool2d_ex(tn_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2], const int64_t dilation[2],
                                  bool ceil_mode, tn_tensor **indices) {
    return TN__AS("tn_max_pool2d", tn__max_pool("tn_max_pool2d", x, 2, kernel, stride, padding, dilation, ceil_mode, indices));
}
TNDEF tn_tensor *tn_max_pool2d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation, bool ceil_mode, tn_tensor **indices) {
    int64_t k[2] = {kernel, kernel}, s[2] = {stride, stride}, p[2] = {padding, padding}, d[2] = {dilation, dilation};
    return TN__AS("tn_max_pool2d", tn__max_pool("tn_max_pool2d", x, 2, k, s, p, d, ceil_mode, indices));
}
/* Adaptive windows: [floor(i*in/out), ceil((i+1)*in/out)). */
static void tn__adaptive_table(int64_t in, int64_t out, int64_t *start, int64_t *end) {
    for (int64_t i = 0; i < out; i++) { start[i] = i * in / out; end[i] = ((i + 1) * in + out - 1) / out; }
}
static tn_tensor *tn__adaptive_max_pool(const char *fn, tn_tensor *x, int64_t OH, int64_t OW, tn_tensor **indices) {
    if (indices) *indices = NULL;
    TN__CHECK_NULL(x);
    if (OH <= 0 || OW <= 0) return (tn_tensor *)tn__error("%s: output size (%lld, %lld) must be positive", fn, (long long)OH, (long long)OW);
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, 2), *idx = NULL, *y = NULL;
    int64_t *tab = x4 ? (int64_t *)TN_MALLOC((size_t)(2 * (OH + OW)) * sizeof(int64_t)) : NULL;
    if (x4 && !tab) tn__error("%s: out of memory", fn);
    if (tab) {
        tn__adaptive_table(x4->shape[2], OH, tab, tab + OH);
        tn__adaptive_table(x4->shape[3], OW, tab + 2 * OH, tab + 2 * OH + OW);
        y = tn__grad_name(tn__max_windows(x4, OH, OW, tab, 1, 1, indices ? &idx : NULL), "AdaptiveMaxPool2DBackward0");
        TN_FREE(tab);
    }
    if (y && indices) *indices = tn_keep(tn__pool_output(idx, x, 2));
    return tn__scope_return(y ? tn__grad_name(tn__pool_output(y, x, 2), "AdaptiveMaxPool2DBackward0") : NULL);
}
TNDEF tn_tensor *tn_adaptive_max_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w, tn_tensor **indices) {
    return TN__AS("tn_adaptive_max_pool2d", tn__adaptive_max_pool("tn_adaptive_max_pool2d", x, out_h, out_w, indices));
}
/* Average pooling: window sums by im2col of each plane, divided per window as PyTorch. */
static tn_tensor *tn__avg_pool(const char *fn, tn_tensor *x, int nsp, const int64_t *k, const int64_t *s, const int64_t *p,
                               bool ceil_mode, bool count_include_pad, int64_t divisor_override) {
    TN__CHECK_NULL(x);
    int64_t g[10];
    if (tn__pool_geometry(fn, nsp, k, s, p, NULL, g)) return NULL;
    for (int i = 0; i < 2; i++)
        if (g[4 + i] > g[i] / 2) return (tn_tensor *)tn__error("%s: pad should be smaller than or equal to half of kernel size, but got pad=%lld, kernel_size=%lld", fn, (long long)g[4 + i], (long long)g[i]);
    if (divisor_override < 0) return (tn_tensor *)tn__error("%s: divisor must be not zero", fn);
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, nsp), *y = NULL;
    bool declined = true;
    if (x4 && tn__pool_counts(fn, x4, g, ceil_mode)) x4 = NULL;
    if (x4 && !divisor_override) y = tn__pool_lib(x4, g, count_include_pad ? 1 : 2, "AvgPool2DBackward0", &declined);
    if (x4 && declined) {
        int64_t N = x4->shape[0], C = x4->shape[1], H = x4->shape[2], W = x4->shape[3], OH = g[8], OW = g[9];
        tn_tensor *dv = tn__avg_divisors(fn, g, H, W, count_include_pad, divisor_override, x4);
        tn_tensor *planes = tn_reshape(x4, TN_SHAPE(N * C, 1, H, W));
        tn_tensor *sums = planes && dv ? tn_sum_dims(tn__im2col(planes, g), TN_SHAPE(1), false) : NULL;
        y = tn_reshape(tn_div(sums, dv), TN_SHAPE(N, C, OH, OW));
    }
    y = y ? tn__pool_output(y, x, nsp) : NULL;
    return tn__scope_return(nsp == 2 ? tn__grad_name(y, "AvgPool2DBackward0") : y);   /* 1-d: SqueezeBackward1, as PyTorch */
}
TNDEF tn_tensor *tn_avg_pool1d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode, bool count_include_pad) {
    return TN__AS("tn_avg_pool1d", tn__avg_pool("tn_avg_pool1d", x, 1, &kernel, &stride, &padding, ceil_mode, count_include_pad, 0));
}
TNDEF tn_tensor *tn_avg_pool2d_ex(tn_tensor *x, const int64_t kernel[2], const int64_t stride[2], const int64_t padding[2], bool ceil_mode,
                                  bool count_include_pad, int64_t divisor_override) {
    return TN__AS("tn_avg_pool2d", tn__avg_pool("tn_avg_pool2d", x, 2, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override));
}
TNDEF tn_tensor *tn_avg_pool2d(tn_tensor *x, int64_t kernel, int64_t stride, int64_t padding, bool ceil_mode, bool count_include_pad) {
    int64_t k[2] = {kernel, kernel}, s[2] = {stride, stride}, p[2] = {padding, padding};
    return TN__AS("tn_avg_pool2d", tn__avg_pool("tn_avg_pool2d", x, 2, k, s, p, ceil_mode, count_include_pad, 0));
}
/* A [out, in] matrix that averages (adaptive pooling) or interpolates (linear resizing)
   along one dim; applied on both sides it resizes a plane: M_h @ x @ M_w^T. */
static tn_tensor *tn__resize_matrix(const char *fn, int kind, int64_t in, int64_t out, double scale, bool align_corners, const tn_tensor *like) {
    if ((double)in * (double)out > 1e17) return (tn_tensor *)tn__error("%s: resizing %lld to %lld is too large", fn, (long long)in, (long long)out);
    double *m = (double *)TN_MALLOC((size_t)(in * out) * sizeof(double));

    if (!m) return (tn_tensor *)tn__error("%s: out of memory", fn);
    memset(m, 0, (size_t)(in * out) * sizeof(double));
    for (int64_t i = 0; i < out; i++) {
        if (kind == 0) { /* adaptive average */
            int64_t a = i * in / out, b = ((i + 1) * in + out - 1) / out;
            for (int64_t j = a; j < b; j++) m[i * in + j] = 1.0 / (double)(b - a);
        } else {          /* linear interpolation, PyTorch's source index */
            double src = align_corners ? (double)i * scale : ((double)i + 0.5) * scale - 0.5;
            if (src < 0) src = 0;
            int64_t j0 = (int64_t)src;
            if (j0 > in - 1) j0 = in - 1;
            int64_t j1 = j0 + (j0 < in - 1 ? 1 : 0);
            double l1 = src - (double)j0;
            m[i * in + j0] += 1 - l1;
            m[i * in + j1] += l1;
        }
    }
    tn_tensor *t = tn_to(tn_to_dtype(tn_from_data(m, TN_SHAPE(out, in), TN_F64), like->dtype), like->device);
    TN_FREE(m);
    return t;
}
static tn_tensor *tn__adaptive_avg_pool(const char *fn, tn_tensor *x, int64_t OH, int64_t OW) {
    TN__CHECK_NULL(x);
    if (OH <= 0 || OW <= 0) return (tn_tensor *)tn__error("%s: output size (%lld, %lld) must be positive", fn, (long long)OH, (long long)OW);
    tn_scope_begin();
    tn_tensor *x4 = tn__pool_input(fn, x, 2), *y = NULL;
    if (x4 && OH == 1 && OW == 1) y = tn_mean_dims(x4, TN_SHAPE(2, 3), true);   /* global pooling */
    else if (x4) {
        tn_tensor *mh = x4->shape[2] == OH ? NULL : tn__resize_matrix(fn, 0, x4->shape[2], OH, 0, false, x4);
        tn_tensor *mw = x4->shape[3] == OW ? NULL : tn__resize_matrix(fn, 0, x4->shape[3], OW, 0, false, x4);
        if ((x4->shape[2] != OH && !mh) || (x4->shape[3] != OW && !mw)) y = NULL;   /* a matrix could not be made */
        else {
            y = mh ? tn_matmul(mh, x4) : x4;
            y = mw ? tn_matmul(y, tn_t(mw)) : y == x4 ? tn_clone(y) : y;   /* never the caller's tensor: it gets renamed below */
        }
    }
    y = y ? tn__pool_output(y, x, 2) : NULL;
    return tn__scope_return(OH == 1 && OW == 1 ? y : tn__grad_name(y, "AdaptiveAvgPool2DBackward0"));   /* 1x1: MeanBackward1, as PyTorch */
}
TNDEF tn_tensor *tn_adaptive_avg_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w) {
    return TN__AS("tn_adaptive_avg_pool2d", tn__adaptive_avg_pool("tn_adaptive_avg_pool2d", x, out_h, out_w));
}

/* ---- normalisation: composites of differentiable reductions (double backward works) ---- */
/* Batch norm of a float CPU tensor as one node. x [N, C, L] contiguous; the statistics
   (double) are mean, invstd and the biased variance per channel. Threads take blocks of
   channels and walk each block in memory order, n outer: a channel at a time jumps C*L
   elements every L and the prefetchers stall (3-4x slower at [64, 32, 28, 28]). Per channel
   the sums run in the same order whatever the number of threads: n ascending, element l into
   lane l % 8 (8 partial sums vectorise; one would not), the lanes added last. Forward: the
   mean, then the centred squares, then the normalisation (three passes); the plain backward:
   both sums in one pass, the input gradient in a second. Under create_graph the backward is
   the closed form written with differentiable ops, so double backward still works. */
#define TN__BN_CB 64   /* channels per block: their partial sums stay on the stack */
#define TN__BN_KERNELS(T, S) \
static void tn__bn_sum_##S(const T *xp, int64_t L, double *acc) { /* the lanes in locals: registers */ \
    double s8[8]; int64_t l = 0; \
    for (int j = 0; j < 8; j++) s8[j] = acc[j]; \
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) s8[j] += xp[l + j]; \
    for (int j = 0; j < 8; j++) acc[j] = s8[j]; \
    for (; l < L; l++) acc[l & 7] += xp[l]; \
} \
static void tn__bn_sq_##S(const T *xp, int64_t L, double m, double *acc) { \
    double q8[8]; int64_t l = 0; \
    for (int j = 0; j < 8; j++) q8[j] = acc[j]; \
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) { double d = xp[l + j] - m; q8[j] += d * d; } \
    for (int j = 0; j < 8; j++) acc[j] = q8[j]; \
    for (; l < L; l++) { double d = xp[l] - m; acc[l & 7] += d * d; } \
} \
static void tn__bn_dot_##S(const T *xp, const T *gp, int64_t L, double m, double *gacc, double *xacc) { \
    double g8[8], x8[8]; int64_t l = 0; \
    for (int j = 0; j < 8; j++) { g8[j] = gacc[j]; x8[j] = xacc[j]; } \
    for (; l + 8 <= L; l += 8) for (int j = 0; j < 8; j++) { g8[j] += gp[l + j]; x8[j] += gp[l + j] * (xp[l + j] - m); } \
    for (int j = 0; j < 8; j++) { gacc[j] = g8[j]; xacc[j] = x8[j]; } \
    for (; l < L; l++) { gacc[l & 7] += gp[l]; xacc[l & 7] += gp[l] * (xp[l] - m); } \
} \
static void tn__bn_fwd_##S(const T *x, T *y, const T *w, const T *b, double *mean, double *invstd, double *var, int64_t N, int64_t C, \
                          int64_t L, bool stats, double eps) { \
    const int nthr = tn__par_threads(N * C * L, C); \
    const double M = (double)(N * L); \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int t = 0; t < nthr; t++) \
        for (int64_t c0 = C * t / nthr, c1 = C * (t + 1) / nthr; c0 < c1; c0 += TN__BN_CB) { \
            const int64_t nc = c1 - c0 < TN__BN_CB ? c1 - c0 : TN__BN_CB; \
            if (stats) { \
                double a8[TN__BN_CB][8]; \
                memset(a8, 0, sizeof a8); \
                for (int64_t n = 0; n < N; n++) \
                    for (int64_t c = 0; c < nc; c++) tn__bn_sum_##S(x + (n * C + c0 + c) * L, L, a8[c]); \
                for (int64_t c = 0; c < nc; c++) { \
                    double s = 0; \
                    for (int j = 0; j < 8; j++) s += a8[c][j]; \
                    mean[c0 + c] = s / M; \
                } \
                memset(a8, 0, sizeof a8); \
                for (int64_t n = 0; n < N; n++) \
                    for (int64_t c = 0; c < nc; c++) tn__bn_sq_##S(x + (n * C + c0 + c) * L, L, mean[c0 + c], a8[c]); \
                for (int64_t c = 0; c < nc; c++) { \
                    double q = 0; \
                    for (int j = 0; j < 8; j++) q += a8[c][j]; \
                    var[c0 + c] = q / M; \
                    invstd[c0 + c] = 1 / sqrt(var[c0 + c] + eps); \
                } \
            } \
            T sc[TN__BN_CB], sh[TN__BN_CB]; \
            for (int64_t c = 0; c < nc; c++) { \
                sc[c] = (T)invstd[c0 + c] * (w ? w[c0 + c] : (T)1); \
                sh[c] = (b ? b[c0 + c] : (T)0) - (T)mean[c0 + c] * sc[c]; \
            } \
            for (int64_t n = 0; n < N; n++) \
                for (int64_t c = 0; c < nc; c++) { \
                    const T *xp = x + (n * C + c0 + c) * L; T *yp = y + (n * C + c0 + c) * L; \
                    const T scale = sc[c], shift = sh[c]; \
                    for (int64_t l = 0; l < L; l++) yp[l] = shift + xp[l] * scale; \
                } \
        } \
} \
static void tn__bn_bwd_##S(const T *x, const T *gy, const T *w, const double *mean, const double *invstd, T *gx, T *gw, T *gb, \
                          int64_t N, int64_t C, int64_t L, bool training) { \
    const int nthr = tn__par_threads(N * C * L, C); \
    const double M = (double)(N * L); \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int t = 0; t < nthr; t++) \
        for (int64_t c0 = C * t / nthr, c1 = C * (t + 1) / nthr; c0 < c1; c0 += TN__BN_CB) { \
            const int64_t nc = c1 - c0 < TN__BN_CB ? c1 - c0 : TN__BN_CB; \
            double g8[TN__BN_CB][8], x8[TN__BN_CB][8], k[TN__BN_CB], a[TN__BN_CB], bq[TN__BN_CB]; \
            memset(g8, 0, sizeof g8); \
            memset(x8, 0, sizeof x8); \
            for (int64_t n = 0; n < N; n++) \
                for (int64_t c = 0; c < nc; c++) { \
                    const int64_t o = (n * C + c0 + c) * L; \
                    tn__bn_dot_##S(x + o, gy + o, L, mean[c0 + c], g8[c], x8[c]); \
                } \
            for (int64_t c = 0; c < nc; c++) { \
                double sg = 0, sgx = 0; \
                const double is = invstd[c0 + c]; \
                for (int j = 0; j < 8; j++) { sg += g8[c][j]; sgx += x8[c][j]; } \
                if (gw) gw[c0 + c] = (T)(sgx * is); \
                if (gb) gb[c0 + c] = (T)sg; \
                k[c] = is * (w ? (double)w[c0 + c] : 1); \
                a[c] = training ? sg / M : 0; \
                bq[c] = training ? sgx * is * is / M : 0; \
            } \
            if (!gx) continue; \
            for (int64_t n = 0; n < N; n++) \
                for (int64_t c = 0; c < nc; c++) { \
                    const int64_t o = (n * C + c0 + c) * L; \
                    const T *xp = x + o, *gp = gy + o; T *op = gx + o; \
                    const double m = mean[c0 + c], kc = k[c], ac = a[c], bc = bq[c]; \
                    for (int64_t l = 0; l < L; l++) op[l] = (T)(kc * ((double)gp[l] - ac - ((double)xp[l] - m) * bc)); \
                } \
        } \
} \
static void tn__bn_run_##S(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, double *ms, tn_tensor *y, tn_tensor *gx, tn_tensor *gw, \
                          tn_tensor *gb, double eps) { \
    const int64_t N = x->shape[0], C = x->shape[1], L = tn_numel(x) / (N * C); \
    const T *wp = w ? (const T *)tn_data_ptr(w) : NULL; \
    if (mode < 2) \
        tn__bn_fwd_##S((const T *)tn_data_ptr(x), (T *)tn_data_ptr(y), wp, b ? (const T *)tn_data_ptr(b) : NULL, ms, ms + C, ms + 2 * C, \
                       N, C, L, mode == 0, eps); \
    else \
        tn__bn_bwd_##S((const T *)tn_data_ptr(x), (const T *)tn_data_ptr(y), wp, ms, ms + C, gx ? (T *)tn_data_ptr(gx) : NULL, \
                       gw ? (T *)tn_data_ptr(gw) : NULL, gb ? (T *)tn_data_ptr(gb) : NULL, N, C, L, mode == 2); \
}
TN__BN_KERNELS(float, f32)
TN__BN_KERNELS(double, f64)
#undef TN__BN_KERNELS
#undef TN__BN_CB
/* The backend entry (tn_backend.batch_norm) over CPU memory. */
static int tn__cpu_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                              tn_tensor *gb, double eps) {
    if ((x->dtype != TN_F32 && x->dtype != TN_F64) || tn_numel(x) == 0) return 1;
    double *ms = (double *)tn_data_ptr(st);
    if (x->dtype == TN_F32) tn__bn_run_f32(mode, x, w, b, ms, y, gx, gw, gb, eps);
    else tn__bn_run_f64(mode, x, w, b, ms, y, gx, gw, gb, eps);
    return 0;
}

static int tn__bn_bw(tn_ctx *n, tn_tensor *gy, tn_tensor **gin, int nin, void *user) {
    (void)user;
    tn_tensor *x = tn_ctx_saved(n, 0), *st = tn_ctx_saved(n, 1), *w = nin > 1 ? tn_ctx_saved(n, 2) : NULL;
    const bool training = n->i[0] != 0, nx = tn_ctx_needs_grad(n, 0), nw = nin > 1 && tn_ctx_needs_grad(n, 1), nb = nin > 2 && tn_ctx_needs_grad(n, 2);
    if (!x || !st) return -1;
    const int64_t C = x->shape[1];
    if (tn__grad_disabled) {   /* plain gradients from the backend (on the CPU: two passes per channel) */
        tn_tensor *g = tn_contiguous(gy), *wc = w ? tn_contiguous(w) : NULL;
        tn_tensor *gx = nx ? tn__own(tn__new(x->dtype, x->device, x->shape, x->ndim)) : NULL;
        tn_tensor *gw = nw ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(C))) : NULL, *gb = nb ? tn__own(tn__new(x->dtype, x->device, TN_SHAPE(C))) : NULL;
        if (!g || (w && !wc) || (nx && !gx) || (nw && !gw) || (nb && !gb)) return -1;
        int r = tn__backend(x->device)->batch_norm(training ? 2 : 3, x, wc, NULL, st, g, gx, gw, gb, n->d[0]);
        if (r < 0) return -1;
        if (r == 0) {
            gin[0] = gx;
            if (nin > 1) { gin[1] = gw ? tn_reshape(gw, w->shape, w->ndim) : NULL; gin[2] = gb; }
            return 0;
        }
        /* declined: the closed form below */
    }
    /* recording (create_graph): the closed form with differentiable ops; in training the
       statistics are recomputed from x so that their dependence on x is differentiated */
    int64_t dims[TN_MAX_DIMS], nd = 0;
    dims[nd++] = 0;
    for (int d = 2; d < x->ndim; d++) dims[nd++] = d;
    tn_tensor *mean, *invstd;
    if (training) {
        mean = tn_mean_dims(x, dims, (int)nd, true);
        invstd = tn_rsqrt(tn_add_scalar(tn_var_dims(x, dims, (int)nd, 0, true), n->d[0]));
    } else {
        tn_tensor *sv = tn_to_dtype(st, x->dtype);
        mean = tn__per_channel(tn_narrow(sv, 0, 0, C), x->ndim);
        invstd = tn__per_channel(tn_narrow(sv, 0, C, C), x->ndim);
    }
    tn_tensor *xhat = tn_mul(tn_sub(x, mean), invstd), *k = w ? tn_mul(invstd, tn__per_channel(w, x->ndim)) : invstd;
    if (nx) gin[0] = training ? tn_mul(k, tn_sub(tn_sub(gy, tn_mean_dims(gy, dims, (int)nd, true)), tn_mul(xhat, tn_mean_dims(tn_mul(gy, xhat), dims, (int)nd, true))))
                              : tn_mul(gy, k);
    if (nw) gin[1] = tn_reshape(tn_sum_dims(tn_mul(gy, xhat), dims, (int)nd, false), w->shape, w->ndim);
    if (nb) gin[2] = tn_sum_dims(gy, dims, (int)nd, false);
    return (nx && !gin[0]) || (nw && !gin[1]) || (nb && !gin[2]) ? -1 : 0;
}
/* The one-node batch norm through the backend's entry (the composite's checks already
   done; inside a scope). NULL with *declined set when the backend declines the case. */
static tn_tensor *tn__batch_norm_node(const tn_backend *be, tn_tensor *x, tn_tensor *rm, tn_tensor *rv, tn_tensor *w, tn_tensor *b, bool training,
                                      double momentum, double eps, bool *declined) {
    const int64_t C = x->shape[1], M = tn_numel(x) / C;
    tn_tensor *xc = tn_contiguous(x), *wc = w ? tn_contiguous(w) : NULL, *bc = b ? tn_contiguous(b) : NULL, *st;
    if (training) st = tn__own(tn__new(TN_F64, x->device, TN_SHAPE(3 * C)));   /* mean, invstd, variance: the entry's */
    else {   /* the running statistics, in double */
        tn_tensor *v = tn_to_dtype(tn_reshape(rv, TN_SHAPE(C)), TN_F64);
        tn_tensor *parts[3] = {tn_to_dtype(tn_reshape(rm, TN_SHAPE(C)), TN_F64), tn_rsqrt(tn_add_scalar(v, eps)), v};
        st = tn_contiguous(tn_cat(parts, 3, 0));
    }
    tn_tensor *y = xc && st && (!w || wc) && (!b || bc) ? tn__new(x->dtype, x->device, x->shape, x->ndim) : NULL;
    if (!y) return NULL;
    int r = be->batch_norm(training ? 0 : 1, xc, wc, bc, st, y, NULL, NULL, NULL, eps);
    if (r) { tn_release(y); *declined = r > 0; return NULL; }
    if (training && (rm || rv)) { /* running statistics: no history, in place (as the composite) */
        tn_no_grad_begin();
        tn_tensor *mean = tn_narrow(st, 0, 0, C), *var = tn_narrow(st, 0, 2 * C, C);
        if (rm) { tn_mul_scalar_(rm, 1 - momentum); tn_add_(rm, tn_reshape(tn_to_dtype(tn_mul_scalar(mean, momentum), rm->dtype), rm->shape, rm->ndim)); }
        if (rv) { tn_mul_scalar_(rv, 1 - momentum); tn_add_(rv, tn_reshape(tn_to_dtype(tn_mul_scalar(var, momentum * (double)M / (double)(M - 1)), rv->dtype), rv->shape, rv->ndim)); }
        tn_no_grad_end();
    }
    tn_tensor *ins[3] = {x, w, b};
    tn_node *nd = tn__fn_node("NativeBatchNormBackward0", tn__bn_bw, ins, w ? 3 : 1);
    if (nd) {
        nd->i[0] = training;
        nd->ni = 1;
        nd->d[0] = eps;
        tn__node_save(nd, xc);
        tn__node_save(nd, st);
        if (w) tn__node_save(nd, w);
    }
    return tn__own(tn__node_attach(nd, y));
}
/* y = x * scale + shift, scale and shift broadcast from per-channel or per-group stats. */
static tn_tensor *tn__batch_norm_impl(tn_tensor *x, tn_tensor *rm, tn_tensor *rv, tn_tensor *w, tn_tensor *b, bool training, double momentum, double eps) {
    const char *fn = "tn_batch_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 2) return (tn_tensor *)tn__error("%s: expected input with at least 2 dims [N, C, *], got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias") ||
        tn__nn_same(fn, x, rm, "running_mean") || tn__nn_same(fn, x, rv, "running_var")) return NULL;
    const int64_t C = x->shape[1];
    tn_tensor *const vs[4] = {rm, rv, w, b};
    const char *const names[4] = {"running_mean", "running_var", "weight", "bias"};
    for (int k = 0; k < 4; k++)
        if (vs[k] && tn_numel(vs[k]) != C) return (tn_tensor *)tn__error("%s: %s should contain %lld elements not %lld (input %s)", fn, names[k], (long long)C, (long long)tn_numel(vs[k]), TN__SHAPE(x));
    if (!training && (!rm || !rv)) return (tn_tensor *)tn__error("%s: running_mean and running_var must be given when not training", fn);
    int64_t dims[TN_MAX_DIMS], nd = 0, count = x->shape[0];
    dims[nd++] = 0;
    for (int d = 2; d < x->ndim; d++) { dims[nd++] = d; count *= x->shape[d]; }
    if (training && count == 1) return (tn_tensor *)tn__error("%s: expected more than 1 value per channel when training, got input size %s", fn, TN__SHAPE(x));
    if (tn_numel(x) == 0) return tn_clone(x);   /* an empty batch: nothing to normalise, running stats untouched (as PyTorch) */
    tn_scope_begin();
    const tn_backend *be = tn__backend(x->device);
    if (be->batch_norm && !w == !b && (!w || (w->dtype == x->dtype && b->dtype == x->dtype))) {
        bool declined = false;
        tn_tensor *y = tn__batch_norm_node(be, x, rm, rv, w, b, training, momentum, eps, &declined);
        if (y || !declined) return tn__scope_return(y);
    }
    tn_tensor *mean, *var;
    if (training) {
        mean = tn_mean_dims(x, dims, (int)nd, true);
        var = tn_var_dims(x, dims, (int)nd, 0, true);
        if (rm || rv) { /* running statistics: no history, in place; either may be given alone (as PyTorch) */
            tn_no_grad_begin();
            if (rm) {
                tn_mul_scalar_(rm, 1 - momentum);
                tn_add_(rm, tn_to_dtype(tn_mul_scalar(tn_reshape(mean, TN_SHAPE(C)), momentum), rm->dtype));
            }
            if (rv) {
                tn_mul_scalar_(rv, 1 - momentum);
                tn_add_(rv, tn_to_dtype(tn_mul_scalar(tn_reshape(var, TN_SHAPE(C)), momentum * (double)count / (double)(count - 1)), rv->dtype));
            }
            tn_no_grad_end();
        }
    } else {
        mean = tn__per_channel(rm, x->ndim);
        var = tn__per_channel(rv, x->ndim);
    }
    tn_tensor *scale = tn_rsqrt(tn_add_scalar(var, eps));
    if (w) scale = tn_mul(scale, tn__per_channel(w, x->ndim));
    tn_tensor *shift = tn_neg(tn_mul(mean, scale));
    if (b) shift = tn_add(shift, tn__per_channel(b, x->ndim));
    tn_tensor *y = tn_addcmul(shift, x, scale, 1);
    return tn__scope_return(tn__grad_name(y, "NativeBatchNormBackward0"));
}
TNDEF tn_tensor *tn_batch_norm(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, tn_tensor *weight, tn_tensor *bias,
                               bool training, double momentum, double eps) {
    return TN__AS("tn_batch_norm", tn__batch_norm_impl(x, running_mean, running_var, weight, bias, training, momentum, eps));
}
static tn_tensor *tn__layer_norm_impl(tn_tensor *x, const int64_t *ns, int n, tn_tensor *w, tn_tensor *b, double eps) {
    const char *fn = "tn_layer_norm";
    TN__CHECK_NULL(x);
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    bool ok = n >= 1 && n <= x->ndim && ns;
    for (int k = 0; ok && k < n; k++) ok = x->shape[x->ndim - n + k] == ns[k];
    if (!ok) return (tn_tensor *)tn__error("%s: given normalized_shape=%s, expected input with shape [*, %s, but got input of size %s", fn,
                                           ns && n > 0 ? tn__shape_str(ns, n) : "[]", ns && n > 0 ? tn__shape_str(ns, n) + 1 : "]", TN__SHAPE(x));
    tn_tensor *const vs[2] = {w, b};
    for (int k = 0; k < 2; k++)
        if (vs[k] && (vs[k]->ndim != n || memcmp(vs[k]->shape, ns, (size_t)n * sizeof(int64_t))))
            return (tn_tensor *)tn__error("%s: %s of shape %s must have normalized_shape %s", fn, k ? "bias" : "weight", TN__SHAPE(vs[k]), tn__shape_str(ns, n));
    int64_t dims[TN_MAX_DIMS];
    for (int k = 0; k < n; k++) dims[k] = x->ndim - n + k;
    tn_scope_begin();
    tn_tensor *mean = tn_mean_dims(x, dims, n, true), *var = tn_var_dims(x, dims, n, 0, true);
    tn_tensor *xhat = tn_mul(tn_sub(x, mean), tn_rsqrt(tn_add_scalar(var, eps))), *y = xhat;
    if (w && b) y = tn_addcmul(b, xhat, w, 1);
    else if (w) y = tn_mul(xhat, w);
    else if (b) y = tn_add(xhat, b);
    return tn__scope_return(tn__grad_name(y, "NativeLayerNormBackward0"));
}
TNDEF tn_tensor *tn_layer_norm(tn_tensor *x, const int64_t *normalized_shape, int n, tn_tensor *weight, tn_tensor *bias, double eps) {
    return TN__AS("tn_layer_norm", tn__layer_norm_impl(x, normalized_shape, n, weight, bias, eps));
}
static tn_tensor *tn__group_norm_impl(tn_tensor *x, int64_t G, tn_tensor *w, tn_tensor *b, double eps) {
    const char *fn = "tn_group_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 2) return (tn_tensor *)tn__error("%s: expected input with at least 2 dims [N, C, *], got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input") || tn__nn_same(fn, x, w, "weight") || tn__nn_same(fn, x, b, "bias")) return NULL;
    const int64_t N = x->shape[0], C = x->shape[1];
    if (G <= 0 || C % G) return (tn_tensor *)tn__error("%s: expected number of channels in input to be divisible by num_groups, but got input of shape %s and num_groups=%lld", fn, TN__SHAPE(x), (long long)G);
    if ((w && tn_numel(w) != C) || (b && tn_numel(b) != C)) return (tn_tensor *)tn__error("%s: weight and bias must have %lld elements (input %s)", fn, (long long)C, TN__SHAPE(x));
    tn_scope_begin();
    int64_t M = C / G;   /* elements per group (explicit: -1 cannot be inferred for an empty batch) */
    for (int d = 2; d < x->ndim; d++) M *= x->shape[d];
    tn_tensor *xg = tn_reshape(x, TN_SHAPE(N, G, M));
    tn_tensor *mean = tn_mean_dims(xg, TN_SHAPE(2), true), *var = tn_var_dims(xg, TN_SHAPE(2), 0, true);
    tn_tensor *y = tn_reshape(tn_mul(tn_sub(xg, mean), tn_rsqrt(tn_add_scalar(var, eps))), x->shape, x->ndim);
    if (w && b) y = tn_addcmul(tn__per_channel(b, x->ndim), y, tn__per_channel(w, x->ndim), 1);
    else if (w) y = tn_mul(y, tn__per_channel(w, x->ndim));
    else if (b) y = tn_add(y, tn__per_channel(b, x->ndim));
    return tn__scope_return(tn__grad_name(y, "NativeGroupNormBackward0"));
}
TNDEF tn_tensor *tn_group_norm(tn_tensor *x, int64_t num_groups, tn_tensor *weight, tn_tensor *bias, double eps) {
    return TN__AS("tn_group_norm", tn__group_norm_impl(x, num_groups, weight, bias, eps));
}
/* Instance norm is batch norm of [1, N*C, *] with statistics repeated per sample, as ATen. */
static tn_tensor *tn__instance_norm_impl(tn_tensor *x, tn_tensor *rm, tn_tensor *rv, tn_tensor *w, tn_tensor *b, bool use_input_stats, double momentum, double eps) {
    const char *fn = "tn_instance_norm";
    TN__CHECK_NULL(x);
    if (x->ndim < 3) return (tn_tensor *)tn__error("%s: expected input with at least 3 dims [N, C, *], got %s", fn, TN__SHAPE(x));
    if (tn__nn_check(fn, x, "input")) return NULL;
    const int64_t N = x->shape[0], C = x->shape[1];
    tn_tensor *const vs[4] = {rm, rv, w, b};
    for (int k = 0; k < 4; k++)
        if (vs[k] && tn_numel(vs[k]) != C) return (tn_tensor *)tn__error("%s: running stats, weight and bias must have %lld elements (input %s)", fn, (long long)C, TN__SHAPE(x));
    tn_scope_begin();
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof(int64_t));
    shape[0] = 1;
    shape[1] = N * C;
    tn_tensor *xr = tn_reshape(x, shape, x->ndim);
    tn_tensor *rm_r = rm ? tn_repeat(rm, TN_SHAPE(N)) : NULL, *rv_r = rv ? tn_repeat(rv, TN_SHAPE(N)) : NULL;
    tn_tensor *w_r = w ? tn_repeat(w, TN_SHAPE(N)) : NULL, *b_r = b ? tn_repeat(b, TN_SHAPE(N)) : NULL;
    tn_tensor *y = tn_batch_norm(xr, rm_r, rv_r, w_r, b_r, use_input_stats, momentum, eps);
    if (y && use_input_stats && (rm || rv)) { /* fold the per-sample running stats back: their mean over the batch */
        tn_no_grad_begin();
        if (rm) tn_copy_(rm, tn_mean_dims(tn_reshape(rm_r, TN_SHAPE(N, C)), TN_SHAPE(0), false));
        if (rv) tn_copy_(rv, tn_mean_dims(tn_reshape(rv_r, TN_SHAPE(N, C)), TN_SHAPE(0), false));
        tn_no_grad_end();
    }
    y = tn_reshape(y, x->shape, x->ndim);
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_instance_norm(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, tn_tensor *weight, tn_tensor *bias,
                                  bool use_input_stats, double momentum, double eps) {
    return TN__AS("tn_instance_norm", tn__instance_norm_impl(x, running_mean, running_var, weight, bias, use_input_stats, momentum, eps));
}

/* ---- dropout ---- */
/* Dropout's mask in one pass on the CPU: scale where element i's uniform double draw (tn_rand's:
   Philox counter off + i, u = (64 high bits >> 11) 2^-53) is below q, else 0 -- the values the
   draw, tn_lt_scalar, tn_to_dtype and tn_mul_scalar made in four passes. u < q is compared as
   integers: (bits >> 11) < ceil(q 2^53). The Philox rounds dominate: here in 64-bit variables,
   so that a loop over counters vectorises in 64-bit lanes without shuffles (the multiplies read
   the low halves; the junk xor leaves in the high halves is masked at the end; the same words
   as tn_philox4x32), and on x86 compiled for AVX-512 and AVX2 too, chosen at run time. */
#define TN__DROP_MASK(NAME, ATTR) \
ATTR static void NAME(float *of, double *od, int64_t i0, int64_t i1, uint64_t seed, uint64_t off, uint64_t thr, double s) { \
    const uint64_t m32 = 0xFFFFFFFFu; \
    const float sf = (float)s; \
    for (int64_t i = i0; i < i1; i++) { \
        const uint64_t ctr = off + (uint64_t)i; \
        uint64_t c0 = ctr & m32, c1 = ctr >> 32, c2 = 0, c3 = 0, k0 = seed & m32, k1 = seed >> 32; \
        for (int r = 0; r < 10; r++) { \
            const uint64_t p0 = (uint64_t)0xD2511F53u * (uint32_t)c0, p1 = (uint64_t)0xCD9E8D57u * (uint32_t)c2; \
            const uint64_t n0 = (p1 >> 32) ^ c1 ^ k0, n2 = (p0 >> 32) ^ c3 ^ k1; \
            c1 = p1; c3 = p0; c0 = n0; c2 = n2; \
            k0 = (k0 + 0x9E3779B9u) & m32; k1 = (k1 + 0xBB67AE85u) & m32; \
        } \
        const bool keep = ((((c0 & m32) << 32) | (c1 & m32)) >> 11) < thr; \
        if (of) of[i] = keep ? sf : 0.0f; \
        else od[i] = keep ? s : 0.0; \
    } \
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TN__DROP_X86 1
#else
#define TN__DROP_X86 0
#endif
TN__DROP_MASK(tn__drop_mask_base, )
#if TN__DROP_X86
TN__DROP_MASK(tn__drop_mask_avx512, __attribute__((target("avx512f"))))
TN__DROP_MASK(tn__drop_mask_avx2, __attribute__((target("avx2"))))
#endif
#undef TN__DROP_MASK
static tn_tensor *tn__drop_mask_cpu(const int64_t *shape, int nd, tn_dtype dtype, double p) {
    tn_tensor *m = tn__new(dtype, TN_CPU, shape, nd);
    if (!m) return NULL;
    const int64_t n = tn_numel(m);
    const uint64_t off = tn__gen_take(NULL, n), seed = tn__default_gen.seed;
    float *of = dtype == TN_F32 ? (float *)tn_data_ptr(m) : NULL;
    double *od = dtype == TN_F32 ? NULL : (double *)tn_data_ptr(m);
    void (*fn)(float *, double *, int64_t, int64_t, uint64_t, uint64_t, uint64_t, double) = tn__drop_mask_base;
#if TN__DROP_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) fn = tn__drop_mask_avx512;
    else if (__builtin_cpu_supports("avx2")) fn = tn__drop_mask_avx2;
#endif
    const uint64_t thr = (uint64_t)ceil((1 - p) * 0x1.0p53);   /* u < 1 - p, u = k 2^-53: k < thr */
    const int nthr = tn__par_threads(n * 16, n);   /* a draw costs about 16 simple ops */
    TN__OMP_PARALLEL_FOR(nthr)
    for (int t = 0; t < nthr; t++) fn(of, od, n * t / nthr, n * (t + 1) / nthr, seed, off, thr, 1 / (1 - p));
    return tn__own(m);
}
static tn_tensor *tn__dropout(const char *fn, tn_tensor *x, double p, bool training, bool channels) {
    TN__CHECK_NULL(x);
    if (!(p >= 0 && p <= 1)) return (tn_tensor *)tn__error("%s: dropout probability has to be between 0 and 1, but got %g", fn, p);
    if (!training || p == 0) return tn__own(tn_retain(x));   /* the input itself, as PyTorch */
    if (tn__nn_check(fn, x, "input")) return NULL;
    int64_t shape[TN_MAX_DIMS];
    int nd = x->ndim;
    memcpy(shape, x->shape, (size_t)nd * sizeof(int64_t));
    if (channels) {
        if (nd != 3 && nd != 4) return (tn_tensor *)tn__error("%s: expected 3-d [N, C, L] or 4-d [N, C, H, W] input, got %s", fn, TN__SHAPE(x));
        for (int d = 2; d < nd; d++) shape[d] = 1;   /* PyTorch 1.13's feature_dropout: one draw per (dim 0, dim 1) */
    }
    tn_scope_begin();
    /* bernoulli_p's draws, made where x lives: the same mask for the same seed on every device */
    tn_tensor *mask = p == 1 ? tn_to(tn_zeros(shape, nd, x->dtype), x->device)
                    : x->device == TN_CPU && (x->dtype == TN_F32 || x->dtype == TN_F64) ? tn__drop_mask_cpu(shape, nd, x->dtype, p)
                    : tn_mul_scalar(tn_to_dtype(tn_lt_scalar(tn__random("tn_dropout", UNIFORM, shape, nd, TN_F64, NULL, 0, 1, 0, 0, x->device), 1 - p),
                                                x->dtype), 1 / (1 - p));
    return tn__scope_return(tn_mul(x, mask));   /* MulBackward0, as PyTorch 1.13 on CPU */
}
TNDEF tn_tensor *tn_dropout(tn_tensor *x, double p, bool training) { return TN__AS("tn_dropout", tn__dropout("tn_dropout", x, p, training, false)); }
TNDEF tn_tensor *tn_dropout2d(tn_tensor *x, double p, bool training) { return TN__AS("tn_dropout2d", tn__dropout("tn_dropout2d", x, p, training, true)); }

/* ---- embedding, one_hot ---- */
static tn_tensor *tn__embedding_impl(tn_tensor *idx, tn_tensor *w, bool padded, int64_t pad) {
    const char *fn = "tn_embedding";
    TN__CHECK_NULL(idx); TN__CHECK_NULL(w);
    if (idx->dtype != TN_I64 && idx->dtype != TN_I32)
        return (tn_tensor *)tn__error("%s: expected indices of dtype int64 or int32, got %s", fn, tn_dtype_name(idx->dtype));
    if (w->ndim != 2) return (tn_tensor *)tn__error("%s: weight must be 2-d [num_embeddings, embedding_dim], got %s", fn, TN__SHAPE(w));
    if (idx->ndim + 1 > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: indices %s have too many dims", fn, TN__SHAPE(idx));
    const int64_t V = w->shape[0], D = w->shape[1];
    if (padded && (pad < -V || pad >= V)) return (tn_tensor *)tn__error("%s: padding_idx %lld must be within num_embeddings (%lld)", fn, (long long)pad, (long long)V);
    if (pad < 0) pad += V;
    tn_scope_begin();
    tn_tensor *flat = tn_reshape(idx, TN_SHAPE(-1));
    tn_tensor *rows = tn_index_select(w, 0, flat);
    if (padded && w->requires_grad) { /* the padding row gets no gradient */
        tn_tensor *keep = tn_unsqueeze(tn_ne_scalar(flat, (double)pad), 1);
        rows = tn_where(keep, rows, tn_index_select(tn_detach(w), 0, flat));
    }
    int64_t shape[TN_MAX_DIMS];
    memcpy(shape, idx->shape, (size_t)idx->ndim * sizeof(int64_t));
    shape[idx->ndim] = D;
    return tn__scope_return(tn__grad_name(tn_reshape(rows, shape, idx->ndim + 1), "EmbeddingBackward0"));
}
TNDEF tn_tensor *tn_embedding(tn_tensor *indices, tn_tensor *weight) { return TN__AS("tn_embedding", tn__embedding_impl(indices, weight, false, 0)); }
TNDEF tn_tensor *tn_embedding_padded(tn_tensor *indices, tn_tensor *weight, int64_t padding_idx) {
    return TN__AS("tn_embedding", tn__embedding_impl(indices, weight, true, padding_idx));
}
static tn_tensor *tn__one_hot_impl(tn_tensor *idx, int64_t nc) {
    const char *fn = "tn_one_hot";
    TN__CHECK_NULL(idx);
    if (idx->dtype != TN_I64) return (tn_tensor *)tn__error("%s: one_hot is only applicable to index tensors (int64), got %s", fn, tn_dtype_name(idx->dtype));
    if (idx->ndim + 1 > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: indices %s have too many dims", fn, TN__SHAPE(idx));
    tn_scope_begin();
    int64_t lo = 0, hi = -1;
    if (tn_numel(idx) > 0) { lo = (int64_t)tn_item(tn_min(idx)); hi = (int64_t)tn_item(tn_max(idx)); }
    if (nc < 0 && tn_numel(idx) == 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: can not infer total number of classes from empty tensor", fn); }
    if (nc < 0) nc = hi + 1;
    if (lo < 0) { tn_scope_end(); return (tn_tensor *)tn__error("%s: class values must be non-negative (got %lld)", fn, (long long)lo); }
    if (hi >= nc) { tn_scope_end(); return (tn_tensor *)tn__error("%s: class values must be smaller than num_classes (got %lld for %lld classes)", fn, (long long)hi, (long long)nc); }
    tn_tensor *y = tn_to_dtype(tn_eq(tn_unsqueeze(idx, -1), tn_to(tn_arange(0, (double)nc, 1, TN_I64), idx->device)), TN_I64);
    return tn__scope_return(y);
}
TNDEF tn_tensor *tn_one_hot(tn_tensor *indices, int64_t num_classes) { return TN__AS("tn_one_hot", tn__one_hot_impl(indices, num_classes)); }

/* ---- attention ---- */
static tn_tensor *tn__sdpa_impl(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, double dropout_p, bool causal, double scale) {
    const char *fn = "tn_scaled_dot_product_attention";
    TN__CHECK_NULL(q); TN__CHECK_NULL(k); TN__CHECK_NULL(v);
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2 || q->shape[q->ndim - 1] != k->shape[k->ndim - 1] || k->shape[k->ndim - 2] != v->shape[v->ndim - 2])
        return (tn_tensor *)tn__error("%s: expected q [*, L, E], k [*, S, E], v [*, S, Ev], got %s, %s, %s", fn, TN__SHAPE(q), TN__SHAPE(k), TN__SHAPE(v));
    if (tn__nn_check(fn, q, "query") || tn__nn_same(fn, q, k, "key") || tn__nn_same(fn, q, v, "value")) return NULL;
    if (mask && mask->dtype != TN_BOOL && mask->dtype != q->dtype)
        return (tn_tensor *)tn__error("%s: attn_mask must be bool or match the query dtype %s, got %s", fn, tn_dtype_name(q->dtype), tn_dtype_name(mask->dtype));
    if (causal && mask) return (tn_tensor *)tn__error("%s: give attn_mask or is_causal, not both", fn);
    const int64_t L = q->shape[q->ndim - 2], S = k->shape[k->ndim - 2], E = q->shape[q->ndim - 1];
    tn_scope_begin();
    tn_tensor *att = tn_mul_scalar(tn_matmul(q, tn_transpose(k, -2, -1)), scale > 0 ? scale : 1 / sqrt((double)(E ? E : 1)));
    if (causal) mask = tn_tril(tn_to(tn_ones(TN_SHAPE(L, S), TN_BOOL), q->device), 0);
    if (mask && mask->dtype == TN_BOOL) att = tn_masked_fill(att, tn_logical_not(mask), -INFINITY);
    else if (mask) att = tn_add(att, mask);
    att = tn_softmax(att, -1);
    if (dropout_p > 0) att = tn_dropout(att, dropout_p, true);
    return tn__scope_return(tn_matmul(att, v));
}
TNDEF tn_tensor *tn_scaled_dot_product_attention(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *attn_mask, double dropout_p, bool is_causal, double scale) {
    return TN__AS("tn_scaled_dot_product_attention", tn__sdpa_impl(q, k, v, attn_mask, dropout_p, is_causal, scale));
}

/* ---- resizing ---- */
static tn_tensor *tn__interpolate_impl(tn_tensor *x, const int64_t *size, const double *sf, const char *mode, bool align_corners) {
    const char *fn = "tn_interpolate";
    TN__CHECK_NULL(x);
    int nsp = x->ndim - 2, m = !mode ? -1 : !strcmp(mode, "nearest") ? 0 : !strcmp(mode, "linear") ? 1 : !strcmp(mode, "bilinear") ? 2 : -1;
    if (m < 0) return (tn_tensor *)tn__error("%s: mode '%s' is not supported (nearest, linear, bilinear)", fn, mode ? mode : "(null)");
    if (nsp < 1 || nsp > 2 || (m == 1 && nsp != 1) || (m == 2 && nsp != 2))
        return (tn_tensor *)tn__error("%s: mode '%s' expects a %s input, got %s", fn, mode, m == 1 ? "3-d [N, C, W]" : m == 2 ? "4-d [N, C, H, W]" : "3-d or 4-d", TN__SHAPE(x));
    if (!size == !sf) return (tn_tensor *)tn__error("%s: give exactly one of size and scale_factor", fn);
    if (m == 0 && align_corners) return (tn_tensor *)tn__error("%s: align_corners option can only be set with the interpolating modes: linear | bilinear", fn);
    if (tn__nn_check(fn, x, "input")) return NULL;
    int64_t out[2];
    double scale[2];
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[2 + i];
        if (sf && !(sf[i] > 0)) return (tn_tensor *)tn__error("%s: scale_factor must be positive, got %g", fn, sf[i]);
        out[i] = size ? size[i] : (int64_t)floor((double)in * sf[i]);
        if (out[i] <= 0 || in <= 0) return (tn_tensor *)tn__error("%s: input %s and output size %lld must be positive", fn, TN__SHAPE(x), (long long)out[i]);
        /* PyTorch's area_pixel_compute_scale: a given scale_factor is used as is */
        scale[i] = m && align_corners ? (out[i] > 1 ? (double)(in - 1) / (double)(out[i] - 1) : 0) : sf ? 1 / sf[i] : (double)in / (double)out[i];
    }
    tn_scope_begin();
    tn_tensor *y = x;
    for (int i = 0; i < nsp; i++) {
        int64_t in = x->shape[2 + i];
        if (m == 0) {
            int64_t *ix = (int64_t *)TN_MALLOC((size_t)out[i] * sizeof(int64_t));
            if (!ix) { tn_scope_end(); return (tn_tensor *)tn__error("%s: out of memory", fn); }
            for (int64_t o = 0; o < out[i]; o++) { int64_t s = (int64_t)floor((double)o * scale[i]); ix[o] = s < in - 1 ? s : in - 1; }
            y = tn_index_select(y, 2 + i, tn_to(tn_from_data(ix, TN_SHAPE(out[i]), TN_I64), y->device));
            TN_FREE(ix);
        } else if (out[i] != in) {   /* an unchanged size is copied whatever scale_factor says, as PyTorch */
            tn_tensor *mat = tn__resize_matrix(fn, 1, in, out[i], scale[i], align_corners, x);
            y = i == nsp - 1 ? tn_matmul(y, tn_t(mat)) : tn_matmul(mat, y);   /* last dim from the right, H from the left */
        }
    }
    y = y == x ? tn_clone(x) : y;
    return tn__scope_return(tn__grad_name(y, m == 0 ? (nsp == 1 ? "UpsampleNearest1DBackward1" : "UpsampleNearest2DBackward1")
                                             : m == 1 ? "UpsampleLinear1DBackward1" : "UpsampleBilinear2DBackward1"));
}
TNDEF tn_tensor *tn_interpolate(tn_tensor *x, const int64_t *size, const double *scale_factor, const char *mode, bool align_corners) {
    return TN__AS("tn_interpolate", tn__interpolate_impl(x, size, scale_factor, mode, align_corners));
}
static tn_tensor *tn__pixel_shuffle(const char *fn, tn_tensor *x, int64_t r, bool inverse) {
    TN__CHECK_NULL(x);
    if (x->ndim < 3 || x->ndim + 2 > TN_MAX_DIMS) return (tn_tensor *)tn__error("%s: expected input [*, C, H, W], got %s", fn, TN__SHAPE(x));
    if (r <= 0) return (tn_tensor *)tn__error("%s: factor must be greater than 0, got %lld", fn, (long long)r);
    int nd = x->ndim, lead = nd - 3;
    const int64_t C = x->shape[nd - 3], H = x->shape[nd - 2], W = x->shape[nd - 1];
    if (!inverse && C % (r * r)) return (tn_tensor *)tn__error("%s: the channel count %lld of input %s must be divisible by the square of upscale_factor (%lld)", fn, (long long)C, TN__SHAPE(x), (long long)(r * r));
    if (inverse && (H % r || W % r)) return (tn_tensor *)tn__error("%s: height and width of input %s must be divisible by downscale_factor %lld", fn, TN__SHAPE(x), (long long)r);
    int64_t s1[TN_MAX_DIMS], perm[TN_MAX_DIMS], s2[TN_MAX_DIMS];
    for (int d = 0; d < lead; d++) { s1[d] = s2[d] = x->shape[d]; perm[d] = d; }
    if (!inverse) { /* [*, C', r, r, H, W] -> [*, C', H, r, W, r] */
        int64_t a[5] = {C / (r * r), r, r, H, W}, p[5] = {0, 3, 1, 4, 2}, b[3] = {C / (r * r), H * r, W * r};
        for (int d = 0; d < 5; d++) { s1[lead + d] = a[d]; perm[lead + d] = lead + p[d]; }
        for (int d = 0; d < 3; d++) s2[lead + d] = b[d];
    } else {        /* [*, C, H', r, W', r] -> [*, C, r, r, H', W'] */
        int64_t a[5] = {C, H / r, r, W / r, r}, p[5] = {0, 2, 4, 1, 3}, b[3] = {C * r * r, H / r, W / r};
        for (int d = 0; d < 5; d++) { s1[lead + d] = a[d]; perm[lead + d] = lead + p[d]; }
        for (int d = 0; d < 3; d++) s2[lead + d] = b[d];
    }
    tn_scope_begin();
    tn_tensor *y = tn_reshape(tn_permute(tn_reshape(x, s1, lead + 5), perm, lead + 5), s2, lead + 3);
    if (y && tn_same_storage(y, x)) y = tn_clone(y);   /* factor 1: a new tensor, as PyTorch */
    return tn__scope_return(tn__grad_name(y, inverse ? "PixelUnshuffleBackward0" : "PixelShuffleBackward0"));
}
TNDEF tn_tensor *tn_pixel_shuffle(tn_tensor *x, int64_t r) { return TN__AS("tn_pixel_shuffle", tn__pixel_shuffle("tn_pixel_shuffle", x, r, false)); }
TNDEF tn_tensor *tn_pixel_unshuffle(tn_tensor *x, int64_t r) { return TN__AS("tn_pixel_unshuffle", tn__pixel_shuffle("tn_pixel_unshuffle", x, r, true)); }


/* ---- losses ----
   Composites of differentiable ops, following PyTorch 1.13's decompositions (its
   derivatives where they differ are noted), so double backward comes for free. Each
   public function runs its body in a scope, keeps the result and names its node. */
static int tn__loss_check_reduction(const char *fn, tn_reduction r, bool batchmean_ok) {
    if ((int)r == (int)TN_REDUCTION_BATCHMEAN && !batchmean_ok)
        return TN__FAIL_INT("%s: reduction TN_REDUCTION_BATCHMEAN is only valid for tn_kl_div (expected TN_REDUCTION_MEAN, TN_REDUCTION_SUM or TN_REDUCTION_NONE)", fn);
    if ((int)r < 0 || (int)r > (batchmean_ok ? 3 : 2))
        return TN__FAIL_INT("%s: invalid reduction %d (expected TN_REDUCTION_MEAN, TN_REDUCTION_SUM, TN_REDUCTION_NONE%s)", fn, (int)r,
                            batchmean_ok ? " or TN_REDUCTION_BATCHMEAN" : "");
    return 0;
}
/* PyTorch's apply_loss_reduction (none: the elementwise loss itself) */
static tn_tensor *tn__loss_reduce(tn_tensor *l, tn_reduction r) {
    return r == TN_REDUCTION_MEAN ? tn_mean(l) : r == TN_REDUCTION_SUM ? tn_sum(l) : l;
}
/* The end of every loss body: name the result's node, hand it out of the scope. */
static tn_tensor *tn__loss_finish(tn_tensor *r, const char *grad_name) {
    r = tn_keep(grad_name ? tn__grad_name(r, grad_name) : r);
    tn_scope_end();
    return r;
}
/* a and b broadcast together (names a and b in the message); with need_float, to a floating type */
static int tn__loss_check_pair(const char *fn, const char *na, tn_tensor *a, const char *nb, tn_tensor *b, bool need_float) {
    int64_t shape[TN_MAX_DIMS];
    if (a->ndim > TN_MAX_DIMS || b->ndim > TN_MAX_DIMS || tn__broadcast(a->shape, a->ndim, b->shape, b->ndim, shape) < 0)
        return TN__FAIL_INT("%s: %s %s and %s %s are not broadcastable", fn, na, TN__SHAPE(a), nb, TN__SHAPE(b));
    tn_tensor *ab[2];
    ab[0] = a;
    ab[1] = b;
    tn_dtype dt = tn_result_type(ab, 2);
    if (need_float && !tn_dtype_is_floating(dt))
        return TN__FAIL_INT("%s: expected floating point %s and %s, got %s and %s", fn, na, nb, tn_dtype_name(a->dtype), tn_dtype_name(b->dtype));
    return 0;
}

static tn_tensor *tn__mse_l1_impl(const char *fn, tn_tensor *input, tn_tensor *target, tn_reduction red, bool l1) {
    TN__CHECK_NULL(input, target);
    /* l1 stays a plain composite as in PyTorch (abs of integers works; their mean fails in tn_mean) */
    if (tn__loss_check_reduction(fn, red, false) || tn__loss_check_pair(fn, "input", input, "target", target, !l1)) return NULL;
    tn_scope_begin();
    tn_tensor *d = tn_sub(input, target);
    return tn__loss_finish(tn__loss_reduce(l1 ? tn_abs(d) : tn_square(d), red), l1 ? NULL : "MseLossBackward0");
}
TNDEF tn_tensor *tn_mse_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction) {
    return TN__AS("tn_mse_loss", tn__mse_l1_impl("tn_mse_loss", input, target, reduction, false));
}
TNDEF tn_tensor *tn_l1_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction) {
    return TN__AS("tn_l1_loss", tn__mse_l1_impl("tn_l1_loss", input, target, reduction, true));
}

/* smooth_l1 (huber false): z < beta ? 0.5 z^2 / beta : z - 0.5 beta; huber: z < delta ?
   0.5 z^2 : delta (z - 0.5 delta), z = |input - target|. */
static tn_tensor *tn__smooth_l1_impl(const char *fn, tn_tensor *input, tn_tensor *target, tn_reduction red, double beta, bool huber) {
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__loss_check_pair(fn, "input", input, "target", target, true)) return NULL;
    if (huber && !(beta > 0)) return (tn_tensor *)tn__error("%s: delta must be positive, got %g", fn, beta);
    if (!huber && !(beta >= 0)) return (tn_tensor *)tn__error("%s: beta must be non-negative, got %g", fn, beta);
    tn_scope_begin();
    tn_tensor *d = tn_sub(input, target), *z = tn_abs(d), *l;
    if (!huber && beta == 0) {
        l = z; /* PyTorch's l1 path (the quadratic branch would be 0/0) */
    } else {
        tn_tensor *quad = tn_mul_scalar(tn_mul(d, d), 0.5);
        if (!huber) quad = tn_div_scalar(quad, beta);
        tn_tensor *lin = tn_sub_scalar(z, 0.5 * beta);
        if (huber) lin = tn_mul_scalar(lin, beta);
        l = tn_where(tn_lt_scalar(z, beta), quad, lin);
    }
    return tn__loss_finish(tn__loss_reduce(l, red), huber ? "HuberLossBackward0" : "SmoothL1LossBackward0");
}
TNDEF tn_tensor *tn_smooth_l1_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction, double beta) {
    return TN__AS("tn_smooth_l1_loss", tn__smooth_l1_impl("tn_smooth_l1_loss", input, target, reduction, beta, false));
}
TNDEF tn_tensor *tn_huber_loss(tn_tensor *input, tn_tensor *target, tn_reduction reduction, double delta) {
    return TN__AS("tn_huber_loss", tn__smooth_l1_impl("tn_huber_loss", input, target, reduction, delta, true));
}

/* Checks of input [C] / [N, C] / [N, C, d1, ...] against a class-index target and weight. */
static int tn__class_check(const char *fn, tn_tensor *input, tn_tensor *target, tn_tensor *weight) {
    if (tn__check_cpu_dtype(fn, input)) return -1;
    if (!tn_dtype_is_floating(input->dtype))
        return TN__FAIL_INT("%s: expected a floating point input, got %s (input %s)", fn, tn_dtype_name(input->dtype), TN__SHAPE(input));
    if (input->ndim == 0)
        return TN__FAIL_INT("%s: expected an input of 1 or more dimensions ([C], [N, C] or [N, C, d1, ...]), got a 0-d input", fn);
    if (target->dtype != TN_I64)
        return TN__FAIL_INT("%s: expected target dtype int64 (Long), got %s (input %s, target %s)", fn, tn_dtype_name(target->dtype),
                            TN__SHAPE(input), TN__SHAPE(target));
    int64_t want[TN_MAX_DIMS];
    int nw = 0;
    for (int i = 0; i < input->ndim; i++) if (i != 1) want[nw++] = input->shape[i];
    if (input->ndim == 1) nw = 0;
    if (target->ndim != nw) {
        if (nw == 0)
            return TN__FAIL_INT("%s: an unbatched input %s expects a 0-d target, got target %s", fn, TN__SHAPE(input), TN__SHAPE(target));
        return TN__FAIL_INT("%s: expected a %d-d target %s for input %s, got target %s", fn, nw, tn__shape_str(want, nw), TN__SHAPE(input), TN__SHAPE(target));
    }
    if (nw > 0 && target->shape[0] != input->shape[0])
        return TN__FAIL_INT("%s: input batch size %lld does not match target batch size %lld (input %s, target %s)", fn,
                            (long long)input->shape[0], (long long)target->shape[0], TN__SHAPE(input), TN__SHAPE(target));
    for (int i = 1; i < nw; i++)
        if (target->shape[i] != want[i])
            return TN__FAIL_INT("%s: size mismatch: input %s expects target %s, got target %s", fn, TN__SHAPE(input), tn__shape_str(want, nw), TN__SHAPE(target));
    int64_t c = input->shape[input->ndim == 1 ? 0 : 1];
    if (weight) {
        if (weight->ndim != 1 || weight->shape[0] != c)
            return TN__FAIL_INT("%s: weight should be defined for all %lld classes or no classes, got weight %s (input %s)", fn, (long long)c,
                                TN__SHAPE(weight), TN__SHAPE(input));
        if (weight->dtype != input->dtype)
            return TN__FAIL_INT("%s: expected weight dtype %s (as input), got %s", fn, tn_dtype_name(input->dtype), tn_dtype_name(weight->dtype));
    }
    return 0;
}

/* Read the class indices (in the caller's scope): *safe (int64, target's shape, ignored
   entries replaced by class 0 so gathers stay in range) and *keep (bool: entries that
   count). Returns how many count, or -1 (a target out of [0, C) that is not ignore_index). */
static int64_t tn__class_targets(const char *fn, tn_tensor *input, tn_tensor *target, int64_t ignore_index, tn_tensor **safe, tn_tensor **keep) {
    int64_t c = input->shape[input->ndim == 1 ? 0 : 1], n = tn_numel(target), count = 0;
    tn_tensor *tc = tn_contiguous(tn_to(target, TN_CPU));
    int64_t *s = (int64_t *)TN_MALLOC((size_t)(n + 1) * sizeof(int64_t));
    uint8_t *k = (uint8_t *)TN_MALLOC((size_t)(n + 1));
    if (!tc || !s || !k) {
        TN_FREE(s);
        TN_FREE(k);
        if (tc) tn__error("%s: out of memory", fn);
        return -1;
    }
    const int64_t *v = (const int64_t *)tn_data_ptr(tc);
    for (int64_t i = 0; i < n; i++) {
        k[i] = v[i] != ignore_index;
        s[i] = k[i] ? v[i] : 0;
        if (k[i] && (v[i] < 0 || v[i] >= c)) {
            tn__error("%s: target %lld is out of bounds for %lld classes (input %s, target %s)", fn, (long long)v[i], (long long)c,
                      TN__SHAPE(input), TN__SHAPE(target));
            TN_FREE(s);
            TN_FREE(k);
            return -1;
        }
        count += k[i];
    }
    *safe = tn_to(tn_from_data(s, target->shape, target->ndim, TN_I64), input->device);
    *keep = tn_to(tn_from_data(k, target->shape, target->ndim, TN_BOOL), input->device);
    TN_FREE(s);
    TN_FREE(k);
    return *safe && *keep ? count : -1;
}

/* weight[c] at each target entry, 0 where ignored (input's dtype, target's shape) */
static tn_tensor *tn__class_weights(tn_tensor *input, tn_tensor *weight, tn_tensor *safe, tn_tensor *keep) {
    tn_tensor *kf = tn_to_dtype(keep, input->dtype);
    if (!weight || !safe) return kf;
    tn_tensor *w = tn_index_select(weight, 0, tn_flatten(safe, 0, -1));
    return tn_mul(w ? tn_reshape(w, safe->shape, safe->ndim) : NULL, kf);
}

/* Sum of w_i * l_i over target entries divided by the total weight tw (w includes the
   ignore mask): PyTorch's weighted mean. When no weight counts (tw == 0) the result is NaN
   with a zero gradient at ignored entries, as PyTorch's. */
static tn_tensor *tn__class_mean(tn_tensor *wl, tn_tensor *w, tn_tensor *keep, tn_tensor *weight, int64_t nkeep) {
    if (!weight) { /* tw = nkeep */
        tn_tensor *s = tn_sum(wl);
        return nkeep ? tn_div_scalar(s, (double)nkeep) : tn_add_scalar(tn_mul_scalar(s, 0), NAN);
    }
    tn_tensor *tw = tn_sum(w);
    double twv = tw ? tn_item(tw) : 0;
    if (twv != 0) return tn_div(tn_sum(wl), tw);
    /* wl / tw elementwise with the ignored entries kept at exactly 0 */
    tn_tensor *ratio = tn_where(keep, tn_div(wl, tw), tn_zeros_like(wl));
    return tn_add_scalar(tn_sum(ratio), NAN);
}

/* nll_loss on log-probabilities logp: -weight[t] * logp[t] at each target entry */
static tn_tensor *tn__nll_core(tn_tensor *logp, tn_tensor *safe, tn_tensor *keep, tn_tensor *weight, int64_t nkeep, tn_reduction red) {
    if (!logp || !safe || !keep) return NULL;
    int64_t cd = logp->ndim == 1 ? 0 : 1;
    tn_tensor *g = tn_gather(logp, cd, tn_unsqueeze(safe, cd));
    g = g ? tn_reshape(g, safe->shape, safe->ndim) : NULL;
    tn_tensor *w = tn__class_weights(logp, weight, safe, keep);
    tn_tensor *wl = tn_neg(tn_mul(g, w));
    if (red == TN_REDUCTION_NONE) return wl;
    if (red == TN_REDUCTION_SUM) return tn_sum(wl);
    return tn__class_mean(wl, w, keep, weight, nkeep);
}

/* PyTorch's node for nll_loss_nd: nll_loss up to 2-d, nll_loss2d beyond (3-d and 5+-d
   inputs are viewed as 4-d, so their unreduced result is a view) */
static const char *tn__nll_name(int ndim, tn_reduction red) {
    return ndim <= 2 ? "NllLossBackward0" : ndim != 4 && red == TN_REDUCTION_NONE ? "ViewBackward0" : "NllLoss2DBackward0";
}

static tn_tensor *tn__nll_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction red) {
    const char *fn = "tn_nll_loss";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__class_check(fn, input, target, weight)) return NULL;
    tn_scope_begin();
    tn_tensor *safe = NULL, *keep = NULL;
    int64_t nkeep = tn__class_targets(fn, input, target, ignore_index, &safe, &keep);
    return tn__loss_finish(nkeep < 0 ? NULL : tn__nll_core(input, safe, keep, weight, nkeep, red), tn__nll_name(input->ndim, red));
}
TNDEF tn_tensor *tn_nll_loss_ex(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction reduction) {
    return TN__AS("tn_nll_loss", tn__nll_impl(input, target, weight, ignore_index, reduction));
}
TNDEF tn_tensor *tn_nll_loss(tn_tensor *input, tn_tensor *target) { return tn_nll_loss_ex(input, target, NULL, -100, TN_REDUCTION_MEAN); }

/* weight [C] viewed along the class dim of an input of ndim dims: [1, C, 1, ...] (or [C]) */
static tn_tensor *tn__class_view(tn_tensor *weight, int ndim) {
    int64_t shape[TN_MAX_DIMS];
    for (int i = 0; i < ndim; i++) shape[i] = 1;
    shape[ndim == 1 ? 0 : 1] = tn_numel(weight);
    return tn_reshape(weight, shape, ndim);
}

/* Class probabilities (PyTorch's cross_entropy_loss_prob_target): -sum(logp * t * w) */
static tn_tensor *tn__ce_prob(const char *fn, tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_reduction red, double ls, const char **name) {
    int64_t cd = input->ndim == 1 ? 0 : 1, c = input->shape[cd];
    if (!tn_dtype_is_floating(target->dtype))
        return (tn_tensor *)tn__error("%s: expected a floating point target for class probabilities (target of input's shape %s), got %s", fn,
                                      TN__SHAPE(input), tn_dtype_name(target->dtype));
    if (weight && (weight->ndim != 1 || weight->shape[0] != c))
        return (tn_tensor *)tn__error("%s: weight should be defined for all %lld classes or no classes, got weight %s (input %s)", fn, (long long)c,
                                      TN__SHAPE(weight), TN__SHAPE(input));
    tn_tensor *logp = tn_log_softmax(input, cd);
    tn_tensor *t = ls > 0 ? tn_add_scalar(tn_mul_scalar(target, 1 - ls), ls / (double)c) : target;
    tn_tensor *p = tn_mul(logp, t);
    if (weight) p = tn_mul(p, tn__class_view(weight, input->ndim));
    if (red == TN_REDUCTION_NONE) return tn_neg(tn_sum_dims(p, &cd, 1, false));
    tn_tensor *s = tn_neg(tn_sum(p));
    if (red == TN_REDUCTION_SUM) return s;
    *name = "DivBackward1";
    int64_t numel = tn_numel(input);
    return numel == 0 ? tn_add_scalar(s, NAN) : tn_div_scalar(s, (double)(numel / c));
}

static tn_tensor *tn__ce_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction red, double ls) {
    const char *fn = "tn_cross_entropy";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false)) return NULL;
    if (ls > 1 || ls != ls) return (tn_tensor *)tn__error("%s: label_smoothing must be between 0.0 and 1.0, got %g", fn, ls);
    if (tn__check_cpu_dtype(fn, input)) return NULL;
    if (!tn_dtype_is_floating(input->dtype))
        return (tn_tensor *)tn__error("%s: expected a floating point input, got %s (input %s)", fn, tn_dtype_name(input->dtype), TN__SHAPE(input));
    bool probs = input->ndim > 0 && target->ndim == input->ndim && memcmp(target->shape, input->shape, (size_t)input->ndim * sizeof(int64_t)) == 0;
    if (probs) {
        if (ignore_index != -100) return (tn_tensor *)tn__error("%s: ignore_index is not supported for class-probability targets (got %lld)", fn, (long long)ignore_index);
        const char *name = "NegBackward0";
        tn_scope_begin();
        tn_tensor *r = tn__ce_prob(fn, input, target, weight, red, ls, &name);
        return tn__loss_finish(r, name);
    }
    if (tn__class_check(fn, input, target, weight)) return NULL;
    tn_scope_begin();
    tn_tensor *safe = NULL, *keep = NULL;
    int64_t nkeep = tn__class_targets(fn, input, target, ignore_index, &safe, &keep);
    if (nkeep < 0) return tn__loss_finish(NULL, NULL);
    int64_t cd = input->ndim == 1 ? 0 : 1;
    tn_tensor *logp = tn_log_softmax(input, cd);
    tn_tensor *nll = tn__nll_core(logp, safe, keep, weight, nkeep, red);
    if (!(ls > 0)) return tn__loss_finish(nll, tn__nll_name(input->ndim, red));
    /* label smoothing (PyTorch's cross_entropy_loss_label_smoothing): the uniform part
       -sum_c w_c logp_c per entry, 0 where ignored, normalised as the nll part */
    tn_tensor *sm = tn_neg(tn_sum_dims(weight ? tn_mul(logp, tn__class_view(weight, input->ndim)) : logp, &cd, 1, false));
    sm = tn_where(keep, sm, tn_scalar(0));
    tn_tensor *ret = sm;
    if (red == TN_REDUCTION_SUM) ret = tn_sum(sm);
    else if (red == TN_REDUCTION_MEAN) {
        tn_tensor *tw = weight ? tn_sum(tn__class_weights(input, weight, safe, keep)) : NULL;
        ret = tw ? tn_div(tn_sum(sm), tw) : tn_div_scalar(tn_sum(sm), (double)nkeep);
    }
    int64_t c = input->shape[cd];
    return tn__loss_finish(tn_add(tn_mul_scalar(nll, 1 - ls), tn_mul_scalar(ret, ls / (double)c)), "AddBackward0");
}
TNDEF tn_tensor *tn_cross_entropy_ex(tn_tensor *input, tn_tensor *target, tn_tensor *weight, int64_t ignore_index, tn_reduction reduction, double label_smoothing) {
    return TN__AS("tn_cross_entropy", tn__ce_impl(input, target, weight, ignore_index, reduction, label_smoothing));
}
TNDEF tn_tensor *tn_cross_entropy(tn_tensor *input, tn_tensor *target) { return tn_cross_entropy_ex(input, target, NULL, -100, TN_REDUCTION_MEAN, 0.0); }

/* weight (may be NULL) broadcast to t's shape, or -1 with a message */
static int tn__loss_check_weight(const char *fn, const char *wname, tn_tensor *w, tn_tensor *t) {
    int64_t shape[TN_MAX_DIMS];
    if (!w) return 0;
    int n = w->ndim <= TN_MAX_DIMS ? tn__broadcast(w->shape, w->ndim, t->shape, t->ndim, shape) : -1;
    if (n != t->ndim || memcmp(shape, t->shape, (size_t)n * sizeof(int64_t)) != 0)
        return TN__FAIL_INT("%s: %s %s is not broadcastable to the loss's shape %s", fn, wname, TN__SHAPE(w), TN__SHAPE(t));
    if (!tn_dtype_is_floating(w->dtype)) return TN__FAIL_INT("%s: expected a floating point %s, got %s", fn, wname, tn_dtype_name(w->dtype));
    return 0;
}

/* max(log(x), -100) with a finite gradient at x = 0 (the log's input is 1 there) */
static tn_tensor *tn__clamped_log(tn_tensor *x) {
    tn_tensor *pos = tn_gt_scalar(x, 0);
    return tn_where(pos, tn_clamp(tn_log(tn_where(pos, x, tn_scalar(1))), -100, INFINITY), tn_scalar(-100));
}

static tn_tensor *tn__bce_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_reduction red) {
    const char *fn = "tn_binary_cross_entropy";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__check_cpu_dtype(fn, input)) return NULL;
    if (target->ndim != input->ndim || memcmp(target->shape, input->shape, (size_t)input->ndim * sizeof(int64_t)) != 0)
        return (tn_tensor *)tn__error("%s: target %s must have the same shape as input %s", fn, TN__SHAPE(target), TN__SHAPE(input));
    if (!tn_dtype_is_floating(input->dtype))
        return (tn_tensor *)tn__error("%s: expected a floating point input, got %s", fn, tn_dtype_name(input->dtype));
    if (target->dtype != input->dtype)
        return (tn_tensor *)tn__error("%s: expected target dtype %s (as input), got %s", fn, tn_dtype_name(input->dtype), tn_dtype_name(target->dtype));
    if (tn__loss_check_weight(fn, "weight", weight, input)) return NULL;
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *inside = tn_all(tn_logical_and(tn_ge_scalar(input, 0), tn_le_scalar(input, 1))); /* NaN fails too */
    tn_no_grad_end();
    if (inside && tn_item(inside) == 0) {
        tn__error("%s: all elements of input should be between 0 and 1 (input %s)", fn, TN__SHAPE(input));
        return tn__loss_finish(NULL, NULL);
    }
    /* PyTorch's (t - 1) max(log(1 - x), -100) - t max(log(x), -100), times weight */
    tn_tensor *l = tn_sub(tn_mul(tn_sub_scalar(target, 1), tn__clamped_log(tn_rsub_scalar(input, 1))), tn_mul(target, tn__clamped_log(input)));
    if (weight) l = tn_mul(l, tn_to_dtype(weight, input->dtype));
    return tn__loss_finish(inside ? tn__loss_reduce(l, red) : NULL, "BinaryCrossEntropyBackward0");
}
TNDEF tn_tensor *tn_binary_cross_entropy(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_reduction reduction) {
    return TN__AS("tn_binary_cross_entropy", tn__bce_impl(input, target, weight, reduction));
}

static tn_tensor *tn__bce_logits_impl(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_tensor *pos_weight, tn_reduction red) {
    const char *fn = "tn_binary_cross_entropy_with_logits";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, false) || tn__check_cpu_dtype(fn, input)) return NULL;
    if (target->ndim != input->ndim || memcmp(target->shape, input->shape, (size_t)input->ndim * sizeof(int64_t)) != 0)
        return (tn_tensor *)tn__error("%s: target %s must have the same shape as input %s", fn, TN__SHAPE(target), TN__SHAPE(input));
    if (!tn_dtype_is_floating(input->dtype) || !tn_dtype_is_floating(target->dtype))
        return (tn_tensor *)tn__error("%s: expected floating point input and target, got %s and %s", fn, tn_dtype_name(input->dtype), tn_dtype_name(target->dtype));
    if (tn__loss_check_weight(fn, "weight", weight, input) || tn__loss_check_weight(fn, "pos_weight", pos_weight, input)) return NULL;
    tn_scope_begin();
    /* PyTorch's stable form: (1 - t) x + lw (log(exp(-m) + exp(-x - m)) + m), m = max(-x, 0),
       lw = 1 + (pos_weight - 1) t */
    tn_tensor *m = tn_clamp(tn_neg(input), 0, INFINITY);
    tn_tensor *lse = tn_log(tn_add(tn_exp(tn_neg(m)), tn_exp(tn_sub(tn_neg(input), m))));
    tn_tensor *lin = tn_mul(tn_rsub_scalar(target, 1), input), *l;
    if (pos_weight) l = tn_add(lin, tn_mul(tn_add_scalar(tn_mul(tn_sub_scalar(pos_weight, 1), target), 1), tn_add(lse, m)));
    else l = tn_add(tn_add(lin, m), lse);
    if (weight) l = tn_mul(l, weight);
    /* PyTorch computes in place into (1 - target): the loss has target's dtype */
    if (l && l->dtype != target->dtype) l = tn_to_dtype(l, target->dtype);
    return tn__loss_finish(tn__loss_reduce(l, red), "BinaryCrossEntropyWithLogitsBackward0");
}
TNDEF tn_tensor *tn_binary_cross_entropy_with_logits(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_tensor *pos_weight, tn_reduction reduction) {
    return TN__AS("tn_binary_cross_entropy_with_logits", tn__bce_logits_impl(input, target, weight, pos_weight, reduction));
}

static tn_tensor *tn__kl_div_impl(tn_tensor *input, tn_tensor *target, tn_reduction red, bool log_target) {
    const char *fn = "tn_kl_div";
    TN__CHECK_NULL(input, target);
    if (tn__loss_check_reduction(fn, red, true) || tn__loss_check_pair(fn, "input", input, "target", target, true)) return NULL;
    tn_scope_begin();
    tn_tensor *l;
    if (log_target) {
        l = tn_mul(tn_exp(target), tn_sub(target, input));
    } else { /* xlogy(t, t) - t x; xlogy is 0 at t = 0 (and so is its gradient here; PyTorch's is NaN) */
        tn_tensor *safe = tn_where(tn_eq_scalar(target, 0), tn_scalar(1), target);
        l = tn_sub(tn_mul(target, tn_log(safe)), tn_mul(target, input));
    }
    const char *name = NULL;
    if (red == TN_REDUCTION_BATCHMEAN) {
        l = tn_sum(l);
        if (input->ndim > 0) {
            l = tn_div_scalar(l, (double)input->shape[0]);
            name = "DivBackward0";
        }
    } else {
        l = tn__loss_reduce(l, red);
    }
    return tn__loss_finish(l, name);
}
TNDEF tn_tensor *tn_kl_div(tn_tensor *input, tn_tensor *target, tn_reduction reduction, bool log_target) {
    return TN__AS("tn_kl_div", tn__kl_div_impl(input, target, reduction, log_target));
}

/* ||x|| along dim (kept) clamped below at eps as torch 1.13's cosine_similarity does (an
   in-place clamp under no_grad): the value is max(||x||, eps) and the gradient of a
   clamped norm is x / eps (its backward divides by the clamped result). */
static tn_tensor *tn__clamped_norm(tn_tensor *x, int64_t dim, double eps) {
    tn_tensor *n = tn_norm_dims(x, 2, &dim, 1, true);
    tn_tensor *small = n ? tn_lt_scalar(n, eps) : NULL, *any = small ? tn_any(small) : NULL;
    if (!any || tn_item(any) == 0) return any ? n : NULL;
    tn_tensor *s = tn_sum_dims(tn_square(x), &dim, 1, true);
    tn_tensor *alt = tn_add_scalar(tn_div_scalar(tn_sub(s, tn_detach(s)), 2 * eps), eps); /* value eps, gradient x / eps */
    return tn_where(small, alt, n);
}

static tn_tensor *tn__cosine_similarity_impl(tn_tensor *x1, tn_tensor *x2, int64_t dim, double eps) {
    const char *fn = "tn_cosine_similarity";
    TN__CHECK_NULL(x1, x2);
    int64_t shape[TN_MAX_DIMS];
    if (tn__loss_check_pair(fn, "x1", x1, "x2", x2, false)) return NULL;
    tn_tensor *ab[2];
    ab[0] = x1;
    ab[1] = x2;
    tn_dtype dt = tn_result_type(ab, 2);
    if (!tn_dtype_is_floating(dt)) return (tn_tensor *)tn__error("%s: expected a floating point common dtype, got %s", fn, tn_dtype_name(dt));
    int nd = tn__broadcast(x1->shape, x1->ndim, x2->shape, x2->ndim, shape);
    int d = tn__wrap_dim(fn, dim, nd);
    if (d < 0) return NULL;
    int64_t d64 = d;
    tn_scope_begin();
    tn_tensor *a = tn_broadcast_to(tn_to_dtype(x1, dt), shape, nd), *b = tn_broadcast_to(tn_to_dtype(x2, dt), shape, nd);
    tn_tensor *r = tn_sum_dims(tn_mul(tn_div(a, tn__clamped_norm(a, d64, eps)), tn_div(b, tn__clamped_norm(b, d64, eps))), &d64, 1, false);
    return tn__loss_finish(r, "SumBackward1");
}
TNDEF tn_tensor *tn_cosine_similarity(tn_tensor *x1, tn_tensor *x2, int64_t dim, double eps) {
    return TN__AS("tn_cosine_similarity", tn__cosine_similarity_impl(x1, x2, dim, eps));
}

static tn_tensor *tn__cosine_embedding_impl(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction red) {
    const char *fn = "tn_cosine_embedding_loss";
    TN__CHECK_NULL(x1, x2, target);
    if (tn__loss_check_reduction(fn, red, false)) return NULL;
    if (target->ndim > 1) return (tn_tensor *)tn__error("%s: expected a 0-d or 1-d target, got target %s", fn, TN__SHAPE(target));
    if (x1->ndim != target->ndim + 1 || x2->ndim != target->ndim + 1)
        return (tn_tensor *)tn__error("%s: a %d-d target %s expects %d-d inputs, got x1 %s and x2 %s", fn, target->ndim, TN__SHAPE(target),
                                      target->ndim + 1, TN__SHAPE(x1), TN__SHAPE(x2));
    if (tn__loss_check_pair(fn, "x1", x1, "x2", x2, true)) return NULL;
    int64_t td = target->ndim;
    tn_scope_begin();
    /* PyTorch's: cos = sum(x1 x2) / sqrt((sum(x1^2) + 1e-12) (sum(x2^2) + 1e-12)) */
    tn_tensor *prod = tn_sum_dims(tn_mul(x1, x2), &td, 1, false);
    tn_tensor *m1 = tn_add_scalar(tn_sum_dims(tn_mul(x1, x1), &td, 1, false), 1e-12);
    tn_tensor *m2 = tn_add_scalar(tn_sum_dims(tn_mul(x2, x2), &td, 1, false), 1e-12);
    tn_tensor *cos = tn_div(prod, tn_sqrt(tn_mul(m1, m2)));
    tn_tensor *zeros = cos ? tn_zeros_like(cos) : NULL;
    tn_tensor *pos = tn_where(tn_eq_scalar(target, 1), tn_rsub_scalar(cos, 1), zeros);
    tn_tensor *neg = tn_where(tn_eq_scalar(target, -1), tn_clamp(tn_sub_scalar(cos, margin), 0, INFINITY), zeros);
    return tn__loss_finish(tn__loss_reduce(tn_add(pos, neg), red), NULL);
}
TNDEF tn_tensor *tn_cosine_embedding_loss(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction reduction) {
    return TN__AS("tn_cosine_embedding_loss", tn__cosine_embedding_impl(x1, x2, target, margin, reduction));
}

static tn_tensor *tn__margin_ranking_impl(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction red) {
    const char *fn = "tn_margin_ranking_loss";
    TN__CHECK_NULL(x1, x2, target);
    if (tn__loss_check_reduction(fn, red, false)) return NULL;
    if (x1->ndim != x2->ndim || x1->ndim != target->ndim)
        return (tn_tensor *)tn__error("%s: x1, x2 and target should have the same number of dimensions, got x1 %s, x2 %s, target %s", fn,
                                      TN__SHAPE(x1), TN__SHAPE(x2), TN__SHAPE(target));
    tn_scope_begin();
    tn_tensor *l = tn_clamp(tn_add_scalar(tn_mul(tn_neg(target), tn_sub(x1, x2)), margin), 0, INFINITY);
    return tn__loss_finish(red == TN_REDUCTION_NONE ? tn__grad_name(l, "ClampMinBackward0") : tn__loss_reduce(l, red), NULL);
}
TNDEF tn_tensor *tn_margin_ranking_loss(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, double margin, tn_reduction reduction) {
    return TN__AS("tn_margin_ranking_loss", tn__margin_ranking_impl(x1, x2, target, margin, reduction));
}

/* ======================================================================= */
/* 11. autograd engine                                                      */
/* ======================================================================= */
/* The differentiable ops, as data: one enum and one name table, and below one function
   (tn__node_backward) with every backward formula, next to each other the way
   PyTorch's derivatives.yaml lists them. Ops record a node through tn__node_new /
   tn__node_save / tn__node_attach. */
/* PyTorch's node names for the elementwise families, by op id */
static const char *tn__unary_grad_name(int op) {
    static const char *const names[] = {
        "NegBackward0", "AbsBackward0", "SignBackward0", "PowBackward0", "ReluBackward0", "FloorBackward0", "CeilBackward0",
        "RoundBackward0", "TruncBackward0", "ClampBackward1", "ExpBackward0", "Exp2Backward0", "LogBackward0", "Log2Backward0",
        "Log10Backward0", "Log1PBackward0", "Expm1Backward0", "SqrtBackward0", "RsqrtBackward0", "ReciprocalBackward0",
        "SinBackward0", "CosBackward0", "TanBackward0", "AsinBackward0", "AcosBackward0", "AtanBackward0", "SinhBackward0",
        "CoshBackward0", "TanhBackward0", "SigmoidBackward0", "GeluBackward0", "GeluBackward0", "SiluBackward0",
        "SoftplusBackward0", "LeakyReluBackward0", "EluBackward0", "HardtanhBackward0", "MishBackward0",
        "HardswishBackward0", "HardsigmoidBackward0", "ErfBackward0", "ErfcBackward0", "FracBackward0", "NanToNumBackward0"};
    return op >= 0 && op < (int)(sizeof names / sizeof names[0]) ? names[op] : "UnaryBackward";
}
static const char *tn__binary_grad_name(int op) {
    static const char *const names[] = {"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "FloorDivideBackward0",
        "RemainderBackward0", "FmodBackward0", "PowBackward1", "Atan2Backward0", "MaximumBackward0", "MinimumBackward0"};
    return op >= 0 && op < (int)(sizeof names / sizeof names[0]) ? names[op] : "BinaryBackward";
}
static const char *const tn__ternary_grad_names[] = {"WhereBackward0", "LerpBackward1", "AddcmulBackward0", "AddcdivBackward0"};


TNDEF bool tn_is_grad_enabled(void) { return !tn__grad_disabled; }
static void tn__grad_mode_push(bool enabled) {
    if (tn__grad_mode_depth < 64) tn__grad_mode_stack[tn__grad_mode_depth] = tn__grad_disabled;
    tn__grad_mode_depth++;
    tn__grad_disabled = !enabled;
}
static void tn__grad_mode_pop(const char *fn) {
    if (tn__grad_mode_depth == 0) { tn__error("%s: no matching begin", fn); return; }
    tn__grad_mode_depth--;
    tn__grad_disabled = tn__grad_mode_depth < 64 ? tn__grad_mode_stack[tn__grad_mode_depth] != 0 : tn__grad_disabled;
}
TNDEF void tn_no_grad_begin(void) { tn__grad_mode_push(false); }
TNDEF void tn_no_grad_end(void) { tn__grad_mode_pop("tn_no_grad_end"); }
TNDEF void tn_enable_grad_begin(void) { tn__grad_mode_push(true); }
TNDEF void tn_enable_grad_end(void) { tn__grad_mode_pop("tn_enable_grad_end"); }

static void tn__node_release(tn_node *n) {
    /* iterative: a long chain of nodes must not recurse once per node */
    tn_node *stack_local[64], **stack = stack_local;
    int64_t sp = 0, cap = 64;
    if (n) stack[sp++] = n;
    while (sp > 0) {
        tn_node *x = stack[--sp];
        if (TN__ATOMIC_ADD(&x->refcount, -1) != 0) continue;
        for (int i = 0; i < x->nin; i++) {
            tn_release(x->next[i].leaf);
            if (!x->next[i].fn) continue;
            if (sp == cap) {
                tn_node **s = (tn_node **)TN_MALLOC((size_t)cap * 2 * sizeof *s);
                if (!s) { tn__node_release(x->next[i].fn); continue; } /* out of memory: fall back to recursion */
                memcpy(s, stack, (size_t)sp * sizeof *s);
                if (stack != stack_local) TN_FREE(stack);
                stack = s;
                cap *= 2;
            }
            stack[sp++] = x->next[i].fn;
        }
        for (int i = 0; i < x->nsaved; i++) tn_release(x->saved[i]);
        for (int i = 0; i < x->nsaved; i++) if (x->saved_fn[i]) tn__node_release(x->saved_fn[i]);
        tn__node_free_saved_arrays(x);
        TN_FREE(x->custom_name);
        tn_release(x->gsum);
        TN_FREE(x->hooks.items);
        if (x->nin <= 3) tn__blk_put(TN__BLK_NODE, x);
        else TN_FREE(x);
    }
    if (stack != stack_local) TN_FREE(stack);
}

static void tn__meta_of(tn__meta *m, tn_tensor *t) {
    m->dtype = t->dtype;
    m->device = t->device;
    m->ndim = t->ndim;
    memcpy(m->shape, t->shape, sizeof m->shape);
}

/* A view whose base was modified in place after the view got its history reads, as in
   PyTorch, from the base's current history: its grad_fn is rebuilt as a strided view of
   the base (contiguous bases; others keep the history they had). */
static void tn__refresh_view(tn_tensor *x) {
    tn_tensor *b = x->base;
    if (!b->requires_grad || !tn_is_contiguous(b) || x->ndim > TN_MAX_DIMS) return;
    tn_node *vn = tn__node_new(G_BASE_VIEW, 0, &b, 1);
    if (!vn) return;
    vn->i[0] = x->ndim;
    for (int d = 0; d < x->ndim; d++) { vn->i[1 + d] = x->shape[d]; vn->i[1 + x->ndim + d] = x->strides[d]; }
    vn->i[1 + 2 * x->ndim] = x->offset - b->offset;
    tn__node_attach(vn, x);
}

/* A node for op on inputs ins[0..n) when grad mode is on and an input requires grad;
   NULL otherwise (nothing to record). NULL entries in ins are inputs without gradient. */
static tn_node *tn__node_new(tn__gop op, int sub, tn_tensor *const *ins, int n) {
    if (tn__grad_disabled) return NULL;
    for (int i = 0; i < n; i++) {
        tn_tensor *x = ins[i];
        if (x && x->base && x->requires_grad && x->grad_fn && tn_version(x) != x->grad_fn_version) tn__refresh_view(x);
    }
    bool any = false;
    for (int i = 0; i < n; i++) any = any || (ins[i] && ins[i]->requires_grad);
    if (!any) return NULL;
    /* one block: the node, then its n edges, then its n input descriptions; nodes of up
       to 3 inputs come from the small-block cache, all of one size */
    const size_t sz = sizeof(tn_node) + (size_t)(n > 3 ? n : 3) * (sizeof(tn__edge) + sizeof(tn__meta));
    tn_node *nd = (tn_node *)(n <= 3 ? tn__blk_get(TN__BLK_NODE, sz) : TN_MALLOC(sz));
    if (!nd) return (tn_node *)tn__error("autograd: out of memory recording a node");
    { static tn_node zero_; *nd = zero_; }
    nd->refcount = 1;
    nd->op = op;
    nd->sub = sub;
    nd->nin = n;
    nd->next = (tn__edge *)(nd + 1);
    nd->in = (tn__meta *)(nd->next + n);
    for (int i = 0; i < n; i++) {
        tn_tensor *x = ins[i];
        nd->next[i].fn = NULL;
        nd->next[i].leaf = NULL;
        memset(&nd->in[i], 0, sizeof nd->in[i]);
        if (!x) continue;
        tn__meta_of(&nd->in[i], x);
        if (!x->requires_grad) continue;
        if (x->grad_fn) { nd->next[i].fn = x->grad_fn; TN__ATOMIC_ADD(&x->grad_fn->refcount, 1); }
        else nd->next[i].leaf = tn_retain(x);
    }
    return nd;
}

static void tn__node_free_saved_arrays(tn_node *nd) {
    if (nd->saved == nd->saved_inline) return;
    TN_FREE(nd->saved);
    TN_FREE(nd->saved_version);
    TN_FREE(nd->saved_fn);
}

/* Keep t for backward (its version is checked there). */
static void tn__node_save(tn_node *nd, tn_tensor *t) {
    if (!nd) return; /* t may be NULL: a slot kept empty on purpose */
    if (t && t->is_wrapped_number) { /* alone in a formula a Python float would promote like one (to float32): keep a plain 0-d tensor */
        tn_tensor *c = tn__copy_as(t, t->dtype, t->device);
        tn__node_save(nd, c);
        tn_release(c);
        return;
    }
    if (!nd->saved) { /* the first few live inside the node: no allocation */
        nd->saved = nd->saved_inline;
        nd->saved_version = nd->version_inline;
        nd->saved_fn = nd->fn_inline;
        nd->saved_cap = 4;
    }
    if (nd->nsaved == nd->saved_cap) {
        int cap = 2 * nd->saved_cap;
        tn_tensor **s = (tn_tensor **)TN_MALLOC((size_t)cap * sizeof *s);
        int64_t *v = (int64_t *)TN_MALLOC((size_t)cap * sizeof *v);
        tn_node **f = (tn_node **)TN_MALLOC((size_t)cap * sizeof *f);
        if (!s || !v || !f) { TN_FREE(s); TN_FREE(v); TN_FREE(f); tn__error("autograd: out of memory saving a tensor"); return; }
        memcpy(s, nd->saved, (size_t)nd->nsaved * sizeof *s);
        memcpy(v, nd->saved_version, (size_t)nd->nsaved * sizeof *v);
        memcpy(f, nd->saved_fn, (size_t)nd->nsaved * sizeof *f);
        tn__node_free_saved_arrays(nd);
        nd->saved = s;
        nd->saved_version = v;
        nd->saved_fn = f;
        nd->saved_cap = cap;
    }
    /* As PyTorch's SavedVariable: a non-leaf is kept as a plain alias of its data plus a
       reference to its grad_fn, never as the tensor object (whose .grad may own this node:
       no cycle); the formula gets the history back when the backward is recorded. */
    if (t && t->grad_fn) {
        nd->saved[nd->nsaved] = tn__view_of(t, t->shape, t->strides, t->ndim, t->offset);
        if (nd->saved[nd->nsaved]) nd->saved[nd->nsaved]->is_view = false;
        nd->saved_fn[nd->nsaved] = t->grad_fn;
        TN__ATOMIC_ADD(&t->grad_fn->refcount, 1);
    } else {
        nd->saved[nd->nsaved] = tn_retain(t);
        nd->saved_fn[nd->nsaved] = NULL;
    }
    nd->saved_version[nd->nsaved] = t ? tn_version(t) : 0;
    nd->nsaved++;
}

/* A result is saved detached: it must not own the node that owns it (no cycle). */
static void tn__node_save_result(tn_node *nd, tn_tensor *out) {
    if (!nd || !out) return;
    tn_tensor *d = tn__view_of(out, out->shape, out->strides, out->ndim, out->offset);
    if (d) { tn__node_save(nd, d); tn_release(d); }
}

/* Make nd the grad_fn of out (out takes the node's reference). Returns out. */
static tn_tensor *tn__node_attach(tn_node *nd, tn_tensor *out) {
    if (!nd) return out;
    if (!out || !tn_dtype_is_floating(out->dtype)) { tn__node_release(nd); return out; }
    tn__meta_of(&nd->out, out);
    if (out->grad_fn) tn__node_release(out->grad_fn);
    out->grad_fn = nd;
    out->requires_grad = true;
    out->grad_fn_version = tn_version(out);
    return out;
}

TNDEF int tn_requires_grad_(tn_tensor *t, bool requires_grad) {
    if (!t) return -1;
    if (t->grad_fn) return TN__FAIL_INT("tn_requires_grad_: you can only change requires_grad flags of leaf tensors (this one has grad_fn %s)", tn_grad_fn_name(t));
    if (requires_grad && !tn_dtype_is_floating(t->dtype))
        return TN__FAIL_INT("tn_requires_grad_: only tensors of floating point dtype can require gradients (got %s)", tn_dtype_name(t->dtype));
    t->requires_grad = requires_grad;
    return 0;
}
TNDEF bool tn_is_leaf(const tn_tensor *t) { return t && !t->grad_fn; }
TNDEF int tn_set_grad(tn_tensor *t, tn_tensor *grad) {
    if (!t) return -1;
    if (grad && (grad->ndim != t->ndim || memcmp(grad->shape, t->shape, (size_t)t->ndim * sizeof(int64_t)) || grad->dtype != t->dtype))
        return TN__FAIL_INT("tn_set_grad: assigned grad has shape %s and dtype %s, but the tensor has shape %s and dtype %s",
                            TN__SHAPE(grad), tn_dtype_name(grad->dtype), TN__SHAPE(t), tn_dtype_name(t->dtype));
    tn_retain(grad);
    tn_release(t->grad);
    t->grad = grad;
    return 0;
}
TNDEF int tn_retain_grad(tn_tensor *t) {
    if (!t) return -1;
    if (!t->requires_grad) return TN__FAIL_INT("tn_retain_grad: can't retain_grad on a tensor that has requires_grad=False");
    if (t->grad_fn) t->grad_fn->retain_target = t;
    t->retains_grad = t->grad_fn != NULL;
    return 0;
}
TNDEF bool tn_retains_grad(const tn_tensor *t) { return t && t->retains_grad; }
static bool tn__anomaly;
TNDEF void tn_set_detect_anomaly(bool enabled) { tn__anomaly = enabled; }
TNDEF bool tn_is_anomaly_enabled(void) { return tn__anomaly; }
static const char *tn__node_name(tn_node *n) {
    if (n->name) return n->name;
    if (n->op == G_UNARY) return tn__unary_grad_name(n->sub);
    if (n->op == G_BINARY) return tn__binary_grad_name(n->sub);
    if (n->op == G_TERNARY) return tn__ternary_grad_names[n->sub];
    return tn__gop_names[n->op];
}
TNDEF const char *tn_grad_fn_name(const tn_tensor *t) { return t && t->grad_fn ? tn__node_name(t->grad_fn) : NULL; }
TNDEF int tn_detach_(tn_tensor *t) {
    if (!t) return -1;
    tn__node_release(t->grad_fn);
    t->grad_fn = NULL;
    t->requires_grad = false;
    t->retains_grad = false;
    return 0;
}

static tn__hooks *tn__hooks_of(tn_tensor *t, bool create) {
    if (t->grad_fn) return &t->grad_fn->hooks;
    if (!t->hooks && create) {
        t->hooks = (tn__hooks *)TN_MALLOC(sizeof *t->hooks);
        if (t->hooks) memset(t->hooks, 0, sizeof *t->hooks);
    }
    return t->hooks;
}
TNDEF int tn_register_hook(tn_tensor *t, tn_hook_fn fn, void *user) {
    if (!t) return -1;
    if (!fn) return TN__FAIL_INT("tn_register_hook: the hook function is NULL");
    if (!t->requires_grad) return TN__FAIL_INT("tn_register_hook: cannot register a hook on a tensor that doesn't require gradient");
    tn__hooks *h = tn__hooks_of(t, true);
    if (!h) return TN__FAIL_INT("tn_register_hook: out of memory");
    if (h->n == h->cap) {
        int cap = h->cap ? 2 * h->cap : 4;
        tn__hook *items = (tn__hook *)TN_REALLOC(h->items, (size_t)cap * sizeof *items);
        if (!items) return TN__FAIL_INT("tn_register_hook: out of memory");
        h->items = items;
        h->cap = cap;
    }
    h->items[h->n].fn = fn;
    h->items[h->n].user = user;
    h->items[h->n].handle = h->next_handle++;
    return h->items[h->n++].handle;
}
TNDEF int tn_remove_hook(tn_tensor *t, int handle) {
    if (!t) return -1;
    tn__hooks *h = tn__hooks_of(t, false);
    for (int i = 0; h && i < h->n; i++)
        if (h->items[i].handle == handle) {
            memmove(&h->items[i], &h->items[i + 1], (size_t)(h->n - i - 1) * sizeof *h->items);
            h->n--;
            return 0;
        }
    return TN__FAIL_INT("tn_remove_hook: no hook with handle %d", handle);
}

/* Run hooks on a gradient. g is the engine's reference; a hook's result is borrowed
   (the engine retains it), so a hook may return the result of any op. The engine calls
   this inside a scope, so tensors made by hooks die with it. */
static tn_tensor *tn__run_hooks(tn__hooks *h, tn_tensor *g, int *rc) {
    for (int i = 0; h && i < h->n && g; i++) {
        tn_tensor *r = h->items[i].fn(g, h->items[i].user);
        if (!r || r == g) continue;
        if (r->ndim != g->ndim || memcmp(r->shape, g->shape, (size_t)g->ndim * sizeof(int64_t)) || r->dtype != g->dtype) {
            *rc = TN__FAIL_INT("backward: a hook changed the gradient from %s %s to %s %s; a hook must keep shape and dtype",
                               tn_dtype_name(g->dtype), TN__SHAPE(g), tn_dtype_name(r->dtype), TN__SHAPE(r));
            tn_release(g);
            return NULL;
        }
        tn_retain(r);
        tn_release(g);
        g = r;
    }
    return g;
}

/* ---- backward formulas ---- */
/* A saved result for a formula: the saved data as it is, or, when the backward is being
   recorded (create_graph), a view of it whose grad_fn is the node itself, so second
   derivatives flow through the result as through PyTorch's saved outputs. */
static tn_tensor *tn__saved_output(tn_node *n, tn_tensor *saved) {
    if (tn__grad_disabled) return saved;
    tn_tensor *v = tn__view_of(saved, saved->shape, saved->strides, saved->ndim, saved->offset);
    if (!v) return NULL;
    TN__ATOMIC_ADD(&n->refcount, 1);
    v->grad_fn = n;
    v->requires_grad = true;
    return tn__own(v);
}

static tn_tensor *tn__zeros_meta(const tn__meta *m, tn_dtype dtype) {
    tn_tensor *z = tn_zeros(m->shape, m->ndim, dtype);
    return m->device == TN_CPU ? z : tn_to(z, m->device);
}

/* g summed over the dims it was broadcast along, to the input's shape. */
static tn_tensor *tn__sum_to(tn_tensor *g, const tn__meta *m) {
    if (!g) return NULL;
    int lead = g->ndim - m->ndim, nd = 0;
    int64_t dims[TN_MAX_DIMS];
    for (int i = 0; i < g->ndim; i++)
        if (i < lead || (m->shape[i - lead] == 1 && g->shape[i] != 1)) dims[nd++] = i;
    if (nd == 0) return g;
    return tn_reshape(tn_sum_dims(g, dims, nd, true), m->shape, m->ndim);
}

/* g of a reduction, broadcast back over the reduced dims (mask in n->i). */
static tn_tensor *tn__unreduce(tn_node *n, tn_tensor *g) {
    const tn__meta *m = &n->in[0];
    int64_t k[TN_MAX_DIMS];
    for (int d = 0; d < m->ndim; d++) k[d] = n->i[d] ? 1 : m->shape[d];
    return tn_expand(tn_reshape(g, k, m->ndim), m->shape, m->ndim);
}

/* Differentiable inverse of a slice: zeros of shape m with g written into the slice
   (dim, start, step). Its own backward is that slice again. */
static tn_tensor *tn__slice_scatter(tn_tensor *g, const tn__meta *m, int64_t dim, int64_t start, int64_t step) {
    if (!g) return NULL;
    tn_tensor *out = tn__new(g->dtype, g->device, m->shape, m->ndim);
    if (!out) return NULL;
    tn_tensor v = *out;
    v.strides[dim] *= step;
    v.offset += start * out->strides[dim];
    for (int d = 0; d < g->ndim; d++) v.shape[d] = g->shape[d];
    if (tn__backend(out->device)->fill(out, 0) || tn__copy(&v, g)) { tn_release(out); return NULL; }
    tn_node *nd = tn__node_new(G_SLICE_SCATTER, 0, &g, 1);
    if (nd) { nd->i[0] = dim; nd->i[1] = start; nd->i[2] = step; }
    return tn__own(tn__node_attach(nd, out));
}

static tn_tensor *tn__mask_as(tn_tensor *mask, tn_tensor *like) { return tn_to_dtype(mask, like->dtype); }
static tn_tensor *tn__scaled(tn_tensor *t, double alpha) { return alpha == 1 ? t : tn_mul_scalar(t, alpha); }
/* mm's gradient for mat2 (a^T g) in mat2's layout, as PyTorch: a column-major mat2 (a
   linear layer's transposed weight) gets (g^T a)^T, so the weight's gradient comes out
   contiguous and the engine can hand it to .grad without a copy. */
static tn_tensor *tn__mm_mat2_grad(tn_tensor *a, tn_tensor *b, tn_tensor *g) {
    if (b->ndim == 2 && b->shape[0] > 1 && b->shape[1] > 1 && b->strides[0] == 1 && b->strides[1] == b->shape[0])
        return tn_t(tn_mm(tn_t(g), a));
    return tn_mm(tn_t(a), g);
}

/* gin[k] = gradient for input k given g, the gradient of the node's result; results
   are tracked by the caller's scope. Formulas use public ops, so they are recorded
   when create_graph is on. */
static int tn__node_backward(tn_node *n, tn_tensor *g, tn_tensor **gin) {
    tn_tensor **S = n->saved, *unpacked[4 * TN_MAX_DIMS];
    if (!tn__grad_disabled && n->nsaved <= 4 * TN_MAX_DIMS) { /* recording: saved non-leaves get their history back */
        for (int k = 0; k < n->nsaved; k++) {
            unpacked[k] = S[k];
            if (S[k] && k < 32 && (n->saved_output_mask >> k & 1)) { unpacked[k] = tn__saved_output(n, S[k]); continue; }
            if (!S[k] || !n->saved_fn[k]) continue;
            tn_tensor *v = tn__view_of(S[k], S[k]->shape, S[k]->strides, S[k]->ndim, S[k]->offset);
            if (!v) return -1;
            v->is_view = false;
            TN__ATOMIC_ADD(&n->saved_fn[k]->refcount, 1);
            v->grad_fn = n->saved_fn[k];
            v->requires_grad = true;
            unpacked[k] = tn__own(v);
        }
        S = unpacked;
    }
#define TN__NEED(k) (n->next[k].fn || n->next[k].leaf)
    switch (n->op) {
    case G_UNARY: {
        tn_tensor *x = S[0], *d = NULL;
        const double ln2 = 0.69314718055994530942, ln10 = 2.30258509299404568402;
        switch ((tn_unary_op)n->sub) {
        case NEG: gin[0] = tn_neg(g); return 0;
        case ABS: d = tn_sign(x); break;
        case SIGN: case FLOOR: case CEIL: case ROUND: case TRUNC: gin[0] = tn_zeros_like(g); return 0;
        case SQUARE: d = tn_mul_scalar(x, 2); break;
        case RELU: /* x is the saved result here */
            if (tn__grad_disabled && (g->dtype == TN_F32 || g->dtype == TN_F64) && g->dtype == x->dtype) {
                gin[0] = tn__binary("relu backward", THRESHOLD_BACKWARD, g, x, 0);   /* one pass, no mask */
                return 0;
            }
            d = tn__mask_as(tn_gt_scalar(x, 0), g);   /* recording (create_graph): differentiable ops */
            break;
        case CLAMP: d = tn__mask_as(tn_logical_and(tn_ge_scalar(x, n->d[0]), tn_le_scalar(x, n->d[1])), g); break;
        case EXP: d = tn__saved_output(n, x); break;                 /* x is the result y here */
        case EXPM1: d = tn_add_scalar(tn__saved_output(n, x), 1); break;
        case EXP2: d = tn_mul_scalar(tn__saved_output(n, x), ln2); break;
        case LOG: gin[0] = tn_div(g, x); return 0;
        case LOG2: gin[0] = tn_div(g, tn_mul_scalar(x, ln2)); return 0;
        case LOG10: gin[0] = tn_div(g, tn_mul_scalar(x, ln10)); return 0;
        case LOG1P: gin[0] = tn_div(g, tn_add_scalar(x, 1)); return 0;
        case SQRT: gin[0] = tn_div(g, tn_mul_scalar(tn__saved_output(n, x), 2)); return 0;
        case RSQRT: d = tn_mul_scalar(tn_pow_scalar(tn__saved_output(n, x), 3), -0.5); break;
        case RECIPROCAL: d = tn_neg(tn_reciprocal(tn_square(x))); break;
        case SIN: d = tn_cos(x); break;
        case COS: d = tn_neg(tn_sin(x)); break;
        case TAN: d = tn_add_scalar(tn_square(tn_tan(x)), 1); break;
        case ASIN: d = tn_rsqrt(tn_rsub_scalar(tn_square(x), 1)); break;
        case ACOS: d = tn_neg(tn_rsqrt(tn_rsub_scalar(tn_square(x), 1))); break;
        case ATAN: d = tn_reciprocal(tn_add_scalar(tn_square(x), 1)); break;
        case SINH: d = tn_cosh(x); break;
        case COSH: d = tn_sinh(x); break;
        case TANH: d = tn_rsub_scalar(tn_square(tn__saved_output(n, x)), 1); break;
        case SIGMOID: { tn_tensor *s = tn__saved_output(n, x); d = tn_mul(s, tn_rsub_scalar(s, 1)); break; }
        case GELU: { /* Phi(x) + x phi(x) */
            tn_tensor *cdf = tn_mul_scalar(tn_add_scalar(tn_erf(tn_mul_scalar(x, 0.70710678118654752440)), 1), 0.5);
            tn_tensor *pdf = tn_mul_scalar(tn_exp(tn_mul_scalar(tn_square(x), -0.5)), 0.39894228040143267794);
            d = tn_add(cdf, tn_mul(x, pdf));
            break;
        }
        case GELU_TANH: { /* 0.5(1+t) + 0.5 x (1-t^2) k (1 + 3c x^2), t = tanh(k(x + c x^3)) */
            const double k = 0.79788456080286535588, c = 0.044715;
            tn_tensor *x2 = tn_square(x);
            tn_tensor *t = tn_tanh(tn_mul_scalar(tn_add(x, tn_mul_scalar(tn_mul(x2, x), c)), k));
            tn_tensor *left = tn_mul_scalar(tn_add_scalar(t, 1), 0.5);
            tn_tensor *right = tn_mul(tn_mul_scalar(tn_mul(x, tn_rsub_scalar(tn_square(t), 1)), 0.5 * k), tn_add_scalar(tn_mul_scalar(x2, 3 * c), 1));
            d = tn_add(left, right);
            break;
        }
        case SILU: { tn_tensor *s = tn_sigmoid(x); d = tn_mul(s, tn_add_scalar(tn_mul(x, tn_rsub_scalar(s, 1)), 1)); break; }
        case SOFTPLUS: { /* sigmoid(beta x) below the threshold, 1 above */
            tn_tensor *z = tn_mul_scalar(x, n->d[0]);
            d = tn_where(tn_gt_scalar(z, n->d[1]), tn_ones_like(g), tn_sigmoid(z));
            break;
        }
        case LEAKY_RELU: d = tn_where(tn_gt_scalar(x, 0), tn_ones_like(g), tn_full_like(g, n->d[0])); break;
        case ELU: { /* scale (x > 0), else scale alpha input_scale exp(x input_scale) */
            tn_tensor *neg = tn_mul_scalar(tn_exp(tn_mul_scalar(x, n->d[2])), n->d[0] * n->d[1] * n->d[2]);
            d = tn_where(tn_gt_scalar(x, 0), tn_full_like(g, n->d[1]), neg);
            break;
        }
        case HARDTANH: d = tn__mask_as(tn_logical_and(tn_gt_scalar(x, n->d[0]), tn_lt_scalar(x, n->d[1])), g); break;
        case MISH: { /* tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2), sp = softplus(x) */
            tn_tensor *t = tn_tanh(tn_softplus(x, 1, 20));
            d = tn_add(t, tn_mul(tn_mul(x, tn_sigmoid(x)), tn_rsub_scalar(tn_square(t), 1)));
            break;
        }
        case HARDSWISH: /* 0 below -3, x/3 + 1/2 up to 3, 1 above */
            d = tn_where(tn_lt_scalar(x, -3), tn_zeros_like(g), tn_where(tn_le_scalar(x, 3), tn_add_scalar(tn_div_scalar(x, 3), 0.5), tn_ones_like(g)));
            break;
        case HARDSIGMOID: d = tn_mul_scalar(tn__mask_as(tn_logical_and(tn_gt_scalar(x, -3), tn_lt_scalar(x, 3)), g), 1.0 / 6); break;
        case ERF: d = tn_mul_scalar(tn_exp(tn_neg(tn_square(x))), 1.12837916709551257390); break;

        case ERFC: d = tn_mul_scalar(tn_exp(tn_neg(tn_square(x))), -1.12837916709551257390); break;
        case FRAC: gin[0] = g; return 0;
        case NAN_TO_NUM: d = tn__mask_as(tn_isfinite(x), g); break;
        default: return TN__FAIL_INT("autograd: no derivative for %s", tn_unary_op_name((tn_unary_op)n->sub));
        }
        gin[0] = tn_mul(g, d);
        return 0;
    }
    case G_BINARY: {
        tn_tensor *a = n->nsaved > 1 ? S[0] : NULL, *b = n->nsaved > 1 ? S[1] : NULL, *ga = NULL, *gb = NULL; /* add/sub save nothing */

        double alpha = n->d[0];
        switch ((tn_binary_op)n->sub) {
        case ADD: ga = g; gb = alpha == 1 ? g : tn_mul_scalar(g, alpha); break;
        case SUB: ga = g; gb = tn_mul_scalar(g, -alpha); break;
        case MUL: ga = TN__NEED(0) ? tn_mul(g, b) : NULL; gb = TN__NEED(1) ? tn_mul(g, a) : NULL; break;
        case DIV: ga = TN__NEED(0) ? tn_div(g, b) : NULL; gb = TN__NEED(1) ? tn_neg(tn_div(tn_mul(g, a), tn_square(b))) : NULL; break;
        case FLOOR_DIVIDE: ga = tn_zeros_like(g); gb = ga; break;
        case REMAINDER: ga = g; gb = TN__NEED(1) ? tn_neg(tn_mul(g, tn_floor_divide(a, b))) : NULL; break;
        case FMOD: ga = g; gb = TN__NEED(1) ? tn_neg(tn_mul(g, tn_trunc(tn_div(a, b)))) : NULL; break;
        case POW: /* PyTorch masks: d/da is 0 where b == 0; d/db is 0 where a == 0 and b >= 0 */
            if (TN__NEED(0)) ga = tn_where(tn_eq_scalar(b, 0), tn_zeros_like(g), tn_mul(g, tn_mul(b, tn_pow(a, tn_sub_scalar(b, 1)))));
            if (TN__NEED(1)) gb = tn_where(tn_logical_and(tn_eq_scalar(a, 0), tn_ge_scalar(b, 0)), tn_zeros_like(g),
                                           tn_mul(g, tn_mul(tn_pow(a, b), tn_log(a))));
            break;
        case ATAN2: {
            tn_tensor *den = tn_add(tn_square(a), tn_square(b));
            ga = tn_div(tn_mul(g, b), den);
            gb = tn_neg(tn_div(tn_mul(g, a), den));
            break;
        }
        case MAXIMUM: case MINIMUM: { /* ties split the gradient evenly, as PyTorch */
            tn_tensor *half = tn_mul_scalar(tn__mask_as(tn_eq(a, b), g), 0.5);
            tn_tensor *wa = n->sub == MAXIMUM ? tn_gt(a, b) : tn_lt(a, b), *wb = n->sub == MAXIMUM ? tn_gt(b, a) : tn_lt(b, a);
            ga = tn_mul(g, tn_add(tn__mask_as(wa, g), half));
            gb = tn_mul(g, tn_add(tn__mask_as(wb, g), half));
            break;
        }
        default: return TN__FAIL_INT("autograd: no derivative for %s", tn_binary_op_name((tn_binary_op)n->sub));
        }
        if (TN__NEED(0)) gin[0] = tn__sum_to(ga, &n->in[0]);
        if (TN__NEED(1)) gin[1] = tn__sum_to(gb, &n->in[1]);
        return 0;
    }
    case G_TERNARY: {
        tn_tensor *x = S[0], *y = S[1], *z = S[2], *r[3] = {NULL, NULL, NULL};
        double v = n->d[0];
        switch ((tn_ternary_op)n->sub) {
        case WHERE: {
            tn_tensor *zero = tn_zeros_like(g);
            r[1] = tn_where(x, g, zero);
            r[2] = tn_where(x, zero, g);
            break;
        }
        case LERP: /* start, end, weight */
            r[0] = tn_mul(g, tn_rsub_scalar(z, 1));
            r[1] = tn_mul(g, z);
            r[2] = TN__NEED(2) ? tn_mul(g, tn_sub(y, x)) : NULL;
            break;
        case ADDCMUL:
            r[0] = g;
            r[1] = tn_mul_scalar(tn_mul(g, z), v);
            r[2] = tn_mul_scalar(tn_mul(g, y), v);
            break;
        case ADDCDIV:
            r[0] = g;
            r[1] = tn_mul_scalar(tn_div(g, z), v);
            r[2] = tn_mul_scalar(tn_neg(tn_div(tn_mul(g, y), tn_square(z))), v);
            break;
        default: return TN__FAIL_INT("autograd: no derivative for ternary op %d", n->sub);
        }
        for (int k = 0; k < 3; k++) if (TN__NEED(k)) gin[k] = tn__sum_to(r[k], &n->in[k]);
        return 0;
    }
    case G_SUM: gin[0] = tn__unreduce(n, g); return 0;
    case G_MEAN: gin[0] = tn_div_scalar(tn__unreduce(n, g), n->d[0]); return 0;
    case G_PROD: { /* product of all the other elements: exclusive cumprods from both ends (exact with zeros) */
        const tn__meta *m = &n->in[0];
        tn_tensor *x = S[0];
        int64_t perm[TN_MAX_DIMS], inv[TN_MAX_DIMS], flat[TN_MAX_DIMS], L = 1;
        int np = 0, nk = 0;
        for (int d = 0; d < m->ndim; d++) if (!n->i[d]) { perm[np++] = d; flat[nk++] = m->shape[d]; }
        for (int d = 0; d < m->ndim; d++) if (n->i[d]) { perm[np++] = d; L *= m->shape[d]; }
        if (L == 0) { gin[0] = tn_zeros_like(x); return 0; }
        flat[nk] = L;
        tn_tensor *xp = tn_reshape(tn_permute(x, perm, m->ndim), flat, nk + 1);
        int64_t one_shape[TN_MAX_DIMS];
        memcpy(one_shape, flat, sizeof one_shape);
        one_shape[nk] = 1;
        int64_t last = -1;
        tn_tensor *ones = tn_to(tn_ones(one_shape, nk + 1, x->dtype), x->device);
        tn_tensor *lparts[2] = {ones, tn_narrow(tn_cumprod(xp, -1), -1, 0, L - 1)};
        tn_tensor *left = tn_cat(lparts, 2, -1);
        tn_tensor *rparts[2] = {ones, tn_narrow(tn_cumprod(tn_flip(xp, &last, 1), -1), -1, 0, L - 1)};
        tn_tensor *right = tn_flip(tn_cat(rparts, 2, -1), &last, 1);
        tn_tensor *gk = tn_reshape(g, one_shape, nk + 1);
        tn_tensor *gp = tn_mul(tn_mul(left, right), gk);
        int64_t pshape[TN_MAX_DIMS];
        for (int d = 0; d < m->ndim; d++) pshape[d] = m->shape[perm[d]];
        for (int d = 0; d < m->ndim; d++) inv[perm[d]] = d;
        gin[0] = tn_permute(tn_reshape(gp, pshape, m->ndim), inv, m->ndim);
        return 0;
    }
    case G_AMAX: case G_AMIN: { /* evenly over the tied extremes */
        const tn__meta *m = &n->in[0];
        int64_t k[TN_MAX_DIMS];
        for (int d = 0; d < m->ndim; d++) k[d] = n->i[d] ? 1 : m->shape[d];
        tn_tensor *mask = tn__mask_as(tn_eq(S[0], tn_reshape(S[1], k, m->ndim)), g);
        int64_t dims[TN_MAX_DIMS];
        int nd = 0;
        for (int d = 0; d < m->ndim; d++) if (n->i[d]) dims[nd++] = d;
        tn_tensor *count = nd ? tn_sum_dims(mask, dims, nd, true) : mask;
        gin[0] = tn_div(tn_mul(tn__unreduce(n, g), mask), count);
        return 0;
    }
    case G_MAX_DIM: case G_MIN_DIM: case G_SORT: {
        const tn__meta *m = &n->in[0];
        if (m->ndim == 0) { gin[0] = tn_reshape(g, NULL, 0); return 0; }
        int64_t dim = n->i[0];
        tn_tensor *gk = g, *ik = S[0];
        if (n->op != G_SORT && !n->i[1]) { gk = tn_unsqueeze(g, dim); ik = tn_unsqueeze(S[0], dim); }
        gin[0] = tn_scatter_add(tn__zeros_meta(m, g->dtype), dim, ik, gk);
        return 0;
    }
    case G_CUMSUM: {
        int64_t dim = n->i[0];
        if (n->in[0].ndim == 0) { gin[0] = g; return 0; }
        gin[0] = tn_flip(tn_cumsum(tn_flip(g, &dim, 1), dim), &dim, 1);
        return 0;
    }
    case G_CUMPROD: {
        int64_t dim = n->i[0];
        tn_tensor *x = S[0];
        if (n->in[0].ndim == 0) { gin[0] = g; return 0; }
        if (tn_item(tn_any(tn_eq_scalar(x, 0))) == 0) { /* no zeros: reverse cumsum of g*out, over x */
            tn_tensor *out = tn__saved_output(n, S[1]);
            gin[0] = tn_div(tn_flip(tn_cumsum(tn_flip(tn_mul(g, out), &dim, 1), dim), &dim, 1), x);
            return 0;
        }
        /* zeros: d out_j / d x_i = prod_{k <= j, k != i} x_k, from the cumprod of x with x_i
           replaced by 1 (an [.., L, L] product per lane; PyTorch also goes quadratic here) */
        int64_t L = n->in[0].shape[dim];
        tn_tensor *xl = tn_transpose(x, dim, -1), *gl = tn_transpose(g, dim, -1);
        tn_tensor *eye = tn_to(tn_eye(L, -1, TN_BOOL), x->device);
        tn_tensor *rep = tn_where(eye, tn_ones(NULL, 0, x->dtype), tn_unsqueeze(xl, -2));
        int64_t LL[2] = {L, L}, last = -1;
        tn_tensor *upper = tn_triu(tn_to(tn_ones(LL, 2, TN_BOOL), x->device), 0); /* [i][j]: j >= i */
        tn_tensor *P = tn_mul(tn_cumprod(rep, -1), tn__mask_as(upper, g));
        gin[0] = tn_transpose(tn_sum_dims(tn_mul(P, tn_unsqueeze(gl, -2)), &last, 1, false), dim, -1);

        return 0;
    }
    case G_SOFTMAX: { /* y (g - sum(g y)), y the saved result */
        int64_t dim = n->i[0];
        tn_tensor *y = tn__saved_output(n, S[0]);
        gin[0] = tn_mul(y, tn_sub(g, tn_sum_dims(tn_mul(g, y), &dim, 1, true)));
        return 0;
    }
    case G_LOG_SOFTMAX: { /* g - softmax * sum(g) */
        int64_t dim = n->i[0];
        tn_tensor *y = tn__saved_output(n, S[0]);
        gin[0] = tn_sub(g, tn_mul(tn_exp(y), tn_sum_dims(g, &dim, 1, true)));
        return 0;
    }
    case G_RESHAPE: gin[0] = tn_reshape(g, n->in[0].shape, n->in[0].ndim); return 0;
    case G_PERMUTE: {
        int64_t inv[TN_MAX_DIMS];
        for (int d = 0; d < n->in[0].ndim; d++) inv[n->i[d]] = d;
        gin[0] = tn_permute(g, inv, n->in[0].ndim);
        return 0;
    }
    case G_EXPAND: gin[0] = tn__sum_to(g, &n->in[0]); return 0;
    case G_SLICE: gin[0] = tn__slice_scatter(g, &n->in[0], n->i[0], n->i[1], n->i[2]); return 0;
    case G_SELECT: gin[0] = tn__slice_scatter(tn_unsqueeze(g, n->i[0]), &n->in[0], n->i[0], n->i[1], 1); return 0;
    case G_SLICE_SCATTER: {
        int64_t dim = n->i[0], len = n->in[0].shape[dim];
        gin[0] = tn_slice(g, dim, n->i[1], n->i[1] + (len ? (len - 1) * n->i[2] + 1 : 0), n->i[2]);
        return 0;
    }
    case G_UNFOLD: { /* windows add back into the positions they came from */
        const tn__meta *m = &n->in[0];
        if (m->ndim == 0) { gin[0] = tn_reshape(tn_sum(g), NULL, 0); return 0; }
        int64_t dim = n->i[0], size = n->i[1], step = n->i[2], nw = g->shape[dim];
        int64_t perm[TN_MAX_DIMS + 1], merged[TN_MAX_DIMS];
        int np = 0, nm = 0;
        for (int d = 0; d < g->ndim - 1; d++) {
            perm[np++] = d;
            if (d == dim) perm[np++] = g->ndim - 1;
        }
        for (int d = 0; d < m->ndim; d++) merged[nm++] = d == dim ? nw * size : m->shape[d];
        tn_tensor *gm = tn_reshape(tn_permute(g, perm, g->ndim), merged, nm);
        int64_t flat = -1;
        tn_tensor *idx = tn_reshape(tn_add(tn_unsqueeze(tn_mul_scalar(tn_arange(0, (double)nw, 1, TN_I64), (double)step), 1),
                                           tn_arange(0, (double)size, 1, TN_I64)), &flat, 1);
        idx = tn_to(idx, g->device);
        tn_tensor *ix[TN_MAX_DIMS] = {NULL};
        ix[dim] = idx;
        gin[0] = tn_index_put(tn__zeros_meta(m, g->dtype), ix, (int)dim + 1, gm, true);
        return 0;
    }
    case G_FLIP: gin[0] = tn_flip(g, n->i, n->ni); return 0;
    case G_PAD: {
        int64_t neg[2 * TN_MAX_DIMS];
        for (int k = 0; k < n->ni; k++) neg[k] = -n->i[k];
        gin[0] = tn_pad(g, neg, n->ni, 0);
        return 0;
    }
    case G_COPY: case G_TO: gin[0] = g; return 0;
    case G_INDEX_SELECT: {
        tn_tensor *ix[TN_MAX_DIMS] = {NULL};
        if (n->in[0].ndim == 0) { gin[0] = tn_reshape(tn_sum(g), NULL, 0); return 0; }
        int64_t flat = -1;
        ix[n->i[0]] = tn_reshape(S[0], &flat, 1); /* a 0-d index kept its dim (size 1) in the result */
        gin[0] = tn_index_put(tn__zeros_meta(&n->in[0], g->dtype), ix, (int)n->i[0] + 1, g, true);

        return 0;
    }
    case G_GATHER: gin[0] = tn_scatter_add(tn__zeros_meta(&n->in[0], g->dtype), n->i[0], S[0], g); return 0;
    case G_SCATTER:
        if (TN__NEED(0)) gin[0] = tn_scatter(g, n->i[0], S[0], tn__zeros_meta(&n->in[1], g->dtype));
        if (TN__NEED(1)) gin[1] = tn_gather(g, n->i[0], S[0]);
        return 0;
    case G_SCATTER_ADD:
        if (TN__NEED(0)) gin[0] = g;
        if (TN__NEED(1)) gin[1] = tn_gather(g, n->i[0], S[0]);
        return 0;
    case G_INDEX: case G_INDEX_PUT: {
        tn_tensor *ix[TN_MAX_DIMS] = {NULL};
        int s = 0; /* saved: the non-NULL index tensors, in order */
        for (int k = 0; k < n->ni; k++) ix[k] = n->i[k] ? S[s++] : NULL;
        if (n->op == G_INDEX) { gin[0] = tn_index_put(tn__zeros_meta(&n->in[0], g->dtype), ix, n->ni, g, true); return 0; }
        if (TN__NEED(0)) gin[0] = n->d[0] != 0 ? g : tn_index_put(g, ix, n->ni, tn_to(tn_zeros(NULL, 0, g->dtype), g->device), false);
        if (TN__NEED(1)) gin[1] = tn__sum_to(tn_index(g, ix, n->ni), &n->in[1]);
        return 0;
    }
    case G_CAT: {
        int64_t off = 0, dim = n->i[0];
        for (int k = 0; k < n->nin; k++) {
            int64_t len = n->in[k].ndim == 1 && n->in[k].shape[0] == 0 && g->ndim != 1 ? -1 : n->in[k].shape[dim];
            if (len < 0) continue; /* a legacy empty input */
            if (TN__NEED(k)) gin[k] = tn_narrow(g, dim, off, len);
            off += len;
        }
        return 0;
    }
    case G_MM:
        if (TN__NEED(0)) gin[0] = tn_mm(g, tn_t(S[1]));
        if (TN__NEED(1)) gin[1] = tn__mm_mat2_grad(S[0], S[1], g);
        return 0;
    case G_BMM:
        if (TN__NEED(0)) gin[0] = tn_bmm(g, tn_transpose(S[1], 1, 2));
        if (TN__NEED(1)) gin[1] = tn_bmm(tn_transpose(S[0], 1, 2), g);
        return 0;
    case G_ADDMM: case G_BADDBMM: {
        double beta = n->d[0], alpha = n->d[1];
        bool b3 = n->op == G_BADDBMM;
        if (TN__NEED(0)) gin[0] = tn__sum_to(beta == 1 ? g : tn_mul_scalar(g, beta), &n->in[0]);
        if (TN__NEED(1)) gin[1] = tn__scaled(b3 ? tn_bmm(g, tn_transpose(S[1], 1, 2)) : tn_mm(g, tn_t(S[1])), alpha);
        if (TN__NEED(2)) gin[2] = tn__scaled(b3 ? tn_bmm(tn_transpose(S[0], 1, 2), g) : tn__mm_mat2_grad(S[0], S[1], g), alpha);
        return 0;
    }
    case G_MV:
        if (TN__NEED(0)) gin[0] = tn_outer(g, S[1]);
        if (TN__NEED(1)) gin[1] = tn_mv(tn_t(S[0]), g);
        return 0;
    case G_DOT:
        if (TN__NEED(0)) gin[0] = tn_mul(g, S[1]);
        if (TN__NEED(1)) gin[1] = tn_mul(g, S[0]);
        return 0;
    case G_COPY_SLICES: case G_BASE_VIEW: { /* first order only: the region is cut out with raw views */
        int nd = (int)n->i[0];
        const tn__meta *bm = n->op == G_COPY_SLICES ? &n->out : &n->in[0];
        tn_tensor *gb = n->op == G_COPY_SLICES ? tn_contiguous(g) : tn_to(tn_zeros(bm->shape, bm->ndim, g->dtype), g->device);
        if (!gb) return -1;
        tn_tensor reg = *gb;
        reg.ndim = nd;
        for (int d = 0; d < nd; d++) { reg.shape[d] = n->i[1 + d]; reg.strides[d] = n->i[1 + nd + d]; }
        reg.offset = gb->offset + n->i[1 + 2 * nd];
        if (n->op == G_BASE_VIEW) { gin[0] = gb; return tn__copy(&reg, g); }
        if (TN__NEED(1)) gin[1] = tn__own(tn__copy_as(&reg, g->dtype, g->device));
        if (TN__NEED(0)) {
            tn_tensor *old = tn__own(tn__copy_as(gb, g->dtype, g->device));
            if (!old) return -1;
            reg = *old;
            reg.ndim = nd;
            for (int d = 0; d < nd; d++) { reg.shape[d] = n->i[1 + d]; reg.strides[d] = n->i[1 + nd + d]; }
            reg.offset = old->offset + n->i[1 + 2 * nd];
            if (tn__backend(old->device)->fill(&reg, 0)) return -1;
            gin[0] = old;
        }
        return 0;
    }
    case G_CUSTOM: {
        n->unpacked = S;
        int rc = n->custom_bw(n, g, gin, n->nin, n->custom_user);
        n->unpacked = NULL;
        for (int k = 0; k < n->nin && rc == 0; k++) { /* a gradient must have its input's shape, or broadcast from it (then it is summed, as PyTorch) */
            if (!gin[k] || !TN__NEED(k) || (gin[k]->ndim == n->in[k].ndim && !memcmp(gin[k]->shape, n->in[k].shape, (size_t)gin[k]->ndim * sizeof(int64_t)))) continue;
            int64_t bs[TN_MAX_DIMS];
            int nb = tn__broadcast(gin[k]->shape, gin[k]->ndim, n->in[k].shape, n->in[k].ndim, bs);
            if (nb == gin[k]->ndim && !memcmp(bs, gin[k]->shape, (size_t)nb * sizeof(int64_t))) gin[k] = tn__sum_to(gin[k], &n->in[k]);
            else rc = TN__FAIL_INT("%s: backward returned an invalid gradient at index %d: got %s but expected shape compatible with %s",
                                   n->name ? n->name : "custom op", k, TN__SHAPE(gin[k]), tn__shape_str(n->in[k].shape, n->in[k].ndim));
        }
        return rc;
    }
    default: return TN__FAIL_INT("autograd: no backward for node %s", tn__gop_names[n->op]);
    }
#undef TN__NEED
}

/* ---- the engine ---- */
static int64_t tn__epoch;

typedef struct tn__nodevec { tn_node **v; int64_t n, cap; } tn__nodevec;
static int tn__nodevec_push(tn__nodevec *s, tn_node *x) {
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        tn_node **v = (tn_node **)TN_REALLOC(s->v, (size_t)cap * sizeof *v);
        if (!v) return TN__FAIL_INT("autograd: out of memory walking the graph");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

/* acc <- acc + g (references: takes g, returns the sum); under create_graph the sum is recorded. */
static tn_tensor *tn__accumulate(tn_tensor *acc, tn_tensor *g) {
    if (!acc) return g;
    if (!g) return acc;
    tn_scope_begin();
    tn_tensor *s = tn_retain(tn_add(acc, g));
    tn_scope_end();
    tn_release(acc);
    tn_release(g);
    return s;
}

/* Bring a gradient to the dtype and device of the input it is for (takes and returns a reference). */
static tn_tensor *tn__grad_as(tn_tensor *g, const tn__meta *m) {
    if (!g || (g->dtype == m->dtype && g->device == m->device)) return g;
    tn_scope_begin();
    tn_tensor *r = tn_to_dtype(g, m->dtype);
    if (r && r->device != m->device) r = tn_to(r, m->device);
    tn_retain(r);
    tn_scope_end();
    tn_release(g);
    return r;
}

/* Deliver g (a reference, taken) to a leaf: hooks, then captured (autograd.grad) or .grad. */
static int tn__deliver_leaf(tn_tensor *leaf, tn_tensor *g, tn_tensor *const *inputs, int ninputs, tn_tensor **captured, bool create_graph) {
    if (!leaf->requires_grad) { tn_release(g); return 0; } /* requires_grad_(false) since: skipped, as PyTorch's AccumulateGrad */
    int rc = 0;
    tn_scope_begin();
    g = tn__run_hooks(leaf->hooks, g, &rc);
    tn_scope_end();
    if (!g) return rc;
    if (captured) {
        for (int k = 0; k < ninputs; k++)
            if (inputs[k] == leaf) captured[k] = tn__accumulate(captured[k], tn_retain(g));
        tn_release(g);
        return 0;
    }
    if (!create_graph) { /* .grad is a plain tensor: detached, and our own copy so += never aliases */
        if (leaf->grad && !leaf->grad->requires_grad && !tn_same_storage(leaf->grad, g)) { /* accumulate in place, as PyTorch */
            tn_no_grad_begin();
            tn_tensor *r = tn__binary_raw("backward", ADD, leaf->grad, g, 1, leaf->grad);
            tn_no_grad_end();
            tn_release(r);
            tn_release(g);
            return r ? 0 : -1;
        }
        /* a gradient nobody else can see (our only reference to a library-owned, contiguous,
           unshared storage) is taken as it is, as PyTorch's AccumulateGrad steals it */
        bool alone = !g->base ? TN__ATOMIC_LOAD(&g->storage->refcount) == 1   /* or a view that alone holds its base */
                              : !g->base->base && TN__ATOMIC_LOAD(&g->base->refcount) == 1 && TN__ATOMIC_LOAD(&g->storage->refcount) == 2;
        bool own = alone && !g->is_wrapped_number && TN__ATOMIC_LOAD(&g->refcount) == 1 && !g->storage->deleter &&
                   !g->grad_fn && !g->requires_grad && tn_is_contiguous(g);
        if (own && g->base) {   /* a plain tensor over the same storage, without the base */
            tn_tensor *c = tn__view_of(g, g->shape, g->strides, g->ndim, g->offset);
            tn_release(g);
            if (!c) return -1;
            c->is_view = false;
            g = c;
        } else if (!own) {
            tn_tensor *c = tn__copy_as(g, g->dtype, g->device);
            tn_release(g);
            if (!c) return -1;
            g = c;
        }
        if (leaf->grad && !leaf->grad->requires_grad) { /* same storage as g: add the copy */
            tn_no_grad_begin();
            tn_tensor *r = tn__binary_raw("backward", ADD, leaf->grad, g, 1, leaf->grad);
            tn_no_grad_end();
            tn_release(r);
            tn_release(g);
            return r ? 0 : -1;
        }
    }
    tn_tensor *sum = leaf->grad ? tn__accumulate(tn_retain(leaf->grad), g) : g;
    tn_release(leaf->grad);
    leaf->grad = sum;
    return 0;
}

static int tn__check_saved(tn_node *n) {
    for (int k = 0; k < n->nsaved; k++) {
        if (!n->saved[k]) continue;
        int64_t v = tn_version(n->saved[k]);
        if (v != n->saved_version[k])
            return TN__FAIL_INT("backward: one of the variables needed for gradient computation has been modified by an inplace operation: "
                                "[%s %s] is at version %lld; expected version %lld instead (saved by %s)",
                                tn_dtype_name(n->saved[k]->dtype), TN__SHAPE(n->saved[k]), (long long)v, (long long)n->saved_version[k],
                                n->op == G_UNARY ? tn__unary_grad_name(n->sub) : n->op == G_BINARY ? tn__binary_grad_name(n->sub)
                                : n->op == G_TERNARY ? tn__ternary_grad_names[n->sub] : tn__gop_names[n->op]);
    }
    return 0;
}

/* Reverse-mode sweep from roots (with their gradients) through every reachable node,
   in reverse topological order (Kahn's algorithm on consumer counts: no recursion, so
   any graph depth works). captured != NULL: gradients for `inputs` are returned there
   and .grad is untouched (tn_autograd_grad). */
/* A leaf's gradient is summed over all the edges that reach it before its hooks run
   and .grad is touched, once (PyTorch's AccumulateGrad node). */
typedef struct tn__leafacc { tn_tensor *leaf, *g; int64_t deps; } tn__leafacc;
typedef struct tn__leafvec { tn__leafacc *v; int64_t n, cap; } tn__leafvec;
static tn__leafacc *tn__leaf_entry(tn__leafvec *lv, tn_tensor *leaf, bool add) {
    for (int64_t k = 0; k < lv->n; k++) if (lv->v[k].leaf == leaf) return &lv->v[k];
    if (!add) return NULL;
    if (lv->n == lv->cap) {
        int64_t cap = lv->cap ? 2 * lv->cap : 16;
        tn__leafacc *v = (tn__leafacc *)TN_REALLOC(lv->v, (size_t)cap * sizeof *v);
        if (!v) return (tn__leafacc *)tn__error("autograd: out of memory");
        lv->v = v;
        lv->cap = cap;
    }
    tn__leafacc *e = &lv->v[lv->n++];
    e->leaf = leaf;
    e->g = NULL;
    e->deps = 0;
    return e;
}

static int tn__engine(const char *fn, tn_tensor *const *roots, tn_tensor **root_grads, int nroots,
                      tn_tensor *const *inputs, int ninputs, tn_tensor **captured, tn_backward_opts o) {
    tn__nodevec all = {NULL, 0, 0}, stack = {NULL, 0, 0}, ready = {NULL, 0, 0};
    tn__leafvec leaves = {NULL, 0, 0};
    int64_t epoch = TN__ATOMIC_ADD(&tn__epoch, 1);
    int rc = 0;
    if (o.create_graph) o.retain_graph = true; /* PyTorch: retain_graph defaults to create_graph */

    /* 1. collect the reachable nodes and count each one's consumers */
    for (int r = 0; r < nroots && rc == 0; r++) {
        tn_node *x = roots[r]->grad_fn;
        if (x && x->epoch != epoch) { x->epoch = epoch; x->deps = 0; rc = tn__nodevec_push(&stack, x); }
    }
    while (stack.n > 0 && rc == 0) {
        tn_node *x = stack.v[--stack.n];
        rc = tn__nodevec_push(&all, x);
        for (int i = 0; i < x->nin && rc == 0; i++) {
            tn_node *c = x->next[i].fn;
            if (x->next[i].leaf) {
                tn__leafacc *e = tn__leaf_entry(&leaves, x->next[i].leaf, true);
                if (!e) rc = -1; else e->deps++;
            }
            if (!c) continue;
            if (c->epoch != epoch) { c->epoch = epoch; c->deps = 0; rc = tn__nodevec_push(&stack, c); }
            c->deps++;
        }
    }
    tn__grad_mode_push(o.create_graph);
    /* 2. seed the roots */
    for (int r = 0; r < nroots && rc == 0; r++) {
        tn_tensor *g = tn_retain(root_grads[r]);
        if (roots[r]->grad_fn) roots[r]->grad_fn->gsum = tn__accumulate(roots[r]->grad_fn->gsum, g);
        else rc = tn__deliver_leaf(roots[r], g, inputs, ninputs, captured, o.create_graph);
    }
    for (int64_t k = 0; k < all.n && rc == 0; k++)
        if (all.v[k]->deps == 0) rc = tn__nodevec_push(&ready, all.v[k]);
    /* 3. run each node once all its consumers have contributed */
    while (ready.n > 0 && rc == 0) {
        tn_node *n = ready.v[--ready.n];
        tn_tensor *g = n->gsum, *gin[2 * TN_MAX_DIMS + 2];
        tn_tensor **gv = n->nin <= 2 * TN_MAX_DIMS + 2 ? gin : (tn_tensor **)TN_MALLOC((size_t)n->nin * sizeof *gv);
        n->gsum = NULL;
        if (!gv) { tn_release(g); rc = TN__FAIL_INT("%s: out of memory", fn); break; }
        for (int i = 0; i < n->nin; i++) gv[i] = NULL;
        if (g) {
            tn_scope_begin();
            g = tn__run_hooks(&n->hooks, g, &rc);
            tn_scope_end();
            if (n->retain_target && g) { /* into the tensor's .grad (not the node's, so no cycle through the node) */
                tn_tensor *t = n->retain_target;
                tn_tensor *keep = o.create_graph ? tn_retain(g) : tn__copy_as(g, g->dtype, g->device);
                t->grad = tn__accumulate(t->grad, keep);
            }
            for (int k = 0; captured && k < ninputs; k++)
                if (inputs[k]->grad_fn == n) captured[k] = tn__accumulate(captured[k], tn_retain(g));
            if (n->released)
                rc = TN__FAIL_INT("%s: trying to backward through the graph a second time (or to use saved tensors after they were freed); "
                                  "pass retain_graph = true to the first backward if you need to do this", fn);
            if (rc == 0) rc = tn__check_saved(n);
            if (rc == 0) {
                tn_scope_begin();
                unsigned errors_before = tn__nerrors;
                rc = tn__node_backward(n, g, gv);
                if (rc == 0 && tn__nerrors != errors_before) rc = -1; /* an op inside the formula failed */
                for (int i = 0; tn__anomaly && rc == 0 && i < n->nin; i++)
                    if (gv[i] && tn_dtype_is_floating(gv[i]->dtype) && tn_item(tn_any(tn_isnan(gv[i]))) != 0)
                        rc = TN__FAIL_INT("%s: anomaly detected: Function '%s' returned nan values in its %dth output", fn, tn__node_name(n), i);
                for (int i = 0; i < n->nin; i++) {
                    if (rc == 0 && gv[i] && (n->next[i].fn || n->next[i].leaf)) gv[i] = tn_retain(gv[i]);
                    else gv[i] = NULL;
                }
                tn_scope_end();
            }
            tn_release(g);
        }
        for (int i = 0; i < n->nin; i++) {
            tn_tensor *gi = tn__grad_as(gv[i], &n->in[i]);
            tn__edge *e = &n->next[i];
            if (e->fn) {
                if (rc == 0) e->fn->gsum = tn__accumulate(e->fn->gsum, gi); else tn_release(gi);
                if (--e->fn->deps == 0 && rc == 0) rc = tn__nodevec_push(&ready, e->fn);
            } else if (e->leaf) {
                tn__leafacc *la = tn__leaf_entry(&leaves, e->leaf, false);
                if (la && rc == 0) {
                    la->g = tn__accumulate(la->g, gi);
                    if (--la->deps == 0 && la->g) {
                        rc = tn__deliver_leaf(e->leaf, la->g, inputs, ninputs, captured, o.create_graph);
                        la->g = NULL;
                    }
                } else tn_release(gi);
            } else tn_release(gi);
        }
        if (gv != gin) TN_FREE(gv);
        if (!o.retain_graph && n->nsaved > 0) { /* as PyTorch: saved tensors go, so memory stays flat */
            for (int k = 0; k < n->nsaved; k++) {
                tn_release(n->saved[k]);
                if (n->saved_fn[k]) tn__node_release(n->saved_fn[k]);
            }
            n->nsaved = 0;
            n->released = true;
        }
    }
    tn__grad_mode_pop(fn);
    for (int64_t k = 0; k < all.n; k++) { tn_release(all.v[k]->gsum); all.v[k]->gsum = NULL; all.v[k]->deps = 0; }
    for (int64_t k = 0; k < leaves.n; k++) tn_release(leaves.v[k].g);
    TN_FREE(leaves.v);
    TN_FREE(all.v);
    TN_FREE(stack.v);
    TN_FREE(ready.v);
    return rc;
}

static int tn__check_root(const char *fn, tn_tensor *t, int k) {
    if (!t->requires_grad) return TN__FAIL_INT("%s: element %d of tensors does not require grad and does not have a grad_fn", fn, k);
    return 0;
}

static int tn__backward(const char *fn, tn_tensor *t, tn_tensor *gradient, tn_backward_opts opts) {
    if (!t) return -1;
    if (tn__check_root(fn, t, 0)) return -1;
    tn_tensor *g = gradient;
    if (g && (g->ndim != t->ndim || memcmp(g->shape, t->shape, (size_t)t->ndim * sizeof(int64_t))))
        return TN__FAIL_INT("%s: gradient of shape %s does not match the tensor's shape %s", fn, TN__SHAPE(g), TN__SHAPE(t));
    if (!g && tn_numel(t) != 1)
        return TN__FAIL_INT("%s: grad can be implicitly created only for scalar outputs (shape %s); pass a gradient", fn, TN__SHAPE(t));
    tn_tensor *own = g ? tn_retain(g) : tn__full_like(t, 1);
    if (!own) return -1;
    int rc = tn__engine(fn, &t, &own, 1, NULL, 0, NULL, opts);
    tn_release(own);
    return rc;
}
TNDEF int tn_backward_with(tn_tensor *t, tn_tensor *gradient, tn_backward_opts opts) { return tn__backward("tn_backward_with", t, gradient, opts); }
TNDEF int tn_backward(tn_tensor *t) {
    tn_backward_opts o;
    memset(&o, 0, sizeof o);
    return tn__backward("tn_backward", t, NULL, o);
}

TNDEF int tn_autograd_grad(tn_tensor *const *outputs, int n_outputs, tn_tensor *const *inputs, int n_inputs,
                           tn_tensor *const *grad_outputs, tn_tensor **results, tn_backward_opts opts) {
    const char *fn = "tn_autograd_grad";
    if (!outputs || !inputs || !results || n_outputs <= 0 || n_inputs <= 0) return TN__FAIL_INT("%s: need outputs, inputs and a results array", fn);
    for (int k = 0; k < n_inputs; k++) results[k] = NULL;
    for (int k = 0; k < n_outputs; k++) if (!outputs[k] || tn__check_root(fn, outputs[k], k)) return -1;
    for (int k = 0; k < n_inputs; k++) {
        if (!inputs[k]) return -1;
        if (!inputs[k]->requires_grad) return TN__FAIL_INT("%s: input %d does not require grad", fn, k);
    }
    tn_tensor **gs = (tn_tensor **)TN_MALLOC((size_t)n_outputs * sizeof *gs), **cap = (tn_tensor **)TN_MALLOC((size_t)n_inputs * sizeof *cap);
    int rc = gs && cap ? 0 : TN__FAIL_INT("%s: out of memory", fn);
    for (int k = 0; gs && k < n_outputs; k++) gs[k] = NULL;

    for (int k = 0; k < n_outputs && rc == 0; k++) {
        tn_tensor *g = grad_outputs ? grad_outputs[k] : NULL;
        if (!g && tn_numel(outputs[k]) != 1) { rc = TN__FAIL_INT("%s: grad can be implicitly created only for scalar outputs (output %d has shape %s)", fn, k, TN__SHAPE(outputs[k])); break; }
        gs[k] = g ? tn_retain(g) : tn__full_like(outputs[k], 1);
        if (!gs[k]) rc = -1;
    }
    for (int k = 0; k < n_inputs && cap; k++) cap[k] = NULL;
    if (rc == 0) rc = tn__engine(fn, outputs, gs, n_outputs, inputs, n_inputs, cap, opts);
    for (int k = 0; k < n_inputs && rc == 0; k++)
        if (!cap[k] && !opts.allow_unused) rc = TN__FAIL_INT("%s: input %d appears to not have been used in the graph; set allow_unused if this is intended", fn, k);
    for (int k = 0; k < n_inputs && cap; k++) {
        if (rc == 0) {
            tn_tensor *r = cap[k];
            if (r && !opts.create_graph && r->grad_fn) { /* hand out a plain tensor */
                tn_tensor *d = tn__view_of(r, r->shape, r->strides, r->ndim, r->offset);
                tn_release(r);
                r = d;
            }
            results[k] = tn__own(r);
        } else tn_release(cap[k]);
    }
    for (int k = 0; gs && k < n_outputs; k++) tn_release(gs[k]);
    TN_FREE(gs);
    TN_FREE(cap);
    return rc;
}

/* ---- custom ops ---- */
TNDEF tn_tensor *tn_custom_op(const char *name, tn_custom_forward forward, tn_custom_backward backward,
                              tn_tensor *const *inputs, int n, void *user) {
    if (!forward || !backward || n < 0 || (n && !inputs)) return (tn_tensor *)tn__error("tn_custom_op: need forward, backward and inputs");
    for (int k = 0; k < n; k++) if (!inputs[k]) return NULL;
    tn_node *nd = tn__node_new(G_CUSTOM, 0, inputs, n), tmp;
    tn_node *ctx = nd;
    if (!ctx) { /* no gradient needed: a throwaway context collects what forward saves */
        memset(&tmp, 0, sizeof tmp);
        tmp.nin = n;
        ctx = &tmp;
    }
    if (name && ctx == nd) { /* the node outlives the caller's string */
        size_t len = strlen(name) + 1;
        nd->custom_name = (char *)TN_MALLOC(len);
        if (nd->custom_name) memcpy(nd->custom_name, name, len);
        ctx->name = nd->custom_name;
    } else ctx->name = name;
    ctx->custom_bw = backward;
    ctx->custom_user = user;
    tn_scope_begin();
    tn_no_grad_begin();
    tn_tensor *out = forward(ctx, inputs, n, user);
    tn_no_grad_end();
    /* the result is a fresh view, so history never lands on a tensor forward merely passed through */
    tn_tensor *res = out ? tn__view_of(out, out->shape, out->strides, out->ndim, out->offset) : NULL;
    if (!out && tn_last_error()[0] == 0) tn__error("%s: forward returned NULL", name ? name : "tn_custom_op");
    tn_scope_end();
    if (ctx == &tmp) {
        for (int k = 0; k < tmp.nsaved; k++) { tn_release(tmp.saved[k]); if (tmp.saved_fn[k]) tn__node_release(tmp.saved_fn[k]); }
        tn__node_free_saved_arrays(&tmp);
    }
    if (!res) { tn__node_release(nd); return NULL; }
    res->is_view = false;
    for (int k = 0; nd && k < nd->nsaved && k < 32; k++) /* forward saved its own result: like PyTorch's saved outputs */
        if (nd->saved[k] && nd->saved[k]->storage == res->storage && nd->saved[k]->offset == res->offset &&
            nd->saved[k]->ndim == res->ndim && !memcmp(nd->saved[k]->shape, res->shape, (size_t)res->ndim * sizeof(int64_t)))
            nd->saved_output_mask |= 1u << k;
    return tn__own(tn__node_attach(nd, res));
}
TNDEF int tn_ctx_save(tn_ctx *ctx, tn_tensor *t) {
    if (!ctx || !t) return -1;
    int before = ctx->nsaved;
    tn__node_save(ctx, t);
    return ctx->nsaved > before ? 0 : -1;
}
TNDEF tn_tensor *tn_ctx_saved(tn_ctx *ctx, int i) {
    if (!ctx || i < 0 || i >= ctx->nsaved) return (tn_tensor *)tn__error("tn_ctx_saved: no saved tensor %d (%d saved)", i, ctx ? ctx->nsaved : 0);
    return ctx->unpacked ? ctx->unpacked[i] : ctx->saved[i];
}
TNDEF int tn_ctx_nsaved(tn_ctx *ctx) { return ctx ? ctx->nsaved : 0; }
TNDEF bool tn_ctx_needs_grad(tn_ctx *ctx, int i) {
    return ctx && ctx->next && i >= 0 && i < ctx->nin && (ctx->next[i].fn || ctx->next[i].leaf);
}

/* ---- debugging: names and graph dumps ---- */
TNDEF int tn_set_name(tn_tensor *t, const char *name) {
    if (!t) return -1;
    char *c = NULL;
    if (name) {
        size_t len = strlen(name) + 1;
        c = (char *)TN_MALLOC(len);
        if (!c) return TN__FAIL_INT("tn_set_name: out of memory");
        memcpy(c, name, len);
    }
    TN_FREE((void *)t->name);
    t->name = c;
    return 0;
}
TNDEF const char *tn_get_name(const tn_tensor *t) { return t ? t->name : NULL; }

/* digraph of the nodes behind t: each node with its name, each leaf with its name and
   shape; edges point from an input to the op that consumed it (data flow). */
TNDEF char *tn_graph_dot(tn_tensor *t) {
    if (!t) return NULL;
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    char line[256];
    tn__sb_puts(&b, "digraph autograd {\n  node [shape=box, fontname=\"monospace\"];\n");
    snprintf(line, sizeof line, "  out [label=\"%s %s\", shape=ellipse];\n", t->name ? t->name : "result", TN__SHAPE(t));
    tn__sb_puts(&b, line);
    if (!t->grad_fn) {
        tn__sb_puts(&b, "}\n");
        return b.s;
    }
    snprintf(line, sizeof line, "  n%p -> out;\n", (void *)t->grad_fn);
    tn__sb_puts(&b, line);
    tn__nodevec stack = {NULL, 0, 0}, seen = {NULL, 0, 0};
    tn__nodevec_push(&stack, t->grad_fn);
    while (stack.n > 0 && !b.failed) {
        tn_node *n = stack.v[--stack.n];
        bool done = false;
        for (int64_t k = 0; k < seen.n && !done; k++) done = seen.v[k] == n;
        if (done) continue;
        tn__nodevec_push(&seen, n);
        snprintf(line, sizeof line, "  n%p [label=\"%s\"];\n", (void *)n, tn__node_name(n));
        tn__sb_puts(&b, line);
        for (int i = 0; i < n->nin; i++) {
            tn__edge *e = &n->next[i];
            if (e->fn) {
                snprintf(line, sizeof line, "  n%p -> n%p;\n", (void *)e->fn, (void *)n);
                tn__nodevec_push(&stack, e->fn);
            } else if (e->leaf) {
                snprintf(line, sizeof line, "  l%p [label=\"%s %s\", shape=ellipse, style=filled, fillcolor=lightblue];\n  l%p -> n%p;\n",
                         (void *)e->leaf, e->leaf->name ? e->leaf->name : "leaf", TN__SHAPE(e->leaf), (void *)e->leaf, (void *)n);
            } else continue;
            tn__sb_puts(&b, line);
        }
    }
    TN_FREE(stack.v);
    TN_FREE(seen.v);
    tn__sb_puts(&b, "}\n");
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_graph_dot: out of memory"); }
    return b.s;
}

/* ---- gradcheck ---- */
static double tn__flat_get(tn_tensor *t, int64_t i) { /* element i (row-major) of a contiguous f64 CPU tensor */
    return ((const double *)tn_data_ptr(t))[i];
}

TNDEF bool tn_gradcheck(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, double eps, double atol, double rtol) {
    if (!fn || !inputs || n <= 0) { tn__error("tn_gradcheck: need a function and inputs"); return false; }
    if (eps <= 0) eps = 1e-6;
    if (atol <= 0) atol = 1e-5;
    if (rtol <= 0) rtol = 1e-3;
    for (int k = 0; k < n; k++) {
        tn_tensor *x = inputs[k];
        if (!x) return false;
        if (x->requires_grad && (x->device != TN_CPU || !tn_is_contiguous(x) || !tn_dtype_is_floating(x->dtype))) {
            tn__error("tn_gradcheck: input %d must be a contiguous floating CPU tensor (float64 recommended)", k);
            return false;
        }
    }
    bool ok = true;
    double worst = -1;
    char msg[512] = "";
    tn_scope_begin();
    tn_tensor *out = fn(inputs, n, user);
    if (!out || !tn_dtype_is_floating(out->dtype)) {
        if (out) tn__error("tn_gradcheck: the function's output must be floating, got %s", tn_dtype_name(out->dtype));
        tn_scope_end();
        return false;
    }
    int64_t m = tn_numel(out);
    for (int k = 0; k < n && ok; k++) {
        tn_tensor *x = inputs[k];
        if (!x->requires_grad) continue;
        int64_t nx = tn_numel(x);
        /* numerical Jacobian column by column: central differences on x's raw data */
        double *num = (double *)TN_MALLOC((size_t)(nx * m + 1) * sizeof(double));
        if (!num) { tn__error("tn_gradcheck: out of memory"); ok = false; break; }
        char *base = (char *)tn_data_ptr(x);
        for (int64_t e = 0; e < nx && ok; e++) {
            tn_tensor *outs[2];
            for (int s = 0; s < 2; s++) {
                double v = x->dtype == TN_F64 ? ((double *)base)[e] : ((float *)base)[e];
                double pv = v + (s ? -eps : eps);
                if (x->dtype == TN_F64) ((double *)base)[e] = pv; else ((float *)base)[e] = (float)pv;
                tn_no_grad_begin();
                tn_tensor *o = fn(inputs, n, user);
                /* a copy: the output may be a view of the input being perturbed */
                outs[s] = o ? tn__own(tn__copy_as(o, TN_F64, TN_CPU)) : NULL;
                tn_no_grad_end();
                if (x->dtype == TN_F64) ((double *)base)[e] = v; else ((float *)base)[e] = (float)v;
            }
            if (!outs[0] || !outs[1]) { ok = false; break; }
            for (int64_t j = 0; j < m; j++) num[j * nx + e] = (tn__flat_get(outs[0], j) - tn__flat_get(outs[1], j)) / (2 * eps);
        }
        /* analytical Jacobian row by row: one backward per output element */
        for (int64_t j = 0; j < m && ok; j++) {
            tn_scope_begin();
            tn_tensor *go = tn_zeros_like(out), *gx = NULL; /* one-hot at output element j */
            if (out->dtype == TN_F64) ((double *)tn_data_ptr(go))[j] = 1; else ((float *)tn_data_ptr(go))[j] = 1;
            tn_backward_opts o;
            memset(&o, 0, sizeof o);
            o.retain_graph = true;
            o.allow_unused = true;
            if (tn_autograd_grad(&out, 1, &x, 1, &go, &gx, o)) { ok = false; tn_scope_end(); break; }
            tn_tensor *g64 = gx ? tn_contiguous(tn_to_dtype(gx, TN_F64)) : NULL;
            for (int64_t e = 0; e < nx; e++) {
                double a = g64 ? tn__flat_get(g64, e) : 0, nm = num[j * nx + e], err = fabs(a - nm);
                if (!(err <= atol + rtol * fabs(nm))) {
                    ok = false;
                    if (err > worst || worst < 0 || err != err) {
                        worst = err;
                        snprintf(msg, sizeof msg, "tn_gradcheck: Jacobian mismatch for input %d: d out[%lld] / d in[%lld]: analytical %.10g vs numerical %.10g",
                                 k, (long long)j, (long long)e, a, nm);
                    }
                }
            }
            tn_scope_end();
        }
        TN_FREE(num);
    }
    tn_scope_end();
    if (!ok && msg[0]) tn__error("%s", msg);
    return ok;
}

/* gradgradcheck: gradcheck of (inputs, v) -> the gradients of <out, v> w.r.t. the inputs,
   computed with create_graph, flattened and concatenated. */
typedef struct tn__ggctx { tn_gradcheck_fn fn; void *user; int n; } tn__ggctx;
static tn_tensor *tn__gg_fn(tn_tensor *const *in, int n_all, void *u) {
    tn__ggctx *c = (tn__ggctx *)u;
    tn_tensor *out = c->fn(in, c->n, c->user), *v = in[n_all - 1];
    if (!out) return NULL;
    tn_tensor *xs[TN_MAX_DIMS * 4], *gs[TN_MAX_DIMS * 4];
    int nx = 0;
    for (int k = 0; k < c->n && nx < TN_MAX_DIMS * 4; k++) if (in[k]->requires_grad) xs[nx++] = in[k];
    if (!tn_is_grad_enabled() || !out->requires_grad) { /* finite-difference evaluations run under no_grad */
        tn_enable_grad_begin();
        out = c->fn(in, c->n, c->user);
        tn_enable_grad_end();
        if (!out) return NULL;
    }
    tn_backward_opts o;
    memset(&o, 0, sizeof o);
    o.create_graph = true;
    o.retain_graph = true;
    o.allow_unused = true;
    tn_tensor *vv = tn_reshape(v, out->shape, out->ndim);
    if (tn_autograd_grad(&out, 1, xs, nx, &vv, gs, o)) return NULL;
    int64_t m1 = -1;
    for (int k = 0; k < nx; k++) gs[k] = tn_reshape(gs[k] ? gs[k] : tn_zeros_like(xs[k]), &m1, 1);
    return tn_cat(gs, nx, 0);
}
TNDEF bool tn_gradgradcheck(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, double eps, double atol, double rtol) {
    if (!fn || !inputs || n <= 0 || n >= TN_MAX_DIMS * 4) { tn__error("tn_gradgradcheck: need a function and 1 to %d inputs", TN_MAX_DIMS * 4 - 1); return false; }
    tn_scope_begin();
    tn_tensor *out = fn(inputs, n, user), *all[TN_MAX_DIMS * 4];
    bool ok = out != NULL;
    if (ok) {
        int64_t m = tn_numel(out);
        tn_generator gen = {1234, 0}; /* its own generator: the caller's random stream is untouched */
        tn_tensor *v = tn_contiguous(tn_to_dtype(tn_randn_gen(&m, 1, TN_F64, &gen), out->dtype));
        ok = v && tn_requires_grad_(v, true) == 0;
        for (int k = 0; k < n; k++) all[k] = inputs[k];
        all[n] = v;
        tn__ggctx c;
        c.fn = fn;
        c.user = user;
        c.n = n;
        if (ok) ok = tn_gradcheck(tn__gg_fn, all, n + 1, &c, eps, atol, rtol);
    }
    tn_scope_end();
    return ok;
}

static void tn__hooks_free(tn__hooks *h) { if (h) { TN_FREE(h->items); TN_FREE(h); } }
static tn_tensor *tn__grad_name(tn_tensor *t, const char *name) {
    if (t && t->grad_fn) t->grad_fn->name = name;
    return t;
}

/* ======================================================================= */
/* 12. modules                                                              */
/* ======================================================================= */
/* ---- tn_dict ---- */
struct tn_dict {
    int n, cap, nmeta, metacap;
    char **keys;
    tn_tensor **values;
    char **meta;                      /* key, value, key, value, ... */
};
static char *tn__strdup(const char *s) {
    size_t len = strlen(s) + 1;
    char *c = (char *)TN_MALLOC(len);
    if (c) memcpy(c, s, len);
    return c;
}
TNDEF tn_dict *tn_dict_new(void) {
    tn_dict *d = (tn_dict *)TN_MALLOC(sizeof *d);
    if (!d) return (tn_dict *)tn__error("tn_dict_new: out of memory");
    memset(d, 0, sizeof *d);
    return d;
}
TNDEF void tn_dict_free(tn_dict *d) {
    if (!d) return;
    for (int i = 0; i < d->n; i++) { TN_FREE(d->keys[i]); tn_release(d->values[i]); }
    for (int i = 0; i < 2 * d->nmeta; i++) TN_FREE(d->meta[i]);
    TN_FREE(d->keys);
    TN_FREE(d->values);
    TN_FREE(d->meta);
    TN_FREE(d);
}
static int tn__dict_find(const tn_dict *d, const char *key) {
    for (int i = 0; d && key && i < d->n; i++) if (!strcmp(d->keys[i], key)) return i;
    return -1;
}
/* tn_dict_set and tn_dict_set_meta for names known to be new (checked for duplicates):
   no lookup, so a dict of n entries is built in linear time, not quadratic (which a
   hostile header with millions of entries could exploit). The dict takes key (and value). */
static int tn__dict_append(tn_dict *d, char *key, tn_tensor *t) {
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        char **k = (char **)TN_REALLOC(d->keys, (size_t)cap * sizeof *k);
        if (k) d->keys = k;
        tn_tensor **v = k ? (tn_tensor **)TN_REALLOC(d->values, (size_t)cap * sizeof *v) : NULL;
        if (!v) return TN__FAIL_INT("tn_dict_set: out of memory");
        d->values = v;
        d->cap = cap;
    }
    d->keys[d->n] = key;
    d->values[d->n++] = t ? tn_retain(t) : NULL;
    return 0;
}
static int tn__dict_append_meta(tn_dict *d, char *key, char *value) {
    if (d->nmeta == d->metacap) {
        int cap = d->metacap ? 2 * d->metacap : 8;
        char **m = (char **)TN_REALLOC(d->meta, (size_t)cap * 2 * sizeof *m);
        if (!m) return TN__FAIL_INT("tn_dict_set_meta: out of memory");
        d->meta = m;
        d->metacap = cap;
    }
    d->meta[2 * d->nmeta] = key;
    d->meta[2 * d->nmeta++ + 1] = value;
    return 0;
}

TNDEF int tn_dict_set(tn_dict *d, const char *key, tn_tensor *t) {
    if (!d || !key) return TN__FAIL_INT("tn_dict_set: need a dict and a key");
    int i = tn__dict_find(d, key);
    if (i >= 0) {
        tn_release(d->values[i]);
        d->values[i] = t ? tn_retain(t) : NULL;
        return 0;
    }
    char *c = tn__strdup(key);
    if (!c) return TN__FAIL_INT("tn_dict_set: out of memory");
    if (tn__dict_append(d, c, t)) { TN_FREE(c); return -1; }
    return 0;
}
TNDEF tn_tensor *tn_dict_get(const tn_dict *d, const char *key) {
    int i = tn__dict_find(d, key);
    return i < 0 ? NULL : d->values[i];
}
TNDEF bool tn_dict_contains(const tn_dict *d, const char *key) { return tn__dict_find(d, key) >= 0; }
TNDEF int tn_dict_remove(tn_dict *d, const char *key) {
    int i = tn__dict_find(d, key);
    if (i < 0) return -1;
    TN_FREE(d->keys[i]);
    tn_release(d->values[i]);
    memmove(d->keys + i, d->keys + i + 1, (size_t)(d->n - i - 1) * sizeof *d->keys);
    memmove(d->values + i, d->values + i + 1, (size_t)(d->n - i - 1) * sizeof *d->values);
    d->n--;
    return 0;
}
TNDEF int tn_dict_len(const tn_dict *d) { return d ? d->n : 0; }
TNDEF const char *tn_dict_key(const tn_dict *d, int i) { return d && i >= 0 && i < d->n ? d->keys[i] : NULL; }
TNDEF tn_tensor *tn_dict_value(const tn_dict *d, int i) { return d && i >= 0 && i < d->n ? d->values[i] : NULL; }
TNDEF tn_tensor *const *tn_dict_values(const tn_dict *d) { return d ? d->values : NULL; }
TNDEF int tn_dict_set_meta(tn_dict *d, const char *key, const char *value) {
    if (!d || !key || !value) return TN__FAIL_INT("tn_dict_set_meta: need a dict, a key and a value");
    char *v = tn__strdup(value);
    if (!v) return TN__FAIL_INT("tn_dict_set_meta: out of memory");
    for (int i = 0; i < d->nmeta; i++)
        if (!strcmp(d->meta[2 * i], key)) { TN_FREE(d->meta[2 * i + 1]); d->meta[2 * i + 1] = v; return 0; }
    char *k = tn__strdup(key);
    if (!k || tn__dict_append_meta(d, k, v)) { TN_FREE(k); TN_FREE(v); return k ? -1 : TN__FAIL_INT("tn_dict_set_meta: out of memory"); }
    return 0;
}
TNDEF const char *tn_dict_get_meta(const tn_dict *d, const char *key) {
    for (int i = 0; d && key && i < d->nmeta; i++) if (!strcmp(d->meta[2 * i], key)) return d->meta[2 * i + 1];
    return NULL;
}
TNDEF int tn_dict_meta_len(const tn_dict *d) { return d ? d->nmeta : 0; }
TNDEF const char *tn_dict_meta_key(const tn_dict *d, int i) { return d && i >= 0 && i < d->nmeta ? d->meta[2 * i] : NULL; }

/* ---- options text: "lr=0.01, betas=(0.9, 0.999), nesterov=True, padding='same'" ----
   Modules, optimizers, schedulers and loaders take their keyword arguments as text with
   PyTorch's names, so C reads like Python and an unknown or misspelt name is an error. */
#define TN__MAX_OPTS 24
typedef struct tn__opts {
    const char *fn;                   /* the public function, for messages */
    int n;
    char key[TN__MAX_OPTS][32];
    char val[TN__MAX_OPTS][96];
    bool used[TN__MAX_OPTS];
} tn__opts;
static int tn__opts_parse(const char *fn, const char *text, tn__opts *o) {
    memset(o, 0, sizeof *o);
    o->fn = fn;
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        const char *k = p;
        while (*p && *p != '=' && *p != ',') p++;
        if (*p != '=') return TN__FAIL_INT("%s: option text \"%s\": expected name=value", fn, text);
        size_t kl = (size_t)(p - k);
        while (kl && k[kl - 1] == ' ') kl--;
        p++;
        while (*p == ' ') p++;
        const char *v = p;
        int depth = 0;
        char quote = 0;          /* commas inside quotes or brackets belong to the value */
        for (; *p && (depth || quote || *p != ','); p++) {
            if (quote) { if (*p == quote) quote = 0; }
            else if (*p == '\'' || *p == '"') quote = *p;
            else if (*p == '(' || *p == '[') depth++;
            else if (*p == ')' || *p == ']') depth--;
        }
        size_t vl = (size_t)(p - v);
        while (vl && v[vl - 1] == ' ') vl--;
        if (o->n == TN__MAX_OPTS || !kl || kl >= sizeof o->key[0] || vl >= sizeof o->val[0])
            return TN__FAIL_INT("%s: option text \"%s\" is malformed or too long", fn, text);
        for (int i = 0; i < o->n; i++)
            if (strlen(o->key[i]) == kl && !memcmp(o->key[i], k, kl)) return TN__FAIL_INT("%s: option '%s' given twice", fn, o->key[i]);
        memcpy(o->key[o->n], k, kl);
        memcpy(o->val[o->n], v, vl);
        o->n++;
    }
    return 0;
}
static int tn__opts_find(tn__opts *o, const char *key) {
    for (int i = 0; i < o->n; i++) if (!strcmp(o->key[i], key)) { o->used[i] = true; return i; }
    return -1;
}
/* Numbers: a value or a tuple "(a, b)" of up to max; a single value fills all max slots.
   Returns how many were given (0: absent or None, out untouched), or -1 with an error. */
static int tn__opts_num(tn__opts *o, const char *key, double *out, int max) {
    int i = tn__opts_find(o, key);
    if (i < 0 || !strcmp(o->val[i], "None")) return 0;
    const char *p = o->val[i];
    bool tuple = *p == '(' || *p == '[';
    if (tuple) p++;
    double tmp[8] = {0};
    int n = 0;
    for (;;) {
        while (*p == ' ') p++;
        if (tuple && (*p == ')' || *p == ']')) break;
        char *end;
        double x;
        if (!strncmp(p, "True", 4) || !strncmp(p, "true", 4)) { x = 1; end = (char *)p + 4; }
        else if (!strncmp(p, "False", 5) || !strncmp(p, "false", 5)) { x = 0; end = (char *)p + 5; }
        else if (!strncmp(p, "inf", 3)) { x = HUGE_VAL; end = (char *)p + 3; }
        else if (!strncmp(p, "-inf", 4)) { x = -HUGE_VAL; end = (char *)p + 4; }
        else x = strtod(p, &end);
        if (end == p || n == max || n == 8)
            return TN__FAIL_INT("%s: option %s=%s: expected %s%d number%s", o->fn, key, o->val[i], max > 1 ? "up to " : "", max, max > 1 ? "s" : "");
        tmp[n++] = x;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') { p++; continue; }
        if (tuple && (*p == ')' || *p == ']')) break;
        if (!tuple && !*p) break;
        return TN__FAIL_INT("%s: option %s=%s is not a number", o->fn, key, o->val[i]);
    }
    if (n == 0) return TN__FAIL_INT("%s: option %s=%s is empty", o->fn, key, o->val[i]);
    const int last = n >= 1 && n <= 8 ? n - 1 : 0;   /* n is 1..8 here; spelt out for -Warray-bounds */
    for (int k = 0; k < max; k++) out[k] = tmp[n == 1 ? 0 : k < n && k < 8 ? k : last];
    return n;
}
static int tn__opts_int(tn__opts *o, const char *key, int64_t *out, int max) {
    double v[8];
    int n = tn__opts_num(o, key, v, max);
    for (int k = 0; k < max && n > 0; k++) {
        if (v[k] != floor(v[k]) || fabs(v[k]) > 9e15) return TN__FAIL_INT("%s: option %s needs integers", o->fn, key);
        out[k] = (int64_t)v[k];
    }
    return n;
}
static int tn__opts_bool(tn__opts *o, const char *key, bool *out) {
    int i = tn__opts_find(o, key);
    if (i < 0) return 0;
    const char *v = o->val[i];
    if (!strcmp(v, "True") || !strcmp(v, "true") || !strcmp(v, "1")) *out = true;
    else if (!strcmp(v, "False") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "None")) *out = false;
    else return TN__FAIL_INT("%s: option %s=%s: expected True or False", o->fn, key, v);
    return 1;
}
/* A word among choices ("zeros|reflect|replicate|circular"), quotes optional; returns its
   index, or -2 when absent (out untouched), or -1 with an error. */
static int tn__opts_word(tn__opts *o, const char *key, const char *choices) {
    int i = tn__opts_find(o, key);
    if (i < 0) return -2;
    char w[96];
    const char *v = o->val[i];
    size_t l = strlen(v);
    if (l >= 2 && (v[0] == '\'' || v[0] == '"') && v[l - 1] == v[0]) { v++; l -= 2; }
    memcpy(w, v, l);
    w[l] = 0;
    int idx = 0;
    for (const char *c = choices; *c; idx++) {
        const char *e = strchr(c, '|');
        size_t cl = e ? (size_t)(e - c) : strlen(c);
        if (cl == l && !memcmp(c, w, l)) return idx;
        if (!e) break;
        c = e + 1;
    }
    return TN__FAIL_INT("%s: option %s='%s': expected one of %s", o->fn, key, w, choices);
}
/* Every option given must have been read: names are checked against the valid list. */
static int tn__opts_done(tn__opts *o, const char *valid) {
    for (int i = 0; i < o->n; i++)
        if (!o->used[i]) return TN__FAIL_INT("%s: unknown option '%s' (valid: %s)", o->fn, o->key[i], valid);
    return 0;
}

/* ---- modules: the base ---- */
struct tn__slot { char *name; tn_tensor *t; tn_module *m; bool persistent; };
static const char *const tn__slot_kinds[3] = {"parameter", "buffer", "child"};
static tn__slot **tn__slots(tn_module *m, int kind, int **n) {
    *n = kind == 0 ? &m->nparams : kind == 1 ? &m->nbuffers : &m->nchildren;
    return kind == 0 ? &m->params : kind == 1 ? &m->buffers : &m->children;
}
/* The slot called name (replacing its contents) or a new one; NULL after an error. */
static tn__slot *tn__slot_put(tn_module *m, int kind, const char *name) {
    int *n;
    tn__slot **v = tn__slots(m, kind, &n);
    for (int i = 0; i < *n; i++)
        if (!strcmp((*v)[i].name, name)) { tn_release((*v)[i].t); tn_module_free((*v)[i].m); (*v)[i].t = NULL; (*v)[i].m = NULL; return &(*v)[i]; }
    if (*n == m->cap[kind]) {
        int cap = m->cap[kind] ? 2 * m->cap[kind] : 4;
        tn__slot *s = (tn__slot *)TN_REALLOC(*v, (size_t)cap * sizeof *s);
        if (!s) return (tn__slot *)tn__error("tn_module: out of memory");
        *v = s;
        m->cap[kind] = cap;
    }
    tn__slot *s = &(*v)[*n];
    memset(s, 0, sizeof *s);
    if (!(s->name = tn__strdup(name))) return (tn__slot *)tn__error("tn_module: out of memory");
    (*n)++;
    return s;
}
static int tn__check_name(const char *fn, tn_module *m, const char *name, int kind) {
    if (!m || !name || !*name || strchr(name, '.'))
        return TN__FAIL_INT("%s: need a module and a name without '.' (got \"%s\")", fn, name ? name : "(null)");
    for (int k = 0; k < 3; k++) { /* one name, one kind (PyTorch: "attribute 'x' already exists") */
        int *n;
        tn__slot **v = tn__slots(m, k, &n);
        for (int i = 0; k != kind && i < *n; i++)
            if (!strcmp((*v)[i].name, name)) return TN__FAIL_INT("%s: \"%s\" is already a %s of %s", fn, name, tn__slot_kinds[k], m->type->name);
    }
    return 0;
}
TNDEF tn_module *tn_module_new(const tn_module_type *type, size_t size) {
    if (!type || !type->name || size < sizeof(tn_module)) return (tn_module *)tn__error("tn_module_new: need a type with a name and size >= sizeof(tn_module)");
    tn_module *m = (tn_module *)TN_MALLOC(size);
    if (!m) return (tn_module *)tn__error("tn_module_new: out of memory");
    memset(m, 0, size);
    m->type = type;
    m->training = true;
    return m;
}
TNDEF void tn_module_free(tn_module *m) {
    if (!m) return;
    if (m->type->destroy) m->type->destroy(m);
    for (int k = 2; k >= 0; k--) {
        int *n;
        tn__slot **v = tn__slots(m, k, &n);
        for (int i = *n - 1; i >= 0; i--) { tn_module_free((*v)[i].m); tn_release((*v)[i].t); TN_FREE((*v)[i].name); }
        TN_FREE(*v);
    }
    TN_FREE(m);
}
TNDEF tn_tensor *tn_module_register_parameter(tn_module *m, const char *name, tn_tensor *t) {
    if (!t) return NULL;
    if (tn__check_name("tn_module_register_parameter", m, name, 0)) return NULL;
    if (t->grad_fn) return (tn_tensor *)tn__error("tn_module_register_parameter: \"%s\" must be a leaf tensor (detach it first)", name);
    if (!tn_dtype_is_floating(t->dtype)) return (tn_tensor *)tn__error("tn_module_register_parameter: \"%s\" must be floating, got %s", name, tn_dtype_name(t->dtype));
    tn__slot *s = tn__slot_put(m, 0, name);
    if (!s) return NULL;
    s->t = tn_retain(t);
    t->requires_grad = true;
    return t;
}
TNDEF tn_tensor *tn_module_register_buffer(tn_module *m, const char *name, tn_tensor *t, bool persistent) {
    if (!t) return NULL;
    if (tn__check_name("tn_module_register_buffer", m, name, 1)) return NULL;
    tn__slot *s = tn__slot_put(m, 1, name);
    if (!s) return NULL;
    s->t = tn_retain(t);
    s->persistent = persistent;
    return t;
}
/* Whether m is root or inside the tree under root. */
static bool tn__module_in_tree(const tn_module *root, const tn_module *m) {
    if (root == m) return true;
    for (int i = 0; root && i < root->nchildren; i++) if (tn__module_in_tree(root->children[i].m, m)) return true;
    return false;
}
TNDEF tn_module *tn_module_add(tn_module *m, const char *name, tn_module *child) {
    if (!child) return NULL;
    /* a module the tree already holds is not taken over (nor freed): it would be owned twice,
       or would own its own parent */
    if (m && (tn__module_in_tree(child, m) || tn__module_in_tree(m, child)))
        return (tn_module *)tn__error("tn_module_add: %s \"%s\" is already in the tree of %s (a module has one parent; adding it again, or under its own descendant, would make a cycle)",
                                      child->type->name, name ? name : "(null)", m->type->name);
    if (tn__check_name("tn_module_add", m, name, 2)) { tn_module_free(child); return NULL; }
    tn__slot *s = tn__slot_put(m, 2, name);
    if (!s) { tn_module_free(child); return NULL; }
    s->m = child;
    return child;
}
TNDEF tn_tensor *tn_module_forward(tn_module *m, tn_tensor *x) {
    if (!m || !x) return NULL;
    if (!m->type->forward) return (tn_tensor *)tn__error("tn_module_forward: %s has no single-input forward", m->type->name);
    return m->type->forward(m, x);
}
TNDEF const char *tn_module_name(const tn_module *m) { return m ? m->type->name : NULL; }
TNDEF int tn_module_num_children(const tn_module *m) { return m ? m->nchildren : 0; }
TNDEF tn_module *tn_module_child_at(const tn_module *m, int i, const char **name) {
    if (!m || i < 0 || i >= m->nchildren) return NULL;
    if (name) *name = m->children[i].name;
    return m->children[i].m;
}
/* Follow "a.b.c": the module holding the last part, and where that part starts. */
static const tn_module *tn__module_walk(const tn_module *m, const char *name, const char **last) {
    for (const char *dot; m && (dot = strchr(name, '.')); name = dot + 1) {
        const tn_module *next = NULL;
        for (int i = 0; i < m->nchildren; i++)
            if (strlen(m->children[i].name) == (size_t)(dot - name) && !memcmp(m->children[i].name, name, (size_t)(dot - name))) next = m->children[i].m;
        m = next;
    }
    *last = name;
    return m;
}
TNDEF tn_tensor *tn_module_get(const tn_module *m, const char *name) {
    const char *last;
    if (!m || !name || !(m = tn__module_walk(m, name, &last))) return NULL;
    for (int i = 0; i < m->nparams; i++) if (!strcmp(m->params[i].name, last)) return m->params[i].t;
    for (int i = 0; i < m->nbuffers; i++) if (!strcmp(m->buffers[i].name, last)) return m->buffers[i].t;
    return NULL;
}
TNDEF tn_module *tn_module_child(const tn_module *m, const char *name) {
    const char *last;
    if (!m || !name || !(m = tn__module_walk(m, name, &last))) return NULL;
    for (int i = 0; i < m->nchildren; i++) if (!strcmp(m->children[i].name, last)) return m->children[i].m;
    return NULL;
}
/* Walk the tree in PyTorch's order (own tensors, then children), with dotted names. kind 0
   parameters, 1 buffers, 2 the state dict (parameters then persistent buffers per module). */
static int tn__collect(const tn_module *m, const char *prefix, int kind, tn_dict *out) {
    char key[512];
    for (int pass = 0; pass < 2; pass++) {
        if ((kind == 0 && pass == 1) || (kind == 1 && pass == 0)) continue;
        const tn__slot *v = pass == 0 ? m->params : m->buffers;
        int n = pass == 0 ? m->nparams : m->nbuffers;
        for (int i = 0; i < n; i++) {
            if (kind == 2 && pass == 1 && !v[i].persistent) continue;
            snprintf(key, sizeof key, "%s%s", prefix, v[i].name);
            tn_tensor *t = v[i].t;
            bool seen = false;    /* a tensor shared by two modules (tied weights) is listed once, as PyTorch */
            for (int j = 0; kind != 2 && j < out->n && !seen; j++) seen = out->values[j] == t;
            if (seen) continue;
            if (kind == 2) { /* detached, as state_dict(): same storage, no autograd */
                t = tn__view_of(v[i].t, v[i].t->shape, v[i].t->strides, v[i].t->ndim, v[i].t->offset);
                if (!t) return -1;
                t->is_view = false;
            }
            int rc = tn_dict_set(out, key, t);
            if (kind == 2) tn_release(t);
            if (rc) return -1;
        }
    }
    for (int i = 0; i < m->nchildren; i++) {
        snprintf(key, sizeof key, "%s%s.", prefix, m->children[i].name);
        if (tn__collect(m->children[i].m, key, kind, out)) return -1;
    }
    return 0;
}
static tn_dict *tn__collect_dict(const tn_module *m, int kind) {
    if (!m) return NULL;
    tn_dict *d = tn_dict_new();
    if (d && tn__collect(m, "", kind, d)) { tn_dict_free(d); d = NULL; }
    return d;
}
TNDEF tn_dict *tn_module_named_parameters(const tn_module *m) { return tn__collect_dict(m, 0); }
TNDEF tn_dict *tn_module_named_buffers(const tn_module *m) { return tn__collect_dict(m, 1); }
TNDEF tn_dict *tn_module_state_dict(const tn_module *m) { return tn__collect_dict(m, 2); }
TNDEF int tn_module_load_state_dict(tn_module *m, const tn_dict *sd, bool strict, tn_dict *missing, tn_dict *unexpected) {
    const char *fn = "tn_module_load_state_dict";
    if (!m || !sd) return TN__FAIL_INT("%s: need a module and a state dict", fn);
    tn_dict *own = tn_module_state_dict(m);
    if (!own) return -1;
    tn__sbuf miss, unex, size;
    memset(&miss, 0, sizeof miss); memset(&unex, 0, sizeof unex); memset(&size, 0, sizeof size);
    int nmiss = 0, nunex = 0, nsize = 0;
    for (int i = 0; i < own->n; i++) {
        tn_tensor *src = tn_dict_get(sd, own->keys[i]), *dst = own->values[i];
        if (!src) {
            if (missing) tn_dict_set(missing, own->keys[i], NULL);
            tn__sb_puts(&miss, nmiss++ ? ", \"" : "\""); tn__sb_puts(&miss, own->keys[i]); tn__sb_puts(&miss, "\"");
        } else if (src->ndim != dst->ndim || memcmp(src->shape, dst->shape, (size_t)src->ndim * sizeof(int64_t))) {
            char line[400];
            snprintf(line, sizeof line, "%ssize mismatch for %s: copying a param with shape %s from checkpoint, the shape in current model is %s.",
                     nsize++ ? " " : "", own->keys[i], TN__SHAPE(src), TN__SHAPE(dst));
            tn__sb_puts(&size, line);
        }
    }
    for (int i = 0; i < sd->n; i++)
        if (!tn_dict_contains(own, sd->keys[i])) {
            if (unexpected) tn_dict_set(unexpected, sd->keys[i], NULL);
            tn__sb_puts(&unex, nunex++ ? ", \"" : "\""); tn__sb_puts(&unex, sd->keys[i]); tn__sb_puts(&unex, "\"");
        }
    int rc = 0;
    if (nsize || (strict && (nmiss || nunex))) {
        rc = TN__FAIL_INT("%s: Error(s) in loading state_dict for %s:%s%s%s%s%s%s%s", fn, m->type->name,
                          strict && nmiss ? " Missing key(s) in state_dict: " : "", strict && nmiss ? miss.s : "", strict && nmiss ? "." : "",
                          strict && nunex ? " Unexpected key(s) in state_dict: " : "", strict && nunex ? unex.s : "", strict && nunex ? "." : "",
                          nsize ? " " : "");
        if (nsize) { /* append the size lines to the message */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s%s", tn_last_error(), size.s);
            tn__error("%s", msg);
        }
    }
    tn_no_grad_begin();
    for (int i = 0; i < own->n && rc == 0; i++) {
        tn_tensor *src = tn_dict_get(sd, own->keys[i]);
        if (src && tn_copy_(own->values[i], src)) rc = -1;
    }
    tn_no_grad_end();
    TN_FREE(miss.s); TN_FREE(unex.s); TN_FREE(size.s);
    tn_dict_free(own);
    return rc;
}
TNDEF void tn_module_train(tn_module *m, bool mode) {
    if (!m) return;
    m->training = mode;
    for (int i = 0; i < m->nchildren; i++) tn_module_train(m->children[i].m, mode);
}
TNDEF void tn_module_eval(tn_module *m) { tn_module_train(m, false); }
TNDEF void tn_module_zero_grad(tn_module *m) {
    if (!m) return;
    for (int i = 0; i < m->nparams; i++) tn_set_grad(m->params[i].t, NULL);
    for (int i = 0; i < m->nchildren; i++) tn_module_zero_grad(m->children[i].m);
}
TNDEF int64_t tn_module_num_parameters(const tn_module *m) {
    tn_dict *d = tn_module_named_parameters(m);   /* each tensor once, as sum(p.numel() for p in m.parameters()) */
    int64_t n = 0;
    for (int i = 0; i < tn_dict_len(d); i++) n += tn_numel(d->values[i]);
    tn_dict_free(d);
    return n;
}
TNDEF void tn_module_apply(tn_module *m, tn_module_fn fn, void *user) {
    if (!m || !fn) return;
    for (int i = 0; i < m->nchildren; i++) tn_module_apply(m->children[i].m, fn, user);
    fn(m, user);
}
/* PyTorch's Module.__repr__: extra_repr, then "(name): child" lines indented by two. */
static void tn__module_repr(const tn_module *m, tn__sbuf *b, int indent) {
    char extra[512] = "";
    if (m->type->extra_repr) m->type->extra_repr((tn_module *)m, extra, sizeof extra);
    tn__sb_puts(b, m->type->name);
    tn__sb_puts(b, "(");
    if (m->nchildren == 0) tn__sb_puts(b, extra);
    else {
        if (extra[0]) { tn__sb_puts(b, "\n"); tn__sb_pad(b, indent + 2); tn__sb_puts(b, extra); }
        for (int i = 0; i < m->nchildren; i++) {
            tn__sb_puts(b, "\n");
            tn__sb_pad(b, indent + 2);
            tn__sb_puts(b, "(");
            tn__sb_puts(b, m->children[i].name);
            tn__sb_puts(b, "): ");
            tn__module_repr(m->children[i].m, b, indent + 2);
        }
        tn__sb_puts(b, "\n");
        tn__sb_pad(b, indent);
    }
    tn__sb_puts(b, ")");
}
TNDEF char *tn_module_repr(const tn_module *m) {
    if (!m) return NULL;
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__module_repr(m, &b, 0);
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_module_repr: out of memory"); }
    return b.s;
}
/* Give t the data of src (module.to moves parameters in place, so optimizers keep them). */
static void tn__take_data(tn_tensor *t, tn_tensor *src) {
    TN__ATOMIC_ADD(&src->storage->refcount, 1);
    tn__storage_release(t->storage);
    t->storage = src->storage;
    t->dtype = src->dtype;
    t->device = src->device;
    t->ndim = src->ndim;
    memcpy(t->shape, src->shape, sizeof t->shape);
    memcpy(t->strides, src->strides, sizeof t->strides);
    t->offset = src->offset;
}
static int tn__module_convert(tn_module *m, tn_device device, int dtype) {
    for (int k = 0; k < 2; k++) {
        int *n;
        tn__slot **v = tn__slots(m, k, &n);
        for (int i = 0; i < *n; i++) {
            tn_tensor *t = (*v)[i].t, *c;
            if (dtype >= 0 && !tn_dtype_is_floating(t->dtype)) continue;
            tn_no_grad_begin();
            c = dtype >= 0 ? tn_to_dtype(t, (tn_dtype)dtype) : tn_to(t, device);
            if (c && t->grad) {
                tn_tensor *g = dtype >= 0 ? tn_to_dtype(t->grad, (tn_dtype)dtype) : tn_to(t->grad, device);
                if (g && g != t->grad) tn__take_data(t->grad, g);   /* g and c belong to the caller's scope */
            }
            tn_no_grad_end();
            if (!c) return -1;
            if (c != t) tn__take_data(t, c);
        }
    }
    for (int i = 0; i < m->nchildren; i++) if (tn__module_convert(m->children[i].m, device, dtype)) return -1;
    return 0;
}
TNDEF int tn_module_to(tn_module *m, tn_device device) {
    if (!m) return -1;
    tn_scope_begin();
    int rc = tn__module_convert(m, device, -1);
    tn_scope_end();
    return rc;
}
TNDEF int tn_module_to_dtype(tn_module *m, tn_dtype dtype) {
    if (!m) return -1;
    if (!tn_dtype_is_floating(dtype)) return TN__FAIL_INT("tn_module_to_dtype: nn.Module.to only accepts floating dtypes, got %s", tn_dtype_name(dtype));
    tn_scope_begin();
    int rc = tn__module_convert(m, TN_CPU, (int)dtype);
    tn_scope_end();
    return rc;
}

/* ---- nn.init ---- */
/* Copy src into t without autograd (the init functions and load_state_dict write so). */
static int tn__init_fill(tn_tensor *t, tn_tensor *src) {
    tn_no_grad_begin();
    int rc = src ? tn_copy_(t, src) : -1;
    tn_no_grad_end();
    return rc;
}
static int tn__fans(const char *fn, tn_tensor *t, double *fan_in, double *fan_out) {
    if (t->ndim < 2) return TN__FAIL_INT("%s: fan in and fan out can not be computed for tensor with fewer than 2 dimensions (got %s)", fn, TN__SHAPE(t));
    double rf = 1;
    for (int d = 2; d < t->ndim; d++) rf *= (double)t->shape[d];
    *fan_in = (double)t->shape[1] * rf;
    *fan_out = (double)t->shape[0] * rf;
    return 0;
}
TNDEF double tn_init_calculate_gain(const char *nl, double param) {
    if (!nl) nl = "leaky_relu";
    if (!strcmp(nl, "linear") || !strcmp(nl, "sigmoid") || !strncmp(nl, "conv", 4)) return 1;
    if (!strcmp(nl, "tanh")) return 5.0 / 3;
    if (!strcmp(nl, "relu")) return sqrt(2.0);
    if (!strcmp(nl, "leaky_relu")) { double s = param != param ? 0.01 : param; return sqrt(2.0 / (1 + s * s)); }
    if (!strcmp(nl, "selu")) return 3.0 / 4;
    tn__error("tn_init_calculate_gain: unsupported nonlinearity %s", nl);
    return NAN;
}
#define TN__INIT_BEGIN(fn) if (!t) return -1; if (!tn_dtype_is_floating(t->dtype)) return TN__FAIL_INT("%s: expected a floating tensor, got %s", fn, tn_dtype_name(t->dtype)); tn_scope_begin()
#define TN__INIT_END(src) do { int rc_ = tn__init_fill(t, src); tn_scope_end(); return rc_; } while (0)
TNDEF int tn_init_uniform_(tn_tensor *t, double a, double b) {
    TN__INIT_BEGIN("tn_init_uniform_");
    TN__INIT_END(tn_uniform(a, b, t->shape, t->ndim, t->dtype, NULL));
}
TNDEF int tn_init_normal_(tn_tensor *t, double mean, double std) {
    TN__INIT_BEGIN("tn_init_normal_");
    TN__INIT_END(tn_normal(mean, std, t->shape, t->ndim, t->dtype, NULL));
}
TNDEF int tn_init_constant_(tn_tensor *t, double value) {
    TN__INIT_BEGIN("tn_init_constant_");
    TN__INIT_END(tn_full(t->shape, t->ndim, value, t->dtype));
}
TNDEF int tn_init_zeros_(tn_tensor *t) { return tn_init_constant_(t, 0); }
TNDEF int tn_init_ones_(tn_tensor *t) { return tn_init_constant_(t, 1); }
TNDEF int tn_init_xavier_uniform_(tn_tensor *t, double gain) {
    double fi, fo;
    if (t && tn__fans("tn_init_xavier_uniform_", t, &fi, &fo)) return -1;
    double a = t ? sqrt(3.0) * gain * sqrt(2.0 / (fi + fo)) : 0;
    return tn_init_uniform_(t, -a, a);
}
TNDEF int tn_init_xavier_normal_(tn_tensor *t, double gain) {
    double fi, fo;
    if (t && tn__fans("tn_init_xavier_normal_", t, &fi, &fo)) return -1;
    return tn_init_normal_(t, 0, t ? gain * sqrt(2.0 / (fi + fo)) : 0);
}
static double tn__kaiming_std(const char *fn, tn_tensor *t, double a, const char *mode, const char *nl) {
    double fi, fo;
    if (tn__fans(fn, t, &fi, &fo)) return NAN;
    bool out = mode && !strcmp(mode, "fan_out");
    if (mode && !out && strcmp(mode, "fan_in")) { tn__error("%s: mode %s not supported, please use one of fan_in, fan_out", fn, mode); return NAN; }
    double gain = tn_init_calculate_gain(nl ? nl : "leaky_relu", a);
    double fan = out ? fo : fi;
    if (fan == 0) { tn__error("%s: initializing zero-element tensors is a no-op", fn); return NAN; }
    return gain / sqrt(fan);
}
TNDEF int tn_init_kaiming_uniform_(tn_tensor *t, double a, const char *mode, const char *nonlinearity) {
    if (!t) return -1;
    double std = tn__kaiming_std("tn_init_kaiming_uniform_", t, a, mode, nonlinearity);
    return std != std ? -1 : tn_init_uniform_(t, -sqrt(3.0) * std, sqrt(3.0) * std);
}
TNDEF int tn_init_kaiming_normal_(tn_tensor *t, double a, const char *mode, const char *nonlinearity) {
    if (!t) return -1;
    double std = tn__kaiming_std("tn_init_kaiming_normal_", t, a, mode, nonlinearity);
    return std != std ? -1 : tn_init_normal_(t, 0, std);
}
/* Q of the QR decomposition of a normal [rows, cols] draw (modified Gram-Schmidt on the
   shorter side, signs fixed by R's diagonal as PyTorch), times gain. */
TNDEF int tn_init_orthogonal_(tn_tensor *t, double gain) {
    const char *fn = "tn_init_orthogonal_";
    if (!t) return -1;
    if (t->ndim < 2) return TN__FAIL_INT("%s: only tensors with 2 or more dimensions are supported (got %s)", fn, TN__SHAPE(t));
    int64_t rows = t->shape[0], cols = tn_numel(t) / (rows ? rows : 1);
    if (rows == 0 || cols == 0) return 0;
    TN__INIT_BEGIN(fn);
    bool tr = rows < cols;
    int64_t m = tr ? cols : rows, n = tr ? rows : cols;        /* orthonormalise the n columns of [m, n] */
    tn_tensor *a = tn_contiguous(tn_normal(0, 1, TN_SHAPE(m, n), TN_F64, NULL));
    double *q = a ? (double *)tn_data_ptr(a) : NULL;
    for (int64_t j = 0; q && j < n; j++) {
        for (int64_t k = 0; k < j; k++) {
            double dot = 0;
            for (int64_t i = 0; i < m; i++) dot += q[i * n + k] * q[i * n + j];
            for (int64_t i = 0; i < m; i++) q[i * n + j] -= dot * q[i * n + k];
        }
        double nrm = 0;
        for (int64_t i = 0; i < m; i++) nrm += q[i * n + j] * q[i * n + j];
        nrm = sqrt(nrm);
        for (int64_t i = 0; i < m; i++) q[i * n + j] = nrm > 0 ? q[i * n + j] / nrm : 0;  /* R's diagonal is the norm, > 0 */
    }
    for (int64_t i = 0; q && i < m * n; i++) q[i] *= gain;
    tn_tensor *r = a ? tn_reshape(tr ? tn_t(a) : a, t->shape, t->ndim) : NULL;
    TN__INIT_END(r);
}
/* Inverse error function: Giles' single-precision start polished by two Newton steps. */
static double tn__erfinv(double y) {
    if (y <= -1) return -HUGE_VAL;
    if (y >= 1) return HUGE_VAL;
    double w = -log((1 - y) * (1 + y)), x;
    if (w < 5) {
        w -= 2.5;
        x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w;
        x = -0.00125372503 + x * w; x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w;
    } else {
        w = sqrt(w) - 3;
        x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w; x = 0.00573950773 + x * w;
        x = -0.0076224613 + x * w; x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w;
    }
    x *= y;
    for (int i = 0; i < 2; i++) x -= (erf(x) - y) / (1.12837916709551257390 * exp(-x * x));
    return x;
}
/* PyTorch's method: uniform in [cdf(a), cdf(b)], inverse CDF, clamp. */
TNDEF int tn_init_trunc_normal_(tn_tensor *t, double mean, double std, double a, double b) {
    const char *fn = "tn_init_trunc_normal_";
    if (!t) return -1;
    if (!(a < b)) return TN__FAIL_INT("%s: need a < b (got a=%g, b=%g)", fn, a, b);
    TN__INIT_BEGIN(fn);
    double l = 0.5 * (1 + erf((a - mean) / std / sqrt(2.0))), u = 0.5 * (1 + erf((b - mean) / std / sqrt(2.0)));
    tn_tensor *r = tn_contiguous(tn_uniform(2 * l - 1, 2 * u - 1, t->shape, t->ndim, TN_F64, NULL));
    double *p = r ? (double *)tn_data_ptr(r) : NULL;
    for (int64_t i = 0; p && i < tn_numel(r); i++) {
        double v = tn__erfinv(p[i]) * std * sqrt(2.0) + mean;
        p[i] = v < a ? a : v > b ? b : v;
    }
    TN__INIT_END(r);
}

/* ---- layers ---- */
/* Python's repr of a float ("0.1", "1.0", "1e-05"), for extra_repr. */
static const char *tn__pyfloat(double v, char *buf) {
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (v == v && !strpbrk(buf, ".eni")) strcat(buf, ".0");
    return buf;
}
/* "(3, 3)" or "(3,)" as Python prints a tuple of n ints. */
static const char *tn__pytuple(const int64_t *v, int n, char *buf) {
    int k = snprintf(buf, 64, "(");
    for (int i = 0; i < n; i++) k += snprintf(buf + k, (size_t)(64 - k), i ? ", %lld" : "%lld", (long long)v[i]);
    snprintf(buf + k, (size_t)(64 - k), n == 1 ? ",)" : ")");
    return buf;
}
static tn_tensor *tn__param(tn_module *m, const char *name, const int64_t *shape, int ndim) {
    tn_tensor *t = tn__new_checked("tn_nn", shape, ndim, TN_F32);
    tn_tensor *r = t ? tn_module_register_parameter(m, name, t) : NULL;
    tn_release(t);
    return r;
}
static tn_tensor *tn__buffer(tn_module *m, const char *name, const int64_t *shape, int ndim, tn_dtype dtype, double value) {
    tn_tensor *t = tn__filled("tn_nn", shape, ndim, value, dtype);
    tn_tensor *r = t ? tn_module_register_buffer(m, name, t, true) : NULL;
    tn_release(t);
    return r;
}
/* A constructor's options parsed, checked, done; on error m is freed and NULL returned. */
static tn_module *tn__module_or_free(tn_module *m, int failed) {
    if (failed) { tn_module_free(m); return NULL; }
    return m;
}

/* Linear, Bilinear */
typedef struct tn__linear { tn_module base; int64_t in, in2, out; } tn__linear;
static tn_tensor *tn__linear_fwd(tn_module *m, tn_tensor *x) { return TN__AS("Linear", tn_linear(x, tn_module_get(m, "weight"), tn_module_get(m, "bias"))); }
static void tn__linear_repr(tn_module *m, char *b, size_t n) {
    tn__linear *l = (tn__linear *)m;
    snprintf(b, n, "in_features=%lld, out_features=%lld, bias=%s", (long long)l->in, (long long)l->out, tn_module_get(m, "bias") ? "True" : "False");
}
static const tn_module_type tn__linear_type = {"Linear", tn__linear_fwd, NULL, tn__linear_repr};
TNDEF tn_module *tn_nn_linear(int64_t in, int64_t out, bool bias) {
    if (in < 0 || out < 0) return (tn_module *)tn__error("tn_nn_linear: in_features (%lld) and out_features (%lld) must be non-negative", (long long)in, (long long)out);
    tn__linear *l = (tn__linear *)tn_module_new(&tn__linear_type, sizeof(tn__linear));
    if (!l) return NULL;
    l->in = in; l->out = out;
    tn_tensor *w = tn__param(&l->base, "weight", TN_SHAPE(out, in)), *b = bias ? tn__param(&l->base, "bias", TN_SHAPE(out)) : NULL;
    double bound = in > 0 ? 1 / sqrt((double)in) : 0;   /* kaiming_uniform(a=sqrt(5)) and the bias rule: U(-1/sqrt(in), 1/sqrt(in)) */
    int failed = !w || (bias && !b) || tn_init_uniform_(w, -bound, bound) || (b && tn_init_uniform_(b, -bound, bound));
    return tn__module_or_free(&l->base, failed);
}
static void tn__bilinear_repr(tn_module *m, char *b, size_t n) {
    tn__linear *l = (tn__linear *)m;
    snprintf(b, n, "in1_features=%lld, in2_features=%lld, out_features=%lld, bias=%s", (long long)l->in, (long long)l->in2, (long long)l->out, tn_module_get(m, "bias") ? "True" : "False");
}
static const tn_module_type tn__bilinear_type = {"Bilinear", NULL, NULL, tn__bilinear_repr};
TNDEF tn_tensor *tn_nn_bilinear_forward(tn_module *m, tn_tensor *x1, tn_tensor *x2) {
    if (!m || m->type != &tn__bilinear_type) return (tn_tensor *)tn__error("tn_nn_bilinear_forward: need a Bilinear module");
    return TN__AS("Bilinear", tn_bilinear(x1, x2, tn_module_get(m, "weight"), tn_module_get(m, "bias")));
}
TNDEF tn_module *tn_nn_bilinear(int64_t in1, int64_t in2, int64_t out, bool bias) {
    if (in1 < 0 || in2 < 0 || out < 0) return (tn_module *)tn__error("tn_nn_bilinear: sizes must be non-negative");
    tn__linear *l = (tn__linear *)tn_module_new(&tn__bilinear_type, sizeof(tn__linear));
    if (!l) return NULL;
    l->in = in1; l->in2 = in2; l->out = out;
    tn_tensor *w = tn__param(&l->base, "weight", TN_SHAPE(out, in1, in2)), *b = bias ? tn__param(&l->base, "bias", TN_SHAPE(out)) : NULL;
    double bound = in1 > 0 ? 1 / sqrt((double)in1) : 0;
    int failed = !w || (bias && !b) || tn_init_uniform_(w, -bound, bound) || (b && tn_init_uniform_(b, -bound, bound));
    return tn__module_or_free(&l->base, failed);
}

/* Conv1d, Conv2d, ConvTranspose2d */
typedef struct tn__convm { tn_module base; int nsp; bool transposed, same, valid; int64_t in, out, k[2], s[2], p[2], d[2], op[2], groups; } tn__convm;
static tn_tensor *tn__conv_fwd(tn_module *m, tn_tensor *x) {
    tn__convm *c = (tn__convm *)m;
    tn_tensor *w = tn_module_get(m, "weight"), *b = tn_module_get(m, "bias");
    int64_t p[2] = {c->same ? TN_PAD_SAME : c->p[0], c->p[1]};
    return TN__AS(m->type->name, tn__conv("tn_conv", x, w, b, c->nsp, c->transposed, c->s, p, c->d, c->op, c->groups));
}
static void tn__conv_repr(tn_module *m, char *b, size_t n) {
    tn__convm *c = (tn__convm *)m;
    char t[64];
    int k = snprintf(b, n, "%lld, %lld, kernel_size=%s", (long long)c->in, (long long)c->out, tn__pytuple(c->k, c->nsp, t));
    k += snprintf(b + k, n - (size_t)k, ", stride=%s", tn__pytuple(c->s, c->nsp, t));
    if (c->same || c->valid) k += snprintf(b + k, n - (size_t)k, ", padding=%s", c->same ? "same" : "valid");
    else if (c->p[0] || c->p[c->nsp - 1]) k += snprintf(b + k, n - (size_t)k, ", padding=%s", tn__pytuple(c->p, c->nsp, t));
    if (c->d[0] != 1 || c->d[c->nsp - 1] != 1) k += snprintf(b + k, n - (size_t)k, ", dilation=%s", tn__pytuple(c->d, c->nsp, t));
    if (c->transposed && (c->op[0] || c->op[c->nsp - 1])) k += snprintf(b + k, n - (size_t)k, ", output_padding=%s", tn__pytuple(c->op, c->nsp, t));
    if (c->groups != 1) k += snprintf(b + k, n - (size_t)k, ", groups=%lld", (long long)c->groups);
    if (!tn_module_get(m, "bias")) snprintf(b + k, n - (size_t)k, ", bias=False");
}
static const tn_module_type tn__conv1d_type = {"Conv1d", tn__conv_fwd, NULL, tn__conv_repr};
static const tn_module_type tn__conv2d_type = {"Conv2d", tn__conv_fwd, NULL, tn__conv_repr};
static const tn_module_type tn__convt2d_type = {"ConvTranspose2d", tn__conv_fwd, NULL, tn__conv_repr};
/* A word value ("'same'") rather than numbers. */
static bool tn__opts_is_word(tn__opts *o, const char *key) {
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->key[i], key)) return o->val[i][0] == '\'' || o->val[i][0] == '"' || ((o->val[i][0] | 32) >= 'a' && (o->val[i][0] | 32) <= 'z');
    return false;
}
static tn_module *tn__conv_new(const char *fn, const tn_module_type *type, int nsp, bool transposed, int64_t in, int64_t out, int64_t ksize, const char *options) {
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    tn__convm *c = (tn__convm *)tn_module_new(type, sizeof(tn__convm));
    if (!c) return NULL;
    c->nsp = nsp; c->transposed = transposed; c->in = in; c->out = out; c->groups = 1;
    for (int i = 0; i < 2; i++) { c->k[i] = ksize; c->s[i] = 1; c->p[i] = 0; c->d[i] = 1; c->op[i] = 0; }
    bool bias = true;
    int failed = tn__opts_int(&o, "kernel_size", c->k, nsp) < 0 || tn__opts_int(&o, "stride", c->s, nsp) < 0 ||
                 tn__opts_int(&o, "dilation", c->d, nsp) < 0 || tn__opts_int(&o, "groups", &c->groups, 1) < 0 || tn__opts_bool(&o, "bias", &bias) < 0;
    if (!failed && tn__opts_is_word(&o, "padding")) {
        int w = tn__opts_word(&o, "padding", "same|valid");
        failed = w < 0;
        c->same = w == 0;
        c->valid = w == 1;
    } else if (!failed) failed = tn__opts_int(&o, "padding", c->p, nsp) < 0;
    if (!failed && transposed) failed = tn__opts_int(&o, "output_padding", c->op, nsp) < 0;
    int pm = failed ? -1 : tn__opts_word(&o, "padding_mode", "zeros|reflect|replicate|circular");
    if (pm > 0) failed = TN__FAIL_INT("%s: padding_mode '%s' is not supported (zeros only)", fn, pm == 1 ? "reflect" : pm == 2 ? "replicate" : "circular");
    failed = failed || pm == -1 || tn__opts_done(&o, transposed ? "kernel_size, stride, padding, output_padding, groups, bias, dilation, padding_mode"
                                                               : "kernel_size, stride, padding, dilation, groups, bias, padding_mode");
    if (!failed && (in <= 0 || out <= 0 || c->groups <= 0 || in % c->groups || out % c->groups))
        failed = TN__FAIL_INT("%s: in_channels (%lld) and out_channels (%lld) must be positive and divisible by groups (%lld)", fn, (long long)in, (long long)out, (long long)c->groups);
    for (int i = 0; !failed && i < nsp; i++)
        if (c->k[i] <= 0 || c->s[i] <= 0 || c->d[i] <= 0 || c->p[i] < 0)
            failed = TN__FAIL_INT("%s: kernel_size, stride and dilation must be positive and padding non-negative", fn);
    if (!failed && c->same && !transposed) for (int i = 0; i < nsp; i++) if (c->s[i] != 1) failed = TN__FAIL_INT("%s: padding='same' is not supported for strided convolutions", fn);
    if (!failed && c->same && transposed) failed = TN__FAIL_INT("%s: only 'zeros' padding mode and numeric padding are supported for ConvTranspose2d", fn);
    if (failed) { tn_module_free(&c->base); return NULL; }
    if (nsp == 1) { c->k[1] = c->k[0]; c->s[1] = c->s[0]; c->p[1] = c->p[0]; c->d[1] = c->d[0]; c->op[1] = c->op[0]; }
    int64_t shape[4] = {transposed ? in : out, transposed ? out / c->groups : in / c->groups, c->k[0], c->k[1]};
    tn_tensor *w = tn__param(&c->base, "weight", shape, 2 + nsp), *b = bias ? tn__param(&c->base, "bias", TN_SHAPE(out)) : NULL;
    double fan_in = 0;
    if (w) fan_in = (double)tn_numel(w) / (double)w->shape[0];   /* size(1) * receptive field, as _calculate_fan_in_and_fan_out */
    double bound = fan_in > 0 ? 1 / sqrt(fan_in) : 0;
    failed = !w || (bias && !b) || tn_init_uniform_(w, -bound, bound) || (b && tn_init_uniform_(b, -bound, bound));
    return tn__module_or_free(&c->base, failed);
}
TNDEF tn_module *tn_nn_conv1d(int64_t in, int64_t out, int64_t k, const char *options) { return tn__conv_new("tn_nn_conv1d", &tn__conv1d_type, 1, false, in, out, k, options); }
TNDEF tn_module *tn_nn_conv2d(int64_t in, int64_t out, int64_t k, const char *options) { return tn__conv_new("tn_nn_conv2d", &tn__conv2d_type, 2, false, in, out, k, options); }
TNDEF tn_module *tn_nn_conv_transpose2d(int64_t in, int64_t out, int64_t k, const char *options) {
    return tn__conv_new("tn_nn_conv_transpose2d", &tn__convt2d_type, 2, true, in, out, k, options);
}

/* Pooling modules */
typedef struct tn__poolm { tn_module base; int nsp, kind; bool ceil_mode, count_include_pad; int64_t k[2], s[2], p[2], d[2], divisor; } tn__poolm;
static tn_tensor *tn__pool_fwd(tn_module *m, tn_tensor *x) {
    tn__poolm *q = (tn__poolm *)m;
    const char *fn = m->type->name, *in = "tn_pool";   /* inner messages get the module's name */
    if (q->kind == 2) return TN__AS(fn, tn__adaptive_avg_pool(in, x, q->k[0], q->k[1]));
    if (q->kind == 3) return TN__AS(fn, tn__adaptive_max_pool(in, x, q->k[0], q->k[1], NULL));
    int64_t k[2] = {q->k[0], q->k[1]}, s[2] = {q->s[0], q->s[1]}, p[2] = {q->p[0], q->p[1]}, d[2] = {q->d[0], q->d[1]};
    if (q->kind == 0) return TN__AS(fn, tn__max_pool(in, x, q->nsp, k, s, p, d, q->ceil_mode, NULL));
    return TN__AS(fn, tn__avg_pool(in, x, q->nsp, k, s, p, q->ceil_mode, q->count_include_pad, q->divisor));
}
static void tn__pool_repr(tn_module *m, char *b, size_t n) {
    tn__poolm *q = (tn__poolm *)m;
    char t1[64], t2[64], t3[64];
    if (q->kind >= 2) { snprintf(b, n, "output_size=%s", q->k[0] == q->k[1] ? (snprintf(t1, 64, "%lld", (long long)q->k[0]), t1) : tn__pytuple(q->k, 2, t1)); return; }
    /* ints as PyTorch keeps them when given as ints; AvgPool1d stores _single() tuples */
    const bool tup1 = q->nsp == 1 && q->kind == 1;
#define TN__ONE(v, t) (tup1 ? tn__pytuple(v, 1, t) : (q->nsp == 1 || v[0] == v[1]) ? (snprintf(t, 64, "%lld", (long long)v[0]), t) : tn__pytuple(v, 2, t))
    int64_t s[2] = {q->s[0] ? q->s[0] : q->k[0], q->s[1] ? q->s[1] : q->k[1]};
    int k = snprintf(b, n, "kernel_size=%s, stride=%s, padding=%s", TN__ONE(q->k, t1), TN__ONE(s, t2), TN__ONE(q->p, t3));
    if (q->kind == 0) snprintf(b + k, n - (size_t)k, ", dilation=%s, ceil_mode=%s", TN__ONE(q->d, t1), q->ceil_mode ? "True" : "False");
#undef TN__ONE
}
static const tn_module_type tn__maxpool1d_type = {"MaxPool1d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__maxpool2d_type = {"MaxPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__avgpool1d_type = {"AvgPool1d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__avgpool2d_type = {"AvgPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__adaptive_avg_type = {"AdaptiveAvgPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static const tn_module_type tn__adaptive_max_type = {"AdaptiveMaxPool2d", tn__pool_fwd, NULL, tn__pool_repr};
static tn_module *tn__pool_new(const char *fn, const tn_module_type *type, int nsp, int kind, int64_t ksize, const char *options) {
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    tn__poolm *q = (tn__poolm *)tn_module_new(type, sizeof(tn__poolm));
    if (!q) return NULL;
    q->nsp = nsp; q->kind = kind; q->count_include_pad = true;
    for (int i = 0; i < 2; i++) { q->k[i] = ksize; q->s[i] = 0; q->p[i] = 0; q->d[i] = 1; }
    int failed = tn__opts_int(&o, "kernel_size", q->k, nsp) < 0 || tn__opts_int(&o, "stride", q->s, nsp) < 0 ||
                 tn__opts_int(&o, "padding", q->p, nsp) < 0 || tn__opts_bool(&o, "ceil_mode", &q->ceil_mode) < 0;
    if (!failed && kind == 0) {
        bool ri = false;
        failed = tn__opts_int(&o, "dilation", q->d, nsp) < 0 || tn__opts_bool(&o, "return_indices", &ri) < 0 ||
                 tn__opts_done(&o, "kernel_size, stride, padding, dilation, return_indices, ceil_mode");
        if (!failed && ri) failed = TN__FAIL_INT("%s: return_indices: call tn_max_pool%dd with an indices pointer instead", fn, nsp);
    } else if (!failed) {
        failed = tn__opts_bool(&o, "count_include_pad", &q->count_include_pad) < 0 || tn__opts_int(&o, "divisor_override", &q->divisor, 1) < 0 ||
                 tn__opts_done(&o, "kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override");
    }
    if (!failed && nsp == 1) { q->k[1] = q->k[0]; q->s[1] = q->s[0]; q->p[1] = q->p[0]; q->d[1] = q->d[0]; }
    int64_t g[10];
    if (!failed) failed = tn__pool_geometry(fn, nsp, q->k, q->s, q->p, q->d, g);
    return tn__module_or_free(&q->base, failed);
}
TNDEF tn_module *tn_nn_max_pool2d(int64_t k, const char *options) { return tn__pool_new("tn_nn_max_pool2d", &tn__maxpool2d_type, 2, 0, k, options); }
TNDEF tn_module *tn_nn_avg_pool2d(int64_t k, const char *options) { return tn__pool_new("tn_nn_avg_pool2d", &tn__avgpool2d_type, 2, 1, k, options); }
TNDEF tn_module *tn_nn_max_pool1d(int64_t k, const char *options) { return tn__pool_new("tn_nn_max_pool1d", &tn__maxpool1d_type, 1, 0, k, options); }
TNDEF tn_module *tn_nn_avg_pool1d(int64_t k, const char *options) { return tn__pool_new("tn_nn_avg_pool1d", &tn__avgpool1d_type, 1, 1, k, options); }
static tn_module *tn__adaptive_new(const tn_module_type *type, int kind, int64_t oh, int64_t ow) {
    if (oh <= 0 || ow <= 0) return (tn_module *)tn__error("tn_nn_%s: output size (%lld, %lld) must be positive", kind == 2 ? "adaptive_avg_pool2d" : "adaptive_max_pool2d", (long long)oh, (long long)ow);
    tn__poolm *q = (tn__poolm *)tn_module_new(type, sizeof(tn__poolm));
    if (q) { q->kind = kind; q->nsp = 2; q->k[0] = oh; q->k[1] = ow; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_adaptive_avg_pool2d(int64_t oh, int64_t ow) { return tn__adaptive_new(&tn__adaptive_avg_type, 2, oh, ow); }
TNDEF tn_module *tn_nn_adaptive_max_pool2d(int64_t oh, int64_t ow) { return tn__adaptive_new(&tn__adaptive_max_type, 3, oh, ow); }

/* BatchNorm1d/2d, LayerNorm, GroupNorm */
typedef struct tn__normm { tn_module base; int kind; int64_t nf, groups, shape[TN_MAX_DIMS]; int nshape; double eps, momentum; bool affine, track; } tn__normm;
static tn_tensor *tn__norm_fwd(tn_module *m, tn_tensor *x) {
    tn__normm *q = (tn__normm *)m;
    const char *fn = m->type->name;
    if (!x) return NULL;
    tn_tensor *w = tn_module_get(m, "weight"), *b = tn_module_get(m, "bias");
    if (q->kind == 2) return TN__AS(fn, tn_layer_norm(x, q->shape, q->nshape, w, b, q->eps));
    if (q->kind == 3) return TN__AS(fn, tn_group_norm(x, q->groups, w, b, q->eps));
    if (q->kind == 0 && x->ndim != 2 && x->ndim != 3) return (tn_tensor *)tn__error("%s: expected 2D or 3D input (got %dD input %s)", fn, x->ndim, TN__SHAPE(x));
    if (q->kind == 1 && x->ndim != 4) return (tn_tensor *)tn__error("%s: expected 4D input (got %dD input %s)", fn, x->ndim, TN__SHAPE(x));
    double factor = q->momentum == q->momentum ? q->momentum : 0;
    tn_tensor *nbt = tn_module_get(m, "num_batches_tracked");
    if (m->training && q->track && nbt) {
        tn_no_grad_begin();
        tn_scope_begin();
        tn_add_scalar_(nbt, 1);
        tn_scope_end();
        tn_no_grad_end();
        if (q->momentum != q->momentum) factor = 1.0 / tn_item(nbt);   /* cumulative moving average */

    }
    tn_tensor *rm = tn_module_get(m, "running_mean"), *rv = tn_module_get(m, "running_var");
    bool bn_training = m->training || (!rm && !rv);
    return TN__AS(fn, tn_batch_norm(x, !m->training || q->track ? rm : NULL, !m->training || q->track ? rv : NULL, w, b, bn_training, factor, q->eps));
}
static void tn__norm_repr(tn_module *m, char *b, size_t n) {
    tn__normm *q = (tn__normm *)m;
    char e[32], mo[32], t[64];
    if (q->kind == 2) snprintf(b, n, "%s, eps=%s, elementwise_affine=%s", tn__pytuple(q->shape, q->nshape, t), tn__pyfloat(q->eps, e), q->affine ? "True" : "False");
    else if (q->kind == 3) snprintf(b, n, "%lld, %lld, eps=%s, affine=%s", (long long)q->groups, (long long)q->nf, tn__pyfloat(q->eps, e), q->affine ? "True" : "False");
    else snprintf(b, n, "%lld, eps=%s, momentum=%s, affine=%s, track_running_stats=%s", (long long)q->nf, tn__pyfloat(q->eps, e),
                  q->momentum == q->momentum ? tn__pyfloat(q->momentum, mo) : "None", q->affine ? "True" : "False", q->track ? "True" : "False");
}
static const tn_module_type tn__bn1d_type = {"BatchNorm1d", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__bn2d_type = {"BatchNorm2d", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__ln_type = {"LayerNorm", tn__norm_fwd, NULL, tn__norm_repr};
static const tn_module_type tn__gn_type = {"GroupNorm", tn__norm_fwd, NULL, tn__norm_repr};
static tn_module *tn__norm_new(const char *fn, const tn_module_type *type, int kind, int64_t nf, int64_t groups, const int64_t *shape, int nshape, const char *options) {
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    tn__normm *q = (tn__normm *)tn_module_new(type, sizeof(tn__normm));
    if (!q) return NULL;
    q->kind = kind; q->nf = nf; q->groups = groups; q->eps = 1e-5; q->momentum = 0.1; q->affine = true; q->track = true;
    bool has_bias = true;
    int failed = tn__opts_num(&o, "eps", &q->eps, 1) < 0;
    if (kind <= 1) {
        for (int i = 0; i < o.n; i++) if (!strcmp(o.key[i], "momentum") && !strcmp(o.val[i], "None")) q->momentum = NAN;
        failed = failed || tn__opts_num(&o, "momentum", &q->momentum, 1) < 0 || tn__opts_bool(&o, "affine", &q->affine) < 0 ||
                 tn__opts_bool(&o, "track_running_stats", &q->track) < 0 || tn__opts_done(&o, "eps, momentum, affine, track_running_stats");
    } else if (kind == 2) {
        failed = failed || tn__opts_bool(&o, "elementwise_affine", &q->affine) < 0 || tn__opts_bool(&o, "bias", &has_bias) < 0 ||
                 tn__opts_done(&o, "eps, elementwise_affine, bias");
        if (!failed && (!shape || nshape < 1 || nshape > TN_MAX_DIMS)) failed = TN__FAIL_INT("%s: normalized_shape must have 1 to %d dims", fn, TN_MAX_DIMS);
        for (int i = 0; !failed && i < nshape; i++) q->shape[i] = shape[i];
        q->nshape = nshape;
    } else failed = failed || tn__opts_bool(&o, "affine", &q->affine) < 0 || tn__opts_done(&o, "eps, affine");
    if (!failed && kind == 3 && (groups <= 0 || nf % groups)) failed = TN__FAIL_INT("%s: num_channels (%lld) must be divisible by num_groups (%lld)", fn, (long long)nf, (long long)groups);
    if (!failed && kind != 2 && nf <= 0) failed = TN__FAIL_INT("%s: num_features must be positive, got %lld", fn, (long long)nf);
    const int64_t *ps = kind == 2 ? q->shape : &q->nf;
    int pn = kind == 2 ? q->nshape : 1;
    if (!failed && q->affine) {
        tn_tensor *w = tn__param(&q->base, "weight", ps, pn), *b = has_bias ? tn__param(&q->base, "bias", ps, pn) : NULL;
        failed = !w || (has_bias && !b) || tn_init_ones_(w) || (b && tn_init_zeros_(b));
    }
    if (!failed && kind <= 1 && q->track)
        failed = !tn__buffer(&q->base, "running_mean", &nf, 1, TN_F32, 0) || !tn__buffer(&q->base, "running_var", &nf, 1, TN_F32, 1) ||
                 !tn__buffer(&q->base, "num_batches_tracked", NULL, 0, TN_I64, 0);
    return tn__module_or_free(&q->base, failed);
}
TNDEF tn_module *tn_nn_batch_norm1d(int64_t nf, const char *options) { return tn__norm_new("tn_nn_batch_norm1d", &tn__bn1d_type, 0, nf, 0, NULL, 0, options); }
TNDEF tn_module *tn_nn_batch_norm2d(int64_t nf, const char *options) { return tn__norm_new("tn_nn_batch_norm2d", &tn__bn2d_type, 1, nf, 0, NULL, 0, options); }
TNDEF tn_module *tn_nn_layer_norm(const int64_t *shape, int n, const char *options) { return tn__norm_new("tn_nn_layer_norm", &tn__ln_type, 2, 0, 0, shape, n, options); }
TNDEF tn_module *tn_nn_group_norm(int64_t groups, int64_t channels, const char *options) {
    return tn__norm_new("tn_nn_group_norm", &tn__gn_type, 3, channels, groups, NULL, 0, options);
}

/* Dropout, Embedding, Flatten, Unflatten, Identity */
typedef struct tn__miscm { tn_module base; double p; int64_t a, b, sizes[TN_MAX_DIMS]; int n; bool padded; } tn__miscm;
static tn_tensor *tn__dropout_fwd(tn_module *m, tn_tensor *x) {
    tn__miscm *q = (tn__miscm *)m;
    return TN__AS(m->type->name, tn__dropout("tn_dropout", x, q->p, m->training, q->n == 2));

}
static void tn__dropout_repr(tn_module *m, char *b, size_t n) { char t[32]; snprintf(b, n, "p=%s, inplace=False", tn__pyfloat(((tn__miscm *)m)->p, t)); }
static const tn_module_type tn__dropout_type = {"Dropout", tn__dropout_fwd, NULL, tn__dropout_repr};
static const tn_module_type tn__dropout2d_type = {"Dropout2d", tn__dropout_fwd, NULL, tn__dropout_repr};
static tn_module *tn__dropout_new(const tn_module_type *type, double p, int kind) {
    if (!(p >= 0 && p <= 1)) return (tn_module *)tn__error("tn_nn_%s: dropout probability has to be between 0 and 1, but got %g", kind == 2 ? "dropout2d" : "dropout", p);
    tn__miscm *q = (tn__miscm *)tn_module_new(type, sizeof(tn__miscm));
    if (q) { q->p = p; q->n = kind; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_dropout(double p) { return tn__dropout_new(&tn__dropout_type, p, 1); }
TNDEF tn_module *tn_nn_dropout2d(double p) { return tn__dropout_new(&tn__dropout2d_type, p, 2); }
static tn_tensor *tn__embedding_fwd(tn_module *m, tn_tensor *x) {
    tn__miscm *q = (tn__miscm *)m;
    tn_tensor *w = tn_module_get(m, "weight");
    return TN__AS("Embedding", q->padded ? tn_embedding_padded(x, w, q->p > 0 ? (int64_t)q->p : 0) : tn_embedding(x, w));
}
static void tn__embedding_repr(tn_module *m, char *b, size_t n) {
    tn__miscm *q = (tn__miscm *)m;
    int k = snprintf(b, n, "%lld, %lld", (long long)q->a, (long long)q->b);
    if (q->padded) snprintf(b + k, n - (size_t)k, ", padding_idx=%lld", (long long)q->p);
}
static const tn_module_type tn__embedding_type = {"Embedding", tn__embedding_fwd, NULL, tn__embedding_repr};
TNDEF tn_module *tn_nn_embedding(int64_t num, int64_t dim, const char *options) {
    const char *fn = "tn_nn_embedding";
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    int64_t pad = 0;
    int given = tn__opts_int(&o, "padding_idx", &pad, 1);
    if (given < 0 || tn__opts_done(&o, "padding_idx")) return NULL;
    if (num <= 0 || dim <= 0) return (tn_module *)tn__error("%s: num_embeddings (%lld) and embedding_dim (%lld) must be positive", fn, (long long)num, (long long)dim);
    if (given && (pad < -num || pad >= num)) return (tn_module *)tn__error("%s: padding_idx must be within num_embeddings (%lld), got %lld", fn, (long long)num, (long long)pad);
    tn__miscm *q = (tn__miscm *)tn_module_new(&tn__embedding_type, sizeof(tn__miscm));
    if (!q) return NULL;
    q->a = num; q->b = dim; q->padded = given > 0; q->p = (double)(pad < 0 ? pad + num : pad);
    tn_tensor *w = tn__param(&q->base, "weight", TN_SHAPE(num, dim));
    int failed = !w || tn_init_normal_(w, 0, 1);
    if (!failed && q->padded) {
        tn_scope_begin();
        failed = tn__init_fill(tn_select(tn_detach(w), 0, (int64_t)q->p), tn_zeros(TN_SHAPE(dim), TN_F32));
        tn_scope_end();
    }
    return tn__module_or_free(&q->base, failed);
}
static tn_tensor *tn__flatten_fwd(tn_module *m, tn_tensor *x) {
    tn__miscm *q = (tn__miscm *)m;
    if (q->n) return TN__AS("Unflatten", tn_unflatten(x, q->a, q->sizes, q->n));
    return TN__AS("Flatten", tn_flatten(x, q->a, q->b));
}
static void tn__flatten_repr(tn_module *m, char *b, size_t n) {
    tn__miscm *q = (tn__miscm *)m;
    char t[64];
    if (q->n) snprintf(b, n, "dim=%lld, unflattened_size=%s", (long long)q->a, tn__pytuple(q->sizes, q->n, t));
    else snprintf(b, n, "start_dim=%lld, end_dim=%lld", (long long)q->a, (long long)q->b);
}
static const tn_module_type tn__flatten_type = {"Flatten", tn__flatten_fwd, NULL, tn__flatten_repr};
static const tn_module_type tn__unflatten_type = {"Unflatten", tn__flatten_fwd, NULL, tn__flatten_repr};
TNDEF tn_module *tn_nn_flatten(int64_t start_dim, int64_t end_dim) {
    tn__miscm *q = (tn__miscm *)tn_module_new(&tn__flatten_type, sizeof(tn__miscm));
    if (q) { q->a = start_dim; q->b = end_dim; }
    return q ? &q->base : NULL;
}
TNDEF tn_module *tn_nn_unflatten(int64_t dim, const int64_t *sizes, int n) {
    if (!sizes || n < 1 || n > TN_MAX_DIMS) return (tn_module *)tn__error("tn_nn_unflatten: need 1 to %d sizes", TN_MAX_DIMS);
    tn__miscm *q = (tn__miscm *)tn_module_new(&tn__unflatten_type, sizeof(tn__miscm));
    if (q) { q->a = dim; q->n = n; memcpy(q->sizes, sizes, (size_t)n * sizeof(int64_t)); }
    return q ? &q->base : NULL;
}
static tn_tensor *tn__identity_fwd(tn_module *m, tn_tensor *x) { (void)m; return tn__own(tn_retain(x)); }
static const tn_module_type tn__identity_type = {"Identity", tn__identity_fwd, NULL, NULL};
TNDEF tn_module *tn_nn_identity(void) { return tn_module_new(&tn__identity_type, sizeof(tn_module)); }

/* Activations: one module type per PyTorch class, one forward over a table. */
typedef struct tn__actm { tn_module base; int kind; double p[2]; int64_t dim; char repr[64]; } tn__actm;
static const char *const tn__act_names[] = {"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Softplus",
                                             "Hardtanh", "Hardswish", "Hardsigmoid", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"};
#define TN__NUM_ACTS 17
static tn_tensor *tn__act_apply(tn__actm *a, tn_tensor *x) {
    tn_tensor *y;
    switch (a->kind) {
    case 0: y = tn_relu(x); break;
    case 1: y = tn_relu6(x); break;
    case 2: y = tn_leaky_relu(x, a->p[0]); break;
    case 3: y = tn_elu(x, a->p[0]); break;
    case 4: y = tn_selu(x); break;
    case 5: y = tn_celu(x, a->p[0]); break;
    case 6: y = tn_gelu(x, a->p[0] != 0); break;
    case 7: y = tn_silu(x); break;
    case 8: y = tn_mish(x); break;
    case 9: y = tn_softplus(x, a->p[0], a->p[1]); break;
    case 10: y = tn_hardtanh(x, a->p[0], a->p[1]); break;
    case 11: y = tn_hardswish(x); break;
    case 12: y = tn_hardsigmoid(x); break;
    case 13: y = tn_tanh(x); break;
    case 14: y = tn_sigmoid(x); break;
    case 15: y = tn_softmax(x, a->dim); break;
    default: y = tn_log_softmax(x, a->dim); break;
    }
    return y;
}
static tn_tensor *tn__act_fwd(tn_module *m, tn_tensor *x) { return TN__AS(m->type->name, tn__act_apply((tn__actm *)m, x)); }
static void tn__act_repr(tn_module *m, char *b, size_t n) { snprintf(b, n, "%s", ((tn__actm *)m)->repr); }
#define TN__ACT_TYPE(name) {name, tn__act_fwd, NULL, tn__act_repr}
static const tn_module_type tn__act_types[TN__NUM_ACTS] = {
    TN__ACT_TYPE("ReLU"), TN__ACT_TYPE("ReLU6"), TN__ACT_TYPE("LeakyReLU"), TN__ACT_TYPE("ELU"),
    TN__ACT_TYPE("SELU"), TN__ACT_TYPE("CELU"), TN__ACT_TYPE("GELU"), TN__ACT_TYPE("SiLU"),
    TN__ACT_TYPE("Mish"), TN__ACT_TYPE("Softplus"), TN__ACT_TYPE("Hardtanh"), TN__ACT_TYPE("Hardswish"),
    TN__ACT_TYPE("Hardsigmoid"), TN__ACT_TYPE("Tanh"), TN__ACT_TYPE("Sigmoid"), TN__ACT_TYPE("Softmax"),
    TN__ACT_TYPE("LogSoftmax")};
TNDEF tn_module *tn_nn_activation(const char *name, const char *options) {
    const char *fn = "tn_nn_activation";
    int kind = -1;
    for (int i = 0; name && i < TN__NUM_ACTS; i++) if (!strcmp(name, tn__act_names[i])) kind = i;
    if (kind < 0) return (tn_module *)tn__error("%s: unknown activation \"%s\" (ReLU, ReLU6, LeakyReLU, ELU, SELU, CELU, GELU, SiLU, Mish, Softplus, Hardtanh, Hardswish, Hardsigmoid, Tanh, Sigmoid, Softmax, LogSoftmax)", fn, name ? name : "(null)");
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    double p[2] = {0, 0};
    int64_t dim = 1;
    char a[32], c[32];
    int failed = 0;
    bool inplace = false;
    failed = tn__opts_bool(&o, "inplace", &inplace) < 0;
    tn__actm *m = (tn__actm *)tn_module_new(&tn__act_types[kind], sizeof(tn__actm));
    if (!m) return NULL;
    switch (kind) {
    case 2: p[0] = 0.01; failed = failed || tn__opts_num(&o, "negative_slope", p, 1) < 0 || tn__opts_done(&o, "negative_slope, inplace");
            snprintf(m->repr, sizeof m->repr, "negative_slope=%s", tn__pyfloat(p[0], a)); break;
    case 3: case 5: p[0] = 1; failed = failed || tn__opts_num(&o, "alpha", p, 1) < 0 || tn__opts_done(&o, "alpha, inplace");
            snprintf(m->repr, sizeof m->repr, "alpha=%s", tn__pyfloat(p[0], a)); break;
    case 6: { int w = tn__opts_word(&o, "approximate", "none|tanh"); failed = failed || w == -1 || tn__opts_done(&o, "approximate");
            p[0] = w == 1; snprintf(m->repr, sizeof m->repr, "approximate='%s'", w == 1 ? "tanh" : "none"); break; }
    case 9: p[0] = 1; p[1] = 20; failed = failed || tn__opts_num(&o, "beta", p, 1) < 0 || tn__opts_num(&o, "threshold", p + 1, 1) < 0 || tn__opts_done(&o, "beta, threshold");
            snprintf(m->repr, sizeof m->repr, "beta=%g, threshold=%g", p[0], p[1]); break;
    case 10: p[0] = -1; p[1] = 1; failed = failed || tn__opts_num(&o, "min_val", p, 1) < 0 || tn__opts_num(&o, "max_val", p + 1, 1) < 0 || tn__opts_done(&o, "min_val, max_val, inplace");
            snprintf(m->repr, sizeof m->repr, "min_val=%s, max_val=%s", tn__pyfloat(p[0], a), tn__pyfloat(p[1], c)); break;
    case 15: case 16: failed = failed || tn__opts_int(&o, "dim", &dim, 1) < 0 || tn__opts_done(&o, "dim");
            snprintf(m->repr, sizeof m->repr, "dim=%lld", (long long)dim); break;
    default: failed = failed || tn__opts_done(&o, "inplace"); break;
    }
    m->kind = kind; m->p[0] = p[0]; m->p[1] = p[1]; m->dim = dim;
    return tn__module_or_free(&m->base, failed);
}
TNDEF tn_module *tn_nn_relu(void) { return tn_nn_activation("ReLU", NULL); }
TNDEF tn_module *tn_nn_tanh(void) { return tn_nn_activation("Tanh", NULL); }
TNDEF tn_module *tn_nn_sigmoid(void) { return tn_nn_activation("Sigmoid", NULL); }
TNDEF tn_module *tn_nn_gelu(void) { return tn_nn_activation("GELU", NULL); }

/* Sequential, ModuleList, ModuleDict */
/* Each layer in a scope of its own, and each intermediate released as soon as the next layer
   has run (as Python drops them): what autograd saved stays, the rest goes back to the
   allocator at once, so the forward's peak is not every layer's output at the same time. */
static tn_tensor *tn__sequential_fwd(tn_module *m, tn_tensor *x) {
    tn_tensor *h = tn_retain(x);
    for (int i = 0; h && i < m->nchildren; i++) {
        tn_scope_begin();
        tn_tensor *y = tn_retain(tn_module_forward(m->children[i].m, h));
        tn_scope_end();
        tn_release(h);
        h = y;
    }
    return tn__own(h);
}
static const tn_module_type tn__sequential_type = {"Sequential", tn__sequential_fwd, NULL, NULL};
static const tn_module_type tn__module_list_type = {"ModuleList", NULL, NULL, NULL};
static const tn_module_type tn__module_dict_type = {"ModuleDict", NULL, NULL, NULL};
TNDEF tn_module *tn_nn_sequential_n(tn_module *const *mods, int n) {
    bool bad = n < 0 || (n > 0 && !mods);
    for (int i = 0; !bad && i < n; i++) bad = !mods[i];
    tn_module *s = bad ? NULL : tn_module_new(&tn__sequential_type, sizeof(tn_module));
    if (!s) { /* a layer that failed to build: free the others, keep its message */
        for (int i = 0; mods && i < n; i++) tn_module_free(mods[i]);
        if (bad && !tn_last_error()[0]) tn__error("tn_nn_sequential: a module is NULL");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        if (!tn_module_add(s, name, mods[i])) {
            for (int j = i + 1; j < n; j++) tn_module_free(mods[j]);
            tn_module_free(s);
            return NULL;
        }
    }
    return s;
}
TNDEF tn_module *tn_nn_sequential_append(tn_module *seq, tn_module *m) {
    if (!seq || !m) { tn_module_free(m); return NULL; }
    char name[16];
    snprintf(name, sizeof name, "%d", seq->nchildren);
    return tn_module_add(seq, name, m);
}
TNDEF tn_module *tn_nn_module_list(void) { return tn_module_new(&tn__module_list_type, sizeof(tn_module)); }
TNDEF tn_module *tn_nn_module_dict(void) { return tn_module_new(&tn__module_dict_type, sizeof(tn_module)); }

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
    if (x && !h) h = tn_to(tn_zeros(TN_SHAPE(x->shape[0], H), x->dtype), x->device);
    if (x && lstm && !c) c = tn_to(tn_zeros(TN_SHAPE(x->shape[0], H), x->dtype), x->device);
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
static tn_module *tn__rnn_new(const char *fn, const tn_module_type *type, int mode, bool cell, int64_t in, int64_t hidden, const char *options) {
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    bool bias = true, batch_first = false, bidirectional = false;
    int64_t layers = 1, proj = 0;
    double dropout = 0;
    int failed = tn__opts_bool(&o, "bias", &bias) < 0, proj_given = 0;
    if (mode == TN__RNN_TANH) {
        int w = tn__opts_word(&o, "nonlinearity", "tanh|relu");
        failed = failed || w == -1;
        if (w == 1) mode = TN__RNN_RELU;
    }
    if (!cell) {
        failed = failed || tn__opts_int(&o, "num_layers", &layers, 1) < 0 || tn__opts_bool(&o, "batch_first", &batch_first) < 0 ||
                 tn__opts_num(&o, "dropout", &dropout, 1) < 0 || tn__opts_bool(&o, "bidirectional", &bidirectional) < 0 ||
                 (proj_given = tn__opts_int(&o, "proj_size", &proj, 1)) < 0;
    }
    if (!failed)
        failed = tn__opts_done(&o, cell ? (mode == TN__RNN_LSTM || mode == TN__RNN_GRU ? "bias" : "bias, nonlinearity")
                                        : mode == TN__RNN_LSTM ? "num_layers, bias, batch_first, dropout, bidirectional, proj_size"
                                        : mode == TN__RNN_GRU ? "num_layers, bias, batch_first, dropout, bidirectional"
                                                              : "num_layers, nonlinearity, bias, batch_first, dropout, bidirectional");
    if (failed) return NULL;
    if (proj_given && mode != TN__RNN_LSTM) return (tn_module *)tn__error("%s: proj_size argument is only supported for LSTM, not RNN or GRU", fn);
    if (in < 0) return (tn_module *)tn__error("%s: input_size must be non-negative, got %lld", fn, (long long)in);
    if (hidden <= 0) return (tn_module *)tn__error("%s: hidden_size must be greater than zero, got %lld", fn, (long long)hidden);
    if (layers <= 0) return (tn_module *)tn__error("%s: num_layers must be greater than zero, got %lld", fn, (long long)layers);
    if (!(dropout >= 0 && dropout <= 1))
        return (tn_module *)tn__error("%s: dropout should be a number in range [0, 1] representing the probability of an element being zeroed, got %g", fn, dropout);
    if (proj < 0) return (tn_module *)tn__error("%s: proj_size should be a positive integer or zero to disable projections, got %lld", fn, (long long)proj);
    if (proj >= hidden) return (tn_module *)tn__error("%s: proj_size has to be smaller than hidden_size (got proj_size=%lld, hidden_size=%lld)", fn, (long long)proj, (long long)hidden);
    tn__rnnm *r = (tn__rnnm *)tn_module_new(type, sizeof(tn__rnnm));
    if (!r) return NULL;
    r->mode = mode; r->cell = cell; r->bias = bias; r->batch_first = batch_first; r->bidirectional = bidirectional;
    r->in = in; r->hidden = hidden; r->proj = proj; r->layers = layers; r->dropout = dropout;
    const int64_t G = tn__rnn_gates[mode] * hidden, real = proj ? proj : hidden;
    const int D = bidirectional ? 2 : 1;
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
    for (int i = 0; !failed && i < r->base.nparams; i++) failed = tn_init_uniform_(r->base.params[i].t, -bound, bound);
    return tn__module_or_free(&r->base, failed);
}
TNDEF tn_module *tn_nn_rnn(int64_t in, int64_t hidden, const char *options) { return tn__rnn_new("tn_nn_rnn", &tn__rnn_type, TN__RNN_TANH, false, in, hidden, options); }
TNDEF tn_module *tn_nn_lstm(int64_t in, int64_t hidden, const char *options) { return tn__rnn_new("tn_nn_lstm", &tn__lstm_type, TN__RNN_LSTM, false, in, hidden, options); }
TNDEF tn_module *tn_nn_gru(int64_t in, int64_t hidden, const char *options) { return tn__rnn_new("tn_nn_gru", &tn__gru_type, TN__RNN_GRU, false, in, hidden, options); }
TNDEF tn_module *tn_nn_rnn_cell(int64_t in, int64_t hidden, const char *options) { return tn__rnn_new("tn_nn_rnn_cell", &tn__rnn_cell_type, TN__RNN_TANH, true, in, hidden, options); }
TNDEF tn_module *tn_nn_lstm_cell(int64_t in, int64_t hidden, const char *options) { return tn__rnn_new("tn_nn_lstm_cell", &tn__lstm_cell_type, TN__RNN_LSTM, true, in, hidden, options); }
TNDEF tn_module *tn_nn_gru_cell(int64_t in, int64_t hidden, const char *options) { return tn__rnn_new("tn_nn_gru_cell", &tn__gru_cell_type, TN__RNN_GRU, true, in, hidden, options); }

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
    if (x && !h0) h0 = tn_to(tn_zeros(TN_SHAPE(D * nl, N, Hout), x->dtype), x->device);
    if (x && lstm && !c0) c0 = tn_to(tn_zeros(TN_SHAPE(D * nl, N, r->hidden), x->dtype), x->device);
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
            tn_tensor *gi = tn_linear(in, tn__rnn_param(m, "weight_ih", sfx), tn__rnn_param(m, "bias_ih", sfx));   /* [L, N, G*H] */
            tn_tensor *h = tn_select(h0, 0, l * D + d), *c = lstm ? tn_select(c0, 0, l * D + d) : NULL;
            tn__unbind_steps(gi, 0, L, gis);
            for (int64_t s = 0; s < L && h; s++) {
                const int64_t t = d ? L - 1 - s : s;   /* the reverse direction reads the sequence backwards */
                h = tn__rnn_step(mode, gis[t], h, &c, w_hh, b_hh, w_hr);
                steps[t] = h;
            }
            hn[l * D + d] = h;
            cn[l * D + d] = c;
            ok = h && (!lstm || c) && (dir[d] = tn_stack(steps, (int)L, 0)) != NULL;
        }
        y = !ok ? NULL : D == 2 ? tn_cat(dir, 2, 2) : dir[0];
        if (y && l < nl - 1 && r->dropout > 0 && m->training) y = tn_dropout(y, r->dropout, true);
        ok = (in = y) != NULL;
    }
    tn_tensor *hN = ok ? tn_stack(hn, (int)(D * nl), 0) : NULL, *cN = ok && lstm ? tn_stack(cn, (int)(D * nl), 0) : NULL;
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
            char w[64];
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
    int failed;
    if (kdim == E && vdim == E) {
        tn_tensor *w = tn__param(m, "in_proj_weight", TN_SHAPE(3 * E, E));
        failed = !w || tn_init_xavier_uniform_(w, 1);
    } else { /* separate projections, as PyTorch when kdim or vdim differ */
        tn_tensor *wq = tn__param(m, "q_proj_weight", TN_SHAPE(E, E)), *wk = wq ? tn__param(m, "k_proj_weight", TN_SHAPE(E, kdim)) : NULL;
        tn_tensor *wv = wk ? tn__param(m, "v_proj_weight", TN_SHAPE(E, vdim)) : NULL;
        failed = !wv || tn_init_xavier_uniform_(wq, 1) || tn_init_xavier_uniform_(wk, 1) || tn_init_xavier_uniform_(wv, 1);
    }
    if (!failed && bias) {
        tn_tensor *b = tn__param(m, "in_proj_bias", TN_SHAPE(3 * E));
        failed = !b || tn_init_zeros_(b);
    }
    if (!failed && add_bias_kv) {
        tn_tensor *bk = tn__param(m, "bias_k", TN_SHAPE(1, 1, E)), *bv = bk ? tn__param(m, "bias_v", TN_SHAPE(1, 1, E)) : NULL;
        failed = !bv || tn_init_xavier_normal_(bk, 1) || tn_init_xavier_normal_(bv, 1);
    }
    if (!failed) {
        tn_module *out = tn_module_add(m, "out_proj", tn_nn_linear(E, E, bias));
        if (out) out->type = &tn__ndq_linear_type;
        failed = !out || (bias && tn_init_zeros_(tn_module_get(out, "bias")));
    }
    return tn__module_or_free(m, failed);
}
TNDEF tn_module *tn_nn_multihead_attention(int64_t E, int64_t heads, const char *options) {
    const char *fn = "tn_nn_multihead_attention";
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    double dropout = 0;
    bool bias = true, bkv = false, zero = false, bf = false;
    int64_t kdim = E, vdim = E;
    if (tn__opts_num(&o, "dropout", &dropout, 1) < 0 || tn__opts_bool(&o, "bias", &bias) < 0 || tn__opts_bool(&o, "add_bias_kv", &bkv) < 0 ||
        tn__opts_bool(&o, "add_zero_attn", &zero) < 0 || tn__opts_int(&o, "kdim", &kdim, 1) < 0 || tn__opts_int(&o, "vdim", &vdim, 1) < 0 ||
        tn__opts_bool(&o, "batch_first", &bf) < 0 || tn__opts_done(&o, "dropout, bias, add_bias_kv, add_zero_attn, kdim, vdim, batch_first"))
        return NULL;
    return tn__mha_new(fn, E, heads, dropout, bias, bkv, zero, kdim, vdim, bf);
}
/* A bool mask (True = masked out) as an additive float mask: -inf where True, else 0. */
static tn_tensor *tn__mask_to_float(tn_tensor *mask, tn_dtype dtype) {
    if (!mask || mask->dtype != TN_BOOL) return mask;
    return tn_masked_fill(tn_to(tn_zeros(mask->shape, mask->ndim, dtype), mask->device), mask, -INFINITY);
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
    tn_tensor *am = mask ? tn__mask_to_float(mask, dt) : causal ? tn_triu(tn_to(tn_full(TN_SHAPE(L, S), -INFINITY, dt), q->device), 1) : NULL;
    if (am && am->ndim == 2) am = tn_unsqueeze(am, 0);
    tn_tensor *kp = tn__mask_to_float(kpm, dt);
    tn_tensor *bk = tn_module_get(m, "bias_k"), *bv = tn_module_get(m, "bias_v");
    const int64_t pad[2] = {0, 1};
    if (bk && bv) { /* add_bias_kv: one more key and value, never masked */
        tn_tensor *kk[2] = {k, tn_repeat(bk, TN_SHAPE(1, N, 1))}, *vv[2] = {v, tn_repeat(bv, TN_SHAPE(1, N, 1))};
        k = tn_cat(kk, 2, 0);
        v = tn_cat(vv, 2, 0);
        am = am ? tn_pad(am, pad, 2, 0) : NULL;
        kp = kp ? tn_pad(kp, pad, 2, 0) : NULL;
    }
    /* heads: [L, N, E] -> [N*H, L, hd] */
    const int64_t Sk = k ? k->shape[0] : 0;
    q = tn_transpose(tn_reshape(q, TN_SHAPE(L, N * H, hd)), 0, 1);
    k = tn_transpose(tn_reshape(k, TN_SHAPE(Sk, N * H, hd)), 0, 1);
    v = tn_transpose(tn_reshape(v, TN_SHAPE(Sk, N * H, hd)), 0, 1);
    if (a->add_zero_attn) { /* a zero key and value at the end */
        tn_tensor *z = tn_to(tn_zeros(TN_SHAPE(N * H, 1, hd), dt), k->device), *kk[2] = {k, z}, *vv[2] = {v, z};
        k = tn_cat(kk, 2, 1);
        v = tn_cat(vv, 2, 1);
        am = am ? tn_pad(am, pad, 2, 0) : NULL;
        kp = kp ? tn_pad(kp, pad, 2, 0) : NULL;
    }
    const int64_t S2 = k ? k->shape[1] : 0;
    if (kp) kp = tn_reshape(tn_expand(tn_reshape(kp, TN_SHAPE(N, 1, 1, S2)), TN_SHAPE(N, H, 1, S2)), TN_SHAPE(N * H, 1, S2));
    tn_tensor *bias = am && kp ? tn_add(am, kp) : am ? am : kp;
    tn_tensor *att = tn_matmul(tn_div_scalar(q, sqrt((double)hd)), tn_transpose(k, 1, 2));   /* [N*H, L, S2] */
    if (bias) att = tn_add(att, bias);
    att = tn_softmax(att, -1);
    if (a->dropout > 0 && m->training) att = tn_dropout(att, a->dropout, true);
    tn_tensor *o = tn_reshape(tn_transpose(tn_matmul(att, v), 0, 1), TN_SHAPE(L * N, E));
    o = tn_reshape(tn_module_forward(tn_module_child(m, "out_proj"), o), TN_SHAPE(L, N, E));
    tn_tensor *w = NULL;
    if (need_weights) {
        w = tn_reshape(att, TN_SHAPE(N, H, L, S2));
        if (average) w = tn_div_scalar(tn_sum_dims(w, TN_DIMS(1), false), (double)H);
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
TNDEF tn_tensor *tn_nn_mha_forward(tn_module *m, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *key_padding_mask, tn_tensor *attn_mask,
                                   bool need_weights, bool average_attn_weights, bool is_causal, tn_tensor **attn_weights) {
    const char *fn = "MultiheadAttention";
    if (attn_weights) *attn_weights = NULL;
    if (!m || m->type != &tn__mha_type) return (tn_tensor *)tn__error("tn_nn_mha_forward: expected a MultiheadAttention module, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(q, k, v);
    tn__mham *a = (tn__mham *)m;
    if (tn__mha_check(fn, a, q, k, v, key_padding_mask, attn_mask)) return NULL;
    return TN__AS(fn, tn__mha_core(a, q, k, v, key_padding_mask, attn_mask, need_weights, average_attn_weights, is_causal, attn_weights));
}
static tn_tensor *tn__square_mask(int64_t sz, tn_dtype dtype) {
    tn_scope_begin();
    return tn__scope_return(tn_triu(tn_full(TN_SHAPE(sz, sz), -INFINITY, dtype), 1));
}
TNDEF tn_tensor *tn_nn_generate_square_subsequent_mask(int64_t sz, tn_dtype dtype) {
    const char *fn = "tn_nn_generate_square_subsequent_mask";
    if (sz < 0) return (tn_tensor *)tn__error("%s: sz must be non-negative, got %lld", fn, (long long)sz);
    if (!tn_dtype_is_floating(dtype)) return (tn_tensor *)tn__error("%s: the mask holds -inf: dtype must be floating, got %s", fn, tn_dtype_name(dtype));
    return TN__AS(fn, tn__square_mask(sz, dtype));
}

/* TransformerEncoderLayer, TransformerDecoderLayer */
typedef struct tn__tlayer { tn_module base; bool decoder, norm_first, gelu; } tn__tlayer;
static tn_tensor *tn__enc_layer_fwd(tn_module *m, tn_tensor *x) { return tn_nn_transformer_encoder_layer_forward(m, x, NULL, NULL, false); }
static const tn_module_type tn__enc_layer_type = {"TransformerEncoderLayer", tn__enc_layer_fwd, NULL, NULL};
static const tn_module_type tn__dec_layer_type = {"TransformerDecoderLayer", NULL, NULL, NULL};
static tn_module *tn__tlayer_new(const char *fn, bool decoder, int64_t d, int64_t nhead, const char *options) {
    tn__opts o;
    if (tn__opts_parse(fn, options, &o)) return NULL;
    int64_t dff = 2048;
    double p = 0.1, eps = 1e-5;
    bool bf = false, nf = false, bias = true;
    int act = 0;
    if (tn__opts_int(&o, "dim_feedforward", &dff, 1) < 0 || tn__opts_num(&o, "dropout", &p, 1) < 0 || (act = tn__opts_word(&o, "activation", "relu|gelu")) == -1 ||
        tn__opts_num(&o, "layer_norm_eps", &eps, 1) < 0 || tn__opts_bool(&o, "batch_first", &bf) < 0 || tn__opts_bool(&o, "norm_first", &nf) < 0 ||
        tn__opts_bool(&o, "bias", &bias) < 0 || tn__opts_done(&o, "dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias"))
        return NULL;
    if (dff <= 0) return (tn_module *)tn__error("%s: dim_feedforward must be positive, got %lld", fn, (long long)dff);
    if (!(p >= 0 && p <= 1)) return (tn_module *)tn__error("%s: dropout probability has to be between 0 and 1, but got %g", fn, p);
    tn__tlayer *t = (tn__tlayer *)tn_module_new(decoder ? &tn__dec_layer_type : &tn__enc_layer_type, sizeof(tn__tlayer));
    if (!t) return NULL;
    t->decoder = decoder; t->norm_first = nf; t->gelu = act == 1;
    tn_module *m = &t->base;
    char lnopts[96];
    snprintf(lnopts, sizeof lnopts, "eps=%.17g%s", eps, bias ? "" : ", bias=False");
    const int64_t ds[1] = {d};
    /* PyTorch's registration order (the state dict follows it) */
    bool ok = tn_module_add(m, "self_attn", tn__mha_new(fn, d, nhead, p, bias, false, false, d, d, bf)) &&
              (!decoder || tn_module_add(m, "multihead_attn", tn__mha_new(fn, d, nhead, p, bias, false, false, d, d, bf))) &&
              tn_module_add(m, "linear1", tn_nn_linear(d, dff, bias)) && tn_module_add(m, "dropout", tn_nn_dropout(p)) &&
              tn_module_add(m, "linear2", tn_nn_linear(dff, d, bias)) && tn_module_add(m, "norm1", tn_nn_layer_norm(ds, 1, lnopts)) &&
              tn_module_add(m, "norm2", tn_nn_layer_norm(ds, 1, lnopts)) && (!decoder || tn_module_add(m, "norm3", tn_nn_layer_norm(ds, 1, lnopts))) &&
              tn_module_add(m, "dropout1", tn_nn_dropout(p)) && tn_module_add(m, "dropout2", tn_nn_dropout(p)) &&
              (!decoder || tn_module_add(m, "dropout3", tn_nn_dropout(p)));
    return tn__module_or_free(m, !ok);
}
TNDEF tn_module *tn_nn_transformer_encoder_layer(int64_t d_model, int64_t nhead, const char *options) {
    return tn__tlayer_new("tn_nn_transformer_encoder_layer", false, d_model, nhead, options);
}
TNDEF tn_module *tn_nn_transformer_decoder_layer(int64_t d_model, int64_t nhead, const char *options) {
    return tn__tlayer_new("tn_nn_transformer_decoder_layer", true, d_model, nhead, options);
}
static tn_tensor *tn__child_fwd(tn_module *m, const char *child, tn_tensor *x) { return tn_module_forward(tn_module_child(m, child), x); }
/* dropout(attention(x, mem, mem)); mem NULL: self-attention */
static tn_tensor *tn__tlayer_attn(tn_module *m, const char *attn, const char *drop, tn_tensor *x, tn_tensor *mem, tn_tensor *mask, tn_tensor *kpm, bool causal) {
    if (!mem) mem = x;
    return tn__child_fwd(m, drop, tn_nn_mha_forward(tn_module_child(m, attn), x, mem, mem, kpm, mask, false, true, causal, NULL));
}
/* dropout_last(linear2(dropout(activation(linear1(x))))) */
static tn_tensor *tn__tlayer_ff(tn__tlayer *t, tn_tensor *x) {
    tn_module *m = &t->base;
    tn_tensor *y = tn__child_fwd(m, "linear1", x);
    y = t->gelu ? tn_gelu(y, false) : tn_relu(y);
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
TNDEF tn_tensor *tn_nn_transformer_encoder_layer_forward(tn_module *m, tn_tensor *src, tn_tensor *src_mask, tn_tensor *src_key_padding_mask, bool is_causal) {
    if (!m || m->type != &tn__enc_layer_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_encoder_layer_forward: expected a TransformerEncoderLayer, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(src);
    return TN__AS("TransformerEncoderLayer", tn__tlayer_core((tn__tlayer *)m, src, NULL, src_mask, NULL, src_key_padding_mask, NULL, is_causal));
}
TNDEF tn_tensor *tn_nn_transformer_decoder_layer_forward(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_tensor *tgt_mask, tn_tensor *memory_mask,
                                                         tn_tensor *tgt_key_padding_mask, tn_tensor *memory_key_padding_mask, bool tgt_is_causal) {
    if (!m || m->type != &tn__dec_layer_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_decoder_layer_forward: expected a TransformerDecoderLayer, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(tgt, memory);
    return TN__AS("TransformerDecoderLayer", tn__tlayer_core((tn__tlayer *)m, tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                             memory_key_padding_mask, tgt_is_causal));
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
        failed = !tn_module_register_buffer(c, m->buffers[i].name, tn_clone(m->buffers[i].t), m->buffers[i].persistent);
    tn_no_grad_end();
    tn_scope_end();
    for (int i = 0; !failed && i < m->nchildren; i++) failed = !tn_module_add(c, m->children[i].name, tn__module_deepcopy(fn, m->children[i].m));
    return tn__module_or_free(c, failed);
}
static tn_tensor *tn__encoder_fwd(tn_module *m, tn_tensor *x) { return tn_nn_transformer_encoder_forward(m, x, NULL, NULL, false); }
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
TNDEF tn_module *tn_nn_transformer_encoder(tn_module *encoder_layer, int64_t num_layers, tn_module *norm) {
    return tn__tstack_new("tn_nn_transformer_encoder", &tn__encoder_type, &tn__enc_layer_type, encoder_layer, num_layers, norm);
}
TNDEF tn_module *tn_nn_transformer_decoder(tn_module *decoder_layer, int64_t num_layers, tn_module *norm) {
    return tn__tstack_new("tn_nn_transformer_decoder", &tn__decoder_type, &tn__dec_layer_type, decoder_layer, num_layers, norm);
}
static tn_tensor *tn__tstack_core(tn_module *m, bool decoder, tn_tensor *x, tn_tensor *mem, tn_tensor *mask, tn_tensor *mem_mask, tn_tensor *kpm,
                                  tn_tensor *mem_kpm, bool causal) {
    tn_module *layers = tn_module_child(m, "layers"), *norm = tn_module_child(m, "norm");
    tn_tensor *src = x;
    tn_scope_begin();
    for (int i = 0; x && i < tn_module_num_children(layers); i++) {
        tn_module *l = tn_module_child_at(layers, i, NULL);
        x = decoder ? tn_nn_transformer_decoder_layer_forward(l, x, mem, mask, mem_mask, kpm, mem_kpm, causal)
                    : tn_nn_transformer_encoder_layer_forward(l, x, mask, kpm, causal);
    }
    if (norm) x = tn_module_forward(norm, x);
    if (x == src) x = tn__own(tn_retain(x));   /* no layers and no norm: the input itself, a new reference */
    return tn__scope_return(x);
}
TNDEF tn_tensor *tn_nn_transformer_encoder_forward(tn_module *m, tn_tensor *src, tn_tensor *mask, tn_tensor *src_key_padding_mask, bool is_causal) {
    if (!m || m->type != &tn__encoder_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_encoder_forward: expected a TransformerEncoder, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(src);
    return TN__AS("TransformerEncoder", tn__tstack_core(m, false, src, NULL, mask, NULL, src_key_padding_mask, NULL, is_causal));
}
TNDEF tn_tensor *tn_nn_transformer_decoder_forward(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_tensor *tgt_mask, tn_tensor *memory_mask,
                                                   tn_tensor *tgt_key_padding_mask, tn_tensor *memory_key_padding_mask, bool tgt_is_causal) {
    if (!m || m->type != &tn__decoder_type)
        return (tn_tensor *)tn__error("tn_nn_transformer_decoder_forward: expected a TransformerDecoder, got %s", m ? m->type->name : "NULL");
    TN__CHECK_NULL(tgt, memory);
    return TN__AS("TransformerDecoder", tn__tstack_core(m, true, tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                                                        tgt_is_causal));
}

/* ======================================================================= */
/* 13. optimizers                                                           */
/* ======================================================================= */
/* An optimizer is its parameter groups (each: a range of o->params and a table of named
   options, PyTorch's param_groups[g] dict) and per-parameter state tensors in the slots
   its kind names (PyTorch's optimizer.state[p]). The CPU step calls the TN_HD update
   rules of the declaration half over contiguous float32/float64 data. */

/* An option with its default. type: 'f' number, 'i' integer, 'b' bool, 'p' pair
   (betas), 'w' line_search_fn (None | 'strong_wolfe'), 'e' max_eval (None: max_iter*5//4). */
typedef struct tn__optdef { const char *name; char type; double def, def2; } tn__optdef;
#define TN__OPTDEF_END {NULL, 0, 0, 0}
static const tn__optdef tn__optdefs[TN__NUM_OPTIMS][9] = {
    {{"lr", 'f', 1e-3, 0}, {"momentum", 'f', 0, 0}, {"dampening", 'f', 0, 0}, {"weight_decay", 'f', 0, 0},
     {"nesterov", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"amsgrad", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 1e-2, 0},
     {"amsgrad", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-2, 0}, {"alpha", 'f', 0.99, 0}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"momentum", 'f', 0, 0}, {"centered", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-2, 0}, {"lr_decay", 'f', 0, 0}, {"weight_decay", 'f', 0, 0}, {"initial_accumulator_value", 'f', 0, 0},
     {"eps", 'f', 1e-10, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1.0, 0}, {"rho", 'f', 0.9, 0}, {"eps", 'f', 1e-6, 0}, {"weight_decay", 'f', 0, 0},
     {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 2e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 2e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"momentum_decay", 'f', 4e-3, 0}, {"decoupled_weight_decay", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1e-3, 0}, {"betas", 'p', 0.9, 0.999}, {"eps", 'f', 1e-8, 0}, {"weight_decay", 'f', 0, 0},
     {"decoupled_weight_decay", 'b', 0, 0}, {"maximize", 'b', 0, 0}, TN__OPTDEF_END},
    {{"lr", 'f', 1, 0}, {"max_iter", 'i', 20, 0}, {"max_eval", 'e', 0, 0}, {"tolerance_grad", 'f', 1e-7, 0},
     {"tolerance_change", 'f', 1e-9, 0}, {"history_size", 'i', 100, 0}, {"line_search_fn", 'w', 0, 0}, TN__OPTDEF_END},
};
static const char *const tn__optim_names[TN__NUM_OPTIMS] = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                                           "Adamax", "NAdam", "RAdam", "LBFGS"};
/* Keyword arguments PyTorch 2 has that change nothing here: foreach/fused choose an
   implementation (one here); capturable/differentiable are accepted when False. */
static const char *const tn__optim_noops[TN__NUM_OPTIMS] = {"foreach fused", "foreach fused", "foreach fused", "foreach",
                                                           "foreach fused", "foreach", "foreach", "foreach", "foreach", ""};
static const char *const tn__optim_false_only[TN__NUM_OPTIMS] = {"differentiable", "capturable differentiable",
    "capturable differentiable", "capturable differentiable", "differentiable", "capturable differentiable",
    "capturable differentiable", "capturable differentiable", "capturable differentiable", ""};
/* State slots, in PyTorch's order of optimizer.state[p]. */
#define TN__OPT_NSLOT 4
static const char *const tn__optim_slots[TN__NUM_OPTIMS][TN__OPT_NSLOT] = {
    {"momentum_buffer", NULL, NULL, NULL}, {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"},
    {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}, {"step", "square_avg", "momentum_buffer", "grad_avg"},
    {"step", "sum", NULL, NULL}, {"step", "square_avg", "acc_delta", NULL}, {"step", "exp_avg", "exp_inf", NULL},
    {"step", "mu_product", "exp_avg", "exp_avg_sq"}, {"step", "exp_avg", "exp_avg_sq", NULL}, {NULL, NULL, NULL, NULL}};
/* Keys schedulers add to param groups (tn_optim_set may create them). */
static const char *const tn__sched_keys[] = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum", NULL};

#define TN__OPT_MAXV 24
typedef struct tn__pgroup {
    int first, n;                     /* its parameters: o->params[first, first + n) */
    int nv;                           /* options: the kind's first (table order), then schedulers' keys */
    char key[TN__OPT_MAXV][32];
    double val[TN__OPT_MAXV];
} tn__pgroup;

/* LBFGS keeps everything in float64 (PyTorch: in the parameters' dtype). */
typedef struct tn__lbfgs {
    int64_t N;                        /* total number of elements */
    bool has_counts, has_d, has_t, has_hist, has_H, has_prev, has_prev_loss;
    int64_t func_evals, n_iter;
    double *d, t, H_diag, *prev_flat_grad, prev_loss;
    int nold, cap;                    /* history: old_dirs[i], old_stps[i], ro[i], oldest first */
    double **old_dirs, **old_stps, *ro;
} tn__lbfgs;

struct tn_optim {
    int kind;
    int ng, gcap;
    tn__pgroup *groups;
    tn__pgroup defaults;              /* the options given at creation: add_param_group starts from them */
    int np, pcap;
    tn_tensor **params;               /* retained, group after group */
    tn_tensor **state;                /* np * TN__OPT_NSLOT, owned */
    unsigned char *fresh;             /* per param: SGD momentum buffer made this step (starts as the grad) */
    tn__lbfgs *lb;
};

/* ---- group tables ---- */
static int tn__pg_find(const tn__pgroup *g, const char *key) {
    for (int i = 0; i < g->nv; i++) if (!strcmp(g->key[i], key)) return i;
    return -1;
}
static double tn__pg_get(const tn__pgroup *g, const char *key) {
    int i = tn__pg_find(g, key);
    return i < 0 ? NAN : g->val[i];
}
static int tn__pg_set(const char *fn, tn__pgroup *g, const char *key, double v) {
    int i = tn__pg_find(g, key);
    if (i < 0) {
        if (g->nv == TN__OPT_MAXV || strlen(key) >= sizeof g->key[0])
            return TN__FAIL_INT("%s: too many options in a parameter group (or name '%s' too long)", fn, key);
        i = g->nv++;
        snprintf(g->key[i], sizeof g->key[i], "%s", key);
    }
    g->val[i] = v;
    return 0;
}
static const tn__optdef *tn__optim_def(int kind, const char *key) {
    for (const tn__optdef *d = tn__optdefs[kind]; d->name; d++) {
        size_t l = strlen(d->name);
        if (!strncmp(key, d->name, l) && (!key[l] || (d->type == 'p' && (!strcmp(key + l, "[0]") || !strcmp(key + l, "[1]")))))
            return d;
    }
    return NULL;
}
static void tn__optim_valid_names(int kind, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    for (const tn__optdef *d = tn__optdefs[kind]; d->name && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", d->name);
    const char *extra[2] = {tn__optim_noops[kind], tn__optim_false_only[kind]};
    for (int e = 0; e < 2; e++)
        for (const char *p = extra[e]; *p && n < cap;) {
            size_t l = strcspn(p, " ");
            n += (size_t)snprintf(buf + n, cap - n, ", %.*s", (int)l, p);
            p += l + (p[l] == ' ');
        }
}

/* PyTorch's constructor checks ("Invalid learning rate: -1"), on any group. */
static int tn__optim_validate(const char *fn, int kind, const tn__pgroup *g) {
    static const struct { const char *key, *what; double lo, hi; bool open; } checks[] = {
        {"lr", "Invalid learning rate", 0, INFINITY, false}, {"eps", "Invalid epsilon value", 0, INFINITY, false},
        {"betas[0]", "Invalid beta parameter at index 0", 0, 1, true},
        {"betas[1]", "Invalid beta parameter at index 1", 0, 1, true},
        {"weight_decay", "Invalid weight_decay value", 0, INFINITY, false},
        {"momentum", "Invalid momentum value", 0, INFINITY, false}, {"alpha", "Invalid alpha value", 0, INFINITY, false},
        {"rho", "Invalid rho value", 0, 1, false}, {"lr_decay", "Invalid lr_decay value", 0, INFINITY, false},
        {"initial_accumulator_value", "Invalid initial_accumulator_value value", 0, INFINITY, false},
        {"momentum_decay", "Invalid momentum_decay value", 0, INFINITY, false},
        {"history_size", "Invalid history_size (at least 1)", 1, INFINITY, false},
        {"max_iter", "Invalid max_iter value", 0, INFINITY, false}, {"max_eval", "Invalid max_eval value", 0, INFINITY, false}};
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (tn__pg_find(g, checks[i].key) < 0) continue;
        double v = tn__pg_get(g, checks[i].key);
        if (!(v >= checks[i].lo && (checks[i].open ? v < checks[i].hi : v <= checks[i].hi)))
            return TN__FAIL_INT("%s: %s: %g", fn, checks[i].what, v);
    }
    if (kind == TN__SGD && tn__pg_get(g, "nesterov") != 0 && (tn__pg_get(g, "momentum") <= 0 || tn__pg_get(g, "dampening") != 0))
        return TN__FAIL_INT("%s: Nesterov momentum requires a momentum and zero dampening", fn);
    return 0;
}

/* Options text -> a group's table: base's values (or the defaults) overridden by text. */
static int tn__optim_parse(const char *fn, int kind, const char *text, const tn__pgroup *base, tn__pgroup *out) {
    tn__opts o;
    char valid[400], key[40];
    if (tn__opts_parse(fn, text, &o)) return -1;
    out->nv = 0;
    for (const tn__optdef *d = tn__optdefs[kind]; d->name; d++) {
        double v = base ? tn__pg_get(base, d->name) : d->def, x[2];
        int r = 0;
        if (d->type == 'f') {
            if ((r = tn__opts_num(&o, d->name, x, 1)) > 0) v = x[0];
        } else if (d->type == 'i' || d->type == 'e') {
            int64_t iv;
            if ((r = tn__opts_int(&o, d->name, &iv, 1)) > 0) v = (double)iv;
            else if (r == 0 && d->type == 'e' && !base) v = floor(tn__pg_get(out, "max_iter") * 5 / 4);
        } else if (d->type == 'b') {
            bool b;
            if ((r = tn__opts_bool(&o, d->name, &b)) > 0) v = b;
        } else if (d->type == 'w') {
            r = tn__opts_word(&o, d->name, "None|strong_wolfe");
            if (r >= 0) v = r;
            else r = r == -2 ? 0 : -1;
        } else { /* pair: "betas[0]", "betas[1]" */
            char k1[40];
            snprintf(key, sizeof key, "%s[0]", d->name);
            snprintf(k1, sizeof k1, "%s[1]", d->name);
            v = base ? tn__pg_get(base, key) : d->def;
            double v2 = base ? tn__pg_get(base, k1) : d->def2;
            if ((r = tn__opts_num(&o, d->name, x, 2)) == 1)
                return TN__FAIL_INT("%s: option %s needs a pair, e.g. %s=(%g, %g)", fn, d->name, d->name, d->def, d->def2);
            if (r < 0) return -1;
            if (r == 2) { v = x[0]; v2 = x[1]; }
            if (tn__pg_set(fn, out, key, v) || tn__pg_set(fn, out, k1, v2)) return -1;
            continue;
        }
        if (r < 0) return -1;
        if (tn__pg_set(fn, out, d->name, v)) return -1;
    }
    const char *lists[2] = {tn__optim_noops[kind], tn__optim_false_only[kind]};
    for (int l = 0; l < 2; l++)
        for (const char *p = lists[l]; *p;) {
            size_t len = strcspn(p, " ");
            bool b = false;
            snprintf(key, sizeof key, "%.*s", (int)len, p);
            if (tn__opts_bool(&o, key, &b) < 0) return -1;
            if (l == 1 && b) return TN__FAIL_INT("%s: %s=True is not supported (only %s=False)", fn, key, key);
            p += len + (p[len] == ' ');
        }
    tn__optim_valid_names(kind, valid, sizeof valid);
    if (tn__opts_done(&o, valid)) return -1;
    return tn__optim_validate(fn, kind, out);
}

/* ---- state ---- */
static bool tn__optim_scalar_slot(const char *name) { return !strcmp(name, "step") || !strcmp(name, "mu_product"); }
/* A new state tensor for param p: "step" 0-d float32 0, "mu_product" 1, "sum" the
   initial accumulator, buffers zeros of p's shape and dtype. */
static tn_tensor *tn__optim_state_new(tn_tensor *p, const char *name, double init) {
    bool scalar = tn__optim_scalar_slot(name);
    tn_tensor *t = scalar ? tn__new(TN_F32, TN_CPU, NULL, 0) : tn__new(p->dtype, TN_CPU, p->shape, p->ndim);
    if (!t) return NULL;
    int64_t n = tn_numel(t);
    double v = !strcmp(name, "mu_product") ? 1 : scalar ? 0 : init;
    if (t->dtype == TN_F32) for (int64_t i = 0; i < n; i++) ((float *)t->storage->data)[i] = (float)v;
    else for (int64_t i = 0; i < n; i++) ((double *)t->storage->data)[i] = v;
    if (!scalar && p->device != TN_CPU) { /* buffers live beside the parameter; step counters stay on the CPU, as PyTorch's */
        tn_tensor *d = tn__copy_as(t, t->dtype, p->device);
        tn_release(t);
        t = d;
    }
    return t;
}
/* Whether slot k of param group g's kind is in use with the group's options. */
static bool tn__optim_slot_used(int kind, int k, const tn__pgroup *g) {
    const char *name = tn__optim_slots[kind][k];
    if (!name) return false;
    if (!strcmp(name, "max_exp_avg_sq")) return tn__pg_get(g, "amsgrad") != 0;
    if (!strcmp(name, "grad_avg")) return tn__pg_get(g, "centered") != 0;
    if (!strcmp(name, "momentum_buffer")) return kind == TN__SGD ? tn__pg_get(g, "momentum") != 0 : tn__pg_get(g, "momentum") > 0;
    return true;
}
static int tn__optim_slot_index(int kind, const char *name) {
    for (int k = 0; k < TN__OPT_NSLOT; k++)
        if (tn__optim_slots[kind][k] && !strcmp(tn__optim_slots[kind][k], name)) return k;
    return -1;
}
/* Create the missing state of param i (in group g). SGD's momentum buffer starts as the
   gradient: it is allocated here and filled by the update (fresh). */
static int tn__optim_init_state(const char *fn, tn_optim *o, int i, const tn__pgroup *g) {
    for (int k = 0; k < TN__OPT_NSLOT; k++) {
        if (o->state[i * TN__OPT_NSLOT + k] || !tn__optim_slot_used(o->kind, k, g)) continue;
        const char *name = tn__optim_slots[o->kind][k];
        tn_tensor *t = tn__optim_state_new(o->params[i], name, !strcmp(name, "sum") ? tn__pg_get(g, "initial_accumulator_value") : 0);
        if (!t) return TN__FAIL_INT("%s: out of memory creating optimizer state", fn);
        o->state[i * TN__OPT_NSLOT + k] = t;
        if (o->kind == TN__SGD) o->fresh[i] = 1;
    }
    return 0;
}

/* ---- creation ---- */
static int tn__optim_kind(const char *fn, const char *kind) {
    for (int k = 0; kind && k < TN__NUM_OPTIMS; k++) if (!strcmp(kind, tn__optim_names[k])) return k;
    return TN__FAIL_INT("%s: unknown optimizer '%s' (known: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS)",
                        fn, kind ? kind : "(null)");
}
static int tn__optim_check_params(const char *fn, const tn_optim *o, tn_tensor *const *params, int n) {
    if (n <= 0 || !params) return TN__FAIL_INT("%s: optimizer got an empty parameter list", fn);
    for (int i = 0; i < n; i++) {
        tn_tensor *p = params[i];
        if (!p) return -1; /* a failed expression upstream: its error stands */
        if (p->grad_fn) return TN__FAIL_INT("%s: can't optimize a non-leaf Tensor (parameter %d has grad_fn %s)", fn, i, tn_grad_fn_name(p));
        if (!p->requires_grad)
            return TN__FAIL_INT("%s: parameter %d does not require grad (call tn_requires_grad_(t, true) first)", fn, i);
        if (p->dtype != TN_F32 && p->dtype != TN_F64)
            return TN__FAIL_INT("%s: parameter %d has dtype %s; the optimizers update float32 and float64 tensors", fn, i, tn_dtype_name(p->dtype));
        for (int j = 0; j < i; j++)
            if (params[j] == p) return TN__FAIL_INT("%s: parameter %d appears twice in the parameter group", fn, i);
        for (int j = 0; j < o->np; j++)
            if (o->params[j] == p) return TN__FAIL_INT("%s: some parameters appear in more than one parameter group (parameter %d)", fn, i);
    }
    return 0;
}
/* Append a group (options already parsed into g). */
static int tn__optim_append(const char *fn, tn_optim *o, tn_tensor *const *params, int n, const tn__pgroup *g) {
    if (tn__optim_check_params(fn, o, params, n)) return -1;
    if (o->ng == o->gcap) {
        int cap = o->gcap ? 2 * o->gcap : 2;
        tn__pgroup *gs = (tn__pgroup *)TN_REALLOC(o->groups, (size_t)cap * sizeof *gs);
        if (!gs) return TN__FAIL_INT("%s: out of memory", fn);
        o->groups = gs;
        o->gcap = cap;
    }
    if (o->np + n > o->pcap) {
        int cap = TN__MAX(o->np + n, 2 * o->pcap);
        tn_tensor **ps = (tn_tensor **)TN_REALLOC(o->params, (size_t)cap * sizeof *ps);
        if (ps) o->params = ps;
        tn_tensor **st = ps ? (tn_tensor **)TN_REALLOC(o->state, (size_t)cap * TN__OPT_NSLOT * sizeof *st) : NULL;
        if (st) o->state = st;
        unsigned char *fr = st ? (unsigned char *)TN_REALLOC(o->fresh, (size_t)cap) : NULL;
        if (!fr) return TN__FAIL_INT("%s: out of memory", fn);
        o->fresh = fr;
        o->pcap = cap;
    }
    tn__pgroup *ng = &o->groups[o->ng];
    *ng = *g;
    ng->first = o->np;
    ng->n = n;
    for (int i = 0; i < n; i++) {
        o->params[o->np + i] = tn_retain(params[i]);
        for (int k = 0; k < TN__OPT_NSLOT; k++) o->state[(o->np + i) * TN__OPT_NSLOT + k] = NULL;
        o->fresh[o->np + i] = 0;
    }
    o->np += n;
    o->ng++;
    return 0;
}
static tn__lbfgs *tn__lbfgs_new(void) {
    tn__lbfgs *lb = (tn__lbfgs *)TN_MALLOC(sizeof *lb);
    if (lb) memset(lb, 0, sizeof *lb);
    return lb;
}
static void tn__lbfgs_free(tn__lbfgs *lb) {
    if (!lb) return;
    for (int i = 0; i < lb->nold; i++) { TN_FREE(lb->old_dirs[i]); TN_FREE(lb->old_stps[i]); }
    TN_FREE(lb->old_dirs);
    TN_FREE(lb->old_stps);
    TN_FREE(lb->ro);
    TN_FREE(lb->d);
    TN_FREE(lb->prev_flat_grad);
    TN_FREE(lb);
}
static tn_optim *tn__optim_create(const char *fn, const char *kind, tn_tensor *const *params, int n, const char *options) {
    for (int i = 0; params && i < n; i++) if (!params[i]) return NULL;
    int k = tn__optim_kind(fn, kind);
    if (k < 0) return NULL;
    tn_optim *o = (tn_optim *)TN_MALLOC(sizeof *o);
    if (!o) return (tn_optim *)tn__error("%s: out of memory", fn);
    memset(o, 0, sizeof *o);
    o->kind = k;
    if (tn__optim_parse(fn, k, options, NULL, &o->defaults) || tn__optim_append(fn, o, params, n, &o->defaults) ||
        (k == TN__LBFGS && !(o->lb = tn__lbfgs_new()))) {
        if (k == TN__LBFGS && o->ng == 1 && !o->lb) tn__error("%s: out of memory", fn);
        tn_optim_free(o);
        return NULL;
    }
    /* Adagrad makes its state in the constructor (step 0, sum = initial_accumulator_value) */
    for (int i = 0; k == TN__ADAGRAD && i < o->np; i++)
        if (tn__optim_init_state(fn, o, i, &o->groups[0])) { tn_optim_free(o); return NULL; }
    return o;
}
TNDEF tn_optim *tn_optim_create(const char *kind, tn_tensor *const *params, int n, const char *options) {
    return tn__optim_create("tn_optim_create", kind, params, n, options);
}
TNDEF tn_optim *tn_optim_sgd(tn_tensor *const *params, int n, double lr, double momentum, double weight_decay) {
    char opts[128];
    snprintf(opts, sizeof opts, "lr=%.17g, momentum=%.17g, weight_decay=%.17g", lr, momentum, weight_decay);
    return tn__optim_create("tn_optim_sgd", "SGD", params, n, opts);
}
TNDEF tn_optim *tn_optim_adam(tn_tensor *const *params, int n, double lr) {
    char opts[64];
    snprintf(opts, sizeof opts, "lr=%.17g", lr);
    return tn__optim_create("tn_optim_adam", "Adam", params, n, opts);
}
TNDEF tn_optim *tn_optim_adamw(tn_tensor *const *params, int n, double lr, double weight_decay) {
    char opts[96];
    snprintf(opts, sizeof opts, "lr=%.17g, weight_decay=%.17g", lr, weight_decay);
    return tn__optim_create("tn_optim_adamw", "AdamW", params, n, opts);
}
TNDEF int tn_optim_add_param_group(tn_optim *o, tn_tensor *const *params, int n, const char *options) {
    const char *fn = "tn_optim_add_param_group";
    if (!o) return -1;
    for (int i = 0; params && i < n; i++) if (!params[i]) return -1;
    if (o->kind == TN__LBFGS) return TN__FAIL_INT("%s: LBFGS doesn't support per-parameter options (parameter groups)", fn);
    tn__pgroup g;
    if (tn__optim_parse(fn, o->kind, options, &o->defaults, &g) || tn__optim_append(fn, o, params, n, &g)) return -1;
    for (int i = o->groups[o->ng - 1].first; o->kind == TN__ADAGRAD && i < o->np; i++)
        if (tn__optim_init_state(fn, o, i, &o->groups[o->ng - 1])) return -1;
    return 0;
}
TNDEF void tn_optim_free(tn_optim *o) {
    if (!o) return;
    for (int i = 0; i < o->np; i++) {
        tn_release(o->params[i]);
        for (int k = 0; k < TN__OPT_NSLOT; k++) tn_release(o->state[i * TN__OPT_NSLOT + k]);
    }
    TN_FREE(o->params);
    TN_FREE(o->state);
    TN_FREE(o->fresh);
    TN_FREE(o->groups);
    tn__lbfgs_free(o->lb);
    TN_FREE(o);
}
TNDEF int tn_optim_num_groups(const tn_optim *o) { return o ? o->ng : 0; }
TNDEF int tn_optim_num_params(const tn_optim *o) { return o ? o->np : 0; }
TNDEF tn_tensor *tn_optim_param(const tn_optim *o, int i) { return o && i >= 0 && i < o->np ? o->params[i] : NULL; }
TNDEF tn_tensor *tn_optim_state(const tn_optim *o, int param, const char *name) {
    if (!o || param < 0 || param >= o->np || !name) return NULL;
    int k = tn__optim_slot_index(o->kind, name);
    return k < 0 ? NULL : o->state[param * TN__OPT_NSLOT + k];
}

static int tn__optim_group_arg(const char *fn, const tn_optim *o, int group, const char *name) {
    if (group < 0 || group >= o->ng)
        return TN__FAIL_INT("%s: group %d out of range (the %s optimizer has %d)", fn, group, tn__optim_names[o->kind], o->ng);
    if (!name) return TN__FAIL_INT("%s: name is NULL", fn);
    if (!strcmp(name, "betas") && tn__optim_def(o->kind, "betas"))
        return TN__FAIL_INT("%s: betas is a pair: use \"betas[0]\" or \"betas[1]\"", fn);
    return 0;
}
TNDEF double tn_optim_get(const tn_optim *o, int group, const char *name) {
    const char *fn = "tn_optim_get";
    if (!o) return NAN;
    if (tn__optim_group_arg(fn, o, group, name)) return NAN;
    int i = tn__pg_find(&o->groups[group], name);
    if (i < 0) return tn__error("%s: param group %d of %s has no option '%s'", fn, group, tn__optim_names[o->kind], name), NAN;
    return o->groups[group].val[i];
}
TNDEF int tn_optim_set(tn_optim *o, int group, const char *name, double value) {
    const char *fn = "tn_optim_set";
    if (!o) return -1;
    if (tn__optim_group_arg(fn, o, group, name)) return -1;
    tn__pgroup *g = &o->groups[group];
    const tn__optdef *d = tn__optim_def(o->kind, name);
    if (d && d->type == 'b') value = value != 0;
    if (d && d->type == 'w' && value != 0 && value != 1)
        return TN__FAIL_INT("%s: %s is 0 (None) or 1 ('strong_wolfe'), got %g", fn, name, value);
    if (!d && tn__pg_find(g, name) < 0) {
        bool sched = false;
        for (int i = 0; tn__sched_keys[i]; i++) sched = sched || !strcmp(tn__sched_keys[i], name);
        if (!sched) {
            char valid[400];
            tn__optim_valid_names(o->kind, valid, sizeof valid);
            return TN__FAIL_INT("%s: %s has no option '%s' (options: %s; initial_lr, max_lr, min_lr, max_momentum, base_momentum)",
                                fn, tn__optim_names[o->kind], name, valid);
        }
    }
    return tn__pg_set(fn, g, name, value);
}

/* ---- zero_grad ---- */
TNDEF void tn_optim_zero_grad(tn_optim *o) { tn_optim_zero_grad_set_to_none(o, true); }
TNDEF void tn_optim_zero_grad_set_to_none(tn_optim *o, bool set_to_none) {
    if (!o) return;
    tn_no_grad_begin();
    tn_scope_begin();
    for (int i = 0; i < o->np; i++) {
        tn_tensor *p = o->params[i], *g = p->grad;
        if (!g) continue;
        if (set_to_none) { tn_set_grad(p, NULL); continue; }
        /* PyTorch: grad.detach_() (or requires_grad_(False)), then zero_() */
        if (g->grad_fn) tn_detach_(g);
        else g->requires_grad = false;
        tn_zero_(g);
    }
    tn_scope_end();
    tn_no_grad_end();
}

/* ---- the CPU step ---- */
/* One parameter's update over n contiguous elements: p, g and up to three state buffers
   (NULL: unused, read as a dummy). TN__OPTIM_LOOP expands the loop with the kind and the
   flags as constants, so tn_optim_apply's switch and flag tests fold away and the loop
   vectorises (the same operations in the same order per element: the same bits as the
   general loop); the common rules get such a copy, the rest the general loop. A, B, E: the
   state pointers of element i (&d: a scratch value for a slot the rule does not touch). */
#define TN__OPTIM_LOOP(T, S, KIND, F, A, B, E) do { \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int t = 0; t < nthr; t++) { \
        T cl[12];   /* a private copy: the stores cannot alias it, the loop keeps it in registers */ \
        memcpy(cl, c, sizeof cl); \
        for (int64_t i = n * t / nthr, hi = n * (t + 1) / nthr; i < hi; i++) { \
            T d = 0; \
            p[i] = tn_optim_apply_##S(KIND, F, cl, p[i], g[i], A, B, E); \
        } \
    } \
} while (0)
#define TN__OPTIM_KERNEL(T, S) \
static void tn__optim_kernel_##S(const tn__optk *k, int64_t n, T *p, const T *g, T *s0, T *s1, T *s2) { \
    T c[12]; \
    for (int j = 0; j < 12; j++) c[j] = (T)k->c[j]; \
    const int f = k->flags; \
    const int nthr = tn__par_threads(n * 8, n);   /* elementwise: the same result for any thread count */ \
    const int WD = TN_OPTF_WEIGHT_DECAY, DEC = TN_OPTF_DECOUPLED, MOM = TN_OPTF_MOMENTUM; \
    if ((k->kind == TN__ADAM || k->kind == TN__ADAMW) && s0 && s1) { \
        if (f == 0) { TN__OPTIM_LOOP(T, S, TN__ADAM, 0, s0 + i, s1 + i, &d); return; } \
        if (f == WD) { TN__OPTIM_LOOP(T, S, TN__ADAM, WD, s0 + i, s1 + i, &d); return; } \
        if (f == (WD | DEC)) { TN__OPTIM_LOOP(T, S, TN__ADAM, WD | DEC, s0 + i, s1 + i, &d); return; } \
        if (f == DEC) { TN__OPTIM_LOOP(T, S, TN__ADAM, DEC, s0 + i, s1 + i, &d); return; } \
    } else if (k->kind == TN__SGD) { \
        if (f == 0) { TN__OPTIM_LOOP(T, S, TN__SGD, 0, &d, &d, &d); return; } \
        if (f == WD) { TN__OPTIM_LOOP(T, S, TN__SGD, WD, &d, &d, &d); return; } \
        if (s0 && f == MOM) { TN__OPTIM_LOOP(T, S, TN__SGD, MOM, s0 + i, &d, &d); return; } \
        if (s0 && f == (MOM | WD)) { TN__OPTIM_LOOP(T, S, TN__SGD, MOM | WD, s0 + i, &d, &d); return; } \
    } \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int64_t i = 0; i < n; i++) { \
        T d[3] = {0, 0, 0};   /* scratch state for the unused slots, per element */ \
        p[i] = tn_optim_apply_##S(k->kind, f, c, p[i], g[i], s0 ? s0 + i : &d[0], s1 ? s1 + i : &d[1], s2 ? s2 + i : &d[2]); \
    } \
}

TN__OPTIM_KERNEL(float, f32)
TN__OPTIM_KERNEL(double, f64)
/* The CPU backend's optim entry. */
static int tn__cpu_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *s) {
    int64_t n = tn_numel(p);
    if (p->dtype == TN_F32)
        tn__optim_kernel_f32(k, n, (float *)tn_data_ptr(p), (const float *)tn_data_ptr(g), (float *)tn_data_ptr(s[0]),
                             (float *)tn_data_ptr(s[1]), (float *)tn_data_ptr(s[2]));
    else
        tn__optim_kernel_f64(k, n, (double *)tn_data_ptr(p), (const double *)tn_data_ptr(g), (double *)tn_data_ptr(s[0]),
                             (double *)tn_data_ptr(s[1]), (double *)tn_data_ptr(s[2]));
    return 0;
}

/* step += 1 in the float32 state tensor, as PyTorch's step_t += 1; returns the new value */
static double tn__optim_bump_step(tn_tensor *step) {
    float *s = (float *)step->storage->data + step->offset;
    *s = *s + 1.0f;
    return (double)*s;
}
/* The scalars and flags of param i's update (and its step counters), from group g. */
static void tn__optim_coefs(tn_optim *o, int i, const tn__pgroup *g, tn__optk *k) {
    tn_tensor **st = o->state + i * TN__OPT_NSLOT;
    double lr = tn__pg_get(g, "lr"), wd = tn__pg_get(g, "weight_decay"), *c = k->c;
    double b1 = tn__pg_get(g, "betas[0]"), b2 = tn__pg_get(g, "betas[1]"), eps = tn__pg_get(g, "eps");
    int f = (tn__pg_get(g, "maximize") != 0 ? TN_OPTF_MAXIMIZE : 0) | (wd != 0 ? TN_OPTF_WEIGHT_DECAY : 0);
    double step = o->kind == TN__SGD ? 0 : tn__optim_bump_step(st[0]);
    memset(c, 0, sizeof k->c);
    k->kind = o->kind;
    switch (o->kind) {
    case TN__SGD: {
        double m = tn__pg_get(g, "momentum");
        c[0] = lr; c[1] = m; c[2] = 1 - tn__pg_get(g, "dampening"); c[3] = wd;
        f |= (m != 0 ? TN_OPTF_MOMENTUM : 0) | (tn__pg_get(g, "nesterov") != 0 ? TN_OPTF_NESTEROV : 0) | (o->fresh[i] ? TN_OPTF_FIRST : 0);
        o->fresh[i] = 0;
        break;
    }
    case TN__ADAM: case TN__ADAMW: {
        double bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
        c[0] = wd; c[1] = 1 - lr * wd; c[2] = 1 - b1; c[3] = b2; c[4] = 1 - b2; c[5] = sqrt(bc2); c[6] = eps; c[7] = -(lr / bc1);
        f |= (tn__pg_get(g, "amsgrad") != 0 ? TN_OPTF_AMSGRAD : 0) | (o->kind == TN__ADAMW ? TN_OPTF_DECOUPLED : 0);
        break;
    }
    case TN__RMSPROP: {
        double alpha = tn__pg_get(g, "alpha"), m = tn__pg_get(g, "momentum");
        c[0] = wd; c[1] = alpha; c[2] = 1 - alpha; c[3] = eps; c[4] = m; c[5] = lr;
        f |= (tn__pg_get(g, "centered") != 0 ? TN_OPTF_CENTERED : 0) | (m > 0 ? TN_OPTF_MOMENTUM : 0);
        break;
    }
    case TN__ADAGRAD:
        c[0] = wd; c[1] = eps; c[2] = lr / (1 + (step - 1) * tn__pg_get(g, "lr_decay"));
        break;
    case TN__ADADELTA: {
        double rho = tn__pg_get(g, "rho");
        c[0] = wd; c[1] = rho; c[2] = 1 - rho; c[3] = eps; c[4] = lr;
        break;
    }
    case TN__ADAMAX:
        c[0] = wd; c[1] = 1 - b1; c[2] = b2; c[3] = eps; c[4] = lr / (1 - pow(b1, step));
        break;
    case TN__NADAM: {
        double md = tn__pg_get(g, "momentum_decay"), bc2 = 1 - pow(b2, step);
        double mu = b1 * (1. - 0.5 * pow(0.96, step * md)), mu_next = b1 * (1. - 0.5 * pow(0.96, (step + 1) * md));
        float *mp = (float *)st[1]->storage->data + st[1]->offset;
        *mp = *mp * (float)mu;        /* mu_product *= mu, in float32 as PyTorch's state tensor */
        double mu_product = *mp, mu_product_next = mu_product * mu_next;
        c[0] = wd; c[1] = 1 - lr * wd; c[2] = 1 - b1; c[3] = b2; c[4] = 1 - b2; c[5] = bc2; c[6] = eps;
        c[7] = -lr * (1. - mu) / (1. - mu_product); c[8] = (-lr * mu_next) / (1. - mu_product_next);
        if (wd != 0 && tn__pg_get(g, "decoupled_weight_decay") != 0) f |= TN_OPTF_DECOUPLED;
        break;
    }
    case TN__RADAM: {
        double bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
        double rho_inf = 2 / (1 - b2) - 1, rho_t = rho_inf - 2 * step * pow(b2, step) / bc2;
        c[0] = wd; c[1] = 1 - lr * wd; c[2] = 1 - b1; c[3] = b2; c[4] = 1 - b2; c[5] = bc1; c[6] = lr; c[7] = sqrt(bc2); c[8] = eps;
        if (rho_t > 5.) {
            c[9] = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
            f |= TN_OPTF_RECTIFY;
        }
        if (wd != 0 && tn__pg_get(g, "decoupled_weight_decay") != 0) f |= TN_OPTF_DECOUPLED;
        break;
    }
    default: break;
    }
    k->flags = f;
}
/* The state buffers the kernel takes, in its order: s0, s1, s2. */
static void tn__optim_buffers(const tn_optim *o, int i, tn_tensor **s) {
    tn_tensor *const *st = o->state + i * TN__OPT_NSLOT;
    s[0] = s[1] = s[2] = NULL;
    switch (o->kind) {
    case TN__SGD: s[0] = st[0]; break;
    case TN__ADAM: case TN__ADAMW: case TN__RMSPROP: s[0] = st[1]; s[1] = st[2]; s[2] = st[3]; break; /* RMSprop: square_avg, momentum_buffer, grad_avg */
    case TN__ADAGRAD: s[0] = st[1]; break;
    case TN__ADADELTA: case TN__ADAMAX: case TN__RADAM: s[0] = st[1]; s[1] = st[2]; break;
    case TN__NADAM: s[0] = st[2]; s[1] = st[3]; break;
    default: break;
    }
}
/* Checks every parameter that has a grad and makes missing state, before anything is
   updated: a refused step changes nothing. */
static int tn__optim_prepare(const char *fn, tn_optim *o) {
    for (int gi = 0; gi < o->ng; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        for (int i = g->first; i < g->first + g->n; i++) {
            tn_tensor *p = o->params[i], *gr = p->grad;
            if (!gr) continue;
            if (gr->device != p->device)
                return TN__FAIL_INT("%s: parameter %d is on %s but its grad is on %s", fn, i, tn_device_name(p->device), tn_device_name(gr->device));
            if (p->dtype != TN_F32 && p->dtype != TN_F64)
                return TN__FAIL_INT("%s: parameter %d has dtype %s; the optimizers update float32 and float64 tensors", fn, i, tn_dtype_name(p->dtype));
            if (gr->dtype != p->dtype || gr->ndim != p->ndim || memcmp(gr->shape, p->shape, (size_t)p->ndim * sizeof(int64_t)))
                return TN__FAIL_INT("%s: parameter %d has shape %s and dtype %s but its grad has shape %s and dtype %s", fn, i,
                                    TN__SHAPE(p), tn_dtype_name(p->dtype), TN__SHAPE(gr), tn_dtype_name(gr->dtype));
            if (tn__optim_init_state(fn, o, i, g)) return -1;
            tn_tensor *s[3];
            tn__optim_buffers(o, i, s);
            for (int k = 0; k < 3; k++)
                if (s[k] && (s[k]->dtype != p->dtype || s[k]->device != p->device || tn_numel(s[k]) != tn_numel(p)))
                    return TN__FAIL_INT("%s: parameter %d is %s %s but its optimizer state is %s %s: it changed after the first step "
                                        "(tn_module_to_dtype / tn_module_to); create the optimizer after moving the model",
                                        fn, i, tn_dtype_name(p->dtype), TN__SHAPE(p), tn_dtype_name(s[k]->dtype), TN__SHAPE(s[k]));
        }
    }
    return 0;
}
static int tn__optim_step(const char *fn, tn_optim *o) {
    if (tn__optim_prepare(fn, o)) return -1;
    int rc = 0;
    tn_no_grad_begin();
    for (int gi = 0; gi < o->ng && rc == 0; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        for (int i = g->first; i < g->first + g->n && rc == 0; i++) {
            tn_tensor *p = o->params[i], *gr = p->grad, *s[3];
            if (!gr) continue;
            tn__optk k;
            tn__optim_coefs(o, i, g, &k);
            tn__optim_buffers(o, i, s);
            /* strided parameters or grads go through contiguous copies (the only allocation) */
            tn_tensor *pc = tn_is_contiguous(p) ? NULL : tn__copy_as(p, p->dtype, p->device);
            tn_tensor *gc = tn_is_contiguous(gr) ? NULL : tn__copy_as(gr, gr->dtype, p->device);
            if ((!pc && !tn_is_contiguous(p)) || (!gc && !tn_is_contiguous(gr))) {
                rc = TN__FAIL_INT("%s: out of memory copying a non-contiguous parameter", fn);
            } else {
                if (tn__backend(p->device)->optim(&k, pc ? pc : p, gc ? gc : gr, s)) rc = -1;
                if (pc && tn__copy(p, pc)) rc = -1;

                tn__bump_version(p);   /* as an in-place op on the parameter */
            }
            tn_release(pc);
            tn_release(gc);
        }
    }
    tn_no_grad_end();
    return rc;
}
TNDEF int tn_optim_step(tn_optim *o) {
    if (!o) return -1;
    if (o->kind == TN__LBFGS) return TN__FAIL_INT("tn_optim_step: LBFGS needs a closure: use tn_optim_step_closure");
    return tn__optim_step("tn_optim_step", o);
}

/* A NaN from the closure is its error: keep its message, say who saw it. */
static double tn__closure_failed(const char *fn) {
    char why[900];
    size_t l = strlen(tn_last_error());
    if (l >= sizeof why) l = sizeof why - 1;
    memcpy(why, tn_last_error(), l);
    why[l] = 0;
    tn__error("%s: the closure returned NaN%s%s%s", fn, why[0] ? " (" : "", why, why[0] ? ")" : "");
    return NAN;
}
static double tn__closure_call(tn_closure closure, void *user) {
    tn_enable_grad_begin();
    double f = closure(user);
    tn_enable_grad_end();
    return f;
}

/* ---- LBFGS: torch/optim/lbfgs.py, in float64 ---- */
/* Flat views of the parameters, in order: gather (mode 0: buf = param, 1: buf = grad or
   0), add (2: param += alpha * buf) or set (3: param = buf). */
static void tn__lbfgs_flat(tn_optim *o, double *buf, int mode, double alpha) {
    int64_t off = 0;
    for (int pi = 0; pi < o->np; pi++) {
        tn_tensor *p = o->params[pi], *t = mode == 1 ? p->grad : p;
        int64_t n = tn_numel(p), idx[TN_MAX_DIMS] = {0}, e;
        if (!t) { memset(buf + off, 0, (size_t)n * sizeof *buf); off += n; continue; }
        e = t->offset;
        for (int64_t i = 0; i < n; i++) {
            double *b = buf + off + i;
            if (t->dtype == TN_F32) {
                float *x = (float *)t->storage->data + e;
                if (mode <= 1) *b = *x; else *x = (float)(mode == 2 ? *x + alpha * *b : *b);
            } else {
                double *x = (double *)t->storage->data + e;
                if (mode <= 1) *b = *x; else *x = mode == 2 ? *x + alpha * *b : *b;
            }
            for (int d = t->ndim - 1; d >= 0; d--) { /* next index, row-major */
                e += t->strides[d];
                if (++idx[d] < t->shape[d]) break;
                e -= t->strides[d] * t->shape[d];
                idx[d] = 0;
            }
        }
        if (mode >= 2) tn__bump_version(p);
        off += n;
    }
}
static double tn__vdot(const double *a, const double *b, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
static double tn__vabsmax(const double *a, int64_t n, double scale) { /* max |a*scale|, NaN propagates */
    double m = n ? 0 : NAN;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(a[i] * scale);
        if (v != v) return v;
        if (v > m) m = v;
    }
    return m;
}
static double tn__py_max(double a, double b) { return b > a ? b : a; }   /* Python's max(a, b) */
static double tn__py_min(double a, double b) { return b < a ? b : a; }
static double tn__cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2, const double *bounds) {
    double xmin_bound = bounds ? bounds[0] : (x1 <= x2 ? x1 : x2), xmax_bound = bounds ? bounds[1] : (x1 <= x2 ? x2 : x1);
    double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
    double d2_square = d1 * d1 - g1 * g2;
    if (d2_square >= 0) {
        double d2 = sqrt(d2_square), min_pos;
        if (x1 <= x2) min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2));
        else min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
        return tn__py_min(tn__py_max(min_pos, xmin_bound), xmax_bound);
    }
    return (xmin_bound + xmax_bound) / 2.;
}
typedef struct tn__lbfgs_ctx {
    tn_optim *o;
    tn_closure closure;
    void *user;
    const char *fn;
    int64_t N;
} tn__lbfgs_ctx;
/* _directional_evaluate: loss and flat grad at x + t*d, then the parameters back to x. */
static int tn__lbfgs_dir_eval(tn__lbfgs_ctx *c, const double *x, double t, const double *d, double *f, double *g) {
    tn__lbfgs_flat(c->o, (double *)d, 2, t);
    *f = tn__closure_call(c->closure, c->user);
    tn__lbfgs_flat(c->o, g, 1, 0);
    tn__lbfgs_flat(c->o, (double *)x, 3, 0);
    if (*f != *f) return tn__closure_failed(c->fn), -1;
    return 0;
}
/* _strong_wolfe with its defaults (c1 1e-4, c2 0.9, tolerance_change 1e-9, max_ls 25).
   Python's tensors are never changed in place there, so its aliases are copies here.
   buf: 5 vectors of N. Returns 0 (f, g, t, evals set) or -1. */
static int tn__strong_wolfe(tn__lbfgs_ctx *c, const double *x, double t, const double *d, double f, const double *g0,
                            double gtd, double *buf, double *f_out, double *g_out, double *t_out, int64_t *evals) {
    const double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;
    const int max_ls = 25;
    const int64_t N = c->N;
    const size_t vb = (size_t)N * sizeof(double);
    double *g = buf, *g_new = buf + N, *g_prev = buf + 2 * N, *bg[2] = {buf + 3 * N, buf + 4 * N};
    double d_norm = tn__vabsmax(d, N, 1), f_new, bracket[2] = {0, 0}, bf[2] = {0, 0}, bgtd[2] = {0, 0};
    int nb = 0;
    memcpy(g, g0, vb);
    if (tn__lbfgs_dir_eval(c, x, t, d, &f_new, g_new)) return -1;
    int64_t ls_func_evals = 1;
    double gtd_new = tn__vdot(g_new, d, N);
    double t_prev = 0, f_prev = f, gtd_prev = gtd;
    memcpy(g_prev, g, vb);
    bool done = false;
    int ls_iter = 0;
    while (ls_iter < max_ls) {
        if (f_new > (f + c1 * t * gtd) || (ls_iter > 1 && f_new >= f_prev)) {
            bracket[0] = t_prev; bracket[1] = t; bf[0] = f_prev; bf[1] = f_new;
            memcpy(bg[0], g_prev, vb); memcpy(bg[1], g_new, vb);
            bgtd[0] = gtd_prev; bgtd[1] = gtd_new; nb = 2;
            break;
        }
        if (fabs(gtd_new) <= -c2 * gtd) {
            bracket[0] = t; bf[0] = f_new; memcpy(bg[0], g_new, vb); nb = 1;
            done = true;
            break;
        }
        if (gtd_new >= 0) {
            bracket[0] = t_prev; bracket[1] = t; bf[0] = f_prev; bf[1] = f_new;
            memcpy(bg[0], g_prev, vb); memcpy(bg[1], g_new, vb);
            bgtd[0] = gtd_prev; bgtd[1] = gtd_new; nb = 2;
            break;
        }
        /* interpolate */
        double bounds[2] = {t + 0.01 * (t - t_prev), t * 10}, tmp = t;
        t = tn__cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds);
        t_prev = tmp; f_prev = f_new; memcpy(g_prev, g_new, vb); gtd_prev = gtd_new;
        if (tn__lbfgs_dir_eval(c, x, t, d, &f_new, g_new)) return -1;
        ls_func_evals++;
        gtd_new = tn__vdot(g_new, d, N);
        ls_iter++;
    }
    if (ls_iter == max_ls) {
        bracket[0] = 0; bracket[1] = t; bf[0] = f; bf[1] = f_new;
        memcpy(bg[0], g, vb); memcpy(bg[1], g_new, vb); nb = 2;
    }
    /* zoom */
    bool insuf_progress = false;
    int low = bf[0] <= bf[nb - 1] ? 0 : 1, high = 1 - low;
    while (!done && ls_iter < max_ls) {
        if (fabs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
        t = tn__cubic_interpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1], NULL);
        double bmax = tn__py_max(bracket[0], bracket[1]), bmin = tn__py_min(bracket[0], bracket[1]);
        double eps = 0.1 * (bmax - bmin);
        if (tn__py_min(bmax - t, t - bmin) < eps) {
            if (insuf_progress || t >= bmax || t <= bmin) {
                t = fabs(t - bmax) < fabs(t - bmin) ? bmax - eps : bmin + eps;
                insuf_progress = false;
            } else {
                insuf_progress = true;
            }
        } else {
            insuf_progress = false;
        }
        if (tn__lbfgs_dir_eval(c, x, t, d, &f_new, g_new)) return -1;
        ls_func_evals++;
        gtd_new = tn__vdot(g_new, d, N);
        ls_iter++;
        if (f_new > (f + c1 * t * gtd) || f_new >= bf[low]) {
            bracket[high] = t; bf[high] = f_new; memcpy(bg[high], g_new, vb); bgtd[high] = gtd_new;
            low = bf[0] <= bf[1] ? 0 : 1;
            high = 1 - low;
        } else {
            if (fabs(gtd_new) <= -c2 * gtd) {
                done = true;
            } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
                bracket[high] = bracket[low]; bf[high] = bf[low]; memcpy(bg[high], bg[low], vb); bgtd[high] = bgtd[low];
            }
            bracket[low] = t; bf[low] = f_new; memcpy(bg[low], g_new, vb); bgtd[low] = gtd_new;
        }
    }
    *t_out = bracket[low];
    *f_out = bf[low];
    memcpy(g_out, bg[low], vb);
    *evals = ls_func_evals;
    return 0;
}
/* Drop the oldest history entry (old_dirs.pop(0), ...). */
static void tn__lbfgs_pop(tn__lbfgs *lb) {
    TN_FREE(lb->old_dirs[0]);
    TN_FREE(lb->old_stps[0]);
    memmove(lb->old_dirs, lb->old_dirs + 1, (size_t)(lb->nold - 1) * sizeof *lb->old_dirs);
    memmove(lb->old_stps, lb->old_stps + 1, (size_t)(lb->nold - 1) * sizeof *lb->old_stps);
    memmove(lb->ro, lb->ro + 1, (size_t)(lb->nold - 1) * sizeof *lb->ro);
    lb->nold--;
}
static int tn__lbfgs_reserve(tn__lbfgs *lb, int n) {
    if (n <= lb->cap) return 0;
    int cap = TN__MAX(n, 2 * lb->cap);
    double **a = (double **)TN_REALLOC(lb->old_dirs, (size_t)cap * sizeof *a);
    if (a) lb->old_dirs = a;
    double **b = a ? (double **)TN_REALLOC(lb->old_stps, (size_t)cap * sizeof *b) : NULL;
    if (b) lb->old_stps = b;
    double *r = b ? (double *)TN_REALLOC(lb->ro, (size_t)cap * sizeof *r) : NULL;
    if (!r) return -1;
    lb->ro = r;
    lb->cap = cap;
    return 0;
}
static double tn__lbfgs_step(const char *fn, tn_optim *o, tn_closure closure, void *user) {
    const tn__pgroup *g = &o->groups[0];
    tn__lbfgs *lb = o->lb;
    const double lr = tn__pg_get(g, "lr"), tolerance_grad = tn__pg_get(g, "tolerance_grad");
    const double tolerance_change = tn__pg_get(g, "tolerance_change");
    const int64_t max_iter = (int64_t)tn__pg_get(g, "max_iter"), max_eval = (int64_t)tn__pg_get(g, "max_eval");
    const int64_t history_size = (int64_t)tn__pg_get(g, "history_size");
    const bool wolfe = tn__pg_get(g, "line_search_fn") != 0;
    int64_t N = 0;
    for (int i = 0; i < o->np; i++) {
        tn_tensor *p = o->params[i];
        if (p->device != TN_CPU) return tn__error("%s: parameter %d is on %s; LBFGS runs on CPU tensors only", fn, i, tn_device_name(p->device)), NAN;
        N += tn_numel(p);
    }
    if (lb->has_d && lb->N != N) return tn__error("%s: the parameters changed size since the last step", fn), NAN;
    lb->N = N;
    const size_t vb = (size_t)N * sizeof(double);
    /* flat_grad, q, x_init, and 5 line-search vectors; d and prev_flat_grad live in the state */
    double *work = (double *)TN_MALLOC(TN__MAX(vb, 1) * 8), *y = NULL, *s = NULL, *al = NULL;
    if (!lb->d) lb->d = (double *)TN_MALLOC(TN__MAX(vb, 1));
    if (!lb->prev_flat_grad) lb->prev_flat_grad = (double *)TN_MALLOC(TN__MAX(vb, 1));
    if (!work || !lb->d || !lb->prev_flat_grad) { TN_FREE(work); return tn__error("%s: out of memory", fn), NAN; }
    double *flat_grad = work, *q = work + N, *x_init = work + 2 * N, *ls = work + 3 * N;
    double orig_loss = NAN, result = NAN;
    int64_t n_iter = 0, current_evals = 0;
    double loss = NAN, t = 0;
    bool opt_cond = false;

    tn_no_grad_begin();
    if (!lb->has_counts) { lb->has_counts = true; lb->func_evals = 0; lb->n_iter = 0; }
    orig_loss = tn__closure_call(closure, user);
    if (orig_loss != orig_loss) { tn__closure_failed(fn); goto done; }
    loss = orig_loss;
    current_evals = 1;
    lb->func_evals += 1;
    tn__lbfgs_flat(o, flat_grad, 1, 0);
    opt_cond = tn__vabsmax(flat_grad, N, 1) <= tolerance_grad;
    if (opt_cond) { result = orig_loss; goto done; }

    while (n_iter < max_iter) {
        n_iter++;
        lb->n_iter++;
        /* direction */
        if (lb->n_iter == 1) {
            for (int64_t i = 0; i < N; i++) lb->d[i] = -flat_grad[i];
            while (lb->nold) tn__lbfgs_pop(lb);
            lb->has_hist = true;
            lb->H_diag = 1;
            lb->has_H = true;
        } else {
            y = (double *)TN_MALLOC(TN__MAX(vb, 1));
            s = (double *)TN_MALLOC(TN__MAX(vb, 1));
            if (!y || !s || tn__lbfgs_reserve(lb, lb->nold + 1)) { tn__error("%s: out of memory", fn); goto done; }
            for (int64_t i = 0; i < N; i++) { y[i] = flat_grad[i] - lb->prev_flat_grad[i]; s[i] = lb->d[i] * lb->t; }
            double ys = tn__vdot(y, s, N);
            if (ys > 1e-10) {
                if (lb->nold == history_size) tn__lbfgs_pop(lb);
                lb->old_dirs[lb->nold] = y;
                lb->old_stps[lb->nold] = s;
                lb->ro[lb->nold++] = 1. / ys;
                y = s = NULL;
                lb->H_diag = ys / tn__vdot(lb->old_dirs[lb->nold - 1], lb->old_dirs[lb->nold - 1], N);
            } else {
                TN_FREE(y); TN_FREE(s);
                y = s = NULL;
            }
            int num_old = lb->nold;
            TN_FREE(al);
            al = (double *)TN_MALLOC((size_t)TN__MAX(num_old, 1) * sizeof *al);
            if (!al) { tn__error("%s: out of memory", fn); goto done; }
            for (int64_t i = 0; i < N; i++) q[i] = -flat_grad[i];
            for (int i = num_old - 1; i >= 0; i--) {
                al[i] = tn__vdot(lb->old_stps[i], q, N) * lb->ro[i];
                for (int64_t j = 0; j < N; j++) q[j] += -al[i] * lb->old_dirs[i][j];
            }
            for (int64_t j = 0; j < N; j++) lb->d[j] = q[j] * lb->H_diag;   /* d = r */
            for (int i = 0; i < num_old; i++) {
                double be_i = tn__vdot(lb->old_dirs[i], lb->d, N) * lb->ro[i];
                for (int64_t j = 0; j < N; j++) lb->d[j] += (al[i] - be_i) * lb->old_stps[i][j];
            }
        }
        lb->has_d = true;
        memcpy(lb->prev_flat_grad, flat_grad, vb);
        lb->has_prev = true;
        lb->prev_loss = loss;
        lb->has_prev_loss = true;
        /* step length */
        if (lb->n_iter == 1) {
            double sum = 0;
            for (int64_t i = 0; i < N; i++) sum += fabs(flat_grad[i]);
            double inv = 1. / sum;
            t = (inv < 1. ? inv : 1.) * lr;
        } else {
            t = lr;
        }
        lb->t = t;
        lb->has_t = true;
        double gtd = tn__vdot(flat_grad, lb->d, N);
        if (gtd > -tolerance_change) break;
        int64_t ls_func_evals = 0;
        if (wolfe) {
            tn__lbfgs_ctx c;
            c.o = o; c.closure = closure; c.user = user; c.fn = fn; c.N = N;
            tn__lbfgs_flat(o, x_init, 0, 0);
            if (tn__strong_wolfe(&c, x_init, t, lb->d, loss, flat_grad, gtd, ls, &loss, flat_grad, &t, &ls_func_evals)) goto done;
            lb->t = t;
            tn__lbfgs_flat(o, lb->d, 2, t);
            opt_cond = tn__vabsmax(flat_grad, N, 1) <= tolerance_grad;
        } else {
            tn__lbfgs_flat(o, lb->d, 2, t);
            if (n_iter != max_iter) {
                loss = tn__closure_call(closure, user);
                if (loss != loss) { tn__closure_failed(fn); goto done; }
                tn__lbfgs_flat(o, flat_grad, 1, 0);
                opt_cond = tn__vabsmax(flat_grad, N, 1) <= tolerance_grad;
                ls_func_evals = 1;
            }
        }
        current_evals += ls_func_evals;
        lb->func_evals += ls_func_evals;
        /* stopping conditions */
        if (n_iter == max_iter) break;
        if (current_evals >= max_eval) break;
        if (opt_cond) break;
        if (tn__vabsmax(lb->d, N, t) <= tolerance_change) break;
        if (fabs(loss - lb->prev_loss) < tolerance_change) break;
    }
    result = orig_loss;
done:
    tn_no_grad_end();
    TN_FREE(y);
    TN_FREE(s);
    TN_FREE(al);
    TN_FREE(work);
    return result;
}

TNDEF double tn_optim_step_closure(tn_optim *o, tn_closure closure, void *user) {
    const char *fn = "tn_optim_step_closure";
    if (!o) return NAN;
    if (o->kind == TN__LBFGS) {
        if (!closure) return tn__error("%s: LBFGS needs a closure (got NULL)", fn), NAN;
        return tn__lbfgs_step(fn, o, closure, user);
    }
    double loss = 0;
    if (closure) {
        loss = tn__closure_call(closure, user);
        if (loss != loss) return tn__closure_failed(fn);
    }
    return tn__optim_step(fn, o) ? NAN : loss;
}

/* ---- state_dict: PyTorch's {"state": {i: {...}}, "param_groups": [...]} flattened ---- */
static int tn__dict_put(tn_dict *d, const char *key, tn_tensor *t) { /* takes t's reference */
    if (!t) return -1;
    int rc = tn_dict_set(d, key, t);
    tn_release(t);
    return rc;
}
static tn_tensor *tn__optim_scalar(double v, tn_dtype dtype) {
    tn_tensor *t = tn__new(dtype, TN_CPU, NULL, 0);
    if (!t) return NULL;
    if (dtype == TN_F32) *(float *)t->storage->data = (float)v;
    else if (dtype == TN_I64) *(int64_t *)t->storage->data = (int64_t)v;
    else *(double *)t->storage->data = v;
    return t;
}
static tn_tensor *tn__optim_f64(const double *v, const int64_t *shape, int ndim) {
    tn_tensor *t = tn__new(TN_F64, TN_CPU, shape, ndim);
    if (t && v) memcpy(t->storage->data, v, (size_t)tn_numel(t) * sizeof(double));
    return t;
}
/* The one value of a one-element CPU tensor (any dtype but the GPU-only ones). */
static double tn__optim_read1(const tn_tensor *t) {
    if (t->device != TN_CPU) return tn_item((tn_tensor *)t);
    const char *p = (const char *)t->storage->data + t->offset * (int64_t)tn_dtype_size(t->dtype);
    switch (t->dtype) {
    case TN_F32: return *(const float *)p;
    case TN_F64: return *(const double *)p;
    case TN_I32: return *(const int32_t *)p;
    case TN_I64: return (double)*(const int64_t *)p;
    case TN_U8: return *(const uint8_t *)p;
    case TN_BOOL: return *(const bool *)p;
    default: return NAN;
    }
}
static bool tn__optim_readable(const tn_tensor *t) {
    return t && t->dtype != TN_F16 && t->dtype != TN_BF16;
}
/* "betas[0]" -> "<prefix>betas.0" */
static void tn__optim_dict_key(char *out, size_t cap, const char *prefix, const char *key) {
    size_t l = strlen(key);
    if (l > 3 && key[l - 3] == '[' && key[l - 1] == ']') snprintf(out, cap, "%s%.*s.%c", prefix, (int)(l - 3), key, key[l - 2]);
    else snprintf(out, cap, "%s%s", prefix, key);
}
static int tn__lbfgs_save(const tn__lbfgs *lb, tn_dict *d) {
    int rc = 0;
    int64_t sh[2] = {lb->nold, lb->N};
    if (lb->has_counts) {
        rc |= tn__dict_put(d, "state.0.func_evals", tn__optim_scalar((double)lb->func_evals, TN_I64));
        rc |= tn__dict_put(d, "state.0.n_iter", tn__optim_scalar((double)lb->n_iter, TN_I64));
    }
    if (lb->has_d) rc |= tn__dict_put(d, "state.0.d", tn__optim_f64(lb->d, &lb->N, 1));
    if (lb->has_t) rc |= tn__dict_put(d, "state.0.t", tn__optim_scalar(lb->t, TN_F64));
    if (lb->has_hist) {
        tn_tensor *dirs = tn__optim_f64(NULL, sh, 2), *stps = tn__optim_f64(NULL, sh, 2);
        for (int i = 0; dirs && stps && i < lb->nold; i++) {
            memcpy((double *)dirs->storage->data + i * lb->N, lb->old_dirs[i], (size_t)lb->N * sizeof(double));
            memcpy((double *)stps->storage->data + i * lb->N, lb->old_stps[i], (size_t)lb->N * sizeof(double));
        }
        rc |= tn__dict_put(d, "state.0.old_dirs", dirs);
        rc |= tn__dict_put(d, "state.0.old_stps", stps);
        rc |= tn__dict_put(d, "state.0.ro", tn__optim_f64(lb->ro, sh, 1));
    }
    if (lb->has_H) rc |= tn__dict_put(d, "state.0.H_diag", tn__optim_scalar(lb->H_diag, TN_F64));
    if (lb->has_prev) rc |= tn__dict_put(d, "state.0.prev_flat_grad", tn__optim_f64(lb->prev_flat_grad, &lb->N, 1));
    if (lb->has_prev_loss) rc |= tn__dict_put(d, "state.0.prev_loss", tn__optim_scalar(lb->prev_loss, TN_F64));
    return rc;
}
TNDEF tn_dict *tn_optim_state_dict(const tn_optim *o) {
    const char *fn = "tn_optim_state_dict";
    if (!o) return NULL;
    tn_dict *d = tn_dict_new();
    if (!d) return NULL;
    char key[128], prefix[48];
    int rc = 0;
    for (int i = 0; i < o->np; i++)
        for (int k = 0; k < TN__OPT_NSLOT; k++) {
            tn_tensor *st = o->state[i * TN__OPT_NSLOT + k];
            if (!st) continue;
            snprintf(key, sizeof key, "state.%d.%s", i, tn__optim_slots[o->kind][k]);
            rc |= tn__dict_put(d, key, tn__copy_as(st, st->dtype, TN_CPU));
        }
    if (o->lb) rc |= tn__lbfgs_save(o->lb, d);
    for (int gi = 0; gi < o->ng; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        snprintf(prefix, sizeof prefix, "param_groups.%d.", gi);
        for (int j = 0; j < g->nv; j++) {
            const tn__optdef *def = tn__optim_def(o->kind, g->key[j]);
            tn__optim_dict_key(key, sizeof key, prefix, g->key[j]);
            if (def && def->type == 'w') rc |= tn_dict_set_meta(d, key, g->val[j] != 0 ? "strong_wolfe" : "None");
            else rc |= tn__dict_put(d, key, tn__optim_scalar(g->val[j], TN_F64));
        }
        int64_t n = g->n;
        tn_tensor *ids = tn__new(TN_I64, TN_CPU, &n, 1);
        for (int j = 0; ids && j < g->n; j++) ((int64_t *)ids->storage->data)[j] = g->first + j;
        snprintf(key, sizeof key, "%sparams", prefix);
        rc |= tn__dict_put(d, key, ids);
    }
    if (rc) {
        tn_dict_free(d);
        return (tn_dict *)tn__error("%s: out of memory", fn);
    }
    return d;
}

/* A floating or integer CPU tensor as float64 values, row-major. */
static int tn__optim_read_f64(const tn_tensor *t, double *out) {
    tn_tensor *c = tn__copy_as((tn_tensor *)t, TN_F64, TN_CPU);
    if (!c) return -1;
    memcpy(out, c->storage->data, (size_t)tn_numel(c) * sizeof(double));
    tn_release(c);
    return 0;
}
/* LBFGS state from sd (already known to belong to parameter 0); lb is filled in. */
static int tn__lbfgs_load(const char *fn, const tn_optim *o, const tn_dict *sd, const char *prefix, tn__lbfgs *lb) {
    static const char *const names[] = {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss"};
    const tn_tensor *v[10];
    char key[128];
    int64_t N = 0;
    for (int i = 0; i < o->np; i++) N += tn_numel(o->params[i]);
    lb->N = N;
    for (int i = 0; i < 10; i++) {
        snprintf(key, sizeof key, "%s%s", prefix, names[i]);
        v[i] = tn_dict_get(sd, key);
        if (!v[i]) continue;
        if (!tn__optim_readable(v[i])) return TN__FAIL_INT("%s: '%s' must not be float16 or bfloat16", fn, key);
        bool scalar = i <= 1 || i == 3 || i == 7 || i == 9;
        bool ok = scalar ? tn_numel(v[i]) == 1 : (i == 2 || i == 8) ? v[i]->ndim == 1 && v[i]->shape[0] == N
                : i == 6 ? v[i]->ndim == 1 : v[i]->ndim == 2 && v[i]->shape[1] == N;
        if (!ok)
            return TN__FAIL_INT("%s: '%s' has shape %s, which does not fit LBFGS parameters of %lld elements", fn, key,
                                TN__SHAPE(v[i]), (long long)N);
    }
    bool hist = v[4] || v[5] || v[6];
    if (hist && !(v[4] && v[5] && v[6] && v[4]->shape[0] == v[5]->shape[0] && v[4]->shape[0] == v[6]->shape[0]))
        return TN__FAIL_INT("%s: LBFGS history needs old_dirs [k, N], old_stps [k, N] and ro [k] of one length k", fn);
    if (v[0] && v[1]) { lb->has_counts = true; lb->func_evals = (int64_t)tn__optim_read1(v[0]); lb->n_iter = (int64_t)tn__optim_read1(v[1]); }
    if (v[3]) { lb->has_t = true; lb->t = tn__optim_read1(v[3]); }
    if (v[7]) { lb->has_H = true; lb->H_diag = tn__optim_read1(v[7]); }
    if (v[9]) { lb->has_prev_loss = true; lb->prev_loss = tn__optim_read1(v[9]); }
    size_t vb = (size_t)TN__MAX(N, 1) * sizeof(double);
    if (v[2]) { lb->has_d = true; if (!(lb->d = (double *)TN_MALLOC(vb)) || tn__optim_read_f64(v[2], lb->d)) return -1; }
    if (v[8]) { lb->has_prev = true; if (!(lb->prev_flat_grad = (double *)TN_MALLOC(vb)) || tn__optim_read_f64(v[8], lb->prev_flat_grad)) return -1; }
    if (hist) {
        int k = (int)v[6]->shape[0];
        double *all = (double *)TN_MALLOC((size_t)TN__MAX((int64_t)k * N, 1) * sizeof(double));
        lb->has_hist = true;
        if (!all || tn__lbfgs_reserve(lb, k) || tn__optim_read_f64(v[6], lb->ro)) { TN_FREE(all); return -1; }
        for (int w = 0; w < 2; w++) {
            if (tn__optim_read_f64(v[4 + w], all)) { TN_FREE(all); return -1; }
            for (int i = 0; i < k; i++) {
                double *row = (double *)TN_MALLOC(vb);
                if (!row) { TN_FREE(all); return -1; }
                memcpy(row, all + (int64_t)i * N, (size_t)N * sizeof(double));
                (w ? lb->old_stps : lb->old_dirs)[i] = row;
                if (w) lb->nold = i + 1;
                else lb->old_stps[i] = NULL;
            }
        }
        TN_FREE(all);
    }
    return 0;
}
TNDEF int tn_optim_load_state_dict(tn_optim *o, const tn_dict *sd) {
    const char *fn = "tn_optim_load_state_dict";
    if (!o || !sd) return -1;
    char key[128], prefix[48];
    int G = 0, rc = -1;
    while (snprintf(key, sizeof key, "param_groups.%d.params", G), tn_dict_contains(sd, key)) G++;
    if (G != o->ng)
        return TN__FAIL_INT("%s: loaded state dict has a different number of parameter groups (%d; the optimizer has %d)", fn, G, o->ng);
    int64_t *ids = (int64_t *)TN_MALLOC((size_t)o->np * sizeof *ids);
    tn__pgroup *groups = (tn__pgroup *)TN_MALLOC((size_t)o->ng * sizeof *groups);
    tn_tensor **state = (tn_tensor **)TN_MALLOC((size_t)o->np * TN__OPT_NSLOT * sizeof *state);
    tn__lbfgs *lb = o->kind == TN__LBFGS ? tn__lbfgs_new() : NULL;
    if (state) memset(state, 0, (size_t)o->np * TN__OPT_NSLOT * sizeof *state);
    if (!ids || !groups || !state || (o->kind == TN__LBFGS && !lb)) { tn__error("%s: out of memory", fn); goto done; }
    /* saved parameter ids map to ours by position, as PyTorch */
    for (int gi = 0; gi < G; gi++) {
        const tn__pgroup *g = &o->groups[gi];
        snprintf(key, sizeof key, "param_groups.%d.params", gi);
        tn_tensor *pt = tn_dict_get(sd, key);
        if (!pt || pt->ndim != 1 || !tn__is_int(pt->dtype) || pt->device != TN_CPU) {
            tn__error("%s: '%s' must be a 1-d integer tensor of parameter indices", fn, key);
            goto done;
        }
        if (pt->shape[0] != g->n) {
            tn__error("%s: loaded state dict contains a parameter group that doesn't match the size of optimizer's group "
                      "(group %d: %lld saved, %d here)", fn, gi, (long long)pt->shape[0], g->n);
            goto done;
        }
        for (int j = 0; j < g->n; j++) {
            const char *p = (const char *)pt->storage->data + (pt->offset + j * pt->strides[0]) * (int64_t)tn_dtype_size(pt->dtype);
            ids[g->first + j] = pt->dtype == TN_I64 ? *(const int64_t *)p : pt->dtype == TN_I32 ? *(const int32_t *)p : *(const uint8_t *)p;
            for (int q = 0; q < g->first + j; q++)
                if (ids[q] == ids[g->first + j]) { tn__error("%s: parameter id %lld appears twice in param_groups", fn, (long long)ids[q]); goto done; }
        }
    }
    /* group options: every option of the kind, plus the schedulers' keys the dict has */
    for (int gi = 0; gi < G; gi++) {
        tn__pgroup *ng = &groups[gi];
        ng->first = o->groups[gi].first;
        ng->n = o->groups[gi].n;
        ng->nv = 0;
        snprintf(prefix, sizeof prefix, "param_groups.%d.", gi);
        for (int j = 0; j < o->groups[gi].nv; j++) {
            const char *name = o->groups[gi].key[j];
            const tn__optdef *def = tn__optim_def(o->kind, name);
            if (!def) continue;
            tn__optim_dict_key(key, sizeof key, prefix, name);
            double v;
            if (def->type == 'w') {
                const char *m = tn_dict_get_meta(sd, key);
                if (!m) { tn__error("%s: missing key '%s' (metadata: None or strong_wolfe)", fn, key); goto done; }
                if (!strcmp(m, "None")) v = 0;
                else if (!strcmp(m, "strong_wolfe") || !strcmp(m, "'strong_wolfe'")) v = 1;
                else { tn__error("%s: '%s' is '%s' (expected None or strong_wolfe)", fn, key, m); goto done; }
            } else {
                tn_tensor *t = tn_dict_get(sd, key);
                if (!t) { tn__error("%s: missing key '%s'", fn, key); goto done; }
                if (!tn__optim_readable(t) || tn_numel(t) != 1) { tn__error("%s: '%s' should hold one number (shape %s)", fn, key, TN__SHAPE(t)); goto done; }
                v = tn__optim_read1(t);
            }
            if (tn__pg_set(fn, ng, name, v)) goto done;
        }
        size_t pl = strlen(prefix);
        for (int i = 0; i < tn_dict_len(sd); i++) {
            const char *k = tn_dict_key(sd, i), *name = k + pl;
            if (strncmp(k, prefix, pl) || !strcmp(name, "params")) continue;
            char ik[40];
            size_t l = strlen(name);
            if (l > 2 && name[l - 2] == '.' && (name[l - 1] == '0' || name[l - 1] == '1')) snprintf(ik, sizeof ik, "%.*s[%c]", (int)(l - 2), name, name[l - 1]);
            else snprintf(ik, sizeof ik, "%s", name);
            if (tn__optim_def(o->kind, ik)) continue;
            tn_tensor *t = tn_dict_value(sd, i);
            if (!tn__optim_readable(t) || tn_numel(t) != 1) { tn__error("%s: '%s' should hold one number", fn, k); goto done; }
            if (tn__pg_set(fn, ng, ik, tn__optim_read1(t))) goto done;
        }
    }
    /* state */
    for (int i = 0; i < tn_dict_len(sd); i++) {
        const char *k = tn_dict_key(sd, i);
        if (!strncmp(k, "param_groups.", 13)) {
            char *end;
            long gi = strtol(k + 13, &end, 10);
            if (end == k + 13 || *end != '.' || gi < 0 || gi >= G) { tn__error("%s: unexpected key '%s' (the optimizer has %d groups)", fn, k, G); goto done; }
            continue;
        }
        if (strncmp(k, "state.", 6)) { tn__error("%s: unexpected key '%s'", fn, k); goto done; }
        char *end;
        long long id = strtoll(k + 6, &end, 10);
        if (end == k + 6 || *end != '.') { tn__error("%s: unexpected key '%s' (expected state.<index>.<name>)", fn, k); goto done; }
        const char *name = end + 1;
        int pi = -1;
        for (int j = 0; j < o->np && pi < 0; j++) if (ids[j] == id) pi = j;
        if (pi < 0) { tn__error("%s: '%s' is the state of parameter %lld, which is in no parameter group", fn, k, id); goto done; }
        if (o->kind == TN__LBFGS) {
            static const char *const known = " func_evals n_iter d t old_dirs old_stps ro H_diag prev_flat_grad prev_loss ";
            char w[40];
            snprintf(w, sizeof w, " %s ", name);
            if (pi != 0 || !strstr(known, w)) { tn__error("%s: unexpected key '%s' (LBFGS keeps its state under parameter 0)", fn, k); goto done; }
            continue;
        }
        int slot = tn__optim_slot_index(o->kind, name);
        if (slot < 0) { tn__error("%s: unexpected key '%s' (%s keeps no state '%s')", fn, k, tn__optim_names[o->kind], name); goto done; }
        tn_tensor *t = tn_dict_value(sd, i), *p = o->params[pi], *c;
        if (!tn__optim_readable(t)) { tn__error("%s: '%s' must not be float16 or bfloat16", fn, k); goto done; }
        if (tn__optim_scalar_slot(name)) {
            if (tn_numel(t) != 1) { tn__error("%s: '%s' should hold one number (shape %s)", fn, k, TN__SHAPE(t)); goto done; }
            c = tn__optim_scalar(tn__optim_read1(t), TN_F32);
        } else {
            if (t->ndim != p->ndim || memcmp(t->shape, p->shape, (size_t)p->ndim * sizeof(int64_t)) || !tn_dtype_is_floating(t->dtype)) {
                tn__error("%s: '%s' has shape %s and dtype %s, but parameter %d has shape %s", fn, k, TN__SHAPE(t), tn_dtype_name(t->dtype), pi, TN__SHAPE(p));
                goto done;
            }
            c = tn__copy_as(t, p->dtype, p->device);   /* a copy in the parameter's dtype and on its device, as PyTorch casts */
        }
        if (!c) { tn__error("%s: out of memory", fn); goto done; }
        tn_release(state[pi * TN__OPT_NSLOT + slot]);
        state[pi * TN__OPT_NSLOT + slot] = c;
    }
    if (lb) {
        snprintf(prefix, sizeof prefix, "state.%lld.", (long long)ids[0]);
        if (tn__lbfgs_load(fn, o, sd, prefix, lb)) { if (!strstr(tn_last_error(), fn)) tn__error("%s: out of memory", fn); goto done; }
    }
    /* commit */
    for (int i = 0; i < o->np * TN__OPT_NSLOT; i++) { tn_release(o->state[i]); o->state[i] = state[i]; state[i] = NULL; }
    for (int i = 0; i < o->np; i++) o->fresh[i] = 0;
    memcpy(o->groups, groups, (size_t)o->ng * sizeof *groups);
    if (lb) { tn__lbfgs_free(o->lb); o->lb = lb; lb = NULL; }
    rc = 0;
done:
    for (int i = 0; state && i < o->np * TN__OPT_NSLOT; i++) tn_release(state[i]);
    TN_FREE(state);
    TN_FREE(groups);
    TN_FREE(ids);
    tn__lbfgs_free(lb);
    return rc;
}

/* ---- LR schedulers: torch/optim/lr_scheduler.py ---- */
enum { TN__STEPLR, TN__MULTISTEPLR, TN__EXPONENTIALLR, TN__COSINELR, TN__WARMRESTARTS, TN__LINEARLR, TN__CONSTANTLR,
       TN__POLYNOMIALLR, TN__ONECYCLELR, TN__PLATEAU, TN__LAMBDALR, TN__SEQUENTIALLR };
static const char *const tn__sched_names[] = {"StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR", "ReduceLROnPlateau", "LambdaLR", "SequentialLR"};
static const char *const tn__sched_valid[] = {"step_size, gamma, last_epoch", "milestones, gamma, last_epoch", "gamma, last_epoch",
    "T_max, eta_min, last_epoch", "T_0, T_mult, eta_min, last_epoch", "start_factor, end_factor, total_iters, last_epoch",
    "factor, total_iters, last_epoch", "total_iters, power, last_epoch",
    ("max_lr, total_steps, epochs, steps_per_epoch, pct_start, anneal_strategy, cycle_momentum, base_momentum, max_momentum, "
     "div_factor, final_div_factor, three_phase, last_epoch"),
    "mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps"};
#define TN__PI 3.14159265358979323846
#define TN__MAX_MILESTONES 64

typedef struct tn__phase { double end_step; const char *start_lr, *end_lr, *start_m, *end_m; } tn__phase;
struct tn_lr_scheduler {
    int kind;
    tn_optim *o;
    int ng;                                   /* groups when it was made */
    int64_t last_epoch, step_count;
    double *base_lrs, *last_lr, *vals;        /* ng each (one allocation) */
    double gamma, eta_min, factor, end_factor, power, T_max, T_cur;   /* factor: LinearLR's start_factor too */
    int64_t step_size, total_iters, T_0, T_mult, T_i;
    int nmil;
    int64_t milestones[TN__MAX_MILESTONES];   /* MultiStepLR (sorted), SequentialLR (as given) */
    int64_t total_steps;                      /* OneCycleLR */
    int nphases;
    tn__phase phase[3];
    bool linear, cycle_momentum, use_beta1;
    bool mode_max, thr_abs, has_default_min_lr; /* ReduceLROnPlateau */
    double threshold, best, eps, default_min_lr;
    int64_t patience, cooldown, cooldown_counter, num_bad_epochs;
    double *min_lrs;
    double (*lambda)(int64_t epoch, int group, void *user); /* LambdaLR */
    void *user;
    int nchild;                               /* SequentialLR */
    tn_lr_scheduler **child;
};

static int64_t tn__bisect_right(const int64_t *a, int n, int64_t x) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (x < a[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}
static double tn__py_fmod(double a, double b) { /* Python's %: the sign of b */
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static int64_t tn__py_floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static int tn__sched_ngroups(const tn_lr_scheduler *s) { return TN__MIN(s->ng, s->o->ng); }
static double tn__sched_anneal(const tn_lr_scheduler *s, double start, double end, double pct) {
    if (s->linear) return (end - start) * pct + start;
    double cos_out = cos(TN__PI * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
}

/* get_lr(): the chainable form, from the groups' current lr. */
static int tn__sched_get_lr(tn_lr_scheduler *s, double *v) {
    const char *fn = "tn_lr_scheduler_step";
    const int64_t e = s->last_epoch;
    for (int gi = 0; gi < tn__sched_ngroups(s); gi++) {
        tn__pgroup *g = &s->o->groups[gi];
        double lr = tn__pg_get(g, "lr"), base = s->base_lrs[gi];
        switch (s->kind) {
        case TN__STEPLR: v[gi] = (e == 0 || e % s->step_size != 0) ? lr : lr * s->gamma; break;
        case TN__MULTISTEPLR: {
            int count = 0;
            for (int i = 0; i < s->nmil; i++) count += s->milestones[i] == e;
            v[gi] = count ? lr * pow(s->gamma, count) : lr;
            break;
        }
        case TN__EXPONENTIALLR: v[gi] = e == 0 ? lr : lr * s->gamma; break;
        case TN__COSINELR: {
            double T = s->T_max, eta = s->eta_min;
            if (e == 0) v[gi] = lr;
            else if (s->step_count == 1 && e > 0) v[gi] = eta + (base - eta) * (1 + cos((double)e * TN__PI / T)) / 2;
            else if (tn__py_fmod((double)(e - 1) - T, 2 * T) == 0) v[gi] = lr + (base - eta) * (1 - cos(TN__PI / T)) / 2;
            else v[gi] = (1 + cos(TN__PI * (double)e / T)) / (1 + cos(TN__PI * (double)(e - 1) / T)) * (lr - eta) + eta;
            break;
        }
        case TN__WARMRESTARTS:
            v[gi] = s->eta_min + (base - s->eta_min) * (1 + cos(TN__PI * s->T_cur / (double)s->T_i)) / 2;
            break;
        case TN__LINEARLR: {
            double sf = s->factor, ef = s->end_factor;
            if (e == 0) v[gi] = lr * sf;
            else if (e > s->total_iters) v[gi] = lr;
            else v[gi] = lr * (1.0 + (ef - sf) / ((double)s->total_iters * sf + (double)(e - 1) * (ef - sf)));
            break;
        }
        case TN__CONSTANTLR:
            v[gi] = e == 0 ? lr * s->factor : e != s->total_iters ? lr : lr * (1.0 / s->factor);
            break;
        case TN__POLYNOMIALLR:
            if (e == 0 || e > s->total_iters) v[gi] = lr;
            else v[gi] = lr * pow((1.0 - (double)e / (double)s->total_iters) / (1.0 - (double)(e - 1) / (double)s->total_iters), s->power);
            break;
        case TN__LAMBDALR: v[gi] = base * s->lambda(e, gi, s->user); break;
        case TN__ONECYCLELR: {
            if (e > s->total_steps)
                return TN__FAIL_INT("%s: Tried to step %lld times. The specified number of total steps is %lld", fn, (long long)e, (long long)s->total_steps);
            double start_step = 0, out = 0, m = 0;
            for (int i = 0; i < s->nphases; i++) {
                const tn__phase *ph = &s->phase[i];
                if ((double)e <= ph->end_step || i == s->nphases - 1) {
                    const char *keys[4] = {ph->start_lr, ph->end_lr, ph->start_m, ph->end_m};
                    for (int j = 0; j < (s->cycle_momentum ? 4 : 2); j++)
                        if (tn__pg_find(g, keys[j]) < 0) return TN__FAIL_INT("%s: param group %d has no '%s' (OneCycleLR sets it when last_epoch is -1)", fn, gi, keys[j]);
                    if (ph->end_step == start_step)
                        return TN__FAIL_INT("%s: OneCycleLR phase %d has zero length (total_steps %lld): float division by zero", fn, i, (long long)s->total_steps);
                    double pct = ((double)e - start_step) / (ph->end_step - start_step);
                    out = tn__sched_anneal(s, tn__pg_get(g, ph->start_lr), tn__pg_get(g, ph->end_lr), pct);
                    if (s->cycle_momentum) m = tn__sched_anneal(s, tn__pg_get(g, ph->start_m), tn__pg_get(g, ph->end_m), pct);
                    break;
                }
                start_step = ph->end_step;
            }
            v[gi] = out;
            if (s->cycle_momentum && tn__pg_set(fn, g, s->use_beta1 ? "betas[0]" : "momentum", m)) return -1;
            break;
        }
        default: v[gi] = lr; break;
        }
    }
    return 0;
}
/* _get_closed_form_lr(), used when stepped to a given epoch; false if the kind has none. */
static bool tn__sched_closed_form(const tn_lr_scheduler *s, double *v) {
    const int64_t e = s->last_epoch;
    for (int gi = 0; gi < tn__sched_ngroups(s); gi++) {
        double base = s->base_lrs[gi], ti = (double)s->total_iters;
        switch (s->kind) {
        case TN__STEPLR: v[gi] = base * pow(s->gamma, (double)tn__py_floordiv(e, s->step_size)); break;
        case TN__MULTISTEPLR: v[gi] = base * pow(s->gamma, (double)tn__bisect_right(s->milestones, s->nmil, e)); break;
        case TN__EXPONENTIALLR: v[gi] = base * pow(s->gamma, (double)e); break;
        case TN__COSINELR: v[gi] = s->eta_min + (base - s->eta_min) * (1 + cos(TN__PI * (double)e / s->T_max)) / 2; break;
        case TN__LINEARLR:
            v[gi] = base * (s->factor + (s->end_factor - s->factor) * (double)TN__MIN(s->total_iters, e) / ti);
            break;
        case TN__CONSTANTLR: v[gi] = base * (s->factor + (double)(e >= s->total_iters) * (1 - s->factor)); break;
        case TN__POLYNOMIALLR: v[gi] = base * pow(1.0 - (double)TN__MIN(s->total_iters, e) / ti, s->power); break;
        default: return false;
        }
    }
    return true;
}
/* scheduler.step() (has_epoch false) or the deprecated scheduler.step(epoch). */
static int tn__sched_step(tn_lr_scheduler *s, bool has_epoch, int64_t epoch) {
    const char *fn = "tn_lr_scheduler_step";
    int ng = tn__sched_ngroups(s);
    if (s->kind == TN__PLATEAU)
        return TN__FAIL_INT("%s: ReduceLROnPlateau steps on a metric: use tn_lr_scheduler_step_metric", fn);
    if (s->kind == TN__SEQUENTIALLR) {
        s->last_epoch++;
        int idx = (int)tn__bisect_right(s->milestones, s->nchild - 1, s->last_epoch);
        tn_lr_scheduler *c = s->child[idx];
        if (tn__sched_step(c, idx > 0 && s->milestones[idx - 1] == s->last_epoch, 0)) return -1;
        memcpy(s->last_lr, c->last_lr, (size_t)TN__MIN(s->ng, c->ng) * sizeof(double));
        return 0;
    }
    if (s->kind == TN__WARMRESTARTS) {
        if (!has_epoch && s->last_epoch < 0) { has_epoch = true; epoch = 0; }
        double ep;
        if (!has_epoch) {
            ep = (double)(s->last_epoch + 1);
            s->T_cur = s->T_cur + 1;
            if (s->T_cur >= (double)s->T_i) { s->T_cur = s->T_cur - (double)s->T_i; s->T_i = s->T_i * s->T_mult; }
        } else {
            if (epoch < 0) return TN__FAIL_INT("%s: Expected non-negative epoch, but got %lld", fn, (long long)epoch);
            ep = (double)epoch;
            if (epoch >= s->T_0) {
                if (s->T_mult == 1) {
                    s->T_cur = (double)(epoch % s->T_0);
                } else {
                    int64_t n = (int64_t)(log(ep / (double)s->T_0 * (double)(s->T_mult - 1) + 1) / log((double)s->T_mult));
                    s->T_cur = ep - (double)s->T_0 * (pow((double)s->T_mult, (double)n) - 1) / (double)(s->T_mult - 1);
                    s->T_i = s->T_0 * (int64_t)pow((double)s->T_mult, (double)n);
                }
            } else {
                s->T_i = s->T_0;
                s->T_cur = ep;
            }
        }
        s->last_epoch = (int64_t)floor(ep);
        if (tn__sched_get_lr(s, s->vals)) return -1;
    } else {
        s->step_count++;
        if (!has_epoch) {
            s->last_epoch++;
            if (tn__sched_get_lr(s, s->vals)) return -1;
        } else {
            s->last_epoch = epoch;
            if (!tn__sched_closed_form(s, s->vals) && tn__sched_get_lr(s, s->vals)) return -1;
        }
    }
    for (int gi = 0; gi < ng; gi++) tn__pg_set(fn, &s->o->groups[gi], "lr", s->vals[gi]);
    for (int gi = 0; gi < s->ng; gi++) s->last_lr[gi] = gi < ng ? s->vals[gi] : NAN;
    return 0;
}

static tn_lr_scheduler *tn__sched_alloc(const char *fn, tn_optim *o, int kind) {
    tn_lr_scheduler *s = (tn_lr_scheduler *)TN_MALLOC(sizeof *s);
    double *v = (double *)TN_MALLOC((size_t)(3 * o->ng) * sizeof *v);
    if (!s || !v) {
        TN_FREE(s);
        TN_FREE(v);
        return (tn_lr_scheduler *)tn__error("%s: out of memory", fn);
    }
    memset(s, 0, sizeof *s);
    memset(v, 0, (size_t)(3 * o->ng) * sizeof *v);
    s->kind = kind;
    s->o = o;
    s->ng = o->ng;
    s->base_lrs = v;
    s->last_lr = v + o->ng;
    s->vals = v + 2 * o->ng;
    s->last_epoch = -1;
    return s;
}
TNDEF void tn_lr_scheduler_free(tn_lr_scheduler *s) {
    if (!s) return;
    for (int i = 0; i < s->nchild; i++) tn_lr_scheduler_free(s->child[i]);
    TN_FREE(s->child);
    TN_FREE(s->base_lrs);
    TN_FREE(s->min_lrs);
    TN_FREE(s);
}
/* LRScheduler.__init__: initial_lr in every group (or required when resuming), base_lrs,
   then the initial step. */
static int tn__sched_init(const char *fn, tn_lr_scheduler *s, int64_t last_epoch) {
    tn_optim *o = s->o;
    for (int gi = 0; gi < o->ng; gi++) {
        tn__pgroup *g = &o->groups[gi];
        if (tn__pg_find(g, "initial_lr") < 0) {
            if (last_epoch != -1)
                return TN__FAIL_INT("%s: param 'initial_lr' is not specified in param_groups[%d] when resuming an optimizer", fn, gi);
            if (tn__pg_set(fn, g, "initial_lr", tn__pg_get(g, "lr"))) return -1;
        }
        if (gi < s->ng) s->base_lrs[gi] = tn__pg_get(g, "initial_lr");
    }
    s->last_epoch = last_epoch;
    s->step_count = 0;
    return tn__sched_step(s, false, 0);
}
/* A number option (required, or def when absent). */
static int tn__sched_num(const char *fn, tn__opts *op, const char *kind, const char *key, bool required, double def, double *out) {
    int r = tn__opts_num(op, key, out, 1);
    if (r < 0) return -1;
    if (r == 0 && required) return TN__FAIL_INT("%s: %s needs %s", fn, kind, key);
    if (r == 0) *out = def;
    return 0;
}
static int tn__sched_int(const char *fn, tn__opts *op, const char *kind, const char *key, bool required, int64_t def, int64_t *out) {
    int r = tn__opts_int(op, key, out, 1);
    if (r < 0) return -1;
    if (r == 0 && required) return TN__FAIL_INT("%s: %s needs %s", fn, kind, key);
    if (r == 0) *out = def;
    return r;
}
/* A number or a tuple of them: "0.1" or "(0.1, 0.01)" (raw option text, any length up to
   max). Returns the count (0 if absent), *tuple whether it was a tuple, or -1. */
static int tn__sched_list(const char *fn, tn__opts *op, const char *key, double *out, int max, bool *tuple) {
    int i = tn__opts_find(op, key);
    if (i < 0 || !strcmp(op->val[i], "None")) return 0;
    const char *p = op->val[i];
    *tuple = *p == '(' || *p == '[';
    if (*tuple) p++;
    int n = 0;
    for (;;) {
        while (*p == ' ') p++;
        if (*tuple && (*p == ')' || *p == ']')) break;
        char *end;
        double x = strtod(p, &end);
        if (end == p) return TN__FAIL_INT("%s: option %s=%s is not a number or a tuple of numbers", fn, key, op->val[i]);
        if (n == max) return TN__FAIL_INT("%s: option %s=%s has more than %d values", fn, key, op->val[i], max);
        out[n++] = x;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') { p++; continue; }
        if ((*tuple && (*p == ')' || *p == ']')) || (!*tuple && !*p)) break;
        return TN__FAIL_INT("%s: option %s=%s is not a number or a tuple of numbers", fn, key, op->val[i]);
    }
    return n;
}
/* _format_param: one value for every group, or a tuple with one per group. */
static int tn__sched_per_group(const char *fn, tn__opts *op, const char *key, int ng, bool required, double def, double *out) {
    double v[TN__MAX_MILESTONES];
    bool tuple = false;
    int n = tn__sched_list(fn, op, key, v, TN__MAX_MILESTONES, &tuple);
    if (n < 0) return -1;
    if (n == 0 && required) return TN__FAIL_INT("%s: OneCycleLR needs %s", fn, key);
    if (tuple && n != ng) return TN__FAIL_INT("%s: expected %d values for %s, got %d", fn, ng, key, n);
    for (int i = 0; i < ng; i++) out[i] = tuple ? v[i] : n ? v[0] : def;
    return 0;
}
static bool tn__is_integer(double x) { return x == floor(x) && fabs(x) < 9e15; }

TNDEF tn_lr_scheduler *tn_lr_scheduler_create(tn_optim *o, const char *kind, const char *options) {
    const char *fn = "tn_lr_scheduler_create";
    if (!o) return NULL;
    int k = -1;
    for (int i = 0; kind && i <= TN__PLATEAU; i++) if (!strcmp(kind, tn__sched_names[i])) k = i;
    if (k < 0)
        return (tn_lr_scheduler *)tn__error("%s: unknown scheduler '%s' (known: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, "
            "CosineAnnealingWarmRestarts, LinearLR, ConstantLR, PolynomialLR, OneCycleLR, ReduceLROnPlateau; LambdaLR and "
            "SequentialLR have their own functions)", fn, kind ? kind : "(null)");
    tn__opts op;
    if (tn__opts_parse(fn, options, &op)) return NULL;
    tn_lr_scheduler *s = tn__sched_alloc(fn, o, k);
    if (!s) return NULL;
    const char *name = tn__sched_names[k];
    int64_t last_epoch = -1;
    double x;
    if (k != TN__PLATEAU && tn__sched_int(fn, &op, name, "last_epoch", false, -1, &last_epoch) < 0) goto fail;
    switch (k) {
    case TN__STEPLR:
        if (tn__sched_int(fn, &op, name, "step_size", true, 0, &s->step_size) < 0 || tn__sched_num(fn, &op, name, "gamma", false, 0.1, &s->gamma)) goto fail;
        if (s->step_size < 1) { tn__error("%s: StepLR step_size must be a positive integer, got %lld", fn, (long long)s->step_size); goto fail; }
        break;
    case TN__MULTISTEPLR: {
        double m[TN__MAX_MILESTONES];
        bool tuple = false;
        if (tn__opts_find(&op, "milestones") < 0) { tn__error("%s: MultiStepLR needs milestones", fn); goto fail; }
        int n = tn__sched_list(fn, &op, "milestones", m, TN__MAX_MILESTONES, &tuple);
        if (n < 0 || tn__sched_num(fn, &op, name, "gamma", false, 0.1, &s->gamma)) goto fail;
        for (int i = 0; i < n; i++) {
            if (!tn__is_integer(m[i])) { tn__error("%s: milestones must be integers, got %g", fn, m[i]); goto fail; }
            int64_t v = (int64_t)m[i];
            int j = i;  /* insertion sort: the closed form bisects a sorted list, as PyTorch's */
            while (j > 0 && s->milestones[j - 1] > v) { s->milestones[j] = s->milestones[j - 1]; j--; }
            s->milestones[j] = v;
        }
        s->nmil = n;
        break;
    }
    case TN__EXPONENTIALLR:
        if (tn__sched_num(fn, &op, name, "gamma", true, 0, &s->gamma)) goto fail;
        break;
    case TN__COSINELR:
        if (tn__sched_num(fn, &op, name, "T_max", true, 0, &s->T_max) || tn__sched_num(fn, &op, name, "eta_min", false, 0, &s->eta_min)) goto fail;
        if (!(s->T_max > 0)) { tn__error("%s: CosineAnnealingLR T_max must be positive, got %g", fn, s->T_max); goto fail; }
        break;
    case TN__WARMRESTARTS:
        if (tn__sched_num(fn, &op, name, "T_0", true, 0, &x)) goto fail;
        if (!(x > 0) || !tn__is_integer(x)) { tn__error("%s: Expected positive integer T_0, but got %g", fn, x); goto fail; }
        s->T_0 = s->T_i = (int64_t)x;
        if (tn__sched_num(fn, &op, name, "T_mult", false, 1, &x)) goto fail;
        if (!(x >= 1) || !tn__is_integer(x)) { tn__error("%s: Expected integer T_mult >= 1, but got %g", fn, x); goto fail; }
        s->T_mult = (int64_t)x;
        if (tn__sched_num(fn, &op, name, "eta_min", false, 0, &s->eta_min)) goto fail;
        s->T_cur = (double)last_epoch;
        break;
    case TN__LINEARLR:
        if (tn__sched_num(fn, &op, name, "start_factor", false, 1.0 / 3, &s->factor) ||
            tn__sched_num(fn, &op, name, "end_factor", false, 1.0, &s->end_factor) ||
            tn__sched_int(fn, &op, name, "total_iters", false, 5, &s->total_iters) < 0) goto fail;
        if (s->factor > 1.0 || !(s->factor > 0)) { tn__error("%s: Starting multiplicative factor expected to be greater than 0 and less or equal to 1.", fn); goto fail; }
        if (s->end_factor > 1.0 || !(s->end_factor >= 0)) { tn__error("%s: Ending multiplicative factor expected to be between 0 and 1.", fn); goto fail; }
        if (s->total_iters < 1) { tn__error("%s: LinearLR total_iters must be positive, got %lld", fn, (long long)s->total_iters); goto fail; }
        break;
    case TN__CONSTANTLR:
        if (tn__sched_num(fn, &op, name, "factor", false, 1.0 / 3, &s->factor) ||
            tn__sched_int(fn, &op, name, "total_iters", false, 5, &s->total_iters) < 0) goto fail;
        if (s->factor > 1.0 || !(s->factor > 0)) { tn__error("%s: Constant multiplicative factor expected to be between 0 and 1.", fn); goto fail; }
        break;
    case TN__POLYNOMIALLR:
        if (tn__sched_int(fn, &op, name, "total_iters", false, 5, &s->total_iters) < 0 || tn__sched_num(fn, &op, name, "power", false, 1.0, &s->power)) goto fail;
        if (s->total_iters < 1) { tn__error("%s: PolynomialLR total_iters must be positive, got %lld", fn, (long long)s->total_iters); goto fail; }
        break;
    case TN__ONECYCLELR: {
        double *max_lr = s->vals, *max_m = s->last_lr, *base_m = s->base_lrs; /* scratch until the initial step */
        double pct, div, final_div, steps, epochs, spe;
        bool three = false, cyc = true;
        if (tn__sched_per_group(fn, &op, "max_lr", o->ng, true, 0, max_lr) ||
            tn__sched_num(fn, &op, name, "total_steps", false, NAN, &steps) || tn__sched_num(fn, &op, name, "epochs", false, NAN, &epochs) ||
            tn__sched_num(fn, &op, name, "steps_per_epoch", false, NAN, &spe) || tn__sched_num(fn, &op, name, "pct_start", false, 0.3, &pct) ||
            tn__sched_num(fn, &op, name, "div_factor", false, 25.0, &div) || tn__sched_num(fn, &op, name, "final_div_factor", false, 1e4, &final_div) ||
            tn__opts_bool(&op, "three_phase", &three) < 0 || tn__opts_bool(&op, "cycle_momentum", &cyc) < 0 ||
            tn__sched_per_group(fn, &op, "max_momentum", o->ng, false, 0.95, max_m) ||
            tn__sched_per_group(fn, &op, "base_momentum", o->ng, false, 0.85, base_m)) goto fail;
        int an = tn__opts_word(&op, "anneal_strategy", "cos|linear");
        if (an == -1) goto fail;
        s->linear = an == 1;
        if (steps == steps) {
            if (!(steps > 0) || !tn__is_integer(steps)) { tn__error("%s: Expected positive integer total_steps, but got %g", fn, steps); goto fail; }
            s->total_steps = (int64_t)steps;
        } else if (epochs == epochs && spe == spe) {
            if (!(epochs > 0) || !tn__is_integer(epochs)) { tn__error("%s: Expected positive integer epochs, but got %g", fn, epochs); goto fail; }
            if (!(spe > 0) || !tn__is_integer(spe)) { tn__error("%s: Expected positive integer steps_per_epoch, but got %g", fn, spe); goto fail; }
            s->total_steps = (int64_t)epochs * (int64_t)spe;
        } else {
            tn__error("%s: You must define either total_steps OR (epochs AND steps_per_epoch)", fn);
            goto fail;
        }
        double T = (double)s->total_steps;
        tn__phase p3[3] = {{pct * T - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
                           {2 * pct * T - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"},
                           {T - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"}};
        tn__phase p2[2] = {{pct * T - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"},
                           {T - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"}};
        s->nphases = three ? 3 : 2;
        memcpy(s->phase, three ? p3 : p2, (size_t)s->nphases * sizeof(tn__phase));
        if (!(pct >= 0 && pct <= 1)) { tn__error("%s: Expected float between 0 and 1 pct_start, but got %g", fn, pct); goto fail; }
        s->cycle_momentum = cyc;
        if (cyc) {
            if (!tn__optim_def(o->kind, "momentum") && !tn__optim_def(o->kind, "betas")) {
                tn__error("%s: optimizer must support momentum or beta1 with `cycle_momentum` option enabled (%s has neither)", fn, tn__optim_names[o->kind]);
                goto fail;
            }
            s->use_beta1 = tn__optim_def(o->kind, "betas") != NULL;
        }
        if (tn__opts_done(&op, tn__sched_valid[k])) goto fail;
        if (last_epoch == -1)
            for (int gi = 0; gi < o->ng; gi++) {
                tn__pgroup *g = &o->groups[gi];
                double init = max_lr[gi] / div;
                if (tn__pg_set(fn, g, "initial_lr", init) || tn__pg_set(fn, g, "max_lr", max_lr[gi]) ||
                    tn__pg_set(fn, g, "min_lr", init / final_div)) goto fail;
                if (cyc && (tn__pg_set(fn, g, s->use_beta1 ? "betas[0]" : "momentum", max_m[gi]) ||
                            tn__pg_set(fn, g, "max_momentum", max_m[gi]) || tn__pg_set(fn, g, "base_momentum", base_m[gi]))) goto fail;
            }
        break;
    }
    case TN__PLATEAU: {
        int mode = tn__opts_word(&op, "mode", "min|max"), thr = tn__opts_word(&op, "threshold_mode", "rel|abs");
        bool tuple = false;
        s->min_lrs = (double *)TN_MALLOC((size_t)TN__MAX(o->ng, 1) * sizeof(double));
        if (!s->min_lrs) { tn__error("%s: out of memory", fn); goto fail; }
        if (mode == -1 || thr == -1 || tn__sched_num(fn, &op, name, "factor", false, 0.1, &s->factor) ||
            tn__sched_int(fn, &op, name, "patience", false, 10, &s->patience) < 0 ||
            tn__sched_num(fn, &op, name, "threshold", false, 1e-4, &s->threshold) ||
            tn__sched_int(fn, &op, name, "cooldown", false, 0, &s->cooldown) < 0 ||
            tn__sched_num(fn, &op, name, "eps", false, 1e-8, &s->eps)) goto fail;
        double m[TN__MAX_MILESTONES];
        int n = tn__sched_list(fn, &op, "min_lr", m, TN__MAX_MILESTONES, &tuple);
        if (n < 0) goto fail;
        if (tuple && n != o->ng) { tn__error("%s: expected %d min_lrs, got %d", fn, o->ng, n); goto fail; }
        s->has_default_min_lr = !tuple;
        s->default_min_lr = !tuple && n ? m[0] : 0;
        for (int gi = 0; gi < o->ng; gi++) s->min_lrs[gi] = tuple ? m[gi] : s->default_min_lr;
        if (!(s->factor < 1.0)) { tn__error("%s: Factor should be < 1.0.", fn); goto fail; }
        s->mode_max = mode == 1;
        s->thr_abs = thr == 1;
        if (tn__opts_done(&op, tn__sched_valid[k])) goto fail;
        s->last_epoch = 0;
        s->best = s->mode_max ? -INFINITY : INFINITY;
        for (int gi = 0; gi < o->ng; gi++) s->last_lr[gi] = tn__pg_get(&o->groups[gi], "lr");
        return s;
    }
    default: break;
    }
    if (tn__opts_done(&op, tn__sched_valid[k]) || tn__sched_init(fn, s, last_epoch)) goto fail;
    return s;
fail:
    tn_lr_scheduler_free(s);
    return NULL;
}
TNDEF tn_lr_scheduler *tn_lr_scheduler_lambda(tn_optim *o, double (*lr_lambda)(int64_t epoch, int group, void *user), void *user) {
    const char *fn = "tn_lr_scheduler_lambda";
    if (!o) return NULL;
    if (!lr_lambda) return (tn_lr_scheduler *)tn__error("%s: lr_lambda is NULL", fn);
    tn_lr_scheduler *s = tn__sched_alloc(fn, o, TN__LAMBDALR);
    if (!s) return NULL;
    s->lambda = lr_lambda;
    s->user = user;
    if (tn__sched_init(fn, s, -1)) { tn_lr_scheduler_free(s); return NULL; }
    return s;
}
TNDEF tn_lr_scheduler *tn_lr_scheduler_sequential(tn_optim *o, tn_lr_scheduler *const *schedulers, int n, const int64_t *milestones) {
    const char *fn = "tn_lr_scheduler_sequential";
    tn_lr_scheduler *s = NULL;
    bool bad = !o || !schedulers || n < 1;
    if (o && (!schedulers || n < 1)) tn__error("%s: SequentialLR expects at least one scheduler, but got no scheduler.", fn);
    for (int i = 0; !bad && i < n; i++) {
        tn_lr_scheduler *c = schedulers[i];
        if (!c) { bad = true; break; }  /* a failed creation: its error stands */
        for (int j = 0; j < i && !bad; j++)
            if (schedulers[j] == c) bad = TN__FAIL_INT("%s: scheduler %d is given twice", fn, i) != 0;
        if (bad) break;
        if (c->o != o)
            bad = TN__FAIL_INT("%s: Sequential Schedulers expects all schedulers to belong to the same optimizer, but got scheduler at "
                               "index %d to be different than the optimizer passed in.", fn, i) != 0;
        else if (c->kind == TN__PLATEAU)
            bad = TN__FAIL_INT("%s: SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs to be "
                               "specified when calling `step`, but got one at index %d in the given schedulers sequence.", fn, i) != 0;
        else if (c->kind == TN__SEQUENTIALLR)
            bad = TN__FAIL_INT("%s: scheduler %d is a SequentialLR, which cannot be nested", fn, i) != 0;
    }
    if (!bad && n > 1 && !milestones) bad = TN__FAIL_INT("%s: %d schedulers need %d milestones (got NULL)", fn, n, n - 1) != 0;
    if (!bad && n - 1 > TN__MAX_MILESTONES) bad = TN__FAIL_INT("%s: at most %d milestones", fn, TN__MAX_MILESTONES) != 0;
    if (!bad) {
        s = tn__sched_alloc(fn, o, TN__SEQUENTIALLR);
        tn_lr_scheduler **ch = s ? (tn_lr_scheduler **)TN_MALLOC((size_t)n * sizeof *ch) : NULL;
        if (s && !ch) { tn__error("%s: out of memory", fn); tn_lr_scheduler_free(s); s = NULL; }
        if (s) {
            memcpy(ch, schedulers, (size_t)n * sizeof *ch);
            s->child = ch;
            s->nchild = n;
            for (int i = 0; i < n - 1; i++) s->milestones[i] = milestones[i];
        }
    }
    if (!s) { /* ownership was taken: free each distinct scheduler once */
        for (int i = 0; schedulers && i < n; i++) {
            bool seen = false;
            for (int j = 0; j < i; j++) seen = seen || schedulers[j] == schedulers[i];
            if (!seen) tn_lr_scheduler_free(schedulers[i]);
        }
        return NULL;
    }
    s->last_epoch = 0;
    for (int gi = 0; gi < o->ng; gi++) {
        tn__pgroup *g = &o->groups[gi];
        if (tn__pg_find(g, "initial_lr") < 0) {
            tn__error("%s: param group %d has no initial_lr", fn, gi);
            tn_lr_scheduler_free(s);
            return NULL;
        }
        tn__pg_set(fn, g, "lr", tn__pg_get(g, "initial_lr"));   /* back to the initial values */
    }
    for (int i = 0; i < n; i++) s->child[i]->last_epoch -= 1;   /* undo their initial steps */
    s->child[0]->step_count = 0;
    if (tn__sched_step(s->child[0], false, 0)) { tn_lr_scheduler_free(s); return NULL; }
    memcpy(s->last_lr, s->child[0]->last_lr, (size_t)TN__MIN(s->ng, s->child[0]->ng) * sizeof(double));
    return s;
}
TNDEF int tn_lr_scheduler_step(tn_lr_scheduler *s) { return s ? tn__sched_step(s, false, 0) : -1; }
TNDEF int tn_lr_scheduler_step_metric(tn_lr_scheduler *s, double metric) {
    const char *fn = "tn_lr_scheduler_step_metric";
    if (!s) return -1;
    if (s->kind != TN__PLATEAU) return TN__FAIL_INT("%s: only ReduceLROnPlateau steps on a metric (this is %s: use tn_lr_scheduler_step)", fn, tn__sched_names[s->kind]);
    tn_optim *o = s->o;
    s->last_epoch += 1;
    double a = metric, best = s->best, t = s->threshold;
    bool better = s->mode_max ? (s->thr_abs ? a > best + t : a > best * (t + 1.0)) : (s->thr_abs ? a < best - t : a < best * (1.0 - t));
    if (better) { s->best = a; s->num_bad_epochs = 0; }
    else s->num_bad_epochs += 1;
    if (s->cooldown_counter > 0) { s->cooldown_counter -= 1; s->num_bad_epochs = 0; }
    if (s->num_bad_epochs > s->patience) {
        if (o->ng != s->ng && !s->has_default_min_lr)
            return TN__FAIL_INT("%s: The number of param groups in the `optimizer` (%d) differs from when `ReduceLROnPlateau` was initialized (%d), "
                                "usually due to a new param group being added to the optimizer.", fn, o->ng, s->ng);
        for (int gi = 0; gi < o->ng; gi++) {
            tn__pgroup *g = &o->groups[gi];
            double old_lr = tn__pg_get(g, "lr"), min_lr = gi < s->ng ? s->min_lrs[gi] : s->default_min_lr;
            double new_lr = tn__py_max(old_lr * s->factor, min_lr);
            if (old_lr - new_lr > s->eps) tn__pg_set(fn, g, "lr", new_lr);
        }
        s->cooldown_counter = s->cooldown;
        s->num_bad_epochs = 0;
    }
    for (int gi = 0; gi < s->ng; gi++) s->last_lr[gi] = gi < o->ng ? tn__pg_get(&o->groups[gi], "lr") : NAN;
    return 0;
}
TNDEF double tn_lr_scheduler_get_last_lr(const tn_lr_scheduler *s, int group) {
    if (!s) return NAN;
    if (group < 0 || group >= s->ng)
        return tn__error("tn_lr_scheduler_get_last_lr: group %d out of range (%d groups)", group, s->ng), NAN;
    return s->last_lr[group];
}
TNDEF int64_t tn_lr_scheduler_last_epoch(const tn_lr_scheduler *s) { return s ? s->last_epoch : -1; }

/* ---- gradient clipping: torch.nn.utils ---- */
static tn_tensor *tn__clip_total_norm(tn_tensor *const *grads, int n, double norm_type) {
    tn_tensor **norms = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *norms);
    if (!norms) return (tn_tensor *)tn__error("out of memory");
    for (int i = 0; i < n; i++) norms[i] = tn_norm(grads[i], norm_type);
    tn_tensor *total = tn_norm(tn_stack(norms, n, 0), norm_type);
    TN_FREE(norms);
    return total;
}
TNDEF double tn_clip_grad_norm_(tn_tensor *const *params, int n, double max_norm, double norm_type) {
    const char *fn = "tn_clip_grad_norm_";
    if (n < 0 || (n > 0 && !params)) return tn__error("%s: need an array of %d parameters", fn, n), NAN;
    int ng = 0;
    for (int i = 0; i < n; i++) {
        if (!params[i]) return NAN;
        ng += params[i]->grad != NULL;
    }
    if (ng == 0) return 0.0;
    tn_tensor **grads = (tn_tensor **)TN_MALLOC((size_t)ng * sizeof *grads);
    if (!grads) return tn__error("%s: out of memory", fn), NAN;
    ng = 0;
    for (int i = 0; i < n; i++) if (params[i]->grad) grads[ng++] = params[i]->grad;
    double result = NAN;
    tn_no_grad_begin();
    tn_scope_begin();
    tn_tensor *total = TN__AS(fn, tn__clip_total_norm(grads, ng, norm_type));
    if (total) {
        /* clip_coef = max_norm / (total_norm + 1e-6), clamped to 1, in the norm's dtype */
        tn_tensor *denom = tn_add_scalar(total, 1e-6);
        tn_tensor *coef = TN__AS(fn, tn_clamp(tn_div(tn_full_like(denom, max_norm), denom), -INFINITY, 1.0));
        bool ok = coef != NULL;
        for (int i = 0; ok && i < ng; i++) ok = TN__AS(fn, tn_mul_(grads[i], coef)) != NULL;
        if (ok) result = tn_item(total);
    }
    tn_scope_end();
    tn_no_grad_end();
    TN_FREE(grads);
    return result;
}
TNDEF int tn_clip_grad_value_(tn_tensor *const *params, int n, double clip_value) {
    const char *fn = "tn_clip_grad_value_";
    if (n < 0 || (n > 0 && !params)) return TN__FAIL_INT("%s: need an array of %d parameters", fn, n);
    for (int i = 0; i < n; i++) if (!params[i]) return -1;
    int rc = 0;
    tn_no_grad_begin();
    tn_scope_begin();
    for (int i = 0; i < n && rc == 0; i++)
        if (params[i]->grad && !TN__AS(fn, tn_clamp_(params[i]->grad, -clip_value, clip_value))) rc = -1;
    tn_scope_end();
    tn_no_grad_end();
    return rc;
}



/* ======================================================================= */
/* 14. data                                                                 */
/* ======================================================================= */
#include <errno.h>
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_PTHREADS 1
#include <pthread.h>
#endif
#ifdef TENSOR_ZLIB
#include <zlib.h>
#endif

TNDEF int64_t tn_dataset_len(tn_dataset *ds) {
    if (!ds) return -1;
    if (!ds->len) return TN__FAIL_INT("tn_dataset_len: the dataset has no len function");
    unsigned before = tn__nerrors;
    int64_t n = ds->len(ds);
    if (n < 0 && tn__nerrors == before) return TN__FAIL_INT("tn_dataset_len: the dataset's len returned %lld", (long long)n);
    return n < 0 ? -1 : n;
}

/* The body of tn_dataset_get, quiet: the caller words the message. */
static int tn__dataset_get(tn_dataset *ds, int64_t index, tn_tensor **items) {
    for (int k = 0; k < ds->nitems; k++) items[k] = NULL;
    unsigned before = tn__nerrors;
    int rc = ds->get(ds, index, items);
    if (rc != 0) {
        for (int k = 0; k < ds->nitems; k++) items[k] = NULL; /* what get made belongs to a scope, or get freed it */
        if (tn__nerrors == before) tn__error("the dataset's get returned %d for index %lld without an error message", rc, (long long)index);
        return -1;
    }
    for (int k = 0; k < ds->nitems; k++)
        if (!items[k]) {
            tn__error("the dataset's get returned 0 for index %lld but left item %d NULL", (long long)index, k);
            return -1;
        }
    return 0;
}

TNDEF int tn_dataset_get(tn_dataset *ds, int64_t index, tn_tensor **items) {
    if (!ds) return -1;
    if (!items || !ds->get || ds->nitems < 1) return TN__FAIL_INT("tn_dataset_get: need a dataset with a get function, nitems >= 1 and an items array");
    int64_t n = tn_dataset_len(ds);
    if (n < 0) return -1;
    if (index < 0 || index >= n)
        return TN__FAIL_INT("tn_dataset_get: index %lld out of range for a dataset of length %lld", (long long)index, (long long)n);
    tn__quiet++;
    int rc = tn__dataset_get(ds, index, items);
    tn__quiet--;
    if (rc == 0) return 0;
    char why[1024];
    snprintf(why, sizeof why, "%s", tn__errbuf);
    return TN__FAIL_INT("tn_dataset_get: %s", why);
}

TNDEF void tn_dataset_free(tn_dataset *ds) {
    if (ds && ds->destroy) ds->destroy(ds);
}

/* ---- TensorDataset ---- */
typedef struct tn__tensor_ds { tn_dataset base; int64_t len; tn_tensor **t; } tn__tensor_ds;
static int64_t tn__tds_len(tn_dataset *d) { return ((tn__tensor_ds *)d)->len; }
static int tn__tds_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    tn__tensor_ds *s = (tn__tensor_ds *)d;
    tn_scope_begin();  /* all or nothing: on failure the scope takes back what was made */
    int k = 0;
    for (; k < d->nitems; k++) if (!(items[k] = tn_select(s->t[k], 0, i))) break;
    if (k == d->nitems) for (k = 0; k < d->nitems; k++) tn_keep(items[k]);
    tn_scope_end();
    return k == d->nitems ? 0 : -1;
}
static void tn__tds_destroy(tn_dataset *d) {
    tn__tensor_ds *s = (tn__tensor_ds *)d;
    for (int k = 0; k < d->nitems; k++) tn_release(s->t[k]);
    TN_FREE(s->t);
    TN_FREE(s);
}
TNDEF tn_dataset *tn_tensor_dataset(tn_tensor *const *tensors, int n) {
    if (n < 1 || !tensors) return (tn_dataset *)tn__error("tn_tensor_dataset: need at least one tensor (got n = %d)", n);
    for (int k = 0; k < n; k++) if (!tensors[k]) return NULL;
    for (int k = 0; k < n; k++) {
        if (tensors[k]->ndim == 0) return (tn_dataset *)tn__error("tn_tensor_dataset: tensor %d is 0-d; every tensor needs a dim 0 to index samples", k);
        if (tensors[k]->shape[0] != tensors[0]->shape[0])
            return (tn_dataset *)tn__error("tn_tensor_dataset: size mismatch between tensors: tensor 0 has shape %s, tensor %d has shape %s (dim 0 must agree)",
                                           TN__SHAPE(tensors[0]), k, TN__SHAPE(tensors[k]));
    }
    tn__tensor_ds *s = (tn__tensor_ds *)TN_MALLOC(sizeof *s);
    tn_tensor **t = (tn_tensor **)TN_MALLOC((size_t)n * sizeof *t);
    if (!s || !t) { TN_FREE(s); TN_FREE(t); return (tn_dataset *)tn__error("tn_tensor_dataset: out of memory"); }
    memset(s, 0, sizeof *s);
    for (int k = 0; k < n; k++) t[k] = tn_retain(tensors[k]);
    s->base.len = tn__tds_len;
    s->base.get = tn__tds_get;
    s->base.destroy = tn__tds_destroy;
    s->base.nitems = n;
    s->len = tensors[0]->shape[0];
    s->t = t;
    return &s->base;
}

/* ---- Subset and random_split ---- */
typedef struct tn__subset_ds { tn_dataset base; tn_dataset *ds; int64_t n; int64_t *idx; } tn__subset_ds;
static int64_t tn__subset_len(tn_dataset *d) { return ((tn__subset_ds *)d)->n; }
static int tn__subset_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    tn__subset_ds *s = (tn__subset_ds *)d;
    return tn_dataset_get(s->ds, s->idx[i], items);
}
static void tn__subset_destroy(tn_dataset *d) {
    TN_FREE(((tn__subset_ds *)d)->idx);
    TN_FREE(d);
}
TNDEF tn_dataset *tn_subset(tn_dataset *ds, const int64_t *indices, int64_t n) {
    if (!ds) return NULL;
    if (n < 0 || (n > 0 && !indices)) return (tn_dataset *)tn__error("tn_subset: need n >= 0 indices (got n = %lld%s)", (long long)n, indices ? "" : ", indices NULL");
    if (!ds->get || ds->nitems < 1) return (tn_dataset *)tn__error("tn_subset: the dataset has no get function or nitems < 1");
    int64_t len = tn_dataset_len(ds);
    if (len < 0) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (indices[i] < 0 || indices[i] >= len)
            return (tn_dataset *)tn__error("tn_subset: indices[%lld] = %lld is out of range for a dataset of length %lld", (long long)i, (long long)indices[i], (long long)len);
    tn__subset_ds *s = (tn__subset_ds *)TN_MALLOC(sizeof *s);
    int64_t *idx = (int64_t *)TN_MALLOC((size_t)(n ? n : 1) * sizeof *idx);
    if (!s || !idx) { TN_FREE(s); TN_FREE(idx); return (tn_dataset *)tn__error("tn_subset: out of memory"); }
    memset(s, 0, sizeof *s);
    if (n) memcpy(idx, indices, (size_t)n * sizeof *idx);
    s->base.len = tn__subset_len;
    s->base.get = tn__subset_get;
    s->base.destroy = tn__subset_destroy;
    s->base.nitems = ds->nitems;
    s->ds = ds;
    s->n = n;
    s->idx = idx;
    return &s->base;
}

TNDEF int tn_random_split(tn_dataset *ds, const double *lengths, int n, tn_generator *gen, tn_dataset **out) {
    if (!ds) return -1;
    if (n < 1 || !lengths || !out) return TN__FAIL_INT("tn_random_split: need n >= 1 lengths and an out array (got n = %d)", n);
    int64_t len = tn_dataset_len(ds);
    if (len < 0) return -1;
    int64_t *counts = (int64_t *)TN_MALLOC((size_t)n * sizeof *counts);
    if (!counts) return TN__FAIL_INT("tn_random_split: out of memory");
    double sum = 0;
    for (int i = 0; i < n; i++) sum += lengths[i];
    /* PyTorch: math.isclose(sum, 1) and sum <= 1 means fractions */
    bool fractions = fabs(sum - 1) <= 1e-9 * TN__MAX(1.0, fabs(sum)) && sum <= 1;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        double v = lengths[i];
        if (fractions) {
            if (!(v >= 0 && v <= 1)) { TN_FREE(counts); return TN__FAIL_INT("tn_random_split: fraction at index %d is not between 0 and 1 (got %g)", i, v); }
            counts[i] = (int64_t)floor((double)len * v);
        } else {
            if (!(v >= 0) || v != floor(v) || v > 9e15) { TN_FREE(counts); return TN__FAIL_INT("tn_random_split: lengths[%d] = %g is neither a count (an integer >= 0) nor part of fractions summing to 1", i, v); }
            counts[i] = (int64_t)v;
        }
        total += counts[i];
    }
    if (fractions) /* the remainder, one each from the first split on (round-robin) */
        for (int64_t r = 0; r < len - total; r++) counts[r % n]++;
    else if (total != len) {
        TN_FREE(counts);
        return TN__FAIL_INT("tn_random_split: sum of input lengths (%lld) does not equal the length of the input dataset (%lld)", (long long)total, (long long)len);
    }
    tn_scope_begin();
    tn_tensor *perm = TN__AS("tn_random_split", tn_randperm(len, TN_I64, gen));
    const int64_t *p = perm ? (const int64_t *)tn_data_ptr(perm) : NULL;
    int made = 0;
    tn_dataset **tmp = (tn_dataset **)TN_MALLOC((size_t)n * sizeof *tmp);
    if (!tmp && perm) tn__error("tn_random_split: out of memory");
    for (int64_t off = 0; perm && tmp && made < n; made++) {
        if (!(tmp[made] = tn_subset(ds, p + off, counts[made]))) break;
        off += counts[made];
    }
    tn_scope_end();
    TN_FREE(counts);
    if (!tmp || made < n) {
        for (int i = 0; tmp && i < made; i++) tn_dataset_free(tmp[i]);
        TN_FREE(tmp);
        return -1;
    }
    memcpy(out, tmp, (size_t)n * sizeof *out);
    TN_FREE(tmp);
    return 0;
}

/* ---- DataLoader ----
   The caller's thread owns the epoch (the sample order, drawn from the generator at
   its start); batch k is samples order[k*bs, (k+1)*bs). With workers, slot k % cap holds
   batch k: a worker claims the lowest unclaimed batch within cap of the one the caller
   waits for, loads it with no lock held and marks the slot ready. A worker loads inside
   its own scope and retains the finished batch, so no scope owns it when it crosses
   threads; the caller registers it with its own scope. A failed load keeps the
   worker's message in the slot, to be raised by tn_loader_next on the caller's thread. */
typedef struct tn__loader_slot {
    int state;                 /* 0 free, 1 loading, 2 ready */
    int64_t batch;
    int rc;
    tn_tensor **items;         /* nitems */
    char err[1024];
} tn__loader_slot;

typedef struct tn__worker { tn_loader *l; int id; } tn__worker;

struct tn_loader {
    tn_dataset *ds;
    int nitems;
    int64_t batch_size;        /* 0: batch_size=None */
    bool shuffle, drop_last;
    int num_workers, prefetch_factor;
    tn_generator *gen;         /* owned; NULL: the default generator */
    tn_collate_fn collate;     /* NULL: the default */
    void *collate_user;
    bool in_epoch;
    int64_t n, nbatches, *order, next, dispatched;
    int cap;
    tn__loader_slot *slots;           /* cap of them, or 1 for num_workers=0 */
    tn__worker *workers;
    int nthreads;
    bool stop;
#ifdef TN__HAVE_PTHREADS
    pthread_mutex_t mu;
    pthread_cond_t work, ready;
    pthread_t *threads;
#endif
};

TNDEF int tn_default_collate(tn_tensor *const *samples, int64_t nsamples, int nitems, tn_tensor **batch, void *user) {
    (void)user;
    if (!samples || !batch || nsamples < 1 || nsamples > INT_MAX || nitems < 1)
        return TN__FAIL_INT("tn_default_collate: need 1 to %d samples of nitems >= 1 (got %lld, %d)", INT_MAX, (long long)nsamples, nitems);
    tn_tensor **col = (tn_tensor **)TN_MALLOC((size_t)nsamples * sizeof *col);
    if (!col) return TN__FAIL_INT("tn_default_collate: out of memory");
    int k = 0;
    tn_scope_begin();
    for (; k < nitems; k++) {
        for (int64_t s = 0; s < nsamples; s++) col[s] = samples[s * nitems + k];
        if (!(batch[k] = TN__AS("tn_default_collate", tn_stack(col, (int)nsamples, 0)))) break;
    }
    if (k == nitems) for (int j = 0; j < nitems; j++) tn_keep(batch[j]);
    else for (int j = 0; j < nitems; j++) batch[j] = NULL;
    tn_scope_end();
    TN_FREE(col);
    return k == nitems ? 0 : -1;
}

/* Load batch k into out (retained, owned by no scope); on failure write the message to
   err. Quiet: only tn_loader_next reports, on the caller's thread. */
static int tn__loader_load(tn_loader *l, int64_t k, tn_tensor **out, char *err, size_t errcap, int worker) {
    int ni = l->nitems;
    int64_t bs = l->batch_size ? l->batch_size : 1, start = k * bs, m = TN__MIN(bs, l->n - start);
    char where[64];
    if (worker >= 0) snprintf(where, sizeof where, "worker %d, batch %lld", worker, (long long)k);
    else snprintf(where, sizeof where, "batch %lld", (long long)k);
    tn_tensor **samples = (tn_tensor **)TN_MALLOC((size_t)(m * ni) * sizeof *samples);
    if (!samples) { snprintf(err, errcap, "%s: out of memory", where); return -1; }
    memset(samples, 0, (size_t)(m * ni) * sizeof *samples);
    tn__quiet++;
    tn_scope_begin();
    int rc = 0;
    int64_t s = 0;
    for (; s < m && rc == 0; s++) rc = tn__dataset_get(l->ds, l->order[start + s], samples + s * ni);
    if (rc) {
        snprintf(err, errcap, "%s, sample %lld: %.900s", where, (long long)l->order[start + s - 1], tn__errbuf);
    } else if (!l->batch_size && !l->collate) {
        for (int j = 0; j < ni; j++) out[j] = samples[j];
    } else {
        unsigned before = tn__nerrors;
        for (int j = 0; j < ni; j++) out[j] = NULL;
        tn_collate_fn fn = l->collate ? l->collate : tn_default_collate;
        rc = fn(samples, m, ni, out, l->collate_user);
        for (int j = 0; j < ni && rc == 0; j++)
            if (!out[j]) { rc = -1; tn__error("the collate function returned 0 but left batch item %d NULL", j); }
        if (rc && tn__nerrors == before) tn__error("the collate function returned %d without an error message", rc);
        if (rc) snprintf(err, errcap, "%s: %.900s", where, tn__errbuf);
    }
    if (rc == 0) for (int j = 0; j < ni; j++) tn_retain(out[j]);
    tn_scope_end();
    tn__quiet--;
    TN_FREE(samples);
    return rc ? -1 : 0;
}

#ifdef TN__HAVE_PTHREADS
static void *tn__loader_worker(void *arg) {
    tn__worker *w = (tn__worker *)arg;
    tn_loader *l = w->l;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        if (!(l->in_epoch && l->dispatched < l->nbatches && l->dispatched < l->next + l->cap)) {
            pthread_cond_wait(&l->work, &l->mu);
            continue;
        }
        int64_t k = l->dispatched++;
        tn__loader_slot *s = &l->slots[k % l->cap];
        s->state = 1;
        s->batch = k;
        pthread_mutex_unlock(&l->mu);
        int rc = tn__loader_load(l, k, s->items, s->err, sizeof s->err, w->id);
        pthread_mutex_lock(&l->mu);
        s->rc = rc;
        s->state = 2;
        pthread_cond_broadcast(&l->ready);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}
#endif

static int64_t tn__loader_nbatches(const tn_loader *l, int64_t n) {
    if (!l->batch_size) return n;
    return l->drop_last ? n / l->batch_size : n / l->batch_size + (n % l->batch_size != 0);
}

TNDEF tn_loader *tn_loader_new(tn_dataset *ds, const char *options) {
    if (!ds) return NULL;
    if (!ds->get || !ds->len || ds->nitems < 1) return (tn_loader *)tn__error("tn_loader_new: the dataset needs len and get functions and nitems >= 1");
    tn__opts o;
    if (tn__opts_parse("tn_loader_new", options, &o)) return NULL;
    int64_t bs = 1, nw = 0, pf = 2, seed = -1;
    bool shuffle = false, drop_last = false, has_pf, has_seed;
    int bi = tn__opts_find(&o, "batch_size");
    if (bi >= 0 && !strcmp(o.val[bi], "None")) bs = 0;
    else if (tn__opts_int(&o, "batch_size", &bs, 1) < 0) return NULL;
    else if (bs < 1 || bs > INT_MAX) return (tn_loader *)tn__error("tn_loader_new: batch_size should be a positive integer value (at most %d), but got batch_size=%lld", INT_MAX, (long long)bs);
    int pi = tn__opts_find(&o, "prefetch_factor"), si = tn__opts_find(&o, "seed");
    has_pf = pi >= 0 && strcmp(o.val[pi], "None");
    has_seed = si >= 0 && strcmp(o.val[si], "None");
    if (tn__opts_bool(&o, "shuffle", &shuffle) < 0 || tn__opts_bool(&o, "drop_last", &drop_last) < 0 ||
        tn__opts_int(&o, "num_workers", &nw, 1) < 0 || tn__opts_int(&o, "prefetch_factor", &pf, 1) < 0 ||
        tn__opts_int(&o, "seed", &seed, 1) < 0 ||
        tn__opts_done(&o, "batch_size, shuffle, drop_last, num_workers, prefetch_factor, seed")) return NULL;
    if (nw < 0) return (tn_loader *)tn__error("tn_loader_new: num_workers option should be non-negative; use num_workers=0 to disable worker threads (got %lld)", (long long)nw);
    if (nw > 1024) return (tn_loader *)tn__error("tn_loader_new: num_workers=%lld is more than the 1024 threads a loader may start", (long long)nw);
    if (nw == 0 && has_pf) return (tn_loader *)tn__error("tn_loader_new: prefetch_factor option could only be specified with num_workers > 0 (let num_workers > 0 to enable worker threads, otherwise leave prefetch_factor out)");
    if (pf < 1 || pf > 65536) return (tn_loader *)tn__error("tn_loader_new: prefetch_factor should be a positive integer (at most 65536), but got %lld", (long long)pf);
    if (!bs && drop_last) return (tn_loader *)tn__error("tn_loader_new: batch_size=None option disables auto-batching and is mutually exclusive with drop_last");
    if (has_seed && seed < 0) return (tn_loader *)tn__error("tn_loader_new: seed should be a non-negative integer, but got %lld", (long long)seed);
#ifndef TN__HAVE_PTHREADS
    if (nw > 0) return (tn_loader *)tn__error("tn_loader_new: num_workers=%lld needs POSIX threads, which this platform lacks; use num_workers=0", (long long)nw);
#endif
    tn_loader *l = (tn_loader *)TN_MALLOC(sizeof *l);
    if (!l) return (tn_loader *)tn__error("tn_loader_new: out of memory");
    memset(l, 0, sizeof *l);
    l->ds = ds;
    l->nitems = ds->nitems;
    l->batch_size = bs;
    l->shuffle = shuffle;
    l->drop_last = drop_last;
    l->num_workers = (int)nw;
    l->prefetch_factor = (int)pf;
    l->cap = nw ? (int)(nw * pf) : 1;
    bool ok = !has_seed || (l->gen = tn_generator_new((uint64_t)seed)) != NULL;
    l->slots = ok ? (tn__loader_slot *)TN_MALLOC((size_t)l->cap * sizeof *l->slots) : NULL;
    tn_tensor **items = l->slots ? (tn_tensor **)TN_MALLOC((size_t)l->cap * (size_t)l->nitems * sizeof *items) : NULL;
    if (!items) {
        tn_generator_free(l->gen);
        TN_FREE(l->slots);
        TN_FREE(l);
        return (tn_loader *)tn__error("tn_loader_new: out of memory");
    }
    memset(l->slots, 0, (size_t)l->cap * sizeof *l->slots);
    for (int i = 0; i < l->cap; i++) l->slots[i].items = items + (size_t)i * (size_t)l->nitems;
#ifdef TN__HAVE_PTHREADS
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->work, NULL);
    pthread_cond_init(&l->ready, NULL);
    if (nw > 0) {
        l->threads = (pthread_t *)TN_MALLOC((size_t)nw * sizeof *l->threads);
        l->workers = (tn__worker *)TN_MALLOC((size_t)nw * sizeof *l->workers);
        if (!l->threads || !l->workers) { tn_loader_free(l); return (tn_loader *)tn__error("tn_loader_new: out of memory"); }
        for (int i = 0; i < nw; i++) {
            l->workers[i].l = l;
            l->workers[i].id = i;
            int rc = pthread_create(&l->threads[i], NULL, tn__loader_worker, &l->workers[i]);
            if (rc) {
                tn_loader_free(l);
                return (tn_loader *)tn__error("tn_loader_new: cannot start worker thread %d of %lld: %s", i, (long long)nw, strerror(rc));
            }
            l->nthreads++;
        }
    }
#endif
    return l;
}

TNDEF int tn_loader_set_collate(tn_loader *l, tn_collate_fn fn, void *user) {
    if (!l) return -1;
    if (l->in_epoch) return TN__FAIL_INT("tn_loader_set_collate: cannot change the collate function in the middle of an epoch (batch %lld of %lld)", (long long)l->next, (long long)l->nbatches);
    l->collate = fn;
    l->collate_user = fn ? user : NULL;
    return 0;
}

TNDEF int64_t tn_loader_len(const tn_loader *l) {
    if (!l) return -1;
    if (l->in_epoch) return l->nbatches;
    int64_t n = tn_dataset_len(l->ds);
    return n < 0 ? -1 : tn__loader_nbatches(l, n);
}

static void tn__loader_lock(tn_loader *l) {
#ifdef TN__HAVE_PTHREADS
    if (l->nthreads) pthread_mutex_lock(&l->mu);
#else
    (void)l;
#endif
}
static void tn__loader_unlock(tn_loader *l, bool wake_workers) {
#ifdef TN__HAVE_PTHREADS
    if (!l->nthreads) return;
    if (wake_workers) pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->mu);
#else
    (void)l; (void)wake_workers;
#endif
}

/* A new epoch: its length and sample order, drawn on the caller's thread (so the order
   for a seed does not depend on the workers). No worker reads order between epochs. */
static int tn__loader_start_epoch(tn_loader *l) {
    int64_t n = tn_dataset_len(l->ds);
    if (n < 0) return -1;
    int64_t *order = (int64_t *)TN_REALLOC(l->order, (size_t)(n ? n : 1) * sizeof *order);
    if (!order) return TN__FAIL_INT("tn_loader_next: out of memory for an epoch of %lld samples", (long long)n);
    l->order = order;
    if (l->shuffle && n > 0) {
        tn_scope_begin();
        tn_tensor *perm = TN__AS("tn_loader_next", tn_randperm(n, TN_I64, l->gen));
        if (perm) memcpy(order, tn_data_ptr(perm), (size_t)n * sizeof *order);
        tn_scope_end();
        if (!perm) return -1;
    } else {
        for (int64_t i = 0; i < n; i++) order[i] = i;
    }
    tn__loader_lock(l);
    l->n = n;
    l->nbatches = tn__loader_nbatches(l, n);
    l->next = l->dispatched = 0;
    l->in_epoch = true;
    tn__loader_unlock(l, true);
    return 0;
}

TNDEF int tn_loader_next(tn_loader *l, tn_tensor **batch) {
    if (!l) return -1;
    if (!batch) return TN__FAIL_INT("tn_loader_next: batch is NULL (expected room for %d tensors)", l->nitems);
    for (int k = 0; k < l->nitems; k++) batch[k] = NULL;
    if (!l->in_epoch && tn__loader_start_epoch(l)) return -1;
    if (l->next >= l->nbatches) {
        tn__loader_lock(l);
        l->in_epoch = false;
        tn__loader_unlock(l, false);
        return 0;
    }
    /* take the batch out of its slot (under the lock: once freed, a worker refills it) */
    tn__loader_slot *s = &l->slots[l->next % l->cap];
    char err[sizeof s->err];
    int rc;
    if (!l->nthreads) {
        rc = tn__loader_load(l, l->next, s->items, s->err, sizeof s->err, -1);
        l->next++;
    } else {
#ifdef TN__HAVE_PTHREADS
        pthread_mutex_lock(&l->mu);
        while (!(s->state == 2 && s->batch == l->next)) pthread_cond_wait(&l->ready, &l->mu);
        rc = s->rc;
        s->state = 0;
        l->next++;
#else
        rc = -1;
#endif
    }
    if (rc) memcpy(err, s->err, sizeof err);
    for (int k = 0; k < l->nitems; k++) {
        batch[k] = rc ? NULL : s->items[k];
        s->items[k] = NULL;
    }
    tn__loader_unlock(l, true);  /* a slot is free: wake a worker */
    if (rc) return TN__FAIL_INT("tn_loader_next: %s", err);
    for (int k = 0; k < l->nitems; k++)
        if (!tn__own(batch[k])) { /* out of memory registering it: drop the rest too */
            for (int j = k + 1; j < l->nitems; j++) tn_release(batch[j]);
            for (int j = 0; j <= k; j++) batch[j] = NULL;
            return -1;
        }
    return 1;
}

TNDEF void tn_loader_free(tn_loader *l) {
    if (!l) return;
#ifdef TN__HAVE_PTHREADS
    if (l->nthreads) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_broadcast(&l->work);
        pthread_mutex_unlock(&l->mu);
        for (int i = 0; i < l->nthreads; i++) pthread_join(l->threads[i], NULL);
    }
    pthread_cond_destroy(&l->ready);
    pthread_cond_destroy(&l->work);
    pthread_mutex_destroy(&l->mu);
    TN_FREE(l->threads);
#endif
    for (int i = 0; i < l->cap; i++)  /* batches loaded ahead and never taken */
        if (l->slots[i].state == 2 && l->slots[i].rc == 0)
            for (int k = 0; k < l->nitems; k++) tn_release(l->slots[i].items[k]);
    TN_FREE(l->slots[0].items);
    TN_FREE(l->slots);
    TN_FREE(l->workers);
    TN_FREE(l->order);
    tn_generator_free(l->gen);
    TN_FREE(l);
}

/* ---- files: plain, or gzip through zlib ---- */
typedef struct tn__file {
    FILE *f;
#ifdef TENSOR_ZLIB
    gzFile gz;
#endif
} tn__file;

static int tn__file_open(const char *fn, const char *path, tn__file *r) {
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) return TN__FAIL_INT("%s: cannot open '%s': %s", fn, path, strerror(errno));
    unsigned char m[2] = {0, 0};
    size_t got = fread(m, 1, 2, f), pl = strlen(path);
    bool gz = (got == 2 && m[0] == 0x1f && m[1] == 0x8b) || (pl >= 3 && !strcmp(path + pl - 3, ".gz"));
    if (!gz) {
        if (fseek(f, 0, SEEK_SET)) { fclose(f); return TN__FAIL_INT("%s: cannot read '%s': %s", fn, path, strerror(errno)); }
        r->f = f;
        return 0;
    }
    fclose(f);
#ifdef TENSOR_ZLIB
    r->gz = gzopen(path, "rb");
    if (!r->gz) return TN__FAIL_INT("%s: cannot open '%s' through zlib", fn, path);
    return 0;
#else
    return TN__FAIL_INT("%s: '%s' is gzip-compressed; build with -DTENSOR_ZLIB and link -lz to read it (or gunzip it first)", fn, path);
#endif
}

/* Read up to n bytes; returns how many (short at the end of the file), or -1 with an error. */
static int64_t tn__file_read(const char *fn, const char *path, tn__file *r, void *buf, int64_t n) {
    int64_t done = 0;
#ifdef TENSOR_ZLIB
    if (r->gz) {
        while (done < n) {
            unsigned chunk = (unsigned)TN__MIN(n - done, (int64_t)1 << 30);
            int got = gzread(r->gz, (char *)buf + done, chunk);
            if (got < 0) {
                int zerr;
                const char *msg = gzerror(r->gz, &zerr);
                return TN__FAIL_INT("%s: '%s': corrupt gzip data (zlib: %s)", fn, path, msg ? msg : "unknown error");
            }
            if (got == 0) {
                int zerr;
                const char *msg = gzerror(r->gz, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END && zerr != Z_BUF_ERROR)
                    return TN__FAIL_INT("%s: '%s': corrupt gzip data (zlib: %s)", fn, path, msg ? msg : "unknown error");
                break;
            }
            done += got;
        }
        return done;
    }
#endif
    done = (int64_t)fread(buf, 1, (size_t)n, r->f);
    if (done < n && ferror(r->f)) return TN__FAIL_INT("%s: cannot read '%s': %s", fn, path, strerror(errno));
    return done;
}

/* Bytes from the position to the end of a plain file; -1 for gzip (not known ahead). */
static int64_t tn__file_left(tn__file *r) {
    if (!r->f) return -1;
    long here = ftell(r->f);
    if (here < 0 || fseek(r->f, 0, SEEK_END)) return -1;
    long end = ftell(r->f);
    if (end < 0 || fseek(r->f, here, SEEK_SET)) return -1;
    return (int64_t)end - (int64_t)here;
}

static void tn__file_close(tn__file *r) {
    if (r->f) fclose(r->f);
#ifdef TENSOR_ZLIB
    if (r->gz) gzclose(r->gz);
#endif
    memset(r, 0, sizeof *r);
}

/* Exactly n bytes into a new buffer (TN_MALLOC'd), then end of file; grown as data
   arrives, so a short hostile file never makes a large allocation. */
static char *tn__file_read_exact(const char *fn, const char *path, tn__file *r, int64_t n) {
    /* a plain file's size is known (read it at once), unless it lies (a directory) */
    int64_t cap = TN__MIN(n, r->f ? (int64_t)1 << 28 : (int64_t)1 << 20), have = 0;
    char *buf = (char *)TN_MALLOC((size_t)(cap ? cap : 1));
    if (!buf) return (char *)tn__error("%s: out of memory", fn);
    while (have < n) {
        if (have == cap) {
            cap = TN__MIN(n, 2 * cap);
            char *nb = (char *)TN_REALLOC(buf, (size_t)cap);
            if (!nb) { TN_FREE(buf); return (char *)tn__error("%s: out of memory reading '%s' (%lld bytes)", fn, path, (long long)n); }
            buf = nb;
        }
        int64_t got = tn__file_read(fn, path, r, buf + have, cap - have);
        if (got < 0) { TN_FREE(buf); return NULL; }
        if (got == 0) {
            TN_FREE(buf);
            return (char *)tn__error("%s: '%s' is truncated: the header promises %lld bytes of data, the file has %lld", fn, path, (long long)n, (long long)have);
        }
        have += got;
    }
    char extra[256];
    int64_t more = tn__file_read(fn, path, r, extra, sizeof extra);
    if (more != 0) {
        TN_FREE(buf);
        if (more < 0) return NULL;
        int64_t left = r->f ? tn__file_left(r) : -1;
        return (char *)tn__error("%s: '%s' has %s%lld bytes after the %lld bytes of data the header describes", fn, path,
                                 left < 0 ? "at least " : "", (long long)(more + (left > 0 ? left : 0)), (long long)n);
    }
    return buf;
}

/* ---- IDX ---- */
static uint32_t tn__be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

TNDEF tn_tensor *tn_read_idx(const char *path) {
    if (!path) return (tn_tensor *)tn__error("tn_read_idx: path is NULL");
    tn__file r;
    if (tn__file_open("tn_read_idx", path, &r)) return NULL;
    unsigned char h[4 + 4 * TN_MAX_DIMS];
    tn_tensor *t = NULL;
    char *raw = NULL;
    int64_t got = tn__file_read("tn_read_idx", path, &r, h, 4);
    int fsize = 0, ndim = 0;
    tn_dtype dtype = TN_U8;
    if (got < 0) goto done;
    if (got < 4) { tn__error("tn_read_idx: '%s' is too short (%lld bytes) for an IDX header", path, (long long)got); goto done; }
    if (h[0] || h[1]) {
        tn__error("tn_read_idx: '%s' is not an IDX file: bad magic %02x %02x %02x %02x (expected 00 00 <type> <ndim>)", path, h[0], h[1], h[2], h[3]);
        goto done;
    }
    switch (h[2]) {
    case 0x08: fsize = 1; dtype = TN_U8; break;
    case 0x09: fsize = 1; dtype = TN_I32; break;   /* int8: no such dtype here, widened */
    case 0x0B: fsize = 2; dtype = TN_I32; break;   /* int16: widened */
    case 0x0C: fsize = 4; dtype = TN_I32; break;
    case 0x0D: fsize = 4; dtype = TN_F32; break;
    case 0x0E: fsize = 8; dtype = TN_F64; break;
    default:
        tn__error("tn_read_idx: '%s': unknown IDX element type 0x%02x (expected 08 uint8, 09 int8, 0B int16, 0C int32, 0D float32 or 0E float64)", path, h[2]);
        goto done;
    }
    ndim = h[3];
    if (ndim > TN_MAX_DIMS) { tn__error("tn_read_idx: '%s' has %d dims; tensor.h supports at most %d", path, ndim, TN_MAX_DIMS); goto done; }
    got = tn__file_read("tn_read_idx", path, &r, h + 4, 4 * ndim);
    if (got < 0) goto done;
    if (got < 4 * ndim) { tn__error("tn_read_idx: '%s' is truncated inside its header (%d dims need %d bytes of sizes)", path, ndim, 4 * ndim); goto done; }
    {
        int64_t shape[TN_MAX_DIMS], numel = 1, nbytes;
        bool ok = true;
        for (int i = 0; i < ndim; i++) {
            shape[i] = (int64_t)tn__be32(h + 4 + 4 * i);
            ok = ok && tn__mul_ok(numel, shape[i], &numel);
        }
        if (!ok || !tn__mul_ok(numel, fsize, &nbytes) || numel > ((int64_t)1 << 60) / 8) {
            tn__error("tn_read_idx: '%s': dims %s have too many elements", path, tn__shape_str(shape, ndim));
            goto done;
        }
        int64_t left = tn__file_left(&r);
        if (left >= 0 && left != nbytes) {
            if (left < nbytes) tn__error("tn_read_idx: '%s' is truncated: the header (dims %s) promises %lld bytes of data, the file has %lld", path, tn__shape_str(shape, ndim), (long long)nbytes, (long long)left);
            else tn__error("tn_read_idx: '%s' has %lld bytes after the %lld bytes of data the header (dims %s) describes", path, (long long)(left - nbytes), (long long)nbytes, tn__shape_str(shape, ndim));
            goto done;
        }
        if (!(raw = tn__file_read_exact("tn_read_idx", path, &r, nbytes))) goto done;
        if (!(t = tn__new(dtype, TN_CPU, shape, ndim))) goto done;
        const unsigned char *p = (const unsigned char *)raw;
        void *out = tn_data_ptr(t);
        switch (h[2]) { /* big-endian, decoded bytewise: the host's byte order does not matter */
        case 0x08: if (numel) memcpy(out, p, (size_t)numel); break;
        case 0x09: for (int64_t i = 0; i < numel; i++) ((int32_t *)out)[i] = (int8_t)p[i]; break;
        case 0x0B: for (int64_t i = 0; i < numel; i++) ((int32_t *)out)[i] = (int16_t)(uint16_t)(p[2 * i] << 8 | p[2 * i + 1]); break;
        case 0x0C: for (int64_t i = 0; i < numel; i++) ((int32_t *)out)[i] = (int32_t)tn__be32(p + 4 * i); break;
        case 0x0D: for (int64_t i = 0; i < numel; i++) { uint32_t u = tn__be32(p + 4 * i); memcpy((float *)out + i, &u, 4); } break;
        default:
            for (int64_t i = 0; i < numel; i++) {
                uint64_t u = (uint64_t)tn__be32(p + 8 * i) << 32 | tn__be32(p + 8 * i + 4);
                memcpy((double *)out + i, &u, 8);
            }
        }
    }
done:
    TN_FREE(raw);
    tn__file_close(&r);
    return tn__own(t);
}

/* ---- CSV ---- */
/* tn__opts_parse splits at every comma, so a quoted comma ("delimiter=','") is hidden
   as \x01 before parsing and restored when read. */
static void tn__hide_quoted_commas(const char *in, char *out, size_t cap) {
    char q = 0;
    size_t i = 0;
    for (; in && in[i] && i + 1 < cap; i++) {
        char c = in[i];
        if (q) { if (c == q) q = 0; else if (c == ',') c = '\x01'; }
        else if (c == '\'' || c == '"') q = c;
        out[i] = c;
    }
    out[i] = 0;
}
/* An option value without its quotes, commas restored. */
static void tn__opts_unquote(const char *v, char *out, size_t cap) {
    size_t l = strlen(v);
    if (l >= 2 && (v[0] == '\'' || v[0] == '"') && v[l - 1] == v[0]) { v++; l -= 2; }
    if (l >= cap) l = cap - 1;
    for (size_t i = 0; i < l; i++) out[i] = v[i] == '\x01' ? ',' : v[i];
    out[l] = 0;
}

/* One field of a CSV line starting at p (end: the line's end): trimmed, unquoted, in
   buf. Returns the position after the field's delimiter (or end), NULL on a bad quote. */
static const char *tn__csv_field(const char *p, const char *end, char delim, char *buf, size_t cap, bool *last) {
    size_t n = 0;
    while (p < end && *p != delim && (*p == ' ' || *p == '\t')) p++;
    if (p < end && *p == '"') {
        p++;
        for (;;) {
            if (p >= end) return NULL;
            if (*p == '"') {
                if (p + 1 < end && p[1] == '"') { if (n + 1 < cap) buf[n++] = '"'; p += 2; continue; }
                p++;
                break;
            }
            if (n + 1 < cap) buf[n++] = *p;
            p++;
        }
        while (p < end && *p != delim && (*p == ' ' || *p == '\t')) p++;
        if (p < end && *p != delim) return NULL;
    } else {
        while (p < end && *p != delim) { if (n + 1 < cap) buf[n++] = *p; p++; }
        while (n && buf[n - 1] != delim && (buf[n - 1] == ' ' || buf[n - 1] == '\t')) n--;
    }
    buf[n] = 0;
    *last = p >= end;
    return p < end ? p + 1 : end;
}

static int tn__csv_count_fields(const char *p, const char *end, char delim) {
    int n = 1;
    bool q = false;
    for (; p < end; p++) {
        if (*p == '"') q = !q;
        else if (*p == delim && !q) n++;
    }
    return n;
}

TNDEF tn_tensor *tn_read_csv(const char *path, const char *options, tn_tensor **labels) {
    if (labels) *labels = NULL;
    if (!path) return (tn_tensor *)tn__error("tn_read_csv: path is NULL");
    char text[512];
    tn__hide_quoted_commas(options, text, sizeof text);
    tn__opts o;
    if (tn__opts_parse("tn_read_csv", text, &o)) return NULL;
    bool header = true;
    char delim = ',', label_name[96] = "";
    int64_t label_col = INT64_MIN;
    int di = tn__opts_find(&o, "delimiter"), li = tn__opts_find(&o, "label_column");
    if (di >= 0) {
        char d[96];
        tn__opts_unquote(o.val[di], d, sizeof d);
        if (!strcmp(d, "\\t") || !strcmp(d, "\t")) delim = '\t';
        else if (strlen(d) == 1 && d[0] != '"' && d[0] != '\n' && d[0] != '\r') delim = d[0];
        else return (tn_tensor *)tn__error("tn_read_csv: option delimiter=%s: expected one character (or '\\t')", o.val[di]);
    }
    if (li >= 0 && strcmp(o.val[li], "None")) {
        char *end;
        long long v = strtoll(o.val[li], &end, 10);
        if (*o.val[li] && !*end) label_col = v;
        else tn__opts_unquote(o.val[li], label_name, sizeof label_name);
    }
    int dt = tn__opts_word(&o, "dtype", "float32|float64");
    if (dt == -1 || tn__opts_bool(&o, "header", &header) < 0 || tn__opts_done(&o, "header, delimiter, label_column, dtype")) return NULL;
    if (label_name[0] && !header) return (tn_tensor *)tn__error("tn_read_csv: label_column='%s' names a column, which needs header=True", label_name);
    tn_dtype dtype = dt == 1 ? TN_F64 : TN_F32;

    FILE *f = fopen(path, "rb");
    if (!f) return (tn_tensor *)tn__error("tn_read_csv: cannot open '%s': %s", path, strerror(errno));
    tn__file r;
    memset(&r, 0, sizeof r);
    r.f = f;
    int64_t size = tn__file_left(&r);
    char *buf = size >= 0 ? tn__file_read_exact("tn_read_csv", path, &r, size) : NULL;
    if (size < 0 && !buf) tn__error("tn_read_csv: cannot read '%s'", path);
    fclose(f);
    if (!buf) return NULL;

    double *vals = NULL;
    int64_t *labs = NULL, rows = 0, cap = 0, line = 0;
    int ncols = -1, lc = -1;
    char cell[256];
    tn_tensor *x = NULL, *y = NULL;
    bool failed = false;
    const char *p = buf, *bend = buf + size;
    while (p < bend && !failed) {
        const char *e = (const char *)memchr(p, '\n', (size_t)(bend - p));
        const char *next = e ? e + 1 : bend;
        if (!e) e = bend;
        line++;
        if (e > p && e[-1] == '\r') e--;
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        if (q == e) { p = next; continue; }  /* a blank line */
        int nf = tn__csv_count_fields(p, e, delim);
        if (ncols < 0) { /* the first line fixes the columns and the label column */
            ncols = nf;
            if (label_name[0]) {
                const char *fp = p;
                bool last = false;
                for (int c = 0; c < nf && fp; c++) {
                    fp = tn__csv_field(fp, e, delim, cell, sizeof cell, &last);
                    if (fp && !strcmp(cell, label_name)) { lc = c; break; }
                }
                if (lc < 0) { tn__error("tn_read_csv: '%s': no column named '%s' in the header", path, label_name); failed = true; break; }
            } else if (label_col != INT64_MIN) {
                if (label_col < -ncols || label_col >= ncols) {
                    tn__error("tn_read_csv: label_column=%lld is out of range for %d columns", (long long)label_col, ncols);
                    failed = true;
                    break;
                }
                lc = (int)(label_col < 0 ? label_col + ncols : label_col);
            }
            if (header) { p = next; continue; }
        }
        if (nf != ncols) { tn__error("tn_read_csv: '%s' line %lld has %d columns, expected %d", path, (long long)line, nf, ncols); failed = true; break; }
        int nfeat = ncols - (lc >= 0);
        if (rows == cap) {
            cap = cap ? 2 * cap : 64;
            double *nv = (double *)TN_REALLOC(vals, (size_t)(cap * (nfeat ? nfeat : 1)) * sizeof *nv);
            if (nv) vals = nv;
            int64_t *nl = nv ? (int64_t *)TN_REALLOC(labs, (size_t)cap * sizeof *nl) : NULL;
            if (nl) labs = nl;
            if (!nl) { tn__error("tn_read_csv: out of memory at line %lld of '%s'", (long long)line, path); failed = true; break; }
        }
        const char *fp = p;
        int j = 0;
        for (int c = 0; c < ncols; c++) {
            bool last = false;
            fp = tn__csv_field(fp, e, delim, cell, sizeof cell, &last);
            if (!fp) { tn__error("tn_read_csv: '%s' line %lld, column %d: unterminated or misplaced quote", path, (long long)line, c + 1); failed = true; break; }
            char *end;
            double v = strtod(cell, &end);
            if (!cell[0] || *end) {
                tn__error("tn_read_csv: '%s' line %lld, column %d: cannot parse '%s' as a number", path, (long long)line, c + 1, cell);
                failed = true;
                break;
            }
            if (c == lc) {
                if (v != floor(v) || fabs(v) > 9.2e18) {
                    tn__error("tn_read_csv: '%s' line %lld, column %d: label '%s' is not an integer", path, (long long)line, c + 1, cell);
                    failed = true;
                    break;
                }
                labs[rows] = (int64_t)v;
            } else vals[rows * nfeat + j++] = v;
        }
        rows++;
        p = next;
    }
    if (!failed && ncols < 0) { tn__error("tn_read_csv: '%s' has no lines", path); failed = true; }
    if (!failed) {
        int64_t shape[2] = {rows, ncols - (lc >= 0)};
        tn_tensor *xd = tn__new(TN_F64, TN_CPU, shape, 2);
        if (xd && rows * shape[1] > 0) memcpy(tn_data_ptr(xd), vals, (size_t)(rows * shape[1]) * sizeof(double));
        x = xd ? tn__as_dtype(xd, dtype) : NULL;
        tn_release(xd);
        if (x && lc >= 0 && labels) {
            y = tn__new(TN_I64, TN_CPU, &rows, 1);
            if (y && rows) memcpy(tn_data_ptr(y), labs, (size_t)rows * sizeof(int64_t));
            if (!y) { tn_release(x); x = NULL; }
        }
        if (!x) tn__error("tn_read_csv: out of memory for %lld rows of '%s'", (long long)rows, path);
    }
    TN_FREE(vals);
    TN_FREE(labs);
    TN_FREE(buf);
    if (labels && x) *labels = tn__own(y);
    return tn__own(x);
}

/* ---- MNIST ---- */
typedef struct tn__mnist_ds { tn_dataset base; tn_tensor *images, *labels; } tn__mnist_ds;  /* u8 [N, H, W], i64 [N] */
static int64_t tn__mnist_len(tn_dataset *d) { return ((tn__mnist_ds *)d)->images->shape[0]; }
static int tn__mnist_get(tn_dataset *d, int64_t i, tn_tensor **items) {
    tn__mnist_ds *m = (tn__mnist_ds *)d;
    int64_t h = m->images->shape[1], w = m->images->shape[2], shape[3] = {1, h, w};
    tn_scope_begin();
    tn_tensor *img = tn_empty(shape, 3, TN_F32), *lab = tn_select(m->labels, 0, i);
    if (img && lab) {
        const uint8_t *src = (const uint8_t *)tn_data_ptr(m->images) + i * h * w;
        float *dst = (float *)tn_data_ptr(img);
        for (int64_t j = 0; j < h * w; j++) dst[j] = (float)src[j] / 255.0f;  /* ToTensor's x / 255 */
        items[0] = tn_keep(img);
        items[1] = tn_keep(lab);
    }
    tn_scope_end();
    return img && lab ? 0 : -1;
}
static void tn__mnist_destroy(tn_dataset *d) {
    tn__mnist_ds *m = (tn__mnist_ds *)d;
    tn_release(m->images);
    tn_release(m->labels);
    TN_FREE(m);
}
/* dir/name, or dir/name.gz when only that exists. */
static tn_tensor *tn__mnist_file(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(path, sizeof path, "%s/%s.gz", dir, name);
        f = fopen(path, "rb");
    }
    if (!f) return (tn_tensor *)tn__error("tn_mnist_dataset: no %s/%s or %s.gz (Fashion-MNIST: sh tools/fetch_fashion_mnist.sh)", dir, name, name);
    fclose(f);
    return TN__AS("tn_mnist_dataset", tn_read_idx(path));
}
TNDEF tn_dataset *tn_mnist_dataset(const char *dir, bool train) {
    if (!dir) return (tn_dataset *)tn__error("tn_mnist_dataset: dir is NULL");
    const char *split = train ? "train" : "t10k";
    char name[64];
    tn_dataset *ds = NULL;
    tn_scope_begin();
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    tn_tensor *img = tn__mnist_file(dir, name);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
    tn_tensor *lab = img ? tn__mnist_file(dir, name) : NULL;
    if (lab) {
        if (img->dtype != TN_U8 || img->ndim != 3 || lab->dtype != TN_U8 || lab->ndim != 1 || lab->shape[0] != img->shape[0])
            tn__error("tn_mnist_dataset: %s: expected uint8 images [N, H, W] and uint8 labels [N], got %s images %s and %s labels %s", dir,
                      tn_dtype_name(img->dtype), TN__SHAPE(img), tn_dtype_name(lab->dtype), TN__SHAPE(lab));
        else {
            tn__mnist_ds *m = (tn__mnist_ds *)TN_MALLOC(sizeof *m);
            tn_tensor *lab64 = TN__AS("tn_mnist_dataset", tn_to_dtype(lab, TN_I64));
            if (!m) tn__error("tn_mnist_dataset: out of memory");
            if (m && lab64) {
                memset(m, 0, sizeof *m);
                m->base.len = tn__mnist_len;
                m->base.get = tn__mnist_get;
                m->base.destroy = tn__mnist_destroy;
                m->base.nitems = 2;
                m->images = tn_retain(img);
                m->labels = tn_retain(lab64);
                ds = &m->base;
            } else TN_FREE(m);
        }
    }
    tn_scope_end();
    return ds;
}



/* ======================================================================= */
/* 15. serialization & printing                                             */
/* ======================================================================= */
/* ---- safetensors ----
   8-byte little-endian header size N, N bytes of JSON padded with spaces to a multiple
   of 8, then the data; data_offsets count from the data's first byte. Reading checks
   what the reference (Rust) implementation checks: N <= 100 MB and within the file,
   UTF-8, JSON into {name: {dtype, shape, data_offsets}} plus an optional
   "__metadata__" of strings; sorted by offsets, each tensor starts where the previous
   ended, holds exactly numel * itemsize bytes (no overflow), and the last ends at the
   end of the file. Also refused here: duplicate names or fields, nesting deeper than
   64, more than 8 dims, dtypes this library lacks. Nothing outside [data, data+size)
   is read. */
#if defined(__unix__) || defined(__APPLE__)
#define TN__HAVE_MMAP 1
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#endif

#define TN__ST_MAX_HEADER 100000000ULL
static const char *const tn__st_dtype_names[TN_NUM_DTYPES] = {"F32", "F64", "I32", "I64", "U8", "BOOL", "F16", "BF16"};
/* The reference's Dtype order (increasing alignment): writers sort by it, descending. */
static const int tn__st_rank[TN_NUM_DTYPES] = {5, 6, 4, 7, 1, 0, 2, 3};

typedef struct tn__st_entry {
    char *name;
    tn_dtype dtype;
    int ndim;
    int64_t shape[TN_MAX_DIMS];
    int64_t begin, end;                 /* in the data */
} tn__st_entry;

typedef struct tn__st_parse {
    const char *fn;                     /* the public function, for messages */
    const char *src;                    /* the file name, or NULL for a buffer */
    const unsigned char *s;             /* the JSON header */
    size_t n, i;
    tn__st_entry *e;
    int64_t ne, ecap;
    char **meta;                        /* key, value, key, value, ... */
    int64_t nmeta, metacap;
    bool has_meta;
} tn__st_parse;

/* "tn_safetensors_load: 'file': what" */
static int tn__st_fail(tn__st_parse *p, const char *fmt, ...) TN__PRINTF_FMT(2, 3);
static int tn__st_fail(tn__st_parse *p, const char *fmt, ...) {
    char why[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (p->src) tn__error("%s: '%s': %s", p->fn, p->src, why);
    else tn__error("%s: %s", p->fn, why);
    return -1;
}
/* A JSON syntax error, with its byte position in the file. */
static int tn__st_syntax(tn__st_parse *p, const char *what) {
    if (p->i >= p->n) return tn__st_fail(p, "invalid header JSON: unexpected end of the header (%zu bytes): %s", p->n, what);
    unsigned char c = p->s[p->i];
    if (c >= 0x20 && c < 0x7f) return tn__st_fail(p, "invalid header JSON at byte %zu ('%c'): %s", 8 + p->i, (char)c, what);
    return tn__st_fail(p, "invalid header JSON at byte %zu (0x%02x): %s", 8 + p->i, c, what);
}

static void tn__st_ws(tn__st_parse *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')) p->i++;
}
static bool tn__st_eat(tn__st_parse *p, char c) {
    tn__st_ws(p);
    if (p->i < p->n && p->s[p->i] == (unsigned char)c) { p->i++; return true; }
    return false;
}

/* Strict UTF-8 (no overlong forms, surrogates or values past U+10FFFF). */
static bool tn__utf8_ok(const unsigned char *s, size_t n, size_t *bad) {
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) { *bad = i; return false; }
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) { *bad = i; return false; }
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            *bad = i;
            return false;
        }
        i += len;
    }
    return true;
}

static int tn__st_hex4(tn__st_parse *p, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        if (p->i >= p->n) return tn__st_syntax(p, "unterminated \\u escape");
        unsigned char c = p->s[p->i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return tn__st_syntax(p, "invalid \\u escape (expected 4 hex digits)");
        v = v << 4 | (uint32_t)d;
        p->i++;
    }
    *out = v;
    return 0;
}

/* A JSON string into a new NUL-terminated UTF-8 buffer (*out, TN_MALLOC'd; NULL to skip). */
static int tn__st_string(tn__st_parse *p, char **out) {
    if (out) *out = NULL;
    tn__st_ws(p);
    if (p->i >= p->n || p->s[p->i] != '"') return tn__st_syntax(p, "expected a string");
    size_t start = ++p->i;
    char *buf = NULL;
    size_t len = 0;
    if (out) { /* the decoded string is never longer than its source */
        size_t j = start;
        while (j < p->n && p->s[j] != '"') j += p->s[j] == '\\' ? 2 : 1;
        buf = (char *)TN_MALLOC((j > p->n ? p->n : j) - start + 1);
        if (!buf) return tn__st_fail(p, "out of memory");
    }
    for (;;) {
        if (p->i >= p->n) { TN_FREE(buf); p->i = start - 1; return tn__st_syntax(p, "unterminated string"); }
        unsigned char c = p->s[p->i];
        if (c == '"') { p->i++; break; }
        if (c < 0x20) { TN_FREE(buf); return tn__st_syntax(p, "control character in a string (must be escaped)"); }
        if (c != '\\') { if (buf) buf[len++] = (char)c; p->i++; continue; }
        if (++p->i >= p->n) { TN_FREE(buf); return tn__st_syntax(p, "unterminated string"); }
        c = p->s[p->i++];
        char e = c == '"' ? '"' : c == '\\' ? '\\' : c == '/' ? '/' : c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : 0;
        if (e) { if (buf) buf[len++] = e; continue; }
        if (c != 'u') { p->i--; TN_FREE(buf); return tn__st_syntax(p, "invalid escape in a string"); }
        uint32_t cp = 0, lo = 0;   /* set by tn__st_hex4; initialised for -O3's flow analysis */
        if (tn__st_hex4(p, &cp)) { TN_FREE(buf); return -1; }
        if (cp >= 0xDC00 && cp <= 0xDFFF) { TN_FREE(buf); return tn__st_syntax(p, "lone trailing surrogate in a \\u escape"); }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (p->i + 1 >= p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u') { TN_FREE(buf); return tn__st_syntax(p, "lone leading surrogate in a \\u escape"); }
            p->i += 2;
            if (tn__st_hex4(p, &lo)) { TN_FREE(buf); return -1; }
            if (lo < 0xDC00 || lo > 0xDFFF) { TN_FREE(buf); return tn__st_syntax(p, "invalid surrogate pair in a \\u escape"); }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp == 0) { TN_FREE(buf); return tn__st_syntax(p, "\\u0000 in a string is not supported (names are C strings)"); }
        if (!buf) continue; /* 6 or 12 source bytes become at most 4 */
        if (cp < 0x80) buf[len++] = (char)cp;
        else if (cp < 0x800) { buf[len++] = (char)(0xC0 | cp >> 6); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) { buf[len++] = (char)(0xE0 | cp >> 12); buf[len++] = (char)(0x80 | (cp >> 6 & 0x3F)); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
        else { buf[len++] = (char)(0xF0 | cp >> 18); buf[len++] = (char)(0x80 | (cp >> 12 & 0x3F)); buf[len++] = (char)(0x80 | (cp >> 6 & 0x3F)); buf[len++] = (char)(0x80 | (cp & 0x3F)); }
    }
    if (buf) { buf[len] = 0; *out = buf; }
    return 0;
}

/* A JSON number; *integer tells whether it was a plain non-negative integer that fits in
   int64 (then in *v). */
static int tn__st_number(tn__st_parse *p, bool *integer, int64_t *v) {
    tn__st_ws(p);
    size_t i = p->i;
    bool neg = false, frac = false, big = false;
    uint64_t acc = 0;
    if (i < p->n && p->s[i] == '-') { neg = true; i++; }
    if (i >= p->n || p->s[i] < '0' || p->s[i] > '9') { p->i = i; return tn__st_syntax(p, "expected a number"); }
    if (p->s[i] == '0' && i + 1 < p->n && p->s[i + 1] >= '0' && p->s[i + 1] <= '9') { p->i = i; return tn__st_syntax(p, "leading zero in a number"); }
    for (; i < p->n && p->s[i] >= '0' && p->s[i] <= '9'; i++) {
        if (acc > (uint64_t)INT64_MAX / 10 || (acc == (uint64_t)INT64_MAX / 10 && (uint64_t)(p->s[i] - '0') > (uint64_t)INT64_MAX % 10)) big = true;
        acc = acc * 10 + (uint64_t)(p->s[i] - '0');
    }
    if (i < p->n && p->s[i] == '.') {
        frac = true;
        if (++i >= p->n || p->s[i] < '0' || p->s[i] > '9') { p->i = i; return tn__st_syntax(p, "expected digits after '.'"); }
        while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
        frac = true;
        if (++i < p->n && (p->s[i] == '+' || p->s[i] == '-')) i++;
        if (i >= p->n || p->s[i] < '0' || p->s[i] > '9') { p->i = i; return tn__st_syntax(p, "expected digits in an exponent"); }
        while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
    }
    p->i = i;
    *integer = !neg && !frac && !big;
    *v = *integer ? (int64_t)acc : neg ? -1 : INT64_MAX;
    return 0;
}

/* Any JSON value, checked and dropped (fields the format does not define). */
static int tn__st_skip(tn__st_parse *p, int depth) {
    if (depth > 64) return tn__st_syntax(p, "nesting deeper than 64 levels");
    tn__st_ws(p);
    if (p->i >= p->n) return tn__st_syntax(p, "expected a value");
    unsigned char c = p->s[p->i];
    if (c == '"') return tn__st_string(p, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        p->i++;
        if (tn__st_eat(p, close)) return 0;
        do {
            if (c == '{' && (tn__st_string(p, NULL) || (!tn__st_eat(p, ':') && tn__st_syntax(p, "expected ':'")))) return -1;
            if (tn__st_skip(p, depth + 1)) return -1;
        } while (tn__st_eat(p, ','));
        return tn__st_eat(p, close) ? 0 : tn__st_syntax(p, c == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    const char *lit[3] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t l = strlen(lit[k]);
        if (p->n - p->i >= l && !memcmp(p->s + p->i, lit[k], l)) { p->i += l; return 0; }
    }
    bool integer;
    int64_t v;
    return tn__st_number(p, &integer, &v);
}

/* [a, b, ...] of non-negative integers, at most max of them. */
static int tn__st_int_array(tn__st_parse *p, const char *tname, const char *field, int64_t *out, int max, int *count) {
    *count = 0;
    if (!tn__st_eat(p, '[')) return tn__st_syntax(p, "expected '['");
    if (tn__st_eat(p, ']')) return 0;
    do {
        bool integer;
        int64_t v;
        size_t at = p->i;
        if (tn__st_number(p, &integer, &v)) return -1;
        if (!integer) {
            char num[40];
            size_t l = TN__MIN(p->i - at, sizeof num - 1);
            memcpy(num, p->s + at, l);
            num[l] = 0;
            return tn__st_fail(p, "tensor '%s': %s holds %s, expected integers in [0, 2^63)", tname, field, num);
        }
        if (*count == max) return tn__st_fail(p, "tensor '%s': %s has more than %d entries%s", tname, field, max, max == TN_MAX_DIMS ? " (tensor.h supports at most 8 dims)" : "");
        out[(*count)++] = v;
    } while (tn__st_eat(p, ','));
    return tn__st_eat(p, ']') ? 0 : tn__st_syntax(p, "expected ',' or ']'");
}

/* One tensor's {"dtype": ..., "shape": [...], "data_offsets": [b, e]} (name taken). */
static int tn__st_tensor(tn__st_parse *p, char *name) {
    if (p->ne == p->ecap) {
        int64_t cap = p->ecap ? 2 * p->ecap : 16;
        tn__st_entry *e = (tn__st_entry *)TN_REALLOC(p->e, (size_t)cap * sizeof *e);
        if (!e) { TN_FREE(name); return tn__st_fail(p, "out of memory"); }
        p->e = e;
        p->ecap = cap;
    }
    tn__st_entry *t = &p->e[p->ne++];
    memset(t, 0, sizeof *t);
    t->name = name;
    bool seen[3] = {false, false, false};
    if (!tn__st_eat(p, '{')) return tn__st_syntax(p, "expected '{' (a tensor's dtype, shape and data_offsets)");
    if (!tn__st_eat(p, '}')) {
    do {
        char *key;
        if (tn__st_string(p, &key)) return -1;
        int f = !strcmp(key, "dtype") ? 0 : !strcmp(key, "shape") ? 1 : !strcmp(key, "data_offsets") ? 2 : -1;
        TN_FREE(key);
        if (!tn__st_eat(p, ':')) return tn__st_syntax(p, "expected ':'");
        if (f < 0) { if (tn__st_skip(p, 2)) return -1; continue; }
        if (seen[f]) return tn__st_fail(p, "tensor '%s': field '%s' given twice", name, f == 0 ? "dtype" : f == 1 ? "shape" : "data_offsets");
        seen[f] = true;
        if (f == 0) {
            char *d;
            tn__st_ws(p);
            if (p->i >= p->n || p->s[p->i] != '"') return tn__st_fail(p, "tensor '%s': dtype must be a string", name);
            if (tn__st_string(p, &d)) return -1;
            int k = 0;
            while (k < TN_NUM_DTYPES && strcmp(d, tn__st_dtype_names[k])) k++;
            static const char *const known[] = {"I8", "I16", "U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64"};
            bool other = false;
            for (size_t j = 0; j < sizeof known / sizeof *known; j++) other = other || !strcmp(d, known[j]);
            if (k == TN_NUM_DTYPES) {
                int rc = other ? tn__st_fail(p, "tensor '%s' has dtype %s, which tensor.h does not support (supported: F32, F64, I32, I64, U8, BOOL, F16, BF16)", name, d)
                               : tn__st_fail(p, "tensor '%s' has unknown dtype \"%.40s\"", name, d);
                TN_FREE(d);
                return rc;
            }
            TN_FREE(d);
            t->dtype = (tn_dtype)k;
        } else if (f == 1) {
            if (tn__st_int_array(p, name, "shape", t->shape, TN_MAX_DIMS, &t->ndim)) return -1;
        } else {
            int64_t off[2];
            int c;
            if (tn__st_int_array(p, name, "data_offsets", off, 2, &c)) return -1;
            if (c != 2) return tn__st_fail(p, "tensor '%s': data_offsets must be [begin, end], got %d numbers", name, c);
            t->begin = off[0];
            t->end = off[1];
        }
    } while (tn__st_eat(p, ','));
    if (!tn__st_eat(p, '}')) return tn__st_syntax(p, "expected ',' or '}'");
    }
    for (int f = 0; f < 3; f++)
        if (!seen[f]) return tn__st_fail(p, "tensor '%s' has no '%s'", name, f == 0 ? "dtype" : f == 1 ? "shape" : "data_offsets");
    return 0;
}

static int tn__st_metadata(tn__st_parse *p) {
    if (p->has_meta) return tn__st_fail(p, "\"__metadata__\" given twice");
    p->has_meta = true;
    tn__st_ws(p);
    if (p->n - p->i >= 4 && !memcmp(p->s + p->i, "null", 4)) { p->i += 4; return 0; }
    if (!tn__st_eat(p, '{')) return tn__st_fail(p, "\"__metadata__\" must be an object of strings");
    if (tn__st_eat(p, '}')) return 0;
    do {
        char *k, *v;
        if (tn__st_string(p, &k)) return -1;
        if (!tn__st_eat(p, ':')) { TN_FREE(k); return tn__st_syntax(p, "expected ':'"); }
        tn__st_ws(p);
        if (p->i >= p->n || p->s[p->i] != '"') {
            int rc = tn__st_fail(p, "metadata value of '%s' is not a string (safetensors metadata maps strings to strings)", k);
            TN_FREE(k);
            return rc;
        }
        if (tn__st_string(p, &v)) { TN_FREE(k); return -1; }
        if (p->nmeta == p->metacap) {
            int64_t cap = p->metacap ? 2 * p->metacap : 8;
            char **m = (char **)TN_REALLOC(p->meta, (size_t)cap * 2 * sizeof *m);
            if (!m) { TN_FREE(k); TN_FREE(v); return tn__st_fail(p, "out of memory"); }
            p->meta = m;
            p->metacap = cap;
        }
        p->meta[2 * p->nmeta] = k;
        p->meta[2 * p->nmeta++ + 1] = v;
    } while (tn__st_eat(p, ','));
    return tn__st_eat(p, '}') ? 0 : tn__st_syntax(p, "expected ',' or '}'");
}

static int tn__st_cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int tn__st_cmp_offsets(const void *a, const void *b) {
    const tn__st_entry *x = *(const tn__st_entry *const *)a, *y = *(const tn__st_entry *const *)b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1) : x->end != y->end ? (x->end < y->end ? -1 : 1) : 0;
}

/* Duplicate strings in a list (names or metadata keys), found by sorting: n log n, not n^2. */
static const char *tn__st_duplicate(char **names, int64_t n) {
    qsort(names, (size_t)n, sizeof *names, tn__st_cmp_name);
    for (int64_t i = 1; i < n; i++) if (!strcmp(names[i - 1], names[i])) return names[i];
    return NULL;
}

/* Whole-header checks after the JSON: names unique, offsets tile [0, datalen). */
static int tn__st_validate(tn__st_parse *p, uint64_t datalen) {
    int64_t ne = p->ne;
    void *scratch = TN_MALLOC((size_t)(TN__MAX(ne, p->nmeta) + 1) * sizeof(void *));
    if (!scratch) return tn__st_fail(p, "out of memory");
    char **names = (char **)scratch;
    for (int64_t i = 0; i < ne; i++) names[i] = p->e[i].name;
    const char *dup = tn__st_duplicate(names, ne);
    if (dup) { int rc = tn__st_fail(p, "tensor name '%s' appears twice in the header", dup); TN_FREE(scratch); return rc; }
    for (int64_t i = 0; i < p->nmeta; i++) names[i] = p->meta[2 * i];
    dup = tn__st_duplicate(names, p->nmeta);
    if (dup) { int rc = tn__st_fail(p, "metadata key '%s' appears twice", dup); TN_FREE(scratch); return rc; }
    int rc = 0;
    for (int64_t i = 0; i < ne && !rc; i++) {
        tn__st_entry *t = &p->e[i];
        int64_t numel = 1, nbytes = 0;
        bool ok = true;
        for (int d = 0; d < t->ndim; d++) ok = ok && tn__mul_ok(numel, t->shape[d], &numel);
        ok = ok && tn__mul_ok(numel, (int64_t)tn_dtype_size(t->dtype), &nbytes);
        if (t->end < t->begin) rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] are reversed", t->name, (long long)t->begin, (long long)t->end);
        else if ((uint64_t)t->end > datalen)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] go past the end of the data (%llu bytes)", t->name, (long long)t->begin, (long long)t->end, (unsigned long long)datalen);
        else if (!ok) rc = tn__st_fail(p, "tensor '%s': shape %s overflows", t->name, tn__shape_str(t->shape, t->ndim));
        else if (t->end - t->begin != nbytes)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] hold %lld bytes, but shape %s of %s needs %lld", t->name, (long long)t->begin,
                             (long long)t->end, (long long)(t->end - t->begin), tn__shape_str(t->shape, t->ndim), tn__st_dtype_names[t->dtype], (long long)nbytes);
    }
    tn__st_entry **byoff = (tn__st_entry **)scratch;
    for (int64_t i = 0; i < ne && !rc; i++) byoff[i] = &p->e[i];
    if (!rc) qsort(byoff, (size_t)ne, sizeof *byoff, tn__st_cmp_offsets);
    int64_t at = 0;
    for (int64_t i = 0; i < ne && !rc; i++) {
        tn__st_entry *t = byoff[i];
        if (t->begin < at)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] overlap tensor '%s' (which ends at %lld)", t->name, (long long)t->begin, (long long)t->end, byoff[i - 1]->name, (long long)at);
        else if (t->begin > at)
            rc = tn__st_fail(p, "tensor '%s': data_offsets [%lld, %lld] leave a hole: bytes [%lld, %lld) belong to no tensor", t->name, (long long)t->begin, (long long)t->end, (long long)at, (long long)t->begin);
        at = t->end;
    }
    if (!rc && (uint64_t)at != datalen)
        rc = tn__st_fail(p, "the tensors cover %lld bytes of data, but the file has %llu after the header (incomplete or extra data)", (long long)at, (unsigned long long)datalen);
    TN_FREE(scratch);
    return rc;
}

/* A file mapping (or a malloc'd copy of the file) shared by the tensors that alias it. */
typedef struct tn__st_map { void *addr; size_t len; int64_t refs; bool mapped; } tn__st_map;
static void tn__st_map_unref(tn__st_map *m) {
    if (!m || TN__ATOMIC_ADD(&m->refs, -1) != 0) return;
#ifdef TN__HAVE_MMAP
    if (m->mapped) munmap(m->addr, m->len);
    else
#endif
        TN_FREE(m->addr);
    TN_FREE(m);
}
static void tn__st_map_deleter(void *data, void *ctx) { (void)data; tn__st_map_unref((tn__st_map *)ctx); }

/* Parse and check bytes [0, size); then build the dict. With map, a tensor whose data is
   aligned to its element size aliases the bytes (taking a reference on map); otherwise
   tensors are copies. */
static tn_dict *tn__st_parse_bytes(const char *fn, const char *src, const unsigned char *b, size_t size, tn__st_map *map) {
    tn__st_parse p;
    memset(&p, 0, sizeof p);
    p.fn = fn;
    p.src = src;
    if (size < 8) { tn__st_fail(&p, "%zu bytes is too small for a safetensors file (the header size alone takes 8)", size); return NULL; }
    uint64_t hn = 0;
    for (int k = 7; k >= 0; k--) hn = hn << 8 | b[k];
    if (hn > TN__ST_MAX_HEADER) { tn__st_fail(&p, "header size %llu is larger than the limit of %llu bytes", (unsigned long long)hn, TN__ST_MAX_HEADER); return NULL; }
    if (hn > size - 8) { tn__st_fail(&p, "header size %llu goes past the end of the file (%zu bytes)", (unsigned long long)hn, size); return NULL; }
    p.s = b + 8;
    p.n = (size_t)hn;
    size_t bad;
    if (!tn__utf8_ok(p.s, p.n, &bad)) { tn__st_fail(&p, "the header is not valid UTF-8 (at byte %zu)", 8 + bad); return NULL; }
    tn_dict *d = NULL;
    int rc = 0;
    tn__st_ws(&p);
    if (p.i >= p.n || p.s[p.i] != '{') rc = tn__st_fail(&p, "the header is not a JSON object (it must start with '{')");
    else {
        p.i++;
        if (!tn__st_eat(&p, '}')) {
            do {
                char *key;
                if ((rc = tn__st_string(&p, &key)) != 0) break;
                if (!tn__st_eat(&p, ':')) { TN_FREE(key); rc = tn__st_syntax(&p, "expected ':'"); break; }
                if (!strcmp(key, "__metadata__")) { TN_FREE(key); rc = tn__st_metadata(&p); }
                else rc = tn__st_tensor(&p, key);
            } while (!rc && tn__st_eat(&p, ','));
            if (!rc && !tn__st_eat(&p, '}')) rc = tn__st_syntax(&p, "expected ',' or '}'");
        }
        tn__st_ws(&p);
        if (!rc && p.i != p.n) rc = tn__st_syntax(&p, "unexpected bytes after the JSON object (only spaces may pad the header)");
    }
    if (!rc) rc = tn__st_validate(&p, size - 8 - hn);
    if (!rc && !(d = tn_dict_new())) rc = -1;
    /* the tensors, in header order; names and metadata move into the dict as they are */
    const unsigned char *data = b + 8 + hn;
    tn_scope_begin();
    for (int64_t i = 0; i < p.ne && !rc; i++) {
        tn__st_entry *t = &p.e[i];
        size_t nb = (size_t)(t->end - t->begin), es = tn_dtype_size(t->dtype);
        const unsigned char *at = data + t->begin;
        tn_tensor *x;
        if (map && nb && (uintptr_t)at % es == 0) {
            int64_t refs = TN__ATOMIC_ADD(&map->refs, 1);
            x = tn_from_blob((void *)(uintptr_t)at, t->shape, t->ndim, NULL, t->dtype, tn__st_map_deleter, map);
            /* a failed tn_from_blob may or may not have run the deleter: settle the count */
            if (!x && TN__ATOMIC_LOAD(&map->refs) == refs) tn__st_map_unref(map);
        } else {
            x = tn_empty(t->shape, t->ndim, t->dtype);
            if (x && nb) memcpy(tn_data_ptr(x), at, nb);
        }
        if (!x) rc = tn__st_fail(&p, "out of memory for tensor '%s'", t->name);
        else if (p.ne > INT_MAX - 1) rc = tn__st_fail(&p, "%lld tensors are more than a tn_dict holds", (long long)p.ne);
        else if (tn__dict_append(d, t->name, x)) rc = -1;
        else t->name = NULL;  /* the dict's now */
    }
    for (int64_t i = 0; i < p.nmeta && !rc; i++) {
        if (p.nmeta > INT_MAX / 2) rc = tn__st_fail(&p, "%lld metadata entries are more than a tn_dict holds", (long long)p.nmeta);
        else if (tn__dict_append_meta(d, p.meta[2 * i], p.meta[2 * i + 1])) rc = -1;
        else p.meta[2 * i] = p.meta[2 * i + 1] = NULL;
    }
    tn_scope_end();
    for (int64_t i = 0; i < p.ne; i++) TN_FREE(p.e[i].name);
    for (int64_t i = 0; i < 2 * p.nmeta; i++) TN_FREE(p.meta[i]);
    TN_FREE(p.e);
    TN_FREE(p.meta);
    if (rc) { tn_dict_free(d); return NULL; }
    return d;
}

TNDEF tn_dict *tn_safetensors_load_buffer(const void *data, size_t size) {
    if (!data && size) return (tn_dict *)tn__error("tn_safetensors_load_buffer: data is NULL");
    return tn__st_parse_bytes("tn_safetensors_load_buffer", NULL, (const unsigned char *)(data ? data : ""), data ? size : 0, NULL);
}

TNDEF tn_dict *tn_safetensors_load(const char *path) {
    if (!path) return (tn_dict *)tn__error("tn_safetensors_load: path is NULL");
    tn__st_map *m = (tn__st_map *)TN_MALLOC(sizeof *m);
    if (!m) return (tn_dict *)tn__error("tn_safetensors_load: out of memory");
    memset(m, 0, sizeof *m);
    m->refs = 1;  /* ours, while parsing */
#ifdef TN__HAVE_MMAP
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        TN_FREE(m);
        return (tn_dict *)tn__error("tn_safetensors_load: cannot open '%s': %s", path, strerror(err));
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        TN_FREE(m);
        return (tn_dict *)tn__error("tn_safetensors_load: '%s' is not a regular file of addressable size", path);
    }
    m->len = (size_t)st.st_size;
    if (m->len) {
        /* private and copy-on-write: writes to a loaded tensor stay in this process */
        m->addr = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (m->addr == MAP_FAILED) {
            int err = errno;
            close(fd);
            TN_FREE(m);
            return (tn_dict *)tn__error("tn_safetensors_load: cannot map '%s' (%zu bytes): %s", path, (size_t)st.st_size, strerror(err));
        }
        m->mapped = true;
    }
    close(fd);
#else
    FILE *f = fopen(path, "rb");
    if (!f) {
        TN_FREE(m);
        return (tn_dict *)tn__error("tn_safetensors_load: cannot open '%s': %s", path, strerror(errno));
    }
    tn__file r;
    memset(&r, 0, sizeof r);
    r.f = f;
    int64_t size = tn__file_left(&r);
    if (size >= 0) m->addr = tn__file_read_exact("tn_safetensors_load", path, &r, size);
    fclose(f);
    if (!m->addr) {
        TN_FREE(m);
        return size >= 0 ? NULL : (tn_dict *)tn__error("tn_safetensors_load: cannot read '%s'", path);
    }
    m->len = (size_t)size;
#endif
    tn_dict *d = tn__st_parse_bytes("tn_safetensors_load", path, (const unsigned char *)(m->addr ? m->addr : ""), m->len, m);
    tn__st_map_unref(m);
    return d;
}

/* ---- writing ---- */
static void tn__st_json_string(tn__sbuf *b, const char *s) {
    static const char hex[] = "0123456789abcdef";
    tn__sb_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
        switch (*c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            if (*c >= 0x20) { tn__sb_put(b, (const char *)c, 1); continue; }
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0'; esc[4] = hex[*c >> 4]; esc[5] = hex[*c & 15];
        }
        tn__sb_puts(b, esc);
    }
    tn__sb_put(b, "\"", 1);
}

typedef struct tn__st_item { const char *name; tn_tensor *t; int64_t nbytes; } tn__st_item;
static int tn__st_cmp_items(const void *a, const void *b) {
    const tn__st_item *x = (const tn__st_item *)a, *y = (const tn__st_item *)b;
    int rx = tn__st_rank[x->t->dtype], ry = tn__st_rank[y->t->dtype];
    return rx != ry ? ry - rx : strcmp(x->name, y->name);
}

/* The padded header of d, and d's tensors in file order (*items, TN_MALLOC'd). */
static int tn__st_header(const char *fn, const tn_dict *d, tn__sbuf *hdr, tn__st_item **items_out, int *n_out) {
    int n = tn_dict_len(d);
    tn__st_item *items = (tn__st_item *)TN_MALLOC((size_t)(n ? n : 1) * sizeof *items);
    if (!items) return TN__FAIL_INT("%s: out of memory", fn);
    size_t bad;
    for (int i = 0; i < n; i++) {
        const char *name = tn_dict_key(d, i);
        tn_tensor *t = tn_dict_value(d, i);
        const char *why = !t ? "has no tensor (NULL)" : !strcmp(name, "__metadata__") ? "is reserved for the metadata"
                        : !tn__utf8_ok((const unsigned char *)name, strlen(name), &bad) ? "is not valid UTF-8" : NULL;
        if (why) { TN_FREE(items); return TN__FAIL_INT("%s: tensor name '%s' %s", fn, name, why); }
        items[i].name = name;
        items[i].t = t;
        items[i].nbytes = tn_numel(t) * (int64_t)tn_dtype_size(t->dtype);
    }
    for (int i = 0; i < tn_dict_meta_len(d); i++) {
        const char *k = tn_dict_meta_key(d, i), *v = tn_dict_get_meta(d, k);
        if (!tn__utf8_ok((const unsigned char *)k, strlen(k), &bad) || !tn__utf8_ok((const unsigned char *)v, strlen(v), &bad)) {
            TN_FREE(items);
            return TN__FAIL_INT("%s: metadata '%s' is not valid UTF-8", fn, k);
        }
    }
    qsort(items, (size_t)n, sizeof *items, tn__st_cmp_items);
    memset(hdr, 0, sizeof *hdr);
    tn__sb_puts(hdr, "{");
    if (tn_dict_meta_len(d)) {
        tn__sb_puts(hdr, "\"__metadata__\":{");
        for (int i = 0; i < tn_dict_meta_len(d); i++) {
            const char *k = tn_dict_meta_key(d, i);
            if (i) tn__sb_puts(hdr, ",");
            tn__st_json_string(hdr, k);
            tn__sb_puts(hdr, ":");
            tn__st_json_string(hdr, tn_dict_get_meta(d, k));
        }
        tn__sb_puts(hdr, n ? "}," : "}");
    }
    int64_t off = 0;
    char num[64];
    for (int i = 0; i < n; i++) {
        tn_tensor *t = items[i].t;
        if (i) tn__sb_puts(hdr, ",");
        tn__st_json_string(hdr, items[i].name);
        tn__sb_puts(hdr, ":{\"dtype\":\"");
        tn__sb_puts(hdr, tn__st_dtype_names[t->dtype]);
        tn__sb_puts(hdr, "\",\"shape\":[");
        for (int k = 0; k < t->ndim; k++) { snprintf(num, sizeof num, k ? ",%lld" : "%lld", (long long)t->shape[k]); tn__sb_puts(hdr, num); }
        snprintf(num, sizeof num, "],\"data_offsets\":[%lld,%lld]}", (long long)off, (long long)(off + items[i].nbytes));
        tn__sb_puts(hdr, num);
        off += items[i].nbytes;
    }
    tn__sb_puts(hdr, "}");
    while (!hdr->failed && hdr->n % 8) tn__sb_puts(hdr, " ");  /* the data starts 8-byte aligned */
    if (hdr->failed || hdr->n > TN__ST_MAX_HEADER) {
        TN_FREE(items);
        TN_FREE(hdr->s);
        return TN__FAIL_INT("%s: %s", fn, hdr->failed ? "out of memory" : "the header would be larger than 100 MB");
    }
    *items_out = items;
    *n_out = n;
    return 0;
}

/* t's bytes, row-major on the CPU: t's own memory when contiguous, else a copy in
   *tmp (any dtype, F16/BF16 too: elements are moved as bytes). */
static void tn__st_copy_loop(char **p, const int64_t *s, int64_t n, void *ctx) {
    size_t es = *(const size_t *)ctx;
    for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], es);
}
static const void *tn__st_bytes(const char *fn, tn_tensor *t, tn_tensor **tmp) {
    *tmp = NULL;
    if (t->device == TN_CPU && tn_is_contiguous(t)) return tn_data_ptr(t);
    tn_tensor *c = tn__new(t->dtype, TN_CPU, t->shape, t->ndim);
    if (!c) return NULL;
    if (t->device == TN_CPU) {
        size_t es = tn_dtype_size(t->dtype);
        tn__iter it;
        tn__iter_init(&it, t->shape, t->ndim);
        tn__iter_add(&it, c);
        tn__iter_add(&it, t);
        tn__iter_run(&it, tn__st_copy_loop, &es);
    } else if (TN__KERNEL(fn, tn__backend(t->device)->copy(c, t))) {
        tn_release(c);
        return NULL;
    }
    *tmp = c;
    return tn_data_ptr(c);
}

TNDEF char *tn_safetensors_serialize(const tn_dict *d, size_t *size) {
    if (size) *size = 0;
    if (!d || !size) return (char *)tn__error("tn_safetensors_serialize: need a dict and a size pointer");
    tn__sbuf hdr;
    tn__st_item *items;
    int n;
    if (tn__st_header("tn_safetensors_serialize", d, &hdr, &items, &n)) return NULL;
    uint64_t total = 8 + hdr.n;
    for (int i = 0; i < n; i++) total += (uint64_t)items[i].nbytes;
    char *out = total <= (uint64_t)SIZE_MAX ? (char *)TN_MALLOC((size_t)total) : NULL;
    if (!out) tn__error("tn_safetensors_serialize: out of memory for %llu bytes", (unsigned long long)total);
    size_t at = 8;
    for (int k = 0; out && k < 8; k++) out[k] = (char)(hdr.n >> (8 * k) & 0xFF);
    if (out) memcpy(out + 8, hdr.s, hdr.n);
    at += hdr.n;
    for (int i = 0; out && i < n; i++) {
        tn_tensor *tmp;
        const void *src = tn__st_bytes("tn_safetensors_serialize", items[i].t, &tmp);
        if (!src) { TN_FREE(out); out = NULL; break; }
        if (items[i].nbytes) memcpy(out + at, src, (size_t)items[i].nbytes);
        at += (size_t)items[i].nbytes;
        tn_release(tmp);
    }
    TN_FREE(hdr.s);
    TN_FREE(items);
    if (out) *size = (size_t)total;
    return out;
}

TNDEF int tn_safetensors_save(const char *path, const tn_dict *d) {
    if (!path || !d) return TN__FAIL_INT("tn_safetensors_save: need a path and a dict");
    tn__sbuf hdr;
    tn__st_item *items;
    int n;
    if (tn__st_header("tn_safetensors_save", d, &hdr, &items, &n)) return -1;
    size_t pl = strlen(path);
    char *tmpname = (char *)TN_MALLOC(pl + 16);
    FILE *f = NULL;
    int rc = 0;
    if (!tmpname) rc = TN__FAIL_INT("tn_safetensors_save: out of memory");
    else {
        snprintf(tmpname, pl + 16, "%s.tmp", path);
        f = fopen(tmpname, "wb");
        if (!f) rc = TN__FAIL_INT("tn_safetensors_save: cannot create '%s': %s", tmpname, strerror(errno));
    }
    unsigned char len8[8];
    for (int k = 0; k < 8; k++) len8[k] = (unsigned char)((uint64_t)hdr.n >> (8 * k) & 0xFF);
    bool io_ok = f && fwrite(len8, 1, 8, f) == 8 && fwrite(hdr.s, 1, hdr.n, f) == hdr.n;
    for (int i = 0; f && io_ok && i < n; i++) {
        tn_tensor *tmp;
        const void *src = tn__st_bytes("tn_safetensors_save", items[i].t, &tmp);
        if (!src) { rc = -1; break; }
        io_ok = !items[i].nbytes || fwrite(src, 1, (size_t)items[i].nbytes, f) == (size_t)items[i].nbytes;
        tn_release(tmp);
    }
    if (f) {
        int err = errno;
        if (fclose(f) != 0 && io_ok) { io_ok = false; err = errno; }
        if (!rc && !io_ok) rc = TN__FAIL_INT("tn_safetensors_save: cannot write '%s': %s", tmpname, strerror(err));
        if (!rc && rename(tmpname, path) != 0) {
            remove(path);  /* platforms whose rename does not replace */
            if (rename(tmpname, path) != 0) rc = TN__FAIL_INT("tn_safetensors_save: cannot rename '%s' to '%s': %s", tmpname, path, strerror(errno));
        }
        if (rc) remove(tmpname);
    }
    TN_FREE(tmpname);
    TN_FREE(hdr.s);
    TN_FREE(items);
    return rc;
}

/* ---- checkpoints ---- */
static int tn__dict_put_prefixed(tn_dict *dst, const char *prefix, const tn_dict *src) {
    char key[600];
    for (int i = 0; src && i < tn_dict_len(src); i++) {
        snprintf(key, sizeof key, "%s%s", prefix, tn_dict_key(src, i));
        if (tn_dict_set(dst, key, tn_dict_value(src, i))) return -1;
    }
    return src ? 0 : -1;
}
TNDEF int tn_checkpoint_save(const char *path, const tn_module *model, const tn_optim *opt, int64_t step) {
    const char *fn = "tn_checkpoint_save";
    if (!path || !model) return TN__FAIL_INT("%s: need a path and a model", fn);
    tn_dict *all = tn_dict_new(), *ms = tn_module_state_dict(model), *os = opt ? tn_optim_state_dict(opt) : NULL;
    char tmp[1100], num[32];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(num, sizeof num, "%lld", (long long)step);
    tn_scope_begin();
    int rc = !all || tn__dict_put_prefixed(all, "model.", ms) || (opt && tn__dict_put_prefixed(all, "optim.", os)) ||
             tn_dict_set(all, "step", tn_scalar_tensor((double)step, TN_I64)) || tn_dict_set_meta(all, "format", "tensor.h checkpoint") ||
             tn_dict_set_meta(all, "step", num) || tn_safetensors_save(tmp, all) ? -1 : 0;
    tn_scope_end();
    if (rc == 0 && rename(tmp, path) != 0) { remove(tmp); rc = TN__FAIL_INT("%s: cannot rename %s to %s", fn, tmp, path); }
    tn_dict_free(all); tn_dict_free(ms); tn_dict_free(os);
    return rc;
}
/* The entries of src under prefix, with it removed. */
static tn_dict *tn__dict_strip_prefix(const tn_dict *src, const char *prefix) {
    tn_dict *d = tn_dict_new();
    size_t n = strlen(prefix);
    for (int i = 0; d && i < tn_dict_len(src); i++)
        if (!strncmp(tn_dict_key(src, i), prefix, n) && tn_dict_set(d, tn_dict_key(src, i) + n, tn_dict_value(src, i))) { tn_dict_free(d); return NULL; }
    return d;
}
TNDEF int tn_checkpoint_load(const char *path, tn_module *model, tn_optim *opt, int64_t *step) {
    const char *fn = "tn_checkpoint_load";
    if (!path || !model) return TN__FAIL_INT("%s: need a path and a model", fn);
    tn_dict *all = tn_safetensors_load(path);
    if (!all) return -1;
    tn_dict *ms = tn__dict_strip_prefix(all, "model."), *os = opt ? tn__dict_strip_prefix(all, "optim.") : NULL;
    tn_tensor *st = tn_dict_get(all, "step");
    int rc = 0;
    if (!ms || (opt && !os)) rc = -1;
    else if (!st || tn_numel(st) != 1 || tn_dict_len(ms) == 0) rc = TN__FAIL_INT("%s: %s is not a checkpoint (no \"step\" or no \"model.*\" entries)", fn, path);
    else {
        /* each load is all-or-nothing; a copy of the model's values makes the pair so (a refused
           optimizer state puts the model back) */
        tn_dict *cur = opt ? tn_module_state_dict(model) : NULL, *backup = cur ? tn_dict_new() : NULL;
        tn_scope_begin();
        for (int i = 0; backup && i < tn_dict_len(cur); i++) {
            tn_tensor *v = tn_clone(tn_dict_value(cur, i));
            if (!v || tn_dict_set(backup, tn_dict_key(cur, i), v)) { tn_dict_free(backup); backup = NULL; }
        }
        tn_scope_end();
        if (opt && !backup) rc = -1;
        else if (tn_module_load_state_dict(model, ms, true, NULL, NULL) || (opt && tn_optim_load_state_dict(opt, os))) {
            char why[1024];                  /* the message of the part that failed, with the file's name */
            snprintf(why, sizeof why, "%s", tn_last_error());
            if (backup) tn_module_load_state_dict(model, backup, true, NULL, NULL);
            rc = TN__FAIL_INT("%s: %s: %s", fn, path, why);
        }
        tn_dict_free(backup);
        tn_dict_free(cur);
    }
    if (rc == 0 && step) *step = (int64_t)tn_item(st);
    tn_dict_free(ms); tn_dict_free(os); tn_dict_free(all);
    return rc;
}

/* ---- printing ---- */
/* PyTorch's repr (torch/_tensor_str.py): precision 4, linewidth 80, summarised past
   1000 elements with 3 edge items; one width for all elements, chosen from the
   (summarised) nonzero finite values: integers print as "1.", wide ranges in %e. */
typedef struct tn__fmt {
    tn_tensor *t;            /* CPU, contiguous: f64, i64 or bool */
    bool floating, is_bool, int_mode, sci_mode, summarize;
    int width;
    double minabs, maxabs;
    bool any;
} tn__fmt;

static int tn__fmt_value(const tn__fmt *f, int64_t i, char *out, size_t cap) {
    if (f->is_bool) return snprintf(out, cap, "%s", ((const bool *)f->t->storage->data)[i] ? "True" : "False");
    if (!f->floating) return snprintf(out, cap, "%lld", (long long)((const int64_t *)f->t->storage->data)[i]);
    double v = ((const double *)f->t->storage->data)[i];
    if (v != v) return snprintf(out, cap, "nan");
    if (isinf(v)) return snprintf(out, cap, v > 0 ? "inf" : "-inf");
    if (f->sci_mode) return snprintf(out, cap, "%.4e", v);
    if (f->int_mode) return snprintf(out, cap, "%.0f.", v);
    return snprintf(out, cap, "%.4f", v);
}

/* Visit the elements that will be printed (edge items only when summarising). */
typedef void (*tn__visit_fn)(tn__fmt *f, int64_t i);
static void tn__visit(tn__fmt *f, int dim, int64_t base, tn__visit_fn fn) {
    tn_tensor *t = f->t;
    if (t->ndim == 0) { fn(f, 0); return; }
    int64_t n = t->shape[dim], st = t->strides[dim];
    for (int64_t i = 0; i < n; i++) {
        if (f->summarize && n > 6 && i == 3) i = n - 3;
        if (dim == t->ndim - 1) fn(f, base + i * st);
        else tn__visit(f, dim + 1, base + i * st, fn);
    }
}
static void tn__scan_value(tn__fmt *f, int64_t i) {
    char buf[64];
    if (!f->floating) {
        int w = tn__fmt_value(f, i, buf, sizeof buf);
        if (w > f->width) f->width = w;
        return;
    }
    double v = ((const double *)f->t->storage->data)[i];
    if (v != v || isinf(v) || v == 0) return;
    double a = fabs(v);
    if (!f->any || a < f->minabs) f->minabs = a;
    if (!f->any || a > f->maxabs) f->maxabs = a;
    if (v != ceil(v)) f->int_mode = false;
    f->any = true;
}
static void tn__width_value(tn__fmt *f, int64_t i) {
    double v = ((const double *)f->t->storage->data)[i];
    if (v != v || isinf(v) || v == 0) return;
    char buf[64];
    int w = tn__fmt_value(f, i, buf, sizeof buf);
    if (w > f->width) f->width = w;
}

static void tn__print_rec(tn__fmt *f, tn__sbuf *b, int dim, int64_t base, int indent) {
    tn_tensor *t = f->t;
    char buf[64];
    if (t->ndim == 0) { tn__fmt_value(f, 0, buf, sizeof buf); tn__sb_puts(b, buf); return; }
    int64_t n = t->shape[dim], st = t->strides[dim];
    tn__sb_puts(b, "[");
    if (dim == t->ndim - 1) {
        int per_line = TN__MAX(1, (80 - indent) / (f->width + 2)), col = 0;
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                tn__sb_puts(b, ",");
                if (col == per_line) { tn__sb_puts(b, "\n"); tn__sb_pad(b, indent + 1); col = 0; }
                else tn__sb_puts(b, " ");
            }
            if (f->summarize && n > 6 && i == 3) {
                tn__sb_puts(b, " ...");
                i = n - 4;
            } else {
                int w = tn__fmt_value(f, base + i * st, buf, sizeof buf);
                tn__sb_pad(b, f->width - w);
                tn__sb_puts(b, buf);
            }
            col++;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                tn__sb_puts(b, ",");
                for (int k = 0; k < t->ndim - 1 - dim; k++) tn__sb_puts(b, "\n");
                tn__sb_pad(b, indent + 1);
            }
            if (f->summarize && n > 6 && i == 3) {
                tn__sb_puts(b, "...");
                i = n - 4;
            } else tn__print_rec(f, b, dim + 1, base + i * st, indent + 1);
        }
    }
    tn__sb_puts(b, "]");
}

TNDEF char *tn_to_string(tn_tensor *t) {
    if (!t) return NULL;
    if (tn__check_cpu_dtype("tn_to_string", t)) return NULL;
    tn__fmt f;
    memset(&f, 0, sizeof f);
    f.floating = tn_dtype_is_floating(t->dtype);
    f.is_bool = t->dtype == TN_BOOL;
    f.t = tn__copy_as(t, f.floating ? TN_F64 : f.is_bool ? TN_BOOL : TN_I64, TN_CPU);
    if (!f.t) return NULL;
    f.int_mode = true;
    f.width = 1;
    f.summarize = tn_numel(t) > 1000;
    tn__sbuf b;
    memset(&b, 0, sizeof b);
    tn__sb_puts(&b, "tensor(");
    if (tn_numel(t) == 0) {
        tn__sb_puts(&b, "[]");
    } else {
        tn__visit(&f, 0, 0, tn__scan_value);
        if (f.floating && f.any) {
            double ratio = f.maxabs / f.minabs;
            f.sci_mode = f.int_mode ? (ratio > 1000 || f.maxabs > 1e8) : (ratio > 1000 || f.maxabs > 1e8 || f.minabs < 1e-4);
            tn__visit(&f, 0, 0, tn__width_value);
        }
        tn__print_rec(&f, &b, 0, 0, 7);
    }
    /* suffixes, wrapped onto a new line past 80 columns as PyTorch does */
    char suffixes[4][96];
    int ns = 0;
    if (t->device != TN_CPU) snprintf(suffixes[ns++], 96, "device='%s:0'", tn_device_name(t->device));
    if (tn_numel(t) == 0 && t->ndim != 1) {
        int w = snprintf(suffixes[ns], 96, "size=(");
        for (int i = 0; i < t->ndim && w < 80; i++) w += snprintf(suffixes[ns] + w, (size_t)(96 - w), i ? ", %lld" : "%lld", (long long)t->shape[i]);
        snprintf(suffixes[ns] + w, (size_t)(96 - w), t->ndim == 1 ? ",)" : ")");
        ns++;
    }
    /* an empty tensor names every dtype but the default float32 (nothing to infer it from) */
    if (t->dtype != TN_F32 && (tn_numel(t) == 0 || (t->dtype != TN_I64 && t->dtype != TN_BOOL)))
        snprintf(suffixes[ns++], 96, "dtype=torch.%s", tn_dtype_name(t->dtype));
    if (t->grad_fn) snprintf(suffixes[ns++], 96, "grad_fn=<%s>", tn_grad_fn_name(t));
    else if (t->requires_grad) snprintf(suffixes[ns++], 96, "requires_grad=True");
    /* PyTorch: last_line_len = len(s) - s.rfind("\n") + 1 (rfind gives -1 when absent) */
    const char *lastnl = b.s ? strrchr(b.s, '\n') : NULL;
    size_t last = lastnl ? (size_t)(b.s + b.n - lastnl) + 1 : b.n + 2;

    for (int i = 0; i < ns; i++) {
        size_t sl = strlen(suffixes[i]);
        if (last + sl + 2 > 80) {
            tn__sb_puts(&b, ",\n");
            tn__sb_pad(&b, 7);
            last = 7 + sl;
        } else {
            tn__sb_puts(&b, ", ");
            last += sl + 2;
        }
        tn__sb_puts(&b, suffixes[i]);
    }
    tn__sb_puts(&b, ")");
    tn_release(f.t);
    if (b.failed) { TN_FREE(b.s); return (char *)tn__error("tn_to_string: out of memory"); }
    return b.s;
}

TNDEF void tn_string_free(char *s) { TN_FREE(s); }

TNDEF int tn_print(tn_tensor *t) {
    if (t && tn__check_cpu_dtype("tn_print", t)) return -1;
    char *s = tn_to_string(t);
    if (!s) return -1;
    puts(s);
    tn_string_free(s);
    return 0;
}

/* ======================================================================= */
/* 16. threading                                                            */
/* ======================================================================= */
TNDEF void tn_set_num_threads(int n) {
#ifdef _OPENMP
    if (n > 0) omp_set_num_threads(n);
#else
    (void)n;
#endif
}
TNDEF int tn_get_num_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* ======================================================================= */
/* 17. backend interface                                                    */
/* ======================================================================= */
/* ---- the CPU caching allocator ----
   A training step allocates the same large buffers as the step before; handing them back
   to malloc makes glibc munmap them and the next step page-fault them in again (a sixth of
   a small CNN's step). Blocks of 64 KiB or more are rounded up to a size class (2^k or
   1.5 * 2^k, at most a third wasted) and kept on a free list per class when freed, up to
   TN_CPU_CACHE_LIMIT bytes in all; smaller ones go to malloc, which caches them itself.
   tn_memory_stats count the tensors' bytes, so they stay exact. */
#ifndef TN_CPU_CACHE_LIMIT
#define TN_CPU_CACHE_LIMIT ((size_t)1 << 30)
#endif
#define TN__CACHE_MIN ((size_t)1 << 16)
#define TN__CACHE_CLASSES 96
typedef struct tn__cblock { struct tn__cblock *next; } tn__cblock;
static tn__cblock *tn__cache_lists[TN__CACHE_CLASSES];
static size_t tn__cache_bytes;
static volatile char tn__cache_lock;
static void tn__cache_acquire(void) {
#if defined(__GNUC__) || defined(__clang__)
    while (__atomic_test_and_set(&tn__cache_lock, __ATOMIC_ACQUIRE)) { }
#endif
}
static void tn__cache_release(void) {
#if defined(__GNUC__) || defined(__clang__)
    __atomic_clear(&tn__cache_lock, __ATOMIC_RELEASE);
#endif
}
/* The class of a block of n bytes and its rounded size; -1 below the minimum. */
static int tn__cache_class(size_t n, size_t *rounded) {
    if (n < TN__CACHE_MIN) return -1;
    int k = 16;
    while (((size_t)1 << k) < n && k < 62) k++;          /* 2^(k-1) < n <= 2^k */
    size_t half = ((size_t)1 << (k - 1)) + ((size_t)1 << (k - 2));
    int c = 2 * (k - 16);
    if (k > 16 && n <= half) { *rounded = half; return c - 1; }
    *rounded = (size_t)1 << k;
    return c < TN__CACHE_CLASSES ? c : -1;
}
static void *tn__cpu_alloc(size_t nbytes) {
    size_t rounded;
    int c = tn__cache_class(nbytes, &rounded);
    if (c < 0) return TN_MALLOC(nbytes ? nbytes : 1);
    tn__cache_acquire();
    tn__cblock *b = tn__cache_lists[c];
    if (b) { tn__cache_lists[c] = b->next; tn__cache_bytes -= rounded; }
    tn__cache_release();
    return b ? (void *)b : TN_MALLOC(rounded);
}
static void tn__cpu_free(void *p, size_t nbytes) {
    size_t rounded;
    int c = p ? tn__cache_class(nbytes, &rounded) : -1;
    if (c >= 0) {
        tn__cache_acquire();
        bool keep = tn__cache_bytes + rounded <= TN_CPU_CACHE_LIMIT;
        if (keep) { ((tn__cblock *)p)->next = tn__cache_lists[c]; tn__cache_lists[c] = (tn__cblock *)p; tn__cache_bytes += rounded; }
        tn__cache_release();
        if (keep) return;
    }
    TN_FREE(p);
}
TNDEF void tn_cpu_empty_cache(void) {
    tn__cache_acquire();
    for (int c = 0; c < TN__CACHE_CLASSES; c++)
        while (tn__cache_lists[c]) { tn__cblock *b = tn__cache_lists[c]; tn__cache_lists[c] = b->next; TN_FREE(b); }
    tn__cache_bytes = 0;
    tn__cache_release();
}
TNDEF size_t tn_cpu_cached_bytes(void) { return tn__cache_bytes; }

/* The CPU index kernel: GATHER dst[i] = src[i + sum idx_j[i] * stride_j], SCATTER the
   reverse, SCATTER_ADD accumulates (sequential, so duplicate indices add up). */
typedef struct tn__ictx { tn_index_mode mode; int k; int64_t strides[TN_MAX_DIMS]; size_t es; tn_dtype dtype; } tn__ictx;
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
        switch (c->dtype) {
        case TN_F32: *(float *)d += *(const float *)sp; break;
        case TN_F64: *(double *)d += *(const double *)sp; break;
        case TN_I32: *(int32_t *)d = (int32_t)((uint32_t)*(int32_t *)d + (uint32_t)*(const int32_t *)sp); break;
        case TN_I64: *(int64_t *)d = (int64_t)((uint64_t)*(int64_t *)d + (uint64_t)*(const int64_t *)sp); break;
        case TN_U8: *(uint8_t *)d = (uint8_t)(*(uint8_t *)d + *(const uint8_t *)sp); break;
        default: *(bool *)d = *(bool *)d || *(const bool *)sp; break;
        }
    }
}

static int tn__cpu_index(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k) {
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
#define TN__DEFINE_IM2COL(T, S) \
static void tn__im2col_##S(int fold, tn_tensor *cols, tn_tensor *img, const int64_t *g) { \
    const int64_t N = img->shape[0], C = img->shape[1], H = img->shape[2], W = img->shape[3]; \
    const int64_t kh = g[0], kw = g[1], dh = g[2], dw = g[3], ph = g[4], pw = g[5], sh = g[6], sw = g[7], oh = g[8], ow = g[9]; \
    const int64_t *is = img->strides, *cs = cols->strides; \
    T *ib = (T *)img->storage->data + img->offset, *cb = (T *)cols->storage->data + cols->offset; \
    /* planes (n, c) in parallel: each writes its own rows of cols (or its own image plane) */ \
    const int nthr = tn__par_threads(N * C * kh * kw * oh * ow, N * C); \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int64_t nc = 0; nc < N * C; nc++) for (int64_t ki = 0; ki < kh; ki++) for (int64_t kj = 0; kj < kw; kj++) { \
        const int64_t n = nc / C, c = nc % C; \
        T *row = cb + n * cs[0] + ((c * kh + ki) * kw + kj) * cs[1], *plane = ib + n * is[0] + c * is[1]; \
        /* the window columns x in [x0, x1) read inside the image: iw = x*sw - pw + kj*dw in [0, W) */ \
        const int64_t off = kj * dw - pw; \
        int64_t x0 = off >= 0 ? 0 : (-off + sw - 1) / sw, x1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw; \
        if (x1 > ow) x1 = ow; \
        if (x0 > x1) x0 = x1; \
        const int64_t c2 = cs[2], i3 = is[3] * sw; \
        for (int64_t y = 0; y < oh; y++) { \
            const int64_t ih = y * sh - ph + ki * dh; \
            T *cp = row + y * ow * c2; \
            if (ih < 0 || ih >= H) { if (!fold) for (int64_t x = 0; x < ow; x++) cp[x * c2] = 0; continue; } \
            const T *ip = plane + ih * is[2] + (x0 * sw + off) * is[3]; \
            if (fold) { \
                T *fp = (T *)ip; \
                for (int64_t x = x0; x < x1; x++, fp += i3) *fp += cp[x * c2]; \
                continue; \
            } \
            for (int64_t x = 0; x < x0; x++) cp[x * c2] = 0; \
            if (c2 == 1 && i3 == 1) memcpy(cp + x0, ip, (size_t)(x1 - x0) * sizeof(T)); \
            else for (int64_t x = x0; x < x1; x++, ip += i3) cp[x * c2] = *ip; \
            for (int64_t x = x1; x < ow; x++) cp[x * c2] = 0; \
        } \
    } \
} \
static void tn__pool_argmax_##S(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) { \
    const int64_t N = x->shape[0], C = x->shape[1], W = x->shape[3], OH = idx->shape[2], OW = idx->shape[3]; \
    const int64_t *xs = x->strides; \
    const T *xb = (const T *)x->storage->data + x->offset; \
    int64_t *obase = (int64_t *)idx->storage->data + idx->offset; \
    const int nthr = tn__par_threads(N * C * x->shape[2] * W, N * C); \
    TN__OMP_PARALLEL_FOR(nthr) \
    for (int64_t nc = 0; nc < N * C; nc++) { \
        const int64_t n = nc / C, c = nc % C; \
        const T *plane = xb + n * xs[0] + c * xs[1]; \
        int64_t *ob = obase + nc * OH * OW; \
        for (int64_t y = 0; y < OH; y++) for (int64_t z = 0; z < OW; z++) { \
            int64_t bh, bw; \
            tn__window_max_##S(plane, xs[2], xs[3], hs[y], he[y], ws[z], we[z], dh, dw, &bh, &bw); \
            ob[y * OW + z] = bh * W + bw; \
        } \
    } \
}
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
    "cpu", tn__cpu_alloc, tn__cpu_free, tn__cpu_copy, tn__cpu_fill, tn__cpu_unary, tn__cpu_binary, tn__cpu_ternary,
    tn__cpu_reduce, tn__cpu_lane, tn__cpu_index, tn__cpu_nonzero, tn__cpu_matmul, tn__cpu_random,
    tn__cpu_im2col, tn__cpu_pool_argmax, tn__cpu_optim, NULL, tn__cpu_batch_norm, NULL,
};

static const tn_backend *tn__cpu_backend_get(void) { return &tn__cpu_backend; }

TNDEF void tn_register_backend(tn_device device, const tn_backend *backend) {
    if ((unsigned)device < TN_NUM_DEVICES && device != TN_CPU) tn__backends[device] = backend;
}
TNDEF const tn_backend *tn_get_backend(tn_device device) { return tn__backend(device); }

/* ---- the checking stand-in for the GPU (tn_debug_cuda_stand_in) ---- */
static int tn__stand_in_bad(const char *op, const char *what, const tn_tensor *t) {
    return TN__FAIL_INT("stand-in GPU: %s got %s on %s (%lld elements): a GPU kernel would read a host pointer", op, what,
                        tn_device_name(t->device), (long long)tn_numel(t));
}
#define TN__SI_DEV(op, t) do { if ((t) && (t)->device != TN_CUDA) return tn__stand_in_bad(op, #t, (t)); } while (0)
#define TN__SI_DEV_OR_SCALAR(op, t) do { if ((t) && (t)->device != TN_CUDA && (t)->ndim != 0) return tn__stand_in_bad(op, #t, (t)); } while (0)
static int tn__si_copy(tn_tensor *dst, tn_tensor *src) {
    if (dst->device != TN_CUDA && src->device != TN_CUDA) return tn__stand_in_bad("copy", "two CPU tensors", dst);
    return tn__cpu_copy(dst, src);
}
static int tn__si_fill(tn_tensor *t, double v) { TN__SI_DEV("fill", t); return tn__cpu_fill(t, v); }
static int tn__si_unary(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *p) {
    TN__SI_DEV("unary", out); TN__SI_DEV_OR_SCALAR("unary", x); return tn__cpu_unary(op, out, x, p);
}
static int tn__si_binary(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double al) {
    TN__SI_DEV("binary", out); TN__SI_DEV_OR_SCALAR("binary", a); TN__SI_DEV_OR_SCALAR("binary", b); return tn__cpu_binary(op, out, a, b, al);
}
static int tn__si_ternary(tn_ternary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, tn_tensor *c, double v) {
    TN__SI_DEV("ternary", out); TN__SI_DEV_OR_SCALAR("ternary", a); TN__SI_DEV_OR_SCALAR("ternary", b); TN__SI_DEV_OR_SCALAR("ternary", c);
    return tn__cpu_ternary(op, out, a, b, c, v);
}
static int tn__si_reduce(tn_reduce_op op, tn_tensor *out, tn_tensor *x) { TN__SI_DEV("reduce", out); TN__SI_DEV("reduce", x); return tn__cpu_reduce(op, out, x); }
static int tn__si_lane(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t d, int f) {
    TN__SI_DEV("lane", out); TN__SI_DEV("lane", out1); TN__SI_DEV("lane", x); return tn__cpu_lane(op, out, out1, x, d, f);
}
static int tn__si_index(tn_index_mode m, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *is, int k) {
    TN__SI_DEV("index", dst); TN__SI_DEV("index", src);
    for (int j = 0; j < k; j++) TN__SI_DEV("index", idx[j]);
    return tn__cpu_index(m, dst, src, idx, is, k);
}
static tn_tensor *tn__si_nonzero(tn_tensor *x) {
    if (x->device != TN_CUDA) return (tn__stand_in_bad("nonzero", "x", x), (tn_tensor *)NULL);
    tn_tensor *r = tn__cpu_nonzero(x), *d = r ? tn__copy_as(r, r->dtype, TN_CUDA) : NULL; /* the result lives on the device */
    tn_release(r);
    return d;
}
static int tn__si_matmul(tn_tensor *c, tn_tensor *a, tn_tensor *b, double al, double be) {
    TN__SI_DEV("matmul", c); TN__SI_DEV("matmul", a); TN__SI_DEV("matmul", b); return tn__cpu_matmul(c, a, b, al, be);
}
static int tn__si_random(tn_random_op op, tn_tensor *o, uint64_t s, uint64_t off, double a, double b, int64_t l, uint64_t r) {
    TN__SI_DEV("random", o); return tn__cpu_random(op, o, s, off, a, b, l, r);
}
static int tn__si_im2col(int f, tn_tensor *c, tn_tensor *i, const int64_t *g) { TN__SI_DEV("im2col", c); TN__SI_DEV("im2col", i); return tn__cpu_im2col(f, c, i, g); }
static int tn__si_pool(tn_tensor *idx, tn_tensor *x, const int64_t *hs, const int64_t *he, const int64_t *ws, const int64_t *we, int64_t dh, int64_t dw) {
    TN__SI_DEV("pool_argmax", idx); TN__SI_DEV("pool_argmax", x); return tn__cpu_pool_argmax(idx, x, hs, he, ws, we, dh, dw);
}
static int tn__si_optim(const tn__optk *k, tn_tensor *p, tn_tensor *g, tn_tensor *const *st) {
    TN__SI_DEV("optim", p); TN__SI_DEV("optim", g);
    for (int j = 0; j < 3; j++) TN__SI_DEV("optim", st[j]);
    return tn__cpu_optim(k, p, g, st);
}
/* the library convolution's contract, served by the CPU's convolution (so the one-node
   path the GPU takes with cuDNN is exercised too) */
static int tn__si_conv2d(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *y, const int64_t *geom) {
    TN__SI_DEV("conv2d", x); TN__SI_DEV("conv2d", w); TN__SI_DEV("conv2d", y);
    if (!tn_is_contiguous(x) || !tn_is_contiguous(w) || !tn_is_contiguous(y)) return TN__FAIL_INT("stand-in GPU: conv2d operands must be contiguous");
    const int64_t g[10] = {w->shape[2], w->shape[3], geom[4], geom[5], geom[2], geom[3], geom[0], geom[1], y->shape[2], y->shape[3]};
    tn_tensor xv = *x, wv = *w, yv = *y;   /* the same host memory, seen as CPU tensors */
    xv.device = wv.device = yv.device = TN_CPU;
    if (mode == 0) return tn__conv_forward_cpu(&yv, &xv, &wv, NULL, g, geom[6]);
    return tn__conv_backward_cpu(mode == 1 ? &xv : NULL, mode == 2 ? &wv : NULL, &yv, &xv, &wv, g, geom[6]);
}
static int tn__si_batch_norm(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                             tn_tensor *gb, double eps) {
    tn_tensor *const ts[8] = {x, w, b, st, y, gx, gw, gb};
    for (int k = 0; k < 8; k++) {
        TN__SI_DEV("batch_norm", ts[k]);
        if (ts[k] && !tn_is_contiguous(ts[k])) return TN__FAIL_INT("stand-in GPU: batch_norm operands must be contiguous");
    }
    return tn__cpu_batch_norm(mode, x, w, b, st, y, gx, gw, gb, eps);
}
/* the library pooling's contract, served by direct loops over each window (double sums) */
static int tn__si_pool2d(tn_tensor *x, tn_tensor *y, tn_tensor *gy, tn_tensor *gx, const int64_t *geom) {
    tn_tensor *const ts[4] = {x, y, gy, gx};
    for (int k = 0; k < 4; k++) {
        TN__SI_DEV("pool2d", ts[k]);
        if (ts[k] && !tn_is_contiguous(ts[k])) return TN__FAIL_INT("stand-in GPU: pool2d operands must be contiguous");
    }
    if (x->dtype != TN_F32 && x->dtype != TN_F64) return 1;
    const bool f32 = x->dtype == TN_F32;
    const int64_t P = x->shape[0] * x->shape[1], H = x->shape[2], W = x->shape[3], OH = y->shape[2], OW = y->shape[3];
    const int64_t kh = geom[0], kw = geom[1], sh = geom[2], sw = geom[3], ph = geom[4], pw = geom[5], mode = geom[6];
#define TN__SI_LD(t, i) (f32 ? (double)((const float *)tn_data_ptr(t))[i] : ((const double *)tn_data_ptr(t))[i])
    if (gx && tn__cpu_fill(gx, 0)) return -1;
    for (int64_t pl = 0; pl < P; pl++)
        for (int64_t a = 0; a < OH; a++)
            for (int64_t b = 0; b < OW; b++) {
                const int64_t h0 = a * sh - ph, w0 = b * sw - pw, o = (pl * OH + a) * OW + b;
                int64_t best = -1, cnt = 0;
                double acc = 0;
                for (int64_t h = TN__MAX(h0, 0); h < TN__MIN(h0 + kh, H); h++)
                    for (int64_t w = TN__MAX(w0, 0); w < TN__MIN(w0 + kw, W); w++) {
                        const int64_t i = (pl * H + h) * W + w;
                        const double v = TN__SI_LD(x, i);
                        if (best < 0 || (v != v && TN__SI_LD(x, best) == TN__SI_LD(x, best)) || v > TN__SI_LD(x, best)) best = i;
                        acc += v;
                        cnt++;
                    }
                const double div = mode == 1 ? (double)(kh * kw) : (double)cnt;
                if (!gx) {
                    const double v = mode == 0 ? TN__SI_LD(x, best) : acc / div;
                    if (f32) ((float *)tn_data_ptr(y))[o] = (float)v; else ((double *)tn_data_ptr(y))[o] = v;
                    continue;
                }
                const double g = TN__SI_LD(gy, o);
                for (int64_t h = TN__MAX(h0, 0); h < TN__MIN(h0 + kh, H); h++)
                    for (int64_t w = TN__MAX(w0, 0); w < TN__MIN(w0 + kw, W); w++) {
                        const int64_t i = (pl * H + h) * W + w;
                        const double add = mode == 0 ? (i == best ? g : 0) : g / div;
                        if (f32) ((float *)tn_data_ptr(gx))[i] += (float)add; else ((double *)tn_data_ptr(gx))[i] += add;
                    }
            }
#undef TN__SI_LD
    return 0;
}
#undef TN__SI_DEV
#undef TN__SI_DEV_OR_SCALAR
static const tn_backend tn__stand_in_backend = {
    "cuda (stand-in)", tn__cpu_alloc, tn__cpu_free, tn__si_copy, tn__si_fill, tn__si_unary, tn__si_binary, tn__si_ternary,
    tn__si_reduce, tn__si_lane, tn__si_index, tn__si_nonzero, tn__si_matmul, tn__si_random,
    tn__si_im2col, tn__si_pool, tn__si_optim, tn__si_conv2d, tn__si_batch_norm, tn__si_pool2d,
};
TNDEF void tn_debug_cuda_stand_in(void) { tn_register_backend(TN_CUDA, &tn__stand_in_backend); }

/* ---- the GPU unit's entry points: forwarded to tensor_cuda.cu, or why not ---- */
static const tn_cuda_unit *tn__cuda_unit(void) {
#ifdef TENSOR_CUDA
    const tn_cuda_unit *unit = tn_cuda_unit_get(); /* probes once, thread-safely; cheap after */
    if (unit && unit->backend && !tn__backends[TN_CUDA]) tn__backends[TN_CUDA] = unit->backend; /* the same value from any thread */
    return unit;
#else
    return NULL;
#endif
}
/* The unit when a GPU is usable, else NULL after recording why (fn names the caller). */
static const tn_cuda_unit *tn__cuda_ready(const char *fn) {
    const tn_cuda_unit *u = tn__cuda_unit();
    if (u && u->backend) return u;
    tn__error("%s: CUDA is not available: %s", fn, tn_cuda_unavailable_reason());
    return NULL;
}
TNDEF bool tn_cuda_is_available(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend; }
TNDEF const char *tn_cuda_unavailable_reason(void) {
    const tn_cuda_unit *u = tn__cuda_unit();
    if (!u) return "tensor.h was built without the GPU unit (define TENSOR_CUDA and link tensor_cuda.cu: make cuda)";
    return u->backend ? "" : u->reason ? u->reason : "no usable GPU";
}
TNDEF int tn_cuda_device_count(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend ? u->device_count() : 0; }
TNDEF int tn_cuda_set_device(int index) { const tn_cuda_unit *u = tn__cuda_ready("tn_cuda_set_device"); return u ? u->set_device(index) : -1; }
TNDEF int tn_cuda_current_device(void) { const tn_cuda_unit *u = tn__cuda_unit(); return u && u->backend ? u->current_device() : -1; }
TNDEF int tn_cuda_synchronize(void) { const tn_cuda_unit *u = tn__cuda_ready("tn_cuda_synchronize"); return u ? u->synchronize() : -1; }
TNDEF tn_cuda_stats tn_cuda_memory_stats(void) {
    const tn_cuda_unit *u = tn__cuda_unit();
    tn_cuda_stats s;
    if (u && u->backend) return u->memory_stats();
    memset(&s, 0, sizeof s);
    return s;
}
TNDEF void tn_cuda_reset_peak_memory_stats(void) { const tn_cuda_unit *u = tn__cuda_unit(); if (u && u->backend) u->reset_peak(); }
TNDEF void tn_cuda_empty_cache(void) { const tn_cuda_unit *u = tn__cuda_unit(); if (u && u->backend) u->empty_cache(); }
static bool tn__tf32;
TNDEF void tn_set_tf32(bool allow) { tn__tf32 = allow; }
TNDEF bool tn_get_tf32(void) { return tn__tf32; }

static void tn__pinned_free(void *data, void *ctx) { ((const tn_cuda_unit *)ctx)->host_free(data); }
TNDEF bool tn_is_pinned(const tn_tensor *t) { return t && t->storage && t->storage->deleter == tn__pinned_free; }
TNDEF tn_tensor *tn_pin_memory(tn_tensor *t) {
    TN__CHECK_NULL(t);
    if (t->device != TN_CPU) return (tn_tensor *)tn__error("tn_pin_memory: the tensor is on %s; only CPU tensors can be pinned", tn_device_name(t->device));
    const tn_cuda_unit *u = tn__cuda_ready("tn_pin_memory");
    if (!u) return NULL;
    size_t nb = (size_t)tn_numel(t) * tn_dtype_size(t->dtype);
    void *data = u->host_alloc(nb ? nb : 1);
    if (!data) return (tn_tensor *)tn__error("tn_pin_memory: cannot allocate %zu bytes of page-locked memory", nb);
    tn_storage *st = tn__foreign_storage(data, nb, tn__pinned_free, (void *)u);
    if (!st) { u->host_free(data); return (tn_tensor *)tn__error("tn_pin_memory: out of memory"); }
    int64_t strides[TN_MAX_DIMS];
    tn__contiguous_strides(t->shape, t->ndim, strides);
    tn_tensor *p = tn__tensor_over(st, t->dtype, t->shape, strides, t->ndim, 0);
    if (p && tn__copy(p, t)) { tn_release(p); return NULL; }
    return tn__own(p);
}
TNDEF tn_tensor *tn_to_non_blocking(tn_tensor *t, tn_device device) {
    TN__CHECK_NULL(t);
    const tn_cuda_unit *u = tn__cuda_unit();
    bool async = u && u->backend && device == TN_CUDA && tn_is_pinned(t);   /* an upload from page-locked memory */
    if (!async) return tn_to(t, device);
    tn_tensor *out = tn__new(t->dtype, device, t->shape, t->ndim);
    if (!out || u->copy_async(out, t) < 0) { tn_release(out); return NULL; }
    return tn__own(tn__copy_record(t, out, G_TO));
}


#endif /* TENSOR_IMPLEMENTATION_DONE */
#endif /* TENSOR_IMPLEMENTATION */
