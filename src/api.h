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
 *   Inputs are borrowed; every returned tensor is a new reference, except that an in-place
 *   op (its name ends in _: tn_add_, tn_relu_, tn_fill_, ...) returns its first argument,
 *   borrowed, or NULL on error. While a scope is open (tn_scope_begin/tn_scope_end,
 *   nestable, per thread) the scope owns each new reference; tn_keep(t) hands it to the
 *   enclosing scope, or to the caller at top level. With no scope open the caller owns it
 *   and calls tn_release. Refcounts are atomic. A function returning something else says
 *   who owns it in its comment (tn_to_string: free with tn_string_free, ...).
 *
 * ERRORS
 *   A function given bad input returns NULL (or a nonzero int) and records a message
 *   in a thread-local buffer: tn_last_error(). The message stays until the next error or
 *   tn_clear_error(): a success does not clear it, so check the result, then read the
 *   message. A NULL input makes an op return NULL without a new message, so a nested
 *   expression is checked once at the end. tn_set_error_handler() installs a callback.
 *   Environment: TN_LOG_ERRORS=1 prints every error to stderr as it happens,
 *   TN_ABORT_ON_ERROR=1 prints it and aborts (for a debugger), TN_LEAK_CHECK=1 lists the
 *   tensors still alive at exit with the backtrace of their creation (glibc).
 *
 * OPTIONS (define before including)
 *   TENSOR_STATIC        every symbol static      TENSOR_CBLAS   matmul through cblas
 *   TENSOR_LAPACK        torch.linalg's CPU factorizations through the Fortran LAPACK (-lopenblas)
 *   TN_MALLOC/TN_REALLOC/TN_FREE (together)         TN_ASSERT      internal assertions
 *   TENSOR_CUDA          register the GPU backend of tensor_cuda.cu
 *   TN_PARALLEL_MIN      elements below which a CPU kernel runs on one thread (32768)
 *   TN_CONV_BLOCK_BYTES  im2col column blocks per thread in conv2d (1 MiB)
 *   TENSOR_NO_IMPLEMENTATION  ignore TENSOR_IMPLEMENTATION: the file links an implementation
 *                        compiled once elsewhere (cc -DTENSOR_IMPLEMENTATION -x c -c tensor.h)
 *
 * CONTENTS
 *   The declarations come first, by topic (sections 1-17 below). The implementation
 *   follows under TENSOR_IMPLEMENTATION, in parts developed as files of the project's
 *   src/ directory and joined into this header by tools/amalgamate; each part begins
 *   under a banner with its path:
 * @contents
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

/* The library's version (tn_library_version() returns the version the implementation was
   compiled from, so a program can tell a mismatched header and library apart). */
#define TENSOR_VERSION_MAJOR 0
#define TENSOR_VERSION_MINOR 2
#define TENSOR_VERSION_PATCH 0
#define TENSOR_VERSION_STRING "0.2.0"

#ifdef TENSOR_STATIC
/* every function static to the one file that includes the implementation; unused ones
   are not warned of */
#if defined(__GNUC__) || defined(__clang__)
#define TNDEF static __attribute__((unused))
#else
#define TNDEF static
#endif
#else
#define TNDEF extern
#endif

#ifdef __CUDACC__
#define TN_HD __host__ __device__   /* scalar math shared by CPU and GPU kernels */
#else
#define TN_HD
#endif

/* A region with no contraction of a product into a following add (gcc's default outside ISO
   C modes, -std=gnu*; clang's within an expression): code that must give another library's
   bits (SLEEF's, torch's samplers and optimizer steps) writes each fused multiply-add out
   and brackets itself (gcc contracts in the function a rule is inlined into, clang where
   the expression is written: both the rules and their loops are bracketed). */
#if defined(__CUDACC__)
#define TN__NO_CONTRACT_BEGIN
#define TN__NO_CONTRACT_END
#elif defined(__clang__)
#define TN__NO_CONTRACT_BEGIN _Pragma("STDC FP_CONTRACT OFF")
#define TN__NO_CONTRACT_END _Pragma("STDC FP_CONTRACT DEFAULT")
#elif defined(__GNUC__)
#define TN__NO_CONTRACT_BEGIN _Pragma("GCC push_options") _Pragma("GCC optimize(\"fp-contract=off\")")
#define TN__NO_CONTRACT_END _Pragma("GCC pop_options")
#else
#define TN__NO_CONTRACT_BEGIN
#define TN__NO_CONTRACT_END
#endif

/* The most dims a tensor may have (PyTorch allows 64): a compile-time option, the same in
   every unit that includes tensor.h (-DTN_MAX_DIMS=64; the GPU unit takes up to 16). Each
   tensor carries this many shape and stride slots (bench/bench_max_dims.sh, README). */
#ifndef TN_MAX_DIMS
#define TN_MAX_DIMS 16   /* 16, not 64: the GPU unit's kernel parameters hold the shapes */
#endif
#if TN_MAX_DIMS < 8 || TN_MAX_DIMS > 64
#error "TN_MAX_DIMS must be in [8, 64] (PyTorch's limit is 64)"
#endif

/* Shape and dim-list literals: tn_zeros(TN_SHAPE(2, 3), TN_F32) expands to
   tn_zeros((int64_t[]){2, 3}, 2, TN_F32); in C++ the array is an initializer_list's,
   alive until the end of the call's full expression. Each of the two is parenthesised, so
   the pair passes through a macro's arguments as exactly two (tn_nn_layer_norm(TN_SHAPE(4,
   5), .eps = 1e-6)). */
#ifdef __cplusplus
#include <initializer_list>
#define TN_SHAPE(...) (std::initializer_list<int64_t>{__VA_ARGS__}.begin()), (int)(std::initializer_list<int64_t>{__VA_ARGS__}.size())
#else
#define TN_SHAPE(...) ((const int64_t[]){__VA_ARGS__}), (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#endif

#ifdef __cplusplus
extern "C" {
#endif


#define TN_DIMS(...) TN_SHAPE(__VA_ARGS__)

/* ---- keyword arguments ----
   A function with PyTorch keyword arguments takes them as one struct of PyTorch's names, and
   a macro named as the PyTorch function fills in PyTorch's defaults, then the fields you name:
       tn_module *conv = tn_nn_conv2d(1, 32, 3, .padding = 1, .bias = false);
       tn_optim *opt = tn_optim_sgd(params, n, .lr = 0.1, .momentum = 0.9);
       tn_tensor *loss = tn_cross_entropy(logits, y, .label_smoothing = 0.1);
   A misspelt name is a compile error; a name you leave out keeps PyTorch's default, and a
   value you give means what it says (.bias = false, .dropout = 0, .padding_idx = 0): the
   defaults are written into the struct before your fields, never read from a zero. Behind
   each macro are two functions: NAME_opts(..., o) takes the struct (start from
   `tn_conv_opts o = TN_DEFAULTS(tn_conv_opts);`), and NAME_str(..., "padding=1,
   bias=False") parses PyTorch's keyword syntax, for bindings and configuration files.
   Each struct is written once, as a list TN_FIELDS_<struct>(X) of X(type, name, default,
   words) rows: the struct's members, its defaults and the option text's names and types all
   come from that list. Types:
       I  int64_t               TN_NONE is None ("padding_idx=None")
       D  double                NAN is None ("momentum=None")
       B  bool
       OB int: true, false, or -1 (None, or not given)
       E  int, an enum: words are its names in the option text ("zeros|reflect"), in order
       P  padding: an int64_t, or TN_PADDING_SAME / TN_PADDING_VALID ("padding='same'")
       I2 int64_t[2], a pair {h, w} that, when not {0, 0}, replaces the int of the same name
          without _hw (the option text's "stride=(2, 1)" sets stride_hw; "(2, 2)" is 2)
       D2 double[2], a pair (Adam's betas = {0.9, 0.999})
       S  const char *, a string ("delimiter=';'")
       T  tn_tensor *, a tensor (NULL: None); the option text cannot give one
       MOD tn_module *, a module (NULL: None; TransformerEncoder's norm); not in the text either
       GEN tn_generator *, a generator (NULL: the default one; uniform_'s generator=); not in
          the text either
       IL tn_ints, a list of up to TN_LIST_MAX ints: {n, {v0, v1, ...}}, TN_INTS(30, 80)
       DL tn_doubles, a list of doubles: a name_groups list replaces the double `name` with
          one value per parameter group ("max_lr=(0.1, 0.01)" sets max_lr_groups)
   A family of kinds behind one struct (tn_optim_opts for every optimizer, tn_lr_scheduler_opts
   for every scheduler) starts each field as "not given" (NAN, TN_NONE, -1, an empty list)
   and each kind fills in its own PyTorch default; a field the kind does not have is an error
   when given. In C++ the members carry the defaults and the macro builds T{...}: C++20
   designated initialisers, in the order of the members. */
#define TN_NONE INT64_MIN              /* an int option's None (embedding's padding_idx=None) */
#define TN_DEFAULTS(T) TN__KW_INIT_(T)  /* an initializer: T o = TN_DEFAULTS(T); */
#define TN_LIST_MAX 64                 /* the most values of an IL or DL option */
#define TN__NAN2 {NAN, NAN}            /* a D2 pair not given */
#ifdef __cplusplus
#define TN__LIST0 {}                   /* an IL / DL list not given (empty) */
#else
#define TN__LIST0 {0}
#endif
typedef struct tn_ints { int n; int64_t v[TN_LIST_MAX]; } tn_ints;
typedef struct tn_doubles { int n; double v[TN_LIST_MAX]; } tn_doubles;
/* List literals for IL and DL fields: .milestones = TN_INTS(30, 80) is {2, {30, 80}} (no
   pointer: the values live in the struct). */
#ifndef __cplusplus
#define TN_INTS(...) {(int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}}
#define TN_DOUBLES(...) {(int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), {__VA_ARGS__}}
#endif

#define TN__KW_C_I(n) int64_t n
#define TN__KW_C_D(n) double n
#define TN__KW_C_B(n) bool n
#define TN__KW_C_OB(n) int n
#define TN__KW_C_E(n) int n
#define TN__KW_C_P(n) int64_t n
#define TN__KW_C_I2(n) int64_t n[2]
#define TN__KW_C_D2(n) double n[2]
#define TN__KW_C_S(n) const char *n
#define TN__KW_C_T(n) struct tn_tensor *n
#define TN__KW_C_MOD(n) struct tn_module *n
#define TN__KW_C_GEN(n) struct tn_generator *n
#define TN__KW_C_IL(n) tn_ints n
#define TN__KW_C_DL(n) tn_doubles n
#ifdef __cplusplus
#define TN__KW_MEMBER(type, name, def, words) TN__KW_C_##type(name) = def;
#define TN__KW_INIT_(T) T{}
#define TN__KW(T, ...) T{__VA_ARGS__}
#else
#define TN__KW_MEMBER(type, name, def, words) TN__KW_C_##type(name);
#define TN__KW_DEF(type, name, def, words) .name = def,
#define TN__KW_INIT_(T) {TN_FIELDS_##T(TN__KW_DEF)}
/* The defaults, then the caller's fields: later designators override earlier ones (C11
   6.7.9), which gcc and clang warn of under -Wextra, so the warning is off for the literal.
   The literal lives in a statement expression's block: a field holds values, never a
   pointer to a compound literal written among the arguments (it would not outlive the
   block); lists are TN_INTS / TN_DOUBLES values, strings are string literals or the
   caller's own arrays. */
#if defined(__clang__)
#define TN__KW(T, ...) (__extension__({ _Pragma("clang diagnostic push") _Pragma("clang diagnostic ignored \"-Winitializer-overrides\"") \
    _Pragma("clang diagnostic error \"-Wexcess-initializers\"") /* a positional value where a name belongs */ \
    T tn__kw_ = {TN_FIELDS_##T(TN__KW_DEF) __VA_ARGS__}; _Pragma("clang diagnostic pop") tn__kw_; }))
#elif defined(__GNUC__)
#define TN__KW(T, ...) (__extension__({ _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Woverride-init\"") \
    T tn__kw_ = {TN_FIELDS_##T(TN__KW_DEF) __VA_ARGS__}; _Pragma("GCC diagnostic pop") tn__kw_; }))
#else
#define TN__KW(T, ...) ((T){TN_FIELDS_##T(TN__KW_DEF) __VA_ARGS__})
#endif
#endif
#define TN__KW_STRUCT(T) typedef struct T { TN_FIELDS_##T(TN__KW_MEMBER) } T
/* The last positional argument and the keyword arguments after it, from one __VA_ARGS__ (C11
   wants at least one argument for a macro's "...": the last positional one is it). A macro
   whose positional arguments come before that one passes __VA_ARGS__ on to a second macro
   first, so that TN_SHAPE(2, 3) has become two arguments when they are counted. */
#define TN__HEAD(...) TN__HEAD_(__VA_ARGS__, )
#define TN__HEAD_(a, ...) a
#define TN__TAIL(...) TN__TAIL_(__VA_ARGS__, )
#define TN__TAIL_(a, ...) __VA_ARGS__
#define TN__POS_KW(T, ...) TN__HEAD(__VA_ARGS__), TN__KW(T, TN__TAIL(__VA_ARGS__))

/* ======================================================================= */
/* 2. errors                                                                */
/* ======================================================================= */
typedef void (*tn_error_handler)(const char *message, void *user);

TNDEF const char *tn_library_version(void);   /* "0.2.0": TENSOR_VERSION_STRING of the implementation */
TNDEF int tn_max_dims(void);                  /* the TN_MAX_DIMS the implementation was compiled with */
TNDEF const char *tn_last_error(void);        /* the last error on this thread ("" if none); a success does not clear it */
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
    TN_F16, TN_BF16,   /* half precision: stored in 16 bits, computed in float32 registers (CPU and CUDA) */
    TN_I8, TN_I16,     /* torch.int8 (char), torch.int16 (short): CPU only, the GPU unit refuses them */
    TN_C64, TN_C128,   /* torch.complex64 (cfloat), torch.complex128 (cdouble): (real, imag) pairs of float32/float64 (on CUDA: docs/cuda.md) */
    TN_NUM_DTYPES
} tn_dtype;

typedef enum tn_device { TN_CPU = 0, TN_CUDA = 1, TN_NUM_DEVICES } tn_device;

TNDEF const char *tn_dtype_name(tn_dtype dtype);  /* "float32", "int64", ... (PyTorch's names) */
TNDEF size_t tn_dtype_size(tn_dtype dtype);       /* bytes per element */
TNDEF bool tn_dtype_is_floating(tn_dtype dtype);
TNDEF bool tn_dtype_is_complex(tn_dtype dtype);   /* complex64, complex128 (torch.is_complex of a dtype) */
/* The real dtype of a complex one (complex64 -> float32, complex128 -> float64) and the
   complex dtype of a floating one (float32, float16, bfloat16 -> complex64; float64 ->
   complex128; this library has no complex32); others are returned unchanged. */
TNDEF tn_dtype tn_dtype_to_real(tn_dtype dtype);
TNDEF tn_dtype tn_dtype_to_complex(tn_dtype dtype);
/* PyTorch's promotion of two tensor dtypes (torch.promote_types). */
TNDEF tn_dtype tn_promote_types(tn_dtype a, tn_dtype b);
TNDEF const char *tn_device_name(tn_device device); /* "cpu", "cuda" */
/* float16 and bfloat16 bit patterns from and to float, bit for bit as PyTorch converts
   (round to nearest even; subnormals, infinities and NaN kept). */
TNDEF uint16_t tn_float_to_half(float value);
TNDEF float tn_half_to_float(uint16_t bits);
TNDEF uint16_t tn_float_to_bfloat16(float value);
TNDEF float tn_bfloat16_to_float(uint16_t bits);
/* The same conversions on float32 bit patterns in integer arithmetic only (no FPU
   rounding mode or flush-to-zero can change them): the GPU unit's copy kernels use them,
   and tests hold them equal to the four functions above on every half pattern. */
TN_HD static inline uint32_t tn__hd_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1F) return sign | 0x7F800000u | (m << 13) | (m ? 0x00400000u : 0u);   /* inf; NaN quieted as x86 does */
    if (e != 0) return sign | ((e + 112u) << 23) | (m << 13);
    if (m == 0) return sign;
    uint32_t ex = 113;                            /* a subnormal: normalised */
    while (!(m & 0x400u)) { m <<= 1; ex--; }
    return sign | (ex << 23) | ((m & 0x3FFu) << 13);
}
TN_HD static inline uint16_t tn__hd_f32_to_f16(uint32_t w) {
    const uint16_t sign = (uint16_t)((w >> 16) & 0x8000u);
    const uint32_t a = w & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u);          /* NaN */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);         /* inf, or past 65504 + half an ulp */
    if (a >= 0x38800000u) {                                          /* a normal half: 13 bits rounded off */
        const uint32_t r = a - 0x38000000u, q = r >> 13, rem = r & 0x1FFFu;
        return (uint16_t)(sign | (q + (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))));
    }
    const uint32_t e = a >> 23;
    if (e < 102) return sign;                                        /* below a quarter of the least subnormal */
    const uint32_t m = (a & 0x7FFFFFu) | 0x800000u, s = 126 - e;    /* value = m 2^(e-150); units of 2^-24 */
    const uint32_t q = m >> s, rem = m & ((1u << s) - 1u), half = 1u << (s - 1);
    return (uint16_t)(sign | (q + (rem > half || (rem == half && (q & 1u)))));
}
TN_HD static inline uint32_t tn__hd_bf16_to_f32(uint16_t h) { return (uint32_t)h << 16; }
TN_HD static inline uint16_t tn__hd_f32_to_bf16(uint32_t w) {
    if ((w & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFu;              /* NaN, as PyTorch's float32 -> bfloat16 kernels */
    return (uint16_t)((w + 0x7FFFu + ((w >> 16) & 1u)) >> 16);
}
/* torch.set_default_dtype / get_default_dtype (process-wide, float32 at start): the dtype
   of Python float literals in type promotion (an int tensor * 2.5), of float functions and
   true division of integer tensors, and the dtype the printer leaves unnamed. Explicit
   dtypes of C factories are unaffected. TN_F32 or TN_F64; 0 or -1 with an error. */
TNDEF int tn_set_default_dtype(tn_dtype dtype);
TNDEF tn_dtype tn_get_default_dtype(void);
/* torch.autocast on this thread: from begin to the matching end, ops on device's tensors
   cast their floating inputs (float64 excepted) as PyTorch's CPU lists say: matmul, mm,
   bmm, addmm, baddbmm, addbmm, linear, conv*, conv_transpose*, prelu and scaled dot-product
   attention to dtype (TN_BF16 or TN_F16); the losses and prod to float32; cat and stack to
   the widest floating input. enabled false: a region with autocast off. Regions nest.
   On TN_CUDA as PyTorch's CUDA lists where they differ from the CPU's: softmax,
   log_softmax, layer_norm, group_norm and logsumexp to float32 too, binary_cross_entropy
   refused (not yet: CUDA's float32 list of pointwise functions such as exp and log, and
   its sum and cumsum, which stay in the input's dtype here).
   torch.autocast(device_type, dtype=None, enabled=True): .dtype -1 (None) is the device's
   current autocast dtype (tn_autocast_get_dtype): tn_autocast_begin(TN_CPU),
   tn_autocast_begin(TN_CUDA, .dtype = TN_BF16), tn_autocast_begin(TN_CPU, .enabled = false). */
#define TN_FIELDS_tn_autocast_fn_opts(X) \
    X(E, dtype,   -1,   "float32|float64|int32|int64|uint8|bool|float16|bfloat16") \
    X(B, enabled, true, "")
TN__KW_STRUCT(tn_autocast_fn_opts);
TNDEF int tn_autocast_begin_opts(tn_device device, tn_autocast_fn_opts opts);
#define tn_autocast_begin(...) tn_autocast_begin_opts(TN__POS_KW(tn_autocast_fn_opts, __VA_ARGS__))
TNDEF int tn_autocast_begin_str(tn_device device, const char *options);
TNDEF int tn_autocast_end(void);                                  /* closes the innermost region */
TNDEF bool tn_autocast_is_enabled(tn_device device);              /* torch.is_autocast_enabled */
TNDEF tn_dtype tn_autocast_get_dtype(tn_device device);           /* torch.get_autocast_dtype (bfloat16 CPU, float16 CUDA at start) */

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
/* Storage allocations made through the devices' allocators since start (each tensor
   storage whose data is not inline: more than 64 bytes, or not on the CPU). A graph replay
   under its memory plan serves its storages from the plan's arena and counts none here. */
TNDEF int64_t tn_memory_allocations(void);
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
   called when the last view dies (NULL: the caller keeps ownership; on error, too, the
   memory stays the caller's). */
TNDEF tn_tensor *tn_from_blob(void *data, const int64_t *shape, int ndim, const int64_t *strides,
                              tn_dtype dtype, void (*deleter)(void *data, void *ctx), void *ctx);
/* 0-d tensors; the tn_scalar* forms are "wrapped numbers" (Python scalars) for type promotion. */
TNDEF tn_tensor *tn_scalar_tensor(double value, tn_dtype dtype);
TNDEF tn_tensor *tn_scalar(double value);       /* a Python float */
TNDEF tn_tensor *tn_scalar_int(int64_t value);  /* a Python int */
TNDEF tn_tensor *tn_scalar_bool(bool value);    /* a Python bool */
TNDEF tn_tensor *tn_scalar_complex(double re, double im);   /* a Python complex: promotes to the default float dtype's complex */
/* [start, end) by step. dtype as PyTorch infers it is the caller's choice here. */
TNDEF tn_tensor *tn_arange(double start, double end, double step, tn_dtype dtype);
TNDEF tn_tensor *tn_linspace(double start, double end, int64_t steps, tn_dtype dtype);
/* base ** linspace(start, end, steps), computed as PyTorch's CPU kernel: an integral dtype
   truncates start and end first and each power after. torch.logspace's keyword base=10.0
   (tn_logspace(0, 3, 4, TN_F32, .base = 2)); dtype is positional, as every creation function's. */
#define TN_FIELDS_tn_logspace_fn_opts(X) \
    X(D, base, 10.0, "")
TN__KW_STRUCT(tn_logspace_fn_opts);
TNDEF tn_tensor *tn_logspace_opts(double start, double end, int64_t steps, tn_dtype dtype, tn_logspace_fn_opts opts);
#define tn_logspace(start, end, steps, ...) tn_logspace_opts(start, end, steps, TN__POS_KW(tn_logspace_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_logspace_str(double start, double end, int64_t steps, tn_dtype dtype, const char *options);
TNDEF tn_tensor *tn_eye(int64_t n, int64_t m, tn_dtype dtype); /* m = TN_NONE (or -1) means m = n; other negatives are PyTorch's error */
/* The (row, column) coordinates of the lower (upper) triangle of a row x col matrix: [2, N]
   in row-major order, the elements with column - row <= offset (>= offset for triu);
   dtype int64 or int32 (torch.tril_indices / triu_indices: offset=0, dtype=torch.long):
   tn_triu_indices(3, 4, .offset = 1, .dtype = TN_I32). */
#define TN_FIELDS_tn_tri_indices_fn_opts(X) \
    X(I, offset, 0,      "") \
    X(E, dtype,  TN_I64, "float32|float64|int32|int64|uint8|bool|float16|bfloat16")
TN__KW_STRUCT(tn_tri_indices_fn_opts);
TNDEF tn_tensor *tn_tril_indices_opts(int64_t row, int64_t col, tn_tri_indices_fn_opts opts);
#define tn_tril_indices(row, ...) tn_tril_indices_opts(row, TN__POS_KW(tn_tri_indices_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_tril_indices_str(int64_t row, int64_t col, const char *options);
TNDEF tn_tensor *tn_triu_indices_opts(int64_t row, int64_t col, tn_tri_indices_fn_opts opts);
#define tn_triu_indices(row, ...) tn_triu_indices_opts(row, TN__POS_KW(tn_tri_indices_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_triu_indices_str(int64_t row, int64_t col, const char *options);
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
TNDEF double tn_item(tn_tensor *t);             /* the value of a one-element tensor (NaN + error otherwise; complex: an error, see below) */
/* The value of a one-element tensor of any dtype as real and imaginary parts (either
   pointer may be NULL; a real tensor's imaginary part is 0): 0, or -1 with an error. */
TNDEF int tn_item_complex(tn_tensor *t, double *re, double *im);
/* torch.complex: real + i imag (both float32 -> complex64, or both float64 -> complex128;
   broadcast); torch.polar: abs * (cos(angle) + i sin(angle)). Differentiable. */
TNDEF tn_tensor *tn_complex(tn_tensor *real, tn_tensor *imag);
TNDEF tn_tensor *tn_polar(tn_tensor *abs, tn_tensor *angle);
/* Copy src into dst (broadcasting src, converting dtype, from another device too); returns 0 or -1. */
TNDEF int tn_copy_(tn_tensor *dst, tn_tensor *src);
/* Tensor.resize_: t takes shape with contiguous strides in place (the same tensor object,
   so every holder sees it), over its storage when that holds enough elements past t's
   offset, else over a new storage that starts with the old one's bytes (the rest
   uninitialised, as PyTorch). Refused for a tensor that requires grad and for growing
   memory the library does not own (tn_from_blob). Returns t (borrowed) or NULL. */
TNDEF tn_tensor *tn_resize_(tn_tensor *t, const int64_t *shape, int ndim);

/* Generators. The default generator and tn_generator_new's are PyTorch's CPU generator:
   mt19937 seeded with the seed's low 32 bits (CPUGeneratorImpl), so tn_manual_seed(s) and
   then the CPU random functions give torch.manual_seed(s)'s numbers. kind TN_GEN_PHILOX is
   the counter-based Philox-4x32-10 stream (seed, offset): element i of a draw is the same
   on CPU, GPU and in any thread split (a zero-initialised {seed, offset} is one). Draws on
   the GPU always take Philox counters (offset), whatever the kind, as PyTorch's CUDA
   generator does. The fields are read-only outside the library, except seed/offset of a
   Philox generator; a generator is used by one draw at a time (a spin lock). */
typedef enum tn_generator_kind { TN_GEN_PHILOX = 0, TN_GEN_MT19937 = 1 } tn_generator_kind;
typedef struct tn_generator {
    uint64_t seed;        /* the seed given (initial_seed) */
    uint64_t offset;      /* Philox counters used so far */
    int kind;             /* tn_generator_kind */
    int mt_left, mt_next; /* mt19937's position as PyTorch keeps it; mt_left 0: seed on first use */
    int has_normal;       /* the second Box-Muller value is cached (PyTorch's next_double_normal_sample) */
    double normal;
    uint32_t mt[624];
    int lock;
} tn_generator;
TNDEF void tn_manual_seed(uint64_t seed);       /* reseed the default generator (both streams) */
TNDEF tn_generator *tn_default_generator(void); /* borrowed; kind TN_GEN_MT19937 */
TNDEF tn_generator *tn_generator_new(uint64_t seed);        /* torch.Generator().manual_seed(seed): mt19937 */
TNDEF tn_generator *tn_generator_new_philox(uint64_t seed); /* a Philox stream: device-independent numbers */
TNDEF void tn_generator_free(tn_generator *g);
TNDEF void tn_generator_manual_seed(tn_generator *g, uint64_t seed); /* g NULL: the default; keeps the kind */
/* Raw draws from a generator (NULL: the default), as PyTorch's CPU kernels make them
   (multinomial, samplers): random() a uint32, random64() two of them (the first is the high
   half), uniform() a double in [0, 1) from random64's low 53 bits (uniform_real_distribution
   <double>). A Philox generator returns its counters' words. */
TNDEF uint32_t tn_generator_random(tn_generator *g);
TNDEF uint64_t tn_generator_random64(tn_generator *g);
TNDEF double tn_generator_uniform(tn_generator *g);
/* PyTorch's get_rng_state layout: TN_GENERATOR_STATE_BYTES bytes for mt19937 (seed, mt
   state, cached normal: torch.get_rng_state() of torch 1.13 and later loads here and back),
   16 (seed, offset) for Philox. get_state writes up to cap bytes and returns the size (-1 on
   error); set_state takes either size (5056, or PyTorch's legacy 5048, makes g mt19937; 16 Philox). */
#define TN_GENERATOR_STATE_BYTES 5056
TNDEF int64_t tn_generator_get_state(const tn_generator *g, uint8_t *out, int64_t cap);
TNDEF int tn_generator_set_state(tn_generator *g, const uint8_t *state, int64_t n);
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
/* num_samples category indices (int64) for each row of probs ([C] or [N, C], floating,
   non-negative, finite, no row all zero): with replacement independent draws, without
   distinct categories (an exponential race, as PyTorch: zero-weight ones come last). From
   an mt19937 generator on the CPU, PyTorch's CPU indices for the same seed. gen stays
   positional (NULL: the default generator), as every random op's; torch.multinomial's
   keyword is replacement=False: tn_multinomial(p, 5, NULL, .replacement = true). */
#define TN_FIELDS_tn_multinomial_fn_opts(X) \
    X(B, replacement, false, "")
TN__KW_STRUCT(tn_multinomial_fn_opts);
TNDEF tn_tensor *tn_multinomial_opts(tn_tensor *probs, int64_t num_samples, tn_generator *gen, tn_multinomial_fn_opts opts);
#define tn_multinomial(probs, num_samples, ...) tn_multinomial_opts(probs, num_samples, TN__POS_KW(tn_multinomial_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_multinomial_str(tn_tensor *probs, int64_t num_samples, tn_generator *gen, const char *options);
/* Tensor's in-place samplers: t filled with PyTorch's CPU draws for the same seed (gen NULL:
   the default; from an mt19937 generator one double per element, in t's memory order, cast
   to t's dtype; from a Philox one, or on a device, the same transformations of its counters)
   and returned (borrowed). Their parameters are keyword fields with PyTorch's defaults and
   names, the generator too (.generator NULL: the default): tn_normal_(t), tn_uniform_(t,
   .from = -1, .to = 1, .generator = g), tn_exponential_(t, .lambd = 2), tn_geometric_(t, 0.2). */
#define TN_FIELDS_tn_normal_fill_opts(X) \
    X(D,   mean,      0.0,  "") \
    X(D,   std,       1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_normal_fill_opts);
TNDEF tn_tensor *tn_normal__opts(tn_tensor *t, tn_normal_fill_opts opts);     /* mean + std z; floating t (a non-contiguous one: a normal double each, PyTorch's serial kernel) */
#define tn_normal_(...) tn_normal__opts(TN__POS_KW(tn_normal_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_normal__str(tn_tensor *t, const char *options);
#define TN_FIELDS_tn_uniform_fill_opts(X) \
    X(D,   from,      0.0,  "") \
    X(D,   to,        1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_uniform_fill_opts);
TNDEF tn_tensor *tn_uniform__opts(tn_tensor *t, tn_uniform_fill_opts opts);   /* U[from, to); floating t */
#define tn_uniform_(...) tn_uniform__opts(TN__POS_KW(tn_uniform_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_uniform__str(tn_tensor *t, const char *options);
#define TN_FIELDS_tn_exponential_fill_opts(X) \
    X(D,   lambd,     1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_exponential_fill_opts);
TNDEF tn_tensor *tn_exponential__opts(tn_tensor *t, tn_exponential_fill_opts opts); /* -log1p(-u) / lambd; floating t */
#define tn_exponential_(...) tn_exponential__opts(TN__POS_KW(tn_exponential_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_exponential__str(tn_tensor *t, const char *options);
/* geometric_(p, *, generator=None): p has no default, so it stays positional. */
#define TN_FIELDS_tn_generator_fill_opts(X) \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_generator_fill_opts);
TNDEF tn_tensor *tn_geometric__opts(tn_tensor *t, double p, tn_generator_fill_opts opts); /* ceil(log(u) / log1p(-p)), p in (0, 1); any dtype but bool */
#define tn_geometric_(t, ...) tn_geometric__opts(t, TN__POS_KW(tn_generator_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_geometric__str(tn_tensor *t, double p, const char *options);
#define TN_FIELDS_tn_cauchy_fill_opts(X) \
    X(D,   median,    0.0,  "") \
    X(D,   sigma,     1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_cauchy_fill_opts);
TNDEF tn_tensor *tn_cauchy__opts(tn_tensor *t, tn_cauchy_fill_opts opts);     /* median + sigma tan(pi (u - 1/2)) */
#define tn_cauchy_(...) tn_cauchy__opts(TN__POS_KW(tn_cauchy_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cauchy__str(tn_tensor *t, const char *options);
#define TN_FIELDS_tn_log_normal_fill_opts(X) \
    X(D,   mean,      1.0,  "") \
    X(D,   std,       2.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_log_normal_fill_opts);
TNDEF tn_tensor *tn_log_normal__opts(tn_tensor *t, tn_log_normal_fill_opts opts); /* exp(mean + std z) */
#define tn_log_normal_(...) tn_log_normal__opts(TN__POS_KW(tn_log_normal_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_log_normal__str(tn_tensor *t, const char *options);
/* Tensor.random_(from=0, to=None, *, generator=None): integers uniform in [from, to) in t's
   dtype; .to TN_NONE (None): up to the dtype's largest value (2^mantissa bits for a float
   one) included (random_() is tn_random_(t)); .from and .to both TN_NONE: all 64 bits
   (int64, float64, float32, bfloat16). PyTorch's checks of the range against the dtype.
   Tensor.random_(to) is tn_random_(t, .to = to). */
#define TN_FIELDS_tn_random_fill_opts(X) \
    X(I,   from,      0,       "") \
    X(I,   to,        TN_NONE, "") \
    X(GEN, generator, NULL,    "")
TN__KW_STRUCT(tn_random_fill_opts);
TNDEF tn_tensor *tn_random__opts(tn_tensor *t, tn_random_fill_opts opts);
#define tn_random_(...) tn_random__opts(TN__POS_KW(tn_random_fill_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_random__str(tn_tensor *t, const char *options);
/* torch.distributions' samplers (CPU; floating inputs, results in their dtype; gen NULL =
   default): torch._standard_gamma (differentiable: the implicit-reparameterisation gradient
   dx/dalpha = -(dP/dalpha)/(dP/dx) of the gamma CDF P, which _standard_gamma_grad computes with
   PyTorch's approximations, giving its values),
   torch.poisson, torch.binomial(count, prob) (broadcast), torch._sample_dirichlet along the last dim.
   _standard_gamma and _sample_dirichlet from an mt19937 generator give PyTorch's CPU numbers. */
TNDEF tn_tensor *tn_standard_gamma(tn_tensor *alpha, tn_generator *gen);
TNDEF tn_tensor *tn_standard_gamma_grad(tn_tensor *alpha, tn_tensor *x);
TNDEF tn_tensor *tn_poisson(tn_tensor *rates, tn_generator *gen);
TNDEF tn_tensor *tn_binomial(tn_tensor *count, tn_tensor *prob, tn_generator *gen);
TNDEF tn_tensor *tn_sample_dirichlet(tn_tensor *alpha, tn_generator *gen);
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
/* Complex views (differentiable): real/imag share t's storage as float32/float64 with
   doubled strides (tn_real of a real tensor is t; tn_imag of one is an error, as PyTorch);
   view_as_real appends a dim of 2 (real, imag); view_as_complex needs a float32/float64
   tensor whose last dim has size 2 and stride 1, other strides and the offset even. */
TNDEF bool tn_is_complex(const tn_tensor *t);
TNDEF tn_tensor *tn_real(tn_tensor *t);
TNDEF tn_tensor *tn_imag(tn_tensor *t);
TNDEF tn_tensor *tn_view_as_real(tn_tensor *t);
TNDEF tn_tensor *tn_view_as_complex(tn_tensor *t);
TNDEF tn_tensor *tn_reshape(tn_tensor *t, const int64_t *shape, int ndim); /* copies only when strides forbid a view */
/* torch.flatten(t, start_dim=0, end_dim=-1): tn_flatten(t, .start_dim = 1). */
#define TN_FIELDS_tn_flatten_fn_opts(X) \
    X(I, start_dim, 0, "") \
    X(I, end_dim, -1, "")
TN__KW_STRUCT(tn_flatten_fn_opts);
TNDEF tn_tensor *tn_flatten_opts(tn_tensor *t, tn_flatten_fn_opts opts);
#define tn_flatten(...) tn_flatten_opts(TN__POS_KW(tn_flatten_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_flatten_str(tn_tensor *t, const char *options);
TNDEF tn_tensor *tn_unflatten(tn_tensor *t, int64_t dim, const int64_t *sizes, int n);
TNDEF tn_tensor *tn_permute(tn_tensor *t, const int64_t *dims, int ndim);
TNDEF tn_tensor *tn_transpose(tn_tensor *t, int64_t dim0, int64_t dim1);
TNDEF tn_tensor *tn_t(tn_tensor *t);                                        /* 0-, 1- or 2-d transpose */
TNDEF tn_tensor *tn_narrow(tn_tensor *t, int64_t dim, int64_t start, int64_t length);
TNDEF tn_tensor *tn_narrow_copy(tn_tensor *t, int64_t dim, int64_t start, int64_t length);   /* narrow, copied (contiguous) */
/* Python's t[start:stop:step] on one dim: negative start/stop count from the end and
   are clamped; step > 0. Use TN_END for "to the end". */
#define TN_END INT64_MAX
TNDEF tn_tensor *tn_slice(tn_tensor *t, int64_t dim, int64_t start, int64_t stop, int64_t step);
TNDEF tn_tensor *tn_select(tn_tensor *t, int64_t dim, int64_t index);      /* removes dim */
/* The offset diagonal of dims dim1, dim2 as a view, appended as the last dim:
   tn_diagonal(t, .offset = 1, .dim1 = -2, .dim2 = -1). */
#define TN_FIELDS_tn_diagonal_fn_opts(X) \
    X(I, offset, 0, "") \
    X(I, dim1,   0, "") \
    X(I, dim2,   1, "")
TN__KW_STRUCT(tn_diagonal_fn_opts);
TNDEF tn_tensor *tn_diagonal_opts(tn_tensor *t, tn_diagonal_fn_opts opts);
#define tn_diagonal(...) tn_diagonal_opts(TN__POS_KW(tn_diagonal_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_diagonal_str(tn_tensor *t, const char *options);
TNDEF tn_tensor *tn_expand(tn_tensor *t, const int64_t *shape, int ndim);  /* -1 keeps a size */
TNDEF tn_tensor *tn_expand_as(tn_tensor *t, tn_tensor *other);
TNDEF tn_tensor *tn_broadcast_to(tn_tensor *t, const int64_t *shape, int ndim);
TNDEF tn_tensor *tn_squeeze(tn_tensor *t);                                  /* all size-1 dims */
TNDEF tn_tensor *tn_squeeze_dim(tn_tensor *t, int64_t dim);
TNDEF tn_tensor *tn_unsqueeze(tn_tensor *t, int64_t dim);
TNDEF tn_tensor *tn_unfold(tn_tensor *t, int64_t dim, int64_t size, int64_t step);
TNDEF tn_tensor *tn_as_strided(tn_tensor *t, const int64_t *shape, int ndim, const int64_t *strides, int64_t offset);
TNDEF tn_tensor *tn_detach(tn_tensor *t);       /* same data, no autograd history */
/* The view scatters: a copy of t with one view of it (select, slice, diagonal, as_strided)
   replaced by src (the view's shape; cast to t's dtype), differentiable in t and src.
   slice_scatter's start / end TN_NONE are None (the whole dim), step > 0; as_strided_scatter's
   storage_offset TN_NONE is 0 (the copy's own). */
TNDEF tn_tensor *tn_select_scatter(tn_tensor *t, tn_tensor *src, int64_t dim, int64_t index);
#define TN_FIELDS_tn_slice_scatter_fn_opts(X) \
    X(I, dim,   0,       "") \
    X(I, start, TN_NONE, "") \
    X(I, end,   TN_NONE, "") \
    X(I, step,  1,       "")
TN__KW_STRUCT(tn_slice_scatter_fn_opts);
TNDEF tn_tensor *tn_slice_scatter_opts(tn_tensor *t, tn_tensor *src, tn_slice_scatter_fn_opts opts);
#define tn_slice_scatter(t, ...) tn_slice_scatter_opts(t, TN__POS_KW(tn_slice_scatter_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_slice_scatter_str(tn_tensor *t, tn_tensor *src, const char *options);
TNDEF tn_tensor *tn_diagonal_scatter_opts(tn_tensor *t, tn_tensor *src, tn_diagonal_fn_opts opts);   /* offset 0, dim1 0, dim2 1 */
#define tn_diagonal_scatter(t, ...) tn_diagonal_scatter_opts(t, TN__POS_KW(tn_diagonal_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_diagonal_scatter_str(tn_tensor *t, tn_tensor *src, const char *options);
TNDEF tn_tensor *tn_as_strided_scatter(tn_tensor *t, tn_tensor *src, const int64_t *shape, int ndim, const int64_t *strides, int64_t storage_offset);

/* torch.combinations: the length-.r (default 2) combinations of the 1-d x's elements, in
   itertools' order, as rows of a [count, r] tensor (r 0: an empty [0]); with_replacement
   allows repeats. Differentiable (an index_select). */
#define TN_FIELDS_tn_combinations_fn_opts(X) \
    X(I, r,                2,     "") \
    X(B, with_replacement, false, "")
TN__KW_STRUCT(tn_combinations_fn_opts);
TNDEF tn_tensor *tn_combinations_opts(tn_tensor *x, tn_combinations_fn_opts opts);
#define tn_combinations(...) tn_combinations_opts(TN__POS_KW(tn_combinations_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_combinations_str(tn_tensor *x, const char *options);

/* Gathering and scattering; index tensors are int64 (int32 is PyTorch's error for gather/scatter;
   index_select takes it). Results are new tensors. */
TNDEF tn_tensor *tn_index_select(tn_tensor *t, int64_t dim, tn_tensor *index);
TNDEF tn_tensor *tn_gather(tn_tensor *t, int64_t dim, tn_tensor *index);
TNDEF tn_tensor *tn_scatter(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_scatter_add(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_scatter_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_scatter_add_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
/* src reduced into t at index along dim: reduce "sum", "prod", "mean" (integers: floor
   division), "amax" or "amin"; include_self false leaves t's own value out wherever
   something is scattered: tn_scatter_reduce(t, 0, index, src, "amax", .include_self = false)
   (torch's keyword include_self=True, shared with index_reduce). */
#define TN_FIELDS_tn_scatter_reduce_fn_opts(X) \
    X(B, include_self, true, "")
TN__KW_STRUCT(tn_scatter_reduce_fn_opts);
TNDEF tn_tensor *tn_scatter_reduce_opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, tn_scatter_reduce_fn_opts opts);
#define tn_scatter_reduce(t, dim, index, src, ...) tn_scatter_reduce_opts(t, dim, index, src, TN__POS_KW(tn_scatter_reduce_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_scatter_reduce_str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, const char *options);
TNDEF tn_tensor *tn_scatter_reduce__opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, tn_scatter_reduce_fn_opts opts);
#define tn_scatter_reduce_(t, dim, index, src, ...) tn_scatter_reduce__opts(t, dim, index, src, TN__POS_KW(tn_scatter_reduce_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_scatter_reduce__str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce, const char *options);
/* Tensor.index_reduce: source's slices along dim reduced into t's slices index[i] (index 1-d
   int64 / int32, source t's dtype and slice shape); reduce "prod", "mean", "amax" or "amin",
   include_self as scatter_reduce's. */
TNDEF tn_tensor *tn_index_reduce_opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *source, const char *reduce, tn_scatter_reduce_fn_opts opts);
#define tn_index_reduce(t, dim, index, source, ...) tn_index_reduce_opts(t, dim, index, source, TN__POS_KW(tn_scatter_reduce_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_index_reduce_str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *source, const char *reduce, const char *options);
/* scatter(t, dim, index, src, reduce="add" | "multiply"): PyTorch has no derivative for it
   (backward through it is an error). */
TNDEF tn_tensor *tn_scatter_with_reduce(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce);
TNDEF tn_tensor *tn_scatter_with_reduce_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *reduce);
/* Along dim, at the positions in index (0-d or 1-d, in [0, size)): t plus alpha * src's
   slices (duplicates add up), src's slices copied, or value filled. src has t's shape but
   index's length along dim and t's dtype. index_add takes int64 or int32 indices, index_copy
   and index_fill int64, as PyTorch. torch.index_add's keyword: alpha=1
   (tn_index_add(t, 0, index, src, .alpha = 2)). */
#define TN_FIELDS_tn_index_add_fn_opts(X) \
    X(D, alpha, 1.0, "")
TN__KW_STRUCT(tn_index_add_fn_opts);
TNDEF tn_tensor *tn_index_add_opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_add_fn_opts opts);
#define tn_index_add(t, dim, index, ...) tn_index_add_opts(t, dim, index, TN__POS_KW(tn_index_add_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_index_add_str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *options);
TNDEF tn_tensor *tn_index_add__opts(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, tn_index_add_fn_opts opts);
#define tn_index_add_(t, dim, index, ...) tn_index_add__opts(t, dim, index, TN__POS_KW(tn_index_add_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_index_add__str(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src, const char *options);
TNDEF tn_tensor *tn_index_copy(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_index_copy_(tn_tensor *t, int64_t dim, tn_tensor *index, tn_tensor *src);
TNDEF tn_tensor *tn_index_fill(tn_tensor *t, int64_t dim, tn_tensor *index, double value);
TNDEF tn_tensor *tn_index_fill_(tn_tensor *t, int64_t dim, tn_tensor *index, double value);
/* take: t read as if flattened at index (int64; negative counts from the end), in index's
   shape; put: the reverse, source's elements (as many as index has, t's dtype) written or,
   with .accumulate, added (duplicates add up). torch's keyword accumulate=False, shared
   with index_put: tn_put(t, index, source, .accumulate = true). */
TNDEF tn_tensor *tn_take(tn_tensor *t, tn_tensor *index);
#define TN_FIELDS_tn_put_fn_opts(X) \
    X(B, accumulate, false, "")
TN__KW_STRUCT(tn_put_fn_opts);
TNDEF tn_tensor *tn_put_opts(tn_tensor *t, tn_tensor *index, tn_tensor *source, tn_put_fn_opts opts);
#define tn_put(t, index, ...) tn_put_opts(t, index, TN__POS_KW(tn_put_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_put_str(tn_tensor *t, tn_tensor *index, tn_tensor *source, const char *options);
TNDEF tn_tensor *tn_put__opts(tn_tensor *t, tn_tensor *index, tn_tensor *source, tn_put_fn_opts opts);
#define tn_put_(t, index, ...) tn_put__opts(t, index, TN__POS_KW(tn_put_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_put__str(tn_tensor *t, tn_tensor *index, tn_tensor *source, const char *options);
/* gather(t, dim, indices) after broadcasting t and indices (int64, t's ndim) over every dim
   but dim; dim TN_NONE: both flattened first. */
TNDEF tn_tensor *tn_take_along_dim(tn_tensor *t, tn_tensor *indices, int64_t dim);
/* Advanced indexing t[i0, i1, ...] as aten::index: indices[k] indexes dim k (NULL = ":");
   integer tensors broadcast together, bool tensors select where true. */
TNDEF tn_tensor *tn_index(tn_tensor *t, tn_tensor *const *indices, int n);
/* t[indices] = values (broadcast), or += with .accumulate = true (duplicates add up). */
TNDEF tn_tensor *tn_index_put_opts(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, tn_put_fn_opts opts);
#define tn_index_put(t, indices, n, ...) tn_index_put_opts(t, indices, n, TN__POS_KW(tn_put_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_index_put_str(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, const char *options);
TNDEF tn_tensor *tn_index_put__opts(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, tn_put_fn_opts opts);
#define tn_index_put_(t, indices, n, ...) tn_index_put__opts(t, indices, n, TN__POS_KW(tn_put_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_index_put__str(tn_tensor *t, tn_tensor *const *indices, int n, tn_tensor *values, const char *options);
TNDEF tn_tensor *tn_masked_fill(tn_tensor *t, tn_tensor *mask, double value);
TNDEF tn_tensor *tn_masked_fill_(tn_tensor *t, tn_tensor *mask, double value);
/* masked_fill with a 0-d tensor value (cast to t's dtype): the gradient reaches value too. */
TNDEF tn_tensor *tn_masked_fill_tensor(tn_tensor *t, tn_tensor *mask, tn_tensor *value);
TNDEF tn_tensor *tn_masked_fill_tensor_(tn_tensor *t, tn_tensor *mask, tn_tensor *value);
TNDEF tn_tensor *tn_masked_select(tn_tensor *t, tn_tensor *mask);   /* 1-D */
/* t (broadcast with the bool mask) with the positions where mask is true filled, in
   row-major order, from source's leading elements (source has t's dtype and at least as
   many elements as mask has true values). The in-place form keeps t's shape. */
TNDEF tn_tensor *tn_masked_scatter(tn_tensor *t, tn_tensor *mask, tn_tensor *source);
TNDEF tn_tensor *tn_masked_scatter_(tn_tensor *t, tn_tensor *mask, tn_tensor *source);
TNDEF tn_tensor *tn_nonzero(tn_tensor *t);                          /* [n, ndim] int64 */
TNDEF tn_tensor *tn_argwhere(tn_tensor *t);                         /* nonzero's [n, ndim] */
TNDEF tn_tensor *tn_where(tn_tensor *cond, tn_tensor *a, tn_tensor *b);
/* isin: bool, elements' shape, whether each element equals one of test_elements (either
   may be a 0-d scalar; compared in their promoted dtype; NaN is in nothing); invert
   negates it. assume_unique changes nothing here (a speed hint in PyTorch). */
#define TN_FIELDS_tn_isin_fn_opts(X) \
    X(B, assume_unique, false, "") \
    X(B, invert,        false, "")
TN__KW_STRUCT(tn_isin_fn_opts);
TNDEF tn_tensor *tn_isin_opts(tn_tensor *elements, tn_tensor *test_elements, tn_isin_fn_opts opts);
#define tn_isin(elements, ...) tn_isin_opts(elements, TN__POS_KW(tn_isin_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_isin_str(tn_tensor *elements, tn_tensor *test_elements, const char *options);

/* Joining and splitting along .dim (PyTorch's dim=0; negative counts from the end):
   tn_cat(ts, n, .dim = 1), tn_stack(ts, n, .dim = -1). An array written in the call is
   parenthesised, as a macro argument with commas must be:
   tn_cat(((tn_tensor *[]){a, b}), 2, .dim = 1). */
#define TN_FIELDS_tn_cat_fn_opts(X) \
    X(I, dim, 0, "")
TN__KW_STRUCT(tn_cat_fn_opts);
TNDEF tn_tensor *tn_cat_opts(tn_tensor *const *ts, int n, tn_cat_fn_opts opts);
#define tn_cat(ts, ...) tn_cat_opts(ts, TN__POS_KW(tn_cat_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cat_str(tn_tensor *const *ts, int n, const char *options);
TNDEF tn_tensor *tn_stack_opts(tn_tensor *const *ts, int n, tn_cat_fn_opts opts);   /* a new dim at .dim */
#define tn_stack(ts, ...) tn_stack_opts(ts, TN__POS_KW(tn_cat_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_stack_str(tn_tensor *const *ts, int n, const char *options);
/* split (pieces of split_size, the last shorter), split_sizes (torch.split with a list:
   split_with_sizes) and chunk write up to max_out views into out (out NULL counts them) and
   return how many there are (or -1 on error): tn_split(t, 2, out, 8, .dim = 1). */
#define TN_FIELDS_tn_split_fn_opts(X) \
    X(I, dim, 0, "")
TN__KW_STRUCT(tn_split_fn_opts);
TNDEF int tn_split_opts(tn_tensor *t, int64_t split_size, tn_tensor **out, int max_out, tn_split_fn_opts opts);
#define tn_split(t, split_size, out, ...) tn_split_opts(t, split_size, out, TN__POS_KW(tn_split_fn_opts, __VA_ARGS__))
TNDEF int tn_split_str(tn_tensor *t, int64_t split_size, tn_tensor **out, int max_out, const char *options);
TNDEF int tn_split_sizes_opts(tn_tensor *t, const int64_t *sizes, int n, tn_tensor **out, int max_out, tn_split_fn_opts opts);
#define tn_split_sizes(t, ...) tn__split_sizes(t, __VA_ARGS__)   /* sizes, n may be TN_DIMS(2, 3) */
#define tn__split_sizes(t, sizes, n, out, ...) tn_split_sizes_opts(t, sizes, n, out, TN__POS_KW(tn_split_fn_opts, __VA_ARGS__))
TNDEF int tn_split_sizes_str(tn_tensor *t, const int64_t *sizes, int n, tn_tensor **out, int max_out, const char *options);
TNDEF int tn_chunk_opts(tn_tensor *t, int64_t chunks, tn_tensor **out, int max_out, tn_split_fn_opts opts);
#define tn_chunk(t, chunks, out, ...) tn_chunk_opts(t, chunks, out, TN__POS_KW(tn_split_fn_opts, __VA_ARGS__))
TNDEF int tn_chunk_str(tn_tensor *t, int64_t chunks, tn_tensor **out, int max_out, const char *options);
/* torch.tensor_split along .dim (default 0): `sections` pieces (the first size % sections
   one longer), or the pieces between indices[0..n) (Python slices: n + 1 pieces, possibly
   empty). Views, written to out (up to max_out; out NULL counts them); returns how many. */
#define TN_FIELDS_tn_tensor_split_fn_opts(X) \
    X(I, dim, 0, "")
TN__KW_STRUCT(tn_tensor_split_fn_opts);
TNDEF int tn_tensor_split_opts(tn_tensor *t, int64_t sections, tn_tensor **out, int max_out, tn_tensor_split_fn_opts opts);
#define tn_tensor_split(t, sections, out, ...) tn_tensor_split_opts(t, sections, out, TN__POS_KW(tn_tensor_split_fn_opts, __VA_ARGS__))
TNDEF int tn_tensor_split_str(tn_tensor *t, int64_t sections, tn_tensor **out, int max_out, const char *options);
TNDEF int tn_tensor_split_indices_opts(tn_tensor *t, const int64_t *indices, int n, tn_tensor **out, int max_out, tn_tensor_split_fn_opts opts);
#define tn_tensor_split_indices(t, indices, n, out, ...) tn_tensor_split_indices_opts(t, indices, n, out, TN__POS_KW(tn_tensor_split_fn_opts, __VA_ARGS__))
TNDEF int tn_tensor_split_indices_str(tn_tensor *t, const int64_t *indices, int n, tn_tensor **out, int max_out, const char *options);
/* t itself (a new reference) or a view with size-1 dims added as numpy's atleast_*d. */
TNDEF tn_tensor *tn_atleast_1d(tn_tensor *t);
TNDEF tn_tensor *tn_atleast_2d(tn_tensor *t);
TNDEF tn_tensor *tn_atleast_3d(tn_tensor *t);
/* numpy's stacks: cat along dim 0 of 1-d inputs else 1 (hstack), of inputs made at least
   2-d along 0 (vstack = row_stack), at least 3-d along 2 (dstack); column_stack takes 0-/1-d
   inputs as columns. */
TNDEF tn_tensor *tn_hstack(tn_tensor *const *ts, int n);
TNDEF tn_tensor *tn_vstack(tn_tensor *const *ts, int n);
TNDEF tn_tensor *tn_dstack(tn_tensor *const *ts, int n);
TNDEF tn_tensor *tn_column_stack(tn_tensor *const *ts, int n);
TNDEF tn_tensor *tn_flip(tn_tensor *t, const int64_t *dims, int n);
TNDEF tn_tensor *tn_roll(tn_tensor *t, const int64_t *shifts, const int64_t *dims, int n); /* n = 0: flattened, shifts[0] */
/* k quarter turns from dims[0] towards dims[1] (two dims); a new tensor:
   tn_rot90(t, .k = -1, .dims = TN_INTS(1, 2)). */
#define TN__INTS_0_1 {2, {0, 1}}      /* rot90's dims=(0, 1) */
#define TN_FIELDS_tn_rot90_fn_opts(X) \
    X(I,  k,    1,            "") \
    X(IL, dims, TN__INTS_0_1, "")
TN__KW_STRUCT(tn_rot90_fn_opts);
TNDEF tn_tensor *tn_rot90_opts(tn_tensor *t, tn_rot90_fn_opts opts);
#define tn_rot90(...) tn_rot90_opts(TN__POS_KW(tn_rot90_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_rot90_str(tn_tensor *t, const char *options);
/* The n tensors (0-, 1- or 2-d) as blocks along the diagonal of one matrix, zeros elsewhere. */
TNDEF tn_tensor *tn_block_diag(tn_tensor *const *ts, int n);
/* torch.meshgrid: n 0-/1-d tensors to n grids (expanded views) in out; .indexing
   TN_INDEXING_IJ (the default: PyTorch's None) or TN_INDEXING_XY. Returns n, or -1. */
typedef enum tn_indexing { TN_INDEXING_IJ = 0, TN_INDEXING_XY } tn_indexing;
#define TN_FIELDS_tn_meshgrid_fn_opts(X) \
    X(E, indexing, TN_INDEXING_IJ, "ij|xy")
TN__KW_STRUCT(tn_meshgrid_fn_opts);
TNDEF int tn_meshgrid_opts(tn_tensor *const *ts, int n, tn_tensor **out, tn_meshgrid_fn_opts opts);
#define tn_meshgrid(ts, n, ...) tn_meshgrid_opts(ts, n, TN__POS_KW(tn_meshgrid_fn_opts, __VA_ARGS__))
TNDEF int tn_meshgrid_str(tn_tensor *const *ts, int n, tn_tensor **out, const char *options);
TNDEF tn_tensor *tn_cartesian_prod(tn_tensor *const *ts, int n);   /* [prod of sizes, n] (one input: itself) */
TNDEF tn_tensor *tn_repeat(tn_tensor *t, const int64_t *repeats, int n);
/* Each element of t (each slice along .dim) repeated repeats times, or repeats[i] times
   (tensor form: int64 or int32, one per slice, or a single count); .dim TN_NONE (PyTorch's
   default None) flattens t first. .output_size: TN_NONE, or the result's length along dim
   (checked). tn_repeat_interleave(t, 2, .dim = 1). */
#define TN_FIELDS_tn_repeat_interleave_fn_opts(X) \
    X(I, dim,         TN_NONE, "") \
    X(I, output_size, TN_NONE, "")
TN__KW_STRUCT(tn_repeat_interleave_fn_opts);
TNDEF tn_tensor *tn_repeat_interleave_opts(tn_tensor *t, int64_t repeats, tn_repeat_interleave_fn_opts opts);
#define tn_repeat_interleave(t, ...) tn_repeat_interleave_opts(t, TN__POS_KW(tn_repeat_interleave_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_repeat_interleave_str(tn_tensor *t, int64_t repeats, const char *options);
TNDEF tn_tensor *tn_repeat_interleave_tensor_opts(tn_tensor *t, tn_tensor *repeats, tn_repeat_interleave_fn_opts opts);
#define tn_repeat_interleave_tensor(t, ...) tn_repeat_interleave_tensor_opts(t, TN__POS_KW(tn_repeat_interleave_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_repeat_interleave_tensor_str(tn_tensor *t, tn_tensor *repeats, const char *options);
/* torch.repeat_interleave(repeats): i repeated repeats[i] times (repeats 1-d, int64 or int32;
   the result in its dtype); .output_size only (.dim is an error). */
TNDEF tn_tensor *tn_repeat_interleave_indices_opts(tn_tensor *repeats, tn_repeat_interleave_fn_opts opts);
#define tn_repeat_interleave_indices(...) tn_repeat_interleave_indices_opts(TN__POS_KW(tn_repeat_interleave_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_repeat_interleave_indices_str(tn_tensor *repeats, const char *options);
/* The .n-th (default 1) forward difference along .dim (default -1) of t with .prepend and
   .append (NULL: none; t's ndim) concatenated before and after it; bool inputs differ by
   logical xor. */
#define TN_FIELDS_tn_diff_fn_opts(X) \
    X(I, n,       1,    "") \
    X(I, dim,     -1,   "") \
    X(T, prepend, NULL, "") \
    X(T, append,  NULL, "")
TN__KW_STRUCT(tn_diff_fn_opts);
TNDEF tn_tensor *tn_diff_opts(tn_tensor *t, tn_diff_fn_opts opts);
#define tn_diff(...) tn_diff_opts(TN__POS_KW(tn_diff_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_diff_str(tn_tensor *t, const char *options);
/* torch.gradient(x, out, .spacing = TN_DOUBLES(h) (one for every dim, or one per dim;
   empty: 1), .dim = TN_INTS(...) (empty: every dim), .edge_order = 1 or 2): the derivative
   along each dim, central differences inside and one-sided ones of edge_order at the ends,
   into out[] (room for TN_MAX_DIMS; integers give the default dtype); returns the count or -1. */
#define TN_FIELDS_tn_gradient_fn_opts(X) \
    X(DL, spacing,    TN__LIST0, "") \
    X(IL, dim,        TN__LIST0, "") \
    X(I,  edge_order, 1,         "")
TN__KW_STRUCT(tn_gradient_fn_opts);
TNDEF int tn_gradient_opts(tn_tensor *x, tn_tensor **out, tn_gradient_fn_opts opts);
#define tn_gradient(x, ...) tn_gradient_opts(x, TN__POS_KW(tn_gradient_fn_opts, __VA_ARGS__))
TNDEF int tn_gradient_str(tn_tensor *x, tn_tensor **out, const char *options);
/* torch.gradient(x, spacing=coordinates): coords[i] the 1-d sample positions along the i-th dim of .dim (opts.spacing unused) */
TNDEF int tn_gradient_coords(tn_tensor *x, tn_tensor *const *coords, int ncoords, tn_tensor **out, tn_gradient_fn_opts opts);
TNDEF int tn_gradient_coords_str(tn_tensor *x, tn_tensor *const *coords, int ncoords, tn_tensor **out, const char *options);
/* torch.diag, tril and triu's keyword: .diagonal (default 0; > 0 above the main one). */
#define TN_FIELDS_tn_diag_fn_opts(X) \
    X(I, diagonal, 0, "")
TN__KW_STRUCT(tn_diag_fn_opts);
/* The lower (tril) or upper (triu) triangle of the last two dims, the rest zeroed. */
TNDEF tn_tensor *tn_tril_opts(tn_tensor *t, tn_diag_fn_opts opts);
#define tn_tril(...) tn_tril_opts(TN__POS_KW(tn_diag_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_tril_str(tn_tensor *t, const char *options);
TNDEF tn_tensor *tn_triu_opts(tn_tensor *t, tn_diag_fn_opts opts);
#define tn_triu(...) tn_triu_opts(TN__POS_KW(tn_diag_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_triu_str(tn_tensor *t, const char *options);
/* A new tensor whose dims .dim1, .dim2 (default -2, -1) hold t's last dim on their .offset
   diagonal (default 0), zeros elsewhere. */
#define TN_FIELDS_tn_diag_embed_fn_opts(X) \
    X(I, offset, 0,  "") \
    X(I, dim1,   -2, "") \
    X(I, dim2,   -1, "")
TN__KW_STRUCT(tn_diag_embed_fn_opts);
TNDEF tn_tensor *tn_diag_embed_opts(tn_tensor *t, tn_diag_embed_fn_opts opts);
#define tn_diag_embed(...) tn_diag_embed_opts(TN__POS_KW(tn_diag_embed_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_diag_embed_str(tn_tensor *t, const char *options);
/* torch.diag: 1-D: the matrix with t on its .diagonal; 2-D: a copy of that diagonal. */
TNDEF tn_tensor *tn_diag_opts(tn_tensor *t, tn_diag_fn_opts opts);
#define tn_diag(...) tn_diag_opts(TN__POS_KW(tn_diag_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_diag_str(tn_tensor *t, const char *options);
/* The flattened input on its .offset diagonal (default 0) of a square matrix. */
#define TN_FIELDS_tn_diagflat_fn_opts(X) \
    X(I, offset, 0, "")
TN__KW_STRUCT(tn_diagflat_fn_opts);
TNDEF tn_tensor *tn_diagflat_opts(tn_tensor *t, tn_diagflat_fn_opts opts);
#define tn_diagflat(...) tn_diagflat_opts(TN__POS_KW(tn_diagflat_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_diagflat_str(tn_tensor *t, const char *options);
/* F.pad(t, pad, mode='constant', value=None): pad = (last_left, last_right, prev_left,
   prev_right, ...), n even; negative pads crop. .mode is one of section 12's padding_mode
   values: TN_PADDING_ZEROS ('constant', the default: .value, 0 by default, fills) or
   TN_PADDING_REFLECT, TN_PADDING_REPLICATE, TN_PADDING_CIRCULAR over the last n / 2 dims,
   n = 2, 4 or 6 for a 2-3, 3-4 or 4-5-d input (reflection needs pads below the size,
   circular ones at most the size; a nonzero .value is an error, as PyTorch's). Differentiable.
   tn_pad(x, TN_SHAPE(1, 1), .value = -1), tn_pad(x, pads, 4, .mode = TN_PADDING_REFLECT). */
#define TN_FIELDS_tn_pad_fn_opts(X) \
    X(E, mode,  0, "constant|reflect|replicate|circular") /* 0: TN_PADDING_ZEROS, declared in section 12 */ \
    X(D, value, 0.0, "")
TN__KW_STRUCT(tn_pad_fn_opts);
TNDEF tn_tensor *tn_pad_opts(tn_tensor *t, const int64_t *pad, int n, tn_pad_fn_opts opts);
#define tn_pad(t, ...) tn__pad(t, __VA_ARGS__)
#define tn__pad(t, pad, ...) tn_pad_opts(t, pad, TN__POS_KW(tn_pad_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_pad_str(tn_tensor *t, const int64_t *pad, int n, const char *options);

/* ======================================================================= */
/* 7. elementwise & broadcasting                                            */
/* ======================================================================= */
/* Binary ops broadcast and promote dtypes as PyTorch. The *_scalar forms take a double:
   an integral value acts as a Python int, any other as a Python float (so an int tensor
   plus 2 stays int, plus 2.5 becomes float32). Pass tn_scalar()/tn_scalar_int() tensors
   to the tensor forms to choose explicitly. Forms ending in _ write into their first
   argument (whose shape and dtype must hold the result) and return it, borrowed. */
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
TNDEF tn_tensor *tn_bitwise_left_shift(tn_tensor *a, tn_tensor *b);    /* a << b, integers: 0 where b < 0 or b >= the bit width (2025 PyTorch) */
TNDEF tn_tensor *tn_bitwise_right_shift(tn_tensor *a, tn_tensor *b);   /* a >> b, arithmetic for signed: the sign where b < 0 or b is past the width */
/* NaN-ignoring maximum and minimum (NaN only where both are); ties send the gradient to a. */
TNDEF tn_tensor *tn_fmax(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_fmin(tn_tensor *a, tn_tensor *b);
/* Floating only (integer inputs are an error, as PyTorch): log(exp(a) + exp(b)),
   log2(2^a + 2^b), sqrt(a^2 + b^2), the next float after a toward b (no gradient). */
TNDEF tn_tensor *tn_logaddexp(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_logaddexp2(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_hypot(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_nextafter(tn_tensor *a, tn_tensor *b);
/* a log(b) / a log1p(b), 0 where a == 0 unless b is NaN; a with b's sign. Integer and bool
   inputs give float32. */
TNDEF tn_tensor *tn_xlogy(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_special_xlog1py(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_copysign(tn_tensor *a, tn_tensor *b);
/* 0 where x < 0, values where x == 0, 1 where x > 0; x and values of one dtype (no gradient). */
TNDEF tn_tensor *tn_heaviside(tn_tensor *x, tn_tensor *values);
TNDEF tn_tensor *tn_gcd(tn_tensor *a, tn_tensor *b);            /* integers, non-negative results */
TNDEF tn_tensor *tn_lcm(tn_tensor *a, tn_tensor *b);
TNDEF tn_tensor *tn_ldexp(tn_tensor *x, tn_tensor *other);      /* x * 2^other; integers give float32 */
TNDEF tn_tensor *tn_float_power(tn_tensor *a, tn_tensor *b);    /* pow computed (and returned) in float64 */
TNDEF tn_tensor *tn_float_power_(tn_tensor *a, tn_tensor *b);   /* a must be float64 */

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

/* In place: a op= b, broadcasting b; return a (borrowed), NULL with an error. */
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
TNDEF tn_tensor *tn_fill(tn_tensor *x, double value);                  /* torch.fill: a new tensor of x's shape and dtype holding value */
TNDEF tn_tensor *tn_fill_tensor(tn_tensor *x, tn_tensor *value);       /* torch.fill with a 0-d value tensor (its gradient: the sum) */

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
/* F.gelu: approximate 'none' (the erf form) or 'tanh': tn_gelu(x, .approximate = TN_APPROXIMATE_TANH). */
enum { TN_APPROXIMATE_NONE = 0, TN_APPROXIMATE_TANH };
#define TN_FIELDS_tn_gelu_fn_opts(X) \
    X(E, approximate, TN_APPROXIMATE_NONE, "none|tanh")
TN__KW_STRUCT(tn_gelu_fn_opts);
TNDEF tn_tensor *tn_gelu_opts(tn_tensor *x, tn_gelu_fn_opts opts);
#define tn_gelu(...) tn_gelu_opts(TN__POS_KW(tn_gelu_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_gelu_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_silu(tn_tensor *x);
/* F.softplus: log(1 + exp(beta x)) / beta, x where beta x > threshold (beta=1, nonzero;
   threshold=20). */
#define TN_FIELDS_tn_softplus_fn_opts(X) \
    X(D, beta,      1.0,  "") \
    X(D, threshold, 20.0, "")
TN__KW_STRUCT(tn_softplus_fn_opts);
TNDEF tn_tensor *tn_softplus_opts(tn_tensor *x, tn_softplus_fn_opts opts);
#define tn_softplus(...) tn_softplus_opts(TN__POS_KW(tn_softplus_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_softplus_str(tn_tensor *x, const char *options);
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
TNDEF tn_tensor *tn_signbit(tn_tensor *x);                     /* bool: the sign bit is set (-0.0 too) */
TNDEF tn_tensor *tn_isreal(tn_tensor *x);                      /* bool: the imaginary part is 0 (real dtypes: all true) */
TNDEF tn_tensor *tn_isposinf(tn_tensor *x);                    /* bool: +inf (integers: all false) */
TNDEF tn_tensor *tn_isneginf(tn_tensor *x);                    /* bool: -inf (integers: all false) */
TNDEF tn_tensor *tn_angle(tn_tensor *x);                       /* real x: pi where x < 0, else 0, NaN kept; integers give the default dtype; zero gradient; complex: atan2(imag, real), real result */
TNDEF tn_tensor *tn_sgn(tn_tensor *x);                         /* sign; complex x: x / |x| (0 at 0) */
/* The complex conjugate (a copy here: PyTorch's conj is a lazy view); a real tensor is
   returned as itself. conj_physical is the same copy. */
TNDEF tn_tensor *tn_conj(tn_tensor *x);
TNDEF tn_tensor *tn_conj_physical(tn_tensor *x);
TNDEF tn_tensor *tn_asinh(tn_tensor *x);
TNDEF tn_tensor *tn_acosh(tn_tensor *x);
TNDEF tn_tensor *tn_atanh(tn_tensor *x);
TNDEF tn_tensor *tn_deg2rad(tn_tensor *x);
TNDEF tn_tensor *tn_rad2deg(tn_tensor *x);
TNDEF tn_tensor *tn_sinc(tn_tensor *x);                        /* sin(pi x) / (pi x), 1 at 0 */
/* log(z / (1 - z)), z = x clamped to [eps, 1 - eps] (eps=None: NAN, the default, or any
   negative value, no clamp): tn_logit(x, .eps = 1e-6). */
#define TN_FIELDS_tn_logit_fn_opts(X) \
    X(D, eps, NAN, "")
TN__KW_STRUCT(tn_logit_fn_opts);
TNDEF tn_tensor *tn_logit_opts(tn_tensor *x, tn_logit_fn_opts opts);
#define tn_logit(...) tn_logit_opts(TN__POS_KW(tn_logit_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_logit_str(tn_tensor *x, const char *options);
/* Special functions (section 7's scalar formulas below, shared with the GPU unit). */
TNDEF tn_tensor *tn_lgamma(tn_tensor *x);                      /* log|Gamma(x)| */
TNDEF tn_tensor *tn_digamma(tn_tensor *x);
TNDEF tn_tensor *tn_polygamma(int64_t n, tn_tensor *x);        /* n-th derivative of digamma, n >= 0 */
/* Multivariate log-gamma of dimension p >= 1 (NaN or inf where an element is not above (p - 1) / 2). */
TNDEF tn_tensor *tn_mvlgamma(tn_tensor *x, int64_t p);
TNDEF tn_tensor *tn_erfinv(tn_tensor *x);
TNDEF tn_tensor *tn_i0(tn_tensor *x);                          /* modified Bessel functions of the first kind */
TNDEF tn_tensor *tn_special_i0e(tn_tensor *x);                 /* i0(x) exp(-|x|) */
TNDEF tn_tensor *tn_special_i1(tn_tensor *x);
TNDEF tn_tensor *tn_special_i1e(tn_tensor *x);                 /* i1(x) exp(-|x|) */
/* torch.special (float results; integer and bool inputs give the default dtype). ndtr is the
   standard normal CDF, ndtri its inverse, erfcx exp(x^2) erfc(x), entr -x log x. The Bessel,
   Airy and polynomial functions have no gradient (as PyTorch: the result does not require grad). */
TNDEF tn_tensor *tn_special_ndtr(tn_tensor *x);
TNDEF tn_tensor *tn_special_ndtri(tn_tensor *x);
TNDEF tn_tensor *tn_special_log_ndtr(tn_tensor *x);
TNDEF tn_tensor *tn_special_erfcx(tn_tensor *x);
TNDEF tn_tensor *tn_special_entr(tn_tensor *x);
TNDEF tn_tensor *tn_special_bessel_j0(tn_tensor *x);
TNDEF tn_tensor *tn_special_bessel_j1(tn_tensor *x);
TNDEF tn_tensor *tn_special_bessel_y0(tn_tensor *x);
TNDEF tn_tensor *tn_special_bessel_y1(tn_tensor *x);
TNDEF tn_tensor *tn_special_modified_bessel_i0(tn_tensor *x);
TNDEF tn_tensor *tn_special_modified_bessel_i1(tn_tensor *x);
TNDEF tn_tensor *tn_special_modified_bessel_k0(tn_tensor *x);
TNDEF tn_tensor *tn_special_modified_bessel_k1(tn_tensor *x);
TNDEF tn_tensor *tn_special_scaled_modified_bessel_k0(tn_tensor *x);
TNDEF tn_tensor *tn_special_scaled_modified_bessel_k1(tn_tensor *x);
TNDEF tn_tensor *tn_special_spherical_bessel_j0(tn_tensor *x);
TNDEF tn_tensor *tn_special_airy_ai(tn_tensor *x);
/* Hurwitz zeta(x, q) (gradient for q only); the regularised incomplete gamma functions
   P(a, x), Q(a, x) (gradient for x only); the polynomials p_n(x) of degree n (a tensor, truncated). */
TNDEF tn_tensor *tn_special_zeta(tn_tensor *x, tn_tensor *q);
TNDEF tn_tensor *tn_special_gammainc(tn_tensor *a, tn_tensor *x);
TNDEF tn_tensor *tn_special_gammaincc(tn_tensor *a, tn_tensor *x);
TNDEF tn_tensor *tn_special_chebyshev_polynomial_t(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_chebyshev_polynomial_u(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_chebyshev_polynomial_v(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_chebyshev_polynomial_w(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_hermite_polynomial_h(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_hermite_polynomial_he(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_laguerre_polynomial_l(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_legendre_polynomial_p(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_t(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_u(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_v(tn_tensor *x, tn_tensor *n);
TNDEF tn_tensor *tn_special_shifted_chebyshev_polynomial_w(tn_tensor *x, tn_tensor *n);
/* x = mantissa * 2^exponent, |mantissa| in [0.5, 1): the mantissa (x's float dtype), and the
   int32 exponent in *exponent (ownership as the result's); floating inputs only. */
TNDEF tn_tensor *tn_frexp(tn_tensor *x, tn_tensor **exponent);
/* NaN, +inf and -inf replaced by nan, posinf and neginf (nan=0.0, posinf=None, neginf=None:
   None, NAN, is the dtype's largest / lowest finite value, and so are INFINITY / -INFINITY):
   tn_nan_to_num(x, .nan = -1, .posinf = 1e6). */
#define TN_FIELDS_tn_nan_to_num_fn_opts(X) \
    X(D, nan,    0.0, "") \
    X(D, posinf, NAN, "") \
    X(D, neginf, NAN, "")
TN__KW_STRUCT(tn_nan_to_num_fn_opts);
TNDEF tn_tensor *tn_nan_to_num_opts(tn_tensor *x, tn_nan_to_num_fn_opts opts);
#define tn_nan_to_num(...) tn_nan_to_num_opts(TN__POS_KW(tn_nan_to_num_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_nan_to_num_str(tn_tensor *x, const char *options);
/* torch.clamp(x, min=None, max=None): x clamped to [.min, .max]; a bound left out (None,
   NAN) is not applied, and one of them must be given: tn_clamp(x, .min = 0),
   tn_clamp(x, .min = -1, .max = 1). The in-place tn_clamp_ takes the same options. */
#define TN_FIELDS_tn_clamp_fn_opts(X) \
    X(D, min, NAN, "") \
    X(D, max, NAN, "")
TN__KW_STRUCT(tn_clamp_fn_opts);
TNDEF tn_tensor *tn_clamp_opts(tn_tensor *x, tn_clamp_fn_opts opts);
#define tn_clamp(...) tn_clamp_opts(TN__POS_KW(tn_clamp_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_clamp_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_clamp_tensor(tn_tensor *x, tn_tensor *min, tn_tensor *max); /* either may be NULL */
TNDEF tn_tensor *tn_clamp_min(tn_tensor *x, double min);
TNDEF tn_tensor *tn_clamp_max(tn_tensor *x, double max);
TNDEF tn_tensor *tn_lerp(tn_tensor *start, tn_tensor *end, tn_tensor *weight);
TNDEF tn_tensor *tn_lerp_scalar(tn_tensor *start, tn_tensor *end, double weight);
/* addcmul: x + value * t1 * t2, addcdiv: x + value * t1 / t2 (torch's keyword value=1):
   tn_addcmul(x, t1, t2, .value = 0.5). The in-place forms take the same options. */
#define TN_FIELDS_tn_addcmul_fn_opts(X) \
    X(D, value, 1.0, "")
TN__KW_STRUCT(tn_addcmul_fn_opts);
TNDEF tn_tensor *tn_addcmul_opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts opts);
#define tn_addcmul(x, t1, ...) tn_addcmul_opts(x, t1, TN__POS_KW(tn_addcmul_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addcmul_str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options);
TNDEF tn_tensor *tn_addcdiv_opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts opts);
#define tn_addcdiv(x, t1, ...) tn_addcdiv_opts(x, t1, TN__POS_KW(tn_addcmul_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addcdiv_str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options);
/* In place: x = op(x); return x (borrowed), NULL with an error. */
TNDEF tn_tensor *tn_neg_(tn_tensor *x);
TNDEF tn_tensor *tn_exp_(tn_tensor *x);
TNDEF tn_tensor *tn_relu_(tn_tensor *x);
TNDEF tn_tensor *tn_sigmoid_(tn_tensor *x);
TNDEF tn_tensor *tn_tanh_(tn_tensor *x);
TNDEF tn_tensor *tn_sqrt_(tn_tensor *x);
TNDEF tn_tensor *tn_square_(tn_tensor *x);
TNDEF tn_tensor *tn_clamp__opts(tn_tensor *x, tn_clamp_fn_opts opts);
#define tn_clamp_(...) tn_clamp__opts(TN__POS_KW(tn_clamp_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_clamp__str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_addcmul__opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts opts);
#define tn_addcmul_(x, t1, ...) tn_addcmul__opts(x, t1, TN__POS_KW(tn_addcmul_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addcmul__str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options);
TNDEF tn_tensor *tn_addcdiv__opts(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, tn_addcmul_fn_opts opts);
#define tn_addcdiv_(x, t1, ...) tn_addcdiv__opts(x, t1, TN__POS_KW(tn_addcmul_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addcdiv__str(tn_tensor *x, tn_tensor *t1, tn_tensor *t2, const char *options);
TNDEF tn_tensor *tn_lerp_(tn_tensor *start, tn_tensor *end, double weight);
/* Torch's result_type over n operands (0-d and wrapped numbers weigh less). */
TNDEF tn_dtype tn_result_type(tn_tensor *const *ts, int n);
/* Broadcast shape of a and b into out (TN_MAX_DIMS entries); returns ndim or -1 with an error. */
TNDEF int tn_broadcast_shapes(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out);
/* torch.allclose / isclose's keywords: rtol=1e-05, atol=1e-08, equal_nan=False
   (tn_allclose(a, b, .atol = 1e-6)). allclose: isclose everywhere (false, with the error
   set, on bad input or option text). */
#define TN_FIELDS_tn_isclose_fn_opts(X) \
    X(D, rtol, 1e-5, "") \
    X(D, atol, 1e-8, "") \
    X(B, equal_nan, false, "")
TN__KW_STRUCT(tn_isclose_fn_opts);
TNDEF bool tn_allclose_opts(tn_tensor *a, tn_tensor *b, tn_isclose_fn_opts opts);
#define tn_allclose(a, ...) tn_allclose_opts(a, TN__POS_KW(tn_isclose_fn_opts, __VA_ARGS__))
TNDEF bool tn_allclose_str(tn_tensor *a, tn_tensor *b, const char *options);
/* torch.isclose elementwise (bool, broadcast): a == b, or both finite with |a - b| <= atol +
   |rtol b| computed in their dtype (bool as the default float dtype); NaNs equal if
   equal_nan. Same dtypes, rtol and atol >= 0, as PyTorch. */
TNDEF tn_tensor *tn_isclose_opts(tn_tensor *a, tn_tensor *b, tn_isclose_fn_opts opts);
#define tn_isclose(a, ...) tn_isclose_opts(a, TN__POS_KW(tn_isclose_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_isclose_str(tn_tensor *a, tn_tensor *b, const char *options);
TNDEF bool tn_equal(tn_tensor *a, tn_tensor *b);    /* same shape and values */

/* Scalar formulas of the elementwise kernels, shared by the CPU kernels and tensor_cuda.cu
   (one formula each). The special functions work in double precision; float32 kernels
   round their result. They follow the usual series: Stirling's for lgamma, the asymptotic
   expansion for digamma, Euler-Maclaurin for the Hurwitz zeta function, power and
   asymptotic series for the Bessel functions, Halley steps for erfinv. */
/* log|Gamma(x)| for x >= 0.5: the recurrence up to 12, then Stirling's series */
TN_HD static inline double tn__lgamma_pos_f64(double x) {
    double p = 1;
    while (x < 12) { p *= x; x += 1; }
    const double z = 1 / (x * x);
    const double s = (((((((-3617.0 / 122400 * z + 1.0 / 156) * z - 691.0 / 360360) * z + 1.0 / 1188) * z - 1.0 / 1680) * z
                        + 1.0 / 1260) * z - 1.0 / 360) * z + 1.0 / 12) / x;
    return (x - 0.5) * log(x) - x + 0.91893853320467274178 + s - log(p);
}
/* lgamma(2 + z) for |z| <= 0.5: (1 - gamma) z + sum_k>=2 (-1)^k (zeta(k) - 1) / k z^k (terms fall as
   4^-k); with log1p it gives lgamma on [0.5, 2.5) without the cancellation near its zeros 1 and 2 */
TN_HD static inline double tn__lgamma2_f64(double z) {
    const double c[30] = {   /* zeta(k) - 1, k = 2..31 */
        0.64493406684822663, 0.20205690315959429, 0.082323233711138213, 0.036927755143369941, 0.017343061984449137,
        0.0083492773819228289, 0.0040773561979443405, 0.0020083928260822143, 0.00099457512781808569, 0.00049418860411946475,
        0.00024608655330804827, 0.00012271334757848917, 6.1248135058704814e-05, 3.0588236307020493e-05, 1.5282259408651864e-05,
        7.6371976378997609e-06, 3.8172932649998402e-06, 1.9082127165539394e-06, 9.53962033872796e-07, 4.7693298678780645e-07,
        2.3845050272773295e-07, 1.1921992596531106e-07, 5.960818905125948e-08, 2.9803503514652279e-08, 1.4901554828365039e-08,
        7.4507117898354301e-09, 3.7253340247884573e-09, 1.8626597235130496e-09, 9.3132743241966817e-10, 4.6566290650337837e-10};
    double s = 0;
    for (int k = 31; k >= 2; k--) s = s * z + ((k & 1) ? -c[k - 2] : c[k - 2]) / k;
    return z * (0.42278433509846713939 + z * s);
}
TN_HD static inline double tn_lgamma_f64(double x) {
    if (x != x) return x;
    if (x == INFINITY || x == -INFINITY || (x <= 0 && x == floor(x))) return INFINITY;
    if (x >= 1.5 && x < 2.5) return tn__lgamma2_f64(x - 2);
    if (x >= 0.5 && x < 1.5) return tn__lgamma2_f64(x - 1) - log1p(x - 1);
    if (x >= 0.5) return tn__lgamma_pos_f64(x);
    if (x > -0.5) return tn__lgamma2_f64(x) - log1p(x) - log(fabs(x));   /* Gamma(x) = Gamma(x + 1) / x: near 0 reflection's sin(pi r) rounds to 0 */
    const double r = x - floor(x);   /* reflection: log(pi / |sin(pi x)|) - lgamma(1 - x) */
    return 1.14472988584940017414 - log(sin(3.14159265358979323846 * (r < 0.5 ? r : 1 - r))) - tn__lgamma_pos_f64(1 - x);
}
/* digamma for x > 0: the recurrence up to 10, then ln x - 1/2x - sum B_2k / (2k x^2k) */
TN_HD static inline double tn__digamma_pos_f64(double x) {
    double r = 0;
    while (x < 10) { r -= 1 / x; x += 1; }
    if (x < 1e17) {
        const double z = 1 / (x * x);
        r -= z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
    }
    return r + log(x) - 0.5 / x;
}
/* PyTorch's values at the poles: -inf at +0, +inf at -0, NaN at negative integers */
TN_HD static inline double tn_digamma_f64(double x) {
    if (x == 0) return copysign(INFINITY, -x);
    if (x < 0) {
        if (x == trunc(x)) return NAN;
        /* reflection, with tan of the fraction of x (pi x itself loses digits) */
        return tn__digamma_pos_f64(1 - x) - 3.14159265358979323846 / tan(3.14159265358979323846 * (x - trunc(x)));
    }
    return tn__digamma_pos_f64(x);
}
/* Hurwitz zeta(x, q) = sum_k (q + k)^-x: nine or more terms, then the Euler-Maclaurin tail
   (its coefficients are (2k)! / B_2k). inf at q a non-positive integer. */
TN_HD static inline double tn_zeta_f64(double x, double q) {
    const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                          -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                          1.8152105401943546773e17, -7.1661652561756670113e18};
    const double eps = 1.11022302462515654042e-16;
    if (x == 1) return INFINITY;
    if (x < 1) return NAN;
    if (q <= 0) {   /* before the NaN test: a pole wins over a NaN x, as in PyTorch */
        if (q == floor(q)) return INFINITY;
        if (x != floor(x)) return NAN;   /* (q + k)^-x of a negative base */
    }
    if (x != x || q != q || q == INFINITY) return NAN;   /* q = inf: NaN, as PyTorch's */
    if (q > 1e8 && x != INFINITY) return pow(q, 1 - x) / (x - 1) + 0.5 * pow(q, -x);   /* the sum's terms would underflow one by one */
    double s = pow(q, -x), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9) {
        i++;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (fabs(b) < eps * fabs(s)) return s;
    }
    const double w = a;
    s += b * w / (x - 1) - 0.5 * b;
    double f = 1, k = 0;
    for (int j = 0; j < 12; j++) {
        f *= x + k;
        b /= w;
        const double t = f * b / A[j];
        s += t;
        if (fabs(t) < eps * fabs(s)) break;
        k += 1;
        f *= x + k;
        b /= w;
        k += 1;
    }
    return s;
}
/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 */
TN_HD static inline double tn_polygamma_f64(int64_t n, double x) {
    if (n == 0) return tn_digamma_f64(x);
    return ((n & 1) ? 1.0 : -1.0) * exp(tn_lgamma_f64((double)n + 1)) * tn_zeta_f64((double)n + 1, x);
}
/* erfinv: a first guess within 0.2 % (Winitzki's formula), then two Halley steps on
   erf(x) - a, written (1 - a) - erfc(x) above 0.5 so that nothing cancels. */
TN_HD static inline double tn_erfinv_f64(double y) {
    const double a = fabs(y);
    if (!(a <= 1)) return NAN;
    if (a == 1) return copysign(INFINITY, y);
    if (a == 0) return y;
    const double l = log((1 - a) * (1 + a)), t = 4.33074675079143047 + 0.5 * l;   /* 2 / (pi 0.147) */
    double x = sqrt(sqrt(t * t - l / 0.147) - t);
    for (int k = 0; k < 2; k++) {
        const double f = a <= 0.5 ? erf(x) - a : (1 - a) - erfc(x);
        x -= f / (1.12837916709551257390 * exp(-x * x) + x * f);
    }
    return copysign(x, y);
}
/* The modified Bessel function I_nu (nu = 0, 1) of x >= 0, times exp(-x) when scaled: the
   power series up to 30, the asymptotic series beyond (exp(x) in two halves, so I0 stays
   finite as far as it can). */
TN_HD static inline double tn__bessel_i_f64(int nu, double x, bool scaled) {
    if (x != x) return x;
    if (x == INFINITY) return scaled ? 0 : NAN;   /* PyTorch's NaN (its exp(x) / sqrt(x) is inf / inf) */
    if (x <= 30) {
        const double q = 0.25 * x * x;
        double term = nu ? 0.5 * x : 1, sum = term;
        for (int k = 1; k < 200 && term > 1e-17 * sum; k++) {
            term *= q / ((double)k * (double)(k + nu));
            sum += term;
        }
        return scaled ? sum * exp(-x) : sum;
    }
    const double mu = 4.0 * nu * nu;
    double term = 1, sum = 1;
    for (int k = 1; k < 60; k++) {
        const double m = 2.0 * k - 1, t = term * (m * m - mu) / (8.0 * k * x);
        if (fabs(t) >= fabs(term) || fabs(t) < 1e-17 * fabs(sum)) break;
        term = t;
        sum += t;
    }
    sum /= sqrt(6.28318530717958647693 * x);
    if (scaled) return sum;
    const double h = exp(0.5 * x);
    return sum * h * h;
}
TN_HD static inline double tn_i0_f64(double x) { return tn__bessel_i_f64(0, fabs(x), false); }
TN_HD static inline double tn_i0e_f64(double x) { return tn__bessel_i_f64(0, fabs(x), true); }
TN_HD static inline double tn_i1_f64(double x) { return x < 0 ? -tn__bessel_i_f64(1, -x, false) : tn__bessel_i_f64(1, x, false); }
TN_HD static inline double tn_i1e_f64(double x) { return x < 0 ? -tn__bessel_i_f64(1, -x, true) : tn__bessel_i_f64(1, x, true); }
/* ---- torch.special: the normal distribution, Bessel and Airy functions, incomplete gamma ----
   Each is accurate to a few ulp over the whole range (relative where the value is not near a
   zero of an oscillating function, absolute there). */
/* exp(x^2) without the rounding of x^2: x = h + l with h^2 exact (|x| < 27) */
TN_HD static inline double tn__exp_sq_f64(double x) {
    const double h = floor(x * 4096 + 0.5) / 4096, l = x - h;
    return exp(h * h) * exp(l * (h + h + l));
}
/* exp(x^2) erfc(x): directly below 26, the asymptotic series above (erfc underflows) */
TN_HD static inline double tn__erfcx_pos_f64(double x) {
    if (x < 26) return tn__exp_sq_f64(x) * erfc(x);
    if (x > 1e8) return 0.56418958354775628695 / x;   /* 1 / (x sqrt(pi)) */
    const double r = 0.5 / (x * x);
    double term = 1, sum = 1;
    for (int k = 1; k < 14; k++) { term *= -(2 * k - 1) * r; sum += term; }
    return 0.56418958354775628695 / x * sum;
}
TN_HD static inline double tn_erfcx_f64(double x) {
    if (x != x) return x;
    if (x >= 0) return tn__erfcx_pos_f64(x);
    if (x < -26.7) return INFINITY;
    return 2 * tn__exp_sq_f64(x) - tn__erfcx_pos_f64(-x);
}
TN_HD static inline double tn_ndtr_f64(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
/* log ndtr(x): through erfcx below -1 (where ndtr underflows long before its log does) */
TN_HD static inline double tn_log_ndtr_f64(double x) {
    if (x < -1) { const double t = -x * 0.70710678118654752440; return log(0.5 * tn__erfcx_pos_f64(t)) - t * t; }
    return log1p(-0.5 * erfc(x * 0.70710678118654752440));
}
/* The inverse of ndtr: Acklam's rational first guess (relative error 1e-9), then two Halley
   steps on ndtr(x) - q, q = min(p, 1 - p) (1 - p is exact there). */
TN_HD static inline double tn_ndtri_f64(double p) {
    if (p != p || p < 0 || p > 1) return NAN;
    if (p == 0) return -INFINITY;
    if (p == 1) return INFINITY;
    const double q = p > 0.5 ? 1 - p : p;
    double x;
    if (q < 0.02425) {
        const double t = sqrt(-2 * log(q));
        x = (((((-7.784894002430293e-03 * t - 3.223964580411365e-01) * t - 2.400758277161838e+00) * t - 2.549732539343734e+00) * t
              + 4.374664141464968e+00) * t + 2.938163982698783e+00) /
            ((((7.784695709041462e-03 * t + 3.224671290700398e-01) * t + 2.445134137142996e+00) * t + 3.754408661907416e+00) * t + 1);
    } else {
        const double r = q - 0.5, t = r * r;
        x = (((((-3.969683028665376e+01 * t + 2.209460984245205e+02) * t - 2.759285104469687e+02) * t + 1.383577518672690e+02) * t
              - 3.066479806614716e+01) * t + 2.506628277459239e+00) * r /
            (((((-5.447609879822406e+01 * t + 1.615858368580409e+02) * t - 1.556989798598866e+02) * t + 6.680131188771972e+01) * t
              - 1.328068155288572e+01) * t + 1);
    }
    if (q < 1e-280) {   /* Newton on log ndtr(x) = log q: ndtr(x) and the pdf are subnormal here */
        const double lq = log(q);
        for (int k = 0; k < 3; k++) {
            const double l = tn_log_ndtr_f64(x);
            x -= (l - lq) / exp(-0.5 * x * x - 0.91893853320467274178 - l);
        }
        return x;
    }
    for (int k = 0; k < 2; k++) {
        const double pdf = 0.39894228040143267794 * exp(-0.5 * x * x);
        if (!(pdf > 0)) break;
        const double u = (tn_ndtr_f64(x) - q) / pdf;
        x -= u / (1 + 0.5 * x * u);
    }
    return p > 0.5 ? -x : x;
}
/* -x log x: 0 at 0, -inf below */
TN_HD static inline double tn_entr_f64(double x) {
    if (x != x) return x;
    return x > 0 ? -x * log(x) : x == 0 ? 0 : -INFINITY;
}
/* Bessel J0, J1, Y0, Y1 of x > 0 (which = 0, 1, 2, 3). Below 1 the power series; up to 20
   Miller's backward recurrence normalised by J0 + 2 sum J2k = 1, with Neumann's series for
   Y0 and Y1 (Y0 = 2/pi ((log(x/2) + gamma) J0 - 2 sum (-1)^k J2k / k), Y1 its derivative);
   beyond 20 Hankel's asymptotic expansion (its smallest term is below e^-2x). */
TN_HD static inline double tn__bessel_jy_f64(int which, double x) {
    const double twopi = 0.63661977236758134308, gam = 0.57721566490153286061;   /* 2/pi, Euler's */
    if (x > 20) {
        const int nu = which & 1;
        const double mu = 4.0 * nu;
        double P = 1, Q = 0, t = 1;
        for (int k = 1; k < 40; k++) {
            const double m = 2.0 * k - 1;
            t *= (mu - m * m) / (8.0 * k * x);
            const double s = (k % 4 == 1 || k % 4 == 0) ? t : -t;   /* (-1)^(k/2) even k, (-1)^((k-1)/2) odd */
            if (k & 1) Q += s; else P += s;
            if (fabs(t) < 1e-17) break;
        }
        const double c = cos(x), sn = sin(x);
        const double cc = nu ? sn - c : c + sn, ss = nu ? -sn - c : sn - c;   /* sqrt(2) cos, sin of x - (nu/2 + 1/4) pi */
        const double f = sqrt(twopi / x) * 0.70710678118654752440;
        return which < 2 ? f * (P * cc - Q * ss) : f * (P * ss + Q * cc);
    }
    const double lg = log(x) - 0.69314718055994530942 + gam;   /* log(x/2): x/2 underflows at the smallest x */
    if (x < 1) {
        const double q = -0.25 * x * x;
        double t0 = 1, j0 = 1, t1 = 1, j1 = 1, h = 0, y0 = 0, y1 = 1 - 2 * gam, psi = -gam;   /* psi(k+1) */
        for (int k = 1; k < 30; k++) {
            t0 *= q / ((double)k * k);
            t1 *= q / ((double)k * (k + 1));
            h += 1.0 / k;
            j0 += t0;
            j1 += t1;
            y0 -= h * t0;   /* (-1)^(k+1) H_k (x^2/4)^k / k!^2 = -H_k t0 */
            psi += 1.0 / k;
            y1 += (2 * psi + 1.0 / (k + 1)) * t1;
        }
        j1 *= 0.5 * x;
        if (which == 0) return j0;
        if (which == 1) return j1;
        if (which == 2) return twopi * (lg * j0 + y0);
        return -twopi / x + twopi * (lg - gam) * j1 - 0.25 * x * twopi * y1;
    }
    const int N = 2 * ((int)x / 2) + 40;
    double jp = 0, j = 1e-30, norm = 0, s0 = 0, s1 = 0, j1 = 0;
    for (int k = N; k >= 1; k--) {
        const double jm = 2.0 * k / x * j - jp;   /* J_{k-1} */
        jp = j;
        j = jm;
        const int m = k - 1;
        if (m > 0 && !(m & 1)) { norm += 2 * j; s0 += ((m / 2) & 1 ? -j : j) / (m / 2); }
        if (m & 1) {
            if (m == 1) j1 = j;
            else { const int h = (m - 1) / 2; s1 += ((h & 1) ? 1.0 : -1.0) * (2.0 * h + 1) / ((double)h * (h + 1)) * j; }
        }
        if (fabs(j) > 1e250) { j *= 1e-250; jp *= 1e-250; norm *= 1e-250; s0 *= 1e-250; s1 *= 1e-250; j1 *= 1e-250; }
    }
    norm += j;
    const double J0 = j / norm, J1 = j1 / norm;
    if (which == 0) return J0;
    if (which == 1) return J1;
    if (which == 2) return twopi * (lg * J0 - 2 * s0 / norm);
    return twopi * (lg * J1 - J0 / x - J1 + s1 / norm);
}
/* NaN at +-inf, as PyTorch's (its asymptotic form takes cos(inf)) */
TN_HD static inline double tn_bessel_j0_f64(double x) { return x != x || fabs(x) == INFINITY ? NAN : x == 0 ? 1 : tn__bessel_jy_f64(0, fabs(x)); }
TN_HD static inline double tn_bessel_j1_f64(double x) {
    if (x != x || fabs(x) == INFINITY) return NAN;
    if (x == 0) return x;
    return x < 0 ? -tn__bessel_jy_f64(1, -x) : tn__bessel_jy_f64(1, x);
}
TN_HD static inline double tn_bessel_y_f64(int nu, double x) {
    if (x != x) return x;
    if (x < 0) return NAN;
    if (x == 0) return -INFINITY;
    if (x == INFINITY) return NAN;
    return tn__bessel_jy_f64(2 + nu, x);
}
/* K_nu(x) e^x, x > 0: the trapezoidal rule on int_0^inf exp(-2 x sinh(t/2)^2) cosh(nu t) dt. The
   integrand is analytic in a strip and decays double-exponentially, so the rule converges
   geometrically: step 1/4 (the strip) or 1/(2 sqrt x) (the peak's width), error below 1e-17. */
TN_HD static inline double tn__bessel_k_scaled_f64(double nu, double x) {
    const double h = x > 4 ? 0.5 / sqrt(x) : 0.25;
    double s = 0.5;
    for (int k = 1; k < 4000; k++) {
        const double t = k * h, sh = sinh(0.5 * t), e = exp(-2 * x * sh * sh) * cosh(nu * t);
        s += e;
        if (e < 1e-18 * s) break;
    }
    return s * h;
}
/* K0, K1 (times e^x when scaled): the series in I0, I1 and log(x/2) up to 2, the integral above */
TN_HD static inline double tn_bessel_k_f64(int nu, double x, bool scaled) {
    if (x != x) return x;
    if (x < 0) return NAN;
    if (x == 0) return INFINITY;
    if (x == INFINITY) return 0;
    if (x > 2) { const double k = tn__bessel_k_scaled_f64(nu, x); return scaled ? k : k * exp(-x); }
    const double q = 0.25 * x * x, lg = log(x) - 0.69314718055994530942, gam = 0.57721566490153286061;
    double r;
    if (nu == 0) {
        double t = 1, h = 0, s = 0;
        for (int k = 1; k < 30; k++) { t *= q / ((double)k * k); h += 1.0 / k; s += h * t; }
        r = -(lg + gam) * tn_i0_f64(x) + s;
    } else {
        double t = 1, psi = -gam, s = 1 - 2 * gam;   /* psi(k+1) + psi(k+2) over k! (k+1)! */
        for (int k = 1; k < 30; k++) { t *= q / ((double)k * (k + 1)); psi += 1.0 / k; s += (2 * psi + 1.0 / (k + 1)) * t; }
        r = 1 / x + lg * tn_i1_f64(x) - 0.25 * x * s;
    }
    return scaled ? r * exp(x) : r;
}
TN_HD static inline double tn_spherical_bessel_j0_f64(double x) {
    if (x != x) return x;
    if (fabs(x) == INFINITY) return 0;
    if (fabs(x) < 0.5) { const double z = x * x; return 1 - z / 6 * (1 - z / 20 * (1 - z / 42 * (1 - z / 72 * (1 - z / 110 * (1 - z / 156))))); }
    return sin(x) / x;
}
/* Double-double arithmetic (value hi + lo) for the Airy series, which cancels ~10 digits. */
typedef struct tn__dd { double hi, lo; } tn__dd;
TN_HD static inline tn__dd tn__dd_norm(double a, double b) { tn__dd r; r.hi = a + b; r.lo = b - (r.hi - a); return r; }
TN_HD static inline tn__dd tn__dd_add(tn__dd a, tn__dd b) {
    const double s = a.hi + b.hi, v = s - a.hi, e = (a.hi - (s - v)) + (b.hi - v);
    return tn__dd_norm(s, e + a.lo + b.lo);
}
TN_HD static inline tn__dd tn__dd_mul(tn__dd a, tn__dd b) {
    const double p = a.hi * b.hi, e = fma(a.hi, b.hi, -p);
    return tn__dd_norm(p, e + a.hi * b.lo + a.lo * b.hi);
}
TN_HD static inline tn__dd tn__dd_div_d(tn__dd a, double d) {
    const double q = a.hi / d, p = q * d, e = fma(q, d, -p);
    return tn__dd_norm(q, ((a.hi - p) - e + a.lo) / d);
}
/* Airy Ai: the Maclaurin series Ai(0) f(x) + Ai'(0) g(x) in double-double on [-10.5, 1];
   sqrt(x/3) K_1/3(2/3 x^1.5) / pi above; the asymptotic expansion (DLMF 9.7.9) below. */
TN_HD static inline double tn_airy_ai_f64(double x) {
    if (x != x) return x;
    if (x == INFINITY) return 0;
    if (x == -INFINITY) return NAN;   /* PyTorch's */
    if (x > 1) {
        const double z = 2.0 / 3.0 * x * sqrt(x);
        if (z > 745) return 0;
        return sqrt(x / 3) * 0.31830988618379067154 * tn__bessel_k_scaled_f64(1.0 / 3.0, z) * exp(-z);
    }
    if (x >= -10.5) {
        const tn__dd c1 = {0.3550280538878172, 2.05233632436212e-17}, c2 = {-0.2588194037928068, 2.522243111610832e-17};   /* Ai(0), Ai'(0) */
        tn__dd x2 = tn__dd_norm(x * x, fma(x, x, -x * x)), x3 = tn__dd_mul(x2, tn__dd_norm(x, 0));
        tn__dd f = {1, 0}, g = {x, 0}, tf = {1, 0}, tg = {x, 0};
        for (int k = 1; k < 80; k++) {
            tf = tn__dd_div_d(tn__dd_mul(tf, x3), (3.0 * k - 1) * (3.0 * k));
            tg = tn__dd_div_d(tn__dd_mul(tg, x3), (3.0 * k) * (3.0 * k + 1));
            f = tn__dd_add(f, tf);
            g = tn__dd_add(g, tg);
            if (fabs(tf.hi) + fabs(tg.hi) < 1e-33) break;
        }
        const tn__dd r = tn__dd_add(tn__dd_mul(c1, f), tn__dd_mul(c2, g));
        return r.hi + r.lo;
    }
    /* zeta = 2/3 z^1.5 in double-double: its rounding would shift the phase by eps zeta */
    const double z = -x, sq = sqrt(z);
    const tn__dd zd = tn__dd_div_d(tn__dd_mul(tn__dd_norm(z + z, 0), tn__dd_norm(sq, fma(-sq, sq, z) / (sq + sq))), 3);
    const double zeta = zd.hi;
    double P = 1, Q = 0, u = 1, pw = 1;
    for (int k = 1; k < 30; k++) {
        u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
        pw /= zeta;
        const double t = u * pw, s = (k % 4 == 1 || k % 4 == 0) ? t : -t;
        if (k & 1) Q += s; else P += s;
        if (t < 1e-17) break;
    }
    const double c0 = cos(zeta), s0 = sin(zeta), cl = cos(zd.lo), sl = sin(zd.lo);   /* of zeta + lo (lo is large for huge zeta) */
    const double c = c0 * cl - s0 * sl, sn = s0 * cl + c0 * sl;   /* cos(zeta - pi/4) = (c + sn)/sqrt 2 */
    return 0.56418958354775628695 * 0.70710678118654752440 / sqrt(sqrt(z)) * (P * (c + sn) + Q * (sn - c));
}
/* log(x^a e^-x / Gamma(a)): by Stirling's series with log1p(u) - u, u = (x - a)/a, for a >= 10,
   which keeps its digits for large a near x */
TN_HD static inline double tn__igam_logfac_f64(double a, double x) {
    if (a < 10) return a * log(x) - x - tn_lgamma_f64(a);
    const double u = (x - a) / a;
    double l;
    if (fabs(u) < 0.25) {
        double pw = u * u;
        l = 0;
        for (int n = 2; n < 40; n++) { l += (n & 1 ? pw : -pw) / n; pw *= u; if (fabs(pw) < 1e-18 * fabs(l)) break; }
    } else {
        l = log1p(u) - u;
    }
    const double z = 1 / (a * a), corr = (1.0 / 12 - z * (1.0 / 360 - z * (1.0 / 1260 - z / 1680))) / a;
    return a * l + 0.5 * log(a) - 0.91893853320467274178 - corr;
}
/* The regularised lower (upper = false) or upper incomplete gamma function: the series for P
   below x = a + 1, Legendre's continued fraction (modified Lentz) for Q above; SciPy's values
   on the edges (a or x zero or infinite). */
TN_HD static inline double tn_igamma_f64(double a, double x, bool upper) {
    if (a < 0 || x < 0) return NAN;
    if (a == 0) return x > 0 ? (upper ? 0 : 1) : NAN;
    if (x == 0) return upper ? 1 : 0;   /* before the NaN test, as in PyTorch */
    if (a == INFINITY) return x == INFINITY ? NAN : (upper ? 1 : 0);
    if (x == INFINITY) return upper ? 0 : 1;
    if (a != a || x != x) return NAN;
    const int iters = 1000 + (int)fmin(5e7, 50 * sqrt(a));   /* both converge in O(sqrt a) steps near x = a */
    if (upper && x <= 1.1 && (x <= 0.5 ? !(-0.4 / log(x) < a) : !(x * 1.1 < a))) {
        /* Q = 1 - x^a / Gamma(a + 1) - x^a / Gamma(a) sum_n>=1 (-x)^n / (n! (a + n)) (DLMF 8.7.1), with the
           first difference by expm1: 1 - P would cancel for small a (SciPy's choice of region) */
        double fac = 1, s = 0;
        for (int n = 1; n < 200; n++) { fac *= -x / n; const double t = fac / (a + n); s += t; if (fabs(t) <= 1e-17 * fabs(s)) break; }
        const double lx = log(x);
        return -expm1(a * lx - tn_lgamma_f64(a + 1)) - exp(a * lx - tn_lgamma_f64(a)) * s;
    }
    if (x < a + 1) {   /* x^a e^-x / Gamma(a + 1) sum x^n / ((a + 1) ... (a + n)): no 1/a for the tiniest a */
        const double lf1 = a < 10 ? a * log(x) - x - tn_lgamma_f64(a + 1) : tn__igam_logfac_f64(a, x) - log(a);
        double t = 1, s = 1;
        for (int n = 1; n < iters; n++) { t *= x / (a + n); s += t; if (t < 1e-17 * s) break; }
        const double p = exp(lf1) * s;
        return upper ? 1 - p : p;
    }
    const double lf = tn__igam_logfac_f64(a, x);
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < iters; i++) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        const double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16) break;
    }
    const double q = exp(lf) * h;
    return upper ? q : 1 - q;
}
/* gcd of magnitudes (Euclid); the integer kernels pass |a|, |b| in their unsigned type */
TN_HD static inline uint64_t tn_gcd_u64(uint64_t a, uint64_t b) {
    while (a) { const uint64_t c = a; a = b % a; b = c; }
    return b;
}
/* Formulas in the kernel's float type T (math functions with suffix F). */
/* @template TN__DEFINE_ELEMENTWISE(T, S, F) */
TN_HD static inline T tn_sinc_##S(T x) {
    if (x == 0) return (T)1;
    const T p = (T)3.14159265358979323846 * x;
    return sin##F(p) / p; }
TN_HD static inline T tn_logit_##S(T x, T eps) {
    const T z = eps < 0 ? x : x < eps ? eps : x > (T)1 - eps ? (T)1 - eps : x;
    return log##F(z / ((T)1 - z)); }
/* max(a, b) + log1p(exp(-|a - b|)); equal infinities give themselves */
TN_HD static inline T tn_logaddexp_##S(T a, T b) {
    if ((a == (T)INFINITY || a == -(T)INFINITY) && a == b) return a;
    return (a < b ? b : a) + log1p##F(exp##F(-fabs##F(a - b))); }
TN_HD static inline T tn_logaddexp2_##S(T a, T b) {
    if ((a == (T)INFINITY || a == -(T)INFINITY) && a == b) return a;
    return (a < b ? b : a) + log1p##F(exp2##F(-fabs##F(a - b))) * (T)1.44269504088896340736; }
TN_HD static inline T tn_xlogy_##S(T x, T y) { return y != y ? y : x == 0 ? (T)0 : x * log##F(y); }
TN_HD static inline T tn_xlog1py_##S(T x, T y) { return y != y ? y : x == 0 ? (T)0 : x * log1p##F(y); }
TN_HD static inline T tn_heaviside_##S(T x, T values) { return x == 0 ? values : (T)(x > 0); }
/* polygamma(1, x): zeta(2, x), by reflection below 0.5 with sin(pi x) in T as PyTorch computes
   it, so that both give the same (huge, finite) values at the poles */
TN_HD static inline T tn_trigamma_##S(T x) {
    if (x == (T)INFINITY) return (T)0;
    if (!(x < (T)0.5)) return (T)tn_zeta_f64(2, (double)x);
    const T s = sin##F((T)3.14159265358979323846 * x);
    return (T)3.14159265358979323846 * (T)3.14159265358979323846 / (s * s) - (T)tn_zeta_f64(2, 1 - (double)x); }
/* torch.special's orthogonal polynomials of degree n (n truncated; 0 for n < 0): the
   three-term recurrences, with the trigonometric forms for large n inside (-1, 1). The
   kernels use the double form for float32 too (PyTorch's float recurrences lose digits). kind: 0-3 Chebyshev
   T, U, V, W; 4, 5 Hermite H, He; 6 Laguerre L; 7 Legendre P. */
TN_HD static inline T tn_orthopoly_##S(int kind, T x, T nf) {
    /* PyTorch's int64 cast of a NaN or huge n is INT64_MIN (x86): a negative degree, 0 */
    const int64_t n = nf != nf || nf < (T)-1 || nf > (T)9.2e18 ? -1 : (int64_t)nf;
    if (n < 0) return (T)0;
    const bool odd = (n & 1) != 0, unit = fabs##F(x) == (T)1;
    const T nn = (T)n;
    if (kind <= 3 && unit) {
        if (kind == 0) return x > 0 || !odd ? (T)1 : (T)-1;
        if (kind == 1) return x > 0 || !odd ? nn + 1 : -(nn + 1);
        if (kind == 2) return x > 0 ? (T)1 : !odd ? nn + nn + 1 : -(nn + nn + 1);
        return x > 0 ? nn + nn + 1 : !odd ? (T)1 : (T)-1;
    }
    if (kind <= 3 && n > (kind == 0 ? 6 : 8) && fabs##F(x) < (T)1) {
        const T th = acos##F(x);
        if (kind == 0) return cos##F(nn * th);
        if (kind == 1) { const T s = sin##F(th); return s != 0 ? sin##F((nn + 1) * th) / s : (nn + 1) * cos##F((nn + 1) * th) / x; }
        if (kind == 2) return sin##F(th / 2) != (T)1 ? cos##F((nn + (T)0.5) * th) / cos##F(th / 2) : !odd ? nn + nn + 1 : -(nn + nn + 1);
        return cos##F(th / 2) != (T)1 ? sin##F((nn + (T)0.5) * th) / sin##F(th / 2) : x > 0 ? nn + nn + 1 : !odd ? (T)1 : (T)-1;
    }
    if (kind == 7 && unit) return x > 0 || !odd ? (T)1 : (T)-1;
    if (kind == 6 && x == 0) return (T)1;
    if (n == 0) return (T)1;
    T p = 1, q;
    switch (kind) {
    case 0: case 5: case 7: q = x; break;
    case 1: case 4: q = x + x; break;
    case 2: q = x + x - 1; break;
    case 3: q = x + x + 1; break;
    default: q = 1 - x; break;
    }
    for (int64_t k = 1; k < n && q == q; k++) {   /* q = P_k; once NaN it stays NaN */
        const T kk = (T)k;
        T r;
        switch (kind) {
        case 4: r = (x + x) * q - (kk + kk) * p; break;
        case 5: r = x * q - kk * p; break;
        case 6: r = ((kk + kk + 1 - x) * q - kk * p) / (kk + 1); break;
        case 7: r = ((kk + kk + 1) * x * q - kk * p) / (kk + 1); break;
        default: r = (x + x) * q - p; break;
        }
        p = q;
        q = r;
    }
    return q; }
/* @end TN__DEFINE_ELEMENTWISE */
TN__DEFINE_ELEMENTWISE(float, f32, f)
TN__DEFINE_ELEMENTWISE(double, f64, )

/* ======================================================================= */
/* 8. reductions                                                            */
/* ======================================================================= */
/* Forms without dims reduce all elements to a 0-d tensor. dims lists may hold negative
   dims; TN_DIMS(0, 2) writes (dims, n). Sums and products of integers and bools give
   int64; mean, var, std, norm and logsumexp need floating input. */
/* The _dims forms of sum, mean, nansum, nanmean and prod take torch.sum's keywords:
   keepdim=False, dtype=None (-1; else x is cast to it first, and a sum's or product's result
   is in it, wrapping as PyTorch's arithmetic in that dtype): tn_sum_dims(x, TN_DIMS(0),
   .keepdim = true), tn_mean_dims(x, dims, n, .dtype = TN_F64). */
#define TN_FIELDS_tn_sum_fn_opts(X) \
    X(B, keepdim, false, "") \
    X(E, dtype,   -1,    "float32|float64|int32|int64|uint8|bool|float16|bfloat16|int8|int16|complex64|complex128")
TN__KW_STRUCT(tn_sum_fn_opts);
TNDEF tn_tensor *tn_sum(tn_tensor *x);
TNDEF tn_tensor *tn_sum_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts opts);
#define tn_sum_dims(x, ...) tn__sum_dims(x, __VA_ARGS__)
#define tn__sum_dims(x, dims, ...) tn_sum_dims_opts(x, dims, TN__POS_KW(tn_sum_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_sum_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_mean(tn_tensor *x);
TNDEF tn_tensor *tn_mean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts opts);
#define tn_mean_dims(x, ...) tn__mean_dims(x, __VA_ARGS__)
#define tn__mean_dims(x, dims, ...) tn_mean_dims_opts(x, dims, TN__POS_KW(tn_sum_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_mean_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
/* sum and mean over the elements that are not NaN (nanmean: floating input; NaN where all are). */
TNDEF tn_tensor *tn_nansum(tn_tensor *x);
TNDEF tn_tensor *tn_nansum_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts opts);
#define tn_nansum_dims(x, ...) tn__nansum_dims(x, __VA_ARGS__)
#define tn__nansum_dims(x, dims, ...) tn_nansum_dims_opts(x, dims, TN__POS_KW(tn_sum_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_nansum_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_nanmean(tn_tensor *x);
TNDEF tn_tensor *tn_nanmean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts opts);
#define tn_nanmean_dims(x, ...) tn__nanmean_dims(x, __VA_ARGS__)
#define tn__nanmean_dims(x, dims, ...) tn_nanmean_dims_opts(x, dims, TN__POS_KW(tn_sum_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_nanmean_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_prod(tn_tensor *x);
TNDEF tn_tensor *tn_prod_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_sum_fn_opts opts);
#define tn_prod_dims(x, ...) tn__prod_dims(x, __VA_ARGS__)
#define tn__prod_dims(x, dims, ...) tn_prod_dims_opts(x, dims, TN__POS_KW(tn_sum_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_prod_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
/* torch.amax / amin over dims (n = 0: all): tn_amax(x, TN_DIMS(1), .keepdim = true). Their
   one keyword, keepdim=False, is also that of max_dim, min_dim, logsumexp, all_dim, any_dim. */
#define TN_FIELDS_tn_keepdim_fn_opts(X) \
    X(B, keepdim, false, "")
TN__KW_STRUCT(tn_keepdim_fn_opts);
TNDEF tn_tensor *tn_amax_opts(tn_tensor *x, const int64_t *dims, int n, tn_keepdim_fn_opts opts);
#define tn_amax(x, ...) tn__amax(x, __VA_ARGS__)
#define tn__amax(x, dims, ...) tn_amax_opts(x, dims, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_amax_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_amin_opts(tn_tensor *x, const int64_t *dims, int n, tn_keepdim_fn_opts opts);
#define tn_amin(x, ...) tn__amin(x, __VA_ARGS__)
#define tn__amin(x, dims, ...) tn_amin_opts(x, dims, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_amin_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_max(tn_tensor *x);          /* 0-d; NaN propagates; error on an empty tensor */
TNDEF tn_tensor *tn_min(tn_tensor *x);
/* torch.argmax / argmin's and torch.aminmax's keywords: dim=None (TN_NONE: every dim, the
   index into the flattened tensor; with keepdim, of shape all ones), keepdim=False. */
#define TN_FIELDS_tn_argmax_fn_opts(X) \
    X(I, dim,     TN_NONE, "") \
    X(B, keepdim, false,   "")
TN__KW_STRUCT(tn_argmax_fn_opts);
/* amin and amax in one call: returns the min, the max goes to *max (the result's ownership
   rule): tn_aminmax(x, &max, .dim = 0). Every dim (dim None) is an error on an empty tensor. */
TNDEF tn_tensor *tn_aminmax_opts(tn_tensor *x, tn_tensor **max, tn_argmax_fn_opts opts);
#define tn_aminmax(x, ...) tn_aminmax_opts(x, TN__POS_KW(tn_argmax_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_aminmax_str(tn_tensor *x, tn_tensor **max, const char *options);
/* Values and (if indices != NULL) int64 indices of the first extreme along dim (torch.max(x,
   dim, keepdim=False)): tn_max_dim(x, 1, &idx, .keepdim = true); *indices follows the same
   ownership rule as the result. */
TNDEF tn_tensor *tn_max_dim_opts(tn_tensor *x, int64_t dim, tn_tensor **indices, tn_keepdim_fn_opts opts);
#define tn_max_dim(x, ...) tn__max_dim(x, __VA_ARGS__)
#define tn__max_dim(x, dim, ...) tn_max_dim_opts(x, dim, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_max_dim_str(tn_tensor *x, int64_t dim, tn_tensor **indices, const char *options);
TNDEF tn_tensor *tn_min_dim_opts(tn_tensor *x, int64_t dim, tn_tensor **indices, tn_keepdim_fn_opts opts);
#define tn_min_dim(x, ...) tn__min_dim(x, __VA_ARGS__)
#define tn__min_dim(x, dim, ...) tn_min_dim_opts(x, dim, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_min_dim_str(tn_tensor *x, int64_t dim, tn_tensor **indices, const char *options);
TNDEF tn_tensor *tn_argmax(tn_tensor *x);       /* index into the flattened tensor */
TNDEF tn_tensor *tn_argmin(tn_tensor *x);
/* torch.argmax(x, dim=None, keepdim=False): tn_argmax_dim(x, .dim = 1). */
TNDEF tn_tensor *tn_argmax_dim_opts(tn_tensor *x, tn_argmax_fn_opts opts);
#define tn_argmax_dim(...) tn_argmax_dim_opts(TN__POS_KW(tn_argmax_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_argmax_dim_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_argmin_dim_opts(tn_tensor *x, tn_argmax_fn_opts opts);
#define tn_argmin_dim(...) tn_argmin_dim_opts(TN__POS_KW(tn_argmax_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_argmin_dim_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_count_nonzero(tn_tensor *x, const int64_t *dims, int n); /* int64; n = 0: all dims */
/* var / std over every element (tn_var) or over dims (n = 0: all), torch.var(x, dim=None, *,
   correction=1, keepdim=False): tn_var(x, .correction = 0), tn_std_dims(x, TN_DIMS(1),
   .keepdim = true). .unbiased (-1: not given) is torch's older keyword (false: correction 0),
   an error beside a correction other than 1. Floating or complex x; complex x gives a real
   result, the variance of |x - mean|, as PyTorch. */
#define TN_FIELDS_tn_var_fn_opts(X) \
    X(I,  correction, 1,     "") \
    X(B,  keepdim,    false, "") \
    X(OB, unbiased,   -1,    "")
TN__KW_STRUCT(tn_var_fn_opts);
TNDEF tn_tensor *tn_var_opts(tn_tensor *x, tn_var_fn_opts opts);
#define tn_var(...) tn_var_opts(TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_var_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_var_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_var_fn_opts opts);
#define tn_var_dims(x, ...) tn__var_dims(x, __VA_ARGS__)
#define tn__var_dims(x, dims, ...) tn_var_dims_opts(x, dims, TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_var_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_std_opts(tn_tensor *x, tn_var_fn_opts opts);
#define tn_std(...) tn_std_opts(TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_std_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_std_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_var_fn_opts opts);
#define tn_std_dims(x, ...) tn__std_dims(x, __VA_ARGS__)
#define tn__std_dims(x, dims, ...) tn_std_dims_opts(x, dims, TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_std_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
/* var_mean / std_mean: var (std) and the mean over the same dims (n = 0: all), the mean in
   *mean (the result's ownership rule; NULL: not wanted): tn_var_mean_dims(x, TN_DIMS(0), &m,
   .correction = 0). Floating or complex x (the mean complex, the var real). */
TNDEF tn_tensor *tn_var_mean_opts(tn_tensor *x, tn_tensor **mean, tn_var_fn_opts opts);
#define tn_var_mean(x, ...) tn_var_mean_opts(x, TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_var_mean_str(tn_tensor *x, tn_tensor **mean, const char *options);
TNDEF tn_tensor *tn_var_mean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, tn_var_fn_opts opts);
#define tn_var_mean_dims(x, ...) tn__var_mean_dims(x, __VA_ARGS__)
#define tn__var_mean_dims(x, dims, n, ...) tn_var_mean_dims_opts(x, dims, n, TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_var_mean_dims_str(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, const char *options);
TNDEF tn_tensor *tn_std_mean_opts(tn_tensor *x, tn_tensor **mean, tn_var_fn_opts opts);
#define tn_std_mean(x, ...) tn_std_mean_opts(x, TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_std_mean_str(tn_tensor *x, tn_tensor **mean, const char *options);
TNDEF tn_tensor *tn_std_mean_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, tn_var_fn_opts opts);
#define tn_std_mean_dims(x, ...) tn__std_mean_dims(x, __VA_ARGS__)
#define tn__std_mean_dims(x, dims, n, ...) tn_std_mean_dims_opts(x, dims, n, TN__POS_KW(tn_var_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_std_mean_dims_str(tn_tensor *x, const int64_t *dims, int n, tn_tensor **mean, const char *options);
/* Vector p-norm of every element (tn_norm) or over dims, torch.norm(x, p='fro', dim=None,
   keepdim=False, dtype=None): .p = 2 (also 'fro': the 2-norm of the elements), INFINITY,
   -INFINITY, 0 (the count of nonzeros), any p; .dtype (-1: None) casts x first:
   tn_norm(x, .p = 1), tn_norm_dims(x, TN_DIMS(1), .p = INFINITY, .keepdim = true). Complex x
   gives the real norm of |x|. */
#define TN_FIELDS_tn_norm_fn_opts(X) \
    X(D, p,       2,     "") \
    X(B, keepdim, false, "") \
    X(E, dtype,   -1,    "float32|float64|int32|int64|uint8|bool|float16|bfloat16|int8|int16|complex64|complex128")
TN__KW_STRUCT(tn_norm_fn_opts);
TNDEF tn_tensor *tn_norm_opts(tn_tensor *x, tn_norm_fn_opts opts);
#define tn_norm(...) tn_norm_opts(TN__POS_KW(tn_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_norm_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_norm_dims_opts(tn_tensor *x, const int64_t *dims, int n, tn_norm_fn_opts opts);
#define tn_norm_dims(x, ...) tn__norm_dims(x, __VA_ARGS__)
#define tn__norm_dims(x, dims, ...) tn_norm_dims_opts(x, dims, TN__POS_KW(tn_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_norm_dims_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
/* Tensor.renorm: each slice along dim whose p-norm (over the other dims) exceeds maxnorm scaled
   by maxnorm / (norm + 1e-7); at least 2 dims, p > 0, maxnorm >= 0, floating x. */
TNDEF tn_tensor *tn_renorm(tn_tensor *x, double p, int64_t dim, double maxnorm);
/* Tensor.sum_to_size: x summed down to shape, which x's shape must expand from (the
   gradient of a broadcast). */
TNDEF tn_tensor *tn_sum_to_size(tn_tensor *x, const int64_t *shape, int ndim);
/* torch.trapezoid / cumulative_trapezoid: the trapezoid rule along .dim (default -1) of y
   sampled at .x (a tensor: 1-d of y's size along dim, or broadcasting with y) or spaced .dx
   apart (NAN: None, spacing 1); x and dx not both. trapezoid of an empty dim is 0. PyTorch's
   formulas (sum(y) - (y_0 + y_n) / 2) dx and sum((y_i + y_i+1) dx_i) / 2, cumulative ones
   cumsum((dx / 2) (y_i + y_i+1)); bool y is refused. */
#define TN_FIELDS_tn_trapezoid_fn_opts(X) \
    X(T, x,   NULL, "") \
    X(D, dx,  NAN,  "") \
    X(I, dim, -1,   "")
TN__KW_STRUCT(tn_trapezoid_fn_opts);
TNDEF tn_tensor *tn_trapezoid_opts(tn_tensor *y, tn_trapezoid_fn_opts opts);
#define tn_trapezoid(...) tn_trapezoid_opts(TN__POS_KW(tn_trapezoid_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_trapezoid_str(tn_tensor *y, const char *options);
TNDEF tn_tensor *tn_cumulative_trapezoid_opts(tn_tensor *y, tn_trapezoid_fn_opts opts);
#define tn_cumulative_trapezoid(...) tn_cumulative_trapezoid_opts(TN__POS_KW(tn_trapezoid_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cumulative_trapezoid_str(tn_tensor *y, const char *options);
/* torch.logsumexp(x, dim, keepdim=False): tn_logsumexp(x, TN_DIMS(1), .keepdim = true). */
TNDEF tn_tensor *tn_logsumexp_opts(tn_tensor *x, const int64_t *dims, int n, tn_keepdim_fn_opts opts);
#define tn_logsumexp(x, ...) tn__logsumexp(x, __VA_ARGS__)
#define tn__logsumexp(x, dims, ...) tn_logsumexp_opts(x, dims, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_logsumexp_str(tn_tensor *x, const int64_t *dims, int n, const char *options);
TNDEF tn_tensor *tn_cumsum(tn_tensor *x, int64_t dim);
TNDEF tn_tensor *tn_cumprod(tn_tensor *x, int64_t dim);
/* Running max / min along dim and the index where it was reached (a NaN, and a value equal to
   the running one, take over: the last such index, as PyTorch). */
TNDEF tn_tensor *tn_cummax(tn_tensor *x, int64_t dim, tn_tensor **indices);
TNDEF tn_tensor *tn_cummin(tn_tensor *x, int64_t dim, tn_tensor **indices);
TNDEF tn_tensor *tn_logcumsumexp(tn_tensor *x, int64_t dim);   /* log(cumsum(exp(x))) without overflow; floating */
TNDEF tn_tensor *tn_all(tn_tensor *x);          /* bool 0-d (uint8 for a uint8 x, as PyTorch) */
TNDEF tn_tensor *tn_any(tn_tensor *x);
/* torch.all(x, dim, keepdim=False): tn_all_dim(x, 1, .keepdim = true). */
TNDEF tn_tensor *tn_all_dim_opts(tn_tensor *x, int64_t dim, tn_keepdim_fn_opts opts);
#define tn_all_dim(x, ...) tn_all_dim_opts(x, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_all_dim_str(tn_tensor *x, int64_t dim, const char *options);
TNDEF tn_tensor *tn_any_dim_opts(tn_tensor *x, int64_t dim, tn_keepdim_fn_opts opts);
#define tn_any_dim(x, ...) tn_any_dim_opts(x, TN__POS_KW(tn_keepdim_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_any_dim_str(tn_tensor *x, int64_t dim, const char *options);
/* Sorted values along .dim (NaN counts as largest); indices (NULL: not wanted) as in
   tn_max_dim: tn_sort(x, &idx, .descending = true). torch.sort's keywords: dim=-1,
   descending=False, stable=False: equal values come in PyTorch's CPU order (its std::sort's;
   on CUDA the device's), in input order with .stable = true. argsort: the indices alone
   (tn_argsort(x, .dim = 0)). */
#define TN_FIELDS_tn_sort_fn_opts(X) \
    X(I, dim,        -1,    "") \
    X(B, descending, false, "") \
    X(B, stable,     false, "")
TN__KW_STRUCT(tn_sort_fn_opts);
TNDEF tn_tensor *tn_sort_opts(tn_tensor *x, tn_tensor **indices, tn_sort_fn_opts opts);
#define tn_sort(x, ...) tn_sort_opts(x, TN__POS_KW(tn_sort_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_sort_str(tn_tensor *x, tn_tensor **indices, const char *options);
TNDEF tn_tensor *tn_argsort_opts(tn_tensor *x, tn_sort_fn_opts opts);
#define tn_argsort(...) tn_argsort_opts(TN__POS_KW(tn_sort_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_argsort_str(tn_tensor *x, const char *options);
/* The k largest (or smallest) along .dim, sorted; indices (NULL: not wanted) as in tn_sort:
   tn_topk(x, k, &idx, .largest = false). torch.topk's keywords: dim=-1, largest=True,
   sorted=True (the result is always sorted, one of the orders sorted=False allows). */
#define TN_FIELDS_tn_topk_fn_opts(X) \
    X(I, dim,     -1,   "") \
    X(B, largest, true, "") \
    X(B, sorted,  true, "")
TN__KW_STRUCT(tn_topk_fn_opts);
TNDEF tn_tensor *tn_topk_opts(tn_tensor *x, int64_t k, tn_tensor **indices, tn_topk_fn_opts opts);
#define tn_topk(x, k, ...) tn_topk_opts(x, k, TN__POS_KW(tn_topk_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_topk_str(tn_tensor *x, int64_t k, tn_tensor **indices, const char *options);
/* Medians: the lower of the two middle values (PyTorch's convention). median is NaN where
   a NaN is in the lane (its index that of the first NaN), nanmedian skips NaNs (NaN where
   all are). The forms without dim give a 0-d value (NaN for an empty tensor) whose
   gradient is shared by the elements equal to it; the dim forms give values and int64
   indices as tn_max_dim: tn_median_dim(x, &idx, .dim = 0). Not for bool, as PyTorch.
   torch.median's, nanmedian's, mode's and kthvalue's keywords: dim=-1, keepdim=False. */
#define TN_FIELDS_tn_median_fn_opts(X) \
    X(I, dim,     -1,    "") \
    X(B, keepdim, false, "")
TN__KW_STRUCT(tn_median_fn_opts);
TNDEF tn_tensor *tn_median(tn_tensor *x);
TNDEF tn_tensor *tn_median_dim_opts(tn_tensor *x, tn_tensor **indices, tn_median_fn_opts opts);
#define tn_median_dim(x, ...) tn_median_dim_opts(x, TN__POS_KW(tn_median_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_median_dim_str(tn_tensor *x, tn_tensor **indices, const char *options);
TNDEF tn_tensor *tn_nanmedian(tn_tensor *x);
TNDEF tn_tensor *tn_nanmedian_dim_opts(tn_tensor *x, tn_tensor **indices, tn_median_fn_opts opts);
#define tn_nanmedian_dim(x, ...) tn_nanmedian_dim_opts(x, TN__POS_KW(tn_median_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_nanmedian_dim_str(tn_tensor *x, tn_tensor **indices, const char *options);
/* The k-th smallest (1-based, NaN largest) along .dim, with its index: tn_kthvalue(x, 2, &idx). */
TNDEF tn_tensor *tn_kthvalue_opts(tn_tensor *x, int64_t k, tn_tensor **indices, tn_median_fn_opts opts);
#define tn_kthvalue(x, k, ...) tn_kthvalue_opts(x, k, TN__POS_KW(tn_median_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_kthvalue_str(tn_tensor *x, int64_t k, tn_tensor **indices, const char *options);
/* The most frequent value along .dim (the smallest of equally frequent ones; NaNs are all
   different) and the index of its last occurrence. Ties between occurrences are
   unspecified in PyTorch (its sort is unstable): here always the last. */
TNDEF tn_tensor *tn_mode_opts(tn_tensor *x, tn_tensor **indices, tn_median_fn_opts opts);
#define tn_mode(x, ...) tn_mode_opts(x, TN__POS_KW(tn_median_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_mode_str(tn_tensor *x, tn_tensor **indices, const char *options);
TNDEF tn_tensor *tn_msort(tn_tensor *x);   /* sorted along dim 0 */
/* quantile / nanquantile of x at q (a 0-d or 1-d tensor of x's dtype, or a wrapped scalar,
   values in [0, 1]; a 1-d q adds a leading dim) over dim (TN_NONE: all elements) with
   PyTorch's interpolation between the two nearest ranks; x float32 or float64, not empty.
   quantile is NaN where the lane has a NaN; nanquantile ranks the other values only. */
typedef enum tn_interpolation {
    TN_INTERPOLATION_LINEAR = 0, TN_INTERPOLATION_LOWER, TN_INTERPOLATION_HIGHER, TN_INTERPOLATION_MIDPOINT, TN_INTERPOLATION_NEAREST
} tn_interpolation;
#define TN_FIELDS_tn_quantile_fn_opts(X) \
    X(I, dim,           TN_NONE, "") \
    X(B, keepdim,       false,   "") \
    X(E, interpolation, TN_INTERPOLATION_LINEAR, "linear|lower|higher|midpoint|nearest")
TN__KW_STRUCT(tn_quantile_fn_opts);
TNDEF tn_tensor *tn_quantile_opts(tn_tensor *x, tn_tensor *q, tn_quantile_fn_opts opts);
#define tn_quantile(x, ...) tn_quantile_opts(x, TN__POS_KW(tn_quantile_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_quantile_str(tn_tensor *x, tn_tensor *q, const char *options);
TNDEF tn_tensor *tn_nanquantile_opts(tn_tensor *x, tn_tensor *q, tn_quantile_fn_opts opts);
#define tn_nanquantile(x, ...) tn_nanquantile_opts(x, TN__POS_KW(tn_quantile_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_nanquantile_str(tn_tensor *x, tn_tensor *q, const char *options);
/* searchsorted: for each value, the index in sorted_sequence (1-d, or the values' leading
   dims then the sorted one) where it would be inserted to keep it sorted: before equal
   elements, or after them with right (or side "right"; side NULL: None). sorter (int64, the
   sequence's shape) gives the sequence's sorted order when it is not sorted itself. int64
   indices, int32 with out_int32; compared in the promoted dtype. bucketize(input,
   boundaries 1-d) is searchsorted(boundaries, input), side and sorter not given. */
#define TN_FIELDS_tn_searchsorted_fn_opts(X) \
    X(B, out_int32, false, "") \
    X(B, right,     false, "") \
    X(S, side,      NULL,  "") \
    X(T, sorter,    NULL,  "")
TN__KW_STRUCT(tn_searchsorted_fn_opts);
TNDEF tn_tensor *tn_searchsorted_opts(tn_tensor *sorted_sequence, tn_tensor *values, tn_searchsorted_fn_opts opts);
#define tn_searchsorted(sorted_sequence, ...) tn_searchsorted_opts(sorted_sequence, TN__POS_KW(tn_searchsorted_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_searchsorted_str(tn_tensor *sorted_sequence, tn_tensor *values, const char *options);
TNDEF tn_tensor *tn_bucketize_opts(tn_tensor *input, tn_tensor *boundaries, tn_searchsorted_fn_opts opts);
#define tn_bucketize(input, ...) tn_bucketize_opts(input, TN__POS_KW(tn_searchsorted_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_bucketize_str(tn_tensor *input, tn_tensor *boundaries, const char *options);
/* unique: the distinct elements of x (sorted: always, as PyTorch 2's CPU kernel), or with
   dim the distinct slices along dim (lexicographic order); *inverse (x's shape, or [size
   along dim]) maps every element to its entry and *counts counts them (int64, when
   return_inverse / return_counts ask; the result's ownership rule; NULL pointers are
   fine). NaNs are all different. unique_consecutive merges only runs of equal neighbours
   (sorted is not its option). */
#define TN_FIELDS_tn_unique_fn_opts(X) \
    X(B, sorted,         true,    "") \
    X(B, return_inverse, false,   "") \
    X(B, return_counts,  false,   "") \
    X(I, dim,            TN_NONE, "")
TN__KW_STRUCT(tn_unique_fn_opts);
TNDEF tn_tensor *tn_unique_opts(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, tn_unique_fn_opts opts);
#define tn_unique(x, inverse, ...) tn_unique_opts(x, inverse, TN__POS_KW(tn_unique_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_unique_str(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, const char *options);
TNDEF tn_tensor *tn_unique_consecutive_opts(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, tn_unique_fn_opts opts);
#define tn_unique_consecutive(x, inverse, ...) tn_unique_consecutive_opts(x, inverse, TN__POS_KW(tn_unique_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_unique_consecutive_str(tn_tensor *x, tn_tensor **inverse, tn_tensor **counts, const char *options);
/* bincount: counts of each value of x (1-d, non-negative integers) in [max(x) + 1 or
   minlength] bins: int64, or the sums of weights (x's length; float32 weights give float32,
   others float64). histc: bins equal bins over [min, max] (both 0 or equal: the data's
   range) counting x's elements inside it (floating x; the result in its dtype).
   torch.bincount's keywords: weights=None (NULL), minlength=0: tn_bincount(x, .minlength = 5).
   The option text cannot give a tensor: tn_bincount_str takes weights as an argument. */
#define TN_FIELDS_tn_bincount_fn_opts(X) \
    X(T, weights, NULL, "") \
    X(I, minlength, 0, "")
TN__KW_STRUCT(tn_bincount_fn_opts);
TNDEF tn_tensor *tn_bincount_opts(tn_tensor *x, tn_bincount_fn_opts opts);
#define tn_bincount(...) tn_bincount_opts(TN__POS_KW(tn_bincount_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_bincount_str(tn_tensor *x, tn_tensor *weights, const char *options);
#define TN_FIELDS_tn_histc_fn_opts(X) \
    X(I, bins, 100, "") \
    X(D, min,  0,   "") \
    X(D, max,  0,   "")
TN__KW_STRUCT(tn_histc_fn_opts);
TNDEF tn_tensor *tn_histc_opts(tn_tensor *x, tn_histc_fn_opts opts);
#define tn_histc(...) tn_histc_opts(TN__POS_KW(tn_histc_fn_opts, __VA_ARGS__))   /* tn_histc(x, .bins = 10) */
TNDEF tn_tensor *tn_histc_str(tn_tensor *x, const char *options);
/* torch.histogram(x, bins, &bin_edges, .range = {lo, hi} (NAN: x's min and max), .weight
   (NULL or x's numel), .density): counts (or weight sums) of x's values in bins of
   [edge_i, edge_i+1), the last closed; values outside and NaN not counted; in x's dtype
   (floating only), *bin_edges the [bins + 1] edges (owned as the result). The _edges form
   takes the edges as a 1-d tensor. Not differentiable, as PyTorch. */
#define TN_FIELDS_tn_histogram_fn_opts(X) \
    X(D2, range,   TN__NAN2, "") \
    X(T,  weight,  NULL,     "") \
    X(B,  density, false,    "")
TN__KW_STRUCT(tn_histogram_fn_opts);
TNDEF tn_tensor *tn_histogram_opts(tn_tensor *x, int64_t bins, tn_tensor **bin_edges, tn_histogram_fn_opts opts);
#define tn_histogram(x, bins, ...) tn_histogram_opts(x, bins, TN__POS_KW(tn_histogram_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_histogram_str(tn_tensor *x, int64_t bins, tn_tensor **bin_edges, const char *options);
TNDEF tn_tensor *tn_histogram_edges_opts(tn_tensor *x, tn_tensor *bins, tn_tensor **bin_edges, tn_histogram_fn_opts opts);
/* torch.histogramdd(x [..., D], bins, *, range=None, weight=None, density=False): the
   D-dimensional histogram [bins[0], ..., bins[D-1]] of x's rows (nbins must be D), each dim's
   edges the linspace of range[2d], range[2d + 1] (.range = TN_DOUBLES(lo0, hi0, lo1, hi1, ...),
   2 D values; empty, None: the data's min and max per dim); .weight (NULL or x.shape[:-1]) and
   .density as tn_histogram; bin_edges (NULL or D slots) gets each dim's edges (owned by the
   caller): tn_histogramdd(x, bins, 2, edges, .range = TN_DOUBLES(0, 1, 0, 1), .density =
   true). The _edges form takes D edge tensors of x's dtype (and no range). Float32/float64,
   not differentiable (as PyTorch). */
#define TN_FIELDS_tn_histogramdd_fn_opts(X) \
    X(DL, range,   TN__LIST0, "") \
    X(T,  weight,  NULL,      "") \
    X(B,  density, false,     "")
TN__KW_STRUCT(tn_histogramdd_fn_opts);
TNDEF tn_tensor *tn_histogramdd_opts(tn_tensor *x, const int64_t *bins, int nbins, tn_tensor **bin_edges, tn_histogramdd_fn_opts opts);
#define tn_histogramdd(x, bins, nbins, ...) tn_histogramdd_opts(x, bins, nbins, TN__POS_KW(tn_histogramdd_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_histogramdd_str(tn_tensor *x, const int64_t *bins, int nbins, tn_tensor **bin_edges, const char *options);
TNDEF tn_tensor *tn_histogramdd_edges_opts(tn_tensor *x, tn_tensor *const *bins, int nbins, tn_tensor **bin_edges, tn_histogramdd_fn_opts opts);
#define tn_histogramdd_edges(x, bins, nbins, ...) tn_histogramdd_edges_opts(x, bins, nbins, TN__POS_KW(tn_histogramdd_fn_opts, __VA_ARGS__))

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
/* The add-products, beta*input + alpha*(product), PyTorch's beta=1, alpha=1 (beta 0: input
   is ignored, NaNs included): tn_addmm(input, m1, m2, .beta = 0.5, .alpha = 2). */
#define TN_FIELDS_tn_addmm_fn_opts(X) \
    X(D, beta,  1, "") \
    X(D, alpha, 1, "")
TN__KW_STRUCT(tn_addmm_fn_opts);
/* beta*input + alpha*(m1 @ m2); input broadcasts to the result. */
TNDEF tn_tensor *tn_addmm_opts(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, tn_addmm_fn_opts opts);
#define tn_addmm(input, m1, ...) tn_addmm_opts(input, m1, TN__POS_KW(tn_addmm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addmm_str(tn_tensor *input, tn_tensor *m1, tn_tensor *m2, const char *options);
/* beta*input + alpha*(b1 @ b2) batched; input broadcasts to [B, n, m]. */
TNDEF tn_tensor *tn_baddbmm_opts(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, tn_addmm_fn_opts opts);
#define tn_baddbmm(input, b1, ...) tn_baddbmm_opts(input, b1, TN__POS_KW(tn_addmm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_baddbmm_str(tn_tensor *input, tn_tensor *b1, tn_tensor *b2, const char *options);
/* beta*input + alpha*(mat @ vec); input broadcasts to [n]. */
TNDEF tn_tensor *tn_addmv_opts(tn_tensor *input, tn_tensor *mat, tn_tensor *vec, tn_addmm_fn_opts opts);
#define tn_addmv(input, mat, ...) tn_addmv_opts(input, mat, TN__POS_KW(tn_addmm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addmv_str(tn_tensor *input, tn_tensor *mat, tn_tensor *vec, const char *options);
/* beta*input + alpha*outer(vec1, vec2). */
TNDEF tn_tensor *tn_addr_opts(tn_tensor *input, tn_tensor *vec1, tn_tensor *vec2, tn_addmm_fn_opts opts);
#define tn_addr(input, vec1, ...) tn_addr_opts(input, vec1, TN__POS_KW(tn_addmm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addr_str(tn_tensor *input, tn_tensor *vec1, tn_tensor *vec2, const char *options);
/* beta*input + alpha*sum_b(batch1[b] @ batch2[b]). */
TNDEF tn_tensor *tn_addbmm_opts(tn_tensor *input, tn_tensor *batch1, tn_tensor *batch2, tn_addmm_fn_opts opts);
#define tn_addbmm(input, batch1, ...) tn_addbmm_opts(input, batch1, TN__POS_KW(tn_addmm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_addbmm_str(tn_tensor *input, tn_tensor *batch1, tn_tensor *batch2, const char *options);
TNDEF tn_tensor *tn_vdot(tn_tensor *a, tn_tensor *b);     /* dot (real dtypes: no conjugation) */
TNDEF tn_tensor *tn_trace(tn_tensor *t);                  /* sum of a matrix's diagonal */
TNDEF tn_tensor *tn_kron(tn_tensor *a, tn_tensor *b);     /* Kronecker product (at most 4 dims) */
/* torch.tensordot: dims=k (2, the default) contracts the last k dims of a with the first k
   of b; lists dims_a / dims_b (torch's dims=(dims_a, dims_b), of one length; given, they
   replace dims) contract dims_a[i] of a with dims_b[i] of b: tn_tensordot(a, b, .dims = 1),
   tn_tensordot(a, b, .dims_a = TN_INTS(1, 0), .dims_b = TN_INTS(0, 1)). The text spells
   the lists "dims_a=(1, 0), dims_b=(0, 1)". */
#define TN_FIELDS_tn_tensordot_fn_opts(X) \
    X(I,  dims,   2,         "") \
    X(IL, dims_a, TN__LIST0, "") \
    X(IL, dims_b, TN__LIST0, "")
TN__KW_STRUCT(tn_tensordot_fn_opts);
TNDEF tn_tensor *tn_tensordot_opts(tn_tensor *a, tn_tensor *b, tn_tensordot_fn_opts opts);
#define tn_tensordot(a, ...) tn_tensordot_opts(a, TN__POS_KW(tn_tensordot_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_tensordot_str(tn_tensor *a, tn_tensor *b, const char *options);
/* torch.cross along dim (size 3 in both); dim=None (TN_NONE, the default) is torch.cross's
   rule: the first dim of size 3 of the broadcast shape (deprecated in PyTorch 2, which
   warns; linalg.cross's dim is -1): tn_cross(a, b, .dim = -1). */
#define TN_FIELDS_tn_cross_fn_opts(X) \
    X(I, dim, TN_NONE, "")
TN__KW_STRUCT(tn_cross_fn_opts);
TNDEF tn_tensor *tn_cross_opts(tn_tensor *a, tn_tensor *b, tn_cross_fn_opts opts);
#define tn_cross(a, ...) tn_cross_opts(a, TN__POS_KW(tn_cross_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cross_str(tn_tensor *a, tn_tensor *b, const char *options);
/* torch.inner: the last dims contracted (a 0-d operand multiplies). */
TNDEF tn_tensor *tn_inner(tn_tensor *a, tn_tensor *b);
/* torch.einsum: "ij,jk->ik", "...ij->...ji", implicit output ("ij,jk"), repeated subscripts
   (diagonals); operands contracted pairwise left to right with bmm, as PyTorch without opt_einsum. */
TNDEF tn_tensor *tn_einsum(const char *equation, tn_tensor *const *operands, int n);
/* p-norm distances (.p, default 2) between the rows of x1 [..., P, M] and x2 [..., R, M]:
   [..., P, R]. .compute_mode as PyTorch's: TN_COMPUTE_MODE_USE_MM_FOR_EUCLID_DIST_IF_NECESSARY
   (the default, PyTorch's None: the matrix product when p = 2 and P or R > 25),
   ..._USE_MM_FOR_EUCLID_DIST, ..._DONOT_USE_MM_FOR_EUCLID_DIST. */
typedef enum tn_compute_mode {
    TN_COMPUTE_MODE_USE_MM_FOR_EUCLID_DIST_IF_NECESSARY = 0, TN_COMPUTE_MODE_USE_MM_FOR_EUCLID_DIST,
    TN_COMPUTE_MODE_DONOT_USE_MM_FOR_EUCLID_DIST
} tn_compute_mode;
#define TN_FIELDS_tn_cdist_fn_opts(X) \
    X(D, p,            2, "") \
    X(E, compute_mode, TN_COMPUTE_MODE_USE_MM_FOR_EUCLID_DIST_IF_NECESSARY, \
      "use_mm_for_euclid_dist_if_necessary|use_mm_for_euclid_dist|donot_use_mm_for_euclid_dist")
TN__KW_STRUCT(tn_cdist_fn_opts);
TNDEF tn_tensor *tn_cdist_opts(tn_tensor *x1, tn_tensor *x2, tn_cdist_fn_opts opts);
#define tn_cdist(x1, ...) tn_cdist_opts(x1, TN__POS_KW(tn_cdist_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cdist_str(tn_tensor *x1, tn_tensor *x2, const char *options);
/* The p-norm distances (.p, default 2) of the rows i < j of x [N, M]: [N (N - 1) / 2]. */
#define TN_FIELDS_tn_pdist_fn_opts(X) \
    X(D, p, 2, "")
TN__KW_STRUCT(tn_pdist_fn_opts);
TNDEF tn_tensor *tn_pdist_opts(tn_tensor *x, tn_pdist_fn_opts opts);
#define tn_pdist(...) tn_pdist_opts(TN__POS_KW(tn_pdist_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_pdist_str(tn_tensor *x, const char *options);
/* torch.dist: the p-norm (.p, default 2; pdist's options) of a - b, broadcast; differentiable. */
TNDEF tn_tensor *tn_dist_opts(tn_tensor *a, tn_tensor *b, tn_pdist_fn_opts opts);
#define tn_dist(a, ...) tn_dist_opts(a, TN__POS_KW(tn_pdist_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_dist_str(tn_tensor *a, tn_tensor *b, const char *options);
/* F.normalize: x / max(||x||_p along dim, eps), the norm kept and broadcast (.p 2, .dim 1,
   .eps 1e-12, PyTorch's defaults); differentiable. */
#define TN_FIELDS_tn_normalize_fn_opts(X) \
    X(D, p,   2,     "") \
    X(I, dim, 1,     "") \
    X(D, eps, 1e-12, "")
TN__KW_STRUCT(tn_normalize_fn_opts);
TNDEF tn_tensor *tn_normalize_opts(tn_tensor *x, tn_normalize_fn_opts opts);
#define tn_normalize(...) tn_normalize_opts(TN__POS_KW(tn_normalize_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_normalize_str(tn_tensor *x, const char *options);
/* torch.cov of the rows (variables) of a 1-/2-d input: .correction (default 1), .fweights
   (integers) and .aweights (floats), NULL for none (tensors: the option text cannot give them). */
#define TN_FIELDS_tn_cov_fn_opts(X) \
    X(I, correction, 1,    "") \
    X(T, fweights,   NULL, "") \
    X(T, aweights,   NULL, "")
TN__KW_STRUCT(tn_cov_fn_opts);
TNDEF tn_tensor *tn_cov_opts(tn_tensor *t, tn_cov_fn_opts opts);
#define tn_cov(...) tn_cov_opts(TN__POS_KW(tn_cov_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cov_str(tn_tensor *t, const char *options);
TNDEF tn_tensor *tn_corrcoef(tn_tensor *t);               /* Pearson correlation coefficients of the rows */
/* torch.linalg factorisations and solvers (src/ops/linalg_factor.c): float32, float64,
   complex64, complex128 on the CPU and on a device whose backend has the linalg entry (CUDA),
   batched over leading dims. Second results come back through pointers (NULL: not wanted,
   except lu_factor's pivots); info tensors are int32 of the batch shape, pivots int32 1-based.
   torch.linalg's flags are keywords, the results' pointers positional and before them:
   tn_linalg_lu_factor(A, &pivots, .pivot = true), tn_linalg_solve_ex(A, B, &info, .left =
   false, .check_errors = true). The _ex forms' check_errors=False raises on what info reports
   when true. LU (packed) of [..., m, n], partial pivoting; _ex's info: the first zero pivot. */
#define TN_FIELDS_tn_lu_factor_fn_opts(X) \
    X(B, pivot, true, "")
TN__KW_STRUCT(tn_lu_factor_fn_opts);
TNDEF tn_tensor *tn_linalg_lu_factor_opts(tn_tensor *A, tn_tensor **pivots, tn_lu_factor_fn_opts opts);
#define tn_linalg_lu_factor(A, ...) tn_linalg_lu_factor_opts(A, TN__POS_KW(tn_lu_factor_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_lu_factor_str(tn_tensor *A, tn_tensor **pivots, const char *options);
#define TN_FIELDS_tn_lu_factor_ex_fn_opts(X) \
    X(B, pivot, true, "") \
    X(B, check_errors, false, "")
TN__KW_STRUCT(tn_lu_factor_ex_fn_opts);
TNDEF tn_tensor *tn_linalg_lu_factor_ex_opts(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, tn_lu_factor_ex_fn_opts opts);
#define tn_linalg_lu_factor_ex(A, pivots, ...) tn_linalg_lu_factor_ex_opts(A, pivots, TN__POS_KW(tn_lu_factor_ex_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_lu_factor_ex_str(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, const char *options);
TNDEF tn_tensor *tn_lu_unpack(tn_tensor *LU, tn_tensor *pivots, tn_tensor **L, tn_tensor **U); /* torch.lu_unpack: returns P; L, U required */
TNDEF tn_tensor *tn_linalg_det(tn_tensor *A);                       /* determinant of [..., n, n] */
TNDEF tn_tensor *tn_linalg_slogdet(tn_tensor *A, tn_tensor **sign); /* log|det A|; *sign: -1, 0 or 1 */
TNDEF tn_tensor *tn_logdet(tn_tensor *A);                           /* log det A: nan for det < 0, -inf for det = 0 */
TNDEF tn_tensor *tn_linalg_inv(tn_tensor *A);                       /* inverse; raises for a singular matrix */
/* inverse with info (> 0: singular); check_errors=False. */
#define TN_FIELDS_tn_linalg_ex_fn_opts(X) \
    X(B, check_errors, false, "")
TN__KW_STRUCT(tn_linalg_ex_fn_opts);
TNDEF tn_tensor *tn_linalg_inv_ex_opts(tn_tensor *A, tn_tensor **info, tn_linalg_ex_fn_opts opts);
#define tn_linalg_inv_ex(A, ...) tn_linalg_inv_ex_opts(A, TN__POS_KW(tn_linalg_ex_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_inv_ex_str(tn_tensor *A, tn_tensor **info, const char *options);
/* Solves A X = B (.left, default true) or X A = B; B [..., n] is a batch of vectors when its
   shape is A's without the last dim. solve_ex: with info. */
#define TN_FIELDS_tn_solve_fn_opts(X) \
    X(B, left, true, "")
TN__KW_STRUCT(tn_solve_fn_opts);
TNDEF tn_tensor *tn_linalg_solve_opts(tn_tensor *A, tn_tensor *B, tn_solve_fn_opts opts);
#define tn_linalg_solve(A, ...) tn_linalg_solve_opts(A, TN__POS_KW(tn_solve_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_solve_str(tn_tensor *A, tn_tensor *B, const char *options);
#define TN_FIELDS_tn_solve_ex_fn_opts(X) \
    X(B, left, true, "") \
    X(B, check_errors, false, "")
TN__KW_STRUCT(tn_solve_ex_fn_opts);
TNDEF tn_tensor *tn_linalg_solve_ex_opts(tn_tensor *A, tn_tensor *B, tn_tensor **info, tn_solve_ex_fn_opts opts);
#define tn_linalg_solve_ex(A, B, ...) tn_linalg_solve_ex_opts(A, B, TN__POS_KW(tn_solve_ex_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_solve_ex_str(tn_tensor *A, tn_tensor *B, tn_tensor **info, const char *options);
/* L (or U = L^T with .upper = true) of a positive-definite A's lower triangle; _ex: info > 0
   where not positive-definite. upper=False is also cholesky_solve's and cholesky_inverse's. */
#define TN_FIELDS_tn_cholesky_fn_opts(X) \
    X(B, upper, false, "")
TN__KW_STRUCT(tn_cholesky_fn_opts);
TNDEF tn_tensor *tn_linalg_cholesky_opts(tn_tensor *A, tn_cholesky_fn_opts opts);
#define tn_linalg_cholesky(...) tn_linalg_cholesky_opts(TN__POS_KW(tn_cholesky_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_cholesky_str(tn_tensor *A, const char *options);
#define TN_FIELDS_tn_cholesky_ex_fn_opts(X) \
    X(B, upper, false, "") \
    X(B, check_errors, false, "")
TN__KW_STRUCT(tn_cholesky_ex_fn_opts);
TNDEF tn_tensor *tn_linalg_cholesky_ex_opts(tn_tensor *A, tn_tensor **info, tn_cholesky_ex_fn_opts opts);
#define tn_linalg_cholesky_ex(A, ...) tn_linalg_cholesky_ex_opts(A, TN__POS_KW(tn_cholesky_ex_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_cholesky_ex_str(tn_tensor *A, tn_tensor **info, const char *options);
/* More of torch.linalg (src/ops/linalg_more.c): float32/float64, CPU, batch dims broadcast.
   linalg.solve_triangular(A, B, upper, .left = true, .unitriangular = false): T X = B (or X T = B)
   for triangular A (only its upper / lower triangle is read), blocked over the GEMM. */
#define TN_FIELDS_tn_solve_triangular_fn_opts(X) \
    X(B, left,          true,  "") \
    X(B, unitriangular, false, "")
TN__KW_STRUCT(tn_solve_triangular_fn_opts);
TNDEF tn_tensor *tn_linalg_solve_triangular_opts(tn_tensor *A, tn_tensor *B, bool upper, tn_solve_triangular_fn_opts opts);
#define tn_linalg_solve_triangular(A, B, ...) tn_linalg_solve_triangular_opts(A, B, TN__POS_KW(tn_solve_triangular_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_solve_triangular_str(tn_tensor *A, tn_tensor *B, bool upper, const char *options);
/* torch.triangular_solve(b, A, .upper = true, .transpose = false, .unitriangular = false):
   the solution; *cloned_coefficient (NULL: not wanted) gets a copy of A, as torch's second result. */
#define TN_FIELDS_tn_triangular_solve_fn_opts(X) \
    X(B, upper,         true,  "") \
    X(B, transpose,     false, "") \
    X(B, unitriangular, false, "")
TN__KW_STRUCT(tn_triangular_solve_fn_opts);
TNDEF tn_tensor *tn_triangular_solve_opts(tn_tensor *b, tn_tensor *A, tn_tensor **cloned_coefficient, tn_triangular_solve_fn_opts opts);
#define tn_triangular_solve(b, A, ...) tn_triangular_solve_opts(b, A, TN__POS_KW(tn_triangular_solve_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_triangular_solve_str(tn_tensor *b, tn_tensor *A, tn_tensor **cloned_coefficient, const char *options);
/* (L L^T)^{-1} B, L a Cholesky factor (U^T U if .upper); cholesky_inverse: (L L^T)^{-1}. */
TNDEF tn_tensor *tn_cholesky_solve_opts(tn_tensor *B, tn_tensor *L, tn_cholesky_fn_opts opts);
#define tn_cholesky_solve(B, ...) tn_cholesky_solve_opts(B, TN__POS_KW(tn_cholesky_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cholesky_solve_str(tn_tensor *B, tn_tensor *L, const char *options);
TNDEF tn_tensor *tn_cholesky_inverse_opts(tn_tensor *L, tn_cholesky_fn_opts opts);
#define tn_cholesky_inverse(...) tn_cholesky_inverse_opts(TN__POS_KW(tn_cholesky_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cholesky_inverse_str(tn_tensor *L, const char *options);
/* linalg.lu_solve(LU, pivots, B, .left = true, .adjoint = false): A X = B (A^T X = B when
   adjoint; X A = B when not left) from lu_factor's LU and pivots. */
#define TN_FIELDS_tn_lu_solve_fn_opts(X) \
    X(B, left,    true,  "") \
    X(B, adjoint, false, "")
TN__KW_STRUCT(tn_lu_solve_fn_opts);
TNDEF tn_tensor *tn_linalg_lu_solve_opts(tn_tensor *LU, tn_tensor *pivots, tn_tensor *B, tn_lu_solve_fn_opts opts);
#define tn_linalg_lu_solve(LU, pivots, ...) tn_linalg_lu_solve_opts(LU, pivots, TN__POS_KW(tn_lu_solve_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_lu_solve_str(tn_tensor *LU, tn_tensor *pivots, tn_tensor *B, const char *options);
TNDEF tn_tensor *tn_linalg_matrix_power(tn_tensor *A, int64_t n);  /* A^n by repeated squaring; n < 0: inv(A)^-n; n = 0: I */
TNDEF tn_tensor *tn_linalg_matrix_exp(tn_tensor *A);               /* exp(A): scaling and squaring, Pade degree 3..13 */
/* linalg.vector_norm(x, .ord = 2, .dim = TN_INTS(...) (empty: all), .keepdim, .dtype = TN_F64
   (-1: None; the input is cast to it first)). ord: any number, INFINITY, -INFINITY, 0. */
#define TN_FIELDS_tn_vector_norm_fn_opts(X) \
    X(D,  ord,     2,         "") \
    X(IL, dim,     TN__LIST0, "") \
    X(B,  keepdim, false,     "") \
    X(E,  dtype,   -1,        "float32|float64")
TN__KW_STRUCT(tn_vector_norm_fn_opts);
TNDEF tn_tensor *tn_linalg_vector_norm_opts(tn_tensor *x, tn_vector_norm_fn_opts opts);
#define tn_linalg_vector_norm(...) tn_linalg_vector_norm_opts(TN__POS_KW(tn_vector_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_vector_norm_str(tn_tensor *x, const char *options);
/* linalg.matrix_norm(A, .ord = "fro", .dim = TN_INTS(d0, d1) (empty: -2, -1), .keepdim,
   .dtype): ord "fro", "nuc", or a number as text: "inf", "-inf", "1", "-1", "2", "-2"
   ("nuc", "2", "-2" need the singular values: an error until tn_linalg_svdvals exists). */
#define TN_FIELDS_tn_matrix_norm_fn_opts(X) \
    X(S,  ord,     "fro",     "") \
    X(IL, dim,     TN__LIST0, "") \
    X(B,  keepdim, false,     "") \
    X(E,  dtype,   -1,        "float32|float64")
TN__KW_STRUCT(tn_matrix_norm_fn_opts);
TNDEF tn_tensor *tn_linalg_matrix_norm_opts(tn_tensor *A, tn_matrix_norm_fn_opts opts);
#define tn_linalg_matrix_norm(...) tn_linalg_matrix_norm_opts(TN__POS_KW(tn_matrix_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_matrix_norm_str(tn_tensor *A, const char *options);
/* linalg.norm(A, .ord = NULL (None), .dim, .keepdim, .dtype): torch's dispatch: a matrix norm
   when ord is given and dim has 2 dims (or is empty and A is 2-d), else a vector norm. */
#define TN_FIELDS_tn_linalg_norm_fn_opts(X) \
    X(S,  ord,     NULL,      "") \
    X(IL, dim,     TN__LIST0, "") \
    X(B,  keepdim, false,     "") \
    X(E,  dtype,   -1,        "float32|float64")
TN__KW_STRUCT(tn_linalg_norm_fn_opts);
TNDEF tn_tensor *tn_linalg_norm_opts(tn_tensor *A, tn_linalg_norm_fn_opts opts);
#define tn_linalg_norm(...) tn_linalg_norm_opts(TN__POS_KW(tn_linalg_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_norm_str(tn_tensor *A, const char *options);
TNDEF tn_tensor *tn_linalg_multi_dot(tn_tensor *const *tensors, int n);   /* the chain product in the cheapest order; first/last may be 1-d */
/* linalg.vecdot(x, y, *, dim=-1): sum(x * y, dim) (real dtypes), broadcast: tn_linalg_vecdot(x, y, .dim = 0) */
#define TN_FIELDS_tn_vecdot_fn_opts(X) \
    X(I, dim, -1, "")
TN__KW_STRUCT(tn_vecdot_fn_opts);
TNDEF tn_tensor *tn_linalg_vecdot_opts(tn_tensor *x, tn_tensor *y, tn_vecdot_fn_opts opts);
#define tn_linalg_vecdot(x, ...) tn_linalg_vecdot_opts(x, TN__POS_KW(tn_vecdot_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_vecdot_str(tn_tensor *x, tn_tensor *y, const char *options);
/* linalg.vander(x, *, N=None): [..., n, N], x^0 .. x^(N-1); .N TN_NONE (None): n. */
#define TN_FIELDS_tn_vander_fn_opts(X) \
    X(I, N, TN_NONE, "")
TN__KW_STRUCT(tn_vander_fn_opts);
TNDEF tn_tensor *tn_linalg_vander_opts(tn_tensor *x, tn_vander_fn_opts opts);
#define tn_linalg_vander(...) tn_linalg_vander_opts(TN__POS_KW(tn_vander_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_vander_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_linalg_householder_product(tn_tensor *A, tn_tensor *tau); /* the first n columns of H_1 ... H_k (torch.orgqr) */
/* torch.ormqr(input, tau, other, left=True, transpose=False): op(Q) other (.left) or other
   op(Q), Q = H_1 ... H_k of geqrf's input, tau; op: Q^H if .transpose; real and complex:
   tn_ormqr(A, tau, C), tn_ormqr(A, tau, C, .left = false, .transpose = true). */
#define TN_FIELDS_tn_ormqr_fn_opts(X) \
    X(B, left,      true,  "") \
    X(B, transpose, false, "")
TN__KW_STRUCT(tn_ormqr_fn_opts);
TNDEF tn_tensor *tn_ormqr_opts(tn_tensor *input, tn_tensor *tau, tn_tensor *other, tn_ormqr_fn_opts opts);
#define tn_ormqr(input, tau, ...) tn_ormqr_opts(input, tau, TN__POS_KW(tn_ormqr_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_ormqr_str(tn_tensor *input, tn_tensor *tau, tn_tensor *other, const char *options);
/* linalg.tensorinv(A, ind=2): inv of A as a prod(shape[:ind]) square matrix, reshaped */
#define TN_FIELDS_tn_tensorinv_fn_opts(X) \
    X(I, ind, 2, "")
TN__KW_STRUCT(tn_tensorinv_fn_opts);
TNDEF tn_tensor *tn_linalg_tensorinv_opts(tn_tensor *A, tn_tensorinv_fn_opts opts);
#define tn_linalg_tensorinv(...) tn_linalg_tensorinv_opts(TN__POS_KW(tn_tensorinv_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_tensorinv_str(tn_tensor *A, const char *options);
/* X with tensordot(A, X, X.ndim) = B; dims (n of them, NULL/0: None) of A move to the end first. */
TNDEF tn_tensor *tn_linalg_tensorsolve(tn_tensor *A, tn_tensor *B, const int64_t *dims, int n);
/* linalg.ldl_factor(_ex)(A, *, hermitian=False[, check_errors=False]): A = P L D L^T P^T of
   a symmetric A's lower triangle (LAPACK's sytrf, Bunch-Kaufman pivoting): LD, *pivots (int32,
   LAPACK's: negative for a 2x2 block), *info; ldl_factor raises where info > 0. .hermitian: a
   complex A is Hermitian, A = P L D L^H P^T (hetrf; D's diagonal real); the same factorisation
   for the real dtypes. Not differentiable (as torch's). On CUDA (PyTorch's route): cuSOLVER's
   sytrf and Xsytrs; .hermitian with a complex A is refused there (cuSOLVER has no hetrf, hetrs;
   PyTorch takes MAGMA's). tn_linalg_ldl_factor(A, &pivots, .hermitian = true). */
#define TN_FIELDS_tn_ldl_factor_fn_opts(X) \
    X(B, hermitian, false, "")
TN__KW_STRUCT(tn_ldl_factor_fn_opts);
TNDEF tn_tensor *tn_linalg_ldl_factor_opts(tn_tensor *A, tn_tensor **pivots, tn_ldl_factor_fn_opts opts);
#define tn_linalg_ldl_factor(A, ...) tn_linalg_ldl_factor_opts(A, TN__POS_KW(tn_ldl_factor_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_ldl_factor_str(tn_tensor *A, tn_tensor **pivots, const char *options);
#define TN_FIELDS_tn_ldl_factor_ex_fn_opts(X) \
    X(B, hermitian,    false, "") \
    X(B, check_errors, false, "")
TN__KW_STRUCT(tn_ldl_factor_ex_fn_opts);
TNDEF tn_tensor *tn_linalg_ldl_factor_ex_opts(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, tn_ldl_factor_ex_fn_opts opts);
#define tn_linalg_ldl_factor_ex(A, pivots, ...) tn_linalg_ldl_factor_ex_opts(A, pivots, TN__POS_KW(tn_ldl_factor_ex_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_ldl_factor_ex_str(tn_tensor *A, tn_tensor **pivots, tn_tensor **info, const char *options);
/* linalg.ldl_solve(LD, pivots, B, *, hermitian=False): A X = B from ldl_factor's LD, pivots (sytrs;
   .hermitian with complex LD: hetrs, the factors of hermitian=True). tn_linalg_ldl_solve(LD, piv, B, .hermitian = true) */
#define TN_FIELDS_tn_ldl_solve_fn_opts(X) \
    X(B, hermitian, false, "")
TN__KW_STRUCT(tn_ldl_solve_fn_opts);
TNDEF tn_tensor *tn_linalg_ldl_solve_opts(tn_tensor *LD, tn_tensor *pivots, tn_tensor *B, tn_ldl_solve_fn_opts opts);
#define tn_linalg_ldl_solve(LD, pivots, ...) tn_linalg_ldl_solve_opts(LD, pivots, TN__POS_KW(tn_ldl_solve_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_ldl_solve_str(tn_tensor *LD, tn_tensor *pivots, tn_tensor *B, const char *options);
/* torch.linalg decompositions (src/ops/linalg_decomp.c): float32, float64, complex64,
   complex128 on the CPU and on a device with the linalg entry (CUDA), batched over leading dims, differentiable with PyTorch's formulas. Several results: the first is
   returned, the others come back through pointers (required). */
/* linalg.qr: returns Q, *R. .mode: 0 'reduced' (Q [..., m, k], R [..., k, n]), 1 'complete'
   (Q [..., m, m], R [..., m, n]), 2 'r' (Q empty, R reduced). */
#define TN_FIELDS_tn_linalg_qr_fn_opts(X) \
    X(E, mode, 0, "reduced|complete|r")
TN__KW_STRUCT(tn_linalg_qr_fn_opts);
TNDEF tn_tensor *tn_linalg_qr_opts(tn_tensor *A, tn_tensor **R, tn_linalg_qr_fn_opts opts);
#define tn_linalg_qr(A, ...) tn_linalg_qr_opts(A, TN__POS_KW(tn_linalg_qr_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_qr_str(tn_tensor *A, tn_tensor **R, const char *options);
/* torch.qr(A, some=True): reduced (.some = false: complete); returns Q, *R. */
#define TN_FIELDS_tn_qr_fn_opts(X) \
    X(B, some, true, "")
TN__KW_STRUCT(tn_qr_fn_opts);
TNDEF tn_tensor *tn_qr_opts(tn_tensor *A, tn_tensor **R, tn_qr_fn_opts opts);
#define tn_qr(A, ...) tn_qr_opts(A, TN__POS_KW(tn_qr_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_qr_str(tn_tensor *A, tn_tensor **R, const char *options);
TNDEF tn_tensor *tn_geqrf(tn_tensor *A, tn_tensor **tau);          /* torch.geqrf: LAPACK's packed QR [..., m, n] and tau [..., k] */
/* linalg.eigh of the symmetric matrices whose lower (.UPLO "L") or upper ("U") triangle A
   holds: returns the eigenvalues [..., n] ascending, *eigenvectors [..., n, n] (columns). */
#define TN_FIELDS_tn_linalg_eigh_fn_opts(X) \
    X(S, UPLO, "L", "")
TN__KW_STRUCT(tn_linalg_eigh_fn_opts);
TNDEF tn_tensor *tn_linalg_eigh_opts(tn_tensor *A, tn_tensor **eigenvectors, tn_linalg_eigh_fn_opts opts);
#define tn_linalg_eigh(A, ...) tn_linalg_eigh_opts(A, TN__POS_KW(tn_linalg_eigh_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_eigh_str(tn_tensor *A, tn_tensor **eigenvectors, const char *options);
TNDEF tn_tensor *tn_linalg_eigvalsh_opts(tn_tensor *A, tn_linalg_eigh_fn_opts opts);  /* eigh's eigenvalues alone */
#define tn_linalg_eigvalsh(...) tn_linalg_eigvalsh_opts(TN__POS_KW(tn_linalg_eigh_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_eigvalsh_str(tn_tensor *A, const char *options);
/* linalg.eig of general square matrices A [..., n, n] (float32/64, complex64/128): returns the
   eigenvalues [..., n], *eigenvectors [..., n, n] (columns), both complex (complex64 for float32
   and complex64 input), in LAPACK geev's order and normalisation (norm 1, largest entry real). */
TNDEF tn_tensor *tn_linalg_eig(tn_tensor *A, tn_tensor **eigenvectors);
TNDEF tn_tensor *tn_linalg_eigvals(tn_tensor *A);                  /* eig's eigenvalues alone */
/* linalg.svd: returns U, *S [..., k] descending, *Vh; .full_matrices (default true): U
   [..., m, m], Vh [..., n, n], else [..., m, k], [..., k, n]. Complex A: U, Vh complex, S
   real (the vectors' phases are arbitrary, as LAPACK's; a loss that depends on them raises
   in backward, as torch). float32 is computed in float32, float64 in float64. */
#define TN_FIELDS_tn_linalg_svd_fn_opts(X) \
    X(B, full_matrices, true, "")
TN__KW_STRUCT(tn_linalg_svd_fn_opts);
TNDEF tn_tensor *tn_linalg_svd_opts(tn_tensor *A, tn_tensor **S, tn_tensor **Vh, tn_linalg_svd_fn_opts opts);
#define tn_linalg_svd(A, S, ...) tn_linalg_svd_opts(A, S, TN__POS_KW(tn_linalg_svd_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_svd_str(tn_tensor *A, tn_tensor **S, tn_tensor **Vh, const char *options);
TNDEF tn_tensor *tn_linalg_svdvals(tn_tensor *A);                  /* the singular values [..., k], descending */
/* torch.svd(A, some=True, compute_uv=True): returns U, *S, *V (= Vh^H); .compute_uv = false:
   U, V zeros [..., m, m], [..., n, n]. */
#define TN_FIELDS_tn_svd_fn_opts(X) \
    X(B, some, true, "") \
    X(B, compute_uv, true, "")
TN__KW_STRUCT(tn_svd_fn_opts);
TNDEF tn_tensor *tn_svd_opts(tn_tensor *A, tn_tensor **S, tn_tensor **V, tn_svd_fn_opts opts);
#define tn_svd(A, S, ...) tn_svd_opts(A, S, TN__POS_KW(tn_svd_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_svd_str(tn_tensor *A, tn_tensor **S, tn_tensor **V, const char *options);
/* linalg.pinv and matrix_rank: singular values above max(.atol, .rtol * largest) count; NAN is
   None (atol None: 0; rtol None: eps * max(m, n), or 0 when atol > 0). .hermitian: through eigh. */
#define TN_FIELDS_tn_linalg_pinv_fn_opts(X) \
    X(D, atol,      NAN,   "") \
    X(D, rtol,      NAN,   "") \
    X(B, hermitian, false, "")
TN__KW_STRUCT(tn_linalg_pinv_fn_opts);
TNDEF tn_tensor *tn_linalg_pinv_opts(tn_tensor *A, tn_linalg_pinv_fn_opts opts);
#define tn_linalg_pinv(...) tn_linalg_pinv_opts(TN__POS_KW(tn_linalg_pinv_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_pinv_str(tn_tensor *A, const char *options);
/* torch.pinverse(A, rcond=1e-15): pinv with rtol = rcond: tn_pinverse(A), tn_pinverse(A, .rcond = 1e-6) */
#define TN_FIELDS_tn_pinverse_fn_opts(X) \
    X(D, rcond, 1e-15, "")
TN__KW_STRUCT(tn_pinverse_fn_opts);
TNDEF tn_tensor *tn_pinverse_opts(tn_tensor *A, tn_pinverse_fn_opts opts);
#define tn_pinverse(...) tn_pinverse_opts(TN__POS_KW(tn_pinverse_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_pinverse_str(tn_tensor *A, const char *options);
#define TN_FIELDS_tn_linalg_matrix_rank_fn_opts(X) \
    X(D, atol,      NAN,   "") \
    X(D, rtol,      NAN,   "") \
    X(B, hermitian, false, "")
TN__KW_STRUCT(tn_linalg_matrix_rank_fn_opts);
TNDEF tn_tensor *tn_linalg_matrix_rank_opts(tn_tensor *A, tn_linalg_matrix_rank_fn_opts opts); /* int64 [...] */
#define tn_linalg_matrix_rank(...) tn_linalg_matrix_rank_opts(TN__POS_KW(tn_linalg_matrix_rank_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_matrix_rank_str(tn_tensor *A, const char *options);
/* linalg.lstsq: returns the solution of min |A X - B| (B [..., m, k], or [..., m] vectors; batch
   dims broadcast), the minimum-norm one for rank-deficient A; *residuals, *rank (int64),
   *singular_values as .driver ("gels", "gelsy" (NULL: the CPU default), "gelsd", "gelss")
   reports them (empty tensors where it does not). .rcond: NAN is eps * max(m, n). */
#define TN_FIELDS_tn_linalg_lstsq_fn_opts(X) \
    X(D, rcond,  NAN,  "") \
    X(S, driver, NULL, "")
TN__KW_STRUCT(tn_linalg_lstsq_fn_opts);
TNDEF tn_tensor *tn_linalg_lstsq_opts(tn_tensor *A, tn_tensor *B, tn_tensor **residuals, tn_tensor **rank, tn_tensor **singular_values, tn_linalg_lstsq_fn_opts opts);
#define tn_linalg_lstsq(A, B, residuals, rank, ...) tn_linalg_lstsq_opts(A, B, residuals, rank, TN__POS_KW(tn_linalg_lstsq_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_linalg_lstsq_str(tn_tensor *A, tn_tensor *B, tn_tensor **residuals, tn_tensor **rank, tn_tensor **singular_values, const char *options);
/* linalg.cond: p NULL (None) or "2", "-2" (singular values), "fro", "nuc", "inf", "-inf", "1",
   "-1" (norm(A) norm(A^{-1}), square A; inf for a singular one). */
TNDEF tn_tensor *tn_linalg_cond(tn_tensor *A, const char *p);
/* torch.fft (src/ops/fft.c): the transforms, then the real-valued helpers. On the CPU, and on
   CUDA through tn_backend.fft (cuFFT). Every transform takes PyTorch's keywords and
   is differentiable (torch's gradients, double backward included). Inputs promote as
   torch.fft's: integers and bool to the default dtype, float16/bfloat16 refused; float32 and
   complex64 compute in single precision, float64 and complex128 in double. norm: NULL or
   "backward" (the inverse scaled by 1/n), "forward" (the forward), "ortho" (1/sqrt(n) both).
   The 1-d functions: .n = TN_NONE (None: the input's size along dim; another n pads with zeros
   or crops), .dim = -1, .norm. */
#define TN_FIELDS_tn_fft_fn_opts(X) \
    X(I, n,    TN_NONE, "") \
    X(I, dim,  -1,      "") \
    X(S, norm, NULL,    "")
TN__KW_STRUCT(tn_fft_fn_opts);
/* fft.fft / ifft: complex result (a real input is promoted to complex) */
TNDEF tn_tensor *tn_fft_fft_opts(tn_tensor *x, tn_fft_fn_opts opts);
#define tn_fft_fft(...) tn_fft_fft_opts(TN__POS_KW(tn_fft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_fft_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_ifft_opts(tn_tensor *x, tn_fft_fn_opts opts);
#define tn_fft_ifft(...) tn_fft_ifft_opts(TN__POS_KW(tn_fft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ifft_str(tn_tensor *x, const char *options);
/* fft.rfft: a real input's n/2 + 1 non-negative frequencies (complex); complex input is an error */
TNDEF tn_tensor *tn_fft_rfft_opts(tn_tensor *x, tn_fft_fn_opts opts);
#define tn_fft_rfft(...) tn_fft_rfft_opts(TN__POS_KW(tn_fft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_rfft_str(tn_tensor *x, const char *options);
/* fft.irfft: rfft's inverse, a real result of n points (default 2 (m - 1), m the input's size) */
TNDEF tn_tensor *tn_fft_irfft_opts(tn_tensor *x, tn_fft_fn_opts opts);
#define tn_fft_irfft(...) tn_fft_irfft_opts(TN__POS_KW(tn_fft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_irfft_str(tn_tensor *x, const char *options);
/* fft.hfft: the real transform of a Hermitian signal given by its first half (n as irfft's) */
TNDEF tn_tensor *tn_fft_hfft_opts(tn_tensor *x, tn_fft_fn_opts opts);
#define tn_fft_hfft(...) tn_fft_hfft_opts(TN__POS_KW(tn_fft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_hfft_str(tn_tensor *x, const char *options);
/* fft.ihfft: hfft's inverse of a real input, n/2 + 1 complex points */
TNDEF tn_tensor *tn_fft_ihfft_opts(tn_tensor *x, tn_fft_fn_opts opts);
#define tn_fft_ihfft(...) tn_fft_ihfft_opts(TN__POS_KW(tn_fft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ihfft_str(tn_tensor *x, const char *options);
/* The 2-d functions: .s = TN_INTS(...) (empty: None, the input's sizes; -1 in it: that dim's
   size), .dim = TN_INTS(-2, -1), .norm; the n-d ones: .dim empty (None: the last len(s) dims,
   or every dim). The real ones (rfft2/rfftn, irfft2/irfftn, hfft2/hfftn, ihfft2/ihfftn) take
   the half spectrum along the last of the dims. */
#define TN__INTS_M2_M1 {2, {-2, -1}}   /* fft2's dim=(-2, -1) */
#define TN_FIELDS_tn_fft2_fn_opts(X) \
    X(IL, s,    TN__LIST0,      "") \
    X(IL, dim,  TN__INTS_M2_M1, "") \
    X(S,  norm, NULL,           "")
TN__KW_STRUCT(tn_fft2_fn_opts);
#define TN_FIELDS_tn_fftn_fn_opts(X) \
    X(IL, s,    TN__LIST0, "") \
    X(IL, dim,  TN__LIST0, "") \
    X(S,  norm, NULL,      "")
TN__KW_STRUCT(tn_fftn_fn_opts);
TNDEF tn_tensor *tn_fft_fft2_opts(tn_tensor *x, tn_fft2_fn_opts opts);
#define tn_fft_fft2(...) tn_fft_fft2_opts(TN__POS_KW(tn_fft2_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_fft2_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_ifft2_opts(tn_tensor *x, tn_fft2_fn_opts opts);
#define tn_fft_ifft2(...) tn_fft_ifft2_opts(TN__POS_KW(tn_fft2_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ifft2_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_rfft2_opts(tn_tensor *x, tn_fft2_fn_opts opts);
#define tn_fft_rfft2(...) tn_fft_rfft2_opts(TN__POS_KW(tn_fft2_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_rfft2_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_irfft2_opts(tn_tensor *x, tn_fft2_fn_opts opts);
#define tn_fft_irfft2(...) tn_fft_irfft2_opts(TN__POS_KW(tn_fft2_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_irfft2_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_hfft2_opts(tn_tensor *x, tn_fft2_fn_opts opts);
#define tn_fft_hfft2(...) tn_fft_hfft2_opts(TN__POS_KW(tn_fft2_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_hfft2_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_ihfft2_opts(tn_tensor *x, tn_fft2_fn_opts opts);
#define tn_fft_ihfft2(...) tn_fft_ihfft2_opts(TN__POS_KW(tn_fft2_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ihfft2_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_fftn_opts(tn_tensor *x, tn_fftn_fn_opts opts);
#define tn_fft_fftn(...) tn_fft_fftn_opts(TN__POS_KW(tn_fftn_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_fftn_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_ifftn_opts(tn_tensor *x, tn_fftn_fn_opts opts);
#define tn_fft_ifftn(...) tn_fft_ifftn_opts(TN__POS_KW(tn_fftn_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ifftn_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_rfftn_opts(tn_tensor *x, tn_fftn_fn_opts opts);
#define tn_fft_rfftn(...) tn_fft_rfftn_opts(TN__POS_KW(tn_fftn_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_rfftn_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_irfftn_opts(tn_tensor *x, tn_fftn_fn_opts opts);
#define tn_fft_irfftn(...) tn_fft_irfftn_opts(TN__POS_KW(tn_fftn_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_irfftn_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_hfftn_opts(tn_tensor *x, tn_fftn_fn_opts opts);
#define tn_fft_hfftn(...) tn_fft_hfftn_opts(TN__POS_KW(tn_fftn_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_hfftn_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_ihfftn_opts(tn_tensor *x, tn_fftn_fn_opts opts);
#define tn_fft_ihfftn(...) tn_fft_ihfftn_opts(TN__POS_KW(tn_fftn_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ihfftn_str(tn_tensor *x, const char *options);
/* torch.stft(x, n_fft, window (NULL: None, a rectangular window), ...): the short-time Fourier
   transform of x [L] or [B, L]: frames of n_fft points every hop_length (None: n_fft / 4),
   times the window (win_length points, None: n_fft, centred in n_fft with zeros), each
   transformed; [B?, n_fft / 2 + 1 (onesided) or n_fft, frames]. center pads x by n_fft / 2
   on both sides (pad_mode "reflect", "constant", "replicate" or "circular"); normalized
   scales by 1/sqrt(n_fft); onesided -1: true for a real input and window; return_complex -1
   (None): required for a real input, as PyTorch's error says (false: view_as_real of the
   result). Differentiable. */
#define TN_FIELDS_tn_stft_fn_opts(X) \
    X(I,  hop_length,     TN_NONE,   "") \
    X(I,  win_length,     TN_NONE,   "") \
    X(B,  center,         true,      "") \
    X(S,  pad_mode,       "reflect", "") \
    X(B,  normalized,     false,     "") \
    X(OB, onesided,       -1,        "") \
    X(OB, return_complex, -1,        "")
TN__KW_STRUCT(tn_stft_fn_opts);
TNDEF tn_tensor *tn_stft_opts(tn_tensor *x, int64_t n_fft, tn_tensor *window, tn_stft_fn_opts opts);
#define tn_stft(x, n_fft, ...) tn_stft_opts(x, n_fft, TN__POS_KW(tn_stft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_stft_str(tn_tensor *x, int64_t n_fft, tn_tensor *window, const char *options);
/* torch.istft(x, n_fft, window, ...): stft's inverse by overlap-add, divided by the summed
   squared window (an error where it is below 1e-11); x complex [B?, freq, frames]; onesided
   -1: freq != n_fft; length (None: what center leaves) trims or zero-pads the signal;
   return_complex: a complex signal (a two-sided input). Differentiable. */
#define TN_FIELDS_tn_istft_fn_opts(X) \
    X(I,  hop_length,     TN_NONE, "") \
    X(I,  win_length,     TN_NONE, "") \
    X(B,  center,         true,    "") \
    X(B,  normalized,     false,   "") \
    X(OB, onesided,       -1,      "") \
    X(I,  length,         TN_NONE, "") \
    X(B,  return_complex, false,   "")
TN__KW_STRUCT(tn_istft_fn_opts);
TNDEF tn_tensor *tn_istft_opts(tn_tensor *x, int64_t n_fft, tn_tensor *window, tn_istft_fn_opts opts);
#define tn_istft(x, n_fft, ...) tn_istft_opts(x, n_fft, TN__POS_KW(tn_istft_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_istft_str(tn_tensor *x, int64_t n_fft, tn_tensor *window, const char *options);
/* fft.fftfreq(n, .d = 1.0, .dtype = -1 (None: the default dtype), .device): the sample
   frequencies [0, 1, ..., (n-1)/2, -(n/2), ..., -1] / (d n); a floating dtype. */
#define TN_FIELDS_tn_fftfreq_fn_opts(X) \
    X(D, d,      1.0,    "") \
    X(E, dtype,  -1,     "float32|float64|int32|int64|uint8|bool|float16|bfloat16|int8|int16") \
    X(E, device, TN_CPU, "cpu|cuda")
TN__KW_STRUCT(tn_fftfreq_fn_opts);
TNDEF tn_tensor *tn_fft_fftfreq_opts(int64_t n, tn_fftfreq_fn_opts opts);
#define tn_fft_fftfreq(...) tn_fft_fftfreq_opts(TN__POS_KW(tn_fftfreq_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_fftfreq_str(int64_t n, const char *options);
/* fft.rfftfreq(n, .d, .dtype, .device): [0, 1, ..., n/2] / (d n) (rfft's n/2 + 1 outputs). */
TNDEF tn_tensor *tn_fft_rfftfreq_opts(int64_t n, tn_fftfreq_fn_opts opts);
#define tn_fft_rfftfreq(...) tn_fft_rfftfreq_opts(TN__POS_KW(tn_fftfreq_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_rfftfreq_str(int64_t n, const char *options);
/* fft.fftshift(x, .dim = TN_INTS(...) (empty: every dim)): x rolled by size / 2 along each
   dim, so the zero frequency sits in the middle; ifftshift rolls by (size + 1) / 2, undoing it.
   Differentiable (roll's gradient). */
#define TN_FIELDS_tn_fftshift_fn_opts(X) \
    X(IL, dim, TN__LIST0, "")
TN__KW_STRUCT(tn_fftshift_fn_opts);
TNDEF tn_tensor *tn_fft_fftshift_opts(tn_tensor *x, tn_fftshift_fn_opts opts);
#define tn_fft_fftshift(...) tn_fft_fftshift_opts(TN__POS_KW(tn_fftshift_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_fftshift_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_fft_ifftshift_opts(tn_tensor *x, tn_fftshift_fn_opts opts);
#define tn_fft_ifftshift(...) tn_fft_ifftshift_opts(TN__POS_KW(tn_fftshift_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_fft_ifftshift_str(tn_tensor *x, const char *options);
/* Sparse matrices (src/ops/sparse.c), torch.sparse's kernels: a CSR matrix [nrows, ncols] is
   three tensors, as torch's crow_indices() [nrows + 1], col_indices() [nnz] (int64) and
   values() [nnz]; a COO matrix two: indices [2, nnz] (int64: rows, columns) and values. The
   products take float32/float64 values and a 2-D dense operand of the same dtype, and are
   differentiable in both the values and the dense operand. Indices are validated (torch's
   messages): bad ones are an error. CPU only. */
TNDEF tn_tensor *tn_sparse_csr_mm(tn_tensor *crow_indices, tn_tensor *col_indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense);   /* [nrows, p] */
TNDEF tn_tensor *tn_sparse_coo_mm(tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor *dense);   /* duplicates add */
/* COO -> CSR, coalesced (sorted by row then column, duplicates summed): returns the values; *crow_indices, *col_indices new. */
TNDEF tn_tensor *tn_sparse_coo_to_csr(tn_tensor *indices, tn_tensor *values, int64_t nrows, int64_t ncols, tn_tensor **crow_indices, tn_tensor **col_indices);
TNDEF tn_tensor *tn_sparse_csr_to_coo(tn_tensor *crow_indices, tn_tensor *col_indices, int64_t nrows, int64_t ncols);   /* indices [2, nnz] */
TNDEF tn_tensor *tn_sparse_csr_to_dense(tn_tensor *crow_indices, tn_tensor *col_indices, tn_tensor *values, int64_t nrows, int64_t ncols);
/* to_sparse_csr of a 2-D x: returns the values of its nonzeros row by row (differentiable); *crow_indices, *col_indices new. */
TNDEF tn_tensor *tn_sparse_dense_to_csr(tn_tensor *x, tn_tensor **crow_indices, tn_tensor **col_indices);
TNDEF int tn_sparse_csr_check(tn_tensor *crow_indices, tn_tensor *col_indices, tn_tensor *values, int64_t nrows, int64_t ncols);   /* 0, or -1 with torch's message; values may be NULL */

/* ======================================================================= */
/* 10. nn functional                                                        */
/* ======================================================================= */
/* Scalar activations shared by the CPU kernels and tensor_cuda.cu (one formula each). */
/* @template TN__DEFINE_ACTIVATIONS(T, S, F) */
TN_HD static inline T tn_sigmoid_##S(T x) {
    return x >= 0 ? (T)1 / ((T)1 + exp##F(-x)) : exp##F(x) / ((T)1 + exp##F(x)); }
TN_HD static inline T tn_silu_##S(T x) { return x * tn_sigmoid_##S(x); }
TN_HD static inline T tn_gelu_##S(T x) { return (T)0.5 * x * ((T)1 + erf##F(x * (T)0.70710678118654752440)); }
TN_HD static inline T tn_gelu_tanh_##S(T x) {
    return (T)0.5 * x * ((T)1 + tanh##F((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x))); }
/* g times gelu's derivative, Phi(x) + x phi(x) (PyTorch's gelu_backward, one pass) */
TN_HD static inline T tn_gelu_backward_##S(T g, T x) {
    return g * ((T)0.5 * ((T)1 + erf##F(x * (T)0.70710678118654752440)) + x * (T)0.39894228040143267794 * exp##F((T)-0.5 * x * x)); }
/* the tanh form's: 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(k (x + c x^3)) */
TN_HD static inline T tn_gelu_tanh_backward_##S(T g, T x) {
    const T k = (T)0.79788456080286535588, c = (T)0.044715, t = tanh##F(k * (x + c * x * x * x));
    return g * ((T)0.5 * ((T)1 + t) + (T)0.5 * x * ((T)1 - t * t) * k * ((T)1 + (T)3 * c * x * x)); }
/* softplus = log(1 + exp(beta x)) / beta, linear above threshold as PyTorch */
TN_HD static inline T tn_softplus_##S(T x, T beta, T threshold) {
    return x * beta > threshold ? x : log1p##F(exp##F(x * beta)) / beta; }
TN_HD static inline T tn_leaky_relu_##S(T x, T slope) { return x > 0 ? x : x * slope; }
/* elu, selu and celu: scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)) */
TN_HD static inline T tn_elu_##S(T x, T alpha, T scale, T input_scale) {
    return x > 0 ? scale * x : scale * alpha * expm1##F(x * input_scale); }
TN_HD static inline T tn_hardtanh_##S(T x, T lo, T hi) { return x < lo ? lo : x > hi ? hi : x; }
TN_HD static inline T tn_mish_##S(T x) { return x * tanh##F(log1p##F(exp##F(x))); }
TN_HD static inline T tn_hardsigmoid_##S(T x) { return tn_hardtanh_##S(x + (T)3, (T)0, (T)6) / (T)6; }
TN_HD static inline T tn_hardswish_##S(T x) { return x * tn_hardsigmoid_##S(x); }
/* @end TN__DEFINE_ACTIVATIONS */
TN__DEFINE_ACTIVATIONS(float, f32, f)
TN__DEFINE_ACTIVATIONS(double, f64, )

/* Numerically stable (max subtracted). Integer inputs give float32. */
TNDEF tn_tensor *tn_softmax(tn_tensor *x, int64_t dim);
TNDEF tn_tensor *tn_log_softmax(tn_tensor *x, int64_t dim);
/* F.gumbel_softmax: softmax((logits + g) / tau, dim), g = -log(E) with E drawn as PyTorch
   draws it (empty_like(logits).exponential_(): from mt19937 PyTorch's numbers for the same
   seed); hard: the one-hot of its argmax along dim as y_hard - y_soft.detach() + y_soft
   (the straight-through gradient). eps has no effect (deprecated in PyTorch). */
#define TN_FIELDS_tn_gumbel_softmax_fn_opts(X) \
    X(D, tau,  1.0,   "") \
    X(B, hard, false, "") \
    X(D, eps,  1e-10, "") \
    X(I, dim,  -1,    "")
TN__KW_STRUCT(tn_gumbel_softmax_fn_opts);
TNDEF tn_tensor *tn_gumbel_softmax_opts(tn_tensor *logits, tn_gumbel_softmax_fn_opts opts);
#define tn_gumbel_softmax(...) tn_gumbel_softmax_opts(TN__POS_KW(tn_gumbel_softmax_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_gumbel_softmax_str(tn_tensor *logits, const char *options);

/* Activations beyond section 7's relu, gelu, silu, softplus, sigmoid, tanh (floating
   inputs; PyTorch's defaults in the comments). */
TNDEF tn_tensor *tn_relu6(tn_tensor *x);
/* F.leaky_relu: x > 0 ? x : negative_slope x (negative_slope=0.01):
   tn_leaky_relu(x, .negative_slope = 0.2). */
#define TN_FIELDS_tn_leaky_relu_fn_opts(X) \
    X(D, negative_slope, 0.01, "")
TN__KW_STRUCT(tn_leaky_relu_fn_opts);
TNDEF tn_tensor *tn_leaky_relu_opts(tn_tensor *x, tn_leaky_relu_fn_opts opts);
#define tn_leaky_relu(...) tn_leaky_relu_opts(TN__POS_KW(tn_leaky_relu_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_leaky_relu_str(tn_tensor *x, const char *options);
/* F.elu and F.celu's keyword argument (alpha=1.0; celu's nonzero): tn_elu(x, .alpha = 0.5). */
#define TN_FIELDS_tn_elu_fn_opts(X) \
    X(D, alpha, 1.0, "")
TN__KW_STRUCT(tn_elu_fn_opts);
TNDEF tn_tensor *tn_elu_opts(tn_tensor *x, tn_elu_fn_opts opts);
#define tn_elu(...) tn_elu_opts(TN__POS_KW(tn_elu_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_elu_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_selu(tn_tensor *x);
TNDEF tn_tensor *tn_celu_opts(tn_tensor *x, tn_elu_fn_opts opts);
#define tn_celu(...) tn_celu_opts(TN__POS_KW(tn_elu_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_celu_str(tn_tensor *x, const char *options);
/* F.hardtanh: x clamped to [min_val, max_val] (min_val=-1.0, max_val=1.0; min_val <= max_val):
   tn_hardtanh(x, .min_val = 0, .max_val = 6). */
#define TN_FIELDS_tn_hardtanh_fn_opts(X) \
    X(D, min_val, -1.0, "") \
    X(D, max_val, 1.0,  "")
TN__KW_STRUCT(tn_hardtanh_fn_opts);
TNDEF tn_tensor *tn_hardtanh_opts(tn_tensor *x, tn_hardtanh_fn_opts opts);
#define tn_hardtanh(...) tn_hardtanh_opts(TN__POS_KW(tn_hardtanh_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_hardtanh_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_mish(tn_tensor *x);
TNDEF tn_tensor *tn_hardswish(tn_tensor *x);
TNDEF tn_tensor *tn_hardsigmoid(tn_tensor *x);
/* The shrinks, softsign, log-sigmoid and threshold as F's (composites of the ops above, with
   PyTorch's node names). hardshrink: x where |x| > lambd, else 0; softshrink: x -+ lambd
   beyond +-lambd, else 0 (lambd >= 0; NaN stays NaN, as PyTorch 2.5+, where 1.13 gave 0).
   Their keyword argument: lambd=0.5 (tn_softshrink(x, .lambd = 1)). */
#define TN_FIELDS_tn_shrink_fn_opts(X) \
    X(D, lambd, 0.5, "")
TN__KW_STRUCT(tn_shrink_fn_opts);
TNDEF tn_tensor *tn_hardshrink_opts(tn_tensor *x, tn_shrink_fn_opts opts);
#define tn_hardshrink(...) tn_hardshrink_opts(TN__POS_KW(tn_shrink_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_hardshrink_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_softshrink_opts(tn_tensor *x, tn_shrink_fn_opts opts);
#define tn_softshrink(...) tn_softshrink_opts(TN__POS_KW(tn_shrink_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_softshrink_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_tanhshrink(tn_tensor *x);                               /* x - tanh(x) */
TNDEF tn_tensor *tn_softsign(tn_tensor *x);                                 /* x / (1 + |x|) */
TNDEF tn_tensor *tn_logsigmoid(tn_tensor *x);                               /* log(sigmoid(x)), stable */
TNDEF tn_tensor *tn_threshold(tn_tensor *x, double threshold, double value); /* x > threshold ? x : value */
/* F.glu: a * sigmoid(b) for the halves a, b of x along .dim (its size even; dim=-1):
   tn_glu(x, .dim = 1). */
#define TN_FIELDS_tn_glu_fn_opts(X) \
    X(I, dim, -1, "")
TN__KW_STRUCT(tn_glu_fn_opts);
TNDEF tn_tensor *tn_glu_opts(tn_tensor *x, tn_glu_fn_opts opts);
#define tn_glu(...) tn_glu_opts(TN__POS_KW(tn_glu_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_glu_str(tn_tensor *x, const char *options);
/* F.softmin: softmax(-x) along .dim (dim=None, TN_NONE: PyTorch's implicit dim, 0 for a
   0-, 1- or 3-d x, else 1): tn_softmin(x, .dim = -1). */
#define TN_FIELDS_tn_softmin_fn_opts(X) \
    X(I, dim, TN_NONE, "")
TN__KW_STRUCT(tn_softmin_fn_opts);
TNDEF tn_tensor *tn_softmin_opts(tn_tensor *x, tn_softmin_fn_opts opts);
#define tn_softmin(...) tn_softmin_opts(TN__POS_KW(tn_softmin_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_softmin_str(tn_tensor *x, const char *options);
/* x > 0 ? x : weight * x; weight [1] or [C] (C = x's dim 1; inputs under 2-d have C = 1). */
TNDEF tn_tensor *tn_prelu(tn_tensor *x, tn_tensor *weight);
/* Randomized leaky ReLU: training, each negative x times a slope drawn from U(lower, upper)
   (the default generator); otherwise leaky_relu with slope (lower + upper) / 2 (F.rrelu's
   lower=1/8, upper=1/3, training=False): tn_rrelu(x, .training = true). */
#define TN_FIELDS_tn_rrelu_fn_opts(X) \
    X(D, lower,    1.0 / 8, "") \
    X(D, upper,    1.0 / 3, "") \
    X(B, training, false,   "")
TN__KW_STRUCT(tn_rrelu_fn_opts);
TNDEF tn_tensor *tn_rrelu_opts(tn_tensor *x, tn_rrelu_fn_opts opts);
#define tn_rrelu(...) tn_rrelu_opts(TN__POS_KW(tn_rrelu_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_rrelu_str(tn_tensor *x, const char *options);

/* Linear layers: x [*, in], weight [out, in], bias [out] or NULL. */
TNDEF tn_tensor *tn_linear(tn_tensor *x, tn_tensor *weight, tn_tensor *bias);
/* x1 [*, in1], x2 [*, in2], weight [out, in1, in2], bias [out] or NULL: x1^T W x2 + b. */
TNDEF tn_tensor *tn_bilinear(tn_tensor *x1, tn_tensor *x2, tn_tensor *weight, tn_tensor *bias);

/* Convolutions (F.conv1d / F.conv2d / F.conv_transpose1d / F.conv_transpose2d): x [N, C, *]
   or unbatched [C, *], weight [O, C/groups, k...] ([C, O/groups, k...] transposed), bias [O]
   or NULL, then the keyword arguments: tn_conv2d(x, w, b, .stride = 2, .padding = 1). An int
   applies to every spatial dim; the 2-d forms take pairs too (.stride_hw = {2, 1}, text
   "stride=(2, 1)"). padding TN_PADDING_SAME (stride 1) or TN_PADDING_VALID, not for the
   transposed forms; output_padding is theirs only. Transposed output size: (H-1)*stride -
   2*padding + dilation*(k-1) + output_padding + 1. */
#define TN_FIELDS_tn_conv_fn_opts(X) \
    X(I,  stride,            1,   "") \
    X(P,  padding,           0,   "") \
    X(I,  dilation,          1,   "") \
    X(I,  groups,            1,   "") \
    X(I,  output_padding,    0,   "") \
    X(I2, stride_hw,         {0}, "") \
    X(I2, padding_hw,        {0}, "") \
    X(I2, dilation_hw,       {0}, "") \
    X(I2, output_padding_hw, {0}, "")
TN__KW_STRUCT(tn_conv_fn_opts);
TNDEF tn_tensor *tn_conv1d_opts(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, tn_conv_fn_opts opts);
TNDEF tn_tensor *tn_conv2d_opts(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, tn_conv_fn_opts opts);
TNDEF tn_tensor *tn_conv_transpose1d_opts(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, tn_conv_fn_opts opts);
TNDEF tn_tensor *tn_conv_transpose2d_opts(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, tn_conv_fn_opts opts);
#define tn_conv1d(x, weight, ...) tn_conv1d_opts(x, weight, TN__POS_KW(tn_conv_fn_opts, __VA_ARGS__))
#define tn_conv2d(x, weight, ...) tn_conv2d_opts(x, weight, TN__POS_KW(tn_conv_fn_opts, __VA_ARGS__))
#define tn_conv_transpose1d(x, weight, ...) tn_conv_transpose1d_opts(x, weight, TN__POS_KW(tn_conv_fn_opts, __VA_ARGS__))
#define tn_conv_transpose2d(x, weight, ...) tn_conv_transpose2d_opts(x, weight, TN__POS_KW(tn_conv_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_conv1d_str(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const char *options);
TNDEF tn_tensor *tn_conv2d_str(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const char *options);
TNDEF tn_tensor *tn_conv_transpose1d_str(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const char *options);
TNDEF tn_tensor *tn_conv_transpose2d_str(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const char *options);
/* F.conv3d / F.conv_transpose3d: x [N, C, D, H, W] or unbatched [C, D, H, W], weight [O,
   C/groups, kD, kH, kW] ([C, O/groups, kD, kH, kW] transposed), bias [O] or NULL; the keyword
   arguments of the 2-d forms, an int for every dim or a triple (.stride_dhw = TN_INTS(2, 1,
   1), text "stride=(2, 1, 1)"). One 2-d convolution does the work: the depth windows
   stacked as channels (im2col over depth), or for the transposed form the depth taps as
   output channels summed back into place (col2im over depth). */
#define TN_FIELDS_tn_conv3d_fn_opts(X) \
    X(I,  stride,             1,         "") \
    X(P,  padding,            0,         "") \
    X(I,  dilation,           1,         "") \
    X(I,  groups,             1,         "") \
    X(I,  output_padding,     0,         "") \
    X(IL, stride_dhw,         TN__LIST0, "") \
    X(IL, padding_dhw,        TN__LIST0, "") \
    X(IL, dilation_dhw,       TN__LIST0, "") \
    X(IL, output_padding_dhw, TN__LIST0, "")
TN__KW_STRUCT(tn_conv3d_fn_opts);
TNDEF tn_tensor *tn_conv3d_opts(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, tn_conv3d_fn_opts opts);
TNDEF tn_tensor *tn_conv_transpose3d_opts(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, tn_conv3d_fn_opts opts);
#define tn_conv3d(x, weight, ...) tn_conv3d_opts(x, weight, TN__POS_KW(tn_conv3d_fn_opts, __VA_ARGS__))
#define tn_conv_transpose3d(x, weight, ...) tn_conv_transpose3d_opts(x, weight, TN__POS_KW(tn_conv3d_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_conv3d_str(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const char *options);
TNDEF tn_tensor *tn_conv_transpose3d_str(tn_tensor *x, tn_tensor *weight, tn_tensor *bias, const char *options);
/* F.unfold / F.fold (im2col / col2im): x [N, C, H, W] -> [N, C*kh*kw, L] and back (summing overlaps). */
TNDEF tn_tensor *tn_im2col(tn_tensor *x, const int64_t kernel[2], const int64_t dilation[2], const int64_t padding[2], const int64_t stride[2]);
TNDEF tn_tensor *tn_col2im(tn_tensor *cols, const int64_t output_size[2], const int64_t kernel[2], const int64_t dilation[2],
                           const int64_t padding[2], const int64_t stride[2]);

/* nn.MaxPool1d/2d and nn.AvgPool1d/2d's keyword arguments, and F.max_pool / F.avg_pool's:
   one struct for both kinds; an option of the other kind (dilation and return_indices are MaxPool's,
   count_include_pad and divisor_override AvgPool's) is an error unless left at its default.
   stride TN_NONE is PyTorch's None (the kernel size); divisor_override TN_NONE is None. The
   pairs are the 2-d kinds' tuples (.kernel_size_hw = {3, 2}). */
#define TN_FIELDS_tn_pool_opts(X) \
    X(I,  stride,            TN_NONE, "") \
    X(I,  padding,           0,     "") \
    X(I,  dilation,          1,     "") \
    X(B,  return_indices,    false, "") \
    X(B,  ceil_mode,         false, "") \
    X(B,  count_include_pad, true,  "") \
    X(I,  divisor_override,  TN_NONE, "") \
    X(I2, kernel_size_hw,    {0},   "") \
    X(I2, stride_hw,         {0},   "") \
    X(I2, padding_hw,        {0},   "") \
    X(I2, dilation_hw,       {0},   "")
TN__KW_STRUCT(tn_pool_opts);
/* Pooling over [N, C, *] or unbatched [C, *] (F.max_pool1d/2d, F.avg_pool1d/2d): the kernel
   size, then nn.MaxPool / nn.AvgPool's keyword arguments (tn_pool_opts):
   tn_max_pool2d(x, 2), tn_avg_pool2d(x, 3, .stride = 1, .padding = 1, .count_include_pad =
   false). return_indices=True is tn_max_pool2d_with_indices(x, &indices, kernel_size, ...):
   indices receives the int64 argmax positions (flat over each plane). */
TNDEF tn_tensor *tn_max_pool1d_opts(tn_tensor *x, tn_tensor **indices, int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_tensor *tn_max_pool2d_opts(tn_tensor *x, tn_tensor **indices, int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_tensor *tn_avg_pool1d_opts(tn_tensor *x, int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_tensor *tn_avg_pool2d_opts(tn_tensor *x, int64_t kernel_size, tn_pool_opts opts);
#define tn_max_pool1d(x, ...) tn_max_pool1d_opts(x, NULL, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_max_pool2d(x, ...) tn_max_pool2d_opts(x, NULL, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_max_pool1d_with_indices(x, indices, ...) tn_max_pool1d_opts(x, indices, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_max_pool2d_with_indices(x, indices, ...) tn_max_pool2d_opts(x, indices, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_avg_pool1d(x, ...) tn_avg_pool1d_opts(x, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_avg_pool2d(x, ...) tn_avg_pool2d_opts(x, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_max_pool1d_str(tn_tensor *x, tn_tensor **indices, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_max_pool2d_str(tn_tensor *x, tn_tensor **indices, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_avg_pool1d_str(tn_tensor *x, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_avg_pool2d_str(tn_tensor *x, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_adaptive_avg_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w);
TNDEF tn_tensor *tn_adaptive_max_pool2d(tn_tensor *x, int64_t out_h, int64_t out_w, tn_tensor **indices);
/* nn.MaxPool3d / nn.AvgPool3d's keyword arguments and F.max_pool3d / F.avg_pool3d's: those of
   tn_pool_opts with triples (.kernel_size_dhw = TN_INTS(3, 2, 2), text "stride=(2, 1, 1)"). */
#define TN_FIELDS_tn_pool3d_opts(X) \
    X(I,  stride,            TN_NONE,   "") \
    X(I,  padding,           0,         "") \
    X(I,  dilation,          1,         "") \
    X(B,  return_indices,    false,     "") \
    X(B,  ceil_mode,         false,     "") \
    X(B,  count_include_pad, true,      "") \
    X(I,  divisor_override,  TN_NONE,   "") \
    X(IL, kernel_size_dhw,   TN__LIST0, "") \
    X(IL, stride_dhw,        TN__LIST0, "") \
    X(IL, padding_dhw,       TN__LIST0, "") \
    X(IL, dilation_dhw,      TN__LIST0, "")
TN__KW_STRUCT(tn_pool3d_opts);
/* Pooling over [N, C, D, H, W] or [C, D, H, W]; indices: flat over each D*H*W volume. The
   max takes each window's first largest value in (d, h, w) order, as PyTorch's scan. */
TNDEF tn_tensor *tn_max_pool3d_opts(tn_tensor *x, tn_tensor **indices, int64_t kernel_size, tn_pool3d_opts opts);
TNDEF tn_tensor *tn_avg_pool3d_opts(tn_tensor *x, int64_t kernel_size, tn_pool3d_opts opts);
#define tn_max_pool3d(x, ...) tn_max_pool3d_opts(x, NULL, TN__POS_KW(tn_pool3d_opts, __VA_ARGS__))
#define tn_max_pool3d_with_indices(x, indices, ...) tn_max_pool3d_opts(x, indices, TN__POS_KW(tn_pool3d_opts, __VA_ARGS__))
#define tn_avg_pool3d(x, ...) tn_avg_pool3d_opts(x, TN__POS_KW(tn_pool3d_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_max_pool3d_str(tn_tensor *x, tn_tensor **indices, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_avg_pool3d_str(tn_tensor *x, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_adaptive_avg_pool3d(tn_tensor *x, int64_t out_d, int64_t out_h, int64_t out_w);
TNDEF tn_tensor *tn_adaptive_max_pool3d(tn_tensor *x, int64_t out_d, int64_t out_h, int64_t out_w, tn_tensor **indices);
/* F.lp_pool1d / 2d / 3d: (sum over each window of x^p)^(1/p), PyTorch's composite of
   avg_pool (p = norm_type); the kernel size, then stride (TN_NONE: the kernel size) and
   ceil_mode of tn_pool_opts (tn_pool3d_opts for 3-d; no padding). */
TNDEF tn_tensor *tn_lp_pool1d_opts(tn_tensor *x, double norm_type, int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_tensor *tn_lp_pool2d_opts(tn_tensor *x, double norm_type, int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_tensor *tn_lp_pool3d_opts(tn_tensor *x, double norm_type, int64_t kernel_size, tn_pool3d_opts opts);
#define tn_lp_pool1d(x, norm_type, ...) tn_lp_pool1d_opts(x, norm_type, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_lp_pool2d(x, norm_type, ...) tn_lp_pool2d_opts(x, norm_type, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_lp_pool3d(x, norm_type, ...) tn_lp_pool3d_opts(x, norm_type, TN__POS_KW(tn_pool3d_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_lp_pool1d_str(tn_tensor *x, double norm_type, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_lp_pool2d_str(tn_tensor *x, double norm_type, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_lp_pool3d_str(tn_tensor *x, double norm_type, int64_t kernel_size, const char *options);
/* torch.max_unpool1d/2d/3d: x [N, C, *] or [C, *] with n = 1, 2 or 3 spatial dims, its values
   placed at indices (int64 of x's shape, flat over each output plane or volume, as max
   pooling gives them) in zeros of the spatial output_size (n sizes). F.max_unpool's default
   size, (in - 1) * stride - 2 * padding + kernel_size, is the modules' (tn_nn_max_unpool*). */
TNDEF tn_tensor *tn_max_unpool(tn_tensor *x, tn_tensor *indices, const int64_t *output_size, int n);
/* F.fractional_max_pool2d / 3d: the maximum of kernel_size windows (kh, kw / kd, kh, kw) at
   pseudo-random starts into output_size (PyTorch's intervals from random_samples [N, C, 2]
   ([C, 2] unbatched; 3-d: 3 per plane, for d, h, w; 2-d: w then h) in [0, 1), input's dtype;
   NULL draws them from the default generator). *indices (may be NULL): the argmax
   positions, flat over each input plane / volume. */
TNDEF tn_tensor *tn_fractional_max_pool2d(tn_tensor *x, const int64_t kernel_size[2], const int64_t output_size[2], tn_tensor *random_samples,
                                          tn_tensor **indices);
TNDEF tn_tensor *tn_fractional_max_pool3d(tn_tensor *x, const int64_t kernel_size[3], const int64_t output_size[3], tn_tensor *random_samples,
                                          tn_tensor **indices);

/* Normalisation. F.batch_norm(input, running_mean, running_var, weight=None, bias=None,
   training=False, momentum=0.1, eps=1e-5): running_mean/var (NULL: none) are updated in place
   when training: new = (1 - momentum) * old + momentum * batch statistic (unbiased variance).
   tn_batch_norm(x, rm, rv, .weight = w, .bias = b, .training = true). */
#define TN_FIELDS_tn_batch_norm_fn_opts(X) \
    X(T, weight,   NULL,  "") \
    X(T, bias,     NULL,  "") \
    X(B, training, false, "") \
    X(D, momentum, 0.1,   "") \
    X(D, eps,      1e-5,  "")
TN__KW_STRUCT(tn_batch_norm_fn_opts);
TNDEF tn_tensor *tn_batch_norm_opts(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, tn_batch_norm_fn_opts opts);
#define tn_batch_norm(x, ...) tn__batch_norm(x, __VA_ARGS__)
#define tn__batch_norm(x, running_mean, ...) tn_batch_norm_opts(x, running_mean, TN__POS_KW(tn_batch_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_batch_norm_str(tn_tensor *x, tn_tensor *running_mean, tn_tensor *running_var, const char *options);
/* The keyword arguments of F.layer_norm and F.group_norm: weight and bias (NULL: None) and
   eps=1e-5. layer_norm normalises over the last n dims, which must equal normalized_shape:
   tn_layer_norm(x, TN_SHAPE(4), .weight = w, .bias = b); group_norm over num_groups groups
   of x's channels (dim 1): tn_group_norm(x, 2, .eps = 1e-3). */
#define TN_FIELDS_tn_affine_norm_fn_opts(X) \
    X(T, weight, NULL, "") \
    X(T, bias,   NULL, "") \
    X(D, eps,    1e-5, "")
TN__KW_STRUCT(tn_affine_norm_fn_opts);
TNDEF tn_tensor *tn_layer_norm_opts(tn_tensor *x, const int64_t *normalized_shape, int n, tn_affine_norm_fn_opts opts);
#define tn_layer_norm(x, ...) tn__layer_norm(x, __VA_ARGS__)
#define tn__layer_norm(x, normalized_shape, ...) tn_layer_norm_opts(x, normalized_shape, TN__POS_KW(tn_affine_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_layer_norm_str(tn_tensor *x, const int64_t *normalized_shape, int n, const char *options);
TNDEF tn_tensor *tn_group_norm_opts(tn_tensor *x, int64_t num_groups, tn_affine_norm_fn_opts opts);
#define tn_group_norm(x, ...) tn_group_norm_opts(x, TN__POS_KW(tn_affine_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_group_norm_str(tn_tensor *x, int64_t num_groups, const char *options);
/* F.instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
   use_input_stats=True, momentum=0.1, eps=1e-5): tn_instance_norm(x, .weight = w). */
#define TN_FIELDS_tn_instance_norm_fn_opts(X) \
    X(T, running_mean,    NULL, "") \
    X(T, running_var,     NULL, "") \
    X(T, weight,          NULL, "") \
    X(T, bias,            NULL, "") \
    X(B, use_input_stats, true, "") \
    X(D, momentum,        0.1,  "") \
    X(D, eps,             1e-5, "")
TN__KW_STRUCT(tn_instance_norm_fn_opts);
TNDEF tn_tensor *tn_instance_norm_opts(tn_tensor *x, tn_instance_norm_fn_opts opts);
#define tn_instance_norm(...) tn_instance_norm_opts(TN__POS_KW(tn_instance_norm_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_instance_norm_str(tn_tensor *x, const char *options);
/* F.local_response_norm: x / (k + alpha * mean of x^2 over size neighbouring channels, the
   window zero-padded by size / 2 before and (size - 1) / 2 after)^beta, x [N, C, *] of 3 or
   more dims (alpha=1e-4, beta=0.75, k=1.0). */
#define TN_FIELDS_tn_lrn_opts(X) \
    X(D, alpha, 1e-4, "") \
    X(D, beta,  0.75, "") \
    X(D, k,     1.0,  "")
TN__KW_STRUCT(tn_lrn_opts);
TNDEF tn_tensor *tn_local_response_norm_opts(tn_tensor *x, int64_t size, tn_lrn_opts opts);
#define tn_local_response_norm(x, ...) tn_local_response_norm_opts(x, TN__POS_KW(tn_lrn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_local_response_norm_str(tn_tensor *x, int64_t size, const char *options);
/* nn.CrossMapLRN2d's function on [N, C, H, W]: x (k + alpha / size * S)^-beta, S the sum of x^2
   over channels [c - (size - 1) / 2, c + (size - 1) / 2] plus channel 0 from c = (size - 1) / 2 +
   2 on, as PyTorch's legacy loop computes it; the gradient is that loop's backward (the
   symmetric window), as PyTorch's. */
TNDEF tn_tensor *tn_cross_map_lrn2d_opts(tn_tensor *x, int64_t size, tn_lrn_opts opts);
#define tn_cross_map_lrn2d(x, ...) tn_cross_map_lrn2d_opts(x, TN__POS_KW(tn_lrn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cross_map_lrn2d_str(tn_tensor *x, int64_t size, const char *options);
/* F.channel_shuffle: [N, C, *] as [N, groups, C / groups, *] with the two group dims swapped. */
TNDEF tn_tensor *tn_channel_shuffle(tn_tensor *x, int64_t groups);

/* Dropout (from the default generator): zero with probability p, scale the rest by 1/(1-p);
   the identity when not training. dropout2d zeroes whole channels of [N, C, H, W]; a 3-d
   input is [N, C, L] (rows zeroed), as PyTorch 1.13's F.dropout2d does (with a warning).
   dropout3d zeroes whole channels of [N, C, D, H, W] (or of an unbatched [C, D, H, W]).
   F.dropout's keywords: p=0.5, training=True (tn_dropout(x, .p = 0.1, .training = false));
   no inplace: the C ops compute out of place. */
#define TN_FIELDS_tn_dropout_fn_opts(X) \
    X(D, p,        0.5,  "") \
    X(B, training, true, "")
TN__KW_STRUCT(tn_dropout_fn_opts);
TNDEF tn_tensor *tn_dropout_opts(tn_tensor *x, tn_dropout_fn_opts opts);
#define tn_dropout(...) tn_dropout_opts(TN__POS_KW(tn_dropout_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_dropout_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_dropout2d_opts(tn_tensor *x, tn_dropout_fn_opts opts);
#define tn_dropout2d(...) tn_dropout2d_opts(TN__POS_KW(tn_dropout_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_dropout2d_str(tn_tensor *x, const char *options);
TNDEF tn_tensor *tn_dropout3d_opts(tn_tensor *x, tn_dropout_fn_opts opts);
#define tn_dropout3d(...) tn_dropout3d_opts(TN__POS_KW(tn_dropout_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_dropout3d_str(tn_tensor *x, const char *options);

/* Rows of weight [V, D] for int64 indices of any shape -> [*, D]. padding_idx (negative
   counts from V) gets no gradient. */
TNDEF tn_tensor *tn_embedding(tn_tensor *indices, tn_tensor *weight);
TNDEF tn_tensor *tn_embedding_padded(tn_tensor *indices, tn_tensor *weight, int64_t padding_idx);
/* F.embedding_bag: the rows of weight [V, D] for the indices of each bag, reduced to one
   row per bag: [B, D]. input 2-d [B, L] (a bag per row; offsets NULL) or 1-d with offsets
   (int64 / int32, 1-d: bag b starts at offsets[b], offsets[0] = 0; include_last_offset: the
   last entry ends the last bag). mode sum, mean or max; per_sample_weights (input's shape,
   weight's dtype) scale the rows, sum only; indices equal to padding_idx (TN_NONE: None;
   negative counts from V) count nowhere; an empty bag gives zeros. Differentiable in
   weight and per_sample_weights. */
enum { TN_BAG_SUM = 0, TN_BAG_MEAN, TN_BAG_MAX };
#define TN_FIELDS_tn_embedding_bag_fn_opts(X) \
    X(T, offsets,             NULL,        "") \
    X(E, mode,                TN_BAG_MEAN, "sum|mean|max") \
    X(T, per_sample_weights,  NULL,        "") \
    X(B, include_last_offset, false,       "") \
    X(I, padding_idx,         TN_NONE,     "")
TN__KW_STRUCT(tn_embedding_bag_fn_opts);
TNDEF tn_tensor *tn_embedding_bag_opts(tn_tensor *input, tn_tensor *weight, tn_embedding_bag_fn_opts opts);
#define tn_embedding_bag(input, ...) tn_embedding_bag_opts(input, TN__POS_KW(tn_embedding_bag_fn_opts, __VA_ARGS__))
/* The option text cannot give tensors: offsets and per_sample_weights come as arguments (NULL: None). */
TNDEF tn_tensor *tn_embedding_bag_str(tn_tensor *input, tn_tensor *weight, tn_tensor *offsets, tn_tensor *per_sample_weights, const char *options);
/* F.one_hot: int64 [*, num_classes]; .num_classes -1 (the default): max + 1. */
#define TN_FIELDS_tn_one_hot_fn_opts(X) \
    X(I, num_classes, -1, "")
TN__KW_STRUCT(tn_one_hot_fn_opts);
TNDEF tn_tensor *tn_one_hot_opts(tn_tensor *indices, tn_one_hot_fn_opts opts);
#define tn_one_hot(...) tn_one_hot_opts(TN__POS_KW(tn_one_hot_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_one_hot_str(tn_tensor *indices, const char *options);

/* F.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
   is_causal=False, scale=None): softmax(q k^T * scale + mask) v. q [*, L, E], k [*, S, E],
   v [*, S, Ev]; attn_mask NULL, bool (true = may attend) or floating (added), broadcast to
   [*, L, S]; is_causal masks j > i; .scale NAN (None; 0 too) means 1/sqrt(E); dropout_p
   applies to the weights: tn_scaled_dot_product_attention(q, k, v, .is_causal = true). */
#define TN_FIELDS_tn_sdpa_fn_opts(X) \
    X(T, attn_mask, NULL,  "") \
    X(D, dropout_p, 0.0,   "") \
    X(B, is_causal, false, "") \
    X(D, scale,     NAN,   "")
TN__KW_STRUCT(tn_sdpa_fn_opts);
TNDEF tn_tensor *tn_scaled_dot_product_attention_opts(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_sdpa_fn_opts opts);
#define tn_scaled_dot_product_attention(q, ...) tn__scaled_dot_product_attention(q, __VA_ARGS__)
#define tn__scaled_dot_product_attention(q, k, ...) tn_scaled_dot_product_attention_opts(q, k, TN__POS_KW(tn_sdpa_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_scaled_dot_product_attention_str(tn_tensor *q, tn_tensor *k, tn_tensor *v, const char *options);

/* F.interpolate of [N, C, *] with 1 to 3 spatial dims: "nearest", "nearest-exact" and "area"
   (adaptive average pooling) for any, "linear" for [N, C, W], "bilinear" and "bicubic" (A =
   -0.75, taps clamped at the border) for [N, C, H, W], "trilinear" for [N, C, D, H, W];
   antialias=False. F.interpolate's keywords: .size (empty: None; one value for every spatial
   dim, or one per dim) or .scale_factor (the same; used as is for the source positions, as
   PyTorch with recompute_scale_factor=None), .mode "nearest", .align_corners None (-1: False;
   given, true or false, only for the interpolating modes, as PyTorch): tn_interpolate(x, .size = TN_INTS(8, 8), .mode =
   "bilinear", .align_corners = true), tn_interpolate(x, .scale_factor = TN_DOUBLES(2)). */
#define TN_FIELDS_tn_interpolate_fn_opts(X) \
    X(IL, size,          TN__LIST0, "") \
    X(DL, scale_factor,  TN__LIST0, "") \
    X(S,  mode,          "nearest", "") \
    X(OB, align_corners, -1,        "")
TN__KW_STRUCT(tn_interpolate_fn_opts);
TNDEF tn_tensor *tn_interpolate_opts(tn_tensor *x, tn_interpolate_fn_opts opts);
#define tn_interpolate(...) tn_interpolate_opts(TN__POS_KW(tn_interpolate_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_interpolate_str(tn_tensor *x, const char *options);
/* F.grid_sample: input [N, C, H, W] sampled at grid [N, Ho, Wo, 2] ((x, y) in [-1, 1]) ->
   [N, C, Ho, Wo], or [N, C, D, H, W] at [N, Do, Ho, Wo, 3] (x, y, z); mode bilinear (trilinear
   for 5-d), nearest (half to even) or bicubic (4-d; PyTorch's A = -0.75, each tap padded); padding_mode: taps outside the input read 0, the border
   value, or the reflection; align_corners: -1 and 1 are the corner pixels' centres (else
   their outer edges). Differentiable in input and grid (zero for nearest), as PyTorch's. */
enum { TN_GRID_BILINEAR = 0, TN_GRID_NEAREST, TN_GRID_BICUBIC };
enum { TN_GRID_ZEROS = 0, TN_GRID_BORDER, TN_GRID_REFLECTION };
#define TN_FIELDS_tn_grid_opts(X) \
    X(E, mode,          TN_GRID_BILINEAR, "bilinear|nearest|bicubic") \
    X(E, padding_mode,  TN_GRID_ZEROS,    "zeros|border|reflection") \
    X(B, align_corners, false,            "")
TN__KW_STRUCT(tn_grid_opts);
TNDEF tn_tensor *tn_grid_sample_opts(tn_tensor *input, tn_tensor *grid, tn_grid_opts opts);
#define tn_grid_sample(input, ...) tn_grid_sample_opts(input, TN__POS_KW(tn_grid_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_grid_sample_str(tn_tensor *input, tn_tensor *grid, const char *options);
/* F.affine_grid: the sampling grid [N, H, W, 2] of theta [N, 2, 3] for size = (N, C, H, W), or
   [N, D, H, W, 3] of theta [N, 3, 4] for (N, C, D, H, W) (n = 4 or 5 sizes); differentiable in
   theta. F.affine_grid's keyword align_corners=None (-1), which is False. */
#define TN_FIELDS_tn_affine_grid_fn_opts(X) \
    X(OB, align_corners, -1, "")
TN__KW_STRUCT(tn_affine_grid_fn_opts);
TNDEF tn_tensor *tn_affine_grid_opts(tn_tensor *theta, const int64_t *size, int n, tn_affine_grid_fn_opts opts);
#define tn_affine_grid(theta, ...) tn__affine_grid(theta, __VA_ARGS__)
#define tn__affine_grid(theta, size, ...) tn_affine_grid_opts(theta, size, TN__POS_KW(tn_affine_grid_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_affine_grid_str(tn_tensor *theta, const int64_t *size, int n, const char *options);
TNDEF tn_tensor *tn_pixel_shuffle(tn_tensor *x, int64_t upscale_factor);     /* [*, C r^2, H, W] -> [*, C, H r, W r] */
TNDEF tn_tensor *tn_pixel_unshuffle(tn_tensor *x, int64_t downscale_factor);

/* ---- losses ---- */
/* torch.nn.functional's losses: same formulas, defaults, broadcasting and errors. Each is
   a composite of the differentiable ops above (cross-entropy with class targets: one fused
   node whose backward is itself differentiable), so gradients of any order (create_graph)
   reach every floating argument, and the result's grad_fn has PyTorch's name
   ("NllLossBackward0", "MseLossBackward0", ...). PyTorch's defaults are noted as (name=value). */
typedef enum tn_reduction {
    TN_REDUCTION_MEAN = 0, TN_REDUCTION_SUM, TN_REDUCTION_NONE,
    TN_REDUCTION_BATCHMEAN  /* kl_div only: the sum divided by input's first size */
} tn_reduction;
/* The keyword arguments of F.mse_loss and F.l1_loss: reduction (mean).
   tn_mse_loss(x, y, .reduction = TN_REDUCTION_SUM). */
#define TN_FIELDS_tn_reduction_fn_opts(X) \
    X(E, reduction, TN_REDUCTION_MEAN, "mean|sum|none")
TN__KW_STRUCT(tn_reduction_fn_opts);
/* (input - target)^2; target broadcasts with input. */
TNDEF tn_tensor *tn_mse_loss_opts(tn_tensor *input, tn_tensor *target, tn_reduction_fn_opts opts);
#define tn_mse_loss(input, ...) tn_mse_loss_opts(input, TN__POS_KW(tn_reduction_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_mse_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
/* |input - target|; target broadcasts with input. */
TNDEF tn_tensor *tn_l1_loss_opts(tn_tensor *input, tn_tensor *target, tn_reduction_fn_opts opts);
#define tn_l1_loss(input, ...) tn_l1_loss_opts(input, TN__POS_KW(tn_reduction_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_l1_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
/* 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target; reduction=mean,
   beta=1, >= 0; 0 gives l1). */
#define TN_FIELDS_tn_smooth_l1_loss_fn_opts(X) \
    X(E, reduction, TN_REDUCTION_MEAN, "mean|sum|none") \
    X(D, beta,      1.0, "")
TN__KW_STRUCT(tn_smooth_l1_loss_fn_opts);
TNDEF tn_tensor *tn_smooth_l1_loss_opts(tn_tensor *input, tn_tensor *target, tn_smooth_l1_loss_fn_opts opts);
#define tn_smooth_l1_loss(input, ...) tn_smooth_l1_loss_opts(input, TN__POS_KW(tn_smooth_l1_loss_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_smooth_l1_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
/* 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): delta * smooth_l1 with beta = delta
   (reduction=mean, delta=1, > 0). */
#define TN_FIELDS_tn_huber_loss_fn_opts(X) \
    X(E, reduction, TN_REDUCTION_MEAN, "mean|sum|none") \
    X(D, delta,     1.0, "")
TN__KW_STRUCT(tn_huber_loss_fn_opts);
TNDEF tn_tensor *tn_huber_loss_opts(tn_tensor *input, tn_tensor *target, tn_huber_loss_fn_opts opts);
#define tn_huber_loss(input, ...) tn_huber_loss_opts(input, TN__POS_KW(tn_huber_loss_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_huber_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
/* F.nll_loss and F.cross_entropy's keyword arguments: weight NULL or [C] (input's dtype; a
   tensor, so the option text cannot give it), ignore_index (targets equal to it count
   nowhere; the mean divides by the summed weights of the other targets, NaN when there
   are none), reduction, label_smoothing (cross_entropy only: in [0, 1], mixes in the
   uniform distribution). tn_cross_entropy(logits, y, .weight = w, .label_smoothing = 0.1). */
#define TN_FIELDS_tn_loss_opts(X) \
    X(T, weight,          NULL, "") \
    X(I, ignore_index,    -100, "") \
    X(E, reduction,       TN_REDUCTION_MEAN, "mean|sum|none") \
    X(D, label_smoothing, 0.0,  "")
TN__KW_STRUCT(tn_loss_opts);
/* Negative log likelihood of log-probabilities input [N, C], [C] or [N, C, d1, ...] at int64
   class indices target [N], [] or [N, d1, ...]. */
TNDEF tn_tensor *tn_nll_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_opts opts);
#define tn_nll_loss(input, ...) tn_nll_loss_opts(input, TN__POS_KW(tn_loss_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_nll_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
/* nll_loss(log_softmax(input, class dim), target). target: int64 class indices, or floating
   class probabilities of input's shape (then ignore_index must be -100). */
TNDEF tn_tensor *tn_cross_entropy_opts(tn_tensor *input, tn_tensor *target, tn_loss_opts opts);
#define tn_cross_entropy(input, ...) tn_cross_entropy_opts(input, TN__POS_KW(tn_loss_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cross_entropy_str(tn_tensor *input, tn_tensor *target, const char *options);
/* -w (t log(x) + (1 - t) log(1 - x)), logs clamped at -100; input in [0, 1], target of
   input's shape and dtype; weight NULL or broadcastable to input (weight=None,
   reduction=mean). The _str form takes weight as an argument (a tensor is not text). */
#define TN_FIELDS_tn_binary_cross_entropy_fn_opts(X) \
    X(T, weight,    NULL, "") \
    X(E, reduction, TN_REDUCTION_MEAN, "mean|sum|none")
TN__KW_STRUCT(tn_binary_cross_entropy_fn_opts);
TNDEF tn_tensor *tn_binary_cross_entropy_opts(tn_tensor *input, tn_tensor *target, tn_binary_cross_entropy_fn_opts opts);
#define tn_binary_cross_entropy(input, ...) tn_binary_cross_entropy_opts(input, TN__POS_KW(tn_binary_cross_entropy_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_binary_cross_entropy_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, const char *options);
/* binary_cross_entropy(sigmoid(input), target) in a numerically stable form; pos_weight
   (NULL or broadcastable to target, e.g. [C]) weighs the positive term (weight=None,
   reduction=mean, pos_weight=None; the _str form takes both tensors as arguments). */
#define TN_FIELDS_tn_binary_cross_entropy_with_logits_fn_opts(X) \
    X(T, weight,     NULL, "") \
    X(E, reduction,  TN_REDUCTION_MEAN, "mean|sum|none") \
    X(T, pos_weight, NULL, "")
TN__KW_STRUCT(tn_binary_cross_entropy_with_logits_fn_opts);
TNDEF tn_tensor *tn_binary_cross_entropy_with_logits_opts(tn_tensor *input, tn_tensor *target, tn_binary_cross_entropy_with_logits_fn_opts opts);
#define tn_binary_cross_entropy_with_logits(input, ...) \
    tn_binary_cross_entropy_with_logits_opts(input, TN__POS_KW(tn_binary_cross_entropy_with_logits_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_binary_cross_entropy_with_logits_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, tn_tensor *pos_weight,
                                                         const char *options);
/* target (log(target) - input) for log-probabilities input (exp(target) (target - input) with
   log_target). Mean is over all elements as PyTorch; TN_REDUCTION_BATCHMEAN is the KL
   divergence (reduction=mean, log_target=False). */
#define TN_FIELDS_tn_kl_div_fn_opts(X) \
    X(E, reduction,  TN_REDUCTION_MEAN, "mean|sum|none|batchmean") \
    X(B, log_target, false, "")
TN__KW_STRUCT(tn_kl_div_fn_opts);
TNDEF tn_tensor *tn_kl_div_opts(tn_tensor *input, tn_tensor *target, tn_kl_div_fn_opts opts);
#define tn_kl_div(input, ...) tn_kl_div_opts(input, TN__POS_KW(tn_kl_div_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_kl_div_str(tn_tensor *input, tn_tensor *target, const char *options);
/* sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps)) along .dim (torch 1.13's form), x1 and x2
   broadcast together (dim=1, eps=1e-8). */
#define TN_FIELDS_tn_cosine_similarity_fn_opts(X) \
    X(I, dim, 1,    "") \
    X(D, eps, 1e-8, "")
TN__KW_STRUCT(tn_cosine_similarity_fn_opts);
TNDEF tn_tensor *tn_cosine_similarity_opts(tn_tensor *x1, tn_tensor *x2, tn_cosine_similarity_fn_opts opts);
#define tn_cosine_similarity(x1, ...) tn_cosine_similarity_opts(x1, TN__POS_KW(tn_cosine_similarity_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cosine_similarity_str(tn_tensor *x1, tn_tensor *x2, const char *options);
/* The keyword arguments of F.cosine_embedding_loss and F.margin_ranking_loss (margin=0,
   reduction=mean): tn_margin_ranking_loss(x1, x2, y, .margin = 0.5). */
#define TN_FIELDS_tn_margin_loss_fn_opts(X) \
    X(D, margin,    0.0, "") \
    X(E, reduction, TN_REDUCTION_MEAN, "mean|sum|none")
TN__KW_STRUCT(tn_margin_loss_fn_opts);
/* 1 - cos(x1, x2) where target == 1, max(0, cos - margin) where target == -1 (0 elsewhere);
   x1, x2 [N, D] with target [N], or [D] with a 0-d target. */
TNDEF tn_tensor *tn_cosine_embedding_loss_opts(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, tn_margin_loss_fn_opts opts);
#define tn_cosine_embedding_loss(x1, x2, ...) tn_cosine_embedding_loss_opts(x1, x2, TN__POS_KW(tn_margin_loss_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_cosine_embedding_loss_str(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, const char *options);
/* max(0, -target (x1 - x2) + margin); all three of one rank, broadcasting. */
TNDEF tn_tensor *tn_margin_ranking_loss_opts(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, tn_margin_loss_fn_opts opts);
#define tn_margin_ranking_loss(x1, x2, ...) tn_margin_ranking_loss_opts(x1, x2, TN__POS_KW(tn_margin_loss_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_margin_ranking_loss_str(tn_tensor *x1, tn_tensor *x2, tn_tensor *target, const char *options);
/* F.pairwise_distance: ||x1 - x2 + eps||_p over the last dim of the broadcast pair (p=2,
   eps=1e-6, keepdim=False). */
#define TN_FIELDS_tn_pairwise_distance_fn_opts(X) \
    X(D, p,       2,     "") \
    X(D, eps,     1e-6,  "") \
    X(B, keepdim, false, "")
TN__KW_STRUCT(tn_pairwise_distance_fn_opts);
TNDEF tn_tensor *tn_pairwise_distance_opts(tn_tensor *x1, tn_tensor *x2, tn_pairwise_distance_fn_opts opts);
#define tn_pairwise_distance(x1, ...) tn_pairwise_distance_opts(x1, TN__POS_KW(tn_pairwise_distance_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_pairwise_distance_str(tn_tensor *x1, tn_tensor *x2, const char *options);
/* The keyword arguments of the losses below, one struct for the family: each field starts
   "not given" (NAN, -1, TN_NONE) and each loss fills in its own PyTorch default (shown with
   it); a field the loss does not have is an error when given:
   tn_triplet_margin_loss(a, p, n, .margin = 0.5, .swap = true). weight is a tensor (NULL:
   None), which the option text cannot give. */
#define TN_FIELDS_tn_loss_fn_opts(X) \
    X(E,  reduction,     TN_REDUCTION_MEAN, "mean|sum|none") \
    X(D,  margin,        NAN,     "") \
    X(D,  p,             NAN,     "") \
    X(D,  eps,           NAN,     "") \
    X(OB, swap,          -1,      "") \
    X(OB, full,          -1,      "") \
    X(OB, log_input,     -1,      "") \
    X(T,  weight,        NULL,    "") \
    X(I,  blank,         TN_NONE, "") \
    X(OB, zero_infinity, -1,      "")
TN__KW_STRUCT(tn_loss_fn_opts);
/* log(1 + exp(-target * input)), target +-1 of input's shape. */
TNDEF tn_tensor *tn_soft_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts opts);
/* -mean over classes (the last dim) of w (t log sigmoid(x) + (1 - t) log sigmoid(-x)); weight
   broadcasts to input (weight=None). */
TNDEF tn_tensor *tn_multilabel_soft_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts opts);
/* input [N, C] or [C], target int64 of its shape: class indices, ended by the first -1; per
   sample sum over targets j and non-targets i of max(0, 1 - (x[j] - x[i])) / C. */
TNDEF tn_tensor *tn_multilabel_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts opts);
/* x where target == 1, max(0, margin - x) where target == -1 (both for other targets, as
   PyTorch) (margin=1.0). */
TNDEF tn_tensor *tn_hinge_embedding_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts opts);
/* input [N, C] or [C], target int64 [N] or []: sum over i != y of w[y] max(0, margin - x[y] +
   x[i])^p / C (p=1 or 2, margin=1.0, weight=None: [C]). */
TNDEF tn_tensor *tn_multi_margin_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts opts);
/* max(0, margin + d(a, p) - d(a, n)), d = pairwise_distance (p, eps); swap: d(a, n) becomes
   min(d(a, n), d(p, n)). Inputs [N, D] or [D], all of one rank (margin=1.0, p=2, eps=1e-6,
   swap=False). */
TNDEF tn_tensor *tn_triplet_margin_loss_opts(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, tn_loss_fn_opts opts);
/* The same with a distance of the caller's (NULL: tn_pairwise_distance with p 2), called
   inside a scope, which owns what it returns (any op's result will do; NULL after recording
   an error) (margin=1.0; swap=False). */
typedef tn_tensor *(*tn_distance_fn)(tn_tensor *x1, tn_tensor *x2, void *user);
TNDEF tn_tensor *tn_triplet_margin_with_distance_loss_opts(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, tn_distance_fn distance,
                                                           void *user, tn_loss_fn_opts opts);
/* 0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) when full);
   var of input's shape, or with its last dim 1 or missing (one variance per row); the
   clamp passes var's gradient unchanged, as PyTorch (full=False, eps=1e-6). */
TNDEF tn_tensor *tn_gaussian_nll_loss_opts(tn_tensor *input, tn_tensor *target, tn_tensor *var, tn_loss_fn_opts opts);
/* exp(input) - target * input (log_input), else input - target * log(input + eps); full adds
   Stirling's approximation of log(target!) where target > 1 (log_input=True, full=False,
   eps=1e-8). */
TNDEF tn_tensor *tn_poisson_nll_loss_opts(tn_tensor *input, tn_tensor *target, tn_loss_fn_opts opts);
/* Connectionist temporal classification: -log p(target | log_probs) summed over the
   alignments. log_probs [T, N, C] (or unbatched [T, C]) floating; targets int64 / int32 [N, S]
   padded, or the N targets concatenated (1-d); input_lengths and target_lengths int64 /
   int32 [N] ([] unbatched). The mean divides each loss by its target length (at least 1),
   then averages; zero_infinity turns infinite losses and their gradients into 0 (blank=0,
   zero_infinity=False). The gradient with respect to log_probs is PyTorch's, exp(log_probs)
   minus the posterior (the one that is right after a log_softmax); computed on the host in
   double, it is not differentiable again (nor is PyTorch's). */
TNDEF tn_tensor *tn_ctc_loss_opts(tn_tensor *log_probs, tn_tensor *targets, tn_tensor *input_lengths, tn_tensor *target_lengths, tn_loss_fn_opts opts);
#define tn_ctc_loss(log_probs, targets, input_lengths, ...) tn_ctc_loss_opts(log_probs, targets, input_lengths, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_ctc_loss_str(tn_tensor *log_probs, tn_tensor *targets, tn_tensor *input_lengths, tn_tensor *target_lengths, const char *options);
#define tn_soft_margin_loss(input, ...) tn_soft_margin_loss_opts(input, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_multilabel_soft_margin_loss(input, ...) tn_multilabel_soft_margin_loss_opts(input, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_multilabel_margin_loss(input, ...) tn_multilabel_margin_loss_opts(input, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_hinge_embedding_loss(input, ...) tn_hinge_embedding_loss_opts(input, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_multi_margin_loss(input, ...) tn_multi_margin_loss_opts(input, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_triplet_margin_loss(anchor, positive, ...) tn_triplet_margin_loss_opts(anchor, positive, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_triplet_margin_with_distance_loss(anchor, positive, negative, distance, ...) \
    tn_triplet_margin_with_distance_loss_opts(anchor, positive, negative, distance, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_gaussian_nll_loss(input, target, ...) tn_gaussian_nll_loss_opts(input, target, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
#define tn_poisson_nll_loss(input, ...) tn_poisson_nll_loss_opts(input, TN__POS_KW(tn_loss_fn_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_soft_margin_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
TNDEF tn_tensor *tn_multilabel_soft_margin_loss_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, const char *options);
TNDEF tn_tensor *tn_multilabel_margin_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
TNDEF tn_tensor *tn_hinge_embedding_loss_str(tn_tensor *input, tn_tensor *target, const char *options);
TNDEF tn_tensor *tn_multi_margin_loss_str(tn_tensor *input, tn_tensor *target, tn_tensor *weight, const char *options);
TNDEF tn_tensor *tn_triplet_margin_loss_str(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, const char *options);
TNDEF tn_tensor *tn_triplet_margin_with_distance_loss_str(tn_tensor *anchor, tn_tensor *positive, tn_tensor *negative, tn_distance_fn distance,
                                                          void *user, const char *options);
TNDEF tn_tensor *tn_gaussian_nll_loss_str(tn_tensor *input, tn_tensor *target, tn_tensor *var, const char *options);
TNDEF tn_tensor *tn_poisson_nll_loss_str(tn_tensor *input, tn_tensor *target, const char *options);

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

/* tensor.backward(gradient=None, retain_graph=None, create_graph=False) and
   torch.autograd.grad's keyword arguments: tn_backward(loss), tn_backward(y, .gradient = g,
   .retain_graph = true). gradient: t's shape, NULL means ones for a one-element t (backward
   only). retain_graph -1 is None: create_graph's value (saved tensors are kept for another
   backward when true). create_graph records the backward pass itself (higher-order
   gradients). allow_unused (autograd.grad only): an input the outputs do not depend on gives
   NULL, not an error. Returns 0 or -1 with an error. */
#define TN_FIELDS_tn_autograd_opts(X) \
    X(T,  gradient,     NULL,  "") \
    X(OB, retain_graph, -1,    "") \
    X(B,  create_graph, false, "") \
    X(B,  allow_unused, false, "")
TN__KW_STRUCT(tn_autograd_opts);
TNDEF int tn_backward_opts(tn_tensor *t, tn_autograd_opts opts);
#define tn_backward(...) tn_backward_opts(TN__POS_KW(tn_autograd_opts, __VA_ARGS__))
/* torch.autograd.grad: results[i] = d(sum outputs . grad_outputs)/d inputs[i] (new
   references, same ownership rule as op results; NULL for unused inputs with
   allow_unused). grad_outputs may be NULL (ones for one-element outputs). .grad is untouched:
   tn_autograd_grad(&y, 1, &x, 1, NULL, &dx, .create_graph = true). */
TNDEF int tn_autograd_grad_opts(tn_tensor *const *outputs, int n_outputs, tn_tensor *const *inputs, int n_inputs,
                                tn_tensor *const *grad_outputs, tn_tensor **results, tn_autograd_opts opts);
#define tn_autograd_grad(outputs, n_outputs, inputs, n_inputs, grad_outputs, ...) \
    tn_autograd_grad_opts(outputs, n_outputs, inputs, n_inputs, grad_outputs, TN__POS_KW(tn_autograd_opts, __VA_ARGS__))

/* A hook sees the gradient flowing into t during backward and may replace it: return
   a tensor (borrowed: the engine retains it, so the result of any op will do) or NULL
   to keep the gradient. The engine calls hooks inside a scope: tensors a hook makes are
   owned by that scope (a binding that keeps one must retain it). */

typedef tn_tensor *(*tn_hook_fn)(tn_tensor *grad, void *user);
TNDEF int tn_register_hook(tn_tensor *t, tn_hook_fn fn, void *user); /* a handle >= 0, or -1 */
TNDEF int tn_remove_hook(tn_tensor *t, int handle);

/* Final callbacks (PyTorch's engine.queue_callback): from a hook during backward, fn(user)
   is queued to run once that backward has finished (in order, also after an error; a
   return of -1 makes backward fail). Outside a backward: an error. */
TNDEF int tn_autograd_queue_callback(int (*fn)(void *user), void *user);

/* Graph introspection, as PyTorch's grad_fn / next_functions / Node.name(). Nodes are
   reference-counted like tensors: tn_grad_fn and tn_node_next return new references, which
   the caller gives back with tn_node_release (a node held this way keeps its inputs' nodes
   and leaves alive, as a grad_fn does in PyTorch). An op that is one node in PyTorch but
   composed of several here (tn_mse_loss: MseLossBackward0) shows PyTorch's edges: its inputs'. */
TNDEF tn_node *tn_grad_fn(tn_tensor *t);            /* t's node (new reference); NULL for a leaf */
TNDEF tn_node *tn_node_retain(tn_node *n);          /* +1 reference; returns n */
TNDEF void tn_node_release(tn_node *n);             /* -1 reference; frees at 0; NULL is a no-op */
TNDEF const char *tn_node_name(const tn_node *n);   /* "MulBackward0" (borrowed: lives as long as n) */
TNDEF int tn_node_num_next(const tn_node *n);       /* its edges: one per input of the op */
/* Where edge i sends its gradient: the node that made input i (a new reference), or NULL
   with *leaf set to the leaf that accumulates it (borrowed from n; PyTorch's AccumulateGrad),
   or NULL with *leaf NULL for an input that needs no gradient. leaf may be NULL. */
TNDEF tn_node *tn_node_next(tn_node *n, int i, tn_tensor **leaf);
/* Node hooks. A pre-hook sees the gradient of the node's result before the node runs: it is
   a tensor hook of that result (tn_register_hook's rules and handles). A post-hook (PyTorch's
   Node.register_hook) runs after the node with the gradients it computed, grad_inputs[0..n)
   (NULL for an input that gets none) and grad_output (the result's gradient), and may
   replace entries of grad_inputs (borrowed, as a hook's result; the input's shape and dtype);
   it returns 0, or -1 after recording an error, which fails the backward. The register
   functions return a handle >= 0, or -1 with an error. */
typedef int (*tn_node_hook_fn)(tn_tensor **grad_inputs, int n, tn_tensor *grad_output, void *user);
TNDEF int tn_node_register_prehook(tn_node *n, tn_hook_fn fn, void *user);
TNDEF int tn_node_remove_prehook(tn_node *n, int handle);
TNDEF int tn_node_register_hook(tn_node *n, tn_node_hook_fn fn, void *user);
TNDEF int tn_node_remove_hook(tn_node *n, int handle);

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

   input that requires grad (use float64; complex128 inputs and outputs count as their real
   and imaginary parts, PyTorch's convention). fn maps the inputs to one output tensor.
   Returns true if all agree within atol + rtol*|numerical|; else false with the worst
   element described in tn_last_error().
   gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3): tn_gradcheck(fn, in, n, user),
   tn_gradcheck(fn, in, n, user, .atol = 1e-4). */
typedef tn_tensor *(*tn_gradcheck_fn)(tn_tensor *const *inputs, int n, void *user);
#define TN_FIELDS_tn_gradcheck_fn_opts(X) \
    X(D, eps,  1e-6, "") \
    X(D, atol, 1e-5, "") \
    X(D, rtol, 1e-3, "")
TN__KW_STRUCT(tn_gradcheck_fn_opts);
TNDEF bool tn_gradcheck_opts(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, tn_gradcheck_fn_opts opts);
#define tn_gradcheck(fn, ...) tn__gradcheck(fn, __VA_ARGS__)
#define tn__gradcheck(fn, inputs, n, ...) tn_gradcheck_opts(fn, inputs, n, TN__POS_KW(tn_gradcheck_fn_opts, __VA_ARGS__))
TNDEF bool tn_gradcheck_str(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, const char *options);
/* The same check for the gradients of the gradients (create_graph through every formula);
   gradgradcheck's defaults are gradcheck's. */
TNDEF bool tn_gradgradcheck_opts(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, tn_gradcheck_fn_opts opts);
#define tn_gradgradcheck(fn, ...) tn__gradgradcheck(fn, __VA_ARGS__)
#define tn__gradgradcheck(fn, inputs, n, ...) tn_gradgradcheck_opts(fn, inputs, n, TN__POS_KW(tn_gradcheck_fn_opts, __VA_ARGS__))
TNDEF bool tn_gradgradcheck_str(tn_gradcheck_fn fn, tn_tensor *const *inputs, int n, void *user, const char *options);


/* ======================================================================= */
/* 12. modules                                                              */
/* ======================================================================= */
/* tn_dict: an ordered map from names to tensors (state dicts, optimizer state, the
   contents of a safetensors file), plus string metadata. Keys are copied; values are
   retained (a value may be NULL, as in a list of missing keys). Names are hash-indexed:
   set, get and contains take constant time. */
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
   from tn_nn_* constructors that take PyTorch's arguments (keyword arguments as designated
   fields, tn_nn_conv2d(1, 32, 3, .stride = 2, .padding = 1); section 1). A module owns its children and retains its tensors;
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
/* Register t as buffer name (retained, no grad): Module.register_buffer(name, t, persistent=True);
   tn_module_register_buffer(m, "tmp", t, .persistent = false) leaves it out of the state dict. */
#define TN_FIELDS_tn_register_buffer_opts(X) \
    X(B, persistent, true, "")
TN__KW_STRUCT(tn_register_buffer_opts);
TNDEF tn_tensor *tn_module_register_buffer_opts(tn_module *m, const char *name, tn_tensor *t, tn_register_buffer_opts opts);
#define tn_module_register_buffer(m, name, ...) tn_module_register_buffer_opts(m, name, TN__POS_KW(tn_register_buffer_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_module_register_buffer_str(tn_module *m, const char *name, tn_tensor *t, const char *options);
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
/* Module.load_state_dict(sd, strict=True): copy sd's tensors into the module's (no
   autograd). strict: missing or unexpected keys are an error; with .strict = false their
   names go into missing/unexpected (PyTorch's missing_keys, unexpected_keys; either may be
   NULL): tn_module_load_state_dict(m, sd, NULL, NULL) is strict,
   tn_module_load_state_dict(m, sd, miss, unex, .strict = false) is not. A shape mismatch is
   always an error. On error nothing is loaded. .assign = true (PyTorch 2.1+'s assign=True):
   the module's entries become sd's tensors instead of copies (their dtype and device too): a
   buffer is sd's tensor itself, a parameter a detached alias of it (sharing its storage) that
   requires grad as the module's parameter did. */
#define TN_FIELDS_tn_load_state_dict_opts(X) \
    X(B, strict, true,  "") \
    X(B, assign, false, "")
TN__KW_STRUCT(tn_load_state_dict_opts);
TNDEF int tn_module_load_state_dict_opts(tn_module *m, const tn_dict *sd, tn_dict *missing, tn_dict *unexpected, tn_load_state_dict_opts opts);
#define tn_module_load_state_dict(m, sd, missing, ...) tn_module_load_state_dict_opts(m, sd, missing, TN__POS_KW(tn_load_state_dict_opts, __VA_ARGS__))
TNDEF int tn_module_load_state_dict_str(tn_module *m, const tn_dict *sd, tn_dict *missing, tn_dict *unexpected, const char *options);
/* Module.train(mode=True), recursive: tn_module_train(m), tn_module_train(m, .mode = false).
   The _str form returns 0, or -1 on bad text. */
#define TN_FIELDS_tn_train_opts(X) \
    X(B, mode, true, "")
TN__KW_STRUCT(tn_train_opts);
TNDEF void tn_module_train_opts(tn_module *m, tn_train_opts opts);
#define tn_module_train(...) tn_module_train_opts(TN__POS_KW(tn_train_opts, __VA_ARGS__))
TNDEF int tn_module_train_str(tn_module *m, const char *options);
TNDEF void tn_module_eval(tn_module *m);
/* Module.zero_grad's and Optimizer.zero_grad's keywords */
#define TN_FIELDS_tn_zero_grad_opts(X) \
    X(B, set_to_none, true, "")
TN__KW_STRUCT(tn_zero_grad_opts);
/* Module.zero_grad(set_to_none=True) (PyTorch 2's default), recursive: tn_module_zero_grad(m)
   sets .grad = NULL on every parameter; tn_module_zero_grad(m, .set_to_none = false) zeroes
   the grads in place (detached), as tn_optim_zero_grad. The _str form returns 0, or -1 on bad
   text. */
TNDEF void tn_module_zero_grad_opts(tn_module *m, tn_zero_grad_opts opts);
#define tn_module_zero_grad(...) tn_module_zero_grad_opts(TN__POS_KW(tn_zero_grad_opts, __VA_ARGS__))
TNDEF int tn_module_zero_grad_str(tn_module *m, const char *options);
TNDEF int64_t tn_module_num_parameters(const tn_module *m);                 /* elements over all parameters */
typedef void (*tn_module_fn)(tn_module *m, void *user);
TNDEF void tn_module_apply(tn_module *m, tn_module_fn fn, void *user);      /* children first, then m, as PyTorch */
TNDEF char *tn_module_repr(const tn_module *m);                             /* print(model); free with tn_string_free */
TNDEF int tn_module_to(tn_module *m, tn_device device);                     /* moves every parameter and buffer in place */
TNDEF int tn_module_to_dtype(tn_module *m, tn_dtype dtype);                 /* floating parameters and buffers */

/* nn.init: in place, no autograd; PyTorch's keywords and defaults, .generator NULL the
   default generator (PyTorch 2.2's generator=): tn_init_uniform_(w, .a = -0.1, .b = 0.1),
   tn_init_kaiming_normal_(w, .mode = "fan_out", .nonlinearity = "relu"),
   tn_init_calculate_gain("leaky_relu", .param = 0.2) (.param NAN: None, 0.01 for leaky_relu;
   NAN on error). */
#define TN_FIELDS_tn_init_gain_fn_opts(X) \
    X(D, param, NAN, "")
TN__KW_STRUCT(tn_init_gain_fn_opts);
TNDEF double tn_init_calculate_gain_opts(const char *nonlinearity, tn_init_gain_fn_opts opts);
#define tn_init_calculate_gain(...) tn_init_calculate_gain_opts(TN__POS_KW(tn_init_gain_fn_opts, __VA_ARGS__))
TNDEF double tn_init_calculate_gain_str(const char *nonlinearity, const char *options);
#define TN_FIELDS_tn_init_uniform_fn_opts(X) \
    X(D,   a,         0.0,  "") \
    X(D,   b,         1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_init_uniform_fn_opts);
TNDEF int tn_init_uniform__opts(tn_tensor *t, tn_init_uniform_fn_opts opts);
#define tn_init_uniform_(...) tn_init_uniform__opts(TN__POS_KW(tn_init_uniform_fn_opts, __VA_ARGS__))
TNDEF int tn_init_uniform__str(tn_tensor *t, const char *options);
#define TN_FIELDS_tn_init_normal_fn_opts(X) \
    X(D,   mean,      0.0,  "") \
    X(D,   std,       1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_init_normal_fn_opts);
TNDEF int tn_init_normal__opts(tn_tensor *t, tn_init_normal_fn_opts opts);
#define tn_init_normal_(...) tn_init_normal__opts(TN__POS_KW(tn_init_normal_fn_opts, __VA_ARGS__))
TNDEF int tn_init_normal__str(tn_tensor *t, const char *options);
TNDEF int tn_init_constant_(tn_tensor *t, double value);       /* val has no default */
TNDEF int tn_init_zeros_(tn_tensor *t);
TNDEF int tn_init_ones_(tn_tensor *t);
/* xavier_uniform_, xavier_normal_ and orthogonal_ (tensor, gain=1.0, generator=None) */
#define TN_FIELDS_tn_init_xavier_fn_opts(X) \
    X(D,   gain,      1.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_init_xavier_fn_opts);
TNDEF int tn_init_xavier_uniform__opts(tn_tensor *t, tn_init_xavier_fn_opts opts);
#define tn_init_xavier_uniform_(...) tn_init_xavier_uniform__opts(TN__POS_KW(tn_init_xavier_fn_opts, __VA_ARGS__))
TNDEF int tn_init_xavier_uniform__str(tn_tensor *t, const char *options);
TNDEF int tn_init_xavier_normal__opts(tn_tensor *t, tn_init_xavier_fn_opts opts);
#define tn_init_xavier_normal_(...) tn_init_xavier_normal__opts(TN__POS_KW(tn_init_xavier_fn_opts, __VA_ARGS__))
TNDEF int tn_init_xavier_normal__str(tn_tensor *t, const char *options);
/* kaiming_uniform_ / kaiming_normal_(tensor, a=0, mode='fan_in', nonlinearity='leaky_relu',
   generator=None): mode "fan_in" | "fan_out"; nonlinearity as calculate_gain (a: leaky_relu's
   slope). */
#define TN_FIELDS_tn_init_kaiming_fn_opts(X) \
    X(D,   a,            0.0,          "") \
    X(S,   mode,         "fan_in",     "") \
    X(S,   nonlinearity, "leaky_relu", "") \
    X(GEN, generator,    NULL,         "")
TN__KW_STRUCT(tn_init_kaiming_fn_opts);
TNDEF int tn_init_kaiming_uniform__opts(tn_tensor *t, tn_init_kaiming_fn_opts opts);
#define tn_init_kaiming_uniform_(...) tn_init_kaiming_uniform__opts(TN__POS_KW(tn_init_kaiming_fn_opts, __VA_ARGS__))
TNDEF int tn_init_kaiming_uniform__str(tn_tensor *t, const char *options);
TNDEF int tn_init_kaiming_normal__opts(tn_tensor *t, tn_init_kaiming_fn_opts opts);
#define tn_init_kaiming_normal_(...) tn_init_kaiming_normal__opts(TN__POS_KW(tn_init_kaiming_fn_opts, __VA_ARGS__))
TNDEF int tn_init_kaiming_normal__str(tn_tensor *t, const char *options);
TNDEF int tn_init_orthogonal__opts(tn_tensor *t, tn_init_xavier_fn_opts opts);
#define tn_init_orthogonal_(...) tn_init_orthogonal__opts(TN__POS_KW(tn_init_xavier_fn_opts, __VA_ARGS__))
TNDEF int tn_init_orthogonal__str(tn_tensor *t, const char *options);
/* trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None) */
#define TN_FIELDS_tn_init_trunc_normal_fn_opts(X) \
    X(D,   mean,      0.0,  "") \
    X(D,   std,       1.0,  "") \
    X(D,   a,         -2.0, "") \
    X(D,   b,         2.0,  "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_init_trunc_normal_fn_opts);
TNDEF int tn_init_trunc_normal__opts(tn_tensor *t, tn_init_trunc_normal_fn_opts opts);
#define tn_init_trunc_normal_(...) tn_init_trunc_normal__opts(TN__POS_KW(tn_init_trunc_normal_fn_opts, __VA_ARGS__))
TNDEF int tn_init_trunc_normal__str(tn_tensor *t, const char *options);
/* sparse_(tensor, sparsity, std=0.01, generator=None): 2-d t: normal_(0, std), then
   ceil(sparsity rows) zeros per column */
#define TN_FIELDS_tn_init_sparse_fn_opts(X) \
    X(D,   std,       0.01, "") \
    X(GEN, generator, NULL, "")
TN__KW_STRUCT(tn_init_sparse_fn_opts);
TNDEF int tn_init_sparse__opts(tn_tensor *t, double sparsity, tn_init_sparse_fn_opts opts);
#define tn_init_sparse_(t, ...) tn_init_sparse__opts(t, TN__POS_KW(tn_init_sparse_fn_opts, __VA_ARGS__))
TNDEF int tn_init_sparse__str(tn_tensor *t, double sparsity, const char *options);

/* Layers: PyTorch's constructor arguments, the keyword arguments as designated fields after
   the positional ones (each has an _opts and a _str form, section 1). Initialisation as
   PyTorch's reset_parameters. */
/* nn.Linear, nn.Bilinear and nn.LazyLinear's keyword argument: tn_nn_linear(784, 10),
   tn_nn_linear(784, 10, .bias = false). */
#define TN_FIELDS_tn_linear_opts(X) \
    X(B, bias, true, "")
TN__KW_STRUCT(tn_linear_opts);
TNDEF tn_module *tn_nn_linear_opts(int64_t in_features, int64_t out_features, tn_linear_opts opts);
#define tn_nn_linear(in_features, ...) tn_nn_linear_opts(in_features, TN__POS_KW(tn_linear_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_linear_str(int64_t in_features, int64_t out_features, const char *options);
TNDEF tn_module *tn_nn_bilinear_opts(int64_t in1_features, int64_t in2_features, int64_t out_features, tn_linear_opts opts);
#define tn_nn_bilinear(in1_features, in2_features, ...) tn_nn_bilinear_opts(in1_features, in2_features, TN__POS_KW(tn_linear_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_bilinear_str(int64_t in1_features, int64_t in2_features, int64_t out_features, const char *options);
TNDEF tn_tensor *tn_nn_bilinear_forward(tn_module *m, tn_tensor *x1, tn_tensor *x2);   /* two inputs */

/* nn.Conv1d, nn.Conv2d and nn.ConvTranspose2d's keyword arguments (the pairs: Conv2d's
   tuples, e.g. .stride_hw = {2, 1}; output_padding: ConvTranspose2d only). */
#define TN_PADDING_SAME (INT64_MIN + 1)    /* padding='same' (stride 1) */
#define TN_PADDING_VALID (INT64_MIN + 2)   /* padding='valid': no padding */
enum { TN_PADDING_ZEROS = 0, TN_PADDING_REFLECT, TN_PADDING_REPLICATE, TN_PADDING_CIRCULAR };
#define TN_FIELDS_tn_conv_opts(X) \
    X(I,  stride,            1,     "") \
    X(P,  padding,           0,     "") \
    X(I,  dilation,          1,     "") \
    X(I,  groups,            1,     "") \
    X(B,  bias,              true,  "") \
    X(E,  padding_mode,      TN_PADDING_ZEROS, "zeros|reflect|replicate|circular") \
    X(I,  output_padding,    0,     "") \
    X(I2, kernel_size_hw,    {0},   "") \
    X(I2, stride_hw,         {0},   "") \
    X(I2, padding_hw,        {0},   "") \
    X(I2, dilation_hw,       {0},   "") \
    X(I2, output_padding_hw, {0},   "")
TN__KW_STRUCT(tn_conv_opts);
TNDEF tn_module *tn_nn_conv1d_opts(int64_t in_channels, int64_t out_channels, int64_t kernel_size, tn_conv_opts opts);
TNDEF tn_module *tn_nn_conv2d_opts(int64_t in_channels, int64_t out_channels, int64_t kernel_size, tn_conv_opts opts);
TNDEF tn_module *tn_nn_conv_transpose2d_opts(int64_t in_channels, int64_t out_channels, int64_t kernel_size, tn_conv_opts opts);
#define tn_nn_conv1d(in_channels, out_channels, ...) tn_nn_conv1d_opts(in_channels, out_channels, TN__POS_KW(tn_conv_opts, __VA_ARGS__))
#define tn_nn_conv2d(in_channels, out_channels, ...) tn_nn_conv2d_opts(in_channels, out_channels, TN__POS_KW(tn_conv_opts, __VA_ARGS__))
#define tn_nn_conv_transpose2d(in_channels, out_channels, ...) tn_nn_conv_transpose2d_opts(in_channels, out_channels, TN__POS_KW(tn_conv_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_conv1d_str(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_conv2d_str(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_conv_transpose2d_str(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
/* nn.Conv3d / nn.ConvTranspose3d: the keyword arguments of tn_conv_opts with triples
   (.stride_dhw = TN_INTS(2, 1, 1), text "stride=(2, 1, 1)"); padding_mode reflect, replicate
   or circular pads with tn_pad first (Conv3d only, as PyTorch). */
#define TN_FIELDS_tn_conv3d_layer_opts(X) \
    X(I,  stride,             1,         "") \
    X(P,  padding,            0,         "") \
    X(I,  dilation,           1,         "") \
    X(I,  groups,             1,         "") \
    X(B,  bias,               true,      "") \
    X(E,  padding_mode,       TN_PADDING_ZEROS, "zeros|reflect|replicate|circular") \
    X(I,  output_padding,     0,         "") \
    X(IL, kernel_size_dhw,    TN__LIST0, "") \
    X(IL, stride_dhw,         TN__LIST0, "") \
    X(IL, padding_dhw,        TN__LIST0, "") \
    X(IL, dilation_dhw,       TN__LIST0, "") \
    X(IL, output_padding_dhw, TN__LIST0, "")
TN__KW_STRUCT(tn_conv3d_layer_opts);
TNDEF tn_module *tn_nn_conv3d_opts(int64_t in_channels, int64_t out_channels, int64_t kernel_size, tn_conv3d_layer_opts opts);
TNDEF tn_module *tn_nn_conv_transpose3d_opts(int64_t in_channels, int64_t out_channels, int64_t kernel_size, tn_conv3d_layer_opts opts);
#define tn_nn_conv3d(in_channels, out_channels, ...) tn_nn_conv3d_opts(in_channels, out_channels, TN__POS_KW(tn_conv3d_layer_opts, __VA_ARGS__))
#define tn_nn_conv_transpose3d(in_channels, out_channels, ...) tn_nn_conv_transpose3d_opts(in_channels, out_channels, TN__POS_KW(tn_conv3d_layer_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_conv3d_str(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_conv_transpose3d_str(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const char *options);
/* The Lazy modules (nn.LazyLinear, nn.LazyConv1d/2d/3d, nn.LazyConvTranspose2d/3d,
   nn.LazyBatchNorm1d/2d/3d): the eager constructor's arguments without the input size,
   with empty placeholder parameters; the first forward reads the size off its input
   (features: the last dim; channels: dim 1, or 0 unbatched), makes and initialises the
   parameters as the eager module would (same draws for a seed) and becomes that module
   ("Linear", "Conv2d", ...). Make an optimizer after that first call. */
TNDEF tn_module *tn_nn_lazy_linear_opts(int64_t out_features, tn_linear_opts opts);
#define tn_nn_lazy_linear(...) tn_nn_lazy_linear_opts(TN__POS_KW(tn_linear_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_lazy_linear_str(int64_t out_features, const char *options);
TNDEF tn_module *tn_nn_lazy_conv1d_opts(int64_t out_channels, int64_t kernel_size, tn_conv_opts opts);
TNDEF tn_module *tn_nn_lazy_conv2d_opts(int64_t out_channels, int64_t kernel_size, tn_conv_opts opts);
TNDEF tn_module *tn_nn_lazy_conv3d_opts(int64_t out_channels, int64_t kernel_size, tn_conv3d_layer_opts opts);
TNDEF tn_module *tn_nn_lazy_conv_transpose2d_opts(int64_t out_channels, int64_t kernel_size, tn_conv_opts opts);
TNDEF tn_module *tn_nn_lazy_conv_transpose3d_opts(int64_t out_channels, int64_t kernel_size, tn_conv3d_layer_opts opts);
#define tn_nn_lazy_conv1d(out_channels, ...) tn_nn_lazy_conv1d_opts(out_channels, TN__POS_KW(tn_conv_opts, __VA_ARGS__))
#define tn_nn_lazy_conv2d(out_channels, ...) tn_nn_lazy_conv2d_opts(out_channels, TN__POS_KW(tn_conv_opts, __VA_ARGS__))
#define tn_nn_lazy_conv3d(out_channels, ...) tn_nn_lazy_conv3d_opts(out_channels, TN__POS_KW(tn_conv3d_layer_opts, __VA_ARGS__))
#define tn_nn_lazy_conv_transpose2d(out_channels, ...) tn_nn_lazy_conv_transpose2d_opts(out_channels, TN__POS_KW(tn_conv_opts, __VA_ARGS__))
#define tn_nn_lazy_conv_transpose3d(out_channels, ...) tn_nn_lazy_conv_transpose3d_opts(out_channels, TN__POS_KW(tn_conv3d_layer_opts, __VA_ARGS__))
/* nn.MaxPool1d/2d and nn.AvgPool1d/2d: the kernel size, then tn_pool_opts (section 10):
   tn_nn_max_pool2d(2) is nn.MaxPool2d(2); tn_nn_avg_pool2d(3, .stride = 1, .padding = 1). */
TNDEF tn_module *tn_nn_max_pool1d_opts(int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_module *tn_nn_max_pool2d_opts(int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_module *tn_nn_avg_pool1d_opts(int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_module *tn_nn_avg_pool2d_opts(int64_t kernel_size, tn_pool_opts opts);
#define tn_nn_max_pool1d(...) tn_nn_max_pool1d_opts(TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_nn_max_pool2d(...) tn_nn_max_pool2d_opts(TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_nn_avg_pool1d(...) tn_nn_avg_pool1d_opts(TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_nn_avg_pool2d(...) tn_nn_avg_pool2d_opts(TN__POS_KW(tn_pool_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_max_pool1d_str(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_max_pool2d_str(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_avg_pool1d_str(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_avg_pool2d_str(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_adaptive_avg_pool2d(int64_t out_h, int64_t out_w);
TNDEF tn_module *tn_nn_adaptive_max_pool2d(int64_t out_h, int64_t out_w);
/* nn.MaxPool3d / nn.AvgPool3d: the kernel size, then tn_pool3d_opts; nn.AdaptiveAvgPool3d /
   nn.AdaptiveMaxPool3d; nn.LPPool1d/2d (norm_type, kernel size, then stride and ceil_mode);
   nn.MaxUnpool1d/2d/3d (n spatial dims; forward with tn_nn_max_unpool_forward, which takes
   the indices; the output size is the default one). */
TNDEF tn_module *tn_nn_max_pool3d_opts(int64_t kernel_size, tn_pool3d_opts opts);
TNDEF tn_module *tn_nn_avg_pool3d_opts(int64_t kernel_size, tn_pool3d_opts opts);
#define tn_nn_max_pool3d(...) tn_nn_max_pool3d_opts(TN__POS_KW(tn_pool3d_opts, __VA_ARGS__))
#define tn_nn_avg_pool3d(...) tn_nn_avg_pool3d_opts(TN__POS_KW(tn_pool3d_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_max_pool3d_str(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_avg_pool3d_str(int64_t kernel_size, const char *options);
TNDEF tn_module *tn_nn_adaptive_avg_pool3d(int64_t out_d, int64_t out_h, int64_t out_w);
TNDEF tn_module *tn_nn_adaptive_max_pool3d(int64_t out_d, int64_t out_h, int64_t out_w);
TNDEF tn_module *tn_nn_lp_pool1d_opts(double norm_type, int64_t kernel_size, tn_pool_opts opts);
TNDEF tn_module *tn_nn_lp_pool2d_opts(double norm_type, int64_t kernel_size, tn_pool_opts opts);
#define tn_nn_lp_pool1d(norm_type, ...) tn_nn_lp_pool1d_opts(norm_type, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
#define tn_nn_lp_pool2d(norm_type, ...) tn_nn_lp_pool2d_opts(norm_type, TN__POS_KW(tn_pool_opts, __VA_ARGS__))
/* nn.MaxUnpoolNd(kernel_size, stride=None, padding=0): stride TN_NONE (None) is kernel_size;
   tn_nn_max_unpool(2, 2), tn_nn_max_unpool(2, 3, .stride = 2, .padding = 1). */
#define TN_FIELDS_tn_max_unpool_opts(X) \
    X(I, stride,  TN_NONE, "") \
    X(I, padding, 0,       "")
TN__KW_STRUCT(tn_max_unpool_opts);
TNDEF tn_module *tn_nn_max_unpool_opts(int n, int64_t kernel_size, tn_max_unpool_opts opts);
#define tn_nn_max_unpool(n, ...) tn_nn_max_unpool_opts(n, TN__POS_KW(tn_max_unpool_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_max_unpool_str(int n, int64_t kernel_size, const char *options);
TNDEF tn_tensor *tn_nn_max_unpool_forward(tn_module *m, tn_tensor *x, tn_tensor *indices);
/* nn.BatchNorm1d/2d: momentum NAN is None (a cumulative moving average). */
#define TN_FIELDS_tn_batch_norm_module_opts(X) \
    X(D, eps,                 1e-5, "") \
    X(D, momentum,            0.1,  "") \
    X(B, affine,              true, "") \
    X(B, track_running_stats, true, "")
TN__KW_STRUCT(tn_batch_norm_module_opts);
TNDEF tn_module *tn_nn_batch_norm1d_opts(int64_t num_features, tn_batch_norm_module_opts opts);
TNDEF tn_module *tn_nn_batch_norm2d_opts(int64_t num_features, tn_batch_norm_module_opts opts);
#define tn_nn_batch_norm1d(...) tn_nn_batch_norm1d_opts(TN__POS_KW(tn_batch_norm_module_opts, __VA_ARGS__))
#define tn_nn_batch_norm2d(...) tn_nn_batch_norm2d_opts(TN__POS_KW(tn_batch_norm_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_batch_norm1d_str(int64_t num_features, const char *options);
TNDEF tn_module *tn_nn_batch_norm2d_str(int64_t num_features, const char *options);
TNDEF tn_module *tn_nn_batch_norm3d_opts(int64_t num_features, tn_batch_norm_module_opts opts);   /* [N, C, D, H, W] */
#define tn_nn_batch_norm3d(...) tn_nn_batch_norm3d_opts(TN__POS_KW(tn_batch_norm_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_batch_norm3d_str(int64_t num_features, const char *options);
/* nn.LazyBatchNorm1d/2d/3d (the Lazy modules above). */
TNDEF tn_module *tn_nn_lazy_batch_norm1d_opts(tn_batch_norm_module_opts opts);
TNDEF tn_module *tn_nn_lazy_batch_norm2d_opts(tn_batch_norm_module_opts opts);
TNDEF tn_module *tn_nn_lazy_batch_norm3d_opts(tn_batch_norm_module_opts opts);
#define tn_nn_lazy_batch_norm1d(...) tn_nn_lazy_batch_norm1d_opts(TN__KW(tn_batch_norm_module_opts, __VA_ARGS__))
#define tn_nn_lazy_batch_norm2d(...) tn_nn_lazy_batch_norm2d_opts(TN__KW(tn_batch_norm_module_opts, __VA_ARGS__))
#define tn_nn_lazy_batch_norm3d(...) tn_nn_lazy_batch_norm3d_opts(TN__KW(tn_batch_norm_module_opts, __VA_ARGS__))
/* nn.LayerNorm(normalized_shape): tn_nn_layer_norm(TN_SHAPE(4, 5), .eps = 1e-6), or a shape
   array and its length. */
#define TN_FIELDS_tn_layer_norm_module_opts(X) \
    X(D, eps,                1e-5, "") \
    X(B, elementwise_affine, true, "") \
    X(B, bias,               true, "")
TN__KW_STRUCT(tn_layer_norm_module_opts);
TNDEF tn_module *tn_nn_layer_norm_opts(const int64_t *normalized_shape, int n, tn_layer_norm_module_opts opts);
#define tn_nn_layer_norm(...) tn__nn_layer_norm(__VA_ARGS__)
#define tn__nn_layer_norm(normalized_shape, ...) tn_nn_layer_norm_opts(normalized_shape, TN__POS_KW(tn_layer_norm_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_layer_norm_str(const int64_t *normalized_shape, int n, const char *options);
/* nn.GroupNorm(num_groups, num_channels) */
#define TN_FIELDS_tn_group_norm_module_opts(X) \
    X(D, eps,    1e-5, "") \
    X(B, affine, true, "")
TN__KW_STRUCT(tn_group_norm_module_opts);
TNDEF tn_module *tn_nn_group_norm_opts(int64_t num_groups, int64_t num_channels, tn_group_norm_module_opts opts);
#define tn_nn_group_norm(num_groups, ...) tn_nn_group_norm_opts(num_groups, TN__POS_KW(tn_group_norm_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_group_norm_str(int64_t num_groups, int64_t num_channels, const char *options);
/* nn.Dropout / Dropout2d / Dropout3d(p=0.5, inplace=False): tn_nn_dropout(.p = 0.1).
   inplace is accepted and computes out of place. */
#define TN_FIELDS_tn_dropout_module_opts(X) \
    X(D, p,       0.5,   "") \
    X(B, inplace, false, "")
TN__KW_STRUCT(tn_dropout_module_opts);
TNDEF tn_module *tn_nn_dropout_opts(tn_dropout_module_opts opts);
#define tn_nn_dropout(...) tn_nn_dropout_opts(TN__KW(tn_dropout_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_dropout_str(const char *options);
TNDEF tn_module *tn_nn_dropout2d_opts(tn_dropout_module_opts opts);
#define tn_nn_dropout2d(...) tn_nn_dropout2d_opts(TN__KW(tn_dropout_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_dropout2d_str(const char *options);
TNDEF tn_module *tn_nn_dropout3d_opts(tn_dropout_module_opts opts);
#define tn_nn_dropout3d(...) tn_nn_dropout3d_opts(TN__KW(tn_dropout_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_dropout3d_str(const char *options);
/* nn.LocalResponseNorm(size), nn.ChannelShuffle(groups), nn.PixelShuffle / nn.PixelUnshuffle(factor). */
TNDEF tn_module *tn_nn_local_response_norm_opts(int64_t size, tn_lrn_opts opts);
#define tn_nn_local_response_norm(...) tn_nn_local_response_norm_opts(TN__POS_KW(tn_lrn_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_channel_shuffle(int64_t groups);
TNDEF tn_module *tn_nn_pixel_shuffle(int64_t upscale_factor);
TNDEF tn_module *tn_nn_pixel_unshuffle(int64_t downscale_factor);
/* Padding layers by PyTorch's class name: "ReflectionPad1d" ... "ReflectionPad3d",
   "ReplicationPad1d/2d/3d", "CircularPad1d/2d/3d", "ConstantPad1d/2d/3d" (value) and
   "ZeroPad1d/2d/3d"; padding: one int for every side (n = 1) or 2 per padded dim, the last
   dim first (F.pad's order): tn_nn_pad("ReflectionPad2d", TN_SHAPE(1, 1, 2, 0)),
   tn_nn_pad("ConstantPad1d", TN_SHAPE(2), .value = 3.5). value is ConstantPad's (0 when left
   out; PyTorch makes it required there), an error for the other kinds unless 0. */
#define TN_FIELDS_tn_pad_module_opts(X) \
    X(D, value, 0, "")
TN__KW_STRUCT(tn_pad_module_opts);
TNDEF tn_module *tn_nn_pad_opts(const char *name, const int64_t *padding, int n, tn_pad_module_opts opts);
#define tn_nn_pad(...) tn__nn_pad(__VA_ARGS__)
#define tn__nn_pad(name, padding, ...) tn_nn_pad_opts(name, padding, TN__POS_KW(tn_pad_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_pad_str(const char *name, const int64_t *padding, int n, const char *options);
/* nn.PReLU(num_parameters=1, init=0.25): tn_nn_prelu(), tn_nn_prelu(.num_parameters = 3, .init = 0.1); and nn.Threshold(threshold, value). */
#define TN_FIELDS_tn_prelu_opts(X) \
    X(I, num_parameters, 1,    "") \
    X(D, init,           0.25, "")
TN__KW_STRUCT(tn_prelu_opts);
TNDEF tn_module *tn_nn_prelu_opts(tn_prelu_opts opts);
#define tn_nn_prelu(...) tn_nn_prelu_opts(TN__KW(tn_prelu_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_prelu_str(const char *options);
TNDEF tn_module *tn_nn_threshold(double threshold, double value);
/* nn.Embedding: padding_idx TN_NONE is None; .padding_idx = 0 pads with row 0 (negative
   counts from num_embeddings). */
#define TN_FIELDS_tn_embedding_opts(X) \
    X(I, padding_idx, TN_NONE, "")
TN__KW_STRUCT(tn_embedding_opts);
TNDEF tn_module *tn_nn_embedding_opts(int64_t num_embeddings, int64_t embedding_dim, tn_embedding_opts opts);
#define tn_nn_embedding(num_embeddings, ...) tn_nn_embedding_opts(num_embeddings, TN__POS_KW(tn_embedding_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_embedding_str(int64_t num_embeddings, int64_t embedding_dim, const char *options);
/* nn.EmbeddingBag(num_embeddings, embedding_dim): weight N(0, 1) (padding_idx's row zero);
   the module's forward takes a 2-d input (a bag per row); tn_nn_embedding_bag_forward takes
   offsets and per_sample_weights too (NULL: None), as tn_embedding_bag. */
#define TN_FIELDS_tn_embedding_bag_layer_opts(X) \
    X(E, mode,                TN_BAG_MEAN, "sum|mean|max") \
    X(B, include_last_offset, false,       "") \
    X(I, padding_idx,         TN_NONE,     "")
TN__KW_STRUCT(tn_embedding_bag_layer_opts);
TNDEF tn_module *tn_nn_embedding_bag_opts(int64_t num_embeddings, int64_t embedding_dim, tn_embedding_bag_layer_opts opts);
#define tn_nn_embedding_bag(num_embeddings, ...) tn_nn_embedding_bag_opts(num_embeddings, TN__POS_KW(tn_embedding_bag_layer_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_embedding_bag_str(int64_t num_embeddings, int64_t embedding_dim, const char *options);
TNDEF tn_tensor *tn_nn_embedding_bag_forward(tn_module *m, tn_tensor *input, tn_tensor *offsets, tn_tensor *per_sample_weights);
/* nn.Flatten(start_dim=1, end_dim=-1): tn_nn_flatten(), tn_nn_flatten(.start_dim = 0). */
#define TN_FIELDS_tn_flatten_module_opts(X) \
    X(I, start_dim, 1,  "") \
    X(I, end_dim,   -1, "")
TN__KW_STRUCT(tn_flatten_module_opts);
TNDEF tn_module *tn_nn_flatten_opts(tn_flatten_module_opts opts);
#define tn_nn_flatten(...) tn_nn_flatten_opts(TN__KW(tn_flatten_module_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_flatten_str(const char *options);
TNDEF tn_module *tn_nn_unflatten(int64_t dim, const int64_t *sizes, int n);
TNDEF tn_module *tn_nn_identity(void);
/* Activations as modules, by PyTorch's class name: "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU",
   "CELU", "GELU", "SiLU", "Mish", "Softplus", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanh",
   "Sigmoid", "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "LogSigmoid", "Softsign",
   "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "RReLU". One struct holds every activation's keyword arguments
   with its PyTorch default (no two activations default a name differently); an option the
   named activation does not have is an error unless left at its default:
   tn_nn_activation("LeakyReLU", .negative_slope = 0.2), tn_nn_activation("GELU",
   .approximate = TN_APPROXIMATE_TANH), tn_nn_activation("Softmax", .dim = 1). dim TN_NONE
   (None) picks PyTorch's legacy implicit dim: 0 for 0-, 1- and 3-d inputs, else 1 (GLU's
   None is its default, -1). inplace is accepted and computes out of place. RReLU draws its
   slopes when training, else uses their mean. */
#define TN_FIELDS_tn_activation_opts(X) \
    X(B, inplace,        false, "") \
    X(D, negative_slope, 0.01,  "") \
    X(D, alpha,          1.0,   "") \
    X(E, approximate,    TN_APPROXIMATE_NONE, "none|tanh") \
    X(D, beta,           1.0,   "") \
    X(D, threshold,      20.0,  "") \
    X(D, min_val,        -1.0,  "") \
    X(D, max_val,        1.0,   "") \
    X(I, dim,            TN_NONE, "") \
    X(D, lambd,          0.5,   "") \
    X(D, lower,          0.125, "") \
    X(D, upper,          1.0 / 3, "")
TN__KW_STRUCT(tn_activation_opts);
TNDEF tn_module *tn_nn_activation_opts(const char *name, tn_activation_opts opts);
#define tn_nn_activation(...) tn_nn_activation_opts(TN__POS_KW(tn_activation_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_activation_str(const char *name, const char *options);
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

/* nn.RNN / nn.LSTM / nn.GRU: tn_nn_lstm(10, 20, .num_layers = 2, .batch_first = true). Options
   as PyTorch's: dropout between layers, when training; nonlinearity is RNN's only, proj_size
   LSTM's only (either, given to another kind, is an error). Parameters weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}
   (weight_hr_l{k} with proj_size), "_reverse" for the backward direction; all U(-1/sqrt(hidden),
   1/sqrt(hidden)). The module's single-input forward returns the output only. */
enum { TN_NONLINEARITY_TANH = 0, TN_NONLINEARITY_RELU };
#define TN_FIELDS_tn_rnn_opts(X) \
    X(I, num_layers,    1,     "") \
    X(E, nonlinearity,  TN_NONLINEARITY_TANH, "tanh|relu") \
    X(B, bias,          true,  "") \
    X(B, batch_first,   false, "") \
    X(D, dropout,       0.0,   "") \
    X(B, bidirectional, false, "") \
    X(I, proj_size,     0,     "")
TN__KW_STRUCT(tn_rnn_opts);
TNDEF tn_module *tn_nn_rnn_opts(int64_t input_size, int64_t hidden_size, tn_rnn_opts opts);
TNDEF tn_module *tn_nn_lstm_opts(int64_t input_size, int64_t hidden_size, tn_rnn_opts opts);
TNDEF tn_module *tn_nn_gru_opts(int64_t input_size, int64_t hidden_size, tn_rnn_opts opts);
#define tn_nn_rnn(input_size, ...) tn_nn_rnn_opts(input_size, TN__POS_KW(tn_rnn_opts, __VA_ARGS__))
#define tn_nn_lstm(input_size, ...) tn_nn_lstm_opts(input_size, TN__POS_KW(tn_rnn_opts, __VA_ARGS__))
#define tn_nn_gru(input_size, ...) tn_nn_gru_opts(input_size, TN__POS_KW(tn_rnn_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_rnn_str(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_lstm_str(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_gru_str(int64_t input_size, int64_t hidden_size, const char *options);
/* RNN and GRU: x [L, N, H_in] ([N, L, H_in] with batch_first) or unbatched [L, H_in]; h0
   [D*num_layers, N, H_out] or [D*num_layers, H_out], NULL = zeros. Returns the output
   [L, N, D*H_out] ([N, L, D*H_out], [L, D*H_out]); *h_n (may be NULL) receives the final
   states, shaped as h0. D = 2 when bidirectional. */
TNDEF tn_tensor *tn_nn_rnn_forward(tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor **h_n);
/* LSTM: as tn_nn_rnn_forward with the cell state c0 [D*num_layers, N, hidden] (h0 and c0 both
   given or both NULL); H_out is proj_size when set. */
TNDEF tn_tensor *tn_nn_lstm_forward(tn_module *m, tn_tensor *x, tn_tensor *h0, tn_tensor *c0, tn_tensor **h_n, tn_tensor **c_n);
/* nn.RNNCell (bias, nonlinearity), nn.LSTMCell, nn.GRUCell (bias; nonlinearity is an error);
   parameters weight_ih, weight_hh, bias_ih, bias_hh. Forwards take x [N, in] or [in]; NULL
   states are zeros. */
#define TN_FIELDS_tn_rnn_cell_opts(X) \
    X(B, bias,         true, "") \
    X(E, nonlinearity, TN_NONLINEARITY_TANH, "tanh|relu")
TN__KW_STRUCT(tn_rnn_cell_opts);
TNDEF tn_module *tn_nn_rnn_cell_opts(int64_t input_size, int64_t hidden_size, tn_rnn_cell_opts opts);
TNDEF tn_module *tn_nn_lstm_cell_opts(int64_t input_size, int64_t hidden_size, tn_rnn_cell_opts opts);
TNDEF tn_module *tn_nn_gru_cell_opts(int64_t input_size, int64_t hidden_size, tn_rnn_cell_opts opts);
#define tn_nn_rnn_cell(input_size, ...) tn_nn_rnn_cell_opts(input_size, TN__POS_KW(tn_rnn_cell_opts, __VA_ARGS__))
#define tn_nn_lstm_cell(input_size, ...) tn_nn_lstm_cell_opts(input_size, TN__POS_KW(tn_rnn_cell_opts, __VA_ARGS__))
#define tn_nn_gru_cell(input_size, ...) tn_nn_gru_cell_opts(input_size, TN__POS_KW(tn_rnn_cell_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_rnn_cell_str(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_lstm_cell_str(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_module *tn_nn_gru_cell_str(int64_t input_size, int64_t hidden_size, const char *options);
TNDEF tn_tensor *tn_nn_rnn_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h);        /* RNNCell (or GRUCell) */
TNDEF tn_tensor *tn_nn_lstm_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h, tn_tensor *c, tn_tensor **c_out);
TNDEF tn_tensor *tn_nn_gru_cell_forward(tn_module *m, tn_tensor *x, tn_tensor *h);        /* GRUCell (or RNNCell) */

/* nn.MultiheadAttention(embed_dim, num_heads): kdim and vdim TN_NONE are None (embed_dim).
   Parameters as PyTorch's state dict: in_proj_weight
   [3E, E] (xavier_uniform; q_proj_weight, k_proj_weight, v_proj_weight when kdim or vdim differ
   from E), in_proj_bias [3E] (zeros), bias_k, bias_v [1, 1, E] (add_bias_kv), child out_proj. */
#define TN_FIELDS_tn_multihead_attention_opts(X) \
    X(D, dropout,       0.0,     "") \
    X(B, bias,          true,    "") \
    X(B, add_bias_kv,   false,   "") \
    X(B, add_zero_attn, false,   "") \
    X(I, kdim,          TN_NONE, "") \
    X(I, vdim,          TN_NONE, "") \
    X(B, batch_first,   false,   "")
TN__KW_STRUCT(tn_multihead_attention_opts);
TNDEF tn_module *tn_nn_multihead_attention_opts(int64_t embed_dim, int64_t num_heads, tn_multihead_attention_opts opts);
#define tn_nn_multihead_attention(embed_dim, ...) tn_nn_multihead_attention_opts(embed_dim, TN__POS_KW(tn_multihead_attention_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_multihead_attention_str(int64_t embed_dim, int64_t num_heads, const char *options);
/* q [L, N, E], k [S, N, kdim], v [S, N, vdim] ([N, L, E] ... with batch_first) or unbatched
   [L, E], [S, kdim], [S, vdim]. key_padding_mask [N, S] / [S] and attn_mask [L, S] or
   [N*num_heads, L, S]: bool masks are True where attention is NOT allowed (the opposite of
   tn_scaled_dot_product_attention's bool mask); floating masks are added to the scores. is_causal
   with attn_mask NULL masks keys after the query position (with attn_mask, the mask is used).
   Returns [L, N, E] (as q); with need_weights, *attn_weights (may be NULL) receives the
   attention weights [N, L, S] averaged over heads or [N, num_heads, L, S] (unbatched: no N).
   forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
   average_attn_weights=True, is_causal=False) as keyword fields after attn_weights:
   tn_nn_mha_forward(m, q, k, v, &w, .attn_mask = mask), tn_nn_mha_forward(m, q, k, v, NULL,
   .need_weights = false) (without weights the fused kernel may run). */
#define TN_FIELDS_tn_mha_forward_opts(X) \
    X(T, key_padding_mask,     NULL,  "") \
    X(B, need_weights,         true,  "") \
    X(T, attn_mask,            NULL,  "") \
    X(B, average_attn_weights, true,  "") \
    X(B, is_causal,            false, "")
TN__KW_STRUCT(tn_mha_forward_opts);
TNDEF tn_tensor *tn_nn_mha_forward_opts(tn_module *m, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor **attn_weights,
                                        tn_mha_forward_opts opts);
#define tn_nn_mha_forward(m, ...) tn__nn_mha_forward(m, __VA_ARGS__)
#define tn__nn_mha_forward(m, q, k, v, ...) tn_nn_mha_forward_opts(m, q, k, v, TN__POS_KW(tn_mha_forward_opts, __VA_ARGS__))
/* nn.Transformer.generate_square_subsequent_mask: [sz, sz], -inf above the diagonal, 0 elsewhere. */
TNDEF tn_tensor *tn_nn_generate_square_subsequent_mask(int64_t sz, tn_dtype dtype);

/* nn.TransformerEncoderLayer / nn.TransformerDecoderLayer(d_model, nhead): one struct for both
   (tn_nn_transformer_encoder_layer(512, 8, .dropout = 0, .batch_first = true)). Children as PyTorch's (self_attn, [multihead_attn,] linear1,
   dropout, linear2, norm1, norm2, [norm3,] dropout1, dropout2[, dropout3]). Masks as
   tn_nn_mha_forward's; NULL for none. The encoder layer's single-input forward uses no mask.
   Their forwards take PyTorch's masks and is_causal as keyword fields:
   tn_nn_transformer_encoder_layer_forward(m, src, .src_mask = mask, .is_causal = true). */
enum { TN_ACTIVATION_RELU = 0, TN_ACTIVATION_GELU };
#define TN_FIELDS_tn_transformer_layer_opts(X) \
    X(I, dim_feedforward, 2048,  "") \
    X(D, dropout,         0.1,   "") \
    X(E, activation,      TN_ACTIVATION_RELU, "relu|gelu") \
    X(D, layer_norm_eps,  1e-5,  "") \
    X(B, batch_first,     false, "") \
    X(B, norm_first,      false, "") \
    X(B, bias,            true,  "")
TN__KW_STRUCT(tn_transformer_layer_opts);
TNDEF tn_module *tn_nn_transformer_encoder_layer_opts(int64_t d_model, int64_t nhead, tn_transformer_layer_opts opts);
TNDEF tn_module *tn_nn_transformer_decoder_layer_opts(int64_t d_model, int64_t nhead, tn_transformer_layer_opts opts);
#define tn_nn_transformer_encoder_layer(d_model, ...) tn_nn_transformer_encoder_layer_opts(d_model, TN__POS_KW(tn_transformer_layer_opts, __VA_ARGS__))
#define tn_nn_transformer_decoder_layer(d_model, ...) tn_nn_transformer_decoder_layer_opts(d_model, TN__POS_KW(tn_transformer_layer_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_transformer_encoder_layer_str(int64_t d_model, int64_t nhead, const char *options);
TNDEF tn_module *tn_nn_transformer_decoder_layer_str(int64_t d_model, int64_t nhead, const char *options);
/* TransformerEncoderLayer.forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False) */
#define TN_FIELDS_tn_encoder_layer_forward_opts(X) \
    X(T, src_mask,             NULL,  "") \
    X(T, src_key_padding_mask, NULL,  "") \
    X(B, is_causal,            false, "")
TN__KW_STRUCT(tn_encoder_layer_forward_opts);
TNDEF tn_tensor *tn_nn_transformer_encoder_layer_forward_opts(tn_module *m, tn_tensor *src, tn_encoder_layer_forward_opts opts);
#define tn_nn_transformer_encoder_layer_forward(m, ...) \
    tn_nn_transformer_encoder_layer_forward_opts(m, TN__POS_KW(tn_encoder_layer_forward_opts, __VA_ARGS__))
/* TransformerDecoderLayer.forward(tgt, memory, tgt_mask=None, memory_mask=None,
   tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False) */
#define TN_FIELDS_tn_decoder_layer_forward_opts(X) \
    X(T, tgt_mask,                NULL,  "") \
    X(T, memory_mask,             NULL,  "") \
    X(T, tgt_key_padding_mask,    NULL,  "") \
    X(T, memory_key_padding_mask, NULL,  "") \
    X(B, tgt_is_causal,           false, "")
TN__KW_STRUCT(tn_decoder_layer_forward_opts);
TNDEF tn_tensor *tn_nn_transformer_decoder_layer_forward_opts(tn_module *m, tn_tensor *tgt, tn_tensor *memory,
                                                              tn_decoder_layer_forward_opts opts);
#define tn_nn_transformer_decoder_layer_forward(m, ...) tn__nn_transformer_decoder_layer_forward(m, __VA_ARGS__)
#define tn__nn_transformer_decoder_layer_forward(m, tgt, ...) \
    tn_nn_transformer_decoder_layer_forward_opts(m, tgt, TN__POS_KW(tn_decoder_layer_forward_opts, __VA_ARGS__))
/* nn.TransformerEncoder / nn.TransformerDecoder: children "layers" (a ModuleList of num_layers
   deep copies of layer, all starting with its weights, as PyTorch's _get_clones) and "norm" (if
   not NULL). Both modules are taken over: layer is freed after copying, norm becomes the child;
   on error both are freed. norm=None is the default: tn_nn_transformer_encoder(layer, 6),
   tn_nn_transformer_encoder(layer, 6, .norm = tn_nn_layer_norm(TN_SHAPE(512))). A module
   cannot come from the option text (the _str forms take no norm). The encoder's
   enable_nested_tensor=True and mask_check=True are accepted and change nothing: they only
   choose PyTorch's nested-tensor fast path (whose results are the same), and there are no
   nested tensors here. */
#define TN_FIELDS_tn_transformer_stack_opts(X) \
    X(MOD, norm, NULL, "")
TN__KW_STRUCT(tn_transformer_stack_opts);
#define TN_FIELDS_tn_transformer_encoder_opts(X) \
    X(MOD, norm,                 NULL, "") \
    X(B,   enable_nested_tensor, true, "") \
    X(B,   mask_check,           true, "")
TN__KW_STRUCT(tn_transformer_encoder_opts);
TNDEF tn_module *tn_nn_transformer_encoder_opts(tn_module *encoder_layer, int64_t num_layers, tn_transformer_encoder_opts opts);
#define tn_nn_transformer_encoder(encoder_layer, ...) tn_nn_transformer_encoder_opts(encoder_layer, TN__POS_KW(tn_transformer_encoder_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_transformer_encoder_str(tn_module *encoder_layer, int64_t num_layers, const char *options);
/* TransformerEncoder.forward(src, mask=None, src_key_padding_mask=None, is_causal=None):
   .is_causal -1 (None): PyTorch's detection from mask (a causal mask is used as one) */
#define TN_FIELDS_tn_encoder_forward_opts(X) \
    X(T,  mask,                 NULL, "") \
    X(T,  src_key_padding_mask, NULL, "") \
    X(OB, is_causal,            -1,   "")
TN__KW_STRUCT(tn_encoder_forward_opts);
TNDEF tn_tensor *tn_nn_transformer_encoder_forward_opts(tn_module *m, tn_tensor *src, tn_encoder_forward_opts opts);
#define tn_nn_transformer_encoder_forward(m, ...) tn_nn_transformer_encoder_forward_opts(m, TN__POS_KW(tn_encoder_forward_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_transformer_decoder_opts(tn_module *decoder_layer, int64_t num_layers, tn_transformer_stack_opts opts);
#define tn_nn_transformer_decoder(decoder_layer, ...) tn_nn_transformer_decoder_opts(decoder_layer, TN__POS_KW(tn_transformer_stack_opts, __VA_ARGS__))
TNDEF tn_module *tn_nn_transformer_decoder_str(tn_module *decoder_layer, int64_t num_layers, const char *options);
/* TransformerDecoder.forward(tgt, memory, tgt_mask=None, memory_mask=None,
   tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None): .tgt_is_causal
   -1 (None) as the encoder's is_causal */
#define TN_FIELDS_tn_decoder_forward_opts(X) \
    X(T,  tgt_mask,                NULL, "") \
    X(T,  memory_mask,             NULL, "") \
    X(T,  tgt_key_padding_mask,    NULL, "") \
    X(T,  memory_key_padding_mask, NULL, "") \
    X(OB, tgt_is_causal,           -1,   "")
TN__KW_STRUCT(tn_decoder_forward_opts);
TNDEF tn_tensor *tn_nn_transformer_decoder_forward_opts(tn_module *m, tn_tensor *tgt, tn_tensor *memory, tn_decoder_forward_opts opts);
#define tn_nn_transformer_decoder_forward(m, ...) tn__nn_transformer_decoder_forward(m, __VA_ARGS__)
#define tn__nn_transformer_decoder_forward(m, tgt, ...) \
    tn_nn_transformer_decoder_forward_opts(m, tgt, TN__POS_KW(tn_decoder_forward_opts, __VA_ARGS__))

/* ======================================================================= */
/* 13. optimizers                                                           */
/* ======================================================================= */
/* torch.optim with PyTorch 2's algorithms: an optimizer updates leaf tensors (float32 or
   float64, on the CPU or, through the GPU unit's step kernels, on the GPU; LBFGS on the CPU
   only) from their .grad. One macro per optimizer, named as PyTorch's class, takes
   the parameters and PyTorch's keyword arguments (section 1):
       tn_optim *o = tn_optim_sgd(params, n, .lr = 0.1, .momentum = 0.9, .nesterov = true);
       tn_optim *a = tn_optim_adamw(params, n, .lr = 3e-4, .betas = {0.9, 0.95});
   An invalid value is an error, as in PyTorch. An optimizer retains its parameters until
   tn_optim_free. A scheduler borrows its optimizer (which must outlive it) and writes the
   groups' "lr". Guide: docs/optim.md. */
typedef struct tn_optim tn_optim;
enum { TN_LINE_SEARCH_NONE = 0, TN_LINE_SEARCH_STRONG_WOLFE };   /* LBFGS's line_search_fn */
/* Every optimizer's keyword arguments in one struct. Its fields start as "not given" (NAN,
   TN_NONE, -1, betas {NAN, NAN}) rather than as one kind's defaults, because the defaults
   differ by kind and a parameter group inherits: a field not given takes the kind's PyTorch
   default (SGD's lr 1e-3, Adadelta's 1.0, AdamW's weight_decay 1e-2, ...) when an optimizer
   is created, and the optimizer's own value in tn_optim_add_param_group. Any value you give
   is used as given, zero included (.weight_decay = 0 for AdamW, .momentum = 0). A field the
   kind does not have is an error when given (the message lists the kind's names). foreach
   and fused are accepted and change nothing; differentiable only as false, capturable too
   except for Adam and AdamW (true: the step count on the GPU, the step capturable).
   The bools are ints: true, false, or -1 (not given). */
#define TN_FIELDS_tn_optim_opts(X) \
    X(D,  lr,                        NAN,     "") \
    X(D,  momentum,                  NAN,     "") \
    X(D,  dampening,                 NAN,     "") \
    X(D,  weight_decay,              NAN,     "") \
    X(OB, nesterov,                  -1,      "") \
    X(D2, betas,                     TN__NAN2, "") \
    X(D,  eps,                       NAN,     "") \
    X(OB, amsgrad,                   -1,      "") \
    X(D,  alpha,                     NAN,     "") \
    X(OB, centered,                  -1,      "") \
    X(D,  lr_decay,                  NAN,     "") \
    X(D,  initial_accumulator_value, NAN,     "") \
    X(D,  rho,                       NAN,     "") \
    X(D,  momentum_decay,            NAN,     "") \
    X(OB, decoupled_weight_decay,    -1,      "") \
    X(I,  max_iter,                  TN_NONE, "") \
    X(I,  max_eval,                  TN_NONE, "") \
    X(D,  tolerance_grad,            NAN,     "") \
    X(D,  tolerance_change,          NAN,     "") \
    X(I,  history_size,              TN_NONE, "") \
    X(E,  line_search_fn,            -1,      "None|strong_wolfe") \
    X(OB, maximize,                  -1,      "") \
    X(OB, foreach,                   -1,      "") \
    X(OB, fused,                     -1,      "") \
    X(OB, capturable,                -1,      "") \
    X(OB, differentiable,            -1,      "")
TN__KW_STRUCT(tn_optim_opts);
/* kind: "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
   "RAdam", "LBFGS". params: leaf tensors that require grad (borrowed; the optimizer
   retains them), one group. NULL with an error on a bad kind, option or parameter. The
   _str form takes the keyword arguments as text ("lr=0.01, betas=(0.9, 0.99)"); there an
   option the kind does not have is an unknown name. */
TNDEF tn_optim *tn_optim_create_opts(const char *kind, tn_tensor *const *params, int n, tn_optim_opts opts);
TNDEF tn_optim *tn_optim_create_str(const char *kind, tn_tensor *const *params, int n, const char *options);
#define tn_optim_create(kind, ...) tn__optim_kw(kind, __VA_ARGS__)      /* the kind chosen at run time */
#define tn_optim_sgd(...) tn__optim_kw("SGD", __VA_ARGS__)
#define tn_optim_adam(...) tn__optim_kw("Adam", __VA_ARGS__)
#define tn_optim_adamw(...) tn__optim_kw("AdamW", __VA_ARGS__)
#define tn_optim_rmsprop(...) tn__optim_kw("RMSprop", __VA_ARGS__)
#define tn_optim_adagrad(...) tn__optim_kw("Adagrad", __VA_ARGS__)
#define tn_optim_adadelta(...) tn__optim_kw("Adadelta", __VA_ARGS__)
#define tn_optim_adamax(...) tn__optim_kw("Adamax", __VA_ARGS__)
#define tn_optim_nadam(...) tn__optim_kw("NAdam", __VA_ARGS__)
#define tn_optim_radam(...) tn__optim_kw("RAdam", __VA_ARGS__)
#define tn_optim_lbfgs(...) tn__optim_kw("LBFGS", __VA_ARGS__)
#define tn__optim_kw(kind, params, ...) tn_optim_create_opts(kind, params, TN__POS_KW(tn_optim_opts, __VA_ARGS__))
/* A new parameter group (optimizer.add_param_group): the fields given override the
   optimizer's defaults (the options it was created with), the others keep them:
   tn_optim_add_param_group(o, head, 2, .lr = 0.01). 0, or -1 with an error (a parameter
   already in a group; LBFGS). */
TNDEF int tn_optim_add_param_group_opts(tn_optim *o, tn_tensor *const *params, int n, tn_optim_opts opts);
TNDEF int tn_optim_add_param_group_str(tn_optim *o, tn_tensor *const *params, int n, const char *options);
#define tn_optim_add_param_group(o, ...) tn__optim_group_kw(o, __VA_ARGS__)
#define tn__optim_group_kw(o, params, ...) tn_optim_add_param_group_opts(o, params, TN__POS_KW(tn_optim_opts, __VA_ARGS__))
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
/* Optimizer.zero_grad(set_to_none=True) (PyTorch 2's default; 1.13's was False):
   tn_optim_zero_grad(o) sets .grad = NULL on every parameter; tn_optim_zero_grad(o,
   .set_to_none = false) zeroes the grads in place (detached). The _str form returns 0, or
   -1 on bad text. */
TNDEF void tn_optim_zero_grad_opts(tn_optim *o, tn_zero_grad_opts opts);
#define tn_optim_zero_grad(...) tn_optim_zero_grad_opts(TN__POS_KW(tn_zero_grad_opts, __VA_ARGS__))
TNDEF int tn_optim_zero_grad_str(tn_optim *o, const char *options);
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
   step: it records "initial_lr" in each group and sets the epoch-0 learning rate. One
   macro per scheduler, named as PyTorch's class, takes the optimizer and the scheduler's
   keyword arguments, the required ones included (PyTorch's positional ones, by name):
       tn_lr_scheduler *s = tn_lr_scheduler_step_lr(o, .step_size = 30, .gamma = 0.5);
       tn_lr_scheduler_multi_step_lr(o, .milestones = TN_INTS(30, 80));
       tn_lr_scheduler_one_cycle_lr(o, .max_lr = 0.1, .total_steps = 1000);
       tn_lr_scheduler_reduce_lr_on_plateau(o, .mode = TN_MODE_MAX, .patience = 5);
   As tn_optim_opts, one struct serves every kind and its fields start as "not given": each
   kind fills in its own PyTorch defaults (gamma 0.1 for StepLR, factor 1/3 for ConstantLR
   but 0.1 for ReduceLROnPlateau, ...); a required one left out (StepLR's step_size,
   MultiStepLR's milestones, ExponentialLR's gamma, CosineAnnealingLR's T_max,
   CosineAnnealingWarmRestarts' T_0, OneCycleLR's max_lr) and a field the kind does not have
   are errors. The _groups lists give one value per parameter group (PyTorch's lists for
   max_lr, base_momentum, max_momentum and min_lr; the text "max_lr=(0.1, 0.01)" sets
   max_lr_groups). */
typedef struct tn_lr_scheduler tn_lr_scheduler;
enum { TN_ANNEAL_COS = 0, TN_ANNEAL_LINEAR };         /* OneCycleLR's anneal_strategy */
enum { TN_MODE_MIN = 0, TN_MODE_MAX };                /* ReduceLROnPlateau's mode */
enum { TN_THRESHOLD_REL = 0, TN_THRESHOLD_ABS };      /* ReduceLROnPlateau's threshold_mode */
#define TN_FIELDS_tn_lr_scheduler_opts(X) \
    X(I,  step_size,            TN_NONE, "") \
    X(IL, milestones,           TN__LIST0,     "") \
    X(D,  gamma,                NAN,     "") \
    X(D,  T_max,                NAN,     "") \
    X(D,  eta_min,              NAN,     "") \
    X(I,  T_0,                  TN_NONE, "") \
    X(I,  T_mult,               TN_NONE, "") \
    X(D,  start_factor,         NAN,     "") \
    X(D,  end_factor,           NAN,     "") \
    X(I,  total_iters,          TN_NONE, "") \
    X(D,  factor,               NAN,     "") \
    X(D,  power,                NAN,     "") \
    X(D,  max_lr,               NAN,     "") \
    X(DL, max_lr_groups,        TN__LIST0,     "") \
    X(I,  total_steps,          TN_NONE, "") \
    X(I,  epochs,               TN_NONE, "") \
    X(I,  steps_per_epoch,      TN_NONE, "") \
    X(D,  pct_start,            NAN,     "") \
    X(E,  anneal_strategy,      -1,      "cos|linear") \
    X(OB, cycle_momentum,       -1,      "") \
    X(D,  base_momentum,        NAN,     "") \
    X(DL, base_momentum_groups, TN__LIST0,     "") \
    X(D,  max_momentum,         NAN,     "") \
    X(DL, max_momentum_groups,  TN__LIST0,     "") \
    X(D,  div_factor,           NAN,     "") \
    X(D,  final_div_factor,     NAN,     "") \
    X(OB, three_phase,          -1,      "") \
    X(E,  mode,                 -1,      "min|max") \
    X(I,  patience,             TN_NONE, "") \
    X(D,  threshold,            NAN,     "") \
    X(E,  threshold_mode,       -1,      "rel|abs") \
    X(I,  cooldown,             TN_NONE, "") \
    X(D,  min_lr,               NAN,     "") \
    X(DL, min_lr_groups,        TN__LIST0,     "") \
    X(D,  eps,                  NAN,     "") \
    X(I,  last_epoch,           TN_NONE, "")
TN__KW_STRUCT(tn_lr_scheduler_opts);
/* kind: "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
   "CosineAnnealingWarmRestarts", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR",
   "ReduceLROnPlateau"; the _str form takes the keyword arguments as text ("step_size=30,
   gamma=0.1", "milestones=(30, 80)", "mode='max', patience=5"). */
TNDEF tn_lr_scheduler *tn_lr_scheduler_create_opts(tn_optim *o, const char *kind, tn_lr_scheduler_opts opts);
TNDEF tn_lr_scheduler *tn_lr_scheduler_create_str(tn_optim *o, const char *kind, const char *options);
#define tn_lr_scheduler_step_lr(...) tn__sched_kw("StepLR", __VA_ARGS__)
#define tn_lr_scheduler_multi_step_lr(...) tn__sched_kw("MultiStepLR", __VA_ARGS__)
#define tn_lr_scheduler_exponential_lr(...) tn__sched_kw("ExponentialLR", __VA_ARGS__)
#define tn_lr_scheduler_cosine_annealing_lr(...) tn__sched_kw("CosineAnnealingLR", __VA_ARGS__)
#define tn_lr_scheduler_cosine_annealing_warm_restarts(...) tn__sched_kw("CosineAnnealingWarmRestarts", __VA_ARGS__)
#define tn_lr_scheduler_linear_lr(...) tn__sched_kw("LinearLR", __VA_ARGS__)
#define tn_lr_scheduler_constant_lr(...) tn__sched_kw("ConstantLR", __VA_ARGS__)
#define tn_lr_scheduler_polynomial_lr(...) tn__sched_kw("PolynomialLR", __VA_ARGS__)
#define tn_lr_scheduler_one_cycle_lr(...) tn__sched_kw("OneCycleLR", __VA_ARGS__)
#define tn_lr_scheduler_reduce_lr_on_plateau(...) tn__sched_kw("ReduceLROnPlateau", __VA_ARGS__)
#define tn__sched_kw(kind, ...) tn__lr_scheduler_kw(kind, TN__POS_KW(tn_lr_scheduler_opts, __VA_ARGS__))
static inline tn_lr_scheduler *tn__lr_scheduler_kw(const char *kind, tn_optim *o, tn_lr_scheduler_opts opts) {
    return tn_lr_scheduler_create_opts(o, kind, opts);
}
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

/* torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type=2.0,
   error_if_nonfinite=False, foreach=None): scales the grads so that their joint norm is at
   most max_norm (coefficient max_norm / (norm + 1e-6), as PyTorch); returns the total norm
   before clipping (NAN on error). .norm_type INFINITY for the max-norm. Parameters without
   a grad are skipped (none: returns 0). error_if_nonfinite: a nan or inf total norm is
   PyTorch's error and no grad changes. foreach (None, true, false) is accepted and changes
   nothing: it only picks PyTorch's kernels. tn_clip_grad_norm_(ps, n, 1.0, .norm_type = 1). */
#define TN_FIELDS_tn_clip_grad_norm_fn_opts(X) \
    X(D,  norm_type,          2.0,   "") \
    X(B,  error_if_nonfinite, false, "") \
    X(OB, foreach,            -1,    "")
TN__KW_STRUCT(tn_clip_grad_norm_fn_opts);
TNDEF double tn_clip_grad_norm__opts(tn_tensor *const *params, int n, double max_norm, tn_clip_grad_norm_fn_opts opts);
#define tn_clip_grad_norm_(params, ...) tn__clip_grad_norm_(params, __VA_ARGS__)
#define tn__clip_grad_norm_(params, n, ...) tn_clip_grad_norm__opts(params, n, TN__POS_KW(tn_clip_grad_norm_fn_opts, __VA_ARGS__))
TNDEF double tn_clip_grad_norm__str(tn_tensor *const *params, int n, double max_norm, const char *options);
TNDEF int tn_clip_grad_value_(tn_tensor *const *params, int n, double clip_value); /* grads clamped to [-clip_value, clip_value] */

/* Update rules, one element at a time, shared by the CPU step and tensor_cuda.cu. Each
   follows the tensor ops of PyTorch 2's _single_tensor_<optimizer> in order, with the
   per-step scalars (bias corrections, step sizes) computed by the caller in double and
   passed in the element type, as PyTorch's kernels receive them. State arguments are
   read and written; the new parameter value is returned. Where torch's CPU kernel is one
   fused multiply-add, so is the rule: x.add(y, alpha=c) is fma(c, y, x) (vec::fmadd, and
   the scalar a + alpha * b its compiler contracts), x.addcmul(y, z, value=c) fma(c * y, z, x),
   lerp fma(w, b - a, a) or fma(-(b - a), 1 - w, b); addcdiv stays x + c * y / z. */
TN__NO_CONTRACT_BEGIN
#define TN_OPTF_MAXIMIZE 1        /* the gradient is negated first */
#define TN_OPTF_WEIGHT_DECAY 2    /* weight_decay != 0: grad += weight_decay * param */
#define TN_OPTF_MOMENTUM 4        /* SGD: momentum != 0; RMSprop: momentum > 0 */
#define TN_OPTF_NESTEROV 8
#define TN_OPTF_FIRST 16          /* SGD: no momentum buffer yet (it starts as the gradient) */
#define TN_OPTF_AMSGRAD 32
#define TN_OPTF_CENTERED 64
#define TN_OPTF_DECOUPLED 128     /* AdamW, NAdam/RAdam decoupled_weight_decay: param *= 1 - lr*weight_decay */
#define TN_OPTF_RECTIFY 256       /* RAdam: rho_t > 5 */
/* @template TN__DEFINE_OPTIM_RULES(T, S, F) */
/* torch.lerp(a, b, w), exact at both ends, fused as torch's lerp_vec (fmadd / fnmadd) */
TN_HD static inline T tn_optim_lerp_##S(T a, T b, T w) {
    return fabs##F(w) < (T)0.5 ? fma##F(w, b - a, a) : fma##F(-(b - a), (T)1 - w, b); }
/* x.mul_(beta).addcmul_(g, g, value=c): the product rounded, then one fma */
TN_HD static inline T tn__optim_sq_avg_##S(T x, T beta, T c, T g) { return fma##F(c * g, g, x * beta); }
/* torch.maximum: NaN propagates */
TN_HD static inline T tn_optim_max_##S(T a, T b) { return a != a ? a : b != b ? b : a > b ? a : b; }
TN_HD static inline T tn__optim_grad_##S(T *p, T g, T wd, T decay, int f) {
    if (f & TN_OPTF_MAXIMIZE) g = -g;
    if (f & TN_OPTF_DECOUPLED) *p = *p * decay;
    else if (f & TN_OPTF_WEIGHT_DECAY) g = fma##F(wd, *p, g);   /* grad.add(param, alpha=weight_decay) */
    return g; }
/* SGD as torch's _single_tensor_sgd: each x.add(y, alpha=c) there is one fused multiply-add
   (torch's add kernel: vec::fmadd, and its scalar a + alpha * b contracted by its compiler) */
TN_HD static inline T tn_sgd_update_##S(T p, T g, T *buf, T lr, T momentum, T one_minus_dampening, T wd, int f) {
    if (f & TN_OPTF_MAXIMIZE) g = -g;
    if (f & TN_OPTF_WEIGHT_DECAY) g = fma##F(wd, p, g);
    if (f & TN_OPTF_MOMENTUM) {
        T b = (f & TN_OPTF_FIRST) ? g : fma##F(one_minus_dampening, g, *buf * momentum);
        *buf = b;
        g = (f & TN_OPTF_NESTEROV) ? fma##F(momentum, b, g) : b;
    }
    return fma##F(-lr, g, p); }
/* Adam, and AdamW with TN_OPTF_DECOUPLED (decay = 1 - lr*weight_decay) */
TN_HD static inline T tn_adam_update_##S(T p, T g, T *m, T *v, T *vmax, T wd, T decay, T one_minus_beta1,
                                         T beta2, T one_minus_beta2, T bias_correction2_sqrt, T eps, T neg_step_size, int f) {
    g = tn__optim_grad_##S(&p, g, wd, decay, f);
    *m = tn_optim_lerp_##S(*m, g, one_minus_beta1);
    *v = tn__optim_sq_avg_##S(*v, beta2, one_minus_beta2, g);
    T den;
    if (f & TN_OPTF_AMSGRAD) { *vmax = tn_optim_max_##S(*vmax, *v); den = sqrt##F(*vmax) / bias_correction2_sqrt + eps; }
    else den = sqrt##F(*v) / bias_correction2_sqrt + eps;
    return p + neg_step_size * *m / den; }
TN_HD static inline T tn_rmsprop_update_##S(T p, T g, T *square_avg, T *grad_avg, T *buf, T wd, T alpha,
                                            T one_minus_alpha, T eps, T momentum, T lr, int f) {
    g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED);
    *square_avg = tn__optim_sq_avg_##S(*square_avg, alpha, one_minus_alpha, g);
    T avg;
    if (f & TN_OPTF_CENTERED) {
        *grad_avg = tn_optim_lerp_##S(*grad_avg, g, one_minus_alpha);
        avg = sqrt##F(fma##F(-*grad_avg, *grad_avg, *square_avg));   /* addcmul(value=-1) */
    } else avg = sqrt##F(*square_avg);
    avg = avg + eps;
    if (f & TN_OPTF_MOMENTUM) { *buf = *buf * momentum + g / avg; return fma##F(-lr, *buf, p); }
    return p + (-lr) * g / avg; }
/* clr = lr / (1 + (step - 1) * lr_decay) */
TN_HD static inline T tn_adagrad_update_##S(T p, T g, T *sum, T wd, T eps, T clr, int f) {
    g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED);
    *sum = fma##F(g, g, *sum);   /* addcmul_(g, g, value=1) */
    return p + (-clr) * g / (sqrt##F(*sum) + eps); }
TN_HD static inline T tn_adadelta_update_##S(T p, T g, T *square_avg, T *acc_delta, T wd, T rho,
                                             T one_minus_rho, T eps, T lr, int f) {
    g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED);
    *square_avg = tn__optim_sq_avg_##S(*square_avg, rho, one_minus_rho, g);
    T std = sqrt##F(*square_avg + eps);
    T delta = sqrt##F(*acc_delta + eps) / std * g;
    *acc_delta = tn__optim_sq_avg_##S(*acc_delta, rho, one_minus_rho, delta);
    return fma##F(-lr, delta, p); }
/* clr = lr / (1 - beta1^step) */
TN_HD static inline T tn_adamax_update_##S(T p, T g, T *m, T *exp_inf, T wd, T one_minus_beta1, T beta2,
                                           T eps, T clr, int f) {
    g = tn__optim_grad_##S(&p, g, wd, (T)1, f & ~TN_OPTF_DECOUPLED);
    *m = tn_optim_lerp_##S(*m, g, one_minus_beta1);
    *exp_inf = tn_optim_max_##S(*exp_inf * beta2, fabs##F(g) + eps);
    return p + (-clr) * *m / *exp_inf; }
/* c_grad = -lr (1 - mu) / (1 - mu_product), c_avg = -lr mu_next / (1 - mu_product mu_next) */
TN_HD static inline T tn_nadam_update_##S(T p, T g, T *m, T *v, T wd, T decay, T one_minus_beta1, T beta2,
                                          T one_minus_beta2, T bias_correction2, T eps, T c_grad, T c_avg, int f) {
    g = tn__optim_grad_##S(&p, g, wd, decay, f);
    *m = tn_optim_lerp_##S(*m, g, one_minus_beta1);
    *v = tn__optim_sq_avg_##S(*v, beta2, one_minus_beta2, g);
    T den = sqrt##F(*v / bias_correction2) + eps;
    p = p + c_grad * g / den;
    return p + c_avg * *m / den; }
/* rect: the variance rectification term, used with TN_OPTF_RECTIFY */
TN_HD static inline T tn_radam_update_##S(T p, T g, T *m, T *v, T wd, T decay, T one_minus_beta1, T beta2,
                                          T one_minus_beta2, T bias_correction1, T lr, T bias_correction2_sqrt,
                                          T eps, T rect, int f) {
    g = tn__optim_grad_##S(&p, g, wd, decay, f);
    *m = tn_optim_lerp_##S(*m, g, one_minus_beta1);
    *v = tn__optim_sq_avg_##S(*v, beta2, one_minus_beta2, g);
    T corrected = *m / bias_correction1;
    if (f & TN_OPTF_RECTIFY) return p + (T)-1 * (corrected * lr * (bias_correction2_sqrt / (sqrt##F(*v) + eps)) * rect);
    return p + (T)-1 * (corrected * lr); }
/* @end TN__DEFINE_OPTIM_RULES */
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
/* @template TN__DEFINE_OPTIM_APPLY(T, S) */
TN_HD static inline T tn_optim_apply_##S(int kind, int f, const T *c, T p, T g, T *a, T *b, T *e) {
    switch (kind) {
    case TN__SGD: return tn_sgd_update_##S(p, g, a, c[0], c[1], c[2], c[3], f);
    case TN__ADAM: case TN__ADAMW: return tn_adam_update_##S(p, g, a, b, e, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], f);
    case TN__RMSPROP: return tn_rmsprop_update_##S(p, g, a, e, b, c[0], c[1], c[2], c[3], c[4], c[5], f);
    case TN__ADAGRAD: return tn_adagrad_update_##S(p, g, a, c[0], c[1], c[2], f);
    case TN__ADADELTA: return tn_adadelta_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], f);
    case TN__ADAMAX: return tn_adamax_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], f);
    case TN__NADAM: return tn_nadam_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], f);
    case TN__RADAM: return tn_radam_update_##S(p, g, a, b, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], f);
    default: return p;
    } }
/* @end TN__DEFINE_OPTIM_APPLY */
TN__DEFINE_OPTIM_APPLY(float, f32)
TN__DEFINE_OPTIM_APPLY(double, f64)
TN__NO_CONTRACT_END



/* ======================================================================= */
/* 14. data                                                                 */
/* ======================================================================= */
/* torch.utils.data: a dataset is a length and a way to get sample i as nitems tensors
   (image, label, ...); a loader batches, shuffles as PyTorch's DataLoader does (the same
   order for a seed) and prefetches in worker processes. A user dataset embeds tn_dataset first in its own struct:

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
   (and the collate function) run in forked worker processes, each on its own copy of the
   dataset as it was when the workers started: what get changes in the dataset is not
   seen by the caller or by the other workers. On failure get records an error (ops do)
   and returns -1. */
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
   NULL = the default generator. PyTorch's permutation for a seed (randperm from gen).
   0, or -1 with an error and out untouched. */
TNDEF int tn_random_split(tn_dataset *ds, const double *lengths, int n, tn_generator *gen, tn_dataset **out);
TNDEF void tn_dataset_free(tn_dataset *ds);   /* calls ds->destroy; NULL is a no-op */

/* DataLoader(dataset, batch_size=1, shuffle=False, ...): tn_loader_new(ds, .batch_size = 64,
   .shuffle = true). batch_size TN_NONE (None) yields samples one by one, uncollated. seed
   picks the loader's own generator (DataLoader(generator=torch.Generator().manual_seed(seed));
   TN_NONE: the default generator, so tn_manual_seed decides); each epoch draws as PyTorch's
   iterator and RandomSampler do (a base seed, then the permutation), so the order is
   PyTorch's for a seed, whatever num_workers is. num_workers=0 loads in the caller's
   thread; N > 0 forks N worker processes (POSIX) as an epoch starts, which load whole
   batches into shared memory, up to prefetch_factor * N batches ahead (prefetch_factor
   TN_NONE is PyTorch's None: 2 with workers; it may be given only with num_workers > 0, as
   in PyTorch); batch k is loaded by worker k % N. persistent_workers keeps the workers
   from one epoch to the next (else they exit at the end of each epoch). Worker i runs
   tn_manual_seed(base_seed + i), base_seed drawn from the loader's generator as each
   epoch starts (once for persistent workers), as PyTorch does. timeout (seconds, 0: none)
   bounds the wait for one batch. A worker that dies or times out is an error, the workers
   are shut down and the epoch ends. Batch k is always the same samples, and batches arrive
   in order. Borrows ds (free the loader first). One thread calls tn_loader_next; fork
   happens in it, so no other thread of the program should be inside the library then.
   NULL on bad options. See docs/multiprocessing.md. */
typedef struct tn_loader tn_loader;
#define TN_FIELDS_tn_loader_opts(X) \
    X(I, batch_size,      1,       "") \
    X(B, shuffle,         false,   "") \
    X(B, drop_last,       false,   "") \
    X(I, num_workers,     0,       "") \
    X(I, prefetch_factor, TN_NONE, "") \
    X(B, persistent_workers, false, "") \
    X(D, timeout,         0,       "") \
    X(I, seed,            TN_NONE, "")
TN__KW_STRUCT(tn_loader_opts);
TNDEF tn_loader *tn_loader_new_opts(tn_dataset *ds, tn_loader_opts opts);
#define tn_loader_new(...) tn_loader_new_opts(TN__POS_KW(tn_loader_opts, __VA_ARGS__))
TNDEF tn_loader *tn_loader_new_str(tn_dataset *ds, const char *options);
/* Collate: samples[s * nitems + k] is item k of sample s; write nitems batch tensors
   (results of library ops, as in get); 0 or -1 with an error. Runs in the worker processes. */
typedef int (*tn_collate_fn)(tn_tensor *const *samples, int64_t nsamples, int nitems, tn_tensor **batch, void *user);
/* The default: batch[k] = stack of item k of every sample along a new dim 0 (labels
   that are 0-d tensors become a 1-d batch), as torch's default_collate. */
TNDEF int tn_default_collate(tn_tensor *const *samples, int64_t nsamples, int nitems, tn_tensor **batch, void *user);
/* fn NULL restores the default. Refused in the middle of an epoch. 0 or -1. */
TNDEF int tn_loader_set_collate(tn_loader *l, tn_collate_fn fn, void *user);
/* worker_init_fn: called in each worker process after its seeding, before its first
   batch; 0, or -1 with an error, which comes back as the error of each of that worker's
   batches. fn NULL: none. Refused while workers run. 0 or -1. */
typedef int (*tn_worker_init_fn)(int worker_id, void *user);
TNDEF int tn_loader_set_worker_init_fn(tn_loader *l, tn_worker_init_fn fn, void *user);
/* torch.utils.data.get_worker_info(): in a loader's worker process, who it is (the
   dataset is the worker's copy); NULL in the main process. */
typedef struct tn_worker_info { int id, num_workers; uint64_t seed; tn_dataset *dataset; } tn_worker_info;
TNDEF const tn_worker_info *tn_get_worker_info(void);
TNDEF int64_t tn_loader_len(const tn_loader *l);                /* batches per epoch (-1 on error) */
/* 1: a batch in batch[0..nitems) (new references); 0: the epoch is over (the next call
   starts a new epoch, reshuffled); -1: error, e.g. from the dataset's get in a worker,
   with that message (the failed batch is skipped: the next call goes on with the next). */
TNDEF int tn_loader_next(tn_loader *l, tn_tensor **batch);
TNDEF void tn_loader_free(tn_loader *l);        /* ends and reaps the workers, also mid-epoch; NULL is a no-op */

/* IDX files (MNIST's format): magic 00 00 <type> <ndim>, big-endian u32 dims, big-endian
   data. dtype from the type: uint8 -> U8, int32 -> I32, float32 -> F32, float64 -> F64,
   int8 and int16 widened to I32. A gzip file (.gz) is read through zlib when built with
   -DTENSOR_ZLIB (link -lz), refused otherwise. A damaged file is refused, never overread. */
TNDEF tn_tensor *tn_read_idx(const char *path);
/* A numeric CSV file as a [rows, cols] matrix: tn_read_csv(path, &labels, .label_name =
   "species"). header: the first line names the columns; delimiter: one character, or "\t"
   (the text form takes '\t' too); dtype TN_F32 or TN_F64 (text: float32, float64). The
   label column (label_column: an index, negative from the end; or label_name: a header
   name; TN_NONE / NULL: none) is left out of the matrix; with labels non-NULL it is written
   there as int64 [rows] (NULL when there is none). Fields may be double-quoted; blank lines
   are skipped. A cell that is not a number is an error naming its line and column. */
#define TN_FIELDS_tn_csv_opts(X) \
    X(B, header,       true,    "") \
    X(S, delimiter,    ",",     "") \
    X(I, label_column, TN_NONE, "") \
    X(S, label_name,   NULL,    "") \
    X(E, dtype,        TN_F32,  "float32|float64")
TN__KW_STRUCT(tn_csv_opts);
TNDEF tn_tensor *tn_read_csv_opts(const char *path, tn_tensor **labels, tn_csv_opts opts);
#define tn_read_csv(path, ...) tn_read_csv_opts(path, TN__POS_KW(tn_csv_opts, __VA_ARGS__))
TNDEF tn_tensor *tn_read_csv_str(const char *path, tn_tensor **labels, const char *options);
/* MNIST or Fashion-MNIST from dir: {train,t10k}-{images-idx3,labels-idx1}-ubyte, each
   plain or .gz. Sample i: image float32 [1, 28, 28] in [0, 1] (x / 255, as ToTensor),
   label int64 0-d. torchvision's MNIST(root, train=True): tn_mnist_dataset(dir) is the
   training set, tn_mnist_dataset(dir, .train = false) the test set. */
#define TN_FIELDS_tn_mnist_opts(X) \
    X(B, train, true, "")
TN__KW_STRUCT(tn_mnist_opts);
TNDEF tn_dataset *tn_mnist_dataset_opts(const char *dir, tn_mnist_opts opts);
#define tn_mnist_dataset(...) tn_mnist_dataset_opts(TN__POS_KW(tn_mnist_opts, __VA_ARGS__))
TNDEF tn_dataset *tn_mnist_dataset_str(const char *dir, const char *options);

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

/* ---- PyTorch .pt files ----
   torch.save's zip format (PyTorch >= 1.6): "<name>/data.pkl", a pickle of the object,
   and "<name>/data/<key>", each storage's bytes. Reading runs only the pickle opcodes and
   globals a weights file uses (collections.OrderedDict, torch._utils._rebuild_tensor_v2 /
   _rebuild_parameter, the storage types) and refuses any other global (os.system, ...) by
   name: loading never runs code. Zip entries stored, or deflated with -DTENSOR_ZLIB; zip64;
   CRC-32s checked; every size, stride and offset checked against the file; a damaged file
   is an error, never a crash, and nothing is returned on any error. Legacy (pre-1.6)
   files are refused with a message. */
/* Load a state dict (torch.save(model.state_dict(), path)) into a dict: tensors keep the
   strides and storage offsets of the file, and tensors that shared a storage share one
   here (tn_same_storage); every dtype as torch.load keeps it, float16/bfloat16 too. Nested dicts, lists
   and tuples are flattened under dotted names ("model.fc.weight", "hist.0"); numbers
   become 0-d tensors (int64, float64, bool), strings metadata; None is dropped. */
TNDEF tn_dict *tn_load_pt(const char *path);
/* Write d as torch.save(d) would (an OrderedDict of tensors; real torch.load reads it):
   stored entries, data 64-byte aligned, tensors sharing a storage saved once as views of
   it (the span they use), through a temporary file renamed over path as safetensors. */
TNDEF int tn_save_pt(const char *path, const tn_dict *d);

/* ---- DLPack ----
   Zero-copy exchange with NumPy, PyTorch, JAX, CuPy, ... through DLPack's C structs (the
   dmlc/dlpack ABI, version 0.8; declared here unless dlpack.h came first). Both directions
   share the memory: nothing is copied. */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
typedef enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLOpenCL = 4, kDLVulkan = 7, kDLMetal = 8, kDLVPI = 9,
               kDLROCM = 10, kDLROCMHost = 11, kDLExtDev = 12, kDLCUDAManaged = 13, kDLOneAPI = 14 } DLDeviceType;
typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
typedef enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLOpaqueHandle = 3, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 } DLDataTypeCode;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct { void *data; DLDevice device; int32_t ndim; DLDataType dtype; int64_t *shape; int64_t *strides; uint64_t byte_offset; } DLTensor;
typedef struct DLManagedTensor { DLTensor dl_tensor; void *manager_ctx; void (*deleter)(struct DLManagedTensor *self); } DLManagedTensor;
#endif
/* t as a DLManagedTensor (t's memory; t stays alive until the consumer calls its
   deleter). NULL with an error for a dtype DLPack cannot express. */
TNDEF DLManagedTensor *tn_to_dlpack(tn_tensor *t);
/* A tensor over m's memory (CPU, or CUDA with the GPU unit); it calls m->deleter(m) when
   its storage dies, and on error. Strides in elements, non-negative; NULL strides mean
   contiguous. */
TNDEF tn_tensor *tn_from_dlpack(DLManagedTensor *m);
/* The deleter of a DLManagedTensor made by tn_to_dlpack, for consumers that drop one
   unused (m->deleter(m) is the same call). NULL is a no-op. */
TNDEF void tn_dlpack_delete(DLManagedTensor *m);

/* ---- shared memory (torch.multiprocessing) ----
   A shared storage lives in a nameless file (a memfd on Linux, else an unlinked file in
   /dev/shm) that the kernel frees when the last process holding it exits or lets go (no
   /dev/shm entry can leak). Across fork a child
   sees the parent's shared tensors as they are; any other process receives one over a
   Unix socket (tn_shared_send / tn_shared_recv: the descriptor travels as SCM_RIGHTS).
   Writes on either side are seen by the other, as with PyTorch's shared tensors. */
TNDEF tn_tensor *tn_share_memory_(tn_tensor *t);  /* moves t's storage (every view of it) into shared memory; t borrowed; a no-op on CUDA or when shared */
TNDEF bool tn_is_shared(const tn_tensor *t);       /* whether t's storage is in shared memory (CUDA tensors: always, as PyTorch) */
/* The shared storage's file descriptor (the storage keeps it), or -1 with an error; where
   the storage's bytes lie in that file (either pointer may be NULL), for tn_from_shared_fd. */
TNDEF int tn_shared_fd(const tn_tensor *t, int64_t *storage_start, int64_t *storage_nbytes);
/* A tensor over a storage another process shared: fd (duplicated; the caller keeps its
   own), the storage's bytes [storage_start, storage_start + storage_nbytes) of the file, and
   the view (strides in elements, NULL for contiguous; offset in elements). Everything is
   checked against the file's size. */
TNDEF tn_tensor *tn_from_shared_fd(int fd, int64_t storage_start, int64_t storage_nbytes, tn_dtype dtype,
                                   const int64_t *shape, int ndim, const int64_t *strides, int64_t offset);
TNDEF int tn_shared_send(int sock, tn_tensor *t);  /* shares t, then sends its view and descriptor over a Unix socket; 0 or -1 */
TNDEF tn_tensor *tn_shared_recv(int sock);        /* the tensor tn_shared_send sent: the same memory, mapped here */
/* CUDA tensors across processes by CUDA IPC (torch.multiprocessing's CUDA tensors): the
   handle names the allocation holding t's storage (the caching allocator's segment, as
   PyTorch's cudaIpcGetMemHandle of the segment's base), which another process maps with
   tn_from_cuda_ipc: a CUDA tensor over the same device memory, writes seen on both sides.
   A process maps a segment once (cached by handle) and unmaps it when the last tensor on it
   dies. PyTorch's rule holds: the producer keeps its tensor alive while consumers use it
   (freed memory may be reused, and it is gone when the producer exits). tn_share_memory_
   is a no-op on CUDA tensors: they are shareable as they are. Errors: a tensor not on a
   device with IPC (CPU: tn_share_memory_ / tn_shared_send), a handle whose process exited,
   a build without the GPU unit. */
#define TN_CUDA_IPC_HANDLE_BYTES 64
/* t's handle (handle: TN_CUDA_IPC_HANDLE_BYTES bytes), the segment's size in bytes, where
   t's storage starts in it and its bytes (t's view: tn_shape, tn_strides, tn_storage_offset);
   a received tensor's is the handle it came by. 0, or -1 with an error. */
TNDEF int tn_cuda_ipc_handle(tn_tensor *t, void *handle, int64_t *segment_size, int64_t *storage_start, int64_t *storage_nbytes);
/* A CUDA tensor over the segment another process's tn_cuda_ipc_handle named: the storage
   is bytes [storage_start, storage_start + storage_nbytes) of it, the view as tn_from_shared_fd's. */
TNDEF tn_tensor *tn_from_cuda_ipc(const void *handle, int64_t segment_size, int64_t storage_start, int64_t storage_nbytes, tn_dtype dtype,
                                  const int64_t *shape, int ndim, const int64_t *strides, int64_t offset);
TNDEF int64_t tn_cuda_ipc_open_count(void);        /* segments of other processes this one has mapped now */

/* ---- distributed (torch.distributed) ----
   Process groups and collectives over MPI, built in with TENSOR_MPI (make DIST=mpi; the
   header needs no MPI otherwise, and then "mpi" is an error that says so), or over NCCL
   for CUDA tensors (the GPU unit built with NCCL; with or without MPI). "mpi": launch with
   mpirun, which gives the rank and world size ("gloo" is served by MPI too). "nccl": under
   TENSOR_MPI mpirun's too, else RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT as torchrun
   sets them (none: one process); collectives run on the device, CPU tensors are refused.
   g = NULL is the default group of all ranks; ranks passed to a collective are global
   ranks, as in PyTorch. Tensors are communicated in place, any layout (mpi: any device,
   staged through a contiguous CPU copy where needed; nccl: through a contiguous device
   copy). Every call completes before its deadline (.timeout, default $TN_DIST_TIMEOUT or
   30 minutes) or fails with an error, so a rank that died makes the others fail rather
   than hang (nccl: the communicator is aborted). */
typedef enum tn_dist_op { TN_DIST_SUM, TN_DIST_AVG, TN_DIST_PRODUCT, TN_DIST_MIN, TN_DIST_MAX } tn_dist_op;  /* ReduceOp */
typedef struct tn_dist_group tn_dist_group;
typedef struct tn_dist_work tn_dist_work;
TNDEF bool tn_dist_is_available(void);                 /* built with MPI, or a CUDA backend with NCCL */
TNDEF bool tn_dist_is_backend_available(const char *backend);  /* "mpi"/"gloo": built with MPI; "nccl": the CUDA backend has NCCL */
/* init_process_group(backend, timeout=None, rank=-1, world_size=-1): backend "mpi", "gloo"
   or "nccl" (NULL: "mpi"); .timeout in seconds (PyTorch's timedelta), NAN (None) or <= 0:
   the default: tn_dist_init("mpi", .timeout = 60). "nccl" without MPI meets by env://
   rendezvous as PyTorch: RANK and WORLD_SIZE (unless .rank / .world_size are given),
   MASTER_ADDR and MASTER_PORT must be set, also for one process; under MPI (mpirun) the
   rank and size are MPI's, and .rank / .world_size, when given, must agree with them. */
#define TN_FIELDS_tn_dist_init_fn_opts(X) \
    X(D, timeout, NAN, "") \
    X(I, rank, -1, "") \
    X(I, world_size, -1, "")
TN__KW_STRUCT(tn_dist_init_fn_opts);
TNDEF int tn_dist_init_opts(const char *backend, tn_dist_init_fn_opts opts);
#define tn_dist_init(...) tn_dist_init_opts(TN__POS_KW(tn_dist_init_fn_opts, __VA_ARGS__))
TNDEF int tn_dist_init_str(const char *backend, const char *options);
TNDEF bool tn_dist_is_initialized(void);
TNDEF int tn_dist_destroy(void);                       /* destroy_process_group; MPI (also nccl's bootstrap) cannot start again after it */
TNDEF int tn_dist_get_rank(const tn_dist_group *g);    /* in g (NULL: the world); -1 outside g */
TNDEF int tn_dist_get_world_size(const tn_dist_group *g);
TNDEF tn_dist_group *tn_dist_new_group(const int64_t *ranks, int n);  /* every rank calls it, members or not */
TNDEF void tn_dist_group_free(tn_dist_group *g);
TNDEF int tn_dist_all_reduce(tn_tensor *t, tn_dist_op op, tn_dist_group *g);        /* t = op over every rank's t */
TNDEF int tn_dist_reduce(tn_tensor *t, int dst, tn_dist_op op, tn_dist_group *g);   /* the result on dst only */
TNDEF int tn_dist_broadcast(tn_tensor *t, int src, tn_dist_group *g);                 /* src's t to every rank */
TNDEF int tn_dist_all_gather(tn_tensor *const *outs, tn_tensor *t, tn_dist_group *g); /* outs[i] = rank i's t (world-size outs) */
TNDEF int tn_dist_gather(tn_tensor *t, tn_tensor *const *outs, int dst, tn_dist_group *g);  /* outs on dst only (NULL elsewhere) */
TNDEF int tn_dist_scatter(tn_tensor *t, tn_tensor *const *ins, int src, tn_dist_group *g);  /* t = src's ins[rank] */
TNDEF int tn_dist_reduce_scatter(tn_tensor *out, tn_tensor *const *ins, tn_dist_op op, tn_dist_group *g); /* out = op of ins[rank] */
TNDEF int tn_dist_barrier(tn_dist_group *g);
TNDEF int tn_dist_send(tn_tensor *t, int dst, int tag, tn_dist_group *g);
TNDEF int tn_dist_recv(tn_tensor *t, int src, int tag, tn_dist_group *g);             /* src -1: any; returns the sender's rank */
/* Async forms: the work runs while the caller computes; tn_dist_wait completes and frees
   it (returning what the blocking call returns), tn_dist_test says 1 when done. The
   tensor must not be touched until then. */
TNDEF tn_dist_work *tn_dist_all_reduce_async(tn_tensor *t, tn_dist_op op, tn_dist_group *g);
TNDEF tn_dist_work *tn_dist_broadcast_async(tn_tensor *t, int src, tn_dist_group *g);
TNDEF tn_dist_work *tn_dist_send_async(tn_tensor *t, int dst, int tag, tn_dist_group *g);
TNDEF tn_dist_work *tn_dist_recv_async(tn_tensor *t, int src, int tag, tn_dist_group *g);
TNDEF int tn_dist_wait(tn_dist_work *w);
TNDEF int tn_dist_test(tn_dist_work *w);

/* DistributedDataParallel: after tn_ddp_new (which broadcasts the parameters from rank 0),
   every backward averages the parameters' gradients over the group's ranks: hooks copy
   each gradient into its bucket (about bucket_cap_mb each, parameters in reverse order,
   as their gradients arrive) and start the bucket's all-reduce as soon as it and every
   bucket before it are complete, so communication overlaps the rest of backward; a final
   callback waits and writes the averages into .grad. A parameter backward did not reach
   contributes its current .grad (or zeros) — with find_unused_parameters as without. Off
   between tn_ddp_no_sync(d, true) and (d, false): gradients then accumulate locally and
   the next synced backward averages the accumulated sums. Every rank calls the same
   sequence with the same parameters (shapes, order). */
#define TN_FIELDS_tn_ddp_opts(X) \
    X(D, bucket_cap_mb,          25.0,  "") \
    X(B, find_unused_parameters, false, "") \
    X(B, broadcast_parameters,   true,  "")
TN__KW_STRUCT(tn_ddp_opts);
typedef struct tn_ddp tn_ddp;
TNDEF tn_ddp *tn_ddp_new_opts(tn_tensor *const *params, int n, tn_dist_group *g, tn_ddp_opts opts);
#define tn_ddp_new(params, n, ...) tn_ddp_new_opts(params, n, TN__POS_KW(tn_ddp_opts, __VA_ARGS__))
TNDEF tn_ddp *tn_ddp_new_str(tn_tensor *const *params, int n, tn_dist_group *g, const char *options);
TNDEF int tn_ddp_no_sync(tn_ddp *d, bool no_sync);     /* true: the next backwards only accumulate locally */
TNDEF void tn_ddp_free(tn_ddp *d);                     /* removes the hooks; NULL is a no-op */

/* ---- checkpoints ---- */
/* Training checkpoints: the model's state dict under "model.", the optimizer's under
   "optim." (opt may be NULL) and the step, in one safetensors file written atomically
   (a temporary file renamed over path). Loading restores all three exactly. */
TNDEF int tn_checkpoint_save(const char *path, const tn_module *model, const tn_optim *opt, int64_t step);
TNDEF int tn_checkpoint_load(const char *path, tn_module *model, tn_optim *opt, int64_t *step);

/* ---- graphs: a forward captured (torch.jit.trace), replayed, saved ----
   tn_jit_trace records the ops of one forward call where autograd records them (the example
   inputs are traced as tensors that require grad) into a tn_graph: typed, shaped nodes
   named as PyTorch's ops ("aten::conv2d") with their arguments as attributes; the module's
   parameters and buffers become constants under their state-dict names. Replaying calls
   the same ops with the attributes, on new inputs of the traced dtypes and shapes (dim 0
   of one input may be marked dynamic). As torch.jit.trace, data-dependent control flow is
   frozen as traced. Not captured yet (refused with a message): integer inputs (embedding
   indices), bool/integer tensors computed in the forward (masks), batch norm in training
   mode, ops without a replay (the message names the op). docs/deploy.md has the details. */
typedef struct tn_graph tn_graph;
typedef tn_tensor *(*tn_jit_trace_fn)(tn_tensor *const *inputs, int n, void *user);   /* the forward to trace: one result */
/* Trace fn(inputs, n, user) (1 to 64 float inputs on one device); `names` (may be NULL) names the
   constants found among its values (tn_module_named_parameters' dict, a state dict of the
   same tensors); others are c0, c1, ... NULL with an error. */
TNDEF tn_graph *tn_jit_trace(tn_jit_trace_fn fn, void *user, tn_tensor *const *inputs, int n, const tn_dict *names);
TNDEF tn_graph *tn_jit_trace_module(tn_module *m, tn_tensor *x);   /* trace tn_module_forward(m, x); call tn_module_eval first */
/* Let dim 0 (the batch) of input `input` differ between runs; shape attributes (reshape,
   expand) whose first size is the traced batch follow it. */
TNDEF int tn_graph_set_dynamic(tn_graph *g, int input, int64_t dim);
/* Replay on inputs (dtypes and shapes as traced): the outputs into outputs[0..nout), as
   an op's results (owned by the open scope, if any). The number of outputs, or -1. */
TNDEF int tn_graph_run(tn_graph *g, tn_tensor *const *inputs, int n, tn_tensor **outputs, int nout);
TNDEF tn_tensor *tn_graph_forward(tn_graph *g, tn_tensor *x);   /* one input, one output */
/* Rewrite g for a cheaper replay with the same outputs (to float rounding): constant
   folding, eval batch norm folded into the conv2d / linear before it, dead code removed.
   Folded batch norms make new weights (as torch.jit.freeze: optimise a trained model). The
   number of rewrites, or -1. */
TNDEF int tn_graph_optimize(tn_graph *g);
TNDEF int tn_graph_num_inputs(const tn_graph *g);
TNDEF int tn_graph_num_outputs(const tn_graph *g);
TNDEF int tn_graph_num_nodes(const tn_graph *g);
/* The bytes of the replay's static memory plan (0: none yet). Under no_grad (every input on
   one device) a run of a graph records the storages its nodes make on that device, the later
   runs serve them from one arena of its memory (a steady replay allocates no storage:
   tn_memory_allocations); an output the caller still holds is never overwritten by a later
   run. On a GPU whose backend has the graph entries a steady replay is then captured as a
   CUDA graph and launched (TN_CUDA_GRAPHS=0: not; docs/deploy.md). */
TNDEF int64_t tn_graph_arena_bytes(const tn_graph *g);
/* How many nodes the replay runs fused: chains of elementwise nodes (each result read only by
   the next, one float dtype and shape) run under no_grad as one pass through the members'
   kernels, with no intermediate tensors; and a linear (addmm) or conv2d with the relu, gelu
   or silu that alone reads its result, applied in the GEMM's epilogue (2 nodes each). -1
   with an error. */
TNDEF int tn_graph_fused_nodes(tn_graph *g);
TNDEF const char *tn_graph_node_op(const tn_graph *g, int i);   /* "aten::addmm"; thread-local buffer, NULL out of range */
TNDEF char *tn_graph_str(const tn_graph *g);   /* print(traced.graph): torch.jit's form; free with tn_string_free */
TNDEF int tn_graph_print(const tn_graph *g);   /* tn_graph_str to stdout */
TNDEF void tn_graph_free(tn_graph *g);         /* releases its constants; NULL is a no-op */
/* A safetensors file: the constants as tensors under their names, the graph as text in
   the metadata ("tn_graph", format version 1; docs/deploy.md). Written to a temporary file
   renamed over path, so a failed save leaves an old file intact. Loading runs no code and
   checks everything (ops, arities, value references, attributes, constants' shapes);
   a damaged or hostile file gives an error naming what is wrong. */
TNDEF int tn_graph_save(const tn_graph *g, const char *path);
TNDEF tn_graph *tn_graph_load(const char *path);
TNDEF tn_graph *tn_graph_load_buffer(const void *data, size_t size);   /* from bytes in memory */
/* ONNX (torch.onnx.export): a graph written as an ONNX model, opset 17, atomically (a
   temporary file renamed over path). input_names / output_names: comma-separated names
   ("x,mask"; default input0.., output0..); a graph with a dynamic batch
   (tn_graph_set_dynamic) writes that dim as "batch". Conv, pooling, norms, Gemm/MatMul,
   activations (GELU as its Erf form), softmax, reshapes, Gather, attention as MatMul +
   Softmax; an op without an export is an error naming it. docs/deploy.md has the table. */
#define TN_FIELDS_tn_onnx_opts(X) \
    X(I, opset_version, 17,   "") \
    X(S, input_names,   NULL, "") \
    X(S, output_names,  NULL, "")
TN__KW_STRUCT(tn_onnx_opts);
TNDEF int tn_onnx_export_opts(const tn_graph *g, const char *path, tn_onnx_opts opts);
#define tn_onnx_export(g, ...) tn_onnx_export_opts(g, TN__POS_KW(tn_onnx_opts, __VA_ARGS__))
TNDEF int tn_onnx_export_str(const tn_graph *g, const char *path, const char *options);
/* An ONNX model (opsets 6 to 18; static input shapes, except a symbolic dim 0 of one input,
   which becomes the graph's dynamic batch) as a graph tn_graph_run replays: the
   initializers become constants, Shape / Gather / Concat arithmetic on static shapes and
   other nodes of constants are computed when loading. Hostile bytes are refused with an
   error; so is the first unsupported operator (named, with the opset). */
TNDEF tn_graph *tn_onnx_load(const char *path);
TNDEF tn_graph *tn_onnx_load_buffer(const void *data, size_t size);
/* A serialized ONNX TensorProto (ONNX's test data, input_0.pb) as a tensor (float, double,
   int32, int64, uint8, bool). */
TNDEF tn_tensor *tn_onnx_load_tensor(const char *path);
TNDEF tn_tensor *tn_onnx_load_tensor_buffer(const void *data, size_t size);

/* ---- printing ---- */
/* PyTorch's repr: "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)".
   Summarised with "..." past `threshold` elements (set_printoptions). The string is the
   caller's: tn_string_free. */
TNDEF char *tn_to_string(tn_tensor *t);
TNDEF void tn_string_free(char *s);
TNDEF int tn_print(tn_tensor *t);               /* tn_to_string + newline to stdout */
/* torch.set_printoptions (process-wide): every field not given (TN_NONE, NAN, NULL, -1)
   keeps its current value, except sci_mode, which is always set (-1: chosen from the values,
   as PyTorch's None). profile "default" (precision 4, threshold 1000, edgeitems 3, linewidth
   80), "short" (2, 1000, 2, 80) or "full" (4, inf, 3, 80) is applied before the other fields:
   tn_set_printoptions(.precision = 2), tn_set_printoptions(.profile = "full"). threshold is a
   count of elements (INFINITY: never summarise); precision in [0, 40], edgeitems >= 0,
   linewidth >= 1. Returns 0, or -1 with an error (and nothing changed). */
#define TN_FIELDS_tn_print_options(X) \
    X(I,  precision, TN_NONE, "") \
    X(D,  threshold, NAN,     "") \
    X(I,  edgeitems, TN_NONE, "") \
    X(I,  linewidth, TN_NONE, "") \
    X(S,  profile,   NULL,    "") \
    X(OB, sci_mode,  -1,      "")
TN__KW_STRUCT(tn_print_options);
TNDEF int tn_set_printoptions_opts(tn_print_options opts);
#define tn_set_printoptions(...) tn_set_printoptions_opts(TN__KW(tn_print_options, __VA_ARGS__))
TNDEF int tn_set_printoptions_str(const char *options);  /* "precision=2, sci_mode=False" */
/* The options in force into *out (profile NULL): torch's get_printoptions(). */
TNDEF void tn_get_printoptions(tn_print_options *out);

/* ======================================================================= */
/* 16. threading                                                            */
/* ======================================================================= */
/* Built with -fopenmp (or -DTN_THREADS), CPU kernels split work among the library's own
   thread pool (core/threads.c; OpenMP's runtime is not used): an op gets one thread per
   TN_PARALLEL_MIN work units, up to the count: GEMM (row blocks; for a few rows, column
   shares that each pack their own part of B), the strided iterator's
   elementwise ops, copies and fills, reductions and softmax-style lanes (over output
   elements only, so every sum keeps its serial order), im2col/col2im, pooling, norms,
   convolutions, optimizer steps, clip_grad_norm_, embedding gradients. Results are the same
   bits for any thread count, except conv2d's weight gradient (per-thread partial sums added
   in thread order: the same bits for a given count). Idle threads poll for a new job for up
   to TN_POOL_YIELD_US (1 ms), yielding the CPU between polls (sleeping at once when a yield
   shows another process wants the core), then sleep; on a loaded
   machine the pool backs off to one thread after jobs its helpers slowed down. The default
   count: TN_NUM_THREADS or OMP_NUM_THREADS, else the fewest of the CPUs online, the
   affinity mask and the cgroup CPU quota. A process forked after threads ran uses one. */
TNDEF void tn_set_num_threads(int n);           /* threads for kernels (when built with -fopenmp or -DTN_THREADS) */
TNDEF int tn_get_num_threads(void);
TNDEF bool tn_openmp_is_available(void);        /* built with -fopenmp (torch.backends.openmp.is_available) */

/* ======================================================================= */
/* 17. backend interface                                                    */
/* ======================================================================= */
/* Ops are data: one X-macro list per kernel family gives the enum and the name table,
   so a backend (tensor_cuda.cu) switches over the same values. */
#define TN_UNARY_OPS(X) \
    X(NEG) X(ABS) X(SIGN) X(SQUARE) X(RELU) X(FLOOR) X(CEIL) X(ROUND) X(TRUNC) X(CLAMP) \
    X(EXP) X(EXP2) X(LOG) X(LOG2) X(LOG10) X(LOG1P) X(EXPM1) X(SQRT) X(RSQRT) X(RECIPROCAL) \
    X(SIN) X(COS) X(TAN) X(ASIN) X(ACOS) X(ATAN) X(SINH) X(COSH) X(TANH) X(ASINH) X(ACOSH) X(ATANH) X(SIGMOID) \
    X(GELU) X(GELU_TANH) X(SILU) X(SOFTPLUS) X(LEAKY_RELU) X(ELU) X(HARDTANH) X(MISH) X(HARDSWISH) \
    X(HARDSIGMOID) X(ERF) X(ERFINV) X(LGAMMA) X(DIGAMMA) X(POLYGAMMA) X(I0) X(I0E) X(I1) X(I1E) X(SINC) X(LOGIT) \
    X(NDTR) X(NDTRI) X(LOG_NDTR) X(ERFCX) X(ENTR) X(BESSEL_J0) X(BESSEL_J1) X(BESSEL_Y0) X(BESSEL_Y1) \
    X(MODIFIED_BESSEL_I0) X(MODIFIED_BESSEL_I1) X(MODIFIED_BESSEL_K0) X(MODIFIED_BESSEL_K1) X(SCALED_MODIFIED_BESSEL_K0) X(SCALED_MODIFIED_BESSEL_K1) X(SPHERICAL_BESSEL_J0) X(AIRY_AI) \
    X(FREXP_MANTISSA) X(FREXP_EXPONENT) X(ERFC) X(FRAC) X(NAN_TO_NUM) \
    X(BITWISE_NOT) X(LOGICAL_NOT) X(ISNAN) X(ISINF) X(ISFINITE) X(SIGNBIT)
#define TN_BINARY_OPS(X) \
    X(ADD) X(SUB) X(MUL) X(DIV) X(FLOOR_DIVIDE) X(REMAINDER) X(FMOD) X(POW) X(ATAN2) \
    X(MAXIMUM) X(MINIMUM) X(FMAX) X(FMIN) X(LOGADDEXP) X(LOGADDEXP2) X(HYPOT) X(XLOGY) X(XLOG1PY) X(COPYSIGN) \
    X(ZETA) X(GAMMAINC) X(GAMMAINCC) X(CHEBYSHEV_POLYNOMIAL_T) X(CHEBYSHEV_POLYNOMIAL_U) X(CHEBYSHEV_POLYNOMIAL_V) X(CHEBYSHEV_POLYNOMIAL_W) \
    X(HERMITE_POLYNOMIAL_H) X(HERMITE_POLYNOMIAL_HE) X(LAGUERRE_POLYNOMIAL_L) X(LEGENDRE_POLYNOMIAL_P) X(SHIFTED_CHEBYSHEV_POLYNOMIAL_T) X(SHIFTED_CHEBYSHEV_POLYNOMIAL_U) X(SHIFTED_CHEBYSHEV_POLYNOMIAL_V) X(SHIFTED_CHEBYSHEV_POLYNOMIAL_W) \
    X(NEXTAFTER) X(HEAVISIDE) X(GCD) X(LCM) X(BITWISE_AND) X(BITWISE_OR) X(BITWISE_XOR) X(BITWISE_LEFT_SHIFT) X(BITWISE_RIGHT_SHIFT) \
    X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(LOGICAL_AND) X(LOGICAL_OR) X(LOGICAL_XOR) \
    X(THRESHOLD_BACKWARD) X(GELU_BACKWARD) X(GELU_TANH_BACKWARD)
#define TN_TERNARY_OPS(X) X(WHERE) X(LERP) X(ADDCMUL) X(ADDCDIV)
#define TN_REDUCE_OPS(X) X(SUM) X(PROD) X(MAX) X(MIN) X(ALL) X(ANY)
#define TN_LANE_OPS(X) X(ARGMAX) X(ARGMIN) X(CUMSUM) X(CUMPROD) X(CUMMAX) X(CUMMIN) X(LOGCUMSUMEXP) X(SOFTMAX) X(LOG_SOFTMAX) X(SORT)
#define TN_RANDOM_OPS(X) X(UNIFORM) X(NORMAL) X(RANDINT)
#define TN_INDEX_MODES(X) X(GATHER) X(SCATTER) X(SCATTER_ADD) X(SCATTER_MUL) X(SCATTER_MAX) X(SCATTER_MIN)

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

/* The factorizations of tn_backend.linalg (LAPACK's names). */
typedef enum tn_linalg_op { TN_LA_GETRF, TN_LA_GETRS, TN_LA_POTRF, TN_LA_GEQRF, TN_LA_SYEVD, TN_LA_GESVD, TN_LA_TRSM, TN_LA_ORMQR, TN_LA_GEEV, TN_LA_SYTRF, TN_LA_SYTRS } tn_linalg_op;
/* The nccl entry's operations and their arguments (tn_backend.nccl; src/dist/dist.c calls it) */
typedef enum tn_nccl_op {
    TN_NCCL_GET_ID, TN_NCCL_INIT, TN_NCCL_DESTROY, TN_NCCL_ABORT, TN_NCCL_CHECK, TN_NCCL_GROUP_START, TN_NCCL_GROUP_END,
    TN_NCCL_ALL_REDUCE, TN_NCCL_BROADCAST, TN_NCCL_REDUCE, TN_NCCL_ALL_GATHER, TN_NCCL_REDUCE_SCATTER, TN_NCCL_SEND, TN_NCCL_RECV,
    TN_NCCL_RECORD, TN_NCCL_QUERY, TN_NCCL_RELEASE
} tn_nccl_op;
typedef struct tn_nccl_args {
    void *comm;                     /* the communicator (INIT writes it) */
    void *event;                    /* RECORD writes it; QUERY and RELEASE take it */
    tn_tensor *x, *y;               /* what is sent, what is received (contiguous, on this device) */
    int peer;                       /* the root or the peer: a rank of the communicator */
    tn_dist_op op;                  /* the reduction (bool tensors come as MAX or MIN: logical or, and) */
    int rank, size;                 /* INIT: this rank of size */
    const void *mpi_comm;           /* INIT: the group's MPI_Comm, or NULL (the stand-in carries ranks > 1 over it) */
    unsigned char id[128];          /* GET_ID writes it (ncclUniqueId's bytes); INIT reads it */
} tn_nccl_args;
/* A graph replay's chain of elementwise ops (tn_backend.fused_elementwise; src/jit/trace.c
   plans them): member m[j] applies its binary op (alpha params[0]) or unary op (params as
   tn_backend.unary takes them) to its operands src[0..1]: -1 the previous member's result,
   k >= 0 the outside operand k. */
#define TN__FUSED_MAX 16   /* members */
#define TN__FUSED_EXT 10   /* outside operands */
typedef struct tn__fused_op {
    bool binary;
    int op;                        /* tn_binary_op or tn_unary_op */
    signed char src[2];
    double params[3];
} tn__fused_op;
typedef struct tn__fused_prog {
    int n;
    tn__fused_op m[TN__FUSED_MAX];
} tn__fused_prog;
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
       ELU (alpha, scale, input_scale), NAN_TO_NUM (nan, posinf, neginf), POLYGAMMA (n),
       LOGIT (eps; negative: none). FREXP_EXPONENT gives the exponent in x's float dtype. */
    int (*unary)(tn_unary_op op, tn_tensor *out, tn_tensor *x, const double *params);
    /* alpha: ADD, SUB (a + alpha b); THRESHOLD_BACKWARD (0 where b <= alpha, else a: relu's
       backward in one pass, floating only; autograd uses it when not recording; so are
       GELU_BACKWARD and GELU_TANH_BACKWARD: a times gelu's derivative at b). */
    int (*binary)(tn_binary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, double alpha);
    int (*ternary)(tn_ternary_op op, tn_tensor *out, tn_tensor *a, tn_tensor *b, tn_tensor *c, double value);
    /* out has x's ndim with size 1 on reduced dims. */
    int (*reduce)(tn_reduce_op op, tn_tensor *out, tn_tensor *x);
    /* Along one dim: ARGMAX/ARGMIN (out values or NULL, out1 int64 indices, size 1 on dim),
       CUMSUM/CUMPROD/LOGCUMSUMEXP/SOFTMAX/LOG_SOFTMAX (out like x), CUMMAX/CUMMIN (out
       values, out1 int64 indices, like x), SORT (out values, out1 indices; flag = descending). */
    int (*lane)(tn_lane_op op, tn_tensor *out, tn_tensor *out1, tn_tensor *x, int64_t dim, int flag);
    /* Indexed copy. All of dst, src and the k int64 index tensors have the iteration
       shape; offsets idx[j] * idx_strides[j] (in elements, bounds already checked) are
       added to src (GATHER) or dst (SCATTER, and the accumulating SCATTER_ADD, SCATTER_MUL,
       SCATTER_MAX, SCATTER_MIN: duplicates combine; MAX and MIN propagate NaN). */
    int (*index)(tn_index_mode mode, tn_tensor *dst, tn_tensor *src, tn_tensor *const *idx, const int64_t *idx_strides, int k);
    tn_tensor *(*nonzero)(tn_tensor *x);                    /* [n, ndim] int64, owned by the caller */
    /* c[b] = alpha * a[b] @ bm[b] + beta * c[b] for 3-d operands of one dtype (beta 0: c is not read).
       A GPU's table gets half operands here only (every other compute entry sees them staged
       in float32, backend/cpu_half.c); it may return 1 to decline them: they are staged then. */
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
    /* Optional (NULL: the composite). Layer norm as one node: x, y, gx contiguous [M, D] of
       one float dtype, each row normalised; w, b, gw, gb [D] of that dtype or NULL; st [2M]
       float64 on this device: per row mean and invstd = 1/sqrt(var + eps) (biased var).
       mode 0: forward (y, st written); 1: the backward for the output gradient passed as y
       (gx, gw, gb written where not NULL; b is NULL). Returns 1 when it declines. */
    int (*layer_norm)(int mode, tn_tensor *x, tn_tensor *w, tn_tensor *b, tn_tensor *st, tn_tensor *y, tn_tensor *gx, tn_tensor *gw,
                      tn_tensor *gb, double eps);
    /* Optional (NULL: the composite). Cross-entropy per row: x [N, C] contiguous float
       logits, t [N] int64 class indices (checked: in [0, C)), wr [N] row weights of x's
       dtype (0: an ignored row), lse [N] float64, all contiguous. mode 0: out [N] = wr
       (logsumexp(x) - x[t]) (0 where wr is 0) and lse = logsumexp(x) per row; mode 1: gx
       = g wr (softmax(x) - onehot(t)) per row for g [N] passed as out, softmax from lse.
       Returns 1 when it declines. */
    int (*cross_entropy)(int mode, tn_tensor *x, tn_tensor *t, tn_tensor *wr, tn_tensor *lse, tn_tensor *out, tn_tensor *gx);
    /* Optional (NULL: the composite). Fused scaled dot-product attention, no L x S matrix:
       q [*, L, E], k [*, S, E], v [*, S, Ev] and the mask (NULL, or [*, L, S]: bool, true =
       may attend, or additive of q's dtype) of one batch shape, any strides (0 where
       broadcast) but q's, k's and v's last dims contiguous; out [*, L, Ev] and lse [*, L]
       contiguous, q's float dtype. dout NULL: out = softmax(scale q k^T + mask) v, keys j > i
       masked when causal, and lse = the rows' logsumexp (a row with every key masked: NaN in
       both). Else dq, dk, dv (contiguous, q's, k's, v's shapes; overwritten) = the gradients
       for dout (contiguous, out's shape), recomputed from out and lse. Returns 1 when it
       declines (tensor_cuda.cu: head dims over 128, TN_CUDA_FUSED_ATTENTION=0, ...). */
    int (*attention)(tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, tn_tensor *out, tn_tensor *lse, tn_tensor *dout, tn_tensor *dq,
                     tn_tensor *dk, tn_tensor *dv, double scale, bool causal);
    /* Optional (NULL: the header reads the values back and checks them on the host). Index
       values checked where they are, without waiting: out (int64, contiguous, idx's shape;
       NULL: check only) = idx (int64 or int32, any strides), plus size where negative when
       flags & 1; a value equal to skip (flags & 2) becomes 0 and is no error; any other
       outside [0, size) after that becomes 0 and is recorded in err (tn_deferred_check):
       err[1] = the value as given, then err[0] = 1. */
    int (*check_index)(tn_tensor *out, tn_tensor *idx, int64_t size, int flags, int64_t skip, int64_t *err);
    /* Optional (NULL: optim per parameter). One optimizer step on n parameters at once
       (PyTorch's foreach/fused optimizers: a few launches for a whole model): parameter i
       is k[i], p[i], g[i] and its state s[3i..3i+2] as optim takes them, all of one float
       dtype; no two parameters share storage. */
    int (*optim_multi)(const tn__optk *k, int n, tn_tensor *const *p, tn_tensor *const *g, tn_tensor *const *s);
    /* Optional (NULL: torch.linalg's factorizations fail on this device, as PyTorch runs them
       there: no copy to the CPU). LAPACK's factorizations in place on contiguous 3-d batches of
       column-major matrices (a tensor [B, n, m] holds B m x n matrices; k = min(m, n)), all
       of one dtype: float32, float64, complex64 or complex128 (SYEVD's and GESVD's values b
       of its real dtype; complex: transposes are conjugate transposes, LAPACK's Hermitian
       routines: A = L L^H, heevd, ungqr, unmqr, V^H), p and info int32 [B, k] and [B], all on this device:
       GETRF  a (m x n) <- its LU with partial pivoting, p <- the 1-based row swaps, info <- 0 or
              the first zero pivot's 1-based index (elimination goes on past it);
       GETRS  b (n x r, [B, r, n]) <- A^-1 b for a and p from GETRF (n x n);
       POTRF  a (n x n) <- L with A = L L^T (L^H) from a's lower triangle (the strict upper one
              unspecified), info <- 0 or the order of the first minor not positive-definite;
       GEQRF  a (m x n) <- geqrf's packed R and reflectors, b [B, k] <- tau; c (m x qc, [B, qc,
              m], qc = m or k; NULL: none) <- Q's first qc columns (orgqr);
       SYEVD  b [B, n] <- the ascending eigenvalues of the symmetric (Hermitian) matrix of a's lower
              triangle (n x n); flag 1: a <- its eigenvectors as columns; info <- 0 or > 0
              (no convergence);
       GESVD  b [B, k] <- a's (m x n, destroyed) singular values, descending; c (m x uc, [B, uc,
              m]) <- U, p ([B, vr, n], a's dtype: V^T (V^H) row-major) <- V^T, uc = vr = k or uc = m and
              vr = n (full); c and p NULL: values only; info <- 0 or > 0 (no convergence);
       TRSM   b (n x r, [B, r, n]) <- A^-1 b for the triangle of a (n x n) that flag & 1 names
              (1 upper, 0 lower), flag & 2: unit diagonal (not read); the other triangle unread;
       ORMQR  c (q x r, [B, r, q]; flag & 1: left) or (r x q, [B, q, r]; right) <- op(Q) c or
              c op(Q), op = ^T (^H) when flag & 2, Q = H_1 ... H_k of the k = a->shape[1] reflectors
              in a (q x k, [B, k, q], geqrf's packing), b [B, k] their tau;
       GEEV   (a alone may also be complex64/complex128) b [B, n] (complex, a's precision) <-
              the eigenvalues of the general matrix a (n x n, destroyed); flag 1: c (n x n,
              [B, n, n], complex) <- the right eigenvectors as columns, geev's (norm 1, the
              largest component real; a real a's conjugate pairs as two complex columns);
              flag 0: c NULL; info <- 0 or > 0 (no convergence). The order is the backend's
              (LAPACK's Schur form's on the CPU kernels; cuSOLVER's may differ).
       SYTRF  a (n x n) <- the Bunch-Kaufman L D L^T of the symmetric matrix of a's lower
              triangle (LAPACK's sytrf 'L'; complex: symmetric, not Hermitian; the strict upper
              triangle unread and kept), p [B, n] <- LAPACK's pivots (1-based, negative for a
              2x2 block), info <- 0 or the first zero D[i, i]'s 1-based index;
       SYTRS  b (n x r, [B, r, n]) <- A^-1 b for a and p from SYTRF.
       Every size may be 0 (nothing to do). */
    int (*linalg)(tn_linalg_op op, tn_tensor *a, tn_tensor *b, tn_tensor *c, tn_tensor *p, tn_tensor *info, int flag);
    /* Optional (NULL: the bias copied into c, then matmul, then the activation as its own
       pass). One product with a fused epilogue (cuBLASLt's): c [M, N] (contiguous, new) =
       act(alpha * a [M, K] @ b [K, N] + bias), bias NULL or [N] added to every row, act
       TN__EPI_NONE, TN__EPI_RELU or TN__EPI_GELU_TANH; or, for act TN__EPI_BGRAD_A / _B
       (a bias gradient with the weight gradient's product), c = alpha * a @ b and bias, an
       output, [M] = the row sums of a / [N] = the column sums of b (sums over k). In the
       cases tn__matmul_ep_declines lets through; returns 1 when it declines (also where
       the library has no algorithm for the case). */
    int (*matmul_ep)(tn_tensor *c, tn_tensor *a, tn_tensor *b, tn_tensor *bias, double alpha, int act);
    /* Optional (NULL: torch.fft fails on this device). Batched FFTs over the last `rank` dims
       (1 to 3) of contiguous x into contiguous y (new memory), both on this device, of one
       precision; n[0..rank) the signal sizes (each >= 1), the batch the leading dims:
       kind 0  c2c forward (e^-i), complex x and y of n points;
            1  c2c inverse (e^+i, unnormalised), likewise;
            2  r2c: real x of n points, complex y of n[rank-1]/2 + 1 points along the last dim
               (the onesided half, c2c forward along the others);
            3  c2r: complex x of n[rank-1]/2 + 1 points along the last dim, real y of n
               (the inverse of 2; x is not modified);
       every result multiplied by scale. Complex means complex64 (with float32) or complex128
       (with float64). The unit runs cuFFT (plans cached), the stand-in the CPU's engine. */
    int (*fft)(int kind, tn_tensor *y, tn_tensor *x, int rank, const int64_t *n, double scale);
    /* Optional, all four or none (NULL: graph replays are not captured). CUDA graphs: the
       captured replay of tn_graph_run (docs/deploy.md). graph_begin: the calls this thread
       makes from now on are captured, not run. graph_end: capturing stops; *graph = the
       captured calls, ready to launch, or -1 with an error when the capture failed (an
       allocation, a synchronisation, a transfer to or from the host or a call that cannot be
       captured came inside it; nothing captured ran). graph_launch: the captured calls run
       again, on the memory they were captured on (the caller keeps it). graph_free frees it. */
    int (*graph_begin)(void);
    int (*graph_end)(void **graph);
    int (*graph_launch)(void *graph);
    void (*graph_free)(void *graph);
    /* Optional (NULL: init_process_group("nccl") fails on this device). NCCL's communicators
       and collectives, queued on the device's stream in the order called (a.comm: the
       communicator; x, y: tensors of one dtype: int8, uint8, int32, int64, float16, bfloat16,
       float32, float64, complex as pairs of its reals, bool as uint8; n = x's elements):
       GET_ID      a.id <- a new unique id (one rank makes it, every rank gets it)
       INIT        a.comm <- this device's communicator of rank a.rank of a.size from a.id
                   (blocks until every rank joined)
       DESTROY, ABORT  free a.comm (ABORT: without waiting for queued work: a dead peer)
       CHECK       0, or -1 with the communicator's asynchronous error (a failed peer)
       GROUP_START, GROUP_END  NCCL's grouping of the calls between (SEND/RECV pairs)
       ALL_REDUCE  y <- a.op over every rank's x (y may be x)
       BROADCAST   y <- rank a.peer's x (y may be x)
       REDUCE      y on rank a.peer <- a.op over every rank's x
       ALL_GATHER  y (size * n) <- every rank's x, in rank order
       REDUCE_SCATTER  y (n / size) <- a.op over every rank's x of this rank's block
       SEND, RECV  x to rank a.peer; y from rank a.peer
       RECORD      a.event <- an event after the work queued so far on a.comm
       QUERY       1 when a.event's work is done, 0 while not, -1 with the error
       RELEASE     frees a.event */
    int (*nccl)(tn_nccl_op op, tn_nccl_args *a);
    /* Optional (NULL: tn_cuda_graph_begin fails on this device). The capture-private memory
       pools of eager CUDA-graph captures (tn_cuda_graph_begin), PyTorch's: op
       TN__GPOOL_NEW     *pool <- a new pool (one reference)
       TN__GPOOL_RETAIN  one more reference to *pool
       TN__GPOOL_RELEASE one reference less; at none its free memory goes back to the device
                         and the blocks still held by tensors join the ordinary cache
       TN__GPOOL_BEGIN   graph_begin, with this thread's allocations served from *pool (new
                         memory taken under a relaxed capture mode; blocks freed inside the
                         capture reusable by its later allocations) until graph_end; the
                         capture holds a reference until then. Inside it check_index is
                         captured (its err is a slot of the graph's, tn_cuda_graph_begin)
       TN__GPOOL_RNG     inside a BEGIN capture: *pool is an int64 [4] device tensor {seed lo,
                         seed hi, offset lo, offset hi} (32-bit halves) that random draws
                         captured after it read at each replay: seed from it, offset its
                         offset plus the call's (then relative); without it random refuses. */
    int (*graph_pool)(int op, void **pool);
    /* Optional, all three or none (NULL: CUDA tensors cannot cross processes on this
       device). CUDA IPC (tn_cuda_ipc_handle): ipc_export: h (TN_CUDA_IPC_HANDLE_BYTES) <- a
       handle of the allocation holding s's data that another process can map, *offset <-
       where s's data starts in it, *size <- its bytes (the stand-in may move s's data into
       shareable memory first). ipc_import: *base <- the allocation of h (size bytes) mapped
       in this process. ipc_close: unmaps what ipc_import mapped. The header caches imports
       (one per handle) and closes each with its last tensor. */
    int (*ipc_export)(tn_storage *s, unsigned char *h, uint64_t *offset, uint64_t *size);
    int (*ipc_import)(const unsigned char *h, uint64_t size, void **base);
    int (*ipc_close)(void *base, uint64_t size);
    /* Optional (NULL: the members run one by one). A fused elementwise chain in one pass:
       out (new, float32 or float64) = prog applied to the next outside operands ext[k] (out's
       dtype, broadcast to out's shape, any strides; a 0-d one may be a CPU scalar), each
       member the op's own kernel math on the values in registers: the bits of the members
       run one by one. Returns 1 (no error) when it declines (tn__fused_declines). */
    int (*fused_elementwise)(tn_tensor *out, tn_tensor *const *ext, int next, const tn__fused_prog *prog);
} tn_backend;
enum { TN__GPOOL_NEW, TN__GPOOL_RETAIN, TN__GPOOL_RELEASE, TN__GPOOL_BEGIN, TN__GPOOL_RNG };
/* The chains the GPU unit's fused_elementwise declines (tensor_cuda.cu and the checking
   stand-in ask here, so they decline alike): the switch TN_CUDA_FUSED_ELEMENTWISE=0 (off: the
   caller read it), a dtype other than float32/float64, no members or too many, an outside
   operand missing or out of range, a member that is no float unary op (LOGICAL_NOT and the
   predicates, BITWISE_NOT) or a binary op other than add, sub, mul, div, pow, maximum,
   minimum. */
static inline bool tn__fused_declines(bool off, tn_dtype dtype, int next, const tn__fused_prog *p) {
    if (off || (dtype != TN_F32 && dtype != TN_F64) || !p || p->n < 1 || p->n > TN__FUSED_MAX || next < 0 || next > TN__FUSED_EXT) return true;
    for (int j = 0; j < p->n; j++) {
        const tn__fused_op *m = &p->m[j];
        const int op = m->op;
        if (m->binary ? !(op == ADD || op == SUB || op == MUL || op == DIV || op == POW || op == MAXIMUM || op == MINIMUM)
                      : (op < 0 || op >= LOGICAL_NOT || op == BITWISE_NOT))
            return true;
        for (int i = 0; i < (m->binary ? 2 : 1); i++)
            if (m->src[i] >= next || m->src[i] < -1 || (m->src[i] == -1 && j == 0)) return true;
    }
    return false;
}
/* The cases the GPU unit's fused attention entry declines (tensor_cuda.cu and the checking
   stand-in both ask here, so they decline alike): the switch TN_CUDA_FUSED_ATTENTION=0, a
   dtype other than float32/float64/float16/bfloat16 or mixed ones (half ones with a float32
   logsumexp and additive mask), head dims over 128, empty sizes, batch
   shapes that differ, q's, k's or v's last dim strided, results not contiguous, grids past
   2^31 - 1 rows (batch x max(L, S)). off: the caller read the switch. */
static inline bool tn__attention_declines(bool off, tn_tensor *q, tn_tensor *k, tn_tensor *v, tn_tensor *mask, tn_tensor *out, tn_tensor *lse,
                                          tn_tensor *dout, tn_tensor *dq, tn_tensor *dk, tn_tensor *dv) {
    /* half q, k, v are computed in float32: their logsumexp and an additive mask are float32 */
    const bool half = q->dtype == TN_F16 || q->dtype == TN_BF16;
    const tn_dtype acc = half ? TN_F32 : q->dtype;
    if (off || (q->dtype != TN_F32 && q->dtype != TN_F64 && !half) || (mask && mask->dtype != TN_BOOL && mask->dtype != acc) || lse->dtype != acc) return true;
    tn_tensor *const same[7] = {k, v, out, dout, dq, dk, dv};
    for (int t = 0; t < 7; t++)
        if (same[t] && same[t]->dtype != q->dtype) return true;
    const int nd = q->ndim;
    if (nd < 2 || k->ndim != nd || v->ndim != nd || (mask && mask->ndim != nd) || out->ndim != nd || lse->ndim != nd - 1) return true;
    const int64_t L = q->shape[nd - 2], S = k->shape[nd - 2], E = q->shape[nd - 1], Ev = v->shape[nd - 1];
    if (L == 0 || S == 0 || E == 0 || Ev == 0 || E > 128 || Ev > 128 || k->shape[nd - 1] != E || v->shape[nd - 2] != S) return true;
    if (mask && (mask->shape[nd - 2] != L || mask->shape[nd - 1] != S)) return true;
    int64_t B = 1;
    for (int d = 0; d < nd - 2; d++) {
        const int64_t b = q->shape[d];
        if (k->shape[d] != b || v->shape[d] != b || (mask && mask->shape[d] != b) || out->shape[d] != b || lse->shape[d] != b) return true;
        B *= b;
    }
    if (B == 0 || B > INT32_MAX / (L > S ? L : S)) return true;
    tn_tensor *const qkv[3] = {q, k, v};
    for (int t = 0; t < 3; t++)
        if (qkv[t]->shape[nd - 1] > 1 && qkv[t]->strides[nd - 1] != 1) return true;
    tn_tensor *const dn[6] = {out, lse, dout, dq, dk, dv};
    for (int t = 0; t < 6; t++)
        if (dn[t] && !tn_is_contiguous(dn[t])) return true;
    return out->shape[nd - 2] != L || out->shape[nd - 1] != Ev || lse->shape[nd - 2] != L;
}

/* ---- complex64 / complex128: the scalar formulas and the ops that have them ----
   One definition for the CPU's loops (core/complex.c) and the GPU unit's kernels: a complex
   element computed in double on a plain struct (no C99 _Complex: the header also compiles
   as C++ and CUDA), as c10::complex and PyTorch's CPU kernels compute it. */
typedef struct tn__cplx { double re, im; } tn__cplx;
TN_HD static inline tn__cplx tn__cx(double re, double im) { tn__cplx z; z.re = re; z.im = im; return z; }
TN_HD static inline tn__cplx tn__cadd(tn__cplx a, tn__cplx b) { return tn__cx(a.re + b.re, a.im + b.im); }
TN_HD static inline tn__cplx tn__cmul(tn__cplx a, tn__cplx b) { return tn__cx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
TN_HD static inline tn__cplx tn__cscale(tn__cplx a, double s) { return tn__cx(a.re * s, a.im * s); }
/* c10::complex's scaled division; by zero NaN in both parts, as PyTorch's vectorised
   CPU kernels give for every numerator (c10's scalar form gives inf/nan parts) */
TN_HD static inline tn__cplx tn__cdiv(tn__cplx a, tn__cplx b) {
    const double c = b.re, d = b.im, ac = fabs(c), ad = fabs(d);
    if (ac >= ad) {
        if (ac == 0 && ad == 0) return tn__cx(NAN, NAN);
        const double rat = d / c, scl = 1.0 / (c + d * rat);
        return tn__cx((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    const double rat = c / d, scl = 1.0 / (d + c * rat);
    return tn__cx((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
TN_HD static inline double tn__cabs(tn__cplx z) { return hypot(z.re, z.im); }
TN_HD static inline tn__cplx tn__cexp(tn__cplx z) {
    if (z.im == 0) return tn__cx(exp(z.re), z.im);   /* a real argument keeps its signed zero */
    const double e = exp(z.re);
    return tn__cx(e * cos(z.im), e * sin(z.im));
}
TN_HD static inline tn__cplx tn__clog(tn__cplx z) { return tn__cx(log(tn__cabs(z)), atan2(z.im, z.re)); }
TN_HD static inline tn__cplx tn__csqrt(tn__cplx z) {
    const double x = z.re, y = z.im;
    if (x == 0 && y == 0) return tn__cx(0, y);
    if (isinf(y)) return tn__cx(INFINITY, y);
    if (x != x) return tn__cx(x, y != y ? y : NAN);
    if (isinf(x)) return x > 0 ? tn__cx(x, y != y ? y : copysign(0.0, y)) : tn__cx(y != y ? y : 0.0, copysign(INFINITY, y));
    const double t = sqrt((fabs(x) + hypot(x, y)) * 0.5);
    return x >= 0 ? tn__cx(t, y / (2 * t)) : tn__cx(fabs(y) / (2 * t), copysign(t, y));
}
TN_HD static inline tn__cplx tn__csin(tn__cplx z) { return tn__cx(sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im)); }
TN_HD static inline tn__cplx tn__ccos(tn__cplx z) { return tn__cx(cos(z.re) * cosh(z.im), -sin(z.re) * sinh(z.im)); }
TN_HD static inline tn__cplx tn__csinh(tn__cplx z) { return tn__cx(sinh(z.re) * cos(z.im), cosh(z.re) * sin(z.im)); }
TN_HD static inline tn__cplx tn__ccosh(tn__cplx z) { return tn__cx(cosh(z.re) * cos(z.im), sinh(z.re) * sin(z.im)); }
TN_HD static inline tn__cplx tn__ctanh(tn__cplx z) {   /* Kahan's formula (as C libraries' ctanh): no overflow for large |re| */
    const double x = z.re, y = z.im;
    if (y == 0) return tn__cx(tanh(x), y);
    if (fabs(x) > 22) { const double e = exp(-2 * fabs(x)); return tn__cx(copysign(1.0, x), 4 * sin(y) * cos(y) * e); }
    const double t = tan(y), b = 1 + t * t, sh = sinh(x), c = sqrt(1 + sh * sh), den = 1 + b * sh * sh;
    return tn__cx(b * c * sh / den, t / den);
}
TN_HD static inline tn__cplx tn__ctan(tn__cplx z) { tn__cplx t = tn__ctanh(tn__cx(-z.im, z.re)); return tn__cx(t.im, -t.re); }   /* -i tanh(iz) */
TN_HD static inline tn__cplx tn__cpow(tn__cplx a, tn__cplx b) {
    if (b.re == 0 && b.im == 0) return tn__cx(1, 0);
    if (a.re == 0 && a.im == 0 && b.im == 0 && b.re > 0) return tn__cx(0, 0);
    if (b.im == 0 && b.re == 1) return a;
    if (b.im == 0 && b.re == 2) return tn__cmul(a, a);
    return tn__cexp(tn__cmul(b, tn__clog(a)));
}
TN_HD static inline tn__cplx tn__csgn(tn__cplx z) {
    if (z.re == 0 && z.im == 0) return tn__cx(0, 0);
    const double a = tn__cabs(z);
    return tn__cx(z.re / a, z.im / a);
}
/* The inverse functions: Kahan's formulas ("Branch cuts for complex elementary functions",
   as C libraries' casin/cacos/cacosh/catanh): square roots of 1 -+ z whose signed zeros
   put the branch cuts where std::asin etc. have them, no cancellation near the cuts. */
TN_HD static inline tn__cplx tn__casin(tn__cplx z) {
    const tn__cplx s1 = tn__csqrt(tn__cx(1 - z.re, -z.im)), s2 = tn__csqrt(tn__cx(1 + z.re, z.im));
    return tn__cx(atan2(z.re, s1.re * s2.re - s1.im * s2.im), asinh(s1.re * s2.im - s1.im * s2.re));
}
TN_HD static inline tn__cplx tn__cacos(tn__cplx z) {
    const tn__cplx s1 = tn__csqrt(tn__cx(1 - z.re, -z.im)), s2 = tn__csqrt(tn__cx(1 + z.re, z.im));
    return tn__cx(2 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}
TN_HD static inline tn__cplx tn__cacosh(tn__cplx z) {
    const tn__cplx s1 = tn__csqrt(tn__cx(z.re - 1, z.im)), s2 = tn__csqrt(tn__cx(z.re + 1, z.im));
    return tn__cx(asinh(s1.re * s2.re + s1.im * s2.im), 2 * atan2(s1.im, s2.re));
}
TN_HD static inline tn__cplx tn__catanh(tn__cplx z) {
    const double x = z.re, y = z.im, ax = fabs(x);
    if (y == 0 && ax <= 1) return tn__cx(atanh(x), y);   /* the real axis keeps its signed zero */
    return tn__cx(0.25 * log1p(4 * x / ((1 - x) * (1 - x) + y * y)), 0.5 * atan2(2 * y, (1 - x) * (1 + x) - y * y));
}
/* asinh(z) = -i asin(iz), atan(z) = -i atanh(iz) */
TN_HD static inline tn__cplx tn__casinh(tn__cplx z) { const tn__cplx t = tn__casin(tn__cx(-z.im, z.re)); return tn__cx(t.im, -t.re); }
TN_HD static inline tn__cplx tn__catan(tn__cplx z) { const tn__cplx t = tn__catanh(tn__cx(-z.im, z.re)); return tn__cx(t.im, -t.re); }

/* A unary op (TN_UNARY_OPS) with a complex result on one element: the CPU's loops and the
   GPU unit's kernels both call it. f32: a complex64 element (sinc rounds pi z to float
   first, as ATen: sin grows like e^|Im|). ABS and the predicates have real results. */
TN_HD static inline tn__cplx tn__cunary(int op, tn__cplx x, bool f32) {
    switch (op) {
    case NEG: return tn__cx(-x.re, -x.im);
    case SIGN: return tn__csgn(x);
    case SQUARE: return tn__cmul(x, x);
    case EXP: return tn__cexp(x);
    case LOG: return tn__clog(x);
    case LOG2: return tn__cscale(tn__clog(x), 1 / 0.69314718055994530942);   /* log(z) / log(2): part by part */
    case LOG10: return tn__cscale(tn__clog(x), 1 / 2.30258509299404568402);
    case SQRT: return tn__csqrt(x);
    case RSQRT: return tn__cdiv(tn__cx(1, 0), tn__csqrt(x));
    case RECIPROCAL: return tn__cdiv(tn__cx(1, 0), x);
    case SIN: return tn__csin(x);
    case COS: return tn__ccos(x);
    case TAN: return tn__ctan(x);
    case SINH: return tn__csinh(x);
    case COSH: return tn__ccosh(x);
    case TANH: return tn__ctanh(x);
    case SIGMOID: return tn__cdiv(tn__cx(1, 0), tn__cadd(tn__cx(1, 0), tn__cexp(tn__cx(-x.re, -x.im))));
    case ASIN: return tn__casin(x);
    case ACOS: return tn__cacos(x);
    case ATAN: return tn__catan(x);
    case ASINH: return tn__casinh(x);
    case ACOSH: return tn__cacosh(x);
    case ATANH: return tn__catanh(x);
    case SINC: {
        if (x.re == 0 && x.im == 0) return tn__cx(1, 0);
        const double pi = 3.14159265358979323846;
        const tn__cplx pz = f32 ? tn__cx((float)pi * (float)x.re, (float)pi * (float)x.im) : tn__cx(pi * x.re, pi * x.im);
        return tn__cdiv(tn__csin(pz), pz);
    }
    case SILU: return tn__cdiv(x, tn__cadd(tn__cx(1, 0), tn__cexp(tn__cx(-x.re, -x.im))));   /* ATen's x / (1 + exp(-x)) */
    default: return x;
    }
}
/* A binary op with a complex result (ADD, SUB with alpha; MUL, DIV, POW) on one element. */
TN_HD static inline tn__cplx tn__cbinary(int op, tn__cplx a, tn__cplx b, double alpha) {
    switch (op) {
    case ADD: return tn__cx(a.re + alpha * b.re, a.im + alpha * b.im);
    case SUB: return tn__cx(a.re - alpha * b.re, a.im - alpha * b.im);
    case MUL: return tn__cmul(a, b);
    case DIV: return tn__cdiv(a, b);
    default: return tn__cpow(a, b);
    }
}
/* LERP (c + b (a - c), weight b), ADDCMUL (c + v a b) and ADDCDIV (c + v a / b) on one element. */
TN_HD static inline tn__cplx tn__cternary(int op, tn__cplx c, tn__cplx a, tn__cplx b, double value) {
    const tn__cplx v = tn__cx(value, 0);
    switch (op) {
    case ADDCMUL: return tn__cadd(c, tn__cmul(v, tn__cmul(a, b)));
    case ADDCDIV: return tn__cadd(c, tn__cmul(v, tn__cdiv(a, b)));
    default:   /* LERP: |w| < 0.5, as ATen */
        return tn__cabs(b) < 0.5 ? tn__cadd(c, tn__cmul(b, tn__cadd(a, tn__cscale(c, -1))))
                                 : tn__cadd(a, tn__cscale(tn__cmul(tn__cadd(a, tn__cscale(c, -1)), tn__cx(1 - b.re, -b.im)), -1));
    }
}
/* The unary ops defined for complex operands (the others fail; ABS and ANGLE's callers
   give a real output: ABS here writes the real dtype). SIGN computes sgn (z / |z|):
   tn_sign refuses complex before it gets here, as PyTorch. */
static inline bool tn__complex_unary_ok(int op) {
    switch (op) {
    case NEG: case ABS: case SIGN: case SQUARE: case EXP: case LOG: case LOG2: case LOG10: case SQRT: case RSQRT:
    case RECIPROCAL: case SIN: case COS: case TAN: case SINH: case COSH: case TANH: case SIGMOID:
    case ASIN: case ACOS: case ATAN: case ASINH: case ACOSH: case ATANH: case SINC: case SILU:
    case ISNAN: case ISINF: case ISFINITE: case LOGICAL_NOT: return true;
    default: return false;
    }
}
static inline bool tn__complex_binary_ok(int op) {
    return op == ADD || op == SUB || op == MUL || op == DIV || op == POW || op == EQ || op == NE ||
           op == LOGICAL_AND || op == LOGICAL_OR || op == LOGICAL_XOR;
}
/* The complex64/complex128 cases the GPU unit (tensor_cuda.cu) has kernels for, by backend
   entry: the elementwise ops with a complex formula above (the CPU's), where, lerp, addcmul,
   addcdiv, sum and prod, cumprod (prod's gradient), gather/scatter/scatter-add, copies,
   fills and matmul. The unit and the checking stand-in both ask here and decline alike, with
   tn__cuda_complex_decline's error (the CPU has no other complex cases of these entries
   today: the table keeps the two in step when it gains one). */
enum { TN__CX_UNARY, TN__CX_BINARY, TN__CX_TERNARY, TN__CX_REDUCE, TN__CX_LANE, TN__CX_INDEX };
static inline bool tn__cuda_complex_has(int entry, int op) {
    switch (entry) {
    case TN__CX_UNARY: return tn__complex_unary_ok(op);
    case TN__CX_BINARY: return tn__complex_binary_ok(op);
    case TN__CX_TERNARY: return op == WHERE || op == LERP || op == ADDCMUL || op == ADDCDIV;
    case TN__CX_REDUCE: return op == SUM || op == PROD;
    case TN__CX_INDEX: return op == GATHER || op == SCATTER || op == SCATTER_ADD;
    case TN__CX_LANE: return op == CUMPROD;
    default: return false;
    }
}
#define TN__CX_NAME(name) #name,
static inline int tn__cuda_complex_decline(int entry, int op, tn_dtype dtype) {
    static const char *const unary[] = {TN_UNARY_OPS(TN__CX_NAME) ""}, *const binary[] = {TN_BINARY_OPS(TN__CX_NAME) ""},
                             *const ternary[] = {TN_TERNARY_OPS(TN__CX_NAME) ""}, *const reduce[] = {TN_REDUCE_OPS(TN__CX_NAME) ""},
                             *const lane[] = {TN_LANE_OPS(TN__CX_NAME) ""}, *const index[] = {TN_INDEX_MODES(TN__CX_NAME) ""};
    static const char *const *const names[] = {unary, binary, ternary, reduce, lane, index};
    static const char *const entries[] = {"unary", "binary", "ternary", "reduce", "lane", "index"};
    return tn_error("%s op %s: dtype %s has no kernel for this op on CUDA yet (complex on the GPU: copies, elementwise ops, sum, prod, matmul, FFTs)",
                    entries[entry], names[entry][op], tn_dtype_name(dtype));
}
#undef TN__CX_NAME

/* Device-side checks (PyTorch's device-side asserts, without the abort). A slot {flag,
   value} in host memory that the device writes (a kernel that finds a bad value stores
   slot[1] = the value, then slot[0] = 1), for the error msg, whose one "%lld" is the value.
   The error is reported by the next synchronisation (a copy to the host, nonzero,
   tn_cuda_synchronize), which fails with it. NULL with an error when none is available.
   Slots are reused after each synchronisation; one message, one slot. */
TNDEF int64_t *tn_deferred_check(tn_device device, const char *msg);

/* Install the backend of a device (tensor_cuda.cu calls this for TN_CUDA). */
TNDEF void tn_register_backend(tn_device device, const tn_backend *backend);
TNDEF const tn_backend *tn_get_backend(tn_device device);   /* NULL if none */
/* For tests on machines without a GPU: registers, for TN_CUDA, the CPU kernels over host
   memory behind a check of every operand as the GPU unit needs it (on the device, or a
   0-d CPU scalar where the unit takes one); a failed check is an error naming the op and
   the operand, where a real GPU would fault. tn_cuda_is_available() stays false. */
TNDEF void tn_debug_cuda_stand_in(void);
/* The stand-in with its device memory unreadable from the host outside backend calls
   (PROT_NONE pages; without mmap the plain stand-in): host code that touches a CUDA
   tensor's data, where a GPU would hand it garbage, faults at once. tn_debug_cuda_stand_in()
   chooses it when TN_STAND_IN_UNREADABLE=1 is in the environment. */
TNDEF void tn_debug_cuda_stand_in_unreadable(void);

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
    /* transfers and waits (the stand-in counts the same): copies host -> device and device ->
       host, and host synchronisations (a synchronous copy either way, nonzero, synchronize) */
    int64_t num_h2d, num_d2h, num_syncs;
    /* which path the library entries took: calls cuDNN ran, calls it declined (the header's
       fallback ran: im2col + cuBLAS for convolution, the composites for pooling and batch
       norm; max pooling's backward always), and heuristic algorithms that failed to run */
    int64_t num_cudnn_conv, num_conv_fallbacks, num_cudnn_algo_retries;
    int64_t num_cudnn_pool, num_pool_fallbacks, num_cudnn_batch_norm, num_batch_norm_fallbacks;
    /* the fused attention kernels: calls (forward and backward) they ran, calls declined (the composite ran) */
    int64_t num_fused_attention, num_attention_fallbacks;
    /* optimizer steps taken for many parameters at once (tn_backend.optim_multi calls) */
    int64_t num_multi_tensor_optim;
    /* products run with a fused bias/activation epilogue (cuBLASLt), and those it declined
       (the bias copy + GEMM + activation ran) */
    int64_t num_gemm_epilogue, num_gemm_epilogue_fallbacks;
    /* graph replays captured as CUDA graphs (tn_graph_run), captured replays launched, and
       captures that failed (those replays run uncaptured); counted by the header */
    int64_t num_graph_captures, num_graph_launches, num_graph_capture_failures;
    /* graph replays' elementwise chains run as one kernel (tn_backend.fused_elementwise), and
       chains it declined (the members ran one by one); counted by the header */
    int64_t num_fused_elementwise, num_fused_elementwise_fallbacks;
} tn_cuda_stats;
TNDEF tn_cuda_stats tn_cuda_memory_stats(void);     /* zeros without a GPU (the stand-in: its transfer counters and num_allocs) */
TNDEF void tn_cuda_reset_peak_memory_stats(void);
TNDEF void tn_cuda_empty_cache(void);               /* give cached, unused blocks back (cudaFree) */
/* CUDA graphs of eager code (torch.cuda.CUDAGraph, torch.cuda.graph): between begin and end
   the GPU work this thread queues (forward, backward, optimizer.step) is captured, not run;
   replay runs it again on the same memory (copy new values into the static inputs first).
   Allocations inside a capture come from a pool of its own (or `pool`, shared with other
   graphs), which stays reserved until the graph is freed. Refused inside a capture: copies
   between host and device (.item(), .cpu(), printing), synchronisations, random draws from a
   generator other than the default one, optimizers other than SGD and Adam/AdamW with
   capturable=True (the others' step count is a host value: PyTorch's capturable=False).
   Captured: device-side index checks (a bad index fed to a replay fails the next
   synchronisation with the eager message) and the default generator's draws (each replay
   takes fresh counters, PyTorch's graph-safe Philox; docs/cuda.md). */
typedef struct tn_cuda_graph tn_cuda_graph;
typedef struct tn_cuda_graph_pool tn_cuda_graph_pool;
TNDEF tn_cuda_graph_pool *tn_cuda_graph_pool_handle(void);   /* a pool to share between captures (torch.cuda.graph_pool_handle); NULL + error without a GPU */
TNDEF void tn_cuda_graph_pool_release(tn_cuda_graph_pool *pool);   /* drop the handle (graphs captured into it keep it); NULL is a no-op */
TNDEF int tn_cuda_graph_begin(tn_cuda_graph_pool *pool);   /* capture this thread's GPU work from now on (pool NULL: a pool of its own); 0 or -1 */
TNDEF tn_cuda_graph *tn_cuda_graph_end(void);   /* the captured graph, or NULL + error (the capture failed: its pool released, nothing captured ran) */
TNDEF int tn_cuda_graph_replay(tn_cuda_graph *g);   /* launch it (queued after the work before it); 0 or -1 */
TNDEF tn_cuda_graph_pool *tn_cuda_graph_pool_of(tn_cuda_graph *g);   /* the pool g was captured into (CUDAGraph.pool()): a new handle to release */
TNDEF void tn_cuda_graph_free(tn_cuda_graph *g);   /* CUDAGraph.reset(): the graph destroyed, its pool's reference dropped; NULL is a no-op */
TNDEF bool tn_cuda_graph_capturing(void);   /* whether this thread is capturing (torch.cuda.is_current_stream_capturing) */
TNDEF void tn_set_tf32(bool allow);                 /* TF32 tensor cores in float32 matmul (default off: torch.backends.cuda.matmul.allow_tf32) */
TNDEF bool tn_get_tf32(void);
TNDEF void tn_set_cudnn_tf32(bool allow);           /* TF32 in cuDNN's float32 convolutions (default on: torch.backends.cudnn.allow_tf32) */
TNDEF bool tn_get_cudnn_tf32(void);
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

/* ---- white-box hooks (not an API) ----
   Built with TN_TESTING (the implementation and the tests alike), the internal path
   knobs and kernels below are extern instead of static, so tests linked against an
   implementation compiled once can switch paths and call kernels directly. */
typedef struct tn__gemm_tune_t {   /* GEMM knobs: ISA (-1 best), blocking (0 default), direct-loop cutoff (-1 default), threads (0 OpenMP's) */
    int isa;
    int64_t kc, mc, nc, naive_max;
    int threads;
    int direct_a;   /* A read in place: 0 where the heuristic says, 1 wherever its layout allows, -1 never (packed) */
} tn__gemm_tune_t;
/* The GEMM's epilogue (tn__gemm_ep_f32/f64, src/ops/gemm.c): applied to each tile of C while
   it is in cache, C += bias_beta * bias (bias[i * bias_stride] per row i, or per column j),
   then C = act(C) (the activations' scalar formulas of section 10: the same bits as the
   separate passes). bias: float or double as C; NULL: none. */
enum { TN__EPI_NONE = 0, TN__EPI_RELU, TN__EPI_GELU, TN__EPI_GELU_TANH, TN__EPI_SILU,
       TN__EPI_BGRAD_A, TN__EPI_BGRAD_B };   /* the last two: tn_backend.matmul_ep only */
typedef struct tn__gemm_epi {
    const void *bias;
    int64_t bias_stride;
    double bias_beta;
    int per_row;      /* bias along C's rows (a convolution's channels) instead of its columns */
    int act;          /* TN__EPI_* */
} tn__gemm_epi;
/* Whether BLAS reads a [rows, cols] operand with strides (sr, sc) in place: one unit stride
   and the other at least that many elements (the leading dimension), within int32. */
static inline bool tn__blas_layout_ok(int64_t rows, int64_t cols, int64_t sr, int64_t sc) {
    const int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
    if ((cols == 1 || sc == 1) && (rows == 1 ? c1 : sr) >= c1 && (rows == 1 ? c1 : sr) <= INT32_MAX) return true;
    return (rows == 1 || sr == 1) && (cols == 1 ? r1 : sc) >= r1 && (cols == 1 ? r1 : sc) <= INT32_MAX;
}
/* The products tn_backend.matmul_ep takes (tensor_cuda.cu and the checking stand-in both ask
   here, so they decline alike): the switch TN_CUDA_GEMM_EPILOGUE=0 unset (off: the caller
   read it); float32, float16
   or bfloat16 operands of one dtype on c's device; c [M, N] contiguous, a [M, K] and b [K, N]
   as BLAS reads them in place, every size 1 to 2^31 - 1; bias NULL or [N] / [1, N] with unit
   stride and 16-byte aligned; act none, ReLU or tanh-GELU (cuBLASLt's GELU is the tanh form:
   erf-GELU and SiLU stay passes of their own), or a bias gradient into bias ([M] for
   BGRAD_A, [N] for BGRAD_B, contiguous, aligned alike). */
static inline bool tn__matmul_ep_declines(bool off, const tn_tensor *c, const tn_tensor *a, const tn_tensor *b, const tn_tensor *bias, int act) {
    if (off) return true;
    const tn_dtype d = c->dtype;
    if ((d != TN_F32 && d != TN_F16 && d != TN_BF16) || a->dtype != d || b->dtype != d || (bias && bias->dtype != d)) return true;
    if (a->device != c->device || b->device != c->device || (bias && bias->device != c->device)) return true;
    const bool bgrad = act == TN__EPI_BGRAD_A || act == TN__EPI_BGRAD_B;
    if (act != TN__EPI_NONE && act != TN__EPI_RELU && act != TN__EPI_GELU_TANH && !bgrad) return true;
    if (c->ndim != 2 || a->ndim != 2 || b->ndim != 2 || !tn_is_contiguous(c) || (bgrad && !bias)) return true;
    const int64_t M = c->shape[0], N = c->shape[1], K = a->shape[1], L = act == TN__EPI_BGRAD_A ? M : N;   /* L: the vector's length */
    if (M < 1 || N < 1 || K < 1 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || a->shape[0] != M || b->shape[0] != K || b->shape[1] != N) return true;
    if (!tn__blas_layout_ok(M, K, a->strides[0], a->strides[1]) || !tn__blas_layout_ok(K, N, b->strides[0], b->strides[1])) return true;
    if (bias && !((bias->ndim == 1 && bias->shape[0] == L && (L == 1 || bias->strides[0] == 1)) ||
                  (bias->ndim == 2 && bias->shape[0] == 1 && bias->shape[1] == L && (L == 1 || bias->strides[1] == 1)))) return true;
    return bias && ((uintptr_t)tn_data_ptr(bias) & 15) != 0;   /* the epilogue's vector loads */
}
#ifdef TN_TESTING
#define TN__TESTABLE
extern tn__gemm_tune_t tn__gemm_tune;
extern int tn__optim_multi;    /* the optimizers' multi-tensor step (src/optim/optim.c); 0: one parameter at a time */
extern int tn__wide_loops;   /* the widest copies of float loops run (TN__WIDE, src/core/config.c): 2 AVX-512, 1 AVX2, 0 the plain ones */
extern int tn__normal_fma_loop; /* float32 normal_fill's AVX2+FMA copy (src/core/rng.c); 0: the plain one */
extern int tn__sleef_avx2;      /* float32 pow, sin, cos: SLEEF's AVX2+FMA loops (src/ops/sleef.c); 0: the scalar lanes */
float tn__sleef_powf_test(float x, float y);                   /* SLEEF 3.5.1's powf_u10, one lane */
float tn__sleef_sinf_test(float x, bool big);                  /* sinf_u10, one lane; big: its group of 8 takes Payne-Hanek */
float tn__sleef_cosf_test(float x, bool big);                  /* cosf_u10, one lane */
extern int tn__gemm_cache_busy, tn__sum_row_avx512, tn__conv_fast_paths, tn__wino_avx512, tn__pool22_avx512;
extern int tn__drop_wide;     /* dropout's Philox mask loop (src/nn/dropout.c): 2 AVX-512, 1 at most AVX2, 0 the plain one */
extern int tn__smallk_wide;   /* the small-K direct convolution (src/nn/conv_smallk.c): 2 AVX-512, 1 at most AVX2 + FMA, 0 none (im2col) */
/* tn__wino_avx512, tn__pool22_avx512 (src/nn/winograd.c, pooling.c): 2 AVX-512 rows where the CPU has them, 1 at most AVX2, 0 the portable rows */
int tn__gemm_isa(void);
void tn__gemm_free_cache(void);
int tn__gemm_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa, int64_t csa,
                 const float *B, int64_t rsb, int64_t csb, float beta, float *C, int64_t rsc, int64_t csc);
int tn__gemm_f64(int64_t M, int64_t N, int64_t K, double alpha, const double *A, int64_t rsa, int64_t csa,
                 const double *B, int64_t rsb, int64_t csb, double beta, double *C, int64_t rsc, int64_t csc);
int tn__gemm_ep_f32(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t rsa, int64_t csa,
                    const float *B, int64_t rsb, int64_t csb, float beta, float *C, int64_t rsc, int64_t csc, const tn__gemm_epi *ep);
int tn__gemm_ep_f64(int64_t M, int64_t N, int64_t K, double alpha, const double *A, int64_t rsa, int64_t csa,
                    const double *B, int64_t rsb, int64_t csb, double beta, double *C, int64_t rsc, int64_t csc, const tn__gemm_epi *ep);
/* linalg_factor.c's float64 kernels (row-major, in place): blocked from order tn__la_nx (panels of tn__la_nb), getf2 / potf2 the unblocked ones */
extern int64_t tn__la_nb, tn__la_nx;
/* the real SVD's blocks (linalg_decomp.c): gebrd's panels of brd_nb while more than brd_nx columns remain, orgqr_t's blocks of org_nb from org_nx; gebd2's / gebrd's passes split between threads from brd_pmin elements */
extern int64_t tn__la_brd_nb, tn__la_brd_nx, tn__la_org_nb, tn__la_org_nx, tn__la_brd_pmin;
int64_t tn__la_getrf(double *a, int64_t m, int64_t n, int32_t *piv);
int64_t tn__la_getf2(double *a, int64_t m, int64_t n, int64_t j0, int64_t j1, int64_t ce, int32_t *piv);
void tn__la_getrs(const double *lu, const int32_t *piv, int64_t n, double *b, int64_t k);
int64_t tn__la_potrf(double *a, int64_t n);
int64_t tn__la_potf2(double *a, int64_t n, int64_t j0, int64_t j1, int64_t r1);
/* ... and the float32 LU kernels (float32 arithmetic, as sgetrf / sgetrs) */
int64_t tn__la_getrf_f(float *a, int64_t m, int64_t n, int32_t *piv);
int64_t tn__la_getf2_f(float *a, int64_t m, int64_t n, int64_t j0, int64_t j1, int64_t ce, int32_t *piv);
void tn__la_getrs_f(const float *lu, const int32_t *piv, int64_t n, float *b, int64_t k);
/* linalg_decomp.c's SVD of a bidiagonal (implicit-shift QR; the rotations queued, applied in packed chunks) */
int tn__la_bdsqr(double *d, double *rv, int64_t n, double *ut, int64_t m, double *vt, int64_t nv, double *rot);
int tn__la_bdsqr_f(float *d, float *rv, int64_t n, float *ut, int64_t m, float *vt, int64_t nv, float *rot);
double tn__sum_row_f32(const float *x, int64_t n);
double tn__sum_row(const float *x, int64_t n);
void tn__sum_into_f64(double *o, const float *x, int64_t n);
bool tn__mul_ok_portable(int64_t a, int64_t b, int64_t *r);   /* size products without the compiler's builtin */
float tn__expf_fast(float x);                                  /* the attention's and the LSTM's vectorisable expf, tanhf */
float tn__tanhf_fast(float x);
/* the FFT engine (src/ops/fft.c): kind 0 forward, 1 backward (c2c), 2 r2c, 3 c2r; strides in elements */
int tn__fft_exec(int64_t n, int dbl, int kind, const void *in, int64_t is, int64_t idist, void *out,
                 int64_t os, int64_t odist, int64_t howmany, double scale);
/* torch.fft.fftn (forward) / ifftn over a complex tensor's real view [..., 2]: dims (0: all, or the last nn), sizes n (NULL: the input's), norm */
tn_tensor *tn__fft_c2c(tn_tensor *xr, int ndims, const int64_t *dims, int nn, const int64_t *n, const char *norm, bool forward);
#else
#define TN__TESTABLE static
#endif


#ifdef __cplusplus
}
#endif
#endif /* TENSOR_H */
